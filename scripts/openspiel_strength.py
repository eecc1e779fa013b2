"""Strength of OpenSpiel's Python ISMCTS against ttrsim policies, resumable.

Each row is ISMCTS (``open_spiel.python.algorithms.ismcts.ISMCTSBot``) with S simulations
and an evaluator (``random``: OpenSpiel's ``RandomRolloutEvaluator``; any ttrsim spec,
e.g. ``tickets``: ``ttrsim.env.openspiel.PolicyEvaluator``) against one ttrsim policy spec
(``tickets``, ``search``, ``expert`` when it exists, a Python policy...) fielded as a
``PolicyBot``, on one board at 2 players. Deal d of a board is the same for every row,
and is played twice, ISMCTS in seat 0 then in seat 1 (seat-rotated, paired deals).
Every finished game is appended to a JSON-lines file (default
scripts/openspiel_strength.jsonl), so an interrupted run keeps its games and the same
command resumes it.

    nice -n 10 python scripts/openspiel_strength.py --board newyork --sims 100 \\
        --rollout random --opponent tickets --deals 50
    python scripts/openspiel_strength.py --markdown        # the table of docs/openspiel.md

Win share: games the ISMCTS seat ranks first (a shared first place counts as a win), with
its Wilson 95% interval. CPU s per move: process CPU time of the ISMCTS bot's ``step``
per decision it took (the machine was shared, so these are provisional).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
import zlib
from pathlib import Path

import numpy as np

DEFAULT_OUT = Path(__file__).with_name("openspiel_strength.jsonl")


def deal_seed(board: str, d: int) -> int:
    """Seed of deal d on a board: the same for every row (OpenSpiel's int parameter
    is 32-bit, so seeds stay below 2**31)."""
    from ttrsim.batches import game_seeds

    key = zlib.crc32(f"openspiel-strength:{board}".encode())
    return int(game_seeds(key, d + 1)[d]) & 0x7FFFFFFF


def row_label(sims: int, rollout: str) -> str:
    return f"ismcts:sims={sims},rollout={rollout}"


def _Timed(bot):
    """``bot`` wrapped as a ``pyspiel.Bot`` that counts its decisions and their CPU seconds."""
    import pyspiel

    class Timed(pyspiel.Bot):
        def __init__(self):
            pyspiel.Bot.__init__(self)
            self.cpu, self.decisions = 0.0, 0

        def restart_at(self, state):
            bot.restart_at(state)

        def inform_action(self, state, player_id, action):
            bot.inform_action(state, player_id, action)

        def step(self, state):
            t = time.process_time()
            action = bot.step(state)
            self.cpu += time.process_time() - t
            self.decisions += 1
            return action

    return Timed()


def play(board: str, sims: int, rollout: str, opponent: str, d: int, seat: int,
         uct_c: float) -> dict:
    """One game: ISMCTS at ``seat`` against ``opponent`` on deal ``d``."""
    import pyspiel
    from open_spiel.python.algorithms import ismcts, mcts
    from open_spiel.python.algorithms.evaluate_bots import evaluate_bots

    from ttrsim.env.openspiel import PolicyBot, PolicyEvaluator, game, seeded_resampler

    seed = deal_seed(board, d)
    g = game(board, 2, seed)
    rng = np.random.RandomState((seed * 2 + seat) & 0x7FFFFFFF)
    if rollout == "random":
        evaluator = mcts.RandomRolloutEvaluator(1, rng)
    else:
        evaluator = PolicyEvaluator(rollout, seed=seed * 2 + seat)
    bot = ismcts.ISMCTSBot(g, evaluator, uct_c, sims, random_state=rng)
    bot.set_resampler(seeded_resampler(seed * 2 + seat))   # same deal and seat, same game
    other = PolicyBot(opponent, g, seed=seed)
    timed = _Timed(bot)
    state = g.new_initial_state()
    start = time.time()
    # OpenSpiel's own loop plays its states (the seat room plays ttrsim's games)
    evaluate_bots(state, [timed, other] if seat == 0 else [other, timed], np.random)
    cpu, decisions = timed.cpu, timed.decisions
    scores = state.game_state().scores()
    first = [s["rank"] == 1 for s in scores]
    return {"board": board, "bot": row_label(sims, rollout), "opponent": opponent,
            "deal": d, "seed": seed, "seat": seat, "win": bool(first[seat]),
            "shared": bool(first[seat] and sum(first) > 1),
            "margin": scores[seat]["total"] - scores[1 - seat]["total"],
            "decisions": decisions, "cpu": cpu, "wall": time.time() - start,
            "moves": len(state.history())}


def load(path: Path) -> list[dict]:
    if not path.exists():
        return []
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def run(args) -> None:
    done = {(r["board"], r["bot"], r["opponent"], r["deal"], r["seat"]) for r in load(args.out)}
    label = row_label(args.sims, args.rollout)
    todo = [(d, seat) for d in range(args.deals) for seat in (0, 1)
            if (args.board, label, args.opponent, d, seat) not in done]
    print(f"{args.board} {label} vs {args.opponent}: {len(todo)} games to play "
          f"({2 * args.deals - len(todo)} already in {args.out})", file=sys.stderr)
    from tqdm import tqdm

    for d, seat in tqdm(todo, desc=f"{args.board} {label} vs {args.opponent}", unit="game"):
        r = play(args.board, args.sims, args.rollout, args.opponent, d, seat, args.uct_c)
        with open(args.out, "a", encoding="utf-8") as f:
            f.write(json.dumps(r) + "\n")


def markdown(path: Path) -> str:
    """One line per (board, bot, opponent): games, deals played from both seats, win share
    with its Wilson interval, mean margin, CPU s per ISMCTS move. A run stopped mid-deal
    leaves a deal played from one seat only: its game counts, and the paired-deal column
    shows it."""
    from ttrsim.stats import wilson_interval

    groups: dict = {}
    for r in load(path):
        groups.setdefault((r["board"], r["bot"], r["opponent"]), {}).setdefault(r["deal"], {})[r["seat"]] = r
    lines = ["| board | ISMCTS (OpenSpiel) | opponent | games | deals from both seats | "
             "win share | Wilson 95% | mean margin | CPU s/move |",
             "|---|---|---|---:|---:|---:|---|---:|---:|"]
    for (board, bot, opp), deals in sorted(groups.items()):
        games = [g for pair in deals.values() for g in pair.values()]
        paired = sum(len(pair) == 2 for pair in deals.values())
        n, wins = len(games), sum(g["win"] for g in games)
        lo, hi = wilson_interval(wins, n)
        cpu = sum(g["cpu"] for g in games) / max(1, sum(g["decisions"] for g in games))
        margin = np.mean([g["margin"] for g in games])
        lines.append(f"| {board} | {bot} | {opp} | {n} | {paired} | {wins / n:.3f} | "
                     f"{lo:.3f}-{hi:.3f} | {margin:+.1f} | {cpu:.3f} |")
    return "\n".join(lines)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--board", default="newyork")
    p.add_argument("--sims", type=int, default=100, help="ISMCTS simulations per move")
    p.add_argument("--rollout", default="random",
                   help="'random' (OpenSpiel's random rollouts) or a ttrsim policy spec")
    p.add_argument("--opponent", default="tickets", help="any ttrsim policy spec")
    p.add_argument("--deals", type=int, default=10, help="deals, each played from both seats")
    p.add_argument("--uct-c", type=float, default=2.0, help="ISMCTS exploration constant")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT)
    p.add_argument("--markdown", action="store_true", help="print the table from --out")
    args = p.parse_args(argv)
    if args.markdown:
        print(markdown(args.out))
        return
    if args.sims < 1 or args.deals < 1:
        p.error("--sims and --deals must be positive")
    run(args)


if __name__ == "__main__":
    from ttrsim.script import run_script

    sys.exit(run_script(main))
