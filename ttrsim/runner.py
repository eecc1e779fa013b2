"""The Monte Carlo runner: ``simulate`` many games in batches, ``replay`` one of them.

Each batch is one call into the compiled core (``ttrsim.batches``); the batches run through
the one dispatcher (``ttrsim.dispatch``: joblib workers or a dask cluster). Game ``g`` of a
run is dealt from a seed that depends only on the run's seed and ``g``, so the tables are
identical whatever ``n_jobs``, the batch order or the backend, and any single game can be
replayed. With ``out=`` each batch is written to disk as it arrives (``ttrsim.results``);
running the same call again resumes and skips the batches already written.
docs/tables.md documents every column.
"""
from __future__ import annotations

import time
from contextlib import closing
from pathlib import Path

import pandas as pd

from ttrsim._validate import check_out_dir
from ttrsim.batches import DEFAULT_MAX_TURNS, IDENTITY, RunConfig, make_config, play
from ttrsim.dispatch import check_workers, progress_bar, run_tasks
from ttrsim.results import (Run, batch_name, broken_batches, check_kind, finish_out, prepare_out,
                            read_manifest, saved_run, unmark_done, write_batch)
from ttrsim.tables import EVENT_TABLES, add_summary, batch_summary, batch_tables, summary_tables

__all__ = ["simulate", "replay"]


def _run_batch(cfg: RunConfig, b: int) -> tuple[int, dict]:
    """Play batch ``b`` (in a worker) and reduce it to tables or summary counts."""
    first, stop = cfg.batch_range(b)
    res = play(cfg, first, stop)
    if cfg.summary:
        return b, batch_summary(cfg, res)
    return b, batch_tables(cfg, res, first)


def _batches_done(path, saved, manifest: dict, cfg) -> set:
    """Open ``path`` (the one resume routine) and return the batches written whole there."""
    identity, redo = IDENTITY, set()
    if saved is not None:
        check_kind(path, saved, manifest)     # a study's directory is not a run to grow
    if saved is not None and saved.get("games") != cfg.games:
        identity, redo = _extension(path, saved, cfg)
    names = prepare_out(path, manifest, identity)
    # a part cut short or damaged since it was written: play its batch again
    done = {b for b in range(cfg.n_batches) if batch_name(b) in names}
    redo |= set(broken_batches(path, cfg.summary, done))
    for b in redo:        # forgotten before any game: an interrupt now cannot keep it
        unmark_done(path, batch_name(b))
    return done - redo


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
    batch_size : games per call into the core (default: games / 100 within 1,000..10,000,
        smaller for slow policies, chosen from their measured cost so that a batch plays
        in a few seconds: the progress bar moves and Ctrl-C keeps every finished batch).
    rotate : seat the policies in rotation (seat s is played by policy (s + game) % players), so
        each sits in each seat equally often.
    summary : keep counts aggregated in the core instead of per-event tables; memory stays
        flat whatever the number of games.
    out : directory for Parquet parts and ``manifest.json``, written as batches finish; the
        same call again resumes an interrupted run (keeping the batch size it started with,
        and playing again any batch whose part is damaged). The same call with more
        ``games`` extends a run: its games stay as they are and the tables equal those of
        one run of that many games. A directory holding a different run is refused.
    backend : ``"loky"`` (local processes) or ``"dask"`` (a dask.distributed cluster at
        ``scheduler``, e.g. ``"tcp://10.0.0.5:8786"``; needs ``pip install ttrsim[dask]``).
    progress : show a progress bar (games/s, ETA).
    max_turns : a game still running after this many turns is stopped and scored
        (``truncated`` in the games table); built-in policies never reach it.
    """
    check_workers(n_jobs, backend, scheduler)
    path = check_out_dir(out)
    saved = saved_manifest(path)
    if saved is not None and batch_size is None:
        batch_size = saved.get("batch_size")   # a resumed or extended run keeps its batches
    cfg = make_config(board, players, games, seed, batch_size, rotate, summary, max_turns)
    manifest = cfg.manifest()
    done = set() if path is None else _batches_done(path, saved, manifest, cfg)
    todo = [b for b in range(cfg.n_batches) if b not in done]
    results: dict[int, dict] = {}
    acc = None
    bar = progress_bar(progress, cfg.games, cfg.batch_games(done),
                       desc=f"{cfg.board.name} {cfg.n_players}p")
    start = time.perf_counter()
    batches = run_tasks(_run_batch, [(cfg, b) for b in todo], n_jobs, backend, scheduler,
                        bar=bar, sizes=[cfg.batch_games([b]) for b in todo])
    with closing(batches):
        for b, payload in batches:
            if path is not None:
                write_batch(path, cfg, b, payload)
            if cfg.summary:
                acc = add_summary(acc, payload)
            elif path is None:
                results[b] = payload
    manifest["wall_seconds_last_session"] = round(time.perf_counter() - start, 3)
    manifest["games_last_session"] = cfg.batch_games(todo)
    if path is not None:
        finish_out(path, manifest)
        return saved_run(path, manifest, cfg)
    if cfg.summary:
        return Run(manifest, cfg.board, summary_tables(cfg, acc), policies=cfg.policies)
    tables = {name: pd.concat([results[b][name] for b in range(cfg.n_batches)], ignore_index=True)
              for name in EVENT_TABLES}
    # the policy objects themselves, so that Run.game can replay Python policies too
    return Run(manifest, cfg.board, tables, policies=cfg.policies)


def replay(run: Run, game: int, policies=None):
    """Game ``game`` of a run again, move by move: a ``ttrsim.record.GameRecord`` (see
    ``Run.game``), which also has the run's rows of that game (``.games``, ``.tickets``,
    ...)."""
    return run.game(game, policies)


def saved_manifest(path) -> dict | None:
    """The manifest of the run saved at ``path``, or None when there is none yet."""
    if path is None or not (Path(path) / "manifest.json").is_file():
        return None
    return read_manifest(path)


def _extension(path: Path, saved: dict, cfg: RunConfig) -> tuple[tuple, set]:
    """Check that ``cfg`` extends the run saved at ``path`` (the same run with more games)
    and return the identity keys to compare and the batches to play again: the saved
    run's last batch when it held fewer games than a batch."""
    old = saved.get("games")
    if not isinstance(old, int):
        raise ValueError(f"{path / 'manifest.json'} is not the manifest of a simulate run (no "
                         "game count); choose another --out directory or delete this one")
    if old > cfg.games:
        raise ValueError(f"{path} holds a run of {old} games; a run can grow but not shrink: "
                         f"give --games {old} or more (games=), or choose another --out directory")
    identity = tuple(k for k in IDENTITY if k != "games")
    if saved.get("batch_size") != cfg.batch_size:
        return identity, set()         # refused by prepare_out, which names the difference
    partial = old % cfg.batch_size
    return identity, ({old // cfg.batch_size} if partial else set())
