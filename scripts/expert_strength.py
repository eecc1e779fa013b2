"""Strength and speed of the `expert` policy and of the search with `expert` rollouts or
the `expert` as its lead.

Parts (--part, repeatable; results appended to --json, default scripts/expert_strength.json):
  tickets   expert against tickets: 2 players, and one expert seat against three tickets
            at 4 players, per board (--tickets-games games per table, default 2000)
  speed     expert and tickets self-play, Europe 4 players, side by side in one process:
            games per CPU second of each, best of 3 alternated rounds, and their ratio
  cost      CPU seconds per decision of `search:rollout=tickets` (the search before
            ttrsim 0.2; "`search`" below), of `search:rollout=expert` and of
            `search:lead=expert` (tickets rollouts) at the same playouts,
            2 players against tickets, per board; gives the playouts of each of the two
            at equal CPU per decision with `search`
  rollout   `search:rollout=expert` against `search`, 2 players, per board: at equal CPU
            per decision (playouts from `cost`) and at equal playouts
  lead      `search:lead=expert` (the expert's move is the default candidate, tickets
            rollouts) against `search`, 2 players, per board, at equal CPU per decision
  four      four seats of `search:rollout=expert` (equal CPU), of `search:lead=expert`
            (equal CPU) and of `search`, USA 4 players: the winners' mean score
  vs-search `expert` against the search of 0.1 and the default search, 2 players, per board
  default   the default search of ttrsim 0.2 (expert rollouts, 35 playouts) against
            `search`, 2 players, per board, with the CPU per decision of each (against
            tickets, --games / 20 games)
  budget    what more CPU buys: `search` at 100, 200, 400 and 800 playouts (half, once,
            twice and four times --playouts; at 200 it plays itself, which gives
            parity: a shared first place counts as a win for both) and the default
            search at 18, 35, 70 and 140 playouts (the same multiples of its 35, about
            the same multiples of that CPU) against `search`, 2 players, on --board
            (default newyork), with the CPU per decision of each (against tickets,
            --games / 20 games); a rerun plays only the rows not yet in --json

Win shares are of the first policy, seats rotated (a shared first place counts as a win),
with Wilson 95% intervals. Every row names the shipped model it measured (the first 12
hex digits of the model file's SHA-256) and the date.

    nice -n 10 python scripts/expert_strength.py --part speed
    nice -n 10 python scripts/expert_strength.py --part cost --part rollout --games 200
    nice -n 10 python scripts/expert_strength.py --part cost --part lead --games 600
    nice -n 10 python scripts/expert_strength.py --part budget --games 2000
    python scripts/expert_strength.py --figure docs/search_budget.png   # from the JSON
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from ttrsim.seats import RANK, match_key, play_match
from ttrsim import __version__, maps
from ttrsim.batches import SCORE_COLS, game_seeds, play_batch
from ttrsim.game import compile_board
from ttrsim.policies import expert_models, make_policy, search_budget
from ttrsim.results import update_json
from ttrsim.stats import wilson_interval

BOARDS = ("usa", "europe", "newyork")
SCORE = SCORE_COLS.index("score")
DEFAULT_JSON = Path(__file__).with_name("expert_strength.json")
# --part budget: each search at these multiples of its own budget (the reference's
# --playouts; the default search's 35), about the same multiples of the reference's CPU
BUDGET = (0.5, 1, 2, 4)


def play(board: str, specs: list, games: int, seed: int = 0, chunk: int = 50) -> dict:
    """Seat-rotated games of `specs`; the first policy's win share (Wilson interval; a
    shared first place counts as a win, and `shared` counts those games), the winners'
    mean score, and the first policy's CPU seconds per decision when it counts them (the
    search)."""
    m = play_match(board, specs, games, match_key(seed, f"{board}|{'/'.join(specs)}"),
                   chunk=chunk, count=("total_decisions",), progress=True)
    wins, cpu, decisions = m.wins(0), m.cpu_seconds, int(m.counts["total_decisions"][0])
    flat = m.scores.reshape(-1, m.scores.shape[-1])     # every seat of every game
    lo, hi = wilson_interval(wins, games)
    return {"board": board, "players": len(specs), "specs": specs, "games": games,
            "wins": wins, "shared": m.shared(0), "win_share": wins / games,
            "low": float(lo), "high": float(hi),
            "winner_mean_score": float(np.mean(flat[flat[:, RANK] == 1][:, SCORE])),
            "cpu_seconds": cpu, "cpu_per_decision": cpu / decisions if decisions else None}


def speed(games: int = 4000, rounds: int = 3) -> dict:
    """Self-play games per CPU second, Europe 4p, expert and tickets alternated."""
    cb = compile_board("europe")
    seeds = game_seeds(1, games)
    best = {}
    for _ in range(rounds):
        for spec in ("tickets", "expert"):
            policies = [make_policy(spec, cb.board) for _ in range(4)]
            t = time.process_time()
            play_batch(cb, 4, policies, seeds, 0, True, True)
            best[spec] = max(best.get(spec, 0.0), games / (time.process_time() - t))
    return {"part": "speed", "board": "europe", "players": 4, "games": games,
            "games_per_s": best, "ratio": best["tickets"] / best["expert"]}


def cost(playouts: int, games: int) -> dict:
    """CPU per decision of the three searches at the same playouts, per board, and the
    playouts of the two with the expert at equal CPU per decision with `search`."""
    rows = {}
    for board in BOARDS:
        a = play(board, [f"search:playouts={playouts},rollout=tickets", "tickets"], games)
        b = play(board, [f"search:playouts={playouts},rollout=expert", "tickets"], games)
        c = play(board, [f"search:playouts={playouts},rollout=tickets,lead=expert", "tickets"],
                 games)

        def equal(row):
            return max(1, int(round(playouts * a["cpu_per_decision"] / row["cpu_per_decision"])))

        rows[board] = {"tickets_rollout": a["cpu_per_decision"],
                       "expert_rollout": b["cpu_per_decision"],
                       "expert_lead": c["cpu_per_decision"],
                       "equal_cpu_playouts": equal(b),
                       "equal_cpu_playouts_lead": min(playouts, equal(c))}
    return {"part": "cost", "playouts": playouts, "games": games, "boards": rows}


def budget_figure(rows: list, out: str) -> None:
    """--part budget: win share against the search of ttrsim 0.1 by CPU per decision
    (relative to that search's), one line per rollout, one panel per board; the newest
    row of each board and spec; the reference against itself is the point at 1 ((1,
    0.5) until it is measured), and the dashed line parity: 0.5 plus half the share of
    its games whose first place both seats held (a shared first place is a win for
    both)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    newest = {(r["board"], r["specs"][0]): r for r in rows if r.get("part") == "budget"}
    boards = [b for b in BOARDS if any(k[0] == b for k in newest)]
    if not boards:
        raise SystemExit("no budget results yet (--part budget)")
    fig, axes = plt.subplots(1, len(boards), figsize=(4.2 * len(boards) + 0.6, 3.8),
                             sharey=True, squeeze=False)
    for ax, board in zip(axes[0], boards):
        mine = [r for (b, _), r in newest.items() if b == board]
        ref = mine[0]["specs"][1]
        for name, rollout in (("tickets rollouts (the search of 0.1)", True),
                              ("expert rollouts (the default)", False)):
            pts = [(r["cpu_ratio"], r["win_share"], r["low"], r["high"], r["specs"][0])
                   for r in mine if ("rollout=tickets" in r["specs"][0]) == rollout]
            if rollout and not any(r["specs"][0] == ref for r in mine):
                pts.append((1.0, 0.5, 0.5, 0.5, ref))     # parity, before it was measured
            if not pts:
                continue
            pts.sort()
            x, y, lo, hi = (np.array(v) for v in list(zip(*pts))[:4])
            ax.errorbar(x, y, yerr=[y - lo, hi - y], marker="o", capsize=3, label=name)
            for xi, yi, *_, spec in pts:
                ax.annotate(spec.split("playouts=")[1].split(",")[0], (xi, yi),
                            textcoords="offset points", xytext=(4, -11), fontsize=7)
        # parity: an equal player wins half the games plus the ones it shares
        shared = [r["shared"] / r["games"] for r in mine if r["specs"][0] == ref and "shared" in r]
        ax.axhline(0.5 + (shared[0] / 2 if shared else 0.0), color="gray", lw=0.8, ls="--")
        ax.axhline(0.6, color="tab:red", lw=0.8, ls=":")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("CPU per decision (the search of 0.1 = 1)")
        ax.set_title(f"{board}, 2 players, {mine[0]['games']:,} games a point", fontsize=9)
    axes[0][0].set_ylabel("win share vs the search of 0.1 (Wilson 95%)")
    axes[0][-1].legend(fontsize=7, loc="lower right")
    fig.suptitle("What more CPU buys (labels: playouts per decision; dashed: parity, "
                 "dotted: 0.60)",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--part", action="append",
                    choices=("tickets", "speed", "cost", "rollout", "lead", "four", "vs-search",
                             "default", "budget"))
    ap.add_argument("--tickets-games", type=int, default=2000,
                    help="games per table of --part tickets (default 2000)")
    ap.add_argument("--games", type=int, default=200, help="games per table (default 200)")
    ap.add_argument("--playouts", type=int, default=200, help="playouts of the reference search")
    ap.add_argument("--board", action="append", choices=maps.available(),
                    help="board of --part budget (repeatable; default newyork) and of --part "
                         "tickets (default usa, europe, newyork)")
    ap.add_argument("--json", type=Path, default=DEFAULT_JSON)
    ap.add_argument("--figure", metavar="PNG", help="draw the budget curves (--part budget) "
                                                    "from --json and exit")
    return ap


def _budget(a, data, model, ref, save) -> None:
    """--part budget: each search at multiples of its budget against the reference, on
    each board; rows measured already (same games, model and version) are kept."""
    # at 1 x the reference plays itself: parity
    specs = ([f"search:playouts={max(1, round(a.playouts * m))},rollout=tickets"
              for m in BUDGET]
             + [f"search:playouts={max(1, round(search_budget('expert') * m))}"
                for m in BUDGET])
    for board in a.board or ["newyork"]:
        n = max(4, a.games // 20)
        base = None
        for spec in specs:
            if any(r.get("part") == "budget" and r["board"] == board
                   and r["specs"] == [spec, ref] and r["games"] == a.games
                   and r.get("model") == model and r.get("ttrsim") == __version__
                   for r in data):
                continue                  # measured already: a rerun goes on
            if base is None:
                base = play(board, [ref, "tickets"], n)["cpu_per_decision"]
            cpu = (base if spec == ref else
                   play(board, [spec, "tickets"], n)["cpu_per_decision"])
            save(dict(play(board, [spec, ref], a.games), part="budget",
                      reference_playouts=a.playouts, cpu_per_decision_vs_tickets=cpu,
                      cpu_ratio=cpu / base))


def main(argv=None) -> int:
    a = _parser().parse_args(argv)
    data = json.loads(a.json.read_text()) if a.json.exists() else []
    if a.figure:
        budget_figure(data, a.figure)
        return 0

    model = next(iter(expert_models(["expert"]).values()))     # the default model's digest

    def save(row):
        row = dict(row, model=model, date=time.strftime("%Y-%m-%d"), ttrsim=__version__)
        data.append(row)
        # read again under a lock: rows another run wrote meanwhile stay
        update_json(a.json, lambda rows: rows + [row], default=[])
        print(json.dumps(row), flush=True)

    def equal_cpu(key="equal_cpu_playouts"):
        for row in reversed(data):
            if row.get("part") == "cost" and row.get("model") == model:
                if all(key in v for v in row["boards"].values()):
                    return {b: v[key] for b, v in row["boards"].items()}
        raise SystemExit("run --part cost first (with this model): it gives the equal-CPU "
                         "playouts")

    ref = f"search:playouts={a.playouts},rollout=tickets"
    for part in a.part or ["speed"]:
        if part == "tickets":
            for board in a.board or BOARDS:
                save(dict(play(board, ["expert", "tickets"], a.tickets_games, chunk=500),
                          part="tickets"))
                save(dict(play(board, ["expert"] + [f"tickets#{k}" for k in range(3)],
                               a.tickets_games, chunk=500), part="tickets"))
        elif part == "speed":
            save(speed())
        elif part == "cost":
            save(cost(a.playouts, max(4, a.games // 20)))
        elif part == "rollout":
            eq = equal_cpu()
            for board in BOARDS:
                save(dict(play(board, [f"search:playouts={eq[board]},rollout=expert", ref],
                               a.games), part="rollout", budget="equal_cpu"))
                save(dict(play(board, [f"search:playouts={a.playouts},rollout=expert", ref],
                               a.games), part="rollout", budget="equal_playouts"))
        elif part == "lead":
            eq = equal_cpu("equal_cpu_playouts_lead")
            for board in BOARDS:
                save(dict(play(board, [f"search:playouts={eq[board]},rollout=tickets,lead=expert",
                                       ref],
                               a.games), part="lead", budget="equal_cpu"))
        elif part == "four":
            eq, eq_lead = equal_cpu(), equal_cpu("equal_cpu_playouts_lead")
            for spec in (f"search:playouts={eq['usa']},rollout=expert",
                         f"search:playouts={eq_lead['usa']},rollout=tickets,lead=expert"):
                save(dict(play("usa", [f"{spec}#{k}" for k in range(4)], a.games),
                          part="four", search=spec))
            save(dict(play("usa", [f"{ref}#{k}" for k in range(4)], a.games),
                      part="four", search=ref))
        elif part == "vs-search":
            # the search of 0.1 (`tickets` rollouts) and the default search
            for board in BOARDS:
                for search in (ref, "search"):
                    save(dict(play(board, ["expert", search], a.games), part="vs-search"))
        elif part == "default":
            for board in BOARDS:
                n = max(4, a.games // 20)
                cpu = {s: play(board, [s, "tickets"], n)["cpu_per_decision"]
                       for s in ("search", ref)}
                save(dict(play(board, ["search", ref], a.games), part="default",
                          cpu_per_decision_vs_tickets=cpu))
        elif part == "budget":
            _budget(a, data, model, ref, save)
    return 0


if __name__ == "__main__":
    from ttrsim.script import run_script

    sys.exit(run_script(main))
