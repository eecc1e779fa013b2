"""Train stations (Europe): where they are built and what they are worth.

Station value is measured by a paired experiment with common random numbers: two runs of
the same board, policies, seed and games, identical except that in one of them the
treated seat may build stations and in the other it may not. Game ``g`` of both runs
starts from the same shuffle, so the per-game difference of the treated seat's results
isolates the effect of stations with far less noise than comparing unrelated games.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .inputs import (EVENT, MissingTable, attach, board_of, count_games, games_of,
                      identity_differences, keys, manifest_of, require, source)
from ttrsim.stats import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    as_generator,
    bootstrap_mean,
    bootstrap_ratio,
    rate_columns,
)

#: Manifest key (of the run without stations) listing the seats not allowed to build.
NO_STATIONS_KEY = "no_stations"

# Games columns compared between the two runs (``policy`` is optional: it can identify
# the treated seat).
_PAIRED = ["players", "score", "win", "tickets_completed", "ticket_points", "station_points",
           "stations_built", "tickets_by_station"]


def _event_games(run_or_games, role: str) -> pd.DataFrame:
    mode, games = source(run_or_games, "games")
    if mode != EVENT:
        raise MissingTable(f"station value needs the per-event games table of the run {role} stations")
    require(games, ["game", "seat", *_PAIRED], f"the games table {role} stations")
    return games


def _treated(joined: pd.DataFrame, seat, run_without) -> pd.Series:
    """Rows of the seat(s) whose stations are switched off in the run without them."""
    seats = seat if seat is not None else manifest_of(run_without).get(NO_STATIONS_KEY)
    if seats is not None:
        return joined.seat.isin(np.atleast_1d(seats).astype(int))
    if "policy_with" in joined.columns:
        differs = joined.policy_with.astype(str) != joined.policy_without.astype(str)
        if differs.any():
            return differs
    raise ValueError(
        "cannot tell which seat may build stations: pass seat=, or give the run without "
        f"stations a manifest entry {NO_STATIONS_KEY!r} or a different policy spec for that seat"
    )


def check_paired_runs(run, baseline) -> None:
    """Refuse two runs that are not paired: the run and its baseline must share board,
    player count, game count, seed, seat layout and turn limit (their manifests say so;
    a key missing from either manifest is not compared). Raises a ValueError naming
    every difference on one line."""
    diff = identity_differences(run, baseline, "the run", "the baseline")
    if diff:
        raise ValueError("the baseline is not a paired run of this one (" + "; ".join(diff) +
                         "): simulate the baseline with the same board, players, games, seed "
                         "and seat layout, changing only the stations of a seat")


def station_games(with_stations, without_stations, seat=None) -> pd.DataFrame:
    """The treated seats' rows of two paired runs (:func:`station_value`'s arguments),
    joined on ``(game, seat)``: the games columns of each run with the suffixes ``_with``
    and ``_without``. Refuses runs that are not paired (:func:`check_paired_runs`)."""
    w = _event_games(with_stations, "with")
    wo = _event_games(without_stations, "without")
    check_paired_runs(with_stations, without_stations)
    cols = _PAIRED + (["policy"] if "policy" in w.columns and "policy" in wo.columns else [])
    joined = w[["game", "seat", *cols]].merge(
        wo[["game", "seat", *cols]], on=["game", "seat"], suffixes=("_with", "_without")
    )
    if joined.empty:
        raise ValueError("the two runs have no game in common")
    return joined[_treated(joined, seat, without_stations)]


def station_value(
    with_stations,
    without_stations,
    seat=None,
    confidence: float = DEFAULT_CONFIDENCE,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed=0,
) -> pd.DataFrame:
    """Paired estimate of what building stations is worth to a seat.

    Parameters
    ----------
    with_stations, without_stations
        Two per-event runs (or their ``games`` tables) of the same seed and games, in which
        the treated seat may and may not build stations. Games are paired on
        ``(game, seat)``; runs whose manifests name a different board, player count,
        game count, seed, seat layout or turn limit are refused (:func:`check_paired_runs`).
    seat
        Treated seat(s). By default the seats listed under the manifest key ``no_stations``
        of ``without_stations``, else the rows whose policy spec differs between the runs.
    confidence, n_resamples, seed
        Percentile bootstrap over games (pairs resampled together).

    Returns a long table, one row per treated ``seat`` (``<NA>`` = all treated seats
    pooled, only when there are several), ``players`` (``<NA>`` = all player counts) and
    ``metric``, with ``unit``, ``games``, ``with``/``without`` (means in each run, for the
    paired differences) and ``estimate, low, high``. Metrics:

    - ``score_diff``, ``win_diff``, ``tickets_completed_diff``, ``ticket_points_diff``:
      mean per-game difference (with - without) of the seat's score, wins (share of games),
      completed tickets and ticket points.
    - ``stations_built``, ``tickets_by_station``: mean per game with stations (stations
      built; tickets completed only thanks to a station, i.e. rescued).
    - ``points_per_station``: total score difference / stations built -- the net value of
      one station, after giving up its unbuilt-station bonus.
    - ``gross_points_per_station``: the same without the bonus change, i.e. what a station
      brings through tickets and the routes it frees the seat to play.
    - ``bonus_per_station``: unbuilt-station bonus given up per station built (4 points).
      Building pays on average when ``gross_points_per_station`` exceeds it, i.e. when
      ``points_per_station`` is positive.
    """
    joined = station_games(with_stations, without_stations, seat)
    rng = as_generator(seed)

    seats = sorted(joined.seat.unique())
    seat_keys = [*seats, pd.NA] if len(seats) > 1 else seats
    rows = []
    for s in seat_keys:
        at_seat = joined if s is pd.NA else joined[joined.seat == s]
        for p in [pd.NA, *sorted(at_seat.players_with.unique())]:
            part = at_seat if p is pd.NA else at_seat[at_seat.players_with == p]
            for metric in _station_metrics(part, confidence, n_resamples, rng):
                rows.append({"seat": s, "players": p, "games": len(part), **metric})
    out = pd.DataFrame(rows)
    return out.astype({"seat": "Int64", "players": "Int64"})


def _metric(metric: str, unit: str, est, with_=np.nan, without=np.nan) -> dict:
    return {"metric": metric, "unit": unit, "with": with_, "without": without,
            "estimate": est.estimate, "low": est.low, "high": est.high}


def _station_metrics(part: pd.DataFrame, confidence, n_resamples, rng) -> list[dict]:
    def col(name, run):
        return part[f"{name}_{run}"].to_numpy(dtype=float)

    diff = {name: col(name, "with") - col(name, "without")
            for name in ("score", "win", "tickets_completed", "ticket_points", "station_points")}
    built = col("stations_built", "with")
    boot = {"confidence": confidence, "n_resamples": n_resamples, "seed": rng}
    rows = [
        _metric(f"{name}_diff", unit, bootstrap_mean(diff[name], **boot),
                col(name, "with").mean(), col(name, "without").mean())
        for name, unit in (("score", "points"), ("win", "share of games"),
                           ("tickets_completed", "tickets"), ("ticket_points", "points"))
    ]
    rows += [
        _metric(name, f"{unit} per game", bootstrap_mean(col(name, "with"), **boot))
        for name, unit in (("stations_built", "stations"), ("tickets_by_station", "tickets"))
    ]
    rows += [
        _metric(name, "points per station", bootstrap_ratio(gain, built, **boot))
        for name, gain in (("points_per_station", diff["score"]),
                           ("gross_points_per_station", diff["score"] - diff["station_points"]),
                           ("bonus_per_station", -diff["station_points"]))
    ]
    return rows


def station_usage(
    run_or_stations,
    board=None,
    n_games: int | None = None,
    confidence: float = DEFAULT_CONFIDENCE,
    by=(),
) -> pd.DataFrame:
    """Where stations are built: per city, ``built`` (stations built there over all games),
    ``built_rate`` = share of games with a station there (a city holds at most one),
    ``borrowed`` (stations there that borrowed a route at the end) and ``useful_rate`` =
    borrowed / built, with Wilson intervals; ``turn_mean`` (mean turn of building, per-event
    runs only). With a board every city is listed, unbuilt ones with 0.
    ``n_games`` defaults to the games table or the manifest.

    ``by``: games column(s) to split by, e.g. ``"policy"`` (per-event runs): each group
    counts its own seats' stations, out of the games it played (``games``).
    """
    by = keys(by)
    mode, table = source(run_or_stations, "stations")
    games = games_of(run_or_stations)
    if mode == EVENT:
        require(table, ["city", "borrowed"], "the stations table")
        table = attach(table, games, by)
        table = table.assign(city=table.city.astype(str), useful=table.borrowed.ne(-1))
        agg = {"built": ("city", "size"), "borrowed": ("useful", "sum")}
        if "turn" in table.columns:
            agg["turn_mean"] = ("turn", "mean")
        out = table.groupby([*by, "city"], observed=True).agg(**agg)
    else:
        require(table, ["city", "built", "borrowed", *by], "station_summary")
        out = table.assign(city=table.city.astype(str)).groupby([*by, "city"], observed=True)[
            ["built", "borrowed"]].sum()
    total = count_games(run_or_stations, games, by, n_games)
    board = board_of(run_or_stations, board)
    if board is not None:
        if by:
            groups = [g if isinstance(g, tuple) else (g,) for g in total.index]
            index = pd.MultiIndex.from_tuples([(*g, c) for g in groups for c in board.cities],
                                              names=[*by, "city"])
        else:
            index = pd.Index(list(board.cities), name="city")
        out = out.reindex(index)
    out = out.fillna({"built": 0, "borrowed": 0}).astype({"built": int, "borrowed": int})
    out = out.rename_axis([*by, "city"]).reset_index()
    if by:
        out = out.merge(total.rename("games").reset_index(), on=by, how="left")
    else:
        out["games"] = total
    out = out.assign(
        **rate_columns("built_rate", out.built, out.games, confidence),
        **rate_columns("useful_rate", out.borrowed, out.built, confidence),
    )
    return out.sort_values([*by, "built"], ascending=[True] * len(by) + [False], kind="stable",
                           ignore_index=True)
