"""Step-by-step play over the compiled core, for tests, notebooks and Python tools.

>>> g = Game("europe", 3, seed=7)
>>> while not g.is_over():
...     g.apply(g.legal_actions()[0])
>>> g.scores()[0]["total"]  # doctest: +SKIP
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import pandas as pd

from ttrsim import maps
from ttrsim._engine import CompiledBoard, GameCore
from ttrsim._validate import check_int, is_int
from ttrsim.actions import WILD, Action, IllegalActionError, card_type, encode

__all__ = ["Game", "compile_board", "resolve_board"]


def resolve_board(board) -> "maps.Board":
    """A loaded board from a name, a path or a Board."""
    return maps.load(board) if isinstance(board, str) else board


@lru_cache(maxsize=32)
def _compiled(board) -> CompiledBoard:
    return CompiledBoard(board)


def compile_board(board) -> CompiledBoard:
    """The core's compiled form of a board (cached per board object)."""
    return _compiled(resolve_board(board))


class Game:
    """One game: ``legal_actions()``, ``apply(action)``, ``observation(seat)``, ``scores()``.

    Parameters
    ----------
    board : str or Board
        ``"usa"``, ``"europe"``, ``"newyork"``, a path to a map file, or a loaded board.
    n_players : int
        Allowed counts depend on the board (USA/Europe 2-5, New York 2-4).
    seed : int
        Seeds the shuffles: the same seed deals the same game.

    The game starts with each seat's initial ticket choice (phase ``setup_tickets``),
    seat 0 first; then seats take turns. Routes, cities and tickets are indices into the
    board's arrays (``board.route_name(i)`` etc.); cards are colour names or ``"wild"``.
    """

    def __init__(self, board="europe", n_players: int = 4, seed: int = 0, *, _core=None):
        self.board = resolve_board(board)
        if _core is None:
            self.board.check_players(n_players)
            _core = GameCore(compile_board(self.board), n_players, _seed64(seed))
        self._core = _core

    # --- play --------------------------------------------------------------------
    @property
    def n_players(self) -> int:
        return self._core.n_players

    @property
    def current_player(self) -> int:
        """Seat to act (during setup: the seat choosing its initial tickets)."""
        return self._core.current

    @property
    def phase(self) -> str:
        """``setup_tickets``, ``turn``, ``second_draw``, ``keep_tickets``, ``tunnel`` or ``over``."""
        return self._core.phase

    @property
    def turn(self) -> int:
        """Turns completed (all seats together)."""
        return self._core.turn

    def is_over(self) -> bool:
        return self._core.over

    def legal_action_codes(self):
        """Legal actions as a numpy array of stable integer codes."""
        return self._core.legal_actions()

    def legal_actions(self) -> list[Action]:
        """Legal actions of the seat to act, readable (``str(action)``) with ``.code``;
        the text names what that seat sees (face-up colours, tickets offered, tunnel cards)."""
        if self._core.over:
            return []
        view = self.observation(self.current_player)
        return [Action.decode(c, self.board, view) for c in self._core.legal_actions()]

    def apply(self, action) -> None:
        """Play an ``Action`` or its integer code; illegal ones raise IllegalActionError."""
        code = int(action.code if isinstance(action, Action) else action)
        if self._core.over:
            raise IllegalActionError("the game is over")
        if not self._core.is_legal(code):
            legal = ", ".join(str(a) for a in self.legal_actions()[:12])
            raise IllegalActionError(f"{_describe(code, self.board)} is not legal for seat "
                                     f"{self.current_player} in phase {self.phase}; legal: {legal} ...")
        self._core.apply(code)

    def action(self, kind: str, *, slot=0, route=0, city=0, color=0, wild=0, mask=0) -> Action:
        """Build an action by its fields (not checked for legality until applied):
        ``g.action("claim", route=12, color="red", wild=1)``,
        ``g.action("draw_faceup", slot=2)``, ``g.action("keep", mask=0b011)``,
        ``g.action("tunnel_pay", wild=1)``, ``g.action("station", city="Paris", color="red")``."""
        col = card_type(self.board, color)
        if kind == "claim":
            n = int(self.board.route_len[route])
            code = encode(kind, route, col, n if col == WILD else wild)
        elif kind == "station":
            x = self.board.city_index[city] if isinstance(city, str) else city
            n = self.board.stations - self.state()["players"][self.current_player]["stations_left"] + 1
            code = encode(kind, x, col, n if col == WILD else wild)
        elif kind == "draw_faceup":
            code = encode(kind, slot)
        elif kind == "keep":
            code = encode(kind, mask)
        elif kind == "tunnel_pay":
            code = encode(kind, 0, 0, wild)
        else:
            code = encode(kind)
        return Action.decode(code, self.board,
                             None if self._core.over else self.observation(self.current_player))

    # --- information ---------------------------------------------------------------
    def observation(self, seat: int) -> dict:
        """What ``seat`` may know: its hand (counts by card type, wild last) and tickets,
        the face-up row, the board, every player's score, trains, stations, hand size and
        ticket count, and the discard pile; never the deck order or others' hands/tickets."""
        return self._core.observation(seat)

    def state(self) -> dict:
        """The complete state, hidden information included (for tests and tools)."""
        return self._core.state()

    def scores(self) -> list[dict]:
        """Final score breakdown per seat: route, ticket, longest trail, station and
        attraction points, total, rank, tickets completed/failed, routes borrowed."""
        return self._core.scores()

    def score_table(self) -> pd.DataFrame:
        """``scores()`` as a DataFrame, one row per seat."""
        return pd.DataFrame(self.scores()).rename_axis("seat")

    def longest_trail(self, seat: int) -> int:
        return self._core.longest_trail(seat)

    # --- copies ----------------------------------------------------------------------
    def clone(self) -> "Game":
        """An exact copy (hidden information and random state included)."""
        return Game(self.board, _core=self._core.clone())

    def determinized(self, seat: int, seed: int) -> "Game":
        """A copy in which what ``seat`` cannot see is resampled and the random stream
        reseeded: use this for lookahead so that no hidden information leaks through the
        copy. Resampled: the deck order, the other hands, the other players' tickets and
        offers, the ticket deck, and the tickets out of the game that ``seat`` did not
        discard itself. Every count is kept, and every ticket's place keeps its class (on
        Europe, long or regular: their backs differ), so a player's number of long
        tickets is kept and the ticket deck never receives a long ticket."""
        core = self._core.clone()
        core.determinize(seat, _seed64(seed))
        return Game(self.board, _core=core)

    # --- saving positions ---------------------------------------------------------------
    def to_json(self) -> str:
        """The complete position as JSON text (hidden information included): the board
        (built-in name or map file path), the player count, the state, and a readable
        summary. ``Game.from_json`` reads it back; ``ttrsim analyse`` reads it from a file."""
        import base64
        import json

        board = self.board.path or self.board.name
        st = self.state()
        where = {}
        if self.board.variant:
            where["variant"] = self.board.variant
        elif not self.board.path and self.board.name not in maps.available():
            from ttrsim.variants import board_to_dict

            where["map"] = board_to_dict(self.board)      # a board made in memory
        return json.dumps({
            "format": "ttrsim-position", "version": 1, "board": board,
            "board_checksum": self.board.checksum, **where,
            "n_players": self.n_players,
            "state": base64.b64encode(self._core.state_bytes()).decode("ascii"),
            "summary": {"turn": st["turn"], "phase": st["phase"], "current": st["current"],
                        "faceup": st["faceup"],
                        "players": [{k: p[k] for k in ("hand", "trains", "routes", "tickets")}
                                    for p in st["players"]]},
        }, indent=1)

    def save(self, path) -> None:
        """Write ``to_json()`` to a file."""
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.to_json())

    @classmethod
    def from_json(cls, text: str) -> "Game":
        """A game from ``to_json()`` text (same ttrsim version: the state is stored in the
        core's binary layout)."""
        import base64
        import json

        try:
            d = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"not a saved position (invalid JSON: {exc})") from None
        if not isinstance(d, dict) or d.get("format") != "ttrsim-position":
            raise ValueError("not a saved position: expected a JSON object with "
                             "\"format\": \"ttrsim-position\" (write one with Game.save)")
        board = _saved_board(d)
        core = GameCore(compile_board(board), int(d["n_players"]), 0, False)
        try:
            core.load_state_bytes(base64.b64decode(d["state"]))
        except ValueError:
            raise ValueError("saved position from another ttrsim version (state size differs); "
                             "save it again with this version") from None
        return cls(board, _core=core)

    @classmethod
    def load(cls, path) -> "Game":
        """A game saved with ``save``."""
        with open(path, encoding="utf-8") as f:
            return cls.from_json(f.read())

    def __getstate__(self):
        return {"board": self.board, "core": self._core}

    def __setstate__(self, st):
        self.board, self._core = st["board"], st["core"]

    def __repr__(self) -> str:
        return (f"<Game {self.board.name} {self.n_players}p turn {self.turn} "
                f"phase {self.phase} seat {self.current_player}>")

    # --- hand-made positions -----------------------------------------------------------
    @classmethod
    def from_position(cls, board="europe", n_players: int = 2, *, hands=None, faceup=None,
                      deck_top=(), discard=None, tickets=None, ticket_deck_top=(), routes=None,
                      stations=None, trains=None, current: int = 0, seed: int = 0,
                      ids: bool = False, first_draw=None, offer=None, tunnel=None) -> "Game":
        """A game in a hand-made position, at the start of ``current``'s turn or, with
        ``first_draw``, ``offer`` or ``tunnel``, in the middle of it.

        hands : per seat, a dict ``{"red": 2, "wild": 1}`` (default empty)
        faceup : five card names (``None`` for an empty slot); default: drawn from the deck
        deck_top : card names on top of the deck, top first; the other cards not placed
            anywhere are shuffled below them
        discard : dict of card counts in the discard pile
        tickets : per seat, ticket indices held
        ticket_deck_top : ticket indices on top of the ticket deck, top first; tickets not
            held are shuffled below them (on boards that deal long tickets separately,
            as Europe, long tickets not held are out of the game, as after setup)
        routes : per seat, route indices owned (trains and route points follow)
        stations : per seat, cities (names or indices) with that seat's stations, in build order
        trains : per seat, trains left (``None`` keeps 45 minus the routes' lengths)

        ids : True: ``tickets``, ``ticket_deck_top``, ``routes``, ``offer`` and the tunnel's
            route are the map's ids (the numbering of every result table and of the map
            file) instead of indices into the board's arrays
        first_draw : a card name: ``current`` has drawn this card blind as the first of two
            draws and must draw the second (phase ``second_draw``); ``hands`` include it
        offer : tickets ``current`` has just drawn and must choose from (phase
            ``keep_tickets``; as many as a ticket draw deals, ``board.draw_tickets``)
        tunnel : ``current`` is claiming a tunnel and must pay the extra cards or decline
            (phase ``tunnel``): ``{"route": r, "color": "red", "wild": 0, "revealed":
            ["red", "wild", "blue"]}``, the cards played (``color`` and ``wild`` as in
            ``Game.action``; set aside, so not in ``hands``) and the three cards revealed
            (at least one must ask an extra card)

        Card conservation is checked: a position may not use more cards of a type than
        the deck has.
        """
        board = resolve_board(board)
        board.check_players(n_players)
        if sum(x is not None for x in (first_draw, offer, tunnel)) > 1:
            raise ValueError("give at most one of first_draw, offer and tunnel (one decision "
                             "in the middle of a turn)")
        if not 0 <= int(current) < n_players:
            raise ValueError(f"current seat {current} outside 0..{n_players - 1}")
        if ids:
            routes = [[_by_id(board, "route", r) for r in seat] for seat in (routes or [])]
            tickets = [[_by_id(board, "ticket", t) for t in seat] for seat in (tickets or [])]
            ticket_deck_top = [_by_id(board, "ticket", t) for t in ticket_deck_top]
            offer = None if offer is None else [_by_id(board, "ticket", t) for t in offer]
            if tunnel is not None:
                tunnel = dict(tunnel, route=_by_id(board, "route", tunnel.get("route")))
        hands = [_hand(board, h) for h in (hands or [])][:n_players]
        hands += [{} for _ in range(n_players - len(hands))]
        deck_top = list(deck_top)
        if first_draw is not None:
            # drawn blind from the top of the deck during the turn: it is in the hand
            t = card_type(board, first_draw)
            if hands[current].get(t, 0) < 1:
                raise ValueError(f"first_draw {first_draw!r}: the hand of seat {current} must "
                                 "hold the card drawn first")
            hands[current][t] -= 1
            deck_top = [t] + deck_top
        if offer is not None:
            offer = [int(t) for t in offer]
            if len(offer) != board.draw_tickets:
                raise ValueError(f"offer: a ticket draw deals {board.draw_tickets} tickets on "
                                 f"{board.name}, got {len(offer)}")
            ticket_deck_top = offer + [t for t in ticket_deck_top if t not in offer]
        if tunnel is not None:
            r = tunnel.get("route")
            if not is_int(r) or not 0 <= r < board.n_routes or not board.route_tunnel[r]:
                raise ValueError(f"tunnel: route {r!r} is not a tunnel of {board.name}")
            revealed = list(tunnel.get("revealed", []))
            if len(revealed) != 3:
                raise ValueError("tunnel: give the three cards revealed ('revealed')")
            col = card_type(board, tunnel.get("color", "wild"))
            n = int(board.route_len[r])
            wild = n if col == WILD else int(tunnel.get("wild", 0))
            # the cards played are set aside: back in the hand until the claim is made
            hands[current][WILD] = hands[current].get(WILD, 0) + wild
            if col != WILD:
                hands[current][col] = hands[current].get(col, 0) + n - wild
            deck_top = revealed + deck_top
        core = GameCore(compile_board(board), n_players, _seed64(seed), False)
        n = n_players

        def counts(d):
            out = [0] * 9
            for name, k in (d or {}).items():
                out[card_type(board, name)] += int(k)
            return out

        hands_ = [counts((hands or [{}] * n)[q] if q < len(hands or []) else {}) for q in range(n)]
        deck_top_ = [card_type(board, c) for c in deck_top]
        if faceup is None:
            faceup_ = None
        else:
            if len(faceup) != 5:
                raise ValueError("faceup needs five entries (None for an empty slot)")
            faceup_ = [-1 if c is None else card_type(board, c) for c in faceup]

        def per_seat(x):
            x = list(x or [])
            return [list(x[q]) if q < len(x) else [] for q in range(n)]

        stations_ = [[board.city_index[c] if isinstance(c, str) else int(c) for c in seat]
                     for seat in per_seat(stations)]
        kwargs = dict(hands=hands_, deck_top=deck_top_, discard=counts(discard),
                      tickets=per_seat(tickets), ticket_deck_top=list(ticket_deck_top),
                      routes=per_seat(routes), stations=stations_,
                      trains=list(trains) if trains is not None else None,
                      current=current, seed=_seed64(seed))
        if faceup_ is None:
            # Deal the row from the top of the shuffled rest of the deck.
            core.set_position(faceup=[-1] * 5, **kwargs)
            state = core.state()
            row = state["deck"][::-1][len(deck_top_):len(deck_top_) + 5]
            kwargs["deck_top"] = deck_top_
            faceup_ = row
        core.set_position(faceup=faceup_, **kwargs)
        game = cls(board, _core=core)
        if first_draw is not None:
            game.apply(encode("draw_blind"))
        elif offer is not None:
            game.apply(encode("draw_tickets"))
        elif tunnel is not None:
            try:
                game.apply(game.action("claim", route=tunnel["route"],
                                       color=tunnel.get("color", "wild"),
                                       wild=int(tunnel.get("wild", 0))))
            except IllegalActionError as exc:
                raise ValueError(f"tunnel: the claim is not legal in this position ({exc})") from None
            if game.phase != "tunnel":
                raise ValueError(f"tunnel: the cards revealed, {tunnel['revealed']}, ask no extra "
                                 "card, so the claim completes at once and there is no tunnel "
                                 "decision; reveal at least one card of the colour played or a wild")
        return game


def _hand(board, d) -> dict:
    """Card counts by card type from ``{"red": 2, "wild": 1}``."""
    out = {}
    for name, k in (d or {}).items():
        t = card_type(board, name)
        out[t] = out.get(t, 0) + int(k)
    return out


def _by_id(board, kind: str, ident) -> int:
    """Index of the route or ticket with map id ``ident``."""
    ids = board.route_id if kind == "route" else board.ticket_id
    if not is_int(ident):
        raise ValueError(f"{kind} id {ident!r} is not an integer")
    hit = np.flatnonzero(ids == ident)
    if not len(hit):
        raise ValueError(f"{board.name} has no {kind} with id {ident} (ids {int(ids.min())}.."
                         f"{int(ids.max())}; ids=True numbers {kind}s as the map and the tables do)")
    return int(hit[0])


def _saved_board(d: dict):
    """The board of a saved position: a variant rebuilt, a map embedded in the file, or a
    built-in name or map file; refused when its checksum differs from the one saved."""
    if d.get("variant"):
        from ttrsim.variants import rebuild

        board, source = rebuild(d["variant"]), f"variant {d['board']!r}"
    elif d.get("map"):
        board, source = maps.from_dict(d["map"], "<map saved in the position>"), "the saved map"
    else:
        try:
            board = resolve_board(d["board"])
        except (OSError, ValueError) as exc:
            raise ValueError(f"the saved position's board {d.get('board')!r} cannot be "
                             f"loaded: {exc}") from None
        source = repr(d["board"])
    want = d.get("board_checksum")
    if want is not None and board.checksum != want:
        raise ValueError(f"the position was saved on another board than {source} loads now "
                         f"(checksum {want[:12]}... saved, {board.checksum[:12]}... now): the "
                         "map file or the 'board' field changed since; load it with the "
                         "board it was saved on")
    return board


def _seed64(seed) -> int:
    return check_int("seed", seed, 0) & 0xFFFFFFFFFFFFFFFF


def _describe(code: int, board) -> str:
    try:
        return f"action {code} ({Action.decode(code, board)})"
    except (ValueError, IndexError):
        return f"action {code}"
