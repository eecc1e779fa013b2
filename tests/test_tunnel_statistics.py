"""Tunnels attempted in the engine from a freshly shuffled deck reveal extra cards with
the exact hypergeometric frequencies (issue: statistical claims against exact values)."""
import numpy as np
import pytest
from scipy import stats

from ttrsim import Game
from ttrsim.stats import wilson_interval
from ttrsim.analysis.tunnels import tunnel_odds

pytestmark = pytest.mark.slow


def tunnel_index(board, a, b, color=None):
    for i in range(len(board.route_id)):
        ends = {board.cities[board.route_a[i]], board.cities[board.route_b[i]]}
        if ends == {a, b} and board.route_tunnel[i] and (
                color is None or board.route_color[i] == board.colors.index(color)):
            return i
    raise LookupError((a, b, color))


def attempt(seed, route, hand, color, wild, faceup):
    """Attempt the tunnel once from a position whose deck is freshly shuffled by `seed`;
    return the extra cards asked (0 when the claim went through at once)."""
    g = Game.from_position("europe", 2, hands=[hand, {}], faceup=faceup, seed=seed)
    g.apply(g.action("claim", route=route, color=color, wild=wild))
    st = g.state()
    if st["tunnel"] is None:
        return 0
    return st["tunnel"]["extra"]


@pytest.mark.parametrize("hand, color, wild, all_wild", [
    ({"green": 2, "wild": 1}, "green", 0, False),      # Venezia-Zurich (green, 2): 2 green played
    ({"wild": 2}, "wild", 2, True),                     # paid with wild cards only
])
def test_extra_cards_follow_the_hypergeometric_law(hand, color, wild, all_wild):
    board = Game("europe", 2).board
    route = tunnel_index(board, "Venezia", "Zürich", "green")
    faceup = ["red", "blue", "black", "white", "yellow"]
    n = 4000
    extras = np.array([attempt(seed, route, hand, color, wild, faceup) for seed in range(n)])
    exact = tunnel_odds(board, "green", hand=hand, faceup=dict.fromkeys(faceup, 1),
                        all_wild=all_wild)["probability"].to_numpy()
    # the same numbers from scipy: 110 cards minus the 5 face up and the hand
    unseen = 110 - 5 - sum(hand.values())
    matching = 14 - hand.get("wild", 0) + (0 if all_wild else 12 - hand.get("green", 0))
    assert np.allclose(exact, stats.hypergeom(unseen, matching, 3).pmf(range(4)))
    observed = np.bincount(extras, minlength=4)
    # each frequency inside its 99.9% Wilson interval ...
    for k in range(4):
        lo, hi = wilson_interval(observed[k], n, confidence=0.999)
        assert lo <= exact[k] <= hi, (k, observed[k] / n, exact[k])
    # ... and a chi-square goodness of fit over the cells with enough expected counts
    keep = exact * n >= 5
    expected = exact[keep] * n
    chi2 = stats.chisquare(observed[keep], expected * observed[keep].sum() / expected.sum())
    assert chi2.pvalue > 1e-3
