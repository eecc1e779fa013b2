"""Readable views of a game's cards, shared by the rule scenario tests."""


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
