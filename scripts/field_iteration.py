"""One step of expert iteration on chosen boards against the field (docs/expert-history.md,
"Trained against the field" and "USA 1910").

1. label: games on each of --boards where one seat plays `expert` (the model of --model,
   default the shipped one) and the other seats are drawn in turn from --field (default:
   that expert itself, blocker, rush, tickets); every turn of the expert seat (from the
   first turn on: --max-trains 45) gets --playouts playouts per candidate from the search
   with that expert's rollouts (`training.generate_endgame(..., field=...)`); --games2
   2-player and --games4 4-player games per board, saved in OUT/field-labels.npz. With
   --setup N, also N initial ticket choices per board at 2, 3 and 4 players, every keep
   set valued with --setup-playouts playouts of that expert's rollouts
   (`training.generate_setup`), saved in OUT/setup-labels.npz. A rerun with the same
   arguments reuses the labels.
2. fit: the model's trees are kept and boosting goes on from them: --trees more histogram
   trees of depth --depth fitted to what the turn labels say beyond the kept turn trees
   (each candidate's label minus the kept trees' score, both relative to the decision's
   mean), appended to the section; with --setup the same for the setup section
   (--setup-trees, --setup-depth, --setup-min-leaf). One model per entry of --curve:
   "K" appends the first K new turn trees, "S:K" also the first S new setup trees
   (OUT/expert-field-kK.json, OUT/expert-field-sS-kK.json).
3. measure: the value each model's choice gains over `tickets`' move on the held-out
   decisions (every fifth game or deal), and, seat-rotated (--eval-games games, Wilson
   95%), on each of --eval-boards (default --boards): each model against blocker, against
   tickets and against the model it started from at 2 players, and one seat against three
   blockers and against three tickets at 4 players. Rows in OUT/field.json.
   --extra-labels / --extra-setup-labels add the labels of other runs (other seeds or
   boards) to the fit; their held-out games stay held out.

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

from ttrsim.results import update_json
from ttrsim.seats import match_key, play_match
from ttrsim.training import Positions, export, fit, label, make_model
from ttrsim.training.fitting import centred
from ttrsim.training.model_file import load_model, model_file, section_from_dict
from ttrsim.training.positions import join, load_positions, save_positions, subset

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


def extended(section: dict, new: dict, k: int, meta: dict) -> dict:
    """A model file's `section` with the first k trees of `new` appended, and `meta` (how
    they were made) under its fit's "field"."""
    out = dict(section)
    out["trees"] = append_trees(section["trees"], first_trees(new["trees"], k))
    out["fit"] = dict(section.get("fit", {}), field=meta)
    return out


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
    ap.add_argument("--model", help="the model to start from: a file or a shipped model's name "
                    "(default: the shipped one)")
    ap.add_argument("--boards", default=",".join(BOARDS),
                    help="comma-separated boards the labels come from (default: %(default)s)")
    ap.add_argument("--eval-boards", default="", help="boards the models play on (default: --boards)")
    ap.add_argument("--field", default="", help='";"-separated specs of the other seats '
                    '(default: "EXPERT;blocker;rush;tickets", EXPERT the --model expert)')
    ap.add_argument("--games2", type=int, default=150)
    ap.add_argument("--games4", type=int, default=60)
    ap.add_argument("--playouts", type=int, default=16)
    ap.add_argument("--max-trains", type=int, default=45)
    ap.add_argument("--wide", type=int, choices=(0, 1), default=1,
                    help="1: label the search's whole turn candidates (expert:wide=1, as the "
                         "shipped trees were trained); 0: the candidates expert plays by default")
    ap.add_argument("--trees", type=int, default=40)
    ap.add_argument("--curve", default="10,20,40",
                    help='models to make: "K" (K new turn trees) or "S:K" (and S new setup trees)')
    ap.add_argument("--depth", type=int, default=4)
    ap.add_argument("--min-leaf", type=int, default=200)
    ap.add_argument("--learning-rate", type=float, default=0.1)
    ap.add_argument("--setup", type=int, default=0,
                    help="initial ticket choices labelled per board at 2, 3 and 4 players "
                         "(default 0: the setup trees stay the model's own)")
    ap.add_argument("--setup-playouts", type=int, default=128)
    ap.add_argument("--setup-trees", type=int, default=40)
    ap.add_argument("--setup-depth", type=int, default=4)
    ap.add_argument("--setup-min-leaf", type=int, default=100)
    ap.add_argument("--eval-games", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--skip-eval", action="store_true")
    ap.add_argument("--extra-labels", type=Path, action="append", default=[],
                    help="another run's field-labels.npz (other seeds or boards) to fit on as "
                         "well; its held-out games stay held out (repeatable)")
    ap.add_argument("--extra-setup-labels", type=Path, action="append", default=[],
                    help="another run's setup-labels.npz, the same way (repeatable)")
    return ap


def _curve(text: str, setup: bool) -> list:
    """--curve as (setup trees, turn trees) pairs."""
    out = []
    for item in (x.strip() for x in text.split(",")):
        if not item:
            continue
        s, _, k = item.rpartition(":")
        try:
            pair = (int(s) if s else 0, int(k))
        except ValueError:
            raise SystemExit(f"--curve: {item!r} is not K or S:K (numbers of trees)") from None
        if pair[0] and not setup:
            raise SystemExit(f"--curve: {item!r} adds setup trees, which need --setup N")
        out.append(pair)
    return out


def _labels(path: Path, key: str, make):
    """The positions saved at `path` under `key`, or `make()`'s, saved there."""
    if path.exists():
        data, got = load_positions(path, with_key=True)
        if got == key:
            return data, False
    data = make()
    save_positions(data, path, key)
    return data, True


def _residual_fit(section, data: Positions, seed: int, **kw):
    """Trees fitted to what `data`'s labels say beyond `section`'s scores, on the
    training part (games not divisible by 5); also the held-out part."""
    held = (data.game % 5) == 0
    train, test = subset(data, ~held), subset(data, held)
    resid = copy.copy(train)
    resid.value = (centred(train.value, train.group)
                   - centred(section.predict(train.X), train.group)).astype(np.float32)
    return fit(resid, seed, histogram=True, **kw), train, test


def _label_step(a, boards, model_path: str, field: str, save):
    """Step 1: the turn labels (and with --setup the setup labels), made or reused, with
    the extra runs' labels joined after them."""
    key = json.dumps([model_path, field, a.games2, a.games4, a.playouts, a.max_trains, a.seed]
                     + ([boards] if boards != list(BOARDS) else [])
                     + ([] if a.wide else ["narrow"]))
    parts = [(b, 2, a.games2) for b in boards] + [(b, 4, a.games4) for b in boards]
    data, made = _labels(a.out / "field-labels.npz", key, lambda: label(
        "endgame", [p for p in parts if p[2] > 0], seed=a.seed, n_jobs=a.jobs,
        playouts=a.playouts, max_trains=a.max_trains, model=model_path,
        rollout_model=model_path, field=field, wide=bool(a.wide)))
    if made:
        save({"step": "label", "decisions": int(data.decisions), "rows": int(len(data.value)),
              "cpu_seconds": data.cpu_seconds, "field": field, "playouts": a.playouts,
              "boards": boards, "wide": a.wide})
    for extra in a.extra_labels:
        data = join([data, load_positions(extra)])     # numbered after these
    if a.setup <= 0:
        return data, None
    skey = json.dumps(["setup", model_path, a.setup, a.setup_playouts, a.seed, boards])
    setup, made = _labels(a.out / "setup-labels.npz", skey, lambda: label(
        "setup", [(b, n, a.setup) for b in boards for n in (2, 3, 4)], seed=a.seed,
        n_jobs=a.jobs, playouts=a.setup_playouts, rollout_model=model_path))
    if made:
        save({"step": "label_setup", "decisions": int(setup.decisions),
              "rows": int(len(setup.value)), "cpu_seconds": setup.cpu_seconds,
              "playouts": a.setup_playouts, "boards": boards})
    for extra in a.extra_setup_labels:
        setup = join([setup, load_positions(extra)])
    return data, setup


def _model_step(a, start, model_path: str, data, setup, curve, boards, field: str, save) -> dict:
    """Step 2: the new trees fitted on the training games, one model file per entry of
    the curve, the held-out gains; {(setup trees, turn trees): path}."""
    section_new, train, test = _residual_fit(
        start.turns, data, a.seed, trees=a.trees, depth=a.depth, min_leaf=a.min_leaf,
        learning_rate=a.learning_rate)
    if setup is not None:
        setup_new, setup_train, setup_test = _residual_fit(
            start.setup, setup, a.seed, trees=a.setup_trees, depth=a.setup_depth,
            min_leaf=a.setup_min_leaf, learning_rate=a.learning_rate)
        save({"step": "held_out_setup", "setup_trees_added": 0,
              "gain_per_decision": gained(start.setup, setup_test),
              "decisions": int(setup_test.decisions)})
    d = json.loads(Path(model_path).read_text())
    save({"step": "held_out", "trees_added": 0, "gain_per_decision": gained(start.turns, test),
          "decisions": int(test.decisions)})
    models = {(0, 0): model_path}
    done_setup = {0}
    for s, k in curve:
        k, s = min(k, a.trees), min(s, a.setup_trees)
        turns = extended(d["turns"], section_new, k, {
            "added_trees": k, "depth": a.depth, "min_leaf": a.min_leaf,
            "learning_rate": a.learning_rate, "field": field, "boards": boards,
            "labels": int(train.decisions), "playouts": a.playouts, "wide": a.wide})
        setup_section = d["setup"]
        if s:
            setup_section = extended(d["setup"], setup_new, s, {
                "added_trees": s, "depth": a.setup_depth, "min_leaf": a.setup_min_leaf,
                "learning_rate": a.learning_rate, "boards": boards,
                "labels": int(setup_train.decisions), "playouts": a.setup_playouts})
            if s not in done_setup:
                done_setup.add(s)
                save({"step": "held_out_setup", "setup_trees_added": s,
                      "gain_per_decision": gained(section_from_dict(setup_section), setup_test),
                      "decisions": int(setup_test.decisions)})
        m = make_model(setup_section, turns, dict(d.get("training", {}), field_from=model_path))
        name = f"expert-field-s{s}-k{k}.json" if s else f"expert-field-k{k}.json"
        models[(s, k)] = str(export(m, a.out / name).resolve())
        save({"step": "held_out", "trees_added": k, "setup_trees_added": s,
              "gain_per_decision": gained(section_from_dict(turns), test),
              "decisions": int(test.decisions)})
    return models


def play(board: str, specs: list, games: int, seed: int) -> dict:
    """Seat-rotated games of `specs`: the first policy's figures (``Match.summary``)."""
    m = play_match(board, specs, games, match_key(seed, f"{board}|{'/'.join(specs)}"),
                   chunk=500, progress=True)
    return {"board": board, "players": len(specs), "specs": specs, "seed": seed, **m.summary(0)}


def _play_step(a, models: dict, eval_boards, expert: str, save) -> None:
    """Step 3: each model's tables on each board."""
    for (s, k), path in models.items():
        spec = f"expert:model={path}"
        for board in eval_boards:
            for others in (["blocker"], ["tickets"], ["blocker#0", "blocker#1", "blocker#2"],
                           ["tickets#0", "tickets#1", "tickets#2"]):
                save(dict(play(board, [spec] + others, a.eval_games, a.seed + 1), step="play",
                          trees_added=k, setup_trees_added=s))
            if (s, k) != (0, 0):
                save(dict(play(board, [spec, expert + "#start"], a.eval_games, a.seed + 1),
                          step="play", trees_added=k, setup_trees_added=s))


def main(argv=None) -> int:
    ap = _parser()
    a = ap.parse_args(argv)
    model_path = model_file(a.model)       # a path, a shipped model's name, or the default
    start = load_model(model_path)
    if start.turns is None:
        raise SystemExit(f"{model_path}: the model has no turn trees to go on from")
    boards = [b.strip() for b in a.boards.split(",") if b.strip()]
    eval_boards = [b.strip() for b in (a.eval_boards or a.boards).split(",") if b.strip()]
    curve = _curve(a.curve, a.setup > 0)
    expert = f"expert:model={model_path}"
    field = a.field or f"{expert};blocker;rush;tickets"
    a.out.mkdir(parents=True, exist_ok=True)
    rows_path = a.out / "field.json"

    def save(row):
        row = dict(row, date=time.strftime("%Y-%m-%d"))
        update_json(rows_path, lambda rows: rows + [row], default=[])
        print(json.dumps(row), flush=True)

    data, setup = _label_step(a, boards, model_path, field, save)
    models = _model_step(a, start, model_path, data, setup, curve, boards, field, save)
    if not a.skip_eval:
        _play_step(a, models, eval_boards, expert, save)
    return 0


if __name__ == "__main__":
    from ttrsim.script import run_script

    sys.exit(run_script(main))
