"""What the play page is sent: one seat's information set, never more.

Every message is built from ``Game.observation(seat)`` (the view the environments use),
the legal actions of the seat when it is to move, and the seat's own log of what it saw
happen (each entry built from its observations before and after a move). Nothing here
reads the full state, so another seat's hand or tickets, or the order of the deck, cannot
be sent (tests/test_play.py compares the messages of games that differ only in what the
seat cannot see). At the end of a game the scores are public; of another seat, only
their parts are sent, not its tickets.
"""
from __future__ import annotations

import heapq

from ttrsim.actions import WILD, Action, card_name, route_text, ticket_text
from ttrsim.record import SCORE_PARTS

__all__ = ["seat_message", "log_entry", "ticket_progress", "final_scores"]

SETUP = "setup_tickets"       # the initial ticket choice, kept secret by the rules


def seat_message(board, obs: dict, legal_codes, *, names, log, since: int = 0,
                 decision: int, over: bool = False) -> dict:
    """The message for the seat whose observation is ``obs``: the position as it sees
    it, its legal actions (``legal_codes``: only when it is to move), and the entries of
    its ``log`` from ``since`` on. ``decision`` counts the decisions played so far: a
    move is posted with it, and refused when the game has moved on."""
    seat = obs["seat"]
    mine = not over and obs["current"] == seat
    legal = [action_entry(board, obs, int(c)) for c in legal_codes] if mine else []
    keeps = [bin(a["mask"]).count("1") for a in legal if a["kind"] == "keep"]
    tun = obs["tunnel"]
    return {
        "decision": int(decision), "seat": seat, "over": bool(over),
        "turn": obs["turn"], "phase": obs["phase"], "current": obs["current"],
        "last_round": bool(obs["last_round"]),
        "hand": [int(x) for x in obs["hand"]],
        "faceup": [int(x) for x in obs["faceup"]],
        "deck": obs["deck_size"], "ticket_deck": obs["ticket_deck_size"],
        "discards": int(sum(obs["discard"])),
        "tickets": ticket_progress(board, obs),
        "offer": [{"index": int(t), "name": ticket_text(board, t), "a": int(board.ticket_a[t]),
                   "b": int(board.ticket_b[t])} for t in obs["pending"]],
        "owner": [int(x) for x in obs["route_owner"]],
        "station": [int(x) for x in obs["city_station"]],
        "players": [{"seat": q, "name": names[q], "score": p["route_points"],
                     "trains": p["trains"], "stations": p["stations_left"],
                     "hand": p["hand_size"], "tickets": p["tickets"]}
                    for q, p in enumerate(obs["players"])],
        "tunnel": None if tun is None else {
            "route": int(tun["route"]), "name": route_text(board, int(tun["route"])),
            "color": card_name(board, int(tun["color"])), "wild": int(tun["wild"]),
            "extra": int(tun["extra"]),
            "revealed": [card_name(board, int(c)) for c in tun["revealed"]]},
        "legal": legal,
        "keep_min": min(keeps) if keeps else None,
        "log": log[since:], "log_from": since,
    }


def action_entry(board, obs: dict, code: int) -> dict:
    """One legal action as the page offers it: its code, kind, words (as the seat sees
    them) and the fields the page groups it by."""
    a = Action.decode(code, board, obs)
    return {"code": code, "kind": a.kind, "text": str(a), "slot": a.slot, "route": a.route,
            "city": a.city, "color": a.color, "wild": a.wild, "mask": a.mask}


def log_entry(board, viewer: int, mover: int, code: int, before: dict, after: dict,
              decision: int) -> dict:
    """Seat ``viewer``'s entry for decision ``decision`` (``code``, made by ``mover``),
    from the viewer's observations ``before`` and ``after`` it: its own moves in full
    (the tickets kept, the card drawn blind), another seat's as the table sees them."""
    # another seat's move is read without the viewer's own offer (a keep would name it)
    a = Action.decode(code, board, before if mover == viewer else dict(before, pending=[]))
    text = str(a)
    if mover == viewer:
        drawn = [t for t in range(WILD + 1) if after["hand"][t] > before["hand"][t]]
        if a.kind == "draw_blind" and drawn:
            text += f": {card_name(board, drawn[0])}"
        elif a.kind == "draw_tickets":
            text += ": " + "; ".join(ticket_text(board, t) for t in after["pending"])
    elif a.kind == "keep":
        # how many were kept is public once the initial choices are made; which, never
        kept = after["players"][mover]["tickets"] - before["players"][mover]["tickets"]
        text = ("choose their initial tickets" if before["phase"] == SETUP else
                f"keep {kept} of the tickets offered")
    elif a.kind == "draw_tickets":
        offered = before["ticket_deck_size"] - after["ticket_deck_size"]
        text = f"draw tickets ({offered} offered)"
    elif a.kind == "claim" and after["phase"] == "tunnel" and after["current"] == mover:
        text += "; the tunnel's revealed cards ask for extra cards"
    elif a.kind == "tunnel_pay":
        # the seat's view of another's tunnel holds no cards: the claim and the cards
        # that left the hand say what was paid
        won = [r for r in range(board.n_routes)
               if after["route_owner"][r] == mover != before["route_owner"][r]]
        if won:     # (the cards first played left the hand with the claim)
            extra = before["players"][mover]["hand_size"] - after["players"][mover]["hand_size"]
            text = (f"pay the tunnel's {extra} extra card{'' if extra == 1 else 's'} "
                    f"({a.wild} wild) for {route_text(board, won[0])}")
    elif a.kind == "tunnel_decline":
        text = "give up the tunnel claim (the cards played go back to the hand)"
    tun = after["tunnel"]
    if a.kind == "claim" and mover == viewer and tun is not None and int(tun["route"]) == a.route:
        text += (f"; the tunnel reveals {', '.join(card_name(board, int(c)) for c in tun['revealed'])}"
                 f": {int(tun['extra'])} extra card{'' if tun['extra'] == 1 else 's'} to pay")
    return {"decision": int(decision), "turn": before["turn"], "seat": int(mover),
            "text": text}


def ticket_progress(board, obs: dict) -> list:
    """The seat's tickets: each done (joined by its own routes) or the fewest trains
    still needed to join it over its own and the open routes (None: no way left)."""
    seat, n = obs["seat"], len(obs["players"])
    owner = obs["route_owner"]
    adj = [[] for _ in range(board.n_cities)]
    for r in range(board.n_routes):
        q, partner = owner[r], int(board.route_partner[r])
        if q == seat:
            cost = 0
        elif q >= 0 or (partner >= 0 and owner[partner] >= 0 and
                        (owner[partner] == seat or n < board.double_min_players)):
            continue              # taken, or a double whose other half closes it
        else:
            cost = int(board.route_len[r])
        a, b = int(board.route_a[r]), int(board.route_b[r])
        adj[a].append((b, cost))
        adj[b].append((a, cost))
    out = []
    for t in obs["tickets"]:
        need = _fewest_trains(adj, int(board.ticket_a[t]), int(board.ticket_b[t]))
        out.append({"index": int(t), "name": ticket_text(board, t),
                    "a": int(board.ticket_a[t]), "b": int(board.ticket_b[t]),
                    "points": int(board.ticket_points[t]), "done": need == 0,
                    "trains_needed": need})
    return out


def _fewest_trains(adj: list, a: int, b: int):
    """Dijkstra over the cities: the cheapest way from a to b, or None."""
    best = {a: 0}
    heap = [(0, a)]
    while heap:
        d, x = heapq.heappop(heap)
        if x == b:
            return d
        if d > best.get(x, d):
            continue
        for y, c in adj[x]:
            if d + c < best.get(y, 1 << 30):
                best[y] = d + c
                heapq.heappush(heap, (d + c, y))
    return None


def final_scores(board, scores: list, seat: int, names, truncated: bool,
                 tickets=None) -> dict:
    """The final scores, public at the end of a game: each seat's total, rank and the
    parts that add up to it; for ``seat`` also which routes its stations borrowed (the
    engine chooses them for every player, the rules' ruling). ``tickets``: each seat's
    tickets, shown at the end as the rules have them (each with ``done``)."""
    rows = []
    for q, s in enumerate(scores):
        parts = [[name, int(s[col])] for col, name in SCORE_PARTS if s.get(col)]
        rest = int(s["total"]) - sum(v for _, v in parts)
        if rest:
            parts.append(["other", rest])
        rows.append({"seat": q, "name": names[q], "total": int(s["total"]),
                     "rank": int(s["rank"]), "parts": parts,
                     "tickets_completed": int(s["tickets_completed"]),
                     "tickets_failed": int(s["tickets_failed"])})
        if tickets is not None:
            done = set(map(int, s["completed"]))
            rows[-1]["tickets"] = [{"name": ticket_text(board, t), "done": int(t) in done,
                                    "points": int(board.ticket_points[t])}
                                   for t in tickets[q]]
    borrowed = [route_text(board, int(r)) for r in scores[seat]["borrowed"] if r >= 0]
    return {"seats": rows, "borrowed": borrowed, "truncated": bool(truncated)}
