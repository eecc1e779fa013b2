"""A league: every policy against every other, with a win-share matrix and ratings.

At 2 players every pair of policies plays ``games`` seat-rotated games. At 3 to 5 players
the schedule is made of seat-balanced mixtures: with at least as many policies as seats,
every set of ``players`` different policies; with fewer, every way of filling the seats
that seats each policy at least once (two policies at 4 players: 3+1, 2+2, 1+3). The
schedule is the same for every policy (it changes only by renaming the policies), and each
mixture rotates its seats (``games`` a multiple of ``players``), so each policy sits in
each seat equally often over the league. Every pairing or mixture is one ``simulate`` run
of the league's seed: all of them are dealt the same games (common random numbers), and
the same seed gives the same league whatever the workers.

Ratings: each game is broken into pairwise results, one for every two seats played by
different policies (the better rank wins, a shared rank counts half to each); a
Bradley-Terry model is fitted to them with ``choix.ilsr_pairwise_dense``. At 2 players
this is Bradley-Terry itself; at 3-5 players it is the full rank-breaking estimator of a
Plackett-Luce model over the finishing orders (consistent for Plackett-Luce: Azari
Soufiani, Chen, Parkes and Xia, NIPS 2013). Ratings are on the Elo scale (400 / ln 10 per
unit of log-strength) relative to the mean of the league; their intervals are bootstrap
percentiles over games, resampled within each pairing or mixture. docs/league.md.
"""
from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from ttrsim._validate import check_fraction, check_int, check_n_jobs
from ttrsim._version import __version__
from ttrsim.analysis.game_profile import profile
from ttrsim.batches import DEFAULT_MAX_TURNS, make_config, versions
from ttrsim.dispatch import check_backend
from ttrsim.maps import resolve_board
from ttrsim.policies import DEFAULT_POLICY, REGISTRY, expert_models, make_policy, policy_name
from ttrsim.results import finish_out, prepare_out, read_manifest
from ttrsim.runner import simulate
from ttrsim.stats import as_generator, wilson_interval

__all__ = ["League", "league", "load_league", "league_policies", "schedule", "ELO"]

#: Elo points per unit of Bradley-Terry log-strength: a gap of 400 is 10:1 odds.
ELO = 400 / math.log(10)
#: Pseudo-results added to the wins of every ordered pair of policies in the rating fit
#: (half a game each way): keeps a policy that wins every game at a finite rating.
PSEUDO = 0.5
#: Games per batch of a new pairing at most: enough batches for every worker even in a
#: small league (the tables do not depend on the batch size).
MAX_BATCH = 250

# manifest keys that define a league: a resumed or extended one must match them all (more
# games or more policies extend it; the pairings already played are kept)
_IDENTITY = ("kind", "ttrsim_version", "board", "board_checksum", "players", "seed",
             "max_turns")


def league_policies() -> list[str]:
    """The policies of a league when none are given: every built-in policy but ``search``
    (hundreds of times slower; it joins when named)."""
    return sorted(name for name in REGISTRY if name != "search")


def schedule(n_policies: int, players: int) -> list[tuple[int, ...]]:
    """The league's pairings or mixtures as tuples of policy indices, one per seat slot.

    2 players: every pair. More: every set of ``players`` different policies when there
    are enough, else every multiset of ``players`` slots holding each policy at least
    once. Either way the schedule is unchanged by renaming the policies, so each policy
    takes part equally often."""
    if n_policies >= players:
        return list(itertools.combinations(range(n_policies), players))
    return [c for c in itertools.combinations_with_replacement(range(n_policies), players)
            if len(set(c)) == n_policies]


@dataclasses.dataclass
class League:
    """The result of :func:`league`.

    ``matrix``: one row per ordered pair of policies (``policy``, ``opponent``) with
    ``games`` holding both, ``pairs`` of their seats, ``win_share`` (A finished ahead of B,
    a shared rank counting half) and its Wilson interval, ``tie_share``. ``ratings``: one
    row per policy, best first: ``rating`` (Elo scale, mean 0) with its bootstrap interval,
    ``rank``, ``seat_games``, ``wins`` and ``first_share`` (first places, shared ones
    included, with the Wilson interval) and ``mean_score``. ``worst``: each policy's
    worst opponent (the lowest win share) with its interval. ``seats``: seat-games per
    policy and seat. ``style``: the style profile per policy (None when unavailable).
    ``cells``: the pairings or mixtures with their run directories. ``runs``: the ``Run``
    of each cell. ``manifest``: what was played and how.
    """

    matrix: pd.DataFrame
    ratings: pd.DataFrame
    worst: pd.DataFrame
    seats: pd.DataFrame
    style: object
    cells: pd.DataFrame
    runs: dict
    manifest: dict
    replicates: np.ndarray = dataclasses.field(repr=False, default=None)

    @property
    def policies(self) -> list[str]:
        return list(self.manifest["policies"])

    def win_matrix(self) -> pd.DataFrame:
        """The win shares as a square table: row policy against column opponent."""
        names = self.policies
        grid = self.matrix.pivot(index="policy", columns="opponent", values="win_share")
        return grid.reindex(index=names, columns=names)

    def summary_text(self) -> str:
        """The ratings and worst opponents as ``ttrsim league`` prints them."""
        m = self.manifest
        kind = "pairing" if m["players"] == 2 else "mixture"
        head = (f"league on {m['board']}, {m['players']} players: {len(m['policies'])} policies, "
                f"{len(m['cells'])} {kind}s of {m['games']:,} games (seed {m['seed']}), "
                f"{m['wall_seconds']:.1f} s")
        r = self.ratings.merge(self.worst, on="policy")
        lines = [head, "",
                 f"{'rank':>4}  {'policy':<28} {'rating (95% interval)':>24}  "
                 f"{'first places':>12}  worst opponent (win share, 95% interval)"]
        for row in r.itertuples():
            lines.append(
                f"{row.rank:>4}  {row.policy:<28} {row.rating:>7.0f} [{row.rating_low:>6.0f}, "
                f"{row.rating_high:>6.0f}]  {row.first_share:>12.1%}  {row.opponent} "
                f"({row.win_share:.3f} [{row.win_share_low:.3f}, {row.win_share_high:.3f}])")
        lines += ["", "Ratings: Bradley-Terry" + (" " if m["players"] == 2 else
                  " over the rank-broken finishing orders (Plackett-Luce) ")
                  + "on the Elo scale, mean 0; intervals: bootstrap over games."]
        if m.get("out"):
            lines.append(f"Saved in {m['out']}; the same command resumes or extends it.")
        return "\n".join(lines)


def _cell_id(names) -> str:
    """A directory name for a pairing or mixture, from its policies' names."""
    return hashlib.sha256(json.dumps(list(names)).encode()).hexdigest()[:12]


def _check_policies(policies, board) -> tuple[list, list[str]]:
    if policies is None:
        policies = league_policies()
    if isinstance(policies, (str, bytes)) or not hasattr(policies, "__iter__"):
        raise ValueError("policies must be a list of policy specs (at least two), e.g. "
                         "['tickets', 'greedy']")
    policies = list(policies)
    if len(policies) < 2:
        raise ValueError(f"a league needs at least two policies, got {len(policies)}: give "
                         "--policy at least twice (policies=[...])")
    for spec in policies:              # unknown names and bad parameters fail before any game
        make_policy(spec, board)
    names = [policy_name(s, board) for s in policies]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"policy {dup[0]!r} is given twice; label the copies apart to play a "
                         f"mirror match, e.g. '{dup[0]}#a' and '{dup[0]}#b'")
    return policies, names


def league(board="usa", players: int = 2, policies=None, games: int = 200, seed: int = 0,
           n_jobs: int = 1, *, out=None, batch_size: int | None = None,
           n_resamples: int = 1000, confidence: float = 0.95, progress: bool = False,
           backend: str = "loky", scheduler: str | None = None,
           max_turns: int = DEFAULT_MAX_TURNS) -> League:
    """Play a league and rate its policies.

    Parameters
    ----------
    board : a built-in board name, a map file or a loaded board.
    players : 2 (every pair of policies) or 3-5 (seat-balanced mixtures; see
        :func:`schedule`).
    policies : specs (built-in names with settings, ``"file.py:func"``, labels such as
        ``"tickets#a"``), at least two, all different; default :func:`league_policies`.
    games : games per pairing or mixture, a multiple of ``players`` (each policy then sits
        in each seat equally often).
    seed : every pairing or mixture plays the games of this seed (common random numbers).
    n_jobs, backend, scheduler : as in ``simulate``; the results do not depend on them.
    out : directory; each pairing or mixture is saved as a ``simulate`` run under
        ``cells/``. The same call again resumes; more ``games`` or more ``policies``
        extend the league, playing only what is missing.
    n_resamples, confidence : the bootstrap of the ratings.
    progress : a progress bar per pairing or mixture.
    """
    start = time.perf_counter()
    check_n_jobs(n_jobs, "n_jobs (--jobs)")
    check_backend(backend, scheduler)
    board = resolve_board(board)
    players = board.check_players(check_int("players", players, 2, 5))
    policies, names = _check_policies(policies, board)
    games = check_int("games", games, 1)
    if games % players:
        raise ValueError(f"games must be a multiple of the player count ({players}) so that "
                         f"each policy sits in each seat equally often, got {games}; give "
                         f"--games {games + players - games % players}")
    seed = check_int("seed", seed, 0)
    n_resamples = check_int("n_resamples", n_resamples, 1)
    check_fraction("confidence", confidence)
    if batch_size is not None:
        batch_size = check_int("batch_size", batch_size, 1)
    cells = schedule(len(policies), players)
    path = Path(out) if out is not None else None
    manifest = {"kind": "league", "ttrsim_version": __version__, "board": board.name,
                "board_checksum": board.checksum, "players": players, "policies": names,
                "games": games, "seed": seed, "max_turns": max_turns,
                "cells": [{"policies": [names[i] for i in c],
                           "dir": f"cells/{_cell_id([names[i] for i in c])}"} for c in cells],
                "rating": "Bradley-Terry over rank-broken finishing orders "
                          f"(choix.ilsr_pairwise_dense, {PSEUDO} pseudo-wins per ordered pair), "
                          "Elo scale, mean 0",
                "n_resamples": n_resamples, "confidence": confidence,
                **({"expert_models": m} if (m := expert_models(names)) else {}),
                "versions": dict(versions(), choix=_choix_version())}
    if path is not None:
        prepare_out(path, manifest, _IDENTITY, what="league")
    runs = {}
    for k, c in enumerate(cells):
        specs = [policies[i] for i in c]
        cell = manifest["cells"][k]
        cell_out = path / cell["dir"] if path is not None else None
        if progress:
            print(f"{'pairing' if players == 2 else 'mixture'} {k + 1}/{len(cells)}: "
                  f"{' vs '.join(cell['policies'])}", file=sys.stderr, flush=True)
        size = batch_size
        if size is None and (cell_out is None or not (cell_out / "manifest.json").exists()):
            # a new cell: the runner's size for these policies, capped so that every worker
            # gets batches (a saved cell keeps its own size)
            measured = make_config(board, specs, games, seed, None, True, False, max_turns)
            size = min(measured.batch_size, max(-(-games // 8), min(games, MAX_BATCH)))
        runs[cell["dir"]] = simulate(board, specs, games=games, seed=seed, n_jobs=n_jobs,
                                     batch_size=size, rotate=True, out=cell_out,
                                     backend=backend, scheduler=scheduler, progress=progress,
                                     max_turns=max_turns)
    if path is not None:
        manifest["out"] = str(path)
    result = _tables(manifest, runs, seed)
    manifest["wall_seconds"] = round(time.perf_counter() - start, 3)
    if path is not None:
        finish_out(path, dict(manifest))
    return result


def load_league(path) -> League:
    """Read a league written with ``out=`` (``--out``) back; its tables are computed again
    from the saved games (the same numbers)."""
    from ttrsim.results import load_run

    path = Path(path)
    manifest = read_manifest(path)
    if manifest.get("kind") != "league":
        raise ValueError(f"{path} holds no league (its manifest is not a league's); point to "
                         "the directory ttrsim league --out wrote")
    if not manifest.get("complete"):
        raise ValueError(f"{path} holds an unfinished league; run the same league command "
                         "again to finish it")
    runs = {c["dir"]: load_run(path / c["dir"]) for c in manifest["cells"]}
    return _tables(manifest, runs, manifest["seed"])


def _choix_version() -> str:
    from importlib.metadata import version

    return version("choix")


# ---------------------------------------------------------------------------
# tables


def _cell_results(games: pd.DataFrame, index: dict, n_players: int):
    """One cell's games as arrays: policy index per game and seat ``(G, n)``, rank
    ``(G, n)``, score ``(G, n)`` (games in order)."""
    g = games[["game", "seat", "policy", "rank", "score"]].sort_values(["game", "seat"])
    G = len(g) // n_players
    pol = np.array([index[str(p)] for p in g["policy"]]).reshape(G, n_players)
    rank = g["rank"].to_numpy().reshape(G, n_players)
    score = g["score"].to_numpy().reshape(G, n_players)
    return pol, rank, score


def _pairwise(pol, rank, n_policies: int) -> tuple[np.ndarray, np.ndarray]:
    """Per game, the pairwise results among the cell's own policies: ``(cols, W)`` with
    ``W[g, i]`` the times a seat of policy ``cols[i] // P`` finished ahead of a seat of
    policy ``cols[i] % P`` (a shared rank counting half), ``P = n_policies``. Kept to the
    cell's policies so that memory grows with the cell, not with the league."""
    G, n = pol.shape
    u = np.unique(pol)
    local = np.searchsorted(u, pol)
    k = len(u)
    W = np.zeros((G, k, k))
    rows = np.arange(G)
    for s in range(n):
        for t in range(n):
            if s == t:
                continue
            a, b = local[:, s], local[:, t]
            other = a != b
            val = (rank[:, s] < rank[:, t]) + 0.5 * (rank[:, s] == rank[:, t])
            np.add.at(W, (rows[other], a[other], b[other]), val[other])
    cols = (u[:, None] * n_policies + u[None, :]).ravel()
    return cols, W.reshape(G, k * k)


def fit_ratings(wins: np.ndarray) -> np.ndarray:
    """Bradley-Terry ratings (Elo scale, mean 0) from a matrix of pairwise results
    (``wins[a, b]``: times a beat b), fitted by ``choix.ilsr_pairwise_dense``."""
    import choix

    wins = np.asarray(wins, dtype=float)
    wins = wins + PSEUDO * (1 - np.eye(len(wins)))
    params = choix.ilsr_pairwise_dense(wins, max_iter=1000)
    params = params - params.mean()
    return params * ELO


def _tables(manifest: dict, runs: dict, seed: int) -> League:
    names = manifest["policies"]
    P, n = len(names), manifest["players"]
    index = {name: i for i, name in enumerate(names)}
    conf = manifest["confidence"]
    cell_W, totals = [], np.zeros((P, P))
    both = np.zeros((P, P))              # games holding both policies
    pairs = np.zeros((P, P))             # seat pairs of the two policies
    ties = np.zeros((P, P))
    seat_games = np.zeros((P, n), dtype=np.int64)
    firsts = np.zeros(P)
    score_sum = np.zeros(P)
    cell_rows = []
    for cell in manifest["cells"]:
        run = runs[cell["dir"]]
        pol, rank, score = _cell_results(run.games, index, n)
        cols, W = _pairwise(pol, rank, P)
        cell_W.append((cols, W))
        totals.ravel()[cols] += W.sum(0)
        present = np.zeros((len(pol), P), dtype=bool)
        present[np.arange(len(pol))[:, None], pol] = True
        for a, b in itertools.permutations(np.unique(pol), 2):
            both[a, b] += len(pol)
            pairs[a, b] += len(pol) * (pol[0] == a).sum() * (pol[0] == b).sum()
            ties[a, b] += sum(((pol[:, s] == a) & (pol[:, t] == b) & (rank[:, s] == rank[:, t])).sum()
                              for s in range(n) for t in range(n) if s != t)
        for s in range(n):
            np.add.at(seat_games[:, s], pol[:, s], 1)
        np.add.at(firsts, pol.ravel(), (rank == 1).ravel())
        np.add.at(score_sum, pol.ravel(), score.ravel())
        cell_rows.append({"cell": cell["dir"], "policies": " + ".join(cell["policies"]),
                          "games": len(pol)})
    # the matrix: win share of A against B over their seat pairs; the Wilson interval
    # counts games (exact at 2 players; with a policy in several seats of a game its pairs
    # are not independent, and the games are the conservative count)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = totals / pairs
    lo, hi = wilson_interval(share * both, both, conf)
    mrows = []
    for a, b in itertools.permutations(range(P), 2):
        mrows.append({"policy": names[a], "opponent": names[b], "games": int(both[a, b]),
                      "pairs": int(pairs[a, b]), "win_share": share[a, b],
                      "win_share_low": lo[a, b], "win_share_high": hi[a, b],
                      "tie_share": ties[a, b] / pairs[a, b] if pairs[a, b] else np.nan})
    matrix = pd.DataFrame(mrows)
    # ratings with a bootstrap over games within each cell
    rating = fit_ratings(totals)
    reps = _bootstrap(cell_W, P, manifest["n_resamples"], seed)
    alpha = 1 - conf
    rlo, rhi = np.quantile(reps, [alpha / 2, 1 - alpha / 2], axis=0)
    sg = seat_games.sum(1)
    flo, fhi = wilson_interval(firsts, sg, conf)
    ratings = pd.DataFrame({"policy": names, "rating": rating, "rating_low": rlo,
                            "rating_high": rhi, "seat_games": sg, "wins": firsts.astype(int),
                            "first_share": firsts / sg, "first_share_low": flo,
                            "first_share_high": fhi, "mean_score": score_sum / sg})
    ratings = ratings.sort_values("rating", ascending=False, kind="stable").reset_index(drop=True)
    ratings.insert(0, "rank", np.arange(1, P + 1))
    worst = (matrix.sort_values(["policy", "win_share"], kind="stable")
             .groupby("policy", sort=False).head(1)
             .set_index("policy").reindex(ratings.policy).reset_index()
             [["policy", "opponent", "games", "win_share", "win_share_low", "win_share_high"]])
    seats = pd.DataFrame(seat_games, columns=[f"seat {s}" for s in range(n)])
    seats.insert(0, "policy", names)
    return League(matrix=matrix, ratings=ratings, worst=worst, seats=seats,
                  style=style_profile(runs, names), cells=pd.DataFrame(cell_rows), runs=runs,
                  manifest=manifest, replicates=reps)


def _bootstrap(cell_W: list, n_policies: int, n_resamples: int, seed: int) -> np.ndarray:
    """Ratings of ``n_resamples`` leagues whose games are drawn with replacement within
    each pairing or mixture: ``(n_resamples, P)``."""
    rng = as_generator(seed)
    P = n_policies
    totals = np.zeros((n_resamples, P * P))
    for cols, W in cell_W:
        G = len(W)
        # how often each game is drawn in each resample (bincount: numpy's multinomial
        # draws one binomial per game and is a hundred times slower here)
        draws = rng.integers(0, G, size=(n_resamples, G)) + G * np.arange(n_resamples)[:, None]
        counts = np.bincount(draws.ravel(), minlength=n_resamples * G).reshape(n_resamples, G)
        totals[:, cols] += counts.astype(float) @ W
    return np.array([fit_ratings(t.reshape(P, P)) for t in totals])


def style_profile(runs: dict, names: list[str]):
    """The style profile of each policy over all its league games: the game profile
    (``ttrsim.analysis.profile``) of the league's runs pooled, a column per policy (in
    league order: the first pairing or mixture holding each) and the winners."""
    return profile(list(runs.values()))
