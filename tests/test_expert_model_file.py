"""The `expert` model file: its errors, what each section decides, the compiled choice
against the Python scores, and the model files named by a run."""
import json

import numpy as np
import pytest

import ttrsim
from helpers import midgame
from ttrsim import Game
from ttrsim._expert import DEFAULT_MODEL, FEATURES, ExpertPolicy, ModelFileError, load_model
from ttrsim._policies import decide
from ttrsim.policies import make_policy
from ttrsim.runner import simulate
from expert_models import model_file, random_model


# --- the model file -------------------------------------------------------------------

def test_missing_or_corrupt_model_file_is_a_clear_error_naming_it(tmp_path):
    missing = tmp_path / "nope.json"
    with pytest.raises(ModelFileError, match="nope.json.*not found"):
        make_policy(f"expert:model={missing}", None)
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ModelFileError, match="bad.json.*JSON"):
        make_policy(f"expert:model={bad}", None)
    path, d = model_file(tmp_path, "blind", "feat.json")
    for change, why in ((lambda m: m.update(features=m["features"][:-1]), "feature list"),
                        (lambda m: m.update(format="other"), "not a ttrsim expert model"),
                        (lambda m: m.update(version=99), "version"),
                        (lambda m: m["setup"]["trees"].update(left=[0, -1, -1]), "children"),
                        (lambda m: m["turns"]["trees"].update(feature=[999, -1, -1]), "feature"),
                        (lambda m: m["setup"]["trees"].pop("value"), "malformed"),
                        (lambda m: m["turns"]["trees"].update(roots=[5]), "root")):
            m = json.loads(json.dumps(d))
            change(m)
            path.write_text(json.dumps(m))
            with pytest.raises(ModelFileError, match=f"feat.json.*{why}"):
                load_model(path)
    assert isinstance(ModelFileError("x"), ValueError)


def test_model_file_sections_are_checked(tmp_path):
    path, d = model_file(tmp_path, "blind", "sec.json")
    for change, why in ((lambda m: m.pop("setup"), "no 'setup' section"),
                        (lambda m: m.update(turns=[1, 2]), "'turns' must be"),
                        (lambda m: m["turns"]["trees"].update(threshold=[float("nan"), 0, 0]),
                         "turns: a threshold"),
                        (lambda m: m["setup"].pop("base"), "setup: missing")):
        m = json.loads(json.dumps(d))
        change(m)
        path.write_text(json.dumps(m))
        with pytest.raises(ModelFileError, match=f"sec.json.*{why}"):
            load_model(path)


def test_shipped_model_loads_and_is_trained():
    m = load_model()
    assert m.setup.n_trees_ >= 10 and m.path.endswith(DEFAULT_MODEL)
    assert m.meta["round"] >= 2 and "rollout=expert" in m.meta["labels"]
    # docs/expert-history.md: the shipped turn trees were refitted on whole-game labels (a
    # second pass: games of the first pass's model) and decide every turn (no board
    # starts with more than 45 trains)
    assert m.meta["midgame_trains"] == 30 and m.turns.max_trains >= 45
    assert m.meta["midgame_passes"] == 2


# --- what each section decides --------------------------------------------------------

def test_setup_section_decides_initial_tickets_and_the_rest_is_tickets(tmp_path):
    """A setup section that prefers tickets' own choice makes expert play tickets' games
    exactly (turns, second draws, tunnels and drawn tickets are tickets' own when there
    is no turn section); one that prefers keeping many tickets keeps every ticket offered
    at setup, and nothing else changes until then."""
    same, _ = model_file(tmp_path, "blind", "same.json", setup="is_tickets", turns=False)
    kw = dict(games=60, seed=3)
    for board, n in (("europe", 2), ("usa", 4), ("newyork", 3)):
        a = simulate(board, [f"expert:model={same}"] + ["tickets"] * (n - 1), **kw)
        b = simulate(board, ["tickets#x"] + ["tickets"] * (n - 1), **kw)
        np.testing.assert_array_equal(a.games["score"].to_numpy(), b.games["score"].to_numpy())
    many, _ = model_file(tmp_path, "blind", "many.json", setup="most_kept", turns=False)
    for board in ("usa", "europe", "newyork"):
        for seed in range(5):
            g = Game(board, 2, seed=seed)
            offered = g.state()["players"][0]["pending"]
            act = ttrsim.actions.Action.decode(
                int(decide(make_policy(f"expert:model={many}", g.board), g, seed=1)), g.board)
            assert act.kind == "keep" and bin(act.mask).count("1") == len(offered)


def test_reach_moves_where_the_turn_trees_take_over(tmp_path):
    """``expert:reach=R`` plays exactly the games of a model file whose turn section has
    ``max_trains`` R, whatever the file's own reach (the parameter ignored, or the file's
    reach still tested, would differ); without it the file's reach holds."""
    src = json.loads(random_model(tmp_path, 11).read_text())
    files = {}
    for r in (12, 45):
        files[r] = tmp_path / f"reach{r}.json"
        files[r].write_text(json.dumps(dict(src, turns=dict(src["turns"], max_trains=r))))
    kw = dict(games=24, seed=3)

    def scores(spec):
        return simulate("europe", [spec, "tickets"], **kw).games["score"].to_numpy()
    late, early = scores(f"expert:model={files[12]}"), scores(f"expert:model={files[45]}")
    assert not np.array_equal(late, early)          # the reach matters to these trees
    np.testing.assert_array_equal(scores(f"expert:model={files[45]},reach=12"), late)
    np.testing.assert_array_equal(scores(f"expert:model={files[12]},reach=45"), early)
    np.testing.assert_array_equal(scores(f"expert:model={files[12]},reach=-1"), late)
    with pytest.raises(ValueError, match="reach"):
        make_policy("expert:reach=-2", "europe")
    # built directly, a reach that is not a whole number is refused, not truncated
    from ttrsim._expert import ExpertPolicy
    for bad in (16.5, "16", None, True):
        with pytest.raises(ValueError, match="whole number of trains"):
            ExpertPolicy(reach=bad)
    assert ExpertPolicy(reach=16.0).params["reach"] == 16


def test_turn_trees_decide_only_in_the_end_game(tmp_path):
    """Turn trees that prefer a blind draw, max_trains=15: every move equals tickets'
    game until some seat has 15 trains or fewer; at the expert's first turn after that
    it draws blind."""
    path, d = model_file(tmp_path, "blind", "end.json", setup="is_tickets")
    d["turns"]["max_trains"] = 15
    path.write_text(json.dumps(d))
    kw = dict(games=20, seed=5)
    a = simulate("europe", [f"expert:model={path}", "tickets"], **kw)
    b = simulate("europe", ["tickets#x", "tickets"], **kw)
    ended = 0
    for i in range(20):
        ma, mb = a.game(i).moves, b.game(i).moves
        trains = {0: 45, 1: 45}
        for k in range(len(ma)):
            row = ma.iloc[k]
            if min(trains.values()) > 15:
                assert row.code == mb.iloc[k].code
            elif row.policy.startswith("expert") and row.phase == "turn":
                assert row.kind == "draw_blind"
                ended += 1
                break
            trains[row.seat] = row.trains
    assert ended >= 15


def test_compiled_choice_matches_python_scores(tmp_path):
    """decide() on fresh policies equals the argmax of predict() (plus the margin on
    tickets' choice) over the candidates of a fresh policy started the same way, at
    setup and at turns (a model of random trees; positions of tickets play, every
    board)."""
    path = random_model(tmp_path, 5)
    m = load_model(path)
    spec = f"expert:model={path}"
    checked = 0
    for board, n, seed in (("usa", 2, 4), ("europe", 3, 5), ("newyork", 2, 6)):
        for turns in range(0, 40, 4):
            g = midgame(board, n, seed, turns)
            if g.is_over():
                continue
            seat = g.current_player
            e = make_policy(spec, g.board)
            e.start(g, seat, 9)
            codes, X = e.candidates(g)
            sec = m.setup if g.phase == "setup_tickets" else m.turns if g.phase == "turn" else None
            want = codes[0]
            if sec is not None and len(codes) > 1:
                scores = sec.predict(X)
                scores[0] += sec.margin
                want = codes[int(np.argmax(scores))]
                checked += want != codes[0]
            assert decide(make_policy(spec, g.board), g, seed=9) == want
    assert checked >= 5



def test_play_picks_the_argmax_of_the_scores_ties_included():
    """The compiled pick (which stops scoring rows that can no longer win) is exactly the
    first argmax of predict() with the margin on row 0, on trees of uneven shapes whose
    leaves take few values (so that ties and near ties are common), for many sets of
    rows: a bound without the margin, a wrong sign or a tie sent to the later row fails."""
    from ttrsim._expert import section_from_dict

    rng = np.random.default_rng(7)
    checked = 0
    for trial in range(40):
        feature, threshold, left, right, value, roots = [], [], [], [], [], []
        for _ in range(int(rng.integers(1, 60))):
            roots.append(len(feature))
            todo = [0]                              # depth of each node still to lay out
            nodes = []
            while todo:
                d = todo.pop(0)
                inner = d < 5 and rng.random() < 0.7
                nodes.append(inner)
                if inner:
                    todo += [d + 1, d + 1]
            off, nxt = roots[-1], roots[-1] + 1
            for i, inner in enumerate(nodes):       # breadth first: children in order
                feature.append(int(rng.integers(6)) if inner else -1)
                threshold.append(float(rng.integers(3)) if inner else 0.0)
                left.append(nxt if inner else -1)
                right.append(nxt + 1 if inner else -1)
                nxt += 2 if inner else 0
                value.append(0.0 if inner else float(rng.integers(-2, 3)) * 0.01)
        margin = float(rng.choice([0.0, 0.01, 0.02, 0.005]))
        m = section_from_dict({"base": 0.1, "margin": margin,
                               "trees": {"feature": feature, "threshold": threshold,
                                         "left": left, "right": right, "value": value,
                                         "roots": roots}})
        for _ in range(50):
            n = int(rng.integers(1, 12))
            X = np.zeros((n, len(FEATURES)), np.float32)
            X[:, :6] = rng.integers(0, 4, size=(n, 6))
            if n > 2:
                X[2] = X[1]                         # a tie
            scores = m.predict(X)
            scores[0] += margin
            assert m.pick(X) == int(np.argmax(scores)), (trial, scores)
            checked += n > 1 and int(np.argmax(scores)) != 0
    assert checked > 300


def test_run_manifest_names_the_expert_models_it_played(tmp_path):
    """The same spec plays other games with another model file, so a run's manifest names
    every expert model it played (shipped or model=PATH, nested in a search's rollout
    too) with its digest; a run without expert has none."""
    import hashlib

    from ttrsim._expert import default_model_path

    shipped = f"ttrsim/data/{DEFAULT_MODEL}"       # the same on every machine
    digest = hashlib.sha256(open(default_model_path(), "rb").read()).hexdigest()[:12]
    assert simulate("usa", ["expert", "tickets"], games=4, seed=1).manifest["expert_models"] \
        == {shipped: digest}
    assert "expert_models" not in simulate("usa", ["tickets", "greedy"], games=4, seed=1).manifest
    blind, d = model_file(tmp_path, "blind")
    other = hashlib.sha256(open(blind, "rb").read()).hexdigest()[:12]
    run = simulate("usa", [f"expert:stations=0,model={blind}", "search:playouts=2,rollout=expert"],
                   games=2, seed=1)
    assert run.manifest["expert_models"] == {str(blind): other, shipped: digest}
    assert other != digest
    led = simulate("usa", ["search:playouts=2,lead=expert,rollout=tickets", "tickets"],
                   games=2, seed=1)
    assert led.manifest["expert_models"] == {shipped: digest}      # the search's lead too
    # the default search's rollout is the expert's v4 model: named although the spec does
    # not say so
    v4 = default_model_path("v4")
    plain = simulate("usa", ["search:playouts=2", "tickets"], games=2, seed=1)
    assert plain.manifest["expert_models"] == {
        "ttrsim/data/expert-v4.json": hashlib.sha256(open(v4, "rb").read()).hexdigest()[:12]}
    assert "expert_models" not in simulate("usa", ["search:playouts=2,rollout=tickets",
                                                   "tickets"], games=2, seed=1).manifest


def test_a_run_does_not_resume_with_another_model_file(tmp_path):
    """A saved run resumes or grows only with expert model files of the same contents: the
    spec `expert:model=PATH` names the file, not the model (else the tables would mix the
    games of two models)."""
    from ttrsim._expert import default_model_path
    from ttrsim.results import prepare_out

    path = tmp_path / "m.json"
    path.write_text(open(default_model_path()).read())
    spec = [f"expert:model={path}", "tickets"]
    out = tmp_path / "run"
    simulate("newyork", spec, games=4, seed=1, out=out, batch_size=2)
    assert simulate("newyork", spec, games=6, seed=1, out=out, batch_size=2).games.game.nunique() == 6
    path.write_text(json.dumps(json.loads(path.read_text())))    # same model, other bytes
    with pytest.raises(ValueError, match=r"expert models \(SHA-256 prefixes\): \['[0-9a-f]{12}'\] "
                                         r"there, \['[0-9a-f]{12}'\] here"):
        simulate("newyork", spec, games=8, seed=1, out=out, batch_size=2)
    # compared by contents: the same digests under another path (a moved checkout) resume
    m = json.loads((out / "manifest.json").read_text())
    moved = dict(m, expert_models={"/elsewhere/m.json": d for d in m["expert_models"].values()})
    assert prepare_out(out, moved, ("board",)) is not None


def test_a_shipped_model_plays_by_name():
    """expert:model=usa1910 plays the model shipped for the USA 1910 decks: another file
    than the default, named in a run's manifest by its place in the package, other games;
    a name that is no shipped model is a file path, refused when missing."""
    import hashlib

    from ttrsim._expert import SHIPPED_MODELS, default_model_path
    from ttrsim._expert import model_file as path_of

    assert set(SHIPPED_MODELS) == {"field", "v4", "usa1910", "whole"}
    assert SHIPPED_MODELS["field"] == DEFAULT_MODEL
    path = path_of("usa1910")
    assert path == default_model_path("usa1910") != default_model_path()
    assert load_model("usa1910").turns is not None
    assert "/work" not in open(path, encoding="utf-8").read()   # no machine path shipped
    digest = hashlib.sha256(open(path, "rb").read()).hexdigest()[:12]
    named = simulate("usa-mega", ["expert:model=usa1910", "tickets"], games=40, seed=1)
    assert named.manifest["expert_models"] == {f"ttrsim/data/{SHIPPED_MODELS['usa1910']}": digest}
    plain = simulate("usa-mega", ["expert", "tickets"], games=40, seed=1)
    assert not named.games["score"].equals(plain.games["score"])
    with pytest.raises(ModelFileError, match="usa1910"):
        make_policy("expert:model=usa1911", Game("usa", 2).board)


def test_the_default_is_the_field_model_and_v4_plays_by_name():
    """`expert` plays the model trained against the field (the same games as
    expert:model=field); the model before it plays as expert:model=v4, the same games as
    its file, and other games than the default."""
    from ttrsim._expert import default_model_path

    def scores(spec):
        return simulate("europe", [spec, "tickets"], games=40, seed=3).games["score"]

    assert scores("expert").equals(scores("expert:model=field"))
    v4 = scores("expert:model=v4")
    assert v4.equals(scores(f"expert:model={default_model_path('v4')}"))
    assert not v4.equals(scores("expert"))
    assert load_model("v4").turns.n_trees_ < load_model().turns.n_trees_   # 40 trees more


def test_an_interrupted_export_leaves_the_previous_model_file_intact(tmp_path, monkeypatch):
    """`export` writes a model file atomically: a write that fails halfway (the disk full,
    the process stopped) leaves the previous file as it was, and nothing beside it."""
    import builtins
    import io

    from ttrsim.training.model_file import export

    path = tmp_path / "models" / "model.json"
    export(model_file(tmp_path, "claim")[1], path)
    before = path.read_bytes()
    new = model_file(tmp_path, "blind", name="new.json")[1]
    real_open = io.open

    class HalfWrite:
        """A file whose first write stores half its text, then fails."""
        def __init__(self, f):
            self.f = f

        def write(self, text):
            self.f.write(text[:len(text) // 2])
            self.f.flush()
            raise OSError(28, "No space left on device")

        def __getattr__(self, name):
            return getattr(self.f, name)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

    def failing_open(file, mode="r", *args, **kwargs):
        f = real_open(file, mode, *args, **kwargs)
        return HalfWrite(f) if "w" in mode and str(path.parent) in str(file) else f

    monkeypatch.setattr(io, "open", failing_open)
    monkeypatch.setattr(builtins, "open", failing_open)
    with pytest.raises(OSError, match="No space left"):
        export(new, path)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert [p.name for p in path.parent.iterdir()] == ["model.json"]
    export(new, path)
    assert json.loads(path.read_text()) == new
