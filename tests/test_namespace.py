"""``import ttrsim`` exposes its public API and nothing picked up by accident."""
import subprocess
import sys

import ttrsim


def public_names_after_import() -> tuple:
    """In a fresh interpreter, right after ``import ttrsim``: the public names of the
    package, and those of them that are its own submodules. A submodule whose name has no
    leading underscore is public by the package's convention (compiled and internal modules
    are ``_name``); any other name must be in ``__all__``."""
    code = ("import types, ttrsim\n"
            "names = [n for n in dir(ttrsim) if not n.startswith('_')]\n"
            "subs = [n for n in names if isinstance(getattr(ttrsim, n), types.ModuleType)\n"
            "        and getattr(ttrsim, n).__name__ == 'ttrsim.' + n]\n"
            "print(' '.join(names)); print(' '.join(subs))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    names, subs = out.stdout.split("\n")[:2]
    return set(names.split()), set(subs.split())


def test_public_names_are_all_plus_public_submodules():
    names, submodules = public_names_after_import()
    assert "maps" in submodules and "os" not in submodules
    extra = names - set(ttrsim.__all__) - submodules
    assert not extra, f"names not in __all__: {sorted(extra)}"
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


def test_the_analysis_package_hands_on_every_study_lazily():
    """ttrsim.analysis lists every name of ttrsim.analysis.studies in its lazy list (a
    study missing there is missing from ``ttrsim.analysis``), and the studies' modules
    are not shadowed by their functions (``studies.league`` was the function)."""
    import importlib

    import ttrsim.analysis as analysis
    from ttrsim.analysis import studies

    assert set(analysis._STUDIES) == set(studies.__all__)
    assert set(analysis._STUDIES) <= set(analysis.__all__)
    assert analysis.league is studies.league and callable(analysis.league)
    for module in ("leagues", "comparison"):
        assert importlib.import_module(f"ttrsim.analysis.studies.{module}").__name__.endswith(module)
