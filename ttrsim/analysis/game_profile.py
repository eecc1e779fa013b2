"""The game profile: how the seats of a run play and score, per policy and for the winners.

``profile(run)`` sets out, with 95% intervals, what a designer needs to judge whether the
players behind a run's numbers play like people: the score and its parts, tickets kept at
setup and from draws, completed (and the points they brought) and failed, turns taken, the
game turn of a seat's first claim, its largest hand, routes claimed (in all, by length, and
their average length), and how often each bonus went to the seat. The same function is
each policy's style profile in a league; ``ttrsim.analysis.compare_profiles`` sets several
runs' profiles, and people's figures, side by side.

Per-event and summary-mode runs give the same numbers for the same games: both reduce the
games to counts, sums and sums of squares per seat, policy and win (summary mode keeps
them in the ``profile_summary`` table, docs/tables.md), and every mean gets a normal
interval from them, every share a Wilson interval. The average length of a claimed route is
a ratio of two sums (trains laid on routes over routes claimed) and has no interval here:
the sums keep no cross product of the two.
"""
from __future__ import annotations

import dataclasses
import re

import numpy as np
import pandas as pd

from ttrsim.analysis.inputs import MissingTable, runs_of
from ttrsim.policies import display_name
from ttrsim.stats import DEFAULT_CONFIDENCE, normal_mean_interval, wilson_interval
from ttrsim.tables import (PROFILE_SUM_COLS, length_column, profile_stats, profile_sums,
                           profile_values, route_lengths)

__all__ = ["Profile", "profile", "WINNERS", "MEAN_ROUTE_LENGTH", "profile_counts",
           "profile_measures", "known_measures", "measure_section", "measure_label",
           "game_values", "route_trains"]

#: The group of the winning seat-games (rank 1; tied winners each count).
WINNERS = "winners"
#: The measure of the average length of a claimed route: trains laid on routes (the sum of
#: ``routes_len_N`` times N) over routes claimed, a ratio of the group's sums.
MEAN_ROUTE_LENGTH = "mean_route_length"

_LABELS = {
    "score": "score", "route_points": "route points", "ticket_points": "ticket points",
    "longest_bonus": "longest path bonus", "globetrotter": "Globetrotter bonus",
    "station_points": "station points", "attraction_points": "attraction points",
    "tickets_kept": "tickets kept (game)", "tickets_kept_setup": "tickets kept at setup",
    "ticket_draws": "ticket draws", "tickets_kept_drawn": "tickets kept from draws",
    "tickets_completed": "tickets completed",
    "ticket_points_completed": "points of completed tickets", "tickets_failed": "tickets failed",
    "turns_taken": "turns a player", "first_claim_turn": "game turn of first claim",
    "largest_hand": "largest hand (cards)", "routes_claimed": "routes claimed",
    MEAN_ROUTE_LENGTH: "average length of a claimed route",
    "longest_bonus_won": "longest path bonus won", "globetrotter_won": "Globetrotter won",
}
_SECTIONS = {
    "score": ("score", "route_points", "ticket_points", "longest_bonus", "globetrotter",
              "station_points", "attraction_points"),
    "tickets": ("tickets_kept", "tickets_kept_setup", "ticket_draws", "tickets_kept_drawn",
                "tickets_completed", "ticket_points_completed", "tickets_failed"),
    "play": ("turns_taken", "first_claim_turn", "largest_hand", "routes_claimed",
             MEAN_ROUTE_LENGTH),
    "routes by length": (),
    "bonus won": ("longest_bonus_won", "globetrotter_won"),
}
_LENGTH = re.compile(r"routes_len_([1-9][0-9]*)")


# quantities that can be negative (a failed ticket costs points)
_SIGNED = ("score", "ticket_points")


@dataclasses.dataclass
class Profile:
    """A run's game profile.

    ``table``: one row per group (each policy in seat order of the run, then
    ``"winners"``) and measure, with ``section`` (score, tickets, play, routes by length,
    bonus won), ``measure`` (a games-table column, ``tickets_kept_setup``, ``routes_len_N``,
    ``mean_route_length`` or ``<bonus>_won``), ``label``, ``kind`` (``mean`` per seat-game,
    ``share`` of seat-games, or ``ratio``: the average length of a claimed route, trains
    laid over routes claimed), ``estimate``, ``low``, ``high`` (``confidence`` interval:
    normal for means, Wilson for shares, none for the ratio) and ``n`` (seat-games it is
    taken over; a first-claim turn only over seats that claimed). ``manifest``: the run's."""

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
        rows = [["", *map(display_name, groups)]]
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
        if (t["kind"] == "ratio").any():
            head += ("\nThe average length of a claimed route is a ratio of the group's sums: "
                     "no interval (ttrsim profile RUN_A RUN_B gives its differences one)")
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


def game_values(run):
    """A per-event run's seat-games, a part at a time (a batch at a time for a run on disk,
    so memory stays flat): DataFrames with ``game, seat, policy`` (str), ``win`` and every
    profile quantity (``ttrsim.tables.profile_values``) as floats, NaN where one does not
    apply. None for a run without a games table (a summary-mode run)."""
    board = run.board
    summary = dict(getattr(run, "manifest", None) or {}).get("summary")
    if not summary and getattr(run, "path", None) is not None and not run.loaded("games"):
        parts = run.table_parts("games")
    else:
        games = getattr(run, "games", None)
        if games is None:
            return None
        parts = [games]
    return (_seat_games(games, board) for games in parts)


def _seat_games(games: pd.DataFrame, board) -> pd.DataFrame:
    try:
        values = profile_values(games, board)
    except KeyError as exc:
        raise MissingTable(f"the games table has no column(s) {exc.args[0]} (the run was saved "
                           "by an older ttrsim); play it again to profile it") from None
    keys = pd.DataFrame({"game": games["game"].to_numpy(np.int64),
                         "seat": games["seat"].to_numpy(np.int64),
                         "policy": games["policy"].astype(str).to_numpy(),
                         "win": games["win"].to_numpy(bool)}, index=values.index)
    return pd.concat([keys, values], axis=1)


def profile_counts(run) -> pd.DataFrame:
    """n, sum and sum of squares of every profile quantity per ``seat, policy, win`` (the
    ``profile_summary`` table of a summary-mode run; computed from the games table of a
    per-event run, a part at a time for a run on disk)."""
    parts = game_values(run)
    if parts is None:
        table = getattr(run, "profile_summary", None)
        if table is None:
            raise MissingTable("the run has neither a games table nor a profile_summary "
                               "table (a summary-mode run saved by an older ttrsim has "
                               "none); play it again to profile it")
        return table.assign(policy=table["policy"].astype(str))
    stats = profile_stats(run.board)
    sums = [profile_sums(part[stats], {k: part[k].to_numpy() for k in ("seat", "policy", "win")})
            for part in parts]
    if not sums:
        raise MissingTable("the run has no games table")
    return (pd.concat(sums).groupby(["seat", "policy", "win", "stat"], sort=False, as_index=False)
            [list(PROFILE_SUM_COLS)].sum())


def _applies(measure: str, board) -> bool:
    """Whether the board has what a measure counts (no station rows on a board without
    stations, no Globetrotter rows without the bonus, only the route lengths it has...)."""
    if measure.startswith("longest_bonus"):
        return bool(getattr(board, "longest_bonus", 0))
    if measure.startswith("globetrotter"):
        return bool(getattr(board, "globetrotter_bonus", 0))
    if measure == "station_points":
        return bool(getattr(board, "stations", 0))
    if measure == "attraction_points":
        return bool(len(getattr(board, "attractions", ())))
    length = _LENGTH.fullmatch(measure)
    if length:
        return int(length.group(1)) in route_lengths(board)
    return True


def measure_section(measure: str) -> str:
    """The section of the profile a measure belongs to (KeyError for an unknown name)."""
    if _LENGTH.fullmatch(measure):
        return "routes by length"
    for section, names in _SECTIONS.items():
        if measure in names:
            return section
    raise KeyError(measure)


def measure_label(measure: str) -> str:
    """A measure's label in the profile's tables (KeyError for an unknown name)."""
    length = _LENGTH.fullmatch(measure)
    return f"routes of length {length.group(1)}" if length else _LABELS[measure]


def known_measures() -> list[str]:
    """Every measure name a profile may have on some board, ``routes_len_N`` standing for
    the routes of each length N."""
    return [m for names in _SECTIONS.values() for m in names] + ["routes_len_N"]


def profile_measures(board) -> pd.DataFrame:
    """The rows of a board's profile, in order: ``measure, section, label, kind`` (``mean``
    per seat-game, ``share`` of seat-games, or ``ratio`` of two sums: the average length of
    a claimed route)."""
    rows = []
    for stat in profile_stats(board):
        if not _applies(stat, board):
            continue
        label = measure_label(stat)
        kind = "share" if stat.endswith("_won") else "mean"
        rows.append((stat, measure_section(stat), label, kind))
        if stat == "routes_claimed":
            rows.append((MEAN_ROUTE_LENGTH, "play", _LABELS[MEAN_ROUTE_LENGTH], "ratio"))
    return pd.DataFrame(rows, columns=["measure", "section", "label", "kind"])


def route_trains(sums: pd.Series | pd.DataFrame, board):
    """Trains laid on routes from per-length route counts (``routes_len_N`` entries or
    columns of ``sums``): the sum of N times the routes of length N."""
    return sum(n * sums[length_column(n)] for n in route_lengths(board))


def profile(run, confidence: float = DEFAULT_CONFIDENCE) -> Profile:
    """The game profile of a run (per-event or summary mode): per policy, and for the
    winners, the mean per seat-game of every score part, tickets, the points of completed
    tickets, turns, first-claim turn, largest hand and routes claimed by length, the
    average length of a claimed route, and the share of seat-games each bonus went to,
    with ``confidence`` intervals (none for the average route length, a ratio). See
    :class:`Profile` and docs/analysis.md.

    ``run`` may also be a saved run's directory, or a list of runs (or directories) of one
    board (e.g. the cells of a league): their seat-games are pooled, policies in order of
    first appearance."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, not {confidence!r}")
    runs = runs_of(run, "profile")
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
    measures = profile_measures(board)
    policies = [p for p in order if p in set(counts["policy"])]
    groups = [(p, counts[counts["policy"] == p]) for p in policies]
    groups.append((WINNERS, counts[counts["win"]]))
    rows = []
    for group, part in groups:
        total = (part.groupby("stat", sort=False)[list(PROFILE_SUM_COLS)].sum()
                 .reindex(profile_stats(board), fill_value=0).astype(float))
        for m in measures.itertuples():
            if m.kind == "ratio":
                routes = total.loc["routes_claimed", "sum"]
                n = total.loc["routes_claimed", "n"]
                est = route_trains(total["sum"], board) / routes if routes else np.nan
                low = high = np.nan
            else:
                n, s, sq = total.loc[m.measure].to_numpy()
                if m.kind == "share":
                    est = s / n if n else np.nan
                    low, high = wilson_interval(s, n, confidence)
                else:
                    est, low, high = normal_mean_interval(s, sq, n, confidence)
                    if m.measure not in _SIGNED:     # a count's interval stops at 0
                        low = max(low, 0.0)
            rows.append({"group": group, "section": m.section, "measure": m.measure,
                         "label": m.label, "kind": m.kind, "estimate": float(est),
                         "low": float(low), "high": float(high), "n": int(n)})
    return Profile(pd.DataFrame(rows), manifest, confidence)
