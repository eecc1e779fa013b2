"""A tiny policy-gradient loop on ttrsim.env.VectorEnv, then the learned player in simulate.

A linear softmax policy over the legal actions (numpy only) learns by REINFORCE to win
New York 2-player games against the built-in `random` policy; the learned weights then
play as an ordinary ttrsim policy (`ttrsim.env.policy`) in `ttrsim.simulate`. Runs in
about a minute on one core:

    python examples/rl/train_pg.py [--iterations 60] [--envs 64]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import ttrsim
from ttrsim.env import VectorEnv, policy


def features(obs: np.ndarray) -> np.ndarray:
    """Observation vectors (int16) to bounded features, with a bias column."""
    x = np.tanh(obs.astype(np.float32) / 4.0)
    return np.concatenate([x, np.ones((len(x), 1), np.float32)], axis=1)


def masked_softmax(logits: np.ndarray, mask: np.ndarray) -> np.ndarray:
    z = np.where(mask, logits, -np.inf)
    z -= z.max(axis=1, keepdims=True)
    p = np.exp(z)
    return p / p.sum(axis=1, keepdims=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--iterations", type=int, default=60)
    ap.add_argument("--envs", type=int, default=64)
    ap.add_argument("--steps", type=int, default=100, help="agent steps per env per iteration")
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--games", type=int, default=400, help="evaluation games")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    board, players = "newyork", 2
    venv = VectorEnv(board, players, args.envs, opponents="random", seed=args.seed, seat=None)
    rng = np.random.default_rng(args.seed)
    n_feat = venv.obs_size + 1
    w = np.zeros((n_feat, venv.n_actions), np.float32)
    obs, masks = venv.reset()
    game_of = np.zeros(args.envs, np.int64)      # each env's game counter
    env_ids = np.arange(args.envs)
    # rows of steps whose game had not ended: features, probabilities, actions, env, game
    rows = [np.zeros((0, n_feat), np.float32), np.zeros((0, venv.n_actions), np.float32),
            np.zeros(0, np.int32), np.zeros(0, np.int64), np.zeros(0, np.int64)]
    t0 = time.perf_counter()
    for it in range(args.iterations):
        steps = []
        ended_env, ended_game, ended_reward = [], [], []
        for _ in range(args.steps):
            x = features(obs)
            p = masked_softmax(x @ w, masks)
            cum = p.cumsum(axis=1)
            u = rng.random((args.envs, 1)) * cum[:, -1:]
            actions = np.minimum((cum < u).sum(axis=1), venv.n_actions - 1).astype(np.int32)
            steps.append((x, p, actions, env_ids, game_of.copy()))
            obs, masks, rewards, done, trunc = venv.step(actions)
            for i in np.flatnonzero(done | trunc):
                ended_env.append(i)
                ended_game.append(game_of[i])
                ended_reward.append(float(rewards[i]))
                game_of[i] += 1
        rows = [np.concatenate([r] + [s[k] for s in steps]) for k, r in enumerate(rows)]
        # the return of each row's game, where it ended (keys: game * envs + env)
        key = rows[4] * args.envs + rows[3]
        ended = np.array(ended_game, np.int64) * args.envs + np.array(ended_env, np.int64)
        pos = np.searchsorted(np.sort(ended), key)
        order = np.argsort(ended)
        known = np.isin(key, ended)
        ret = np.zeros(len(key), np.float32)
        ret[known] = np.array(ended_reward, np.float32)[order][pos[known]]
        # REINFORCE on the rows of ended games: grad log p(a) = (onehot(a) - p) x
        if known.any():
            X, P, A = rows[0][known], rows[1][known], rows[2][known]
            G = -P
            G[np.arange(len(A)), A] += 1.0
            w += args.lr * (X.T @ (G * ret[known, None])) / len(X)
        rows = [r[~known] for r in rows]
        if it % 10 == 0 or it == args.iterations - 1:
            win = np.mean(np.array(ended_reward) > 0) if ended_reward else float("nan")
            print(f"iteration {it:3d}: {len(ended_reward):4d} games, win rate {win:.2f} "
                  f"({time.perf_counter() - t0:.0f} s)")

    eval_rng = np.random.default_rng(args.seed + 1)

    def learned(obs, mask):
        """An action drawn from the learned policy (the same rule as in training)."""
        p = masked_softmax(features(obs[None]) @ w, mask[None])[0]
        return int(eval_rng.choice(len(p), p=p))

    run = ttrsim.simulate(board, [policy(learned, "learned"), "random"], games=args.games,
                          seed=args.seed + 1)
    g = run.games
    rate = g.loc[g["policy"] == "learned", "win"].mean()
    print(f"learned policy against random in ttrsim.simulate ({args.games} games, seats "
          f"rotated): wins {rate:.2f}")


if __name__ == "__main__":
    main()
