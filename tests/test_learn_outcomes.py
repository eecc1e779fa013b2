"""Learning the whole game from outcomes: the labels (``generate_outcomes``), the
exploration, and the resumable command (scripts/learn_whole_game.py)."""
from __future__ import annotations

import json
import runpy
from pathlib import Path

import numpy as np
import pytest

from ttrsim._expert import ExpertPolicy, load_model, model_file
from ttrsim.game import Game
from ttrsim.training.labelling import KINDS, expert_pick, generate_outcomes, outcome

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "learn_whole_game.py"


def test_outcome_is_the_margin_over_the_best_other_seat_and_a_shared_win():
    scores = [{"total": 120, "rank": 1}, {"total": 120, "rank": 1}, {"total": 90, "rank": 3}]
    assert outcome(scores, 0, "margin") == 0.0
    assert outcome(scores, 2, "margin") == pytest.approx(-0.3)
    assert outcome(scores, 0, "win") == 0.5 and outcome(scores, 2, "win") == 0.0
    assert outcome([{"total": 150, "rank": 1}, {"total": 100, "rank": 2}], 0) == 0.5
    with pytest.raises(ValueError, match="target must be one of"):
        outcome(scores, 0, "points")


def test_each_row_is_the_played_candidate_valued_by_its_seats_final_result():
    data, seats, finals = generate_outcomes("usa", 3, games=3, seed=4, details=True)
    again = generate_outcomes("usa", 3, games=3, seed=4)
    for k in KINDS.values():
        assert len(data[k].value) == len(seats[k]) > 0
        np.testing.assert_array_equal(data[k].X, again[k].X)
        want = [outcome(finals[i], q) for i, q in zip(data[k].game, seats[k])]
        np.testing.assert_allclose(data[k].value, want, atol=1e-6)
        assert len(np.unique(data[k].group)) == len(data[k].group)      # one row a decision


def _models_own_rows(board, players, seed, model):
    """The rows of game 0 of ``generate_outcomes`` had every seat played its model's
    move (the same deal and seat seeds, no exploration)."""
    from ttrsim.training.labelling import play_experts

    seeds = np.random.SeedSequence([seed, players, 0x0C7]).generate_state(2, dtype=np.uint64)
    g = Game(board, players, seed=int(seeds[0]))
    rng = np.random.default_rng(int(seeds[1]))
    seats = []
    for q in range(players):
        e = ExpertPolicy(model_file(model))
        e.start(g, q, int(rng.integers(1 << 62)))
        seats.append(e)
    rows = {k: [] for k in KINDS.values()}

    def record(q, phase, codes, feats, pick):
        if KINDS.get(phase) and len(codes) > 1:
            rows[KINDS[phase]].append(feats[pick])
        return pick
    play_experts(g, seats, [load_model(model_file(model))] * players, record)
    return {k: np.array(v) for k, v in rows.items()}


def test_without_exploration_every_row_is_the_models_own_move():
    own = _models_own_rows("europe", 2, 3, "field")
    calm = generate_outcomes("europe", 2, games=1, seed=3, model="field", epsilon=0.0)
    assert len(own["turns"]) > 20
    for k in KINDS.values():
        np.testing.assert_array_equal(calm[k].X, own[k].reshape(calm[k].X.shape))
    explored = generate_outcomes("europe", 2, games=1, seed=3, model="field", epsilon=0.3)
    n = min(len(own["turns"]), len(explored["turns"].X))
    differ = (explored["turns"].X[:n] != own["turns"][:n]).any(axis=1)
    assert differ.mean() > 0.1


def test_exploration_and_target_are_checked():
    with pytest.raises(ValueError, match="epsilon"):
        generate_outcomes("usa", 2, games=1, epsilon=1.5)
    with pytest.raises(ValueError, match="target"):
        generate_outcomes("usa", 2, games=1, target="points")


def test_the_learn_script_makes_a_playable_model_and_resumes(tmp_path, monkeypatch, capsys):
    import ttrsim

    args = ["--out", str(tmp_path), "--rounds", "2", "--games", "4", "--parts", "usa:2",
            "--trees", "3", "--depth", "2", "--min-leaf", "5"]

    def run():
        monkeypatch.setattr("sys.argv", ["learn_whole_game.py", *args])
        with pytest.raises(SystemExit) as done:
            runpy.run_path(str(SCRIPT), run_name="__main__")
        assert done.value.code == 0
    run()
    log = json.loads((tmp_path / "learn.json").read_text())
    assert [r["step"] for r in log] == ["play", "fit", "play", "fit"]
    assert log[2]["model"].endswith("model-1.json")          # round 2 plays round 1's model
    model = json.loads((tmp_path / "model-2.json").read_text())
    assert model["training"]["learned_from"] == "outcomes"
    assert model["turns"]["fit"]["centred"] is False
    run()                                                     # a rerun redoes nothing
    assert len(json.loads((tmp_path / "learn.json").read_text())) == 4
    res = ttrsim.simulate("usa", [f"expert:model={tmp_path / 'model-2.json'}", "tickets"],
                          games=4, seed=1)
    assert not res.games["truncated"].any()
