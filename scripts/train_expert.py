"""Train the ``expert`` policy by expert iteration (docs/expert.md).

Each round: (1) deal fresh games and value every keep set of one seat's initial ticket
choice with the search (the same playouts on the same sampled worlds for every keep
set), fit the ``setup`` trees to those values; (2) play games with the expert (the new
setup trees, the previous round's turn trees) against ``tickets`` and value every
candidate of its end-game turns with the search (once a seat has --max-trains trains or
fewer), fit the ``turns`` trees and choose their margin over tickets' own move by play
(in the last round with their reach, --reaches, over --final-calib-games games per
board, setting and player count, at 2 and 4 players); write ``OUT/expert-round{r}.json``.
The last round then labels the turns of whole games too (--midgame-games per board and
player count, from --midgame-trains trains on, --midgame-playouts playouts per candidate
over tickets rollouts; 0 games: none), fits the turn trees again on every labelled turn
(--midgame-trees histogram trees of depth --midgame-depth) and chooses their reach and
margin again (among --midgame-reaches and --midgame-trains); each further pass
(--midgame-passes in all) labels as many games played by the model of the pass before and
fits the turn trees on the end-game labels and these. Each round measures
held-out agreement and value gained, and the win share
against ``tickets`` (2 players, seats rotated). Round 1 labels with
``search`` (tickets rollouts) against ``tickets``; round r > 1 with
``search:rollout=expert`` on round r-1's model, against it. Same arguments, same files,
whatever --jobs. ``OUT/rounds.json`` records every round.

    python scripts/train_expert.py --out runs/models --jobs 2 --install   # v4; --install: the default
    python scripts/train_expert.py --out /tmp/m --positions 50 --endgame-games 10 \
        --calib-games 50 --final-calib-games 50 --midgame-games 4 --midgame-trees 30 \
        --midgame-min-leaf 40 --eval-games 100  # minutes
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from ttrsim.training import BOARDS, train


def _counts(ap, flag, text):
    try:
        counts = tuple(int(n) for n in text.split(","))
    except ValueError:
        ap.error(f"{flag} must be comma-separated trains counts, got {text!r}")
    if min(counts) < 0:
        ap.error(f"{flag} must be trains counts >= 0")
    return counts


def _parser() -> argparse.ArgumentParser:
    """The options, each defaulting to ``train``'s own default."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    ap.add_argument("--out", required=True, help="directory for the model files, the "
                    "labelled positions and rounds.json (a rerun reuses its positions)")
    ap.add_argument("--rounds", type=int, default=2, help="rounds of expert iteration (default 2)")
    ap.add_argument("--boards", default=",".join(BOARDS), help="comma-separated boards")
    ap.add_argument("--players", default="2,3,4",
                    help="player counts of the labelled initial ticket choices (default 2,3,4)")
    ap.add_argument("--positions", type=int, default=1000,
                    help="initial ticket choices per board and player count (default 1000)")
    ap.add_argument("--playouts", type=int, default=256,
                    help="search playouts per keep set (default 256)")
    ap.add_argument("--endgame-players", default="2,4",
                    help="player counts of the labelled end-game games (default 2,4)")
    ap.add_argument("--endgame-games", type=int, default=500,
                    help="games per board and player count whose end-game turns are "
                         "labelled (default 500)")
    ap.add_argument("--endgame-playouts", type=int, default=400,
                    help="search playouts per candidate of an end-game turn (default 400)")
    ap.add_argument("--max-trains", type=int, default=12,
                    help="the turn trees decide once a seat has this many trains or fewer "
                         "(default 12)")
    ap.add_argument("--later", type=float, default=0.5,
                    help="rounds after the first label this share of the positions and "
                         "games (default 0.5)")
    ap.add_argument("--calib-games", type=int, default=400,
                    help="2-player games per board and margin when the turn trees' margin "
                         "is chosen by play (default 400)")
    ap.add_argument("--final-calib-games", type=int, default=5000,
                    help="the same in the last round, per board, margin and reach (default 5000)")
    ap.add_argument("--reaches", default="12,16,20,24",
                    help="trains counts from which the last round's turn trees may decide, "
                         "chosen with the margin by play (default 12,16,20,24; --max-trains "
                         "is always among them)")
    ap.add_argument("--midgame-games", type=int, default=2500,
                    help="games per board and player count whose turns are labelled from "
                         "--midgame-trains on in the last round (default 2500; 0: none)")
    ap.add_argument("--midgame-trains", type=int, default=30,
                    help="those games' turns are labelled once a seat has this many trains "
                         "or fewer (default 30)")
    ap.add_argument("--midgame-playouts", type=int, default=16,
                    help="playouts per candidate of those turns (default 16)")
    ap.add_argument("--midgame-trees", type=int, default=40,
                    help="trees of the turn model fitted after that pass (default 40)")
    ap.add_argument("--midgame-depth", type=int, default=6,
                    help="their depth (default 6)")
    ap.add_argument("--midgame-min-leaf", type=int, default=400,
                    help="the fewest labelled candidates in one of their leaves (default 400)")
    ap.add_argument("--midgame-reaches", default="45",
                    help="reaches tried besides --midgame-trains after that pass (default 45)")
    ap.add_argument("--midgame-passes", type=int, default=2,
                    help="whole-game passes; each after the first labels games of the model "
                         "the pass before made (default 2)")
    ap.add_argument("--eval-games", type=int, default=2000,
                    help="2-player games per board against tickets after each round (0: none)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=1, help="workers for labelling and play (default 1)")
    ap.add_argument("--install", action="store_true",
                    help="copy the last round's model over the package's default model "
                         "file (then `expert` plays it)")
    ap.add_argument("--quiet", action="store_true", help="no progress bars")
    return ap


def main(argv=None) -> int:
    ap = _parser()
    a = ap.parse_args(argv)
    for name in ("rounds", "positions", "playouts", "endgame_games", "endgame_playouts",
                 "calib_games", "final_calib_games", "midgame_playouts", "midgame_trees",
                 "midgame_depth", "midgame_min_leaf", "midgame_passes"):
        if getattr(a, name) < 1:
            ap.error(f"--{name.replace('_', '-')} must be at least 1")
    if min(a.max_trains, a.eval_games, a.midgame_games, a.midgame_trains) < 0 \
            or not 0 < a.later <= 1:
        ap.error("--max-trains, --eval-games, --midgame-games and --midgame-trains must be "
                 ">= 0 and --later within (0, 1]")
    reaches = _counts(ap, "--reaches", a.reaches)
    midgame_reaches = _counts(ap, "--midgame-reaches", a.midgame_reaches)
    records = train(a.out, rounds=a.rounds, boards=tuple(a.boards.split(",")),
                    players=tuple(int(n) for n in a.players.split(",")),
                    positions=a.positions, playouts=a.playouts,
                    endgame_players=tuple(int(n) for n in a.endgame_players.split(",")),
                    endgame_games=a.endgame_games, endgame_playouts=a.endgame_playouts,
                    max_trains=a.max_trains, later=a.later, calib_games=a.calib_games,
                    final_calib_games=a.final_calib_games, reaches=reaches,
                    midgame_games=a.midgame_games, midgame_trains=a.midgame_trains,
                    midgame_playouts=a.midgame_playouts, midgame_trees=a.midgame_trees,
                    midgame_depth=a.midgame_depth, midgame_min_leaf=a.midgame_min_leaf,
                    midgame_reaches=midgame_reaches, midgame_passes=a.midgame_passes,
                    eval_games=a.eval_games, seed=a.seed, n_jobs=a.jobs,
                    progress=not a.quiet)
    print(json.dumps(records, indent=1))
    if a.install:
        from ttrsim.training.model_file import default_model_path

        target = Path(default_model_path())
        shutil.copyfile(records[-1]["model"], target)
        print(f"installed {records[-1]['model']} as {target}")
    return 0


if __name__ == "__main__":
    from ttrsim.script import run_script

    sys.exit(run_script(main))
