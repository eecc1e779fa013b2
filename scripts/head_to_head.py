"""Head-to-head games of policy specs, the one play loop of the strength scripts
(strength.py, counter_strength.py, expert_strength.py, search_strength.py,
field_iteration.py): imported by them as a module of scripts/, not run itself.

Game g of a match is dealt from output g of the match's key (``game_seeds``) and the
seats rotate with g, so a table played in chunks, resumed or extended plays the same
games as one played at once.
"""
from __future__ import annotations

import sys
import time
import zlib
from dataclasses import dataclass, field

import numpy as np

from ttrsim.batches import SCORE_COLS, game_seeds, play_batch
from ttrsim.game import compile_board
from ttrsim.policies import make_policy

RANK = SCORE_COLS.index("rank")


def match_key(seed: int, text: str) -> int:
    """The key a table's games are dealt from: its seed and a text naming the table (its
    board and specs), so that every table plays games of its own."""
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


def play_match(board: str, specs: list, games: int, key: int, *, first: int = 0,
               chunk: int | None = None, summary: bool = True, tune: dict | None = None,
               count: tuple = (), progress: bool = False) -> Match:
    """Games ``first .. first + games - 1`` of the match of ``specs`` (one per seat,
    seats rotated) on ``board``, dealt from ``key``, in chunks of ``chunk`` games (fresh
    policies each; default all at once). ``tune`` maps a slot to weights for its policy's
    ``tune``; ``count`` names policy attributes to total per slot (0 for a policy without
    it); ``progress`` prints a line per chunk to stderr."""
    cb = compile_board(board)
    chunk = chunk or games
    if not summary and chunk < games:
        raise ValueError("a match's event rows are kept only when it is played at once")
    parts, cpu, wall, wins = [], 0.0, 0.0, 0
    counts = {name: np.zeros(len(specs), dtype=np.int64) for name in count}
    for start in range(first, first + games, chunk):
        n = min(chunk, first + games - start)
        policies = [make_policy(s, cb.board) for s in specs]
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
