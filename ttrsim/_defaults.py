"""What the command line's help names before it loads numpy or the compiled core: the
built-in boards (``ttrsim.maps.BUILTIN`` is this tuple) and the core's turn limit
(``TURN_LIMIT`` of ``ext/ttrsim/_structs.pxd``, which ``ttrsim.batches.DEFAULT_MAX_TURNS``
reads; tests/test_decision_step.py checks that the two agree)."""

#: Built-in boards, in display order.
BUILTIN_BOARDS = ("usa", "europe", "newyork", "usa-1910", "usa-mega", "usa-bigcities")

#: The compiled core's turn limit, as its help shows it.
CORE_TURN_LIMIT = 10_000
