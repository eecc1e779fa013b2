"""Paired comparison of two boards with common random numbers: :func:`compare`.

Both boards play the same games (game ``i`` dealt from the same seed on both sides), and
every metric gets the paired interval of its difference and a Benjamini–Hochberg q-value;
``ttrsim.analysis.studies.paired`` describes the method.
"""
from __future__ import annotations

import dataclasses
import time
from contextlib import closing

import numpy as np
import pandas as pd

from ttrsim.batches import DEFAULT_MAX_TURNS
from ttrsim._validate import check_fraction
from ttrsim.analysis.studies.paired import (align, paired_configs, paired_moments, paired_stats,
                                            play_metrics, sum_moments)
from ttrsim.dispatch import check_workers, progress_bar, run_tasks
from ttrsim.policies import expert_models
from ttrsim.stats import bh_q, fmt_p_text

__all__ = ["Comparison", "compare"]


def _compare_batch(cfg_b, cfg_v, b: int, detail: bool = True):
    first, stop = cfg_b.batch_range(b)
    mb, Yb, Xb = play_metrics(cfg_b, first, stop, detail)
    mv, Yv, Xv = play_metrics(cfg_v, first, stop, detail)
    meta, (Yb, Xb), (Yv, Xv) = align(mb, Yb, Xb, mv, Yv, Xv)
    S, M = paired_moments(Yb, Xb, Yv, Xv)
    return b, meta, S, M


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
            "q": t.q_value.map(fmt_p_text),
            "sig": np.where(t.significant, "*", "")})
        return "\n".join(head) + "\n" + shown.to_string(index=False)


def _num(v) -> str:
    if not np.isfinite(v):
        return "–"
    return f"{v:.1f}" if abs(v) >= 100 else f"{v:.4g}"


def _lineage(board) -> list[str]:
    """The checksums of a board and of every board it was derived from (``ttrsim.variant``)."""
    out = [board.checksum]
    info = getattr(board, "variant", None)
    while info:
        out.append(info["base_checksum"])
        info = info.get("base_variant")
    return out


def check_related(base, variant) -> None:
    """Refuse two boards of which neither is the other or derived from it (nor both from a
    common board): ``compare`` pairs their tickets and routes by id, which only means
    something between a board and its variants."""
    if set(_lineage(base)) & set(_lineage(variant)):
        return
    raise ValueError(f"{variant.name!r} is not {base.name!r} nor a variant of it (no common base "
                     "board): compare pairs tickets and routes by id, which only means something "
                     "between a board and its variants. Make the variant with ttrsim.variant "
                     "(or a variant file), or pass allow_unrelated=True (--allow-unrelated) "
                     "if the ids do correspond")


def compare(base, variant, players=4, policies=None, games: int = 10_000, seed: int = 0,
            n_jobs: int = 1, *, batch_size: int | None = None, alpha: float = 0.05,
            confidence: float = 0.95, crn: bool = True, backend: str = "loky",
            scheduler: str | None = None, progress: bool = False,
            max_turns: int = DEFAULT_MAX_TURNS, allow_unrelated: bool = False) -> Comparison:
    """Play ``games`` games on both boards with common random numbers and compare them.

    ``base``, ``variant``: board names, map files or boards (e.g. from ``ttrsim.variant``).
    ``players``: a player count, or a list of policy specs one per seat; ``policies``: one
    spec for every seat or a list (overrides ``players``' specs). Seats rotate as in
    ``simulate``. ``n_jobs``/``backend``/``scheduler`` as in ``simulate``; the table does
    not depend on them. ``crn=False`` plays the variant with seed ``seed + 1`` (independent
    games, for checking the method). Returns a :class:`Comparison`.

    The two boards must be the same board or variants of it (:func:`check_related`):
    tickets and routes are paired by id. ``allow_unrelated=True`` compares any two boards
    whose ids the caller knows to correspond (e.g. a map file edited by hand).
    """
    alpha = check_fraction("alpha", alpha)
    check_workers(n_jobs, backend, scheduler)
    cfg_b, cfg_v = paired_configs(base, variant, players, policies, games, seed, batch_size,
                                  max_turns, crn)
    if not allow_unrelated:
        check_related(cfg_b.board, cfg_v.board)
    start = time.perf_counter()
    results = {}
    bar = progress_bar(progress, cfg_b.games, desc="compare")
    tasks = [(cfg_b, cfg_v, b) for b in range(cfg_b.n_batches)]
    sizes = [cfg_b.batch_games([b]) for b in range(cfg_b.n_batches)]
    with closing(run_tasks(_compare_batch, tasks, n_jobs, backend, scheduler, bar=bar,
                           sizes=sizes)) as batches:
        for b, meta, S, M in batches:
            results[b] = (meta, S, M)
    meta, S, M = sum_moments(results)
    full = _table(meta, cfg_b.games, S, M, alpha, confidence)
    vinfo = cfg_v.board.variant or {}
    manifest = {
        "base": cfg_b.board.name, "base_checksum": cfg_b.board.checksum,
        "variant": cfg_v.board.name, "variant_checksum": cfg_v.board.checksum,
        "variant_description": vinfo.get("description", cfg_v.board.title),
        "variant_hash": vinfo.get("hash"), "variant_changes": vinfo.get("changes"),
        "players": cfg_b.n_players, "policies": list(cfg_b.names),
        **({"expert_models": models} if (models := expert_models(cfg_b.names)) else {}),
        "games": cfg_b.games,
        "seed": cfg_b.seed, "variant_seed": cfg_v.seed, "common_random_numbers": bool(crn),
        "batch_size": cfg_b.batch_size, "alpha": alpha, "confidence": confidence,
        "allow_unrelated": bool(allow_unrelated),
        "wall_seconds": round(time.perf_counter() - start, 3),
    }
    return Comparison(full, cfg_b.board, cfg_v.board, manifest, alpha)
