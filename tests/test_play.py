"""``ttrsim play``: a person plays one seat against ttrsim policies in the browser.

The protocol is tested through Starlette's TestClient (refused moves, the token, the
information set sent); whole games are played by a scripted person clicking the page's
own controls in headless Chromium, served by a real uvicorn server in a thread (the
browser tests need what tests/test_viewer.py needs, and skip or fail as it does). Every
saved game is replayed through ``Game`` from its deal and its decisions to the same
final scores, and read back by ``show``, ``profile`` and ``report``.
"""
from __future__ import annotations

import copy
import json
import os
import re
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ttrsim import Game
from ttrsim.batches import game_seeds
from ttrsim.cli import main
from ttrsim.play import PlaySession, default_out
from ttrsim.play.session import IN_PROGRESS, MoveRefused
from ttrsim.play.view import log_entry
from ttrsim.results import load_run

HERE = Path(__file__).parent
ROOT = HERE.parent
pytestmark = pytest.mark.filterwarnings(
    "ignore:Using `httpx` with `starlette.testclient` is deprecated")


def client(session, token="secret"):
    from starlette.testclient import TestClient

    from ttrsim.play.server import create_app

    return TestClient(create_app(session, token), base_url="http://127.0.0.1")


AUTH = {"X-Ttrsim-Token": "secret"}


def play_to_end(s: PlaySession, choose=lambda m: m["legal"][0]["code"], stop=None) -> dict:
    """Play the session's game to its end (or until ``stop(message)``): the person picks
    ``choose(message)``, the policies move through ``advance``."""
    m = s.state()
    while not m["over"] and not (stop and stop(m)):
        if m["current"] == m["seat"]:
            m = s.move(m["decision"], choose(m))
        else:
            m = s.advance(m["decision"])
    return m


def replay_through_game(run_dir, game: int) -> list:
    """Final totals of game ``game`` of a saved run, played again through ``Game`` from
    its deal seed and its recorded decisions (no policy involved)."""
    run = load_run(run_dir)
    from ttrsim.batches import config_from_manifest

    cfg = config_from_manifest(run.manifest, run.board)
    seed = int(game_seeds(cfg.key, 1, game)[0])
    dec = pd.read_parquet(Path(run_dir) / "decisions" / f"part-{game:06d}.parquet")
    g = Game(run.board, run.manifest["players"], seed=seed)
    for code in dec.sort_values("decision")["code"]:
        g.apply(int(code))
    assert g.is_over()
    return [s["total"] for s in g.scores()]


# --- the session and its run --------------------------------------------------------------

def test_a_finished_game_is_a_run_that_replays_through_game(tmp_path):
    s = PlaySession("newyork", 2, ["expert"], out=tmp_path / "run", seat=1, seed=5, name="ann")
    end = play_to_end(s)
    final = end["final"]
    # the person's tickets as scored, and the tables' count of them
    assert [t["done"] for t in end["tickets"]].count(True) == final["seats"][1]["tickets_completed"]
    run = load_run(tmp_path / "run")
    assert run.manifest["people"] == [1] and run.manifest["policies"] == ["expert", "ann"]
    assert run.manifest["games"] == 1 and not run.manifest.get("kind")
    totals = [row["total"] for row in final["seats"]]
    assert run.games.sort_values("seat")["score"].tolist() == totals
    assert replay_through_game(tmp_path / "run", 0) == totals
    rec = run.game(0)                          # replayed from the recorded decisions
    assert rec.final["total"].tolist() == totals and list(rec.policies) == ["expert", "ann"]
    assert list(rec.games["policy"]) == ["expert", "ann"]
    # the opponent played as the batch loop plays it: the person's decisions on a tape,
    # expert in its seat, the same game
    from ttrsim.record import record_game, recorded_policies

    mine = rec.seats == 1
    tape = recorded_policies(rec.actions[mine], rec.seats[mine], 2)
    again = record_game("newyork", ["expert", tape[1]], rec.seed)
    assert (again.actions == rec.actions).all()


def test_the_next_game_is_added_to_the_same_run(tmp_path):
    s = PlaySession("newyork", 2, "tickets", out=tmp_path / "run", seed=2)
    m = play_to_end(s)
    with pytest.raises(MoveRefused, match="stale"):
        s.next_game(m["game"] + 1)
    m = s.next_game(m["game"])
    assert (m["game"], m["decision"], m["log"]) == (1, 0, [])
    play_to_end(s)
    run = load_run(tmp_path / "run")
    assert run.manifest["games"] == 2 and sorted(run.games["game"].unique()) == [0, 1]
    assert [replay_through_game(tmp_path / "run", g) for g in (0, 1)] == [
        run.games[run.games.game == g].sort_values("seat")["score"].tolist() for g in (0, 1)]
    assert run.game(1).seed != run.game(0).seed            # another deal


def test_resume_goes_on_as_the_game_would_have(tmp_path):
    """A session stopped mid-game and opened again (the same command) shows the same
    position, and the policies go on as they would have: the same person's moves give
    the same game as one played without a stop."""
    def person(m):        # not always the first move: a draw, a claim, tickets...
        codes = [a["code"] for a in m["legal"]]
        return codes[(m["decision"] * 7) % len(codes)]

    whole = PlaySession("europe", 3, ["expert", "tickets"], out=tmp_path / "a", seed=9)
    play_to_end(whole, person)
    cut = PlaySession("europe", 3, ["expert", "tickets"], out=tmp_path / "b", seed=9)
    before = play_to_end(cut, person, stop=lambda m: m["decision"] >= 60)
    saved = json.loads((tmp_path / "b" / IN_PROGRESS).read_text())
    assert len(saved["decisions"]) == before["decision"] >= 60
    cut.close()
    again = PlaySession("europe", 3, ["expert", "tickets"], out=tmp_path / "b")   # seed: saved
    assert again.state() == before
    play_to_end(again, person)
    a, b = load_run(tmp_path / "a"), load_run(tmp_path / "b")
    assert list(a.game(0).actions) == list(b.game(0).actions)
    assert a.games.equals(b.games)


def test_a_mismatched_command_is_refused(tmp_path, capsys):
    out = tmp_path / "run"
    s = PlaySession("newyork", 2, ["expert"], out=out, seed=3)
    s.move(0, s.state()["legal"][0]["code"])
    s.close()
    for kwargs, word in [(dict(opponents=["tickets"]), "policies"), (dict(seat=1), "policies"),
                         (dict(name="bob"), "policies"), (dict(seed=4), "seed"),
                         (dict(board="usa"), "board")]:
        args = dict(board="newyork", players=2, opponents=["expert"], out=out) | kwargs
        with pytest.raises(ValueError, match=f"holds a different run of people's games.*{word}"):
            PlaySession(**args)
    assert json.loads((out / IN_PROGRESS).read_text())["decisions"]      # untouched
    assert main(["play", "--board", "newyork", "--players", "2", "--opponent", "tickets",
                 "--out", str(out), "--no-browser"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("ttrsim play: error:") and "policies" in err and "\n" not in err
    # a simulate run is not a run of people's games, and the reverse
    import ttrsim

    ttrsim.simulate("newyork", 2, games=3, seed=1, out=tmp_path / "sim")
    with pytest.raises(ValueError, match="holds a simulate run, not people's games"):
        PlaySession("newyork", 2, out=tmp_path / "sim")
    s = PlaySession("newyork", 2, ["expert"], out=out)
    play_to_end(s)
    assert main(["simulate", "--board", "newyork", "--players", "2", "--games", "5",
                 "--out", str(out), "--quiet"]) == 2
    assert "holds people's games (ttrsim play), not a simulate run" in capsys.readouterr().err


@pytest.mark.parametrize("kwargs,match", [
    (dict(players=6), "allows 2 to 4 players"),
    (dict(seat=2), "seat"),
    (dict(opponents=["expert", "tickets", "random"]), "once .* or 1 times"),
    (dict(opponents=["nope"]), "unknown policy 'nope'"),
    (dict(name="expert"), "name of a policy"),
    (dict(name="two words"), "letters, digits"),
])
def test_bad_options_are_refused(tmp_path, kwargs, match):
    with pytest.raises(ValueError, match=match):
        PlaySession(**(dict(board="newyork", players=2, out=tmp_path / "run") | kwargs))
    assert not (tmp_path / "run").exists()


def test_show_profile_and_report_read_people_games(tmp_path, capsys):
    out = tmp_path / "run"
    s = PlaySession("europe", 2, ["tickets"], out=out, seat=0, seed=4)
    with pytest.raises(ValueError, match="no finished game yet"):
        load_run(out)
    play_to_end(s)
    page = tmp_path / "g.html"
    assert main(["show", str(out), "--game", "0", "--out", str(page)]) == 0
    assert "seat 0 (person)" in capsys.readouterr().out and page.exists()
    assert main(["show", str(out), "--game", "0", "--analyse", "0", "--playouts", "2",
                 "--rollout", "random", "--quiet", "--out", str(page)]) == 0
    assert "seat 0: " in capsys.readouterr().out
    # re-simulating the person cannot be done: refused, saying why
    assert main(["show", str(out), "--game", "0", "--policy", "tickets",
                 "--out", str(tmp_path / "x.html")]) == 2
    err = capsys.readouterr().err
    assert "people's games" in err and "recorded decisions" in err
    with pytest.raises(ValueError, match="recorded decisions"):
        load_run(out).game(0, policies=["tickets", "tickets"])
    assert main(["profile", str(out)]) == 0
    assert "person" in capsys.readouterr().out
    assert main(["report", str(out), "--out", str(tmp_path / "report"), "--quiet"]) == 0
    assert (tmp_path / "report" / "index.html").exists()
    assert main(["analyse", str(out), "--game", "0", "--turn", "3", "--playouts", "2",
                 "--rollout", "random"]) == 0


def test_a_map_file_is_played_and_read_back(tmp_path):
    import ttrsim
    from ttrsim.maps import board_to_dict

    d = board_to_dict(ttrsim.variant("usa", trains=12))
    d["name"] = "short_usa"
    (tmp_path / "short_usa.json").write_text(json.dumps(d))
    path = str(tmp_path / "short_usa.json")
    assert default_out(path, 3) == "play-short_usa-3p"
    s = PlaySession(path, 3, ["tickets", "expert"], out=tmp_path / "run", seat=2, seed=1)
    final = play_to_end(s)["final"]
    s.close()
    run = load_run(tmp_path / "run")
    assert run.manifest["board_path"] == path and run.board.name == "short_usa"
    assert replay_through_game(tmp_path / "run", 0) == [r["total"] for r in final["seats"]]
    assert PlaySession(path, 3, ["tickets", "expert"], out=tmp_path / "run", seat=2).state()["over"]


def test_the_final_scores_name_the_routes_the_persons_stations_borrow():
    from ttrsim.actions import route_text
    from ttrsim.maps import resolve_board
    from ttrsim.play.view import final_scores

    board = resolve_board("europe")
    row = dict(route_points=20, ticket_points=-4, longest_bonus=10, globetrotter=0,
               station_points=8, attraction_points=0, total=34, rank=1, tickets_completed=2,
               tickets_failed=1)
    other = dict(row, ticket_points=12, total=50, longest_bonus=0, rank=2)
    f = final_scores(board, [dict(row, borrowed=[7, -1]), dict(other, borrowed=[3])], 0,
                     ["ann", "tickets"], False)
    assert f["borrowed"] == [route_text(board, 7)]          # the person's only
    assert f["seats"][0]["parts"] == [["routes", 20], ["tickets", -4], ["longest", 10],
                                      ["stations", 8]]
    assert sum(v for _, v in f["seats"][1]["parts"]) == 50 and not f["truncated"]
    # of another seat: its total and parts, how many tickets it completed, not which
    assert set(f["seats"][1]) == {"seat", "name", "total", "rank", "parts",
                                  "tickets_completed", "tickets_failed"}


def test_missing_web_libraries_are_named_before_anything_is_written(tmp_path, monkeypatch,
                                                                    capsys):
    monkeypatch.setitem(sys.modules, "starlette", None)          # import starlette fails
    assert main(["play", "--board", "newyork", "--players", "2", "--no-browser",
                 "--out", str(tmp_path / "run")]) == 2
    assert 'pip install "ttrsim[play]"' in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_runs_without_people_still_load_and_replay(tmp_path):
    """The run format only grew (a ``people`` key, a ``decisions`` table for people's
    games): a simulate run reads and replays as before."""
    import ttrsim

    run = ttrsim.simulate("usa", 3, games=4, seed=8, out=tmp_path / "sim")
    m = json.loads((tmp_path / "sim" / "manifest.json").read_text())
    assert "people" not in m and not (tmp_path / "sim" / "decisions").exists()
    back = load_run(tmp_path / "sim")
    assert back.games.equals(run.games)
    assert back.game(2).final["total"].tolist() == \
        run.games[run.games.game == 2].sort_values("seat")["score"].tolist()


def test_a_damaged_decision_file_is_refused(tmp_path):
    out = tmp_path / "run"
    with PlaySession("newyork", 2, out=out, seed=6) as s:
        play_to_end(s)
    f = out / "decisions" / "part-000000.parquet"
    dec = pd.read_parquet(f)
    dec.loc[len(dec) // 2, "code"] = dec["code"].iloc[0]       # another move halfway
    dec.to_parquet(f, index=False)
    with pytest.raises(ValueError, match="do not replay|damaged"):
        load_run(out).game(0)
    (out / IN_PROGRESS).write_text("{not json")
    with pytest.raises(ValueError, match="not the game in progress"):
        PlaySession("newyork", 2, out=out)


def test_a_game_in_progress_of_another_seed_is_refused_not_replayed_on_this_deal(tmp_path,
                                                                                capsys):
    # the saved game in progress names the deal it was played on; copied into a run of
    # another seed its decisions (the person's ticket choices are legal on any deal) would
    # replay on this run's deal without a word
    runs = {}
    for name, seed in (("a", 3), ("b", 4)):
        with PlaySession("newyork", 2, ["tickets"], out=tmp_path / name, seed=seed) as s:
            s.move(0, s.state()["legal"][0]["code"])
        runs[name] = json.loads((tmp_path / name / IN_PROGRESS).read_text())
    assert runs["a"]["decisions"] == runs["b"]["decisions"]     # the same moves, other deals
    assert runs["a"]["seed"] != runs["b"]["seed"]
    (tmp_path / "a" / IN_PROGRESS).write_text(json.dumps(runs["b"]))
    with pytest.raises(ValueError, match="a game dealt from another seed than this run's game 0"):
        PlaySession("newyork", 2, ["tickets"], out=tmp_path / "a")
    assert main(["play", "--board", "newyork", "--players", "2", "--opponent", "tickets",
                 "--out", str(tmp_path / "a"), "--no-browser"]) == 2
    err = capsys.readouterr().err.strip()
    assert "dealt from another seed" in err and "\n" not in err
    # its own file resumes
    (tmp_path / "a" / IN_PROGRESS).write_text(json.dumps(runs["a"]))
    assert PlaySession("newyork", 2, ["tickets"], out=tmp_path / "a").state()["decision"] == 1


# --- what the page is sent ---------------------------------------------------------------

def _twin(table, seed: int):
    """The same table in a world that differs only in what the person cannot see."""
    twin = copy.copy(table)
    twin.game = table.game.determinized(table.seat, seed)
    twin.view = twin.game.observation(table.seat)
    return twin


LEAK_GAMES = [("usa", 3, 2), ("europe", 3, 1), ("newyork", 2, 1), ("usa-1910", 4, 3),
              ("usa-mega", 4, 0), ("usa-bigcities", 2, 1)]


def test_every_built_in_board_is_in_the_leak_tests():
    from ttrsim.maps import BUILTIN

    assert {b for b, _, _ in LEAK_GAMES} == set(BUILTIN)


@pytest.mark.parametrize("board,n,seat", LEAK_GAMES)
def test_messages_hold_only_the_seats_information_set(tmp_path, board, n, seat):
    """At every decision of a game, the message the person is sent equals the message
    of a game that differs only in hidden information (the other hands and tickets, the
    offers, the decks: ``Game.determinized``); the log entries of the other seats' moves
    too, wherever the twin world allows the same move with the same public outcome.
    Nothing names another seat's tickets or the deck's order."""
    rng = np.random.default_rng(seat)
    s = PlaySession(board, n, ["tickets"], out=tmp_path / "run", seat=seat, seed=11)
    t = s.table
    checked = entries = 0
    m = s.state()
    while not m["over"] and m["decision"] < 70:
        twin = _twin(t, 100 * m["decision"])
        last = t.message(0)
        assert twin.message(0) == last, (m["decision"], m["phase"])
        assert twin.game.state()["deck"] != t.game.state()["deck"] or len(t.game.state()["deck"]) < 2
        checked += 1
        q = t.game.current_player
        if q == seat:
            codes = [a["code"] for a in m["legal"]]
            m = s.move(m["decision"], codes[int(rng.integers(len(codes)))])
            continue
        code = t._opponent_choice()
        twin = _twin(t, m["decision"])
        before = twin.view
        t._apply(code)
        if code in set(map(int, twin.game.legal_action_codes())):
            twin.game.apply(code)
            after = twin.game.observation(seat)
            if after == t.view:        # the same public outcome (a tunnel's draw may differ)
                assert log_entry(t.board, seat, q, code, before, after, m["decision"]) == t.log[-1]
                entries += 1
        s._write(t.decisions)
        m = s.state()
    assert checked > 40 and entries >= 5
    # the text of the last message in play: none of the other seats' tickets, held or
    # offered (at the end the rules show them)
    text = json.dumps(last)
    st = t.game.state()
    others = [tk for q, p in enumerate(st["players"]) if q != seat
              for tk in p["tickets"] + p["pending"]]
    names = {t.board.ticket_name(x) for x in others} - {t.board.ticket_name(x) for x in
                                                      st["players"][seat]["tickets"]}
    assert names and not any(name in text for name in names)
    s.close()


@pytest.mark.parametrize("board,n,seat", LEAK_GAMES)
def test_the_initial_choice_leaves_no_trace_before_play_starts(tmp_path, board, n, seat):
    """The initial ticket choice is secret until play starts: whatever the other seats
    kept (the fewest, or all), every message the person is sent during it is the same,
    counts included (the tickets returned go under the ticket deck: its count would
    tell how many were kept)."""
    from ttrsim.play.session import Table

    def messages(keep_all: bool):
        t = Table(resolve(board), [None if q == seat else "tickets" for q in range(n)],
                  [f"p{q}" for q in range(n)], seat, 5, 1000)
        out = []
        while t.game.observation(seat)["phase"] == "setup_tickets":
            msg = t.message(0)
            out.append(msg)
            codes = sorted(map(int, t.game.legal_action_codes()),
                           key=lambda c: bin((c >> 16) & 0xFF).count("1"))
            q = t.game.current_player
            # the person keeps the same; the others the fewest, or every ticket offered
            t._apply(codes[0] if q == seat or not keep_all else codes[-1])
        return out, t

    fewest, t0 = messages(False)
    most, t1 = messages(True)
    assert len(fewest) == n
    assert [m["ticket_deck"] for m in fewest] == [fewest[0]["ticket_deck"]] * n
    assert fewest == most
    # and the choices did differ: the hidden states are not the same
    kept = [[len(p["tickets"]) for p in t.game.state()["players"]] for t in (t0, t1)]
    assert kept[0] != kept[1]


def resolve(board):
    from ttrsim.maps import resolve_board

    return resolve_board(board)


def test_another_seats_ticket_choice_reads_the_same_whatever_it_kept():
    """Which tickets another seat kept never reaches the log: only how many (and during
    the secret initial choice, not even that)."""
    from ttrsim.actions import encode

    g = Game("usa", 2, seed=3)
    g.apply(int(g.legal_action_codes()[0]))        # seat 0's initial choice
    before = g.observation(0)
    texts = set()
    for mask in (0b011, 0b101, 0b110):
        h = g.clone()
        h.apply(encode("keep", mask))
        texts.add(log_entry(g.board, 0, 1, encode("keep", mask), before, h.observation(0), 1)["text"])
    assert texts == {"choose their initial tickets"}


def test_another_seats_tunnel_reads_from_public_counts():
    """The seat's view of another seat's tunnel holds no cards; the log says what it paid
    from the route it won and the cards that left its hand, as the mover's own view has it."""
    from ttrsim.actions import route_text

    paid = 0
    for seed in range(30):
        g = Game("europe", 3, seed=seed)
        rng = np.random.default_rng(seed)
        while not g.is_over():
            codes = g.legal_action_codes()
            code = int(codes[rng.integers(len(codes))])
            mover = g.current_player
            viewer = (mover + 1) % 3
            before, own = g.observation(viewer), g.observation(mover)
            g.apply(code)
            text = log_entry(g.board, viewer, mover, code, before, g.observation(viewer), 0)["text"]
            if own["tunnel"] and own["current"] == mover and (code >> 24) == 7:    # tunnel_pay
                tun = own["tunnel"]
                assert text.startswith(f"pay the tunnel's {tun['extra']} extra card")
                assert route_text(g.board, tun["route"]) in text
                paid += 1
    assert paid >= 10


# --- the server ------------------------------------------------------------------------

def test_the_token_is_required(tmp_path):
    s = PlaySession("newyork", 2, out=tmp_path / "run", seed=1)
    c = client(s)
    assert c.get("/").status_code == 403 and "token" in c.get("/").text
    assert c.get("/?token=wrong").status_code == 403
    page = c.get("/?token=secret")
    assert page.status_code == 200 and "drawBoard" in page.text
    assert "connect-src 'self'" in page.headers["content-security-policy"]
    assert c.get("/api/state").status_code == 403
    assert c.get("/api/state", headers={"X-Ttrsim-Token": "wrong"}).status_code == 403
    code = c.get("/api/state", headers=AUTH).json()["legal"][0]["code"]
    r = c.post("/api/move", json={"decision": 0, "code": code})
    assert r.status_code == 403 and "token" in r.json()["error"]
    assert s.state()["decision"] == 0                   # nothing was played
    assert c.post("/api/move", json={"decision": 0, "code": code}, headers=AUTH).status_code == 200
    # another host name (a page of another site resolving to this machine) is refused
    from starlette.testclient import TestClient

    from ttrsim.play.server import create_app

    other = TestClient(create_app(s, "secret"), base_url="http://example.com")
    assert other.get("/?token=secret").status_code == 400


def test_refused_moves_change_nothing(tmp_path):
    out = tmp_path / "run"
    s = PlaySession("europe", 2, ["expert"], out=out, seat=0, seed=3)
    c = client(s)
    first = c.get("/api/state", headers=AUTH).json()
    saved = (out / IN_PROGRESS).read_bytes()
    legal = {a["code"] for a in first["legal"]}
    illegal = next(x for x in range(1, 10_000) if x not in legal)
    cases = [
        (b"not json", 400, "JSON object"), (b"[1, 2]", 400, "JSON object"),
        (json.dumps({"code": 1}).encode(), 400, "'decision'"),
        (json.dumps({"decision": 0}).encode(), 400, "'code'"),
        (json.dumps({"decision": "0", "code": 1}).encode(), 400, "'decision'"),
        (json.dumps({"decision": 0, "code": "7"}).encode(), 400, "'code'"),
        (json.dumps({"decision": True, "code": 1}).encode(), 400, "'decision'"),
        (json.dumps({"decision": 0, "code": 2 ** 70}).encode(), 422, "not legal"),
        (json.dumps({"decision": 0, "code": illegal}).encode(), 422, "not legal"),
        (json.dumps({"decision": 1, "code": min(legal)}).encode(), 409, "stale"),
        (json.dumps({"decision": -1, "code": min(legal)}).encode(), 409, "stale"),
    ]
    for body, status, words in cases:
        r = c.post("/api/move", content=body, headers=AUTH)
        assert r.status_code == status, (body, r.text)
        assert words in r.json()["error"], (body, r.json())
    r = c.post("/api/advance", json={"decision": 0}, headers=AUTH)       # the person's move
    assert r.status_code == 409 and "your move" in r.json()["error"]
    r = c.post("/api/next", json={"game": 0}, headers=AUTH)
    assert r.status_code == 409 and "not over" in r.json()["error"]
    assert c.get("/api/state", headers=AUTH).json() == first
    assert (out / IN_PROGRESS).read_bytes() == saved
    # a move played, then the same request again: stale, not played twice
    body = {"decision": 0, "code": min(legal)}
    assert c.post("/api/move", json=body, headers=AUTH).status_code == 200
    r = c.post("/api/move", json=body, headers=AUTH)
    assert r.status_code == 409 and "stale" in r.json()["error"]
    m = c.get("/api/state", headers=AUTH).json()
    assert m["decision"] == 1 and m["current"] == 1
    r = c.post("/api/move", json={"decision": 1, "code": min(legal)}, headers=AUTH)
    assert r.status_code == 409 and "not your move" in r.json()["error"]
    saved = (out / IN_PROGRESS).read_bytes()
    assert json.loads(saved)["decisions"] == [[0, min(legal)]]
    r = c.post("/api/advance", json={"decision": 1}, headers=AUTH)
    assert r.status_code == 200 and r.json()["decision"] == 2
    assert len(json.loads((out / IN_PROGRESS).read_bytes())["decisions"]) == 2


def test_cli_play_prints_an_address_that_serves_the_page(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.Popen([sys.executable, "-m", "ttrsim", "play", "--board", "newyork",
                          "--players", "2", "--opponent", "expert", "--no-browser"],
                         cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=env)
    try:
        lines = []
        while not any(line.startswith("open ") for line in lines):
            line = p.stdout.readline()
            assert line, f"ended before printing an address: {lines} {p.stderr.read()}"
            lines.append(line)
        url = next(line for line in lines if line.startswith("open ")).split()[1]
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/\?token=[\w-]{20,}", url)
        with urllib.request.urlopen(url, timeout=10) as r:
            assert r.status == 200 and "drawBoard" in r.read().decode()
        bare = url.split("?")[0]
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(bare, timeout=10)
        assert e.value.code == 403
    finally:
        p.send_signal(signal.SIGINT)
        rest, err = p.communicate(timeout=30)
    assert p.returncode == 0, err
    assert "stopped" in rest and "Traceback" not in err
    assert (tmp_path / default_out("newyork", 2) / IN_PROGRESS).is_file()
    # --out alone resumes: the board, players, opponents, seat and name are the saved run's
    p = subprocess.Popen([sys.executable, "-m", "ttrsim", "play", "--out",
                          default_out("newyork", 2), "--no-browser"], cwd=tmp_path, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env)
    try:
        first = p.stdout.readline()
        assert first.startswith("ttrsim play: game 0") and "--out play-newyork-2p resumes" in first
        assert p.stdout.readline().startswith("open http://127.0.0.1:")
    finally:
        p.send_signal(signal.SIGINT)
        rest, err = p.communicate(timeout=30)
    assert p.returncode == 0 and "Traceback" not in err, err


# --- a person at the page, in a browser ---------------------------------------------------

@pytest.fixture(scope="module")
def browser():
    from test_viewer import headless_chromium

    d = headless_chromium("1400,1000")
    yield d
    d.quit()


READ = """
const q = s => Array.from(document.querySelectorAll(s));
const on = id => { const e = document.getElementById(id); return !!e && !e.disabled && !e.hidden; };
return {state: document.body.dataset.state, phase: document.body.dataset.phase,
        decision: parseInt(document.body.dataset.decision),
        offer: q('#offer input').length, tunnelPay: q('#tunnel-choices .tunnel-pay').length,
        faceup: q('button.faceup').map(b => !b.disabled), deck: on('deck'),
        tickets: on('draw-tickets'), pass: on('pass'),
        routes: q('#claim-route option').filter(o => o.value !== '').map(o => [o.value, o.textContent]),
        cities: q('#station-city option').filter(o => o.value !== '').map(o => o.value),
        error: document.getElementById('error').textContent};
"""


class Person:
    """A scripted person who plays through the page's controls: keeps the fewest tickets,
    pays a tunnel when it can, builds one station (``station``), draws tickets once
    (``ticket_draw``), claims a route when it can (a tunnel first with ``tunnels``), else
    draws from the deck."""

    def __init__(self, browser, *, tunnels=False, station=False, ticket_draw=False):
        self.b, self.tunnels = browser, tunnels
        self.want_station, self.want_draw = station, ticket_draw
        self.seen = {"tunnel": 0, "station": 0, "ticket_draw": 0, "keep": 0, "claim": 0}

    def click(self, css):
        from selenium.webdriver.common.by import By

        self.b.find_element(By.CSS_SELECTOR, css).click()

    def select(self, css, value):
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support.ui import Select

        Select(self.b.find_element(By.CSS_SELECTOR, css)).select_by_value(value)

    def wait(self, decision, timeout=60):
        from selenium.webdriver.support.ui import WebDriverWait

        def ready(b):
            r = b.execute_script(READ)
            return r if r["state"] == "over" or (r["state"] == "yours" and
                                                  r["decision"] != decision) else False
        return WebDriverWait(self.b, timeout, poll_frequency=0.02).until(ready)

    def move(self, r):
        if r["offer"]:
            k = 0
            while self.b.execute_script("return document.getElementById('keep').disabled"):
                self.click(f"#offer-{k}")
                k += 1
            self.seen["keep"] += 1
            return self.click("#keep")
        if r["phase"] == "tunnel":
            self.seen["tunnel"] += 1
            return self.click("#tunnel-choices .tunnel-pay" if r["tunnelPay"] else "#tunnel-decline")
        if r["phase"] == "turn":
            if self.want_station and r["cities"] and self.seen["station"] == 0:
                self.seen["station"] += 1
                self.select("#station-city", r["cities"][0])
                return self.click("#station-pay .pay")
            if self.want_draw and r["tickets"] and self.seen["ticket_draw"] == 0 and r["decision"] > 30:
                self.seen["ticket_draw"] += 1
                return self.click("#draw-tickets")
            if r["routes"]:
                tunnels = [(v, text) for v, text in r["routes"] if "tunnel" in text]
                self.seen["claim"] += 1
                self.select("#claim-route", (tunnels if self.tunnels and tunnels else r["routes"])[-1][0])
                return self.click("#claim-pay .pay")
        if r["deck"]:
            return self.click("#deck")
        if any(r["faceup"]):
            return self.click(f"#faceup-{r['faceup'].index(True)}")
        return self.click("#pass")

    def play(self, url, until=None):
        """Play from the page at ``url`` until the game is over (or ``until(read)``)."""
        self.b.get(url)
        r = self.wait(-1)
        while r["state"] != "over" and not (until and until(r)):
            assert r["error"] == "", r["error"]
            self.move(r)
            r = self.wait(r["decision"])
        return r


def serve(tmp_path, board, n, opponents, seat=0, seed=0, out="run", **analysis):
    from ttrsim.play.server import PlayServer

    s = PlaySession(board, n, opponents, out=tmp_path / out, seat=seat, seed=seed)
    return s, PlayServer(s, **analysis).start()


def check_saved_game(run_dir, page_text):
    """The run's game 0 replays through Game to the final scores the page showed."""
    run = load_run(run_dir)
    totals = run.games[run.games.game == 0].sort_values("seat")["score"].tolist()
    assert replay_through_game(run_dir, 0) == totals
    for q, total in enumerate(totals):
        assert page_text[q] == total
    return run


def final_totals(browser):
    return browser.execute_script(
        "return Array.from(document.querySelectorAll('#final tr[id^=final-] td.total'))"
        ".map(td => parseInt(td.textContent))")


def console_errors(browser):
    return [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]


@pytest.mark.slow
def test_a_person_plays_newyork_through_the_page_and_resumes_after_a_stop(browser, tmp_path):
    s, server = serve(tmp_path, "newyork", 2, ["expert"], seat=1, seed=12)
    person = Person(browser)
    try:
        r = person.play(server.url + "&pace=0", until=lambda r: r["decision"] >= 20)
    finally:
        server.stop()
        s.close()
    assert r["state"] == "yours"
    shown = browser.execute_script("return document.getElementById('log').children.length")
    assert shown == r["decision"]
    # a move made while the server is down: the page says so and stops asking
    from selenium.webdriver.support.ui import WebDriverWait

    person.move(r)
    WebDriverWait(browser, 20).until(
        lambda b: "does not answer" in b.find_element("id", "error").text)
    browser.get_log("browser")                 # (the refused connections)
    # the server stops mid-game; the same command serves the game where it was
    from ttrsim.play.server import PlayServer

    again = PlaySession("newyork", 2, ["expert"], out=tmp_path / "run", seat=1)
    assert again.state()["decision"] == r["decision"]
    server = PlayServer(again).start()
    try:
        person.b.get(server.url + "&pace=0")
        assert person.wait(-1)["decision"] == r["decision"]
        assert browser.execute_script("return document.getElementById('log').children.length") == shown
        r = person.play(server.url + "&pace=0")
        assert person.seen["claim"] > 0 and person.seen["keep"] >= 1
        check_saved_game(tmp_path / "run", final_totals(browser))
        assert browser.find_element("id", "next-game").is_displayed()
        assert console_errors(browser) == []
    finally:
        server.stop()


@pytest.mark.slow
def test_a_person_plays_europe_with_a_tunnel_and_a_station(browser, tmp_path):
    s, server = serve(tmp_path, "europe", 3, ["expert", "tickets"], seat=0, seed=3)
    person = Person(browser, tunnels=True, station=True)
    shots = Path(os.environ.get("TTRSIM_SCREENSHOTS", tmp_path / "screens"))
    try:
        person.play(server.url + "&pace=0", until=lambda r: r["decision"] >= 90)
        shots.mkdir(parents=True, exist_ok=True)
        browser.save_screenshot(str(shots / "play-europe.png"))
        person.play(server.url + "&pace=0")
        assert person.seen["tunnel"] >= 1 and person.seen["station"] == 1
        run = check_saved_game(tmp_path / "run", final_totals(browser))
        assert run.stations[run.stations.seat == 0].shape[0] == 1
        assert (run.tunnels.seat == 0).any()
        assert console_errors(browser) == []
    finally:
        server.stop()


@pytest.mark.slow
def test_a_person_plays_usa_mega_with_a_ticket_draw(browser, tmp_path):
    s, server = serve(tmp_path, "usa-mega", 4, ["expert", "tickets", "random"], seat=2, seed=1)
    person = Person(browser, ticket_draw=True)
    try:
        person.play(server.url + "&pace=0")
        assert person.seen["ticket_draw"] == 1 and person.seen["keep"] == 2
        run = check_saved_game(tmp_path / "run", final_totals(browser))
        assert run.games[(run.games.seat == 2)]["ticket_draws"].iloc[0] == 1
        assert console_errors(browser) == []
    finally:
        server.stop()


# --- secrets kept on the machine, no move lost ------------------------------------------------

def test_the_browser_opens_a_private_redirect_not_the_token(tmp_path, monkeypatch):
    """The browser is handed a 0600 file that redirects to the address: the token is
    on no command line (``ps`` shows a browser's arguments to every user)."""
    import stat
    import threading
    import webbrowser

    import ttrsim.play as play
    from ttrsim.play.server import PlayServer

    opened, files = [], []

    class Now:                                   # the timer fires at once
        def __init__(self, _delay, fn, args):
            self.fn, self.args = fn, args

        def start(self):
            self.fn(*self.args)

    def browser_open(uri):
        path = Path(uri.removeprefix("file://"))
        files.append((path, stat.S_IMODE(path.stat().st_mode), path.read_text()))
        opened.append(uri)

    monkeypatch.setattr(play.threading, "Timer", Now)
    monkeypatch.setattr(webbrowser, "open", browser_open)
    urls = []
    monkeypatch.setattr(PlayServer, "run", lambda self: urls.append(self.url) or
                        (_ for _ in ()).throw(KeyboardInterrupt))
    s = PlaySession("newyork", 2, out=tmp_path / "run", seed=1)
    import io

    assert play.serve(s, open_browser=True, stream=io.StringIO()) == 0
    (uri,), (path, mode, text) = opened, files[0]
    token = urls[0].split("token=")[1]
    assert token not in uri and uri.startswith("file://")
    assert mode == 0o600 and urls[0] in text and "http-equiv=\"refresh\"" in text
    assert not path.exists()                     # removed when the server stops
    assert threading.active_count() >= 1
    PlaySession("newyork", 2, out=tmp_path / "run").close()      # the lock was let go


def test_the_run_is_the_persons_alone(tmp_path):
    """--out 0700, every file in it 0600 (the saved game holds the deal seed); a run
    saved readable by all is tightened when it is opened."""
    import stat

    out = tmp_path / "run"
    with PlaySession("newyork", 2, out=out, seed=2) as s:
        play_to_end(s)
    modes = {p.relative_to(out): stat.S_IMODE(p.stat().st_mode) for p in [out, *out.rglob("*")]}
    assert len(modes) > 10
    assert {m for p, m in modes.items() if (out / p).is_dir()} == {0o700}
    assert {m for p, m in modes.items() if (out / p).is_file()} == {0o600}
    (out / IN_PROGRESS).chmod(0o644)
    out.chmod(0o755)
    PlaySession("newyork", 2, out=out).close()
    assert stat.S_IMODE(out.stat().st_mode) == 0o700
    assert stat.S_IMODE((out / IN_PROGRESS).stat().st_mode) == 0o600


def test_headers_body_cap_and_malformed_input(tmp_path):
    s = PlaySession("newyork", 2, out=tmp_path / "run", seed=1)
    c = client(s)
    for r in (c.get("/?token=secret"), c.get("/"), c.get("/api/state", headers=AUTH)):
        h = r.headers
        assert "frame-ancestors 'none'" in h["content-security-policy"]
        assert h["x-content-type-options"] == "nosniff" and h["referrer-policy"] == "no-referrer"
        assert h["cache-control"] == "no-store"
    for body, status in [(b"[" * 15_000, 400), (b"{\"a\":" * 3_000, 400), (b"[" * 100_000, 413),
                         (b'{"decision": 0, "code": 1, "x": "' + b"a" * 50_000 + b'"}', 413)]:
        r = c.post("/api/move", content=body, headers=AUTH)
        assert r.status_code == status and "error" in r.json(), r.text
    for since in ("9" * 5000, "abc", "-1", "１"):
        r = c.get(f"/api/state?since={since}", headers=AUTH)
        assert r.status_code == 400 and "'since'" in r.json()["error"]
    assert s.state()["decision"] == 0
    s.close()


def _full(exc_errno):
    import errno as E

    def write(*_a, **_k):
        raise OSError(exc_errno, os.strerror(exc_errno))
    return write


def test_a_move_that_cannot_be_saved_is_not_played(tmp_path, monkeypatch):
    """A full or read-only disk: the move is refused in words, the game stays as saved,
    and the same move plays once saving works again; a policy's move likewise."""
    import errno

    import ttrsim.play.session as session

    out = tmp_path / "run"
    s = PlaySession("europe", 2, ["expert"], out=out, seat=1, seed=3)
    c = client(s)
    first = c.get("/api/state", headers=AUTH).json()
    saved = (out / IN_PROGRESS).read_bytes()
    real = session.atomic_write
    monkeypatch.setattr(session, "atomic_write", _full(errno.ENOSPC))
    r = c.post("/api/advance", json={"decision": 0}, headers=AUTH)
    assert r.status_code == 503 and "the disk is full" in r.json()["error"]
    m = c.get("/api/state", headers=AUTH).json()
    assert m["decision"] == 0 and "disk is full" in m["saving_error"]
    assert {k: v for k, v in m.items() if k != "saving_error"} == \
        {k: v for k, v in first.items() if k != "saving_error"}
    monkeypatch.setattr(session, "atomic_write", real)
    m = c.post("/api/advance", json={"decision": 0}, headers=AUTH).json()
    assert m["decision"] == 1 and m["saving_error"] is None
    code = m["legal"][0]["code"]
    monkeypatch.setattr(session, "atomic_write", _full(errno.EROFS))
    r = c.post("/api/move", json={"decision": 1, "code": code}, headers=AUTH)
    assert r.status_code == 503 and "read-only" in r.json()["error"]
    assert s.state()["decision"] == 1
    assert json.loads((out / IN_PROGRESS).read_bytes())["decisions"] == \
        json.loads(saved)["decisions"] + [list(s.table.decisions[0])]
    monkeypatch.setattr(session, "atomic_write", real)
    assert c.post("/api/move", json={"decision": 1, "code": code}, headers=AUTH).status_code == 200
    assert json.loads((out / IN_PROGRESS).read_bytes())["decisions"][1] == [1, code]
    s.close()


def test_a_finished_game_is_stored_before_the_next_starts(tmp_path, monkeypatch):
    import errno

    import ttrsim.play.session as session

    out = tmp_path / "run"
    s = PlaySession("newyork", 2, ["tickets"], out=out, seed=4)
    real = session.write_batch
    monkeypatch.setattr(session, "write_batch", _full(errno.ENOSPC))
    with pytest.raises(MoveRefused, match="disk is full. Game 0 is over and saved, but not yet added"):
        play_to_end(s)          # its last move is saved, the game is not stored
    m = s.state()
    assert m["over"] and m["games_done"] == 0 and "disk is full" in m["saving_error"]
    with pytest.raises(MoveRefused, match="disk is full"):
        s.next_game(0)
    assert s.game_index == 0 and s.state()["over"]          # the finished game stays
    monkeypatch.setattr(session, "write_batch", real)
    m = s.next_game(0)
    assert (m["game"], m["games_done"], m["saving_error"]) == (1, 1, None)
    assert load_run(out).manifest["games"] == 1
    s.close()


def test_one_server_at_a_time_and_kill_9_between_save_and_answer(tmp_path):
    """A second session on the same --out is refused while the first holds it; a server
    killed (kill -9) after saving a move and before answering left no lock, and the
    move is in the game it resumes."""
    out = tmp_path / "run"
    s = PlaySession("newyork", 2, out=out, seed=7)
    with pytest.raises(ValueError, match="being played by another ttrsim play"):
        PlaySession("newyork", 2, out=out)
    s.close()
    script = f"""
import os, signal
from ttrsim.play import PlaySession
s = PlaySession("newyork", 2, out={str(out)!r})
m = s.state()
code = m["legal"][-1]["code"]
print(code, flush=True)
s._message = lambda since: os.kill(os.getpid(), signal.SIGKILL)     # saved, not answered
s.move(m["decision"], code)
"""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env,
                       timeout=60)
    assert p.returncode == -signal.SIGKILL, p.stderr
    code = int(p.stdout.split()[0])
    with PlaySession("newyork", 2, out=out) as again:           # no stale lock
        assert again.state()["decision"] == 1 and again.table.decisions == [(0, code)]


def test_out_alone_resumes_with_the_saved_settings(tmp_path):
    from ttrsim.play.session import saved_settings

    out = tmp_path / "run"
    with PlaySession("europe", 3, ["expert", "tickets"], out=out, seat=1, seed=2,
                     name="ann") as s:
        s.advance(0)
    assert saved_settings(out) == {"board": "europe", "players": 3, "seat": 1, "name": "ann",
                                   "opponents": ["expert", "tickets"]}
    assert saved_settings(tmp_path / "none") is None


def test_public_cards_face_up_picks_and_other_seats_tunnel_reveals():
    """What the table knows of another seat's cards: never more than it holds, and what
    its tunnels revealed, the same cards its own view showed."""
    from collections import Counter

    from ttrsim.actions import WILD, card_name
    from ttrsim.play.session import Table

    board = resolve("europe")
    reveals = known = 0
    for seed in range(6):
        t = Table(board, [None, "random", "random"], ["p", "r1", "r2"], 0, seed, 1000)
        rng = np.random.default_rng(seed)
        pending = None
        while not t.over:
            q = t.game.current_player
            own = t.game.observation(q)
            if q == 0:
                codes = list(map(int, t.game.legal_action_codes()))
                t._apply(codes[int(rng.integers(len(codes)))])
            else:
                if own["phase"] == "tunnel":
                    pending = Counter(card_name(board, int(c)) for c in own["tunnel"]["revealed"])
                t._apply(t._opponent_choice())
                text = t.log[-1]["text"]
                if pending is not None and own["phase"] == "tunnel":
                    shown = text.split("; the tunnel revealed ")
                    if len(shown) == 2:
                        assert Counter(shown[1].split(", ")) == pending, text
                        reveals += 1
                    pending = None
            st = t.game.state()
            for p in (1, 2):
                hand = st["players"][p]["hand"]
                assert all(t.public.known[p][c] <= hand[c] for c in range(WILD + 1))
                known += sum(t.public.known[p])
    assert reveals >= 5 and known > 100
    msg = t.message(0)
    assert "known" in msg["players"][1] and "known" not in msg["players"][0]


MARKS = """
const q = s => Array.from(document.querySelectorAll(s));
return {lengths: q('#lengths .route-len text').map(t => parseInt(t.textContent)),
        stars: q('.attraction').map(e => parseInt(e.dataset.city)),
        mine: q('.ring.mine, .ring.done').map(e => parseInt(e.dataset.city)).sort((a, b) => a - b),
        offered: q('.ring.offered').map(e => parseInt(e.dataset.city)).sort((a, b) => a - b),
        fresh: q('#map g[data-owner]').map((g, i) => [i, parseInt(g.dataset.owner), g.classList.contains('fresh')])
          .filter(x => x[2]).map(x => [x[0], x[1]]),
        white: q('.white-outline').length};
"""


@pytest.mark.slow
def test_the_map_marks_the_last_moves_and_the_link_to_the_analysis(browser, tmp_path):
    """New York at the page: every route's length, the attractions, the cities of the
    person's (and the offered) tickets ringed, the routes the other seat claimed since
    the person's last move glowing; at the end a link opens the game in the viewer with
    the analysis of the person's seat, behind the token."""
    from selenium.webdriver.support.ui import WebDriverWait

    s, server = serve(tmp_path, "newyork", 2, ["expert"], seat=1, seed=21, playouts=2,
                      rollout="random")
    board = s.board
    person = Person(browser)
    fresh_seen = 0
    try:
        browser.set_window_size(1280, 720)
        browser.get(server.url + "&pace=0")
        r = person.wait(-1)
        # at 1280 x 720 the hand and the face-up row are in view with the map
        inside = browser.execute_script(
            "return ['hand', 'faceup-4', 'deck', 'map'].map(id => "
            "document.getElementById(id).getBoundingClientRect().top < window.innerHeight - 20)")
        assert inside == [True] * 4
        browser.set_window_size(1400, 1000)
        while r["state"] != "over":
            m = s.state()
            marks = browser.execute_script(MARKS)
            assert marks["lengths"] == [int(x) for x in board.route_len]
            assert sorted(marks["stars"]) == sorted(board.attractions) and marks["stars"]
            want = sorted(c for t in m["tickets"] for c in (t["a"], t["b"]))
            assert marks["mine"] == want
            assert marks["offered"] == sorted(c for t in m["offer"] for c in (t["a"], t["b"]))
            for route, owner in marks["fresh"]:
                assert owner == 0 and m["owner"][route] == 0
            if m["phase"] == "setup_tickets":
                assert marks["offered"]
            fresh_seen += bool(marks["fresh"])
            person.move(r)
            r = person.wait(r["decision"])
        assert fresh_seen >= 3
        browser.find_element("id", "analysis-link").click()
        WebDriverWait(browser, 10).until(lambda b: len(b.window_handles) == 2)
        browser.switch_to.window(browser.window_handles[1])
        WebDriverWait(browser, 120).until(
            lambda b: "2 playouts per candidate" in b.find_element("id", "analysis").text)
        assert "token=" in browser.current_url
        browser.close()
        browser.switch_to.window(browser.window_handles[0])
        # behind the token, as every page of the server
        bare = server.url.split("?")[0] + "viewer?game=0"
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(bare, timeout=10)
        assert e.value.code == 403
        assert console_errors(browser) == []
    finally:
        server.stop()
        s.close()


def _scripted(spec, board):
    """A scripted person who plays as the policy ``spec`` would (asked on the session's
    own game: a test's shortcut for a person at the page)."""
    from ttrsim.policies import decide, make_policy

    pol, started = make_policy(spec, board), []

    def choose(m, s):
        code = decide(pol, s.table.game, np.uint64(m["decision"]), start=not started)
        started.append(1)
        return int(code)
    return choose


def test_people_on_the_bots_scale(tmp_path, capsys):
    """Each finished game is a result against named opponents: the end shows the record
    against each so far, and the league rates the person among the policies from a
    folder of people's games, with a wide interval from few games."""
    from ttrsim.analysis.studies.leagues import league

    out = tmp_path / "ann"
    s = PlaySession("newyork", 2, ["random"], out=out, seed=1, name="ann")
    choose = _scripted("tickets", s.board)
    wins = 0
    for g in range(6):
        m = play_to_end(s, lambda m: choose(m, s))
        ranks = {r["seat"]: r["rank"] for r in m["final"]["seats"]}
        wins += ranks[0] < ranks[1]
        assert m["record"] == [{"opponent": "random", "games": g + 1, "wins": wins,
                                "ties": m["record"][0]["ties"], "losses": m["record"][0]["losses"]}]
        assert sum(m["record"][0][k] for k in ("wins", "ties", "losses")) == g + 1
        if g < 5:
            s.next_game(g)
    s.close()
    again = PlaySession("newyork", 2, ["random"], out=out, name="ann")     # the run's record
    assert again.record()[0]["games"] == 6 and again.record()[0]["wins"] == wins
    again.close()
    lg = league("newyork", 2, ["tickets", "random"], games=20, seed=3, n_resamples=40,
                people=[out])
    r = lg.ratings.set_index("policy")
    assert set(r.index) == {"tickets", "random", "ann"}
    assert r.loc["ann", "rating"] > r.loc["random", "rating"]
    width = r.rating_high - r.rating_low
    assert width["ann"] > width["tickets"] > 0          # 6 games against 20
    assert r.loc["ann", "seat_games"] == 6
    with pytest.raises(ValueError, match="not in the league"):
        league("newyork", 2, ["tickets", "expert"], games=2, seed=3, n_resamples=40, people=[out])
    with pytest.raises(ValueError, match="league is usa"):
        league("usa", 2, ["tickets", "random"], games=2, seed=3, n_resamples=40, people=[out])
    assert main(["league", "--board", "newyork", "--policy", "tickets", "--policy", "random",
                 "--games", "4", "--resamples", "40", "--people", str(out), "--quiet"]) == 0
    assert "ann" in capsys.readouterr().out


@pytest.mark.parametrize("players, need", [(3, None), (4, 5), (5, 5)])
def test_trains_needed_opens_the_second_half_of_a_double_from_its_player_count(
        monkeypatch, players, need):
    # a hand-made board: A =2= B -3- C, the A-B double's one half taken by seat 1. Below
    # the board's double_min_players (4) the other half is closed, so the ticket A-C has
    # no way left; from exactly 4 players on it costs 2 + 3 trains
    from types import SimpleNamespace

    from ttrsim.play import view

    board = SimpleNamespace(n_routes=3, n_cities=3, double_min_players=4,
                            route_partner=np.array([1, 0, -1]), route_len=np.array([2, 2, 3]),
                            route_a=np.array([0, 0, 1]), route_b=np.array([1, 1, 2]),
                            ticket_a=np.array([0]), ticket_b=np.array([2]),
                            ticket_points=np.array([7]))
    monkeypatch.setattr(view, "ticket_text", lambda board, t: "A - C")
    obs = {"seat": 0, "players": [{}] * players, "route_owner": np.array([1, -1, -1]),
           "tickets": [0]}
    assert view.ticket_progress(board, obs)[0]["trains_needed"] == need
    # the seat's own half closes the other whatever the count, and costs nothing
    obs["route_owner"] = np.array([0, -1, -1])
    assert view.ticket_progress(board, obs)[0]["trains_needed"] == 3
