# The `search` policy: information-set Monte Carlo search over the compiled core.
#
# At each decision the policy lists a few candidate actions, samples worlds consistent
# with what its seat may know (determinize: hidden hands, deck order, hidden tickets and
# ticket deck resampled; cards publicly known to be in a hand stay there; the others'
# tickets then dealt again favouring those their routes touch: infer_tickets), plays each
# candidate out to the end of the game with a built-in rollout policy in every seat, and
# keeps the candidate with the best mean utility. The budget is shared out by a bandit
# over the candidates: sequential halving (default) or UCB1. Candidate k's i-th playout
# uses world i for every k (common random numbers), so candidates are compared on the
# same deals. Everything below runs without the GIL and allocates nothing per decision;
# docs/search.md describes the method and its measured strength and speed.
cimport cython
from libc.stdint cimport int32_t, uint64_t
from libc.math cimport exp, log, sqrt
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy
from cpython.exc cimport PyErr_CheckSignals
from posix.time cimport CLOCK_MONOTONIC, clock_gettime, timespec

from ttrsim._structs cimport *
from ttrsim._engine cimport (CompiledBoard, copy_position, action_a, action_b, action_c, action_kind,
                             apply_action, apply_legal, check_state, determinize, is_legal,
                             legal_actions, make_action, sample_legal, score_game,
                             ticket_class)
from ttrsim._bits cimport clear_bit, get_bit, set_bit
from ttrsim._planning cimport Candidates, cand_add, faceup_colours, turn_candidates
from ttrsim._rng cimport rng_below, rng_next, rng_seed, rng_uniform, splitmix64
from ttrsim._policy cimport (Policy, PolicyRef, STEP_OK, Step, play_step, policy_ref, ref_choose,
                             ref_start)

import copy

import numpy as np

from ttrsim._policy import PolicyError


cdef enum:
    MAX_CAND = 48             # candidates per decision at most
    MAX_PROP = 3              # proposers at most
    PLAYOUT_TURNS = 1000      # a playout still running after this many turns is scored

cdef long long WATCH_NS = 100000000   # analyse_position: progress and Ctrl-C every 0.1 s


cdef inline int phase_bit(int phase) noexcept nogil:
    """The bit of `phases` that names a decision of this phase."""
    if phase == PH_SETUP_TICKETS:
        return 1
    if phase == PH_KEEP_TICKETS:
        return 2
    if phase == PH_SECOND_DRAW:
        return 8
    if phase == PH_TUNNEL:
        return 16
    return 4


def _is_whole(x):
    return isinstance(x, (int, float)) and x == x and float(x) == int(x)


def search_params(playouts=200, worlds=0, c=0.0, utility=0.2, claims=0, draws=0, z=1.0,
                  infer=5.0, ticket_draws=1, phases=31, rare=1):
    """The search's own parameters (all but its rollout and lead policies) checked, as the
    types it keeps; ValueError naming the first that is out of range. ``SearchPolicy``
    checks them with it, and so does a spec's validation, which builds no search."""
    if not isinstance(playouts, (int, float)) or playouts != playouts or int(playouts) < 1:
        raise ValueError(f"search: playouts must be a positive number of playouts per "
                         f"decision, got {playouts!r}")
    if int(worlds) < 0:
        raise ValueError(f"search: worlds must be 0 (one per playout) or positive, got {worlds}")
    if float(c) < 0:
        raise ValueError(f"search: c (exploration) must be >= 0 (0: sequential halving), got {c}")
    if not 0.0 <= float(utility) <= 1.0:
        raise ValueError(f"search: utility must be within 0..1 (0: wins only, 1: score "
                         f"margin only), got {utility}")
    if int(claims) < 0:
        raise ValueError(f"search: claims must be >= 0, got {claims}")
    if draws not in (0, 1):
        raise ValueError(f"search: draws must be 0 (the rollout policy takes second cards) "
                         f"or 1 (searched too), got {draws!r}")
    if ticket_draws not in (0, 1):
        raise ValueError(f"search: ticket_draws must be 0 or 1 (0: no ticket draw "
                         f"candidates beyond the rollout policy's own choice), got {ticket_draws!r}")
    if not _is_whole(phases) or not 1 <= int(phases) <= 31:
        raise ValueError(f"search: phases must be a sum of 1 (initial tickets), 2 (drawn "
                         f"tickets), 4 (turns), 8 (second draws, with draws=1) and 16 "
                         f"(tunnels), from 1 to 31; got {phases!r}")
    if float(z) < 0:
        raise ValueError(f"search: z must be >= 0, got {z}")
    if not 0.0 <= float(infer) <= 20.0:
        raise ValueError(f"search: infer must be within 0..20 (0: the others' tickets "
                         f"uniformly at random), got {infer}")
    if not _is_whole(rare) or not 1 <= int(rare) <= 16:
        raise ValueError(f"search: rare must be a whole number from 1 to 16 (the budget's "
                         f"multiple at ticket choices and before the seat's first claim; "
                         f"1: the same budget everywhere), got {rare!r}")
    return dict(playouts=int(playouts), worlds=int(worlds), c=float(c), utility=float(utility),
                claims=int(claims), draws=int(draws), ticket_draws=int(ticket_draws),
                phases=int(phases), z=float(z), infer=float(infer), rare=int(rare))


cdef class SearchPolicy(Policy):
    """``search``: flat information-set Monte Carlo search with a bandit over a filtered
    set of candidate actions; playouts run a built-in rollout policy in every seat."""
    cdef readonly int playouts         # playouts per decision (the budget)
    cdef readonly str rollout          # spec of the rollout policy
    cdef readonly str lead             # spec of the policy playing the real game ("" : the rollout)
    cdef readonly int worlds           # distinct sampled worlds per decision (0: one per playout)
    cdef readonly double c             # UCB1 exploration constant; 0: sequential halving
    cdef readonly double utility       # weight of the score margin in the utility (0: win only)
    cdef readonly int claims           # claim candidates at most (longest routes first)
    cdef readonly int draws            # 1: search second card draws too; 0: the rollout decides
    cdef readonly int ticket_draws     # 0: a ticket draw is a candidate only as the default
    cdef readonly int phases           # decisions searched (bits: phase_bit); others: the rollout's
    cdef readonly int rare             # budget multiple at ticket choices and turns before
                                       # the seat's first claim (rare, costly decisions)
    cdef int budget                    # this decision's playouts (playouts, or x rare)
    cdef readonly str foes             # spec of the policy playing the other seats in the
                                       # playouts ("" : the rollout policy)
    cdef readonly double scale         # points of margin that map to the utility's full range
    cdef readonly double infer         # weight of the others' routes in dealing their tickets
    cdef readonly double z             # a candidate replaces the rollout policy's own choice
                                       # only when better by z standard errors (paired)
    cdef double* vals                  # utility of each playout: [candidate][world]
    cdef double* wvals                 # its win share, and its score margin, the same way
    cdef double* mvals                 # (analyse's paired tests read them)
    cdef int cap                       # playouts per candidate that vals holds
    cdef PolicyRef roll[MAX_PLAYERS]   # rollout instances, one per seat of a playout
    cdef PolicyRef own_roll[MAX_PLAYERS]   # the rollout policy's instances
    cdef PolicyRef foe_roll[MAX_PLAYERS]   # the foes' (the other seats of a playout)
    cdef bint has_foes
    cdef readonly tuple foe_policies
    cdef PolicyRef me                  # the lead (default: the rollout policy) playing this
                                       # seat's real game: its choice is the default candidate
    cdef PolicyRef prop[MAX_PROP]      # proposers: policies whose choices become candidates
    cdef int n_prop
    cdef readonly tuple rollouts       # the objects behind roll (then me) and prop
    cdef readonly tuple proposers
    cdef bint roll_random
    cdef int32_t* buf                  # legal actions inside playouts (random rollouts)
    cdef GameState world
    # the last decision's statistics (analyse reads them)
    cdef public int n_cand
    cdef int32_t cand[MAX_CAND]
    cdef int visits[MAX_CAND]
    cdef double usum[MAX_CAND]
    cdef double wins[MAX_CAND]
    cdef double msum[MAX_CAND]
    cdef bint alive[MAX_CAND]
    cdef public int chosen
    cdef public bint uniform           # analyse: every candidate gets `playouts` playouts
    cdef public long long total_playouts
    cdef public long long total_decisions
    cdef readonly long long max_playouts   # most playouts spent on one decision (not analyse)
    # analyse_position: progress calls and Ctrl-C checks every WATCH_NS while it searches
    cdef object progress_fn            # progress(done, total) or None
    cdef bint watch
    cdef bint aborted                  # the callback raised, or Ctrl-C: error holds it
    cdef long long done, planned, next_watch

    def __cinit__(self, *args, **kwargs):
        self.buf = <int32_t*>malloc(MAX_ACTIONS * sizeof(int32_t))
        self.vals = NULL
        self.wvals = NULL
        self.mvals = NULL
        if self.buf == NULL:
            raise MemoryError()

    def __dealloc__(self):
        free(self.buf)
        free(self.vals)
        free(self.wvals)
        free(self.mvals)

    def __init__(self, rollouts, proposers=(), playouts=200, rollout=None, worlds=0, c=0.0,
                 utility=0.2, claims=0, draws=0, z=1.0, infer=5.0, ticket_draws=1, phases=31,
                 lead="", spec=None, rare=1, foes=(), foe_spec=""):
        """`rollouts`: MAX_PLAYERS + 1 (6) distinct compiled instances: the first
        MAX_PLAYERS of the rollout policy, one per seat of a playout; the last plays this
        seat's real game (its choice is the default candidate): another instance of the
        rollout policy, or of the `lead` policy. `proposers`: up to 3 compiled policies
        whose choices at a turn become candidates too. `rollout`, `lead`: their spec texts
        (for ``params``; default the instances' spec, "" : the lead is the rollout).
        `foes`: () or MAX_PLAYERS distinct compiled instances of one policy (spec text
        `foe_spec`) that play the other seats in the playouts; the rollout policy then
        plays only the searching seat's own future turns.
        ``ttrsim.policies.make_policy("search:...")`` builds them all from the registry; the
        other parameters are listed by ``ttrsim policies``."""
        Policy.__init__(self, spec)
        rollouts, proposers, foes = tuple(rollouts), tuple(proposers), tuple(foes)
        if foes and (len(foes) != MAX_PLAYERS or len({id(p) for p in rollouts + foes})
                     != len(rollouts) + len(foes)):
            raise ValueError(f"search: foes must be {MAX_PLAYERS} distinct instances of the "
                             f"foes' policy (one per seat of a playout), got {len(foes)}")
        if foes and len({type(p) for p in foes}) != 1:
            raise ValueError("search: the foes' instances must all be of one policy")
        if len(rollouts) != MAX_PLAYERS + 1 or len({id(p) for p in rollouts}) != len(rollouts):
            raise ValueError(f"search: rollouts must be {MAX_PLAYERS + 1} distinct instances "
                             f"of the rollout policy (one per seat, one for the real game), "
                             f"got {len(rollouts)}")
        if len(proposers) > MAX_PROP:
            raise ValueError(f"search: at most {MAX_PROP} proposers, got {len(proposers)}")
        for p in rollouts + proposers + foes:
            if isinstance(p, SearchPolicy):
                raise ValueError("search: the rollout and proposer policies cannot be search "
                                 "itself (a playout would search at every decision)")
            if not isinstance(p, Policy):
                raise TypeError(f"search: rollout and proposer policies must be compiled "
                                f"ttrsim policies, got {type(p).__name__}")
        if len({type(p) for p in rollouts[:MAX_PLAYERS]}) != 1:
            raise ValueError("search: the rollout instances must all be of one policy")
        if not lead and type(rollouts[MAX_PLAYERS]) is not type(rollouts[0]):
            raise ValueError("search: the instance playing the real game is not of the "
                             "rollout policy; name its policy as `lead`")
        own = search_params(playouts, worlds, c, utility, claims, draws, z, infer, ticket_draws,
                            phases, rare)
        self.playouts = own["playouts"]
        self.rollout = str(rollout).strip() if rollout is not None else rollouts[0].spec
        self.lead = str(lead or "").strip()
        self.worlds = own["worlds"]
        self.c = own["c"]
        self.utility = own["utility"]
        self.claims = own["claims"]
        self.draws = own["draws"]
        self.ticket_draws = own["ticket_draws"]
        self.phases = own["phases"]
        self.scale = 50.0
        self.z = own["z"]
        self.infer = own["infer"]
        self.rare = own["rare"]
        self.budget = self.playouts
        self.foes = str(foe_spec or "").strip() if foes else ""
        self.cap = self.playouts * self.rare + 2
        self.vals = <double*>malloc(MAX_CAND * self.cap * sizeof(double))
        self.wvals = <double*>malloc(MAX_CAND * self.cap * sizeof(double))
        self.mvals = <double*>malloc(MAX_CAND * self.cap * sizeof(double))
        if self.vals == NULL or self.wvals == NULL or self.mvals == NULL:
            raise MemoryError()
        self.rollouts = rollouts
        self.proposers = proposers
        self.foe_policies = foes
        self.has_foes = len(foes) > 0
        for q in range(MAX_PLAYERS):
            policy_ref(rollouts[q], &self.own_roll[q])
            self.roll[q] = self.own_roll[q]
            if self.has_foes:
                policy_ref(foes[q], &self.foe_roll[q])
        policy_ref(rollouts[MAX_PLAYERS], &self.me)
        self.n_prop = len(proposers)
        for k in range(self.n_prop):
            policy_ref(proposers[k], &self.prop[k])
        self.roll_random = self.roll[0].random_rng != NULL
        if self.has_foes and (self.roll_random or self.foe_roll[0].random_rng != NULL):
            raise ValueError("search: foes cannot be combined with a `random` rollout or be "
                             "`random` themselves (a random rollout shares one generator "
                             "over the seats)")
        self.n_cand = 0
        self.chosen = -1
        self.uniform = False
        self.total_playouts = 0
        self.total_decisions = 0
        self.max_playouts = 0
        self.watch = False
        self.aborted = False

    @property
    def params(self):
        return dict(playouts=self.playouts, rollout=self.rollout, worlds=self.worlds, c=self.c,
                    utility=self.utility, claims=self.claims, draws=self.draws, z=self.z,
                    infer=self.infer, ticket_draws=self.ticket_draws,
                    phases=self.phases, lead=self.lead, rare=self.rare, foes=self.foes)

    def init_args(self):
        # fresh copies of the rollout and proposer policies (two copies of a search must
        # not share them between seats)
        # (`foes` the instances here, their spec text `foe_spec`)
        return dict(self.params, rollouts=[copy.copy(p) for p in self.rollouts],
                    proposers=[copy.copy(p) for p in self.proposers],
                    foes=[copy.copy(p) for p in self.foe_policies], foe_spec=self.foes)

    # --- dispatch to the rollout instances and proposers -------------------------------
    @cython.final
    cdef void roll_start(self, int q, const BoardC* b, const GameState* s,
                         uint64_t seed) noexcept nogil:
        ref_start(&self.roll[q], b, s, q, seed)

    @cython.final
    cdef inline int roll_step(self, const BoardC* b, GameState* w) noexcept nogil:
        """One decision of a playout by the rollout instance of the seat to act (the
        loops' one step, _policy.pxd; a `random` rollout: seat 0's generator serves every
        seat); a STEP_* status."""
        cdef Step st
        return play_step(&self.roll[0] if self.roll_random else &self.roll[w.current], b, w,
                         self.buf, NULL, False, &st, NULL)

    @cython.final
    cdef int32_t propose(self, int k, const BoardC* b, const GameState* s, int seat,
                         const int32_t* legal, int n_legal, uint64_t seed) noexcept nogil:
        """Proposer k's choice here (started afresh with `seed`)."""
        ref_start(&self.prop[k], b, s, seat, seed)
        if not self.prop[k].needs_legal:
            return ref_choose(&self.prop[k], b, s, seat, NULL, 0)
        return ref_choose(&self.prop[k], b, s, seat, legal, n_legal)

    # --- candidates (the listing shared with `expert`: _planning's Candidates) -------
    @cython.final
    cdef inline Candidates cands(self) noexcept nogil:
        cdef Candidates c
        c.act = self.cand
        c.n = self.n_cand
        c.cap = MAX_CAND
        c.one_ticket_draw = not self.ticket_draws   # only the default (first) may draw
        return c

    @cython.final
    cdef void add_cand(self, int32_t act) noexcept nogil:
        cdef Candidates c = self.cands()
        cand_add(&c, act)
        self.n_cand = c.n

    @cython.final
    cdef void list_candidates(self, const BoardC* b, const GameState* s, int seat,
                              const int32_t* legal, int n_legal, uint64_t seed) noexcept nogil:
        """The candidate filter. Ticket choices and tunnel payments: every legal choice
        (a tunnel: decline, or pay with the fewest wild cards). Second card draws: each
        distinct face-up colour and the blind draw. A turn: what the proposers (the
        rollout policy, tickets, greedy, routes) would play, then turn_candidates (a
        blind draw, a ticket draw, and claims of the longest routes the hand pays,
        `claims` at most, each with one payment: the proposers' if they claim that route,
        else the fewest wild cards and the colour the hand has fewest of beyond the cost,
        keeping the larger sets). Analysing (uniform) ranks every choice where a phase has
        few: every tunnel payment, every second draw (draws or not), and at a turn a
        face-up card of each colour on offer too (a colour the candidates draw already is
        not taken twice)."""
        cdef Candidates c
        cdef int k
        self.n_cand = 0
        # the lead's own choice in this game (by default the rollout policy's) comes first:
        # the search departs from it only on evidence (see choose)
        self.add_cand(ref_choose(&self.me, b, s, seat, legal, n_legal))
        if s.phase == PH_SETUP_TICKETS or s.phase == PH_KEEP_TICKETS:
            self.add_all(legal, n_legal)
        elif s.phase == PH_TUNNEL:
            if self.uniform:
                self.add_all(legal, n_legal)
            else:
                self.add_tunnel_answers(legal, n_legal)
        elif s.phase == PH_SECOND_DRAW:
            if self.draws or self.uniform:
                self.add_second_draws(s, legal, n_legal)
        else:
            for k in range(self.n_prop):
                self.add_cand(self.propose(k, b, s, seat, legal, n_legal, seed))
            c = self.cands()
            turn_candidates(b, s, seat, legal, n_legal, &c, self.claims, True, False)
            if self.uniform:
                faceup_colours(&c, s, legal, n_legal, True)
            self.n_cand = c.n

    @cython.final
    cdef void add_all(self, const int32_t* legal, int n_legal) noexcept nogil:
        """Every legal action (keeping tickets: every keep set)."""
        cdef int i
        for i in range(n_legal):
            self.add_cand(legal[i])

    @cython.final
    cdef void add_tunnel_answers(self, const int32_t* legal, int n_legal) noexcept nogil:
        """Declining, and the payment with the fewest wild cards."""
        cdef int i
        cdef int32_t best = -1
        for i in range(n_legal):
            if action_kind(legal[i]) == ACT_TUNNEL_DECLINE:
                self.add_cand(legal[i])
            elif best < 0 or action_c(legal[i]) < action_c(best):
                best = legal[i]
        self.add_cand(best)

    @cython.final
    cdef void add_second_draws(self, const GameState* s, const int32_t* legal,
                               int n_legal) noexcept nogil:
        """The blind draw and one face-up card of each colour on offer (analysing, a
        colour the candidates draw already is not taken twice)."""
        cdef int i
        cdef Candidates c = self.cands()
        faceup_colours(&c, s, legal, n_legal, self.uniform)
        self.n_cand = c.n
        for i in range(n_legal):
            if action_kind(legal[i]) != ACT_DRAW_FACEUP:
                self.add_cand(legal[i])

    # --- playouts -------------------------------------------------------------------
    @cython.final
    cdef double playout(self, const BoardC* b, const GameState* s, int seat, int32_t act,
                        uint64_t base, int index, double* win, double* margin) noexcept nogil:
        """Play candidate `act` in world `index` to the end; return the utility."""
        cdef GameState* w = &self.world
        cdef ScoreC sc[MAX_PLAYERS]
        cdef uint64_t x, wseed
        cdef int q, n_best = 0, best_other = -100000
        memcpy(w, s, sizeof(GameState))
        x = base + <uint64_t>(index if self.worlds == 0 else index % self.worlds) * 0x9E3779B97F4A7C15ULL
        wseed = splitmix64(&x)
        sample_world(b, w, seat, wseed, self.infer)
        if self.worlds != 0:             # the same world, a fresh future
            x = base ^ (<uint64_t>index * 0xD1B54A32D192ED03ULL)
            rng_seed(&w.rng, splitmix64(&x))
        apply_legal(b, w, act, NULL)
        for q in range(w.n_players):
            self.roll_start(q, b, w, splitmix64(&x))
        while w.phase != PH_OVER and w.turn < s.turn + PLAYOUT_TURNS:
            if self.roll_step(b, w) != STEP_OK:
                break                     # a failed rollout decision: scored as it stands
        score_game(b, w, sc)
        for q in range(w.n_players):
            if sc[q].rank == 1:
                n_best += 1
            if q != seat and sc[q].total > best_other:
                best_other = sc[q].total
        win[0] = (1.0 / n_best) if sc[seat].rank == 1 else 0.0
        margin[0] = sc[seat].total - best_other
        return self.value(win[0], margin[0])

    @cython.final
    cdef inline double value(self, double win, double margin) noexcept nogil:
        """A playout's value: (1 - utility) x win + utility x the margin mapped to [0, 1]
        over +-scale points."""
        cdef double m = 0.5 + margin / (2.0 * self.scale)
        m = 0.0 if m < 0.0 else (1.0 if m > 1.0 else m)
        return (1.0 - self.utility) * win + self.utility * m

    def _value(self, double win, double margin):
        """(tests) the value of a playout with this win share and score margin."""
        return self.value(win, margin)

    def _beats_default(self, int k):
        """(tests) whether candidate k of the last decision passes the paired test."""
        if not 0 <= k < self.n_cand:
            raise IndexError(f"candidate {k} of {self.n_cand}")
        return bool(self.beats_default(k))

    def _playout_values(self):
        """(tests) the last decision's playout values: per candidate, in world order."""
        return [[self.vals[k * self.cap + i] for i in range(min(self.visits[k], self.cap))]
                for k in range(self.n_cand)]

    def playout_outcomes(self):
        """The last decision's playouts, world by world: three float arrays of shape
        (candidates, playouts), the value, the win share and the final score margin of
        candidate k's playout in world i (the same world i for every candidate, so a
        column pairs the candidates; playouts of a candidate that did not reach world i
        are NaN). ``ttrsim.analyse`` tests its rows against each other with them."""
        cdef int k, i, m = 0
        for k in range(self.n_cand):
            m = max(m, min(self.visits[k], self.cap))
        out = np.full((3, self.n_cand, m), np.nan)
        cdef double[:, :, ::1] o = out
        for k in range(self.n_cand):
            for i in range(min(self.visits[k], self.cap)):
                o[0, k, i] = self.vals[k * self.cap + i]
                o[1, k, i] = self.wvals[k * self.cap + i]
                o[2, k, i] = self.mvals[k * self.cap + i]
        return out[0], out[1], out[2]

    @cython.final
    cdef void run(self, const BoardC* b, const GameState* s, int seat, int k, int n,
                  uint64_t base) noexcept nogil:
        """n more playouts of candidate k (its next worlds in order)."""
        cdef int i
        cdef double wn, mg
        cdef double u
        for i in range(n):
            if self.aborted:
                return
            u = self.playout(b, s, seat, self.cand[k], base, self.visits[k], &wn, &mg)
            if self.visits[k] < self.cap:
                self.vals[k * self.cap + self.visits[k]] = u
                self.wvals[k * self.cap + self.visits[k]] = wn
                self.mvals[k * self.cap + self.visits[k]] = mg
            self.usum[k] += u
            self.wins[k] += wn
            self.msum[k] += mg
            self.visits[k] += 1
            self.total_playouts += 1
            if self.watch:
                self.done += 1
                if _now_ns() >= self.next_watch:
                    self.report_progress()

    cdef void report_progress(self) noexcept nogil:
        """Call progress(done, total) and let Ctrl-C through (analyse_position); an
        exception stops the search (kept in self.error)."""
        self.next_watch = _now_ns() + WATCH_NS
        with gil:
            try:
                PyErr_CheckSignals()
                if self.progress_fn is not None:
                    self.progress_fn(self.done, self.planned)
            except BaseException as exc:
                self.error = exc
                self.aborted = True

    @cython.final
    cdef int search(self, const BoardC* b, const GameState* s, int seat,
                    uint64_t base) noexcept nogil:
        """Share the budget out over the candidates; return the index of the choice."""
        cdef int k
        if self.uniform:
            self.budget = self.playouts
        if not self.uniform and self.n_cand > self.budget:
            self.n_cand = self.budget       # the budget: the first candidates, default first
        self.done = 0
        self.planned = self.n_cand * self.playouts if self.uniform else self.budget
        for k in range(self.n_cand):
            self.visits[k] = 0
            self.usum[k] = 0.0
            self.wins[k] = 0.0
            self.msum[k] = 0.0
            self.alive[k] = True
        if self.uniform:
            return self.run_uniform(b, s, seat, base)
        if self.n_cand <= 1:
            return 0
        if self.c > 0:
            return self.run_ucb1(b, s, seat, base)
        return self.run_halving(b, s, seat, base)

    @cython.final
    cdef int run_uniform(self, const BoardC* b, const GameState* s, int seat,
                         uint64_t base) noexcept nogil:
        """analyse: `playouts` playouts for every candidate; the best mean is chosen."""
        cdef int k, best = 0
        for k in range(self.n_cand):
            self.run(b, s, seat, k, self.playouts, base)
            if self.usum[k] > self.usum[best]:
                best = k
        return best

    @cython.final
    cdef int run_ucb1(self, const BoardC* b, const GameState* s, int seat,
                      uint64_t base) noexcept nogil:
        """UCB1: one playout each, then the highest upper bound; the most visited wins."""
        cdef int k, i, best = 0
        cdef double v, bv, total
        for k in range(self.n_cand):
            self.run(b, s, seat, k, 1, base)
        for i in range(self.n_cand, self.budget):
            total = log(<double>i)
            bv = -1.0
            for k in range(self.n_cand):
                v = self.usum[k] / self.visits[k] + self.c * sqrt(total / self.visits[k])
                if v > bv:
                    bv = v
                    best = k
            self.run(b, s, seat, best, 1, base)
        best = 0
        for k in range(1, self.n_cand):
            if (self.visits[k] > self.visits[best] or (self.visits[k] == self.visits[best]
                    and self.usum[k] > self.usum[best])):
                best = k
        return best

    @cython.final
    cdef int run_halving(self, const BoardC* b, const GameState* s, int seat,
                         uint64_t base) noexcept nogil:
        """Sequential halving: in each of ceil(log2 n) rounds the candidates still in the
        race share the budget left for the round equally, then the worse half leaves it
        (the default, candidate 0, stays to the end for the paired test of choose). The
        budget is kept exactly: a round that cannot give every candidate in the race a
        playout is not played (the race ends there)."""
        cdef int k, j, m, n_alive = self.n_cand, rounds = 0, per, used = 0
        cdef int order[MAX_CAND]
        while n_alive > 1:
            rounds += 1
            n_alive = (n_alive + 1) // 2
        n_alive = self.n_cand
        while n_alive > 1:
            m = self.count_alive()        # the default may be one more than n_alive
            if self.budget - used < m:
                break
            per = (self.budget - used) // (m * rounds)
            if per < 1:
                per = 1
            j = 0
            for k in range(self.n_cand):
                if self.alive[k]:
                    self.run(b, s, seat, k, per, base)
                    used += per
                    order[j] = k
                    j += 1
            n_alive = (n_alive + 1) // 2
            self.drop_worse(order, j, n_alive)
            rounds -= 1
            if rounds < 1:
                rounds = 1
        return self.best_alive()

    @cython.final
    cdef int count_alive(self) noexcept nogil:
        cdef int k, m = 0
        for k in range(self.n_cand):
            m += self.alive[k]
        return m

    @cython.final
    cdef void drop_worse(self, int* order, int j, int keep) noexcept nogil:
        """Rank the j candidates of `order` by mean utility (ties: candidate order) and
        take all but the first `keep` out of the race (never the default)."""
        cdef int i, k, tmp
        cdef double v
        for i in range(1, j):                # insertion sort, stable
            tmp = order[i]
            v = self.usum[tmp] / self.visits[tmp]
            k = i - 1
            while k >= 0 and self.usum[order[k]] / self.visits[order[k]] < v:
                order[k + 1] = order[k]
                k -= 1
            order[k + 1] = tmp
        for i in range(keep, j):
            if order[i] != 0:
                self.alive[order[i]] = False

    @cython.final
    cdef int best_alive(self) noexcept nogil:
        """The candidate in the race with the best mean utility (ties: the earliest)."""
        cdef int k, best = 0
        for k in range(1, self.n_cand):
            if self.alive[k] and self.visits[k] > 0 and (
                    self.usum[k] / self.visits[k] > self.usum[best] / self.visits[best]):
                best = k
        return best

    @cython.final
    cdef bint beats_default(self, int k) noexcept nogil:
        """Candidate k's mean utility exceeds the default's (candidate 0) by more than z
        standard errors of the paired differences over the worlds both played."""
        cdef int m = self.visits[k] if self.visits[k] < self.visits[0] else self.visits[0]
        cdef int i
        cdef double d, sd = 0.0, sq = 0.0
        if m > self.cap:
            m = self.cap
        if m < 2:
            # one paired playout has no standard error: only z = 0 (the best mean wins)
            # may depart on it
            return m > 0 and self.z == 0 and self.vals[k * self.cap] > self.vals[0]
        for i in range(m):
            d = self.vals[k * self.cap + i] - self.vals[i]
            sd += d
            sq += d * d
        d = sd / m
        sq = (sq - m * d * d) / (m - 1)
        return d > 0 and d * d * m > self.z * self.z * sq

    cdef void start_game(self, const BoardC* b, const GameState* s, int seat,
                         uint64_t seed) noexcept nogil:
        cdef int q
        rng_seed(&self.rng, seed)
        ref_start(&self.me, b, s, seat, seed ^ 0x5DEECE66DULL)
        # the playouts' seats for this game: the rollout policy in the seat's own, the
        # foes (when named) in the others
        for q in range(MAX_PLAYERS):
            self.roll[q] = self.foe_roll[q] if self.has_foes and q != seat else self.own_roll[q]

    cdef int32_t choose(self, const BoardC* b, const GameState* s, int seat,
                        const int32_t* legal, int n_legal) noexcept nogil:
        cdef uint64_t base = rng_next(&self.rng)
        if n_legal <= 0:
            with gil:
                self.error = PolicyError("search: no legal action (the game is over)")
            return -1
        if not self.uniform and not (self.phases & phase_bit(s.phase)):
            # not searched: the lead's own move, as the default candidate would be
            self.n_cand = 0
            self.chosen = -1
            return ref_choose(&self.me, b, s, seat, legal, n_legal)
        self.budget = self.playouts
        if self.rare > 1 and (s.phase == PH_SETUP_TICKETS or s.phase == PH_KEEP_TICKETS or (
                s.phase == PH_TURN and s.p[seat].n_routes == 0)):
            self.budget = self.playouts * self.rare
        self.list_candidates(b, s, seat, legal, n_legal, base)
        if self.n_cand == 0:
            self.add_cand(legal[0])
        cdef long long before = self.total_playouts
        self.chosen = self.search(b, s, seat, base)
        if self.chosen != 0 and not self.uniform and not self.beats_default(self.chosen):
            self.chosen = 0
        self.total_decisions += 1
        if not self.uniform and self.total_playouts - before > self.max_playouts:
            self.max_playouts = self.total_playouts - before
        return self.cand[self.chosen]

    def last_decision(self):
        """Statistics of the last decision: a list of (action code, playouts, summed
        utility, wins, summed score margin, still in the race), in candidate order, and
        the index of the chosen candidate."""
        rows = [(self.cand[k], self.visits[k], self.usum[k], self.wins[k], self.msum[k],
                 bool(self.alive[k])) for k in range(self.n_cand)]
        return rows, self.chosen


def analyse_position(SearchPolicy policy, game, uint64_t seed=0, progress=None):
    """Run `policy`'s search once in the current position of `game` (a ``ttrsim.Game`` or
    its core) for the seat to act; return ``policy.last_decision()``. The game is not
    changed. ``progress(done, total)``, if given, is called with the playouts done about
    every 0.1 s and once at the end (done == total); Ctrl-C raises KeyboardInterrupt
    within about 0.1 s, and an exception raised by `progress` stops the search and is
    raised here."""
    cdef GameState s
    cdef CompiledBoard cb = copy_position(game, &s)
    cdef int n, seat
    cdef int32_t act
    if progress is not None and not callable(progress):
        raise TypeError(f"progress must be a callable progress(done, total), got {progress!r}")
    buf = np.empty(MAX_ACTIONS, dtype=np.int32)
    cdef int32_t[::1] legal = buf
    n = legal_actions(&cb.c, &s, &legal[0])
    if n == 0:
        raise ValueError("the game is over")
    seat = s.current
    policy.progress_fn = progress
    policy.watch = True
    policy.aborted = False
    policy.next_watch = _now_ns() + WATCH_NS
    try:
        with nogil:
            policy.start_game(&cb.c, &s, seat, seed)
            act = policy.choose(&cb.c, &s, seat, &legal[0], n)
        if not policy.aborted and progress is not None:
            progress(policy.done, policy.planned)
    finally:
        policy.progress_fn = None
        policy.watch = False
    if policy.aborted or act == -1:
        policy.aborted = False
        raise policy.take_error()
    return policy.last_decision()


def value_actions(SearchPolicy policy, game, actions, uint64_t seed=0):
    """Value exactly `actions` (legal action codes of the seat to act in `game`, at most
    MAX_CAND, no repeats) with ``policy.playouts`` playouts each, candidate k's i-th
    playout in world i for every k (common random numbers), as the search's uniform mode
    does with its own candidates; return ``policy.last_decision()``. The game is not
    changed. The training of `expert` labels the candidates it plays this way, so that no
    playout is spent on a move it could not choose."""
    cdef GameState s
    cdef CompiledBoard cb = copy_position(game, &s)
    cdef int k, seat
    codes = [int(a) for a in actions]
    if not 0 < len(codes) <= MAX_CAND or len(set(codes)) != len(codes):
        raise ValueError(f"value_actions: 1 to {MAX_CAND} distinct actions, got {len(codes)}")
    if s.phase == PH_OVER:
        raise ValueError("the game is over")
    for a in codes:
        if not is_legal(&cb.c, &s, a):
            raise ValueError(f"value_actions: action {a} is not legal here")
    seat = s.current
    policy.n_cand = len(codes)
    for k in range(policy.n_cand):
        policy.cand[k] = codes[k]
        policy.visits[k] = 0
        policy.usum[k] = 0.0
        policy.wins[k] = 0.0
        policy.msum[k] = 0.0
        policy.alive[k] = True
    policy.aborted = False
    with nogil:
        policy.start_game(&cb.c, &s, seat, seed)
        policy.chosen = policy.run_uniform(&cb.c, &s, seat, rng_next(&policy.rng))
    if policy.aborted:
        policy.aborted = False
        raise policy.take_error()
    return policy.last_decision()


cdef inline void sample_world(const BoardC* b, GameState* w, int seat, uint64_t seed,
                              double infer) noexcept nogil:
    """The world a playout starts from: what `seat` cannot see resampled (determinize),
    then the others' tickets dealt toward their routes (infer_tickets; 0: not)."""
    determinize(b, w, seat, seed)
    if infer > 0:
        infer_tickets(b, w, seat, infer)


cdef void infer_tickets(const BoardC* b, GameState* w, int seat, double beta) noexcept nogil:
    """Deal the other players' tickets of a sampled world again, favouring those whose
    cities their own routes touch: from the hidden tickets of a class held by the others,
    in the ticket deck or out of the game unseen, each other player draws as many as it
    holds, ticket t with weight exp(beta x the number of t's two cities its routes touch);
    the rest fill the ticket deck's places in a random order, then the unseen ones out of
    the game. Uses only public information (the routes) and the world's generator, so
    the result, like determinize's, depends on nothing the seat cannot see. Offers and
    returned tickets keep determinize's uniform deal."""
    cdef uint8_t pool[MAX_TICKETS]
    cdef double e[3]
    cdef double total, r
    cdef uint64_t unseen[2]
    cdef uint64_t mine
    cdef int c, q, i, j, k, n, t, tmp
    e[0] = 1.0
    e[1] = exp(beta)
    e[2] = exp(2.0 * beta)
    for i in range(2):
        unseen[i] = w.removed[i]
        for q in range(w.n_players):
            unseen[i] &= ~w.p[q].discarded[i]
    for c in range(2):
        n = 0
        for q in range(w.n_players):
            if q == seat:
                continue
            for t in range(b.n_tickets):
                if get_bit(w.p[q].tickets, t) and ticket_class(b, t) == c:
                    pool[n] = t
                    n += 1
        for i in range(w.tdeck_n):
            t = w.tdeck[(w.tdeck_head + i) % MAX_TICKETS]
            if ticket_class(b, t) == c:
                pool[n] = t
                n += 1
        for t in range(b.n_tickets):
            if get_bit(unseen, t) and ticket_class(b, t) == c:
                pool[n] = t
                n += 1
                clear_bit(w.removed, t)
        if n == 0:
            continue
        for q in range(w.n_players):
            if q == seat:
                continue
            k = 0
            for t in range(b.n_tickets):
                if get_bit(w.p[q].tickets, t) and ticket_class(b, t) == c:
                    clear_bit(w.p[q].tickets, t)
                    k += 1
            mine = w.p[q].cities
            for j in range(k):
                total = 0.0
                for i in range(n):
                    total += e[((mine >> b.ticket_a[pool[i]]) & 1) + ((mine >> b.ticket_b[pool[i]]) & 1)]
                r = rng_uniform(&w.rng) * total
                i = 0
                while i < n - 1:
                    r -= e[((mine >> b.ticket_a[pool[i]]) & 1) + ((mine >> b.ticket_b[pool[i]]) & 1)]
                    if r < 0:
                        break
                    i += 1
                set_bit(w.p[q].tickets, pool[i])
                n -= 1
                pool[i] = pool[n]
        for i in range(n - 1, 0, -1):       # the rest, shuffled
            j = rng_below(&w.rng, i + 1)
            tmp = pool[i]
            pool[i] = pool[j]
            pool[j] = tmp
        j = 0
        for i in range(w.tdeck_n):
            t = w.tdeck[(w.tdeck_head + i) % MAX_TICKETS]
            if ticket_class(b, t) == c:
                w.tdeck[(w.tdeck_head + i) % MAX_TICKETS] = pool[j]
                j += 1
        while j < n:
            set_bit(w.removed, pool[j])
            j += 1


def _sample_world(game, int seat, uint64_t seed, double infer):
    """A world as the search samples it for `seat` in the position of `game` (for tests):
    (check_state's code, 0 when consistent; per player, the tickets held)."""
    cdef GameState w
    cdef CompiledBoard cb = copy_position(game, &w)
    cdef int q, t
    sample_world(&cb.c, &w, seat, seed, infer)
    return check_state(&cb.c, &w), [[t for t in range(cb.c.n_tickets) if get_bit(w.p[q].tickets, t)]
                                      for q in range(w.n_players)]


def _sampled_hands(game, int seat, uint64_t seed, double infer):
    """(tests) the hands of a world as the search samples it for `seat`: per player,
    card counts by type."""
    cdef GameState w
    cdef CompiledBoard cb = copy_position(game, &w)
    cdef int q, t
    sample_world(&cb.c, &w, seat, seed, infer)
    return [[w.p[q].hand[t] for t in range(N_CARD_TYPES)] for q in range(w.n_players)]


cdef inline long long _now_ns() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec * 1000000000 + ts.tv_nsec


def bench_playouts(SearchPolicy policy, game, int n, uint64_t seed=0):
    """Benchmark helper (scripts/bench.py): in the current position of `game`, time `n`
    search playouts of the policy's first candidate (sampling a world, playing out,
    scoring, bookkeeping); `n` plain playouts of the same action by the rollout policy
    from the true position (copy, play to the end, score); `n` samplings of a world
    alone; and `n` plain playouts from sampled worlds (sampling included). Returns the
    four times in seconds: the search's own cost per playout is the first less the last;
    the last less the third is what the rollout policy takes to play the positions the
    search plays."""
    cdef GameState s
    cdef GameState w
    cdef ScoreC sc[MAX_PLAYERS]
    cdef CompiledBoard cb = copy_position(game, &s)
    cdef const BoardC* b = &cb.c
    cdef int seat = s.current, i, k
    cdef long long t0, t1, t2, t3, t4
    cdef uint64_t x = seed
    buf = np.empty(MAX_ACTIONS, dtype=np.int32)
    cdef int32_t[::1] legal = buf
    cdef int n_legal = legal_actions(b, &s, &legal[0])
    if n_legal == 0:
        raise ValueError("the game is over")
    if n > policy.cap:
        raise ValueError(f"n must be at most {policy.cap} (the policy's playouts + 2)")
    with nogil:
        policy.list_candidates(b, &s, seat, &legal[0], n_legal, seed)
        policy.visits[0] = 0
        policy.usum[0] = policy.wins[0] = policy.msum[0] = 0.0
        t0 = _now_ns()
        policy.run(b, &s, seat, 0, n, seed)
        t1 = _now_ns()
        for i in range(n):
            memcpy(&w, &s, sizeof(GameState))
            rng_seed(&w.rng, splitmix64(&x))
            _plain_playout(policy, b, &w, s.turn, sc, &x)
        t2 = _now_ns()
        for i in range(n):
            memcpy(&w, &s, sizeof(GameState))
            sample_world(b, &w, seat, splitmix64(&x), policy.infer)
        t3 = _now_ns()
        for i in range(n):
            memcpy(&w, &s, sizeof(GameState))
            sample_world(b, &w, seat, splitmix64(&x), policy.infer)
            _plain_playout(policy, b, &w, s.turn, sc, &x)
        t4 = _now_ns()
    return (t1 - t0) * 1e-9, (t2 - t1) * 1e-9, (t3 - t2) * 1e-9, (t4 - t3) * 1e-9


cdef void _plain_playout(SearchPolicy policy, const BoardC* b, GameState* w, int turn,
                         ScoreC* sc, uint64_t* x) noexcept nogil:
    """bench_playouts: the first candidate, then the rollout policy to the end."""
    cdef int q
    apply_legal(b, w, policy.cand[0], NULL)
    for q in range(w.n_players):
        policy.roll_start(q, b, w, splitmix64(x))
    while w.phase != PH_OVER and w.turn < turn + PLAYOUT_TURNS:
        if policy.roll_step(b, w) != STEP_OK:
            break
    score_game(b, w, sc)
