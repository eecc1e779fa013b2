"""Position analysis with the ``search`` policy: which move is best here, and by how much.

>>> g = ttrsim.Game("europe", 2, seed=3)          # doctest: +SKIP
>>> ttrsim.analyse(g, playouts=500)               # doctest: +SKIP

docs/search.md describes the search, its parameters and a worked example.
"""
from __future__ import annotations

import pandas as pd

from ttrsim._validate import check_int

__all__ = ["analyse"]


def analyse(game, seat: int | None = None, playouts: int = 1000, seed: int = 0, *,
            rollout: str | None = None, claims: int = 12, utility: float = 0.2,
            infer: float = 5.0, progress: bool = False) -> pd.DataFrame:
    """Evaluate the candidate actions of the seat to move by information-set search.

    Every choice is ranked where a phase has few (a second card draw: each face-up colour
    and the blind draw; keeping tickets: every keep set; a tunnel: every payment and
    declining); at the start of a turn the candidates are the heuristics' choices, a
    face-up card of each colour on offer, a blind draw, a ticket draw and up to
    ``claims`` claims. Each is played ``playouts`` times to the end of the game from
    worlds sampled from what the seat may know (hidden hands, deck order and hidden
    tickets resampled, the others' tickets dealt toward the cities their routes touch),
    with ``rollout`` playing every seat (default: the ``search`` policy's, ``expert``).
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

    Returns
    -------
    pandas.DataFrame, one row per candidate, best first (by mean utility, the value the
    search maximises): ``action`` (in words), ``code``, ``playouts``, ``win_rate`` with its
    Wilson 95% interval ``win_low``/``win_high``, ``mean_margin`` (final score minus the
    best opponent's), ``utility`` (mean playout value), ``best`` (True on the chosen row).
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
    out = []
    for k, (code, n, usum, wins, msum, _alive) in enumerate(rows):
        won = int(round(wins))
        ci = binomtest(won, n).proportion_ci(method="wilson") if n else None
        out.append({"action": describe(int(code), game), "code": int(code),
                    "playouts": int(n), "win_rate": wins / n if n else float("nan"),
                    "win_low": ci.low if ci else float("nan"),
                    "win_high": ci.high if ci else float("nan"),
                    "mean_margin": msum / n if n else float("nan"),
                    "utility": usum / n if n else float("nan"), "best": k == chosen})
    df = pd.DataFrame(out)
    df = df.sort_values(["best", "utility"], ascending=[False, False], kind="stable")
    return df.reset_index(drop=True)
