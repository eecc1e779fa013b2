"""Check that two builds of ttrsim play the same games, and measure one against the other.

A speed-up of the core or of a policy must not change what the policies do. This script
plays the same seeds with the built-in policies on every board and player count in each of
two builds (two source trees built in place, or installed copies: any directory from which
``import ttrsim`` loads that build), and compares every array the core returns: scores,
seats, turns, per-ticket, per-route, tunnel and station counts.

When every game is the same, each decision of a policy in one build equals the decision
of the same policy in the other build at the same position, so a game between the two
builds' versions of a policy is the game both builds play alone. The script then reports
the seat-rotated win shares of the first build's ``tickets`` (slot 0) and the second
build's (slot 1) in 2-player games between them, 10,000 per board by default: the
head-to-head measure of strength between the two versions.

    python scripts/same_games.py /path/to/old/tree .            # both trees built in place
    python scripts/same_games.py OLD NEW --games 500 --h2h-games 10000
    python scripts/same_games.py OLD NEW --policies tickets routes greedy   # random changed
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

BOARDS = {"usa": (2, 3, 4, 5), "europe": (2, 3, 4, 5), "newyork": (2, 3, 4)}
POLICIES = ("tickets", "routes", "greedy", "random")


def play_all(out: str, games: int, h2h_games: int, seed: int,
             policies: tuple[str, ...] = POLICIES) -> None:
    """(In the build under test) play every table of `policies` and save the results to
    `out`."""
    from ttrsim._batch import SCORE_COLS, game_seeds, play_batch
    from ttrsim.game import compile_board
    from ttrsim.policies import make_policy

    arrays = {}
    for board, counts in BOARDS.items():
        cb = compile_board(board)
        tables = [[p] * n for p in policies for n in counts]
        if len(policies) > 1:
            tables.append([policies[k % len(policies)] for k in range(max(counts))])
        for specs in tables:
            pols = [make_policy(s, cb.board) for s in specs]
            res = play_batch(cb, len(specs), pols, game_seeds(seed, games), 0, True, True)
            for key, value in res.items():
                name = f"{board}/{'-'.join(specs)}/{key}"
                if key == "scores":     # by column name: a build may add score columns
                    for c, col in enumerate(SCORE_COLS):
                        arrays[f"{name}/{col}"] = np.asarray(value)[..., c]
                else:
                    arrays[name] = np.asarray(value)
        pols = [make_policy("tickets", cb.board) for _ in range(2)]
        res = play_batch(cb, 2, pols, game_seeds(seed + 1, h2h_games), 0, True, True)
        arrays[f"h2h/{board}/rank"] = np.asarray(res["scores"])[..., SCORE_COLS.index("rank")]
        arrays[f"h2h/{board}/slot"] = np.asarray(res["slot"])
        print(f"  {board}: played", file=sys.stderr, flush=True)
    np.savez_compressed(out, **arrays)


def run_build(tree: str, out: str, args) -> None:
    root = Path(tree).resolve()
    if not root.is_dir():
        sys.exit(f"{tree} is not a directory: give the source tree of a build")
    env = dict(os.environ, PYTHONPATH=str(root))
    where = subprocess.run([sys.executable, "-c", "import ttrsim; print(ttrsim.__file__)"],
                           env=env, capture_output=True, text=True, cwd=tempfile.gettempdir())
    if where.returncode != 0:
        last = (where.stderr.strip().splitlines() or ["no error text"])[-1]
        sys.exit(f"cannot import ttrsim from {tree}: {last} "
                 "(build it in place: python setup.py build_ext --inplace)")
    loaded = Path(where.stdout.strip()).resolve()
    if root not in loaded.parents:
        # an installed ttrsim would be compared instead of this tree's build
        sys.exit(f"{tree} holds no ttrsim package: `import ttrsim` there loads {loaded}")
    print(f"{tree}: {loaded}", file=sys.stderr)
    subprocess.run([sys.executable, __file__, "--play", out, "--games", str(args.games),
                    "--h2h-games", str(args.h2h_games), "--seed", str(args.seed),
                    "--policies", *args.policies],
                   env=env, check=True, cwd=tempfile.gettempdir())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("first", nargs="?", help="directory of the first build")
    ap.add_argument("second", nargs="?", help="directory of the second build")
    ap.add_argument("--games", type=int, default=1000, help="games per table compared")
    ap.add_argument("--h2h-games", type=int, default=10_000,
                    help="2-player tickets games per board for the win share (0: none)")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--policies", nargs="+", choices=POLICIES, default=list(POLICIES),
                    help="the policies whose games are compared (default: all built-in); "
                         "leave out one whose games a change alters on purpose")
    ap.add_argument("--play", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.play:
        play_all(args.play, args.games, args.h2h_games, args.seed, tuple(args.policies))
        return 0
    if not (args.first and args.second):
        ap.error("give the directories of two builds")
    with tempfile.TemporaryDirectory() as tmp:
        paths = [os.path.join(tmp, "first.npz"), os.path.join(tmp, "second.npz")]
        run_build(args.first, paths[0], args)
        run_build(args.second, paths[1], args)
        with np.load(paths[0]) as fa, np.load(paths[1]) as fb:
            a, b = dict(fa), dict(fb)
    # a result column only one build has (a new score part) is not a difference in play
    only = sorted(set(a) ^ set(b))
    differ = sorted(k for k in a if k in b and not np.array_equal(a[k], b[k]))
    print(f"{len(set(a) & set(b))} result arrays compared, {len(differ)} differ")
    if only:
        cols = sorted({k.rsplit("/", 1)[-1] for k in only})
        print(f"  not compared: {len(only)} arrays of one build only (columns {', '.join(cols)})")
    for k in differ[:20]:
        print(f"  differs: {k}")
    if differ:
        print("the builds play different games: the head-to-head share is not implied")
        return 1
    for board in BOARDS if args.h2h_games > 0 else ():
        rank, slot = a[f"h2h/{board}/rank"], a[f"h2h/{board}/slot"]
        first, second = (float((rank[slot == k] == 1).mean()) for k in (0, 1))
        print(f"{board}: tickets wins {first:.1%} (first build) and {second:.1%} (second "
              f"build) of {len(rank):,} seat-rotated 2-player games (a shared win counts "
              f"for both)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
