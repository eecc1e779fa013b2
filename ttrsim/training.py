"""Training the ``expert`` policy by expert iteration (docs/expert.md).

The search gains most over ``tickets`` at the initial ticket choice (measured with
``search:phases=1``), and that choice is where the learned model decides. One round:
deal fresh games and, at one seat's initial ticket choice, value every keep set with the
search (every keep set gets the same playouts on the same sampled worlds:
``generate_setup``); fit gradient-boosted regression trees to each keep set's value
relative to the position's mean (``fit``, scikit-learn, seeded); write the model file
(``make_model``, ``export``); measure held-out agreement with the search and the value
gained, and strength against ``tickets`` (``agreement``, ``gain``, ``strength``). The
next round labels with ``search:rollout=expert`` using the previous round's model (the
other seats keep tickets as that model does). ``train`` runs the rounds;
``scripts/train_expert.py`` is its command line. A model file may also hold a
``turns`` section (``make_model(setup, turns)``; docs/expert.md tells what the earlier
turn models measured). Needs scikit-learn (``pip install ttrsim[train]``).

>>> rounds = train(out="models", positions=200, playouts=64, seed=0)   # doctest: +SKIP
"""
from __future__ import annotations

import json
import time
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ttrsim._expert import (FEATURES, FORMAT, FORMAT_VERSION, load_model, model_from_dict,
                            section_from_dict)
from ttrsim.game import Game, resolve_board

__all__ = ["Positions", "agreement", "calibrate", "expert_move", "export", "fit", "gain",
           "generate_endgame", "generate_setup", "label", "make_model", "strength", "train"]

BOARDS = ("usa", "europe", "newyork")


@dataclass
class Positions:
    """Labelled decisions: the candidates' features ``X`` (rows; tickets' own choice is
    the first row of each decision), ``value`` (the search's mean playout value of the
    candidate relative to its decision; NaN where the search did not value it),
    ``chosen`` (1 on the row the search prefers), ``group`` (one id per decision, rows of
    a decision consecutive), ``game`` (one id per game or deal) and ``boards`` (one per
    decision)."""

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


def _expert_spec(model) -> str:
    return "expert" if model is None else f"expert:model={Path(model).resolve()}"


def _labelling_specs(search: str, rollout_model) -> tuple[str, str]:
    """The labelling search's spec (its rollouts by ``expert`` with ``rollout_model``,
    else ``tickets``) and the other seats' spec (the same policy); a bad model file is
    refused now rather than in a game."""
    if rollout_model is None:
        return f"{search},rollout=tickets", "tickets"
    load_model(rollout_model)
    other = _expert_spec(rollout_model)
    return f"{search},rollout={other}", other


def generate_setup(board="europe", players: int = 2, positions: int = 100, seed: int = 0, *,
                   playouts: int = 256, rollout_model=None, progress: bool = False) -> Positions:
    """Label initial ticket choices: ``positions`` fresh deals, in each the choice of one
    seat (seat ``i % players``; the seats before it keep what ``tickets`` keeps, or what
    ``expert`` with ``rollout_model`` keeps), every legal keep set valued by the search
    with ``playouts`` playouts each on the same sampled worlds (``ttrsim.analyse``'s
    uniform mode; rollouts by ``tickets``, or by ``expert`` with ``rollout_model``).
    ``value``: the keep set's mean value minus the mean over the position's keep sets;
    ``chosen``: the best-valued one. The expert's candidates are every legal keep set,
    tickets' own first. Same seed, same positions and labels."""
    from tqdm.auto import tqdm

    from ttrsim._expert import ExpertPolicy
    from ttrsim.policies import decide, make_policy

    spec, other = _labelling_specs(f"search:playouts={int(playouts)}", rollout_model)
    seeds = np.random.SeedSequence([int(seed), int(players), 0x5E7]).generate_state(
        3 * int(positions), dtype=np.uint64)
    X, value, chosen, group, boards = [], [], [], [], []
    t0 = time.process_time()
    for i in tqdm(range(int(positions)), desc=f"setup {board} {players}p", disable=not progress):
        g = Game(board, players, seed=int(seeds[3 * i]))
        me = i % players
        while g.current_player != me:
            q = g.current_player
            g.apply(int(decide(make_policy(other, g.board), g, seed=int(seeds[3 * i + 2]) ^ (q + 1))))
        expert = ExpertPolicy()
        expert.start(g, me, int(seeds[3 * i + 1]))
        codes, feats = expert.candidates(g)
        search = make_policy(spec, g.board)
        search.uniform = True                  # every keep set gets the same playouts
        decide(search, g, seed=int(seeds[3 * i + 2]))
        mean = {int(c): u / n for c, n, u, *_ in search.last_decision()[0] if n}
        v = np.array([mean[int(c)] for c in codes], dtype=np.float64)
        X.append(feats)
        value.append((v - v.mean()).astype(np.float32))
        best = np.zeros(len(codes), np.int8)
        best[int(np.argmax(v))] = 1
        chosen.append(best)
        group.append(np.full(len(codes), i, dtype=np.int64))
        boards.append(str(board))
    return _positions(X, value, chosen, group, group, boards, time.process_time() - t0)


CLAIMS = 4          # generate_endgame's search also values the 4 longest claims the hand pays


def expert_move(model, phase: str, codes, X, fewest_trains: int) -> int:
    """The move ``expert`` with ``model`` (an ExpertModel) makes among its candidates
    (``ExpertPolicy.candidates``): what the compiled policy decides, in Python."""
    sec = model.setup if phase == "setup_tickets" else (
        model.turns if phase == "turn" and model.turns is not None
        and fewest_trains <= model.turns.max_trains else None)
    if sec is None or len(codes) < 2:
        return int(codes[0])
    scores = sec.predict(X)
    scores[0] += sec.margin
    return int(codes[int(np.argmax(scores))])


def generate_endgame(board="europe", players: int = 2, games: int = 100, seed: int = 0, *,
                     playouts: int = 400, max_trains: int = 12, model=None,
                     rollout_model=None, progress: bool = False) -> Positions:
    """Label end-game turns: in each game one seat (seat ``game % players``) plays
    ``expert`` with ``model`` (a model file; None: the shipped one) against ``tickets``
    (or, with ``rollout_model``, against ``expert`` with it); at each of its turns once
    some seat has ``max_trains`` trains or fewer, every candidate of the search gets
    ``playouts`` playouts on the same sampled worlds (rollouts by ``tickets``, or by
    ``expert`` with ``rollout_model``). ``value``: each expert candidate's mean value
    minus that of tickets' choice (NaN where the search did not value it); ``chosen``:
    the best-valued. The game follows the expert's own moves (the positions it reaches).
    Same seed, same positions and labels."""
    from tqdm.auto import tqdm

    from ttrsim._expert import ExpertPolicy
    from ttrsim.policies import decide, make_policy

    follow = load_model(model)
    spec, other = _labelling_specs(f"search:playouts={int(playouts)},claims={CLAIMS}",
                                   rollout_model)
    seeds = np.random.SeedSequence([int(seed), int(players), 0xE6]).generate_state(
        3 * int(games), dtype=np.uint64)
    X, value, chosen, group, game_ids, boards = [], [], [], [], [], []
    n_dec = 0
    t0 = time.process_time()
    for i in tqdm(range(int(games)), desc=f"end game {board} {players}p", disable=not progress):
        g = Game(board, players, seed=int(seeds[3 * i]))
        me = i % players
        search = make_policy(spec, g.board)
        search.uniform = True                  # every candidate gets the same playouts
        expert = ExpertPolicy("" if model is None else str(Path(model).resolve()))
        expert.start(g, me, int(seeds[3 * i + 1]))
        others = {q: make_policy(other, g.board) for q in range(players) if q != me}
        started = set()
        k = 0
        while not g.is_over() and g.turn < 1000:
            q = g.current_player
            if q != me:
                g.apply(int(decide(others[q], g, seed=int(seeds[3 * i + 2]) ^ (q + 1),
                                   start=q not in started)))
                started.add(q)
                continue
            codes, feats = expert.candidates(g)
            fewest = min(p["trains"] for p in g.state()["players"])
            k += 1
            if g.phase == "turn" and fewest <= max_trains and len(codes) > 1:
                decide(search, g, seed=int(seeds[3 * i + 2]) ^ (k << 8))
                mean = {int(c): u / n for c, n, u, *_ in search.last_decision()[0] if n}
                base = mean.get(int(codes[0]))
                if base is not None:
                    v = np.array([mean.get(int(c), np.nan) - base for c in codes], np.float32)
                    X.append(feats)
                    value.append(v)
                    best = np.zeros(len(codes), np.int8)
                    best[int(np.nanargmax(v))] = 1
                    chosen.append(best)
                    group.append(np.full(len(codes), n_dec, dtype=np.int64))
                    game_ids.append(np.full(len(codes), i, dtype=np.int64))
                    boards.append(str(board))
                    n_dec += 1
            g.apply(expert_move(follow, g.phase, codes, feats, fewest))
    return _positions(X, value, chosen, group, game_ids, boards, time.process_time() - t0)


def fit(data: Positions, seed: int = 0, *, trees: int = 40, depth: int = 4,
        learning_rate: float = 0.1, min_leaf: int = 40, histogram: bool = False) -> dict:
    """Fit gradient-boosted regression trees (scikit-learn's GradientBoostingRegressor;
    with ``histogram``, its HistGradientBoostingRegressor, which splits on binned
    features and fits millions of rows in minutes) to the labelled candidates' values
    (each relative to its decision's mean); return a section of a model file
    (``{"trees", "base", "margin"}``; ``make_model`` puts sections together).
    Deterministic for a seed."""
    try:
        from sklearn.ensemble import GradientBoostingRegressor, HistGradientBoostingRegressor
    except ImportError:
        raise ImportError("training the expert needs scikit-learn: pip install 'ttrsim[train]'") from None
    known = np.isfinite(data.value)
    if known.sum() < 2 or np.ptp(data.value[known]) == 0:
        raise ValueError("no decision to learn from: generate more positions")
    # Each row's value relative to its decision's mean: only the ranking within a
    # decision matters, and the mean of all its rows is a less noisy reference than one
    # row (tickets' choice; held-out, this fitted end-game turns better).
    y = _centred(data.value, data.group)
    if histogram:
        reg = HistGradientBoostingRegressor(
            max_iter=int(trees), max_depth=int(depth), max_leaf_nodes=None,
            learning_rate=float(learning_rate), min_samples_leaf=int(min_leaf),
            early_stopping=False, random_state=int(seed))
    else:
        reg = GradientBoostingRegressor(n_estimators=int(trees), max_depth=int(depth),
                                        learning_rate=float(learning_rate), subsample=1.0,
                                        min_samples_leaf=int(min_leaf), random_state=int(seed))
    reg.fit(data.X[known], y[known])
    section = {"trees": _hist_trees(reg) if histogram else _exact_trees(reg),
               "base": 0.0, "margin": 0.0,
               "fit": {"trees": int(trees), "depth": int(depth), "min_leaf": int(min_leaf),
                       "learning_rate": float(learning_rate), "seed": int(seed),
                       **({"histogram": True} if histogram else {}),
                       "rows": int(known.sum()),
                       "decisions": int(len(np.unique(data.group[known])))}}
    # the exported trees must rank candidates as the fitted model does
    raw = reg.predict(data.X[known][:2000])
    mine = section_from_dict(section).predict(data.X[known][:2000])
    if not np.allclose(raw - raw[0], mine - mine[0], atol=1e-6):
        import sklearn
        raise RuntimeError("exported trees disagree with scikit-learn's predictions "
                           f"(scikit-learn {sklearn.__version__})")
    return section


def _exact_trees(reg) -> dict:
    """The node arrays of a fitted GradientBoostingRegressor (its public ``tree_``s)."""
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
    return {"feature": feature, "threshold": threshold, "left": left, "right": right,
            "value": value, "roots": roots}


def _hist_trees(reg) -> dict:
    """The node arrays of a fitted HistGradientBoostingRegressor. scikit-learn keeps
    them in a private attribute (``_predictors``: node records with feature_idx,
    num_threshold, left, right, is_leaf and value, the learning rate applied; no
    feature is ever missing here); ``fit`` checks the exported trees against the
    regressor's predictions, so a change there is an error, never a different model."""
    feature, threshold, left, right, value, roots = [], [], [], [], [], []
    for (pred,) in reg._predictors:
        nd = pred.nodes
        off = len(feature)
        roots.append(off)
        leaf = nd["is_leaf"].astype(bool)
        feature += [-1 if lf else int(f) for f, lf in zip(nd["feature_idx"], leaf)]
        threshold += [0.0 if lf else float(x) for x, lf in zip(nd["num_threshold"], leaf)]
        left += [-1 if lf else int(c) + off for c, lf in zip(nd["left"], leaf)]
        right += [-1 if lf else int(c) + off for c, lf in zip(nd["right"], leaf)]
        value += [float(v) if lf else 0.0 for v, lf in zip(nd["value"], leaf)]
    return {"feature": feature, "threshold": threshold, "left": left, "right": right,
            "value": value, "roots": roots}


def _centred(value: np.ndarray, group: np.ndarray) -> np.ndarray:
    """``value`` minus the mean of the finite values of its group (NaN stays NaN)."""
    known = np.isfinite(value)
    ids, inv = np.unique(group, return_inverse=True)
    sums = np.bincount(inv, weights=np.where(known, value, 0.0), minlength=len(ids))
    counts = np.bincount(inv, weights=known.astype(np.float64), minlength=len(ids))
    return value - (sums / np.maximum(counts, 1))[inv]


def make_model(setup: dict, turns: dict | None = None, training: dict | None = None) -> dict:
    """The content of a model file from its sections (``fit``'s results): ``setup``
    chooses initial tickets, ``turns`` (optional) the moves of a turn."""
    model = {"format": FORMAT, "version": FORMAT_VERSION, "features": list(FEATURES),
             "setup": setup, "turns": turns, "training": dict(training or {})}
    model_from_dict(model)                      # refuse what could not be loaded
    return model


def _section(section):
    if isinstance(section, dict):
        return section_from_dict(section)
    return section


def _scores(m, data: Positions) -> np.ndarray:
    """A section's scores of every row: the trees, plus its margin on tickets' choice
    (the first row of each decision)."""
    scores = m.predict(data.X) if len(data.X) else np.zeros(0)
    first = np.r_[True, data.group[1:] != data.group[:-1]] if len(data.X) else np.zeros(0, bool)
    return scores + first * m.margin


def gain(section, data: Positions) -> dict:
    """On the decisions of ``data``, by the search's values: the model's pick minus
    tickets' choice (``model_gain``, where the search valued the pick), the best-valued
    candidate minus tickets' choice (``oracle_gain``: a perfect imitation; biased upward
    by the values' noise), and the share of decisions where the search valued the pick
    (``coverage``). ``section``: a section dict (``fit``) or a TreeModel."""
    m = _section(section)
    scores = _scores(m, data)
    picked, best, covered = [], [], 0
    for rows in _decisions(data):
        v = data.value[rows] - data.value[rows[0]]
        pick = v[int(np.argmax(scores[rows]))]
        if np.isfinite(pick):
            covered += 1
            picked.append(pick)
        best.append(np.nanmax(v))
    n = max(1, data.decisions)
    return {"model_gain": float(np.mean(picked)) if picked else float("nan"),
            "oracle_gain": float(np.mean(best)) if best else float("nan"),
            "coverage": covered / n}


def agreement(section, data: Positions) -> float:
    """Share of the decisions where the model's best candidate is the search's choice."""
    m = _section(section)
    if data.decisions == 0:
        return float("nan")
    scores = _scores(m, data)
    hit = sum(int(data.chosen[rows[int(np.argmax(scores[rows]))]] == 1) for rows in _decisions(data))
    return hit / data.decisions


def _decisions(data: Positions):
    """Row indices of each decision, in order (rows of a decision are consecutive)."""
    if not len(data.group):
        return []
    cuts = np.flatnonzero(data.group[1:] != data.group[:-1]) + 1
    return np.split(np.arange(len(data.group)), cuts)


def export(model: dict, path) -> Path:
    """Write a model (``make_model``) as a JSON model file; the same model gives the same
    bytes."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(model, sort_keys=True, separators=(",", ":")) + "\n",
                    encoding="utf-8")
    return path


def strength(model, board="europe", players: int = 2, games: int = 1000, seed: int = 0,
             opponent: str = "tickets", n_jobs: int = 1) -> dict:
    """``expert`` (with ``model``, a file path; None: the shipped one) in one seat against
    ``opponent`` in the others, seats rotated: its win share with the 95% Wilson interval."""
    from ttrsim.runner import simulate

    specs = [_expert_spec(model)] + [f"{opponent}#{k}" for k in range(players - 1)]
    t0 = time.process_time()
    run = simulate(board, specs, games=games, seed=seed, n_jobs=n_jobs, summary=True)
    cpu = time.process_time() - t0
    table = run.summary(by="policy")
    row = table.loc[[k for k in table.index if str(k).startswith("expert")][0]]
    return {"board": str(board), "players": players, "games": games, "opponent": opponent,
            "win_share": float(row["win_share"]), "low": float(row["win_share_low"]),
            "high": float(row["win_share_high"]), "cpu_seconds": round(cpu, 2)}


CHUNKS = {"setup": 50, "endgame": 10}   # positions / games per labelling task


def _label_task(kind, board, players, n, seed, kw):
    if kind == "setup":
        return generate_setup(board, players, n, seed, **kw)
    return generate_endgame(board, players, n, seed, **kw)


def _indexed(i, args):
    return i, _label_task(*args)


def label(kind: str, parts, *, seed: int = 0, n_jobs: int = 1, progress: bool = True,
          **kw) -> Positions:
    """``generate_setup`` (``kind="setup"``; ``parts``: (board, players, positions)) or
    ``generate_endgame`` (``kind="endgame"``; (board, players, games)) over ``parts``, in
    small tasks spread over ``n_jobs`` workers (``kw`` goes to the generator). The same
    positions and labels whatever ``n_jobs``: each task has its own seed and the tasks
    are put back in order."""
    from ttrsim.dispatch import progress_bar, run_tasks

    if kind not in CHUNKS:
        raise ValueError(f"kind must be one of {sorted(CHUNKS)}, got {kind!r}")
    for key in ("model", "rollout_model"):
        if kw.get(key) is not None:
            kw[key] = str(Path(kw[key]).resolve())
    size = CHUNKS[kind]
    tasks = []
    for j, (board, players, n) in enumerate(parts):
        for c in range(0, int(n), size):
            tasks.append((kind, board, int(players), min(size, int(n) - c),
                          int(seed) * 1_000_003 + j * 10_007 + c, kw))
    out = {}
    bar = progress_bar(progress, sum(a[3] for a in tasks),
                       unit="position" if kind == "setup" else "game", desc=f"labelling {kind}")
    try:
        with closing(run_tasks(_indexed, list(enumerate(tasks)), n_jobs, bar=bar,
                               sizes=[a[3] for a in tasks])) as results:
            for i, p in results:
                out[i] = p
    finally:
        if bar is not None:
            bar.close()
    return _join([out[i] for i in range(len(tasks))])


def _join(parts: list) -> Positions:
    """``parts[0].concat(parts[1]).concat(...)`` in one copy: chained concats copy the
    rows once per part, which dominates with thousands of small tasks."""
    if len(parts) == 1:
        return parts[0]
    g0 = np.cumsum([0] + [int(p.group.max()) + 1 if len(p.group) else 0 for p in parts[:-1]])
    m0 = np.cumsum([0] + [int(p.game.max()) + 1 if len(p.game) else 0 for p in parts[:-1]])
    return Positions(np.vstack([p.X for p in parts]), np.concatenate([p.value for p in parts]),
                     np.concatenate([p.chosen for p in parts]),
                     np.concatenate([p.group + g for p, g in zip(parts, g0)]),
                     np.concatenate([p.game + m for p, m in zip(parts, m0)]),
                     [b for p in parts for b in p.boards], sum(p.cpu_seconds for p in parts))


MARGINS = (0.0, 0.01, 0.02, 0.04, 0.08, 1.0)   # 1.0: never overturn tickets' move


def calibrate(model: dict, path, boards=BOARDS, games: int = 400, seed: int = 0,
              n_jobs: int = 1, reaches=None, players=(2,)) -> dict:
    """Set the turn section's margin (by which a candidate must be predicted better than
    tickets' own move) and its reach (``max_trains``: the trees decide once some seat has
    this many trains or fewer) to the pair of MARGINS and ``reaches`` (default: the
    section's own reach only) whose policy plays best against ``tickets``: one seat
    against tickets in the others, ``games`` seat-rotated games per board and player
    count of ``players``, seeds apart from ``train``'s evaluation; the score is the mean
    over player counts of the mean win share over boards above the fair share (1 /
    players; with 2 players only, the mean win share). Write the model to
    ``path``. By play, because one-step values fitted on labelled positions need not
    carry over to a policy that deviates at every turn, nor to turns earlier than those
    labelled."""
    own = int(model["turns"]["max_trains"])
    reaches = (own,) if reaches is None else tuple(sorted({int(r) for r in reaches}))
    counts = tuple(int(n) for n in players)
    if not reaches or min(reaches) < 0:
        raise ValueError("reaches must be trains counts >= 0")
    if not counts or min(counts) < 2:
        raise ValueError("players must be player counts >= 2")
    shares, score = {}, {}
    for reach in reaches:
        for m in MARGINS:
            export(dict(model, turns=dict(model["turns"], margin=m, max_trains=reach)), path)
            for n in counts:
                shares[reach, m, n] = float(np.mean([
                    strength(path, board, n, games, seed=seed + 5000 + j + 100 * (n - 2),
                             n_jobs=n_jobs)["win_share"]
                    for j, board in enumerate(boards)
                    if resolve_board(board).min_players <= n <= resolve_board(board).max_players]))
            score[reach, m] = (shares[reach, m, 2] if counts == (2,) else
                               float(np.mean([shares[reach, m, n] - 1 / n for n in counts])))
    # ties: the larger margin, then the reach labelled, then the shorter
    reach, best = max(score, key=lambda k: (score[k], k[1], k[0] == own, -k[0]))
    model = dict(model, turns=dict(model["turns"], margin=best, max_trains=reach))
    if reaches == (own,) and counts == (2,):
        info = dict(model["training"], margin_win_shares={f"{m:g}": score[own, m] for m in MARGINS},
                    margin_games=int(games))
    else:
        info = dict(model["training"], calibration={
            "players": list(counts), "games": int(games), "labelled_max_trains": own,
            "scores": {f"{r}/{m:g}": score[r, m] for r, m in score},
            "win_shares": {f"{r}/{m:g}/{n}": shares[r, m, n] for r, m, n in shares}})
    model["training"] = info
    export(model, path)
    return model


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
    Labelled positions are saved (``out/setup-round{r}.npz``, ``out/endgame-round{r}.npz``,
    ``out/midgame-round{r}.npz``) and read back by a later call with the same ``out``.
    Same arguments, same model files, whatever ``n_jobs``. Returns one record per round
    (also ``out/rounds.json``)."""
    counts = (int(players),) if np.isscalar(players) else tuple(int(n) for n in players)
    end_counts = ((int(endgame_players),) if np.isscalar(endgame_players)
                  else tuple(int(n) for n in endgame_players))
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    k = max(2, int(round(1 / holdout)))

    def parts(ns, n):
        return [(b, c, n) for b in boards for c in ns
                if resolve_board(b).min_players <= c <= resolve_board(b).max_players]

    def labelled(name, kind, part_list, **kw):
        # reused only when labelled with the same arguments, model files and features
        key = json.dumps([kind, part_list, {k: _file_digest(v) if k.endswith("model") else v
                                            for k, v in sorted(kw.items())},
                          FORMAT_VERSION, list(FEATURES)], default=str)
        saved = out / f"{name}.npz"
        if saved.exists():
            p, saved_key = _load_positions(saved, with_key=True)
            if saved_key == key:
                return p
        p = label(kind, part_list, n_jobs=n_jobs, progress=progress, **kw)
        _save_positions(p, saved, key)
        return p

    records, setup_data, end_data, prev = [], None, None, None
    for r in range(1, int(rounds) + 1):
        scale = 1.0 if r == 1 else float(later)
        t0 = time.process_time()
        fresh = labelled(f"setup-round{r}", "setup", parts(counts, max(1, round(positions * scale))),
                         seed=seed * 100 + r, playouts=playouts, rollout_model=prev)
        setup_data = fresh if setup_data is None else setup_data.concat(fresh)
        s_train, s_test = _subset(setup_data, setup_data.game % k != 0), _subset(setup_data, setup_data.game % k == 0)
        setup = fit(s_train, seed=seed, trees=setup_trees, depth=setup_depth, min_leaf=min_leaf)
        prev_turns = json.loads(Path(prev).read_text())["turns"] if prev else None
        labels = f"search:playouts={int(playouts)}" + (
            f",rollout=expert:model={Path(prev).name}" if prev else ",rollout=tickets")
        info = {"round": r, "labels": labels, "boards": list(boards), "players": list(counts),
                "endgame_players": list(end_counts), "max_trains": int(max_trains)}
        follow = export(make_model(setup, prev_turns, info), out / f"expert-round{r}-setup.json")
        fresh_end = labelled(f"endgame-round{r}", "endgame",
                             parts(end_counts, max(1, round(endgame_games * scale))),
                             seed=seed * 100 + 50 + r, playouts=endgame_playouts,
                             max_trains=max_trains, model=follow, rollout_model=prev)
        end_data = fresh_end if end_data is None else end_data.concat(fresh_end)
        e_train, e_test = _subset(end_data, end_data.game % k != 0), _subset(end_data, end_data.game % k == 0)
        turns = dict(fit(e_train, seed=seed, trees=turn_trees, depth=turn_depth, min_leaf=min_leaf),
                     max_trains=int(max_trains))
        path = out / f"expert-round{r}.json"
        last = r == int(rounds)
        # the delivered model's margin and reach from many games: differences of 0.01 in
        # win share decide them (earlier rounds' models only label the next round)
        model = calibrate(make_model(setup, turns, info), path, boards,
                          games=final_calib_games if last else calib_games, seed=seed + r,
                          n_jobs=n_jobs,
                          reaches=(*reaches, max_trains) if last else None,
                          players=calib_players if last else (2,))
        mid = {}
        for p in range(1, int(midgame_passes) + 1 if last and midgame_games > 0 else 1):
            # pass 1: labels of the middle game too, so that the trees may decide there
            # (those fitted on end-game turns only lost when they decided from 24 trains
            # or more); pass p > 1: the turns the model of the pass before reaches, fitted
            # without the earlier passes' labels (with them the trees played worse)
            fresh_mid = labelled(f"midgame-round{r}" + (f"-pass{p}" if p > 1 else ""),
                                 "endgame", parts(end_counts, int(midgame_games)),
                                 seed=seed * 100 + 90 + r + 1000 * (p - 1),
                                 playouts=midgame_playouts, max_trains=midgame_trains,
                                 model=path, rollout_model=None)
            m_train = _subset(fresh_mid, fresh_mid.game % k != 0)
            m_test = _subset(fresh_mid, fresh_mid.game % k == 0)
            before = gain(model["turns"], m_test)["model_gain"]
            turns = dict(fit(e_train.concat(m_train), seed=seed, trees=midgame_trees,
                             depth=midgame_depth, min_leaf=midgame_min_leaf, histogram=True),
                         max_trains=int(midgame_trains))
            info = dict(info, midgame_trains=int(midgame_trains),
                        midgame_playouts=int(midgame_playouts),
                        **({"midgame_passes": p} if p > 1 else {}))
            model = calibrate(make_model(setup, turns, info), path, boards,
                              games=final_calib_games, seed=seed + r + 1000 * (p - 1),
                              n_jobs=n_jobs, reaches=(*midgame_reaches, midgame_trains),
                              players=calib_players)
            pre = "midgame_" if p == 1 else f"pass{p}_"
            mid.update({f"{pre}decisions": fresh_mid.decisions,
                        f"{pre}label_cpu_seconds": round(fresh_mid.cpu_seconds, 1),
                        f"{pre}turn_gain_before": before,
                        **{f"{pre}turn_{key}": v for key, v in gain(model["turns"], m_test).items()}})
        rec = {"round": r, "labels": labels,
               "setup_positions": setup_data.decisions, "endgame_decisions": end_data.decisions,
               "label_cpu_seconds": round(fresh.cpu_seconds + fresh_end.cpu_seconds, 1),
               "cpu_seconds": round(time.process_time() - t0, 1),
               "setup_agreement": agreement(setup, s_test),
               "setup_agreement_tickets": _tickets_agreement(s_test),
               **{f"setup_{key}": v for key, v in gain(setup, s_test).items()},
               "turn_margin": model["turns"]["margin"],
               "turn_max_trains": model["turns"]["max_trains"],
               "turn_agreement": agreement(model["turns"], e_test),
               "turn_agreement_tickets": _tickets_agreement(e_test),
               **{f"turn_{key}": v for key, v in gain(model["turns"], e_test).items()},
               **({k: model["training"][k] for k in ("margin_win_shares", "calibration")
                   if k in model["training"]}),
               **mid, "model": str(path), "strength": []}
        for j, board in enumerate(boards):
            if eval_games > 0:
                rec["strength"].append(strength(path, board, 2, eval_games, seed=seed + 77 + j,
                                                n_jobs=n_jobs))
        records.append(rec)
        (out / "rounds.json").write_text(json.dumps(records, indent=1) + "\n", encoding="utf-8")
        prev = path
    return records


def _positions(X, value, chosen, group, game, boards, cpu) -> Positions:
    """Positions from per-decision lists of arrays (empty arrays when there is none)."""
    def cat(parts, dtype):
        return np.concatenate(parts) if parts else np.zeros(0, dtype)
    return Positions(np.vstack(X) if X else np.zeros((0, len(FEATURES)), np.float32),
                     cat(value, np.float32), cat(chosen, np.int8), cat(group, np.int64),
                     cat(game, np.int64), boards, cpu)


def _save_positions(p: Positions, path: Path, key: str = "") -> None:
    np.savez_compressed(path, X=p.X, value=p.value, chosen=p.chosen, group=p.group, game=p.game,
                        boards=np.array(p.boards), cpu_seconds=p.cpu_seconds, key=np.array(key))


def _load_positions(path: Path, with_key: bool = False):
    with np.load(path) as z:
        p = Positions(z["X"], z["value"], z["chosen"], z["group"], z["game"], list(z["boards"]),
                      float(z["cpu_seconds"]))
        key = str(z["key"]) if "key" in z.files else ""
    return (p, key) if with_key else p


def _file_digest(path) -> str | None:
    import hashlib

    return None if path is None else hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _tickets_agreement(data: Positions) -> float:
    """Share of the decisions where the search's choice is ``tickets``' own (the first
    candidate): the baseline any model must beat."""
    if data.decisions == 0:
        return float("nan")
    return float(np.mean([data.chosen[rows[0]] == 1 for rows in _decisions(data)]))


def _subset(data: Positions, mask: np.ndarray) -> Positions:
    return Positions(data.X[mask], data.value[mask], data.chosen[mask], data.group[mask],
                     data.game[mask], [], data.cpu_seconds)
