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
unit of log-strength) relative to the mean of the league.

Intervals: the profile likelihood of that fit, pseudo-wins included (its log-likelihood
falls by at most chi2(1) / 2 over the interval), with that threshold scaled up by the
bootstrap's variance over the likelihood's where the games vary more than the model says
(seat pairs of one game are not independent). The bootstrap draws games with replacement
within each pairing or mixture and fits each resample with its pseudo-wins. A percentile
bootstrap alone fails where it matters: a pairing won by one side in every game gives
every resample the same games (an interval of zero width), and the pseudo-wins pull such a
rating in by an amount that shrinks as games are added, so it moves out of its bootstrap
interval with more games. The profile likelihood reaches as far out as the pseudo-wins
allow; where the games alone bound a rating on one side only (a policy that never finished
ahead of another, directly or through others), ``ratings.set_by_prior`` says which end the
prior sets. docs/league.md.
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
from scipy.optimize import brentq
from scipy.special import expit, log_expit
from scipy.stats import chi2

from ttrsim._validate import (check_fraction, check_int, check_out_dir,
                              check_resamples)
from ttrsim._version import __version__
from ttrsim.analysis.game_profile import profile
from ttrsim.batches import DEFAULT_MAX_TURNS, make_config, versions
from ttrsim.dispatch import check_workers
from ttrsim.maps import resolve_board
from ttrsim.policies import DEFAULT_POLICY, REGISTRY, check_policy, display_name, expert_models
from ttrsim.seats import seat_value
from ttrsim.results import finish_out, model_digests, prepare_out, read_manifest
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
    a shared rank counting half) and its Wilson interval, ``tie_share`` and ``one_sided``
    (one of the two never finished ahead of the other, nor level with it). ``ratings``: one
    row per policy, best first: ``rating`` (Elo scale, mean 0) with its interval (profile
    likelihood, see the module), ``set_by_prior`` (``"upper end"``, ``"lower end"``, ``"both ends"`` or
    ``""``: the end of the interval that only the prior bounds, the games giving no bound
    there), ``rank``, ``seat_games``, ``wins`` and ``first_share`` (first places, shared
    ones included, with the Wilson interval) and ``mean_score``. ``worst``: each policy's
    worst opponent (the lowest win share) with its interval. ``seats``: seat-games per
    policy and seat. ``style``: the style profile per policy (None when unavailable).
    ``cells``: the pairings or mixtures with their run directories, their ``games`` and
    ``played_now`` (games this call played; the rest were read back from ``out``).
    ``runs``: the ``Run`` of each cell. ``manifest``: what was played and how.
    ``replicates``: the bootstrap's ratings, one row per resample.
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

    def games_label(self) -> str:
        """Games per pairing or mixture: ``"200"``, or ``"200 to 400"`` when a directory
        holds cells of different lengths."""
        g = self.cells["games"] if len(self.cells) else pd.Series([self.manifest["games"]])
        low, high = int(g.min()), int(g.max())
        return f"{low:,}" if low == high else f"{low:,} to {high:,}"

    def summary_text(self) -> str:
        """The ratings and worst opponents as ``ttrsim league`` prints them."""
        m = self.manifest
        kind = "pairing" if m["players"] == 2 else "mixture"
        n = len(m["cells"])
        head = (f"league on {m['board']}, {m['players']} players: {len(m['policies'])} policies, "
                f"{n} {kind}{'s' if n != 1 else ''} of {self.games_label()} games "
                f"(seed {m['seed']}), {m['wall_seconds']:.1f} s")
        r = self.ratings.merge(self.worst, on="policy")
        lines = [head, "",
                 f"{'rank':>4}  {'policy':<28} {'rating (95% interval)':>24}   "
                 f"{'first places':>12}  worst opponent (win share, 95% interval)"]
        for row in r.itertuples():
            name = display_name(row.policy)
            lines.append(
                f"{row.rank:>4}  {name:<28} {row.rating:>7.0f} [{row.rating_low:>6.0f}, "
                f"{row.rating_high:>6.0f}]{'*' if row.set_by_prior else ' '}  "
                f"{row.first_share:>12.1%}  {display_name(row.opponent)} "
                f"({row.win_share:.3f} [{row.win_share_low:.3f}, {row.win_share_high:.3f}])")
        lines += ["", "Ratings: Bradley-Terry" + (" " if m["players"] == 2 else
                  " over the rank-broken finishing orders (Plackett-Luce) ")
                  + "on the Elo scale, mean 0; intervals: profile likelihood, widened where "
                  "the bootstrap over games varies more."]
        if note := self.prior_note():
            lines.append(note)
        if note := self.played_note():
            lines.append(note)
        return "\n".join(lines)

    def one_sided(self) -> dict:
        """The one-sided pairings: ``{policy: [opponents it never finished ahead of]}``."""
        m = self.matrix
        lost = m[m.one_sided & (m.win_share == 0)]
        return {p: list(g.opponent) for p, g in lost.groupby("policy", sort=False)}

    def prior_note(self) -> str:
        """One paragraph naming the one-sided pairings and the rating ends only the prior
        bounds (marked ``*`` by :meth:`summary_text`); "" when the games bound every end."""
        r = self.ratings[self.ratings.set_by_prior != ""]
        if r.empty:
            return ""
        verb = "lost every game to" if self.manifest["players"] == 2 else \
            "finished behind in every game"
        d = display_name
        sided = "; ".join(f"{d(p)} {verb} {', '.join(map(d, o))}" if self.manifest["players"] == 2
                          else f"{d(p)} {verb} against {', '.join(map(d, o))}"
                          for p, o in self.one_sided().items())
        ends = "; ".join(f"{end}: {', '.join(map(d, g.policy))}"
                         for end, g in r.groupby("set_by_prior", sort=False))
        m = self.matrix
        carried = set(r.policy) - set(m.policy[m.one_sided])
        return (f"* One-sided: {sided}. The games bound these ratings on one side only "
                f"({ends}); that end of the interval is set by the prior (the "
                f"{PSEUDO} pseudo-wins per ordered pair that keep the ratings finite), and "
                "more games may carry the rating past it"
                + (" (ratings are relative to the league mean, so an unbounded rating "
                   f"carries {', '.join(sorted(map(d, carried)))} with it)." if carried else "."))

    def played_note(self) -> str:
        """What this call played and what it read back from ``out`` (a resumed or
        extended league), and whether the directory holds more than this league."""
        m, c = self.manifest, self.cells
        if not m.get("out"):
            return ""
        kind = "pairing" if m["players"] == 2 else "mixture"

        def count(cells, games):
            return f"{len(cells)} {kind}{'s' if len(cells) != 1 else ''} ({int(games):,} games)"

        now = c[c.played_now > 0]
        read = c[c.games > c.played_now]
        words = [f"Saved in {m['out']}; the same command resumes or extends it."]
        if m.get("loaded"):
            words.append(f"Read back: {count(c, c.games.sum())}.")
        elif len(read):
            played = f"Played now: {count(now, now.played_now.sum())}" if len(now) else \
                "Nothing played now"
            words.append(f"{played}; read back from {m['out']}: "
                         f"{count(read, (read.games - read.played_now).sum())}.")
        held = m.get("held_policies") or []
        more = [p for p in held if p not in m["policies"]]
        if more:
            words.append(f"{m['out']} also holds {kind}s of {', '.join(more)}, not in this "
                         f"league; ttrsim.load_league('{m['out']}') reads all "
                         f"{len(held)} policies.")
        return " ".join(words)


def _cell_id(names) -> str:
    """A directory name for a pairing or mixture, from its policies' names."""
    return hashlib.sha256(json.dumps(list(names)).encode()).hexdigest()[:12]


def _relabel(name: str, names: list[str]) -> list[str]:
    """Two labelled names for the copies of ``name`` that no other entry goes by:
    ``tickets`` -> ``tickets#a``, ``tickets#b``; ``tickets#a`` -> ``tickets#a``,
    ``tickets#b`` (a new label replaces the old one: a spec takes one label)."""
    body = name.partition("#")[0]
    taken = set(names) - {name}
    free = (f"{body}#{a}{b}" for b in ("",) + tuple(range(2, 100)) for a in "abcdefgh")
    return list(itertools.islice((x for x in free if x not in taken), 2))


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
    # each spec parsed once here (every cell's runs and batches build from these values);
    # unknown names and bad parameters fail before any game (a search spec unbuilt)
    values = [seat_value(s) for s in policies]
    names = [check_policy(v, board) for v in values]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        if all(isinstance(s, str) for s, n in zip(policies, names) if n == dup[0]):
            a, b = _relabel(dup[0], names)
            fix = f"label the copies apart to play a mirror match, e.g. '{a}' and '{b}'"
        else:
            fix = "give each policy object its own name"
        raise ValueError(f"policy {dup[0]!r} is given twice; {fix}")
    return values, names


def league(board="usa", players: int = 2, policies=None, games: int = 200, seed: int = 0,
           n_jobs: int = 1, *, out=None, batch_size: int | None = None,
           n_resamples: int = 1000, confidence: float = 0.95, progress: bool = False,
           backend: str = "loky", scheduler: str | None = None,
           max_turns: int = DEFAULT_MAX_TURNS, people=None) -> League:
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
    progress : a progress bar per pairing or mixture; people : runs of people's games, rated in.
    """
    start = time.perf_counter()
    check_workers(n_jobs, backend, scheduler)
    board = resolve_board(board)
    players = board.check_players(check_int("players", players, 2, 5))
    policies, names = _check_policies(policies, board)
    games = check_int("games", games, 1)
    if games % players:
        raise ValueError(f"games must be a multiple of the player count ({players}) so that "
                         f"each policy sits in each seat equally often, got {games}; give "
                         f"--games {games + players - games % players}")
    seed = check_int("seed", seed, 0)
    max_turns = check_int("max_turns", max_turns, 1)
    check_fraction("confidence", confidence)
    n_resamples = check_resamples(n_resamples, confidence)
    batch_size = None if batch_size is None else check_int("batch_size", batch_size, 1)
    path = check_out_dir(out)
    cells = schedule(len(policies), players)
    manifest = _manifest(board, players, names, games, seed, max_turns, cells, n_resamples,
                         confidence, policies)
    held = None
    if path is not None:
        held = _held(path, manifest, [[policies[i] for i in c] for c in cells])
        _held_order(manifest, held)
        # the directory's manifest keeps every policy and cell it holds (a league of fewer
        # policies reads some of them); each cell's run checks its own models
        prepare_out(path, _directory_manifest(manifest, held), _IDENTITY, what="league",
                    models=False)
    runs, played = {}, {}
    spec_of = dict(zip(names, policies))
    for k, cell in enumerate(manifest["cells"]):
        specs = [spec_of[n] for n in cell["policies"]]
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
        run = simulate(board, specs, games=games, seed=seed, n_jobs=n_jobs, batch_size=size,
                       rotate=True, out=cell_out, backend=backend, scheduler=scheduler,
                       progress=progress, max_turns=max_turns)
        runs[cell["dir"]] = run
        played[cell["dir"]] = run.manifest.get("games_last_session", games)
    if path is not None:
        on_disk = _directory_manifest(manifest, held, runs)
        manifest["out"] = str(path)
        manifest["held_policies"] = on_disk["policies"]
    manifest = _with_people(manifest, runs, people, board) if people else manifest
    result = _tables(manifest, runs, seed, played)
    manifest["wall_seconds"] = round(time.perf_counter() - start, 3)
    if path is not None:
        finish_out(path, dict(on_disk, out=str(path), wall_seconds=manifest["wall_seconds"]))
    return result


def saved_league(out) -> dict | None:
    """The settings of the league saved in ``out``: its board, player count, every policy
    it holds, games per cell (the most any cell holds), seed and whether it is complete, so
    that ``ttrsim league --out DIR`` alone reads a finished league back and resumes an
    unfinished one; None when ``out`` holds no league."""
    path = Path(out)
    if not (path / "manifest.json").is_file():
        return None
    m = read_manifest(path)
    if m.get("kind") != "league":
        return None
    return {"board": m["board"], "players": m["players"], "policies": list(m["policies"]),
            "games": m["games"], "seed": m["seed"], "complete": bool(m.get("complete"))}


def _manifest(board, players, names, games, seed, max_turns, cells, n_resamples,
              confidence, specs) -> dict:
    """What a league plays and how it rates (its cells: the schedule by policy name);
    ``specs``: the policies' parsed values, whose expert models it names."""
    return {"kind": "league", "ttrsim_version": __version__, "board": board.name,
            "board_checksum": board.checksum, "players": players, "policies": names,
            "games": games, "seed": seed, "max_turns": max_turns,
            "cells": [{"policies": [names[i] for i in c],
                       "dir": f"cells/{_cell_id([names[i] for i in c])}"} for c in cells],
            "rating": "Bradley-Terry over rank-broken finishing orders "
                      f"(choix.ilsr_pairwise_dense, {PSEUDO} pseudo-wins per ordered pair), "
                      "Elo scale, mean 0; intervals: profile likelihood, threshold scaled by "
                      "the bootstrap over games where it varies more",
            "n_resamples": n_resamples, "confidence": confidence,
            **({"expert_models": m} if (m := expert_models(specs)) else {}),
            "versions": dict(versions(), choix=_choix_version())}


def _held(path: Path, manifest: dict, specs: list) -> dict | None:
    """The manifest of the league ``path`` holds when it is this league (the same identity),
    else None (``prepare_out`` then refuses it or starts afresh). Refuses, before anything
    is written, a saved cell whose ``expert`` models are not the ones its policies play now."""
    if not (path / "manifest.json").exists():
        return None
    old = read_manifest(path)
    if old.get("kind") != "league" or any(old.get(k) != manifest.get(k) for k in _IDENTITY):
        return None
    for cell, cell_specs in zip(manifest["cells"], specs):
        run_file = path / cell["dir"] / "manifest.json"
        if not run_file.exists():
            continue
        there = model_digests(read_manifest(run_file.parent).get("expert_models"))
        here = model_digests(expert_models(cell_specs))
        if there != here:
            raise ValueError(f"{path} holds the {' vs '.join(cell['policies'])} games played "
                             f"with other expert models (SHA-256 prefixes {there or 'none'} "
                             f"there, {here or 'none'} here); choose another --out directory "
                             "or delete it")
    return old


def _held_order(manifest: dict, held: dict) -> None:
    """Each cell of ``manifest`` that the directory already holds with the same policies in
    another seat order takes the held cell's order and directory: the league of
    [b, a] reads the games of [a, b] instead of playing the pairing again (``held``: the
    directory's manifest, or None)."""
    by_set = {}
    for c in (held or {}).get("cells", []):
        by_set.setdefault(tuple(sorted(c["policies"])), c)
    for k, c in enumerate(manifest["cells"]):
        old = by_set.get(tuple(sorted(c["policies"])))
        if old is not None and old["dir"] != c["dir"]:
            manifest["cells"][k] = {"policies": list(old["policies"]), "dir": old["dir"]}


def _directory_manifest(manifest: dict, held: dict | None, runs: dict | None = None) -> dict:
    """What the directory holds after this call: this league's manifest with every policy
    and cell held before added, each cell with its games (from ``runs`` once played)."""
    held = held or {}
    default = held.get("games", manifest["games"])
    cells = {c["dir"]: {**c, "games": c.get("games", default)} for c in held.get("cells", [])}
    for c in manifest["cells"]:
        games = max(cells.get(c["dir"], {}).get("games", 0), manifest["games"])
        cells[c["dir"]] = {**c, "games": games}
    for d, run in (runs or {}).items():
        cells[d]["games"] = int(run.manifest["games"])
    models = {**(held.get("expert_models") or {}), **(manifest.get("expert_models") or {})}
    return {**manifest, "policies": list(dict.fromkeys(held.get("policies", []) + manifest["policies"])),
            "games": max(c["games"] for c in cells.values()), "cells": list(cells.values()),
            **({"expert_models": models} if models else {})}


def _with_people(manifest: dict, runs: dict, people, board) -> dict:
    """The league's manifest with each run of people's games (``people``: directories
    ``ttrsim play --out`` wrote) as one more cell (``runs`` gains it), its person (the
    run's name) rated among the policies from those games; refused unless its board,
    player count and opponents are the league's. Their deals are their own, not the
    league's seed; few games give a wide interval."""
    from ttrsim.results import load_run

    manifest = dict(manifest, policies=list(manifest["policies"]), cells=list(manifest["cells"]))
    own = list(manifest["policies"])
    for k, d in enumerate([people] if isinstance(people, (str, Path)) else people):
        run = load_run(d)
        m = run.manifest
        if not m.get("people"):
            raise ValueError(f"--people {d}: holds no people's games (ttrsim play --out DIR "
                             "writes them)")
        if run.board.name != board.name or m["players"] != manifest["players"]:
            raise ValueError(f"--people {d}: {run.board.name}, {m['players']} players, the "
                             f"league is {board.name}, {manifest['players']} players; rate "
                             "people's games in a league of their board and player count")
        persons = {m["policies"][q] for q in m["people"]}
        missing = [p for q, p in enumerate(m["policies"]) if q not in m["people"]
                   and p not in manifest["policies"]]
        if missing:
            raise ValueError(f"--people {d}: played against {', '.join(sorted(set(missing)))}, "
                             "not in the league; add --policy for each")
        clash = sorted(persons & set(own))
        if clash:
            raise ValueError(f"--people {d}: the person's name {clash[0]!r} is a policy of the "
                             "league; give the person another --name")
        manifest["policies"] += [p for p in sorted(persons) if p not in manifest["policies"]]
        key = f"people/{k}"
        manifest["cells"].append({"dir": key, "policies": list(m["policies"]),
                                  "games": int(m["games"])})
        runs[key] = run
    return manifest


def load_league(path) -> League:
    """Read back the league a directory written with ``out=`` (``--out``) holds: every
    policy and pairing or mixture played there, also by earlier calls with other policies
    (a cell played with more games by one of them keeps them all: ``League.cells`` says how
    many). Its tables are computed again from the saved games (the same numbers)."""
    from ttrsim.results import load_run

    path = Path(path)
    manifest = read_manifest(path)
    if manifest.get("kind") != "league":
        raise ValueError(f"{path} holds no league (its manifest is not a league's); point to "
                         "the directory ttrsim league --out wrote")
    if not manifest.get("complete"):
        raise ValueError(f"{path} holds an unfinished league; run the same league command "
                         "again to finish it")
    manifest = dict(manifest, out=str(path), loaded=True, held_policies=manifest["policies"])
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


def _tables(manifest: dict, runs: dict, seed: int, played: dict | None = None) -> League:
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
                          "games": len(pol), "played_now": int((played or {}).get(cell["dir"], 0))})
    matrix = _matrix(names, totals, both, pairs, ties, conf)
    ratings, reps = _ratings(names, totals, cell_W, manifest["n_resamples"], seed, conf)
    sg = seat_games.sum(1)
    flo, fhi = wilson_interval(firsts, sg, conf)
    ratings = ratings.assign(seat_games=sg, wins=firsts.astype(int), first_share=firsts / sg,
                             first_share_low=flo, first_share_high=fhi, mean_score=score_sum / sg)
    ratings = ratings.sort_values("rating", ascending=False, kind="stable").reset_index(drop=True)
    ratings.insert(0, "rank", np.arange(1, P + 1))
    worst = (matrix.dropna(subset=["win_share"]).sort_values(["policy", "win_share"], kind="stable")
             .groupby("policy", sort=False).head(1)
             .set_index("policy").reindex(ratings.policy).reset_index()
             [["policy", "opponent", "games", "win_share", "win_share_low", "win_share_high"]])
    seats = pd.DataFrame(seat_games, columns=[f"seat {s}" for s in range(n)])
    seats.insert(0, "policy", names)
    return League(matrix=matrix, ratings=ratings, worst=worst, seats=seats,
                  style=style_profile(runs, names), cells=pd.DataFrame(cell_rows), runs=runs,
                  manifest=manifest, replicates=reps)


def _matrix(names, totals, both, pairs, ties, conf) -> pd.DataFrame:
    """The win-share matrix: win share of A against B over their seat pairs; the Wilson
    interval counts games (exact at 2 players; with a policy in several seats of a game its
    pairs are not independent, and the games are the conservative count)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        share = totals / pairs
    lo, hi = wilson_interval(share * both, both, conf)
    rows = []
    for a, b in itertools.permutations(range(len(names)), 2):
        rows.append({"policy": names[a], "opponent": names[b], "games": int(both[a, b]),
                     "pairs": int(pairs[a, b]), "win_share": share[a, b],
                     "win_share_low": lo[a, b], "win_share_high": hi[a, b],
                     "tie_share": ties[a, b] / pairs[a, b] if pairs[a, b] else np.nan,
                     "one_sided": bool(pairs[a, b] and min(totals[a, b], totals[b, a]) == 0)})
    return pd.DataFrame(rows)


def _ratings(names, totals, cell_W, n_resamples, seed, conf):
    """The ratings with their intervals (module docstring) and which ends only the prior
    bounds; the bootstrap's ratings beside them."""
    reps = _bootstrap(cell_W, len(names), n_resamples, seed)
    low, high = rating_intervals(totals, reps, conf)
    upper, lower = prior_ends(totals)
    ends = np.select([upper & lower, upper, lower], ["both ends", "upper end", "lower end"], "")
    return pd.DataFrame({"policy": names, "rating": fit_ratings(totals), "rating_low": low,
                         "rating_high": high, "set_by_prior": ends}), reps


def prior_ends(wins: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per policy, whether the games leave its rating unbounded above (``upper``) or below
    (``lower``), so that only the pseudo-wins bound that end. With ``a -> b`` when a finished
    ahead of b at least once: the games bound policy i's rating (relative to the mean)
    from above only if every policy reaches i along such steps, from below only if i
    reaches every policy; else the ratings of a group can move apart from the rest without
    the likelihood of the games falling."""
    reach = (np.asarray(wins) > 0) | np.eye(len(wins), dtype=bool)
    for _ in range(len(wins)):
        reach = reach | ((reach.astype(int) @ reach.astype(int)) > 0)
    return ~reach.all(0), ~reach.all(1)


def rating_intervals(wins: np.ndarray, replicates: np.ndarray,
                     confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Per policy the interval of its rating (Elo scale, relative to the mean) from the
    profile likelihood of the fit of :func:`fit_ratings` (pseudo-wins included): the
    ratings at which the log-likelihood, maximised over the other ratings, has fallen by
    ``k x chi2(1).ppf(confidence) / 2``. ``k`` is 1, or the bootstrap's variance of the
    rating over the likelihood's (from its curvature) where that is larger: the games vary
    more than the model's independent pairwise results say (``replicates``: the bootstrap's
    ratings, one row per resample)."""
    W = np.asarray(wins, dtype=float) + PSEUDO * (1 - np.eye(len(wins)))
    P = len(W)
    theta = fit_ratings(wins) / ELO
    top = _maximise(theta, W, np.ones((1, P)))     # choix's fit, polished to the maximum
    _, hess = _gradient_hessian(theta, W)
    cov = np.linalg.pinv(-hess)
    alpha = 1 - confidence
    q_lo, q_hi = np.quantile(np.asarray(replicates) / ELO, [alpha / 2, 1 - alpha / 2], axis=0)
    z = chi2.ppf(confidence, 1) ** 0.5
    low, high = np.empty(P), np.empty(P)
    for i in range(P):
        c = np.full(P, -1 / P)
        c[i] += 1
        naive = c @ cov @ c
        k = max(1.0, ((q_hi[i] - q_lo[i]) / (2 * z)) ** 2 / naive) if naive > 0 else 1.0
        drop = k * z * z / 2
        A = np.vstack([c, np.ones(P)])
        psi = c @ theta

        def excess(v):        # how far below the allowed fall the profile is at rating v
            start = theta + (v - psi) * c * P / (P - 1)      # a point with that rating
            return top - _maximise(start, W, A) - drop

        ends = []
        for sign in (-1.0, 1.0):
            step = max(2 * naive ** 0.5, 0.05)
            while excess(psi + sign * step) < 0:             # the pseudo-wins bound it
                step *= 2
            ends.append(brentq(lambda x: excess(psi + sign * x), 0, step, xtol=1e-5))
        low[i], high[i] = psi - ends[0], psi + ends[1]
    return low * ELO, high * ELO


def _loglik(theta, W) -> float:
    """Bradley-Terry log-likelihood of the pairwise results ``W`` (``W[a, b]``: a over b)."""
    return float((W * log_expit(theta[:, None] - theta[None, :])).sum())


def _gradient_hessian(theta, W):
    p = expit(theta[:, None] - theta[None, :])
    grad = (W * (1 - p)).sum(1) - (W.T * p).sum(1)
    s = (W + W.T) * p * (1 - p)
    return grad, s - np.diag(s.sum(1))


def _maximise(theta, W, A) -> float:
    """The largest log-likelihood over ratings with ``A @ theta`` held at its value for
    ``theta`` (Newton steps within that plane; the log-likelihood is concave)."""
    value = _loglik(theta, W)
    zeros = np.zeros((len(A), len(A)))
    for _ in range(100):
        grad, hess = _gradient_hessian(theta, W)
        kkt = np.block([[hess, -A.T], [A, zeros]])
        step = np.linalg.solve(kkt, np.concatenate([-grad, np.zeros(len(A))]))[:len(theta)]
        t = 1.0
        while (new := _loglik(theta + t * step, W)) < value and t > 1e-10:
            t /= 2
        theta, gain, value = theta + t * step, new - value, max(new, value)
        if grad @ step < 1e-12 or gain <= 0:
            break
    return value


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
