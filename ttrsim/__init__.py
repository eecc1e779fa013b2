"""ttrsim: a Monte Carlo analysis toolkit for Ticket to Ride.

The compiled core plays complete games of the USA, Europe and New York boards (and any
board in the same map format) with pluggable player policies; ``simulate`` spreads many
games over cores; ``analysis``, ``plots`` and ``report`` turn the results into tables with
confidence intervals, figures and reports.
"""
from __future__ import annotations

import os

__version__ = "0.1.0"


def get_include() -> str:
    """Directory to put on Cython's include path to ``cimport ttrsim._structs`` etc.

    Installed packages carry the ``.pxd`` files beside the modules; a source checkout
    (editable install) keeps them in ``ext/ttrsim``.
    """
    here = os.path.dirname(os.path.abspath(__file__))
    if os.path.exists(os.path.join(here, "_structs.pxd")):
        return os.path.dirname(here)
    return os.path.join(os.path.dirname(here), "ext")

from ttrsim import maps  # noqa: E402
from ttrsim.actions import Action, IllegalActionError  # noqa: E402
from ttrsim.game import Game  # noqa: E402
from ttrsim.policies import Policy, PolicyError  # noqa: E402
from ttrsim.runner import Run, load_run, replay, simulate  # noqa: E402
from ttrsim.search import analyse  # noqa: E402

__all__ = ["Action", "Game", "analyse", "IllegalActionError", "Policy", "PolicyError", "Run", "get_include",
           "load_run", "maps", "replay", "simulate"]
