"""The rules fuzzer: games played with the core's invariant check after every action
(``fuzz_batch``), the rare situations it counts (``EDGE_CASES``) and the invariants it
names (``VIOLATION_MESSAGES``), and ``HoardPolicy``, which drives games to empty decks
and the all-pass ending. ``scripts/fuzz.py`` runs it at scale; docs/fuzz.md has its
results.
"""
from __future__ import annotations

# the owner of the compiled fuzzer: scripts take its names from here
from ttrsim._fuzz import EDGE_CASES, VIOLATION_MESSAGES, HoardPolicy, fuzz_batch

__all__ = ["EDGE_CASES", "VIOLATION_MESSAGES", "HoardPolicy", "fuzz_batch"]
