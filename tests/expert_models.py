"""Model files for the tests of the `expert` policy: hand-made sections whose choice
is known, and random trees."""
import json

import numpy as np

from ttrsim._expert import FEATURES, FORMAT_VERSION

TABLES = [("usa", n) for n in (2, 3, 4, 5)] + [("europe", n) for n in (2, 3, 4, 5)] \
    + [("newyork", n) for n in (2, 3, 4)]
F = {name: i for i, name in enumerate(FEATURES)}


def section(feature, threshold=0.5):
    """One tree: candidates with `feature` > threshold score 1, the others 0."""
    return {"base": 0.0, "margin": 0.0,
            "trees": {"feature": [F[feature], -1, -1], "threshold": [threshold, 0, 0],
                      "left": [1, -1, -1], "right": [2, -1, -1], "value": [0.0, 0.0, 1.0],
                      "roots": [0]}}


def section_most_kept():
    """One tree scoring a keep set by how many tickets it keeps (0 to 3 for 1 to 4+)."""
    k = F["kept"]
    return {"base": 0.0, "margin": 0.0,
            "trees": {"feature": [k, -1, k, -1, k, -1, -1],
                      "threshold": [1.5, 0, 2.5, 0, 3.5, 0, 0],
                      "left": [1, -1, 3, -1, 5, -1, -1], "right": [2, -1, 4, -1, 6, -1, -1],
                      "value": [0, 0.0, 0, 1.0, 0, 2.0, 3.0], "roots": [0]}}


def model_file(tmp_path, feature, name="m.json", setup=None, turns=True, keep=None):
    """A model file whose sections prefer candidates with `feature` > 0.5 (the setup
    section prefers `setup` instead, when given; no turn section if not `turns`; the
    keep section after a ticket draw prefers `keep` ("most_kept": the most tickets
    kept), none when not given)."""
    d = {"format": "ttrsim-expert", "version": FORMAT_VERSION, "features": list(FEATURES),
         "setup": (section_most_kept() if setup == "most_kept" else section(setup or feature)),
         "turns": section(feature) if turns else None,
         "keep": (None if keep is None else section_most_kept() if keep == "most_kept"
                  else section(keep))}
    path = tmp_path / name
    path.write_text(json.dumps(d))
    return path, d


def random_model(tmp_path, seed, name="random.json"):
    """A model of 30 random trees of depth 3 in both sections: scores that vary with
    many features (for comparing the compiled choice with predict())."""
    rng = np.random.default_rng(seed)

    def section():
        feature, threshold, left, right, value, roots = [], [], [], [], [], []
        for _ in range(30):
            off = len(feature)
            roots.append(off)
            for i in range(15):                       # a full tree of depth 3, breadth first
                inner = i < 7
                feature.append(int(rng.integers(len(FEATURES))) if inner else -1)
                threshold.append(float(rng.choice([0.5, 1.5, 3.0, 0.2])) if inner else 0.0)
                left.append(off + 2 * i + 1 if inner else -1)
                right.append(off + 2 * i + 2 if inner else -1)
                value.append(0.0 if inner else float(rng.normal()))
        return {"base": 0.0, "margin": float(rng.uniform(0, 0.5)),
                "trees": {"feature": feature, "threshold": threshold, "left": left,
                          "right": right, "value": value, "roots": roots}}
    d = {"format": "ttrsim-expert", "version": FORMAT_VERSION, "features": list(FEATURES),
         "setup": section(), "turns": section(), "keep": section()}
    path = tmp_path / name
    path.write_text(json.dumps(d))
    return path
