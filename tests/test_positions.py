"""Positions entered with map ids, mid-turn positions, saved positions on any board."""
import json

import pytest

import ttrsim
from ttrsim import Game
from ttrsim.cli import main
from ttrsim.maps import board_to_dict

EU = ttrsim.maps.load("europe")


def tunnel_route(board, length=2):
    return next(r for r in range(board.n_routes)
                if board.route_tunnel[r] and board.route_len[r] == length and board.route_color[r] < 0)


def test_map_ids_place_the_routes_and_tickets_of_a_runs_tables():
    run = ttrsim.simulate("europe", 2, games=3, seed=4)
    r = run.routes[run.routes.game == 1]
    t = run.tickets[(run.tickets.game == 1) & run.tickets.kept]
    routes = [[int(x) for x in r[r.seat == q].route] for q in range(2)]
    tickets = [[int(x) for x in t[t.seat == q].ticket] for q in range(2)]
    g = Game.from_position("europe", 2, routes=routes, tickets=tickets, ids=True,
                           stations=[[], []])
    end = run.game(1).at("end").state()
    assert g.state()["route_owner"] == end["route_owner"]
    assert [p["tickets"] for p in g.state()["players"]] == [p["tickets"] for p in end["players"]]
    # the same position by indices: ids are not indices on the built-in maps
    by_index = Game.from_position("europe", 2, routes=[[EU.route_id.tolist().index(x) for x in s]
                                                       for s in routes])
    assert by_index.state()["route_owner"] == end["route_owner"]


def test_unknown_ids_are_refused():
    with pytest.raises(ValueError, match="no route with id 999"):
        Game.from_position("europe", 2, routes=[[999]], ids=True)
    with pytest.raises(ValueError, match="no ticket with id 0"):
        Game.from_position("europe", 2, tickets=[[0]], ids=True)


def test_second_draw_position():
    g = Game.from_position("usa", 2, hands=[{"red": 2}, {}], first_draw="red",
                           faceup=["wild", "blue", "red", "green", "black"], current=0)
    assert g.phase == "second_draw" and g.current_player == 0
    assert g.state()["players"][0]["hand"][ttrsim.maps.load("usa").colors.index("red")] == 2
    kinds = {a.kind for a in g.legal_actions()}
    assert kinds == {"draw_faceup", "draw_blind"}
    assert all(a.slot != 0 for a in g.legal_actions() if a.kind == "draw_faceup")   # no wild
    with pytest.raises(ValueError, match="must hold the card drawn first"):
        Game.from_position("usa", 2, hands=[{"blue": 1}, {}], first_draw="red")


def test_keep_tickets_position():
    g = Game.from_position("europe", 3, offer=[5, 6, 7], ids=True, current=2,
                           tickets=[[], [], [1]])
    assert g.phase == "keep_tickets" and g.current_player == 2
    assert [int(EU.ticket_id[t]) for t in g.observation(2)["pending"]] == [5, 6, 7]
    assert len(g.legal_actions()) == 7            # any non-empty subset of three
    g.apply(g.action("keep", mask=0b101))
    held = sorted(int(EU.ticket_id[t]) for t in g.state()["players"][2]["tickets"])
    assert held == [1, 5, 7]
    with pytest.raises(ValueError, match="deals 3 tickets"):
        Game.from_position("europe", 2, offer=[5, 6], ids=True)


def test_tunnel_position_asks_the_extra_cards_revealed():
    r = tunnel_route(EU)
    g = Game.from_position("europe", 2, hands=[{"red": 2, "wild": 1}, {}],
                           tunnel={"route": int(EU.route_id[r]), "color": "red",
                                   "revealed": ["red", "wild", "blue"]}, ids=True)
    assert g.phase == "tunnel"
    st = g.state()
    assert st["tunnel"]["extra"] == 2 and st["tunnel"]["route"] == r
    red = EU.colors.index("red")
    assert st["players"][0]["hand"][red] == 2 and st["players"][0]["hand"][8] == 1
    g2 = g.clone()
    g2.apply([a for a in g2.legal_actions() if a.kind == "tunnel_decline"][0])
    assert g2.state()["players"][0]["hand"][red] == 4       # the two played come back
    g.apply(g.action("tunnel_pay", wild=1))
    assert g.state()["route_owner"][r] == 0 and g.state()["players"][0]["hand"][red] == 1
    with pytest.raises(ValueError, match="ask no extra card"):
        Game.from_position("europe", 2, hands=[{"red": 2}, {}],
                           tunnel={"route": r, "color": "red", "revealed": ["blue"] * 3})
    with pytest.raises(ValueError, match="not a tunnel"):
        Game.from_position("europe", 2, tunnel={"route": 0, "color": "red",
                                                "revealed": ["red"] * 3})
    with pytest.raises(ValueError, match="at most one"):
        Game.from_position("europe", 2, first_draw="red", offer=[1, 2, 3])


def test_mid_turn_positions_save_and_load(tmp_path):
    r = tunnel_route(EU)
    g = Game.from_position("europe", 2, hands=[{"red": 2, "wild": 1}, {}],
                           tunnel={"route": r, "color": "red", "revealed": ["red", "wild", "blue"]})
    g.save(tmp_path / "p.json")
    h = Game.load(tmp_path / "p.json")
    assert h.state() == g.state() and h.phase == "tunnel"


@pytest.mark.parametrize("kind", ["variant", "memory", "file"])
def test_saved_positions_load_on_variant_and_custom_boards(tmp_path, kind):
    if kind == "variant":
        board = ttrsim.variant("europe", trains=30, remove_routes=["Rostov - Sochi"])
    else:
        d = board_to_dict(ttrsim.maps.load("newyork"))
        d["name"] = "mine"
        if kind == "memory":
            board = ttrsim.maps.from_dict(d)
        else:
            (tmp_path / "mine.json").write_text(json.dumps(d))
            board = ttrsim.maps.load(str(tmp_path / "mine.json"))
    g = Game(board, 2, seed=3)
    for _ in range(9):
        g.apply(g.legal_actions()[-1])
    g.save(tmp_path / "p.json")
    h = Game.load(tmp_path / "p.json")
    assert h.board.checksum == board.checksum and h.state() == g.state()
    if kind == "file":       # the map file changed since: refused, not a silently other game
        d["routes"] = d["routes"][:-1]
        (tmp_path / "mine.json").write_text(json.dumps(d))
        with pytest.raises(ValueError, match="another board"):
            Game.load(tmp_path / "p.json")


def test_an_edited_board_field_is_refused(tmp_path):
    Game("europe", 2, seed=1).save(tmp_path / "p.json")
    d = json.loads((tmp_path / "p.json").read_text())
    d["board"] = "usa"
    (tmp_path / "q.json").write_text(json.dumps(d))
    with pytest.raises(ValueError, match="saved on another board"):
        Game.load(tmp_path / "q.json")
    # a file saved before positions carried the checksum still loads on its own board
    del d["board_checksum"]
    d["board"] = "europe"
    (tmp_path / "r.json").write_text(json.dumps(d))
    assert Game.load(tmp_path / "r.json").state() == Game("europe", 2, seed=1).state()


def test_analyse_takes_a_saved_positions_path(tmp_path):
    g = Game("newyork", 2, seed=5)
    for _ in range(6):
        g.apply(g.legal_actions()[0])
    g.save(tmp_path / "p.json")
    a = ttrsim.analyse(g, playouts=20)
    b = ttrsim.analyse(str(tmp_path / "p.json"), playouts=20)
    c = ttrsim.analyse(tmp_path / "p.json", playouts=20)
    assert a.equals(b) and a.equals(c)
    with pytest.raises(TypeError, match="path of a saved position"):
        ttrsim.analyse(42)


def test_cli_analyses_a_position_of_a_saved_game(tmp_path, capsys):
    run = ttrsim.simulate("newyork", 2, games=4, seed=2, out=tmp_path / "run")
    assert main(["analyse", str(tmp_path / "run"), "--game", "3", "--turn", "4",
                 "--playouts", "20"]) == 0
    out = capsys.readouterr().out
    want = ttrsim.analyse(run.game(3).at(4), playouts=20)
    position, _, table = out.partition("\n\n")
    assert position.startswith("Position: newyork, 2 players, turn 4;")
    assert want.action.iloc[0] in table.splitlines()[1]
    assert main(["analyse", str(tmp_path / "run"), "--playouts", "20"]) == 2
    assert "--game N --turn T" in capsys.readouterr().err
    assert main(["analyse", str(tmp_path / "run"), "--game", "3", "--turn", "999"]) == 2
