"""Properties of the statistics that would fail if they broke: q-values equal an
independent Benjamini-Hochberg reference (and scipy's), are monotone in p, control the false
discovery rate; every "significant" flag comes from q; every kind of variant change
survives description -> hash -> saved run -> reload."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

import ttrsim
from ttrsim.stats import bh_q
from ttrsim.variants import CHANGE_KEYS, rebuild, variant


def reference_bh(p):
    """Benjamini-Hochberg by its definition, over the finite p-values only:
    q_i = min over j with p_j >= p_i of p_j * m / rank_j (capped at 1)."""
    p = np.asarray(p, dtype=float)
    q = np.full(p.shape, np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    m = len(ok)
    for i in ok:
        q[i] = min(min(p[j] * m / (np.sum(p[ok] <= p[j])), 1.0) for j in ok if p[j] >= p[i])
    return q


@pytest.mark.parametrize("seed", range(6))
def test_q_values_equal_the_definition_and_scipy_with_nans_and_ties(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 40))
    p = rng.uniform(size=n) ** rng.uniform(0.5, 4)
    p[rng.uniform(size=n) < 0.2] = np.nan           # undefined metrics: not counted in m
    if n > 3:
        p[1] = p[2] = p[3]                           # ties
    q = bh_q(p)
    np.testing.assert_allclose(q, reference_bh(p), rtol=1e-12, equal_nan=True)
    ok = np.isfinite(p)
    if ok.any():
        np.testing.assert_allclose(q[ok], sps.false_discovery_control(p[ok], method="bh"))
    assert np.array_equal(np.isnan(q), np.isnan(p))


@pytest.mark.parametrize("seed", range(4))
def test_q_values_are_monotone_in_p_and_never_below_p(seed):
    rng = np.random.default_rng(100 + seed)
    p = np.concatenate([rng.uniform(size=200) ** 3, [np.nan] * 5])
    q = bh_q(p)
    ok = np.isfinite(p)
    order = np.argsort(p[ok])
    assert np.all(np.diff(q[ok][order]) >= -1e-15)
    assert np.all(q[ok] >= p[ok] - 1e-15) and np.all(q[ok] <= 1)


def test_bh_controls_the_false_discovery_rate():
    """Independent tests, 80 true nulls (uniform p) and 20 real effects: the mean share
    of false discoveries among discoveries stays below alpha x m0 / m."""
    rng = np.random.default_rng(7)
    alpha, m0, m1, reps = 0.1, 80, 20, 400
    fdp = []
    for _ in range(reps):
        z = np.concatenate([rng.normal(size=m0), rng.normal(3.0, 1.0, size=m1)])
        p = 2 * sps.norm.sf(np.abs(z))
        found = bh_q(p) < alpha
        fdp.append(found[:m0].sum() / max(found.sum(), 1))
    # E[FDP] = alpha m0/m = 0.08; the mean of 400 FDPs has sd < 0.01
    assert np.mean(fdp) < alpha * m0 / (m0 + m1) + 0.02
    # and far below what testing each at alpha gives (it is a correction)
    raw = [((2 * sps.norm.sf(np.abs(rng.normal(size=m0)))) < alpha).sum() for _ in range(50)]
    assert np.mean(raw) > 5


def test_every_significant_flag_of_compare_comes_from_q():
    v = variant("newyork", trains=12)
    for alpha in (0.05, 0.3):
        c = ttrsim.compare("newyork", v, 2, games=300, seed=2, alpha=alpha)
        t = c.full
        assert np.array_equal(t.significant.to_numpy(), (t.q_value < alpha).to_numpy())
        np.testing.assert_allclose(t.q_value, bh_q(t.p_value), equal_nan=True)
        assert not t.significant[t.p_value.isna()].any()
        assert set(c.significant().index) == set(t.index[t.significant])
        # a row significant by p alone (p < alpha <= q) is not flagged
        assert not t.significant[(t.p_value < alpha) & (t.q_value >= alpha)].any()
    assert c.full.significant.any() and (~c.full.significant).any()


def test_every_significant_flag_of_route_importance_comes_from_q():
    r = ttrsim.analysis.route_importance("newyork", 2, games=150, seed=1, routes=list(range(1, 9)),
                                         alpha=0.3)
    t = r.table
    for m in ("completion", "score"):
        np.testing.assert_allclose(t[f"{m}_q"], bh_q(t[f"{m}_p"]), equal_nan=True)
        assert np.array_equal(t[f"{m}_significant"].to_numpy(), (t[f"{m}_q"] < 0.3).to_numpy())


# ------------------------------------------------------------------ variants round trip

CHANGES = {
    "deck": {"deck": {"red": 8, "wild": 10}},
    "points": {"ticket_points": {1: 9}, "route_points": {2: 3}},
    "routes": {"remove_routes": [3], "route_color": {5: "red"}, "route_length": {7: 2}},
    "tickets": {"add_tickets": [("Central Park", "Chinatown", 11)], "remove_tickets": [2]},
    "trains": {"trains": 14},
    "stations": {"stations": 1, "station_points": 2},
    "hand size": {"initial_hand": 3},
    "bonus and rules": {"longest_bonus": 9, "rules": {"end_trigger": 1}},
}


def test_the_round_trip_covers_every_change_key():
    covered = {k for changes in CHANGES.values() for k in changes}
    assert covered == set(CHANGE_KEYS)


@pytest.mark.parametrize("what", list(CHANGES))
def test_every_variant_change_survives_description_hash_saved_run_and_reload(tmp_path, what):
    v = variant("newyork", **CHANGES[what])
    info = v.variant
    assert info["description"] != "no change" and len(info["hash"]) == 16
    # the hash depends on the change: another value of it is another hash
    assert rebuild(json.loads(json.dumps(info))) == v            # via JSON, as in a manifest
    run = ttrsim.simulate(v, 2, games=12, seed=4, out=tmp_path / "run")
    m = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert m["variant"]["hash"] == info["hash"] and m["variant"]["description"] == info["description"]
    assert m["board_checksum"] == v.checksum and m["board"] == v.name
    again = ttrsim.load_run(tmp_path / "run")
    assert again.board == v and again.board.checksum == v.checksum
    assert again.board.variant["changes"] == json.loads(json.dumps(info["changes"]))
    pd.testing.assert_frame_equal(again.games, run.games)
    # the reloaded board plays the same games
    pd.testing.assert_frame_equal(ttrsim.simulate(again.board, 2, games=12, seed=4).games, run.games)


def test_different_changes_give_different_hashes_and_boards():
    boards = [variant("newyork", **c) for c in CHANGES.values()]
    assert len({b.variant["hash"] for b in boards}) == len(boards)
    assert len({b.checksum for b in boards}) == len(boards)
    a = variant("newyork", trains=14)
    assert variant("newyork", trains=15).variant["hash"] != a.variant["hash"]
    assert variant("newyork", trains=14).variant["hash"] == a.variant["hash"]


# ------------------------------------------------------------------ paired statistics

def paired_from_arrays(yb, xb, yv, xv):
    from ttrsim.analysis.studies.paired import paired_moments, paired_stats

    S, M = paired_moments(yb[:, None], xb[:, None], yv[:, None], xv[:, None])
    return paired_stats(len(yb), S, M).iloc[0]


@pytest.mark.parametrize("seed", range(4))
def test_paired_stats_of_a_mean_are_the_paired_t_test(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 300))
    base = rng.integers(0, 120, n)
    var = base + rng.integers(-8, 12, n)            # correlated, as on common random numbers
    one = np.ones(n, dtype=np.int64)
    r = paired_from_arrays(base, one, var, one)
    ref = sps.ttest_rel(var, base)
    assert r.difference == pytest.approx(var.mean() - base.mean())
    assert r.p_value == pytest.approx(ref.pvalue, rel=1e-9)
    ci = ref.confidence_interval(0.95)
    assert (r.low, r.high) == (pytest.approx(ci.low), pytest.approx(ci.high))
    # the unpaired standard error: the two sides as independent samples (Welch's)
    se_u = np.sqrt(base.var(ddof=1) / n + var.var(ddof=1) / n)
    assert r.se_unpaired == pytest.approx(se_u)


def test_paired_stats_of_a_ratio_are_the_delta_method():
    """A rate sum(y) / sum(x) per side: the standard error of the difference is that of the
    mean of the paired linearised differences (y_v - R_v x_v) / mean(x_v) - (y_b - R_b x_b)
    / mean(x_b)."""
    rng = np.random.default_rng(9)
    n = 400
    xb = rng.integers(1, 5, n)
    yb = rng.binomial(xb, 0.6)
    xv = np.maximum(1, xb + rng.integers(-1, 2, n))
    yv = rng.binomial(xv, 0.55)
    r = paired_from_arrays(yb, xb, yv, xv)
    Rb, Rv = yb.sum() / xb.sum(), yv.sum() / xv.sum()
    d = (yv - Rv * xv) / xv.mean() - (yb - Rb * xb) / xb.mean()
    assert r.difference == pytest.approx(Rv - Rb)
    assert r.se_paired == pytest.approx(d.std(ddof=1) / np.sqrt(n))
    t = sps.t.ppf(0.975, n - 1)
    assert r.low == pytest.approx(Rv - Rb - t * r.se_paired)


def test_identical_sides_have_no_difference_and_p_one():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 50, 100)
    one = np.ones(100, dtype=np.int64)
    r = paired_from_arrays(y, one, y, one)
    assert r.difference == 0 and r.se_paired == 0 and r.p_value == 1.0
    assert r.low == r.high == 0
