"""Reports open with what they found: a summary of every section's conclusions first (each
the section's own lead, word for word), the sections, then the methods and the manifest;
each conclusion stated with its evidence (an interval wholly on one side, or a test at a
stated level), never because one estimate is a little higher than another. Also: the run
report's game profile as one wide table, and map labels that do not overlap."""
from __future__ import annotations

import html
import itertools
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import ttrsim
from ttrsim import analysis as an
from ttrsim import maps, plots
from ttrsim.report import (write_comparison_report, write_league_report, write_report,
                           write_route_importance_report)
from ttrsim.report import leads
from ttrsim.report.run import profile_wide

sys.path.insert(0, str(Path(__file__).parent))
from test_analysis import fake_run, fake_summary_run  # noqa: E402


def page_parts(page: str):
    """(section ids in page order, summary items as (slug, text), each section's leads)."""
    ids = re.findall(r'<section id="(\w+)">', page)
    summary = re.search(r'<section id="summary">(.*?)</section>', page, re.S).group(1)
    items = [(slug, html.unescape(text)) for slug, text in
             re.findall(r'<li><a href="#(\w+)">[^<]*</a>: (.*?)</li>', summary)]
    sections = dict(re.findall(r'<section id="(\w+)">(.*?)</section>', page, re.S))
    lead = {slug: [html.unescape(t) for t in re.findall(r"<p class='lead'>(.*?)</p>", body)]
            for slug, body in sections.items()}
    return ids, items, lead


def check_layout(page: str, last: tuple) -> list:
    """The summary right after the title, ``last`` the last sections, and the summary's
    items exactly the sections' leads in page order; returns the items."""
    ids, items, lead = page_parts(page)
    assert ids[0] == "summary" and tuple(ids[-len(last):]) == last, ids
    head = page.index("<h1>")
    assert page.index('<section id="summary">') < page.index("<nav>")
    assert page.index('<section id="summary">') - head < 300     # title, version, summary
    want = [(slug, text) for slug in ids[1:] for text in lead[slug]]
    assert items == want and items
    assert not lead["summary"]
    return items


@pytest.fixture(scope="module")
def run_page(tmp_path_factory):
    out = tmp_path_factory.mktemp("summary")
    run = fake_run()
    return run, out, write_report(run, out / "r").read_text()


# ----------------------------------------------------------------------------- the run

def test_the_run_report_opens_with_every_sections_conclusions(run_page):
    run, out, page = run_page
    items = check_layout(page, ("methods", "manifest"))
    slugs = {slug for slug, _ in items}
    assert {"seats", "policies", "scores", "profile", "players", "tickets", "routes",
            "tunnels", "stations"} <= slugs
    # the methods say how; the manifest is the page's last table
    assert "Wilson score intervals" in page.split('<section id="methods">')[1]
    assert (out / "r" / "manifest.csv").exists()
    assert 'id="manifest"' in page.split('<section id="methods">')[1]


def test_each_summary_line_carries_its_sections_numbers(run_page):
    run, _, page = run_page
    _, items, _ = page_parts(page)
    said = {slug: " ".join(t for s, t in items if s == slug) for slug, _ in items}
    for r in an.score_distribution(run).itertuples():
        assert (f"{r.policy} {r.score_mean:.1f} [{r.score_mean_low:.1f}, "
                f"{r.score_mean_high:.1f}]") in said["scores"]
    for r in an.by_player_count(run).itertuples():
        assert (f"At {r.players} players a game lasts {r.turns_mean:.1f} ["
                f"{r.turns_mean_low:.1f}, {r.turns_mean_high:.1f}] turns and "
                f"{100 * r.completion_rate:.1f}% [{100 * r.completion_rate_low:.1f}%, "
                f"{100 * r.completion_rate_high:.1f}%]") in said["players"]
    # tickets per policy: completed / kept of that policy's seats
    g = run.games
    for policy in ("random", "tickets"):
        mine = g[g.policy.astype(str) == policy]
        rate = mine.tickets_completed.sum() / mine.tickets_kept.sum()
        assert f"{policy} {100 * rate:.1f}% [" in said["tickets"]
    # no seat of the three toy games differs from the fair share at 95%
    assert "no seat's win rate differs from the fair 50.0%" in said["seats"]


def test_a_skipped_section_is_named_in_the_summary(tmp_path):
    page = write_report(fake_summary_run(), tmp_path).read_text()
    check_layout(page, ("methods", "manifest"))
    summary = re.search(r'<section id="summary">(.*?)</section>', page, re.S).group(1)
    assert "Not in this report: Policies: the policy win matrix needs the per-event" in summary


def test_the_game_profile_is_one_wide_table(run_page):
    run, out, page = run_page
    prof = an.profile(run).table
    wide = profile_wide(prof)
    assert list(wide.columns) == ["part", "measure", "tickets", "random", "winners"]
    assert list(wide.measure) == list(dict.fromkeys(prof.label))
    assert list(wide.part[wide.part != ""]) == list(dict.fromkeys(prof.section))
    score = prof[(prof.measure == "score") & (prof.group == "tickets")].iloc[0]
    assert wide.loc[0, "tickets"] == f"{score.estimate:.1f} [{score.low:.1f}, {score.high:.1f}]"
    done = prof[(prof.measure == "tickets_completed") & (prof.group == "winners")].iloc[0]
    row = wide[wide.measure == "tickets completed"].iloc[0]
    assert row.winners == f"{done.estimate:.2f} [{done.low:.2f}, {done.high:.2f}]"
    # shares as percentages, a part named once, a group without the measure "–"
    hand = pd.DataFrame([
        ("p", "score", "score", "score", "mean", 101.26, 100.0, 102.5),
        ("winners", "score", "score", "score", "mean", 120.0, 119.0, 121.0),
        ("p", "bonus won", "longest_bonus_won", "longest path bonus won", "share", 0.4,
         0.35, 0.45),
        ("p", "bonus won", "globetrotter_won", "Globetrotter won", "share", 0.1, 0.08, 0.12)],
        columns=["group", "section", "measure", "label", "kind", "estimate", "low", "high"])
    assert profile_wide(hand).values.tolist() == [
        ["score", "score", "101.3 [100.0, 102.5]", "120.0 [119.0, 121.0]"],
        ["bonus won", "longest path bonus won", "40.0% [35.0%, 45.0%]", "–"],
        ["", "Globetrotter won", "10.0% [8.0%, 12.0%]", "–"]]
    # the page shows it; the numbers stay in profile.csv, one row per group and measure
    assert pd.read_csv(out / "r" / "profile_wide.csv").columns.tolist() == list(wide.columns)
    assert len(pd.read_csv(out / "r" / "profile.csv")) == len(prof)
    section = page.split('<section id="profile">')[1].split("</section>")[0]
    assert section.count("<table") == 1 and "<th>winners</th>" in section


# ----------------------------------------------------------------------------- the leads

def seats(rows, players=4):
    t = pd.DataFrame(rows, columns=["seat", "win_rate", "win_rate_low", "win_rate_high"])
    return t.assign(players=players, fair_share=1 / players)


def test_a_seat_is_named_only_when_its_interval_excludes_the_fair_share():
    table = seats([(0, 0.308, 0.306, 0.310),      # above
                   (1, 0.270, 0.240, 0.300),      # higher estimate, interval contains 25%
                   (2, 0.212, 0.200, 0.224),      # below
                   (3, 0.210, 0.180, 0.251)])     # contains it, just
    assert leads.seat_leads(table) == [
        "Seat 0 wins 30.8% [30.6%, 31.0%], above the fair 25.0%; seat 2 wins 21.2% "
        "[20.0%, 22.4%], below the fair 25.0%; the other 2 seats' intervals contain the "
        "fair share (95% Wilson intervals)."]
    even = seats([(0, 0.27, 0.24, 0.30), (1, 0.23, 0.20, 0.26)], players=2)
    even = even.assign(win_rate=[0.53, 0.47], win_rate_low=[0.49, 0.43],
                       win_rate_high=[0.57, 0.51], fair_share=0.5)
    both = pd.concat([even, table], ignore_index=True)
    got = leads.seat_leads(both)
    assert got[0].startswith("2 players: no seat's win rate differs from the fair 50.0%")
    assert got[1].startswith("4 players: seat 0 wins 30.8%")


def test_a_pair_of_policies_is_decided_only_when_its_interval_lies_above_half():
    m = pd.DataFrame([("a", "b", 0.55, 0.52, 0.58), ("b", "a", 0.45, 0.42, 0.48),
                      ("c", "a", 0.51, 0.49, 0.53), ("a", "c", 0.49, 0.47, 0.51),
                      ("b", "c", 0.50, 0.45, 0.55), ("c", "b", 0.50, 0.45, 0.55)],
                     columns=["policy_a", "policy_b", "ahead_share", "ahead_share_low",
                              "ahead_share_high"])
    assert leads.policy_leads(m) == [
        "1 of 3 pairs of policies are decided at 95% (one finishes ahead in more than half "
        "of their seat pairs, its interval above 50%): a ahead of b in 55.0% [52.0%, 58.0%]. "
        "Not decided (the interval reaches 50%): a and c, b and c."]


def test_tickets_that_cost_points_need_an_interval_below_half_and_enough_keeps():
    c = pd.DataFrame({"ticket": [1, 2, 3, 4], "name": ["A - B (8)", "C - D (5)", "E - F (9)",
                                                       "G - H (4)"],
                      "kept": [100, 100, 10, 100], "completed": [30, 48, 1, 90],
                      "completion_rate": [0.30, 0.48, 0.10, 0.90],
                      "completion_rate_low": [0.22, 0.38, 0.02, 0.83],
                      "completion_rate_high": [0.40, 0.58, 0.40, 0.95]})
    assert leads.ticket_leads(c, (), 30) == [
        "1 of 3 tickets kept at least 30 times is completed less than half the time (95% "
        "interval below 50%), so keeping them costs points on average: A - B (8) 30.0% "
        "[22.0%, 40.0%]; 1 kept fewer times is not judged."]
    none = leads.ticket_leads(c.assign(kept=[5, 5, 5, 5]), (), 30)
    assert none == ["No ticket was kept 30 times or more, too few to judge whether keeping "
                    "it costs points (4 kept fewer times)."]


def test_routes_claimed_in_most_games_and_rarely_by_their_intervals():
    t = pd.DataFrame({"name": ["r1", "r2", "r3", "r4"], "claims": [90, 60, 5, 0],
                      "claim_rate": [0.9, 0.52, 0.05, 0.0],
                      "claim_rate_low": [0.85, 0.45, 0.02, 0.0],
                      "claim_rate_high": [0.94, 0.59, 0.11, 0.03]})
    assert leads.route_leads(t, ()) == [
        "1 of 4 routes are claimed in most games (95% interval above 50%), 1 rarely "
        "(interval below 10%): r4 0.0% [0.0%, 3.0%]; 1 route never claimed."]


def test_split_by_policy_the_routes_rare_under_every_policy_are_named():
    rows = [("p", 1, "r1", 0.9, 0.85, 0.94), ("p", 2, "r2", 0.02, 0.0, 0.05),
            ("p", 3, "r3", 0.03, 0.01, 0.08), ("q", 1, "r1", 0.4, 0.35, 0.45),
            ("q", 2, "r2", 0.01, 0.0, 0.04), ("q", 3, "r3", 0.08, 0.05, 0.12)]
    t = pd.DataFrame(rows, columns=["policy", "route", "name", "claim_rate", "claim_rate_low",
                                    "claim_rate_high"]).assign(claims=1)
    assert leads.route_leads(t, ("policy",)) == [
        "Of 3 routes, claimed in most games / rarely (the claim rate's 95% interval above "
        "50% / below 10%), per policy: p 1 / 2; q 0 / 1. Rarely claimed under every "
        "policy: 1 route, r2."]


def test_route_importance_names_routes_by_their_q_value_and_says_when_unconfirmed():
    t = pd.DataFrame({"rank": [1, 2, 3], "name": ["r1", "r2", "r3"],
                      "completion_change": [-0.03, 0.02, -0.01],
                      "completion_low": [-0.04, 0.01, -0.03],
                      "completion_high": [-0.02, 0.03, 0.01],
                      "completion_q": [0.001, 0.01, 0.2]})
    got = leads.importance_leads(t)
    assert got[0].startswith("1 of 3 routes lower ticket completion when removed "
                             "(Benjamini-Hochberg q < 0.05 over the routes; drop in percentage "
                             "points, paired 95% interval): r1 3.00 [2.00, 4.00]. These are "
                             "screening values")
    assert got[1] == ("Without 1 route the board completes more tickets (q < 0.05; gain in "
                      "percentage points): r2 2.00 [1.00, 3.00].")
    confirmed = t.assign(confirmed_importance=[2.5, np.nan, np.nan],
                         confirmed_low=[1.5, np.nan, np.nan], confirmed_high=[3.5, np.nan, np.nan])
    got = leads.importance_leads(confirmed)
    assert got[0].endswith("r1 3.00 [2.00, 4.00] (confirmed on fresh games: 2.50 [1.50, "
                           "3.50]).")


def test_study_and_league_leads_follow_their_intervals():
    spread = pd.DataFrame({"round": [0, 1, 2], "spread": [0.4, 0.2, 0.35],
                           "spread_low": [0.35, 0.17, 0.3], "spread_high": [0.45, 0.23, 0.4],
                           "change": [0.0, -0.2, -0.05], "change_low": [0.0, -0.24, -0.11],
                           "change_high": [0.0, -0.16, 0.01]})
    got = leads.fairness_leads(spread)
    assert got[0].startswith("Round 1: the spread of ticket values is lower, 0.400 "
                             "[0.350, 0.450] as printed -> 0.200 [0.170, 0.230]; change "
                             "-0.200 [-0.240, -0.160]")
    assert "Round 2: the spread of ticket values is not measurably changed" in got[1]
    ratings = pd.DataFrame({"policy": ["x", "y", "z"], "rating": [300.0, 100.0, -400.0],
                            "rating_low": [280.0, 90.0, -420.0],
                            "rating_high": [320.0, 110.0, -380.0]})
    assert leads.rating_leads(ratings, 0.95)[0].startswith(
        "x 300 [280, 320] rates first, its 95% interval apart from every other's")
    close = ratings.assign(rating_high=[320.0, 285.0, -380.0])
    assert leads.rating_leads(close, 0.95) == [
        "No policy rates first alone: x 300 [280, 320] and y 100 [90, 285] have "
        "overlapping 95% intervals."]
    value = pd.DataFrame({"seat": [pd.NA, pd.NA], "players": [pd.NA, pd.NA],
                          "metric": ["score_diff", "win_diff"], "estimate": [2.9, -0.001],
                          "low": [2.86, -0.003], "high": [2.98, 0.002]})
    assert leads.station_value_leads(value) == [
        "Score per game, with minus without stations: +2.90 [+2.86, +2.98], higher with "
        "stations: the interval lies above 0 (paired bootstrap 95% interval).",
        "Share of games won, with minus without stations: -0.10% [-0.30%, +0.20%], no "
        "measurable difference: the interval contains 0 (paired bootstrap 95% interval)."]


# ----------------------------------------------------------------------------- studies, league

def test_study_and_league_reports_open_with_their_conclusions(tmp_path):
    kw = dict(games=100, seed=3, batch_size=50)
    ri = an.route_importance("newyork", 2, routes=[1, 2, 3], **kw)
    page = write_route_importance_report(ri, tmp_path / "ri").read_text()
    items = check_layout(page, ("method", "manifest"))
    assert items[0][0] == "table" and f"of {len(ri.table)} routes" in items[0][1]

    cmp = ttrsim.compare("newyork", ttrsim.variant("newyork", trains=12), players=2,
                         games=200, seed=2)
    page = write_comparison_report(cmp, tmp_path / "cmp").read_text()
    items = check_layout(page, ("method", "manifest"))
    assert items[0][1].startswith(f"{int(cmp.table.significant.sum())} of {len(cmp.table)} "
                                  "metrics differ significantly")

    lg = ttrsim.league(policies=["random", "tickets", "greedy"], board="newyork", games=30,
                       n_resamples=100, out=tmp_path / "lg")
    page = write_league_report(lg, tmp_path / "lg-report").read_text()
    items = check_layout(page, ("method", "manifest"))
    assert [slug for slug, _ in items] == ["ratings", "matrix"]
    top = lg.ratings.sort_values("rating", ascending=False).iloc[0]
    assert f"{top.policy} {top.rating:.0f} [{top.rating_low:.0f}, {top.rating_high:.0f}]" \
        in items[0][1]


# ----------------------------------------------------------------------------- map labels

@pytest.mark.parametrize("name", ["europe", "usa", "newyork"])
def test_city_names_on_the_map_do_not_overlap(name):
    board = maps.load(name)
    fig = plots.plot_route_map(board, {int(r): 0.1 * i for i, r in enumerate(board.route_id)},
                               "a value")
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[0]
    labels = [t for t in ax.texts if t.get_text() in set(board.cities)]
    assert sorted(t.get_text() for t in labels) == sorted(board.cities)
    boxes = {t.get_text(): t.get_window_extent(renderer) for t in labels}

    def shared(a, b):
        return (max(0.0, min(a.x1, b.x1) - max(a.x0, b.x0))
                * max(0.0, min(a.y1, b.y1) - max(a.y0, b.y0)))

    clash = [(a, b) for (a, x), (b, y) in itertools.combinations(boxes.items(), 2)
             if shared(x, y) > 0]
    assert not clash
    # each name beside its own dot: near it, clear of every dot, inside the map
    dots = ax.transData.transform(np.asarray(board.coords, float))
    for city, (x, y) in zip(board.cities, dots):
        box = boxes[city]
        gap = np.hypot(max(box.x0 - x, 0, x - box.x1), max(box.y0 - y, 0, y - box.y1))
        assert gap < 25, (city, gap)
        for dx, dy in dots:
            assert not (box.x0 < dx < box.x1 and box.y0 < dy < box.y1), city
        assert ax.bbox.x0 <= box.x0 and box.x1 <= ax.bbox.x1 + 1, city
