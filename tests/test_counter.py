"""The counter-strategies `blocker` and `rush`: their key behaviours on hand-made
positions, legal play on every board and player count, hidden information,
reproducibility, and play in the studies, the vector environment and OpenSpiel."""
import copy
import pickle
import random

import numpy as np
import pandas as pd
import pytest

import ttrsim
from helpers import rt
from ttrsim import Game, maps
from ttrsim._batch import game_seeds, play_batch
from ttrsim._counter import BlockerPolicy, RushPolicy
from ttrsim._policies import decide
from ttrsim.actions import Action
from ttrsim.game import compile_board
from ttrsim.policies import REGISTRY, make_policy, policy_table

TABLES = [("usa", n) for n in (2, 3, 4, 5)] + [("europe", n) for n in (2, 3, 4, 5)] + \
         [("newyork", n) for n in (2, 3, 4)]


def act(game, code):
    return Action.decode(code, game.board)


# --- hand-made positions -----------------------------------------------------------------

def bridge_board(bridge_len=2):
    """Two clusters of cities, West (W1-W4) and East (E1-E3), joined by one short red
    route W3 - E1 (the bridge) and, far round, by W4 - F - E2 (eight trains)."""
    routes = [("W1", "W3", 2, "gray"), ("W1", "W2", 1, "gray"), ("W2", "W4", 3, "blue"),
              ("W3", "E1", bridge_len, "red"), ("E1", "E3", 2, "gray"), ("E2", "E3", 1, "gray"),
              ("W4", "F", 4, "gray"), ("F", "E2", 4, "gray"), ("W2", "W3", 1, "gray")]
    tickets = [("W1", "E3", 20), ("W2", "W4", 5), ("W1", "W2", 2), ("E2", "F", 6),
               ("W4", "E2", 9), ("W3", "F", 7), ("E1", "E2", 3), ("W2", "E3", 12)]
    cities = ["W1", "W2", "W3", "W4", "E1", "E2", "E3", "F"]
    data = {
        "name": f"bridge{bridge_len}", "title": "two clusters and a bridge",
        "colors": ["red", "blue"], "wild": "locomotive",
        "cities": [{"name": c, "x": 10 * i, "y": 50} for i, c in enumerate(cities)],
        "routes": [dict(id=i + 1, a=a, b=b, length=n, color=c, tunnel=False, ferry=0,
                        double=None) for i, (a, b, n, c) in enumerate(routes)],
        "tickets": [dict(id=i + 1, a=a, b=b, points=p, long=False)
                    for i, (a, b, p) in enumerate(tickets)],
        "rules": {
            "players_min": 2, "players_max": 2, "trains": 45, "stations": 0,
            "station_points": 4, "initial_hand": 4, "deal_regular": 3, "deal_long": 0,
            "initial_keep": 1, "initial_discards_removed": False, "draw_tickets": 3,
            "draw_keep": 1, "longest_bonus": 10, "double_min_players": 4, "end_trigger": 2,
            "wild_faceup_limit": 3, "max_redeals": 3, "deck": {"red": 30, "blue": 30, "wild": 10},
            "route_points": {"1": 1, "2": 2, "3": 4, "4": 7, "5": 10}, "attraction_points": 0,
            "tie_breaks": ["tickets", "fewest_stations", "longest"],
        },
    }
    return maps.from_dict(data)


def bridge_position(board, other_routes=True, other_tickets=(0,), hand=None):
    """Seat 0 (to play) owns W1 - W2 and holds W2 - W4, which its blue cards pay; seat 1
    owns W1 - W3 and E1 - E3 (unless `other_routes` is False), a piece on each side of
    the bridge, and holds W1 - E3."""
    theirs = [rt(board, "W1", "W3"), rt(board, "E1", "E3")] if other_routes else []
    return Game.from_position(board, 2, hands=[hand or {"blue": 3, "red": 2}, {"red": 4}],
                              faceup=["blue", "blue", "red", "red", "blue"],
                              tickets=[[1], list(other_tickets)],
                              routes=[[rt(board, "W1", "W2")], theirs], seed=5)


def test_blocker_cuts_the_one_route_connection_another_player_needs():
    board = bridge_board()
    g = bridge_position(board)
    bridge = rt(board, "W3", "E1")
    tickets = act(g, decide(make_policy("tickets", g.board), g, seed=1))
    assert tickets.kind == "claim" and tickets.route == rt(board, "W2", "W4")
    p = make_policy("blocker", g.board)
    a = act(g, decide(p, g, seed=1))
    assert a.kind == "claim" and a.route == bridge
    route, value, cost = p.last_block()
    assert route == bridge and value - cost >= p.margin
    # the other player's tickets are not what it reads: the same cut without them known
    # (here: another ticket held), since its routes alone show where it is going
    g2 = bridge_position(board, other_tickets=(4,))
    assert act(g2, decide(make_policy("blocker", g2.board), g2, seed=1)).route == bridge


def test_blocker_plays_tickets_when_there_is_nothing_to_cut():
    board = bridge_board()
    # the other player's routes touch neither side: nothing inferred, tickets' own move
    g = bridge_position(board, other_routes=False)
    p = make_policy("blocker", g.board)
    want = decide(make_policy("tickets", g.board), g, seed=1)
    assert decide(p, g, seed=1) == want and p.last_block() is None
    # the bridge is too long to claim off its plan (max_len 3 by default)...
    long_board = bridge_board(bridge_len=5)
    g = bridge_position(long_board, hand={"blue": 3, "red": 5})
    p = make_policy("blocker", g.board)
    assert decide(p, g, seed=1) == decide(make_policy("tickets", g.board), g, seed=1)
    # ... unless it is allowed to
    p = make_policy("blocker:max_len=5", g.board)
    assert act(g, decide(p, g, seed=1)).route == rt(long_board, "W3", "E1")
    # a margin above the cut's worth: no cut
    g = bridge_position(board)
    p = make_policy("blocker:margin=100", g.board)
    assert decide(p, g, seed=1) == decide(make_policy("tickets", g.board), g, seed=1)
    assert p.last_block()[0] == rt(board, "W3", "E1")


def test_blocker_cannot_cut_what_it_cannot_pay():
    board = bridge_board()
    g = bridge_position(board, hand={"blue": 3, "red": 1})
    assert decide(make_policy("blocker", g.board), g, seed=1) == \
        decide(make_policy("tickets", g.board), g, seed=1)


def small_board(routes, tickets, players_max=2, double_min_players=4, points=None):
    """A board of the cities the routes name: ``routes`` as (a, b, length, colour[, id of
    the other half of a double]), ``tickets`` as (a, b, points); no stations or tunnels,
    red, blue and wild cards, one ticket dealt (a few tickets deal every seat)."""
    cities = sorted({c for r in routes for c in r[:2]} | {c for t in tickets for c in t[:2]})
    data = {
        "name": "small", "title": "a hand-made board", "colors": ["red", "blue"],
        "wild": "locomotive",
        "cities": [{"name": c, "x": 10 * i, "y": 50} for i, c in enumerate(cities)],
        "routes": [dict(id=i + 1, a=r[0], b=r[1], length=r[2], color=r[3], tunnel=False, ferry=0,
                        double=r[4] if len(r) > 4 else None) for i, r in enumerate(routes)],
        "tickets": [dict(id=i + 1, a=a, b=b, points=p, long=False)
                    for i, (a, b, p) in enumerate(tickets)],
        "rules": {
            "players_min": 2, "players_max": players_max, "trains": 45, "stations": 0,
            "station_points": 4, "initial_hand": 4, "deal_regular": 1, "deal_long": 0,
            "initial_keep": 1, "initial_discards_removed": False, "draw_tickets": 3,
            "draw_keep": 1, "longest_bonus": 10, "double_min_players": double_min_players,
            "end_trigger": 2, "wild_faceup_limit": 3, "max_redeals": 3,
            "deck": {"red": 30, "blue": 30, "wild": 10},
            "route_points": points or {"1": 1, "2": 1, "3": 4, "4": 7, "5": 10, "6": 15},
            "attraction_points": 0, "tie_breaks": ["tickets", "fewest_stations", "longest"],
        },
    }
    return maps.from_dict(data)


def cut_board(double=False, players_max=2, double_min_players=4):
    """Seat 1 owns P - A and B - Q and is to join A - B (ticket 0, 10 points): by the red
    bridge A - B (2 trains; with `double`, also a blue half) or round by A - C - B (six
    trains). Seat 0 holds S - T, which one blue route of 3 joins."""
    routes = [("A", "B", 2, "red", 7 if double else None), ("A", "C", 3, "gray"),
              ("C", "B", 3, "gray"), ("P", "A", 1, "gray"), ("B", "Q", 1, "gray"),
              ("S", "T", 3, "blue")]
    if double:
        routes.append(("A", "B", 2, "blue", 1))
    tickets = [("A", "B", 10), ("S", "T", 5), ("S", "C", 4), ("T", "C", 6)]
    return small_board(routes, tickets, players_max, double_min_players)


def cut_position(board, n=2, taken=()):
    """Seat 0 (to play: blue 3, red 2) holds S - T; seat 1 owns P - A and B - Q, holds
    A - B and no cards; seat 2 (if any) owns the routes `taken`."""
    hands = [{"blue": 3, "red": 2}, {}] + [{}] * (n - 2)
    routes = [[], [3, 4]] + [list(taken)] + [[]] * (n - 3)
    return Game.from_position(board, n, hands=hands[:n], tickets=[[1], [0]] + [[]] * (n - 2),
                              routes=routes[:n], faceup=["blue", "blue", "red", "red", "blue"],
                              seed=5)


def test_blocker_weighs_a_cuts_cost_against_its_value_by_the_margin():
    """Cutting the bridge is worth 0.75 x 6 = 4.5 points to blocker (seat 1 holds one
    ticket: weight 0.5 + 0.25; a route costs seat 1 a point a train and two a claim, so
    its detour A - C - B costs 10 - 4 = 6 more) and costs it 2 + 2 / 2 - 1 = 2 (its two
    trains, half the two cards it pays, which its plan does not want, less the route's
    point): the cut is claimed when 4.5 - 2 >= margin, never at the default margin (8)."""
    board = cut_board()
    g = cut_position(board)
    bridge, plan = 0, 5
    assert act(g, decide(make_policy("tickets", g.board), g, seed=1)).route == plan
    p = make_policy("blocker", g.board)
    assert act(g, decide(p, g, seed=1)).route == plan
    route, value, cost = p.last_block()
    assert route == bridge and value == pytest.approx(4.5) and cost == pytest.approx(2.0)
    for margin, cut in ((2.4, True), (2.5, True), (2.6, False), (4.0, False), (-1.0, True)):
        p = BlockerPolicy(margin=margin)
        a = act(g, decide(p, g, seed=1))
        assert (a.kind == "claim" and a.route == bridge) == cut, margin
        assert a.kind == "claim" and a.route in (bridge, plan)
    # a bridge of 3 is worth less (the detour saves more) and costs less (it scores 4)
    board = small_board([("A", "B", 3, "red"), ("A", "C", 3, "gray"), ("C", "B", 3, "gray"),
                         ("P", "A", 1, "gray"), ("B", "Q", 1, "gray"), ("S", "T", 3, "blue")],
                        [("A", "B", 10), ("S", "T", 5), ("S", "C", 4), ("T", "C", 6)])
    g = Game.from_position(board, 2, hands=[{"blue": 3, "red": 3}, {}], tickets=[[1], [0]],
                           routes=[[], [3, 4]], faceup=["blue", "blue", "red", "red", "blue"],
                           seed=5)
    p = BlockerPolicy(margin=0)
    assert act(g, decide(p, g, seed=1)).route == 0
    # the detour costs 10 - 5 = 5 more, worth 0.75 x 5 = 3.75; the cut 3 + 3 / 2 - 4 = 0.5
    assert p.last_block()[1:] == (pytest.approx(3.75), pytest.approx(0.5))


def test_blocker_leaves_a_double_whose_other_half_stays_open():
    """With three players on a board whose doubles open both halves from three, cutting
    one half of the bridge does not cut it (seat 1 takes the other): no cut, even at
    margin 0; at two players the claim closes the other half, and at three with the
    other half taken, the one left is a cut."""
    board = cut_board(double=True, players_max=3, double_min_players=3)
    red, blue, plan = 0, 6, 5
    g = cut_position(board, n=3)
    p = make_policy("blocker:margin=0", g.board)
    a = act(g, decide(p, g, seed=1))
    assert a.route == plan and p.last_block() is None
    g = cut_position(board, n=2)
    assert act(g, decide(make_policy("blocker:margin=0", g.board), g, seed=1)).route in (red, blue)
    g = cut_position(board, n=3, taken=[blue])
    assert act(g, decide(make_policy("blocker:margin=0", g.board), g, seed=1)).route == red


def test_rush_takes_its_plans_claim_when_it_is_as_long_as_any_it_can_pay():
    """Rush holds A - B, which its plan joins by the red route of 3 its hand pays; the
    blue C - D is as long and cheaper to pay (the plan keeps the red cards): the plan's
    claim goes first. A longer route its hand pays goes before it."""
    routes = [("C", "D", 3, "blue"), ("A", "B", 3, "red"), ("E", "F", 2, "gray"),
              ("B", "E", 2, "gray")]
    tickets = [("A", "B", 8), ("E", "F", 3), ("C", "E", 4), ("D", "F", 5)]
    board = small_board(routes, tickets)
    g = Game.from_position(board, 2, hands=[{"red": 3, "blue": 3}, {}], tickets=[[0], [1]],
                           faceup=["blue", "blue", "red", "red", "blue"], seed=2)
    for seed in range(3):
        a = act(g, decide(make_policy("rush", g.board), g, seed=seed))
        assert a.kind == "claim" and a.route == 1
    board = small_board(routes + [("G", "H", 4, "blue")], tickets)
    g = Game.from_position(board, 2, hands=[{"red": 3, "blue": 4}, {}], tickets=[[0], [1]],
                           faceup=["blue", "blue", "red", "red", "blue"], seed=2)
    a = act(g, decide(make_policy("rush", g.board), g, seed=0))
    assert a.kind == "claim" and a.route == 4


def longest_affordable(g):
    """The greatest length among the claims legal now."""
    return max((int(g.board.route_len[a.route]) for a in g.legal_actions() if a.kind == "claim"),
               default=0)


def test_rush_claims_the_longest_route_its_hand_pays():
    for seed in range(4):
        hands = [{"green": 6, "red": 3, "blue": 2}, {}]
        g = Game.from_position("usa", 2, hands=hands, seed=seed,
                               faceup=["blue", "blue", "red", "red", "blue"])
        a = act(g, decide(make_policy("rush", g.board), g, seed=seed))
        assert a.kind == "claim" and int(g.board.route_len[a.route]) == longest_affordable(g) == 6
        t = act(g, decide(make_policy("tickets", g.board), g, seed=seed))
        assert not (t.kind == "claim" and int(g.board.route_len[t.route]) == 6)


def test_rush_draws_toward_the_long_route_closest_to_affordable():
    # four green cards pay no route of 6 (nor, by default, is a shorter one claimed
    # off its plan): it takes the face-up green card
    for seed in range(4):
        g = Game.from_position("usa", 2, hands=[{"green": 4}, {}], seed=seed,
                               faceup=["blue", "green", "red", "red", "blue"], tickets=[[], []])
        a = act(g, decide(make_policy("rush", g.board), g, seed=seed))
        assert a.kind == "draw_faceup" and a.slot == 1
        # and the second card too
        g.apply(decide(make_policy("rush", g.board), g, seed=seed))
        p = make_policy("rush", g.board)
        second = act(g, decide(p, g, seed=seed))
        assert second.kind in ("draw_faceup", "draw_blind")
        if second.kind == "draw_faceup":
            assert g.state()["faceup"][second.slot] == g.board.colors.index("green")


# --- legal everywhere, fast paths equal to checked play ----------------------------------

def play(board, specs, games, seed=1, check=False):
    cb = compile_board(board)
    policies = [make_policy(s, cb.board) for s in specs]
    out = play_batch(cb, len(specs), policies, game_seeds(seed, games), rotate=True,
                     summary=True, check=check)
    return out, policies


@pytest.mark.parametrize("board,n", TABLES)
def test_counter_strategies_play_complete_legal_games(board, n):
    """Alone and mixed with the other built-ins, every action checked (check=True); the
    same games unchecked give the same results; no game cut at the turn limit."""
    others = ["tickets", "expert", "random", "routes", "greedy"]
    mixes = [["blocker"] * n, ["rush"] * n,
             ["blocker", "rush"] + others[:n - 2],
             ["rush", "blocker:max_len=6,margin=0"] + others[2:2 + n - 2]]
    games = 160 if board == "newyork" else 80
    for i, specs in enumerate(mixes):
        out, policies = play(board, specs, games, seed=10 * n + i, check=True)
        assert not out["truncated"].any()
        again, _ = play(board, specs, games, seed=10 * n + i)
        for k in out:
            if isinstance(out[k], np.ndarray):
                np.testing.assert_array_equal(out[k], again[k])
    assert any(p.blocks > 0 for p in policies if isinstance(p, BlockerPolicy))


# --- hidden information ------------------------------------------------------------------

@pytest.mark.parametrize("spec", ["blocker", "rush", "blocker:max_len=6,margin=0,single=1"])
def test_decisions_use_only_what_the_seat_may_see(spec):
    """The same decision (and the same cut weighed) after everything the seat cannot see
    (deck order, other hands but for cards known taken face up, other tickets, the
    ticket deck) is resampled, at positions reached by the counter-strategies' own play
    on every board and several player counts."""
    rng = random.Random(1)
    checked = weighed = 0
    for board in ("usa", "europe", "newyork"):
        for seed in range(10):
            n = 2 + seed % 3
            g = Game(board, n, seed=seed)
            players = [make_policy(s, g.board) for s in ("blocker", "rush", "tickets", "expert")[:n]]
            for _ in range(rng.randrange(0, 150)):
                if g.is_over():
                    break
                g.apply(decide(players[g.current_player], g, seed=seed, start=False))
            if g.is_over():
                continue
            p = make_policy(spec, g.board)
            a = decide(p, g, seed=9)
            seen = p.last_block() if isinstance(p, BlockerPolicy) else None
            for k in range(3):
                h = g.determinized(g.current_player, seed + 99 + k)
                assert h.observation(g.current_player) == g.observation(g.current_player)
                q = make_policy(spec, g.board)
                assert decide(q, h, seed=9) == a, (board, seed, g.phase, str(act(g, a)))
                if isinstance(q, BlockerPolicy):
                    assert q.last_block() == seen
            checked += 1
            weighed += seen is not None
    assert checked >= 20
    assert spec == "rush" or weighed >= 3


# --- reproducibility, studies, environments ------------------------------------------------

def test_same_seed_same_games_whatever_the_workers():
    kw = dict(games=12, seed=7, batch_size=4)
    specs = ["blocker", "rush", "expert"]
    a = ttrsim.simulate("usa", specs, n_jobs=1, **kw)
    b = ttrsim.simulate("usa", specs, n_jobs=2, **kw)
    for name in a.table_names:
        pd.testing.assert_frame_equal(getattr(a, name), getattr(b, name))
    c = ttrsim.simulate("usa", specs, n_jobs=1, games=12, seed=8, batch_size=4)
    assert not a.games["score"].equals(c.games["score"])
    assert set(a.summary().index) == {"blocker", "rush", "expert"}


def test_a_study_plays_them():
    from ttrsim.analysis.studies.comparison import compare

    v = ttrsim.variant("europe", remove_routes=[1])
    c = compare("europe", v, policies=["blocker", "rush"], players=2, games=8, seed=3)
    assert len(c.table) > 0
    again = compare("europe", v, policies=["blocker", "rush"], players=2, games=8, seed=3)
    pd.testing.assert_frame_equal(c.table, again.table)


def test_vector_env_opponents():
    from test_env import replay_check

    assert replay_check("usa", 3, 3, ["blocker", "rush"], None, 200) >= 1


def test_openspiel_bots():
    pyspiel = pytest.importorskip("pyspiel")
    from ttrsim.env import encoding
    from ttrsim.env.openspiel import PolicyBot

    g = pyspiel.load_game("python_ttrsim", {"board": "newyork", "players": 2, "seed": 4})
    bots = [PolicyBot("blocker", g, seed=2), PolicyBot("rush", g, seed=3)]
    refs = [make_policy("blocker", None), make_policy("rush", None)]
    s = g.new_initial_state()
    started = [False, False]
    while not s.is_terminal():
        q = s.current_player()
        a = bots[q].step(s)
        assert a in s.legal_actions()
        code = decide(refs[q], s.game_state(), [2, 3][q], start=not started[q])
        started[q] = True
        assert a == encoding("newyork", 2).index(code)
        s.apply_action(a)


# --- parameters --------------------------------------------------------------------------

def test_registry_parameters_and_copies():
    table = policy_table()
    assert "blocker" in table and "rush" in table
    assert set(REGISTRY["blocker"].params) == {"max_len", "margin", "single", "stations",
                                              "tunnels", "risk", "draw"}
    p = make_policy("blocker:max_len=2,margin=3.5,stations=0", None)
    assert p.params["max_len"] == 2 and p.params["margin"] == 3.5 and p.params["stations"] == 0
    for q in (copy.copy(p), pickle.loads(pickle.dumps(p))):
        assert type(q) is BlockerPolicy and q.params == p.params and q.spec == p.spec
    r = make_policy("rush:min_len=5,risk=0", None)
    assert pickle.loads(pickle.dumps(r)).params == r.params == dict(min_len=5, tunnels=1, risk=0.0)
    assert isinstance(r, RushPolicy)
    for bad, msg in (("blocker:max_len=0", "max_len"), ("blocker:single=2", "single"),
                     ("rush:min_len=0", "min_len"), ("blocker:nope=1", "nope")):
        with pytest.raises(ValueError, match=msg):
            make_policy(bad, None)


# --- expert iteration against the field ------------------------------------------------------

def test_endgame_labels_with_other_seats_from_a_field():
    from ttrsim.training import generate_endgame
    from ttrsim.training.labelling import check_field

    kw = dict(board="newyork", players=3, games=2, seed=5, playouts=2, max_trains=45)
    base = generate_endgame(**kw)
    same = generate_endgame(**kw, field=("tickets",))       # the default's other seats
    np.testing.assert_array_equal(base.X, same.X)
    np.testing.assert_array_equal(base.value, same.value)
    a = generate_endgame(**kw, field=("blocker", "rush"))
    b = generate_endgame(**kw, field="blocker;rush")
    np.testing.assert_array_equal(a.X, b.X)
    np.testing.assert_array_equal(a.value, b.value)
    r = generate_endgame(**kw, field=("random",))
    assert a.X.shape != base.X.shape or not np.array_equal(a.X, base.X)
    assert r.X.shape != a.X.shape or not np.array_equal(r.X, a.X)
    assert check_field(None) is None and check_field(["rush", " blocker:margin=2 "]) == \
        ("rush", "blocker:margin=2")
    for bad in (["search"], ["nosuch"], ["blocker:nope=1"]):
        with pytest.raises(ValueError, match="field|nope"):
            check_field(bad)


def test_field_iteration_keeps_the_trees_it_goes_on_from(tmp_path):
    """Trees appended to a section: the first trees of the result are the old section
    itself, and trees whose leaves are all zero change no score."""
    import json

    from helpers import load_script
    from ttrsim._expert import default_model_path, section_from_dict

    fi = load_script("field_iteration")
    d = json.loads(open(default_model_path()).read())
    old = d["turns"]["trees"]
    assert fi.first_trees(old, len(old["roots"])) == old
    zero = fi.first_trees(old, 3)
    zero["value"] = [0.0] * len(zero["value"])
    both = fi.append_trees(old, zero)
    assert len(both["roots"]) == len(old["roots"]) + 3
    assert fi.first_trees(both, len(old["roots"])) == old
    X = np.random.default_rng(0).random((50, len(d["features"]))).astype(np.float32) * 20
    a = section_from_dict(dict(d["turns"])).predict(X)
    b = section_from_dict(dict(d["turns"], trees=both)).predict(X)
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-9)
    shifted = dict(zero, value=[1.0 if f < 0 else 0.0 for f in zero["feature"]])
    c = section_from_dict(dict(d["turns"], trees=fi.append_trees(old, shifted))).predict(X)
    np.testing.assert_allclose(c - a, 3.0, atol=1e-6)


def test_field_iteration_reads_its_curve():
    from helpers import load_script

    fi = load_script("field_iteration")
    assert fi._curve("10, 20,5:40", setup=True) == [(0, 10), (0, 20), (5, 40)]
    with pytest.raises(SystemExit, match="setup"):
        fi._curve("5:40", setup=False)
    with pytest.raises(SystemExit, match="not K or S:K"):
        fi._curve("a:b", setup=True)


def test_blind_spots_finds_a_policy_that_fails_its_tickets():
    """`tickets` against its own self-play has no short ticket; `random`, which keeps
    tickets it never pursues, has short tickets on evidence."""
    from helpers import load_script

    bs = load_script("blind_spots")
    same, base = bs.compare("newyork", "tickets", games=200, min_kept=20)
    assert same["tickets_kept_often"] > 0 and same["short"] == 0
    rnd, _ = bs.compare("newyork", "random", games=200, min_kept=20, base=base)
    assert rnd["short_on_evidence"] > 0
    assert all(t["completion_rate"] < t["tickets_rate"] - 0.05 for t in rnd["short_tickets"])
    assert "random" in bs.markdown([rnd])


def test_scripts_name_a_shipped_model_by_its_file():
    """--expert expert:model=v4 measures the model shipped under that name (its digest),
    not a file called `v4` in the working directory, and not the default model."""
    import hashlib

    from helpers import load_script
    from ttrsim._expert import default_model_path

    cs = load_script("counter_strength")
    want = hashlib.sha256(open(default_model_path("v4"), "rb").read()).hexdigest()[:12]
    assert cs.model_digest("expert:model=v4") == want
    assert cs.model_digest("expert") != want
