"""Results that cannot mislead: mismatched inputs are refused with one line naming the
difference, rankings need a sample and rank by an interval's bound, maps meant to be
compared share one colour scale, and the top of a screening is confirmed on fresh seeds."""
from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from ttrsim import analysis as an
from ttrsim import cli
from ttrsim.report import write_report

sys.path.insert(0, str(Path(__file__).parent))
from test_analysis import MANIFEST, fake_board, fake_run, station_pair  # noqa: E402


# ------------------------------------------------------------------ report --baseline

def paired(**baseline_changes):
    with_, without = station_pair()
    manifest = dict(MANIFEST, players=2, games=4, max_turns=10_000)
    run = SimpleNamespace(**{**vars(fake_run()), "games": with_, "tunnels": None,
                             "manifest": manifest})
    base = SimpleNamespace(games=without, manifest=dict(manifest, **baseline_changes))
    return run, base


@pytest.mark.parametrize("change, words", [
    ({"board": "usa"}, "board 'usa' in the baseline, 'toy' in the run"),
    ({"board_checksum": "other"}, "board checksum"),
    ({"players": 3}, "player count 3 in the baseline, 2 in the run"),
    ({"games": 400}, "game count 400 in the baseline, 4 in the run"),
    ({"seed": 8}, "seed"),
    ({"rotate": True}, "seat layout (rotation) True in the baseline, False in the run"),
    ({"max_turns": 500}, "turn limit 500 in the baseline, 10000 in the run"),
])
def test_report_baseline_of_another_run_is_refused(monkeypatch, tmp_path, capsys, change, words):
    run, base = paired(**change)
    with pytest.raises(ValueError, match="not a paired run"):
        an.station_value(run, base)
    runs = {str(tmp_path / "with"): run, str(tmp_path / "without"): base}
    import ttrsim.results

    monkeypatch.setattr(ttrsim.results, "load_run", lambda path: runs[str(path)])
    out = tmp_path / "out"
    assert cli.main(["report", str(tmp_path / "with"), "--baseline", str(tmp_path / "without"),
                     "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and words in err, err
    assert not out.exists(), "nothing is written for a refused baseline"
    with pytest.raises(ValueError, match="not a paired run"):
        write_report(run, tmp_path / "api", baseline=base)
    assert not (tmp_path / "api").exists()


def test_report_baseline_of_the_same_layout_is_accepted(tmp_path):
    run, base = paired(policies=["tickets:stations=0", "random"], no_stations=[0])
    assert an.station_value(run, base, seat=0).estimate.notna().any()
    page = write_report(run, tmp_path, baseline=base).read_text()
    assert "station_value.png" in page


# ------------------------------------------------------------------ ticket balance

def balance_run(kept_a: int, failed_a: int, kept_b: int, completed_b: int, points=(10, 10, 10)):
    board = fake_board()
    board.ticket_points = np.array(points)
    summary = pd.DataFrame({"ticket": [1, 2, 3], "offered": [kept_a, kept_b, 200],
                            "kept": [kept_a, kept_b, 200],
                            "completed": [kept_a - failed_a, completed_b, 200]})
    return SimpleNamespace(games=None, tickets=None, ticket_summary=summary, board=board,
                           manifest={})


def test_a_ticket_kept_once_is_not_ranked_first():
    # ticket 1 kept once and failed: the largest point gap (2 x 10); ticket 2 kept 100
    # times, completed half of them: gap 10, certain; ticket 3 always completed: gap 0
    run = balance_run(1, 1, 100, 50)
    out = an.ticket_balance(run).set_index("ticket")
    assert out.loc[1, "gap"] == 20 and out.loc[2, "gap"] == 10
    assert out.loc[2, "rank"] == 1 and out.loc[3, "rank"] == 2
    assert pd.isna(out.loc[1, "rank"]), "kept once: below min_kept, no rank"
    assert list(an.ticket_balance(run).ticket) == [2, 3, 1]      # unranked last


def test_ticket_balance_orders_by_the_interval_bound_not_the_point_estimate():
    # without a minimum sample: ticket 1's point gap (20) is the largest, but its interval
    # (kept once) reaches down far below ticket 2's certain gap of about 10
    run = balance_run(1, 1, 100, 50)
    out = an.ticket_balance(run, min_kept=1).set_index("ticket")
    assert out.loc[2, "rank"] == 1 and out.loc[1, "rank"] == 2
    assert out.loc[1, "gap"] > out.loc[2, "gap"] and out.loc[1, "gap_low"] < out.loc[2, "gap_low"]
    # the same gaps with enough games: the larger one ranks first
    out = an.ticket_balance(balance_run(400, 400, 100, 50)).set_index("ticket")
    assert out.loc[1, "rank"] == 1 and out.loc[2, "rank"] == 2
    # min_kept is a parameter: a ticket kept exactly min_kept times is ranked
    out = an.ticket_balance(balance_run(30, 30, 100, 50), min_kept=30).set_index("ticket")
    assert out.loc[1, "rank"] == 1
    out = an.ticket_balance(balance_run(29, 29, 100, 50), min_kept=30).set_index("ticket")
    assert pd.isna(out.loc[1, "rank"])
    with pytest.raises(ValueError, match="min_kept"):
        an.ticket_balance(run, min_kept=-1)


# ------------------------------------------------------------------ contention maps

def test_contention_maps_of_the_policies_share_one_colour_scale(monkeypatch, tmp_path):
    import ttrsim
    from ttrsim import plots

    run = ttrsim.simulate("europe", ["tickets", "random"], games=40, seed=2)
    drawn = []
    original = plots.plot_route_contention

    def recording(claims, board, *args, **kwargs):
        fig = original(claims, board, *args, **kwargs)
        drawn.append((float(claims.claim_rate.max()), fig.axes[0].collections[0].norm.vmax))
        return fig
    monkeypatch.setattr(plots, "plot_route_contention", recording)
    write_report(run, tmp_path)
    assert len(drawn) == 2
    own_max = [m for m, _ in drawn]
    scales = {v for _, v in drawn}
    assert own_max[0] != own_max[1], "the test needs policies whose top claim rates differ"
    assert scales == {max(own_max)}, drawn
    # and the plot itself: the scale given is the scale drawn
    claims = an.route_claims(run, by="policy")
    part = claims[claims.policy == "random"]
    assert original(part, run.board, vmax=0.9).axes[0].collections[0].norm.vmax == 0.9


# ------------------------------------------------------------------ compare

def test_compare_refuses_unrelated_boards_unless_told(capsys, tmp_path):
    from ttrsim import variant
    from ttrsim.analysis.studies.comparison import check_related

    with pytest.raises(ValueError, match="'usa' is not 'europe' nor a variant of it"):
        an.compare("europe", "usa", 3, games=5)
    with pytest.raises(ValueError, match="allow_unrelated=True"):
        an.compare("newyork", variant("usa", trains=30), 2, games=5)
    c = an.compare("europe", "usa", 3, games=5, allow_unrelated=True)
    assert c.manifest["allow_unrelated"] is True
    # a variant, a variant of a variant, two variants of one board, either way round
    v = variant("newyork", trains=12)
    vv = variant(v, initial_hand=3)
    w = variant("newyork", remove_routes=[int(v.route_id[0])])
    for a, b in (("newyork", v), (v, "newyork"), ("newyork", vv), (vv, w), ("newyork", "newyork")):
        from ttrsim.maps import resolve_board

        check_related(resolve_board(a), resolve_board(b))
    assert an.compare("newyork", vv, 2, games=5).manifest["allow_unrelated"] is False
    # the command line: one line, exit 2, and the override
    import json

    from ttrsim import maps
    from ttrsim.maps import board_to_dict

    vfile = tmp_path / "usa.json"          # a map file: no lineage
    vfile.write_text(json.dumps(board_to_dict(maps.load("usa"))))
    assert cli.main(["compare", "--board", "europe", "--variant", str(vfile), "--games", "5",
                     "--players", "3", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "--allow-unrelated" in err
    assert cli.main(["compare", "--board", "europe", "--variant", str(vfile), "--games", "5",
                     "--players", "3", "--quiet", "--allow-unrelated"]) == 0


@pytest.mark.parametrize("option, bad, words", [
    ("--report", "afile", "is a file"),
    ("--csv", "adir", "is a directory"),
    ("--csv", "missing/t.csv", "does not exist"),
])
def test_compare_checks_its_outputs_before_it_plays(monkeypatch, capsys, tmp_path, option, bad, words):
    import ttrsim.analysis.studies as studies

    (tmp_path / "afile").write_text("x")
    (tmp_path / "adir").mkdir()
    vfile = tmp_path / "v.json"
    vfile.write_text('{"base": "newyork", "trains": 12}')

    def never(*args, **kwargs):
        raise AssertionError("games were played before the outputs were checked")
    monkeypatch.setattr(studies, "compare", never)
    assert cli.main(["compare", "--variant", str(vfile), "--games", "5", "--quiet",
                     option, str(tmp_path / bad)]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and option in err and words in err, err


# ------------------------------------------------------------------ route importance

def test_route_importance_confirms_its_top_routes_on_fresh_games(tmp_path):
    from ttrsim.analysis.studies.importance import confirmation_seed
    from ttrsim.report import write_route_importance_report

    kw = dict(games=120, seed=3, batch_size=60, group_size=4, routes=list(range(1, 9)))
    plain = an.route_importance("newyork", 2, **kw)
    result = an.route_importance("newyork", 2, confirm=3, out=tmp_path / "ri", **kw)
    t = result.table
    # the screening itself is unchanged by the confirmation
    assert t.drop(columns=["confirmed_importance", "confirmed_low", "confirmed_high",
                           "confirmation"]).equals(plain.table)
    top = list(t.route[:3])
    confirmed = t[t.confirmed_importance.notna()]
    assert list(confirmed.route) == top                       # exactly the top 3
    cseed = result.manifest["confirm_seed"]
    assert cseed == confirmation_seed(3) and cseed != 3 and result.manifest["confirm"] == 3
    # the confirmed values are a route-importance run of those routes on the fresh seed
    again = an.route_importance("newyork", 2, **dict(kw, seed=cseed, routes=top)).table.set_index("route")
    for _, r in confirmed.iterrows():
        assert r.confirmed_importance == pytest.approx(again.loc[r.route, "importance"])
        assert r.confirmed_low == pytest.approx(-100 * again.loc[r.route, "completion_high"])
        assert r.confirmed_high == pytest.approx(-100 * again.loc[r.route, "completion_low"])
        assert r.confirmed_low <= r.confirmed_importance <= r.confirmed_high
    assert (confirmed.confirmed_importance != confirmed.importance).any(), "fresh games differ"
    # resumed from disk: the same table
    assert an.route_importance("newyork", 2, confirm=3, out=tmp_path / "ri", **kw).table.equals(t)
    with pytest.raises(ValueError, match="confirm_seed must differ"):
        an.route_importance("newyork", 2, confirm=1, confirm_seed=3, **kw)
    # the report says the screening's top is biased and shows both values
    page = write_route_importance_report(result, tmp_path / "rep").read_text()
    assert "biased upward" in page and "confirmed, pp [95%]" in page
    assert result.confirmation_verdict() in page.replace("&#x27;", "'")
    page = write_route_importance_report(plain, tmp_path / "rep2").read_text()
    assert "biased upward" in page and "--confirm" in page


def confirmed_table(first, again):
    """A route-importance table of two routes, screened at ``first`` and confirmed at
    ``again`` (each ``(estimate, low, high)`` of the top route, percentage points)."""
    from ttrsim.analysis.studies.importance import _add_confirmed

    table = pd.DataFrame({"rank": [1, 2], "route": [7, 9], "name": ["A - B (2 red)", "C - D (1 gray)"],
                          "importance": [first[0], 0.5], "importance_low": [first[1], 0.1],
                          "importance_high": [first[2], 0.9]})
    again_t = pd.DataFrame({"route": [7, 9], "importance": [again[0], 0.6],
                            "importance_low": [again[1], 0.2], "importance_high": [again[2], 1.0]})
    _add_confirmed(table, again_t, [7, 9])
    return an.RouteImportance(table, None, {"confirm": 2})


@pytest.mark.parametrize("again, word", [
    ((-0.76, -2.70, 1.17), "not confirmed"),        # the case seen: first by 2.23 [0.31, 4.15]
    ((-2.0, -3.0, -1.0), "reversed on fresh games"),
    ((1.9, 0.5, 3.3), "confirmed"),
])
def test_a_confirmation_that_contradicts_the_first_ranking_says_so(again, word, capsys):
    result = confirmed_table((2.23, 0.31, 4.15), again)
    assert list(result.table.confirmation) == [word, "confirmed"]
    verdict = result.confirmation_verdict()
    if word == "confirmed":
        assert verdict.startswith("Confirmed on fresh games: each of the top 2")
        return
    assert verdict.startswith("The confirmation contradicts the first ranking for 1 of the top 2")
    assert (f"route 7 A - B (2 red), ranked 1 by 2.23 [0.31, 4.15] pp, measures "
            f"{again[0]:.2f} [{again[1]:.2f}, {again[2]:.2f}] pp on fresh games ({word})") in verdict
    assert "route 9" not in verdict
    # an effect found only on the fresh games is not the first ranking's either
    assert confirmed_table((0.4, -0.5, 1.3), (1.9, 0.5, 3.3)).table.confirmation[0] == \
        "an effect only on fresh games"


def test_the_confirm_command_prints_the_verdict(capsys):
    assert cli.main(["route-importance", "--board", "newyork", "--players", "2", "--games", "60",
                     "--routes", "1,2,3,4", "--confirm", "2", "--quiet", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert ("The confirmation contradicts the first ranking" in out
            or "Confirmed on fresh games: each of the top 2 routes" in out), out


def test_route_maps_take_one_scale_for_comparison():
    from ttrsim import maps, plots

    board = maps.load("newyork")
    ids = [int(r) for r in board.route_id]
    small = plots.plot_route_map(board, {ids[0]: 0.1, ids[1]: -0.2}, "x")
    large = plots.plot_route_map(board, {ids[0]: 3.0, ids[1]: -1.0}, "x")
    norm = lambda fig: next(c for c in fig.axes[0].collections if c.get_array() is not None).norm  # noqa: E731
    assert norm(small).vmax != norm(large).vmax                      # each its own, by default
    shared = [plots.plot_route_map(board, v, "x", limits=(-3, 3))
              for v in ({ids[0]: 0.1}, {ids[0]: 3.0, ids[1]: -1.0})]
    assert {(norm(f).vmin, norm(f).vmax) for f in shared} == {(-3.0, 3.0)}
    plain = plots.plot_route_map(board, {ids[0]: 0.5}, "x", diverging=False, limits=(0, 2))
    assert (norm(plain).vmin, norm(plain).vmax) == (0.0, 2.0)
    with pytest.raises(ValueError, match="low < high"):
        plots.plot_route_map(board, {ids[0]: 0.5}, "x", limits=(1, 1))


# ------------------------------------------------------------------ counts in words

def test_show_counts_one_playout_and_one_decision_in_the_singular(capsys):
    """`show --analyse 0 --playouts 1` said "1 playouts a candidate"."""
    final = pd.DataFrame({"policy": ["tickets", "random"], "total": [40, 12]})
    record = SimpleNamespace(final=final, board=SimpleNamespace(name="newyork"), n_players=2,
                             game=0, actions=[7])
    data = {"analysis": {"seat": 0, "decisions": {"0": {"flag": True}}, "playouts": 1,
                         "rollout": "tickets", "level": 0.05, "meaning": "m."}}
    cli._print_shown(record, data, "g.html")
    out = capsys.readouterr().out
    assert "1 decision, final scores" in out
    assert "seat 0: 1 decision analysed (1 playout a candidate, rollout tickets), 1 move " \
           "flagged" in out
    data["analysis"].update(playouts=2, decisions={"0": {"flag": False}, "1": {"flag": False}})
    cli._print_shown(record, data, "g.html")
    assert "2 decisions analysed (2 playouts a candidate, rollout tickets), 0 moves" in \
        capsys.readouterr().out


def test_refusals_cut_board_checksums_to_12_hex_digits(tmp_path, capsys):
    """A refused --out printed both 64-digit checksums, which hid the words around them."""
    import json
    import re

    from ttrsim.analysis.inputs import identity_differences

    out = tmp_path / "run"
    assert cli.main(["simulate", "--board", "newyork", "--players", "2", "--games", "4",
                     "--quiet", "--out", str(out)]) == 0
    capsys.readouterr()
    m = json.loads((out / "manifest.json").read_text())
    here, m["board_checksum"] = m["board_checksum"], "ab" * 32
    (out / "manifest.json").write_text(json.dumps(m))
    assert cli.main(["simulate", "--board", "newyork", "--players", "2", "--games", "4",
                     "--quiet", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"board_checksum: 'abababababab' there, '{here[:12]}' here" in err
    assert not re.search(r"[0-9a-f]{13,}", err), err
    words = identity_differences(SimpleNamespace(manifest={"board_checksum": here, "seed": 1}),
                                 SimpleNamespace(manifest={"board_checksum": "cd" * 32, "seed": 2}),
                                 "the run", "the baseline")
    assert words == [f"board checksum 'cdcdcdcdcdcd' in the baseline, '{here[:12]}' in the run",
                     "seed 2 in the baseline, 1 in the run"]
