"""How often the progress of a slow run moves: seconds between batches finishing for the
search against the default policy (Europe, 2 players), with the old default batch size
(games / 100 within 1,000..10,000, capped at the games) and with the size chosen from the
policies' measured cost; and what choosing it costs for the default policy.

    python scripts/batch_progress.py [GAMES]      # default 12; docs/performance.md: 100
"""
import argparse
import sys
import time

import ttrsim.runner as runner
from ttrsim.batches import default_batch_size, make_config

SPECS = ["search", "tickets"]


def progress_gaps(games: int) -> None:
    """Time between finished batches, old default size against the measured one."""
    stamps = []
    real = runner._run_batch

    def timed(cfg, b):                 # note when each batch finishes (one worker)
        out = real(cfg, b)
        stamps.append(time.perf_counter())
        return out

    runner._run_batch = timed
    try:
        for label, size in (("old default", default_batch_size(games)), ("measured", None)):
            stamps.clear()
            t0 = time.perf_counter()
            cfg = make_config("europe", SPECS, games, 0, size)
            t1 = time.perf_counter()
            runner.simulate("europe", SPECS, games=games, seed=0, batch_size=cfg.batch_size)
            gaps = [b - a for a, b in zip([t1] + stamps[:-1], stamps)]
            print(f"{label}: batch_size {cfg.batch_size}, choosing it {t1 - t0:.2f} s, first "
                  f"progress after {gaps[0]:.1f} s, longest gap {max(gaps):.1f} s, total "
                  f"{stamps[-1] - t1:.1f} s")
    finally:
        runner._run_batch = real


def choosing_cost() -> None:
    """What measuring the policies' cost adds to a run of the default policy."""
    for board, n in (("europe", 4), ("usa", 4), ("newyork", 2)):
        t0 = time.perf_counter()
        cfg = make_config(board, n, 10_000, 0)
        measured = time.perf_counter() - t0
        t0 = time.perf_counter()
        make_config(board, n, 10_000, 0, 1000)
        given = time.perf_counter() - t0
        print(f"{board} {n}p default policy: batch_size {cfg.batch_size}; make_config "
              f"{measured:.3f} s (given size: {given:.3f} s)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("games", nargs="?", type=int, default=12,
                    help="games of search against tickets (default 12)")
    args = ap.parse_args()
    progress_gaps(args.games)
    choosing_cost()


if __name__ == "__main__":
    from ttrsim.script import run_script

    sys.exit(run_script(main))
