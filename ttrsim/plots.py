"""Figures for the analysis tables (matplotlib, Agg canvas).

Each function takes the table returned by the matching ``ttrsim.analysis`` function (and
the board where it draws the map) and returns a ``matplotlib.figure.Figure``; nothing is
shown or saved. Figures are created without pyplot, so they work in scripts, servers and
notebooks alike and never accumulate in pyplot's figure registry. Save with
``fig.savefig("x.png")``.
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np
import pandas as pd
from matplotlib import colormaps
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import LineCollection
from matplotlib.colors import Normalize, TwoSlopeNorm
from matplotlib.figure import Figure
from matplotlib.patheffects import withStroke
from matplotlib.text import Text

#: Columns by which analysis tables may be grouped; each group becomes one series.
GROUP_COLUMNS = ("board", "players", "policy", "seat")


def new_figure(ncols: int = 1, width: float = 7.0, height: float = 4.5):
    """An Agg-backed figure with ``ncols`` axes side by side: ``(fig, axes)``."""
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, ncols)
    return fig, axes


def _series(table: pd.DataFrame, exclude=()) -> list[tuple[str | None, pd.DataFrame]]:
    """Split ``table`` into one labelled series per combination of its group columns."""
    cols = [c for c in GROUP_COLUMNS if c in table.columns and c not in exclude]
    if not cols:
        return [(None, table)]
    out = []
    for key, part in table.groupby(cols, observed=True, sort=True, dropna=False):
        out.append((", ".join(f"{c} {_label(v)}" for c, v in zip(cols, key)), part))
    return out


def _label(value) -> str:
    return "all" if pd.isna(value) else str(value)


def _errors(values, low, high) -> np.ndarray:
    """Error-bar lengths below and above each value (0 where the bound is unknown)."""
    values = np.asarray(values, dtype=float)
    below = np.nan_to_num(values - np.asarray(low, dtype=float), nan=0.0)
    above = np.nan_to_num(np.asarray(high, dtype=float) - values, nan=0.0)
    return np.vstack([np.clip(below, 0, None), np.clip(above, 0, None)])


def _bars(ax, categories, series, value: str, horizontal: bool = False,
          low: str | None = None, high: str | None = None) -> None:
    """Grouped bars of ``value`` per category with its interval (columns ``low``/``high``,
    by default ``<value>_low``/``<value>_high``).

    ``series`` is a list of ``(label, table)``; each table is indexed by category.
    """
    low, high = low or f"{value}_low", high or f"{value}_high"
    positions = np.arange(len(categories))
    width = 0.8 / max(1, len(series))
    for i, (label, part) in enumerate(series):
        part = part.reindex(categories)
        offset = positions - 0.4 + width * (i + 0.5)
        err = _errors(part[value], part[low], part[high])
        draw = ax.barh if horizontal else ax.bar
        draw(offset, part[value], width, label=label, capsize=2,
             **({"xerr": err} if horizontal else {"yerr": err}))
    ticks = ax.set_yticks if horizontal else ax.set_xticks
    ticks(positions, [str(c) for c in categories])
    if len(series) > 1:
        ax.legend()


def plot_ticket_completion(table: pd.DataFrame, title: str | None = None) -> Figure:
    """Completion rate of each ticket with its Wilson interval (``ticket_completion``)."""
    labels = table["name"] if "name" in table.columns else table.ticket.astype(str)
    table = table.assign(label=labels.astype(str))
    categories = list(dict.fromkeys(table.sort_values("points").label))
    series = [(lab, part.set_index("label")) for lab, part in _series(table)]
    fig, ax = new_figure(height=max(3.0, 0.28 * len(categories) * max(1, len(series) ** 0.5) + 1.2))
    _bars(ax, categories, series, "completion_rate", horizontal=True)
    ax.set_xlim(0, 1)
    ax.set_xlabel("completion rate (share of kept tickets)")
    ax.set_ylabel("ticket (by printed points)")
    ax.set_title(title or "Ticket completion rate with confidence interval")
    return fig


def plot_ticket_balance(table: pd.DataFrame, title: str | None = None, label_top: int = 5) -> Figure:
    """Expected points in play against printed points (``ticket_balance``).

    Tickets far below the diagonal are worth much less than printed; the ``label_top``
    best-ranked tickets (``rank``: by the lower end of the gap's interval) are named.
    """
    fig, ax = new_figure()
    for label, part in _series(table):
        err = _errors(part.expected_points, part.expected_points_low, part.expected_points_high)
        ax.errorbar(part.points, part.expected_points, yerr=err, fmt="o", capsize=2,
                    label=label or "ticket")
    # each ticket named once (a table split by policy holds it once per policy)
    order = ("rank", True) if "rank" in table.columns else ("abs_gap", False)
    top = (table.dropna(subset=[order[0]]).sort_values(order[0], ascending=order[1], kind="stable")
           .drop_duplicates("ticket").head(label_top))
    for k, (_, r) in enumerate(top.iterrows()):
        text = r["name"] if "name" in table.columns else f"ticket {r.ticket}"
        # Staggered so that labels of tickets with similar values stay readable.
        ax.annotate(str(text), (r.points, r.expected_points), textcoords="offset points",
                    xytext=(-8, 12 + 11 * k), ha="right", fontsize=8,
                    arrowprops={"arrowstyle": "-", "color": "gray", "lw": 0.5})
    hi = float(np.nanmax(table.points)) if len(table) else 1.0
    ax.plot([0, hi], [0, hi], "--", color="gray", label="printed value")
    ax.plot([0, hi], [0, -hi], ":", color="gray", label="never completed")
    ax.set_xlabel("printed value (points)")
    ax.set_ylabel("expected points when kept (points)")
    ax.set_title(title or "Ticket balance: value in play vs printed value")
    ax.legend()
    return fig


def plot_tunnel_odds(exact: pd.DataFrame, observed: pd.DataFrame | None = None,
                     title: str | None = None) -> Figure:
    """Exact extra-card distribution (``tunnel_odds``) with, optionally, the observed
    shares and their Wilson intervals (``tunnel_extra_distribution`` with ``by=()``)."""
    fig, ax = new_figure()
    x = exact.extra.to_numpy()
    ax.bar(x - 0.2, exact.probability, 0.4, label="exact (hypergeometric)")
    if observed is not None:
        err = _errors(observed.share, observed.share_low, observed.share_high)
        n = int(observed.attempts.max()) if len(observed) else 0
        ax.bar(observed.extra + 0.2, observed.share, 0.4, yerr=err, capsize=3,
               label=f"observed ({n} attempts)")
    ax.set_xticks(x, [str(k) for k in x])
    ax.set_xlabel("extra cards asked (cards)")
    ax.set_ylabel("probability")
    expected = exact.attrs.get("expected")
    suffix = f" (expected {expected:.2f} cards)" if expected is not None else ""
    ax.set_title(title or f"Tunnel extra cards{suffix}")
    ax.legend()
    return fig


def plot_station_value(value: pd.DataFrame, title: str | None = None) -> Figure:
    """Paired station value (``station_value``): score difference per game by player
    count, and net and gross points per station against the bonus given up. The pooled
    group ("all") is drawn only when there are several player counts."""
    # "all" pools the player counts; with a single player count it is that same group
    if value.players.dropna().nunique() == 1:
        value = value[value.players.notna()]
    value = value.assign(group=value.players.map(lambda p: "all" if pd.isna(p) else f"{p} players"))
    categories = list(dict.fromkeys(value.sort_values("players", na_position="first").group))
    ci = {"low": "low", "high": "high"}
    fig, (left, right) = new_figure(ncols=2, width=10)
    diff = value[value.metric == "score_diff"]
    series = [(f"seat {_label(s)}", part.set_index("group"))
              for s, part in diff.groupby("seat", dropna=False, sort=True)]
    _bars(left, categories, series, "estimate", **ci)
    left.axhline(0, color="gray", lw=0.8)
    left.set_xlabel("player count")
    left.set_ylabel("score with - without stations (points per game)")
    left.set_title("Score difference (paired)")
    # Per-station values of all treated seats together (the only seat when there is one).
    pooled = value[value.seat.isna()] if value.seat.isna().any() else value
    per_station = [(name, pooled[pooled.metric == metric].set_index("group"))
                   for name, metric in (("net", "points_per_station"), ("gross", "gross_points_per_station"))]
    _bars(right, categories, per_station, "estimate", **ci)
    bonus = pooled[pooled.metric == "bonus_per_station"].estimate.dropna()
    if len(bonus):
        right.axhline(float(bonus.iloc[0]), ls="--", color="gray", label="bonus given up")
        right.legend()
    right.axhline(0, color="gray", lw=0.8)
    right.set_xlabel("player count")
    right.set_ylabel("points per station built (points)")
    right.set_title("Value of one station")
    fig.suptitle(title or "Station value with bootstrap intervals")
    return fig


def _double_offsets(a, b, spacing: float) -> np.ndarray:
    """Perpendicular shift of each route so that parallel routes between the same two
    cities are drawn side by side, centred on the line between the cities."""
    pairs = defaultdict(list)
    for i, (x, y) in enumerate(zip(a, b)):
        pairs[(min(x, y), max(x, y))].append(i)
    shift = np.zeros(len(a))
    for members in pairs.values():
        for k, i in enumerate(members):
            shift[i] = (k - (len(members) - 1) / 2) * spacing
    return shift


def _route_segments(board) -> np.ndarray:
    """Each route as a segment (routes, 2 ends, xy) between its cities' coordinates, the
    routes between the same two cities side by side."""
    coords = np.asarray(board.coords, dtype=float)
    a, b = np.asarray(board.route_a), np.asarray(board.route_b)
    extent = float(np.ptp(coords, axis=0).max()) or 1.0
    shift = _double_offsets(a, b, 0.012 * extent)
    start, end = coords[a], coords[b]
    direction = end - start
    normal = np.column_stack([-direction[:, 1], direction[:, 0]])
    normal /= np.maximum(np.linalg.norm(normal, axis=1, keepdims=True), 1e-12)
    # Orient normals consistently (from the lower city index) so halves do not overlap.
    normal *= np.where(a <= b, 1.0, -1.0)[:, None]
    return np.stack([start + normal * shift[:, None], end + normal * shift[:, None]], axis=1)


# Where a city's name may go: offsets from its dot in points with their cost, the
# preferred first (up and to the right, the other corners, the sides; then farther out,
# each ring costing more than crossing a couple of route lines: a name far from its dot
# misleads more than one drawn over a line, on its white halo).
_LABEL_OFFSETS = [((dx * r, dy * r), 10 * ring + k) for ring, r in enumerate((3.0, 6.5, 11.0))
                  for k, (dx, dy) in enumerate(((1, 1), (1, -1), (-1, 1), (-1, -1), (1.4, 0),
                                                (-1.4, 0), (0, 1.4), (0, -1.4)))]
# the cost of a label's place beside its offset's: overlapped area (px², with other names
# and dots, and outside the axes) and route lines crossed
_COST_OVERLAP, _COST_OUTSIDE, _COST_CROSSING = 1000.0, 100.0, 4.0


def _cities(fig, ax, board, size: float, segments) -> None:
    """The board's cities as named dots, each name placed where it overlaps no other
    name and no dot. Call it once the figure is otherwise complete: the places are
    found in the figure's final layout, which the names are kept out of."""
    coords = np.asarray(board.coords, dtype=float)
    ax.scatter(coords[:, 0], coords[:, 1], s=size, color="black", zorder=2)
    fig.draw_without_rendering()    # the final layout and aspect: display coordinates hold
    labels = [ax.annotate(str(name), (x, y), textcoords="offset points", xytext=(3, 3),
                          fontsize=7, zorder=3, ha="left", va="bottom",
                          path_effects=[withStroke(linewidth=2, foreground="white")])
              for name, (x, y) in zip(board.cities, coords)]
    for label in labels:            # the layout must not move when the names do
        label.set_in_layout(False)
    _place_labels(fig, ax, labels, coords, size, segments)


def _place_labels(fig, ax, labels, xy, size: float, segments) -> None:
    """Greedy label placement (matplotlib has none): the names of crowded cities first,
    each at the offset of ``_LABEL_OFFSETS`` whose box overlaps least with the names
    placed so far, the dots and the outside of the axes, then crosses fewest route
    ``segments`` (data coordinates) and lies nearest its dot. A name's box is measured
    once and moved arithmetically (display pixels, padded by one)."""
    renderer = fig.canvas.get_renderer()
    px = fig.dpi / 72                                   # pixels per point
    pts = ax.transData.transform(xy)
    lines = ax.transData.transform(np.asarray(segments, float).reshape(-1, 2)).reshape(-1, 2, 2)
    r = np.sqrt(size) / 2 * px + 1
    dots = np.column_stack([pts - r, pts + r])         # x0, y0, x1, y1
    frame = np.array([ax.bbox.x0, ax.bbox.y0, ax.bbox.x1, ax.bbox.y1])
    offsets = np.array([o for o, _ in _LABEL_OFFSETS]) * px
    ranks = np.array([k for _, k in _LABEL_OFFSETS], dtype=float)
    # where each offset puts the box's lower left corner, per unit of width and height
    shift = -1.0 * (offsets < 0) - 0.5 * (offsets == 0)
    near = np.hypot(*(pts[:, None, :] - pts[None, :, :]).transpose(2, 0, 1)) < 40 * px
    placed = np.empty((0, 4))
    for i in np.argsort(-near.sum(axis=1), kind="stable"):
        extent = Text.get_window_extent(labels[i], renderer)
        wh = np.array([extent.width, extent.height])
        low = pts[i] + offsets + shift * wh - 1
        boxes = np.column_stack([low, low + wh + 2])
        area = (wh[0] + 2) * (wh[1] + 2)
        cost = (_COST_OVERLAP * (_overlaps(boxes, placed) + _overlaps(boxes, dots))
                + _COST_OUTSIDE * (area - _overlaps(boxes, frame[None, :]))
                + _COST_CROSSING * np.array([_crossings(b, lines) for b in boxes]) + ranks)
        k = int(np.argmin(cost))                        # the first of equals: the nearest
        dx, dy = _LABEL_OFFSETS[k][0]
        labels[i].set_position((dx, dy))
        labels[i].set_ha("left" if dx > 0 else "right" if dx < 0 else "center")
        labels[i].set_va("bottom" if dy > 0 else "top" if dy < 0 else "center")
        placed = np.vstack([placed, boxes[k]])


def _overlaps(boxes: np.ndarray, others: np.ndarray) -> np.ndarray:
    """The area each of ``boxes`` (x0, y0, x1, y1 rows) shares with ``others``, summed."""
    if not len(others):
        return np.zeros(len(boxes))
    w = (np.minimum(boxes[:, None, 2], others[None, :, 2])
         - np.maximum(boxes[:, None, 0], others[None, :, 0]))
    h = (np.minimum(boxes[:, None, 3], others[None, :, 3])
         - np.maximum(boxes[:, None, 1], others[None, :, 1]))
    return (np.clip(w, 0, None) * np.clip(h, 0, None)).sum(axis=1)


def _crossings(box: np.ndarray, segments: np.ndarray) -> int:
    """How many ``segments`` (n, 2 ends, xy) pass through ``box`` (Liang-Barsky clipping)."""
    if not len(segments):
        return 0
    start, d = segments[:, 0], segments[:, 1] - segments[:, 0]
    t0, t1 = np.zeros(len(d)), np.ones(len(d))
    missed = np.zeros(len(d), dtype=bool)
    for p, q in ((-d[:, 0], start[:, 0] - box[0]), (d[:, 0], box[2] - start[:, 0]),
                 (-d[:, 1], start[:, 1] - box[1]), (d[:, 1], box[3] - start[:, 1])):
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = q / p
        missed |= (p == 0) & (q < 0)
        t0 = np.where(p < 0, np.maximum(t0, ratio), t0)
        t1 = np.where(p > 0, np.minimum(t1, ratio), t1)
    return int(((t0 <= t1) & ~missed).sum())


def plot_route_contention(claims: pd.DataFrame, board, title: str | None = None,
                          y_down: bool = False, cmap: str = "viridis",
                          vmax: float | None = None) -> Figure:
    """Map of the board with each route coloured by its claim rate (``route_claims``).

    Cities are drawn at ``board.coords`` and named; the two halves of a double route are
    drawn slightly apart. ``claims`` must hold one row per route (filter grouped tables
    first). ``y_down=True`` for coordinates whose y axis points down (image pixels).
    The colour scale runs from 0 to ``vmax`` (default: the largest claim rate shown);
    maps meant to be compared (one per policy) must be given the same ``vmax``.
    """
    if claims.route.duplicated().any():
        raise ValueError("one row per route is needed: select one group of the claims table")
    ids = list(np.asarray(board.route_id))
    rate = claims.set_index("route").claim_rate.reindex(ids).to_numpy(dtype=float)
    segments = _route_segments(board)

    fig, ax = new_figure(width=9, height=7)
    if vmax is None:
        vmax = float(np.nanmax(rate)) if np.isfinite(rate).any() else 1.0
    norm = Normalize(0.0, max(1e-9, float(vmax)))
    lines = LineCollection(segments, cmap=colormaps[cmap], norm=norm, linewidths=3, zorder=1)
    lines.set_array(np.nan_to_num(rate, nan=0.0))
    ax.add_collection(lines)
    fig.colorbar(lines, ax=ax, shrink=0.8, label="claim rate (share of games)")
    ax.set_aspect("equal")
    ax.autoscale_view()
    if y_down:
        ax.invert_yaxis()
    ax.set_xlabel("x (map units)")
    ax.set_ylabel("y (map units)")
    ax.set_title(title or f"Route contention on {getattr(board, 'name', 'the board')}")
    _cities(fig, ax, board, 18, segments)
    return fig


def plot_seat_advantage(table: pd.DataFrame, title: str | None = None) -> Figure:
    """Win rate of each seat with its Wilson interval against the fair share
    (``seat_advantage``)."""
    seats = sorted(table.seat.unique())
    series = [(label, part.set_index("seat")) for label, part in _series(table, exclude=("seat",))]
    fig, ax = new_figure()
    _bars(ax, seats, series, "win_rate")
    positions = np.arange(len(seats))
    width = 0.8 / len(series)
    for i, (_, part) in enumerate(series):
        fair = part.reindex(seats).fair_share
        ax.scatter(positions - 0.4 + width * (i + 0.5), fair, marker="_", s=400, color="black",
                   zorder=3, label="fair share" if i == 0 else None)
    ax.legend()
    ax.set_xlabel("seat (0 = first player)")
    ax.set_ylabel("win rate (share of games)")
    ax.set_title(title or "Seat advantage: win rate with confidence interval")
    return fig


def plot_policy_matrix(matrix: pd.DataFrame, title: str | None = None, value: str = "ahead_share",
                       order=None) -> Figure:
    """Heatmap of ``value`` (default: share of games finished ahead) of policy A (rows)
    against policy B (columns), with the values written in the cells
    (``policy_win_matrix``). ``order``: the policies in the order to draw them (default
    alphabetical)."""
    grid = matrix.pivot(index="policy_a", columns="policy_b", values=value)
    names = list(order) if order is not None else sorted(set(grid.index) | set(grid.columns))
    grid = grid.reindex(index=names, columns=names)
    fig, ax = new_figure(width=max(4.5, 1.1 * len(names) + 2.5), height=max(3.5, 0.9 * len(names) + 1.5))
    image = ax.imshow(grid.to_numpy(dtype=float), cmap="RdBu", vmin=0, vmax=1)
    for i in range(len(names)):
        for j in range(len(names)):
            v = grid.iat[i, j]
            ax.text(j, i, "–" if pd.isna(v) else f"{v:.2f}", ha="center", va="center",
                    color="black" if pd.isna(v) or 0.25 < v < 0.75 else "white")
    ax.set_xticks(range(len(names)), names, rotation=30, ha="right")
    ax.set_yticks(range(len(names)), names)
    ax.set_xlabel("policy B (opponent)")
    ax.set_ylabel("policy A")
    fig.colorbar(image, ax=ax, label="share of games A finishes ahead of B")
    ax.set_title(title or "Policy win matrix")
    return fig


def plot_score_distribution(table: pd.DataFrame, title: str | None = None) -> Figure:
    """Score distribution per group (``score_distribution``): boxes from the quartiles,
    whiskers at the 5th and 95th percentiles, the mean as a marker. Summary runs, which
    keep no quantiles, show the mean with its interval instead (and say so). Tick labels
    are the group values (``tickets``), the axis names the group column."""
    series = _series(table)
    cols = [c for c in GROUP_COLUMNS if c in table.columns]
    # plain tick labels: the group's values ("tickets"), named once on the axis
    labels = ["all" if label is None else ", ".join(_label(v) for v in part.iloc[0][cols])
              for label, part in series]
    fig, ax = new_figure()
    needed = ["q05", "q25", "q50", "q75", "q95"]
    if all(c in table.columns for c in needed) and table[needed].notna().all().all():
        stats = [{"label": lab, "whislo": r.q05, "q1": r.q25, "med": r.q50, "q3": r.q75,
                  "whishi": r.q95, "mean": r.score_mean, "fliers": []}
                 for lab, (_, part) in zip(labels, series) for r in [part.iloc[0]]]
        ax.bxp(stats, showmeans=True)
        default = "Score distribution (box: quartiles, whiskers: 5-95%, triangle: mean)"
    else:
        rows = pd.concat([part.iloc[[0]] for _, part in series])
        err = _errors(rows.score_mean, rows.score_mean_low, rows.score_mean_high)
        ax.errorbar(range(1, len(rows) + 1), rows.score_mean, yerr=err, fmt="o", capsize=4)
        ax.set_xticks(range(1, len(rows) + 1), labels)
        ax.set_xlim(0.5, len(rows) + 0.5)
        default = ("Mean score with 95% confidence interval\n"
                   "(summary mode keeps sums only: quantiles need a per-event run)")
    if max((len(s) for s in labels), default=0) > 12:
        ax.tick_params(axis="x", labelrotation=20)
    ax.set_xlabel(", ".join(cols) if cols else "group")
    ax.set_ylabel("final score (points)")
    ax.set_title(title or default)
    return fig


def plot_game_length(table: pd.DataFrame, title: str | None = None) -> Figure:
    """Turns per game and ticket completion rate by player count, with intervals
    (``by_player_count``)."""
    fig, (left, right) = new_figure(ncols=2, width=10)
    players = table.players.to_numpy()
    for ax, value, label in ((left, "turns_mean", "turns per game (turns)"),
                             (right, "completion_rate", "completion rate (share of kept tickets)")):
        err = _errors(table[value], table[f"{value}_low"], table[f"{value}_high"])
        ax.errorbar(players, table[value], yerr=err, fmt="o-", capsize=4)
        ax.set_xticks(players, [str(p) for p in players])
        ax.set_xlabel("player count (players)")
        ax.set_ylabel(label)
    left.set_title("Game length")
    right.set_title("Ticket completion")
    right.set_ylim(0, 1)
    fig.suptitle(title or "By player count, with confidence intervals")
    return fig


# ---------------------------------------------------------------------------
# the paired studies (ttrsim.analysis.studies)


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
                   cmap: str = "coolwarm", diverging: bool = True, missing: set = frozenset(),
                   limits: tuple | None = None):
    """The board with each route coloured by ``values[route id]`` (routes drawn between
    their cities' coordinates, doubles side by side). Routes in ``missing`` are drawn
    dashed in gray; routes without a value light gray. The colour scale spans the values
    shown (symmetric about 0 when ``diverging``) unless ``limits=(low, high)`` is given:
    maps meant to be compared must be given the same limits."""
    ids = [int(r) for r in board.route_id]
    vals = np.array([values.get(r, np.nan) for r in ids], dtype=float)
    seg = _route_segments(board)
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
        if limits is not None:
            lo, hi = map(float, limits)
            if not lo < hi:
                raise ValueError(f"limits must be (low, high) with low < high, got {limits!r}")
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
    ax.set_aspect("equal")
    ax.autoscale_view()
    ax.set_xlabel("x (map units)")
    ax.set_ylabel("y (map units)")
    ax.set_title(title or label)
    _cities(fig, ax, board, 16, seg)
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


def plot_play_scatter(table: pd.DataFrame, base: str, strong: str, quantity: str,
                      title: str | None = None, reference: float | None = None,
                      label_top: int = 6) -> Figure:
    """One measure under two plays against each other (a table of ``compare_play``: its
    ``base``/``strong`` values with their intervals as error bars): points off the diagonal
    changed; rows flagged ``changed`` are red. ``label_top`` rows are named: the changed ones
    first, then the others farthest from the diagonal. ``reference`` draws the value each play's verdict is read against
    (e.g. 1/2 for ticket completion) on both axes."""
    fig, ax = new_figure(width=7, height=6.5)
    t = table[np.isfinite(table.base.astype(float)) & np.isfinite(table.strong.astype(float))]
    for flag, color, name in ((False, "tab:blue", "same conclusion"), (True, "tab:red", "changed")):
        part = t[t.changed.astype(bool) == flag]
        if part.empty:
            continue
        ax.errorbar(part.base, part.strong, xerr=_errors(part.base, part.base_low, part.base_high),
                    yerr=_errors(part.strong, part.strong_low, part.strong_high), fmt="o", ms=4,
                    lw=0.8, capsize=0, color=color, label=name)
    lo = float(np.nanmin(np.r_[t.base_low, t.strong_low, t.base, t.strong])) if len(t) else 0.0
    hi = float(np.nanmax(np.r_[t.base_high, t.strong_high, t.base, t.strong])) if len(t) else 1.0
    pad = 0.03 * (hi - lo or 1.0)
    ax.plot([lo - pad, hi + pad], [lo - pad, hi + pad], "--", color="gray", lw=0.8,
            label="same value")
    if reference is not None and lo - pad <= reference <= hi + pad:
        ax.axvline(reference, color="black", lw=0.6, ls=":")
        ax.axhline(reference, color="black", lw=0.6, ls=":", label=f"reference {reference:g}")
    ax.set_xlim(lo - pad, hi + pad)
    ax.set_ylim(lo - pad, hi + pad)
    # named: the changed rows, then the others farthest from the diagonal
    far = t.assign(_c=t.changed.astype(bool), _d=(t.strong - t.base).abs()).sort_values(
        ["_c", "_d"], ascending=False)
    mid = float(np.nanmean(t.base)) if len(t) else 0.0
    placed = []                  # the labels' boxes so far (display coordinates)
    renderer = fig.canvas.get_renderer()
    for _, r in far.head(label_top).iterrows():
        left = r.base > mid      # labels of points on the right run leftwards, inside the axes
        # with a leader line, below the point (or above it) where it clears the axes'
        # edges and the labels placed before
        for dy in [-12 - 9 * i for i in range(12)] + [12 + 9 * i for i in range(12)]:
            note = ax.annotate(str(r["label"]), (r.base, r.strong), textcoords="offset points",
                               xytext=(-14 if left else 14, dy),
                               ha="right" if left else "left", fontsize=7,
                               color="tab:red" if r["_c"] else "tab:blue",
                               arrowprops={"arrowstyle": "-", "color": "gray", "lw": 0.5})
            # the text's own box (an annotation's box would take in its leader line)
            box = Text.get_window_extent(note, renderer).expanded(1.0, 1.15)
            inside = ax.bbox.contains(box.x0, box.y0) and ax.bbox.contains(box.x1, box.y1)
            if inside and not any(box.overlaps(other) for other in placed):
                break
            note.remove()
        else:                    # no clear place: the first one
            note = ax.annotate(str(r["label"]), (r.base, r.strong), textcoords="offset points",
                               xytext=(-14 if left else 14, -12),
                               ha="right" if left else "left", fontsize=7,
                               color="tab:red" if r["_c"] else "tab:blue",
                               arrowprops={"arrowstyle": "-", "color": "gray", "lw": 0.5})
            box = Text.get_window_extent(note, renderer)
        placed.append(box)
    ax.set_xlabel(f"{quantity}, {base}")
    ax.set_ylabel(f"{quantity}, {strong}")
    ax.set_title(title or f"{quantity}: {strong} against {base} (95% intervals)")
    ax.legend(fontsize=8)
    return fig


def plot_play_bars(table: pd.DataFrame, base: str, strong: str, title: str | None = None,
                   xlabel: str = "points per player and game") -> Figure:
    """Each row of a ``compare_play`` table (e.g. the score parts) under both plays, as
    horizontal bars with their 95% intervals; rows flagged ``changed`` are marked (*)."""
    t = table.iloc[::-1]
    labels = [f"{lab}{' (*)' if c else ''}" for lab, c in zip(t["label"], t.changed.astype(bool))]
    t = t.assign(_label=labels).set_index("_label")
    series = [(base, t[["base", "base_low", "base_high"]].set_axis(["v", "v_low", "v_high"], axis=1)),
              (strong, t[["strong", "strong_low", "strong_high"]].set_axis(["v", "v_low", "v_high"],
                                                                          axis=1))]
    fig, ax = new_figure(width=8, height=max(3.0, 0.45 * len(t) + 1.2))
    _bars(ax, labels, series, "v", horizontal=True)
    ax.set_xlabel(xlabel)
    ax.set_title(title or f"{base} and {strong}, 95% intervals; (*): changed")
    return fig


def plot_league_matrix(league, title: str | None = None) -> Figure:
    """The win-share matrix of a league (``ttrsim.league``) as a heatmap, policies in
    rating order: the share of games the row policy finishes ahead of the column one."""
    m = league.matrix.rename(columns={"policy": "policy_a", "opponent": "policy_b"})
    return plot_policy_matrix(m, title or "League: win share of the row policy against the column",
                              value="win_share", order=list(league.ratings.policy))


def plot_league_ratings(league, title: str | None = None) -> Figure:
    """Each policy's rating in a league (Elo scale, mean 0) with its interval, best at the
    top; an end only the prior bounds (``ratings.set_by_prior``) is drawn open (an arrow
    instead of a cap) and the policy marked *."""
    r = league.ratings.iloc[::-1]
    fig, ax = new_figure(width=7.0, height=max(2.5, 0.45 * len(r) + 1.2))
    y = np.arange(len(r))
    ax.errorbar(r.rating, y, xerr=_errors(r.rating, r.rating_low, r.rating_high), fmt="o")
    ends = r.set_by_prior.to_numpy()
    for end, bound, arrow in (("upper", r.rating_high, ">"), ("lower", r.rating_low, "<")):
        open_end = np.array([e in (f"{end} end", "both ends") for e in ends])
        bound = bound.to_numpy()
        ax.plot(bound[open_end], y[open_end], arrow, color="C0", ms=7)
        ax.plot(bound[~open_end], y[~open_end], "|", color="C0", ms=8)
    ax.axvline(0, color="grey", lw=0.8, ls=":")
    ax.set_yticks(y, [p + (" *" if e else "") for p, e in zip(r.policy, ends)])
    ax.set_xlabel("rating (Elo scale, league mean 0; 400 = 10:1 odds)")
    m = league.manifest
    ax.set_title(title or f"League ratings, {m['board']} {m['players']} players, "
                          f"{league.games_label()} games per "
                          f"{'pairing' if m['players'] == 2 else 'mixture'}")
    return fig


def plot_profile(table: pd.DataFrame, title: str | None = None) -> Figure:
    """A run's game profile (``ttrsim.analysis.profile(run).table``): the score parts (left)
    and the routes claimed by length (right), one bar per group (each policy, the winners)
    with its interval."""
    groups = list(dict.fromkeys(table["group"]))
    fig, axes = new_figure(ncols=2, width=11, height=4.8)
    for ax, section, xlabel in ((axes[0], "score", "points per seat-game"),
                                (axes[1], "routes by length", "routes claimed per seat-game")):
        part = table[table["section"] == section]
        labels = list(dict.fromkeys(part["label"]))[::-1]
        series = [(g, part[part["group"] == g].set_index("label")
                   [["estimate", "low", "high"]].set_axis(["v", "v_low", "v_high"], axis=1))
                  for g in groups]
        _bars(ax, labels, series, "v", horizontal=True)
        ax.set_xlabel(xlabel)
    axes[0].set_title("Score and its parts")
    axes[1].set_title("Routes claimed by length")
    fig.suptitle(title or "Game profile per policy and for the winners (95% intervals)")
    return fig
