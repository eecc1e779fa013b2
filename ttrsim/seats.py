"""The seat: a policy spec parsed once into a value, the policy built from it, its seed and
its start; and the one Python game loop.

- :func:`seat_value` parses a spec once at the door: a built-in spec becomes a
  ``PolicySpec`` (a tree of values when it nests a search's rollout), a Python policy's
  reference stays its string (each process loads it where it builds it), an object stays
  itself. The run configuration carries these values to the workers, which build from
  them without parsing again.
- :func:`seat_seeds`: seat q of a game dealt from ``seed`` starts its policy with output
  q of the SplitMix64 sequence started at ``seed``, the batch loop's formula
  (``play_game`` in ``_batch``), so that a game played here is the game the batch loop
  plays from the same seed.
- :class:`Table` is one game and its seats played a decision at a time (the loop itself,
  an adapter such as OpenSpiel's bots, or the play server use it); :func:`play_game`
  plays a table to the end or the turn limit, asking a ``hook`` at every decision.
- :func:`play_match`: head-to-head games of specs through the batch loop, seats rotated
  (the strength scripts' matches).

No other module of ttrsim or ``scripts/`` loops over the decision step
(``tests/test_layers.py``).
"""
from __future__ import annotations

import sys
import time
import zlib
from dataclasses import dataclass, field

import numpy as np

# the seat seeds and the matches follow the batch loop: its owner is ttrsim.batches, which
# sits above this room; the seat takes the same names from the core
from ttrsim._batch import DEFAULT_MAX_TURNS, SCORE_COLS, game_seeds, play_batch
from ttrsim.game import Game, compile_board
from ttrsim.policies import (Policy, decide, make_policy, parse_spec, python_ref,
                             start_policy)

__all__ = ["DEFAULT_MAX_TURNS", "Match", "RANK", "Seat", "Table", "match_key", "play_game",
           "play_match", "seat_seeds", "seat_value"]

RANK = SCORE_COLS.index("rank")


def seat_value(spec):
    """A seat's spec parsed once into the value the runs carry: a ``PolicySpec`` for a
    built-in spec (a string or already a ``PolicySpec``), the string itself for a Python
    policy's reference (``"file.py:function"``, ``"module:callable"``), any other object
    (a ``Policy``, a callable) as it is. ValueError on a malformed built-in spec."""
    if isinstance(spec, str) and python_ref(spec) is None:
        return parse_spec(spec)
    return spec


def seat_seeds(seed: int, n_players: int) -> list[int]:
    """The seeds the seats of a game dealt from ``seed`` start their policies with: seat q
    gets output q of the SplitMix64 sequence started at ``seed``, as in the batch loop."""
    return [int(x) for x in game_seeds(np.uint64(int(seed) % 2**64), int(n_players))]


class Seat:
    """One seat's policy at one game: built (from a spec value, or a ``Policy`` instance
    used as it is) and started for ``seat`` with ``seed`` in ``game``'s current position;
    then :meth:`choose` asks it for its move in a position (the game is not changed)."""

    def __init__(self, policy, game: Game, seat: int, seed: int):
        self.policy = policy if isinstance(policy, Policy) else make_policy(policy, game.board)
        self.seat, self.seed = int(seat), int(seed)
        start_policy(self.policy, game, self.seat, np.uint64(self.seed % 2**64))

    def choose(self, game: Game) -> int:
        """The policy's choice for its seat in the current position of ``game``."""
        if game.current_player != self.seat:
            raise ValueError(f"the seat of {self.policy.spec!r} is {self.seat}, but seat "
                             f"{game.current_player} is to move")
        return int(decide(self.policy, game, start=False))


class Table:
    """One game and its seats, played a decision at a time.

    ``policies``: one per seat, each a spec value, a ``Policy`` instance (used as it is:
    give each seat its own) or None for a seat the caller plays (a hook, a person). Every
    seat with a policy is started in the current position of ``game`` with its seed
    (``seeds``; default :func:`seat_seeds` of ``seed``, the batch loop's), in seat order,
    before any decision, as the batch loop starts them. The game ends at its end or once
    ``max_turns`` turns have begun (:attr:`over`; :attr:`truncated` says which)."""

    def __init__(self, game: Game, policies, *, seed: int = 0, seeds=None,
                 max_turns: int = DEFAULT_MAX_TURNS):
        n = game.n_players
        if len(policies) != n:
            raise ValueError(f"a table of {n} seats needs {n} policies (None for a seat "
                             f"played from outside), got {len(policies)}")
        seeds = seat_seeds(seed, n) if seeds is None else [int(s) for s in seeds]
        self.game, self.max_turns = game, int(max_turns)
        self.decisions = []        # (seat, code) of every move played at this table
        self.seats = [None if p is None else Seat(p, game, q, seeds[q])
                      for q, p in enumerate(policies)]

    @classmethod
    def deal(cls, board, policies, seed: int, *, max_turns: int = DEFAULT_MAX_TURNS) -> "Table":
        """A fresh game of ``board`` dealt from ``seed``, the seats started from the same
        seed: the game the batch loop plays from ``seed`` with these policies, unrotated."""
        return cls(Game(board, len(policies), seed=int(seed)), policies, seed=seed,
                   max_turns=max_turns)

    @property
    def seat(self) -> int:
        """The seat to move."""
        return self.game.current_player

    @property
    def over(self) -> bool:
        return self.game.is_over() or self.game.turn >= self.max_turns

    @property
    def truncated(self) -> bool:
        """Whether play stopped at the turn limit before the game's end."""
        return not self.game.is_over() and self.game.turn >= self.max_turns

    def choose(self) -> int:
        """The choice of the policy of the seat to move (nothing is played)."""
        seat = self.seats[self.seat]
        if seat is None:
            raise ValueError(f"seat {self.seat} has no policy: its moves are played from outside")
        return seat.choose(self.game)

    @property
    def moves(self) -> int:
        """Moves played at this table."""
        return len(self.decisions)

    def play(self, code) -> None:
        """Play a move (a code or an ``Action``) for the seat to move."""
        seat = self.seat
        self.game.apply(code)
        self.decisions.append((seat, int(getattr(code, "code", code))))

    def step(self, hook=None) -> int:
        """One decision: ``hook(table)`` (when given) returns the move to play or None,
        then the seat's policy chooses. Returns the code played."""
        code = hook(self) if hook is not None else None
        if code is None:
            code = self.choose()
        code = int(code)
        self.play(code)
        return code


def play_game(table: Table, hook=None, *, stop=None) -> Table:
    """Play ``table`` to the end of its game or its turn limit, a decision at a time
    (``hook`` as :meth:`Table.step` takes it), or until ``stop(table)`` is true before a
    decision; returns the table."""
    while not table.over and not (stop is not None and stop(table)):
        table.step(hook)
    return table


def match_key(seed: int, text: str) -> int:
    """The key a match's games are dealt from: its seed and a text naming the match (its
    board and specs), so that every match plays games of its own."""
    return (seed * 1_000_003 + zlib.crc32(text.encode())) & (2**64 - 1)


@dataclass
class Match:
    """The games of a match: per game and seat the score parts (``scores``, columns
    ``SCORE_COLS``) and the slot of the spec that played the seat (``slot``), the turns
    of every game, the CPU and wall seconds of play, and ``counts``: per attribute asked
    for, its total over the policies of every slot (e.g. ``blocks``, ``total_decisions``).
    ``events``: the event rows (``claims``, ``offers``, ...) of a match played at once
    without ``summary``, else None."""

    specs: list
    scores: np.ndarray
    slot: np.ndarray
    turns: np.ndarray
    cpu_seconds: float
    seconds: float
    counts: dict = field(default_factory=dict)
    events: dict | None = None

    @property
    def games(self) -> int:
        return len(self.turns)

    def of(self, k: int = 0) -> np.ndarray:
        """The score rows of slot ``k`` (its spec), one per game, in game order."""
        return self.scores[self.slot == k]

    def others(self, k: int = 0) -> np.ndarray:
        """The score rows of the other slots: (games, players - 1, columns)."""
        return self.scores[self.slot != k].reshape(self.games, len(self.specs) - 1, -1)

    def wins(self, k: int = 0) -> int:
        """Games slot ``k`` ranks first in (a shared first place counts as a win)."""
        return int((self.of(k)[:, RANK] == 1).sum())

    def shared(self, k: int = 0) -> int:
        """Games whose first place slot ``k`` shares with another seat."""
        return int(((self.of(k)[:, RANK] == 1)
                    & (self.others(k)[:, :, RANK] == 1).any(axis=1)).sum())

    def summary(self, k: int = 0) -> dict:
        """Slot ``k``'s figures: its wins (a shared first place counts; ``shared`` those
        games), win share with its 95% Wilson interval (``low``, ``high``), mean score,
        share of its kept tickets completed, the games' mean turns and the CPU seconds."""
        from ttrsim.stats import wilson_interval

        mine, wins = self.of(k), self.wins(k)
        kept = int(mine[:, SCORE_COLS.index("tickets_kept")].sum())
        done = int(mine[:, SCORE_COLS.index("tickets_completed")].sum())
        lo, hi = wilson_interval(wins, self.games)
        return {"games": self.games, "wins": wins, "shared": self.shared(k),
                "win_share": wins / self.games, "low": float(lo), "high": float(hi),
                "mean_score": float(np.mean(mine[:, SCORE_COLS.index("score")])),
                "completed": done / kept if kept else None,
                "mean_turns": float(np.mean(self.turns)), "cpu_seconds": self.cpu_seconds}


def play_match(board, specs: list, games: int, key: int, *, first: int = 0,
               chunk: int | None = None, summary: bool = True, tune: dict | None = None,
               count: tuple = (), progress: bool = False) -> Match:
    """Games ``first .. first + games - 1`` of the match of ``specs`` (one per seat,
    seats rotated) on ``board``, dealt from ``key`` (game g from output g, so a match
    played in chunks, resumed or extended plays the same games as one played at once), in
    chunks of ``chunk`` games (fresh policies each; default all at once). ``tune`` maps a
    slot to weights for its policy's ``tune``; ``count`` names policy attributes to total
    per slot (0 for a policy without it); ``progress`` prints a line per chunk to stderr."""
    cb = compile_board(board)
    chunk = chunk or games
    if not summary and chunk < games:
        raise ValueError("a match's event rows are kept only when it is played at once")
    values = [seat_value(s) for s in specs]
    parts, cpu, wall, wins = [], 0.0, 0.0, 0
    counts = {name: np.zeros(len(specs), dtype=np.int64) for name in count}
    for start in range(first, first + games, chunk):
        n = min(chunk, first + games - start)
        policies = [make_policy(v, cb.board) for v in values]
        for k, weights in (tune or {}).items():
            policies[k].tune(**weights)
        t, tic = time.process_time(), time.perf_counter()
        out = play_batch(cb, len(specs), policies, game_seeds(key, n, start), start, True,
                         summary)
        cpu += time.process_time() - t
        wall += time.perf_counter() - tic
        for name in count:
            counts[name] += [int(getattr(p, name, 0)) for p in policies]
        parts.append(out)
        if progress:
            wins += int((out["scores"][out["slot"] == 0][:, RANK] == 1).sum())
            print(f"  {board} {specs}: {start + n - first}/{games} games, {wins} wins",
                  file=sys.stderr, flush=True)
    events = None if summary else {k: v for k, v in parts[0].items()
                                   if k in ("claims", "tunnels", "stations", "offers")}
    return Match(list(specs), np.concatenate([p["scores"] for p in parts]),
                 np.concatenate([p["slot"] for p in parts]),
                 np.concatenate([p["turns"] for p in parts]), cpu, wall, counts, events)
