"""Ticket fairness: value each ticket, suggest fairer points, check them by re-simulating.

The method is in docs/analysis.md and in :func:`ticket_fairness`'s docstring.
"""
from __future__ import annotations

import dataclasses
import time
import warnings
from contextlib import closing
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import shortest_path

from ttrsim._validate import (check_fraction, check_int, check_number, check_out_dir,
                              check_resamples)
from ttrsim.analysis.studies.paired import paired_configs, study_manifest
from ttrsim.batches import DEFAULT_MAX_TURNS, play
from ttrsim.dispatch import check_workers, progress_bar, run_tasks
from ttrsim.maps import resolve_board
from ttrsim.results import (atomic_write, finish_out, mark_done, prepare_out,
                            resumed_batch_size)
from ttrsim.stats import centred_percentile, wilson_interval, z_value
from ttrsim.variants import variant

__all__ = ["Fairness", "ticket_fairness", "ticket_difficulty", "MIN_KEPT", "MAX_BIAS"]

#: A ticket kept fewer times than this in a round has a completion rate (and so suggested
#: points) too uncertain to act on: its rows are flagged ``reliable = False``.
MIN_KEPT = 30
#: The spread's bias from the noise of the completion rates is negligible below this
#: fraction of its standard error (Efron and Tibshirani's rule of thumb); above it
#: :meth:`Fairness.bias_note` warns.
MAX_BIAS = 0.25

# manifest keys that define a ticket-fairness job: a resumed one must match them all (more
# rounds may be asked for: the rounds played are reused)
_IDENTITY = ("kind", "ttrsim_version", "board", "board_checksum", "players", "policies",
             "games", "seed", "batch_size", "max_turns", "min_completion", "max_factor")


def ticket_difficulty(board) -> np.ndarray:
    """Per ticket (board order) the length in train spaces of the shortest chain of routes
    joining its cities: the printed boards' own yardstick for ticket points."""
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
    """Per game and ticket of batch ``b``: times kept and times completed."""
    first, stop = cfg.batch_range(b)
    res = play(cfg, first, stop)
    o = np.asarray(res["offers"])
    G, T = stop - first, cfg.board.n_tickets
    kept = o[:, 4].astype(bool)
    cell = (o[kept, 0] - first) * T + o[kept, 2]
    k = np.bincount(cell, minlength=G * T).reshape(G, T).astype(np.int32)
    c = np.bincount(cell, weights=o[kept, 6], minlength=G * T).reshape(G, T).astype(np.int32)
    return b, k, c


def _task_name(r: int, b: int) -> str:
    return f"{r:03d}-{b:06d}"


def _task_file(path: Path, r: int, b: int) -> Path:
    return path / "tasks" / f"counts-{_task_name(r, b)}.npz"


def _load_counts(path: Path, r: int, b: int):
    """Saved counts of batch ``b`` of round ``r``, or None when unreadable (played again)."""
    try:
        with np.load(_task_file(path, r, b)) as z:
            return z["kept"], z["completed"]
    except Exception:          # missing or damaged: play it again
        return None


def _ticket_counts(cfg, n_jobs, backend, scheduler, r=0, path=None, done=(), progress=False):
    """Kept and completed counts (games, tickets) of every game of ``cfg`` (round ``r``);
    with ``path`` the batches done there are read back and the others saved as they come."""
    parts = {}
    if path is not None:
        for b in range(cfg.n_batches):
            if _task_name(r, b) in done:
                saved = _load_counts(path, r, b)
                if saved is not None:
                    parts[b] = saved
    todo = [b for b in range(cfg.n_batches) if b not in parts]
    bar = progress_bar(progress, cfg.games, cfg.batch_games(parts), desc=f"ticket fairness, round {r}")
    tasks = [(cfg, b) for b in todo]
    with closing(run_tasks(_ticket_counts_task, tasks, n_jobs, backend, scheduler, bar=bar,
                           sizes=[cfg.batch_games([b]) for b in todo])) as batches:
        for b, k, c in batches:
            parts[b] = (k, c)
            if path is not None:
                atomic_write(_task_file(path, r, b), lambda p, k=k, c=c: np.savez(
                    open(p, "wb"), kept=k, completed=c))
                mark_done(path, _task_name(r, b))
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
    """Keep-weighted coefficient of variation of the values over the tickets in ``mask``
    (a ticket nobody kept weighs nothing; NaN when no ticket was kept)."""
    v, w = v[..., mask], w[..., mask].astype(float)
    v = np.where(w > 0, v, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = (w * v).sum(-1) / w.sum(-1)
        sd = np.sqrt((w * (v - mean[..., None]) ** 2).sum(-1) / w.sum(-1))
        return sd / mean


@dataclasses.dataclass
class Fairness:
    """The result of :func:`ticket_fairness`.

    ``table``: one row per ticket and round (round 0: the board as given; round k: the
    points suggested after round k - 1) with ``points, difficulty, kept, completion``
    (Wilson interval), ``value`` (expected net ticket points per train space of difficulty,
    bootstrap interval), ``suggested`` points, ``balanceable`` (the suggestion comes from
    this round's completion rate) and ``reliable`` (kept at least :data:`MIN_KEPT` times).
    ``spread``: per round the coefficient of variation of the value over the tickets
    balanceable in round 0, and over all tickets, with bootstrap intervals centred on the
    estimate (:func:`ttrsim.stats.centred_percentile`); the paired change from round 0;
    ``spread_bias``, how much higher the resampled games' spreads lie (the noise of the
    completion rates adds spread: the spread is biased upwards by up to about this much)
    and ``spread_se`` its standard error; ``unreliable``, the tickets kept too rarely.
    ``boards``: the board of each round (``boards[-1]``: the last suggestion, a
    ``ttrsim.variant``).
    """

    table: pd.DataFrame
    spread: pd.DataFrame
    boards: list
    manifest: dict

    def summary(self) -> str:
        """The result in words, as ``ttrsim ticket-fairness`` prints it: the study, each
        round's spread (and its change from round 0) with intervals, the last round's
        tickets (printed and suggested points) and the notes on bias and rare tickets."""
        m = self.manifest
        lines = [f"ticket fairness on {m['board']}, {m['players']} players, {m['games']:,} "
                 f"games per round, seed {m['seed']}, {m['rounds']} round(s); "
                 f"{m['balanceable']} tickets balanceable"]
        for _, r in self.spread.iterrows():
            lines.append(f"round {int(r['round'])}: spread {r.spread:.3f} [{r.spread_low:.3f}, "
                         f"{r.spread_high:.3f}]" + ("" if r["round"] == 0 else
                         f", change {r.change:+.3f} [{r.change_low:+.3f}, {r.change_high:+.3f}]"))
        last = self.table[self.table["round"] == self.table["round"].max()]
        first = self.table[self.table["round"] == 0].set_index("ticket")
        shown = last.assign(printed=last.ticket.map(first.points))[
            ["ticket", "name", "printed", "points", "completion", "value", "suggested",
             "balanceable", "reliable"]]
        lines.append(shown.to_string(index=False, float_format=lambda x: f"{x:.3f}"))
        lines += [note for note in (self.bias_note(), self.unreliable_note()) if note]
        return "\n".join(lines)

    def unreliable_note(self) -> str:
        """One line naming the tickets kept fewer than :data:`MIN_KEPT` times (their rows
        say ``reliable = False``) and about how many games would do; "" when none was."""
        t = self.table
        rare = t[~t.reliable.astype(bool)]
        if rare.empty:
            return ""
        games = self.manifest["games"]
        fewest = int(rare.kept.min())
        need = (f"about {int(np.ceil(games * MIN_KEPT / fewest)):,} games" if fewest else
                f"more than {games * MIN_KEPT:,} games (some tickets were never kept)")
        rounds = ", ".join(str(int(r)) for r in sorted(rare["round"].unique()))
        return (f"UNRELIABLE: {rare.ticket.nunique()} tickets were kept fewer than {MIN_KEPT} "
                f"times in round(s) {rounds} (reliable = False): their completion rates and "
                f"suggested points are too uncertain to act on; play {need}")

    def bias_note(self) -> str:
        """One line when the spread is biased upwards by more than :data:`MAX_BIAS` of its
        standard error in some round (too few games), with about how many games would do;
        "" otherwise."""
        s = self.spread
        ratio = (s.spread_bias / s.spread_se).to_numpy(dtype=float)
        if not np.any(ratio > MAX_BIAS):
            return ""
        worst = int(np.nanargmax(ratio))
        games = self.manifest["games"]
        # the bias falls as 1 / games, the standard error as 1 / sqrt(games), at best: a
        # later round's spread shrinks with more games too, and its ratio more slowly
        need = float(games * (ratio[worst] / MAX_BIAS) ** 2)
        need = int(float(f"{need:.2g}"))
        return (f"BIASED: at {games:,} games per round the spread is biased upwards: the noise "
                "of each ticket's completion rate adds spread between the tickets (resampled "
                f"games spread {s.spread_bias.iloc[worst]:.3f} more in round "
                f"{int(s['round'].iloc[worst])}, {ratio[worst]:.1f} standard errors); play at "
                f"least about {need:,} games per round to bring the bias under {MAX_BIAS:g} of "
                "the standard error")

    @property
    def suggested(self) -> dict:
        """Suggested points of the last round: ``{ticket id: points}``."""
        last = self.table[self.table["round"] == self.table["round"].max()]
        return dict(zip(last.ticket.astype(int), last.suggested.astype(int)))


def ticket_fairness(board="usa", players=4, games: int = 20_000, seed: int = 0,
                    n_jobs: int = 1, *, policies=None, rounds: int = 1,
                    min_completion: float = 0.6, max_factor: float = 2.0,
                    batch_size: int | None = None, confidence: float = 0.95,
                    n_resamples: int = 1000, backend: str = "loky",
                    scheduler: str | None = None, max_turns: int = DEFAULT_MAX_TURNS,
                    out=None, progress: bool = False) -> Fairness:
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
    again from the new completion rates; a ticket not kept in a round, or completed at most
    half the time in it, keeps its points that round (``balanceable`` is False in that
    round's rows). Suggested points therefore always lie within the bounds above.
    A ticket kept fewer than :data:`MIN_KEPT` times in a round gets ``reliable = False``
    in that round's rows (its completion rate, and so its suggestion, is too uncertain to
    act on: play more games); ``spread.unreliable`` counts them per round.
    Intervals: bootstrap over games (``n_resamples``, at least ``2 / (1 - confidence)``),
    the same resampled games for every round, so the change of the spread is paired; the
    spread's are centred on the estimate (see :class:`Fairness`), and
    :meth:`Fairness.bias_note` warns when the games are too few for the spread.
    ``n_jobs``/``backend``/``scheduler`` as in ``simulate``; the tables do not depend on them.
    """
    rounds = check_int("rounds", rounds, 0)
    check_workers(n_jobs, backend, scheduler)
    check_fraction("min_completion", min_completion, 0.5, 1.0)
    check_fraction("confidence", confidence)
    check_resamples(n_resamples, confidence)
    check_number("max_factor", max_factor, 1.0)
    start = time.perf_counter()
    base = resolve_board(board)
    D = ticket_difficulty(base)
    path = check_out_dir(out)
    batch_size = resumed_batch_size(path, batch_size)
    cfg = paired_configs(base, base, players, policies, games, seed, batch_size, max_turns)[0]
    done = set()
    if path is not None:
        done = prepare_out(path, study_manifest("ticket_fairness", cfg, min_completion=min_completion,
                                                max_factor=max_factor),
                           _IDENTITY, what="ticket-fairness run")
    job = dict(path=path, done=done, progress=progress)
    boards, counts, suggestions = [base], [_ticket_counts(cfg, n_jobs, backend, scheduler, **job)], []
    balanceable = None
    for r in range(rounds + 1):
        sug, target, balanceable, now = _suggest(counts[r], boards[r], base, D, balanceable,
                                                 min_completion, max_factor)
        suggestions.append((sug, target, now))
        if r < rounds:
            changes = {int(t): int(s) for t, s in zip(base.ticket_id, sug)}
            vb = variant(base, ticket_points=changes, name=f"{base.name}.fair{r + 1}")
            boards.append(vb)
            cfg_r = paired_configs(base, vb, players, policies, games, seed, cfg.batch_size,
                                   max_turns)[1]
            counts.append(_ticket_counts(cfg_r, n_jobs, backend, scheduler, r + 1, **job))
    boot = _bootstrap(counts, boards, D, balanceable, n_resamples, seed)
    rows, srows = _tables(base, boards, counts, suggestions, boot, D, balanceable, confidence)
    manifest = study_manifest(
        "ticket_fairness", cfg, rounds=rounds, min_completion=min_completion,
        max_factor=max_factor, n_resamples=n_resamples, confidence=confidence,
        balanceable=int(balanceable.sum()), boards=[b.name for b in boards],
        variant_hashes=[(b.variant or {}).get("hash") for b in boards])
    manifest["wall_seconds"] = round(time.perf_counter() - start, 3)
    if path is not None:
        finish_out(path, manifest)
    return Fairness(pd.DataFrame(rows), pd.DataFrame(srows), boards, manifest)


def _suggest(counts, board, base, D, balanceable, min_completion, max_factor):
    """Suggested points from one round's counts: ``(points, target value, balanceable)``
    (the balanceable tickets are fixed by the first round)."""
    K, C = counts
    pts = board.ticket_points.astype(float)
    orig = base.ticket_points.astype(float)
    p, v = _values(K.sum(0), C.sum(0), pts, D)
    if balanceable is None:
        balanceable = np.isfinite(p) & (p >= min_completion)
    w = K.sum(0)
    # this round's suggestion needs a completion rate above one half (a ticket not kept in
    # this round, or failing as often as not, keeps its points): always within the bounds
    now = balanceable & np.isfinite(p) & (p > 0.5)
    target = float((w * v)[now].sum() / w[now].sum()) if w[now].sum() > 0 else float("nan")
    with np.errstate(divide="ignore", invalid="ignore"):
        raw = np.round(target * D / (2 * p - 1))
    now &= np.isfinite(raw)
    low, high = np.maximum(np.ceil(orig / max_factor), 1), np.floor(orig * max_factor)
    sug = np.where(now, np.clip(np.where(now, raw, 0), low, high), pts).astype(int)
    return sug, target, balanceable, now


def _bootstrap(counts, boards, D, balanceable, n_resamples, seed):
    """Per round the bootstrap replicates (over games, the same resamples for every round)
    of the values, of the spread over the balanceable tickets and over all tickets."""
    rng = np.random.default_rng(seed)
    n = counts[0][0].shape[0]
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
    return ([np.concatenate(x) for x in boot_v], [np.concatenate(x) for x in boot_s],
            [np.concatenate(x) for x in boot_all])


def _tables(base, boards, counts, suggestions, boot, D, balanceable, confidence):
    """The rows of ``Fairness.table`` (per round and ticket) and ``Fairness.spread``."""
    boot_v, boot_s, boot_all = boot
    alpha = 1 - confidence
    rows, srows = [], []
    s0, a0 = boot_s[0], boot_all[0]
    finite_all = None
    for r, (K, C) in enumerate(counts):
        k, c = K.sum(0), C.sum(0)
        pts = boards[r].ticket_points.astype(int)
        p, v = _values(k, c, pts.astype(float), D)
        lo, hi = wilson_interval(c, k, confidence)
        with warnings.catch_warnings():
            # a ticket that no resample kept has no value: a NaN interval, not a warning
            warnings.simplefilter("ignore", RuntimeWarning)
            vlo, vhi = np.nanquantile(boot_v[r], [alpha / 2, 1 - alpha / 2], axis=0)
        sug, target, now = suggestions[r]
        for t in range(base.n_tickets):
            rows.append({"round": r, "ticket": int(base.ticket_id[t]),
                         "name": base.ticket_name(t).rsplit(" (", 1)[0],
                         "points": int(pts[t]), "difficulty": float(D[t]), "kept": int(k[t]),
                         "completion": p[t], "completion_low": lo[t], "completion_high": hi[t],
                         "value": v[t], "value_low": vlo[t], "value_high": vhi[t],
                         "target": target, "suggested": int(sug[t]),
                         "balanceable": bool(now[t]), "reliable": bool(k[t] >= MIN_KEPT)})
        if finite_all is None:
            finite_all = np.isfinite(v)
        s = _spread(v, k, balanceable)
        sa = _spread(np.where(np.isfinite(v), v, 0), k, finite_all)
        if r == 0:
            first, first_all = s, sa
        bs, ba = boot_s[r], boot_all[r]
        # the spreads of resampled games carry the resamples' noise on top of the games':
        # their percentile interval lies above the estimate, so it is centred on it
        row = {"round": r, "board": boards[r].name, "target_value": target}
        for name, est, reps in (("spread", s, bs), ("change", s - first, bs - s0),
                                ("spread_all", sa, ba), ("change_all", sa - first_all, ba - a0)):
            e = centred_percentile(est, reps, confidence)
            row.update({name: e.estimate, f"{name}_low": e.low, f"{name}_high": e.high})
        finite = bs[np.isfinite(bs)]
        row["spread_bias"] = float(np.median(finite) - s) if len(finite) else np.nan
        row["spread_se"] = (row["spread_high"] - row["spread_low"]) / (2 * z_value(confidence))
        row["unreliable"] = int((k < MIN_KEPT).sum())
        srows.append(row)
    return rows, srows

