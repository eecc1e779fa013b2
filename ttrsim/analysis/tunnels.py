"""Tunnels (Europe): exact odds of the extra cards, and what happened in play."""
from __future__ import annotations

from math import comb

import numpy as np
import pandas as pd

from .inputs import EVENT, attach, board_of, games_of, keys, require, route_facts, source
from ttrsim.maps import N_FACEUP
from ttrsim.stats import DEFAULT_CONFIDENCE, rate_columns

#: Cards revealed from the deck when a tunnel is claimed.
REVEALED = 3
EXTRAS = tuple(range(REVEALED + 1))
WILD = "wild"


def card_counts(board, counts) -> np.ndarray:
    """Card counts as an int array of length ``n_colors + 1`` (the wild card last).

    ``counts`` is None (no cards), a dict colour -> count whose wild key is ``"wild"`` or the
    board's wild name, or an array-like already in that layout.
    """
    n = len(board.colors)
    if counts is None:
        return np.zeros(n + 1, dtype=int)
    if isinstance(counts, dict):
        out = np.zeros(n + 1, dtype=int)
        for name, count in counts.items():
            out[_card_index(board, name)] += int(count)
    else:
        out = np.asarray(counts, dtype=int)
        if out.shape != (n + 1,):
            raise ValueError(f"card counts need {n + 1} entries (colours then wild), not {out.shape}")
    if (out < 0).any():
        raise ValueError("card counts cannot be negative")
    return out


def _card_index(board, name: str) -> int:
    if name in (WILD, board.wild):
        return len(board.colors)
    try:
        return list(board.colors).index(name)
    except ValueError:
        known = ", ".join([*board.colors, WILD])
        raise ValueError(f"unknown card colour {name!r} (one of {known})") from None


def parse_counts(text: str | None) -> dict[str, int]:
    """Parse ``"red=2,wild=1"`` into ``{"red": 2, "wild": 1}`` (for the command line)."""
    out: dict[str, int] = {}
    for item in (text or "").split(","):
        if not item.strip():
            continue
        name, sep, count = item.partition("=")
        if not sep or not count.strip().isdigit():
            raise ValueError(f"expected colour=count with a whole number of cards, e.g. red=2, "
                             f"not {item.strip()!r}")
        out[name.strip()] = out.get(name.strip(), 0) + int(count)
    return out


def tunnel_odds(board, color, hand=None, faceup=None, discards=None, all_wild: bool = False) -> pd.DataFrame:
    """Exact distribution of the extra cards a tunnel asks for.

    The revealed cards come from the top of the deck. The player knows where some cards
    are (own ``hand`` -- including the cards being played for the tunnel -- the face-up
    row and the discard pile); the other cards (deck and opponents' hands) are unseen and,
    to the player, in uniformly random order, so the revealed cards are a uniform random
    draw without replacement from the ``N`` unseen cards. With ``K`` of them matching
    (cards of ``color`` plus wild cards; only wild cards when ``all_wild`` or when
    ``color`` is the wild card) and ``n = min(3, N)`` cards revealed::

        P(extra = k) = C(K, k) * C(N - K, n - k) / C(N, n),   k = 0 .. 3

    (hypergeometric; 0 for ``k > n``). ``hand``, ``faceup`` and ``discards`` are counts as
    accepted by :func:`card_counts`.

    Returns a DataFrame ``extra, probability`` for extra = 0..3, with ``attrs`` holding
    ``expected`` (= n K / N), ``unseen`` (N), ``matching`` (K) and ``revealed`` (n).
    """
    if not board.route_tunnel.any():
        raise ValueError(f"the {board.name} board has no tunnels, so there are no tunnel odds; "
                         "ask on a board with tunnels, such as europe")
    deck = card_counts(board, list(board.deck_colors) + [board.deck_wild])
    row = int(card_counts(board, faceup).sum())
    if row > N_FACEUP:
        raise ValueError(f"faceup (--faceup) counts {row} cards, but the face-up row holds "
                         f"{N_FACEUP}: give the cards face up now, e.g. red=2,wild=1")
    known = sum(card_counts(board, c) for c in (hand, faceup, discards))
    unseen = deck - known
    if (unseen < 0).any():
        over = [
            ([*board.colors, WILD][i], int(known[i]), int(deck[i])) for i in np.flatnonzero(unseen < 0)
        ]
        raise ValueError(
            "more cards known than the deck holds: "
            + ", ".join(f"{name} {k} > {d}" for name, k, d in over)
        )
    wild = len(board.colors)
    idx = _card_index(board, color)
    matching = int(unseen[wild]) if all_wild or idx == wild else int(unseen[idx] + unseen[wild])
    total = int(unseen.sum())
    drawn = min(REVEALED, total)
    ways = comb(total, drawn)
    probability = [
        comb(matching, k) * comb(total - matching, drawn - k) / ways if k <= drawn else 0.0
        for k in EXTRAS
    ]
    out = pd.DataFrame({"extra": EXTRAS, "probability": probability})
    out.attrs.update(
        expected=drawn * matching / total if total else 0.0,
        unseen=total,
        matching=matching,
        revealed=drawn,
    )
    return out


def _tunnel_counts(run_or_tunnels, by=(), games: pd.DataFrame | None = None) -> pd.DataFrame:
    """Counts per group of ``by`` (games columns such as ``policy``, ``players``,
    ``seat``), route, colour (when known) and extra: ``attempts, paid, declined``."""
    mode, table = source(run_or_tunnels, "tunnels")
    extra = [c for c in keys(by) if c not in ("route", "color", "extra")]
    if mode == EVENT:
        require(table, ["route", "extra", "outcome"], "the tunnels table")
        table = attach(table, games_of(run_or_tunnels, games), extra)
        outcome = table.outcome.astype(str)
        table = table.assign(attempts=1, paid=outcome.eq("paid"), declined=outcome.eq("declined"))
    else:
        require(table, ["route", "extra", "attempts", "paid", "declined", *extra], "tunnel_summary")
    cols = [*extra, "route", "color", "extra"] if "color" in table.columns else [*extra, "route", "extra"]
    counts = table.groupby(cols, observed=True)[["attempts", "paid", "declined"]].sum()
    return counts.astype(int).reset_index()


def tunnel_extra_distribution(
    run_or_tunnels, by=("route",), confidence: float = DEFAULT_CONFIDENCE
) -> pd.DataFrame:
    """Observed share of attempts asking 0, 1, 2 or 3 extra cards.

    ``by`` groups attempts (``route``, ``color``, both, or ``()`` for all attempts; per
    event also by games columns such as ``policy``); the result has one row per group and
    extra count: ``count, attempts, share`` with a
    Wilson interval (``share_low, share_high``).
    """
    by = keys(by)
    counts = _tunnel_counts(run_or_tunnels, by)
    require(counts, by, "the tunnel table")
    per_extra = counts.groupby([*by, "extra"], observed=True).attempts.sum()
    if by:
        per_extra = per_extra.unstack("extra", fill_value=0).reindex(columns=EXTRAS, fill_value=0)
        long = per_extra.stack().rename("count").reset_index()
        long["attempts"] = long.groupby(by, observed=True)["count"].transform("sum")
    else:
        long = pd.DataFrame({"extra": EXTRAS, "count": per_extra.reindex(EXTRAS, fill_value=0).values})
        long["attempts"] = long["count"].sum()
    long = long.astype({"extra": int, "count": int, "attempts": int})
    return long.assign(**rate_columns("share", long["count"], long.attempts, confidence))


def tunnel_outcomes(run_or_tunnels, board=None, confidence: float = DEFAULT_CONFIDENCE,
                    by=()) -> pd.DataFrame:
    """Per tunnel route: how often each extra count came up, declines and cards paid.

    Columns: ``route`` (plus ``name, length, color`` with a board), ``attempts``,
    ``extra_mean`` (mean extra cards asked), ``p_extra_k`` for k = 0..3 with Wilson
    intervals (``p_extra_k_low``, ``p_extra_k_high``), ``asked`` (attempts asking at
    least one extra card), ``declined`` and ``decline_rate`` = declined / asked (Wilson
    interval; a declined attempt costs the turn, the cards go back to the hand), ``paid``,
    ``extra_paid_mean`` (extra cards paid per attempt, 0 when free or declined) and
    ``extra_paid_when_paid`` (extra cards per paid attempt).

    ``by``: games column(s) to split by, e.g. ``"policy"`` (per-event runs; each group
    counts the attempts of its own seats), one row per group and route.
    """
    by = [c for c in keys(by) if c != "route"]
    group = [*by, "route"]
    counts = _tunnel_counts(run_or_tunnels, by)
    counts["extra_asked"] = counts.extra * counts.attempts
    counts["extra_paid"] = counts.extra * counts.paid
    counts["asked"] = np.where(counts.extra > 0, counts.attempts, 0)
    sums = counts.groupby(group, observed=True)[
        ["attempts", "extra_asked", "asked", "declined", "paid", "extra_paid"]].sum()
    out = pd.DataFrame({"attempts": sums.attempts, "extra_mean": sums.extra_asked / sums.attempts})
    shares = tunnel_extra_distribution(counts, by=group, confidence=confidence)
    for k in EXTRAS:
        at_k = shares[shares.extra == k].set_index(group)
        for suffix in ("", "_low", "_high"):
            out[f"p_extra_{k}{suffix}"] = at_k[f"share{suffix}"]
    out = out.assign(
        asked=sums.asked,
        declined=sums.declined,
        **rate_columns("decline_rate", sums.declined, sums.asked, confidence),
        paid=sums.paid,
        extra_paid_mean=sums.extra_paid / sums.attempts,
        extra_paid_when_paid=sums.extra_paid / sums.paid.where(sums.paid > 0),
    ).reset_index()
    board = board_of(run_or_tunnels, board)
    if board is not None:
        facts = route_facts(board)[["name", "length", "color"]]
        out = out.join(facts, on="route")
        front = [*group, *facts.columns]
        out = out[front + [c for c in out.columns if c not in front]]
    return out
