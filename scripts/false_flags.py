"""How often the viewer's move flags call a move bad when it is not (docs/viewer.md).

Two measurements, each over GAMES games of BOARD, 2 players, seat 0 analysed as
``ttrsim show --analyse 0`` analyses it (``GameRecord.view_data``):

own     Seat 0 plays the analysis's own choice: at each of its decisions the row with the
        highest win rate of ``ttrsim.analyse`` on worlds of its own (another seed than the
        analysis afterwards), seat 1 plays ``tickets``. Its moves are as good as the
        analysis can tell, so a flag is, but for real small differences the first
        analysis missed, a false one. Reported: flagged decisions of all measured ones,
        and games with any flag.
equal   Moves equal by construction, on the same analyses: each decision's table is
        rebuilt so that every other move is the move played itself on other worlds
        (the played row's playouts split in two halves, the second half shuffled for each
        other move), so every null is true and the false discovery rate is the chance of
        any flag in a game. Each game's tables are rebuilt SHUFFLES times (other
        shuffles, other halves' pairings). Reported: the share of rebuilt games with any
        flag, to compare with the level, with a 95% interval by resampling games
        (``scipy.stats.bootstrap`` over the games' shares).

    python scripts/false_flags.py --games 60 --playouts 100 --board newyork

Prints a table and writes the figures as JSON (--json).
"""
from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np
from scipy.stats import binomtest
from tqdm import tqdm

import ttrsim
from ttrsim.game import Game
from ttrsim.policies import SEARCH_ROLLOUT
from ttrsim.search import FLAG_LEVEL, better_p_values, decision_p_value, flag_decisions
from ttrsim.seats import Table, play_game


def play_own_choice(board, seed, playouts, rollout):
    """One game: seat 0 plays the top row of its own analysis (seed of its own), seat 1
    `tickets`. Returns the analysis afterwards (as the viewer's) per decision of seat 0:
    (outcomes table, row played) and the flags the viewer gives."""
    tables = []

    def own_choice(table):
        g, k = table.game, table.moves
        if table.seat != 0:
            return None
        if len(g.legal_action_codes()) == 1:
            return g.legal_action_codes()[0]
        choice = ttrsim.analyse(g, playouts=playouts, seed=10_000_000 + seed * 1000 + k,
                                rollout=rollout)
        code = int(choice["code"].iloc[0])
        # the analysis a user runs afterwards, on other worlds
        df, wins = ttrsim.analyse(g, playouts=playouts, seed=seed * 1000 + k,
                                  rollout=rollout, played=code, outcomes=True)
        tables.append((wins, int(np.flatnonzero(df["played"])[0]), df.attrs["p"]))
        return code

    play_game(Table(Game(board, 2, seed=seed), [None, "tickets"], seed=seed), own_choice)
    q, flags = flag_decisions([p for _, _, p in tables])
    return tables, flags


def equal_by_construction(tables, rng):
    """The flags of a game whose every other move is the played move on other worlds."""
    ps = []
    for wins, row, _ in tables:
        x = wins[row]
        half = len(x) // 2
        a, b = x[:half], x[half:2 * half]
        t = np.vstack([a] + [rng.permutation(b) for _ in range(len(wins) - 1)])
        ps.append(decision_p_value(better_p_values(t, 0)))
    return flag_decisions(ps)[1]


def rate(k, n):
    ci = binomtest(int(k), int(n)).proportion_ci(method="wilson") if n else None
    return {"count": int(k), "of": int(n), "rate": k / n if n else float("nan"),
            "low": ci.low if ci else float("nan"), "high": ci.high if ci else float("nan")}


def equal_rate(shares, shuffles, rng):
    """The mean share of rebuilt games with a flag, with a 95% bootstrap interval over
    the games (the rebuilds of one game are not independent of each other)."""
    from scipy.stats import bootstrap

    x = np.asarray(shares, float)
    if len(x) > 1 and x.std() > 0:
        ci = bootstrap((x,), np.mean, n_resamples=2000, random_state=rng).confidence_interval
        low, high = float(ci.low), float(ci.high)
    else:
        low = high = float(x.mean()) if len(x) else float("nan")
    return {"count": int(round(x.sum() * shuffles)), "of": len(x) * shuffles,
            "rate": float(x.mean()) if len(x) else float("nan"), "low": low, "high": high}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=40)
    ap.add_argument("--playouts", type=int, default=100, help="per candidate (default 100)")
    ap.add_argument("--board", default="newyork")
    ap.add_argument("--rollout", default=None,
                    help=f"default: the search's, {SEARCH_ROLLOUT}")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--shuffles", type=int, default=50,
                    help="games of equal moves built from each game's tables (default 50)")
    ap.add_argument("--json", default=None, help="write the figures to this file")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    t0 = time.process_time()
    flagged = measured = games_flagged = decisions = 0
    equal = []
    for i in tqdm(range(args.games), desc="games", file=sys.stderr):
        tables, flags = play_own_choice(args.board, args.seed * 100_000 + i, args.playouts,
                                        args.rollout)
        decisions += len(tables)
        measured += sum(np.isfinite(p) for _, _, p in tables)
        flagged += int(flags.sum())
        games_flagged += bool(flags.any())
        equal.append(np.mean([equal_by_construction(tables, rng).any()
                              for _ in range(args.shuffles)]))
    out = {"board": args.board, "games": args.games, "playouts": args.playouts,
           "rollout": args.rollout or SEARCH_ROLLOUT, "seed": args.seed, "level": FLAG_LEVEL,
           "ttrsim": ttrsim.__version__, "decisions": decisions,
           "own_decisions_flagged": rate(flagged, measured),
           "own_games_with_a_flag": rate(games_flagged, args.games),
           "equal_games_with_a_flag": equal_rate(equal, args.shuffles, rng),
           "cpu_s": round(time.process_time() - t0, 1)}
    for key in ("own_decisions_flagged", "own_games_with_a_flag", "equal_games_with_a_flag"):
        r = out[key]
        print(f"{key:26s} {r['count']:5d} of {r['of']:5d}  {r['rate']:.3f} "
              f"[{r['low']:.3f}, {r['high']:.3f}]")
    print(f"level {FLAG_LEVEL}; {decisions} analysed decisions; {out['cpu_s']} s CPU")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    from ttrsim.script import run_script

    sys.exit(run_script(main))
