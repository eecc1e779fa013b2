"""Blind spots: tickets a policy keeps and then fails more often than `tickets` does
(docs/expert-history.md, "Against the field"; the target of docs/league.md).

For each board, 4-player self-play of each --policy and of `tickets` (--games games each,
the same seeds); for every ticket the policy kept at least --min-kept times, its
completion rate (completed / kept, Wilson 95%) beside `tickets`' in its own self-play.
A ticket is *short* when the policy's rate is below `tickets`' minus --margin (0.05),
and *short on evidence* when even the upper end of the policy's interval is below
`tickets`' rate minus the margin. Rows in --json (one per board and policy, with the
short tickets), a table with --markdown.

    nice python scripts/blind_spots.py --board usa --board europe --board newyork
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import ttrsim
from ttrsim.analysis import ticket_completion
from ttrsim.policies import expert_models
from ttrsim.results import update_json

HERE = Path(__file__).parent


def completion(board: str, spec: str, players: int, games: int, seed: int, jobs: int):
    """Per-ticket completion of `players` seats of `spec` (self-play, summary tables)."""
    run = ttrsim.simulate(board, [spec] * players, games=games, seed=seed, n_jobs=jobs,
                          summary=True, progress=sys.stderr.isatty())
    return ticket_completion(run).set_index("ticket")


def compare(board: str, spec: str, *, players: int = 4, games: int = 20_000, seed: int = 0,
            jobs: int = 1, min_kept: int = 200, margin: float = 0.05, base=None) -> dict:
    """One row: how many of the tickets `spec` keeps at least `min_kept` times fall short
    of `tickets`' self-play completion rate by more than `margin`."""
    t = time.process_time()
    mine = completion(board, spec, players, games, seed, jobs)
    if base is None:
        base = completion(board, "tickets", players, games, seed, jobs)
    often = mine[mine.kept >= min_kept].join(base[["completion_rate", "kept"]].add_suffix("_tickets"))
    floor = often.completion_rate_tickets - margin
    short = often[often.completion_rate < floor]
    evident = often[often.completion_rate_high < floor]
    rows = [{"ticket": int(i), "name": r["name"], "kept": int(r.kept),
             "completion_rate": round(float(r.completion_rate), 3),
             "low": round(float(r.completion_rate_low), 3),
             "high": round(float(r.completion_rate_high), 3),
             "tickets_rate": round(float(r.completion_rate_tickets), 3),
             "on_evidence": bool(r.completion_rate_high < r.completion_rate_tickets - margin)}
            for i, r in short.sort_values("completion_rate").iterrows()]
    return {"board": board, "players": players, "policy": spec, "games": games, "seed": seed,
            "min_kept": min_kept, "margin": margin, "tickets_kept_often": int(len(often)),
            "short": int(len(short)), "short_on_evidence": int(len(evident)),
            "short_tickets": rows, "models": expert_models([spec]),
            "cpu_seconds": time.process_time() - t,
            "date": time.strftime("%Y-%m-%d")}, base


def markdown(rows) -> str:
    out = ["| board | policy (model) | tickets kept >= min | short by > margin | on evidence | the worst |",
           "| --- | --- | ---: | ---: | ---: | --- |"]
    for r in rows:
        worst = "; ".join(f"{t['name']} {t['completion_rate']:.2f} [{t['low']:.2f}, {t['high']:.2f}]"
                          f" vs {t['tickets_rate']:.2f}" for t in r["short_tickets"][:3])
        model = ", ".join(r.get("models", {}).values())    # a spec plays another model later
        out.append(f"| {r['board']} | `{r['policy']}`{f' ({model})' if model else ''} | "
                   f"{r['tickets_kept_often']} | {r['short']} "
                   f"| {r['short_on_evidence']} | {worst or '-'} |")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--board", action="append", default=[], help="repeatable (default: usa, europe, newyork)")
    ap.add_argument("--policy", action="append", default=[], help="repeatable (default: expert)")
    ap.add_argument("--players", type=int, default=4)
    ap.add_argument("--games", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--min-kept", type=int, default=200)
    ap.add_argument("--margin", type=float, default=0.05)
    ap.add_argument("--json", type=Path, default=HERE / "blind_spots.json")
    ap.add_argument("--markdown", action="store_true", help="print the rows of --json as a table")
    a = ap.parse_args(argv)
    if a.markdown:
        print(markdown(json.loads(a.json.read_text())))
        return 0
    for board in a.board or ["usa", "europe", "newyork"]:
        base = None
        for spec in a.policy or ["expert"]:
            row, base = compare(board, spec, players=a.players, games=a.games, seed=a.seed,
                                jobs=a.jobs, min_kept=a.min_kept, margin=a.margin, base=base)
            update_json(a.json, lambda rows: rows + [row], default=[])
            print(markdown([row]), flush=True)
    return 0


if __name__ == "__main__":
    from ttrsim.script import run_script

    sys.exit(run_script(main))
