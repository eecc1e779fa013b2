"""Seats, policies and games: seat advantage, policy strength, scores, game length."""
from __future__ import annotations

import numpy as np
import pandas as pd

from .inputs import EVENT, SUMMARY, MissingTable, groups, keys, players_of, require, source
from ttrsim.stats import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    as_generator,
    bootstrap_mean,
    normal_mean_interval,
    rate_columns,
    std_from_sums,
)

DEFAULT_QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)


def _games(run_or_games, by: list[str]) -> tuple[str, pd.DataFrame]:
    """The games table or the seat summary; a summary gets ``players`` from the manifest."""
    mode, table = source(run_or_games, "games")
    if mode == SUMMARY and "players" in by and "players" not in table.columns:
        players = players_of(run_or_games)
        if players is None:
            raise MissingTable("seat_summary has no player count: pass a run whose manifest has it")
        table = table.assign(players=players)
    require(table, by, "the games table" if mode == EVENT else "seat_summary")
    return mode, table


def _with_seat(by) -> list[str]:
    by = keys(by)
    return by if "seat" in by else [*by, "seat"]


def _interval(prefix: str, est) -> dict:
    return {prefix: est.estimate, f"{prefix}_low": est.low, f"{prefix}_high": est.high}


def seat_advantage(
    run_or_games,
    by=("players",),
    confidence: float = DEFAULT_CONFIDENCE,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed=0,
) -> pd.DataFrame:
    """First-player (seat) advantage.

    One row per group of ``by`` (default: player count) and seat with ``games``, ``wins``,
    ``win_rate`` (Wilson interval), ``fair_share`` = mean of 1 / players (the win share
    every seat would have if seats did not matter and games had no shared wins) and
    ``win_excess`` = win_rate - fair_share; ``score_mean`` with its interval and
    ``score_diff``: mean over games of the seat's score minus the mean score of the other
    seats in the same game, with its interval.

    Per-event runs: percentile bootstrap intervals over games. Summary runs: normal
    intervals from the sums (``score_sq_sum``; ``diff_sum`` and ``diff_sq_sum`` for
    ``score_diff``).
    """
    group = _with_seat(by)
    mode, table = _games(run_or_games, keys(by))
    rows = []
    if mode == EVENT:
        require(table, ["game", "seat", "players", "score", "win"], "the games table")
        in_game = table.groupby("game").score
        others = (in_game.transform("sum") - table.score) / (in_game.transform("size") - 1)
        table = table.assign(score_diff=table.score - others)
        rng = as_generator(seed)
        boot = {"confidence": confidence, "n_resamples": n_resamples, "seed": rng}
        for key, part in groups(table, group):
            rows.append({
                **key,
                "games": len(part),
                "wins": int(part.win.sum()),
                "fair_share": float((1 / part.players).mean()),
                **_interval("score_mean", bootstrap_mean(part.score, **boot)),
                **_interval("score_diff", bootstrap_mean(part.score_diff, **boot)),
            })
        out = pd.DataFrame(rows)
    else:
        cols = ["games", "wins", "score_sum", "score_sq_sum", "diff_sum", "diff_sq_sum"]
        require(table, ["seat"] + cols, "seat_summary")
        sums = table.groupby(group, observed=True)[cols].sum().reset_index()
        players = sums.players if "players" in sums.columns else players_of(run_or_games)
        if players is None:
            raise MissingTable("seat_summary has no player count: pass a run whose manifest has it")
        players = np.asarray(players, dtype=float)
        mean = normal_mean_interval(sums.score_sum, sums.score_sq_sum, sums.games, confidence)
        # diff_sum holds (players - 1) x the difference: scale back before the interval
        diff = normal_mean_interval(sums.diff_sum / (players - 1),
                                    sums.diff_sq_sum / (players - 1) ** 2, sums.games, confidence)
        out = sums[group + ["games", "wins"]].assign(
            fair_share=1 / players,
            **_interval("score_mean", mean),
            **_interval("score_diff", diff),
        )
    out = out.assign(**rate_columns("win_rate", out.wins, out.games, confidence))
    out["win_excess"] = out.win_rate - out.fair_share
    first = [*group, "games", "wins", "win_rate", "win_rate_low", "win_rate_high", "fair_share", "win_excess"]
    return out[first + [c for c in out.columns if c not in first]]


def policy_win_matrix(run_or_games, confidence: float = DEFAULT_CONFIDENCE) -> pd.DataFrame:
    """How often each policy finishes ahead of each other policy in the same game.

    For every ordered pair of different policies (A, B) and every game holding both, each
    pair of a seat played by A and a seat played by B counts once: ``ahead`` when A's rank
    is better (smaller), ``tied`` when equal. Returns one row per (``policy_a``,
    ``policy_b``) with ``games``, ``pairs``, ``ahead_share`` (Wilson interval over pairs --
    exact when each policy holds one seat per game, so that pairs are games),
    ``tie_share``, ``behind_share`` and ``points_share`` = (ahead + tied / 2) / pairs.
    Pivot ``ahead_share`` on ``policy_a`` x ``policy_b`` for the matrix. Per-event runs only.
    """
    mode, table = source(run_or_games, "games")
    if mode != EVENT:
        raise MissingTable("the policy win matrix needs the per-event games table")
    require(table, ["game", "seat", "policy", "rank"], "the games table")
    seats = table[["game", "seat", "policy", "rank"]].assign(policy=table.policy.astype(str))
    pairs = seats.merge(seats, on="game", suffixes=("_a", "_b"))
    pairs = pairs[pairs.policy_a != pairs.policy_b]
    pairs = pairs.assign(ahead=pairs.rank_a < pairs.rank_b, tied=pairs.rank_a == pairs.rank_b)
    out = pairs.groupby(["policy_a", "policy_b"]).agg(
        games=("game", "nunique"), pairs=("game", "size"), ahead=("ahead", "sum"), tied=("tied", "sum")
    ).reset_index()
    out = out.assign(**rate_columns("ahead_share", out.ahead, out.pairs, confidence))
    out["tie_share"] = out.tied / out.pairs
    out["behind_share"] = 1 - out.ahead_share - out.tie_share
    out["points_share"] = (out.ahead + out.tied / 2) / out.pairs
    return out.drop(columns=["ahead", "tied"])


def _quantile_name(q: float) -> str:
    return f"q{round(q * 100):02d}"


def score_distribution(
    run_or_games,
    by=("policy",),
    quantiles=DEFAULT_QUANTILES,
    confidence: float = DEFAULT_CONFIDENCE,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed=0,
) -> pd.DataFrame:
    """Final scores per group of ``by`` (default: policy; any games column, or ``()``).

    Columns: ``games`` (seat-games), ``score_mean`` with its interval (bootstrap per
    event, normal from the sums in summary mode), ``score_std``, ``score_min``,
    ``score_max`` and one column per quantile (``q05, q25, q50, q75, q95`` by default;
    linear interpolation). Summary runs keep no distribution: quantiles, min and max are NaN.
    """
    by = keys(by)
    mode, table = _games(run_or_games, by)
    names = [_quantile_name(q) for q in quantiles]
    rows = []
    if mode == EVENT:
        rng = as_generator(seed)
        for key, part in groups(table, by):
            score = part.score.to_numpy(dtype=float)
            rows.append({
                **key,
                "games": len(score),
                **_interval("score_mean", bootstrap_mean(score, confidence, n_resamples, rng)),
                "score_std": score.std(ddof=1) if len(score) > 1 else np.nan,
                "score_min": score.min(),
                **dict(zip(names, np.quantile(score, quantiles))),
                "score_max": score.max(),
            })
    else:
        require(table, ["games", "score_sum", "score_sq_sum"], "seat_summary")
        for key, part in groups(table, by):
            n, total, total_sq = part.games.sum(), part.score_sum.sum(), part.score_sq_sum.sum()
            rows.append({
                **key,
                "games": int(n),
                **_interval("score_mean", normal_mean_interval(total, total_sq, n, confidence)),
                "score_std": float(std_from_sums(total, total_sq, n)),
                "score_min": np.nan,
                **dict.fromkeys(names, np.nan),
                "score_max": np.nan,
            })
    return pd.DataFrame(rows)


def by_player_count(
    run_or_games,
    confidence: float = DEFAULT_CONFIDENCE,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed=0,
) -> pd.DataFrame:
    """Game length and ticket completion by player count.

    One row per ``players`` with ``games``; ``turns_mean`` (turns per game, all seats
    together) with its interval and, per event, ``turns_q1, turns_median, turns_q3``;
    ``all_passed_rate``: share of games ended because every player passed (Wilson);
    ``tickets_kept_mean``, ``tickets_completed_mean`` per player and game;
    ``completion_rate`` = completed / kept tickets (Wilson interval, which treats the
    tickets as independent -- tickets of one player in one game are not, so read it as a
    lower bound on the uncertainty); ``score_mean`` per player.

    Summary runs take the player count from the manifest, give a normal interval for
    ``turns_mean`` and no turn quartiles.
    """
    mode, table = _games(run_or_games, ["players"])
    rows = []
    if mode == EVENT:
        require(table, ["game", "turns", "all_passed", "tickets_kept", "tickets_completed", "score"], "the games table")
        rng = as_generator(seed)
        for key, part in groups(table, ["players"]):
            per_game = part.drop_duplicates("game")
            turns = per_game.turns.to_numpy(dtype=float)
            rows.append({
                **key,
                "games": len(per_game),
                **_interval("turns_mean", bootstrap_mean(turns, confidence, n_resamples, rng)),
                **dict(zip(["turns_q1", "turns_median", "turns_q3"], np.quantile(turns, [0.25, 0.5, 0.75]))),
                "all_passed": int(per_game.all_passed.sum()),
                "tickets_kept": int(part.tickets_kept.sum()),
                "tickets_completed": int(part.tickets_completed.sum()),
                "seat_games": len(part),
                "score_sum": float(part.score.sum()),
            })
    else:
        require(table, ["seat", "games", "turns_sum", "turns_sq_sum", "all_passed",
                        "tickets_kept_sum", "tickets_completed_sum", "score_sum"], "seat_summary")
        for key, part in groups(table, ["players"]):
            # Every seat plays every game: per-game totals come from seat 0's rows.
            first = part[part.seat == part.seat.min()]
            n = int(first.games.sum())
            rows.append({
                **key,
                "games": n,
                **_interval("turns_mean", normal_mean_interval(
                    first.turns_sum.sum(), first.turns_sq_sum.sum(), n, confidence)),
                "all_passed": int(first.all_passed.sum()),
                "tickets_kept": int(part.tickets_kept_sum.sum()),
                "tickets_completed": int(part.tickets_completed_sum.sum()),
                "seat_games": int(part.games.sum()),
                "score_sum": float(part.score_sum.sum()),
            })
    out = pd.DataFrame(rows)
    out = out.assign(
        **rate_columns("all_passed_rate", out.all_passed, out.games, confidence),
        tickets_kept_mean=out.tickets_kept / out.seat_games,
        tickets_completed_mean=out.tickets_completed / out.seat_games,
        **rate_columns("completion_rate", out.tickets_completed, out.tickets_kept, confidence),
        score_mean=out.score_sum / out.seat_games,
    )
    return out.drop(columns=["seat_games", "score_sum"])


def bonus_shares(run, by=("policy",), confidence: float = DEFAULT_CONFIDENCE) -> pd.DataFrame:
    """Share of seat-games that scored each end-of-game bonus of the run's board.

    One row per group of ``by`` (default: policy) with ``seat_games`` and, for each bonus
    the board has, ``longest_share`` / ``globetrotter_share`` (seat-games that scored the
    longest-path / Globetrotter bonus, every tied seat scoring it) with Wilson intervals.
    Summary runs count them from the bonus sums (each seat-game scores 0 or the whole
    bonus). Empty when the board has neither bonus.
    """
    board = run.board
    parts = [(name, col, pts) for name, col, pts in (
        ("longest", "longest_bonus", board.longest_bonus),
        ("globetrotter", "globetrotter", board.globetrotter_bonus)) if pts]
    if not parts:
        return pd.DataFrame()
    by = keys(by)
    mode, table = _games(run, by)
    rows = []
    for key, part in groups(table, by):
        row = {**key}
        if mode == EVENT:
            n = len(part)
            hits = {name: int((part[col] > 0).sum()) for name, col, _ in parts}
        else:
            n = int(part.games.sum())
            hits = {name: int(part[f"{col}_sum"].sum()) // pts for name, col, pts in parts}
        row["seat_games"] = n
        for name, _, _ in parts:
            row.update(rate_columns(f"{name}_share", hits[name], n, confidence))
            row = {k: (float(v) if isinstance(v, np.ndarray) else v) for k, v in row.items()}
        rows.append(row)
    return pd.DataFrame(rows)
