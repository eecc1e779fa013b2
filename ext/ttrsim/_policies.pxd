from ttrsim._planning cimport Needs, Plan
from ttrsim._policy cimport Policy

# The plan a planning policy (tickets, routes, greedy) follows and the cards it still
# needs, as its last decision left them; NULL for any other policy. The pointers stay
# valid while the policy lives (they point into it).
cdef const Plan* followed_plan(Policy p, const Needs** needs)
