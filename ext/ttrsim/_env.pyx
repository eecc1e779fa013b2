# The learning-environment layer of ttrsim: a fixed flat action space per board, a fixed
# observation layout per board and player count (docs/env.md), their encoders over the
# core's GameState, a vector environment that steps many games per call without the GIL
# (opponents played inside the loop), and a Policy that lets any callable
# f(observation, mask) -> action index play a seat. The rules stay in _engine.
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memset
from posix.time cimport CLOCK_MONOTONIC, clock_gettime, timespec

from ttrsim._structs cimport *
from ttrsim._engine cimport (CompiledBoard, copy_position, EventSink, action_a, action_b, action_c,
                             action_kind, apply_legal, discard_total,
                             game_init, hand_total,
                             legal_actions, make_action, sample_legal, score_game)
from ttrsim._rng cimport rng_below, rng_seed, splitmix64
from ttrsim._bits cimport get_bit, lowest_bit
from ttrsim._policy cimport (Policy, PolicyRef, STEP_OK, Step, play_step, policy_ref, ref_start,
                             start_python, step_error)

import numpy as np

from ttrsim._policy import PolicyError


# ---------------------------------------------------------------------------
# the action space

cdef enum:
    I_FACEUP = 0           # 5 face-up slots
    I_BLIND = 5
    I_TICKETS = 6
    I_PASS = 7
    I_DECLINE = 8
    I_TPAY = 9             # tunnel: pay with 0..3 wild cards among the extra cards
    I_KEEP = 13            # keep masks 1 .. 2**max_offer - 1
    MAX_EXTRA = 3


ctypedef struct Space:
    int n_actions
    int n_colors
    int n_routes
    int n_cities
    int n_tickets
    int max_offer          # most tickets offered at once on this board
    int stations           # station cost at most (the board's stations)
    int claim0             # first claim index
    int station0           # first station index
    int st_width           # indices per city: n_colors * stations + 1
    int claim_base[MAX_ROUTES + 1]
    int claim_step[MAX_ROUTES]   # indices per payment colour (n - ferry)
    # routes grouped by colour (GRAY for gray), length and ferry cards: the routes of a
    # group have the same block of payments, built once per mask and copied
    int n_groups
    uint64_t g_routes[MAX_ROUTES][2]
    int g_color[MAX_ROUTES]
    int g_len[MAX_ROUTES]
    int g_ferry[MAX_ROUTES]


cdef void space_init(const BoardC* b, Space* sp) noexcept nogil:
    cdef int r, n, f, w, k
    memset(sp, 0, sizeof(Space))
    sp.n_colors = b.n_colors
    sp.n_routes = b.n_routes
    sp.n_cities = b.n_cities
    sp.n_tickets = b.n_tickets
    k = b.deal_long + b.deal_regular
    sp.max_offer = k if k > b.draw_tickets else b.draw_tickets
    if sp.max_offer > MAX_PENDING:
        sp.max_offer = MAX_PENDING
    sp.stations = b.stations
    sp.claim0 = I_KEEP + (1 << sp.max_offer) - 1
    w = sp.claim0
    for r in range(b.n_routes):
        n = b.route_len[r]
        f = b.route_ferry[r]
        sp.claim_base[r] = w
        sp.claim_step[r] = n - f if n > f else 0
        if b.route_color[r] == GRAY:
            w += b.n_colors * sp.claim_step[r] + 1
        else:
            w += sp.claim_step[r] + 1
    sp.claim_base[b.n_routes] = w
    sp.station0 = w
    sp.n_groups = 0
    for r in range(b.n_routes):
        for k in range(sp.n_groups):
            if (sp.g_color[k] == b.route_color[r] and sp.g_len[k] == b.route_len[r]
                    and sp.g_ferry[k] == b.route_ferry[r]):
                break
        else:
            k = sp.n_groups
            sp.n_groups += 1
            sp.g_color[k] = b.route_color[r]
            sp.g_len[k] = b.route_len[r]
            sp.g_ferry[k] = b.route_ferry[r]
            sp.g_routes[k][0] = 0
            sp.g_routes[k][1] = 0
        sp.g_routes[k][r >> 6] |= (<uint64_t>1) << (r & 63)
    sp.st_width = b.n_colors * b.stations + 1 if b.stations > 0 else 0
    sp.n_actions = w + b.n_cities * sp.st_width


cdef inline int station_cost(const BoardC* b, const GameState* s) noexcept nogil:
    return b.stations - s.p[s.current].stations_left + 1


cdef inline int code_to_index(const Space* sp, const BoardC* b, int32_t code) noexcept nogil:
    """Index of a core action code in the flat space (-1: none)."""
    cdef int kind = action_kind(code), a = action_a(code), c = action_b(code), k = action_c(code)
    cdef int f
    if kind == ACT_CLAIM:
        f = b.route_ferry[a]
        if c == WILD:
            return sp.claim_base[a + 1] - 1
        if b.route_color[a] == GRAY:
            return sp.claim_base[a] + c * sp.claim_step[a] + k - f
        return sp.claim_base[a] + k - f
    if kind == ACT_STATION:
        if c == WILD:
            return sp.station0 + a * sp.st_width + sp.st_width - 1
        return sp.station0 + a * sp.st_width + c * sp.stations + k
    if kind == ACT_DRAW_FACEUP:
        return I_FACEUP + a
    if kind == ACT_DRAW_BLIND:
        return I_BLIND
    if kind == ACT_DRAW_TICKETS:
        return I_TICKETS
    if kind == ACT_PASS:
        return I_PASS
    if kind == ACT_TUNNEL_DECLINE:
        return I_DECLINE
    if kind == ACT_TUNNEL_PAY:
        return I_TPAY + k
    if kind == ACT_KEEP:
        return I_KEEP + a - 1
    return -1


cdef int32_t index_to_code(const Space* sp, const BoardC* b, const GameState* s,
                           int i) noexcept nogil:
    """Core action code of flat index i in state s (-1: not an index of the space). The
    all-wild station needs the state: it pays the seat's current station cost."""
    cdef int lo, hi, mid, r, j, x
    if i < 0 or i >= sp.n_actions:
        return -1
    if i < I_BLIND:
        return make_action(ACT_DRAW_FACEUP, i, 0, 0)
    if i == I_BLIND:
        return make_action(ACT_DRAW_BLIND, 0, 0, 0)
    if i == I_TICKETS:
        return make_action(ACT_DRAW_TICKETS, 0, 0, 0)
    if i == I_PASS:
        return make_action(ACT_PASS, 0, 0, 0)
    if i == I_DECLINE:
        return make_action(ACT_TUNNEL_DECLINE, 0, 0, 0)
    if i < I_KEEP:
        return make_action(ACT_TUNNEL_PAY, 0, 0, i - I_TPAY)
    if i < sp.claim0:
        return make_action(ACT_KEEP, i - I_KEEP + 1, 0, 0)
    if i < sp.station0:
        lo = 0
        hi = sp.n_routes            # claim_base[lo] <= i < claim_base[hi]
        while hi - lo > 1:
            mid = (lo + hi) >> 1
            if sp.claim_base[mid] <= i:
                lo = mid
            else:
                hi = mid
        r = lo
        j = i - sp.claim_base[r]
        if i == sp.claim_base[r + 1] - 1:
            return make_action(ACT_CLAIM, r, WILD, b.route_len[r])
        if b.route_color[r] == GRAY:
            return make_action(ACT_CLAIM, r, j // sp.claim_step[r],
                               b.route_ferry[r] + j % sp.claim_step[r])
        return make_action(ACT_CLAIM, r, b.route_color[r], b.route_ferry[r] + j)
    j = i - sp.station0
    x = j // sp.st_width
    j = j % sp.st_width
    if j == sp.st_width - 1:
        return make_action(ACT_STATION, x, WILD, station_cost(b, s))
    return make_action(ACT_STATION, x, j // sp.stations, j % sp.stations)


cdef inline int colour_block(uint8_t* out, int h, int w, int n, int f) noexcept nogil:
    """Mark the legal wild counts of one payment colour: paying n cards with h cards of
    the colour and w wilds held, at least f wilds (ferry) and one coloured card, are the
    wild counts max(n - h, f) .. min(w, n - 1); out[k - f] is wild count k. Returns how
    many."""
    cdef int hi = w if w < n - 1 else n - 1
    cdef int lo = n - h if n - h > f else f
    cdef int k
    if h <= 0 or hi < lo:
        return 0
    for k in range(lo - f, hi - f + 1):        # a few bytes: no call to memset
        out[k] = 1
    return hi - lo + 1


cdef int write_mask(const Space* sp, const BoardC* b, const GameState* s, int seat,
                    uint8_t* mask, int32_t* buf) noexcept nogil:
    """Mask of the legal actions of `seat` (all zero when another seat acts or the game is
    over); returns the number of legal actions. A turn's claims and stations are marked
    by ranges of wild counts, without listing every payment (they are the same set as
    legal_actions lists: the tests compare them at every step)."""
    cdef int m
    memset(mask, 0, sp.n_actions)
    if s.phase == PH_OVER or s.current != seat:
        return 0
    if s.phase != PH_TURN:
        return mask_listed(sp, b, s, mask, buf)
    m = mask_draws(s, mask)
    m += mask_claims(sp, b, s, seat, mask)
    m += mask_stations(sp, b, s, seat, mask)
    if m == 0:
        mask[I_PASS] = 1
        m = 1
    return m


cdef inline int mask_listed(const Space* sp, const BoardC* b, const GameState* s,
                            uint8_t* mask, int32_t* buf) noexcept nogil:
    """Outside a turn (second draw, tickets, tunnel) the legal actions are few: list them."""
    cdef int i, n = legal_actions(b, s, buf)
    for i in range(n):
        mask[code_to_index(sp, b, buf[i])] = 1
    return n


cdef inline int mask_draws(const GameState* s, uint8_t* mask) noexcept nogil:
    """A turn's draws: each face-up card, the blind draw, a ticket draw."""
    cdef int i, m = 0
    for i in range(N_FACEUP):
        if s.faceup[i] >= 0:
            mask[I_FACEUP + i] = 1
            m += 1
    if s.deck_n > 0 or discard_total(s) > 0:
        mask[I_BLIND] = 1
        m += 1
    if s.tdeck_n > 0:
        mask[I_TICKETS] = 1
        m += 1
    return m


cdef inline int mask_claims(const Space* sp, const BoardC* b, const GameState* s, int seat,
                            uint8_t* mask) noexcept nogil:
    """A turn's claims, group by group: the block of payments is built once, then copied
    to each open route of the group (the routes' own work is a copy: no branch on their
    colours)."""
    cdef const PlayerC* p = &s.p[seat]
    cdef const int16_t* hand = &p.hand[0]
    cdef int g, c, i, n, r, k, width, w = hand[WILD], most = 0, m = 0
    cdef uint64_t open_[2]
    cdef uint64_t cand[2]
    cdef uint64_t bits
    cdef uint8_t pattern[MAX_COLORS * MAX_LEN + 1]
    for c in range(b.n_colors):
        if hand[c] > most:
            most = hand[c]
    open_[0] = b.all_routes[0] & ~s.closed[0] & ~s.closed_to[seat][0]
    open_[1] = b.all_routes[1] & ~s.closed[1] & ~s.closed_to[seat][1]
    for g in range(sp.n_groups):
        n = sp.g_len[g]
        if n > p.trains or sp.g_ferry[g] > w:
            continue
        # without enough wilds alone, a colour needs max(1, n - w) cards: skip the
        # group before building its block when no colour (or not its own) has them
        if w < n and (most if sp.g_color[g] == GRAY else hand[sp.g_color[g]]) < \
                (n - w if n - w > 1 else 1):
            continue
        cand[0] = open_[0] & sp.g_routes[g][0]
        cand[1] = open_[1] & sp.g_routes[g][1]
        if cand[0] == 0 and cand[1] == 0:
            continue
        k = group_pattern(sp, b, g, hand, pattern, &width)
        if k == 0:
            continue
        for i in range(2):
            bits = cand[i]
            while bits:
                r = (i << 6) + lowest_bit(bits)
                bits &= bits - 1
                memcpy(mask + sp.claim_base[r], pattern, width)
                m += k
    return m


cdef inline int group_pattern(const Space* sp, const BoardC* b, int g, const int16_t* hand,
                              uint8_t* pattern, int* width) noexcept nogil:
    """The block of legal payments of a route of group g (its colour, length, ferry
    cards) for `hand`, into pattern[0 .. width-1]; returns how many are legal."""
    cdef int c, k = 0, n = sp.g_len[g], f = sp.g_ferry[g], w = hand[WILD]
    cdef int step = n - f if n > f else 0
    width[0] = step + 1
    if sp.g_color[g] == GRAY:
        width[0] = b.n_colors * step + 1
        memset(pattern, 0, width[0])
        for c in range(b.n_colors):
            k += colour_block(pattern + c * step, hand[c], w, n, f)
    else:
        memset(pattern, 0, width[0])
        k += colour_block(pattern, hand[sp.g_color[g]], w, n, f)
    if w >= n:
        pattern[width[0] - 1] = 1
        k += 1
    return k


cdef inline int mask_stations(const Space* sp, const BoardC* b, const GameState* s, int seat,
                              uint8_t* mask) noexcept nogil:
    """A turn's stations: one city's block of payments, zero-padded to whole 8-byte
    words, copied word by word to every free city (a copy's padding spills zeros into
    the next city's block, which is zero or rewritten next; the last city gets an exact
    copy)."""
    cdef const PlayerC* p = &s.p[seat]
    cdef const int16_t* hand = &p.hand[0]
    cdef int c, i, k, base, width, cost, w = hand[WILD], per_city = 0, m = 0
    cdef uint8_t spat[MAX_COLORS * MAX_STATIONS + 8]
    if p.stations_left <= 0:
        return 0
    cost = b.stations - p.stations_left + 1
    width = (sp.st_width + 7) & ~7
    memset(spat, 0, width)
    for c in range(b.n_colors):
        per_city += colour_block(spat + c * sp.stations, hand[c], w, cost, 0)
    if w >= cost:
        spat[sp.st_width - 1] = 1
        per_city += 1
    if per_city == 0:
        return 0
    base = sp.station0
    for i in range(b.n_cities):
        if s.city_station[i] < 0:
            if i < b.n_cities - 1:
                for k in range(0, width, 8):
                    memcpy(mask + base + k, spat + k, 8)
            else:
                memcpy(mask + base, spat, sp.st_width)
            m += per_city
        base += sp.st_width
    return m


# ---------------------------------------------------------------------------
# the observation

# Fields of the observation vector in order: (name, length); lengths depend on the
# board (routes, cities, tickets, largest offer) and on the player count.
cdef enum:
    N_SCALARS = 7          # phase, current, turn, last_round, turns_left, deck, ticket deck
    N_PLAYER_FIELDS = 5    # trains, stations_left, hand_size, tickets, route_points
    N_TUNNEL = 7           # route, colour, wild, extra, revealed x 3


def _layout(int n_routes, int n_cities, int n_tickets, int max_offer, int n_players):
    return [("phase", 1), ("current", 1), ("turn", 1), ("last_round", 1), ("turns_left", 1),
            ("deck_size", 1), ("ticket_deck_size", 1),
            ("hand", N_CARD_TYPES), ("faceup", N_FACEUP), ("discard", N_CARD_TYPES),
            ("tickets", n_tickets), ("offer", max_offer),
            ("route_owner", n_routes), ("city_station", n_cities),
            ("players", n_players * N_PLAYER_FIELDS), ("tunnel", N_TUNNEL)]


cdef inline int obs_length(const Space* sp, int n_players) noexcept nogil:
    return (N_SCALARS + N_CARD_TYPES + N_FACEUP + N_CARD_TYPES + sp.n_tickets + sp.max_offer + sp.n_routes + sp.n_cities
            + n_players * N_PLAYER_FIELDS + N_TUNNEL)


cdef inline int rel(int q, int seat, int n) noexcept nogil:
    """Seat q as seen from `seat`: 0 itself, 1 the next seat to play, ... (-1 stays -1);
    without a branch (route owners follow no pattern a predictor learns)."""
    cdef int d = q - seat
    d += n & -(d < 0)
    return d | -(q < 0)


cdef void write_obs(const Space* sp, const BoardC* b, const GameState* s, int seat,
                    int16_t* o) noexcept nogil:
    """The observation of `seat` (docs/env.md): only what that seat may know."""
    cdef int n = s.n_players, i, t, q, k
    cdef uint64_t bits
    cdef const PlayerC* p = &s.p[seat]
    cdef bint setup = s.phase == PH_SETUP_TICKETS
    o[0] = s.phase
    o[1] = rel(s.current, seat, n)
    o[2] = s.turn if s.turn < 32767 else 32767
    o[3] = s.last_round
    o[4] = s.turns_left if s.last_round else 0
    o[5] = s.deck_n
    o[6] = s.tdeck_n
    o += N_SCALARS
    for t in range(N_CARD_TYPES):
        o[t] = p.hand[t]
    o += N_CARD_TYPES
    for i in range(N_FACEUP):
        o[i] = s.faceup[i]
    o += N_FACEUP
    for t in range(N_CARD_TYPES):
        o[t] = s.discard[t]
    o += N_CARD_TYPES
    memset(o, 0, sp.n_tickets * sizeof(int16_t))
    for i in range(2):
        bits = p.tickets[i]
        while bits:
            o[(i << 6) + lowest_bit(bits)] = 1
            bits &= bits - 1
        bits = p.discarded[i]
        while bits:
            o[(i << 6) + lowest_bit(bits)] = 3
            bits &= bits - 1
    for i in range(s.n_pending[seat]):
        o[s.pending[seat][i]] = 2
    o += sp.n_tickets
    for i in range(sp.max_offer):
        o[i] = s.pending[seat][i] if i < s.n_pending[seat] else -1
    o += sp.max_offer
    for i in range(sp.n_routes):
        o[i] = rel(s.route_owner[i], seat, n)
    o += sp.n_routes
    for i in range(sp.n_cities):
        o[i] = rel(s.city_station[i], seat, n)
    o += sp.n_cities
    for k in range(n):
        q = seat + k
        if q >= n:
            q -= n
        o[0] = s.p[q].trains
        o[1] = s.p[q].stations_left
        o[2] = hand_total(s, q)
        # the initial choices count as simultaneous and secret (as Game.observation)
        o[3] = 0 if setup and q != seat else s.p[q].n_tickets
        o[4] = s.p[q].route_points
        o += N_PLAYER_FIELDS
    if s.phase == PH_TUNNEL and s.current == seat:
        o[0] = s.t_route
        o[1] = s.t_color
        o[2] = s.t_wild
        o[3] = s.t_extra
        for i in range(3):
            o[4 + i] = s.revealed[i] if i < s.n_revealed else -1
    else:
        o[0] = -1
        o[1] = -1
        o[2] = 0
        o[3] = 0
        o[4] = -1
        o[5] = -1
        o[6] = -1


# ---------------------------------------------------------------------------
# Python view of the encoding

cdef class Encoding:
    """The fixed encoding of one board and player count: action indices <-> core action
    codes, observation vectors and legal-action masks of positions (docs/env.md)."""
    cdef Space sp
    cdef readonly CompiledBoard cb
    cdef readonly int n_players
    cdef readonly int n_actions
    cdef readonly int obs_size
    cdef int32_t* buf
    cdef readonly object layout     # [(name, slice)]

    def __cinit__(self, CompiledBoard cb, int n_players):
        self.cb = cb
        self.n_players = n_players
        space_init(&cb.c, &self.sp)
        self.n_actions = self.sp.n_actions
        self.obs_size = obs_length(&self.sp, n_players)
        self.buf = <int32_t*>malloc(MAX_ACTIONS * sizeof(int32_t))
        if self.buf == NULL:
            raise MemoryError()
        out, start = [], 0
        for name, n in _layout(cb.c.n_routes, cb.c.n_cities, cb.c.n_tickets,
                               self.sp.max_offer, n_players):
            out.append((name, slice(start, start + n)))
            start += n
        assert start == self.obs_size
        self.layout = out

    def __dealloc__(self):
        free(self.buf)

    @property
    def max_offer(self):
        return self.sp.max_offer

    def blocks(self):
        """The action index ranges by kind: {kind: (first, stop)}."""
        sp = &self.sp
        return {"draw_faceup": (I_FACEUP, I_BLIND), "draw_blind": (I_BLIND, I_BLIND + 1),
                "draw_tickets": (I_TICKETS, I_TICKETS + 1), "pass": (I_PASS, I_PASS + 1),
                "tunnel_decline": (I_DECLINE, I_DECLINE + 1), "tunnel_pay": (I_TPAY, I_KEEP),
                "keep": (I_KEEP, sp.claim0), "claim": (sp.claim0, sp.station0),
                "station": (sp.station0, sp.n_actions)}

    def claim_range(self, int route):
        """(first, stop) action indices of the claims of a route."""
        if not 0 <= route < self.sp.n_routes:
            raise ValueError(f"route {route} outside 0..{self.sp.n_routes - 1}")
        return self.sp.claim_base[route], self.sp.claim_base[route + 1]

    def index(self, int32_t code):
        """Flat index of a core action code (ValueError if it has none)."""
        cdef int i = -1
        cdef int kind = action_kind(code), a = action_a(code), c = action_b(code), k = action_c(code)
        cdef const BoardC* b = &self.cb.c
        ok = False
        if kind == ACT_CLAIM:
            ok = (a < b.n_routes and (c == WILD and k == b.route_len[a]
                  or c < b.n_colors and b.route_ferry[a] <= k < b.route_len[a]
                  and (b.route_color[a] == GRAY or b.route_color[a] == c)))
        elif kind == ACT_STATION:
            ok = (a < b.n_cities and self.sp.stations > 0
                  and (c == WILD and 1 <= k <= self.sp.stations
                       or c < b.n_colors and k < self.sp.stations))
        elif kind == ACT_KEEP:
            ok = 0 < a < (1 << self.sp.max_offer) and (code & 0xFFFF) == 0
        elif kind == ACT_TUNNEL_PAY:
            ok = k <= MAX_EXTRA and (code & 0xFFFF00) == 0
        elif kind == ACT_DRAW_FACEUP:
            ok = a < N_FACEUP and (code & 0xFFFF) == 0
        elif kind in (ACT_DRAW_BLIND, ACT_DRAW_TICKETS, ACT_PASS, ACT_TUNNEL_DECLINE):
            ok = (code & 0xFFFFFF) == 0
        if ok:
            i = code_to_index(&self.sp, b, code)
        if i < 0:
            raise ValueError(f"action code {code} has no index in the action space of "
                             f"{self.cb.board.name}")
        return i

    def code(self, int index, core):
        """Core action code of a flat index in the position of `core` (a GameCore; the
        all-wild station pays the seat's current station cost)."""
        cdef GameState s
        if not 0 <= index < self.sp.n_actions:
            raise ValueError(f"action {index} outside 0..{self.sp.n_actions - 1}")
        copy_position(core, &s)
        return index_to_code(&self.sp, &self.cb.c, &s, index)

    def code_table(self):
        """Core codes of every index in a position where stations cost 1 (int32 array)."""
        cdef GameState s
        memset(&s, 0, sizeof(GameState))
        s.p[0].stations_left = self.cb.c.stations
        out = np.empty(self.sp.n_actions, dtype=np.int32)
        cdef int32_t[::1] v = out
        cdef int i
        for i in range(self.sp.n_actions):
            v[i] = index_to_code(&self.sp, &self.cb.c, &s, i)
        return out

    def encode(self, core, int seat, int16_t[::1] obs, uint8_t[::1] mask):
        """Write the observation and the legal mask of `seat` in the position of `core`
        into obs (int16, obs_size) and mask (1-byte, n_actions); return the number of
        legal actions."""
        cdef GameState s
        if obs.shape[0] != self.obs_size or mask.shape[0] != self.n_actions:
            raise ValueError("obs / mask buffers of the wrong size")
        copy_position(core, &s)
        if s.n_players != self.n_players:
            raise ValueError(f"a {s.n_players}-player game given to a {self.n_players}-player encoding")
        write_obs(&self.sp, &self.cb.c, &s, seat, &obs[0])
        return write_mask(&self.sp, &self.cb.c, &s, seat, &mask[0], self.buf)


# ---------------------------------------------------------------------------
# calling compiled policies without the GIL (PolicyRef: _policy.pxd)

def start_policy(Policy policy, core, int seat, uint64_t seed):
    """Start a game for `seat` in the position of `core` as the vector environment does
    (for tests that replay its games with ``decide(..., start=False)``)."""
    cdef GameState s
    copy_position(core, &s)
    policy.start_game(&(<CompiledBoard>getattr(core, "_core", core).cb).c, &s, seat, seed)


def policy_seeds(uint64_t game_seed, int n_players):
    """Start seeds of the seats' policies in a game (as the batch loop derives them)."""
    cdef uint64_t x = game_seed
    return [splitmix64(&x) for _ in range(n_players)]


# ---------------------------------------------------------------------------
# the vector environment

cdef inline int64_t now_ns() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec * 1000000000 + ts.tv_nsec

cdef enum:
    R_WIN = 0
    R_SCORE = 1
    R_MARGIN = 2

REWARDS = {"win": R_WIN, "score": R_SCORE, "margin": R_MARGIN}



cdef class VectorEnvCore:
    """n_envs games stepped together; see ttrsim.env.VectorEnv (the public class)."""
    cdef CompiledBoard cb
    cdef Space sp
    cdef readonly int n_envs, n_players, n_actions, obs_size, max_turns, reward_kind
    cdef readonly int fixed_seat, autoreset
    cdef GameState* states
    cdef Rng* sample_rng
    cdef uint64_t* stream           # per env: the SplitMix64 state of its game seeds
    cdef uint64_t* seeds            # per env: the current game's seed
    cdef int* seat                  # per env: the agent's seat in the current game
    cdef uint8_t* over              # per env: finished (autoreset off) until reset
    cdef PolicyRef* refs            # per env and opponent (relative seat 1 .. n-1)
    cdef int32_t* buf
    cdef list _policies
    cdef readonly object obs, masks, rewards, terminations, truncations, actions_out
    cdef readonly object final_scores
    cdef int16_t[:, ::1] v_obs
    cdef uint8_t[:, ::1] v_mask
    cdef float[::1] v_rew
    cdef uint8_t[::1] v_term
    cdef uint8_t[::1] v_trunc
    cdef int32_t[::1] v_act
    cdef int16_t[:, ::1] v_final
    cdef int bad_env, bad_rel
    cdef Step failed                # the opponent's decision that failed
    cdef public bint profile        # time the loop's parts (profile_ns)
    cdef int64_t ns[6]              # agent move, opponents, new games, obs, mask, sampling

    def __cinit__(self):
        self.states = NULL
        self.sample_rng = NULL
        self.stream = NULL
        self.seeds = NULL
        self.seat = NULL
        self.over = NULL
        self.refs = NULL
        self.buf = NULL

    def __init__(self, CompiledBoard cb, int n_players, int n_envs, list policies,
                 int seat=-1, str reward="win", int max_turns=TURN_LIMIT,
                 bint autoreset=True):
        cdef int i, k
        if n_envs < 1:
            raise ValueError(f"n_envs must be at least 1, got {n_envs}")
        if reward not in REWARDS:
            raise ValueError(f"unknown reward {reward!r}; expected one of {', '.join(REWARDS)}")
        if len(policies) != n_envs * (n_players - 1):
            raise ValueError("one Policy per env and opponent seat is needed")
        if len(set(map(id, policies))) != len(policies):
            raise ValueError("every env and opponent seat needs its own Policy instance")
        self.cb = cb
        space_init(&cb.c, &self.sp)
        self.n_envs = n_envs
        self.n_players = n_players
        self.n_actions = self.sp.n_actions
        self.obs_size = obs_length(&self.sp, n_players)
        self.max_turns = max_turns
        self.reward_kind = REWARDS[reward]
        self.fixed_seat = seat
        self.autoreset = autoreset
        self.states = <GameState*>malloc(n_envs * sizeof(GameState))
        self.sample_rng = <Rng*>malloc(n_envs * sizeof(Rng))
        self.stream = <uint64_t*>malloc(n_envs * sizeof(uint64_t))
        self.seeds = <uint64_t*>malloc(n_envs * sizeof(uint64_t))
        self.seat = <int*>malloc(n_envs * sizeof(int))
        self.over = <uint8_t*>malloc(n_envs)
        self.refs = <PolicyRef*>malloc(max(len(policies), 1) * sizeof(PolicyRef))
        self.buf = <int32_t*>malloc(MAX_ACTIONS * sizeof(int32_t))
        if (self.states == NULL or self.sample_rng == NULL or self.stream == NULL
                or self.seeds == NULL or self.seat == NULL or self.over == NULL
                or self.refs == NULL or self.buf == NULL):
            raise MemoryError()
        self._policies = list(policies)
        for k in range(len(policies)):
            policy_ref(policies[k], &self.refs[k])
        self.obs = np.zeros((n_envs, self.obs_size), dtype=np.int16)
        self.masks = np.zeros((n_envs, self.n_actions), dtype=np.bool_)
        self.rewards = np.zeros(n_envs, dtype=np.float32)
        self.terminations = np.zeros(n_envs, dtype=np.bool_)
        self.truncations = np.zeros(n_envs, dtype=np.bool_)
        self.actions_out = np.zeros(n_envs, dtype=np.int32)
        self.final_scores = np.zeros((n_envs, n_players), dtype=np.int16)
        self.v_obs = self.obs
        self.v_mask = self.masks.view(np.uint8)
        self.v_rew = self.rewards
        self.v_term = self.terminations.view(np.uint8)
        self.v_trunc = self.truncations.view(np.uint8)
        self.v_act = self.actions_out
        self.v_final = self.final_scores
        memset(self.over, 0, n_envs)
        memset(self.ns, 0, sizeof(self.ns))
        for i in range(n_envs):
            self.seat[i] = 0
            memset(&self.states[i], 0, sizeof(GameState))
            self.states[i].phase = PH_OVER

    def __dealloc__(self):
        free(self.states)
        free(self.sample_rng)
        free(self.stream)
        free(self.seeds)
        free(self.seat)
        free(self.over)
        free(self.refs)
        free(self.buf)

    # --- the loop's parts (no GIL) -----------------------------------------------
    cdef int opp_act(self, int i) noexcept nogil:
        """Let the opponent to act in env i play one decision (the core's one step,
        _policy.pxd); a STEP_* status (self.failed and bad_env say what failed)."""
        cdef GameState* s = &self.states[i]
        cdef int r = rel(s.current, self.seat[i], self.n_players)
        cdef int st = play_step(&self.refs[i * (self.n_players - 1) + r - 1], &self.cb.c, s,
                                self.buf, NULL, False, &self.failed, NULL)
        if st != STEP_OK:
            self.bad_env = i
            self.bad_rel = r
        return st

    cdef int advance(self, int i) noexcept nogil:
        """Play the opponents of env i until its agent is to act or the game ends."""
        cdef GameState* s = &self.states[i]
        cdef int st = STEP_OK
        cdef int64_t t0 = now_ns() if self.profile else 0
        while s.phase != PH_OVER and s.current != self.seat[i] and s.turn < self.max_turns:
            st = self.opp_act(i)
            if st != STEP_OK:
                break
        if self.profile:
            self.ns[1] += now_ns() - t0
        return st

    cdef int new_game(self, int i) noexcept nogil:
        """Deal env i's next game, start its opponents, play them up to the agent."""
        cdef GameState* s = &self.states[i]
        cdef uint64_t g = splitmix64(&self.stream[i])
        cdef uint64_t x = g
        cdef uint64_t sd[MAX_PLAYERS]
        cdef int q, r, n = self.n_players
        cdef PolicyRef* ref
        cdef int64_t t0 = now_ns() if self.profile else 0
        self.seeds[i] = g
        game_init(&self.cb.c, s, n, g)
        for q in range(n):              # the seats' policy seeds, as the batch loop
            sd[q] = splitmix64(&x)
        if self.fixed_seat >= 0:
            self.seat[i] = self.fixed_seat
        else:                           # the agent's seat, drawn from the game's seed
            self.seat[i] = <int>((splitmix64(&x) >> 33) % <uint64_t>n)
        for q in range(n):
            r = rel(q, self.seat[i], n)
            if r > 0:
                ref = &self.refs[i * (n - 1) + r - 1]
                ref_start(ref, &self.cb.c, s, q, sd[q])
        self.over[i] = 0
        if self.profile:
            self.ns[2] += now_ns() - t0
        return self.advance(i)

    cdef void finish(self, int i) noexcept nogil:
        """Reward and final scores of env i's finished (or truncated) game."""
        cdef GameState* s = &self.states[i]
        cdef ScoreC sc[MAX_PLAYERS]
        cdef int q, k, me = self.seat[i], n = self.n_players, best = -32768, firsts = 0
        if s.phase != PH_OVER:              # truncated
            self.v_trunc[i] = 1
            self.v_rew[i] = 0
            for k in range(n):
                self.v_final[i, k] = 0
            return
        self.v_term[i] = 1
        score_game(&self.cb.c, s, sc)
        for k in range(n):
            q = me + k
            if q >= n:
                q -= n
            self.v_final[i, k] = sc[q].total
            if k > 0 and sc[q].total > best:
                best = sc[q].total
            firsts += sc[q].rank == 1
        if self.reward_kind == R_SCORE:
            self.v_rew[i] = sc[me].total
        elif self.reward_kind == R_MARGIN:
            self.v_rew[i] = sc[me].total - best
        elif sc[me].rank == 1:
            self.v_rew[i] = 1.0 if firsts == 1 else 0.0
        else:
            self.v_rew[i] = -1.0

    cdef void emit(self, int i) noexcept nogil:
        cdef GameState* s = &self.states[i]
        cdef int64_t t0 = now_ns() if self.profile else 0, t1
        write_obs(&self.sp, &self.cb.c, s, self.seat[i], &self.v_obs[i, 0])
        if self.profile:
            t1 = now_ns()
            self.ns[3] += t1 - t0
        write_mask(&self.sp, &self.cb.c, s, self.seat[i], &self.v_mask[i, 0], self.buf)
        if self.profile:
            self.ns[4] += now_ns() - t1

    cdef int after_move(self, int i) noexcept nogil:
        """Opponents, end of game, auto-reset and output of env i after its agent moved."""
        cdef GameState* s = &self.states[i]
        cdef int st = self.advance(i)
        if st != STEP_OK:
            return st
        if s.phase == PH_OVER or s.turn >= self.max_turns:
            self.finish(i)
            if self.autoreset:
                st = self.new_game(i)
                if st != STEP_OK:
                    return st
                # a new game can end before the agent acts only when truncated at once
            else:
                self.over[i] = 1
        self.emit(i)
        return STEP_OK

    # --- Python API -------------------------------------------------------------
    cdef raise_status(self, int st):
        pol = self._policies[self.bad_env * (self.n_players - 1) + self.bad_rel - 1]
        raise step_error(st, &self.failed, pol,
                         f"env {self.bad_env}, turn {self.states[self.bad_env].turn}",
                         "opponent policy")

    def seed(self, uint64_t[::1] streams, uint64_t[::1] samplers):
        """Set every env's game-seed stream and sampler seed (then reset())."""
        cdef int i
        for i in range(self.n_envs):
            self.stream[i] = streams[i]
            rng_seed(&self.sample_rng[i], samplers[i])

    def reset(self):
        cdef int i, st = STEP_OK
        with nogil:
            for i in range(self.n_envs):
                self.v_rew[i] = 0
                self.v_term[i] = 0
                self.v_trunc[i] = 0
                st = self.new_game(i)
                if st != STEP_OK:
                    break
                if self.states[i].phase == PH_OVER or self.states[i].turn >= self.max_turns:
                    self.finish(i)
                    self.over[i] = 1
                self.emit(i)
        if st != STEP_OK:
            self.raise_status(st)

    def step(self, actions):
        cdef int32_t[::1] act = np.ascontiguousarray(actions, dtype=np.int32)
        cdef int i, a, st = STEP_OK, bad = -1
        cdef int32_t code
        cdef int64_t t0
        if act.shape[0] != self.n_envs:
            raise ValueError(f"step needs one action per env ({self.n_envs}), got {act.shape[0]}")
        with nogil:
            for i in range(self.n_envs):
                a = act[i]
                if self.over[i] or a < 0 or a >= self.n_actions or not self.v_mask[i, a]:
                    bad = i
                    break
        if bad >= 0:
            a = act[bad]
            if self.over[bad]:
                raise ValueError(f"env {bad}: its game is over (autoreset=False); call reset()")
            if not 0 <= a < self.n_actions:
                raise ValueError(f"env {bad}: action {a} outside 0..{self.n_actions - 1}")
            raise ValueError(f"env {bad}: action {a} is not legal (masks[{bad}, {a}] is False); "
                             "no env was stepped")
        with nogil:
            for i in range(self.n_envs):
                self.v_rew[i] = 0
                self.v_term[i] = 0
                self.v_trunc[i] = 0
                t0 = now_ns() if self.profile else 0
                code = index_to_code(&self.sp, &self.cb.c, &self.states[i], act[i])
                apply_legal(&self.cb.c, &self.states[i], code, NULL)
                if self.profile:
                    self.ns[0] += now_ns() - t0
                st = self.after_move(i)
                if st != STEP_OK:
                    break
        if st != STEP_OK:
            self.raise_status(st)

    def sample_actions(self):
        """One uniformly random legal action per env (int32 array, reused by the next
        call); envs whose game is over get -1."""
        cdef int i
        cdef int32_t code
        cdef int64_t t0 = now_ns() if self.profile else 0
        with nogil:
            for i in range(self.n_envs):
                if self.over[i] or self.states[i].phase == PH_OVER:
                    self.v_act[i] = -1
                    continue
                code = sample_legal(&self.cb.c, &self.states[i], &self.sample_rng[i])
                self.v_act[i] = code_to_index(&self.sp, &self.cb.c, code)
        if self.profile:
            self.ns[5] += now_ns() - t0
        return self.actions_out

    def profile_ns(self, bint clear=False):
        """Nanoseconds spent (with ``profile`` on) in: the agent's moves, the opponents'
        moves, dealing new games (with starting the opponents), observations, masks and
        sample_actions."""
        out = {k: self.ns[j] for j, k in enumerate(
            ("agent", "opponents", "new_games", "obs", "mask", "sample"))}
        if clear:
            memset(self.ns, 0, sizeof(self.ns))
        return out

    def game_seeds(self):
        """Seed of each env's current game (``Game(board, players, seed=...)`` deals it)."""
        return np.array([self.seeds[i] for i in range(self.n_envs)], dtype=np.uint64)

    def seats(self):
        """The agent's seat in each env's current game."""
        return np.array([self.seat[i] for i in range(self.n_envs)], dtype=np.int8)

    def state_bytes(self, int i):
        """The complete state of env i's game (GameCore.load_state_bytes reads it)."""
        if not 0 <= i < self.n_envs:
            raise IndexError(f"env {i} outside 0..{self.n_envs - 1}")
        return (<char*>&self.states[i])[:sizeof(GameState)]


# ---------------------------------------------------------------------------
# a callable f(observation, mask) -> action index as a policy

cdef class ObservationPolicy(Policy):
    """Plays a seat with ``fn(observation, mask) -> action index``: the observation
    (int16 vector) and the legal mask (bool vector) of the fixed encoding of docs/env.md,
    for the board and player count of the game being played. The arrays are reused
    between calls (copy them to keep them)."""
    cdef object fn
    cdef object target
    cdef Space sp
    cdef uint64_t uid
    cdef int n_players
    cdef int32_t* lbuf
    cdef object obs_arr, mask_arr
    cdef int16_t[::1] v_obs
    cdef uint8_t[::1] v_mask

    def __cinit__(self, *args, **kwargs):
        self.needs_legal = False
        self.uid = 0
        self.lbuf = <int32_t*>malloc(MAX_ACTIONS * sizeof(int32_t))
        if self.lbuf == NULL:
            raise MemoryError()

    def __dealloc__(self):
        free(self.lbuf)

    def __init__(self, fn, spec=None):
        if not callable(fn):
            raise TypeError(f"{fn!r} is not callable: give a function f(observation, mask) "
                            "returning an action index")
        from ttrsim.actions import describe_policy

        self.fn = fn
        Policy.__init__(self, spec or describe_policy(fn))

    def init_args(self):
        return dict(fn=self.fn)

    cdef void start_game(self, const BoardC* b, const GameState* s, int seat,
                         uint64_t seed) noexcept nogil:
        start_python(self, self.fn, seat, seed)

    cdef int32_t choose(self, const BoardC* b, const GameState* s, int seat,
                        const int32_t* legal, int n_legal) noexcept nogil:
        with gil:
            return self._choose_py(b, s, seat)

    cdef int32_t _choose_py(self, const BoardC* b, const GameState* s, int seat):
        cdef int n
        cdef int32_t code
        if self.error is not None:
            return -1
        try:
            if self.uid != b.uid or self.n_players != s.n_players:
                space_init(b, &self.sp)
                self.uid = b.uid
                self.n_players = s.n_players
                self.obs_arr = np.zeros(obs_length(&self.sp, s.n_players), dtype=np.int16)
                self.mask_arr = np.zeros(self.sp.n_actions, dtype=np.bool_)
                self.v_obs = self.obs_arr
                self.v_mask = self.mask_arr.view(np.uint8)
            write_obs(&self.sp, b, s, seat, &self.v_obs[0])
            n = write_mask(&self.sp, b, s, seat, &self.v_mask[0], self.lbuf)
            answer = self.fn(self.obs_arr, self.mask_arr)
            try:
                a = int(answer)
            except (TypeError, ValueError):
                a = -1
            if isinstance(answer, bool) or a != answer or not 0 <= a < self.sp.n_actions \
                    or not self.v_mask[a]:
                legal = np.flatnonzero(self.mask_arr)
                raise PolicyError(
                    f"policy {self.spec!r} (seat {seat}, turn {s.turn}) answered {answer!r}, "
                    f"which is not a legal action index; legal: {legal[:20].tolist()}"
                    + (f" (and {len(legal) - 20} more)" if len(legal) > 20 else ""))
            return index_to_code(&self.sp, b, s, a)
        except Exception as exc:
            self.error = exc
            return -1


def _bench_encoders(CompiledBoard cb, int n_players, list states, list seats, int reps):
    """CPU nanoseconds per call of the observation and the mask writers over positions
    given as GameCore.state_bytes() (diverse positions: scripts and tuning)."""
    cdef Space sp
    cdef int n = len(states), r, i
    cdef GameState* ss = <GameState*>malloc(n * sizeof(GameState))
    cdef int* st = <int*>malloc(n * sizeof(int))
    cdef int32_t* buf = <int32_t*>malloc(MAX_ACTIONS * sizeof(int32_t))
    cdef int16_t* o
    cdef uint8_t* mk
    cdef timespec t0, t1, t2
    space_init(&cb.c, &sp)
    o = <int16_t*>malloc(obs_length(&sp, n_players) * sizeof(int16_t))
    mk = <uint8_t*>malloc(sp.n_actions + 8)
    for i in range(n):
        memcpy(&ss[i], <const char*>states[i], sizeof(GameState))
        st[i] = seats[i]
    with nogil:
        clock_gettime(2, &t0)           # CLOCK_PROCESS_CPUTIME_ID
        for r in range(reps):
            for i in range(n):
                write_obs(&sp, &cb.c, &ss[i], st[i], o)
        clock_gettime(2, &t1)
        for r in range(reps):
            for i in range(n):
                write_mask(&sp, &cb.c, &ss[i], st[i], mk, buf)
        clock_gettime(2, &t2)
    free(ss); free(st); free(buf); free(o); free(mk)
    d1 = (t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)
    d2 = (t2.tv_sec - t1.tv_sec) * 1e9 + (t2.tv_nsec - t1.tv_nsec)
    return d1 / (reps * n), d2 / (reps * n)
