"""Type stub of the compiled `expert` policy and its model (ext/ttrsim/_expert.pyx)."""
from typing import Any

import numpy as np

from ttrsim._policy import Policy

FEATURES: tuple[str, ...]
FORMAT: str
FORMAT_VERSION: int
DEFAULT_MODEL: str

class ModelFileError(ValueError): ...

class TreeModel:
    base: float
    tickets_bonus: float
    path: str
    meta: dict[str, Any]
    @property
    def n_trees_(self) -> int: ...
    @property
    def n_nodes_(self) -> int: ...
    def predict(self, X: np.ndarray) -> np.ndarray: ...

def model_from_dict(d: dict[str, Any], path: str = ...) -> TreeModel: ...
def default_model_path() -> str: ...
def load_model(path: str | None = ...) -> TreeModel: ...

class ExpertPolicy(Policy):
    model_path: str
    model: TreeModel
    def __init__(self, model: str = ..., spec: str | None = ...) -> None: ...
    @property
    def params(self) -> dict[str, Any]: ...
    def start(self, game: Any, seat: int, seed: int = ...) -> None: ...
    def candidates(self, game: Any) -> tuple[np.ndarray, np.ndarray]: ...
