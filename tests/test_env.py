"""Learning environments (ttrsim.env): encoding, PettingZoo AEC, Gymnasium, VectorEnv."""
import subprocess
import sys

import numpy as np
import pytest

import ttrsim
from ttrsim import Game, IllegalActionError, PolicyError
from ttrsim.env import VectorEnv, encoding, policy
from ttrsim._env import policy_seeds, start_policy
from ttrsim._policies import decide
from ttrsim.policies import make_policy

CONFIGS = [(b, n) for b, top in (("usa", 5), ("europe", 5), ("newyork", 4)) for n in range(2, top + 1)]


def random_game_positions(board, n, seed, steps=400):
    """Positions of a game played by uniformly random legal actions."""
    g = Game(board, n, seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        if g.is_over():
            break
        yield g
        codes = g.legal_action_codes()
        g.apply(int(codes[rng.integers(len(codes))]))


# --- the encoding ----------------------------------------------------------------------

@pytest.mark.parametrize("board,n", [("usa", 3), ("europe", 4), ("newyork", 2), ("europe", 2)])
def test_mask_is_exactly_the_legal_actions_and_indices_round_trip(board, n):
    enc = encoding(board, n)
    seen_kinds = set()
    for game_seed in range(3):
        for g in random_game_positions(board, n, game_seed, steps=700):
            obs, mask = enc.observe(g, g.current_player)
            codes = g.legal_action_codes()
            idx = np.array([enc.index(int(c)) for c in codes])
            assert len(set(idx.tolist())) == len(codes)            # one index per action
            assert np.array_equal(np.flatnonzero(mask), np.sort(idx))
            for c, i in zip(codes, idx):
                assert enc.code(int(i), g) == c                    # both ways
                seen_kinds.add(enc.action(int(i), g).kind)
            other = (g.current_player + 1) % n
            assert not enc.observe(g, other)[1].any()              # not its turn: no action
    assert {"claim", "draw_faceup", "draw_blind", "keep"} <= seen_kinds


def test_encoding_layout_and_errors():
    enc = encoding("europe", 4)
    assert sum(sl.stop - sl.start for sl in enc.fields.values()) == enc.obs_size
    blocks = enc.blocks()
    assert blocks["station"][1] == enc.n_actions and blocks["draw_faceup"][0] == 0
    # every index decodes to an action of its block's kind
    g = Game("europe", 4, seed=1)
    for kind, (lo, hi) in blocks.items():
        for i in range(lo, hi):
            assert enc.action(i, g).kind == kind
    lo, hi = enc.claim_range(0)
    assert all(enc.action(i, g).route == 0 for i in range(lo, hi))
    with pytest.raises(ValueError, match="outside"):
        enc.code(enc.n_actions, g)
    with pytest.raises(ValueError, match="no index"):
        enc.index(g.action("claim", route=0, color=0, wild=0).code | (200 << 16))
    with pytest.raises(TypeError):
        enc.code("3", g)
    with pytest.raises(IllegalActionError, match="not legal"):
        enc.check_legal(blocks["claim"][0], g)        # setup: only ticket keeps are legal


def test_hand_made_observation():
    g = Game.from_position("europe", 2, hands=[{"red": 3, "wild": 1}, {"blue": 2}],
                           tickets=[[0, 5], [7]], routes=[[3], [10]], current=0, seed=2)
    enc = encoding("europe", 2)
    u = enc.unpack(enc.observe(g, 0)[0])
    b = g.board
    assert u["phase"] == "turn" and u["current"] == 0
    assert list(u["hand"]) == [3 if c == "red" else 0 for c in b.colors] + [1]
    assert np.flatnonzero(u["tickets"] == 1).tolist() == [0, 5]
    assert u["route_owner"][3] == 0 and u["route_owner"][10] == 1
    assert (np.delete(u["route_owner"], [3, 10]) == -1).all()
    assert u["players"][0]["hand_size"] == 4 and u["players"][1]["hand_size"] == 2
    assert u["players"][1]["tickets"] == 1
    assert u["players"][0]["trains"] == b.trains - b.route_len[3]
    # seat 1 sees itself first: its own route 10 as 0, seat 0's as 1
    u1 = enc.unpack(enc.observe(g, 1)[0])
    assert u1["route_owner"][10] == 0 and u1["route_owner"][3] == 1 and u1["current"] == 1
    assert list(u1["hand"]) == [2 if c == "blue" else 0 for c in b.colors] + [0]


@pytest.mark.parametrize("board,n", [("europe", 4), ("usa", 2), ("newyork", 3)])
def test_observation_holds_no_hidden_information(board, n):
    """Resampling what a seat cannot see (others' hands, tickets, offers, the decks)
    leaves its observation unchanged; its own hand does change it."""
    enc = encoding(board, n)
    checked = 0
    for g in random_game_positions(board, n, 11, steps=500):
        for seat in range(n):
            obs, mask = enc.observe(g, seat)
            other = g.determinized(seat, seed=checked + 1)
            st, st2 = g.state(), other.state()
            hidden_changed = (st["deck"] != st2["deck"] or any(
                st["players"][q]["hand"] != st2["players"][q]["hand"]
                or st["players"][q]["tickets"] != st2["players"][q]["tickets"]
                for q in range(n) if q != seat))
            obs2, mask2 = enc.observe(other, seat)
            assert np.array_equal(obs, obs2) and np.array_equal(mask, mask2)
            checked += hidden_changed
    assert checked > 100
    # the seat's own cards are in its observation
    g = Game(board, n, seed=3)
    h0 = enc.unpack(enc.observe(g, 0)[0])["hand"]
    assert h0.sum() == g.board.initial_hand


# --- PettingZoo and Gymnasium ------------------------------------------------------------

@pytest.mark.parametrize("board,n", CONFIGS)
def test_pettingzoo_api_and_seed(board, n):
    pytest.importorskip("pettingzoo")
    from pettingzoo.test import api_test, seed_test

    from ttrsim.env import aec_env

    with pytest.warns(UserWarning):       # dict observations: PettingZoo's advice only
        api_test(aec_env(board, n))
    seed_test(lambda: aec_env(board, n))


def test_aec_plays_game_exactly_and_rewards():
    pytest.importorskip("pettingzoo")
    from ttrsim.env import aec_env

    env = aec_env("newyork", 3, reward="score")
    env.reset(seed=9)
    g = Game("newyork", 3, seed=9)
    enc = encoding("newyork", 3)
    rng = np.random.default_rng(0)
    final = {}
    for agent in env.agent_iter():
        obs, rew, term, trunc, info = env.last()
        if term or trunc:
            final[agent] = rew
            env.step(None)
            continue
        q = env.agent_name_mapping[agent]
        assert q == g.current_player
        o2, m2 = enc.observe(g, q)
        assert np.array_equal(obs["observation"], o2)
        assert np.array_equal(obs["action_mask"].astype(bool), m2)
        a = int(rng.choice(np.flatnonzero(m2)))
        g.apply(enc.code(a, g))
        env.step(a)
    assert g.is_over()
    # score rewards are the final scores, given at the end
    assert final == {f"player_{q}": s["total"] for q, s in enumerate(g.scores())}
    with pytest.raises(IllegalActionError, match="not legal"):
        e2 = aec_env("newyork", 3)
        e2.reset(seed=1)
        e2.step(enc.blocks()["claim"][0])


def test_aec_render_and_bad_args():
    pytest.importorskip("pettingzoo")
    from ttrsim.env import aec_env

    env = aec_env("europe", 2, render_mode="ansi")
    env.reset(seed=0)
    text = env.render()
    assert "face-up" in text and "seat 1" in text
    with pytest.raises(ValueError, match="reward"):
        aec_env("europe", 2, reward="points")
    with pytest.raises(ValueError):
        aec_env("newyork", 5)


def test_gym_env_seeded_and_final_reward():
    pytest.importorskip("gymnasium")
    from ttrsim.env import gym_env

    def play(env, seed):
        obs, info = env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        trace = []
        while True:
            a = int(rng.choice(np.flatnonzero(obs["action_mask"])))
            obs, r, term, trunc, info = env.step(a)
            trace.append((a, r))
            if term or trunc:
                return trace, info

    env = gym_env("usa", 3, opponents=["tickets", "random"], reward="score", seed=4)
    t1, i1 = play(env, 7)
    t2, i2 = play(env, 7)
    assert t1 == t2 and all(r == 0 for _, r in t1[:-1])
    assert t1[-1][1] == i1["scores"][0]
    with pytest.raises(ValueError, match="over"):
        env.step(0)


# --- the vector environment ---------------------------------------------------------------

def replay_check(board, n, n_envs, opponents, seat, steps, seed=3, reward="win"):
    """Step a VectorEnv with sample_actions() and replay every env's games in Game, its
    opponents played by fresh policies through decide(): observations, masks, rewards
    and final scores must agree at every step."""
    venv = VectorEnv(board, n, n_envs, opponents=opponents, seed=seed, seat=seat, reward=reward)
    enc = venv.encoding
    specs = opponents if isinstance(opponents, list) else [opponents] * (n - 1)
    obs, masks = venv.reset()
    games = [None] * n_envs

    def start(i):
        g = Game(board, n, seed=int(venv.game_seeds()[i]))
        me = int(venv.seats()[i])
        pols = {}
        for q, sd in enumerate(policy_seeds(int(venv.game_seeds()[i]), n)):
            if q != me:
                pols[q] = make_policy(specs[(q - me) % n - 1], g.board)
                start_policy(pols[q], g, q, sd)
        games[i] = (g, me, pols)
        advance(i)

    def advance(i):
        g, me, pols = games[i]
        while not g.is_over() and g.current_player != me:
            g.apply(decide(pols[g.current_player], g, start=False))

    for i in range(n_envs):
        start(i)
    n_games = 0
    for _ in range(steps):
        for i in range(n_envs):
            g, me, _ = games[i]
            o2, m2 = enc.observe(g, me)
            assert np.array_equal(obs[i], o2) and np.array_equal(masks[i], m2)
        acts = venv.sample_actions().copy()
        assert all(masks[i, a] for i, a in enumerate(acts))
        obs, masks, rew, term, trunc = venv.step(acts)
        assert not trunc.any()
        for i in range(n_envs):
            g, me, _ = games[i]
            g.apply(enc.code(int(acts[i]), g))
            advance(i)
            assert term[i] == g.is_over()
            if g.is_over():
                n_games += 1
                sc = g.scores()
                totals = [sc[(me + k) % n]["total"] for k in range(n)]
                assert venv.final_scores[i].tolist() == totals
                if reward == "score":
                    assert rew[i] == totals[0]
                else:
                    win = sc[me]["rank"] == 1
                    shared = sum(s["rank"] == 1 for s in sc) > 1
                    assert rew[i] == (0 if win and shared else 1 if win else -1)
                start(i)
            else:
                assert rew[i] == 0
    return n_games


def test_vector_env_equals_game_random_opponents():
    assert replay_check("europe", 4, 6, "random", 0, 500) >= 6


def test_vector_env_equals_game_planning_opponents_random_seat():
    assert replay_check("usa", 3, 4, ["tickets", "greedy"], None, 250, reward="score") >= 4


def test_vector_env_equals_game_usa_1910_final_scores_with_the_globetrotter():
    # the final rewards are the totals of Game.scores, Globetrotter included
    assert replay_check("usa-mega", 3, 4, ["tickets", "greedy"], None, 300, reward="score") >= 4
    assert replay_check("usa-1910", 2, 4, "tickets", None, 300) >= 4


def test_vector_env_equals_game_tickets_opponents():
    assert replay_check("newyork", 4, 8, "tickets", None, 600) > 50


def test_vector_env_equals_game_learned_and_counter_opponents():
    # expert's turn candidates come from the legal list, which the compiled loops do not
    # fill for a built-in policy: a policy that reads it must list it itself
    assert replay_check("newyork", 2, 3, "expert", 0, 300) >= 6
    assert replay_check("europe", 3, 2, ["expert", "blocker"], None, 200) >= 1


def test_vector_env_seeding_and_illegal_actions():
    a = VectorEnv("europe", 2, 4, opponents="random", seed=5)
    b = VectorEnv("europe", 2, 7, opponents="random", seed=5)
    a.reset()
    b.reset()
    assert np.array_equal(a.game_seeds(), b.game_seeds()[:4])    # per env, not per n_envs
    assert np.array_equal(a.obs, b.obs[:4])
    c = VectorEnv("europe", 2, 4, opponents="random", seed=6)
    c.reset()
    assert not np.array_equal(a.game_seeds(), c.game_seeds())
    obs = a.obs.copy()
    acts = a.sample_actions().copy()
    acts[2] = np.flatnonzero(~a.masks[2])[0]
    with pytest.raises(ValueError, match="env 2: action .* is not legal"):
        a.step(acts)
    assert np.array_equal(a.obs, obs)                # no env was stepped
    with pytest.raises(ValueError, match="outside"):
        a.step(np.full(4, a.n_actions))
    with pytest.raises(ValueError, match="one action per env"):
        a.step(acts[:3])
    with pytest.raises(TypeError, match="integer"):
        a.step(acts.astype(float))
    a.reset(seed=5)
    assert np.array_equal(a.obs, b.obs[:4])
    with pytest.raises(ValueError, match="opponents needs"):
        VectorEnv("europe", 3, 2, opponents=["random"])
    with pytest.raises(ValueError, match="seat"):
        VectorEnv("europe", 3, 2, seat=3)
    with pytest.raises(ValueError, match="unknown policy"):
        VectorEnv("europe", 3, 2, opponents="nobody")


def test_vector_env_sampler_is_uniform_over_the_mask():
    venv = VectorEnv("newyork", 2, 1, opponents="random", seed=1)
    venv.reset()
    mask = venv.masks[0].copy()
    core = venv._core
    counts = np.zeros(venv.n_actions)
    for _ in range(3000):
        counts[core.sample_actions()[0]] += 1        # does not change the game
    legal = np.flatnonzero(mask)
    assert counts[~mask].sum() == 0
    from scipy.stats import chisquare
    assert chisquare(counts[legal]).pvalue > 1e-4


def test_python_policy_opponents_and_truncation():
    """A Python policy (observation dict, Action list) plays opponents inside the loop;
    games reaching max_turns are truncated with reward 0."""
    seen = []

    def first(observation, legal):
        seen.append(observation["seat"])
        return legal[0]

    venv = VectorEnv("newyork", 3, 2, opponents=[first, "random"], seed=2, max_turns=6)
    venv.reset()
    trunc_seen = 0
    for _ in range(40):
        _, _, rew, term, trunc = venv.step(venv.sample_actions())
        assert not term.any()
        trunc_seen += trunc.sum()
        assert (rew[trunc] == 0).all()
    assert trunc_seen > 0 and set(seen) == {1}
    with pytest.raises(ValueError, match="max_turns"):
        VectorEnv("newyork", 3, 2, max_turns=0)


def test_opponent_policy_errors_are_reported():
    def bad(obs, mask):
        return -5

    venv = VectorEnv("newyork", 2, 2, opponents=policy(bad, "bad"), seat=1, seed=0)
    with pytest.raises(PolicyError, match="bad"):
        venv.reset()


# --- learned policies as ttrsim policies --------------------------------------------------

def test_callable_policy_in_simulate():
    enc = encoding("newyork", 2)
    calls = []

    def first_legal(obs, mask):
        assert obs.shape == (enc.obs_size,) and mask.shape == (enc.n_actions,)
        calls.append(1)
        return int(np.flatnonzero(mask)[0])

    run = ttrsim.simulate("newyork", [policy(first_legal, "first"), "random"], games=4, seed=1)
    assert len(calls) > 20
    assert set(run.games["policy"]) == {"first", "random"}

    # same decisions as the encoding gives in Game play
    g = Game("newyork", 2, seed=0)
    p = make_policy(policy(first_legal, "first"), g.board)
    code = decide(p, g)
    assert code == enc.code(int(np.flatnonzero(enc.observe(g, 0)[1])[0]), g)

    def illegal(obs, mask):
        return int(np.flatnonzero(~mask)[0])

    with pytest.raises(PolicyError, match="not a legal action index"):
        ttrsim.simulate("newyork", [policy(illegal, "illegal"), "random"], games=1)
    with pytest.raises(TypeError, match="not callable"):
        policy(3)


def test_callable_policy_start_game_hook():
    """A callable with a start_game(seat, seed) method hears of every game it plays; an
    exception there aborts the run with a PolicyError naming it."""
    class Counting:
        def __init__(self):
            self.starts = []

        def start_game(self, seat, seed):
            self.starts.append(seat)

        def __call__(self, obs, mask):
            return int(np.flatnonzero(mask)[0])

    c = Counting()
    ttrsim.simulate("newyork", [policy(c, "counting"), "random"], games=6, seed=2)
    assert len(c.starts) == 6 and set(c.starts) == {0, 1}          # seats rotate

    class Broken(Counting):
        def start_game(self, seat, seed):
            raise RuntimeError("no start")

    with pytest.raises(PolicyError, match="no start"):
        ttrsim.simulate("newyork", [policy(Broken(), "broken"), "random"], games=1)


def test_gym_env_works_without_pettingzoo():
    """The Gymnasium adapter needs Gymnasium only: with PettingZoo hidden it plays a game
    to its end, and the PettingZoo adapter alone is refused with the install line."""
    pytest.importorskip("gymnasium")
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] == 'pettingzoo':\n"
        "            raise ImportError('blocked', name=name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "import numpy as np, ttrsim.env\n"
        "env = ttrsim.env.gym_env('newyork', 2, opponents='random', seed=3)\n"
        "obs, info = env.reset(seed=3)\n"
        "done, steps = False, 0\n"
        "while not done:\n"
        "    a = int(np.flatnonzero(obs['action_mask'])[0])\n"
        "    obs, r, term, trunc, info = env.step(a)\n"
        "    done, steps = term or trunc, steps + 1\n"
        "print('steps', steps, 'scores' in info)\n"
        "assert 'pettingzoo' not in sys.modules\n"
        "try:\n"
        "    ttrsim.env.aec_env('newyork', 2)\n"
        "except ImportError as e:\n"
        "    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    first, second = out.stdout.splitlines()[:2]
    assert first.startswith("steps ") and int(first.split()[1]) > 10 and first.endswith("True")
    assert "rl extra" in second and "missing: pettingzoo" in second


def test_missing_rl_extra_gives_clear_message():
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('pettingzoo', 'gymnasium'):\n"
        "            raise ImportError('blocked', name=name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "import ttrsim, ttrsim.env\n"
        "v = ttrsim.env.VectorEnv('newyork', 2, 2, opponents='random'); v.reset()\n"
        "try:\n"
        "    ttrsim.env.aec_env('newyork', 2)\n"
        "except ImportError as e:\n"
        "    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "rl extra" in out.stdout and 'pip install -e ".[rl]"' in out.stdout
