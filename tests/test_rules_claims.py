"""Claiming routes: payments, trains, double routes, ferries and tunnels.

Positions are hand-made with ``Game.from_position``; ``deck_top`` fixes the cards a
tunnel reveals. Payment options are compared as exact sets: every legal way to pay is
offered and nothing more.
"""
from __future__ import annotations

from collections import Counter

import pytest

from ttrsim import maps
from ttrsim.actions import IllegalActionError
from ttrsim.game import Game
from helpers import card, discard, hand, names, rt  # noqa: F401

USA = maps.load("usa")
EUROPE = maps.load("europe")
ROW = ["pink", "pink", "orange", "orange", "yellow"]


# ---------------------------------------------------------------------------
# helpers


def options(g, route) -> set:
    """Legal payments of a route as {(colour of the plain cards, wild cards)}."""
    return {(a.color, a.wild) for a in g.legal_actions() if a.kind == "claim" and a.route == route}


def claimable(g) -> set:
    return {a.route for a in g.legal_actions() if a.kind == "claim"}


def tunnel_options(g) -> list:
    return sorted(a.wild for a in g.legal_actions() if a.kind == "tunnel_pay")


def play(g, kind, **kw):
    g.apply(g.action(kind, **kw))
    g._core.check()


# ---------------------------------------------------------------------------
# payments

def test_colour_route_payments():
    r = rt(USA, "Chicago", "Duluth")                   # 3 red
    g = Game.from_position("usa", 2, faceup=ROW, hands=[{"red": 2, "wild": 2, "blue": 3}, {}])
    assert options(g, r) == {("red", 1), ("red", 2)}
    g = Game.from_position("usa", 2, faceup=ROW, hands=[{"red": 3, "wild": 3}, {}])
    assert options(g, r) == {("red", 0), ("red", 1), ("red", 2), ("wild", 3)}
    g = Game.from_position("usa", 2, faceup=ROW, hands=[{"wild": 3, "blue": 5}, {}])
    assert options(g, r) == {("wild", 3)}
    g = Game.from_position("usa", 2, faceup=ROW, hands=[{"red": 1, "wild": 1, "blue": 5}, {}])
    assert options(g, r) == set()
    # another colour is never accepted, nor too few cards
    assert not g._core.is_legal(g.action("claim", route=r, color="blue").code)
    with pytest.raises(IllegalActionError):
        g.apply(g.action("claim", route=r, color="red", wild=1))


def test_gray_route_payments_any_one_colour():
    r = rt(USA, "Atlanta", "Charleston")               # 2 gray
    g = Game.from_position("usa", 2, faceup=ROW, hands=[{"red": 2, "blue": 1, "green": 1, "wild": 2}, {}])
    assert options(g, r) == {("red", 0), ("red", 1), ("blue", 1), ("green", 1), ("wild", 2)}
    # two different colours never pay a gray route
    g = Game.from_position("usa", 2, faceup=ROW, hands=[{"blue": 1, "green": 1}, {}])
    assert options(g, r) == set()


def test_every_legal_claim_is_a_valid_payment():
    # Over a large hand, the claim actions offered are exactly the payments the rules
    # allow, computed here independently.
    hand_ = {"red": 3, "blue": 1, "green": 4, "white": 2, "wild": 2}
    g = Game.from_position("usa", 2, faceup=ROW, hands=[hand_, {}])
    expected = set()
    for r in range(USA.n_routes):
        n, col = int(USA.route_len[r]), USA.color_name(int(USA.route_color[r]))
        for c, have in hand_.items():
            if c == "wild" or (col != "gray" and c != col):
                continue
            for w in range(0, min(hand_["wild"], n - 1) + 1):
                if 1 <= n - w <= have:
                    expected.add((r, c, w))
        if hand_["wild"] >= n:
            expected.add((r, "wild", n))
    got = {(a.route, a.color, a.wild) for a in g.legal_actions() if a.kind == "claim"}
    assert got == expected


def test_claim_pays_places_trains_and_scores():
    r = rt(USA, "Chicago", "Duluth")
    g = Game.from_position("usa", 2, faceup=ROW, hands=[{"red": 3, "wild": 2, "blue": 1}, {}],
                           discard={"green": 1})
    play(g, "claim", route=r, color="red", wild=1)
    st = g.state()
    p = st["players"][0]
    assert hand(g, 0) == {"red": 1, "wild": 1, "blue": 1}
    assert discard(g) == {"red": 2, "wild": 1, "green": 1}
    assert st["route_owner"][r] == 0 and p["routes"] == [r]
    assert p["trains"] == 45 - 3 and p["route_points"] == 4
    assert g.current_player == 1 and g.phase == "turn"
    assert r not in claimable(g)


def test_claim_needs_enough_trains():
    three, two = rt(USA, "Chicago", "Duluth"), rt(USA, "Atlanta", "Charleston")
    g = Game.from_position("usa", 2, faceup=ROW, hands=[{"red": 5}, {}], trains=[2, None])
    assert three not in claimable(g) and two in claimable(g)
    assert all(USA.route_len[r] <= 2 for r in claimable(g))
    g = Game.from_position("usa", 2, faceup=ROW, hands=[{"red": 5}, {}], trains=[3, None])
    assert three in claimable(g)


def test_route_need_not_connect_to_own_routes():
    g = Game.from_position("usa", 2, faceup=ROW, hands=[{"red": 3}, {}],
                           routes=[[rt(USA, "Calgary", "Helena")]])
    assert rt(USA, "Chicago", "Duluth") in claimable(g)


# ---------------------------------------------------------------------------
# double routes

@pytest.mark.parametrize("board,a,b,c1,c2,closed_below", [
    ("usa", "Boston", "New York", "red", "yellow", 4),
    ("europe", "Frankfurt", "Paris", "white", "orange", 4),
    ("newyork", "Central Park", "Times Square", "black", "red", 3),
])
def test_double_routes_by_player_count(board, a, b, c1, c2, closed_below):
    bd = maps.load(board)
    r1, r2 = rt(bd, a, b, c1), rt(bd, a, b, c2)
    cards = {c1: 3, c2: 3}
    for n in range(bd.min_players, bd.max_players + 1):
        # seat 1 owns one half; seat 0 may take the other only from the threshold on
        g = Game.from_position(board, n, hands=[cards] + [{}] * (n - 1), routes=[[], [r1]], seed=n)
        if n < closed_below:
            assert r2 not in claimable(g), (board, n)      # closed to everyone
            assert not g._core.is_legal(g.action("claim", route=r2, color=c2).code)
        else:
            assert r2 in claimable(g), (board, n)          # open to the others
            play(g, "claim", route=r2, color=c2)
            assert g.state()["route_owner"][r2] == 0
        # the owner of one half never gets the other
        g = Game.from_position(board, n, hands=[{}, cards] + [{}] * (n - 2), routes=[[], [r1]],
                               current=1, seed=n)
        assert r2 not in claimable(g)
        assert not g._core.is_legal(g.action("claim", route=r2, color=c2).code)


def test_both_halves_of_a_double_are_never_one_players():
    r1, r2 = rt(USA, "Boston", "New York", "red"), rt(USA, "Boston", "New York", "yellow")
    with pytest.raises(ValueError):
        Game.from_position("usa", 4, routes=[[r1, r2]])
    with pytest.raises(ValueError):                  # closed at 3 players
        Game.from_position("usa", 3, routes=[[r1], [r2]])
    Game.from_position("usa", 4, routes=[[r1], [r2]])._core.check()


# ---------------------------------------------------------------------------
# ferries

def test_ferry_needs_its_locomotives():
    r = rt(EUROPE, "Amsterdam", "London")               # 2 gray, ferry 2
    g = Game.from_position("europe", 2, faceup=ROW, hands=[{"red": 2, "wild": 1}, {}])
    assert options(g, r) == set()
    g = Game.from_position("europe", 2, faceup=ROW, hands=[{"red": 2, "wild": 2}, {}])
    assert options(g, r) == {("wild", 2)}

    r = rt(EUROPE, "Constantinople", "Sevastopol")      # 4 gray, ferry 2
    g = Game.from_position("europe", 2, faceup=ROW, hands=[{"red": 4, "wild": 1}, {}])
    assert options(g, r) == set()
    g = Game.from_position("europe", 2, faceup=ROW, hands=[{"red": 3, "green": 2, "wild": 2}, {}])
    assert options(g, r) == {("red", 2), ("green", 2)}
    g = Game.from_position("europe", 2, faceup=ROW, hands=[{"red": 1, "wild": 4}, {}])
    assert options(g, r) == {("red", 3), ("wild", 4)}


def test_ferry_claim_spends_the_locomotives():
    r = [i for i in range(EUROPE.n_routes) if EUROPE.route_name(i).startswith("Dieppe - London")][0]
    g = Game.from_position("europe", 2, faceup=ROW, hands=[{"blue": 2, "wild": 1}, {}])
    assert options(g, r) == {("blue", 1)}
    play(g, "claim", route=r, color="blue", wild=1)
    assert hand(g, 0) == {"blue": 1} and discard(g) == {"blue": 1, "wild": 1}
    assert g.state()["players"][0]["route_points"] == 2


# ---------------------------------------------------------------------------
# tunnels

def reveal_position(route_cards, revealed, faceup=ROW, **kw):
    return Game.from_position("europe", 2, faceup=faceup, hands=[route_cards, {}], deck_top=revealed, **kw)


def test_tunnel_example_1_red_revealed():
    # Rulebook example 1: playing 2 red cards, 1 red card revealed: 1 more red needed.
    r = rt(EUROPE, "Barcelona", "Pamplona")            # 2 gray tunnel
    g = reveal_position({"red": 3, "wild": 1}, ["red", "blue", "green"])
    play(g, "claim", route=r, color="red")
    st = g.state()
    assert g.phase == "tunnel" and g.current_player == 0
    assert st["tunnel"] == {"route": r, "color": 6, "wild": 0, "extra": 1,
                            "revealed": [6, 2, 7]}
    assert hand(g, 0) == {"red": 1, "wild": 1}          # the 2 red cards are on the table
    assert tunnel_options(g) == [0, 1]
    assert Counter(a.kind for a in g.legal_actions()) == {"tunnel_pay": 2, "tunnel_decline": 1}
    play(g, "tunnel_pay", wild=0)
    st = g.state()
    assert st["route_owner"][r] == 0 and st["players"][0]["trains"] == 43
    assert st["players"][0]["route_points"] == 2
    assert hand(g, 0) == {"wild": 1}
    # 3 red paid, and the 3 revealed cards discarded
    assert discard(g) == {"red": 4, "blue": 1, "green": 1}
    assert g.current_player == 1 and g.phase == "turn"


def test_tunnel_example_2_locomotive_revealed():
    # Example 2: playing 2 green cards, 1 locomotive revealed: 1 more green needed.
    r = rt(EUROPE, "Venezia", "Zürich")                # 2 green tunnel
    g = reveal_position({"green": 3}, ["wild", "red", "blue"])
    play(g, "claim", route=r, color="green")
    assert g.state()["tunnel"]["extra"] == 1
    assert tunnel_options(g) == [0]
    play(g, "tunnel_pay", wild=0)
    assert hand(g, 0) == {} and discard(g) == {"green": 3, "wild": 1, "red": 1, "blue": 1}


def test_tunnel_example_3_locomotives_only():
    # Example 3: playing 2 locomotives, 1 locomotive revealed: 1 more locomotive needed;
    # revealed green cards do not count, and the extra card must be a locomotive.
    r = rt(EUROPE, "Venezia", "Zürich")
    g = reveal_position({"wild": 3, "green": 2}, ["wild", "green", "green"])
    play(g, "claim", route=r, color="wild")
    st = g.state()
    assert st["tunnel"]["color"] == 8 and st["tunnel"]["wild"] == 2
    assert st["tunnel"]["extra"] == 1
    assert tunnel_options(g) == [1]
    assert not g._core.is_legal(g.action("tunnel_pay", wild=0).code)
    play(g, "tunnel_pay", wild=1)
    assert hand(g, 0) == {"green": 2}
    assert discard(g) == {"wild": 4, "green": 2}


def test_all_wild_tunnel_without_enough_locomotives_can_only_decline():
    r = rt(EUROPE, "Venezia", "Zürich")
    g = reveal_position({"wild": 2, "green": 5}, ["wild", "green", "green"])
    play(g, "claim", route=r, color="wild")
    assert [a.kind for a in g.legal_actions()] == ["tunnel_decline"]


def test_all_wild_tunnel_without_revealed_locomotives_is_free():
    r = rt(EUROPE, "Venezia", "Zürich")
    g = reveal_position({"wild": 2}, ["green", "green", "red"])
    play(g, "claim", route=r, color="wild")
    assert g.phase == "turn" and g.current_player == 1
    assert g.state()["route_owner"][r] == 0
    assert discard(g) == {"wild": 2, "green": 2, "red": 1}


def test_gray_tunnel_colour_is_the_colour_played():
    # Ruling: on a gray tunnel, the colour of the plain cards played is the one that
    # revealed cards must match.
    r = rt(EUROPE, "Barcelona", "Pamplona")
    g = reveal_position({"blue": 2, "red": 2}, ["blue", "red", "red"])
    play(g, "claim", route=r, color="blue")
    assert g.state()["tunnel"]["extra"] == 1
    g = reveal_position({"blue": 2, "red": 2}, ["blue", "red", "red"])
    play(g, "claim", route=r, color="red")
    assert g.state()["tunnel"]["extra"] == 2
    assert [a.kind for a in g.legal_actions()] == ["tunnel_decline"]


def test_tunnel_three_matches_and_payment_options():
    r = rt(EUROPE, "Madrid", "Pamplona", "black")      # 3 black tunnel
    g = reveal_position({"black": 4, "wild": 3}, ["black", "wild", "black"])
    play(g, "claim", route=r, color="black", wild=0)
    assert g.state()["tunnel"]["extra"] == 3
    assert hand(g, 0) == {"black": 1, "wild": 3}
    # 3 extra cards: black + wild with at most 1 black -> 2 or 3 wild
    assert tunnel_options(g) == [2, 3]
    play(g, "tunnel_pay", wild=2)
    assert hand(g, 0) == {"wild": 1}
    assert discard(g) == {"black": 6, "wild": 3}


def test_tunnel_played_with_locomotives_mixed():
    r = rt(EUROPE, "Madrid", "Pamplona", "white")      # 3 white tunnel
    g = reveal_position({"white": 2, "wild": 2}, ["white", "green", "green"])
    play(g, "claim", route=r, color="white", wild=1)
    st = g.state()
    assert st["tunnel"]["wild"] == 1 and st["tunnel"]["extra"] == 1
    assert hand(g, 0) == {"wild": 1}
    assert tunnel_options(g) == [1]
    play(g, "tunnel_pay", wild=1)
    assert hand(g, 0) == {} and discard(g) == {"white": 3, "wild": 2, "green": 2}


def test_tunnel_decline_returns_the_cards():
    r = rt(EUROPE, "Barcelona", "Pamplona")
    g = reveal_position({"red": 2, "wild": 1, "blue": 1}, ["red", "wild", "blue"],
                        discard={"pink": 1})
    play(g, "claim", route=r, color="red", wild=0)
    assert g.state()["tunnel"]["extra"] == 2
    assert tunnel_options(g) == []                     # one wild, no red left: cannot pay
    play(g, "tunnel_decline")
    st = g.state()
    assert hand(g, 0) == {"red": 2, "wild": 1, "blue": 1}
    assert st["route_owner"][r] == -1 and st["players"][0]["trains"] == 45
    assert st["players"][0]["route_points"] == 0
    # the revealed cards are discarded even when declining; the turn is over
    assert discard(g) == {"pink": 1, "red": 1, "wild": 1, "blue": 1}
    assert g.current_player == 1 and g.phase == "turn" and g.turn == 1


def test_tunnel_decline_possible_even_when_payable():
    r = rt(EUROPE, "Barcelona", "Pamplona")
    g = reveal_position({"red": 3}, ["red", "green", "blue"])
    play(g, "claim", route=r, color="red")
    assert tunnel_options(g) == [0]
    play(g, "tunnel_decline")
    assert hand(g, 0) == {"red": 3} and g.state()["route_owner"][r] == -1


def full_deck(board) -> Counter:
    deck = Counter({c: int(n) for c, n in zip(board.colors, board.deck_colors)})
    deck["wild"] = board.deck_wild
    return deck


def rest(board, *parts) -> dict:
    left = full_deck(board)
    for part in parts:
        left.subtract(Counter(part) if isinstance(part, (list, tuple)) else part)
    assert min(left.values()) >= 0, left
    return {c: n for c, n in left.items() if n}


def test_tunnel_with_fewer_than_three_cards_to_reveal():
    r = rt(EUROPE, "Barcelona", "Pamplona")
    mine = {"red": 3}
    g = Game.from_position("europe", 2, faceup=ROW, hands=[mine, rest(EUROPE, ROW, mine, ["red", "green"])],
                           deck_top=["red", "green"])
    play(g, "claim", route=r, color="red")
    st = g.state()
    assert st["tunnel"]["revealed"] == [6, 7] and st["tunnel"]["extra"] == 1
    play(g, "tunnel_pay", wild=0)
    assert discard(g) == {"red": 4, "green": 1} and g.state()["deck"] == []


def test_tunnel_reveal_reshuffles_the_discards_mid_turn():
    # One card in the deck, three in the discards: the reveal turns the deck's card, then
    # reshuffles the discards (not the cards being played) for the other two.
    r = rt(EUROPE, "Barcelona", "Pamplona")
    mine, disc = {"red": 2}, {"blue": 3}
    g = Game.from_position("europe", 2, faceup=ROW, hands=[mine, rest(EUROPE, ROW, mine, disc, ["red"])],
                           deck_top=["red"], discard=disc)
    play(g, "claim", route=r, color="red")
    st = g.state()
    assert st["tunnel"]["revealed"] == [6, 2, 2] and st["tunnel"]["extra"] == 1
    assert st["deck"] == [2] and discard(g) == {}
    play(g, "tunnel_decline")
    assert hand(g, 0) == {"red": 2} and discard(g) == {"red": 1, "blue": 2}


def test_tunnel_with_nothing_to_reveal_costs_nothing_extra():
    r = rt(EUROPE, "Barcelona", "Pamplona")
    mine = {"red": 2}
    g = Game.from_position("europe", 2, faceup=ROW, hands=[mine, rest(EUROPE, ROW, mine)])
    play(g, "claim", route=r, color="red")
    st = g.state()
    assert g.phase == "turn" and g.current_player == 1
    assert st["route_owner"][r] == 0 and st["players"][0]["route_points"] == 2
    assert discard(g) == {"red": 2}


def test_tunnel_information_only_for_the_player_paying():
    r = rt(EUROPE, "Barcelona", "Pamplona")
    g = reveal_position({"red": 3}, ["red", "green", "blue"])
    play(g, "claim", route=r, color="red")
    assert g.observation(0)["tunnel"]["extra"] == 1
    assert g.observation(1)["tunnel"] is None
