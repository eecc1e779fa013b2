# The policy interface of the compiled core. A policy chooses one of the legal actions
# for the seat to act; the batch loop calls `choose` without the GIL. Subclass `Policy`
# in Cython (cimport ttrsim._policy) to write a compiled policy; see docs/policies.md.
from libc.stdint cimport int32_t, int64_t, uint64_t
from posix.time cimport CLOCK_MONOTONIC, clock_gettime, timespec
from ttrsim._structs cimport BoardC, GameState, Rng
from ttrsim._engine cimport (EventSink, apply_action, apply_legal, check_state, legal_actions,
                             sample_legal)


cdef class Policy:
    cdef Rng rng              # the policy's own random stream, reseeded every game
    cdef public str spec      # name and parameters, e.g. "tickets:stations=0"
    cdef object error         # exception raised inside a Python policy, if any
    cdef bint needs_legal     # False: choose() gets no list (legal=NULL, n_legal=0) and
                              # builds its action itself; the engine checks it is legal
    cdef bint returns_legal   # True: every action choose() returns is legal (checked by
                              # the policy itself), so the loops need not check it again
    cdef bint samples_legal   # True: choose() is sample_legal(b, s, &self.rng) (`random`);
                              # the loops call that directly

    # Called once per game for each seat the policy plays, before its first decision.
    cdef void start_game(self, const BoardC* b, const GameState* s, int seat,
                         uint64_t seed) noexcept nogil
    # Return a legal action (one of legal[0..n_legal-1] when needs_legal), or -1 to abort
    # the batch (self.error says why).
    cdef int32_t choose(self, const BoardC* b, const GameState* s, int seat,
                        const int32_t* legal, int n_legal) noexcept nogil


# For the adapters of Python players: reseed the policy and call target.start_game(seat,
# seed) when the target has one (an exception is kept in policy.error).
cdef void start_python(Policy policy, object target, int seat, uint64_t seed) noexcept nogil


# --- calling a policy without the GIL: the one way every loop of the core does it ---------
#
# A loop over seats (or over many games' seats) keeps one PolicyRef per seat: plain
# pointers to the policy object and to the first two entries of its type's method table,
# which are Policy's own cdef methods in the order declared above (Cython lays a subclass's
# table out with its base's entries first, and publishes it as the capsule
# `__pyx_vtable__`; this is how cimported classes are called across modules). The layout
# is verified when _policy is imported (check_layout); a change fails loudly there.
ctypedef void (*start_fn)(void* self, const BoardC* b, const GameState* s, int seat,
                          uint64_t seed) noexcept nogil
ctypedef int32_t (*choose_fn)(void* self, const BoardC* b, const GameState* s, int seat,
                              const int32_t* legal, int n_legal) noexcept nogil

ctypedef struct PolicyVtab:
    start_fn start_game
    choose_fn choose

ctypedef struct PolicyRef:
    void* obj               # borrowed: whoever made the ref keeps the policy alive
    PolicyVtab* vt
    Rng* random_rng         # samples_legal: its generator (sample_legal is called directly)
    bint needs_legal
    bint returns_legal


# Fill `ref` for `policy` (a compiled Policy; TypeError otherwise). The caller keeps a
# reference to the policy for as long as the ref is used.
cdef int policy_ref(object policy, PolicyRef* ref) except -1


cdef inline void ref_start(const PolicyRef* ref, const BoardC* b, const GameState* s,
                           int seat, uint64_t seed) noexcept nogil:
    ref.vt.start_game(ref.obj, b, s, seat, seed)


cdef inline int32_t ref_choose(const PolicyRef* ref, const BoardC* b, const GameState* s,
                               int seat, const int32_t* legal, int n_legal) noexcept nogil:
    return ref.vt.choose(ref.obj, b, s, seat, legal, n_legal)


# --- one decision: the step every loop that plays games takes --------------------------
#
# play_batch (and play_recorded through it), the environments' other seats, the search's
# playouts and the fuzzer all play a decision with `play_step`: the seat to act chooses
# through its PolicyRef, the choice is checked, then applied. `step_error` (below)
# turns a status other than STEP_OK into the one error every loop raises.
cdef enum:
    STEP_OK = 0
    STEP_POLICY = 1        # the policy returned -1 (its error says why)
    STEP_ILLEGAL = 2       # the action chosen is not legal (nothing was applied)
    STEP_ENGINE = 3        # with `check`: the engine listed no legal action for a policy
                           # given the list (Step.code 0), or an invariant broke after the
                           # action (Step.code: check_state's code)

ctypedef struct Step:
    int32_t act            # the action chosen (-1: none)
    int seat               # the seat that chose it
    int code               # STEP_ENGINE: see above


cdef inline int64_t step_clock() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec * 1000000000 + ts.tv_nsec


cdef inline int play_step(const PolicyRef* ref, const BoardC* b, GameState* s, int32_t* legal,
                       EventSink* sink, bint check, Step* out, int64_t* ns) noexcept nogil:
    """Play the decision of the seat to act in `s` with its policy `ref`: choose, check,
    apply (events go to `sink`, may be NULL); return a STEP_* status. `legal` is a buffer of
    MAX_ACTIONS codes, filled only for a policy that takes the list; a `random` policy's
    sample_legal is called directly. A policy that vouches for its actions (returns_legal)
    is applied without a second check, unless `check`: then every action is checked, an
    empty legal list is an engine failure rather than a call, and check_state runs after
    the action. `ns`: NULL, or nanoseconds to add to ns[0] (rules: listing, applying,
    checking) and ns[1] (the policy's choice)."""
    cdef int n = 0
    cdef int64_t t0 = 0, t1 = 0
    out.seat = s.current
    out.code = 0
    if ns != NULL:
        t0 = step_clock()
    if ref.random_rng != NULL:
        if ns != NULL:
            t1 = t0
        out.act = sample_legal(b, s, ref.random_rng)
    else:
        if ref.needs_legal:
            n = legal_actions(b, s, legal)
            if check and n <= 0:
                out.act = -1
                return STEP_ENGINE
        if ns != NULL:
            t1 = step_clock()
            ns[0] += t1 - t0
        out.act = ref_choose(ref, b, s, out.seat, legal, n)
    if ns != NULL:
        t0 = step_clock()
        ns[1] += t0 - t1
    if out.act == -1:
        return STEP_POLICY
    if ref.returns_legal and not check:
        apply_legal(b, s, out.act, sink)
    elif apply_action(b, s, out.act, sink) != 0:
        return STEP_ILLEGAL
    if check:
        out.code = check_state(b, s)
        if out.code != 0:
            return STEP_ENGINE
    if ns != NULL:
        ns[0] += step_clock() - t0
    return STEP_OK


# The error of a status other than STEP_OK, raised by the loop that played the step:
# PolicyError for STEP_POLICY (the policy's own error, or one wrapping it) and STEP_ILLEGAL,
# AssertionError for STEP_ENGINE. `where` names the game, e.g. "game 3, turn 41" or
# "env 2, turn 7"; `role` prefixes the policy ("opponent policy" in the environments).
cdef object step_error(int status, const Step* step, Policy policy, str where,
                       str role=*)
