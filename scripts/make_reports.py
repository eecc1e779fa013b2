"""Regenerate the example reports kept in ``reports/``.

Each report is written from a fresh run of ``ttrsim.simulate`` (per-event tables on disk
under ``--runs``, default ``runs/``, which is not kept in the repository):

- ``europe-2p``, ``europe-4p``, ``usa-4p``, ``newyork-2p``: every seat plays the default
  policy, 1,000,000 games each;
- ``europe-4p-stations``: the station-value study, a paired experiment with common
  random numbers: the same seeds played twice, once with every seat on ``tickets`` and
  once with one seat (rotating) on ``tickets:stations=0``;
- ``europe-4p-tunnels``: the tunnel study, four tunnel attitudes at one table
  (``tickets:risk=0``, the default ``tickets`` (risk 0.3), ``tickets:risk=0.6`` and
  ``tickets:tunnels=0``), seat-rotated, so the win matrix says which attitude pays.
- ``europe-2p-search``: ``search`` (default settings) against ``tickets``, 2 players,
  seat-rotated, 1,000 games (FIXED_GAMES): every table split by policy, so ticket
  completion, score parts and routes show under both players side by side;
- ``europe-4p-route-importance``: each route of Europe removed in turn and played on the
  same games as the intact board (``ttrsim.analysis.route_importance``), 4 players;
- ``usa-4p-ticket-fairness``: ticket values, suggested points and two closed-loop rounds
  on USA, 4 players (``ttrsim.analysis.ticket_fairness``).
  These two use their own game counts (``--balance-games``; see BALANCE_GAMES), sized for
  a few minutes on a 2-core machine.

    python scripts/make_reports.py                  # everything, 1,000,000 games each
    python scripts/make_reports.py --games 20000    # a quick look
    python scripts/make_reports.py --only usa-4p
"""
from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

import ttrsim
from ttrsim.report import write_report

ROOT = Path(__file__).resolve().parents[1]
SEED = 2026

# name: (board, players or policy list, title)
STUDIES = {
    "europe-2p": ("europe", 2, "Europe, 2 players, default policy"),
    "europe-4p": ("europe", 4, "Europe, 4 players, default policy"),
    "usa-4p": ("usa", 4, "USA, 4 players, default policy"),
    "newyork-2p": ("newyork", 2, "New York, 2 players, default policy"),
    "europe-4p-stations": ("europe", ["tickets"] * 4,
                           "Europe, 4 players: what stations are worth (paired with a seat "
                           "that may not build them)"),
    "europe-4p-tunnels": ("europe", ["tickets:risk=0", "tickets", "tickets:risk=0.6",
                                     "tickets:tunnels=0"],
                          "Europe, 4 players: is the tunnel worth the risk"),
    "europe-2p-search": ("europe", ["search", "tickets"],
                         "Europe, 2 players: the search player against tickets (seat-rotated)"),
}
# studies whose policies are too slow for --games: their own game count
FIXED_GAMES = {"europe-2p-search": 1000}


def run_study(name: str, games: int, runs: Path, jobs: int, fresh: bool):
    board, players, title = STUDIES[name]
    games = FIXED_GAMES.get(name, games)
    out = runs / name
    if fresh and out.exists():
        shutil.rmtree(out)
    t = time.perf_counter()
    run = ttrsim.simulate(board, players, games=games, seed=SEED, n_jobs=jobs, out=out,
                          batch_size=10_000 if games >= 100_000 else None, progress=True)
    baseline = None
    if name == "europe-4p-stations":
        base_out = runs / f"{name}-no-stations"
        if fresh and base_out.exists():
            shutil.rmtree(base_out)
        baseline = ttrsim.simulate(board, ["tickets:stations=0"] + ["tickets"] * 3, games=games,
                                   seed=SEED, n_jobs=jobs, out=base_out,
                                   batch_size=10_000 if games >= 100_000 else None, progress=True)
    played = time.perf_counter() - t
    index = write_report(run, ROOT / "reports" / name, title=f"{title}, {games:,} games",
                         baseline=baseline)
    print(f"{name}: {games:,} games in {played:.0f} s, report {index.relative_to(ROOT)} "
          f"({time.perf_counter() - t - played:.0f} s)")


# balance studies: name -> (board, players, games per side)
BALANCE_GAMES = {"europe-4p-route-importance": ("europe", 4, 4000),
                 "usa-4p-ticket-fairness": ("usa", 4, 40000)}


def run_balance(name: str, games: int | None, runs: Path, jobs: int, fresh: bool):
    from ttrsim.analysis import route_importance, ticket_fairness
    from ttrsim.balance_report import write_fairness_report, write_route_importance_report

    board, players, default = BALANCE_GAMES[name]
    games = games or default
    out = ROOT / "reports" / name
    t = time.perf_counter()
    command = (f"python scripts/make_reports.py --only {name}"
               + (f" --balance-games {games}" if games != default else "") + f" --jobs {jobs}")
    if name == "europe-4p-route-importance":
        work = runs / name
        if fresh and work.exists():
            shutil.rmtree(work)
        table = route_importance(board, players, games=games, seed=SEED, n_jobs=jobs,
                                 out=work, progress=True)
        played = time.perf_counter() - t
        n_boards = int(table.note.eq("").sum()) + 1
        notes = [f"Europe, 4 players, every seat on the default policy (tickets), seats rotating; "
                 f"{games:,} games per board on {n_boards} boards (the intact board and each "
                 f"route removed): {games * n_boards:,} games in {played:.0f} s with "
                 f"--jobs {jobs}. Seed {SEED}. Made by: {command}"]
        from ttrsim import maps

        index = write_route_importance_report(table, maps.load(board), out,
                                              f"Route importance: Europe, 4 players, "
                                              f"{games:,} games per route", notes)
    else:
        fair = ticket_fairness(board, players, games=games, seed=SEED, n_jobs=jobs, rounds=2)
        played = time.perf_counter() - t
        notes = [f"USA, 4 players, every seat on the default policy (tickets), seats rotating; "
                 f"{games:,} games per round, 3 rounds (as printed and two rounds of suggested "
                 f"points, the same seeds): {3 * games:,} games in {played:.0f} s with --jobs "
                 f"{jobs}. Seed {SEED}. Made by: {command}"]
        index = write_fairness_report(fair, out, f"Fair ticket points: USA, 4 players, "
                                      f"{games:,} games per round", notes)
    print(f"{name}: {played:.0f} s of play, report {index.relative_to(ROOT)} "
          f"({time.perf_counter() - t - played:.0f} s)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=1_000_000)
    ap.add_argument("--jobs", type=int, default=-1)
    ap.add_argument("--runs", default=str(ROOT / "runs"), help="where the runs are written")
    ap.add_argument("--only", action="append", choices=sorted(STUDIES) + sorted(BALANCE_GAMES),
                    help="one study (repeatable)")
    ap.add_argument("--balance-games", type=int, default=None,
                    help="games per board of the balance studies (default: BALANCE_GAMES)")
    ap.add_argument("--resume", action="store_true",
                    help="reuse runs already in --runs (default: start them afresh)")
    args = ap.parse_args(argv)
    for name in args.only or list(STUDIES) + list(BALANCE_GAMES):
        if name in BALANCE_GAMES:
            run_balance(name, args.balance_games, Path(args.runs), args.jobs,
                        fresh=not args.resume)
            continue
        run_study(name, args.games, Path(args.runs), args.jobs, fresh=not args.resume)
    return 0


if __name__ == "__main__":
    sys.exit(main())
