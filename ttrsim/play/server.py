"""The play page's web server: a small Starlette app, served by uvicorn on 127.0.0.1.

Every request must carry the session's token (a random string in the address printed at
start, as notebook servers do), so that other users of the machine cannot read the game
or post moves. The page is one HTML file with its script inline (the board drawn by the
viewer's own ``viewer_board.js``); it talks JSON to four endpoints:

- ``GET /api/state?since=N``: the person's message (``ttrsim.play.view.seat_message``);
- ``POST /api/move`` ``{"decision": D, "code": C}``: the person's move at decision D;
- ``POST /api/advance`` ``{"decision": D}``: the policy to move makes its decision
  (``"all": true``: the policies move until the person is to move, or half a second);
- ``POST /api/next`` ``{"game": G}``: the next game, once game G is over;
- ``GET /viewer?game=G``: finished game G in the viewer, with the analysis of the
  person's seat.

A refused request changes nothing and answers ``{"error": "..."}`` with status 400
(malformed), 403 (no or a wrong token), 409 (stale, or out of turn), 413 (a body over
``MAX_BODY``), 422 (illegal) or 503 (not saved: the disk full or read-only; the game
stays as saved).
"""
from __future__ import annotations

import json
import secrets
import socket
import threading
from importlib import resources

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.responses import HTMLResponse, JSONResponse
from starlette.routing import Route

from ttrsim._validate import check_int
from ttrsim.play.session import MoveRefused, PlaySession
from ttrsim.viewer import board_script

__all__ = ["create_app", "PlayServer", "TOKEN_HEADER"]

TOKEN_HEADER = "X-Ttrsim-Token"
# the page may reach its own server and nothing else (no network: no CDN, no fonts)
CSP = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
       "connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; "
       "frame-ancestors 'none'")
#: On every answer: no framing by another site, no guessing of types, no address (and
#: so no token) sent on to another site, nothing kept in a cache.
HEADERS = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff",
           "Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY",
           "Cache-Control": "no-store"}
#: The largest request body read (a move is a few dozen bytes).
MAX_BODY = 16 * 1024


def page_html(session: PlaySession) -> str:
    """The page: its template with the board script and the board's data inline."""
    template = resources.files("ttrsim.play").joinpath("page.html").read_text(encoding="utf-8")
    data = json.dumps(session.page_data(), separators=(",", ":")).replace("</", "<\\/")
    title = session.page_data()["title"].replace("&", "&amp;").replace("<", "&lt;")
    return (template.replace("__BOARD_SCRIPT__", board_script())
            .replace("__TITLE__", title).replace("__DATA__", data))


def viewer_page(session: PlaySession, game: int, playouts: int, rollout=None) -> str:
    """The viewer's page of finished game ``game`` with the analysis of the person's
    seat (``ttrsim show RUN --game G --analyse SEAT``), made once and kept in the run
    (0600, as every file of it)."""
    from ttrsim.play.session import private_files
    from ttrsim.results import load_run
    from ttrsim.viewer import render_html

    f = session.path / "viewer" / f"game-{game:06d}-seat{session.seat}-{playouts}.html"
    if f.is_file():
        return f.read_text(encoding="utf-8")
    record = load_run(session.path).game(game)
    html = render_html(record.view_data(session.seat, playouts, rollout=rollout))
    try:
        with private_files():
            f.parent.mkdir(exist_ok=True)
            f.write_text(html, encoding="utf-8")
    except OSError:
        pass                               # not kept: made again next time
    return html


async def read_body(request):
    """The body, or None when it is larger than MAX_BODY (read no further)."""
    size = request.headers.get("content-length", "0")
    if not size.isdigit() or len(size) > 9 or int(size) > MAX_BODY:
        return None
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY:
            return None
    return body


def finished_game(session: PlaySession, g: str):
    """The finished game a ``?game=`` names, or an error message."""
    done = session.manifest["games"]
    if not done:
        return "no finished game yet"
    if not (g.isascii() and g.isdigit() and len(g) <= 9 and int(g) < done):
        return f"malformed request: 'game' must be a finished game's number (0 to {done - 1})"
    return int(g)


def create_app(session: PlaySession, token: str, playouts: int = 100,
               rollout=None) -> Starlette:
    """The ASGI app of ``session``, answering only requests that carry ``token``;
    ``playouts``, ``rollout``: the analysis of the person's finished games."""
    page = page_html(session)
    made = threading.Lock()              # one analysis at a time

    def allowed(request) -> bool:
        given = request.headers.get(TOKEN_HEADER) or request.query_params.get("token") or ""
        return secrets.compare_digest(given.encode(), token.encode())

    def refused(message: str, status: int) -> JSONResponse:
        return JSONResponse({"error": message}, status_code=status)

    def forbidden():
        return refused("this address needs the token ttrsim play printed with it "
                       "(http://127.0.0.1:PORT/?token=...)", 403)

    async def index(request):
        if not allowed(request):
            return HTMLResponse("<!DOCTYPE html><title>ttrsim play</title><p>Open the address "
                                "<code>ttrsim play</code> printed, with its <code>?token=...</code>.",
                                status_code=403)
        return HTMLResponse(page)

    async def state(request):
        if not allowed(request):
            return forbidden()
        since = request.query_params.get("since", "0")
        if not (since.isascii() and since.isdigit() and len(since) <= 9):
            return refused("malformed request: 'since' must be a whole number (a log "
                           "entry's index)", 400)
        msg = await run_in_threadpool(session.state, int(since))
        return JSONResponse(msg)

    def post(call):
        async def endpoint(request):
            if not allowed(request):
                return forbidden()
            raw = await read_body(request)
            if raw is None:
                return refused(f"request too large: a move's body is at most {MAX_BODY} "
                               "bytes", 413)
            try:
                body = json.loads(raw)
            except (ValueError, UnicodeDecodeError, RecursionError):
                body = None
            if not isinstance(body, dict):
                return refused("malformed request: the body must be a JSON object", 400)
            try:
                msg = await run_in_threadpool(call, body)
            except MoveRefused as exc:
                return refused(str(exc), exc.status)
            return JSONResponse(msg)
        return endpoint

    async def viewer(request):
        if not allowed(request):
            return forbidden()
        g = finished_game(session, request.query_params.get("game", ""))
        if isinstance(g, str):
            return refused(g, 400)

        def make():
            with made:
                return viewer_page(session, g, playouts, rollout)
        return HTMLResponse(await run_in_threadpool(make))

    routes = [
        Route("/", index), Route("/api/state", state), Route("/viewer", viewer),
        Route("/api/move", post(lambda b: session.move(b.get("decision"), b.get("code"),
                                                        b.get("since"))), methods=["POST"]),
        Route("/api/advance", post(lambda b: session.advance(
            b.get("decision"), b.get("since"), until_person=b.get("all") is True)),
            methods=["POST"]),
        Route("/api/next", post(lambda b: session.next_game(b.get("game"))), methods=["POST"])]
    hosts = ["127.0.0.1", "localhost"]
    return Starlette(routes=routes, middleware=[Middleware(SecurityHeaders),
                                                Middleware(TrustedHostMiddleware,
                                                           allowed_hosts=hosts)])


class SecurityHeaders:
    """ASGI middleware adding ``HEADERS`` to every answer, refusals included."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def send_with(message):
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                have = {k.lower() for k, _ in headers}
                headers += [(k.lower().encode(), v.encode()) for k, v in HEADERS.items()
                            if k.lower().encode() not in have]
                message = dict(message, headers=headers)
            await send(message)

        await self.app(scope, receive, send_with)


class PlayServer:
    """``session`` served by uvicorn on 127.0.0.1 at ``port`` (0: a free one), behind a
    fresh random token: ``url`` is the address to open. ``run()`` serves until Ctrl-C;
    ``start()`` serves from a thread until ``stop()`` (for tests)."""

    def __init__(self, session: PlaySession, port: int = 0, playouts: int = 100, rollout=None):
        import uvicorn

        port = check_int("--port", port, 0, 65535, " (0: a free one)")
        self.token = secrets.token_urlsafe(24)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self.sock.bind(("127.0.0.1", port))
            self.sock.listen(64)       # from now on a browser's connection waits for uvicorn
        except OSError as exc:
            self.sock.close()
            raise ValueError(f"--port {port}: cannot listen there ({exc.strerror}); give "
                             "another port, or none for a free one") from None
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/?token={self.token}"
        config = uvicorn.Config(create_app(session, self.token, playouts, rollout),
                                log_level="warning",
                                timeout_graceful_shutdown=2, lifespan="off")
        self.server = uvicorn.Server(config)
        self._thread = None

    def run(self) -> None:
        """Serve in this thread until the server is stopped (Ctrl-C raises
        KeyboardInterrupt once it has shut down)."""
        self.server.run(sockets=[self.sock])

    def start(self) -> "PlayServer":
        self._thread = threading.Thread(target=self.run, daemon=True)
        self._thread.start()
        while not self.server.started:
            if not self._thread.is_alive():
                raise RuntimeError("the play server did not start")
            self._thread.join(0.01)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        if self._thread is not None:
            self._thread.join(10)
        self.sock.close()
