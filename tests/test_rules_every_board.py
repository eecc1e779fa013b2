"""Rules that hold on several boards, tested on every board and player count where they
apply (not on one example board), so that a rule broken on one board only is caught.

Each test reads what differs between boards (tickets drawn and kept, long tickets, the
end trigger, ...) from the board itself."""
from __future__ import annotations

import itertools

import pytest

from ttrsim import maps
from ttrsim.game import Game

BOARDS = tuple(maps.available())            # every built-in board: a new one joins
LOADED = {b: maps.load(b) for b in BOARDS}
CONFIGS = [(b, n) for b in BOARDS for n in range(LOADED[b].min_players, LOADED[b].max_players + 1)]


def regular_tickets(board) -> list[int]:
    return [t for t in range(board.n_tickets) if not board.ticket_long[t]]


def keep_action(g, mask):
    return next(a for a in g.legal_actions() if a.kind == "keep" and a.mask == mask)


def masks(board):
    """Every keep mask over a full offer allowed mid-game (at least draw_keep kept)."""
    k = board.draw_tickets
    return [m for m in range(1, 1 << k) if bin(m).count("1") >= board.draw_keep]


@pytest.mark.parametrize("board_name,n", CONFIGS)
def test_tickets_returned_after_a_mid_game_draw_go_under_the_ticket_deck(board_name, n):
    """Mid-game, the tickets not kept go to the bottom of the ticket deck in the order
    offered, on every board -- also where the initial discards leave the game (Europe)."""
    board = LOADED[board_name]
    top = regular_tickets(board)[3:3 + board.draw_tickets]
    for mask in masks(board):
        g = Game.from_position(board_name, n, ticket_deck_top=top, current=n - 1)
        before = g.state()
        g.apply(next(a for a in g.legal_actions() if a.kind == "draw_tickets"))
        assert g.state()["players"][n - 1]["pending"] == top
        g.apply(keep_action(g, mask))
        g._core.check()
        st = g.state()
        kept = [t for i, t in enumerate(top) if mask >> i & 1]
        back = [t for i, t in enumerate(top) if not mask >> i & 1]
        assert st["players"][n - 1]["tickets"] == sorted(kept)
        assert st["removed"] == before["removed"]              # nothing leaves the game
        assert st["ticket_deck"] == before["ticket_deck"][len(top):] + back
        # the returned tickets come back once the deck above them is drawn
        assert len(st["ticket_deck"]) == len(before["ticket_deck"]) - len(kept)


@pytest.mark.parametrize("board_name,n", CONFIGS)
def test_tickets_returned_after_a_draw_in_a_dealt_game_go_under_the_ticket_deck(board_name, n):
    """The same rule in a game dealt normally: after the setup choice (whatever it does
    with the initial discards), a ticket draw on the first turn returns under the deck."""
    board = LOADED[board_name]
    g = Game(board_name, n, seed=31 + n)
    for _ in range(n):                                   # everyone keeps every initial ticket
        pend = g.state()["players"][g.current_player]["pending"]
        g.apply(keep_action(g, (1 << len(pend)) - 1))
    st = g.state()
    deck, removed = st["ticket_deck"], st["removed"]
    g.apply(next(a for a in g.legal_actions() if a.kind == "draw_tickets"))
    offered = g.state()["players"][0]["pending"]
    assert offered == deck[:board.draw_tickets]
    mask = (1 << board.draw_keep) - 1                    # keep the fewest allowed
    g.apply(keep_action(g, mask))
    g._core.check()
    st = g.state()
    assert st["removed"] == removed
    assert st["ticket_deck"] == deck[len(offered):] + offered[board.draw_keep:]


@pytest.mark.parametrize("board_name,n", CONFIGS)
def test_initial_discards_leave_the_game_only_where_the_board_says(board_name, n):
    board = LOADED[board_name]
    g = Game(board_name, n, seed=7 * n)
    deck = g.state()["ticket_deck"]
    dropped = []
    for _ in range(n):
        pend = g.state()["players"][g.current_player]["pending"]
        mask = (1 << board.initial_keep) - 1 if not board.deal_long else \
            (1 << len(pend)) - 1 - 1                      # Europe: drop the long ticket only
        mask = next(m for m in itertools.chain([mask], range(1, 1 << len(pend)))
                    if bin(m).count("1") >= board.initial_keep)
        dropped += [t for i, t in enumerate(pend) if not mask >> i & 1]
        g.apply(keep_action(g, mask))
    g._core.check()
    st = g.state()
    if board.initial_discards_removed:
        assert set(dropped) <= set(st["removed"]) and st["ticket_deck"] == deck
    else:
        assert st["ticket_deck"] == deck + dropped and not set(dropped) & set(st["removed"])


def plain_route(board, max_len=None):
    """A coloured route (not gray, not a tunnel or ferry), the shortest of the board."""
    ok = [r for r in range(board.n_routes)
          if board.route_color[r] >= 0 and not board.route_tunnel[r] and not board.route_ferry[r]
          and (max_len is None or board.route_len[r] <= max_len)]
    return min(ok, key=lambda r: (board.route_len[r], r))


def row_without_wilds(board, avoid):
    colors = [c for c in board.colors if c != avoid]
    assert len(colors) >= 5
    return colors[:5]


@pytest.mark.parametrize("board_name,n", CONFIGS)
@pytest.mark.parametrize("spare", [0, 1])
def test_final_round_starts_at_the_trigger_one_more_turn_each(board_name, n, spare):
    """Claiming down to the board's end trigger (trains left <= end_trigger) starts the
    final round: every player, the trigger's included, plays one more turn. One train more
    and nothing starts."""
    board = LOADED[board_name]
    r = plain_route(board)
    length, color = int(board.route_len[r]), board.colors[board.route_color[r]]
    trains = [board.end_trigger + length + spare] + [None] * (n - 1)
    g = Game.from_position(board_name, n, faceup=row_without_wilds(board, color),
                           hands=[{color: length}] + [{}] * (n - 1), trains=trains)
    # (a hand-made train count is not 45 minus the routes' lengths: no check_state here)
    g.apply(g.action("claim", route=r, color=color))
    st = g.state()
    assert st["players"][0]["trains"] == board.end_trigger + spare
    if spare:
        assert not st["last_round"]
        return
    assert st["last_round"] and st["turns_left"] == n
    for seat in list(range(1, n)) + [0]:
        assert g.current_player == seat and not g.is_over()
        g.apply(g.action("draw_blind"))
        g.apply(g.action("draw_blind"))
    assert g.is_over() and g.turn == n + 1 and not g.state()["ended_by_passes"]


@pytest.mark.parametrize("board_name,n", CONFIGS)
def test_faceup_wild_first_is_the_only_card(board_name, n):
    """On every board, a face-up wild card (locomotive, taxi) taken first ends the draw,
    and is never legal as the second card."""
    board = LOADED[board_name]
    faceup = [board.wild, *board.colors[:3], board.wild]
    g = Game.from_position(board_name, n, faceup=faceup, deck_top=[board.colors[4]] * 2)
    g.apply(g.action("draw_faceup", slot=0))
    g._core.check()
    assert g.current_player == 1 % n and g.phase == "turn" and g.turn == 1
    wild = board.colors.index(board.wild) if board.wild in board.colors else 8
    assert g.state()["players"][0]["hand"][wild] == 1
    # second card: a face-up wild is not legal, a plain one is
    g.apply(g.action("draw_faceup", slot=1))
    legal = {(a.kind, getattr(a, "slot", None)) for a in g.legal_actions()}
    assert ("draw_faceup", 4) not in legal and ("draw_faceup", 2) in legal
