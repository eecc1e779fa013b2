"""Figures, the HTML report and the commands, on the hand-built runs of test_analysis."""
from __future__ import annotations

import base64
import re
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure

import ttrsim
from ttrsim import analysis as an
from ttrsim import cli, plots
from ttrsim.report import SECTIONS, write_report

sys.path.insert(0, str(Path(__file__).parent))
from test_analysis import fake_board, fake_run, fake_summary_run, station_pair  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n"


def plot_axes(fig: Figure):
    return [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]


def check_figure(fig, legend: bool) -> None:
    """A title, axis labels on every plot, a legend when there are several series."""
    assert isinstance(fig, Figure)
    axes = plot_axes(fig)
    assert axes
    assert fig.get_suptitle() or all(ax.get_title() for ax in axes)
    for ax in axes:
        assert ax.get_xlabel() and ax.get_ylabel()
    assert any(ax.get_legend() is not None for ax in axes) == legend


def test_ticket_plots():
    table = an.ticket_completion(fake_run())
    fig = plots.plot_ticket_completion(table)
    check_figure(fig, legend=False)
    ax = plot_axes(fig)[0]
    # bars in order of printed points: B-D (5), A-C (8), A-D (20)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["B-D", "A-C", "A-D"]
    np.testing.assert_allclose([p.get_width() for p in ax.patches], [2 / 3, 0.75, 0.5])
    check_figure(plots.plot_ticket_completion(an.ticket_completion(fake_run(), by="players")), legend=True)
    check_figure(plots.plot_ticket_balance(an.ticket_balance(fake_run())), legend=True)


def test_tunnel_odds_plot():
    exact = an.tunnel_odds(fake_board(), "red")
    observed = an.tunnel_extra_distribution(fake_run(), by=())
    fig = plots.plot_tunnel_odds(exact, observed)
    check_figure(fig, legend=True)
    heights = [p.get_height() for p in plot_axes(fig)[0].patches]
    np.testing.assert_allclose(heights, [*exact.probability, 0.4, 0.4, 0.2, 0.0])
    check_figure(plots.plot_tunnel_odds(exact), legend=True)


def test_station_value_plot():
    fig = plots.plot_station_value(an.station_value(*station_pair(), seat=0))
    check_figure(fig, legend=True)
    assert len(plot_axes(fig)) == 2


def test_route_contention_map():
    board = fake_board()
    fig = plots.plot_route_contention(an.route_claims(fake_run()), board)
    check_figure(fig, legend=False)
    ax = plot_axes(fig)[0]
    lines = next(c for c in ax.collections if isinstance(c, LineCollection))
    np.testing.assert_allclose(lines.get_array(), [1, 1 / 3, 2 / 3, 1 / 3, 0])
    seg = lines.get_segments()
    # The two A-B routes are parallel, on either side of the A-B line (y = 0).
    assert seg[0][0][1] == pytest.approx(-seg[1][0][1]) and seg[0][0][1] != 0
    assert seg[0][0][1] == pytest.approx(seg[0][1][1])
    assert seg[2][0][0] == pytest.approx(1.0)  # B-C, a single route, is not shifted
    assert {t.get_text() for t in ax.texts} == {"A", "B", "C", "D"}
    assert any(ax.get_label() == "<colorbar>" for ax in fig.axes)
    with pytest.raises(ValueError):
        plots.plot_route_contention(an.route_claims(fake_run(), by="players"), board)


def test_seat_and_policy_plots():
    check_figure(plots.plot_seat_advantage(an.seat_advantage(fake_run())), legend=True)
    fig = plots.plot_policy_matrix(an.policy_win_matrix(fake_run()))
    check_figure(fig, legend=False)
    assert sorted(t.get_text() for t in plot_axes(fig)[0].texts) == ["0.25", "0.50", "–", "–"]


def test_score_and_length_plots():
    check_figure(plots.plot_score_distribution(an.score_distribution(fake_run())), legend=False)
    check_figure(plots.plot_score_distribution(an.score_distribution(fake_summary_run())), legend=False)
    fig = plots.plot_game_length(an.by_player_count(fake_run()))
    check_figure(fig, legend=False)
    assert len(plot_axes(fig)) == 2


def images(page: str) -> list[bytes]:
    return [base64.b64decode(data, validate=True)
            for data in re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)]


def check_report(index: Path) -> str:
    assert index.name == "index.html" and index.exists()
    page = index.read_text(encoding="utf-8")
    for slug, heading, _ in SECTIONS:
        assert f'<section id="{slug}">' in page and heading in page
    pictures = images(page)
    assert pictures and all(p.startswith(PNG) for p in pictures)
    files = sorted(index.parent.glob("*.png"))
    assert len(files) == len(pictures) and all(f.read_bytes().startswith(PNG) for f in files)
    assert "seed 7" in page and "batch size 1000" in page and "ttrsim 0.1.0" in page
    return page


def test_report_per_event(tmp_path):
    page = check_report(write_report(fake_run(), tmp_path / "r", title="Toy & co"))
    assert "<h1>Toy &amp; co</h1>" in page and "Skipped" not in page and "per-event mode" in page
    for name in ("seat_advantage", "policy_win_matrix", "ticket_balance"):
        assert (tmp_path / "r" / f"{name}.png").exists()
    for policy in ("random", "tickets"):          # two policies: one map and one chart each
        for name in ("route_contention", "tunnel_odds"):
            assert (tmp_path / "r" / f"{name}_{policy}.png").exists()
    assert "Station value needs a paired run" in page


def test_report_summary(tmp_path):
    page = check_report(write_report(fake_summary_run(), tmp_path))
    assert "Skipped: the policy win matrix needs the per-event games table" in page
    assert "summary mode" in page and (tmp_path / "route_contention.png").exists()


def test_report_skips_absent_tables_and_adds_station_value(tmp_path):
    with_, without = station_pair()
    run = SimpleNamespace(**{**vars(fake_run()), "games": with_, "tunnels": None, "manifest": {}})
    page = write_report(run, tmp_path, baseline=SimpleNamespace(games=without)).read_text()
    assert "Skipped: the run has neither a `tunnels` nor a `tunnel_summary` table" in page
    assert (tmp_path / "station_value.png").exists()


def test_cli_tunnel_odds(monkeypatch, capsys):
    fake_maps = SimpleNamespace(load=lambda name: fake_board())
    monkeypatch.setitem(sys.modules, "ttrsim.maps", fake_maps)
    monkeypatch.setattr(ttrsim, "maps", fake_maps, raising=False)
    assert cli.main(["tunnel-odds", "--color", "red", "--hand", "red=3,wild=1",
                     "--faceup", "blue=2,locomotive=1", "--discards", "red=1"]) == 0
    out = capsys.readouterr().out
    assert "3 cards revealed from 30 unseen cards, 20 of them matching" in out
    assert f"{1140 / 4060:.4f}" in out and "expected extra cards = 2.000" in out
    assert cli.main(["tunnel-odds", "--color", "purple"]) == 2


def test_cli_report(monkeypatch, tmp_path, capsys):
    import ttrsim.results

    monkeypatch.setattr(ttrsim.results, "load_run", lambda path: fake_summary_run())
    assert cli.main(["report", str(tmp_path / "run"), "--out", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / "index.html").exists()
    assert capsys.readouterr().out.strip().endswith("index.html")


def test_make_reports_strategy_section_is_built_with_the_page_kit(tmp_path):
    """scripts/make_reports.py adds the strategy tables to a 2-policy report as a section
    of the page kit: in the table of contents, before Methods, its tables as CSV beside
    the page; the page is whole (one section per heading, nothing spliced into another)."""
    from helpers import load_script

    script = load_script("make_reports")
    run = ttrsim.simulate("newyork", ["tickets", "random"], games=60, seed=1)
    folder = tmp_path / "report"
    sec = script.strategy(run, folder)
    page = write_report(run, folder, "strategy", extra=[sec]).read_text()
    assert page.count('<section id="strategy">') == 1
    assert page.index('<section id="strategy">') < page.index('<section id="methods">')
    assert '<a href="#strategy">How the two policies play</a>' in page
    assert page.count("<section") == page.count("</section>")
    strat = (folder / "strategy.csv").read_text()
    assert "claims, first third" in strat and (folder / "strategy_tickets.csv").exists()


def test_a_library_warning_reaches_the_terminal_as_one_line_without_a_path(
        monkeypatch, tmp_path, capsys):
    # a matplotlib UserWarning on a busy machine printed its source path and code line
    # from `ttrsim report`: each warning is one line in the command's words, once
    import warnings

    from ttrsim.report import html

    figure = html.Section.figure
    library = str(Path(np.__file__).parents[1] / "matplotlib" / "figure.py")

    def warned(self, *args, **kwargs):
        warnings.warn_explicit("constrained_layout not applied because axes sizes collapse\n"
                               " to zero.", UserWarning, library, 3560)
        warnings.warn_explicit("a ttrsim remark", UserWarning, html.__file__, 1)
        return figure(self, *args, **kwargs)

    monkeypatch.setattr(html.Section, "figure", warned)
    run = tmp_path / "run"
    ttrsim.simulate("newyork", ["random"] * 2, games=20, seed=1, out=run)
    capsys.readouterr()
    assert cli.main(["report", str(run), "--out", str(tmp_path / "rep")]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err == ["ttrsim report: warning (from matplotlib): constrained_layout not applied "
                   "because axes sizes collapse to zero.",
                   "ttrsim report: warning: a ttrsim remark"], err
