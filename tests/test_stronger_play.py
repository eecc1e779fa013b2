"""A run's headline measures under stronger play (``ttrsim.analysis.compare_play``) and the
report section "Under stronger play".

Hand-made runs where the answer is known: a run against itself (zero differences, nothing
flagged), a copy in which one ticket is never completed, one route never claimed or the
treated seat builds no station (exactly that row flagged), runs that do not play the same
games (refused, the message naming what differs)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import ttrsim
from ttrsim import analysis as an
from ttrsim.report import write_report

GAMES = 300
SEED = 11


def play(policies, seed=SEED, games=GAMES, board="europe", rotate=True):
    return ttrsim.simulate(board, policies, games=games, seed=seed, rotate=rotate)


@pytest.fixture(scope="module")
def base():
    return play(["tickets"] * 4)


@pytest.fixture(scope="module")
def no_stations():
    return play(["tickets:stations=0"] + ["tickets"] * 3)


@pytest.fixture(scope="module")
def strong():
    return play(["expert"] * 4)


@pytest.fixture(scope="module")
def strong_no_stations():
    return play(["expert:stations=0"] + ["expert"] * 3)


def edited(run, policies=None, **tables):
    """A copy of ``run`` with some tables replaced (and the manifest's policies)."""
    manifest = dict(run.manifest)
    if policies is not None:
        manifest["policies"] = list(policies)
    return ttrsim.Run(manifest, run.board, {**run.tables(), **tables})


def test_a_run_against_itself_differs_in_nothing(base, no_stations):
    # the same games played twice by the same policies: every difference is exactly 0 and
    # no conclusion changes (catches a side read from the wrong run, a pairing off by a
    # game or a seat, a verdict or rank that is not a function of the values alone)
    again = play(["tickets"] * 4)
    again_no = play(["tickets:stations=0"] + ["tickets"] * 3)
    c = an.compare_play(base, again, no_stations, again_no)
    assert set(c.tables()) == {"tickets", "seats", "policies", "stations", "routes", "score_parts"}
    for name, t in c.tables().items():
        if not len(t):
            continue
        ok = np.isfinite(t.difference.astype(float))
        assert ok.any(), name
        assert (t.difference[ok] == 0).all(), name
        assert np.allclose(t.base[ok], t.strong[ok]), name
        assert (t.base_verdict == t.strong_verdict).all(), name
        assert not t.changed.any(), name
    assert c.changed().empty
    assert c.policies.empty            # every seat plays one policy
    assert len(c.routes) == 20         # the same top 20 under both
    assert (c.routes.base_rank == c.routes.strong_rank).all()


def test_difference_is_strong_minus_base_row_by_row(base, strong, no_stations, strong_no_stations):
    # the paired difference and each side's value come from different code (per-game sums
    # against the report's own tables): they must agree row by row, which catches a ticket
    # or route matched to the wrong id and a seat or station metric read from the other play
    c = an.compare_play(base, strong, no_stations, strong_no_stations)
    assert c.policies.empty
    for name, t in c.tables().items():
        if not len(t):
            continue
        ok = np.isfinite(t.difference.astype(float)) & np.isfinite(t.strong - t.base)
        assert np.allclose(t.difference[ok], (t.strong - t.base)[ok], atol=1e-9), name
        inside = (t.low[ok] <= t.difference[ok] + 1e-12) & (t.difference[ok] <= t.high[ok] + 1e-12)
        assert inside.all(), name
    tc = an.ticket_completion(strong).set_index("ticket")
    t = c.tickets.set_index("ticket")
    assert np.allclose(t.strong, tc.completion_rate.reindex(t.index), equal_nan=True)
    assert (t.strong_kept == tc.kept.reindex(t.index).fillna(0)).all()
    assert c.manifest["base_label"] == "tickets" and c.manifest["strong_label"] == "expert"
    assert c.manifest["games"] == GAMES and c.manifest["seed"] == SEED
    # the model file behind the `expert` seats is named, so the figures can be traced
    assert c.manifest["expert_models"] == strong.manifest["expert_models"]
    assert len(c.manifest["expert_models"]) == 1
    assert an.compare_play(base, edited(base)).manifest["expert_models"] is None


def test_a_ticket_never_completed_is_flagged(base):
    # the strong copy completes no Paris - Wien (kept as often): that ticket alone changes
    # verdict, from above 1/2 to below (catches the ticket index map, the verdict's
    # direction and the BH over tickets making a certain difference insignificant)
    board = base.board
    tid = int(next(board.ticket_id[i] for i in range(board.n_tickets)
                   if board.ticket_name(i).startswith(("Paris - Wien", "Wien - Paris"))))
    tickets = base.tickets.copy()
    tickets.loc[tickets.ticket == tid, "completed"] = False
    c = an.compare_play(base, edited(base, tickets=tickets))
    t = c.tickets.set_index("ticket")
    assert t.loc[tid, "strong"] == 0
    assert t.loc[tid, "base_verdict"] == "above" and t.loc[tid, "strong_verdict"] == "below"
    assert t.loc[tid, "changed"] and t.loc[tid, "significant"]
    assert t.loc[tid, "why"] == "above 0.5 -> below"
    assert list(t.index[t.changed]) == [tid]
    others = t.drop(index=tid)
    assert (others.difference.dropna() == 0).all()
    assert c.changed().label.tolist() == [t.loc[tid, "label"]]


def test_a_route_out_of_the_top_20_is_flagged(base):
    # the most claimed route never claimed in the strong copy: it leaves the top 20 and
    # is the one route flagged; the 21st route enters the top 20 and is flagged too
    claims = an.route_claims(base).sort_values("claim_rate", ascending=False, kind="stable")
    first, twenty_first = int(claims.route.iloc[0]), int(claims.route.iloc[20])
    if claims.claim_rate.iloc[19] == claims.claim_rate.iloc[20]:
        pytest.skip("a tie at rank 20")
    routes = base.routes[base.routes.route != first]
    c = an.compare_play(base, edited(base, routes=routes))
    r = c.routes.set_index("route")
    assert r.loc[first, "changed"] and r.loc[first, "base_rank"] == 1
    assert r.loc[first, "strong"] == 0 and r.loc[first, "strong_rank"] > 20
    assert r.loc[twenty_first, "changed"] and r.loc[twenty_first, "strong_rank"] == 20
    assert set(r.index[r.changed]) == {first, twenty_first}


def test_a_seat_that_builds_no_station_is_flagged(base, no_stations):
    # the strong "with stations" run is the run without stations (its seat builds none):
    # every station effect is exactly 0, so the score gain that is clearly positive under
    # the base play becomes unclear -- flagged; points per station has no value (0 / 0)
    with_none = edited(no_stations, policies=base.manifest["policies"],
                       games=no_stations.games.assign(policy="tickets"))
    c = an.compare_play(base, with_none, no_stations, no_stations)
    s = c.stations.set_index("metric")
    assert s.loc["stations_built", "strong"] == 0
    assert s.loc["score_diff", "strong"] == 0
    assert s.loc["score_diff", "base_verdict"] == "above"
    assert s.loc["score_diff", "strong_verdict"] == "unclear"
    assert s.loc["score_diff", "changed"]
    assert not np.isfinite(s.loc["points_per_station", "strong"])
    assert not s.loc["points_per_station", "changed"]


def test_a_material_change_of_a_score_part_is_flagged(base):
    # route points 20% higher for every seat in the strong copy: the route points row is
    # flagged (significant, above 10%); the other parts are untouched
    games = base.games.assign(route_points=(base.games.route_points * 1.2).round().astype(int))
    c = an.compare_play(base, edited(base, games=games))
    sp = c.score_parts.set_index("metric")
    assert sp.loc["route_points", "changed"]
    assert sp.loc["route_points", "why"].startswith("+20%")
    assert not sp.drop(index="route_points").changed.any()


def test_policies_are_paired_slot_by_slot():
    # the tunnel study: each tunnel attitude against its expert counterpart
    specs = ["tickets:risk=0", "tickets", "tickets:tunnels=0"]
    a = play(specs, board="europe", games=150)
    b = play([s.replace("tickets", "expert") for s in specs], board="europe", games=150)
    c = an.compare_play(a, b)
    p = c.policies
    assert list(p.base_policy.unique()) == specs
    assert list(p.strong_policy.unique()) == ["expert:risk=0", "expert", "expert:tunnels=0"]
    win = p[p.metric == "win_rate"]
    assert np.allclose(win.reference, 1 / 3)
    games = a.games
    share = games.assign(w=games.win.astype(float)).groupby("policy").w.mean()
    assert np.allclose(win.base.to_numpy(), share.reindex(specs).to_numpy())


@pytest.mark.parametrize("change, words", [
    (dict(seed=SEED + 1), "seed 12 in the strong run, 11 in the base run"),
    (dict(games=GAMES - 1), "game count 299 in the strong run, 300 in the base run"),
    (dict(board="usa"), "board 'usa' in the strong run, 'europe' in the base run"),
    (dict(rotate=False), "seat layout (rotation) False in the strong run, True in the base run"),
])
def test_runs_of_other_games_are_refused(base, change, words):
    other = play(["expert"] * 4, **change)      # one difference (a board: and its checksum)
    with pytest.raises(ValueError) as err:
        an.compare_play(base, other)
    msg = str(err.value)
    assert msg.startswith("the two runs do not play the same games (")
    assert words in msg
    assert "simulate the strong run with the base run's board, players, games, seed and seat " \
           "rotation" in msg
    assert msg.count(" in the strong run, ") == 1 + ("board" in change)   # + its checksum


def test_other_settings_and_lone_baselines_are_refused(base, no_stations):
    other = play(["expert:risk=0"] + ["expert"] * 3)
    with pytest.raises(ValueError, match=r"policy settings of slot 0: 'expert:risk=0' in the "
                                         r"strong run, 'tickets' in the base run"):
        an.compare_play(base, other)
    with pytest.raises(ValueError, match="station baselines of both plays"):
        an.compare_play(base, base, no_stations)


def test_another_expert_model_is_a_stronger_play_and_keeps_the_settings_check(base):
    """`expert:model=whole` plays the base run's `tickets` seats as `expert` does (the model
    names the player, not a setting), with the same games; `expert:model=whole,risk=0`
    against `tickets` is still refused for its setting."""
    whole = play(["expert:model=whole"] * 4)
    c = an.compare_play(base, whole)
    assert c.manifest["strong_label"].startswith("expert:model=whole")
    assert (c.score_parts.base.notna()).all()
    other = play(["expert:model=whole,risk=0"] + ["expert:model=whole"] * 3)
    with pytest.raises(ValueError, match=r"policy settings of slot 0: 'expert:model=whole,risk=0'"):
        an.compare_play(base, other)


def test_summary_runs_are_refused():
    a = ttrsim.simulate("europe", 4, games=40, seed=1, summary=True)
    with pytest.raises(an.MissingTable, match="per-event runs"):
        an.compare_play(a, a)


def test_the_report_holds_the_section(base, tmp_path, europe3_report):
    tickets = base.tickets.copy()
    tid = int(tickets.ticket.iloc[0])
    tickets.loc[tickets.ticket == tid, "completed"] = False
    # the edited tables stand for a stronger play (the same policies would be titled so)
    c = an.compare_play(base, edited(base, ["expert"] * 4, tickets=tickets))
    page = write_report(base, tmp_path / "r", stronger=c).read_text()
    section = page[page.index('<section id="stronger">'):]
    assert "<h2>Under stronger play</h2>" in section
    assert "Skipped" not in section
    assert section.count("<tr class='flag'>") == int(c.tickets.changed.sum()) >= 1
    assert "conclusions change" in section
    for name in ("stronger_tickets.csv", "stronger_tickets.png", "stronger_routes.png",
                 "stronger_score_parts.png", "stronger_seats.csv"):
        assert (tmp_path / "r" / name).exists(), name
    shown = pd.read_csv(tmp_path / "r" / "stronger_tickets.csv")
    assert bool(shown.changed.iloc[0])              # the changed tickets come first
    # without a comparison the section says why it is missing (a report written without
    # one: conftest.py's)
    _, plain = europe3_report
    plain = plain[plain.index('<section id="stronger">'):]
    assert "This section needs a run of the same games" in plain
    assert "class='flag'" not in plain


def test_the_report_refuses_a_comparison_of_another_run(base, tmp_path):
    other = play(["tickets"] * 4, seed=SEED + 5)
    c = an.compare_play(other, other)
    with pytest.raises(ValueError, match="not of this run .*seed"):
        write_report(base, tmp_path / "r", stronger=c)
    assert not (tmp_path / "r").exists()


def test_parts_zero_under_both_plays_are_left_out():
    # USA has no stations: no station points, no stations built, no station table
    a = play(["tickets"] * 3, board="usa", games=60)
    b = play(["expert"] * 3, board="usa", games=60)
    c = an.compare_play(a, b)
    assert not {"station_points", "stations_built", "attraction_points"} & set(c.score_parts.metric)
    assert {"score", "route_points", "ticket_points", "turns"} <= set(c.score_parts.metric)
    assert c.stations is None and "stations" not in c.tables()


@pytest.mark.slow
def test_the_report_command_adds_the_section(tmp_path, capsys):
    # `ttrsim report RUN --stronger RUN [--baseline RUN --stronger-baseline RUN]` writes
    # exactly what write_report(run, stronger=compare_play(...)) writes (a baseline handed
    # to the wrong side or left out would change the tables); runs of other games, and a
    # stronger baseline without its pair, are refused in one line
    from ttrsim.cli import main
    from ttrsim.results import load_run

    runs = {"base": (["tickets"] * 4, SEED), "no": (["tickets:stations=0"] + ["tickets"] * 3, SEED),
            "strong": (["expert"] * 4, SEED), "strong_no": (["expert:stations=0"] + ["expert"] * 3, SEED),
            "other": (["expert"] * 4, SEED + 1)}
    path = {name: str(tmp_path / name) for name in runs}
    for name, (policies, seed) in runs.items():
        ttrsim.simulate("europe", policies, games=60, seed=seed, out=path[name])
    assert main(["report", path["base"], "--out", str(tmp_path / "cli"), "--baseline", path["no"],
                 "--stronger", path["strong"], "--stronger-baseline", path["strong_no"]]) == 0
    capsys.readouterr()
    page = (tmp_path / "cli" / "index.html").read_text()
    assert "<h2>Under stronger play</h2>" in page[page.index('<section id="stronger">'):]
    load = {name: load_run(p) for name, p in path.items()}
    c = an.compare_play(load["base"], load["strong"], load["no"], load["strong_no"])
    write_report(load["base"], tmp_path / "api", baseline=load["no"], stronger=c)
    for name in ("stronger_tickets.csv", "stronger_seats.csv", "stronger_stations.csv",
                 "stronger_routes.csv", "stronger_score_parts.csv"):
        assert (tmp_path / "cli" / name).read_text() == (tmp_path / "api" / name).read_text(), name

    def refused(argv, needle):
        assert main(["report", path["base"], "--out", str(tmp_path / "bad"), *argv]) == 2
        err = capsys.readouterr().err.splitlines()
        assert len(err) == 1 and err[0].startswith("ttrsim report: error: ") and needle in err[0]

    refused(["--stronger", path["other"]], "seed")
    refused(["--stronger", path["strong"], "--stronger-baseline", path["strong_no"]],
            "give --baseline and --stronger")
    refused(["--baseline", path["no"], "--stronger-baseline", path["strong_no"]],
            "give --baseline and --stronger")
    assert not (tmp_path / "bad").exists()


# --- the balance studies under stronger play ------------------------------------------------

ROUTES = [1, 2, 3, 4, 5, 6, 7, 8]


@pytest.fixture(scope="module")
def importance():
    return (an.route_importance("newyork", 2, games=300, seed=3, routes=ROUTES),
            an.route_importance("newyork", ["expert"] * 2, games=300, seed=3, routes=ROUTES))


@pytest.fixture(scope="module")
def fairness():
    return (an.ticket_fairness("newyork", 2, games=400, seed=3),
            an.ticket_fairness("newyork", ["expert"] * 2, games=400, seed=3))


def with_table(result, table):
    import dataclasses
    return dataclasses.replace(result, table=table)


def test_a_study_against_itself_differs_in_nothing(importance, fairness):
    c = an.compare_importance(importance[0], importance[0])
    assert len(c.table) == len(ROUTES)
    assert (c.table.difference == 0).all() and not c.table.changed.any()
    assert not c.table.significant.any() and c.manifest["spearman"] == pytest.approx(1.0)
    f = an.compare_fairness(fairness[0], fairness[0])
    assert (f.table.difference == 0).all() and not f.table.changed.any()
    assert (f.spread.difference == 0).all()
    assert f.table.ticket.nunique() == len(fairness[0].table.query("round == 0"))
    # rows are paired by route or ticket id, not by position: the same study with its
    # rows shuffled is still the same study
    for compare, result in ((an.compare_importance, importance[0]),
                            (an.compare_fairness, fairness[0])):
        shuffled = with_table(result, result.table.sample(frac=1.0, random_state=5))
        got = compare(result, shuffled).table
        assert (got.difference == 0).all() and not got.changed.any()


def test_importance_flags_exactly_the_route_whose_verdict_flips(importance):
    # the strong study is the base one with its least important route made to matter
    # (removing it costs 30 completion points, a tight interval, q 1e-6): its verdict goes
    # unclear -> above and it enters the top 1 with a significant difference; every
    # other row is untouched
    base = importance[0]
    t = base.table.copy()
    last = int(t.route[t.importance.idxmin()])
    assert (t.completion_q[t.route == last] >= 0.05).all()
    t.loc[t.route == last, ["completion_change", "completion_low", "completion_high",
                            "completion_q"]] = [-0.30, -0.31, -0.29, 1e-6]
    c = an.compare_importance(base, with_table(base, t), top=1)
    row = c.table.set_index("route").loc[last]
    assert row.strong == pytest.approx(30.0) and row.strong_low == pytest.approx(29.0)
    assert row.base_verdict == "unclear" and row.strong_verdict == "above"
    assert row.strong_rank == 1 and row.base_rank == len(ROUTES)
    assert bool(row.changed) and "unclear 0 -> above" in row.why and "(top 1)" in row.why
    assert c.table.changed.sum() == 1 and c.table.route.iloc[0] == last   # changed rows first
    others = c.table[c.table.route != last]
    assert (others.difference == 0).all()
    # the difference's interval: the normal one from both widths (sides independent)
    z = 1.959963984540054
    se = np.hypot((row.base_high - row.base_low) / (2 * z), 2.0 / (2 * z))
    assert row.low == pytest.approx(row.difference - z * se)
    assert row.high == pytest.approx(row.difference + z * se)


def test_importance_verdicts_keep_each_studys_false_discovery_rate(importance):
    # a route whose interval lies above 0 but whose q over the routes does not pass is
    # "unclear", not "above": a verdict read from the bare interval (one test per route,
    # no multiplicity control) would flag it as changed
    base = importance[0]
    t = base.table.copy()
    last = int(t.route[t.importance.idxmin()])
    t.loc[t.route == last, ["completion_change", "completion_low", "completion_high",
                            "completion_q"]] = [-0.02, -0.03, -0.001, 0.2]
    c = an.compare_importance(base, with_table(base, t))
    row = c.table.set_index("route").loc[last]
    assert row.strong_low > 0 and row.strong_verdict == "unclear" and not row.changed
    t.loc[t.route == last, "completion_q"] = 0.01
    row = an.compare_importance(base, with_table(base, t)).table.set_index("route").loc[last]
    assert row.strong_verdict == "above" and row.changed


def test_fairness_flags_a_balanceable_flip_and_a_far_suggestion_only_when_significant(fairness):
    base = fairness[0]
    t = base.table.copy()
    first = t["round"] == 0
    a, b, c_ = (int(x) for x in t[first].ticket.iloc[:3])
    row = lambda tid: first & (t.ticket == tid)  # noqa: E731
    # a: balanceable flips and its value moves far (significant); b: the suggestion moves
    # by half its points and the value far; c: the suggestion moves as far but the value
    # does not (not significant: the suggestion may differ by chance)
    t.loc[row(a), "balanceable"] = ~t.loc[row(a), "balanceable"].astype(bool)
    for tid in (a, b):
        t.loc[row(tid), ["value", "value_low", "value_high"]] = [5.0, 4.99, 5.01]
    for tid in (b, c_):
        pts = int(t.loc[row(tid), "points"].iloc[0])
        t.loc[row(tid), "suggested"] = t.loc[row(tid), "suggested"] + max(2, (pts + 1) // 2)
    f = an.compare_fairness(base, with_table(base, t))
    got = f.table.set_index("ticket")
    assert set(got.index[got.changed]) == {a, b}
    assert "balanceable under" in got.loc[a, "why"] and "suggested" in got.loc[b, "why"]
    assert got.loc[c_, "significant"] == False and got.loc[c_, "why"] != ""  # noqa: E712


def test_studies_of_other_games_or_kinds_are_refused(importance, fairness):
    base = importance[0]
    other_seed = an.route_importance("newyork", ["expert"] * 2, games=300, seed=4, routes=ROUTES)
    with pytest.raises(ValueError, match=r"seed 4 in the strong study, 3 in the base study"):
        an.compare_importance(base, other_seed)
    fewer = an.route_importance("newyork", ["expert"] * 2, games=300, seed=3, routes=ROUTES[:4])
    with pytest.raises(ValueError, match="routes"):
        an.compare_importance(base, fewer)
    risky = an.route_importance("newyork", ["expert:risk=0"] * 2, games=300, seed=3, routes=ROUTES)
    with pytest.raises(ValueError, match="policy settings of slot 0"):
        an.compare_importance(base, risky)
    with pytest.raises(TypeError, match="not a route_importance result"):
        an.compare_importance(base, fairness[1])
    with pytest.raises(TypeError, match="not a ticket_fairness result"):
        an.compare_fairness(fairness[0], importance[1])


def test_the_balance_reports_hold_the_section(importance, fairness, tmp_path):
    from ttrsim.report import write_fairness_report, write_route_importance_report

    c = an.compare_importance(*importance)
    page = write_route_importance_report(importance[0], tmp_path / "ri", stronger=c).read_text()
    section = page[page.index('<section id="stronger">'):]
    assert "<h2>Under stronger play</h2>" in section and "Spearman" in section
    shown = pd.read_csv(tmp_path / "ri" / "stronger_importance.csv")
    assert len(shown) == len(ROUTES) and (tmp_path / "ri" / "stronger_importance.png").exists()
    f = an.compare_fairness(*fairness)
    page = write_fairness_report(fairness[0], tmp_path / "tf", "t", stronger=f).read_text()
    assert "Spread as given, balanceable tickets" in page[page.index('<section id="stronger">'):]
    # without a comparison there is no such section; one of another study is refused
    plain = write_route_importance_report(importance[0], tmp_path / "plain").read_text()
    assert '<section id="stronger">' not in plain
    with pytest.raises(ValueError, match="not of this study .*policies"):
        write_route_importance_report(importance[1], tmp_path / "bad", stronger=c)
    with pytest.raises(ValueError, match="not of this study"):
        write_fairness_report(fairness[1], tmp_path / "bad2", "t", stronger=f)
    assert not (tmp_path / "bad").exists() and not (tmp_path / "bad2").exists()


def test_study_manifests_name_the_expert_model(importance):
    from ttrsim.policies import expert_models

    assert "expert_models" not in importance[0].manifest
    assert importance[1].manifest["expert_models"] == expert_models(["expert"])
    c = an.compare_importance(*importance)
    assert c.manifest["expert_models"] == expert_models(["expert"])
    v = ttrsim.variant("newyork", trains=14)
    assert an.compare("newyork", v, players=["expert"] * 2, games=20).manifest[
        "expert_models"] == expert_models(["expert"])
    assert "expert_models" not in an.compare("newyork", v, players=2, games=20).manifest


def test_the_study_commands_play_again_under_stronger_play(importance, fairness, tmp_path, capsys):
    # `--stronger expert` plays the study again with expert in place of each seat's policy
    # and writes what compare_* of the two studies gives; a policy that cannot take a
    # seat's settings is refused before anything is played
    from ttrsim.cli import main
    from ttrsim.report import write_fairness_report, write_route_importance_report

    common = ["--board", "newyork", "--players", "2", "--seed", "3", "--quiet", "--stronger",
              "expert"]
    assert main(["route-importance", *common, "--games", "300", "--routes",
                 ",".join(map(str, ROUTES)), "--report", str(tmp_path / "ri"),
                 "--out", str(tmp_path / "ri-runs")]) == 0
    assert main(["ticket-fairness", *common, "--games", "400", "--report", str(tmp_path / "tf")]) == 0
    out = capsys.readouterr().out
    assert "importance_comparison: newyork" in out and "fairness_comparison: newyork" in out
    assert (tmp_path / "ri-runs-expert").is_dir()        # the strong study's own --out
    write_route_importance_report(importance[0], tmp_path / "ri-api",
                                  stronger=an.compare_importance(*importance))
    write_fairness_report(fairness[0], tmp_path / "tf-api", "t",
                          stronger=an.compare_fairness(*fairness))
    for cli, api, name in (("ri", "ri-api", "stronger_importance.csv"),
                           ("tf", "tf-api", "stronger_fairness.csv")):
        assert (tmp_path / cli / name).read_text() == (tmp_path / api / name).read_text()
    assert main(["ticket-fairness", "--board", "newyork", "--players", "2", "--games", "10",
                 "--policy", "routes:min_len=3", "--stronger", "expert", "--quiet"]) == 2
    err = capsys.readouterr()
    assert "bad parameter 'min_len=3'" in err.err and "ticket fairness on" not in err.out


@pytest.fixture(scope="module")
def variant_pair():
    v = ttrsim.variant("newyork", trains=14)
    return (v, an.compare("newyork", v, players=2, games=400, seed=1),
            an.compare("newyork", v, players=["expert"] * 2, games=400, seed=1))


def test_a_variant_comparison_under_stronger_play(variant_pair, tmp_path, capsys):
    # against itself: nothing; a copy where one significant effect loses its significance
    # flags exactly that row; rows pair by metric, not position; other games, boards or
    # kinds refused; the report's section and the command's --stronger agree
    import dataclasses

    from ttrsim.cli import main
    from ttrsim.report import write_comparison_report

    v, a, b = variant_pair
    same = an.compare_variant(a, a)
    assert (same.table.difference == 0).all() and not same.table.changed.any()
    shuffled = dataclasses.replace(a, full=a.full.sample(frac=1.0, random_state=3))
    assert not an.compare_variant(a, shuffled).table.changed.any()
    full = a.full.copy()
    sig = full.index[full.significant.astype(bool)][0]
    full.loc[sig, ["q_value", "significant"]] = [0.5, False]
    c = an.compare_variant(a, dataclasses.replace(a, full=full))
    assert c.table.changed.sum() == 1
    row = c.table.iloc[0]
    assert (row.kind, row.key) == (full.kind[sig], full.key[sig]) and row.strong_verdict == "unclear"
    assert row.base_verdict == ("above" if full.difference[sig] > 0 else "below")
    other = an.compare("newyork", v, players=["expert"] * 2, games=400, seed=2)
    with pytest.raises(ValueError, match="seed 2 in the strong study, 1 in the base study"):
        an.compare_variant(a, other)
    with pytest.raises(TypeError, match="not a board-variant comparison"):
        an.compare_variant(a, an.route_importance("newyork", 2, games=20, seed=1, routes=[1]))
    page = write_comparison_report(a, tmp_path / "api", stronger=an.compare_variant(a, b))
    assert "<h2>Under stronger play</h2>" in page.read_text()
    with pytest.raises(ValueError, match="not of this study"):
        write_comparison_report(other, tmp_path / "bad", stronger=an.compare_variant(a, b))
    vfile = tmp_path / "v.json"
    vfile.write_text('{"base": "newyork", "trains": 14}')
    assert main(["compare", "--variant", str(vfile), "--players", "2", "--games", "400",
                 "--seed", "1", "--quiet", "--stronger", "expert",
                 "--report", str(tmp_path / "cli")]) == 0
    assert "variant_comparison: newyork" in capsys.readouterr().out
    assert (tmp_path / "cli" / "stronger_variant.csv").read_text() == \
        (tmp_path / "api" / "stronger_variant.csv").read_text()


def test_a_weaker_built_in_as_the_stronger_play_is_said_to_be_weaker(tmp_path, capsys):
    # `--stronger random` plays the study again with random in place of tickets: the
    # comparison and its report say the "stronger" play is the weaker one, while a stronger
    # player, a Python policy (no known strength) or a player of the same level says nothing
    from ttrsim.analysis.studies.verdicts import weaker_play
    from ttrsim.cli import main

    assert "random in place of tickets" in weaker_play(["tickets"] * 2, ["random"] * 2)
    assert "greedy in place of expert" in weaker_play(["expert:reach=5", "tickets"],
                                                      ["greedy:reach=5", "tickets"])
    for base, strong in ((["tickets"], ["expert"]), (["tickets"], ["expert:model=whole"]),
                         (["routes"], ["blocker"]), (["tickets"], ["mine.py:play"]),
                         (["random"], ["tickets"])):
        assert weaker_play(base, strong) is None, (base, strong)
    common = ["--board", "newyork", "--players", "2", "--seed", "3", "--quiet", "--games", "40"]
    assert main(["ticket-fairness", *common, "--stronger", "random",
                 "--report", str(tmp_path / "weak")]) == 0
    out = capsys.readouterr().out
    assert 'The "stronger" play is weaker: random in place of tickets' in out
    page = (tmp_path / "weak" / "index.html").read_text()
    assert "<h2>Under weaker play</h2>" in page and "random in place of tickets" in page
    assert main(["ticket-fairness", *common, "--stronger", "expert"]) == 0
    assert "weaker" not in capsys.readouterr().out
    runs = [play(p, games=20) for p in (["tickets"] * 2, ["greedy"] * 2)]
    c = an.compare_play(*runs)
    assert "greedy in place of tickets" in c.summary()
    write_report(runs[0], tmp_path / "run", stronger=c)
    page = (tmp_path / "run" / "index.html").read_text()
    assert "<h2>Under weaker play</h2>" in page and "greedy in place of tickets" in page


def test_tiny_q_values_read_below_a_bound_not_in_scientific_notation():
    # a material change found at q 1.4e-178 (or a q that underflowed to 0) read as such in
    # the note: a bound says what the digits cannot
    from ttrsim.analysis.studies.verdicts import finish
    from ttrsim.stats import fmt_p_text

    df = pd.DataFrame({"label": ["a", "b", "c", "d"], "base": [10.0] * 4,
                       "base_low": [9.0] * 4, "base_high": [11.0] * 4,
                       "strong": [20.0, 20.0, 15.0, 10.5], "strong_low": [19.0, 19.0, 14.0, 9.5],
                       "strong_high": [21.0, 21.0, 16.0, 11.5],
                       "difference": [10.0, 10.0, 5.0, 0.5], "low": [9.0, 9.0, 4.0, -0.5],
                       "high": [11.0, 11.0, 6.0, 1.5], "p_value": [1.4e-178, 0.0, 0.002, 0.4],
                       "rule": "material", "reference": np.nan})
    why = list(finish(df, 0.05, 0.1).why)
    assert why == ["+100% (q < 1e-10)", "+100% (q < 1e-10)", "+50% (q 0.0027)", ""], why
    assert [fmt_p_text(v) for v in (3e-11, 1e-10, 0.0312, np.nan)] == ["< 1e-10", "1e-10",
                                                                         "0.031", "–"]
