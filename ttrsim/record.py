"""One game, move by move: the decisions of a game replayed from its seed.

A ``GameRecord`` is built by playing the game again exactly as the batch loop played it
(same deal, same policy seeds, same seating): nothing is stored while a run plays, and the
record equals the run's tables for that game. ``Run.game(i)`` and ``ttrsim.replay(run, i)``
return one; ``record_game`` plays a fresh game with any policies.

>>> rec = ttrsim.replay(run, 12)        # doctest: +SKIP
>>> rec.moves.head()                    # one row per decision, in words
>>> rec.at(20).observation(0)           # the position at the start of turn 20
>>> rec.html("game.html")               # a self-contained page to watch it
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ttrsim._batch import DEFAULT_MAX_TURNS, play_recorded
from ttrsim._validate import check_int
from ttrsim.actions import WILD, Action, PolicyError, card_name, route_text, ticket_text
from ttrsim.game import Game, GameCore, compile_board
from ttrsim.maps import resolve_board
from ttrsim.policies import make_policy, policy_name, seat_specs
from ttrsim.search import FLAG_LEVEL

__all__ = ["GameRecord", "record_game", "record_decisions", "recorded_policies", "board_view"]

TUNNEL_OUTCOMES = ("free", "paid", "declined")
TABLES = ("games", "tickets", "routes", "tunnels", "stations")


def record_game(board="europe", players=2, seed: int = 0, *, game: int = 0, rotate: bool = False,
                max_turns: int = DEFAULT_MAX_TURNS, names=None, tables=None) -> "GameRecord":
    """Play one game from ``seed`` and keep its decisions.

    ``players`` is a player count (``tickets`` in every seat) or one policy spec per seat
    slot, as ``ttrsim.simulate`` takes them. ``game`` and ``rotate`` seat the policies as
    game ``game`` of a run (seat s is played by slot (s + game) % players with ``rotate``).
    ``names`` overrides the policies' names (a run's labels); ``tables`` is a function that
    returns the run's rows of this game (used by ``Run.game``)."""
    board = resolve_board(board)
    specs = seat_specs(board, players)
    seed = int(seed)
    if not 0 <= seed < 2 ** 64:
        raise ValueError(f"seed must be a non-negative 64-bit integer, got {seed}")
    policies = [make_policy(spec, board) for spec in specs]
    res = play_recorded(compile_board(board), len(specs), policies, np.uint64(seed), int(game),
                        bool(rotate), int(max_turns))
    names = tuple(names) if names is not None else tuple(policy_name(s, board) for s in specs)
    return GameRecord(board, seed, res, names, game=game, tables=tables)


def recorded_policies(actions, seats, n_players: int) -> list:
    """One Python policy per seat that together play recorded decisions in order:
    decision k is ``actions[k]``, asked of seat ``seats[k]``. For a game whose decisions
    came from elsewhere (a person's, ``ttrsim play``), played again by the batch loop:
    its tables and its record come from the same code as a simulated game's. A seat asked
    out of turn, or a game that goes on after the last decision, raises ``PolicyError``."""
    tape = _Tape([int(a) for a in actions], [int(s) for s in seats])
    return [_TapeSeat(tape, q) for q in range(n_players)]


class _Tape:
    def __init__(self, actions: list, seats: list):
        if len(actions) != len(seats):
            raise ValueError(f"{len(actions)} actions and {len(seats)} seats recorded; one "
                             "seat per decision")
        self.actions, self.seats, self.next = actions, seats, 0


class _TapeSeat:
    """Seat ``seat``'s end of a shared tape of recorded decisions."""

    name = "recorded"

    def __init__(self, tape: _Tape, seat: int):
        self.tape, self.seat = tape, seat

    def choose(self, observation, legal_actions):
        tape, k = self.tape, self.tape.next
        if k >= len(tape.actions):
            raise PolicyError(f"the recorded decisions end after decision {k - 1}, but the "
                              f"game goes on (seat {observation['seat']} to move)")
        if tape.seats[k] != observation["seat"]:
            raise PolicyError(f"decision {k} was recorded for seat {tape.seats[k]}, but seat "
                              f"{observation['seat']} is to move")
        tape.next += 1
        return tape.actions[k]


def record_decisions(board, seed: int, actions, seats, *, names, game: int = 0,
                     max_turns: int = DEFAULT_MAX_TURNS, tables=None) -> "GameRecord":
    """The ``GameRecord`` of a game dealt from ``seed`` whose decisions are given
    (``actions[k]`` chosen by seat ``seats[k]``; ``recorded_policies``), played again by
    the batch loop; ``names`` by seat. Decisions that are not legal where they were
    recorded, that stop before the game ends or that go past its end raise ValueError."""
    board = resolve_board(board)
    n = len(names)
    actions = np.asarray(actions, dtype=np.int64)
    seats = np.asarray(seats, dtype=np.int64)
    if len(seats) and not (0 <= seats.min() and seats.max() < n):
        raise ValueError(f"the recorded decisions name seats {sorted(set(seats.tolist()))}, "
                         f"the game has seats 0..{n - 1}")
    policies = [make_policy(p, board) for p in recorded_policies(actions, seats, n)]
    try:
        res = play_recorded(compile_board(board), n, policies, np.uint64(seed), int(game),
                            False, int(max_turns))
    except PolicyError as exc:
        raise ValueError(f"game {game}'s recorded decisions do not replay: {exc}") from None
    if len(res["actions"]) != len(actions):
        raise ValueError(f"game {game} ends after {len(res['actions'])} of its "
                         f"{len(actions)} recorded decisions")
    return GameRecord(board, seed, res, tuple(names), game=game, tables=tables)


class GameRecord:
    """A game's decisions, replayable position by position.

    ``moves`` (DataFrame, one row per decision), ``at(turn)`` (a ``Game`` at that point),
    ``final`` (the final score breakdown per seat), ``positions()`` (plain data of every
    position, for the viewer) and ``html(path)`` (a self-contained page showing the game).
    A record made by ``Run.game`` also has the run's rows of this game: ``games``,
    ``tickets``, ``routes``, ``tunnels``, ``stations``.
    """

    def __init__(self, board, seed: int, res: dict, names: tuple, *, game: int = 0, tables=None):
        self.board = board
        self.seed = int(seed)
        self.game = int(game)
        self.actions = res["actions"]
        self.seats = res["seats"]
        self.slot = res["slot"]
        self.truncated = bool(res["truncated"])
        self.n_players = len(self.slot)
        self.policies = tuple(names[k] for k in self.slot)     # by seat
        self._tunnels = {int(r[0]): r for r in res["tunnels"]}
        self._tables_fn = tables
        self._tables = None
        self._moves = None
        self._positions = None

    # --- positions ----------------------------------------------------------------
    def _core(self) -> GameCore:
        return GameCore(compile_board(self.board), self.n_players, self.seed)

    def at(self, turn=None, *, decision: int | None = None) -> Game:
        """The position at the start of turn ``turn`` (``"end"`` or None: the final
        position), or after the first ``decision`` decisions. A new ``Game``, which can be
        played on or analysed."""
        n = len(self.actions)
        if decision is None:
            if turn is None or turn == "end":
                decision = n
            else:
                turns = self.moves["turn"].to_numpy()
                turn = check_int("turn", turn, 0, hint=" or 'end'")
                last = int(turns[-1]) if n else 0
                if turn > last:
                    raise ValueError(f"turn {turn} outside 0..{last} (the game lasted "
                                     f"{last + 1} turns); use 'end' for the final position")
                decision = int(np.searchsorted(turns, turn, side="left"))
        if isinstance(decision, bool) or not 0 <= decision <= n:
            raise ValueError(f"decision {decision!r} outside 0..{n}")
        core = self._core()
        for code in self.actions[:decision]:
            core.apply(int(code))
        return Game(self.board, _core=core)

    @property
    def final(self) -> pd.DataFrame:
        """Final score breakdown per seat (``Game.score_table`` plus the seat's policy)."""
        df = self.at("end").score_table()
        df.insert(0, "policy", list(self.policies))
        return df.drop(columns=["borrowed", "completed", "by_station"])

    # --- moves --------------------------------------------------------------------
    @property
    def moves(self) -> pd.DataFrame:
        """One row per decision: ``decision, turn, seat, policy, phase`` (before it),
        ``action`` (in words, as the seat saw it), ``public_action`` (as the others saw
        it: without the tickets kept), ``code``, ``kind``, ``route`` (map id, <NA> if none),
        ``paid`` (cards that left the hand), ``drawn`` (cards that entered it: hidden
        information for a blind draw), ``tickets`` (offered on a ticket draw, kept on a
        choice), ``revealed`` and ``extra`` (a tunnel's revealed cards and the extra cards
        they ask), ``outcome`` (of a tunnel attempt), then the seat's ``score`` (route
        points so far), ``trains`` and ``hand`` size after the decision."""
        if self._moves is None:
            self._moves = pd.DataFrame([{k: v for k, v in p["move"].items() if k != "public"}
                                        for p in self.positions()[1:]])
            if self._moves.empty:
                self._moves = pd.DataFrame(columns=["decision", "turn", "seat", "policy",
                                                    "phase", "action"])
            else:
                self._moves["route"] = self._moves["route"].astype("Int16")
        return self._moves

    def positions(self) -> list:
        """Every position of the game as plain data (JSON-serialisable): position k is the
        state after k decisions, with ``move`` the decision that led to it. Hidden
        information (hands, tickets, the cards drawn blind) is included; ``public`` marks
        what every seat may see."""
        if self._positions is None:
            self._positions = self._build_positions()
        return self._positions

    def _build_positions(self) -> list:
        core = self._core()
        out = [self._snapshot(core, None)]
        for k, code in enumerate(self.actions):
            before = core.state()
            seat = int(before["current"])
            view = core.observation(seat)
            core.apply(int(code))
            after = core.state()
            out.append(self._snapshot(core, self._move(k, int(code), seat, before, after, view),
                                      after))
        return out

    def _move(self, k: int, code: int, seat: int, before: dict, after: dict, view: dict) -> dict:
        board = self.board
        a = Action.decode(code, board, view)
        # the same move as the other seats see it: which tickets were kept stays hidden
        public = Action.decode(code, board, dict(view, pending=[]))
        pb, pa = before["players"][seat], after["players"][seat]
        diff = np.array(pa["hand"]) - np.array(pb["hand"])
        move = {"decision": k, "turn": int(before["turn"]), "seat": seat,
                "policy": self.policies[seat], "phase": before["phase"], "action": str(a),
                "public_action": (f"keep {bin(a.mask).count('1')} of the tickets offered"
                                  if a.kind == "keep" else str(public)),
                "code": code, "kind": a.kind, "route": None, "route_name": "",
                "paid": _cards(board, np.maximum(-diff, 0)),
                "drawn": _cards(board, np.maximum(diff, 0)), "tickets": "",
                "revealed": "", "extra": None, "outcome": ""}
        if a.route is not None:
            move["route"] = int(board.route_id[a.route])
            move["route_name"] = _route_label(board, a.route)
        elif a.kind in ("tunnel_pay", "tunnel_decline") and before["tunnel"]:
            r = before["tunnel"]["route"]
            move["route"] = int(board.route_id[r])
            move["route_name"] = _route_label(board, r)
        if a.kind == "draw_tickets":
            move["tickets"] = "; ".join(ticket_text(board, t) for t in pa["pending"])
        elif a.kind == "keep":
            offered = pb["pending"]
            kept = [offered[i] for i in range(len(offered)) if a.mask >> i & 1]
            move["tickets"] = "; ".join(ticket_text(board, t) for t in kept)
        t = self._tunnels.get(k)
        if t is not None:
            cards = [int(c) for c in t[4:7] if c >= 0]
            move["revealed"] = ", ".join(card_name(board, c) for c in cards) or "none"
            move["extra"] = int(t[7])
            if a.kind == "claim" and t[8] == 0:
                move["outcome"] = "free"
        if a.kind == "tunnel_pay":
            move["outcome"] = "paid"
        elif a.kind == "tunnel_decline":
            move["outcome"] = "declined"
        elif a.kind == "claim" and after["phase"] == "tunnel" and after["current"] == seat:
            tun = after["tunnel"]
            move["revealed"] = ", ".join(card_name(board, c) for c in tun["revealed"])
            move["extra"] = int(tun["extra"])
        move["score"] = int(pa["route_points"])
        move["trains"] = int(pa["trains"])
        move["hand"] = int(sum(pa["hand"]))
        # what every seat sees of the move: not a blind draw's card, not a ticket offer
        # nor which tickets were kept
        move["public"] = {"drawn": a.kind != "draw_blind", "tickets": False}
        return move

    def _snapshot(self, core: GameCore, move, st=None) -> dict:
        board = self.board
        st = st or core.state()
        scores = core.scores()
        over = st["phase"] == "over"
        players = []
        for q, p in enumerate(st["players"]):
            done = set(scores[q]["completed"])
            players.append({
                "score": int(p["route_points"]), "trains": int(p["trains"]),
                "stations": int(p["stations_left"]), "hand": [int(x) for x in p["hand"]],
                "known": [int(x) for x in p["known"]],
                "tickets": [{"id": int(board.ticket_id[t]), "name": board.ticket_name(t),
                             "state": "done" if t in done else ("failed" if over else "open")}
                            for t in p["tickets"]],
                "pending": [board.ticket_name(t) for t in p["pending"]],
                "total": int(scores[q]["total"]) if over else None})
        return {"turn": int(st["turn"]), "phase": st["phase"], "current": int(st["current"]),
                "owner": [int(x) for x in st["route_owner"]],
                "station": [int(x) for x in st["city_station"]],
                "faceup": [int(x) for x in st["faceup"]], "deck": len(st["deck"]),
                "players": players, "move": move}

    # --- the run's rows ---------------------------------------------------------------
    def __getattr__(self, name):
        if name in TABLES:
            if self._tables_fn is None:
                raise AttributeError(f"{name}: this record was not made from a run "
                                     "(Run.game / ttrsim.replay give the run's rows)")
            if self._tables is None:
                self._tables = self._tables_fn()
            return self._tables[name]
        raise AttributeError(name)

    def tables(self) -> dict:
        """The run's rows of this game (``games``, ``tickets``, ...), as ``Run.tables()``."""
        return {name: getattr(self, name) for name in TABLES}

    # --- the viewer ---------------------------------------------------------------------
    def view_data(self, analyse: int | None = None, playouts: int = 200, seed: int = 0,
                  progress: bool = False, rollout: str | None = None,
                  level: float = FLAG_LEVEL) -> dict:
        """The plain data the viewer draws (board geometry, positions, moves, scores;
        JSON-serialisable). ``analyse``: a seat whose every decision is analysed with
        ``ttrsim.analyse`` (``playouts`` per candidate, played on by ``rollout``: default
        the search's, ``expert:model=v4``); a decision is flagged when the rollout policy
        wins more often from another move than from the one played, on the same worlds,
        with the false discovery rate over the seat's analysed decisions at most ``level``
        (docs/viewer.md). ``data["analysis"]`` then holds ``seat``, ``playouts``,
        ``rollout`` (the spec used), ``level``, ``meaning`` (what a flag says, and what
        no flag does not: ``ttrsim.search.flag_meaning``) and ``decisions``."""
        board = self.board
        positions = self.positions()
        data = {
            "title": f"{board.title or board.name}, {self.n_players} players, game {self.game}",
            "board": board_view(board),
            "players": [{"seat": q, "policy": self.policies[q]} for q in range(self.n_players)],
            "positions": positions,
            "final": [int(x) for x in self.final["total"]],
            "breakdown": _breakdown(self.final),
            "analysis": None,
        }
        if analyse is not None:
            data["analysis"] = self._analysis(int(analyse), playouts, seed, progress, rollout,
                                              level)
        return data

    def _analysis(self, seat: int, playouts: int, seed: int, progress: bool,
                  rollout: str | None, level: float) -> dict:
        from ttrsim.policies import SEARCH_ROLLOUT
        from ttrsim.search import analyse as run_analysis
        from ttrsim.search import flag_decisions, flag_meaning

        if not 0 <= seat < self.n_players:
            raise ValueError(f"seat {seat} outside 0..{self.n_players - 1}")
        rollout = SEARCH_ROLLOUT if rollout is None else rollout
        todo = [k for k, s in enumerate(self.seats) if int(s) == seat]
        out = {"seat": seat, "playouts": playouts, "rollout": rollout, "level": level,
               "decisions": {}}
        bar = None
        if progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(todo), unit="decision", desc=f"analysing seat {seat}")
        core = self._core()
        done = 0
        try:
            for k, code in enumerate(self.actions):
                if int(self.seats[k]) == seat:
                    g = Game(self.board, _core=core.clone())
                    if len(g.legal_action_codes()) > 1:
                        played = int(code)
                        df = run_analysis(g, playouts=playouts, seed=seed + k, rollout=rollout,
                                          played=played, level=level)
                        out["rollout"] = df.attrs["rollout"]          # the spec as used
                        rows = [{"action": r.action, "code": int(r.code),
                                 "win": _num(r.win_rate), "low": _num(r.win_low),
                                 "high": _num(r.win_high), "margin": _num(r.mean_margin),
                                 "vs_played": _num(r.vs_played), "p": _num(r.p_better),
                                 "tied": bool(r.tied), "played": bool(r.played)}
                                for r in df.itertuples()]
                        # a move outside the search's candidates has no row: said on the
                        # page, not flagged (it was not measured)
                        out["decisions"][str(k)] = {
                            "rows": rows, "best": int(df["code"].iloc[0]), "played": played,
                            "measured": bool(df["played"].any()), "p": _num(df.attrs["p"]),
                            "q": None, "flag": False}
                    done += 1
                    if bar is not None:
                        bar.update(1)
                core.apply(int(code))
        except BaseException:
            if bar is not None:       # stopped (Ctrl-C, an error): clear the bar's line
                bar.leave = False
            raise
        finally:
            if bar is not None:
                bar.close()
        # the false discovery rate is controlled over the game's measured decisions
        keys = list(out["decisions"])
        p = [out["decisions"][key]["p"] for key in keys]
        q, flags = flag_decisions([np.nan if x is None else x for x in p], level)
        for key, qk, fk in zip(keys, q, flags):
            out["decisions"][key]["q"] = _num(qk)
            out["decisions"][key]["flag"] = bool(fk)
        out["meaning"] = flag_meaning(out["rollout"])
        return out

    def html(self, path, *, analyse: int | None = None, playouts: int = 200, seed: int = 0,
             progress: bool = False, rollout: str | None = None, level: float = FLAG_LEVEL):
        """Write the game as one self-contained HTML page (no network access needed):
        the board with the claimed routes, a turn slider, the seats' panels and the move
        list; ``analyse=SEAT`` adds the analysis of that seat's decisions (``playouts`` per
        candidate, played on by ``rollout``, moves flagged at false discovery rate
        ``level``). Returns the path."""
        from ttrsim.viewer import write_html

        return write_html(self.view_data(analyse, playouts, seed, progress, rollout, level),
                          path)

    def __repr__(self) -> str:
        return (f"<GameRecord {self.board.name} {self.n_players}p game {self.game}: "
                f"{len(self.actions)} decisions, policies {list(self.policies)}>")


def board_view(board) -> dict:
    """The board as the viewer draws it (plain data: cities and their coordinates, the
    card names by card type, routes with their ends, length, colour, tunnel, ferry and
    double partner, the stations a seat has); the play page draws it the same way."""
    routes = [{"id": int(board.route_id[r]), "a": int(board.route_a[r]),
               "b": int(board.route_b[r]), "len": int(board.route_len[r]),
               "color": board.color_name(int(board.route_color[r])),
               "tunnel": bool(board.route_tunnel[r]), "ferry": int(board.route_ferry[r]),
               "partner": int(board.route_partner[r]), "name": _route_label(board, r)}
              for r in range(board.n_routes)]
    return {"name": board.name, "cities": list(board.cities),
            "coords": [[float(x), float(y)] for x, y in board.coords],
            "cards": [board.colors[t] if t < len(board.colors) else
                      ("wild" if t == WILD else None) for t in range(WILD + 1)],
            "routes": routes, "stations": int(board.stations)}


# the parts of a final score, in the order the page lists them (a part a board does not
# score is left out; a part this list does not know is shown as "other")
SCORE_PARTS = (("route_points", "routes"), ("ticket_points", "tickets"),
               ("longest_bonus", "longest"), ("globetrotter", "Globetrotter"),
               ("station_points", "stations"),
               ("attraction_points", "attractions"))


def _breakdown(final: pd.DataFrame) -> list:
    """Per seat, the parts of its final score as [name, points] pairs that add up to its
    total (points of a part not named in SCORE_PARTS, as "other")."""
    out = []
    for q in final.index:
        parts = [[name, int(final.at[q, col])] for col, name in SCORE_PARTS
                 if col in final.columns and (final[col] != 0).any()]
        rest = int(final.at[q, "total"]) - sum(v for _, v in parts)
        if rest:
            parts.append(["other", rest])
        out.append(parts)
    return out


def _num(x):
    """A float for the page's JSON (NaN, which JSON lacks, as None)."""
    x = float(x)
    return None if x != x else x


def _cards(board, counts) -> str:
    parts = [f"{int(n)} {card_name(board, t)}" for t, n in enumerate(counts) if n and t != WILD]
    if len(counts) > WILD and counts[WILD]:
        parts.append(f"{int(counts[WILD])} wild")
    return " + ".join(parts)


def _route_label(board, r: int) -> str:
    """The route's id and name (the id tells a double route's two halves apart)."""
    return route_text(board, r)
