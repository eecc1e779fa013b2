"""Paired comparison of two boards with common random numbers.

``compare(base, variant, ...)`` plays the same games on both boards: game ``i`` of both
sides is dealt from the same seed (the run seed and ``i``, exactly as ``simulate`` does),
so the shuffles, the deals and the policies' random draws coincide wherever the two
boards allow, and the per-game difference of any result carries far less noise than the
difference of two unrelated runs.

Every metric is a ratio of per-game sums, ``R = sum(y) / sum(x)`` (a plain mean has
``x = 1``, a mean per player ``x = players``, a completion rate ``x = tickets kept``).
Each side is reduced, batch by batch, to the sums and the sums of products of
``(y_base, x_base, y_variant, x_variant)`` per metric (exact integers), so memory does not
grow with the number of games. The difference ``R_variant - R_base`` gets the delta-method
standard error of the *paired* per-game differences of the linearised ratios
``(y - R x) / mean(x)``; for a plain mean this is exactly the paired t-test. The p-value
and the interval use Student's t with ``games - 1`` degrees of freedom
(``scipy.stats.t``); the p-values of all metrics are adjusted with Benjamini–Hochberg
(``scipy.stats.false_discovery_control``). The same sums also give the interval an
unpaired comparison would have (``Comparison.intervals``).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ttrsim._validate import is_int
from ttrsim._version import __version__
from ttrsim.batches import DEFAULT_MAX_TURNS, SCORE_COLS, make_config, play, versions
from ttrsim.maps import MapError, resolve_board
from ttrsim.policies import expert_models, search_budgets

__all__ = ["study_manifest", "game_metrics", "paired_moments", "align", "paired_stats", "paired_configs",
           "play_metrics", "sum_moments", "PLAYER_COLS"]

_SC = {name: i for i, name in enumerate(SCORE_COLS)}
#: Per-player score parts and counts compared as means per player.
PLAYER_COLS = ("score", "route_points", "ticket_points", "longest_bonus", "station_points",
               "attraction_points", "tickets_kept", "tickets_completed", "tickets_failed",
               "stations_built", "routes_claimed", "trains_left", "longest")


def game_metrics(board, names, res: dict, first: int, detail: bool = True):
    """Per-game numerators and denominators of every metric of one batch.

    ``res`` is what the core returns for a batch (per-event mode) whose first game is
    ``first``; ``names`` are the policy names per slot. Returns ``(meta, Y, X)``: ``meta`` a
    list of ``(key, kind, label)`` and ``Y``, ``X`` int64 arrays (games, metrics).
    ``detail=False`` keeps only the mean score and the ticket completion.
    """
    sc = np.asarray(res["scores"]).astype(np.int64)
    G, n = sc.shape[:2]
    meta, ys, xs = [], [], []

    def add(key, kind, label, y, x):
        meta.append((key, kind, label))
        ys.append(np.asarray(y, dtype=np.int64))
        xs.append(np.broadcast_to(np.asarray(x, dtype=np.int64), (G,)))

    globe = detail and board.globetrotter_bonus > 0      # rows only where the board has it
    per_player = (PLAYER_COLS + (("globetrotter",) if globe else ())) if detail else ("score",)
    for col in per_player:
        add(col, "score", f"{col.replace('_', ' ')} (mean per player)",
            sc[:, :, _SC[col]].sum(axis=1), n)
    add("ticket_completion", "score", "ticket completion (completed / kept)",
        sc[:, :, _SC["tickets_completed"]].sum(axis=1), sc[:, :, _SC["tickets_kept"]].sum(axis=1))
    if not detail:
        return meta, np.stack(ys, axis=1), np.stack(xs, axis=1)
    win = sc[:, :, _SC["rank"]] == 1
    bonus = sc[:, :, _SC["longest_bonus"]] > 0
    add("turns", "game", "game length (turns)", np.asarray(res["turns"]), 1)
    add("truncated", "game", "games truncated (share)", np.asarray(res["truncated"]), 1)
    add("all_passed", "game", "games ended by all passing (share)", np.asarray(res["all_passed"]), 1)
    add("longest_holders", "game", "longest-path bonus holders per game", bonus.sum(axis=1), 1)
    if globe:
        add("globetrotter_holders", "game", "Globetrotter holders per game",
            (sc[:, :, _SC["globetrotter"]] > 0).sum(axis=1), 1)
    add("winners", "game", "winners per game (ties share)", win.sum(axis=1), 1)
    add("margin", "game", "winning margin (points, first minus second)",
        np.diff(np.sort(sc[:, :, _SC["score"]], axis=1)[:, -2:], axis=1)[:, 0], 1)
    for s in range(n):
        add(f"seat{s}_win", "seat", f"win share, seat {s}", win[:, s], 1)
    for s in range(n):
        add(f"seat{s}_longest", "seat", f"longest-path bonus share, seat {s}", bonus[:, s], 1)
    slot = np.asarray(res["slot"])
    pol = np.asarray(names, dtype=object)[slot]
    distinct = sorted(set(names))
    if len(distinct) > 1:
        for p in distinct:
            mine = pol == p
            add(f"policy:{p}:win", "policy", f"win share, policy {p}", (win & mine).sum(axis=1),
                mine.sum(axis=1))
            add(f"policy:{p}:score", "policy", f"mean score, policy {p}",
                np.where(mine, sc[:, :, _SC["score"]], 0).sum(axis=1), mine.sum(axis=1))
    # per ticket: completions among the tickets kept
    o = np.asarray(res["offers"])
    T = board.n_tickets
    kept = o[:, 4].astype(bool)
    cell = (o[kept, 0] - first) * T + o[kept, 2]
    k = np.bincount(cell, minlength=G * T).reshape(G, T)
    c = np.bincount(cell, weights=o[kept, 6], minlength=G * T).reshape(G, T).astype(np.int64)
    # per route: share of games in which it is claimed
    cl = np.asarray(res["claims"])
    R = board.n_routes
    claimed = np.zeros(G * R, dtype=np.int64)
    claimed[(cl[:, 0] - first) * R + cl[:, 2]] = 1
    claimed = claimed.reshape(G, R)
    Y, X = np.stack(ys, axis=1), np.stack(xs, axis=1)
    tmeta = [(f"ticket:{int(board.ticket_id[t])}", "ticket",
              f"ticket completion, {board.ticket_name(t)}") for t in range(T)]
    rmeta = [(f"route:{int(board.route_id[r])}", "route",
              f"claim rate, route {int(board.route_id[r])} {board.route_name(r)}")
             for r in range(R)]
    return (meta + tmeta + rmeta, np.concatenate([Y, c, claimed], axis=1),
            np.concatenate([X, k, np.ones((G, R), dtype=np.int64)], axis=1))


def paired_moments(Yb, Xb, Yv, Xv):
    """Per metric the sums ``S`` (metrics, 4) and sums of products ``M`` (metrics, 4, 4)
    of ``(y_base, x_base, y_variant, x_variant)`` over games (int64, exact)."""
    Z = np.stack([Yb, Xb, Yv, Xv], axis=0).astype(np.int64)      # (4, games, metrics)
    S = Z.sum(axis=1).T
    # products in float64 (BLAS): exact while every sum stays below 2**53, which the
    # counts and scores of a batch are far from (|value| < 2**15, games < 2**20)
    F = np.ascontiguousarray(Z.transpose(2, 0, 1), dtype=np.float64)   # (metrics, 4, games)
    M = np.rint(F @ F.transpose(0, 2, 1)).astype(np.int64)
    return S, M


def align(meta_b, Yb, Xb, meta_v, Yv, Xv):
    """Union of the two sides' metrics (base order first); a metric missing on one side
    has y = x = 0 there (its rate is undefined)."""
    keys = [m[0] for m in meta_b]
    index = {k: i for i, k in enumerate(keys)}
    meta = list(meta_b)
    for m in meta_v:
        if m[0] not in index:
            index[m[0]] = len(meta)
            meta.append(m)
    G, K = Yb.shape[0], len(meta)

    def place(side_meta, Y, X):
        Yo = np.zeros((G, K), dtype=np.int64)
        Xo = np.zeros((G, K), dtype=np.int64)
        cols = [index[m[0]] for m in side_meta]
        Yo[:, cols] = Y
        Xo[:, cols] = X
        return Yo, Xo

    return meta, place(meta_b, Yb, Xb), place(meta_v, Yv, Xv)


def paired_stats(n: int, S, M, confidence: float = 0.95) -> pd.DataFrame:
    """Estimates, paired interval, p-value and unpaired half-width of each metric from the
    sums of :func:`paired_moments` over ``n`` games (see the module docstring); ``se_base``
    and ``se_variant`` are the standard errors of each side's own estimate."""
    from scipy import stats as sps

    S = np.asarray(S, dtype=np.int64)
    M = np.asarray(M, dtype=np.int64)
    Sf = S.astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        base = Sf[:, 0] / Sf[:, 1]
        var = Sf[:, 2] / Sf[:, 3]
        diff = var - base
        # n (n - 1) Cov, exact in integers
        C = (n * M - S[:, :, None] * S[:, None, :]).astype(float) / (n * max(n - 1, 1))
        xb, xv = Sf[:, 1] / n, Sf[:, 3] / n
        a = np.stack([-1 / xb, base / xb, 1 / xv, -var / xv], axis=1)
        v_d = np.einsum("ki,kij,kj->k", a, C, a)
        v_b = np.einsum("ki,kij,kj->k", a[:, :2], C[:, :2, :2], a[:, :2])
        v_v = np.einsum("ki,kij,kj->k", a[:, 2:], C[:, 2:, 2:], a[:, 2:])
        # floating-point residue of a variance that is exactly 0 (identical games)
        v_d = np.where(v_d <= 1e-9 * (v_b + v_v), 0.0, v_d)
        se = np.sqrt(v_d / n)
        se_u = np.sqrt((v_b + v_v) / n)
        tq = sps.t.ppf(0.5 + confidence / 2, max(n - 1, 1))
        tstat = diff / se
        p = 2 * sps.t.sf(np.abs(tstat), max(n - 1, 1))
    p = np.where(se == 0, np.where(diff == 0, 1.0, 0.0), p)
    valid = np.isfinite(diff) & (n > 1)
    p = np.where(valid, p, np.nan)
    low = np.where(valid, diff - tq * se, np.nan)
    high = np.where(valid, diff + tq * se, np.nan)
    return pd.DataFrame({"base": base, "variant": var, "difference": diff, "low": low,
                         "high": high, "p_value": p, "se_paired": se, "se_unpaired": se_u,
                         "se_base": np.sqrt(np.clip(v_b, 0, None) / n),
                         "se_variant": np.sqrt(np.clip(v_v, 0, None) / n)})


def paired_configs(base, variant, players=4, policies=None, games=10_000, seed=0,
                   batch_size=None, max_turns=DEFAULT_MAX_TURNS, crn=True):
    """The runner configurations of the two sides: identical but for the board (and, with
    ``crn=False``, the seed of the variant side, ``seed + 1``)."""
    try:
        base, variant = resolve_board(base), resolve_board(variant)
    except MapError as exc:
        raise ValueError(str(exc)) from None
    if policies is not None:
        if isinstance(policies, str):
            if not is_int(players):
                raise ValueError("with one policy spec give players as a count")
            players = [policies] * int(players)
        else:
            players = list(policies)
    cfg_b = make_config(base, players, games, seed, batch_size, True, False, max_turns)
    cfg_v = make_config(variant, players, games, seed if crn else seed + 1, cfg_b.batch_size,
                        True, False, max_turns)
    return cfg_b, cfg_v


def play_metrics(cfg, first, stop, detail):
    """Play games ``first .. stop - 1`` of ``cfg`` and return their :func:`game_metrics`."""
    res = play(cfg, first, stop)
    return game_metrics(cfg.board, cfg.names, res, first, detail)


def sum_moments(results: dict):
    """Sum the batches' ``(meta, S, M)`` in batch order (exact integers: the same total
    for any n_jobs)."""
    meta = None
    S = M = None
    for b in sorted(results):
        m, s, mm = results[b]
        if meta is None:
            meta, S, M = m, s.copy(), mm.copy()
        else:
            if m != meta:
                raise RuntimeError("batches disagree on the metrics")
            S += s
            M += mm
    return meta, S, M


def study_manifest(kind: str, cfg, **fields) -> dict:
    """The manifest every study result carries: what it is, ttrsim's version, the board
    (name and checksum), players, policies (and the model file of every `expert` seat),
    games, seed and batch size of the base side, the study's own ``fields``, and the
    library versions."""
    models = expert_models(cfg.names)
    return {"kind": kind, "ttrsim_version": __version__, "board": cfg.board.name,
            "board_checksum": cfg.board.checksum, "players": cfg.n_players,
            "policies": list(cfg.names), **({"expert_models": models} if models else {}),
            **({"search_budgets": b} if (b := search_budgets(cfg.names)) else {}),
            "games": cfg.games, "seed": cfg.seed,
            "batch_size": cfg.batch_size, "max_turns": cfg.max_turns, **fields,
            "versions": versions()}
