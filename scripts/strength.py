"""Strength of the built-in policies against each other.

For each board: every pair of built-in policies at 2 players, and one seat of each at a
4-player table (on New York, which seats 4 at most, the same). Seats rotate between games,
so each policy sits in each seat equally often. Per policy and table: win share (a shared
win counts for each winner), mean score and the share of kept tickets completed.

Prints Markdown tables (those of docs/policies.md) and writes them as JSON (``--json``,
default ``scripts/strength.json``); ``--markdown`` prints the tables from that JSON.

    python scripts/strength.py                    # 10,000 games per table (about a minute)
    python scripts/strength.py --games 1000       # a quick look
    python scripts/strength.py --markdown         # the tables of the last run
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


def measure(games: int, seed: int) -> list[dict]:
    """Every pair at 2 players and one seat of each at 4 players, on every board."""
    rows = []
    for board in BOARDS:
        for a, b in itertools.combinations(POLICIES, 2):
            rows += table(board, [a, b], games, seed)
        rows += table(board, list(POLICIES), games, seed)
        print(f"{board}: done", file=sys.stderr, flush=True)
    return rows


def markdown(rows: list[dict]) -> str:
    """The Markdown tables of docs/policies.md from the rows of `measure`."""
    out = []
    cell = lambda r: f"{r['win_share']:.3f} / {r['mean_score']:.1f} / {r['ticket_completion']:.2f}"
    for board in BOARDS:
        pairs = {(r["policy"], r["opponents"][0]): r for r in rows
                 if r["board"] == board and r["players"] == 2}
        games = next(r["games"] for r in rows if r["board"] == board)
        out += [f"**{board}, 2 players**: row policy against column policy, {games:,} games "
                "each (win share / mean score / share of kept tickets completed)", "",
                "| | " + " | ".join(POLICIES) + " |", "|---" * (len(POLICIES) + 1) + "|"]
        for a in POLICIES:
            out.append(f"| {a} | " + " | ".join(cell(pairs[a, b]) if a != b else ""
                                                 for b in POLICIES) + " |")
        out += ["", f"**{board}, 4 players**, one seat of each, {games:,} games", "",
                "| policy | win share | mean score | tickets completed |", "|---|---:|---:|---:|"]
        out += [f"| {r['policy']} | {r['win_share']:.3f} | {r['mean_score']:.1f} | "
                f"{r['ticket_completion']:.2f} |"
                for r in rows if r["board"] == board and r["players"] == 4]
        out.append("")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=10_000, help="games per table")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", default=str(Path(__file__).with_name("strength.json")))
    ap.add_argument("--markdown", action="store_true",
                    help="print the tables from --json and exit (measures nothing)")
    args = ap.parse_args(argv)
    if args.markdown:
        print(markdown(json.loads(Path(args.json).read_text())))
        return 0
    rows = measure(args.games, args.seed)
    Path(args.json).write_text(json.dumps(rows, indent=2))
    print(markdown(rows))
    print(f"written to {args.json}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
