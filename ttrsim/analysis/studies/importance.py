"""Route importance: what removing each route changes, on the same games.

Each route is removed in turn (``ttrsim.variant(board, remove_routes=[id])``) and the board
without it plays the same seeds as the intact board (common random numbers, the paired
machinery of ``ttrsim.analysis.studies.paired``). The method is in docs/analysis.md.
"""
from __future__ import annotations

import dataclasses
import time
from contextlib import closing
from pathlib import Path

import numpy as np
import pandas as pd

from ttrsim._validate import check_int, check_out_dir, is_int
from ttrsim.analysis.studies.paired import (align, game_metrics, paired_configs, paired_moments,
                                            paired_stats, play_metrics, study_manifest)
from ttrsim.batches import DEFAULT_MAX_TURNS, play
from ttrsim.dispatch import check_workers, progress_bar, run_tasks
from ttrsim.maps import resolve_board
from ttrsim.results import atomic_write, finish_out, mark_done, prepare_out, resumed_batch_size
from ttrsim.stats import bh_q
from ttrsim.variants import VariantError, variant

__all__ = ["RouteImportance", "route_importance"]

# manifest keys that define a route-importance job: a resumed one must match them all
_IDENTITY = ("kind", "ttrsim_version", "board", "board_checksum", "players", "policies",
             "games", "seed", "batch_size", "max_turns", "routes", "group_size")


@dataclasses.dataclass
class RouteImportance:
    """The result of :func:`route_importance`: ``table`` (one row per route, the most
    important first; columns in the function's docstring), the intact ``board`` and the
    ``manifest`` (board, players, policies, games, seed, routes, versions)."""

    table: pd.DataFrame
    board: object
    manifest: dict

    def confirmation_verdict(self) -> str | None:
        """A sentence for the confirmed routes whose fresh games contradict the first
        ranking (``confirmation`` other than ``confirmed``), or None where every confirmed
        route agrees (or nothing was confirmed)."""
        t = self.table
        if "confirmation" not in t.columns:
            return None
        off = t[(t.confirmation != "") & (t.confirmation != "confirmed")]
        if not len(off):
            return (f"Confirmed on fresh games: each of the top {self.manifest['confirm']} "
                    "routes has the verdict of the first ranking.")
        rows = "; ".join(
            f"route {int(r.route)} {r.name}, ranked {int(r.rank)} by "
            f"{_points(r.importance, r.importance_low, r.importance_high)}, measures "
            f"{_points(r.confirmed_importance, r.confirmed_low, r.confirmed_high)} on fresh "
            f"games ({r.confirmation})" for r in off.itertuples())
        return (f"The confirmation contradicts the first ranking for {len(off)} of the top "
                f"{self.manifest['confirm']} routes: {rows}. The first ranking's top is "
                "biased upward: quote the confirmed values.")

    def __repr__(self) -> str:
        m = self.manifest
        return (f"<RouteImportance {m['board']} {m['players']}p {m['games']} games, "
                f"{len(self.table)} routes>")

    def summary(self, rows: int = 20) -> str:
        """The result in words and its first ``rows`` routes, as ``ttrsim route-importance``
        prints it: the importance with its paired interval (percentage points), the
        confirmation beside it where one was played, else a note that the top is biased."""
        t, m = self.table, self.manifest
        # the interval of the drop, in the importance's units (percentage points)
        shown = t.assign(importance_low=-100 * t.completion_high,
                         importance_high=-100 * t.completion_low)
        cols = ["rank", "route", "name", "claim_rate", "importance", "importance_low",
                "importance_high", "completion_q", "score_change", "note"]
        confirmed = bool(m.get("confirm"))
        if confirmed:
            cols[5:5] = ["confirmed_importance", "confirmed_low", "confirmed_high"]
        lines = [f"route importance on {m['board']}, {m['players']} players, {m['games']:,} "
                 f"games per route, seed {m['seed']}: importance = drop in ticket completion "
                 "(percentage points), with its paired 95% interval",
                 shown[cols].head(rows).to_string(index=False, float_format=lambda x: f"{x:.4g}")]
        if confirmed:
            verdict = self.confirmation_verdict()
            if verdict:
                lines.append(verdict)
        else:
            lines.append("The top ranks' screening values are biased upward (the best of many "
                         "noisy estimates): --confirm K measures the top K again on fresh games.")
        return "\n".join(lines)


def _importance_task(cfg_b, variants: dict, b: int, group: int):
    """Batch ``b`` of the intact board and of each route-removed board of one group."""
    first, stop = cfg_b.batch_range(b)
    res = play(cfg_b, first, stop)
    mb, Yb, Xb = game_metrics(cfg_b.board, cfg_b.names, res, first, detail=False)
    claimed = np.zeros(cfg_b.board.n_routes, dtype=np.int64)
    if group == 0:
        cl = np.asarray(res["claims"])
        np.add.at(claimed, cl[:, 2], 1)
    out = {}
    for rid, cfg_v in variants.items():
        mv, Yv, Xv = play_metrics(cfg_v, first, stop, False)
        meta, (yb, xb), (yv, xv) = align(mb, Yb, Xb, mv, Yv, Xv)
        out[rid] = paired_moments(yb, xb, yv, xv)
    return b, group, out, claimed


def route_importance(board="europe", players=4, games: int = 2000, seed: int = 0,
                     n_jobs: int = 1, *, policies=None, routes=None, batch_size: int | None = None,
                     group_size: int = 12, out=None, backend: str = "loky",
                     scheduler: str | None = None, progress: bool = False,
                     alpha: float = 0.05, confidence: float = 0.95,
                     max_turns: int = DEFAULT_MAX_TURNS, confirm: int = 0,
                     confirm_seed: int | None = None,
                     confirm_games: int | None = None) -> RouteImportance:
    """What removing each route changes, on the same games of the intact board.

    For each route (``routes``: ids, default all) the board without it plays the same
    ``games`` seeds as the intact board. The result's ``table`` has one row per route with
    ``route, name, a, b, length, color, double, claim_rate`` (on the intact board), then
    for ``completion`` (ticket completion, completed / kept) and ``score`` (mean score per
    player): ``<m>_base, <m>_removed, <m>_change, <m>_low, <m>_high, <m>_p, <m>_q`` (paired
    95% interval, p-value and Benjamini–Hochberg q over all routes), ``importance,
    importance_low, importance_high`` (the drop in completion, percentage points) and
    ``rank``. A route that would leave a ticket's cities unconnected says so in ``note``.

    Tasks (a batch of games of the intact board and of ``group_size`` route-removed
    boards) run through joblib (``n_jobs``) or dask (``backend="dask"``); with ``out`` each
    finished task is written there and the same call resumes.

    The top of a screening is biased upward: the route ranked first is the best of many
    noisy estimates, so its measured drop is, on average, larger than its true one.
    ``confirm=k`` re-measures the ``k`` top-ranked routes on fresh games (``confirm_seed``,
    default derived from ``seed``; ``confirm_games``, default ``games``) and adds
    ``confirmed_importance, confirmed_low, confirmed_high`` (percentage points) beside the
    screening value (``NaN`` for the other routes) and ``confirmation`` (the verdicts
    compared, ``_add_confirmed``); with ``out`` it is kept (and resumed) in a subdirectory.
    """
    start = time.perf_counter()
    confirm = check_int("confirm", confirm, 0)
    check_workers(n_jobs, backend, scheduler)
    base = resolve_board(board)
    ids = [int(r) for r in base.route_id] if routes is None else _route_ids(routes, base)
    group_size = check_int("group_size", group_size, 1)
    path = check_out_dir(out)
    batch_size = resumed_batch_size(path, batch_size)
    cfg_b, _ = paired_configs(base, base, players, policies, games, seed, batch_size, max_turns)
    boards, notes = _removed(base, ids)
    cfgs = {rid: paired_configs(base, vb, players, policies, games, seed, cfg_b.batch_size,
                                max_turns)[1] for rid, vb in boards.items()}
    removable = list(cfgs)
    groups = [removable[i:i + group_size] for i in range(0, len(removable), group_size)] or [[]]
    tasks = [(b, g) for b in range(cfg_b.n_batches) for g in range(len(groups))]
    manifest = study_manifest("route_importance", cfg_b, routes=ids, group_size=group_size)
    results = {} if path is None else _resumed(path, manifest, tasks)
    todo = [(cfg_b, {r: cfgs[r] for r in groups[g]}, b, g) for b, g in tasks
            if (b, g) not in results]
    bar = progress_bar(progress, len(tasks), len(tasks) - len(todo), unit="task",
                       desc=f"route importance {base.name}")
    with closing(run_tasks(_importance_task, todo, n_jobs, backend, scheduler, bar=bar)) as done_tasks:
        for b, g, res, claimed in done_tasks:
            results[(b, g)] = (res, claimed)
            if path is not None:
                _save_task(path, b, g, res, claimed)
    S, M, claimed = _summed(results, base.n_routes)
    table = _importance_table(base, ids, S, M, claimed, cfg_b.games, notes, alpha, confidence)
    if confirm:
        top = [int(r) for r in table.dropna(subset=["rank"]).route[:confirm]]
        cseed = confirmation_seed(seed) if confirm_seed is None else check_int(
            "confirm_seed", confirm_seed, 0)
        if cseed == cfg_b.seed:
            raise ValueError("confirm_seed must differ from seed: a confirmation plays fresh games")
        cgames = cfg_b.games if confirm_games is None else confirm_games
        table[["confirmed_importance", "confirmed_low", "confirmed_high"]] = np.nan
        table["confirmation"] = ""
        if top:            # else no route could be removed: nothing to confirm
            again = route_importance(base, players, cgames, cseed, n_jobs, policies=policies,
                                     routes=top, batch_size=batch_size, group_size=group_size,
                                     out=None if path is None else path / _confirm_dir(confirm, cseed, cgames),
                                     backend=backend, scheduler=scheduler, progress=progress,
                                     alpha=alpha, confidence=confidence, max_turns=max_turns)
            _add_confirmed(table, again.table, top)
        manifest.update(confirm=confirm, confirm_seed=cseed, confirm_games=cgames)
    manifest["wall_seconds"] = round(time.perf_counter() - start, 3)
    if path is not None:
        finish_out(path, manifest)
    return RouteImportance(table, base, manifest)


def _add_confirmed(table, confirmation, top) -> None:
    """The confirmation's importance and interval (percentage points) beside the screening
    values of the ``top`` routes, and ``confirmation``: how its verdict (the 95% interval
    above 0: removing the route costs completion; below; or holding 0) reads against the
    screening's."""
    conf = confirmation.set_index("route")
    for col, src in (("confirmed_importance", "importance"), ("confirmed_low", "importance_low"),
                     ("confirmed_high", "importance_high")):
        table[col] = table.route.map(conf[src]).where(table.route.isin(top))
    first = _side(table.importance_low, table.importance_high)
    again = _side(table.confirmed_low, table.confirmed_high)
    words = np.select([first == again, (first != "unclear") & (again == "unclear"),
                       (first == "unclear") & (again != "unclear")],
                      ["confirmed", "not confirmed", "an effect only on fresh games"],
                      "reversed on fresh games")
    table["confirmation"] = np.where(table.route.isin(top) & table.confirmed_importance.notna(),
                                     words, "")


def _side(low, high) -> np.ndarray:
    """``above``/``below`` 0 or ``unclear``, by an interval's bounds."""
    low, high = np.asarray(low, float), np.asarray(high, float)
    return np.where(low > 0, "above", np.where(high < 0, "below", "unclear"))


def _points(v, low, high) -> str:
    return f"{v:.2f} [{low:.2f}, {high:.2f}] pp"


def _removed(base, ids):
    """``({route: board without it}, {route: why it cannot be removed})``."""
    boards, notes = {}, {}
    for rid in ids:
        try:
            boards[rid] = variant(base, remove_routes=[rid])
        except VariantError as exc:
            notes[rid] = str(exc).split(": ", 1)[-1]
    return boards, notes


def _resumed(path, manifest, tasks) -> dict:
    """Open ``path`` (the one resume routine) and read the tasks finished there."""
    done = prepare_out(path, manifest, _IDENTITY, what="route-importance run")
    loaded = {(b, g): _load_task(path, b, g) for b, g in tasks if _task_name(b, g) in done}
    return {key: task for key, task in loaded.items() if task is not None}


def _summed(results: dict, n_routes: int):
    """The tasks' paired sums per route and the claims, summed in task order (exact
    integers: the same for any n_jobs)."""
    S, M = {}, {}
    claimed = np.zeros(n_routes, dtype=np.int64)
    for key in sorted(results):
        res, cl = results[key]
        claimed += cl
        for rid, (s, m) in res.items():
            rid = int(rid)
            S[rid] = S.get(rid, 0) + s
            M[rid] = M.get(rid, 0) + m
    return S, M, claimed


def confirmation_seed(seed: int) -> int:
    """The seed of a confirmation run by default: derived from the screening's, different
    from it and from the seeds near it."""
    return int(np.random.SeedSequence([int(seed), 1]).generate_state(1)[0] % 2**31)


def _confirm_dir(k: int, seed: int, games: int) -> str:
    return f"confirm-top{k}-seed{seed}-games{games}"


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
    # the drop in percentage points, its interval the completion change's, turned round
    df["importance"] = -100 * df.completion_change
    df["importance_low"], df["importance_high"] = -100 * df.completion_high, -100 * df.completion_low
    df["rank"] = df.importance.rank(ascending=False, method="min").astype("Int64")
    cols = ["rank", "route", "name", "a", "b", "length", "color", "double", "games",
            "claim_rate", "importance", "importance_low", "importance_high"]
    cols += [f"{m}_{c}" for m in ("completion", "score")
             for c in ("base", "removed", "change", "low", "high", "p", "q", "significant")]
    return df[cols + ["note"]].sort_values(["rank", "route"], na_position="last",
                                          ignore_index=True)


def _task_name(b: int, g: int) -> str:
    return f"{b:06d}-{g:04d}"


def _task_file(path: Path, b: int, g: int) -> Path:
    return path / "tasks" / f"task-{_task_name(b, g)}.npz"


def _load_task(path: Path, b: int, g: int):
    """A saved task, or None when its file is missing or unreadable (it is played again)."""
    try:
        with np.load(_task_file(path, b, g)) as z:
            res = {int(r): (z["S"][k], z["M"][k]) for k, r in enumerate(z["routes"])}
            return res, z["claimed"]
    except (OSError, ValueError, KeyError):
        return None


def _save_task(path: Path, b: int, g: int, res: dict, claimed) -> None:
    rids = np.array(sorted(res), dtype=np.int64)
    S = np.stack([res[r][0] for r in rids]) if len(rids) else np.zeros((0, 2, 4), np.int64)
    M = np.stack([res[r][1] for r in rids]) if len(rids) else np.zeros((0, 2, 4, 4), np.int64)
    atomic_write(_task_file(path, b, g),
                 lambda p: np.savez(open(p, "wb"), routes=rids, S=S, M=M, claimed=claimed))
    mark_done(path, _task_name(b, g))


def _route_ids(routes, board) -> list[int]:
    """The route ids of a selection, each known and given once (a route given twice would be
    measured twice and counted twice in the Benjamini-Hochberg correction)."""
    if isinstance(routes, (str, bytes)) or not hasattr(routes, "__iter__"):
        raise ValueError(f"routes must be a list of route ids, got {routes!r}")
    ids = list(routes)
    if not ids:
        raise ValueError("routes: no route given; give route ids, or leave routes out "
                         "(None) to remove every route in turn")
    known = {int(x) for x in board.route_id}
    seen = set()
    for r in ids:
        if not is_int(r):
            raise ValueError(f"routes: {r!r} is not a route id (a whole number)")
        if int(r) not in known:
            raise ValueError(f"routes: no route with id {r} on {board.name} (ids "
                             f"{min(known)}..{max(known)})")
        if int(r) in seen:
            raise ValueError(f"routes: route {r} is given twice; give each route once")
        seen.add(int(r))
    return [int(r) for r in ids]
