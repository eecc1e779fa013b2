"""The fixed encoding of docs/env.md: flat action indices and observation vectors."""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from ttrsim._env import Encoding as _Encoding
from ttrsim._validate import is_int
from ttrsim.actions import Action, IllegalActionError
from ttrsim.game import Game, compile_board
from ttrsim.maps import resolve_board

__all__ = ["Encoding", "encoding"]

PHASES = ("setup_tickets", "turn", "second_draw", "keep_tickets", "tunnel", "over")
PLAYER_FIELDS = ("trains", "stations_left", "hand_size", "tickets", "route_points")


class Encoding:
    """Action space and observation layout of one board and player count.

    ``n_actions`` flat action indices (``blocks()`` gives each kind's index range) and an
    int16 observation vector of ``obs_size`` entries (``fields`` gives each field's slice);
    both are fixed for the board and player count. Build it with :func:`encoding`.
    """

    def __init__(self, board, n_players: int):
        self.board = resolve_board(board)
        self.board.check_players(n_players)
        self.n_players = int(n_players)
        self._enc = _Encoding(compile_board(self.board), self.n_players)
        self.n_actions = self._enc.n_actions
        self.obs_size = self._enc.obs_size
        self.max_offer = self._enc.max_offer
        self.fields = dict(self._enc.layout)
        self._codes = self._enc.code_table()

    def blocks(self) -> dict:
        """``{kind: (first, stop)}``: the index range of each action kind."""
        return self._enc.blocks()

    def claim_range(self, route: int) -> tuple[int, int]:
        """``(first, stop)``: the indices of the claims of a route (one per payment)."""
        return self._enc.claim_range(route)

    # --- actions ---------------------------------------------------------------------
    def index(self, action) -> int:
        """Flat index of an ``Action`` or a core action code."""
        code = action.code if isinstance(action, Action) else action
        if not is_int(code):
            raise TypeError(f"expected an Action or an action code, got {action!r}")
        return self._enc.index(int(code))

    def code(self, index: int, game: Game) -> int:
        """Core action code of a flat index in ``game``'s position (not checked for
        legality; the all-wild station pays the current station cost)."""
        return self._enc.code(_check_index(index, self.n_actions), game._core)

    def action(self, index: int, game: Game) -> Action:
        """The ``Action`` of a flat index in ``game``'s position."""
        view = None if game.is_over() else game.observation(game.current_player)
        return Action.decode(self.code(index, game), self.board, view)

    def describe(self, index: int) -> str:
        """Readable text of an index (the all-wild station shown at cost 1)."""
        return str(Action.decode(int(self._codes[_check_index(index, self.n_actions)]), self.board))

    # --- observations ----------------------------------------------------------------
    def observe(self, game: Game, seat: int, obs=None, mask=None):
        """``(observation, mask)`` of ``seat`` in ``game``: int16 vector and bool mask
        (all False when another seat is to act). Pass arrays to fill them in place."""
        if not 0 <= seat < game.n_players:
            raise ValueError(f"seat {seat} outside 0..{game.n_players - 1}")
        obs = np.zeros(self.obs_size, np.int16) if obs is None else obs
        mask = np.zeros(self.n_actions, np.bool_) if mask is None else mask
        self._enc.encode(game._core, seat, obs, mask.view(np.uint8))
        return obs, mask

    def legal_indices(self, game: Game) -> np.ndarray:
        """Indices of the legal actions of the seat to act (sorted)."""
        return np.sort(np.array([self.index(c) for c in game.legal_action_codes()], dtype=np.int64))

    def unpack(self, obs) -> dict:
        """An observation vector as a dict of named fields (``players`` as one dict per
        seat, the observing seat first; ``phase`` as its name)."""
        obs = np.asarray(obs)
        out = {name: obs[sl] for name, sl in self.fields.items()}
        out["phase"] = PHASES[int(out["phase"][0])]
        for key in ("current", "turn", "last_round", "turns_left", "deck_size", "ticket_deck_size"):
            out[key] = int(out[key][0])
        pl = out["players"].reshape(self.n_players, len(PLAYER_FIELDS))
        out["players"] = [dict(zip(PLAYER_FIELDS, map(int, row))) for row in pl]
        return out

    def check_legal(self, index, game: Game) -> int:
        """The code of a legal index; ``IllegalActionError`` naming the legal ones if not."""
        i = _check_index(index, self.n_actions)
        legal = self.legal_indices(game)
        if i not in legal:
            names = ", ".join(f"{j}: {self.action(int(j), game)}" for j in legal[:12])
            more = f" (and {len(legal) - 12} more)" if len(legal) > 12 else ""
            raise IllegalActionError(f"action {i} ({self.describe(i)}) is not legal for seat "
                                     f"{game.current_player} in phase {game.phase}; legal: "
                                     f"{names}{more}")
        return self.code(i, game)

    def __repr__(self) -> str:
        return (f"<Encoding {self.board.name} {self.n_players}p: {self.n_actions} actions, "
                f"observation of {self.obs_size}>")


def _check_index(index, n: int) -> int:
    if not is_int(index):
        try:
            if isinstance(index, np.ndarray) and index.shape == ():
                index = index.item()
            else:
                raise TypeError
        except TypeError:
            raise TypeError(f"an action is an integer index in 0..{n - 1}, got {index!r}") from None
    index = int(index)
    if not 0 <= index < n:
        raise ValueError(f"action {index} outside 0..{n - 1}")
    return index


@lru_cache(maxsize=32)
def _cached(board, n_players: int) -> Encoding:
    return Encoding(board, n_players)


def encoding(board="europe", players: int = 4) -> Encoding:
    """The encoding of a board (name, path or Board) and player count (cached)."""
    return _cached(resolve_board(board), int(players))
