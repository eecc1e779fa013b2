"""`expert` against the field: every other built-in policy but `search`, and the
counter-strategies `blocker` and `rush`.

Parts (--part, repeatable; rows appended to --json, default scripts/counter_strength.json):
  two     --expert against blocker, rush, tickets, routes, greedy and random, 2 players,
          per board (--games games per table, default 2000)
  four    one --expert seat against three blocker seats (and against three rush seats),
          4 players, per board
  pace    the counter-strategies' own play: blocker and rush against tickets and against
          expert, 2 players, per board, with the mean game length in turns and the cuts
          blocker made per game

Win shares are of the first policy, seats rotated (a shared first place counts as a win),
with Wilson 95% intervals; each row names the expert model it measured (the first 12 hex
digits of the file's SHA-256; --expert "expert:model=PATH" measures another model, and
"expert:model=v4" a model shipped beside the default).

    nice -n 10 python scripts/counter_strength.py --part two --part four --part pace
    nice -n 10 python scripts/counter_strength.py --part two --expert expert:model=new.json
    python scripts/counter_strength.py --markdown          # tables from --json
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from ttrsim.seats import match_key, play_match
from ttrsim import __version__
from ttrsim.policies import expert_models, parse_spec
from ttrsim.results import update_json

BOARDS = ("usa", "europe", "newyork")
FIELD = ("blocker", "rush", "tickets", "routes", "greedy", "random")
DEFAULT_JSON = Path(__file__).with_name("counter_strength.json")


def play(board: str, specs: list, games: int, seed: int = 0, chunk: int = 500) -> dict:
    """Seat-rotated games of `specs` (chunks of `chunk` games, each its own seeds by
    game index); the first policy's win share with its Wilson interval, mean score and
    share of kept tickets completed, the mean game length in turns, and the cuts per
    game of the `blocker` seats."""
    m = play_match(board, specs, games, match_key(seed, f"{board}|{'/'.join(specs)}"),
                   chunk=chunk, count=("blocks",), progress=True)
    return {"board": board, "players": len(specs), "specs": specs, "seed": seed,
            **m.summary(0), "blocks_per_game": int(m.counts["blocks"].sum()) / games}


def model_digest(spec: str) -> str:
    """The first 12 hex digits of the SHA-256 of the model file the expert `spec` plays."""
    return next(iter(expert_models([spec]).values()))


def markdown(rows: list) -> str:
    """The latest row of each table, as markdown tables per part."""
    latest = {}
    for r in rows:
        latest[(r["part"], r["board"], tuple(r["specs"]))] = r
    out = []
    for part in ("two", "four", "pace"):
        sel = [r for (p, *_), r in latest.items() if p == part]
        if not sel:
            continue
        out += [f"**{part}**", "", "| board | first | against | games | win share [95%] | "
                "mean score | completed | turns | cuts a game | model |",
                "|---|---|---|---:|---|---:|---:|---:|---:|---|"]
        for r in sel:
            against = " ".join(s.split("#")[0] for s in r["specs"][1:])
            if len(set(s.split("#")[0] for s in r["specs"][1:])) == 1:
                against = f"{len(r['specs']) - 1} x {r['specs'][1].split('#')[0]}"
            out.append(f"| {r['board']} | {r['specs'][0]} | {against} | {r['games']:,} | "
                       f"{r['win_share']:.3f} [{r['low']:.3f}, {r['high']:.3f}] | "
                       f"{r['mean_score']:.1f} | {r['completed']:.2f} | {r['mean_turns']:.1f} | "
                       f"{r['blocks_per_game']:.2f} | {r['model']} |")
        out.append("")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--part", action="append", choices=("two", "four", "pace"))
    ap.add_argument("--games", type=int, default=2000, help="games per table (default 2000)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--expert", default="expert", help='the expert measured (default "expert": '
                                                       'the shipped model)')
    ap.add_argument("--board", action="append", choices=BOARDS, help="default: every board")
    ap.add_argument("--json", type=Path, default=DEFAULT_JSON)
    ap.add_argument("--markdown", action="store_true", help="print the tables from --json")
    a = ap.parse_args(argv)
    if a.games < 1:
        raise SystemExit("--games must be at least 1")
    if a.markdown:
        print(markdown(json.loads(a.json.read_text()) if a.json.exists() else []))
        return 0
    if parse_spec(a.expert).name != "expert":
        raise SystemExit(f"--expert must be an expert spec (expert or expert:model=PATH), "
                         f"got {a.expert!r}")
    model = model_digest(a.expert)

    def save(row, part):
        row = dict(row, part=part, model=model, date=time.strftime("%Y-%m-%d"), ttrsim=__version__)
        update_json(a.json, lambda rows: rows + [row], default=[])
        print(json.dumps(row), flush=True)

    boards = a.board or BOARDS
    for part in a.part or ["two"]:
        for board in boards:
            if part == "two":
                for other in FIELD:
                    save(play(board, [a.expert, other], a.games, a.seed), part)
            elif part == "four":
                for other in ("blocker", "rush"):
                    save(play(board, [a.expert] + [f"{other}#{k}" for k in range(3)],
                              a.games, a.seed), part)
            elif part == "pace":
                for mine in ("blocker", "rush", "tickets"):
                    for other in ("tickets", "expert"):
                        if mine != other:
                            save(play(board, [mine, other], a.games, a.seed), part)
    return 0


if __name__ == "__main__":
    from ttrsim.script import run_script

    sys.exit(run_script(main))
