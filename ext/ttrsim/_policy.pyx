# Policy base class, the adapter that lets any Python object play a seat, and the one
# way the core's loops call a seat's policy without the GIL (PolicyRef, see _policy.pxd).
from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_IsValid
from libc.stdint cimport int32_t, uint64_t
from ttrsim._structs cimport BoardC, GameState
from ttrsim._rng cimport rng_seed
from ttrsim._engine cimport observation_dict

from ttrsim._engine import CHECK_MESSAGES


# The error is defined with the action codec (pure Python, beneath the compiled core) so
# that the codec's check of a Python policy's answer need not import this module back.
from ttrsim.actions import PolicyError


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

    @property
    def params(self):
        """The parameters the policy was made with (its constructor's keywords)."""
        return {}

    def init_args(self):
        """The keywords that make a fresh instance with this policy's parameters:
        ``params``, unless the constructor takes more (the search's rollout instances)."""
        return self.params

    def __reduce__(self):
        # the one way every compiled policy is copied and pickled: a fresh instance made
        # from init_args() under the same spec (its per-game state is not kept)
        return (rebuild_policy, (type(self), self.init_args(), self.spec))

    def __repr__(self):
        return f"<policy {self.spec}>"


def rebuild_policy(cls, kwargs, spec):
    """Unpickle / copy a compiled policy: ``cls(**kwargs)`` named ``spec``."""
    obj = cls(**kwargs)
    obj.spec = spec
    return obj


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

    def init_args(self):
        return dict(target=self.target, board=self.board)

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


cdef object step_error(int status, const Step* step, Policy policy, str where,
                       str role="policy"):
    who = f"{role} {policy.spec!r} (seat {step.seat}, {where})"
    if status == STEP_ILLEGAL:
        return PolicyError(f"{who} chose action {step.act}, which is not legal")
    if status == STEP_ENGINE:
        if step.code == 0:
            return AssertionError(f"{who}: the engine lists no legal action although the "
                                  "game is not over")
        return AssertionError(f"{who}: after its action {step.act}, invariant {step.code} "
                              f"broken: {CHECK_MESSAGES[step.code]}")
    err = policy.take_error()
    if isinstance(err, PolicyError):
        return err
    exc = PolicyError(f"{who} failed: {err!r}")
    exc.__cause__ = err
    return exc


# --- PolicyRef: calling policies through their method tables --------------------------

cdef extern from *:
    """
    /* The head of every Cython extension object with cdef methods: the object header,
       then the pointer to its type's method table. */
    typedef struct { PyObject_HEAD void* __pyx_vtab; } ttrsim_cython_object_head;
    """
    ctypedef struct ttrsim_cython_object_head:
        void* __pyx_vtab


_LAYOUT_HELP = ("ttrsim's compiled loops call policies through Cython's method tables "
               "(ext/ttrsim/_policy.pxd, PolicyRef) and this build's layout differs from the "
               "one they rely on: {}. Rebuild with the Cython version pinned in pyproject.toml "
               "(pip install -e .) or update PolicyVtab in _policy.pxd.")


cdef int policy_ref(object policy, PolicyRef* ref) except -1:
    if not isinstance(policy, Policy):
        raise TypeError(f"a compiled ttrsim Policy is needed here, got {type(policy).__name__} "
                        "(wrap a Python player with ttrsim.policies.make_policy)")
    cdef Policy p = <Policy>policy
    capsule = getattr(type(policy), "__pyx_vtable__", None)
    if capsule is None or not PyCapsule_IsValid(capsule, NULL):
        raise RuntimeError(_LAYOUT_HELP.format(f"{type(policy).__name__} has no __pyx_vtable__"))
    ref.obj = <void*>p
    ref.vt = <PolicyVtab*>PyCapsule_GetPointer(capsule, NULL)
    if (<ttrsim_cython_object_head*><void*>p).__pyx_vtab != <void*>ref.vt:
        raise RuntimeError(_LAYOUT_HELP.format(
            f"the method table of a {type(policy).__name__} object is not its type's"))
    ref.random_rng = &p.rng if p.samples_legal else NULL
    ref.needs_legal = p.needs_legal
    ref.returns_legal = p.returns_legal
    return 0


cdef class _LayoutProbe(Policy):
    """A policy whose two methods leave recognisable traces (check_layout)."""
    cdef long long started

    cdef void start_game(self, const BoardC* b, const GameState* s, int seat,
                         uint64_t seed) noexcept nogil:
        self.started = 1000 * seat + <long long>seed

    cdef int32_t choose(self, const BoardC* b, const GameState* s, int seat,
                        const int32_t* legal, int n_legal) noexcept nogil:
        return 7919 * seat + 31 * n_legal + <int32_t>self.started


def check_layout():
    """Verify that a call through a PolicyRef reaches the same methods as Cython's own
    call (``start_game`` then ``choose``, in that order in the method table); raise
    RuntimeError naming the difference otherwise. Runs when ttrsim._policy is imported."""
    cdef _LayoutProbe probe = _LayoutProbe()
    cdef PolicyRef ref
    cdef int32_t direct, through
    policy_ref(probe, &ref)
    probe.start_game(NULL, NULL, 2, 17)
    direct = probe.choose(NULL, NULL, 3, NULL, 5)
    probe.started = 0
    ref_start(&ref, NULL, NULL, 2, 17)
    if probe.started != 2017:
        raise RuntimeError(_LAYOUT_HELP.format("start_game is not the table's first entry"))
    through = ref_choose(&ref, NULL, NULL, 3, NULL, 5)
    if through != direct:
        raise RuntimeError(_LAYOUT_HELP.format("choose is not the table's second entry"))
    return True


check_layout()
