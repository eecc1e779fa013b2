"""Training the `expert` (ttrsim.training): labelling, fitting, the model file written
from Python, the output directory and the pipeline end to end."""
import json

import numpy as np
import pytest

from helpers import load_script
from ttrsim._expert import FEATURES
from ttrsim.policies import make_policy
from ttrsim.runner import simulate
from expert_models import model_file


def test_train_script_defaults_are_the_apis(tmp_path, monkeypatch):
    """scripts/train_expert.py without options trains with train()'s own defaults, so
    the documented command and the Python API make the same model (a default changed in
    one place only would make the shipped model irreproducible from the other)."""
    import inspect

    from ttrsim.training import train

    script = load_script("train_expert")
    seen = {}
    monkeypatch.setattr(script, "train", lambda out, **kw: seen.update(kw) or [])
    assert script.main(["--out", str(tmp_path)]) == 0
    defaults = {k: v.default for k, v in inspect.signature(train).parameters.items()}
    assert seen and {k: defaults[k] for k in seen} == seen


def test_first_round_labels_come_from_the_search_over_tickets_rollouts(tmp_path):
    """Round 1 labels with the search over `tickets` rollouts (the search's default until
    ttrsim 0.2, which rolls out with the shipped expert): a model trained from a fresh
    clone must not learn from the model it replaces. Later rounds roll out with the
    previous round's model, the other seats playing it."""
    from ttrsim.training.labelling import labelling_specs

    spec, other = labelling_specs("search:playouts=8", None)
    assert (make_policy(spec, None).params["rollout"], other.text) == ("tickets", "tickets")
    path, _ = model_file(tmp_path, "blind")
    spec, other = labelling_specs("search:playouts=8", path)
    assert make_policy(spec, None).params["rollout"] == other.text == f"expert:model={path.resolve()}"
    assert make_policy(spec, None).params["playouts"] == 8
    assert spec.params["rollout"] == other          # a value, not a text to parse again


def test_endgame_labels_of_the_wide_or_the_played_candidate_set():
    """generate_endgame labels the search's whole turn set by default (as the shipped
    trees were trained) and, with wide=False, the four candidates expert plays by
    default: no face-up draw or long claim beyond its first two proposals."""
    from ttrsim.training import generate_endgame
    from ttrsim.training.positions import decisions

    kw = dict(board="newyork", players=2, games=2, seed=3, playouts=2, max_trains=45)
    wide, narrow = generate_endgame(**kw), generate_endgame(**kw, wide=False)
    assert max(len(r) for r in decisions(wide)) > 4
    assert max(len(r) for r in decisions(narrow)) <= 4 and narrow.decisions >= 10
    assert (narrow.X[:, FEATURES.index("longest_claim")] == 0).all()
    assert (wide.X[:, FEATURES.index("longest_claim")] > 0).any()


@pytest.mark.slow
def test_training_end_to_end_on_a_tiny_budget(tmp_path):
    pytest.importorskip("sklearn")
    from ttrsim.training import strength, train

    kw = dict(rounds=2, boards=("europe",), players=(2,), positions=300, playouts=32,
              endgame_players=(2,), endgame_games=10, endgame_playouts=32, calib_games=30,
              final_calib_games=40, reaches=(20,), midgame_games=3, midgame_trains=20,
              midgame_playouts=8, midgame_trees=10, midgame_depth=3, midgame_min_leaf=10,
              midgame_reaches=(45,), eval_games=0, setup_trees=30,
              turn_trees=10, min_leaf=10, seed=1, progress=False)
    rec = train(tmp_path / "a", **kw)
    assert [r["round"] for r in rec] == [1, 2]
    # the last round labels whole games' turns from 20 trains on too, fits the turn trees
    # on every labelled turn and chooses their reach with their margin, by play at 2 and
    # 4 players: the model written is the best-playing pair of those tried (the reach
    # labelled, 20, among them); the first round keeps the labelled reach (12)
    assert rec[0]["turn_max_trains"] == 12 and "calibration" not in rec[0]
    assert "midgame_decisions" not in rec[0] and rec[1]["midgame_decisions"] > 10
    assert (tmp_path / "a" / "midgame-round2.npz").exists()
    # a second whole-game pass (the default) labels games of the first pass's model
    assert rec[1]["pass2_decisions"] > 10 and "pass3_decisions" not in rec[1]
    assert (tmp_path / "a" / "midgame-round2-pass2.npz").exists()
    assert json.loads((tmp_path / "a" / "expert-round2.json").read_text())["training"][
        "midgame_passes"] == 2
    assert rec[1]["calibration"]["players"] == [2, 4]
    assert rec[1]["calibration"]["labelled_max_trains"] == 20
    tried = rec[1]["calibration"]["scores"]
    assert len(tried) == 2 * 6 and {k.split("/")[0] for k in tried} == {"20", "45"}
    chosen = f"{rec[1]['turn_max_trains']}/{rec[1]['turn_margin']:g}"
    assert tried[chosen] == max(tried.values())
    written = json.loads((tmp_path / "a" / "expert-round2.json").read_text())["turns"]
    assert (written["max_trains"], written["margin"]) == (rec[1]["turn_max_trains"],
                                                          rec[1]["turn_margin"])
    assert "rollout=expert" in rec[1]["labels"] and "rollout=tickets" in rec[0]["labels"]
    assert rec[1]["setup_positions"] == 450 and rec[0]["setup_positions"] == 300
    assert rec[1]["endgame_decisions"] > rec[0]["endgame_decisions"] > 30
    # held-out keep sets: the model's picks are worth more (by the search's values) than
    # tickets' own, and it agrees with the search's best more often than tickets does
    assert rec[1]["setup_model_gain"] > 0.02
    assert rec[1]["setup_agreement"] > rec[1]["setup_agreement_tickets"]
    train(tmp_path / "b", **dict(kw, n_jobs=2))       # same seed, same model files
    for r in (1, 2):
        a = (tmp_path / "a" / f"expert-round{r}.json").read_bytes()
        assert a == (tmp_path / "b" / f"expert-round{r}.json").read_bytes()
    # saved positions are reused only for the same arguments: fewer deals label anew
    again = train(tmp_path / "b", **dict(kw, rounds=1, positions=120, n_jobs=2))
    assert again[0]["setup_positions"] == 120
    # ... and for the same features: a saved file whose key names other features (labels
    # of another model format) is labelled anew, one with this key is reused as it is
    from ttrsim.training.positions import load_positions, save_positions, subset
    path = tmp_path / "b" / "setup-round1.npz"
    p, key = load_positions(path, with_key=True)
    stale = json.loads(key)
    assert stale[-1] == list(FEATURES)
    for k, want in (([*stale[:-1], [f"old_{f}" for f in FEATURES]], 120), (stale, 60)):
        save_positions(subset(p, p.group < 60), path, json.dumps(k, default=str))
        got = train(tmp_path / "b", **dict(kw, rounds=1, positions=120, n_jobs=2))
        assert got[0]["setup_positions"] == want
    s = strength(tmp_path / "a" / "expert-round2.json", "europe", 2, 100, seed=3,
                 opponent="random")
    assert s["win_share"] > 0.9 and s["games"] == 100


def test_training_directory_goes_through_the_one_resume_routine(tmp_path, monkeypatch):
    """train's output directory is opened by prepare_out: a directory holding a run or
    other files is refused; labelled positions are reused only when marked done and
    labelled under the same key (a file without its done marker, as a crash between the
    write and the marker leaves it, or under another key is labelled again); writes are
    atomic (no .tmp left)."""
    import ttrsim.training.rounds as rounds
    from ttrsim.training.positions import Positions, load_positions

    calls = []

    def fake_label(kind, parts, **kw):
        calls.append((kind, kw.get("seed")))
        rows = 4
        return Positions(np.zeros((rows, len(FEATURES)), np.float32),
                         np.arange(rows, dtype=np.float32), np.eye(1, rows, 0, np.int8)[0],
                         np.zeros(rows, np.int64), np.zeros(rows, np.int64), ["europe"], 0.5)
    monkeypatch.setattr(rounds, "label", fake_label)
    manifest = {"kind": "expert_training", "arguments": {"positions": 1}}
    store = rounds.TrainingDir(tmp_path / "t", manifest, progress=False)
    p = store.labelled("setup-round1", "setup", [("europe", 2, 4)], seed=1)
    assert len(calls) == 1 and (tmp_path / "t" / "done" / "setup-round1").exists()
    again = rounds.TrainingDir(tmp_path / "t", dict(manifest, arguments={"positions": 2}),
                               progress=False)
    q = again.labelled("setup-round1", "setup", [("europe", 2, 4)], seed=1)
    assert len(calls) == 1 and np.array_equal(p.value, q.value)     # reused
    again.labelled("setup-round1", "setup", [("europe", 2, 4)], seed=2)
    assert len(calls) == 2                                         # another key: anew
    (tmp_path / "t" / "done" / "setup-round1").unlink()
    rounds.TrainingDir(tmp_path / "t", manifest, progress=False).labelled(
        "setup-round1", "setup", [("europe", 2, 4)], seed=2)
    assert len(calls) == 3                                         # not marked done: anew
    assert load_positions(tmp_path / "t" / "setup-round1.npz").decisions == 1
    assert not list((tmp_path / "t").rglob("*.tmp"))
    assert json.loads((tmp_path / "t" / "manifest.json").read_text())["complete"] is False
    # a directory holding a simulation run, or anything else, is not a training directory
    simulate("europe", 2, games=4, seed=0, out=tmp_path / "run")
    with pytest.raises(ValueError, match="not an expert training"):
        rounds.TrainingDir(tmp_path / "run", manifest)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="not empty"):
        rounds.TrainingDir(tmp_path / "other", manifest)


@pytest.mark.parametrize("histogram", [False, True])
def test_fit_ranks_within_decisions_whatever_each_decisions_reference(histogram):
    """fit learns each row relative to its decision's mean: adding a different constant
    to every value of each decision (another reference move) gives the same trees; a
    wrong centring (over all rows, or none) would not. Both scikit-learn regressors."""
    pytest.importorskip("sklearn")
    from ttrsim.training import Positions, fit

    rng = np.random.default_rng(0)
    n_dec, per = 300, 4
    X = rng.normal(size=(n_dec * per, len(FEATURES))).astype(np.float32)
    group = np.repeat(np.arange(n_dec), per)
    value = (X[:, 4] + 0.1 * rng.normal(size=len(X))).astype(np.float32)
    value[5] = np.nan                              # a row the search did not value
    shifted = (value + rng.normal(scale=5.0, size=n_dec)[group]).astype(np.float32)

    def trees(v):
        p = Positions(X, v, np.zeros(len(X), np.int8), group, group)
        t = fit(p, trees=5, depth=3, min_leaf=5, histogram=histogram)["trees"]
        return t["feature"], np.round(t["value"], 4).tolist()
    a, b = trees(value), trees(shifted)
    assert a[0] == b[0] and np.allclose(a[1], b[1], atol=1e-3)
    assert set(a[0]) - {-1} == {4}                 # it found the feature that ranks


def test_histogram_trees_export_scores_as_scikit_learn_predicts():
    """The histogram regressor's trees, laid out in a model file, score unseen rows as
    its predict() does, rows exactly on a split threshold included (a test of ``<``
    where scikit-learn tests ``<=``, a child swapped or a leaf value without the
    learning rate would differ)."""
    pytest.importorskip("sklearn")
    from sklearn.ensemble import HistGradientBoostingRegressor

    from ttrsim._expert import section_from_dict
    from ttrsim.training.model_file import hist_trees

    rng = np.random.default_rng(3)
    X = rng.integers(0, 6, size=(4000, len(FEATURES))).astype(np.float32)
    X[:, 7] = rng.normal(size=len(X))
    y = X[:, 3] * X[:, 7] - 0.5 * X[:, 11] + 0.1 * rng.normal(size=len(X))
    reg = HistGradientBoostingRegressor(max_iter=20, max_depth=4, max_leaf_nodes=None,
                                        learning_rate=0.3, min_samples_leaf=20,
                                        early_stopping=False, random_state=0).fit(X, y)
    trees = hist_trees(reg)
    sec = section_from_dict({"trees": trees, "base": 0.0, "margin": 0.0})
    new = rng.integers(0, 6, size=(3000, len(FEATURES))).astype(np.float32)
    new[:, 7] = rng.normal(size=len(new))
    inner = [i for i, f in enumerate(trees["feature"]) if f >= 0]
    for k, i in enumerate(inner[:500]):          # on the thresholds themselves
        new[k, trees["feature"][i]] = np.float32(trees["threshold"][i])
    want = reg.predict(new) - reg._baseline_prediction.ravel()[0]
    assert np.allclose(sec.predict(new), want, atol=1e-9)
    assert len(trees["roots"]) == 20 and set(trees["feature"]) - {-1} >= {3, 7, 11}


def test_float32_rows_split_on_float64_thresholds_as_scikit_learn_does():
    """A threshold that float32 cannot hold splits every float32 feature value as
    scikit-learn's float64 comparison does, in predict() and in the compiled choice.
    Thresholds that round up (0.1), down (0.3) and huge ones; rows on the rounded
    threshold and its float32 neighbours (thresholds stored as float32 by a plain cast
    would send the row on 0.1's float32 left)."""
    from ttrsim._expert import section_from_dict

    for thr in (0.1, 0.3, 1 / 3, 2.5, -0.7, 1e39, -1e39, 2.0 ** -149 / 3):
        sec = section_from_dict({"trees": {"feature": [5, -1, -1], "threshold": [thr, 0, 0],
                                           "left": [1, -1, -1], "right": [2, -1, -1],
                                           "value": [0.0, 0.0, 1.0], "roots": [0]},
                                 "base": 0.0, "margin": 0.0})
        f = np.float32(thr) if abs(thr) < 3e38 else np.float32(np.sign(thr) * 3.4e38)
        xs = [np.nextafter(f, np.float32(-np.inf)), f, np.nextafter(f, np.float32(np.inf)),
              np.float32(np.inf), np.float32(-np.inf), np.float32(0.0)]
        X = np.zeros((len(xs), len(FEATURES)), dtype=np.float32)
        X[:, 5] = xs
        want = np.array([float(x) > thr for x in xs], dtype=float)
        assert sec.predict(X).tolist() == want.tolist(), thr
        for k in range(len(xs)):           # the compiled choice between a row and a zero row
            pair = np.stack([np.zeros(len(FEATURES), np.float32), X[k]])
            pair[0, 5] = -np.inf
            assert sec.pick(pair) == int(want[k]), (thr, xs[k])


def test_labels_of_many_tasks_join_as_chained_concats():
    """label() puts thousands of tasks' positions together in one copy; ids of decisions
    and games must run on as chained ``concat``s make them, empty parts included."""
    from ttrsim.training.positions import Positions, join

    rng = np.random.default_rng(1)

    def part(decisions):
        rows = decisions * 3
        return Positions(rng.normal(size=(rows, len(FEATURES))).astype(np.float32),
                         rng.normal(size=rows).astype(np.float32), np.zeros(rows, np.int8),
                         np.repeat(np.arange(decisions), 3), np.repeat(np.arange(decisions) // 2, 3),
                         ["europe"] * decisions, 1.5)
    parts = [part(4), part(0), part(3), part(1)]
    chained = parts[0]
    for p in parts[1:]:
        chained = chained.concat(p)
    joined = join(parts)
    for f in ("X", "value", "chosen", "group", "game"):
        assert np.array_equal(getattr(joined, f), getattr(chained, f))
    assert joined.boards == chained.boards and joined.cpu_seconds == 6.0
    assert joined.decisions == 8
