"""What the test modules share: runs that several modules read, played once per test
process, and the order in which the tests start.

The suite runs on parallel workers (pytest-xdist, ``addopts`` in pyproject.toml); each
worker is a process of its own, so a session fixture is built at most once per worker.
The shared runs and reports are read-only: a test that changes a table takes a copy
(``run.games.copy()``, a ``ttrsim.Run`` of edited tables) and writes into its own
``tmp_path``."""
from __future__ import annotations

import signal

import pytest

from helpers import EUROPE3


@pytest.fixture(scope="session")
def europe3():
    """A per-event run of ``EUROPE3``."""
    import ttrsim

    return ttrsim.simulate(**EUROPE3)


@pytest.fixture(scope="session")
def europe3_summary():
    """The same games as ``europe3``, played in summary mode (counts only)."""
    import ttrsim

    return ttrsim.simulate(**EUROPE3, summary=True)


def _report(run, tmp_path_factory, name):
    from ttrsim.report import write_report

    out = tmp_path_factory.mktemp(name)
    return out, write_report(run, out).read_text()


@pytest.fixture(scope="session")
def europe3_report(europe3, tmp_path_factory):
    """(folder, page text) of the report of ``europe3``, written with no baseline and no
    stronger play."""
    return _report(europe3, tmp_path_factory, "europe3-report")


@pytest.fixture(scope="session")
def europe3_summary_report(europe3_summary, tmp_path_factory):
    """(folder, page text) of the report of ``europe3_summary``."""
    return _report(europe3_summary, tmp_path_factory, "europe3-summary-report")


def pytest_configure(config):
    """Ctrl-C raises KeyboardInterrupt in every test process, as in a Python started from a
    terminal. A suite started in the background by a shell without job control inherits
    SIGINT ignored, and so would its workers and every command a test starts: the tests
    that press Ctrl-C (on a command, or on this process) would wait in vain."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    """The modules that hold a ``slow`` test start first (in their own order): on parallel
    workers a long test started last would end the run alone while the other workers
    wait."""
    slow_modules = {item.module.__name__ for item in items
                    if item.get_closest_marker("slow") and getattr(item, "module", None)}
    items.sort(key=lambda item: getattr(item, "module", None) is None
               or item.module.__name__ not in slow_modules)
