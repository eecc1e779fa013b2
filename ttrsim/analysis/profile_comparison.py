"""Game profiles side by side: several runs, and people's figures, with their differences.

``compare_profiles(runs)`` puts one group of seat-games of each run (all of them, the
winners, or one policy's) in a column of the game profile (``ttrsim.analysis.profile``),
and beside each column after the first its difference from the first with an interval, so
that "does policy A play like policy B" is one table. ``people=`` adds columns of people's
per-player averages (``read_people``), with their differences from the first run and no
interval: the people's figures carry none.

Intervals treat the games as the units: the seat-games of one game are not independent
(the game's length sets every seat's turns, one seat's claims block another's), so each
run's mean is a ratio of sums over its games with the cluster-robust variance
(``ttrsim.stats.cluster_ratio``), and a difference of two runs gets Student's t with the
Welch–Satterthwaite degrees of freedom (``ttrsim.stats.welch_interval``). The runs are
taken as independent samples. A summary-mode run keeps its sums per seat, not per game, so
its differences get no interval (its estimates are exact).
"""
from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import numpy as np
import pandas as pd

from ttrsim.analysis.game_profile import (MEAN_ROUTE_LENGTH, WINNERS, game_values,
                                          known_measures, measure_label, measure_section,
                                          profile_counts, profile_measures, route_trains)
from ttrsim.analysis.inputs import GAME_IDENTITY, runs_of
from ttrsim.stats import DEFAULT_CONFIDENCE, cluster_ratio, welch_interval
from ttrsim.tables import PROFILE_SUM_COLS, profile_stats

__all__ = ["ProfileComparison", "compare_profiles", "read_people", "ALL"]

#: The group of every seat-game of a run (each policy, winner or not).
ALL = "all"
# What two runs must share for their profiles to be set side by side: a difference across
# boards or player counts would mix how the game changes with how its players play.
_SAME = ("board", "board_checksum", "players", "max_turns")
# Columns of a people table that are not a group of people.
_PEOPLE_INFO = ("measure", "source", "n", "board")
_SECTION_ORDER = ("score", "tickets", "play", "routes by length", "bonus won")
_LENGTH = re.compile(r"routes_len_[1-9][0-9]*")


@dataclasses.dataclass
class ProfileComparison:
    """Profiles side by side (see :func:`compare_profiles`).

    ``table``: one row per measure and column, with ``section, measure, label, kind``
    (``mean``, ``share`` or ``ratio``, as in :class:`~ttrsim.analysis.Profile`), ``column``
    (its label), ``source`` (``run`` or ``people``), ``estimate``, ``n`` (seat-games of the
    run's group; the people's ``n`` where given), ``difference`` (the column minus the
    first, NaN in the first), ``low``, ``high`` (its ``confidence`` interval; NaN where
    there is none) and ``note`` (why a cell is empty or has no interval). ``columns``: one
    row per column: ``column, source, games, policies, mode`` (``per-event`` or
    ``summary``) of a run, ``origin`` (the people's ``source`` text) of a group of people,
    ``same_as`` (the earlier column that holds the very same games: the same directory, or
    the same seed, policies and count; "" where none). ``group``: the seat-games each run's column holds. ``manifest``: board, players and
    turn limit the runs share."""

    table: pd.DataFrame
    columns: pd.DataFrame
    group: str
    manifest: dict
    confidence: float = DEFAULT_CONFIDENCE

    def wide(self) -> pd.DataFrame:
        """Estimates (a column per run or group of people) and differences (``"B − A"``)
        as a measure x column table, labels as the index."""
        t = self.table
        labels = list(dict.fromkeys(t["label"]))
        ref = self.columns["column"].iloc[0]
        out = {}
        for col in self.columns["column"]:
            part = t[t["column"] == col].set_index("label")
            out[col] = part["estimate"].reindex(labels)
            if col != ref:
                out[f"{col} − {ref}"] = part["difference"].reindex(labels)
        return pd.DataFrame(out, index=labels)

    def text(self) -> str:
        """The table as plain text: each column's estimate, then for each column after the
        first its difference from the first with its interval."""
        t = self.table
        cols = list(self.columns["column"])
        ref = cols[0]
        cells = {(r.measure, r.column): r for r in t.itertuples()}
        head = [""] + [c for col in cols for c in ([col] if col == ref else [col, "Δ"])]
        rows = [head]
        section = None
        for measure, part in t.groupby("measure", sort=False):
            first = part.iloc[0]
            if first.section != section:
                rows.append([f"{first.section}:"] + [""] * (len(head) - 1))
                section = first.section
            line = ["  " + first.label]
            for col in cols:
                r = cells[(measure, col)]
                line.append(_value(r))
                if col != ref:
                    line.append(_difference(r))
            rows.append(line)
        widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
        lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                           for i, (c, w) in enumerate(zip(r, widths))).rstrip() for r in rows]
        return "\n".join(self._head() + [""] + lines + self._notes())

    def _head(self) -> list[str]:
        m = self.manifest
        pct = round(100 * self.confidence)
        out = [f"Profiles side by side: {m.get('board')}, {m.get('players')} players; "
               f"{_group_text(self.group)}; mean per seat-game (share for 'bonus won', a "
               "ratio of sums for the average route length)",
               f"Δ: the column to its left minus {self.columns['column'].iloc[0]}, with its "
               f"{pct}% interval (Welch–Satterthwaite t over games: the seat-games of one "
               "game count as one observation)"]
        cols = self.columns
        for c in cols[cols["source"] == "run"].itertuples():
            out.append(f"  {c.column}: {int(c.games):,} games, {c.policies} ({c.mode})")
        people = cols[cols["source"] == "people"]
        if len(people):
            out.append(f"  {', '.join(people['column'])}: people's figures")
            for origin in dict.fromkeys(o for o in people["origin"] if o):
                out.append(f"    source: {origin}")
        return out

    def _notes(self) -> list[str]:
        t, notes = self.table, []
        for c in self.columns.itertuples():
            if getattr(c, "same_as", ""):
                notes.append(f"{c.column} holds the same games as {c.same_as} (one run given "
                             "twice, or the same seed, policies and game count): it is "
                             "compared with itself, its differences are 0 by construction "
                             "and have no interval.")
        if (self.columns["source"] == "people").any():
            notes.append("People's figures carry no interval: their differences have none.")
        for c in self.columns.itertuples():
            if c.source == "run" and c.mode == "summary":
                notes.append(f"{c.column} is a summary-mode run: it keeps no per-game spread, "
                             "so its differences have no interval (play it without --summary "
                             "for one).")
        absent = t.loc[t["note"].str.startswith("not on "), "label"].unique()
        if len(absent):
            notes.append(f"Not on {self.manifest.get('board')} (no figure to compare): "
                         + ", ".join(absent) + ".")
        return [""] + notes if notes else []


def _group_text(group: str) -> str:
    if group == ALL:
        return "all seat-games of each run"
    if group == WINNERS:
        return "the winners of each run (seat-games ranked first)"
    return f"the seat-games of {group} in each run"


def _value(r) -> str:
    if r.note.startswith("not on "):
        return "not on board"
    if np.isnan(r.estimate):
        return "–"
    return f"{100 * r.estimate:.1f}%" if r.kind == "share" else f"{r.estimate:.2f}"


def _difference(r) -> str:
    if np.isnan(r.difference):
        return "–"
    scale, unit = (100, " pp") if r.kind == "share" else (1, "")
    text = f"{scale * r.difference:+.2f}{unit}"
    if np.isnan(r.low):
        return text
    return f"{text} [{scale * r.low:+.2f}, {scale * r.high:+.2f}]"


def read_people(source) -> pd.DataFrame:
    """People's per-player averages from a CSV file (or a DataFrame read from one): one
    row per measure, named as the profile's (``measure``: ``route_points``,
    ``tickets_completed``, ``mean_route_length``...; shares of ``<bonus>_won`` as
    fractions), a column per group of people, and optional columns ``source`` (where the
    figures come from), ``n`` (how many player-games they average) and ``board`` (the board
    they were played on; one board per table). A blank cell is a figure not given.

    Returns the figures in long form: ``measure, group, estimate, n, source, board``.
    Unknown measures, duplicate rows, non-numeric figures and shares outside [0, 1] are
    refused with a ValueError saying which."""
    if isinstance(source, pd.DataFrame):
        name, df = "the people table", source.astype(object).where(source.notna(), "").astype(str)
    else:
        name = f"people file {source}"
        path = Path(source)
        if not path.is_file():
            raise ValueError(f"{name}: no such file")
        try:
            df = pd.read_csv(path, dtype=str, keep_default_na=False, skipinitialspace=True)
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
            raise ValueError(f"{name}: not a CSV table ({str(exc).strip()})") from None
    df.columns = [str(c).strip() for c in df.columns]
    if "measure" not in df.columns:
        raise ValueError(f"{name} has no 'measure' column (one row per profile measure, a "
                         f"column per group of people); its columns: {', '.join(df.columns)}")
    groups = [c for c in df.columns if c not in _PEOPLE_INFO]
    if not groups or len(df) == 0:
        raise ValueError(f"{name} holds no figures: give a row per measure and a column per "
                         "group of people")
    df = df.assign(measure=df["measure"].str.strip())
    dup = sorted(set(df["measure"][df["measure"].duplicated()]))
    if dup:
        raise ValueError(f"{name}: measure(s) given twice: {', '.join(dup)}")
    known = known_measures()
    unknown = [m for m in df["measure"] if m not in known and not _LENGTH.fullmatch(m)]
    if unknown:
        raise ValueError(f"{name}: unknown measure(s) {', '.join(unknown)}; known measures: "
                         f"{', '.join(known)}")
    boards = sorted(set(df["board"].str.strip()) - {""}) if "board" in df.columns else []
    if len(boards) > 1:
        raise ValueError(f"{name}: figures of one board per table, not {', '.join(boards)}")
    rows = []
    for r in df.to_dict("records"):
        n = _number(r.get("n", ""), name, r["measure"], "n")
        if not (np.isnan(n) or (n > 0 and n == int(n))):
            raise ValueError(f"{name}: n of {r['measure']} must be a positive whole number, "
                             f"not {r['n']!r}")
        for g in groups:
            value = _number(r[g], name, r["measure"], g)
            if r["measure"].endswith("_won") and not np.isnan(value) and not 0 <= value <= 1:
                raise ValueError(f"{name}: {r['measure']} of {g} is a share, between 0 and 1, "
                                 f"not {value}")
            rows.append({"measure": r["measure"], "group": g, "estimate": value, "n": n,
                         "source": str(r.get("source", "")).strip(),
                         "board": boards[0] if boards else ""})
    return pd.DataFrame(rows)


def _number(text, name: str, measure: str, column: str) -> float:
    text = str(text).strip()
    if text == "":
        return np.nan
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{name}: {measure}, {column}: {text!r} is not a number") from None
    if not np.isfinite(value):
        raise ValueError(f"{name}: {measure}, {column}: {text!r} is not a finite number")
    return value


def compare_profiles(runs, labels=None, group: str = ALL, people=None,
                     confidence: float = DEFAULT_CONFIDENCE) -> ProfileComparison:
    """The game profiles of several runs side by side, and people's figures beside them.

    ``runs``: a run or a list of runs (per-event or summary mode; a saved run's directory is
    read) of one board, player count
    and turn limit (others are refused: the difference would mix the game's change with the
    play's). ``labels``: one per run (default: the run's directory name, or ``run 1``...).
    ``group``: the seat-games each run's column holds: ``"all"`` (default), ``"winners"``
    (ranked first; tied winners each count) or a policy every run has. ``people``: a people
    table (a CSV path or a DataFrame, see :func:`read_people`), each group of people a
    column. Each column after the first gets its difference from the first run; between
    runs with a ``confidence`` interval clustered by game (see the module's docstring),
    for people's figures none. Returns a :class:`ProfileComparison`."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, not {confidence!r}")
    runs = runs_of(runs, "compare_profiles")
    if not runs:
        raise ValueError("compare_profiles needs at least one run")
    labels = _labels(runs, labels)
    _check_same_game(runs, labels)
    board, m0 = runs[0].board, runs[0].manifest
    figures = read_people(people) if people is not None else None
    if figures is not None:
        _check_people(figures, labels, str(m0.get("board")))
    measures = _measures(board, figures)
    sums = [_group_sums(run, label, group, measures) for run, label in zip(runs, labels)]
    ref = sums[0]
    rows, columns = [], []
    for i, (run, label, s) in enumerate(zip(runs, labels, sums)):
        summary = bool(run.manifest.get("summary"))
        same_as = next((labels[j] for j in range(i) if _same_games(runs[j], run)), "")
        columns.append({"column": label, "source": "run", "games": int(run.manifest.get("games", 0)),
                        "policies": _policies_text(run.manifest.get("policies", [])),
                        "mode": "summary" if summary else "per-event", "origin": "",
                        "same_as": same_as})
        diff = s["estimate"] - ref["estimate"]
        low, high = welch_interval(diff, s["var"], s["clusters"] - 1, ref["var"],
                                   ref["clusters"] - 1, confidence)
        if same_as == labels[0]:     # the same games: an interval of independent samples lies
            low, high = np.full_like(low, np.nan), np.full_like(high, np.nan)
            why = f"no interval: the same games as {labels[0]}"
        first = label == labels[0]
        if same_as != labels[0]:
            why = ("no interval: a summary-mode run keeps no per-game spread"
                   if summary or runs[0].manifest.get("summary")
                   else "no interval: fewer than two games")
        for m in measures.itertuples():
            note = f"not on {m0.get('board')}" if not m.on_board else ""
            if not note and np.isnan(s["estimate"][m.Index]):
                note = "no seat-game of the group it applies to"
            elif not note and not first and np.isnan(low[m.Index]) and not np.isnan(diff[m.Index]):
                note = why
            rows.append(_row(m, label, "run", s["estimate"][m.Index], s["n"][m.Index],
                             np.nan if first else diff[m.Index],
                             np.nan if first else low[m.Index],
                             np.nan if first else high[m.Index], note))
    if figures is not None:
        for g, part in figures.groupby("group", sort=False):
            part = part.set_index("measure")
            origin = "; ".join(dict.fromkeys(x for x in part["source"] if x))
            columns.append({"column": g, "source": "people", "games": np.nan, "policies": "",
                            "mode": "", "origin": origin, "same_as": ""})
            for m in measures.itertuples():
                value = part["estimate"].get(m.measure, np.nan)
                n = part["n"].get(m.measure, np.nan)
                note = (f"not on {m0.get('board')}" if not m.on_board
                        else "not given" if np.isnan(value) else "people's figure: no interval")
                diff = value - ref["estimate"][m.Index] if m.on_board else np.nan
                rows.append(_row(m, g, "people", value, n, diff, np.nan, np.nan, note))
    manifest = {"board": m0.get("board"), "board_checksum": m0.get("board_checksum"),
                "players": m0.get("players"), "max_turns": m0.get("max_turns")}
    return ProfileComparison(pd.DataFrame(rows), pd.DataFrame(columns), group, manifest,
                             confidence)


def _row(m, column, source, estimate, n, difference, low, high, note) -> dict:
    return {"section": m.section, "measure": m.measure, "label": m.label, "kind": m.kind,
            "column": column, "source": source, "estimate": float(estimate), "n": float(n),
            "difference": float(difference), "low": float(low), "high": float(high),
            "note": note}


# What makes two runs the same games: a run is played from its seed game by game, so the
# same seed, policies, count and rules give the same games whatever the batches.
_SAME_GAMES = ("board_checksum", "players", "policies", "seed", "games", "rotate", "max_turns",
               "ttrsim_version", "expert_models", "variant", "people")


def _same_games(a, b) -> bool:
    """Whether runs ``a`` and ``b`` hold the very same games (one run given twice, or two
    directories of one seed, policies and count)."""
    if a is b:
        return True
    pa, pb = getattr(a, "path", None), getattr(b, "path", None)
    if pa is not None and pb is not None and Path(pa).resolve() == Path(pb).resolve():
        return True
    ma, mb = a.manifest, b.manifest
    if ma.get("people") or mb.get("people"):   # people's decisions are not replayed from seeds
        return False
    return all(ma.get(k) == mb.get(k) for k in _SAME_GAMES)


def _policies_text(policies) -> str:
    counts = pd.Series(list(map(str, policies))).value_counts(sort=False)
    return ", ".join(f"{p} x{k}" if k > 1 else p for p, k in counts.items())


def _labels(runs, labels) -> list[str]:
    if labels is None:
        labels = [Path(r.path).name if getattr(r, "path", None) is not None else f"run {i + 1}"
                  for i, r in enumerate(runs)]
        seen: dict = {}
        out = []
        for lab in labels:           # the same directory name twice: number the repeats
            seen[lab] = seen.get(lab, 0) + 1
            out.append(lab if seen[lab] == 1 else f"{lab} ({seen[lab]})")
        return out
    labels = [str(x) for x in labels]
    if len(labels) != len(runs):
        raise ValueError(f"give one label per run: {len(labels)} label(s) for {len(runs)} run(s)")
    if len(set(labels)) != len(labels):
        raise ValueError(f"labels must differ from each other: {', '.join(labels)}")
    return labels


def _check_same_game(runs, labels) -> None:
    m0 = runs[0].manifest
    for run, label in zip(runs[1:], labels[1:]):
        m = run.manifest
        diffs = [f"{GAME_IDENTITY[k]} {m.get(k)!r} in {label}, {m0.get(k)!r} in {labels[0]}"
                 for k in _SAME if m.get(k) != m0.get(k)]
        if diffs:
            raise ValueError(
                "profiles are set side by side for runs of one board, player count and turn "
                f"limit, since a difference across them mixes how the game changes with how "
                f"it is played; {label} differs from {labels[0]}: {'; '.join(diffs)}")


def _check_people(figures: pd.DataFrame, labels: list[str], board: str) -> None:
    given = set(figures["board"]) - {""}
    if given and given != {board}:
        raise ValueError(f"the people's figures are of {given.pop()}, the runs were played on "
                         f"{board}: give people's figures of {board}")
    clash = sorted(set(figures["group"]) & set(labels))
    if clash:
        raise ValueError(f"a group of people and a run share the label(s) {', '.join(clash)}: "
                         "rename one (--label)")


def _measures(board, figures) -> pd.DataFrame:
    """The board's profile rows, plus any measure the people give that the board lacks
    (kept, marked ``on_board`` False, in its section)."""
    rows = profile_measures(board).assign(on_board=True)
    if figures is not None:
        extra = [m for m in dict.fromkeys(figures["measure"])
                 if m not in set(rows["measure"])]
        if extra:
            rows = pd.concat([rows, pd.DataFrame(
                {"measure": extra, "section": [measure_section(m) for m in extra],
                 "label": [measure_label(m) for m in extra],
                 "kind": ["share" if m.endswith("_won") else "mean" for m in extra],
                 "on_board": False})])
        rank = rows["section"].map({s: i for i, s in enumerate(_SECTION_ORDER)})
        rows = rows.assign(_rank=rank.to_numpy()).sort_values("_rank", kind="stable").drop(columns="_rank")
    return rows.reset_index(drop=True)


def _group_sums(run, label: str, group: str, measures: pd.DataFrame) -> dict:
    """Per measure (in the order of ``measures``): ``estimate``, ``var`` (cluster-robust;
    NaN for a summary-mode run), ``clusters`` (games), ``n`` (seat-games)."""
    policies = [str(p) for p in run.manifest.get("policies", [])]
    if group not in (ALL, WINNERS) and group not in policies:
        raise ValueError(f"{label} has no seat-games of {group!r}: its policies are "
                         f"{', '.join(dict.fromkeys(policies))} (or give the group 'all' "
                         "or 'winners')")
    names = list(measures["measure"])
    parts = game_values(run)
    if parts is None:
        sums = _summary_sums(run, group)
    else:
        sums = _per_game_sums(parts, run.board, group)
    sums = sums.reindex(names)
    est, var = cluster_ratio(*(sums[c].to_numpy() for c in ("a", "b", "aa", "ab", "bb", "clusters")))
    return {"estimate": est, "var": var, "clusters": sums["clusters"].to_numpy(float),
            "n": sums["n"].to_numpy(float)}


def _select(frame: pd.DataFrame, group: str) -> pd.DataFrame:
    if group == ALL:
        return frame
    if group == WINNERS:
        return frame[frame["win"].to_numpy(bool)]
    return frame[frame["policy"].astype(str) == group]


def _summary_sums(run, group: str) -> pd.DataFrame:
    """Sums of a summary-mode run: the totals only (no per-game spread)."""
    counts = _select(profile_counts(run), group)
    stats = profile_stats(run.board)
    total = (counts.groupby("stat")[list(PROFILE_SUM_COLS)].sum()
             .reindex(stats, fill_value=0).astype(float))
    out = pd.DataFrame({"a": total["sum"], "b": total["n"], "n": total["n"]})
    out.loc[MEAN_ROUTE_LENGTH] = [route_trains(total["sum"], run.board),
                                  total.loc["routes_claimed", "sum"], total.loc["score", "n"]]
    return out.assign(aa=np.nan, ab=np.nan, bb=np.nan, clusters=np.nan)


def _per_game_sums(parts, board, group: str) -> pd.DataFrame:
    """Sums of a per-event run over its games: per measure, the totals ``a`` (values) and
    ``b`` (seat-games it applies to; routes claimed for the average route length) and the
    per-game sums of squares and products that the cluster-robust variance needs."""
    stats = profile_stats(board)
    acc, games = None, 0
    for part in parts:
        games += part["game"].nunique()
        p = _select(part, group)
        values = p[stats]
        num = values.fillna(0.0)
        den = values.notna().astype(float)
        num[MEAN_ROUTE_LENGTH] = route_trains(p, board).astype(float)
        den[MEAN_ROUTE_LENGTH] = p["routes_claimed"].astype(float)
        a, b = num.groupby(p["game"]).sum(), den.groupby(p["game"]).sum()
        sums = pd.DataFrame({"a": a.sum(), "b": b.sum(), "aa": (a * a).sum(),
                             "ab": (a * b).sum(), "bb": (b * b).sum(),
                             "n": den.sum().where(den.columns != MEAN_ROUTE_LENGTH,
                                                  den["score"].sum())})
        acc = sums if acc is None else acc + sums
    if acc is None:
        raise ValueError("the run has no games")
    return acc.assign(clusters=float(games))
