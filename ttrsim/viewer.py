"""A self-contained HTML page that shows one game position by position.

``write_html(data, path)`` takes plain data (JSON-serialisable: the board's geometry, every
position and move, the players, optionally an analysis) and writes ONE HTML file with the
data, the style and the script inline: it opens from disk with no network access. It
imports nothing from ttrsim; ``GameRecord.html`` builds the data (``GameRecord.view_data``
documents its shape). The board is drawn by ``viewer_board.js`` (``board_script``), which
the play page (``ttrsim.play``) includes too.
"""
from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

__all__ = ["write_html", "render_html", "board_script"]

REQUIRED = ("title", "board", "players", "positions")


def board_script() -> str:
    """The script that draws a board (``drawBoard(svg, board)``; viewer_board.js), to
    be inlined in a page's ``<script>`` element."""
    text = resources.files("ttrsim").joinpath("viewer_board.js").read_text(encoding="utf-8")
    if "</script" in text.lower():      # it would end the element it is inlined in
        raise ValueError("viewer_board.js must not contain '</script'")
    return text


def render_html(data: dict) -> str:
    """The page's HTML text for ``data`` (see the module docstring)."""
    if not isinstance(data, dict) or any(k not in data for k in REQUIRED):
        raise ValueError(f"viewer data must be a dict with the keys {', '.join(REQUIRED)} "
                         "(GameRecord.view_data() builds it)")
    if not data["positions"]:
        raise ValueError("viewer data holds no position")
    template = resources.files("ttrsim").joinpath("viewer.html").read_text(encoding="utf-8")
    # JSON inside <script>: "</" must not close the element
    payload = json.dumps(data, separators=(",", ":"), allow_nan=False).replace("</", "<\\/")
    title = (str(data["title"]).replace("&", "&amp;").replace("<", "&lt;")
             .replace(">", "&gt;"))
    return (template.replace("__BOARD_SCRIPT__", board_script())
            .replace("__TITLE__", title).replace("__DATA__", payload))


def write_html(data: dict, path) -> Path:
    """Write the page for ``data`` to ``path`` (parent directories are created); return
    the path."""
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{path} is a directory; give a file name such as game.html")
    text = render_html(data)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
