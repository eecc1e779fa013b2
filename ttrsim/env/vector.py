"""A compiled vector environment: many games stepped per call, opponents in the core."""
from __future__ import annotations

import numpy as np

from ttrsim.batches import DEFAULT_MAX_TURNS
from ttrsim._env import VectorEnvCore
from ttrsim._validate import check_int
from ttrsim.env.encoding import encoding
from ttrsim.game import compile_board
from ttrsim.maps import resolve_board
from ttrsim.policies import make_policy, policy_name

__all__ = ["VectorEnv"]


class VectorEnv:
    """``n_envs`` games of ``board`` with ``players`` seats: one agent seat per game, the
    other seats played by ``opponents`` inside the compiled loop (without the GIL).

    Parameters
    ----------
    board, players : the board (name, path or Board) and the player count.
    n_envs : games stepped together.
    opponents : one policy spec for every opponent (default ``"tickets"``) or a list of
        ``players - 1`` specs: entry j plays the seat j + 1 places after the agent. Any
        ttrsim policy spec (``"tickets:risk=0.2"``, a ``Policy``, a Python policy); each env
        gets its own instances.
    seed : root seed; env i draws its games from ``SeedSequence(seed, spawn_key=(i,))``,
        so a game depends on the seed and the env index only (not on ``n_envs``).
    seat : the agent's seat (default 0), or ``None`` for a seat drawn from each game's seed.
    reward : ``"win"`` (+1 sole winner, 0 first place shared, -1 otherwise), ``"score"``
        (the agent's final score) or ``"margin"`` (its score minus the best other score),
        given at the step that ends a game; 0 at every other step.
    max_turns : a game reaching this many turns is truncated (reward 0).
    autoreset : a finished game is replaced at once by the env's next game (default); the
        arrays returned by that step then show the new game. With ``False`` a finished
        env keeps its final position until ``reset()``; stepping it raises ValueError.

    ``reset()`` and ``step(actions)`` return ``(obs, masks)`` and
    ``(obs, masks, rewards, terminations, truncations)``: ``obs`` int16
    (n_envs, obs_size), ``masks`` bool (n_envs, n_actions), the others (n_envs,). The
    arrays are the env's own buffers, overwritten by the next call (copy to keep them).
    ``final_scores`` (n_envs, players; the agent first, then the seats after it) holds the
    final scores of the games ended at the last step. An action that is not legal in its
    env raises ValueError before any env is stepped.
    """

    def __init__(self, board="europe", players: int = 4, n_envs: int = 1, *, opponents="tickets",
                 seed: int = 0, seat: int | None = 0, reward: str = "win",
                 max_turns: int = DEFAULT_MAX_TURNS, autoreset: bool = True):
        self.board = resolve_board(board)
        self.board.check_players(players)
        self.n_players = int(players)
        self.n_envs = check_int("n_envs", n_envs, 1)
        check_int("max_turns", max_turns, 1)
        if reward not in ("win", "score", "margin"):
            raise ValueError(f"unknown reward {reward!r}; expected win, score or margin")
        if seat is not None and not 0 <= seat < self.n_players:
            raise ValueError(f"seat {seat} outside 0..{self.n_players - 1} (or None for a random seat)")
        self.encoding = encoding(self.board, self.n_players)
        if isinstance(opponents, (list, tuple)):
            if len(opponents) != self.n_players - 1:
                raise ValueError(f"opponents needs {self.n_players - 1} specs (one per other "
                                 f"seat) or a single spec, got {len(opponents)}")
            specs = list(opponents)
        else:
            specs = [opponents] * (self.n_players - 1)
        self.opponents = [policy_name(s) for s in specs]
        policies = [make_policy(s, self.board) for _ in range(self.n_envs) for s in specs]
        self._core = VectorEnvCore(compile_board(self.board), self.n_players, self.n_envs,
                                   policies, -1 if seat is None else int(seat), reward,
                                   int(max_turns), bool(autoreset))
        self.seat = seat
        self.reward = reward
        self.n_actions = self.encoding.n_actions
        self.obs_size = self.encoding.obs_size
        self._seed(seed)
        self._started = False

    def _seed(self, seed) -> None:
        seed = check_int("seed", seed, 0)
        state = np.array([np.random.SeedSequence(int(seed), spawn_key=(i,)).generate_state(2, np.uint64)
                          for i in range(self.n_envs)], dtype=np.uint64).reshape(self.n_envs, 2)
        self._core.seed(np.ascontiguousarray(state[:, 0]), np.ascontiguousarray(state[:, 1]))
        self.seed_value = int(seed)

    def reset(self, seed: int | None = None):
        """Deal a new game in every env (from ``seed`` if given, else the envs' next
        games) and play the opponents up to the agent; returns ``(obs, masks)``."""
        if seed is not None:
            self._seed(seed)
        self._core.reset()
        self._started = True
        return self._core.obs, self._core.masks

    def step(self, actions):
        """Play one action index per env; returns ``(obs, masks, rewards, terminations,
        truncations)``."""
        if not self._started:
            raise RuntimeError("call reset() before step()")
        if not isinstance(actions, np.ndarray):
            actions = np.asarray(actions)
        if actions.dtype.kind not in "iu" or actions.ndim != 1:
            raise TypeError(f"actions must be a 1-d integer array of action indices, got "
                            f"dtype {actions.dtype} and shape {actions.shape}")
        self._core.step(actions)
        c = self._core
        return c.obs, c.masks, c.rewards, c.terminations, c.truncations

    def sample_actions(self) -> np.ndarray:
        """One uniformly random legal action index per env (int32, compiled; the array is
        reused by the next call). An env whose game is over and not reset (``autoreset=
        False``) has no legal action: its entry is -1, which ``step`` refuses until
        ``reset()``."""
        if not self._started:
            raise RuntimeError("call reset() before sample_actions()")
        return self._core.sample_actions()

    @property
    def obs(self) -> np.ndarray:
        return self._core.obs

    @property
    def masks(self) -> np.ndarray:
        return self._core.masks

    @property
    def final_scores(self) -> np.ndarray:
        return self._core.final_scores

    def game_seeds(self) -> np.ndarray:
        """Seed of each env's current game: ``Game(board, players, seed=s)`` deals it."""
        return self._core.game_seeds()

    def seats(self) -> np.ndarray:
        """The agent's seat in each env's current game."""
        return self._core.seats()

    def game(self, i: int):
        """A ``ttrsim.Game`` copy of env i's current position (for inspection)."""
        from ttrsim.game import GameCore
        from ttrsim.game import Game

        core = GameCore(compile_board(self.board), self.n_players, 0, False)
        core.load_state_bytes(self._core.state_bytes(i))
        return Game(self.board, _core=core)

    def __repr__(self) -> str:
        return (f"<VectorEnv {self.board.name} {self.n_players}p x {self.n_envs}, "
                f"opponents {self.opponents}>")
