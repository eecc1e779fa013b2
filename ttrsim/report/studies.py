"""HTML reports of the paired studies: comparison, route importance, ticket fairness.

Each is a page of the report kit (``ttrsim.report.html``): a self-contained
``index.html`` with the figures embedded, plus each figure as PNG and each table as CSV;
the summary of the sections' conclusions (``ttrsim.report.leads``) first, the method and
the manifest last.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ttrsim.plots import plot_comparison, plot_fairness, plot_play_scatter, plot_route_map
from ttrsim.report import leads
from ttrsim.report.html import Section, check_stronger, manifest_table, readable, write_page
from ttrsim.stats import fmt_p_text

__all__ = ["write_comparison_report", "write_route_importance_report", "write_fairness_report"]


MATERIAL = 0.02


def write_comparison_report(comparison, out_dir, title: str | None = None,
                            stronger=None, material: float = MATERIAL) -> Path:
    """HTML report of a :class:`~ttrsim.analysis.compare.Comparison`. ``stronger``,
    optional, is ``ttrsim.analysis.compare_variant(comparison, strong_comparison)``: the
    same comparison under stronger play, which adds the section "Under stronger play".
    ``material``: the practical threshold, a relative change (default 2%): with many games
    tiny differences are significant, so a difference is called material only when it is
    significant and at least this large relative to the base."""
    if not 0 <= material < 1:
        raise ValueError(f"material={material!r}: give a relative change in [0, 1), e.g. 0.02")
    if stronger is not None:
        _check_stronger(comparison, stronger, "compare_variant",
                        ("base_checksum", "variant_checksum"))
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    m = comparison.manifest
    title = title or f"ttrsim comparison: {m['base']} against {m['variant']}"
    sec = Section(out_dir, "method", "Method")
    sec.text(f"Variant: {m['variant_description']} (hash {m['variant_hash']}). Both boards "
             f"played the same {m['games']:,} games (game i dealt from the same seed on both "
             f"sides, seed {m['seed']}), {m['players']} players, policies "
             f"{', '.join(m['policies'])}, seats rotating.")
    sec.text("Each metric is a ratio of per-game sums; the interval is the paired 95% "
             "interval of the difference (delta method on the per-game differences, Student t), "
             f"p-values are adjusted with Benjamini-Hochberg and rows with q < {comparison.alpha} "
             "are marked significant.")
    res = Section(out_dir, "results", "Differences")
    res.figure("comparison", plot_comparison(comparison),
               "Largest differences relative to the base, with paired 95% intervals.")
    table = comparison.sorted_table()
    table = table.assign(material=table.significant & (table.relative.abs() >= material))
    for text in leads.comparison_leads(table, comparison.alpha, material):
        res.lead(text)
    res.table("comparison", table,
              f"Every metric, significant rows first; material: significant and at least "
              f"{material:.0%} relative to the base.", max_rows=60,
              highlight=table.material.to_numpy())
    routes = comparison.table[comparison.table.kind == "route"]
    maps = Section(out_dir, "map", "Route claims")
    vals = {int(k.split(":")[1]): d for k, d in zip(routes.key, routes.difference)
            if np.isfinite(d)}
    removed = {int(r) for r in (m.get("variant_changes") or {}).get("remove_routes", [])}
    maps.figure("claim_change", plot_route_map(comparison.base, vals,
                                               "claim rate, variant minus base",
                                               missing=removed),
                "Change in each route's claim rate (dashed: removed in the variant).")
    w = Section(out_dir, "intervals", "Paired against unpaired intervals")
    iv = comparison.intervals()
    summ = iv.groupby("kind", observed=True).agg(
        metrics=("metric", "size"), paired_half_width_median=("paired_half_width", "median"),
        unpaired_half_width_median=("unpaired_half_width", "median"),
        unpaired_over_paired_median=("unpaired_over_paired", "median")).reset_index()
    w.text("Half-widths of the 95% interval of the difference, paired (the same games on "
           "both sides) against unpaired (the two sides treated as independent samples).")
    w.table("interval_widths", summ, "Median half-widths per kind of metric.")
    sections = [res, maps, w]
    if stronger is not None:
        sections.append(_stronger_section(
            out_dir, stronger, "variant", None, None,
            ["kind", "metric", "base", "base_low", "base_high", "strong", "strong_low",
             "strong_high", "difference", "low", "high", "q_value", "base_verdict",
             "strong_verdict", "why"],
            ["Each row is the variant's effect on a metric (variant - base, its paired "
             "interval) under each play. A conclusion changes when the verdict on the effect "
             "differs (above: the variant raises the metric, below: it lowers it, each at "
             f"its own comparison's q < {stronger.alpha:g}; else unclear)."]))
    about = (f"{m['base']} against {m['variant']} ({m['variant_description']}): the same "
             f"{m['games']:,} games on both boards (seed {m['seed']}), {m['players']} players, "
             f"policies {', '.join(m['policies'])}.")
    return write_page(out_dir, title, sections + [sec, _manifest(out_dir, m)], about=about)


def _manifest(out_dir: Path, m: dict) -> Section:
    """The manifest as a section of its own, the page's last."""
    sec = Section(out_dir, "manifest", "Manifest")
    manifest_table(sec, m)
    return sec


def _check_stronger(study, stronger, what: str,
                    boards: tuple = ("board_checksum",)) -> None:
    """Refuse a comparison whose base study is not the report's."""
    pairs = [(b, b) for b in boards] + [("players", "players"), ("games", "games"),
                                        ("seed", "seed"), ("policies", "base_policies")]
    check_stronger(study.manifest, stronger, pairs, "study", f"{what}(study, strong_study)")


def _stronger_section(out_dir: Path, stronger, name: str, quantity: str | None, reference,
                      columns: list, lead: list[str]) -> Section:
    """The section "Under stronger play" of a study's report (a scatter of ``quantity``
    under both plays unless it is None)."""
    m, t = stronger.manifest, stronger.table
    base, strong = m["base_label"], m["strong_label"]
    if base == strong:
        base, strong = f"{base} (base)", f"{strong} (strong)"
    sec = Section(out_dir, "stronger", "Under stronger play")
    if m.get("weaker"):
        sec.heading = "Under weaker play"
        sec.note(m["weaker"])
    sec.lead(f"Under {strong} in place of {base}, {int(t.changed.sum())} of {len(t)} "
             f"conclusions change; {int(t.significant.sum())} differences are significant at "
             f"q < {stronger.alpha:g} (Benjamini-Hochberg over the rows).")
    sec.text(f"The same study on the same games (seed {m['seed']}) with {strong} in place of "
             f"{base} seat by seat. " + " ".join(lead) + " The two plays are "
             "compared as independent samples: the difference's interval is the normal one "
             "from the two intervals' widths.")
    if m.get("expert_models"):
        sec.text("Expert model files: " + ", ".join(f"{p} ({d})" for p, d in
                                                    m["expert_models"].items()) + ".")
    if quantity is not None:
        sec.figure(f"stronger_{name}", plot_play_scatter(t, base, strong, quantity,
                                                         reference=reference),
                   f"{quantity} under {strong} against {base} (95% intervals); red: the "
                   "conclusion changes.")
    rows = {"importance": "route", "fairness": "ticket", "variant": "metric"}[name]
    sec.table(f"stronger_{name}", t, f"One row per {rows}; the changed ones first, with why. "
              f"A cell 'a → b' reads a under {base}, b under {strong}; Δ: {strong} minus "
              f"{base}, with its 95% interval.", max_rows=40,
              highlight=t.changed.to_numpy(dtype=bool),
              shown=_both_plays(t, columns, base, strong))
    return sec


def _both_plays(t: pd.DataFrame, columns: list, base: str, strong: str) -> pd.DataFrame:
    """A study comparison's table as the page shows it: each pair ``base_X``, ``strong_X``
    in one column ``X`` ("a → b"), the compared value under each play's label with its
    interval folded, the difference as Δ (the CSV keeps every column apart)."""
    out = {}
    for col in columns:
        if col.startswith("strong") or col in ("base_low", "base_high", "low", "high"):
            continue
        if col == "base":
            out.update({base: t.base, f"{base} low": t.base_low, f"{base} high": t.base_high,
                        strong: t.strong, f"{strong} low": t.strong_low,
                        f"{strong} high": t.strong_high})
        elif col == "difference":
            out.update({"Δ": t.difference, "Δ low": t.low, "Δ high": t.high})
        elif col.startswith("base_") and f"strong_{col[5:]}" in columns:
            key = col[5:].replace("_", " ")
            a, b = (readable(t[[c]].rename(columns={c: col[5:]}))[col[5:]]
                    for c in (col, f"strong_{col[5:]}"))
            out[key] = [x if x == y else f"{x} → {y}" for x, y in zip(a, b)]
        else:
            out["q" if col == "q_value" else col] = t[col]
    return pd.DataFrame(out, index=t.index)


def write_route_importance_report(result, out_dir, title: str | None = None,
                                  notes: list[str] = (), stronger=None) -> Path:
    """HTML report of a :func:`~ttrsim.analysis.route_importance` result. ``stronger``,
    optional, is ``ttrsim.analysis.compare_importance(result, strong_result)``: the same
    study under stronger play, which adds the section "Under stronger play"."""
    table, board = result.table, result.board
    if stronger is not None:
        _check_stronger(result, stronger, "compare_importance")
    title = title or f"Route importance: {board.name}, {result.manifest['games']:,} games per route"
    out_dir, sec = _method(out_dir, notes)
    sec.text("Each route is removed in turn; the board without it plays the same games (the "
             "same seeds) as the intact board. Importance = the drop in ticket completion "
             "(completed / kept, percentage points); intervals are paired 95% intervals, "
             "q-values Benjamini-Hochberg over the routes.")
    m = result.manifest
    if m.get("confirm"):
        sec.text(f"The screening values of the top ranks are biased upward: the route ranked "
                 f"first is the best of {len(table)} noisy estimates, so its measured drop is on "
                 f"average larger than its true one. The top {m['confirm']} routes were measured "
                 f"again on fresh games (seed {m['confirm_seed']}, {m['confirm_games']:,} games): "
                 "the confirmed importance, beside the screening value, is the unbiased one.")
    else:
        sec.text(f"The screening values of the top ranks are biased upward: the route ranked "
                 f"first is the best of {len(table)} noisy estimates, so its measured drop is on "
                 "average larger than its true one. Confirm the top routes on fresh games "
                 "(confirm=k, --confirm K) before quoting their effect.")
    res = Section(out_dir, "table", "Routes by importance")
    for text in leads.importance_leads(table):
        res.lead(text)
    confirmed = "confirmed_importance" in table.columns
    if confirmed:
        res.note(result.confirmation_verdict())
    res.table("route_importance", table, "One row per route, the most important first: how "
              "often it is claimed on the intact board; its importance, the drop in ticket "
              "completion when it is removed, in percentage points (pp), with its paired 95% "
              "interval and Benjamini-Hochberg q"
              + ("; confirmed: the top routes measured again on fresh games, and whether that "
                 "agrees with the first ranking" if confirmed else "")
              + "; the change in the mean score per player (points) when it is removed. The "
              "CSV holds every column (completion and score before and after, p-values).",
              max_rows=40, shown=_importance_shown(table))
    fig = Section(out_dir, "map", "Map")
    vals = {int(r): v for r, v in zip(table.route, table.importance) if np.isfinite(v)}
    fig.figure("route_importance_map",
               plot_route_map(board, vals, "importance: drop in ticket completion (points)",
                              title=f"Route importance on {board.name}", cmap="RdBu_r"),
               "Routes coloured by the drop in ticket completion when removed (red: the board "
               "loses most without it).")
    svals = {int(r): v for r, v in zip(table.route, table.score_change) if np.isfinite(v)}
    fig.figure("route_score_map",
               plot_route_map(board, svals, "change in mean score when removed (points)",
                              title=f"Mean score without each route, {board.name}", cmap="RdBu"),
               "Routes coloured by the change in the mean score per player when removed.")
    sections = [res, fig]
    about = (f"{board.name}: each of {len(table)} routes removed in turn, the board without it "
             f"playing the same {m['games']:,} games as the intact board (seed {m['seed']}).")
    if stronger is not None:
        m = stronger.manifest
        sections.append(_stronger_section(
            out_dir, stronger, "importance", "importance (drop in completion, points)", 0.0,
            ["route", "name", "base_rank", "strong_rank", "base", "base_low", "base_high",
             "strong", "strong_low", "strong_high", "difference", "low", "high", "q_value",
             "base_verdict", "strong_verdict", "why"],
            [f"Spearman's rank correlation of the importances: {m['spearman']:.3f} (p "
             f"{fmt_p_text(m['spearman_p'])}). A conclusion changes when the verdict on a route "
             "differs (above: removing it costs ticket completion, below: the board does "
             "better without it, each at the study's own q < "
             f"{stronger.alpha:g}; else unclear), or when it is among the {m['top']} most "
             "important under one play only and the difference is significant."]))
    return write_page(out_dir, title, sections + [sec, _manifest(out_dir, result.manifest)],
                      about=about)


def _importance_shown(table: pd.DataFrame) -> pd.DataFrame:
    """The route-importance table as the page shows it: short readable names, one unit per
    column (percentage points of completion, points of score), intervals folded."""
    cols = {"rank": "rank", "route": "route", "name": "name", "claim_rate": "claim rate",
            "importance": "importance, pp", "importance_low": "importance, pp low",
            "importance_high": "importance, pp high", "confirmed_importance": "confirmed, pp",
            "confirmed_low": "confirmed, pp low", "confirmed_high": "confirmed, pp high",
            "confirmation": "confirmation", "completion_q": "q", "score_change": "score change",
            "score_low": "score change low", "score_high": "score change high", "note": "note"}
    shown = table[[c for c in cols if c in table.columns]]
    if not (shown.note != "").any():
        shown = shown.drop(columns="note")
    return shown.rename(columns=cols)


def write_fairness_report(fairness, out_dir, title: str, notes: list[str] = (),
                          stronger=None) -> Path:
    """HTML report of a :func:`~ttrsim.analysis.ticket_fairness` result. ``stronger``,
    optional, is ``ttrsim.analysis.compare_fairness(fairness, strong_fairness)``: the same
    study under stronger play, which adds the section "Under stronger play"."""
    if stronger is not None:
        _check_stronger(fairness, stronger, "compare_fairness")
    out_dir, sec = _method(out_dir, notes)
    m = fairness.manifest
    sec.text("Value of a ticket to the player who keeps it: points x (2 x completion - 1) / "
             "difficulty, the expected net ticket points per train space of the shortest chain "
             "of routes joining its cities. Fair tickets have equal value. Suggested points put "
             "each ticket completed at least "
             f"{m['min_completion']:.0%} of the time at the keep-weighted mean value (within "
             f"1/{m['max_factor']:g}x..{m['max_factor']:g}x its points); the board is then "
             "played again with the suggested points on the same seeds. Spread = keep-weighted "
             "coefficient of variation of the value over the tickets; 95% intervals from "
             f"{m['n_resamples']} bootstrap resamples of the games, the same resamples for every "
             "round (so the change is paired), centred on the estimate (a resample's spread "
             "carries its own noise on top of the games', so the resampled spreads lie above "
             "it by spread_bias).")
    sp = Section(out_dir, "spread", "Spread before and after")
    for note in (fairness.bias_note(), fairness.unreliable_note()):
        if note:
            sp.note(note)
    s = fairness.spread
    for text in leads.fairness_leads(s):
        sp.lead(text)
    for _, r in s.iterrows():
        if r["round"] == 0:
            continue
        sp.text(f"Round {int(r['round'])}, all tickets: {s.spread_all.iloc[0]:.3f} -> "
                f"{r.spread_all:.3f}, change [{r.change_all_low:+.3f}, "
                f"{r.change_all_high:+.3f}].")
    sp.table("fairness_spread", s, "Spread per round with bootstrap intervals.")
    sp.figure("ticket_fairness", plot_fairness(fairness),
              "Ticket values per round and the spread between tickets.")
    t = fairness.table
    wide = t[t["round"] == 0][["ticket", "name", "difficulty", "balanceable", "points", "kept",
                               "completion", "value", "value_low", "value_high",
                               "suggested"]].reset_index(drop=True)
    last = t[t["round"] == t["round"].max()].reset_index(drop=True)
    if t["round"].max() > 0:
        wide["points_last"] = last.points
        wide["completion_last"] = last.completion
        wide["value_last"] = last.value
        wide["value_last_low"] = last.value_low
        wide["value_last_high"] = last.value_high
    tab = Section(out_dir, "tickets", "Tickets")
    tab.table("fairness_tickets", wide, "Per ticket: as printed, the first suggestion, and the "
              "last round.", max_rows=120)
    tab.table("fairness_rounds", t, "Every round, long form.", max_rows=0)
    sections = [sp, tab]
    about = (f"{m.get('board', fairness.boards[0].name)}, {m['players']} players, "
             f"{m['games']:,} games per round (seed {m['seed']}): ticket values as printed and "
             f"after {int(t['round'].max())} round(s) of suggested points.")
    if stronger is not None:
        lead = [f"{r['label'].capitalize()}: {r.base:.3f} [{r.base_low:.3f}, {r.base_high:.3f}] "
                f"-> {r.strong:.3f} [{r.strong_low:.3f}, {r.strong_high:.3f}]."
                for _, r in stronger.spread.iterrows()]
        lead.append("A conclusion changes when the ticket's value differs significantly and it "
                    "is balanceable under one play only, or the points suggested from the board "
                    f"as given differ by at least {stronger.manifest['material']:.0%} of its "
                    "printed points.")
        sections.append(_stronger_section(
            out_dir, stronger, "fairness", "value (net points per train space)", None,
            ["ticket", "name", "points", "base_completion", "strong_completion",
             "base_balanceable", "strong_balanceable", "base_suggested", "strong_suggested",
             "base", "base_low", "base_high", "strong", "strong_low", "strong_high",
             "difference", "low", "high", "q_value", "why"], lead))
    return write_page(out_dir, title, sections + [sec, _manifest(out_dir, m)], about=about)


def _method(out_dir, notes) -> tuple:
    """The report's folder (made) and its method section, opening with ``notes``."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    sec = Section(out_dir, "method", "Method")
    for n in notes:
        sec.text(n)
    return out_dir, sec
