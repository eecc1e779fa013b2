"""Type stub of the compiled counter-strategies `blocker` and `rush` (ext/ttrsim/_counter.pyx)."""
from typing import Any

from ttrsim._policy import Policy

class BlockerPolicy(Policy):
    tk_params: dict[str, Any]
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
    @property
    def params(self) -> dict[str, Any]: ...
    def last_block(self) -> tuple[int, float, float] | None: ...

class RushPolicy(Policy):
    min_len: int
    use_tunnels: int
    risk: float
    def __init__(self, min_len: int = ..., tunnels: int = ..., risk: float = ...,
                 spec: str | None = ...) -> None: ...
    @property
    def params(self) -> dict[str, Any]: ...
