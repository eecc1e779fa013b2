"""ttrsim boards as OpenSpiel games (docs/openspiel.md); needs the ``openspiel`` extra.

Importing this module registers ``python_ttrsim`` with ``pyspiel``::

    import pyspiel
    import ttrsim.env.openspiel                       # registers the game
    game = pyspiel.load_game("python_ttrsim", {"board": "europe", "players": 2, "seed": 7})

Parameters: ``board`` (a built-in name or a map file path), ``players``, ``seed`` (the
deal: the same as ``ttrsim.Game(board, players, seed)``), ``variant`` (optional path of a
variant file, see ``ttrsim.load_variant``). :func:`game` also takes a loaded ``Board``
(e.g. from ``ttrsim.variant``).

Chance is implicit (``SAMPLED_STOCHASTIC``): the deck order lives in the state, as in
the core, and draws are sampled when applied. Actions are the flat indices of
``ttrsim.env.encoding(board, players)``; tensors are its observation vector.
:class:`PolicyBot` fields any ttrsim policy spec as a ``pyspiel.Bot``.
"""
from __future__ import annotations

import numpy as np

try:
    import pyspiel
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError("ttrsim.env.openspiel needs OpenSpiel: install the openspiel extra "
                      "(pip install -e \".[openspiel]\" or pip install \"ttrsim[openspiel]\"); "
                      f"missing: {exc.name}") from None

from ttrsim import maps
from ttrsim.actions import Action, ticket_text
from ttrsim.env.encoding import encoding
from ttrsim.game import Game
from ttrsim.maps import resolve_board

__all__ = ["GAME_NAME", "PolicyBot", "PolicyEvaluator", "TTRGame", "TTRState", "game", "returns_of",
           "seeded_resampler"]

GAME_NAME = "python_ttrsim"
DEFAULTS = {"board": "europe", "players": 2, "seed": 0, "variant": ""}
# Far above any real game (random play: under 500 decisions at 5 players); a game that
# reaches it ends as a draw shared by every seat, so nothing can run forever.
MAX_MOVES = 20000


def _game_type(min_players: int = 2, max_players: int = 5) -> "pyspiel.GameType":
    return pyspiel.GameType(
        short_name=GAME_NAME,
        long_name="ttrsim Ticket to Ride",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=max_players,
        min_num_players=min_players,
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=DEFAULTS,
    )


def returns_of(scores: list[dict]) -> list[float]:
    """Zero-sum returns of a finished game from ``Game.scores()``.

    The k seats ranked first share the win: seat i's share is 1/k if it is among them,
    else 0, and its return is ``n/(n-1) * (share - 1/n)``. A sole winner gets +1 and
    every other seat -1/(n-1); two seats of two sharing first place get 0 each.
    """
    n = len(scores)
    first = [s["rank"] == 1 for s in scores]
    k = sum(first)
    return [n / (n - 1) * ((1.0 / k if f else 0.0) - 1.0 / n) for f in first]


class TTRGame(pyspiel.Game):
    """One board, player count and deal as an OpenSpiel game (see the module docstring)."""

    def __init__(self, params=None, *, board=None):
        params = {**DEFAULTS, **(params or {})}
        for key in params:
            if key not in DEFAULTS:
                raise ValueError(f"{GAME_NAME}: unknown parameter {key!r}; expected "
                                 f"{', '.join(DEFAULTS)}")
        if board is None:
            name = str(params["board"])
            if params["variant"]:
                from ttrsim.variants import load_variant

                board = load_variant(str(params["variant"]), default_base=name)
                base = board.variant["base"]
                if base != name and base != resolve_board(name).name:
                    raise ValueError(f"{GAME_NAME}: variant file {params['variant']!r} changes "
                                     f"{base!r}, but board is {name!r}; pass board={base!r}")
            else:
                board = resolve_board(name)
        n = board.check_players(int(params["players"]))
        seed = int(params["seed"])
        if not 0 <= seed < 2**31:
            raise ValueError(f"{GAME_NAME}: seed must be an integer in 0..2**31-1 (OpenSpiel's "
                             f"integer parameters are 32-bit), got {seed}")
        self.board, self.n_players, self.seed = board, n, seed
        self.encoding = encoding(board, n)
        info = pyspiel.GameInfo(
            num_distinct_actions=self.encoding.n_actions,
            max_chance_outcomes=0,
            num_players=n,
            min_utility=-1.0 / (n - 1),
            max_utility=1.0,
            utility_sum=0.0,
            max_game_length=MAX_MOVES,
        )
        shown = {"board": board.path or board.name, "players": n, "seed": seed,
                 "variant": str(params["variant"])}
        super().__init__(_game_type(), info, shown)

    def new_initial_state(self):
        """The deal of ``ttrsim.Game(board, players, seed)``, before any choice."""
        return TTRState(self)

    def new_state_from(self, position: Game) -> "TTRState":
        """A state at a ttrsim position (``Game.from_position``, ``Game.load``...), with
        no move history: information states start from that position."""
        if not isinstance(position, Game):
            raise TypeError(f"expected a ttrsim.Game, got {type(position).__name__}")
        if position.board != self.board or position.n_players != self.n_players:
            raise ValueError(f"the position is {position.board.name} {position.n_players}p, "
                             f"the game {self.board.name} {self.n_players}p: load the game "
                             f"with the position's board and player count")
        state = TTRState(self)
        state._p.g = position.clone()
        state._p.cache = {}
        return state

    # Sampled-stochastic games serialize the game's random state with a state. Here the
    # randomness lives in each state (seeded by ``seed``): the game holds none.
    def get_rng_state(self):
        return ""

    def set_rng_state(self, rng_state):
        if rng_state:
            raise ValueError(f"{GAME_NAME} holds no random state, got {rng_state!r}")

    def information_state_tensor_shape(self):
        return [self.encoding.obs_size]

    def information_state_tensor_size(self):
        return self.encoding.obs_size

    def observation_tensor_shape(self):
        return [self.encoding.obs_size]

    def observation_tensor_size(self):
        return self.encoding.obs_size

    def make_py_observer(self, iig_obs_type=None, params=None):
        """Observer for ``open_spiel.python.observation.make_observation``: perfect
        recall (information state) or the current observation, of one seat."""
        if params:
            raise ValueError(f"{GAME_NAME}: observer parameters are not supported, got {params}")
        perfect_recall = bool(iig_obs_type is None or iig_obs_type.perfect_recall)
        return _Observer(self, perfect_recall)


class TTRState(pyspiel.State):
    """A position: a ``ttrsim.Game`` plus the moves as each seat saw them.

    ``game_state()`` gives the underlying ``ttrsim.Game`` (a copy: changing it does not
    change this state).
    """

    def __init__(self, game: TTRGame):
        super().__init__(game)
        # Everything Python-side sits in one attribute: OpenSpiel clones a Python state
        # by deep-copying its attributes, and _Position copies cheaply (a core clone).
        self._p = _Position(Game(game.board, game.n_players, game.seed), game.encoding, game.seed)

    # --- the OpenSpiel API ---------------------------------------------------------
    def current_player(self):
        if self.is_terminal():
            return pyspiel.PlayerId.TERMINAL
        return self._p.g.current_player

    def is_terminal(self):
        return self._p.g.is_over() or len(self._p.log) >= MAX_MOVES

    def _legal_actions(self, player):
        if self.is_terminal() or player != self._p.g.current_player:
            return []
        return [int(i) for i in self._p.enc.legal_indices(self._p.g)]

    def _apply_action(self, action):
        g, enc = self._p.g, self._p.enc
        code = enc.code(int(action), g)
        seat = g.current_player
        view = g.observation(seat)
        act = Action.decode(code, g.board, view)
        seen, public = str(act), str(act)
        if act.kind == "draw_blind":
            before = np.array(view["hand"])
        elif act.kind == "keep":
            k = bin(act.mask).count("1")
            public = f"keep {k} ticket{'s' if k != 1 else ''}"
            offer = view.get("pending") or []
            back = [ticket_text(g.board, t) for i, t in enumerate(offer) if not act.mask >> i & 1]
            if back:          # the seat remembers what it gave back, too
                seen += "; return " + ", ".join(back)
        g.apply(code)
        if act.kind == "draw_blind":
            got = np.flatnonzero(np.array(g.observation(seat)["hand"]) - before)
            seen = f"draw blind: {', '.join(_card(g.board, int(c)) for c in got) or 'nothing'}"
        self._p.log.append((seat, public, seen))
        self._p.returns = None
        self._p.cache = {}

    def _action_to_string(self, player, action):
        code = self._p.enc.code(int(action), self._p.g)
        view = None if self._p.g.is_over() else self._p.g.observation(self._p.g.current_player)
        return str(Action.decode(code, self._p.g.board, view))

    def returns(self):
        if not self.is_terminal():
            return [0.0] * self._p.g.n_players
        if self._p.returns is None:
            self._p.returns = (returns_of(self._p.g.scores()) if self._p.g.is_over()
                             else [0.0] * self._p.g.n_players)
        return list(self._p.returns)

    def information_state_string(self, player=None):
        """What ``player`` knows: its current observation and every move so far as it
        saw it (its own blind draws with their card and ticket choices by name; the
        others' blind draws without the card and ticket choices as a count)."""
        player = self._check_seat(player)
        key = ("info", player)
        if key not in self._p.cache:    # search asks for the same state's key repeatedly
            moves = "; ".join(f"{q}:{mine if q == player else pub}" for q, pub, mine in self._p.log)
            self._p.cache[key] = f"{self.observation_string(player)}\nmoves: {moves}"
        return self._p.cache[key]

    def information_state_tensor(self, player=None):
        """The observation vector of ``player`` (the vector form is not perfect recall:
        the string form is)."""
        return self.observation_tensor(player)

    def observation_string(self, player=None):
        """``player``'s current observation (``ttrsim.Game.observation``) as text."""
        player = self._check_seat(player)
        key = ("obs", player)
        if key not in self._p.cache:
            self._p.cache[key] = _observation_text(self._p.g.board, self._p.g.observation(player))
        return self._p.cache[key]

    def observation_tensor(self, player=None):
        """``player``'s observation vector of ``ttrsim.env.encoding`` (float32)."""
        player = self._check_seat(player)
        obs, _ = self._p.enc.observe(self._p.g, player)
        return obs.astype(np.float32).tolist()

    def resample_from_infostate(self, player_id, probability_sampler):
        """A state ``player_id`` cannot tell from this one, drawn by the core's world
        sampler (``Game.determinized``): the deck order, the other hands, tickets and
        offers are resampled and the random stream reseeded. The others' moves keep
        only their public text (their private parts belonged to the real world)."""
        seat = self._check_seat(player_id)
        seed = int(probability_sampler() * 2.0 ** 53)
        out = self.clone()
        out._p.g = self._p.g.determinized(seat, seed)
        out._p.log = [(q, pub, mine if q == seat else pub) for q, pub, mine in self._p.log]
        out._p.cache = {}
        return out

    def __str__(self):
        g = self._p.g
        return (f"{g.board.name} {g.n_players}p seed {self._p.seed}: {len(self._p.log)} "
                f"moves, turn {g.turn}, phase {g.phase}, seat {g.current_player}")

    # --- ttrsim side -----------------------------------------------------------------
    def game_state(self) -> Game:
        """A copy of the underlying ``ttrsim.Game`` (hidden information included)."""
        return self._p.g.clone()

    def _check_seat(self, player) -> int:
        if player is None:
            player = self._p.g.current_player
        player = int(player)
        if not 0 <= player < self._p.g.n_players:
            raise ValueError(f"player {player} outside 0..{self._p.g.n_players - 1}")
        return player


class _Position:
    """The Python side of a state: the ttrsim game, the move log, the cached returns."""

    def __init__(self, g: Game, enc, seed: int):
        self.g, self.enc, self.seed = g, enc, seed
        # One entry per move: (seat, text the others see, text the seat saw).
        self.log: list[tuple[int, str, str]] = []
        self.returns = None
        self.cache: dict = {}  # strings of this position, emptied by every change

    def __deepcopy__(self, memo):
        out = _Position(self.g.clone(), self.enc, self.seed)
        out.log, out.returns, out.cache = list(self.log), self.returns, dict(self.cache)
        return out

    def __getstate__(self):
        # The encoding is rebuilt from its cache on loading (it is large and derived).
        return {"g": self.g, "seed": self.seed, "log": self.log, "returns": self.returns}

    def __setstate__(self, st):
        self.__dict__.update(st)
        self.enc = encoding(self.g.board, self.g.n_players)
        self.cache = {}


def _card(board, t: int) -> str:
    return "wild" if t == 8 else board.colors[t]


def _observation_text(board, obs: dict) -> str:
    """An observation dict as stable text (every field, names for cards and tickets)."""
    hand = ", ".join(f"{n} {_card(board, t)}" for t, n in enumerate(obs["hand"]) if n)
    faceup = ", ".join("-" if c < 0 else _card(board, c) for c in obs["faceup"])
    discard = ", ".join(f"{n} {_card(board, t)}" for t, n in enumerate(obs["discard"]) if n)
    tickets = ", ".join(str(int(board.ticket_id[t])) for t in obs["tickets"])
    pending = ", ".join(str(int(board.ticket_id[t])) for t in (obs["pending"] or []))
    owners = " ".join(f"{int(board.route_id[r])}={q}" for r, q in enumerate(obs["route_owner"])
                      if q >= 0)
    stations = " ".join(f"{board.cities[c]}={q}" for c, q in enumerate(obs["city_station"])
                        if q >= 0)
    players = " | ".join(
        f"seat {q}: trains {p['trains']}, stations {p['stations_left']}, points "
        f"{p['route_points']}, cards {p['hand_size']}, tickets {p['tickets']}"
        for q, p in enumerate(obs["players"]))
    tunnel = obs["tunnel"]
    tunnel_text = "" if not tunnel else (
        f"\ntunnel: route {int(board.route_id[tunnel['route']])}, {tunnel['extra']} extra, "
        f"revealed {', '.join(_card(board, c) for c in tunnel['revealed'])}")
    return (f"seat {obs['seat']} | phase {obs['phase']} | to move {obs['current']} | turn "
            f"{obs['turn']} | last round {obs['last_round']}\nhand: {hand}\ntickets: {tickets}"
            f"\noffered: {pending}\nface-up: {faceup}\ndiscard: {discard}\ndeck {obs['deck_size']}"
            f", ticket deck {obs['ticket_deck_size']}\nroutes: {owners}\nstations: {stations}\n"
            f"{players}{tunnel_text}")


class _Observer:
    """``make_py_observer``'s object: ``tensor``/``dict`` and ``string_from``."""

    def __init__(self, game: TTRGame, perfect_recall: bool):
        self._perfect_recall = perfect_recall
        self.tensor = np.zeros(game.encoding.obs_size, np.float32)
        self.dict = {"observation": self.tensor}

    def set_from(self, state: TTRState, player: int):
        self.tensor[:] = state.observation_tensor(player)

    def string_from(self, state: TTRState, player: int) -> str:
        if self._perfect_recall:
            return state.information_state_string(player)
        return state.observation_string(player)


def game(board="europe", players: int = 2, seed: int = 0) -> TTRGame:
    """The OpenSpiel game of a board (name, map path or a loaded ``Board``, variants
    included), player count and deal seed."""
    if isinstance(board, maps.Board):
        return TTRGame({"players": players, "seed": seed}, board=board)
    return TTRGame({"board": str(board), "players": players, "seed": seed})


class PolicyBot(pyspiel.Bot):
    """A ttrsim policy (any spec: ``"tickets"``, ``"search:playouts=200"``, a Python
    policy...) as a ``pyspiel.Bot`` for ``evaluate_bots`` and tournaments.

    The policy sees only its seat's observation (through the core, as in ttrsim's own
    batches). Use one bot per seat. ``seed`` seeds the policy's own randomness; the bot
    restarts the policy at the start of each game (``restart``/``restart_at``).
    """

    def __init__(self, spec, game: TTRGame | None = None, seed: int = 0):
        pyspiel.Bot.__init__(self)
        from ttrsim.policies import make_policy
        from ttrsim.seats import seat_value

        self.spec = seat_value(spec)        # parsed once: every game builds from the value
        self._make = make_policy
        self._seed = int(seed)
        self._policy = None
        self._board = None
        self._seat = None          # the ttrsim.seats.Seat this bot plays in the current game
        if game is not None:
            self._policy = make_policy(self.spec, game.board)
            self._board = game.board

    def restart_at(self, state):
        self._seat = None

    def restart(self):
        self._seat = None

    def inform_action(self, state, player_id, action):
        pass

    def provides_policy(self):
        return False

    def step(self, state):
        from ttrsim.seats import Seat, seat_seeds

        if not isinstance(state, TTRState):
            raise TypeError(f"PolicyBot plays {GAME_NAME} states, got {type(state).__name__}")
        if state.is_terminal():
            raise ValueError("the game is over: there is no move to choose")
        g = state._p.g
        if self._policy is None or self._board != g.board:
            self._policy, self._board = self._make(self.spec, g.board), g.board
            self._seat = None
        seat = g.current_player
        if self._seat is not None and seat != self._seat.seat:
            raise ValueError(f"this PolicyBot plays seat {self._seat.seat} and was asked to move "
                             f"for seat {seat}: use one PolicyBot per seat (or call restart() "
                             f"between games)")
        if self._seat is None:
            # started at its first decision (OpenSpiel's loop owns the game), with the seed
            # the seat room gives this seat
            self._seat = Seat(self._policy, g, seat, seat_seeds(self._seed, g.n_players)[seat])
        return int(state._p.enc.index(self._seat.choose(g)))


class PolicyEvaluator:
    """An MCTS/ISMCTS evaluator whose rollouts are played by a ttrsim policy at every
    seat, inside the core (about 50 times faster than OpenSpiel's random rollouts
    through the Python state). Same interface as OpenSpiel's ``RandomRolloutEvaluator``:
    ``evaluate(state)`` (mean returns of ``n_rollouts`` games played to the end from
    ``state``) and ``prior(state)`` (uniform over the legal actions).

    Rollouts are seeded from ``seed`` and a counter: the same calls give the same values.
    """

    def __init__(self, spec="tickets", n_rollouts: int = 1, seed: int = 0):
        if isinstance(n_rollouts, bool) or not isinstance(n_rollouts, int) or n_rollouts < 1:
            raise ValueError(f"n_rollouts must be a positive integer, got {n_rollouts!r}")
        from ttrsim.seats import seat_value

        self.spec, self.n_rollouts, self.seed = seat_value(spec), n_rollouts, int(seed)
        self._policies, self._board, self._calls = None, None, 0

    def evaluate(self, state):
        from ttrsim.policies import make_policy
        from ttrsim.seats import Table, play_game

        g0 = state._p.g
        if g0.is_over():
            return np.array(state.returns())
        if self._board != g0.board or len(self._policies) != g0.n_players:
            self._policies = [make_policy(self.spec, g0.board) for _ in range(g0.n_players)]
            self._board = g0.board
        total = np.zeros(g0.n_players)
        for _ in range(self.n_rollouts):
            self._calls += 1
            seed = (self.seed * 1_000_003 + self._calls) & 0xFFFFFFFFFFFF
            g = play_game(Table(g0.clone(), self._policies, seed=seed)).game
            total += returns_of(g.scores()) if g.is_over() else 0.0
        return total / self.n_rollouts

    def prior(self, state):
        legal = state.legal_actions()
        return [(a, 1.0 / len(legal)) for a in legal]


def seeded_resampler(seed: int):
    """A resampler for OpenSpiel's Python ``ISMCTSBot.set_resampler``: the bot otherwise
    seeds every resampling from the system (a fresh ``UniformProbabilitySampler`` each
    time), so the same bot seed would not replay the same game."""
    sampler = pyspiel.UniformProbabilitySampler(int(seed) & 0x7FFFFFFF, 0.0, 1.0)  # a C int

    def resample(state, player):
        return state.resample_from_infostate(player, sampler)

    return resample


pyspiel.register_game(_game_type(), TTRGame)
