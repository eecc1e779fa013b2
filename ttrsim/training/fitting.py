"""Fitting a section of the model file to labelled decisions: :func:`fit`."""
from __future__ import annotations

import numpy as np

from ttrsim._expert import section_from_dict
from ttrsim.training.model_file import exact_trees, hist_trees
from ttrsim.training.positions import Positions

__all__ = ["fit", "centred"]


def fit(data: Positions, seed: int = 0, *, trees: int = 40, depth: int = 4,
        learning_rate: float = 0.1, min_leaf: int = 40, histogram: bool = False) -> dict:
    """Fit gradient-boosted regression trees (scikit-learn's GradientBoostingRegressor;
    with ``histogram``, its HistGradientBoostingRegressor, which splits on binned
    features and fits millions of rows in minutes) to the labelled candidates' values
    (each relative to its decision's mean); return a section of a model file
    (``{"trees", "base", "margin"}``; ``make_model`` puts sections together).
    Deterministic for a seed."""
    try:
        from sklearn.ensemble import GradientBoostingRegressor, HistGradientBoostingRegressor
    except ImportError:
        raise ImportError("training the expert needs scikit-learn: pip install 'ttrsim[train]'") from None
    known = np.isfinite(data.value)
    if known.sum() < 2 or np.ptp(data.value[known]) == 0:
        raise ValueError("no decision to learn from: generate more positions")
    # Each row's value relative to its decision's mean: only the ranking within a
    # decision matters, and the mean of all its rows is a less noisy reference than one
    # row (tickets' choice; held-out, this fitted end-game turns better).
    y = centred(data.value, data.group)
    if histogram:
        reg = HistGradientBoostingRegressor(
            max_iter=int(trees), max_depth=int(depth), max_leaf_nodes=None,
            learning_rate=float(learning_rate), min_samples_leaf=int(min_leaf),
            early_stopping=False, random_state=int(seed))
    else:
        reg = GradientBoostingRegressor(n_estimators=int(trees), max_depth=int(depth),
                                        learning_rate=float(learning_rate), subsample=1.0,
                                        min_samples_leaf=int(min_leaf), random_state=int(seed))
    reg.fit(data.X[known], y[known])
    section = {"trees": hist_trees(reg) if histogram else exact_trees(reg),
               "base": 0.0, "margin": 0.0,
               "fit": {"trees": int(trees), "depth": int(depth), "min_leaf": int(min_leaf),
                       "learning_rate": float(learning_rate), "seed": int(seed),
                       **({"histogram": True} if histogram else {}),
                       "rows": int(known.sum()),
                       "decisions": int(len(np.unique(data.group[known])))}}
    # the exported trees must rank candidates as the fitted model does
    raw = reg.predict(data.X[known][:2000])
    mine = section_from_dict(section).predict(data.X[known][:2000])
    if not np.allclose(raw - raw[0], mine - mine[0], atol=1e-6):
        import sklearn
        raise RuntimeError("exported trees disagree with scikit-learn's predictions "
                           f"(scikit-learn {sklearn.__version__})")
    return section


def centred(value: np.ndarray, group: np.ndarray) -> np.ndarray:
    """``value`` minus the mean of the finite values of its group (NaN stays NaN)."""
    known = np.isfinite(value)
    ids, inv = np.unique(group, return_inverse=True)
    sums = np.bincount(inv, weights=np.where(known, value, 0.0), minlength=len(ids))
    counts = np.bincount(inv, weights=known.astype(np.float64), minlength=len(ids))
    return value - (sums / np.maximum(counts, 1))[inv]
