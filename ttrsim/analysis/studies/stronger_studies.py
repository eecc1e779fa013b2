"""The balance studies beside themselves under stronger play: :func:`compare_importance`,
:func:`compare_fairness` and :func:`compare_variant`.

Each takes two results of one study (route importance, ticket fairness, a board against
a variant) that played the same games with the same settings, the policies differing
only in their names seat by seat, and sets every row's value under the two plays side
by side with the verdicts of :mod:`ttrsim.analysis.studies.verdicts`.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from ttrsim._validate import shown
from ttrsim._version import __version__
from ttrsim.analysis.inputs import manifest_of
from ttrsim.analysis.studies.verdicts import (VALUES, expert_models, finish, policy_differences,
                                              policy_label, weaker_play, with_changed)
from ttrsim.batches import versions
from ttrsim.stats import DEFAULT_CONFIDENCE, fmt_p_text

__all__ = ["StudyComparison", "compare_importance", "compare_fairness", "compare_variant",
           "TOP_IMPORTANT", "MATERIAL_POINTS"]

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
        if m.get("weaker"):
            lines.insert(1, m["weaker"])
        if "spearman" in m:
            lines.append(f"rank correlation (Spearman) {m['spearman']:.3f}, p {fmt_p_text(m['spearman_p'])}")
        if self.spread is not None:
            for _, r in self.spread.iterrows():
                lines.append(f"{r['label']}: {r.base:.3f} [{r.base_low:.3f}, {r.base_high:.3f}] -> "
                             f"{r.strong:.3f} [{r.strong_low:.3f}, {r.strong_high:.3f}]")
        return with_changed(lines, self.changed())


def _check_same_study(base, strong, kind: str, keys: tuple) -> None:
    """Refuse two results of `kind` that did not play the same games with the same study
    settings, or whose policies differ in more than their names (one ValueError naming
    every difference)."""
    m, ms = manifest_of(base), manifest_of(strong)
    for side, mm in (("base", m), ("strong", ms)):
        if mm.get("kind") != kind:
            raise TypeError(f"the {side} study is not a {kind} result (its kind: "
                            f"{mm.get('kind')!r})")
    diff = [f"{k} {shown(ms.get(k))} in the strong study, {shown(m.get(k))} in the base study"
            for k in ("board", "board_checksum", "players", "games", "seed", "max_turns", *keys)
            if m.get(k) != ms.get(k)]
    diff += policy_differences(m.get("policies"), ms.get("policies"))
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
            "base_label": policy_label(m["policies"]), "strong_label": policy_label(ms["policies"]),
            "weaker": weaker_play(m["policies"], ms["policies"]),
            "expert_models": {**expert_models(m), **expert_models(ms)} or None, **fields,
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
    df = finish(df.assign(label=df.name, rule="none", reference=0.0), alpha, 0.0)
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
    df = finish(df.assign(label=df.name, rule="none"), alpha, 0.0)
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
    spread = finish(spread.assign(rule="none"), alpha, 0.0)[["label", *VALUES]]
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
    diff = [f"{k} {shown(ms.get(k))} in the strong study, {shown(m.get(k))} in the base study"
            for k in ("base_checksum", "variant_checksum", "players", "games", "seed",
                      "variant_seed", "common_random_numbers")
            if m.get(k) != ms.get(k)]
    diff += policy_differences(m.get("policies"), ms.get("policies"))
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
    df = finish(df.assign(label=df.metric, rule="none", reference=0.0), alpha, 0.0)
    df[["base_verdict", "strong_verdict"]] = verdicts
    df["changed"] = df.base_verdict != df.strong_verdict
    df["why"] = np.where(df.changed, df.base_verdict + " 0 -> " + df.strong_verdict, "")
    df = df.sort_values("changed", ascending=False, kind="stable", ignore_index=True)
    manifest = {"kind": "variant_comparison", "ttrsim_version": __version__,
                "board": f"{m.get('base')} -> {m.get('variant')}",
                **{k: m.get(k) for k in ("base", "base_checksum", "variant", "variant_checksum",
                                         "variant_hash", "players", "games", "seed")},
                "base_policies": list(m["policies"]), "strong_policies": list(ms["policies"]),
                "base_label": policy_label(m["policies"]), "strong_label": policy_label(ms["policies"]),
                "weaker": weaker_play(m["policies"], ms["policies"]),
                "expert_models": {**expert_models(m), **expert_models(ms)} or None, "alpha": alpha,
                "confidence": confidence, "versions": versions()}
    cols = ["kind", "key", "metric", "label", "base_q", "strong_q", *VALUES]
    return StudyComparison(df[cols], None, manifest, alpha)
