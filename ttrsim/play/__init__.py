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

__all__ = ["PlaySession", "MoveRefused", "DEFAULT_NAME", "default_out", "check_server", "serve"]


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
    print(f"ttrsim play: {where}, saved in {session.path} after every move (the same command "
          f"resumes it)\nopen {server.url}\n(Ctrl-C stops the server)", file=out, flush=True)
    if open_browser:
        import webbrowser

        threading.Timer(0.5, webbrowser.open, (server.url,)).start()
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    finally:
        server.sock.close()
    print(f"stopped; {session.manifest['games']} finished game"
          f"{'' if session.manifest['games'] == 1 else 's'} in {session.path}; the same command "
          "resumes", file=out, flush=True)
    return 0
