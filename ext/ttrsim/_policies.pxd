from libc.stdint cimport int32_t
from ttrsim._structs cimport BoardC, GameState
from ttrsim._planning cimport Needs, Plan, PlanParams
from ttrsim._policy cimport Policy

# The plan a planning policy (tickets, routes, greedy) follows and the cards it still
# needs, as its last decision left them; NULL for any other policy. The pointers stay
# valid while the policy lives (they point into it).
cdef const Plan* followed_plan(Policy p, const Needs** needs)


# The base of the policies that follow a planning policy of their own for the seat, asked
# at every decision so that its plan stays current: `expert` and `blocker` follow
# `tickets`, `rush` follows `routes`. It owns that planner, its parameters, its start at
# every game and its choice; pickling is Policy's own (rebuilt from `params`).
cdef class PlanFollower(Policy):
    cdef str name                       # the registry name, for errors
    cdef Policy tk                      # this seat's planner (tickets; routes for rush)
    cdef const Plan* tk_plan            # the plan it follows and the cards that plan
    cdef const Needs* tk_nd             #   still needs, as its last decision left them
    cdef dict tk_params                 # the planner's parameters (its `params`)
    cdef double risk                    # the planner's tunnel risk
    cdef int tunnels                    # the planner's `tunnels` (0: no tunnel claims)
    cdef PlanParams prm                 # weights of the policy's own plans (the defaults)

    # The planner's choice at this decision (-1 with self.error set when it fails).
    cdef int32_t tickets_choice(self, const BoardC* b, const GameState* s, int seat) noexcept nogil
