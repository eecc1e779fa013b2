"""Type stub of the compiled batch loop and one-game recorder (ext/ttrsim/_batch.pyx)."""
from typing import Any

import numpy as np
import numpy.typing as npt

from ttrsim._engine import CompiledBoard
from ttrsim._policy import Policy

CLAIM_COLS: tuple[str, ...]
TUNNEL_COLS: tuple[str, ...]
STATION_COLS: tuple[str, ...]
OFFER_COLS: tuple[str, ...]
SCORE_COLS: tuple[str, ...]
STAT_COLS: tuple[str, ...]
N_LENGTHS: int
TURN_BIN_WIDTH: int
DEFAULT_MAX_TURNS: int
RECORD_TUNNEL_COLS: tuple[str, ...]

def game_seeds(key: int, n: int, first: int = ...) -> npt.NDArray[np.uint64]: ...
def play_batch(cb: CompiledBoard, n_players: int, policies: list[Policy],
               seeds: npt.NDArray[np.uint64], first_game: int = ..., rotate: bool = ...,
               summary: bool = ..., max_turns: int = ..., check: bool = ...,
               profile: bool = ...) -> dict[str, Any]: ...
def play_recorded(cb: CompiledBoard, n_players: int, policies: list[Policy], seed: int,
                  game: int = ..., rotate: bool = ..., max_turns: int = ...) -> dict[str, Any]: ...
