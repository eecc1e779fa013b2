"""Balance studies: how much each route matters, and fair ticket points.

``route_importance`` removes each route in turn and measures, on the same games of the
intact board (common random numbers, see ``compare``), the change in ticket completion and
in the mean score. ``ticket_fairness`` values each ticket for the player who keeps it,
suggests points that make tickets equally good per unit of difficulty, and re-simulates
the board with those points to show whether the spread between tickets shrank. The methods
are described in ``docs/analysis.md``.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd

from ttrsim._batch import DEFAULT_MAX_TURNS

from ..runner import run_tasks
from .compare import _align, _play_side, bh_q, paired_configs, paired_moments, paired_stats
from .stats import wilson_interval

__all__ = ["route_importance", "ticket_fairness", "Fairness", "ticket_difficulty"]


# ---------------------------------------------------------------------------
# route importance


def _importance_task(cfg_b, variants: dict, b: int, group: int):
    """Batch ``b`` of the intact board and of each route-removed board of one group."""
    from ttrsim.runner import _play

    first, stop = cfg_b.batch_range(b)
    res = _play(cfg_b, first, stop)
    from .compare import game_metrics

    mb, Yb, Xb = game_metrics(cfg_b.board, cfg_b.names, res, first, detail=False)
    claimed = np.zeros(cfg_b.board.n_routes, dtype=np.int64)
    if group == 0:
        cl = np.asarray(res["claims"])
        np.add.at(claimed, cl[:, 2], 1)
    out = {}
    for rid, cfg_v in variants.items():
        mv, Yv, Xv = _play_side(cfg_v, first, stop, False)
        meta, (yb, xb), (yv, xv) = _align(mb, Yb, Xb, mv, Yv, Xv)
        out[rid] = paired_moments(yb, xb, yv, xv)
    return b, group, out, claimed


def _identity(cfg_b, route_ids, group_size) -> dict:
    import ttrsim

    return {"kind": "route_importance", "ttrsim_version": ttrsim.__version__,
            "board": cfg_b.board.name, "board_checksum": cfg_b.board.checksum,
            "players": cfg_b.n_players, "policies": list(cfg_b.names), "games": cfg_b.games,
            "seed": cfg_b.seed, "batch_size": cfg_b.batch_size, "max_turns": cfg_b.max_turns,
            "routes": [int(r) for r in route_ids], "group_size": group_size}


def route_importance(board="europe", players=4, games: int = 2000, seed: int = 0,
                     n_jobs: int = 1, *, policies=None, routes=None, batch_size: int | None = None,
                     group_size: int = 12, out=None, backend: str = "loky",
                     scheduler: str | None = None, progress: bool = False,
                     alpha: float = 0.05, confidence: float = 0.95,
                     max_turns: int = DEFAULT_MAX_TURNS) -> pd.DataFrame:
    """One row per route: what removing it changes, on the same games of the intact board.

    For each route (``routes``: ids, default all) the board without it plays the same
    ``games`` seeds as the intact board. Columns: ``route, name, a, b, length, color,
    double, claim_rate`` (on the intact board), then for ``completion`` (ticket completion,
    completed / kept) and ``score`` (mean score per player): ``<m>_base, <m>_removed,
    <m>_change, <m>_low, <m>_high, <m>_p, <m>_q`` (paired 95% interval, p-value and
    Benjamini–Hochberg q over all routes), ``importance`` (the drop in completion, in
    percentage points) and ``rank``. A route whose removal would leave a ticket's cities
    unconnected cannot be removed: its row says so in ``note``.

    Tasks (a batch of games of the intact board and of ``group_size`` route-removed
    boards) run through joblib (``n_jobs``) or dask (``backend="dask"``); with ``out`` each
    finished task is written there and the same call resumes.
    """
    from ttrsim.game import resolve_board
    from ttrsim.variants import VariantError, variant

    base = resolve_board(board)
    ids = [int(r) for r in base.route_id] if routes is None else [int(r) for r in routes]
    unknown = [r for r in ids if r not in set(int(x) for x in base.route_id)]
    if unknown:
        raise ValueError(f"routes: no route with id {unknown[0]} on {base.name}")
    if isinstance(group_size, bool) or not isinstance(group_size, int) or group_size < 1:
        raise ValueError(f"group_size must be a positive integer, got {group_size!r}")
    cfg_b, _ = paired_configs(base, base, players, policies, games, seed, batch_size, max_turns)
    boards, notes = {}, {}
    for rid in ids:
        try:
            boards[rid] = variant(base, remove_routes=[rid])
        except VariantError as exc:
            notes[rid] = str(exc).split(": ", 1)[-1]
    cfgs = {rid: paired_configs(base, vb, players, policies, games, seed, cfg_b.batch_size,
                                max_turns)[1] for rid, vb in boards.items()}
    removable = list(cfgs)
    groups = [removable[i:i + group_size] for i in range(0, len(removable), group_size)] or [[]]
    tasks = [(b, g) for b in range(cfg_b.n_batches) for g in range(len(groups))]
    path = Path(out) if out is not None else None
    done = {}
    if path is not None:
        ident = _identity(cfg_b, ids, group_size)
        done = _resume(path, ident)
    todo = [(cfg_b, {r: cfgs[r] for r in groups[g]}, b, g) for b, g in tasks if (b, g) not in done]
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(tasks), initial=len(tasks) - len(todo), unit="task",
                   desc=f"route importance {base.name}")
    results = dict(done)
    try:
        for b, g, res, claimed in run_tasks(_importance_task, todo, n_jobs, backend, scheduler):
            results[(b, g)] = (res, claimed)
            if path is not None:
                _save_task(path, b, g, res, claimed)
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    # sum in task order (exact integers: the same for any n_jobs)
    S, M = {}, {}
    claimed = np.zeros(base.n_routes, dtype=np.int64)
    for key in sorted(results):
        res, cl = results[key]
        claimed += cl
        for rid, (s, m) in res.items():
            rid = int(rid)
            S[rid] = S.get(rid, 0) + s
            M[rid] = M.get(rid, 0) + m
    return _importance_table(base, ids, S, M, claimed, cfg_b.games, notes, alpha, confidence)


def _importance_table(base, ids, S, M, claimed, n, notes, alpha, confidence):
    frame = base.routes_frame().set_index("id")
    rows = []
    for rid in ids:
        i = int(frame.loc[rid, "index"])
        row = {"route": rid, "name": base.route_name(i), "a": frame.loc[rid, "a"],
               "b": frame.loc[rid, "b"], "length": int(frame.loc[rid, "length"]),
               "color": str(frame.loc[rid, "color"]),
               "double": frame.loc[rid, "double"], "games": n,
               "claim_rate": claimed[i] / n, "note": notes.get(rid, "")}
        if rid in S:
            st = paired_stats(n, S[rid], M[rid], confidence)
            for k, m in enumerate(("score", "completion")):
                r = st.iloc[k]
                row.update({f"{m}_base": r.base, f"{m}_removed": r.variant,
                            f"{m}_change": r.difference, f"{m}_low": r.low, f"{m}_high": r.high,
                            f"{m}_p": r.p_value})
        rows.append(row)
    df = pd.DataFrame(rows)
    for m in ("score", "completion"):
        if f"{m}_p" not in df:
            for c in ("base", "removed", "change", "low", "high", "p"):
                df[f"{m}_{c}"] = np.nan
        df[f"{m}_q"] = bh_q(df[f"{m}_p"])
        df[f"{m}_significant"] = df[f"{m}_q"] < alpha
    df["importance"] = -100 * df.completion_change
    df["rank"] = df.importance.rank(ascending=False, method="min").astype("Int64")
    cols = ["rank", "route", "name", "a", "b", "length", "color", "double", "games",
            "claim_rate", "importance"]
    cols += [f"{m}_{c}" for m in ("completion", "score")
             for c in ("base", "removed", "change", "low", "high", "p", "q", "significant")]
    return df[cols + ["note"]].sort_values(["rank", "route"], na_position="last",
                                          ignore_index=True)


def _resume(path: Path, ident: dict) -> dict:
    mfile = path / "manifest.json"
    if mfile.exists():
        old = json.loads(mfile.read_text())
        diff = [k for k in ident if old.get(k) != ident[k]]
        if diff:
            raise ValueError(f"{path} holds a different route-importance run (differs in "
                             f"{', '.join(diff)}); choose another out directory or delete it")
    elif path.exists() and any(path.iterdir()):
        raise ValueError(f"{path} is not empty and holds no route-importance run; choose "
                         f"another out directory")
    path.mkdir(parents=True, exist_ok=True)
    mfile.write_text(json.dumps(ident, indent=2))
    done = {}
    for f in sorted((path / "tasks").glob("task-*.npz")) if (path / "tasks").exists() else ():
        b, g = (int(x) for x in f.stem.split("-")[1:3])
        with np.load(f) as z:
            rids = z["routes"]
            res = {int(r): (z["S"][k], z["M"][k]) for k, r in enumerate(rids)}
            done[(b, g)] = (res, z["claimed"])
    return done


def _save_task(path: Path, b: int, g: int, res: dict, claimed) -> None:
    d = path / "tasks"
    d.mkdir(parents=True, exist_ok=True)
    rids = np.array(sorted(res), dtype=np.int64)
    S = np.stack([res[r][0] for r in rids]) if len(rids) else np.zeros((0, 2, 4), np.int64)
    M = np.stack([res[r][1] for r in rids]) if len(rids) else np.zeros((0, 2, 4, 4), np.int64)
    tmp = d / f"task-{b:06d}-{g:04d}.tmp.npz"
    np.savez(tmp, routes=rids, S=S, M=M, claimed=claimed)
    os.replace(tmp, d / f"task-{b:06d}-{g:04d}.npz")


# ---------------------------------------------------------------------------
# ticket fairness


def ticket_difficulty(board) -> np.ndarray:
    """Per ticket (board order) the length in train spaces of the shortest chain of routes
    joining its cities: the printed boards' own yardstick for ticket points."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import shortest_path

    n = board.n_cities
    a, b = board.route_a.astype(int), board.route_b.astype(int)
    w = board.route_len.astype(float)
    dense = np.full((n, n), np.inf)
    for i, j, x in zip(a, b, w):
        dense[i, j] = dense[j, i] = min(dense[i, j], x)
    dense[~np.isfinite(dense)] = 0
    dist = shortest_path(coo_matrix(dense).tocsr(), method="D", directed=False)
    return dist[board.ticket_a.astype(int), board.ticket_b.astype(int)]


def _ticket_counts_task(cfg, b: int):
    from ttrsim.runner import _play

    first, stop = cfg.batch_range(b)
    res = _play(cfg, first, stop)
    o = np.asarray(res["offers"])
    G, T = stop - first, cfg.board.n_tickets
    kept = o[:, 4].astype(bool)
    cell = (o[kept, 0] - first) * T + o[kept, 2]
    k = np.bincount(cell, minlength=G * T).reshape(G, T).astype(np.int32)
    c = np.bincount(cell, weights=o[kept, 6], minlength=G * T).reshape(G, T).astype(np.int32)
    return b, k, c


def _ticket_counts(cfg, n_jobs, backend, scheduler):
    parts = {b: (k, c) for b, k, c in run_tasks(_ticket_counts_task,
                                                [(cfg, b) for b in range(cfg.n_batches)],
                                                n_jobs, backend, scheduler)}
    K = np.concatenate([parts[b][0] for b in sorted(parts)])
    C = np.concatenate([parts[b][1] for b in sorted(parts)])
    return K, C


def _values(K, C, points, D):
    """Per-ticket completion and value from summed counts (last axis: tickets)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        p = C / K
        v = points * (2 * p - 1) / D
    return p, v


def _spread(v, w, mask):
    """Keep-weighted coefficient of variation of the values over the tickets in ``mask``."""
    v, w = v[..., mask], w[..., mask].astype(float)
    mean = (w * v).sum(-1) / w.sum(-1)
    sd = np.sqrt((w * (v - mean[..., None]) ** 2).sum(-1) / w.sum(-1))
    return sd / mean


@dataclasses.dataclass
class Fairness:
    """The result of :func:`ticket_fairness`.

    ``table``: one row per ticket and round (round 0: the board as given; round k: the
    points suggested after round k - 1) with ``points, difficulty, kept, completion``
    (Wilson interval), ``value`` (expected net ticket points per train space of difficulty,
    bootstrap interval), ``suggested`` points and ``balanceable``. ``spread``: per round
    the coefficient of variation of the value over the balanceable tickets, and over all
    tickets, with bootstrap intervals; and the paired change from round 0. ``boards``: the
    board of each round (``boards[-1]``: the last suggestion, a ``ttrsim.variant``).
    """

    table: pd.DataFrame
    spread: pd.DataFrame
    boards: list
    manifest: dict

    @property
    def suggested(self) -> dict:
        """Suggested points of the last round: ``{ticket id: points}``."""
        last = self.table[self.table["round"] == self.table["round"].max()]
        return dict(zip(last.ticket.astype(int), last.suggested.astype(int)))

    def figure(self):
        from ttrsim.balance_report import plot_fairness

        return plot_fairness(self)


def ticket_fairness(board="usa", players=4, games: int = 20_000, seed: int = 0,
                    n_jobs: int = 1, *, policies=None, rounds: int = 1,
                    min_completion: float = 0.6, max_factor: float = 2.0,
                    batch_size: int | None = None, confidence: float = 0.95,
                    n_resamples: int = 1000, backend: str = "loky",
                    scheduler: str | None = None, max_turns: int = DEFAULT_MAX_TURNS) -> Fairness:
    """Value each ticket, suggest fairer points, and check the suggestion by re-simulating.

    Value of ticket t to the player who keeps it: ``v_t = points_t x (2 p_t - 1) / D_t``,
    the expected net ticket points (won when completed, lost when not) per train space of
    its difficulty ``D_t`` (shortest chain of routes, :func:`ticket_difficulty`), with
    ``p_t`` its completion rate when kept. Fair tickets have equal ``v``. The suggestion
    gives each balanceable ticket (``p_t >= min_completion`` in round 0) the points that put
    it at the keep-weighted mean value ``v*``: ``round(v* D_t / (2 p_t - 1))``, kept
    within ``points / max_factor .. points x max_factor``; other tickets keep their points
    (no points make a ticket that fails about as often as it succeeds a fair one).
    Each of ``rounds`` re-simulates the same seeds with the suggested points and suggests
    again from the new completion rates. Intervals: bootstrap over games (``n_resamples``),
    the same resampled games for every round, so the change of the spread is paired.
    """
    from ttrsim.game import resolve_board
    from ttrsim.variants import variant

    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 0:
        raise ValueError(f"rounds must be a whole number >= 0, got {rounds!r}")
    if not 0.5 < min_completion < 1:
        raise ValueError(f"min_completion must be between 0.5 and 1, got {min_completion!r}")
    if max_factor < 1:
        raise ValueError(f"max_factor must be at least 1, got {max_factor!r}")
    start = time.perf_counter()
    base = resolve_board(board)
    D = ticket_difficulty(base)
    boards, counts = [base], []
    cfg = paired_configs(base, base, players, policies, games, seed, batch_size, max_turns)[0]
    counts.append(_ticket_counts(cfg, n_jobs, backend, scheduler))
    orig = base.ticket_points.astype(float)
    balanceable = None
    suggestions = []
    for r in range(rounds + 1):
        K, C = counts[r]
        pts = boards[r].ticket_points.astype(float)
        p, v = _values(K.sum(0), C.sum(0), pts, D)
        if balanceable is None:
            balanceable = np.isfinite(p) & (p >= min_completion)
        w = K.sum(0)
        target = float((w * v)[balanceable].sum() / w[balanceable].sum())
        with np.errstate(divide="ignore", invalid="ignore"):
            raw = target * D / (2 * p - 1)
        sug = np.where(balanceable, np.clip(np.round(raw), np.ceil(orig / max_factor),
                                            np.floor(orig * max_factor)), pts)
        sug = np.clip(np.nan_to_num(sug, nan=1), 1, 999).astype(int)
        suggestions.append((sug, target))
        if r < rounds:
            changes = {int(t): int(s) for t, s in zip(base.ticket_id, sug)}
            vb = variant(base, ticket_points=changes, name=f"{base.name}.fair{r + 1}")
            boards.append(vb)
            cfg_r = paired_configs(base, vb, players, policies, games, seed, cfg.batch_size,
                                   max_turns)[1]
            counts.append(_ticket_counts(cfg_r, n_jobs, backend, scheduler))

    # bootstrap over games, the same resamples for every round
    rng = np.random.default_rng(seed)
    n = counts[0][0].shape[0]
    alpha = 1 - confidence
    boot_v = [[] for _ in counts]
    boot_s = [[] for _ in counts]
    boot_all = [[] for _ in counts]
    step = max(1, 4_000_000 // n)
    done = 0
    while done < n_resamples:
        m = min(step, n_resamples - done)
        W = rng.multinomial(n, np.full(n, 1 / n), size=m).astype(np.float32)
        for r, (K, C) in enumerate(counts):
            Kb, Cb = W @ K, W @ C
            _, vb = _values(Kb, Cb, boards[r].ticket_points.astype(float), D)
            boot_v[r].append(vb)
            boot_s[r].append(_spread(vb, Kb, balanceable))
            fin = np.isfinite(vb).all(0)
            boot_all[r].append(_spread(np.where(np.isfinite(vb), vb, 0), Kb, fin))
        done += m
    rows, srows = [], []
    s0 = np.concatenate(boot_s[0])
    a0 = np.concatenate(boot_all[0])
    finite_all = None
    for r, (K, C) in enumerate(counts):
        k, c = K.sum(0), C.sum(0)
        pts = boards[r].ticket_points.astype(int)
        p, v = _values(k, c, pts.astype(float), D)
        lo, hi = wilson_interval(c, k, confidence)
        bv = np.concatenate(boot_v[r])
        with np.errstate(invalid="ignore"):
            vlo, vhi = np.nanquantile(bv, [alpha / 2, 1 - alpha / 2], axis=0)
        sug, target = suggestions[r]
        for t in range(base.n_tickets):
            rows.append({"round": r, "ticket": int(base.ticket_id[t]),
                         "name": base.ticket_name(t).rsplit(" (", 1)[0],
                         "points": int(pts[t]), "difficulty": float(D[t]), "kept": int(k[t]),
                         "completion": p[t], "completion_low": lo[t], "completion_high": hi[t],
                         "value": v[t], "value_low": vlo[t], "value_high": vhi[t],
                         "target": target, "suggested": int(sug[t]),
                         "balanceable": bool(balanceable[t])})
        if finite_all is None:
            finite_all = np.isfinite(v)
        s = _spread(v, k, balanceable)
        sa = _spread(np.where(np.isfinite(v), v, 0), k, finite_all)
        bs, ba = np.concatenate(boot_s[r]), np.concatenate(boot_all[r])
        srows.append({"round": r, "board": boards[r].name, "target_value": target,
                      "spread": s, "spread_low": np.quantile(bs, alpha / 2),
                      "spread_high": np.quantile(bs, 1 - alpha / 2),
                      "change": s - _spread(*_first(counts, boards, D, balanceable)),
                      "change_low": np.quantile(bs - s0, alpha / 2),
                      "change_high": np.quantile(bs - s0, 1 - alpha / 2),
                      "spread_all": sa, "spread_all_low": np.quantile(ba, alpha / 2),
                      "spread_all_high": np.quantile(ba, 1 - alpha / 2),
                      "change_all_low": np.quantile(ba - a0, alpha / 2),
                      "change_all_high": np.quantile(ba - a0, 1 - alpha / 2)})
    manifest = {"board": base.name, "board_checksum": base.checksum,
                "players": cfg.n_players, "policies": list(cfg.names), "games": cfg.games,
                "seed": cfg.seed, "rounds": rounds, "min_completion": min_completion,
                "max_factor": max_factor, "n_resamples": n_resamples,
                "confidence": confidence, "balanceable": int(balanceable.sum()),
                "boards": [b.name for b in boards],
                "variant_hashes": [(b.variant or {}).get("hash") for b in boards],
                "wall_seconds": round(time.perf_counter() - start, 3)}
    return Fairness(pd.DataFrame(rows), pd.DataFrame(srows), boards, manifest)


def _first(counts, boards, D, mask):
    K, C = counts[0]
    k = K.sum(0)
    _, v = _values(k, C.sum(0), boards[0].ticket_points.astype(float), D)
    return v, k, mask
