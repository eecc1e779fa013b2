"""What the PettingZoo and Gymnasium adapters share: the observation space of an
encoding and the text view of a position. Needs Gymnasium only, so that the Gymnasium
adapter (``ttrsim.env.gym``) works without PettingZoo."""
from __future__ import annotations

import numpy as np
from gymnasium import spaces

__all__ = ["observation_space", "render_text"]


def observation_space(enc) -> spaces.Dict:
    """The Dict space of an encoding: ``observation`` (int16 vector) and ``action_mask``
    (int8 vector, 1 for the legal actions)."""
    return spaces.Dict({
        "observation": spaces.Box(low=-1, high=np.iinfo(np.int16).max, shape=(enc.obs_size,),
                                  dtype=np.int16),
        "action_mask": spaces.Box(low=0, high=1, shape=(enc.n_actions,), dtype=np.int8),
    })


def render_text(game) -> str:
    """A text view of a position: turn, phase, face-up row, deck, and per seat its
    trains, stations, cards, tickets, route points and claimed routes."""
    b = game.board
    st = game.state()
    card = lambda t: "wild" if t == 8 else b.colors[t]  # noqa: E731
    lines = [f"{b.name} {game.n_players}p  turn {st['turn']}  phase {st['phase']}  "
             f"seat to act {st['current']}" + ("  (final round)" if game.observation(0)["last_round"] else ""),
             "face-up: " + ", ".join(card(t) if t >= 0 else "-" for t in st["faceup"])
             + f"   deck {len(st['deck'])}, discards {sum(st['discard'])}, "
               f"tickets left {len(st['ticket_deck'])}"]
    for q, p in enumerate(st["players"]):
        hand = ", ".join(f"{k} {card(t)}" for t, k in enumerate(p["hand"]) if k)
        routes = ", ".join(b.route_name(r) for r in p["routes"][:8])
        more = f" +{len(p['routes']) - 8}" if len(p["routes"]) > 8 else ""
        lines.append(f"seat {q}: {p['trains']} trains, {p['stations_left']} stations, "
                     f"{p['route_points']} route pts, {p['n_tickets']} tickets; hand: {hand or '-'}")
        if routes:
            lines.append(f"    routes: {routes}{more}")
    if game.is_over():
        lines.append("final scores: " + ", ".join(str(s["total"]) for s in game.scores()))
    return "\n".join(lines)
