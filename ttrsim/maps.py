"""Boards: load and validate map files, and compile them to flat arrays.

A map file is JSON in the format described in ``docs/maps.md``. :func:`load` reads a
built-in board (``"usa"``, ``"europe"``, ``"newyork"``, and the USA 1910 ways to play
``"usa-1910"``, ``"usa-mega"``, ``"usa-bigcities"``, shipped in ``ttrsim/data/``) or any
file in that format, checks it thoroughly and returns a :class:`Board`: an immutable,
picklable object holding the board as numpy arrays (what the compiled core reads) plus
pandas views and totals for people.

Every problem in a file raises :class:`MapError` with the file, the entry and the fix::

    >>> from ttrsim import maps
    >>> board = maps.load("europe")
    >>> board.totals()["tunnels"]
    18
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import re
from collections import Counter
from dataclasses import dataclass
from importlib import resources
from typing import Any

import numpy as np

from ttrsim._defaults import BUILTIN_BOARDS
from ttrsim._validate import is_int

__all__ = ["Board", "MapError", "available", "board_to_dict", "boards_table", "describe", "from_dict",
           "load", "resolve_board"]

#: Built-in boards, in display order.
BUILTIN = BUILTIN_BOARDS

# Limits of the compiled core (see ext/ttrsim/_structs.pxd).
MAX_CITIES = 64
MAX_ROUTES = 128
MAX_TICKETS = 128
MAX_COLORS = 8
MAX_LEN = 15
MAX_PLAYERS = 5
MIN_PLAYERS = 2
MAX_STATIONS = 3
MAX_DECK = 255
N_FACEUP = 5
MAX_ADJ = 32
MAX_PENDING = 8
MAX_ID = 32767  # ids are stored as int16

TIE_BREAKS = ("tickets", "fewest_stations", "longest")

TOP_KEYS = ("name", "title", "colors", "wild", "cities", "routes", "tickets", "rules")
OPTIONAL_TOP_KEYS = ("attractions", "notes")
CITY_KEYS = ("name", "x", "y")
ROUTE_KEYS = ("id", "a", "b", "length", "color", "tunnel", "ferry", "double")
TICKET_KEYS = ("id", "a", "b", "points", "long")
# Whole-number rules -> (lowest, highest) allowed value. The boolean and structured rules
# (deck, route_points, tie_breaks) are checked on their own.
INT_RULES = {
    "players_min": (MIN_PLAYERS, MAX_PLAYERS),
    "players_max": (MIN_PLAYERS, MAX_PLAYERS),
    "trains": (1, 999),
    "stations": (0, MAX_STATIONS),
    "station_points": (0, 999),
    "initial_hand": (0, MAX_DECK),
    "deal_regular": (0, MAX_PENDING),
    "deal_long": (0, MAX_PENDING),
    "initial_keep": (1, MAX_PENDING),
    "draw_tickets": (1, MAX_PENDING),
    "draw_keep": (1, MAX_PENDING),
    "longest_bonus": (0, 999),
    "double_min_players": (MIN_PLAYERS, MAX_PLAYERS + 1),
    "end_trigger": (0, 999),
    "wild_faceup_limit": (1, N_FACEUP),
    "max_redeals": (0, 100),
    "attraction_points": (0, 999),
}
# Optional whole-number rules -> (lowest, highest, default): a file without them keeps the
# checksum it always had.
OPTIONAL_INT_RULES = {
    "globetrotter_bonus": (0, 999, 0),
}
BOOL_RULES = ("initial_discards_removed",)
OTHER_RULES = ("deck", "route_points", "tie_breaks")
RULE_KEYS = tuple(INT_RULES) + BOOL_RULES + OTHER_RULES
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


class MapError(ValueError):
    """A map file is missing, unreadable or breaks a rule of the map format."""


# ---------------------------------------------------------------------------
# Board
# ---------------------------------------------------------------------------


@dataclass(frozen=True, eq=False, repr=False)
class Board:
    """A validated board, compiled to flat arrays.

    Arrays are indexed by *index* (position in the file), not by id; ``route_id`` and
    ``ticket_id`` map an index back to the id written in the file. City references are
    city indices (positions in ``cities``). Treat the arrays as read-only.
    Two boards are equal when their files have the same ``checksum``.
    """

    name: str
    title: str
    checksum: str
    path: str | None
    # cities
    cities: tuple[str, ...]
    city_index: dict[str, int]
    coords: np.ndarray  # float64 (n_cities, 2): x east, y north, in 0..100
    # cards
    colors: tuple[str, ...]
    wild: str
    # routes
    route_id: np.ndarray  # int16
    route_a: np.ndarray  # int16 city index
    route_b: np.ndarray  # int16 city index
    route_len: np.ndarray  # int8
    route_color: np.ndarray  # int8, -1 = gray
    route_tunnel: np.ndarray  # bool
    route_ferry: np.ndarray  # int8, wild cards required
    route_partner: np.ndarray  # int16 index of the other half of a double, or -1
    route_points: dict[int, int]
    # tickets
    ticket_id: np.ndarray  # int16
    ticket_a: np.ndarray  # int16
    ticket_b: np.ndarray  # int16
    ticket_points: np.ndarray  # int16
    ticket_long: np.ndarray  # bool
    # rules
    min_players: int
    max_players: int
    trains: int
    stations: int
    station_points: int
    initial_hand: int
    deal_regular: int
    deal_long: int
    initial_keep: int
    initial_discards_removed: bool
    draw_tickets: int
    draw_keep: int
    longest_bonus: int
    double_min_players: int
    end_trigger: int
    wild_faceup_limit: int
    max_redeals: int
    deck_colors: np.ndarray  # int16, aligned with colors
    deck_wild: int
    attractions: tuple[int, ...]  # city indices
    attraction_points: int
    tie_breaks: tuple[str, ...]
    # Globetrotter: points to every seat tied for the most completed tickets (0: no bonus)
    globetrotter_bonus: int = 0
    # a board made by ttrsim.variant(): its base, changes, description and hash
    variant: dict | None = None

    # -- identity -----------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Board):
            return NotImplemented
        return self.checksum == other.checksum

    def __hash__(self) -> int:
        return hash(self.checksum)

    def __repr__(self) -> str:
        return (
            f"<Board {self.name!r}: {len(self.cities)} cities, {self.n_routes} routes, "
            f"{self.n_tickets} tickets, {self.min_players}-{self.max_players} players>"
        )

    # -- sizes --------------------------------------------------------------

    @property
    def n_cities(self) -> int:
        return len(self.cities)

    @property
    def n_routes(self) -> int:
        return len(self.route_id)

    @property
    def n_tickets(self) -> int:
        return len(self.ticket_id)

    @property
    def deck_total(self) -> int:
        return int(self.deck_colors.sum()) + self.deck_wild

    # -- names --------------------------------------------------------------

    def color_name(self, c: int) -> str:
        """Name of route colour ``c`` (-1 is ``"gray"``)."""
        return "gray" if c < 0 else self.colors[c]

    def route_name(self, i: int) -> str:
        """Readable name of the route at index ``i``.

        For example ``"Madrid - Pamplona (3 black, tunnel)"`` or
        ``"Dieppe - London (2 gray, ferry 1)"``.
        """
        parts = [f"{int(self.route_len[i])} {self.color_name(int(self.route_color[i]))}"]
        if self.route_tunnel[i]:
            parts.append("tunnel")
        if self.route_ferry[i]:
            parts.append(f"ferry {int(self.route_ferry[i])}")
        a, b = self.cities[self.route_a[i]], self.cities[self.route_b[i]]
        return f"{a} - {b} ({', '.join(parts)})"

    def ticket_name(self, i: int) -> str:
        """Readable name of the ticket at index ``i``, e.g. ``"Lisboa - Danzig (20, long)"``."""
        a, b = self.cities[self.ticket_a[i]], self.cities[self.ticket_b[i]]
        extra = ", long" if self.ticket_long[i] else ""
        return f"{a} - {b} ({int(self.ticket_points[i])}{extra})"

    def check_players(self, n: int) -> int:
        """Return ``n`` if the board can be played by ``n`` players, else raise ``ValueError``."""
        if not is_int(n):
            raise ValueError(f"player count must be a whole number, got {n!r}")
        if not self.min_players <= n <= self.max_players:
            raise ValueError(
                f"{self.name} allows {self.min_players} to {self.max_players} players, got {n}"
            )
        return int(n)

    # -- tables -------------------------------------------------------------

    def routes_frame(self):
        """One row per route: ``index, id, a, b, length, points, color, tunnel, ferry, double``.

        ``double`` is the id of the other half of a double route (``<NA>`` if single).
        """
        import pandas as pd

        partner = self.route_partner.astype(np.int64)
        double = pd.array(
            [int(self.route_id[p]) if p >= 0 else None for p in partner], dtype="Int16"
        )
        return pd.DataFrame(
            {
                "index": np.arange(self.n_routes, dtype=np.int16),
                "id": self.route_id,
                "a": self._city_column(self.route_a),
                "b": self._city_column(self.route_b),
                "length": self.route_len,
                "points": np.array(
                    [self.route_points[int(n)] for n in self.route_len], dtype=np.int16
                ),
                "color": pd.Categorical(
                    [self.color_name(int(c)) for c in self.route_color],
                    categories=list(self.colors) + ["gray"],
                ),
                "tunnel": self.route_tunnel,
                "ferry": self.route_ferry,
                "double": double,
            }
        )

    def _city_column(self, idx: np.ndarray):
        import pandas as pd

        return pd.Categorical.from_codes(idx.astype(np.int64), categories=list(self.cities))

    def tickets_frame(self):
        """One row per ticket: ``index, id, a, b, points, long``."""
        import pandas as pd

        return pd.DataFrame(
            {
                "index": np.arange(self.n_tickets, dtype=np.int16),
                "id": self.ticket_id,
                "a": self._city_column(self.ticket_a),
                "b": self._city_column(self.ticket_b),
                "points": self.ticket_points,
                "long": self.ticket_long,
            }
        )

    def totals(self) -> dict[str, Any]:
        """Counts that describe the board (the figures published for the printed boards)."""
        lengths = self.route_len.astype(int)
        pts = self.ticket_points.astype(int)
        long_ = self.ticket_long
        pairs = {frozenset((int(a), int(b))) for a, b in zip(self.route_a, self.route_b)}
        deck = {c: int(n) for c, n in zip(self.colors, self.deck_colors)}
        deck["wild"] = int(self.deck_wild)
        return {
            "cities": self.n_cities,
            "routes": self.n_routes,
            "city_pairs": len(pairs),
            "double_pairs": int((self.route_partner >= 0).sum()) // 2,
            "total_spaces": int(lengths.sum()),
            "routes_by_length": {int(k): int(v) for k, v in sorted(Counter(lengths).items())},
            "gray_routes": int((self.route_color < 0).sum()),
            "tunnels": int(self.route_tunnel.sum()),
            "ferries": int((self.route_ferry > 0).sum()),
            "ferry_wild_spaces": int(self.route_ferry.astype(int).sum()),
            "tickets": self.n_tickets,
            "ticket_points": int(pts.sum()),
            "ticket_points_range": (int(pts.min()), int(pts.max())),
            "regular_tickets": int((~long_).sum()),
            "regular_ticket_points": int(pts[~long_].sum()),
            "long_tickets": int(long_.sum()),
            "long_ticket_points": int(pts[long_].sum()),
            "route_points": dict(self.route_points),
            "deck": deck,
            "deck_total": self.deck_total,
            "players": (self.min_players, self.max_players),
            "trains": self.trains,
            "stations": self.stations,
            "attractions": len(self.attractions),
        }


# ---------------------------------------------------------------------------
# Loading
# ---------------------------------------------------------------------------


def available() -> list[str]:
    """Names of the built-in boards."""
    return list(BUILTIN)


def load(name_or_path: str | os.PathLike | Board) -> Board:
    """Load a built-in board by name, or a map file by path, and validate it.

    A :class:`Board` passed in is returned as is. Raises :class:`MapError` for an unknown
    name, a missing file or any problem in the file.
    """
    if isinstance(name_or_path, Board):
        return name_or_path
    if not isinstance(name_or_path, (str, os.PathLike)):
        raise MapError(f"a board is a built-in name or a file path, got {name_or_path!r}")
    spec = os.fspath(name_or_path)
    key = spec.lower()
    if key in BUILTIN and not os.path.isfile(spec):
        text = resources.files(__package__).joinpath("data", f"{key}.json").read_text("utf-8")
        return _parse_text(text, f"built-in board {key!r}", None, expect_name=key)
    if not os.path.exists(spec):
        raise MapError(
            f"unknown board {spec!r}: not a built-in board ({', '.join(BUILTIN)}) "
            f"and no file of that name"
        )
    if os.path.isdir(spec):
        raise MapError(f"{spec}: is a directory, not a map file")
    try:
        with open(spec, encoding="utf-8") as f:
            text = f.read()
    except UnicodeDecodeError as exc:
        raise MapError(f"{spec}: not a UTF-8 text file ({exc.reason})") from None
    except OSError as exc:
        raise MapError(f"{spec}: cannot read the file ({exc.strerror})") from None
    return _parse_text(text, spec, os.path.abspath(spec))


def resolve_board(board) -> Board:
    """A loaded board from a name, a path or a Board; anything else is refused (MapError)."""
    return load(board)


def from_dict(data: dict, source: str = "<dict>") -> Board:
    """Validate and compile a board given as an already parsed map file.

    ``source`` names the board in error messages.
    """
    return _Compiler(source).compile(data, None)


def board_to_dict(board: Board) -> dict:
    """The map file (parsed JSON) of a loaded board; ``maps.from_dict`` of it gives the
    same board (the free-text ``notes`` are not kept). Routes and tickets keep their order,
    so games dealt from the same seed shuffle the same way."""
    cities = [{"name": c, "x": float(x), "y": float(y)}
              for c, (x, y) in zip(board.cities, board.coords)]
    routes = []
    for i in range(board.n_routes):
        p = int(board.route_partner[i])
        routes.append({"id": int(board.route_id[i]), "a": board.cities[board.route_a[i]],
                       "b": board.cities[board.route_b[i]], "length": int(board.route_len[i]),
                       "color": board.color_name(int(board.route_color[i])),
                       "tunnel": bool(board.route_tunnel[i]), "ferry": int(board.route_ferry[i]),
                       "double": int(board.route_id[p]) if p >= 0 else None})
    tickets = [{"id": int(board.ticket_id[i]), "a": board.cities[board.ticket_a[i]],
                "b": board.cities[board.ticket_b[i]], "points": int(board.ticket_points[i]),
                "long": bool(board.ticket_long[i])} for i in range(board.n_tickets)]
    deck = {c: int(n) for c, n in zip(board.colors, board.deck_colors)}
    deck["wild"] = int(board.deck_wild)
    rules = {
        "players_min": board.min_players, "players_max": board.max_players,
        "trains": board.trains, "stations": board.stations,
        "station_points": board.station_points, "initial_hand": board.initial_hand,
        "deal_regular": board.deal_regular, "deal_long": board.deal_long,
        "initial_keep": board.initial_keep,
        "initial_discards_removed": bool(board.initial_discards_removed),
        "draw_tickets": board.draw_tickets, "draw_keep": board.draw_keep,
        "longest_bonus": board.longest_bonus, "double_min_players": board.double_min_players,
        "end_trigger": board.end_trigger, "wild_faceup_limit": board.wild_faceup_limit,
        "max_redeals": board.max_redeals, "deck": deck,
        "route_points": {str(k): int(v) for k, v in board.route_points.items()},
        "attraction_points": board.attraction_points, "tie_breaks": list(board.tie_breaks),
    }
    if board.globetrotter_bonus:        # optional key: boards without it keep their checksum
        rules["globetrotter_bonus"] = board.globetrotter_bonus
    return {"name": board.name, "title": board.title, "colors": list(board.colors),
            "wild": board.wild, "cities": cities, "routes": routes, "tickets": tickets,
            "rules": rules, "attractions": [board.cities[c] for c in board.attractions]}


def _parse_text(text: str, label: str, path: str | None, expect_name: str | None = None) -> Board:
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicate_keys)
    except json.JSONDecodeError as exc:
        raise MapError(
            f"{label}: not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"
        ) from None
    except _DuplicateKey as exc:
        raise MapError(f"{label}: key {exc.args[0]!r} appears twice in one object") from None
    board = _Compiler(label).compile(data, path)
    if expect_name is not None and board.name != expect_name:
        raise MapError(f"{label}: \"name\" is {board.name!r}, expected {expect_name!r}")
    return board


class _DuplicateKey(Exception):
    pass


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict:
    """JSON object hook: a key given twice is an error (plain json keeps the last one)."""
    out = {}
    for k, v in pairs:
        if k in out:
            raise _DuplicateKey(k)
        out[k] = v
    return out


def checksum(data: Any) -> str:
    """sha256 hex digest of the canonical JSON dump of a parsed map file."""
    canon = json.dumps(data, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canon.encode("utf-8")).hexdigest()


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _type_name(v: Any) -> str:
    return {
        dict: "an object",
        list: "a list",
        str: "a string",
        bool: "true/false",
        int: "a whole number",
        float: "a number",
        type(None): "null",
    }.get(type(v), type(v).__name__)


class _Compiler:
    """Checks one parsed map file and builds its :class:`Board`."""

    def __init__(self, label: str):
        self.label = label

    def fail(self, msg: str) -> None:
        raise MapError(f"{self.label}: {msg}")

    # -- typed accessors ------------------------------------------------------

    def obj(self, v: Any, where: str, keys: tuple, optional: tuple = ()) -> dict:
        """Check that ``v`` is an object with exactly ``keys`` (plus any of ``optional``)."""
        if not isinstance(v, dict):
            self.fail(f"{where} must be an object {{...}}, got {_type_name(v)}")
        for k in keys:
            if k not in v:
                self.fail(f"{where} is missing key {k!r} (required: {', '.join(keys)})")
        for k in v:
            if k not in keys and k not in optional:
                allowed = ", ".join(keys + optional)
                self.fail(f"{where} has unknown key {k!r} (allowed: {allowed}); check the spelling")
        return v

    def int_(self, v: Any, where: str, lo: int, hi: int) -> int:
        if not _is_int(v):
            self.fail(f"{where} must be a whole number, got {_type_name(v)} {v!r}")
        if not lo <= v <= hi:
            self.fail(f"{where} is {v}; it must be between {lo} and {hi}")
        return v

    def bool_(self, v: Any, where: str) -> bool:
        if not isinstance(v, bool):
            self.fail(f"{where} must be true or false, got {_type_name(v)} {v!r}")
        return v

    def ends(self, entry: dict, where: str, city_index: dict, what: str) -> list[int]:
        """The city indices of entry["a"] and entry["b"]: two different known cities."""
        ends = []
        for k in ("a", "b"):
            city = self.str_(entry[k], f"{where} {k}")
            if city not in city_index:
                self.fail(
                    f"{where}: unknown city {city!r} in {k!r}; add it to \"cities\" "
                    f"or fix the spelling"
                )
            ends.append(city_index[city])
        if ends[0] == ends[1]:
            self.fail(f"{where}: both ends are {entry['a']!r}; {what} joins two different cities")
        return ends

    def str_(self, v: Any, where: str) -> str:
        if not isinstance(v, str) or not v.strip():
            self.fail(f"{where} must be a non-empty string, got {_type_name(v)} {v!r}")
        return v

    def list_(self, v: Any, where: str, lo: int, hi: int) -> list:
        if not isinstance(v, list):
            self.fail(f"{where} must be a list [...], got {_type_name(v)}")
        if not lo <= len(v) <= hi:
            self.fail(f"{where} has {len(v)} entries; the limit is {lo} to {hi}")
        return v

    # -- the file -------------------------------------------------------------

    def compile(self, data: Any, path: str | None) -> Board:
        top = self.obj(data, "the file", TOP_KEYS, OPTIONAL_TOP_KEYS)
        name = self.str_(top["name"], '"name"')
        if not NAME_RE.match(name):
            self.fail(
                f'"name" {name!r} must be a short identifier: letters, digits, "_", "-" or "."'
            )
        title = self.str_(top["title"], '"title"')
        if "notes" in top and not isinstance(top["notes"], str):
            self.fail(f'"notes" must be a string, got {_type_name(top["notes"])}')

        colors, wild = self.colors(top["colors"], top["wild"])
        cities, coords = self.cities(top["cities"])
        city_index = {c: i for i, c in enumerate(cities)}
        rules = self.rules(top["rules"], colors)
        routes = self.routes(top["routes"], city_index, colors, rules["route_points"])
        tickets = self.tickets(top["tickets"], city_index)
        self.cross_checks(rules, tickets)
        attractions = self.attractions(top.get("attractions", []), city_index)

        r, t = routes, tickets
        return Board(
            name=name,
            title=title,
            checksum=checksum(data),
            path=path,
            cities=tuple(cities),
            city_index=city_index,
            coords=np.asarray(coords, dtype=np.float64).reshape(len(cities), 2),
            colors=tuple(colors),
            wild=wild,
            route_id=np.array(r["id"], dtype=np.int16),
            route_a=np.array(r["a"], dtype=np.int16),
            route_b=np.array(r["b"], dtype=np.int16),
            route_len=np.array(r["length"], dtype=np.int8),
            route_color=np.array(r["color"], dtype=np.int8),
            route_tunnel=np.array(r["tunnel"], dtype=bool),
            route_ferry=np.array(r["ferry"], dtype=np.int8),
            route_partner=np.array(r["partner"], dtype=np.int16),
            route_points=rules["route_points"],
            ticket_id=np.array(t["id"], dtype=np.int16),
            ticket_a=np.array(t["a"], dtype=np.int16),
            ticket_b=np.array(t["b"], dtype=np.int16),
            ticket_points=np.array(t["points"], dtype=np.int16),
            ticket_long=np.array(t["long"], dtype=bool),
            min_players=rules["players_min"],
            max_players=rules["players_max"],
            trains=rules["trains"],
            stations=rules["stations"],
            station_points=rules["station_points"],
            initial_hand=rules["initial_hand"],
            deal_regular=rules["deal_regular"],
            deal_long=rules["deal_long"],
            initial_keep=rules["initial_keep"],
            initial_discards_removed=rules["initial_discards_removed"],
            draw_tickets=rules["draw_tickets"],
            draw_keep=rules["draw_keep"],
            longest_bonus=rules["longest_bonus"],
            double_min_players=rules["double_min_players"],
            end_trigger=rules["end_trigger"],
            wild_faceup_limit=rules["wild_faceup_limit"],
            max_redeals=rules["max_redeals"],
            deck_colors=np.array([rules["deck"][c] for c in colors], dtype=np.int16),
            deck_wild=rules["deck"]["wild"],
            attractions=tuple(attractions),
            attraction_points=rules["attraction_points"],
            tie_breaks=tuple(rules["tie_breaks"]),
            globetrotter_bonus=rules["globetrotter_bonus"],
        )

    def colors(self, colors: Any, wild: Any) -> tuple[list[str], str]:
        self.list_(colors, '"colors"', 1, MAX_COLORS)
        wild = self.str_(wild, '"wild"')
        seen = set()
        for i, c in enumerate(colors):
            self.str_(c, f'"colors" entry {i + 1}')
            if c in ("gray", "wild"):
                self.fail(f'"colors" must not contain {c!r}: it is reserved')
            if c == wild:
                self.fail(f'colour {c!r} is also the "wild" card name; use different names')
            if c in seen:
                self.fail(f'colour {c!r} appears twice in "colors"')
            seen.add(c)
        return list(colors), wild

    def cities(self, cities: Any) -> tuple[list[str], list[tuple[float, float]]]:
        self.list_(cities, '"cities"', 2, MAX_CITIES)
        names, coords, seen = [], [], set()
        for i, c in enumerate(cities):
            where = f'"cities" entry {i + 1}'
            self.obj(c, where, CITY_KEYS)
            name = self.str_(c["name"], f"{where} name")
            where = f"city {name!r}"
            if name in seen:
                self.fail(f"city {name!r} is listed twice in \"cities\"; city names must be unique")
            seen.add(name)
            xy = []
            for k in ("x", "y"):
                v = c[k]
                if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v):
                    self.fail(f"{where}: {k} must be a number, got {_type_name(v)} {v!r}")
                if not 0 <= v <= 100:
                    self.fail(f"{where}: {k} is {v}; coordinates must be between 0 and 100")
                xy.append(float(v))
            names.append(name)
            coords.append(tuple(xy))
        return names, coords

    def rules(self, rules: Any, colors: list[str]) -> dict:
        self.obj(rules, '"rules"', RULE_KEYS, tuple(OPTIONAL_INT_RULES))
        out: dict[str, Any] = {}
        for k, (lo, hi) in INT_RULES.items():
            out[k] = self.int_(rules[k], f"rules.{k}", lo, hi)
        for k, (lo, hi, default) in OPTIONAL_INT_RULES.items():
            out[k] = self.int_(rules[k], f"rules.{k}", lo, hi) if k in rules else default
        for k in BOOL_RULES:
            out[k] = self.bool_(rules[k], f"rules.{k}")
        if out["players_min"] > out["players_max"]:
            self.fail(
                f"rules.players_min ({out['players_min']}) is larger than "
                f"rules.players_max ({out['players_max']})"
            )
        if out["end_trigger"] >= out["trains"]:
            self.fail(
                f"rules.end_trigger ({out['end_trigger']}) must be smaller than "
                f"rules.trains ({out['trains']})"
            )

        # Route scoring: {"length": points}; JSON object keys are strings.
        rp = rules["route_points"]
        if not isinstance(rp, dict) or not rp:
            self.fail('rules.route_points must be a non-empty object {"length": points, ...}')
        points = {}
        for k, v in rp.items():
            if not re.fullmatch(r"[0-9]+", k) or not 1 <= int(k) <= MAX_LEN:
                self.fail(
                    f"rules.route_points key {k!r} must be a route length from 1 to {MAX_LEN}"
                )
            points[int(k)] = self.int_(v, f"rules.route_points[{k!r}]", 0, 999)
        out["route_points"] = dict(sorted(points.items()))

        # Deck: every plain colour plus "wild".
        deck = self.obj(rules["deck"], "rules.deck", tuple(colors) + ("wild",))
        for k in colors + ["wild"]:
            self.int_(deck[k], f"rules.deck[{k!r}]", 0, MAX_DECK)
        out["deck"] = dict(deck)
        total = sum(deck.values())
        if total > MAX_DECK:
            self.fail(f"rules.deck holds {total} cards; the limit is {MAX_DECK}")
        need = out["players_max"] * out["initial_hand"] + N_FACEUP
        if total < need:
            self.fail(
                f"rules.deck holds {total} cards, too few to deal {out['initial_hand']} to each of "
                f"{out['players_max']} players and turn {N_FACEUP} face up (needs {need}); "
                f"add cards or lower rules.initial_hand"
            )

        tb = rules["tie_breaks"]
        self.list_(tb, "rules.tie_breaks", 0, len(TIE_BREAKS))
        for t in tb:
            if not isinstance(t, str) or t not in TIE_BREAKS:
                self.fail(
                    f"rules.tie_breaks: unknown tie-break {t!r} "
                    f"(choose from {', '.join(TIE_BREAKS)})"
                )
        if len(set(tb)) != len(tb):
            self.fail("rules.tie_breaks lists a tie-break twice")
        out["tie_breaks"] = list(tb)

        if out["deal_regular"] + out["deal_long"] < 1:
            self.fail("rules.deal_regular + rules.deal_long must be at least 1")
        if out["deal_regular"] + out["deal_long"] > MAX_PENDING:
            self.fail(
                f"rules.deal_regular + rules.deal_long is "
                f"{out['deal_regular'] + out['deal_long']}; the limit is {MAX_PENDING}"
            )
        if out["initial_keep"] > out["deal_regular"] + out["deal_long"]:
            self.fail(
                f"rules.initial_keep ({out['initial_keep']}) is more than the tickets dealt "
                f"(deal_regular + deal_long = {out['deal_regular'] + out['deal_long']})"
            )
        if out["draw_keep"] > out["draw_tickets"]:
            self.fail(
                f"rules.draw_keep ({out['draw_keep']}) is more than rules.draw_tickets "
                f"({out['draw_tickets']})"
            )
        return out

    def routes(self, routes: Any, city_index: dict, colors: list[str], points: dict) -> dict:
        self.list_(routes, '"routes"', 1, MAX_ROUTES)
        keys = ("id", "a", "b", "length", "color", "tunnel", "ferry")
        cols: dict[str, list] = {k: [] for k in keys}
        doubles: list = []
        index_of: dict[int, int] = {}
        color_index = {c: i for i, c in enumerate(colors)}
        for i, r in enumerate(routes):
            where = f'"routes" entry {i + 1}'
            self.obj(r, where, ROUTE_KEYS)
            rid = self.int_(r["id"], f"{where} id", 0, MAX_ID)
            where = f"route {rid}"
            if rid in index_of:
                self.fail(f"route id {rid} is used twice; route ids must be unique")
            index_of[rid] = i
            ends = self.ends(r, where, city_index, "a route")
            length = self.int_(r["length"], f"{where} length", 1, MAX_LEN)
            if length not in points:
                self.fail(
                    f"{where}: length {length} has no score in rules.route_points; "
                    f'add "{length}": points'
                )
            color = self.str_(r["color"], f"{where} color")
            if color != "gray" and color not in color_index:
                self.fail(
                    f"{where}: unknown colour {color!r}; use \"gray\" or one of \"colors\" "
                    f"({', '.join(colors)})"
                )
            tunnel = self.bool_(r["tunnel"], f"{where} tunnel")
            ferry = self.int_(r["ferry"], f"{where} ferry", 0, MAX_LEN)
            if ferry > length:
                self.fail(
                    f"{where}: ferry asks for {ferry} wild cards but the route is only "
                    f"{length} long"
                )
            double = r["double"]
            if double is not None and not _is_int(double):
                self.fail(f"{where}: double must be a route id or null, got {_type_name(double)}")
            cols["id"].append(rid)
            cols["a"].append(ends[0])
            cols["b"].append(ends[1])
            cols["length"].append(length)
            cols["color"].append(-1 if color == "gray" else color_index[color])
            cols["tunnel"].append(tunnel)
            cols["ferry"].append(ferry)
            doubles.append(double)

        partner = self.doubles(cols, doubles, index_of)
        cols["partner"] = partner

        # The core keeps at most MAX_ADJ routes per city.
        degree = Counter(cols["a"]) + Counter(cols["b"])
        names = list(city_index)
        for c, n in degree.items():
            if n > MAX_ADJ:
                self.fail(f"city {names[c]!r} has {n} routes; the limit is {MAX_ADJ} per city")
        return cols

    def doubles(self, cols: dict, doubles: list, index_of: dict) -> list[int]:
        """Resolve each ``double`` id to the index of the other half, checking both halves."""
        partner = []
        for i, d in enumerate(doubles):
            rid = cols["id"][i]
            if d is None:
                partner.append(-1)
                continue
            if d == rid:
                self.fail(f"route {rid}: double points to itself; give the id of the other half")
            if d not in index_of:
                self.fail(f"route {rid}: double points to route {d}, which does not exist")
            j = index_of[d]
            if doubles[j] != rid:
                other = "null" if doubles[j] is None else doubles[j]
                self.fail(
                    f"route {rid}: double is {d}, but route {d} has double {other}; "
                    f"set each half's double to the other's id"
                )
            if {cols["a"][i], cols["b"][i]} != {cols["a"][j], cols["b"][j]}:
                self.fail(
                    f"routes {rid} and {d} are a double but join different cities; "
                    f"a double's halves join the same two cities"
                )
            for k in ("length", "tunnel", "ferry"):
                if cols[k][i] != cols[k][j]:
                    self.fail(
                        f"routes {rid} and {d} are a double but differ in {k} "
                        f"({cols[k][i]} vs {cols[k][j]}); both halves must be alike but for colour"
                    )
            partner.append(j)
        # Parallel routes must be declared as a double.
        by_pair: dict[frozenset, list[int]] = {}
        for i in range(len(partner)):
            by_pair.setdefault(frozenset((cols["a"][i], cols["b"][i])), []).append(i)
        for idx in by_pair.values():
            if len(idx) > 2 or (len(idx) == 2 and partner[idx[0]] != idx[1]):
                ids = ", ".join(str(cols["id"][i]) for i in idx)
                self.fail(
                    f"routes {ids} join the same two cities; only a pair of routes marked as "
                    f"each other's double may do that"
                )
        return partner

    def tickets(self, tickets: Any, city_index: dict) -> dict:
        self.list_(tickets, '"tickets"', 1, MAX_TICKETS)
        cols: dict[str, list] = {k: [] for k in TICKET_KEYS}
        seen = set()
        for i, t in enumerate(tickets):
            where = f'"tickets" entry {i + 1}'
            self.obj(t, where, TICKET_KEYS)
            tid = self.int_(t["id"], f"{where} id", 0, MAX_ID)
            where = f"ticket {tid}"
            if tid in seen:
                self.fail(f"ticket id {tid} is used twice; ticket ids must be unique")
            seen.add(tid)
            ends = self.ends(t, where, city_index, "a ticket")
            cols["id"].append(tid)
            cols["a"].append(ends[0])
            cols["b"].append(ends[1])
            cols["points"].append(self.int_(t["points"], f"{where} points", 1, 999))
            cols["long"].append(self.bool_(t["long"], f"{where} long"))
        return cols

    def cross_checks(self, rules: dict, tickets: dict) -> None:
        """Enough tickets for the initial deal of a full table."""
        n_long = sum(tickets["long"])
        n_regular = len(tickets["long"]) - n_long
        for kind, have, per in (
            ("regular", n_regular, rules["deal_regular"]),
            ("long", n_long, rules["deal_long"]),
        ):
            need = per * rules["players_max"]
            if have < need:
                self.fail(
                    f"only {have} {kind} tickets, too few to deal rules.deal_{kind} = {per} to "
                    f"each of {rules['players_max']} players (needs {need})"
                )

    def attractions(self, attractions: Any, city_index: dict) -> list[int]:
        self.list_(attractions, '"attractions"', 0, MAX_CITIES)
        out = []
        for a in attractions:
            self.str_(a, "attractions entry")
            if a not in city_index:
                self.fail(
                    f"attractions: unknown city {a!r}; add it to \"cities\" or fix the spelling"
                )
            if city_index[a] in out:
                self.fail(f"attractions: {a!r} is listed twice")
            out.append(city_index[a])
        return out


# ---------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------


def _summary_row(board: Board) -> dict[str, Any]:
    t = board.totals()
    tickets = f"{t['tickets']}"
    if t["long_tickets"]:
        tickets += f" ({t['long_tickets']} long)"
    ferries = f"{t['ferries']}"
    if t["ferries"]:
        ferries += f" ({t['ferry_wild_spaces']} wild)"
    return {
        "board": board.name,
        "cities": t["cities"],
        "routes": t["routes"],
        "doubles": t["double_pairs"],
        "spaces": t["total_spaces"],
        "gray": t["gray_routes"],
        "tunnels": t["tunnels"],
        "ferries": ferries,
        "tickets": tickets,
        "deal/keep": f"{board.deal_regular + board.deal_long}/{board.initial_keep}",
        "draw/keep": f"{board.draw_tickets}/{board.draw_keep}",
        "longest": board.longest_bonus,
        "globetrotter": board.globetrotter_bonus,
        "players": "{}-{}".format(*t["players"]),
        "trains": t["trains"],
    }


def _ticket_rules(board: Board) -> str:
    """The ticket counts of setup and of a draw, e.g. "deal 5 keep 3, draw 4 keep 1"."""
    deal = f"{board.deal_regular}" + (f" + {board.deal_long} long" if board.deal_long else "")
    return (f"deal {deal} keep {board.initial_keep}, "
            f"draw {board.draw_tickets} keep {board.draw_keep}")


def _bonuses(board: Board) -> str:
    """The end-of-game bonuses, e.g. "longest path 10, Globetrotter 15"."""
    parts = []
    if board.longest_bonus:
        parts.append(f"longest path {board.longest_bonus}")
    if board.globetrotter_bonus:
        parts.append(f"Globetrotter {board.globetrotter_bonus}")
    return ", ".join(parts) or "none"


def _format_table(rows: list[dict[str, Any]]) -> str:
    """Plain aligned text table: text columns left, numbers right."""
    cols = list(rows[0])
    cells = [[str(r[c]) for c in cols] for r in rows]
    width = [max(len(c), *(len(row[k]) for row in cells)) for k, c in enumerate(cols)]
    numeric = [all(_is_int(r[c]) for r in rows) for c in cols]

    def line(vals):
        padded = (v.rjust(w) if n else v.ljust(w) for v, w, n in zip(vals, width, numeric))
        return "  ".join(padded).rstrip()

    return "\n".join([line(cols)] + [line(r) for r in cells])


def describe(board: Board) -> str:
    """Multi-line summary of one board: title, file, checksum and totals."""
    t = board.totals()
    wild = board.wild
    cities = f"{t['cities']}"
    if t["attractions"]:
        cities += f" ({t['attractions']} attractions, {board.attraction_points} pt each)"
    tickets = f"{t['regular_tickets']} regular ({t['regular_ticket_points']} pts)"
    if t["long_tickets"]:
        tickets += f" + {t['long_tickets']} long ({t['long_ticket_points']} pts)"
    tickets += ", values {}-{}".format(*t["ticket_points_range"])
    deck = ", ".join(f"{c} {n}" for c, n in t["deck"].items() if c != "wild")
    pieces = f"{t['trains']} trains"
    if t["stations"]:
        pieces += f", {t['stations']} stations"
    rows = [
        ("file", board.path or "built-in"),
        ("checksum", board.checksum),
        ("cities", cities),
        ("routes", f"{t['routes']} ({t['city_pairs']} city pairs, "
                   f"{t['double_pairs']} double pairs)"),
        ("spaces", t["total_spaces"]),
        ("routes by length", " ".join(f"{k}:{v}" for k, v in t["routes_by_length"].items())),
        ("route scoring", " ".join(f"{k}:{v}" for k, v in t["route_points"].items())),
        ("gray routes", t["gray_routes"]),
        ("tunnels", t["tunnels"]),
        ("ferries", f"{t['ferries']} ({t['ferry_wild_spaces']} {wild} spaces)"),
        ("tickets", tickets),
        ("deck", f"{t['deck_total']}: {deck}, {wild} {t['deck']['wild']}"),
        ("ticket deal", _ticket_rules(board)),
        ("bonuses", _bonuses(board)),
        ("players", "{}-{}".format(*t["players"])),
        ("pieces", pieces),
    ]
    return "\n".join([f"{board.name}: {board.title}"] + [f"  {k:<18}{v}" for k, v in rows])


def boards_table() -> str:
    """The built-in boards and their totals, one row each (what ``ttrsim maps`` prints)."""
    return _format_table([_summary_row(load(name)) for name in available()])
