"""A run's results in memory and on disk.

``Run`` holds the tables of docs/tables.md (in memory, or read from disk a table at a time);
a directory written with ``out=`` holds ``manifest.json`` plus one part per finished task
and a ``done`` marker per task, each written atomically (a temporary file renamed), so an
interrupted job leaves only whole parts behind. :func:`prepare_out` is the one resume
routine: the same job pointed at its directory again skips the tasks already done.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd

from ttrsim import maps
from ttrsim._validate import shown
from ttrsim.batches import RunConfig, config_from_manifest
from ttrsim.summary import summary_table, summary_text
from ttrsim.tables import EVENT_TABLES, SUMMARY_TABLES, add_summary, categories, summary_tables
from ttrsim.variants import rebuild

__all__ = ["Run", "load_run", "board_of", "prepare_out", "finish_out", "mark_done", "unmark_done",
           "resumed_batch_size", "check_kind", "job_kind",
           "atomic_write", "part_path"]


class Run:
    """Results of a simulation: DataFrames (docs/tables.md), ``manifest`` and ``board``.

    Per-event runs have ``games, tickets, routes, tunnels, stations``; summary runs have
    ``seat_summary, ticket_summary, route_summary, tunnel_summary, station_summary,
    profile_summary``. A run read from disk loads each table on first access. ``policies``: the policy specs or
    objects the run was played with (one per slot), which ``game`` replays; by default the
    manifest's names.
    """

    def __init__(self, manifest: dict, board, tables: dict | None = None, path=None,
                 policies=None):
        self.manifest = manifest
        self.board = board
        self.path = Path(path) if path is not None else None
        self._tables = dict(tables or {})
        self._policies = tuple(policies) if policies is not None else None

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

    def loaded(self, name: str) -> bool:
        """Whether table ``name`` is in memory (a run read from disk loads tables lazily)."""
        return name in self._tables or self.path is None

    def table_parts(self, name: str, columns=None):
        """Table ``name`` of a saved run, one DataFrame per batch (memory stays flat)."""
        if self.path is None:
            raise ValueError("this run is not saved on disk; its tables are in memory")
        for b in range(self.manifest["batches"]):
            yield _read_part(part_path(self.path, name, b), columns=columns)

    def summary(self, by: str = "auto") -> pd.DataFrame:
        """Per policy, or per seat when every seat plays the same policy: seat-games, wins,
        win share with its 95% Wilson interval, mean score, score against the other seats,
        tickets kept and completed (``ttrsim.summary.summary_table``; docs/tables.md).
        ``by="policy"`` or ``by="seat"`` chooses the grouping."""
        return summary_table(self, by=by)

    def summary_text(self, by: str = "auto") -> str:
        """The summary as ``ttrsim simulate`` prints it: a header (board, players, games,
        seed, time), the table of ``summary()`` and where the results are."""
        return summary_text(self, by=by)

    def game(self, i: int, policies=None, *, how: str | None = None):
        """Game ``i`` of the run, move by move: a ``GameRecord`` (``.moves``, ``.at(turn)``,
        ``.final``, ``.html(path)``, and the run's rows of that game as ``.games``,
        ``.tickets``, ...), played again from the game's seed (docs/viewer.md). A run read
        from disk replays its Python policies only when they are given again:
        ``policies``, one spec per slot as given to ``simulate``. ``how``: the words that
        tell the caller how to give them, in errors (default: ``policies=[...]``; the
        command line names ``--policy``)."""
        from ttrsim.batches import game_seeds
        from ttrsim._validate import check_int
        from ttrsim.batches import play
        from ttrsim.policies import check_policy
        from ttrsim.record import record_game
        from ttrsim.tables import batch_tables

        m = self.manifest
        i = check_int("game", i, 0, m["games"] - 1)
        if m.get("people"):
            return self._people_game(i, policies)
        how = how or f"run.game({i}, policies=[...]), one spec per slot"
        specs = tuple(policies) if policies is not None else self._policies
        if specs is None:
            specs = tuple(m["policies"])
        if len(specs) != m["players"]:
            raise ValueError(f"policies: the run has {m['players']} policy slots, got {len(specs)}")
        for spec in specs:
            try:
                check_policy(spec, self.board)
            except (ValueError, KeyError) as exc:
                raise ValueError(f"policy {spec!r} of this run cannot be rebuilt from its name "
                                 f"({exc}); give the run's policies again: "
                                 f"{how}") from None
        cfg = config_from_manifest(m, self.board, summary=False, policies=specs,
                                   names=tuple(m["policies"]))
        seed = int(game_seeds(cfg.key, 1, i)[0])
        rec = record_game(self.board, list(specs), seed, game=i, rotate=cfg.rotate,
                          max_turns=cfg.max_turns, names=cfg.names,
                          tables=lambda: batch_tables(cfg, play(cfg, i, i + 1), i))
        self._check_replay(rec, i, specs, how)
        return rec

    def _people_game(self, i: int, policies):
        """Game ``i`` of a run of people's games (``ttrsim play``): the decisions a person
        made cannot be played again by a policy, so the game replays from the decisions
        recorded with it (every seat's), checked against the run's scores."""
        from ttrsim.batches import game_seeds
        from ttrsim.record import record_decisions

        m = self.manifest
        people = ", ".join(f"seat {q} ({m['policies'][q]})" for q in m["people"])
        if policies is not None:
            raise ValueError(f"this run holds people's games ({people} played by a person, "
                             f"ttrsim play): game {i} replays from its recorded decisions, "
                             "no policies can be given to play it again")
        if self.path is None:
            raise ValueError("a run of people's games replays from its directory; load it "
                             "with load_run")
        b = i // m["batch_size"]
        dec = _read_part(part_path(self.path, "decisions", b))
        dec = dec[dec["game"] == i].sort_values("decision")
        cfg = config_from_manifest(m, self.board, summary=False)
        seed = int(game_seeds(cfg.key, 1, i)[0])

        def rows():
            cats = categories(cfg)
            out = {}
            for name in EVENT_TABLES:
                df = _read_part(part_path(self.path, name, b))
                df = df[df["game"] == i].reset_index(drop=True)
                for col in df.columns.intersection(list(cats)):
                    df[col] = df[col].astype(object).astype(cats[col])
                out[name] = df
            return out

        rec = record_decisions(self.board, seed, dec["code"].to_numpy(), dec["seat"].to_numpy(),
                               names=tuple(m["policies"]), game=i, max_turns=m["max_turns"],
                               tables=rows)
        got = {int(q): int(t) for q, t in zip(rec.final.index, rec.final["total"])}
        if got != self._saved_scores(i):
            raise ValueError(f"game {i}'s recorded decisions end with scores {got}, the run's "
                             f"game with {self._saved_scores(i)}: {self.path} is damaged")
        return rec

    def _check_replay(self, rec, i: int, specs, how: str) -> None:
        """Refuse a replay that does not end as the run's game did (another ttrsim version
        or expert model plays other games from the same seed); a run without per-game rows
        (summary mode) can only be checked by its manifest: a warning then."""
        import warnings

        from ttrsim._version import __version__
        from ttrsim.policies import expert_models

        m = self.manifest
        why = []
        if m.get("ttrsim_version") != __version__:
            why.append(f"the run was played by ttrsim {m.get('ttrsim_version')}, this is "
                       f"{__version__}")
        models = [model_digests(m.get("expert_models")), model_digests(expert_models(specs))]
        if models[0] != models[1]:
            why.append(f"its expert models were {models[0] or 'none'}, these are "
                       f"{models[1] or 'none'}")
        saved = self._saved_scores(i)
        if saved is None:
            if why:
                warnings.warn(f"game {i} may not be the run's game: {'; '.join(why)} (a "
                              "summary run keeps no per-game scores to check it against)",
                              stacklevel=3)
            return
        got = {int(q): int(t) for q, t in zip(rec.final.index, rec.final["total"])}
        if got != saved:
            cause = "; ".join(why) or "the policies do not play as the run's did"
            raise ValueError(
                f"game {i} played again ends with scores {got}, the run's game with {saved}: "
                f"{cause}. Replay it with the version and models that played it, or give "
                f"policies that do: {how}")

    def _saved_scores(self, i: int) -> dict | None:
        """The run's final score of game ``i`` by seat, or None for a summary run."""
        if self.manifest["summary"]:
            return None
        if "games" in self._tables:
            games = self._tables["games"]
        elif self.path is not None:
            b = i // self.manifest["batch_size"]
            games = _read_part(part_path(self.path, "games", b), columns=["game", "seat", "score"])
        else:
            return None
        rows = games[games["game"] == i]
        return {int(q): int(t) for q, t in zip(rows["seat"], rows["score"])}

    def __repr__(self) -> str:
        m = self.manifest
        mode = "summary" if m["summary"] else "per-event"
        return (f"<Run {m['board']} {m['players']}p {m['games']} games seed {m['seed']} "
                f"{mode} policies {m['policies']}>")


# ---------------------------------------------------------------------------
# the directory of a job: manifest, parts, done markers


def part_path(path: Path, table: str, b: int, ext: str = "parquet") -> Path:
    """Where part ``b`` of table ``table`` lies."""
    return Path(path) / table / f"part-{b:06d}.{ext}"


def _done_marker(path: Path, name: str) -> Path:
    return path / "done" / name


def atomic_write(target: Path, write) -> None:
    """Write ``target`` through ``write(tmp_path)`` and a rename, so that a reader (or a
    resumed job) sees the whole file or none of it; a write that fails (the disk full,
    Ctrl-C) leaves ``target`` as it was and no half-written file beside it."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    try:
        write(tmp)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def update_json(path, update, *, default, indent: int = 1) -> None:
    """Read the JSON file at ``path`` (``default`` when it is missing), pass it through
    ``update`` and write the result back atomically, all under an exclusive lock
    (``PATH.lock``): processes adding to one file at once keep each other's additions."""
    import fcntl

    path = Path(path)
    with open(path.with_name(path.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        data = update(json.loads(path.read_text()) if path.exists() else default)
        atomic_write(path, lambda p: p.write_text(json.dumps(data, indent=indent) + "\n"))


def model_digests(models) -> list:
    """The distinct digests of a manifest's ``expert_models`` ({path: digest}), sorted:
    what identifies the models, wherever their files lie."""
    return sorted(set((models or {}).values()))


def _write_manifest(path: Path, manifest: dict) -> None:
    atomic_write(path / "manifest.json", lambda p: p.write_text(json.dumps(manifest, indent=2)))


def read_manifest(path) -> dict:
    """The manifest of a saved job; a clear error when it is missing or unreadable."""
    mfile = Path(path) / "manifest.json"
    if not Path(path).exists():
        raise FileNotFoundError(f"{path} does not exist: give the directory a saved run was "
                                "written to")
    if not Path(path).is_dir():
        raise FileNotFoundError(f"{path} is a file, not a saved run's directory")
    if not mfile.exists():
        raise FileNotFoundError(f"{path} holds no ttrsim run (no manifest.json)")
    try:
        manifest = json.loads(mfile.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise ValueError(f"{mfile} is not a ttrsim manifest (not valid JSON); delete the "
                         "directory and run the job again") from None
    if not isinstance(manifest, dict):
        raise ValueError(f"{mfile} is not a ttrsim manifest (not a JSON object); delete the "
                         "directory and run the job again")
    return manifest


def _search_budgets(manifest: dict) -> dict:
    """A run manifest's ``search_budgets``; for a run saved before they were recorded, the
    budgets its search policies played under the default of that time."""
    if "search_budgets" in manifest or "policies" not in manifest:
        return manifest.get("search_budgets", {})
    from ttrsim.policies import search_budgets

    return search_budgets([p for p in manifest["policies"] if isinstance(p, str)], before=True)


def prepare_out(path, manifest: dict, identity, what: str = "run", models: bool = True) -> set:
    """Open ``path`` for a job described by ``manifest`` and return the names of the tasks
    already done there.

    The directory must be missing, empty, or hold the same job: the ``identity`` keys of
    its manifest must equal ours and (``models``) its ``expert`` model files have the same
    contents (else a ValueError names each difference; a league, whose runs check their
    own models, passes ``models=False``). The manifest is (re)written atomically with
    ``complete: false`` until :func:`finish_out`.
    """
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise ValueError(f"out={str(path)!r} (--out) is a file; give a directory for the results "
                         "(it is created if missing)")
    if (path / "manifest.json").exists():
        old = read_manifest(path)
        check_kind(path, old, manifest)
        diff = [k for k in identity if old.get(k) != manifest.get(k)]
        details = [f"{k}: {shown(old.get(k))} there, {shown(manifest.get(k))} here" for k in diff]
        # the same spec plays other games with another model file: compared by content,
        # wherever the file lies
        digests = [model_digests(m.get("expert_models")) if models else []
                   for m in (old, manifest)]
        if digests[0] != digests[1]:
            details.append(f"expert models (SHA-256 prefixes): {digests[0] or 'none'} there, "
                           f"{digests[1] or 'none'} here")
        # of the runs that play policies (a league's runs check their own)
        budgets = ((_search_budgets(old), manifest.get("search_budgets", {}))
                   if what not in ("league", "expert training") else ({}, {}))
        if budgets[0] != budgets[1]:
            details.append(f"the default search's playouts a decision: {shown(budgets[0])} "
                           f"there, {shown(budgets[1])} here (the default changed on 2026-12-02)")
        if details:
            detail = ", ".join(details)
            raise ValueError(f"{path} holds a different {what} ({detail}); choose another --out "
                             "directory or delete it")
    elif path.exists() and any(path.iterdir()):
        raise ValueError(f"{path} is not empty and holds no ttrsim {what}; choose another --out "
                         "directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"cannot create the out= (--out) directory {str(path)!r}: "
                         f"{exc.strerror or exc}") from None
    _write_manifest(path, dict(manifest, complete=False))
    done = path / "done"
    # a marker still being written is named NAME.tmp: only finished ones count
    return {p.name for p in done.iterdir() if not p.name.endswith(".tmp")} if done.is_dir() else set()


def job_kind(manifest: dict) -> str:
    """What a directory's manifest says it holds, in words: "a simulate run" or "a
    ticket-fairness study" (a study's manifest names its ``kind``)."""
    kind = manifest.get("kind")
    if kind is None:
        return "people's games (ttrsim play)" if manifest.get("people") else "a simulate run"
    words = {"league": "a league", "expert_training": "an expert training"}
    return words.get(kind, f"a {str(kind).replace('_', '-')} study")


def check_kind(path, old: dict, manifest: dict) -> None:
    """Refuse a directory that holds another kind of job (a study's results where a
    simulate run is asked for, or the reverse), saying what it holds."""
    if (old.get("kind"), bool(old.get("people"))) != (manifest.get("kind"),
                                                      bool(manifest.get("people"))):
        raise ValueError(f"{path} holds {job_kind(old)}, not {job_kind(manifest)}; choose "
                         "another --out directory (or delete this one)")


def resumed_batch_size(path, batch_size):
    """``batch_size``, or when it is None and ``path`` holds a job already, that job's
    batch size: a resumed job keeps the batches it started with (a size chosen from the
    policies' measured cost could differ from one session to the next)."""
    if batch_size is not None or path is None or not (Path(path) / "manifest.json").is_file():
        return batch_size
    return read_manifest(path).get("batch_size")


def mark_done(path: Path, name: str) -> None:
    """Record that task ``name`` is written (after its parts)."""
    atomic_write(_done_marker(Path(path), name), lambda p: p.write_text(""))


def unmark_done(path: Path, name: str) -> None:
    """Forget that task ``name`` is written: it is played again."""
    _done_marker(Path(path), name).unlink(missing_ok=True)


def finish_out(path: Path, manifest: dict) -> None:
    """Mark ``manifest`` complete and write it."""
    manifest["complete"] = True
    _write_manifest(Path(path), manifest)


def batch_name(b: int) -> str:
    """The task name of batch ``b`` of a run (its done marker)."""
    return f"{b:06d}"


def write_batch(path: Path, cfg: RunConfig, b: int, payload: dict) -> None:
    """Write batch ``b`` of a run (its tables, or its summary counts) and mark it done."""
    if cfg.summary:
        atomic_write(part_path(path, "summary", b, "npz"),
                     lambda p: np.savez(open(p, "wb"), **{k: np.asarray(v) for k, v in payload.items()}))
    else:
        for name, df in payload.items():
            atomic_write(part_path(path, name, b), lambda p, df=df: df.to_parquet(p, index=False))
    mark_done(path, batch_name(b))


def batch_files(path: Path, summary: bool, b: int) -> list[Path]:
    """The files batch ``b`` of a saved run is made of."""
    if summary:
        return [part_path(path, "summary", b, "npz")]
    from ttrsim.tables import EVENT_TABLES

    return [part_path(path, name, b) for name in EVENT_TABLES]


def broken_batches(path, summary: bool, batches) -> dict:
    """Of the given (done) batches, those with a part file missing or unreadable (cut short
    by a full disk, damaged by a copy): ``{batch: file}``. Reads the files' footers only."""
    import pyarrow.parquet as pq

    broken = {}
    for b in batches:
        for f in batch_files(Path(path), summary, b):
            try:
                if summary:
                    with np.load(f) as z:
                        z.files
                else:
                    pq.read_metadata(f)
            except Exception:          # any damage at all: the batch is played again
                broken[b] = f
                break
    return broken


def _read_part(p: Path, **kwargs) -> pd.DataFrame:
    try:
        return pd.read_parquet(p, **kwargs)
    except Exception as exc:
        raise ValueError(f"{p} is damaged or missing ({type(exc).__name__}); run the same "
                         "simulate command again on this directory: it finds the damaged part "
                         "and plays that batch again") from None


def _read_table(path: Path, name: str, manifest: dict, board) -> pd.DataFrame:
    parts = [part_path(path, name, b) for b in range(manifest["batches"])]
    df = pd.concat([_read_part(p) for p in parts], ignore_index=True)
    # Parquet keeps categories per file (an empty part keeps none): restore the run's.
    cats = categories(config_from_manifest(manifest, board))
    for col in df.columns.intersection(list(cats)):
        df[col] = df[col].astype(object).astype(cats[col])
    return df


def read_summary(path: Path, cfg: RunConfig) -> dict:
    """The summary counts of a saved summary-mode run, summed over its batches."""
    acc = None
    for b in range(cfg.n_batches):
        f = part_path(path, "summary", b, "npz")
        try:
            with np.load(f) as z:
                acc = add_summary(acc, {k: z[k] for k in z.files})
        except Exception as exc:       # a damaged zip raises zipfile.BadZipFile
            raise ValueError(f"{f} is damaged or missing ({type(exc).__name__}); run the same "
                             "simulate command again on this directory: it finds the damaged "
                             "part and plays that batch again") from None
    return acc


def saved_run(path: Path, manifest: dict, cfg: RunConfig) -> Run:
    """The ``Run`` of a finished directory (summary counts are summed at once)."""
    tables = summary_tables(cfg, read_summary(path, cfg)) if cfg.summary else None
    return Run(manifest, cfg.board, tables, path, policies=cfg.policies)


def load_run(path) -> Run:
    """Read a run written with ``out=`` (or ``--out``) back."""
    path = Path(path)
    manifest = read_manifest(path)
    if manifest.get("kind") is not None:
        raise ValueError(f"{path} holds {job_kind(manifest)}, not a simulate run; point to the "
                         "directory simulate --out wrote")
    lacking = [k for k in ("board", "board_checksum", "games", "batches", "batch_size", "policies",
                           "seed", "summary") if k not in manifest]
    if lacking:
        raise ValueError(f"{path / 'manifest.json'} is not the manifest of a simulate run (no "
                         f"{', '.join(lacking)}); point to the directory simulate --out wrote, or "
                         "run that command again into a new directory")
    if manifest["games"] == 0:        # people's games: the first one still being played
        raise ValueError(f"{path} holds no finished game yet; finish one with the ttrsim play "
                         "command that saves there (the same command resumes it)")
    missing = [b for b in range(manifest["batches"])
               if not _done_marker(path, batch_name(b)).exists()]
    if missing:
        raise ValueError(f"{path} is incomplete ({len(missing)} of {manifest['batches']} batches "
                         "missing); run the same simulate command again to resume it")
    board = board_of(manifest)
    cfg = config_from_manifest(manifest, board)
    _check_game_count(path, manifest, cfg, None)
    run = saved_run(path, manifest, cfg)
    _check_game_count(path, manifest, cfg, run)
    return run


def _check_game_count(path: Path, manifest: dict, cfg: RunConfig, run: Run) -> None:
    """Refuse a run whose manifest does not count the games its data holds (an edited or
    mixed-up manifest): every figure is divided by the game count, so the data's own count
    must agree with it. A per-event run is counted from its parts' footers (no table read),
    a summary run from its seat counts (``run``: None checks the batches alone, before
    any part is read)."""
    if cfg.n_batches != manifest["batches"]:
        held = None
    elif run is None:
        return
    elif cfg.summary:
        held = int(run.seat_summary["games"].sum()) // cfg.n_players if len(
            run.seat_summary) else 0
    else:
        import pyarrow.parquet as pq

        held = sum(pq.read_metadata(part_path(path, "games", b)).num_rows
                   for b in range(manifest["batches"])) // cfg.n_players
    if held != manifest["games"]:
        what = (f"{manifest['batches']} batch(es) (not the {cfg.n_batches} that "
                f"{manifest['games']} games in batches of {manifest['batch_size']} make)"
                if held is None else f"{held} games")
        raise ValueError(f"{path / 'manifest.json'} says {manifest['games']} games, its data "
                         f"holds {what}: the manifest was edited or belongs to another run; "
                         "run the simulate command again into a new directory")


def board_of(manifest: dict):
    """The board a manifest was made with (its map file, built-in name or variant),
    checked against the manifest's checksum."""
    name = manifest["board"]
    source = manifest.get("board_path") or name
    if manifest.get("variant"):
        source, board = f"variant {name}", rebuild(manifest["variant"])
    else:
        board = maps.load(source)
    if board.checksum != manifest["board_checksum"]:
        raise ValueError(f"board {source!r} has changed since the run (checksum differs)")
    return board
