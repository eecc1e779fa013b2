"""Type stub of the compiled counter-strategies `blocker` and `rush` (ext/ttrsim/_counter.pyx)."""
from typing import Any

from ttrsim._policies import PlanFollower

class BlockerPolicy(PlanFollower):
    max_len: int
    margin: float
    single: float
    last_route: int
    last_value: float
    last_cost: float
    blocks: int
    def __init__(self, max_len: int = ..., margin: float = ..., single: float = ...,
                 stations: int = ..., tunnels: int = ..., risk: float = ..., draw: int = ...,
                 spec: str | None = ...) -> None: ...
    def own_params(self) -> dict[str, Any]: ...
    def last_block(self) -> tuple[int, float, float] | None: ...

class RushPolicy(PlanFollower):
    min_len: int
    def __init__(self, min_len: int = ..., tunnels: int = ..., risk: float = ...,
                 spec: str | None = ...) -> None: ...
    def own_params(self) -> dict[str, Any]: ...
