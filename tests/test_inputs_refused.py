"""Impossible inputs are refused with one line naming the field and the value as the user
gave it (map ids, colour names); budgets too small for an answer are flagged; every
directory says what it holds; model files missing a part are refused."""
from __future__ import annotations

import base64
import hashlib
import json
import math
import re
import warnings

import numpy as np
import pytest

import ttrsim
from ttrsim import Game, maps
from ttrsim._expert import FEATURES, ModelFileError, load_model
from ttrsim.analysis.studies import route_importance, ticket_fairness
from ttrsim.analysis.studies.fairness import MIN_KEPT
from ttrsim.cli import main
from ttrsim.policies import make_policy
from ttrsim.results import load_run, part_path
from ttrsim.runner import simulate

USA, EU, NY = maps.load("usa"), maps.load("europe"), maps.load("newyork")


def refused(match, **kw):
    board = kw.pop("board", "europe")
    n = kw.pop("n", 2)
    with pytest.raises(ValueError) as info:
        Game.from_position(board, n, **kw)
    text = str(info.value)
    assert "\n" not in text
    for words in ([match] if isinstance(match, str) else match):
        assert words in text, text
    return text


def double(board):
    """The map ids of the two halves of a double route."""
    r = next(r for r in range(board.n_routes) if board.route_partner[r] > r)
    return int(board.route_id[r]), int(board.route_id[board.route_partner[r]])


# ------------------------------------------------------------------ from_position, by hand

def test_card_counts_are_whole_numbers_of_at_least_zero():
    refused(["hands[0]", "-2 red cards"], hands=[{"red": -2}, {}])
    refused(["hands[1]", "2.5 red cards"], hands=[{}, {"red": 2.5}])
    refused(["discard", "-1 wild cards"], discard={"wild": -1})
    refused(["hands[0]", "unknown card 'purple'"], hands=[{"purple": 1}, {}])


def test_more_cards_than_the_deck_names_the_colour_and_where_they_are():
    # the core's message was "50 cards of type 6"
    refused(["50 black cards", "hands 48", "discard 2", "deck has 12"],
            hands=[{"black": 40}, {"black": 8}], discard={"black": 2})
    refused(["15 wild cards", "face-up 1"], hands=[{"locomotive": 14}, {}],
            faceup=["wild", "red", "red", "blue", "blue"])


def test_a_hand_for_every_seat_or_none():
    # a hand for one seat of two gave the other an empty hand silently
    refused(["hands: 1 entry for 2 seats", "{} for an empty hand"], hands=[{"red": 2}])
    refused("hands: 3 entries for 2 seats", hands=[{}, {}, {}])
    refused("routes: 3 entries for 2 seats", routes=[[], [], [1]])
    assert Game.from_position("europe", 2, hands=[{"red": 2}, {}]).state()[
        "players"][1]["hand"] == [0] * 9


def test_a_ticket_offered_twice_is_refused():
    refused(["offer", "ticket 5 (Athina - Wilno", "given twice"], offer=[5, 5, 6], ids=True)
    refused(["offer", "ticket 5", "also in tickets[0]"], offer=[5, 6, 7], ids=True,
            tickets=[[5], []])
    refused(["ticket_deck_top", "ticket 6", "also in offer"], offer=[5, 6, 7], ids=True,
            ticket_deck_top=[6])


def test_errors_name_the_map_ids_the_user_gave():
    # route 100 was named for 101, ticket 27 for 28
    top = int(EU.route_id.max())
    name = EU.route_name(int(np.flatnonzero(EU.route_id == top)[0]))
    refused([f"routes[1]: route {top} ({name})", "also in routes[0]"],
            routes=[[top], [top]], ids=True)
    refused(["tickets[1]: ticket 28 (", "also in tickets[0]"], board="usa",
            tickets=[[28], [28]], ids=True)
    refused("ticket_deck_top: ticket 28 (", board="usa", tickets=[[28], []],
            ticket_deck_top=[28], ids=True)
    refused("routes[0]: europe has no route with id 999", routes=[[999], []], ids=True)
    # given as indices: the index and the map id
    refused(["route index 0 (map id", "also in routes[0]"], routes=[[0], [0]])


@pytest.mark.parametrize("n", [2, 3])
def test_a_double_route_names_both_halves_by_map_id(n):
    a, b = double(USA)
    text = refused([f"route {b} (", f"route {a} (", "two halves of a double route",
                    f"with {n} players only one"], board="usa", n=n, routes=[[a], [b]], ids=True)
    assert text.index(f"route {b}") < text.index(f"route {a}")      # the half given second
    refused("one seat may claim only one", board="usa", n=4, routes=[[a, b], []], ids=True)
    Game.from_position("usa", 4, routes=[[a], [b]], ids=True)        # open from 4 players


def test_other_fields_out_of_range():
    refused("current must be a whole number from 0 to 1", current=0.5)
    refused("current must be a whole number from 0 to 1", current=2)
    refused(["trains[0]", "from 0 to 45"], trains=[46, None])
    refused(["trains[0]", "from 0 to 41"], board="usa", routes=[[4], []], trains=[42, None],
            ids=True)
    refused(["stations[0]", "Paris is given twice"], stations=[["Paris", "Paris"], []])
    refused(["stations[1]", "Paris is also in stations[0]"], stations=[["Paris"], ["Paris"]])
    refused(["stations[0]", "4 stations, a seat has 3"],
            stations=[["Paris", "Roma", "Wien", "Kyiv"], []])
    refused(["stations[0]", "unknown city 'Atlantis'"], stations=[["Atlantis"], []])
    refused(["tunnel['wild']", "from 0 to 2"], hands=[{"red": 3}, {}],
            tunnel={"route": next(r for r in range(EU.n_routes) if EU.route_tunnel[r]
                                  and EU.route_len[r] == 2),
                    "color": "red", "wild": 3, "revealed": ["red"] * 3})
    refused("ids must be True", ids="yes")


# ------------------------------------------------------------------ from_position, random

FIELDS = {
    # field: (mutation of a valid position, words of the refusal)
    "hands-negative": (lambda p, b, rng: p["hands"][0].update({b.colors[0]: -1}), "hands[0]"),
    "hands-fraction": (lambda p, b, rng: p["hands"][-1].update({b.colors[1]: 1.5}), "hands["),
    "hands-colour": (lambda p, b, rng: p["hands"][0].update({"mauve": 1}), "unknown card 'mauve'"),
    "hands-short": (lambda p, b, rng: p["hands"].pop(), "hands: "),
    "hands-deck": (lambda p, b, rng: p["hands"][0].update({"wild": b.deck_wild + 1}),
                   "wild cards"),
    "routes-unknown": (lambda p, b, rng: p["routes"][0].append(int(b.route_id.max()) + 7),
                       "routes[0]: "),
    "routes-twice": (lambda p, b, rng: p["routes"][-1].append(p["routes"][0][0]), "also in routes[0]"),
    "tickets-unknown": (lambda p, b, rng: p["tickets"][0].append(-3), "tickets[0]: "),
    "tickets-twice": (lambda p, b, rng: p["tickets"][0].append(p["tickets"][0][0]), "given twice"),
    "tickets-deck": (lambda p, b, rng: p.update(ticket_deck_top=[p["tickets"][-1][0]]),
                     "ticket_deck_top: "),
    "stations-twice": (lambda p, b, rng: p["stations"][-1].append(p["stations"][0][0]),
                       "stations["),
    "current": (lambda p, b, rng: p.update(current=len(p["hands"])), "current must be"),
    "trains": (lambda p, b, rng: p.update(trains=[b.trains + 1] + [None] * (len(p["hands"]) - 1)),
               "trains[0]"),
    "faceup": (lambda p, b, rng: p.update(faceup=["wild"] * 4), "faceup needs five"),
}


def random_position(board, n, rng, ids):
    """A valid position: a few cards, single routes, tickets and stations per seat (regular
    tickets: a seat holds no more long tickets than setup deals it)."""
    singles = rng.permutation([r for r in range(board.n_routes) if board.route_partner[r] < 0])
    tickets = rng.permutation([t for t in range(board.n_tickets) if not board.ticket_long[t]])
    cities = rng.permutation(board.n_cities)
    pos = {"hands": [], "routes": [], "tickets": [], "stations": []}
    for q in range(n):
        pos["hands"].append({board.colors[int(c)]: 1 for c in rng.choice(len(board.colors), 3)}
                            | {"wild": int(rng.integers(0, 2))})
        own = [int(r) for r in singles[3 * q:3 * q + 3]]
        pos["routes"].append([int(board.route_id[r]) if ids else r for r in own])
        held = [int(t) for t in tickets[2 * q:2 * q + 2]]
        pos["tickets"].append([int(board.ticket_id[t]) if ids else t for t in held])
        pos["stations"].append([board.cities[int(x)] for x in cities[q:q + 1]]
                               if board.stations else [])
    return pos


@pytest.mark.parametrize("field", sorted(FIELDS))
def test_any_field_out_of_range_is_refused_naming_it(field):
    """Property: from a random valid position on any board, one field made impossible is
    refused with one line naming that field, never accepted and never a crash."""
    mutate, words = FIELDS[field]
    rng = np.random.default_rng(sum(map(ord, field)))
    for trial in range(6):
        board = (USA, EU, NY)[trial % 3]
        n = int(rng.integers(board.min_players, board.max_players + 1))
        ids = bool(trial % 2)
        pos = random_position(board, n, rng, ids)
        Game.from_position(board, n, ids=ids, **pos).state()         # valid as made
        if field == "stations-twice" and not board.stations:
            continue
        bad = json.loads(json.dumps(pos))
        mutate(bad, board, rng)
        with pytest.raises(ValueError) as info:
            Game.from_position(board, n, ids=ids, **bad)
        assert words in str(info.value) and "\n" not in str(info.value), (board.name, str(info.value))


def test_random_valid_positions_save_with_map_ids_and_load_back(tmp_path):
    rng = np.random.default_rng(7)
    for board in (USA, EU, NY):
        n = board.min_players + 1
        pos = random_position(board, n, rng, ids=True)
        g = Game.from_position(board, n, ids=True, **pos)
        g.save(tmp_path / "p.json")
        summary = json.loads((tmp_path / "p.json").read_text())["summary"]
        for q, p in enumerate(summary["players"]):
            assert sorted(p["routes"]) == sorted(pos["routes"][q])        # map ids, not indices
            assert sorted(p["tickets"]) == sorted(pos["tickets"][q])
            assert p["hand"] == {k: v for k, v in pos["hands"][q].items() if v}
        assert all(c is None or c in board.colors or c == "wild" for c in summary["faceup"])
        assert Game.load(tmp_path / "p.json").state() == g.state()


# ------------------------------------------------------------------ saved positions

@pytest.fixture
def saved():
    g = Game.from_position("usa", 2, hands=[{"red": 2}, {"blue": 1}], routes=[[4], []], ids=True)
    return g, json.loads(g.to_json())


def load_refused(d, *words):
    with pytest.raises(ValueError) as info:
        Game.from_json(json.dumps(d))
    for w in words:
        assert w in str(info.value), str(info.value)
    assert "another ttrsim version" not in str(info.value) or "damaged" in str(info.value)


def test_saved_position_fields_are_checked(saved):
    g, d = saved
    load_refused({k: v for k, v in d.items() if k != "state"}, "no 'state' field")
    load_refused(dict(d, n_players="two"), "n_players must be a player count of usa", "'two'")
    load_refused(dict(d, n_players=3), "n_players is 3 but its state is a 2-player game")
    load_refused(dict(d, version=99), "format version 99", "reads version 1")
    load_refused(dict(d, board=5), "board must be a board name")
    assert Game.from_json(json.dumps(d)).state() == g.state()


def test_a_damaged_state_is_called_damaged_not_another_version(saved):
    g, d = saved
    raw = bytearray(base64.b64decode(d["state"]))
    raw[200] ^= 0xFF
    flipped = base64.b64encode(bytes(raw)).decode()
    load_refused(dict(d, state=flipped), "state is damaged", "SHA-256")
    load_refused(dict(d, state=d["state"][:-12] + "!" * 12), "state is damaged", "base64")
    # a state of another size, with its own checksum: another version's, or damaged
    short = bytes(raw[:-8])
    resized = dict(d, state=base64.b64encode(short).decode(),
                   state_sha256=hashlib.sha256(short).hexdigest())
    unversioned = {k: v for k, v in resized.items() if k != "ttrsim_version"}
    load_refused(unversioned, "state is damaged", "another ttrsim version")
    load_refused(dict(resized, ttrsim_version="0.0.1"), "saved by ttrsim 0.0.1")


def test_a_position_without_its_checksum_is_refused(saved):
    """Without the state's SHA-256 a damaged state cannot be told from a sound one: a file
    whose checksum was deleted (or emptied) is refused, damaged or not."""
    g, d = saved
    for cut in ({k: v for k, v in d.items() if k != "state_sha256"}, dict(d, state_sha256=None)):
        load_refused(cut, "no 'state_sha256' field")
    # the halves of two positions' states put together, cards and routes no longer adding
    # up: refused as well, the checksum deleted to hide it
    other = Game.from_position("usa", 2, hands=[{"green": 5}, {}], routes=[[], [30]], ids=True)
    mine, theirs = base64.b64decode(d["state"]), other._core.state_bytes()
    spliced = base64.b64encode(mine[:len(mine) // 2] + theirs[len(mine) // 2:]).decode()
    load_refused({k: v for k, v in dict(d, state=spliced).items() if k != "state_sha256"},
                 "no 'state_sha256' field")
    assert Game.from_json(json.dumps(d)).state() == g.state()


def test_hand_made_train_counts_save_and_load(tmp_path):
    g = Game.from_position("usa", 2, trains=[12, None], hands=[{"red": 2}, {}])
    g.save(tmp_path / "p.json")
    assert Game.load(tmp_path / "p.json").state() == g.state()


def test_cli_analyse_names_the_damage_in_one_line(saved, tmp_path, capsys):
    _, d = saved
    (tmp_path / "p.json").write_text(json.dumps({k: v for k, v in d.items() if k != "state"}))
    assert main(["analyse", str(tmp_path / "p.json"), "--playouts", "5"]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "no 'state' field" in err


# ------------------------------------------------------------------ ticket fairness budgets

@pytest.fixture(scope="module")
def tiny_fairness():
    # the budget of `ttrsim ticket-fairness --games 5`: suggested 1 point for most tickets
    # (Seattle - New York 22 -> 1) and marked tickets never kept "balanceable"
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        return ticket_fairness("usa", 4, games=5, seed=0, rounds=2, n_resamples=40)


def test_a_tiny_budget_keeps_suggestions_within_the_documented_bounds(tiny_fairness):
    t = tiny_fairness.table
    printed = t[t["round"] == 0].set_index("ticket").points
    low = np.ceil(t.ticket.map(printed) / 2).clip(lower=1)
    high = np.floor(t.ticket.map(printed) * 2)
    assert ((t.suggested >= low) & (t.suggested <= high)).all()
    # a suggestion from the formula needs a completion rate above one half in that round
    bal = t[t.balanceable]
    assert (np.isfinite(bal.completion) & (bal.completion > 0.5)).all()
    assert (t[t["round"] == 0].balanceable == (t[t["round"] == 0].completion >= 0.6)).all()
    # where the formula does not apply, the points stay as they are
    rest = t[~t.balanceable]
    assert (rest.suggested == rest.points).all()


def test_a_tiny_budget_is_flagged_unreliable(tiny_fairness, capsys):
    t = tiny_fairness.table
    assert (t.reliable == (t.kept >= MIN_KEPT)).all() and not t.reliable.any()
    assert (tiny_fairness.spread.unreliable == 30).all()
    note = tiny_fairness.unreliable_note()
    assert note.startswith("UNRELIABLE: 30 tickets") and "play more than 150 games" in note
    assert np.isfinite(tiny_fairness.spread.spread).all()


def test_the_cli_prints_the_flag_without_a_warning(capsys):
    assert main(["ticket-fairness", "--games", "5", "--resamples", "40", "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert "UNRELIABLE: 30 tickets" in out and "reliable" in out.splitlines()[3]
    assert "Warning" not in err and "Warning" not in out


def test_a_sufficient_budget_is_not_flagged():
    f = ticket_fairness("newyork", 2, games=1500, seed=1, rounds=0, n_resamples=40)
    t = f.table
    assert t.reliable.all() == (t.kept >= MIN_KEPT).all()
    assert (f.unreliable_note() == "") == t.reliable.all()


@pytest.mark.parametrize("resamples, fewest", [(0, 40), (39, 40)])
def test_too_few_resamples_are_refused_naming_the_minimum(capsys, resamples, fewest):
    assert main(["ticket-fairness", "--board", "newyork", "--players", "2", "--games", "10",
                 "--resamples", str(resamples), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and f">= {fewest}" in err and "concatenate" not in err
    with pytest.raises(ValueError, match="at least 20 resamples"):
        ticket_fairness("newyork", 2, games=10, n_resamples=10, confidence=0.9)


# ------------------------------------------------------------------ route selections and rows

@pytest.mark.parametrize("routes, words", [([1, 1, 2], "route 1 is given twice"),
                                           ([], "no route given"),
                                           ([1, 999], "no route with id 999"),
                                           ([1.5], "not a route id")])
def test_a_route_selection_is_each_route_once(routes, words):
    with pytest.raises(ValueError, match=words):
        route_importance("newyork", 2, games=10, routes=routes)


@pytest.mark.parametrize("args, words", [
    (["--routes", "1,1,2"], "route 1 is given twice"),
    (["--routes", ""], "names no route"),
    (["--routes", " , "], "names no route"),
    (["--rows", "-1"], "--rows must be a positive integer"),
    (["--rows", "0"], "--rows must be a positive integer")])
def test_route_importance_selections_and_rows_are_refused(capsys, args, words):
    assert main(["route-importance", "--board", "newyork", "--players", "2", "--games", "10",
                 "--quiet", *args]) == 2
    out, err = capsys.readouterr()
    assert len(err.splitlines()) == 1 and words in err and out == ""


def test_compare_rows_are_refused(tmp_path, capsys):
    (tmp_path / "v.json").write_text(json.dumps({"base": "newyork", "trains": 14}))
    assert main(["compare", "--variant", str(tmp_path / "v.json"), "--players", "2",
                 "--games", "10", "--rows", "0", "--quiet"]) == 2
    assert "--rows must be a positive integer" in capsys.readouterr().err


# ------------------------------------------------------------------ directories

@pytest.fixture(scope="module")
def dirs(tmp_path_factory):
    root = tmp_path_factory.mktemp("dirs")
    simulate("newyork", 2, games=20, seed=1, out=root / "run")
    ticket_fairness("newyork", 2, games=20, seed=1, rounds=0, n_resamples=40, out=root / "fair")
    route_importance("newyork", 2, games=10, seed=1, routes=[1, 2], out=root / "ri")
    return root


@pytest.mark.parametrize("games", [20, 10, 40])
def test_simulate_on_a_study_directory_says_what_it_holds(dirs, capsys, games):
    for d, kind in (("fair", "a ticket-fairness study"), ("ri", "a route-importance study")):
        assert main(["simulate", "--board", "newyork", "--players", "2", "--games", str(games),
                     "--seed", "1", "--quiet", "--out", str(dirs / d)]) == 2
        err = capsys.readouterr().err
        assert f"holds {kind}, not a simulate run" in err and "rotate" not in err, err
        with pytest.raises(ValueError, match=f"holds {kind}, not a simulate run"):
            load_run(dirs / d)


def test_a_study_on_a_simulate_directory_says_what_it_holds(dirs):
    with pytest.raises(ValueError, match="holds a simulate run, not a ticket-fairness study"):
        ticket_fairness("newyork", 2, games=20, seed=1, rounds=0, n_resamples=40,
                        out=dirs / "run")
    with pytest.raises(ValueError, match="holds a ticket-fairness study, not a route-importance"):
        route_importance("newyork", 2, games=10, seed=1, routes=[1, 2], out=dirs / "fair")


def test_a_report_refused_for_a_damaged_part_leaves_no_directory(tmp_path, capsys):
    out = tmp_path / "run"
    simulate("newyork", 2, games=60, seed=2, batch_size=20, out=out)
    part = part_path(out, "routes", 1)
    part.write_bytes(part.read_bytes()[:40])
    assert main(["report", str(out), "--out", str(tmp_path / "rep")]) == 2
    assert "damaged" in capsys.readouterr().err
    assert not (tmp_path / "rep").exists()
    assert main(["report", str(out)]) == 2                 # the default RUN_DIR/report too
    assert not (out / "report").exists()
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "keep.txt").write_text("x")       # a directory of the user's: kept
    assert main(["report", str(out), "--out", str(tmp_path / "mine")]) == 2
    assert (tmp_path / "mine" / "keep.txt").exists()


def test_a_damaged_batch_is_forgotten_before_it_is_played_again(tmp_path, monkeypatch):
    """An interrupt while the damaged batch is played again must not leave it counted as
    saved (its done marker is removed first)."""
    import ttrsim.runner

    out = tmp_path / "run"
    simulate("newyork", 2, games=60, seed=2, batch_size=20, out=out)
    part = part_path(out, "routes", 1)
    part.write_bytes(part.read_bytes()[:40])

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(ttrsim.runner, "run_tasks", interrupted)
    with pytest.raises(KeyboardInterrupt):
        simulate("newyork", 2, games=60, seed=2, batch_size=20, out=out)
    assert not (out / "done" / "000001").exists()
    assert (out / "done" / "000000").exists() and (out / "done" / "000002").exists()
    with pytest.raises(ValueError, match="incomplete .1 of 3 batches missing"):
        load_run(out)
    monkeypatch.undo()
    simulate("newyork", 2, games=60, seed=2, batch_size=20, out=out)
    whole = simulate("newyork", 2, games=60, seed=2, batch_size=20)
    assert load_run(out).routes.equals(whole.routes)


# ------------------------------------------------------------------ policies and model files

def test_an_empty_setting_is_refused_not_defaulted():
    # expert:model= played the shipped model
    with pytest.raises(ValueError, match="parameter model has no value"):
        make_policy("expert:model=", None)
    with pytest.raises(ValueError, match="parameter risk has no value"):
        make_policy("tickets:risk= ", None)


def write_model(tmp_path, change):
    d = json.loads(open(load_model().path).read())
    change(d)
    path = tmp_path / "m.json"
    path.write_text(json.dumps(d))
    return path


@pytest.mark.parametrize("change, words", [
    (lambda d: d.pop("turns"), "no 'turns' section"),
    (lambda d: d.pop("features"), "no 'features' list"),
    # the right length, other order or names: the trees would read the wrong features
    (lambda d: d.update(features=[d["features"][1], d["features"][0], *d["features"][2:]]),
     f"feature 0 is {FEATURES[1]!r}, this ttrsim's is {FEATURES[0]!r}: another order"),
    (lambda d: d.update(features=[*d["features"][:5], "mystery", *d["features"][6:]]),
     f"feature 5 is 'mystery', this ttrsim's is {FEATURES[5]!r}: other names"),
    (lambda d: d.update(features=list(reversed(d["features"]))), "another order")])
def test_a_model_file_missing_a_part_or_with_other_features_is_refused(tmp_path, change, words):
    path = write_model(tmp_path, change)
    with pytest.raises(ModelFileError, match="m.json") as info:
        load_model(path)
    assert words in str(info.value)
    with pytest.raises(ValueError, match="m.json"):
        make_policy(f"expert:model={path}", None)


def test_a_setup_only_model_says_so(tmp_path):
    model = load_model(write_model(tmp_path, lambda d: d.update(turns=None)))
    assert model.turns is None and model.setup is not None


# ------------------------------------------------------------------ stronger play

def test_report_stronger_with_the_same_policies_is_refused(tmp_path, capsys):
    for name in ("a", "b"):
        simulate("newyork", 2, games=30, seed=4, out=tmp_path / name)
    assert main(["report", str(tmp_path / "a"), "--stronger", str(tmp_path / "b"),
                 "--out", str(tmp_path / "rep"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "same policies" in err and "no stronger play" in err
    assert not (tmp_path / "rep").exists()
    # through the API the section says what it is
    from ttrsim.analysis import compare_play
    from ttrsim.report import write_report

    a, b = load_run(tmp_path / "a"), load_run(tmp_path / "b")
    page = write_report(a, tmp_path / "api", stronger=compare_play(a, b)).read_text()
    section = page[page.index('<section id="stronger">'):]
    assert "The same policies played again" in section and "Under stronger play" not in section


def test_a_study_stronger_than_itself_is_refused(capsys):
    assert main(["route-importance", "--board", "newyork", "--players", "2", "--games", "10",
                 "--policy", "expert", "--stronger", "expert", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "--stronger expert: every seat plays expert already" in err


# ------------------------------------------------------------------ positions the rules rule out

LONG = [int(EU.ticket_id[t]) for t in np.flatnonzero(EU.ticket_long)]        # map ids
REGULAR = [int(EU.ticket_id[t]) for t in np.flatnonzero(~EU.ticket_long)]


@pytest.mark.parametrize("kw,words", [
    (lambda: {"offer": [LONG[0]] + REGULAR[:2]}, [f"offer: ticket {LONG[0]} ", "long ticket"]),
    (lambda: {"ticket_deck_top": REGULAR[:1] + [LONG[1]]},
     [f"ticket_deck_top: ticket {LONG[1]} ", "long ticket"]),
    (lambda: {"tickets": [[], LONG[:2]]}, ["tickets[1]: 2 long tickets", "1 to each seat"]),
])
def test_europe_s_long_tickets_are_dealt_only_at_setup(kw, words):
    """RULES.md: Europe deals each seat one long ticket at setup and the others are removed;
    none is offered or on the ticket deck later, and no seat holds two."""
    refused(words + ["dealt only at setup"], ids=True, **kw())
    g = Game.from_position("europe", 2, ids=True, tickets=[[LONG[0], REGULAR[0]], [LONG[1]]],
                           offer=REGULAR[1:4])
    assert g.phase == "keep_tickets"


TUNNEL = {"route": 5, "color": "wild", "revealed": ["red", "wild", "blue"]}   # 2 gray


@pytest.mark.parametrize("kw,words", [
    ({"trains": [1, None]}, "takes 2 trains and seat 0 has 1 left"),
    ({"routes": [[], [5]]}, "is owned by seat 1 (routes[1])"),
    ({"routes": [[70], []], "tunnel": dict(TUNNEL, route=71)},
     "seat 0 owns route 70 (Madrid - Pamplona (3 black, tunnel)), the other half of route 71"),
    ({"routes": [[], [70]], "tunnel": dict(TUNNEL, route=71)},
     "is closed: seat 1 owns its other half"),
    ({"tunnel": dict(TUNNEL, route=70, color="red")}, "is black: pay it with black cards"),
    ({"tunnel": dict(TUNNEL, color="red", wild=2)}, "give 'color': 'wild'"),
])
def test_an_impossible_tunnel_claim_is_refused_in_plain_words(kw, words):
    """The reason a tunnel's claim is impossible, in words (not an action code and the
    list of legal actions)."""
    text = refused(["tunnel: ", words], ids=True, **dict({"tunnel": TUNNEL}, **kw))
    assert len(text) < 200 and "legal" not in text and not re.search(r"\d{6}", text), text


def test_tunnel_odds_refuse_more_face_up_cards_than_the_row_holds():
    """Six red cards in a row of five were answered as if they lay there."""
    from ttrsim.analysis import tunnel_odds

    with pytest.raises(ValueError, match=r"counts 6 cards, but the face-up row holds 5"):
        tunnel_odds(EU, "red", faceup={"red": 6})
    with pytest.raises(ValueError, match=r"counts 7 cards"):
        tunnel_odds(EU, "red", faceup=[2, 0, 0, 0, 0, 0, 0, 0, 5])
    assert tunnel_odds(EU, "red", faceup={"red": 3, "wild": 2}).attrs["unseen"] == 110 - 5


@pytest.mark.parametrize("board", [None, 42, 3.5, ["usa"]])
def test_simulate_refuses_a_board_that_is_neither_a_name_nor_a_file(board):
    """None and 42 raised AttributeError from deep inside the configuration."""
    with pytest.raises(ValueError, match=r"^a board is a built-in name or a file path, got "):
        simulate(board, 2, games=2)
    with pytest.raises(ValueError, match="a board is a built-in name"):
        Game(board, 2)


def test_simulate_refuses_an_empty_out_as_the_command_line_does(capsys):
    """out="" was read as the current directory ("'.' holds no ttrsim run")."""
    for out in ("", "  "):
        with pytest.raises(ValueError) as info:
            simulate("newyork", 2, games=2, out=out)
        assert str(info.value).startswith("out (--out) is empty, which would mean the current "
                                          "directory")
    assert main(["simulate", "--board", "newyork", "--games", "2", "--quiet", "--out", ""]) == 2
    assert "--out is empty, which would mean the current directory" in capsys.readouterr().err


def test_profiles_read_a_saved_run_from_its_directory(tmp_path):
    """profile("runs/x") and compare_profiles([paths]) raised AttributeError; the command
    line reads the directory, and so do they."""
    from ttrsim.analysis import compare_profiles, profile

    out = tmp_path / "run"
    run = simulate("newyork", 2, games=20, seed=1, out=out)
    assert profile(str(out)).text() == profile(run).text()
    assert profile(out).text() == profile(run).text()
    side = compare_profiles([str(out), out], labels=["a", "b"])
    assert side.text() == compare_profiles([run, run], labels=["a", "b"]).text()
    with pytest.raises(FileNotFoundError, match="does not exist"):
        profile(str(tmp_path / "missing"))
    for bad in (42, None):
        with pytest.raises(ValueError, match=r"profile needs a run .* or a saved run's "
                                             rf"directory, got {bad}"):
            profile(bad)
        with pytest.raises(ValueError, match=r"compare_profiles needs a run"):
            compare_profiles([run, bad])


@pytest.mark.parametrize("action", ["x", "12", None, 1.5, True])
def test_game_apply_refuses_what_is_no_action(action):
    """apply("x") raised int()'s parsing error; apply("12") played code 12."""
    g = Game("usa", 2, seed=1)
    with pytest.raises(ValueError, match=r"an action is an Action .* or its integer code, got"):
        g.apply(action)
    g.apply(g.legal_actions()[0])
    g.apply(np.int32(g.legal_actions()[0].code))        # a numpy code is a code


STUDIES = {
    "simulate": lambda **kw: simulate("newyork", 2, games=2, **kw),
    "compare": lambda **kw: ttrsim.compare("newyork", "newyork", 2, games=2, **kw),
    "route_importance": lambda **kw: route_importance("newyork", 2, games=2, routes=[1], **kw),
    "ticket_fairness": lambda **kw: ticket_fairness("newyork", 2, games=2, **kw),
    "league": lambda **kw: ttrsim.league(policies=["tickets", "random"], games=2, **kw),
}


@pytest.mark.parametrize("name", list(STUDIES))
@pytest.mark.parametrize("kw, words", [
    (dict(scheduler="tcp://127.0.0.1:1"), "scheduler= (--scheduler) is the address of a dask "
                                          "scheduler: add backend='dask' (--backend dask)"),
    (dict(backend="dask"), "backend='dask' (--backend dask) needs scheduler= (--scheduler) "
                           "ADDRESS"),
    (dict(n_jobs=0), "n_jobs (--jobs) must be a number of workers"),
    (dict(backend="spark"), "unknown backend 'spark'"),
])
def test_simulate_and_every_study_check_their_workers_as_the_command_line(name, kw, words):
    """One check (ttrsim.dispatch.check_workers) for simulate, every study and the command
    line: a scheduler without dask was dropped without a word in Python (the shell refused
    it), a worker count of 0 refused only once the work was laid out."""
    if kw.get("backend") == "dask":
        pytest.importorskip("distributed")
    with pytest.raises(ValueError) as info:
        STUDIES[name](**kw)
    assert str(info.value).startswith(words), str(info.value)
    argv = {"n_jobs": ["--jobs", "0"], "backend": ["--backend", str(kw.get("backend"))],
            "scheduler": ["--scheduler", "tcp://127.0.0.1:1"]}[next(iter(kw))]
    if kw.get("backend") == "spark":
        return                                  # argparse's choices refuse it in the shell
    command = (words.replace("scheduler= (--scheduler)", "--scheduler")
               .replace("backend='dask' (--backend dask)", "--backend dask")
               .replace("n_jobs (--jobs)", "--jobs"))
    from ttrsim.dispatch import COMMAND_NAMES, PYTHON_NAMES, check_workers

    with pytest.raises(ValueError) as shell:
        check_workers(kw.get("n_jobs", 1), kw.get("backend", "loky"), kw.get("scheduler"),
                      COMMAND_NAMES)
    assert str(shell.value).startswith(command) and argv
    assert PYTHON_NAMES.keys() == COMMAND_NAMES.keys()
