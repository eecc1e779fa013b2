"""Reports a designer can read: each conclusion section opens with its conclusions in
words, numbers at their precision (q-values "< 0.001", rates as percentages with their
interval, booleans as words), a material threshold named where tiny differences are
significant, and wide tables that do not push the page sideways at 1,280 pixels (checked in
headless Chromium)."""
import re

import numpy as np
import pandas as pd
import pytest

import ttrsim
from ttrsim.report import write_comparison_report, write_report
from ttrsim.report.html import fmt_p, readable

from test_viewer import headless_chromium


def test_numbers_at_their_precision():
    df = pd.DataFrame({"ticket": [12_345, 2], "win_rate": [0.2712, 0.5],
                       "win_rate_low": [0.26, 0.48], "win_rate_high": [0.28, 0.52],
                       "q_value": [1.1e-254, 0.0312], "changed": [True, False],
                       "games": [1_000_000, 20], "score": [123.456, 7.0]})
    out = readable(df)
    assert list(out.columns) == ["ticket", "win_rate [95%]", "q_value", "changed", "games",
                                 "score"]
    assert out["win_rate [95%]"].tolist() == ["27.1% [26.0%, 28.0%]", "50.0% [48.0%, 52.0%]"]
    assert out.q_value.tolist() == ["< 0.001", "0.031"]
    assert out.changed.tolist() == ["yes", "no"]
    assert out.games.tolist() == ["1,000,000", "20"] and out.ticket.tolist() == ["12345", "2"]
    assert out.score.tolist() == ["123.5", "7"]
    assert fmt_p(0.0) == "< 0.001" and fmt_p(float("nan")) == "–"
    # a column named like a rate whose values are not in [0, 1] is not a percentage
    assert readable(pd.DataFrame({"rate": [3.0]})).rate.tolist() == ["3"]


def test_no_number_in_scientific_notation_and_named_intervals_folded():
    # rows of the routes table under stronger play (reports/europe-4p), whose columns are
    # named for reading ("tickets low", a bare "low"/"high" beside "difference"): it showed
    # 9.33e-05 and -5.7e-06 beside "< 0.001"
    df = pd.DataFrame({"label": ["34 Kyiv - Sochi (8)", "33 Bucuresti - Kyiv (4 gray)"],
                       "tickets": [0.965, 0.99592], "tickets low": [0.964, 0.99571],
                       "tickets high": [0.966, 0.99612], "difference": [9.33e-05, -0.000183],
                       "low": [-0.00126, -0.00036], "high": [0.00144, -5.7e-06],
                       "q_value": [0.89, 1e-9], "score": [1e-5, 106.52]})
    out = readable(df)
    cells = out.to_numpy().ravel().tolist()
    assert not [c for c in cells if re.search(r"\de[-+]\d", c)], cells
    assert list(out.columns) == ["label", "tickets [95%]", "difference [95%]", "q_value", "score"]
    assert out["difference [95%]"].tolist() == ["0.0000933 [-0.00126, 0.00144]",
                                                "-0.000183 [-0.00036, -0.0000057]"]
    assert out["tickets [95%]"].tolist()[0] == "0.965 [0.964, 0.966]"
    # an interval narrower than three significant digits shows the decimals it needs
    assert out["tickets [95%]"].tolist()[1] == "0.99592 [0.99571, 0.99612]"
    assert out.q_value.tolist() == ["0.89", "< 0.001"]
    assert out.score.tolist() == ["0.00001", "106.5"]


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    out = tmp_path_factory.mktemp("readable")
    run = ttrsim.simulate("europe", ["tickets", "random", "tickets", "greedy"], games=60, seed=4)
    run_page = write_report(run, out / "run")
    cmp = ttrsim.compare("newyork", ttrsim.variant("newyork", trains=12), players=2,
                         games=400, seed=2)
    cmp_page = write_comparison_report(cmp, out / "cmp", material=0.05)
    return run_page, cmp_page, cmp


def _sections(page):
    return re.findall(r'<section id="(\w+)"><h2>[^<]*</h2>\n(<p[^>]*>)', page.read_text())


def test_conclusion_sections_open_with_a_lead(reports):
    run_page, cmp_page, cmp = reports
    first = dict(_sections(run_page))
    for slug in ("seats", "policies", "scores", "tickets", "routes", "tunnels", "stations"):
        assert first[slug] == "<p class='lead'>", (slug, first[slug])
    text = run_page.read_text()
    assert "1.11e-" not in text and not re.search(r"<td>\d\.\d+e-\d+</td>", text)
    assert "<td>True</td>" not in text and "<td>False</td>" not in text
    page = cmp_page.read_text()
    lead = re.search(r"<section id=\"results\">.*?<p class='lead'>(.*?)</p>", page, re.S)
    assert lead and "at least 5% of the base value" in lead.group(1)
    table = cmp.sorted_table()
    material = int((table.significant & (table.relative.abs() >= 0.05)).sum())
    assert f"{material} of them are material" in lead.group(1)
    with pytest.raises(ValueError, match="relative change"):
        write_comparison_report(cmp, run_page.parent.parent / "bad", material=5)


@pytest.mark.slow
def test_no_horizontal_overflow_at_1280_pixels(reports, tmp_path):
    d = headless_chromium("1280,900")
    from selenium.webdriver.common.by import By

    try:
        for page in reports[:2]:
            d.get(page.resolve().as_uri())
            inner = d.execute_script("return window.innerWidth")
            width = d.execute_script("return document.documentElement.scrollWidth")
            assert inner <= 1280 and width <= inner, (page, width, inner)
            # the widest table scrolls inside its own box instead
            boxes = d.find_elements(By.CSS_SELECTOR, "div.wide")
            assert boxes and all(b.size["width"] <= inner for b in boxes)
        section = d.find_element(By.ID, "results")
        shot = tmp_path / "results.png"
        section.screenshot(str(shot))
        assert shot.stat().st_size > 1000
    finally:
        d.quit()


@pytest.fixture(scope="module")
def study_pages(tmp_path_factory):
    from ttrsim import analysis as an
    from ttrsim.report import write_fairness_report, write_route_importance_report

    out = tmp_path_factory.mktemp("studies")
    ri = an.route_importance("europe", 2, games=40, seed=3, confirm=3)
    ri_page = write_route_importance_report(ri, out / "ri")
    fair = [an.ticket_fairness("europe", policies, games=120, seed=3)
            for policies in (2, ["expert"] * 2)]
    tf_page = write_fairness_report(fair[0], out / "tf", "t",
                                    stronger=an.compare_fairness(*fair))
    return {"table": ri_page, "stronger": tf_page}


def test_study_tables_show_names_for_reading(study_pages):
    # the route-importance table showed 17 raw column names with the completion change (a
    # fraction) beside the importance (percentage points); the fairness comparison each
    # play's column apart
    for section, page in study_pages.items():
        text = page.read_text()
        part = text[text.index(f'<section id="{section}">'):]
        part = part[:part.index("</section>")]
        heads = re.findall(r"<th>([^<]*)</th>", part)
        assert heads and not [h for h in heads if "_" in h], heads
        assert len(heads) <= 12, heads
    text = study_pages["table"].read_text()
    assert "importance, pp [95%]" in text and "completion_change" not in text.split("<table")[1]
    assert "confirmation" in text


@pytest.mark.slow
def test_study_tables_fit_a_1280_pixel_window(study_pages, tmp_path):
    # each table fits its section at 1,280 pixels, without a scroll bar of its own (the
    # route-importance table was 1,649 pixels wide, the fairness comparison 1,372)
    d = headless_chromium("1280,900")
    from selenium.webdriver.common.by import By

    try:
        for section, page in study_pages.items():
            d.get(page.resolve().as_uri())
            inner = d.execute_script("return window.innerWidth")
            assert d.execute_script("return document.documentElement.scrollWidth") <= inner
            el = d.find_element(By.ID, section)
            for box in el.find_elements(By.CSS_SELECTOR, "div.wide"):
                scroll, width = d.execute_script(
                    "return [arguments[0].scrollWidth, arguments[0].clientWidth]", box)
                assert scroll <= width <= inner, (section, scroll, width)
            shot = tmp_path / f"{section}.png"
            el.screenshot(str(shot))
            assert shot.stat().st_size > 1000
    finally:
        d.quit()
