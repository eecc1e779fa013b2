# The rules engine: every function works on flat structs and runs without the GIL.
from libc.stdint cimport int8_t, int32_t, uint64_t
from ttrsim._structs cimport BoardC, GameState, N_CARD_TYPES, Rng, ScoreC


# Action codes: kind << 24 | a << 16 | b << 8 | c.
cdef inline int32_t make_action(int kind, int a, int b, int c) noexcept nogil:
    return (kind << 24) | (a << 16) | (b << 8) | c

cdef inline int action_kind(int32_t act) noexcept nogil:
    return (act >> 24) & 0xFF

cdef inline int action_a(int32_t act) noexcept nogil:
    return (act >> 16) & 0xFF

cdef inline int action_b(int32_t act) noexcept nogil:
    return (act >> 8) & 0xFF

cdef inline int action_c(int32_t act) noexcept nogil:
    return act & 0xFF


# Optional event sink: the batch runner records events through these callbacks.
ctypedef void (*on_claim_fn)(void* ctx, const GameState* s, int seat, int route) noexcept nogil
ctypedef void (*on_tunnel_fn)(void* ctx, const GameState* s, int seat, int route, int color,
                              int revealed, int extra, int outcome) noexcept nogil
ctypedef void (*on_station_fn)(void* ctx, const GameState* s, int seat, int city) noexcept nogil
ctypedef void (*on_offer_fn)(void* ctx, const GameState* s, int seat, int ticket, int kept,
                             int initial) noexcept nogil

ctypedef struct EventSink:
    void* ctx
    on_claim_fn on_claim
    on_tunnel_fn on_tunnel
    on_station_fn on_station
    on_offer_fn on_offer

# Codes of check_state: the first broken invariant (0: none); CHECK_MESSAGES in _engine.pyx.
cdef enum:
    CHK_PHASE = 1
    CHK_CARD_RANGE = 2
    CHK_CARD_TOTAL = 3
    CHK_TICKETS = 4
    CHK_PENDING = 5
    CHK_ROUTES = 6
    CHK_TRAINS = 7
    CHK_ROUTE_POINTS = 8
    CHK_DOUBLE_SAME = 9
    CHK_DOUBLE_CLOSED = 10
    CHK_STATIONS = 11
    CHK_TUNNEL = 12
    CHK_END = 13
    CHK_KNOWN = 14

cdef enum:
    TUNNEL_FREE = 0
    TUNNEL_PAID = 1
    TUNNEL_DECLINED = 2


# Union-find over cities (parent[x] == x at a root), inline in every module that uses it.
cdef inline int uf_find(int8_t* parent, int x) noexcept nogil:
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x


cdef inline void uf_union(int8_t* parent, int x, int y) noexcept nogil:
    x = uf_find(parent, x)
    y = uf_find(parent, y)
    if x != y:
        parent[x] = y


cdef inline bint route_open(const BoardC* b, const GameState* s, int route, int seat) noexcept nogil:
    """Unclaimed and not closed by the double-route rules for this seat (inline: the
    policies' hot loops call it). GameState.closed and closed_to hold the same as bitsets;
    check_state compares the two."""
    cdef int q
    if s.route_owner[route] >= 0:
        return False
    q = b.route_partner[route]
    if q >= 0 and s.route_owner[q] >= 0:
        if s.n_players < b.double_min_players or s.route_owner[q] == seat:
            return False
    return True


cdef inline int hand_total(const GameState* s, int seat) noexcept nogil:
    """Cards in the seat's hand (inline: the planner reads every hand each turn)."""
    cdef int t, n = 0
    for t in range(N_CARD_TYPES):
        n += s.p[seat].hand[t]
    return n


cdef inline void claimed_routes(const GameState* s, uint64_t* out) noexcept nogil:
    """Bitset of the routes any player owns, from the players' route bitsets."""
    cdef int q
    out[0] = 0
    out[1] = 0
    for q in range(s.n_players):
        out[0] |= s.p[q].routes[0]
        out[1] |= s.p[q].routes[1]


cdef void game_init(const BoardC* b, GameState* s, int n_players, uint64_t seed) noexcept nogil
cdef int legal_actions(const BoardC* b, const GameState* s, int32_t* out) noexcept nogil
cdef int32_t sample_legal(const BoardC* b, const GameState* s, Rng* rng) noexcept nogil
cdef bint is_legal(const BoardC* b, const GameState* s, int32_t act) noexcept nogil
cdef int apply_action(const BoardC* b, GameState* s, int32_t act, EventSink* ev) noexcept nogil
cdef void apply_legal(const BoardC* b, GameState* s, int32_t act, EventSink* ev) noexcept nogil
cdef void score_game(const BoardC* b, const GameState* s, ScoreC* out) noexcept nogil
cdef int longest_trail(const BoardC* b, const GameState* s, int seat) noexcept nogil
cdef int count_wild_faceup(const GameState* s) noexcept nogil
cdef int discard_total(const GameState* s) noexcept nogil
cdef void own_network(const BoardC* b, const GameState* s, int seat, int8_t* parent,
                      int skip) noexcept nogil
cdef void determinize(const BoardC* b, GameState* s, int seat, uint64_t seed) noexcept nogil

cdef inline int ticket_class(const BoardC* b, int t) noexcept nogil:
    # 1 for a long ticket on a board that deals long tickets apart (their backs differ),
    # else 0; sampled worlds keep each ticket place's class
    return 1 if b.deal_long > 0 and b.ticket_long[t] else 0
cdef int check_state(const BoardC* b, const GameState* s) noexcept nogil


cdef class CompiledBoard:
    cdef BoardC c
    cdef readonly object board     # the ttrsim.maps.Board it was compiled from


cdef dict observation_dict(const BoardC* b, const GameState* s, int seat)
# the current position of a ``ttrsim.Game`` (or its core) copied into s; its compiled board
cdef CompiledBoard copy_position(object game, GameState* s)
cdef dict score_dict(const BoardC* b, const ScoreC* sc)
