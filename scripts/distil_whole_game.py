"""Make the whole-game ``expert`` (docs/expert.md, "The whole game") from the labels of
``scripts/train_whole_game.py``: its fresh initial-ticket and keep sections, the turn
play of a teacher model distilled into fresh trees, and a draw head learned from the
search's values of ticket draws.

Steps, each saved in OUT and reused by a rerun with the same arguments:

1. distil (round 0): --trees fresh turn trees of depth --depth fitted to the teacher's
   (--teacher, default the shipped field model) turn scores on the labelled turns of
   every --labels run (every seventh game held out) -> OUT/student-0.json, with the
   setup and keep sections of --sections (a model train_whole_game.py made).
2. DAgger rounds 1..--rounds: --games games (every board, 2-5 players) where a seat
   plays the previous round's student, the others the teacher in a third of them and
   the student in the rest; every student turn is scored by the teacher
   (``training.generate_student``) -> OUT/states-r.npz; the turn trees fitted again on
   the labelled turns and every round's states -> OUT/student-r.json.
3. head: --head-trees trees of depth --head-depth that score only the ticket draw,
   fitted to the search's values of draws beyond the last student's (labels of
   --head-labels, default the first --labels run), and the draw bias --draw-bias ->
   OUT/expert-whole.json. Held-out agreement with the teacher and the head's rows are
   printed and kept in OUT/distil.json.

    python scripts/distil_whole_game.py --out runs/distil --labels runs/whole \\
        --labels runs/cheap --sections runs/cheap/expert-whole-r1-k80.json \\
        --head-labels runs/whole --jobs 2
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

import numpy as np

from ttrsim.results import update_json
from ttrsim.training import export, make_model
from ttrsim.training.distilling import distil, draw_head
from ttrsim.training.labelling import label
from ttrsim.training.model_file import load_model, model_file
from ttrsim.training.positions import (decisions, join, load_positions, save_positions,
                                       subset)

BOARDS = ("usa", "europe", "newyork", "usa-1910", "usa-mega", "usa-bigcities")


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--labels", type=Path, action="append", required=True,
                    help="a train_whole_game.py run (its labels-r*-turns.npz); repeatable")
    ap.add_argument("--sections", required=True,
                    help="the model whose setup and keep sections are used")
    ap.add_argument("--teacher", default="field")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--games", type=int, default=1200, help="games per DAgger round")
    ap.add_argument("--trees", type=int, default=40)
    ap.add_argument("--depth", type=int, default=8)
    ap.add_argument("--min-leaf", type=int, default=50)
    ap.add_argument("--learning-rate", type=float, default=0.15)
    ap.add_argument("--head-labels", type=Path, default=None)
    ap.add_argument("--head-trees", type=int, default=8)
    ap.add_argument("--head-depth", type=int, default=3)
    ap.add_argument("--head-min-leaf", type=int, default=400)
    ap.add_argument("--draw-bias", type=float, default=0.075)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=1)
    return ap


def _turn_labels(dirs) -> object:
    files = [p for d in dirs for p in sorted(Path(d).glob("labels-r*-turns.npz"))]
    if not files:
        raise SystemExit(f"no labels-r*-turns.npz in {', '.join(map(str, dirs))}: "
                         "give the --out of a train_whole_game.py run")
    return join([load_positions(p) for p in files])


def _key(*parts) -> str:
    return hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()[:16]


def _recorded(a) -> dict:
    """The arguments as the model file records them: numbers as they are, files and
    folders by their names only (a shipped file holds no machine's paths)."""
    def name(v):
        return Path(v).name if isinstance(v, (Path, str)) and ("/" in str(v)) else v
    return {k: ([name(x) for x in v] if isinstance(v, list) else name(v))
            for k, v in vars(a).items() if k not in ("jobs", "out")}


def _agreement(section, teacher, data) -> float:
    """Share of held-out decisions where the section's best candidate is the teacher's."""
    from ttrsim.training.model_file import as_section
    mine, theirs = as_section(section).predict(data.X), teacher.turns.predict(data.X)
    rows = list(decisions(data))
    return sum(int(np.argmax(mine[r]) == np.argmax(theirs[r])) for r in rows) / max(len(rows), 1)


def main(argv=None) -> int:
    a = _parser().parse_args(argv)
    a.out.mkdir(parents=True, exist_ok=True)
    log = a.out / "distil.json"

    def save(row):
        row = dict(row, date=time.strftime("%Y-%m-%d"))
        update_json(log, lambda old: old + [row], default=[])
        print(json.dumps(row), flush=True)

    sections = json.loads(Path(model_file(a.sections)).read_text(encoding="utf-8"))
    teacher = load_model(a.teacher)
    labels = _turn_labels(a.labels)
    held = labels.game % 7 == 0
    train, test = subset(labels, ~held), subset(labels, held)
    fit_args = dict(trees=a.trees, depth=a.depth, min_leaf=a.min_leaf,
                    learning_rate=a.learning_rate)
    key = [a.teacher, [str(p) for p in a.labels], a.sections, fit_args, a.seed]
    states = []
    for r in range(a.rounds + 1):
        key = key + [r, a.games]
        path = a.out / f"student-{r}.json"
        if r:
            spath = a.out / f"states-{r}.npz"
            if spath.exists() and load_positions(spath, with_key=True)[1] == _key(key):
                got = load_positions(spath)
            else:
                parts = [(b, n) for b in BOARDS for n in (2, 3, 4, 5)
                         if not (b == "newyork" and n == 5)]
                parts = [(b, n, max(1, a.games // len(parts))) for b, n in parts]
                got = label("student", parts, seed=a.seed * 1009 + r, n_jobs=a.jobs,
                            cache=a.out / f"tasks-{r}", student=a.out / f"student-{r - 1}.json",
                            teacher=a.teacher)
                save_positions(got, spath, _key(key))
                save({"step": "states", "round": r, "decisions": got.decisions,
                      "cpu_seconds": got.cpu_seconds})
            states.append(got)
        done = path.exists() and json.loads(path.read_text())["training"].get("key") == _key(key)
        if not done:
            rows = join([train] + [subset(s, s.game % 7 != 0) for s in states])
            turns = dict(distil(rows, a.teacher, a.seed, **fit_args), max_trains=1000)
            export(make_model(sections["setup"], turns, {"key": _key(key), "round": r,
                                                          "distilled_from": a.teacher},
                              keep=sections.get("keep")), path)
            model = load_model(path)
            save({"step": "distil", "round": r, "rows": int(len(rows.value)),
                  "held_out_agreement": _agreement(model.turns, teacher, test),
                  **({"student_state_agreement": _agreement(
                      model.turns, teacher, subset(states[-1], states[-1].game % 7 == 0))}
                     if states else {})})
    student = json.loads((a.out / f"student-{a.rounds}.json").read_text(encoding="utf-8"))
    head_labels = _turn_labels([a.head_labels or a.labels[0]])
    head_train = subset(head_labels, head_labels.game % 5 != 0)
    turns = draw_head(head_train, student["turns"], a.seed, trees=a.head_trees,
                      depth=a.head_depth, min_leaf=a.head_min_leaf, bias=a.draw_bias)
    out = export(make_model(student["setup"], turns,
                            {"whole_game_distil": _recorded(a)},
                            keep=student.get("keep")), a.out / "expert-whole.json")
    save({"step": "head", "model": str(out), "head_rows": turns["fit"]["head"]["draws"],
          "draw_bias": a.draw_bias})
    return 0


if __name__ == "__main__":
    from ttrsim.script import run_script

    sys.exit(run_script(main))
