"""Routes: how often each is claimed, when, and how often it was not needed."""
from __future__ import annotations

import numpy as np
import pandas as pd

from .inputs import (
    EVENT,
    attach,
    board_of,
    count_games,
    games_of,
    keys,
    require,
    route_facts,
    source,
)
from ttrsim.stats import DEFAULT_CONFIDENCE, rate_columns

#: Width of the turn bins of ``route_summary`` (``turn_bin = turn // 10 * 10``).
TURN_BIN = 10
_QUARTILES = {"turn_q1": 0.25, "turn_median": 0.5, "turn_q3": 0.75}


def binned_quantile(bins, counts, q: float, width: float = TURN_BIN) -> float:
    """Quantile ``q`` of values known only by bin (lower edges ``bins``, equal ``width``),
    interpolating linearly inside the bin where the cumulative count reaches ``q``."""
    bins = np.asarray(bins, dtype=float)
    counts = np.asarray(counts, dtype=float)
    order = np.argsort(bins)
    bins, counts = bins[order], counts[order]
    cum = np.cumsum(counts)
    if not len(cum) or cum[-1] <= 0:
        return float("nan")
    target = q * cum[-1]
    i = min(int(np.searchsorted(cum, target)), len(cum) - 1)
    before = cum[i - 1] if i else 0.0
    inside = (target - before) / counts[i] if counts[i] else 0.0
    return float(bins[i] + width * inside)


def route_claims(
    run_or_routes,
    games: pd.DataFrame | None = None,
    board=None,
    by=(),
    n_games: int | None = None,
    confidence: float = DEFAULT_CONFIDENCE,
) -> pd.DataFrame:
    """Claim frequency, timing and necessity of each route.

    Parameters
    ----------
    run_or_routes
        A run, its ``routes`` table (per event) or its ``route_summary`` table.
    games
        The ``games`` table: counts the games of each group and supplies ``players``,
        ``policy``, ``board`` for ``by`` (a run supplies its own).
    board
        Adds ``name, a, b, length, color, tunnel`` and lists routes never claimed (0 claims).
    by
        Column name(s) to break down by (``players``, ``seat``, ``policy`` ...); ``seat``
        and ``policy`` count only that seat's claims, out of the games it played.
    n_games
        Number of games when there is no games table (default: the run manifest's).

    Returns one row per group and route: ``games``, ``claims``, ``claim_rate`` = share of
    games in which the route was claimed (a route is claimed at most once per game), with a
    Wilson interval; ``turn_q1, turn_median, turn_q3``: quartiles of the turn of claim
    (summary tables: interpolated inside the 10-turn bins); ``unneeded``: claims whose
    route was not ``needed`` for a completed ticket of its owner, and ``unneeded_share`` =
    unneeded / claims with a Wilson interval.
    """
    mode, table = source(run_or_routes, "routes")
    by = keys(by)
    games = games_of(run_or_routes, games)
    if mode == EVENT:
        table = attach(table, games, by)
        table = table.assign(unneeded=~table.needed.astype(bool))
        grouped = table.groupby([*by, "route"], observed=True)
        out = grouped.agg(claims=("turn", "size"), unneeded=("unneeded", "sum"))
        quartiles = grouped.turn.quantile(list(_QUARTILES.values())).unstack()
        out[list(_QUARTILES)] = quartiles.to_numpy(dtype=float)
    else:
        require(table, [*by, "route", "turn_bin", "claims", "needed"], "route_summary")
        rows = []
        for key, part in table.groupby([*by, "route"], observed=True):
            claims = int(part.claims.sum())
            rows.append({
                **dict(zip([*by, "route"], key)),
                "claims": claims,
                "unneeded": claims - int(part.needed.sum()),
                **{name: binned_quantile(part.turn_bin, part.claims, q) for name, q in _QUARTILES.items()},
            })
        out = pd.DataFrame(rows).set_index([*by, "route"])
    total = count_games(run_or_routes, games, by, n_games)
    board = board_of(run_or_routes, board)
    facts = route_facts(board) if board is not None else None
    if facts is not None:
        # List every route of the board in every group, unclaimed ones with 0 claims.
        if by:
            groups = [g if isinstance(g, tuple) else (g,) for g in total.index]
            index = pd.MultiIndex.from_tuples(
                [(*g, r) for g in groups for r in facts.index], names=[*by, "route"]
            )
        else:
            index = facts.index
        out = out.reindex(index).fillna({"claims": 0, "unneeded": 0})
    out = out.astype({"claims": int, "unneeded": int}).reset_index()
    if by:
        out = out.merge(total.rename("games").reset_index(), on=by, how="left")
    else:
        out["games"] = total
    if facts is not None:
        out = out.join(facts, on="route")
    front = [*by, "route", *([] if facts is None else facts.columns), "games", "claims"]
    out = out[front + [c for c in out.columns if c not in front]]
    return out.assign(
        **rate_columns("claim_rate", out.claims, out.games, confidence),
        **rate_columns("unneeded_share", out.unneeded, out.claims, confidence),
    )
