"""Paired comparison of two boards with common random numbers.

``compare(base, variant, ...)`` plays the same games on both boards: game ``i`` of both
sides is dealt from the same seed (the run seed and ``i``, exactly as ``simulate`` does),
so the shuffles, the deals and the policies' random draws coincide wherever the two
boards allow, and the per-game difference of any result carries far less noise than the
difference of two unrelated runs.

Every metric is a ratio of per-game sums, ``R = sum(y) / sum(x)`` (a plain mean has
``x = 1``, a mean per player ``x = players``, a completion rate ``x = tickets kept``).
Each side is reduced, batch by batch, to the sums and the sums of products of
``(y_base, x_base, y_variant, x_variant)`` per metric (exact integers), so memory does not
grow with the number of games. The difference ``R_variant - R_base`` gets the delta-method
standard error of the *paired* per-game differences of the linearised ratios
``(y - R x) / mean(x)``; for a plain mean this is exactly the paired t-test. The p-value
and the interval use Student's t with ``games - 1`` degrees of freedom
(``scipy.stats.t``); the p-values of all metrics are adjusted with Benjamini–Hochberg
(``scipy.stats.false_discovery_control``). The same sums also give the interval an
unpaired comparison would have (``Comparison.intervals``).
"""
from __future__ import annotations

import dataclasses
import time

import numpy as np
import pandas as pd
from ttrsim._batch import DEFAULT_MAX_TURNS, SCORE_COLS
from ttrsim.runner import run_tasks

__all__ = ["Comparison", "compare", "game_metrics", "paired_stats"]

_SC = {name: i for i, name in enumerate(SCORE_COLS)}
#: Per-player score parts and counts compared as means per player.
PLAYER_COLS = ("score", "route_points", "ticket_points", "longest_bonus", "station_points",
               "attraction_points", "tickets_kept", "tickets_completed", "tickets_failed",
               "stations_built", "routes_claimed", "trains_left", "longest")
KINDS = ("score", "game", "seat", "policy", "ticket", "route")


# ---------------------------------------------------------------------------
# per-game metrics of one batch


def game_metrics(board, names, res: dict, first: int, detail: bool = True):
    """Per-game numerators and denominators of every metric of one batch.

    ``res`` is what the core returns for a batch (per-event mode) whose first game is
    ``first``; ``names`` are the policy names per slot. Returns ``(meta, Y, X)``: ``meta`` a
    list of ``(key, kind, label)`` and ``Y``, ``X`` int64 arrays (games, metrics).
    ``detail=False`` keeps only the mean score and the ticket completion.
    """
    sc = np.asarray(res["scores"]).astype(np.int64)
    G, n = sc.shape[:2]
    meta, ys, xs = [], [], []

    def add(key, kind, label, y, x):
        meta.append((key, kind, label))
        ys.append(np.asarray(y, dtype=np.int64))
        xs.append(np.broadcast_to(np.asarray(x, dtype=np.int64), (G,)))

    per_player = PLAYER_COLS if detail else ("score",)
    for col in per_player:
        add(col, "score", f"{col.replace('_', ' ')} (mean per player)",
            sc[:, :, _SC[col]].sum(axis=1), n)
    add("ticket_completion", "score", "ticket completion (completed / kept)",
        sc[:, :, _SC["tickets_completed"]].sum(axis=1), sc[:, :, _SC["tickets_kept"]].sum(axis=1))
    if not detail:
        return meta, np.stack(ys, axis=1), np.stack(xs, axis=1)
    win = sc[:, :, _SC["rank"]] == 1
    bonus = sc[:, :, _SC["longest_bonus"]] > 0
    add("turns", "game", "game length (turns)", np.asarray(res["turns"]), 1)
    add("truncated", "game", "games truncated (share)", np.asarray(res["truncated"]), 1)
    add("all_passed", "game", "games ended by all passing (share)", np.asarray(res["all_passed"]), 1)
    add("longest_holders", "game", "longest-path bonus holders per game", bonus.sum(axis=1), 1)
    add("winners", "game", "winners per game (ties share)", win.sum(axis=1), 1)
    add("margin", "game", "winning margin (points, first minus second)",
        np.diff(np.sort(sc[:, :, _SC["score"]], axis=1)[:, -2:], axis=1)[:, 0], 1)
    for s in range(n):
        add(f"seat{s}_win", "seat", f"win share, seat {s}", win[:, s], 1)
    for s in range(n):
        add(f"seat{s}_longest", "seat", f"longest-path bonus share, seat {s}", bonus[:, s], 1)
    slot = np.asarray(res["slot"])
    pol = np.asarray(names, dtype=object)[slot]
    distinct = sorted(set(names))
    if len(distinct) > 1:
        for p in distinct:
            mine = pol == p
            add(f"policy:{p}:win", "policy", f"win share, policy {p}", (win & mine).sum(axis=1),
                mine.sum(axis=1))
            add(f"policy:{p}:score", "policy", f"mean score, policy {p}",
                np.where(mine, sc[:, :, _SC["score"]], 0).sum(axis=1), mine.sum(axis=1))
    # per ticket: completions among the tickets kept
    o = np.asarray(res["offers"])
    T = board.n_tickets
    kept = o[:, 4].astype(bool)
    cell = (o[kept, 0] - first) * T + o[kept, 2]
    k = np.bincount(cell, minlength=G * T).reshape(G, T)
    c = np.bincount(cell, weights=o[kept, 6], minlength=G * T).reshape(G, T).astype(np.int64)
    # per route: share of games in which it is claimed
    cl = np.asarray(res["claims"])
    R = board.n_routes
    claimed = np.zeros(G * R, dtype=np.int64)
    claimed[(cl[:, 0] - first) * R + cl[:, 2]] = 1
    claimed = claimed.reshape(G, R)
    Y, X = np.stack(ys, axis=1), np.stack(xs, axis=1)
    tmeta = [(f"ticket:{int(board.ticket_id[t])}", "ticket",
              f"ticket completion, {board.ticket_name(t)}") for t in range(T)]
    rmeta = [(f"route:{int(board.route_id[r])}", "route",
              f"claim rate, route {int(board.route_id[r])} {board.route_name(r)}")
             for r in range(R)]
    return (meta + tmeta + rmeta, np.concatenate([Y, c, claimed], axis=1),
            np.concatenate([X, k, np.ones((G, R), dtype=np.int64)], axis=1))


def paired_moments(Yb, Xb, Yv, Xv):
    """Per metric the sums ``S`` (metrics, 4) and sums of products ``M`` (metrics, 4, 4)
    of ``(y_base, x_base, y_variant, x_variant)`` over games (int64, exact)."""
    Z = np.stack([Yb, Xb, Yv, Xv], axis=0).astype(np.int64)      # (4, games, metrics)
    S = Z.sum(axis=1).T
    # products in float64 (BLAS): exact while every sum stays below 2**53, which the
    # counts and scores of a batch are far from (|value| < 2**15, games < 2**20)
    F = np.ascontiguousarray(Z.transpose(2, 0, 1), dtype=np.float64)   # (metrics, 4, games)
    M = np.rint(F @ F.transpose(0, 2, 1)).astype(np.int64)
    return S, M


def _align(meta_b, Yb, Xb, meta_v, Yv, Xv):
    """Union of the two sides' metrics (base order first); a metric missing on one side
    has y = x = 0 there (its rate is undefined)."""
    keys = [m[0] for m in meta_b]
    index = {k: i for i, k in enumerate(keys)}
    meta = list(meta_b)
    for m in meta_v:
        if m[0] not in index:
            index[m[0]] = len(meta)
            meta.append(m)
    G, K = Yb.shape[0], len(meta)

    def place(side_meta, Y, X):
        Yo = np.zeros((G, K), dtype=np.int64)
        Xo = np.zeros((G, K), dtype=np.int64)
        cols = [index[m[0]] for m in side_meta]
        Yo[:, cols] = Y
        Xo[:, cols] = X
        return Yo, Xo

    return meta, place(meta_b, Yb, Xb), place(meta_v, Yv, Xv)


def paired_stats(n: int, S, M, confidence: float = 0.95) -> pd.DataFrame:
    """Estimates, paired interval, p-value and unpaired half-width of each metric from the
    sums of :func:`paired_moments` over ``n`` games (see the module docstring)."""
    from scipy import stats as sps

    S = np.asarray(S, dtype=np.int64)
    M = np.asarray(M, dtype=np.int64)
    Sf = S.astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        base = Sf[:, 0] / Sf[:, 1]
        var = Sf[:, 2] / Sf[:, 3]
        diff = var - base
        # n (n - 1) Cov, exact in integers
        C = (n * M - S[:, :, None] * S[:, None, :]).astype(float) / (n * max(n - 1, 1))
        xb, xv = Sf[:, 1] / n, Sf[:, 3] / n
        a = np.stack([-1 / xb, base / xb, 1 / xv, -var / xv], axis=1)
        v_d = np.einsum("ki,kij,kj->k", a, C, a)
        v_b = np.einsum("ki,kij,kj->k", a[:, :2], C[:, :2, :2], a[:, :2])
        v_v = np.einsum("ki,kij,kj->k", a[:, 2:], C[:, 2:, 2:], a[:, 2:])
        # floating-point residue of a variance that is exactly 0 (identical games)
        v_d = np.where(v_d <= 1e-9 * (v_b + v_v), 0.0, v_d)
        se = np.sqrt(v_d / n)
        se_u = np.sqrt((v_b + v_v) / n)
        tq = sps.t.ppf(0.5 + confidence / 2, max(n - 1, 1))
        tstat = diff / se
        p = 2 * sps.t.sf(np.abs(tstat), max(n - 1, 1))
    p = np.where(se == 0, np.where(diff == 0, 1.0, 0.0), p)
    valid = np.isfinite(diff) & (n > 1)
    p = np.where(valid, p, np.nan)
    low = np.where(valid, diff - tq * se, np.nan)
    high = np.where(valid, diff + tq * se, np.nan)
    return pd.DataFrame({"base": base, "variant": var, "difference": diff, "low": low,
                         "high": high, "p_value": p, "se_paired": se, "se_unpaired": se_u})


def bh_q(p) -> np.ndarray:
    """Benjamini–Hochberg q-values of the finite p-values (NaN elsewhere)."""
    from scipy import stats as sps

    p = np.asarray(p, dtype=float)
    q = np.full(p.shape, np.nan)
    ok = np.isfinite(p)
    if ok.any():
        q[ok] = sps.false_discovery_control(p[ok], method="bh")
    return q


# ---------------------------------------------------------------------------
# running tasks


# ---------------------------------------------------------------------------
# compare


def paired_configs(base, variant, players=4, policies=None, games=10_000, seed=0,
                   batch_size=None, max_turns=DEFAULT_MAX_TURNS, crn=True):
    """The runner configurations of the two sides: identical but for the board (and, with
    ``crn=False``, the seed of the variant side, ``seed + 1``)."""
    from ttrsim.runner import _config
    from ttrsim.game import resolve_board
    from ttrsim.maps import MapError

    try:
        base, variant = resolve_board(base), resolve_board(variant)
    except MapError as exc:
        raise ValueError(str(exc)) from None
    if policies is not None:
        if isinstance(policies, str):
            if isinstance(players, bool) or not isinstance(players, (int, np.integer)):
                raise ValueError("with one policy spec give players as a count")
            players = [policies] * int(players)
        else:
            players = list(policies)
    cfg_b = _config(base, players, games, seed, batch_size, True, False, max_turns)
    cfg_v = _config(variant, players, games, seed if crn else seed + 1, cfg_b.batch_size, True,
                    False, max_turns)
    return cfg_b, cfg_v


def _play_side(cfg, first, stop, detail):
    from ttrsim.runner import _play

    res = _play(cfg, first, stop)
    return game_metrics(cfg.board, cfg.names, res, first, detail)


def _compare_batch(cfg_b, cfg_v, b: int, detail: bool = True):
    first, stop = cfg_b.batch_range(b)
    mb, Yb, Xb = _play_side(cfg_b, first, stop, detail)
    mv, Yv, Xv = _play_side(cfg_v, first, stop, detail)
    meta, (Yb, Xb), (Yv, Xv) = _align(mb, Yb, Xb, mv, Yv, Xv)
    S, M = paired_moments(Yb, Xb, Yv, Xv)
    return b, meta, S, M


def _sum_batches(results: dict):
    """Sum the batches' moments in batch order (the same total for any n_jobs)."""
    meta = None
    S = M = None
    for b in sorted(results):
        m, s, mm = results[b]
        if meta is None:
            meta, S, M = m, s.copy(), mm.copy()
        else:
            if m != meta:
                raise RuntimeError("batches disagree on the metrics")
            S += s
            M += mm
    return meta, S, M


def _table(meta, n, S, M, alpha, confidence):
    st = paired_stats(n, S, M, confidence)
    info = pd.DataFrame(meta, columns=["key", "kind", "metric"])
    df = pd.concat([info, st], axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        df.insert(6, "relative", df.difference / df.base.abs())
    df["q_value"] = bh_q(df.p_value)
    df["significant"] = df.q_value < alpha
    df.insert(3, "games", n)
    return df


@dataclasses.dataclass
class Comparison:
    """The result of :func:`compare`.

    ``table``: one row per metric with ``kind, metric, key, games, base, variant,
    difference, relative, low, high, p_value, q_value, significant`` (``low``/``high``: the
    interval of the paired difference). ``full`` adds the paired and unpaired standard
    errors; ``intervals()`` compares the two interval widths. ``base``/``variant`` are the
    boards, ``manifest`` records both boards, the variant's description and hash, the seed,
    the policies and the games.
    """

    full: pd.DataFrame
    base: object
    variant: object
    manifest: dict
    alpha: float = 0.05

    @property
    def table(self) -> pd.DataFrame:
        cols = ["kind", "metric", "key", "games", "base", "variant", "difference", "relative",
                "low", "high", "p_value", "q_value", "significant"]
        return self.full[cols]

    def significant(self) -> pd.DataFrame:
        """The significant rows (q < alpha), largest |t| first."""
        t = self.full
        sig = t[t.significant].copy()
        order = (sig.difference.abs() / sig.se_paired.replace(0, np.nan)).fillna(np.inf)
        return sig.loc[order.sort_values(ascending=False).index, self.table.columns]

    def sorted_table(self) -> pd.DataFrame:
        """All rows, the significant ones first (by |t|), then the rest by p-value."""
        rest = self.table[~self.table.significant].sort_values("p_value", na_position="last")
        return pd.concat([self.significant(), rest])

    def intervals(self) -> pd.DataFrame:
        """Per metric the 95% half-width of the paired interval and of the unpaired one
        (the two sides treated as independent samples), and their ratio."""
        from scipy import stats as sps

        t = self.full
        q = sps.t.ppf(0.975, max(int(t.games.iloc[0]) - 1, 1))
        out = t[["kind", "metric", "key"]].copy()
        out["paired_half_width"] = q * t.se_paired
        out["unpaired_half_width"] = q * t.se_unpaired
        with np.errstate(divide="ignore", invalid="ignore"):
            out["unpaired_over_paired"] = out.unpaired_half_width / out.paired_half_width
        return out

    def summary(self, rows: int = 25) -> str:
        """Readable text: the boards, the variant, and the table with significant rows first."""
        m = self.manifest
        n_sig = int(self.full.significant.sum())
        head = [f"compare {m['base']} vs {m['variant']} ({m['variant_description']}), "
                f"{m['players']} players, {m['games']:,} paired games, seed {m['seed']}",
                f"{n_sig} of {int(self.full.p_value.notna().sum())} metrics differ at "
                f"q < {self.alpha} (Benjamini-Hochberg)"]
        t = self.sorted_table().head(rows)
        shown = pd.DataFrame({
            "metric": t.metric.str.slice(0, 60), "base": t.base.map(_num),
            "variant": t.variant.map(_num), "difference": t.difference.map(_num),
            "95% interval": [f"[{_num(a)}, {_num(b)}]" for a, b in zip(t.low, t.high)],
            "q": t.q_value.map(lambda v: "–" if not np.isfinite(v) else f"{v:.2g}"),
            "sig": np.where(t.significant, "*", "")})
        return "\n".join(head) + "\n" + shown.to_string(index=False)

    def report(self, out_dir, title: str | None = None):
        """Write an HTML comparison report with figures; returns the path of index.html."""
        from ttrsim.balance_report import write_comparison_report

        return write_comparison_report(self, out_dir, title=title)


def _num(v) -> str:
    if not np.isfinite(v):
        return "–"
    return f"{v:.1f}" if abs(v) >= 100 else f"{v:.4g}"


def compare(base, variant, players=4, policies=None, games: int = 10_000, seed: int = 0,
            n_jobs: int = 1, *, batch_size: int | None = None, alpha: float = 0.05,
            confidence: float = 0.95, crn: bool = True, backend: str = "loky",
            scheduler: str | None = None, progress: bool = False,
            max_turns: int = DEFAULT_MAX_TURNS) -> Comparison:
    """Play ``games`` games on both boards with common random numbers and compare them.

    ``base``, ``variant``: board names, map files or boards (e.g. from ``ttrsim.variant``).
    ``players``: a player count, or a list of policy specs one per seat; ``policies``: one
    spec for every seat or a list (overrides ``players``' specs). Seats rotate as in
    ``simulate``. ``n_jobs``/``backend``/``scheduler`` as in ``simulate``; the table does
    not depend on them. ``crn=False`` plays the variant with seed ``seed + 1`` (independent
    games, for checking the method). Returns a :class:`Comparison`.
    """
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be between 0 and 1, got {alpha!r}")
    cfg_b, cfg_v = paired_configs(base, variant, players, policies, games, seed, batch_size,
                                  max_turns, crn)
    start = time.perf_counter()
    results = {}
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=cfg_b.games, unit="game", unit_scale=True, desc="compare")
    try:
        for b, meta, S, M in run_tasks(_compare_batch,
                                       [(cfg_b, cfg_v, b) for b in range(cfg_b.n_batches)],
                                       n_jobs, backend, scheduler):
            results[b] = (meta, S, M)
            if bar is not None:
                first, stop = cfg_b.batch_range(b)
                bar.update(stop - first)
    finally:
        if bar is not None:
            bar.close()
    meta, S, M = _sum_batches(results)
    full = _table(meta, cfg_b.games, S, M, alpha, confidence)
    vinfo = cfg_v.board.variant or {}
    manifest = {
        "base": cfg_b.board.name, "base_checksum": cfg_b.board.checksum,
        "variant": cfg_v.board.name, "variant_checksum": cfg_v.board.checksum,
        "variant_description": vinfo.get("description", cfg_v.board.title),
        "variant_hash": vinfo.get("hash"), "variant_changes": vinfo.get("changes"),
        "players": cfg_b.n_players, "policies": list(cfg_b.names), "games": cfg_b.games,
        "seed": cfg_b.seed, "variant_seed": cfg_v.seed, "common_random_numbers": bool(crn),
        "batch_size": cfg_b.batch_size, "alpha": alpha, "confidence": confidence,
        "wall_seconds": round(time.perf_counter() - start, 3),
    }
    return Comparison(full, cfg_b.board, cfg_v.board, manifest, alpha)
