"""Learn the whole-game ``expert`` from the outcomes of its own games (Monte-Carlo
learning, as DouZero does): every decision's played candidate is labelled by its
seat's final result, and trees fitted to those labels value every candidate.

Steps, each saved in OUT and reused by a rerun with the same arguments (a cut-short
labelling goes on from its finished tasks, OUT/tasks-r):

1. play, round r = 1..--rounds: --games games a round over --parts (board:players,
   shared equally) where seat ``i % players`` plays the previous round's model
   (round 1: --start) and the other seats the --field models in turn; at each
   decision a seat picks, with probability --epsilon, another candidate than its
   model's (exploration of ticket draws, keeps and early claims); each decision
   becomes one row, valued by ``outcome`` (--target) -> OUT/outcomes-r-KIND.npz
   (``training.generate_outcomes``).
2. fit: one regressor a decision kind (initial tickets, turns, keeps), --trees
   histogram-boosted trees of depth --depth, on the rows of the last --window rounds
   (``training.fit_outcomes``; every seventh game held out, its squared error printed;
   a kind with fewer than 2 x --min-leaf rows keeps --start's section) ->
   OUT/model-r.json, an ``expert`` model file (format 5), played by
   ``expert:model=OUT/model-r.json``.

Each step's figures are appended to OUT/learn.json.

    python scripts/learn_whole_game.py --out runs/learn --rounds 3 --games 2000 --jobs 2
    # on a dask cluster, as simulate does:
    python scripts/learn_whole_game.py --out runs/learn --backend dask --scheduler HOST:8786
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path


from ttrsim.results import update_json
from ttrsim.training import export, fit_outcomes
from ttrsim.training.labelling import TARGETS, label
from ttrsim.training.positions import join, load_positions, save_positions

KINDS = ("setup", "turns", "keep")


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--games", type=int, default=2000, help="games a round")
    ap.add_argument("--parts", default="usa-mega:4,usa-mega:2,usa:2,usa:4,europe:2,newyork:2,"
                    "usa-1910:2", help="board:players, comma-separated")
    ap.add_argument("--start", default="whole", help="the model round 1 plays")
    ap.add_argument("--field", default="field,whole",
                    help="models of the other seats, comma-separated ('' for self-play)")
    ap.add_argument("--epsilon", type=float, default=0.1)
    ap.add_argument("--target", choices=TARGETS, default="margin")
    ap.add_argument("--window", type=int, default=2, help="rounds of rows each fit uses")
    ap.add_argument("--trees", type=int, default=60)
    ap.add_argument("--depth", type=int, default=6)
    ap.add_argument("--min-leaf", type=int, default=100)
    ap.add_argument("--learning-rate", type=float, default=0.1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1,
                    help="threads of each fit (on a loaded machine more threads fit slower: "
                    "a 100k-row fit took over 5 minutes on 6 threads, under 45 s on one)")
    ap.add_argument("--backend", choices=("loky", "dask"), default="loky")
    ap.add_argument("--scheduler", default=None, help="dask scheduler address")
    return ap


def _parts(text: str) -> list[tuple[str, int]]:
    try:
        out = [(b, int(n)) for b, n in (p.split(":") for p in text.split(",") if p)]
    except ValueError:
        raise SystemExit(f"--parts must be board:players, comma-separated, got {text!r}")
    if not out:
        raise SystemExit("--parts names no board:players")
    return out


def _key(*parts) -> str:
    return hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()[:16]


def main(argv=None) -> int:
    a = _parser().parse_args(argv)
    if a.rounds < 1 or a.games < 1 or a.window < 1:
        raise SystemExit("--rounds, --games and --window must be at least 1")
    if not 0.0 <= a.epsilon <= 1.0:
        raise SystemExit(f"--epsilon must be within 0..1, got {a.epsilon}")
    parts = _parts(a.parts)
    field = tuple(m for m in a.field.split(",") if m)
    a.out.mkdir(parents=True, exist_ok=True)
    log = a.out / "learn.json"

    def save(row):
        row = dict(row, date=time.strftime("%Y-%m-%d"))
        update_json(log, lambda old: old + [row], default=[])
        print(json.dumps(row), flush=True)

    # the fit's arguments as the saved steps' keys name them
    fit_args = dict(trees=a.trees, depth=a.depth, min_leaf=a.min_leaf,
                    learning_rate=a.learning_rate, histogram=True, centre=False)
    key = [a.start, field, parts, a.epsilon, a.target, a.seed]
    rounds, model = [], a.start
    for r in range(1, a.rounds + 1):
        key = key + [r, a.games, fit_args, a.window]
        files = {k: a.out / f"outcomes-{r}-{k}.npz" for k in KINDS}
        if all(f.exists() and load_positions(f, with_key=True)[1] == _key(key)
               for f in files.values()):
            got = {k: load_positions(f) for k, f in files.items()}
        else:
            share = max(1, a.games // len(parts))
            got = label("outcomes", [(b, n, share) for b, n in parts],
                        seed=a.seed * 1009 + r, n_jobs=a.jobs, cache=a.out / f"tasks-{r}",
                        backend=a.backend, scheduler=a.scheduler, model=model, field=field,
                        epsilon=a.epsilon, target=a.target)
            for k, f in files.items():
                save_positions(got[k], f, _key(key))
            save({"step": "play", "round": r, "model": str(model), "games": share * len(parts),
                  "rows": {k: int(len(got[k].value)) for k in KINDS},
                  "cpu_seconds": got["turns"].cpu_seconds})
        rounds.append(got)
        path = a.out / f"model-{r}.json"
        done = (path.exists() and json.loads(path.read_text(encoding="utf-8"))
                ["training"].get("key") == _key(key))
        if not done:
            from threadpoolctl import threadpool_limits

            errors = {}
            rows = {k: join([g[k] for g in rounds[-a.window:]]) for k in KINDS}
            with threadpool_limits(limits=a.threads):
                learned = fit_outcomes(
                    rows, a.seed + r, base=a.start, trees=a.trees, depth=a.depth,
                    learning_rate=a.learning_rate, min_leaf=a.min_leaf, hold_out=7,
                    errors=errors,
                    training={"key": _key(key), "round": r, "learned_from": "outcomes",
                              "target": a.target, "epsilon": a.epsilon, "field": list(field),
                              "parts": a.parts})
            export(learned, path)
            save({"step": "fit", "round": r, "model": str(path),
                  "held_out_mse_and_variance": errors})
        model = str(path)
    return 0


if __name__ == "__main__":
    from ttrsim.script import run_script

    sys.exit(run_script(main))
