"""Labelled decisions (:class:`Positions`) and their files: what the labelling produces,
the fitting learns from and the evaluation scores."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ttrsim._expert import FEATURES
from ttrsim.results import atomic_write

__all__ = ["Positions", "decisions", "from_lists", "join", "load_positions", "save_positions",
           "subset"]


@dataclass
class Positions:
    """Labelled decisions: the candidates' features ``X`` (rows; tickets' own choice is
    the first row of each decision), ``value`` (the search's mean playout value of the
    candidate relative to its decision; NaN where the search did not value it),
    ``chosen`` (1 on the row the search prefers), ``group`` (one id per decision, rows of
    a decision consecutive), ``game`` (one id per game or deal) and ``boards`` (one per
    decision)."""

    X: np.ndarray
    value: np.ndarray
    chosen: np.ndarray
    group: np.ndarray
    game: np.ndarray
    boards: list = field(default_factory=list)
    cpu_seconds: float = 0.0

    @property
    def decisions(self) -> int:
        return int(len(np.unique(self.group))) if len(self.group) else 0

    def concat(self, other: "Positions") -> "Positions":
        g0 = int(self.group.max()) + 1 if len(self.group) else 0
        m0 = int(self.game.max()) + 1 if len(self.game) else 0
        return Positions(np.vstack([self.X, other.X]), np.concatenate([self.value, other.value]),
                         np.concatenate([self.chosen, other.chosen]),
                         np.concatenate([self.group, other.group + g0]),
                         np.concatenate([self.game, other.game + m0]),
                         self.boards + other.boards, self.cpu_seconds + other.cpu_seconds)


def from_lists(X, value, chosen, group, game, boards, cpu) -> Positions:
    """Positions from per-decision lists of arrays (empty arrays when there is none)."""
    def cat(parts, dtype):
        return np.concatenate(parts) if parts else np.zeros(0, dtype)
    return Positions(np.vstack(X) if X else np.zeros((0, len(FEATURES)), np.float32),
                     cat(value, np.float32), cat(chosen, np.int8), cat(group, np.int64),
                     cat(game, np.int64), boards, cpu)


def join(parts: list) -> Positions:
    """``parts[0].concat(parts[1]).concat(...)`` in one copy: chained concats copy the
    rows once per part, which dominates with thousands of small tasks."""
    if len(parts) == 1:
        return parts[0]
    g0 = np.cumsum([0] + [int(p.group.max()) + 1 if len(p.group) else 0 for p in parts[:-1]])
    m0 = np.cumsum([0] + [int(p.game.max()) + 1 if len(p.game) else 0 for p in parts[:-1]])
    return Positions(np.vstack([p.X for p in parts]), np.concatenate([p.value for p in parts]),
                     np.concatenate([p.chosen for p in parts]),
                     np.concatenate([p.group + g for p, g in zip(parts, g0)]),
                     np.concatenate([p.game + m for p, m in zip(parts, m0)]),
                     [b for p in parts for b in p.boards], sum(p.cpu_seconds for p in parts))


def subset(data: Positions, mask: np.ndarray) -> Positions:
    """The rows of ``mask`` (whole decisions, by the caller's choice of mask)."""
    return Positions(data.X[mask], data.value[mask], data.chosen[mask], data.group[mask],
                     data.game[mask], [], data.cpu_seconds)


def decisions(data: Positions):
    """Row indices of each decision, in order (rows of a decision are consecutive)."""
    if not len(data.group):
        return []
    cuts = np.flatnonzero(data.group[1:] != data.group[:-1]) + 1
    return np.split(np.arange(len(data.group)), cuts)


def save_positions(p: Positions, path: Path, key: str = "") -> None:
    """Write ``p`` with the ``key`` it was labelled under to ``path`` (``.npz``),
    atomically: a reader sees the whole file or none of it."""
    def write(tmp):
        with open(tmp, "wb") as f:          # a file object: numpy adds no second suffix
            np.savez_compressed(f, X=p.X, value=p.value, chosen=p.chosen, group=p.group,
                                game=p.game, boards=np.array(p.boards),
                                cpu_seconds=p.cpu_seconds, key=np.array(key))
    atomic_write(Path(path), write)


def load_positions(path: Path, with_key: bool = False):
    """The positions saved at ``path`` (and with ``with_key`` the key they were labelled
    under)."""
    with np.load(path) as z:
        p = Positions(z["X"], z["value"], z["chosen"], z["group"], z["game"], list(z["boards"]),
                      float(z["cpu_seconds"]))
        key = str(z["key"]) if "key" in z.files else ""
    return (p, key) if with_key else p
