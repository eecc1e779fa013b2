"""The end of every command and script: run its ``main`` and turn the outcome into an exit
code (``sys.exit(run_script(main))``). Imports nothing of ttrsim, so that a script or the
command line loads it at no cost."""
from __future__ import annotations

import sys

__all__ = ["run_script"]


def run_script(main, *args) -> int:
    """Run ``main(*args)`` (a command, or a script's ``main``) and return its exit code (None:
    0). When the reader of stdout has gone away (``| head -1``) it ends quietly with code
    2, with no traceback and no error at exit: nothing is left to say, and no one to say
    it to. Every script ends with ``sys.exit(run_script(main))``."""
    try:
        code = int(main(*args) or 0)
        sys.stdout.flush()              # a closed pipe shows here for short outputs
        return code
    except BrokenPipeError:
        _silence_stdout()
        return 2


def _silence_stdout() -> None:
    """Point stdout at /dev/null so that the interpreter's final flush stays quiet."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
