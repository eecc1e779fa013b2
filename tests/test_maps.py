"""Map files and the map loader: published totals, reference data, validation, CLI."""
from __future__ import annotations

import copy
import hashlib
import json
import pickle
import re
from pathlib import Path

import numpy as np
import pytest

from ttrsim import maps
from ttrsim.maps import MapError

REPO = Path(__file__).resolve().parents[1]
REFERENCE = Path(__file__).resolve().parents[2] / "shared" / "maps"

# ---------------------------------------------------------------------------
# Published totals of the three boards
# ---------------------------------------------------------------------------

EIGHT = ["pink", "white", "blue", "yellow", "orange", "black", "red", "green"]

EXPECTED = {
    "usa": {
        "cities": 36,
        "routes": 100,
        "city_pairs": 78,
        "double_pairs": 22,
        "total_spaces": 309,
        "routes_by_length": {1: 9, 2: 36, 3: 20, 4: 16, 5: 10, 6: 9},
        "gray_routes": 44,
        "tunnels": 0,
        "ferries": 0,
        "ferry_wild_spaces": 0,
        "tickets": 30,
        "ticket_points": 349,
        "ticket_points_range": (4, 22),
        "regular_tickets": 30,
        "regular_ticket_points": 349,
        "long_tickets": 0,
        "long_ticket_points": 0,
        "route_points": {1: 1, 2: 2, 3: 4, 4: 7, 5: 10, 6: 15},
        "deck": {**{c: 12 for c in EIGHT}, "wild": 14},
        "deck_total": 110,
        "trains": 45,
        "stations": 0,
        "players": (2, 5),
        "attractions": 0,
    },
    "europe": {
        "cities": 47,
        "routes": 101,
        "city_pairs": 90,
        "double_pairs": 11,
        "total_spaces": 300,
        "routes_by_length": {1: 4, 2: 35, 3: 30, 4: 29, 6: 2, 8: 1},
        "gray_routes": 37,
        "tunnels": 18,
        "ferries": 13,
        "ferry_wild_spaces": 17,
        "tickets": 46,
        "ticket_points": 444,
        "ticket_points_range": (5, 21),
        "regular_tickets": 40,
        "regular_ticket_points": 321,
        "long_tickets": 6,
        "long_ticket_points": 123,
        "route_points": {1: 1, 2: 2, 3: 4, 4: 7, 6: 15, 8: 21},
        "deck": {**{c: 12 for c in EIGHT}, "wild": 14},
        "deck_total": 110,
        "trains": 45,
        "stations": 3,
        "players": (2, 5),
        "attractions": 0,
    },
    "newyork": {
        "cities": 15,
        "routes": 41,
        "city_pairs": 30,
        "double_pairs": 11,
        "total_spaces": 84,
        "routes_by_length": {1: 9, 2: 22, 3: 9, 4: 1},
        "gray_routes": 10,
        "tunnels": 0,
        "ferries": 0,
        "ferry_wild_spaces": 0,
        "tickets": 18,
        "ticket_points": 92,
        "ticket_points_range": (2, 8),
        "regular_tickets": 18,
        "regular_ticket_points": 92,
        "long_tickets": 0,
        "long_ticket_points": 0,
        "route_points": {1: 1, 2: 2, 3: 4, 4: 7},
        "deck": {"blue": 6, "green": 6, "black": 6, "pink": 6, "red": 6, "orange": 6, "wild": 8},
        "deck_total": 44,
        "trains": 15,
        "stations": 0,
        "players": (2, 4),
        "attractions": 9,
    },
}

RULES = {
    "usa": dict(
        initial_hand=4, deal_regular=3, deal_long=0, initial_keep=2,
        initial_discards_removed=False, draw_tickets=3, draw_keep=1, longest_bonus=10,
        double_min_players=4, end_trigger=2, wild_faceup_limit=3, max_redeals=3,
        station_points=0, attraction_points=0, wild="locomotive",
        tie_breaks=("tickets", "longest"),
    ),
    "europe": dict(
        initial_hand=4, deal_regular=3, deal_long=1, initial_keep=2,
        initial_discards_removed=True, draw_tickets=3, draw_keep=1, longest_bonus=10,
        double_min_players=4, end_trigger=2, wild_faceup_limit=3, max_redeals=3,
        station_points=4, attraction_points=0, wild="locomotive",
        tie_breaks=("tickets", "fewest_stations", "longest"),
    ),
    "newyork": dict(
        initial_hand=2, deal_regular=2, deal_long=0, initial_keep=1,
        initial_discards_removed=False, draw_tickets=2, draw_keep=1, longest_bonus=0,
        double_min_players=3, end_trigger=2, wild_faceup_limit=3, max_redeals=3,
        station_points=0, attraction_points=1, wild="taxi", tie_breaks=("tickets",),
    ),
}

NY_ATTRACTIONS = {
    "Central Park", "Times Square", "United Nations", "Empire State Building", "Chelsea",
    "Greenwich Village", "Chinatown", "Wall Street", "Brooklyn",
}


def test_available():
    assert maps.available() == ["usa", "europe", "newyork", "usa-1910", "usa-mega", "usa-bigcities"]


@pytest.mark.parametrize("name", ["usa", "europe", "newyork"])
@pytest.mark.parametrize("key", list(EXPECTED["usa"]))
def test_published_totals(name, key):
    assert maps.load(name).totals()[key] == EXPECTED[name][key]


@pytest.mark.parametrize("name", ["usa", "europe", "newyork"])
def test_rules(name):
    board = maps.load(name)
    for key, value in RULES[name].items():
        assert getattr(board, key) == value, key
    assert board.name == name
    assert (board.min_players, board.max_players) == EXPECTED[name]["players"]


def test_long_tickets_are_worth_20_or_21():
    europe = maps.load("europe")
    assert sorted(europe.ticket_points[europe.ticket_long].tolist()) == [20, 20, 20, 21, 21, 21]


def test_newyork_attractions():
    ny = maps.load("newyork")
    assert {ny.cities[i] for i in ny.attractions} == NY_ATTRACTIONS


def test_europe_double_tunnel():
    europe = maps.load("europe")
    names = [europe.route_name(i) for i in range(europe.n_routes)]
    i = names.index("Madrid - Pamplona (3 black, tunnel)")
    assert europe.route_name(europe.route_partner[i]) == "Madrid - Pamplona (3 white, tunnel)"


# ---------------------------------------------------------------------------
# The Board object
# ---------------------------------------------------------------------------

DTYPES = {
    "coords": np.float64,
    "route_id": np.int16,
    "route_a": np.int16,
    "route_b": np.int16,
    "route_len": np.int8,
    "route_color": np.int8,
    "route_tunnel": np.bool_,
    "route_ferry": np.int8,
    "route_partner": np.int16,
    "ticket_id": np.int16,
    "ticket_a": np.int16,
    "ticket_b": np.int16,
    "ticket_points": np.int16,
    "ticket_long": np.bool_,
    "deck_colors": np.int16,
}


@pytest.mark.parametrize("name", maps.available())
def test_board_arrays(name):
    b = maps.load(name)
    for attr, dtype in DTYPES.items():
        assert getattr(b, attr).dtype == dtype, attr
    assert b.coords.shape == (len(b.cities), 2)
    assert ((b.coords >= 0) & (b.coords <= 100)).all()
    assert b.city_index == {c: i for i, c in enumerate(b.cities)}
    assert len(b.colors) <= 8 and len(b.deck_colors) == len(b.colors)
    # partners are mutual and alike
    for i, j in enumerate(b.route_partner):
        if j >= 0:
            assert b.route_partner[j] == i
            assert {b.route_a[i], b.route_b[i]} == {b.route_a[j], b.route_b[j]}
            assert b.route_len[i] == b.route_len[j]
    assert ((b.route_color >= -1) & (b.route_color < len(b.colors))).all()
    assert isinstance(b.attractions, tuple) and isinstance(b.tie_breaks, tuple)


def test_board_is_frozen_and_picklable():
    b = maps.load("europe")
    with pytest.raises(AttributeError):
        b.trains = 10
    b2 = pickle.loads(pickle.dumps(b))
    assert b2 == b and hash(b2) == hash(b)
    assert np.array_equal(b2.route_partner, b.route_partner)
    assert b2.route_points == b.route_points
    assert b != maps.load("usa")


def test_checksum_is_canonical_json(tmp_path):
    src = REPO / "ttrsim" / "data" / "usa.json"
    data = json.loads(src.read_text(encoding="utf-8"))
    canon = json.dumps(data, sort_keys=True, separators=(",", ":"))
    expected = hashlib.sha256(canon.encode("utf-8")).hexdigest()
    builtin = maps.load("usa")
    assert builtin.checksum == expected and builtin.path is None
    # same content, other layout: same checksum
    other = tmp_path / "usa_copy.json"
    other.write_text(json.dumps(data, indent=1), encoding="utf-8")
    copy_ = maps.load(other)
    assert copy_.checksum == expected and copy_ == builtin
    assert copy_.path == str(other.resolve())


def test_load_variants():
    b = maps.load("Europe")  # built-in names are case-insensitive
    assert b.name == "europe"
    assert maps.load(b) is b
    assert maps.load(REPO / "ttrsim" / "data" / "newyork.json").name == "newyork"


def test_check_players():
    europe = maps.load("europe")
    assert europe.check_players(5) == 5
    with pytest.raises(ValueError, match="europe allows 2 to 5 players, got 6"):
        europe.check_players(6)
    with pytest.raises(ValueError, match="newyork allows 2 to 4 players, got 5"):
        maps.load("newyork").check_players(5)
    with pytest.raises(ValueError, match="got 1"):
        europe.check_players(1)


def test_frames_and_names():
    europe = maps.load("europe")
    routes = europe.routes_frame()
    assert list(routes.columns) == [
        "index", "id", "a", "b", "length", "points", "color", "tunnel", "ferry", "double",
    ]
    assert len(routes) == 101
    amsterdam_london = routes[(routes.a == "Amsterdam") & (routes.b == "London")].iloc[0]
    assert amsterdam_london.ferry == 2 and amsterdam_london.color == "gray"
    assert routes["double"].notna().sum() == 22
    assert routes["points"].sum() == sum(
        europe.route_points[int(n)] for n in europe.route_len
    )
    tickets = europe.tickets_frame()
    assert list(tickets.columns) == ["index", "id", "a", "b", "points", "long"]
    assert tickets["long"].sum() == 6
    assert europe.ticket_name(45) == "Palermo - Moskva (20, long)"
    assert europe.route_name(3) == "Amsterdam - London (2 gray, ferry 2)"
    assert "europe" in repr(europe) and "101 routes" in repr(europe)


# ---------------------------------------------------------------------------
# Route by route and ticket by ticket against the reference data
# ---------------------------------------------------------------------------


def _reference(name):
    path = REFERENCE / f"{name}.json"
    if not path.exists():
        pytest.skip("reference map data not available")
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", ["usa", "europe", "newyork"])
def test_routes_match_reference(name):
    ref = _reference(name)
    b = maps.load(name)
    assert set(b.cities) == set(ref["cities"])
    frame = b.routes_frame().set_index("id")
    assert sorted(frame.index) == sorted(r["id"] for r in ref["routes"])
    groups = {}
    for r in ref["routes"]:
        if r["double_group"] is not None:
            groups.setdefault(r["double_group"], set()).add(r["id"])
    for r in ref["routes"]:
        row = frame.loc[r["id"]]
        assert {row.a, row.b} == {r["a"], r["b"]}, r
        assert row.length == r["length"], r
        assert row.color == r["color"], r
        assert bool(row.tunnel) == r["tunnel"], r
        assert row.ferry == r["locomotives"] and (row.ferry > 0) == r["ferry"], r
        if r["double_group"] is None:
            assert row.double is pd_na(), r
        else:
            assert {r["id"], int(row.double)} == groups[r["double_group"]], r


def pd_na():
    import pandas as pd

    return pd.NA


@pytest.mark.parametrize("name", ["usa", "europe", "newyork"])
def test_tickets_match_reference(name):
    ref = _reference(name)
    frame = maps.load(name).tickets_frame().set_index("id")
    assert sorted(frame.index) == sorted(t["id"] for t in ref["tickets"])
    for t in ref["tickets"]:
        row = frame.loc[t["id"]]
        assert (row.a, row.b) == (t["a"], t["b"]), t
        assert row.points == t["points"] and bool(row.long) == t["long"], t


@pytest.mark.parametrize("name", ["usa", "europe", "newyork"])
def test_rule_numbers_match_reference(name):
    ref = _reference(name)
    b = maps.load(name)
    rules = ref["rules"]
    assert b.route_points == {int(k): v for k, v in rules["route_points"].items()}
    deck = rules.get("train_card_deck") or rules["transportation_card_deck"]
    assert list(b.colors) == deck["colors"]
    assert b.deck_colors.tolist() == [deck["per_color"]] * len(deck["colors"])
    assert b.deck_wild == deck.get("locomotives", deck.get("taxi_wild"))
    assert b.double_min_players == rules["double_routes_usable_both_min_players"]
    assert b.initial_hand == rules["initial_hand"]
    assert b.draw_tickets == rules["draw_tickets"]
    if name == "newyork":
        assert {b.cities[i] for i in b.attractions} == set(ref["tourist_attractions"])


# ---------------------------------------------------------------------------
# Custom boards and validation errors
# ---------------------------------------------------------------------------


def mini() -> dict:
    """A small valid board; the validation tests break it one way at a time."""
    route = lambda i, a, b, n, c, double=None, tunnel=False, ferry=0: {  # noqa: E731
        "id": i, "a": a, "b": b, "length": n, "color": c,
        "tunnel": tunnel, "ferry": ferry, "double": double,
    }
    return {
        "name": "mini",
        "title": "Mini board",
        "colors": ["red", "blue"],
        "wild": "locomotive",
        "cities": [
            {"name": "North", "x": 50, "y": 90},
            {"name": "West", "x": 10, "y": 50},
            {"name": "East", "x": 90, "y": 50},
            {"name": "South", "x": 50.5, "y": 10},
        ],
        "routes": [
            route(1, "North", "West", 2, "red"),
            route(2, "North", "East", 3, "gray", tunnel=True),
            route(3, "West", "South", 2, "red", double=4),
            route(4, "West", "South", 2, "blue", double=3),
            route(5, "East", "South", 2, "gray", ferry=1),
        ],
        "tickets": [
            {"id": 1, "a": "North", "b": "South", "points": 5, "long": False},
            {"id": 2, "a": "West", "b": "East", "points": 6, "long": False},
            {"id": 3, "a": "North", "b": "East", "points": 3, "long": False},
            {"id": 4, "a": "West", "b": "South", "points": 2, "long": False},
        ],
        "rules": {
            "players_min": 2, "players_max": 2, "trains": 10, "stations": 0,
            "station_points": 0, "initial_hand": 4, "deal_regular": 2, "deal_long": 0,
            "initial_keep": 1, "initial_discards_removed": False, "draw_tickets": 2,
            "draw_keep": 1, "longest_bonus": 10, "double_min_players": 3, "end_trigger": 2,
            "wild_faceup_limit": 3, "max_redeals": 3,
            "deck": {"red": 10, "blue": 10, "wild": 6},
            "route_points": {"1": 1, "2": 2, "3": 4},
            "attraction_points": 0,
            "tie_breaks": ["tickets", "longest"],
        },
        "attractions": [],
    }


def write(tmp_path, data, name="board.json") -> Path:
    path = tmp_path / name
    text = data if isinstance(data, str) else json.dumps(data)
    path.write_text(text, encoding="utf-8")
    return path


def test_custom_minimal_board(tmp_path):
    b = maps.load(write(tmp_path, mini()))
    assert b.name == "mini" and b.cities == ("North", "West", "East", "South")
    assert b.route_partner.tolist() == [-1, -1, 3, 2, -1]
    assert b.route_color.tolist() == [0, -1, 0, 1, -1]
    assert b.route_tunnel.tolist() == [False, True, False, False, False]
    assert b.route_ferry.tolist() == [0, 0, 0, 0, 1]
    assert b.deck_colors.tolist() == [10, 10] and b.deck_wild == 6
    assert b.totals()["double_pairs"] == 1
    assert b.coords[3].tolist() == [50.5, 10.0]
    assert b.attractions == () and b.stations == 0
    assert pickle.loads(pickle.dumps(b)) == b


def test_custom_board_optional_keys(tmp_path):
    data = mini()
    del data["attractions"]
    data["notes"] = "no attractions key"
    assert maps.load(write(tmp_path, data)).attractions == ()


def test_documented_example_loads():
    doc = REPO / "docs" / "maps.md"
    if not doc.exists():
        pytest.skip("docs not available")
    block = re.search(r"```json\n(.*?)```", doc.read_text(encoding="utf-8"), re.S).group(1)
    b = maps.from_dict(json.loads(block), "docs/maps.md")
    assert b.name == "mini"


def _route(data, rid):
    return next(r for r in data["routes"] if r["id"] == rid)


def _ticket(data, tid):
    return next(t for t in data["tickets"] if t["id"] == tid)


def _hub(data):
    """33 routes entering one city."""
    data["cities"] = [{"name": f"C{i}", "x": 1, "y": 1} for i in range(34)]
    data["routes"] = [
        {"id": i, "a": "C0", "b": f"C{i}", "length": 1, "color": "red",
         "tunnel": False, "ferry": 0, "double": None}
        for i in range(1, 34)
    ]
    data["tickets"] = [
        {"id": i, "a": "C0", "b": f"C{i}", "points": 1, "long": False} for i in range(1, 5)
    ]


def _set(path, value):
    """Mutation that sets data[path...] = value."""

    def mutate(data):
        obj = data
        for k in path[:-1]:
            obj = obj[k]
        obj[path[-1]] = value

    return mutate


def _route_set(rid, key, value):
    return lambda d: _route(d, rid).__setitem__(key, value)


def _ticket_set(tid, key, value):
    return lambda d: _ticket(d, tid).__setitem__(key, value)


def _delete(path):
    def mutate(data):
        obj = data
        for k in path[:-1]:
            obj = obj[k]
        del obj[path[-1]]

    return mutate


def _add_route(**kw):
    base = {"id": 9, "a": "North", "b": "West", "length": 2, "color": "blue",
            "tunnel": False, "ferry": 0, "double": None}
    return lambda d: d["routes"].append({**base, **kw})


# (test id, mutation, fragments the message must contain)
BAD = [
    ("missing_key", _delete(["routes"]), ["missing key 'routes'"]),
    ("unknown_key", _set(["rout"], []), ["unknown key 'rout'"]),
    ("missing_rule", _delete(["rules", "trains"]), ['"rules" is missing key \'trains\'']),
    ("missing_route_key", _delete(["routes", 0, "ferry"]), ["missing key 'ferry'"]),
    ("wrong_type_int", _set(["rules", "trains"], "45"), ["rules.trains must be a whole number"]),
    ("float_not_int", _route_set(1, "length", 2.0), ["route 1 length must be a whole number"]),
    ("wrong_type_bool", _route_set(2, "tunnel", "yes"), ["route 2 tunnel must be true or false"]),
    ("wrong_type_list", _set(["routes"], {}), ['"routes" must be a list']),
    ("wrong_type_city", _set(["cities", 0, "x"], "50"), ["city 'North': x must be a number"]),
    ("coordinate_range", _set(["cities", 0, "y"], 101), ["city 'North': y is 101"]),
    ("bad_name", _set(["name"], "my board"), ['"name" \'my board\' must be a short identifier']),
    ("route_unknown_city", _route_set(1, "b", "Nowhere"), ["route 1", "unknown city 'Nowhere'"]),
    ("ticket_unknown_city", _ticket_set(2, "a", "Nowhere"), ["ticket 2", "unknown city 'Nowhere'"]),
    ("length_without_points", _route_set(2, "length", 5), ["route 2", "length 5 has no score"]),
    ("unknown_colour", _route_set(1, "color", "purple"), ["route 1", "unknown colour 'purple'"]),
    ("reserved_colour", _set(["colors"], ["red", "gray"]), ["must not contain 'gray'"]),
    ("duplicate_colour", _set(["colors"], ["red", "red"]), ["colour 'red' appears twice"]),
    ("double_missing", _route_set(1, "double", 99), ["route 1", "route 99, which does not exist"]),
    ("double_self", _route_set(1, "double", 1), ["route 1: double points to itself"]),
    ("double_not_mutual", _route_set(5, "double", 3), ["route 5: double is 3, but route 3 has double 4"]),
    ("double_one_sided", _route_set(4, "double", None), ["route 3: double is 4, but route 4 has double null"]),
    (
        "double_endpoints",
        lambda d: (_route(d, 1).update(double=5), _route(d, 5).update(double=1, ferry=0)),
        ["routes 1 and 5", "join different cities"],
    ),
    ("double_length", _route_set(4, "length", 3), ["routes 3 and 4", "differ in length"]),
    ("double_tunnel", _route_set(4, "tunnel", True), ["routes 3 and 4", "differ in tunnel"]),
    ("double_ferry", _route_set(4, "ferry", 1), ["routes 3 and 4", "differ in ferry"]),
    ("parallel_not_double", _add_route(), ["routes 1, 9 join the same two cities"]),
    ("duplicate_route_id", _route_set(2, "id", 1), ["route id 1 is used twice"]),
    ("duplicate_ticket_id", _ticket_set(2, "id", 1), ["ticket id 1 is used twice"]),
    ("duplicate_city", _set(["cities", 1, "name"], "North"), ["city 'North' is listed twice"]),
    (
        "too_many_cities",
        lambda d: d.__setitem__("cities", [{"name": f"C{i}", "x": 0, "y": 0} for i in range(65)]),
        ['"cities" has 65 entries', "64"],
    ),
    ("too_many_routes", lambda d: d.__setitem__("routes", d["routes"] * 26), ['"routes" has 130 entries', "128"]),
    ("too_many_tickets", lambda d: d.__setitem__("tickets", d["tickets"] * 33), ['"tickets" has 132 entries', "128"]),
    ("too_many_colours", _set(["colors"], [f"c{i}" for i in range(9)]), ['"colors" has 9 entries', "8"]),
    ("route_too_long", _route_set(1, "length", 16), ["route 1 length is 16", "between 1 and 15"]),
    ("route_too_short", _route_set(1, "length", 0), ["route 1 length is 0", "between 1 and 15"]),
    ("too_many_players", _set(["rules", "players_max"], 6), ["rules.players_max is 6", "between 2 and 5"]),
    ("too_few_players", _set(["rules", "players_min"], 1), ["rules.players_min is 1", "between 2 and 5"]),
    ("players_min_above_max", _set(["rules", "players_min"], 3), ["players_min (3) is larger than", "players_max (2)"]),
    ("too_many_stations", _set(["rules", "stations"], 4), ["rules.stations is 4", "between 0 and 3"]),
    ("deck_too_large", _set(["rules", "deck", "red"], 250), ["rules.deck holds 266 cards", "limit is 255"]),
    ("deck_too_small", _set(["rules", "deck"], {"red": 3, "blue": 3, "wild": 2}), ["deck holds 8 cards, too few", "needs 13"]),
    ("deck_missing_colour", _delete(["rules", "deck", "blue"]), ["rules.deck is missing key 'blue'"]),
    ("deck_unknown_colour", _set(["rules", "deck", "purple"], 1), ["rules.deck has unknown key 'purple'"]),
    ("too_many_routes_at_city", _hub, ["city 'C0' has 33 routes", "limit is 32"]),
    ("deal_too_large", lambda d: d["rules"].update(deal_regular=5, deal_long=4), ["deal_regular + rules.deal_long is 9", "limit is 8"]),
    ("draw_too_large", _set(["rules", "draw_tickets"], 9), ["rules.draw_tickets is 9", "between 1 and 8"]),
    ("not_enough_regular_tickets", _set(["rules", "deal_regular"], 3), ["only 4 regular tickets", "needs 6"]),
    ("not_enough_long_tickets", _set(["rules", "deal_long"], 1), ["only 0 long tickets", "needs 2"]),
    ("initial_keep_above_deal", _set(["rules", "initial_keep"], 3), ["initial_keep (3) is more than the tickets dealt"]),
    ("draw_keep_above_draw", _set(["rules", "draw_keep"], 3), ["draw_keep (3) is more than rules.draw_tickets (2)"]),
    ("ferry_above_length", _route_set(5, "ferry", 3), ["route 5: ferry asks for 3 wild cards", "only 2 long"]),
    ("route_same_ends", _route_set(2, "b", "North"), ["route 2: both ends are 'North'"]),
    ("ticket_same_cities", _ticket_set(3, "b", "North"), ["ticket 3: both ends are 'North'"]),
    ("unknown_attraction", _set(["attractions"], ["Atlantis"]), ["attractions: unknown city 'Atlantis'"]),
    ("unknown_tie_break", _set(["rules", "tie_breaks"], ["tickets", "shortest"]), ["unknown tie-break 'shortest'"]),
    ("city_not_a_string", _route_set(1, "a", ["North"]), ["route 1 a must be a non-empty string"]),
    ("route_points_key", _set(["rules", "route_points", "x"], 1), ["route_points key 'x'"]),
    ("end_trigger", _set(["rules", "end_trigger"], 10), ["end_trigger (10) must be smaller than rules.trains (10)"]),
]


@pytest.mark.parametrize("mutate, fragments", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_validation_error(tmp_path, mutate, fragments):
    data = mini()
    mutate(data)
    path = write(tmp_path, data)
    with pytest.raises(MapError) as info:
        maps.load(path)
    msg = str(info.value)
    assert msg.startswith(f"{path}: "), msg
    for fragment in fragments:
        assert fragment in msg, msg


def test_not_json(tmp_path):
    path = write(tmp_path, '{"name": "mini",\n  oops}')
    with pytest.raises(MapError, match=r"not valid JSON: .* at line 2") as info:
        maps.load(path)
    assert str(path) in str(info.value)


def test_duplicate_json_key(tmp_path):
    text = json.dumps(mini()).replace('"double": null', '"double": null, "double": 3', 1)
    with pytest.raises(MapError, match="key 'double' appears twice"):
        maps.load(write(tmp_path, text))


def test_top_level_not_object(tmp_path):
    with pytest.raises(MapError, match="the file must be an object"):
        maps.load(write(tmp_path, "[1, 2]"))


def test_unknown_board_lists_builtins():
    with pytest.raises(MapError, match=r"unknown board 'atlantis'.*usa, europe, newyork"):
        maps.load("atlantis")


def test_directory_is_not_a_map(tmp_path):
    with pytest.raises(MapError, match="is a directory"):
        maps.load(tmp_path)


def test_map_error_is_value_error():
    assert issubclass(MapError, ValueError)


def test_from_dict_names_source():
    data = mini()
    data["rules"]["trains"] = 0
    with pytest.raises(MapError, match=r"^generated: rules.trains is 0"):
        maps.from_dict(data, "generated")


def test_original_data_not_modified():
    data = mini()
    before = copy.deepcopy(data)
    maps.from_dict(data)
    assert data == before


# ---------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------


def test_cli_maps_table(capsys):
    from ttrsim import cli

    assert cli.main(["maps"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == [
        "board", "cities", "routes", "doubles", "spaces", "gray", "tunnels", "ferries",
        "tickets", "deal/keep", "draw/keep", "longest", "globetrotter", "players", "trains",
    ]
    rows = {line.split()[0]: line for line in out[1:]}
    assert set(rows) == {"usa", "europe", "newyork", "usa-1910", "usa-mega", "usa-bigcities"}
    assert rows["usa"].split() == ["usa", "36", "100", "22", "309", "44", "0", "0", "30", "3/2",
                                   "3/1", "10", "0", "2-5", "45"]
    assert rows["europe"].split() == [
        "europe", "47", "101", "11", "300", "37", "18", "13", "(17", "wild)", "46", "(6", "long)",
        "4/2", "3/1", "10", "0", "2-5", "45",
    ]
    assert rows["newyork"].split() == ["newyork", "15", "41", "11", "84", "10", "0", "0", "18",
                                       "2/1", "2/1", "0", "0", "2-4", "15"]
    assert rows["usa-1910"].split()[8:] == ["35", "3/2", "3/1", "0", "15", "2-5", "45"]
    assert rows["usa-mega"].split()[8:] == ["69", "5/3", "4/1", "10", "15", "2-5", "45"]
    assert rows["usa-bigcities"].split()[8:] == ["35", "4/2", "4/1", "0", "0", "2-5", "45"]


def test_cli_maps_file(tmp_path, capsys):
    path = write(tmp_path, mini())
    from ttrsim import cli

    assert cli.main(["maps", str(path)]) == 0
    out = capsys.readouterr().out
    assert "mini: Mini board" in out
    assert str(path.resolve()) in out
    assert re.search(r"routes\s+5 \(4 city pairs, 1 double pairs\)", out)
    assert re.search(r"tunnels\s+1", out)
    assert "OK" in out


def test_cli_maps_bad_file_is_one_line(tmp_path, capsys):
    from ttrsim import cli

    data = mini()
    _route(data, 1)["b"] = "Nowhere"
    path = write(tmp_path, data)
    assert cli.main(["maps", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "unknown city 'Nowhere'" in err
