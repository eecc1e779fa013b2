"""Measuring a model: held-out agreement with the search and value gained
(:func:`agreement`, :func:`gain`), strength against ``tickets`` by play
(:func:`strength`), and the turn section's margin and reach chosen by play
(:func:`calibrate`)."""
from __future__ import annotations

import time

import numpy as np

from ttrsim.maps import resolve_board
from ttrsim.policies import parse_spec
from ttrsim.training.model_file import FEATURES, as_section, expert_spec, export
from ttrsim.training.positions import Positions, decisions

__all__ = ["BOARDS", "MARGINS", "agreement", "calibrate", "gain", "strength",
           "tickets_agreement"]

BOARDS = ("usa", "europe", "newyork")


def _scores(m, data: Positions) -> np.ndarray:
    """A section's scores of every row as play sees them: the trees, plus its margin on
    tickets' choice (the first row of each decision) and its bias on each favoured kind
    of candidate."""
    scores = m.predict(data.X) if len(data.X) else np.zeros(0)
    first = np.r_[True, data.group[1:] != data.group[:-1]] if len(data.X) else np.zeros(0, bool)
    kinds = np.array([FEATURES.index(k) for k in m.bias], dtype=np.int64)
    bias = np.array(list(m.bias.values()))
    extra = (data.X[:, kinds] > 0.5) @ bias if len(data.X) else 0.0
    return scores + first * m.margin + extra


def gain(section, data: Positions) -> dict:
    """On the decisions of ``data``, by the search's values: the model's pick minus
    tickets' choice (``model_gain``, where the search valued the pick), the best-valued
    candidate minus tickets' choice (``oracle_gain``: a perfect imitation; biased upward
    by the values' noise), and the share of decisions where the search valued the pick
    (``coverage``). ``section``: a section dict (``fit``) or a TreeModel."""
    m = as_section(section)
    scores = _scores(m, data)
    picked, best, covered = [], [], 0
    for rows in decisions(data):
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
    m = as_section(section)
    if data.decisions == 0:
        return float("nan")
    scores = _scores(m, data)
    hit = sum(int(data.chosen[rows[int(np.argmax(scores[rows]))]] == 1) for rows in decisions(data))
    return hit / data.decisions


def tickets_agreement(data: Positions) -> float:
    """Share of the decisions where the search's choice is ``tickets``' own (the first
    candidate): the baseline any model must beat."""
    if data.decisions == 0:
        return float("nan")
    return float(np.mean([data.chosen[rows[0]] == 1 for rows in decisions(data)]))


def strength(model, board="europe", players: int = 2, games: int = 1000, seed: int = 0,
             opponent: str = "tickets", n_jobs: int = 1) -> dict:
    """``expert`` (with ``model``, a file path; None: the shipped one) in one seat against
    ``opponent`` in the others, seats rotated: its win share with the 95% Wilson interval."""
    from ttrsim.runner import simulate

    other = parse_spec(opponent)
    specs = [expert_spec(model)] + [other.replace(label=str(k)) for k in range(players - 1)]
    t0 = time.process_time()
    run = simulate(board, specs, games=games, seed=seed, n_jobs=n_jobs, summary=True)
    cpu = time.process_time() - t0
    table = run.summary(by="policy")
    row = table.loc[[k for k in table.index if str(k).startswith("expert")][0]]
    return {"board": str(board), "players": players, "games": games, "opponent": opponent,
            "win_share": float(row["win_share"]), "low": float(row["win_share_low"]),
            "high": float(row["win_share_high"]), "cpu_seconds": round(cpu, 2)}


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
