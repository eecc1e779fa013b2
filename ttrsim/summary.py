"""The summary of a run: per policy (or per seat) counts, win share with its interval.

``summary_table(run)`` is what ``Run.summary()`` returns; ``summary_text(run)`` is what
``ttrsim simulate`` prints (``Run.summary_text()``). Both read per-event runs (in memory,
or on disk a part at a time so that memory does not grow with the run) and summary-mode
runs alike, and give the same numbers for the same games. docs/tables.md documents the
columns and how ties count.
"""
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
from statistics import NormalDist

from ttrsim.policies import display_name
from ttrsim.stats import wilson_interval

__all__ = ["summary_table", "summary_text"]

CONFIDENCE = 0.95
WIDTH = 88      # of the notes under the printed table
# Sums per (seat, policy) that every column of the summary is computed from.
SUMS = ["seat_games", "wins", "score_sum", "score_sq_sum", "diff_sum", "diff_sq_sum",
        "tickets_kept", "tickets_completed", "globetrotter"]
_GAMES_COLUMNS = ["game", "seat", "policy", "score", "win", "tickets_kept", "tickets_completed"]
_BY = ("auto", "policy", "seat")


def _sums_of_games(games: pd.DataFrame, players: int) -> pd.DataFrame:
    """``SUMS`` per (seat, policy) from per-event game rows holding whole games."""
    total = games.groupby("game")["score"].transform("sum").to_numpy(np.int64)
    score = games["score"].to_numpy(np.int64)
    # (players - 1) x (the seat's score minus the mean of the other seats): an integer,
    # as summary mode keeps it
    diff = players * score - total
    frame = pd.DataFrame({
        "seat": games["seat"].to_numpy(np.int64), "policy": games["policy"].astype(str).to_numpy(),
        "seat_games": 1, "wins": games["win"].to_numpy(np.int64), "score_sum": score,
        "score_sq_sum": score ** 2, "diff_sum": diff, "diff_sq_sum": diff ** 2,
        "tickets_kept": games["tickets_kept"].to_numpy(np.int64),
        "tickets_completed": games["tickets_completed"].to_numpy(np.int64),
        # seat-games that scored the Globetrotter (runs made before it have no column)
        "globetrotter": ((games["globetrotter"] > 0).to_numpy(np.int64)
                         if "globetrotter" in games.columns else 0)})
    return frame.groupby(["seat", "policy"], sort=False).sum()


def _globetrotter_bonus(run) -> int:
    """The Globetrotter bonus of the run's board (0: the board has none)."""
    return int(getattr(getattr(run, "board", None), "globetrotter_bonus", 0) or 0)


def seat_sums(run) -> pd.DataFrame:
    """``SUMS`` per (seat, policy) of a run, indexed by ``seat, policy``."""
    m = run.manifest
    bonus = _globetrotter_bonus(run)
    if m["summary"]:
        s = run.seat_summary.assign(policy=lambda d: d["policy"].astype(str)).rename(columns={
            "games": "seat_games", "tickets_kept_sum": "tickets_kept",
            "tickets_completed_sum": "tickets_completed"})
        # each seat-game scores 0 or the whole bonus
        s["globetrotter"] = s["globetrotter_sum"] // bonus if bonus else 0
        sums = s.groupby(["seat", "policy"], sort=False)[SUMS].sum()
    elif run.loaded("games"):
        sums = _sums_of_games(run.games, m["players"])
    else:
        columns = _GAMES_COLUMNS + (["globetrotter"] if bonus else [])
        parts = [_sums_of_games(part, m["players"])
                 for part in run.table_parts("games", columns=columns)]
        sums = pd.concat(parts).groupby(level=[0, 1], sort=False).sum()
    return sums.astype(np.int64)


def _policy_order(run) -> list:
    """Policies in seat order of the run (first appearance), as they were given."""
    return list(dict.fromkeys(run.manifest["policies"]))


def _resolve_by(run, by: str) -> str:
    if by not in _BY:
        raise ValueError(f"by must be one of {', '.join(map(repr, _BY))}, not {by!r}")
    if by == "auto":
        return "seat" if len(_policy_order(run)) == 1 else "policy"
    return by


def summary_table(run, by: str = "auto", confidence: float = CONFIDENCE) -> pd.DataFrame:
    """Per policy (``by="policy"``) or per seat and policy (``by="seat"``): what the run's
    seats did, with 95% intervals.

    ``by="auto"`` (the default) is ``"seat"`` when every seat plays the same policy (seat
    advantage is then the question) and ``"policy"`` otherwise. Columns:

    - ``seat_games``: games played in that seat (by that policy); a 4-player game gives
      four seat-games, one to each seat.
    - ``wins``: seat-games ranked first. Tied winners (still tied after the board's
      tie-breaks) each count a win, so wins can add up to more than the games.
    - ``win_share`` = wins / seat_games with its Wilson interval
      (``win_share_low``, ``win_share_high``).
    - ``mean_score`` with a normal interval; ``score_diff``: mean of the seat's score minus
      the mean score of the other seats of the same game, with a normal interval.
    - ``mean_tickets_kept`` per seat-game and ``ticket_completion`` = tickets completed /
      tickets kept (NaN when none was kept).
    - ``globetrotter_share`` (boards with the Globetrotter bonus only): share of the
      seat-games that scored it (every seat tied for the most completed tickets does).

    Policies are in seat order of the run. Two seats with the same spec count as one
    policy unless labelled apart (``"tickets#a"``, ``"tickets#b"``; see docs/policies.md).
    """
    by = _resolve_by(run, by)
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, not {confidence!r}")
    sums = seat_sums(run)
    order = {name: i for i, name in enumerate(_policy_order(run))}
    if by == "policy":
        grouped = sums.groupby(level="policy", sort=False).sum()
        grouped = grouped.iloc[np.argsort([order.get(p, len(order)) for p in grouped.index],
                                          kind="stable")]
    else:
        grouped = sums.iloc[np.lexsort(([order.get(p, len(order)) for p in
                                         sums.index.get_level_values("policy")],
                                        sums.index.get_level_values("seat")))]
    n = grouped["seat_games"].to_numpy(float)
    wins = grouped["wins"].to_numpy(np.int64)
    low, high = wilson_interval(wins, n, confidence)
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    players = run.manifest["players"]
    mean, half = _mean_half_width(grouped["score_sum"], grouped["score_sq_sum"], n, z)
    dmean, dhalf = _mean_half_width(grouped["diff_sum"] / (players - 1),
                                    grouped["diff_sq_sum"] / (players - 1) ** 2, n, z)
    kept = grouped["tickets_kept"].to_numpy(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        completion = np.where(kept > 0, grouped["tickets_completed"] / kept, np.nan)
    out = pd.DataFrame({
        "seat_games": grouped["seat_games"].to_numpy(), "wins": wins,
        "win_share": wins / n, "win_share_low": low, "win_share_high": high,
        "mean_score": mean, "mean_score_low": mean - half, "mean_score_high": mean + half,
        "score_diff": dmean, "score_diff_low": dmean - dhalf, "score_diff_high": dmean + dhalf,
        "mean_tickets_kept": kept / n, "ticket_completion": completion,
    }, index=grouped.index)
    if _globetrotter_bonus(run):
        out["globetrotter_share"] = grouped["globetrotter"].to_numpy(float) / n
    out.attrs.update(by=by, confidence=confidence, players=players)
    return out


def _mean_half_width(total, total_sq, n, z):
    total = np.asarray(total, float)
    mean = total / n
    with np.errstate(divide="ignore", invalid="ignore"):
        var = np.maximum(np.asarray(total_sq, float) - total * mean, 0) / (n - 1)
        half = np.where(n > 1, z * np.sqrt(var / n), np.nan)
    return mean, half


# ---------------------------------------------------------------------------
# the printed summary

def _count(x) -> str:
    return f"{int(x):,}"


def _pct(x) -> str:
    return "–" if np.isnan(x) else f"{100 * x:.1f}%"


def _signed(x) -> str:
    return "–" if np.isnan(x) else f"{round(float(x), 1) + 0.0:+.1f}"   # no "-0.0"


def _num(x) -> str:
    return "–" if np.isnan(x) else f"{x:.1f}"


def _header(run) -> list:
    m = run.manifest
    policies = [display_name(p) for p in m["policies"]]
    if len(set(policies)) == 1:
        seats = f"{policies[0]} in every seat"
    else:
        seats = ", ".join(policies) + (" (seats rotate between games)" if m["rotate"]
                                       else " (each in its own seat)")
    mode = "summary mode: counts only" if m["summary"] else "per-event tables"
    lines = [f"board    {m['board']}",
             f"players  {m['players']}: {seats}",
             f"games    {_count(m['games'])} ({mode})",
             f"seed     {m['seed']}"]
    seconds = m.get("wall_seconds_last_session")
    played = m.get("games_last_session", m["games"])
    if seconds is not None:
        if played == 0:
            time = f"none played: all {_count(m['games'])} games were already saved"
        else:
            rate = f", {_count(round(played / seconds))} games/s" if seconds > 0 else ""
            time = f"{seconds:.1f} s{rate}"
            if played < m["games"]:
                time += (f" for the {_count(played)} games played now "
                         f"({_count(m['games'] - played)} were already saved)")
        lines.append(f"time     {time}")
    return lines


def _rows(table: pd.DataFrame) -> list:
    by = table.attrs["by"]
    head = (["seat"] if by == "seat" else []) + [
        "policy", "seat-games", "wins", "win share", "95% interval", "mean score",
        "vs others", "tickets kept", "completed"]
    globe = "globetrotter_share" in table.columns
    if globe:
        head.append("Globetrotter")
    rows = [head]
    for key, r in table.iterrows():
        seat, policy = key if by == "seat" else (None, key)
        rows.append(([str(seat)] if by == "seat" else []) + [
            display_name(policy), _count(r.seat_games), _count(r.wins), _pct(r.win_share),
            f"{_pct(r.win_share_low)}–{_pct(r.win_share_high)}", _num(r.mean_score),
            f"{_signed(r.score_diff)} ±{_num(r.score_diff_high - r.score_diff)}",
            _num(r.mean_tickets_kept), _pct(r.ticket_completion)]
            + ([_pct(r.globetrotter_share)] if globe else []))
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    left = {"policy"}
    return ["  ".join(cell.ljust(w) if head[i] in left else cell.rjust(w)
                      for i, (cell, w) in enumerate(zip(row, widths))).rstrip()
            for row in rows]


def summary_text(run, by: str = "auto", command_line: bool = False) -> str:
    """The run's summary as plain text: a header (board, players, games, seed, time), the
    ``summary_table`` per policy or per seat, how wins count, and where the results are
    (or how to keep them and make a report). ``command_line`` words the hints as options
    of ``ttrsim simulate`` instead of arguments of ``simulate()``."""
    table = summary_table(run, by=by)
    players = run.manifest["players"]
    lines = _header(run) + [""]
    if table.attrs["by"] == "seat":
        lines.append("Per seat (seat 0 plays first):")
    else:
        lines.append("Per policy, over all seats:")
    lines += _rows(table)
    notes = ["seat-games: games played in that seat; wins: seat-games ranked first (tied "
             "winners each count a win); 95% interval: Wilson, of the win share; vs others: mean "
             "score minus the other seats' mean, ± its 95% interval; completed: tickets "
             "completed / kept. Columns: docs/tables.md."]
    if "globetrotter_share" in table.columns:
        notes.append(f"Globetrotter: share of seat-games that scored the "
                     f"{_globetrotter_bonus(run)}-point bonus for the most completed tickets "
                     f"(every seat tied for the most scores it; nobody when no ticket was "
                     f"completed).")
    if table.attrs["by"] == "seat":
        notes.append(f"Without a seat advantage every seat would win about 1/{players} = "
                     f"{100 / players:.1f}% of its games (a little more with shared wins).")
    lines.append("")
    for note in notes:
        lines += textwrap.wrap(note, WIDTH, break_on_hyphens=False)
    lines += _where(run, command_line)
    return "\n".join(lines)


def _where(run, command_line: bool) -> list:
    """Lines saying where the results are, or how to keep them; commands on lines of
    their own so that they can be copied whole."""
    if run.path is not None:
        kind = "summary counts" if run.manifest["summary"] else "per-event tables"
        return [f"Saved in {run.path} ({kind} and manifest.json). HTML report:",
                f"  ttrsim report {_quoted(run.path)}"]
    keep = "add --out DIR to the same command" if command_line else "pass out=DIR to simulate()"
    return [f"Nothing was saved: to keep the tables, {keep}; then an HTML report:",
            "  ttrsim report DIR"]


def _quoted(path: Path) -> str:
    import shlex

    return shlex.quote(str(path))
