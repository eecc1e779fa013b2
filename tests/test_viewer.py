"""The game viewer: one self-contained HTML page, checked in a real headless browser.

The browser tests need Debian's ``chromium`` and ``chromium-driver`` packages and the
``selenium`` package (in the ``test`` extra); ``.ci/run`` installs the Debian packages, and
in CI (``CI`` set) a missing browser fails instead of skipping.
"""
import json
import os
import re
import shutil
from pathlib import Path

import pytest

import ttrsim
from ttrsim.cli import main
from ttrsim.policies import SEARCH_ROLLOUT
from ttrsim.record import record_game
from ttrsim.search import flag_meaning
from ttrsim.viewer import render_html, write_html

HERE = Path(__file__).parent


def first_legal(observation, legal_actions):
    return legal_actions[0]


# --- the page without a browser ------------------------------------------------------

def test_page_is_self_contained_and_carries_the_game():
    rec = record_game("europe", ["tickets", "random"], seed=3)
    text = render_html(rec.view_data())
    assert "<script src" not in text and "<link" not in text and "@import" not in text
    # the only address in the page is the SVG namespace name, which is never fetched
    assert set(re.findall(r"https?://[^\s\"'`]+", text)) == {"http://www.w3.org/2000/svg"}
    blob = re.search(r'<script id="game-data" type="application/json">(.*?)</script>', text, re.S)
    data = json.loads(blob.group(1))
    assert len(data["positions"]) == len(rec.actions) + 1
    assert data["final"] == list(rec.final.total)


def test_viewer_refuses_bad_data(tmp_path):
    with pytest.raises(ValueError, match="keys"):
        render_html({"title": "x"})
    with pytest.raises(ValueError, match="directory"):
        write_html(record_game("newyork", 2, seed=1).view_data(), tmp_path)


def test_a_script_end_tag_in_a_name_does_not_break_the_page():
    data = record_game("newyork", 2, seed=1).view_data()
    data["players"][0]["policy"] = "</script><b>x"
    text = render_html(data)
    assert text.count("</script>") == 2


def test_cli_show_writes_a_page_for_a_new_game_and_for_a_saved_one(tmp_path, capsys):
    out = tmp_path / "g.html"
    assert main(["show", "--board", "usa", "--players", "3", "--seed", "4", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert out.exists()
    # the game shown is game 0 of the run simulate plays with the same options
    g = ttrsim.simulate("usa", 3, games=1, seed=4).games
    want = ", ".join(f"seat {q} (tickets) {int(g.score[q])}" for q in range(3))
    assert f"final scores {want}" in printed
    ttrsim.simulate("newyork", 2, games=5, seed=1, out=tmp_path / "run")
    assert main(["show", str(tmp_path / "run"), "--game", "2", "--out", str(out)]) == 0
    assert main(["show", str(tmp_path / "run"), "--out", str(out)]) == 2
    assert "--game N" in capsys.readouterr().err
    assert main(["show", str(tmp_path / "run"), "--game", "2", "--board", "usa"]) == 2
    assert main(["show", "--game", "2"]) == 2
    assert main(["show", str(tmp_path / "run"), "--game", "2", "--analyse", "7",
                 "--out", str(out)]) == 2


# --- the page in a browser ---------------------------------------------------------------

def _browser():
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver") or (
        "/usr/bin/chromedriver" if os.path.exists("/usr/bin/chromedriver") else None)
    try:
        import selenium  # noqa: F401
    except ImportError:
        selenium_ok = False
    else:
        selenium_ok = True
    missing = [name for name, ok in (("chromium", chromium), ("chromium-driver", driver),
                                     ("selenium (pip)", selenium_ok)) if not ok]
    return chromium, driver, missing


def need_browser():
    """The browser and its driver, or skip naming the packages to install (fail in CI,
    which must run these tests)."""
    chromium, driver, missing = _browser()
    if missing:
        why = (f"the browser tests need {', '.join(missing)}: apt-get install chromium "
               "chromium-driver, pip install selenium")
        if os.environ.get("CI"):
            pytest.fail(why + " (CI must run them: .ci/run installs the packages)")
        pytest.skip(why)
    return chromium, driver


def test_missing_browser_skips_outside_ci_and_fails_in_ci(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    monkeypatch.setattr(os.path, "exists", lambda path: False)
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="chromium, chromium-driver"):
        need_browser()
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI must run them"):
        need_browser()


def headless_chromium(size: str = "1400,1000"):
    """A headless Chromium driven by selenium, its window ``size`` ("width,height")."""
    chromium, driver = need_browser()
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    opts = Options()
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                f"--window-size={size}"):
        opts.add_argument(arg)
    opts.binary_location = chromium
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(driver), options=opts)


@pytest.fixture(scope="module")
def browser():
    d = headless_chromium()
    yield d
    d.quit()


def _open(browser, path, fragment=""):
    browser.get_log("browser")       # drop earlier pages' messages
    browser.get(Path(path).resolve().as_uri() + fragment)


def _errors(browser):
    return [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]


SEAT_COLOURS = ["#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd"]


def _owned(browser):
    """The seat each route is drawn in (from the stroke of its claim line), "-1" if open."""
    strokes = browser.execute_script(
        "return Array.from(document.querySelectorAll('[data-route] line.owned'))"
        ".map(l => l.getAttribute('stroke'))")
    return [str(SEAT_COLOURS.index(c)) if c in SEAT_COLOURS else "-1" for c in strokes]


def _text(browser, css):
    from selenium.webdriver.common.by import By

    return browser.find_element(By.CSS_SELECTOR, css).text


@pytest.fixture(scope="module")
def europe_game(tmp_path_factory):
    run = ttrsim.simulate("europe", ["tickets", "greedy", first_legal, "random"], games=3, seed=21)
    path = tmp_path_factory.mktemp("viewer") / "europe.html"
    rec = run.game(1)
    rec.html(path)
    return run, rec, path


def test_end_of_game_shows_the_runs_final_scores(browser, europe_game, tmp_path_factory):
    from selenium.webdriver.common.by import By

    run, rec, path = europe_game
    _open(browser, path, "#turn=end")
    assert _errors(browser) == []
    want = run.games[run.games.game == 1].sort_values("seat").score.tolist()
    got = [int(browser.find_element(By.ID, f"final-{q}").text) for q in range(4)]
    assert got == want
    owners = _owned(browser)
    final = rec.at("end").state()["route_owner"]
    assert [int(o) for o in owners] == final
    shots = Path(os.environ.get("TTRSIM_SCREENSHOTS", tmp_path_factory.mktemp("screens")))
    shots.mkdir(parents=True, exist_ok=True)
    browser.get(path.resolve().as_uri() + "#turn=40")
    browser.save_screenshot(str(shots / "viewer-europe-turn40.png"))
    assert (shots / "viewer-europe-turn40.png").stat().st_size > 10_000
    print(f"screenshot: {shots / 'viewer-europe-turn40.png'}")


def test_stepping_changes_the_map_and_the_link(browser, europe_game):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    run, rec, path = europe_game
    _open(browser, path, "#turn=0")
    assert set(_owned(browser)) == {"-1"}
    m = rec.moves
    first_claim = int(m[(m.kind == "claim") & m.extra.isna()].decision.iloc[0]) + 1
    body = browser.find_element(By.TAG_NAME, "body")
    for _ in range(first_claim):
        body.send_keys(Keys.ARROW_RIGHT)
    owners = _owned(browser)
    assert sum(o != "-1" for o in owners) == 1
    assert [int(o) for o in owners] == rec.at(decision=first_claim).state()["route_owner"]
    body.send_keys(Keys.ARROW_LEFT)
    assert set(_owned(browser)) == {"-1"}
    browser.find_element(By.ID, "last").click()
    assert browser.execute_script("return location.hash") == "#turn=end"
    browser.find_element(By.ID, "prev").click()
    assert "decision" in browser.execute_script("return location.hash")
    # a link to a turn shows the position at its start
    browser.execute_script("location.hash = '#turn=30'")
    assert _text(browser, "#where").startswith("turn 30 ")
    assert [int(o) for o in _owned(browser)] == rec.at(30).state()["route_owner"]
    assert _errors(browser) == []


def test_hidden_information_only_behind_the_toggle(browser, europe_game):
    from selenium.webdriver.common.by import By

    run, rec, path = europe_game
    _open(browser, path, "#turn=20")
    g = rec.at(20)
    held = [rec.board.ticket_name(t) for t in g.state()["players"][0]["tickets"]]
    seats = _text(browser, "#seats")
    assert "(hidden)" in seats and not any(name in seats for name in held)
    blind = rec.moves[rec.moves.kind == "draw_blind"].iloc[0]
    row = _text(browser, f"#m{int(blind.decision)}")
    assert row.endswith("draw blind")
    keep = rec.moves[rec.moves.kind == "keep"].iloc[1]
    kept = keep.tickets.split("; ")
    assert not any(t in _text(browser, f"#m{int(keep.decision)}") for t in kept)
    browser.find_element(By.ID, "reveal").click()
    seats = _text(browser, "#seats")
    assert all(name in seats for name in held)
    assert _text(browser, f"#m{int(blind.decision)}").endswith(blind.drawn)
    assert all(t in _text(browser, f"#m{int(keep.decision)}") for t in kept)
    browser.find_element(By.ID, "reveal").click()
    assert _errors(browser) == []


@pytest.mark.parametrize("board", ["usa", "newyork", "variant", "custom"])
def test_other_boards_open_without_errors(browser, board, tmp_path):
    if board == "variant":
        b = ttrsim.variant("europe", trains=30, remove_routes=["Rostov - Sochi"])
    elif board == "custom":
        from ttrsim.maps import board_to_dict

        d = board_to_dict(ttrsim.variant("usa", trains=30))
        d["name"] = "my_board"
        (tmp_path / "my_board.json").write_text(json.dumps(d))
        b = ttrsim.maps.load(str(tmp_path / "my_board.json"))
    else:
        b = board
    rec = record_game(b, ["tickets", "random"], seed=5)
    path = rec.html(tmp_path / "g.html")
    _open(browser, path, "#turn=end")
    assert _errors(browser) == []
    assert _text(browser, "#final-0") == str(int(rec.final.total[0]))
    n = len(rec.board.cities)
    assert browser.execute_script("return document.querySelectorAll('.city').length") == n


def test_analysis_table_and_flags(browser, tmp_path):
    # seat 0 plays random: some of its moves are not among the search's candidates
    rec = record_game("newyork", ["random", "tickets"], seed=8)
    data = rec.view_data(analyse=0, playouts=20)
    path = write_html(data, tmp_path / "a.html")
    decisions = data["analysis"]["decisions"]
    # keyed by decision, numbered from 0 as GameRecord.moves
    assert decisions and all(rec.seats[int(k)] == 0 for k in decisions)
    # every decision of seat 0 with a choice is there, and only those
    with_choice = [k for k in range(len(rec.actions)) if rec.seats[k] == 0
                   and len(rec.at(decision=k).legal_action_codes()) > 1]
    assert sorted(int(k) for k in decisions) == with_choice
    measured = next(k for k, a in decisions.items() if a["measured"])
    unmeasured = next(k for k, a in decisions.items() if not a["measured"])
    for k in (measured, unmeasured):
        a = decisions[k]
        assert a["played"] == int(rec.actions[int(k)])
        assert a["played"] == rec.moves.code[int(k)]
        assert sum(r["played"] for r in a["rows"]) == int(a["measured"])
        _open(browser, path, f"#decision={k}")
        table = _text(browser, "#analysis")
        assert "win rate" in table and a["rows"][0]["action"] in table
        played = browser.execute_script(
            "return Array.from(document.querySelectorAll('#analysis tr.played')).length")
        assert played == int(a["measured"])
        assert ("not among the candidates" in table) == (not a["measured"])
    flags = [x for x, v in decisions.items() if v["flag"]]
    shown = browser.execute_script("return document.querySelectorAll('#movelist .flag').length")
    assert shown == len(flags)
    _open(browser, path, "#turn=0")          # the start, no decision: the legend
    assert "20 playouts per candidate, played on by expert" in _text(browser, "#analysis")
    assert _errors(browser) == []


def test_the_analysis_names_its_rollout_and_plays_it(tmp_path, capsys):
    """The viewer's analysis plays the positions on with the search's rollout (`expert:model=v4`)
    unless told otherwise, and says which; `--rollout` reaches it from the shell."""
    rec = record_game("newyork", ["tickets", "tickets"], seed=3)
    default = rec.view_data(analyse=1, playouts=12)["analysis"]
    expert = rec.view_data(analyse=1, playouts=12, rollout="expert:model=v4")["analysis"]
    tickets = rec.view_data(analyse=1, playouts=12, rollout="tickets")["analysis"]
    assert (default["rollout"], tickets["rollout"]) == ("expert:model=v4", "tickets")
    assert default["decisions"] == expert["decisions"] != tickets["decisions"]
    out = tmp_path / "g.html"
    assert main(["show", "--board", "newyork", "--players", "2", "--analyse", "0",
                 "--playouts", "2", "--rollout", "nope", "--quiet", "--out", str(out)]) == 2
    assert "unknown rollout policy 'nope'" in capsys.readouterr().err and not out.exists()
    assert main(["show", "--board", "newyork", "--players", "2", "--analyse", "0",
                 "--playouts", "2", "--rollout", "greedy", "--quiet", "--out", str(out)]) == 0
    page = out.read_text()
    assert '"rollout": "greedy"' in page or '"rollout":"greedy"' in page


def test_ctrl_c_stops_show_analyse_with_one_line(tmp_path):
    import signal
    import subprocess
    import sys

    out = tmp_path / "g.html"
    env = dict(os.environ, PYTHONPATH=str(HERE.parent) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.Popen([sys.executable, "-m", "ttrsim", "show", "--board", "europe",
                          "--players", "2", "--analyse", "0", "--playouts", "2000",
                          "--out", str(out)], stderr=subprocess.PIPE, text=True, env=env)
    seen = ""
    while "analysing seat 0" not in seen:     # the analysis has started
        ch = p.stderr.read(1)
        assert ch, f"ended before the analysis started: {seen}"
        seen += ch
    p.send_signal(signal.SIGINT)
    rest = p.stderr.read()
    assert p.wait(timeout=120) == 130, rest       # interrupted, as a shell counts it
    last = [line for line in rest.replace("\r", "\n").splitlines() if line.strip()][-1]
    assert last == "ttrsim show: error: interrupted", rest
    assert "Traceback" not in rest and not out.exists()


# --- numbering, axes, final points --------------------------------------------------------

def test_decisions_are_numbered_as_gamerecord_moves(browser, europe_game):
    """The page counts decisions from 0 as ``rec.moves`` does: the move list, the line
    above the seats and the #decision= link all name the same decision."""
    from selenium.webdriver.common.by import By

    run, rec, path = europe_game
    m = rec.moves
    k = int(m[m.kind == "claim"].decision.iloc[2])
    _open(browser, path, f"#decision={k}")
    assert _text(browser, "#move").startswith(f"After decision {k} ")
    turn = rec.positions()[k + 1]["turn"]          # the turn after decision k
    assert _text(browser, "#where") == f"turn {turn} \u00b7 after decision {k} of 0\u2013{len(m) - 1}"
    assert m.public_action[k] in _text(browser, "#move")
    assert _text(browser, f"#m{k}").split()[0] == str(k)
    assert "here" in browser.find_element(By.ID, f"m{k}").get_attribute("class")
    # the position after decision k is the game after k + 1 decisions
    assert [int(o) for o in _owned(browser)] == rec.at(decision=k + 1).state()["route_owner"]
    # clicking a move puts its number in the address (a first card drawn: the turn goes on)
    d = int(m[m.phase == "second_draw"].decision.iloc[0]) - 1
    browser.execute_script(f"document.getElementById('m{d}').click()")
    assert browser.execute_script("return location.hash") == f"#turn={m.turn[d]}&decision={d}"
    assert _text(browser, "#move").startswith(f"After decision {d} ")
    _open(browser, path, "#decision=0")
    assert _text(browser, "#move").startswith("After decision 0 ")
    assert m.public_action[0] in _text(browser, "#move")
    n = len(m)
    assert f"of 0\u2013{n - 1}" in _text(browser, "#move")
    assert _errors(browser) == []


def test_the_score_chart_has_labelled_axes(browser, europe_game):
    run, rec, path = europe_game
    _open(browser, path, "#turn=end")
    ticks = browser.execute_script(
        "const t = s => Array.from(document.querySelectorAll(s)).map(e => e.textContent);"
        "return [t('#chart .x-axis text.tick'), t('#chart .y-axis text.tick'),"
        "        t('#chart text.title')]")
    xs, ys, titles = [[int(v) for v in ticks[0]], [int(v) for v in ticks[1]], ticks[2]]
    assert titles == ["decisions played", "route points"]
    assert xs[0] == 0 and xs == sorted(xs) and len(xs) >= 3 and xs[-1] <= len(rec.actions)
    assert len(rec.actions) - xs[-1] < xs[1] - xs[0]     # the ticks reach the end
    top = max(int(rec.final.total.max()), int(rec.moves.score.max()))
    low = min(0, int(rec.final.total.min()))
    assert 0 in ys and ys == sorted(ys) and ys[-1] <= top < ys[-1] + (ys[1] - ys[0])
    assert ys[0] <= low < ys[0] + (ys[1] - ys[0])   # a negative final total is on the chart
    # the ticks sit where the lines are drawn: tick v of the y axis at the height of v
    y_of = browser.execute_script(
        "return Array.from(document.querySelectorAll('#chart .y-axis text.tick'))"
        ".map(e => parseFloat(e.getAttribute('y')))")
    step = [b - a for a, b in zip(y_of, y_of[1:])]
    assert all(abs(d - step[0]) < 1e-6 for d in step) and step[0] < 0
    assert _errors(browser) == []


@pytest.mark.parametrize("board", ["newyork", "europe", "usa"])
def test_final_points_are_broken_down_on_every_board(browser, board, tmp_path):
    rec = record_game(board, ["tickets", "random"], seed=6)
    path = rec.html(tmp_path / "g.html")
    _open(browser, path, "#turn=end")
    fin = rec.final
    for q in range(2):
        text = _text(browser, f"#breakdown-{q}").replace("\u2212", "-")
        assert text.startswith("= ")
        parts = re.findall(r"([+-]?)\s*(\d+) ([a-z]+)", text[2:])
        total = sum((-1 if sign == "-" else 1) * int(v) for sign, v, _ in parts)
        assert total == int(fin.total[q]) == int(_text(browser, f"#final-{q}"))
        names = {name for _, _, name in parts}
        assert "routes" in names and "other" not in names
        if board == "newyork":
            assert "attractions" in names and "longest" not in names
        if board == "europe":
            assert "stations" in names
    assert _errors(browser) == []


def test_show_tells_a_shell_user_how_to_give_the_policies_again(tmp_path, capsys):
    """A saved run with a Python policy cannot be rebuilt from its name: the command says
    how to give it with --policy, not in Python's words."""
    ttrsim.simulate("newyork", [first_legal, "tickets"], games=2, seed=1, out=tmp_path / "run")
    out = tmp_path / "g.html"
    assert main(["show", str(tmp_path / "run"), "--game", "1", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "policies=[" not in err
    assert f"ttrsim show {tmp_path / 'run'} --game 1 --policy SPEC" in err
    assert "2 times in seat order" in err and "file.py:function" in err
    assert main(["show", str(tmp_path / "run"), "--game", "1", "--policy", "tickets",
                 "--policy", "tickets", "--policy", "tickets", "--out", str(out)]) == 2
    assert "give --policy 1, 2 times for 2 players" in capsys.readouterr().err
    # policies that do not play as the run's did: the same words
    assert main(["show", str(tmp_path / "run"), "--game", "1", "--policy", "random",
                 "--policy", "tickets", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "policies=[" not in err and "--policy SPEC" in err and not out.exists()
    # in Python, the Python words
    with pytest.raises(ValueError, match=r"policies=\[\.\.\.\]"):
        ttrsim.load_run(tmp_path / "run").game(1)


def test_show_says_how_many_moves_it_flagged(tmp_path, capsys):
    """`ttrsim show --analyse SEAT` prints the flagged moves' count of the page it wrote:
    the same analysis (decisions, flags) as view_data's with the same settings."""
    ttrsim.simulate("newyork", ["random", "tickets"], games=1, seed=3, out=tmp_path / "run")
    out = tmp_path / "g.html"
    assert main(["show", str(tmp_path / "run"), "--game", "0", "--analyse", "0",
                 "--playouts", "16", "--quiet", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    a = ttrsim.load_run(tmp_path / "run").game(0).view_data(analyse=0, playouts=16)["analysis"]
    flagged = sum(d["flag"] for d in a["decisions"].values())
    assert flagged > 0                              # random's moves: some are found out
    assert (f"seat 0: {len(a['decisions'])} decisions analysed (16 playouts a candidate, "
            f"rollout {a['rollout']}), {flagged} move{'' if flagged == 1 else 's'} flagged "
            f"(false discovery rate {a['level']:g}). {a['meaning']}" in printed), printed
    assert a["rollout"] == SEARCH_ROLLOUT and a["meaning"] == flag_meaning(a["rollout"])
    assert out.exists()


def test_analyse_of_a_saved_game_compares_with_the_move_played(tmp_path, capsys):
    ttrsim.simulate("newyork", ["random", "tickets"], games=1, seed=3, out=tmp_path / "run")
    assert main(["analyse", str(tmp_path / "run"), "--game", "0", "--turn", "2",
                 "--playouts", "10"]) == 0
    out = capsys.readouterr().out
    rec = ttrsim.load_run(tmp_path / "run").game(0)
    k = int(rec.moves.index[rec.moves.turn >= 2][0])
    assert f"decision {k} played" in out
    assert ("flagged" in out) and ("p that another move is better" in out
                                   or "did not analyse" in out)


def test_the_analysis_says_why_a_decision_is_or_is_not_flagged(browser, tmp_path):
    """Hand-made analyses of three decisions: a flagged one names the evidence, a tie
    whose move played is listed second is not flagged and says tied, and a higher
    estimate within noise says so."""
    rec = record_game("newyork", ["tickets", "tickets"], seed=2)
    data = rec.view_data()
    ks = [k for k in range(len(rec.actions)) if rec.seats[k] == 0][:3]

    def row(action, code, win, vs, p, played, tied=False):
        return {"action": action, "code": code, "win": win, "low": win - 0.1,
                "high": win + 0.1, "margin": 1.0, "vs_played": vs, "p": p,
                "tied": tied, "played": played}

    data["analysis"] = {"seat": 0, "playouts": 50, "rollout": "expert", "level": 0.05,
                        "decisions": {
        str(ks[0]): {"rows": [row("draw blind", 1, 0.8, 0.5, 1e-5, False),
                              row("move A", 2, 0.3, 0.0, None, True)],
                     "best": 1, "played": 2, "measured": True, "p": 1e-5, "q": 2e-5,
                     "flag": True},
        str(ks[1]): {"rows": [row("green card", 3, 0.5, 0.0, 1.0, False, True),
                              row("blind card", 4, 0.5, 0.0, None, True, True)],
                     "best": 3, "played": 4, "measured": True, "p": 1.0, "q": 1.0,
                     "flag": False},
        str(ks[2]): {"rows": [row("move C", 5, 0.55, 0.04, 0.2, False),
                              row("move D", 6, 0.51, 0.0, None, True)],
                     "best": 5, "played": 6, "measured": True, "p": 0.2, "q": 0.4,
                     "flag": False}}}
    path = write_html(data, tmp_path / "a.html")
    _open(browser, path, f"#decision={ks[0]}")
    text = _text(browser, "#verdict")
    assert text.startswith(f"Decision {ks[0]}: ")
    assert f"{data['analysis']['rollout']} wins more often from another move" in text
    assert "(q < 0.001; flagged at q \u2264 0.05)" in text
    assert "+50.0" in _text(browser, "#analysis")
    _open(browser, path, f"#decision={ks[1]}")
    text = _text(browser, "#verdict")
    assert "tied for the highest win rate with 1 other move" in text
    assert "better" not in text and "(highest, tied)" in _text(browser, "#analysis")
    _open(browser, path, f"#decision={ks[2]}")
    text = _text(browser, "#verdict")
    assert "not flagged" in text and "move C" in text and "4.0 percentage points" in text
    assert "within noise" in text and "q = 0.400" in text
    flags = browser.execute_script(
        "return Array.from(document.querySelectorAll('#movelist .flag'))"
        ".map(e => e.closest('tr').id)")
    assert flags == [f"m{ks[0]}"]
    assert _errors(browser) == []


def test_a_negative_final_score_stays_on_the_chart(browser, tmp_path):
    rec = record_game("europe", ["tickets", "random"], seed=8)
    assert int(rec.final.total[1]) < 0                   # random failed its tickets
    path = rec.html(tmp_path / "g.html")
    _open(browser, path, "#turn=end")
    dots = browser.execute_script(
        "return Array.from(document.querySelectorAll('#chart circle'))"
        ".map(c => parseFloat(c.getAttribute('cy')))")
    zero = browser.execute_script(
        "const t = Array.from(document.querySelectorAll('#chart .y-axis text.tick'))"
        ".find(e => e.textContent === '0'); return parseFloat(t.getAttribute('y')) - 2")
    assert len(dots) == 2 and all(10 <= y <= 110 for y in dots)
    assert dots[1] > zero                                 # below the 0 line, above the axis
    assert _errors(browser) == []


# ------------------------------------------------------------------ what a flag says

@pytest.fixture(scope="module")
def tickets_analysis():
    """A random seat's game analysed with `tickets` rollouts (the spec given with spaces
    round it: the data names the spec the analysis used)."""
    rec = record_game("newyork", ["random", "tickets"], seed=3)
    return rec, rec.view_data(analyse=0, playouts=4, rollout=" tickets ")


def test_the_data_says_what_a_flag_means_naming_the_rollout_used(tickets_analysis):
    _, data = tickets_analysis
    a = data["analysis"]
    assert a["rollout"] == "tickets"
    meaning = a["meaning"]
    assert meaning == flag_meaning(a["rollout"])
    assert f"rollout policy, {a['rollout']}, playing every seat on" in meaning
    assert "wins more often from another move than from the one played" in meaning
    assert "A decided game shows no flags" in meaning and "not praise" in meaning


def test_a_decided_game_flags_no_move_of_the_seat_that_loses():
    """What the meaning warns of: seat 0's last turn, 45 points behind, every move loses;
    its worst move (drawing a card) is not flagged, since no move wins more often."""
    g = ttrsim.Game.from_position("usa", 2, routes=[[], [14, 39, 43]],    # three 6-routes
                                  hands=[{"red": 2}, {"blue": 2}], trains=[30, 4], current=1)
    g.apply(g.action("claim", route=59, color=g.board.colors.index("blue")))
    assert g.state()["last_round"] and g.current_player == 0
    df = ttrsim.analyse(g, playouts=8, seed=1, rollout="tickets",
                        played=g.action("draw_blind").code)
    assert len(df) > 3 and (df["win_rate"] == 0).all() and not df.attrs["flag"]


def test_the_page_says_what_a_flag_means(browser, tickets_analysis, tmp_path):
    rec, data = tickets_analysis
    data = json.loads(json.dumps(data))
    a = data["analysis"]
    k = next(key for key, d in a["decisions"].items() if d["measured"])
    a["decisions"][k]["flag"] = True           # one flagged move, whatever the playouts said
    path = write_html(data, tmp_path / "a.html")
    _open(browser, path, "#turn=0")            # no decision shown: the legend
    assert a["meaning"] in _text(browser, "#analysis")
    _open(browser, path, f"#decision={k}")
    assert f"{a['rollout']} wins more often from another move" in _text(browser, "#verdict")
    assert a["meaning"] in _text(browser, "#analysis")
    title = browser.execute_script(
        "return document.querySelector('#movelist .flag').getAttribute('title')")
    assert title.startswith(f"{a['rollout']} wins more often from another move")
    assert _errors(browser) == []


_LABEL_CLASH_JS = """
const texts = [...document.querySelectorAll('.names text')];
const boxes = texts.map(t => t.getBBox());
const circles = [...document.querySelectorAll('.city circle')].map(c =>
  [+c.getAttribute('cx'), +c.getAttribute('cy'), +c.getAttribute('r')]);
const meet = (a, b) => a.x < b.x + b.width && b.x < a.x + a.width &&
                       a.y < b.y + b.height && b.y < a.y + a.height;
let names = 0, cities = 0, routes = 0;
boxes.forEach((a, i) => {
  boxes.forEach((b, j) => { if (j > i && meet(a, b)) names++; });
  circles.forEach((c, j) => { if (j !== i && meet(a, {x: c[0] - c[2], y: c[1] - c[2],
                                                  width: 2 * c[2], height: 2 * c[2]})) cities++; });
});
const lines = [...document.querySelectorAll('[data-route] line:first-of-type')];
const cuts = (b, l) => {
  const x1 = +l.getAttribute('x1'), y1 = +l.getAttribute('y1'), x2 = +l.getAttribute('x2'),
        y2 = +l.getAttribute('y2');
  let t0 = 0, t1 = 1; const dx = x2 - x1, dy = y2 - y1;
  for (const [p, q] of [[-dx, x1 - b.x], [dx, b.x + b.width - x1], [-dy, y1 - b.y],
                        [dy, b.y + b.height - y1]]) {
    if (p === 0) { if (q < 0) return false; continue; }
    const t = q / p;
    if (p < 0) { if (t > t1) return false; if (t > t0) t0 = t; }
    else { if (t < t0) return false; if (t < t1) t1 = t; }
  }
  return true;
};
const near = (l, e, c) => Math.hypot(+l.getAttribute('x' + e) - c[0], +l.getAttribute('y' + e) - c[1]) < 1.2;
let own = 0;         // a name crossing one of its own city's routes, near the city
boxes.forEach((b, i) => lines.forEach(l => {
  if (!cuts(b, l)) return;
  if (near(l, 1, circles[i]) || near(l, 2, circles[i])) own++; else routes++;
}));
return [names, cities, routes, own, boxes.length];
"""


@pytest.mark.parametrize("board", ["usa", "usa-mega", "europe", "newyork", "usa-1910"])
def test_city_names_are_placed_clear_of_each_other_and_of_the_cities(browser, board, tmp_path):
    """The names are placed around their cities: none overlaps another name or covers
    another city, and few cross another city's route (measured on the drawn boxes, not on
    the estimates the placement uses). With every name right above its city, as before the
    placement, Europe had 4 names over names, 6 over cities and 25 over other cities'
    routes (USA 2, 0, 5; New York 0, 0, 3)."""
    path = tmp_path / f"{board}.html"
    ttrsim.simulate(board, ["random", "random"], games=1, seed=1).game(0).html(path)
    _open(browser, path)
    names, cities, routes, own, n = browser.execute_script(_LABEL_CLASH_JS)
    assert (names, cities) == (0, 0)
    assert routes <= max(2, n // 10), (routes, own, n)
