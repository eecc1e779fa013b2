# The rules engine of ttrsim (docs/rules.md restates the rules it plays, with every ruling).
# Pure C over the structs of _structs.pxd: no Python objects in any function below the
# "Python wrappers" line, so the batch loop and compiled policies call it without the GIL.
from libc.stdint cimport int8_t, int16_t, int32_t, uint8_t, uint64_t
from libc.string cimport memcpy, memset

from ttrsim._structs cimport *
from ttrsim._rng cimport rng_below, rng_seed, rng_next
from ttrsim._bits cimport (clear_bit, count_bits, count_bits2, get_bit, lowest_bit, nth_bit2,
                           set_bit)

import numpy as np


# ---------------------------------------------------------------------------
# small helpers

cdef int discard_total(const GameState* s) noexcept nogil:
    cdef int t, n = 0
    for t in range(N_CARD_TYPES):
        n += s.discard[t]
    return n


cdef int count_wild_faceup(const GameState* s) noexcept nogil:
    cdef int i, n = 0
    for i in range(N_FACEUP):
        if s.faceup[i] == WILD:
            n += 1
    return n


# ---------------------------------------------------------------------------
# train cards

cdef void shuffle_cards(GameState* s, uint8_t* cards, int n) noexcept nogil:
    cdef int i, j
    cdef uint8_t tmp
    for i in range(n - 1, 0, -1):
        j = rng_below(&s.rng, i + 1)
        tmp = cards[i]
        cards[i] = cards[j]
        cards[j] = tmp


cdef void reshuffle_discards(GameState* s) noexcept nogil:
    """Shuffle the discard pile under the (empty) deck."""
    cdef int t, k
    for t in range(N_CARD_TYPES):
        for k in range(s.discard[t]):
            s.deck[s.deck_n] = t
            s.deck_n += 1
        s.discard[t] = 0
    shuffle_cards(s, s.deck, s.deck_n)


cdef int draw_card(GameState* s) noexcept nogil:
    """Top card of the deck, reshuffling the discards when the deck is empty (also
    mid-turn); -1 when deck and discards are both empty."""
    if s.deck_n == 0:
        reshuffle_discards(s)
        if s.deck_n == 0:
            return -1
    s.deck_n -= 1
    return s.deck[s.deck_n]


cdef inline bint can_draw_blind(const GameState* s) noexcept nogil:
    return s.deck_n > 0 or discard_total(s) > 0


cdef void check_wilds(const BoardC* b, GameState* s) noexcept nogil:
    """Re-deal the face-up row while it shows too many wilds, at most max_redeals times
    in a row (ruling: the row then stays, so a deck of nearly all wilds cannot loop)."""
    cdef int i, n = 0
    while count_wild_faceup(s) >= b.wild_faceup_limit and n < b.max_redeals:
        for i in range(N_FACEUP):
            if s.faceup[i] >= 0:
                s.discard[s.faceup[i]] += 1
                s.faceup[i] = -1
        for i in range(N_FACEUP):
            s.faceup[i] = draw_card(s)
        n += 1
        s.redeals += 1


cdef void refill_faceup(const BoardC* b, GameState* s) noexcept nogil:
    """Fill every empty face-up slot that can be filled, then apply the wild rule."""
    cdef int i
    cdef bint changed = False
    for i in range(N_FACEUP):
        if s.faceup[i] < 0:
            s.faceup[i] = draw_card(s)
            # only a card actually turned up changes the row; a row that could not be
            # refilled is left as it stands (no re-deal of an unchanged row)
            if s.faceup[i] >= 0:
                changed = True
    if changed:
        check_wilds(b, s)


# ---------------------------------------------------------------------------
# tickets

cdef inline int tdeck_pop(GameState* s) noexcept nogil:
    cdef int t = s.tdeck[s.tdeck_head]
    s.tdeck_head = (s.tdeck_head + 1) % MAX_TICKETS
    s.tdeck_n -= 1
    return t


cdef inline void tdeck_push_bottom(GameState* s, int t) noexcept nogil:
    s.tdeck[(s.tdeck_head + s.tdeck_n) % MAX_TICKETS] = t
    s.tdeck_n += 1


cdef void shuffle_small(GameState* s, uint8_t* a, int n) noexcept nogil:
    shuffle_cards(s, a, n)


# ---------------------------------------------------------------------------
# setup

cdef inline void clear_state(const BoardC* b, GameState* s, int n_players, uint64_t seed) noexcept nogil:
    """An empty table: no cards or tickets anywhere, nothing claimed, every seat with its
    trains and stations; the generator seeded."""
    cdef int seat, k
    memset(s, 0, sizeof(GameState))
    rng_seed(&s.rng, seed)
    s.n_players = n_players
    memset(s.route_owner, -1, sizeof(s.route_owner))
    memset(s.city_station, -1, sizeof(s.city_station))
    for seat in range(n_players):
        s.p[seat].trains = b.trains
        s.p[seat].stations_left = b.stations
        for k in range(MAX_STATIONS):
            s.p[seat].station_city[k] = -1


cdef void game_init(const BoardC* b, GameState* s, int n_players, uint64_t seed) noexcept nogil:
    """Shuffle, deal hands and the face-up row, deal the initial tickets; the game then
    waits for each seat's initial ticket choice (PH_SETUP_TICKETS), seat 0 first."""
    cdef int i, t, k, seat
    cdef uint8_t regular[MAX_TICKETS]
    cdef uint8_t longs[MAX_TICKETS]
    cdef int n_regular = 0, n_long = 0
    clear_state(b, s, n_players, seed)
    for t in range(N_CARD_TYPES):
        for k in range(b.deck_count[t]):
            s.deck[s.deck_n] = t
            s.deck_n += 1
    shuffle_cards(s, s.deck, s.deck_n)
    for seat in range(n_players):
        for k in range(b.initial_hand):
            s.p[seat].hand[draw_card(s)] += 1
    for i in range(N_FACEUP):
        s.faceup[i] = draw_card(s)
    check_wilds(b, s)
    # Tickets: long ones form their own deck when the board deals them separately.
    for t in range(b.n_tickets):
        if b.ticket_long[t] and b.deal_long > 0:
            longs[n_long] = t
            n_long += 1
        else:
            regular[n_regular] = t
            n_regular += 1
    shuffle_small(s, longs, n_long)
    shuffle_small(s, regular, n_regular)
    i = 0
    k = 0
    for seat in range(n_players):
        for t in range(b.deal_long):
            s.pending[seat][s.n_pending[seat]] = longs[i]
            s.n_pending[seat] += 1
            i += 1
        for t in range(b.deal_regular):
            s.pending[seat][s.n_pending[seat]] = regular[k]
            s.n_pending[seat] += 1
            k += 1
    while i < n_long:           # long tickets not dealt leave the game unseen
        set_bit(s.removed, longs[i])
        i += 1
    s.tdeck_head = 0
    s.tdeck_n = 0
    while k < n_regular:
        tdeck_push_bottom(s, regular[k])
        k += 1
    s.phase = PH_SETUP_TICKETS
    s.current = 0


# ---------------------------------------------------------------------------
# legality

cdef inline int wild_range(const int16_t* hand, int n, int c, int min_wild, int* lo) noexcept nogil:
    """Payments of n cards in colour c with at least one card of c: the wild counts
    lo[0] .. lo[0] + result - 1 (result 0: none)."""
    cdef int hi = hand[WILD]
    if hand[c] == 0:
        return 0
    if hi > n - 1:
        hi = n - 1
    lo[0] = n - hand[c]
    if lo[0] < min_wild:
        lo[0] = min_wild
    return hi - lo[0] + 1 if hi >= lo[0] else 0


cdef inline void colour_span(const BoardC* b, int color, int* c0, int* c1) noexcept nogil:
    """Card colours that may pay a route of `color` (GRAY: every colour)."""
    if color == GRAY:
        c0[0] = 0
        c1[0] = b.n_colors
    else:
        c0[0] = color
        c1[0] = color + 1


# payments() lists the ways to pay; nth_payment() gives its k-th entry without writing it,
# and colour_payments() / gray_payments() its length in closed form (sample_legal). Both
# walk the same order: colours ascending, wild counts ascending, then all-wild.

cdef int payments(const BoardC* b, const int16_t* hand, int n, int color, int min_wild,
                  int kind, int a, int32_t* out) noexcept nogil:
    """Every way to pay n cards of `color` (GRAY: any one colour) with at least min_wild
    wilds: (colour, wild count) pairs with at least one coloured card, then all-wild."""
    cdef int c, c0, c1, k, lo = 0, cnt, m = 0
    colour_span(b, color, &c0, &c1)
    for c in range(c0, c1):
        cnt = wild_range(hand, n, c, min_wild, &lo)
        for k in range(cnt):
            out[m] = make_action(kind, a, c, lo + k)
            m += 1
    if hand[WILD] >= n and n >= min_wild:
        out[m] = make_action(kind, a, WILD, n)
        m += 1
    return m


cdef int32_t nth_payment(const BoardC* b, const int16_t* hand, int n, int color, int min_wild,
                         int kind, int a, int k) noexcept nogil:
    """payments(...)[k] without writing the list."""
    cdef int c, c0, c1, lo = 0, cnt
    colour_span(b, color, &c0, &c1)
    for c in range(c0, c1):
        cnt = wild_range(hand, n, c, min_wild, &lo)
        if k < cnt:
            return make_action(kind, a, c, lo + k)
        k -= cnt
    return make_action(kind, a, WILD, n)


cdef inline int colour_payments(int h, int w, int n, int min_wild) noexcept nogil:
    """len(payments(...)) of n cards of one colour held h times, with w wilds held: the wild
    counts max(n - h, min_wild) .. min(w, n - 1) (none when h == 0), plus all-wild."""
    cdef int hi = w if w < n - 1 else n - 1
    cdef int lo = n - h
    if lo < min_wild:
        lo = min_wild
    return (hi - lo + 1 if hi >= lo else 0) + (w >= n and n >= min_wild)


cdef inline int gray_payments(const int16_t* hand, int n_colors, int w, int n,
                              int min_wild) noexcept nogil:
    """len(payments(b, hand, n, GRAY, min_wild, ...)) with w wilds held. Colour c gives
    the wild counts max(n - h, min_wild) .. hi with hi = min(w, n - 1), that is
    min(h, n - min_wild) - min(h, n - 1 - hi) of them (h = hand[c]), plus all-wild."""
    cdef int hi = w if w < n - 1 else n - 1
    cdef int c, h, top = n - min_wild, low = n - 1 - hi, m = 0
    if hi >= min_wild:
        for c in range(n_colors):
            h = hand[c]
            m += (h if h < top else top) - (h if h < low else low)
    return m + (w >= n and n >= min_wild)


cdef inline int nth_free_city(const BoardC* b, const GameState* s, int n) noexcept nogil:
    """The n-th city (from 0, in index order) without a station."""
    cdef int x
    for x in range(b.n_cities):
        if s.city_station[x] < 0:
            if n == 0:
                return x
            n -= 1
    return -1


cdef int32_t sample_other(const BoardC* b, const GameState* s, Rng* rng) noexcept nogil:
    """sample_legal outside PH_TURN: ticket keeps drawn among all masks until one keeps
    enough, second draws counted, tunnel answers listed (they are few)."""
    cdef int32_t small[16]
    cdef int slots[N_FACEUP]
    cdef int i, n, k, need, mask
    if s.phase == PH_SECOND_DRAW:
        n = 0
        for i in range(N_FACEUP):               # the slots that may be taken, in order
            slots[n] = i
            n += s.faceup[i] >= 0 and s.faceup[i] != WILD
        k = n + can_draw_blind(s)
        if k == 0:
            return -1
        k = rng_below(rng, k)
        if k < n:
            return make_action(ACT_DRAW_FACEUP, slots[k], 0, 0)
        return make_action(ACT_DRAW_BLIND, 0, 0, 0)
    if s.phase == PH_SETUP_TICKETS or s.phase == PH_KEEP_TICKETS:
        n = s.n_pending[s.current]
        need = b.initial_keep if s.phase == PH_SETUP_TICKETS else b.draw_keep
        if n == 0:
            return -1
        if need > n:
            need = n
        # a non-empty mask, drawn again until it keeps enough tickets: uniform over the
        # legal masks (keeping them all always is)
        while True:
            mask = 1 + rng_below(rng, (1 << n) - 1)
            if count_bits(mask) >= need:
                return make_action(ACT_KEEP, mask, 0, 0)
    n = legal_actions(b, s, small)
    return small[rng_below(rng, n)] if n > 0 else -1


# The kinds of action sample_legal draws among, in the order it counts them: a face-up
# card, the blind draw, the ticket draw, a station, then a claim of each colour class.
cdef enum:
    K_FACEUP = 0
    K_BLIND = 1
    K_TICKETS = 2
    K_STATIONS = 3
    K_CLAIMS = 4
    N_KINDS = K_CLAIMS + MAX_COLORS + 1


cdef int32_t sample_legal(const BoardC* b, const GameState* s, Rng* rng) noexcept nogil:
    """A uniformly random legal action: each entry of legal_actions(b, s) with the same
    probability, found without listing them (a turn can have hundreds of payment
    variants).

    Claims are drawn by rejection from a superset. For each colour class c (each colour,
    and gray: GRAY_CLASS) the candidates are the open routes of c that the trains, the
    wild cards (ferries) and the hand could pay, and every candidate gets bound[c]
    payment slots, at least its number of payments. A slot (route, j) is drawn uniformly
    among all slots, the card draws, the ticket draw and the station builds (those
    counted exactly); a claim slot is kept when j is below the route's number of
    payments and is then its j-th payment, else everything is drawn again. Kept slots
    are one per legal action, each drawn with the same probability, so the choice is
    uniform over the legal set. Every candidate has at least one payment, so a draw is
    kept with probability at least 1 / max(bound)."""
    cdef uint64_t open_[2]
    cdef uint64_t cand[2]
    cdef int bound[MAX_COLORS + 1]
    cdef int reach_of[MAX_COLORS + 1]
    cdef int upto[N_KINDS]                  # the draw's kinds, cumulative (see below)
    cdef int slots[N_FACEUP]
    cdef const PlayerC* p = &s.p[s.current]
    cdef const int16_t* hand = &p.hand[0]
    cdef int n_face = 0, per_city = 0, n_free = 0
    cdef int i, c, h, k, x, r, n, j, total, most = 0, sum_mixed = 0
    cdef int w = hand[WILD]
    cdef int top = p.trains if p.trains < MAX_LEN - 1 else MAX_LEN - 1
    cdef int any_wild = w > 0
    if s.phase != PH_TURN:
        return sample_other(b, s, rng)
    for i in range(N_FACEUP):                   # the face-up cards' slots, in order
        slots[n_face] = i
        n_face += s.faceup[i] >= 0
    upto[K_FACEUP] = n_face
    upto[K_BLIND] = n_face + can_draw_blind(s)
    upto[K_TICKETS] = upto[K_BLIND] + (s.tdeck_n > 0)
    open_[0] = b.all_routes[0] & ~s.closed[0] & ~s.closed_to[s.current][0]
    open_[1] = b.all_routes[1] & ~s.closed[1] & ~s.closed_to[s.current][1]
    i = w if w < MAX_LEN - 1 else MAX_LEN - 1
    open_[0] &= ~b.ferry_over[i][0]
    open_[1] &= ~b.ferry_over[i][1]
    # A route of colour c has at most min(h, w + 1) payments with coloured cards (the
    # wild counts max(n - h, 0) .. min(w, n - 1)), a gray one their sum over the colours,
    # and either one all-wild payment. All MAX_COLORS colours (those beyond the board's
    # hold no cards and have no routes), so the loop has a fixed length.
    for c in range(MAX_COLORS):
        h = hand[c]
        most = h if h > most else most
        h = h if h < w + 1 else w + 1
        sum_mixed += h
        bound[c] = h + any_wild
        reach_of[c] = hand[c] + w if hand[c] + w < top else top
    bound[GRAY_CLASS] = sum_mixed + any_wild
    reach_of[GRAY_CLASS] = most + w if most + w < top else top
    if p.stations_left > 0:
        per_city = gray_payments(hand, b.n_colors, w, station_cost(b, p), 0)
        if per_city > 0:
            for i in range(s.n_players):
                n_free += b.stations - s.p[i].stations_left
            n_free = b.n_cities - n_free
    upto[K_STATIONS] = upto[K_TICKETS] + n_free * per_city
    total = upto[K_STATIONS]
    for c in range(MAX_COLORS + 1):
        total += bound[c] * (count_bits(open_[0] & b.class_upto[c][reach_of[c]][0])
                             + count_bits(open_[1] & b.class_upto[c][reach_of[c]][1]))
        upto[K_CLAIMS + c] = total
    if total == 0:
        return make_action(ACT_PASS, 0, 0, 0)
    while True:
        # the kind drawn is the number of kinds whose cumulative count x reaches: found
        # without a branch, since the draws' kinds follow no pattern a predictor learns
        x = rng_below(rng, total)
        k = 0
        for i in range(N_KINDS):
            k += x >= upto[i]
        if k == K_FACEUP:
            return make_action(ACT_DRAW_FACEUP, slots[x], 0, 0)
        x -= upto[k - 1]
        if k >= K_CLAIMS:
            c = k - K_CLAIMS
            cand[0] = open_[0] & b.class_upto[c][reach_of[c]][0]
            cand[1] = open_[1] & b.class_upto[c][reach_of[c]][1]
            r = nth_bit2(cand, x // bound[c])
            j = x % bound[c]
            n = b.route_len[r]
            if c < GRAY_CLASS:
                h = colour_payments(hand[c], w, n, b.route_ferry[r])
            else:
                h = gray_payments(hand, b.n_colors, w, n, b.route_ferry[r])
            if j < h:
                return nth_payment(b, hand, n, b.route_color[r], b.route_ferry[r],
                                   ACT_CLAIM, r, j)
            continue                            # rejected: draw again
        if k == K_BLIND:
            return make_action(ACT_DRAW_BLIND, 0, 0, 0)
        if k == K_TICKETS:
            return make_action(ACT_DRAW_TICKETS, 0, 0, 0)
        return nth_payment(b, hand, station_cost(b, p), GRAY, 0, ACT_STATION,
                           nth_free_city(b, s, x // per_city), x % per_city)


cdef inline bint can_pay(const int16_t* hand, int n, int color, int wild_cards, int min_wild) noexcept nogil:
    if wild_cards < min_wild or wild_cards > n or hand[WILD] < wild_cards:
        return False
    if color == WILD:
        return wild_cards == n
    if wild_cards == n:
        return False            # all-wild payments are encoded with colour WILD
    return hand[color] >= n - wild_cards


cdef int keep_masks(int n_offered, int min_keep, int kind, int32_t* out) noexcept nogil:
    cdef int mask, m = 0
    if min_keep > n_offered:
        min_keep = n_offered
    for mask in range(1, 1 << n_offered):
        if count_bits(mask) >= min_keep:
            out[m] = make_action(kind, mask, 0, 0)
            m += 1
    return m


cdef inline int station_cost(const BoardC* b, const PlayerC* p) noexcept nogil:
    return b.stations - p.stations_left + 1


cdef int legal_actions(const BoardC* b, const GameState* s, int32_t* out) noexcept nogil:
    """Write the legal actions of the player to act into out; return their number
    (at least 1 until the game is over: a player with nothing legal passes)."""
    cdef int i, r, x, c, lo, hi, m = 0
    cdef int seat = s.current
    cdef const PlayerC* p = &s.p[seat]
    if s.phase == PH_OVER:
        return 0
    if s.phase == PH_SETUP_TICKETS:
        return keep_masks(s.n_pending[seat], b.initial_keep, ACT_KEEP, out)
    if s.phase == PH_KEEP_TICKETS:
        return keep_masks(s.n_pending[seat], b.draw_keep, ACT_KEEP, out)
    if s.phase == PH_SECOND_DRAW:
        for i in range(N_FACEUP):
            if s.faceup[i] >= 0 and s.faceup[i] != WILD:
                out[m] = make_action(ACT_DRAW_FACEUP, i, 0, 0)
                m += 1
        if can_draw_blind(s):
            out[m] = make_action(ACT_DRAW_BLIND, 0, 0, 0)
            m += 1
        return m
    if s.phase == PH_TUNNEL:
        out[m] = make_action(ACT_TUNNEL_DECLINE, 0, 0, 0)
        m += 1
        if s.t_color == WILD:
            if p.hand[WILD] >= s.t_extra:
                out[m] = make_action(ACT_TUNNEL_PAY, 0, 0, s.t_extra)
                m += 1
        else:
            lo = s.t_extra - p.hand[s.t_color]
            if lo < 0:
                lo = 0
            hi = p.hand[WILD]
            if hi > s.t_extra:
                hi = s.t_extra
            for c in range(lo, hi + 1):
                out[m] = make_action(ACT_TUNNEL_PAY, 0, 0, c)
                m += 1
        return m
    # PH_TURN
    for i in range(N_FACEUP):
        if s.faceup[i] >= 0:
            out[m] = make_action(ACT_DRAW_FACEUP, i, 0, 0)
            m += 1
    if can_draw_blind(s):
        out[m] = make_action(ACT_DRAW_BLIND, 0, 0, 0)
        m += 1
    for r in range(b.n_routes):
        if b.route_len[r] <= p.trains and route_open(b, s, r, seat):
            m += payments(b, p.hand, b.route_len[r], b.route_color[r], b.route_ferry[r],
                          ACT_CLAIM, r, out + m)
    if s.tdeck_n > 0:
        out[m] = make_action(ACT_DRAW_TICKETS, 0, 0, 0)
        m += 1
    if p.stations_left > 0:
        c = station_cost(b, p)
        if hand_total(s, seat) >= c:
            for x in range(b.n_cities):
                if s.city_station[x] < 0:
                    m += payments(b, p.hand, c, GRAY, 0, ACT_STATION, x, out + m)
    if m == 0:
        out[0] = make_action(ACT_PASS, 0, 0, 0)
        m = 1
    return m


cdef bint is_legal(const BoardC* b, const GameState* s, int32_t act) noexcept nogil:
    """Direct check of one action (same answer as membership in legal_actions)."""
    cdef int kind = action_kind(act), a = action_a(act), c = action_b(act), k = action_c(act)
    cdef int seat = s.current, n, lo, hi
    cdef const PlayerC* p = &s.p[seat]
    if s.phase == PH_OVER:
        return False
    if s.phase == PH_SETUP_TICKETS or s.phase == PH_KEEP_TICKETS:
        n = b.initial_keep if s.phase == PH_SETUP_TICKETS else b.draw_keep
        if n > s.n_pending[seat]:
            n = s.n_pending[seat]
        return (kind == ACT_KEEP and (act & 0xFFFF) == 0 and a > 0
                and a < (1 << s.n_pending[seat]) and count_bits(a) >= n)
    if s.phase == PH_SECOND_DRAW:
        if kind == ACT_DRAW_FACEUP:
            return (act & 0xFFFF) == 0 and a < N_FACEUP and s.faceup[a] >= 0 and s.faceup[a] != WILD
        return act == make_action(ACT_DRAW_BLIND, 0, 0, 0) and can_draw_blind(s)
    if s.phase == PH_TUNNEL:
        if act == make_action(ACT_TUNNEL_DECLINE, 0, 0, 0):
            return True
        if kind != ACT_TUNNEL_PAY or (act & 0xFFFF00) != 0 or k > s.t_extra:
            return False
        if s.t_color == WILD:
            return k == s.t_extra and p.hand[WILD] >= k
        return p.hand[WILD] >= k and p.hand[s.t_color] >= s.t_extra - k
    # PH_TURN
    if kind == ACT_DRAW_FACEUP:
        return (act & 0xFFFF) == 0 and a < N_FACEUP and s.faceup[a] >= 0
    if kind == ACT_DRAW_BLIND:
        return act == make_action(ACT_DRAW_BLIND, 0, 0, 0) and can_draw_blind(s)
    if kind == ACT_DRAW_TICKETS:
        return act == make_action(ACT_DRAW_TICKETS, 0, 0, 0) and s.tdeck_n > 0
    if kind == ACT_CLAIM:
        if a >= b.n_routes or b.route_len[a] > p.trains or not route_open(b, s, a, seat):
            return False
        if c != WILD and (c >= b.n_colors or (b.route_color[a] != GRAY and b.route_color[a] != c)):
            return False
        return can_pay(p.hand, b.route_len[a], c, k, b.route_ferry[a])
    if kind == ACT_STATION:
        if p.stations_left <= 0 or a >= b.n_cities or s.city_station[a] >= 0:
            return False
        if c != WILD and c >= b.n_colors:
            return False
        return can_pay(p.hand, station_cost(b, p), c, k, 0)
    if kind == ACT_PASS:
        return act == 0 and not turn_has_action(b, s)
    return False


cdef bint turn_has_action(const BoardC* b, const GameState* s) noexcept nogil:
    """Whether the player to act has any action other than passing (early exit)."""
    cdef int i, r, c, best = 0
    cdef const PlayerC* p = &s.p[s.current]
    if s.tdeck_n > 0 or can_draw_blind(s):
        return True
    for i in range(N_FACEUP):
        if s.faceup[i] >= 0:
            return True
    for c in range(b.n_colors):
        if p.hand[c] > best:
            best = p.hand[c]
    for r in range(b.n_routes):
        if (b.route_len[r] <= p.trains and p.hand[WILD] >= b.route_ferry[r]
                and route_open(b, s, r, s.current)):
            if b.route_color[r] == GRAY:
                c = best
            else:
                c = p.hand[b.route_color[r]]
            if c + p.hand[WILD] >= b.route_len[r]:
                return True
    if p.stations_left > 0 and best + p.hand[WILD] >= station_cost(b, p):
        for i in range(b.n_cities):
            if s.city_station[i] < 0:
                return True
    return False


# ---------------------------------------------------------------------------
# applying actions

cdef void end_turn(const BoardC* b, GameState* s) noexcept nogil:
    cdef PlayerC* p = &s.p[s.current]
    # Ruling: face-up slots left empty (deck and discards were empty) are refilled as
    # soon as cards are available again, at the end of a turn.
    refill_faceup(b, s)
    s.turn += 1
    if s.last_round:
        s.turns_left -= 1
        if s.turns_left <= 0:
            s.phase = PH_OVER
            return
    elif p.trains <= b.end_trigger:
        s.last_round = 1
        s.turns_left = s.n_players
    s.current = (s.current + 1) % s.n_players
    s.phase = PH_TURN


cdef void take_card(const BoardC* b, GameState* s, int slot) noexcept nogil:
    """Move the card of a face-up slot (or the deck's top, slot -1) into the hand."""
    cdef int card
    if slot < 0:
        card = draw_card(s)
    else:
        card = s.faceup[slot]
        s.faceup[slot] = draw_card(s)
        check_wilds(b, s)
        s.known[s.current][card] += 1       # everyone saw it taken
    s.p[s.current].hand[card] += 1
    s.first_card = card


cdef bint second_draw_possible(const GameState* s) noexcept nogil:
    cdef int i
    if can_draw_blind(s):
        return True
    for i in range(N_FACEUP):
        if s.faceup[i] >= 0 and s.faceup[i] != WILD:
            return True
    return False


cdef void complete_claim(const BoardC* b, GameState* s, int route, EventSink* ev) noexcept nogil:
    cdef PlayerC* p = &s.p[s.current]
    cdef int n = b.route_len[route]
    cdef int partner = b.route_partner[route]
    s.route_owner[route] = s.current
    # what route_open derives from the owners, kept for sample_legal's one-mask start
    set_bit(s.closed, route)
    if partner >= 0:
        if s.n_players < b.double_min_players:
            set_bit(s.closed, partner)
        else:
            set_bit(s.closed_to[s.current], partner)
    p.trains -= n
    p.route_points += b.route_points[n]
    set_bit(p.routes, route)
    p.cities |= ((<uint64_t>1) << b.route_a[route]) | ((<uint64_t>1) << b.route_b[route])
    p.n_routes += 1
    if ev != NULL and ev.on_claim != NULL:
        ev.on_claim(ev.ctx, s, s.current, route)


cdef inline void pay_cards(GameState* s, int color, int n, int wild_cards) noexcept nogil:
    """Move n cards (wild_cards wilds, the rest of `color`) from the hand to the discards."""
    cdef PlayerC* p = &s.p[s.current]
    p.hand[WILD] -= wild_cards
    s.discard[WILD] += wild_cards
    if n > wild_cards:
        p.hand[color] -= n - wild_cards
        s.discard[color] += n - wild_cards
    forget_known(s, color, n, wild_cards)


cdef inline void forget_known(GameState* s, int color, int n, int wild_cards) noexcept nogil:
    """Cards paid in public count against the cards the payer is known to hold."""
    cdef int16_t* known = s.known[s.current]
    known[WILD] = known[WILD] - wild_cards if known[WILD] > wild_cards else 0
    if n > wild_cards and color != WILD:
        known[color] = known[color] - (n - wild_cards) if known[color] > n - wild_cards else 0


cdef void keep_tickets(const BoardC* b, GameState* s, int mask, bint initial, EventSink* ev) noexcept nogil:
    cdef int seat = s.current, i, t
    cdef PlayerC* p = &s.p[seat]
    for i in range(s.n_pending[seat]):
        t = s.pending[seat][i]
        if (mask >> i) & 1:
            set_bit(p.tickets, t)
            p.n_tickets += 1
        elif initial and b.initial_discards_removed:
            set_bit(s.removed, t)
            set_bit(p.discarded, t)         # known to this seat only (determinize)
        else:
            tdeck_push_bottom(s, t)
        if ev != NULL and ev.on_offer != NULL:
            ev.on_offer(ev.ctx, s, seat, t, (mask >> i) & 1, initial)
    s.n_pending[seat] = 0


cdef int apply_action(const BoardC* b, GameState* s, int32_t act, EventSink* ev) noexcept nogil:
    """Play one action of the player to act. Returns 0, or -1 (state untouched) when the
    action is not legal."""
    if not is_legal(b, s, act):
        return -1
    apply_legal(b, s, act, ev)
    return 0


cdef void apply_legal(const BoardC* b, GameState* s, int32_t act, EventSink* ev) noexcept nogil:
    """apply_action of an action known to be legal: the batch loop plays the built-in
    policies' actions so (the planning policies check theirs with is_legal, `random`
    draws from the legal set)."""
    cdef int kind = action_kind(act), a = action_a(act), c = action_b(act), k = action_c(act)
    cdef int seat = s.current, i, n, extra, card
    cdef PlayerC* p = &s.p[seat]
    if kind != ACT_PASS and s.phase == PH_TURN:
        s.passes = 0
    if s.phase == PH_SETUP_TICKETS:
        keep_tickets(b, s, a, True, ev)
        s.current += 1
        if s.current >= s.n_players:
            s.current = 0
            s.phase = PH_TURN
        return
    if s.phase == PH_KEEP_TICKETS:
        keep_tickets(b, s, a, False, ev)
        end_turn(b, s)
        return
    if s.phase == PH_SECOND_DRAW:
        take_card(b, s, a if kind == ACT_DRAW_FACEUP else -1)
        end_turn(b, s)
        return
    if s.phase == PH_TUNNEL:
        if kind == ACT_TUNNEL_PAY:
            pay_cards(s, s.t_color, s.t_extra, k)
            finish_tunnel(b, s, True, ev)
        else:
            finish_tunnel(b, s, False, ev)
        end_turn(b, s)
        return
    # PH_TURN
    if kind == ACT_PASS:
        s.passes += 1
        if s.passes >= s.n_players:
            s.ended_by_passes = 1
            s.turn += 1
            s.phase = PH_OVER
            return
        end_turn(b, s)
        return
    if kind == ACT_DRAW_FACEUP or kind == ACT_DRAW_BLIND:
        take_card(b, s, a if kind == ACT_DRAW_FACEUP else -1)
        # A face-up wild taken first is the whole turn; ruling: with no legal second
        # card the turn ends with one card.
        if (kind == ACT_DRAW_FACEUP and s.first_card == WILD) or not second_draw_possible(s):
            end_turn(b, s)
        else:
            s.phase = PH_SECOND_DRAW
        return
    if kind == ACT_DRAW_TICKETS:
        n = b.draw_tickets
        if n > s.tdeck_n:
            n = s.tdeck_n
        for i in range(n):
            s.pending[seat][i] = tdeck_pop(s)
        s.n_pending[seat] = n
        s.phase = PH_KEEP_TICKETS
        return
    if kind == ACT_STATION:
        n = station_cost(b, p)
        pay_cards(s, c, n, k)
        s.city_station[a] = seat
        p.station_city[b.stations - p.stations_left] = a
        p.stations_left -= 1
        if ev != NULL and ev.on_station != NULL:
            ev.on_station(ev.ctx, s, seat, a)
        end_turn(b, s)
        return
    # ACT_CLAIM
    n = b.route_len[a]
    if not b.route_tunnel[a]:
        pay_cards(s, c, n, k)
        complete_claim(b, s, a, ev)
        end_turn(b, s)
        return
    # Tunnel: the cards played are set aside, then up to 3 cards are revealed.
    p.hand[WILD] -= k
    if c != WILD:
        p.hand[c] -= n - k
    forget_known(s, c, n, k)
    s.t_route = a
    s.t_color = c
    s.t_wild = k
    s.n_revealed = 0
    extra = 0
    for i in range(3):
        card = draw_card(s)
        if card < 0:
            break
        s.revealed[s.n_revealed] = card
        s.n_revealed += 1
        if card == WILD or (c != WILD and card == c):
            extra += 1
    s.t_extra = extra
    if extra == 0:
        finish_tunnel(b, s, True, ev)
        end_turn(b, s)
    else:
        s.phase = PH_TUNNEL


cdef void finish_tunnel(const BoardC* b, GameState* s, bint claimed, EventSink* ev) noexcept nogil:
    """Settle a tunnel attempt: the cards played go to the discards (claimed) or back to
    the hand (declined); the revealed cards are discarded either way."""
    cdef PlayerC* p = &s.p[s.current]
    cdef int i, n = b.route_len[s.t_route]
    if ev != NULL and ev.on_tunnel != NULL:
        ev.on_tunnel(ev.ctx, s, s.current, s.t_route, s.t_color, s.n_revealed, s.t_extra,
                     (TUNNEL_FREE if s.t_extra == 0 else TUNNEL_PAID) if claimed else TUNNEL_DECLINED)
    if claimed:
        s.discard[WILD] += s.t_wild
        if s.t_color != WILD:
            s.discard[s.t_color] += n - s.t_wild
        complete_claim(b, s, s.t_route, ev)
    else:
        p.hand[WILD] += s.t_wild
        s.known[s.current][WILD] += s.t_wild        # shown, then taken back
        if s.t_color != WILD:
            p.hand[s.t_color] += n - s.t_wild
            s.known[s.current][s.t_color] += n - s.t_wild
    for i in range(s.n_revealed):
        s.discard[s.revealed[i]] += 1
    s.n_revealed = 0
    s.t_route = -1
    s.t_extra = 0
    s.t_wild = 0


# ---------------------------------------------------------------------------
# final scoring

cdef void own_network(const BoardC* b, const GameState* s, int seat, int8_t* parent,
                      int skip) noexcept nogil:
    """Union-find forest of the seat's own routes, leaving out route `skip` (-1: none)."""
    cdef int x, w, r
    cdef uint64_t bits
    for x in range(b.n_cities):
        parent[x] = x
    for w in range(2):
        bits = s.p[seat].routes[w]
        while bits:
            r = (w << 6) + lowest_bit(bits)
            bits &= bits - 1
            if r != skip:
                uf_union(parent, b.route_a[r], b.route_b[r])


cdef int ticket_result(const BoardC* b, const GameState* s, int seat, int8_t* parent,
                       uint64_t* completed) noexcept nogil:
    """Ticket points (completed minus failed) on a network; sets the completed bitset."""
    cdef int t, w, pts = 0
    cdef uint64_t bits
    cdef const PlayerC* p = &s.p[seat]
    completed[0] = 0
    completed[1] = 0
    for w in range(2):
        bits = p.tickets[w]
        while bits:
            t = (w << 6) + lowest_bit(bits)
            bits &= bits - 1
            if uf_find(parent, b.ticket_a[t]) == uf_find(parent, b.ticket_b[t]):
                pts += b.ticket_points[t]
                set_bit(completed, t)
            else:
                pts -= b.ticket_points[t]
    return pts


cdef int station_options(const BoardC* b, const GameState* s, int seat, int city,
                         int16_t* out) noexcept nogil:
    """Routes of other players entering `city`, one per neighbouring city (routes to the
    same neighbour connect the same cities, so one of them stands for all)."""
    cdef int i, j, r, other, n = 0
    cdef bint dup
    for i in range(b.n_adj[city]):
        r = b.adj[city][i]
        if s.route_owner[r] < 0 or s.route_owner[r] == seat:
            continue
        other = b.route_b[r] if b.route_a[r] == city else b.route_a[r]
        dup = False
        for j in range(n):
            if b.route_a[out[j]] + b.route_b[out[j]] - city == other:
                dup = True
                break
        if not dup:
            out[n] = r
            n += 1
    return n


cdef void choose_stations(const BoardC* b, const GameState* s, int seat, ScoreC* sc) noexcept nogil:
    """Ruling: the routes borrowed by a player's stations are chosen together, by an exact
    search over all choices, to maximise the ticket score, then the tickets completed
    (the first best choice in the search's order is kept).

    A choice adds at most one route per station to the seat's network, so it can only
    complete tickets the network alone leaves open, by joining the network's pieces: the
    search links the pieces (their union-find roots) in a small union-find of its own
    and tests only the open tickets whose two pieces some option touches."""
    cdef const PlayerC* p = &s.p[seat]
    cdef int8_t base[MAX_CITIES]
    cdef int8_t link[MAX_CITIES]            # roots of base linked by a choice's routes
    cdef int16_t opts[MAX_STATIONS][MAX_ADJ]
    cdef int8_t ends[MAX_STATIONS][MAX_ADJ][2]  # roots of each option's two cities
    cdef int n_opt[MAX_STATIONS]
    cdef int idx[MAX_STATIONS]
    cdef int8_t open_a[MAX_TICKETS]         # the open tickets a choice could complete:
    cdef int8_t open_b[MAX_TICKETS]         # the roots of their two cities, the ticket,
    cdef int16_t open_t[MAX_TICKETS]        # and the points completing it adds
    cdef int open_pts[MAX_TICKETS]
    cdef uint64_t done[2]
    cdef uint64_t plain[2]
    cdef uint64_t bits, touched = 0        # roots some option joins to another piece
    cdef int n_st = 0, n_open = 0, i, j, k, w, t, x, y, gain, best_gain = 0, best_n = 0, r
    own_network(b, s, seat, base, -1)
    for k in range(MAX_STATIONS):
        sc.borrowed[k] = -1
        if k < b.stations and p.station_city[k] >= 0:
            n_opt[n_st] = station_options(b, s, seat, p.station_city[k], opts[n_st])
            for j in range(n_opt[n_st]):
                r = opts[n_st][j]
                ends[n_st][j][0] = x = uf_find(base, b.route_a[r])
                ends[n_st][j][1] = y = uf_find(base, b.route_b[r])
                if x != y:
                    touched |= ((<uint64_t>1) << x) | ((<uint64_t>1) << y)
            idx[n_st] = 0
            n_st += 1
    sc.ticket_points = ticket_result(b, s, seat, base, plain)
    sc.completed[0] = plain[0]
    sc.completed[1] = plain[1]
    if touched:
        # the open tickets a choice could complete: both pieces joined by some option
        for w in range(2):
            bits = p.tickets[w] & ~plain[w]
            while bits:
                t = (w << 6) + lowest_bit(bits)
                bits &= bits - 1
                x = uf_find(base, b.ticket_a[t])
                y = uf_find(base, b.ticket_b[t])
                if (touched >> x) & (touched >> y) & 1:
                    open_a[n_open] = x
                    open_b[n_open] = y
                    open_t[n_open] = t
                    open_pts[n_open] = 2 * b.ticket_points[t]    # from failed to completed
                    n_open += 1
        for i in range(b.n_cities):
            link[i] = i
    while n_open > 0:
        for i in range(n_st):
            if n_opt[i] > 0:
                uf_union(link, ends[i][idx[i]][0], ends[i][idx[i]][1])
        gain = 0
        k = 0
        done[0] = done[1] = 0
        for j in range(n_open):
            if uf_find(link, open_a[j]) == uf_find(link, open_b[j]):
                gain += open_pts[j]
                k += 1
                set_bit(done, open_t[j])
        if gain > best_gain or (gain == best_gain and k > best_n):
            best_gain = gain
            best_n = k
            sc.completed[0] = plain[0] | done[0]
            sc.completed[1] = plain[1] | done[1]
            for i in range(n_st):
                sc.borrowed[i] = opts[i][idx[i]] if n_opt[i] > 0 else -1
        for i in range(n_st):                   # undo the links (roots only were touched)
            if n_opt[i] > 0:
                link[ends[i][idx[i]][0]] = ends[i][idx[i]][0]
                link[ends[i][idx[i]][1]] = ends[i][idx[i]][1]
        # next choice (mixed radix counter)
        i = 0
        while i < n_st:
            idx[i] += 1
            if idx[i] < n_opt[i]:
                break
            idx[i] = 0
            i += 1
        if i == n_st:
            break
    sc.ticket_points += best_gain
    sc.by_station[0] = sc.completed[0] & ~plain[0]
    sc.by_station[1] = sc.completed[1] & ~plain[1]
    sc.tickets_completed = count_bits(sc.completed[0]) + count_bits(sc.completed[1])
    sc.tickets_failed = p.n_tickets - sc.tickets_completed
    sc.tickets_by_station = count_bits(sc.by_station[0]) + count_bits(sc.by_station[1])


ctypedef struct OwnGraph:
    # a seat's own routes as adjacency lists, each chain of routes through cities where
    # exactly two of them meet merged into one edge (named by its first route)
    int8_t n[MAX_CITIES]
    int16_t route[MAX_CITIES][MAX_ADJ]
    int8_t other[MAX_CITIES][MAX_ADJ]
    int16_t length[MAX_CITIES][MAX_ADJ]


cdef int trail_from(const OwnGraph* g, int x, uint64_t* used) noexcept nogil:
    cdef int i, r, v, best = 0
    for i in range(g.n[x]):
        r = g.route[x][i]
        if get_bit(used, r):
            continue
        set_bit(used, r)
        v = g.length[x][i] + trail_from(g, g.other[x][i], used)
        clear_bit(used, r)
        if v > best:
            best = v
    return best


cdef int longest_trail(const BoardC* b, const GameState* s, int seat) noexcept nogil:
    """Longest trail (each route at most once, cities may repeat) in a seat's own routes,
    by exact depth-first search. A longest trail in a connected piece of the network
    either runs between two cities where an odd number of the piece's routes meet (were
    an end even, a route there would be unused and would extend it), or, when every city
    of the piece is even, walks the whole piece (an Euler circuit). So the search starts
    only at odd cities, but not at a piece's last one (a longest trail from it was found
    from its other end), and an all-even piece counts its total length. A trail that
    enters a city where two routes meet leaves by the other or ends there, and the
    longest ends at odd cities, so the search walks such chains as single edges."""
    cdef OwnGraph g
    cdef int8_t deg[MAX_CITIES]
    cdef int16_t inc[MAX_CITIES][MAX_ADJ]     # the routes at each city
    cdef uint64_t used[2]
    cdef uint64_t seen[2]
    cdef uint64_t bits, odd = 0
    cdef int8_t parent[MAX_CITIES]
    cdef int piece_len[MAX_CITIES]
    cdef uint8_t piece_odd[MAX_CITIES]
    cdef uint64_t own = s.p[seat].cities      # the cities of its routes: all it visits
    cdef int x, y, w, r, r0, v, i, total, best = 0
    own_network(b, s, seat, parent, -1)
    bits = own
    while bits:
        x = lowest_bit(bits)
        bits &= bits - 1
        piece_len[x] = 0
        piece_odd[x] = 0
        deg[x] = 0
        g.n[x] = 0
    for w in range(2):
        bits = s.p[seat].routes[w]
        while bits:
            r = (w << 6) + lowest_bit(bits)
            bits &= bits - 1
            x = b.route_a[r]
            y = b.route_b[r]
            inc[x][deg[x]] = r
            deg[x] += 1
            inc[y][deg[y]] = r
            deg[y] += 1
            odd ^= ((<uint64_t>1) << x) ^ ((<uint64_t>1) << y)
            piece_len[uf_find(parent, x)] += b.route_len[r]
    bits = odd
    while bits:
        x = lowest_bit(bits)
        bits &= bits - 1
        piece_odd[uf_find(parent, x)] += 1
    bits = own
    while bits:
        x = lowest_bit(bits)
        bits &= bits - 1
        if parent[x] == x and not piece_odd[x] and piece_len[x] > best:
            best = piece_len[x]
    if odd == 0:
        return best
    # merge the chains: walk from every city where other than two routes meet
    seen[0] = seen[1] = 0
    bits = own
    while bits:
        x = lowest_bit(bits)
        bits &= bits - 1
        if deg[x] == 2:
            continue
        for i in range(deg[x]):
            r0 = inc[x][i]
            if get_bit(seen, r0):
                continue
            r = r0
            y = x
            total = 0
            while True:
                set_bit(seen, r)
                total += b.route_len[r]
                y = b.route_a[r] + b.route_b[r] - y
                if deg[y] != 2:
                    break
                r = inc[y][0] if inc[y][1] == r else inc[y][1]
            g.route[x][g.n[x]] = r0
            g.other[x][g.n[x]] = y
            g.length[x][g.n[x]] = total
            g.n[x] += 1
            if y != x:
                g.route[y][g.n[y]] = r0
                g.other[y][g.n[y]] = x
                g.length[y][g.n[y]] = total
                g.n[y] += 1
    used[0] = 0
    used[1] = 0
    while odd:
        x = lowest_bit(odd)
        odd &= odd - 1
        y = uf_find(parent, x)
        piece_odd[y] -= 1
        if piece_odd[y] == 0:
            continue        # its piece's last odd city: see the docstring
        v = trail_from(&g, x, used)
        if v > best:
            best = v
    return best


cdef int compare_scores(const BoardC* b, const ScoreC* x, const ScoreC* y) noexcept nogil:
    """> 0 when x ranks ahead of y: total, then the board's tie-breaks in order."""
    cdef int i
    if x.total != y.total:
        return x.total - y.total
    for i in range(b.n_tie_breaks):
        if b.tie_breaks[i] == TB_TICKETS and x.tickets_completed != y.tickets_completed:
            return x.tickets_completed - y.tickets_completed
        if b.tie_breaks[i] == TB_FEWEST_STATIONS and x.stations_built != y.stations_built:
            return y.stations_built - x.stations_built
        if b.tie_breaks[i] == TB_LONGEST and (x.longest_bonus > 0) != (y.longest_bonus > 0):
            return 1 if x.longest_bonus > 0 else -1
    return 0


cdef void score_game(const BoardC* b, const GameState* s, ScoreC* out) noexcept nogil:
    """Final scores of every seat into out[0..n_players-1]."""
    cdef int seat, j, best = 0, most = 0
    cdef ScoreC* sc
    cdef const PlayerC* p
    for seat in range(s.n_players):
        sc = &out[seat]
        p = &s.p[seat]
        memset(sc, 0, sizeof(ScoreC))
        sc.route_points = p.route_points
        choose_stations(b, s, seat, sc)
        sc.longest = longest_trail(b, s, seat)
        if sc.longest > best:
            best = sc.longest
        sc.stations_built = b.stations - p.stations_left
        sc.station_points = p.stations_left * b.station_points
        sc.attraction_points = count_bits(p.cities & b.attractions) * b.attraction_points
        if sc.tickets_completed > most:
            most = sc.tickets_completed
    for seat in range(s.n_players):
        sc = &out[seat]
        # Ruling: no bonus when nobody has claimed a route.
        if b.longest_bonus > 0 and best > 0 and sc.longest == best:
            sc.longest_bonus = b.longest_bonus
        # Ruling: no Globetrotter when nobody has completed a ticket; every seat tied
        # for the most scores it.
        if b.globetrotter_bonus > 0 and most > 0 and sc.tickets_completed == most:
            sc.globetrotter = b.globetrotter_bonus
        sc.total = (sc.route_points + sc.ticket_points + sc.longest_bonus + sc.globetrotter
                    + sc.station_points + sc.attraction_points)
    for seat in range(s.n_players):
        out[seat].rank = 1
        for j in range(s.n_players):
            if j != seat and compare_scores(b, &out[j], &out[seat]) > 0:
                out[seat].rank += 1


# ---------------------------------------------------------------------------
# hidden information

cdef void determinize(const BoardC* b, GameState* s, int seat, uint64_t seed) noexcept nogil:
    """Resample what `seat` cannot see (deck order, other hands, other players' tickets,
    offers and discards, the ticket deck, the tickets out of the game that nobody
    discarded) uniformly, keeping every count, and reseed the generator; a lookahead on
    the result learns nothing hidden. Cards a player is publicly known to hold (taken
    from the face-up row and not spent since, GameState.known) stay in that hand.
    Tickets are resampled within their class (long or regular, see ticket_class), so
    every place keeps its class: the ticket deck holds no long ticket, and each player
    keeps their number of long tickets. Tickets `seat` returned to the ticket deck are
    resampled like the rest (the copy forgets where they are).

    The pools are built in a canonical order (cards by type, tickets by index) before
    they are shuffled, so the result depends only on what `seat` may know and the seed:
    two states that differ only in hidden information give the same copy."""
    cdef uint8_t pool[MAX_DECK]
    cdef uint8_t slots[MAX_TICKETS]     # hidden tickets in a fixed order of their places
    cdef uint8_t tpool[2][MAX_TICKETS]  # the hidden tickets by class, then shuffled
    cdef int cnt[N_CARD_TYPES]
    cdef int nt[2]
    cdef int taken[2]
    cdef uint64_t hidden_removed[2]
    cdef uint64_t hidden[2]
    cdef int n = 0, ns = 0, i, j, t, q, k, c, w
    rng_seed(&s.rng, seed)
    memset(cnt, 0, sizeof(cnt))
    for i in range(s.deck_n):
        cnt[s.deck[i]] += 1
    # places of hidden tickets: other players' tickets, offers and discards, the ticket
    # deck, and the tickets nobody discarded that are out of the game (Europe's undealt
    # long tickets)
    for w in range(2):
        hidden_removed[w] = s.removed[w]
        for q in range(s.n_players):
            hidden_removed[w] &= ~s.p[q].discarded[w]
        hidden[w] = hidden_removed[w]
    for q in range(s.n_players):
        if q == seat:
            continue
        for t in range(N_CARD_TYPES):
            cnt[t] += s.p[q].hand[t] - s.known[q][t]
        for w in range(2):
            hidden[w] |= s.p[q].tickets[w] | s.p[q].discarded[w]
        for i in range(s.n_pending[q]):
            set_bit(hidden, s.pending[q][i])
    for i in range(s.tdeck_n):
        set_bit(hidden, s.tdeck[(s.tdeck_head + i) % MAX_TICKETS])
    for t in range(N_CARD_TYPES):
        for k in range(cnt[t]):
            pool[n] = t
            n += 1
    nt[0] = 0
    nt[1] = 0
    for t in range(b.n_tickets):
        if get_bit(hidden, t):
            c = ticket_class(b, t)
            tpool[c][nt[c]] = t
            nt[c] += 1
    # the places, in a fixed order: each other player's tickets, offers and discards,
    # then the ticket deck, then the rest out of the game (their classes are public)
    for q in range(s.n_players):
        if q == seat:
            continue
        for t in range(b.n_tickets):
            if get_bit(s.p[q].tickets, t):
                slots[ns] = ticket_class(b, t)
                ns += 1
        for i in range(s.n_pending[q]):
            slots[ns] = ticket_class(b, s.pending[q][i])
            ns += 1
        for t in range(b.n_tickets):
            if get_bit(s.p[q].discarded, t):
                slots[ns] = ticket_class(b, t)
                ns += 1
    for i in range(s.tdeck_n):
        slots[ns] = ticket_class(b, s.tdeck[(s.tdeck_head + i) % MAX_TICKETS])
        ns += 1
    for t in range(b.n_tickets):
        if get_bit(hidden_removed, t):
            slots[ns] = ticket_class(b, t)
            ns += 1
    shuffle_cards(s, pool, n)
    shuffle_cards(s, tpool[0], nt[0])
    shuffle_cards(s, tpool[1], nt[1])
    taken[0] = 0
    taken[1] = 0
    for i in range(ns):                 # each place takes the next ticket of its class
        c = slots[i]
        slots[i] = tpool[c][taken[c]]
        taken[c] += 1
    # write back in the order the places were read
    j = 0
    k = 0
    for q in range(s.n_players):
        if q == seat:
            continue
        i = hand_total(s, q)
        for t in range(N_CARD_TYPES):
            s.p[q].hand[t] = s.known[q][t]
            i -= s.known[q][t]
        while i > 0:
            s.p[q].hand[pool[j]] += 1
            j += 1
            i -= 1
        s.p[q].tickets[0] = 0
        s.p[q].tickets[1] = 0
        for i in range(s.p[q].n_tickets):
            set_bit(s.p[q].tickets, slots[k])
            k += 1
        for i in range(s.n_pending[q]):
            s.pending[q][i] = slots[k]
            k += 1
        i = count_bits2(s.p[q].discarded)
        s.p[q].discarded[0] = 0
        s.p[q].discarded[1] = 0
        while i > 0:
            set_bit(s.p[q].discarded, slots[k])
            k += 1
            i -= 1
    for i in range(s.deck_n):
        s.deck[i] = pool[j]
        j += 1
    for i in range(s.tdeck_n):
        s.tdeck[(s.tdeck_head + i) % MAX_TICKETS] = slots[k]
        k += 1
    for w in range(2):                  # out of the game: every player's discards, the rest
        s.removed[w] = 0
        for q in range(s.n_players):
            s.removed[w] |= s.p[q].discarded[w]
    while k < ns:
        set_bit(s.removed, slots[k])
        k += 1


# ---------------------------------------------------------------------------
# invariants

cdef int check_state(const BoardC* b, const GameState* s) noexcept nogil:
    """0 when the state is consistent, else the CHK_* code of the first broken invariant
    (CHECK_MESSAGES says what each code means). Used by tests and play_batch(check=True)."""
    cdef int q, r, t, i, k, n, x, built, partner
    cdef int counts[N_CARD_TYPES]
    cdef uint8_t seen[MAX_TICKETS]
    cdef uint64_t closed[2]
    cdef uint64_t cities
    cdef int length
    cdef const PlayerC* p
    cdef uint64_t o_bits[MAX_PLAYERS][2]
    cdef uint64_t o_closed[MAX_PLAYERS][2]
    cdef uint64_t o_cities[MAX_PLAYERS]
    cdef int o_n[MAX_PLAYERS]
    cdef int o_pts[MAX_PLAYERS]
    cdef int o_len[MAX_PLAYERS]
    # phase and seat to act
    if (s.n_players < 2 or s.n_players > MAX_PLAYERS or s.phase < PH_SETUP_TICKETS
            or s.phase > PH_OVER or s.current < 0 or s.current >= s.n_players):
        return CHK_PHASE
    # card counts: valid entries, then every card in exactly one place
    if s.deck_n < 0 or s.deck_n > MAX_DECK or s.n_revealed < 0 or s.n_revealed > 3:
        return CHK_CARD_RANGE
    memset(counts, 0, sizeof(counts))
    for i in range(s.deck_n):
        if s.deck[i] >= N_CARD_TYPES:
            return CHK_CARD_RANGE
        counts[s.deck[i]] += 1
    for i in range(N_FACEUP):
        if s.faceup[i] < -1 or s.faceup[i] >= N_CARD_TYPES:
            return CHK_CARD_RANGE
        if s.faceup[i] >= 0:
            counts[s.faceup[i]] += 1
    for i in range(s.n_revealed):
        if s.revealed[i] < 0 or s.revealed[i] >= N_CARD_TYPES:
            return CHK_CARD_RANGE
        counts[s.revealed[i]] += 1
    for t in range(N_CARD_TYPES):
        if s.discard[t] < 0:
            return CHK_CARD_RANGE
        counts[t] += s.discard[t]
        for q in range(s.n_players):
            if s.p[q].hand[t] < 0:
                return CHK_CARD_RANGE
            counts[t] += s.p[q].hand[t]
    if s.phase == PH_TUNNEL:
        # the cards played for the tunnel are set aside until it is paid or declined
        if (s.t_route < 0 or s.t_route >= b.n_routes or not b.route_tunnel[s.t_route]
                or s.route_owner[s.t_route] >= 0 or s.t_extra < 1 or s.t_extra > s.n_revealed):
            return CHK_TUNNEL
        length = b.route_len[s.t_route]
        if s.t_wild < 0 or s.t_wild > length or (s.t_color == WILD and s.t_wild != length):
            return CHK_TUNNEL
        if s.t_color != WILD and (s.t_color < 0 or s.t_color >= b.n_colors or s.t_wild == length):
            return CHK_TUNNEL
        counts[WILD] += s.t_wild
        if s.t_color != WILD:
            counts[s.t_color] += length - s.t_wild
    for t in range(N_CARD_TYPES):
        if counts[t] != b.deck_count[t]:
            return CHK_CARD_TOTAL
    # tickets: each in exactly one place (ticket deck, a hand, an offer, out of the game)
    if s.tdeck_n < 0 or s.tdeck_n > MAX_TICKETS or s.tdeck_head < 0 or s.tdeck_head >= MAX_TICKETS:
        return CHK_TICKETS
    memset(seen, 0, sizeof(seen))
    for i in range(s.tdeck_n):
        t = s.tdeck[(s.tdeck_head + i) % MAX_TICKETS]
        if t >= b.n_tickets:
            return CHK_TICKETS
        seen[t] += 1
    for q in range(s.n_players):
        if s.n_pending[q] < 0 or s.n_pending[q] > MAX_PENDING:
            return CHK_TICKETS
        for i in range(s.n_pending[q]):
            t = s.pending[q][i]
            if t >= b.n_tickets:
                return CHK_TICKETS
            seen[t] += 1
        n = 0
        for k in range(2):               # the set bits of the hand, word by word
            cities = s.p[q].tickets[k]
            while cities:
                t = (k << 6) + lowest_bit(cities)
                cities &= cities - 1
                if t >= b.n_tickets:
                    return CHK_TICKETS
                seen[t] += 1
                n += 1
        if n != s.p[q].n_tickets:
            return CHK_TICKETS
    for q in range(s.n_players):         # own discards are out of the game
        if (s.p[q].discarded[0] & ~s.removed[0]) or (s.p[q].discarded[1] & ~s.removed[1]):
            return CHK_TICKETS
    for k in range(2):
        cities = s.removed[k]
        while cities:
            t = (k << 6) + lowest_bit(cities)
            cities &= cities - 1
            if t >= b.n_tickets:
                return CHK_TICKETS
            seen[t] += 1
    for t in range(b.n_tickets):
        if seen[t] != 1:
            return CHK_TICKETS
    # tickets on offer only to the seat choosing them
    for q in range(s.n_players):
        if s.phase == PH_SETUP_TICKETS:
            if (s.n_pending[q] > 0) != (q >= s.current):
                return CHK_PENDING
        elif s.phase == PH_KEEP_TICKETS and q == s.current:
            if s.n_pending[q] < 1 or s.n_pending[q] > b.draw_tickets:
                return CHK_PENDING
        elif s.n_pending[q] != 0:
            return CHK_PENDING
    # routes: owners, bitsets, trains and points agree (one pass over the routes sums
    # every seat's share; the comparisons follow, seat by seat)
    memset(o_bits, 0, sizeof(o_bits))
    memset(o_closed, 0, sizeof(o_closed))
    memset(o_cities, 0, sizeof(o_cities))
    memset(o_n, 0, sizeof(o_n))
    memset(o_pts, 0, sizeof(o_pts))
    memset(o_len, 0, sizeof(o_len))
    closed[0] = closed[1] = 0
    for r in range(b.n_routes):
        q = s.route_owner[r]
        if q < -1 or q >= s.n_players:
            return CHK_ROUTES
        if q < 0:
            continue
        partner = b.route_partner[r]
        set_bit(o_bits[q], r)
        o_cities[q] |= ((<uint64_t>1) << b.route_a[r]) | ((<uint64_t>1) << b.route_b[r])
        o_n[q] += 1
        o_pts[q] += b.route_points[b.route_len[r]]
        o_len[q] += b.route_len[r]
        # routes closed to every seat: the claimed ones and, below the player threshold,
        # the other half of each claimed double; from the threshold on, the other half
        # of q's doubles is closed to q alone
        set_bit(closed, r)
        if partner >= 0:
            if s.n_players < b.double_min_players:
                set_bit(closed, partner)
            else:
                set_bit(o_closed[q], partner)
            if s.route_owner[partner] >= 0:
                if s.route_owner[partner] == q:
                    return CHK_DOUBLE_SAME
                if s.n_players < b.double_min_players:
                    return CHK_DOUBLE_CLOSED
    for q in range(s.n_players):
        p = &s.p[q]
        if (o_bits[q][0] != p.routes[0] or o_bits[q][1] != p.routes[1] or o_n[q] != p.n_routes
                or o_cities[q] != p.cities):
            return CHK_ROUTES
        if o_closed[q][0] != s.closed_to[q][0] or o_closed[q][1] != s.closed_to[q][1]:
            return CHK_ROUTES
        if p.trains < 0 or p.trains > b.trains or p.trains != b.trains - o_len[q]:
            return CHK_TRAINS
        if p.route_points != o_pts[q]:
            return CHK_ROUTE_POINTS
    if closed[0] != s.closed[0] or closed[1] != s.closed[1]:
        return CHK_ROUTES
    # stations
    for x in range(b.n_cities):
        if s.city_station[x] < -1 or s.city_station[x] >= s.n_players:
            return CHK_STATIONS
    n = 0
    for x in range(b.n_cities):
        if s.city_station[x] >= 0:
            n += 1
    for q in range(s.n_players):
        p = &s.p[q]
        if p.stations_left < 0 or p.stations_left > b.stations:
            return CHK_STATIONS
        built = b.stations - p.stations_left
        for k in range(MAX_STATIONS):
            if k < built:
                if (p.station_city[k] < 0 or p.station_city[k] >= b.n_cities
                        or s.city_station[p.station_city[k]] != q):
                    return CHK_STATIONS
            elif p.station_city[k] != -1:
                return CHK_STATIONS
        n -= built
    if n != 0:
        return CHK_STATIONS
    # turn in progress and end of game
    if s.phase != PH_TUNNEL and s.n_revealed != 0:
        return CHK_TUNNEL
    if (s.last_round != 0 and s.last_round != 1) or s.turns_left < 0 or s.turns_left > s.n_players:
        return CHK_END
    if s.passes < 0 or s.passes > s.n_players or (s.ended_by_passes and s.phase != PH_OVER):
        return CHK_END
    if s.phase != PH_OVER and s.passes >= s.n_players:
        return CHK_END
    for q in range(s.n_players):
        for t in range(N_CARD_TYPES):
            if s.known[q][t] < 0 or s.known[q][t] > s.p[q].hand[t]:
                return CHK_KNOWN
    return 0


# ===========================================================================
# Python wrappers (hold the GIL; not used in the batch loop)

PHASES = ("setup_tickets", "turn", "second_draw", "keep_tickets", "tunnel", "over")
_TIE_BREAKS = {"tickets": TB_TICKETS, "fewest_stations": TB_FEWEST_STATIONS, "longest": TB_LONGEST}
LIMITS = dict(cities=MAX_CITIES, routes=MAX_ROUTES, tickets=MAX_TICKETS, colors=MAX_COLORS,
              players=MAX_PLAYERS, route_length=MAX_LEN - 1, deck=MAX_DECK,
              stations=MAX_STATIONS, pending=MAX_PENDING, routes_per_city=MAX_ADJ)
WILD_CARD = WILD
MAX_LEGAL_ACTIONS = MAX_ACTIONS
# What each code of check_state means (index = code).
CHECK_MESSAGES = (
    "ok",
    "phase, player count or seat to act out of range",
    "a card entry is out of range (deck, face-up row, revealed cards, a negative count)",
    "cards of some type do not add up to the deck's composition",
    "a ticket is not in exactly one place (ticket deck, a hand, an offer, removed)",
    "tickets are on offer to a seat that is not choosing tickets",
    "route bitsets, route counts or city sets disagree with route_owner",
    "trains left outside 0..board trains or not board trains minus own route lengths",
    "route points are not the sum of the owned routes' scores",
    "a player owns both halves of a double route",
    "both halves of a double route are owned below the board's player threshold",
    "stations left, station cities and city stations disagree",
    "tunnel state is inconsistent",
    "final-round or pass counters are inconsistent",
    "cards known to be in a hand exceed that hand (GameState.known)",
)


cdef uint64_t last_board_uid = 0     # CompiledBoard numbers its boards (BoardC.uid)


cdef class CompiledBoard:
    """A loaded board (``ttrsim.maps.Board``) compiled into the core's flat arrays."""

    def __init__(self, board):
        global last_board_uid
        cdef BoardC* c = &self.c
        cdef int i, k, x
        memset(c, 0, sizeof(BoardC))
        last_board_uid += 1
        c.uid = last_board_uid
        self.board = board
        c.n_cities = len(board.cities)
        c.n_routes = len(board.route_id)
        c.n_tickets = len(board.ticket_id)
        c.n_colors = len(board.colors)
        if (c.n_cities > MAX_CITIES or c.n_routes > MAX_ROUTES or c.n_tickets > MAX_TICKETS
                or c.n_colors > MAX_COLORS):
            raise ValueError(f"board {board.name!r} exceeds the core's limits {LIMITS}")
        for i in range(c.n_routes):
            c.route_a[i] = board.route_a[i]
            c.route_b[i] = board.route_b[i]
            c.route_len[i] = board.route_len[i]
            c.route_color[i] = board.route_color[i]
            c.route_tunnel[i] = bool(board.route_tunnel[i])
            c.route_ferry[i] = board.route_ferry[i]
            c.route_partner[i] = board.route_partner[i]
            for x in (c.route_a[i], c.route_b[i]):
                if c.n_adj[x] >= MAX_ADJ:
                    raise ValueError(f"city {board.cities[x]!r} has more than {MAX_ADJ} routes")
                c.adj[x][c.n_adj[x]] = i
                c.n_adj[x] += 1
        for i in range(c.n_routes):
            set_bit(c.all_routes, i)
            if c.route_partner[i] >= 0:
                set_bit(c.double_routes, i)
            k = c.route_color[i] if c.route_color[i] != GRAY else GRAY_CLASS
            for x in range(c.route_len[i], MAX_LEN):
                set_bit(c.class_upto[k][x], i)
            for x in range(c.route_ferry[i]):
                set_bit(c.ferry_over[x], i)
        for length, pts in board.route_points.items():
            if not 0 < int(length) < MAX_LEN:
                raise ValueError(f"route length {length} outside 1..{MAX_LEN - 1}")
            c.route_points[int(length)] = pts
        for i in range(c.n_tickets):
            c.ticket_a[i] = board.ticket_a[i]
            c.ticket_b[i] = board.ticket_b[i]
            c.ticket_points[i] = board.ticket_points[i]
            c.ticket_long[i] = bool(board.ticket_long[i])
        c.min_players = board.min_players
        c.max_players = board.max_players
        c.trains = board.trains
        c.stations = board.stations
        c.station_points = board.station_points
        c.initial_hand = board.initial_hand
        c.deal_regular = board.deal_regular
        c.deal_long = board.deal_long
        c.initial_keep = board.initial_keep
        c.initial_discards_removed = bool(board.initial_discards_removed)
        c.draw_tickets = board.draw_tickets
        c.draw_keep = board.draw_keep
        c.longest_bonus = board.longest_bonus
        c.globetrotter_bonus = board.globetrotter_bonus
        c.double_min_players = board.double_min_players
        c.end_trigger = board.end_trigger
        c.wild_faceup_limit = board.wild_faceup_limit
        c.max_redeals = board.max_redeals
        for i in range(c.n_colors):
            c.deck_count[i] = board.deck_colors[i]
        c.deck_count[WILD] = board.deck_wild
        c.deck_total = sum(c.deck_count[i] for i in range(N_CARD_TYPES))
        if c.deck_total > MAX_DECK:
            raise ValueError(f"deck of {c.deck_total} cards exceeds {MAX_DECK}")
        for x in board.attractions:
            c.attractions |= (<uint64_t>1) << x
        c.attraction_points = board.attraction_points
        c.n_tie_breaks = len(board.tie_breaks)
        for i, name in enumerate(board.tie_breaks):
            c.tie_breaks[i] = _TIE_BREAKS[name]

    def __reduce__(self):
        return (CompiledBoard, (self.board,))

    @property
    def name(self):
        return self.board.name


cdef list _bits(const uint64_t* bits, int n):
    return [i for i in range(n) if get_bit(bits, i)]


cdef dict score_dict(const BoardC* b, const ScoreC* sc):
    return dict(
        route_points=sc.route_points, ticket_points=sc.ticket_points,
        tickets_completed=sc.tickets_completed, tickets_failed=sc.tickets_failed,
        tickets_by_station=sc.tickets_by_station, longest=sc.longest,
        longest_bonus=sc.longest_bonus, globetrotter=sc.globetrotter,
        station_points=sc.station_points,
        stations_built=sc.stations_built, attraction_points=sc.attraction_points,
        total=sc.total, rank=sc.rank,
        borrowed=[sc.borrowed[k] for k in range(sc.stations_built)],
        completed=_bits(sc.completed, b.n_tickets),
        by_station=_bits(sc.by_station, b.n_tickets),
    )


cdef dict observation_dict(const BoardC* b, const GameState* s, int seat):
    """What `seat` may know (RULES: hidden information), as plain Python data."""
    cdef const PlayerC* p = &s.p[seat]
    own = seat == s.current
    # The initial ticket choices are made in seat order but count as simultaneous and
    # secret (RULES: hidden information); until every seat has chosen, the other seats'
    # ticket counts read 0 instead of telling how many tickets they kept.
    setup = s.phase == PH_SETUP_TICKETS
    return dict(
        seat=seat,
        phase=PHASES[s.phase],
        current=s.current,
        turn=s.turn,
        hand=[p.hand[t] for t in range(N_CARD_TYPES)],
        tickets=_bits(p.tickets, b.n_tickets),
        pending=[s.pending[seat][i] for i in range(s.n_pending[seat])],
        faceup=[s.faceup[i] for i in range(N_FACEUP)],
        discard=[s.discard[t] for t in range(N_CARD_TYPES)],
        deck_size=s.deck_n,
        ticket_deck_size=s.tdeck_n,
        route_owner=[s.route_owner[r] for r in range(b.n_routes)],
        city_station=[s.city_station[x] for x in range(b.n_cities)],
        players=[dict(trains=s.p[q].trains, stations_left=s.p[q].stations_left,
                      route_points=s.p[q].route_points, hand_size=hand_total(s, q),
                      tickets=0 if setup and q != seat else s.p[q].n_tickets)
                 for q in range(s.n_players)],
        last_round=bool(s.last_round),
        tunnel=(dict(route=s.t_route, color=s.t_color, wild=s.t_wild, extra=s.t_extra,
                     revealed=[s.revealed[i] for i in range(s.n_revealed)])
                if s.phase == PH_TUNNEL and own else None),
    )


cdef class GameCore:
    """One game in the compiled core: legal actions, apply, state, scores.

    Low level (integers for cards, routes, cities and tickets); ``ttrsim.Game`` is the
    readable API over it.
    """
    cdef readonly CompiledBoard cb
    cdef GameState s
    cdef int32_t[::1] _buf

    def __cinit__(self, CompiledBoard cb, int n_players, uint64_t seed=0, bint deal=True):
        self.cb = cb
        self._buf = np.empty(MAX_ACTIONS, dtype=np.int32)
        if not 2 <= n_players <= MAX_PLAYERS:
            raise ValueError(f"player count {n_players} outside 2..{MAX_PLAYERS}")
        if deal:
            game_init(&cb.c, &self.s, n_players, seed)
        else:
            memset(&self.s, 0, sizeof(GameState))
            # keep the player count: set_position reads it to deal a hand-made position
            self.s.n_players = n_players

    # --- play ---------------------------------------------------------------
    def legal_actions(self):
        cdef int n = legal_actions(&self.cb.c, &self.s, &self._buf[0])
        return np.array(self._buf[:n], dtype=np.int32)

    def is_legal(self, int32_t action):
        return bool(is_legal(&self.cb.c, &self.s, action))

    def apply(self, int32_t action):
        if apply_action(&self.cb.c, &self.s, action, NULL) != 0:
            raise ValueError(f"illegal action {action}")

    @property
    def current(self):
        return self.s.current

    @property
    def phase(self):
        return PHASES[self.s.phase]

    @property
    def n_players(self):
        return self.s.n_players

    @property
    def over(self):
        return self.s.phase == PH_OVER

    @property
    def turn(self):
        return self.s.turn

    def clone(self):
        cdef GameCore g = GameCore(self.cb, self.s.n_players, 0, False)
        memcpy(&g.s, &self.s, sizeof(GameState))
        return g

    def determinize(self, int seat, uint64_t seed):
        determinize(&self.cb.c, &self.s, seat, seed)

    def state_bytes(self):
        return (<char*>&self.s)[:sizeof(GameState)]

    def load_state_bytes(self, bytes data):
        if len(data) != sizeof(GameState):
            raise ValueError("state of the wrong size")
        memcpy(&self.s, <char*>data, sizeof(GameState))

    def __reduce__(self):
        return (_restore, (self.cb, self.s.n_players, self.state_bytes()))

    # --- inspection ----------------------------------------------------------
    def observation(self, int seat):
        if not 0 <= seat < self.s.n_players:
            raise ValueError(f"seat {seat} outside 0..{self.s.n_players - 1}")
        return observation_dict(&self.cb.c, &self.s, seat)

    def state(self):
        """The complete state (hidden information included), for tests and tools."""
        cdef GameState* s = &self.s
        cdef const BoardC* b = &self.cb.c
        cdef PlayerC* p
        cdef int q
        players = []
        for q in range(s.n_players):
            p = &s.p[q]
            players.append(dict(
                hand=[p.hand[t] for t in range(N_CARD_TYPES)], trains=p.trains,
                known=[s.known[q][t] for t in range(N_CARD_TYPES)],
                stations_left=p.stations_left, route_points=p.route_points,
                stations=[p.station_city[k] for k in range(MAX_STATIONS) if p.station_city[k] >= 0],
                routes=_bits(p.routes, b.n_routes), tickets=_bits(p.tickets, b.n_tickets),
                discarded=_bits(p.discarded, b.n_tickets),
                n_tickets=p.n_tickets, n_routes=p.n_routes,
                cities=[x for x in range(b.n_cities) if (p.cities >> x) & 1],
                pending=[s.pending[q][i] for i in range(s.n_pending[q])]))
        return dict(
            phase=PHASES[s.phase], current=s.current, turn=s.turn, n_players=s.n_players,
            deck=[s.deck[i] for i in range(s.deck_n)],
            discard=[s.discard[t] for t in range(N_CARD_TYPES)],
            faceup=[s.faceup[i] for i in range(N_FACEUP)],
            route_owner=[s.route_owner[r] for r in range(b.n_routes)],
            city_station=[s.city_station[x] for x in range(b.n_cities)],
            ticket_deck=[s.tdeck[(s.tdeck_head + i) % MAX_TICKETS] for i in range(s.tdeck_n)],
            removed=_bits(s.removed, b.n_tickets),
            players=players,
            tunnel=(dict(route=s.t_route, color=s.t_color, wild=s.t_wild, extra=s.t_extra,
                         revealed=[s.revealed[i] for i in range(s.n_revealed)])
                    if s.phase == PH_TUNNEL else None),
            last_round=bool(s.last_round), turns_left=s.turns_left, passes=s.passes,
            ended_by_passes=bool(s.ended_by_passes), redeals=s.redeals,
        )

    def scores(self):
        """Final score breakdown of every seat (valid at any time; final once over)."""
        cdef ScoreC out[MAX_PLAYERS]
        score_game(&self.cb.c, &self.s, out)
        return [score_dict(&self.cb.c, &out[q]) for q in range(self.s.n_players)]

    def longest_trail(self, int seat):
        return longest_trail(&self.cb.c, &self.s, seat)

    def check(self):
        """Check every invariant of the state (``check_state``); raise AssertionError
        naming the first broken one."""
        cdef int code = check_state(&self.cb.c, &self.s)
        if code != 0:
            raise AssertionError(f"invariant {code} broken at turn {self.s.turn}: {CHECK_MESSAGES[code]}")

    # --- positions -----------------------------------------------------------
    def set_position(self, *, hands, faceup, deck_top, discard, tickets, ticket_deck_top,
                     routes, stations, trains, current, uint64_t seed, int turns_left=0):
        """Replace the state by a hand-made position (see ``ttrsim.Game.from_position``).

        Card arguments are card-type integers (WILD = 8); cards not placed anywhere form
        the rest of the deck, shuffled under `deck_top` (listed top first). Tickets not
        held form the ticket deck under `ticket_deck_top` (top first), but for long tickets
        on a board that deals them apart: those are out of the game. `turns_left` > 0: the
        final round is under way with that many turns left, `current`'s included.
        """
        cdef GameState* s = &self.s
        cdef const BoardC* b = &self.cb.c
        cdef int n = s.n_players, q, t, i, r, x
        counts = [0] * N_CARD_TYPES
        clear_state(b, s, n, seed)
        for q in range(n):
            for t in range(N_CARD_TYPES):
                s.p[q].hand[t] = hands[q][t]
                counts[t] += hands[q][t]
        for i in range(N_FACEUP):
            s.faceup[i] = faceup[i]
            if faceup[i] >= 0:
                counts[faceup[i]] += 1
        for t in range(N_CARD_TYPES):
            s.discard[t] = discard[t]
            counts[t] += discard[t]
        for t in deck_top:
            counts[t] += 1
        rest = []
        for t in range(N_CARD_TYPES):
            if counts[t] > b.deck_count[t]:
                raise ValueError(f"position uses {counts[t]} cards of type {t}, the deck has {b.deck_count[t]}")
            rest += [t] * (b.deck_count[t] - counts[t])
        for t in rest:
            s.deck[s.deck_n] = t
            s.deck_n += 1
        shuffle_cards(s, s.deck, s.deck_n)
        for t in reversed(list(deck_top)):
            s.deck[s.deck_n] = t
            s.deck_n += 1
        held = set()
        for q in range(n):
            for t in tickets[q]:
                if t in held or not 0 <= t < b.n_tickets:
                    raise ValueError(f"ticket {t} held twice or unknown")
                held.add(t)
                set_bit(s.p[q].tickets, t)
                s.p[q].n_tickets += 1
        others = [t for t in range(b.n_tickets) if t not in held and t not in ticket_deck_top]
        # On a board that deals long tickets apart (Europe), long tickets never join the
        # ticket deck; those not held (nor put on top on purpose) are out of the game.
        if b.deal_long > 0:
            for t in others:
                if b.ticket_long[t]:
                    set_bit(s.removed, t)
            others = [t for t in others if not b.ticket_long[t]]
        order = list(ticket_deck_top) + [others[i] for i in np.random.default_rng(seed).permutation(len(others))]
        for t in order:
            if t in held:
                raise ValueError(f"ticket {t} is both held and in the ticket deck")
            tdeck_push_bottom(s, t)
        for q in range(n):
            for r in routes[q]:
                if not 0 <= r < b.n_routes or s.route_owner[r] >= 0:
                    raise ValueError(f"route {r} unknown or owned twice")
                if not route_open(b, s, r, q):
                    raise ValueError(f"route {r} is closed by the double-route rule")
                s.current = q
                complete_claim(b, s, r, NULL)
            for x in stations[q]:
                if not 0 <= x < b.n_cities or s.city_station[x] >= 0 or s.p[q].stations_left <= 0:
                    raise ValueError(f"station on city {x} not possible")
                s.city_station[x] = q
                s.p[q].station_city[b.stations - s.p[q].stations_left] = x
                s.p[q].stations_left -= 1
            if trains is not None and trains[q] is not None:
                if trains[q] > s.p[q].trains:
                    raise ValueError(f"seat {q}: {trains[q]} trains left is more than its routes allow")
                s.p[q].trains = trains[q]
        if not 0 <= turns_left <= n:
            raise ValueError(f"turns_left {turns_left} outside 0..{n}")
        s.last_round = 1 if turns_left > 0 else 0
        s.turns_left = turns_left
        s.current = current
        s.phase = PH_TURN
        s.t_route = -1


def _restore(CompiledBoard cb, int n_players, bytes data):
    cdef GameCore g = GameCore(cb, n_players, 0, False)
    g.load_state_bytes(data)
    return g


cdef CompiledBoard copy_position(object game, GameState* s):
    """Copy the current position of `game` (a ``ttrsim.Game`` or its core) into s and
    return its compiled board: how every compiled tool reads a Python game."""
    core = getattr(game, "_core", game)
    if not isinstance(core, GameCore):
        raise ValueError(f"not a ttrsim game: {type(game).__name__}")
    memcpy(s, &(<GameCore>core).s, sizeof(GameState))
    return (<GameCore>core).cb
