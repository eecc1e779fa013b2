"""ttrsim boards as OpenSpiel games (ttrsim.env.openspiel), checked with OpenSpiel's own
tests and against the ttrsim Game they wrap."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from ttrsim import maps  # noqa: E402
from ttrsim.actions import describe  # noqa: E402
from ttrsim.env import encoding  # noqa: E402
from ttrsim.env.openspiel import (PolicyBot, PolicyEvaluator, game,  # noqa: E402
                                  returns_of, seeded_resampler)
from ttrsim.game import Game  # noqa: E402
from ttrsim.variants import variant  # noqa: E402

CASES = [(b, n) for b, ns in (("newyork", (2, 3, 4)), ("europe", (2, 3, 4, 5)),
                              ("usa", (2, 3, 4, 5))) for n in ns] + \
    [("usa-1910", 3), ("usa-mega", 4), ("usa-bigcities", 5)]


def load(board="newyork", players=2, seed=0, **extra):
    return pyspiel.load_game("python_ttrsim", {"board": board, "players": players, "seed": seed,
                                               **extra})


def random_play(state, rng, steps=None):
    """Apply uniformly random legal actions; yield the state before each."""
    k = 0
    while not state.is_terminal() and (steps is None or k < steps):
        yield state
        legal = state.legal_actions()
        state.apply_action(int(legal[rng.integers(len(legal))]))
        k += 1


@pytest.mark.parametrize("board,n", CASES)
def test_openspiel_random_sim_test(board, n):
    """OpenSpiel's own consistency checks (legal actions, strings, tensors, clones,
    returns). serialize=False: OpenSpiel serializes a sampled-stochastic game with its
    random state, which a Python game cannot provide in this release (state
    serialization itself is tested below)."""
    pyspiel.random_sim_test(load(board, n, seed=n), num_sims=1, serialize=False, verbose=False)


@pytest.mark.parametrize("board,n", [("newyork", 3), ("europe", 2), ("usa", 4), ("usa-mega", 3),
                                     ("usa-1910", 2)])
def test_same_deal_and_play_as_ttrsim_game(board, n):
    g = load(board, n, seed=41)
    state, ref = g.new_initial_state(), Game(board, n, seed=41)
    enc = encoding(board, n)
    rng = np.random.default_rng(3)
    while not state.is_terminal():
        assert state.current_player() == ref.current_player
        legal = state.legal_actions()
        assert legal == sorted(enc.index(c) for c in ref.legal_action_codes())
        texts = [state.action_to_string(state.current_player(), a) for a in legal]
        assert texts == [describe(enc.code(a, ref), ref) for a in legal]
        assert len(set(texts)) == len(texts)          # a double route's halves differ
        a = int(legal[rng.integers(len(legal))])
        ref.apply(enc.code(a, ref))
        state.apply_action(a)
        assert state.game_state().state() == ref.state()
    assert ref.is_over()
    assert state.returns() == returns_of(ref.scores())


def test_returns_are_zero_sum_and_shared_wins_split():
    assert returns_of([{"rank": 1}, {"rank": 2}]) == [1.0, -1.0]
    assert returns_of([{"rank": 1}, {"rank": 1}]) == [0.0, 0.0]
    r = returns_of([{"rank": 2}, {"rank": 1}, {"rank": 3}, {"rank": 4}])
    assert r == pytest.approx([-1 / 3, 1.0, -1 / 3, -1 / 3])
    r = returns_of([{"rank": 1}, {"rank": 1}, {"rank": 3}])     # two share first of three
    assert r == pytest.approx([0.25, 0.25, -0.5]) and sum(r) == pytest.approx(0)
    g = load("newyork", 3, seed=5)
    s = g.new_initial_state()
    for _ in random_play(s, np.random.default_rng(1)):
        pass
    assert sum(s.returns()) == pytest.approx(0) and max(s.returns()) > 0
    assert g.min_utility() == pytest.approx(-0.5) and g.max_utility() == 1.0


def test_information_state_and_observation_show_the_seat_its_own_view():
    """Hand-made: seat 0's strings and tensors name its own cards and tickets, never
    seat 1's; a blind draw by seat 1 shows only that it happened."""
    pos = Game.from_position("europe", 2, hands=[{"red": 3, "wild": 1}, {"blue": 2}],
                             faceup=["pink", "pink", "orange", "orange", "yellow"],
                             deck_top=["green", "black"], tickets=[[0], [7]], current=1)
    s = game("europe", 2).new_state_from(pos)
    b = pos.board
    obs0 = s.observation_string(0)
    assert "hand: 3 red, 1 wild" in obs0 and f"tickets: {int(b.ticket_id[0])}" in obs0
    assert "blue" not in obs0.split("face-up")[0]
    assert f"tickets: {int(b.ticket_id[7])}\n" in s.observation_string(1)
    enc = encoding("europe", 2)
    assert s.observation_tensor(0) == enc.observe(pos, 0)[0].astype(np.float32).tolist()
    assert s.information_state_tensor(1) == s.observation_tensor(1)
    s.apply_action(enc.index(pos.action("draw_blind").code))        # seat 1 draws green
    assert s.information_state_string(1).endswith("1:draw blind: green")
    assert s.information_state_string(0).endswith("1:draw blind")
    assert "green" not in s.information_state_string(0).split("moves:")[1]
    # The same move from a world where seat 1 draws another card: seat 0 sees no difference.
    other = Game.from_position("europe", 2, hands=[{"red": 3, "wild": 1}, {"white": 2}],
                               faceup=["pink", "pink", "orange", "orange", "yellow"],
                               deck_top=["black", "black"], tickets=[[0], [9]], current=1)
    t = game("europe", 2).new_state_from(other)
    t.apply_action(enc.index(other.action("draw_blind").code))
    assert t.information_state_string(0) == s.information_state_string(0)
    assert t.information_state_string(1) != s.information_state_string(1)
    # Ticket choices: the seat sees its tickets by name, the others only the count.
    g = load("newyork", 2, seed=2)
    s = g.new_initial_state()
    a = s.legal_actions()[0]                      # keep the first of two offered
    text = s.action_to_string(0, a)
    offer = s.game_state().observation(0)["pending"]
    assert text.startswith("keep ticket ") and len(offer) == 2
    s.apply_action(a)
    b = g.board
    returned = f"ticket {int(b.ticket_id[offer[1]])} {b.ticket_name(offer[1])}"
    assert s.information_state_string(0).endswith(f"0:{text}; return {returned}")
    assert s.information_state_string(1).endswith("0:keep 1 ticket")


def _hidden(g: Game, seat: int):
    st = g.state()
    return (st["deck"], st["ticket_deck"],
            [(p["hand"], p["tickets"], p["pending"]) for q, p in enumerate(st["players"])
             if q != seat])


@pytest.mark.slow
@pytest.mark.parametrize("board,n,seeds", [("newyork", 2, range(30)), ("europe", 3, range(4)),
                                           ("usa", 2, range(3))])
def test_resampled_state_keeps_the_seat_information_and_legal_actions(board, n, seeds):
    """At every decision of random games (thousands in all), a state resampled for
    the seat to move has the same information state, observation and legal actions for
    that seat, and differs in hidden information; the resampled world plays on."""
    decisions = changed = 0
    phases = set()
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
    for seed in seeds:
        rng = np.random.default_rng(seed)
        g = load(board, n, seed=seed)
        for s in random_play(g.new_initial_state(), rng):
            p = s.current_player()
            phases.add(s.game_state().phase)
            for q in range(n):       # every seat, at every phase: nothing hidden shows
                if q != p:
                    rq = s.resample_from_infostate(q, sampler)
                    assert rq.information_state_string(q) == s.information_state_string(q)
                    assert rq.observation_tensor(q) == s.observation_tensor(q)
            r = s.resample_from_infostate(p, sampler)
            assert r.information_state_string(p) == s.information_state_string(p)
            assert r.observation_tensor(p) == s.observation_tensor(p)
            assert r.legal_actions() == s.legal_actions()
            assert r.history() == s.history()
            # the others' private parts of the log belonged to the real world: dropped
            assert all(mine == pub for q, pub, mine in r._p.log if q != p)
            changed += _hidden(r.game_state(), p) != _hidden(s.game_state(), p)
            decisions += 1
            if decisions % 97 == 0:                  # and the sampled world plays to the end
                for _ in random_play(r, rng):
                    pass
                assert r.is_terminal()
    assert decisions > 1000 if board == "newyork" else decisions > 400
    assert changed > 0.9 * decisions
    assert {"setup_tickets", "turn", "second_draw", "keep_tickets"} <= phases
    if board == "europe":
        assert "tunnel" in phases


def test_serialization_round_trip_including_resampled_states():
    g = load("europe", 3, seed=8)
    rng = np.random.default_rng(0)
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
    for k, s in enumerate(random_play(g.new_initial_state(), rng)):
        if k % 25:
            continue
        for t in (s, s.resample_from_infostate(s.current_player(), sampler)):
            u = g.deserialize_state(t.serialize())
            assert u.history() == t.history()
            assert u.game_state().state() == t.game_state().state()
            assert [u.information_state_string(q) for q in range(3)] == \
                [t.information_state_string(q) for q in range(3)]


def test_clone_is_independent_and_cheap_to_play_on():
    s = load("usa", 2, seed=1).new_initial_state()
    c = s.clone()
    c.apply_action(c.legal_actions()[0])
    assert s.history() == [] and len(c.history()) == 1
    assert s.game_state().state() != c.game_state().state()


def test_parameters_map_files_variants_and_errors(tmp_path):
    import ttrsim

    path = str(Path(ttrsim.__file__).parent / "data" / "newyork.json")
    g = load(path, 3, seed=4)
    assert g.board.n_routes == maps.load("newyork").n_routes
    pyspiel.random_sim_test(g, num_sims=1, serialize=False, verbose=False)
    v = load("europe", 2, seed=1, variant="docs/examples/europe-variant.json")
    assert v.board.variant["base"] == "europe"
    with pytest.raises(Exception, match="pass board='europe'"):
        load("usa", 2, variant="docs/examples/europe-variant.json")
    board = variant("europe", trains=30)
    gv = game(board, 2, seed=3)
    assert gv.board.trains == 30
    s = gv.new_initial_state()
    assert "trains 30" in s.observation_string(0)
    with pytest.raises(Exception, match="allows 2 to 4 players"):
        load("newyork", 5)
    with pytest.raises(Exception, match="seed must be"):
        game("europe", 2, seed=-1)
    with pytest.raises(Exception, match="the position is newyork 2p"):
        game("europe", 2).new_state_from(Game("newyork", 2))


def test_policy_bot_plays_legal_moves_as_the_policy_would():
    from open_spiel.python.algorithms.evaluate_bots import evaluate_bots

    from ttrsim._policies import decide
    from ttrsim.policies import make_policy

    g = load("europe", 2, seed=12)
    bots = [PolicyBot("tickets", g), PolicyBot("routes", g)]
    returns = evaluate_bots(g.new_initial_state(), bots, np.random.RandomState(0))
    assert sorted(returns) == [-1.0, 1.0] or returns == [0.0, 0.0]
    # Move by move: the bot's choice is the policy's, and legal.
    s = g.new_initial_state()
    bot = PolicyBot("tickets", g, seed=5)
    ref = make_policy("tickets", g.board)
    started = False
    for k in range(60):
        if s.current_player() == 0:
            a = bot.step(s)
            assert a in s.legal_actions()
            code = decide(ref, s.game_state(), 5, start=not started)
            started = True
            assert a == encoding("europe", 2).index(code)
        else:
            a = s.legal_actions()[0]
        s.apply_action(a)
    with pytest.raises(ValueError, match="unknown policy|not a policy|no policy"):
        PolicyBot("no-such-policy", g)
    shared = PolicyBot("tickets", g)           # one bot for both seats: refused, not mixed up
    s = g.new_initial_state()
    s.apply_action(shared.step(s))
    with pytest.raises(ValueError, match="one PolicyBot per seat"):
        shared.step(s)


def test_policy_bot_takes_python_policies():
    g = load("newyork", 2, seed=3)

    def first(observation, legal_actions):
        return legal_actions[0]

    bots = [PolicyBot(first, g), PolicyBot(first, g)]
    s = g.new_initial_state()
    while not s.is_terminal():
        a = bots[s.current_player()].step(s)
        assert a == encoding("newyork", 2).index(int(s.game_state().legal_action_codes()[0]))
        s.apply_action(a)


def play(state, bots):
    """Play to the end (OpenSpiel's Python ISMCTSBot has no restart_at, which
    evaluate_bots calls, so the loop is written out). Returns the final state."""
    while not state.is_terminal():
        action = bots[state.current_player()].step(state)
        assert action in state.legal_actions()
        state.apply_action(action)
    return state


def test_openspiel_ismcts_plays_a_complete_game_against_tickets():
    from open_spiel.python.algorithms import ismcts, mcts

    g = load("newyork", 2, seed=21)
    rng = np.random.RandomState(0)
    for evaluator in (mcts.RandomRolloutEvaluator(1, rng), PolicyEvaluator("tickets", seed=1)):
        bot = ismcts.ISMCTSBot(g, evaluator, 2.0, 12, random_state=np.random.RandomState(1))
        end = play(g.new_initial_state(), [bot, PolicyBot("tickets", g)])
        assert end.game_state().is_over() and sum(end.returns()) == pytest.approx(0)
        assert end.returns() == returns_of(end.game_state().scores())


def test_seeded_ismcts_replays_the_same_game():
    """OpenSpiel's ISMCTS seeds each resampling from the system unless given a
    resampler: with seeded_resampler, the same seeds give the same game."""
    from open_spiel.python.algorithms import ismcts

    g = load("newyork", 2, seed=23)

    def history(seed):
        bot = ismcts.ISMCTSBot(g, PolicyEvaluator("tickets", seed=seed), 2.0, 15,
                               random_state=np.random.RandomState(seed))
        bot.set_resampler(seeded_resampler(seed))
        return play(g.new_initial_state(), [PolicyBot("tickets", g), bot]).history()

    assert history(4) == history(4)


@pytest.mark.slow
def test_openspiel_ismcts_plays_a_complete_europe_game():
    from open_spiel.python.algorithms import ismcts

    g = load("europe", 2, seed=22)
    bot = ismcts.ISMCTSBot(g, PolicyEvaluator("tickets"), 2.0, 10,
                           random_state=np.random.RandomState(2))
    end = play(g.new_initial_state(), [PolicyBot("tickets", g), bot])
    assert end.game_state().is_over() and sum(end.returns()) == pytest.approx(0)


def test_policy_evaluator_is_deterministic_and_checks_its_arguments():
    s = load("europe", 2, seed=3).new_initial_state()
    for _ in range(4):
        s.apply_action(s.legal_actions()[0])
    a, b = PolicyEvaluator("tickets", 3, seed=9), PolicyEvaluator("tickets", 3, seed=9)
    va, vb = a.evaluate(s), b.evaluate(s)
    assert np.array_equal(va, vb) and va.sum() == pytest.approx(0)
    assert sum(p for _, p in a.prior(s)) == pytest.approx(1)
    with pytest.raises(ValueError, match="n_rollouts"):
        PolicyEvaluator("tickets", 0)


def test_the_docs_example_runs():
    """docs/openspiel.md's example: ISMCTS (100 simulations) against tickets on New York."""
    import contextlib
    import io
    import re

    text = (Path(__file__).resolve().parents[1] / "docs" / "openspiel.md").read_text()
    code = re.search(r"```python\n(.*?)```", text, flags=re.S).group(1)
    assert len([line for line in code.splitlines() if line.strip()]) <= 12
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "docs/openspiel.md", "exec"), {})
    assert "total" in out.getvalue() and "rank" in out.getvalue()
