"""A run's headline measures against the same games under stronger play: :func:`compare_play`.

Two finished per-event runs of the same board, player count, game count, seed, seat
rotation and turn limit deal game ``g`` from the same shuffle; only the policies differ
(typically the default policy, ``tickets``, in one and ``expert`` with the same settings
seat by seat in the other). Every measure of the report's headline tables is set side by
side: each play's value with the interval the report's own table gives it, the
difference with its 95% interval paired by game (the delta method of
``ttrsim.analysis.studies.paired`` on per-game sums, Student t), the p-value and its
Benjamini-Hochberg q-value within the table, and a ``changed`` flag saying that the
conclusion a reader draws from the row differs between the two plays.

``changed`` by the kind of row (``rule``):

- ``reference``: a row whose conclusion is on which side of a reference value it lies --
  ticket completion against 1/2 (keeping the ticket adds points on average, or costs
  them), a win share against the fair share 1 / players, a seat's score against the
  others' (0), a station's net value and the paired station effects against 0. Each
  play's verdict is ``above`` (its 95% interval lies above the reference), ``below`` or
  ``unclear`` (the interval holds it); changed = the verdicts differ: the sign of a
  significant effect flips, or an effect significant under one play is not under the other.
- ``top``: a route among the ``top`` (20) most claimed under one play and not under the other.
- ``material``: quantities with no reference (score parts, game length, stations built):
  changed = the difference is significant (q < alpha) and at least ``material`` (10%) of
  the base value.
- ``none``: shown for reading only (a seat's mean score: its conclusion is the score
  against the other seats, the row below it).
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from ttrsim._version import __version__
from ttrsim.analysis.inputs import MissingTable, identity_differences, manifest_of, source
from ttrsim.analysis.routes import route_claims
from ttrsim.analysis.seats import seat_advantage
from ttrsim.analysis.stations import check_paired_runs, station_games, station_value
from ttrsim.analysis.studies.paired import paired_moments, paired_stats
from ttrsim.analysis.tickets import ticket_completion
from ttrsim.batches import versions
from ttrsim.policies import parse_spec
from ttrsim.stats import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, bh_q

__all__ = ["PlayComparison", "compare_play", "TOP_ROUTES", "MATERIAL", "StudyComparison",
           "compare_importance", "compare_fairness", "compare_variant"]

#: Routes compared by their place among the most claimed.
TOP_ROUTES = 20
#: Smallest relative change of a quantity without a reference that counts as a change.
MATERIAL = 0.10
#: Score parts, per player and game (a part or count zero in both runs is left out).
SCORE_PARTS = ("score", "route_points", "ticket_points", "longest_bonus", "station_points",
               "attraction_points")
#: Counts per player and game shown with the score parts.
COUNTS = ("tickets_kept", "tickets_completed", "routes_claimed", "stations_built", "trains_left")
#: Station metrics of ``station_value`` compared, with their rule.
STATION_RULES = {"score_diff": "reference", "win_diff": "reference",
                 "tickets_completed_diff": "reference", "ticket_points_diff": "reference",
                 "points_per_station": "reference", "gross_points_per_station": "material",
                 "stations_built": "material", "tickets_by_station": "material"}
#: Games per block of the per-game sums (memory stays flat whatever the run's size).
CHUNK = 20_000

VALUES = ["base", "base_low", "base_high", "strong", "strong_low", "strong_high", "difference",
          "low", "high", "p_value", "q_value", "significant", "rule", "reference",
          "base_verdict", "strong_verdict", "changed", "why"]


@dataclasses.dataclass
class PlayComparison:
    """The result of :func:`compare_play`: one table per measure and the manifest.

    Every table has ``label`` (the row in words) and the columns of :data:`VALUES`:
    ``base``/``strong`` (each play's value, ``_low``/``_high`` its 95% interval),
    ``difference`` = strong - base with its paired interval ``low``/``high``,
    ``p_value``, ``q_value`` (Benjamini-Hochberg within the table), ``significant``
    (q < alpha), ``rule``, ``reference``, each play's verdict, ``changed`` and ``why``.
    ``stations`` is None without the station baselines; ``policies`` is empty when every
    seat plays one policy.
    """

    tickets: pd.DataFrame
    seats: pd.DataFrame
    policies: pd.DataFrame
    stations: pd.DataFrame | None
    routes: pd.DataFrame
    score_parts: pd.DataFrame
    manifest: dict
    alpha: float = 0.05

    NAMES = ("tickets", "seats", "policies", "stations", "routes", "score_parts")

    def tables(self) -> dict:
        """``{name: table}`` of the tables present (stations only with its baselines)."""
        return {n: getattr(self, n) for n in self.NAMES if getattr(self, n) is not None}

    def changed(self) -> pd.DataFrame:
        """Every flagged row of every table: ``table, label, base, strong, difference, low,
        high, why``."""
        parts = [t.loc[t.changed, ["label", "base", "strong", "difference", "low", "high", "why"]]
                 .assign(table=name) for name, t in self.tables().items()]
        out = pd.concat(parts, ignore_index=True)
        return out[["table", "label", "base", "strong", "difference", "low", "high", "why"]]

    def summary(self) -> str:
        """One line per table (rows, significant differences, changed conclusions) and the
        changed rows."""
        m = self.manifest
        lines = [f"{m['board']}, {m['players']} players, {m['games']:,} games (seed {m['seed']}): "
                 f"{m['base_label']} against {m['strong_label']}"]
        for name, t in self.tables().items():
            lines.append(f"{name}: {len(t)} rows, {int(t.significant.sum())} differ at q < "
                         f"{self.alpha}, {int(t.changed.sum())} conclusions change")
        return _with_changed(lines, self.changed())


def _with_changed(lines: list[str], changed: pd.DataFrame) -> str:
    """A summary's lines, then its changed rows (if any) as a table."""
    if len(changed):
        lines = [*lines, changed.to_string(index=False, max_colwidth=40)]
    return "\n".join(lines)


def _label(policies) -> str:
    """The policy names of a run without settings, e.g. ``tickets`` or ``expert``."""
    return "/".join(dict.fromkeys(str(p).partition(":")[0].partition("#")[0] for p in policies))


def _settings(spec: str):
    try:
        return parse_spec(spec)[1]
    except ValueError:
        return str(spec).partition(":")[2]


def _slot_groups(policies) -> list[int]:
    """Group index of each slot: slots holding the same spec share a group."""
    first = {}
    return [first.setdefault(p, len(first)) for p in policies]


def check_same_games(run, strong) -> None:
    """Refuse two runs that do not play the same games seat by seat: board, player count,
    game count, seed, seat rotation and turn limit must agree, and the policies must keep
    the same settings and layout slot by slot (``tickets:risk=0`` against
    ``expert:risk=0``). One ValueError names every difference and the fix."""
    diff = identity_differences(run, strong, "the base run", "the strong run")
    pb, ps = manifest_of(run).get("policies"), manifest_of(strong).get("policies")
    if pb is not None and ps is not None:
        diff += _policy_differences(pb, ps, "run")
    if diff:
        raise ValueError("the two runs do not play the same games (" + "; ".join(diff) + "): "
                         "simulate the strong run with the base run's board, players, games, "
                         "seed and seat rotation, changing only the policy name seat by seat "
                         "(e.g. 'expert:risk=0' for 'tickets:risk=0')")


def _cutter(df: pd.DataFrame):
    """A function ``(g0, g1)`` -> the rows of ``df`` with ``g0 <= game < g1``."""
    g = df.game.to_numpy()
    if len(g) > 1 and np.any(g[1:] < g[:-1]):
        order = np.argsort(g, kind="stable")
        df, g = df.iloc[order], g[order]

    def cut(g0, g1):
        a, b = np.searchsorted(g, [g0, g1])
        return df.iloc[a:b]
    return cut


def _index_of(ids) -> np.ndarray:
    """Lookup array: id -> position."""
    ids = np.asarray(ids, dtype=np.int64)
    out = np.full(int(ids.max()) + 1 if len(ids) else 1, -1, dtype=np.int64)
    out[ids] = np.arange(len(ids))
    return out


def _station_games(run, baseline) -> pd.DataFrame:
    """Per game (index) the treated rows' sums: ``n`` (rows) and the with-minus-without
    differences and counts the station metrics are ratios of."""
    j = station_games(run, baseline)
    per = pd.DataFrame({
        "game": j.game.to_numpy(), "n": 1,
        "score": j.score_with - j.score_without, "win": j.win_with.astype(int) - j.win_without.astype(int),
        "tickets_completed": j.tickets_completed_with - j.tickets_completed_without,
        "ticket_points": j.ticket_points_with - j.ticket_points_without,
        "station_points": j.station_points_with - j.station_points_without,
        "stations_built": j.stations_built_with, "tickets_by_station": j.tickets_by_station_with,
        "seat": j.seat.to_numpy()})
    return per


class _Side:
    """One play's per-event tables, cut into blocks of games."""

    def __init__(self, run, baseline, board, n, rotate, groups):
        _, games = source(run, "games")
        _, tickets = source(run, "tickets")
        _, routes = source(run, "routes")
        if "game" not in games.columns or "game" not in tickets.columns or "game" not in routes.columns:
            raise MissingTable("comparing two plays needs per-event runs (games, tickets and "
                               "routes tables): simulate without summary=True")
        cols = ["game", "seat", "win", "turns", *SCORE_PARTS, *COUNTS]
        self.games = _cutter(games[[c for c in cols if c in games.columns]])
        self.cols = [c for c in (*SCORE_PARTS, *COUNTS) if c in games.columns]
        kept = tickets[tickets.kept.astype(bool)]
        self.tickets = _cutter(kept[["game", "ticket", "completed"]])
        self.routes = _cutter(routes[["game", "route"]])
        self.stations = None
        if baseline is not None:
            self.station_rows = _station_games(run, baseline)
            per = self.station_rows.drop(columns="seat").groupby("game").sum()
            self.stations = per
        self.board, self.n, self.rotate, self.groups = board, n, rotate, groups
        self.tix, self.rix = _index_of(board.ticket_id), _index_of(board.route_id)

    def metrics(self, g0: int, g1: int):
        """``(keys, Y, X)`` of games ``g0 .. g1 - 1``: keys ``(table, key)``, Y and X int64
        (games, metrics)."""
        G, n = g1 - g0, self.n
        gm = self.games(g0, g1)
        gi, si = gm.game.to_numpy() - g0, gm.seat.to_numpy()
        keys, ys, xs = [], [], []

        def add(table, key, y, x):
            keys.append((table, key))
            ys.append(np.asarray(y, dtype=np.int64))
            xs.append(np.broadcast_to(np.asarray(x, dtype=np.int64), (G,)))

        def grid(col):
            a = np.zeros((G, n), dtype=np.int64)
            a[gi, si] = gm[col].to_numpy(dtype=np.int64)
            return a

        for col in self.cols:
            add("score_parts", col, grid(col).sum(axis=1), n)
        kept, done = grid("tickets_kept").sum(axis=1), grid("tickets_completed").sum(axis=1)
        add("score_parts", "ticket_completion", done, kept)
        turns = np.zeros(G, dtype=np.int64)
        turns[gi] = gm.turns.to_numpy()
        add("score_parts", "turns", turns, 1)
        win, score = grid("win"), grid("score")
        total = score.sum(axis=1)
        for s in range(n):
            add("seats", (s, "win_rate"), win[:, s], 1)
            add("seats", (s, "score_mean"), score[:, s], 1)
            # the seat's score minus the mean of the others' = (n s_i - total) / (n - 1)
            add("seats", (s, "score_diff"), n * score[:, s] - total, n - 1)
        if max(self.groups) > 0:
            games = np.arange(g0, g1)[:, None]
            # the core seats slot (seat + game) % n at seat with rotation (_batch.play_batch)
            slot = (np.arange(n)[None, :] + games) % n if self.rotate else np.broadcast_to(np.arange(n), (G, n))
            group = np.asarray(self.groups)[slot]
            for k in range(max(self.groups) + 1):
                mine = group == k
                add("policies", (k, "win_rate"), (win * mine).sum(axis=1), mine.sum(axis=1))
                add("policies", (k, "score_mean"), (score * mine).sum(axis=1), mine.sum(axis=1))
        t = self.tickets(g0, g1)
        T = len(self.board.ticket_id)
        cell = (t.game.to_numpy() - g0) * T + self.tix[t.ticket.to_numpy()]
        k = np.bincount(cell, minlength=G * T).reshape(G, T)
        c = np.bincount(cell, weights=t.completed.to_numpy(dtype=float),
                        minlength=G * T).reshape(G, T)
        r = self.routes(g0, g1)
        R = len(self.board.route_id)
        claimed = np.zeros(G * R, dtype=np.int64)
        claimed[(r.game.to_numpy() - g0) * R + self.rix[r.route.to_numpy()]] = 1
        claimed = claimed.reshape(G, R)
        Y, X = np.stack(ys, axis=1), np.stack(xs, axis=1)
        parts_y, parts_x = [Y, np.rint(c).astype(np.int64), claimed], [X, k, np.ones((G, R), np.int64)]
        keys += [("tickets", int(i)) for i in self.board.ticket_id]
        keys += [("routes", int(i)) for i in self.board.route_id]
        if self.stations is not None:
            st = self.stations.reindex(np.arange(g0, g1), fill_value=0)
            gross = st.score - st.station_points
            cols = {"score_diff": (st.score, st.n), "win_diff": (st.win, st.n),
                    "tickets_completed_diff": (st.tickets_completed, st.n),
                    "ticket_points_diff": (st.ticket_points, st.n),
                    "points_per_station": (st.score, st.stations_built),
                    "gross_points_per_station": (gross, st.stations_built),
                    "stations_built": (st.stations_built, st.n),
                    "tickets_by_station": (st.tickets_by_station, st.n)}
            parts_y.append(np.stack([np.asarray(y, np.int64) for y, _ in cols.values()], axis=1))
            parts_x.append(np.stack([np.asarray(x, np.int64) for _, x in cols.values()], axis=1))
            keys += [("stations", m) for m in cols]
        return keys, np.concatenate(parts_y, axis=1), np.concatenate(parts_x, axis=1)


def _verdict(low, high, ref) -> np.ndarray:
    low, high, ref = (np.asarray(v, dtype=float) for v in (low, high, ref))
    out = np.where(low > ref, "above", np.where(high < ref, "below", "unclear"))
    return np.where(np.isfinite(ref) & np.isfinite(low) & np.isfinite(high), out, "")


def _finish(df: pd.DataFrame, alpha: float, material: float, top: int = TOP_ROUTES) -> pd.DataFrame:
    """Add q-values, significance, verdicts, ``changed`` and ``why`` by each row's rule."""
    df = df.copy()
    if "reference" not in df.columns:
        df["reference"] = np.nan
    for col in ("base", "base_low", "base_high", "strong", "strong_low", "strong_high",
                "difference", "low", "high", "p_value", "reference"):
        df[col] = pd.to_numeric(df[col], errors="coerce").astype(float)
    df["q_value"] = bh_q(df.p_value)
    df["significant"] = df.q_value < alpha
    df["base_verdict"] = _verdict(df.base_low, df.base_high, df.reference)
    df["strong_verdict"] = _verdict(df.strong_low, df.strong_high, df.reference)
    ref = df.rule == "reference"
    flip = ref & (df.base_verdict != df.strong_verdict) & (df.base_verdict != "") & (df.strong_verdict != "")
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = (df.difference / df.base.abs()).to_numpy(dtype=float)
    mat = (df.rule == "material") & df.significant & (np.abs(rel) >= material)
    topped = pd.Series(False, index=df.index)
    if "base_rank" in df.columns:
        topped = (df.rule == "top") & ((df.base_rank <= top) != (df.strong_rank <= top))
    df["changed"] = flip | mat | topped
    why = pd.Series("", index=df.index, dtype=object)
    why[flip] = [f"{b} {r:.4g} -> {s}" for b, r, s in
                 zip(df.base_verdict[flip], df.reference[flip], df.strong_verdict[flip])]
    why[mat] = [f"{100 * v:+.0f}% (q {q:.2g})" for v, q in zip(rel[mat.to_numpy()], df.q_value[mat])]
    if topped.any():
        why[topped] = [f"rank {int(b)} -> {int(s)} (top {top})" for b, s in
                       zip(df.base_rank[topped], df.strong_rank[topped])]
    df["why"] = why
    return df


def _interval(est, se, q):
    est, se = np.asarray(est, float), np.asarray(se, float)
    return est - q * se, est + q * se


def _models(manifest) -> dict:
    """The expert model files a run's manifest names (none for None)."""
    return dict((manifest or {}).get("expert_models") or {})


def compare_play(run, strong, baseline=None, strong_baseline=None, *, top: int = TOP_ROUTES,
                 alpha: float = 0.05, material: float = MATERIAL,
                 confidence: float = DEFAULT_CONFIDENCE, n_resamples: int = DEFAULT_RESAMPLES,
                 seed=0, chunk: int = CHUNK) -> PlayComparison:
    """Set the headline measures of ``run`` beside those of ``strong``, the same games
    under other (stronger) policies; see the module docstring for the method and the
    ``changed`` rules.

    ``run``, ``strong``: per-event runs of the same board, player count, game count, seed,
    seat rotation and turn limit, whose policies keep the same settings slot by slot
    (refused otherwise, :func:`check_same_games`). ``baseline``, ``strong_baseline``: the
    paired runs in which a seat may not build stations (as for ``station_value``), both or
    neither; they add the station table. ``top``: routes compared by their place among
    the most claimed. ``seed``, ``n_resamples``: the bootstrap of the report's own tables
    (seat scores, station value). Returns a :class:`PlayComparison`.
    """
    from scipy import stats as sps

    if (baseline is None) != (strong_baseline is None):
        raise ValueError("give the station baselines of both plays (baseline= and "
                         "strong_baseline=) or of neither")
    check_same_games(run, strong)
    if baseline is not None:
        check_paired_runs(run, baseline)
        check_paired_runs(strong, strong_baseline)
    m, ms = manifest_of(run), manifest_of(strong)
    board = run.board
    n = int(m["players"])
    games = int(m["games"])
    rotate = bool(m.get("rotate", True))
    groups = _slot_groups(m["policies"])
    sides = [_Side(r, b, board, n, rotate, groups)
             for r, b in ((run, baseline), (strong, strong_baseline))]
    if baseline is not None:
        rows = [set(zip(s.station_rows.game, s.station_rows.seat)) for s in sides]
        if rows[0] != rows[1]:
            raise ValueError("the station baselines switch stations off at different seats: give "
                             "the seat without stations the same slot in both baselines")
    S = M = keys = None
    for g0 in range(0, games, chunk):
        g1 = min(games, g0 + chunk)
        (kb, Yb, Xb), (ks, Ys, Xs) = (s.metrics(g0, g1) for s in sides)
        if kb != ks:
            raise RuntimeError("the two plays disagree on the measures")
        s_, m_ = paired_moments(Yb, Xb, Ys, Xs)
        if S is None:
            S, M, keys = s_, m_, kb
        else:
            S += s_
            M += m_
    st = paired_stats(games, S, M, confidence)
    st = st.rename(columns={"variant": "strong", "se_variant": "se_strong"})
    st.insert(0, "table", [k[0] for k in keys])
    st.insert(1, "key", [k[1] for k in keys])
    tq = sps.t.ppf(0.5 + confidence / 2, max(games - 1, 1))
    by_table = {name: part.reset_index(drop=True) for name, part in st.groupby("table", sort=False)}
    boot = {"confidence": confidence, "n_resamples": n_resamples, "seed": seed}

    # tickets: each play's completion with the Wilson interval of its ticket table
    t = by_table["tickets"].assign(ticket=lambda d: d.key.astype(int))
    for side, r in (("base", run), ("strong", strong)):
        tc = ticket_completion(r, confidence=confidence).set_index("ticket")
        t[side] = t.ticket.map(tc.completion_rate)
        t[f"{side}_low"] = t.ticket.map(tc.completion_rate_low)
        t[f"{side}_high"] = t.ticket.map(tc.completion_rate_high)
        t[f"{side}_kept"] = t.ticket.map(tc.kept).fillna(0).astype(int)
    names = {int(board.ticket_id[i]): board.ticket_name(i) for i in range(len(board.ticket_id))}
    t["name"] = t.ticket.map(names)
    t["points"] = t.ticket.map(dict(zip(map(int, board.ticket_id), map(int, board.ticket_points))))
    t = t.assign(label=t.name, rule="reference", reference=0.5)
    tickets = _finish(t, alpha, material)[["ticket", "name", "points", "label", "base_kept",
                                           "strong_kept", *VALUES]]

    # seats: win share (Wilson), mean score and score against the others (bootstrap)
    s = by_table["seats"]
    s = s.assign(seat=[k[0] for k in s.key], metric=[k[1] for k in s.key])
    for side, r in (("base", run), ("strong", strong)):
        sa = seat_advantage(r, by=(), **boot).set_index("seat")
        for metric in ("win_rate", "score_mean", "score_diff"):
            mine = s.metric == metric
            for suffix in ("", "_low", "_high"):
                s.loc[mine, f"{side}{suffix}"] = s.seat[mine].map(sa[f"{metric}{suffix}"])
        fair = sa.fair_share
    s["reference"] = np.where(s.metric == "win_rate", s.seat.map(fair),
                              np.where(s.metric == "score_diff", 0.0, np.nan))
    s["rule"] = np.where(s.metric == "score_mean", "none", "reference")
    words = {"win_rate": "win share", "score_mean": "mean score",
             "score_diff": "score minus the others' mean"}
    s["label"] = [f"seat {a}: {words[b]}" for a, b in zip(s.seat, s.metric)]
    seats = _finish(s, alpha, material)[["seat", "metric", "label", *VALUES]]

    # policies (seat-rotated runs of several policies): win share and mean score per slot group
    if "policies" in by_table:
        p = by_table["policies"]
        p = p.assign(group=[k[0] for k in p.key], metric=[k[1] for k in p.key])
        first = {g: k for k, g in reversed(list(enumerate(groups)))}
        p["base_policy"] = [m["policies"][first[g]] for g in p.group]
        p["strong_policy"] = [ms["policies"][first[g]] for g in p.group]
        for side, se in (("base", "se_base"), ("strong", "se_strong")):
            p[f"{side}_low"], p[f"{side}_high"] = _interval(p[side], p[se], tq)
        share = np.array([groups.count(g) / n for g in p.group])
        p["reference"] = np.where(p.metric == "win_rate", share, np.nan)
        p["rule"] = np.where(p.metric == "win_rate", "reference", "material")
        p["label"] = [f"{a} / {b}: {words[c]}" for a, b, c in
                      zip(p.base_policy, p.strong_policy, p.metric)]
        policies = _finish(p, alpha, material)[["base_policy", "strong_policy", "metric", "label",
                                                *VALUES]]
    else:
        policies = pd.DataFrame(columns=["base_policy", "strong_policy", "metric", "label", *VALUES])

    # stations: each play's value from station_value (its bootstrap interval)
    stations = None
    if baseline is not None:
        st_ = by_table["stations"].assign(metric=lambda d: d.key)
        for side, (r, b) in (("base", (run, baseline)), ("strong", (strong, strong_baseline))):
            sv = station_value(r, b, confidence=confidence, n_resamples=n_resamples, seed=seed)
            pooled = sv[sv.players.isna() & (sv.seat.isna() if sv.seat.isna().any() else True)]
            pooled = pooled.set_index("metric")
            for suffix, col in (("", "estimate"), ("_low", "low"), ("_high", "high")):
                st_[f"{side}{suffix}"] = st_.metric.map(pooled[col])
        st_["rule"] = st_.metric.map(STATION_RULES)
        st_["reference"] = np.where(st_.rule == "reference", 0.0, np.nan)
        st_["label"] = st_.metric.str.replace("_", " ")
        stations = _finish(st_, alpha, material)[["metric", "label", *VALUES]]

    # routes: claim rate (Wilson, route_claims); BH over every route, the top ones kept
    r_ = by_table["routes"].assign(route=lambda d: d.key.astype(int))
    for side, r in (("base", run), ("strong", strong)):
        rc = route_claims(r, confidence=confidence).set_index("route")
        r_[side] = r_.route.map(rc.claim_rate).fillna(0.0)
        r_[f"{side}_low"] = r_.route.map(rc.claim_rate_low)
        r_[f"{side}_high"] = r_.route.map(rc.claim_rate_high)
        r_[f"{side}_rank"] = r_[side].rank(ascending=False, method="min").astype(int)
    rnames = {int(board.route_id[i]): board.route_name(i) for i in range(len(board.route_id))}
    r_["name"] = r_.route.map(rnames)
    r_ = r_.assign(label=[f"{a} {b}" for a, b in zip(r_.route, r_.name)], rule="top")
    r_ = _finish(r_, alpha, material, top)
    r_ = r_[(r_.base_rank <= top) | (r_.strong_rank <= top)]
    routes = r_.sort_values(["base_rank", "strong_rank"], kind="stable", ignore_index=True)[
        ["route", "name", "label", "base_rank", "strong_rank", *VALUES]]

    # score parts and game: each play's mean with its own normal interval
    sp = by_table["score_parts"].assign(metric=lambda d: d.key)
    zero = sp.metric.isin(SCORE_PARTS + COUNTS) & (sp.base == 0) & (sp.strong == 0)
    sp = sp[~zero].reset_index(drop=True)
    for side, se in (("base", "se_base"), ("strong", "se_strong")):
        sp[f"{side}_low"], sp[f"{side}_high"] = _interval(sp[side], sp[se], tq)
    sp["rule"] = "material"
    plain = {"ticket_completion": "ticket completion (completed / kept)",
             "turns": "game length (turns)"}
    sp["label"] = [plain.get(k, f"{k.replace('_', ' ')} per player") for k in sp.metric]
    score_parts = _finish(sp, alpha, material)[["metric", "label", *VALUES]]

    manifest = {
        "kind": "play_comparison", "ttrsim_version": __version__, "board": m.get("board"),
        "board_checksum": m.get("board_checksum"), "players": n, "games": games,
        "seed": m.get("seed"), "rotate": rotate, "max_turns": m.get("max_turns"),
        "base_policies": list(m["policies"]), "strong_policies": list(ms["policies"]),
        "base_label": _label(m["policies"]), "strong_label": _label(ms["policies"]),
        "base_baseline_policies": None if baseline is None else list(manifest_of(baseline)["policies"]),
        "strong_baseline_policies": (None if strong_baseline is None
                                     else list(manifest_of(strong_baseline)["policies"])),
        # the model files behind every `expert` seat (path: digest), of all four runs
        "expert_models": {**_models(m), **_models(ms), **_models(manifest_of(baseline)),
                          **_models(manifest_of(strong_baseline))} or None,
        "top_routes": top, "alpha": alpha, "material": material, "confidence": confidence,
        "n_resamples": n_resamples, "bootstrap_seed": seed if isinstance(seed, int) else None,
        "versions": versions(),
    }
    return PlayComparison(tickets, seats, policies, stations, routes, score_parts, manifest, alpha)


# --- the balance studies under stronger play ---------------------------------------------

#: Importance: routes compared by their place among the most important.
TOP_IMPORTANT = 10
#: Fairness: suggestions that differ between the plays by this share of the printed
#: points (or more) change the conclusion.
MATERIAL_POINTS = 0.25


@dataclasses.dataclass
class StudyComparison:
    """The result of :func:`compare_importance` or :func:`compare_fairness`: ``table``
    (one row per route or ticket, the columns of :data:`VALUES` and the study's own),
    ``spread`` (fairness only: the spread between tickets under each play, else None)
    and the ``manifest``. The two plays ran on the same seeds but are compared as
    independent samples (each study keeps its own intervals only): the difference's
    interval is the normal one from the two intervals' widths."""

    table: pd.DataFrame
    spread: pd.DataFrame | None
    manifest: dict
    alpha: float = 0.05

    def changed(self) -> pd.DataFrame:
        """The flagged rows: ``label, base, strong, difference, low, high, why``."""
        return self.table.loc[self.table.changed, ["label", "base", "strong", "difference", "low",
                                                   "high", "why"]].reset_index(drop=True)

    def summary(self) -> str:
        """The headline (rows, significant differences, changed conclusions, and the rank
        correlation or spreads) and the changed rows."""
        m, t = self.manifest, self.table
        lines = [f"{m['kind']}: {m['board']}, {m['players']} players, {m['games']:,} games "
                 f"(seed {m['seed']}): {m['base_label']} against {m['strong_label']}",
                 f"{len(t)} rows, {int(t.significant.sum())} differ at q < {self.alpha}, "
                 f"{int(t.changed.sum())} conclusions change"]
        if "spearman" in m:
            lines.append(f"rank correlation (Spearman) {m['spearman']:.3f}, p {m['spearman_p']:.2g}")
        if self.spread is not None:
            for _, r in self.spread.iterrows():
                lines.append(f"{r['label']}: {r.base:.3f} [{r.base_low:.3f}, {r.base_high:.3f}] -> "
                             f"{r.strong:.3f} [{r.strong_low:.3f}, {r.strong_high:.3f}]")
        return _with_changed(lines, self.changed())


def _policy_differences(pb, ps, noun: str = "study") -> list[str]:
    """How two runs' or studies' policies differ in more than their names, slot by slot."""
    pb, ps = list(pb or []), list(ps or [])
    if len(pb) != len(ps):
        return [f"policy count {len(ps)} in the strong {noun}, {len(pb)} in the base {noun}"]
    diff = [f"policy settings of slot {k}: {b!r} in the strong {noun}, {a!r} in the base "
            f"{noun}" for k, (a, b) in enumerate(zip(pb, ps)) if _settings(a) != _settings(b)]
    if _slot_groups(pb) != _slot_groups(ps):
        diff.append(f"policy layout: {ps} in the strong {noun}, {pb} in the base {noun}")
    return diff


def _check_same_study(base, strong, kind: str, keys: tuple) -> None:
    """Refuse two results of `kind` that did not play the same games with the same study
    settings, or whose policies differ in more than their names (one ValueError naming
    every difference)."""
    m, ms = manifest_of(base), manifest_of(strong)
    for side, mm in (("base", m), ("strong", ms)):
        if mm.get("kind") != kind:
            raise TypeError(f"the {side} study is not a {kind} result (its kind: "
                            f"{mm.get('kind')!r})")
    diff = [f"{k} {ms.get(k)!r} in the strong study, {m.get(k)!r} in the base study"
            for k in ("board", "board_checksum", "players", "games", "seed", "max_turns", *keys)
            if m.get(k) != ms.get(k)]
    diff += _policy_differences(m.get("policies"), ms.get("policies"))
    if diff:
        raise ValueError("the two studies do not play the same games (" + "; ".join(diff) + "): "
                         "run the strong study with the base study's settings, changing only "
                         "the policy name seat by seat (e.g. 'expert' for 'tickets')")


def _independent(df: pd.DataFrame, confidence: float) -> pd.DataFrame:
    """difference = strong - base with its normal interval and p-value from the two
    sides' intervals (standard error = width / (2 z)), the sides taken as independent."""
    from scipy import stats as sps

    z = sps.norm.ppf(0.5 + confidence / 2)
    se = np.hypot((df.base_high - df.base_low) / (2 * z), (df.strong_high - df.strong_low) / (2 * z))
    df = df.assign(difference=df.strong - df.base)
    df["low"], df["high"] = df.difference - z * se, df.difference + z * se
    with np.errstate(divide="ignore", invalid="ignore"):
        df["p_value"] = np.where(se > 0, 2 * sps.norm.sf(np.abs(df.difference) / se),
                                 np.where(df.difference == 0, 1.0, 0.0))
    return df


def _study_manifest(kind: str, base, strong, **fields) -> dict:
    m, ms = manifest_of(base), manifest_of(strong)
    return {"kind": kind, "ttrsim_version": __version__,
            **{k: m.get(k) for k in ("board", "board_checksum", "players", "games", "seed",
                                     "max_turns")},
            "base_policies": list(m["policies"]), "strong_policies": list(ms["policies"]),
            "base_label": _label(m["policies"]), "strong_label": _label(ms["policies"]),
            "expert_models": {**_models(m), **_models(ms)} or None, **fields,
            "versions": versions()}


def compare_importance(base, strong, *, top: int = TOP_IMPORTANT, alpha: float = 0.05,
                       confidence: float = DEFAULT_CONFIDENCE) -> StudyComparison:
    """Route importance (:func:`~ttrsim.analysis.route_importance`) under two plays: each
    route's importance (the drop in ticket completion when it is removed, percentage
    points) and its interval under ``base`` and ``strong``, the difference with its
    interval, p- and Benjamini-Hochberg q-value, and ``changed``: the verdict on
    whether the route matters differs (each study's own: ``above`` when removing it costs
    ticket completion with its q over the routes below ``alpha``, ``below`` when the board
    does better without it, else ``unclear``; so each verdict keeps the study's false
    discovery rate), or it is among the ``top`` most important under one play and not
    the other and the difference is significant (q < ``alpha``). The manifest adds
    Spearman's rank correlation of the importances (``scipy.stats.spearmanr``). Both
    studies must have played the same games with the same routes removed (refused
    otherwise)."""
    from scipy import stats as sps

    _check_same_study(base, strong, "route_importance", ("routes",))
    sides = {}
    for side, r in (("base", base), ("strong", strong)):
        t = r.table.set_index("route")
        # (+ 0.0: no negative zeros); the verdict: the study's own BH q over the routes
        imp = -100 * t.completion_change + 0.0
        sides[side] = pd.DataFrame({side: imp, f"{side}_low": -100 * t.completion_high + 0.0,
                                    f"{side}_high": -100 * t.completion_low + 0.0,
                                    f"{side}_q": t.completion_q})
        sides[side][f"{side}_verdict"] = np.where(
            ~np.isfinite(imp) | ~np.isfinite(t.completion_q), "",
            np.where(t.completion_q >= alpha, "unclear", np.where(imp > 0, "above", "below")))
    t0 = base.table.set_index("route")
    df = pd.concat([t0[["name", "claim_rate", "note"]], sides["base"], sides["strong"]], axis=1)
    df = df.reset_index().rename(columns={"index": "route"})
    for side in ("base", "strong"):
        df[f"{side}_rank"] = df[side].rank(ascending=False, method="min")
    df = _independent(df, confidence)
    verdicts = df[["base_verdict", "strong_verdict"]].copy()
    df = _finish(df.assign(label=df.name, rule="none", reference=0.0), alpha, 0.0)
    df[["base_verdict", "strong_verdict"]] = verdicts
    ok = df.base_rank.notna() & df.strong_rank.notna()
    flip = ok & (df.base_verdict != df.strong_verdict)
    topped = ok & df.significant & ((df.base_rank <= top) != (df.strong_rank <= top))
    df["changed"] = flip | topped
    df["why"] = [
        "; ".join(([f"{b} 0 -> {s}"] if f else []) + ([f"rank {int(rb)} -> {int(rs)} (top {top})"]
                                                      if t else []))
        for f, t, b, s, rb, rs in zip(flip, topped, df.base_verdict, df.strong_verdict,
                                      df.base_rank.fillna(0), df.strong_rank.fillna(0))]
    df = df.sort_values(["changed", "base_rank"], ascending=[False, True], kind="stable",
                        na_position="last", ignore_index=True)
    rho = sps.spearmanr(df.base[ok], df.strong[ok])
    cols = ["route", "name", "label", "claim_rate", "base_rank", "strong_rank", "base_q",
            "strong_q", *VALUES, "note"]
    return StudyComparison(df[cols], None, _study_manifest(
        "importance_comparison", base, strong, top=top, alpha=alpha, confidence=confidence,
        spearman=float(rho.statistic), spearman_p=float(rho.pvalue)), alpha)


def compare_fairness(base, strong, *, material: float = MATERIAL_POINTS, alpha: float = 0.05,
                     confidence: float = DEFAULT_CONFIDENCE) -> StudyComparison:
    """Fair ticket points (:func:`~ttrsim.analysis.ticket_fairness`) under two plays, on
    the board as given (round 0): each ticket's value (expected net points per train
    space of difficulty) and its interval under ``base`` and ``strong``, the difference
    with its interval, p- and q-value; each play's completion, balanceable flag and
    suggested points; ``changed``: the value differs significantly (q < ``alpha``) and
    the ticket is balanceable under one play only, or the two suggestions differ by at
    least ``material`` of its printed points (both are read from point estimates: without
    a significant difference they may differ by chance). ``spread``: the spread between
    tickets as given under each play (balanceable tickets, all tickets). Both studies
    must have played the same games with the same settings (refused otherwise)."""
    _check_same_study(base, strong, "ticket_fairness",
                      ("min_completion", "max_factor", "confidence", "n_resamples"))
    b, s = (f.table[f.table["round"] == 0].set_index("ticket") for f in (base, strong))
    df = pd.DataFrame({"name": b.name, "points": b.points, "difficulty": b.difficulty,
                       "base": b.value, "base_low": b.value_low, "base_high": b.value_high,
                       "strong": s.value, "strong_low": s.value_low, "strong_high": s.value_high,
                       "base_completion": b.completion, "strong_completion": s.completion,
                       "base_kept": b.kept, "strong_kept": s.kept,
                       "base_balanceable": b.balanceable.astype(bool),
                       "strong_balanceable": s.balanceable.astype(bool),
                       "base_suggested": b.suggested, "strong_suggested": s.suggested})
    df = df.reset_index().rename(columns={"index": "ticket"})
    df = _independent(df, confidence)
    df = _finish(df.assign(label=df.name, rule="none"), alpha, 0.0)
    bal = df.base_balanceable != df.strong_balanceable
    apart = (df.base_suggested - df.strong_suggested).abs() >= material * df.points
    df["changed"] = df.significant & (bal | apart)
    why = []
    for k in range(len(df)):
        parts = []
        if bal.iloc[k]:
            parts.append("balanceable under the " + ("strong" if df.strong_balanceable.iloc[k]
                                                     else "base") + " play only")
        if apart.iloc[k]:
            parts.append(f"suggested {int(df.base_suggested.iloc[k])} -> "
                         f"{int(df.strong_suggested.iloc[k])} (printed {int(df.points.iloc[k])})")
        why.append("; ".join(parts))
    df["why"] = why
    df = df.sort_values(["changed", "ticket"], ascending=[False, True], kind="stable",
                        ignore_index=True)
    rows = []
    for label, col in (("spread as given, balanceable tickets", "spread"),
                       ("spread as given, all tickets", "spread_all")):
        r0 = {side: f.spread[f.spread["round"] == 0].iloc[0] for side, f in
              (("base", base), ("strong", strong))}
        rows.append({"label": label, **{f"{side}{suf}": float(r0[side][f"{col}{suf}"])
                                        for side in ("base", "strong")
                                        for suf in ("", "_low", "_high")}})
    spread = _independent(pd.DataFrame(rows), confidence)
    spread = _finish(spread.assign(rule="none"), alpha, 0.0)[["label", *VALUES]]
    cols = ["ticket", "name", "label", "points", "difficulty", "base_kept", "strong_kept",
            "base_completion", "strong_completion", "base_balanceable", "strong_balanceable",
            "base_suggested", "strong_suggested", *VALUES]
    return StudyComparison(df[cols], spread, _study_manifest(
        "fairness_comparison", base, strong, material=material, alpha=alpha,
        confidence=confidence), alpha)


def compare_variant(base, strong, *, alpha: float = 0.05,
                    confidence: float = DEFAULT_CONFIDENCE) -> StudyComparison:
    """A board against a variant (:func:`~ttrsim.analysis.compare`) under two plays: each
    metric's effect of the variant (variant - base, its paired interval) under ``base``
    and ``strong``, the difference of the two effects with its interval, p- and
    Benjamini-Hochberg q-value, and ``changed``: the verdict on the effect differs (each
    comparison's own: ``above`` when the variant raises the metric at its q < ``alpha``,
    ``below`` when it lowers it, else ``unclear``). Both comparisons must have played the
    same games on the same two boards (refused otherwise)."""
    m, ms = manifest_of(base), manifest_of(strong)
    for side, mm in (("base", m), ("strong", ms)):
        if "variant_checksum" not in mm:
            raise TypeError(f"the {side} study is not a board-variant comparison "
                            "(ttrsim.compare's result)")
    diff = [f"{k} {ms.get(k)!r} in the strong study, {m.get(k)!r} in the base study"
            for k in ("base_checksum", "variant_checksum", "players", "games", "seed",
                      "variant_seed", "common_random_numbers")
            if m.get(k) != ms.get(k)]
    diff += _policy_differences(m.get("policies"), ms.get("policies"))
    if diff:
        raise ValueError("the two comparisons do not play the same games (" + "; ".join(diff)
                         + "): run the strong one with the base one's boards, players, games "
                         "and seed, changing only the policy name seat by seat")
    sides = []
    for side, c in (("base", base), ("strong", strong)):
        t = c.table.set_index(["kind", "key"])
        verdict = np.where(~t.significant.astype(bool), "unclear",
                           np.where(t.difference > 0, "above", "below"))
        sides.append(pd.DataFrame({side: t.difference, f"{side}_low": t.low,
                                   f"{side}_high": t.high, f"{side}_q": t.q_value,
                                   f"{side}_verdict": verdict}, index=t.index))
    t0 = base.table.set_index(["kind", "key"])
    df = pd.concat([t0[["metric"]], *sides], axis=1).reset_index()
    df = _independent(df, confidence)
    verdicts = df[["base_verdict", "strong_verdict"]].copy()
    df = _finish(df.assign(label=df.metric, rule="none", reference=0.0), alpha, 0.0)
    df[["base_verdict", "strong_verdict"]] = verdicts
    df["changed"] = df.base_verdict != df.strong_verdict
    df["why"] = np.where(df.changed, df.base_verdict + " 0 -> " + df.strong_verdict, "")
    df = df.sort_values("changed", ascending=False, kind="stable", ignore_index=True)
    manifest = {"kind": "variant_comparison", "ttrsim_version": __version__,
                "board": f"{m.get('base')} -> {m.get('variant')}",
                **{k: m.get(k) for k in ("base", "base_checksum", "variant", "variant_checksum",
                                         "variant_hash", "players", "games", "seed")},
                "base_policies": list(m["policies"]), "strong_policies": list(ms["policies"]),
                "base_label": _label(m["policies"]), "strong_label": _label(ms["policies"]),
                "expert_models": {**_models(m), **_models(ms)} or None, "alpha": alpha,
                "confidence": confidence, "versions": versions()}
    cols = ["kind", "key", "metric", "label", "base_q", "strong_q", *VALUES]
    return StudyComparison(df[cols], None, manifest, alpha)
