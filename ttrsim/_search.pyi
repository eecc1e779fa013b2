"""Type stub of the compiled search (ext/ttrsim/_search.pyx)."""
from typing import Any, Callable, Sequence

import numpy as np

from ttrsim._policy import Policy

def search_params(playouts: int = ..., worlds: int = ..., c: float = ..., utility: float = ...,
                  claims: int = ..., draws: int = ..., z: float = ..., infer: float = ...,
                  ticket_draws: int = ..., phases: int = ..., rare: int = ...) -> dict[str, Any]: ...

class SearchPolicy(Policy):
    playouts: int
    rollout: str
    lead: str
    worlds: int
    c: float
    utility: float
    claims: int
    draws: int
    ticket_draws: int
    phases: int
    rare: int
    foes: str
    foe_policies: tuple[Policy, ...]
    scale: float
    infer: float
    z: float
    rollouts: tuple[Policy, ...]
    proposers: tuple[Policy, ...]
    n_cand: int
    chosen: int
    uniform: bool
    total_playouts: int
    total_decisions: int
    max_playouts: int
    def __init__(self, rollouts: Sequence[Policy], proposers: Sequence[Policy] = ...,
                 playouts: int = ..., rollout: str | None = ..., worlds: int = ...,
                 c: float = ..., utility: float = ..., claims: int = ..., draws: int = ...,
                 z: float = ..., infer: float = ..., ticket_draws: int = ..., phases: int = ...,
                 lead: str = ..., spec: str | None = ..., rare: int = ...,
                 foes: Sequence[Policy] = ..., foe_spec: str = ...) -> None: ...
    @property
    def params(self) -> dict[str, Any]: ...
    def init_args(self) -> dict[str, Any]: ...
    def last_decision(self) -> tuple[list[tuple[int, int, float, float, float, bool]], int]: ...
    def playout_outcomes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...

def analyse_position(policy: SearchPolicy, game: Any, seed: int = ...,
                     progress: Callable[[int, int], None] | None = ...) -> tuple[list[tuple[int, int, float, float, float, bool]], int]: ...
def value_actions(policy: SearchPolicy, game: Any, actions: Any,
                  seed: int = ...) -> tuple[list[tuple[int, int, float, float, float, bool]], int]: ...
def bench_playouts(policy: SearchPolicy, game: Any, n: int,
                   seed: int = ...) -> tuple[float, float, float, float]: ...
def _sampled_hands(game: Any, seat: int, seed: int, infer: float) -> list[list[int]]: ...
def _sample_world(game: Any, seat: int, seed: int, infer: float) -> tuple[int, list[list[int]]]: ...
