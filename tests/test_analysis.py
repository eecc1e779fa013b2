"""Analysis functions on small hand-built tables whose answers are known by hand."""
from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from ttrsim import analysis as an
from ttrsim.stats import z_value

# ---------------------------------------------------------------------------------------
# A four-city board and a three-game run (games 0 and 1 with 2 players, game 2 with 3).
# ---------------------------------------------------------------------------------------

CITIES = ("A", "B", "C", "D")


def fake_board():
    route_a = np.array([0, 0, 1, 2, 0])
    route_b = np.array([1, 1, 2, 3, 3])
    ticket_a = np.array([0, 1, 0])
    ticket_b = np.array([2, 3, 3])
    return SimpleNamespace(
        name="toy",
        cities=CITIES,
        coords=np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]),
        colors=("red", "blue"),
        wild="locomotive",
        deck_colors=np.array([12, 12]),
        deck_wild=14,
        route_id=np.array([10, 11, 12, 13, 14]),
        route_a=route_a,
        route_b=route_b,
        route_len=np.array([2, 2, 3, 1, 2]),
        route_color=np.array([0, 1, -1, 1, -1]),
        route_tunnel=np.array([False, False, True, False, True]),
        ticket_id=np.array([1, 2, 3]),
        ticket_a=ticket_a,
        ticket_b=ticket_b,
        ticket_points=np.array([8, 5, 20]),
        ticket_long=np.array([False, False, True]),
        route_name=lambda i: f"{CITIES[route_a[i]]}-{CITIES[route_b[i]]}",
        ticket_name=lambda i: f"{CITIES[ticket_a[i]]}-{CITIES[ticket_b[i]]}",
    )


def fake_games():
    rows = [
        # game, players, seat, policy, score, rank, kept, completed, ticket_points, by_station, turns, all_passed
        (0, 2, 0, "tickets", 50, 1, 2, 1, 3, 0, 100, False),
        (0, 2, 1, "random", 40, 2, 2, 2, 28, 1, 100, False),
        (1, 2, 0, "tickets", 30, 2, 0, 0, 0, 0, 80, True),
        (1, 2, 1, "random", 45, 1, 1, 0, -8, 0, 80, True),
        (2, 3, 0, "tickets", 60, 1, 2, 1, -12, 0, 120, False),
        (2, 3, 1, "random", 60, 1, 1, 1, 5, 0, 120, False),
        (2, 3, 2, "random", 20, 3, 1, 1, 5, 0, 120, False),
    ]
    cols = ["game", "players", "seat", "policy", "score", "rank", "tickets_kept",
            "tickets_completed", "ticket_points", "tickets_by_station", "turns", "all_passed"]
    g = pd.DataFrame(rows, columns=cols)
    g["policy"] = g.policy.astype("category")
    g["board"] = pd.Categorical(["toy"] * len(g))
    g["win"] = g["rank"] == 1
    g["tickets_failed"] = g.tickets_kept - g.tickets_completed
    g["route_points"] = g.score - g.ticket_points
    for part in ("longest_bonus", "station_points", "attraction_points"):
        g[part] = 0
    # the statistics of play, as fake_routes has them
    g["first_claim_turn"] = [5, 12, 9, 7, -1, 20, 3]
    g["routes_len_1"] = [1, 0, 0, 0, 0, 0, 0]
    g["routes_len_2"] = [1, 0, 1, 1, 0, 0, 1]
    g["routes_len_3"] = [0, 1, 0, 0, 0, 1, 0]
    g["routes_claimed"] = g.routes_len_1 + g.routes_len_2 + g.routes_len_3
    g["largest_hand"] = [12, 9, 15, 8, 20, 11, 10]
    g["ticket_draws"] = 0
    g["tickets_kept_drawn"] = 0
    g["turns_taken"] = g.turns // g.players
    return g


def fake_tickets():
    rows = [
        # game, seat, ticket, points, long, kept, completed, by_station
        (0, 0, 1, 8, False, True, True, False),
        (0, 0, 2, 5, False, True, False, False),
        (0, 0, 3, 20, True, False, False, False),
        (0, 1, 1, 8, False, True, True, False),
        (0, 1, 3, 20, True, True, True, True),
        (1, 0, 2, 5, False, False, False, False),
        (1, 1, 1, 8, False, True, False, False),
        (2, 0, 1, 8, False, True, True, False),
        (2, 0, 3, 20, True, True, False, False),
        (2, 1, 2, 5, False, True, True, False),
        (2, 2, 2, 5, False, True, True, False),
    ]
    t = pd.DataFrame(rows, columns=["game", "seat", "ticket", "points", "long", "kept", "completed", "by_station"])
    t["initial"] = True
    t["turn"] = 0
    return t


def fake_routes():
    rows = [(0, 0, 10, 5, True), (0, 1, 12, 12, False), (0, 0, 13, 30, True),
            (1, 1, 10, 7, False), (1, 0, 11, 9, True),
            (2, 2, 10, 3, True), (2, 1, 12, 20, True)]
    return pd.DataFrame(rows, columns=["game", "seat", "route", "turn", "needed"])


def fake_tunnels():
    rows = [(0, 1, 12, "red", 3, 0, "free"), (0, 0, 12, "red", 3, 1, "declined"),
            (1, 0, 12, "blue", 3, 2, "paid"), (2, 1, 12, "red", 3, 1, "paid"),
            (2, 0, 14, "wild", 3, 0, "free")]
    t = pd.DataFrame(rows, columns=["game", "seat", "route", "color", "revealed", "extra", "outcome"])
    return t.astype({"color": "category", "outcome": "category"})


def fake_stations():
    rows = [(0, 1, "C", 40, 12), (2, 0, "A", 50, -1), (2, 1, "C", 55, 10)]
    s = pd.DataFrame(rows, columns=["game", "seat", "city", "turn", "borrowed"])
    return s.astype({"city": "category"})


MANIFEST = {"ttrsim_version": "0.1.0", "board": "toy", "board_checksum": "abc123",
            "policies": ["tickets", "random"], "seed": 7, "games": 3, "batch_size": 1000,
            "summary": False, "rotate": False}


def fake_run():
    return SimpleNamespace(games=fake_games(), tickets=fake_tickets(), routes=fake_routes(),
                           tunnels=fake_tunnels(), stations=fake_stations(),
                           manifest=dict(MANIFEST), board=fake_board())


def fake_summary_run():
    seat_summary = pd.DataFrame({
        "seat": [0, 1], "policy": ["tickets", "random"], "games": [10, 10], "wins": [6, 5],
        "score_sum": [500, 400], "score_sq_sum": [25900, 16900],
        "route_points_sum": [300, 250], "ticket_points_sum": [150, 120],
        "longest_bonus_sum": [50, 30], "station_points_sum": [0, 0], "attraction_points_sum": [0, 0],
        "tickets_kept_sum": [25, 20], "tickets_completed_sum": [20, 15],
        "turns_sum": [1000, 1000], "all_passed": [1, 1],
        # turns: mean 100, s = 20; score minus the other's: mean +-10, s = 6
        "turns_sq_sum": [103600, 103600], "diff_sum": [100, -100], "diff_sq_sum": [1324, 1324],
    })
    ticket_summary = pd.DataFrame({"ticket": [1, 2, 3], "offered": [20, 20, 10], "kept": [16, 10, 4],
                                   "completed": [12, 5, 1], "by_station": [1, 0, 1]})
    route_summary = pd.DataFrame({"route": [10, 12, 12], "turn_bin": [0, 10, 20],
                                  "claims": [3, 1, 1], "needed": [2, 0, 1]})
    tunnel_summary = pd.DataFrame({"route": [12, 12, 12], "extra": [0, 1, 2], "attempts": [5, 3, 2],
                                   "paid": [0, 2, 1], "declined": [0, 1, 1]})
    station_summary = pd.DataFrame({"city": ["C", "A"], "built": [4, 1], "borrowed": [3, 0]})
    manifest = dict(MANIFEST, games=10, summary=True)
    return SimpleNamespace(games=None, tickets=None, routes=None, tunnels=None, stations=None,
                           seat_summary=seat_summary, ticket_summary=ticket_summary,
                           route_summary=route_summary, tunnel_summary=tunnel_summary,
                           station_summary=station_summary, manifest=manifest, board=fake_board())


def row(df, **where):
    """The single row of ``df`` matching the column values ``where``."""
    mask = np.ones(len(df), dtype=bool)
    for col, value in where.items():
        mask &= (df[col] == value).to_numpy()
    assert mask.sum() == 1, f"{mask.sum()} rows match {where}"
    return df[mask].iloc[0]


# ---------------------------------------------------------------------------------------
# Statistics helpers
# ---------------------------------------------------------------------------------------

def test_wilson_textbook_values():
    # Newcombe (1998), Statistics in Medicine 17:857, Table I, method 3 (Wilson score).
    for k, n, low, high in [(81, 263, 0.2553, 0.3662), (15, 148, 0.0624, 0.1605),
                            (0, 20, 0.0, 0.1611), (1, 29, 0.0061, 0.1718)]:
        lo, hi = an.wilson_interval(k, n)
        assert (round(lo, 4), round(hi, 4)) == (low, high)


def test_wilson_vectorised_and_empty():
    lo, hi = an.wilson_interval([0, 5, 10, 0], [10, 10, 10, 0])
    assert lo[0] == 0 and hi[2] == 1
    assert lo[1] == pytest.approx(1 - hi[1])  # symmetric at p = 1/2
    assert np.isnan(lo[3]) and np.isnan(hi[3])
    assert an.wilson_interval(5, 10, confidence=0.99)[0] < lo[1]


def test_wilson_equals_scipy():
    from scipy.stats import binomtest
    k = np.array([0, 1, 3, 17, 50, 99, 100])
    for conf in (0.9, 0.95, 0.999):
        lo, hi = an.wilson_interval(k, 100, confidence=conf)
        for i, ki in enumerate(k):
            ci = binomtest(int(ki), 100).proportion_ci(confidence_level=conf, method="wilson")
            assert (lo[i], hi[i]) == pytest.approx((ci.low, ci.high), abs=1e-12)


def test_bootstrap_mean_two_values():
    # Resample means of {10, -15} are -15, -2.5 or 10, each extreme with probability 1/4.
    est = an.bootstrap_mean([10, -15])
    assert est == (-2.5, -15.0, 10.0)
    assert an.bootstrap_mean([3, 3, 3]) == (3.0, 3.0, 3.0)
    assert all(math.isnan(v) for v in an.bootstrap_mean([]))


def test_bootstrap_is_seeded_and_reasonable():
    x = np.random.default_rng(1).normal(10, 2, size=400)
    a = an.bootstrap_mean(x, seed=3)
    assert a == an.bootstrap_mean(x, seed=3)
    se = x.std(ddof=1) / 20
    assert a.low == pytest.approx(x.mean() - 1.96 * se, abs=0.4 * se)
    assert a.high == pytest.approx(x.mean() + 1.96 * se, abs=0.4 * se)
    # Integer data take the multinomial path; its interval matches the normal one too.
    k = np.random.default_rng(2).integers(0, 5, size=2000)
    b = an.bootstrap_mean(k)
    se = k.std(ddof=1) / math.sqrt(len(k))
    assert b.high - b.low == pytest.approx(2 * 1.96 * se, rel=0.15)


def test_bootstrap_diff_paired_and_unpaired():
    x = np.array([5.0, 7.0, 9.0, 11.0])
    assert an.bootstrap_diff(x, x - 2, paired=True) == (2.0, 2.0, 2.0)
    est = an.bootstrap_diff(x, x - 2, paired=False)
    assert est.estimate == 2.0 and est.low < 2 < est.high
    with pytest.raises(ValueError):
        an.bootstrap_diff([1, 2], [1], paired=True)


def test_bootstrap_ratio_constant():
    assert an.bootstrap_ratio([2, 4, 6], [1, 2, 3]) == (2.0, 2.0, 2.0)
    assert math.isnan(an.bootstrap_ratio([1, 2], [0, 0]).estimate)


def test_normal_mean_interval():
    # 40 and 60, five times each: sum 500, sum of squares 26000, s^2 = 1000 / 9.
    est = an.normal_mean_interval(500, 26000, 10)
    half = 1.959963984540054 * math.sqrt(1000 / 9) / math.sqrt(10)
    assert est == pytest.approx((50, 50 - half, 50 + half))
    assert z_value(0.95) == pytest.approx(1.959963984540054)
    assert math.isnan(an.normal_mean_interval(5, 25, 1).low)


def station_pair():
    """Four 2-player games with and without stations for seat 0 (seat 1 unchanged)."""
    base = {"game": [0, 1, 2, 3], "players": [2] * 4}
    w0 = dict(base, seat=0, policy="tickets", score=[60, 50, 40, 70], win=[True, False, True, True],
              tickets_completed=[3, 2, 2, 4], ticket_points=[20, 10, 5, 30],
              station_points=[8, 12, 4, 12], stations_built=[1, 0, 2, 0], tickets_by_station=[1, 0, 1, 0])
    wo0 = dict(w0, policy="tickets(stations=0)", score=[55, 50, 42, 70], win=[True, False, True, False],
               tickets_completed=[2, 2, 2, 4], ticket_points=[11, 10, 3, 30],
               station_points=[12] * 4, stations_built=[0] * 4, tickets_by_station=[0] * 4)
    s1 = dict(base, seat=1, policy="random", score=[30] * 4, win=[False] * 4, tickets_completed=[1] * 4,
              ticket_points=[0] * 4, station_points=[12] * 4, stations_built=[0] * 4, tickets_by_station=[0] * 4)
    with_ = pd.concat([pd.DataFrame(w0), pd.DataFrame(s1)], ignore_index=True)
    without = pd.concat([pd.DataFrame(wo0), pd.DataFrame(s1)], ignore_index=True)
    return with_, without


# ---------------------------------------------------------------------------------------
# Tickets
# ---------------------------------------------------------------------------------------

def test_ticket_completion_per_event():
    out = an.ticket_completion(fake_run())
    assert list(out.ticket) == [1, 2, 3] and list(out.name) == ["A-C", "B-D", "A-D"]
    assert list(out.offered) == [4, 4, 3] and list(out.kept) == [4, 3, 2]
    assert list(out.completed) == [3, 2, 1] and list(out.by_station) == [0, 0, 1]
    np.testing.assert_allclose(out.keep_rate, [1, 0.75, 2 / 3])
    np.testing.assert_allclose(out.completion_rate, [0.75, 2 / 3, 0.5])
    # points * (2 p - 1): 8 * 0.5, 5 * 1/3, 20 * 0
    np.testing.assert_allclose(out.expected_points, [4, 5 / 3, 0], atol=1e-12)
    lo, hi = an.wilson_interval(3, 4)
    assert out.completion_rate_low[0] == pytest.approx(lo)
    assert out.expected_points_high[0] == pytest.approx(8 * (2 * hi - 1))


def test_ticket_completion_grouped():
    by_policy = an.ticket_completion(fake_tickets(), fake_games(), by="policy")
    r = row(by_policy, policy="tickets", ticket=2)
    assert (r.offered, r.kept, r.completed, r.expected_points) == (2, 1, 0, -5)
    by_players = an.ticket_completion(fake_run(), by=["players", "seat"])
    r = row(by_players, players=2, seat=0, ticket=1)
    assert (r.offered, r.kept, r.completed) == (1, 1, 1)
    with pytest.raises(an.MissingTable):
        an.ticket_completion(fake_tickets(), by="policy")


def test_ticket_completion_summary():
    out = an.ticket_completion(fake_summary_run())
    r = row(out, ticket=1)
    assert (r.points, r.offered, r.kept, r.completed) == (8, 20, 16, 12)
    assert (r.keep_rate, r.completion_rate, r.expected_points) == (0.8, 0.75, 4.0)
    with pytest.raises(an.MissingTable):
        an.ticket_completion(fake_summary_run().ticket_summary)  # no board, no points


def test_ticket_balance_ranks_by_gap():
    out = an.ticket_balance(fake_run(), min_kept=1)
    # gap = points - expected: A-D 20 - 0, A-C 8 - 4, B-D 5 - 5/3
    assert list(out.ticket) == [3, 1, 2]
    np.testing.assert_allclose(out.gap, [20, 4, 10 / 3])
    assert list(out["rank"]) == [1, 2, 3]
    np.testing.assert_allclose(out.gap_low, out.points - out.expected_points_high)
    grouped = an.ticket_balance(fake_run(), by="players", min_kept=1)
    assert list(grouped[grouped.players == 3].ticket) == [3, 1, 2]  # 40, 0, 0 -> ties share rank 2
    assert list(grouped[grouped.players == 3]["rank"]) == [1, 2, 2]


# ---------------------------------------------------------------------------------------
# Tunnels
# ---------------------------------------------------------------------------------------

KNOWN = dict(hand={"red": 3, "wild": 1}, faceup={"blue": 2, "locomotive": 1}, discards={"red": 1})


@pytest.mark.parametrize(
    "color, known, all_wild, unseen, matching",
    [
        ("red", {}, False, 38, 26),
        ("blue", KNOWN, False, 30, 22),
        ("red", KNOWN, False, 30, 20),
        ("red", KNOWN, True, 30, 12),
        ("locomotive", KNOWN, False, 30, 12),
        ("red", dict(hand=[10, 12, 14]), False, 2, 2),
        ("wild", dict(hand=[12, 12, 11]), False, 3, 3),
        ("blue", dict(hand=[12, 11, 14]), False, 1, 1),
    ],
)
def test_tunnel_odds_is_hypergeometric(color, known, all_wild, unseen, matching):
    odds = an.tunnel_odds(fake_board(), color, all_wild=all_wild, **known)
    drawn = min(3, unseen)
    assert odds.attrs["unseen"] == unseen and odds.attrs["matching"] == matching
    assert odds.attrs["revealed"] == drawn
    assert list(odds.extra) == [0, 1, 2, 3]
    np.testing.assert_allclose(
        odds.probability, sps.hypergeom.pmf([0, 1, 2, 3], unseen, matching, drawn), rtol=1e-12, atol=1e-15
    )
    assert odds.probability.sum() == pytest.approx(1)
    assert odds.attrs["expected"] == pytest.approx((odds.extra * odds.probability).sum())


def test_tunnel_odds_edge_cases():
    board = fake_board()
    everything = an.tunnel_odds(board, "red", hand=[12, 12, 14])
    assert list(everything.probability) == [1, 0, 0, 0] and everything.attrs["expected"] == 0
    # 20 matching of 30 unseen: P(3 extra) = C(20,3) / C(30,3) = 1140 / 4060
    assert an.tunnel_odds(board, "red", **KNOWN).probability[3] == pytest.approx(1140 / 4060)
    with pytest.raises(ValueError, match="more cards known"):
        an.tunnel_odds(board, "red", hand={"red": 13})
    with pytest.raises(ValueError, match="unknown card colour"):
        an.tunnel_odds(board, "green")
    with pytest.raises(ValueError):
        an.tunnel_odds(board, "red", hand=[1, 2])
    assert an.parse_counts("red=2, wild=1,red=1") == {"red": 3, "wild": 1}
    assert an.parse_counts("") == {}
    with pytest.raises(ValueError):
        an.parse_counts("red")


def test_tunnel_outcomes_per_event_and_summary():
    out = an.tunnel_outcomes(fake_run())
    r = row(out, route=12)
    assert (r["name"], r.attempts, r.extra_mean, r.asked, r.declined, r.paid) == ("B-C", 4, 1.0, 3, 1, 2)
    assert [r[f"p_extra_{k}"] for k in range(4)] == [0.25, 0.5, 0.25, 0.0]
    assert (r.decline_rate, r.extra_paid_mean, r.extra_paid_when_paid) == (pytest.approx(1 / 3), 0.75, 1.5)
    r = row(out, route=14)
    assert (r.attempts, r.p_extra_0, r.extra_paid_mean) == (1, 1.0, 0.0) and np.isnan(r.decline_rate)
    s = row(an.tunnel_outcomes(fake_summary_run()), route=12)
    assert (s.attempts, s.extra_mean, s.p_extra_0, s.decline_rate, s.extra_paid_mean) == (10, 0.7, 0.5, 0.4, 0.4)
    assert s.extra_paid_when_paid == pytest.approx(4 / 3)


def test_tunnel_extra_distribution():
    allof = an.tunnel_extra_distribution(fake_tunnels(), by=())
    assert list(allof["count"]) == [2, 2, 1, 0] and set(allof.attempts) == {5}
    by_color = an.tunnel_extra_distribution(fake_run(), by="color")
    assert list(by_color[by_color.color == "red"].share) == [pytest.approx(1 / 3), pytest.approx(2 / 3), 0, 0]
    with pytest.raises(an.MissingTable):
        an.tunnel_extra_distribution(fake_summary_run(), by="color")


# ---------------------------------------------------------------------------------------
# Stations
# ---------------------------------------------------------------------------------------

def test_station_value_paired():
    with_, without = station_pair()
    out = an.station_value(with_, without, seat=0)
    pooled = out[out.players.isna()].set_index("metric")
    assert set(out.seat) == {0} and set(out.games) == {4}
    expect = {"score_diff": 0.75, "win_diff": 0.25, "tickets_completed_diff": 0.25,
              "ticket_points_diff": 2.75, "stations_built": 0.75, "tickets_by_station": 0.5,
              "points_per_station": 1.0, "gross_points_per_station": 5.0, "bonus_per_station": 4.0}
    for metric, value in expect.items():
        assert pooled.loc[metric, "estimate"] == pytest.approx(value), metric
        assert pooled.loc[metric, "low"] <= value <= pooled.loc[metric, "high"]
    assert (pooled.loc["score_diff", "with"], pooled.loc["score_diff", "without"]) == (55, 54.25)
    # d_score = 5, 0, -2, 0: the extreme resample means are -2 and 5
    assert pooled.loc["score_diff", "low"] >= -2 and pooled.loc["score_diff", "high"] <= 5
    assert pooled.loc["bonus_per_station", "low"] == pooled.loc["bonus_per_station", "high"] == 4
    by_players = out[out.players == 2].set_index("metric")
    assert by_players.loc["score_diff", "estimate"] == 0.75


def test_station_value_finds_the_seat():
    with_, without = station_pair()
    by_policy = an.station_value(with_, without)  # seat 0's policy spec differs
    assert set(by_policy.seat) == {0}
    run_w = SimpleNamespace(games=with_, manifest={"seed": 1})
    run_wo = SimpleNamespace(games=without.assign(policy="x"), manifest={"seed": 1, "no_stations": [0]})
    assert set(an.station_value(run_w, run_wo).seat) == {0}
    with pytest.raises(ValueError, match="seed 2 in the baseline, 1 in the run"):
        an.station_value(run_w, SimpleNamespace(games=without, manifest={"seed": 2}))
    with pytest.raises(ValueError, match="which seat"):
        an.station_value(with_, with_)
    with pytest.raises(an.MissingTable):
        an.station_value(fake_summary_run(), fake_summary_run(), seat=0)


def test_station_usage():
    out = an.station_usage(fake_run()).set_index("city")
    assert list(out.index) == ["C", "A", "B", "D"]
    assert (out.loc["C", "built"], out.loc["C", "borrowed"], out.loc["C", "turn_mean"]) == (2, 2, 47.5)
    assert (out.loc["C", "built_rate"], out.loc["A", "useful_rate"]) == (pytest.approx(2 / 3), 0.0)
    assert out.loc["B", "built"] == 0 and np.isnan(out.loc["B", "useful_rate"])
    summary = an.station_usage(fake_summary_run()).set_index("city")
    assert (summary.loc["C", "built_rate"], summary.loc["C", "useful_rate"]) == (0.4, 0.75)
    assert list(an.station_usage(fake_stations(), n_games=3).city) == ["C", "A"]
    with pytest.raises(an.MissingTable):
        an.station_usage(fake_stations())


# ---------------------------------------------------------------------------------------
# Routes
# ---------------------------------------------------------------------------------------

def test_route_claims_per_event():
    out = an.route_claims(fake_run())
    assert list(out.route) == [10, 11, 12, 13, 14] and set(out.games) == {3}
    assert list(out.claims) == [3, 1, 2, 1, 0]
    np.testing.assert_allclose(out.claim_rate, [1, 1 / 3, 2 / 3, 1 / 3, 0])
    r = row(out, route=10)
    assert (r.turn_q1, r.turn_median, r.turn_q3, r.unneeded) == (4, 5, 6, 1)
    assert r.unneeded_share == pytest.approx(1 / 3)
    r = row(out, route=12)
    assert (r.turn_q1, r.turn_median, r.turn_q3, r.unneeded_share) == (14, 16, 18, 0.5)
    assert row(out, route=14).claim_rate_high > 0 and np.isnan(row(out, route=14).turn_median)
    grouped = an.route_claims(fake_run(), by="players")
    assert (row(grouped, players=2, route=10).claims, row(grouped, players=2, route=10).games) == (2, 2)
    assert row(grouped, players=3, route=11).claims == 0
    bare = an.route_claims(fake_routes(), n_games=3)
    assert list(bare.route) == [10, 11, 12, 13] and "name" not in bare.columns


def test_route_claims_summary_and_binned_quantiles():
    out = an.route_claims(fake_summary_run())
    r = row(out, route=12)
    # one claim in bin 10-20 and one in 20-30: quartiles interpolate to 15, 20, 25
    assert (r.claims, r.games, r.claim_rate, r.unneeded) == (2, 10, 0.2, 1)
    assert (r.turn_q1, r.turn_median, r.turn_q3) == (15, 20, 25)
    assert row(out, route=10).turn_median == 5  # 3 claims in bin 0-10
    assert an.binned_quantile([20, 0], [0, 4], 0.5) == 5
    assert np.isnan(an.binned_quantile([], [], 0.5))


# ---------------------------------------------------------------------------------------
# Seats, policies, scores, game length
# ---------------------------------------------------------------------------------------

def test_seat_advantage_per_event():
    out = an.seat_advantage(fake_run())
    r = row(out, players=2, seat=0)
    assert (r.games, r.wins, r.win_rate, r.fair_share, r.win_excess) == (2, 1, 0.5, 0.5, 0.0)
    # score minus the others' mean: 50 - 40 = 10 and 30 - 45 = -15
    assert (r.score_diff, r.score_diff_low, r.score_diff_high) == (-2.5, -15, 10)
    r = row(out, players=3, seat=2)
    assert (r.wins, r.score_diff, r.fair_share) == (0, -40, pytest.approx(1 / 3))
    assert row(out, players=3, seat=0).score_diff == 20  # 60 - (60 + 20) / 2
    pooled = an.seat_advantage(fake_games(), by=())
    assert row(pooled, seat=0).fair_share == pytest.approx(4 / 9)


def test_seat_advantage_summary():
    out = an.seat_advantage(fake_summary_run())
    r = row(out, seat=0)
    assert (r.players, r.games, r.wins, r.win_rate, r.fair_share) == (2, 10, 6, 0.6, 0.5)
    half = 1.959963984540054 * 10 / math.sqrt(10)  # s = 10 from the sums
    assert (r.score_mean, r.score_mean_low, r.score_mean_high) == pytest.approx((50, 50 - half, 50 + half))
    half = 1.959963984540054 * 6 / math.sqrt(10)
    assert (r.score_diff, r.score_diff_low, r.score_diff_high) == pytest.approx((10, 10 - half, 10 + half))
    assert row(out, seat=1).score_diff == -10


def test_policy_win_matrix():
    out = an.policy_win_matrix(fake_run()).set_index(["policy_a", "policy_b"])
    t = out.loc[("tickets", "random")]
    # pairs: g0 ahead, g1 behind, g2 tied with seat 1 and ahead of seat 2
    assert (t.games, t.pairs, t.ahead_share, t.tie_share, t.behind_share, t.points_share) == (3, 4, 0.5, 0.25, 0.25, 0.625)
    r = out.loc[("random", "tickets")]
    assert (r.ahead_share, r.behind_share, r.points_share) == (0.25, 0.5, 0.375)
    assert len(out) == 2
    with pytest.raises(an.MissingTable):
        an.policy_win_matrix(fake_summary_run())


def test_score_distribution():
    out = an.score_distribution(fake_run()).set_index("policy")
    t = out.loc["tickets"]  # scores 50, 30, 60
    assert (t.games, t.score_mean, t.score_min, t.q50, t.score_max) == (3, pytest.approx(140 / 3), 30, 50, 60)
    assert (t.q25, t.q75) == (40, 55)
    assert t.score_std == pytest.approx(np.std([50, 30, 60], ddof=1))
    s = an.score_distribution(fake_summary_run()).set_index("policy").loc["tickets"]
    assert (s.games, s.score_mean, s.score_std) == (10, 50, 10) and np.isnan(s.q50)
    everything = an.score_distribution(fake_games(), by=(), quantiles=(0.5,))
    assert list(everything.columns[-3:]) == ["score_min", "q50", "score_max"] and everything.q50[0] == 45


def test_by_player_count():
    out = an.by_player_count(fake_run()).set_index("players")
    two = out.loc[2]
    assert (two.games, two.turns_mean) == (2, 90)
    assert (two.turns_mean_low, two.turns_mean_high, two.turns_median) == (80, 100, 90)
    assert (two.all_passed_rate, two.tickets_kept_mean, two.completion_rate, two.score_mean) == (0.5, 1.25, 0.6, 41.25)
    assert (out.loc[3].completion_rate, out.loc[3].turns_mean) == (0.75, 120)
    s = an.by_player_count(fake_summary_run()).set_index("players").loc[2]
    assert (s.games, s.turns_mean, s.all_passed_rate, s.tickets_kept_mean, s.score_mean) == (10, 100, 0.1, 2.25, 45)
    half = 1.959963984540054 * 20 / math.sqrt(10)
    assert s.completion_rate == pytest.approx(35 / 45)
    assert (s.turns_mean_low, s.turns_mean_high) == pytest.approx((100 - half, 100 + half))
