"""Figures and HTML reports of the balance studies (comparison, route importance, fairness).

Figures follow ``ttrsim.plots``: each function returns a ``matplotlib.figure.Figure`` made
without pyplot. Reports follow ``ttrsim.report``: a self-contained ``index.html`` with the
figures embedded, plus each figure as PNG and each table as CSV beside it.
"""
from __future__ import annotations

import html
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib import colormaps
from matplotlib.collections import LineCollection
from matplotlib.colors import Normalize, TwoSlopeNorm

from ttrsim.plots import _double_offsets, new_figure
from ttrsim.report import _STYLE, _Section

__all__ = ["plot_comparison", "plot_route_map", "plot_fairness", "write_comparison_report",
           "write_route_importance_report", "write_fairness_report"]


# ---------------------------------------------------------------------------
# figures


def plot_comparison(comparison, top: int = 25, title: str | None = None):
    """Forest plot: the ``top`` metrics with the largest |t| (significant ones first), as
    the relative difference (variant - base) / |base| with its paired 95% interval."""
    t = comparison.sorted_table().head(top)
    t = t[np.isfinite(t.relative)].iloc[::-1]
    scale = t.base.abs().replace(0, np.nan).to_numpy()
    rel, lo, hi = (100 * t.relative.to_numpy(), 100 * t.low.to_numpy() / scale,
                   100 * t.high.to_numpy() / scale)
    fig, ax = new_figure(width=9, height=max(3.0, 0.28 * len(t) + 1.2))
    y = np.arange(len(t))
    colors = np.where(t.significant, "tab:red", "tab:gray")
    ax.errorbar(rel, y, xerr=np.vstack([np.clip(rel - lo, 0, None), np.clip(hi - rel, 0, None)]),
                fmt="none", ecolor=colors, elinewidth=1.5)
    ax.scatter(rel, y, c=colors, zorder=3, s=18)
    ax.axvline(0, color="black", lw=0.8)
    ax.set_yticks(y, [m[:70] for m in t.metric], fontsize=7)
    ax.set_xlabel("difference relative to the base (%), paired 95% interval")
    m = comparison.manifest
    ax.set_title(title or f"{m['variant_description'][:90]}\n{m['games']:,} paired games; "
                 f"red: q < {comparison.alpha}", fontsize=9)
    return fig


def plot_route_map(board, values: dict, label: str, title: str | None = None,
                   cmap: str = "coolwarm", diverging: bool = True, missing: set = frozenset()):
    """The board with each route coloured by ``values[route id]`` (routes drawn between
    their cities' coordinates, doubles side by side). Routes in ``missing`` are drawn
    dashed in gray; routes without a value light gray."""
    coords = np.asarray(board.coords, dtype=float)
    ids = [int(r) for r in board.route_id]
    a, b = np.asarray(board.route_a), np.asarray(board.route_b)
    vals = np.array([values.get(r, np.nan) for r in ids], dtype=float)
    extent = float(np.ptp(coords, axis=0).max()) or 1.0
    shift = _double_offsets(a, b, 0.012 * extent)
    start, end = coords[a], coords[b]
    d = end - start
    normal = np.column_stack([-d[:, 1], d[:, 0]])
    normal /= np.maximum(np.linalg.norm(normal, axis=1, keepdims=True), 1e-12)
    normal *= np.where(a <= b, 1.0, -1.0)[:, None]
    seg = np.stack([start + normal * shift[:, None], end + normal * shift[:, None]], axis=1)
    fig, ax = new_figure(width=9, height=7)
    finite = np.isfinite(vals)
    gone = np.array([r in missing for r in ids])
    if (~finite & ~gone).any():
        ax.add_collection(LineCollection(seg[~finite & ~gone], colors="#dddddd", linewidths=2,
                                         zorder=0))
    if gone.any():
        ax.add_collection(LineCollection(seg[gone], colors="gray", linewidths=1.5,
                                         linestyles="dashed", zorder=0))
    if finite.any():
        lo, hi = float(np.nanmin(vals)), float(np.nanmax(vals))
        if diverging:
            m = max(abs(lo), abs(hi), 1e-9)
            norm = TwoSlopeNorm(0.0, -m, m)
        else:
            norm = Normalize(lo, hi if hi > lo else lo + 1e-9)
        lines = LineCollection(seg[finite], cmap=colormaps[cmap], norm=norm, linewidths=3.5,
                               zorder=1)
        lines.set_array(vals[finite])
        ax.add_collection(lines)
        fig.colorbar(lines, ax=ax, shrink=0.8, label=label)
    ax.scatter(coords[:, 0], coords[:, 1], s=16, color="black", zorder=2)
    for name, (x, y) in zip(board.cities, coords):
        ax.annotate(str(name), (x, y), textcoords="offset points", xytext=(3, 3), fontsize=7,
                    zorder=3)
    ax.set_aspect("equal")
    ax.autoscale_view()
    ax.set_xlabel("x (map units)")
    ax.set_ylabel("y (map units)")
    ax.set_title(title or label)
    return fig


def plot_fairness(fairness):
    """Left: each ticket's value (expected net ticket points per train space of difficulty)
    per round with its interval, against the round's target. Right: the spread (coefficient
    of variation over the balanceable tickets) per round with its interval."""
    t = fairness.table
    rounds = sorted(t["round"].unique())
    first = t[t["round"] == 0].sort_values("value")
    order = list(first.ticket)
    fig, (left, right) = new_figure(2, width=12, height=max(4.5, 0.2 * len(order) + 1.5))
    for k, r in enumerate(rounds):
        part = t[t["round"] == r].set_index("ticket").loc[order]
        y = np.arange(len(order)) + (k - (len(rounds) - 1) / 2) * 0.25
        v, lo, hi = part.value.to_numpy(), part.value_low.to_numpy(), part.value_high.to_numpy()
        label = "as printed" if r == 0 else f"round {r} points"
        left.errorbar(v, y, xerr=np.vstack([np.clip(v - lo, 0, None), np.clip(hi - v, 0, None)]),
                      fmt="o", ms=3, lw=1, label=label)
    left.axvline(fairness.spread.target_value.iloc[0], color="black", lw=0.8, ls="--",
                 label="target (round 0)")
    names = t[t["round"] == 0].set_index("ticket").loc[order]
    left.set_yticks(np.arange(len(order)),
                    [f"{n}{'' if b else ' (*)'}" for n, b in zip(names.name, names.balanceable)],
                    fontsize=7)
    left.set_xlabel("value: expected net ticket points per train space")
    left.set_title("Ticket value per unit of difficulty\n(*): completion below the "
                   "threshold, points kept", fontsize=9)
    left.legend(fontsize=7)
    s = fairness.spread
    x = np.arange(len(s))
    right.bar(x - 0.2, s.spread, 0.4, yerr=np.vstack([s.spread - s.spread_low,
                                                      s.spread_high - s.spread]),
              capsize=4, label="balanceable tickets")
    right.bar(x + 0.2, s.spread_all, 0.4, yerr=np.vstack([s.spread_all - s.spread_all_low,
                                                          s.spread_all_high - s.spread_all]),
              capsize=4, label="all tickets")
    right.set_xticks(x, ["as printed" if r == 0 else f"round {r}" for r in s["round"]])
    right.set_ylabel("spread of value (coefficient of variation)")
    right.set_title("Spread between tickets, 95% bootstrap intervals", fontsize=9)
    right.legend(fontsize=7)
    return fig


# ---------------------------------------------------------------------------
# reports


def _page(out_dir: Path, title: str, sections: list) -> Path:
    from ttrsim import __version__

    toc = "".join(f'<li><a href="#{s.slug}">{html.escape(s.heading)}</a></li>' for s in sections)
    page = (f"<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
            f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>\n"
            f"<h1>{html.escape(title)}</h1>\n<p class='caption'>Written by ttrsim "
            f"{html.escape(__version__)}.</p>\n<nav><ul>{toc}</ul></nav>\n"
            + "\n".join(s.html() for s in sections) + "\n</body></html>\n")
    index = out_dir / "index.html"
    index.write_text(page, encoding="utf-8")
    return index


def _manifest_table(sec: _Section, manifest: dict, name: str = "manifest") -> None:
    items = pd.DataFrame({"key": list(manifest), "value": [str(v) for v in manifest.values()]})
    sec.table(name, items, "Manifest.", max_rows=100)


def write_comparison_report(comparison, out_dir, title: str | None = None) -> Path:
    """HTML report of a :class:`~ttrsim.analysis.compare.Comparison`."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    m = comparison.manifest
    title = title or f"ttrsim comparison: {m['base']} against {m['variant']}"
    sec = _Section(out_dir, "method", "Method")
    sec.text(f"Variant: {m['variant_description']} (hash {m['variant_hash']}). Both boards "
             f"played the same {m['games']:,} games (game i dealt from the same seed on both "
             f"sides, seed {m['seed']}), {m['players']} players, policies "
             f"{', '.join(m['policies'])}, seats rotating.")
    sec.text("Each metric is a ratio of per-game sums; the interval is the paired 95% "
             "interval of the difference (delta method on the per-game differences, Student t), "
             f"p-values are adjusted with Benjamini-Hochberg and rows with q < {comparison.alpha} "
             "are marked significant.")
    _manifest_table(sec, m)
    res = _Section(out_dir, "results", "Differences")
    res.figure("comparison", plot_comparison(comparison),
               "Largest differences relative to the base, with paired 95% intervals.")
    res.table("comparison", comparison.sorted_table(),
              "Every metric, significant rows first.", max_rows=60)
    routes = comparison.table[comparison.table.kind == "route"]
    maps = _Section(out_dir, "map", "Route claims")
    vals = {int(k.split(":")[1]): d for k, d in zip(routes.key, routes.difference)
            if np.isfinite(d)}
    removed = {int(r) for r in (m.get("variant_changes") or {}).get("remove_routes", [])}
    maps.figure("claim_change", plot_route_map(comparison.base, vals,
                                               "claim rate, variant minus base",
                                               missing=removed),
                "Change in each route's claim rate (dashed: removed in the variant).")
    w = _Section(out_dir, "intervals", "Paired against unpaired intervals")
    iv = comparison.intervals()
    summ = iv.groupby("kind", observed=True).agg(
        metrics=("metric", "size"), paired_half_width_median=("paired_half_width", "median"),
        unpaired_half_width_median=("unpaired_half_width", "median"),
        unpaired_over_paired_median=("unpaired_over_paired", "median")).reset_index()
    w.text("Half-widths of the 95% interval of the difference, paired (the same games on "
           "both sides) against unpaired (the two sides treated as independent samples).")
    w.table("interval_widths", summ, "Median half-widths per kind of metric.")
    return _page(out_dir, title, [sec, res, maps, w])


def write_route_importance_report(table: pd.DataFrame, board, out_dir, title: str,
                                  notes: list[str] = ()) -> Path:
    """HTML report of a :func:`~ttrsim.analysis.route_importance` table."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    sec = _Section(out_dir, "method", "Method")
    for n in notes:
        sec.text(n)
    sec.text("Each route is removed in turn; the board without it plays the same games (the "
             "same seeds) as the intact board. Importance = the drop in ticket completion "
             "(completed / kept, percentage points); intervals are paired 95% intervals, "
             "q-values Benjamini-Hochberg over the routes.")
    res = _Section(out_dir, "table", "Routes by importance")
    res.table("route_importance", table, "One row per route, the most important first.",
              ["rank", "route", "name", "claim_rate", "importance", "completion_change",
               "completion_low", "completion_high", "completion_q", "score_change", "score_low",
               "score_high", "score_q", "note"], max_rows=40)
    fig = _Section(out_dir, "map", "Map")
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
    return _page(out_dir, title, [sec, res, fig])


def write_fairness_report(fairness, out_dir, title: str, notes: list[str] = ()) -> Path:
    """HTML report of a :func:`~ttrsim.analysis.ticket_fairness` result."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    m = fairness.manifest
    sec = _Section(out_dir, "method", "Method")
    for n in notes:
        sec.text(n)
    sec.text("Value of a ticket to the player who keeps it: points x (2 x completion - 1) / "
             "difficulty, the expected net ticket points per train space of the shortest chain "
             "of routes joining its cities. Fair tickets have equal value. Suggested points put "
             "each ticket completed at least "
             f"{m['min_completion']:.0%} of the time at the keep-weighted mean value (within "
             f"1/{m['max_factor']:g}x..{m['max_factor']:g}x its points); the board is then "
             "played again with the suggested points on the same seeds. Spread = keep-weighted "
             "coefficient of variation of the value over the tickets; 95% intervals from "
             f"{m['n_resamples']} bootstrap resamples of the games, the same resamples for every "
             "round (so the change is paired).")
    _manifest_table(sec, m)
    sp = _Section(out_dir, "spread", "Spread before and after")
    s = fairness.spread
    for _, r in s.iterrows():
        if r["round"] == 0:
            continue
        sp.text(f"Round {int(r['round'])}: spread {s.spread.iloc[0]:.3f} "
                f"[{s.spread_low.iloc[0]:.3f}, {s.spread_high.iloc[0]:.3f}] as printed -> "
                f"{r.spread:.3f} [{r.spread_low:.3f}, {r.spread_high:.3f}]; change "
                f"{r.change:+.3f} [{r.change_low:+.3f}, {r.change_high:+.3f}] (balanceable "
                f"tickets). All tickets: {s.spread_all.iloc[0]:.3f} -> {r.spread_all:.3f}, "
                f"change [{r.change_all_low:+.3f}, {r.change_all_high:+.3f}].")
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
    tab = _Section(out_dir, "tickets", "Tickets")
    tab.table("fairness_tickets", wide, "Per ticket: as printed, the first suggestion, and the "
              "last round.", max_rows=120)
    tab.table("fairness_rounds", t, "Every round, long form.", max_rows=0)
    return _page(out_dir, title, [sec, sp, tab])
