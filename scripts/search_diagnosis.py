"""Why the search claims early and `expert` does not: the search's own early turns, side
by side with what `expert` would play in the same positions (docs/expert-history.md,
"The search's early game").

Plays usa-mega games at 4 players (by default), one seat `search` (rotated over the
games) and the others `expert`. At each turn of the search seat in the first --rounds
rounds it records the search's move, the move `expert` would make in that position (a
shadow `expert` of the same seat, started with it, asked at every decision of the seat),
`expert`'s candidates with their features and tree scores, the proposers' moves
(`tickets`, `greedy`), and the search's own playout statistics (each candidate's mean
value and win share; the default candidate is its rollout policy's, `expert:model=v4`).
Everything goes through the public API (``ttrsim.Game``, ``decide``, the policies'
``candidates``/``last_decision``) and uses only what the seat may see: the search
samples its worlds itself.

    nice -n 5 python scripts/search_diagnosis.py --games 24 --json /tmp/diag.json

Prints the summary tables of docs/expert-history.md; --json keeps every decision.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

import ttrsim
from ttrsim.actions import Action
from ttrsim.policies import decide, make_policy
from ttrsim.seats import Seat, Table, play_game, seat_seeds
from ttrsim.training import FEATURES

SHOWN = ("route_len", "route_points", "tickets_joined", "points_joined", "touches_network",
         "on_plan", "hand", "hand_most", "longest_claim", "trains_me", "open_tickets",
         "left_claims", "plan_short", "deck_near")


def _kind(code: int, board) -> str:
    k = Action.decode(int(code), board).kind
    return {"claim": "claim", "draw_blind": "card", "draw_faceup": "card",
            "draw_tickets": "tickets", "build_station": "station"}.get(k, k)


def play(board: str, players: int, games: int, seed: int, rounds: int, search: str,
         expert: str) -> list[dict]:
    """Decision rows of the search seat's turns in the first `rounds` rounds."""
    rows = []
    for g in range(games):
        me = g % players
        table = Table.deal(board, [search if q == me else expert for q in range(players)],
                           seed + g)
        game, cb = table.game, table.game.board
        seed_me = seat_seeds(seed + g, players)[me]
        shadow = Seat(expert, game, me, seed_me)    # what `expert` would play in the seat
        probe = make_policy(expert, cb)             # its candidates (advances its own state)
        probe.start(game, me, seed_me)
        props = {n: make_policy(n, cb) for n in ("tickets", "greedy")}

        def record(t):
            if t.seat != me:
                return None
            e_code = shadow.choose(game)           # the shadow follows every move of the seat
            if game.phase != "turn" or game.turn >= rounds * players:
                return None
            codes, X = probe.candidates(game)
            scores = probe.model.turns.predict(X)
            code = t.choose()
            srows, chosen = t.seats[me].policy.last_decision()
            vals = {int(c): (u / n if n else None, w / n if n else None, n)
                    for c, n, u, w, _m, _a in srows}
            f = {name: X[:, FEATURES.index(name)].tolist() for name in SHOWN}
            rows.append({
                "game": g, "seat": me, "turn": game.turn, "round": game.turn // players,
                "search": int(code), "search_kind": _kind(code, cb),
                "expert": int(e_code), "expert_kind": _kind(e_code, cb),
                "search_default": int(srows[0][0]) if srows else None,
                "departed": bool(chosen not in (0, -1)),
                "proposers": {n: int(decide(p, game, seed=seed_me)) for n, p in props.items()},
                "expert_cands": [int(c) for c in codes],
                "expert_scores": scores.tolist(),
                "expert_feats": f,
                "search_vals": {str(c): v for c, v in vals.items()},
            })
            return code

        play_game(table, record, stop=lambda t: t.game.turn >= rounds * players)
    return rows


def _feature_table(claims: list[dict]) -> list[str]:
    """The features of the search's claim beside those of expert's pick, where both are
    among expert's candidates."""
    out = []
    diff = defaultdict(list)
    for r in claims:
        if r["search"] in r["expert_cands"] and r["expert"] in r["expert_cands"]:
            i, j = r["expert_cands"].index(r["search"]), r["expert_cands"].index(r["expert"])
            for name in SHOWN:
                diff[name].append((r["expert_feats"][name][i], r["expert_feats"][name][j]))
    if diff:
        out.append("")
        out.append("| feature | search's claim | expert's pick |")
        out.append("| --- | ---: | ---: |")
        for name in SHOWN:
            a = np.array(diff[name])
            out.append(f"| {name} | {a[:, 0].mean():.2f} | {a[:, 1].mean():.2f} |")
    return out


def summary(rows: list[dict], players: int) -> str:
    out = []
    by = defaultdict(list)
    for r in rows:
        by[min(r["round"] // 3, 3)].append(r)
    out.append("| rounds | decisions | search: claim / card / tickets | expert: claim / card / "
               "tickets | same move | search departs from its default |")
    out.append("| --- | ---: | --- | --- | ---: | ---: |")
    names = {0: "0-2", 1: "3-5", 2: "6-8", 3: "9+"}
    for b in sorted(by):
        rs = by[b]
        def share(key, kind):
            return np.mean([r[key] == kind for r in rs])
        out.append(f"| {names[b]} | {len(rs)} | "
                   f"{share('search_kind', 'claim'):.2f} / {share('search_kind', 'card'):.2f} / "
                   f"{share('search_kind', 'tickets'):.2f} | "
                   f"{share('expert_kind', 'claim'):.2f} / {share('expert_kind', 'card'):.2f} / "
                   f"{share('expert_kind', 'tickets'):.2f} | "
                   f"{np.mean([r['search'] == r['expert'] for r in rs]):.2f} | "
                   f"{np.mean([r['departed'] for r in rs]):.2f} |")
    claims = [r for r in rows if r["search_kind"] == "claim"]
    if claims:
        inc = [r["search"] in r["expert_cands"] for r in claims]
        ranks, gaps = [], []
        for r in claims:
            if r["search"] in r["expert_cands"]:
                i = r["expert_cands"].index(r["search"])
                sc = np.asarray(r["expert_scores"])
                ranks.append(int((sc > sc[i]).sum()) + 1)
                gaps.append(float(sc.max() - sc[i]))
        src = defaultdict(int)
        for r in claims:
            if r["search"] == r["search_default"]:
                src["default (v4)"] += 1
            for n, c in r["proposers"].items():
                if c == r["search"]:
                    src[n] += 1
        vgap = []
        for r in claims:
            sv = r["search_vals"]
            a, b = sv.get(str(r["search"])), sv.get(str(r["search_default"]))
            if a and b and a[0] is not None and b[0] is not None and r["search"] != r["search_default"]:
                vgap.append(a[0] - b[0])
        out.append("")
        out.append(f"search claims in these rounds: {len(claims)} of {len(rows)} decisions; "
                   f"among expert's candidates: {np.mean(inc):.2f}; when there, expert's "
                   f"rank of it: median {np.median(ranks) if ranks else float('nan'):.0f} "
                   f"(first in {np.mean([x == 1 for x in ranks]) if ranks else 0:.2f}), "
                   f"score gap to expert's best {np.mean(gaps) if gaps else float('nan'):.3f}; "
                   f"the claim is also the move of: " +
                   ", ".join(f"{k} {v / len(claims):.2f}" for k, v in sorted(src.items())) +
                   (f"; its playout value over the default's, when it departs: mean "
                    f"{np.mean(vgap):+.3f} ({len(vgap)} decisions)" if vgap else ""))
        out.extend(_feature_table(claims))
    first = defaultdict(lambda: None)
    for r in rows:
        if r["search_kind"] == "claim" and first[(r["game"], "s")] is None:
            first[(r["game"], "s")] = r["turn"]
        if r["expert_kind"] == "claim" and first[(r["game"], "e")] is None:
            first[(r["game"], "e")] = r["turn"]
    games = sorted({r["game"] for r in rows})
    s_first = [first[(g, "s")] for g in games]
    e_first = [first[(g, "e")] for g in games]
    out.append("")
    out.append(f"games: {len(games)}; the search seat claims in these rounds in "
               f"{np.mean([x is not None for x in s_first]):.2f} of them (median first claim "
               f"turn {np.median([x for x in s_first if x is not None]) if any(x is not None for x in s_first) else float('nan'):.0f}); "
               f"the shadow expert would have claimed in {np.mean([x is not None for x in e_first]):.2f}")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--board", default="usa-mega")
    ap.add_argument("--players", type=int, default=4)
    ap.add_argument("--games", type=int, default=24)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--seed", type=int, default=67)
    ap.add_argument("--search", default="search")
    ap.add_argument("--expert", default="expert")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args(argv)
    rows = play(a.board, a.players, a.games, a.seed, a.rounds, a.search, a.expert)
    if a.json:
        a.json.write_text(json.dumps(rows))
    print(summary(rows, a.players))
    return 0


if __name__ == "__main__":
    from ttrsim.script import run_script

    sys.exit(run_script(main))
