"""Strength of the `search` policy against `tickets`, resumable.

Plays seat-rotated games in chunks and appends each finished chunk to a JSON file
(default scripts/search_strength.json), so an interrupted run keeps what it measured and
the same command resumes it. Game g of a table always gets the same seed (game_seeds of
the table's key) and seat rotation, whatever the chunking or order.

Tables (--part):
  two    search (default settings) vs tickets, 2 players, on USA, Europe and New York
  four   one search seat vs three tickets, 4 players, on the three boards
  curve  search with playouts=P vs tickets, Europe 2 players, for a range of P
  infer  search with infer=B vs tickets, Europe 2 players, for a range of B, every B on
         the same seeds (paired: the differences from infer=0 get paired intervals;
         the paired table is printed for the search of ttrsim 0.1's rows)
  draws  search against itself with ticket_draws=0 (no ticket draw unless its rollout policy
         would draw), 2 players, on the three boards: what the ticket draws the search
         makes are worth to it

    nice -n 5 python scripts/search_strength.py --part two --games 2000     # resumable
    python scripts/search_strength.py --part infer --games 1000   # infer, paired
    python scripts/search_strength.py --part draws --jobs 2       # chunks on 2 cores
    python scripts/search_strength.py --markdown    # tables of docs/search.md from the JSON
    python scripts/search_strength.py --figure docs/search_curve.png

Every part plays --search (default: the default search; the search of ttrsim 0.1, whose
rows are stored under the spec `search` without a model, is `search:rollout=tickets`).
Win share: games the search seat ranks first (a shared first place counts as a win),
with its Wilson 95% interval (scipy.stats.binomtest). The machine was shared with other
work while these ran, so the seconds per game are provisional.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from ttrsim.seats import match_key, play_match
from ttrsim.batches import SCORE_COLS
from ttrsim.policies import expert_models

BOARDS = ("usa", "europe", "newyork")
CURVE = (12, 25, 50, 100, 200, 400, 800)
INFER = (0, 2, 3, 4, 5)
RANK = SCORE_COLS.index("rank")
KEPT = SCORE_COLS.index("tickets_kept")
DEFAULT_JSON = Path(__file__).with_name("search_strength.json")


def _with(search: str, setting: str) -> str:
    """The search spec with one more setting: ``("search", "infer=3")`` ->
    ``"search:infer=3"``."""
    return f"{search}{',' if ':' in search else ':'}{setting}"


def tables(part: str, games: int, search: str) -> list[dict]:
    """The tables of one part: board, players, specs (slot 0 is the search seat)."""
    if part == "two":
        return [dict(board=b, players=2, specs=[search, "tickets"], games=games) for b in BOARDS]
    if part == "four":
        return [dict(board=b, players=4, specs=[search] + ["tickets"] * 3, games=games)
                for b in BOARDS]
    if part == "curve":
        return [dict(board="europe", players=2, specs=[_with(search, f"playouts={p}"), "tickets"],
                     games=games) for p in CURVE]
    if part == "infer":
        return [dict(board="europe", players=2, specs=[_with(search, f"infer={b}"), "tickets"],
                     games=games, seeds="europe|2|infer") for b in INFER]
    if part == "draws":
        return [dict(board=b, players=2, specs=[search, _with(search, "ticket_draws=0")],
                     games=games) for b in BOARDS]
    raise ValueError(f"unknown part {part!r}: two, four, curve, infer or draws")


def games_key(t: dict) -> str:
    """What a table's games are dealt from: board, players and specs (not the expert
    model, so that two models play the same games)."""
    return f"{t['board']}|{t['players']}|{'/'.join(t['specs'])}"


def key_of(t: dict) -> str:
    """A table's key in the JSON file: its games_key, and the expert model (its digest)
    when a spec plays one, so that chunks of two models never add up in one table."""
    models = expert_models(t["specs"])
    return games_key(t) + (f"|expert={','.join(sorted(models.values()))}" if models else "")


def play_chunk(t: dict, first: int, n: int, seed: int) -> dict:
    """Games first..first+n-1 of table t: the search seat's wins, margins and timing."""
    # a table's own seeds, or those it shares with the other tables of a paired part
    m = play_match(t["board"], t["specs"], n, match_key(seed, t.get("seeds", games_key(t))),
                   first=first, count=("total_decisions", "total_playouts"))
    mine, others = m.of(0), m.others(0)
    margin = mine[:, 0].astype(int) - others[:, :, 0].max(axis=1)
    return dict(key=key_of(t), first=first, games=n, wins=m.wins(0),
                won="".join("1" if r == 1 else "0" for r in mine[:, RANK]),
                margin_sum=int(margin.sum()), score_sum=int(mine[:, 0].sum()),
                seconds=m.seconds, decisions=int(m.counts["total_decisions"][0]),
                playouts=int(m.counts["total_playouts"][0]),
                kept=[int(m.of(k)[:, KEPT].sum()) for k in range(len(t["specs"]))],
                # games whose first place the search seat shares (counted as its wins)
                shared=m.shared(0))


def load(path: Path) -> dict:
    return json.loads(path.read_text()) if path.exists() else {"chunks": []}


def save_chunks(path: Path, rows: list[dict]) -> None:
    """Add finished chunks to the JSON file, read again under a lock (``update_json``), so
    that two runs on other tables at once keep each other's chunks."""
    from ttrsim.results import update_json

    def add(data: dict) -> dict:
        have = {(c["key"], c["first"]) for c in data["chunks"]}
        data["chunks"] += [r for r in rows if (r["key"], r["first"]) not in have]
        return data

    update_json(path, add, default={"chunks": []}, indent=0)


def run(parts: list[str], games: int, chunk: int, seed: int, search: str, path: Path,
        deadline: float | None, jobs: int = 1) -> None:
    """Play the missing chunks, round-robin over the tables so that partial results cover
    every table, `jobs` chunks at a time (joblib); save after each round of them."""
    from joblib import Parallel, delayed

    data = load(path)
    done = {(c["key"], c["first"]) for c in data["chunks"]}
    todo = [t for p in parts for t in tables(p, games, search)]
    pending = [(t, first) for first in range(0, max(t["games"] for t in todo), chunk)
               for t in todo if first < t["games"] and (key_of(t), first) not in done]
    with Parallel(n_jobs=jobs) as parallel:
        for i in range(0, len(pending), jobs):
            if deadline and time.time() > deadline:
                print("deadline reached", file=sys.stderr)
                return
            batch = pending[i:i + jobs]
            rows = parallel(delayed(play_chunk)(t, first, min(chunk, t["games"] - first), seed)
                            for t, first in batch)
            save_chunks(path, rows)
            for (t, first), row in zip(batch, rows):
                n = row["games"]
                print(f"{row['key']} games {first}..{first + n - 1}: {row['wins']}/{n} wins, "
                      f"{row['seconds'] / n:.2f} s/game", file=sys.stderr, flush=True)


def summary(path: Path) -> list[dict]:
    """One row per table: games, wins, win share with Wilson 95% interval, mean margin."""
    from scipy.stats import binomtest

    agg: dict[str, dict] = {}
    kept: dict[str, list] = {}                # tickets kept per slot (chunks that count them)
    shared: dict[str, list] = {}              # games with a shared first place (likewise)
    for c in load(path)["chunks"]:
        a = agg.setdefault(c["key"], dict(games=0, wins=0, margin_sum=0, seconds=0.0,
                                          decisions=0, playouts=0))
        for k in a:
            a[k] += c[k]
        if "kept" in c:
            k = kept.setdefault(c["key"], [0, [0] * len(c["kept"])])
            k[0] += c["games"]
            k[1] = [x + y for x, y in zip(k[1], c["kept"])]
        if "shared" in c:
            k = shared.setdefault(c["key"], [0, 0])
            k[0] += c["games"]
            k[1] += c["shared"]
    rows = []
    for key, a in agg.items():
        board, players, specs, *model = key.split("|")
        ci = binomtest(a["wins"], a["games"]).proportion_ci(method="wilson")
        n_kept, by_slot = kept.get(key, (0, []))
        n_shared, n_ties = shared.get(key, (0, 0))
        rows.append(dict(board=board, players=int(players),
                         search=specs.split("/")[0] + "".join(f" ({m})" for m in model),
                         against=", ".join(sorted(set(specs.split("/")[1:]))),
                         kept_per_game=[x / n_kept for x in by_slot],
                         shared_share=n_ties / n_shared if n_shared else None,
                         games=a["games"], win_share=a["wins"] / a["games"], low=ci.low,
                         high=ci.high, mean_margin=a["margin_sum"] / a["games"],
                         seconds_per_game=a["seconds"] / a["games"],
                         playouts_per_decision=a["playouts"] / max(a["decisions"], 1)))
    return rows


def markdown(path: Path) -> str:
    out = ["| board | players | search | against | games | win share (95% CI) | shared first "
           "| mean margin | tickets kept a game | s/game |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for r in summary(path):
        kept = " / ".join(f"{x:.2f}" for x in r["kept_per_game"])
        tied = "" if r["shared_share"] is None else f"{r['shared_share']:.3f}"
        out.append(f"| {r['board']} | {r['players']} | {r['search']} | {r['against']} | "
                   f"{r['games']:,} | {r['win_share']:.3f} ({r['low']:.3f}–{r['high']:.3f}) | "
                   f"{tied} | {r['mean_margin']:+.1f} | {kept} | {r['seconds_per_game']:.2f} |")
    return "\n".join(out)


def paired_infer(path: Path) -> str:
    """The infer part: each infer=B against infer=0 on the same games, the difference in
    win share with its paired 95% interval (scipy.stats.ttest_rel); "" without results."""
    from scipy.stats import ttest_rel

    games: dict[str, dict[int, str]] = {}
    for c in load(path)["chunks"]:
        if "|search:infer=" in c["key"] and "won" in c:
            games.setdefault(c["key"], {})[c["first"]] = c["won"]
    base_key = "europe|2|search:infer=0/tickets"
    if base_key not in games:
        return ""
    vec = {k: np.array([int(ch) for f in sorted(v) for ch in v[f]]) for k, v in games.items()}
    out = ["| infer | games | win share | difference from infer=0 (paired 95% CI) | p |",
           "|---|---|---|---|---|"]
    for b in INFER:
        k = f"europe|2|search:infer={b}/tickets"
        if k not in vec:
            continue
        n = min(len(vec[k]), len(vec[base_key]))
        x, y = vec[k][:n], vec[base_key][:n]
        if b == 0:
            out.append(f"| 0 | {n:,} | {x.mean():.3f} | | |")
            continue
        t = ttest_rel(x, y)
        ci = t.confidence_interval(0.95)
        out.append(f"| {b} | {n:,} | {x.mean():.3f} | {x.mean() - y.mean():+.3f} "
                   f"({ci.low:+.3f} to {ci.high:+.3f}) | {t.pvalue:.3f} |")
    return "\n".join(out)


def figure(path: Path, out: str) -> None:
    """The playouts curves of Europe 2 players: one line per search (its spec without
    the playouts, and its expert model), the seconds per game beside each point."""
    import re

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    curves: dict[str, list] = {}
    for r in summary(path):
        m = re.search(r"playouts=(\d+)", r["search"])
        if r["board"] == "europe" and r["players"] == 2 and m:
            name = re.sub(r"[:,]?playouts=\d+", "", r["search"])
            curves.setdefault(name, []).append((int(m.group(1)), r))
    if not curves:
        raise SystemExit("no curve results yet (--part curve)")
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for name, points in sorted(curves.items()):
        points.sort(key=lambda p: p[0])
        x = [p[0] for p in points]
        y = np.array([p[1]["win_share"] for p in points])
        lo = np.array([p[1]["low"] for p in points])
        hi = np.array([p[1]["high"] for p in points])
        label = (re.sub(r"\(expert=(\w+)\)", r"(expert model \1)", name) if name != "search"
                 else "search of ttrsim 0.1 (tickets rollouts)")
        ax.errorbar(x, y, yerr=[y - lo, hi - y], marker="o", capsize=3, label=label)
        for xi, (_, r) in zip(x, points):
            ax.annotate(f"{r['seconds_per_game']:.2f}s", (xi, r["win_share"]),
                        textcoords="offset points", xytext=(4, -12), fontsize=7)
    ax.axhline(0.5, color="gray", lw=0.8, ls="--")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("playouts per decision")
    ax.set_ylabel("win share vs tickets (Wilson 95%)")
    ax.set_title("search vs tickets, Europe 2 players")
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--part", action="append", choices=("two", "four", "curve", "infer", "draws"),
                    help="tables to play (repeatable; default: two)")
    ap.add_argument("--games", type=int, default=2000, help="games per table (default 2000)")
    ap.add_argument("--chunk", type=int, default=50, help="games per saved chunk (default 50)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=1,
                    help="chunks played at once, one process each (default 1; the same games)")
    ap.add_argument("--search", default="search", help="spec of the search seat (default: search)")
    ap.add_argument("--json", type=Path, default=DEFAULT_JSON)
    ap.add_argument("--until", type=float, default=None,
                    help="stop starting chunks after this many minutes")
    ap.add_argument("--markdown", action="store_true", help="print the tables and exit")
    ap.add_argument("--figure", metavar="PNG", help="draw the playouts curve and exit")
    args = ap.parse_args(argv)
    if args.markdown:
        print(markdown(args.json))
        print(paired_infer(args.json))
        return 0
    if args.figure:
        figure(args.json, args.figure)
        return 0
    deadline = time.time() + 60 * args.until if args.until else None
    run(args.part or ["two"], args.games, args.chunk, args.seed, args.search, args.json, deadline,
        args.jobs)
    print(markdown(args.json))
    print(paired_infer(args.json))
    return 0


if __name__ == "__main__":
    from ttrsim.script import run_script

    sys.exit(run_script(main))
