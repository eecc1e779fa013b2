# The batch loop: plays many complete games in one call without the GIL and writes the
# results into numpy arrays (per game and seat) plus either event rows or counts
# aggregated in the core (summary mode). docs/tables.md describes what the runner builds
# from them. One function plays one game (play_game); play_recorded plays a single game
# with it, keeping the game's decisions (ttrsim.record replays them).
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint64_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memset

from ttrsim._structs cimport *
from ttrsim._engine cimport (EventSink, GameState, CompiledBoard, TUNNEL_PAID, TUNNEL_DECLINED,
                             action_a, action_kind, game_init, hand_total, score_game)
from ttrsim._rng cimport splitmix64
from ttrsim._bits cimport count_bits, get_bit, lowest_bit, set_bit
from ttrsim._policy cimport (Policy, PolicyRef, STEP_OK, STEP_ENGINE, Step, play_step, policy_ref,
                             ref_start, step_clock, step_error)

import numpy as np

# event row layouts (int32 columns)
CLAIM_COLS = ("game", "seat", "route", "turn", "needed")
TUNNEL_COLS = ("game", "seat", "route", "color", "revealed", "extra", "outcome")
STATION_COLS = ("game", "seat", "city", "turn", "borrowed")
TURN_BIN_WIDTH = TURN_BIN
OFFER_COLS = ("game", "seat", "ticket", "turn", "kept", "initial", "completed", "by_station")
SCORE_COLS = ("score", "route_points", "ticket_points", "tickets_kept", "tickets_completed",
              "tickets_failed", "tickets_by_station", "longest", "longest_bonus",
              "station_points", "stations_built", "attraction_points", "rank",
              "trains_left", "stations_left", "routes_claimed", "globetrotter")
# per-seat statistics of play (SeatStats), the points of the seat's completed tickets (from
# the final scoring: ticket_points is completed minus failed), then routes claimed by
# length 1..MAX_LEN-1
STAT_COLS = ("first_claim_turn", "largest_hand", "ticket_draws", "tickets_kept_drawn",
             "turns_taken", "ticket_points_completed")
N_LENGTHS = MAX_LEN
DEFAULT_MAX_TURNS = TURN_LIMIT     # the core's one turn limit (_structs.pxd)
# play_recorded's tunnel rows
RECORD_TUNNEL_COLS = ("decision", "route", "color", "n_revealed", "card0", "card1", "card2",
                      "extra", "outcome")

cdef enum:
    TURN_BIN = 10          # route_counts bins claims by turn // TURN_BIN
    N_TURN_BINS = 50       # the last bin holds every later turn
    W_CLAIM = 5
    W_TUNNEL = 7
    W_STATION = 5
    W_OFFER = 8
    W_DECISION = 2         # play_recorded: action, seat
    W_RECORD_TUNNEL = 9    # play_recorded: RECORD_TUNNEL_COLS
    N_SCORE = 17


ctypedef struct Rows:
    int32_t* data
    Py_ssize_t n
    Py_ssize_t cap
    int width


cdef int rows_init(Rows* r, int width) noexcept nogil:
    r.width = width
    r.n = 0
    r.cap = 256
    r.data = <int32_t*>malloc(r.cap * width * sizeof(int32_t))
    return 0 if r.data != NULL else -1


cdef int32_t* rows_add(Rows* r) noexcept nogil:
    cdef int32_t* grown
    if r.n == r.cap:
        grown = <int32_t*>realloc(r.data, 2 * r.cap * r.width * sizeof(int32_t))
        if grown == NULL:
            return NULL
        r.data = grown
        r.cap *= 2
    r.n += 1
    return r.data + (r.n - 1) * r.width


ctypedef struct GameLog:
    Rows decisions             # action, seat of every decision in order
    Rows tunnels               # RECORD_TUNNEL_COLS: what each tunnel attempt revealed


ctypedef struct SeatStats:
    int first_claim_turn       # game turn of the seat's first claim, -1 while none
    int largest_hand           # most train cards held at once
    int ticket_draws           # ticket draws during the game (not the setup deal)
    int tickets_kept_drawn     # tickets kept from those draws
    int turns_taken            # turns the seat started
    int by_length[MAX_LEN]     # routes claimed, by length


cdef void stats_start(const GameState* s, SeatStats* st) noexcept nogil:
    """Every seat's statistics at the deal (its dealt hand counts as held)."""
    cdef int seat
    memset(st, 0, MAX_PLAYERS * sizeof(SeatStats))
    for seat in range(s.n_players):
        st[seat].first_claim_turn = -1
        st[seat].largest_hand = hand_total(s, seat)


cdef inline void stats_after(const BoardC* b, const GameState* s, SeatStats* st, int seat,
                             int32_t act, int phase, int turn, int t_route) noexcept nogil:
    """Update the statistics of ``seat`` after its decision ``act`` was applied; ``phase``,
    ``turn`` and ``t_route`` (the tunnel being claimed) are the state's before it. Reads
    only the decision and the state."""
    cdef int kind = action_kind(act), route = -1, hand
    if phase == PH_TURN:
        st.turns_taken += 1
        if kind == ACT_CLAIM:
            route = action_a(act)            # claimed unless a tunnel now asks for more
    elif phase == PH_TUNNEL:
        route = t_route                      # claimed unless declined
    elif phase == PH_KEEP_TICKETS:
        st.ticket_draws += 1
        st.tickets_kept_drawn += count_bits(<uint64_t>action_a(act))   # the mask kept
    if route >= 0 and s.route_owner[route] == seat:
        if st.first_claim_turn < 0:
            st.first_claim_turn = turn
        st.by_length[b.route_len[route]] += 1
    # only a card drawn makes the hand larger than it was (a declined tunnel gives back
    # cards the hand already held)
    if phase == PH_SECOND_DRAW or (phase == PH_TURN and (kind == ACT_DRAW_FACEUP
                                                         or kind == ACT_DRAW_BLIND)):
        hand = hand_total(s, seat)
        if hand > st.largest_hand:
            st.largest_hand = hand


cdef int completed_points(const BoardC* b, const ScoreC* sc) noexcept nogil:
    """The points of the tickets a seat completed (its completed bitset, stations included)."""
    cdef int w, pts = 0
    cdef uint64_t bits
    for w in range(2):
        bits = sc.completed[w]
        while bits:
            pts += b.ticket_points[(w << 6) + lowest_bit(bits)]
            bits &= bits - 1
    return pts


ctypedef struct Recorder:
    Rows claims
    Rows tunnels
    Rows stations
    Rows offers
    GameLog* log               # play_recorded's log (NULL: a batch keeps none)
    SeatStats stats[MAX_PLAYERS]   # this game's statistics of play, per seat
    int64_t game
    int failed                 # out of memory


cdef void rec_claim(void* ctx, const GameState* s, int seat, int route) noexcept nogil:
    cdef Recorder* rec = <Recorder*>ctx
    cdef int32_t* row = rows_add(&rec.claims)
    if row == NULL:
        rec.failed = 1
        return
    row[0] = <int32_t>rec.game
    row[1] = seat
    row[2] = route
    row[3] = s.turn
    row[4] = 0


cdef void rec_tunnel(void* ctx, const GameState* s, int seat, int route, int color,
                     int revealed, int extra, int outcome) noexcept nogil:
    cdef Recorder* rec = <Recorder*>ctx
    cdef int i
    cdef int32_t* row = rows_add(&rec.tunnels)
    if row == NULL:
        rec.failed = 1
        return
    row[0] = <int32_t>rec.game
    row[1] = seat
    row[2] = route
    row[3] = color
    row[4] = revealed
    row[5] = extra
    row[6] = outcome
    if rec.log != NULL:
        row = rows_add(&rec.log.tunnels)
        if row == NULL:
            rec.failed = 1
            return
        row[0] = <int32_t>rec.log.decisions.n     # the decision being applied
        row[1] = route
        row[2] = color
        row[3] = revealed
        for i in range(3):
            row[4 + i] = s.revealed[i] if i < revealed else -1
        row[7] = extra
        row[8] = outcome


cdef void rec_station(void* ctx, const GameState* s, int seat, int city) noexcept nogil:
    cdef Recorder* rec = <Recorder*>ctx
    cdef int32_t* row = rows_add(&rec.stations)
    if row == NULL:
        rec.failed = 1
        return
    row[0] = <int32_t>rec.game
    row[1] = seat
    row[2] = city
    row[3] = s.turn
    row[4] = -1


cdef void rec_offer(void* ctx, const GameState* s, int seat, int ticket, int kept,
                    int initial) noexcept nogil:
    cdef Recorder* rec = <Recorder*>ctx
    cdef int32_t* row = rows_add(&rec.offers)
    if row == NULL:
        rec.failed = 1
        return
    row[0] = <int32_t>rec.game
    row[1] = seat
    row[2] = ticket
    row[3] = s.turn
    row[4] = kept
    row[5] = initial
    row[6] = 0
    row[7] = 0


cdef void needed_routes(const BoardC* b, const GameState* s, const ScoreC* sc, int seat,
                        uint64_t* needed) noexcept nogil:
    """Own routes of the seat whose loss from its final network (own routes plus the
    routes its stations borrow) breaks one of its completed tickets, as a route bitset.

    Such a route is a bridge of the network that separates the two ends of a completed
    ticket: in a depth-first tree, a tree edge into city x whose subtree no other edge
    leaves (low[x] == tin[x]), with exactly one end of the ticket in that subtree (the
    ticket's bit survives in the xor over the subtree of each city's ticket ends). One
    search per seat answers every claim row; edges are told apart by index, since an own
    and a borrowed route may join the same two cities."""
    cdef int16_t head[MAX_CITIES]
    cdef int16_t up[MAX_CITIES]          # arc that entered the city, -1 at a root
    cdef int16_t it[MAX_CITIES]          # next arc of the city to look at
    cdef int16_t stack[MAX_CITIES]
    cdef int16_t tin[MAX_CITIES]
    cdef int16_t low[MAX_CITIES]
    cdef uint64_t ends[MAX_CITIES][2]    # completed tickets with an end in the city
    cdef int16_t edge[MAX_ROUTES + MAX_STATIONS]       # own routes, then borrowed ones
    cdef int16_t nxt[2 * (MAX_ROUTES + MAX_STATIONS)]  # arcs 2e, 2e + 1 of edge e
    cdef int16_t to[2 * (MAX_ROUTES + MAX_STATIONS)]
    cdef uint64_t bits
    cdef int n = 0, n_own, timer = 0, depth, x, y, a, e, k, w, t, root
    needed[0] = 0
    needed[1] = 0
    if sc.completed[0] == 0 and sc.completed[1] == 0:
        return
    for w in range(2):
        bits = s.p[seat].routes[w]
        while bits:
            edge[n] = (w << 6) + lowest_bit(bits)
            bits &= bits - 1
            n += 1
    n_own = n
    for k in range(MAX_STATIONS):
        if sc.borrowed[k] >= 0:
            edge[n] = sc.borrowed[k]
            n += 1
    for x in range(b.n_cities):
        head[x] = -1
        tin[x] = -1
        ends[x][0] = 0
        ends[x][1] = 0
    for w in range(2):
        bits = sc.completed[w]
        while bits:
            k = lowest_bit(bits)
            bits &= bits - 1
            t = (w << 6) + k
            ends[b.ticket_a[t]][w] ^= (<uint64_t>1) << k
            ends[b.ticket_b[t]][w] ^= (<uint64_t>1) << k
    for e in range(n):
        x = b.route_a[edge[e]]
        y = b.route_b[edge[e]]
        to[2 * e] = y
        nxt[2 * e] = head[x]
        head[x] = 2 * e
        to[2 * e + 1] = x
        nxt[2 * e + 1] = head[y]
        head[y] = 2 * e + 1
    for root in range(b.n_cities):
        if tin[root] >= 0 or head[root] < 0:
            continue
        tin[root] = low[root] = timer
        timer += 1
        up[root] = -1
        it[root] = head[root]
        stack[0] = root
        depth = 1
        while depth:
            x = stack[depth - 1]
            a = it[x]
            if a >= 0:
                it[x] = nxt[a]
                if a == (up[x] ^ 1):
                    continue
                y = to[a]
                if tin[y] < 0:
                    tin[y] = low[y] = timer
                    timer += 1
                    up[y] = a
                    it[y] = head[y]
                    stack[depth] = y
                    depth += 1
                elif tin[y] < low[x]:
                    low[x] = tin[y]
            else:
                depth -= 1
                if depth == 0:
                    break
                y = stack[depth - 1]
                if low[x] < low[y]:
                    low[y] = low[x]
                ends[y][0] ^= ends[x][0]
                ends[y][1] ^= ends[x][1]
                e = up[x] >> 1
                if e < n_own and low[x] == tin[x] and (ends[x][0] | ends[x][1]):
                    set_bit(needed, edge[e])


cdef void finish_game_rows(const BoardC* b, const GameState* s, const ScoreC* sc,
                           Recorder* rec, Py_ssize_t c0, Py_ssize_t s0, Py_ssize_t o0) noexcept nogil:
    """Fill the columns known only at the end: needed routes, station borrowings,
    completed tickets."""
    cdef uint64_t needed[MAX_PLAYERS][2]
    cdef bint known[MAX_PLAYERS]
    cdef Py_ssize_t i
    cdef int32_t* row
    cdef int seat, k
    for seat in range(MAX_PLAYERS):
        known[seat] = False
    for i in range(c0, rec.claims.n):
        row = rec.claims.data + i * W_CLAIM
        seat = row[1]
        if not known[seat]:
            needed_routes(b, s, &sc[seat], seat, needed[seat])
            known[seat] = True
        row[4] = get_bit(needed[seat], row[2])
    for i in range(s0, rec.stations.n):
        row = rec.stations.data + i * W_STATION
        seat = row[1]
        for k in range(MAX_STATIONS):
            if s.p[seat].station_city[k] == row[2]:
                row[4] = sc[seat].borrowed[k]
    for i in range(o0, rec.offers.n):
        row = rec.offers.data + i * W_OFFER
        if row[4]:
            row[6] = get_bit(sc[row[1]].completed, row[2])
            row[7] = get_bit(sc[row[1]].by_station, row[2])


cdef void summarise_game(const BoardC* b, Recorder* rec, const int* slot_of_seat,
                         Py_ssize_t c0, Py_ssize_t t0, Py_ssize_t s0, Py_ssize_t o0,
                         int64_t* tsum, int64_t* rsum, int64_t* usum, int64_t* ssum) noexcept nogil:
    """Add this game's event rows to the summary counts, then drop the rows."""
    cdef Py_ssize_t i
    cdef int32_t* row
    cdef int bin, e
    cdef int64_t* cell
    for i in range(o0, rec.offers.n):
        row = rec.offers.data + i * W_OFFER
        cell = tsum + (slot_of_seat[row[1]] * b.n_tickets + row[2]) * 4
        cell[0] += 1
        cell[1] += row[4]
        cell[2] += row[6]
        cell[3] += row[7]
    for i in range(c0, rec.claims.n):
        row = rec.claims.data + i * W_CLAIM
        bin = row[3] // TURN_BIN
        if bin >= N_TURN_BINS:
            bin = N_TURN_BINS - 1
        cell = rsum + (row[2] * N_TURN_BINS + bin) * 2
        cell[0] += 1
        cell[1] += row[4]
    for i in range(t0, rec.tunnels.n):
        row = rec.tunnels.data + i * W_TUNNEL
        e = row[5] if row[5] < 4 else 3
        cell = usum + (row[2] * 4 + e) * 3
        cell[0] += 1
        cell[1] += row[6] == TUNNEL_PAID
        cell[2] += row[6] == TUNNEL_DECLINED
    for i in range(s0, rec.stations.n):
        row = rec.stations.data + i * W_STATION
        ssum[row[2] * 2] += 1
        ssum[row[2] * 2 + 1] += row[4] >= 0
    rec.claims.n = c0
    rec.tunnels.n = t0
    rec.stations.n = s0
    rec.offers.n = o0


cdef object rows_array(Rows* r):
    arr = np.empty((r.n, r.width), dtype=np.int32)
    cdef int32_t[:, ::1] view = arr
    cdef Py_ssize_t i, j
    for i in range(r.n):
        for j in range(r.width):
            view[i, j] = r.data[i * r.width + j]
    return arr


def game_seeds(uint64_t key, Py_ssize_t n, int64_t first=0):
    """Seeds of games first..first+n-1 of a run with root key `key`: game g gets output
    g of the SplitMix64 sequence started at `key`, so a game's seed depends only on the
    run's key and its index (not on batch size, batch order or workers)."""
    out = np.empty(n, dtype=np.uint64)
    cdef uint64_t[::1] v = out
    cdef uint64_t x = key + <uint64_t>first * 0x9E3779B97F4A7C15ULL
    cdef Py_ssize_t i
    for i in range(n):
        v[i] = splitmix64(&x)
    return out


cdef int recorder_init(Recorder* rec, EventSink* sink, GameLog* log) except -1:
    """Empty event rows (and `log`'s, when given) and the sink that fills them."""
    memset(rec, 0, sizeof(Recorder))
    rec.log = log
    if log != NULL:
        memset(log, 0, sizeof(GameLog))
    if (rows_init(&rec.claims, W_CLAIM) or rows_init(&rec.tunnels, W_TUNNEL)
            or rows_init(&rec.stations, W_STATION) or rows_init(&rec.offers, W_OFFER)
            or (log != NULL and (rows_init(&log.decisions, W_DECISION)
                                 or rows_init(&log.tunnels, W_RECORD_TUNNEL)))):
        recorder_free(rec)
        raise MemoryError()
    sink.ctx = rec
    sink.on_claim = rec_claim
    sink.on_tunnel = rec_tunnel
    sink.on_station = rec_station
    sink.on_offer = rec_offer
    return 0


cdef void recorder_free(Recorder* rec) noexcept:
    free(rec.claims.data)
    free(rec.tunnels.data)
    free(rec.stations.data)
    free(rec.offers.data)
    if rec.log != NULL:
        free(rec.log.decisions.data)
        free(rec.log.tunnels.data)
    memset(rec, 0, sizeof(Recorder))


cdef int play_game(const BoardC* b, int n_players, const PolicyRef* refs, uint64_t seed,
                   bint rotate, int max_turns, bint check, GameState* s, int* slot_of_seat,
                   EventSink* sink, Recorder* rec, int32_t* legal, Step* step,
                   int64_t* ns) noexcept nogil:
    """Play game `rec.game` of a batch from `seed` (slot k's policy is refs[k]; with
    `rotate` seat q is played by slot (q + game) % n_players, written to slot_of_seat),
    events to `sink`, each decision to rec.log when there is one, until the game is over
    or reaches `max_turns` (then s.phase is not PH_OVER: truncated). Returns STEP_OK, or
    the status of the decision that failed (`step` says which)."""
    cdef uint64_t x = seed
    cdef int seat, st, phase, turn, t_route
    cdef int32_t* row
    cdef int64_t t0 = 0
    if ns != NULL:
        t0 = step_clock()
    game_init(b, s, n_players, seed)
    if ns != NULL:
        ns[0] += step_clock() - t0
    for seat in range(n_players):
        slot_of_seat[seat] = (seat + rec.game) % n_players if rotate else seat
    for seat in range(n_players):
        ref_start(&refs[slot_of_seat[seat]], b, s, seat, splitmix64(&x))
    stats_start(s, rec.stats)
    while s.phase != PH_OVER and s.turn < max_turns:
        phase = s.phase
        turn = s.turn
        t_route = s.t_route
        st = play_step(&refs[slot_of_seat[s.current]], b, s, legal, sink, check, step, ns)
        if st != STEP_OK:
            return st
        stats_after(b, s, &rec.stats[step.seat], step.seat, step.act, phase, turn, t_route)
        if rec.log != NULL:
            row = rows_add(&rec.log.decisions)
            if row == NULL:
                rec.failed = 1
                return STEP_OK
            row[0] = step.act
            row[1] = step.seat
    return STEP_OK


cdef list policy_refs(list policies, int n_players, PolicyRef* refs, str caller):
    """Check the player count and the policies (one distinct compiled Policy per slot);
    fill refs. Returns the list, which keeps the policies alive while refs are used."""
    if not 2 <= n_players <= MAX_PLAYERS:
        raise ValueError(f"player count {n_players} outside 2..{MAX_PLAYERS}")
    if len(policies) != n_players or len(set(map(id, policies))) != n_players:
        raise ValueError(f"{caller} needs one distinct Policy instance per seat")
    for k in range(n_players):
        policy_ref(policies[k], &refs[k])
    return policies


def play_batch(CompiledBoard cb, int n_players, list policies, uint64_t[::1] seeds,
               int64_t first_game=0, bint rotate=False, bint summary=False,
               int max_turns=TURN_LIMIT, bint check=False, bint profile=False):
    """Play ``len(seeds)`` complete games, game i from ``seeds[i]``, in one call.

    ``policies`` holds one distinct ``Policy`` per slot; the policy of slot k plays seat k,
    or seat (k - game) mod n_players with ``rotate`` (seat s: slot (s + game) % n_players) (game = first_game + i, so every
    slot sits in every seat equally often over consecutive games). Returns a dict of
    numpy arrays: per game and seat the score parts (``SCORE_COLS``), the statistics of play
    (``stats``: ``STAT_COLS``; ``lengths``: routes claimed by length, index = length),
    ``slot``; per game
    ``turns``, ``all_passed``, ``truncated``; event rows (``claims``, ``tunnels``,
    ``stations``, ``offers``) or, with ``summary``, count arrays (``ticket_counts``,
    ``route_counts``, ``tunnel_counts``, ``station_counts``).
    With ``check``, every action is checked for legality and every state invariant after
    every action (for tests; AssertionError names the game, the turn and the broken
    invariant).
    With ``profile``, ``out["profile"]`` gives the seconds spent in rules (dealing, listing
    and applying actions, final scoring), in policy decisions and in collecting results.
    """
    cdef const BoardC* b = &cb.c
    cdef Py_ssize_t n_games = seeds.shape[0], g
    cdef int seat, status = STEP_OK
    cdef GameState s
    cdef ScoreC sc[MAX_PLAYERS]
    cdef int slot_of_seat[MAX_PLAYERS]
    cdef PolicyRef refs[MAX_PLAYERS]   # slot k's policy (`policies` keeps them alive)
    cdef Recorder rec
    cdef EventSink sink
    cdef Step step
    cdef Py_ssize_t c0, t0, s0, o0
    cdef int64_t t_a = 0, t_b = 0, ns_results = 0
    cdef int64_t ns[2]                 # rules, policy (profile)
    cdef int64_t* prof = ns if profile else NULL
    policy_refs(policies, n_players, refs, "play_batch")
    ns[0] = ns[1] = 0

    scores = np.zeros((n_games, n_players, N_SCORE), dtype=np.int16)
    slots = np.zeros((n_games, n_players), dtype=np.int8)
    turns = np.zeros(n_games, dtype=np.int32)
    flags = np.zeros((n_games, 2), dtype=np.uint8)
    legal = np.empty(MAX_ACTIONS, dtype=np.int32)
    stats = np.zeros((n_games, n_players, len(STAT_COLS)), dtype=np.int32)
    lengths = np.zeros((n_games, n_players, MAX_LEN), dtype=np.int16)
    cdef int16_t[:, :, ::1] v_scores = scores
    cdef int32_t[:, :, ::1] v_stats = stats
    cdef int16_t[:, :, ::1] v_lengths = lengths
    cdef int L
    cdef int8_t[:, ::1] v_slots = slots
    cdef int32_t[::1] v_turns = turns
    cdef uint8_t[:, ::1] v_flags = flags
    cdef int32_t[::1] v_legal = legal
    tsum_a = np.zeros((n_players, max(b.n_tickets, 1), 4), dtype=np.int64)
    rsum_a = np.zeros((max(b.n_routes, 1), N_TURN_BINS, 2), dtype=np.int64)
    usum_a = np.zeros((max(b.n_routes, 1), 4, 3), dtype=np.int64)
    ssum_a = np.zeros((max(b.n_cities, 1), 2), dtype=np.int64)
    cdef int64_t[:, :, ::1] tsum = tsum_a
    cdef int64_t[:, :, ::1] rsum = rsum_a
    cdef int64_t[:, :, ::1] usum = usum_a
    cdef int64_t[:, ::1] ssum = ssum_a

    recorder_init(&rec, &sink, NULL)
    try:
        with nogil:
            for g in range(n_games):
                rec.game = first_game + g
                c0 = rec.claims.n
                t0 = rec.tunnels.n
                s0 = rec.stations.n
                o0 = rec.offers.n
                status = play_game(b, n_players, refs, seeds[g], rotate, max_turns, check, &s,
                                   slot_of_seat, &sink, &rec, &v_legal[0], &step, prof)
                if status != STEP_OK or rec.failed:
                    break
                for seat in range(n_players):
                    v_slots[g, seat] = slot_of_seat[seat]
                v_flags[g, 1] = s.phase != PH_OVER
                if profile:
                    t_a = step_clock()
                score_game(b, &s, sc)
                if profile:               # final scoring is rules work
                    t_b = step_clock()
                    ns[0] += t_b - t_a
                    t_a = t_b
                finish_game_rows(b, &s, sc, &rec, c0, s0, o0)
                if summary:
                    summarise_game(b, &rec, slot_of_seat, c0, t0, s0, o0,
                                   &tsum[0, 0, 0], &rsum[0, 0, 0], &usum[0, 0, 0], &ssum[0, 0])
                v_turns[g] = s.turn
                v_flags[g, 0] = s.ended_by_passes
                for seat in range(n_players):
                    v_scores[g, seat, 0] = sc[seat].total
                    v_scores[g, seat, 1] = sc[seat].route_points
                    v_scores[g, seat, 2] = sc[seat].ticket_points
                    v_scores[g, seat, 3] = s.p[seat].n_tickets
                    v_scores[g, seat, 4] = sc[seat].tickets_completed
                    v_scores[g, seat, 5] = sc[seat].tickets_failed
                    v_scores[g, seat, 6] = sc[seat].tickets_by_station
                    v_scores[g, seat, 7] = sc[seat].longest
                    v_scores[g, seat, 8] = sc[seat].longest_bonus
                    v_scores[g, seat, 9] = sc[seat].station_points
                    v_scores[g, seat, 10] = sc[seat].stations_built
                    v_scores[g, seat, 11] = sc[seat].attraction_points
                    v_scores[g, seat, 12] = sc[seat].rank
                    v_scores[g, seat, 13] = s.p[seat].trains
                    v_scores[g, seat, 14] = s.p[seat].stations_left
                    v_scores[g, seat, 15] = s.p[seat].n_routes
                    v_scores[g, seat, 16] = sc[seat].globetrotter
                    v_stats[g, seat, 0] = rec.stats[seat].first_claim_turn
                    v_stats[g, seat, 1] = rec.stats[seat].largest_hand
                    v_stats[g, seat, 2] = rec.stats[seat].ticket_draws
                    v_stats[g, seat, 3] = rec.stats[seat].tickets_kept_drawn
                    v_stats[g, seat, 4] = rec.stats[seat].turns_taken
                    v_stats[g, seat, 5] = completed_points(b, &sc[seat])
                    for L in range(MAX_LEN):
                        v_lengths[g, seat, L] = rec.stats[seat].by_length[L]
                if profile:
                    ns_results += step_clock() - t_a
        if rec.failed:
            raise MemoryError("out of memory while recording events")
        if status != STEP_OK:
            seed_text = f" (seed {seeds[g]})" if status == STEP_ENGINE else ""
            raise step_error(status, &step, policies[slot_of_seat[step.seat]],
                             f"game {rec.game}{seed_text}, turn {s.turn}")
        out = dict(scores=scores, stats=stats, lengths=lengths, slot=slots, turns=turns,
                   all_passed=flags[:, 0].astype(bool), truncated=flags[:, 1].astype(bool))
        if profile:
            out["profile"] = {"rules": ns[0] * 1e-9, "policy": ns[1] * 1e-9,
                              "results": ns_results * 1e-9}
        if summary:
            out.update(ticket_counts=tsum_a, route_counts=rsum_a, tunnel_counts=usum_a,
                       station_counts=ssum_a)
        else:
            out.update(claims=rows_array(&rec.claims), tunnels=rows_array(&rec.tunnels),
                       stations=rows_array(&rec.stations), offers=rows_array(&rec.offers))
        return out
    finally:
        recorder_free(&rec)


def play_recorded(CompiledBoard cb, int n_players, list policies, uint64_t seed,
                  int64_t game=0, bint rotate=False, int max_turns=TURN_LIMIT):
    """Play one game from ``seed`` as ``play_batch`` plays game ``game`` of a batch (the
    same function: the same deal, the same seeds for the policies, the same seating with
    ``rotate``) and return its decisions: ``actions`` (int32 codes in order), ``seats``
    (who chose each), ``slot`` (policy slot of each seat), ``tunnels`` (one row per tunnel
    attempt, ``RECORD_TUNNEL_COLS``), ``truncated``. The policies are the batch's: one
    distinct fresh ``Policy`` per slot."""
    cdef GameState s
    cdef int slot_of_seat[MAX_PLAYERS]
    cdef PolicyRef refs[MAX_PLAYERS]
    cdef Recorder rec
    cdef GameLog log
    cdef EventSink sink
    cdef Step step
    cdef int status
    policy_refs(policies, n_players, refs, "play_recorded")
    legal = np.empty(MAX_ACTIONS, dtype=np.int32)
    cdef int32_t[::1] v_legal = legal
    recorder_init(&rec, &sink, &log)
    try:
        rec.game = game
        with nogil:
            status = play_game(&cb.c, n_players, refs, seed, rotate, max_turns, False, &s,
                               slot_of_seat, &sink, &rec, &v_legal[0], &step, NULL)
        if rec.failed:
            raise MemoryError("out of memory while recording a game")
        if status != STEP_OK:
            raise step_error(status, &step, policies[slot_of_seat[step.seat]],
                             f"game {game}, turn {s.turn}")
        decisions = rows_array(&log.decisions)
        return dict(actions=decisions[:, 0].copy(), seats=decisions[:, 1].astype(np.int8),
                    slot=np.array([slot_of_seat[k] for k in range(n_players)], dtype=np.int8),
                    tunnels=rows_array(&log.tunnels), truncated=s.phase != PH_OVER)
    finally:
        recorder_free(&rec)
