# One game played exactly as the batch loop plays it (same deal, same policy seeds, same
# calls), keeping its decisions: the action codes in order and what each tunnel revealed.
# ttrsim.record rebuilds every position from them by replaying the codes on a GameCore.
from libc.stdint cimport int32_t, int64_t, uint64_t

from ttrsim._structs cimport *
from ttrsim._engine cimport (EventSink, GameState, CompiledBoard, apply_action, game_init,
                             legal_actions, sample_legal)
from ttrsim._rng cimport splitmix64
from ttrsim._policy cimport Policy, PolicyRef, policy_ref, ref_choose, ref_start

import numpy as np

from ttrsim.actions import PolicyError


cdef struct TunnelLog:
    int32_t* rows              # decision, route, color, n_revealed, card0..2, extra, outcome
    int n
    int cap
    int decision


cdef void log_tunnel(void* ctx, const GameState* s, int seat, int route, int color,
                     int revealed, int extra, int outcome) noexcept nogil:
    cdef TunnelLog* log = <TunnelLog*>ctx
    cdef int32_t* row
    cdef int i
    if log.n >= log.cap:
        log.n = log.cap + 1        # overflow, reported by play_recorded
        return
    row = log.rows + log.n * 9
    row[0] = log.decision
    row[1] = route
    row[2] = color
    row[3] = revealed
    for i in range(3):
        row[4 + i] = s.revealed[i] if i < revealed else -1
    row[7] = extra
    row[8] = outcome
    log.n += 1


TUNNEL_COLS = ("decision", "route", "color", "n_revealed", "card0", "card1", "card2", "extra",
               "outcome")


def play_recorded(CompiledBoard cb, int n_players, list policies, uint64_t seed,
                  int64_t game=0, bint rotate=False, int max_turns=10000):
    """Play one game from ``seed`` as ``play_batch`` plays game ``game`` of a batch (the same
    deal, the same seeds for the policies, the same seating with ``rotate``) and return its
    decisions: ``actions`` (int32 codes in order), ``seats`` (who chose each), ``slot``
    (policy slot of each seat), ``tunnels`` (one row per tunnel attempt, ``TUNNEL_COLS``),
    ``truncated``. The policies are the batch's: one distinct fresh ``Policy`` per slot."""
    cdef const BoardC* b = &cb.c
    cdef GameState s
    cdef EventSink sink
    cdef TunnelLog log
    cdef int seat, n_legal, k
    cdef int32_t act
    cdef uint64_t x = seed
    cdef int slot_of_seat[MAX_PLAYERS]
    cdef PolicyRef refs[MAX_PLAYERS]     # slot k's policy, called as the batch loop calls it
    cdef PolicyRef* ref
    if not 2 <= n_players <= MAX_PLAYERS:
        raise ValueError(f"player count {n_players} outside 2..{MAX_PLAYERS}")
    if len(policies) != n_players or len(set(map(id, policies))) != n_players:
        raise ValueError("play_recorded needs one distinct Policy instance per seat")
    for k in range(n_players):
        policy_ref(policies[k], &refs[k])
    legal = np.empty(MAX_ACTIONS, dtype=np.int32)
    cdef int32_t[::1] v_legal = legal
    tunnels = np.full((4096, 9), -1, dtype=np.int32)
    cdef int32_t[:, ::1] v_tun = tunnels
    log.rows = &v_tun[0, 0]
    log.n = 0
    log.cap = 4096
    log.decision = 0
    sink.ctx = &log
    sink.on_claim = NULL
    sink.on_tunnel = log_tunnel
    sink.on_station = NULL
    sink.on_offer = NULL
    actions, seats = [], []
    truncated = False
    game_init(b, &s, n_players, seed)
    for seat in range(n_players):
        slot_of_seat[seat] = (seat + game) % n_players if rotate else seat
    for seat in range(n_players):
        ref_start(&refs[slot_of_seat[seat]], b, &s, seat, splitmix64(&x))
    while s.phase != PH_OVER:
        if s.turn >= max_turns:
            truncated = True
            break
        seat = s.current
        ref = &refs[slot_of_seat[seat]]
        n_legal = legal_actions(b, &s, &v_legal[0]) if ref.needs_legal else 0
        with nogil:
            if ref.random_rng != NULL:
                act = sample_legal(b, &s, ref.random_rng)
            else:
                act = ref_choose(ref, b, &s, seat, &v_legal[0], n_legal)
        pol = policies[slot_of_seat[seat]]
        if act == -1:
            err = pol.take_error()
            where = f"policy {pol.spec!r} (seat {seat}, game {game}, turn {s.turn})"
            if isinstance(err, PolicyError):
                raise err
            raise PolicyError(f"{where} failed: {err!r}") from err
        log.decision = len(actions)
        # every action is checked here, whatever the policy (the batch loop trusts the
        # built-in ones); a legal action has the same effect either way
        if apply_action(b, &s, act, &sink) != 0:
            raise PolicyError(f"policy {pol.spec!r} (seat {seat}, game {game}, turn {s.turn}) "
                              f"chose action {act}, which is not legal")
        actions.append(act)
        seats.append(seat)
    if log.n > log.cap:
        raise MemoryError("more than 4096 tunnel attempts in one game")
    return dict(actions=np.array(actions, dtype=np.int32), seats=np.array(seats, dtype=np.int8),
                slot=np.array([slot_of_seat[k] for k in range(n_players)], dtype=np.int8),
                tunnels=tunnels[:log.n].copy(), truncated=truncated)
