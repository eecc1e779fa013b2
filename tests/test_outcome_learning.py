"""Learning from outcomes (docs/expert-history.md, "Learning from outcomes"): every
decision's played candidate labelled by its own seat's final result
(``training.generate_outcomes``), action-value trees fitted to those labels
(``training.fit_outcomes``) and played as an ``expert`` model file."""
import numpy as np
import pytest

from ttrsim._expert import FEATURES, ExpertPolicy, load_model
from ttrsim.game import Game
from ttrsim.runner import simulate
from ttrsim.training import export, fit, fit_outcomes, generate_outcomes, label
from ttrsim.training.labelling import CHUNKS, outcome, play_experts
from ttrsim.training.positions import Positions

F = {name: i for i, name in enumerate(FEATURES)}


def _expected(scores, seat, target):
    """The seat's result, computed here apart from the library."""
    totals = [s["total"] for s in scores]
    if target == "margin":
        return (totals[seat] - max(t for q, t in enumerate(totals) if q != seat)) / 100
    firsts = [q for q, s in enumerate(scores) if s["rank"] == 1]
    return 1 / len(firsts) if seat in firsts else 0.0


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
    # each seat's setup row really is that seat's: the tickets it kept are its own decision,
    # and seat i % 2 decides first only as the deal says; the rows follow the play order
    assert list(seats["setup"][:2]) == [0, 1]


def test_outcome_of_a_tie_is_shared_and_bad_targets_are_refused():
    scores = [{"total": 90, "rank": 1}, {"total": 90, "rank": 1}, {"total": 40, "rank": 3}]
    assert outcome(scores, 0, "win") == 0.5 and outcome(scores, 2, "win") == 0.0
    assert outcome(scores, 2, "margin") == pytest.approx(-0.5)
    with pytest.raises(ValueError, match="target must be one of"):
        outcome(scores, 0, "score")
    with pytest.raises(ValueError, match="epsilon must be within"):
        generate_outcomes("usa", 2, 1, epsilon=1.5)


def test_exploration_plays_other_candidates_than_the_models():
    plain = generate_outcomes("usa", 2, 2, seed=1, epsilon=0.0)["turns"]
    explored = generate_outcomes("usa", 2, 2, seed=1, epsilon=1.0)["turns"]
    # epsilon 0: the model's own moves; epsilon 1: never its pick, so other games
    assert not np.array_equal(plain.X[:20], explored.X[:20])
    # uniform exploration draws tickets far more often than the model itself does
    draws = [int((d.X[:, F["draw_tickets"]] > 0.5).sum()) for d in (plain, explored)]
    assert draws[1] > 2 * draws[0] + 5


def test_same_labels_whatever_the_number_of_workers(monkeypatch):
    monkeypatch.setitem(CHUNKS, "outcomes", 2)
    one = label("outcomes", [("usa", 2, 4)], seed=5, n_jobs=1, progress=False, epsilon=0.2)
    two = label("outcomes", [("usa", 2, 4)], seed=5, n_jobs=2, progress=False, epsilon=0.2)
    for kind in one:
        np.testing.assert_array_equal(one[kind].X, two[kind].X)
        np.testing.assert_array_equal(one[kind].value, two[kind].value)


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


def test_appended_trees_score_the_sum_weighted():
    import json

    from ttrsim.training.model_file import append_trees, model_file, section_from_dict
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
