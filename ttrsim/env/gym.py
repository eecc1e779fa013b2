"""Gymnasium single-agent environment: one seat learns, the others are ttrsim policies
(needs Gymnasium, of the ``rl`` extra; not PettingZoo)."""
from __future__ import annotations

import gymnasium
import numpy as np
from gymnasium import spaces

from ttrsim.batches import DEFAULT_MAX_TURNS
from ttrsim.env.shared import observation_space, render_text
from ttrsim.env.vector import VectorEnv

__all__ = ["TTRGymEnv"]


class TTRGymEnv(gymnasium.Env):
    """One seat of a game as a Gymnasium environment; the other seats are played by
    ``opponents`` (any ttrsim policy spec, or one per other seat) inside the compiled core.

    Observations are dicts ``{"observation": int16 vector, "action_mask": int8 vector}``
    (docs/env.md); actions are flat indices; the reward comes at the end of the game
    (``reward="win"``, ``"score"`` or ``"margin"``). ``seat`` is the learning seat (``None``:
    drawn per game). ``reset(seed=s)`` restarts the seed stream: the same seed gives the
    same games with the same actions. An illegal action raises ValueError.
    """

    metadata = {"render_modes": ["human", "ansi"]}

    def __init__(self, board="europe", players: int = 4, *, opponents="tickets", seat: int | None = 0,
                 reward: str = "win", seed: int = 0, max_turns: int = DEFAULT_MAX_TURNS,
                 render_mode: str | None = None):
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"unknown render_mode {render_mode!r}; expected human or ansi")
        self.venv = VectorEnv(board, players, 1, opponents=opponents, seed=seed, seat=seat,
                              reward=reward, max_turns=max_turns, autoreset=False)
        self.encoding = self.venv.encoding
        self.observation_space = observation_space(self.encoding)
        self.action_space = spaces.Discrete(self.encoding.n_actions)
        self.render_mode = render_mode

    def _obs(self):
        return {"observation": self.venv.obs[0].copy(),
                "action_mask": self.venv.masks[0].astype(np.int8)}

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.venv.reset(seed=seed)
        # the seed as numpy's uint64: a Python int above 2**63 would not fit the int64
        # array Gymnasium's vector envs gather infos in
        return self._obs(), {"seat": int(self.venv.seats()[0]),
                             "game_seed": np.uint64(self.venv.game_seeds()[0])}

    def step(self, action):
        _, _, rew, term, trunc = self.venv.step(np.array([action], dtype=np.int32))
        info = {}
        if term[0]:
            info["scores"] = self.venv.final_scores[0].copy()
        if self.render_mode == "human":
            self.render()
        return self._obs(), float(rew[0]), bool(term[0]), bool(trunc[0]), info

    def action_masks(self) -> np.ndarray:
        """The legal mask (bool), for libraries that ask for it by this name."""
        return self.venv.masks[0].copy()

    def render(self):
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode (use 'ansi' or 'human')")
            return None
        text = render_text(self.venv.game(0))
        if self.render_mode == "human":
            print(text)
            return None
        return text
