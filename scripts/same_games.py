"""Check that two builds of ttrsim play the same games, and measure one against the other.

A speed-up of the core or of a policy must not change what the policies do. This script
plays the same seeds with the built-in policies on every board and player count in each of
two builds (two source trees built in place, or installed copies: any directory from which
``import ttrsim`` loads that build), and compares every array the core returns: scores,
seats, turns, per-ticket, per-route, tunnel and station counts (``tables``); the
decisions of recorded games, by ``ttrsim.record.record_game`` and by ``ttrsim.replay``
of a run (``recorded``); what the learning environment returns at every step of
VectorEnvs stepped with random actions against the built-in policies (``env``); and the
games of the compiled policies that play games inside their decisions or list candidates
of their own, ``search`` (its playouts) and ``expert`` (``players``). ``--parts`` chooses.

When every game is the same, each decision of a policy in one build equals the decision
of the same policy in the other build at the same position, so a game between the two
builds' versions of a policy is the game both builds play alone. The script then reports
the seat-rotated win shares of the first build's ``tickets`` (slot 0) and the second
build's (slot 1) in 2-player games between them, 10,000 per board by default: the
head-to-head measure of strength between the two versions.

    python scripts/same_games.py /path/to/old/tree .            # both trees built in place
    python scripts/same_games.py OLD NEW --games 500 --h2h-games 10000
    python scripts/same_games.py OLD NEW --policies tickets routes greedy   # random changed
    python scripts/same_games.py OLD NEW --parts recorded env --h2h-games 0
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

BOARDS = {"usa": (2, 3, 4, 5), "europe": (2, 3, 4, 5), "newyork": (2, 3, 4)}
POLICIES = ("tickets", "routes", "greedy", "random")
PARTS = ("tables", "recorded", "env", "players")
# the compiled policies that play games of their own (search: playouts) or list candidates
# (expert), on smaller tables: (board, specs, games)
PLAYERS = (("newyork", ("search:playouts=12", "tickets"), 12),
           ("usa", ("search:playouts=8,claims=4,draws=1", "routes", "greedy"), 4),
           ("usa", ("expert", "tickets"), 60),
           ("europe", ("expert", "expert", "routes"), 30))


def play_all(out: str, games: int, h2h_games: int, seed: int,
             policies: tuple[str, ...] = POLICIES, parts: tuple[str, ...] = PARTS,
             record_games: int = 4, env_steps_n: int = 400) -> None:
    """(In the build under test) play every table of `policies` and the other `parts`,
    and save the results to `out`."""
    from ttrsim.batches import SCORE_COLS, game_seeds, play_batch
    from ttrsim.game import compile_board
    from ttrsim.policies import make_policy

    arrays = {}
    for board, counts in BOARDS.items():
        cb = compile_board(board)
        if "tables" not in parts:
            continue
        tables = [[p] * n for p in policies for n in counts]
        if len(policies) > 1:
            tables.append([policies[k % len(policies)] for k in range(max(counts))])
        for specs in tables:
            pols = [make_policy(s, cb.board) for s in specs]
            res = play_batch(cb, len(specs), pols, game_seeds(seed, games), 0, True, True)
            for key, value in res.items():
                add_result(arrays, f"{board}/{'-'.join(specs)}", key, value, SCORE_COLS)
        if h2h_games > 0:
            pols = [make_policy("tickets", cb.board) for _ in range(2)]
            res = play_batch(cb, 2, pols, game_seeds(seed + 1, h2h_games), 0, True, True)
            arrays[f"h2h/{board}/rank"] = np.asarray(res["scores"])[..., SCORE_COLS.index("rank")]
            arrays[f"h2h/{board}/slot"] = np.asarray(res["slot"])
        print(f"  {board}: played", file=sys.stderr, flush=True)
    if "recorded" in parts:
        arrays.update(recorded_games(seed, policies, record_games))
        print("  recorded games: played", file=sys.stderr, flush=True)
    if "env" in parts:
        arrays.update(env_steps(seed, policies, steps=env_steps_n))
        print("  env steps: played", file=sys.stderr, flush=True)
    if "players" in parts:
        for board, specs, n in PLAYERS:
            cb = compile_board(board)
            pols = [make_policy(s, cb.board) for s in specs]
            res = play_batch(cb, len(specs), pols, game_seeds(seed + 2, n), 0, True, False)
            for key, value in res.items():
                add_result(arrays, f"players/{board}/{'-'.join(specs)}", key, value, SCORE_COLS)
        print("  search and expert: played", file=sys.stderr, flush=True)
    np.savez_compressed(out, **arrays)


def add_result(arrays: dict, name: str, key: str, value, score_cols) -> None:
    """One array of play_batch's result; the scores by column name (a build may add score
    columns)."""
    if key == "scores":
        for c, col in enumerate(score_cols):
            arrays[f"{name}/{key}/{col}"] = np.asarray(value)[..., c]
    else:
        arrays[f"{name}/{key}"] = np.asarray(value)


def recorded_games(seed: int, policies: tuple[str, ...], n: int = 4) -> dict:
    """The decisions of recorded games: record_game's (decisions, seats, seating, the
    moves in words, with each tunnel's revealed cards, and the final breakdown) for the
    tables of every board, and ttrsim.replay's for games of a small run (the run's rows of
    each game too)."""
    import ttrsim
    from ttrsim.record import record_game

    arrays = {}
    for board, counts in BOARDS.items():
        mixed = [policies[k % len(policies)] for k in range(max(counts))]
        for specs in [[p] * min(counts) for p in policies] + [mixed]:
            for g in range(n):
                rec = record_game(board, list(specs), seed + g, game=g, rotate=True)
                key = f"recorded/{board}/{'-'.join(specs)}/{g}"
                arrays.update(record_arrays(key, rec))
        run = ttrsim.simulate(board, mixed, games=n, seed=seed, progress=False)
        for g in range(n):
            key = f"replay/{board}/{g}"
            try:
                rec = ttrsim.replay(run, g)
            except ValueError as exc:       # the replay disagrees with the run's tables
                arrays[f"{key}/error"] = np.array(str(exc))
                continue
            arrays.update(record_arrays(key, rec))
            for name in ("games", "tickets", "routes", "tunnels", "stations"):
                arrays.update(frame_arrays(f"{key}/run-{name}", getattr(rec, name)))
    return arrays


def frame_arrays(key: str, df) -> dict:
    """A table column by column, as text (a build may add columns)."""
    return {f"{key}/{col}": np.array([str(x) for x in df[col].tolist()], dtype=str)
            for col in df.columns}


def record_arrays(key: str, rec) -> dict:
    return {f"{key}/actions": np.asarray(rec.actions), f"{key}/seats": np.asarray(rec.seats),
            f"{key}/slot": np.asarray(rec.slot), f"{key}/truncated": np.array(rec.truncated),
            **frame_arrays(f"{key}/moves", rec.moves), **frame_arrays(f"{key}/final", rec.final)}


def env_steps(seed: int, policies: tuple[str, ...], n_envs: int = 6, steps: int = 400) -> dict:
    """What VectorEnvs return at every step (observations, masks, rewards, ends, final
    scores, game seeds, seats) while random legal actions play the agent's seat and the
    built-in policies the others, every board and player count, games reset on their own."""
    from ttrsim.env import VectorEnv

    arrays = {}
    for board, counts in BOARDS.items():
        for n in counts:
            opponents = [policies[k % len(policies)] for k in range(n - 1)]
            env = VectorEnv(board, n, n_envs, opponents=opponents, seed=seed + n, seat=None,
                            reward="margin")
            obs, masks = env.reset()
            rows = {k: [] for k in ("obs", "masks", "rewards", "terminations", "truncations",
                                    "final_scores", "seeds", "seats")}
            for _ in range(steps):
                obs, masks, rew, term, trunc = env.step(env.sample_actions())
                for k, v in zip(("obs", "masks", "rewards", "terminations", "truncations",
                                 "final_scores"), (obs, masks, rew, term, trunc,
                                                   env.final_scores)):
                    rows[k].append(np.array(v))
                rows["seeds"].append(env.game_seeds())
                rows["seats"].append(env.seats())
            for k, v in rows.items():
                arrays[f"env/{board}/{n}/{k}"] = np.stack(v)
    return arrays


def run_build(tree: str, out: str, args) -> None:
    root = Path(tree).resolve()
    if not root.is_dir():
        sys.exit(f"{tree} is not a directory: give the source tree of a build")
    env = dict(os.environ, PYTHONPATH=str(root))
    where = subprocess.run([sys.executable, "-c", "import ttrsim; print(ttrsim.__file__)"],
                           env=env, capture_output=True, text=True, cwd=tempfile.gettempdir())
    if where.returncode != 0:
        last = (where.stderr.strip().splitlines() or ["no error text"])[-1]
        sys.exit(f"cannot import ttrsim from {tree}: {last} "
                 "(build it in place: python setup.py build_ext --inplace)")
    loaded = Path(where.stdout.strip()).resolve()
    if root not in loaded.parents:
        # an installed ttrsim would be compared instead of this tree's build
        sys.exit(f"{tree} holds no ttrsim package: `import ttrsim` there loads {loaded}")
    print(f"{tree}: {loaded}", file=sys.stderr)
    subprocess.run([sys.executable, __file__, "--play", out, "--games", str(args.games),
                    "--h2h-games", str(args.h2h_games), "--seed", str(args.seed),
                    "--policies", *args.policies, "--parts", *args.parts,
                    "--record-games", str(args.record_games), "--env-steps", str(args.env_steps)],
                   env=env, check=True, cwd=tempfile.gettempdir())


def same(x: np.ndarray, y: np.ndarray) -> bool:
    """Equal arrays (a missing value, NaN, equals itself)."""
    return np.array_equal(x, y, equal_nan=x.dtype.kind in "fc" and y.dtype.kind in "fc")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("first", nargs="?", help="directory of the first build")
    ap.add_argument("second", nargs="?", help="directory of the second build")
    ap.add_argument("--games", type=int, default=1000, help="games per table compared")
    ap.add_argument("--h2h-games", type=int, default=10_000,
                    help="2-player tickets games per board for the win share (0: none)")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--policies", nargs="+", choices=POLICIES, default=list(POLICIES),
                    help="the policies whose games are compared (default: all built-in); "
                         "leave out one whose games a change alters on purpose")
    ap.add_argument("--parts", nargs="+", choices=PARTS, default=list(PARTS),
                    help="what to compare (default: all): the batch tables, recorded games "
                         "(record_game, replay), environment steps, search and expert games")
    ap.add_argument("--record-games", type=int, default=4,
                    help="recorded games per table and board (default 4)")
    ap.add_argument("--env-steps", type=int, default=400,
                    help="steps of each VectorEnv (6 envs; default 400)")
    ap.add_argument("--play", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.play:
        play_all(args.play, args.games, args.h2h_games, args.seed, tuple(args.policies),
                 tuple(args.parts), args.record_games, args.env_steps)
        return 0
    if not (args.first and args.second):
        ap.error("give the directories of two builds")
    with tempfile.TemporaryDirectory() as tmp:
        paths = [os.path.join(tmp, "first.npz"), os.path.join(tmp, "second.npz")]
        run_build(args.first, paths[0], args)
        run_build(args.second, paths[1], args)
        with np.load(paths[0]) as fa, np.load(paths[1]) as fb:
            a, b = dict(fa), dict(fb)
    # a result column only one build has (a new score part) is not a difference in play;
    # an error only one build raises is
    only = sorted(k for k in set(a) ^ set(b) if not k.endswith("/error"))
    differ = sorted(k for k in set(a) | set(b) if k not in only
                    and not (k in a and k in b and same(a[k], b[k])))
    print(f"{len(set(a) & set(b))} result arrays compared, {len(differ)} differ")
    if only:
        cols = sorted({k.rsplit("/", 1)[-1] for k in only})
        print(f"  not compared: {len(only)} arrays of one build only (columns {', '.join(cols)})")
    part = {"h2h": "tables", "recorded": "recorded", "replay": "recorded", "env": "env",
            "players": "players"}

    def part_of(key):
        return part.get(key.split("/")[0], "tables")

    counts = {}
    for k in set(a) & set(b):
        counts[part_of(k)] = counts.get(part_of(k), 0) + 1
    print("  by part: " + ", ".join(
        f"{name} {sum(part_of(k) == name for k in differ)} of {counts[name]}"
        for name in PARTS if name in counts)
        + f" (games per table {args.games}, seed {args.seed})")
    for name in PARTS:
        for k in [k for k in differ if part_of(k) == name][:8]:
            print(f"  differs: {k}")
    if differ:
        print("the builds play different games: the head-to-head share is not implied")
        return 1
    for board in BOARDS if args.h2h_games > 0 and "tables" in args.parts else ():
        rank, slot = a[f"h2h/{board}/rank"], a[f"h2h/{board}/slot"]
        first, second = (float((rank[slot == k] == 1).mean()) for k in (0, 1))
        print(f"{board}: tickets wins {first:.1%} (first build) and {second:.1%} (second "
              f"build) of {len(rank):,} seat-rotated 2-player games (a shared win counts "
              f"for both)")
    return 0


if __name__ == "__main__":
    from ttrsim.script import run_script

    sys.exit(run_script(main))
