"""Longest trail and station choice against independent brute-force methods.

Longest trail: the longest trail in a set of routes is the largest total length of a
subset of them that forms one connected piece with 0 or 2 cities of odd degree (an Euler
trail exists exactly then); every subset is enumerated.

Station choice: every assignment of one route (or none) to each station built is
enumerated; the best ticket score, then the most tickets completed, must be what the
engine reports.

Needed routes: in played games, each route of a seat is dropped in turn from its final
network (own routes plus the routes its stations borrow); it is needed exactly when a
completed ticket of the seat is then no longer joined.
"""
from __future__ import annotations

import itertools
import random

import pytest

from ttrsim import maps
from ttrsim.game import Game
from ttrsim.runner import simulate


# ---------------------------------------------------------------------------
# positions

def small_board(seed: int, n_cities: int = 7, stations: int = 3):
    """A dense random board (many loops) with every city pair as a ticket."""
    rnd = random.Random(seed)
    cities = [f"C{i}" for i in range(n_cities)]
    routes, rid = [], 1
    for a, b in itertools.combinations(cities, 2):
        if rnd.random() < 0.7:
            n = rnd.randint(1, 4)
            if rnd.random() < 0.2:                            # a double route
                routes.append(dict(id=rid, a=a, b=b, length=n, color="red", tunnel=False,
                                   ferry=0, double=rid + 1))
                routes.append(dict(id=rid + 1, a=a, b=b, length=n, color="blue", tunnel=False,
                                   ferry=0, double=rid))
                rid += 2
            else:
                routes.append(dict(id=rid, a=a, b=b, length=n, color="gray", tunnel=False,
                                   ferry=0, double=None))
                rid += 1
    tickets = [dict(id=i + 1, a=a, b=b, points=rnd.randint(1, 12), long=False)
               for i, (a, b) in enumerate(itertools.combinations(cities, 2))]
    data = {
        "name": f"rand{seed}", "title": "random test board", "colors": ["red", "blue"],
        "wild": "locomotive",
        "cities": [{"name": c, "x": 10 * i, "y": 50} for i, c in enumerate(cities)],
        "routes": routes, "tickets": tickets,
        "rules": {
            "players_min": 2, "players_max": 4, "trains": 45, "stations": stations,
            "station_points": 4, "initial_hand": 4, "deal_regular": 3, "deal_long": 0,
            "initial_keep": 2, "initial_discards_removed": False, "draw_tickets": 3,
            "draw_keep": 1, "longest_bonus": 10, "double_min_players": 4, "end_trigger": 2,
            "wild_faceup_limit": 3, "max_redeals": 3, "deck": {"red": 30, "blue": 30, "wild": 10},
            "route_points": {"1": 1, "2": 2, "3": 4, "4": 7}, "attraction_points": 0,
            "tie_breaks": ["tickets", "fewest_stations", "longest"],
        },
    }
    return maps.from_dict(data)


def deal_routes(board, rnd, n_players, per_seat, cluster=0.85):
    """Random routes per seat, mostly next to the seat's own routes (so that they form
    loops and long trails); never both halves of a double, nor more trains than a seat has."""
    taken = set()
    out = []
    for q in range(n_players):
        mine, cities, left = [], set(), int(board.trains)
        for _ in range(per_seat):
            free = [r for r in range(board.n_routes) if r not in taken
                    and int(board.route_len[r]) <= left
                    and (board.route_partner[r] < 0 or board.route_partner[r] not in taken)]
            near = [r for r in free if int(board.route_a[r]) in cities or int(board.route_b[r]) in cities]
            pool = near if near and rnd.random() < cluster else free
            if not pool:
                break
            r = rnd.choice(pool)
            taken.add(r)
            mine.append(r)
            left -= int(board.route_len[r])
            cities |= {int(board.route_a[r]), int(board.route_b[r])}
        out.append(mine)
    return out


# ---------------------------------------------------------------------------
# longest trail

def brute_longest(board, own) -> int:
    """Largest total length of a connected subset of routes with 0 or 2 odd cities."""
    m = len(own)
    ends = [(int(board.route_a[r]), int(board.route_b[r])) for r in own]
    lens = [int(board.route_len[r]) for r in own]
    total = [0] * (1 << m)
    best = 0
    for mask in range(1, 1 << m):
        low = (mask & -mask).bit_length() - 1
        total[mask] = total[mask & (mask - 1)] + lens[low]
        if total[mask] <= best:
            continue
        deg = {}
        parent = {}

        def find(x):
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        for i in range(m):
            if mask >> i & 1:
                a, b = ends[i]
                deg[a] = deg.get(a, 0) + 1
                deg[b] = deg.get(b, 0) + 1
                parent.setdefault(a, a)
                parent.setdefault(b, b)
                parent[find(a)] = find(b)
        if len({find(x) for x in parent}) != 1:
            continue
        if sum(d & 1 for d in deg.values()) in (0, 2):
            best = total[mask]
    return best


def test_brute_longest_on_known_shapes():
    usa = maps.load("usa")

    def r(a, b, color=None):
        ends = {usa.city_index[a], usa.city_index[b]}
        return next(i for i in range(usa.n_routes) if {int(usa.route_a[i]), int(usa.route_b[i])} == ends
                    and (color is None or usa.color_name(int(usa.route_color[i])) == color))

    tri = [r("Denver", "Santa Fe"), r("Santa Fe", "Oklahoma City"), r("Oklahoma City", "Denver", "red")]
    assert brute_longest(usa, tri) == 9
    assert brute_longest(usa, tri + [r("El Paso", "Santa Fe")]) == 11
    assert brute_longest(usa, tri + [r("El Paso", "Santa Fe"), r("Denver", "Phoenix")]) == 14


def test_longest_trail_of_a_loop_beside_a_path():
    """The search starts only at cities where an odd number of own routes meet; a piece
    where every city is even (here a loop) is counted whole. A loop and a separate path:
    whichever is longer is the longest trail."""
    usa = maps.load("usa")

    def r(a, b, color=None):
        ends = {usa.city_index[a], usa.city_index[b]}
        return next(i for i in range(usa.n_routes) if {int(usa.route_a[i]), int(usa.route_b[i])} == ends
                    and (color is None or usa.color_name(int(usa.route_color[i])) == color))

    loop = [r("Denver", "Santa Fe"), r("Santa Fe", "Oklahoma City"), r("Oklahoma City", "Denver", "red")]
    short = [r("Boston", "Montréal"), r("Montréal", "Toronto")]               # 2 + 3
    long_ = short + [r("Toronto", "Duluth"), r("Duluth", "Winnipeg", "black")]  # + 6 + 4
    for path, want in ((short, 9), (long_, 15)):         # the loop is 2 + 3 + 4
        owned = [loop + path, []]
        assert brute_longest(usa, owned[0]) == want
        g = Game.from_position(usa, 2, routes=owned)
        assert g.longest_trail(0) == want


@pytest.mark.parametrize("name,n_players,per_seat,positions", [
    ("usa", 2, 12, 100), ("usa", 4, 9, 50), ("europe", 3, 12, 100), ("newyork", 2, 11, 100),
    ("usa-mega", 3, 10, 40),
])
def test_longest_trail_on_real_boards(name, n_players, per_seat, positions):
    board = maps.load(name)
    rnd = random.Random(name)
    for k in range(positions):
        owned = deal_routes(board, rnd, n_players, per_seat)
        g = Game.from_position(board, n_players, routes=owned, seed=k)
        sc = g.scores()
        for q in range(n_players):
            want = brute_longest(board, owned[q])
            assert g.longest_trail(q) == want, (name, owned[q])
            assert sc[q]["longest"] == want


def test_longest_trail_on_dense_random_boards():
    checked = 0
    for seed in range(60):
        board = small_board(seed)
        rnd = random.Random(seed)
        for k in range(4):
            per_seat = rnd.randint(3, 12)
            owned = deal_routes(board, rnd, 2, per_seat, cluster=1.0)
            g = Game.from_position(board, 2, routes=owned, seed=k)
            best = max(brute_longest(board, o) for o in owned)
            for q in range(2):
                want = brute_longest(board, owned[q])
                assert g.longest_trail(q) == want, (seed, owned[q])
                assert g.scores()[q]["longest"] == want
                assert g.scores()[q]["longest_bonus"] == (10 if want == best and best > 0 else 0)
                checked += 1
    assert checked == 480


# ---------------------------------------------------------------------------
# station choice

def brute_stations(board, owner, seat, tickets, stations):
    """Best (ticket points, tickets completed) over every choice of one route of another
    player entering each station's city, or none."""
    options = []
    for x in stations:
        opts = [r for r in range(board.n_routes) if owner[r] >= 0 and owner[r] != seat
                and x in (int(board.route_a[r]), int(board.route_b[r]))]
        options.append([None] + opts)
    own = [r for r in range(board.n_routes) if owner[r] == seat]
    best = None
    for choice in itertools.product(*options):
        parent = list(range(board.n_cities))

        def find(v):
            while parent[v] != v:
                parent[v] = parent[parent[v]]
                v = parent[v]
            return v

        for r in own + [c for c in choice if c is not None]:
            parent[find(int(board.route_a[r]))] = find(int(board.route_b[r]))
        done = [t for t in tickets if find(int(board.ticket_a[t])) == find(int(board.ticket_b[t]))]
        pts = sum(int(board.ticket_points[t]) * (1 if t in done else -1) for t in tickets)
        key = (pts, len(done))
        if best is None or key > best:
            best = key
    return best


def connected(board, routes_, a, b) -> bool:
    parent = list(range(board.n_cities))

    def find(v):
        while parent[v] != v:
            v = parent[v]
        return v

    for r in routes_:
        parent[find(int(board.route_a[r]))] = find(int(board.route_b[r]))
    return find(a) == find(b)


def check_station_choice(board, g, seat, tickets, stations):
    st = g.state()
    owner = st["route_owner"]
    sc = g.scores()[seat]
    want = brute_stations(board, owner, seat, tickets, stations)
    assert (sc["ticket_points"], sc["tickets_completed"]) == want, (tickets, stations)
    # the engine's own choice is a legal one and gives what it reports
    assert len(sc["borrowed"]) == len(stations)
    for x, r in zip(stations, sc["borrowed"]):
        if r >= 0:
            assert owner[r] not in (-1, seat) and x in (int(board.route_a[r]), int(board.route_b[r]))
    own = [r for r in range(board.n_routes) if owner[r] == seat]
    net = own + [r for r in sc["borrowed"] if r >= 0]
    done = [t for t in tickets if connected(board, net, int(board.ticket_a[t]), int(board.ticket_b[t]))]
    plain = [t for t in tickets if connected(board, own, int(board.ticket_a[t]), int(board.ticket_b[t]))]
    assert sc["completed"] == sorted(done)
    assert sc["by_station"] == sorted(set(done) - set(plain))
    assert sc["tickets_by_station"] == len(set(done) - set(plain))
    assert sc["tickets_failed"] == len(tickets) - len(done)


def test_station_choice_on_dense_random_boards():
    improved = 0
    for seed in range(60):
        board = small_board(100 + seed, n_cities=8)
        rnd = random.Random(seed)
        for k in range(3):
            n = rnd.randint(2, 4)
            owned = deal_routes(board, rnd, n, rnd.randint(2, 6), cluster=0.6)
            cities = rnd.sample(range(board.n_cities), board.n_cities)
            counts = [rnd.randint(0, 3) for _ in range(n)]
            stations = [cities[sum(counts[:q]): sum(counts[:q + 1])] for q in range(n)]
            pool = rnd.sample(range(board.n_tickets), board.n_tickets)
            tickets = [pool[4 * q: 4 * q + rnd.randint(1, 4)] for q in range(n)]
            g = Game.from_position(board, n, routes=owned, stations=stations, tickets=tickets, seed=k)
            for q in range(n):
                check_station_choice(board, g, q, tickets[q], stations[q])
                improved += g.scores()[q]["tickets_by_station"] > 0
    assert improved > 50          # the stations mattered in many of these positions


def test_station_choice_on_europe():
    board = maps.load("europe")
    rnd = random.Random(5)
    improved = 0
    for k in range(200):
        n = rnd.randint(2, 5)
        owned = deal_routes(board, rnd, n, rnd.randint(4, 12), cluster=0.9)
        # stations on cities next to the seat's own network, where they can help
        stations = []
        used = set()
        for q in range(n):
            near = sorted({int(c) for r in owned[(q + 1) % n] for c in (board.route_a[r], board.route_b[r])}
                          - used)
            mine = rnd.sample(near, min(len(near), rnd.randint(1, 3)))
            used |= set(mine)
            stations.append(mine)
        # tickets between cities that someone's routes reach, so that stations can matter
        touched = {int(c) for o in owned for r in o for c in (board.route_a[r], board.route_b[r])}
        regular = [t for t in range(board.n_tickets) if not board.ticket_long[t]
                   and int(board.ticket_a[t]) in touched and int(board.ticket_b[t]) in touched]
        regular += [t for t in range(40) if t not in regular][: max(0, 5 * n - len(regular))]
        pool = rnd.sample(regular, len(regular))
        tickets = [pool[5 * q: 5 * q + rnd.randint(1, 5)] + ([40 + q] if rnd.random() < 0.3 else [])
                   for q in range(n)]
        g = Game.from_position(board, n, routes=owned, stations=stations, tickets=tickets, seed=k)
        for q in range(n):
            check_station_choice(board, g, q, tickets[q], stations[q])
            improved += g.scores()[q]["tickets_by_station"] > 0
    assert improved > 20


# ---------------------------------------------------------------------------
# Globetrotter and ranks

def brute_final(board, owned, tickets, longest):
    """Per seat: (completed tickets, Globetrotter, longest bonus, total, rank) from the
    routes and tickets alone (no stations): connectivity by union-find, bonuses to every
    seat tied for the most, ranks by total and the board's tie-breaks."""
    pts = board.route_points
    done = [sum(connected(board, own, int(board.ticket_a[t]), int(board.ticket_b[t])) for t in tk)
            for own, tk in zip(owned, tickets)]
    tpts = [sum(int(board.ticket_points[t]) * (1 if connected(board, own, int(board.ticket_a[t]),
                                                               int(board.ticket_b[t])) else -1)
                for t in tk) for own, tk in zip(owned, tickets)]
    most, best = max(done), max(longest)
    globe = [board.globetrotter_bonus if board.globetrotter_bonus and most > 0 and d == most else 0
             for d in done]
    lb = [board.longest_bonus if board.longest_bonus and best > 0 and x == best else 0
          for x in longest]
    total = [sum(pts[int(board.route_len[r])] for r in own) + tp + g + b
             for own, tp, g, b in zip(owned, tpts, globe, lb)]

    def key(q):
        k = [total[q]]
        for tb in board.tie_breaks:
            k.append(done[q] if tb == "tickets" else lb[q] > 0 if tb == "longest" else 0)
        return tuple(k)

    rank = [1 + sum(key(j) > key(q) for j in range(len(owned))) for q in range(len(owned))]
    return list(zip(done, globe, lb, total, rank))


@pytest.mark.parametrize("name", ["usa-1910", "usa-mega", "usa-bigcities"])
def test_globetrotter_and_ranks_on_random_positions(name):
    board = maps.load(name)
    rnd = random.Random(name)
    shared = nobody = 0
    for k in range(150):
        n = rnd.randint(2, 5)
        owned = deal_routes(board, rnd, n, rnd.randint(0, 9), cluster=0.8)
        # mostly tickets between cities the seat's routes touch, so that some are completed
        tickets, free = [], set(range(board.n_tickets))
        for q in range(n):
            touched = {int(c) for r in owned[q] for c in (board.route_a[r], board.route_b[r])}
            near = sorted(t for t in free if int(board.ticket_a[t]) in touched
                          and int(board.ticket_b[t]) in touched)
            mine = rnd.sample(near, min(len(near), rnd.randint(0, 3)))
            mine += rnd.sample(sorted(free - set(mine)), rnd.randint(0, 2))
            free -= set(mine)
            tickets.append(mine)
        g = Game.from_position(board, n, routes=owned, tickets=tickets, seed=k)
        sc = g.scores()
        longest = [s["longest"] for s in sc]
        want = brute_final(board, owned, tickets, longest)
        got = [(s["tickets_completed"], s["globetrotter"], s["longest_bonus"], s["total"], s["rank"])
               for s in sc]
        assert got == want, (k, owned, tickets)
        shared += sum(s["globetrotter"] > 0 for s in sc) > 1
        nobody += all(s["tickets_completed"] == 0 for s in sc)
    if board.globetrotter_bonus:
        assert shared > 5 and nobody > 5       # both rulings were exercised


def test_station_choice_with_the_globetrotter():
    # Ruling: the station choice maximises the seat's own ticket points (then tickets), as
    # without the bonus; the Globetrotter then goes to the most completed tickets
    from ttrsim.variants import variant
    checked = 0
    for seed in range(30):
        board = variant(small_board(300 + seed, n_cities=8), rules={"globetrotter_bonus": 15})
        rnd = random.Random(seed)
        n = rnd.randint(2, 4)
        owned = deal_routes(board, rnd, n, rnd.randint(2, 6), cluster=0.6)
        cities = rnd.sample(range(board.n_cities), board.n_cities)
        counts = [rnd.randint(0, 2) for _ in range(n)]
        stations = [cities[sum(counts[:q]): sum(counts[:q + 1])] for q in range(n)]
        pool = rnd.sample(range(board.n_tickets), board.n_tickets)
        tickets = [pool[4 * q: 4 * q + rnd.randint(1, 4)] for q in range(n)]
        g = Game.from_position(board, n, routes=owned, stations=stations, tickets=tickets, seed=seed)
        sc = g.scores()
        for q in range(n):
            check_station_choice(board, g, q, tickets[q], stations[q])
        most = max(s["tickets_completed"] for s in sc)
        assert [s["globetrotter"] for s in sc] == [
            15 if most > 0 and s["tickets_completed"] == most else 0 for s in sc]
        checked += 1
    assert checked == 30


# ---------------------------------------------------------------------------
# needed routes

def check_needed(run) -> tuple[int, int]:
    """Compare the routes table's `needed` column with a drop-one-route check of every
    claim; returns (claims that are needed, claims of seats with a borrowed route)."""
    board = run.board
    route_ix = {int(i): k for k, i in enumerate(board.route_id)}
    ticket_ix = {int(i): k for k, i in enumerate(board.ticket_id)}
    borrowed = {key: [route_ix[int(r)] for r in grp.borrowed if r >= 0]
                for key, grp in run.stations.groupby(["game", "seat"])}
    t = run.tickets[run.tickets.completed]
    completed = {key: [ticket_ix[int(i)] for i in grp.ticket]
                 for key, grp in t.groupby(["game", "seat"])}
    n_needed = n_borrowing = 0
    for key, grp in run.routes.groupby(["game", "seat"]):
        own = [route_ix[int(r)] for r in grp.route]
        lent = borrowed.get(key, [])
        done = completed.get(key, [])
        for r, got in zip(own, grp.needed):
            net = [x for x in own if x != r] + lent
            want = any(not connected(board, net, int(board.ticket_a[i]), int(board.ticket_b[i]))
                       for i in done)
            assert bool(got) == want, (key, int(board.route_id[r]))
            n_needed += want
            n_borrowing += bool(lent)
    return n_needed, n_borrowing


@pytest.mark.parametrize("board,policies", [
    ("europe", ["tickets", "tickets", "random", "tickets"]),
    ("europe", ["tickets", "routes", "greedy"]),
    ("usa", ["tickets", "tickets", "random", "routes", "tickets"]),
])
def test_needed_routes_of_played_games(board, policies):
    run = simulate(board, policies, games=150, seed=7)
    n_needed, n_borrowing = check_needed(run)
    assert 0 < n_needed < len(run.routes)
    if board == "europe":
        assert n_borrowing > 0


def test_needed_routes_on_dense_random_boards():
    # loops everywhere, so many routes are not needed even on joined tickets
    total = 0
    for seed in range(10):
        board = small_board(200 + seed, n_cities=8)
        run = simulate(board, ["tickets", "random", "tickets", "random"], games=40, seed=seed)
        total += check_needed(run)[0]
    assert total > 0
