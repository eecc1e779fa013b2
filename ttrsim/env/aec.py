"""PettingZoo AEC environment of one game (needs the ``rl`` extra: pettingzoo, gymnasium)."""
from __future__ import annotations

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from ttrsim.batches import DEFAULT_MAX_TURNS
from ttrsim._validate import check_int
from ttrsim.env.encoding import encoding
from ttrsim.env.shared import observation_space, render_text
from ttrsim.game import Game
from ttrsim.maps import resolve_board

__all__ = ["TTREnv", "observation_space", "render_text", "REWARDS"]

REWARDS = ("win", "score", "margin")


def final_rewards(scores: list[dict], kind: str) -> list[float]:
    """Reward of each seat at the end of a game: ``win`` (+1 sole winner, 0 first place
    shared, -1 otherwise), ``score`` (final score) or ``margin`` (score minus the best
    other score)."""
    totals = [s["total"] for s in scores]
    firsts = sum(s["rank"] == 1 for s in scores)
    out = []
    for q, s in enumerate(scores):
        if kind == "score":
            out.append(float(s["total"]))
        elif kind == "margin":
            out.append(float(s["total"] - max(t for k, t in enumerate(totals) if k != q)))
        elif s["rank"] == 1:
            out.append(1.0 if firsts == 1 else 0.0)
        else:
            out.append(-1.0)
    return out


class TTREnv(AECEnv):
    """Ticket to Ride as a PettingZoo AEC environment.

    Agents ``player_0`` .. ``player_{n-1}`` are the seats; the agent to act is the core's
    seat to act (the initial ticket choices come first, seat 0 first). Observations are
    dicts ``{"observation": int16 vector, "action_mask": int8 vector}`` of the fixed
    encoding (``ttrsim.env.encoding(board, players)``, docs/env.md), holding only what the
    observing seat may know; actions are flat indices. Rewards come at the end of the game
    (``reward="win"``, ``"score"`` or ``"margin"``); a game reaching ``max_turns`` turns is
    truncated. ``reset(seed=s)`` deals exactly ``Game(board, players, seed=s)``; without a
    seed the next game's seed comes from the constructor's ``seed``. An illegal action
    raises ``IllegalActionError``. ``render()`` returns (``render_mode="ansi"``) or prints
    (``"human"``) a text view of the position.
    """

    metadata = {"render_modes": ["human", "ansi"], "name": "ttrsim_v0", "is_parallelizable": False}

    def __init__(self, board="europe", players: int = 4, *, reward: str = "win", seed: int = 0,
                 max_turns: int = DEFAULT_MAX_TURNS, render_mode: str | None = None):
        super().__init__()
        if reward not in REWARDS:
            raise ValueError(f"unknown reward {reward!r}; expected one of {', '.join(REWARDS)}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"unknown render_mode {render_mode!r}; expected human or ansi")
        check_int("max_turns", max_turns, 1)
        self.board = resolve_board(board)
        self.board.check_players(players)
        self.enc = encoding(self.board, players)
        self.n_players = int(players)
        self.reward_kind = reward
        self.max_turns = int(max_turns)
        self.render_mode = render_mode
        self.possible_agents = [f"player_{q}" for q in range(self.n_players)]
        self.agent_name_mapping = {a: q for q, a in enumerate(self.possible_agents)}
        space = observation_space(self.enc)
        self.observation_spaces = {a: space for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(self.enc.n_actions) for a in self.possible_agents}
        self._seeds = np.random.SeedSequence(int(seed))
        self._n_games = 0
        self.game: Game | None = None

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    def reset(self, seed=None, options=None):
        if seed is None:
            seed = int(np.random.SeedSequence(self._seeds.entropy,
                                              spawn_key=(self._n_games,)).generate_state(1, np.uint64)[0])
        self._n_games += 1
        self.game_seed = int(seed)
        self.game = Game(self.board, self.n_players, seed=self.game_seed)
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self.agent_selection = self.possible_agents[self.game.current_player]

    def observe(self, agent):
        obs, mask = self.enc.observe(self.game, self.agent_name_mapping[agent])
        return {"observation": obs, "action_mask": mask.astype(np.int8)}

    def step(self, action):
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        code = self.enc.check_legal(action, self.game)
        self.game.apply(code)
        self._cumulative_rewards[agent] = 0.0
        self.rewards = {a: 0.0 for a in self.agents}
        if self.game.is_over():
            for a, r in zip(self.possible_agents, final_rewards(self.game.scores(), self.reward_kind)):
                self.rewards[a] = r
                self.terminations[a] = True
                self.infos[a] = {"score": self.game.scores()[self.agent_name_mapping[a]]["total"]}
        elif self.game.turn >= self.max_turns:
            for a in self.agents:
                self.truncations[a] = True
        if not (self.game.is_over() or self.game.turn >= self.max_turns):
            self.agent_selection = self.possible_agents[self.game.current_player]
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def render(self):
        if self.render_mode is None:
            import gymnasium

            gymnasium.logger.warn("render() called without a render_mode (use 'ansi' or 'human')")
            return None
        text = render_text(self.game)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self):
        pass
