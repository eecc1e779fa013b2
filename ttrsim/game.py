"""Step-by-step play over the compiled core, for tests, notebooks and Python tools.

>>> g = Game("europe", 3, seed=7)
>>> while not g.is_over():
...     g.apply(g.legal_actions()[0])
>>> g.scores()[0]["total"]  # doctest: +SKIP
"""
from __future__ import annotations

from functools import lru_cache

import pandas as pd

from ttrsim import maps
from ttrsim._engine import CompiledBoard, GameCore
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
        return json.dumps({
            "format": "ttrsim-position", "version": 1, "board": board,
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
        board = resolve_board(d["board"])
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
                      stations=None, trains=None, current: int = 0, seed: int = 0) -> "Game":
        """A game in a hand-made position, at the start of ``current``'s turn.

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

        Card conservation is checked: a position may not use more cards of a type than
        the deck has.
        """
        board = resolve_board(board)
        board.check_players(n_players)
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
        return cls(board, _core=core)


def _seed64(seed) -> int:
    seed = int(seed)
    if seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed}")
    return seed & 0xFFFFFFFFFFFFFFFF


def _describe(code: int, board) -> str:
    try:
        return f"action {code} ({Action.decode(code, board)})"
    except (ValueError, IndexError):
        return f"action {code}"
