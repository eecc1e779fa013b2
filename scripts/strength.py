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
``--draw-value`` measures it position by position: at turns of ``tickets`` self-play,
``ttrsim.analyse`` compares a ticket draw with the move ``tickets`` makes, and where the
plan is done both are played on from the true position (see draw_value).

Prints Markdown tables (those of docs/policies.md) and writes them as JSON (``--json``,
default ``scripts/strength.json``); ``--markdown`` prints the tables from that JSON.

    python scripts/strength.py                    # 10,000 games per table (about a minute)
    python scripts/strength.py --games 1000       # a quick look
    python scripts/strength.py --markdown         # the tables of the last run
    python scripts/strength.py --draws            # the ticket-draw curve (20,000 games a point)
    python scripts/strength.py --draws --markdown # its table from scripts/strength_draws.json
    python scripts/strength.py --draws --figure docs/ticket_draws.png   # the same as a figure
    python scripts/strength.py --draw-value       # a draw against tickets' own move (2 minutes)
"""
from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path

import numpy as np

from ttrsim.batches import SCORE_COLS
from ttrsim.game import compile_board
from ttrsim.seats import Table, play_game, play_match
from ttrsim.stats import wilson_interval

BOARDS = ("usa", "europe", "newyork")
POLICIES = ("tickets", "routes", "greedy", "random")
COL = {c: i for i, c in enumerate(SCORE_COLS)}


def table(board: str, specs: list, games: int, seed: int, tune=None) -> list[dict]:
    """Play `games` seat-rotated games of `specs` (one per seat); one row per policy.
    `tune` maps a seat to weights for its policy's ``tune``."""
    m = play_match(board, specs, games, seed, summary=False, tune=tune)
    seconds, slot, n = m.seconds, m.slot, len(specs)
    claims, offers = m.events["claims"], m.events["offers"]
    route_len = np.asarray(compile_board(board).board.route_len)
    rows = []
    for k, spec in enumerate(specs):
        mine = m.of(k)                            # (games, score columns)
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


TRAIN_BINS = (0, 0.25, 0.5, 0.75, 1.0)  # trains left of the seat to move, share of its start


def self_play_turns(board: str, games: int, seed: int, per_game: int):
    """`per_game` turns taken at random from each of `games` 2-player `tickets` self-play
    games (after the sixth turn, before the last round, the seat having a route): yields
    (game index, position, the action `tickets` took there)."""
    import random

    rng = random.Random(seed)
    for gi in range(games):
        taken = []

        def keep(table):
            game, me, act = table.game, table.seat, table.choose()
            st = game.state()
            if game.phase == "turn" and game.turn > 6 and not st["last_round"] \
                    and st["players"][me]["n_routes"] > 0:
                taken.append((game.clone(), act))
            return act

        play_game(Table.deal(board, ["tickets", "tickets"], seed * 1_000_003 + gi), keep)
        for pos, act in rng.sample(taken, min(per_game, len(taken))):
            yield gi, pos, act


def tickets_joined(pos) -> bool:
    """Whether the seat to move has joined every ticket it holds (its `tickets` plan is
    then done: the positions where `tickets` weighs a ticket draw)."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    b, st = pos.board, pos.state()
    me = st["players"][pos.current_player]
    routes = np.asarray(me["routes"], int)
    graph = coo_matrix((np.ones(len(routes)), (np.asarray(b.route_a)[routes],
                                                np.asarray(b.route_b)[routes])),
                       shape=(b.n_cities, b.n_cities))
    _, comp = connected_components(graph, directed=False)
    return all(comp[b.ticket_a[t]] == comp[b.ticket_b[t]] for t in me["tickets"])


def play_on(pos, first: int, seed: int):
    """Play `first`, then `tickets` in every seat from the true position to the end: the
    final scores and the turns played."""
    game = pos.clone()
    turn = game.turn
    game.apply(first)
    play_game(Table(game, ["tickets"] * game.n_players, seed=seed))
    return game.scores(), game.turn - turn


def mean_interval(values) -> tuple:
    """Mean and 95% t interval (NaN bounds for fewer than two values)."""
    from scipy import stats

    v = np.asarray(values, float)
    if len(v) < 2:
        return float(v.mean()) if len(v) else float("nan"), float("nan"), float("nan")
    ci = stats.ttest_1samp(v, 0.0).confidence_interval()
    return float(v.mean()), float(ci.low), float(ci.high)


def draw_value(games: int, seed: int, playouts: int = 200, per_game: int = 4) -> list[dict]:
    """What a ticket draw is worth to `tickets` where it could draw, two ways.

    "analyse": at turns of self-play (self_play_turns), ``ttrsim.analyse`` plays the ticket
    draw and `tickets`' own move `playouts` times each from worlds the seat may know, both
    continued by `tickets` in every seat. One row per board and range of the seat's trains
    left (shares of its start), and one for all: positions, the mean difference in win
    rate (draw minus own move) with its 95% interval (t, positions taken as independent),
    and the share of positions where the draw is analyse's best action.

    "branch": at turns where the seat has joined all its tickets (its plan is done, where
    `tickets` weighs a draw) and `tickets` did not draw, the true position is played on
    twice by `tickets`, once after a ticket draw, once after its own move: the
    differences (draw minus own move) in winning, the seat's score, ticket and route
    points, the best opponent's score and the turns the game lasts, with 95% intervals."""
    from ttrsim import Game
    from ttrsim.search import analyse

    rows = []
    for board in BOARDS:
        start = Game(board, 2).state()["players"][0]["trains"]
        diffs, trains, best = [], [], []
        for gi, pos, act in self_play_turns(board, games, seed, per_game):
            table = analyse(pos, playouts=playouts, seed=gi)
            draw = table[table.action == "draw tickets"]
            own = table[table.code == act]
            if draw.empty or own.empty or act == int(draw.code.iloc[0]):
                continue
            diffs.append(float(draw.win_rate.iloc[0] - own.win_rate.iloc[0]))
            trains.append(pos.state()["players"][pos.current_player]["trains"] / start)
            best.append(bool(draw.best.iloc[0]))
        diffs, trains, best = np.array(diffs), np.array(trains), np.array(best)
        for lo, hi in list(zip(TRAIN_BINS[:-1], TRAIN_BINS[1:])) + [(None, None)]:
            pick = np.ones(len(diffs), bool) if lo is None else (trains > lo) & (trains <= hi)
            if not pick.any():
                continue
            mean, low, high = mean_interval(diffs[pick])
            rows.append({"kind": "analyse", "board": board,
                         "trains": "all" if lo is None else f"{lo:.0%}–{hi:.0%} of {start}",
                         "positions": int(pick.sum()), "games": games, "playouts": playouts,
                         "mean_diff": mean, "low": low, "high": high,
                         "draw_best": float(best[pick].mean())})
        # true-position branches where the plan is done: three times the turns sampled,
        # since most turns do not qualify
        diff = {k: [] for k in ("win", "score", "ticket_points", "route_points",
                                "opponent_score", "turns")}
        for gi, pos, act in self_play_turns(board, games, seed + 1, 3 * per_game):
            draws = [a.code for a in pos.legal_actions() if a.kind == "draw_tickets"]
            if not draws or draws[0] == act or not tickets_joined(pos):
                continue
            me = pos.current_player
            results = [play_on(pos, first, 7919 * gi) for first in (draws[0], act)]
            (sd, td), (so, to) = results
            diff["win"].append(int(sd[me]["rank"] == 1) - int(so[me]["rank"] == 1))
            for key, col in (("score", "total"), ("ticket_points", "ticket_points"),
                             ("route_points", "route_points")):
                diff[key].append(sd[me][col] - so[me][col])
            diff["opponent_score"].append(
                max(x["total"] for k, x in enumerate(sd) if k != me)
                - max(x["total"] for k, x in enumerate(so) if k != me))
            diff["turns"].append(td - to)
        row = {"kind": "branch", "board": board, "positions": len(diff["win"]), "games": games}
        for key, values in diff.items():
            row[key], row[key + "_low"], row[key + "_high"] = mean_interval(values)
        rows.append(row)
        print(f"{board}: done", file=sys.stderr, flush=True)
    return rows


def markdown_draw_value(rows: list[dict]) -> str:
    """The two tables of draw_value for docs/policies.md."""
    out = ["| board | trains left | positions | win rate, draw minus own move (95%) | "
           "draw is the best action |", "|---|---|---:|---:|---:|"]
    for r in rows:
        if r.get("kind", "analyse") == "analyse":
            out.append(f"| {r['board']} | {r['trains']} | {r['positions']} | "
                       f"{r['mean_diff']:+.3f} [{r['low']:+.3f}, {r['high']:+.3f}] | "
                       f"{r['draw_best']:.1%} |")
    branch = [r for r in rows if r.get("kind") == "branch"]
    if branch:
        keys = ("win", "score", "ticket_points", "route_points", "opponent_score", "turns")
        out += ["", "| board | positions | " + " | ".join(k.replace("_", " ") for k in keys)
                + " |", "|---|---:|" + "---:|" * len(keys)]
        for r in branch:
            out.append(f"| {r['board']} | {r['positions']} | " + " | ".join(
                f"{r[k]:+.2f} [{r[k + '_low']:+.2f}, {r[k + '_high']:+.2f}]" for k in keys) + " |")
    return "\n".join(out)


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


def figure_draws(rows: list[dict], out: str) -> None:
    """The ticket-draw table as a figure: per board, each setting's tickets offered per game
    against its win share minus the default's in the same games (a shared win counts for
    both, so 0 is parity), with a normal 95% interval of that difference; the draw_gain
    curve joined by a line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(BOARDS), figsize=(12, 4), sharey=True)
    for ax, board in zip(axes, BOARDS):
        curve = []
        for r in (r for r in rows if r["board"] == board):
            a, b, n = r["win_share"], r["opponent_win_share"], r["games"]
            d = a - b
            tie = a + b - 1                      # both counted a shared win
            half = 1.96 * np.sqrt(max((a - tie) + (b - tie) - d * d, 0.0) / n)
            setting = r["setting"]
            if set(setting) == {"draw_gain"}:
                curve.append((r["offered"], d, half, setting["draw_gain"]))
                continue
            label = ", ".join(f"{k}={v}" if k != "spec" else v for k, v in setting.items())
            ax.errorbar(r["offered"], d, yerr=half, fmt="s", capsize=3, label=label)
        curve.sort()
        x, y, e, g = zip(*curve)
        ax.errorbar(x, y, yerr=e, fmt="o-", color="black", capsize=3, label="draw_gain (0 … -50)")
        for xi, yi, gi in zip(x, y, g):
            ax.annotate(f"{gi:g}", (xi, yi), textcoords="offset points", xytext=(4, 4), fontsize=7)
        ax.axhline(0, color="gray", lw=0.8, ls="--")
        ax.set_title(f"{board}, 2 players, {rows[0]['games']:,} games a point")
        ax.set_xlabel("tickets offered per game")
    axes[0].set_ylabel("win share minus the default's (95%)")
    axes[-1].legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(f"wrote {out}", file=sys.stderr)


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
    ap.add_argument("--draw-value", action="store_true",
                    help="measure what a ticket draw is worth to tickets with analyse() "
                         "(--games defaults to 200 per board; --json to "
                         "scripts/strength_draw_value.json)")
    ap.add_argument("--figure", metavar="PNG",
                    help="with --draws: draw its table from --json as a figure and exit")
    args = ap.parse_args(argv)
    if args.draw_value:
        if args.json == ap.get_default("json"):
            args.json = str(Path(__file__).with_name("strength_draw_value.json"))
        if args.games == ap.get_default("games"):
            args.games = 200
        if args.markdown:
            print(markdown_draw_value(json.loads(Path(args.json).read_text())))
            return 0
        rows = draw_value(args.games, args.seed)
        Path(args.json).write_text(json.dumps(rows, indent=2))
        print(markdown_draw_value(rows))
        print(f"written to {args.json}", file=sys.stderr)
        return 0
    if args.draws:
        if args.json == ap.get_default("json"):
            args.json = str(Path(__file__).with_name("strength_draws.json"))
        if args.games == ap.get_default("games"):
            args.games = 20_000
    show = markdown_draws if args.draws else markdown
    if args.figure:
        if not args.draws:
            ap.error("--figure draws the ticket-draw table: use it with --draws")
        figure_draws(json.loads(Path(args.json).read_text()), args.figure)
        return 0
    if args.markdown:
        print(show(json.loads(Path(args.json).read_text())))
        return 0
    rows = (draws if args.draws else measure)(args.games, args.seed)
    Path(args.json).write_text(json.dumps(rows, indent=2))
    print(show(rows))
    print(f"written to {args.json}", file=sys.stderr)
    return 0

if __name__ == "__main__":
    from ttrsim.script import run_script

    sys.exit(run_script(main))
