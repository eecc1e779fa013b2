"""The one way the compiled loops call a seat's policy (PolicyRef in _policy.pxd): through
Cython's method tables, checked when the core is imported and here."""
import random

import pytest

from ttrsim import Game
from ttrsim._batch import game_seeds, play_batch
from ttrsim._fuzz import HoardPolicy
from ttrsim._policies import decide
from ttrsim._policy import Policy, check_layout
from ttrsim.game import compile_board
from ttrsim.policies import REGISTRY, make_policy


def test_the_method_table_layout_is_the_one_the_loops_rely_on():
    # start_game and choose reached through the table are the methods Cython calls
    assert check_layout() is True


def positions(board, n, count, seed):
    """Positions of random games in every phase."""
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        g = Game(board, n, seed=rng.randrange(1 << 30))
        while not g.is_over() and len(out) < count:
            if rng.random() < 0.15:
                out.append(g.clone())
            g.apply(rng.choice(g.legal_actions()))
    return out


@pytest.mark.parametrize("spec", sorted(set(REGISTRY) - {"search"}) + ["search:playouts=3", "hoard"])
def test_a_call_through_the_ref_is_the_policy_s_own_call(spec):
    games = positions("europe", 3, 60, seed=len(spec))
    seen = set()
    for i, g in enumerate(games):
        a = HoardPolicy() if spec == "hoard" else make_policy(spec, g.board)
        b = HoardPolicy() if spec == "hoard" else make_policy(spec, g.board)
        direct = decide(a, g, seed=i)
        through = decide(b, g, seed=i, via_ref=True)
        assert direct == through, (spec, i, g.phase)
        seen.add(g.phase)
    assert len(seen) >= 3


def test_the_loops_refuse_what_is_not_a_compiled_policy():
    cb = compile_board("newyork")
    with pytest.raises(TypeError, match="compiled ttrsim Policy"):
        play_batch(cb, 2, [make_policy("tickets", cb.board), object()], game_seeds(1, 1))


def test_a_python_subclass_of_a_compiled_policy_is_called_through_its_table():
    class Mine(type(make_policy("greedy", None))):
        pass

    cb = compile_board("newyork")
    out_a = play_batch(cb, 2, [Mine(), make_policy("tickets", cb.board)], game_seeds(2, 3))
    out_b = play_batch(cb, 2, [make_policy("greedy", cb.board), make_policy("tickets", cb.board)],
                       game_seeds(2, 3))
    assert (out_a["scores"] == out_b["scores"]).all()


def test_the_base_policy_fails_clearly_through_the_ref():
    cb = compile_board("newyork")
    with pytest.raises(Exception, match="does not implement choose"):
        play_batch(cb, 2, [Policy(), make_policy("tickets", cb.board)], game_seeds(3, 1))
