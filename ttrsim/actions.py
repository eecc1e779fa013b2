"""Readable actions over the core's integer action codes.

An action code is one int32: ``kind << 24 | a << 16 | b << 8 | c`` (see
``ext/ttrsim/_structs.pxd``). Codes are stable: the same move on the same board always
has the same code, so they can be stored and compared.
"""
from __future__ import annotations

from dataclasses import dataclass

WILD = 8  # card type of the wild card (locomotive / taxi)

KINDS = ("pass", "draw_faceup", "draw_blind", "claim", "draw_tickets", "keep", "station",
         "tunnel_pay", "tunnel_decline")
KIND_CODE = {name: i for i, name in enumerate(KINDS)}


class IllegalActionError(ValueError):
    """An action that is not legal in the current position."""


class PolicyError(RuntimeError):
    """A policy answered with an illegal or malformed action, or raised."""


def encode(kind: str, a: int = 0, b: int = 0, c: int = 0) -> int:
    """Integer code of an action (see the module docstring)."""
    if kind not in KIND_CODE:
        raise ValueError(f"unknown action kind {kind!r}; expected one of {', '.join(KINDS)}")
    for v in (a, b, c):
        if not 0 <= v < 256:
            raise ValueError(f"action field {v} outside 0..255")
    return (KIND_CODE[kind] << 24) | (a << 16) | (b << 8) | c


def card_name(board, card: int) -> str:
    """Name of a card type: a colour of the board, or ``"wild"``."""
    return "wild" if card == WILD else board.colors[card]


def card_type(board, name) -> int:
    """Card type of a colour name, ``"wild"`` or the board's wild name (e.g. locomotive)."""
    if isinstance(name, (int,)) and not isinstance(name, bool):
        if name == WILD or 0 <= name < len(board.colors):
            return int(name)
        raise ValueError(f"card type {name} outside 0..{len(board.colors) - 1} and {WILD} (wild)")
    if name in ("wild", board.wild):
        return WILD
    try:
        return board.colors.index(name)
    except ValueError:
        raise ValueError(f"unknown card {name!r} on {board.name}: expected one of "
                         f"{', '.join(board.colors)} or wild") from None


@dataclass(frozen=True)
class Action:
    """One legal move. ``code`` is its stable integer id; the other fields say what it does.

    kind: ``draw_faceup`` (slot), ``draw_blind``, ``claim`` (route, color, wild),
    ``draw_tickets``, ``keep`` (mask over the tickets offered), ``station`` (city, color,
    wild), ``tunnel_pay`` (wild: wild cards among the extra cards), ``tunnel_decline``,
    ``pass``. ``color`` is the colour of the non-wild cards played (``"wild"`` when all are
    wild); ``route`` and ``city`` are indices into the board's arrays.
    """

    code: int
    kind: str
    slot: int | None = None
    route: int | None = None
    city: int | None = None
    color: str | None = None
    wild: int | None = None
    mask: int | None = None
    text: str = ""

    @classmethod
    def decode(cls, code: int, board, view: dict | None = None) -> "Action":
        """The action of an integer code on ``board``.

        Without ``view`` the text depends on the code alone: face-up draws name the slot
        and ticket choices the positions in the offer. With ``view``, the observation of
        the seat to move (``game.observation(game.current_player)``; ``describe`` builds
        it), the text also names what that seat sees: the face-up card's colour, the
        tickets offered, the tunnel's route and extra cards. Routes and tickets are named
        by their map ids, so a double route's two halves always read differently.
        """
        code = int(code)
        k, a, b, c = (code >> 24) & 0xFF, (code >> 16) & 0xFF, (code >> 8) & 0xFF, code & 0xFF
        if k >= len(KINDS):
            raise ValueError(f"{code} is not an action code")
        kind = KINDS[k]
        if kind == "draw_faceup":
            text = f"draw face-up card {a}"
            if view is not None and 0 <= view["faceup"][a]:
                text += f" ({card_name(board, view['faceup'][a])})"
            return cls(code, kind, slot=a, text=text)
        if kind == "claim":
            color = card_name(board, b)
            return cls(code, kind, route=a, color=color, wild=c,
                       text=f"claim {route_text(board, a)} with "
                            f"{_cards(board, b, board.route_len[a], c)}")
        if kind == "station":
            color = card_name(board, b)
            n = c if b == WILD else None
            return cls(code, kind, city=a, color=color, wild=c,
                       text=f"station on {board.cities[a]} paying {color} + {c} wild" if n is None
                       else f"station on {board.cities[a]} paying {c} wild")
        if kind == "keep":
            picked = [i for i in range(8) if a >> i & 1]
            offer = view.get("pending") if view is not None else None
            if offer and picked and max(picked) < len(offer):
                text = "keep " + ", ".join(ticket_text(board, offer[i]) for i in picked)
            else:
                text = f"keep tickets {picked}"
            return cls(code, kind, mask=a, text=text)
        tunnel = view.get("tunnel") if view is not None else None
        if kind == "tunnel_pay":
            text = f"pay the tunnel's extra cards ({c} wild)"
            if tunnel:
                extra = int(tunnel["extra"])
                text = (f"pay the tunnel's {extra} extra cards "
                        f"({_cards(board, int(tunnel['color']), extra, c)}) for "
                        f"{route_text(board, int(tunnel['route']))}")
            return cls(code, kind, wild=c, text=text)
        if kind == "tunnel_decline" and tunnel:
            return cls(code, kind, text=f"tunnel decline: take back the cards played for "
                                        f"{route_text(board, int(tunnel['route']))}")
        return cls(code, kind, text=kind.replace("_", " "))

    def __int__(self) -> int:
        return self.code

    def __str__(self) -> str:
        return self.text or self.kind


def route_text(board, i: int) -> str:
    """A route in action text: its map id, then its name, e.g.
    ``"route 17 Berlin - Frankfurt (3 black)"`` (the id tells a double route's halves
    apart)."""
    return f"route {int(board.route_id[i])} {board.route_name(i)}"


def ticket_text(board, i: int) -> str:
    """A ticket in action text: its map id, then its name, e.g.
    ``"ticket 27 Paris - Wien (8)"`` on Europe."""
    return f"ticket {int(board.ticket_id[i])} {board.ticket_name(i)}"


def describe(code: int, game) -> str:
    """Text of an action code in ``game``'s position, naming what the seat to move sees
    (face-up colours, the tickets offered, the tunnel's cards). Deterministic: the same
    code in the same position always gives the same text, and no two legal actions of
    a position share a text."""
    view = None if game.is_over() else game.observation(game.current_player)
    return str(Action.decode(code, game.board, view))


def _cards(board, color: int, n: int, wild: int) -> str:
    if color == WILD:
        return f"{n} wild"
    if wild and wild == n:
        return f"{n} wild"
    plain = f"{n - wild} {board.colors[color]}"
    return plain + (f" + {wild} wild" if wild else "")


def describe_policy(target) -> str:
    """A short name for a Python policy object or callable (used in error messages)."""
    name = getattr(target, "name", None)
    if isinstance(name, str):
        return name
    return getattr(target, "__qualname__", None) or type(target).__name__


def check_choice(answer, actions: list[Action], spec: str, seat: int, turn: int) -> int:
    """Code of a Python policy's answer if it is one of the legal actions, else raise
    ``PolicyError`` naming the policy, the seat, the turn and the legal actions (the
    error every loop raises for a policy's bad answer, as ``PyPolicy`` calls this)."""
    code = answer.code if isinstance(answer, Action) else answer
    if isinstance(code, bool) or not isinstance(code, int):
        try:
            import numpy as np

            if isinstance(code, np.integer):
                code = int(code)
        except ImportError:  # pragma: no cover
            pass
    if isinstance(code, int) and not isinstance(code, bool):
        for a in actions:
            if a.code == code:
                return code
    listing = "; ".join(f"{a.code}: {a}" for a in actions[:20])
    more = f" (and {len(actions) - 20} more)" if len(actions) > 20 else ""
    raise PolicyError(f"policy {spec!r} (seat {seat}, turn {turn}) answered {answer!r}, which "
                      f"is not one of the {len(actions)} legal actions: {listing}{more}")
