"""``import ttrsim`` exposes its public API and nothing picked up by accident."""
import subprocess
import sys

import ttrsim

# Submodules users may reach as attributes of the package once they are imported.
PUBLIC_SUBMODULES = {"actions", "analysis", "cli", "game", "maps", "plots", "policies", "report",
                     "runner", "summary"}


def public_names_after_import() -> set:
    """Public names of ``ttrsim`` in a fresh interpreter, right after ``import ttrsim``."""
    code = "import ttrsim; print(' '.join(n for n in dir(ttrsim) if not n.startswith('_')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def test_public_names_are_all_plus_public_submodules():
    names = public_names_after_import()
    extra = names - set(ttrsim.__all__)
    assert not extra - PUBLIC_SUBMODULES, f"names not in __all__: {sorted(extra - PUBLIC_SUBMODULES)}"
    assert set(ttrsim.__all__) <= names, f"__all__ names missing: {set(ttrsim.__all__) - names}"


def test_all_is_unique_and_documented():
    assert len(set(ttrsim.__all__)) == len(ttrsim.__all__)
    for name in ttrsim.__all__:
        obj = getattr(ttrsim, name)
        assert (obj.__doc__ or "").strip(), f"ttrsim.{name} has no docstring"


def test_star_import_gives_exactly_all():
    space: dict = {}
    exec("from ttrsim import *", space)
    assert {n for n in space if not n.startswith("__")} == set(ttrsim.__all__)
