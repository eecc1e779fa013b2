"""Strength of the built-in policies against each other.

For each board: every pair of built-in policies at 2 players, and one seat of each at a
4-player table (on New York, which seats 4 at most, the same). Seats rotate between games,
so each policy sits in each seat equally often. Per policy and table: win share (a shared
win counts for each winner), mean score and the share of kept tickets completed.

Prints Markdown tables and writes them as JSON (``--json``, default
``scripts/strength.json``).

    python scripts/strength.py                    # 10,000 games per table (a few minutes)
    python scripts/strength.py --games 1000       # a quick look
"""
from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from pathlib import Path

import numpy as np

from ttrsim._batch import SCORE_COLS, game_seeds, play_batch
from ttrsim.game import compile_board
from ttrsim.policies import make_policy

BOARDS = ("usa", "europe", "newyork")
POLICIES = ("tickets", "routes", "greedy", "random")
COL = {c: i for i, c in enumerate(SCORE_COLS)}


def table(board: str, specs: list, games: int, seed: int) -> list[dict]:
    """Play `games` seat-rotated games of `specs` (one per seat); one row per policy."""
    cb = compile_board(board)
    policies = [make_policy(s, cb.board) for s in specs]
    t = time.perf_counter()
    out = play_batch(cb, len(specs), policies, game_seeds(seed, games), 0, True, True)
    seconds = time.perf_counter() - t
    sc, slot = out["scores"], out["slot"]
    rows = []
    for k, spec in enumerate(specs):
        mine = sc[slot == k]                      # (games, score columns)
        kept = mine[:, COL["tickets_kept"]].sum()
        rows.append({"board": board, "players": len(specs), "policy": spec,
                     "opponents": [s for j, s in enumerate(specs) if j != k],
                     "games": games, "win_share": float((mine[:, COL["rank"]] == 1).mean()),
                     "mean_score": float(mine[:, COL["score"]].mean()),
                     "ticket_completion": float(mine[:, COL["tickets_completed"]].sum() / max(kept, 1)),
                     "seconds": seconds})
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=10_000, help="games per table")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", default=str(Path(__file__).with_name("strength.json")))
    args = ap.parse_args(argv)
    rows = []
    for board in BOARDS:
        print(f"\n### {board}, 2 players: row policy against column policy "
              "(win share / mean score / tickets completed)\n")
        cells = {}
        for a, b in itertools.combinations(POLICIES, 2):
            ra, rb = table(board, [a, b], args.games, args.seed)
            rows += [ra, rb]
            cells[a, b], cells[b, a] = ra, rb
        print("| | " + " | ".join(POLICIES) + " |")
        print("|---" * (len(POLICIES) + 1) + "|")
        for a in POLICIES:
            line = [f"{cells[a, b]['win_share']:.3f} / {cells[a, b]['mean_score']:.1f} / "
                    f"{cells[a, b]['ticket_completion']:.2f}" if a != b else "" for b in POLICIES]
            print(f"| {a} | " + " | ".join(line) + " |")
        print(f"\n### {board}, 4 players, one seat each\n")
        print("| policy | win share | mean score | tickets completed |")
        print("|---|---|---|---|")
        for r in table(board, list(POLICIES), args.games, args.seed):
            rows.append(r)
            print(f"| {r['policy']} | {r['win_share']:.3f} | {r['mean_score']:.1f} | "
                  f"{r['ticket_completion']:.2f} |")
        sys.stdout.flush()
    Path(args.json).write_text(json.dumps(rows, indent=2))
    print(f"\nwritten to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
