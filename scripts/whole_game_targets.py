"""The measurements of a whole-game `expert` model (docs/expert.md, "The whole game"):
how it plays and how strong and fast it is, beside today's default (`expert`, the
shipped field model) and the search.

Parts (--part, repeatable; rows appended to --json, default
scripts/whole_game_targets.json; a rerun plays only the rows not there yet):
  style      4-player self-play on usa-mega and usa (--style-games games, seeds
             --seed + 11): ticket draws a player, the median game turn of the first
             claim, the winners' mean score, tickets completed a player and the share of held
             tickets completed, of the model,
             of `expert` and (--search-games games, the same deals) of the search
  two        the model against `expert` at 2 players on usa-mega, usa-1910, usa,
             europe and newyork (--games games)
  one-three  one seat of the model against three of `expert` on usa-mega (--games)
  field      the model against each of --opponents at 2 players on usa, europe,
             newyork (--games / 2 games): its worst opponent
  search     the model against the default search at 2 players on usa, europe and
             newyork (--search-games games)
  speed      Europe 4-player self-play of `tickets`, `expert` and the model, side by
             side in one process, best of 3 alternated rounds of --speed-games games:
             games per CPU second and the ratio to `tickets`
  rollout    the search with the model's rollouts against the default search on
             usa-mega at 2 players, at equal CPU per decision (playouts scaled by the
             measured cost of a decision of each, against `tickets`), --search-games

Win shares are of the first spec, seats rotated (a shared first place counts as a
win), Wilson 95%. Every row names the model it measured (the first 12 hex digits of
the file's SHA-256).

    nice python scripts/whole_game_targets.py --model whole --part two --part style --jobs 2
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

import numpy as np

import ttrsim
from ttrsim.batches import game_seeds, play_batch
from ttrsim.game import compile_board
from ttrsim.policies import make_policy
from ttrsim.results import update_json
from ttrsim.training.model_file import model_file

HERE = Path(__file__).parent
PARTS = ("style", "two", "one-three", "field", "search", "speed", "rollout")
OPPONENTS = "expert;expert:model=v4;tickets;blocker;rush;random"


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    ap.add_argument("--model", default="whole", help="a model file or a shipped model's name")
    ap.add_argument("--part", action="append", choices=PARTS, default=[])
    ap.add_argument("--games", type=int, default=2000)
    ap.add_argument("--style-games", type=int, default=400)
    ap.add_argument("--search-games", type=int, default=200)
    ap.add_argument("--speed-games", type=int, default=2000)
    ap.add_argument("--opponents", default=OPPONENTS, help='";"-separated specs')
    ap.add_argument("--seed", type=int, default=77)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--json", type=Path, default=HERE / "whole_game_targets.json")
    return ap


def _style(games) -> dict:
    first = games["first_claim_turn"].to_numpy(np.float64)
    return {"ticket_draws": float(games["ticket_draws"].mean()),
            "first_claim_median": float(np.median(first[first >= 0])),
            "winner_score": float(games.loc[games["rank"] == 1, "score"].mean()),
            "tickets_completed": float(games["tickets_completed"].mean()),
            "held_completed_share": float(games["tickets_completed"].sum() / max(
                1, games["tickets_completed"].sum() + games["tickets_failed"].sum()))}


def _versus(board, specs, games, seed, jobs) -> dict:
    run = ttrsim.simulate(board, specs, games=games, seed=seed, n_jobs=jobs)
    row = run.summary().iloc[0]
    return {"win_share": float(row["win_share"]), "low": float(row["win_share_low"]),
            "high": float(row["win_share_high"])}


def _cpu_per_decision(board, spec, games, seed) -> float:
    """CPU seconds per decision of `spec` against tickets at 2 players."""
    cb = compile_board(board)
    pols = [make_policy(spec, cb.board), make_policy("tickets", cb.board)]
    t = time.process_time()
    play_batch(cb, 2, pols, game_seeds(seed, games), 0, True, True)
    return (time.process_time() - t) / max(1, int(getattr(pols[0], "total_decisions", 0)))


def main(argv=None) -> int:
    a = _parser().parse_args(argv)
    path = Path(model_file(a.model)).resolve()
    if not path.exists():
        raise SystemExit(f"--model {a.model!r}: no such model file")
    sha = hashlib.sha256(path.read_bytes()).hexdigest()[:12]
    spec = f"expert:model={path}"
    done = json.loads(a.json.read_text()) if a.json.exists() else []

    def have(row) -> bool:
        return any(all(r.get(k) == v for k, v in row.items()) for r in done)

    def save(key, measure):
        key = dict(key, model_sha=sha)
        if have(key):
            return
        t = time.time()
        row = dict(key, **measure(), seconds=round(time.time() - t, 1),
                   date=time.strftime("%Y-%m-%d"), model=str(a.model))
        update_json(a.json, lambda old: old + [row], default=[])
        done.append(row)
        print(json.dumps(row), flush=True)

    parts = a.part or list(PARTS)
    if "style" in parts:
        for board in ("usa-mega", "usa"):
            for who, s, n in (("model", spec, a.style_games), ("expert", "expert", a.style_games),
                              ("search", "search", a.search_games)):
                if n <= 0:
                    continue
                save({"part": "style", "board": board, "who": who, "games": n},
                     lambda: _style(ttrsim.simulate(board, [s] * 4, games=n, seed=a.seed + 11,
                                                    n_jobs=a.jobs).games))
    if "two" in parts:
        for board in ("usa-mega", "usa-1910", "usa", "europe", "newyork"):
            save({"part": "two", "board": board, "against": "expert", "games": a.games},
                 lambda: _versus(board, [spec, "expert"], a.games, a.seed, a.jobs))
    if "one-three" in parts:
        save({"part": "one-three", "board": "usa-mega", "against": "expert", "games": a.games},
             lambda: _versus("usa-mega", [spec] + ["expert"] * 3, a.games, a.seed, a.jobs))
    if "field" in parts:
        for other in [o.strip() for o in a.opponents.split(";") if o.strip()]:
            for board in ("usa", "europe", "newyork"):
                save({"part": "field", "board": board, "against": other, "games": a.games // 2},
                     lambda: _versus(board, [spec, other], a.games // 2, a.seed, a.jobs))
    if "search" in parts:
        for board in ("usa", "europe", "newyork"):
            save({"part": "search", "board": board, "against": "search",
                  "games": a.search_games},
                 lambda: _versus(board, [spec, "search"], a.search_games, a.seed, a.jobs))
    if "speed" in parts:
        def speed():
            cb = compile_board("europe")
            seeds = game_seeds(a.seed, a.speed_games)
            best = {}
            for _ in range(3):
                for name, s in (("tickets", "tickets"), ("expert", "expert"), ("model", spec)):
                    pols = [make_policy(s, cb.board) for _ in range(4)]
                    t = time.process_time()
                    play_batch(cb, 4, pols, seeds, 0, True, True)
                    best[name] = max(best.get(name, 0.0), a.speed_games / (time.process_time() - t))
            return {"games_per_cpu_s": best,
                    "model_share_of_tickets": best["model"] / best["tickets"],
                    "expert_share_of_tickets": best["expert"] / best["tickets"]}
        save({"part": "speed", "board": "europe", "players": 4, "games": a.speed_games}, speed)
    if "rollout" in parts:
        def rollout():
            base = make_policy("search", compile_board("usa-mega").board)
            playouts = int(getattr(base, "playouts"))
            mine = f"search:rollout={spec}"
            cost = {s: _cpu_per_decision("usa-mega", s, 4, a.seed)
                    for s in ("search", mine)}
            n = max(4, round(playouts * cost["search"] / cost[mine]))
            got = _versus("usa-mega", [f"search:rollout={spec},playouts={n}", "search"],
                          a.search_games, a.seed, a.jobs)
            return dict(got, playouts=n, default_playouts=playouts, cpu_per_decision=cost)
        save({"part": "rollout", "board": "usa-mega", "against": "search",
              "games": a.search_games}, rollout)
    return 0


if __name__ == "__main__":
    from ttrsim.script import run_script

    sys.exit(run_script(main))
