"""Type stub of the compiled rules fuzzer (ext/ttrsim/_fuzz.pyx)."""
from typing import Any

import numpy as np
import numpy.typing as npt

from ttrsim._engine import CompiledBoard
from ttrsim._policy import Policy

VIOLATION_MESSAGES: tuple[str, ...]
EDGE_CASES: tuple[str, ...]
ILLEGAL_CODE: int

class HoardPolicy(Policy): ...

class FaultyPolicy(Policy):
    after: int
    fail: bool
    vouch: bool
    def __init__(self, after: int = ..., fail: bool = ..., spec: str | None = ...,
                 vouch: bool = ...) -> None: ...
    @property
    def params(self) -> dict[str, Any]: ...

def fuzz_batch(cb: CompiledBoard, n_players: int, policies: list[Policy],
               seeds: npt.NDArray[np.uint64], max_turns: int = ...) -> dict[str, Any]: ...
