"""Benchmark of ttrsim on the machine it runs on.

Measures
  1. games per second on one core for each built-in policy, each board, 2 and 4 players
     (one call into the core per measurement, all seats playing that policy);
  2. ``ttrsim simulate`` end to end with all n cores and with 1 worker playing 1/n of the
     games (what each of the n workers plays), and the parallel efficiency
     (games/s with n workers / (n x games/s with 1));
  3. peak memory (all processes of the run together) and wall time of a
     ``ttrsim simulate`` run in summary mode and with per-event tables written to disk;
  4. a profile: time per game split into rules, policy decisions and result collection;
  5. agent steps per second of the vector environment ``ttrsim.env.VectorEnv`` on Europe
     4p, actions from ``sample_actions()``, ``tickets`` opponents at 16, 64 and 256 envs,
     and ``random`` ones at 64; USA and New York 4p against ``tickets`` at 64 envs
     (``--env``: only this, written to scripts/bench-env.json);
  6. with ``--outcomes`` only: outcome labelling (``ttrsim.training.generate_outcomes``,
     every seat ``expert`` with the ``whole`` model, epsilon 0.1), games and rows per CPU
     second in one process on usa-mega at 4 and 2 players (scripts/bench-outcomes.json).

Prints a table and writes it as JSON (``--json``, default ``scripts/bench.json``, or
``scripts/bench-partial.json`` for a smaller run such as ``--quick``); ``--markdown``
prints the tables of docs/performance.md from ``scripts/bench.json`` without measuring anything.
The memory readings need psutil (installed with the ``test`` and ``dask`` extras).

    python scripts/bench.py                 # full run (about 13 minutes on 2 cores)
    python scripts/bench.py --quick         # smaller counts, for a quick look
    python scripts/bench.py --run-games 1000000   # the 1,000,000-game runs of the targets
"""
from __future__ import annotations

import argparse
import json
import os

# numpy's idle BLAS threads otherwise take a few percent of the core being measured
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import platform
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

import ttrsim
from ttrsim.batches import game_seeds, play_batch
from ttrsim.game import compile_board
from ttrsim.policies import REGISTRY, make_policy
from ttrsim.batches import default_batch_size

BOARDS = ("usa", "europe", "newyork")


def machine() -> dict:
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import joblib
    import pandas as pd

    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(),
            "platform": platform.platform(), "ttrsim": ttrsim.__version__,
            "numpy": np.__version__, "pandas": pd.__version__, "joblib": joblib.__version__,
            **source()}


def source() -> dict:
    """The git commit of the source tree measured, and whether the code that decides the
    speed (the core, the package, the build files) differs from it; empty outside a git
    checkout. Only that code counts: a run rewrites scripts/bench.json itself."""
    root = Path(__file__).resolve().parent.parent

    def git(*args):
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                              timeout=30)
    try:
        top = git("rev-parse", "--show-toplevel")
        if top.returncode != 0 or Path(top.stdout.strip()).resolve() != root:
            return {}
        head = git("rev-parse", "--short", "HEAD")
        diff = git("diff", "--quiet", "HEAD", "--", "ext", "ttrsim", "setup.py", "pyproject.toml")
    except (OSError, subprocess.SubprocessError):
        return {}
    if head.returncode != 0 or diff.returncode not in (0, 1):
        return {}
    return {"commit": head.stdout.strip(), "modified": diff.returncode == 1}


def core_rates(configs, games: int, repeat: int = 3, seed: int = 1, log=None) -> list[dict]:
    """Games/s of one call into the core on this process's core, for each (board, players,
    policy) of `configs`, plus its time profile. Each call gets new policies, as each
    batch of a run does; a first, untimed call of the same games fills what the process
    keeps between batches (the planning policies' memo of initial ticket choices), as
    the first batches of a long run do. The timed calls go round all configurations
    `repeat` times and the best of each counts: on a shared machine a burst of load from
    elsewhere then spoils one round of a few configurations, not every call of one.
    (The warm-ups must all stay in the process: the built-in planning policies make one
    memo per policy and board, nine in all, of the sixteen a process keeps.)
    `log` (a function of one string), if given, hears of each round."""
    boards = {board: compile_board(board) for board, _, _ in configs}
    seeds = game_seeds(seed, games)

    def call(board, players, policy, n=games, profile=False):
        pols = [make_policy(policy, boards[board].board) for _ in range(players)]
        t = time.perf_counter()
        out = play_batch(boards[board], players, pols, seeds[:n], 0, True, True,
                         profile=profile)
        return time.perf_counter() - t, out

    for cfg in configs:
        call(*cfg)                                              # warm up
    best = {cfg: float("inf") for cfg in configs}
    turns = {}
    for i in range(max(1, repeat)):
        if log is not None:
            log(f"timed round {i + 1} of {max(1, repeat)}")
        for cfg in configs:
            dt, out = call(*cfg)
            best[cfg] = min(best[cfg], dt)
            turns[cfg] = float(out["turns"].mean())
    rows = []
    for cfg in configs:
        # The profile's clock reads cost time of their own: take it from a separate run.
        n_prof = max(1, games // 4)
        prof = call(*cfg, n=n_prof, profile=True)[1]["profile"]
        total = sum(prof.values()) or 1.0
        board, players, policy = cfg
        rows.append({"board": board, "players": players, "policy": policy, "games": games,
                     "repeat": repeat, "games_per_s": games / best[cfg],
                     "turns_per_game": turns[cfg],
                     "profile_share": {k: v / total for k, v in prof.items()},
                     "us_per_game": {k: 1e6 * v / n_prof for k, v in prof.items()}})
    return rows


def core_rate(board: str, players: int, policy: str, games: int, repeat: int = 3,
              seed: int = 1) -> dict:
    """core_rates of a single configuration."""
    return core_rates([(board, players, policy)], games, repeat, seed)[0]


def tree_rss(pid: int) -> int:
    import psutil

    try:
        proc = psutil.Process(pid)
        procs = [proc] + proc.children(recursive=True)
    except psutil.NoSuchProcess:
        return 0
    total = 0
    for p in procs:
        try:
            total += p.memory_info().rss
        except psutil.NoSuchProcess:
            pass
    return total


def run_peak(games: int, summary: bool, jobs: int, batch_size: int | None = None) -> dict:
    """Wall time and peak memory (sum over the process tree, sampled every 50 ms) of one
    ``ttrsim simulate`` run on Europe with 4 players and the default policy."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "ttrsim", "simulate", "--board", "europe", "--players", "4",
               "--games", str(games), "--jobs", str(jobs), "--quiet", "--out", f"{tmp}/run"]
        if batch_size is not None:
            cmd += ["--batch-size", str(batch_size)]
        if summary:
            cmd.append("--summary")
        t = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
        peak = 0
        while proc.poll() is None:
            peak = max(peak, tree_rss(proc.pid))
            time.sleep(0.05)
        wall = time.perf_counter() - t
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed")
        size = sum(f.stat().st_size for f in Path(tmp, "run").rglob("*") if f.is_file())
    return {"games": games, "summary": summary, "jobs": jobs, "wall_s": wall,
            "games_per_s": games / wall, "peak_rss_mb": peak / 2**20, "disk_mb": size / 2**20}


def compare_cost(games: int, repeat: int = 3, seed: int = 1) -> dict:
    """CPU time of ``ttrsim.compare`` (Europe, 4 players, default policy, one worker,
    against a variant with 40 trains) next to ``ttrsim.simulate`` of the same games in both
    modes; the fastest of ``repeat`` alternated rounds counts. Everything runs in this
    process, so its CPU time is the cost, less disturbed than the wall time by other load
    on a shared machine. A comparison plays every game twice, so about 2x one simulation
    means it adds no cost of its own."""
    board = ttrsim.maps.load("europe")
    other = ttrsim.variant(board, trains=40)
    ttrsim.compare(board, other, 4, games=min(games, 1000), seed=seed)      # warm up
    best = {"compare": float("inf"), "simulate": float("inf"), "simulate_summary": float("inf"),
            "simulate_variant_summary": float("inf")}
    for _ in range(max(1, repeat)):
        for key, call in (("compare", lambda: ttrsim.compare(board, other, 4, games=games, seed=seed)),
                          ("simulate", lambda: ttrsim.simulate(board, 4, games=games, seed=seed)),
                          ("simulate_summary", lambda: ttrsim.simulate(board, 4, games=games,
                                                                       seed=seed, summary=True)),
                          ("simulate_variant_summary", lambda: ttrsim.simulate(
                              other, 4, games=games, seed=seed, summary=True))):
            t = time.process_time()
            call()
            best[key] = min(best[key], time.process_time() - t)
    return {"games": games, "repeat": repeat, **{f"{k}_s": v for k, v in best.items()},
            "ratio": best["compare"] / best["simulate"],
            "ratio_summary": best["compare"] / best["simulate_summary"],
            # against simulating both boards: what the comparison adds to playing them
            "ratio_both_summary": best["compare"] / (best["simulate_summary"]
                                                     + best["simulate_variant_summary"])}


def markdown(result: dict) -> str:
    """The benchmark tables of docs/performance.md from a result of this script."""
    m = result["machine"]
    commit = (f" at {m['commit']}" + (" with local changes" if m["modified"] else "")
              if m.get("commit") else "")
    out = [f"Measured {result['date']} on {m['cpu']} ({m['cores']} cores), Python {m['python']}, "
           f"ttrsim {m['ttrsim']}{commit}.", "",
           "Games per second on one core (every seat plays the policy), and where a game's "
           "time goes (rules / policy decisions / result collection):", "",
           "| policy | board | 2 players | 4 players | profile at 4 players |",
           "|---|---|---:|---:|---|"]
    cells = {(r["policy"], r["board"], r["players"]): r for r in result["core"]}
    for policy in sorted({r["policy"] for r in result["core"]}):
        for board in BOARDS:
            two, four = cells.get((policy, board, 2)), cells.get((policy, board, 4))
            if not (two and four):
                continue
            p = four["profile_share"]
            prof = " / ".join(f"{p[k]:.0%}" for k in ("rules", "policy", "results"))
            out.append(f"| {policy} | {board} | {two['games_per_s']:,.0f} | "
                       f"{four['games_per_s']:,.0f} | {prof} |")
    if result.get("runs"):
        out += ["", "`ttrsim simulate` of Europe, 4 players, default policy, all cores, written "
                "to disk (`--out`):", "",
                "| games | mode | wall time | games/s | peak memory | on disk |",
                "|---:|---|---:|---:|---:|---:|"]
        for r in result["runs"]:
            mode = "summary" if r["summary"] else "per-event"
            out.append(f"| {r['games']:,} | {mode} | {r['wall_s']:.1f} s | {r['games_per_s']:,.0f} | "
                       f"{r['peak_rss_mb']:,.0f} MB | {r['disk_mb']:,.0f} MB |")
        walls = result["runs"][0].get("walls_s", ())
        if len(walls) > 1:
            listed = ", ".join(f"{w} s" for w in walls)
            out += ["", f"The summary run is the fastest of {len(walls)} ({listed}), "
                    "alternated with the one-worker runs below; the per-event run was made once."]
    par = result.get("parallel")
    if par:
        out += ["", f"Parallel efficiency with {par['cores']} workers: {par['efficiency']:.0%} "
                f"({par['games_per_s_all']:,.0f} games/s against {par['cores']} x "
                f"{par['games_per_s_1']:,.0f} with one worker playing one worker's share, "
                f"{par['games_1']:,} games"
                + (f" in batches of {par['batch_size']:,}" if "batch_size" in par else "")
                + (f", the fastest of {len(par['ones'])} runs" if len(par.get("ones", ())) > 1
                   else "") + ")."]
    c = result.get("compare")
    if c:
        out += ["", f"`ttrsim.compare` of Europe, 4 players, one worker, {c['games']:,} paired "
                f"games: {c['compare_s']:.2f} CPU s, {c['ratio']:.2f} x `simulate` of the same games "
                f"({c['simulate_s']:.2f} s per-event, {c['simulate_summary_s']:.2f} s summary "
                f"mode: {c['ratio_summary']:.2f} x; {c['ratio_both_summary']:.2f} x summary runs of "
                f"both boards)."]
    return "\n".join(out)


def env_rate(board: str = "europe", players: int = 4, opponents: str = "tickets",
             n_envs: int = 16, seconds: float = 3.0, seed: int = 1) -> dict:
    """Agent steps per second of ``ttrsim.env.VectorEnv`` on one core: actions from the
    compiled ``sample_actions()``, opponents played in the core, observations and masks
    written at every step. Rates are per CPU second of this process (``time.process_time``)
    and per wall second; a second pass with the loop's own timers gives the share of each
    part (agent moves, opponents, new games, observations, masks, sampling)."""
    from ttrsim.env import VectorEnv

    venv = VectorEnv(board, players, n_envs, opponents=opponents, seed=seed)
    venv.reset()
    for _ in range(50):                              # warm up: every env past its setup
        venv.step(venv.sample_actions())
    steps = games = 0
    c0, w0 = time.process_time(), time.perf_counter()
    while time.process_time() - c0 < seconds:
        for _ in range(20):
            _, _, _, term, _ = venv.step(venv.sample_actions())
            games += int(term.sum())
        steps += 20 * n_envs
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    venv._core.profile = True
    venv._core.profile_ns(True)
    n = 0
    c1 = time.process_time()
    while time.process_time() - c1 < seconds / 3:
        venv.step(venv.sample_actions())
        n += n_envs
    ns = venv._core.profile_ns()
    # The same kind of games in the batch loop: `random` in seat 0 (what sample_actions
    # plays), the opponents in the others; its games per CPU second times the env's agent
    # steps per game is what the env would reach if observations, masks, sampling and the
    # Python call cost nothing.
    cb = compile_board(board)
    ref_games = 0
    c2 = time.process_time()
    while time.process_time() - c2 < seconds / 2:
        pols = [make_policy("random", cb.board)] + [make_policy(opponents, cb.board)
                                                    for _ in range(players - 1)]
        play_batch(cb, players, pols, game_seeds(seed + 1 + ref_games, 500), 0, False, True)
        ref_games += 500
    ref = ref_games / (time.process_time() - c2)
    # and the core's own standard measurement (all seats `tickets`), to compare the load
    # of the machine at this time with other runs (scripts/bench.json: "core")
    std_games = 0
    c3 = time.process_time()
    while time.process_time() - c3 < seconds / 2:
        pols = [make_policy("tickets", cb.board) for _ in range(players)]
        play_batch(cb, players, pols, game_seeds(seed, 500), 0, True, True)
        std_games += 500
    std = std_games / (time.process_time() - c3)
    per_game = steps / max(games, 1)
    return {"board": board, "players": players, "opponents": opponents, "n_envs": n_envs,
            "agent_steps": steps, "games": games, "steps_per_cpu_s": steps / cpu,
            "steps_per_wall_s": steps / wall, "agent_steps_per_game": per_game,
            "ns_per_step": {k: v / n for k, v in ns.items()},
            "batch_games_per_cpu_s": ref, "batch_bound_steps_per_cpu_s": ref * per_game,
            "tickets_games_per_cpu_s": std}


def search_rate(board: str = "europe", games: int = 20, seed: int = 1,
                positions: int = 20, playouts: int = 200) -> dict:
    """The ``search`` policy (default settings) in 2-player games against ``tickets``, in
    CPU time of this process: seconds per game, decisions and playouts per second; and the
    cost of a search playout against the rollout policy playing the same action to the end
    without search (``bench_playouts``), over `positions` positions taken from ``tickets``
    self-play (every 7th decision): from the positions the search plays (the worlds it
    samples; the search's own overhead: sampling the world and the bookkeeping) and from
    the true position (which the search cannot play: it does not see it)."""
    from ttrsim.search import bench_playouts
    from ttrsim.seats import Table, play_game

    cb = compile_board(board)
    pols = [make_policy("search", cb.board), make_policy("tickets", cb.board)]
    t = time.process_time()
    play_batch(cb, 2, pols, game_seeds(seed, games), 0, False, True)
    dt = time.process_time() - t
    sp = pols[0]
    taken = 0
    g_seed = seed
    times = np.zeros(4)
    while taken < positions:
        def measure(table, g_seed=g_seed):
            nonlocal taken
            g, k = table.game, table.moves
            if k % 7 == 6 and g.phase == "turn":
                # the default search's settings with room for `playouts` in one decision
                times[:] += bench_playouts(make_policy(f"search:playouts={playouts}", cb.board),
                                           g, playouts, seed=g_seed * 1000 + k)
                taken += 1

        play_game(Table.deal(board, ["tickets", "tickets"], g_seed), measure,
                  stop=lambda table: taken >= positions)
        g_seed += 1
    searched, plain, sampling, worlds = times[0], times[1], times[2], times[3] - times[2]
    return {"board": board, "players": 2, "opponent": "tickets", "games": games,
            "s_per_game": dt / games, "decisions_per_s": sp.total_decisions / dt,
            "playouts_per_s": sp.total_playouts / dt,
            "decisions_per_game": sp.total_decisions / games,
            "positions": taken, "playouts_per_position": playouts,
            "search_playout_us": 1e6 * searched / (taken * playouts),
            "world_playout_us": 1e6 * worlds / (taken * playouts),
            "sampling_us": 1e6 * sampling / (taken * playouts),
            "overhead": searched / worlds - 1.0,
            "plain_playout_us": 1e6 * plain / (taken * playouts),
            "overhead_vs_true_position": searched / plain - 1.0}


def print_search(r: dict) -> None:
    print(f"## search (default settings), {r['board']} 2p against tickets, one core (CPU time)")
    print(f"{r['s_per_game']:.3f} s per game ({r['games']} games), "
          f"{r['decisions_per_s']:,.0f} search decisions/s, {r['playouts_per_s']:,.0f} playouts/s; "
          f"a playout {r['search_playout_us']:.1f} us against {r['world_playout_us']:.1f} us for "
          f"the rollout policy alone from the same sampled worlds: overhead {r['overhead']:+.0%} "
          f"(sampling a world {r['sampling_us']:.1f} us); from the true position the rollout "
          f"policy takes {r['plain_playout_us']:.1f} us ({r['overhead_vs_true_position']:+.0%})\n")


def print_env(r: dict) -> None:
    print(f"\n## ttrsim.env.VectorEnv, {r['board']} {r['players']}p, {r['n_envs']} envs, "
          f"sample_actions() against {r['opponents']} opponents")
    print(f"{r['steps_per_cpu_s']:,.0f} agent steps per CPU second "
          f"({r['steps_per_wall_s']:,.0f} per wall second), "
          f"{r['agent_steps_per_game']:.0f} agent steps per game")
    print("ns per agent step (wall clock): "
          + ", ".join(f"{k} {v:,.0f}" for k, v in r["ns_per_step"].items()))
    print(f"the same games in the batch loop (random + {r['opponents']}): "
          f"{r['batch_games_per_cpu_s']:,.0f} games per CPU second = "
          f"{r['batch_bound_steps_per_cpu_s']:,.0f} agent steps per CPU second with nothing "
          f"else to do ({r['steps_per_cpu_s'] / r['batch_bound_steps_per_cpu_s']:.0%} reached)")
    print(f"meanwhile the batch loop, every seat tickets: "
          f"{r['tickets_games_per_cpu_s']:,.0f} games per CPU second")


def outcome_rates(players: int, games: int, repeat: int) -> dict:
    """generate_outcomes on usa-mega: games and labelled rows per CPU second of this
    process (the best of ``repeat`` rounds of ``games`` games, after one of 2 to load the
    models and the board). Only its public signature is used, so that the same code
    measures an older build (PYTHONPATH pointing at it)."""
    from ttrsim.training import generate_outcomes

    generate_outcomes("usa-mega", players, 2, seed=1)
    best, rows = float("inf"), 0
    for r in range(repeat):
        start = time.process_time()
        data = generate_outcomes("usa-mega", players, games, seed=r, epsilon=0.1)
        spent = time.process_time() - start
        if spent < best:
            best, rows = spent, sum(len(d.value) for d in data.values())
    out = {"board": "usa-mega", "players": players, "games": games, "rows": rows,
           "cpu_s": round(best, 3), "games_per_cpu_s": round(games / best, 1),
           "rows_per_cpu_s": round(rows / best)}
    print(f"outcomes usa-mega {players}p: {out['games_per_cpu_s']:,.1f} games, "
          f"{out['rows_per_cpu_s']:,} rows per CPU second ({games} games, {rows:,} rows)")
    return out


def part_file(json_arg: str, name: str) -> Path:
    """Where a one-part run writes: ``name`` beside the default files, else --json."""
    return Path(json_arg).with_name(name) if json_arg.endswith(
        ("bench.json", "bench-partial.json")) else Path(json_arg)


ENV_SIZES = (16, 64, 256)     # n_envs measured against `tickets`; `random` at the middle one


def env_runs(quick: bool) -> list[dict]:
    """The vector environment's measurements, printed as they come: Europe 4p against
    `tickets` at each of ENV_SIZES (many envs' opponents may no longer fit the cache) and
    against `random` at 64 envs; USA and New York 4p against `tickets` at 64 envs."""
    runs = ([("europe", "tickets", n) for n in ENV_SIZES] + [("europe", "random", 64)]
            + [("usa", "tickets", 64), ("newyork", "tickets", 64)])
    out = []
    for board, opponents, n in runs:
        out.append(env_rate(board=board, opponents=opponents, n_envs=n,
                            seconds=1.0 if quick else 3.0))
        print_env(out[-1])
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small counts (about a minute)")
    ap.add_argument("--games", type=int, default=None, help="games per core measurement")
    ap.add_argument("--run-games", type=int, default=None, help="games of the end-to-end runs")
    ap.add_argument("--repeat", type=int, default=3,
                    help="timed rounds through the per-core measurements; the best of "
                         "each counts (default 3)")
    ap.add_argument("--policies", default=",".join(sorted(set(REGISTRY) - {"search"})),
                    help="comma-separated (search has its own section: --search)")
    ap.add_argument("--skip-runs", action="store_true", help="only the per-core measurements")
    ap.add_argument("--compare-games", type=int, default=None,
                    help="games of the paired-comparison timing (default 20000, --quick 4000; "
                         "0 skips it)")
    ap.add_argument("--only-compare", action="store_true",
                    help="only the paired-comparison timing (written to bench-partial.json)")
    ap.add_argument("--run-repeat", type=int, default=2,
                    help="one-worker and all-core summary runs, alternated; the fastest of "
                         "each counts (default 2)")
    ap.add_argument("--json", help="where to write the result, or for --markdown read it "
                                   "(default scripts/bench.json; scripts/bench-partial.json "
                                   "for a smaller run than the full one, which leaves the "
                                   "figures of docs/performance.md be)")
    ap.add_argument("--env", action="store_true",
                    help="only the vector environment's agent steps per second "
                         "(Europe 4p, sample_actions() against tickets opponents)")
    ap.add_argument("--search", action="store_true",
                    help="only the search policy: seconds per game, decisions and playouts per "
                         "second, a playout's cost against the rollout policy alone "
                         "(written to bench-search.json)")
    ap.add_argument("--outcomes", action="store_true",
                    help="only outcome labelling: games and rows per CPU second of "
                         "training.generate_outcomes, usa-mega 4p and 2p "
                         "(written to bench-outcomes.json)")
    ap.add_argument("--markdown", action="store_true",
                    help="print the tables of docs/performance.md from --json and exit (measures nothing)")
    args = ap.parse_args(argv)
    games = args.games or (1000 if args.quick else 10000)
    run_games = args.run_games or (20000 if args.quick else 1_000_000)
    partial = (args.skip_runs or games != 10000 or run_games != 1_000_000
               or args.policies != ap.get_default("policies") or args.only_compare)
    if args.json is None:
        name = "bench-partial.json" if partial and not args.markdown else "bench.json"
        args.json = str(Path(__file__).with_name(name))
    if args.markdown:
        print(markdown(json.loads(Path(args.json).read_text())))
        return 0
    result = {"machine": machine(), "date": time.strftime("%Y-%m-%d"), "core": [], "runs": []}
    if args.search:
        result["search"] = [search_rate(b, games=8 if args.quick else 40)
                            for b in ("europe", "usa", "newyork")]
        for r in result["search"]:
            print_search(r)
        part = "bench-search.json"
    elif args.env:
        result["env"] = env_runs(args.quick)
        part = "bench-env.json"
    elif args.outcomes:
        result["outcomes"] = [outcome_rates(4, 40 if args.quick else 400, args.repeat),
                              outcome_rates(2, 80 if args.quick else 800, args.repeat)]
        part = "bench-outcomes.json"
    if args.search or args.env or args.outcomes:
        out = part_file(args.json, part)
        out.write_text(json.dumps(result, indent=2))
        print(f"\nwritten to {out}")
        return 0

    print(f"# ttrsim {ttrsim.__version__} on {result['machine']['cpu']} "
          f"({result['machine']['cores']} cores)\n")
    compare_games = (args.compare_games if args.compare_games is not None
                     else 4000 if args.quick else 20000)
    if compare_games:
        c = compare_cost(compare_games)
        result["compare"] = c
        print(f"## paired comparison (ttrsim.compare), Europe 4p, 1 worker, {c['games']:,} games")
        print(f"CPU time: compare {c['compare_s']:.2f} s = {c['ratio']:.2f} x simulate per-event "
              f"({c['simulate_s']:.2f} s), {c['ratio_summary']:.2f} x simulate --summary "
              f"({c['simulate_summary_s']:.2f} s); {c['ratio_both_summary']:.2f} x simulate "
              f"--summary of both boards ({c['simulate_summary_s']:.2f} + "
              f"{c['simulate_variant_summary_s']:.2f} s)\n")
    if args.only_compare:
        Path(args.json).write_text(json.dumps(result, indent=2))
        print(f"written to {args.json}")
        return 0
    print("## games per second, one core (profile: share of time in rules / policy / results)")
    print(f"{'policy':10s} {'board':8s} {'players':>7s} {'games/s':>10s} {'turns':>6s}  profile")
    configs = [(board, players, policy) for policy in args.policies.split(",")
               for board in BOARDS for players in (2, 4)]
    for r in core_rates(configs, games, args.repeat,
                        log=lambda msg: print(msg, file=sys.stderr, flush=True)):
        result["core"].append(r)
        p = r["profile_share"]
        prof = " / ".join(f"{p.get(k, 0):.0%}" for k in ("rules", "policy", "results"))
        print(f"{r['policy']:10s} {r['board']:8s} {r['players']:7d} {r['games_per_s']:10,.0f} "
              f"{r['turns_per_game']:6.0f}  {prof}")
    if not args.skip_runs:
        cores = os.cpu_count() or 1
        # One worker plays what each worker plays in the all-core run, in a fresh process
        # too and in batches of the same size: both then pay the same start-up, per-batch
        # costs and warm-up of what a process keeps between batches.
        # The two runs alternate, `run_repeat` times each, and the fastest of each counts
        # (on a shared machine one long run can lose a tenth to load from elsewhere).
        n = max(2000, run_games // cores)
        ones, alls = [], []
        for _ in range(max(1, args.run_repeat)):
            ones.append(run_peak(n, True, 1, default_batch_size(run_games)))
            alls.append(run_peak(run_games, True, -1))
        one = max(r["games_per_s"] for r in ones)
        print(f"\n## ttrsim simulate, Europe 4p default policy, summary mode, 1 worker")
        rates = ", ".join(f"{r['games_per_s']:,.0f}" for r in ones)
        print(f"{n:,} games: {one:,.0f} games/s (the fastest of {rates})")
        print(f"\n## ttrsim simulate of {run_games:,} games, Europe 4p default policy, all cores")
        for summary in (True, False):
            if summary:
                r = dict(min(alls, key=lambda r: r["wall_s"]),
                         walls_s=[round(a["wall_s"], 1) for a in alls])
            else:
                r = run_peak(run_games, summary, -1)
            result["runs"].append(r)
            mode = "summary" if summary else "per-event"
            print(f"{mode:10s} wall {r['wall_s']:8.1f} s  {r['games_per_s']:10,.0f} games/s  "
                  f"peak memory {r['peak_rss_mb']:8.0f} MB  on disk {r['disk_mb']:8.0f} MB"
                  + ("  (fastest of " + ", ".join(f"{w} s" for w in r["walls_s"]) + ")"
                     if len(r.get("walls_s", ())) > 1 else ""))
        # Efficiency on the long summary run, where worker start-up is amortised.
        alln = result["runs"][0]["games_per_s"]
        eff = alln / (cores * one)
        result["parallel"] = {"games_1": n, "games_per_s_1": one,
                              "batch_size": default_batch_size(run_games),
                              "ones": [round(r["games_per_s"]) for r in ones],
                              "games_all": run_games,
                              "games_per_s_all": alln, "cores": cores, "efficiency": eff}
        print(f"\nparallel efficiency with {cores} workers: {eff:.0%} "
              f"({alln:,.0f} games/s against {cores} x {one:,.0f})")
    result["env"] = env_runs(args.quick)
    Path(args.json).write_text(json.dumps(result, indent=2))
    print(f"\nwritten to {args.json}")
    return 0


if __name__ == "__main__":
    from ttrsim.script import run_script

    sys.exit(run_script(main))
