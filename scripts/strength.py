"""Strength of the built-in policies against each other.

For each board: every pair of built-in policies at 2 players, one seat of each at a
4-player table (on New York, which seats 4 at most, the same), and 4-player self-play of
each heuristic. Seats rotate between games, so each policy sits in each seat equally often.
Per policy and table: win share (a shared win counts for each winner), mean score, the
share of kept tickets completed, tickets offered per game and the mean length of the
routes claimed.

``--draws`` measures instead what drawing more tickets is worth to ``tickets``: its ticket
draw weights (``draw_gain``, the points a draw must be expected to bring, default 0;
``draw_rate``, ``draw_behind``, ``end_horizon``, and its ``draw`` parameter: see
DRAW_SETTINGS) changed, each setting against the default ``tickets`` at 2 players.

Prints Markdown tables (those of docs/policies.md) and writes them as JSON (``--json``,
default ``scripts/strength.json``); ``--markdown`` prints the tables from that JSON.

    python scripts/strength.py                    # 10,000 games per table (about a minute)
    python scripts/strength.py --games 1000       # a quick look
    python scripts/strength.py --markdown         # the tables of the last run
    python scripts/strength.py --draws            # the ticket-draw curve (20,000 games a point)
    python scripts/strength.py --draws --markdown # its table from scripts/strength_draws.json
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
from ttrsim.analysis.stats import wilson_interval
from ttrsim.game import compile_board
from ttrsim.policies import make_policy

BOARDS = ("usa", "europe", "newyork")
POLICIES = ("tickets", "routes", "greedy", "random")
COL = {c: i for i, c in enumerate(SCORE_COLS)}


def table(board: str, specs: list, games: int, seed: int, tune=None) -> list[dict]:
    """Play `games` seat-rotated games of `specs` (one per seat); one row per policy.
    `tune` maps a seat to weights for its policy's ``tune``."""
    cb = compile_board(board)
    policies = [make_policy(s, cb.board) for s in specs]
    for k, weights in (tune or {}).items():
        policies[k].tune(**weights)
    t = time.perf_counter()
    out = play_batch(cb, len(specs), policies, game_seeds(seed, games), 0, True, False)
    seconds = time.perf_counter() - t
    sc, slot, n = out["scores"], out["slot"], len(specs)
    claims, offers = out["claims"], out["offers"]
    route_len = np.asarray(cb.board.route_len)
    rows = []
    for k, spec in enumerate(specs):
        mine = sc[slot == k]                      # (games, score columns)
        kept = mine[:, COL["tickets_kept"]].sum()
        # events carry (game, seat); slot[game, seat] is the policy's slot
        own_claims = claims[slot[claims[:, 0], claims[:, 1]] == k]
        own_offers = offers[slot[offers[:, 0], offers[:, 1]] == k]
        rows.append({"board": board, "players": n, "policy": spec,
                     "opponents": [s for j, s in enumerate(specs) if j != k],
                     "games": games, "win_share": float((mine[:, COL["rank"]] == 1).mean()),
                     "mean_score": float(mine[:, COL["score"]].mean()),
                     "ticket_points": float(mine[:, COL["ticket_points"]].mean()),
                     "ticket_completion": float(mine[:, COL["tickets_completed"]].sum() / max(kept, 1)),
                     "offered": len(own_offers) / games,
                     "route_length": float(route_len[own_claims[:, 2]].mean()) if len(own_claims) else 0.0,
                     "seconds": seconds})
    return rows


def self_play(board: str, spec: str, games: int, seed: int) -> dict:
    """Four seats of `spec`, pooled."""
    rows = table(board, [f"{spec}#{k}" for k in range(4)], games, seed)
    pooled = {key: float(np.mean([r[key] for r in rows]))
              for key in ("mean_score", "ticket_points", "ticket_completion", "offered",
                          "route_length")}
    return {"board": board, "players": 4, "policy": spec, "self_play": True, "games": games,
            **pooled}


SELF_PLAY = ("tickets", "routes", "greedy")


def measure(games: int, seed: int) -> list[dict]:
    """Every pair at 2 players, one seat of each at 4 players and 4-player self-play of
    each heuristic, on every board."""
    rows = []
    for board in BOARDS:
        for a, b in itertools.combinations(POLICIES, 2):
            rows += table(board, [a, b], games, seed)
        rows += table(board, list(POLICIES), games, seed)
        rows += [self_play(board, spec, games, seed) for spec in SELF_PLAY]
        print(f"{board}: done", file=sys.stderr, flush=True)
    return rows


# Settings of the `tickets` seat, one row each: ``tune`` weights, and "spec" for its spec
# when not plain `tickets`. The draw threshold lowered step by step; the opportunity cost
# of a draw capped at 3 route points a turn (draw_rate), with draws only when the seat does
# not set the pace of the end (draw_behind: trains more than the seat with the fewest), or
# only early (draw=25: 25 trains left at least, against 12 by default); a shorter horizon
# for route points once the plan is done or cannot be finished (end_horizon); and the last
# two together.
DRAW_SETTINGS = tuple({"draw_gain": g} for g in (0, -5, -10, -20, -30, -50)) + (
    {"draw_rate": 3, "draw_behind": 0},
    {"draw_rate": 3, "draw_behind": 2},
    {"spec": "tickets:draw=25", "draw_rate": 3},
    {"end_horizon": 0.65},
    {"end_horizon": 0.65, "draw_rate": 3, "draw_behind": 2},
)


def draws(games: int, seed: int) -> list[dict]:
    """`tickets` with the settings of DRAW_SETTINGS against the default `tickets`, 2
    players, on every board: one row per setting."""
    rows = []
    for board in BOARDS:
        for setting in DRAW_SETTINGS:
            weights = {k: v for k, v in setting.items() if k != "spec"}
            spec = setting.get("spec", "tickets")
            me, other = table(board, [f"{spec}#tuned", "tickets"], games, seed,
                              tune={0: weights})
            rows.append({**me, "setting": setting, "opponent_score": other["mean_score"],
                         "opponent_win_share": other["win_share"]})
        print(f"{board}: done", file=sys.stderr, flush=True)
    return rows


def wilson(share: float, n: int) -> str:
    """Wilson 95% interval of a win share over n games, as text."""
    lo, hi = wilson_interval(round(share * n), n)
    return f"[{float(lo):.3f}, {float(hi):.3f}]"


def markdown_draws(rows: list[dict]) -> str:
    """The ticket-draw table of docs/policies.md from the rows of `draws`."""
    out = ["| board | setting | win share (95%) | default's win share | tickets offered | "
           "ticket points | score | default's score |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        setting = ", ".join(f"{k}={v}" if k != "spec" else f"`{v}`"
                            for k, v in r["setting"].items())
        out.append(f"| {r['board']} | {setting} | {r['win_share']:.3f} "
                   f"{wilson(r['win_share'], r['games'])} | {r['opponent_win_share']:.3f} | "
                   f"{r['offered']:.2f} | "
                   f"{r['ticket_points']:.1f} | {r['mean_score']:.1f} | "
                   f"{r['opponent_score']:.1f} |")
    return "\n".join(out)


def markdown(rows: list[dict]) -> str:
    """The Markdown tables of docs/policies.md from the rows of `measure`."""
    out = []
    cell = lambda r: f"{r['win_share']:.3f} / {r['mean_score']:.1f} / {r['ticket_completion']:.2f}"
    played = [r for r in rows if not r.get("self_play")]
    for board in BOARDS:
        pairs = {(r["policy"], r["opponents"][0]): r for r in played
                 if r["board"] == board and r["players"] == 2}
        games = next(r["games"] for r in rows if r["board"] == board)
        out += [f"**{board}, 2 players**: row policy against column policy, {games:,} games "
                "each (win share / mean score / share of kept tickets completed)", "",
                "| | " + " | ".join(POLICIES) + " |", "|---" * (len(POLICIES) + 1) + "|"]
        for a in POLICIES:
            out.append(f"| {a} | " + " | ".join(cell(pairs[a, b]) if a != b else ""
                                                 for b in POLICIES) + " |")
        out += ["", f"**{board}, 4 players**, one seat of each, {games:,} games", "",
                "| policy | win share | mean score | tickets completed | route length |",
                "|---|---:|---:|---:|---:|"]
        out += [f"| {r['policy']} | {r['win_share']:.3f} | {r['mean_score']:.1f} | "
                f"{r['ticket_completion']:.2f} | {r['route_length']:.2f} |"
                for r in played if r["board"] == board and r["players"] == 4]
        out += ["", f"**{board}, 4-player self-play**, {games:,} games", "",
                "| policy | mean score | ticket points | tickets completed | tickets offered "
                "| route length |", "|---|---:|---:|---:|---:|---:|"]
        out += [f"| {r['policy']} | {r['mean_score']:.1f} | {r['ticket_points']:.1f} | "
                f"{r['ticket_completion']:.2f} | {r['offered']:.2f} | {r['route_length']:.2f} |"
                for r in rows if r["board"] == board and r.get("self_play")]
        out.append("")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=10_000, help="games per table")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", default=str(Path(__file__).with_name("strength.json")))
    ap.add_argument("--markdown", action="store_true",
                    help="print the tables from --json and exit (measures nothing)")
    ap.add_argument("--draws", action="store_true",
                    help="measure the ticket-draw curve instead (--games defaults to 20,000; "
                         "--json to scripts/strength_draws.json)")
    args = ap.parse_args(argv)
    if args.draws:
        if args.json == ap.get_default("json"):
            args.json = str(Path(__file__).with_name("strength_draws.json"))
        if args.games == ap.get_default("games"):
            args.games = 20_000
    show = markdown_draws if args.draws else markdown
    if args.markdown:
        print(show(json.loads(Path(args.json).read_text())))
        return 0
    rows = (draws if args.draws else measure)(args.games, args.seed)
    Path(args.json).write_text(json.dumps(rows, indent=2))
    print(show(rows))
    print(f"written to {args.json}", file=sys.stderr)
    return 0

if __name__ == "__main__":
    sys.exit(main())
