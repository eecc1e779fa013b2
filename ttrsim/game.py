"""Step-by-step play over the compiled core, for tests, notebooks and Python tools.

>>> g = Game("europe", 3, seed=7)
>>> while not g.is_over():
...     g.apply(g.legal_actions()[0])
>>> g.scores()[0]["total"]  # doctest: +SKIP
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from ttrsim import maps
from ttrsim._engine import CompiledBoard, GameCore
from ttrsim._validate import check_int, is_int
from ttrsim.actions import WILD, Action, IllegalActionError, card_type, encode
from ttrsim.maps import resolve_board

__all__ = ["Game", "compile_board", "resolve_board"]

#: The format version of a saved position (``Game.to_json``).
POSITION_VERSION = 1


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
        """Play an ``Action`` or its integer code; illegal ones raise IllegalActionError,
        anything else a ValueError that says what an action is."""
        if isinstance(action, Action):
            code = int(action.code)
        elif is_int(action):
            code = int(action)
        else:
            raise ValueError(f"an action is an Action (from legal_actions() or action(...)) or "
                             f"its integer code, got {action!r}")
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
        import pandas as pd     # on first use: the command line starts without it

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
        (built-in name or map file path), the player count, the state (with its SHA-256,
        so that a damaged file is refused), the ttrsim version that wrote it, and a
        readable summary (routes and tickets by map id, cards by name).
        ``Game.from_json`` reads it back; ``ttrsim analyse`` reads it from a file."""
        import base64
        import hashlib
        import json

        from ttrsim._version import __version__

        board = self.board.path or self.board.name
        st = self.state()
        where = {}
        if self.board.variant:
            where["variant"] = self.board.variant
        elif not self.board.path and self.board.name not in maps.available():
            where["map"] = maps.board_to_dict(self.board)      # a board made in memory
        raw = self._core.state_bytes()
        b = self.board

        def card(t):
            return None if t < 0 else ("wild" if t == WILD else b.colors[t])

        return json.dumps({
            "format": "ttrsim-position", "version": POSITION_VERSION,
            "ttrsim_version": __version__, "board": board,
            "board_checksum": self.board.checksum, **where,
            "n_players": self.n_players,
            "state": base64.b64encode(raw).decode("ascii"),
            "state_sha256": hashlib.sha256(raw).hexdigest(),
            "summary": {"turn": st["turn"], "phase": st["phase"], "current": st["current"],
                        "faceup": [card(t) for t in st["faceup"]],
                        "players": [{"hand": {card(t): k for t, k in enumerate(p["hand"]) if k},
                                     "trains": p["trains"],
                                     "routes": [int(b.route_id[r]) for r in p["routes"]],
                                     "tickets": [int(b.ticket_id[t]) for t in p["tickets"]]}
                                    for p in st["players"]],
                        "numbering": "routes and tickets by map id (ids=True)"},
        }, indent=1)

    def save(self, path) -> None:
        """Write ``to_json()`` to a file."""
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.to_json())

    @classmethod
    def from_json(cls, text: str) -> "Game":
        """A game from ``to_json()`` text (same ttrsim version: the state is stored in the
        core's binary layout). A file that is not a whole saved position of this format
        (a field missing or out of range, the state damaged) is refused naming the field;
        the state's SHA-256 saved with it (``state_sha256``) is required, since without
        it a damaged state could not be told from a sound one."""
        import base64
        import binascii
        import hashlib
        import json

        from ttrsim._version import __version__

        try:
            d = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"not a saved position (invalid JSON: {exc})") from None
        if not isinstance(d, dict) or d.get("format") != "ttrsim-position":
            raise ValueError("not a saved position: expected a JSON object with "
                             "\"format\": \"ttrsim-position\" (write one with Game.save)")
        if d.get("version") != POSITION_VERSION:
            raise ValueError(f"saved position of format version {d.get('version')!r}; this "
                             f"ttrsim reads version {POSITION_VERSION} only: load it with the "
                             "ttrsim that saved it")
        missing = [k for k in ("board", "n_players", "state", "state_sha256")
                   if d.get(k) is None]
        if missing:
            raise ValueError(f"the saved position has no {', '.join(map(repr, missing))} field; "
                             "the file is cut short or edited: save the position again")
        board = _saved_board(d)
        n = d["n_players"]
        if not is_int(n) or not board.min_players <= n <= board.max_players:
            raise ValueError(f"the saved position's n_players must be a player count of "
                             f"{board.name} ({board.min_players} to {board.max_players}), "
                             f"got {n!r}")
        saved_by = d.get("ttrsim_version")
        damaged = "the saved position's state is damaged"
        try:
            raw = base64.b64decode(d["state"], validate=True)
        except (binascii.Error, TypeError, ValueError):
            raise ValueError(f"{damaged} (not base64 text); save the position again") from None
        if hashlib.sha256(raw).hexdigest() != d["state_sha256"]:
            raise ValueError(f"{damaged} (its SHA-256 differs from the one saved with it); "
                             "save the position again")
        core = GameCore(compile_board(board), int(n), 0, False)
        try:
            core.load_state_bytes(raw)
        except ValueError:
            if saved_by is not None and saved_by != __version__:
                raise ValueError(f"the position was saved by ttrsim {saved_by}, whose state "
                                 f"layout differs from this ttrsim's ({__version__}): load it "
                                 f"with ttrsim {saved_by}, or save it again") from None
            why = ("its size differs from this ttrsim's state" if saved_by is not None else
                   "its size differs from this ttrsim's state: damaged, or saved by another "
                   "ttrsim version")
            raise ValueError(f"{damaged} ({why}); save the position again") from None
        if core.n_players != n:
            raise ValueError(f"the saved position's n_players is {n} but its state is a "
                             f"{core.n_players}-player game; the file is edited or damaged: "
                             "save the position again")
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

        hands : one dict per seat, ``{"red": 2, "wild": 1}`` (``{}``: an empty hand; default:
            every hand empty)
        faceup : five card names (``None`` for an empty slot); default: drawn from the deck
        deck_top : card names on top of the deck, top first; the other cards not placed
            anywhere are shuffled below them
        discard : dict of card counts in the discard pile
        tickets : per seat, ticket indices held
        ticket_deck_top : ticket indices on top of the ticket deck, top first; tickets not
            held are shuffled below them (on boards that deal long tickets separately,
            as Europe, long tickets are dealt only at setup: those not held are out of the
            game, and one in ``ticket_deck_top`` or ``offer``, or more in one seat's
            ``tickets`` than setup deals it, is refused)
        routes : per seat, route indices owned (trains and route points follow)
        stations : per seat, cities (names or indices) with that seat's stations, in build order
        trains : per seat, trains left (``None`` keeps 45 minus the routes' lengths). A seat
            with the board's end trigger or fewer (2) puts the game in its final round, as
            the rules make it: trains change only in a seat's own turn, so that seat ended
            its last turn with them, which started the final round, and the seats after it
            have had their one more turn since. Every seat from ``current`` on, up to the
            first such seat in play order (itself included), takes one more turn; then the
            game is scored. ``trains=[0, 0]`` with seat 0 to move: seat 0's turn is the
            game's last.

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

        Every field is checked first: an impossible one (a negative or fractional card
        count, more cards of a colour than the deck has, a route, ticket or station in two
        places, both halves of a double route where the rules close one, more than one entry
        per seat, a seat, train count or tunnel payment out of range, a long ticket where
        setup alone deals it, a tunnel claim the seat could not make: owned or closed, too
        few trains, the wrong colour) raises one ValueError line naming the field and the
        value as given (map ids with ``ids=True``, colour names), and why in words. The
        per-seat lists other than ``hands`` may stop early: the seats not listed own
        nothing.
        """
        board = resolve_board(board)
        n = board.check_players(n_players)
        pos = _Position(board, n, ids)
        if sum(x is not None for x in (first_draw, offer, tunnel)) > 1:
            raise ValueError("give at most one of first_draw, offer and tunnel (one decision "
                             "in the middle of a turn)")
        current = check_int("current", current, 0, n - 1, " (the seat to act)")
        seed = _seed64(seed)
        hands = [pos.cards(f"hands[{q}]", h) for q, h in enumerate(pos.seats("hands", hands, True))]
        discard = pos.cards("discard", discard)
        deck_top = pos.card_list("deck_top", deck_top)
        if faceup is None:
            faceup_ = None
        else:
            if not isinstance(faceup, (list, tuple)) or len(faceup) != 5:
                raise ValueError(f"faceup needs five entries (None for an empty slot), got {faceup!r}")
            faceup_ = [-1 if c is None else pos.card("faceup", c) for c in faceup]
        tickets = [pos.tickets(f"tickets[{q}]", t) for q, t in
                   enumerate(pos.seats("tickets", tickets))]
        ticket_deck_top = pos.tickets("ticket_deck_top", ticket_deck_top)
        pos.check_long_tickets(tickets, ticket_deck_top)
        routes = [pos.routes(f"routes[{q}]", r) for q, r in enumerate(pos.seats("routes", routes))]
        stations = [pos.cities(f"stations[{q}]", x) for q, x in
                    enumerate(pos.seats("stations", stations))]
        trains = pos.seats("trains", trains)
        if first_draw is not None:
            # drawn blind from the top of the deck during the turn: it is in the hand
            t = pos.card("first_draw", first_draw)
            if hands[current][t] < 1:
                raise ValueError(f"first_draw {first_draw!r}: the hand of seat {current} must "
                                 "hold the card drawn first")
            hands[current][t] -= 1
            deck_top = [t] + deck_top
        if offer is not None:
            offer = pos.tickets("offer", offer)
            pos.check_tickets(tickets, offer, "offer")
            pos.check_long_tickets(tickets, offer, "offer")
            for t in ticket_deck_top:
                if t in offer:
                    raise ValueError(f"ticket_deck_top: {pos.ticket_label(t)} is also in offer "
                                     "(the offer is drawn from the top of the ticket deck)")
            if len(offer) != board.draw_tickets:
                raise ValueError(f"offer: a ticket draw deals {board.draw_tickets} tickets on "
                                 f"{board.name}, got {len(offer)}")
            ticket_deck_top = offer + ticket_deck_top
        pos.check_tickets(tickets, ticket_deck_top)
        pos.check_routes(routes, trains)
        pos.check_stations(stations)
        played = None
        if tunnel is not None:
            if not isinstance(tunnel, dict):
                raise ValueError("tunnel must be a dict such as {'route': r, 'color': 'red', "
                                 f"'wild': 0, 'revealed': ['red', 'wild', 'blue']}}, got {tunnel!r}")
            r = pos.route("tunnel['route']", tunnel.get("route"))
            if not board.route_tunnel[r]:
                raise ValueError(f"tunnel: {pos.route_label(r)} is not a tunnel of {board.name}")
            revealed = tunnel.get("revealed", [])
            if not isinstance(revealed, (list, tuple)) or len(revealed) != 3:
                raise ValueError("tunnel: give the three cards revealed ('revealed'), got "
                                 f"{revealed!r}")
            revealed = pos.card_list("tunnel['revealed']", revealed)
            col = pos.card("tunnel['color']", tunnel.get("color", "wild"))
            length = int(board.route_len[r])
            wild = length if col == WILD else check_int("tunnel['wild']", tunnel.get("wild", 0),
                                                        0, length, f" (route length {length})")
            pos.check_tunnel_claim(current, r, col, wild, routes, trains)
            # the cards played are set aside: back in the hand until the claim is made
            played = [0] * 9
            played[WILD] += wild
            if col != WILD:
                played[col] += length - wild
            hands[current] = [a + b for a, b in zip(hands[current], played)]
            deck_top = revealed + deck_top
            tunnel = dict(tunnel, route=r, color=col, wild=wild)
        pos.check_cards(hands, faceup_, discard, deck_top, current, played)
        core = GameCore(compile_board(board), n, seed, False)
        kwargs = dict(hands=hands, deck_top=deck_top, discard=discard, tickets=tickets,
                      ticket_deck_top=ticket_deck_top, routes=routes, stations=stations,
                      trains=None if all(t is None for t in trains) else trains,
                      current=current, seed=seed,
                      turns_left=pos.final_round_turns(routes, trains, current))
        if faceup_ is None:
            # Deal the row from the top of the shuffled rest of the deck.
            core.set_position(faceup=[-1] * 5, **kwargs)
            state = core.state()
            faceup_ = state["deck"][::-1][len(deck_top):len(deck_top) + 5]
        core.set_position(faceup=faceup_, **kwargs)
        if kwargs["trains"] is None:        # (hand-made train counts break one invariant)
            try:
                core.check()
            except AssertionError as exc:   # every field was checked: a bug if reached
                raise ValueError(f"the position is not consistent ({exc})") from None
        game = cls(board, _core=core)
        if first_draw is not None:
            game.apply(encode("draw_blind"))
        elif offer is not None:
            game.apply(encode("draw_tickets"))
        elif tunnel is not None:
            try:
                game.apply(game.action("claim", route=tunnel["route"], color=tunnel["color"],
                                       wild=tunnel["wild"]))
            except IllegalActionError:         # every reason is checked above: a bug if reached
                raise ValueError(f"tunnel: claiming {pos.route_label(tunnel['route'])} with "
                                 "these cards is not legal in this position") from None
            if game.phase != "tunnel":
                raise ValueError(f"tunnel: the cards revealed, {tunnel['revealed']}, ask no extra "
                                 "card, so the claim completes at once and there is no tunnel "
                                 "decision; reveal at least one card of the colour played or a wild")
        return game


class _Position:
    """The checks of ``Game.from_position``'s fields: each refuses a value outside its range
    with one line naming the field and the route, ticket, city or card as the user gave it
    (map ids with ``ids=True``, names for cards)."""

    def __init__(self, board, n: int, ids):
        if not isinstance(ids, (bool, np.bool_)):
            raise ValueError(f"ids must be True (map ids) or False (indices), got {ids!r}")
        self.board, self.n, self.ids = board, n, bool(ids)

    # --- labels -----------------------------------------------------------------------
    def card_name(self, t: int) -> str:
        return "wild" if t == WILD else self.board.colors[t]

    def route_label(self, r: int) -> str:
        b = self.board
        if self.ids:
            return f"route {int(b.route_id[r])} ({b.route_name(r)})"
        return f"route index {r} (map id {int(b.route_id[r])}, {b.route_name(r)})"

    def ticket_label(self, t: int) -> str:
        b = self.board
        if self.ids:
            return f"ticket {int(b.ticket_id[t])} ({b.ticket_name(t)})"
        return f"ticket index {t} (map id {int(b.ticket_id[t])}, {b.ticket_name(t)})"

    # --- one value ---------------------------------------------------------------------
    def seats(self, field: str, value, every: bool = False) -> list:
        """Per-seat entries, one per seat (``every``) or for the first seats (the others
        get None: nothing)."""
        if value is None:
            return [None] * self.n
        if not isinstance(value, (list, tuple)):
            raise ValueError(f"{field} must be a list with one entry per seat, got {value!r}")
        if len(value) > self.n or (every and len(value) != self.n):
            need = f"{self.n} (one per seat" + (", {} for an empty hand)" if every else ")")
            raise ValueError(f"{field}: {len(value)} {'entry' if len(value) == 1 else 'entries'} "
                             f"for {self.n} seats; give {need}")
        return list(value) + [None] * (self.n - len(value))

    def card(self, field: str, name) -> int:
        b = self.board
        if isinstance(name, str) and (name in ("wild", b.wild) or name in b.colors):
            return WILD if name in ("wild", b.wild) else b.colors.index(name)
        if is_int(name) and (name == WILD or 0 <= name < len(b.colors)):
            return int(name)
        raise ValueError(f"{field}: unknown card {name!r} on {b.name}; the cards are "
                         f"{', '.join(b.colors)} and wild")

    def card_list(self, field: str, names) -> list:
        if isinstance(names, (str, dict)) or not hasattr(names, "__iter__"):
            raise ValueError(f"{field} must be a list of card names, got {names!r}")
        return [self.card(field, c) for c in names]

    def cards(self, field: str, d) -> list:
        """Counts by card type (nine) from ``{"red": 2, "wild": 1}``."""
        out = [0] * 9
        if d is None:
            return out
        if not isinstance(d, dict):
            raise ValueError(f"{field} must be a dict of card counts such as "
                             f"{{'red': 2, 'wild': 1}}, got {d!r}")
        for name, k in d.items():
            t = self.card(field, name)
            if not is_int(k) or k < 0:
                raise ValueError(f"{field}: {k!r} {self.card_name(t)} cards; a count of cards "
                                 "is a whole number >= 0")
            out[t] += int(k)
        return out

    def _index(self, field: str, kind: str, x) -> int:
        b = self.board
        ids = b.route_id if kind == "route" else b.ticket_id
        if not is_int(x):
            raise ValueError(f"{field}: {kind} {x!r} is not a whole number (a {kind} "
                             f"{'id' if self.ids else 'index'})")
        if self.ids:
            hit = np.flatnonzero(ids == x)
            if not len(hit):
                raise ValueError(f"{field}: {b.name} has no {kind} with id {x} (ids "
                                 f"{int(ids.min())}..{int(ids.max())}; ids=True numbers {kind}s "
                                 "as the map and the tables do)")
            return int(hit[0])
        if not 0 <= x < len(ids):
            raise ValueError(f"{field}: {kind} index {x} outside 0..{len(ids) - 1} on {b.name} "
                             "(ids=True takes the map's ids)")
        return int(x)

    def route(self, field: str, r) -> int:
        return self._index(field, "route", r)

    def _list(self, field: str, values, what: str) -> list:
        if values is None:
            return []
        if isinstance(values, (str, dict)) or not hasattr(values, "__iter__"):
            raise ValueError(f"{field} must be a list of {what}, got {values!r}")
        return list(values)

    def routes(self, field: str, values) -> list:
        return [self.route(field, r) for r in self._list(field, values, "routes")]

    def tickets(self, field: str, values) -> list:
        return [self._index(field, "ticket", t) for t in self._list(field, values, "tickets")]

    def cities(self, field: str, values) -> list:
        b, out = self.board, []
        for x in self._list(field, values, "cities"):
            if isinstance(x, str) and x in b.city_index:
                out.append(b.city_index[x])
            elif is_int(x) and 0 <= x < b.n_cities:
                out.append(int(x))
            else:
                raise ValueError(f"{field}: unknown city {x!r} on {b.name} (a city name or an "
                                 f"index 0..{b.n_cities - 1})")
        return out

    # --- the whole position -------------------------------------------------------------
    def check_tickets(self, tickets, deck_top, deck_field: str = "ticket_deck_top") -> None:
        """Each ticket in one place: one seat's tickets, or the top of the ticket deck."""
        where = {}
        places = [(f"tickets[{q}]", ts) for q, ts in enumerate(tickets)]
        for field, ts in places + [(deck_field, deck_top)]:
            for t in ts:
                if t in where:
                    again = "given twice" if where[t] == field else f"also in {where[t]}"
                    raise ValueError(f"{field}: {self.ticket_label(t)} is {again}; a ticket "
                                     "is in one place")
                where[t] = field

    def check_long_tickets(self, tickets, deck_top, deck_field: str = "ticket_deck_top") -> None:
        """On a board that deals long tickets apart (Europe), long tickets are dealt only at
        setup: none is offered or in the ticket deck later, and no seat holds more than
        setup deals it."""
        b = self.board
        if not b.deal_long:
            return
        setup = (f"on {b.name} long tickets are dealt only at setup, {b.deal_long} to each "
                 "seat")
        for t in deck_top:
            if b.ticket_long[t]:
                raise ValueError(f"{deck_field}: {self.ticket_label(t)} is a long ticket; "
                                 f"{setup}, so none is drawn later (the long tickets not "
                                 "held are out of the game)")
        for q, ts in enumerate(tickets):
            held = [t for t in ts if b.ticket_long[t]]
            if len(held) > b.deal_long:
                raise ValueError(f"tickets[{q}]: {len(held)} long tickets "
                                 f"({', '.join(self.ticket_label(t) for t in held)}); {setup}")

    def trains_left(self, routes, trains) -> list:
        """Each seat's trains: as given, or the board's less its routes' lengths."""
        b = self.board
        return [left if left is not None else b.trains - int(sum(int(b.route_len[r]) for r in rs))
                for rs, left in zip(routes, trains)]

    def final_round_turns(self, routes, trains, current: int) -> int:
        """The turns left in the final round, ``current``'s included (0: not begun). A seat
        at the end trigger or below ended its last turn there (trains change only in a
        seat's own turn), which began the final round; the first such seat from ``current``
        on in play order is the one whose last turn was the earliest, and the seats after
        it have had their one more turn since."""
        low = [q for q, left in enumerate(self.trains_left(routes, trains))
               if left <= self.board.end_trigger]
        return min((q - current) % self.n for q in low) + 1 if low else 0

    def check_tunnel_claim(self, current: int, r: int, col: int, wild: int, routes,
                           trains) -> None:
        """The tunnel's claim is one the seat may make: the route open to it, the trains,
        the colour and the wild cards as the rules ask (said in words, before the claim)."""
        b, label = self.board, self.route_label(r)
        owner = {x: q for q, rs in enumerate(routes) for x in rs}
        length, partner = int(b.route_len[r]), int(b.route_partner[r])
        if r in owner:
            raise ValueError(f"tunnel: {label} is owned by seat {owner[r]} (routes[{owner[r]}]); "
                             "only an unclaimed route can be claimed")
        if partner >= 0 and partner in owner:
            if owner[partner] == current:
                raise ValueError(f"tunnel: seat {current} owns {self.route_label(partner)}, the "
                                 f"other half of {label}; one seat may claim only one half")
            if self.n < b.double_min_players:
                raise ValueError(f"tunnel: {label} is closed: seat {owner[partner]} owns its "
                                 f"other half, {self.route_label(partner)}, and with {self.n} "
                                 f"players only one half may be claimed")
        left = self.trains_left(routes, trains)[current]
        if left < length:
            raise ValueError(f"tunnel: {label} takes {length} trains and seat {current} has "
                             f"{left} left")
        colour = int(b.route_color[r])
        if col != WILD and 0 <= colour < len(b.colors) and col != colour:
            raise ValueError(f"tunnel: {label} is {b.colors[colour]}: pay it with "
                             f"{b.colors[colour]} cards and wild ones, not {b.colors[col]}")
        if col != WILD and wild == length:
            raise ValueError(f"tunnel: {wild} wild cards pay all of {label}: give 'color': "
                             "'wild' for a claim paid with wild cards only")
        if wild < int(b.route_ferry[r]):
            raise ValueError(f"tunnel: {label} needs at least {int(b.route_ferry[r])} wild "
                             f"cards (a ferry), got {wild}")

    def check_routes(self, routes, trains) -> None:
        b, owner = self.board, {}
        for q, rs in enumerate(routes):
            for r in rs:
                if r in owner:
                    who = "given twice" if owner[r] == q else f"also in routes[{owner[r]}]"
                    raise ValueError(f"routes[{q}]: {self.route_label(r)} is {who}; a route "
                                     "has one owner")
                p = int(b.route_partner[r])
                if p >= 0 and p in owner:
                    if owner[p] == q:
                        raise ValueError(f"routes[{q}]: {self.route_label(r)} and "
                                         f"{self.route_label(p)} are the two halves of a double "
                                         "route; one seat may claim only one of them")
                    if self.n < b.double_min_players:
                        raise ValueError(
                            f"routes[{q}]: {self.route_label(r)} and {self.route_label(p)} (in "
                            f"routes[{owner[p]}]) are the two halves of a double route; with "
                            f"{self.n} players only one may be claimed ({b.name} opens both "
                            f"from {b.double_min_players} players)")
                owner[r] = q
        for q, (rs, left) in enumerate(zip(routes, trains)):
            used = int(sum(int(b.route_len[r]) for r in rs))
            if used > b.trains:
                raise ValueError(f"routes[{q}]: the routes take {used} trains, a seat has "
                                 f"{b.trains}")
            if left is not None:
                check_int(f"trains[{q}]", left, 0, b.trains - used,
                          f" ({b.trains} trains less the {used} of seat {q}'s routes)")

    def check_stations(self, stations) -> None:
        b, builder = self.board, {}
        for q, xs in enumerate(stations):
            if len(xs) > b.stations:
                raise ValueError(f"stations[{q}]: {len(xs)} stations, a seat has {b.stations} "
                                 f"on {b.name}")
            for x in xs:
                if x in builder:
                    who = "given twice" if builder[x] == q else f"also in stations[{builder[x]}]"
                    raise ValueError(f"stations[{q}]: {b.cities[x]} is {who}; a city takes one "
                                     "station")
                builder[x] = q

    def check_cards(self, hands, faceup, discard, deck_top, current, played) -> None:
        """No more cards of a type than the deck has, naming the colour and where they are."""
        b = self.board
        deck = list(b.deck_colors.astype(int)) + [0] * (WILD - len(b.colors)) + [b.deck_wild]
        for t in range(9):
            parts = {"hands": sum(h[t] for h in hands),
                     "face-up": sum(1 for c in (faceup or []) if c == t),
                     "discard": discard[t], "deck_top": sum(1 for c in deck_top if c == t)}
            total = sum(parts.values())
            if total > deck[t]:
                where = ", ".join(f"{k} {v}" for k, v in parts.items() if v)
                extra = (f", of which {played[t]} played on the tunnel" if played and played[t]
                         else "")
                raise ValueError(f"the position uses {total} {self.card_name(t)} cards ({where}"
                                 f"{extra}), the {b.name} deck has {deck[t]}")


def _saved_board(d: dict):
    """The board of a saved position: a variant rebuilt, a map embedded in the file, or a
    built-in name or map file; refused when its checksum differs from the one saved."""
    if d.get("variant"):
        from ttrsim.variants import rebuild

        board, source = rebuild(d["variant"]), f"variant {d['board']!r}"
    elif d.get("map"):
        board, source = maps.from_dict(d["map"], "<map saved in the position>"), "the saved map"
    else:
        if not isinstance(d.get("board"), str):
            raise ValueError(f"the saved position's board must be a board name or map file, "
                             f"got {d.get('board')!r}")
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
