"""Fuzzing at scale: random-legal and mixed-policy games on every board and player count,
with the core's invariant check after every action.

Every game is played by the compiled loop ``ttrsim.fuzz.fuzz_batch``: after each action
it runs the core's ``check_state`` (every card and ticket in exactly one place, pieces
within bounds, route bitsets, points and double-route rules consistent, turn and end
counters consistent), checks that the player to act has a legal action until the game is
over and that every chosen action is legal, and at the end checks each final score
against its parts (ticket points recomputed from the tickets held and completed), the
ranks against the totals and the turn limit. It also counts the games that reached each
rare situation (``ttrsim.fuzz.EDGE_CASES``: deck and discards empty, all players
passing, final round triggered at 0/1/2 trains, ...).

Games come in chunks: (board, player count, mode, chunk index). Mode ``random``: every
seat plays ``random``; mode ``mixed``: each seat plays a built-in policy drawn from
``MIXED_POOL`` (one draw per chunk and seat). Seeds depend only on the chunk's address, so
a chunk gives the same games whoever plays it. Each finished chunk is appended to a state
file (JSON lines); a run that is stopped resumes from it, and ``--games`` can be raised
later to add games. ``--doc`` writes the totals as Markdown (docs/fuzz.md).

    python scripts/fuzz.py --games 1000000 --n-jobs 2 --state fuzz-state.jsonl
    python scripts/fuzz.py --games 1000000 --state fuzz-state.jsonl --doc docs/fuzz.md --report-only
    python scripts/fuzz.py --games 2000 --chunk 200          # a quick look
    python scripts/fuzz.py --measure                         # cost of the checks
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
import zlib
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np

BOARDS = ("usa", "europe", "newyork", "usa-1910", "usa-mega", "usa-bigcities")
MODES = ("random", "mixed", "hoard")
DEFAULT_MODES = ("random", "mixed")
MIXED_POOL = ("random", "tickets", "tickets:stations=0", "tickets:tunnels=0", "tickets:risk=0.9",
              "tickets:draw=40", "routes", "routes:min_len=1", "routes:tunnels=0", "greedy",
              "greedy:risk=0.9", "greedy:draw=40")


def _board(name):
    # no module-level cache: joblib ships this script's functions to the workers by value
    from ttrsim import maps
    from ttrsim.game import compile_board
    board = maps.load(name)
    return board, compile_board(board)


def player_counts(name) -> list[int]:
    board, _ = _board(name)
    return list(range(board.min_players, board.max_players + 1))


def cells(boards, modes=DEFAULT_MODES) -> list[tuple[str, int, str]]:
    return [(b, n, m) for b in boards for n in player_counts(b) for m in modes]


def cell_key(board: str, n: int, mode: str) -> int:
    return zlib.crc32(f"fuzz:{board}:{n}:{mode}".encode())


def chunk_specs(board: str, n: int, mode: str, idx: int) -> list[str]:
    if mode in ("random", "hoard"):
        return [mode] * n
    rng = np.random.default_rng([cell_key(board, n, mode), idx])
    return [MIXED_POOL[i] for i in rng.integers(len(MIXED_POOL), size=n)]


def play_chunk(board: str, n: int, mode: str, idx: int, size: int) -> dict:
    """Play chunk ``idx`` (games idx*size .. idx*size+size-1 of its cell)."""
    from ttrsim.batches import game_seeds
    from ttrsim.fuzz import HoardPolicy, fuzz_batch
    from ttrsim.policies import make_policy
    b, cb = _board(board)
    specs = chunk_specs(board, n, mode, idx)
    policies = [HoardPolicy(s) if s == "hoard" else make_policy(s, b) for s in specs]
    t0 = time.perf_counter()
    res = fuzz_batch(cb, n, policies, game_seeds(cell_key(board, n, mode), size, idx * size))
    res.update(board=board, players=n, mode=mode, chunk=idx, size=size, policies=specs,
               seconds=round(time.perf_counter() - t0, 3))
    return res


def load_state(path: Path) -> list[dict]:
    rows = []
    if path.exists():
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line:
                    try:
                        rows.append(json.loads(line))
                    except json.JSONDecodeError:      # a line cut short by a stop
                        pass
    return rows


def plan(boards, games: int, size: int, done: set, modes=DEFAULT_MODES) -> list[tuple]:
    """Chunks still to play so that each board reaches ``games`` games of ``modes``, split
    evenly over its player counts and the modes, in an order that keeps every cell at the
    same progress (a run stopped early is balanced)."""
    todo = defaultdict(list)
    for b in boards:
        cs = [c for c in cells(boards, modes) if c[0] == b]
        per_cell = -(-games // len(cs))
        n_chunks = -(-per_cell // size)
        for c in cs:
            todo[c] = [(*c, i, size) for i in range(n_chunks) if (*c, i) not in done]
    out = []
    depth = max((len(v) for v in todo.values()), default=0)
    for i in range(depth):
        for c in todo:
            if i < len(todo[c]):
                out.append(todo[c][i])
    return out


def totals(rows: list[dict]) -> dict:
    """Totals per board and per (board, players, mode) from the state rows."""
    from ttrsim.fuzz import EDGE_CASES

    def empty():
        return dict(games=0, actions=0, turns=0, violations=0, seconds=0.0, by_code={},
                    first=None, edges=dict.fromkeys(EDGE_CASES, 0))

    per_board = defaultdict(empty)
    per_cell = defaultdict(empty)
    seen = set()
    for r in rows:
        key = (r["board"], r["players"], r["mode"], r["chunk"])
        if key in seen:           # a chunk played twice (e.g. a stop while writing) counts once
            continue
        seen.add(key)
        for t in (per_board[r["board"]], per_cell[(r["board"], r["players"], r["mode"])]):
            for k in ("games", "actions", "turns", "violations", "seconds"):
                t[k] += r[k]
            for k, v in r["by_code"].items():
                t["by_code"][k] = t["by_code"].get(k, 0) + v
            if r["first"] and t["first"] is None:
                t["first"] = dict(chunk=key, seed=r["first"][0], turn=r["first"][1],
                                  code=r["first"][2], policies=r["policies"])
            for k, v in r["edges"].items():
                t["edges"][k] += v
    order = {**{b: i for i, b in enumerate(BOARDS)}, **{m: i for i, m in enumerate(MODES)}}
    return dict(boards={b: per_board[b] for b in sorted(per_board, key=order.get)},
                cells={c: per_cell[c] for c in sorted(per_cell, key=lambda c: (
                    order[c[0]], c[1], order.get(c[2], len(MODES))))})


def markdown(tot: dict, commands: list[str], machine: str) -> str:
    from ttrsim.fuzz import EDGE_CASES
    modes = [m for m in MODES if any(c[2] == m for c in tot["cells"])]
    lines = ["# Fuzzing: invariants over random, mixed-policy and hoarding games", "",
             "Every game below was played by the compiled loop `ttrsim.fuzz.fuzz_batch`, "
             "which after **every action** runs the core's `check_state` (each train card and "
             "ticket in exactly one place; trains, stations and cards within bounds; route "
             "bitsets, route points and double-route rules consistent; turn, final-round and "
             "pass counters consistent), checks that the player to act has a legal action "
             "until the game is over and that the chosen action is legal, and at the end of "
             "the game checks every final score against its parts (ticket points recomputed "
             "from the tickets held and completed, station points, longest bonus), the ranks "
             "against the totals, and that the game ended within 10,000 turns.", "",
             "Modes: `random` — every seat plays a uniformly random legal action; `mixed` — "
             "each seat plays a built-in policy drawn (once per chunk of games) from "
             + ", ".join(f"`{s}`" for s in MIXED_POOL) + "; `hoard` — every seat plays "
             "`ttrsim.fuzz.HoardPolicy`, which takes a card whenever it can, else draws and "
             "keeps tickets, else claims the shortest route it can pay (it empties the deck, "
             "the discards and the ticket deck and drives games to the all-pass ending). "
             "A run's games are split evenly over the board's player counts and the modes "
             "it plays.", "",
             "Produced by:", "", *[f"    {c}" for c in commands], "", f"Machine: {machine}", "",
             "## Totals per board", "",
             "| board | " + " | ".join(f"{m} games" for m in modes)
             + " | all games | actions checked | violations |",
             "|---|" + "---:|" * (len(modes) + 3)]
    for b, t in tot["boards"].items():
        per_mode = [sum(c["games"] for k, c in tot["cells"].items() if k[0] == b and k[2] == m)
                    for m in modes]
        lines.append(f"| {b} | " + " | ".join(f"{g:,}" for g in per_mode)
                     + f" | {t['games']:,} | {t['actions']:,} | {t['violations']:,} |")
    viol = {b: t for b, t in tot["boards"].items() if t["violations"]}
    lines += ["", "## Violations", ""]
    if viol:
        for b, t in viol.items():
            lines.append(f"- {b}: {t['by_code']}; first: {t['first']}")
    else:
        lines.append("None: no invariant was broken in any game.")
    lines += ["", "## Edge cases reached (games in which each occurred at least once)", "",
              "| edge case | " + " | ".join(tot["boards"]) + " |",
              "|---|" + "---:|" * len(tot["boards"])]
    for e in EDGE_CASES:
        lines.append(f"| {e} | " + " | ".join(f"{t['edges'][e]:,}" for t in tot["boards"].values())
                     + " |")
    lines += ["", "## Per board, player count and mode", "",
              "| board | players | mode | games | turns per game | games/s (one worker) | "
              "deck and discards empty | all passed | final round at 0 / 1 / 2 trains |",
              "|---|---:|---|---:|---:|---:|---:|---:|---|"]
    for (b, n, m), t in tot["cells"].items():
        e = t["edges"]
        rate = t["games"] / t["seconds"] if t["seconds"] else float("nan")
        lines.append(f"| {b} | {n} | {m} | {t['games']:,} | {t['turns'] / max(t['games'], 1):.1f} "
                     f"| {rate:,.0f} | {e['deck_and_discards_empty']:,} | "
                     f"{e['all_players_passed']:,} | {e['final_round_at_0_trains']:,} / "
                     f"{e['final_round_at_1_train']:,} / {e['final_round_at_2_trains']:,} |")
    return "\n".join(lines) + "\n"


def machine_line() -> str:
    import platform
    cpu = platform.processor()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}"


def measure(games: int = 3000, repeat: int = 3) -> list[str]:
    """Games/s of ``play_batch`` without and with ``check_state`` after every action and of
    ``fuzz_batch``, all seats ``random``, best of ``repeat`` (one process)."""
    from ttrsim.batches import game_seeds, play_batch
    from ttrsim.fuzz import fuzz_batch
    from ttrsim.policies import make_policy
    out = []
    for name, n in (("usa", 2), ("europe", 4)):
        _, cb = _board(name)
        def seats():
            return [make_policy("random", None) for _ in range(n)]

        runs = {"no check": lambda: play_batch(cb, n, seats(), game_seeds(7, games), summary=True),
                "check": lambda: play_batch(cb, n, seats(), game_seeds(7, games), summary=True,
                                            check=True),
                "fuzz_batch": lambda: fuzz_batch(cb, n, seats(), game_seeds(7, games))}
        for label, run in runs.items():
            best = 0.0
            for _ in range(repeat):
                t0 = time.perf_counter()
                run()
                best = max(best, games / (time.perf_counter() - t0))
            out.append(f"{name} {n}p {label}: {best:,.0f} games/s")
    return out


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=10000, help="games per board (default 10000)")
    ap.add_argument("--boards", nargs="+", default=list(BOARDS), choices=BOARDS)
    ap.add_argument("--modes", nargs="+", default=list(DEFAULT_MODES), choices=MODES,
                    help="random: every seat random; mixed: built-in policies drawn per chunk; "
                         "hoard: every seat hoards cards (empties the deck, reaches all-pass "
                         "endings); --games is split over the modes given (default random mixed)")
    ap.add_argument("--chunk", type=int, default=1000, help="games per chunk (default 1000)")
    ap.add_argument("--n-jobs", type=int, default=-1, help="worker processes (default: all cores)")
    ap.add_argument("--backend", choices=("loky", "dask"), default="loky",
                    help="loky: local processes; dask: a dask.distributed cluster (--scheduler)")
    ap.add_argument("--scheduler", metavar="ADDRESS", help="dask scheduler address, e.g. tcp://host:8786")
    ap.add_argument("--state", type=Path, default=None,
                    help="JSON-lines file of finished chunks: resumes from it and appends to it")
    ap.add_argument("--stop-at", default=None,
                    help="stop taking results at this UTC time (HH:MM); the state keeps them")
    ap.add_argument("--doc", type=Path, default=None, help="write the totals as Markdown here")
    ap.add_argument("--report-only", action="store_true", help="play nothing, only report")
    ap.add_argument("--command", action="append", default=None,
                    help="with --doc: the command(s) that produced the state file, as recorded "
                         "in the document (default: this command)")
    ap.add_argument("--measure", action="store_true",
                    help="print games/s with and without the checks (random play) and exit")
    return ap


def _refuse(message: str) -> int:
    """A mistake in the command line: one line and exit code 2, as the ttrsim commands say
    it."""
    print(f"fuzz.py: error: {message}", file=sys.stderr)
    return 2


def main(argv=None) -> int:
    ap = _parser()
    args = ap.parse_args(argv)
    if args.measure:
        print("\n".join(measure()))
        return 0
    if args.games <= 0 or args.chunk <= 0:
        return _refuse("--games and --chunk must be positive")
    from contextlib import closing

    from ttrsim.cli import backend_options
    from ttrsim.dispatch import progress_bar, run_tasks

    try:
        backend_options(args)                   # as every ttrsim command checks them
    except (ImportError, ValueError) as exc:
        return _refuse(str(exc))
    rows = load_state(args.state) if args.state else []
    sizes = {r["size"] for r in rows}
    if not args.report_only and sizes - {args.chunk}:
        # chunk i holds games i*size ..: another size would replay games already counted
        return _refuse(f"{args.state} holds chunks of {', '.join(map(str, sorted(sizes)))} "
                       "games: resume with the same --chunk")
    done = {(r["board"], r["players"], r["mode"], r["chunk"]) for r in rows}
    todo = [] if args.report_only else plan(args.boards, args.games, args.chunk, done, args.modes)
    deadline = None
    if args.stop_at:
        hh, mm = map(int, args.stop_at.split(":"))
        now = time.gmtime()
        deadline = time.time() + ((hh * 60 + mm) - (now.tm_hour * 60 + now.tm_min)) * 60 - now.tm_sec
    out = open(args.state, "a") if args.state else None
    bad = 0
    try:
        if todo:
            bar = progress_bar(True, sum(c[4] for c in todo), unit="game")
            with closing(run_tasks(play_chunk, todo, args.n_jobs, args.backend, args.scheduler,
                                   bar=bar, sizes=[c[4] for c in todo])) as chunks:
                for res in chunks:
                    rows.append(res)
                    bad += res["violations"]
                    if out:
                        out.write(json.dumps(res) + "\n")
                        out.flush()
                    bar.set_postfix(violations=bad)
                    if deadline is not None and time.time() > deadline:
                        print(f"stopped at {args.stop_at} UTC; the state file keeps every "
                              "finished chunk, the same command resumes", file=sys.stderr)
                        break
    except KeyboardInterrupt:
        print("interrupted; the state file keeps every finished chunk, the same command "
              "resumes", file=sys.stderr)
    finally:
        if out:
            out.close()
    tot = totals([r for r in rows if r["board"] in args.boards])
    for b, t in tot["boards"].items():
        print(f"{b}: {t['games']:,} games, {t['actions']:,} actions checked, "
              f"{t['violations']} violations {t['by_code'] or ''}")
    if args.doc:
        cmds = args.command or ["python scripts/fuzz.py " + " ".join(
            a for a in (argv if argv is not None else sys.argv[1:]) if a != "--report-only")]
        args.doc.write_text(markdown(tot, cmds, machine_line()))
    return 1 if any(t["violations"] for t in tot["boards"].values()) else 0


if __name__ == "__main__":
    from ttrsim.script import run_script

    sys.exit(run_script(main))
