"""The expert model file, written from Python: the one place beside its compiled reader.

The compiled reader (``ttrsim._expert``: ``model_from_dict``, ``section_from_dict``,
``load_model``) defines the format (:data:`FORMAT`, :data:`FORMAT_VERSION`, the
:data:`FEATURES` a node may test) and refuses any file it could not play; this module
builds what it reads (docs/expert.md, "The model file"): one section per decision kind
from fitted trees (``exact_trees``, ``hist_trees``), the file's content
(:func:`make_model`, checked by the reader before it is returned) and its bytes
(:func:`export`, atomic, the same model giving the same bytes). The reader's own names a
script needs are public here: where a model name's file is (``model_file``,
``default_model_path``), a file read and checked (``load_model``), a section checked
(``section_from_dict``).
"""
from __future__ import annotations

import json
from pathlib import Path

from ttrsim._expert import (FEATURES, FORMAT, FORMAT_VERSION, default_model_path, load_model,
                            model_file, model_from_dict, section_from_dict)
from ttrsim.policies import PolicySpec, policy_spec
from ttrsim.results import atomic_write

__all__ = ["FEATURES", "FORMAT", "FORMAT_VERSION", "as_section", "default_model_path",
           "append_trees", "exact_trees", "expert_spec", "export", "first_trees", "hist_trees", "load_model", "make_model",
           "model_file", "section_from_dict"]


def expert_spec(model) -> PolicySpec:
    """The policy spec (a value) of ``expert`` playing the model file ``model`` (None: the
    shipped one)."""
    return policy_spec("expert") if model is None else policy_spec("expert", model=str(Path(model).resolve()))


def exact_trees(reg) -> dict:
    """The node arrays of a fitted GradientBoostingRegressor (its public ``tree_``s)."""
    feature, threshold, left, right, value, roots = [], [], [], [], [], []
    for est in reg.estimators_[:, 0]:
        t = est.tree_
        off = len(feature)
        roots.append(off)
        leaf = t.children_left < 0
        feature += [int(f) if not lf else -1 for f, lf in zip(t.feature, leaf)]
        threshold += [float(x) if not lf else 0.0 for x, lf in zip(t.threshold, leaf)]
        left += [int(c) + off if not lf else -1 for c, lf in zip(t.children_left, leaf)]
        right += [int(c) + off if not lf else -1 for c, lf in zip(t.children_right, leaf)]
        value += [float(v) * reg.learning_rate for v in t.value[:, 0, 0]]
    return {"feature": feature, "threshold": threshold, "left": left, "right": right,
            "value": value, "roots": roots}


def hist_trees(reg) -> dict:
    """The node arrays of a fitted HistGradientBoostingRegressor. scikit-learn keeps
    them in a private attribute (``_predictors``: node records with feature_idx,
    num_threshold, left, right, is_leaf and value, the learning rate applied; no
    feature is ever missing here); ``fit`` checks the exported trees against the
    regressor's predictions, so a change there is an error, never a different model."""
    feature, threshold, left, right, value, roots = [], [], [], [], [], []
    for (pred,) in reg._predictors:
        nd = pred.nodes
        off = len(feature)
        roots.append(off)
        leaf = nd["is_leaf"].astype(bool)
        feature += [-1 if lf else int(f) for f, lf in zip(nd["feature_idx"], leaf)]
        threshold += [0.0 if lf else float(x) for x, lf in zip(nd["num_threshold"], leaf)]
        left += [-1 if lf else int(c) + off for c, lf in zip(nd["left"], leaf)]
        right += [-1 if lf else int(c) + off for c, lf in zip(nd["right"], leaf)]
        value += [float(v) if lf else 0.0 for v, lf in zip(nd["value"], leaf)]
    return {"feature": feature, "threshold": threshold, "left": left, "right": right,
            "value": value, "roots": roots}


def as_section(section):
    """The compiled TreeModel of a section dict (a TreeModel is returned as it is)."""
    if isinstance(section, dict):
        return section_from_dict(section)
    return section


def first_trees(trees: dict, k: int) -> dict:
    """The first k trees of an ensemble's node arrays (trees are stored one after the
    other, so a prefix of the nodes): the same fit stopped after k rounds of boosting."""
    roots = trees["roots"][:k]
    end = trees["roots"][k] if k < len(trees["roots"]) else len(trees["feature"])
    return {key: (list(v[:end]) if key != "roots" else list(roots)) for key, v in trees.items()}


def append_trees(trees: dict, more: dict, scale: float = 1.0) -> dict:
    """The node arrays of ``trees`` followed by those of ``more``, its leaf values times
    ``scale``: an ensemble that scores ``trees``' score plus ``scale`` times ``more``'s
    (e.g. turn trees learned from outcomes added to a distilled model's, weighted)."""
    off = len(trees["feature"])

    def moved(nodes):
        return [int(c) + off if c >= 0 else -1 for c in nodes]
    return {"feature": list(trees["feature"]) + list(more["feature"]),
            "threshold": list(trees["threshold"]) + list(more["threshold"]),
            "left": list(trees["left"]) + moved(more["left"]),
            "right": list(trees["right"]) + moved(more["right"]),
            "value": list(trees["value"]) + [float(v) * float(scale) for v in more["value"]],
            "roots": list(trees["roots"]) + [int(r) + off for r in more["roots"]]}


def make_model(setup: dict, turns: dict | None = None, training: dict | None = None,
               keep: dict | None = None) -> dict:
    """The content of a model file from its sections (``fit``'s results): ``setup``
    chooses initial tickets, ``turns`` (optional) the moves of a turn, ``keep``
    (optional) the tickets kept after a draw."""
    model = {"format": FORMAT, "version": FORMAT_VERSION, "features": list(FEATURES),
             "setup": setup, "turns": turns, "keep": keep, "training": dict(training or {})}
    model_from_dict(model)                      # refuse what could not be loaded
    return model


def export(model: dict, path) -> Path:
    """Write a model (``make_model``) as a JSON model file, atomically; the same model
    gives the same bytes."""
    path = Path(path)
    text = json.dumps(model, sort_keys=True, separators=(",", ":")) + "\n"
    atomic_write(path, lambda p: p.write_text(text, encoding="utf-8"))
    return path
