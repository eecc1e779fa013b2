"""The conclusions of the reports in words, one function per section.

Each takes the table its section shows (the result objects of ``ttrsim.analysis``) and
returns sentences: every number with its 95% interval, and a direction (above, below,
ahead, lower) only where an interval lies wholly on one side of the reference or a test
says so at a stated level, never because one estimate is a little higher than another.
The report shows them at the top of their section and again in the page's summary.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ttrsim.report.html import fmt_pct
from ttrsim.stats import wilson_interval

__all__ = ["seat_leads", "policy_leads", "score_leads", "profile_leads", "player_leads",
           "ticket_leads", "route_leads", "tunnel_leads", "station_leads",
           "station_value_leads", "comparison_leads", "importance_leads", "fairness_leads",
           "rating_leads", "matrix_leads", "interval", "names", "number"]

# routes claimed in most games / rarely: the claim rate's interval above / below these
MOST, RARELY = 0.5, 0.1
# cities where stations are common: the built rate's interval above this
STATIONS_COMMON = 0.05


def interval(value, low, high, one=fmt_pct) -> str:
    """``"12.3% [11.9%, 12.7%]"``: the estimate and its interval, each through ``one``
    (``number``: all three at the precision of the largest, so that they line up)."""
    if one is number:
        largest = max((abs(float(v)) for v in (value, low, high) if np.isfinite(v)), default=0)
        one = _fixed(2 if largest < 10 else 1)
    if not np.isfinite(low) or not np.isfinite(high):
        return one(value)
    return f"{one(value)} [{one(low)}, {one(high)}]"


def _fixed(decimals: int):
    return lambda v: "–" if not np.isfinite(float(v)) else f"{float(v):,.{decimals}f}"


def names(items, limit: int = 5) -> str:
    """The first ``limit`` items comma-separated, and how many more."""
    items = [str(x) for x in items]
    more = len(items) - limit
    return ", ".join(items[:limit]) + (f" and {more} more" if more > 0 else "")


def number(value) -> str:
    """A mean at a fixed precision, so that an estimate and its bounds line up: two
    decimals below 10, one from 10 on, thousands separated."""
    value = float(value)
    if not np.isfinite(value):
        return "–"
    return f"{value:,.2f}" if abs(value) < 10 else f"{value:,.1f}"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


# ----------------------------------------------------------------------------- the run

def seat_leads(table: pd.DataFrame) -> list[str]:
    """Per player count: the seats whose win rate differs from the fair share (their
    Wilson interval wholly above or below it), or that none does."""
    out = []
    several = table.players.nunique() > 1
    for n, t in table.groupby("players", sort=True):
        fair = float(t.fair_share.iloc[0])
        head = f"{n} players: " if several else ""
        off = t[(t.win_rate_low > fair) | (t.win_rate_high < fair)]
        if off.empty:
            out.append(_capital(f"{head}no seat's win rate differs from the fair "
                                f"{fmt_pct(fair)}: every seat's 95% interval contains it (win "
                                f"rates {fmt_pct(t.win_rate.min())} to "
                                f"{fmt_pct(t.win_rate.max())})."))
            continue
        parts = [f"seat {int(r.seat)} wins "
                 f"{interval(r.win_rate, r.win_rate_low, r.win_rate_high)}, "
                 f"{'above' if r.win_rate_low > fair else 'below'} the fair {fmt_pct(fair)}"
                 for r in off.itertuples()]
        rest = len(t) - len(off)
        text = "; ".join(parts) + (f"; the other {_plural(rest, 'seat')}' intervals contain "
                                   "the fair share" if rest else "")
        out.append(_capital(head + text) + " (95% Wilson intervals).")
    return out


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def policy_leads(matrix: pd.DataFrame) -> list[str]:
    """The pairs of policies in which one finishes ahead of the other in more than half
    of their seat pairs (the share's interval above 50%), and the pairs undecided."""
    m = matrix.dropna(subset=["ahead_share_low", "ahead_share_high"])
    pairs = list(dict.fromkeys(tuple(sorted((str(a), str(b))))
                               for a, b in zip(m.policy_a, m.policy_b)))
    clear = m[m.ahead_share_low > 0.5].sort_values("ahead_share_low", ascending=False)
    decided = {tuple(sorted((str(a), str(b)))) for a, b in zip(clear.policy_a, clear.policy_b)}
    text = (f"{len(decided)} of {_plural(len(pairs), 'pair')} of policies are decided at 95% "
            "(one finishes ahead in more than half of their seat pairs, its interval above 50%)")
    if len(clear):
        text += ": " + "; ".join(
            f"{r.policy_a} ahead of {r.policy_b} in "
            f"{interval(r.ahead_share, r.ahead_share_low, r.ahead_share_high)}"
            for r in clear.head(6).itertuples()) + ("; ..." if len(clear) > 6 else "")
    undecided = [f"{a} and {b}" for a, b in pairs if (a, b) not in decided]
    if undecided:
        text += f". Not decided (the interval reaches 50%): {names(undecided)}"
    return [text + "."]


def score_leads(table: pd.DataFrame) -> list[str]:
    """The mean final score of every policy with its interval."""
    return ["Mean final score: " + "; ".join(
        f"{r.policy} {interval(r.score_mean, r.score_mean_low, r.score_mean_high, number)}"
        for r in table.itertuples()) + " (95% intervals)."]


def profile_leads(table: pd.DataFrame) -> list[str]:
    """Each group's mean score and tickets completed per seat-game."""
    t = table.set_index(["group", "measure"])
    parts = []
    for group in dict.fromkeys(table["group"]):
        if (group, "score") not in t.index or (group, "tickets_completed") not in t.index:
            continue
        score, done = t.loc[(group, "score")], t.loc[(group, "tickets_completed")]
        one, verbs = (("the winners (seat-games ranked first)", ("score", "complete"))
                      if group == "winners" else (f"a seat of {group}", ("scores", "completes")))
        parts.append(f"{one} {verbs[0]} {interval(score.estimate, score.low, score.high, number)} "
                     f"and {verbs[1]} {interval(done.estimate, done.low, done.high, number)} "
                     "tickets")
    return [_capital("; ".join(parts)) + " (means per seat-game, 95% intervals)."] if parts else []


def player_leads(table: pd.DataFrame) -> list[str]:
    """Game length and ticket completion at each player count."""
    return [f"At {int(r.players)} players a game lasts "
            f"{interval(r.turns_mean, r.turns_mean_low, r.turns_mean_high, number)} turns and "
            f"{interval(r.completion_rate, r.completion_rate_low, r.completion_rate_high)} of "
            "the tickets kept are completed (95% intervals)." for r in table.itertuples()]


def ticket_leads(completion: pd.DataFrame, by, min_kept: int) -> list[str]:
    """When split by policy, the share of the tickets kept that each policy completes
    (pooled, the player-count section states it); and the tickets completed less than
    half the time (Wilson interval below 50%), which cost points on average when kept."""
    out = []
    if by:
        rates = []
        for policy, part in completion.groupby("policy", observed=True, sort=True):
            kept, done = int(part.kept.sum()), int(part.completed.sum())
            if kept:
                low, high = wilson_interval(done, kept)
                rates.append(f"{policy} {interval(done / kept, float(low), float(high))}")
        out.append("Share of the tickets kept that were completed: " + "; ".join(rates)
                   + " (Wilson 95% intervals over the tickets).")
    judged = completion[completion.kept >= min_kept]
    rare = len(completion) - len(judged)
    if judged.empty:
        out.append(f"No ticket was kept {min_kept} times or more, too few to judge whether "
                   f"keeping it costs points ({rare} kept fewer times).")
        return out
    losing = judged[judged.completion_rate_high < 0.5].sort_values("completion_rate")
    rows = "ticket rows (ticket and policy)" if by else "tickets"
    text = (f"{len(losing)} of {len(judged)} {rows} kept at least {min_kept} times "
            f"{'is' if len(losing) == 1 else 'are'} completed less than half the time (95% "
            "interval below 50%), so keeping them costs points on average")
    if len(losing):
        text += ": " + names(
            f"{r.name}{f' ({r.policy})' if by else ''} "
            f"{interval(r.completion_rate, r.completion_rate_low, r.completion_rate_high)}"
            for r in losing.itertuples())
    if rare:
        text += f"; {rare} kept fewer times {'is' if rare == 1 else 'are'} not judged"
    out.append(text + ".")
    return out


def route_leads(claims: pd.DataFrame, by) -> list[str]:
    """How many routes are claimed in most games and how many rarely (the claim rate's
    interval above 50%, below 10%), naming the rare ones; split by policy, the counts of
    each and the routes rare under every policy."""
    if not by:
        most = claims[claims.claim_rate_low > MOST]
        rare = claims[claims.claim_rate_high < RARELY].sort_values("claim_rate")
        never = int((claims.claims == 0).sum())
        text = (f"{len(most)} of {len(claims)} routes are claimed in most games (95% interval "
                f"above {MOST:.0%}), {len(rare)} rarely (interval below {RARELY:.0%})")
        if len(rare):
            text += ": " + names(
                f"{r.name} {interval(r.claim_rate, r.claim_rate_low, r.claim_rate_high)}"
                for r in rare.itertuples())
        if never:
            text += f"; {_plural(never, 'route')} never claimed"
        return [text + "."]
    counts, rare_sets = [], []
    for policy, t in claims.groupby("policy", observed=True, sort=True):
        rare = set(t.route[t.claim_rate_high < RARELY])
        counts.append(f"{policy} {int((t.claim_rate_low > MOST).sum())} / {len(rare)}")
        rare_sets.append(rare)
    everywhere = set.intersection(*rare_sets) if rare_sets else set()
    n_routes = claims.route.nunique()
    text = (f"Of {n_routes} routes, claimed in most games / rarely (the claim rate's 95% "
            f"interval above {MOST:.0%} / below {RARELY:.0%}), per policy: "
            + "; ".join(counts) + ". ")
    if everywhere:
        rows = claims[claims.route.isin(everywhere)].groupby("route", sort=False).agg(
            name=("name", "first"), rate=("claim_rate", "max")).sort_values("rate")
        text += (f"Rarely claimed under every policy: {_plural(len(everywhere), 'route')}, "
                 + names(rows.name) + ".")
    else:
        text += "No route is rarely claimed under every policy."
    return [text]


def tunnel_leads(outcomes: pd.DataFrame) -> list[str]:
    """The share of tunnel attempts that asked for extra cards and the share of those
    declined (Wilson intervals over the attempts), per policy when split."""
    split = "policy" in outcomes.columns
    groups = outcomes.groupby("policy", observed=True, sort=True) if split else [(None, outcomes)]
    parts = []
    for policy, t in groups:
        attempts, asked, declined = int(t.attempts.sum()), int(t.asked.sum()), int(t.declined.sum())
        if not attempts:
            continue
        a_lo, a_hi = wilson_interval(asked, attempts)
        text = ("" if policy is None else f"{policy} ") + (
            f"{attempts:,}: {interval(asked / attempts, float(a_lo), float(a_hi))} asked "
            "for extra cards")
        if asked:
            d_lo, d_hi = wilson_interval(declined, asked)
            text += (f" and {interval(declined / asked, float(d_lo), float(d_hi))} of those "
                     "were declined")
        parts.append(text)
    if not parts:
        return []
    return ["Tunnel attempts" + (" per policy, " if split else " ") + "; ".join(parts)
            + " (Wilson 95% intervals over the attempts)."]


def station_leads(usage: pd.DataFrame) -> list[str]:
    """Where stations are built: the cities that get one in more than 5% of games (the
    built rate's interval above it), per policy when split."""
    split = "policy" in usage.columns
    groups = usage.groupby("policy", observed=True, sort=True) if split else [(None, usage)]
    parts = []
    for policy, t in groups:
        common = t[t.built_rate_low > STATIONS_COMMON].sort_values("built_rate", ascending=False)
        n = t.city.nunique()
        where = names(f"{r.city} {interval(r.built_rate, r.built_rate_low, r.built_rate_high)}"
                      for r in common.itertuples()) or "none"
        parts.append(("" if policy is None else f"{policy}: ")
                     + f"{where} (of {n} {'city' if n == 1 else 'cities'} with a station)")
    return [f"Cities that get a station in more than {STATIONS_COMMON:.0%} of games (the "
            "built rate's 95% interval above it)" + (", per policy" if split else "") + ": "
            + "; ".join(parts) + "."]


def station_value_leads(value: pd.DataFrame) -> list[str]:
    """What building stations is worth to the seat that may (paired with the run in which
    it may not): its score and win share, with minus without, over every player count
    (and every treated seat when several); higher or lower only where the interval
    excludes 0."""
    t = value[value.players.isna()] if value.players.isna().any() else value
    if t.seat.isna().any():
        t = t[t.seat.isna()]
    out = []
    for seat in dict.fromkeys(t.seat.tolist()):
        part = t[t.seat.isna()] if pd.isna(seat) else t[t.seat == seat]
        who = "" if pd.isna(seat) else f"seat {int(seat)}: "
        for metric, what, one in (("score_diff", "score per game", _signed),
                                  ("win_diff", "share of games won", _signed_pct)):
            r = part[part.metric == metric]
            if r.empty:
                continue
            r = r.iloc[0]
            verdict = ("higher with stations: the interval lies above 0" if r.low > 0 else
                       "lower with stations: the interval lies below 0" if r.high < 0 else
                       "no measurable difference: the interval contains 0")
            out.append(f"{_capital(who + what)}, with minus without stations: "
                       f"{interval(r.estimate, r.low, r.high, one)}, {verdict} (paired "
                       "bootstrap 95% interval).")
    return out


def _signed(x) -> str:
    return f"{x:+.2f}"


def _signed_pct(x) -> str:
    return f"{100 * x:+.2f}%"


# ----------------------------------------------------------------------------- the studies

def comparison_leads(table: pd.DataFrame, alpha: float, material: float) -> list[str]:
    """How many metrics differ significantly (Benjamini-Hochberg q < alpha) and how many
    of them materially, the largest with its paired interval."""
    mat = table[table.material].sort_values("relative", key=abs, ascending=False)
    text = (f"{int(table.significant.sum())} of {len(table)} metrics differ significantly "
            f"(Benjamini-Hochberg q < {alpha}); {len(mat)} of them are material, a change of "
            f"at least {material:.0%} of the base value")
    if len(mat):
        text += ". Largest: " + "; ".join(
            f"{r.metric} {r.base:.3g} -> {r.variant:.3g} ({r.relative:+.1%}, 95% interval "
            f"of the difference [{r.low:+.3g}, {r.high:+.3g}])" for r in mat.head(3).itertuples())
    else:
        text += "; no metric changes by that much"
    return [text + "."]


def importance_leads(table: pd.DataFrame, alpha: float = 0.05) -> list[str]:
    """The routes whose removal changes ticket completion (Benjamini-Hochberg q < alpha
    over the routes): those the board needs and those it does better without; the
    confirmed values of the top routes where they were measured again."""
    t = table.dropna(subset=["rank"])
    sig = t[t.completion_q < alpha]
    needed = sig[sig.completion_change < 0].sort_values("completion_change")
    better = sig[sig.completion_change > 0].sort_values("completion_change", ascending=False)

    def drop(r):        # percentage points of completion lost without the route
        text = f"{r.name} " + interval(-100 * r.completion_change, -100 * r.completion_high,
                                       -100 * r.completion_low, number)
        if "confirmed_importance" in t.columns and np.isfinite(r.confirmed_importance):
            text += (" (confirmed on fresh games: " + interval(
                r.confirmed_importance, r.confirmed_low, r.confirmed_high, number) + ")")
        return text

    out = [f"{len(needed)} of {len(t)} routes lower ticket completion when removed "
           f"(Benjamini-Hochberg q < {alpha} over the routes; drop in percentage points, "
           "paired 95% interval)" + (": " + names(drop(r) for r in needed.itertuples())
                                     if len(needed) else "") + "."]
    if len(needed) and "confirmed_importance" not in t.columns:
        out[0] += (" These are screening values: the top of a ranking of noisy estimates is "
                   "biased upward; confirm the top routes on fresh games (confirm=k, "
                   "--confirm K) before quoting their effect.")
    if len(better):
        out.append(f"Without {_plural(len(better), 'route')} the board completes more "
                   f"tickets (q < {alpha}; gain in percentage points): " + names(
                       f"{r.name} " + interval(100 * r.completion_change, 100 * r.completion_low,
                                               100 * r.completion_high, number)
                       for r in better.itertuples()) + ".")
    return out


def fairness_leads(spread: pd.DataFrame) -> list[str]:
    """Per round of suggested points: the spread of the tickets' values before and after,
    and whether it fell (the paired change's interval below 0)."""
    first = spread.iloc[0]
    out = []
    for _, r in spread.iterrows():
        if r["round"] == 0:
            continue
        if r.change_high < 0:
            verdict = "lower"
        elif r.change_low > 0:
            verdict = "higher"
        else:
            verdict = "not measurably changed (the interval contains 0)"
        out.append(
            f"Round {int(r['round'])}: the spread of ticket values is {verdict}, "
            f"{interval(first.spread, first.spread_low, first.spread_high, _num3)} as printed -> "
            f"{interval(r.spread, r.spread_low, r.spread_high, _num3)}; change "
            f"{interval(r.change, r.change_low, r.change_high, _signed3)} (balanceable "
            "tickets, paired bootstrap 95% intervals).")
    return out


def _num3(x) -> str:
    return f"{x:.3f}"


def _signed3(x) -> str:
    return f"{x:+.3f}"


# ----------------------------------------------------------------------------- the league

def rating_leads(ratings: pd.DataFrame, confidence: float) -> list[str]:
    """Which policies rate first: the top policy alone when its interval lies apart from
    every other's, else the policies whose intervals overlap the top one's."""
    r = ratings.sort_values("rating", ascending=False)
    top = r.iloc[0]
    level = f"{confidence:.0%}"
    shared = r.iloc[1:][r.iloc[1:].rating_high >= top.rating_low]
    one = f"{top.policy} {interval(top.rating, top.rating_low, top.rating_high, _elo)}"
    if shared.empty:
        nxt = r.iloc[1] if len(r) > 1 else None
        text = f"{one} rates first, its {level} interval apart from every other's"
        if nxt is not None:
            text += (f" (second: {nxt.policy} "
                     f"{interval(nxt.rating, nxt.rating_low, nxt.rating_high, _elo)})")
        return [text + "."]
    return [f"No policy rates first alone: {one} and "
            + names(f"{s.policy} {interval(s.rating, s.rating_low, s.rating_high, _elo)}"
                    for s in shared.itertuples())
            + f" have overlapping {level} intervals."]


def _elo(x) -> str:
    return f"{x:.0f}"


def matrix_leads(matrix: pd.DataFrame, confidence: float) -> list[str]:
    """The ordered pairs in which one policy finishes ahead of the other in more than
    half of their games (the share's interval above 50%), and how many are undecided."""
    m = matrix.dropna(subset=["win_share_low"])
    pairs = {tuple(sorted((str(a), str(b)))) for a, b in zip(m.policy, m.opponent)}
    clear = m[m.win_share_low > 0.5].sort_values("win_share_low", ascending=False)
    text = (f"In {len(clear)} of {_plural(len(pairs), 'pair')} one policy finishes ahead of "
            f"the other in more than half of their games ({confidence:.0%} interval above 50%, "
            "a shared rank counting half)")
    if len(clear):
        text += ": " + "; ".join(
            f"{r.policy} ahead of {r.opponent} in "
            f"{interval(r.win_share, r.win_share_low, r.win_share_high)}"
            for r in clear.head(6).itertuples()) + ("; ..." if len(clear) > 6 else "")
    if len(clear) < len(pairs):
        undecided = sorted(pairs - {tuple(sorted((str(a), str(b))))
                                    for a, b in zip(clear.policy, clear.opponent)})
        text += "; not decided: " + names(f"{a} and {b}" for a, b in undecided)
    return [text + "."]
