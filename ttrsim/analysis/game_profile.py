"""The game profile: how the seats of a run play and score, per policy and for the winners.

``profile(run)`` sets out, with 95% intervals, what a designer needs to judge whether the
players behind a run's numbers play like people: the score and its parts, tickets kept at
setup and from draws, completed and failed, turns taken, the game turn of a seat's first
claim, its largest hand, routes claimed by length, and how often each bonus went to the
seat. The same function is each policy's style profile in a league.

Per-event and summary-mode runs give the same numbers for the same games: both reduce the
games to counts, sums and sums of squares per seat, policy and win (summary mode keeps
them in the ``profile_summary`` table, docs/tables.md), and every mean gets a normal
interval from them, every share a Wilson interval.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from ttrsim.analysis.inputs import MissingTable
from ttrsim.stats import DEFAULT_CONFIDENCE, normal_mean_interval, wilson_interval
from ttrsim.tables import (PROFILE_SUM_COLS, length_column, profile_stats, profile_sums,
                           profile_values, route_lengths)

__all__ = ["Profile", "profile", "WINNERS"]

#: The group of the winning seat-games (rank 1; tied winners each count).
WINNERS = "winners"

_LABELS = {
    "score": "score", "route_points": "route points", "ticket_points": "ticket points",
    "longest_bonus": "longest path bonus", "globetrotter": "Globetrotter bonus",
    "station_points": "station points", "attraction_points": "attraction points",
    "tickets_kept": "tickets kept (game)", "tickets_kept_setup": "tickets kept at setup",
    "ticket_draws": "ticket draws", "tickets_kept_drawn": "tickets kept from draws",
    "tickets_completed": "tickets completed", "tickets_failed": "tickets failed",
    "turns_taken": "turns a player", "first_claim_turn": "game turn of first claim",
    "largest_hand": "largest hand (cards)", "routes_claimed": "routes claimed",
    "longest_bonus_won": "longest path bonus won", "globetrotter_won": "Globetrotter won",
}
_SECTIONS = {
    "score": ("score", "route_points", "ticket_points", "longest_bonus", "globetrotter",
              "station_points", "attraction_points"),
    "tickets": ("tickets_kept", "tickets_kept_setup", "ticket_draws", "tickets_kept_drawn",
                "tickets_completed", "tickets_failed"),
    "play": ("turns_taken", "first_claim_turn", "largest_hand", "routes_claimed"),
    "bonus won": ("longest_bonus_won", "globetrotter_won"),
}


# quantities that can be negative (a failed ticket costs points)
_SIGNED = ("score", "ticket_points")


@dataclasses.dataclass
class Profile:
    """A run's game profile.

    ``table``: one row per group (each policy in seat order of the run, then
    ``"winners"``) and measure, with ``section`` (score, tickets, play, routes by length,
    bonus won), ``measure`` (a games-table column, ``tickets_kept_setup``, ``routes_len_N``
    or ``<bonus>_won``), ``label``, ``kind`` (``mean`` per seat-game, or ``share`` of
    seat-games), ``estimate``, ``low``, ``high`` (``confidence`` interval: normal for means,
    Wilson for shares) and ``n`` (seat-games it is taken over; a first-claim turn only over
    seats that claimed). ``manifest``: the run's."""

    table: pd.DataFrame
    manifest: dict
    confidence: float = DEFAULT_CONFIDENCE

    def wide(self) -> pd.DataFrame:
        """Estimates as a measure x group table (labels as the index)."""
        t = self.table
        out = t.pivot(index="measure", columns="group", values="estimate")
        out = out.loc[list(dict.fromkeys(t["measure"])), list(dict.fromkeys(t["group"]))]
        out.index = [self.label(m) for m in out.index]
        out.columns.name = None
        return out

    def label(self, measure: str) -> str:
        row = self.table.loc[self.table["measure"] == measure, "label"]
        return str(row.iloc[0]) if len(row) else measure

    def text(self) -> str:
        """The profile as plain text: one column per group, ``estimate [low, high]``."""
        t = self.table
        groups = list(dict.fromkeys(t["group"]))
        cells = {(r.measure, r.group): _cell(r) for r in t.itertuples()}
        rows = [["", *groups]]
        section = None
        for measure in dict.fromkeys(t["measure"]):
            sec = t.loc[t["measure"] == measure, "section"].iloc[0]
            if sec != section:
                rows.append([f"{sec}:", *[""] * len(groups)])
                section = sec
            rows.append(["  " + self.label(measure), *[cells.get((measure, g), "–") for g in groups]])
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                           for i, (c, w) in enumerate(zip(r, widths))).rstrip() for r in rows]
        m = self.manifest
        players = m.get("players")
        if isinstance(players, list):
            players = "/".join(map(str, players))
        head = (f"Game profile: {m.get('board')}, {players} players, "
                f"{m.get('games', 0):,} games; mean per seat-game (share for 'bonus won') "
                f"[{round(100 * self.confidence)}% interval]; winners: seat-games ranked first")
        return "\n".join([head, ""] + lines)


def _cell(r) -> str:
    if np.isnan(r.estimate):
        return "–"
    if r.kind == "share":
        text = f"{100 * r.estimate:.1f}%"
        bounds = f"{100 * r.low:.1f}–{100 * r.high:.1f}"
    else:
        text = f"{r.estimate:.2f}"
        bounds = "" if np.isnan(r.low) else f"{r.low:.2f}–{r.high:.2f}"
    return f"{text} [{bounds}]" if bounds else text


def profile_counts(run) -> pd.DataFrame:
    """n, sum and sum of squares of every profile quantity per ``seat, policy, win`` (the
    ``profile_summary`` table of a summary-mode run; computed from the games table of a
    per-event run, a part at a time for a run on disk)."""
    board = run.board
    summary = dict(getattr(run, "manifest", None) or {}).get("summary")
    if not summary and getattr(run, "path", None) is not None and not run.loaded("games"):
        parts = run.table_parts("games")      # a saved run a part at a time: memory stays flat
    else:
        games = getattr(run, "games", None)
        if games is None:
            table = getattr(run, "profile_summary", None)
            if table is None:
                raise MissingTable("the run has neither a games table nor a profile_summary "
                                   "table (a summary-mode run saved by an older ttrsim has "
                                   "none); play it again to profile it")
            return table.assign(policy=table["policy"].astype(str))
        parts = [games]
    sums = []
    for games in parts:
        try:
            values = profile_values(games, board)
        except KeyError as exc:
            raise MissingTable(f"the games table has no column(s) {exc.args[0]} (the run was saved "
                               "by an older ttrsim); play it again to profile it") from None
        sums.append(profile_sums(values, {
            "seat": games["seat"].to_numpy(np.int64),
            "policy": games["policy"].astype(str).to_numpy(),
            "win": games["win"].to_numpy(bool)}))
    if not sums:
        raise MissingTable("the run has no games table")
    return (pd.concat(sums).groupby(["seat", "policy", "win", "stat"], sort=False, as_index=False)
            [list(PROFILE_SUM_COLS)].sum())


def _applies(measure: str, board) -> bool:
    """Whether the board has what a measure counts (no station rows on a board without
    stations, no Globetrotter rows without the bonus...)."""
    if measure.startswith("longest_bonus"):
        return bool(getattr(board, "longest_bonus", 0))
    if measure.startswith("globetrotter"):
        return bool(getattr(board, "globetrotter_bonus", 0))
    if measure == "station_points":
        return bool(getattr(board, "stations", 0))
    if measure == "attraction_points":
        return bool(len(getattr(board, "attractions", ())))
    return True


def profile(run, confidence: float = DEFAULT_CONFIDENCE) -> Profile:
    """The game profile of a run (per-event or summary mode): per policy, and for the
    winners, the mean per seat-game of every score part, tickets, turns, first-claim
    turn, largest hand and routes claimed by length, and the share of seat-games each
    bonus went to, with ``confidence`` intervals. See :class:`Profile` and
    docs/analysis.md.

    ``run`` may also be a list of runs of one board (e.g. the cells of a league): their
    seat-games are pooled, policies in order of first appearance."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, not {confidence!r}")
    runs = list(run) if isinstance(run, (list, tuple)) else [run]
    if not runs:
        raise ValueError("profile needs a run (or a list of runs), got an empty list")
    board = runs[0].board
    checksums = {getattr(r.board, "checksum", None) for r in runs}
    if len(checksums) > 1:
        raise ValueError("profile pools runs of one board only; these runs were played on "
                         f"{len(checksums)} boards: profile each board's runs apart")
    counts = pd.concat([profile_counts(r) for r in runs], ignore_index=True)
    manifest = dict(runs[0].manifest)
    if len(runs) > 1:
        manifest = {"board": manifest.get("board"), "players": sorted(
            {r.manifest.get("players") for r in runs}), "games": sum(
            int(r.manifest.get("games", 0)) for r in runs), "runs": len(runs)}
    order = list(dict.fromkeys(p for r in runs for p in r.manifest["policies"]))
    stats = [s for s in profile_stats(board) if _applies(s, board)]
    lengths = {length_column(n): n for n in route_lengths(board)}
    policies = [p for p in order if p in set(counts["policy"])]
    groups = [(p, counts[counts["policy"] == p]) for p in policies]
    groups.append((WINNERS, counts[counts["win"]]))
    rows = []
    for group, part in groups:
        total = part.groupby("stat", sort=False)[list(PROFILE_SUM_COLS)].sum()
        for stat in stats:
            n, s, sq = (total.loc[stat].to_numpy(float) if stat in total.index
                        else np.zeros(3))
            if stat.endswith("_won"):
                kind, est = "share", (s / n if n else np.nan)
                low, high = wilson_interval(s, n, confidence)
            else:
                kind = "mean"
                est, low, high = normal_mean_interval(s, sq, n, confidence)
                if stat not in _SIGNED:     # a count's interval stops at 0
                    low = max(low, 0.0)
            if stat in lengths:
                section, label = "routes by length", f"routes of length {lengths[stat]}"
            else:
                section = next(k for k, v in _SECTIONS.items() if stat in v)
                label = _LABELS[stat]
            rows.append({"group": group, "section": section, "measure": stat, "label": label,
                         "kind": kind, "estimate": float(est), "low": float(low),
                         "high": float(high), "n": int(n)})
    return Profile(pd.DataFrame(rows), manifest, confidence)
