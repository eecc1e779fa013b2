"""Distilling a model's turns into fresh trees (:func:`distil`) and a draw head on top
of them (:func:`draw_head`): how the whole-game ``expert`` (docs/expert.md, "The whole
game") keeps the field model's turn play while it learns the ticket draws from the
search."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ttrsim._expert import FEATURES, load_model
from ttrsim.training.fitting import centred, fit
from ttrsim.training.positions import Positions, subset

__all__ = ["distil", "draw_head"]

DRAW = FEATURES.index("draw_tickets")


def distil(data: Positions, teacher, seed: int = 0, *, trees: int = 40, depth: int = 8,
           min_leaf: int = 50, learning_rate: float = 0.15) -> dict:
    """A fresh turns section: histogram trees fitted to the turn scores ``teacher`` (a
    model file or a shipped model's name) gives the candidates of ``data`` (its own
    values are not used: the rows are where the scores are asked, e.g. the teacher's
    and the student's positions, ``generate_student``)."""
    model = load_model(teacher)
    if model.turns is None:
        raise ValueError(f"the teacher {teacher!r} has no turns section to distil")
    scored = replace(data, value=model.turns.predict(data.X).astype(np.float32))
    section = fit(scored, seed, trees=trees, depth=depth, min_leaf=min_leaf,
                  learning_rate=learning_rate, histogram=True)
    section["fit"]["teacher"] = str(teacher)
    return section


def draw_head(labels: Positions, base: dict, seed: int = 0, *, trees: int = 8,
              depth: int = 3, min_leaf: int = 400, learning_rate: float = 0.1,
              bias: float = 0.0) -> dict:
    """The turns section ``base`` with ``trees`` more that score only the ticket-draw
    candidate: fitted, on the draw rows of ``labels`` (the search's values), to what
    the search says of the draw beyond what ``base`` says (both relative to their
    decision's mean; the head's mean over all draws is removed, ``bias`` sets the
    level: the section's ``draw_tickets`` bias). Each head tree hangs under a root
    that sends every other candidate to a leaf of 0, so no other score changes."""
    from ttrsim._expert import section_from_dict

    own = section_from_dict(base).predict(labels.X)
    resid = centred(labels.value, labels.group) - centred(own, labels.group)
    draws = (labels.X[:, DRAW] > 0.5) & np.isfinite(resid)
    if draws.sum() < 2 * min_leaf:
        raise ValueError(f"{int(draws.sum())} labelled ticket draws: too few for a head "
                         f"with leaves of {min_leaf} (label more games or lower min_leaf)")
    rows = subset(labels, draws)
    # one group: fit() centres within a group, and the head compares draws with draws
    rows = replace(rows, value=resid[draws].astype(np.float32),
                   group=np.zeros(int(draws.sum()), np.int64))
    head = fit(rows, seed, trees=trees, depth=depth, min_leaf=min_leaf,
               learning_rate=learning_rate, histogram=True)["trees"]
    merged = {k: list(v) for k, v in base["trees"].items()}
    bounds = list(head["roots"]) + [len(head["feature"])]
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        root = len(merged["feature"])
        merged["roots"].append(root)
        # root: draw_tickets <= 0.5 goes left to a leaf of 0, a draw right to the tree
        merged["feature"] += [DRAW, -1]
        merged["threshold"] += [0.5, 0.0]
        merged["left"] += [root + 1, -1]
        merged["right"] += [root + 2, -1]
        merged["value"] += [0.0, 0.0]
        shift = root + 2 - lo
        for j in range(lo, hi):
            merged["feature"].append(head["feature"][j])
            merged["threshold"].append(head["threshold"][j])
            merged["value"].append(head["value"][j])
            for side in ("left", "right"):
                c = head[side][j]
                merged[side].append(c + shift if c >= 0 else -1)
    fitted = dict(base.get("fit", {}), head={"trees": int(trees), "depth": int(depth),
                                             "min_leaf": int(min_leaf), "seed": int(seed),
                                             "draws": int(draws.sum())})
    return dict(base, trees=merged, bias={"draw_tickets": float(bias)}, fit=fitted)
