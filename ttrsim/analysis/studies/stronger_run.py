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

The ``changed`` rules by the kind of row are those of
:mod:`ttrsim.analysis.studies.verdicts`; here ``top`` is :data:`TOP_ROUTES` routes and
``material`` :data:`MATERIAL` (10%) of the base value.
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
from ttrsim.analysis.studies.verdicts import (VALUES, expert_models, finish, policy_differences,
                                              policy_label, slot_groups, weaker_play,
                                              with_changed)
from ttrsim.analysis.tickets import ticket_completion
from ttrsim.batches import versions
from ttrsim.stats import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES

__all__ = ["PlayComparison", "compare_play", "check_same_games", "TOP_ROUTES", "MATERIAL"]

#: Routes compared by their place among the most claimed.
TOP_ROUTES = 20
#: Smallest relative change of a quantity without a reference that counts as a change.
MATERIAL = 0.10
#: Score parts, per player and game (a part or count zero in both runs is left out).
SCORE_PARTS = ("score", "route_points", "ticket_points", "longest_bonus", "globetrotter",
               "station_points", "attraction_points")
#: Counts per player and game shown with the score parts.
COUNTS = ("tickets_kept", "tickets_completed", "routes_claimed", "stations_built", "trains_left")
#: Station metrics of ``station_value`` compared, with their rule.
STATION_RULES = {"score_diff": "reference", "win_diff": "reference",
                 "tickets_completed_diff": "reference", "ticket_points_diff": "reference",
                 "points_per_station": "reference", "gross_points_per_station": "material",
                 "stations_built": "material", "tickets_by_station": "material"}
#: Games per block of the per-game sums (memory stays flat whatever the run's size).
CHUNK = 20_000


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
        if m.get("weaker"):
            lines.append(m["weaker"])
        for name, t in self.tables().items():
            lines.append(f"{name}: {len(t)} rows, {int(t.significant.sum())} differ at q < "
                         f"{self.alpha}, {int(t.changed.sum())} conclusions change")
        return with_changed(lines, self.changed())


def check_same_games(run, strong) -> None:
    """Refuse two runs that do not play the same games seat by seat: board, player count,
    game count, seed, seat rotation and turn limit must agree, and the policies must keep
    the same settings and layout slot by slot (``tickets:risk=0`` against
    ``expert:risk=0``). One ValueError names every difference and the fix."""
    diff = identity_differences(run, strong, "the base run", "the strong run")
    pb, ps = manifest_of(run).get("policies"), manifest_of(strong).get("policies")
    if pb is not None and ps is not None:
        diff += policy_differences(pb, ps, "run")
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


def _interval(est, se, q):
    est, se = np.asarray(est, float), np.asarray(se, float)
    return est - q * se, est + q * se


def _paired_by_table(sides, games: int, chunk: int, confidence: float) -> dict:
    """``{table: rows}`` of the paired statistics (``base``, ``strong``, their standard
    errors, the difference with its interval and p-value) over per-game sums taken
    ``chunk`` games at a time."""
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
    return {name: part.reset_index(drop=True) for name, part in st.groupby("table", sort=False)}


_WORDS = {"win_rate": "win share", "score_mean": "mean score",
          "score_diff": "score minus the others' mean"}


def _tickets(t, run, strong, board, confidence, alpha, material) -> pd.DataFrame:
    """Each play's completion with the Wilson interval of its ticket table."""
    t = t.assign(ticket=lambda d: d.key.astype(int))
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
    return finish(t, alpha, material)[["ticket", "name", "points", "label", "base_kept",
                                       "strong_kept", *VALUES]]


def _seats(s, run, strong, boot, alpha, material) -> pd.DataFrame:
    """Win share (Wilson), mean score and score against the others (bootstrap)."""
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
    s["label"] = [f"seat {a}: {_WORDS[b]}" for a, b in zip(s.seat, s.metric)]
    return finish(s, alpha, material)[["seat", "metric", "label", *VALUES]]


def _policies(p, m, ms, groups, n, tq, alpha, material) -> pd.DataFrame:
    """Win share and mean score per slot group (seat-rotated runs of several policies)."""
    cols = ["base_policy", "strong_policy", "metric", "label", *VALUES]
    if p is None:
        return pd.DataFrame(columns=cols)
    p = p.assign(group=[k[0] for k in p.key], metric=[k[1] for k in p.key])
    first = {g: k for k, g in reversed(list(enumerate(groups)))}
    p["base_policy"] = [m["policies"][first[g]] for g in p.group]
    p["strong_policy"] = [ms["policies"][first[g]] for g in p.group]
    for side, se in (("base", "se_base"), ("strong", "se_strong")):
        p[f"{side}_low"], p[f"{side}_high"] = _interval(p[side], p[se], tq)
    share = np.array([groups.count(g) / n for g in p.group])
    p["reference"] = np.where(p.metric == "win_rate", share, np.nan)
    p["rule"] = np.where(p.metric == "win_rate", "reference", "material")
    p["label"] = [f"{a} / {b}: {_WORDS[c]}" for a, b, c in
                  zip(p.base_policy, p.strong_policy, p.metric)]
    return finish(p, alpha, material)[cols]


def _stations(st_, pairs, confidence, n_resamples, seed, alpha, material) -> pd.DataFrame:
    """Each play's station value from ``station_value`` (its bootstrap interval);
    ``pairs``: ``((run, baseline), (strong, strong_baseline))``."""
    st_ = st_.assign(metric=lambda d: d.key)
    for side, (r, b) in zip(("base", "strong"), pairs):
        sv = station_value(r, b, confidence=confidence, n_resamples=n_resamples, seed=seed)
        pooled = sv[sv.players.isna() & (sv.seat.isna() if sv.seat.isna().any() else True)]
        pooled = pooled.set_index("metric")
        for suffix, col in (("", "estimate"), ("_low", "low"), ("_high", "high")):
            st_[f"{side}{suffix}"] = st_.metric.map(pooled[col])
    st_["rule"] = st_.metric.map(STATION_RULES)
    st_["reference"] = np.where(st_.rule == "reference", 0.0, np.nan)
    st_["label"] = st_.metric.str.replace("_", " ")
    return finish(st_, alpha, material)[["metric", "label", *VALUES]]


def _routes(r_, run, strong, board, confidence, top, alpha, material) -> pd.DataFrame:
    """Claim rate (Wilson, ``route_claims``); BH over every route, the ``top`` ones kept."""
    r_ = r_.assign(route=lambda d: d.key.astype(int))
    for side, r in (("base", run), ("strong", strong)):
        rc = route_claims(r, confidence=confidence).set_index("route")
        r_[side] = r_.route.map(rc.claim_rate).fillna(0.0)
        r_[f"{side}_low"] = r_.route.map(rc.claim_rate_low)
        r_[f"{side}_high"] = r_.route.map(rc.claim_rate_high)
        r_[f"{side}_rank"] = r_[side].rank(ascending=False, method="min").astype(int)
    rnames = {int(board.route_id[i]): board.route_name(i) for i in range(len(board.route_id))}
    r_["name"] = r_.route.map(rnames)
    r_ = r_.assign(label=[f"{a} {b}" for a, b in zip(r_.route, r_.name)], rule="top")
    r_ = finish(r_, alpha, material, top)
    r_ = r_[(r_.base_rank <= top) | (r_.strong_rank <= top)]
    return r_.sort_values(["base_rank", "strong_rank"], kind="stable", ignore_index=True)[
        ["route", "name", "label", "base_rank", "strong_rank", *VALUES]]


def _score_parts(sp, tq, alpha, material) -> pd.DataFrame:
    """Score parts and game length: each play's mean with its own normal interval."""
    sp = sp.assign(metric=lambda d: d.key)
    zero = sp.metric.isin(SCORE_PARTS + COUNTS) & (sp.base == 0) & (sp.strong == 0)
    sp = sp[~zero].reset_index(drop=True)
    for side, se in (("base", "se_base"), ("strong", "se_strong")):
        sp[f"{side}_low"], sp[f"{side}_high"] = _interval(sp[side], sp[se], tq)
    sp["rule"] = "material"
    plain = {"ticket_completion": "ticket completion (completed / kept)",
             "turns": "game length (turns)"}
    sp["label"] = [plain.get(k, f"{k.replace('_', ' ')} per player") for k in sp.metric]
    return finish(sp, alpha, material)[["metric", "label", *VALUES]]


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
    groups = slot_groups(m["policies"])
    sides = [_Side(r, b, board, n, rotate, groups)
             for r, b in ((run, baseline), (strong, strong_baseline))]
    if baseline is not None:
        rows = [set(zip(s.station_rows.game, s.station_rows.seat)) for s in sides]
        if rows[0] != rows[1]:
            raise ValueError("the station baselines switch stations off at different seats: give "
                             "the seat without stations the same slot in both baselines")
    by_table = _paired_by_table(sides, games, chunk, confidence)
    tq = sps.t.ppf(0.5 + confidence / 2, max(games - 1, 1))
    boot = {"confidence": confidence, "n_resamples": n_resamples, "seed": seed}
    tickets = _tickets(by_table["tickets"], run, strong, board, confidence, alpha, material)
    seats = _seats(by_table["seats"], run, strong, boot, alpha, material)
    policies = _policies(by_table.get("policies"), m, ms, groups, n, tq, alpha, material)
    stations = None
    if baseline is not None:
        stations = _stations(by_table["stations"], ((run, baseline), (strong, strong_baseline)),
                             confidence, n_resamples, seed, alpha, material)
    routes = _routes(by_table["routes"], run, strong, board, confidence, top, alpha, material)
    score_parts = _score_parts(by_table["score_parts"], tq, alpha, material)
    manifest = {
        "kind": "play_comparison", "ttrsim_version": __version__, "board": m.get("board"),
        "board_checksum": m.get("board_checksum"), "players": n, "games": games,
        "seed": m.get("seed"), "rotate": rotate, "max_turns": m.get("max_turns"),
        "base_policies": list(m["policies"]), "strong_policies": list(ms["policies"]),
        "base_label": policy_label(m["policies"]), "strong_label": policy_label(ms["policies"]),
        "weaker": weaker_play(m["policies"], ms["policies"]),
        "base_baseline_policies": (None if baseline is None
                                   else list(manifest_of(baseline)["policies"])),
        "strong_baseline_policies": (None if strong_baseline is None
                                     else list(manifest_of(strong_baseline)["policies"])),
        # the model files behind every `expert` seat (path: digest), of all four runs
        "expert_models": {**expert_models(m), **expert_models(ms),
                          **expert_models(manifest_of(baseline)),
                          **expert_models(manifest_of(strong_baseline))} or None,
        "top_routes": top, "alpha": alpha, "material": material, "confidence": confidence,
        "n_resamples": n_resamples, "bootstrap_seed": seed if isinstance(seed, int) else None,
        "versions": versions(),
    }
    return PlayComparison(tickets, seats, policies, stations, routes, score_parts, manifest, alpha)
