# Built-in compiled policies.
from libc.stdint cimport int32_t
from ttrsim._structs cimport BoardC, GameState
from ttrsim._rng cimport rng_below
from ttrsim._policy cimport Policy


cdef class RandomPolicy(Policy):
    """``random``: a uniformly random legal action at every decision."""

    cdef int32_t choose(self, const BoardC* b, const GameState* s, int seat,
                        const int32_t* legal, int n_legal) noexcept nogil:
        return legal[rng_below(&self.rng, n_legal)]
