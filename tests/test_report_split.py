"""Reports of runs holding several policies: the ticket, balance, route, tunnel and station
tables and figures are split by policy (per-event runs), or say visibly that they pool
the policies (summary tables that keep no policy). Counts are checked against the
per-event tables directly."""
from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

import ttrsim
from ttrsim import analysis as an
from ttrsim import cli, plots
from ttrsim.report import write_report

sys.path.insert(0, str(Path(__file__).parent))
from helpers import EUROPE3  # noqa: E402
from test_analysis import fake_run, station_pair  # noqa: E402

SPECS = EUROPE3["players"]          # tickets, routes, random: a policy builds no station
POOLED = "Pooled over all policies"


@pytest.fixture
def event_run(europe3):
    return europe3


@pytest.fixture
def summary_run(europe3_summary):
    return europe3_summary


@pytest.fixture
def event_report(europe3_report):
    return europe3_report


def seats_of(run, policy) -> pd.DataFrame:
    g = run.games
    return g[g.policy.astype(str) == policy][["game", "seat"]]


def own(run, table, policy) -> pd.DataFrame:
    return getattr(run, table).merge(seats_of(run, policy), on=["game", "seat"])


def test_event_report_splits_every_table_by_policy(event_run, event_report):
    out, page = event_report
    assert POOLED not in page
    names = sorted(set(SPECS))
    tickets = pd.read_csv(out / "ticket_completion.csv")
    balance = pd.read_csv(out / "ticket_balance.csv")
    routes = pd.read_csv(out / "route_claims.csv")
    tunnels = pd.read_csv(out / "tunnel_outcomes.csv")
    stations = pd.read_csv(out / "station_usage.csv")
    for t in (tickets, balance, routes):
        assert sorted(t.policy.unique()) == names
    # a policy without tunnel attempts or stations has no rows there, and the page says so
    for t, what, event in ((tunnels, "attempted no tunnel", "tunnels"),
                           (stations, "built no station", "stations")):
        assert set(t.policy) <= set(names) and len(set(t.policy)) >= 2
        for p in names:
            assert (p in set(t.policy)) == (len(own(event_run, event, p)) > 0)
            assert (f"Policy {p} {what}." in page) == (p not in set(t.policy))
    for p in names:
        mine = own(event_run, "tickets", p)
        t = tickets[tickets.policy == p]
        assert t.offered.sum() == len(mine) and t.kept.sum() == mine.kept.sum()
        assert t.completed.sum() == mine.completed.sum()
        mine_balance = balance[balance.policy == p]           # ranked within the policy,
        assert (mine_balance["rank"].notna() == (mine_balance.kept >= 30)).all()   # kept >= 30
        assert mine_balance["rank"].min() == 1 or mine_balance["rank"].isna().all()
        r = routes[routes.policy == p]
        claims = own(event_run, "routes", p).route.value_counts()
        assert (r.set_index("route").claims.reindex(claims.index) == claims).all()
        assert r.claims.sum() == claims.sum()
        assert (r.games == seats_of(event_run, p).game.nunique()).all()
        u = tunnels[tunnels.policy == p]
        attempts = own(event_run, "tunnels", p).route.value_counts()
        assert u.attempts.sum() == attempts.sum()
        assert (u.set_index("route").attempts.reindex(attempts.index) == attempts).all()
        s = stations[stations.policy == p]
        assert s.built.sum() == len(own(event_run, "stations", p))
        # one map per policy, one tunnel chart per policy that attempted tunnels
        assert (out / f"route_contention_{p}.png").exists()
        assert (out / f"tunnel_odds_{p}.png").exists() == (p in set(tunnels.policy))
    # the split tables add up to the whole run
    assert tickets.offered.sum() == len(event_run.tickets)
    assert routes.claims.sum() == len(event_run.routes)
    assert tunnels.attempts.sum() == len(event_run.tunnels)
    assert stations.built.sum() == len(event_run.stations)
    assert not (out / "route_contention.png").exists() and not (out / "tunnel_odds.png").exists()


def test_summary_report_splits_tickets_and_says_what_is_pooled(europe3_summary_report, event_run):
    out, page = europe3_summary_report
    tickets = pd.read_csv(out / "ticket_completion.csv")
    # same seed, same games: the per-policy ticket counts equal the per-event run's
    for p in sorted(set(SPECS)):
        assert tickets[tickets.policy == p].offered.sum() == len(own(event_run, "tickets", p))
    assert "policy" in pd.read_csv(out / "ticket_balance.csv").columns
    for name in ("route_claims", "tunnel_outcomes", "station_usage"):
        assert "policy" not in pd.read_csv(out / f"{name}.csv").columns
    for what in ("route claims", "tunnel attempts", "stations"):
        assert f"summary mode counts {what} without the policy" in page
    assert page.count(POOLED) == 3
    # the score chart: means with intervals, and the note that quantiles need events
    assert "quantiles (boxes) need a per-event run" in page


def test_single_policy_single_player_count_report(tmp_path):
    run = ttrsim.simulate("europe", ["tickets", "tickets"], games=60, seed=4)
    page = write_report(run, tmp_path).read_text()
    assert POOLED not in page and "split by policy" not in page.lower()
    assert "policy" not in pd.read_csv(tmp_path / "route_claims.csv").columns
    assert (tmp_path / "route_contention.png").exists()
    # one player count: no chart of a single dot, the table says it all
    assert not (tmp_path / "by_player_count.png").exists()
    assert "The run holds one player count" in page
    manifest = pd.read_csv(tmp_path / "manifest.csv").set_index("key").value
    assert manifest["versions"].startswith("python ") and "{" not in manifest["versions"]
    assert manifest["policies"] == "tickets, tickets"


def test_summary_score_chart_plain_labels(summary_run):
    fig = plots.plot_score_distribution(an.score_distribution(summary_run))
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == sorted(set(SPECS))
    assert ax.get_title().startswith("Mean score") and ax.get_xlabel() == "policy"
    assert "quantiles need a per-event run" in ax.get_title()
    assert len(ax.lines) + len(ax.collections) > 0


def station_runs(players_of_late_games=None):
    with_, without = station_pair()
    if players_of_late_games:
        for t in (with_, without):
            t.loc[t.game >= 2, "players"] = players_of_late_games
    run = SimpleNamespace(**{**vars(fake_run()), "games": with_, "tunnels": None, "manifest": {}})
    return run, SimpleNamespace(games=without)


def test_station_value_chart_draws_each_group_once():
    run, base = station_runs()
    value = an.station_value(run, base)
    left = plots.plot_station_value(value).axes[0]
    assert [t.get_text() for t in left.get_xticklabels()] == ["2 players"]
    run, base = station_runs(players_of_late_games=3)
    left = plots.plot_station_value(an.station_value(run, base)).axes[0]
    assert [t.get_text() for t in left.get_xticklabels()] == ["all", "2 players", "3 players"]


def test_cli_report_baseline_adds_station_value(monkeypatch, tmp_path, capsys):
    run, base = station_runs()
    runs = {str(tmp_path / "with"): run, str(tmp_path / "without"): base}
    import ttrsim.results

    monkeypatch.setattr(ttrsim.results, "load_run", lambda path: runs[str(path)])
    out = tmp_path / "out"
    assert cli.main(["report", str(tmp_path / "with"), "--baseline", str(tmp_path / "without"),
                     "--out", str(out)]) == 0
    assert (out / "station_value.png").exists() and (out / "station_value.csv").exists()
    assert "Station value needs a paired run" not in (out / "index.html").read_text()


def test_tunnel_and_station_tables_split_by_policy_in_the_api(event_run, event_report):
    out, _ = event_report
    tunnels = an.tunnel_outcomes(event_run, by="policy")
    stations = an.station_usage(event_run, by="policy")
    board = event_run.board
    for p in sorted(set(SPECS)):
        attempts = own(event_run, "tunnels", p).route.value_counts()
        t = tunnels[tunnels.policy == p].set_index("route")
        assert t.attempts.sum() == attempts.sum()
        assert (t.attempts.reindex(attempts.index) == attempts).all()
        s = stations[stations.policy == p]
        built = own(event_run, "stations", p).city.astype(str).value_counts()
        assert len(s) == len(board.cities)                      # every city, unbuilt ones with 0
        assert (s.set_index("city").built.reindex(built.index) == built).all()
        assert s.built.sum() == built.sum()
        assert (s.games == seats_of(event_run, p).game.nunique()).all()
    # the report's split tables hold the same figures
    report = pd.read_csv(out / "tunnel_outcomes.csv")
    merged = report.merge(tunnels, on=["policy", "route"], suffixes=("", "_api"))
    assert len(merged) == len(report) and (merged.attempts == merged.attempts_api).all()
    assert merged.p_extra_1.to_numpy() == pytest.approx(merged.p_extra_1_api.to_numpy())
    # without by: the pooled tables, as before
    assert an.tunnel_outcomes(event_run).attempts.sum() == len(event_run.tunnels)
    assert an.station_usage(event_run).built.sum() == len(event_run.stations)
