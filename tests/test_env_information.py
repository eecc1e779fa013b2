"""What an environment's observation reveals, and what its flags say around an auto-reset.

The observation of a seat is compared, field by field and at every phase (the secret
initial ticket choice included), with a view built only from ``Game.observation(seat)``
(the Game-level public view) and the seat's own memory of the tickets it gave back: any
field it does not explain, or explains differently, fails. The VectorEnv's flags, rewards,
final scores, observations and masks are checked at the steps that end a game by its end
and by the turn limit, with auto-reset on and off; the Gymnasium env under Gymnasium's own
auto-reset, and the PettingZoo env at the end of a game and after its reset, likewise."""
from __future__ import annotations

import numpy as np
import pytest

from ttrsim import Game
from ttrsim.env import VectorEnv, encoding

PHASES = ("setup_tickets", "turn", "second_draw", "keep_tickets", "tunnel", "over")


def rel(q: int, seat: int, n: int) -> int:
    return -1 if q < 0 else (q - seat) % n


def public_view(enc, g: Game, seat: int) -> dict:
    """The observation vector's fields as the seat may know them, from the Game's public
    view of that seat. Beside it only: the turns left in the last round (public: every
    seat sees the round start) and the tickets the seat gave back itself (its memory)."""
    o = g.observation(seat)
    n = g.n_players
    st = g.state()             # only the seat's own discards and the public turns left
    T = len(enc.unpack(np.zeros(enc.obs_size, np.int16))["tickets"])
    tickets = np.zeros(T, int)
    tickets[[t for t in st["players"][seat]["discarded"]]] = 3
    tickets[o["tickets"]] = 1
    tickets[o["pending"]] = 2
    offer = np.full(len(enc.unpack(np.zeros(enc.obs_size, np.int16))["offer"]), -1)
    offer[:len(o["pending"])] = o["pending"]
    tun = o["tunnel"]
    tunnel = ([tun["route"], tun["color"], tun["wild"], tun["extra"]]
              + (tun["revealed"] + [-1] * 3)[:3]) if tun else [-1, -1, 0, 0, -1, -1, -1]
    order = [(seat + k) % n for k in range(n)]
    return {
        "phase": o["phase"], "current": rel(o["current"], seat, n), "turn": min(o["turn"], 32767),
        "last_round": int(o["last_round"]),
        "turns_left": st["turns_left"] if o["last_round"] else 0,
        "deck_size": o["deck_size"], "ticket_deck_size": o["ticket_deck_size"],
        "hand": o["hand"], "faceup": o["faceup"], "discard": o["discard"],
        "tickets": tickets.tolist(), "offer": offer.tolist(),
        "route_owner": [rel(x, seat, n) for x in o["route_owner"]],
        "city_station": [rel(x, seat, n) for x in o["city_station"]],
        "players": [o["players"][q] for q in order],
        "tunnel": tunnel,
    }


def positions(board, n, seeds, steps=900):
    """Positions of games played by uniformly random legal actions, every phase."""
    for seed in seeds:
        g = Game(board, n, seed=seed)
        rng = np.random.default_rng(seed)
        for _ in range(steps):
            yield g
            if g.is_over():
                break
            codes = g.legal_action_codes()
            g.apply(int(codes[rng.integers(len(codes))]))


@pytest.mark.parametrize("board,n", [("europe", 4), ("usa", 3), ("newyork", 2), ("europe", 2)])
def test_observation_is_exactly_the_public_view_at_every_phase(board, n):
    enc = encoding(board, n)
    fields = set(enc.fields)
    seen = set()
    for g in positions(board, n, range(3)):
        for seat in range(n):
            obs, _ = enc.observe(g, seat)
            got = enc.unpack(obs)
            want = public_view(enc, g, seat)
            assert set(want) == fields, "a field the public view does not explain"
            for name in fields:
                value = got[name]
                value = value.tolist() if isinstance(value, np.ndarray) else value
                assert value == want[name], (name, g.phase, seat)
        seen.add(g.phase)
    assert seen >= set(PHASES) - ({"tunnel"} if board != "europe" else set())


def test_the_secret_initial_choice_stays_secret():
    """During the initial ticket choice, another seat's kept-ticket count (which the game
    records as seats choose in turn) reads 0, and its pending offer is never shown."""
    enc = encoding("usa", 3)
    g = Game("usa", 3, seed=4)
    assert g.phase == "setup_tickets"
    g.apply(int(g.legal_action_codes()[0]))       # seat 0 keeps some tickets
    assert g.state()["players"][0]["n_tickets"] > 0 and g.phase == "setup_tickets"
    for seat in (1, 2):
        got = enc.unpack(enc.observe(g, seat)[0])
        assert got["players"][(0 - seat) % 3]["tickets"] == 0
        assert (got["tickets"] != 1).all()             # it holds none yet
        own = set(g.state()["players"][seat]["pending"])
        assert {int(t) for t in np.flatnonzero(got["tickets"] == 2)} == own
    got = enc.unpack(enc.observe(g, 0)[0])
    assert got["players"][0]["tickets"] == g.state()["players"][0]["n_tickets"]


# ------------------------------------------------------------------ auto-reset

def fresh_view(venv, i):
    """Observation and mask of env i's current game as a fresh Game at the agent's
    first decision (the opponents before it played by the env)."""
    g = venv.game(i)
    return venv.encoding.observe(g, int(venv.seats()[i]))


def play_until(venv, done, limit=20000):
    """Step random legal actions until ``done(term, trunc)`` holds for some env; return
    the step's arrays (copies) and the seeds before the step."""
    for _ in range(limit):
        seeds = venv.game_seeds().copy()
        out = venv.step(venv.sample_actions().copy())
        out = tuple(np.array(x, copy=True) for x in out)
        if done(out[3], out[4]).any():
            return out, seeds
    raise AssertionError("no game ended")


@pytest.mark.parametrize("reward", ["win", "score", "margin"])
def test_flags_after_a_terminated_game_and_autoreset(reward):
    venv = VectorEnv("newyork", 2, 3, opponents="random", seed=3, reward=reward)
    venv.reset()
    (obs, masks, rew, term, trunc), seeds = play_until(venv, lambda te, tr: te)
    ended = np.flatnonzero(term)
    assert not trunc.any()
    scores = venv.final_scores.copy()
    for i in range(3):
        if i in ended:
            assert venv.game_seeds()[i] != seeds[i]            # the next game is dealt
            own, best_other = scores[i, 0], scores[i, 1:].max()
            expect = {"score": own, "margin": own - best_other,
                      "win": 0 if own == best_other else (1 if own > best_other else -1)}[reward]
            assert rew[i] == expect
            g = venv.game(i)
            assert g.turn <= 2 and not g.is_over()             # a new game's start
        else:
            assert rew[i] == 0 and venv.game_seeds()[i] == seeds[i]
        o, m = fresh_view(venv, i)
        assert np.array_equal(obs[i], o) and np.array_equal(masks[i], m)
        assert masks[i].any()
    # the next step: the flags are down again for the new games
    _, _, rew2, term2, trunc2 = venv.step(venv.sample_actions().copy())
    for i in ended:
        assert not term2[i] and not trunc2[i] and rew2[i] == 0


def test_flags_after_a_truncated_game_and_autoreset():
    venv = VectorEnv("newyork", 2, 2, opponents="random", seed=1, max_turns=5, reward="score")
    venv.reset()
    (obs, masks, rew, term, trunc), seeds = play_until(venv, lambda te, tr: tr)
    assert trunc.any() and not (term & trunc).any()
    for i in np.flatnonzero(trunc):
        assert rew[i] == 0                                    # no reward for a cut game
        assert venv.game_seeds()[i] != seeds[i]
        o, m = fresh_view(venv, i)
        assert np.array_equal(obs[i], o) and np.array_equal(masks[i], m)
    _, _, rew2, term2, trunc2 = venv.step(venv.sample_actions().copy())
    assert not (trunc2[trunc] | term2[trunc]).any()


def test_without_autoreset_a_finished_env_waits_for_reset():
    venv = VectorEnv("newyork", 2, 2, opponents="random", seed=3, autoreset=False)
    venv.reset()
    (obs, masks, rew, term, trunc), seeds = play_until(venv, lambda te, tr: te | tr)
    i = int(np.flatnonzero(term | trunc)[0])
    assert venv.game_seeds()[i] == seeds[i] and venv.game(i).is_over()
    assert not masks[i].any()                                 # no legal action
    acts = venv.sample_actions().copy()
    assert acts[i] == -1                                      # documented: -1, not an action
    with pytest.raises(ValueError):
        venv.step(acts)
    venv.reset()
    assert venv.masks.all(axis=1).any() or venv.masks.any(axis=1).all()
    assert (venv.sample_actions() >= 0).all()


# ------------------------------------------------------------------ Gymnasium's auto-reset

@pytest.mark.parametrize("max_turns, ending", [(10000, "terminated"), (5, "truncated")])
def test_gym_env_under_gymnasium_autoreset(max_turns, ending):
    """In Gymnasium's vector env (auto-reset on the step after an episode ends), every flag,
    reward and observation is right at the end of a game and at the reset that follows."""
    gymnasium = pytest.importorskip("gymnasium")
    from ttrsim.env.gym import TTRGymEnv

    envs = gymnasium.vector.SyncVectorEnv(
        [lambda: TTRGymEnv("newyork", 2, opponents="random", seed=4, max_turns=max_turns,
                           reward="score")])
    obs, info = envs.reset(seed=4)
    inner = envs.envs[0]
    rng = np.random.default_rng(0)
    for _ in range(5000):
        legal = np.flatnonzero(obs["action_mask"][0])
        assert len(legal) > 0
        obs, rew, term, trunc, info = envs.step(np.array([rng.choice(legal)]))
        if term[0] or trunc[0]:
            break
    else:
        raise AssertionError("no episode ended")
    g = inner.venv.game(0)
    if ending == "terminated":
        assert term[0] and not trunc[0] and g.is_over()
        assert rew[0] == inner.venv.final_scores[0, 0] == info["scores"][0][0]
    else:
        assert trunc[0] and not term[0] and not g.is_over() and rew[0] == 0
        assert g.turn >= max_turns
    assert not obs["action_mask"][0].any()                    # the final position: no action
    # the next step resets: a new game, flags down, no reward, its first observation
    old_seed = inner.venv.game_seeds()[0]
    obs, rew, term, trunc, info = envs.step(np.array([0]))
    assert not term[0] and not trunc[0] and rew[0] == 0
    assert inner.venv.game_seeds()[0] != old_seed
    o, m = fresh_view(inner.venv, 0)
    assert np.array_equal(obs["observation"][0], o)
    assert np.array_equal(obs["action_mask"][0].astype(bool), m) and m.any()


@pytest.mark.parametrize("max_turns, ending", [(10000, "terminated"), (6, "truncated")])
def test_aec_flags_at_the_end_and_after_reset(max_turns, ending):
    pytest.importorskip("pettingzoo")
    from ttrsim.env.aec import TTREnv

    env = TTREnv("newyork", 3, seed=2, max_turns=max_turns, reward="score")
    for game in range(2):
        env.reset()
        assert not any(env.terminations.values()) and not any(env.truncations.values())
        assert set(env._cumulative_rewards.values()) == {0.0} and env.agents == env.possible_agents
        g = Game("newyork", 3, seed=env.game_seed)            # a fresh game of the seed
        seat = env.agent_name_mapping[env.agent_selection]
        obs = env.observe(env.agent_selection)
        assert np.array_equal(obs["observation"], encoding("newyork", 3).observe(g, seat)[0])
        rng = np.random.default_rng(game)
        ended = {}
        for agent in env.agent_iter(max_iter=20000):
            o, rew, term, trunc, info = env.last()
            if term or trunc:
                ended[agent] = (rew, term, trunc, info)
                env.step(None)
                continue
            env.step(int(rng.choice(np.flatnonzero(o["action_mask"]))))
        assert set(ended) == set(env.possible_agents) and env.agents == []
        scores = env.game.scores()
        for agent, (rew, term, trunc, info) in ended.items():
            q = env.agent_name_mapping[agent]
            if ending == "terminated":
                assert term and not trunc and env.game.is_over()
                assert rew == scores[q]["total"] and info["score"] == scores[q]["total"]
            else:
                assert trunc and not term and not env.game.is_over() and rew == 0
                assert env.game.turn >= max_turns
