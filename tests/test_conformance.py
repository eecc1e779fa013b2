"""Random-play conformance: invariants after every action, in the core and in Python.

(i) ``play_batch(check=True)``: thousands of random games on every built-in board
(``maps.available()``, so that a new board joins) and player count, the core's
``check_state`` after every action, then the score arrays checked against their parts. (ii) A Python loop over the ``Game`` API that re-checks the
invariants from ``state()`` independently and checks that observations hide what they
must. (iii) Small custom boards on which the deck, the discards and the ticket deck run
dry under hoarding policies: the game still ends (all-pass rule) with every invariant.
"""
from __future__ import annotations

import json
import random
from collections import Counter

import numpy as np
import pytest

from ttrsim import maps
from ttrsim._batch import SCORE_COLS, game_seeds, play_batch
from ttrsim._policies import RandomPolicy
from ttrsim.game import Game, compile_board

WILD = 8
BOARDS = {name: maps.load(name) for name in maps.available()}
CONFIGS = [(name, n) for name, b in BOARDS.items()
           for n in range(b.min_players, b.max_players + 1)]
C = {name: i for i, name in enumerate(SCORE_COLS)}
OBS_KEYS = {"seat", "phase", "current", "turn", "hand", "tickets", "pending", "faceup", "discard",
            "deck_size", "ticket_deck_size", "route_owner", "city_station", "players",
            "last_round", "tunnel"}
OBS_PLAYER_KEYS = {"trains", "stations_left", "route_points", "hand_size", "tickets"}


# ---------------------------------------------------------------------------
# (i) the compiled batch loop with check_state after every action

def beats(board, x, y) -> np.ndarray:
    """x ranks ahead of y (arrays of score rows): total, then the board's tie-breaks."""
    keys = [C["score"]]
    sign = [1]
    for tb in board.tie_breaks:
        keys.append({"tickets": C["tickets_completed"], "fewest_stations": C["stations_built"],
                     "longest": C["longest_bonus"]}[tb])
        sign.append(-1 if tb == "fewest_stations" else 1)
    out = np.zeros(x.shape[0], dtype=bool)
    undecided = np.ones(x.shape[0], dtype=bool)
    for k, sg in zip(keys, sign):
        a, b = sg * x[:, k].astype(int), sg * y[:, k].astype(int)
        out |= undecided & (a > b)
        undecided &= a == b
    return out


def check_score_arrays(board, n, out):
    s = out["scores"].astype(int)
    g = s.shape[0]
    assert not out["truncated"].any()
    parts = (s[..., C["route_points"]] + s[..., C["ticket_points"]] + s[..., C["longest_bonus"]]
             + s[..., C["station_points"]] + s[..., C["attraction_points"]]
             + s[..., C["globetrotter"]])
    assert (s[..., C["score"]] == parts).all()
    # Globetrotter: to every seat tied for the most completed tickets, none when nobody
    # completed one (0 on boards without it)
    most = s[..., C["tickets_completed"]].max(axis=1, keepdims=True)
    want = np.where((s[..., C["tickets_completed"]] == most) & (most > 0),
                    board.globetrotter_bonus, 0)
    assert (s[..., C["globetrotter"]] == want).all()
    assert (s[..., C["tickets_kept"]] == s[..., C["tickets_completed"]] + s[..., C["tickets_failed"]]).all()
    assert (s[..., C["tickets_by_station"]] <= s[..., C["tickets_completed"]]).all()
    assert (s[..., C["tickets_kept"]] >= board.initial_keep).all()
    assert (s[..., C["stations_left"]] + s[..., C["stations_built"]] == board.stations).all()
    assert (s[..., C["station_points"]] == board.station_points * s[..., C["stations_left"]]).all()
    assert ((s[..., C["trains_left"]] >= 0) & (s[..., C["trains_left"]] <= board.trains)).all()
    if board.stations == 0:
        assert (s[..., C["tickets_by_station"]] == 0).all()
    if not board.attractions:
        assert (s[..., C["attraction_points"]] == 0).all()
    # longest bonus: to every seat tied for the longest trail, none when nobody has one
    best = s[..., C["longest"]].max(axis=1, keepdims=True)
    want = np.where((s[..., C["longest"]] == best) & (best > 0), board.longest_bonus, 0)
    assert (s[..., C["longest_bonus"]] == want).all()
    # a game ends by the final round (someone at the trigger) or by everyone passing
    low = (s[..., C["trains_left"]] <= board.end_trigger).any(axis=1)
    assert (low | out["all_passed"]).all()
    # ranks: 1 + the number of seats that rank strictly ahead
    for q in range(n):
        ahead = np.zeros(g, dtype=int)
        for j in range(n):
            if j != q:
                ahead += beats(board, s[:, j], s[:, q])
        assert (s[:, q, C["rank"]] == 1 + ahead).all()
    assert (s[..., C["rank"]].min(axis=1) == 1).all()


@pytest.mark.parametrize("name,n", CONFIGS)
def test_random_batch_keeps_every_invariant(name, n):
    cb = compile_board(name)
    games = 1000 if n <= 3 else 600        # six boards: about the games of the three before
    out = play_batch(cb, n, [RandomPolicy() for _ in range(n)],
                     game_seeds(1000 * n + len(name), games), check=True)
    check_score_arrays(BOARDS[name], n, out)


# ---------------------------------------------------------------------------
# (ii) the same invariants, recomputed in Python from state()

def deck_composition(board) -> Counter:
    deck = Counter({t: int(k) for t, k in enumerate(board.deck_colors)})
    deck[WILD] = board.deck_wild
    return deck


def check_state_py(board, st):
    n = st["n_players"]
    players = st["players"]
    # cards: each in exactly one place
    cards = Counter(st["deck"])
    cards.update({t: k for t, k in enumerate(st["discard"])})
    cards.update(c for c in st["faceup"] if c >= 0)
    for p in players:
        cards.update({t: k for t, k in enumerate(p["hand"])})
        assert min(p["hand"]) >= 0
    if st["phase"] == "tunnel":
        tun = st["tunnel"]
        length = int(board.route_len[tun["route"]])
        assert board.route_tunnel[tun["route"]] and st["route_owner"][tun["route"]] == -1
        cards[WILD] += tun["wild"]
        if tun["color"] != WILD:
            cards[tun["color"]] += length - tun["wild"]
        else:
            assert tun["wild"] == length
        cards.update(tun["revealed"])
        assert 1 <= tun["extra"] <= len(tun["revealed"]) <= 3
    assert +cards == +deck_composition(board), (cards, deck_composition(board))
    # tickets: each in exactly one place
    where = Counter(st["ticket_deck"]) + Counter(st["removed"])
    for p in players:
        where.update(p["tickets"])
        where.update(p["pending"])
        assert p["n_tickets"] == len(p["tickets"])
    assert where == Counter(range(board.n_tickets))
    # offers only to the seat choosing tickets
    for q, p in enumerate(players):
        if st["phase"] == "setup_tickets":
            assert bool(p["pending"]) == (q >= st["current"])
        elif st["phase"] == "keep_tickets" and q == st["current"]:
            assert 1 <= len(p["pending"]) <= board.draw_tickets
        else:
            assert p["pending"] == []
    # routes: owners, trains, points
    owner = st["route_owner"]
    for q, p in enumerate(players):
        own = [r for r in range(board.n_routes) if owner[r] == q]
        assert p["routes"] == own and p["n_routes"] == len(own)
        assert p["trains"] == board.trains - sum(int(board.route_len[r]) for r in own)
        assert 0 <= p["trains"] <= board.trains
        assert p["route_points"] == sum(board.route_points[int(board.route_len[r])] for r in own)
        assert set(p["cities"]) == {int(c) for r in own for c in (board.route_a[r], board.route_b[r])}
    for r in range(board.n_routes):
        m = int(board.route_partner[r])
        if m >= 0 and owner[r] >= 0 and owner[m] >= 0:
            assert owner[r] != owner[m]
            assert n >= board.double_min_players
    # stations
    built = Counter()
    for q, p in enumerate(players):
        assert p["stations_left"] + len(p["stations"]) == board.stations
        for x in p["stations"]:
            assert st["city_station"][x] == q
        built[q] = len(p["stations"])
    assert sum(1 for x in st["city_station"] if x >= 0) == sum(built.values())
    # phase and seat
    assert 0 <= st["current"] < n
    assert st["phase"] in ("setup_tickets", "turn", "second_draw", "keep_tickets", "tunnel", "over")


def check_observation(g, seat):
    obs = g.observation(seat)
    st = g.state()
    assert set(obs) == OBS_KEYS
    me = st["players"][seat]
    assert obs["hand"] == me["hand"] and obs["tickets"] == me["tickets"]
    assert obs["pending"] == me["pending"]
    assert obs["deck_size"] == len(st["deck"]) and obs["ticket_deck_size"] == len(st["ticket_deck"])
    assert obs["faceup"] == st["faceup"] and obs["discard"] == st["discard"]
    for q, p in enumerate(obs["players"]):
        assert set(p) == OBS_PLAYER_KEYS
        assert p["hand_size"] == sum(st["players"][q]["hand"])
        secret = st["phase"] == "setup_tickets" and q != seat
        assert p["tickets"] == (0 if secret else st["players"][q]["n_tickets"])
    if obs["tunnel"] is not None:
        assert st["phase"] == "tunnel" and st["current"] == seat


def encode(kind, a=0, b=0, c=0):
    return (kind << 24) | (a << 16) | (b << 8) | c


def check_legality_agrees(g, board, rnd):
    """is_legal(code) is True exactly for the codes legal_actions lists, over every code
    of a sample of routes and cities (each colour and wild count) and every other kind."""
    legal = set(int(c) for c in g.legal_action_codes())
    cands = {encode(0)} | {encode(1, i) for i in range(5)} | {encode(2), encode(4), encode(8)}
    cands |= {encode(5, m) for m in range(256)} | {encode(7, 0, 0, w) for w in range(5)}
    for r in rnd.sample(range(board.n_routes), 12):
        n = int(board.route_len[r])
        cands |= {encode(3, r, c, w) for c in list(range(len(board.colors))) + [WILD] for w in range(n + 1)}
    for x in rnd.sample(range(board.n_cities), 4):
        cands |= {encode(6, x, c, w) for c in list(range(len(board.colors))) + [WILD] for w in range(4)}
    for code in cands | legal:
        assert g._core.is_legal(code) == (code in legal), (code, g.phase)


@pytest.mark.slow
def test_python_loop_rechecks_invariants_and_hidden_information():
    # every board at its fewest and most players, a game about as long everywhere but on
    # New York (its games are a third as long: three times as many)
    runs = [(name, n, (3 if name == "newyork" else 1) * (14 if n == b.min_players else 7))
            for name, b in BOARDS.items() for n in (b.min_players, b.max_players)]
    total = 0
    for name, n, games in runs:
        board = BOARDS[name]
        for seed in range(games):
            g = Game(name, n, seed=seed)
            rnd = random.Random(seed)
            check_state_py(board, g.state())
            k = 0
            while not g.is_over():
                codes = g.legal_action_codes()
                assert len(codes) > 0
                g.apply(int(codes[rnd.randrange(len(codes))]))
                st = g.state()
                check_state_py(board, st)
                seat = rnd.randrange(n)
                check_observation(g, seat)
                if k % 40 == 0:
                    check_legality_agrees(g, board, rnd)
                if k % 25 == 0:
                    # the observation is unchanged when everything the seat cannot see is
                    # resampled: it reveals nothing of it
                    assert g.determinized(seat, seed + k).observation(seat) == g.observation(seat)
                k += 1
                total += 1
            sc = g.scores()
            for s in sc:
                assert s["total"] == (s["route_points"] + s["ticket_points"] + s["longest_bonus"]
                                      + s["station_points"] + s["attraction_points"]
                                      + s["globetrotter"])
    assert total > 10000


def test_observation_shows_no_other_hand_ticket_or_deck_order():
    # Two positions that differ only in what seat 1 cannot see (seat 0's hand and
    # tickets, the order of the deck and of the ticket deck) look the same to seat 1.
    x = Game.from_position("usa", 2, hands=[{"red": 3}, {"blue": 1}], tickets=[[1, 2], [7]],
                           faceup=["pink"] * 5, seed=1)
    y = Game.from_position("usa", 2, hands=[{"green": 2, "wild": 1}, {"blue": 1}],
                           tickets=[[5, 9], [7]], faceup=["pink"] * 5, seed=2)
    assert x.state()["deck"] != y.state()["deck"]
    assert x.state()["ticket_deck"] != y.state()["ticket_deck"]
    assert x.observation(1) == y.observation(1)
    assert x.observation(0) != y.observation(0)
    obs = x.observation(1)
    assert obs["players"][0] == {"trains": 45, "stations_left": 0, "route_points": 0,
                                 "hand_size": 3, "tickets": 2}


def test_check_names_a_broken_invariant():
    # A state whose card counts no longer add up (one card too many in a hand).
    a = Game.from_position("usa", 2, hands=[{"red": 1}, {}], seed=3)
    b = Game.from_position("usa", 2, hands=[{}, {"red": 1}], seed=3)
    a._core.check()
    raw_a, raw_b = bytearray(a._core.state_bytes()), b._core.state_bytes()
    at = next(i for i in range(len(raw_a)) if raw_a[i] != raw_b[i])   # seat 0's red count
    raw_a[at] += 1
    a._core.load_state_bytes(bytes(raw_a))
    with pytest.raises(AssertionError, match="do not add up"):
        a._core.check()
    # trains left that do not match the routes claimed
    g = Game.from_position("usa", 2, trains=[40, None])
    with pytest.raises(AssertionError, match="trains"):
        g._core.check()
    # the routes closed to every seat without the other half of a double claimed at 2
    # players: the bitset {claimed half, other half} loses the other half
    usa = maps.load("usa")
    r1, r2 = (i for i in range(usa.n_routes)
              if {usa.cities[usa.route_a[i]], usa.cities[usa.route_b[i]]} == {"Boston", "New York"})
    g = Game.from_position("usa", 2, routes=[[], [r1]], seed=3)
    g._core.check()
    closed = ((1 << r1) | (1 << r2)).to_bytes(16, "little")
    raw = bytearray(g._core.state_bytes())
    at = [i for i in range(len(raw) - 15) if raw[i:i + 16] == closed]
    assert len(at) == 1
    raw[at[0]:at[0] + 16] = (1 << r1).to_bytes(16, "little")
    g._core.load_state_bytes(bytes(raw))
    with pytest.raises(AssertionError, match="route bitsets"):
        g._core.check()


# ---------------------------------------------------------------------------
# (iii) the deck, the discards and the ticket deck run dry

def dry_board(tmp_path, *, deck, tickets, stations=0, trains=40):
    """A small board with a tunnel, a ferry and a double route; few cards and tickets."""
    cities = ["A", "B", "C", "D", "E", "F"]
    routes = [("A", "B", 2, "red", False, 0), ("B", "C", 3, "blue", True, 0),
              ("C", "D", 2, "gray", False, 1), ("D", "E", 1, "gray", False, 0),
              ("E", "F", 2, "red", False, 0), ("A", "F", 3, "gray", True, 0),
              ("B", "E", 2, "blue", False, 0), ("B", "E", 2, "red", False, 0)]
    rlist = []
    for i, (a, b, n, c, tun, fer) in enumerate(routes):
        double = {6: 8, 7: 7}.get(i)
        rlist.append({"id": i + 1, "a": a, "b": b, "length": n, "color": c, "tunnel": tun,
                      "ferry": fer, "double": double})
    pairs = [("A", "C"), ("B", "D"), ("A", "E"), ("C", "F"), ("D", "F"), ("A", "D"), ("B", "F"),
             ("C", "E")]
    data = {
        "name": "dry", "title": "runs dry",
        "colors": ["red", "blue"], "wild": "locomotive",
        "cities": [{"name": c, "x": 10 * i, "y": 50} for i, c in enumerate(cities)],
        "routes": rlist,
        "tickets": [{"id": i + 1, "a": a, "b": b, "points": 3 + i, "long": False}
                    for i, (a, b) in enumerate(pairs[:tickets])],
        "rules": {
            "players_min": 2, "players_max": 3, "trains": trains, "stations": stations,
            "station_points": 4 if stations else 0, "initial_hand": 2, "deal_regular": 2,
            "deal_long": 0, "initial_keep": 1, "initial_discards_removed": False,
            "draw_tickets": 3, "draw_keep": 1, "longest_bonus": 10, "double_min_players": 3,
            "end_trigger": 2, "wild_faceup_limit": 3, "max_redeals": 3,
            "deck": deck, "route_points": {"1": 1, "2": 2, "3": 4}, "attraction_points": 0,
            "tie_breaks": ["tickets", "fewest_stations", "longest"] if stations else ["tickets", "longest"],
        },
    }
    path = tmp_path / f"dry{len(list(tmp_path.iterdir()))}.json"
    path.write_text(json.dumps(data))
    return maps.load(str(path))


def hoard_cards(acts, rnd):
    draws = [a for a in acts if a.kind in ("draw_blind", "draw_faceup")]
    if draws:
        return rnd.choice(draws)
    keeps = [a for a in acts if a.kind == "keep"]
    if keeps:
        return max(keeps, key=lambda a: a.mask)            # keep everything
    other = [a for a in acts if a.kind == "draw_tickets"] or acts
    return rnd.choice(other)


def hoard_tickets(acts, rnd):
    keeps = [a for a in acts if a.kind == "keep"]
    if keeps:
        return max(keeps, key=lambda a: a.mask)
    tix = [a for a in acts if a.kind == "draw_tickets"]
    if tix:
        return tix[0]
    draws = [a for a in acts if a.kind in ("draw_blind", "draw_faceup")]
    return rnd.choice(draws or acts)


def play_out(board, n, seed, policy):
    g = Game(board, n, seed=seed)
    rnd = random.Random(seed)
    seen = Counter()
    g._core.check()
    for _ in range(5000):
        if g.is_over():
            break
        st = g.state()
        if st["phase"] == "turn":
            seen["deck_dry"] += not st["deck"] and not any(st["discard"])
            seen["tickets_dry"] += not st["ticket_deck"]
            seen["empty_slot"] += -1 in st["faceup"]
        acts = g.legal_actions()
        a = policy(acts, rnd)
        seen[a.kind] += 1
        g.apply(a)
        g._core.check()
        check_state_py(board, g.state())
    assert g.is_over()
    return g, seen


@pytest.mark.parametrize("n", [2, 3])
def test_card_hoarders_drain_deck_and_discards(tmp_path, n):
    board = dry_board(tmp_path, deck={"red": 6, "blue": 6, "wild": 3}, tickets=8, stations=2)
    ended_by_passes = 0
    for seed in range(30):
        g, seen = play_out(board, n, seed, hoard_cards)
        assert seen["deck_dry"] > 0 and seen["empty_slot"] > 0
        ended_by_passes += g.state()["ended_by_passes"]
        if g.state()["ended_by_passes"]:
            assert seen["pass"] >= n
        sc = g.scores()
        assert all(s["total"] == s["route_points"] + s["ticket_points"] + s["longest_bonus"]
                   + s["station_points"] for s in sc)
    assert ended_by_passes > 0


@pytest.mark.parametrize("n", [2, 3])
def test_ticket_hoarders_drain_the_ticket_deck(tmp_path, n):
    board = dry_board(tmp_path, deck={"red": 8, "blue": 8, "wild": 4}, tickets=8)
    for seed in range(30):
        g, seen = play_out(board, n, seed, hoard_tickets)
        st = g.state()
        assert seen["tickets_dry"] > 0 and st["ticket_deck"] == []
        assert sum(p["n_tickets"] for p in st["players"]) == 8
        assert "draw_tickets" not in {a.kind for a in g.legal_actions()}


def test_random_batch_on_boards_that_run_dry(tmp_path):
    # Few cards, few tickets, many trains: random games end by the all-pass rule too.
    board = dry_board(tmp_path, deck={"red": 4, "blue": 4, "wild": 3}, tickets=6, stations=2)
    cb = compile_board(board)
    for n in (2, 3):
        out = play_batch(cb, n, [RandomPolicy() for _ in range(n)], game_seeds(7 + n, 3000),
                         check=True)
        check_score_arrays(board, n, out)
        assert out["all_passed"].sum() > 0
