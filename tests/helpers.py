"""Helpers shared by the tests: readable views of a game's cards, routes by their
cities, positions reached by play, the scripts as modules, the scripted players of the
game profile's hand-checked game."""
import importlib.util
from pathlib import Path

#: The run that several modules read (``europe3`` and its summary and reports in
#: conftest.py): Europe, three seats played by ``tickets``, ``routes`` and ``random`` (they
#: build stations, attempt tunnels and draw tickets differently: ``routes`` builds no
#: station), 300 games, enough for tickets kept 30 times and more within one policy.
EUROPE3 = dict(board="europe", players=["tickets", "routes", "random"], games=300, seed=11)


def card(board, t) -> str | None:
    """Name of a card type (8 is the wild card), None for an empty slot."""
    return None if t < 0 else "wild" if t == 8 else board.colors[t]


def names(board, counts) -> dict:
    """Card-type counts (wild last) as {name: n}, zeros left out."""
    return {card(board, t): int(n) for t, n in enumerate(counts) if n}


def hand(g, seat) -> dict:
    return names(g.board, g.state()["players"][seat]["hand"])


def discard(g) -> dict:
    return names(g.board, g.state()["discard"])


def rt(board, a, b, color=None) -> int:
    """Index of the route between cities a and b (the half of that colour for a double)."""
    ends = {board.city_index[a], board.city_index[b]}
    found = [i for i in range(board.n_routes)
             if {int(board.route_a[i]), int(board.route_b[i])} == ends
             and (color is None or board.color_name(int(board.route_color[i])) == color)]
    assert len(found) == 1, (a, b, color, found)
    return found[0]


def midgame(board, n, seed, turns=14):
    """A game of ``n`` seats played by ``tickets`` until ``turns`` turns (or its end)."""
    from ttrsim import Game
    from ttrsim._policies import decide
    from ttrsim.policies import make_policy

    g = Game(board, n, seed=seed)
    tickets = [make_policy("tickets", g.board) for _ in range(n)]
    while not g.is_over() and g.turn < turns:
        g.apply(decide(tickets[g.current_player], g, seed=seed + g.turn))
    return g


def load_script(name: str):
    """scripts/NAME.py as a module (the scripts are not a package), with scripts/ on the
    path as when it runs, for any module of scripts/ it imports."""
    import sys

    folder = Path(__file__).resolve().parents[1] / "scripts"
    if str(folder) not in sys.path:
        sys.path.append(str(folder))
    path = folder / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"{name}_script", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _first(kind, legal):
    return next(a for a in legal if a.kind == kind)


def _keep_all(legal):
    return max((a for a in legal if a.kind == "keep"), key=lambda a: bin(a.mask).count("1"))


def hoarder(observation, legal):
    """Keeps every ticket offered; draws blind on its first three turns (game turns 0, 2,
    4), claims on its fourth (6: a gray route of length 1 makes a claim legal with any ten
    cards), then draws tickets (8)."""
    if observation["phase"] in ("setup_tickets", "keep_tickets"):
        return _keep_all(legal)
    turn = observation["turn"]
    if turn < 6:
        return _first("draw_blind", legal)
    if turn == 6:
        return _first("claim", legal)
    return _first("draw_tickets", legal)


def ticket_drawer(observation, legal):
    """Keeps every ticket offered and draws tickets on every turn (game turns 1, 3, 5, 7)."""
    if observation["phase"] in ("setup_tickets", "keep_tickets"):
        return _keep_all(legal)
    return _first("draw_tickets", legal)
