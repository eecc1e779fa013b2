"""A run cut into batches: its configuration, its manifest, and one batch played.

Game ``g`` of a run is dealt from a seed that depends only on the run's seed and ``g``
(numpy ``SeedSequence`` gives the run's key), so any batch can be played anywhere, in any
order, and any game replayed alone. Every way of running games (``simulate``,
``replay``, the paired studies) builds a :class:`RunConfig` with :func:`make_config` and
plays it with :func:`play`.
"""
from __future__ import annotations

import platform
import time
import dataclasses
from dataclasses import dataclass, field

import numpy as np

# the owner of the compiled batch loop: the rest of ttrsim takes its names from here
from ttrsim._batch import (DEFAULT_MAX_TURNS, SCORE_COLS, STAT_COLS, TURN_BIN_WIDTH, game_seeds,
                           play_batch)
from ttrsim._validate import check_int
from ttrsim._version import __version__
from ttrsim.game import compile_board
from ttrsim.maps import resolve_board
from ttrsim.policies import (PolicySpec, check_policy, expert_models, make_policy, search_budgets,
                             seat_specs)
from ttrsim.seats import seat_value

# game_seeds and play_batch (the core's batch loop: a call plays many games and returns
# their arrays, columns SCORE_COLS) are public for the scripts that drive the core
__all__ = ["RunConfig", "make_config", "config_from_manifest", "play", "default_batch_size",
           "versions", "DEFAULT_MAX_TURNS", "IDENTITY", "SCORE_COLS", "game_seeds", "play_batch"]

# Manifest keys that define a run: a resumed run must match them all.
IDENTITY = ("ttrsim_version", "board", "board_checksum", "players", "policies", "seed", "games",
            "batch_size", "rotate", "summary", "max_turns")


def default_batch_size(games: int) -> int:
    """Games per batch when none is given: a hundredth of the run, within 1,000..10,000.
    Large enough that a batch's dispatch (a few milliseconds) is lost in its play, small
    enough for a smooth progress bar, resume points and work for every worker."""
    return min(10_000, max(1_000, games // 100))


#: Seconds of play a batch aims at when its size is chosen from the policies' cost, and
#: the longest a default-sized batch may take before a smaller one is chosen.
TARGET_BATCH_SECONDS = 2.0
MAX_BATCH_SECONDS = 5.0
#: Games per batch by default when a policy is a Python object (not measured).
OBJECT_BATCH_SIZE = 10


def seconds_per_game(cfg: "RunConfig", budget: float = 0.05) -> float:
    """The policies' measured cost: play the run's first games in this process (1, 2, 4,
    ... until ``budget`` seconds have gone, or a default batch has been played) and return
    the mean seconds per game. The games are thrown away."""
    played, spent, k = 0, 0.0, 1
    while spent < budget and played < cfg.batch_size:
        k = min(k, cfg.batch_size - played)
        start = time.perf_counter()
        play(cfg, played, played + k)
        spent += time.perf_counter() - start
        played += k
        k *= 2
    return spent / played


def _nice_floor(x: float) -> int:
    """The largest of 1, 2, 5, 10, 20, 50, ... not above ``x`` (at least 1): a batch size
    that does not move with every small change of the measured cost."""
    if x < 1:
        return 1
    power = 10 ** int(np.floor(np.log10(x)))
    return max(m * power for m in (1, 2, 5) if m * power <= x)


def cost_batch_size(per_game: float, default: int) -> int:
    """Games per batch for policies costing ``per_game`` seconds a game: ``default`` when a
    batch of it plays within :data:`MAX_BATCH_SECONDS`, else about
    :data:`TARGET_BATCH_SECONDS` of play (rounded down to 1, 2 or 5 times a power of ten),
    so that progress moves every few seconds and Ctrl-C loses little, whatever the policy."""
    if per_game * default <= MAX_BATCH_SECONDS:
        return default
    return min(default, _nice_floor(TARGET_BATCH_SECONDS / per_game))


def versions() -> dict:
    """Versions of Python and the libraries a result depends on, for manifests."""
    import joblib
    import pandas
    import pyarrow

    return {"python": platform.python_version(), "numpy": np.__version__,
            "pandas": pandas.__version__, "joblib": joblib.__version__,
            "pyarrow": pyarrow.__version__}


@dataclass(frozen=True)
class RunConfig:
    """Everything that defines a run's games: board, one policy spec per seat slot (a
    value of ``ttrsim.seats.seat_value``: a parsed ``PolicySpec``, a Python policy's
    reference or a Python policy object), games, seed, batch size, seat rotation, summary
    mode and the turn limit; ``names`` are the policies' names as tables show them."""

    board: object
    policies: tuple
    games: int
    seed: int
    batch_size: int
    rotate: bool
    summary: bool
    max_turns: int
    names: tuple = field(default=())

    @property
    def n_players(self) -> int:
        return len(self.policies)

    @property
    def n_batches(self) -> int:
        return -(-self.games // self.batch_size)

    def batch_range(self, b: int) -> tuple[int, int]:
        """First game and one past the last game of batch ``b``."""
        first = b * self.batch_size
        return first, min(self.games, first + self.batch_size)

    def batch_games(self, batches) -> int:
        """Games in the given batches."""
        return sum(self.batch_range(b)[1] - self.batch_range(b)[0] for b in batches)

    @property
    def key(self) -> int:
        return int(np.random.SeedSequence(self.seed).generate_state(1, dtype=np.uint64)[0])

    def manifest(self) -> dict:
        return {
            "ttrsim_version": __version__,
            "board": self.board.name,
            "board_checksum": self.board.checksum,
            "board_path": getattr(self.board, "path", None),
            "players": self.n_players,
            "policies": list(self.names),
            "seed": self.seed,
            "games": self.games,
            "batch_size": self.batch_size,
            "batches": self.n_batches,
            "rotate": self.rotate,
            "summary": self.summary,
            "max_turns": self.max_turns,
            **({"variant": self.board.variant} if getattr(self.board, "variant", None) else {}),
            # from the parsed values (the names would be parsed again)
            **({"expert_models": models} if (models := expert_models(self.policies)) else {}),
            **({"search_budgets": b} if (b := search_budgets(self.policies)) else {}),
            "seed_derivation": "numpy SeedSequence(seed) -> run key; game g: SplitMix64 output g",
            "versions": versions(),
        }


def make_config(board, players, games, seed, batch_size=None, rotate=True, summary=False,
                max_turns=DEFAULT_MAX_TURNS) -> RunConfig:
    """Check the arguments of a run and build its :class:`RunConfig`.

    ``players``: a player count (every seat plays the default policy) or a list of policy
    specs, one per seat. Unknown policies and bad parameters fail here, before any game.
    Without ``batch_size``, the size is :func:`default_batch_size` unless the policies'
    measured cost (:func:`seconds_per_game`) makes such a batch take longer than a few
    seconds: then :func:`cost_batch_size`; with a policy given as a Python object (never
    played to measure it) at most :data:`OBJECT_BATCH_SIZE`. The tables do not depend on
    the batch size.
    """
    board = resolve_board(board)
    # each spec parsed once here, at the door: the workers build from these values
    specs = tuple(seat_value(s) for s in seat_specs(board, players))
    # fail early on unknown names / bad parameters; the names the results give them
    names = tuple(check_policy(s, board) for s in specs)
    games = check_int("games", games, 1)
    seed = check_int("seed", seed, 0)
    measure = batch_size is None
    batch_size = default_batch_size(games) if batch_size is None else batch_size
    batch_size = check_int("batch_size", batch_size, 1)
    max_turns = check_int("max_turns", max_turns, 1)
    cfg = RunConfig(board, specs, games, seed, min(batch_size, games), bool(rotate),
                    bool(summary), max_turns, names)
    if measure and cfg.batch_size > 1:
        # slow policies (the search, Python policies) get smaller batches. A policy given
        # as a Python object is not played to measure it: it would see games that are not
        # the run's (its start_game hook, any state it keeps); such runs take
        # OBJECT_BATCH_SIZE, small enough for a slow Python policy.
        if all(isinstance(s, (str, PolicySpec)) for s in specs):
            size = cost_batch_size(seconds_per_game(cfg), cfg.batch_size)
        else:
            size = min(cfg.batch_size, OBJECT_BATCH_SIZE)
        cfg = dataclasses.replace(cfg, batch_size=size)
    return cfg


def config_from_manifest(manifest: dict, board, **changes) -> RunConfig:
    """The configuration a saved manifest describes (``changes`` override fields)."""
    specs = tuple(manifest["policies"])
    fields = dict(board=board, policies=specs, games=manifest["games"], seed=manifest["seed"],
                  batch_size=manifest["batch_size"], rotate=manifest["rotate"],
                  summary=manifest["summary"], max_turns=manifest["max_turns"], names=specs)
    fields.update(changes)
    return RunConfig(**fields)


def play(cfg: RunConfig, first: int, stop: int) -> dict:
    """Play games ``first .. stop - 1`` of the run in one call into the core; returns the
    core's arrays (per-event, or counts in summary mode)."""
    policies = [make_policy(spec, cfg.board) for spec in cfg.policies]
    seeds = game_seeds(cfg.key, stop - first, first)
    return play_batch(compile_board(cfg.board), cfg.n_players, policies, seeds, first, cfg.rotate,
                      cfg.summary, cfg.max_turns)
