"""Runs that grow and stop well: a finished run extended with more games equals one run of
that many games; a resumed run keeps its batch size; a damaged part is named with how to
recover, and resuming plays its batch again; a damaged manifest names its file."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from ttrsim.cli import main
from ttrsim.results import load_run, part_path
from ttrsim.runner import simulate

KW = dict(seed=5, batch_size=100)


def tables(run):
    return {name: table.reset_index(drop=True) for name, table in run.tables().items()}


def assert_same_tables(a, b):
    ta, tb = tables(a), tables(b)
    assert ta.keys() == tb.keys()
    for name in ta:
        pd.testing.assert_frame_equal(ta[name], tb[name], obj=name)


@pytest.mark.parametrize("summary", [False, True])
def test_extending_a_finished_run_equals_one_run_of_all_its_games(tmp_path, summary):
    out = tmp_path / "run"
    small = simulate("newyork", 2, games=250, out=out, summary=summary, **KW)   # last batch: 50
    first = tables(load_run(out)) if not summary else None
    grown = simulate("newyork", 2, games=430, out=out, summary=summary, **KW)
    whole = simulate("newyork", 2, games=430, summary=summary, **KW)
    assert grown.manifest["games"] == 430 and grown.manifest["batches"] == 5
    assert_same_tables(load_run(out), whole)
    if not summary:         # the first games are unchanged
        again = tables(load_run(out))
        for name, table in first.items():
            pd.testing.assert_frame_equal(again[name][again[name].game < 250].reset_index(drop=True),
                                          table, obj=name)
    assert small.manifest["games"] == 250


def test_extending_from_the_command_line_keeps_the_batch_size(tmp_path, capsys):
    out = tmp_path / "run"
    args = ["simulate", "--board", "newyork", "--players", "2", "--seed", "5", "--quiet",
            "--out", str(out)]
    assert main(args + ["--games", "150", "--batch-size", "40"]) == 0
    assert main(args + ["--games", "200"]) == 0        # no --batch-size: the run's own
    m = json.loads((out / "manifest.json").read_text())
    assert (m["games"], m["batch_size"], m["complete"]) == (200, 40, True)
    assert_same_tables(load_run(out), simulate("newyork", 2, games=200, seed=5, batch_size=40))
    capsys.readouterr()
    # a run does not shrink, and another batch size is still another run
    assert main(args + ["--games", "100"]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "can grow but not shrink" in err and "--games 200" in err
    assert main(args + ["--games", "300", "--batch-size", "50"]) == 2
    assert "batch_size: 40 there, 50 here" in capsys.readouterr().err


def test_a_resumed_run_keeps_its_batch_size(tmp_path):
    out = tmp_path / "run"
    simulate("newyork", 2, games=120, seed=1, batch_size=30, out=out)
    again = simulate("newyork", 2, games=120, seed=1, out=out)     # default would be 120
    assert again.manifest["batch_size"] == 30


@pytest.mark.parametrize("summary", [False, True])
def test_a_damaged_part_is_named_and_played_again_on_resume(tmp_path, capsys, summary):
    out = tmp_path / "run"
    simulate("newyork", 2, games=300, out=out, summary=summary, **KW)
    whole = simulate("newyork", 2, games=300, summary=summary, **KW)
    part = part_path(out, "summary", 1, "npz") if summary else part_path(out, "routes", 1)
    part.write_bytes(part.read_bytes()[:40])            # cut short
    if summary:
        with pytest.raises(ValueError, match=f"{part}.*damaged.*same simulate command again"):
            load_run(out)
    else:
        with pytest.raises(ValueError, match=f"{part}.*damaged.*same simulate command again"):
            load_run(out).routes
        assert main(["report", str(out), "--out", str(tmp_path / "rep")]) == 2
        err = capsys.readouterr().err
        assert len(err.splitlines()) == 1 and str(part) in err
    assert main(["simulate", "--board", "newyork", "--players", "2", "--games", "300", "--seed",
                 "5", "--batch-size", "100", "--quiet", "--out", str(out)]
                + (["--summary"] if summary else [])) == 0
    assert_same_tables(load_run(out), whole)


@pytest.mark.parametrize("text", ["{not json", "{}", "[1, 2]"])
def test_a_damaged_manifest_names_its_file(tmp_path, capsys, text):
    out = tmp_path / "run"
    simulate("newyork", 2, games=50, out=out, **KW)
    (out / "manifest.json").write_text(text)
    assert main(["report", str(out), "--out", str(tmp_path / "rep")]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and str(out / "manifest.json") in err, err
    assert main(["simulate", "--board", "newyork", "--players", "2", "--games", "50", "--quiet",
                 "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and str(out / "manifest.json") in err, err


# ------------------------------------------------------------------ batch size from cost

def test_batch_size_from_cost():
    from ttrsim.batches import MAX_BATCH_SECONDS, cost_batch_size

    assert cost_batch_size(0.0002, 10_000) == 10_000           # fast: the default
    assert cost_batch_size(MAX_BATCH_SECONDS / 1000, 1000) == 1000
    assert cost_batch_size(0.5, 1000) == 2                     # search: about 2 s a batch
    assert cost_batch_size(0.03, 1000) == 50
    assert cost_batch_size(0.1, 1000) == 20
    assert cost_batch_size(30.0, 1000) == 1                    # never 0
    for per_game in (0.006, 0.01, 0.07, 0.3, 2.0):
        size = cost_batch_size(per_game, 1000)
        assert size * per_game <= 2.0 < 2.5 * (size + 1) * per_game   # 1-2-5 steps below 2 s


def test_slow_policies_get_small_batches_and_the_same_tables(monkeypatch):
    import ttrsim.batches
    from ttrsim.batches import make_config, seconds_per_game

    # the measurement itself (no timing asserted but that the search, which plays a
    # thousand playouts per decision, costs more than the random policy)
    given = dict(batch_size=1000)
    search = seconds_per_game(make_config("newyork", ["search", "tickets"], 1000, 0, **given))
    random = seconds_per_game(make_config("newyork", ["random", "random"], 1000, 0, **given))
    assert 0 < random < search < float("inf")
    assert make_config("newyork", ["search", "tickets"], 1000, 0,
                       batch_size=1000).batch_size == 1000       # a given size is kept
    # the choice from a measured cost (fixed here: timings vary from machine to machine)
    monkeypatch.setattr(ttrsim.batches, "seconds_per_game", lambda cfg: 0.0002)
    assert make_config("newyork", 2, 1000, 0).batch_size == 1000
    monkeypatch.setattr(ttrsim.batches, "seconds_per_game", lambda cfg: 0.1)
    assert make_config("newyork", 2, 1000, 0).batch_size == 20
    # whatever the batch size, the same games (a game costing a second: batches of 2)
    monkeypatch.setattr(ttrsim.batches, "seconds_per_game", lambda cfg: 1.0)
    run = simulate("newyork", ["search:playouts=40", "tickets"], games=6, seed=2)
    assert run.manifest["batch_size"] == 2
    one = simulate("newyork", ["search:playouts=40", "tickets"], games=6, seed=2, batch_size=6)
    assert run.manifest["batch_size"] < 6
    assert_same_tables(run, one)


def test_policy_objects_are_not_played_to_measure_them():
    from ttrsim.batches import OBJECT_BATCH_SIZE, make_config

    class Watching:
        """A Python policy that records every decision it is asked for."""

        def __init__(self):
            self.calls = 0

        def choose(self, game, legal):
            self.calls += 1
            return legal[0]

    w = Watching()
    cfg = make_config("newyork", [w, "random"], 1000, 0)
    assert w.calls == 0 and cfg.batch_size == OBJECT_BATCH_SIZE
    assert make_config("newyork", [w, "random"], 1000, 0, batch_size=300).batch_size == 300
