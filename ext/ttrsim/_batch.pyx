# The batch loop: plays many complete games in one call without the GIL and writes the
# results into numpy arrays (per game and seat) plus either event rows or counts
# aggregated in the core (summary mode). docs/tables.md describes what the runner builds
# from them.
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint64_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memset
from posix.time cimport CLOCK_MONOTONIC, clock_gettime, timespec

from ttrsim._structs cimport *
from ttrsim._engine cimport (EventSink, GameState, CompiledBoard, TUNNEL_PAID, TUNNEL_DECLINED,
                             apply_action, apply_legal, check_state, game_init, legal_actions,
                             sample_legal, score_game)
from ttrsim._rng cimport splitmix64
from ttrsim._bits cimport get_bit, lowest_bit, set_bit
from ttrsim._policy cimport PolicyRef, policy_ref, ref_choose, ref_start

import numpy as np

from ttrsim._engine import CHECK_MESSAGES
from ttrsim._policy import PolicyError

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
DEFAULT_MAX_TURNS = 10000

cdef enum:
    TURN_BIN = 10          # route_counts bins claims by turn // TURN_BIN
    N_TURN_BINS = 50       # the last bin holds every later turn
    W_CLAIM = 5
    W_TUNNEL = 7
    W_STATION = 5
    W_OFFER = 8
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


ctypedef struct Recorder:
    Rows claims
    Rows tunnels
    Rows stations
    Rows offers
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


cdef inline int64_t now_ns() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec * 1000000000 + ts.tv_nsec


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


def play_batch(CompiledBoard cb, int n_players, list policies, uint64_t[::1] seeds,
               int64_t first_game=0, bint rotate=False, bint summary=False,
               int max_turns=DEFAULT_MAX_TURNS, bint check=False, bint profile=False):
    """Play ``len(seeds)`` complete games, game i from ``seeds[i]``, in one call.

    ``policies`` holds one distinct ``Policy`` per slot; the policy of slot k plays seat k,
    or seat (k - game) mod n_players with ``rotate`` (seat s: slot (s + game) % n_players) (game = first_game + i, so every
    slot sits in every seat equally often over consecutive games). Returns a dict of
    numpy arrays: per game and seat the score parts (``SCORE_COLS``), ``slot``; per game
    ``turns``, ``all_passed``, ``truncated``; event rows (``claims``, ``tunnels``,
    ``stations``, ``offers``) or, with ``summary``, count arrays (``ticket_counts``,
    ``route_counts``, ``tunnel_counts``, ``station_counts``).
    With ``check``, every state invariant is checked after every action (for tests;
    AssertionError names the game, the turn and the broken invariant).
    With ``profile``, ``out["profile"]`` gives the seconds spent in rules (dealing, listing
    and applying actions, final scoring), in policy decisions and in collecting results.
    """
    cdef const BoardC* b = &cb.c
    cdef Py_ssize_t n_games = seeds.shape[0], g
    cdef int seat, slot, n_legal, k, status = 0, bad_seat = -1, bad_code = 0
    cdef int32_t act = 0
    cdef uint64_t x
    cdef GameState s
    cdef ScoreC sc[MAX_PLAYERS]
    cdef int slot_of_seat[MAX_PLAYERS]
    cdef Recorder rec
    cdef EventSink sink
    cdef Py_ssize_t c0, t0, s0, o0
    cdef int64_t t_a = 0, t_b = 0, ns_rules = 0, ns_policy = 0, ns_results = 0
    if not 2 <= n_players <= MAX_PLAYERS:
        raise ValueError(f"player count {n_players} outside 2..{MAX_PLAYERS}")
    if len(policies) != n_players or len(set(map(id, policies))) != n_players:
        raise ValueError("play_batch needs one distinct Policy instance per seat")
    cdef PolicyRef refs[MAX_PLAYERS]   # slot k's policy (`policies` keeps them alive)
    cdef bint checked[MAX_PLAYERS]      # its actions are known legal (not checked again)
    for k in range(n_players):
        policy_ref(policies[k], &refs[k])
        # the built-in planning policies check every action they return with is_legal,
        # and `random` draws its actions from the legal set (sample_legal, called
        # directly: refs[k].random_rng); with `check`, for tests, the engine checks them
        # all the same
        checked[k] = refs[k].returns_legal and not check

    scores = np.zeros((n_games, n_players, N_SCORE), dtype=np.int16)
    slots = np.zeros((n_games, n_players), dtype=np.int8)
    turns = np.zeros(n_games, dtype=np.int32)
    flags = np.zeros((n_games, 2), dtype=np.uint8)
    legal = np.empty(MAX_ACTIONS, dtype=np.int32)
    cdef int16_t[:, :, ::1] v_scores = scores
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

    memset(&rec, 0, sizeof(Recorder))
    if (rows_init(&rec.claims, W_CLAIM) or rows_init(&rec.tunnels, W_TUNNEL)
            or rows_init(&rec.stations, W_STATION) or rows_init(&rec.offers, W_OFFER)):
        raise MemoryError()
    sink.ctx = &rec
    sink.on_claim = rec_claim
    sink.on_tunnel = rec_tunnel
    sink.on_station = rec_station
    sink.on_offer = rec_offer
    try:
        with nogil:
            for g in range(n_games):
                rec.game = first_game + g
                c0 = rec.claims.n
                t0 = rec.tunnels.n
                s0 = rec.stations.n
                o0 = rec.offers.n
                if profile:
                    t_a = now_ns()
                game_init(b, &s, n_players, seeds[g])
                if profile:
                    t_b = now_ns()
                    ns_rules += t_b - t_a
                x = seeds[g]
                for seat in range(n_players):
                    slot_of_seat[seat] = (seat + rec.game) % n_players if rotate else seat
                    v_slots[g, seat] = slot_of_seat[seat]
                for seat in range(n_players):
                    ref_start(&refs[slot_of_seat[seat]], b, &s, seat, splitmix64(&x))
                while s.phase != PH_OVER:
                    if s.turn >= max_turns:
                        v_flags[g, 1] = 1
                        break
                    if profile:
                        t_a = now_ns()
                    seat = s.current
                    n_legal = (legal_actions(b, &s, &v_legal[0])
                               if refs[slot_of_seat[seat]].needs_legal else 0)
                    if profile:
                        t_b = now_ns()
                        ns_rules += t_b - t_a
                    if refs[slot_of_seat[seat]].random_rng != NULL:
                        act = sample_legal(b, &s, refs[slot_of_seat[seat]].random_rng)
                    else:
                        act = ref_choose(&refs[slot_of_seat[seat]], b, &s, seat,
                                         &v_legal[0], n_legal)
                    if profile:
                        t_a = now_ns()
                        ns_policy += t_a - t_b
                    if act == -1:
                        status = 1
                        bad_seat = seat
                        break
                    if checked[slot_of_seat[seat]]:
                        apply_legal(b, &s, act, &sink)
                    elif apply_action(b, &s, act, &sink) != 0:
                        status = 2
                        bad_seat = seat
                        break
                    if profile:
                        ns_rules += now_ns() - t_a
                    if check:
                        bad_code = check_state(b, &s)
                        if bad_code != 0:
                            status = 3
                            break
                if status != 0 or rec.failed:
                    break
                if profile:
                    t_a = now_ns()
                score_game(b, &s, sc)
                if profile:               # final scoring is rules work
                    t_b = now_ns()
                    ns_rules += t_b - t_a
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
                if profile:
                    ns_results += now_ns() - t_a
        if rec.failed:
            raise MemoryError("out of memory while recording events")
        if status == 3:
            raise AssertionError(f"game {rec.game} (seed {seeds[g]}), turn {s.turn}: invariant "
                                 f"{bad_code} broken: {CHECK_MESSAGES[bad_code]}")
        if status != 0:
            slot = slot_of_seat[bad_seat]
            pol = policies[slot]
            err = pol.take_error()
            where = f"policy {pol.spec!r} (seat {bad_seat}, game {rec.game}, turn {s.turn})"
            if status == 2:
                raise PolicyError(f"{where} chose action {act}, which is not legal")
            if isinstance(err, PolicyError):
                raise err
            raise PolicyError(f"{where} failed: {err!r}") from err
        out = dict(scores=scores, slot=slots, turns=turns,
                   all_passed=flags[:, 0].astype(bool), truncated=flags[:, 1].astype(bool))
        if profile:
            out["profile"] = {"rules": ns_rules * 1e-9, "policy": ns_policy * 1e-9,
                              "results": ns_results * 1e-9}
        if summary:
            out.update(ticket_counts=tsum_a, route_counts=rsum_a, tunnel_counts=usum_a,
                       station_counts=ssum_a)
        else:
            out.update(claims=rows_array(&rec.claims), tunnels=rows_array(&rec.tunnels),
                       stations=rows_array(&rec.stations), offers=rows_array(&rec.offers))
        return out
    finally:
        free(rec.claims.data)
        free(rec.tunnels.data)
        free(rec.stations.data)
        free(rec.offers.data)
