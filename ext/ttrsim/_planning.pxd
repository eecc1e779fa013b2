# Planning helpers for compiled policies: route weights, shortest paths on the open
# routes, a Steiner-forest heuristic that connects a set of tickets, the cards a plan
# still needs, tunnel odds and payment choice. Everything works on the flat structs of
# _structs.pxd, allocates nothing and runs without the GIL. Policies (built-in or
# user-compiled, see docs/policies.md) cimport these declarations; every function reads
# only what the seat may know (RULES.md, "Hidden information").
from libc.stdint cimport int8_t, int16_t, int32_t, uint8_t, uint64_t
from ttrsim._structs cimport (BoardC, GameState, GRAY, MAX_ADJ, MAX_CITIES, MAX_COLORS,
                              MAX_LEN, MAX_ROUTES, MAX_TICKETS, N_CARD_TYPES, WILD)
from ttrsim._engine cimport route_open
# Bit helpers: ttrsim/_bits.pxd; route_open (whether a seat may claim a route): _engine.pxd.


cdef enum:
    UNIT = 8                  # cost units per train (weights are integers)
    INF_COST = 1 << 24        # an unusable route / an unreachable city
    MAX_WEIGHT = 255          # route weights are capped here (Dijkstra's bucket ring)
    ACCEPT_ANY = 2            # a `risk` that accepts any tunnel, even one sure to fail


ctypedef struct PlanParams:
    int stations              # 1: may plan to borrow routes of others through stations
    int tunnels               # 1: may plan and claim tunnels
    int tunnel_cost           # cost units added to a tunnel (extra cards, failed attempts)
    int ferry_cost            # cost units added per locomotive a ferry requires
    int station_cost          # cost units of borrowing a route through a new station,
                              # on top of UNIT per card the station costs
    int claim_cost            # cost units of the turn spent claiming a route
    int points_weight         # cost units saved per point a route scores


# The planner's default weights: those of the planning policies (tickets, routes; greedy
# drops points_weight) and of the plans blocker and expert make themselves. Written here
# once; tests/test_policies.py checks that every built-in policy starts from them.
cdef inline PlanParams default_plan_params() noexcept nogil:
    cdef PlanParams p
    p.stations = 1
    p.tunnels = 1
    p.tunnel_cost = UNIT
    p.ferry_cost = UNIT
    p.station_cost = 4 * UNIT
    p.claim_cost = 2 * UNIT
    p.points_weight = 5
    return p


ctypedef struct BoardInfo:
    # Per-board data, computed once when a policy first meets a board.
    const BoardC* b
    int32_t weight[MAX_ROUTES]                # weight of each route while open
    int16_t dist0[MAX_CITIES][MAX_CITIES]     # shortest weights on the empty board
    uint64_t nbr_bits[MAX_CITIES]             # the cities next to each city
    int16_t link[MAX_CITIES][MAX_CITIES][2]   # routes x -> y: first in b.adj[x] order,
                                              # and the other half of a double (else the
                                              # first again; maps allow no third route)
    uint64_t longer[MAX_LEN][2]               # routes longer than each number of trains


ctypedef struct Plan:
    uint64_t routes[2]        # open routes to claim
    uint64_t borrow[2]        # routes of other players to use through stations
    uint64_t tickets[2]       # tickets connected or planned
    uint64_t dropped[2]       # tickets given up: unreachable or beyond the budget
    int trains                # trains the routes to claim need
    int claims                # routes to claim
    int cost                  # weight of the routes to claim and stations to build
    int stations              # new stations the plan needs
    int points                # sum of ticket values: planned minus dropped
    int done_points           # values of the planned tickets that need nothing more


ctypedef struct Workspace:
    # Scratch arrays of the planner (one per policy instance; never shared).
    int32_t base[MAX_ROUTES]  # route weights of the current position
    int32_t w[MAX_ROUTES]     # weights while a plan is being built
    int32_t dist[MAX_CITIES]
    int16_t pred[MAX_CITIES]  # route by which each city was reached
    int8_t comp[MAX_CITIES]   # component of each city in the seat's own network
    int16_t order[MAX_TICKETS]
    int16_t added[MAX_TICKETS]
    uint8_t on[MAX_TICKETS]
    uint64_t paths[MAX_TICKETS][2]  # routes of the path that joined each ticket


ctypedef struct Needs:
    # Cards the routes of a plan still need, after counting the hand.
    int want[N_CARD_TYPES]    # cards of each type the remaining routes use (gray routes
                              # are given the colour the hand serves best; WILD: ferries)
    int missing[N_CARD_TYPES] # want minus hand, at least 0 (before wild cards)
    int short                 # cards still to collect, wild cards counted as any colour
    int8_t color[MAX_ROUTES]  # colour each plan route is meant to be paid with


cdef inline uint64_t longer_than(const BoardInfo* bi, int n, int w) noexcept nogil:
    """Word w of the bitset of routes longer than n (none when n reaches MAX_LEN)."""
    return bi.longer[n][w] if n < MAX_LEN else 0


cdef inline int hand_most(const BoardC* b, const int16_t* hand) noexcept nogil:
    """The largest count of one plain colour in a hand. It reads all MAX_COLORS counts
    (those beyond the board's colours are 0): a fixed-length max the compiler turns into
    a few vector instructions."""
    cdef int c
    cdef int16_t most = 0
    for c in range(MAX_COLORS):
        most = hand[c] if hand[c] > most else most
    return most


cdef inline bint may_afford(const BoardC* b, const int16_t* hand, int most, int r) noexcept nogil:
    """Quick necessary test that a hand can pay route r (`most`: hand_most(hand)); the
    exact test is claim_payment."""
    cdef int c = b.route_color[r]
    if hand[WILD] < b.route_ferry[r]:
        return False
    return (most if c == GRAY else hand[c]) + hand[WILD] >= b.route_len[r]


cdef inline int route_partner_open(const BoardC* b, const GameState* s, int route,
                                   int seat) noexcept nogil:
    """The other half of a double route if `seat` may claim it, else -1 (inline: the
    policies ask it for every planned route each turn)."""
    cdef int q = b.route_partner[route]
    if q >= 0 and route_open(b, s, q, seat) and b.route_len[q] <= s.p[seat].trains:
        return q
    return -1


# --- planning ------------------------------------------------------------------------

cdef void board_info_init(BoardInfo* bi, const BoardC* b, const PlanParams* prm) noexcept nogil
cdef void route_weights(const BoardInfo* bi, const PlanParams* prm, const GameState* s,
                        int seat, int32_t* w) noexcept nogil
cdef int shortest_path(const BoardInfo* bi, const int32_t* w, int src, int dst, int32_t* dist,
                       int16_t* pred) noexcept nogil
cdef void own_components(const BoardC* b, const GameState* s, int seat,
                         int8_t* comp) noexcept nogil
cdef void plan_clear(Plan* out) noexcept nogil
cdef int connect_ticket(const BoardInfo* bi, const PlanParams* prm, const GameState* s,
                        int seat, int t, int32_t* w, Plan* out, Workspace* ws) noexcept nogil
cdef int shortest_from(const BoardInfo* bi, const int32_t* w, uint64_t sources, int dst,
                       int32_t* dist, int16_t* pred) noexcept nogil
cdef int add_route(const BoardInfo* bi, const PlanParams* prm, const GameState* s, int seat,
                   int r, int32_t* w, Plan* out) noexcept nogil
cdef void sort_longest_first(const BoardInfo* bi, int16_t* order, int n) noexcept nogil
cdef void routes_longest_first(const BoardC* b, int16_t* order, int n) noexcept nogil
cdef int least_worth(const BoardC* b, const Workspace* ws, int n) noexcept nogil
cdef int repair_plan(const BoardInfo* bi, const PlanParams* prm, const GameState* s,
                     int seat, const uint64_t* tickets, const Plan* prev, int budget,
                     Plan* out, Workspace* ws) noexcept nogil
cdef int plan_tickets(const BoardInfo* bi, const PlanParams* prm, const GameState* s,
                      int seat, const uint64_t* tickets, int budget, Plan* out,
                      Workspace* ws) noexcept nogil
cdef bint ticket_connected(const BoardC* b, const GameState* s, int seat,
                           int ticket) noexcept nogil
cdef bint connected_with(const BoardC* b, const GameState* s, int seat, int ticket,
                         int extra) noexcept nogil

cdef void unknown_cards(const BoardC* b, const GameState* s, int seat,
                        int* pool) noexcept nogil
cdef void hypergeom_pmf(int n, int m, int k, double* pmf) noexcept nogil
cdef double tunnel_fail_prob(const int* pool, int color, int spare) noexcept nogil
cdef double reveal_fail_prob(const int* pool, const GameState* s, int color,
                             int spare) noexcept nogil
cdef double blind_useful_prob(const int* pool, const int* missing) noexcept nogil
cdef double rounds_left(const BoardC* b, const GameState* s) noexcept nogil

cdef void plan_needs(const BoardC* b, const GameState* s, int seat, const Plan* plan,
                     int tunnel_spare, Needs* nd) noexcept nogil
cdef int claim_payment(const BoardC* b, const GameState* s, int seat, int route,
                       const int* keep, double risk, const int* pool,
                       int32_t* act) noexcept nogil
cdef int station_payment(const BoardC* b, const GameState* s, int seat, int city,
                         const int* keep, int32_t* act) noexcept nogil
cdef int claim_payments(const GameState* s, int seat, const int32_t* legal, int n_legal,
                        int16_t* order, int32_t* pay) noexcept nogil
cdef int longest_claims(const BoardC* b, const GameState* s, int seat, const int32_t* legal,
                        int n_legal, int16_t* order, int32_t* pay) noexcept nogil


# --- a decision's candidate moves: one listing for the policies that rank a few ----------
# (the search, `expert`). Candidates are distinct action codes in the order added.
ctypedef struct Candidates:
    int32_t* act              # room for `cap` codes
    int n
    int cap
    bint one_ticket_draw      # only the first candidate may be a ticket draw

cdef bint cand_add(Candidates* c, int32_t act) noexcept nogil
cdef void faceup_colours(Candidates* c, const GameState* s, const int32_t* legal,
                         int n_legal, bint new_colours) noexcept nogil
cdef int turn_candidates(const BoardC* b, const GameState* s, int seat, const int32_t* legal,
                         int n_legal, Candidates* c, int n_longest, bint tunnels,
                         bint faceup) noexcept nogil
