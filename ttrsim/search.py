"""Position analysis with the ``search`` policy: which move is best here, and by how much.

>>> g = ttrsim.Game("europe", 2, seed=3)          # doctest: +SKIP
>>> ttrsim.analyse(g, playouts=500)               # doctest: +SKIP

docs/search.md describes the search, its parameters and a worked example.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ttrsim._search import bench_playouts     # what a search playout costs (scripts/bench.py)
from ttrsim._search import value_actions      # the search's values of given moves (training)
from ttrsim._validate import check_int

__all__ = ["analyse", "FLAG_LEVEL", "bench_playouts", "better_p_values", "decision_p_value",
           "flag_decisions", "flag_meaning", "value_actions"]

#: the false discovery rate at which a played move is flagged (docs/viewer.md)
FLAG_LEVEL = 0.05


def better_p_values(outcomes, played: int) -> np.ndarray:
    """One-sided paired p-values that each move beats the move played, on common worlds.

    ``outcomes``: array (moves, worlds) of each move's result in each sampled world (the
    win share of ``ttrsim.analyse``; world i is the same world for every move).
    Row k is compared with row ``played`` by the exact sign test on the worlds where
    the two differ (McNemar's test: ``scipy.stats.binomtest`` of the worlds k did better
    in, out of those where they differ, against 1/2, one-sided). A move whose mean is
    not above the played move's gets p = 1 (it cannot be the better one); the played
    row itself gets NaN. Worlds a move did not reach (NaN) are left out of its pair.
    """
    from scipy.stats import binom

    x = np.asarray(outcomes, dtype=float)
    if x.ndim != 2 or not 0 <= played < len(x):
        raise ValueError(f"outcomes must be (moves, worlds) with row {played} the move "
                         f"played, got shape {x.shape}")
    both = np.isfinite(x) & np.isfinite(x[played])
    d = np.where(both, x - np.where(both, x[played], 0.0), 0.0)
    up, down = (d > 0).sum(axis=1), (d < 0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = d.sum(axis=1) / both.sum(axis=1)
    # P(X >= up) for X ~ Binomial(up + down, 1/2): binomtest(up, up + down, 0.5,
    # alternative="greater").pvalue, for every row at once
    p = np.where((up + down > 0) & (mean > 0), binom.sf(up - 1, up + down, 0.5), 1.0)
    p[played] = np.nan
    return p


def decision_p_value(p) -> float:
    """One p-value for "some other move beats the one played" at one decision: Simes'
    combination of the moves' p-values (the smallest Benjamini-Hochberg adjusted p-value,
    ``scipy.stats.false_discovery_control``), valid when the tests are positively
    dependent, as tests against one common played move on common worlds are. NaN values
    (the played row) are ignored; 1.0 when there is no other move."""
    from scipy.stats import false_discovery_control

    p = np.asarray(p, dtype=float)
    p = p[np.isfinite(p)]
    if p.size == 0:
        return 1.0
    return float(false_discovery_control(p, method="bh").min())


def flag_decisions(p, level: float = FLAG_LEVEL):
    """Benjamini-Hochberg over a game's analysed decisions: returns (q-values, flags),
    a decision flagged when its q-value is at most ``level``, so that among flagged
    decisions the expected share where no other move is better is at most ``level``.
    NaN p-values (decisions whose move played was not measured) get NaN and no flag and
    do not count in the family."""
    from scipy.stats import false_discovery_control

    if not 0 < level < 1:
        raise ValueError(f"level must be within (0, 1) (a false discovery rate such as "
                         f"0.05), got {level!r}")
    p = np.asarray(p, dtype=float)
    q = np.full(p.shape, np.nan)
    ok = np.isfinite(p)
    if ok.any():
        q[ok] = false_discovery_control(p[ok], method="bh")
    return q, np.where(ok, q <= level, False)


def flag_meaning(rollout: str) -> str:
    """What a move flag says, and what no flag does not say, in words naming ``rollout``,
    the spec of the policy the analysis played its playouts with (the viewer's page and
    ``ttrsim show`` print it). A flag measures moves against each other under that policy's
    play, not the move against perfect play: where the game is decided, every move ends
    alike and none is flagged, however bad."""
    return (f"A flag means that the analysis' rollout policy, {rollout}, playing every seat "
            "on from the same sampled worlds, wins more often from another move than from "
            "the one played. A decided game shows no flags: when every move loses (or every "
            "move wins), none wins more often, so the absence of flags is not praise.")


def _same_faceup_colour(codes, code: int, game) -> np.ndarray:
    """Rows that take the same face-up colour as `code`, a face-up draw from another slot
    (the analysis keeps one slot per colour: the same choice but for the slot refilled)."""
    from ttrsim.actions import Action

    board, row = game.board, game.state()["faceup"]
    act = Action.decode(code, board)
    out = np.zeros(len(codes), bool)
    if act.kind != "draw_faceup" or not 0 <= act.slot < len(row) or row[act.slot] < 0:
        return out
    for i, c in enumerate(codes):
        other = Action.decode(int(c), board)
        if other.kind == "draw_faceup" and row[other.slot] == row[act.slot]:
            out[i] = True
            break
    return out


def analyse(game, seat: int | None = None, playouts: int = 1000, seed: int = 0, *,
            rollout: str | None = None, claims: int = 12, utility: float = 0.2,
            infer: float = 5.0, progress: bool = False, played=None,
            level: float = FLAG_LEVEL, outcomes: bool = False):
    """Evaluate the candidate actions of the seat to move by information-set search.

    Every choice is ranked where a phase has few (a second card draw: each face-up colour
    and the blind draw; keeping tickets: every keep set; a tunnel: every payment and
    declining); at the start of a turn the candidates are the heuristics' choices, a
    face-up card of each colour on offer, a blind draw, a ticket draw and up to
    ``claims`` claims. Each is played ``playouts`` times to the end of the game from
    worlds sampled from what the seat may know (hidden hands, deck order and hidden
    tickets resampled, the others' tickets dealt toward the cities their routes touch),
    with ``rollout`` playing every seat (default: the ``search`` policy's, ``expert:model=v4``).
    Candidate k's i-th playout uses the same world as every other candidate's i-th
    (common random numbers), so differences between rows are measured on the same deals.

    Parameters
    ----------
    game : ttrsim.Game, or the path of a position saved with ``Game.save``
        The position (it is not changed). Hidden information in it is not used.
    seat : int, optional
        The seat to move (default); another seat raises ValueError (only the seat to move
        has actions to compare).
    playouts : playouts per candidate. seed : seeds the sampled worlds (same seed, same table).
    rollout, claims, utility, infer : as the ``search`` policy's parameters (``ttrsim policies``).
    progress : show a progress bar (playouts done of all). Ctrl-C stops the analysis
        (KeyboardInterrupt) within a fraction of a second either way.
    played : int or Action, optional
        The move played here (an action code): each row is then compared with it on the
        same worlds (``vs_played``, ``p_better``; a face-up card taken from another slot
        than the analysed one of its colour is compared as that row), and the decision
        is flagged when the
        comparison says another move is better at ``level`` (one decision: its p-value
        at most ``level``; over a game's decisions the viewer controls the false
        discovery rate, docs/viewer.md).
    outcomes : also return the win share of every row in every world (an array of
        shape (rows, playouts) in the table's row order; world i is the same for every row).

    Returns
    -------
    pandas.DataFrame, one row per candidate, by win rate (ties: by mean utility, the
    value the search maximises; then candidate order): ``action`` (in words), ``code``,
    ``playouts``, ``win_rate`` with its Wilson 95% interval ``win_low``/``win_high``,
    ``mean_margin`` (final score minus the best opponent's), ``utility`` (mean playout
    value), ``best`` (True on the first row, the highest win rate), ``tied`` (the same
    win rate as the best row), and with ``played``: ``played`` (True on its row),
    ``vs_played`` (win rate minus the played move's, on the same worlds) and
    ``p_better`` (one-sided paired p-value that the row beats the move played:
    ``better_p_values``). ``df.attrs`` holds ``rollout`` (the spec of the rollout policy
    used), ``played`` (its code, or None), ``p`` (the
    decision's p-value that another move is better: ``decision_p_value``; NaN when the
    move played is not among the rows, which is then not measured), ``level`` and
    ``flag`` (p at most level). With ``outcomes=True``: (DataFrame, outcomes).
    """
    import os

    from scipy.stats import binomtest

    from ttrsim._search import analyse_position
    from ttrsim.actions import describe
    from ttrsim.game import Game
    from ttrsim.policies import SEARCH_ROLLOUT, make_search_policy

    if isinstance(game, (str, os.PathLike)):
        game = Game.load(game)
    elif not isinstance(game, Game):
        raise TypeError(f"analyse needs a ttrsim.Game or the path of a saved position, got "
                        f"{type(game).__name__}")
    if game.is_over():
        raise ValueError("the game is over: there is no move to analyse")
    if seat is not None and int(seat) != game.current_player:
        raise ValueError(f"seat {seat} is not to move (seat {game.current_player} is, in "
                         f"phase {game.phase}); analyse the position when it is that seat's turn")
    check_int("playouts", playouts, 1, hint=" (per candidate)")
    if not 0 < level < 1:
        raise ValueError(f"level must be within (0, 1) (a false discovery rate such as 0.05), "
                         f"got {level!r}")
    policy = make_search_policy(playouts=playouts, claims=claims, utility=utility, infer=infer,
                                rollout=SEARCH_ROLLOUT if rollout is None else rollout)
    policy.uniform = True
    bar = None
    if progress:
        from tqdm.auto import tqdm
        bar = tqdm(total=0, unit="playout", unit_scale=True, desc="analyse")

        def step(done, total):
            bar.total = total
            bar.update(done - bar.n)
    try:
        rows, chosen = analyse_position(policy, game, seed, step if bar is not None else None)
    finally:
        if bar is not None:
            bar.close()
    _values, wins, _margins = policy.playout_outcomes()
    out = []
    for k, (code, n, usum, won_sum, msum, _alive) in enumerate(rows):
        won = int(round(won_sum))
        ci = binomtest(won, n).proportion_ci(method="wilson") if n else None
        out.append({"action": describe(int(code), game), "code": int(code),
                    "playouts": int(n), "win_rate": won_sum / n if n else float("nan"),
                    "win_low": ci.low if ci else float("nan"),
                    "win_high": ci.high if ci else float("nan"),
                    "mean_margin": msum / n if n else float("nan"),
                    "utility": usum / n if n else float("nan")})
    df = pd.DataFrame(out)
    order = df.sort_values(["win_rate", "utility"], ascending=[False, False],
                           kind="stable").index.to_numpy()
    df = df.loc[order].reset_index(drop=True)
    wins = wins[order]
    df["best"] = df.index == 0
    df["tied"] = df["win_rate"] == df["win_rate"].iloc[0]
    code = None if played is None else int(getattr(played, "code", played))
    p_dec = float("nan")
    if code is not None:
        df["played"] = df["code"] == code
        if not df["played"].any():
            df["played"] = _same_faceup_colour(df["code"], code, game)
        df["vs_played"] = np.nan
        df["p_better"] = np.nan
        if df["played"].any():
            row = int(np.flatnonzero(df["played"])[0])
            both = np.isfinite(wins) & np.isfinite(wins[row])
            df["vs_played"] = [float(np.mean(w[m] - wins[row][m])) if m.any() else np.nan
                               for w, m in zip(wins, both)]
            df["p_better"] = better_p_values(wins, row)
            p_dec = decision_p_value(df["p_better"])
    df.attrs.update(rollout=policy.rollout, played=code, p=p_dec, level=float(level),
                    flag=bool(np.isfinite(p_dec) and p_dec <= level))
    return (df, wins) if outcomes else df
