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
