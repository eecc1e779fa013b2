"""Self-contained HTML report of a run.

``write_report(run, out_dir)`` writes ``out_dir/index.html`` with every figure embedded
as a base64 PNG and every table as HTML, plus each figure as a PNG file and each table
as a CSV file beside it. It works for per-event and summary-mode runs: a section whose
tables are absent is kept with a note saying why it was skipped.
"""
from __future__ import annotations

import base64
import html
import io
from pathlib import Path

import numpy as np
import pandas as pd

from ttrsim import analysis as an
from ttrsim import plots
from ttrsim.analysis._tables import manifest_of, source

DPI = 110
MAX_ROWS = 30


class Skip(Exception):
    """A report section cannot be produced from this run; the message says why."""


def _fmt(value) -> str:
    if isinstance(value, (float, np.floating)):
        if np.isnan(value):
            return "–"
        return f"{value:.1f}" if abs(value) >= 100 else f"{value:.3g}"
    return str(value)


class _Section:
    """Accumulates the HTML of one report section and writes its files."""

    def __init__(self, out_dir: Path, slug: str, heading: str):
        self.out_dir, self.slug, self.heading = out_dir, slug, heading
        self.parts: list[str] = []

    def text(self, text: str) -> None:
        self.parts.append(f"<p>{html.escape(text)}</p>")

    def figure(self, name: str, fig, caption: str) -> None:
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=DPI)
        png = buffer.getvalue()
        path = self.out_dir / f"{name}.png"
        path.write_bytes(png)
        data = base64.b64encode(png).decode("ascii")
        self.parts.append(
            f'<figure><img alt="{html.escape(caption)}" src="data:image/png;base64,{data}">'
            f"<figcaption>{html.escape(caption)} ({path.name})</figcaption></figure>"
        )

    def table(self, name: str, df: pd.DataFrame, caption: str, columns=None, max_rows: int = MAX_ROWS) -> None:
        path = self.out_dir / f"{name}.csv"
        df.to_csv(path, index=False)
        shown = df[[c for c in columns if c in df.columns]] if columns else df
        if len(shown) > max_rows:
            note = f" Showing the first {max_rows} of {len(shown)} rows; all rows are in {path.name}."
            shown = shown.head(max_rows)
        else:
            note = f" Full table: {path.name}."
        body = shown.to_html(index=False, border=0, classes="data", na_rep="–", float_format=_fmt)
        self.parts.append(f"<p class='caption'>{html.escape(caption + note)}</p>{body}")

    def html(self) -> str:
        return f'<section id="{self.slug}"><h2>{html.escape(self.heading)}</h2>\n' + "\n".join(self.parts) + "</section>"


def _nonempty(df: pd.DataFrame, what: str) -> pd.DataFrame:
    if df is None or df.empty:
        raise Skip(f"the run holds no {what}")
    return df


def _manifest_value(manifest: dict, *names, default="unknown"):
    for name in names:
        if manifest.get(name) is not None:
            return manifest[name]
    return default


def _is_summary(run) -> bool:
    return getattr(run, "games", None) is None and getattr(run, "seat_summary", None) is not None


# ----------------------------------------------------------------------------- sections

def _methods(sec: _Section, run, ctx) -> None:
    m = ctx["manifest"]
    board = _manifest_value(m, "board")
    if isinstance(board, dict):
        board = board.get("name", board)
    policies = _manifest_value(m, "policies")
    if isinstance(policies, (list, tuple)):
        policies = ", ".join(map(str, policies))
    summary = m.get("summary", _is_summary(run))
    mode = _manifest_value(m, "mode", default="summary" if summary else "per-event")
    rotate = _manifest_value(m, "rotate", "seat_rotation", default=None)
    seating = {True: " (seated in rotation)", False: " (one per seat, from seat 0)"}.get(rotate, "")
    sec.text(
        f"Board {board} (checksum {_manifest_value(m, 'board_checksum', 'checksum')}); "
        f"policies {policies}{seating}; {_manifest_value(m, 'games')} games from seed "
        f"{_manifest_value(m, 'seed')}, batch size {_manifest_value(m, 'batch_size')}, {mode} mode; "
        f"simulated with ttrsim {_manifest_value(m, 'ttrsim_version', 'version')}."
    )
    sec.text(
        "Intervals are 95% confidence intervals: Wilson score intervals for rates (shares of "
        "games, tickets or attempts); percentile bootstrap intervals over games (2000 resamples, "
        "fixed seed) for means of per-event tables; normal intervals from sums and sums of "
        "squares for means of summary tables. Tunnel odds are exact hypergeometric probabilities."
    )
    if m:
        items = pd.DataFrame({"key": list(m), "value": [str(v) for v in m.values()]})
        sec.table("manifest", items, "Run manifest.")


def _seats(sec: _Section, run, ctx) -> None:
    table = an.seat_advantage(run, seed=ctx["seed"])
    sec.table("seat_advantage", table, "Win rate and score difference (seat minus the mean of the others) per seat.",
              ["players", "seat", "games", "win_rate", "win_rate_low", "win_rate_high", "fair_share",
               "score_mean", "score_diff", "score_diff_low", "score_diff_high"])
    sec.figure("seat_advantage", plots.plot_seat_advantage(table), "Win rate per seat against the fair share 1 / players.")


def _policies(sec: _Section, run, ctx) -> None:
    matrix = an.policy_win_matrix(run)
    if matrix.empty:
        raise Skip("every seat played the same policy")
    sec.table("policy_win_matrix", matrix, "Share of seat pairs in which policy A finished ahead of policy B.")
    sec.figure("policy_win_matrix", plots.plot_policy_matrix(matrix), "Policy A (rows) against policy B (columns).")


def _scores(sec: _Section, run, ctx) -> None:
    table = an.score_distribution(run, seed=ctx["seed"])
    sec.table("score_distribution", table, "Final scores per policy.")
    sec.figure("score_distribution", plots.plot_score_distribution(table), "Final scores per policy.")


def _players(sec: _Section, run, ctx) -> None:
    table = an.by_player_count(run, seed=ctx["seed"])
    sec.table("by_player_count", table, "Game length and ticket completion by player count.",
              ["players", "games", "turns_mean", "turns_mean_low", "turns_mean_high", "turns_median",
               "all_passed_rate", "tickets_kept_mean", "completion_rate", "completion_rate_low",
               "completion_rate_high", "score_mean"])
    sec.figure("by_player_count", plots.plot_game_length(table), "Turns per game and ticket completion rate.")


def _tickets(sec: _Section, run, ctx) -> None:
    completion = an.ticket_completion(run)
    sec.table("ticket_completion", completion, "Keep and completion rate of each ticket.",
              ["ticket", "name", "points", "offered", "keep_rate", "completion_rate", "completion_rate_low",
               "completion_rate_high", "expected_points", "by_station"], max_rows=60)
    sec.figure("ticket_completion", plots.plot_ticket_completion(completion), "Completion rate of each ticket.")
    balance = an.ticket_balance(run)
    sec.text("Balance: gap = printed points - expected points when kept (= 2 x points x failure rate); "
             "tickets ranked by the gap.")
    sec.table("ticket_balance", balance, "Tickets ranked by the balance gap.",
              ["rank", "ticket", "name", "points", "completion_rate", "expected_points", "gap", "gap_low", "gap_high"])
    sec.figure("ticket_balance", plots.plot_ticket_balance(balance), "Expected points when kept against printed points.")


def _routes(sec: _Section, run, ctx) -> None:
    claims = an.route_claims(run)
    ranked = claims.sort_values("claim_rate", ascending=False, kind="stable")
    sec.table("route_claims", ranked, "Routes by claim rate (share of games claimed).",
              ["route", "name", "length", "color", "claims", "claim_rate", "claim_rate_low", "claim_rate_high",
               "turn_median", "unneeded_share"])
    if ctx["board"] is None or getattr(ctx["board"], "coords", None) is None:
        sec.text("No board coordinates in this run: the contention map is skipped.")
        return
    sec.figure("route_contention", plots.plot_route_contention(claims, ctx["board"]),
               "Routes coloured by claim rate.")


def _tunnels(sec: _Section, run, ctx) -> None:
    _, table = source(run, "tunnels")
    _nonempty(table, "tunnel attempts (the board may have no tunnels)")
    outcomes = an.tunnel_outcomes(run)
    sec.table("tunnel_outcomes", outcomes, "Extra cards asked, declines and cards paid per tunnel route.",
              ["route", "name", "attempts", "extra_mean", "p_extra_0", "p_extra_1", "p_extra_2", "p_extra_3",
               "decline_rate", "extra_paid_mean"])
    board = ctx["board"]
    if board is None:
        return
    # Attempts paid with a plain colour, against the exact odds for one colour with no
    # card known beyond the deck composition.
    wild = ["wild", board.wild]
    plain = table[~table.color.astype(str).isin(wild)] if "color" in table.columns else table
    observed = an.tunnel_extra_distribution(plain, by=()) if len(plain) else None
    exact = an.tunnel_odds(board, board.colors[0])
    sec.figure("tunnel_odds", plots.plot_tunnel_odds(exact, observed),
               "Exact odds for one plain colour with only the deck composition known, against the "
               "observed shares of attempts paid with a plain colour (in play, the cards a player "
               "knows of shift the odds of each attempt).")


def _stations(sec: _Section, run, ctx) -> None:
    _, table = source(run, "stations")
    _nonempty(table, "stations built")
    usage = an.station_usage(run)
    sec.table("station_usage", usage[usage.built > 0], "Cities where stations were built.")
    baseline = ctx["baseline"]
    if baseline is None:
        sec.text("Station value needs a paired run of the same seed in which a seat may not build "
                 "stations (write_report(..., baseline=that_run)).")
        return
    value = an.station_value(run, baseline, seed=ctx["seed"])
    sec.table("station_value", value, "Paired station value (with minus without stations).")
    sec.figure("station_value", plots.plot_station_value(value), "Station value by player count.")


SECTIONS = [
    ("methods", "Methods", _methods),
    ("seats", "Seat advantage", _seats),
    ("policies", "Policies", _policies),
    ("scores", "Scores", _scores),
    ("players", "Game length and ticket completion by player count", _players),
    ("tickets", "Tickets", _tickets),
    ("routes", "Routes", _routes),
    ("tunnels", "Tunnels", _tunnels),
    ("stations", "Stations", _stations),
]

_STYLE = """
body { font-family: sans-serif; max-width: 1100px; margin: 2em auto; padding: 0 1em; color: #222; }
table.data { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0 1.5em; }
table.data th, table.data td { padding: 2px 8px; border-bottom: 1px solid #ddd; text-align: right; }
figure { margin: 1em 0; } figure img { max-width: 100%; }
figcaption, p.caption { font-size: 0.9em; color: #555; }
p.skipped { color: #a33; }
"""


def write_report(run, out_dir, title: str | None = None, *, baseline=None, seed=0) -> Path:
    """Write ``out_dir/index.html`` (self-contained) plus the figures (PNG) and tables (CSV).

    ``run`` is a per-event or summary-mode run. ``baseline``, optional, is a paired run of
    the same seed in which a seat may not build stations; it adds the station value.
    ``seed`` seeds the bootstrap intervals. Returns the path of ``index.html``.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    manifest = manifest_of(run)
    ctx = {"manifest": manifest, "board": getattr(run, "board", None), "baseline": baseline, "seed": seed}
    board_name = _manifest_value(manifest, "board", default=getattr(ctx["board"], "name", "board"))
    title = title or f"ttrsim report: {board_name}, {_manifest_value(manifest, 'games', default='?')} games"
    sections = []
    for slug, heading, build in SECTIONS:
        sec = _Section(out_dir, slug, heading)
        try:
            build(sec, run, ctx)
        except (Skip, an.MissingTable) as reason:
            sec.parts = [f'<p class="skipped">Skipped: {html.escape(str(reason))}.</p>']
        sections.append(sec)
    from ttrsim import __version__

    toc = "".join(f'<li><a href="#{s.slug}">{html.escape(s.heading)}</a></li>' for s in sections)
    page = (
        f"<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<style>{_STYLE}</style></head><body>\n<h1>{html.escape(title)}</h1>\n"
        f"<p class='caption'>Written by ttrsim {html.escape(__version__)}.</p>\n"
        f"<nav><ul>{toc}</ul></nav>\n" + "\n".join(s.html() for s in sections) + "\n</body></html>\n"
    )
    index = out_dir / "index.html"
    index.write_text(page, encoding="utf-8")
    return index



def cli_report(args) -> int:
    """``ttrsim report RUN_DIR``: load a saved run and write its report."""
    import ttrsim

    run = ttrsim.load_run(args.run_dir)
    out_dir = args.out or Path(args.run_dir) / "report"
    print(write_report(run, out_dir, title=args.title))
    return 0
