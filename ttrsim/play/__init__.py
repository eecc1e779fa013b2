"""Play one seat against ttrsim policies in the browser (``ttrsim play``; docs/play.md).

A person is one more seat: ``PlaySession`` holds the game and its run directory and
plays the other seats with ttrsim policies; the page (``server``: Starlette, served by
uvicorn on 127.0.0.1 behind a random token) is sent only the person's information set
(``view``) and offers only the engine's legal moves. Every finished game is added to the
run as a game whose decisions are recorded, so that ``ttrsim show``, ``profile`` and
``report`` read people's games as any run. The web server needs the ``play`` extra
(``pip install "ttrsim[play]"``); the session does not.
"""
from __future__ import annotations

import re
import sys
import threading
from pathlib import Path

from ttrsim.play.session import DEFAULT_NAME, MoveRefused, PlaySession

__all__ = ["PlaySession", "MoveRefused", "DEFAULT_NAME", "default_out", "check_server", "serve",
           "redirect_file"]


def default_out(board, players: int) -> str:
    """The run directory of a session when none is given: ``play-BOARD-Np`` (the board's
    name, or its map file's name)."""
    name = Path(str(board)).stem if str(board).endswith(".json") else str(board)
    name = re.sub(r"[^\w.-]+", "_", name)
    return f"play-{name}-{players}p"


def check_server() -> None:
    """Refuse, before anything is written, when the web server's libraries are missing
    (ImportError naming the extra that installs them)."""
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise ImportError(f"ttrsim play needs Starlette and uvicorn ({exc}): pip install "
                          "\"ttrsim[play]\"") from None


def redirect_file(url: str) -> Path:
    """A page that sends the browser on to ``url``, in a new file only its owner can read
    (0600, as notebook servers do): the browser is opened on it, so that the token is on
    no command line (every user of the machine reads the browser's arguments)."""
    import html
    import os
    import tempfile

    fd, name = tempfile.mkstemp(prefix="ttrsim-play-", suffix=".html")     # mode 0600
    link = html.escape(url, quote=True)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(f'<!DOCTYPE html><meta charset="utf-8"><meta http-equiv="refresh" '
                f'content="0;url={link}"><title>ttrsim play</title>'
                f'<p><a href="{link}">Open ttrsim play</a>')
    return Path(name)


def serve(session: PlaySession, port: int = 0, open_browser: bool = True, stream=None) -> int:
    """Serve ``session``'s page on 127.0.0.1 (``port``; 0: a free one) until Ctrl-C,
    printing its address (with the token) to ``stream`` (default stdout) and opening it
    in the default browser unless ``open_browser`` is false. Returns 0."""
    check_server()
    from ttrsim.play.server import PlayServer

    out = stream or sys.stdout
    server = PlayServer(session, port)
    t = session.table
    where = (f"game {session.game_index} resumed at decision {len(t.decisions)}"
             if t.decisions and not t.over else f"game {session.game_index}")
    redirect = None
    try:                          # (a Ctrl-C from here on stops the server as any other)
        print(f"ttrsim play: {where}, saved in {session.path} after every move (ttrsim play "
              f"--out {session.path} resumes it)\nopen {server.url}\n(Ctrl-C stops the "
              "server)", file=out, flush=True)
        if open_browser:
            import webbrowser

            redirect = redirect_file(server.url)
            threading.Timer(0.5, webbrowser.open, (redirect.as_uri(),)).start()
        server.run()
    except KeyboardInterrupt:
        pass
    finally:
        server.sock.close()
        session.close()
        if redirect is not None:
            redirect.unlink(missing_ok=True)
    print(f"stopped; {session.manifest['games']} finished game"
          f"{'' if session.manifest['games'] == 1 else 's'} in {session.path}; ttrsim play "
          f"--out {session.path} resumes", file=out, flush=True)
    return 0
