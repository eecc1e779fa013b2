"""How often the progress of a slow run moves: seconds between batches finishing for the
search against the default policy (Europe, 2 players), with the old default batch size
(games / 100 within 1,000..10,000, capped at the games) and with the size chosen from the
policies' measured cost; and what choosing it costs for the default policy.

    python scripts/batch_progress.py [GAMES]      # default 12; docs/performance.md: 100
"""
import sys, time
import ttrsim.runner as runner
from ttrsim.batches import make_config, default_batch_size

specs = ["search", "tickets"]
games = int(sys.argv[1]) if len(sys.argv) > 1 else 12
stamps = []
real = runner._run_batch
def timed(cfg, b):
    out = real(cfg, b)
    stamps.append(time.perf_counter())
    return out
runner._run_batch = timed
for label, bs in (("old default", default_batch_size(games)), ("measured", None)):
    stamps.clear()
    t0 = time.perf_counter()
    cfg = make_config("europe", specs, games, 0, bs)
    t1 = time.perf_counter()
    runner.simulate("europe", specs, games=games, seed=0, batch_size=cfg.batch_size)
    gaps = [b - a for a, b in zip([t1] + stamps[:-1], stamps)]
    print(f"{label}: batch_size {cfg.batch_size}, choosing it {t1 - t0:.2f} s, "
          f"first progress after {gaps[0]:.1f} s, longest gap {max(gaps):.1f} s, total {stamps[-1] - t1:.1f} s")
for board, n in (("europe", 4), ("usa", 4), ("newyork", 2)):
    t0 = time.perf_counter(); cfg = make_config(board, n, 10_000, 0); dt = time.perf_counter() - t0
    t0 = time.perf_counter(); make_config(board, n, 10_000, 0, 1000); d0 = time.perf_counter() - t0
    print(f"{board} {n}p default policy: batch_size {cfg.batch_size}; make_config {dt:.3f} s (given size: {d0:.3f} s)")
