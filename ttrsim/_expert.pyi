"""Type stub of the compiled `expert` policy and its model (ext/ttrsim/_expert.pyx)."""
from typing import Any

import numpy as np

from ttrsim._policies import PlanFollower

FEATURES: tuple[str, ...]
FEATURES4: tuple[str, ...]
KINDS: tuple[str, ...]
RECORD_KINDS: tuple[str, ...]
EXPLORE_SALT: int
FORMAT: str
FORMAT_VERSION: int
FORMAT_VERSIONS: tuple[int, ...]
DEFAULT_MODEL: str
SHIPPED_MODELS: dict[str, str]

class ModelFileError(ValueError): ...

class TreeModel:
    base: float
    margin: float
    max_trains: int
    widest: int
    @property
    def n_trees_(self) -> int: ...
    @property
    def n_nodes_(self) -> int: ...
    @property
    def bias(self) -> dict[str, float]: ...
    def offsets(self, X: np.ndarray) -> np.ndarray: ...
    def check_width(self, n: int) -> None: ...
    def pick(self, X: np.ndarray) -> int: ...
    def predict(self, X: np.ndarray) -> np.ndarray: ...

class ExpertModel:
    setup: TreeModel
    turns: TreeModel | None
    keep: TreeModel | None
    version: int
    path: str
    meta: dict[str, Any]

def section_from_dict(sec: dict[str, Any], path: str = ..., name: str = ...) -> TreeModel: ...
def model_from_dict(d: dict[str, Any], path: str = ...) -> ExpertModel: ...
def default_model_path(name: str | None = ...) -> str: ...
def model_file(model: str | None = ...) -> str: ...
def load_model(path: str | None = ...) -> ExpertModel: ...

class ExpertPolicy(PlanFollower):
    model_path: str
    model: ExpertModel
    record: bool
    epsilon: float
    def __init__(self, model: str = ..., stations: int = ..., tunnels: int = ...,
                 risk: float = ..., draw: int = ..., reach: int = ..., wide: int = ...,
                 record: int = ..., epsilon: float = ..., spec: str | None = ...) -> None: ...
    def own_params(self) -> dict[str, Any]: ...
    @property
    def games_started(self) -> int: ...
    def recorded(self, clear: bool = ...) -> dict[str, np.ndarray]: ...
    def start(self, game: Any, seat: int, seed: int = ...) -> None: ...
    def candidates(self, game: Any) -> tuple[np.ndarray, np.ndarray]: ...
