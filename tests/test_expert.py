"""The `expert` policy: legality everywhere, hidden information, reproducibility, the
model file (its inference and its errors) and the training pipeline end to end."""
import json

import numpy as np
import pandas as pd
import pytest

import ttrsim
from helpers import load_script, midgame
from ttrsim import Game
from ttrsim._batch import game_seeds, play_batch
from ttrsim._expert import (DEFAULT_MODEL, FEATURES, FORMAT_VERSION, ExpertPolicy,
                            ModelFileError, load_model)
from ttrsim._policies import decide
from ttrsim.game import compile_board
from ttrsim.policies import make_policy, policy_table
from ttrsim.runner import simulate

from test_bruteforce import small_board

TABLES = [("usa", n) for n in (2, 3, 4, 5)] + [("europe", n) for n in (2, 3, 4, 5)] \
    + [("newyork", n) for n in (2, 3, 4)]
F = {name: i for i, name in enumerate(FEATURES)}


def _section(feature, threshold=0.5):
    """One tree: candidates with `feature` > threshold score 1, the others 0."""
    return {"base": 0.0, "margin": 0.0,
            "trees": {"feature": [F[feature], -1, -1], "threshold": [threshold, 0, 0],
                      "left": [1, -1, -1], "right": [2, -1, -1], "value": [0.0, 0.0, 1.0],
                      "roots": [0]}}


def _section_most_kept():
    """One tree scoring a keep set by how many tickets it keeps (0 to 3 for 1 to 4+)."""
    k = F["kept"]
    return {"base": 0.0, "margin": 0.0,
            "trees": {"feature": [k, -1, k, -1, k, -1, -1],
                      "threshold": [1.5, 0, 2.5, 0, 3.5, 0, 0],
                      "left": [1, -1, 3, -1, 5, -1, -1], "right": [2, -1, 4, -1, 6, -1, -1],
                      "value": [0, 0.0, 0, 1.0, 0, 2.0, 3.0], "roots": [0]}}


def _model(tmp_path, feature, name="m.json", setup=None, turns=True):
    """A model file whose sections prefer candidates with `feature` > 0.5 (the setup
    section prefers `setup` instead, when given; no turn section if not `turns`)."""
    d = {"format": "ttrsim-expert", "version": FORMAT_VERSION, "features": list(FEATURES),
         "setup": (_section_most_kept() if setup == "most_kept" else _section(setup or feature)),
         "turns": _section(feature) if turns else None}
    path = tmp_path / name
    path.write_text(json.dumps(d))
    return path, d


def _random_model(tmp_path, seed, name="random.json"):
    """A model of 30 random trees of depth 3 in both sections: scores that vary with
    many features (for comparing the compiled choice with predict())."""
    rng = np.random.default_rng(seed)

    def section():
        feature, threshold, left, right, value, roots = [], [], [], [], [], []
        for _ in range(30):
            off = len(feature)
            roots.append(off)
            for i in range(15):                       # a full tree of depth 3, breadth first
                inner = i < 7
                feature.append(int(rng.integers(len(FEATURES))) if inner else -1)
                threshold.append(float(rng.choice([0.5, 1.5, 3.0, 0.2])) if inner else 0.0)
                left.append(off + 2 * i + 1 if inner else -1)
                right.append(off + 2 * i + 2 if inner else -1)
                value.append(0.0 if inner else float(rng.normal()))
        return {"base": 0.0, "margin": float(rng.uniform(0, 0.5)),
                "trees": {"feature": feature, "threshold": threshold, "left": left,
                          "right": right, "value": value, "roots": roots}}
    d = {"format": "ttrsim-expert", "version": FORMAT_VERSION, "features": list(FEATURES),
         "setup": section(), "turns": section()}
    path = tmp_path / name
    path.write_text(json.dumps(d))
    return path


# --- legality --------------------------------------------------------------------------

@pytest.mark.parametrize("board,n", TABLES)
def test_expert_plays_only_legal_actions_on_every_board_and_table(board, n):
    cb = compile_board(board)
    policies = [make_policy("expert", cb.board) for _ in range(n)]
    # check: every action checked for legality and every invariant after every action
    out = play_batch(cb, n, policies, game_seeds(31 + n, 12), 0, True, True, check=True)
    assert not out["truncated"].any()


def test_thousands_of_expert_decisions_are_legal_custom_board_included(tmp_path):
    """Step games one decision at a time: every answer is among the legal actions
    (with the shipped model and with models that push every kind of candidate)."""
    custom = small_board(3)
    models = [None] + [_model(tmp_path, f, f"{f}.json")[0]
                       for f in ("blind", "draw_tickets", "is_best_claim", "claim")] \
        + [_random_model(tmp_path, 1)]
    total = 0
    for board in ("usa", "europe", "newyork", custom):
        for k, model in enumerate(models + models):
            g = Game(board, 2 + k % 2, seed=k)
            spec = "expert" if model is None else f"expert:model={model}"
            ps = [make_policy(spec, g.board) for _ in range(g.n_players)]
            started = set()
            while not g.is_over():
                q = g.current_player
                act = decide(ps[q], g, seed=q, start=q not in started)
                started.add(q)
                assert act in set(g.legal_action_codes().tolist())
                g.apply(act)
                total += 1
    assert total > 5000


# --- the model decides -------------------------------------------------------------------

def test_the_model_scores_the_candidates(tmp_path):
    """A model that prefers a blind draw makes the policy draw blind at every turn where
    it may; a margin larger than any score plays tickets' choice."""
    blind, d = _model(tmp_path, "blind")
    g = midgame("europe", 2, seed=5)
    e = make_policy(f"expert:model={blind}", g.board)
    e.start(g, g.current_player, 1)
    codes, X = e.candidates(g)
    assert X[:, F["blind"]].sum() == 1
    act = decide(make_policy(f"expert:model={blind}", g.board), g, seed=1)
    assert act == codes[np.argmax(X[:, F["blind"]])]
    # a margin for tickets' own choice larger than any tree's score: tickets' choice
    d["turns"]["margin"] = 10.0
    (tmp_path / "bonus.json").write_text(json.dumps(d))
    e = make_policy(f"expert:model={tmp_path / 'bonus.json'}", g.board)
    e.start(g, g.current_player, 1)
    codes, X = e.candidates(g)
    assert codes[0] != act
    assert decide(make_policy(f"expert:model={tmp_path / 'bonus.json'}", g.board), g,
                  seed=1) == codes[0]


def _joined_points(g, seat, route):
    """Points of the seat's tickets not yet joined that its routes plus `route` join
    (union-find over cities, independent of the compiled code)."""
    b, st = g.board, g.state()
    parent = list(range(len(b.cities)))

    def find(x):
        while parent[x] != x:
            x = parent[x]
        return x

    def joined():
        return {t for t in st["players"][seat]["tickets"]
                if find(int(b.ticket_a[t])) == find(int(b.ticket_b[t]))}
    for r in st["players"][seat]["routes"]:
        parent[find(int(b.route_a[r]))] = find(int(b.route_b[r]))
    before = joined()
    parent[find(int(b.route_a[route]))] = find(int(b.route_b[route]))
    return sum(int(b.ticket_points[t]) for t in joined() - before)


def test_best_claim_candidate_is_the_claim_worth_most(tmp_path):
    """A model that prefers the best-claim candidate claims, whenever some claim is
    legal, a route worth the most route points plus joined ticket points."""
    best, _ = _model(tmp_path, "is_best_claim")
    checked = 0
    for board, seed in (("usa", 1), ("europe", 2), ("newyork", 3)):
        for turns in range(6, 40, 3):
            g = midgame(board, 2, seed, turns)
            if g.is_over() or g.phase != "turn":
                continue
            seat = g.current_player
            claims = [a for a in g.legal_actions() if a.kind == "claim"
                      and not g.board.route_tunnel[a.route]]
            act = decide(make_policy(f"expert:model={best}", g.board), g, seed=1)
            if not claims:
                continue

            def value(route):
                return int(g.board.route_points[int(g.board.route_len[route])]) \
                    + _joined_points(g, seat, route)
            a = ttrsim.actions.Action.decode(int(act), g.board)
            assert a.kind == "claim"
            assert value(a.route) >= max(value(c.route) for c in claims)
            checked += 1
    assert checked >= 10


def test_best_claim_is_worth_most_in_random_positions_custom_board_included():
    """In hundreds of positions of every board (a custom one with gray and double routes
    included) and table size, the candidate flagged as the best
    claim is a legal claim worth at least as much (4 x (route points + joined ticket
    points) + length) as every legal claim that is not a tunnel, and there is one
    exactly when some claim is legal. A scan that skipped a colour class, the gray
    routes, the double routes' rules or a length would miss a better claim."""
    checked = with_claims = 0
    for board in ("usa", "europe", "newyork", small_board(3)):
        for n in (2, 4):
            for seed in (5, 6):
                for turns in range(2, 80, 6):
                    g = midgame(board, n, seed, turns)
                    if g.is_over() or g.phase != "turn":
                        continue
                    seat = g.current_player
                    ex = ExpertPolicy()
                    ex.start(g, seat, 0)
                    codes, X = ex.candidates(g)
                    legal = set(g.legal_action_codes().tolist())
                    claims = [a for a in g.legal_actions() if a.kind == "claim"]

                    def value(route):
                        length = int(g.board.route_len[route])
                        return 4 * (int(g.board.route_points[length])
                                    + _joined_points(g, seat, route)) + length
                    flagged = [int(c) for c, x in zip(codes, X)
                               if x[FEATURES.index("is_best_claim")] == 1]
                    assert len(flagged) <= 1
                    checked += 1
                    if not claims:
                        assert not flagged
                        continue
                    with_claims += 1
                    plain = [value(a.route) for a in claims
                             if not g.board.route_tunnel[a.route]]
                    if not flagged:             # only tunnels beyond tickets' risk
                        assert not plain
                        continue
                    a = ttrsim.actions.Action.decode(flagged[0], g.board)
                    assert flagged[0] in legal and a.kind == "claim"
                    assert value(a.route) >= max(plain, default=-1)
    assert checked >= 150 and with_claims >= 100


def _double_board():
    """Cities A..D; A - B a double route (red / blue, 3), the other routes gray and
    shorter; doubles open to different seats from 4 players on."""
    from ttrsim import maps
    routes = [dict(id=1, a="A", b="B", length=3, color="red", tunnel=False, ferry=0, double=2),
              dict(id=2, a="A", b="B", length=3, color="blue", tunnel=False, ferry=0, double=1),
              dict(id=3, a="B", b="C", length=2, color="gray", tunnel=False, ferry=0, double=None),
              dict(id=4, a="C", b="D", length=1, color="gray", tunnel=False, ferry=0, double=None),
              dict(id=5, a="A", b="D", length=2, color="gray", tunnel=False, ferry=0, double=None)]
    pairs = [("A", "C"), ("B", "D"), ("A", "D"), ("C", "D"), ("A", "B"), ("B", "C")]
    tickets = [dict(id=i + 1, a=a, b=b, points=5 + i // 6, long=False)
               for i, (a, b) in enumerate(pairs + pairs)]
    return maps.from_dict({
        "name": "double", "title": "a double route", "colors": ["red", "blue"],
        "wild": "locomotive",
        "cities": [{"name": c, "x": 10 * i, "y": 50} for i, c in enumerate("ABCD")],
        "routes": routes, "tickets": tickets,
        "rules": {"players_min": 2, "players_max": 4, "trains": 45, "stations": 0,
                  "station_points": 4, "initial_hand": 4, "deal_regular": 3, "deal_long": 0,
                  "initial_keep": 2, "initial_discards_removed": False, "draw_tickets": 3,
                  "draw_keep": 1, "longest_bonus": 10, "double_min_players": 4,
                  "end_trigger": 2, "wild_faceup_limit": 3, "max_redeals": 3,
                  "deck": {"red": 30, "blue": 30, "wild": 10},
                  "route_points": {"1": 1, "2": 2, "3": 4}, "attraction_points": 0,
                  "tie_breaks": ["tickets", "fewest_stations", "longest"]}})


@pytest.mark.parametrize("players, owner", [(4, 0), (4, 1), (2, 1)])
def test_best_claim_respects_the_double_route_rules(players, owner):
    """Seat 0 holds three blue cards: the blue half of A - B is its most valuable claim
    unless the double-route rules close it -- when seat 0 owns the red half itself (any
    table), or another seat owns it below the doubles' player count (2 players). Then the
    best claim is the first of the longest open gray routes (B - C)."""
    board = _double_board()
    routes = [[] for _ in range(players)]
    routes[owner] = [0]                             # the red half
    # seat 0's ticket A - B: the red half joins it already, no other route adds to it
    g = Game.from_position(board, players, hands=[{"blue": 3}] + [{}] * (players - 1),
                           routes=routes,
                           tickets=[[4]] + [[q] for q in range(players - 1)])
    ex = ExpertPolicy()
    ex.start(g, 0, 0)
    codes, X = ex.candidates(g)
    best = [int(c) for c, x in zip(codes, X) if x[FEATURES.index("is_best_claim")] == 1]
    route = ttrsim.actions.Action.decode(best[0], g.board).route
    open_to_seat_0 = players >= 4 and owner != 0
    assert route == (1 if open_to_seat_0 else 2)
    assert best[0] in set(g.legal_action_codes().tolist())


def test_features_describe_the_candidate_actions():
    """Randomized: each candidate's kind flags are one-hot and match its code, a claim's
    length and trains afterwards match the board; tickets' choice comes first."""
    from ttrsim.actions import Action

    rows = on_plan = 0
    for board, n in (("usa", 2), ("europe", 3), ("newyork", 4)):
        g = Game(board, n, seed=2)
        ps = [make_policy("expert", g.board) for _ in range(n)]
        for q in range(n):
            ps[q].start(g, q, q)
        tk = [make_policy("tickets", g.board) for _ in range(n)]
        while not g.is_over():
            q = g.current_player
            codes, X = ps[q].candidates(g)
            assert X.shape == (len(codes), len(FEATURES)) and X.dtype == np.float32
            assert X[0, F["is_tickets"]] == 1
            if g.phase == "turn":
                trains = g.state()["players"][q]["trains"]
                for code, x in zip(codes, X):
                    a = Action.decode(int(code), g.board)
                    kinds = {"claim": "claim", "draw_blind": "blind", "draw_faceup": "faceup",
                             "draw_tickets": "draw_tickets", "station": "station"}
                    flags = [x[F[f]] for f in kinds.values()]
                    assert sum(flags) == 1 and x[F[kinds[a.kind]]] == 1
                    assert x[F["agree"]] == x[F["is_tickets"]] + x[F["is_best_claim"]]
                    assert x[F["players"]] == n
                    assert x[F["fewest_trains"]] == min(pl["trains"] for pl in g.state()["players"])
                    assert x[F["left_trains"]] >= 0 and x[F["left_claims"]] >= 0
                    assert x[F["on_plan"]] in (0, 1) and (a.kind == "claim" or x[F["on_plan"]] == 0)
                    on_plan += x[F["on_plan"]]
                    if a.kind == "claim":
                        length = int(g.board.route_len[a.route])
                        assert x[F["route_len"]] == length
                        assert x[F["trains_after"]] == pytest.approx(
                            (trains - length) / g.board.trains, rel=1e-6)
                    rows += 1
            g.apply(decide(tk[q], g, seed=1, start=False) if g.turn else codes[0])
    assert rows > 300 and on_plan > 10


def _longest_claim_routes(g, k=4, tunnels=True):
    """The routes of the k longest claims the hand pays, as the search proposes them: the
    routes of the legal claims in order of first appearance, longest first (stable)."""
    routes = []
    for a in g.legal_actions():
        if a.kind == "claim" and a.route not in routes:
            routes.append(a.route)
    routes.sort(key=lambda r: -int(g.board.route_len[r]))
    if not tunnels:
        routes = [r for r in routes if not g.board.route_tunnel[r]]
    return routes[:k]


def test_end_game_candidates_are_the_searchs_turn_candidates():
    """In end-game turns of every board: the candidates hold a face-up card of each colour
    on offer (once each), claims of the four longest routes the hand pays, a blind draw
    and a ticket draw when legal; `longest_claim` is the longest of those routes; a
    face-up candidate's `colour_missing` is at most the plan's `plan_short`; the rounds
    left are 0 in the final round; the plan features are those of the plan `tickets` follows (its routes need the
    trains and claims given, a claim is `on_plan` exactly when its route is planned).
    And the labelling search (uniform, claims=4) values
    nearly every candidate (the training labels cover them)."""
    from ttrsim.actions import Action

    checked = covered = total = final = planned = 0
    for board, n, seed in (("usa", 2, 1), ("europe", 2, 2), ("newyork", 2, 3),
                           ("europe", 4, 4), ("usa", 3, 5)):
        for turns in range(40, 400, 7):
            g = midgame(board, n, seed, turns)
            if g.is_over():
                break
            if g.phase != "turn":
                continue
            seat = g.current_player
            for tunnels in (1, 0):
                e = make_policy(f"expert:tunnels={tunnels}", g.board)
                e.start(g, seat, 3)
                codes, X = e.candidates(g)
                acts = [Action.decode(int(c), g.board) for c in codes]
                legal = set(int(c) for c in g.legal_action_codes())
                assert all(int(c) in legal for c in codes)
                assert len(set(map(int, codes))) == len(codes)
                st = g.state()
                offer = [st["faceup"][a.slot] for a in acts if a.kind == "draw_faceup"]
                assert len(offer) == len(set(offer))
                assert set(offer) == {st["faceup"][a.slot] for a in g.legal_actions()
                                      if a.kind == "draw_faceup"}
                longest = _longest_claim_routes(g, tunnels=bool(tunnels))
                assert set(longest) <= {a.route for a in acts if a.kind == "claim"}
                # the plan features are those of the plan tickets follows, its own
                # decision of this turn (the first candidate) having brought it up to date
                plan = e.tickets_policy.current_plan()
                assert plan["trains"] == sum(int(g.board.route_len[r]) for r in plan["routes"])
                assert plan["claims"] == len(plan["routes"])
                assert (X[:, F["left_trains"]] == plan["trains"]).all()
                assert (X[:, F["left_claims"]] == plan["claims"]).all()
                assert (X[:, F["left_points"]] == plan["open_points"]).all()
                assert (X[:, F["left_dropped"]] == sum(
                    int(g.board.ticket_points[t]) for t in plan["dropped"])).all()
                assert (X[:, F["plan_short"]] == plan["short"]).all()
                assert X[:, F["on_plan"]].tolist() == [
                    float(a.kind == "claim" and a.route in plan["routes"]) for a in acts]
                planned += len(plan["routes"])
                assert (X[:, F["longest_claim"]] == (max(int(g.board.route_len[r]) for r in longest)
                                                     if longest else 0)).all()
                if not tunnels:
                    assert not any(a.kind == "claim" and g.board.route_tunnel[a.route]
                                   for a in acts)
                for kind in ("draw_blind", "draw_tickets"):
                    if any(a.kind == kind for a in g.legal_actions()):
                        assert any(a.kind == kind for a in acts)
                fu = X[:, F["faceup"]] == 1
                assert (X[fu, F["colour_missing"]] >= 0).all()
                assert (X[fu, F["colour_missing"]] <= X[fu, F["plan_short"]]).all()
                assert (X[~fu, F["colour_missing"]] == 0).all()
                assert (X[:, F["rounds_left"]] >= 0).all()
                if st["last_round"]:
                    assert (X[:, F["rounds_left"]] == 0).all()
                    final += 1
                checked += 1
            s = make_policy("search:playouts=4,claims=4", g.board)
            s.uniform = True
            decide(s, g, seed=5)
            valued = {int(c) for c, k, *_ in s.last_decision()[0] if k}
            e = make_policy("expert", g.board)
            e.start(g, seat, 3)
            codes, _ = e.candidates(g)
            covered += sum(int(c) in valued for c in codes)
            total += len(codes)
    assert checked >= 40 and final >= 1 and planned >= 20
    assert covered >= 0.95 * total


# --- hidden information ----------------------------------------------------------------


@pytest.mark.parametrize("board,n,seed", [("europe", 2, 1), ("usa", 3, 2), ("newyork", 2, 3),
                                          ("europe", 4, 4), ("usa", 5, 5)])
def test_expert_ignores_hidden_information(board, n, seed):
    """Changing only what the seat cannot see (the others' hands but for cards known taken
    face up, deck order, the others' tickets, the ticket deck) changes neither the
    candidates, their features nor the decision."""
    changed = 0
    for turns in (0, 3, 9, 16, 24, 32, 44, 56):
        g = midgame(board, n, seed, turns)
        if g.is_over():
            continue
        seat = g.current_player
        p = make_policy("expert", g.board)
        p.start(g, seat, 7)
        codes, X = p.candidates(g)
        want = decide(make_policy("expert", g.board), g, seed=11)
        for k in range(3):
            h = g.determinized(seat, 1000 + k)
            st_g, st_h = g.state(), h.state()
            changed += st_g["deck"] != st_h["deck"] or any(
                st_g["players"][q]["hand"] != st_h["players"][q]["hand"]
                or st_g["players"][q]["tickets"] != st_h["players"][q]["tickets"]
                for q in range(n) if q != seat)
            assert h.observation(seat) == g.observation(seat)
            p.start(h, seat, 7)
            codes_h, X_h = p.candidates(h)
            np.testing.assert_array_equal(codes_h, codes)
            np.testing.assert_array_equal(X_h, X)
            assert decide(make_policy("expert", g.board), h, seed=11) == want
    assert changed >= 6


# --- reproducibility ------------------------------------------------------------------

def test_same_seed_same_games_whatever_the_workers():
    kw = dict(games=16, seed=4, batch_size=4)
    specs = ["expert", "tickets", "search:playouts=4,rollout=expert", "search:playouts=4,lead=expert"]
    a = simulate("europe", specs, n_jobs=1, **kw)
    b = simulate("europe", specs, n_jobs=2, **kw)
    for name in a.table_names:
        pd.testing.assert_frame_equal(getattr(a, name), getattr(b, name))
    c = simulate("europe", specs, n_jobs=1, games=16, seed=5, batch_size=4)
    assert not a.games["score"].equals(c.games["score"])


def test_listed_usable_by_spec_and_pickles():
    import pickle

    assert "expert" in policy_table()
    p = make_policy("expert", None)
    q = pickle.loads(pickle.dumps(p))
    assert isinstance(q, ExpertPolicy) and q.spec == "expert"
    s = make_policy("search:playouts=6,rollout=expert", None)
    g = midgame("usa", 2, seed=1)
    assert decide(s, g, seed=2) in set(g.legal_action_codes().tolist())


@pytest.mark.parametrize("spec", ["search:playouts=1,lead=expert,rollout=tickets",
                                  "search:playouts=30,phases=4,lead=expert,rollout=tickets"])
def test_the_lead_of_a_search_plays_where_the_search_does_not_depart(spec):
    """`lead=expert`: the expert's choice is the default candidate. With one playout there
    is nothing to compare, and decisions outside `phases` are not searched; either way
    the search's move is the expert's own (the expert kept in step in the same games),
    while the playouts stay `tickets`'."""
    compared = 0
    for board, n in [("usa", 2), ("europe", 3), ("newyork", 4)]:
        g = Game(board, n, seed=7)
        s = make_policy(spec, g.board)
        assert {type(p).__name__ for p in s.rollouts[:-1]} == {"TicketsPolicy"}
        e = make_policy("expert", g.board)
        others = [make_policy("tickets", g.board) for _ in range(n)]
        started = set()
        while not g.is_over():
            q = g.current_player
            first = q not in started
            started.add(q)
            if q == 0:
                a = decide(s, g, seed=3, start=first)
                searched = s.last_decision()[0] and "phases=4" in spec and g.phase == "turn"
                b = decide(e, g, seed=3, start=first)
                if not searched:
                    assert a == b, (board, g.turn, g.phase)
                    compared += 1
            else:
                a = decide(others[q], g, seed=q, start=first)
            g.apply(a)
    assert compared > 20


def test_the_lead_must_be_a_builtin_other_than_search():
    with pytest.raises(ValueError, match="unknown lead policy 'nope'"):
        make_policy("search:lead=nope", None)
    with pytest.raises(ValueError, match="unknown lead policy"):
        make_policy("search:lead=search", None)
    assert make_policy("search:lead=expert", None).params["lead"] == "expert"
    assert make_policy("search", None).params["lead"] == ""


# --- the model file -------------------------------------------------------------------

def test_missing_or_corrupt_model_file_is_a_clear_error_naming_it(tmp_path):
    missing = tmp_path / "nope.json"
    with pytest.raises(ModelFileError, match="nope.json.*not found"):
        make_policy(f"expert:model={missing}", None)
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ModelFileError, match="bad.json.*JSON"):
        make_policy(f"expert:model={bad}", None)
    path, d = _model(tmp_path, "blind", "feat.json")
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
    path, d = _model(tmp_path, "blind", "sec.json")
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
    # docs/expert.md: the shipped turn trees were refitted on whole-game labels (a
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
    same, _ = _model(tmp_path, "blind", "same.json", setup="is_tickets", turns=False)
    kw = dict(games=60, seed=3)
    for board, n in (("europe", 2), ("usa", 4), ("newyork", 3)):
        a = simulate(board, [f"expert:model={same}"] + ["tickets"] * (n - 1), **kw)
        b = simulate(board, ["tickets#x"] + ["tickets"] * (n - 1), **kw)
        np.testing.assert_array_equal(a.games["score"].to_numpy(), b.games["score"].to_numpy())
    many, _ = _model(tmp_path, "blind", "many.json", setup="most_kept", turns=False)
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
    src = json.loads(_random_model(tmp_path, 11).read_text())
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


# --- training ---------------------------------------------------------------------------

def test_turn_trees_decide_only_in_the_end_game(tmp_path):
    """Turn trees that prefer a blind draw, max_trains=15: every move equals tickets'
    game until some seat has 15 trains or fewer; at the expert's first turn after that
    it draws blind."""
    path, d = _model(tmp_path, "blind", "end.json", setup="is_tickets")
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
    assert (make_policy(spec, None).params["rollout"], other) == ("tickets", "tickets")
    path, _ = _model(tmp_path, "blind")
    spec, other = labelling_specs("search:playouts=8", path)
    assert make_policy(spec, None).params["rollout"] == other == f"expert:model={path.resolve()}"
    assert make_policy(spec, None).params["playouts"] == 8


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
    with pytest.raises(ValueError, match="holds a simulate run, not an expert training"):
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


def test_compiled_choice_matches_python_scores(tmp_path):
    """decide() on fresh policies equals the argmax of predict() (plus the margin on
    tickets' choice) over the candidates of a fresh policy started the same way, at
    setup and at turns (a model of random trees; positions of tickets play, every
    board)."""
    path = _random_model(tmp_path, 5)
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
    blind, d = _model(tmp_path, "blind")
    other = hashlib.sha256(open(blind, "rb").read()).hexdigest()[:12]
    run = simulate("usa", [f"expert:stations=0,model={blind}", "search:playouts=2,rollout=expert"],
                   games=2, seed=1)
    assert run.manifest["expert_models"] == {str(blind): other, shipped: digest}
    assert other != digest
    led = simulate("usa", ["search:playouts=2,lead=expert,rollout=tickets", "tickets"],
                   games=2, seed=1)
    assert led.manifest["expert_models"] == {shipped: digest}      # the search's lead too
    # the default search's rollout is the expert: named although the spec does not say so
    plain = simulate("usa", ["search:playouts=2", "tickets"], games=2, seed=1)
    assert plain.manifest["expert_models"] == {shipped: digest}
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


def test_search_strength_keeps_the_tables_of_two_models_apart(tmp_path, monkeypatch):
    """scripts/search_strength.py keys a table by its expert model as well as its specs
    (chunks played before and after the shipped model changed never add up in one
    table) but deals its games by the specs alone (two models play the same games)."""
    from pathlib import Path

    import ttrsim._expert

    ss = load_script("search_strength")
    t = dict(board="newyork", players=2, specs=["search:playouts=4,lead=expert", "tickets"],
             games=3)
    assert "|expert=" not in ss.key_of(dict(t, specs=["search:rollout=tickets", "tickets"]))
    assert "|expert=" in ss.key_of(dict(t, specs=["search", "tickets"]))   # expert rollouts
    chunks = [ss.play_chunk(t, 0, 3, 0)]
    other = tmp_path / "same-trees-other-bytes.json"
    other.write_text(Path(ttrsim._expert.default_model_path()).read_text() + "\n")
    monkeypatch.setattr(ttrsim._expert, "default_model_path", lambda: str(other))
    chunks.append(ss.play_chunk(t, 0, 3, 0))
    assert chunks[0]["key"] != chunks[1]["key"]
    assert {c["key"].split("|expert=")[0] for c in chunks} == {ss.games_key(t)}
    for k in ("won", "score_sum", "margin_sum", "kept"):  # the same games, the same trees
        assert chunks[0][k] == chunks[1][k], k
    path = tmp_path / "strength.json"
    path.write_text(json.dumps({"chunks": chunks}))
    rows = ss.summary(path)
    assert len(rows) == 2 and all(r["games"] == 3 for r in rows)
    assert rows[0]["search"] != rows[1]["search"]
    assert all(r["search"].startswith("search:playouts=4,lead=expert (expert=") for r in rows)


def test_expert_strength_budget_rows_resume_and_draw(tmp_path, monkeypatch):
    """scripts/expert_strength.py --part budget: one row per spec against the reference
    search, the reference against itself among them (parity), shared first places
    counted within the wins; a rerun plays only what is missing; --figure draws them."""
    es = load_script("expert_strength")
    monkeypatch.setattr(es, "BUDGET", (0.5, 1))
    monkeypatch.setattr(es, "search_budget", lambda rollout: 6 if rollout == "expert" else 0)
    path = tmp_path / "strength.json"
    argv = ["--part", "budget", "--games", "6", "--playouts", "8", "--json", str(path)]
    assert es.main(argv) == 0
    rows = json.loads(path.read_text())
    ref = "search:playouts=8,rollout=tickets"
    assert [r["specs"] for r in rows] == [["search:playouts=4,rollout=tickets", ref],
                                          [ref, ref], ["search:playouts=3", ref],
                                          ["search:playouts=6", ref]]
    for r in rows:
        assert r["part"] == "budget" and r["board"] == "newyork" and r["games"] == 6
        assert 0 <= r["shared"] <= r["wins"] <= 6 and r["cpu_ratio"] > 0
    monkeypatch.setattr(es, "BUDGET", (0.5, 1, 2))
    assert es.main(argv) == 0
    again = json.loads(path.read_text())
    assert again[:4] == rows
    assert [r["specs"][0] for r in again[4:]] == ["search:playouts=16,rollout=tickets",
                                                   "search:playouts=12"]
    png = tmp_path / "budget.png"
    assert es.main(["--json", str(path), "--figure", str(png)]) == 0
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_expert_strength_counts_shared_first_places(monkeypatch):
    """play() of scripts/expert_strength.py: `shared` is the number of games whose first
    place both seats hold (each counted as a win), as the raw tables say."""
    es = load_script("expert_strength")
    tables = []

    def spy(*args):
        out = real(*args)
        tables.append(out)
        return out

    real = es.play_batch
    monkeypatch.setattr(es, "play_batch", spy)
    r = es.play("newyork", ["tickets", "greedy"], 400, chunk=100)
    both = sum(int((t["scores"][:, :, es.RANK] == 1).all(axis=1).sum()) for t in tables)
    first = sum(int((t["scores"][t["slot"] == 0][:, es.RANK] == 1).sum()) for t in tables)
    assert len(tables) == 4 and both > 0          # New York games do end level
    assert (r["shared"], r["wins"]) == (both, first)
