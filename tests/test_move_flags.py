"""Move flags on evidence: a played move is flagged only when a paired comparison on the
same sampled worlds says another move beats it, with the false discovery rate controlled
over a game's analysed decisions (docs/viewer.md).

The rule is checked on hand-made comparison data where the answer is known, on many
simulated families where every null is true (the flag rate stays at the level), and on
real analyses of a position with one winning move.
"""
import numpy as np
import pytest

import ttrsim
from ttrsim.game import Game
from ttrsim.search import FLAG_LEVEL, better_p_values, decision_p_value, flag_decisions


def _flags_of_game(tables, played_rows, level=FLAG_LEVEL):
    """The rule applied to a game: per decision an outcomes table (moves x worlds) and the
    row played; returns the flags."""
    p = [decision_p_value(better_p_values(t, r)) for t, r in zip(tables, played_rows)]
    return flag_decisions(p, level)[1]


# --- hand-made comparison data --------------------------------------------------------

def test_a_clearly_worse_played_move_is_flagged():
    rng = np.random.default_rng(1)
    played = (rng.random(200) < 0.3).astype(float)
    better = np.maximum(played, rng.random(200) < 0.4)      # wins wherever played does, and more
    table = np.vstack([better, played])
    p = better_p_values(table, 1)
    assert np.isnan(p[1]) and p[0] < 1e-10
    q, flags = flag_decisions([decision_p_value(p)])
    assert flags[0] and q[0] < 1e-10


def test_equal_moves_are_not_flagged_whatever_their_row_order():
    rng = np.random.default_rng(2)
    same = (rng.random(300) < 0.5).astype(float)
    # a second draw whose face-up colour and blind draw end alike: the played one listed last
    table = np.vstack([same, same, same])
    p = better_p_values(table, 2)
    assert list(p[:2]) == [1.0, 1.0]
    assert not flag_decisions([decision_p_value(p)])[1][0]


def test_a_move_that_wins_more_worlds_but_less_on_average_is_not_better():
    # 30 worlds where the other move shares a first place (+0.5) against 20 it loses (-1)
    played = np.r_[np.zeros(30), np.ones(20), np.zeros(50)]
    other = np.r_[np.full(30, 0.5), np.zeros(20), np.zeros(50)]
    assert other.mean() < played.mean()
    assert better_p_values(np.vstack([other, played]), 1)[0] == 1.0


def test_the_comparison_is_paired_world_by_world():
    """A small advantage seen on the same worlds (15 worlds won where the played move lost,
    none the other way, out of 200 at a 50% win rate) is evidence; compared unpaired, the
    two win rates (0.575 against 0.5) would not be."""
    rng = np.random.default_rng(3)
    played = (rng.permutation(200) < 100).astype(float)
    other = played.copy()
    other[np.flatnonzero(played == 0)[:15]] = 1.0
    p = better_p_values(np.vstack([other, played]), 1)[0]
    assert p < 1e-4
    from scipy.stats import fisher_exact

    unpaired = fisher_exact([[115, 85], [100, 100]], alternative="greater").pvalue
    assert unpaired > 0.05          # what an unpaired rule would have seen
    # and the pairing matters: the same two columns shuffled apart are no evidence
    shuffled = np.vstack([rng.permutation(other), played])
    assert better_p_values(shuffled, 1)[0] > 0.01


def test_decision_p_value_is_simes_over_the_other_moves():
    # Simes: min over k of m * p_(k) / k
    p = np.array([np.nan, 0.01, 0.04, 0.5, 0.03])
    assert decision_p_value(p) == pytest.approx(min(4 * 0.01 / 1, 4 * 0.03 / 2, 4 * 0.04 / 3,
                                                    4 * 0.5 / 4))
    assert decision_p_value([np.nan]) == 1.0


def test_flags_follow_benjamini_hochberg_over_the_decisions():
    p = np.array([0.001, 0.008, 0.039, 0.041, 0.042, 0.06, 0.074, 0.205, np.nan])
    q, flags = flag_decisions(p, 0.05)
    # BH by hand: the largest k with p_(k) <= k/m * 0.05, m = 8 measured decisions
    m = 8
    k = max(i + 1 for i, v in enumerate(np.sort(p[:8])) if v <= (i + 1) / m * 0.05)
    assert list(flags) == [True] * k + [False] * (9 - k)
    assert np.isnan(q[8]) and not flags[8]
    # each p-value taken alone at 0.05 would flag five
    assert (p[:8] <= 0.05).sum() == 5 > k
    with pytest.raises(ValueError, match="level"):
        flag_decisions(p, 0)


def test_bad_outcome_tables_are_refused():
    with pytest.raises(ValueError, match="moves, worlds"):
        better_p_values(np.zeros(5), 0)
    with pytest.raises(ValueError, match="row 3"):
        better_p_values(np.zeros((2, 5)), 3)


# --- the false discovery rate on simulated families ----------------------------------------

def _null_game(rng, decisions, moves, worlds, base=0.45):
    """A game whose every decision has `moves` equal moves: on each world a shared
    chance of winning (the world's), each move winning it independently of the others."""
    tables = []
    for _ in range(decisions):
        strength = np.clip(base + rng.normal(0, 0.3, worlds), 0.02, 0.98)
        tables.append((rng.random((moves, worlds)) < strength).astype(float))
    return tables, list(rng.integers(0, moves, decisions))


def test_false_discovery_rate_holds_when_every_move_played_is_as_good_as_any():
    """Every null true: the false discovery rate is the chance of any flag in a game. Over
    400 simulated games of 20 decisions with 6 equal moves each it stays at the level (the
    upper end of its 99% interval below 0.05 plus the interval's half width). Without the
    Benjamini-Hochberg step, or with each decision's smallest p-value taken as is, it
    would be several times the level."""
    from scipy.stats import binomtest

    rng = np.random.default_rng(11)
    games, any_flag, raw_flag, min_flag = 400, 0, 0, 0
    for _ in range(games):
        tables, rows = _null_game(rng, 20, 6, 120)
        any_flag += _flags_of_game(tables, rows).any()
        ps = [better_p_values(t, r) for t, r in zip(tables, rows)]
        raw_flag += any(decision_p_value(p) <= FLAG_LEVEL for p in ps)
        min_flag += any(np.nanmin(p) <= FLAG_LEVEL for p in ps)
    ci = binomtest(int(any_flag), games).proportion_ci(0.99)
    assert ci.low <= FLAG_LEVEL, (any_flag, games)
    assert any_flag / games <= FLAG_LEVEL + 0.02
    # the planted bugs: no correction over the decisions, none over the moves
    assert raw_flag / games > 3 * FLAG_LEVEL and min_flag / games > 3 * FLAG_LEVEL


def test_false_discovery_proportion_stays_at_the_level_with_some_worse_moves():
    """A quarter of the decisions played a clearly worse move: those are found, and the
    share of flagged decisions whose move was as good as any stays at the level on average."""
    rng = np.random.default_rng(12)
    fdp, found = [], []
    for _ in range(200):
        tables, rows = _null_game(rng, 20, 5, 150)
        worse = rng.random(20) < 0.25
        for t, r, w in zip(tables, rows, worse):
            if w:
                t[r] = t[r] * (rng.random(t.shape[1]) < 0.5)    # loses half its wins
        flags = _flags_of_game(tables, rows)
        fdp.append((flags & ~worse).sum() / max(1, flags.sum()))
        found.append((flags & worse).sum() / max(1, worse.sum()))
    assert np.mean(fdp) <= FLAG_LEVEL + 0.02
    assert np.mean(found) > 0.6


# --- real analyses ------------------------------------------------------------------------

def last_turn_position():
    """Europe, 2 players, seat 0's last turn: only claiming Kyiv - Smolensk (route 65,
    red) wins (docs: tests/test_search.py holds the same position)."""
    g = Game.from_position("europe", 2, hands=[{"red": 3}, {"yellow": 2}],
                           tickets=[[36], []], routes=[[66], [81]], trains=[3, 4],
                           current=1, seed=5)
    g.apply(g.action("claim", route=11, color="yellow"))
    return g


def test_analyse_flags_a_losing_move_and_not_the_winning_one():
    g = last_turn_position()
    win = g.action("claim", route=65, color="red").code
    lose = g.action("draw_blind").code
    df = ttrsim.analyse(g, playouts=30, seed=2, played=lose)
    assert df.attrs["flag"] and df.attrs["p"] < 1e-6 and df.attrs["played"] == lose
    assert df.loc[0, "code"] == win and df.loc[0, "best"]
    row = df[df.code == lose].iloc[0]
    assert row["played"] and np.isnan(row["p_better"]) and row["vs_played"] == 0
    assert df.loc[0, "vs_played"] == pytest.approx(1.0)
    ok = ttrsim.analyse(g, playouts=30, seed=2, played=win)
    assert not ok.attrs["flag"] and (ok["p_better"].dropna() == 1.0).all()
    assert (ok["vs_played"] <= 0).all()
    # a move outside the candidates is not measured and not flagged
    plain = ttrsim.analyse(g, playouts=30, seed=2, played=10 ** 6)
    assert not plain.attrs["flag"] and np.isnan(plain.attrs["p"]) and not plain["played"].any()


def test_analyse_outcomes_are_the_rows_world_by_world():
    g = Game("newyork", 2, seed=4)
    df, wins = ttrsim.analyse(g, playouts=16, seed=3, outcomes=True)
    assert wins.shape == (len(df), 16)
    assert np.allclose(wins.mean(axis=1), df["win_rate"])
    assert df["best"].sum() == 1 and df.loc[0, "win_rate"] == df["win_rate"].max()
    assert (df["tied"] == (df["win_rate"] == df["win_rate"].max())).all()
    # the best row never has a lower win rate than any other, whatever the utility says
    assert (df["win_rate"].diff().dropna() <= 0).all()


def test_the_game_analysis_controls_the_rate_over_its_decisions():
    from ttrsim.record import record_game

    rec = record_game("newyork", ["random", "tickets"], seed=8)
    a = rec.view_data(analyse=0, playouts=12)["analysis"]
    d = a["decisions"]
    measured = {k: v for k, v in d.items() if v["measured"]}
    q, flags = flag_decisions([v["p"] for v in measured.values()], a["level"])
    assert [v["flag"] for v in measured.values()] == list(flags)
    assert [v["q"] for v in measured.values()] == pytest.approx(list(q))
    assert not any(v["flag"] for v in d.values() if not v["measured"])
    # a flagged decision's best row beats the one played on average
    for v in d.values():
        if v["flag"]:
            assert v["rows"][0]["vs_played"] > 0 and not v["rows"][0]["played"]


def test_the_sign_test_is_scipy_s_exact_binomial_test():
    from scipy.stats import binomtest

    rng = np.random.default_rng(5)
    for _ in range(30):
        t = (rng.random((4, 40)) < rng.random((4, 1))).astype(float)
        t[rng.random(t.shape) < 0.05] = np.nan           # worlds a move did not reach
        p = better_p_values(t, 0)
        for k in (1, 2, 3):
            both = np.isfinite(t[k]) & np.isfinite(t[0])
            d = t[k, both] - t[0, both]
            up, down = int((d > 0).sum()), int((d < 0).sum())
            want = (binomtest(up, up + down, 0.5, alternative="greater").pvalue
                    if up + down and d.mean() > 0 else 1.0)
            assert p[k] == pytest.approx(want, rel=1e-9)


def test_a_face_up_card_from_another_slot_of_its_colour_is_measured():
    """The analysis keeps one face-up slot per colour; a card of that colour taken from
    another slot is the same choice but for the slot refilled, and is compared as it."""
    g = Game.from_position("usa", 2, faceup=["red", "red", "blue", "blue", "green"],
                           current=0, seed=3)
    g.apply(g.action("draw_blind"))
    df = ttrsim.analyse(g, playouts=8, seed=1, played=g.action("draw_faceup", slot=1).code)
    rows = df[df["played"]]
    assert len(rows) == 1 and rows["code"].iloc[0] == g.action("draw_faceup", slot=0).code
    assert np.isfinite(df.attrs["p"])
    # another colour is not taken for it
    df = ttrsim.analyse(g, playouts=8, seed=1, played=g.action("draw_faceup", slot=3).code)
    assert df.loc[df["played"], "code"].iloc[0] == g.action("draw_faceup", slot=2).code
