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

# The face loads nothing but itself: each name is imported on first use (PEP 562), so that
# the command line starts without pandas and scipy and a command loads what it needs.
_NAMES = {
    "Action": "ttrsim.actions", "IllegalActionError": "ttrsim.actions", "Game": "ttrsim.game",
    "Policy": "ttrsim.policies", "PolicyError": "ttrsim.policies", "Run": "ttrsim.results",
    "load_run": "ttrsim.results", "replay": "ttrsim.runner", "simulate": "ttrsim.runner",
    "VariantError": "ttrsim.variants", "load_variant": "ttrsim.variants",
    "variant": "ttrsim.variants", "Comparison": "ttrsim.analysis.studies",
    "compare": "ttrsim.analysis.studies", "analyse": "ttrsim.search",
    "League": "ttrsim.analysis.studies.leagues", "league": "ttrsim.analysis.studies.leagues",
    "load_league": "ttrsim.analysis.studies.leagues",
}
# public submodules reachable as attributes after ``import ttrsim`` (``ttrsim.env`` and the
# reports need their own import)
_SUBMODULES = ("actions", "analysis", "batches", "dispatch", "game", "maps", "policies",
               "results", "runner", "search", "stats", "summary", "tables", "variants")

__all__ = ["Action", "Game", "IllegalActionError", "Policy", "PolicyError", "Run", "analyse",
           "get_include", "load_run", "maps", "replay", "simulate"]
__all__ += ["Comparison", "VariantError", "compare", "load_variant", "variant"]
__all__ += ["League", "league", "load_league"]


def __getattr__(name: str):
    from importlib import import_module

    if name in _NAMES:
        value = getattr(import_module(_NAMES[name]), name)
    elif name in _SUBMODULES:
        value = import_module(f"ttrsim.{name}")
    else:
        raise AttributeError(f"module 'ttrsim' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list:
    return sorted(set(globals()) | set(__all__) | set(_SUBMODULES))
