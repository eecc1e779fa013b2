"""Destination tickets (setup and draws), train stations, passes and the end of the game."""
from __future__ import annotations

import json
import pytest

from ttrsim import maps
from ttrsim.actions import IllegalActionError
from ttrsim.game import Game
from helpers import card, discard, hand, names, rt  # noqa: F401

USA = maps.load("usa")
EUROPE = maps.load("europe")
NY = maps.load("newyork")
ROW = ["pink", "pink", "orange", "orange", "yellow"]


def keep_masks(g) -> list:
    return sorted(a.mask for a in g.legal_actions() if a.kind == "keep")


def masks_with_at_least(n_offered, k) -> list:
    return [m for m in range(1, 1 << n_offered) if bin(m).count("1") >= min(k, n_offered)]


def play(g, kind, check=True, **kw):
    g.apply(g.action(kind, **kw))
    if check:
        g._core.check()


# ---------------------------------------------------------------------------
# ticket draws

def test_draw_three_tickets_keep_any_nonempty_subset_rest_to_the_bottom():
    g = Game.from_position("usa", 2, ticket_deck_top=[3, 7, 11, 20])
    n = len(g.state()["ticket_deck"])
    assert n == 30
    play(g, "draw_tickets")
    st = g.state()
    assert g.phase == "keep_tickets" and st["players"][0]["pending"] == [3, 7, 11]
    assert st["ticket_deck"][0] == 20 and len(st["ticket_deck"]) == 27
    assert keep_masks(g) == masks_with_at_least(3, 1)
    with pytest.raises(IllegalActionError):
        g.apply(g.action("keep", mask=0))
    play(g, "keep", mask=0b101)
    st = g.state()
    assert st["players"][0]["tickets"] == [3, 11] and st["players"][0]["n_tickets"] == 2
    assert st["ticket_deck"][-1] == 7 and len(st["ticket_deck"]) == 28
    assert g.current_player == 1 and g.turn == 1 and g.phase == "turn"


def test_two_returned_tickets_go_to_the_bottom_in_order():
    g = Game.from_position("usa", 2, ticket_deck_top=[3, 7, 11])
    play(g, "draw_tickets")
    play(g, "keep", mask=0b010)
    assert g.state()["ticket_deck"][-2:] == [3, 11]
    assert g.state()["players"][0]["tickets"] == [7]


def test_kept_tickets_are_held_to_the_end():
    g = Game.from_position("usa", 2, tickets=[[0, 1]], ticket_deck_top=[3, 7, 11])
    play(g, "draw_tickets")
    # a new draw can never return tickets held before
    assert all(m < 8 for m in keep_masks(g))
    play(g, "keep", mask=0b001)
    assert g.state()["players"][0]["tickets"] == [0, 1, 3]


def test_newyork_draws_two_keeps_at_least_one():
    g = Game.from_position("newyork", 2, ticket_deck_top=[5, 9])
    play(g, "draw_tickets")
    assert g.state()["players"][0]["pending"] == [5, 9]
    assert keep_masks(g) == [1, 2, 3]
    play(g, "keep", mask=0b10)
    assert g.state()["players"][0]["tickets"] == [9]
    assert g.state()["ticket_deck"][-1] == 5


def test_short_ticket_deck_draws_what_is_left():
    held = [t for t in range(USA.n_tickets) if t not in (4, 17)]
    g = Game.from_position("usa", 2, tickets=[held[:14], held[14:]], ticket_deck_top=[17, 4])
    play(g, "draw_tickets")
    assert g.state()["players"][0]["pending"] == [17, 4]
    assert g.state()["ticket_deck"] == []
    assert keep_masks(g) == [1, 2, 3]
    play(g, "keep", mask=0b01)
    assert g.state()["ticket_deck"] == [4]


def test_newyork_last_ticket_may_be_drawn_and_must_be_kept():
    held = [t for t in range(NY.n_tickets) if t != 6]
    g = Game.from_position("newyork", 2, tickets=[held[:9], held[9:]])
    assert g.state()["ticket_deck"] == [6]
    assert "draw_tickets" in {a.kind for a in g.legal_actions()}
    play(g, "draw_tickets")
    assert g.state()["players"][0]["pending"] == [6]
    assert keep_masks(g) == [1]
    play(g, "keep", mask=1)
    assert 6 in g.state()["players"][0]["tickets"]


def test_no_ticket_draw_from_an_empty_ticket_deck():
    g = Game.from_position("usa", 2, tickets=[list(range(15)), list(range(15, 30))])
    assert "draw_tickets" not in {a.kind for a in g.legal_actions()}
    with pytest.raises(IllegalActionError):
        g.apply(g.action("draw_tickets"))


def test_europe_long_tickets_never_in_the_ticket_deck_of_a_position():
    g = Game.from_position("europe", 2, tickets=[[40], [3]])
    st = g.state()
    assert sorted(st["ticket_deck"]) == [t for t in range(40) if t != 3]
    assert st["removed"] == [41, 42, 43, 44, 45]
    g._core.check()


# ---------------------------------------------------------------------------
# setup

@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_europe_setup_one_long_three_regular_keep_two(n):
    for seed in range(5):
        g = Game("europe", n, seed=seed)
        st = g.state()
        assert g.phase == "setup_tickets" and g.current_player == 0
        longs = []
        for q in range(n):
            pend = st["players"][q]["pending"]
            assert len(pend) == 4
            assert EUROPE.ticket_long[pend[0]] and not any(EUROPE.ticket_long[t] for t in pend[1:])
            longs.append(pend[0])
            assert st["players"][q]["tickets"] == []
        # the long tickets not dealt are out of the game, unseen; the rest are regular
        assert sorted(st["removed"] + longs) == list(range(40, 46))
        assert len(st["ticket_deck"]) == 40 - 3 * n
        assert not any(EUROPE.ticket_long[t] for t in st["ticket_deck"])
        assert keep_masks(g) == masks_with_at_least(4, 2)
        removed = set(st["removed"])
        deck = list(st["ticket_deck"])
        chosen = {}
        for q in range(n):
            assert g.current_player == q and g.phase == "setup_tickets"
            pend = g.state()["players"][q]["pending"]
            # any mix: seat 0 drops its long ticket, the others keep it
            mask = 0b1110 if q == 0 else 0b0011
            chosen[q] = [pend[i] for i in range(4) if mask >> i & 1]
            removed |= {pend[i] for i in range(4) if not mask >> i & 1}
            play(g, "keep", mask=mask)
        st = g.state()
        assert g.phase == "turn" and g.current_player == 0 and g.turn == 0
        # tickets not kept at setup leave the game, the ticket deck is unchanged
        assert set(st["removed"]) == removed and st["ticket_deck"] == deck
        for q in range(n):
            assert st["players"][q]["tickets"] == sorted(chosen[q])


@pytest.mark.parametrize("board,n,dealt,keep", [("usa", 3, 3, 2), ("newyork", 4, 2, 1)])
def test_usa_newyork_setup_returned_tickets_to_the_bottom(board, n, dealt, keep):
    bd = maps.load(board)
    g = Game(board, n, seed=11)
    st = g.state()
    assert len(st["ticket_deck"]) == bd.n_tickets - dealt * n and st["removed"] == []
    assert all(len(st["players"][q]["pending"]) == dealt for q in range(n))
    returned = []
    for q in range(n):
        assert keep_masks(g) == masks_with_at_least(dealt, keep)
        pend = g.state()["players"][q]["pending"]
        mask = (1 << keep) - 1                       # keep the minimum, return the rest
        returned += pend[keep:]
        play(g, "keep", mask=mask)
    st = g.state()
    assert st["ticket_deck"][-len(returned):] == returned
    assert len(st["ticket_deck"]) == bd.n_tickets - keep * n and st["removed"] == []


def test_setup_choice_hidden_from_the_others():
    g = Game("europe", 3, seed=4)
    obs = g.observation(1)
    assert obs["pending"] == g.state()["players"][1]["pending"]
    assert obs["tickets"] == [] and "players" in obs
    assert all(set(p) == {"trains", "stations_left", "route_points", "hand_size", "tickets"}
               for p in obs["players"])
    play(g, "keep", mask=0b1111)
    # Ruling: the choices count as simultaneous: seat 1 does not learn how many tickets
    # seat 0 kept before choosing its own
    assert g.observation(1)["players"][0]["tickets"] == 0
    assert g.observation(0)["players"][0]["tickets"] == 4
    assert g.observation(1)["tickets"] == []
    play(g, "keep", mask=0b0011)
    play(g, "keep", mask=0b0111)
    # once everyone has chosen, the counts (only) are public
    assert [p["tickets"] for p in g.observation(1)["players"]] == [4, 2, 3]
    assert g.observation(1)["tickets"] == g.state()["players"][1]["tickets"]


# ---------------------------------------------------------------------------
# stations

def station_options(g, city) -> set:
    x = g.board.city_index[city]
    return {(a.color, a.wild) for a in g.legal_actions() if a.kind == "station" and a.city == x}


def test_station_costs_one_two_three_cards():
    g = Game.from_position("europe", 2, faceup=ROW,
                           hands=[{"red": 4, "blue": 2, "green": 1, "wild": 2}, {"black": 1}])
    # 1st station: one card of any kind
    assert station_options(g, "Paris") == {("red", 0), ("blue", 0), ("green", 0), ("wild", 1)}
    play(g, "station", city="Paris", color="green")
    st = g.state()
    assert st["players"][0]["stations_left"] == 2 and st["players"][0]["stations"] == [29]
    assert st["city_station"][EUROPE.city_index["Paris"]] == 0
    assert hand(g, 0) == {"red": 4, "blue": 2, "wild": 2} and discard(g) == {"green": 1}
    assert g.current_player == 1
    play(g, "draw_blind")
    play(g, "draw_blind")
    # 2nd station: two cards of one colour, locomotives wild
    assert station_options(g, "Wien") == {("red", 0), ("red", 1), ("blue", 0), ("blue", 1),
                                          ("wild", 2)}
    play(g, "station", city="Wien", color="blue", wild=1)
    assert hand(g, 0) == {"red": 4, "blue": 1, "wild": 1}
    assert discard(g) == {"green": 1, "blue": 1, "wild": 1}
    play(g, "draw_blind")
    play(g, "draw_blind")
    # 3rd station: three of one colour
    assert station_options(g, "Roma") == {("red", 0), ("red", 1)}     # blue + 2 wild: 1 wild short
    play(g, "station", city="Roma", color="red", wild=0)
    st = g.state()
    p = st["players"][0]
    assert p["stations_left"] == 0 and p["stations"] == [29, 43, 32]
    assert hand(g, 0) == {"red": 1, "blue": 1, "wild": 1}
    play(g, "draw_blind")
    play(g, "draw_blind")
    # no fourth station
    assert not any(a.kind == "station" for a in g.legal_actions())


def test_station_needs_a_set_of_one_colour():
    g = Game.from_position("europe", 2, faceup=ROW, hands=[{"red": 1, "blue": 1, "green": 1}, {}],
                           stations=[["Paris"]])
    assert station_options(g, "Wien") == set()
    g = Game.from_position("europe", 2, faceup=ROW, hands=[{"red": 1, "blue": 1, "wild": 1}, {}],
                           stations=[["Paris"]])
    assert station_options(g, "Wien") == {("red", 1), ("blue", 1)}


def test_one_station_per_city_any_player_even_without_routes():
    g = Game.from_position("europe", 2, faceup=ROW, hands=[{"red": 1}, {}],
                           stations=[[], ["Berlin"]])
    assert station_options(g, "Berlin") == set()
    assert not g._core.is_legal(g.action("station", city="Berlin", color="red").code)
    free = {a.city for a in g.legal_actions() if a.kind == "station"}
    assert free == set(range(EUROPE.n_cities)) - {EUROPE.city_index["Berlin"]}
    assert g.state()["players"][0]["routes"] == []


def test_no_stations_on_usa_and_newyork():
    for board in ("usa", "newyork"):
        g = Game.from_position(board, 2, hands=[{"red": 3}, {}])
        assert not any(a.kind == "station" for a in g.legal_actions())


# ---------------------------------------------------------------------------
# passes and the end of the game

def tiny_board(tmp_path):
    data = {
        "name": "tiny", "title": "four cities",
        "colors": ["red", "blue"], "wild": "locomotive",
        "cities": [{"name": n, "x": 10 * i, "y": 10} for i, n in enumerate("ABCD")],
        "routes": [
            {"id": 1, "a": "A", "b": "B", "length": 1, "color": "red", "tunnel": False, "ferry": 0, "double": None},
            {"id": 2, "a": "B", "b": "C", "length": 2, "color": "blue", "tunnel": False, "ferry": 0, "double": None},
            {"id": 3, "a": "C", "b": "D", "length": 1, "color": "gray", "tunnel": False, "ferry": 0, "double": None},
        ],
        "tickets": [{"id": i + 1, "a": a, "b": b, "points": p, "long": False}
                    for i, (a, b, p) in enumerate([("A", "C", 4), ("B", "D", 3), ("A", "D", 5), ("B", "C", 2)])],
        "rules": {
            "players_min": 2, "players_max": 2, "trains": 10, "stations": 0, "station_points": 0,
            "initial_hand": 2, "deal_regular": 2, "deal_long": 0, "initial_keep": 1,
            "initial_discards_removed": False, "draw_tickets": 2, "draw_keep": 1,
            "longest_bonus": 10, "double_min_players": 3, "end_trigger": 2,
            "wild_faceup_limit": 3, "max_redeals": 3,
            "deck": {"red": 6, "blue": 6, "wild": 2},
            "route_points": {"1": 1, "2": 2}, "attraction_points": 0,
            "tie_breaks": ["tickets", "longest"],
        },
    }
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(data))
    return maps.load(str(path))


def test_all_players_pass_ends_the_game(tmp_path):
    board = tiny_board(tmp_path)
    # every route owned, every ticket held, every card in a hand: nothing to do
    g = Game.from_position(board, 2, faceup=[None] * 5,
                           hands=[{"red": 6, "wild": 2}, {"blue": 6}],
                           tickets=[[0, 1], [2, 3]], routes=[[0], [1, 2]])
    assert [a.kind for a in g.legal_actions()] == ["pass"]
    play(g, "pass")
    assert g.current_player == 1 and g.state()["passes"] == 1 and not g.is_over()
    play(g, "pass")
    st = g.state()
    assert g.is_over() and st["ended_by_passes"] and st["turn"] == 2
    sc = g.scores()
    # scored normally: seat 0 A-B (1 pt), A-C and B-D failed; seat 1 B-C-D: A-D failed,
    # B-C done; longest trail 3 for seat 1
    assert [s["route_points"] for s in sc] == [1, 3]
    assert [s["ticket_points"] for s in sc] == [-7, -3]
    assert [s["longest_bonus"] for s in sc] == [0, 10]
    assert [s["total"] for s in sc] == [-6, 10]


def test_pass_only_when_nothing_else_and_the_count_restarts(tmp_path):
    board = tiny_board(tmp_path)
    # seat 0 holds nothing; seat 1 can claim C-D with its red card
    g = Game.from_position(board, 2, faceup=[None] * 5,
                           hands=[{}, {"red": 6, "blue": 6, "wild": 2}],
                           tickets=[[0, 1], [2, 3]], routes=[[0], [1]])
    with pytest.raises(IllegalActionError):
        Game.from_position(board, 2, faceup=[None] * 5, hands=[{"red": 1}, {}],
                           tickets=[[0, 1], [2, 3]], routes=[[0], [1]]).apply(0)
    play(g, "pass")
    assert g.state()["passes"] == 1
    assert "pass" not in {a.kind for a in g.legal_actions()}
    play(g, "claim", route=2, color="red")
    # the red card paid is turned face up at the end of the turn (ruling: refill)
    assert g.state()["passes"] == 0 and g.state()["faceup"][0] == 0
    play(g, "draw_faceup", slot=0)          # one card: nothing else can be drawn
    assert g.current_player == 1 and hand(g, 0) == {"red": 1}
    play(g, "pass")
    play(g, "pass")
    assert g.is_over() and g.state()["ended_by_passes"]


def test_final_round_starts_at_two_trains_one_more_turn_each():
    r2 = rt(USA, "Atlanta", "Charleston")                  # length 2
    g = Game.from_position("usa", 3, faceup=ROW, hands=[{"red": 4}] * 3, trains=[4, 30, 30])
    play(g, "claim", route=r2, color="red", check=False)
    st = g.state()
    assert st["players"][0]["trains"] == 2 and st["last_round"] and st["turns_left"] == 3
    for seat in (1, 2, 0):                                 # each player, that one included
        assert g.current_player == seat and not g.is_over()
        play(g, "draw_blind", check=False)
        play(g, "draw_blind", check=False)
    assert g.is_over() and g.turn == 4 and not g.state()["ended_by_passes"]


def test_three_trains_left_does_not_start_the_final_round():
    r2 = rt(USA, "Atlanta", "Charleston")
    g = Game.from_position("usa", 2, faceup=ROW, hands=[{"red": 4}] * 2, trains=[5, 30])
    play(g, "claim", route=r2, color="red", check=False)
    assert g.state()["players"][0]["trains"] == 3 and not g.state()["last_round"]


def test_final_round_not_extended_by_a_second_player_at_two_trains():
    r2, r1 = rt(USA, "Atlanta", "Charleston"), rt(USA, "Atlanta", "Nashville")
    g = Game.from_position("usa", 2, faceup=ROW, hands=[{"red": 4}] * 2, trains=[3, 3])
    play(g, "claim", route=r1, color="red", check=False)     # seat 0: 2 left
    assert g.state()["turns_left"] == 2
    play(g, "claim", route=r2, color="red", check=False)     # seat 1: 1 left
    assert g.state()["turns_left"] == 1 and g.current_player == 0
    play(g, "draw_tickets", check=False)
    play(g, "keep", mask=1, check=False)
    assert g.is_over() and g.turn == 3


@pytest.mark.parametrize("name,trains,current,turns", [
    ("newyork", [10, 2], 0, 2),      # the seat before the one to move ended at 2: a round
    ("usa", [0, 0], 0, 1),           # the seat to move is at 0: its turn is the game's last
    ("usa", [30, 2, 30], 0, 2),      # seat 1 ended at 2, seat 2 has had its last turn since
    ("usa", [30, 2, 30], 2, 3),      # seat 1 has just ended at 2: seats 2, 0 and 1 play
    ("usa", [30, 2, 1], 2, 1),       # seat 2 ended at 1 before seat 1 at 2: seat 2's is last
    ("usa", [30, 3, 30], 0, 0),      # 3 trains: no final round
])
def test_a_hand_made_seat_at_two_trains_is_in_the_final_round_the_rules_make(
        name, trains, current, turns):
    """Trains change only in a seat's own turn, so a seat at 2 trains or fewer ended its
    last turn there, which began the final round, and every seat after it has had its one
    more turn since: the seats from `current` up to the first such seat play once more."""
    g = Game.from_position(name, len(trains), trains=trains, current=current)
    st = g.state()
    assert st["last_round"] == (turns > 0) and st["turns_left"] == turns
    for k in range(turns):
        assert not g.is_over() and g.current_player == (current + k) % len(trains)
        play(g, "draw_blind", check=False)
        play(g, "draw_blind", check=False)
    assert g.is_over() == (turns > 0)


