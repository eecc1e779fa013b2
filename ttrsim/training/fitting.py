"""Fitting a section of the model file to labelled decisions: :func:`fit`."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ttrsim._expert import section_from_dict
from ttrsim.training.model_file import exact_trees, hist_trees
from ttrsim.training.positions import Positions

__all__ = ["fit", "centred", "fit_outcomes"]


def fit(data: Positions, seed: int = 0, *, trees: int = 40, depth: int = 4,
        learning_rate: float = 0.1, min_leaf: int = 40, histogram: bool = False,
        centre: bool = True) -> dict:
    """Fit gradient-boosted regression trees (scikit-learn's GradientBoostingRegressor;
    with ``histogram``, its HistGradientBoostingRegressor, which splits on binned
    features and fits millions of rows in minutes) to the labelled candidates' values
    (each relative to its decision's mean); return a section of a model file
    (``{"trees", "base", "margin"}``; ``make_model`` puts sections together).
    Deterministic for a seed. ``centre=False`` fits the values as they are: one row a
    decision labelled by its outcome (``generate_outcomes``), where a decision's mean
    is its own row's value."""
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
    y = centred(data.value, data.group) if centre else data.value.astype(np.float64)
    if np.ptp(y[known]) == 0:           # e.g. one row a decision, centred: all zero
        raise ValueError("no decision to learn from: every value equals its decision's mean "
                         "(rows labelled by outcomes, one a decision, need centre=False)")
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
    trees_ = hist_trees(reg) if histogram else exact_trees(reg)
    # uncentred, the baseline is part of the value (the mean outcome): kept, so that the
    # section predicts the outcome itself; centred sections keep base 0 as they always had
    one = data.X[known][:1]
    base = 0.0 if centre else float(reg.predict(one)[0] - section_from_dict(
        {"trees": trees_, "base": 0.0, "margin": 0.0}).predict(one)[0])
    section = {"trees": trees_, "base": base, "margin": 0.0,
               "fit": {"trees": int(trees), "depth": int(depth), "min_leaf": int(min_leaf),
                       "learning_rate": float(learning_rate), "seed": int(seed),
                       **({"histogram": True} if histogram else {}),
                       **({} if centre else {"centred": False}),
                       "rows": int(known.sum()),
                       "decisions": int(len(np.unique(data.group[known])))}}
    # the exported trees must rank candidates as the fitted model does
    raw = reg.predict(data.X[known][:2000])
    mine = section_from_dict(section).predict(data.X[known][:2000])
    if not np.allclose(raw - raw[0], mine - mine[0], atol=1e-6) or (
            not centre and not np.allclose(raw, mine, atol=1e-5)):
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


def fit_outcomes(data: dict, seed: int = 0, *, base="whole", trees: int = 60, depth: int = 6,
                 learning_rate: float = 0.1, min_leaf: int = 100, training=None,
                 hold_out: int = 0, errors: dict | None = None) -> dict:
    """A model file's content (``make_model``) learned from outcomes: for each decision
    kind of ``data`` ({"setup", "turns", "keep"}: ``generate_outcomes``' rows) histogram
    trees fitted to the final result of the candidate played (``fit`` with
    ``centre=False``: an action value, as DouZero's Monte-Carlo regression), so that play
    picks the candidate of the best predicted result; a kind with fewer than
    ``2 * min_leaf`` rows keeps ``base``'s section (a model name or file). The turn
    trees decide every turn (``max_trains`` 1000), with no margin or bias. ``hold_out``
    (> 0): the rows of every ``hold_out``-th game (``game % hold_out == 0``) are left
    out of the fit, and ``errors`` (a dict) receives per fitted kind the squared error
    of its section on them beside their variance."""
    import json

    from ttrsim.training.model_file import as_section, make_model, model_file
    from ttrsim.training.positions import subset

    old = json.loads(Path(model_file(base)).read_text(encoding="utf-8"))
    sections, counts = {}, {}
    for kind in ("setup", "turns", "keep"):
        rows = data.get(kind)
        counts[kind] = 0 if rows is None else int(len(rows.value))
        if counts[kind] < 2 * int(min_leaf):
            sections[kind] = old.get(kind)
            continue
        held = (rows.game % int(hold_out) == 0) if hold_out else np.zeros(counts[kind], bool)
        sections[kind] = fit(subset(rows, ~held), seed, trees=trees, depth=depth,
                             learning_rate=learning_rate, min_leaf=min_leaf, histogram=True,
                             centre=False)
        if errors is not None and held.any():
            test = subset(rows, held)
            errors[kind] = [float(np.mean((as_section(sections[kind]).predict(test.X)
                                           - test.value) ** 2)), float(np.var(test.value))]
    if sections["turns"] is not None and counts["turns"] >= 2 * int(min_leaf):
        sections["turns"] = dict(sections["turns"], max_trains=1000, margin=0.0)
    info = dict(training or {}, outcomes={"base": str(base) if "/" not in str(base)
                                          else Path(base).name, "rows": counts})
    return make_model(sections["setup"], sections["turns"], info, keep=sections["keep"])
