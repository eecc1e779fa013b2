# cython: language_level=3, boundscheck=False, wraparound=False
"""A user-compiled policy: claims the longest route it can afford, else draws blind.

Build it against the installed ttrsim (see README.md):

    python setup.py build_ext --inplace

then play it like any built-in policy:

    from greedy_claim import GreedyClaim
    ttrsim.simulate("europe", [GreedyClaim(), "tickets"], games=1000)

It receives the list of legal actions (``needs_legal`` stays True) and picks from it, the
simplest way to write a policy; see docs/policies.md for building actions directly.
"""
from libc.stdint cimport int32_t, uint64_t

from ttrsim._structs cimport *          # BoardC, GameState, ACT_* action kinds, WILD ...
from ttrsim._engine cimport action_a, action_kind, make_action
from ttrsim._policy cimport Policy


cdef class GreedyClaim(Policy):
    """Claim the longest affordable route; otherwise draw blind (or take any card)."""

    cdef long long claims        # per-instance C state: kept across games, never shared

    def __init__(self):
        Policy.__init__(self, "greedy_claim")
        self.claims = 0

    @property
    def claims_made(self):
        return self.claims

    def __reduce__(self):
        # make_policy copies a Policy instance given as a spec (one per seat) and the
        # runner pickles policies to its workers: rebuild a fresh instance.
        return (GreedyClaim, ())

    cdef void start_game(self, const BoardC* b, const GameState* s, int seat,
                         uint64_t seed) noexcept nogil:
        # Called at the start of every game for the seat this instance plays.
        Policy.start_game(self, b, s, seat, seed)      # reseeds self.rng

    cdef int32_t choose(self, const BoardC* b, const GameState* s, int seat,
                        const int32_t* legal, int n_legal) noexcept nogil:
        cdef int i, kind, best = -1, best_len = 0, blind = -1, length
        if s.phase == PH_SETUP_TICKETS or s.phase == PH_KEEP_TICKETS:
            # keep actions come by increasing mask: legal[0] keeps the fewest allowed
            return legal[0]
        if s.phase == PH_TUNNEL:
            # legal[0] declines; pay with as few wild cards as the hand allows
            return legal[1] if n_legal > 1 else legal[0]
        for i in range(n_legal):
            kind = action_kind(legal[i])
            if kind == ACT_CLAIM:
                length = b.route_len[action_a(legal[i])]
                if length > best_len:
                    best_len = length
                    best = i
            elif kind == ACT_DRAW_BLIND:
                blind = i
        if best >= 0 and s.phase == PH_TURN:
            self.claims += 1
            return legal[best]
        if blind >= 0:
            return legal[blind]
        return legal[0]       # a face-up card, new tickets, a station, or pass
