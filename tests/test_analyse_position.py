"""`ttrsim analyse` prints the position it analyses before its table, in words (cards by
colour, tickets and routes by map id and name), as the seat to move sees it: hand-made
positions at the start of a turn, while keeping drawn tickets and while paying a tunnel."""
from __future__ import annotations

from ttrsim import Game, maps
from ttrsim.cli import main


def position_printed(tmp_path, capsys, game) -> tuple[list[str], str]:
    path = tmp_path / "position.json"
    game.save(path)
    assert main(["analyse", str(path), "--playouts", "4", "--seed", "1"]) == 0
    position, blank, table = capsys.readouterr().out.partition("\n\n")
    assert blank and table.split()[0] == "action"      # the table follows a blank line
    return position.splitlines(), table


def test_the_position_at_the_start_of_a_turn_in_words(tmp_path, capsys):
    board = maps.load("europe")
    g = Game.from_position("europe", 2, hands=[{"red": 2, "blue": 1, "wild": 1}, {"green": 5, "pink": 1}],
                           faceup=["black", "orange", "orange", "green", "wild"],
                           tickets=[[0, 5], [7]], trains=[30, 12], current=1)
    lines, _ = position_printed(tmp_path, capsys, g)
    assert lines == [
        "Position: europe, 2 players, turn 0; seat 1 to move, at the start of its turn",
        # the board's colour order (pink, white, blue, ..., green), wild last
        "  seat 1's hand (6 cards): 1 pink + 5 green",
        f"  seat 1's tickets: ticket {int(board.ticket_id[7])} {board.ticket_name(7)}",
        "  face-up cards: black, orange, orange, green, wild",
        "  seat 0: 30 trains, 0 route points, 4 cards, 2 tickets, 3 stations left",
        "  seat 1: 12 trains, 0 route points, 6 cards, 1 ticket, 3 stations left",
    ]
    # what seat 1 cannot see stays hidden: seat 0's cards and tickets
    text = "\n".join(lines)
    assert "red" not in text and "blue" not in text and board.ticket_name(0) not in text
    assert "<Game" not in text


def test_the_tickets_offered_and_the_tunnel_paid(tmp_path, capsys):
    board = maps.load("europe")
    offer = Game.from_position("europe", 2, hands=[{"red": 2}, {"green": 5}],
                               tickets=[[0], [7]], current=0, offer=[10, 11, 12])
    lines, _ = position_printed(tmp_path, capsys, offer)
    assert lines[0].endswith("seat 0 to move, choosing which drawn tickets to keep")
    assert lines[3] == "  tickets offered: " + "; ".join(
        f"ticket {int(board.ticket_id[t])} {board.ticket_name(t)}" for t in (10, 11, 12))

    tunnel = next(r for r in range(board.n_routes) if board.route_tunnel[r]
                  and board.route_len[r] == 2)
    paying = Game.from_position("europe", 2, hands=[{"red": 2, "wild": 1}, {"green": 5}],
                                tickets=[[0], [7]], current=0,
                                tunnel={"route": tunnel, "color": "blue", "wild": 1,
                                        "revealed": ["blue", "black", "red"]})
    lines, _ = position_printed(tmp_path, capsys, paying)
    assert lines[0].endswith("seat 0 to move, paying for a tunnel")
    assert lines[1] == "  seat 0's hand (3 cards): 2 red + 1 wild"
    assert lines[3] == (f"  tunnel: route {int(board.route_id[tunnel])} "
                        f"{board.route_name(tunnel)} played with 1 blue + 1 wild; revealed "
                        "blue, black, red: 1 more card to pay")
