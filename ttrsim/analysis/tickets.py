"""Destination tickets: keep rate, completion rate, expected points and balance."""
from __future__ import annotations

import numpy as np
import pandas as pd

from .inputs import (
    EVENT,
    MissingTable,
    attach,
    board_of,
    games_of,
    keys,
    require,
    source,
    ticket_facts,
)
from ttrsim._validate import check_int
from ttrsim.stats import DEFAULT_CONFIDENCE, rate_columns


def ticket_completion(
    run_or_tickets,
    games: pd.DataFrame | None = None,
    by=(),
    board=None,
    confidence: float = DEFAULT_CONFIDENCE,
) -> pd.DataFrame:
    """Keep rate, completion rate and expected points of each ticket.

    Parameters
    ----------
    run_or_tickets
        A run, its ``tickets`` table (per event) or its ``ticket_summary`` table.
    games
        The ``games`` table, needed to group per-event tickets by ``players``, ``policy``
        or ``board`` when ``run_or_tickets`` is a table (a run supplies its own).
    by
        Column name(s) among ``board, players, policy, seat`` to break the rates down by.
        Summary tables can only be grouped by the columns they have.
    board
        Adds the ticket ``name``; required for summary tables, which carry no points.

    Returns one row per group and ticket with ``offered, kept, completed, by_station``
    (counts), ``keep_rate`` = kept / offered and ``completion_rate`` = completed / kept,
    each with a Wilson interval (``_low``, ``_high``), and ``expected_points``: the mean
    points the ticket adds to its keeper's score,
    ``completion_rate * points - (1 - completion_rate) * points``, whose interval is the
    same expression at the bounds of the completion interval.
    """
    mode, table = source(run_or_tickets, "tickets")
    by = keys(by)
    board = board_of(run_or_tickets, board)
    sums = {c: (c, "sum") for c in ("kept", "completed", "by_station")}
    if mode == EVENT:
        table = attach(table, games_of(run_or_tickets, games), by)
        if "by_station" not in table.columns:
            sums.pop("by_station")
        counts = table.groupby([*by, "ticket"], observed=True).agg(
            points=("points", "first"), long=("long", "first"), offered=("kept", "size"), **sums
        )
    else:
        require(table, [*by, "ticket", "offered", "kept", "completed"], "ticket_summary")
        if board is None:
            raise MissingTable("ticket_summary has no ticket points: pass the board")
        if "by_station" not in table.columns:
            sums.pop("by_station")
        counts = table.groupby([*by, "ticket"], observed=True).agg(offered=("offered", "sum"), **sums)
        facts = ticket_facts(board)[["points", "long"]]
        counts = counts.join(facts, on="ticket")
    out = counts.reset_index()
    if board is not None:
        out["name"] = out.ticket.map(ticket_facts(board).name)
    front = [*by, "ticket", *(["name"] if board is not None else []), "points", "long", "offered"]
    out = out[front + [c for c in out.columns if c not in front]]
    out = out.assign(
        **rate_columns("keep_rate", out.kept, out.offered, confidence),
        **rate_columns("completion_rate", out.completed, out.kept, confidence),
    )
    points = out.points.to_numpy(dtype=float)
    for suffix in ("", "_low", "_high"):
        out[f"expected_points{suffix}"] = points * (2 * out[f"completion_rate{suffix}"] - 1)
    return out


#: Tickets kept fewer times than this are not ranked by :func:`ticket_balance`.
MIN_KEPT = 30


def ticket_balance(
    run_or_tickets,
    games: pd.DataFrame | None = None,
    by=(),
    board=None,
    confidence: float = DEFAULT_CONFIDENCE,
    min_kept: int = MIN_KEPT,
) -> pd.DataFrame:
    """Tickets ranked by how far their printed value is from their value in play.

    The value in play is ``expected_points`` of :func:`ticket_completion`: the mean points a
    kept ticket adds to its keeper's score (its value when completed, minus its value when
    failed). The balance gap is ``gap = points - expected_points``, with the interval
    ``points - expected_points_high .. points - expected_points_low``. As completion rates
    are at most 1 the gap is never negative: it equals ``2 * points * (1 - completion_rate)``,
    the points a keeper forfeits on average compared with the printed value. A large gap
    marks a ticket whose printed value overstates what it is worth to the players who keep
    it.

    Tickets are ranked by ``gap_low``, the lower end of the gap's interval (largest first,
    ``rank`` 1), so that a ticket kept in a handful of games, whose interval is wide, does
    not outrank one whose large gap is certain. Tickets kept fewer than ``min_kept`` times
    get no rank (``<NA>``) and come last: too few games to say.

    Arguments as for :func:`ticket_completion`; the result has its columns plus
    ``gap, gap_low, gap_high, abs_gap, rank`` (ranks within each group of ``by``).
    """
    min_kept = check_int("min_kept", min_kept, 0)
    out = ticket_completion(run_or_tickets, games, by, board, confidence)
    points = out.points.to_numpy(dtype=float)
    out["gap"] = points - out.expected_points
    out["gap_low"] = points - out.expected_points_high
    out["gap_high"] = points - out.expected_points_low
    out["abs_gap"] = np.abs(out.gap)
    group = keys(by)
    ranked = out.kept >= max(min_kept, 1)
    score = out.gap_low.where(ranked)
    out = out.assign(_score=score).sort_values(
        [*group, "_score", "abs_gap"], ascending=[True] * len(group) + [False, False],
        na_position="last", kind="stable")
    ranks = out.groupby(group, observed=True)._score if group else out._score
    out["rank"] = ranks.rank(method="min", ascending=False).astype("Int64")
    return out.drop(columns="_score").reset_index(drop=True)
