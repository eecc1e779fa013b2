"""Final scoring: route tables, tickets, longest trail, stations, attractions, tie-breaks.

Positions are hand-made with ``Game.from_position``; every test checks exact numbers.
"""
from __future__ import annotations

import pytest

from ttrsim import maps
from ttrsim.game import Game

USA = maps.load("usa")
EUROPE = maps.load("europe")
NY = maps.load("newyork")

TABLES = {
    "usa": {1: 1, 2: 2, 3: 4, 4: 7, 5: 10, 6: 15},
    "europe": {1: 1, 2: 2, 3: 4, 4: 7, 6: 15, 8: 21},
    "newyork": {1: 1, 2: 2, 3: 4, 4: 7},
}


def rt(board, a, b, color=None) -> int:
    """Index of the route between cities a and b (the half of that colour for a double;
    the first half of a gray double)."""
    ends = {board.city_index[a], board.city_index[b]}
    found = [i for i in range(board.n_routes)
             if {int(board.route_a[i]), int(board.route_b[i])} == ends
             and (color is None or board.color_name(int(board.route_color[i])) == color)]
    assert found and (len(found) == 1 or color is None and board.route_partner[found[0]] == found[1])
    return found[0]


def routes(board, *pairs) -> list:
    return [rt(board, *p) for p in pairs]


def ticket(board, a, b) -> int:
    ends = {board.city_index[a], board.city_index[b]}
    return next(t for t in range(board.n_tickets)
                if {int(board.ticket_a[t]), int(board.ticket_b[t])} == ends)


def col(scores, key) -> list:
    return [s[key] for s in scores]


# ---------------------------------------------------------------------------
# routes

@pytest.mark.parametrize("name", ["usa", "europe", "newyork"])
def test_route_scoring_table(name):
    board = maps.load(name)
    assert board.route_points == TABLES[name]
    for length, pts in TABLES[name].items():
        r = next(i for i in range(board.n_routes) if board.route_len[i] == length)
        g = Game.from_position(name, 2, routes=[[r]])
        assert g.state()["players"][0]["route_points"] == pts
        assert g.scores()[0]["route_points"] == pts
        assert g.state()["players"][0]["trains"] == board.trains - length


def test_route_points_scored_when_claimed():
    for length, pts in TABLES["usa"].items():
        r = next(i for i in range(USA.n_routes) if USA.route_len[i] == length)
        g = Game.from_position("usa", 2, hands=[{"wild": 6}, {}])
        g.apply(g.action("claim", route=r, color="wild"))
        assert g.state()["players"][0]["route_points"] == pts
    # Europe's 8: the Petrograd - Stockholm tunnel, nothing matching revealed
    r = rt(EUROPE, "Petrograd", "Stockholm")
    g = Game.from_position("europe", 2, hands=[{"red": 8}, {}], deck_top=["blue", "blue", "green"])
    g.apply(g.action("claim", route=r, color="red"))
    assert g.state()["players"][0]["route_points"] == 21


# ---------------------------------------------------------------------------
# tickets

def test_tickets_added_when_joined_subtracted_otherwise():
    g = Game.from_position("usa", 2, routes=[routes(USA, ("Denver", "Santa Fe"), ("El Paso", "Santa Fe"))],
                           tickets=[[ticket(USA, "Denver", "El Paso"), ticket(USA, "Boston", "Miami")]])
    sc = g.scores()[0]
    assert sc["ticket_points"] == 4 - 12
    assert sc["tickets_completed"] == 1 and sc["tickets_failed"] == 1
    assert sc["completed"] == [ticket(USA, "Denver", "El Paso")]
    assert sc["route_points"] == 4 and sc["longest"] == 4 and sc["longest_bonus"] == 10
    assert sc["total"] == 4 - 8 + 10


def test_tickets_need_a_path_of_own_routes():
    # seat 1 owns the middle of the path: seat 0's ticket fails (no station on USA)
    g = Game.from_position("usa", 2, routes=[routes(USA, ("Denver", "Santa Fe")),
                                             routes(USA, ("El Paso", "Santa Fe"))],
                           tickets=[[ticket(USA, "Denver", "El Paso")]])
    assert g.scores()[0]["ticket_points"] == -4


# ---------------------------------------------------------------------------
# longest trail

def test_longest_trail_with_a_loop_uses_each_route_once():
    tri = routes(USA, ("Denver", "Santa Fe"), ("Santa Fe", "Oklahoma City"),
                 ("Oklahoma City", "Denver", "red"))          # 2 + 3 + 4
    g = Game.from_position("usa", 2, routes=[tri])
    assert g.longest_trail(0) == 9                            # around once, not more
    tail = rt(USA, "El Paso", "Santa Fe")                     # 2
    g = Game.from_position("usa", 2, routes=[tri + [tail]])
    # El Paso - Santa Fe - Denver - Oklahoma City - Santa Fe: Santa Fe visited twice
    assert g.longest_trail(0) == 11 and g.scores()[0]["longest"] == 11
    g = Game.from_position("usa", 2, routes=[tri + [tail, rt(USA, "Denver", "Phoenix")]])
    # 4 odd cities: one route must be left out; the best leaves out a 2
    assert g.longest_trail(0) == 14


def test_longest_bonus_shared_by_all_tied():
    g = Game.from_position("usa", 3, routes=[routes(USA, ("Calgary", "Helena")),
                                             routes(USA, ("Chicago", "Omaha")),
                                             routes(USA, ("Chicago", "Duluth"))])
    sc = g.scores()
    assert col(sc, "longest") == [4, 4, 3]
    assert col(sc, "longest_bonus") == [10, 10, 0]
    assert col(sc, "total") == [17, 17, 4]


def test_no_longest_bonus_when_nobody_claimed_a_route():
    # Ruling: with no route claimed nobody gets the bonus.
    for name in ("usa", "europe"):
        sc = Game.from_position(name, 3).scores()
        assert col(sc, "longest") == [0, 0, 0] and col(sc, "longest_bonus") == [0, 0, 0]
        assert col(sc, "rank") == [1, 1, 1]


def test_newyork_has_no_longest_bonus_but_attractions():
    r = routes(NY, ("Central Park", "Lincoln Center"), ("Central Park", "Times Square", "black"))
    g = Game.from_position("newyork", 2, routes=[r])
    sc = g.scores()[0]
    assert sc["longest"] == 4 and sc["longest_bonus"] == 0
    # Central Park is touched by two routes but counts once; Lincoln Center is no attraction
    assert sc["attraction_points"] == 2
    assert sc["route_points"] == 4 and sc["total"] == 6


def test_newyork_attractions_each_counted_once():
    r = routes(NY, ("Chelsea", "Empire State Building"), ("Empire State Building", "Times Square", "pink"),
               ("Empire State Building", "United Nations"), ("Chelsea", "Greenwich Village", "red"))
    g = Game.from_position("newyork", 2, routes=[r])
    # Chelsea, Empire State Building, Times Square, United Nations, Greenwich Village
    assert g.scores()[0]["attraction_points"] == 5
    assert g.scores()[1]["attraction_points"] == 0


# ---------------------------------------------------------------------------
# stations

def test_unbuilt_stations_score_four_each():
    g = Game.from_position("europe", 3, stations=[["Lisboa"], [], ["Cadiz", "Roma", "Wien"]])
    sc = g.scores()
    assert col(sc, "station_points") == [8, 12, 0]
    assert col(sc, "stations_built") == [1, 0, 3]
    assert col(sc, "total") == [8, 12, 0]


def europe_station_position(tickets, stations):
    """Seat 1 owns Frankfurt - Paris and Dieppe - Paris; seat 0 owns Frankfurt - München -
    Wien - Zagrab and Edinburgh - London - Dieppe."""
    mine = routes(EUROPE, ("Frankfurt", "München"), ("München", "Wien"), ("Wien", "Zagrab"),
                  ("Edinburgh", "London", "black"), ("Dieppe", "London"))
    theirs = routes(EUROPE, ("Frankfurt", "Paris", "orange"), ("Dieppe", "Paris"))
    return Game.from_position("europe", 2, routes=[mine, theirs],
                              tickets=[[ticket(EUROPE, *t) for t in tickets]],
                              stations=[stations]), theirs


def test_station_borrows_the_best_route():
    g, (fra_par, die_par) = europe_station_position(
        [("Paris", "Wien"), ("Edinburgh", "Paris")], ["Paris"])
    sc = g.scores()[0]
    # via Frankfurt - Paris: Paris - Wien (8) done, Edinburgh - Paris (7) failed
    assert sc["borrowed"] == [fra_par]
    assert sc["ticket_points"] == 8 - 7 and sc["tickets_by_station"] == 1
    assert sc["by_station"] == [ticket(EUROPE, "Paris", "Wien")]
    assert sc["station_points"] == 8


def test_one_station_helps_two_tickets_through_the_same_route():
    g, (fra_par, die_par) = europe_station_position(
        [("Paris", "Wien"), ("Paris", "Zagrab"), ("Edinburgh", "Paris")], ["Paris"])
    sc = g.scores()[0]
    assert sc["borrowed"] == [fra_par]
    assert sc["ticket_points"] == 8 + 7 - 7
    assert sc["tickets_by_station"] == 2 and sc["tickets_completed"] == 2


def test_each_station_borrows_one_route_chosen_together():
    g, (fra_par, die_par) = europe_station_position(
        [("Paris", "Wien"), ("Edinburgh", "Paris")], ["Paris", "Dieppe"])
    sc = g.scores()[0]
    assert sorted(sc["borrowed"]) == sorted([fra_par, die_par])
    assert sc["ticket_points"] == 15 and sc["tickets_by_station"] == 2
    assert sc["station_points"] == 4
    # borrowed routes never count for the longest trail
    assert sc["longest"] == 7


def test_station_choice_equal_score_prefers_more_tickets():
    # Ruling: a station borrowing S-X completes A-X (6): 6 - 3 - 3 = 0; borrowing S-Y
    # completes A-Z and A-W (3 + 3): 3 + 3 - 6 = 0 too. Same ticket score: the choice
    # completing more tickets wins, although S-X comes first on the board.
    def route(i, a, b):
        return {"id": i, "a": a, "b": b, "length": 1, "color": "gray", "tunnel": False,
                "ferry": 0, "double": None}

    data = {
        "name": "stations", "title": "station tie", "colors": ["red"], "wild": "locomotive",
        "cities": [{"name": c, "x": 10 * i, "y": 50} for i, c in enumerate("SAXYZW")],
        "routes": [route(1, "S", "X"), route(2, "S", "Y"), route(3, "A", "S"),
                   route(4, "Y", "Z"), route(5, "Y", "W")],
        "tickets": [{"id": i + 1, "a": "A", "b": b, "points": p, "long": False}
                    for i, (b, p) in enumerate([("X", 6), ("Z", 3), ("W", 3)])],
        "rules": {
            "players_min": 2, "players_max": 2, "trains": 10, "stations": 1, "station_points": 4,
            "initial_hand": 2, "deal_regular": 1, "deal_long": 0, "initial_keep": 1,
            "initial_discards_removed": False, "draw_tickets": 1, "draw_keep": 1,
            "longest_bonus": 0, "double_min_players": 3, "end_trigger": 2,
            "wild_faceup_limit": 3, "max_redeals": 3, "deck": {"red": 10, "wild": 2},
            "route_points": {"1": 1}, "attraction_points": 0,
            "tie_breaks": ["tickets", "fewest_stations"],
        },
    }
    board = maps.from_dict(data)
    g = Game.from_position(board, 2, routes=[[2, 3, 4], [0, 1]], tickets=[[0, 1, 2]],
                           stations=[["S"]])
    sc = g.scores()[0]
    assert sc["ticket_points"] == 0 and sc["tickets_completed"] == 2
    assert sc["borrowed"] == [1] and sc["by_station"] == [1, 2]


def test_station_with_only_own_routes_borrows_nothing():
    g, _ = europe_station_position([("Paris", "Wien")], ["München"])
    sc = g.scores()[0]
    assert sc["borrowed"] == [-1] and sc["ticket_points"] == -8


def test_station_without_any_route_into_its_city():
    g, _ = europe_station_position([("Paris", "Wien")], ["Lisboa"])
    sc = g.scores()[0]
    assert sc["borrowed"] == [-1] and sc["ticket_points"] == -8 and sc["station_points"] == 8


# ---------------------------------------------------------------------------
# winner and tie-breaks

def ranks(g):
    sc = g.scores()
    return col(sc, "total"), col(sc, "rank")


def test_usa_most_points_win():
    g = Game.from_position("usa", 2, routes=[routes(USA, ("Denver", "Santa Fe")),
                                             routes(USA, ("Chicago", "Duluth"))])
    assert ranks(g) == ([2, 14], [2, 1])


def test_usa_tie_most_tickets_win():
    g = Game.from_position(
        "usa", 2,
        routes=[routes(USA, ("Denver", "Santa Fe"), ("El Paso", "Santa Fe")),
                routes(USA, ("Atlanta", "Charleston"), ("Charleston", "Raleigh"), ("Chicago", "Duluth"))],
        tickets=[[ticket(USA, "Denver", "El Paso")], []])
    assert ranks(g) == ([18, 18], [1, 2])


def test_usa_tie_then_longest_path_holder_wins():
    g = Game.from_position(
        "usa", 2,
        routes=[routes(USA, ("Denver", "Santa Fe"), ("El Paso", "Santa Fe"), ("El Paso", "Phoenix")),
                routes(USA, ("Calgary", "Winnipeg"), ("Atlanta", "Charleston"), ("Atlanta", "Nashville"))])
    sc = g.scores()
    assert col(sc, "longest") == [7, 6] and col(sc, "longest_bonus") == [10, 0]
    assert ranks(g) == ([18, 18], [1, 2])


def test_usa_full_tie_shared_win():
    g = Game.from_position(
        "usa", 3,
        routes=[routes(USA, ("Denver", "Santa Fe"), ("El Paso", "Santa Fe"), ("El Paso", "Phoenix")),
                routes(USA, ("Atlanta", "Charleston"), ("Charleston", "Raleigh"), ("Nashville", "Raleigh")),
                routes(USA, ("Seattle", "Vancouver"))])
    assert ranks(g) == ([18, 18, 1], [1, 1, 3])


EU_SIX = ("Budapest", "Kyiv")                                   # 6, 15 points
EU_FOURS = [("Athina", "Sarajevo"), ("Berlin", "Danzig"), ("Edinburgh", "London", "black")]


def test_europe_tie_fewest_stations_before_longest():
    g = Game.from_position("europe", 2, routes=[routes(EUROPE, EU_SIX), routes(EUROPE, *EU_FOURS)],
                           stations=[["Lisboa"], []])
    sc = g.scores()
    assert col(sc, "longest_bonus") == [10, 0]
    # 15 + 8 + 10 against 21 + 12: the one with fewer stations wins despite the bonus
    assert ranks(g) == ([33, 33], [2, 1])


def test_europe_tie_most_tickets_before_fewest_stations():
    g = Game.from_position(
        "europe", 2,
        routes=[routes(EUROPE, ("Budapest", "Sarajevo"), ("Sarajevo", "Sofia")),
                routes(EUROPE, ("Athina", "Sarajevo"), ("Berlin", "Wien"), ("Bruxelles", "Dieppe"))],
        tickets=[[ticket(EUROPE, "Budapest", "Sofia")], []],
        stations=[["Lisboa", "Cadiz"], []])
    sc = g.scores()
    assert col(sc, "tickets_completed") == [1, 0] and col(sc, "stations_built") == [2, 0]
    # 6 + 5 + 4 + 10 against 13 + 12
    assert ranks(g) == ([25, 25], [1, 2])


def test_europe_tie_then_european_express_holder_wins():
    g = Game.from_position(
        "europe", 2,
        routes=[routes(EUROPE, EU_SIX),
                routes(EUROPE, *EU_FOURS, ("Brest", "Paris"))])
    assert col(g.scores(), "longest_bonus") == [10, 0]
    assert ranks(g) == ([37, 37], [1, 2])


def test_europe_full_tie_shared_win():
    g = Game.from_position("europe", 2, routes=[routes(EUROPE, EU_SIX),
                                                routes(EUROPE, ("Palermo", "Smyrna"))])
    assert col(g.scores(), "longest_bonus") == [10, 10]
    assert ranks(g) == ([37, 37], [1, 1])


def test_newyork_tie_most_tickets_win():
    g = Game.from_position(
        "newyork", 2,
        routes=[routes(NY, ("Central Park", "Lincoln Center"), ("Lincoln Center", "Midtown West")),
                routes(NY, ("Brooklyn", "Lower East Side"), ("East Village", "Lower East Side"),
                       ("East Village", "Gramercy Park"))],
        tickets=[[ticket(NY, "Central Park", "Midtown West")], []])
    # 4 + 1 attraction + 3 against 7 + 1 attraction
    assert ranks(g) == ([8, 8], [1, 2])


def test_newyork_full_tie_shared_even_with_a_longer_trail():
    g = Game.from_position(
        "newyork", 2,
        routes=[routes(NY, ("Central Park", "Lincoln Center"), ("Lincoln Center", "Midtown West")),
                routes(NY, ("Brooklyn", "Lower East Side"))])
    sc = g.scores()
    assert col(sc, "longest") == [4, 3]
    assert ranks(g) == ([5, 5], [1, 1])
