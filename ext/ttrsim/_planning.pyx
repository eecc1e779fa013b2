# Planning helpers for compiled policies (declarations and notes in _planning.pxd).
#
# The central piece is `plan_tickets`, a Steiner-forest heuristic: tickets are connected
# one after the other (longest first) by shortest paths over the routes the seat can
# still use, where its own routes and the routes already planned cost nothing. Weights
# are small integers (UNIT per train, plus the turn of a claim, minus the route's
# points, plus penalties for tunnels, ferries and stations), so Dijkstra runs on a ring
# of buckets, each a bitset of cities (a board has at most 64).
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint64_t
from libc.string cimport memcpy, memset

from ttrsim._structs cimport *
from ttrsim._bits cimport clear_bit, count_bits, get_bit, lowest_bit, set_bit
from ttrsim._engine cimport (CompiledBoard, copy_position, action_a, action_b, action_c, action_kind,
                             claimed_routes, hand_total, is_legal, legal_actions, make_action,
                             route_open)

cdef double FAST_WEIGHT = 0.6     # weight of the fastest possible end in rounds_left

cdef double SURE_FAIL = 1.0 - 1e-9  # a tunnel reveal failing with this chance surely fails

cdef int8_t CITY_IDS[MAX_CITIES]    # 0, 1, 2, ...: every city alone (own_components)
for _x in range(MAX_CITIES):
    CITY_IDS[_x] = _x
del _x

cdef enum:
    N_BUCKETS = MAX_WEIGHT + 1  # Dijkstra's ring of buckets (a power of two, >= 64)
    BUCKET_WORDS = N_BUCKETS // 64
    WILD_COST = 3             # payment cost of a wild card (a coloured card costs 1)
    KEEP_COST = 2             # extra cost of a card the rest of the plan wants


# ---------------------------------------------------------------------------
# weights and shortest paths

cdef int open_weight(const BoardC* b, const PlanParams* prm, int r) noexcept nogil:
    """Weight of claiming route r: UNIT per train (a card to draw and a train to place)
    plus the turn spent claiming it, less its points and those of the tourist
    attractions it touches (so that one long route is worth more than several short
    ones of the same length), plus the tunnel and ferry penalties. At least 1."""
    if b.route_tunnel[r] and not prm.tunnels:
        return INF_COST
    cdef int w = (UNIT * b.route_len[r] + prm.claim_cost
                  - prm.points_weight * b.route_points[b.route_len[r]]
                  + b.route_ferry[r] * prm.ferry_cost)
    # tourist attractions (New York) score once per city touched: count them as points
    w -= prm.points_weight * b.attraction_points * (
        ((b.attractions >> b.route_a[r]) & 1) + ((b.attractions >> b.route_b[r]) & 1))
    if b.route_tunnel[r]:
        w += prm.tunnel_cost
    return 1 if w < 1 else MAX_WEIGHT if w > MAX_WEIGHT else w


cdef void board_info_init(BoardInfo* bi, const BoardC* b, const PlanParams* prm) noexcept nogil:
    """Route weights and all-pairs shortest weights of the empty board (Floyd-Warshall;
    used to order tickets and to judge them before any route is claimed)."""
    cdef int x, y, z, r, d, i
    cdef int n = b.n_cities
    bi.b = b
    for x in range(n):
        bi.nbr_bits[x] = 0
        for i in range(b.n_adj[x]):
            r = b.adj[x][i]
            y = b.route_a[r] + b.route_b[r] - x
            if not (bi.nbr_bits[x] >> y) & 1:
                bi.nbr_bits[x] |= (<uint64_t>1) << y
                bi.link[x][y][0] = bi.link[x][y][1] = r
            else:
                bi.link[x][y][1] = r
    for x in range(n):
        for y in range(n):
            bi.dist0[x][y] = 0 if x == y else 30000
    memset(bi.longer, 0, sizeof(bi.longer))
    for r in range(b.n_routes):
        for d in range(b.route_len[r]):
            set_bit(bi.longer[d], r)
    for r in range(b.n_routes):
        bi.weight[r] = open_weight(b, prm, r)
        x = b.route_a[r]
        y = b.route_b[r]
        if bi.weight[r] < bi.dist0[x][y]:
            bi.dist0[x][y] = bi.weight[r]
            bi.dist0[y][x] = bi.weight[r]
    for z in range(n):
        for x in range(n):
            for y in range(n):
                d = bi.dist0[x][z] + bi.dist0[z][y]
                if d < bi.dist0[x][y]:
                    bi.dist0[x][y] = d


cdef inline int station_weight(const PlanParams* prm, int built) noexcept nogil:
    # station number built+1 costs built+1 cards and the points of a station kept
    cdef int w = prm.station_cost + UNIT * (built + 1)
    return 1 if w < 1 else MAX_WEIGHT if w > MAX_WEIGHT else w


cdef void route_weights(const BoardInfo* bi, const PlanParams* prm, const GameState* s,
                        int seat, int32_t* w) noexcept nogil:
    """Weight of every route for `seat` now: 0 for its own routes, the open weight for
    routes it may still claim (and has the trains for), INF_COST for the rest; with
    stations, a route of another player costs a station (1 when the seat already has a
    station at one of its ends). Starts from the open weights and visits only the
    routes that differ (claimed ones, closed halves of doubles, those too long)."""
    cdef const BoardC* b = bi.b
    cdef const PlayerC* p = &s.p[seat]
    cdef int r, o, x, y, q, wd
    cdef int built = b.stations - p.stations_left
    cdef int borrow = station_weight(prm, built) if prm.stations and p.stations_left > 0 else INF_COST
    cdef bint doubles_closed = s.n_players < b.double_min_players
    cdef uint64_t owned[2]
    cdef uint64_t bits
    claimed_routes(s, owned)
    memcpy(w, bi.weight, b.n_routes * sizeof(int32_t))
    for wd in range(2):
        # open routes longer than the trains left
        bits = longer_than(bi, p.trains, wd) & ~owned[wd]
        while bits:
            w[(wd << 6) + lowest_bit(bits)] = INF_COST
            bits &= bits - 1
        bits = owned[wd]
        while bits:
            r = (wd << 6) + lowest_bit(bits)
            bits &= bits - 1
            o = s.route_owner[r]
            # the open half of a claimed double, closed to this seat (route_open)
            q = b.route_partner[r]
            if q >= 0 and s.route_owner[q] < 0 and (doubles_closed or o == seat):
                w[q] = INF_COST
            if o == seat:
                w[r] = 0
            elif prm.stations:
                x = b.route_a[r]
                y = b.route_b[r]
                if s.city_station[x] == seat or s.city_station[y] == seat:
                    w[r] = 1
                elif s.city_station[x] < 0 or s.city_station[y] < 0:
                    w[r] = borrow
                else:
                    w[r] = INF_COST
            else:
                w[r] = INF_COST


cdef int shortest_path(const BoardInfo* bi, const int32_t* w, int src, int dst, int32_t* dist,
                       int16_t* pred) noexcept nogil:
    """Dijkstra from src over routes of weight w (INF_COST: unusable). Returns the weight
    of the best path to dst (INF_COST if none) and fills pred (route into each reached
    city, -1 at the source); with dst < 0 it settles every reachable city and returns 0."""
    return shortest_from(bi, w, (<uint64_t>1) << src, dst, dist, pred)


cdef inline int next_bucket(const uint64_t* occ, int p) noexcept nogil:
    """First occupied bucket at or after p on the ring of N_BUCKETS (-1: none)."""
    cdef int w = p >> 6, i, k
    cdef uint64_t m = occ[w] & (~(<uint64_t>0) << (p & 63))
    if m:
        return (w << 6) + lowest_bit(m)
    for i in range(1, BUCKET_WORDS):
        k = (w + i) & (BUCKET_WORDS - 1)
        if occ[k]:
            return (k << 6) + lowest_bit(occ[k])
    m = occ[w] & (((<uint64_t>1) << (p & 63)) - 1)
    if m:
        return (w << 6) + lowest_bit(m)
    return -1


cdef int shortest_from(const BoardInfo* bi, const int32_t* w, uint64_t sources, int dst,
                       int32_t* dist, int16_t* pred) noexcept nogil:
    """shortest_path from a set of cities (a bitset) at once.

    Dial's algorithm: weights are below N_BUCKETS (see MAX_WEIGHT), so the tentative
    distances always fit a ring of N_BUCKETS buckets, each a bitset of cities, with an
    occupancy mask to jump to the next non-empty one. Cities whose distance dropped stay
    in their old bucket and are skipped there (already done)."""
    cdef uint64_t bucket[N_BUCKETS]          # zero when empty (popping empties them)
    cdef uint64_t occ[BUCKET_WORDS]
    cdef const BoardC* b = bi.b
    cdef uint64_t done = 0, bit, m
    cdef int x, y, r, q, k, cur = 0, p
    cdef int32_t nd
    cdef uint64_t lt
    memset(occ, 0, sizeof(occ))
    memset(bucket, 0, sizeof(bucket))
    for x in range(b.n_cities):
        dist[x] = INF_COST
    m = sources
    while m:
        x = lowest_bit(m)
        m &= m - 1
        dist[x] = 0
        pred[x] = -1
    bucket[0] = sources
    occ[0] = 1 if sources else 0
    while True:
        # (cur >= 0 and N_BUCKETS a power of two: masks, not signed remainders)
        p = next_bucket(occ, cur & (N_BUCKETS - 1))
        if p < 0:
            break
        cur += (p - cur) & (N_BUCKETS - 1)
        x = lowest_bit(bucket[p])
        bucket[p] &= bucket[p] - 1
        if bucket[p] == 0:
            occ[p >> 6] &= ~((<uint64_t>1) << (p & 63))
        bit = (<uint64_t>1) << x
        if done & bit:
            continue                          # a stale entry
        done |= bit
        if x == dst:
            return cur
        # Relax without branches: an unusable route (cur + INF_COST) never passes
        # `nd < dist[y]`, so that one test decides, and it is applied by masks (it is
        # hard to predict). Settled cities are skipped (they would never pass it), and
        # each neighbour is relaxed once, by the lighter route of a double (the first
        # in b.adj order on a tie): the same distances and routes as relaxing every
        # route in b.adj order.
        m = bi.nbr_bits[x] & ~done
        while m:
            y = lowest_bit(m)
            m &= m - 1
            r = bi.link[x][y][0]
            q = bi.link[x][y][1]
            r = q if w[q] < w[r] else r
            nd = cur + w[r]
            lt = nd < dist[y]
            dist[y] = nd if lt else dist[y]
            pred[y] = r if lt else pred[y]
            k = nd & (N_BUCKETS - 1)
            bucket[k] |= lt << y
            occ[k >> 6] |= lt << (k & 63)
    return 0 if dst < 0 else INF_COST


cdef bint ticket_connected(const BoardC* b, const GameState* s, int seat,
                           int ticket) noexcept nogil:
    """Whether the seat's own routes already join the ticket's cities (stations not
    counted)."""
    return connected_with(b, s, seat, ticket, -1)


cdef bint connected_with(const BoardC* b, const GameState* s, int seat, int ticket,
                         int extra) noexcept nogil:
    """Whether the seat's own routes plus route `extra` (-1: none) join the ticket's
    cities: a flood fill over city bitsets."""
    cdef uint64_t reach = (<uint64_t>1) << b.ticket_a[ticket], grown, f
    cdef uint64_t target = (<uint64_t>1) << b.ticket_b[ticket]
    cdef uint64_t mine = s.p[seat].cities
    cdef int x, i, r
    if extra >= 0:
        mine |= ((<uint64_t>1) << b.route_a[extra]) | ((<uint64_t>1) << b.route_b[extra])
    if not (mine & target) or not (mine & reach):
        return False
    while True:
        grown = reach
        f = reach
        while f:
            x = lowest_bit(f)
            f &= f - 1
            for i in range(b.n_adj[x]):
                r = b.adj[x][i]
                if s.route_owner[r] == seat or r == extra:
                    grown |= ((<uint64_t>1) << b.route_a[r]) | ((<uint64_t>1) << b.route_b[r])
        if grown & target:
            return True
        if grown == reach:
            return False
        reach = grown


# ---------------------------------------------------------------------------
# the Steiner-forest plan

cdef void own_components(const BoardC* b, const GameState* s, int seat,
                         int8_t* comp) noexcept nogil:
    """Label every city with a representative of its component in the seat's own
    network (union-find over its routes; a city it does not touch is alone)."""
    cdef int x, r, u, v, wd
    cdef uint64_t bits
    memcpy(comp, CITY_IDS, b.n_cities)
    for wd in range(2):
        # the seat's routes in index order, from its bitset (not a scan of the board)
        bits = s.p[seat].routes[wd]
        while bits:
            r = wd * 64 + lowest_bit(bits)
            bits &= bits - 1
            u = b.route_a[r]
            while comp[u] != u:
                u = comp[u]
            v = b.route_b[r]
            while comp[v] != v:
                v = comp[v]
            if u != v:
                comp[u] = v
    # only cities on own routes were joined; every other city is its own root
    bits = s.p[seat].cities
    while bits:
        x = lowest_bit(bits)
        bits &= bits - 1
        u = x
        while comp[u] != u:
            u = comp[u]
        comp[x] = u


cdef void plan_clear(Plan* out) noexcept nogil:
    memset(out, 0, sizeof(Plan))


cdef int add_route(const BoardInfo* bi, const PlanParams* prm, const GameState* s, int seat,
                   int r, int32_t* w, Plan* out) noexcept nogil:
    """Put route r (weight w[r] > 0) into the plan `out`: an open route to claim, or a
    route of another player to borrow (through a new station when w[r] > 1). Its weight
    becomes 0 for the tickets planned after it. Returns the trains it adds."""
    cdef const BoardC* b = bi.b
    cdef int j, q, added = 0, st_left, built
    out.cost += w[r]
    if s.route_owner[r] < 0:
        set_bit(out.routes, r)
        out.trains += b.route_len[r]
        out.claims += 1
        added = b.route_len[r]
        q = b.route_partner[r]
        if q >= 0 and s.route_owner[q] < 0:
            w[q] = INF_COST             # one seat never owns both halves
    else:
        set_bit(out.borrow, r)
        if w[r] > 1:                    # needs a new station
            out.stations += 1
            added = 1
            st_left = s.p[seat].stations_left - out.stations
            built = b.stations - st_left
            # later borrowings need the next (dearer) station, or none is left
            for j in range(b.n_routes):
                if w[j] > 1 and w[j] < INF_COST and s.route_owner[j] >= 0 \
                        and s.route_owner[j] != seat:
                    w[j] = station_weight(prm, built) if st_left > 0 else INF_COST
    w[r] = 0
    return added


cdef int connect_ticket(const BoardInfo* bi, const PlanParams* prm, const GameState* s,
                        int seat, int t, int32_t* w, Plan* out, Workspace* ws) noexcept nogil:
    """Add ticket t to the plan `out` built over the weights w: the cheapest path joins
    its cities, and its routes then cost nothing for the tickets after it (w is updated;
    the whole path is kept in ws.paths[t]). Returns the trains it adds, or -1 when it is
    unreachable (then it is dropped)."""
    cdef const BoardC* b = bi.b
    cdef int a = b.ticket_a[t], z = b.ticket_b[t], x, r, added = 0
    cdef int claims0 = out.claims, stations0 = out.stations
    ws.paths[t][0] = ws.paths[t][1] = 0
    if shortest_path(bi, w, a, z, ws.dist, ws.pred) >= INF_COST:
        set_bit(out.dropped, t)
        out.points -= b.ticket_points[t]
        return -1
    set_bit(out.tickets, t)
    out.points += b.ticket_points[t]
    x = z
    while x != a:
        r = ws.pred[x]
        set_bit(ws.paths[t], r)
        if w[r] > 0:
            added += add_route(bi, prm, s, seat, r, w, out)
        x = b.route_a[r] + b.route_b[r] - x
    if out.claims == claims0 and out.stations == stations0:
        out.done_points += b.ticket_points[t]
    return added


cdef void sort_longest_first(const BoardInfo* bi, int16_t* order, int n) noexcept nogil:
    """Order tickets longest first: insertion sort (stable) on the empty-board distance."""
    cdef const BoardC* b = bi.b
    cdef int i, j
    cdef int16_t tmp
    for i in range(1, n):
        tmp = order[i]
        j = i - 1
        while j >= 0 and (bi.dist0[b.ticket_a[order[j]]][b.ticket_b[order[j]]]
                          < bi.dist0[b.ticket_a[tmp]][b.ticket_b[tmp]]):
            order[j + 1] = order[j]
            j -= 1
        order[j + 1] = tmp


cdef void routes_longest_first(const BoardC* b, int16_t* order, int n) noexcept nogil:
    """Order routes longest first: insertion sort (stable: a few dozen routes at most)."""
    cdef int i, j
    cdef int16_t tmp
    for i in range(1, n):
        tmp = order[i]
        j = i - 1
        while j >= 0 and b.route_len[order[j]] < b.route_len[tmp]:
            order[j + 1] = order[j]
            j -= 1
        order[j + 1] = tmp


cdef int least_worth(const BoardC* b, const Workspace* ws, int n) noexcept nogil:
    """The ticket to give up when a plan is over its budget: among ws.order[0..n-1] still
    on and adding trains (ws.added), the one with the fewest points per train it adds
    (the last on a tie); -1 if none."""
    cdef int i, worst = -1
    for i in range(n):
        if ws.on[i] and ws.added[i] > 0:
            if worst < 0 or (b.ticket_points[ws.order[i]] * ws.added[worst]
                             <= b.ticket_points[ws.order[worst]] * ws.added[i]):
                worst = i
    return worst


cdef int repair_plan(const BoardInfo* bi, const PlanParams* prm, const GameState* s,
                     int seat, const uint64_t* tickets, const Plan* prev, int budget,
                     Plan* out, Workspace* ws) noexcept nogil:
    """Repair `prev` (made by plan_tickets or repair_plan for the same tickets) after
    other players took some of its routes: a ticket whose path (ws.paths) is still
    usable keeps it, the others are joined again, longest first, over what remains.
    Tickets given up stay given up. Cheaper than planning from scratch and keeps the
    plan stable. Returns the cost, or -1 when the repaired plan needs more than
    `budget` trains (then plan from scratch)."""
    cdef const BoardC* b = bi.b
    cdef int n = 0, i, t, w, r
    cdef uint64_t bits
    cdef bint usable
    own_components(b, s, seat, ws.comp)
    route_weights(bi, prm, s, seat, ws.base)
    memcpy(ws.w, ws.base, b.n_routes * sizeof(int32_t))
    plan_clear(out)
    for t in range(b.n_tickets):
        if not get_bit(tickets, t):
            continue
        if ws.comp[b.ticket_a[t]] == ws.comp[b.ticket_b[t]]:
            set_bit(out.tickets, t)
            out.points += b.ticket_points[t]
            out.done_points += b.ticket_points[t]
            continue
        if not get_bit(prev.tickets, t):
            set_bit(out.dropped, t)
            out.points -= b.ticket_points[t]
            continue
        # the old path still works if every route on it is own, open or planned, or
        # borrowed through a station the seat already has
        usable = True
        for w in range(2):
            bits = ws.paths[t][w]
            while bits and usable:
                r = w * 64 + lowest_bit(bits)
                bits &= bits - 1
                if ws.w[r] >= INF_COST or (ws.w[r] > 1 and s.route_owner[r] >= 0):
                    usable = False
        if not usable:
            ws.order[n] = t
            n += 1
            continue
        set_bit(out.tickets, t)
        out.points += b.ticket_points[t]
        for w in range(2):
            bits = ws.paths[t][w]
            while bits:
                r = w * 64 + lowest_bit(bits)
                bits &= bits - 1
                if ws.w[r] > 0:
                    add_route(bi, prm, s, seat, r, ws.w, out)
    sort_longest_first(bi, ws.order, n)
    for i in range(n):
        connect_ticket(bi, prm, s, seat, ws.order[i], ws.w, out, ws)
    return -1 if out.trains > budget else out.cost


cdef int plan_tickets(const BoardInfo* bi, const PlanParams* prm, const GameState* s,
                      int seat, const uint64_t* tickets, int budget, Plan* out,
                      Workspace* ws) noexcept nogil:
    """Plan how `seat` connects `tickets` in the current position: fills `out` and
    returns its cost; ws.w is left with the weights after the plan (its routes free).
    Tickets already joined by own routes cost nothing; the others are joined longest
    first. While the plan needs more than `budget` trains, the ticket that adds the
    most trains per point is given up (out.dropped)."""
    cdef const BoardC* b = bi.b
    cdef int n = 0, i, t, worst
    cdef Plan done                    # the tickets already connected
    own_components(b, s, seat, ws.comp)
    plan_clear(out)
    for t in range(b.n_tickets):
        if get_bit(tickets, t):
            if ws.comp[b.ticket_a[t]] == ws.comp[b.ticket_b[t]]:
                set_bit(out.tickets, t)
                out.points += b.ticket_points[t]
                out.done_points += b.ticket_points[t]
            else:
                ws.order[n] = t
                ws.on[n] = 1
                n += 1
    sort_longest_first(bi, ws.order, n)
    route_weights(bi, prm, s, seat, ws.base)
    done = out[0]
    while True:
        memcpy(ws.w, ws.base, b.n_routes * sizeof(int32_t))
        out[0] = done
        for i in range(n):
            if ws.on[i]:
                ws.added[i] = connect_ticket(bi, prm, s, seat, ws.order[i], ws.w, out, ws)
            else:
                ws.added[i] = 0
                set_bit(out.dropped, ws.order[i])
                out.points -= b.ticket_points[ws.order[i]]
        if out.trains <= budget:
            break
        worst = least_worth(b, ws, n)
        if worst < 0:
            break
        ws.on[worst] = 0
    return out.cost


# ---------------------------------------------------------------------------
# cards

cdef void unknown_cards(const BoardC* b, const GameState* s, int seat, int* pool) noexcept nogil:
    """Cards the seat cannot see (deck and other hands together), by type: the deck's
    composition minus its own hand, the face-up row and the discards."""
    cdef int t, i
    for t in range(N_CARD_TYPES):
        pool[t] = b.deck_count[t] - s.p[seat].hand[t] - s.discard[t]
    for i in range(N_FACEUP):
        if s.faceup[i] >= 0:
            pool[s.faceup[i]] -= 1
    if s.phase == PH_TUNNEL and s.current == seat:
        # cards set aside for the tunnel and the revealed ones are seen
        pool[WILD] -= s.t_wild
        if s.t_color != WILD:
            pool[s.t_color] -= b.route_len[s.t_route] - s.t_wild
        for i in range(s.n_revealed):
            pool[s.revealed[i]] -= 1
    for t in range(N_CARD_TYPES):
        if pool[t] < 0:
            pool[t] = 0


cdef inline double choose_small(int a, int k) noexcept nogil:
    """C(a, k) for k <= 3 (0 when a < k)."""
    if a < k:
        return 0.0
    if k == 0:
        return 1.0
    if k == 1:
        return a
    if k == 2:
        return a * (a - 1) / 2.0
    return a * (a - 1) * (a - 2) / 6.0


cdef void hypergeom_pmf(int n, int m, int k, double* pmf) noexcept nogil:
    """pmf[j], j = 0..3: chance of j matching cards among k <= 3 cards drawn without
    replacement from n cards of which m match."""
    cdef int j
    cdef double total
    if k > n:
        k = n
    total = choose_small(n, k)
    for j in range(4):
        pmf[j] = 0.0
    if total <= 0:
        pmf[0] = 1.0
        return
    for j in range(k + 1):
        pmf[j] = choose_small(m, j) * choose_small(n - m, k - j) / total


cdef inline double fail_from_pmf(const double* pmf, int spare) noexcept nogil:
    cdef int j
    cdef double ok = 0.0
    for j in range(spare + 1):
        ok += pmf[j]
    return 1.0 - ok if ok < 1.0 else 0.0


cdef double tunnel_fail_prob(const int* pool, int color, int spare) noexcept nogil:
    """Probability that 3 cards revealed from `pool` ask for more than `spare` extra
    cards, when the tunnel is paid with `color` (WILD: with wild cards only, then only
    revealed wilds count). Hypergeometric."""
    cdef int t, n = 0, m
    cdef double pmf[4]
    if spare >= 3:
        return 0.0
    if spare < 0:
        return 1.0
    for t in range(N_CARD_TYPES):
        n += pool[t]
    m = pool[WILD] + (pool[color] if color != WILD else 0)
    hypergeom_pmf(n, m, 3, pmf)
    return fail_from_pmf(pmf, spare)


cdef double reveal_fail_prob(const int* pool, const GameState* s, int color,
                             int spare) noexcept nogil:
    """tunnel_fail_prob for the reveal as the engine makes it now: the top cards of the
    deck (a uniform draw from the unseen cards `pool`), and when the deck holds fewer
    than 3, the rest from the discards shuffled into a new deck (known cards)."""
    cdef int t, n1, n2, m2, k2, i, j
    cdef double pmf1[4]
    cdef double pmf2[4]
    cdef double ok = 0.0
    if spare >= 3:
        return 0.0
    if spare < 0:
        return 1.0
    if s.deck_n >= 3:
        return tunnel_fail_prob(pool, color, spare)
    n1 = 0
    for t in range(N_CARD_TYPES):
        n1 += pool[t]
    hypergeom_pmf(n1, pool[WILD] + (pool[color] if color != WILD else 0), s.deck_n, pmf1)
    n2 = 0
    for t in range(N_CARD_TYPES):
        n2 += s.discard[t]
    m2 = s.discard[WILD] + (s.discard[color] if color != WILD else 0)
    k2 = 3 - s.deck_n
    hypergeom_pmf(n2, m2, k2, pmf2)
    for i in range(spare + 1):
        for j in range(spare + 1 - i):
            ok += pmf1[i] * pmf2[j]
    return 1.0 - ok if ok < 1.0 else 0.0


cdef double blind_useful_prob(const int* pool, const int* missing) noexcept nogil:
    """Chance that a blind card is a wild or a colour with missing[colour] > 0."""
    cdef int t, n = 0, good = pool[WILD]
    for t in range(N_CARD_TYPES):
        n += pool[t]
        if t != WILD and missing[t] > 0:
            good += pool[t]
    return good / <double>n if n > 0 else 0.0


cdef double rounds_left(const BoardC* b, const GameState* s) noexcept nogil:
    """Estimated rounds before the game ends, for the player nearest to the end trigger:
    the mean of the rounds at the rate it has been placing trains (with a prior of
    1.25 trains a round) and the fewest it could need (its hand size is public: it
    draws two cards a turn, and claiming takes turns too)."""
    cdef int q, n
    cdef double rounds = s.turn / <double>s.n_players, rate, left, fast, best = 1e9
    if s.last_round:
        return 0.0
    for q in range(s.n_players):
        # prior: the trains placed at 1.25 a round, worth four rounds of evidence
        rate = (b.trains - s.p[q].trains + 5.0) / (rounds + 4.0)
        n = s.p[q].trains - b.end_trigger
        left = n / rate
        fast = (n - hand_total(s, q)) / 2.0
        if fast < 0:
            fast = 0
        fast += 1 + n / 6.0
        if fast < left:
            left = FAST_WEIGHT * fast + (1 - FAST_WEIGHT) * left
        if left < best:
            best = left
    return best if best > 0 else 0.0


cdef void plan_needs(const BoardC* b, const GameState* s, int seat, const Plan* plan,
                     int tunnel_spare, Needs* nd) noexcept nogil:
    """Cards the plan's remaining routes need. Coloured routes want their colour; gray
    routes (longest first) are given the colour with the largest surplus in hand; of a
    double route the half whose colour the hand serves better is counted. A tunnel
    wants `tunnel_spare` more cards of its colour to cover the revealed cards."""
    cdef const int16_t* hand = &s.p[seat].hand[0]
    cdef int16_t gray[MAX_ROUTES]
    cdef int n_gray = 0, w, r, q, g, c, best, surplus, i, L, spare_w
    cdef uint64_t bits
    memset(nd.want, 0, sizeof(nd.want))
    for w in range(2):
        bits = plan.routes[w]
        while bits:
            r = w * 64 + lowest_bit(bits)
            bits &= bits - 1
            q = route_partner_open(b, s, r, seat)
            g = -1
            if b.route_color[r] == GRAY:
                g = r
            elif q >= 0 and b.route_color[q] == GRAY:
                g = q
            if g >= 0:
                gray[n_gray] = r
                n_gray += 1
                continue
            c = b.route_color[r]
            if q >= 0 and hand[b.route_color[q]] > hand[c]:
                c = b.route_color[q]
            nd.color[r] = c
            if q >= 0:
                nd.color[q] = c
            nd.want[c] += b.route_len[r] - b.route_ferry[r]
            if b.route_tunnel[r]:
                nd.want[c] += tunnel_spare
            nd.want[WILD] += b.route_ferry[r]
    routes_longest_first(b, gray, n_gray)
    for i in range(n_gray):
        r = gray[i]
        L = b.route_len[r] - b.route_ferry[r]
        if b.route_tunnel[r]:
            L += tunnel_spare
        best = 0
        surplus = -1000
        for c in range(b.n_colors):
            if hand[c] - nd.want[c] > surplus:
                surplus = hand[c] - nd.want[c]
                best = c
        nd.color[r] = best
        q = b.route_partner[r]
        if q >= 0:
            nd.color[q] = best
        nd.want[WILD] += b.route_ferry[r]
        if L > 0:
            nd.want[best] += L
    nd.short = 0
    for c in range(MAX_COLORS):         # all eight: a fixed length the compiler vectorises
        nd.missing[c] = nd.want[c] - hand[c] if nd.want[c] > hand[c] else 0
        nd.short += nd.missing[c]
    nd.missing[WILD] = nd.want[WILD] - hand[WILD] if nd.want[WILD] > hand[WILD] else 0
    spare_w = hand[WILD] - nd.want[WILD]
    if spare_w > 0:
        nd.short = nd.short - spare_w if nd.short > spare_w else 0
    nd.short += nd.missing[WILD]


cdef inline int card_cost(const int16_t* hand, const int* keep, int t, int used) noexcept nogil:
    """Cost of paying `used` cards of type t: 1 a card (WILD_COST a wild), plus KEEP_COST
    for each card the rest of the plan wants."""
    cdef int cut = keep[t] - (hand[t] - used) if keep != NULL else 0
    if cut < 0:
        cut = 0
    if cut > used:
        cut = used
    return used * (WILD_COST if t == WILD else 1) + cut * KEEP_COST


cdef inline bint tunnel_refused(const int* pool, const GameState* s, int color, int spare,
                               double risk) noexcept nogil:
    """Whether to refuse a tunnel attempt: its reveal asks for more than `spare` extra
    cards with a probability above `risk`, or surely (whatever `risk`, unless it is
    ACCEPT_ANY: a sure failure returns the cards and could be tried again forever)."""
    cdef double p
    if risk >= ACCEPT_ANY:
        return False
    p = reveal_fail_prob(pool, s, color, spare)
    return p > risk or p >= SURE_FAIL


cdef int claim_payment(const BoardC* b, const GameState* s, int seat, int route,
                       const int* keep, double risk, const int* pool,
                       int32_t* act) noexcept nogil:
    """Cheapest way for `seat` to pay `route` now (keep[t]: cards of type t to spare for
    the rest of the plan, or NULL). Returns the cost and sets *act, or -1 when the seat
    cannot pay. For a tunnel, a payment whose chance of needing more extra cards than
    the hand holds exceeds `risk`, or that is sure to, is refused (pool: unseen cards,
    read only for a tunnel, so NULL will do for other routes; risk = ACCEPT_ANY accepts
    every payable tunnel)."""
    cdef const int16_t* hand = &s.p[seat].hand[0]
    cdef int L = b.route_len[route], f = b.route_ferry[route]
    cdef int c, c0 = 0, c1 = b.n_colors, k, cost, best = -1
    if route_open(b, s, route, seat) == 0 or L > s.p[seat].trains or hand[WILD] < f:
        return -1
    if b.route_color[route] != GRAY:
        c0 = b.route_color[route]
        c1 = c0 + 1
    for c in range(c0, c1):
        if hand[c] == 0:
            continue
        k = L - hand[c]
        if k < f:
            k = f
        if k > hand[WILD] or k > L - 1:
            continue
        if b.route_tunnel[route] and tunnel_refused(pool, s, c, hand[c] + hand[WILD] - L, risk):
            continue
        cost = card_cost(hand, keep, c, L - k) + card_cost(hand, keep, WILD, k)
        if best < 0 or cost < best:
            best = cost
            act[0] = make_action(ACT_CLAIM, route, c, k)
    if best < 0 and hand[WILD] >= L:
        if not (b.route_tunnel[route] and tunnel_refused(pool, s, WILD, hand[WILD] - L, risk)):
            best = card_cost(hand, keep, WILD, L)
            act[0] = make_action(ACT_CLAIM, route, WILD, L)
    return best


cdef int station_payment(const BoardC* b, const GameState* s, int seat, int city,
                         const int* keep, int32_t* act) noexcept nogil:
    """Cheapest way to build the seat's next station on `city` (-1: not possible)."""
    cdef const int16_t* hand = &s.p[seat].hand[0]
    cdef int n = b.stations - s.p[seat].stations_left + 1, c, k, cost, best = -1
    if s.p[seat].stations_left <= 0 or s.city_station[city] >= 0:
        return -1
    for c in range(b.n_colors):
        if hand[c] == 0:
            continue
        k = n - hand[c]
        if k < 0:
            k = 0
        if k > hand[WILD] or k > n - 1:
            continue
        cost = card_cost(hand, keep, c, n - k) + card_cost(hand, keep, WILD, k)
        if best < 0 or cost < best:
            best = cost
            act[0] = make_action(ACT_STATION, city, c, k)
    if best < 0 and hand[WILD] >= n:
        best = card_cost(hand, keep, WILD, n)
        act[0] = make_action(ACT_STATION, city, WILD, n)
    return best


cdef int claim_payments(const GameState* s, int seat, const int32_t* legal, int n_legal,
                        int16_t* order, int32_t* pay) noexcept nogil:
    """The routes the legal claims take, in order of first appearance (into `order`; their
    count is returned), and for each route r one payment pay[r]: the fewest wild cards,
    then the colour the hand has fewest of (it keeps the larger sets)."""
    cdef int i, r, n_routes = 0
    cdef int32_t act, best
    for r in range(MAX_ROUTES):
        pay[r] = -1
    for i in range(n_legal):
        act = legal[i]
        if action_kind(act) != ACT_CLAIM:
            continue
        r = action_a(act)
        if pay[r] < 0:
            order[n_routes] = r
            n_routes += 1
            pay[r] = act
            continue
        best = pay[r]
        if action_c(act) < action_c(best):
            pay[r] = act
        elif action_c(act) == action_c(best) and action_b(act) != WILD and action_b(best) != WILD:
            # same wild cards: keep the colour with less left over
            if s.p[seat].hand[action_b(act)] < s.p[seat].hand[action_b(best)]:
                pay[r] = act
    return n_routes


cdef int longest_claims(const BoardC* b, const GameState* s, int seat, const int32_t* legal,
                        int n_legal, int16_t* order, int32_t* pay) noexcept nogil:
    """claim_payments with `order` sorted longest route first (stable: ties keep their
    order of first appearance); the count of routes is returned."""
    cdef int n_routes = claim_payments(s, seat, legal, n_legal, order, pay)
    routes_longest_first(b, order, n_routes)
    return n_routes


# --- a decision's candidate moves ---------------------------------------------------------

cdef bint cand_add(Candidates* c, int32_t act) noexcept nogil:
    """Add `act` unless it is none (< 0), already there, a ticket draw after the first
    candidate under one_ticket_draw, or beyond the room; whether it was added."""
    cdef int i
    if act < 0 or c.n >= c.cap:
        return False
    if c.one_ticket_draw and c.n > 0 and action_kind(act) == ACT_DRAW_TICKETS:
        return False
    for i in range(c.n):
        if c.act[i] == act:
            return False
    c.act[c.n] = act
    c.n += 1
    return True


cdef void faceup_colours(Candidates* c, const GameState* s, const int32_t* legal,
                         int n_legal, bint new_colours) noexcept nogil:
    """One face-up draw of each colour on offer (the leftmost slot showing it); with
    `new_colours`, none of a colour that a face-up draw among the candidates already takes
    (the search's analysis ranks colours; `expert`'s models were trained with every
    colour's leftmost slot, whatever the candidates before it)."""
    cdef int i, j, k
    cdef bint seen[N_CARD_TYPES]
    cdef int32_t act
    for i in range(N_CARD_TYPES):
        seen[i] = False
    for j in range(c.n if new_colours else 0):
        act = c.act[j]
        if action_kind(act) == ACT_DRAW_FACEUP and s.faceup[action_a(act)] >= 0:
            seen[s.faceup[action_a(act)]] = True
    for i in range(n_legal):
        act = legal[i]
        if action_kind(act) == ACT_DRAW_FACEUP:
            k = s.faceup[action_a(act)]
            if k >= 0 and not seen[k]:
                seen[k] = True
                cand_add(c, act)


cdef int turn_candidates(const BoardC* b, const GameState* s, int seat, const int32_t* legal,
                         int n_legal, Candidates* c, int n_longest, bint tunnels,
                         bint faceup) noexcept nogil:
    """A turn's candidates after the proposed moves already in `c`: a blind draw and a
    ticket draw (when legal), claims of the `n_longest` longest routes the hand pays, one
    payment each (claim_payments'; a route already among the candidates counts but is not
    added twice; tunnels only with `tunnels`, and a tunnel left out does not count), and
    with `faceup` one face-up draw of each colour on offer (faceup_colours). `legal` is
    the turn's whole legal list. Returns the length of the longest route of those claims
    (0: none)."""
    cdef int16_t order[MAX_ROUTES]
    cdef int32_t pay[MAX_ROUTES]
    cdef int i, k, r, n_routes, n_claims = 0, longest = 0
    cdef bint have
    cdef int32_t act = make_action(ACT_DRAW_BLIND, 0, 0, 0)
    if is_legal(b, s, act):
        cand_add(c, act)
    act = make_action(ACT_DRAW_TICKETS, 0, 0, 0)
    if is_legal(b, s, act):
        cand_add(c, act)
    if n_longest > 0:
        n_routes = longest_claims(b, s, seat, legal, n_legal, order, pay)
        for i in range(n_routes):
            if n_claims >= n_longest:
                break
            r = order[i]
            if b.route_tunnel[r] and not tunnels:
                continue
            if b.route_len[r] > longest:
                longest = b.route_len[r]
            have = False
            for k in range(c.n):
                if action_kind(c.act[k]) == ACT_CLAIM and action_a(c.act[k]) == r:
                    have = True
                    break
            if not have:
                cand_add(c, pay[r])
            n_claims += 1
    if faceup:
        faceup_colours(c, s, legal, n_legal, False)
    return longest


def _turn_candidates(game, first, int n_longest, bint tunnels, int faceup):
    """(tests) The candidates listed in the current turn of `game` (a ``ttrsim.Game`` or
    its core) for the seat to act, after the moves `first` (codes): turn_candidates with
    `n_longest` and `tunnels`, then faceup 0: no face-up draw, 1: each colour's leftmost
    slot (`expert`), 2: each colour no candidate draws already (the search analysing)."""
    cdef GameState s
    cdef int32_t legal[MAX_ACTIONS]
    cdef int32_t cand[64]
    cdef Candidates c
    cdef CompiledBoard cb = copy_position(game, &s)
    if s.phase != PH_TURN:
        raise ValueError("not the start of a turn")
    cdef int n = legal_actions(&cb.c, &s, legal)
    c.act = cand
    c.n = 0
    c.cap = 64
    c.one_ticket_draw = False
    for act in first:
        cand_add(&c, act)
    turn_candidates(&cb.c, &s, s.current, legal, n, &c, n_longest, tunnels, faceup == 1)
    if faceup == 2:
        faceup_colours(&c, &s, legal, n, True)
    return [c.act[i] for i in range(c.n)]
