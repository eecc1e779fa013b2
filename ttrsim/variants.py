"""Board variants: a validated copy of a board with some of its rules or pieces changed.

``variant(board, **changes)`` returns a new :class:`~ttrsim.maps.Board` (the original is
untouched) built by editing the board's map file and validating the result with the map
loader. Changes (any combination; see ``docs/analysis.md``)::

    trains=40                       stations=2, station_points=3
    route_points={4: 8}             longest_bonus=15
    ticket_points={"Paris - Wien": 10, 12: 9}      # by ticket id or city pair
    add_tickets=[("Lisboa", "Moskva", 25)]         # or dicts {"a", "b", "points", "long", "id"}
    remove_tickets=["Paris - Wien"]                remove_routes=[17, "Rostov - Sochi"]
    route_color={"Paris - Wien": "red"}            route_length={"Paris - Wien": 4}
    deck={"red": 10, "wild": 16}   # cards per colour ("wild" or "locomotives")
    initial_hand=5                 # hand size dealt at the start (alias hand_size)
    rules={"end_trigger": 3}       # any other rule of the map format

A route named by its two cities (``"A - B"`` or ``("A", "B")``) means every route between
them (both halves of a double); give a route id to mean one half. Length changes apply
to both halves of a double (the map format wants them alike). Every impossible change
raises :class:`VariantError` (a ``ValueError``) naming the bad entry.

The new board carries ``board.variant``: the base board, the changes (routes and tickets
resolved to ids), a readable ``description`` and a stable ``hash`` (same base and same
changes, same hash, however the entries were written). Runs of the board record it in
their manifest, so ``load_run`` rebuilds the variant. ``load_variant(path)`` reads the
same changes from a small JSON or TOML file (see :func:`load_variant`).
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from typing import Any

import numpy as np

from ttrsim import maps
from ttrsim._validate import is_int
from ttrsim.maps import Board, MapError, board_to_dict

__all__ = ["VariantError", "CHANGE_KEYS", "variant", "load_variant", "board_to_dict",
           "rebuild", "comparison_boards"]


class VariantError(ValueError):
    """A variant asks for a change the board cannot take (names the bad entry)."""


#: The keyword arguments of :func:`variant` (and keys of a variant file), in the order
#: they are applied.
CHANGE_KEYS = ("remove_routes", "route_color", "route_length", "remove_tickets",
               "ticket_points", "add_tickets", "trains", "stations", "station_points",
               "route_points", "longest_bonus", "deck", "initial_hand", "rules")
_ALIASES = {"hand_size": "initial_hand", "locomotives": None}
_FILE_ONLY = ("base", "name", "title")
_INT_CHANGES = {"trains": (1, 999), "stations": (0, maps.MAX_STATIONS),
                "station_points": (0, 999), "longest_bonus": (0, 999),
                "initial_hand": (0, maps.MAX_DECK)}


# ---------------------------------------------------------------------------
# resolving references


def _pair_text(ref) -> tuple[str, str] | None:
    if isinstance(ref, (list, tuple)) and len(ref) == 2 and all(isinstance(x, str) for x in ref):
        return ref[0].strip(), ref[1].strip()
    if isinstance(ref, str) and " - " in ref:
        a, b = ref.split(" - ", 1)
        return a.strip(), b.strip()
    return None


def _ref_text(ref) -> str:
    p = _pair_text(ref)
    return f"{p[0]} - {p[1]}" if p else repr(ref)


def _check_city(board_dict: dict, city: str, where: str) -> None:
    names = [c["name"] for c in board_dict["cities"]]
    if city not in names:
        import difflib

        close = difflib.get_close_matches(city, names, n=1, cutoff=0.6)
        hint = f"did you mean {close[0]!r}?" if close else "see board.cities for the names"
        raise VariantError(f"{where}: unknown city {city!r}; {hint}")


def _find(entries: list, ref, kind: str, where: str, board_dict: dict) -> list[int]:
    """Positions in ``entries`` (routes or tickets) matched by an id or a city pair."""
    if isinstance(ref, (int, np.integer)) and not isinstance(ref, bool):
        hits = [i for i, e in enumerate(entries) if e["id"] == int(ref)]
        if not hits:
            raise VariantError(f"{where}: no {kind} with id {int(ref)} on this board "
                               f"(see board.{kind}s_frame() for the ids)")
        return hits
    pair = _pair_text(ref)
    if pair is None:
        raise VariantError(f"{where}: {ref!r} is not a {kind}: give its id or its cities as "
                           f"'A - B'")
    for city in pair:
        _check_city(board_dict, city, where)
    want = frozenset(pair)
    hits = [i for i, e in enumerate(entries) if frozenset((e["a"], e["b"])) == want]
    if not hits:
        raise VariantError(f"{where}: no {kind} joins {pair[0]} and {pair[1]} on this board")
    return hits


def _int(value, where: str, lo: int, hi: int) -> int:
    if not is_int(value):
        raise VariantError(f"{where} must be a whole number, got {value!r}")
    if value < 0 and lo >= 0:
        raise VariantError(f"{where} is {int(value)}: a count cannot be negative")
    if not lo <= value <= hi:
        raise VariantError(f"{where} is {int(value)}; it must be between {lo} and {hi}")
    return int(value)


def _as_list(value, where: str) -> list:
    if isinstance(value, (str, int)) or (isinstance(value, tuple) and len(value) == 2
                                         and all(isinstance(x, str) for x in value)):
        return [value]
    if not isinstance(value, (list, tuple)):
        raise VariantError(f"{where} must be a list, got {value!r}")
    return list(value)


def _as_mapping(value, where: str) -> dict:
    if not isinstance(value, dict):
        raise VariantError(f"{where} must be a mapping {{entry: value}}, got {value!r}")
    return value


def _key(ref):
    """A mapping key from a file may be an id written as text ("12")."""
    if isinstance(ref, str) and ref.strip().isdigit():
        return int(ref)
    return ref


# ---------------------------------------------------------------------------
# applying the changes


def _route_text(r) -> str:
    return f"route {r['id']} {r['a']} - {r['b']} ({r['length']} {r['color']})"


def _ticket_text(t) -> str:
    return f"ticket {t['id']} {t['a']} - {t['b']}"


def _apply_remove_routes(d: dict, value, desc: list):
    routes = d["routes"]
    gone = set()
    for ref in _as_list(value, "remove_routes"):
        gone.update(_find(routes, ref, "route", f"remove_routes entry {_ref_text(ref)}", d))
    ids = sorted(routes[i]["id"] for i in gone)
    desc += [f"{_route_text(routes[i])} removed" for i in sorted(gone)]
    kept = [r for i, r in enumerate(routes) if i not in gone]
    for r in kept:
        if r["double"] in ids:
            r["double"] = None        # the other half of a double stays, as a single
    if not kept:
        raise VariantError("remove_routes removes every route of the board")
    d["routes"] = kept
    return ids


def _apply_route_color(d: dict, value, desc: list):
    routes = d["routes"]
    out = {}
    colors = list(d["colors"])
    for ref, color in _as_mapping(value, "route_color").items():
        ref = _key(ref)
        where = f"route_color entry {_ref_text(ref)}"
        if not isinstance(color, str) or (color != "gray" and color not in colors):
            raise VariantError(f"{where}: unknown colour {color!r}; use 'gray' or one of "
                               f"{', '.join(colors)}")
        for i in _find(routes, ref, "route", where, d):
            if routes[i]["color"] != color:
                desc.append(f"{_route_text(routes[i])} colour {routes[i]['color']} -> {color}")
            routes[i]["color"] = color
            out[str(routes[i]["id"])] = color
    return dict(sorted(out.items(), key=lambda kv: int(kv[0])))


def _apply_route_length(d: dict, value, desc: list):
    routes = d["routes"]
    out = {}
    by_id = {r["id"]: r for r in routes}
    for ref, length in _as_mapping(value, "route_length").items():
        ref = _key(ref)
        where = f"route_length entry {_ref_text(ref)}"
        length = _int(length, where, 1, maps.MAX_LEN)
        hits = _find(routes, ref, "route", where, d)
        for i in hits:
            for r in [routes[i]] + ([by_id[routes[i]["double"]]]
                                    if routes[i]["double"] in by_id else []):
                if r["ferry"] > length:
                    raise VariantError(f"{where}: the ferry needs {r['ferry']} wild spaces, "
                                       f"more than the new length {length}")
                if r["length"] != length:
                    desc.append(f"{_route_text(r)} length -> {length}")
                r["length"] = length
                out[str(r["id"])] = length
    return dict(sorted(out.items(), key=lambda kv: int(kv[0])))


def _apply_remove_tickets(d: dict, value, desc: list):
    tickets = d["tickets"]
    gone = set()
    for ref in _as_list(value, "remove_tickets"):
        gone.update(_find(tickets, ref, "ticket", f"remove_tickets entry {_ref_text(ref)}",
                          d))
    desc += [f"{_ticket_text(tickets[i])} removed" for i in sorted(gone)]
    ids = sorted(tickets[i]["id"] for i in gone)
    d["tickets"] = [t for i, t in enumerate(tickets) if i not in gone]
    return ids


def _apply_ticket_points(d: dict, value, desc: list):
    tickets = d["tickets"]
    out = {}
    for ref, pts in _as_mapping(value, "ticket_points").items():
        ref = _key(ref)
        where = f"ticket_points entry {_ref_text(ref)}"
        pts = _int(pts, where, 1, 999)
        for i in _find(tickets, ref, "ticket", where, d):
            if tickets[i]["points"] != pts:
                desc.append(f"{_ticket_text(tickets[i])} points {tickets[i]['points']} -> {pts}")
            tickets[i]["points"] = pts
            out[str(tickets[i]["id"])] = pts
    return dict(sorted(out.items(), key=lambda kv: int(kv[0])))


def _apply_add_tickets(d: dict, value, desc: list):
    tickets = d["tickets"]
    added = []
    next_id = max([t["id"] for t in tickets] + [0]) + 1
    for k, entry in enumerate(_as_list(value, "add_tickets")):
        where = f"add_tickets entry {k + 1}"
        if isinstance(entry, (list, tuple)) and len(entry) in (3, 4):
            entry = dict(zip(("a", "b", "points", "long"), entry))
        if not isinstance(entry, dict) or not {"a", "b", "points"} <= set(entry):
            raise VariantError(f"{where} must give a, b and points (and optionally long, "
                               f"id), e.g. ('Lisboa', 'Moskva', 25); got {entry!r}")
        extra = set(entry) - {"a", "b", "points", "long", "id"}
        if extra:
            raise VariantError(f"{where} has unknown key {sorted(extra)[0]!r} "
                               f"(allowed: a, b, points, long, id)")
        a, b = entry["a"], entry["b"]
        for city in (a, b):
            if not isinstance(city, str):
                raise VariantError(f"{where}: a city name is text, got {city!r}")
            _check_city(d, city, where)
        if a == b:
            raise VariantError(f"{where}: both cities are {a!r}; a ticket joins two cities")
        where = f"add_tickets entry {a} - {b}"
        pts = _int(entry["points"], f"{where} points", 1, 999)
        long_ = entry.get("long", False)
        if not isinstance(long_, bool):
            raise VariantError(f"{where} long must be true or false, got {long_!r}")
        tid = entry.get("id")
        if tid is None:
            tid = next_id
        tid = _int(tid, f"{where} id", 0, maps.MAX_ID)
        if any(t["id"] == tid for t in tickets):
            raise VariantError(f"{where}: ticket id {tid} is already used")
        next_id = max(next_id, tid + 1)
        t = {"id": tid, "a": a, "b": b, "points": pts, "long": long_}
        tickets.append(t)
        added.append(t)
        desc.append(f"{_ticket_text(t)} added ({pts} points{', long' if long_ else ''})")
    return [dict(t) for t in added]


def _apply_route_points(d: dict, value, desc: list):
    rules = d["rules"]
    out = {}
    for length, pts in _as_mapping(value, "route_points").items():
        length = _key(length)
        where = f"route_points entry {length!r}"
        length = _int(length, f"{where} (a route length)", 1, maps.MAX_LEN)
        pts = _int(pts, where, 0, 999)
        old = rules["route_points"].get(str(length))
        if old != pts:
            desc.append(f"length-{length} route points {old} -> {pts}")
        rules["route_points"][str(length)] = pts
        out[str(length)] = pts
    rules["route_points"] = dict(sorted(rules["route_points"].items(), key=lambda kv: int(kv[0])))
    return dict(sorted(out.items(), key=lambda kv: int(kv[0])))


def _apply_deck(d: dict, value, desc: list):
    rules = d["rules"]
    out = {}
    for color, n in _as_mapping(value, "deck").items():
        name = "wild" if color in ("wild", "locomotives", "locomotive", d["wild"]) else color
        if name not in rules["deck"]:
            raise VariantError(f"deck entry {color!r}: unknown card colour; use one of "
                               f"{', '.join(d['colors'])} or 'wild'")
        n = _int(n, f"deck entry {color!r}", 0, maps.MAX_DECK)
        if rules["deck"][name] != n:
            desc.append(f"deck {name} cards {rules['deck'][name]} -> {n}")
        rules["deck"][name] = n
        out[name] = n
    return dict(sorted(out.items()))


def _apply_rules(d: dict, value, desc: list):
    rules = d["rules"]
    out = {}
    optional = {k: spec[2] for k, spec in maps.OPTIONAL_INT_RULES.items()}
    for k, v in _as_mapping(value, "rules").items():
        if k not in maps.RULE_KEYS and k not in optional:
            raise VariantError(f"rules entry {k!r}: unknown rule (see docs/maps.md: "
                               f"{', '.join(maps.RULE_KEYS + tuple(optional))})")
        if ((k in maps.INT_RULES or k in optional) and isinstance(v, (int, np.integer))
                and v < 0):
            raise VariantError(f"rules entry {k!r} is {v}: a count cannot be negative")
        old = rules.get(k, optional.get(k))
        if old != v:
            desc.append(f"rule {k} {old!r} -> {v!r}")
        rules[k] = v
        out[k] = v
    return dict(sorted(out.items()))


def _int_rule(key: str, lo: int, hi: int):
    """The applier of a whole-number rule (trains, stations, ...)."""
    def apply(d: dict, value, desc: list):
        rules = d["rules"]
        v = _int(value, key, lo, hi)
        if rules[key] != v:
            desc.append(f"{key.replace('_', ' ')} {rules[key]} -> {v}")
        rules[key] = v
        return v
    return apply


# One applier per keyword of ``variant``, applied in this order; each edits the map dict,
# appends its description lines and returns the resolved change that enters the hash.
_APPLIERS = (
    ("remove_routes", _apply_remove_routes),
    ("route_color", _apply_route_color),
    ("route_length", _apply_route_length),
    ("remove_tickets", _apply_remove_tickets),
    ("ticket_points", _apply_ticket_points),
    ("add_tickets", _apply_add_tickets),
    *((key, _int_rule(key, lo, hi)) for key, (lo, hi) in _INT_CHANGES.items()),
    ("route_points", _apply_route_points),
    ("deck", _apply_deck),
    ("rules", _apply_rules),
)


def _apply(d: dict, changes: dict) -> tuple[list[str], dict]:
    """Edit the map dict ``d`` in place; return the description lines and the resolved
    changes (routes and tickets as ids) that define the variant's hash."""
    desc: list[str] = []
    norm: dict[str, Any] = {}
    for key, apply in _APPLIERS:
        if key in changes:
            norm[key] = apply(d, changes[key], desc)
    return desc, norm


def _check_connected(d: dict, norm: dict) -> None:
    """Every ticket must join cities that some chain of routes connects."""
    parent = {c["name"]: c["name"] for c in d["cities"]}

    def root(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for r in d["routes"]:
        parent[root(r["a"])] = root(r["b"])
    added = {t["id"] for t in norm.get("add_tickets", ())}
    for t in d["tickets"]:
        if root(t["a"]) != root(t["b"]):
            kind = "added ticket" if t["id"] in added else "ticket"
            cause = "" if t["id"] in added else " once the removed routes are gone"
            raise VariantError(f"{kind} {t['id']} {t['a']} - {t['b']}: no chain of routes joins "
                               f"these cities{cause}; it could never be completed")


def _normalise_keys(changes: dict) -> dict:
    out = {}
    for k, v in changes.items():
        key = _ALIASES.get(k, k)
        if key not in CHANGE_KEYS:
            raise VariantError(f"unknown variant change {k!r}; choose from "
                               f"{', '.join(CHANGE_KEYS)} (or hand_size)")
        if key in out:
            raise VariantError(f"variant change {key!r} given twice")
        out[key] = v
    return out


def variant(board, *, name: str | None = None, title: str | None = None, **changes) -> Board:
    """A new validated board: ``board`` with ``changes`` applied (the original is untouched).

    ``board`` is a built-in name, a map file or a loaded board. ``changes`` are listed in
    the module docstring (``CHANGE_KEYS``). ``name`` and ``title`` name the new board
    (default: the base's name with the variant's hash, e.g. ``europe.v3f2a9c1d``).
    Raises :class:`VariantError` naming the bad entry for any impossible change.
    """
    try:
        # a name or a map file; a Board as it is (variants sit below the game layer)
        base = maps.load(board) if isinstance(board, str) else board
    except MapError as exc:
        raise VariantError(str(exc)) from None
    if not isinstance(base, Board):
        raise VariantError(f"a variant needs a board (name, map file or Board), got {board!r}")
    changes = _normalise_keys(changes)
    d = board_to_dict(base)
    desc, norm = _apply(d, changes)
    _check_connected(d, norm)
    digest = hashlib.sha256(json.dumps({"base": base.checksum, "changes": norm},
                                       sort_keys=True).encode()).hexdigest()
    d["name"] = name or f"{base.name}.v{digest[:8]}"
    description = "; ".join(desc) if desc else "no change"
    d["title"] = title or f"{base.title} (variant: {description})"
    try:
        new = maps.from_dict(d, source=f"variant of {base.name}")
    except MapError as exc:
        raise VariantError(str(exc)) from None
    info = {"name": d["name"], "title": d["title"],
            "base": base.name, "base_checksum": base.checksum, "base_path": base.path,
            "base_variant": base.variant, "changes": norm, "description": description,
            "hash": digest[:16]}
    return dataclasses.replace(new, variant=info)


def rebuild(info: dict) -> Board:
    """The variant board recorded in ``info`` (a ``board.variant``, e.g. from a manifest)."""
    if info.get("base_variant"):
        base = rebuild(info["base_variant"])
    else:
        base = maps.load(info.get("base_path") or info["base"])
    if base.checksum != info["base_checksum"]:
        raise VariantError(f"the base board {info['base']!r} has changed since the variant was "
                           f"made (checksum differs)")
    changes = dict(info["changes"])
    return variant(base, name=info.get("name"), title=info.get("title"), **changes)


def load_variant(path, board=None, default_base=None) -> Board:
    """Read a variant file (JSON, or TOML for ``.toml``) and apply it.

    The file holds the keyword arguments of :func:`variant`, plus optional ``base`` (the
    board, when ``board`` is not given), ``name`` and ``title``, e.g.::

        {"base": "europe", "trains": 40, "ticket_points": {"Paris - Wien": 10},
         "remove_routes": ["Rostov - Sochi"], "deck": {"wild": 18}}

    ``board`` overrides the file's ``base``; ``default_base`` is used when neither is given.
    """
    spec = os.fspath(path)
    if not os.path.isfile(spec):
        raise VariantError(f"variant file {spec!r} not found")
    try:
        if spec.endswith(".toml"):
            import tomllib

            with open(spec, "rb") as f:
                data = tomllib.load(f)
        else:
            with open(spec, encoding="utf-8") as f:
                data = json.load(f)
    except (ValueError, OSError) as exc:
        raise VariantError(f"{spec}: cannot read the variant file ({exc})") from None
    if not isinstance(data, dict):
        raise VariantError(f"{spec}: a variant file holds one object of changes")
    base = board if board is not None else data.get("base", default_base)
    if base is None:
        raise VariantError(f"{spec}: no base board: add \"base\": \"europe\" or pass --board")
    kwargs = {k: v for k, v in data.items() if k != "base"}
    try:
        return variant(base, **kwargs)
    except VariantError as exc:
        raise VariantError(f"{spec}: {exc}") from None


def comparison_boards(path, board=None, default_base: str = "europe") -> tuple[Board, Board]:
    """The two boards a comparison plays: the base (``board``, a name, path or Board;
    None: the base the file names, else ``default_base``) and the board of ``path``,
    a variant file (TOML, or JSON of changes) or a whole map file (JSON with routes).
    A variant of a variant gets its own base rebuilt."""
    spec = os.fspath(path)
    if not os.path.isfile(spec):
        raise ValueError(f"variant file {spec!r} not found")
    base = maps.load(board) if board else None
    is_map = False
    if not spec.endswith(".toml"):
        try:
            with open(spec, encoding="utf-8") as f:
                is_map = "routes" in json.load(f)
        except (OSError, ValueError):
            is_map = False
    other = maps.load(spec) if is_map else load_variant(spec, base, default_base)
    if base is None:
        info = other.variant or {}
        base = (rebuild(info["base_variant"]) if info.get("base_variant")
                else maps.load(info.get("base_path") or info.get("base") or default_base))
    return base, other
