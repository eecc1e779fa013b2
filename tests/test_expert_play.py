"""The `expert` policy in play: legal actions on every board, what the model decides
(scores, the best claim, features, candidates), hidden information, reproducibility
and the lead of a search."""
import json

import numpy as np
import pandas as pd
import pytest

import ttrsim
from helpers import midgame
from ttrsim import Game
from ttrsim._batch import game_seeds, play_batch
from ttrsim._expert import FEATURES, ExpertPolicy
from ttrsim._policies import decide
from ttrsim.game import compile_board
from ttrsim.policies import make_policy, policy_table
from ttrsim.runner import simulate
from expert_models import F, TABLES, model_file, random_model
from test_bruteforce import small_board


# --- legality --------------------------------------------------------------------------

@pytest.mark.parametrize("board,n", TABLES)
def test_expert_plays_only_legal_actions_on_every_board_and_table(board, n):
    cb = compile_board(board)
    policies = [make_policy("expert", cb.board) for _ in range(n)]
    # check: every action checked for legality and every invariant after every action
    out = play_batch(cb, n, policies, game_seeds(31 + n, 12), 0, True, True, check=True)
    assert not out["truncated"].any()


@pytest.mark.parametrize("board", ["usa", "europe", "newyork", "usa-mega"])
def test_the_compiled_loop_decides_as_decide_does(board):
    """Games played by the compiled loop (which lists no legal action for a built-in
    policy) replayed decision by decision through decide() (which passes the whole
    legal list): every decision the same, so the turn candidates drawn from the legal
    list (face-up colours, the longest claims) are there in both."""
    from ttrsim._env import policy_seeds, start_policy
    from ttrsim.record import record_game

    decisions = 0
    for seed in range(4):
        codes = record_game(board, ["expert", "expert"], seed=seed).moves["code"].tolist()
        g = Game(board, 2, seed=seed)
        pols = [make_policy("expert", g.board) for _ in range(2)]
        for q, sd in enumerate(policy_seeds(seed, 2)):
            start_policy(pols[q], g, q, sd)
        for i, code in enumerate(codes):
            assert decide(pols[g.current_player], g, start=False) == code, (seed, i)
            g.apply(code)
        decisions += len(codes)
    assert decisions > 100


def test_thousands_of_expert_decisions_are_legal_custom_board_included(tmp_path):
    """Step games one decision at a time: every answer is among the legal actions
    (with the shipped model and with models that push every kind of candidate)."""
    custom = small_board(3)
    models = [None] + [model_file(tmp_path, f, f"{f}.json")[0]
                       for f in ("blind", "draw_tickets", "is_best_claim", "claim")] \
        + [random_model(tmp_path, 1)]
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
    blind, d = model_file(tmp_path, "blind")
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
    best, _ = model_file(tmp_path, "is_best_claim")
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
    """In end-game turns of every board, with `wide`: the candidates hold a face-up card of each colour
    on offer (once each), claims of the four longest routes the hand pays, a blind draw
    and a ticket draw when legal; `longest_claim` is the longest of those routes; a
    face-up candidate's `colour_missing` is at most the plan's `plan_short`; the rounds
    left are 0 in the final round; the plan features are those of the plan `tickets` follows (its routes need the
    trains and claims given, a claim is `on_plan` exactly when its route is planned).
    And the labelling search (uniform, claims=4) values
    nearly every candidate (the training labels cover them). Without `wide` (the default)
    they are those candidates but the face-up draws and the longest claims: tickets'
    move, the best claim, a blind draw and a ticket draw, `longest_claim` 0."""
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
                e = make_policy(f"expert:tunnels={tunnels},wide=1", g.board)
                e.start(g, seat, 3)
                codes, X = e.candidates(g)
                narrow = make_policy(f"expert:tunnels={tunnels}", g.board)
                narrow.start(g, seat, 3)
                ncodes, NX = narrow.candidates(g)
                assert ncodes[0] == codes[0] and set(map(int, ncodes)) <= set(map(int, codes))
                nacts = [Action.decode(int(c), g.board) for c in ncodes]
                assert len(ncodes) <= 4
                assert not any(a.kind == "draw_faceup" for a in nacts[1:])
                assert sum(a.kind == "claim" for a in nacts[1:]) <= 1
                assert (NX[:, F["longest_claim"]] == 0).all()
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
                plan = e.planner.current_plan()
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
            e = make_policy("expert:wide=1", g.board)
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

@pytest.mark.slow
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
