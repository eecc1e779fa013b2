# Fuzzing loop: plays many complete games in one call without the GIL and checks every
# invariant of the core after every action (check_state, a non-empty legal set until the
# game is over, every chosen action legal) and the final scores against their parts. It
# counts violations instead of stopping at the first, and counts the rare situations the
# games reached (edge cases), so that scripts/fuzz.py can show the rules were exercised
# there. Used by scripts/fuzz.py; docs/fuzz.md records its results.
# Each decision is the core's one step (play_step, _policy.pxd, with `check`: every action
# checked, every invariant after it); the game loop around it is the fuzzer's own, not the
# batch loop's play_game, because it notes the state before each decision and the edge
# cases after it, and records a violation and goes on to the next game instead of raising
# (tests/test_decision_step.py checks it reports a faulty policy as the other loops do).
from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.string cimport memset

from ttrsim._structs cimport *
from ttrsim._engine cimport (GameState, CompiledBoard, action_a, action_kind, check_state,
                             discard_total, game_init, score_game)
from ttrsim._rng cimport rng_below, rng_seed, splitmix64
from ttrsim._bits cimport get_bit
from ttrsim._policy cimport (Policy, PolicyRef, STEP_ENGINE, STEP_OK, Step, play_step, policy_ref,
                             ref_start)

import numpy as np

from ttrsim._engine import CHECK_MESSAGES

# Violation codes beyond check_state's (1..len(CHECK_MESSAGES) - 1).
_EXTRA = (
    "no legal action although the game is not over",
    "a policy chose an action that is not legal (or failed)",
    "a final score is not the sum of its parts",
    "ticket points are not completed minus failed ticket values",
    "a rank disagrees with the final totals",
    "the game did not end within the turn limit",
    "stations or trains left outside the board's bounds at the end",
    "a policy that builds its own action returned none legal (empty legal set or a bad draw)",
    "the Globetrotter went to a seat without the most completed tickets, or not to one with",
)
VIOLATION_MESSAGES = tuple(CHECK_MESSAGES) + _EXTRA
cdef enum:
    V_BASE = 15            # == len(CHECK_MESSAGES); checked in fuzz_batch
    V_NO_LEGAL = 15
    V_ILLEGAL = 16
    V_SCORE_PARTS = 17
    V_TICKET_POINTS = 18
    V_RANK = 19
    V_TRUNCATED = 20
    V_END_BOUNDS = 21
    V_NO_LEGAL_OR_ILLEGAL = 22
    V_GLOBETROTTER = 23
    N_VIOLATIONS = 24

# Edge cases: games in which each situation occurred at least once.
EDGE_CASES = (
    "deck_and_discards_empty",    # no train card left to draw (deck and discards both empty)
    "deck_reshuffled",            # the deck ran out and the discards were shuffled into it
    "ticket_deck_empty",          # no destination ticket left to draw
    "faceup_slot_empty",          # a face-up slot stayed empty for want of cards
    "pass_played",                # some player had nothing legal and passed
    "all_players_passed",         # the game ended because every player passed in a row
    "final_round_at_0_trains",    # the final round triggered by a player left with 0 trains
    "final_round_at_1_train",
    "final_round_at_2_trains",
    "final_round_other",          # triggered at more trains (boards with a higher trigger)
    "tunnel_paid",
    "tunnel_declined",
    "station_built",
    "all_stations_built",         # some player built every station
    "double_route_both_halves",   # both halves of a double owned (enough players)
    "tie_for_first",              # two or more seats share rank 1
    "ticket_draw_short",          # a ticket draw offered fewer than the board's count
    "globetrotter_shared",        # two or more seats scored the Globetrotter
    "globetrotter_nobody",        # a Globetrotter board's game in which no ticket was completed
)
cdef enum:
    E_DECK_DRY = 0
    E_RESHUFFLE = 1
    E_TDECK_DRY = 2
    E_FACEUP_EMPTY = 3
    E_PASS = 4
    E_ALL_PASSED = 5
    E_FINAL_0 = 6
    E_FINAL_1 = 7
    E_FINAL_2 = 8
    E_FINAL_OTHER = 9
    E_TUNNEL_PAID = 10
    E_TUNNEL_DECLINED = 11
    E_STATION = 12
    E_ALL_STATIONS = 13
    E_DOUBLE_BOTH = 14
    E_TIE = 15
    E_DRAW_SHORT = 16
    E_GLOBE_SHARED = 17
    E_GLOBE_NOBODY = 18
    N_EDGES = 19


cdef inline int count_set(int x) noexcept nogil:
    cdef int n = 0
    while x:
        x &= x - 1
        n += 1
    return n


cdef class HoardPolicy(Policy):
    """``hoard`` (fuzzing only): takes a train card whenever it may (blind first, else a
    face-up card), else draws destination tickets and keeps them all; only when it can
    draw nothing does it claim the shortest route it can pay (the short routes go first,
    so that late in the game no open route fits the trains left), else play a uniformly
    random legal action (station, tunnel answer or pass). Several hoarders empty the deck, the discards and the ticket deck and
    leave hands that pay for few routes: games that end with every player passing."""

    cdef int32_t choose(self, const BoardC* b, const GameState* s, int seat,
                        const int32_t* legal, int n_legal) noexcept nogil:
        cdef int i, k, key, best = -1, best_key = 1000
        for i in range(n_legal):
            k = action_kind(legal[i])
            if k == ACT_DRAW_BLIND:
                key = 0
            elif k == ACT_DRAW_FACEUP:
                key = 1
            elif k == ACT_DRAW_TICKETS:
                key = 2
            elif k == ACT_KEEP:
                key = 100 - count_set(action_a(legal[i]))     # keep the most tickets
            else:
                continue
            if key < best_key:
                best_key = key
                best = i
        if best >= 0:
            return legal[best]
        # nothing to draw: claim the shortest route it can, so that the short routes go
        # first and players near the end hold trains that no open route fits; else any
        # legal action
        best_key = 0
        for i in range(n_legal):
            if action_kind(legal[i]) == ACT_CLAIM:
                key = (MAX_LEN - b.route_len[action_a(legal[i])]) * 64 + rng_below(&self.rng, 64)
                if key > best_key:
                    best_key = key
                    best = i
        if best >= 0:
            return legal[best]
        return legal[rng_below(&self.rng, n_legal)]



cdef enum:
    ILLEGAL_ACTION = 127 << 24     # action kind 127 does not exist: never legal
ILLEGAL_CODE = ILLEGAL_ACTION


cdef class FaultyPolicy(Policy):
    """A policy that breaks the rules on purpose (fuzzing and tests: every loop must
    report it): a uniformly random legal action at each of its first `after` decisions
    of a game, then at every later one an action that is never legal (``fail=False``:
    ILLEGAL_CODE) or a failure (``fail=True``: returns -1 with a RuntimeError kept).
    ``vouch=True``: it vouches for its actions as the built-in policies do
    (``returns_legal``), falsely, so that a loop that checks (``play_step`` with ``check``)
    must still catch its illegal action."""
    cdef readonly int after
    cdef readonly bint fail
    cdef int count

    def __init__(self, int after=0, bint fail=False, spec=None, bint vouch=False):
        Policy.__init__(self, spec or "faulty")
        self.after = after
        self.fail = fail
        self.returns_legal = vouch

    @property
    def vouch(self):
        return bool(self.returns_legal)

    cdef void start_game(self, const BoardC* b, const GameState* s, int seat,
                         uint64_t seed) noexcept nogil:
        rng_seed(&self.rng, seed)
        self.count = 0

    cdef int32_t choose(self, const BoardC* b, const GameState* s, int seat,
                        const int32_t* legal, int n_legal) noexcept nogil:
        self.count += 1
        if self.count <= self.after:
            return legal[rng_below(&self.rng, n_legal)]
        if self.fail:
            with gil:
                self.error = RuntimeError(f"faulty: gives up at decision {self.count}")
            return -1
        return ILLEGAL_ACTION

    @property
    def params(self):
        return dict(after=self.after, fail=self.fail, vouch=bool(self.returns_legal))


cdef int check_final(const BoardC* b, const GameState* s, const ScoreC* sc) noexcept nogil:
    """0, or the V_* code of the first final-score invariant broken."""
    cdef int q, j, t, pts, ahead, n_done, n_failed, most = 0
    cdef bint done
    for q in range(s.n_players):
        if sc[q].total != (sc[q].route_points + sc[q].ticket_points + sc[q].longest_bonus
                           + sc[q].globetrotter + sc[q].station_points
                           + sc[q].attraction_points):
            return V_SCORE_PARTS
        if sc[q].route_points != s.p[q].route_points:
            return V_SCORE_PARTS
        if sc[q].station_points != s.p[q].stations_left * b.station_points:
            return V_SCORE_PARTS
        if sc[q].stations_built != b.stations - s.p[q].stations_left:
            return V_SCORE_PARTS
        if sc[q].longest_bonus != 0 and sc[q].longest_bonus != b.longest_bonus:
            return V_SCORE_PARTS
        pts = 0
        n_done = 0
        n_failed = 0
        for t in range(b.n_tickets):
            if get_bit(s.p[q].tickets, t):
                done = get_bit(sc[q].completed, t)
                if done:
                    pts += b.ticket_points[t]
                    n_done += 1
                else:
                    pts -= b.ticket_points[t]
                    n_failed += 1
            elif get_bit(sc[q].completed, t):
                return V_TICKET_POINTS       # completed a ticket it does not hold
        if (pts != sc[q].ticket_points or n_done != sc[q].tickets_completed
                or n_failed != sc[q].tickets_failed or sc[q].tickets_by_station > n_done):
            return V_TICKET_POINTS
        if (s.p[q].trains < 0 or s.p[q].trains > b.trains or s.p[q].stations_left < 0
                or s.p[q].stations_left > b.stations):
            return V_END_BOUNDS
        if n_done > most:
            most = n_done
    for q in range(s.n_players):
        # recounted from the completed-ticket bitsets checked above
        if sc[q].globetrotter != (b.globetrotter_bonus if b.globetrotter_bonus > 0 and most > 0
                                  and sc[q].tickets_completed == most else 0):
            return V_GLOBETROTTER
    for q in range(s.n_players):
        ahead = 0
        for j in range(s.n_players):
            if sc[j].total > sc[q].total:
                ahead += 1
        if sc[q].rank < 1 + ahead:           # tie-breaks only push a rank further back
            return V_RANK
        if ahead == 0 and sc[q].rank > 1:
            # a seat with the top total ranks behind only seats with the same total
            for j in range(s.n_players):
                if j != q and sc[j].total == sc[q].total and sc[j].rank == 1:
                    break
            else:
                return V_RANK
    return 0


def fuzz_batch(CompiledBoard cb, int n_players, list policies, uint64_t[::1] seeds,
               int max_turns=TURN_LIMIT):
    """Play ``len(seeds)`` games (game i from ``seeds[i]``, ``policies[k]`` in seat k) and
    check every invariant after every action and at the end of each game.

    Returns a dict: ``games``, ``actions`` (actions applied), ``turns`` (sum over games),
    ``violations`` (games with a violation: a game stops at its first),
    ``by_code`` (count per code of ``VIOLATION_MESSAGES``), ``first`` (``None`` or
    ``(seed, turn, code)`` of the first violation), ``edges`` (games per
    ``EDGE_CASES`` entry in which the situation occurred at least once)."""
    cdef const BoardC* b = &cb.c
    cdef Py_ssize_t n_games = seeds.shape[0], g
    cdef int seat, k, code, q, st, stations_before, prev, slot, t_route = -1, kind
    cdef Step step
    cdef uint64_t x
    cdef int64_t n_actions = 0, n_turns = 0, n_bad = 0
    cdef int64_t by_code[N_VIOLATIONS]
    cdef int64_t edges[N_EDGES]
    cdef bint seen[N_EDGES]
    cdef uint64_t first_seed = 0
    cdef int first_turn = -1, first_code = 0, last_round_before, deck_before
    cdef GameState s
    cdef ScoreC sc[MAX_PLAYERS]
    if len(CHECK_MESSAGES) != V_BASE:
        raise RuntimeError("check_state gained codes: update V_* in _fuzz.pyx")
    if not 2 <= n_players <= MAX_PLAYERS:
        raise ValueError(f"player count {n_players} outside 2..{MAX_PLAYERS}")
    if len(policies) != n_players or len(set(map(id, policies))) != n_players:
        raise ValueError("fuzz_batch needs one distinct Policy instance per seat")
    for pk in policies:
        if not isinstance(pk, Policy):
            raise TypeError(f"fuzz_batch needs compiled policies, got {type(pk).__name__}")
    cdef PolicyRef refs[MAX_PLAYERS]    # seat k's policy (`policies` keeps them alive)
    for k in range(n_players):
        policy_ref(policies[k], &refs[k])
    legal_a = np.empty(MAX_ACTIONS, dtype=np.int32)
    cdef int32_t[::1] legal = legal_a
    memset(by_code, 0, sizeof(by_code))
    memset(edges, 0, sizeof(edges))
    with nogil:
        for g in range(n_games):
            memset(seen, 0, sizeof(seen))
            game_init(b, &s, n_players, seeds[g])
            code = check_state(b, &s)
            x = seeds[g]
            for seat in range(n_players):
                ref_start(&refs[seat], b, &s, seat, splitmix64(&x))
            while code == 0 and s.phase != PH_OVER:
                if s.turn >= max_turns:
                    code = V_TRUNCATED
                    break
                seat = s.current
                last_round_before = s.last_round
                deck_before = s.deck_n
                prev = s.phase
                stations_before = s.p[seat].stations_left
                t_route = s.t_route
                # the loops' one decision step, checking everything: every action is
                # checked, a policy given the list gets a non-empty one (for one that
                # builds its action itself, `random`: sample_legal, the action it returns
                # is the witness that the set is non-empty), every invariant after it
                st = play_step(&refs[seat], b, &s, &legal[0], NULL, True, &step, NULL)
                kind = action_kind(step.act) if step.act >= 0 else -1
                if kind == ACT_PASS:
                    seen[E_PASS] = True
                if st == STEP_ENGINE and step.code == 0:
                    code = V_NO_LEGAL
                    break
                if st != STEP_OK and st != STEP_ENGINE:
                    code = V_ILLEGAL if refs[seat].needs_legal else V_NO_LEGAL_OR_ILLEGAL
                    break
                n_actions += 1
                if st == STEP_ENGINE:
                    code = step.code
                    break
                # edge cases
                if kind == ACT_DRAW_TICKETS and s.n_pending[seat] < b.draw_tickets:
                    seen[E_DRAW_SHORT] = True
                if s.deck_n == 0 and discard_total(&s) == 0:
                    seen[E_DECK_DRY] = True
                if s.deck_n > deck_before:
                    seen[E_RESHUFFLE] = True
                if s.tdeck_n == 0:
                    seen[E_TDECK_DRY] = True
                for k in range(N_FACEUP):
                    if s.faceup[k] < 0:
                        seen[E_FACEUP_EMPTY] = True
                if prev == PH_TUNNEL:
                    if s.route_owner[t_route] == seat:
                        seen[E_TUNNEL_PAID] = True
                    else:
                        seen[E_TUNNEL_DECLINED] = True
                if s.p[seat].stations_left < stations_before:
                    seen[E_STATION] = True
                    if s.p[seat].stations_left == 0:
                        seen[E_ALL_STATIONS] = True
                if s.last_round and not last_round_before:
                    if s.p[seat].trains == 0:
                        seen[E_FINAL_0] = True
                    elif s.p[seat].trains == 1:
                        seen[E_FINAL_1] = True
                    elif s.p[seat].trains == 2:
                        seen[E_FINAL_2] = True
                    else:
                        seen[E_FINAL_OTHER] = True
            if code == 0:
                score_game(b, &s, sc)
                code = check_final(b, &s, sc)
            if code == 0:
                if s.ended_by_passes:
                    seen[E_ALL_PASSED] = True
                for k in range(b.n_routes):
                    if (b.route_partner[k] > k and s.route_owner[k] >= 0
                            and s.route_owner[b.route_partner[k]] >= 0):
                        seen[E_DOUBLE_BOTH] = True
                slot = 0
                for q in range(n_players):
                    if sc[q].rank == 1:
                        slot += 1
                if slot > 1:
                    seen[E_TIE] = True
                slot = 0
                for q in range(n_players):
                    if sc[q].globetrotter > 0:
                        slot += 1
                if slot > 1:
                    seen[E_GLOBE_SHARED] = True
                if b.globetrotter_bonus > 0 and slot == 0:
                    seen[E_GLOBE_NOBODY] = True
            n_turns += s.turn
            if code != 0:
                n_bad += 1
                by_code[code] += 1
                if first_turn < 0:
                    first_seed = seeds[g]
                    first_turn = s.turn
                    first_code = code
            for k in range(N_EDGES):
                if seen[k]:
                    edges[k] += 1
    return dict(
        games=int(n_games), actions=int(n_actions), turns=int(n_turns), violations=int(n_bad),
        by_code={VIOLATION_MESSAGES[c]: int(by_code[c]) for c in range(N_VIOLATIONS) if by_code[c]},
        first=None if first_turn < 0 else (int(first_seed), first_turn, first_code),
        edges={EDGE_CASES[k]: int(edges[k]) for k in range(N_EDGES)})
