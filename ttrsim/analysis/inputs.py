"""Access to a run's tables and to board facts, shared by the analysis modules.

Every analysis function takes either a run (an object with the tables of
``docs/tables.md`` as attributes, plus ``manifest`` and ``board``) or the DataFrame(s) it
needs. Per-event tables carry a ``game`` column; summary tables do not, which is how a
DataFrame passed on its own is recognised.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np
import pandas as pd

from ttrsim._validate import shown

EVENT = "event"
SUMMARY = "summary"

# Per-event table -> the count table that replaces it in summary mode.
SUMMARY_OF = {
    "games": "seat_summary",
    "tickets": "ticket_summary",
    "routes": "route_summary",
    "tunnels": "tunnel_summary",
    "stations": "station_summary",
}


class MissingTable(ValueError):
    """The run (or the arguments) do not hold the table an analysis needs."""


def runs_of(run_or_runs, what: str) -> list:
    """A run, a saved run's directory or a list of either, as a list of runs: a directory
    is read with ``load_run`` (as the command line reads it), anything else that is no run
    is refused in one line. ``what``: the function, for the message."""
    import os

    from ttrsim.results import load_run

    items = list(run_or_runs) if isinstance(run_or_runs, (list, tuple)) else [run_or_runs]
    out = []
    for item in items:
        if isinstance(item, (str, os.PathLike)):
            item = load_run(item)
        elif not (hasattr(item, "manifest") and hasattr(item, "board")):
            raise ValueError(f"{what} needs a run (ttrsim.load_run(DIR), ttrsim.simulate(...)) "
                             f"or a saved run's directory, got {item!r}")
        out.append(item)
    return out


def is_frame(obj) -> bool:
    return isinstance(obj, pd.DataFrame)


def source(obj, name: str) -> tuple[str, pd.DataFrame]:
    """``(mode, table)`` for the per-event table ``name`` of ``obj`` or its summary table."""
    if is_frame(obj):
        return (EVENT if "game" in obj.columns else SUMMARY), obj
    table = getattr(obj, name, None)
    if table is not None:
        return EVENT, table
    table = getattr(obj, SUMMARY_OF[name], None)
    if table is not None:
        return SUMMARY, table
    raise MissingTable(f"the run has neither a `{name}` nor a `{SUMMARY_OF[name]}` table")


def games_of(obj, games: pd.DataFrame | None = None) -> pd.DataFrame | None:
    """The per-event games table: ``games`` if given, else the run's, else None."""
    if games is not None or is_frame(obj):
        return games
    return getattr(obj, "games", None)


def board_of(obj, board=None):
    if board is not None or is_frame(obj):
        return board
    return getattr(obj, "board", None)


def manifest_of(obj) -> dict:
    if is_frame(obj):
        return {}
    return dict(getattr(obj, "manifest", None) or {})


#: Manifest keys two runs must share for game ``g`` of one to be game ``g`` of the other
#: (same deal and shuffles), with the words naming them in an error.
GAME_IDENTITY = {"board": "board", "board_checksum": "board checksum", "players": "player count",
                 "games": "game count", "seed": "seed", "rotate": "seat layout (rotation)",
                 "max_turns": "turn limit"}


def identity_differences(run, other, run_name: str, other_name: str) -> list[str]:
    """What keeps ``run`` and ``other`` from playing the same games: one phrase per
    :data:`GAME_IDENTITY` key whose manifest values differ (a key missing from either
    manifest is not compared), e.g. ``"seed 1 in the baseline, 2 in the run"``."""
    m, o = manifest_of(run), manifest_of(other)
    return [f"{word} {shown(o[k])} in {other_name}, {shown(m[k])} in {run_name}"
            for k, word in GAME_IDENTITY.items() if k in m and k in o and m[k] != o[k]]


def keys(by) -> list[str]:
    """Normalise a ``by`` argument (None, a column name or a sequence of names)."""
    if by is None:
        return []
    if isinstance(by, str):
        return [by]
    return list(by)


def require(df: pd.DataFrame, columns: Iterable[str], what: str) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise MissingTable(f"{what} has no column(s) {', '.join(missing)}")


def attach(df: pd.DataFrame, games: pd.DataFrame | None, columns: Iterable[str]) -> pd.DataFrame:
    """``df`` with the ``columns`` it lacks joined from ``games`` on ``(game, seat)``."""
    need = [c for c in columns if c not in df.columns]
    if not need:
        return df
    if games is None:
        raise MissingTable(f"grouping by {', '.join(need)} needs the games table")
    require(games, need, "the games table")
    return df.merge(games[["game", "seat", *need]], on=["game", "seat"], how="left")


def groups(df: pd.DataFrame, by: list[str]) -> Iterator[tuple[dict, pd.DataFrame]]:
    """``(key columns, rows)`` for each group of ``by``; one group of all rows when empty."""
    if not by:
        yield {}, df
        return
    for key, rows in df.groupby(by, observed=True, sort=True):
        yield dict(zip(by, key)), rows


def count_games(obj, games: pd.DataFrame | None, by: list[str], given: int | None = None) -> pd.Series | int:
    """Number of games in each group of ``by`` (a Series indexed by ``by``), or in all.

    From the games table when there is one; else ``given`` or the manifest's ``games``
    (only without grouping).
    """
    if games is not None:
        if by:
            require(games, by, "the games table")
            return games.groupby(by, observed=True).game.nunique()
        return int(games.game.nunique())
    if by:
        raise MissingTable(f"grouping by {', '.join(by)} needs the games table")
    if given is None:
        given = manifest_of(obj).get("games")
    if given is None:
        raise MissingTable("the number of games is unknown: pass n_games or the games table")
    return int(given)


def players_of(obj) -> int | None:
    """Player count of a summary-mode run, from its manifest (``players`` or ``policies``)."""
    manifest = manifest_of(obj)
    if manifest.get("players") is not None:
        return int(manifest["players"])
    policies = manifest.get("policies")
    if isinstance(policies, (list, tuple)):
        return len(policies)
    return None


def ticket_facts(board) -> pd.DataFrame:
    """Board tickets indexed by ticket id: ``name, points, long``."""
    ids = np.asarray(board.ticket_id)
    return pd.DataFrame(
        {
            "name": [board.ticket_name(i) for i in range(len(ids))],
            "points": np.asarray(board.ticket_points, dtype=int),
            "long": np.asarray(board.ticket_long, dtype=bool),
        },
        index=pd.Index(ids, name="ticket"),
    )


def route_facts(board) -> pd.DataFrame:
    """Board routes indexed by route id: ``name, a, b, length, color, tunnel``.

    ``a``/``b`` are city indices; ``color`` is a colour name or ``gray``.
    """
    ids = np.asarray(board.route_id)
    colors = [board.colors[c] if c >= 0 else "gray" for c in np.asarray(board.route_color)]
    return pd.DataFrame(
        {
            "name": [board.route_name(i) for i in range(len(ids))],
            "a": np.asarray(board.route_a, dtype=int),
            "b": np.asarray(board.route_b, dtype=int),
            "length": np.asarray(board.route_len, dtype=int),
            "color": colors,
            "tunnel": np.asarray(board.route_tunnel, dtype=bool),
        },
        index=pd.Index(ids, name="route"),
    )
