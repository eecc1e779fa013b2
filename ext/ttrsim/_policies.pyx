# Built-in compiled policies (ttrsim.policies registers them by name; docs/policies.md
# documents their behaviour and parameters).
#
# Every policy keeps its per-game state in C fields (one instance plays one seat),
# allocates nothing per decision, and reads only what its seat may see: its own hand and
# tickets, the face-up row, the board, public counts and the discards (RULES.md,
# "Hidden information"). Actions are built directly from that information and checked
# with is_legal; if one is ever not legal, a safe legal action is played instead and
# `fallbacks` counts it (tests require it to stay 0). Since the planning policies only
# return checked actions, the batch loop applies them without checking them again.
cimport cython
from libc.stdint cimport int32_t, uint32_t, uint64_t
from libc.math cimport INFINITY, exp
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcmp, memcpy, memset

from ttrsim._structs cimport *
from ttrsim._bits cimport clear_bit, count_bits, get_bit, lowest_bit, set_bit
from ttrsim._engine cimport (CompiledBoard, copy_position, action_a, action_c, action_kind, claimed_routes,
                             discard_total, hand_total, is_legal, legal_actions, make_action,
                             route_open, sample_legal)
from ttrsim._rng cimport rng_below, rng_next, rng_seed
from ttrsim._policy cimport Policy, PolicyRef, policy_ref, ref_choose, ref_start
from ttrsim._planning cimport *

import numpy as np

from ttrsim._policy import PolicyError


cdef class RandomPolicy(Policy):
    """``random``: a uniformly random legal action at every decision."""

    def __cinit__(self, *args, **kwargs):
        self.needs_legal = False        # sample_legal draws from the list without writing it
        self.returns_legal = True
        self.samples_legal = True       # the loops call sample_legal with self.rng directly

    cdef int32_t choose(self, const BoardC* b, const GameState* s, int seat,
                        const int32_t* legal, int n_legal) noexcept nogil:
        # the batch loop makes the same call itself for a RandomPolicy (play_batch)
        return sample_legal(b, s, &self.rng)


def start_policy(Policy policy, game, int seat, uint64_t seed):
    """Start `policy` (any compiled ``Policy``, or a ``PyPolicy``) on a game for `seat`
    with `seed`, in the current position of `game` (a ``ttrsim.Game`` or its core), as
    the batch loop starts every seat before the first decision (``ttrsim.seats``)."""
    cdef GameState s
    cdef CompiledBoard cb = copy_position(game, &s)
    if not 0 <= seat < s.n_players:
        raise ValueError(f"seat {seat} outside 0..{s.n_players - 1}")
    policy.start_game(&cb.c, &s, seat, seed)


def decide(Policy policy, game, uint64_t seed=0, bint start=True, bint via_ref=False):
    """The action code `policy` (any compiled ``Policy``, or a ``PyPolicy``) chooses in
    the current position of `game` (a ``ttrsim.Game`` or its core), for the seat to act.
    With `start` (default) the policy first starts a game for that seat with `seed`, as
    the batch loop does. A tool for tests and for debugging policies: the position is
    copied, the game is not changed. With `via_ref` the policy is called through a
    PolicyRef, as the compiled loops call it (tests compare the two ways)."""
    cdef GameState s
    cdef CompiledBoard cb = copy_position(game, &s)
    cdef int n, seat
    cdef int32_t act
    cdef PolicyRef ref
    buf = np.empty(MAX_ACTIONS, dtype=np.int32)
    cdef int32_t[::1] legal = buf
    n = legal_actions(&cb.c, &s, &legal[0])
    if n == 0:
        raise ValueError("the game is over")
    seat = s.current
    if via_ref:
        policy_ref(policy, &ref)
        if start:
            ref_start(&ref, &cb.c, &s, seat, seed)
        act = ref_choose(&ref, &cb.c, &s, seat, &legal[0], n)
    else:
        if start:
            policy.start_game(&cb.c, &s, seat, seed)
        act = policy.choose(&cb.c, &s, seat, &legal[0], n)
    if act == -1:
        err = policy.take_error()
        if isinstance(err, PolicyError):
            raise err
        raise PolicyError(f"policy {policy.spec!r} (seat {seat}, turn {s.turn}) failed: {err!r}") from err
    return act


cdef dict weights_dict(const PlanParams* p):
    return dict(tunnel_cost=p.tunnel_cost, ferry_cost=p.ferry_cost, station_cost=p.station_cost,
                claim_cost=p.claim_cost, points_weight=p.points_weight)


def default_plan_weights():
    """The planner's default weights (cost units, UNIT per train), as a dict: those every
    built-in policy plans with unless ``tune`` changes them (``greedy``: points_weight 0)."""
    cdef PlanParams p = default_plan_params()
    return weights_dict(&p)


cdef double GLOBE_SHARE = 1.0      # default PlanningPolicy.globe (docs/policies.md)
cdef double BOUND_MARGIN = 1e-6   # far above the rounding of a sum of ticket values

cdef enum:
    SETUP_MARGIN = 9          # 1/9 of the trains stay out of the initial tickets' budget
    MIN_ROUNDS_TICKETS = 5    # rounds the game should still last to draw more tickets
    SETUP_DEEP_BITS = 16      # the cache of third and fourth tickets: 2**16 entries (1.5 MiB)
    KEEP_MEMO_BITS = 17       # initial choices remembered: 2**17 slots (1 MiB) per memo
    KEEP_MEMO_PROBES = 16     # slots tried from a key's hash before giving up
    KEEP_MEMO_MAX_OFFER = 6   # offers of up to this many tickets (7 bits each) are remembered
    KEEP_MEMOS = 16           # memos kept in the process (the oldest is dropped)
    BOUND_POINTS = 100        # draw_value_bound counts values up to this many points


cdef extern from *:
    """
    static inline uint64_t ttrsim_load_relaxed(const uint64_t* p) {
        return __atomic_load_n(p, __ATOMIC_RELAXED);
    }
    static inline void ttrsim_store_relaxed(uint64_t* p, uint64_t v) {
        __atomic_store_n(p, v, __ATOMIC_RELAXED);
    }
    """
    uint64_t load_relaxed "ttrsim_load_relaxed" (const uint64_t* p) noexcept nogil
    void store_relaxed "ttrsim_store_relaxed" (uint64_t* p, uint64_t v) noexcept nogil


cdef class KeepMemo:
    """The initial ticket choices of one policy configuration on one board, by the
    tickets offered. On the empty board the choice depends on nothing else, and the same
    few tens of thousands of offers recur all through a long run, so the policies of
    that configuration in this process share one memo. A slot holds
    (key + 1) << 8 | kept: the offer in search order, 7 bits a ticket, with its size and
    the fewest to keep, and the kept tickets as bits in that order. Slots are read and
    written atomically, so threads may share a memo."""
    cdef uint64_t* slots

    def __cinit__(self):
        self.slots = <uint64_t*>calloc(1 << KEEP_MEMO_BITS, sizeof(uint64_t))
        if self.slots == NULL:
            raise MemoryError()

    def __dealloc__(self):
        free(self.slots)


cdef dict keep_memos = {}           # configuration -> KeepMemo (insertion order: oldest first)


def keep_memo_entries():
    """Initial ticket choices remembered in this process, over all memos (for tests)."""
    cdef KeepMemo memo
    cdef Py_ssize_t i, n = 0
    for memo in keep_memos.values():
        for i in range(1 << KEEP_MEMO_BITS):
            n += memo.slots[i] != 0
    return n


def clear_keep_memos():
    """Forget the remembered initial ticket choices (for tests: policies then choose
    from scratch)."""
    keep_memos.clear()


cdef class BoardTables:
    """A board's planning tables for one set of planner weights (BoardInfo: route
    weights, neighbours, links and the empty board's shortest weights), shared by every
    policy of this process that plans on that board with those weights: many instances
    (one per seat, per env of a VectorEnv) then keep one copy warm in the cache instead
    of one each. Read-only once made."""
    cdef BoardInfo* bi

    def __dealloc__(self):
        free(self.bi)


cdef dict board_tables = {}         # (board uid, planner weights) -> BoardTables (oldest first)


def board_tables_count():
    """How many BoardTables this process keeps (for tests)."""
    return len(board_tables)


cdef BoardTables shared_tables(const BoardC* b, const PlanParams* prm):
    """The BoardTables for board b and weights prm: made and remembered when new (the
    oldest is dropped beyond KEEP_MEMOS; policies using it keep it alive)."""
    cdef BoardTables tables
    cdef bytes weights = (<const char*>prm)[:sizeof(PlanParams)]
    cdef object uid = b.uid             # typed apart: Cython 3.3 hangs inferring the tuple
    key = (uid, weights)
    found = board_tables.get(key)
    if found is not None:
        return <BoardTables>found
    tables = BoardTables()
    tables.bi = <BoardInfo*>malloc(sizeof(BoardInfo))
    if tables.bi == NULL:
        raise MemoryError()
    board_info_init(tables.bi, b, prm)
    while len(board_tables) >= KEEP_MEMOS:
        del board_tables[next(iter(board_tables))]
    board_tables[key] = tables
    return tables


cdef bint empty_setup(const BoardC* b, const GameState* s, int seat) noexcept nogil:
    """The initial ticket choice on the empty board: no route claimed, no station
    built, the seat holding no ticket yet. (A position built by hand may differ.)"""
    cdef int q
    if s.phase != PH_SETUP_TICKETS or s.p[seat].n_tickets != 0:
        return False
    for q in range(s.n_players):
        if s.p[q].n_routes != 0 or s.p[q].stations_left != b.stations:
            return False
    return True


ctypedef struct MemoContext:
    # everything an initial ticket choice depends on besides the offer (zeroed first,
    # so its bytes, padding included, identify it)
    uint64_t board            # BoardC.uid
    double alpha
    double sigma
    double globe              # globe on a board with the Globetrotter, else 0
    double rounds             # rounds_left, hand size and budget at the choice
    int hand
    int budget
    PlanParams prm


ctypedef struct SetupPath:
    uint8_t state             # 0: not known yet, 1: path below, 2: unreachable
    uint32_t key              # setup_deep: the three tickets (0: empty)
    uint64_t path[2]          # the whole path (Workspace.paths); on the empty board, the
                              # routes it adds to the plan are those not planned already


cdef inline double per_turn(int points, int miss, bint near) noexcept nogil:
    """best_route's value of a route worth `points` with `miss` cards missing: points per
    turn needed, 10% more when it touches the own network (`near`: longest-trail bonus)."""
    cdef double v = points / (1.0 + (miss + 1) // 2)
    if near:
        v *= 1.1
    return v


cdef class PlanningPolicy(Policy):
    """Machinery shared by the planning policies (``tickets``, ``routes``, ``greedy``):
    the ticket plan, ticket choice, card draws, tunnels and the never-stall fallback.
    Not registered itself; subclasses implement ``play``. These policies build their
    actions from the state, so the engine need not list the legal actions for them."""
    cdef readonly int use_stations
    cdef readonly int use_tunnels
    cdef readonly double risk
    cdef readonly int draw_trains
    cdef public double alpha           # ticket choice: points a half-turn of the plan costs
    cdef public double sigma           # ticket choice: spread (turns) of the finish odds
    cdef public double globe           # share of the Globetrotter bonus one more completed
                                       # ticket is worth (boards with the bonus only)
    cdef public double draw_gain       # points a ticket draw must be expected to bring
    cdef public double draw_rate       # a draw is weighed against at most this many route
                                       # points per turn
    cdef public double draw_behind     # draw only with this many trains more than the
                                       # seat with the fewest (not setting the end's pace)
    cdef public double end_horizon     # share of the rounds left the points phase plans for
    cdef public double wild_value      # a face-up wild is taken over two blind cards
                                       # when they are expected to bring fewer useful ones
    cdef public long long fallbacks    # actions that had to be replaced (should stay 0)
    # per board
    cdef const BoardC* board
    cdef uint64_t board_key            # board.uid (the address alone may be reused)
    cdef PlanParams prm
    cdef const BoardInfo* bi            # the board's shared tables (self.tables)
    cdef BoardTables tables
    cdef int tunnel_spare              # extra cards a planned tunnel wants, from `risk`
    cdef int first_ge[MAX_DECK + 1]    # read_hand: first colour with at least v cards
    cdef int most                      # read_hand: most cards of one plain colour
    cdef int16_t by_points[MAX_ROUTES] # routes by points (and attractions), most first
    cdef double bound[MAX_ROUTES]      # score_bound of by_points[i]
    cdef int16_t len_end[MAX_ROUTES]   # first index after i in by_points of another length
    cdef int max_points                # points of the board's best-scoring route
    cdef int max_ticket                # points of the board's most valuable ticket
    # per game
    cdef int seat
    cdef Plan plan
    cdef int plan_valid
    cdef int seen_claims
    cdef int seen_tickets
    cdef int seen_stations
    cdef int seen_own_stations
    cdef Plan tmp_plan
    cdef int target                    # colour being collected (-1: none)
    cdef double route_rate             # route points per turn of the last best_route
    cdef int nd_turn                   # turn for which self.nd was computed
    cdef int rl_turn                   # turn of the cached rounds_left
    cdef double rl_value
    # per decision (scratch)
    cdef uint64_t decision             # counts calls of choose
    cdef uint64_t pool_decision        # decision for which self.pool was counted
    cdef uint64_t br_decision          # decision of the cached best_route result
    cdef int br_min_len
    cdef int br_reserve
    cdef int reserve                   # trains best_route leaves unspent (0 but in routes)
    cdef double br_horizon
    cdef bint br_longest
    cdef int32_t br_act
    cdef int br_col
    cdef double br_rate
    cdef Workspace ws
    cdef Needs nd
    cdef int pool[N_CARD_TYPES]        # unseen cards (see unseen)
    cdef int keep[N_CARD_TYPES]
    # ticket choice: plans and weights along the depth-first search over subsets
    cdef Plan kplan[MAX_PENDING + 1]
    cdef int32_t kw[MAX_PENDING + 1][MAX_ROUTES]
    cdef int korder[MAX_PENDING]
    cdef SetupPath* setup_paths    # per board: [(first ticket + 1) * n_tickets + ticket]
    cdef SetupPath* setup_deep     # per board: third and fourth tickets, hashed by the subset
    cdef int kfirst
    cdef int ksecond
    cdef int kthird
    cdef double kbest
    cdef int kmask
    cdef int k_hand
    cdef double k_rounds
    cdef bint k_empty                  # the choice is made on the empty board (setup)
    cdef KeepMemo memo                 # shared initial choices (None until the first)
    cdef MemoContext memo_ctx          # what the memo was fetched for
    # drawing more tickets: tickets returned, and the value of a draw (cached)
    cdef uint64_t out_tickets[2]
    cdef int dv_routes
    cdef int dv_tickets
    cdef double dv_value
    cdef double dv_scores[MAX_TICKETS]

    def __cinit__(self, *args, **kwargs):
        self.needs_legal = False
        self.returns_legal = True       # every action is checked with is_legal (choose)
        self.setup_paths = NULL
        self.setup_deep = NULL

    def __dealloc__(self):
        free(self.setup_paths)
        free(self.setup_deep)

    def __init__(self, stations=1, tunnels=1, risk=0.3, draw=12, spec=None):
        Policy.__init__(self, spec)
        self.use_stations = int(stations)
        self.use_tunnels = int(tunnels)
        self.risk = float(risk)
        self.draw_trains = int(draw)
        if not 0.0 <= self.risk <= 1.0:
            raise ValueError(f"risk must be within 0..1, got {risk}")
        self.alpha = 0.1
        self.sigma = 3.0
        self.globe = GLOBE_SHARE
        self.draw_gain = 0.0
        self.wild_value = 0.3
        self.draw_rate = INFINITY
        self.draw_behind = -INFINITY
        self.end_horizon = 1.0
        self.fallbacks = 0
        self.board = NULL
        self.prm = default_plan_params()
        self.prm.stations = self.use_stations
        self.prm.tunnels = self.use_tunnels

    @property
    def params(self):
        return dict(stations=self.use_stations, tunnels=self.use_tunnels, risk=self.risk,
                    draw=self.draw_trains)

    def tune(self, **weights):
        """Set internal weights for experiments: alpha, sigma, draw_gain, draw_rate,
        draw_behind, end_horizon, wild_value, and
        the planner's tunnel_cost, ferry_cost, station_cost, claim_cost, points_weight
        (cost units, UNIT per train). Returns the policy."""
        for key, value in weights.items():
            if key in ("alpha", "sigma", "draw_gain", "draw_rate", "draw_behind",
                       "end_horizon", "wild_value"):
                setattr(self, key, value)
            elif key == "tunnel_cost":
                self.prm.tunnel_cost = value
            elif key == "ferry_cost":
                self.prm.ferry_cost = value
            elif key == "station_cost":
                self.prm.station_cost = value
            elif key == "claim_cost":
                self.prm.claim_cost = value
            elif key == "points_weight":
                self.prm.points_weight = value
            else:
                raise ValueError(f"unknown weight {key!r}")
        self.board = NULL         # recompute the per-board weights
        return self

    @property
    def plan_weights(self):
        """The planner's weights this policy plans with (``tune`` changes them)."""
        return weights_dict(&self.prm)

    def current_plan(self):
        """The plan this policy follows, as its last decision left it: ``routes`` (the
        route indices it still means to claim), ``trains`` and ``claims`` they need,
        ``open_points`` (planned ticket points not yet joined), ``dropped`` (ticket
        indices given up) and ``short`` (cards it still has to collect for them)."""
        def bits(words):
            return [i for i in range(128) if (words[i >> 6] >> (i & 63)) & 1]
        return {"routes": bits(self.plan.routes), "trains": self.plan.trains,
                "claims": self.plan.claims,
                "open_points": self.plan.points - self.plan.done_points,
                "dropped": bits(self.plan.dropped), "short": self.nd.short}

    # --- game and board --------------------------------------------------------------
    @cython.final
    cdef void setup_board(self, const BoardC* b) noexcept nogil:
        """Per-board data, computed when the policy meets a board it has not just played."""
        cdef int c, spare, avg = 0
        cdef int pool[N_CARD_TYPES]
        cdef int i, j, r
        self.board = b
        self.board_key = b.uid
        with gil:
            try:
                self.tables = shared_tables(b, &self.prm)
                self.bi = self.tables.bi
            except MemoryError:
                self.tables = None
                self.bi = NULL          # choose() reports it
        self.max_points = 0
        self.max_ticket = 0
        for i in range(b.n_tickets):
            if b.ticket_points[i] > self.max_ticket:
                self.max_ticket = b.ticket_points[i]
        for i in range(MAX_LEN):
            if b.route_points[i] > self.max_points:
                self.max_points = b.route_points[i]
        free(self.setup_paths)
        self.setup_paths = <SetupPath*>calloc((b.n_tickets + 1) * b.n_tickets, sizeof(SetupPath))
        free(self.setup_deep)
        self.setup_deep = <SetupPath*>calloc(1 << SETUP_DEEP_BITS, sizeof(SetupPath))
        for i in range(b.n_routes):
            r = i
            j = i - 1
            while j >= 0 and self.score_bound(b, self.by_points[j]) < self.score_bound(b, r):
                self.by_points[j + 1] = self.by_points[j]
                j -= 1
            self.by_points[j + 1] = r
        for i in range(b.n_routes):
            self.bound[i] = self.score_bound(b, self.by_points[i])
        for i in range(b.n_routes - 1, -1, -1):
            if i + 1 < b.n_routes and (b.route_len[self.by_points[i + 1]]
                                       == b.route_len[self.by_points[i]]):
                self.len_end[i] = self.len_end[i + 1]
            else:
                self.len_end[i] = i + 1
        # Spare cards a tunnel wants: the fewest that keep the chance of an unpayable
        # reveal within `risk`, on a full deck of average colour counts.
        for c in range(b.n_colors):
            avg += b.deck_count[c]
        memset(pool, 0, sizeof(pool))
        pool[0] = avg // b.n_colors if b.n_colors > 0 else 0
        pool[1] = b.deck_total - pool[0] - b.deck_count[WILD]
        pool[WILD] = b.deck_count[WILD]
        spare = 0
        while spare < 3 and tunnel_fail_prob(pool, 0, spare) > self.risk:
            spare += 1
        self.tunnel_spare = spare

    cdef void start_game(self, const BoardC* b, const GameState* s, int seat,
                         uint64_t seed) noexcept nogil:
        rng_seed(&self.rng, seed)
        if b != self.board or b.uid != self.board_key:
            self.setup_board(b)
        self.seat = seat
        self.plan_valid = 0
        self.seen_claims = -1
        self.target = -1
        self.rl_turn = -1
        self.nd_turn = -1
        self.out_tickets[0] = self.out_tickets[1] = 0
        self.dv_routes = -10

    cdef int32_t choose(self, const BoardC* b, const GameState* s, int seat,
                        const int32_t* legal, int n_legal) noexcept nogil:
        cdef int32_t act
        if b != self.board:
            self.setup_board(b)
        if self.bi == NULL:
            with gil:
                self.error = MemoryError("no memory for the board's planning tables")
            return -1
        self.seat = seat
        self.decision += 1
        if s.phase == PH_SETUP_TICKETS or s.phase == PH_KEEP_TICKETS:
            act = self.choose_keep(b, s, seat)
        elif s.phase == PH_TUNNEL:
            act = self.choose_tunnel(b, s, seat)
        else:
            act = self.play(b, s, seat)
        if act >= 0 and is_legal(b, s, act):
            return act
        if act >= 0:
            self.fallbacks += 1
        return self.fallback(b, s, seat, legal, n_legal)

    @cython.final
    cdef const int* unseen(self, const BoardC* b, const GameState* s, int seat) noexcept nogil:
        """The cards the seat cannot see, by type (unknown_cards), counted at their first
        use in a decision: most decisions need no odds."""
        if self.pool_decision != self.decision:
            self.pool_decision = self.decision
            unknown_cards(b, s, seat, self.pool)
        return self.pool

    @cython.final
    cdef const int* tunnel_pool(self, const BoardC* b, const GameState* s, int seat,
                                int route) noexcept nogil:
        """claim_payment's `pool` for `route`: the unseen cards for a tunnel, NULL for
        other routes (their payment needs no odds)."""
        return self.unseen(b, s, seat) if b.route_tunnel[route] else NULL

    @cython.final
    cdef double rounds(self, const BoardC* b, const GameState* s) noexcept nogil:
        """rounds_left, computed once per turn."""
        if s.turn != self.rl_turn:
            self.rl_turn = s.turn
            self.rl_value = rounds_left(b, s)
        return self.rl_value

    cdef int32_t play(self, const BoardC* b, const GameState* s, int seat) noexcept nogil:
        """A turn (PH_TURN) or its second card (PH_SECOND_DRAW): the subclass's strategy.
        -1: no idea (the fallback decides)."""
        return -1

    # --- the plan ---------------------------------------------------------------------
    @cython.final
    cdef int budget(self, const BoardC* b, const GameState* s, int seat) noexcept nogil:
        """Trains a plan may use: all trains left, fewer when the game will end before the
        cards for them can be drawn."""
        cdef int trains = s.p[seat].trains
        cdef double cards
        if s.phase == PH_SETUP_TICKETS:
            return trains - trains // SETUP_MARGIN
        cards = hand_total(s, seat) + 1.6 * self.rounds(b, s)
        return trains if cards > trains else <int>cards

    @cython.final
    cdef void refresh_plan(self, const BoardC* b, const GameState* s, int seat) noexcept nogil:
        """Keep the plan current: drop the routes the seat has claimed; repair the plan
        when another player took a planned route (or a station went up where one was
        planned); plan from scratch when the seat's tickets or stations changed."""
        cdef int q, claims = 0, stations = 0, w, r, t
        cdef uint64_t bits, dbl
        cdef uint64_t owned[2]
        cdef bint full = (not self.plan_valid or s.p[seat].n_tickets != self.seen_tickets
                          or s.p[seat].stations_left != self.seen_own_stations)
        cdef bint repair = False
        for q in range(s.n_players):
            claims += s.p[q].n_routes
            stations += s.p[q].stations_left
        if not full and (claims != self.seen_claims or stations != self.seen_stations):
            repair = stations != self.seen_stations and (self.plan.borrow[0] or self.plan.borrow[1])
            claimed_routes(s, owned)
            for w in range(2):
                # only a planned route claimed, or whose other half was, needs a look
                bits = self.plan.routes[w] & owned[w]
                dbl = self.plan.routes[w] & b.double_routes[w] & ~bits
                while dbl:
                    r = w * 64 + lowest_bit(dbl)
                    dbl &= dbl - 1
                    if s.route_owner[b.route_partner[r]] >= 0:
                        bits |= (<uint64_t>1) << (r & 63)
                while bits:
                    r = w * 64 + lowest_bit(bits)
                    bits &= bits - 1
                    q = b.route_partner[r]
                    if s.route_owner[r] == seat:
                        clear_bit(self.plan.routes, r)
                        self.plan.trains -= b.route_len[r]
                        self.plan.claims -= 1
                    elif q >= 0 and s.route_owner[q] == seat:
                        # it took the other half of the double: the paths now use that
                        clear_bit(self.plan.routes, r)
                        self.plan.trains -= b.route_len[r]
                        self.plan.claims -= 1
                        self.swap_in_paths(b, r, q)
                    elif not route_open(b, s, r, seat):
                        if route_partner_open(b, s, r, seat) >= 0:
                            # another player took one half: plan on the other
                            clear_bit(self.plan.routes, r)
                            set_bit(self.plan.routes, q)
                            self.swap_in_paths(b, r, q)
                        else:
                            repair = True
            if self.plan.trains > s.p[seat].trains:
                full = True
        if repair and not full:
            self.tmp_plan = self.plan
            full = repair_plan(self.bi, &self.prm, s, seat, s.p[seat].tickets, &self.tmp_plan,
                               self.budget(b, s, seat), &self.plan, &self.ws) < 0
        if full:
            self.plan_afresh(b, s, seat)
            self.plan_valid = 1
        self.seen_claims = claims
        self.seen_tickets = s.p[seat].n_tickets
        self.seen_stations = stations
        self.seen_own_stations = s.p[seat].stations_left

    @cython.final
    cdef void plan_afresh(self, const BoardC* b, const GameState* s, int seat) noexcept nogil:
        """plan_tickets of the seat's tickets within budget(). While the board is still
        empty (no route claimed, no station built: the first turns), every path it would
        search is one the initial ticket choices have searched on the same board, so
        they are replayed from connect_setup's caches, in plan_tickets' own order (each
        ticket given up over the budget replans the rest): the same plan, fewer
        searches."""
        cdef int n = 0, i, t, d, worst, q
        cdef int budget = self.budget(b, s, seat)
        cdef Plan* out
        cdef bint empty = s.p[seat].trains == b.trains and s.p[seat].n_tickets <= MAX_PENDING
        for q in range(s.n_players):
            if s.p[q].n_routes != 0 or s.p[q].stations_left != b.stations:
                empty = False
        if not empty:
            plan_tickets(self.bi, &self.prm, s, seat, s.p[seat].tickets, budget, &self.plan,
                         &self.ws)
            return
        # no ticket is joined yet: all of them, longest first (plan_tickets' sort)
        for t in range(b.n_tickets):
            if get_bit(s.p[seat].tickets, t):
                self.ws.order[n] = t
                self.ws.on[n] = 1
                n += 1
        sort_longest_first(self.bi, self.ws.order, n)
        route_weights(self.bi, &self.prm, s, seat, self.kw[0])
        plan_clear(&self.kplan[0])
        while True:
            d = 0
            for i in range(n):
                self.ws.added[i] = 0
                if not self.ws.on[i]:
                    continue
                self.extend_kplan(b, s, seat, d, self.ws.order[i], True)
                self.ws.added[i] = self.kplan[d + 1].trains - self.kplan[d].trains
                d += 1
            out = &self.kplan[d]
            for i in range(n):
                if not self.ws.on[i]:
                    set_bit(out.dropped, self.ws.order[i])
                    out.points -= b.ticket_points[self.ws.order[i]]
            if out.trains <= budget:
                break
            worst = least_worth(b, &self.ws, n)
            if worst < 0:
                break
            self.ws.on[worst] = 0
        self.plan = out[0]

    @cython.final
    cdef void swap_in_paths(self, const BoardC* b, int r, int q) noexcept nogil:
        """The planned tickets' paths use route q instead of its other half r."""
        cdef int t
        for t in range(b.n_tickets):
            if get_bit(self.plan.tickets, t) and get_bit(self.ws.paths[t], r):
                clear_bit(self.ws.paths[t], r)
                set_bit(self.ws.paths[t], q)

    @cython.final
    cdef bint borrow_pending(self, const BoardC* b, const GameState* s, int seat,
                             int* city) noexcept nogil:
        """A planned borrowed route that still needs a station: sets *city to an end of it
        where one can be built."""
        cdef int w, r, x, y
        cdef uint64_t bits
        for w in range(2):
            bits = self.plan.borrow[w]
            while bits:
                r = w * 64 + lowest_bit(bits)
                bits &= bits - 1
                x = b.route_a[r]
                y = b.route_b[r]
                if s.city_station[x] == seat or s.city_station[y] == seat:
                    continue
                if s.city_station[x] < 0:
                    city[0] = x
                    return True
                if s.city_station[y] < 0:
                    city[0] = y
                    return True
        return False

    # --- tickets ------------------------------------------------------------------------
    cdef double keep_score(self, const BoardC* b, const Plan* plan, int mask) noexcept nogil:
        """Value of a plan for a choice of tickets: the points of the tickets already
        joined, plus those still to join weighted by the chance of finishing in time
        (2p - 1: +value if done, -value if not), minus the tickets given up, minus
        `alpha` points per half-turn the plan takes (a card per train, two per claim).
        p compares the turns the plan needs with the rounds left (logistic, scale
        `sigma` turns)."""
        cdef double p = self.finish_odds(plan.claims, plan.trains, self.k_hand, self.k_rounds)
        cdef double v = (plan.done_points + (2.0 * p - 1.0) * (plan.points - plan.done_points)
                         - self.alpha * (plan.trains + 2 * plan.claims))
        if b.globetrotter_bonus > 0:
            # the Globetrotter: each ticket expected to be completed brings a share of it
            v += self.globe_value(b) * p * (count_bits(plan.tickets[0])
                                            + count_bits(plan.tickets[1]))
        return v

    @cython.final
    cdef inline double globe_value(self, const BoardC* b) noexcept nogil:
        """Points one more completed ticket is worth through the Globetrotter (0 on
        boards without it)."""
        return self.globe * b.globetrotter_bonus

    @cython.final
    cdef int32_t choose_keep(self, const BoardC* b, const GameState* s, int seat) noexcept nogil:
        """Keep the subset of the offered tickets whose plan (with the tickets held) has
        the best keep_score. Subsets are searched depth first, adding the offered tickets
        longest first, so each one costs a single shortest path on top of its parent.
        Initial choices on the empty board are remembered (KeepMemo)."""
        cdef int n = s.n_pending[seat], i, j, tmp, budget, kept
        cdef int min_keep = b.initial_keep if s.phase == PH_SETUP_TICKETS else b.draw_keep
        cdef uint64_t key = 0, e
        cdef uint64_t* slot = NULL
        if min_keep > n:
            min_keep = n
        budget = self.budget(b, s, seat)
        self.k_hand = hand_total(s, seat)
        self.k_rounds = self.rounds(b, s)
        for i in range(n):
            self.korder[i] = i
        for i in range(1, n):
            tmp = self.korder[i]
            j = i - 1
            while j >= 0 and self.ticket_len(b, s.pending[seat][self.korder[j]]) \
                    < self.ticket_len(b, s.pending[seat][tmp]):
                self.korder[j + 1] = self.korder[j]
                j -= 1
            self.korder[j + 1] = tmp
        self.k_empty = empty_setup(b, s, seat)
        if self.k_empty and n <= KEEP_MEMO_MAX_OFFER:
            for i in range(n):
                key |= (<uint64_t>s.pending[seat][self.korder[i]]) << (7 * i)
            key |= (<uint64_t>n << (7 * KEEP_MEMO_MAX_OFFER)) | (<uint64_t>min_keep << (7 * KEEP_MEMO_MAX_OFFER + 3))
            slot = self.memo_slot(b, key + 1, budget)
            if slot != NULL:
                e = load_relaxed(slot)
                if e != 0:
                    self.kmask = 0
                    for i in range(n):
                        if (e >> i) & 1:
                            self.kmask |= 1 << self.korder[i]
                    return self.keep_action(s, seat, n)
        plan_tickets(self.bi, &self.prm, s, seat, s.p[seat].tickets, budget,
                     &self.kplan[0], &self.ws)
        memcpy(self.kw[0], self.ws.w, b.n_routes * sizeof(int32_t))
        self.kbest = -1e18
        self.kmask = (1 << n) - 1
        self.keep_search(b, s, seat, 0, 0, 0, n, min_keep, budget)
        if slot != NULL:
            kept = 0
            for i in range(n):
                if (self.kmask >> self.korder[i]) & 1:
                    kept |= 1 << i
            store_relaxed(slot, ((key + 1) << 8) | <uint64_t>kept)
        return self.keep_action(s, seat, n)

    @cython.final
    cdef int32_t keep_action(self, const GameState* s, int seat, int n) noexcept nogil:
        """The keep action for self.kmask; the tickets given back are remembered."""
        cdef int i
        for i in range(n):
            if not (self.kmask >> i) & 1:
                set_bit(self.out_tickets, s.pending[seat][i])
        self.plan_valid = 0
        return make_action(ACT_KEEP, self.kmask, 0, 0)

    @cython.final
    cdef uint64_t* memo_slot(self, const BoardC* b, uint64_t tag, int budget) noexcept nogil:
        """The memo slot holding `tag` (the key + 1), or an empty one where it goes; NULL
        when the slots tried are all taken (or no memo could be made)."""
        cdef MemoContext ctx
        cdef uint64_t mask = (<uint64_t>1 << KEEP_MEMO_BITS) - 1, h, e
        cdef int i
        memset(&ctx, 0, sizeof(ctx))
        ctx.board = b.uid
        ctx.alpha = self.alpha
        ctx.sigma = self.sigma
        ctx.globe = self.globe if b.globetrotter_bonus > 0 else 0.0
        ctx.rounds = self.k_rounds
        ctx.hand = self.k_hand
        ctx.budget = budget
        ctx.prm = self.prm
        if memcmp(&ctx, &self.memo_ctx, sizeof(ctx)) != 0:
            with gil:
                self.fetch_memo(&ctx)
        if self.memo is None:
            return NULL
        h = (tag * <uint64_t>0x9E3779B97F4A7C15) >> (64 - KEEP_MEMO_BITS)
        for i in range(KEEP_MEMO_PROBES):
            e = load_relaxed(&self.memo.slots[(h + i) & mask])
            if e == 0 or (e >> 8) == tag:
                return &self.memo.slots[(h + i) & mask]
        return NULL

    @cython.final
    cdef void fetch_memo(self, const MemoContext* ctx) noexcept:
        """Point self.memo at the process's memo for this class and context (made when
        new; the oldest is dropped beyond KEEP_MEMOS)."""
        key = (type(self), (<const char*>ctx)[:sizeof(MemoContext)])
        try:
            memo = keep_memos.get(key)
            if memo is None:
                memo = KeepMemo()
                while len(keep_memos) >= KEEP_MEMOS:
                    del keep_memos[next(iter(keep_memos))]
                keep_memos[key] = memo
            self.memo = memo
            self.memo_ctx = ctx[0]
        except MemoryError:
            self.memo = None

    @cython.final
    cdef inline int ticket_len(self, const BoardC* b, int t) noexcept nogil:
        return self.bi.dist0[b.ticket_a[t]][b.ticket_b[t]]

    @cython.final
    cdef void keep_search(self, const BoardC* b, const GameState* s, int seat, int depth,
                          int start, int mask, int n, int min_keep, int budget) noexcept nogil:
        """Score `mask` (planned in kplan[depth] over weights kw[depth]), then extend it by
        each later offered ticket. A ticket that would push the plan over `budget` is
        counted as given up."""
        cdef int k, slot, t
        cdef double v
        if count_bits(mask) >= min_keep:
            v = self.keep_score(b, &self.kplan[depth], mask)
            if v > self.kbest:
                self.kbest = v
                self.kmask = mask
        for k in range(start, n):
            slot = self.korder[k]
            t = s.pending[seat][slot]
            self.extend_kplan(b, s, seat, depth, t, self.k_empty)
            if self.kplan[depth + 1].trains > budget:
                self.kplan[depth + 1] = self.kplan[depth]
                memcpy(self.kw[depth + 1], self.kw[depth], b.n_routes * sizeof(int32_t))
                set_bit(self.kplan[depth + 1].dropped, t)
                self.kplan[depth + 1].points -= b.ticket_points[t]
            self.keep_search(b, s, seat, depth + 1, k + 1, mask | (1 << slot), n,
                             min_keep, budget)

    @cython.final
    cdef void extend_kplan(self, const BoardC* b, const GameState* s, int seat, int depth,
                           int t, bint empty) noexcept nogil:
        """kplan[depth + 1] / kw[depth + 1]: kplan[depth] with ticket t joined, through
        connect_setup's caches when the board is `empty` (first four tickets), else by
        connect_ticket."""
        self.kplan[depth + 1] = self.kplan[depth]
        memcpy(self.kw[depth + 1], self.kw[depth], b.n_routes * sizeof(int32_t))
        # The cached setup paths are not exact on boards of more than 64 tickets (on the
        # Mega Game the same seed played other games after other games of the batch:
        # tests/test_runner.py); there every path is searched afresh.
        if (depth <= 3 and empty and self.setup_paths != NULL and self.setup_deep != NULL
                and b.n_tickets <= 64):
            if depth == 0:
                self.kfirst = t
            elif depth == 1:
                self.ksecond = t
            elif depth == 2:
                self.kthird = t
            self.connect_setup(b, s, seat, depth, t)
        else:
            connect_ticket(self.bi, &self.prm, s, seat, t, self.kw[depth + 1],
                           &self.kplan[depth + 1], &self.ws)

    @cython.final
    cdef void connect_setup(self, const BoardC* b, const GameState* s, int seat, int depth,
                            int t) noexcept nogil:
        """connect_ticket(t) from kplan[depth] / kw[depth] into depth + 1 during the
        initial ticket choice, for the first four tickets of a subset. The board is then
        empty, so the path only depends on the tickets already planned (none, kfirst,
        kfirst and ksecond, or those and kthird): it is found once and then replayed from
        a cache (the third and fourth tickets' cache is a hash table where a new key
        replaces the old). Also used by plan_afresh while the board is still empty."""
        cdef int w, r, q
        cdef uint64_t bits
        cdef uint32_t key
        cdef Plan* out = &self.kplan[depth + 1]
        cdef int32_t* wt = self.kw[depth + 1]
        cdef SetupPath* e
        if depth <= 1:
            e = &self.setup_paths[(0 if depth == 0 else self.kfirst + 1) * b.n_tickets + t]
        else:
            # the depth, then the tickets of the subset in order, 7 bits each
            key = <uint32_t>(self.kfirst * MAX_TICKETS + self.ksecond)
            if depth == 3:
                key = key * MAX_TICKETS + self.kthird
            key = ((key * MAX_TICKETS + t) | (<uint32_t>depth << 28)) + 1
            e = &self.setup_deep[(key * 0x9E3779B1U) >> (32 - SETUP_DEEP_BITS)]
            if e.key != key:
                e.key = key
                e.state = 0
        if e.state == 0:
            connect_ticket(self.bi, &self.prm, s, seat, t, wt, out, &self.ws)
            e.state = 2 if get_bit(out.dropped, t) else 1
            e.path[0] = self.ws.paths[t][0]
            e.path[1] = self.ws.paths[t][1]
            return
        self.ws.paths[t][0] = e.path[0]
        self.ws.paths[t][1] = e.path[1]
        if e.state == 2:
            set_bit(out.dropped, t)
            out.points -= b.ticket_points[t]
            return
        set_bit(out.tickets, t)
        out.points += b.ticket_points[t]
        # the routes of the path not planned yet are those it adds (planned ones weigh
        # 0, their other halves can not be on it)
        if (e.path[0] & ~out.routes[0]) == 0 and (e.path[1] & ~out.routes[1]) == 0:
            out.done_points += b.ticket_points[t]
        for w in range(2):
            bits = e.path[w] & ~out.routes[w]
            out.routes[w] |= bits
            while bits:
                r = w * 64 + lowest_bit(bits)
                bits &= bits - 1
                out.cost += wt[r]
                out.trains += b.route_len[r]
                out.claims += 1
                wt[r] = 0
                q = b.route_partner[r]
                if q >= 0:
                    wt[q] = INF_COST

    @cython.final
    cdef double finish_odds(self, int claims, int trains, int hand, double rounds) noexcept nogil:
        """Chance of finishing a plan of `claims` routes and `trains` trains in `rounds`
        (logistic in the turns it needs: a claim each, a turn per two cards missing)."""
        cdef double need = claims + 0.5 * (trains - hand)
        if need < claims:
            need = claims
        return 1.0 / (1.0 + exp((need - rounds) / self.sigma))

    @cython.final
    cdef bint want_tickets(self, const BoardC* b, const GameState* s, int seat) noexcept nogil:
        """Draw more tickets (the plan being done): enough trains remain and the best of
        the tickets drawn is expected to bring `draw_gain` points more than spending the
        same turns on the routes worth most points per turn."""
        if s.tdeck_n <= 0 or s.last_round or s.p[seat].trains < self.draw_trains \
                or self.rounds(b, s) < MIN_ROUNDS_TICKETS:
            return False
        cdef int k, fewest = s.p[seat].trains
        if self.draw_behind > -INFINITY:          # an experiment weight: off by default
            for k in range(s.n_players):
                if k != seat and s.p[k].trains < fewest:
                    fewest = s.p[k].trains
            if s.p[seat].trains < fewest + self.draw_behind:
                return False
        # redone when the tickets changed or the own network grew by two routes (it
        # changes slowly; other claims matter little)
        if s.p[seat].n_routes >= self.dv_routes + 2 or s.p[seat].n_tickets != self.dv_tickets:
            self.dv_routes = s.p[seat].n_routes
            self.dv_tickets = s.p[seat].n_tickets
            self.dv_value = self.draw_value_estimate(b, s, seat, True)
        return self.dv_value >= self.draw_gain

    @cython.final
    cdef double draw_value_estimate(self, const BoardC* b, const GameState* s, int seat,
                                    bint bounded) noexcept nogil:
        """Expected gain of a ticket draw over playing for route points. Every ticket the
        seat may draw (drawable) is joined to the own network by the cheapest paths from
        its two cities (one multi-source Dijkstra) and valued at its points weighted by
        the odds of finishing in time, plus the points of the routes on the way, minus
        the points the turns it takes would bring at the best rate of route points per
        turn (rate). The result is the expected best of a draw, less one turn at that
        rate. With `bounded`, when draw_value_bound already shows that a draw does not
        pay (most turns), that bound is returned instead: the decision is the same,
        without the paths."""
        cdef int t, n = 0, a, z, tr, cl, pts, col, hand = hand_total(s, seat)
        cdef double rounds = self.rounds(b, s), v, p, rate, turns, bound
        cdef uint64_t sources = s.p[seat].cities
        if sources == 0:
            return 0.0
        self.best_route(b, s, seat, 1, rounds, False, &col)
        rate = min(self.route_rate, self.draw_rate)
        if bounded:
            bound = self.draw_value_bound(b, s, seat, rate, rounds, hand)
            if bound < self.draw_gain - BOUND_MARGIN:
                return bound
        route_weights(self.bi, &self.prm, s, seat, self.ws.base)
        shortest_from(self.bi, self.ws.base, sources, -1, self.ws.dist, self.ws.pred)
        own_components(b, s, seat, self.ws.comp)
        for t in range(b.n_tickets):
            if not self.drawable(b, s, seat, t):
                continue
            a = b.ticket_a[t]
            z = b.ticket_b[t]
            if self.ws.comp[a] == self.ws.comp[z] and (sources >> a) & 1:
                v = b.ticket_points[t] + self.globe_value(b)
            elif self.ws.dist[a] >= INF_COST or self.ws.dist[z] >= INF_COST:
                v = -b.ticket_points[t]
            else:
                tr = 0
                cl = 0
                pts = 0
                self.path_to_network(b, a, &tr, &cl, &pts)
                self.path_to_network(b, z, &tr, &cl, &pts)
                p = self.finish_odds(cl, tr, hand, rounds)
                turns = cl + 0.5 * tr
                v = (b.ticket_points[t] * (2.0 * p - 1.0) + pts - rate * turns
                     + self.globe_value(b) * p)
            self.dv_scores[n] = v
            n += 1
        return self.expected_best(b, n) - rate if n > 0 else -1e9

    @cython.final
    cdef double draw_value_bound(self, const BoardC* b, const GameState* s, int seat,
                                 double rate, double rounds, int hand) noexcept nogil:
        """An upper bound of draw_value_estimate from the board alone (no weights, no
        Dijkstra, no sorting); +inf when none is found.

        A path that joins a city to the own network ends at the first own city it meets,
        so every route on it counts: it has at least as many routes as the fewest from
        an own city on the whole board (hop, by breadth-first search), and at least one
        train per route. Each route adds its points less `rate` times its turns, at most
        F, the best over route lengths. When F <= 0, a ticket is worth at most
        P * (2p - 1) + F per route (p: finish_odds of that many routes and trains), and
        never less than the -P of an unreachable one; one whose cities are both own is
        worth at most P. Each value is then rounded up to whole points, where counting
        sorts them. The expected best is monotone in each value, so the bound holds."""
        cdef int t, n = 0, a, z, x, L, cl, level = 0, k, j, top = self.max_ticket, above
        cdef int hop[MAX_CITIES]
        cdef int count[2 * BOUND_POINTS + 1]  # values by whole points, from -top
        cdef double odds[2 * MAX_CITIES]      # finish_odds(cl, cl, ...) by cl (< 0: not yet)
        cdef uint64_t mine = s.p[seat].cities, seen = mine, frontier = mine, grown, bits
        cdef double F = -INFINITY, f, v, P, none, none_before = 1.0, e = 0.0
        if self.sigma <= 0 or top > BOUND_POINTS or self.globe_value(b) != 0:
            return INFINITY                   # (the bound leaves out the Globetrotter)
        for L in range(1, MAX_LEN):
            if b.route_points[L] > 0:
                f = b.route_points[L] - rate * (1.0 + 0.5 * L)
                if f > F:
                    F = f
        if F > 0:
            return INFINITY                   # a longer path could be worth more
        for x in range(b.n_cities):
            hop[x] = 2 * MAX_CITIES           # unreachable
        while frontier:
            grown = 0
            bits = frontier
            while bits:
                x = lowest_bit(bits)
                bits &= bits - 1
                hop[x] = level
                grown |= self.bi.nbr_bits[x]
            frontier = grown & ~seen
            seen |= grown
            level += 1
        for x in range(2 * MAX_CITIES):
            odds[x] = -1.0
        for x in range(2 * top + 1):
            count[x] = 0
        for t in range(b.n_tickets):
            if not self.drawable(b, s, seat, t):
                continue
            a = b.ticket_a[t]
            z = b.ticket_b[t]
            P = b.ticket_points[t]
            if (mine >> a) & 1 and (mine >> z) & 1:
                v = P
            else:
                cl = hop[a] + hop[z]
                if cl >= 2 * MAX_CITIES:
                    v = -P
                else:
                    if odds[cl] < 0:
                        odds[cl] = self.finish_odds(cl, cl, hand, rounds)
                    v = P * (2.0 * odds[cl] - 1.0) + cl * F
                    if v < -P:
                        v = -P
            x = <int>v                        # rounded up (toward zero, then up)
            if x < v:
                x += 1
            count[x + top] += 1
            n += 1
        if n == 0:
            return -1e9
        # The best of k drawn is among the `above` highest values unless all k come from
        # the n - above others: chance C(n - above, k) / C(n, k).
        k = b.draw_tickets if b.draw_tickets < n else n
        above = 0
        for x in range(2 * top, -1, -1):
            if count[x] == 0:
                continue
            above += count[x]
            none = 1.0
            for j in range(k):
                none *= (n - above - j) / <double>(n - j) if n - above - j > 0 else 0.0
            e += (x - top) * (none_before - none)
            none_before = none
        return e - rate

    @cython.final
    cdef inline bint drawable(self, const BoardC* b, const GameState* s, int seat,
                              int t) noexcept nogil:
        """Whether a ticket draw could bring ticket t: not the seat's own, not one it gave
        back, no long ticket when those are dealt apart (tickets other players hold
        cannot be told apart and count too)."""
        return not (get_bit(s.p[seat].tickets, t) or get_bit(self.out_tickets, t)
                    or (b.deal_long > 0 and b.ticket_long[t]))

    @cython.final
    cdef double expected_best(self, const BoardC* b, int n) noexcept nogil:
        """Expected best of the b.draw_tickets values drawn without replacement from
        dv_scores[0..n-1] (sorted in place): the i-th best is the best drawn with
        probability C(n-1-i, k-1) / C(n, k) (n > 0)."""
        cdef int i, j, k
        cdef double v, comb, e = 0.0, total = 0.0
        for i in range(1, n):
            v = self.dv_scores[i]
            j = i - 1
            while j >= 0 and self.dv_scores[j] < v:
                self.dv_scores[j + 1] = self.dv_scores[j]
                j -= 1
            self.dv_scores[j + 1] = v
        k = b.draw_tickets if b.draw_tickets < n else n
        for i in range(n - k + 1):
            comb = 1.0
            for j in range(k - 1):       # C(n-1-i, k-1), up to a common factor
                comb *= (n - 1 - i - j) / <double>(j + 1)
            e += comb * self.dv_scores[i]
            total += comb
        return e / total

    @cython.final
    cdef void path_to_network(self, const BoardC* b, int x, int* trains, int* claims,
                              int* points) noexcept nogil:
        """Add the trains, claims and route points of the path found from the own
        network to city x."""
        cdef int r
        while self.ws.pred[x] >= 0:
            r = self.ws.pred[x]
            if self.ws.base[r] > 0:
                trains[0] += b.route_len[r]
                claims[0] += 1
                points[0] += b.route_points[b.route_len[r]]
            x = b.route_a[r] + b.route_b[r] - x

    # --- cards --------------------------------------------------------------------------
    @cython.final
    cdef int32_t draw_card(self, const BoardC* b, const GameState* s, int seat,
                           const int* missing, bint second) noexcept nogil:
        """Draw toward `missing` (cards wanted by type): a face-up card of a wanted colour
        (the one closest to complete), else a face-up wild when two blind cards are
        unlikely to help (first card only), else blind, else any face-up card."""
        cdef int i, c, slot = -1, wild_slot = -1, best = 1000, any_slot = -1
        for i in range(N_FACEUP):
            c = s.faceup[i]
            if c < 0:
                continue
            if c == WILD:
                wild_slot = i
                continue
            if any_slot < 0:
                any_slot = i
            if missing[c] > 0 and missing[c] < best:
                best = missing[c]
                slot = i
        if slot >= 0:
            return make_action(ACT_DRAW_FACEUP, slot, 0, 0)
        if wild_slot >= 0 and not second:
            if missing[WILD] > 0 or \
                    2.0 * blind_useful_prob(self.unseen(b, s, seat), missing) < self.wild_value:
                return make_action(ACT_DRAW_FACEUP, wild_slot, 0, 0)
        if s.deck_n > 0 or discard_total(s) > 0:
            return make_action(ACT_DRAW_BLIND, 0, 0, 0)
        if any_slot >= 0:
            return make_action(ACT_DRAW_FACEUP, any_slot, 0, 0)
        if wild_slot >= 0 and not second:
            return make_action(ACT_DRAW_FACEUP, wild_slot, 0, 0)
        return -1

    @cython.final
    cdef void keep_without(self, const BoardC* b, int route) noexcept nogil:
        """self.keep = cards the plan wants, minus those meant for `route` itself."""
        cdef int t, c
        for t in range(N_CARD_TYPES):
            self.keep[t] = self.nd.want[t]
        if route < 0:
            return
        if not (get_bit(self.plan.routes, route) or (b.route_partner[route] >= 0 and
                                                     get_bit(self.plan.routes, b.route_partner[route]))):
            return
        c = self.nd.color[route]
        if 0 <= c < WILD:
            self.keep[c] -= b.route_len[route] - b.route_ferry[route]
        self.keep[WILD] -= b.route_ferry[route]

    @cython.final
    cdef void read_hand(self, const BoardC* b, const int16_t* hand) noexcept nogil:
        """Fill self.first_ge for route_short: first_ge[v] is the first plain colour with
        at least v cards in `hand`, for v up to the largest count (self.most), whose
        first colour is first_ge[self.most]."""
        cdef int c, v, top = 0
        self.first_ge[0] = 0
        for c in range(b.n_colors):
            for v in range(top + 1, hand[c] + 1):
                self.first_ge[v] = c
            if hand[c] > top:
                top = hand[c]
        self.most = top

    @cython.final
    cdef int route_short(self, const BoardC* b, const GameState* s, int seat, int route,
                         int* color) noexcept nogil:
        """Cards missing to pay `route` with its best colour (wilds counted); sets *color
        to the first colour that misses the fewest. Needs read_hand(hand) first."""
        cdef const int16_t* hand = &s.p[seat].hand[0]
        cdef int L = b.route_len[route], f = b.route_ferry[route], c = b.route_color[route]
        cdef int need, w_extra
        cdef int w_short = f - hand[WILD] if f > hand[WILD] else 0
        w_extra = hand[WILD] - f if hand[WILD] > f else 0
        need = L - f - w_extra
        if c == GRAY:
            # the fewest missing is need - most, else 0 from the first colour reaching need
            if need <= 0:
                color[0] = 0
                return w_short
            if need > self.most:
                color[0] = self.first_ge[self.most]
                return need - self.most + w_short
            color[0] = self.first_ge[need]
            return w_short
        color[0] = c
        return (need - hand[c] if need > hand[c] else 0) + w_short

    @cython.final
    cdef int32_t best_route(self, const BoardC* b, const GameState* s, int seat, int min_len,
                            double horizon, bint longest, int* target_color) noexcept nogil:
        """Route points without tickets. Considers the open routes of at least `min_len`
        the seat can pay within `horizon` rounds: returns a claim of the best affordable
        one if it is also the best target, else -1 with *target_color set to the colour to
        collect (-1: none). Best = most points per turn needed, or with `longest` the
        longest (fewest cards missing first). A decision that asks twice (the value of a
        ticket draw, then the turn) gets the first answer again."""
        cdef int32_t act
        if (self.br_decision == self.decision and min_len == self.br_min_len
                and horizon == self.br_horizon and longest == self.br_longest
                and self.reserve == self.br_reserve):
            target_color[0] = self.br_col
            self.route_rate = self.br_rate
            return self.br_act
        act = self.scan_routes(b, s, seat, min_len, horizon, longest, target_color)
        self.br_decision = self.decision
        self.br_min_len = min_len
        self.br_reserve = self.reserve
        self.br_horizon = horizon
        self.br_longest = longest
        self.br_act = act
        self.br_col = target_color[0]
        self.br_rate = self.route_rate
        return act

    @cython.final
    cdef int32_t scan_routes(self, const BoardC* b, const GameState* s, int seat, int min_len,
                             double horizon, bint longest, int* target_color) noexcept nogil:
        """best_route's search over the routes."""
        cdef int i, r, L, miss, col, best_r = -1, best_col = -1
        cdef double v, best_v = -1.0
        cdef double top[MAX_LEN]      # the best route_score a route of each length can have
        cdef int32_t act = -1, a
        cdef uint64_t mine = s.p[seat].cities
        target_color[0] = -1
        self.route_rate = 0.0
        self.read_hand(b, s.p[seat].hand)
        if not longest:
            # a route of length L misses at least L - most - wilds cards (route_short), and
            # per_turn grows with the points and shrinks with the cards missing, also in
            # floating point: a route whose top is no better than the best so far is
            # skipped unread, as it would lose anyway
            for L in range(1, MAX_LEN):
                miss = L - self.most - s.p[seat].hand[WILD]
                top[L] = per_turn(b.route_points[L] + 2 * b.attraction_points,
                                  miss if miss > 0 else 0, True)
        i = 0
        while i < b.n_routes:
            r = self.by_points[i]
            if not longest and self.bound[i] <= best_v:
                break                 # routes come by score bound: none left can win
            L = b.route_len[r]
            if (not longest and top[L] <= best_v) or L < min_len \
                    or L > s.p[seat].trains - self.reserve:
                # the routes up to len_end[i] have the same length: all skipped alike
                i = self.len_end[i]
                continue
            i += 1
            if s.route_owner[r] >= 0 or (b.route_tunnel[r] and not self.use_tunnels):
                continue
            if not route_open(b, s, r, seat):
                continue
            miss = self.route_short(b, s, seat, r, &col)
            v = self.route_score(b, r, miss, mine, longest)
            if v <= best_v or 1 + (miss + 1) // 2 > horizon + 1:
                continue
            if miss == 0:
                if claim_payment(b, s, seat, r, NULL, 1.0 if s.last_round else self.risk,
                                 self.tunnel_pool(b, s, seat, r), &a) < 0:
                    # a tunnel too risky for now: one more card
                    miss = 1
                    v = self.route_score(b, r, miss, mine, longest)
                    if v <= best_v or 2 > horizon + 1:
                        continue
            best_v = v
            best_r = r
            best_col = col
            act = a if miss == 0 else -1
        if not longest and best_r >= 0:
            self.route_rate = best_v
        if best_r < 0:
            return -1
        if act >= 0:
            return act
        target_color[0] = best_col
        return -1

    @cython.final
    cdef inline double score_bound(self, const BoardC* b, int r) noexcept nogil:
        """Upper bound of route_score(r) (no card missing, both ends new attractions)."""
        return 1.1 * (b.route_points[b.route_len[r]] + 2 * b.attraction_points)

    @cython.final
    cdef inline double route_score(self, const BoardC* b, int r, int miss, uint64_t mine,
                                   bint longest) noexcept nogil:
        """best_route's value of route r with `miss` cards missing: route points (and new
        tourist attractions) per turn needed, 10% more when it touches the own network
        (longest-trail bonus); with `longest`, its length first."""
        cdef int L = b.route_len[r]
        if longest:
            return L * 100.0 - miss
        return per_turn(b.route_points[L] + b.attraction_points * count_bits(
            b.attractions & ~mine & (((<uint64_t>1) << b.route_a[r])
                                     | ((<uint64_t>1) << b.route_b[r]))), miss,
            (mine >> b.route_a[r]) & 1 or (mine >> b.route_b[r]) & 1)

    @cython.final
    cdef int32_t final_claim(self, const BoardC* b, const GameState* s, int seat) noexcept nogil:
        """The seat's last turn: the claim worth most now, counting the route's points,
        new tourist attractions and the tickets it completes (-value becomes +value).
        -1 when it cannot claim anything."""
        cdef int r, i, w, n = 0, cost, x, y
        cdef int most = hand_most(b, s.p[seat].hand)
        cdef int32_t a, act = -1
        cdef double v, best = -1.0
        cdef uint64_t mine = s.p[seat].cities
        cdef uint64_t cand[2]
        cdef int8_t ca[MAX_TICKETS]           # the components of the open tickets' ends
        cdef int8_t cb[MAX_TICKETS]
        cdef int tv[MAX_TICKETS]              # and what joining them gains
        own_components(b, s, seat, self.ws.comp)
        for i in range(b.n_tickets):
            if get_bit(s.p[seat].tickets, i) and \
                    self.ws.comp[b.ticket_a[i]] != self.ws.comp[b.ticket_b[i]]:
                ca[n] = self.ws.comp[b.ticket_a[i]]
                cb[n] = self.ws.comp[b.ticket_b[i]]
                tv[n] = 2 * b.ticket_points[i] + <int>(self.globe_value(b) + 0.5)
                n += 1
        # the unclaimed routes within the trains left, in index order
        claimed_routes(s, cand)
        for w in range(2):
            cand[w] = b.all_routes[w] & ~cand[w] & ~longer_than(self.bi, s.p[seat].trains, w)
        for w in range(2):
            while cand[w]:
                r = (w << 6) + lowest_bit(cand[w])
                cand[w] &= cand[w] - 1
                # claim_payment refuses closed routes too: skip them before valuing them
                if (b.route_tunnel[r] and not self.use_tunnels) \
                        or not may_afford(b, s.p[seat].hand, most, r) \
                        or not route_open(b, s, r, seat):
                    continue
                x = self.ws.comp[b.route_a[r]]
                y = self.ws.comp[b.route_b[r]]
                v = b.route_points[b.route_len[r]] + b.attraction_points * count_bits(
                    b.attractions & ~mine & (((<uint64_t>1) << b.route_a[r])
                                             | ((<uint64_t>1) << b.route_b[r])))
                for i in range(n):
                    if (ca[i] == x and cb[i] == y) or (ca[i] == y and cb[i] == x):
                        v += tv[i]
                # a payment costs at least one per card: skip the routes that cannot win
                if v - 0.01 * b.route_len[r] <= best:
                    continue
                cost = claim_payment(b, s, seat, r, NULL, 1.0, self.tunnel_pool(b, s, seat, r),
                                     &a)
                if cost < 0:
                    continue
                v -= 0.01 * cost          # same value: the cheaper payment
                if v > best:
                    best = v
                    act = a
        return act

    @cython.final
    cdef int32_t claim_planned(self, const BoardC* b, const GameState* s,
                               int seat) noexcept nogil:
        """A claim of a planned route the seat can pay (-1: none): longest first, single
        routes before doubles, then the cheaper payment (none longer than its most cards
        of a colour plus wilds is tried: see may_afford). Needs refresh_plan first."""
        cdef int w, r, q, cand, i, cost, pri, best_pri = -1000000
        cdef int most = hand_most(b, s.p[seat].hand)
        cdef int cap = most + s.p[seat].hand[WILD]
        cdef int32_t a, act = -1
        cdef uint64_t bits
        for w in range(2):
            bits = self.plan.routes[w] & ~longer_than(self.bi, cap, w)
            while bits:
                r = w * 64 + lowest_bit(bits)
                bits &= bits - 1
                q = route_partner_open(b, s, r, seat)
                for i in range(2):
                    cand = r if i == 0 else q
                    if cand < 0 or not may_afford(b, s.p[seat].hand, most, cand):
                        continue
                    self.keep_without(b, cand)
                    cost = claim_payment(b, s, seat, cand, self.keep, self.risk,
                                          self.tunnel_pool(b, s, seat, cand), &a)
                    if cost < 0:
                        continue
                    pri = 16 * b.route_len[cand] + (8 if q < 0 else 0) - cost
                    if pri > best_pri:
                        best_pri = pri
                        act = a
        return act

    @cython.final
    cdef int32_t plan_second_card(self, const BoardC* b, const GameState* s,
                                  int seat) noexcept nogil:
        """The second card of a draw toward the plan's colours, when nothing changed since
        the first but that card (the needs of this turn, self.nd): count it, then draw."""
        cdef int c = s.first_card
        if 0 <= c < WILD and self.nd.missing[c] > 0:
            self.nd.missing[c] -= 1
        return self.draw_card(b, s, seat, self.nd.missing, True)

    @cython.final
    cdef int32_t collect(self, const BoardC* b, const GameState* s, int seat,
                         int color) noexcept nogil:
        """Draw toward one colour (and wilds); the second card of the turn follows the
        same colour (self.target)."""
        cdef int miss[N_CARD_TYPES]
        memset(miss, 0, sizeof(miss))
        self.target = color
        if 0 <= color < WILD:
            miss[color] = 1
        return self.draw_card(b, s, seat, miss, s.phase == PH_SECOND_DRAW)

    # --- tunnels and the fallback --------------------------------------------------------
    @cython.final
    cdef int32_t choose_tunnel(self, const BoardC* b, const GameState* s, int seat) noexcept nogil:
        """Pay the extra cards when the hand can, with as few wilds as possible."""
        cdef const int16_t* hand = &s.p[seat].hand[0]
        cdef int k
        if s.t_color == WILD:
            if hand[WILD] >= s.t_extra:
                return make_action(ACT_TUNNEL_PAY, 0, 0, s.t_extra)
        else:
            k = s.t_extra - hand[s.t_color]
            if k < 0:
                k = 0
            if k <= hand[WILD]:
                return make_action(ACT_TUNNEL_PAY, 0, 0, k)
        return make_action(ACT_TUNNEL_DECLINE, 0, 0, 0)

    @cython.final
    cdef int32_t fallback(self, const BoardC* b, const GameState* s, int seat,
                          const int32_t* legal, int n_legal) noexcept nogil:
        """Never stall: draw a card if possible, else claim the longest route the hand
        pays, else build a station, else draw tickets, else pass (or, when that is not
        legal, attempt a tunnel sure to fail). Built from the state and checked with
        is_legal (the engine gives no list: needs_legal is False), like every action
        choose returns: the batch loop does not check them again (-1 and an error if no
        legal action is found, which the rules never allow)."""
        cdef int i, r, x, best_len = 0
        cdef int32_t a, best = -1
        if s.phase == PH_SETUP_TICKETS or s.phase == PH_KEEP_TICKETS:
            a = make_action(ACT_KEEP, (1 << s.n_pending[seat]) - 1, 0, 0)
            if is_legal(b, s, a):
                return a
        elif s.phase == PH_TUNNEL:
            a = make_action(ACT_TUNNEL_DECLINE, 0, 0, 0)
            if is_legal(b, s, a):
                return a
        else:
            a = make_action(ACT_DRAW_BLIND, 0, 0, 0)
            if is_legal(b, s, a):
                return a
            for i in range(N_FACEUP):
                a = make_action(ACT_DRAW_FACEUP, i, 0, 0)
                if s.faceup[i] >= 0 and s.faceup[i] != WILD and is_legal(b, s, a):
                    return a
            for i in range(N_FACEUP):
                a = make_action(ACT_DRAW_FACEUP, i, 0, 0)
                if s.faceup[i] == WILD and is_legal(b, s, a):
                    return a
            # a tunnel sure to ask for more than the hand holds would only be declined
            # again and again: kept as the very last resort
            for r in range(b.n_routes):
                if b.route_len[r] > best_len and \
                        claim_payment(b, s, seat, r, NULL, 1.0,
                                      self.tunnel_pool(b, s, seat, r), &a) >= 0:
                    best_len = b.route_len[r]
                    best = a
            if best >= 0 and is_legal(b, s, best):
                return best
            for x in range(b.n_cities):
                if station_payment(b, s, seat, x, NULL, &a) >= 0 and is_legal(b, s, a):
                    return a
            a = make_action(ACT_DRAW_TICKETS, 0, 0, 0)
            if is_legal(b, s, a):
                return a
            for r in range(b.n_routes):
                # (ACCEPT_ANY asks for no odds: no unseen cards needed)
                if claim_payment(b, s, seat, r, NULL, ACCEPT_ANY, NULL, &a) >= 0 \
                        and is_legal(b, s, a):
                    return a
        if n_legal > 0:
            return legal[0]
        a = make_action(ACT_PASS, 0, 0, 0)
        if is_legal(b, s, a):
            return a
        with gil:
            self.error = PolicyError("its fallback found no legal action")
        return -1


cdef class TicketsPolicy(PlanningPolicy):
    """``tickets``: plans the cheapest way to connect its tickets and follows the plan.

    Each turn: claim a planned route it can pay (longest first, single routes before
    doubles); build a station for a planned route another player took; when the plan is
    done, draw more tickets if a draw is expected to pay, else claim the routes worth the
    most points per turn; otherwise draw the colours the plan lacks. When the plan can no
    longer be finished before the end, it plays for route points; its last turn takes
    the claim worth most. The plan is made again when its tickets or stations change and
    repaired when another player takes a planned route.
    """

    cdef int32_t play(self, const BoardC* b, const GameState* s, int seat) noexcept nogil:
        if s.phase == PH_SECOND_DRAW and self.nd_turn == s.turn:
            return self.plan_second_card(b, s, seat)
        self.refresh_plan(b, s, seat)
        plan_needs(b, s, seat, &self.plan, self.tunnel_spare, &self.nd)
        self.nd_turn = s.turn
        if s.phase == PH_SECOND_DRAW:
            return self.draw_card(b, s, seat, self.nd.missing, True)
        return self.turn(b, s, seat)

    @cython.final
    cdef int32_t turn(self, const BoardC* b, const GameState* s, int seat) noexcept nogil:
        cdef int city, col, cost
        cdef int32_t a, act = -1
        cdef double horizon = self.rounds(b, s)
        cdef bint done = self.plan.routes[0] == 0 and self.plan.routes[1] == 0
        cdef bint borrow = self.borrow_pending(b, s, seat, &city)
        if s.last_round:
            act = self.final_claim(b, s, seat)
            if act >= 0:
                return act
            return self.draw_card(b, s, seat, self.nd.missing, False)
        # the plan cannot be finished before the end: points now instead
        if not done and self.plan.claims + (self.nd.short + 1) // 2 > horizon + 1:
            act = self.best_route(b, s, seat, 1, horizon * self.end_horizon, False, &col)
            if act >= 0:
                return act
            if col >= 0:
                return self.collect(b, s, seat, col)
        # 1. a planned route it can pay
        act = self.claim_planned(b, s, seat)
        if act >= 0:
            return act
        # 2. a station to borrow a planned route another player took: built at once if
        #    it costs cards the plan does not need, else once the routes are done
        if borrow:
            self.keep_without(b, -1)
            cost = station_payment(b, s, seat, city, self.keep, &a)
            if cost >= 0 and (done or horizon < 3
                              or cost <= b.stations - s.p[seat].stations_left + 1):
                return a
            if done:
                return self.collect(b, s, seat, -1)
        elif done:
            # 3. plan complete: more tickets, or the routes worth most points per turn
            if self.want_tickets(b, s, seat):
                return make_action(ACT_DRAW_TICKETS, 0, 0, 0)
            act = self.best_route(b, s, seat, 1, horizon * self.end_horizon, False, &col)
            if act >= 0:
                return act
            return self.collect(b, s, seat, col)
        # 4. collect the plan's colours
        return self.draw_card(b, s, seat, self.nd.missing, False)


cdef class RoutesPolicy(PlanningPolicy):
    """``routes``: a long-route strategy. Keeps the fewest initial tickets, those cheapest
    to join, and plans them along long routes (the planner's weights favour them). Each
    turn: claim a planned route it can pay, else the longest open route of at least
    `min_len` (shorter near the end) it can pay with the trains the plan does not need;
    otherwise collect the plan's colours, or once the plan is done (or can no longer be
    finished) the colour of the longest route within reach. Never draws more tickets."""
    cdef readonly int min_len

    def __init__(self, tunnels=1, risk=0.3, min_len=3, spec=None):
        PlanningPolicy.__init__(self, 0, tunnels, risk, 1000, spec)
        self.min_len = int(min_len)

    @property
    def params(self):
        return dict(tunnels=self.use_tunnels, risk=self.risk, min_len=self.min_len)

    cdef double keep_score(self, const BoardC* b, const Plan* plan, int mask) noexcept nogil:
        # the fewest tickets allowed, the cheapest plan first; with the Globetrotter, the
        # cheapest plan and then the most tickets: the tickets its routes join anyway are
        # kept for the bonus at no cost
        if b.globetrotter_bonus > 0 and self.globe > 0:
            return -plan.cost + 1e-3 * count_bits(mask)
        return -1000.0 * count_bits(mask) - plan.cost

    cdef int32_t play(self, const BoardC* b, const GameState* s, int seat) noexcept nogil:
        if s.phase == PH_SECOND_DRAW and self.nd_turn == s.turn:
            # the second card goes where the first went
            if self.target >= 0:
                return self.collect(b, s, seat, self.target)
            return self.plan_second_card(b, s, seat)
        self.refresh_plan(b, s, seat)
        plan_needs(b, s, seat, &self.plan, self.tunnel_spare, &self.nd)
        self.nd_turn = s.turn
        return self.turn(b, s, seat)

    @cython.final
    cdef int32_t turn(self, const BoardC* b, const GameState* s, int seat) noexcept nogil:
        cdef int col, min_len = self.min_len
        cdef bint second = s.phase == PH_SECOND_DRAW
        cdef double horizon = self.rounds(b, s)
        cdef bint pending = (self.plan.routes[0] != 0 or self.plan.routes[1] != 0) and \
            self.plan.claims + (self.nd.short + 1) // 2 <= horizon + 1
        cdef int32_t act = -1
        if s.last_round and not second:
            act = self.final_claim(b, s, seat)
            if act >= 0:
                return act
        if pending and not second:
            act = self.claim_planned(b, s, seat)
            if act >= 0:
                return act
        if horizon < 2 or s.p[seat].trains < min_len:
            min_len = 1
        # off the plan: only with the trains the plan does not need
        self.reserve = self.plan.trains if pending else 0
        act = self.best_route(b, s, seat, min_len, 1e9, True, &col)
        if act < 0 and col < 0 and min_len > 1:
            act = self.best_route(b, s, seat, 1, 1e9, True, &col)
        self.reserve = 0
        if act >= 0 and not second:
            return act
        if pending:
            self.target = -1
            return self.draw_card(b, s, seat, self.nd.missing, second)
        return self.collect(b, s, seat, col)


cdef enum:
    MAX_GREEDY_TICKETS = 24   # tickets the greedy policy tracks distances for


cdef class GreedyPolicy(PlanningPolicy):
    """``greedy``: one-step lookahead. Each claim it can pay is valued at its route
    points plus the progress it makes on every unfinished ticket (the drop in the
    ticket's shortest remaining path, exact for one route, scaled so that finishing a
    ticket turns -value into +value); it claims the best if worth at least `claim_share`
    of the board's best route's points (roughly what the turn would bring drawing
    cards), else draws toward the best route it cannot pay yet. Ticket progress is
    measured in trains plus turns (route points are counted apart)."""
    cdef public double claim_share
    cdef int n_gt
    cdef int16_t gt[MAX_GREEDY_TICKETS]            # unfinished tickets tracked
    cdef int32_t gd[MAX_GREEDY_TICKETS]            # their remaining weight now
    cdef int32_t g0[MAX_TICKETS]                   # remaining weight when first seen
    cdef int32_t da[MAX_GREEDY_TICKETS][MAX_CITIES]
    cdef int32_t db[MAX_GREEDY_TICKETS][MAX_CITIES]
    cdef uint64_t gtree[MAX_GREEDY_TICKETS][2]     # routes of their shortest-path trees
    cdef int8_t g_owner[MAX_ROUTES]                # route owners the distances reflect
    cdef int g_tickets

    def __init__(self, tunnels=1, risk=0.3, draw=12, spec=None):
        PlanningPolicy.__init__(self, 0, tunnels, risk, draw, spec)
        self.claim_share = 0.3
        self.prm.points_weight = 0

    @property
    def params(self):
        return dict(tunnels=self.use_tunnels, risk=self.risk, draw=self.draw_trains)

    cdef void start_game(self, const BoardC* b, const GameState* s, int seat,
                         uint64_t seed) noexcept nogil:
        PlanningPolicy.start_game(self, b, s, seat, seed)
        self.g_tickets = -1
        self.n_gt = 0
        memset(self.g0, 0, sizeof(self.g0))
        memset(self.g_owner, -1, sizeof(self.g_owner))

    @cython.final
    cdef void refresh_distances(self, const BoardC* b, const GameState* s, int seat) noexcept nogil:
        """Distances from both ends of every unfinished ticket. Redone in full when the
        tickets changed or the seat claimed a route; when other players claimed, only
        for the tickets that had a path within SLACK of their best through a route that
        changed (elsewhere the distances hardly matter to route_value)."""
        cdef int r, q, i, n
        cdef uint64_t changed[2]
        cdef uint64_t near[MAX_GREEDY_TICKETS][2]
        cdef bint full = s.p[seat].n_tickets != self.g_tickets
        changed[0] = changed[1] = 0
        for r in range(b.n_routes):
            if s.route_owner[r] != self.g_owner[r]:
                set_bit(changed, r)
                q = b.route_partner[r]
                if q >= 0:
                    set_bit(changed, q)       # a claim may close the other half
                if s.route_owner[r] == seat:
                    full = True
                self.g_owner[r] = s.route_owner[r]
        if not full and changed[0] == 0 and changed[1] == 0:
            return
        self.g_tickets = s.p[seat].n_tickets
        if not full:
            for i in range(self.n_gt):
                self.near_routes(b, i, changed, near[i])
        route_weights(self.bi, &self.prm, s, seat, self.ws.base)
        if full:
            n = 0
            for r in range(b.n_tickets):
                if n < MAX_GREEDY_TICKETS and get_bit(s.p[seat].tickets, r) \
                        and not ticket_connected(b, s, seat, r):
                    self.gt[n] = r
                    n += 1
            self.n_gt = n
        i = 0
        while i < self.n_gt:
            if full or near[i][0] or near[i][1]:
                if not self.ticket_distances(b, i):
                    # unreachable now: nothing to gain, stop tracking it
                    self.n_gt -= 1
                    self.gt[i] = self.gt[self.n_gt]
                    memcpy(self.da[i], self.da[self.n_gt], sizeof(self.da[i]))
                    memcpy(self.db[i], self.db[self.n_gt], sizeof(self.db[i]))
                    self.gd[i] = self.gd[self.n_gt]
                    self.gtree[i][0] = self.gtree[self.n_gt][0]
                    self.gtree[i][1] = self.gtree[self.n_gt][1]
                    continue              # slot i now holds another ticket: check it
            i += 1

    @cython.final
    cdef void near_routes(self, const BoardC* b, int i, const uint64_t* changed,
                          uint64_t* out) noexcept nogil:
        """The routes of `changed` through which ticket i had a path within SLACK of its
        best (with the weights its distances were computed with)."""
        cdef int w, r, x, y
        cdef int32_t d, d2, limit = self.gd[i] + self.gd[i] // 4 + 2 * UNIT
        cdef uint64_t bits
        out[0] = out[1] = 0
        for w in range(2):
            bits = changed[w] & self.gtree[i][w]
            while bits:
                r = w * 64 + lowest_bit(bits)
                bits &= bits - 1
                x = b.route_a[r]
                y = b.route_b[r]
                d = self.da[i][x] + self.db[i][y]
                d2 = self.da[i][y] + self.db[i][x]
                if d2 < d:
                    d = d2
                if d + self.bi.weight[r] <= limit:
                    set_bit(out, r)

    @cython.final
    cdef bint ticket_distances(self, const BoardC* b, int i) noexcept nogil:
        """Distances from both ends of tracked ticket i and the routes of both trees;
        False when its cities cannot be joined any more."""
        cdef int t = self.gt[i], x
        self.gtree[i][0] = self.gtree[i][1] = 0
        shortest_path(self.bi, self.ws.base, b.ticket_a[t], -1, self.da[i], self.ws.pred)
        for x in range(b.n_cities):
            if self.da[i][x] < INF_COST and self.ws.pred[x] >= 0:
                set_bit(self.gtree[i], self.ws.pred[x])
        shortest_path(self.bi, self.ws.base, b.ticket_b[t], -1, self.db[i], self.ws.pred)
        for x in range(b.n_cities):
            if self.db[i][x] < INF_COST and self.ws.pred[x] >= 0:
                set_bit(self.gtree[i], self.ws.pred[x])
        self.gd[i] = self.da[i][b.ticket_b[t]]
        if self.gd[i] >= INF_COST:
            return False
        if self.g0[t] < self.gd[i]:
            self.g0[t] = self.gd[i]
        return True

    @cython.final
    cdef double route_value(self, const BoardC* b, int r) noexcept nogil:
        """Route points plus ticket progress if the seat owned route r."""
        cdef int i, t, x = b.route_a[r], y = b.route_b[r]
        cdef int32_t d, d2
        cdef double v = b.route_points[b.route_len[r]]
        for i in range(self.n_gt):
            t = self.gt[i]
            d = self.da[i][x] + self.db[i][y]
            d2 = self.da[i][y] + self.db[i][x]
            if d2 < d:
                d = d2
            if d < self.gd[i]:
                v += ((2.0 * b.ticket_points[t] + self.globe_value(b)) * (self.gd[i] - d)
                      / self.g0[t])
        return v

    cdef int32_t play(self, const BoardC* b, const GameState* s, int seat) noexcept nogil:
        if s.phase == PH_SECOND_DRAW:
            return self.collect(b, s, seat, self.target)
        return self.turn(b, s, seat)

    @cython.final
    cdef int32_t turn(self, const BoardC* b, const GameState* s, int seat) noexcept nogil:
        cdef int r, cost, col, best_col = -1, miss
        cdef int32_t a, act = -1
        cdef double v, best = -1.0, best_target = -1.0
        cdef double risk = 1.0 if s.last_round else self.risk
        cdef int most = hand_most(b, s.p[seat].hand)
        if s.last_round:
            act = self.final_claim(b, s, seat)
            if act >= 0:
                return act
        self.refresh_distances(b, s, seat)
        if self.n_gt == 0 and self.want_tickets(b, s, seat):
            return make_action(ACT_DRAW_TICKETS, 0, 0, 0)
        self.read_hand(b, s.p[seat].hand)
        for r in range(b.n_routes):
            if b.route_len[r] > s.p[seat].trains or not route_open(b, s, r, seat):
                continue
            if b.route_tunnel[r] and not self.use_tunnels:
                continue
            v = self.route_value(b, r)
            cost = -1
            if may_afford(b, s.p[seat].hand, most, r):
                cost = claim_payment(b, s, seat, r, NULL, risk,
                                     self.tunnel_pool(b, s, seat, r), &a)
            if cost >= 0:
                if v > best:
                    best = v
                    act = a
            else:
                miss = self.route_short(b, s, seat, r, &col)
                if v / (1 + miss) > best_target:
                    best_target = v / (1 + miss)
                    best_col = col
        if act >= 0 and (best >= self.claim_share * self.max_points or s.last_round):
            return act
        return self.collect(b, s, seat, best_col)


cdef class PlanFollower(Policy):
    """Base of the policies that follow a planning policy of their own for the seat
    (``expert`` and ``blocker`` follow ``tickets``, ``rush`` follows ``routes``), asked at
    every decision so that its plan stays current: the planner, started at every game from
    the policy's own stream, its parameters (in ``params`` after the policy's own) and its
    choice. Not registered itself; subclasses implement ``choose``."""

    def __cinit__(self, *args, **kwargs):
        self.needs_legal = False        # actions are built from the state, then checked
        self.prm = default_plan_params()

    def __init__(self, str name, PlanningPolicy planner, spec=None):
        """`name`: the policy's registry name (its default spec, and errors name it);
        `planner`: this seat's planning policy, made with the parameters it takes."""
        Policy.__init__(self, spec or name)
        self.name = name
        self.tk = planner
        self.tk_plan = followed_plan(planner, &self.tk_nd)
        self.tk_params = planner.params
        self.risk = planner.risk
        self.tunnels = planner.use_tunnels

    @property
    def planner(self):
        """This seat's planning policy: it makes every decision the policy leaves to it,
        and its plan is the one the policy follows."""
        return self.tk

    def own_params(self):
        """The policy's parameters other than its planner's."""
        return {}

    @property
    def params(self):
        return self.own_params() | self.tk_params

    @property
    def plan_weights(self):
        """The planner's weights of the plans this policy makes itself (the defaults)."""
        return weights_dict(&self.prm)

    cdef void start_game(self, const BoardC* b, const GameState* s, int seat,
                         uint64_t seed) noexcept nogil:
        rng_seed(&self.rng, seed)
        self.tk.start_game(b, s, seat, rng_next(&self.rng))

    cdef int32_t tickets_choice(self, const BoardC* b, const GameState* s, int seat) noexcept nogil:
        cdef int32_t act = self.tk.choose(b, s, seat, NULL, 0)
        if act < 0:
            with gil:
                self.error = self.tk.take_error() or PolicyError(
                    f"{self.name}: {self.tk.spec} gave no action")
        return act


def draw_values(PlanningPolicy policy, game, uint64_t seed=0):
    """(bound, estimate): draw_value_bound and the full draw_value_estimate of a ticket
    draw for the seat to act in the current position of `game`, after the policy starts
    a game for that seat with `seed`. The bound is +inf when the position gives none. A
    tool for tests: the bound only replaces the estimate when it is below draw_gain, so
    it must never be below the estimate."""
    cdef GameState s
    cdef CompiledBoard cb = copy_position(game, &s)
    cdef int seat, col
    cdef double rounds
    seat = s.current
    policy.start_game(&cb.c, &s, seat, seed)
    if s.p[seat].cities == 0:
        raise ValueError("the seat has no route yet: a ticket draw is not valued")
    rounds = policy.rounds(&cb.c, &s)
    policy.best_route(&cb.c, &s, seat, 1, rounds, False, &col)
    return (policy.draw_value_bound(&cb.c, &s, seat, policy.route_rate, rounds,
                                    hand_total(&s, seat)),
            policy.draw_value_estimate(&cb.c, &s, seat, False))


cdef const Plan* followed_plan(Policy p, const Needs** needs):
    if not isinstance(p, PlanningPolicy):
        return NULL
    cdef PlanningPolicy q = <PlanningPolicy>p
    needs[0] = &q.nd
    return &q.plan
