"""Checks of the arguments users pass, worded the same everywhere.

Every check raises ``ValueError`` naming the argument, what it must be and what it got, so
the command line can print it as one line.
"""
from __future__ import annotations

import math
import numbers


def is_int(value) -> bool:
    """A whole number (Python or numpy integer), not a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def check_int(name: str, value, low: int | None = None, high: int | None = None,
              hint: str = "") -> int:
    """``value`` as an int, or a ValueError such as "games must be a positive integer,
    got 0". ``low``/``high`` bound it (inclusive); ``hint`` is appended to the message."""
    if is_int(value) and (low is None or value >= low) and (high is None or value <= high):
        return int(value)
    if low == 1 and high is None:
        what = "a positive integer"
    elif low == 0 and high is None:
        what = "a non-negative integer"
    elif low is not None and high is not None:
        what = f"a whole number from {low} to {high}"
    elif low is not None:
        what = f"a whole number >= {low}"
    else:
        what = "a whole number" + (f" <= {high}" if high is not None else "")
    raise ValueError(f"{name} must be {what}{hint}, got {value!r}")


def check_n_jobs(value, name: str = "n_jobs") -> int:
    """A joblib worker count: 1, 2, ... or -1 for every core (-2: all but one, ...)."""
    if is_int(value) and value != 0:
        return int(value)
    raise ValueError(f"{name} must be a number of workers (1, 2, ...) or -1 for every core "
                     f"(-2: all but one, ...), got {value!r}")


def check_number(name: str, value, low: float | None = None, high: float | None = None) -> float:
    """A finite real number within [low, high] (either end may be None: unbounded); NaN
    and the infinities are refused, whatever the bounds."""
    import math

    ok = (isinstance(value, numbers.Real) and not isinstance(value, bool)
          and math.isfinite(value) and (low is None or value >= low)
          and (high is None or value <= high))
    if ok:
        return float(value)
    ends = (f" from {low:g} to {high:g}" if low is not None and high is not None else
            f" >= {low:g}" if low is not None else f" <= {high:g}" if high is not None else "")
    raise ValueError(f"{name} must be a finite number{ends}, got {value!r}")


def check_fraction(name: str, value, low: float = 0.0, high: float = 1.0,
                   open_ends: bool = True) -> float:
    """A number within (low, high) (``open_ends``) or [low, high]."""
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool) and value == value
    if ok:
        ok = low < value < high if open_ends else low <= value <= high
    if ok:
        return float(value)
    ends = f"between {low:g} and {high:g}" if open_ends else f"within {low:g}..{high:g}"
    raise ValueError(f"{name} must be {ends}, got {value!r}")


def check_resamples(n_resamples, confidence: float, name: str = "n_resamples (--resamples)") -> int:
    """Bootstrap resamples enough for a percentile interval at ``confidence``: at least
    ``2 / (1 - confidence)`` (40 at 95%), so that a resample lies beyond each end."""
    fewest = int(math.ceil(round(2 / (1 - confidence), 9)))
    return check_int(name, n_resamples, fewest,
                     hint=f" (a {confidence:.0%} bootstrap interval needs at least {fewest} resamples)")


def check_out_dir(out, name: str = "out (--out)"):
    """An output directory as a ``Path`` (None stays None), refused before any work when it
    cannot be one: an empty or blank name (which would silently mean the current
    directory), a file, a path through a file, or a place nobody may write. The sure test
    of the last (``os.access`` says yes to root everywhere, and knows nothing of /proc): a
    file made and removed again in the directory, or, where it is missing, in the nearest
    directory that exists (the caller makes the missing ones). The command line checks its
    output options with it too, under their own names."""
    import tempfile
    from pathlib import Path

    if out is None:
        return None
    check_empty(out, name)
    p = Path(out)
    if p.exists() and not p.is_dir():
        raise ValueError(f"{name} {out} is a file; give a directory (it is created if missing)")
    parent = next((q for q in (p.absolute(), *p.absolute().parents) if q.exists()), None)
    if parent is not None and not parent.is_dir():
        raise ValueError(f"{name} {out}: {parent} is a file, not a directory")
    try:
        with tempfile.TemporaryFile(dir=parent):
            pass
    except OSError as exc:
        where = "" if parent == p.absolute() else f" (in {parent})"
        raise ValueError(f"{name} {out}: cannot be written{where} ({exc.strerror}); give a "
                         "directory you may write to") from None
    return p


def check_empty(path, name: str, what: str = "a directory") -> None:
    """Refuse an empty (or blank) path, which would silently mean the current directory."""
    if path is not None and not str(path).strip():
        raise ValueError(f"{name} is empty, which would mean the current directory; give "
                         f"{what} name" + (" (it is created if missing)" if what == "a directory"
                                           else ""))


def shown(value) -> str:
    """``repr(value)`` for a message, a long hex digest (a board's SHA-256 checksum) cut to
    its first 12 digits, as the manifests' model digests are: two 64-digit numbers side by
    side hide the words around them, and 12 digits tell two boards apart."""
    import re

    if isinstance(value, str) and re.fullmatch(r"[0-9a-f]{40,}", value):
        return repr(value[:12])
    return repr(value)
