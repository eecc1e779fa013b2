"""Levers of the search, each against the search they were measured against, the default
until 2026-12-02 (docs/expert-history.md, "Levers of the search"): win share with its
Wilson 95% interval, CPU per decision, and the ticket game it plays.

Each --spec plays --games seat-rotated games against --against (default:
`search:playouts=35#today`, the default search of 35 playouts, under a label of its own)
on --board at --players
(one seat the spec, the others --against; seed --seed, the same deals for every spec).
Its cost is the CPU seconds per decision of the spec and of --against, each in
--cost-games 2-player games against `tickets` on the same board (one process, so
comparable within a run). Per row also the spec's seats: net ticket points (completed
minus failed) in the games it won, tickets drawn, completed, the median game turn of its
first claim, and per game the most tickets completed by one player. Rows are appended
to --json (a rerun skips the rows already there).

    nice -n 5 python scripts/search_levers.py --board usa-mega --players 2 --games 150 \\
        --spec search:rare=4 --spec search:foes=tickets
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

import ttrsim
from ttrsim.batches import game_seeds, play_batch
from ttrsim.game import compile_board
from ttrsim.policies import make_policy
from ttrsim.results import update_json

HERE = Path(__file__).parent
TODAY = "search:playouts=35#today"


def cpu_per_decision(board: str, spec: str, games: int, seed: int) -> float:
    """CPU seconds per decision of `spec` against `tickets` at 2 players."""
    cb = compile_board(board)
    pols = [make_policy(spec, cb.board), make_policy("tickets", cb.board)]
    t = time.process_time()
    play_batch(cb, 2, pols, game_seeds(seed, games), 0, True, True)
    return (time.process_time() - t) / max(1, int(getattr(pols[0], "total_decisions", 0)))


def measure(board: str, players: int, spec: str, against: str, games: int, seed: int,
            jobs: int) -> dict:
    run = ttrsim.simulate(board, [spec] + [against] * (players - 1), games=games, seed=seed,
                          n_jobs=jobs)
    row = run.summary().iloc[0]
    g = run.games
    mine = g[g["policy"] == run.summary().index[0]]   # the spec's seats
    net = mine["ticket_points"]
    fc = mine["first_claim_turn"].to_numpy(np.float64)
    return {"win_share": float(row["win_share"]), "low": float(row["win_share_low"]),
            "high": float(row["win_share_high"]),
            "net_ticket_points_won": float(net[mine["rank"] == 1].mean()),
            "ticket_draws": float(mine["ticket_draws"].mean()),
            "tickets_completed": float(mine["tickets_completed"].mean()),
            "first_claim_median": float(np.median(fc[fc >= 0])) if (fc >= 0).any() else None,
            "most_completed_per_game": float(g.groupby("game")["tickets_completed"].max().mean()),
            "winner_net_ticket_points": float(g.loc[g["rank"] == 1, "ticket_points"].mean())}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--board", default="usa-mega")
    ap.add_argument("--players", type=int, default=2)
    ap.add_argument("--spec", action="append", required=True)
    ap.add_argument("--against", default=TODAY)
    ap.add_argument("--games", type=int, default=150)
    ap.add_argument("--cost-games", type=int, default=4)
    ap.add_argument("--seed", type=int, default=67)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--json", type=Path, default=HERE / "search_levers.json")
    a = ap.parse_args(argv)
    done = json.loads(a.json.read_text()) if a.json.exists() else []
    for spec in a.spec:
        key = {"board": a.board, "players": a.players, "spec": spec, "against": a.against,
               "games": a.games, "seed": a.seed}
        if any(all(r.get(k) == v for k, v in key.items()) for r in done):
            continue
        t = time.time()
        got = measure(a.board, a.players, spec, a.against, a.games, a.seed, a.jobs)
        cost = {s: cpu_per_decision(a.board, s, a.cost_games, a.seed) for s in (spec, a.against)}
        row = dict(key, **got, cpu_per_decision=cost[spec],
                   cost_ratio=cost[spec] / cost[a.against], seconds=round(time.time() - t, 1),
                   date=time.strftime("%Y-%m-%d"))
        update_json(a.json, lambda old: old + [row], default=[])
        done.append(row)
        print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    from ttrsim.script import run_script

    sys.exit(run_script(main))
