"""Type stub of the compiled policy interface (ext/ttrsim/_policy.pyx)."""
from typing import Any

from ttrsim.actions import PolicyError as PolicyError

class Policy:
    spec: str
    def __init__(self, spec: str | None = ...) -> None: ...
    def take_error(self) -> BaseException | None: ...

def check_layout() -> bool: ...

class PyPolicy(Policy):
    def __init__(self, target: Any, board: Any, spec: str | None = ...) -> None: ...
