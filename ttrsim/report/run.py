"""Self-contained HTML report of a run.

``write_report(run, out_dir)`` writes ``out_dir/index.html`` with every figure embedded
as a base64 PNG and every table as HTML, plus each figure as a PNG file and each table
as a CSV file beside it. The page opens with a summary of every section's conclusions
(``ttrsim.report.leads``: each with its interval or test), then the sections, then the
methods and the manifest. It works for per-event and summary-mode runs: a section whose
tables are absent is kept with a note saying why it was skipped.
"""
from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd

from ttrsim import analysis as an
from ttrsim import plots
from ttrsim.analysis.inputs import EVENT, manifest_of, source
from ttrsim.analysis.stations import check_paired_runs
from ttrsim.analysis.tickets import MIN_KEPT
from ttrsim.dispatch import progress_bar
from ttrsim.report import leads
from ttrsim.report.html import Section, Skip, check_stronger, fmt_pct, write_page

__all__ = ["write_report", "SECTIONS"]


def _nonempty(df: pd.DataFrame, what: str) -> pd.DataFrame:
    if df is None or df.empty:
        raise Skip(f"the run holds no {what}")
    return df


def _manifest_value(manifest: dict, *names, default="unknown"):
    for name in names:
        if manifest.get(name) is not None:
            return manifest[name]
    return default


def _is_summary(run) -> bool:
    return getattr(run, "games", None) is None and getattr(run, "seat_summary", None) is not None


def _policy_names(run) -> list[str]:
    """The policies of the run (names as in the games table or the seat summary)."""
    try:
        _, games = source(run, "games")
    except an.MissingTable:
        return []
    if games is None or "policy" not in games.columns:
        return []
    return sorted(map(str, games.policy.unique()))


def _policy_view(run, policy: str):
    """The per-event tables of ``run`` restricted to the seats played by ``policy`` (its
    seat-games); counts of games become the games in which the policy played."""
    games = run.games[run.games.policy.astype(str) == policy]
    seats = games[["game", "seat"]]

    def only(name):
        table = getattr(run, name, None)
        if table is None:
            return None
        return table.merge(seats, on=["game", "seat"], how="inner")

    return SimpleNamespace(games=games, tickets=only("tickets"), routes=only("routes"),
                           tunnels=only("tunnels"), stations=only("stations"),
                           manifest=manifest_of(run), board=getattr(run, "board", None))


def _split(run) -> list[tuple[str | None, object]]:
    """``[(policy, view)]``: one per policy for a per-event run holding several, else
    ``[(None, run)]``."""
    names = _policy_names(run)
    if len(names) < 2 or _is_summary(run) or getattr(run, "games", None) is None:
        return [(None, run)]
    return [(p, _policy_view(run, p)) for p in names]


def _pooled_note(sec: "Section", run, what: str) -> None:
    """Say visibly that a table pools every policy (summary mode keeps no policy for it)."""
    names = _policy_names(run)
    if len(names) > 1:
        sec.note(f"Pooled over all policies ({', '.join(names)}): summary mode counts {what} "
                 "without the policy that played them. Run in per-event mode (without --summary) "
                 "for one table per policy.")


def _slug(policy: str) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in policy)


def _readable(value) -> str:
    """A manifest value as text: mappings as ``key value, ...``, sequences comma-separated."""
    if isinstance(value, dict):
        return ", ".join(f"{k} {_readable(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return ", ".join(_readable(v) for v in value)
    return str(value)


# ----------------------------------------------------------------------------- sections

def _methods(sec: Section, run, ctx) -> None:
    m = ctx["manifest"]
    board = _manifest_value(m, "board")
    if isinstance(board, dict):
        board = board.get("name", board)
    policies = _manifest_value(m, "policies")
    if isinstance(policies, (list, tuple)):
        policies = ", ".join(map(str, policies))
    summary = m.get("summary", _is_summary(run))
    mode = _manifest_value(m, "mode", default="summary" if summary else "per-event")
    rotate = _manifest_value(m, "rotate", "seat_rotation", default=None)
    seating = {True: " (seated in rotation)", False: " (one per seat, from seat 0)"}.get(rotate, "")
    sec.text(
        f"Board {board} (checksum {_manifest_value(m, 'board_checksum', 'checksum')}); "
        f"policies {policies}{seating}; {_manifest_value(m, 'games')} games from seed "
        f"{_manifest_value(m, 'seed')}, batch size {_manifest_value(m, 'batch_size')}, {mode} mode; "
        f"simulated with ttrsim {_manifest_value(m, 'ttrsim_version', 'version')}."
    )
    sec.text(
        "Intervals are 95% confidence intervals: Wilson score intervals for rates (shares of "
        "games, tickets or attempts); percentile bootstrap intervals over games (2000 resamples, "
        "fixed seed) for means of per-event tables; normal intervals from sums and sums of "
        "squares for means of summary tables. Tunnel odds are exact hypergeometric probabilities."
    )


def _manifest(sec: Section, run, ctx) -> None:
    m = ctx["manifest"]
    if not m:
        raise Skip("the run has no manifest")
    items = pd.DataFrame({"key": list(m), "value": [_readable(v) for v in m.values()]})
    sec.table("manifest", items, "Run manifest: how the run was made, every setting.", max_rows=100)


def _about(run, m: dict) -> str:
    """What was played, in one line: the summary's first."""
    board = _manifest_value(m, "board", default=getattr(getattr(run, "board", None), "name", "?"))
    if isinstance(board, dict):
        board = board.get("name", board)
    policies = _manifest_value(m, "policies", default=None)
    if isinstance(policies, (list, tuple)):
        policies = ", ".join(map(str, policies))
    games = _manifest_value(m, "games", default="?")
    games = f"{games:,}" if isinstance(games, int) else games
    return (f"{games} games on {board}" + (f", seats played by {policies}" if policies else "")
            + f" (seed {_manifest_value(m, 'seed')}). Each conclusion below carries its 95% "
            "interval; a direction (above, below, ahead) is stated only where the interval "
            "lies wholly on one side or a test says so. Methods and the manifest are at the "
            "end.")


def _seats(sec: Section, run, ctx) -> None:
    table = an.seat_advantage(run, seed=ctx["seed"])
    sec.table("seat_advantage", table, "Win rate and score difference (seat minus the mean of the others) per seat.",
              ["players", "seat", "games", "win_rate", "win_rate_low", "win_rate_high", "fair_share",
               "score_mean", "score_diff", "score_diff_low", "score_diff_high"])
    sec.figure("seat_advantage", plots.plot_seat_advantage(table), "Win rate per seat against the fair share 1 / players.")
    for text in leads.seat_leads(table):
        sec.lead(text)


def _policies(sec: Section, run, ctx) -> None:
    matrix = an.policy_win_matrix(run)
    if matrix.empty:
        raise Skip("every seat played the same policy")
    sec.table("policy_win_matrix", matrix, "Share of seat pairs in which policy A finished ahead of policy B.")
    sec.figure("policy_win_matrix", plots.plot_policy_matrix(matrix), "Policy A (rows) against policy B (columns).")
    for text in leads.policy_leads(matrix):
        sec.lead(text)


def _scores(sec: Section, run, ctx) -> None:
    table = an.score_distribution(run, seed=ctx["seed"])
    sec.table("score_distribution", table, "Final scores per policy.")
    if _is_summary(run):
        sec.text("Summary mode keeps sums, not the scores themselves: the chart shows the mean "
                 "score with its 95% interval; quantiles (boxes) need a per-event run.")
        caption = "Mean final score per policy with its 95% interval."
    else:
        caption = "Final scores per policy (box: quartiles, whiskers: 5th-95th percentile, triangle: mean)."
    sec.figure("score_distribution", plots.plot_score_distribution(table), caption)
    for text in leads.score_leads(table):
        sec.lead(text)
    board = getattr(run, "board", None)       # runs of other origin may carry no board
    if getattr(board, "globetrotter_bonus", 0):
        sec.table("bonus_shares", an.bonus_shares(run),
                  f"Seat-games that scored each bonus, per policy (Wilson 95% intervals): the "
                  f"Globetrotter ({board.globetrotter_bonus} points to every seat tied for "
                  f"the most completed tickets, nobody when no ticket was completed)"
                  + (f" and the longest path ({board.longest_bonus} points)"
                     if board.longest_bonus else "") + ".")


def profile_wide(table: pd.DataFrame) -> pd.DataFrame:
    """A game profile's long table (``analysis.profile(run).table``) as one wide table: a
    row per measure (its part named on the part's first row), a column per group (each
    policy in the run's order, then the winners), each cell the estimate with its 95%
    interval (shares as percentages)."""
    groups = list(dict.fromkeys(table["group"]))
    cells = {(r.measure, r.group): _profile_cell(r) for r in table.itertuples()}
    rows, part = [], None
    for r in table.drop_duplicates("measure").itertuples():
        rows.append({"part": r.section if r.section != part else "", "measure": r.label,
                     **{g: cells.get((r.measure, g), "–") for g in groups}})
        part = r.section
    return pd.DataFrame(rows, columns=["part", "measure", *groups])


def _profile_cell(r) -> str:
    if not np.isfinite(r.estimate):
        return "–"
    one = fmt_pct if r.kind == "share" else leads.number
    return leads.interval(r.estimate, r.low, r.high, one)


def _profile(sec: Section, run, ctx) -> None:
    prof = an.profile(run)
    sec.text("How the seats play and score, per policy and for the winners (seat-games "
             "ranked first): means per seat-game with normal 95% intervals, shares of "
             "seat-games with Wilson intervals; the first-claim turn is the game turn (all "
             "seats counted) of a seat's first claim, over the seats that claimed; the "
             "average length of a claimed route is a ratio of sums, without an interval "
             "(docs/analysis.md).")
    for text in leads.profile_leads(prof.table):
        sec.lead(text)
    wide = profile_wide(prof.table)
    n = prof.table[prof.table.measure == "score"].set_index("group").n
    prof.table.to_csv(sec.out_dir / "profile.csv", index=False)
    sec.table("profile_wide", wide,
              "Game profile: a column per policy and one for the winners, each cell the "
              "mean per seat-game (or share of seat-games) with its 95% interval; seat-games: "
              + ", ".join(f"{g} {int(k):,}" for g, k in n.items())
              + ". Every estimate and bound as numbers, one row per group and measure: "
              "profile.csv.", max_rows=len(wide))
    sec.figure("profile", plots.plot_profile(prof.table),
               "Score parts and routes claimed by length per policy and for the winners.")


def _players(sec: Section, run, ctx) -> None:
    table = an.by_player_count(run, seed=ctx["seed"])
    sec.table("by_player_count", table, "Game length and ticket completion by player count.",
              ["players", "games", "turns_mean", "turns_mean_low", "turns_mean_high", "turns_median",
               "all_passed_rate", "tickets_kept_mean", "completion_rate", "completion_rate_low",
               "completion_rate_high", "score_mean"])
    for text in leads.player_leads(table):
        sec.lead(text)
    if len(table) < 2:
        sec.text("The run holds one player count: the chart by player count is drawn only for "
                 "runs of several (the table above gives the figures).")
        return
    sec.figure("by_player_count", plots.plot_game_length(table), "Turns per game and ticket completion rate.")


def _tickets(sec: Section, run, ctx) -> None:
    names = _policy_names(run)
    mode, table = source(run, "tickets")
    by = ("policy",) if len(names) > 1 and (mode == EVENT or "policy" in table.columns) else ()
    per = " per policy" if by else ""
    if not by:
        _pooled_note(sec, run, "ticket offers")
    else:
        sec.text(f"Every table and chart of this section is split by policy ({', '.join(names)}): "
                 "a ticket's rates describe the players of one policy.")
    completion = an.ticket_completion(run, by=by)
    for text in leads.ticket_leads(completion, by, MIN_KEPT):
        sec.lead(text)
    if by:      # each ticket's rows of every policy side by side
        completion = completion.sort_values(["ticket", "policy"], kind="stable", ignore_index=True)
    sec.table("ticket_completion", completion, f"Keep and completion rate of each ticket{per}.",
              [*by, "ticket", "name", "points", "offered", "keep_rate", "completion_rate", "completion_rate_low",
               "completion_rate_high", "expected_points", "by_station"],
              max_rows=60 * (len(names) if by else 1))
    sec.figure("ticket_completion", plots.plot_ticket_completion(completion),
               f"Completion rate of each ticket{per}.")
    balance = an.ticket_balance(run, by=by)
    if by:      # the largest gaps of every policy first
        balance = balance.sort_values(["rank", "policy"], kind="stable", ignore_index=True,
                                      na_position="last")
    sec.text("Balance: gap = printed points - expected points when kept (= 2 x points x failure rate); "
             f"tickets ranked by the lower end of the gap's 95% interval{' within each policy' if by else ''}, "
             f"so that a large gap seen in few games does not rank first; tickets kept fewer than "
             f"{MIN_KEPT} times are not ranked (too few games).")
    sec.table("ticket_balance", balance, f"Tickets ranked by the balance gap{per}.",
              [*by, "rank", "ticket", "name", "points", "kept", "completion_rate", "expected_points", "gap",
               "gap_low", "gap_high"])
    sec.figure("ticket_balance", plots.plot_ticket_balance(balance),
               f"Expected points when kept against printed points{per}.")


def _routes(sec: Section, run, ctx) -> None:
    names = _policy_names(run)
    split = len(names) > 1 and not _is_summary(run)
    by = ("policy",) if split else ()
    if split:
        sec.text(f"Split by policy ({', '.join(names)}): a route's claim rate is the share of the "
                 "games a policy played in which one of its seats claimed the route.")
    else:
        _pooled_note(sec, run, "route claims")
    claims = an.route_claims(run, by=by)
    for text in leads.route_leads(claims, by):
        sec.lead(text)
    ranked = claims.sort_values([*by, "claim_rate"], ascending=[True] * len(by) + [False], kind="stable")
    if by:      # the most claimed routes of every policy first
        order = ranked.groupby("policy", observed=True).cumcount()
        ranked = ranked.assign(_order=order).sort_values(["_order", "policy"], kind="stable")
        ranked = ranked.drop(columns="_order")
    sec.table("route_claims", ranked, f"Routes by claim rate (share of games claimed){' per policy' if by else ''}.",
              [*by, "route", "name", "length", "color", "claims", "claim_rate", "claim_rate_low",
               "claim_rate_high", "turn_median", "unneeded_share"])
    if ctx["board"] is None or getattr(ctx["board"], "coords", None) is None:
        sec.text("No board coordinates in this run: the contention map is skipped.")
        return
    if not split:
        sec.figure("route_contention", plots.plot_route_contention(claims, ctx["board"]),
                   "Routes coloured by claim rate.")
        return
    # one colour scale for every policy's map, so that the same colour means the same rate
    vmax = float(claims.claim_rate.max()) if len(claims) else 1.0
    sec.text(f"The maps share one colour scale (0 to {vmax:.3g}, the highest claim rate of any "
             "policy): the same colour is the same claim rate on every map.")
    for policy in names:
        part = claims[claims.policy.astype(str) == policy]
        sec.figure(f"route_contention_{_slug(policy)}",
                   plots.plot_route_contention(part, ctx["board"], title=f"Route contention: policy {policy}",
                                               vmax=vmax),
                   f"Routes coloured by claim rate, policy {policy}.")


def _tunnels(sec: Section, run, ctx) -> None:
    _, table = source(run, "tunnels")
    _nonempty(table, "tunnel attempts (the board may have no tunnels)")
    views = _split(run)
    if views[0][0] is not None:
        sec.text(f"Split by policy ({', '.join(p for p, _ in views)}): each policy's own attempts.")
    else:
        _pooled_note(sec, run, "tunnel attempts")
    parts = []
    for policy, view in views:
        _, own = source(view, "tunnels")
        if own is None or own.empty:
            sec.text("No tunnel was attempted." if policy is None else f"Policy {policy} attempted no tunnel.")
            continue
        out = an.tunnel_outcomes(view)
        parts.append(out if policy is None else out.assign(policy=policy))
    outcomes = pd.concat(parts, ignore_index=True)
    for text in leads.tunnel_leads(outcomes):
        sec.lead(text)
    by = ["policy"] if "policy" in outcomes.columns else []
    outcomes = outcomes[by + [c for c in outcomes.columns if c not in by]]
    if by:      # each route's rows of every policy side by side
        outcomes = outcomes.sort_values(["route", "policy"], kind="stable", ignore_index=True)
    sec.table("tunnel_outcomes", outcomes,
              f"Extra cards asked, declines and cards paid per tunnel route{' and policy' if by else ''}.",
              [*by, "route", "name", "attempts", "extra_mean", "p_extra_0", "p_extra_1", "p_extra_2",
               "p_extra_3", "decline_rate", "extra_paid_mean"])
    board = ctx["board"]
    if board is None:
        return
    exact = an.tunnel_odds(board, board.colors[0])
    wild = ["wild", board.wild]
    for policy, view in views:
        # Attempts paid with a plain colour, against the exact odds for one colour with no
        # card known beyond the deck composition.
        _, own = source(view, "tunnels")
        if own is None or own.empty:
            continue
        plain = own[~own.color.astype(str).isin(wild)] if "color" in own.columns else own
        observed = an.tunnel_extra_distribution(plain, by=()) if len(plain) else None
        who = "" if policy is None else f", policy {policy}"
        sec.figure("tunnel_odds" + ("" if policy is None else f"_{_slug(policy)}"),
                   plots.plot_tunnel_odds(exact, observed,
                                          title=None if policy is None else f"Tunnel extra cards{who}"),
                   "Exact odds for one plain colour with only the deck composition known, against the "
                   f"observed shares of attempts paid with a plain colour{who} (in play, the cards a "
                   "player knows of shift the odds of each attempt).")


def _stations(sec: Section, run, ctx) -> None:
    _, table = source(run, "stations")
    _nonempty(table, "stations built")
    views = _split(run)
    if views[0][0] is not None:
        sec.text(f"Split by policy ({', '.join(p for p, _ in views)}): built_rate is the share of "
                 "the games a policy played in which one of its seats built a station in the city.")
    else:
        _pooled_note(sec, run, "stations")
    parts = []
    for policy, view in views:
        usage = an.station_usage(view)
        usage = usage[usage.built > 0]
        if usage.empty:
            sec.text("No station was built." if policy is None else f"Policy {policy} built no station.")
        parts.append(usage if policy is None else usage.assign(policy=policy))
    usage = pd.concat(parts, ignore_index=True)
    if len(usage):
        for text in leads.station_leads(usage):
            sec.lead(text)
    by = ["policy"] if "policy" in usage.columns else []
    usage = usage[by + [c for c in usage.columns if c not in by]]
    if by:
        usage = usage.sort_values(["city", "policy"], kind="stable", ignore_index=True)
    sec.table("station_usage", usage, f"Cities where stations were built{' per policy' if by else ''}.")
    baseline = ctx["baseline"]
    if baseline is None:
        sec.text("Station value needs a paired run of the same seed in which a seat may not build "
                 "stations (ttrsim report RUN_DIR --baseline OTHER_RUN_DIR, or "
                 "write_report(..., baseline=that_run)).")
        return
    value = an.station_value(run, baseline, seed=ctx["seed"])
    for text in leads.station_value_leads(value):
        sec.lead(text)
    sec.table("station_value", value, "Paired station value (with minus without stations).")
    sec.figure("station_value", plots.plot_station_value(value), "Station value by player count.")


# the columns of a compare_play table shown after its own identity columns
_PLAY_VALUES = ["base", "base_low", "base_high", "strong", "strong_low", "strong_high", "difference",
                "low", "high", "q_value", "base_verdict", "strong_verdict", "changed", "why"]
_PLAY_TABLES = {
    "score_parts": ("Score parts and game", ["label"],
                    "Mean per player and game (game length: turns per game); each play's normal "
                    "95% interval."),
    "seats": ("Seat advantage", ["label"],
              "Win share (Wilson interval; reference: the fair share), mean score and score "
              "minus the mean of the other seats (bootstrap intervals; reference 0) per seat."),
    "policies": ("Policies", ["label"],
                 "Win share (reference: the policy's fair share of the seats) and mean score per "
                 "policy, each play's normal 95% interval."),
    "stations": ("Station value", ["label"],
                 "The paired station study of each play (with minus without stations for the "
                 "seat that may not build them, bootstrap intervals): per game, and points per "
                 "station built (reference 0)."),
    "tickets": ("Ticket completion per ticket", ["name", "base_kept", "strong_kept"],
                "Completed / kept (Wilson intervals; reference 1/2: above it keeping the ticket "
                "adds points on average, below it costs them)."),
    "routes": ("Most contested routes", ["label", "base_rank", "strong_rank"],
               "Claim rate (share of games; Wilson intervals) of the routes among the most "
               "claimed under either play, with their rank under each."),
}


def _stronger_method(sec: Section, m: dict) -> None:
    """What the section compares and how (from the comparison's manifest ``m``)."""
    sec.text(f"The same {m['games']:,} games (seed {m['seed']}: game g is dealt from the same "
             f"shuffle in both runs; seats {'in rotation' if m['rotate'] else 'fixed'}) played "
             f"again with {', '.join(m['strong_policies'])} in place of "
             f"{', '.join(m['base_policies'])}, seat by seat"
             + ("" if m.get("strong_baseline_policies") is None else
                f"; the station study's run without stations likewise "
                f"({', '.join(m['strong_baseline_policies'])})") + ".")
    sec.text("Each play's value carries the 95% interval of this report's own table (Wilson for "
             "rates, percentile bootstrap for seat and station means, a normal interval for the "
             "score parts and policy means). The difference (strong minus base) has a 95% interval "
             "paired by game (delta method on per-game sums, Student t) and a Benjamini-Hochberg "
             "q-value within its table (over every ticket, every route).")
    sec.text("Highlighted rows: the conclusion changes. A row with a reference value gets a "
             "verdict under each play, 'above' or 'below' when its 95% interval lies wholly on "
             "one side, else 'unclear'; it changes when the verdicts differ (a significant effect "
             "flips sign, or is significant under one play only). A route changes when it is "
             f"among the {m['top_routes']} most claimed under one play only. A quantity with no "
             f"reference (score parts, game length, stations built) changes when the difference "
             f"is significant (q < {m['alpha']}) and at least {m['material']:.0%} of the base "
             "value. A seat's mean score is shown for reading only: its conclusion is the score "
             "against the other seats.")


def _stronger(sec: Section, run, ctx) -> None:
    cmp = ctx["stronger"]
    if cmp is None:
        sec.text("This section needs a run of the same games (board, players, games, seed, seat "
                 "rotation) under stronger play, e.g. expert in place of tickets seat by seat: "
                 "ttrsim report RUN_DIR --stronger STRONG_RUN_DIR, or write_report(..., "
                 "stronger=ttrsim.analysis.compare_play(run, strong_run)).")
        return
    m = cmp.manifest
    if list(m["base_policies"]) == list(m["strong_policies"]) and \
            len(set((m.get("expert_models") or {}).values())) <= 1:
        # the same policies twice: a check of the pairing, not stronger play
        sec.heading = "The same policies played again"
        sec.note("Both runs are played by the same policies: this section compares the run "
                 "with itself (every difference should be zero), not with stronger play.")
    elif m.get("weaker"):
        sec.heading = "Under weaker play"
        sec.note(m["weaker"])
    base, strong = m["base_label"], m["strong_label"]
    if base == strong:
        base, strong = f"{base} (base)", f"{strong} (strong)"
    names = {"base": base, "base_low": f"{base} low", "base_high": f"{base} high",
             "strong": strong, "strong_low": f"{strong} low", "strong_high": f"{strong} high",
             "base_kept": f"{base} kept", "strong_kept": f"{strong} kept",
             "base_rank": f"{base} rank", "strong_rank": f"{strong} rank",
             "base_verdict": f"{base} verdict", "strong_verdict": f"{strong} verdict"}
    _stronger_method(sec, m)
    tables = cmp.tables()
    counts = pd.DataFrame([{"measure": _PLAY_TABLES[k][0], "rows": len(t),
                            "differ (q < alpha)": int(t.significant.sum()),
                            "conclusions changed": int(t.changed.sum())}
                           for k, t in tables.items() if len(t)])
    sec.table("stronger_counts", counts, "Rows, significant differences and changed conclusions "
              "per measure.")
    changed = cmp.changed()
    n_rows = sum(len(t) for t in tables.values())
    sec.lead(f"Under {strong}, {len(changed)} of {n_rows} conclusions change; "
             f"{sum(int(t.significant.sum()) for t in tables.values())} differences are "
             f"significant (q < {m['alpha']}), and a difference without a reference is called "
             f"material only from {m['material']:.0%} of the base value on.")
    if len(changed):
        sec.note(f"{len(changed)} conclusions change under {strong}: " + "; ".join(
            f"{lab} ({why})" for lab, why in zip(changed.label.head(12), changed.why.head(12)))
            + ("; ..." if len(changed) > 12 else "") + ".")
    else:
        sec.text(f"No conclusion changes under {strong}.")
    order = ["score_parts", "seats", "policies", "stations", "tickets", "routes"]
    for key in order:
        t = tables.get(key)
        if t is None or not len(t):
            continue
        heading, ident, caption = _PLAY_TABLES[key]
        if key == "tickets":      # the changed tickets first, then by the difference
            t = t.assign(_o=t.difference.abs()).sort_values(["changed", "_o"], ascending=False,
                                                            kind="stable").drop(columns="_o")
        shown = t.rename(columns=names)
        cols = [names.get(c, c) for c in ident + _PLAY_VALUES]
        sec.table(f"stronger_{key}", shown.reset_index(drop=True), f"{heading}. {caption}", cols,
                  max_rows=120, highlight=t.changed.to_numpy())
        if key == "score_parts":
            points = t[t.metric.isin(["score", "route_points", "ticket_points", "longest_bonus",
                                      "globetrotter", "station_points", "attraction_points"])]
            sec.figure("stronger_score_parts", plots.plot_play_bars(points, base, strong),
                       f"Score parts per player under {base} and {strong}; (*): changed.")
        if key == "tickets":
            sec.figure("stronger_tickets",
                       plots.plot_play_scatter(t, base, strong, "ticket completion", reference=0.5),
                       f"Completion of each ticket (completed / kept) under {strong} against "
                       f"{base}, Wilson intervals; red: the verdict against 1/2 changes.")
        if key == "routes":
            sec.figure("stronger_routes",
                       plots.plot_play_scatter(t, base, strong, "claim rate"),
                       f"Claim rate of the most contested routes under {strong} against {base}; "
                       f"red: in the top {m['top_routes']} under one play only.")
    manifest = pd.DataFrame({"key": list(m), "value": [_readable(v) for v in m.values()]})
    sec.table("stronger_manifest", manifest, "Manifest of the comparison.", max_rows=60)


SECTIONS = [
    ("seats", "Seat advantage", _seats),
    ("policies", "Policies", _policies),
    ("scores", "Scores", _scores),
    ("profile", "Game profile", _profile),
    ("players", "Game length and ticket completion by player count", _players),
    ("tickets", "Tickets", _tickets),
    ("routes", "Routes", _routes),
    ("tunnels", "Tunnels", _tunnels),
    ("stations", "Stations", _stations),
    ("stronger", "Under stronger play", _stronger),
    ("methods", "Methods", _methods),
    ("manifest", "Manifest", _manifest),
]

def write_report(run, out_dir, title: str | None = None, *, baseline=None, stronger=None,
                 seed=0, progress: bool = False, extra=()) -> Path:
    """Write ``out_dir/index.html`` (self-contained) plus the figures (PNG) and tables (CSV):
    the summary of every section's conclusions first, the methods and the manifest last.

    ``run`` is a per-event or summary-mode run. ``baseline``, optional, is a paired run of
    the same board, players, games, seed and seat layout in which a seat may not build
    stations (another run is refused before anything is written); it adds the station value.
    ``stronger``, optional, is ``ttrsim.analysis.compare_play(run, strong_run, ...)``: the
    same games under stronger play, which adds the section "Under stronger play" (a
    comparison of another run is refused before anything is written).
    ``seed`` seeds the bootstrap intervals; ``progress`` shows a bar over the sections.
    ``extra``: sections the caller built with the page kit (``ttrsim.report.html.Section``
    on ``out_dir``), placed first. Returns the path of ``index.html``.
    """
    if baseline is not None:        # before anything is written
        check_paired_runs(run, baseline)
    if stronger is not None:
        check_stronger(manifest_of(run), stronger,
                       [("board", "board"), ("board_checksum", "board_checksum"),
                        ("games", "games"), ("seed", "seed"), ("players", "players"),
                        ("policies", "base_policies")], "run", "compare_play(run, strong_run)")
    out_dir = Path(out_dir)
    created = not out_dir.exists()
    out_dir.mkdir(parents=True, exist_ok=True)
    manifest = manifest_of(run)
    ctx = {"manifest": manifest, "board": getattr(run, "board", None), "baseline": baseline,
           "stronger": stronger, "seed": seed}
    board_name = _manifest_value(manifest, "board", default=getattr(ctx["board"], "name", "board"))
    title = title or f"ttrsim report: {board_name}, {_manifest_value(manifest, 'games', default='?')} games"
    sections = list(extra)
    bar = progress_bar(progress, len(SECTIONS), unit="section", desc="report", scale=False)
    try:
        for slug, heading, build in SECTIONS:
            if bar is not None:
                bar.set_postfix_str(slug)
            sec = Section(out_dir, slug, heading)
            try:
                build(sec, run, ctx)
            except (Skip, an.MissingTable) as reason:
                sec.skip(str(reason))
            sections.append(sec)
            if bar is not None:
                bar.update()
        return write_page(out_dir, title, sections, about=_about(run, manifest))
    except BaseException:
        # a refused run (a damaged part read on the way) leaves no half-written report
        if created:
            shutil.rmtree(out_dir, ignore_errors=True)
        raise
    finally:
        if bar is not None:
            bar.close()
