# Policy base class and the adapter that lets any Python object play a seat.
from libc.stdint cimport int32_t, uint64_t
from ttrsim._structs cimport BoardC, GameState
from ttrsim._rng cimport rng_seed
from ttrsim._engine cimport observation_dict


class PolicyError(RuntimeError):
    """A policy answered with an illegal or malformed action, or raised."""


cdef class Policy:
    """Base class of compiled policies. Subclasses override ``choose`` (and optionally
    ``start_game``); the default ``start_game`` reseeds ``self.rng``. A subclass that
    builds its actions itself sets ``self.needs_legal = False`` (in ``__cinit__``) to spare
    the engine listing every legal action at every decision."""

    def __cinit__(self, *args, **kwargs):
        self.needs_legal = True

    def __init__(self, spec=None):
        self.spec = spec or type(self).__name__

    cdef void start_game(self, const BoardC* b, const GameState* s, int seat,
                         uint64_t seed) noexcept nogil:
        rng_seed(&self.rng, seed)

    cdef int32_t choose(self, const BoardC* b, const GameState* s, int seat,
                        const int32_t* legal, int n_legal) noexcept nogil:
        with gil:
            self.error = NotImplementedError(f"{type(self).__name__} does not implement choose()")
        return -1

    def take_error(self):
        """The exception that aborted the last batch (and clear it), or None."""
        err = self.error
        self.error = None
        return err

    def __repr__(self):
        return f"<policy {self.spec}>"


cdef void start_python(Policy policy, object target, int seat, uint64_t seed) noexcept nogil:
    rng_seed(&policy.rng, seed)
    with gil:
        start = getattr(target, "start_game", None)
        if callable(start):
            try:
                start(seat, seed)
            except Exception as exc:
                policy.error = exc


cdef class PyPolicy(Policy):
    """Adapter: a Python object with ``choose(observation, legal_actions)`` or a plain
    callable ``f(observation, legal_actions)`` plays a seat. It receives the seat's
    observation (only what that seat may know) and the legal actions as
    ``ttrsim.Action`` objects, and must return one of them (or its integer code)."""
    cdef object fn
    cdef object target
    cdef object board

    def __init__(self, target, board, spec=None):
        from ttrsim.actions import describe_policy

        self.target = target
        self.board = board
        if hasattr(target, "choose") and callable(target.choose):
            self.fn = target.choose
        elif callable(target):
            self.fn = target
        else:
            raise TypeError(f"{target!r} is not a policy: give a callable "
                            "f(observation, legal_actions) or an object with a choose() method")
        Policy.__init__(self, spec or describe_policy(target))

    cdef void start_game(self, const BoardC* b, const GameState* s, int seat,
                         uint64_t seed) noexcept nogil:
        start_python(self, self.target, seat, seed)

    cdef int32_t choose(self, const BoardC* b, const GameState* s, int seat,
                        const int32_t* legal, int n_legal) noexcept nogil:
        with gil:
            return self._choose_py(b, s, seat, legal, n_legal)

    cdef int32_t _choose_py(self, const BoardC* b, const GameState* s, int seat,
                            const int32_t* legal, int n_legal):
        from ttrsim.actions import Action, check_choice

        if self.error is not None:
            return -1
        observation = observation_dict(b, s, seat)
        actions = [Action.decode(legal[i], self.board, observation) for i in range(n_legal)]
        try:
            answer = self.fn(observation, actions)
            return check_choice(answer, actions, self.spec, seat, s.turn)
        except Exception as exc:
            self.error = exc
            return -1
