"""Train cards: draws, the face-up row, locomotives, re-deals, reshuffles, an empty deck.

Every test builds a hand-made position with ``Game.from_position`` (``deck_top`` fixes
what is drawn or turned up) and checks exact hands, rows, decks and discards.
"""
from __future__ import annotations

import json
from collections import Counter

import pytest

from ttrsim import maps
from ttrsim.actions import IllegalActionError
from ttrsim.game import Game
from helpers import card, discard, hand, names  # noqa: F401

USA = maps.load("usa")


# ---------------------------------------------------------------------------
# helpers

def full_deck(board) -> Counter:
    deck = Counter({c: int(n) for c, n in zip(board.colors, board.deck_colors)})
    deck["wild"] = board.deck_wild
    return deck


def rest(board, *parts) -> dict:
    """Cards of the deck not in ``parts`` (dicts of counts or lists of card names)."""
    left = full_deck(board)
    for part in parts:
        left.subtract(Counter(part) if isinstance(part, (list, tuple)) else part)
    assert min(left.values()) >= 0, left
    return {c: n for c, n in left.items() if n}


def row(g) -> list:
    return [card(g.board, c) for c in g.state()["faceup"]]


def deck_top(g, n) -> list:
    return [card(g.board, c) for c in g.state()["deck"][::-1][:n]]


def kinds(g) -> Counter:
    return Counter(a.kind for a in g.legal_actions())


def draw_slots(g) -> list:
    return sorted(a.slot for a in g.legal_actions() if a.kind == "draw_faceup")


def play(g, kind, **kw):
    g.apply(g.action(kind, **kw))
    g._core.check()


ROW = ["red", "blue", "green", "pink", "white"]


# ---------------------------------------------------------------------------
# ordinary draws

def test_two_blind_draws():
    g = Game.from_position("usa", 2, faceup=ROW, deck_top=["black", "yellow", "orange"])
    n = len(g.state()["deck"])
    play(g, "draw_blind")
    assert g.phase == "second_draw" and g.current_player == 0
    assert hand(g, 0) == {"black": 1}
    play(g, "draw_blind")
    assert hand(g, 0) == {"black": 1, "yellow": 1}
    assert g.phase == "turn" and g.current_player == 1 and g.turn == 1
    assert len(g.state()["deck"]) == n - 2
    assert deck_top(g, 1) == ["orange"] and row(g) == ROW


def test_faceup_card_is_replaced_at_once_from_the_deck():
    g = Game.from_position("usa", 2, faceup=ROW, deck_top=["black", "yellow"])
    play(g, "draw_faceup", slot=1)
    assert hand(g, 0) == {"blue": 1}
    assert row(g) == ["red", "black", "green", "pink", "white"]
    play(g, "draw_faceup", slot=1)
    assert hand(g, 0) == {"blue": 1, "black": 1}
    assert row(g) == ["red", "yellow", "green", "pink", "white"]
    assert g.current_player == 1 and discard(g) == {}


def test_faceup_then_blind_and_blind_then_faceup():
    g = Game.from_position("usa", 2, faceup=ROW, deck_top=["black", "yellow", "orange"])
    play(g, "draw_faceup", slot=0)          # red, replaced by black
    play(g, "draw_blind")                   # yellow
    assert hand(g, 0) == {"red": 1, "yellow": 1}
    assert row(g) == ["black", "blue", "green", "pink", "white"]
    play(g, "draw_blind")                   # seat 1: orange
    play(g, "draw_faceup", slot=4)          # white, replaced by the next card
    assert hand(g, 1) == {"orange": 1, "white": 1}


# ---------------------------------------------------------------------------
# locomotives

def test_faceup_locomotive_first_is_the_only_card():
    g = Game.from_position("usa", 2, faceup=["wild", "red", "blue", "green", "pink"],
                           deck_top=["black"])
    play(g, "draw_faceup", slot=0)
    assert hand(g, 0) == {"wild": 1}
    assert g.phase == "turn" and g.current_player == 1 and g.turn == 1
    assert row(g) == ["black", "red", "blue", "green", "pink"]


def test_faceup_locomotive_never_the_second_card():
    g = Game.from_position("usa", 2, faceup=["red", "wild", "blue", "wild", "pink"],
                           deck_top=["black"])
    play(g, "draw_faceup", slot=0)
    assert g.phase == "second_draw"
    assert draw_slots(g) == [0, 2, 4]
    assert kinds(g) == Counter({"draw_faceup": 3, "draw_blind": 1})
    assert not g._core.is_legal(g.action("draw_faceup", slot=1).code)
    with pytest.raises(IllegalActionError):
        g.apply(g.action("draw_faceup", slot=3))


def test_replacement_locomotive_cannot_be_taken_second():
    g = Game.from_position("usa", 2, faceup=ROW, deck_top=["wild", "black"])
    play(g, "draw_faceup", slot=2)
    assert row(g) == ["red", "blue", "wild", "pink", "white"]
    assert draw_slots(g) == [0, 1, 3, 4]
    with pytest.raises(IllegalActionError):
        g.apply(g.action("draw_faceup", slot=2))
    play(g, "draw_blind")
    assert hand(g, 0) == {"green": 1, "black": 1}


def test_faceup_locomotive_after_blind_draw_is_not_legal():
    g = Game.from_position("usa", 2, faceup=["wild", "red", "blue", "green", "pink"],
                           deck_top=["black", "white"])
    play(g, "draw_blind")
    assert draw_slots(g) == [1, 2, 3, 4]


def test_blind_locomotive_counts_as_an_ordinary_card():
    g = Game.from_position("usa", 2, faceup=ROW, deck_top=["wild", "wild"])
    play(g, "draw_blind")
    assert g.phase == "second_draw" and hand(g, 0) == {"wild": 1}
    play(g, "draw_blind")
    assert hand(g, 0) == {"wild": 2} and g.current_player == 1


def test_newyork_taxi_behaves_like_a_locomotive():
    g = Game.from_position("newyork", 2, faceup=["wild", "red", "blue", "green", "pink"],
                           deck_top=["black", "wild"])
    play(g, "draw_faceup", slot=1)          # red, replaced by black
    assert draw_slots(g) == [1, 2, 3, 4]    # the face-up taxi is not a legal second card
    play(g, "draw_blind")                   # a taxi drawn blind is fine
    assert hand(g, 0) == {"red": 1, "wild": 1}
    play(g, "draw_faceup", slot=0)          # seat 1 takes the face-up taxi: turn over
    assert hand(g, 1) == {"wild": 1} and g.current_player == 0


# ---------------------------------------------------------------------------
# re-deal of the face-up row

def test_three_locomotives_face_up_redeal_the_row():
    g = Game.from_position("usa", 2, faceup=["wild", "wild", "red", "blue", "green"],
                           deck_top=["wild", "black", "black", "white", "white", "yellow"])
    play(g, "draw_faceup", slot=2)          # red; the replacement is a 3rd locomotive
    st = g.state()
    assert st["redeals"] == 1
    assert discard(g) == {"wild": 3, "blue": 1, "green": 1}
    assert row(g) == ["black", "black", "white", "white", "yellow"]
    assert g.phase == "second_draw" and hand(g, 0) == {"red": 1}


def test_redeal_at_most_three_times_in_a_row():
    # 2 locomotives face up + 12 on top of the deck: all 14 of the deck.
    top = (["wild"]                                     # replacement: 3 face up
           + ["wild", "wild", "wild", "black", "black"]  # re-deal 1: 3 again
           + ["wild", "wild", "wild", "white", "white"]  # re-deal 2: 3 again
           + ["wild", "wild", "wild", "pink", "pink"]    # re-deal 3: 3 again, stays
           + ["red", "orange", "orange", "yellow", "yellow", "green"])
    g = Game.from_position("usa", 2, faceup=["red", "blue", "green", "wild", "wild"],
                           deck_top=top)
    play(g, "draw_faceup", slot=0)
    assert g.state()["redeals"] == 3
    assert row(g) == ["wild", "wild", "wild", "pink", "pink"]
    assert discard(g) == {"wild": 9, "blue": 1, "green": 1, "black": 2, "white": 2}
    # the row stays with 3 locomotives; only the two pink cards or a blind draw are legal
    assert draw_slots(g) == [3, 4] and kinds(g)["draw_blind"] == 1
    # Ruling: the count restarts when the row changes: taking a pink card (replaced by
    # red) leaves 3 locomotives, so the row is re-dealt once more.
    play(g, "draw_faceup", slot=3)
    assert g.state()["redeals"] == 4
    assert row(g) == ["orange", "orange", "yellow", "yellow", "green"]
    assert discard(g) == {"wild": 12, "blue": 1, "green": 1, "black": 2, "white": 2,
                          "pink": 1, "red": 1}
    assert hand(g, 0) == {"red": 1, "pink": 1} and g.current_player == 1


def test_next_turn_with_three_locomotives_left_standing():
    # After the limit the row stands with 3 locomotives; the next player may take one
    # (only card of the turn), and the replacement starts a new count of re-deals.
    top = (["wild", "wild"]
           + ["wild", "wild", "wild", "black", "black"]      # re-deal 1
           + ["wild", "wild", "wild", "black", "black"]      # re-deal 2
           + ["black", "black", "wild", "wild", "wild"]      # re-deal 3: stays
           + ["wild"]                                        # seat 1's replacement
           + ["wild", "red", "blue", "blue", "white"])       # re-deal after the restart
    g = Game.from_position("usa", 2, faceup=["red", "blue", "green", "wild", "pink"],
                           deck_top=top)
    play(g, "draw_faceup", slot=0)   # replacement wild -> 2 wilds, no re-deal
    assert row(g) == ["wild", "blue", "green", "wild", "pink"] and g.state()["redeals"] == 0
    play(g, "draw_faceup", slot=1)   # replacement wild -> 3 wilds: re-deals 1..3
    assert g.state()["redeals"] == 3
    assert row(g) == ["black", "black", "wild", "wild", "wild"]
    play(g, "draw_faceup", slot=2)   # seat 1 takes a locomotive: replaced by a wild
    assert hand(g, 1) == {"wild": 1} and g.current_player == 0
    # the replacement made 3 wilds: a new re-deal (count restarted), showing
    # wild red blue blue white
    assert g.state()["redeals"] == 4
    assert row(g) == ["wild", "red", "blue", "blue", "white"]


def test_from_position_takes_the_row_as_given():
    # Ruling: a hand-made row is not checked for locomotives.
    g = Game.from_position("usa", 2, faceup=["wild", "wild", "wild", "wild", "red"])
    assert row(g) == ["wild", "wild", "wild", "wild", "red"]
    assert g.state()["redeals"] == 0 and discard(g) == {}
    assert draw_slots(g) == [0, 1, 2, 3, 4]


def _wild_board(tmp_path):
    data = {
        "name": "wildheavy", "title": "a deck of nearly all locomotives",
        "colors": ["red", "blue"], "wild": "locomotive",
        "cities": [{"name": n, "x": 10 * i, "y": 10 * i} for i, n in enumerate("ABCD")],
        "routes": [
            {"id": 1, "a": "A", "b": "B", "length": 2, "color": "red", "tunnel": False, "ferry": 0, "double": None},
            {"id": 2, "a": "B", "b": "C", "length": 2, "color": "gray", "tunnel": False, "ferry": 0, "double": None},
            {"id": 3, "a": "C", "b": "D", "length": 3, "color": "blue", "tunnel": False, "ferry": 0, "double": None},
            {"id": 4, "a": "A", "b": "D", "length": 1, "color": "gray", "tunnel": False, "ferry": 0, "double": None},
        ],
        "tickets": [{"id": i + 1, "a": a, "b": b, "points": 3, "long": False}
                    for i, (a, b) in enumerate(["AC", "BD", "AD", "BC"])],
        "rules": {
            "players_min": 2, "players_max": 2, "trains": 6, "stations": 0, "station_points": 0,
            "initial_hand": 2, "deal_regular": 2, "deal_long": 0, "initial_keep": 1,
            "initial_discards_removed": False, "draw_tickets": 2, "draw_keep": 1,
            "longest_bonus": 10, "double_min_players": 3, "end_trigger": 1,
            "wild_faceup_limit": 3, "max_redeals": 3,
            "deck": {"red": 2, "blue": 2, "wild": 40},
            "route_points": {"1": 1, "2": 2, "3": 4}, "attraction_points": 0,
            "tie_breaks": ["tickets", "longest"],
        },
    }
    path = tmp_path / "wildheavy.json"
    path.write_text(json.dumps(data))
    return maps.load(str(path))


def test_redeal_limit_with_a_deck_of_nearly_all_locomotives(tmp_path):
    board = _wild_board(tmp_path)
    for seed in range(200):
        g = Game(board, 2, seed=seed)
        st = g.state()
        # at setup the row is re-dealt at most 3 times and then stays, however many
        # locomotives it shows
        assert st["redeals"] <= 3
        if Counter(st["faceup"])[8] >= 3:
            assert st["redeals"] == 3
        g._core.check()
        k = 0
        while not g.is_over():
            before = g.state()["redeals"]
            acts = g.legal_actions()
            g.apply(acts[(seed * 7 + k) % len(acts)])
            g._core.check()
            k += 1
            # one action changes the row at most twice (a replacement per card drawn and
            # the refill at the end of the turn), each time with at most 3 re-deals
            assert g.state()["redeals"] - before <= 6
            assert k < 2000


# ---------------------------------------------------------------------------
# reshuffles, an empty deck

def test_discards_reshuffled_when_the_deck_is_empty():
    used = {"red": 3}
    g = Game.from_position("usa", 2, faceup=ROW, discard=used,
                           hands=[{}, rest(USA, ROW, used)])
    assert g.state()["deck"] == []
    assert kinds(g)["draw_blind"] == 1
    play(g, "draw_blind")
    assert hand(g, 0) == {"red": 1}
    assert discard(g) == {} and len(g.state()["deck"]) == 2
    play(g, "draw_blind")
    assert hand(g, 0) == {"red": 2} and len(g.state()["deck"]) == 1


def test_reshuffle_mid_turn_for_a_replacement_card():
    # The deck runs out in the middle of a turn: the face-up card taken is replaced
    # from the reshuffled discards at once.
    used = {"black": 2}
    g = Game.from_position("usa", 2, faceup=ROW, discard=used, deck_top=["yellow"],
                           hands=[{}, rest(USA, ROW, used, ["yellow"])])
    play(g, "draw_blind")                     # yellow: the deck is now empty
    assert g.state()["deck"] == [] and discard(g) == {"black": 2}
    play(g, "draw_faceup", slot=0)            # red, replaced from the reshuffled discards
    assert row(g) == ["black", "blue", "green", "pink", "white"]
    assert discard(g) == {} and deck_top(g, 1) == ["black"]
    assert hand(g, 0) == {"yellow": 1, "red": 1}


def test_redeal_with_an_empty_deck_reshuffles_the_discarded_row():
    # The deck is empty: the re-deal discards the row, which is reshuffled at once
    # into the new deck the replacement row is turned from.
    used = {"wild": 1}
    g = Game.from_position("usa", 2, faceup=["wild", "wild", "red", "blue", "green"],
                           discard=used,
                           hands=[{}, rest(USA, ["wild", "wild", "red", "blue", "green"], used)])
    play(g, "draw_faceup", slot=2)    # red, replaced by the only card: a locomotive
    st = g.state()
    # the row showed 3 locomotives and was re-dealt (up to 3 times) from the 5 cards it
    # held; every card is still there
    assert st["redeals"] == 3
    assert sorted(c for c in st["faceup"] if c >= 0) == sorted([8, 8, 8, 2, 7])
    assert st["deck"] == [] and discard(g) == {}
    g._core.check()


def test_empty_deck_and_discards_slot_stays_empty_and_no_blind_draw():
    g = Game.from_position("usa", 2, faceup=ROW, hands=[{}, rest(USA, ROW)])
    assert kinds(g)["draw_blind"] == 0
    with pytest.raises(IllegalActionError):
        g.apply(g.action("draw_blind"))
    play(g, "draw_faceup", slot=0)
    assert row(g) == [None, "blue", "green", "pink", "white"]
    assert g.phase == "second_draw"
    assert draw_slots(g) == [1, 2, 3, 4] and kinds(g)["draw_blind"] == 0
    play(g, "draw_faceup", slot=3)
    assert row(g) == [None, "blue", "green", None, "white"]
    assert hand(g, 0) == {"red": 1, "pink": 1}
    # slots cannot be refilled at the end of the turn either
    assert g.current_player == 1 and row(g)[0] is None


def test_one_card_turn_when_no_second_card_can_be_taken():
    # Ruling: deck and discards empty, only locomotives left face up after the first
    # card: the turn ends with one card.
    faceup = ["red", "wild", None, "wild", None]
    g = Game.from_position("usa", 2, faceup=faceup,
                           hands=[{}, rest(USA, ["red", "wild", "wild"])])
    play(g, "draw_faceup", slot=0)
    assert hand(g, 0) == {"red": 1}
    assert g.phase == "turn" and g.current_player == 1 and g.turn == 1
    assert row(g) == [None, "wild", None, "wild", None]


def test_empty_slots_refilled_at_the_end_of_a_turn_once_cards_are_back():
    # Ruling: a slot left empty is refilled at the end of a turn once cards are
    # available (here: the cards paid for a route go to the discards).
    faceup = [None, "blue", "green", None, "white"]
    seat1 = rest(USA, ["blue", "green", "white"], {"red": 2})
    g = Game.from_position("usa", 2, faceup=faceup, hands=[{"red": 2}, seat1])
    r = next(i for i in range(USA.n_routes)
             if USA.route_len[i] == 2 and USA.route_color[i] == USA.colors.index("red"))
    play(g, "claim", route=r, color="red")
    # the two red cards were discarded, then turned up into the empty slots
    assert row(g) == ["red", "blue", "green", "red", "white"]
    assert discard(g) == {} and g.state()["deck"] == []


def test_refill_at_the_end_of_a_turn_applies_the_locomotive_rule():
    faceup = [None, "wild", "wild", None, "white"]
    seat1 = rest(USA, ["wild", "wild", "white"], {"wild": 2})
    g = Game.from_position("usa", 2, faceup=faceup, hands=[{"wild": 2}, seat1])
    r = next(i for i in range(USA.n_routes) if USA.route_len[i] == 2 and USA.route_color[i] < 0)
    play(g, "claim", route=r, color="wild")
    st = g.state()
    # 4 locomotives turned up: re-dealt from the only 5 cards there are, 3 times, then
    # the row stays
    assert st["redeals"] == 3
    assert sorted(st["faceup"]) == [1, 8, 8, 8, 8]
    assert st["deck"] == [] and discard(g) == {}


def test_unchanged_row_is_not_redealt_at_the_end_of_a_turn():
    # The row stands with 3 locomotives and an empty slot that cannot be refilled (deck
    # and discards empty): nothing is turned up, the row does not change, no re-deal.
    faceup = ["wild", "wild", "wild", None, "red"]
    g = Game.from_position("usa", 2, faceup=faceup,
                           hands=[{}, rest(USA, ["wild", "wild", "wild", "red"])])
    play(g, "draw_tickets")
    play(g, "keep", mask=0b111)
    assert row(g) == faceup and g.state()["redeals"] == 0
