"""The round driver of expert iteration: :func:`train` (``scripts/train_expert.py`` is
its command line)."""
from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from ttrsim._expert import FEATURES, FORMAT_VERSION
from ttrsim.policies import policy_spec
from ttrsim._version import __version__
from ttrsim.batches import versions
from ttrsim.maps import resolve_board
from ttrsim.results import atomic_write, finish_out, mark_done, prepare_out, unmark_done
from ttrsim.training.evaluation import (BOARDS, agreement, calibrate, gain, strength,
                                        tickets_agreement)
from ttrsim.training.fitting import fit
from ttrsim.training.labelling import label
from ttrsim.training.model_file import export, make_model
from ttrsim.training.positions import load_positions, save_positions, subset

__all__ = ["train", "TrainingDir"]

#: What a training directory must hold to be resumed: a training run (the positions
#: saved there are reused one by one, when labelled under the same key).
IDENTITY = ("kind",)


def train(out, *, rounds: int = 2, boards=BOARDS, players=(2, 3, 4), positions: int = 1000,
          playouts: int = 256, endgame_players=(2, 4), endgame_games: int = 500,
          endgame_playouts: int = 400, max_trains: int = 12, later: float = 0.5,
          setup_trees: int = 100, setup_depth: int = 5, turn_trees: int = 100,
          turn_depth: int = 4, min_leaf: int = 40, calib_games: int = 400,
          final_calib_games: int = 5000, reaches=(12, 16, 20, 24), calib_players=(2, 4),
          midgame_games: int = 2500, midgame_trains: int = 30, midgame_playouts: int = 16,
          midgame_trees: int = 40, midgame_depth: int = 6, midgame_min_leaf: int = 400,
          midgame_reaches=(45,), midgame_passes: int = 2,
          eval_games: int = 2000, holdout: float = 0.2, seed: int = 0, n_jobs: int = 1,
          progress: bool = True) -> list[dict]:
    """Expert iteration. Each round: label initial ticket choices (``positions`` per board
    and player count of ``players``) and fit the ``setup`` section on all of them so
    far; then label end-game turns (``endgame_games`` per board and player count of
    ``endgame_players``, the seat playing the new setup section and the previous round's
    turns) and fit the ``turns`` section (scored once a seat has ``max_trains`` trains or
    fewer), its margin chosen by play (``calibrate``, ``calib_games`` per board and
    margin at 2 players; in the last round also its reach, among ``reaches``, over
    ``final_calib_games`` per board, player count of ``calib_players`` and setting);
    write ``out/expert-round{r}.json``. With ``midgame_games`` > 0, the last round then
    labels whole games too: ``midgame_games`` games per board and player count of
    ``endgame_players`` where one seat plays its calibrated model against ``tickets``,
    every turn once a seat has ``midgame_trains`` trains or fewer, each candidate valued
    by ``midgame_playouts`` playouts (the search over ``tickets`` rollouts: many
    positions with few playouts each taught the trees more than few with many); the
    turn trees are fitted again on every labelled turn (``midgame_trees`` histogram
    trees of depth ``midgame_depth``), their reach and margin chosen again (among
    ``midgame_reaches`` and ``midgame_trains``) into the delivered model. Each further
    pass (``midgame_passes`` in all) labels the same number of whole games where the
    seat plays the model of the pass before, and fits the turn trees again on the
    end-game labels and these only (the turns the model itself reaches);
    record held-out agreement and gain of both sections and strength against ``tickets``
    (2 players, ``eval_games`` per board). Round 1 labels with the search over
    ``tickets`` rollouts against ``tickets``; each later round (``later`` times the
    positions and games) with ``search:rollout=expert`` using the previous round's model,
    against that model. Every 1/holdout-th position or game is held out of the fits.
    ``out`` is opened as every job's directory is (``ttrsim.results.prepare_out``: a
    manifest, done markers, atomic writes); labelled positions are saved there
    (``out/setup-round{r}.npz``, ``out/endgame-round{r}.npz``, ``out/midgame-round{r}.npz``)
    and read back by a later call with the same ``out`` when labelled with the same
    arguments, model files and features (else labelled anew).
    Same arguments, same model files, whatever ``n_jobs``. Returns one record per round
    (also ``out/rounds.json``)."""
    a = SimpleNamespace(**{k: v for k, v in locals().items() if k != "out"})
    a.counts = (int(players),) if np.isscalar(players) else tuple(int(n) for n in players)
    a.end_counts = ((int(endgame_players),) if np.isscalar(endgame_players)
                    else tuple(int(n) for n in endgame_players))
    a.k = max(2, int(round(1 / holdout)))
    arguments = {k: v for k, v in vars(a).items() if k not in ("n_jobs", "progress", "k")}
    manifest = {"kind": "expert_training", "ttrsim_version": __version__,
                "format_version": FORMAT_VERSION, "features": list(FEATURES),
                "arguments": json.loads(json.dumps(arguments, default=str)),
                "versions": versions()}
    store = TrainingDir(out, manifest, n_jobs, progress)
    records, setup_data, end_data, prev = [], None, None, None
    for r in range(1, int(rounds) + 1):
        rec, setup_data, end_data = _round(store, a, r, prev, setup_data, end_data)
        records.append(rec)
        store.write_json("rounds.json", records)
        prev = Path(rec["model"])
    finish_out(store.out, dict(manifest, rounds=len(records)))
    return records


class TrainingDir:
    """A training's output directory, opened through the one resume routine
    (``prepare_out``): labelled positions are written atomically and marked done, and a
    later call reuses each only when it was labelled under the same key (the same
    arguments, model files and features)."""

    def __init__(self, out, manifest: dict, n_jobs: int = 1, progress: bool = True):
        self.out = Path(out)
        self.done = prepare_out(self.out, manifest, IDENTITY, what="expert training")
        self.n_jobs, self.progress = n_jobs, progress

    def labelled(self, name: str, kind: str, parts, **kw):
        """The positions ``label(kind, parts, **kw)`` gives, saved as ``name.npz``."""
        key = json.dumps([kind, parts, {k: _file_digest(v) if k.endswith("model") else v
                                        for k, v in sorted(kw.items())},
                          FORMAT_VERSION, list(FEATURES)], default=str)
        saved = self.out / f"{name}.npz"
        if name in self.done and saved.exists():
            p, saved_key = load_positions(saved, with_key=True)
            if saved_key == key:
                return p
        unmark_done(self.out, name)
        self.done.discard(name)
        p = label(kind, parts, n_jobs=self.n_jobs, progress=self.progress, **kw)
        save_positions(p, saved, key)
        mark_done(self.out, name)
        self.done.add(name)
        return p

    def write_json(self, name: str, data) -> None:
        """Write ``data`` as ``name`` in the directory, atomically."""
        text = json.dumps(data, indent=1) + "\n"
        atomic_write(self.out / name, lambda p: p.write_text(text, encoding="utf-8"))


def _parts(a, counts, n) -> list:
    """(board, players, n) of every board and player count the board allows."""
    return [(b, c, n) for b in a.boards for c in counts
            if resolve_board(b).min_players <= c <= resolve_board(b).max_players]


def _split(data, k: int):
    """The fitted and the held-out part: every k-th game is held out."""
    return subset(data, data.game % k != 0), subset(data, data.game % k == 0)


def _round(store: TrainingDir, a, r: int, prev, setup_data, end_data):
    """Round ``r``: label and fit the setup section, then the turn section, choose its
    margin (and reach) by play, in the last round the whole-game passes; the round's
    record and the positions labelled so far."""
    out = store.out
    scale = 1.0 if r == 1 else float(a.later)
    t0 = time.process_time()
    fresh = store.labelled(f"setup-round{r}", "setup",
                           _parts(a, a.counts, max(1, round(a.positions * scale))),
                           seed=a.seed * 100 + r, playouts=a.playouts, rollout_model=prev)
    setup_data = fresh if setup_data is None else setup_data.concat(fresh)
    s_train, s_test = _split(setup_data, a.k)
    setup = fit(s_train, seed=a.seed, trees=a.setup_trees, depth=a.setup_depth,
                min_leaf=a.min_leaf)
    prev_turns = json.loads(Path(prev).read_text())["turns"] if prev else None
    labels = policy_spec("search", playouts=int(a.playouts), rollout=policy_spec(
        "expert", model=Path(prev).name) if prev else policy_spec("tickets")).text
    info = {"round": r, "labels": labels, "boards": list(a.boards), "players": list(a.counts),
            "endgame_players": list(a.end_counts), "max_trains": int(a.max_trains)}
    follow = export(make_model(setup, prev_turns, info), out / f"expert-round{r}-setup.json")
    fresh_end = store.labelled(f"endgame-round{r}", "endgame",
                               _parts(a, a.end_counts, max(1, round(a.endgame_games * scale))),
                               seed=a.seed * 100 + 50 + r, playouts=a.endgame_playouts,
                               max_trains=a.max_trains, model=follow, rollout_model=prev)
    end_data = fresh_end if end_data is None else end_data.concat(fresh_end)
    e_train, e_test = _split(end_data, a.k)
    turns = dict(fit(e_train, seed=a.seed, trees=a.turn_trees, depth=a.turn_depth,
                     min_leaf=a.min_leaf), max_trains=int(a.max_trains))
    path = out / f"expert-round{r}.json"
    last = r == int(a.rounds)
    # the delivered model's margin and reach from many games: differences of 0.01 in
    # win share decide them (earlier rounds' models only label the next round)
    model = calibrate(make_model(setup, turns, info), path, a.boards,
                      games=a.final_calib_games if last else a.calib_games, seed=a.seed + r,
                      n_jobs=a.n_jobs,
                      reaches=(*a.reaches, a.max_trains) if last else None,
                      players=a.calib_players if last else (2,))
    mid = {}
    if last and a.midgame_games > 0:
        model, mid = _midgame_passes(store, a, r, model, setup, info, e_train, path)
    rec = {"round": r, "labels": labels,
           "setup_positions": setup_data.decisions, "endgame_decisions": end_data.decisions,
           "label_cpu_seconds": round(fresh.cpu_seconds + fresh_end.cpu_seconds, 1),
           "cpu_seconds": round(time.process_time() - t0, 1),
           "setup_agreement": agreement(setup, s_test),
           "setup_agreement_tickets": tickets_agreement(s_test),
           **{f"setup_{key}": v for key, v in gain(setup, s_test).items()},
           "turn_margin": model["turns"]["margin"],
           "turn_max_trains": model["turns"]["max_trains"],
           "turn_agreement": agreement(model["turns"], e_test),
           "turn_agreement_tickets": tickets_agreement(e_test),
           **{f"turn_{key}": v for key, v in gain(model["turns"], e_test).items()},
           **({k: model["training"][k] for k in ("margin_win_shares", "calibration")
               if k in model["training"]}),
           **mid, "model": str(path), "strength": []}
    for j, board in enumerate(a.boards):
        if a.eval_games > 0:
            rec["strength"].append(strength(path, board, 2, a.eval_games, seed=a.seed + 77 + j,
                                            n_jobs=a.n_jobs))
    return rec, setup_data, end_data


def _midgame_passes(store: TrainingDir, a, r: int, model: dict, setup: dict, info: dict,
                    e_train, path):
    """The last round's whole-game passes: the model delivered and their record."""
    mid = {}
    for p in range(1, int(a.midgame_passes) + 1):
        # pass 1: labels of the middle game too, so that the trees may decide there
        # (those fitted on end-game turns only lost when they decided from 24 trains
        # or more); pass p > 1: the turns the model of the pass before reaches, fitted
        # without the earlier passes' labels (with them the trees played worse)
        fresh_mid = store.labelled(f"midgame-round{r}" + (f"-pass{p}" if p > 1 else ""),
                                   "endgame", _parts(a, a.end_counts, int(a.midgame_games)),
                                   seed=a.seed * 100 + 90 + r + 1000 * (p - 1),
                                   playouts=a.midgame_playouts, max_trains=a.midgame_trains,
                                   model=path, rollout_model=None)
        m_train, m_test = _split(fresh_mid, a.k)
        before = gain(model["turns"], m_test)["model_gain"]
        turns = dict(fit(e_train.concat(m_train), seed=a.seed, trees=a.midgame_trees,
                         depth=a.midgame_depth, min_leaf=a.midgame_min_leaf, histogram=True),
                     max_trains=int(a.midgame_trains))
        info = dict(info, midgame_trains=int(a.midgame_trains),
                    midgame_playouts=int(a.midgame_playouts),
                    **({"midgame_passes": p} if p > 1 else {}))
        model = calibrate(make_model(setup, turns, info), path, a.boards,
                          games=a.final_calib_games, seed=a.seed + r + 1000 * (p - 1),
                          n_jobs=a.n_jobs, reaches=(*a.midgame_reaches, a.midgame_trains),
                          players=a.calib_players)
        pre = "midgame_" if p == 1 else f"pass{p}_"
        mid.update({f"{pre}decisions": fresh_mid.decisions,
                    f"{pre}label_cpu_seconds": round(fresh_mid.cpu_seconds, 1),
                    f"{pre}turn_gain_before": before,
                    **{f"{pre}turn_{key}": v for key, v in gain(model["turns"], m_test).items()}})
    return model, mid


def _file_digest(path) -> str | None:
    return None if path is None else hashlib.sha256(Path(path).read_bytes()).hexdigest()
