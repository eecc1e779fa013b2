# Counter-strategies (docs/policies.md): `blocker` cuts the connections it infers the
# other players are building, `rush` ends the game early with long routes.
#
# Both follow a planning policy of their own for the seat (`tickets` for blocker, `routes`
# for rush: PlanFollower, _policies.pyx), asked at every decision so that its plan stays
# current, and depart from its choice only on a turn where their own rule applies.
# Everything they read is public or the seat's own (RULES.md, "Hidden information"): the
# board's owners, every player's network, trains, stations, ticket count and hand size,
# the cards each player is known to hold from the face-up row (GameState.known), and the
# seat's own hand and tickets.
# Every action they build is checked with is_legal; the planning policy's choice is the
# fallback.
cimport cython
from libc.stdint cimport int8_t, int16_t, int32_t, uint64_t
from libc.stdlib cimport free, malloc

from ttrsim._structs cimport *
from ttrsim._bits cimport get_bit
from ttrsim._engine cimport action_a, action_kind, hand_total, is_legal, make_action, route_open
from ttrsim._policies cimport PlanFollower
from ttrsim._planning cimport (BoardInfo, INF_COST, Plan, UNIT, board_info_init, claim_payment,
                               own_components, rounds_left, route_weights, shortest_path,
                               unknown_cards)

from ttrsim._policies import RoutesPolicy, TicketsPolicy


cdef enum:
    MAX_PATH = 24             # routes of one inferred connection examined as cuts


cdef inline bint on_plan(const Plan* plan, int r) noexcept nogil:
    return plan != NULL and (plan.routes[r >> 6] >> (r & 63)) & 1


cdef class BlockerPolicy(PlanFollower):
    """``blocker``: plays ``tickets``, but on a turn where it can claim a route that cuts
    the cheapest connection another player is inferred to be building (from the cities
    its routes touch), and that costs it little, it claims that route instead.

    Inference, from public information only: a ticket (not one of the seat's own) whose
    two cities the other player's routes touch but do not yet join is held with weight 1,
    one with a single city touched with weight `single`; a player holding more tickets
    weighs more. The threat to a connection is the extra cost (trains and turns, about a
    point each) of the player's cheapest way round after the cut, up to twice the
    ticket's points when the cut disconnects it; it counts more when the player has
    taken face-up cards of the route's colour or holds the cards to claim it now. The
    cost of a cut is the trains and cards off the seat's own plan, less the route's
    points; a cut is claimed when its value beats its cost by `margin`."""
    cdef readonly int max_len           # longest route claimed off its plan to block
    cdef readonly double margin
    cdef readonly double single
    cdef BoardInfo* bi
    cdef uint64_t bi_uid
    cdef int32_t w[MAX_ROUTES]
    cdef int32_t dist[MAX_CITIES]
    cdef int16_t pred[MAX_CITIES]
    cdef int8_t comp[MAX_CITIES]
    cdef double value[MAX_ROUTES]
    cdef int32_t pay[MAX_ROUTES]
    cdef int pcost[MAX_ROUTES]
    cdef int pool[N_CARD_TYPES]
    cdef int keep[N_CARD_TYPES]
    # the last block considered (for tests and for reading a game)
    cdef readonly int last_route
    cdef readonly double last_value
    cdef readonly double last_cost
    cdef readonly long long blocks

    def __cinit__(self, *args, **kwargs):
        self.returns_legal = True       # every action is checked with is_legal (choose)
        self.bi = <BoardInfo*>malloc(sizeof(BoardInfo))
        if self.bi == NULL:
            raise MemoryError()
        self.bi_uid = 0

    def __dealloc__(self):
        free(self.bi)

    def __init__(self, max_len=3, margin=8.0, single=0.3, stations=1, tunnels=1, risk=0.3,
                 draw=12, spec=None):
        """`max_len`: the longest route it claims off its own plan to block; `margin`:
        points by which a cut's value must beat its cost; `single`: weight of a ticket
        only one of whose cities the other player's routes touch. `stations`, `tunnels`,
        `risk`, `draw`: those of its own `tickets`."""
        if not (isinstance(max_len, int) or float(max_len).is_integer()) or not 1 <= max_len <= MAX_LEN:
            raise ValueError(f"blocker: max_len must be a route length 1..{MAX_LEN}, got {max_len!r}")
        if not 0.0 <= float(single) <= 1.0:
            raise ValueError(f"blocker: single must be within 0..1, got {single!r}")
        if not -100.0 <= float(margin) <= 100.0:
            raise ValueError(f"blocker: margin must be within -100..100 points, got {margin!r}")
        PlanFollower.__init__(self, "blocker", TicketsPolicy(stations=stations, tunnels=tunnels,
                                                             risk=risk, draw=draw, spec="tickets"),
                              spec)
        self.max_len = int(max_len)
        self.margin = float(margin)
        self.single = float(single)
        self.prm.tunnels = self.tunnels
        self.last_route = -1
        self.blocks = 0

    def own_params(self):
        return dict(max_len=self.max_len, margin=self.margin, single=self.single)

    cdef void start_game(self, const BoardC* b, const GameState* s, int seat,
                         uint64_t seed) noexcept nogil:
        PlanFollower.start_game(self, b, s, seat, seed)
        self.last_route = -1

    cdef int32_t choose(self, const BoardC* b, const GameState* s, int seat,
                        const int32_t* legal, int n_legal) noexcept nogil:
        cdef int32_t act = self.tickets_choice(b, s, seat), cut
        if act < 0:
            return act
        self.last_route = -1
        if s.phase != PH_TURN or s.last_round:
            return act
        cut = self.block(b, s, seat)
        if cut >= 0 and is_legal(b, s, cut):
            self.blocks += 1
            return cut
        return act

    @cython.final
    cdef void other_weights(self, const BoardC* b, const GameState* s, int q) noexcept nogil:
        """w: the cost for player q of each route: 0 its own, a card and a train per
        unit of length plus a turn for one it may claim, a station for another's it may
        borrow (route_weights), INF_COST otherwise."""
        cdef int r
        route_weights(self.bi, &self.prm, s, q, self.w)
        for r in range(b.n_routes):
            if s.route_owner[r] < 0 and self.w[r] < INF_COST:
                self.w[r] = UNIT * b.route_len[r] + self.prm.claim_cost

    @cython.final
    cdef int32_t block(self, const BoardC* b, const GameState* s, int seat) noexcept nogil:
        cdef int q, t, x, y, r, k, n_path, partner, L, c
        cdef int path[MAX_PATH]
        cdef int32_t d0, d1, saved, saved_p
        cdef double wt, gain, v, best_v = 0.0, cost, spare
        cdef int best = -1
        cdef bint closes_partner = s.n_players < b.double_min_players
        cdef uint64_t mine0 = s.p[seat].tickets[0], mine1 = s.p[seat].tickets[1]
        if self.bi_uid != b.uid or self.bi.b != b:
            board_info_init(self.bi, b, &self.prm)
            self.bi_uid = b.uid
        for r in range(b.n_routes):
            self.value[r] = 0.0
            self.pcost[r] = -2          # not priced yet
        unknown_cards(b, s, seat, self.pool)
        for c in range(N_CARD_TYPES):
            self.keep[c] = self.tk_nd.want[c] if self.tk_nd != NULL else 0
        spare = s.p[seat].trains - (self.tk_plan.trains if self.tk_plan != NULL else 0)
        for q in range(s.n_players):
            if q == seat or s.p[q].n_routes == 0 or s.p[q].n_tickets == 0:
                continue
            self.other_weights(b, s, q)
            own_components(b, s, q, self.comp)
            for t in range(b.n_tickets):
                if get_bit(s.p[seat].tickets, t) or get_bit(s.p[seat].discarded, t):
                    continue            # its own, or known to be out of the game
                x = b.ticket_a[t]
                y = b.ticket_b[t]
                k = <int>((s.p[q].cities >> x) & 1) + <int>((s.p[q].cities >> y) & 1)
                if k == 0 or self.comp[x] == self.comp[y]:
                    continue
                wt = 1.0 if k == 2 else self.single
                # more tickets held, more of the candidates are real
                wt *= 0.5 + 0.25 * (s.p[q].n_tickets if s.p[q].n_tickets < 6 else 6)
                d0 = shortest_path(self.bi, self.w, x, y, self.dist, self.pred)
                if d0 >= INF_COST:
                    continue
                n_path = 0
                while x != y and n_path < MAX_PATH:
                    r = self.pred[y]
                    if r < 0:
                        break
                    if s.route_owner[r] < 0:
                        path[n_path] = r
                        n_path += 1
                    y = b.route_a[r] + b.route_b[r] - y
                for k in range(n_path):
                    r = path[k]
                    if not self.affordable(b, s, seat, r, spare):
                        continue
                    partner = b.route_partner[r]
                    if partner >= 0 and not closes_partner and route_open(b, s, partner, q):
                        continue        # the other half stays open to q
                    saved = self.w[r]
                    self.w[r] = INF_COST
                    saved_p = 0
                    if partner >= 0 and closes_partner:
                        saved_p = self.w[partner]
                        self.w[partner] = INF_COST
                    d1 = shortest_path(self.bi, self.w, b.ticket_a[t], b.ticket_b[t],
                                       self.dist, self.pred)
                    self.w[r] = saved
                    if partner >= 0 and closes_partner:
                        self.w[partner] = saved_p
                    gain = 2.0 * b.ticket_points[t]
                    if d1 < INF_COST and (d1 - d0) / <double>UNIT < gain:
                        gain = (d1 - d0) / <double>UNIT
                    L = b.route_len[r]
                    v = wt * gain
                    # the player collects this route's colour, or can claim it now
                    c = b.route_color[r]
                    if c != GRAY and s.known[q][c] > 0:
                        v *= 1.5
                    if hand_total(s, q) >= L + 2:
                        v *= 1.25
                    self.value[r] += v
        for r in range(b.n_routes):
            if self.value[r] <= 0.0:
                continue
            L = b.route_len[r]
            if on_plan(self.tk_plan, r):
                cost = 0.0
            else:
                cost = L + 0.5 * self.pcost[r] - b.route_points[L]
            v = self.value[r] - cost
            if v > best_v:
                best_v = v
                best = r
        if best < 0:
            return -1
        self.last_route = best
        self.last_value = self.value[best]
        self.last_cost = self.value[best] - best_v
        if best_v < self.margin:
            return -1
        return self.pay[best]

    @cython.final
    cdef bint affordable(self, const BoardC* b, const GameState* s, int seat, int r,
                         double spare) noexcept nogil:
        """Whether the seat would claim route r to block: its hand pays it now (the
        cheapest payment sparing its plan's cards is kept in pay[r]) and, off its plan, r
        is at most max_len long and leaves the trains its plan needs."""
        if self.pcost[r] == -2:
            self.pcost[r] = claim_payment(b, s, seat, r, self.keep, self.risk, self.pool,
                                          &self.pay[r])
            if b.route_tunnel[r] and not self.prm.tunnels:
                self.pcost[r] = -1
        if self.pcost[r] < 0:
            return False
        if on_plan(self.tk_plan, r):
            return True
        return b.route_len[r] <= self.max_len and b.route_len[r] <= spare

    def last_block(self):
        """The cut its last turn decision weighed most, as ``(route, value, cost)`` in
        points, or None when it saw none (claimed when value - cost >= margin)."""
        if self.last_route < 0:
            return None
        return (self.last_route, self.last_value, self.last_cost)


cdef class RushPolicy(PlanFollower):
    """``rush``: ends the game early. Keeps the fewest, cheapest initial tickets (as
    ``routes``) and never draws more. Each turn it claims the longest open route of at
    least `min_len` trains its hand pays (any length once the end is near or its trains
    run short), else a route of its ticket plan its hand pays, else draws toward the long
    route closest to affordable: a face-up card of that route's colour, else blind."""
    # its planner (tk) is `routes`: its tickets, tunnels and final turn
    cdef readonly int min_len
    cdef int target                     # colour being collected this turn (-1: none)
    cdef int target_turn
    cdef int pool[N_CARD_TYPES]
    cdef int keep[N_CARD_TYPES]

    def __cinit__(self, *args, **kwargs):
        self.returns_legal = True       # every action is checked with is_legal

    def __init__(self, min_len=6, tunnels=1, risk=0.3, spec=None):
        """`min_len`: the shortest route it claims or collects for off its ticket plan
        while the end is not near; `tunnels`, `risk`: as for `routes`."""
        if not (isinstance(min_len, int) or float(min_len).is_integer()) or not 1 <= min_len <= MAX_LEN:
            raise ValueError(f"rush: min_len must be a route length 1..{MAX_LEN}, got {min_len!r}")
        PlanFollower.__init__(self, "rush", RoutesPolicy(tunnels=tunnels, risk=risk, min_len=min_len,
                                                         spec="routes"), spec)
        self.min_len = int(min_len)
        self.target = -1
        self.target_turn = -1

    def own_params(self):
        return dict(min_len=self.min_len)      # routes takes it too: one min_len

    cdef void start_game(self, const BoardC* b, const GameState* s, int seat,
                         uint64_t seed) noexcept nogil:
        PlanFollower.start_game(self, b, s, seat, seed)
        self.target = -1
        self.target_turn = -1

    cdef int32_t choose(self, const BoardC* b, const GameState* s, int seat,
                        const int32_t* legal, int n_legal) noexcept nogil:
        cdef int32_t act = self.tickets_choice(b, s, seat), mine    # routes' choice
        if act < 0:
            return act
        if s.phase == PH_SECOND_DRAW:
            if self.target_turn == s.turn and self.target >= 0:
                mine = self.draw_toward(b, s, self.target, True)
                if mine >= 0:
                    return mine
            return act
        if s.phase != PH_TURN or s.last_round:
            return act
        mine = self.rush_turn(b, s, seat, act)
        return mine if mine >= 0 else act

    @cython.final
    cdef int32_t rush_turn(self, const BoardC* b, const GameState* s, int seat,
                           int32_t planned) noexcept nogil:
        cdef int r, L, c, have, miss, best_len = 0, best_cost = 0, t_miss = 1 << 20, t_len = 0
        cdef int t_col = -1, min_len = self.min_len, most, most_c, cost
        cdef int trains = s.p[seat].trains
        cdef int32_t pay, best = -1
        cdef const int16_t* hand = &s.p[seat].hand[0]
        cdef int reserve = 0, longest_open = 0
        cdef bint pending = self.tk_plan != NULL and (self.tk_plan.routes[0] or self.tk_plan.routes[1])
        self.target = -1
        for r in range(b.n_routes):
            if b.route_len[r] > longest_open and b.route_len[r] <= trains and route_open(b, s, r, seat):
                longest_open = b.route_len[r]
        if longest_open < min_len:
            min_len = longest_open
        if rounds_left(b, s) < 2 or trains < min_len:
            min_len = 1
        if pending:
            reserve = self.tk_plan.trains
        unknown_cards(b, s, seat, self.pool)
        for c in range(N_CARD_TYPES):
            self.keep[c] = self.tk_nd.want[c] if pending and self.tk_nd != NULL else 0
        most = 0
        most_c = 0
        for c in range(b.n_colors):
            if hand[c] > most:
                most = hand[c]
                most_c = c
        for r in range(b.n_routes):
            L = b.route_len[r]
            if L < min_len or L > trains or not route_open(b, s, r, seat):
                continue
            if L > trains - reserve and not on_plan(self.tk_plan, r) and min_len > 1:
                continue                # the trains its tickets still need
            if b.route_tunnel[r] and not self.tunnels:
                continue
            cost = claim_payment(b, s, seat, r, self.keep, self.risk, self.pool, &pay)
            if cost >= 0:
                if L > best_len or (L == best_len and cost < best_cost):
                    best_len = L
                    best_cost = cost
                    best = pay
                continue
            # how far the hand is from paying it
            c = b.route_color[r]
            have = (most if c == GRAY else hand[c]) + hand[WILD]
            miss = L - have
            if hand[WILD] < b.route_ferry[r]:
                miss += b.route_ferry[r] - hand[WILD]
            if miss < t_miss or (miss == t_miss and L > t_len):
                t_miss = miss
                t_len = L
                t_col = most_c if c == GRAY else c
        if action_kind(planned) == ACT_CLAIM and b.route_len[action_a(planned)] >= best_len:
            return planned
        if best >= 0 and is_legal(b, s, best):
            return best
        if action_kind(planned) == ACT_CLAIM:
            return planned
        if t_col < 0:
            return -1
        # the cards its ticket plan lacks first (routes' own draw), then the colour of
        # the long route closest to affordable
        if pending and self.tk_nd != NULL and self.tk_nd.short > 0:
            return planned
        self.target = t_col
        self.target_turn = s.turn
        return self.draw_toward(b, s, t_col, False)

    @cython.final
    cdef int32_t draw_toward(self, const BoardC* b, const GameState* s, int col,
                             bint second) noexcept nogil:
        """A face-up card of colour `col`, else a blind card (-1: neither is legal)."""
        cdef int i
        cdef int32_t a
        for i in range(N_FACEUP):
            if s.faceup[i] == col:
                a = make_action(ACT_DRAW_FACEUP, i, 0, 0)
                if is_legal(b, s, a):
                    return a
        a = make_action(ACT_DRAW_BLIND, 0, 0, 0)
        if is_legal(b, s, a):
            return a
        return -1
