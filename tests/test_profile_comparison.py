"""Game profiles side by side (ttrsim.analysis.compare_profiles, `ttrsim profile A B`),
people's figures beside a run's (read_people, `--people`), the profile rows added for them
(points of completed tickets, average length of a claimed route), and the interval
helpers they use (ttrsim.stats.cluster_ratio, welch_interval)."""
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

import ttrsim
from ttrsim.analysis import compare_profiles, profile, read_people
from ttrsim.analysis.inputs import route_facts
from ttrsim.cli import main
from ttrsim.results import Run, load_run
from ttrsim.stats import cluster_ratio, welch_interval

from helpers import EUROPE3, hoarder, ticket_drawer

EXAMPLE = Path(__file__).resolve().parents[1] / "docs" / "examples" / "people-bga-europe.csv"
# measures defined for every seat-game (a per-game mean over equal clusters)
EVERY_SEAT = ["score", "route_points", "ticket_points", "tickets_completed", "turns_taken",
              "routes_claimed", "largest_hand", "ticket_points_completed"]


@pytest.fixture(scope="module")
def tickets3():
    return ttrsim.simulate("europe", ["tickets"] * 3, games=150, seed=21)


@pytest.fixture(scope="module")
def random3():
    return ttrsim.simulate("europe", ["random"] * 3, games=150, seed=22)


@pytest.fixture
def mixed(europe3):
    return europe3          # Europe: tickets, routes, random; 300 games (conftest.py)


def _cells(result, column):
    return result.table[result.table.column == column].set_index("measure")


# --- the rows added to the profile ---------------------------------------------------

def test_points_of_completed_tickets_are_the_tickets_tables(mixed):
    """The core's ticket_points_completed is the sum of the points of the kept tickets the
    tickets table marks completed (stations included on Europe), and ticket_points is it
    minus the points of the kept tickets not completed."""
    g = mixed.games.set_index(["game", "seat"]).sort_index()
    kept = mixed.tickets[mixed.tickets.kept]
    done = kept[kept.completed].groupby(["game", "seat"]).points.sum().reindex(g.index, fill_value=0)
    held = kept.groupby(["game", "seat"]).points.sum().reindex(g.index, fill_value=0)
    assert (g.ticket_points_completed == done).all()
    assert (2 * done - held == g.ticket_points).all()
    assert g.tickets_by_station.sum() > 0 and (g.ticket_points_completed > 0).any()
    t = profile(mixed).table.set_index(["group", "measure"])
    rows = mixed.games[mixed.games.policy == "tickets"]
    assert t.loc[("tickets", "ticket_points_completed"), "estimate"] == pytest.approx(
        rows.ticket_points_completed.mean())


def _builder(board, name, first_claim):
    """Keeps the first ticket choice offered; draws blind until game turn ``first_claim``,
    then claims the longest route it can on each turn (drawing blind when it can claim
    none)."""
    def play(observation, legal):
        if observation["phase"] in ("setup_tickets", "keep_tickets"):
            return next(a for a in legal if a.kind == "keep")
        claims = [a for a in legal if a.kind == "claim"]
        if observation["turn"] >= first_claim and claims:
            return max(claims, key=lambda a: (int(board.route_len[a.route]), -a.code))
        return next(a for a in legal if a.kind == "draw_blind")
    play.__name__ = play.__qualname__ = name
    return play


def test_average_route_length_of_a_hand_checked_game():
    """One game stopped after game turn 18: seat 0 claims routes from turn 10 on, seat 1
    never claims. Seat 0's average is the mean length of the routes the routes table gives
    it (not their sum: two or more routes)."""
    board = ttrsim.maps.load("usa")
    run = ttrsim.simulate(board, [_builder(board, "builder", 10), _builder(board, "drawer", 99)], games=1,
                          seed=3, rotate=False, max_turns=19)
    lengths = route_facts(run.board).loc[run.routes.route, "length"].to_numpy()
    assert (run.routes.seat == 0).all() and len(lengths) >= 2
    t = profile(run).table.set_index(["group", "measure"])
    assert t.loc[("builder", "mean_route_length"), "estimate"] == pytest.approx(lengths.mean())
    assert t.loc[("builder", "mean_route_length"), "kind"] == "ratio"
    assert np.isnan(t.loc[("builder", "mean_route_length"), "low"])     # a ratio: no interval
    assert np.isnan(t.loc[("drawer", "mean_route_length"), "estimate"])     # no route
    c = compare_profiles(run, group="builder")
    assert _cells(c, "run 1").loc["mean_route_length", "estimate"] == pytest.approx(lengths.mean())


def test_average_route_length_is_trains_laid_over_routes(mixed):
    """Trains laid on routes are the trains a seat started with minus those left."""
    t = profile(mixed).table.set_index(["group", "measure"])
    g = mixed.games
    for pol, rows in g.groupby(g.policy.astype(str)):
        laid = (mixed.board.trains - rows.trains_left).sum()
        assert t.loc[(pol, "mean_route_length"), "estimate"] == pytest.approx(
            laid / rows.routes_claimed.sum())
    # the rows sit where the profile's sections put them
    table = profile(mixed).table
    play = list(table[(table.group == "tickets") & (table.section == "play")].measure)
    assert play[-2:] == ["routes_claimed", "mean_route_length"]


def test_a_run_saved_before_the_points_of_completed_tickets_profiles_without_them(mixed):
    old = Run(mixed.manifest, mixed.board,
              {"games": mixed.games.drop(columns=["ticket_points_completed"])})
    t = profile(old).table.set_index(["group", "measure"])
    assert t.loc[("tickets", "ticket_points_completed"), "n"] == 0
    assert np.isnan(t.loc[("tickets", "ticket_points_completed"), "estimate"])
    assert t.loc[("tickets", "score"), "estimate"] == pytest.approx(
        profile(mixed).table.set_index(["group", "measure"]).loc[("tickets", "score"), "estimate"])


# --- the interval helpers ------------------------------------------------------------

def test_cluster_ratio_of_equal_clusters_is_the_mean_of_cluster_means():
    rng = np.random.default_rng(5)
    x = rng.normal(size=(40, 3))                   # 40 clusters of 3
    a_i, b_i = x.sum(axis=1), np.full(40, 3.0)
    r, var = cluster_ratio(a_i.sum(), b_i.sum(), (a_i ** 2).sum(), (a_i * b_i).sum(),
                           (b_i ** 2).sum(), 40)
    means = x.mean(axis=1)
    assert r == pytest.approx(x.mean())
    assert var == pytest.approx(means.var(ddof=1) / 40)
    assert np.isnan(cluster_ratio(0, 0, 0, 0, 0, 40)[0])
    assert np.isnan(cluster_ratio(3, 3, 9, 9, 9, 1)[1])          # one cluster: no spread


def test_welch_interval_is_scipys_welch_for_plain_means():
    rng = np.random.default_rng(6)
    x, y = rng.normal(1, 2, size=30), rng.normal(0, 1, size=50)
    low, high = welch_interval(x.mean() - y.mean(), x.var(ddof=1) / 30, 29,
                               y.var(ddof=1) / 50, 49, 0.9)
    ref = sps.ttest_ind(x, y, equal_var=False).confidence_interval(0.9)
    assert (low, high) == pytest.approx((ref.low, ref.high))
    assert welch_interval(2.0, 0.0, 10, 0.0, 10) == (2.0, 2.0)
    assert all(np.isnan(welch_interval(2.0, np.nan, 10, 1.0, 10)))


# --- runs side by side ---------------------------------------------------------------

def test_the_same_run_twice_differs_by_exactly_zero_and_says_so(tickets3, tmp_path):
    c = compare_profiles([tickets3, tickets3], labels=["a", "b"])
    b = _cells(c, "b")
    assert (b.difference.dropna() == 0).all() and b.difference.notna().sum() > 20
    # an interval of two independent samples would be a lie here: none, and a note
    assert b.low.isna().all() and b.high.isna().all()
    assert b.note.str.contains("no interval: the same games as a").sum() > 20
    assert list(c.columns["same_as"]) == ["", "a"]
    assert "b holds the same games as a" in c.text() and "compared with itself" in c.text()
    assert (_cells(c, "a").estimate.to_numpy() == b.estimate.to_numpy()).all()


def test_another_directory_of_the_same_games_is_named_too(tmp_path, capsys):
    for name, seed in (("one", 5), ("copy", 5), ("other", 6)):
        ttrsim.simulate("usa", ["random"] * 2, games=20, seed=seed, out=tmp_path / name)
    one, copy, other = (str(tmp_path / n) for n in ("one", "copy", "other"))
    assert main(["profile", one, one, other]) == 0
    out = capsys.readouterr().out
    assert "one (2) holds the same games as one" in out and "other holds" not in out
    assert main(["profile", one, other, copy]) == 0
    out = capsys.readouterr().out
    assert "copy holds the same games as one" in out and "other holds" not in out
    c = compare_profiles([load_run(one), load_run(other)])
    assert "compared with itself" not in c.text() and _cells(c, "other").low.notna().sum() > 15


def test_tickets_and_random_differ_in_the_expected_directions(tickets3, random3):
    c = compare_profiles([tickets3, random3], labels=["tickets", "random"])
    d = _cells(c, "random")
    for lower in ("score", "tickets_completed", "ticket_points_completed", "mean_route_length",
                  "routes_len_4"):
        assert d.loc[lower, "high"] < 0, lower
    for higher in ("ticket_draws", "tickets_failed", "routes_claimed", "routes_len_2",
                   "first_claim_turn"):
        assert d.loc[higher, "low"] > 0, higher
    assert d.loc["score", "difference"] == pytest.approx(
        random3.games.score.mean() - tickets3.games.score.mean())


def test_estimates_are_the_profiles(mixed, tickets3):
    """A policy's and the winners' columns hold the single profile's estimates; 'all'
    holds the mean over every seat-game."""
    single = profile(mixed).table.set_index(["group", "measure"])
    for group in ("routes", "winners"):
        c = compare_profiles([mixed, tickets3] if group == "winners" else [mixed], group=group)
        col = _cells(c, "run 1")
        got = col.estimate.reindex(single.xs(group).index)
        assert got.to_numpy() == pytest.approx(single.xs(group).estimate.to_numpy(), nan_ok=True)
        assert (col.n.reindex(single.xs(group).index).to_numpy()
                == single.xs(group).n.to_numpy()).all()
    c = compare_profiles(mixed)
    assert _cells(c, "run 1").loc["largest_hand", "estimate"] == pytest.approx(
        mixed.games.largest_hand.mean())


def test_intervals_treat_the_games_as_the_units(tickets3, random3):
    """For measures every seat-game has, the column of all seat-games is the mean of the
    games' means, and the interval of a difference is Welch's over the games' means
    (scipy's), not over the seat-games."""
    c = compare_profiles([tickets3, random3], labels=["t", "r"], confidence=0.9)
    d = _cells(c, "r")
    for m in EVERY_SEAT:
        per_game = [run.games.groupby("game")[m].mean() for run in (random3, tickets3)]
        ref = sps.ttest_ind(*per_game, equal_var=False).confidence_interval(0.9)
        assert (d.loc[m, "low"], d.loc[m, "high"]) == pytest.approx((ref.low, ref.high)), m


def test_correlated_seats_are_not_counted_as_independent(tickets3, random3):
    """Every seat of a game given the same value: a run holds as many observations as it
    has games, so the interval is that of the games' values; treating the seat-games as
    independent would make it about sqrt(3) times narrower."""
    def same_in_game(run, seed):
        g = run.games.copy()
        g["largest_hand"] = np.random.default_rng(seed).integers(5, 30, size=g.game.nunique())[
            g.game.to_numpy() - g.game.min()]
        return Run(run.manifest, run.board, {"games": g})

    a, b = same_in_game(tickets3, 1), same_in_game(random3, 2)
    d = _cells(compare_profiles([a, b], labels=["a", "b"]), "b").loc["largest_hand"]
    per_game = [run.games.groupby("game").largest_hand.first() for run in (b, a)]
    ref = sps.ttest_ind(*per_game, equal_var=False).confidence_interval(0.95)
    assert (d.low, d.high) == pytest.approx((ref.low, ref.high))
    naive = sps.ttest_ind(b.games.largest_hand, a.games.largest_hand,
                          equal_var=False).confidence_interval(0.95)
    assert (d.high - d.low) > 1.5 * (naive.high - naive.low)


def test_summary_runs_give_estimates_and_no_interval(tmp_path, tickets3):
    event = ttrsim.simulate("europe", ["tickets"] * 3, games=150, seed=21, summary=True)
    c = compare_profiles([tickets3, event], labels=["event", "summary"])
    s = _cells(c, "summary")
    assert s.estimate.to_numpy() == pytest.approx(_cells(c, "event").estimate.to_numpy(),
                                                  nan_ok=True)
    assert s.low.isna().all() and (s.difference.dropna().abs() < 1e-9).all()
    # the same seed in summary mode: the same games, said so
    assert s.note.str.contains("the same games as event").sum() > 20
    assert "summary-mode run" in c.text() and "summary holds the same games as event" in c.text()


def test_mismatched_runs_are_refused(tickets3):
    usa = ttrsim.simulate("usa", ["tickets"] * 3, games=5, seed=1)
    with pytest.raises(ValueError, match=r"board 'usa' in b, 'europe' in a"):
        compare_profiles([tickets3, usa], labels=["a", "b"])
    two = ttrsim.simulate("europe", ["tickets"] * 2, games=5, seed=1)
    with pytest.raises(ValueError, match=r"player count 2 in b, 3 in a"):
        compare_profiles([tickets3, two], labels=["a", "b"])
    short = ttrsim.simulate("europe", ["tickets"] * 3, games=5, seed=1, max_turns=40)
    with pytest.raises(ValueError, match=r"turn limit 40 in b"):
        compare_profiles([tickets3, short], labels=["a", "b"])


def test_groups_and_labels_are_checked(tickets3, mixed):
    with pytest.raises(ValueError, match=r"no seat-games of 'routes'.*tickets"):
        compare_profiles([mixed, tickets3], group="routes")
    with pytest.raises(ValueError, match="one label per run"):
        compare_profiles([mixed, tickets3], labels=["x"])
    with pytest.raises(ValueError, match="differ from each other"):
        compare_profiles([mixed, tickets3], labels=["x", "x"])
    c = compare_profiles([tickets3, mixed], group="tickets")
    assert list(c.columns.column) == ["run 1", "run 2"]
    assert _cells(c, "run 2").loc["score", "n"] == EUROPE3["games"]   # one tickets seat a game


# --- people's figures ----------------------------------------------------------------

def _people(tmp_path, text):
    path = tmp_path / "people.csv"
    path.write_text(text)
    return path


def test_people_beside_a_run_with_exact_differences(tmp_path, tickets3):
    path = _people(tmp_path, "measure,club,league,n,source\n"
                             "route_points,61.5,70,120,club log\n"
                             "tickets_completed,4,,,club log\n"
                             "longest_bonus_won,0.25,0.5,,\n")
    c = compare_profiles(tickets3, people=path, labels=["bots"])
    pd.testing.assert_frame_equal(read_people(pd.read_csv(path)), read_people(path))
    bots = _cells(c, "bots")
    club, league = _cells(c, "club"), _cells(c, "league")
    assert club.loc["route_points", "difference"] == 61.5 - bots.loc["route_points", "estimate"]
    assert club.loc["longest_bonus_won", "difference"] == pytest.approx(
        0.25 - bots.loc["longest_bonus_won", "estimate"])
    assert club.loc["route_points", "n"] == 120
    assert club.low.isna().all() and club.high.isna().all()          # none invented
    assert club.loc["route_points", "note"] == "people's figure: no interval"
    assert np.isnan(league.loc["tickets_completed", "estimate"])     # a blank cell
    assert league.loc["tickets_completed", "note"] == "not given"
    assert np.isnan(club.loc["score", "estimate"])                   # not in the file
    assert list(c.columns.source) == ["run", "people", "people"]
    assert c.columns.origin.iloc[1] == "club log"
    text = c.text()
    assert "carry no interval" in text and "club, league: people's figures" in text
    assert "source: club log" in text and "Δ: the column to its left minus bots" in text
    wide = c.wide()
    assert wide.loc["route points", "club − bots"] == 61.5 - bots.loc["route_points", "estimate"]


def test_a_measure_the_board_lacks_is_marked_not_dropped(tmp_path):
    usa = ttrsim.simulate("usa", ["tickets"] * 3, games=10, seed=1)
    path = _people(tmp_path, "measure,club\nstation_points,5\nroutes_len_8,0.2\nscore,100\n")
    c = compare_profiles(usa, people=path, labels=["bots"])
    for m in ("station_points", "routes_len_8"):
        rows = c.table[c.table.measure == m]
        assert set(rows.column) == {"bots", "club"} and (rows.note == "not on usa").all()
        assert rows.difference.isna().all()
    assert "Not on usa (no figure to compare): station points, routes of length 8" in c.text()
    # kept in their sections
    assert c.table.set_index("measure").loc["station_points", "section"].iloc[0] == "score"


@pytest.mark.parametrize("text, message", [
    ("measure,club\nroute_pts,60\nscore,1\n", r"unknown measure\(s\) route_pts; known measures: score, "),
    ("stat,club\nscore,1\n", "no 'measure' column"),
    ("measure,club\nscore,1\nscore,2\n", "given twice: score"),
    ("measure,club\nscore,lots\n", "score, club: 'lots' is not a number"),
    ("measure,club\nlongest_bonus_won,40\n", "a share, between 0 and 1"),
    ("measure,club,n\nscore,1,2.5\n", "positive whole number"),
    ("measure,source\nscore,x\n", "holds no figures"),
    ("measure,club,board\nscore,1,usa\nroute_points,2,europe\n", "one board per table"),
])
def test_bad_people_tables_are_refused(tmp_path, text, message):
    with pytest.raises(ValueError, match=message):
        read_people(_people(tmp_path, text))


def test_people_of_another_board_are_refused(tmp_path):
    usa = ttrsim.simulate("usa", ["tickets"] * 2, games=5, seed=1)
    with pytest.raises(ValueError, match="of europe, the runs were played on usa"):
        compare_profiles(usa, people=EXAMPLE)


def test_the_example_table_is_the_published_figures():
    p = read_people(EXAMPLE).set_index(["measure", "group"]).estimate
    top, second, everyone = "BGA #1 rated", "BGA #2 rated", "BGA all players"
    assert p[("route_points", top)] == 76.23 and p[("route_points", everyone)] == 61.79
    assert p[("ticket_points_completed", second)] == 22.93
    assert p[("tickets_completed", everyone)] == 4
    assert p[("routes_claimed", top)] == 12.49
    assert p[("mean_route_length", second)] == 3.78
    assert p[("tickets_kept_setup", everyone)] == 2.65
    people = read_people(EXAMPLE)
    assert (people.board == "europe").all()
    assert people.source.str.contains("Board Game Arena statistics page, Europe, as quoted in "
                                      "a public strategy guide").all()


# --- the command ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    for name, pol, seed in (("eu-tickets", "tickets", 1), ("eu-random", "random", 2)):
        ttrsim.simulate("europe", [pol] * 3, games=40, seed=seed, out=root / name)
    ttrsim.simulate("usa", ["tickets"] * 3, games=5, seed=1, out=root / "usa")
    return root


def test_command_side_by_side_with_people_and_csv(saved, tmp_path, capsys):
    a, b = str(saved / "eu-tickets"), str(saved / "eu-random")
    out_csv = tmp_path / "side.csv"
    assert main(["profile", a, b, "--people", str(EXAMPLE), "--csv", str(out_csv)]) == 0
    out = capsys.readouterr().out
    assert "minus eu-tickets" in out and "eu-random: 40 games, random x3 (per-event)" in out
    assert "BGA #1 rated, BGA #2 rated, BGA all players: people's figures" in out
    table = pd.read_csv(out_csv, keep_default_na=False, na_values=[""])
    expect = compare_profiles([load_run(a), load_run(b)], people=EXAMPLE,
                              labels=["eu-tickets", "eu-random"]).table
    assert list(table.columns) == list(expect.columns) and len(table) == len(expect)
    assert table.difference.to_numpy() == pytest.approx(expect.difference.to_numpy(), nan_ok=True)
    assert main(["profile", a, b, "--label", "T", "--label", "R", "--group", "winners"]) == 0
    out = capsys.readouterr().out
    assert "minus T" in out and "the winners of each run" in out
    # one run as before: per policy and the winners
    assert main(["profile", a]) == 0
    assert "winners" in capsys.readouterr().out


@pytest.mark.parametrize("extra, message", [
    (["usa"], "differs from eu-tickets: board 'usa' in usa, 'europe' in eu-tickets"),
    (["eu-random", "--label", "only-one"], "give --label once per run"),
    (["--group", "greedy"], "no seat-games of 'greedy'"),
    (["--people", "missing.csv"], "no such file"),
])
def test_command_refuses_bad_input_in_one_line(saved, capsys, extra, message):
    argv = ["profile", str(saved / "eu-tickets")] + [
        str(saved / x) if x in ("usa", "eu-random") else x for x in extra]
    assert main(argv) == 2
    cap = capsys.readouterr()
    assert cap.out == "" and len(cap.err.strip().splitlines()) == 1 and message in cap.err


def test_an_unwritable_csv_fails_before_any_work(saved, capsys):
    """/proc takes no new file, whoever asks (os.access says yes to root): the command
    says so in one line and prints no table."""
    assert main(["profile", str(saved / "eu-tickets"), "--csv", "/proc/ttrsim-profile.csv"]) == 2
    cap = capsys.readouterr()
    assert cap.out == "" and len(cap.err.strip().splitlines()) == 1
    assert "--csv /proc/ttrsim-profile.csv: cannot be written" in cap.err
    # checked before the runs are read: a missing run is not what it reports
    assert main(["profile", "no-such-run", "--csv", "/proc/ttrsim-profile.csv"]) == 2
    assert "cannot be written" in capsys.readouterr().err


def test_a_writable_csv_probe_leaves_no_file(saved, tmp_path, capsys):
    target = tmp_path / "later.csv"
    assert main(["profile", str(saved / "no-such-run"), "--csv", str(target)]) == 2
    assert not target.exists()
    capsys.readouterr()
