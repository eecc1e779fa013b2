"""The verdicts both comparisons under stronger play share (:mod:`.stronger_run` for a
run, :mod:`.stronger_studies` for the balance studies): how a row's conclusion is read
under each play, whether it changed, and how two sides' policies must agree.

``changed`` by the kind of row (``rule``, :func:`finish`):

- ``reference``: a row whose conclusion is on which side of a reference value it lies --
  ticket completion against 1/2 (keeping the ticket adds points on average, or costs
  them), a win share against the fair share 1 / players, a seat's score against the
  others' (0), a station's net value and the paired station effects against 0. Each
  play's verdict is ``above`` (its 95% interval lies above the reference), ``below`` or
  ``unclear`` (the interval holds it); changed = the verdicts differ: the sign of a
  significant effect flips, or an effect significant under one play is not under the other.
- ``top``: a route among the ``top`` most claimed under one play and not under the other.
- ``material``: quantities with no reference (score parts, game length, stations built):
  changed = the difference is significant (q < alpha) and at least ``material`` of
  the base value.
- ``none``: shown for reading only (a seat's mean score: its conclusion is the score
  against the other seats, the row below it).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ttrsim.policies import parse_spec
from ttrsim.stats import bh_q, fmt_p_text

__all__ = ["VALUES", "finish", "verdict", "with_changed", "policy_label", "policy_settings",
           "slot_groups", "policy_differences", "expert_models", "weaker_play", "PLAYER_LEVELS"]

VALUES = ["base", "base_low", "base_high", "strong", "strong_low", "strong_high", "difference",
          "low", "high", "p_value", "q_value", "significant", "rule", "reference",
          "base_verdict", "strong_verdict", "changed", "why"]


def verdict(low, high, ref) -> np.ndarray:
    """``above``/``below`` when the interval lies wholly above/below ``ref``, else
    ``unclear`` (``""`` when a bound or the reference is missing)."""
    low, high, ref = (np.asarray(v, dtype=float) for v in (low, high, ref))
    out = np.where(low > ref, "above", np.where(high < ref, "below", "unclear"))
    return np.where(np.isfinite(ref) & np.isfinite(low) & np.isfinite(high), out, "")


def finish(df: pd.DataFrame, alpha: float, material: float, top: int | None = None) -> pd.DataFrame:
    """Add q-values, significance, verdicts, ``changed`` and ``why`` by each row's rule
    (``top``: the place among the most claimed that ``top`` rows are compared by)."""
    df = df.copy()
    if "reference" not in df.columns:
        df["reference"] = np.nan
    for col in ("base", "base_low", "base_high", "strong", "strong_low", "strong_high",
                "difference", "low", "high", "p_value", "reference"):
        df[col] = pd.to_numeric(df[col], errors="coerce").astype(float)
    df["q_value"] = bh_q(df.p_value)
    df["significant"] = df.q_value < alpha
    df["base_verdict"] = verdict(df.base_low, df.base_high, df.reference)
    df["strong_verdict"] = verdict(df.strong_low, df.strong_high, df.reference)
    ref = df.rule == "reference"
    flip = ref & (df.base_verdict != df.strong_verdict) & (df.base_verdict != "") & (df.strong_verdict != "")
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = (df.difference / df.base.abs()).to_numpy(dtype=float)
    mat = (df.rule == "material") & df.significant & (np.abs(rel) >= material)
    topped = pd.Series(False, index=df.index)
    if top is not None and "base_rank" in df.columns:
        topped = (df.rule == "top") & ((df.base_rank <= top) != (df.strong_rank <= top))
    df["changed"] = flip | mat | topped
    why = pd.Series("", index=df.index, dtype=object)
    why[flip] = [f"{b} {r:.4g} -> {s}" for b, r, s in
                 zip(df.base_verdict[flip], df.reference[flip], df.strong_verdict[flip])]
    why[mat] = [f"{100 * v:+.0f}% (q {fmt_p_text(q)})" for v, q in zip(rel[mat.to_numpy()], df.q_value[mat])]
    if topped.any():
        why[topped] = [f"rank {int(b)} -> {int(s)} (top {top})" for b, s in
                       zip(df.base_rank[topped], df.strong_rank[topped])]
    df["why"] = why
    return df


def with_changed(lines: list[str], changed: pd.DataFrame) -> str:
    """A summary's lines, then its changed rows (if any) as a table."""
    if len(changed):
        lines = [*lines, changed.to_string(index=False, max_colwidth=40)]
    return "\n".join(lines)


# parameters that name which player plays, as the policy's name does, not how it is set:
# `expert:model=whole` is a stronger play of `tickets` as `expert` is
PLAYER_PARAMS = ("model",)


def policy_label(policies) -> str:
    """The players of a run without their settings, e.g. ``tickets``, ``expert`` or
    ``expert:model=whole`` (the parameters that name the player, ``PLAYER_PARAMS``, stay)."""
    def player(spec):
        name = str(spec).partition(":")[0].partition("#")[0]
        try:
            params = parse_spec(spec).params
        except ValueError:
            return name
        named = ",".join(f"{k}={params[k]}" for k in PLAYER_PARAMS if k in params)
        return f"{name}:{named}" if named else name
    return "/".join(dict.fromkeys(player(p) for p in policies))


# How the built-in players rank in the league (docs/league.md: USA at 2 and at 4 players,
# the same order of these levels in both): a higher level beat every lower one. Players of
# one level are not told apart; Python policies have no level.
PLAYER_LEVELS = {"random": 0, "greedy": 1, "rush": 2, "routes": 2, "blocker": 2, "tickets": 3,
                 "expert": 4, "search": 4}


def weaker_play(base_policies, strong_policies) -> str | None:
    """A sentence saying that the "stronger" play is a weaker built-in player than the base
    one, slot by slot (``random`` in place of ``tickets``), or None where no slot's player
    ranks below the base's in :data:`PLAYER_LEVELS`."""
    def name(spec):
        return str(spec).partition(":")[0].partition("#")[0]

    pairs = dict.fromkeys((name(b), name(s)) for b, s in zip(base_policies, strong_policies)
                          if name(b) in PLAYER_LEVELS and name(s) in PLAYER_LEVELS
                          and PLAYER_LEVELS[name(s)] < PLAYER_LEVELS[name(b)])
    if not pairs:
        return None
    swaps = ", ".join(f"{s} in place of {b}" for b, s in pairs)
    return (f"The \"stronger\" play is weaker: {swaps}, a built-in player that ranks below "
            "the one it replaces in the league (docs/league.md). What changes here is what a "
            "weaker play would conclude, not a stronger one.")


def policy_settings(spec: str):
    """A spec's settings (the text after ``:`` when the spec does not parse), without the
    parameters that name the player (``PLAYER_PARAMS``: which model `expert` plays)."""
    try:
        params = parse_spec(spec).params
    except ValueError:
        return str(spec).partition(":")[2]
    return {k: v for k, v in dict(params).items() if k not in PLAYER_PARAMS}


def slot_groups(policies) -> list[int]:
    """Group index of each slot: slots holding the same spec share a group."""
    first = {}
    return [first.setdefault(p, len(first)) for p in policies]


def policy_differences(pb, ps, noun: str = "study") -> list[str]:
    """How two runs' or studies' policies differ in more than their names, slot by slot."""
    pb, ps = list(pb or []), list(ps or [])
    if len(pb) != len(ps):
        return [f"policy count {len(ps)} in the strong {noun}, {len(pb)} in the base {noun}"]
    diff = [f"policy settings of slot {k}: {b!r} in the strong {noun}, {a!r} in the base "
            f"{noun}" for k, (a, b) in enumerate(zip(pb, ps))
            if policy_settings(a) != policy_settings(b)]
    if slot_groups(pb) != slot_groups(ps):
        diff.append(f"policy layout: {ps} in the strong {noun}, {pb} in the base {noun}")
    return diff


def expert_models(manifest) -> dict:
    """The expert model files a run's manifest names (none for None)."""
    return dict((manifest or {}).get("expert_models") or {})
