"""The league: ratings on cases whose answer is known, the win-share matrix against the raw
games, seat balance, reproducibility whatever the workers, resume and extension through
--out, refusals, and the command of docs/league.md."""
from __future__ import annotations

import itertools
import subprocess
import sys
from collections import Counter

import numpy as np
import pandas as pd
import pytest

import importlib

import ttrsim
from ttrsim.analysis.studies.leagues import ELO, fit_ratings, load_league, schedule
from ttrsim.cli import main
from ttrsim.policies import REGISTRY

# the module (its name is also the function's, which the package exports)
league_mod = importlib.import_module("ttrsim.analysis.studies.leagues")

# New York plays fastest; tickets beats random in practically every game
FAST = dict(board="newyork", n_resamples=200)


def test_fit_ratings_known_cases():
    # a policy that beats another 3 times out of 4: log-odds ln 3 between them
    r = fit_ratings(np.array([[0, 3000], [1000, 0]]))
    assert r[0] - r[1] == pytest.approx(np.log(3) * ELO, rel=0.01)
    assert r.sum() == pytest.approx(0)
    # transitive strengths 4:2:1 are recovered in order, with the right gaps
    s = np.array([4.0, 2.0, 1.0])
    wins = 10_000 * s[:, None] / (s[:, None] + s[None, :])
    np.fill_diagonal(wins, 0)
    r = fit_ratings(wins)
    assert np.diff(r) == pytest.approx([-np.log(2) * ELO] * 2, rel=0.01)
    # a policy that never loses stays finite and far ahead
    r = fit_ratings(np.array([[0, 100], [0, 0]]))
    assert np.isfinite(r).all() and r[0] - r[1] > 800


def test_a_policy_that_always_wins_rates_first_with_a_wide_gap():
    lg = ttrsim.league(policies=["random", "tickets", "greedy"], games=40, **FAST)
    r = lg.ratings.set_index("policy")
    m = lg.matrix.set_index(["policy", "opponent"])
    assert m.loc[("tickets", "random"), "win_share"] == 1.0      # the known case holds
    assert lg.ratings.policy.iloc[-1] == "random"
    # random is rated last with a gap of hundreds of points, the intervals well apart
    for strong in ("tickets", "greedy"):
        assert r.rating[strong] - r.rating["random"] > 400
        assert r.rating_low[strong] > r.rating_high["random"]
    assert lg.worst.set_index("policy").opponent["random"] in ("tickets", "greedy")
    for col in ("rating_low", "rating_high"):
        assert np.isfinite(r[col]).all()
    assert (r.rating_low <= r.rating).all() and (r.rating <= r.rating_high).all()


def test_a_policy_that_always_loses_rates_last_at_three_players():
    # one mixture of three: random finishes behind both others in practically every game
    lg = ttrsim.league(policies=["tickets", "random", "greedy"], players=3, games=30, **FAST)
    r = lg.ratings.set_index("policy")
    assert lg.ratings.policy.iloc[-1] == "random" and r.first_share["random"] == 0
    for strong in ("tickets", "greedy"):
        assert r.rating_low[strong] > r.rating_high["random"] + 400


def test_mirror_match_rates_equal_within_its_interval():
    lg = ttrsim.league(policies=["tickets#a", "tickets#b"], games=200, **FAST)
    r = lg.ratings.set_index("policy")
    for p in ("tickets#a", "tickets#b"):
        assert r.rating_low[p] <= 0 <= r.rating_high[p]
    assert abs(r.rating["tickets#a"] - r.rating["tickets#b"]) < \
        (r.rating_high - r.rating_low).max()
    m = lg.matrix
    assert (m.win_share_low <= 0.5).all() and (m.win_share_high >= 0.5).all()


def test_mirror_mixtures_at_four_players():
    lg = ttrsim.league(policies=["tickets#a", "tickets#b"], players=4, games=40, **FAST)
    assert [c["policies"] for c in lg.manifest["cells"]] == [
        ["tickets#a"] * 3 + ["tickets#b"], ["tickets#a"] * 2 + ["tickets#b"] * 2,
        ["tickets#a"] + ["tickets#b"] * 3]
    r = lg.ratings.set_index("policy")
    for p in ("tickets#a", "tickets#b"):
        assert r.rating_low[p] <= 0 <= r.rating_high[p]


@pytest.mark.parametrize("n_policies,players", [(2, 2), (5, 2), (2, 3), (3, 4), (4, 3), (5, 4),
                                                (6, 5), (2, 5), (3, 5)])
def test_schedule_is_the_same_for_every_policy(n_policies, players):
    cells = schedule(n_policies, players)
    assert cells and len(set(cells)) == len(cells)
    assert all(len(c) == players and set(c) <= set(range(n_policies)) for c in cells)
    # every pair of policies meets, and each policy fills the same number of seat slots
    for a, b in itertools.combinations(range(n_policies), 2):
        assert any(a in c and b in c for c in cells)
    slots = Counter(i for c in cells for i in c)
    assert len(set(slots.values())) == 1 and len(slots) == n_policies
    # renaming the policies gives the same schedule
    for perm in itertools.permutations(range(n_policies)):
        assert sorted(tuple(sorted(perm[i] for i in c)) for c in cells) == sorted(cells)
        if n_policies > 3:
            break


@pytest.mark.parametrize("players,policies", [(2, ["tickets", "greedy", "random"]),
                                              (3, ["tickets", "greedy", "random", "routes"]),
                                              (4, ["tickets", "random"])])
def test_seat_rotation_balanced(players, policies):
    games = 6 * players
    lg = ttrsim.league(policies=policies, players=players, games=games, **FAST)
    seats = lg.seats.set_index("policy")
    assert seats.shape == (len(policies), players)
    # every policy in every seat equally often, counted from the games themselves
    counts = Counter()
    for run in lg.runs.values():
        counts.update(zip(run.games.policy.astype(str), run.games.seat))
    for p in policies:
        per_seat = [counts[(p, s)] for s in range(players)]
        assert len(set(per_seat)) == 1 and per_seat[0] > 0
        assert list(seats.loc[p]) == per_seat
    assert lg.ratings.seat_games.nunique() == 1


def _raw_matrix(lg) -> pd.DataFrame:
    """Win shares straight from the games tables: every two seats of different policies."""
    wins, pairs, games = Counter(), Counter(), Counter()
    for run in lg.runs.values():
        for _, g in run.games.groupby("game"):
            rows = list(zip(g.policy.astype(str), g["rank"]))
            seen = set()
            for (pa, ra), (pb, rb) in itertools.permutations(rows, 2):
                if pa != pb:
                    wins[pa, pb] += (ra < rb) + 0.5 * (ra == rb)
                    pairs[pa, pb] += 1
                    seen.add((pa, pb))
            games.update(seen)
    return pd.DataFrame([{"policy": a, "opponent": b, "games": games[a, b],
                          "win_share": wins[a, b] / pairs[a, b]} for a, b in pairs])


@pytest.mark.parametrize("players", [2, 3])
def test_matrix_against_the_raw_games(players):
    lg = ttrsim.league(policies=["tickets", "greedy", "random", "routes"][:2 + players - 1],
                       players=players, games=12, **FAST)
    raw = _raw_matrix(lg).set_index(["policy", "opponent"]).sort_index()
    got = lg.matrix.set_index(["policy", "opponent"]).sort_index()
    assert list(got.index) == list(raw.index)
    np.testing.assert_allclose(got.win_share, raw.win_share)
    assert (got.games == raw.games).all()
    if players == 2:      # a game has one winner or a shared first place
        np.testing.assert_allclose(
            got.win_share.to_numpy() + got.win_share.swaplevel().reindex(got.index).to_numpy(), 1)
    worst = lg.worst.set_index("policy")
    for p in lg.policies:
        assert worst.win_share[p] == got.loc[p].win_share.min()


def test_ratings_follow_the_saved_games_when_read_back(tmp_path):
    lg = ttrsim.league(policies=["tickets", "random"], games=20, out=tmp_path / "lg", **FAST)
    back = load_league(tmp_path / "lg")
    pd.testing.assert_frame_equal(back.ratings, lg.ratings)
    pd.testing.assert_frame_equal(back.matrix, lg.matrix)


def test_load_league_refuses_what_is_not_a_finished_league(tmp_path):
    run_dir = tmp_path / "run"
    ttrsim.simulate("newyork", 2, games=4, out=run_dir)
    with pytest.raises(ValueError, match="holds no league"):
        load_league(run_dir)
    with pytest.raises(ValueError, match="not a league"):
        ttrsim.league(policies=["tickets", "random"], games=4, out=run_dir, **FAST)
    lg_dir = tmp_path / "lg"
    ttrsim.league(policies=["tickets", "random"], games=4, out=lg_dir, **FAST)
    manifest = lg_dir / "manifest.json"
    manifest.write_text(manifest.read_text().replace('"complete": true', '"complete": false'))
    with pytest.raises(ValueError, match="unfinished league"):
        load_league(lg_dir)


def test_same_tables_whatever_the_workers():
    kw = dict(policies=["tickets", "greedy", "random"], games=40, batch_size=10, **FAST)
    one, two = ttrsim.league(n_jobs=1, **kw), ttrsim.league(n_jobs=2, **kw)
    for name in ("matrix", "ratings", "worst", "seats"):
        pd.testing.assert_frame_equal(getattr(one, name), getattr(two, name))


def _spy_on_simulate(monkeypatch) -> list:
    played = []
    real = league_mod.simulate

    def spy(board, specs, **k):
        run = real(board, specs, **k)
        # the league hands simulate its parsed values
        played.append((tuple(s.text for s in specs), run.manifest["games_last_session"]))
        return run
    monkeypatch.setattr(league_mod, "simulate", spy)
    return played


def test_resume_and_extend(tmp_path, monkeypatch):
    out = tmp_path / "lg"
    kw = dict(batch_size=10, **FAST)
    ttrsim.league(policies=["tickets", "random"], games=20, out=out, **kw)
    # more games and one more policy: only what is missing is played
    played = _spy_on_simulate(monkeypatch)
    grown = ttrsim.league(policies=["tickets", "random", "greedy"], games=40, out=out, **kw)
    assert played == [(("tickets", "random"), 20), (("tickets", "greedy"), 40),
                      (("random", "greedy"), 40)]
    fresh = ttrsim.league(policies=["tickets", "random", "greedy"], games=40, **kw)
    for name in ("matrix", "ratings"):
        pd.testing.assert_frame_equal(getattr(grown, name), getattr(fresh, name))
    # a pairing lost since (its directory gone): the same call plays it alone again
    played.clear()
    import shutil
    shutil.rmtree(out / grown.manifest["cells"][1]["dir"])
    again = ttrsim.league(policies=["tickets", "random", "greedy"], games=40, out=out, **kw)
    assert [g for _, g in played] == [0, 40, 0]
    pd.testing.assert_frame_equal(again.ratings, fresh.ratings)
    # another seed is another league
    with pytest.raises(ValueError, match="holds a different league.*seed"):
        ttrsim.league(policies=["tickets", "random"], games=40, seed=1, out=out, **kw)
    with pytest.raises(ValueError, match="grow but not shrink"):
        ttrsim.league(policies=["tickets", "random"], games=20, out=out, **kw)


def test_the_same_pairing_in_another_order_reads_the_saved_games(tmp_path, monkeypatch):
    """A league of [random, tickets] on a directory holding [tickets, random] reads that
    pairing's games (it played them again under another directory, and a league read back
    then counted the pairing twice)."""
    out = tmp_path / "lg"
    kw = dict(batch_size=10, **FAST)
    first = ttrsim.league(policies=["tickets", "random"], games=20, out=out, **kw)
    played = _spy_on_simulate(monkeypatch)
    again = ttrsim.league(policies=["random", "tickets"], games=20, out=out, **kw)
    assert played == [(("tickets", "random"), 0)]
    assert len(load_league(out).cells) == 1
    pd.testing.assert_frame_equal(again.ratings, first.ratings)


def test_out_alone_reads_a_league_back_and_resumes_an_unfinished_one(tmp_path, monkeypatch,
                                                                     capsys):
    out = tmp_path / "lg"
    assert main(["league", "--board", "newyork", "--policy", "tickets", "--policy", "random",
                 "--policy", "greedy", "--games", "20", "--quiet", "--out", str(out)]) == 0
    ratings = capsys.readouterr().out.split("\n\n")[1]
    played = _spy_on_simulate(monkeypatch)
    assert main(["league", "--out", str(out), "--quiet"]) == 0
    text = capsys.readouterr().out
    assert played == [] and "league on newyork, 2 players: 3 policies" in text
    assert text.split("\n\n")[1] == ratings and "Read back: 3 pairings (60 games)" in text
    # an unfinished league (the manifest of one cut short): its own settings, nothing new
    import json
    m = json.loads((out / "manifest.json").read_text())
    (out / "manifest.json").write_text(json.dumps(dict(m, complete=False)))
    assert main(["league", "--out", str(out), "--quiet"]) == 0
    assert [g for _, g in played] == [0, 0, 0]
    assert capsys.readouterr().out.split("\n\n")[1] == ratings


@pytest.mark.parametrize("kwargs,message", [
    (dict(policies=["tickets"]), "at least two policies"),
    (dict(policies="tickets"), "list of policy specs"),
    (dict(policies=["tickets", "nosuch"]), "nosuch"),
    (dict(policies=["tickets", "tickets"]), "given twice.*tickets#a"),
    (dict(policies=["tickets", "random"], players=1), "players must be"),
    (dict(policies=["tickets", "random"], players=6), "players must be"),
    (dict(board="newyork", policies=["tickets", "random"], players=5), "allows 2 to 4"),
    (dict(policies=["tickets", "random"], games=7), "multiple of the player count.*--games 8"),
    (dict(policies=["tickets", "random"], n_jobs=0), "n_jobs"),
])
def test_refusals(kwargs, message):
    with pytest.raises((ValueError, KeyError, ttrsim.PolicyError), match=message):
        ttrsim.league(**{"games": 10, **kwargs})


def test_a_search_spec_is_checked_without_building_the_search(monkeypatch):
    """The league checks its policies before any game without building a search (nine
    policies each): the check then goes on to the next mistake, a policy given twice, and
    a bad search parameter is refused as building it would refuse it."""
    import dataclasses

    built, search = [], REGISTRY["search"]

    def counted(**params):
        built.append(params)
        return search.build(**params)

    monkeypatch.setitem(REGISTRY, "search", dataclasses.replace(search, build=counted))
    with pytest.raises(ValueError, match="'tickets' is given twice"):
        ttrsim.league(board="newyork", policies=["search:playouts=5", "tickets", "tickets"],
                      games=10)
    with pytest.raises(ValueError, match="phases must be a sum"):
        ttrsim.league(board="newyork", policies=["search:phases=40", "tickets"], games=10)
    assert built == []


def test_cli_refuses_in_one_line(capsys):
    assert main(["league", "--policy", "tickets", "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "at least two policies" in err


def test_cli_user_policy_joins(tmp_path, capsys):
    f = tmp_path / "mine.py"
    f.write_text("def first(observation, legal_actions):\n    return legal_actions[0]\n")
    assert main(["league", "--board", "newyork", "--policy", "tickets", "--policy",
                 f"{f}:first", "--games", "4", "--resamples", "40", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "mine.py:first" in out and "tickets" in out


@pytest.mark.slow
def test_done_when_command(tmp_path):
    """The command of docs/league.md, as a user runs it: progress, the report, a rerun
    that plays nothing."""
    cmd = [sys.executable, "-m", "ttrsim", "league", "--board", "usa", "--players", "2",
           "--games", "200", "--out", "runs/league", "--report", "runs/league/report"]
    p = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr
    assert "pairing 1/" in p.stderr and "game/s" in p.stderr          # progress
    assert "rating" in p.stdout and "worst opponent" in p.stdout
    report = tmp_path / "runs/league/report"
    page = (report / "index.html").read_text()
    for part in ("Ratings", "Win-share matrix", "Worst opponents", "Style profile"):
        assert part in page
    assert (report / "ratings.png").exists() and (report / "matrix.png").exists()
    style = pd.read_csv(report / "style.csv")          # a column per policy, and the winners
    assert set(league_mod.league_policies()) | {"winners"} <= set(style.columns)
    assert "game turn of first claim" in set(style.measure)
    ratings = pd.read_csv(report / "ratings.csv")
    assert set(ratings.policy) == set(league_mod.league_policies())
    again = subprocess.run(cmd + ["--quiet"], cwd=tmp_path, capture_output=True, text=True,
                           timeout=900)
    assert again.returncode == 0
    assert again.stdout.splitlines()[2:-2] == p.stdout.splitlines()[2:-2]
    assert "Nothing played now; read back from runs/league: 21 pairings (4,200 games)." in \
        again.stdout and "read back" not in p.stdout


# --- intervals that hold what more games show -------------------------------------------

def test_rating_intervals_known_cases():
    from ttrsim.analysis.studies.leagues import prior_ends, rating_intervals

    # 300 wins to 100: log-odds ln 3 between the two, each rating half of it from the mean;
    # the profile interval of a binomial log-odds is close to the Wald one, 1.96 standard
    # errors of sqrt(1/300 + 1/100) (halved: each rating is half the gap)
    wins = np.array([[0, 300.0], [100, 0]])
    reps = np.tile(fit_ratings(wins), (40, 1))           # a bootstrap with no spread of its own
    low, high = rating_intervals(wins, reps, 0.95)
    r = fit_ratings(wins)
    half = 1.96 * np.sqrt(1 / 300.5 + 1 / 100.5) / 2 * ELO
    assert high[0] - r[0] == pytest.approx(half, rel=0.05)
    assert r[0] - low[0] == pytest.approx(half, rel=0.05)
    np.testing.assert_allclose(low, -high[::-1])
    # a bootstrap whose ends lie twice as far out as the likelihood's (twice its standard
    # error) widens the interval as much; one inside it leaves it as it is
    sign = np.arange(400)[:, None] % 2 * 2 - 1
    wl, wh = rating_intervals(wins, r + sign * [2 * half, -2 * half], 0.95)
    assert wh[0] - wl[0] == pytest.approx(2 * (high[0] - low[0]), rel=0.05)
    nl, nh = rating_intervals(wins, r + sign * [half / 2, -half / 2], 0.95)
    np.testing.assert_allclose([nl, nh], [low, high])
    # the games bound nothing on the side a one-sided pairing leaves open, also through
    # others and through the mean: c beat b and a, b beat a, a beat nobody. c can rise
    # away from both and a sink below both (the games never say how far); b, relative to
    # the mean, rises as a sinks and sinks as c rises
    assert [list(x) for x in prior_ends(np.array([[0, 5.0], [0, 0]]))] == [[True, False],
                                                                            [False, True]]
    chain = np.array([[0, 0, 0], [4.0, 0, 0], [1.0, 3.0, 0]])
    upper, lower = prior_ends(chain)
    assert list(upper) == [False, True, True] and list(lower) == [True, True, False]
    # once a beats c a single time, every rating is bounded both ways
    closed = chain.copy()
    closed[0, 2] = 1.0
    assert not np.concatenate(prior_ends(closed)).any()


def test_intervals_cover_what_many_more_games_show():
    # the interval at a few games holds the rating measured on twenty times as many other
    # games; a one-sided pairing (tickets beats random in every game) gets an interval of
    # some width, its open end marked as set by the prior
    for seed in range(3):
        kw = dict(policies=["tickets", "greedy", "random"], board="newyork", n_resamples=200)
        few = ttrsim.league(games=20, seed=seed, **kw).ratings.set_index("policy")
        many = ttrsim.league(games=400, seed=seed + 100, **kw).ratings.set_index("policy")
        for p in few.index:
            assert few.rating_low[p] <= many.rating[p] <= few.rating_high[p], (seed, p)
    lg = ttrsim.league(policies=["tickets", "random"], games=10, **FAST)
    r = lg.ratings.set_index("policy")
    assert lg.matrix.one_sided.all()
    assert (r.rating_high - r.rating_low > 300).all()
    assert r.set_by_prior.to_dict() == {"tickets": "upper end", "random": "lower end"}
    more = ttrsim.league(policies=["tickets", "random"], games=200, **FAST).ratings
    assert more.rating.iloc[0] <= r.rating_high["tickets"]
    text = lg.summary_text()
    assert "]*" in text and "One-sided: random lost every game to tickets" in text


def test_the_rating_bootstrap_draws_every_game():
    # one pairing of 12 games; only the last is lost: a resample holds it about 1 - (11/12)^12
    # = 65% of the time, and its ratings then differ from the all-won ones
    W = np.zeros((12, 4))
    W[:, 1] = 1.0                          # policy 0 over policy 1
    W[-1] = [0, 0, 1.0, 0]                 # the last game: policy 1 over policy 0
    reps = league_mod._bootstrap([(np.arange(4), W)], 2, 2000, 0)
    all_won = fit_ratings(np.array([[0, 12.0], [0, 0]]))
    held = ~np.isclose(reps[:, 0], all_won[0])
    assert 0.6 < held.mean() < 0.7
    # every game is drawn about equally often: the first game likewise
    W2 = W[::-1].copy()
    reps2 = league_mod._bootstrap([(np.arange(4), W2)], 2, 2000, 0)
    assert 0.6 < (~np.isclose(reps2[:, 0], all_won[0])).mean() < 0.7


def test_resamples_need_a_resample_beyond_each_end(capsys):
    with pytest.raises(ValueError, match=r"n_resamples.*>= 40 .*95% bootstrap interval needs"):
        ttrsim.league(policies=["tickets", "random"], games=2, n_resamples=39, **{
            k: v for k, v in FAST.items() if k != "n_resamples"})
    with pytest.raises(ValueError, match=r">= 200"):
        ttrsim.league(policies=["tickets", "random"], games=2, board="newyork",
                      n_resamples=199, confidence=0.99)
    assert main(["league", "--board", "newyork", "--policy", "tickets", "--policy", "random",
                 "--games", "2", "--resamples", "39", "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--resamples" in err[0] and "at least 40" in err[0]
    ttrsim.league(policies=["tickets", "random"], games=2, board="newyork", n_resamples=40)


# --- what is played ---------------------------------------------------------------------

def test_fewer_policies_than_seats_play_only_mixtures_seating_each():
    # 3 policies at 4 seats: one of them twice, each in turn (2+1+1); never a mixture that
    # leaves one out (2+2 or 3+1); every game of every run seats all three
    names = ["tickets", "greedy", "random"]
    lg = ttrsim.league(policies=names, players=4, games=4, **FAST)
    played = []
    for run in lg.runs.values():
        for _, g in run.games.groupby("game"):
            assert set(g.policy.astype(str)) == set(names)
        played.append(tuple(sorted(Counter(run.games[run.games.game == run.games.game.min()]
                                           .policy.astype(str)).items())))
    expected = {tuple(sorted({p: 1 + (p == twice) for p in names}.items())) for twice in names}
    assert sorted(played) == sorted(expected) and len(played) == 3


def test_max_turns_is_played_not_only_recorded():
    lg = ttrsim.league(policies=["tickets", "greedy"], games=4, max_turns=12, **FAST)
    assert lg.manifest["max_turns"] == 12
    for run in lg.runs.values():
        assert run.manifest["max_turns"] == 12
        assert (run.games.groupby("game").turns.first() <= 12).all()
        assert (run.games.groupby("game").turns.first() == 12).any()     # the limit ended them


def _files(root):
    return {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in sorted(root.rglob("*")) if p.is_file()}


def test_another_board_is_refused_before_anything_is_rewritten(tmp_path):
    out = tmp_path / "lg"
    ttrsim.league(policies=["tickets", "random"], games=4, out=out, **FAST)
    before = _files(out)
    import time
    time.sleep(0.01)
    with pytest.raises(ValueError, match="holds a different league.*board"):
        ttrsim.league(policies=["tickets", "random"], games=4, out=out, board="usa", n_resamples=40)
    assert _files(out) == before
    assert main(["league", "--board", "usa", "--policy", "tickets", "--policy", "random",
                 "--games", "4", "--out", str(out), "--quiet"]) == 2
    assert _files(out) == before


# --- the directory and the command ------------------------------------------------------

def test_load_league_reads_every_policy_the_directory_holds(tmp_path):
    out = tmp_path / "lg"
    three = ["tickets", "greedy", "random"]
    full = ttrsim.league(policies=three, games=8, out=out, **FAST)
    sub = ttrsim.league(policies=["tickets", "random"], games=8, out=out, **FAST)
    back = load_league(out)                # not only the two policies played last
    assert back.policies == three and len(back.cells) == 3
    pd.testing.assert_frame_equal(back.ratings, full.ratings)
    assert sub.policies == ["tickets", "random"] and sub.cells.played_now.sum() == 0
    assert "also holds pairings of greedy" in sub.summary_text()
    # more games for a subset: the directory holds cells of both lengths, and says so
    grown = ttrsim.league(policies=["tickets", "random"], games=16, out=out, **FAST)
    assert "Played now: 1 pairing (8 games); read back from" in grown.summary_text()
    assert "1 pairing (8 games)." in grown.summary_text()
    back = load_league(out)
    assert back.policies == three and sorted(back.cells.games) == [8, 8, 16]
    assert "3 pairings of 8 to 16 games" in back.summary_text()
    m = back.matrix.set_index(["policy", "opponent"])
    assert m.games[("tickets", "random")] == 16 and m.games[("tickets", "greedy")] == 8
    # an extended league says what it played and what it read back: 8 more games of two
    # pairings, three new ones of 16; 8 + 16 + 8 games read back
    ext = ttrsim.league(policies=three + ["routes"], games=16, out=out, **FAST)
    text = ext.summary_text()
    assert "Played now: 5 pairings (64 games); read back from" in text
    assert ": 3 pairings (32 games)." in text and "also holds" not in text


def test_a_suggested_label_is_accepted():
    for given in (["tickets", "tickets"], ["tickets#a", "tickets#a"],
                  ["tickets#a", "tickets", "tickets"], ["tickets:risk=0#x", "tickets:risk=0#x"]):
        with pytest.raises(ValueError, match="given twice") as e:
            ttrsim.league(policies=given, games=2, **FAST)
        import re
        a, b = re.search(r"e\.g\. '([^']+)' and '([^']+)'", str(e.value)).groups()
        fixed = [x for x in given if x != given[-1]] + [a, b]
        lg = ttrsim.league(policies=fixed, games=2, **FAST)
        assert len(set(lg.policies)) == len(fixed)


@pytest.mark.parametrize("command", [
    ["league", "--policy", "tickets", "--policy", "random", "--games", "2"],
    ["ticket-fairness", "--games", "2"], ["route-importance", "--games", "2"],
    ["simulate", "--games", "2"]])
def test_an_empty_out_is_refused(command, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(command + ["--board", "newyork", "--out", "", "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--out is empty" in err[0]
    assert not any(tmp_path.iterdir())



def test_an_empty_out_is_refused_by_the_studies_too():
    from ttrsim.analysis.studies import route_importance, ticket_fairness

    for study in (lambda: ttrsim.league(policies=["tickets", "random"], games=2, out=" ", **FAST),
                  lambda: ticket_fairness("newyork", 2, games=2, out=""),
                  lambda: route_importance("newyork", 2, games=2, out="")):
        with pytest.raises(ValueError, match="out .--out. is empty"):
            study()
