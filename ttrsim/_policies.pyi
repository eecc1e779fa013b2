"""Type stub of the built-in compiled policies (ext/ttrsim/_policies.pyx)."""
from typing import Any

from ttrsim._policy import Policy

def decide(policy: Policy, game: Any, seed: int = ..., start: bool = ...,
           via_ref: bool = ...) -> int: ...
def draw_values(policy: PlanningPolicy, game: Any, seed: int = ...) -> tuple[float, float]: ...
def keep_memo_entries() -> int: ...
def clear_keep_memos() -> None: ...
def board_tables_count() -> int: ...

class KeepMemo: ...
class BoardTables: ...

class RandomPolicy(Policy):
    @property
    def params(self) -> dict[str, Any]: ...

class PlanningPolicy(Policy):
    use_stations: int
    use_tunnels: int
    risk: float
    draw_trains: int
    alpha: float
    sigma: float
    globe: float
    draw_gain: float
    draw_rate: float
    draw_behind: float
    end_horizon: float
    wild_value: float
    fallbacks: int
    def __init__(self, stations: int = ..., tunnels: int = ..., risk: float = ..., draw: int = ...,
                 spec: str | None = ...) -> None: ...
    @property
    def params(self) -> dict[str, Any]: ...
    def tune(self, **weights: float) -> None: ...
    def current_plan(self) -> dict[str, Any]: ...

class TicketsPolicy(PlanningPolicy): ...

class RoutesPolicy(PlanningPolicy):
    min_len: int
    def __init__(self, tunnels: int = ..., risk: float = ..., min_len: int = ...,
                 spec: str | None = ...) -> None: ...

class GreedyPolicy(PlanningPolicy):
    claim_share: float
    def __init__(self, tunnels: int = ..., risk: float = ..., draw: int = ...,
                 spec: str | None = ...) -> None: ...
