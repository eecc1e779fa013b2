"""Regenerate the example reports kept in ``reports/``.

Each report is written from a fresh run of ``ttrsim.simulate`` (per-event tables on disk
under ``--runs``, default ``runs/``, which is not kept in the repository):

- ``europe-2p``, ``europe-4p``, ``usa-4p``, ``newyork-2p``, ``usa-mega-4p`` (the USA 1910
  Mega Game): every seat plays the default policy, 1,000,000 games each;
- ``europe-4p-stations``: the station-value study, a paired experiment with common
  random numbers: the same seeds played twice, once with every seat on ``tickets`` and
  once with one seat (rotating) on ``tickets:stations=0``;
- ``europe-4p-tunnels``: the tunnel study, four tunnel attitudes at one table
  (``tickets:risk=0``, the default ``tickets`` (risk 0.3), ``tickets:risk=0.6`` and
  ``tickets:tunnels=0``), seat-rotated, so the win matrix says which attitude pays.
- ``europe-2p-search``: ``search`` (default settings: ``expert`` rollouts since ttrsim
  0.2) against ``tickets``, 2 players,
  seat-rotated, 1,000 games (FIXED_GAMES): every table split by policy, so ticket
  completion, score parts and routes show under both players side by side;
- ``europe-4p-route-importance``: each route of Europe removed in turn and played on the
  same games as the intact board (``ttrsim.analysis.route_importance``), 4 players;
- ``usa-4p-ticket-fairness``: ticket values, suggested points and two closed-loop rounds
  on USA, 4 players (``ttrsim.analysis.ticket_fairness``).
  These two use their own game counts (``--balance-games``; see BALANCE_GAMES), sized for
  a few minutes on a 2-core machine.

``europe-4p``, ``usa-4p``, ``usa-mega-4p``, ``europe-4p-stations`` and ``europe-4p-tunnels`` are played a
second time under stronger play: the same games (seed, game count, seat rotation) with
``expert`` in every seat in place of ``tickets``, keeping each seat's settings
(``tickets:risk=0`` -> ``expert:risk=0``; the station study's run without stations too).
``ttrsim.analysis.compare_play`` sets the two plays side by side and the report gets the
section "Under stronger play" (see STRONG). The two balance studies are made a second time
with ``expert`` in every seat too, on the same seeds, and ``compare_importance`` /
``compare_fairness`` give their reports that section (see STRONG_BALANCE).

    python scripts/make_reports.py                  # everything, 1,000,000 games each
    python scripts/make_reports.py --games 20000    # a quick look
    python scripts/make_reports.py --only usa-4p
"""
from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

import ttrsim
from ttrsim.analysis import compare_play
from ttrsim.policies import replace_policy
from ttrsim.report import write_report
from ttrsim.report.html import Section

ROOT = Path(__file__).resolve().parents[1]
SEED = 2026

# name: (board, players or policy list, title)
STUDIES = {
    "europe-2p": ("europe", 2, "Europe, 2 players, default policy"),
    "europe-4p": ("europe", 4, "Europe, 4 players, default policy"),
    "usa-4p": ("usa", 4, "USA, 4 players, default policy"),
    "newyork-2p": ("newyork", 2, "New York, 2 players, default policy"),
    "usa-mega-4p": ("usa-mega", 4, "USA 1910 Mega Game, 4 players, default policy"),
    "europe-4p-stations": ("europe", ["tickets"] * 4,
                           "Europe, 4 players: what stations are worth (paired with a seat "
                           "that may not build them)"),
    "europe-4p-tunnels": ("europe", ["tickets:risk=0", "tickets", "tickets:risk=0.6",
                                     "tickets:tunnels=0"],
                          "Europe, 4 players: is the tunnel worth the risk"),
    "europe-2p-search": ("europe", ["search", "tickets"],
                         "Europe, 2 players: the search player against tickets (seat-rotated)"),
}
# studies whose policies are too slow for --games: their own game count
FIXED_GAMES = {"europe-2p-search": 1000}
# studies played again under stronger play: this policy in place of tickets, seat by seat
STRONG = {"europe-4p": "expert", "usa-4p": "expert", "usa-mega-4p": "expert",
          "europe-4p-stations": "expert",
          "europe-4p-tunnels": "expert"}
BASELINE = {"europe-4p-stations": ["tickets:stations=0"] + ["tickets"] * 3}


def policies_of(players) -> list[str]:
    """The policy of every seat: a player count means the default policy in each."""
    return ["tickets"] * players if isinstance(players, int) else list(players)


def stronger(policies: list[str], policy: str) -> list[str]:
    """``policy`` in place of tickets in every seat, keeping the seat's settings
    (``tickets:risk=0`` -> ``expert:risk=0``)."""
    for spec in policies:
        if spec.partition(":")[0] != "tickets":
            raise ValueError(f"no stronger counterpart of {spec!r}")
    return replace_policy(policies, policy)


def play(board, players, games: int, out: Path, jobs: int, fresh: bool):
    """One run of the study's seed, written to ``out`` (afresh unless ``fresh`` is False)."""
    if fresh and out.exists():
        shutil.rmtree(out)
    return ttrsim.simulate(board, players, games=games, seed=SEED, n_jobs=jobs, out=out,
                           batch_size=10_000 if games >= 100_000 else None, progress=True)


def run_study(name: str, games: int, runs: Path, jobs: int, fresh: bool):
    board, players, title = STUDIES[name]
    games = FIXED_GAMES.get(name, games)
    t = time.perf_counter()
    run = play(board, players, games, runs / name, jobs, fresh)
    baseline = strong = strong_baseline = comparison = None
    if name in BASELINE:
        baseline = play(board, BASELINE[name], games, runs / f"{name}-no-stations", jobs, fresh)
    if name in STRONG:
        # the same games (seed, count, rotation) under stronger play, seat by seat
        policy = STRONG[name]
        strong = play(board, stronger(policies_of(players), policy), games,
                      runs / f"{name}-{policy}", jobs, fresh)
        if name in BASELINE:
            strong_baseline = play(board, stronger(BASELINE[name], policy), games,
                                   runs / f"{name}-{policy}-no-stations", jobs, fresh)
    played = time.perf_counter() - t
    if strong is not None:
        comparison = compare_play(run, strong, baseline, strong_baseline)
        print(comparison.summary().split("\n", 1)[0])
    folder = ROOT / "reports" / name
    extra = [strategy(run, folder)] if name == "europe-2p-search" else []
    index = write_report(run, folder, title=f"{title}, {games:,} games"
                         + (f" (and the same games under {STRONG[name]})" if strong else ""),
                         baseline=baseline, stronger=comparison, extra=extra)
    print(f"{name}: {games:,} games per run in {played:.0f} s"
          + (" (both plays)" if strong else "") + f", report {index.relative_to(ROOT)} "
          f"({time.perf_counter() - t - played:.0f} s)")


def strategy_section(run) -> tuple:
    """How two policies of a 2-player run play (the search study): what each does with its
    turns in each third of the game, tickets drawn, kept and completed, and score parts,
    with the difference's 95% interval paired by game (scipy.stats.ttest_rel); and each
    ticket's completion when kept under both policies (difference with a normal-approximation
    95% interval): the two tables."""
    import numpy as np
    import pandas as pd
    from scipy import stats

    g = run.games.copy()
    pols = sorted(g.policy.unique())
    if len(pols) != 2 or int(g.players.iloc[0]) != 2:
        raise ValueError("the strategy section compares the two policies of a 2-player run")
    length = g.groupby("game").turns.first()
    key = ["game", "seat"]

    def third(df):
        return np.minimum(2, 3 * df.turn.to_numpy() // length.loc[df.game].to_numpy())

    draws = run.tickets[~run.tickets.initial].drop_duplicates(["game", "seat", "turn"])
    events = {"claims": run.routes, "ticket draws": draws, "stations": run.stations}
    gi = g.set_index(key)
    counts = {}
    for name, df in events.items():
        df = df.assign(third=third(df))
        c = df.groupby(key + ["third"]).size().unstack(fill_value=0)
        counts[name] = c.reindex(index=gi.index, columns=[0, 1, 2], fill_value=0)
    # every turn t of a game is seat t % 2's (2 players); a turn with no claim, ticket
    # draw or station drew cards, or tried a tunnel and declined (tunnel events carry no
    # turn; their count per game is a row below), or passed (only with no card left)
    n = length.loc[gi.index.get_level_values("game")].to_numpy()
    seat = gi.index.get_level_values("seat").to_numpy()
    t = np.arange(n.max())
    mine = (t[None, :] < n[:, None]) & (t[None, :] % 2 == seat[:, None])
    part = np.minimum(2, 3 * t[None, :] // n[:, None])
    turns = np.stack([(mine & (part == k)).sum(axis=1) for k in range(3)], axis=1)
    counts["card-draw turns"] = pd.DataFrame(turns, index=gi.index, columns=[0, 1, 2]) - sum(
        counts[name] for name in events)
    rows = []
    for name in ("card-draw turns", "claims", "ticket draws", "stations"):
        for k, label in enumerate(("first third", "middle third", "last third")):
            rows.append((f"{name}, {label}", counts[name][k]))
    offered = run.tickets[~run.tickets.initial].groupby(key).size()
    kept = run.tickets[~run.tickets.initial & run.tickets.kept].groupby(key).size()
    declined = run.tunnels[run.tunnels.outcome == "declined"].groupby(key).size()
    per_seat = {
        "tickets offered after setup": offered.reindex(gi.index, fill_value=0),
        "tickets kept after setup": kept.reindex(gi.index, fill_value=0),
        "tunnels declined": declined.reindex(gi.index, fill_value=0),
        "tickets kept (all)": gi.tickets_kept, "tickets completed": gi.tickets_completed,
        "score": gi.score, "route points": gi.route_points, "ticket points": gi.ticket_points,
        "longest bonus": gi.longest_bonus, "station points": gi.station_points,
        "routes claimed": gi.routes_claimed, "trains left": gi.trains_left, "win": gi.win}
    rows += list(per_seat.items())
    a, b = pols
    table = []
    for name, series in rows:
        series = pd.Series(np.asarray(series, dtype=float), index=gi.index)
        wide = pd.DataFrame({"v": series.to_numpy(), "policy": gi.policy.to_numpy(),
                             "game": gi.index.get_level_values("game")}).pivot(
            index="game", columns="policy", values="v")
        test = stats.ttest_rel(wide[a], wide[b])
        ci = test.confidence_interval(0.95)
        table.append({"measure": name, a: wide[a].mean(), b: wide[b].mean(),
                      "difference": wide[a].mean() - wide[b].mean(), "low": ci.low,
                      "high": ci.high, "p_value": test.pvalue})
    return pd.DataFrame(table), _completion_by_policy(run, g, key, pols)


def _completion_by_policy(run, g, key, pols):
    """Each ticket's completion when kept under each of the two policies, their difference
    with a normal-approximation 95% interval, p- and Benjamini-Hochberg q-value."""
    import numpy as np
    import pandas as pd
    from scipy import stats

    a, b = pols
    t = run.tickets[run.tickets.kept].merge(g[key + ["policy"]], on=key)
    comp = t.groupby(["ticket", "policy"]).completed.agg(["sum", "count"]).unstack("policy")
    out = pd.DataFrame({"ticket": comp.index})
    for p in pols:
        out[f"kept {p}"] = comp[("count", p)].fillna(0).astype(int).to_numpy()
        out[f"completed {p}"] = (comp[("sum", p)] / comp[("count", p)]).to_numpy()
    pa, pb = out[f"completed {a}"], out[f"completed {b}"]
    se = np.sqrt(pa * (1 - pa) / out[f"kept {a}"] + pb * (1 - pb) / out[f"kept {b}"])
    z = stats.norm.ppf(0.975)
    out["difference"] = pa - pb
    out["low"], out["high"] = out.difference - z * se, out.difference + z * se
    # two-sided p of the normal approximation; q: Benjamini-Hochberg over the tickets
    p = pd.Series(2 * stats.norm.sf(np.abs(out.difference / se)), index=out.index)
    out["p_value"] = p
    out["q_value"] = np.nan
    ok = p.notna()
    out.loc[ok, "q_value"] = stats.false_discovery_control(p[ok].to_numpy())
    board = run.board
    names = {int(board.ticket_id[i]): board.ticket_name(i) for i in range(board.n_tickets)}
    out.insert(1, "name", out.ticket.map(names))
    return out.sort_values("difference", ascending=False)


def strategy(run, folder: Path) -> Section:
    """The strategy tables as a report section (the page kit writes their CSV files)."""
    strat, tickets = strategy_section(run)
    folder.mkdir(parents=True, exist_ok=True)
    sec = Section(folder, "strategy", "How the two policies play")
    sec.table("strategy", strat,
              "Per seat-game means; the difference's 95% interval and p-value are paired by "
              "game (scipy.stats.ttest_rel). Thirds are thirds of each game's turns; ticket "
              "draws count draw decisions after setup; card-draw turns are a seat's turns "
              "less its claims, ticket draws and stations (a declined tunnel, counted per game "
              "below, and a pass, possible only with no card left to draw, count there too).",
              max_rows=len(strat))
    sec.table("strategy_tickets", tickets,
              "Ticket completion when kept, under both policies: difference with a "
              "normal-approximation 95% interval and p-value, and the Benjamini-Hochberg "
              "q-value over all tickets (scipy.stats.false_discovery_control); tickets kept "
              "rarely have wide intervals.", max_rows=len(tickets))
    return sec


# balance studies: name -> (board, players, games per side)
BALANCE_GAMES = {"europe-4p-route-importance": ("europe", 4, 4000),
                 "usa-4p-ticket-fairness": ("usa", 4, 40000)}
# each balance study is made again under stronger play: this policy in every seat
STRONG_BALANCE = {"europe-4p-route-importance": "expert", "usa-4p-ticket-fairness": "expert"}


def run_balance(name: str, games: int | None, runs: Path, jobs: int, fresh: bool):
    from ttrsim.analysis import (compare_fairness, compare_importance, route_importance,
                                 ticket_fairness)
    from ttrsim.report import write_fairness_report, write_route_importance_report

    board, players, default = BALANCE_GAMES[name]
    games = games or default
    out = ROOT / "reports" / name
    strong = STRONG_BALANCE[name]
    t = time.perf_counter()
    command = (f"python scripts/make_reports.py --only {name}"
               + (f" --balance-games {games}" if games != default else "") + f" --jobs {jobs}")
    if name == "europe-4p-route-importance":
        results = []
        for policy in ("tickets", strong):
            work = runs / (name if policy == "tickets" else f"{name}-{policy}")
            if fresh and work.exists():
                shutil.rmtree(work)
            # the top 5 measured again on fresh games (the screening's top is biased upward)
            results.append(route_importance(board, [policy] * players, games=games, seed=SEED,
                                            n_jobs=jobs, out=work, progress=True, confirm=5))
        played = time.perf_counter() - t
        result = results[0]
        n_boards = int(result.table.note.eq("").sum()) + 1
        notes = [f"Europe, 4 players, every seat on the default policy (tickets), seats rotating; "
                 f"{games:,} games per board on {n_boards} boards (the intact board and each "
                 f"route removed), and the same with {strong} in every seat: "
                 f"{2 * games * n_boards:,} games, and the top 5 routes of each again on "
                 f"{games:,} fresh games, in {played:.0f} s with --jobs {jobs}"
                 + ("" if fresh else " (tasks saved by an earlier run were reused)")
                 + f". Seed {SEED}. Made by: {command}"]
        index = write_route_importance_report(
            result, out, f"Route importance: Europe, 4 players, {games:,} games per route",
            notes, stronger=compare_importance(*results))
    else:
        fairs = [ticket_fairness(board, [policy] * players, games=games, seed=SEED, n_jobs=jobs,
                                 rounds=2) for policy in ("tickets", strong)]
        played = time.perf_counter() - t
        notes = [f"USA, 4 players, every seat on the default policy (tickets), seats rotating; "
                 f"{games:,} games per round, 3 rounds (as printed and two rounds of suggested "
                 f"points, the same seeds), and the same with {strong} in every seat: "
                 f"{6 * games:,} games in {played:.0f} s with --jobs {jobs}. Seed {SEED}. "
                 f"Made by: {command}"]
        index = write_fairness_report(fairs[0], out, f"Fair ticket points: USA, 4 players, "
                                      f"{games:,} games per round", notes,
                                      stronger=compare_fairness(*fairs))
    print(f"{name}: {played:.0f} s of play, report {index.relative_to(ROOT)} "
          f"({time.perf_counter() - t - played:.0f} s)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=1_000_000)
    ap.add_argument("--jobs", type=int, default=-1)
    ap.add_argument("--runs", default=str(ROOT / "runs"), help="where the runs are written")
    ap.add_argument("--only", action="append", choices=sorted(STUDIES) + sorted(BALANCE_GAMES),
                    help="one study (repeatable)")
    ap.add_argument("--balance-games", type=int, default=None,
                    help="games per board of the balance studies (default: BALANCE_GAMES)")
    ap.add_argument("--resume", action="store_true",
                    help="reuse runs already in --runs (default: start them afresh)")
    args = ap.parse_args(argv)
    for name in args.only or list(STUDIES) + list(BALANCE_GAMES):
        if name in BALANCE_GAMES:
            run_balance(name, args.balance_games, Path(args.runs), args.jobs,
                        fresh=not args.resume)
            continue
        run_study(name, args.games, Path(args.runs), args.jobs, fresh=not args.resume)
    return 0


if __name__ == "__main__":
    from ttrsim.script import run_script

    sys.exit(run_script(main))
