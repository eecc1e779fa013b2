"""Properties of the `search` policy that a plausible slip in its code would break:
common random numbers, the value of a playout, departing from the default only on
evidence, every kind of legal action as a candidate, and publicly known cards kept by
the sampler. Each test was checked to fail with such a slip planted."""
import numpy as np
import pytest

import ttrsim
from ttrsim import Game
from ttrsim._policies import decide
from ttrsim._search import _sampled_hands
from ttrsim.actions import Action
from ttrsim.policies import make_policy, make_search_policy


def last_turn_with_hidden_tickets():
    """Europe, 2 players: seat 1 starts the final round; seat 0 has one turn. Seat 1 holds
    three tickets seat 0 cannot see, so every sampled world deals it others and the
    playouts' margins differ from world to world."""
    g = Game.from_position("europe", 2, hands=[{"red": 3}, {"yellow": 2}],
                           tickets=[[36], [3, 17, 40]], routes=[[66], [81]], trains=[3, 4],
                           current=1, seed=5)
    g.apply(g.action("claim", route=11, color="yellow"))
    assert g.state()["last_round"] and g.current_player == 0
    return g


def test_candidates_are_compared_on_the_same_worlds():
    """Two claims that score the same and touch nothing else, and every card draw (the
    cards drawn no longer matter), are worth the same in every world: with common random
    numbers their playout values are equal world by world, while the worlds themselves
    differ (the values vary over the worlds)."""
    g = last_turn_with_hidden_tickets()
    p = make_search_policy(playouts=60, claims=30)
    p.uniform = True
    from ttrsim._search import analyse_position

    rows, _ = analyse_position(p, g, 2)
    values = dict(zip((r[0] for r in rows), p._playout_values()))
    berlin, sarajevo = (_claim(g, values, a, b) for a, b in (("Berlin", "Frankfurt"),
                                                             ("Sarajevo", "Zagrab")))
    blind = g.action("draw_blind").code
    faceups = [c for c in values if Action.decode(c, g.board).kind == "draw_faceup"]
    assert faceups
    assert values[berlin] == values[sarajevo]
    for c in faceups:
        assert values[c] == values[blind]
    assert np.std(values[berlin]) > 0 and np.std(values[blind]) > 0


def _claim(g, values, a, b):
    """The candidate claiming a route between cities a and b."""
    bd = g.board
    found = [c for c in values if Action.decode(c, bd).kind == "claim"
             and {bd.cities[bd.route_a[Action.decode(c, bd).route]],
                  bd.cities[bd.route_b[Action.decode(c, bd).route]]} == {a, b}]
    assert len(found) == 1, (a, b)
    return found[0]


@pytest.mark.parametrize("utility", [0.0, 0.2, 0.5, 1.0])
def test_a_higher_margin_never_lowers_a_playout_s_value(utility):
    p = make_search_policy(utility=utility)
    margins = range(-150, 151)
    for win in (0.0, 0.5, 1.0):
        v = [p._value(win, m) for m in margins]
        assert all(a <= b for a, b in zip(v, v[1:]))
        assert all(0.0 <= x <= 1.0 for x in v)
    for m in margins:                                     # winning never lowers it either
        assert p._value(0.0, m) <= p._value(0.5, m) <= p._value(1.0, m)
    if utility > 0:
        assert p._value(0.0, 10) > p._value(0.0, -10)     # the margin counts
    if utility < 1:
        assert p._value(1.0, 0) > p._value(0.0, 0)        # the win counts
    assert p._value(1.0, 50) == 1.0 and p._value(0.0, -50) == 0.0


def paired_beats(vals, k, z):
    """The paired test of the search's choose(), written again: candidate k's values
    beat the default's (candidate 0) over the worlds both played by more than z
    standard errors."""
    m = min(len(vals[k]), len(vals[0]))
    if m < 2:
        return m > 0 and z == 0 and vals[k][0] > vals[0][0]
    sd = sq = 0.0
    for i in range(m):
        d = vals[k][i] - vals[0][i]
        sd += d
        sq += d * d
    d = sd / m
    sq = (sq - m * d * d) / (m - 1)
    return d > 0 and d * d * m > z * z * sq


def random_positions(n, seed):
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        g = Game(["europe", "usa", "newyork"][len(out) % 3], 2 + len(out) % 3,
                 seed=int(rng.integers(1 << 30)))
        for _ in range(int(rng.integers(5, 80))):
            if g.is_over():
                break
            acts = g.legal_actions()
            g.apply(acts[int(rng.integers(len(acts)))])
        if not g.is_over() and g.phase == "turn":
            out.append(g)
    return out


def test_the_search_departs_from_the_default_only_on_paired_evidence():
    """The choice is the default (the rollout policy's own, candidate 0) unless the best
    candidate still in the race beats it by z paired standard errors; both outcomes
    occur over these positions."""
    departed = kept_by_test = compared = 0
    for i, g in enumerate(random_positions(45, 7)):
        z = (0.0, 1.0, 3.0)[i % 3]
        p = make_policy(f"search:playouts=40,claims=6,z={z}", g.board)
        decide(p, g, seed=i)
        rows, chosen = p.last_decision()
        vals = p._playout_values()
        best = 0
        for k in range(1, len(rows)):
            mean = lambda j: rows[j][2] / rows[j][1]
            if rows[k][5] and rows[k][1] > 0 and mean(k) > mean(best):
                best = k
        expected = best if best != 0 and paired_beats(vals, best, z) else 0
        assert chosen == expected, (i, z, rows)
        for k in range(1, len(rows)):                    # the test itself, every candidate
            assert p._beats_default(k) == paired_beats(vals, k, z), (i, z, k)
            compared += 1
        departed += chosen != 0
        kept_by_test += best != 0 and chosen == 0
    assert departed > 0 and kept_by_test > 0 and compared > 200


def tunnel_position():
    g = Game("europe", 2, seed=0)
    b = g.board
    route = next(r for r in range(b.n_routes) if b.route_tunnel[r] and b.route_len[r] == 2
                 and b.route_ferry[r] == 0 and b.route_color[r] < len(b.colors))
    colour = b.colors[b.route_color[route]]
    g = Game.from_position("europe", 2, hands=[{colour: 4, "wild": 2}, {}],
                           deck_top=[colour, "wild", "blue"], current=0, seed=2)
    g.apply(g.action("claim", route=route, color=colour))
    assert g.phase == "tunnel"
    return g, colour


def test_one_playout_per_candidate_is_no_evidence_for_z_above_zero():
    """With a budget of one playout per candidate (Europe's initial ticket choice: 11
    keep sets, 4 playouts) there is no standard error, so z > 0 keeps the default every
    time; z = 0 takes the best single playout, which departs in some of these games."""
    departed = {0.0: 0, 1.0: 0}
    for i in range(24):
        g = Game("europe", 2, seed=100 + i)
        for z in departed:
            p = make_policy(f"search:playouts=4,z={z}", g.board)
            decide(p, g, seed=i)
            rows, chosen = p.last_decision()
            assert len(rows) == 4 and all(r[1] == 1 for r in rows), rows
            departed[z] += chosen != 0
    assert departed[1.0] == 0 and departed[0.0] > 0, departed


def test_every_kind_of_legal_action_can_be_a_candidate():
    """At a tunnel the search compares declining too; keeping tickets, every keep set; at
    a turn, the blind draw and the ticket draw."""
    g, _ = tunnel_position()
    p = make_policy("search:playouts=8", g.board)
    decide(p, g, seed=1)
    codes = {r[0] for r in p.last_decision()[0]}
    kinds = sorted(Action.decode(c, g.board).kind for c in codes)
    assert kinds == ["tunnel_decline", "tunnel_pay"]

    g = Game("usa", 2, seed=4)
    while g.phase != "turn":
        g.apply(g.legal_actions()[0])
    p = make_policy("search:playouts=8", g.board)
    decide(p, g, seed=1)
    codes = {r[0] for r in p.last_decision()[0]}
    assert {g.action("draw_blind").code, g.action("draw_tickets").code} <= codes
    g.apply(g.action("draw_tickets"))
    decide(p, g, seed=1)
    assert {r[0] for r in p.last_decision()[0]} == {a.code for a in g.legal_actions()}


def test_a_card_taken_face_up_stays_in_the_hand_in_every_sampled_world():
    g = Game.from_position("europe", 2, hands=[{}, {"blue": 3}],
                           faceup=["red", "green", "green", "yellow", "black"], current=0, seed=1)
    red = g.board.colors.index("red")
    g.apply(g.action("draw_faceup", slot=0))
    g.apply(g.action("draw_blind"))
    assert g.current_player == 1
    for seed in range(40):
        hands = _sampled_hands(g, 1, seed, 5.0)
        assert hands[0][red] >= 1 and sum(hands[0]) == 2


def test_cards_shown_at_a_declined_tunnel_stay_in_the_hand_in_every_sampled_world():
    g, colour = tunnel_position()
    c = g.board.colors.index(colour)
    decline = next(a for a in g.legal_actions() if a.kind == "tunnel_decline")
    g.apply(decline)
    assert g.current_player == 1
    assert g.state()["players"][0]["known"][c] == 2
    for seed in range(40):
        hands = _sampled_hands(g, 1, seed, 5.0)
        assert hands[0][c] >= 2 and sum(hands[0]) == 6


def test_the_row_marked_best_never_wins_less_often_than_another():
    """`ttrsim.analyse` ranks by win rate, its utility (the value the search maximises,
    here the margin alone) only breaking ties: the row marked best has the highest win
    rate, and every row above another wins at least as often. Checked where the two
    orders disagree (the row of highest utility wins less often than another), which a
    ranking by utility, or `best` taken before sorting, would get wrong."""
    disagree = 0
    for seed in (0, 1, 4, 5):
        g = Game("newyork", 2, seed=seed)
        players = [make_policy("tickets", None) for _ in range(2)]
        for k in range(30):
            if g.phase == "turn" and k % 3 == 0:
                df = ttrsim.analyse(g, playouts=12, seed=1, rollout="tickets", utility=1.0)
                best = df[df["best"]]
                assert len(best) == 1 and best["win_rate"].iloc[0] == df["win_rate"].max()
                assert (df["win_rate"].diff().dropna() <= 0).all()
                assert (df["tied"] == (df["win_rate"] == df["win_rate"].max())).all()
                disagree += df.loc[df["utility"].idxmax(), "win_rate"] < df["win_rate"].max()
            g.apply(decide(players[g.current_player], g, seed=k))
    assert disagree >= 2, disagree
