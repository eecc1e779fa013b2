"""Action text: readable, deterministic, and unique among the legal actions of a position.

Texts name routes and tickets by their map ids (a double route's halves differ) and,
when made with a position, what the seat to move sees: the face-up card's colour, the
tickets offered, the tunnel's extra cards.
"""
from __future__ import annotations

import numpy as np
import pytest

from ttrsim import maps
from ttrsim.actions import Action, describe, encode
from ttrsim.game import Game

from helpers import rt

EUROPE = maps.load("europe")
ROW = ["pink", "pink", "orange", "orange", "yellow"]


def same_colour_doubles(board):
    return [(i, int(board.route_partner[i])) for i in range(board.n_routes)
            if board.route_partner[i] > i
            and board.route_color[i] == board.route_color[board.route_partner[i]]]


@pytest.mark.parametrize("name", maps.available())
def test_the_halves_of_a_same_colour_double_route_read_differently(name):
    board = maps.load(name)
    pairs = same_colour_doubles(board)
    assert pairs, "every built-in board has same-colour doubles (gray ones at least)"
    for i, j in pairs:
        ti = str(Action.decode(encode("claim", i, 0, 0), board))
        tj = str(Action.decode(encode("claim", j, 0, 0), board))
        assert ti != tj
        assert f"route {int(board.route_id[i])} " in ti and f"route {int(board.route_id[j])} " in tj


def test_claim_text_names_the_route_id_both_cities_the_colour_and_the_wilds():
    r = rt(EUROPE, "Barcelona", "Pamplona")                     # 2 gray tunnel
    g = Game.from_position("europe", 2, faceup=ROW, hands=[{"red": 3, "wild": 1}, {}])
    texts = {str(a) for a in g.legal_actions() if a.kind == "claim" and a.route == r}
    rid = int(EUROPE.route_id[r])
    assert texts == {f"claim route {rid} Barcelona - Pamplona (2 gray, tunnel) with 2 red",
                     f"claim route {rid} Barcelona - Pamplona (2 gray, tunnel) with 1 red + 1 wild"}


def test_face_up_draw_names_the_colour_of_the_card():
    g = Game.from_position("europe", 2, faceup=["pink", "wild", "orange", "orange", "yellow"])
    texts = [str(a) for a in g.legal_actions() if a.kind == "draw_faceup"]
    assert texts == ["draw face-up card 0 (pink)", "draw face-up card 1 (wild)",
                     "draw face-up card 2 (orange)", "draw face-up card 3 (orange)",
                     "draw face-up card 4 (yellow)"]
    # Without a position the text can only name the slot.
    assert str(Action.decode(encode("draw_faceup", 1), EUROPE)) == "draw face-up card 1"


def test_keep_text_names_the_offered_tickets_by_id_and_name():
    t = [i for i in range(EUROPE.n_tickets) if not EUROPE.ticket_long[i]][:3]
    g = Game.from_position("europe", 2, faceup=ROW, ticket_deck_top=t)
    g.apply(g.action("draw_tickets"))
    assert g.phase == "keep_tickets"
    by_mask = {a.mask: str(a) for a in g.legal_actions()}
    name = [f"ticket {int(EUROPE.ticket_id[i])} {EUROPE.ticket_name(i)}" for i in t]
    assert by_mask[0b001] == f"keep {name[0]}"
    assert by_mask[0b101] == f"keep {name[0]}, {name[2]}"
    assert by_mask[0b111] == f"keep {name[0]}, {name[1]}, {name[2]}"
    assert "Amsterdam - Pamplona (7)" in EUROPE.ticket_name(0)   # the name format shown in docs
    # Without a position: positions in the offer.
    assert str(Action.decode(encode("keep", 0b101), EUROPE)) == "keep tickets [0, 2]"
    # An empty choice (never legal) still has a text, with or without the position.
    assert str(g.action("keep", mask=0)) == "keep tickets []"
    assert str(Action.decode(encode("keep", 0b1000), EUROPE, g.observation(0))) == "keep tickets [3]"


def test_tunnel_texts_name_the_route_and_the_cards_paid():
    r = rt(EUROPE, "Barcelona", "Pamplona")
    rid = int(EUROPE.route_id[r])
    g = Game.from_position("europe", 2, faceup=ROW, hands=[{"red": 3, "wild": 1}, {}],
                           deck_top=["red", "blue", "green"])
    g.apply(g.action("claim", route=r, color="red"))
    assert g.phase == "tunnel"
    texts = sorted(str(a) for a in g.legal_actions())
    route = f"route {rid} Barcelona - Pamplona (2 gray, tunnel)"
    assert texts == sorted([f"pay the tunnel's 1 extra cards (1 red) for {route}",
                            f"pay the tunnel's 1 extra cards (1 wild) for {route}",
                            f"tunnel decline: take back the cards played for {route}"])
    # all-wild tunnel: the extra card is a wild
    g = Game.from_position("europe", 2, faceup=ROW, hands=[{"wild": 3, "green": 2}, {}],
                           deck_top=["wild", "green", "green"])
    g.apply(g.action("claim", route=rt(EUROPE, "Venezia", "Zürich"), color="wild"))
    assert [str(a) for a in g.legal_actions() if a.kind == "tunnel_pay"] == [
        f"pay the tunnel's 1 extra cards (1 wild) for route "
        f"{int(EUROPE.route_id[rt(EUROPE, 'Venezia', 'Zürich')])} Venezia - Zürich (2 green, tunnel)"]


def test_describe_matches_legal_actions_and_is_deterministic():
    g = Game("europe", 3, seed=11)
    for _ in range(40):
        acts = g.legal_actions()
        assert [describe(a.code, g) for a in acts] == [str(a) for a in acts]
        assert [str(a) for a in Game.from_json(g.to_json()).legal_actions()] == [str(a) for a in acts]
        g.apply(acts[len(acts) // 2])


CASES = [(b, n) for b, ns in (("usa", range(2, 6)), ("europe", range(2, 6)),
                              ("newyork", range(2, 5))) for n in ns]


@pytest.mark.parametrize("board,n", CASES)
def test_every_legal_action_text_is_unique_in_random_games(board, n):
    rng = np.random.default_rng(1000 + n)
    kinds = set()
    for seed in range(8):
        g = Game(board, n, seed=seed)
        while not g.is_over():
            acts = g.legal_actions()
            texts = [str(a) for a in acts]
            assert len(set(texts)) == len(texts), (board, n, seed, g.phase, texts)
            bare = [str(Action.decode(a.code, g.board)) for a in acts]
            assert len(set(bare)) == len(bare), (board, n, seed, g.phase, bare)
            kinds.update(a.kind for a in acts)
            # Prefer claims and tunnels now and then so games reach every phase.
            claims = [a for a in acts if a.kind in ("claim", "tunnel_pay")]
            pick = claims if claims and rng.random() < 0.5 else acts
            g.apply(pick[int(rng.integers(len(pick)))])
    assert {"keep", "draw_faceup", "draw_blind", "claim", "draw_tickets"} <= kinds
    if board == "europe":
        assert {"station", "tunnel_pay", "tunnel_decline"} <= kinds
