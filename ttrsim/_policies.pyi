"""Type stub of the built-in compiled policies (ext/ttrsim/_policies.pyx)."""
from typing import Any

from ttrsim._policy import Policy

def decide(policy: Policy, game: Any, seed: int = ..., start: bool = ...) -> int: ...

class RandomPolicy(Policy):
    @property
    def params(self) -> dict[str, Any]: ...

class PlanningPolicy(Policy):
    use_stations: int
    use_tunnels: int
    risk: float
    draw_trains: int
    def __init__(self, stations: int = ..., tunnels: int = ..., risk: float = ..., draw: int = ...,
                 spec: str | None = ...) -> None: ...
    @property
    def params(self) -> dict[str, Any]: ...
    def tune(self, **weights: float) -> None: ...

class TicketsPolicy(PlanningPolicy): ...

class RoutesPolicy(PlanningPolicy):
    def __init__(self, tunnels: int = ..., risk: float = ..., min_len: int = ...,
                 spec: str | None = ...) -> None: ...

class GreedyPolicy(PlanningPolicy):
    def __init__(self, tunnels: int = ..., risk: float = ..., draw: int = ...,
                 spec: str | None = ...) -> None: ...
