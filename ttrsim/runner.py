"""The Monte Carlo runner: many games in batches, spread over workers with joblib.

Each batch is one call into the compiled core. Game ``g`` of a run is dealt from a seed
that depends only on the run's seed and ``g`` (numpy ``SeedSequence`` gives the run's key),
so the tables are identical whatever ``n_jobs``, the batch order or the backend, and any
single game can be replayed (``replay``). With ``out=`` each batch is written to disk as it
arrives (Parquet parts plus ``manifest.json``); running the same call again resumes and
skips the batches already written. docs/tables.md documents every column.
"""
from __future__ import annotations

import json
import os
import platform
import signal
import threading
import time
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import joblib
import numpy as np
import pandas as pd

import ttrsim
from ttrsim._batch import DEFAULT_MAX_TURNS, SCORE_COLS, TURN_BIN_WIDTH, game_seeds, play_batch
from ttrsim.actions import card_name
from ttrsim.game import compile_board, resolve_board
from ttrsim.policies import DEFAULT_POLICY, make_policy, policy_name

__all__ = ["Run", "simulate", "load_run", "replay", "default_batch_size"]
EVENT_TABLES = ("games", "tickets", "routes", "tunnels", "stations")
SUMMARY_TABLES = ("seat_summary", "ticket_summary", "route_summary", "tunnel_summary",
                  "station_summary")
TUNNEL_OUTCOMES = ("free", "paid", "declined")
SEAT_SUM_COLS = ("games", "wins", "score_sum", "score_sq_sum", "route_points_sum",
                 "ticket_points_sum", "longest_bonus_sum", "station_points_sum",
                 "attraction_points_sum", "tickets_kept_sum", "tickets_completed_sum",
                 "turns_sum", "all_passed", "turns_sq_sum", "diff_sum", "diff_sq_sum")
_SC = {name: i for i, name in enumerate(SCORE_COLS)}
# Manifest keys that define a run: a resumed run must match them all.
IDENTITY = ("ttrsim_version", "board", "board_checksum", "players", "policies", "seed", "games",
            "batch_size", "rotate", "summary", "max_turns")


# ---------------------------------------------------------------------------
# configuration

def default_batch_size(games: int) -> int:
    """Games per batch when none is given: a hundredth of the run, within 1,000..10,000.
    Large enough that a batch's dispatch (a few milliseconds) is lost in its play, small
    enough for a smooth progress bar, resume points and work for every worker."""
    return min(10_000, max(1_000, games // 100))


@dataclass(frozen=True)
class _Config:
    board: object
    policies: tuple          # one spec per seat slot (str or Python policy object)
    games: int
    seed: int
    batch_size: int
    rotate: bool
    summary: bool
    max_turns: int
    names: tuple = field(default=())

    @property
    def n_players(self) -> int:
        return len(self.policies)

    @property
    def n_batches(self) -> int:
        return -(-self.games // self.batch_size)

    def batch_range(self, b: int) -> tuple[int, int]:
        first = b * self.batch_size
        return first, min(self.games, first + self.batch_size)

    @property
    def key(self) -> int:
        return int(np.random.SeedSequence(self.seed).generate_state(1, dtype=np.uint64)[0])

    def manifest(self) -> dict:
        import numpy
        import pyarrow

        return {
            "ttrsim_version": ttrsim.__version__,
            "board": self.board.name,
            "board_checksum": self.board.checksum,
            "board_path": getattr(self.board, "path", None),
            "players": self.n_players,
            "policies": list(self.names),
            "seed": self.seed,
            "games": self.games,
            "batch_size": self.batch_size,
            "batches": self.n_batches,
            "rotate": self.rotate,
            "summary": self.summary,
            "max_turns": self.max_turns,
            **({"variant": self.board.variant} if getattr(self.board, "variant", None) else {}),
            "seed_derivation": "numpy SeedSequence(seed) -> run key; game g: SplitMix64 output g",
            "versions": {"python": platform.python_version(), "numpy": numpy.__version__,
                         "pandas": pd.__version__, "joblib": joblib.__version__,
                         "pyarrow": pyarrow.__version__},
        }


def _config(board, players, games, seed, batch_size, rotate, summary, max_turns) -> _Config:
    board = resolve_board(board)
    if isinstance(players, (int, np.integer)) and not isinstance(players, bool):
        board.check_players(int(players))
        specs = (DEFAULT_POLICY,) * int(players)
    elif isinstance(players, (list, tuple)):
        board.check_players(len(players))
        specs = tuple(players)
    else:
        raise ValueError(f"players must be a player count or a list of policy specs, one per "
                         f"seat; got {players!r}")
    for spec in specs:           # fail early on unknown names / bad parameters
        make_policy(spec, board)
    if isinstance(games, bool) or not isinstance(games, (int, np.integer)) or games <= 0:
        raise ValueError(f"games must be a positive integer, got {games!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    batch_size = default_batch_size(games) if batch_size is None else batch_size
    if not isinstance(batch_size, (int, np.integer)) or batch_size <= 0:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
    if not isinstance(max_turns, (int, np.integer)) or max_turns <= 0:
        raise ValueError(f"max_turns must be a positive integer, got {max_turns!r}")
    names = tuple(policy_name(s, board) for s in specs)
    return _Config(board, specs, int(games), int(seed), int(min(batch_size, games)),
                   bool(rotate), bool(summary), int(max_turns), names)


# ---------------------------------------------------------------------------
# one batch (runs in a worker)

def _play(cfg: _Config, first: int, stop: int) -> dict:
    policies = [make_policy(spec, cfg.board) for spec in cfg.policies]
    seeds = game_seeds(cfg.key, stop - first, first)
    return play_batch(compile_board(cfg.board), cfg.n_players, policies, seeds, first, cfg.rotate,
                      cfg.summary, cfg.max_turns)


def _run_batch(cfg: _Config, b: int) -> tuple[int, dict]:
    first, stop = cfg.batch_range(b)
    res = _play(cfg, first, stop)
    if cfg.summary:
        return b, _batch_summary(cfg, res)
    return b, _batch_tables(cfg, res, first)


def _categories(cfg: _Config) -> dict:
    board = cfg.board
    return {
        "board": pd.CategoricalDtype([board.name]),
        "policy": pd.CategoricalDtype(sorted(set(cfg.names))),
        "color": pd.CategoricalDtype([card_name(board, c) for c in range(len(board.colors))]
                                     + ["wild"]),
        "outcome": pd.CategoricalDtype(list(TUNNEL_OUTCOMES)),
        "city": pd.CategoricalDtype(list(board.cities)),
    }


def _batch_tables(cfg: _Config, res: dict, first: int) -> dict:
    board, cats = cfg.board, _categories(cfg)
    n_games, n = res["scores"].shape[:2]
    sc = res["scores"].reshape(n_games * n, -1)
    names = np.array(cfg.names, dtype=object)
    games = pd.DataFrame({
        "game": np.repeat(np.arange(first, first + n_games, dtype=np.int64), n),
        "board": pd.Categorical([board.name] * (n_games * n), dtype=cats["board"]),
        "players": np.full(n_games * n, n, dtype=np.int8),
        "seat": np.tile(np.arange(n, dtype=np.int8), n_games),
        "policy": pd.Categorical(names[res["slot"].reshape(-1)], dtype=cats["policy"]),
    })
    for col in ("score", "route_points", "ticket_points", "tickets_kept", "tickets_completed",
                "tickets_failed", "tickets_by_station", "longest", "longest_bonus",
                "station_points", "stations_built", "attraction_points", "rank", "win",
                "trains_left", "stations_left", "routes_claimed"):
        if col == "win":
            games[col] = sc[:, _SC["rank"]] == 1
        elif col in ("stations_built", "stations_left", "rank"):
            games[col] = sc[:, _SC[col]].astype(np.int8)
        else:
            games[col] = sc[:, _SC[col]]
    games["turns"] = np.repeat(res["turns"], n)
    games["all_passed"] = np.repeat(res["all_passed"], n)
    games["truncated"] = np.repeat(res["truncated"], n)

    o = res["offers"]
    tickets = pd.DataFrame({
        "game": o[:, 0].astype(np.int64), "seat": o[:, 1].astype(np.int8),
        "ticket": board.ticket_id[o[:, 2]].astype(np.int16),
        "points": board.ticket_points[o[:, 2]].astype(np.int16),
        "long": board.ticket_long[o[:, 2]].astype(bool),
        "initial": o[:, 5].astype(bool), "turn": o[:, 3],
        "kept": o[:, 4].astype(bool), "completed": o[:, 6].astype(bool),
        "by_station": o[:, 7].astype(bool)})
    c = res["claims"]
    routes = pd.DataFrame({
        "game": c[:, 0].astype(np.int64), "seat": c[:, 1].astype(np.int8),
        "route": board.route_id[c[:, 2]].astype(np.int16), "turn": c[:, 3],
        "needed": c[:, 4].astype(bool)})
    t = res["tunnels"]
    colors = np.array(list(cats["color"].categories), dtype=object)
    tunnels = pd.DataFrame({
        "game": t[:, 0].astype(np.int64), "seat": t[:, 1].astype(np.int8),
        "route": board.route_id[t[:, 2]].astype(np.int16),
        "color": pd.Categorical(colors[np.where(t[:, 3] == 8, len(board.colors), t[:, 3])],
                                dtype=cats["color"]),
        "revealed": t[:, 4].astype(np.int8), "extra": t[:, 5].astype(np.int8),
        "outcome": pd.Categorical.from_codes(t[:, 6], dtype=cats["outcome"])})
    s = res["stations"]
    stations = pd.DataFrame({
        "game": s[:, 0].astype(np.int64), "seat": s[:, 1].astype(np.int8),
        "city": pd.Categorical.from_codes(s[:, 2], dtype=cats["city"]), "turn": s[:, 3],
        "borrowed": np.where(s[:, 4] >= 0, board.route_id[np.maximum(s[:, 4], 0)], -1).astype(np.int16)})
    return {"games": games, "tickets": tickets, "routes": routes, "tunnels": tunnels,
            "stations": stations}


def _batch_summary(cfg: _Config, res: dict) -> dict:
    """Per-batch count arrays; summing them over batches gives the run's summary."""
    n = cfg.n_players
    sc, slot = res["scores"].astype(np.int64), res["slot"]
    seat = np.broadcast_to(np.arange(n), slot.shape)
    cell = (seat * n + slot).reshape(-1)
    flat = sc.reshape(-1, sc.shape[-1])
    turns = np.repeat(res["turns"].astype(np.int64), n)
    passed = np.repeat(res["all_passed"].astype(np.int64), n)
    # the seat's score minus the other seats' mean, times (n - 1) to stay an integer
    diff = (n * sc[:, :, _SC["score"]] - sc[:, :, _SC["score"]].sum(axis=1, keepdims=True)).reshape(-1)
    cols = [np.ones_like(turns), (flat[:, _SC["rank"]] == 1).astype(np.int64),
            flat[:, _SC["score"]], flat[:, _SC["score"]] ** 2, flat[:, _SC["route_points"]],
            flat[:, _SC["ticket_points"]], flat[:, _SC["longest_bonus"]],
            flat[:, _SC["station_points"]], flat[:, _SC["attraction_points"]],
            flat[:, _SC["tickets_kept"]], flat[:, _SC["tickets_completed"]], turns, passed,
            turns ** 2, diff, diff ** 2]
    seat_sums = np.zeros((n * n, len(cols)), dtype=np.int64)
    np.add.at(seat_sums, cell, np.stack(cols, axis=1))
    return {"seat": seat_sums.reshape(n, n, -1), "tickets": res["ticket_counts"],
            "routes": res["route_counts"], "tunnels": res["tunnel_counts"],
            "stations": res["station_counts"], "truncated": int(res["truncated"].sum())}


def _summary_tables(cfg: _Config, acc: dict) -> dict:
    board, n = cfg.board, cfg.n_players
    rows = []
    for seat in range(n):
        for slot in range(n):
            v = acc["seat"][seat, slot]
            if v[0]:
                rows.append({"seat": seat, "policy": cfg.names[slot],
                             **{k: int(x) for k, x in zip(SEAT_SUM_COLS, v)}})
    seat_summary = pd.DataFrame(rows)
    t = acc["tickets"]                     # (slot, ticket, [offered, kept, completed, by_station])
    tickets = []
    for slot in range(n):
        df = pd.DataFrame(t[slot, :len(board.ticket_id)],
                          columns=["offered", "kept", "completed", "by_station"])
        df.insert(0, "ticket", board.ticket_id)
        df.insert(1, "policy", cfg.names[slot])
        tickets.append(df)
    ticket_summary = (pd.concat(tickets).groupby(["ticket", "policy"], as_index=False, sort=True)
                      .sum())
    r = acc["routes"][:len(board.route_id)]      # (route, bin, [claims, needed])
    ri, bi = np.nonzero(r[:, :, 0])
    route_summary = pd.DataFrame({"route": board.route_id[ri], "turn_bin": bi * TURN_BIN_WIDTH,
                                  "claims": r[ri, bi, 0], "needed": r[ri, bi, 1]})
    u = acc["tunnels"][:len(board.route_id)]     # (route, extra, [attempts, paid, declined])
    ui, ei = np.nonzero(u[:, :, 0])
    tunnel_summary = pd.DataFrame({"route": board.route_id[ui], "extra": ei,
                                   "attempts": u[ui, ei, 0], "paid": u[ui, ei, 1],
                                   "declined": u[ui, ei, 2]})
    s = acc["stations"][:len(board.cities)]
    station_summary = pd.DataFrame({"city": list(board.cities), "built": s[:, 0],
                                    "borrowed": s[:, 1]})
    return {"seat_summary": seat_summary, "ticket_summary": ticket_summary,
            "route_summary": route_summary, "tunnel_summary": tunnel_summary,
            "station_summary": station_summary}


# ---------------------------------------------------------------------------
# results

class Run:
    """Results of a simulation: DataFrames (docs/tables.md), ``manifest`` and ``board``.

    Per-event runs have ``games, tickets, routes, tunnels, stations``; summary runs have
    ``seat_summary, ticket_summary, route_summary, tunnel_summary, station_summary``. A run
    read from disk loads each table on first access.
    """

    def __init__(self, manifest: dict, board, tables: dict | None = None, path=None):
        self.manifest = manifest
        self.board = board
        self.path = Path(path) if path is not None else None
        self._tables = dict(tables or {})

    @property
    def table_names(self) -> tuple:
        return SUMMARY_TABLES if self.manifest["summary"] else EVENT_TABLES

    def __getattr__(self, name):
        if name.startswith("_") or name not in (EVENT_TABLES + SUMMARY_TABLES):
            raise AttributeError(name)
        if name not in self.table_names:
            return None
        if name not in self._tables:
            if self.path is None:
                return None
            self._tables[name] = _read_table(self.path, name, self.manifest, self.board)
        return self._tables[name]

    def tables(self) -> dict:
        return {name: getattr(self, name) for name in self.table_names}

    def summary(self, by: str = "auto") -> pd.DataFrame:
        """Per policy, or per seat when every seat plays the same policy: seat-games, wins,
        win share with its 95% Wilson interval, mean score, score against the other seats,
        tickets kept and completed (``ttrsim.summary.summary_table``; docs/tables.md).
        ``by="policy"`` or ``by="seat"`` chooses the grouping."""
        from ttrsim.summary import summary_table

        return summary_table(self, by=by)

    def summary_text(self, by: str = "auto") -> str:
        """The summary as ``ttrsim simulate`` prints it: a header (board, players, games,
        seed, time), the table of ``summary()`` and where the results are."""
        from ttrsim.summary import summary_text

        return summary_text(self, by=by)

    def game(self, i: int, policies=None):
        """Game ``i`` of the run, move by move: a ``GameRecord`` (``.moves``, ``.at(turn)``,
        ``.final``, ``.html(path)``, and the run's rows of that game as ``.games``,
        ``.tickets``, ...), played again from the game's seed. A run read from disk
        replays its Python policies only when they are given again: ``policies``, one
        spec per slot as given to ``simulate``."""
        from ttrsim.record import record_game

        m = self.manifest
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 0 <= i < m["games"]:
            raise ValueError(f"game {i!r} outside 0..{m['games'] - 1}")
        i = int(i)
        specs = tuple(policies) if policies is not None else getattr(self, "_specs", None)
        if specs is None:
            specs = tuple(m["policies"])
        if len(specs) != m["players"]:
            raise ValueError(f"policies: the run has {m['players']} policy slots, got {len(specs)}")
        for spec in specs:
            try:
                make_policy(spec, self.board)
            except (ValueError, KeyError) as exc:
                raise ValueError(f"policy {spec!r} of this run cannot be rebuilt from its name "
                                 f"({exc}); give the run's policies again: "
                                 f"run.game({i}, policies=[...]), one spec per slot") from None
        cfg = _config_from_manifest(m, self.board)
        seed = int(game_seeds(cfg.key, 1, i)[0])
        return record_game(self.board, list(specs), seed, game=i, rotate=cfg.rotate,
                           max_turns=cfg.max_turns, names=tuple(m["policies"]),
                           tables=lambda: _replay_tables(self, i, specs))

    def __repr__(self) -> str:
        m = self.manifest
        mode = "summary" if m["summary"] else "per-event"
        return (f"<Run {m['board']} {m['players']}p {m['games']} games seed {m['seed']} "
                f"{mode} policies {m['policies']}>")


def _part(path: Path, table: str, b: int, ext: str = "parquet") -> Path:
    return path / table / f"part-{b:06d}.{ext}"


def _done_marker(path: Path, b: int) -> Path:
    return path / "done" / f"{b:06d}"


def _atomic_write(target: Path, write) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    write(tmp)
    os.replace(tmp, target)


def _write_batch(path: Path, cfg: _Config, b: int, payload: dict) -> None:
    if cfg.summary:
        _atomic_write(_part(path, "summary", b, "npz"),
                      lambda p: np.savez(open(p, "wb"), **{k: np.asarray(v) for k, v in payload.items()}))
    else:
        for name, df in payload.items():
            _atomic_write(_part(path, name, b), lambda p, df=df: df.to_parquet(p, index=False))
    _atomic_write(_done_marker(path, b), lambda p: p.write_text(""))


def _read_table(path: Path, name: str, manifest: dict, board) -> pd.DataFrame:
    parts = [_part(path, name, b) for b in range(manifest["batches"])]
    df = pd.concat([pd.read_parquet(p) for p in parts], ignore_index=True)
    # Parquet keeps categories per file (an empty part keeps none): restore the run's.
    cats = _categories(_config_from_manifest(manifest, board))
    for col in df.columns.intersection(list(cats)):
        df[col] = df[col].astype(object).astype(cats[col])
    return df


def _read_summary(path: Path, cfg: _Config) -> dict:
    acc = None
    for b in range(cfg.n_batches):
        with np.load(_part(path, "summary", b, "npz")) as z:
            acc = _add_summary(acc, {k: z[k] for k in z.files})
    return acc


def _add_summary(acc, payload: dict) -> dict:
    if acc is None:
        return {k: np.array(v, copy=True) for k, v in payload.items()}
    for k, v in payload.items():
        acc[k] = acc[k] + v
    return acc


# ---------------------------------------------------------------------------
# the public entry points

def simulate(board="europe", players=4, games: int = 10_000, seed: int = 0, n_jobs: int = 1, *,
             batch_size: int | None = None, rotate: bool = True, summary: bool = False,
             out=None, backend: str = "loky", scheduler: str | None = None,
             progress: bool = False, max_turns: int = DEFAULT_MAX_TURNS) -> Run:
    """Play ``games`` complete games and return their results as a ``Run``.

    Parameters
    ----------
    board : ``"usa"``, ``"europe"``, ``"newyork"``, a map file path or a loaded board.
    players : a player count (every seat plays the default policy, ``tickets``) or a list
        of policy specs, one per seat (names like ``"tickets:stations=0"``, Python
        callables or objects with ``choose``; see ``ttrsim policies``).
    games : number of games. seed : the run's seed (same seed, same tables).
    n_jobs : joblib workers (-1: all cores). The tables do not depend on it.
    batch_size : games per call into the core (default: games / 100 within 1,000..10,000).
    rotate : seat the policies in rotation (policy k plays seat (k + game) % players), so
        each sits in each seat equally often.
    summary : keep counts aggregated in the core instead of per-event tables; memory stays
        flat whatever the number of games.
    out : directory for Parquet parts and ``manifest.json``, written as batches finish; the
        same call again resumes an interrupted run. A directory holding a different run is
        refused.
    backend : ``"loky"`` (local processes) or ``"dask"`` (a dask.distributed cluster at
        ``scheduler``, e.g. ``"tcp://10.0.0.5:8786"``; needs ``pip install ttrsim[dask]``).
    progress : show a progress bar (games/s, ETA).
    max_turns : a game still running after this many turns is stopped and scored
        (``truncated`` in the games table); built-in policies never reach it.
    """
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs == 0:
        raise ValueError(f"n_jobs (--jobs) must be a number of workers (1, 2, ...) or -1 for every "
                         f"core (-2: all but one, ...), got {n_jobs!r}")
    cfg = _config(board, players, games, seed, batch_size, rotate, summary, max_turns)
    _check_backend(backend, scheduler)
    manifest = cfg.manifest()
    path = Path(out) if out is not None else None
    done = set()
    if path is not None:
        done = _prepare_out(path, manifest, cfg)
    todo = [b for b in range(cfg.n_batches) if b not in done]
    results: dict[int, dict] = {}
    acc = None
    bar = _progress_bar(cfg, done, progress)
    start = time.perf_counter()
    batches = _execute(cfg, todo, n_jobs, backend, scheduler)
    try:
        for b, payload in batches:
            if path is not None:
                _write_batch(path, cfg, b, payload)
            if cfg.summary:
                acc = _add_summary(acc, payload)
            elif path is None:
                results[b] = payload
            if bar is not None:
                first, stop = cfg.batch_range(b)
                bar.update(stop - first)
    finally:
        # Stopped early (Ctrl-C, an error): cancel the batches still queued. Every batch
        # that finished is already on disk, so joblib's warning about cancelled tasks
        # says nothing the caller needs.
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*tasks which were still being processed",
                                    category=UserWarning)
            batches.close()
        if bar is not None:
            bar.close()
    manifest["wall_seconds_last_session"] = round(time.perf_counter() - start, 3)
    manifest["games_last_session"] = sum(cfg.batch_range(b)[1] - cfg.batch_range(b)[0] for b in todo)
    if path is not None:
        manifest["complete"] = True
        _atomic_write(path / "manifest.json", lambda p: p.write_text(json.dumps(manifest, indent=2)))
        if cfg.summary:
            return _with_specs(Run(manifest, cfg.board, _summary_tables(cfg, _read_summary(path, cfg)), path), cfg)
        return _with_specs(Run(manifest, cfg.board, None, path), cfg)
    if cfg.summary:
        return _with_specs(Run(manifest, cfg.board, _summary_tables(cfg, acc)), cfg)
    tables = {name: pd.concat([results[b][name] for b in range(cfg.n_batches)], ignore_index=True)
              for name in EVENT_TABLES}
    return _with_specs(Run(manifest, cfg.board, tables), cfg)


def _with_specs(run: Run, cfg: _Config) -> Run:
    # the policy objects themselves, so that Run.game can replay Python policies too
    run._specs = cfg.policies
    return run


def _progress_bar(cfg: _Config, done: set, show: bool):
    if not show:
        return None
    from tqdm.auto import tqdm

    already = sum(cfg.batch_range(b)[1] - cfg.batch_range(b)[0] for b in done)
    return tqdm(total=cfg.games, initial=already, unit="game", unit_scale=True,
                desc=f"{cfg.board.name} {cfg.n_players}p", smoothing=0.1)


def _check_backend(backend: str, scheduler: str | None) -> None:
    """Refuse a backend that cannot run before anything is written."""
    if backend == "dask":
        try:
            import distributed  # noqa: F401
        except ImportError:
            raise ImportError("the dask backend needs dask.distributed, which is not installed: "
                              "pip install 'ttrsim[dask]'") from None
        if not scheduler:
            raise ValueError("the dask backend needs the scheduler address (scheduler=/--scheduler)")
    elif backend != "loky":
        raise ValueError(f"unknown backend {backend!r}: use 'loky' (local) or 'dask' (cluster)")


def _execute(cfg: _Config, todo: list, n_jobs: int, backend: str, scheduler: str | None):
    """Yield (batch index, payload) as batches finish, in any order."""
    yield from run_tasks(_run_batch, [(cfg, b) for b in todo], n_jobs, backend, scheduler)


def run_tasks(func, args_list: list, n_jobs: int = 1, backend: str = "loky",
              scheduler: str | None = None):
    """Yield ``func(*args)`` for each entry of ``args_list`` as they finish (any order), in
    this process (``n_jobs=1``), on joblib workers (``backend="loky"``) or on a
    dask.distributed cluster (``"dask"``, at ``scheduler``). Every batch job of ttrsim
    (simulate, compare, route_importance, ticket_fairness) goes through here."""
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs == 0:
        raise ValueError(f"n_jobs must be a number of workers (1, 2, ...) or -1 for every core, "
                         f"got {n_jobs!r}")
    _check_backend(backend, scheduler)
    if not args_list:
        return
    tasks = (joblib.delayed(func)(*a) for a in args_list)
    if backend == "dask":
        from distributed import Client

        try:
            client = Client(scheduler)
        except OSError as exc:
            raise ValueError(f"cannot reach the dask scheduler at {scheduler} ({exc}); start one "
                             "with 'dask scheduler' and give its address to scheduler= "
                             "(--scheduler)") from None
        with client, joblib.parallel_config(backend="dask"):
            try:
                client.wait_for_workers(1, timeout=60)
            except (TimeoutError, OSError):
                raise ValueError(f"the dask scheduler at {scheduler} has had no worker for 60 s; "
                                 f"start some with 'dask worker {scheduler}'") from None
            yield from joblib.Parallel(n_jobs=-1, return_as="generator_unordered")(tasks)
        return
    if n_jobs == 1 or len(args_list) == 1:
        for a in args_list:
            yield func(*a)
        return
    with _sigint_held():
        results = joblib.Parallel(n_jobs=n_jobs, backend="loky", return_as="generator_unordered")(tasks)
    yield from results


@contextmanager
def _sigint_held():
    """Hold SIGINT while joblib starts its worker processes (a few milliseconds: starting a
    process does not wait for it), then deliver a Ctrl-C pressed meanwhile. The signal is
    blocked in this thread, and the workers inherit the blocked signal, so a Ctrl-C
    interrupts this process alone, which then cancels the workers, instead of interrupting
    every worker too (each printing a traceback when caught while still starting up)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    # A Ctrl-C is sent to the process: blocked here, the kernel hands it to another thread
    # if there is one (numpy's BLAS threads), where Python's C handler notes it for this
    # thread; the handler below then records it. Otherwise it stays pending and arrives
    # when unblocked. Either way it interrupts right after the workers are up, instead of
    # being lost while the first batches already finish.
    caught = []
    block = hasattr(signal, "pthread_sigmask")
    if block:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if block:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
        if caught:
            signal.raise_signal(signal.SIGINT)


def _prepare_out(path: Path, manifest: dict, cfg: _Config) -> set:
    """Check an existing directory belongs to this run; return the batches already done."""
    if path.exists() and not path.is_dir():
        raise ValueError(f"out={str(path)!r} (--out) is a file; give a directory for the results "
                         "(it is created if missing)")
    mfile = path / "manifest.json"
    if mfile.exists():
        try:
            old = json.loads(mfile.read_text())
        except json.JSONDecodeError:
            raise ValueError(f"{mfile} is not a ttrsim manifest") from None
        diff = [k for k in IDENTITY if old.get(k) != manifest.get(k)]
        if diff:
            detail = ", ".join(f"{k}: {old.get(k)!r} there, {manifest.get(k)!r} here" for k in diff)
            raise ValueError(f"{path} holds a different run ({detail}); choose another --out "
                             "directory or delete it")
    elif path.exists() and any(path.iterdir()):
        raise ValueError(f"{path} is not empty and holds no ttrsim run; choose another --out directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"cannot create the out= (--out) directory {str(path)!r}: "
                         f"{exc.strerror or exc}") from None
    started = dict(manifest, complete=False)
    _atomic_write(mfile, lambda p: p.write_text(json.dumps(started, indent=2)))
    return {b for b in range(cfg.n_batches) if _done_marker(path, b).exists()}


def load_run(path) -> Run:
    """Read a run written with ``out=`` (or ``--out``) back."""
    path = Path(path)
    mfile = path / "manifest.json"
    if not mfile.exists():
        raise FileNotFoundError(f"{path} holds no ttrsim run (no manifest.json)")
    manifest = json.loads(mfile.read_text())
    missing = [b for b in range(manifest["batches"]) if not _done_marker(path, b).exists()]
    if missing:
        raise ValueError(f"{path} is incomplete ({len(missing)} of {manifest['batches']} batches "
                         "missing); run the same simulate command again to resume it")
    board = _board_of(manifest)
    if manifest["summary"]:
        cfg = _config_from_manifest(manifest, board)
        return Run(manifest, board, _summary_tables(cfg, _read_summary(path, cfg)), path)
    return Run(manifest, board, None, path)


def _board_of(manifest: dict):
    from ttrsim import maps

    name = manifest["board"]
    source = manifest.get("board_path") or name
    if manifest.get("variant"):
        from ttrsim.variants import rebuild

        source, board = f"variant {name}", rebuild(manifest["variant"])
    else:
        board = maps.load(source)
    if board.checksum != manifest["board_checksum"]:
        raise ValueError(f"board {source!r} has changed since the run (checksum differs)")
    return board


def _config_from_manifest(manifest: dict, board) -> _Config:
    specs = tuple(manifest["policies"])
    return _Config(board, specs, manifest["games"], manifest["seed"], manifest["batch_size"],
                   manifest["rotate"], manifest["summary"], manifest["max_turns"], specs)


def replay(run: Run, game: int, policies=None):
    """Game ``game`` of a run again, move by move: a ``ttrsim.record.GameRecord`` (see
    ``Run.game``), which also has the run's rows of that game (``.games``, ``.tickets``,
    ...)."""
    return run.game(game, policies)


def _replay_tables(run: Run, game: int, specs) -> dict:
    """The run's rows of one game, from the batch loop played again on that game alone."""
    m = run.manifest
    cfg = _config_from_manifest(dict(m, summary=False), run.board)
    cfg = _Config(cfg.board, tuple(specs), cfg.games, cfg.seed, cfg.batch_size, cfg.rotate,
                  False, cfg.max_turns, cfg.names)
    return _batch_tables(cfg, _play(cfg, game, game + 1), game)
