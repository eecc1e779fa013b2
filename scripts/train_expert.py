"""Train the ``expert`` policy by expert iteration (docs/expert.md).

Each round plays games with one ``search`` seat against ``tickets`` on every board and
player count, records the expert's candidate actions with their features at each of the
search's turns and ticket choices the search's value of each (the same playouts for
every candidate), fits gradient-boosted regression trees (scikit-learn, seeded), writes ``OUT/expert-round{r}.json`` and
measures held-out agreement with the search and the win share against ``tickets``
(2 players, seats rotated). Round 1 labels with ``search`` (tickets rollouts) in games
the search plays; round r > 1 with ``search:rollout=expert`` on round r-1's model, in
games where round r-1's model plays. Same arguments, same files.
``OUT/rounds.json`` records every round (positions, CPU time, agreement, strength).

    python scripts/train_expert.py --out models                   # the shipped model's recipe
    python scripts/train_expert.py --out /tmp/m --games 5 --playouts 20 --eval-games 50
    python scripts/train_expert.py --out models --install         # copy the last round
                                                                  # to ttrsim/data/expert-v1.json
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from ttrsim.training import BOARDS, train


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    ap.add_argument("--out", required=True, help="directory for the model files and rounds.json")
    ap.add_argument("--rounds", type=int, default=2, help="rounds of expert iteration (default 2)")
    ap.add_argument("--boards", default=",".join(BOARDS), help="comma-separated boards")
    ap.add_argument("--players", default="2,4", help="player counts of the labelled games")
    ap.add_argument("--games", type=int, default=150,
                    help="labelled games per board and player count per round (default 150)")
    ap.add_argument("--games-later", type=int, default=None,
                    help="the same for rounds after the first (their search plays expert "
                         "rollouts, which cost more; default: --games)")
    ap.add_argument("--players-later", default=None,
                    help="player counts of the rounds after the first (default: --players)")
    ap.add_argument("--playouts", type=int, default=48,
                    help="search playouts per candidate move (default 48)")
    ap.add_argument("--eval-games", type=int, default=1000,
                    help="2-player games per board against tickets after each round (0: none)")
    ap.add_argument("--calib-games", type=int, default=300,
                    help="2-player games per board and margin when the margin of tickets' "
                         "choice is calibrated by play (default 300)")
    ap.add_argument("--trees", type=int, default=150, help="boosted trees (default 150)")
    ap.add_argument("--depth", type=int, default=4, help="depth of each tree (default 4)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--install", action="store_true",
                    help="copy the last round's model to the package's data file")
    ap.add_argument("--quiet", action="store_true", help="no progress bars")
    a = ap.parse_args(argv)
    for name in ("rounds", "games", "playouts", "trees", "depth"):
        if getattr(a, name) < 1:
            ap.error(f"--{name} must be at least 1")
    records = train(a.out, rounds=a.rounds, boards=tuple(a.boards.split(",")),
                    players=tuple(int(n) for n in a.players.split(",")), games=a.games,
                    games_later=a.games_later,
                    players_later=(tuple(int(n) for n in a.players_later.split(","))
                                   if a.players_later else None),
                    playouts=a.playouts, eval_games=a.eval_games, seed=a.seed, trees=a.trees,
                    depth=a.depth, calib_games=a.calib_games, progress=not a.quiet)
    print(json.dumps(records, indent=1))
    if a.install:
        target = Path(__file__).resolve().parent.parent / "ttrsim" / "data" / "expert-v1.json"
        shutil.copyfile(records[-1]["model"], target)
        print(f"installed {records[-1]['model']} as {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
