"""The end of every command and script: run its ``main`` and turn the outcome into an exit
code (``sys.exit(run_script(main))``); a command's warnings in one line each. Imports nothing of ttrsim, so that a script or the
command line loads it at no cost."""
from __future__ import annotations

import sys
import warnings

__all__ = ["one_line_warnings", "run_script"]


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


def one_line_warnings(command: str) -> None:
    """Print every warning of this process as one line on stderr, ``ttrsim COMMAND:
    warning: MESSAGE`` (``(from LIBRARY)`` added for another library's), instead of
    Python's two lines that open with a source file's path: what a user reads of a
    command is its own words, not the inside of matplotlib."""
    from pathlib import Path

    root = Path(__file__).resolve().parent          # the ttrsim package
    said = set()

    def show(message, category, filename, lineno, file=None, line=None):
        path = Path(str(filename)).resolve()
        origin = "" if root in path.parents else f" (from {_library(path)})"
        text = f"ttrsim {command}: warning{origin}: {' '.join(str(message).split())}"
        if text not in said:          # once, however many figures raise it
            said.add(text)
            print(text, file=file or sys.stderr)

    warnings.showwarning = show


def _library(path) -> str:
    """The package a source file belongs to: the folder below site-packages, else the
    file's name."""
    parts = path.parts
    for anchor in ("site-packages", "dist-packages"):
        if anchor in parts and parts.index(anchor) + 1 < len(parts):
            return parts[parts.index(anchor) + 1].removesuffix(".py")
    return path.stem
