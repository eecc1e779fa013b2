"""A person's games against ttrsim policies, decision by decision, saved as a run.

``PlaySession`` opens (or resumes) a directory that is a ttrsim run of people's games:
its manifest is a run's (``policies`` by seat, the person's seat labelled with the
person's name; ``people``: the seats a person played), each finished game is one batch
of one game with the tables ``simulate`` writes plus ``decisions`` (every seat's, in
order), and the game being played is ``play.json``, written atomically after every
decision. A person's decisions cannot be played again by a policy, so a game of the
run replays from its recorded decisions (``Run.game``); its tables are made by the
batch loop playing those decisions (``ttrsim.record.recorded_policies``), the same code
that makes a simulated game's.

The opponents are built-in (or Python) policies seated at a ``ttrsim.seats.Table``:
started in seat order before the first decision with the seeds the batch loop gives
their seats, asked for their moves a decision at a time, as in a simulated game. A resumed game plays its saved decisions again, the opponents' own
included (each must choose what it chose before), so that they go on as they would
have.
"""
from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import secrets
import threading
from pathlib import Path

import numpy as np
import pandas as pd

from ttrsim._validate import check_int, is_int
from ttrsim.actions import WILD, Action, card_name
from ttrsim.batches import DEFAULT_MAX_TURNS, IDENTITY, RunConfig, game_seeds, play
from ttrsim.game import Game
from ttrsim.maps import resolve_board
from ttrsim.policies import DEFAULT_POLICY, REGISTRY, make_policy, policy_name
from ttrsim.record import board_view, recorded_policies
from ttrsim.seats import Table as SeatTable
from ttrsim.results import atomic_write, finish_out, prepare_out, read_manifest, write_batch
from ttrsim.tables import batch_tables
from ttrsim.play.view import SETUP, final_scores, log_entry, seat_message

__all__ = ["PlaySession", "MoveRefused", "NotSaved", "DEFAULT_NAME", "IN_PROGRESS",
           "PLAY_IDENTITY", "saved_settings", "private_files"]

DEFAULT_NAME = "person"
#: The game being played, in the run's directory.
IN_PROGRESS = "play.json"
PLAY_FORMAT = 1
#: Manifest keys a resumed session must match: a run's, but for its growing game count.
PLAY_IDENTITY = tuple(k for k in IDENTITY if k not in ("games", "batch_size")) + ("people",)


class MoveRefused(ValueError):
    """A move or request that is not played; ``status`` is its HTTP status: 400 for a
    malformed one, 409 for one made for another decision (stale) or out of turn, 422
    for an illegal move."""

    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.status = status


class NotSaved(MoveRefused):
    """A move not played because the game could not be saved (the disk full or
    read-only): the game stays as saved, and the same move can be played again."""

    def __init__(self, message: str):
        super().__init__(message, 503)


def _why(exc: OSError) -> str:
    """An OSError of a write, in words a person acts on."""
    if exc.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", -1)):
        return "the disk is full"
    if exc.errno == errno.EROFS:
        return "the disk is read-only"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "no permission to write there"
    return exc.strerror or str(exc)


@contextlib.contextmanager
def private_files():
    """Files created inside are the person's alone (0600; folders 0700): the saved game
    holds the deal seed, from which every hand, ticket and deck order follows."""
    old = os.umask(0o077)
    try:
        yield
    finally:
        os.umask(old)


def saved_settings(out) -> dict | None:
    """The settings of the run of people's games in ``out`` (board, players, opponents,
    seat, name), so that ``ttrsim play --out DIR`` alone resumes it; None when ``out``
    holds none."""
    if not (Path(out) / "manifest.json").is_file():
        return None
    m = read_manifest(out)
    if not m.get("people"):
        return None
    seat = int(m["people"][0])
    board = m.get("board_path") or m["board"]
    return {"board": board, "players": int(m["players"]), "seat": seat,
            "name": m["policies"][seat],
            "opponents": [p for q, p in enumerate(m["policies"]) if q != seat]}


class Table:
    """One game: a person in seat ``seat``, the policies ``specs`` (None at the
    person's seat) in the others; ``decisions`` already played, as (seat, code) pairs."""

    def __init__(self, board, specs, names, seat: int, seed: int, max_turns: int,
                 decisions=()):
        self.board, self.names, self.seat, self.max_turns = board, tuple(names), seat, max_turns
        self.seed = int(seed)
        n = len(specs)
        # the seat room plays the opponents: their policies started in seat order before
        # the first decision with the batch loop's seat seeds, its turn limit
        self.seats = SeatTable(Game(board, n, seed=self.seed),
                               [None if q == seat else make_policy(s, board)
                                for q, s in enumerate(specs)], seed=self.seed,
                               max_turns=max_turns)
        self.game = self.seats.game
        self.log: list = []
        self.view = self.game.observation(seat)
        # the ticket deck as dealt: during the secret initial choice the count the seat
        # is shown stays there (the tickets earlier seats return would tell how many
        # they kept)
        self.setup_ticket_deck = int(self.view["ticket_deck_size"])
        self.public = PublicCards(board, n)
        for k, (q, code) in enumerate(decisions):
            self._replay(k, int(q), int(code))

    def _replay(self, k: int, q: int, code: int) -> None:
        damaged = f"the saved game does not replay at decision {k}"
        if self.over or self.game.current_player != q:
            raise ValueError(f"{damaged} (it was seat {q}'s, the game asks "
                             f"{'no one: it is over' if self.over else f'seat {self.game.current_player}'})")
        if q != self.seat:
            chosen = self._opponent_choice()
            if chosen != code:
                raise ValueError(f"{damaged}: {self.names[q]} (seat {q}) chose {code} then and "
                                 f"chooses {chosen} now; it was saved by another ttrsim or "
                                 "expert model (play it with that one, or start a new --out)")
        elif code not in set(map(int, self.game.legal_action_codes())):
            raise ValueError(f"{damaged}: the person's move {code} is not legal there")
        self._apply(code)

    @property
    def over(self) -> bool:
        """Over, or stopped at the turn limit as the batch loop stops a game."""
        return self.seats.over

    @property
    def decisions(self) -> list:
        """(seat, code) of every move played at this table."""
        return self.seats.decisions

    @property
    def person_to_move(self) -> bool:
        return not self.over and self.game.current_player == self.seat

    def _apply(self, code: int) -> None:
        q, before, k = self.game.current_player, self.view, len(self.decisions)
        self.seats.play(code)
        self.view = self.game.observation(self.seat)
        entry = log_entry(self.board, self.seat, q, code, before, self.view, k)
        if q != self.seat:
            self.public.seen(q, code, before, self.view, entry)
        self.log.append(entry)

    def _opponent_choice(self) -> int:
        return int(self.seats.choose())

    def check_person(self, code: int) -> None:
        """Refuse (422) a move of the person's that is not legal here."""
        if code not in set(map(int, self.game.legal_action_codes())):
            raise MoveRefused(f"move {code} is not legal here; choose one of the moves the "
                              "page offers", 422)

    def message(self, since: int) -> dict:
        codes = self.game.legal_action_codes() if self.person_to_move else []
        msg = seat_message(self.board, self.view, codes, names=self.names, log=self.log,
                           since=since, decision=len(self.decisions), over=self.over)
        if msg["phase"] == SETUP:
            msg["ticket_deck"] = self.setup_ticket_deck
        for q, p in enumerate(msg["players"]):
            if q != self.seat:
                p["known"] = self.public.named(q)
        msg["final"] = None
        if self.over:
            scores = self.game.scores()
            # at the end every seat shows its tickets (the rules' scoring)
            held = [p["tickets"] for p in self.game.state()["players"]]
            msg["final"] = final_scores(self.board, scores, self.seat, self.names,
                                        not self.game.is_over(), held)
            # as scored: a ticket joined through a station's borrowed route counts
            done = set(scores[self.seat]["completed"])
            for ticket in msg["tickets"]:
                ticket["done"] = ticket["index"] in done
        return msg


class PublicCards:
    """What the table knows of the other seats' cards from their moves, as players keep
    track: the cards taken from the face-up row (at least that many are still held,
    less what was played since), and the cards another seat's tunnel revealed (read from
    the discards: the revealed cards are discarded with the cards paid)."""

    def __init__(self, board, n: int):
        self.board = board
        self.known = [[0] * (WILD + 1) for _ in range(n)]
        # (a board of fewer colours has unused card types before the wild one)
        self.names = [card_name(board, t) if t == WILD or t < len(board.colors) else f"card {t}"
                      for t in range(WILD + 1)]
        self.tunnel = None     # (view before the claim, known before it, colour, wilds)

    def named(self, q: int) -> list:
        return [[self.names[t], k] for t, k in enumerate(self.known[q]) if k]

    def _paid(self, q, color: int, wild: int, total: int) -> list:
        """The cards of a payment of ``total`` cards, ``wild`` of them wild."""
        paid = [0] * (WILD + 1)
        paid[WILD] = total if color == WILD else wild
        if color != WILD:
            paid[color] = total - wild
        for t in range(WILD + 1):
            self.known[q][t] = max(0, self.known[q][t] - paid[t])
        return paid

    def _revealed(self, first: dict, after: dict, paid: list):
        d = [int(a) - int(b) - p for a, b, p in zip(after["discard"], first["discard"], paid)]
        if min(d) < 0 or not 0 < sum(d) <= 3:       # the discards went back into the deck
            return None
        return ", ".join(n for t, n in enumerate(self.names) for _ in range(d[t]))

    def seen(self, q: int, code: int, before: dict, after: dict, entry: dict) -> None:
        """Seat ``q`` (not the viewer) played ``code``; ``entry``: the viewer's log entry
        of it, told what the tunnel revealed."""
        a = Action.decode(code, self.board, dict(before, pending=[]))
        hand = before["players"][q]["hand_size"] - after["players"][q]["hand_size"]
        if a.kind == "draw_faceup":
            self.known[q][int(before["faceup"][a.slot])] += 1
        elif a.kind in ("claim", "station"):
            color = self.names.index(a.color)
            snapshot = list(self.known[q])
            paid = self._paid(q, color, int(a.wild or 0), hand)
            if a.kind == "claim" and self.board.route_tunnel[a.route]:
                if after["phase"] == "tunnel" and after["current"] == q:
                    self.tunnel = (before, snapshot, color, int(a.wild or 0))
                else:                 # no extra card asked: settled at once
                    shown = self._revealed(before, after, paid)
                    if shown:
                        entry["text"] += f"; the tunnel revealed {shown}"
        elif a.kind in ("tunnel_pay", "tunnel_decline") and self.tunnel is not None:
            first, snapshot, color, wild = self.tunnel
            self.tunnel = None
            total = first["players"][q]["hand_size"] - after["players"][q]["hand_size"]
            if a.kind == "tunnel_decline":
                self.known[q] = snapshot          # the cards played came back
                paid = [0] * (WILD + 1)
            else:
                self.known[q] = snapshot
                paid = self._paid(q, color, wild + int(a.wild or 0), total)
            shown = self._revealed(first, after, paid)
            if shown:
                entry["text"] += f"; the tunnel revealed {shown}"


class PlaySession:
    """A person's session: the run directory ``out``, the game being played and the
    ones before it. Methods are safe to call from several threads (one lock).

    ``board``, ``players``: the game; ``opponents``: one policy spec for every other
    seat, or one per other seat in seat order (default: the default policy); ``seat``:
    the person's; ``seed``: the run's seed (default: the saved run's, else drawn at
    random); ``name``: the person's label in the results. A directory holding another
    run, or the same run asked with other options, is refused naming the difference.
    """

    def __init__(self, board="europe", players: int = 4, opponents=None, *, out, seat: int = 0,
                 seed: int | None = None, name: str = DEFAULT_NAME,
                 max_turns: int = DEFAULT_MAX_TURNS):
        self.board = board = resolve_board(board)
        n = board.check_players(players)
        self.seat = check_int("seat (--seat)", seat, 0, n - 1, f" (seats of a {n}-player game)")
        self.specs = _seat_specs(opponents, n, self.seat)
        self.names = _names(board, self.specs, self.seat, name)
        self.max_turns = check_int("max_turns", max_turns, 1)
        self.path = Path(out)
        self._lockfile = None
        if not self.path.exists():
            with private_files():
                self.path.mkdir(parents=True)
        if self.path.is_dir():
            self._take_lock()
        saved = read_manifest(self.path) if (self.path / "manifest.json").is_file() else {}
        if seed is None:
            seed = saved.get("seed", secrets.randbits(63))
        seed = check_int("seed (--seed)", seed, 0)
        done = saved.get("games", 0) if saved.get("people") else 0
        self.cfg = RunConfig(board, self.names, done, seed, 1, False, False, self.max_turns,
                             self.names)
        self.manifest = dict(self.cfg.manifest(), people=[self.seat])
        self._lock = threading.Lock()
        try:
            with private_files():
                prepare_out(self.path, self.manifest, PLAY_IDENTITY,
                            what="run of people's games")
                finish_out(self.path, self.manifest)
                _tighten(self.path)
            self.saving_error = None
            self.results = _results(self.path, self.manifest["games"])
            self._open()
        except BaseException:
            self.close()
            raise

    def _take_lock(self) -> None:
        """Hold the folder itself locked (``flock``): one server plays a run at a time. The
        kernel lets the lock go when its process ends, however it ends, so a killed
        server's lock is no lock, and no lock file is left behind."""
        import fcntl

        fd = os.open(self.path, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise ValueError(f"{self.path} is being played by another ttrsim play (still "
                             "running); stop that one (Ctrl-C) or give another --out") from None
        self._lockfile = fd

    def close(self) -> None:
        """Let the run go (its lock), so that another session may open it."""
        if self._lockfile is not None:
            os.close(self._lockfile)
            self._lockfile = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # --- the game in progress ------------------------------------------------------
    def _deal_seed(self, g: int) -> int:
        return int(game_seeds(self.cfg.key, 1, g)[0])

    def _new_table(self, g: int, decisions=()) -> Table:
        return Table(self.board, self.specs, self.names, self.seat, self._deal_seed(g),
                     self.max_turns, decisions)

    def _open(self) -> None:
        """Resume the game saved in progress, or start the next one."""
        f = self.path / IN_PROGRESS
        done = self.manifest["games"]
        if not f.is_file():
            self.game_index, self.table = done, self._new_table(done)
            self._write(())
            return
        try:
            saved = json.loads(f.read_text())
            g, decisions = saved["game"], saved["decisions"]
            ok = (saved.get("format") == "ttrsim-play" and is_int(g) and
                  all(isinstance(d, list) and len(d) == 2 and all(map(is_int, d))
                      for d in decisions))
        except (ValueError, KeyError, TypeError):
            ok = False
        if not ok or g not in (done - 1, done):
            raise ValueError(f"{f} is not the game in progress of this run (damaged or edited); "
                             "move it away to start the next game")
        if saved.get("seed") != self._deal_seed(g):    # its decisions belong to another deal
            raise ValueError(f"{f} is a game dealt from another seed than this run's game {g} "
                             "(copied from another run, or edited): it would be replayed on "
                             "another deal; move it away to start the next game")
        self.game_index, self.table = g, self._new_table(g, decisions)
        self.saved = len(decisions)
        if g == done and self.table.over:      # stopped between its end and its saving
            with private_files():
                self._store()

    def _write(self, decisions) -> None:
        """Save the game in progress with ``decisions`` (NotSaved when it cannot be)."""
        state = {"format": "ttrsim-play", "version": PLAY_FORMAT, "game": self.game_index,
                 "seed": self.table.seed,
                 "decisions": [[int(q), int(c)] for q, c in decisions]}
        try:
            with private_files():
                atomic_write(self.path / IN_PROGRESS, lambda p: p.write_text(json.dumps(state)))
        except OSError as exc:
            raise NotSaved(self._not_saved(
                exc, f"The move is not played: the game stays as saved (decision "
                f"{self.saved}). Free space or make the folder writable, then play the "
                "move again")) from None
        self.saved = len(decisions)

    def _not_saved(self, exc: OSError, what: str) -> str:
        self.saving_error = f"not saved: cannot write in {self.path}: {_why(exc)}. {what}"
        return self.saving_error

    def _save_then_apply(self, code: int, policy: bool) -> None:
        """Play ``code`` (the seat to move's), saved first: a move the page is told of is
        on disk, and a move that cannot be saved is not played."""
        t = self.table
        try:
            self._write(t.decisions + [(t.game.current_player, code)])
        except NotSaved:
            if policy:            # the policy's state went on: back to the game as saved
                self.table = self._new_table(self.game_index, t.decisions)
            raise
        t._apply(code)
        self.saving_error = None
        if t.over:
            self._store_or_say()

    def _store_or_say(self) -> None:
        try:
            with private_files():
                self._store()
        except OSError as exc:
            raise NotSaved(self._not_saved(
                exc, f"Game {self.game_index} is over and saved, but not yet added to the "
                "run: free space or make the folder writable, then ask for the next game "
                "(it is added first)")) from None
        self.saving_error = None

    def _store(self) -> None:
        """Add the finished game to the run: its tables, made by the batch loop from its
        decisions, and the decisions themselves; then the manifest counts it."""
        g, t = self.game_index, self.table
        seats, codes = zip(*t.decisions)
        n = len(self.names)
        cfg = RunConfig(self.board, tuple(recorded_policies(codes, seats, n)), g + 1,
                        self.cfg.seed, 1, False, False, self.max_turns, self.names)
        tables = batch_tables(cfg, play(cfg, g, g + 1), g)
        want = [s["total"] for s in t.game.scores()]
        got = tables["games"].sort_values("seat")["score"].tolist()
        if got != want:        # the same decisions from the same deal: a bug if reached
            raise RuntimeError(f"game {g} played again from its decisions scores {got}, "
                               f"the game played {want}")
        tables["decisions"] = pd.DataFrame({
            "game": np.full(len(codes), g, dtype=np.int64),
            "decision": np.arange(len(codes), dtype=np.int32),
            "seat": np.asarray(seats, dtype=np.int8), "code": np.asarray(codes, dtype=np.int32)})
        write_batch(self.path, cfg, g, tables)
        self.manifest.update(games=g + 1, batches=g + 1)
        finish_out(self.path, self.manifest)
        self.results.append(_result(tables["games"]))

    # --- what the page asks -----------------------------------------------------------
    def page_data(self) -> dict:
        """What the page draws once: the board (as the viewer draws it), the seats' names
        and the person's seat."""
        b = self.board
        return {"title": f"{b.title or b.name}, {len(self.names)} players",
                "board": board_view(b), "names": list(self.names), "seat": self.seat,
                "attractions": [int(c) for c in b.attractions],
                "attraction_points": int(b.attraction_points)}

    def state(self, since=0) -> dict:
        """The person's message (``ttrsim.play.view.seat_message``) with the log from
        entry ``since`` on, and the session: game number, games finished, where saved."""
        with self._lock:
            return self._message(since)

    def _message(self, since) -> dict:
        since = 0 if not is_int(since) or since < 0 else int(since)
        msg = self.table.message(since)
        msg.update(game=self.game_index, games_done=self.manifest["games"], out=str(self.path),
                   saving_error=self.saving_error)
        if msg["over"]:
            msg["record"] = self.record()
        return msg

    def record(self) -> list:
        """The person's record against each opponent over the run's finished games: wins
        (finished ahead), ties and losses, by opponent name."""
        out = {}
        for ranks in self.results:
            me = ranks[self.seat]
            for q, r in enumerate(ranks):
                if q == self.seat:
                    continue
                row = out.setdefault(self.names[q], {"opponent": self.names[q], "games": 0,
                                                     "wins": 0, "ties": 0, "losses": 0})
                row["games"] += 1
                row["wins" if me < r else "ties" if me == r else "losses"] += 1
        return list(out.values())

    def _check(self, decision, since) -> None:
        if not is_int(decision):
            raise MoveRefused(f"malformed request: 'decision' must be a whole number (the "
                              f"decision counter), got {decision!r}", 400)
        if since is not None and not is_int(since):
            raise MoveRefused(f"malformed request: 'since' must be a whole number, got "
                              f"{since!r}", 400)
        now = len(self.table.decisions)
        if decision != now:
            raise MoveRefused(f"stale move: it was made for decision {decision}, the game is at "
                              f"decision {now}; the page shows the game as it is now", 409)

    def move(self, decision, code, since=None) -> dict:
        """The person plays ``code`` at decision ``decision`` (the counter the page was
        sent); refused (``MoveRefused``) when malformed, stale, out of turn or illegal,
        changing nothing. Saved before it returns."""
        with self._lock:
            self._check(decision, since)
            if not is_int(code):
                raise MoveRefused(f"malformed move: 'code' must be a whole number (an action "
                                  f"code the page was sent), got {code!r}", 400)
            t = self.table
            if t.over:
                raise MoveRefused("the game is over", 409)
            if not t.person_to_move:
                raise MoveRefused(f"it is not your move: {t.names[t.game.current_player]} "
                                  f"(seat {t.game.current_player}) is to move", 409)
            t.check_person(int(code))
            self._save_then_apply(int(code), policy=False)
            return self._message(since or 0)

    def advance(self, decision, since=None, *, until_person: bool = False,
                budget: float = 0.5) -> dict:
        """The policy to move at decision ``decision`` makes its move (one decision; with
        ``until_person``, the policies move until the person is to move, the game ends
        or ``budget`` seconds have passed); refused when it is the person's move, the
        game is over, or the request stale."""
        import time

        with self._lock:
            self._check(decision, since)
            t = self.table
            if t.over:
                raise MoveRefused("the game is over", 409)
            if t.person_to_move:
                raise MoveRefused("it is your move", 409)
            start = time.monotonic()
            while True:
                self._save_then_apply(t._opponent_choice(), policy=True)
                t = self.table
                if (not until_person or t.over or t.person_to_move
                        or time.monotonic() - start > budget):
                    return self._message(since or 0)

    def next_game(self, game) -> dict:
        """Start the game after game ``game`` (the one just finished)."""
        with self._lock:
            if not is_int(game):
                raise MoveRefused(f"malformed request: 'game' must be a whole number, got "
                                  f"{game!r}", 400)
            if game != self.game_index:
                raise MoveRefused(f"stale request: game {game} is not the one on the table "
                                  f"(game {self.game_index})", 409)
            if not self.table.over:
                raise MoveRefused(f"game {game} is not over yet", 409)
            if self.manifest["games"] == self.game_index:       # its storing failed: again
                self._store_or_say()
            table = self._new_table(self.game_index + 1)
            old = self.game_index, self.table
            self.game_index, self.table = self.game_index + 1, table
            try:
                self._write(())
            except NotSaved:
                self.game_index, self.table = old
                raise
            return self._message(0)


def _result(games: pd.DataFrame) -> list:
    """A finished game's finishing ranks, by seat (1: first; a shared rank: a tie)."""
    return [int(x) for x in games.sort_values("seat")["rank"]]


def _results(path: Path, done: int) -> list:
    """The ranks of the run's first ``done`` games (the games table of each)."""
    from ttrsim.results import part_path

    return [_result(pd.read_parquet(part_path(path, "games", g), columns=["seat", "rank"]))
            for g in range(done)]


def _tighten(path: Path) -> None:
    """The run's folder 0700 and its files 0600 (a run saved by an older ttrsim was
    readable by every user)."""
    path.chmod(0o700)
    for root, dirs, files in os.walk(path):
        for d in dirs:
            os.chmod(os.path.join(root, d), 0o700)
        for f in files:
            os.chmod(os.path.join(root, f), 0o600)


def _seat_specs(opponents, n: int, seat: int) -> list:
    """One spec per seat, None at the person's: ``opponents`` once (every other seat) or
    once per other seat in seat order."""
    if opponents is None or (isinstance(opponents, (list, tuple)) and not opponents):
        opponents = [DEFAULT_POLICY]
    elif isinstance(opponents, str):
        opponents = [opponents]
    opponents = list(opponents)
    if len(opponents) == 1:
        opponents = opponents * (n - 1)
    if len(opponents) != n - 1:
        raise ValueError(f"give --opponent once (every other seat) or {n - 1} times (one per "
                         f"other seat, in seat order), not {len(opponents)} times")
    return opponents[:seat] + [None] + opponents[seat:]


def _names(board, specs, seat: int, name) -> tuple:
    """The seats' names in the results: the person's label, the opponents' spec names."""
    others = [policy_name(s, board) if isinstance(s, str) else policy_name(s) for s in specs
              if s is not None]
    for s in specs:
        if s is not None:
            make_policy(s, board)          # unknown names and bad parameters, before a game
    if not isinstance(name, str) or not re.fullmatch(r"[\w.+-]+", name):
        raise ValueError(f"--name {name!r}: a name is letters, digits, '_', '.', '+' or '-', "
                         "e.g. alice")
    if name in others or name.partition(":")[0] in REGISTRY:
        raise ValueError(f"--name {name!r} is the name of a policy; the results must tell the "
                         "person from the policies: choose another name")
    return tuple(name if q == seat else policy_name(s, board) if isinstance(s, str)
                 else policy_name(s) for q, s in enumerate(specs))
