"""Type stub of the compiled one-game recorder (ext/ttrsim/_record.pyx)."""
from typing import Any

from ttrsim._engine import CompiledBoard
from ttrsim._policy import Policy

TUNNEL_COLS: tuple[str, ...]

def play_recorded(cb: CompiledBoard, n_players: int, policies: list[Policy], seed: int,
                  game: int = ..., rotate: bool = ..., max_turns: int = ...) -> dict[str, Any]: ...
