# The policy interface of the compiled core. A policy chooses one of the legal actions
# for the seat to act; the batch loop calls `choose` without the GIL. Subclass `Policy`
# in Cython (cimport ttrsim._policy) to write a compiled policy; see docs/policies.md.
from libc.stdint cimport int32_t, uint64_t
from ttrsim._structs cimport BoardC, GameState, Rng


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
