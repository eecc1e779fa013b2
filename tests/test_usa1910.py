"""USA 1910: the 1910, Mega Game and Big Cities ways to play (decks, deals, the
Globetrotter bonus, tie-breaks) from hand-made positions, and the map-format rules they use.

Ticket ids are the map file's (1910 deck 101-135, the Mega Game's other tickets 201-234);
``ids=True`` positions name tickets and routes by them.
"""
from __future__ import annotations

import json

import numpy as np
import pytest

from ttrsim import maps
from ttrsim.actions import IllegalActionError
from ttrsim.game import Game
from ttrsim.maps import MapError


def rt(board, a, b, color=None) -> int:
    """Index of the route between cities a and b (the first half of a double unless a
    colour is given)."""
    ends = {board.city_index[a], board.city_index[b]}
    found = [i for i in range(board.n_routes)
             if {int(board.route_a[i]), int(board.route_b[i])} == ends
             and (color is None or board.color_name(int(board.route_color[i])) == color)]
    assert found, (a, b)
    return found[0]

USA = maps.load("usa")
B1910 = maps.load("usa-1910")
MEGA = maps.load("usa-mega")
BIG = maps.load("usa-bigcities")
BOARDS = {"usa-1910": B1910, "usa-mega": MEGA, "usa-bigcities": BIG}
# (deal, keep at setup, draw, keep on a draw, longest bonus, Globetrotter, tie-breaks)
RULES = {"usa": (3, 2, 3, 1, 10, 0, ("tickets", "longest")),
         "usa-1910": (3, 2, 3, 1, 0, 15, ("tickets",)),
         "usa-mega": (5, 3, 4, 1, 10, 15, ("tickets", "longest")),
         "usa-bigcities": (4, 2, 4, 1, 0, 0, ("tickets",))}
BIG_CITIES = {"Chicago", "Dallas", "Houston", "Los Angeles", "Miami", "New York", "Seattle"}


def col(scores, key) -> list:
    return [s[key] for s in scores]


def keep_masks(g) -> list:
    return sorted(a.mask for a in g.legal_actions() if a.kind == "keep")


def masks_with_at_least(n_offered, k) -> list:
    return [m for m in range(1, 1 << n_offered) if bin(m).count("1") >= min(k, n_offered)]


def tix(board, *pairs) -> list:
    """Ticket indices by their two cities."""
    out = []
    for a, b in pairs:
        ends = {board.city_index[a], board.city_index[b]}
        out.append(next(t for t in range(board.n_tickets)
                        if {int(board.ticket_a[t]), int(board.ticket_b[t])} == ends))
    return out


# ---------------------------------------------------------------------------
# the boards

def test_the_three_boards_are_built_in_and_listed():
    assert maps.available()[:3] == ["usa", "europe", "newyork"]
    assert set(BOARDS) <= set(maps.available())
    table = maps.boards_table()
    for name in BOARDS:
        assert name in table


@pytest.mark.parametrize("name", list(RULES))
def test_deal_keep_draw_and_bonuses(name):
    b = maps.load(name)
    got = (b.deal_regular, b.initial_keep, b.draw_tickets, b.draw_keep, b.longest_bonus,
           b.globetrotter_bonus, b.tie_breaks)
    assert got == RULES[name]
    assert b.deal_long == 0 and not b.initial_discards_removed   # returned to the bottom


def test_decks_ticket_by_ticket():
    assert (B1910.n_tickets, MEGA.n_tickets, BIG.n_tickets) == (35, 69, 35)
    assert int(B1910.ticket_points.sum()) == 391 and int(MEGA.ticket_points.sum()) == 754
    assert list(B1910.ticket_id) == list(range(101, 136))
    assert list(MEGA.ticket_id) == list(range(101, 136)) + list(range(201, 235))
    mega = MEGA.tickets_frame().set_index("id")
    # the 1910 deck is the first 35 of the Mega deck, point for point
    assert B1910.tickets_frame().set_index("id")[["a", "b", "points"]].astype(str).equals(
        mega.loc[101:135, ["a", "b", "points"]].astype(str))
    # Big Cities: exactly the Mega tickets that name a big city
    names = lambda fr: {(r.a, r.b, r.points) for r in fr.itertuples()}   # noqa: E731
    big = {(r.a, r.b, r.points) for r in mega.itertuples() if {r.a, r.b} & BIG_CITIES}
    assert names(BIG.tickets_frame()) == big and len(big) == 35
    # the Mega deck reprints the 30 base tickets, four of them for fewer points
    base = {frozenset((r.a, r.b)): r.points for r in USA.tickets_frame().itertuples()}
    reprint = {frozenset((r.a, r.b)): r.points for r in mega.loc[201:234].itertuples()
               if frozenset((r.a, r.b)) in base}
    assert len(reprint) == 30
    lowered = {tuple(sorted(k)): (base[k], v) for k, v in reprint.items() if v != base[k]}
    assert lowered == {("Los Angeles", "Miami"): (20, 19), ("Los Angeles", "New York"): (21, 20),
                       ("Oklahoma City", "Sault St. Marie"): (9, 8),
                       ("New York", "Seattle"): (22, 20)}
    # no city pair twice in a deck: "A - B (points)" names each ticket of a board once
    for b in BOARDS.values():
        assert len({b.ticket_name(t) for t in range(b.n_tickets)}) == b.n_tickets


@pytest.mark.parametrize("name", list(BOARDS))
def test_same_map_cards_and_scoring_as_usa(name):
    b = BOARDS[name]
    assert b.cities == USA.cities and np.array_equal(b.coords, USA.coords)
    for f in ("route_id", "route_a", "route_b", "route_len", "route_color", "route_partner",
              "deck_colors"):
        assert np.array_equal(getattr(b, f), getattr(USA, f)), f
    assert (b.route_points, b.deck_wild, b.trains, b.initial_hand, b.double_min_players) == \
           (USA.route_points, USA.deck_wild, USA.trains, USA.initial_hand, USA.double_min_players)


def test_existing_boards_have_no_globetrotter_and_keep_their_checksums():
    # files without the optional key read as 0 and keep their checksum (runs saved before
    # the key existed still open)
    for name in ("usa", "europe", "newyork"):
        b = maps.load(name)
        assert b.globetrotter_bonus == 0
        text = (maps.resources.files("ttrsim") / "data" / f"{name}.json").read_text("utf-8")
        assert "globetrotter" not in text
        assert b.checksum == maps.checksum(json.loads(text))


# ---------------------------------------------------------------------------
# Globetrotter

def test_globetrotter_to_every_seat_tied_for_most_completed_tickets():
    # seats 0 and 1 complete two tickets each, seat 2 one: 15 to seats 0 and 1
    r = lambda *p: rt(B1910, *p)    # noqa: E731
    routes = [[r("Chicago", "Pittsburgh"), r("Pittsburgh", "New York"), r("New York", "Boston")],
              [r("Salt Lake City", "Denver"), r("Denver", "Kansas City"),
               r("Kansas City", "Saint Louis")],
              [r("Chicago", "Saint Louis"), r("Saint Louis", "Nashville"), r("Nashville", "Atlanta")]]
    t0 = tix(B1910, ("Chicago", "New York"), ("Chicago", "Boston"))
    t1 = tix(B1910, ("Denver", "Saint Louis"), ("Salt Lake City", "Kansas City"))
    t2 = tix(B1910, ("Chicago", "Atlanta"), ("Las Vegas", "Miami"))
    assert all(B1910.ticket_id[t] > 100 for t in t0 + t1 + t2)
    g = Game.from_position("usa-1910", 3, routes=routes, tickets=[t0, t1, t2])
    sc = g.scores()
    assert col(sc, "tickets_completed") == [2, 2, 1]
    assert col(sc, "globetrotter") == [15, 15, 0]
    assert col(sc, "longest_bonus") == [0, 0, 0]          # no longest path in 1910
    for s in sc:
        assert s["total"] == s["route_points"] + s["ticket_points"] + s["globetrotter"]
    # one more completed ticket for seat 2 (Saint Louis - Miami is not joined): still 2
    # seats; a third completed ticket for seat 0 alone takes the bonus from seat 1
    t0b = t0 + tix(B1910, ("Nashville", "New York"))
    routes[0] = routes[0] + [r("Pittsburgh", "Nashville")]
    sc = Game.from_position("usa-1910", 3, routes=routes, tickets=[t0b, t1, t2]).scores()
    assert col(sc, "tickets_completed") == [3, 2, 1]
    assert col(sc, "globetrotter") == [15, 0, 0]


def test_globetrotter_counts_completed_tickets_not_their_points():
    # seat 1 scores more ticket points with one ticket; seat 0 completes two small ones
    r = lambda *p: rt(MEGA, *p)     # noqa: E731
    t0 = tix(MEGA, ("Boston", "Washington"), ("Vancouver", "Portland"))      # 4 + 2
    t1 = tix(MEGA, ("Los Angeles", "New York"))
    assert [int(MEGA.ticket_points[t]) for t in t0 + t1] == [4, 2, 20]
    lax_ny = [("Los Angeles", "Phoenix"), ("Phoenix", "Denver"), ("Denver", "Kansas City"),
              ("Kansas City", "Saint Louis"), ("Saint Louis", "Pittsburgh"),
              ("Pittsburgh", "New York")]
    routes = [[r("Boston", "New York"), r("New York", "Washington"),
               r("Vancouver", "Seattle"), r("Seattle", "Portland")],
              [r(*p) for p in lax_ny]]
    sc = Game.from_position("usa-mega", 2, routes=routes, tickets=[t0, t1]).scores()
    assert col(sc, "tickets_completed") == [2, 1]
    assert col(sc, "ticket_points") == [6, 20]
    assert col(sc, "globetrotter") == [15, 0]
    assert col(sc, "longest_bonus") == [0, 10]            # Mega keeps the longest path
    assert sc[1]["total"] == sc[1]["route_points"] + 20 + 10
    assert sc[0]["total"] == sc[0]["route_points"] + 6 + 15


def test_no_globetrotter_when_nobody_completed_a_ticket():
    # Ruling: with no completed ticket nobody scores it (not every seat "tied at 0")
    t = tix(B1910, ("Las Vegas", "Miami"), ("Calgary", "Nashville"))
    g = Game.from_position("usa-1910", 2, tickets=[[t[0]], [t[1]]],
                           routes=[[rt(B1910, "Denver", "Santa Fe")], []])
    sc = g.scores()
    assert col(sc, "tickets_completed") == [0, 0] and col(sc, "globetrotter") == [0, 0]
    sc = Game.from_position("usa-mega", 3).scores()      # no ticket held at all
    assert col(sc, "globetrotter") == [0, 0, 0] and col(sc, "rank") == [1, 1, 1]


def test_globetrotter_only_where_the_board_has_it():
    t = tix(BIG, ("Chicago", "New York"))
    sc = Game.from_position("usa-bigcities", 2, tickets=[t, []],
                            routes=[[rt(BIG, "Chicago", "Pittsburgh"),
                                     rt(BIG, "Pittsburgh", "New York")], []]).scores()
    assert sc[0]["tickets_completed"] == 1 and col(sc, "globetrotter") == [0, 0]
    assert col(sc, "longest_bonus") == [0, 0]
    t = tix(USA, ("Denver", "El Paso"))
    sc = Game.from_position("usa", 2, tickets=[t, []],
                            routes=[[rt(USA, "Denver", "Santa Fe"), rt(USA, "Santa Fe", "El Paso")],
                                    []]).scores()
    assert sc[0]["tickets_completed"] == 1 and col(sc, "globetrotter") == [0, 0]


# ---------------------------------------------------------------------------
# tie-breaks

def test_equal_totals_most_tickets_wins_and_holds_the_globetrotter():
    # 23 points each: seat 0 with a ticket and the Globetrotter (4 + 4 + 15), seat 1 from
    # routes alone (15 + 7 + 1); the completed ticket breaks the tie. (Seats tied on points
    # and on completed tickets either both hold the Globetrotter or neither does, so it
    # never decides a tie by itself.)
    r = lambda *p: rt(B1910, *p)    # noqa: E731
    g = Game.from_position("usa-1910", 2, tickets=[tix(B1910, ("Washington", "Atlanta")), []],
                           routes=[[r("Washington", "Raleigh"), r("Raleigh", "Atlanta")],
                                   [r("Helena", "Seattle"), r("Chicago", "Omaha"),
                                    r("Seattle", "Vancouver")]])
    sc = g.scores()
    assert col(sc, "globetrotter") == [15, 0]
    assert col(sc, "total") == [23, 23]
    assert col(sc, "rank") == [1, 2]


def test_mega_equal_points_and_tickets_the_longest_path_wins():
    # 25 each, no ticket: seat 0 a 6 (15) and the longest path (10); seat 1 routes of
    # 5, 5, 3 and 1 that do not join (10 + 10 + 4 + 1)
    r = lambda *p: rt(MEGA, *p)     # noqa: E731
    routes = [[r("Helena", "Seattle")],
              [r("Portland", "San Francisco"), r("Saint Louis", "Pittsburgh"),
               r("Chicago", "Duluth"), r("Seattle", "Vancouver")]]
    g = Game.from_position("usa-mega", 2, routes=routes)
    sc = g.scores()
    assert col(sc, "longest") == [6, 5] and col(sc, "longest_bonus") == [10, 0]
    assert col(sc, "globetrotter") == [0, 0] and col(sc, "total") == [25, 25]
    assert col(sc, "rank") == [1, 2]
    # on 1910 (no longest path) the same routes score their points only
    sc = Game.from_position("usa-1910", 2, routes=routes).scores()
    assert col(sc, "total") == [15, 25] and col(sc, "rank") == [2, 1]


def test_full_tie_shares_the_win_on_1910():
    sc = Game.from_position("usa-1910", 2, routes=[[rt(B1910, "Denver", "Santa Fe")],
                                                   [rt(B1910, "Santa Fe", "El Paso")]]).scores()
    assert col(sc, "total") == [2, 2] and col(sc, "rank") == [1, 1]


# ---------------------------------------------------------------------------
# dealing and drawing tickets

@pytest.mark.parametrize("name", list(BOARDS))
@pytest.mark.parametrize("n", [2, 5])
def test_setup_deal_keep_minimum_and_returned_to_the_bottom(name, n):
    b = BOARDS[name]
    deal, keep = b.deal_regular, b.initial_keep
    g = Game(name, n, seed=7)
    st = g.state()
    assert len(st["ticket_deck"]) == b.n_tickets - deal * n and st["removed"] == []
    assert all(len(p["pending"]) == deal for p in st["players"])
    returned = []
    for q in range(n):
        assert keep_masks(g) == masks_with_at_least(deal, keep)
        pend = g.state()["players"][q]["pending"]
        # below the minimum is refused
        with pytest.raises(IllegalActionError):
            g.apply(g.action("keep", mask=(1 << (keep - 1)) - 1 or 0))
        mask = (1 << keep) - 1
        returned += pend[keep:]
        g.apply(g.action("keep", mask=mask))
        g._core.check()
        assert g.state()["players"][q]["n_tickets"] == keep
    st = g.state()
    assert st["ticket_deck"][-len(returned):] == returned
    assert len(st["ticket_deck"]) == b.n_tickets - keep * n
    assert g.phase == "turn" and g.current_player == 0


@pytest.mark.parametrize("name", list(BOARDS))
def test_draw_deals_the_boards_count_keep_at_least_one(name):
    b = BOARDS[name]
    top = list(range(b.draw_tickets + 1))
    g = Game.from_position(name, 2, ticket_deck_top=top)
    n = len(g.state()["ticket_deck"])
    g.apply(g.action("draw_tickets"))
    st = g.state()
    assert st["players"][0]["pending"] == top[:b.draw_tickets]
    assert len(st["ticket_deck"]) == n - b.draw_tickets
    assert keep_masks(g) == masks_with_at_least(b.draw_tickets, 1)
    with pytest.raises(IllegalActionError):
        g.apply(g.action("keep", mask=0))
    g.apply(g.action("keep", mask=0b0101))
    st = g.state()
    assert st["players"][0]["tickets"] == [0, 2]
    assert st["ticket_deck"][-(b.draw_tickets - 2):] == [t for t in top[:b.draw_tickets]
                                                         if t not in (0, 2)]
    g._core.check()


def test_mega_draw_of_four_from_a_deck_of_two():
    held = [t for t in range(MEGA.n_tickets) if t not in (40, 12)]
    g = Game.from_position("usa-mega", 2, tickets=[held[:34], held[34:]], ticket_deck_top=[40, 12])
    assert g.state()["ticket_deck"] == [40, 12]
    g.apply(g.action("draw_tickets"))
    assert g.state()["players"][0]["pending"] == [40, 12]
    assert g.state()["ticket_deck"] == []
    assert keep_masks(g) == [1, 2, 3]
    g.apply(g.action("keep", mask=0b10))
    assert g.state()["ticket_deck"] == [40]
    assert 12 in g.state()["players"][0]["tickets"]
    g._core.check()


@pytest.mark.parametrize("name", list(BOARDS))
def test_no_ticket_draw_from_an_empty_ticket_deck(name):
    b = BOARDS[name]
    half = b.n_tickets // 2
    g = Game.from_position(name, 2, tickets=[list(range(half)), list(range(half, b.n_tickets))])
    assert g.state()["ticket_deck"] == []
    assert "draw_tickets" not in {a.kind for a in g.legal_actions()}
    with pytest.raises(IllegalActionError):
        g.apply(g.action("draw_tickets"))


def test_keep_minimum_above_one_on_a_short_draw(tmp_path):
    # a custom board keeping at least 2 of 3 on a draw: with 1 ticket left, it must keep it
    data = json.loads((maps.resources.files("ttrsim") / "data" / "usa-1910.json").read_text("utf-8"))
    data["name"] = "keep2"
    data["rules"]["draw_keep"] = 2
    b = maps.from_dict(data)
    held = [t for t in range(b.n_tickets) if t != 9]
    g = Game.from_position(b, 2, tickets=[held[:17], held[17:]])
    g.apply(g.action("draw_tickets"))
    assert g.state()["players"][0]["pending"] == [9] and keep_masks(g) == [1]
    g = Game.from_position(b, 2, ticket_deck_top=[3, 4, 5])
    g.apply(g.action("draw_tickets"))
    assert keep_masks(g) == masks_with_at_least(3, 2)


# ---------------------------------------------------------------------------
# the map format

def _usa_dict():
    return json.loads((maps.resources.files("ttrsim") / "data" / "usa.json").read_text("utf-8"))


def test_custom_map_may_use_the_globetrotter_and_any_counts():
    data = _usa_dict()
    data["name"] = "usa-globe"
    data["rules"].update(globetrotter_bonus=20, deal_regular=6, initial_keep=4, draw_tickets=8,
                         draw_keep=3, longest_bonus=0)
    b = maps.from_dict(data)
    assert (b.globetrotter_bonus, b.deal_regular, b.initial_keep, b.draw_tickets, b.draw_keep) \
        == (20, 6, 4, 8, 3)
    g = Game(b, 5, seed=3)
    assert keep_masks(g) == masks_with_at_least(6, 4)
    t = tix(b, ("Denver", "El Paso"))
    sc = Game.from_position(b, 2, tickets=[t, []], routes=[[rt(b, "Denver", "Santa Fe"),
                                                            rt(b, "Santa Fe", "El Paso")], []]).scores()
    assert col(sc, "globetrotter") == [20, 0]


@pytest.mark.parametrize("change,message", [
    ({"globetrotter_bonus": -1}, "rules.globetrotter_bonus is -1; it must be between 0 and 999"),
    ({"globetrotter_bonus": 15.0}, "rules.globetrotter_bonus must be a whole number"),
    ({"globetrotter_bonus": True}, "rules.globetrotter_bonus must be a whole number"),
    ({"initial_keep": 4}, "rules.initial_keep (4) is more than the tickets dealt"),
    ({"deal_regular": 9}, "rules.deal_regular is 9; it must be between 0 and 8"),
    ({"draw_tickets": 9}, "rules.draw_tickets is 9; it must be between 1 and 8"),
    ({"draw_keep": 4}, "rules.draw_keep (4) is more than rules.draw_tickets (3)"),
    ({"deal_regular": 7}, "only 30 regular tickets, too few to deal rules.deal_regular = 7"),
    ({"globetrotter": 15}, "unknown key 'globetrotter'"),
])
def test_bad_ticket_rules_are_refused_with_the_fix(change, message):
    data = _usa_dict()
    data["rules"].update(change)
    with pytest.raises(MapError) as e:
        maps.from_dict(data)
    assert message in str(e.value)
    assert "\n" not in str(e.value)


def test_variant_can_add_the_globetrotter():
    from ttrsim import variant
    v = variant("usa", rules={"globetrotter_bonus": 15})
    assert v.globetrotter_bonus == 15 and v.longest_bonus == 10
    assert variant("usa", trains=40).globetrotter_bonus == 0


def test_the_globetrotter_is_kept_when_a_board_is_written_back(tmp_path, capsys):
    """Every way a board goes back to a file keeps the bonus, and the game read back
    scores it: a variant saved as a map file (`ttrsim variant --save`), a position on a
    variant (rebuilt from its recipe), on that map file and on a board made in memory (the
    whole map saved in the position)."""
    from ttrsim import variant
    from ttrsim.cli import main

    spec = tmp_path / "v.json"
    spec.write_text(json.dumps({"base": "usa-1910", "trains": 40}))
    assert main(["variant", str(spec), "--save", str(tmp_path / "map.json")]) == 0
    boards = [maps.load(str(tmp_path / "map.json")), variant("usa-1910", trains=40),
              maps.from_dict(dict(maps.board_to_dict(B1910), name="my-1910"), "in memory")]
    r = lambda *p: rt(B1910, *p)    # noqa: E731
    routes = [[r("Chicago", "Pittsburgh"), r("Pittsburgh", "New York")], []]
    tickets = [tix(B1910, ("Chicago", "New York")), []]
    for board in boards:
        assert board.globetrotter_bonus == B1910.globetrotter_bonus == 15, board.name
        Game.from_position(board, 2, routes=routes, tickets=tickets).save(tmp_path / "p.json")
        back = Game.load(tmp_path / "p.json")
        assert back.board.globetrotter_bonus == 15, board.name
        assert [s["globetrotter"] for s in back.scores()] == [15, 0], board.name


# ---------------------------------------------------------------------------
# results

def test_games_table_summary_and_viewer_show_the_globetrotter(tmp_path):
    from ttrsim import simulate
    run = simulate("usa-mega", players=["tickets"] * 3, games=60, seed=4)
    g = run.games
    assert "globetrotter" in g.columns
    assert set(g.globetrotter.unique()) <= {0, 15} and (g.globetrotter > 0).any()
    parts = ["route_points", "ticket_points", "longest_bonus", "globetrotter",
             "station_points", "attraction_points"]
    assert (g[parts].sum(axis=1) == g.score).all()
    # every game: the Globetrotter holders are exactly the seats with the most tickets
    most = g.groupby("game").tickets_completed.transform("max")
    assert ((g.globetrotter > 0) == ((g.tickets_completed == most) & (most > 0))).all()
    table = run.summary(by="policy")
    share = float((g.globetrotter > 0).mean())
    assert table["globetrotter_share"].iloc[0] == pytest.approx(share)
    assert "Globetrotter" in run.summary_text()
    summ = simulate("usa-mega", players=["tickets"] * 3, games=60, seed=4, summary=True)
    assert summ.summary(by="policy")["globetrotter_share"].iloc[0] == pytest.approx(share)
    assert "globetrotter_share" not in simulate("usa", players=2, games=20).summary().columns
    rec = run.game(int(g.game[g.globetrotter > 0].iloc[0]))
    assert "globetrotter" in rec.final.columns
    assert (rec.final.globetrotter > 0).any()
    from ttrsim.record import _breakdown   # noqa: PLC2701 (the page's parts)
    parts = _breakdown(rec.final)
    assert any(["Globetrotter", 15] in seat for seat in parts)
    assert all(sum(v for _, v in seat) == t for seat, t in zip(parts, rec.final.total))


# ---------------------------------------------------------------------------
# every player plays the three legally

TABLES = [(b, n) for b in BOARDS for n in (2, 3, 4, 5)]


def _play(board, specs, games, seed):
    from ttrsim._batch import game_seeds, play_batch
    from ttrsim.game import compile_board
    from ttrsim.policies import make_policy
    cb = compile_board(board)
    policies = [make_policy(s, cb.board) for s in specs]
    out = play_batch(cb, len(specs), policies, game_seeds(seed, games), rotate=True,
                     summary=True, check=True)
    return out, policies


@pytest.mark.parametrize("board,n", TABLES)
def test_every_policy_search_and_expert_play_legally(board, n):
    """With ``check`` every action and the state after it are checked (an illegal action
    raises). Each built-in policy alone and all mixed, expert, the counter-strategies
    (blocker, rush) and the search (a small budget, expert rollouts) with the others: complete games, none cut at the turn limit,
    no fallback action."""
    built_in = ["random", "tickets", "routes", "greedy"]
    mixes = [([p] * n, 30) for p in built_in]
    mixes += [([built_in[(i + 1) % 4] for i in range(n)], 30), (["expert"] * n, 8),
              ([["expert", "tickets", "routes", "greedy", "random"][i] for i in range(n)], 4),
              ([["search:playouts=3", "expert", "tickets", "greedy", "routes"][i]
                for i in range(n)], 1)]
    mixes += [(["blocker"] + ["tickets"] * (n - 1), 8), (["rush"] + ["expert"] * (n - 1), 8),
              ([["rush", "blocker", "greedy", "routes", "tickets"][i] for i in range(n)], 8)]
    for k, (specs, games) in enumerate(mixes):
        out, policies = _play(board, specs, games, seed=1000 * n + k)
        assert not out["truncated"].any(), specs
        assert "random" in specs or not out["all_passed"].any(), specs
        assert all(getattr(p, "fallbacks", 0) == 0 for p in policies), specs
        assert (out["scores"][:, :, 3] >= BOARDS[board].initial_keep).all()   # tickets kept


def test_report_shows_the_bonus_shares(tmp_path):
    from ttrsim import analysis as an
    from ttrsim import simulate
    from ttrsim.report import write_report
    for summary in (False, True):
        run = simulate("usa-mega", players=["tickets", "greedy", "routes"], games=40, seed=2,
                       summary=summary, out=tmp_path / f"run{summary}")
        t = an.bonus_shares(run)
        assert list(t.policy) == ["greedy", "routes", "tickets"]
        assert {"longest_share", "globetrotter_share"} <= set(t.columns)
        if not summary:
            g = run.games
            want = g.assign(x=g.globetrotter > 0).groupby("policy", observed=True).x.mean()
            assert np.allclose(t.set_index("policy").globetrotter_share, want)
            event = t
        else:
            assert np.allclose(t.globetrotter_share, event.globetrotter_share)
            assert np.allclose(t.longest_share, event.longest_share)
        page = write_report(run, tmp_path / f"report{summary}")
        assert "bonus_shares" in page.read_text()
    assert an.bonus_shares(simulate("newyork", players=2, games=5)).empty


@pytest.mark.parametrize("spec", ["tickets", "greedy", "routes"])
def test_planning_policies_value_the_globetrotter_only_where_it_is(spec):
    """Every seat valuing the Globetrotter (globe=1, the default) or not (globe=0): the same
    games on a board without it; on the Mega Game more tickets kept and completed."""
    from ttrsim._batch import SCORE_COLS, game_seeds, play_batch
    from ttrsim.game import compile_board
    from ttrsim.policies import make_policy

    def play(board, globe, n=4, games=150):
        cb = compile_board(board)
        pols = [make_policy(spec, cb.board) for _ in range(n)]
        assert pols[0].globe == 1.0
        for p in pols:
            p.globe = globe
        return play_batch(cb, n, pols, game_seeds(9, games), 0, True, True)

    a, b = play("usa", 1.0), play("usa", 0.0)
    assert all(np.array_equal(a[k], b[k]) for k in a if isinstance(a[k], np.ndarray))
    kept = SCORE_COLS.index("tickets_kept")
    done = SCORE_COLS.index("tickets_completed")
    a, b = play("usa-mega", 1.0), play("usa-mega", 0.0)
    assert a["scores"][:, :, kept].mean() > b["scores"][:, :, kept].mean() + 0.15
    assert a["scores"][:, :, done].mean() > b["scores"][:, :, done].mean()
