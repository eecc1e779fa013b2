"""One step of expert iteration against the field (docs/expert.md, "Trained against
the field").

1. label: games where one seat plays `expert` (the model of --model, default the
   shipped one) and the other seats are drawn in turn from --field (default: that
   expert itself, blocker, rush, tickets); every turn of the expert seat (from the first
   turn on: --max-trains 45) gets --playouts playouts per candidate from the search with
   that expert's rollouts (`training.generate_endgame(..., field=...)`); --games2 2-player
   and --games4 4-player games per board. The labels are saved in OUT/field-labels.npz
   (a rerun with the same arguments reuses them).
2. fit: the model's turn trees are kept and boosting goes on from them: --trees more
   histogram trees of depth --depth fitted to what the labels say beyond the kept trees
   (each candidate's label minus the kept trees' score, both relative to the decision's
   mean), appended to the section; the setup trees are the model's own. One model per
   count in --curve (the first k of the new trees), OUT/expert-field-k{k}.json.
3. measure: the value each model's choice gains over `tickets`' move on the held-out
   games' decisions (every fifth game), and, 2 players seat-rotated (--eval-games games,
   Wilson 95%), each model against blocker, tickets and the model it started from, and
   one seat against three blockers at 4 players, per board. Rows in OUT/field.json.
   --extra-labels adds the labels of other runs (other --seed) to the fit.

    nice -n 10 python scripts/field_iteration.py --out runs/field --jobs 1
"""
from __future__ import annotations

import argparse
import copy
import json
import sys
import time
from pathlib import Path

import numpy as np

from ttrsim._expert import default_model_path, load_model, section_from_dict
from ttrsim.results import update_json
from ttrsim.training import Positions, export, fit, label, make_model
from ttrsim.training.fitting import centred
from ttrsim.training.positions import join, load_positions, save_positions, subset

sys.path.insert(0, str(Path(__file__).parent))
from counter_strength import play  # noqa: E402

BOARDS = ("usa", "europe", "newyork")


def append_trees(old: dict, new: dict) -> dict:
    """The node arrays of two ensembles as one (new's indices shifted past old's)."""
    off = len(old["feature"])
    shift = lambda xs: [x + off if x >= 0 else -1 for x in xs]  # noqa: E731
    return {"feature": old["feature"] + new["feature"],
            "threshold": old["threshold"] + new["threshold"],
            "left": old["left"] + shift(new["left"]), "right": old["right"] + shift(new["right"]),
            "value": old["value"] + new["value"],
            "roots": old["roots"] + [r + off for r in new["roots"]]}


def first_trees(trees: dict, k: int) -> dict:
    """The first k trees of an ensemble's node arrays (trees are stored one after the
    other, so a prefix of the nodes)."""
    roots = trees["roots"][:k]
    end = trees["roots"][k] if k < len(trees["roots"]) else len(trees["feature"])
    return {key: (list(v[:end]) if key != "roots" else list(roots)) for key, v in trees.items()}


def gained(section, data: Positions) -> float:
    """Mean label of the candidate the section picks (row 0, tickets' move, gets the
    margin), over the decisions of `data`: the value gained over tickets' move."""
    scores = section.predict(data.X)
    out = []
    for g in np.unique(data.group):
        rows = np.flatnonzero(data.group == g)
        s = scores[rows].copy()
        s[0] += section.margin
        v = data.value[rows[int(np.argmax(s))]]
        out.append(0.0 if not np.isfinite(v) else float(v))
    return float(np.mean(out))


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--model", help="the model to start from (default: the shipped one)")
    ap.add_argument("--field", default="", help='";"-separated specs of the other seats '
                    '(default: "EXPERT;blocker;rush;tickets", EXPERT the --model expert)')
    ap.add_argument("--games2", type=int, default=150)
    ap.add_argument("--games4", type=int, default=60)
    ap.add_argument("--playouts", type=int, default=16)
    ap.add_argument("--max-trains", type=int, default=45)
    ap.add_argument("--trees", type=int, default=40)
    ap.add_argument("--curve", default="10,20,40")
    ap.add_argument("--depth", type=int, default=4)
    ap.add_argument("--min-leaf", type=int, default=200)
    ap.add_argument("--learning-rate", type=float, default=0.1)
    ap.add_argument("--eval-games", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--skip-eval", action="store_true")
    ap.add_argument("--extra-labels", type=Path, action="append", default=[],
                    help="another run's field-labels.npz (other seeds) to fit on as well; "
                         "its held-out games stay held out (repeatable)")
    return ap


def main(argv=None) -> int:
    ap = _parser()
    a = ap.parse_args(argv)
    model_path = str(Path(a.model).resolve()) if a.model else default_model_path()
    start = load_model(model_path)
    if start.turns is None:
        raise SystemExit(f"{model_path}: the model has no turn trees to go on from")
    expert = f"expert:model={model_path}"
    field = a.field or f"{expert};blocker;rush;tickets"
    a.out.mkdir(parents=True, exist_ok=True)
    rows_path = a.out / "field.json"

    def save(row):
        row = dict(row, date=time.strftime("%Y-%m-%d"))
        update_json(rows_path, lambda rows: rows + [row], default=[])
        print(json.dumps(row), flush=True)

    # 1. labels
    key = json.dumps([model_path, field, a.games2, a.games4, a.playouts, a.max_trains, a.seed])
    labels = a.out / "field-labels.npz"
    data = None
    if labels.exists():
        data, got = load_positions(labels, with_key=True)
        if got != key:
            data = None
    if data is None:
        parts = [(b, 2, a.games2) for b in BOARDS] + [(b, 4, a.games4) for b in BOARDS]
        parts = [p for p in parts if p[2] > 0]
        data = label("endgame", parts, seed=a.seed, n_jobs=a.jobs, playouts=a.playouts,
                     max_trains=a.max_trains, model=model_path, rollout_model=model_path,
                     field=field)
        save_positions(data, labels, key)
        save({"step": "label", "decisions": int(data.decisions), "rows": int(len(data.value)),
              "cpu_seconds": data.cpu_seconds, "field": field, "playouts": a.playouts})
    for extra in a.extra_labels:
        data = join([data, load_positions(extra)])     # numbered after these
    # 2. fit on the training games, boosting on from the kept turn trees
    held = (data.game % 5) == 0
    train, test = subset(data, ~held), subset(data, held)
    old_scores = start.turns.predict(train.X)
    resid = copy.copy(train)
    resid.value = (centred(train.value, train.group)
                   - centred(old_scores, train.group)).astype(np.float32)
    section_new = fit(resid, a.seed, trees=a.trees, depth=a.depth, min_leaf=a.min_leaf,
                      learning_rate=a.learning_rate, histogram=True)
    d = json.loads(Path(model_path).read_text())
    base = gained(start.turns, test)
    save({"step": "held_out", "trees_added": 0, "gain_per_decision": base,
          "decisions": int(test.decisions)})
    models = {0: model_path}
    for k in [int(x) for x in a.curve.split(",") if x.strip()]:
        k = min(k, a.trees)
        turns = dict(d["turns"])
        turns["trees"] = append_trees(d["turns"]["trees"], first_trees(section_new["trees"], k))
        turns["fit"] = dict(d["turns"].get("fit", {}),
                            field={"added_trees": k, "depth": a.depth, "min_leaf": a.min_leaf,
                                   "learning_rate": a.learning_rate, "field": field,
                                   "labels": int(train.decisions), "playouts": a.playouts})
        m = make_model(d["setup"], turns, dict(d.get("training", {}), field_from=model_path))
        path = export(m, a.out / f"expert-field-k{k}.json")
        models[k] = str(path.resolve())
        save({"step": "held_out", "trees_added": k,
              "gain_per_decision": gained(section_from_dict(turns), test),
              "decisions": int(test.decisions)})
    if a.skip_eval:
        return 0
    # 3. play
    for k, path in models.items():
        spec = f"expert:model={path}"
        for board in BOARDS:
            for others in (["blocker"], ["tickets"], ["blocker#0", "blocker#1", "blocker#2"]):
                save(dict(play(board, [spec] + others, a.eval_games, a.seed + 1), step="play",
                          trees_added=k))
            if k:
                save(dict(play(board, [spec, expert + "#start"], a.eval_games, a.seed + 1),
                          step="play", trees_added=k))
    return 0


if __name__ == "__main__":
    sys.exit(main())
