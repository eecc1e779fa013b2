"""`expert` model format 5 (docs/expert.md, "The whole game"): the features of a ticket
draw and of the keep after one, from the seat's view only; the `keep` section deciding
the tickets kept after a draw; format-4 files still read as they were; the labels of
whole games (``training.generate_games``) and the search valuing exactly the expert's
candidates (``value_actions``)."""
import heapq
import json

import numpy as np
import pytest

from expert_models import model_file, random_model, section
from helpers import midgame
from ttrsim.actions import Action
from ttrsim._expert import (FEATURES, FEATURES4, ExpertPolicy, ModelFileError, default_model_path,
                            load_model)
from ttrsim._policies import decide
from ttrsim._search import analyse_position
from ttrsim.search import value_actions
from ttrsim.policies import make_policy
from ttrsim.training import generate_games

F = {name: i for i, name in enumerate(FEATURES)}
BOARDS = ("usa", "europe", "newyork", "usa-1910", "usa-mega", "usa-bigcities")


def after_a_draw(board, n, seed, turns):
    """A game played by `tickets` until `turns` turns, then the seat to act draws
    tickets at its next turn: the position of its keep (None if the deck is empty or
    the game ends first)."""
    g = midgame(board, n, seed, turns)
    tk = [make_policy("tickets", g.board) for _ in range(n)]
    while not g.is_over():
        if g.phase == "turn":
            draw = [a for a in g.legal_actions() if a.kind == "draw_tickets"]
            if not draw:
                return None
            g.apply(draw[0])
            return g
        g.apply(decide(tk[g.current_player], g, seed=seed + g.turn))
    return None


# --- the model file ----------------------------------------------------------------------

def test_format_4_files_are_read_as_before_and_refused_when_mixed(tmp_path):
    """The shipped format-4 models load with their 60 features and no keep section; a
    format-4 file may not name the new features, test them or hold a keep section, and a
    format-5 file must name every feature."""
    for name in ("field", "v4", "usa1910"):
        m = load_model(name)
        assert (m.version, m.keep) == (4, None)
        assert m.turns.widest < len(FEATURES4) == 60
    d = json.loads(open(default_model_path("v4")).read())
    bad = []
    for change, why in ((lambda m: m.update(keep=None), "keep.*version 5"),
                        (lambda m: m.update(features=list(FEATURES)), "69 given, 60 expected"),
                        (lambda m: m["turns"]["trees"]["feature"].__setitem__(0, 60),
                         "feature that does not exist"),
                        (lambda m: m.update(version=5), "60 given, 69 expected")):
        m = json.loads(json.dumps(d))
        change(m)
        path = tmp_path / "m.json"
        path.write_text(json.dumps(m))
        with pytest.raises(ModelFileError, match=why):
            load_model(path)
        bad.append(why)
    path, d5 = model_file(tmp_path, "claim", name="five.json")
    del d5["keep"]
    path.write_text(json.dumps(d5))
    with pytest.raises(ModelFileError, match="no 'keep' section"):
        load_model(path)
    # rows of 60 features are scored by format-4 trees, refused by trees reading more
    X = np.zeros((3, 60), np.float32)
    assert load_model("v4").turns.predict(X).shape == (3,)
    five = load_model(random_model(tmp_path, 3, name="r5.json"))
    if five.turns.widest >= 60:
        with pytest.raises(ValueError, match="69 features"):
            five.turns.predict(X)


def test_the_keep_section_decides_the_tickets_kept_after_a_draw(tmp_path):
    """With a keep section preferring the most tickets, every offer is kept whole; without
    one the keep is tickets' own; the initial tickets and turns are not the keep trees'."""
    most, _ = model_file(tmp_path, "claim", name="most.json", keep="most_kept")
    none, _ = model_file(tmp_path, "claim", name="none.json")
    seen = 0
    for board, n, seed in (("usa", 2, 1), ("europe", 3, 2), ("usa-mega", 4, 3), ("usa", 4, 4)):
        for turns in (6, 20, 40):
            g = after_a_draw(board, n, seed, turns)
            if g is None:
                continue
            seat = g.current_player
            offered = len(g.state()["players"][seat]["pending"])
            pick = Action.decode(decide(make_policy(f"expert:model={most}", g.board), g, seed=5),
                                 g.board)
            assert pick.kind == "keep" and bin(pick.mask).count("1") == offered
            own = make_policy(f"expert:model={none}", g.board)
            tk = make_policy("tickets", g.board)
            assert decide(own, g, seed=5) == decide(tk, g, seed=5)
            seen += 1
    assert seen >= 8


# --- the features of a ticket draw --------------------------------------------------------

def _components(board, owner, seat):
    """The cities joined by the seat's own routes (union-find)."""
    parent = list(range(board.n_cities))

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x
    for r in range(board.n_routes):
        if owner[r] == seat:
            parent[find(int(board.route_a[r]))] = find(int(board.route_b[r]))
    return find


def _trains_from(board, weights, sources):
    """Dijkstra: the fewest trains from any of `sources` to every city."""
    dist = {c: 0 for c in sources}
    heap = [(0, c) for c in sources]
    adj = {}
    for r in range(board.n_routes):
        if weights[r] is not None:
            a, b = int(board.route_a[r]), int(board.route_b[r])
            adj.setdefault(a, []).append((b, weights[r]))
            adj.setdefault(b, []).append((a, weights[r]))
    while heap:
        d, c = heapq.heappop(heap)
        if d > dist.get(c, 1 << 30):
            continue
        for y, w in adj.get(c, ()):
            if d + w < dist.get(y, 1 << 30):
                dist[y] = d + w
                heapq.heappush(heap, (d + w, y))
    return dist


def expected_draw_features(g, seat, spare):
    """deck_done .. globetrotter_lead computed in Python from what the seat sees."""
    b, st, obs = g.board, g.state(), g.observation(seat)
    owner = st["route_owner"]
    find = _components(b, owner, seat)
    me = st["players"][seat]
    held, gone = set(me["tickets"]), set(me["discarded"])
    pool = [t for t in range(b.n_tickets) if t not in held and t not in gone
            and not (b.ticket_long[t] and b.deal_long > 0)]
    joined = lambda t: find(int(b.ticket_a[t])) == find(int(b.ticket_b[t]))  # noqa: E731
    # trains on the empty board, and from the own network over routes still open to it
    empty = {c: _trains_from(b, [int(x) for x in b.route_len], [c]) for c in range(b.n_cities)}
    closed = set()
    for r in range(b.n_routes):
        q = int(b.route_partner[r])
        if owner[r] >= 0:
            closed.add(r)
            if q >= 0 and owner[q] < 0 and (g.n_players < b.double_min_players or owner[r] == seat):
                closed.add(q)
    weights = [0 if owner[r] == seat else None if r in closed or b.route_len[r] > me["trains"]
               else int(b.route_len[r]) for r in range(b.n_routes)]
    cities = {int(b.route_a[r]) for r in range(b.n_routes) if owner[r] == seat} | \
             {int(b.route_b[r]) for r in range(b.n_routes) if owner[r] == seat}
    net = _trains_from(b, weights, sorted(cities)) if cities else {}

    def cost(t):
        x, y = int(b.ticket_a[t]), int(b.ticket_b[t])
        c = empty[x].get(y, 10000)
        if cities:
            c = min(c, net.get(x, 1 << 24) + net.get(y, 1 << 24))
        return c
    done = [t for t in pool if joined(t)]
    near = [t for t in pool if not joined(t) and cost(t) <= spare]
    n = max(1, len(pool))
    completed = sum(joined(t) for t in held)
    most = max(p["tickets"] for q, p in enumerate(obs["players"]) if q != seat)
    return [len(done) / n, sum(b.ticket_points[t] for t in done) / n, len(near) / n,
            sum(b.ticket_points[t] for t in near) / n, spare, b.globetrotter_bonus,
            completed - most]


@pytest.mark.parametrize("board,n,seed", [("usa-1910", 3, 1), ("europe", 2, 2),
                                          ("usa-mega", 4, 3), ("newyork", 2, 4)])
def test_draw_features_are_what_the_seat_sees_of_the_ticket_deck(board, n, seed):
    """At turns of positions on four boards (Globetrotter and long tickets included), the
    ticket-draw features equal an independent computation from the seat's view: the
    tickets it could draw, those its network joins already and those joinable within
    its trains to spare (the plan's own count), the Globetrotter bonus and standing."""
    checked, seen = 0, np.zeros(7)
    for turns in (4, 12, 20, 28, 40, 60):
        g = midgame(board, n, seed, turns)
        if g.is_over() or g.phase != "turn":
            continue
        seat = g.current_player
        p = ExpertPolicy()
        p.start(g, seat, 1)
        codes, X = p.candidates(g)
        spare = g.state()["players"][seat]["trains"] - X[0, F["left_trains"]]
        want = expected_draw_features(g, seat, spare)
        for row in X:
            np.testing.assert_allclose(row[60:67], want, rtol=1e-6, atol=1e-6)
        checked += 1
        seen += np.abs(want)
    assert checked >= 3
    assert seen[2] > 0 and seen[4] > 0               # joinable tickets and spare trains met


def test_keep_features_count_the_kept_tickets_already_joined():
    """kept_done_points: the points of the kept tickets the seat's network joins already;
    kept_near_points those joinable within the trains to spare."""
    seen = 0
    for board, n, seed in (("usa", 2, 1), ("usa-mega", 3, 2), ("europe", 2, 3)):
        for turns in (20, 40, 60):
            g = after_a_draw(board, n, seed, turns)
            if g is None:
                continue
            seat = g.current_player
            p = ExpertPolicy()
            p.start(g, seat, 1)
            codes, X = p.candidates(g)
            st, b = g.state(), g.board
            find = _components(b, st["route_owner"], seat)
            offer = st["players"][seat]["pending"]
            for code, row in zip(codes, X):
                mask = (int(code) >> 16) & 0xFF
                kept = [offer[i] for i in range(len(offer)) if mask >> i & 1]
                done = sum(b.ticket_points[t] for t in kept
                           if find(int(b.ticket_a[t])) == find(int(b.ticket_b[t])))
                assert row[F["kept_done_points"]] == done
                assert row[F["kept_points"]] >= row[F["kept_done_points"]] + row[F["kept_near_points"]]
            seen += 1
    assert seen >= 4


@pytest.mark.parametrize("board", BOARDS)
def test_format_5_ignores_hidden_information(tmp_path, board):
    """Changing only what the seat cannot see changes neither the candidates, their
    features (the ticket-draw and keep features included) nor a format-5 model's
    decision, at turns and at the keep after a draw, on every built-in board."""
    path = random_model(tmp_path, 7, name=f"{board}.json")
    n = 3
    checked = 0
    positions = [midgame(board, n, 11, t) for t in (10, 30, 50)]
    positions += [after_a_draw(board, n, 12, t) for t in (15, 35)]
    for g in positions:
        if g is None or g.is_over():
            continue
        seat = g.current_player
        p = ExpertPolicy(str(path))
        p.start(g, seat, 7)
        codes, X = p.candidates(g)
        want = decide(make_policy(f"expert:model={path}", g.board), g, seed=11)
        for k in range(2):
            h = g.determinized(seat, 500 + k)
            assert h.observation(seat) == g.observation(seat)
            p.start(h, seat, 7)
            codes_h, X_h = p.candidates(h)
            np.testing.assert_array_equal(codes_h, codes)
            np.testing.assert_array_equal(X_h, X)
            assert decide(make_policy(f"expert:model={path}", g.board), h, seed=11) == want
        checked += 1
    assert checked >= 3


# --- labels --------------------------------------------------------------------------------

def test_value_actions_values_exactly_the_given_moves_on_common_worlds():
    """The values of given moves are the search's uniform values of the same moves (same
    seed, same worlds), whatever their order; an illegal or repeated move is refused."""
    g = midgame("usa", 3, 4, 30)
    s = make_policy("search:playouts=12", g.board)
    s.uniform = True
    rows, _ = analyse_position(s, g, seed=9)
    codes = [r[0] for r in rows]
    fresh = make_policy("search:playouts=12", g.board)
    got, _ = value_actions(fresh, g, codes, seed=9)
    assert [(r[0], r[1], r[2]) for r in got] == [(r[0], r[1], r[2]) for r in rows]
    rev, _ = value_actions(fresh, g, codes[::-1], seed=9)
    assert [(r[0], r[2]) for r in rev[::-1]] == [(r[0], r[2]) for r in rows]
    legal = {a.code for a in g.legal_actions()}
    illegal = next(c for c in range(1 << 24, 1 << 26, 1 << 16) if c not in legal)
    for bad in ([codes[0], codes[0]], [illegal], []):
        with pytest.raises(ValueError):
            value_actions(fresh, g, bad, seed=9)


def test_whole_game_labels_every_kind_repeatably():
    """generate_games labels the initial tickets, turns (turn_share of them) and the keep
    after a draw (the teacher, the search, draws tickets); the same seed gives the same
    labels; each decision's values are centred and its best is marked."""
    kw = dict(playouts=2, keep_playouts=2, teacher="search:playouts=8", teacher_share=1.0,
              turn_share=0.3, field=("tickets",))
    a = generate_games("usa-mega", 2, games=3, seed=4, **kw)
    b = generate_games("usa-mega", 2, games=3, seed=4, **kw)
    for kind in ("setup", "turns", "keep"):
        np.testing.assert_array_equal(a[kind].X, b[kind].X)
        np.testing.assert_array_equal(a[kind].value, b[kind].value)
    assert a["setup"].decisions == 3 and a["turns"].decisions > 10
    assert a["keep"].decisions >= 1 and (a["keep"].X[:, F["keep"]] == 1).all()
    assert (a["keep"].X[:, F["setup"]] == 0).all() and (a["setup"].X[:, F["setup"]] == 1).all()
    for kind in ("setup", "turns", "keep"):
        p = a[kind]
        for g in np.unique(p.group):
            rows = p.group == g
            assert abs(float(p.value[rows].mean())) < 1e-5
            assert p.chosen[rows].sum() == 1 and p.value[rows][p.chosen[rows] == 1][0] == p.value[rows].max()
    none = generate_games("usa", 2, games=1, seed=4, playouts=2, turn_share=0.0,
                          field=("tickets",))
    assert none["turns"].decisions == 0 and none["setup"].decisions == 1


def test_labelling_cut_short_goes_on_from_its_finished_tasks(tmp_path, monkeypatch):
    """label(..., cache=DIR) saves each finished task; a second call with the same
    arguments reads them back instead of labelling again (the same labels), and other
    arguments label afresh."""
    from ttrsim.training import labelling

    kw = dict(playouts=2, turn_share=0.2, field=("tickets",))
    first = labelling.label("games", [("newyork", 2, 6)], seed=3, cache=tmp_path, progress=False, **kw)
    assert len(list(tmp_path.glob("task*-turns.npz"))) == 2      # chunks of 4 games

    def refuse(*args):
        raise AssertionError("labelled again")
    monkeypatch.setattr(labelling, "_label_task", refuse)
    again = labelling.label("games", [("newyork", 2, 6)], seed=3, cache=tmp_path, progress=False, **kw)
    for k in first:
        np.testing.assert_array_equal(first[k].X, again[k].X)
        np.testing.assert_array_equal(first[k].value, again[k].value)
    with pytest.raises(AssertionError, match="labelled again"):
        labelling.label("games", [("newyork", 2, 6)], seed=4, cache=tmp_path, progress=False, **kw)


# --- a section's bias per candidate kind --------------------------------------------------

@pytest.mark.parametrize("kind,action", [("draw_tickets", "draw_tickets"), ("blind", "draw_blind"),
                                         ("claim", "claim")])
def test_a_kind_bias_moves_the_choice_to_that_kind_only(tmp_path, kind, action):
    """Turn trees preferring a face-up card, plus a bias of 2 to one kind: the expert
    picks a candidate of that kind wherever it has one, as the Python reading of the
    model does; without the bias it takes a face-up card."""
    path, d = model_file(tmp_path, "faceup", name="fu.json")
    d["turns"]["bias"] = {kind: 2.0}
    biased = tmp_path / "biased.json"
    biased.write_text(json.dumps(d))
    m = load_model(str(biased))
    assert m.turns.bias[kind] == 2.0 and sum(m.turns.bias.values()) == 2.0
    seen = 0
    for board, n, seed, turns in (("usa", 2, 1, 12), ("europe", 3, 2, 12), ("usa-mega", 4, 3, 12),
                                  ("usa", 3, 4, 20), ("europe", 2, 5, 6), ("usa-1910", 4, 6, 16)):
        g = midgame(board, n, seed, turns)
        if g.phase != "turn":
            continue
        e = ExpertPolicy(str(biased))
        e.start(g, g.current_player, 1)
        codes, X = e.candidates(g)
        if not (X[:, F[kind]] == 1).any():
            continue
        pick = decide(make_policy(f"expert:model={biased}", g.board), g, seed=5)
        assert Action.decode(pick, g.board).kind == action
        scores = m.turns.predict(X) + m.turns.offsets(X)
        assert codes[int(np.argmax(scores))] == pick
        plain = decide(make_policy(f"expert:model={path}", g.board), g, seed=5)
        if (X[:, F["faceup"]] == 1).any():
            assert Action.decode(plain, g.board).kind == "draw_faceup"
            seen += 1
    assert seen >= 2


def test_a_kind_bias_is_refused_in_format_4_and_for_an_unknown_kind(tmp_path):
    _, d = model_file(tmp_path, "faceup")
    for change, why in ((lambda m: m["turns"].update(bias={"tunnel": 1.0}), "not candidate kinds"),
                        (lambda m: m["turns"].update(bias={"claim": float("nan")}), "finite"),
                        (lambda m: m["turns"].update(bias=[1.0]), "bias must map")):
        bad = json.loads(json.dumps(d))
        change(bad)
        p = tmp_path / "bad.json"
        p.write_text(json.dumps(bad, allow_nan=True))
        with pytest.raises((ModelFileError, TypeError), match=why):
            load_model(str(p))
    v4 = json.loads(open(default_model_path("v4")).read())
    v4["turns"]["bias"] = {"claim": 0.1}
    p = tmp_path / "v4bias.json"
    p.write_text(json.dumps(v4))
    with pytest.raises(ModelFileError, match="needs format version 5"):
        load_model(str(p))


# --- distilling a teacher's turns and a draw head -----------------------------------------

def test_student_states_are_scored_by_the_teacher_and_played_by_the_student(tmp_path):
    """generate_student labels the student seats' turns with the teacher's scores (not
    the student's), repeatably; with the teacher in every other seat it labels only one
    seat's turns, about a third of what all-student games give at 3 players."""
    from ttrsim.training.labelling import generate_student

    student, _ = model_file(tmp_path, "blind", name="student.json")
    kw = dict(student=str(student), teacher="field")
    a = generate_student("usa", 3, games=3, seed=2, teacher_seats=1.0, **kw)
    b = generate_student("usa", 3, games=3, seed=2, teacher_seats=1.0, **kw)
    np.testing.assert_array_equal(a.X, b.X)
    np.testing.assert_array_equal(a.value, b.value)
    teacher = load_model("field")
    for g in np.unique(a.group):
        rows = a.group == g
        want = teacher.turns.predict(a.X[rows])
        np.testing.assert_allclose(a.value[rows], want - want.mean(), atol=1e-5)
        assert a.chosen[rows][int(np.argmax(want))] == 1
    # the student (blind draws only) plays on: every game long, nobody claims early
    assert (a.X[:, F["blind"]] == 1).any()
    alone = generate_student("usa", 3, games=3, seed=2, teacher_seats=0.0, **kw)
    assert 2.0 < alone.decisions / a.decisions < 4.0


def test_distil_fits_the_teachers_scores_not_the_labels(tmp_path):
    """distil learns the teacher's ranking even where the labels' own values are noise;
    fitting the labels would agree with the teacher about as often as chance."""
    from dataclasses import replace
    from ttrsim.training.distilling import distil
    from ttrsim.training.labelling import generate_student
    from ttrsim.training.positions import decisions

    data = generate_student("europe", 2, games=6, seed=1, student="field", teacher="field")
    noise = replace(data, value=np.random.default_rng(0).normal(size=len(data.value)).astype(np.float32))
    sec = distil(noise, "field", trees=30, depth=6, min_leaf=5)
    from ttrsim._expert import section_from_dict
    mine, theirs = section_from_dict(sec).predict(data.X), load_model("field").turns.predict(data.X)
    rows = list(decisions(data))
    agree = np.mean([np.argmax(mine[r]) == np.argmax(theirs[r]) for r in rows])
    assert agree > 0.8, agree


def test_a_draw_head_changes_only_the_ticket_draws_score(tmp_path):
    """draw_head adds trees under a root that gives every candidate but the ticket draw
    0: the other candidates' scores are the base section's, the draws' move, the bias
    is the section's draw bias; too few labelled draws are refused."""
    from ttrsim._expert import section_from_dict
    from ttrsim.training.distilling import draw_head
    from ttrsim.training.positions import Positions

    _, d = model_file(tmp_path, "claim")
    base = dict(d["turns"])
    rng = np.random.default_rng(3)
    n = 4000
    X = rng.integers(0, 3, size=(n, len(FEATURES))).astype(np.float32)
    X[:, F["draw_tickets"]] = (rng.random(n) < 0.3).astype(np.float32)
    X[:, F["rounds_left"]] = rng.integers(0, 40, n)
    # the search likes a draw with many rounds left
    value = np.where(X[:, F["draw_tickets"]] == 1, (X[:, F["rounds_left"]] - 20) / 20.0, 0.0)
    group = np.arange(n) // 8
    labels = Positions(X, value.astype(np.float32), np.zeros(n, np.int8), group, group // 10,
                       ["usa"] * (n // 8))
    head = draw_head(labels, base, trees=20, depth=2, min_leaf=50, bias=0.07)
    before, after = section_from_dict(base).predict(X), section_from_dict(head).predict(X)
    draws = X[:, F["draw_tickets"]] == 1
    np.testing.assert_allclose(after[~draws], before[~draws], atol=1e-6)
    early, late = draws & (X[:, F["rounds_left"]] > 30), draws & (X[:, F["rounds_left"]] < 10)
    assert (after - before)[early].mean() > (after - before)[late].mean() + 0.5
    assert section_from_dict(head).bias["draw_tickets"] == pytest.approx(0.07)
    with pytest.raises(ValueError, match="too few"):
        draw_head(labels, base, min_leaf=5000)


def test_a_draw_head_learns_what_the_search_says_beyond_the_base(tmp_path):
    """The head fits the search's values of the draws less the base section's: a second
    head over a base that already scores the draws as the search does adds next to
    nothing, where one fitted to the search's values would add the effect again."""
    from ttrsim._expert import section_from_dict
    from ttrsim.training.distilling import draw_head
    from ttrsim.training.positions import Positions

    _, d = model_file(tmp_path, "claim")
    rng = np.random.default_rng(5)
    n = 4000
    X = rng.integers(0, 3, size=(n, len(FEATURES))).astype(np.float32)
    X[:, F["draw_tickets"]] = (rng.random(n) < 0.3).astype(np.float32)
    X[:, F["rounds_left"]] = rng.integers(0, 40, n)
    value = np.where(X[:, F["draw_tickets"]] == 1, (X[:, F["rounds_left"]] - 20) / 20.0, 0.0)
    group = np.arange(n) // 8
    labels = Positions(X, value.astype(np.float32), np.zeros(n, np.int8), group, group // 10,
                       ["usa"] * (n // 8))
    kw = dict(trees=30, depth=2, min_leaf=50, learning_rate=0.2)
    first = draw_head(labels, dict(d["turns"]), **kw)
    second = draw_head(labels, first, **kw)
    p0, p1, p2 = (section_from_dict(s).predict(X) for s in (d["turns"], first, second))
    draws = X[:, F["draw_tickets"]] == 1
    early, late = draws & (X[:, F["rounds_left"]] > 30), draws & (X[:, F["rounds_left"]] < 10)

    def gain(a, b):     # how much more the head scores an early draw than a late one
        return (b - a)[early].mean() - (b - a)[late].mean()

    assert gain(p0, p1) > 1.0, gain(p0, p1)              # the search's 1.5 nearly learnt
    assert abs(gain(p1, p2)) < 0.15 * gain(p0, p1), (gain(p0, p1), gain(p1, p2))


def test_the_distil_script_makes_a_model_and_resumes(tmp_path, monkeypatch):
    """scripts/distil_whole_game.py on a tiny budget: the student of each round, the
    states it reached, and the final model with its draw bias and the sections' setup
    and keep; a rerun reads every step back (no labelling, the same file)."""
    from helpers import load_script
    from ttrsim.training.labelling import generate_student
    from ttrsim.training.positions import save_positions

    runs = tmp_path / "labels"
    runs.mkdir()
    save_positions(generate_student("usa", 2, games=6, seed=1, student="field", teacher="field"),
                   runs / "labels-r1-turns.npz")
    sections, _ = model_file(tmp_path, "claim", name="sections.json", keep="most_kept")
    script = load_script("distil_whole_game")
    out = tmp_path / "out"
    args = ["--out", str(out), "--labels", str(runs), "--sections", str(sections), "--rounds", "1",
            "--games", "23", "--trees", "3", "--depth", "3", "--head-trees", "2",
            "--head-min-leaf", "10", "--draw-bias", "0.05"]
    assert script.main(args) == 0
    m = load_model(str(out / "expert-whole.json"))
    assert m.turns.bias["draw_tickets"] == 0.05 and m.keep is not None
    assert (out / "states-1.npz").exists() and (out / "student-1.json").exists()
    made = (out / "expert-whole.json").read_bytes()

    def refuse(*a, **k):
        raise AssertionError("labelled again")
    monkeypatch.setattr(script, "label", refuse)
    assert script.main(args) == 0
    assert (out / "expert-whole.json").read_bytes() == made


def test_the_shipped_whole_game_model_draws_and_keeps_tickets():
    """expert:model=whole (format 5, no machine path inside) draws tickets after the deal
    and keeps them with its keep section, where the default never draws; every move it
    makes is legal (the checked decision step)."""
    from ttrsim import simulate
    from ttrsim._expert import model_file as path_of

    m = load_model("whole")
    assert m.version == 5 and m.keep is not None and m.turns.bias["draw_tickets"] > 0
    assert "/work" not in open(path_of("whole"), encoding="utf-8").read()
    run = simulate("usa-mega", ["expert:model=whole"] * 4, games=40, seed=3)
    assert run.games["ticket_draws"].mean() > 0.5
    plain = simulate("usa-mega", ["expert"] * 4, games=40, seed=3)
    assert plain.games["ticket_draws"].mean() < 0.1
    from ttrsim.batches import game_seeds, play_batch
    from ttrsim.game import compile_board
    for board, n in (("usa-mega", 4), ("europe", 3), ("newyork", 2)):
        cb = compile_board(board)
        play_batch(cb, n, [make_policy("expert:model=whole", cb.board) for _ in range(n)],
                   game_seeds(7, 10), 0, True, True, check=True)
