"""Training the ``expert`` policy by expert iteration (docs/expert.md).

One round: play games with one ``search`` seat against ``tickets`` seats, and at every
turn and ticket choice of the search seat record the ``expert`` policy's candidates with
their features (``generate``), the search's value of each (every candidate of the search
gets the same playouts, on the same sampled worlds) and which one it played; fit
gradient-boosted regression trees to each candidate's value minus the value of the move
``tickets`` would make (``fit``, scikit-learn, seeded; the policy plays the candidate
with the highest predicted value);
write the model file (``export``); measure held-out agreement with the search and
strength against ``tickets`` (``agreement``, ``strength``). The next round labels its
positions with ``search:rollout=expert`` using the previous round's model. ``train``
runs the rounds; ``scripts/train_expert.py`` is its command line. Needs scikit-learn
(``pip install ttrsim[train]``).

>>> rounds = train(out="models", games=200, playouts=100, seed=0)   # doctest: +SKIP
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ttrsim._expert import FEATURES, FORMAT, FORMAT_VERSION, load_model, model_from_dict
from ttrsim.game import Game, resolve_board

__all__ = ["Positions", "agreement", "calibrate", "export", "fit", "gain", "generate", "strength",
           "train"]

BOARDS = ("usa", "europe", "newyork")
# decisions the model makes (second draws and tunnels are tickets' own)
LEARNED_PHASES = ("turn", "setup_tickets", "keep_tickets")


@dataclass
class Positions:
    """Labelled decisions: the candidates' features ``X`` (rows), ``value`` (the search's
    mean playout value of the candidate minus that of tickets' choice, the first row of
    each decision; NaN where the search did not play that candidate), ``chosen`` (1 on
    the row the search played), ``group`` (one id per decision), ``game`` (one id per
    game) and ``board`` per decision. A decision whose search choice is not among the
    candidates has no chosen row (it counts as a miss in ``agreement``)."""

    X: np.ndarray
    value: np.ndarray
    chosen: np.ndarray
    group: np.ndarray
    game: np.ndarray
    boards: list = field(default_factory=list)
    cpu_seconds: float = 0.0

    @property
    def decisions(self) -> int:
        return int(len(np.unique(self.group))) if len(self.group) else 0

    def concat(self, other: "Positions") -> "Positions":
        g0 = int(self.group.max()) + 1 if len(self.group) else 0
        m0 = int(self.game.max()) + 1 if len(self.game) else 0
        return Positions(np.vstack([self.X, other.X]), np.concatenate([self.value, other.value]),
                         np.concatenate([self.chosen, other.chosen]),
                         np.concatenate([self.group, other.group + g0]),
                         np.concatenate([self.game, other.game + m0]),
                         self.boards + other.boards, self.cpu_seconds + other.cpu_seconds)


CLAIMS = 4          # the labelling search also values the 4 longest claims the hand pays


def _search_spec(playouts: int, model) -> str:
    spec = f"search:playouts={int(playouts)},claims={CLAIMS}"
    if model is not None:
        spec += f",rollout=expert:model={Path(model).resolve()}"
    return spec


def generate(board="europe", players: int = 2, games: int = 100, seed: int = 0, *,
             playouts: int = 48, rollout_model=None, follow_model=None,
             progress: bool = False) -> Positions:
    """Label the decisions (turns and ticket choices) of one ``search`` seat (seat
    ``game % players``) playing against ``tickets`` in every other seat: at each, every
    candidate of the search gets ``playouts`` playouts on the same sampled worlds (as
    ``ttrsim.analyse`` does) and the game follows the best. ``rollout_model``: a model
    file; then the search's rollout policy is ``expert`` with that model (expert
    iteration), else ``tickets``. ``follow_model``: a model file; then the seat plays that
    model's choice instead of the search's (the positions the learned policy itself
    reaches, still labelled by the search). Second card draws and tunnels follow
    ``tickets``. Same seed, same positions."""
    from tqdm.auto import tqdm

    from ttrsim._expert import ExpertPolicy
    from ttrsim.policies import decide, make_policy

    if rollout_model is not None:
        load_model(rollout_model)              # a clear error now rather than in a game
    follow = load_model(follow_model) if follow_model is not None else None
    spec = _search_spec(playouts, rollout_model)
    seeds = np.random.SeedSequence([int(seed), players, 0x7E]).generate_state(3 * games,
                                                                               dtype=np.uint64)
    X, value, chosen, group, game_ids, boards = [], [], [], [], [], []
    n_dec = 0
    t0 = time.process_time()
    for i in tqdm(range(games), desc=f"positions {board}", disable=not progress):
        g = Game(board, players, seed=int(seeds[3 * i]))
        me = i % players
        search = make_policy(spec, g.board)
        search.uniform = True                  # every candidate gets the same playouts
        expert = ExpertPolicy()
        expert.start(g, me, int(seeds[3 * i + 1]))
        others = {q: make_policy("tickets", g.board) for q in range(players) if q != me}
        started = set()
        rng = np.random.SeedSequence(int(seeds[3 * i + 2]))
        k = 0
        while not g.is_over() and g.turn < 1000:
            q = g.current_player
            if q == me:
                phase = g.phase
                codes, feats = expert.candidates(g)
                k += 1
                if phase not in LEARNED_PHASES or len(codes) < 2:
                    g.apply(int(codes[0]))
                    continue
                act = decide(search, g, seed=int(rng.generate_state(1, np.uint64)[0]) ^ k)
                mean = {int(c): u / n for c, n, u, *_ in search.last_decision()[0] if n}
                base = mean.get(int(codes[0]))
                if base is not None:
                    X.append(feats)
                    value.append(np.array([mean.get(int(c), np.nan) - base for c in codes],
                                          dtype=np.float32))
                    chosen.append((codes == act).astype(np.int8))
                    group.append(np.full(len(codes), n_dec, dtype=np.int64))
                    game_ids.append(np.full(len(codes), i, dtype=np.int64))
                    boards.append(str(board))
                    n_dec += 1
                if follow is not None:
                    scores = follow.predict(feats)
                    scores[0] += follow.tickets_bonus
                    act = codes[int(np.argmax(scores))]
            else:
                act = decide(others[q], g, seed=int(seeds[3 * i + 2]) ^ (q + 1),
                             start=q not in started)
                started.add(q)
            g.apply(int(act))
    empty = np.zeros((0, len(FEATURES)), np.float32)
    return Positions(np.vstack(X) if X else empty,
                     np.concatenate(value) if value else np.zeros(0, np.float32),
                     np.concatenate(chosen) if chosen else np.zeros(0, np.int8),
                     np.concatenate(group) if group else np.zeros(0, np.int64),
                     np.concatenate(game_ids) if game_ids else np.zeros(0, np.int64),
                     boards, time.process_time() - t0)


BONUSES = (0.0, 0.01, 0.02, 0.03, 0.05, 0.08, 0.12)


def calibrate(model: dict, path, boards=BOARDS, games: int = 300, seed: int = 0) -> dict:
    """Set ``model["tickets_bonus"]``, the margin by which another candidate must be
    predicted better than tickets' own choice, to the one of BONUSES whose policy wins
    most against ``tickets`` (2 players, ``games`` seat-rotated games per board, seeds
    apart from ``strength``'s); write the model to ``path``. The values are fitted on
    positions of search play: one-step gains predicted there do not carry over to a
    policy that deviates at every turn (without a margin it drew cards blind turn after
    turn and won 0.07 on USA), so the margin is chosen by play."""
    shares = {}
    for b in BONUSES:
        export(dict(model, tickets_bonus=b), path)
        shares[b] = float(np.mean([strength(path, board, 2, games, seed=seed + 5000 + j)["win_share"]
                                   for j, board in enumerate(boards)]))
    best = max(BONUSES, key=lambda b: (shares[b], -b))
    model = dict(model, tickets_bonus=best)
    model["training"] = dict(model["training"], bonus_win_shares={f"{b:g}": shares[b] for b in BONUSES},
                             bonus_games=games)
    export(model, path)
    return model


def fit(data: Positions, seed: int = 0, *, trees: int = 150, depth: int = 4,
        learning_rate: float = 0.1, round_info: dict | None = None) -> dict:
    """Fit gradient-boosted regression trees (scikit-learn's GradientBoostingRegressor)
    to the value of each candidate the search valued, relative to tickets' choice (leaves
    of at least 40 rows: the values are means of a few dozen playouts, noisy); return the
    content of a model file (``export`` writes it; ``calibrate`` then sets the margin of
    tickets' own choice). Deterministic for a seed."""
    try:
        from sklearn.ensemble import GradientBoostingRegressor
    except ImportError:
        raise ImportError("training the expert needs scikit-learn: pip install 'ttrsim[train]'") from None
    known = np.isfinite(data.value)
    if known.sum() < 2 or np.ptp(data.value[known]) == 0:
        raise ValueError("no decision to learn from: generate more positions")
    reg = GradientBoostingRegressor(n_estimators=int(trees), max_depth=int(depth),
                                    learning_rate=float(learning_rate), subsample=1.0,
                                    min_samples_leaf=40, random_state=int(seed))
    reg.fit(data.X[known], data.value[known])
    feature, threshold, left, right, value, roots = [], [], [], [], [], []
    for est in reg.estimators_[:, 0]:
        t = est.tree_
        off = len(feature)
        roots.append(off)
        leaf = t.children_left < 0
        feature += [int(f) if not lf else -1 for f, lf in zip(t.feature, leaf)]
        threshold += [float(x) if not lf else 0.0 for x, lf in zip(t.threshold, leaf)]
        left += [int(c) + off if not lf else -1 for c, lf in zip(t.children_left, leaf)]
        right += [int(c) + off if not lf else -1 for c, lf in zip(t.children_right, leaf)]
        value += [float(v) * reg.learning_rate for v in t.value[:, 0, 0]]
    model = {"format": FORMAT, "version": FORMAT_VERSION, "features": list(FEATURES),
             "base": 0.0,
             "trees": {"feature": feature, "threshold": threshold, "left": left,
                       "right": right, "value": value, "roots": roots},
             "training": dict(round_info or {}, trees=int(trees), depth=int(depth),
                              learning_rate=float(learning_rate), seed=int(seed),
                              rows=int(known.sum()),
                              decisions=int(len(np.unique(data.group[known]))))}
    # the exported trees must rank candidates as the fitted model does
    raw = reg.predict(data.X[known][:200])
    mine = model_from_dict(model).predict(data.X[known][:200])
    if not np.allclose(raw - raw[0], mine - mine[0], atol=1e-6):
        raise RuntimeError("exported trees disagree with scikit-learn's predictions")
    return model


def _scores(m, data: Positions) -> np.ndarray:
    """The policy's scores of every row: the trees, plus the bonus on tickets' choice
    (the first row of each decision)."""
    scores = m.predict(data.X) if len(data.X) else np.zeros(0)
    first = np.r_[True, data.group[1:] != data.group[:-1]] if len(data.X) else np.zeros(0, bool)
    return scores + first * m.tickets_bonus


def gain(model, data: Positions, bonus: float | None = None) -> dict:
    """On the decisions of ``data``: the search's mean value of the model's pick minus
    that of tickets' choice (``model_gain``, where the search valued the pick), the same
    for the best-valued candidate (``oracle_gain``: what a perfect imitation would get;
    it is biased upward by the noise of the values), and the share of decisions where
    the search valued the model's pick (``coverage``)."""
    if bonus is not None:
        model = dict(model, tickets_bonus=bonus)
    m = model_from_dict(model) if isinstance(model, dict) else load_model(model)
    scores = _scores(m, data)
    picked, best, covered = [], [], 0
    for gid in np.unique(data.group):
        rows = np.flatnonzero(data.group == gid)
        v = data.value[rows]
        pick = v[int(np.argmax(scores[rows]))]
        if np.isfinite(pick):
            covered += 1
            picked.append(pick)
        best.append(np.nanmax(v))
    n = max(1, data.decisions)
    return {"model_gain": float(np.mean(picked)) if picked else float("nan"),
            "oracle_gain": float(np.mean(best)) if best else float("nan"),
            "coverage": covered / n}


def export(model: dict, path) -> Path:
    """Write a model (from ``fit``) as a JSON model file; the same model gives the same
    bytes."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(model, sort_keys=True, separators=(",", ":")) + "\n",
                    encoding="utf-8")
    return path


def agreement(model, data: Positions) -> float:
    """Share of the decisions where the model's best candidate is the search's choice
    (``model``: a model file path or the content of one)."""
    m = model_from_dict(model) if isinstance(model, dict) else load_model(model)
    if data.decisions == 0:
        return float("nan")
    scores = _scores(m, data)
    hit = 0
    for gid in np.unique(data.group):
        rows = np.flatnonzero(data.group == gid)
        hit += int(data.chosen[rows[int(np.argmax(scores[rows]))]] == 1)
    return hit / data.decisions


def strength(model, board="europe", players: int = 2, games: int = 1000, seed: int = 0,
             opponent: str = "tickets") -> dict:
    """``expert`` (with ``model``, a file path; None: the shipped one) in one seat against
    ``opponent`` in the others, seats rotated: its win share with the 95% Wilson interval."""
    from ttrsim.runner import simulate

    spec = "expert" if model is None else f"expert:model={Path(model).resolve()}"
    specs = [spec] + [f"{opponent}#{k}" for k in range(players - 1)]
    t0 = time.process_time()
    run = simulate(board, specs, games=games, seed=seed, n_jobs=1, summary=True)
    cpu = time.process_time() - t0
    table = run.summary(by="policy")
    row = table.loc[[k for k in table.index if str(k).startswith("expert")][0]]
    return {"board": str(board), "players": players, "games": games, "opponent": opponent,
            "win_share": float(row["win_share"]), "low": float(row["win_share_low"]),
            "high": float(row["win_share_high"]), "cpu_seconds": round(cpu, 2)}


def train(out, *, rounds: int = 2, boards=BOARDS, players=(2, 4), games: int = 200,
          games_later: int | None = None, players_later=None, playouts: int = 48,
          eval_games: int = 400,
          seed: int = 0, trees: int = 150, depth: int = 4, holdout: float = 0.2,
          calib_games: int = 300, progress: bool = True) -> list[dict]:
    """Expert iteration: ``rounds`` rounds of ``generate`` (``games`` per board and player
    count in ``players``) -> ``fit`` -> ``calibrate`` the margin of tickets' choice by play
    (``calib_games``) -> ``export`` (``out/expert-round{r}.json``) -> ``agreement`` and
    ``gain`` on held-out games (every 1/holdout-th; the next games are left out of the
    fit too) and ``strength``
    against ``tickets`` (``eval_games`` per board). Round 1 labels with the search over
    ``tickets`` rollouts, each later round with ``search:rollout=expert`` using the
    previous round's model, in games where the seat plays that model's choices (the
    positions the learned policy reaches) (``games_later`` games per board and player count of
    ``players_later``: its playouts cost more); positions of earlier rounds are kept. Each round's positions are
    saved (``out/positions-round{r}.npz``) and read back by a later call with the same
    ``out`` instead of being played again. Same arguments, same model files. Returns one
    record per round (also written to ``out/rounds.json``)."""
    counts = (int(players),) if np.isscalar(players) else tuple(int(n) for n in players)
    later_counts = None if players_later is None else (
        (int(players_later),) if np.isscalar(players_later) else tuple(int(n) for n in players_later))
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    records, data, prev = [], None, None
    for r in range(1, int(rounds) + 1):
        fresh = None
        n_games = games if r == 1 or games_later is None else int(games_later)
        round_counts = counts if r == 1 or later_counts is None else later_counts
        saved = out / f"positions-round{r}.npz"
        if saved.exists():
            fresh = _load_positions(saved)
        else:
            for j, board in enumerate(boards):
                for n in round_counts:
                    if n > resolve_board(board).max_players:
                        continue
                    part = generate(board, n, n_games, seed=seed * 1000 + r * 100 + j * 10 + n,
                                    playouts=playouts, rollout_model=prev, follow_model=prev,
                                    progress=progress)
                    fresh = part if fresh is None else fresh.concat(part)
            _save_positions(fresh, saved)
        data = fresh if data is None else data.concat(fresh)
        # hold out the last games of every round's positions (whole games, not rows)
        # whole games: every k-th held out for the figures; the next are left out of the
        # fit too (val_part: kept apart, unused since the margin is calibrated by play;
        # the shipped model was trained so)
        k = max(3, int(round(1 / holdout)))
        held = data.game % k == 0
        val = data.game % k == 1
        train_part = _subset(data, ~held & ~val)
        val_part = _subset(data, val)
        test_part = _subset(data, held)
        t0 = time.process_time()
        labels = f"search:playouts={int(playouts)},claims={CLAIMS}" + (
            f",rollout=expert:model={Path(prev).name}" if prev else "")
        info = {"round": r, "labels": labels,
            "boards": list(boards), "players": list(round_counts), "games_per_board": n_games}
        model = fit(train_part, seed=seed, trees=trees, depth=depth, round_info=info)
        path = out / f"expert-round{r}.json"
        model = calibrate(model, path, boards, games=calib_games, seed=seed + r)
        fit_cpu = time.process_time() - t0
        rec = {"round": r, "labels": info["labels"], "decisions": data.decisions,
               "new_decisions": fresh.decisions, "train_decisions": train_part.decisions,
               "label_cpu_seconds": round(fresh.cpu_seconds, 1),
               "fit_cpu_seconds": round(fit_cpu, 1),
               "agreement_holdout": agreement(model, test_part),
               "agreement_tickets": _tickets_agreement(test_part),
               **{f"holdout_{k}": v for k, v in gain(model, test_part).items()},
               "tickets_bonus": model.get("tickets_bonus", 0.0),
               "model": str(path), "strength": []}
        for j, board in enumerate(boards):
            if eval_games > 0:
                rec["strength"].append(strength(path, board, 2, eval_games, seed=seed + 77 + j))
        records.append(rec)
        (out / "rounds.json").write_text(json.dumps(records, indent=1) + "\n", encoding="utf-8")
        prev = path
    return records


def _save_positions(p: Positions, path: Path) -> None:
    np.savez_compressed(path, X=p.X, value=p.value, chosen=p.chosen, group=p.group, game=p.game,
                        boards=np.array(p.boards), cpu_seconds=p.cpu_seconds)


def _load_positions(path: Path) -> Positions:
    with np.load(path) as z:
        return Positions(z["X"], z["value"], z["chosen"], z["group"], z["game"], list(z["boards"]),
                         float(z["cpu_seconds"]))


def _tickets_agreement(data: Positions) -> float:
    """Share of the decisions where the search played ``tickets``' own choice (the
    baseline any model must beat): the first candidate."""
    if data.decisions == 0:
        return float("nan")
    first = np.r_[True, data.group[1:] != data.group[:-1]]
    return float(data.chosen[first].sum() / data.decisions)


def _subset(data: Positions, mask: np.ndarray) -> Positions:
    return Positions(data.X[mask], data.value[mask], data.chosen[mask], data.group[mask],
                     data.game[mask], [],
                     data.cpu_seconds)
