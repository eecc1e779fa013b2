"""The game profile (ttrsim.analysis.profile, `ttrsim profile`) and the per-seat statistics
of play the core records for it (games table: first_claim_turn, largest_hand,
ticket_draws, tickets_kept_drawn, turns_taken, routes_len_N)."""
import numpy as np
import pandas as pd
import pytest

import ttrsim
from ttrsim.analysis import profile
from ttrsim.analysis.inputs import MissingTable, route_facts
from ttrsim.cli import main
from ttrsim.results import load_run
from ttrsim.tables import length_column, route_lengths

from helpers import hoarder, ticket_drawer


@pytest.fixture(scope="module")
def tiny():
    # stopped after game turn 8 (max_turns=9): no seat runs out of trains or tickets
    return ttrsim.simulate("usa", [hoarder, ticket_drawer], games=1, seed=3, rotate=False,
                           max_turns=9)


def test_tiny_game_statistics_are_the_known_ones(tiny):
    g = tiny.games.set_index("seat")
    assert int(g.turns[0]) == 9 and bool(g.truncated[0])
    assert g.first_claim_turn.tolist() == [6, -1]
    # dealt 4, three blind draws of 2, then one claim and no more cards
    assert g.largest_hand.tolist() == [4 + 3 * 2, 4]
    assert g.turns_taken.tolist() == [5, 4]
    assert g.ticket_draws.tolist() == [1, 4]
    assert g.tickets_kept_drawn.tolist() == [3, 12]       # USA draws 3, both keep all
    assert g.tickets_kept.tolist() == [3 + 3, 3 + 12]     # and all 3 dealt
    assert g.routes_claimed.tolist() == [1, 0]
    route = int(tiny.routes.route.iloc[0])
    length = int(route_facts(tiny.board).loc[route, "length"])
    for n in route_lengths(tiny.board):
        assert int(g.loc[0, length_column(n)]) == (n == length)
        assert int(g.loc[1, length_column(n)]) == 0


def test_tiny_game_profile(tiny):
    t = profile(tiny).table.set_index(["group", "measure"])
    assert t.loc[("hoarder", "first_claim_turn"), "estimate"] == 6
    assert t.loc[("ticket_drawer", "first_claim_turn"), "n"] == 0        # never claimed
    assert np.isnan(t.loc[("ticket_drawer", "first_claim_turn"), "estimate"])
    assert t.loc[("ticket_drawer", "tickets_kept_drawn"), "estimate"] == 12
    assert t.loc[("ticket_drawer", "tickets_kept_setup"), "estimate"] == 3
    assert t.loc[("hoarder", "largest_hand"), "estimate"] == 10
    winners = tiny.games.query("win")
    assert t.loc[("winners", "score"), "n"] == len(winners)
    assert t.loc[("winners", "score"), "estimate"] == winners.score.mean()
    assert t.loc[("winners", "largest_hand"), "estimate"] == winners.largest_hand.mean()


def _hand_sizes(record):
    """Each seat's largest hand over a replayed game, position by position."""
    n = record.n_players
    best = [0] * n
    for k in range(len(record.actions) + 1):
        players = record.at(decision=k).state()["players"]
        for q in range(n):
            best[q] = max(best[q], int(sum(players[q]["hand"])))
    return best


@pytest.fixture
def event_run(europe3):
    return europe3          # Europe: tickets, routes, random; 300 games (conftest.py)


@pytest.fixture
def summary_run(europe3_summary):
    return europe3_summary


def test_largest_hand_matches_a_replay(event_run):
    for i in (0, 7):
        got = event_run.games.query("game == @i").sort_values("seat").largest_hand.tolist()
        assert got == _hand_sizes(event_run.game(i))


def test_statistics_equal_counts_from_the_event_tables(event_run):
    g = event_run.games.set_index(["game", "seat"]).sort_index()
    routes = event_run.routes.merge(route_facts(event_run.board)["length"], left_on="route",
                                    right_index=True)
    first = routes.groupby(["game", "seat"]).turn.min()
    got = g.first_claim_turn
    assert (got[got >= 0] == first.reindex(got[got >= 0].index)).all()
    assert (got < 0).sum() == len(g) - len(first)
    by_len = routes.groupby(["game", "seat", "length"]).size().unstack(fill_value=0)
    for n in route_lengths(event_run.board):
        expect = by_len.get(n, pd.Series(0, index=by_len.index)).reindex(g.index, fill_value=0)
        assert (g[length_column(n)] == expect).all(), n
    drawn = event_run.tickets[~event_run.tickets.initial]
    draws = drawn.groupby(["game", "seat"]).turn.nunique().reindex(g.index, fill_value=0)
    kept = drawn.groupby(["game", "seat"]).kept.sum().reindex(g.index, fill_value=0)
    assert (g.ticket_draws == draws).all() and (g.tickets_kept_drawn == kept).all()
    assert g.ticket_draws.sum() > 0            # the test saw draws (random draws tickets)
    # a seat starts turns 0, n, 2n, ... of the game turns (seat 0 first)
    n = 3
    expect_turns = (g.turns - g.index.get_level_values("seat") + n - 1) // n
    assert (g.turns_taken == expect_turns).all()


def test_profile_means_are_the_games_table_means(event_run):
    t = profile(event_run).table.set_index(["group", "measure"])
    g = event_run.games.assign(policy=event_run.games.policy.astype(str))
    for pol, rows in g.groupby("policy"):
        assert t.loc[(pol, "score"), "estimate"] == pytest.approx(rows.score.mean())
        assert t.loc[(pol, "tickets_kept_setup"), "estimate"] == pytest.approx(
            (rows.tickets_kept - rows.tickets_kept_drawn).mean())
        claimed = rows.first_claim_turn[rows.first_claim_turn >= 0]
        assert t.loc[(pol, "first_claim_turn"), "estimate"] == pytest.approx(claimed.mean())
        assert t.loc[(pol, "first_claim_turn"), "n"] == len(claimed)
    wins = g[g.win]
    assert t.loc[("winners", "score"), "n"] == len(wins)
    assert t.loc[("winners", "score"), "estimate"] == pytest.approx(wins.score.mean())
    assert t.loc[("winners", "longest_bonus_won"), "estimate"] == pytest.approx(
        (wins.longest_bonus > 0).mean())
    # Europe has stations and a longest path bonus, no Globetrotter
    measures = set(t.index.get_level_values("measure"))
    assert {"station_points", "longest_bonus", "longest_bonus_won"} <= measures
    assert not any(m.startswith("globetrotter") for m in measures)
    assert "attraction_points" not in measures


def test_intervals_contain_the_estimate(event_run):
    t = profile(event_run).table
    ok = t.dropna(subset=["low", "high"])
    assert len(ok) > 0.8 * len(t)
    assert ((ok.low <= ok.estimate) & (ok.estimate <= ok.high)).all()
    spread = ok[(ok.kind == "mean") & (ok.n > 50)]
    assert (spread.high > spread.low).any()
    shares = t[t.kind == "share"]
    assert ((shares.low >= 0) & (shares.high <= 1)).all()


def test_summary_mode_equals_per_event_mode(event_run, summary_run):
    a = profile(event_run).table
    b = profile(summary_run).table
    pd.testing.assert_frame_equal(a, b)


def test_saved_runs_and_the_command(tmp_path, capsys):
    ev, su = tmp_path / "ev", tmp_path / "su"
    ttrsim.simulate("usa", 4, games=60, seed=2, out=ev, batch_size=25)
    ttrsim.simulate("usa", 4, games=60, seed=2, out=su, batch_size=25, summary=True)
    a, b = profile(load_run(ev)).table, profile(load_run(su)).table
    pd.testing.assert_frame_equal(a, b)
    assert main(["profile", str(su), "--csv", str(tmp_path / "p.csv")]) == 0
    out = capsys.readouterr().out
    assert "winners" in out and "game turn of first claim" in out
    csv = pd.read_csv(tmp_path / "p.csv")
    assert len(csv) == len(b) and csv.estimate.to_numpy() == pytest.approx(b.estimate.to_numpy())
    assert main(["profile", str(ev)]) == 0
    assert "largest hand" in capsys.readouterr().out


def test_command_refuses_a_bad_path(tmp_path, capsys):
    assert main(["profile", str(tmp_path / "nothing")]) == 2
    err = capsys.readouterr().err
    assert "nothing does not exist" in err and len(err.strip().splitlines()) == 1
    assert main(["profile", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "no manifest.json" in err and len(err.strip().splitlines()) == 1


def test_a_run_without_the_statistics_is_refused_clearly(event_run):
    old = ttrsim.results.Run(event_run.manifest, event_run.board,
                             {"games": event_run.games.drop(columns=["largest_hand"])})
    with pytest.raises(MissingTable, match="largest_hand"):
        profile(old)


def test_every_run_report_has_the_game_profile(europe3_summary_report):
    out, page = europe3_summary_report          # a summary run's: its tables keep no events
    section = page[page.index("<section id=\"profile\">"):]
    section = section[:section.index("</section>")]
    assert "Game profile" in section and "Skipped" not in section and "<img" in section
    csv = pd.read_csv(out / "profile.csv")
    assert set(csv.group) == {"tickets", "routes", "random", "winners"}
    assert (out / "profile.png").stat().st_size > 0


def test_runs_pooled(event_run):
    """A list of runs (a league's cells) pools their seat-games: a run given twice doubles
    every count and keeps every mean; runs of two boards are refused."""
    whole = profile(event_run).table
    pooled = profile([event_run, event_run]).table
    assert (pooled.n == 2 * whole.n).all()
    assert pooled.estimate.to_numpy() == pytest.approx(whole.estimate.to_numpy(), nan_ok=True)
    other = ttrsim.simulate("usa", 3, games=5, seed=1)
    with pytest.raises(ValueError, match="one board"):
        profile([event_run, other])


def test_league_style_profile_is_the_game_profile_of_its_games():
    """The league's style profile (its games taken together) equals the profile of its
    runs pooled, policy by policy."""
    from ttrsim.analysis.studies.leagues import league

    result = league("newyork", 2, ["tickets", "random", "routes"], games=20, seed=4)
    style = result.style.table.set_index(["group", "measure"]).sort_index()
    pooled = profile(list(result.runs.values())).table.set_index(["group", "measure"]).sort_index()
    assert set(style.index.get_level_values("group")) == {"tickets", "random", "routes", "winners"}
    pd.testing.assert_frame_equal(style, pooled)
    # each policy played 2 pairings of 20 games, one seat each game
    assert (style.xs("score", level="measure").drop("winners").n == 40).all()
    assert "attraction_points" in set(style.index.get_level_values("measure"))   # New York


def test_globetrotter_where_the_board_has_it():
    run = ttrsim.simulate("usa-mega", 4, games=40, seed=5)
    t = profile(run).table.set_index(["group", "measure"])
    wins = run.games[run.games.win]
    assert t.loc[("winners", "globetrotter"), "estimate"] == pytest.approx(wins.globetrotter.mean())
    assert t.loc[("winners", "globetrotter_won"), "estimate"] == pytest.approx(
        (wins.globetrotter > 0).mean())
    # a games table from before the bonus existed profiles as a board without it
    usa = ttrsim.simulate("usa", 3, games=10, seed=5)
    old = ttrsim.results.Run(usa.manifest, usa.board,
                             {"games": usa.games.drop(columns=["globetrotter"])})
    pd.testing.assert_frame_equal(profile(old).table, profile(usa).table)
    assert not profile(usa).table.measure.str.startswith("globetrotter").any()
