"""The runner: determinism across workers and backends, resume, summary mode, errors."""
import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest

import ttrsim
from ttrsim.cli import main
from ttrsim.results import load_run
from ttrsim.runner import replay, simulate
from ttrsim.tables import EVENT_TABLES

POLICIES = ["random", "random", "random"]


def assert_runs_equal(a, b):
    for name in a.table_names:
        pd.testing.assert_frame_equal(getattr(a, name), getattr(b, name), check_categorical=True)


@pytest.fixture(scope="module")
def reference():
    return simulate("europe", POLICIES, games=900, seed=11, n_jobs=1, batch_size=150)


def test_tables_have_documented_columns(reference):
    g = reference.games
    assert list(g.columns[:5]) == ["game", "board", "players", "seat", "policy"]
    assert len(g) == 900 * 3 and g["game"].nunique() == 900
    parts = g["route_points"] + g["ticket_points"] + g["longest_bonus"] + g["station_points"] \
        + g["attraction_points"]
    assert (parts == g["score"]).all()
    assert (g["win"] == (g["rank"] == 1)).all()
    assert (g["tickets_kept"] == g["tickets_completed"] + g["tickets_failed"]).all()
    t = reference.tickets
    kept = t[t.kept].groupby(["game", "seat"]).size()
    assert (kept == g.set_index(["game", "seat"])["tickets_kept"].loc[kept.index]).all()
    assert set(reference.tunnels["outcome"].unique()) <= {"free", "paid", "declined"}
    assert (reference.tunnels["revealed"] <= 3).all()
    # every route id in the claims table is a real route, at most once per game
    assert not reference.routes.duplicated(["game", "route"]).any()
    assert set(reference.routes["route"]) <= set(reference.board.route_id.tolist())


def test_same_tables_with_two_workers(reference):
    assert_runs_equal(reference, simulate("europe", POLICIES, games=900, seed=11, n_jobs=2, batch_size=150))


def test_planning_policies_play_the_same_games_whatever_came_before():
    """The planning policies' caches (setup paths per policy, initial choices per process)
    never change a game: on the Mega Game (69 tickets) 20,000 games of `tickets` and of
    `routes` give the same tables in one batch, in batches of 2,000 and again in a process
    whose caches are warm (an inexact cache made each of these differ)."""
    for policy in ("tickets", "routes"):
        runs = [simulate("usa-mega", [policy] * 4, games=20_000, seed=2026, summary=True,
                         batch_size=size) for size in (20_000, 2_000, 20_000)]
        for other in runs[1:]:
            for name in ("seat_summary", "ticket_summary"):
                pd.testing.assert_frame_equal(runs[0].tables()[name], other.tables()[name])


def test_seeds_do_not_depend_on_batch_size(reference):
    assert_runs_equal(reference, simulate("europe", POLICIES, games=900, seed=11, batch_size=400))


def test_other_seed_other_games(reference):
    other = simulate("europe", POLICIES, games=900, seed=12, batch_size=150)
    assert not other.games["score"].equals(reference.games["score"])


def test_dask_backend_on_a_local_cluster_gives_the_same_tables(reference):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1",
                                  dashboard_address=None, processes=True) as cluster:
        run = simulate("europe", POLICIES, games=900, seed=11, batch_size=150,
                       backend="dask", scheduler=cluster.scheduler_address)
    assert_runs_equal(reference, run)


def test_replay_gives_the_rows_of_one_game(reference):
    one = replay(reference, 437)
    for name in EVENT_TABLES:
        full = getattr(reference, name)
        want = full[full["game"] == 437].reset_index(drop=True)
        pd.testing.assert_frame_equal(want, getattr(one, name))


def test_rotation_seats_each_policy_everywhere():
    run = simulate("usa", ["random", "random:"], games=40, seed=1, batch_size=40)
    counts = run.games.groupby(["seat", "policy"], observed=True).size()
    assert counts.nunique() == 1


def test_summary_mode_equals_counts_of_event_tables(reference):
    s = simulate("europe", POLICIES, games=900, seed=11, batch_size=150, summary=True)
    g = reference.games
    seat = s.seat_summary.groupby("seat")[["games", "wins", "score_sum", "tickets_completed_sum"]].sum()
    ev = g.groupby("seat").agg(games=("game", "size"), wins=("win", "sum"),
                               score_sum=("score", "sum"),
                               tickets_completed_sum=("tickets_completed", "sum"))
    assert (seat.values == ev.values).all()
    assert s.seat_summary["score_sq_sum"].sum() == (g["score"].astype(np.int64) ** 2).sum()
    # (players - 1) x (score minus the others' mean), per seat, and squared turns
    n = len(POLICIES)
    diff = n * g["score"].astype(np.int64) - g.groupby("game")["score"].transform("sum")
    by_seat = s.seat_summary.groupby("seat")[["diff_sum", "diff_sq_sum", "turns_sq_sum"]].sum()
    assert (by_seat.diff_sum.values == diff.groupby(g.seat).sum().values).all()
    assert (by_seat.diff_sq_sum.values == (diff ** 2).groupby(g.seat).sum().values).all()
    assert (by_seat.turns_sq_sum.values
            == (g["turns"].astype(np.int64) ** 2).groupby(g.seat).sum().values).all()
    t = reference.tickets.groupby("ticket").agg(offered=("kept", "size"), kept=("kept", "sum"),
                                                completed=("completed", "sum"),
                                                by_station=("by_station", "sum"))
    ts = s.ticket_summary.groupby("ticket")[["offered", "kept", "completed", "by_station"]].sum()
    assert (ts.loc[t.index].values == t.values).all()
    tun = reference.tunnels
    ts = s.tunnel_summary.set_index(["route", "extra"])
    ev = tun.groupby(["route", "extra"]).agg(attempts=("game", "size"),
                                             paid=("outcome", lambda x: (x == "paid").sum()),
                                             declined=("outcome", lambda x: (x == "declined").sum()))
    assert (ts.loc[ev.index, ["attempts", "paid", "declined"]].values == ev.values).all()
    r = reference.routes.assign(turn_bin=reference.routes.turn // 10 * 10)
    ev = r.groupby(["route", "turn_bin"]).agg(claims=("game", "size"), needed=("needed", "sum"))
    rs = s.route_summary.set_index(["route", "turn_bin"])
    assert (rs.loc[ev.index, ["claims", "needed"]].values == ev.values).all()
    st = reference.stations.groupby("city", observed=True).agg(built=("game", "size"),
                                                               borrowed=("borrowed", lambda x: (x >= 0).sum()))
    ss = s.station_summary.set_index("city")
    assert (ss.loc[st.index.astype(str), ["built", "borrowed"]].values == st.values).all()
    assert ss["built"].sum() == len(reference.stations)


def test_out_dir_round_trip(tmp_path, reference):
    out = tmp_path / "run"
    run = simulate("europe", POLICIES, games=900, seed=11, batch_size=150, out=out, n_jobs=2)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["seed"] == 11 and manifest["complete"] and manifest["board_checksum"]
    assert manifest["policies"] == POLICIES and manifest["ttrsim_version"] == ttrsim.__version__
    assert_runs_equal(reference, run)
    assert_runs_equal(reference, load_run(out))
    # running the same call again replays nothing and gives the same tables
    again = simulate("europe", POLICIES, games=900, seed=11, batch_size=150, out=out)
    assert_runs_equal(reference, again)


def test_summary_run_round_trip(tmp_path):
    out = tmp_path / "s"
    a = simulate("newyork", ["random"] * 2, games=300, seed=3, batch_size=100, summary=True, out=out)
    b = load_run(out)
    for name in a.table_names:
        pd.testing.assert_frame_equal(getattr(a, name), getattr(b, name))


def test_policy_summary_is_the_same_from_memory_disk_and_summary_mode(tmp_path):
    # a run read from disk sums the games table a part at a time
    spec = dict(board="newyork", players=["tickets", "random"], games=400, seed=5, batch_size=75)
    events = simulate(**spec)
    simulate(**spec, out=tmp_path / "e")
    on_disk = load_run(tmp_path / "e")
    counted = simulate(**spec, summary=True)
    g = events.games.groupby("policy", observed=True)
    expected = pd.DataFrame({"seat_games": g.size(), "wins": g["win"].sum(),
                             "win_share": g["win"].mean(), "mean_score": g["score"].mean(),
                             "ticket_completion": g["tickets_completed"].sum()
                             / g["tickets_kept"].sum()}).loc[["tickets", "random"]]
    assert (expected.seat_games == 400).all()
    for run in (events, on_disk, counted):
        got = run.summary()
        assert list(got.index) == ["tickets", "random"]          # seat order of the run
        pd.testing.assert_frame_equal(got[expected.columns].reset_index(drop=True),
                                      expected.reset_index(drop=True), check_dtype=False)
        pd.testing.assert_frame_equal(got, events.summary())
    assert "games" not in on_disk._tables           # summed without loading the table


@pytest.mark.slow
def test_resume_after_kill_gives_the_uninterrupted_tables(tmp_path):
    args = ["--board", "usa", "--players", "2", "--policy", "random", "--games", "24000",
            "--batch-size", "400", "--seed", "4", "--quiet"]
    out = tmp_path / "killed"
    proc = subprocess.Popen([sys.executable, "-m", "ttrsim", "simulate", *args, "--out", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None:
        done = list((out / "done").glob("*")) if (out / "done").exists() else []
        if len(done) >= 3:
            break
        time.sleep(0.02)
    assert proc.poll() is None, "the run finished before it could be interrupted"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done = len(list((out / "done").glob("*")))
    assert 3 <= done < 60
    with pytest.raises(ValueError, match="incomplete"):
        load_run(out)
    assert main(["simulate", *args, "--out", str(out)]) == 0
    resumed = load_run(out)
    fresh = simulate("usa", ["random", "random"], games=24000, seed=4, batch_size=400)
    assert_runs_equal(fresh, resumed)


@pytest.mark.parametrize("kwargs, message", [
    (dict(board="mars"), "unknown board"),
    (dict(players=["nope"] * 4), "unknown policy"),
    (dict(players=["random:speed=3"] * 4), "bad parameter"),
    (dict(players=6), "allows 2 to 5 players"),
    (dict(board="newyork", players=5), "allows 2 to 4 players"),
    (dict(players=1), "allows 2 to 5 players"),
    (dict(games=0), "games must be a positive integer"),
    (dict(games=-5), "games must be a positive integer"),
    (dict(seed=-1), "seed must be"),
    (dict(players="four"), "players must be"),
    (dict(backend="spark"), "unknown backend"),
    (dict(backend="dask"), "needs scheduler= .--scheduler. ADDRESS"),
    (dict(n_jobs=0), r"n_jobs \(--jobs\) must be a number of workers"),
    (dict(n_jobs=2.5), r"n_jobs \(--jobs\) must be a number of workers"),
])
def test_bad_input_is_refused_clearly(kwargs, message):
    base = dict(board="europe", players=["random"] * 4, games=10)
    with pytest.raises(ValueError, match=message):
        simulate(**(base | kwargs))


def test_out_dir_of_another_run_is_refused(tmp_path):
    out = tmp_path / "x"
    simulate("usa", ["random"] * 2, games=20, seed=1, out=out)
    with pytest.raises(ValueError, match="different run.*seed"):
        simulate("usa", ["random"] * 2, games=20, seed=2, out=out)
    other = tmp_path / "y"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="not empty"):
        simulate("usa", ["random"] * 2, games=20, seed=1, out=other)


def test_a_run_of_the_default_search_saved_under_the_old_budget_is_not_resumed(tmp_path):
    """The default search's playouts changed (35 -> 60 with expert rollouts): a run saved
    with `search` seats before they were recorded played the old budget, and going on
    with the new one would mix two players under one name; a search of another rollout
    (its default unchanged) or of a given budget resumes."""
    import json

    run = simulate("newyork", ["search", "search:rollout=tickets", "search:playouts=3"],
                   games=3, seed=1, out=tmp_path / "r", batch_size=3)
    assert run.manifest["search_budgets"] == {"search": 60, "search:rollout=tickets": 200}
    path = tmp_path / "r" / "manifest.json"
    m = json.loads(path.read_text())
    del m["search_budgets"]                      # as a run saved before 2026-12-02
    path.write_text(json.dumps(m))
    with pytest.raises(ValueError, match=r"the default search's playouts a decision: "
                       r"\{'search': 35, 'search:rollout=tickets': 200\} there, "
                       r"\{'search': 60, 'search:rollout=tickets': 200\} here"):
        simulate("newyork", ["search", "search:rollout=tickets", "search:playouts=3"],
                 games=6, seed=1, out=tmp_path / "r", batch_size=3)
    # without a default-budget expert search the old run resumes
    ok = simulate("newyork", ["search:rollout=tickets", "search:playouts=3"], games=4, seed=1,
                  out=tmp_path / "t", batch_size=2)
    m = json.loads((tmp_path / "t" / "manifest.json").read_text())
    del m["search_budgets"]
    (tmp_path / "t" / "manifest.json").write_text(json.dumps(m))
    again = simulate("newyork", ["search:rollout=tickets", "search:playouts=3"], games=6,
                     seed=1, out=tmp_path / "t", batch_size=2)
    assert len(again.games) == 6 * 2 and len(ok.games) == 4 * 2


def test_cli_simulate_prints_summary(tmp_path, capsys):
    assert main(["simulate", "--board", "newyork", "--players", "3", "--policy", "random",
                 "--games", "200", "--quiet", "--out", str(tmp_path / "r")]) == 0
    text = capsys.readouterr().out
    assert "win share" in text and "random" in text
    assert main(["simulate", "--players", "3", "--policy", "random", "--policy", "random",
                 "--games", "5", "--quiet"]) == 2
    assert "not 2 times" in capsys.readouterr().err


def test_cli_simulate_help_documents_options(capsys):
    with pytest.raises(SystemExit):
        main(["simulate", "--help"])
    text = capsys.readouterr().out
    for opt in ("--board", "--players", "--policy", "--games", "--jobs", "--seed", "--out",
                "--summary", "--backend", "--scheduler"):
        assert opt in text


def test_turn_cap_stops_and_scores_a_game():
    run = simulate("usa", ["random", "random"], games=20, seed=2, max_turns=7)
    g = run.games
    assert g["truncated"].all() and (g["turns"] == 7).all()
    parts = g["route_points"] + g["ticket_points"] + g["longest_bonus"]
    assert (parts == g["score"]).all()
    assert not simulate("usa", ["random", "random"], games=20, seed=2).games["truncated"].any()
