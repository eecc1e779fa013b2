"""The page kit of ttrsim's HTML reports (public to ``scripts/``).

A report is one self-contained ``index.html`` (figures embedded as PNG data) plus each
figure as PNG and each table as CSV beside it. Build it from :class:`Section` objects
(text, notes, figures, tables) and write it with :func:`write_page`, which opens the page
with a summary of every section's conclusions (``Section.lead``), each linked to its
section. The kit imports no analysis: it formats what it is given.
"""
from __future__ import annotations

import base64
import html
import io
from pathlib import Path

import numpy as np
import pandas as pd

from ttrsim._version import __version__

__all__ = ["Section", "Skip", "write_page", "manifest_table", "fmt", "fmt_p", "fmt_pct",
           "readable", "STYLE", "check_stronger"]

DPI = 110
MAX_ROWS = 30

STYLE = """
body { font-family: sans-serif; max-width: 1100px; margin: 2em auto; padding: 0 1em; color: #222; }
div.wide { max-width: 100%; overflow-x: auto; }
table.data { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0 1.5em; }
p.lead { font-size: 1.05em; background: #eef4fb; padding: 6px 10px; border-left: 3px solid #3b75b0; }
section#summary ul { padding-left: 1.2em; } section#summary li { margin: 0.35em 0; }
nav ul { columns: 3; font-size: 0.9em; }
table.data th, table.data td { padding: 2px 8px; border-bottom: 1px solid #ddd; text-align: right; }
figure { margin: 1em 0; } figure img { max-width: 100%; }
figcaption, p.caption { font-size: 0.9em; color: #555; }
p.skipped { color: #a33; }
p.note { background: #fff4d6; padding: 4px 8px; border-left: 3px solid #d9a400; }
table.data tr.flag td { background: #ffe1e1; font-weight: bold; }
"""


class Skip(Exception):
    """A report section cannot be produced from this run; the message says why."""


def fmt(value) -> str:
    """A number at a readable precision: three significant digits, one decimal from 100 on,
    thousands separated, never in scientific notation (0.0000933, not 9.33e-05; below
    1e-8, 0); booleans as words."""
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (float, np.floating)):
        if np.isnan(value):
            return "–"
        if abs(value) >= 100:
            return f"{value:,.1f}"
        if abs(value) < 1e-8:
            return "0"
        return np.format_float_positional(value, precision=3, unique=False, fractional=False,
                                          trim="-")
    if isinstance(value, (int, np.integer)):
        return f"{value:,}" if abs(value) >= 10_000 else str(value)
    return str(value)


def fmt_p(value) -> str:
    """A p- or q-value: "< 0.001" below a thousandth (never 1.1e-254 or 0), else two
    significant digits."""
    if value is None or (isinstance(value, (float, np.floating)) and np.isnan(value)):
        return "–"
    return "< 0.001" if value < 0.001 else f"{value:.2g}"


def fmt_pct(value) -> str:
    """A rate (0..1) as a percentage with one decimal."""
    if value is None or (isinstance(value, (float, np.floating)) and np.isnan(value)):
        return "–"
    return f"{100 * value:.1f}%"


# Columns shown as p-values and as percentages (by name); everything else through fmt.
_P_COLUMNS = ("q_value", "p_value", "q", "p")
_RATE_WORDS = ("rate", "share", "completion")
_ID_COLUMNS = ("game", "seed", "seat", "route", "ticket", "city", "players", "round", "rank",
               "turn", "batch")


def _is_p(col: str) -> bool:
    return col in _P_COLUMNS or col.endswith(("_q", "_p", "_q_value", "_p_value"))


def _is_rate(col: str, values) -> bool:
    base = col[:-4] if col.endswith("_low") else col[:-5] if col.endswith("_high") else col
    if not any(w in base.split("_") or base.endswith(w) for w in _RATE_WORDS):
        return False
    v = pd.to_numeric(values, errors="coerce")
    v = v[np.isfinite(v)]
    return bool(len(v)) and bool(((v >= 0) & (v <= 1)).all())


def _interval_columns(col: str, columns) -> tuple[str, str] | None:
    """The columns holding the interval of ``col``: ``col_low``/``col_high``, ``col
    low``/``col high`` (a table whose columns are named for reading), or ``low``/``high``
    beside a ``difference``."""
    for low, high in ((f"{col}_low", f"{col}_high"), (f"{col} low", f"{col} high"),
                      ("low", "high") if col == "difference" else (None, None)):
        if low in columns and high in columns:
            return low, high
    return None


def _with_interval(v: float, lo: float, hi: float, one) -> str:
    """"12.3 [11.9, 12.7]"; where the interval is too narrow for ``one``'s digits (all
    three the same), as many decimals as give its half-width two significant digits."""
    if not np.isfinite(v):
        return "–"
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return one(v)
    if one is fmt and hi > lo and fmt(lo) == fmt(hi):
        d = max(0, 1 - int(np.floor(np.log10((hi - lo) / 2) + 1e-9)))
        return f"{v:,.{d}f} [{lo:,.{d}f}, {hi:,.{d}f}]"
    return f"{one(v)} [{one(lo)}, {one(hi)}]"


def readable(df: pd.DataFrame) -> pd.DataFrame:
    """The table as a reader sees it: p- and q-values as "< 0.001", rates as percentages,
    each estimate with its ``_low``/``_high`` (or `` low``/`` high``) columns folded into
    one cell "12.3 [11.9, 12.7]" (the CSV beside the report keeps every raw column), no
    number in scientific notation, booleans as words."""
    out = pd.DataFrame(index=df.index)
    cols = list(df.columns)
    used = set()
    for col in cols:
        if col in used:
            continue
        values = df[col]
        if values.dtype.kind in "iufb" and _is_p(col):
            out[col] = [fmt_p(v) for v in values]
            continue
        bounds = _interval_columns(col, df.columns)
        if values.dtype.kind in "fi" and bounds is not None:
            low, high = bounds
            one = fmt_pct if _is_rate(col, values) else fmt
            out[f"{col} [95%]"] = [_with_interval(v, lo, hi, one) for v, lo, hi in zip(
                values.astype(float), df[low].astype(float), df[high].astype(float))]
            used.update((low, high))
            continue
        if values.dtype.kind == "f" and _is_rate(col, values):
            out[col] = [fmt_pct(v) for v in values]
        elif values.dtype.kind in "iu" and (col in _ID_COLUMNS or col.endswith("_id")):
            out[col] = values.astype(str)
        elif values.dtype.kind in "iufb":
            out[col] = [fmt(v) for v in values]
        elif values.dtype == object or pd.api.types.is_string_dtype(values):
            out[col] = [fmt(v) if isinstance(v, (bool, np.bool_, float, np.floating)) else
                        "yes" if v == "True" else "no" if v == "False" else v for v in values]
        else:
            out[col] = values
    return out


def _is_interval(cell) -> bool:
    return isinstance(cell, str) and cell.endswith("]") and " [" in cell


class Section:
    """Accumulates the HTML of one report section and writes its files."""

    def __init__(self, out_dir: Path, slug: str, heading: str):
        self.out_dir, self.slug, self.heading = out_dir, slug, heading
        self.parts: list[str] = []
        self.findings: list[str] = []       # the leads, in the order given
        self.skipped: str | None = None

    def text(self, text: str) -> None:
        self.parts.append(f"<p>{html.escape(text)}</p>")

    def lead(self, text: str) -> None:
        """A conclusion of the section in words (what, by how much, how sure: each with
        its interval or test): shown first in the section, whatever was added before, and
        again in the page's summary."""
        self.findings.append(text)

    def skip(self, reason: str) -> None:
        """The section cannot be produced: it keeps only the reason (and no conclusion)."""
        self.parts, self.findings, self.skipped = [], [], reason

    def note(self, text: str) -> None:
        """A remark the reader must not miss (e.g. a table pooled over policies)."""
        self.parts.append(f"<p class='note'><strong>Note:</strong> {html.escape(text)}</p>")

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

    def table(self, name: str, df: pd.DataFrame, caption: str, columns=None, max_rows: int = MAX_ROWS,
              highlight=None, shown: pd.DataFrame | None = None) -> None:
        """``df`` is written as CSV; the page shows its ``columns`` (default all), or
        ``shown``, the same rows under names for reading. ``highlight``: one boolean per
        row of ``df``; those rows are drawn highlighted."""
        path = self.out_dir / f"{name}.csv"
        df.to_csv(path, index=False)
        if shown is None:
            shown = df[[c for c in columns if c in df.columns]] if columns else df
        if len(shown) > max_rows:
            note = f" Showing the first {max_rows} of {len(shown)} rows; all rows are in {path.name}."
            shown = shown.head(max_rows)
        else:
            note = f" Full table: {path.name}."
        cells = readable(shown)
        # an interval breaks before its bracket, never inside it (a narrow column wraps)
        cells = cells.apply(lambda c: c.str.replace(", ", ",\u00a0", regex=False)
                            if c.map(_is_interval).any() else c)
        body = cells.to_html(index=False, border=0, classes="data", na_rep="–")
        if highlight is not None:
            body = _highlight_rows(body, np.asarray(highlight, dtype=bool)[:len(shown)])
        self.parts.append(f"<p class='caption'>{html.escape(caption + note)}</p>"
                          f"<div class='wide'>{body}</div>")

    def html(self) -> str:
        body = [f"<p class='lead'>{html.escape(f)}</p>" for f in self.findings] + self.parts
        if self.skipped is not None:
            body = [f'<p class="skipped">Skipped: {html.escape(self.skipped)}.</p>']
        return (f'<section id="{self.slug}"><h2>{html.escape(self.heading)}</h2>\n'
                + "\n".join(body) + "</section>")


def _highlight_rows(body: str, flags) -> str:
    """The rows of an HTML table body whose flag is set get the class ``flag``."""
    head, sep, rows = body.partition("<tbody>")
    chunks = rows.split("<tr>")
    out = [chunks[0]]
    for i, chunk in enumerate(chunks[1:]):
        out.append(("<tr class='flag'>" if i < len(flags) and flags[i] else "<tr>") + chunk)
    return head + sep + "".join(out)


def check_stronger(manifest: dict, stronger, pairs, what: str, call: str) -> None:
    """Refuse a comparison under stronger play whose base is not the report's `what` (run
    or study), before anything is written: ``pairs`` are (manifest key, comparison
    manifest key) that must agree where both are given; the error names every
    difference and ``call``, the comparison to pass instead."""
    c = stronger.manifest
    diff = [f"{k} {c.get(ck)!r} in the comparison, {manifest[k]!r} in the {what}"
            for k, ck in pairs
            if k in manifest and c.get(ck) is not None and manifest[k] != c.get(ck)]
    if diff:
        raise ValueError(f"the comparison under stronger play is not of this {what} ("
                         + "; ".join(diff) + f"): pass {call} of this very {what}")


def manifest_table(sec: Section, manifest: dict, name: str = "manifest") -> None:
    """The manifest as a two-column table (key, value) in section ``sec``."""
    items = pd.DataFrame({"key": list(manifest), "value": [str(v) for v in manifest.values()]})
    sec.table(name, items, "Manifest.", max_rows=100)


def _summary_html(sections: list, about: str = "") -> str:
    """The page's summary: ``about`` (what was played, in one line), then every
    conclusion of every section (its leads, word for word), each linked to its section,
    then the sections skipped and why."""
    items = [f'<li><a href="#{s.slug}">{html.escape(s.heading)}</a>: {html.escape(f)}</li>'
             for s in sections for f in s.findings]
    skipped = [f"{s.heading}: {s.skipped}" for s in sections if s.skipped is not None]
    parts = [f"<p class='caption'>{html.escape(about)}</p>"] if about else []
    parts.append(f"<ul>{''.join(items)}</ul>" if items else
                 "<p>No section of this report draws a conclusion.</p>")
    if skipped:
        parts.append(f"<p class='caption'>Not in this report: "
                     f"{html.escape('; '.join(skipped))}.</p>")
    return '<section id="summary"><h2>Summary</h2>\n' + "\n".join(parts) + "</section>"


def write_page(out_dir: Path, title: str, sections: list, about: str = "") -> Path:
    """Write ``out_dir/index.html``: the title, the summary of every section's conclusions
    (``about``, optional: one line saying what was played), a table of contents and the
    sections. Returns its path."""
    toc = "".join(f'<li><a href="#{s.slug}">{html.escape(s.heading)}</a></li>' for s in sections)
    page = (f"<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
            f"<title>{html.escape(title)}</title><style>{STYLE}</style></head><body>\n"
            f"<h1>{html.escape(title)}</h1>\n<p class='caption'>Written by ttrsim "
            f"{html.escape(__version__)}.</p>\n{_summary_html(sections, about)}\n"
            f"<nav><p class='caption'>Sections:</p><ul>{toc}</ul></nav>\n"
            + "\n".join(s.html() for s in sections) + "\n</body></html>\n")
    index = Path(out_dir) / "index.html"
    index.write_text(page, encoding="utf-8")
    return index
