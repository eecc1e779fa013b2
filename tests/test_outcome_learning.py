"""Learning from outcomes (docs/expert-history.md, "Learning from outcomes"): the compiled
``expert`` recording the candidate it plays (``ExpertPolicy(record=1, epsilon=...)``),
every such decision labelled by its own seat's final result
(``training.generate_outcomes``, through the batch loop), action-value trees fitted to
those labels (``training.fit_outcomes``) and played as an ``expert`` model file, and the
resumable command that iterates play and fit (scripts/learn_whole_game.py)."""
from __future__ import annotations

import copy
import hashlib
import json
import pickle
import runpy
from pathlib import Path

import numpy as np
import pytest

from ttrsim._expert import FEATURES, RECORD_KINDS, ExpertPolicy, load_model, model_file
from ttrsim.batches import DEFAULT_MAX_TURNS, game_seeds, play_batch
from ttrsim.game import Game, compile_board
from ttrsim.maps import resolve_board
from ttrsim.runner import simulate
from ttrsim.training import export, fit, fit_outcomes, generate_outcomes, label
from ttrsim.training.labelling import CHUNKS, outcome, outcome_values, play_experts
from ttrsim.training.positions import Positions

F = {name: i for i, name in enumerate(FEATURES)}
SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "learn_whole_game.py"
M64 = 2 ** 64 - 1


def _expected(scores, seat, target):
    """The seat's result, computed here apart from the library."""
    totals = [s["total"] for s in scores]
    if target == "margin":
        return (totals[seat] - max(t for q, t in enumerate(totals) if q != seat)) / 100
    firsts = [q for q, s in enumerate(scores) if s["rank"] == 1]
    return 1 / len(firsts) if seat in firsts else 0.0


def _digest(out):
    return hashlib.sha256(np.ascontiguousarray(out["scores"]).tobytes()
                          + np.ascontiguousarray(out["stats"]).tobytes()).hexdigest()[:16]


def _batch(board, n, model, games=6, key=12345, **kw):
    seats = [ExpertPolicy(model_file(model), **kw) for _ in range(n)]
    out = play_batch(compile_board(resolve_board(board)), n, seats, game_seeds(key, games, 0),
                     0, True, True)
    return out, seats


# --- the compiled recording ----------------------------------------------------------

@pytest.mark.parametrize("board, n, model, want", [
    ("usa-mega", 4, "whole", "caa7f45802c1dbe9"), ("usa-mega", 2, "field", "6853caa920d4dd31"),
    ("europe", 3, "whole", "bb3318df0c12ad46")])
def test_recording_without_exploration_plays_the_games_expert_played_before(board, n, model,
                                                                             want):
    """Digests of these games recorded before ExpertPolicy could record: recording off,
    and on with epsilon 0, play them unchanged."""
    plain, seats = _batch(board, n, model)
    assert _digest(plain) == want
    assert all(len(s.recorded()["game"]) == 0 for s in seats)      # nothing kept when off
    rec, seats = _batch(board, n, model, record=1)
    assert _digest(rec) == want
    assert [s.games_started for s in seats] == [6] * n
    got = seats[0].recorded()
    assert set(np.unique(got["game"])) == set(range(6)) and len(got["X"]) > 50
    explored, _ = _batch(board, n, model, record=1, epsilon=0.3)
    assert _digest(explored) != want


def test_record_and_epsilon_are_checked_and_kept_by_copies():
    with pytest.raises(ValueError, match="epsilon"):
        ExpertPolicy(epsilon=0.1)                       # exploration needs recording
    with pytest.raises(ValueError, match="epsilon"):
        ExpertPolicy(record=1, epsilon=1.5)
    with pytest.raises(ValueError, match="record"):
        ExpertPolicy(record=2)
    e = ExpertPolicy(record=1, epsilon=0.25)
    for other in (copy.copy(e), pickle.loads(pickle.dumps(e))):
        assert other.record and other.epsilon == 0.25 and len(other.recorded()["X"]) == 0
    assert "record" not in ExpertPolicy().params          # a plain expert's parameters as before


def test_rows_are_taken_once_and_a_games_rows_do_not_depend_on_its_batch():
    """The exploration stream is seeded by each game's start: game 3 played alone gives
    the rows it gives as the fourth game of a batch."""
    _, seats = _batch("usa", 2, "whole", games=5, key=9, record=1, epsilon=0.3)
    cb = compile_board(resolve_board("usa"))
    alone = [ExpertPolicy(model_file("whole"), record=1, epsilon=0.3) for _ in range(2)]
    # seat rotation as game 3 of the batch: slot k plays seat (k - 3) % 2
    play_batch(cb, 2, alone, game_seeds(9, 5, 0)[3:4].copy(), 3, True, True)
    for s, a in zip(seats, alone):
        batch = s.recorded()
        mine = a.recorded(clear=True)
        at3 = batch["game"] == 3
        assert at3.sum() > 10
        np.testing.assert_array_equal(batch["X"][at3], mine["X"])
        np.testing.assert_array_equal(batch["seat"][at3], mine["seat"])
        assert len(a.recorded()["X"]) == 0                 # cleared
    n = len(seats[0].recorded()["X"])
    assert n > 0 and len(seats[0].recorded()["X"]) == n     # reading keeps them


def _splitmix(x):
    x = (x + 0x9E3779B97F4A7C15) & M64
    z = x
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return x, z ^ (z >> 31)


def _replayed(board, players, seed, model, epsilon):
    """Game 0 of ``generate_outcomes(board, players, 1, seed, model=model)`` replayed
    decision by decision in Python: its deal and the seats' start seeds as the batch loop
    derives them, the moves those it played (``play_recorded``), each seat's candidates
    listed by an ExpertPolicy of its own (``candidates``) and the model's pick taken by
    ``TreeModel.pick``. Returns per decision the model decides among more than one
    candidate (seat, kind, features of the move played, whether it is the model's
    pick), and the final scores."""
    from ttrsim._batch import play_recorded

    key = int(np.random.SeedSequence([seed, players, 0x0C7]).generate_state(1, np.uint64)[0])
    gseed = int(game_seeds(key, 1, 0)[0])
    cb = compile_board(resolve_board(board))
    players_ = [ExpertPolicy(model_file(model), record=1, epsilon=epsilon) for _ in range(players)]
    res = play_recorded(cb, players, players_, np.uint64(gseed), 0, False, DEFAULT_MAX_TURNS)
    g = Game(board, players, seed=gseed)
    shadows, x = [], gseed
    for q in range(players):
        x, start = _splitmix(x)
        e = ExpertPolicy(model_file(model))
        e.start(g, q, start)
        shadows.append(e)
    m = load_model(model_file(model))
    rows = []
    for code, seat in zip(res["actions"], res["seats"]):
        assert seat == g.current_player
        phase, fewest = g.phase, min(p["trains"] for p in g.state()["players"])
        codes, X = shadows[seat].candidates(g)
        sec = {"setup_tickets": m.setup, "keep_tickets": m.keep,
               "turn": m.turns if m.turns is not None and fewest <= m.turns.max_trains
               else None}.get(phase)
        if sec is not None and len(codes) > 1:
            played = list(codes).index(int(code))
            rows.append((seat, {"setup_tickets": "setup", "keep_tickets": "keep"}.get(
                phase, "turns"), X[played], played == sec.pick(X)))
        g.apply(int(code))
    return rows, g.scores()


def _in_play_order(data, seats):
    """generate_outcomes' rows of every kind, back in play order (their group ids)."""
    rows = [(int(gr), k, x, int(q)) for k in RECORD_KINDS
            for gr, x, q in zip(data[k].group, data[k].X, seats[k])]
    return sorted(rows, key=lambda r: r[0])


@pytest.mark.parametrize("model, players, board", [("whole", 2, "usa-mega"),
                                                   ("field", 3, "usa"), ("whole", 4, "europe")])
def test_rows_are_the_decisions_the_model_makes_with_the_move_played(model, players, board):
    """Without exploration every row is the model's pick, one row per decision it makes
    among more than one candidate (a format-4 model, `field`, with every feature
    listed as ``candidates`` lists them); with epsilon 1 none is."""
    for epsilon in (0.0, 1.0):
        want, final = _replayed(board, players, 5, model, epsilon)
        data, seats, finals = generate_outcomes(board, players, 1, seed=5, model=model,
                                                epsilon=epsilon, details=True)
        got = _in_play_order(data, seats)
        assert len(got) == len(want) > 30
        assert [r[1] for r in got] == [w[1] for w in want]
        assert [r[3] for r in got] == [w[0] for w in want]
        np.testing.assert_array_equal(np.array([r[2] for r in got]),
                                      np.array([w[2] for w in want]))
        picks = [w[3] for w in want]
        assert all(picks) if epsilon == 0 else not any(picks)
        assert [s["total"] for s in finals[0]] == [s["total"] for s in final]
        for k in RECORD_KINDS:
            np.testing.assert_allclose(
                data[k].value, [_expected(final, q, "margin") for q in seats[k]], atol=1e-6)
    # a format-4 model makes no keep (its keeps are tickets' own): no keep row
    if model == "field":
        assert len(data["keep"].X) == 0


def test_exploration_plays_another_candidate_at_about_epsilon_of_the_decisions():
    want, _ = _replayed("usa", 2, 8, "whole", 0.3)
    more, _ = _replayed("usa", 2, 9, "whole", 0.3)
    other = [not w[3] for w in want + more]
    # about 0.3 (not 0 or 1, not 0.3 twice over): 4 standard deviations either side
    sd = (0.3 * 0.7 / len(other)) ** 0.5
    assert abs(np.mean(other) - 0.3) < 4 * sd


# --- the labels ----------------------------------------------------------------------

@pytest.mark.parametrize("target", ["win", "margin"])
def test_each_row_is_labelled_by_its_own_seats_final_result(target):
    data, seats, finals = generate_outcomes("usa", 2, 4, seed=3, target=target, details=True)
    assert data["turns"].decisions > 50 and data["setup"].decisions == 2 * 4
    for kind, rows in data.items():
        want = [_expected(finals[g], q, target) for g, q in zip(rows.game, seats[kind])]
        np.testing.assert_allclose(rows.value, want, atol=1e-6)
        assert (rows.chosen == 1).all() and len(np.unique(rows.group)) == len(rows.group)
    turns = data["turns"]
    for g in range(4):
        # both seats' results appear in a game: labelling every row with one seat's result
        # (seat 0's, or the last mover's) would give a game's rows one value
        vals = set(np.round(turns.value[turns.game == g], 6))
        assert len(vals) == 2
        if target == "margin":      # two players: one's margin is the other's loss
            assert sorted(vals)[0] == pytest.approx(-sorted(vals)[1])
        else:                       # results, not a search's values: wins and losses only
            assert vals <= {0.0, 0.5, 1.0}
    # the rows follow the play order: each seat's initial tickets in seat order
    assert list(seats["setup"][:2]) == [0, 1]
    again = generate_outcomes("usa", 2, 4, seed=3, target=target)
    for kind in data:
        np.testing.assert_array_equal(data[kind].X, again[kind].X)


def test_outcome_of_a_tie_is_shared_and_bad_arguments_are_refused():
    scores = [{"total": 90, "rank": 1}, {"total": 90, "rank": 1}, {"total": 40, "rank": 3}]
    assert outcome(scores, 0, "win") == 0.5 and outcome(scores, 2, "win") == 0.0
    assert outcome(scores, 0, "margin") == 0.0
    assert outcome(scores, 2, "margin") == pytest.approx(-0.5)
    assert outcome([{"total": 150, "rank": 1}, {"total": 100, "rank": 2}], 0) == 0.5
    for target in ("win", "margin"):
        np.testing.assert_allclose(
            outcome_values([[90, 90, 40]], [[1, 1, 3]], target)[0],
            [outcome(scores, q, target) for q in range(3)])
    with pytest.raises(ValueError, match="target must be one of"):
        outcome(scores, 0, "score")
    with pytest.raises(ValueError, match="epsilon must be within"):
        generate_outcomes("usa", 2, 1, epsilon=1.5)
    with pytest.raises(ValueError, match="target"):
        generate_outcomes("usa", 2, 1, target="points")


def test_outcome_values_of_random_games_match_outcome():
    rng = np.random.default_rng(4)
    for n in (2, 3, 5):
        totals = rng.integers(-50, 200, (40, n))
        totals[:5, 1] = totals[:5, 0]                   # ties for first or elsewhere
        ranks = np.array([[1 + int((t > t[q]).sum()) for q in range(n)] for t in totals])
        for target in ("win", "margin"):
            got = outcome_values(totals, ranks, target)
            want = [[outcome([{"total": int(t), "rank": int(r)} for t, r in zip(tt, rr)], q,
                             target) for q in range(n)] for tt, rr in zip(totals, ranks)]
            np.testing.assert_allclose(got, want)


def test_exploration_plays_other_candidates_than_the_models():
    plain = generate_outcomes("usa", 2, 2, seed=1, epsilon=0.0)["turns"]
    explored = generate_outcomes("usa", 2, 2, seed=1, epsilon=1.0)["turns"]
    assert not np.array_equal(plain.X[:20], explored.X[:20])
    # uniform exploration draws tickets far more often than the model itself does
    draws = [int((d.X[:, F["draw_tickets"]] > 0.5).sum()) for d in (plain, explored)]
    assert draws[1] > 2 * draws[0] + 5


def test_same_labels_whatever_the_number_of_workers(monkeypatch):
    monkeypatch.setitem(CHUNKS, "outcomes", 3)
    kw = dict(seed=5, progress=False, epsilon=0.2, field=("field", "whole"))
    one = label("outcomes", [("usa", 2, 7), ("europe", 3, 4)], n_jobs=1, **kw)
    two = label("outcomes", [("usa", 2, 7), ("europe", 3, 4)], n_jobs=2, **kw)
    for kind in one:
        assert len(one[kind].X) > 0 or kind == "keep"
        np.testing.assert_array_equal(one[kind].X, two[kind].X)
        np.testing.assert_array_equal(one[kind].value, two[kind].value)
        np.testing.assert_array_equal(one[kind].game, two[kind].game)


def test_with_a_field_the_learning_seat_moves_and_the_others_take_the_field_in_turn():
    """Seat i % players plays the model: in 2-player games with the field ("field",) the
    learning seat's rows are the only keep rows (`field` has no keep trees)."""
    data, seats, _ = generate_outcomes("usa", 2, 6, seed=2, epsilon=0.5, field=("field",),
                                       details=True)
    keep = data["keep"]
    assert len(keep.X) > 0
    np.testing.assert_array_equal(seats["keep"], keep.game % 2)


# --- fitting and playing what was learned ---------------------------------------------

def test_fitted_values_follow_the_outcomes_not_the_decisions_mean():
    rng = np.random.default_rng(0)
    X = rng.random((600, len(FEATURES))).astype(np.float32)
    value = (X[:, F["draw_tickets"]] > 0.5).astype(np.float32)   # drawing wins
    n = np.arange(600)
    data = Positions(X, value, np.ones(600, np.int8), n, n // 30, ["usa"] * 600)
    section = fit(data, 0, trees=10, depth=2, min_leaf=10, histogram=True, centre=False)
    from ttrsim.training.model_file import as_section
    pred = as_section(section).predict(X)
    assert pred[value == 1].min() > pred[value == 0].max()
    # uncentred, the section predicts the outcome itself (its baseline kept): about 1 and 0
    assert abs(pred[value == 1].mean() - 1) < 0.2 and abs(pred[value == 0].mean()) < 0.2
    # centred, as the search's labels are, one row a decision has nothing left to learn
    with pytest.raises(ValueError, match="no decision to learn from"):
        fit(data, 0, trees=10, depth=2, min_leaf=10, histogram=True)


def test_a_model_learned_from_outcomes_plays_only_legal_moves(tmp_path):
    data = generate_outcomes("usa", 2, 6, seed=2, epsilon=0.2)
    model = fit_outcomes(data, 0, trees=5, depth=3, min_leaf=5)
    assert model["turns"]["max_trains"] == 1000 and model["turns"]["fit"]["centred"] is False
    assert model["training"]["outcomes"]["rows"]["setup"] == 12
    path = export(model, tmp_path / "learned.json")
    learned = load_model(path)
    g = Game("usa-mega", 2, seed=4)
    seats = [ExpertPolicy(str(path)) for _ in range(2)]
    for q, e in enumerate(seats):
        e.start(g, q, 7 + q)

    def legal(q, phase, codes, feats, pick):
        assert int(codes[pick]) in set(int(c) for c in g.legal_action_codes())
        return pick
    play_experts(g, seats, [learned, learned], legal)
    assert g.is_over()
    run = simulate("europe", [f"expert:model={path}", "expert:model=field"], games=4, seed=0,
                   summary=True)
    assert run.summary(by="policy")["seat_games"].sum() == 8


def test_fit_outcomes_holds_out_games_and_reports_their_error():
    data = generate_outcomes("usa", 2, 14, seed=6, epsilon=0.2)
    errors = {}
    model = fit_outcomes(data, 0, trees=5, depth=3, min_leaf=5, hold_out=7, errors=errors)
    fitted = model["turns"]["fit"]["rows"]
    held = int((data["turns"].game % 7 == 0).sum())
    assert 0 < held and fitted == len(data["turns"].value) - held
    mse, var = errors["turns"]
    assert np.isfinite(mse) and var > 0


def test_appended_trees_score_the_sum_weighted():
    from ttrsim.training.model_file import append_trees, section_from_dict
    whole = json.loads(open(model_file("whole")).read())["turns"]
    rng = np.random.default_rng(1)
    X = rng.random((300, len(FEATURES))).astype(np.float32)
    value = X[:, F["draw_tickets"]] * 2 - X[:, F["hand"]]
    n = np.arange(300)
    more = fit(Positions(X, value.astype(np.float32), np.ones(300, np.int8), n, n, []), 0,
               trees=5, depth=2, min_leaf=5, histogram=True, centre=False)
    both = append_trees(whole["trees"], more["trees"], 0.5)
    got = section_from_dict({"trees": both, "base": 0.0, "margin": 0.0}).predict(X)
    a = section_from_dict({"trees": whole["trees"], "base": 0.0, "margin": 0.0}).predict(X)
    b = section_from_dict({"trees": more["trees"], "base": 0.0, "margin": 0.0}).predict(X)
    np.testing.assert_allclose(got, a + 0.5 * b, atol=1e-6)


def test_the_learn_script_makes_a_playable_model_and_resumes(tmp_path, monkeypatch):
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
    assert model["turns"]["fit"]["centred"] is False and model["turns"]["max_trains"] == 1000
    assert "turns" in log[1]["held_out_mse_and_variance"]
    run()                                                     # a rerun redoes nothing
    assert len(json.loads((tmp_path / "learn.json").read_text())) == 4
    res = ttrsim.simulate("usa", [f"expert:model={tmp_path / 'model-2.json'}", "tickets"],
                          games=4, seed=1)
    assert not res.games["truncated"].any()
