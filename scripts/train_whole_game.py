"""Train a generation of ``expert`` that plays the search's whole game (docs/expert.md,
"The whole game"): the initial tickets, every turn with ticket draws among its
candidates, and the tickets kept after a draw, learned afresh from the search's values.

Each round r:

1. label: games on each of --boards at each of --players, where one seat plays the
   round's student (round 1: --start, by default the shipped `expert`; round r > 1: the
   model round r-1 made) or, in a share --teacher-share of the games, the teacher
   (--teacher, the default search), so that both the student's positions and the
   teacher's (its early claims, its ticket draws) are labelled; the other seats are
   drawn in turn from --field. The seat's initial ticket choice, every keep after a
   ticket draw and a share --turn-share of its turns are labelled: every candidate of
   the expert (with --wide 1 the search's whole turn set) gets --playouts playouts of the
   search on the same sampled worlds, rollouts by --rollout in every seat
   (``training.generate_games``). Saved as OUT/labels-r{r}-{setup,turns,keep}.npz; a
   rerun with the same arguments reuses them, and a round cut short goes on from the
   tasks it finished (OUT/tasks-r{r}/).
2. fit: fresh gradient-boosted trees (histogram) for each section on the labels of every
   round so far (every fifth game held out): --setup-trees of depth --setup-depth,
   --turn-trees of depth --turn-depth, --keep-trees of depth --keep-depth; one model per
   entry of --curve (the first K turn trees: the same fit stopped sooner) as
   OUT/expert-whole-r{r}-k{K}.json, and the held-out value each section's choice gains
   over `tickets`' own choice.
3. measure (unless --skip-eval): each model of the round against --against at 2 players
   on each of --eval-boards (--eval-games seat-rotated games, Wilson 95%), and 4-player
   self-play on usa-mega and usa: ticket draws a player and the median game turn of the
   first claim. Rows in OUT/whole.json.

    nice python scripts/train_whole_game.py --out runs/whole --jobs 2
    python scripts/train_whole_game.py --out /tmp/w --games 2 --players 2,4 \\
        --boards newyork,usa --rounds 1 --curve 10 --eval-games 40   # a minute
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

import ttrsim
from ttrsim.results import update_json
from ttrsim.training import FEATURES, export, fit, gain, label, make_model
from ttrsim.training.labelling import KINDS
from ttrsim.training.model_file import expert_spec, first_trees, load_model, model_file
from ttrsim.training.positions import join, load_positions, save_positions, subset

BOARDS = ("usa", "europe", "newyork", "usa-1910", "usa-mega", "usa-bigcities")
FIELD = "expert;expert:model=v4;search;tickets;blocker;rush"


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--start", default="field", help="the round-1 student: a model file or a "
                    "shipped model's name (default: %(default)s)")
    ap.add_argument("--boards", default=",".join(BOARDS))
    ap.add_argument("--players", default="2,3,4,5")
    ap.add_argument("--games", type=int, default=60,
                    help="labelled games per board and player count and round (default 60)")
    ap.add_argument("--playouts", type=int, default=24, help="playouts per candidate of a turn")
    ap.add_argument("--keep-playouts", type=int, default=96,
                    help="playouts per keep set of a ticket choice (default %(default)s)")
    ap.add_argument("--rollout", default="v4", help="the model playing every seat of the "
                    "playouts (default %(default)s: the search's own), or tickets (cheaper)")
    ap.add_argument("--turn-share", type=float, default=0.5)
    ap.add_argument("--teacher", default="search")
    ap.add_argument("--teacher-share", type=float, default=0.5)
    ap.add_argument("--field", default=FIELD, help='";"-separated specs of the other seats')
    ap.add_argument("--wide", type=int, choices=(0, 1), default=1)
    ap.add_argument("--setup-trees", type=int, default=100)
    ap.add_argument("--setup-depth", type=int, default=5)
    ap.add_argument("--setup-min-leaf", type=int, default=40)
    ap.add_argument("--turn-trees", type=int, default=60)
    ap.add_argument("--turn-depth", type=int, default=6)
    ap.add_argument("--turn-min-leaf", type=int, default=200)
    ap.add_argument("--keep-trees", type=int, default=40)
    ap.add_argument("--keep-depth", type=int, default=4)
    ap.add_argument("--keep-min-leaf", type=int, default=40)
    ap.add_argument("--learning-rate", type=float, default=0.1)
    ap.add_argument("--curve", default="20,40,60", help="turn trees of each model made")
    ap.add_argument("--against", default="expert")
    ap.add_argument("--eval-boards", default="usa,europe,newyork,usa-1910,usa-mega")
    ap.add_argument("--eval-games", type=int, default=1000)
    ap.add_argument("--style-games", type=int, default=400)
    ap.add_argument("--skip-eval", action="store_true")
    ap.add_argument("--extra", type=Path, action="append", default=[],
                    help="another run's OUT whose labels (labels-r*-*.npz) are fitted on too "
                         "(repeatable); their held-out games stay held out")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=1)
    return ap


def _labels(a, r: int, student: str, boards, players, save) -> dict:
    """Round r's labelled decisions by kind, made or reused."""
    key = json.dumps([r, student, boards, players, a.games, a.playouts, a.keep_playouts, a.rollout,
                      a.turn_share, a.teacher, a.teacher_share, a.field, a.wide, a.seed,
                      list(FEATURES)])
    paths = {k: a.out / f"labels-r{r}-{k}.npz" for k in KINDS.values()}
    if all(p.exists() for p in paths.values()):
        loaded = {k: load_positions(p, with_key=True) for k, p in paths.items()}
        if all(got == key for _, got in loaded.values()):
            return {k: data for k, (data, _) in loaded.items()}
    t = time.time()
    parts = [(b, n, a.games) for b in boards for n in players
             if ttrsim.maps.load(b).min_players <= n <= ttrsim.maps.load(b).max_players]
    data = label("games", parts, seed=a.seed * 1009 + r, n_jobs=a.jobs,
                 cache=a.out / f"tasks-r{r}", playouts=a.playouts,
                 keep_playouts=a.keep_playouts,
                 model=model_file(student),
                 **({"rollout": "tickets"} if a.rollout == "tickets"
                    else {"rollout_model": model_file(a.rollout)}),
                 field=[f.strip() for f in a.field.split(";") if f.strip()],
                 teacher=a.teacher or None, teacher_share=a.teacher_share,
                 turn_share=a.turn_share, wide=bool(a.wide))
    for k, p in paths.items():
        save_positions(data[k], p, key)
    save({"step": "label", "round": r, "student": student, "wall_seconds": time.time() - t,
          "cpu_seconds": data["turns"].cpu_seconds,
          **{f"{k}_decisions": int(v.decisions) for k, v in data.items()}})
    return data


def _fit_round(a, r: int, data: dict, save) -> dict:
    """Fresh sections on every round's labels so far; {turn trees: model path}."""
    sizes = {"setup": (a.setup_trees, a.setup_depth, a.setup_min_leaf),
             "turns": (a.turn_trees, a.turn_depth, a.turn_min_leaf),
             "keep": (a.keep_trees, a.keep_depth, a.keep_min_leaf)}
    sections, tests = {}, {}
    for kind, d in data.items():
        held = (d.game % 5) == 0
        train, tests[kind] = subset(d, ~held), subset(d, held)
        trees, depth, leaf = sizes[kind]
        try:
            sections[kind] = fit(train, a.seed, trees=trees, depth=depth, min_leaf=leaf,
                                 learning_rate=a.learning_rate, histogram=True)
        except ValueError as exc:            # nothing to learn from (a tiny run)
            sections[kind] = None
            save({"step": "fit", "round": r, "section": kind, "skipped": str(exc),
                  "decisions": int(train.decisions)})
            continue
        save({"step": "fit", "round": r, "section": kind, "decisions": int(train.decisions),
              "held_out": int(tests[kind].decisions)})
    if sections["setup"] is None or sections["turns"] is None:
        raise SystemExit("too few labelled initial ticket choices or turns to fit: "
                         "raise --games")
    models = {}
    for k in sorted({min(int(x), a.turn_trees) for x in a.curve.split(",") if x.strip()}):
        turns = dict(sections["turns"], trees=first_trees(sections["turns"]["trees"], k))
        turns["max_trains"] = 1000
        model = make_model(sections["setup"], turns, {"whole_game": vars_of(a), "round": r,
                                                      "turn_trees": k}, keep=sections["keep"])
        path = export(model, a.out / f"expert-whole-r{r}-k{k}.json").resolve()
        models[k] = str(path)
        m = load_model(path)
        for kind, sec in (("setup", m.setup), ("turns", m.turns), ("keep", m.keep)):
            if sec is not None and tests[kind].decisions:
                save({"step": "held_out", "round": r, "turn_trees": k, "section": kind,
                      **gain(sec, tests[kind]), "decisions": int(tests[kind].decisions)})
    return models


def vars_of(a) -> dict:
    """The arguments as the model file records them (paths as text)."""
    text = lambda v: str(v) if isinstance(v, Path) else v  # noqa: E731
    return {k: ([text(x) for x in v] if isinstance(v, list) else text(v))
            for k, v in vars(a).items() if k not in ("jobs", "out")}


def _measure(a, models: dict, r: int, save) -> None:
    """Each model against --against at 2 players, and its 4-player self-play style."""
    for k, path in models.items():
        spec = expert_spec(path)
        for board in [b.strip() for b in a.eval_boards.split(",") if b.strip()]:
            run = ttrsim.simulate(board, [spec, a.against], games=a.eval_games,
                                  seed=a.seed + 7, n_jobs=a.jobs)
            row = run.summary().iloc[0]
            save({"step": "play", "round": r, "turn_trees": k, "board": board,
                  "against": a.against, "games": a.eval_games,
                  "win_share": float(row["win_share"]), "low": float(row["win_share_low"]),
                  "high": float(row["win_share_high"])})
        for board in ("usa-mega", "usa"):
            games = ttrsim.simulate(board, [spec] * 4, games=a.style_games, seed=a.seed + 11,
                                    n_jobs=a.jobs).games
            first = games["first_claim_turn"].to_numpy(np.float64)
            save({"step": "style", "round": r, "turn_trees": k, "board": board,
                  "games": a.style_games, "ticket_draws": float(games["ticket_draws"].mean()),
                  "first_claim_median": float(np.median(first[first >= 0])),
                  "winner_score": float(games.loc[games["rank"] == 1, "score"].mean())})


def main(argv=None) -> int:
    a = _parser().parse_args(argv)
    boards = [b.strip() for b in a.boards.split(",") if b.strip()]
    players = [int(n) for n in a.players.split(",") if n.strip()]
    a.out.mkdir(parents=True, exist_ok=True)
    rows = a.out / "whole.json"

    def save(row):
        row = dict(row, date=time.strftime("%Y-%m-%d"))
        update_json(rows, lambda old: old + [row], default=[])
        print(json.dumps(row), flush=True)

    student, labelled = a.start, []
    extra = [{k: load_positions(p) for k, p in
              ((k, d / f"labels-r{r}-{k}.npz") for k in KINDS.values())}
             for d in a.extra for r in range(1, 100) if (d / f"labels-r{r}-setup.npz").exists()]
    for r in range(1, a.rounds + 1):
        labelled.append(_labels(a, r, student, boards, players, save))
        data = {k: join([d[k] for d in labelled + extra]) for k in KINDS.values()}
        models = _fit_round(a, r, data, save)
        if not a.skip_eval:
            _measure(a, models, r, save)
        student = models[max(models)]
    return 0


if __name__ == "__main__":
    from ttrsim.script import run_script

    sys.exit(run_script(main))
