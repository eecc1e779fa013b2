"""ttrsim: a Monte Carlo analysis toolkit for Ticket to Ride.

The compiled core plays complete games of the USA, Europe and New York boards (and any
board in the same map format) with pluggable player policies; ``simulate`` spreads many
games over cores; ``analysis``, ``plots`` and ``report`` turn the results into tables with
confidence intervals, figures and reports.
"""
from ttrsim._version import __version__


def get_include() -> str:
    """Directory to put on Cython's include path to ``cimport ttrsim._structs`` etc.

    Installed packages carry the ``.pxd`` files beside the modules; a source checkout
    (editable install) keeps them in ``ext/ttrsim``.
    """
    from os import path

    here = path.dirname(path.abspath(__file__))
    if path.exists(path.join(here, "_structs.pxd")):
        return path.dirname(here)
    return path.join(path.dirname(here), "ext")

from ttrsim import maps  # noqa: E402
from ttrsim.actions import Action, IllegalActionError  # noqa: E402
from ttrsim.game import Game  # noqa: E402
from ttrsim.policies import Policy, PolicyError  # noqa: E402
from ttrsim.results import Run, load_run  # noqa: E402
from ttrsim.runner import replay, simulate  # noqa: E402
from ttrsim.variants import VariantError, load_variant, variant  # noqa: E402
from ttrsim.analysis.studies import Comparison, compare  # noqa: E402
from ttrsim.analysis.studies.league import League, league, load_league  # noqa: E402
from ttrsim.search import analyse  # noqa: E402

__all__ = ["Action", "Game", "IllegalActionError", "Policy", "PolicyError", "Run", "analyse",
           "get_include", "load_run", "maps", "replay", "simulate"]
__all__ += ["Comparison", "VariantError", "compare", "load_variant", "variant"]
__all__ += ["League", "league", "load_league"]
