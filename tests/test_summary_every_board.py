"""Summary mode against per-event mode, on every board and player count.

The same seed plays the same games in both modes, so every figure summary mode computes
from its sums (means, standard deviations, normal intervals) must equal the figure
computed here directly from the per-event games table. Parametrised over boards and
player counts: a divisor that depends on the player count (the score difference
"seat minus the mean of the others" is kept in the core times players - 1) is wrong
only from 3 players on."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import ttrsim
from ttrsim import analysis as an
from ttrsim import maps

BOARDS = tuple(maps.available())            # every built-in board: a new one joins
CONFIGS = [(b, n) for b in BOARDS
           for n in range(maps.load(b).min_players, maps.load(b).max_players + 1)]
GAMES = 120                 # the sums are compared exactly: any count shows a wrong divisor
Z = stats.norm.ppf(0.975)


def normal_interval(x):
    x = np.asarray(x, dtype=float)
    half = Z * x.std(ddof=1) / np.sqrt(len(x))
    return x.mean(), x.mean() - half, x.mean() + half


@pytest.fixture(scope="module", params=CONFIGS, ids=[f"{b}-{n}" for b, n in CONFIGS])
def runs(request):
    board, n = request.param
    # two policies, so that seats differ and the policy split is exercised too
    specs = ["random", "routes"] * n
    kw = dict(games=GAMES, seed=17 + n)
    return (n, ttrsim.simulate(board, specs[:n], **kw),
            ttrsim.simulate(board, specs[:n], summary=True, **kw))


def test_seat_advantage_summary_equals_per_event(runs):
    n, event, summary = runs
    g = event.games
    in_game = g.groupby("game").score
    diff = g.score - (in_game.transform("sum") - g.score) / (n - 1)
    got = an.seat_advantage(summary).set_index("seat")
    ev = an.seat_advantage(event).set_index("seat")
    assert sorted(got.index) == list(range(n))
    for seat in range(n):
        mine = g.seat == seat
        r = got.loc[seat]
        assert (r.players, r.games, r.wins) == (n, mine.sum(), g.win[mine].sum())
        assert (r.games, r.wins) == (ev.loc[seat].games, ev.loc[seat].wins)
        assert r.fair_share == pytest.approx(1 / n)
        assert (r.score_mean, r.score_mean_low, r.score_mean_high) == \
            pytest.approx(normal_interval(g.score[mine]))
        assert (r.score_diff, r.score_diff_low, r.score_diff_high) == \
            pytest.approx(normal_interval(diff[mine]))
        assert r.score_diff == pytest.approx(ev.loc[seat].score_diff)


def test_score_distribution_summary_equals_per_event(runs):
    n, event, summary = runs
    g = event.games
    got = an.score_distribution(summary).set_index("policy")
    for policy, part in g.groupby("policy", observed=True):
        r = got.loc[policy]
        assert r.games == len(part)
        assert (r.score_mean, r.score_mean_low, r.score_mean_high) == \
            pytest.approx(normal_interval(part.score))
        assert r.score_std == pytest.approx(part.score.std(ddof=1))


def test_by_player_count_summary_equals_per_event(runs):
    n, event, summary = runs
    e = an.by_player_count(event).set_index("players").loc[n]
    s = an.by_player_count(summary).set_index("players").loc[n]
    for col in ("games", "turns_mean", "all_passed_rate", "tickets_kept_mean",
                "tickets_completed_mean", "completion_rate", "score_mean"):
        assert s[col] == pytest.approx(e[col]), col
