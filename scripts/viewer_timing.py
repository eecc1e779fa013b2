"""Time what watching a game costs: replaying a game of a run (Run.game), building every
position (GameRecord.positions), writing the page (GameRecord.html) and the page's size,
on each board with `tickets` in 4 seats (New York: 4, USA and Europe: 4). Median of
--repeat runs over --games games.

    python scripts/viewer_timing.py [--games 5] [--repeat 3]
"""
import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import ttrsim


def median_time(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    out = Path(tempfile.mkdtemp())
    print(f"{'board':8} {'decisions':>9} {'Run.game ms':>11} {'positions ms':>12} "
          f"{'html ms':>8} {'page KB':>8}")
    for board in ("usa", "europe", "newyork"):
        run = ttrsim.simulate(board, 4, games=args.games, seed=1)
        rows = []
        for i in range(args.games):
            t_game = median_time(lambda: run.game(i), args.repeat)
            t_pos = median_time(lambda: run.game(i).positions(), args.repeat) - t_game
            rec = run.game(i)
            rec.positions()
            t_html = median_time(lambda: rec.html(out / "g.html"), args.repeat)
            rows.append((len(rec.actions), t_game, t_pos, t_html,
                         (out / "g.html").stat().st_size / 1024))
        med = [statistics.median(col) for col in zip(*rows)]
        print(f"{board:8} {med[0]:9.0f} {1e3 * med[1]:11.2f} {1e3 * med[2]:12.1f} "
              f"{1e3 * med[3]:8.1f} {med[4]:8.0f}")


if __name__ == "__main__":
    from ttrsim.script import run_script

    sys.exit(run_script(main))
