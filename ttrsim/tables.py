"""The core's batch arrays as the tables of docs/tables.md.

``batch_tables`` turns one batch of a per-event run into its five DataFrames (named
columns, categorical board, policy, colour, outcome and city); ``batch_summary`` turns one
batch of a summary-mode run into count arrays that add up over batches
(``add_summary``), and ``summary_tables`` turns the total into the summary tables.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ttrsim.actions import card_name
from ttrsim.batches import SCORE_COLS, STAT_COLS, TURN_BIN_WIDTH, RunConfig

__all__ = ["EVENT_TABLES", "SUMMARY_TABLES", "TUNNEL_OUTCOMES", "SEAT_SUM_COLS", "categories",
           "batch_tables", "batch_summary", "add_summary", "summary_tables", "route_lengths",
           "length_column", "profile_stats", "profile_values", "profile_sums"]

EVENT_TABLES = ("games", "tickets", "routes", "tunnels", "stations")
SUMMARY_TABLES = ("seat_summary", "ticket_summary", "route_summary", "tunnel_summary",
                  "station_summary", "profile_summary")
TUNNEL_OUTCOMES = ("free", "paid", "declined")
SEAT_SUM_COLS = ("games", "wins", "score_sum", "score_sq_sum", "route_points_sum",
                 "ticket_points_sum", "longest_bonus_sum", "station_points_sum",
                 "attraction_points_sum", "tickets_kept_sum", "tickets_completed_sum",
                 "turns_sum", "all_passed", "turns_sq_sum", "diff_sum", "diff_sq_sum",
                 "globetrotter_sum")
_SC = {name: i for i, name in enumerate(SCORE_COLS)}
# Score parts of the game profile, in order, where the core scores them.
PROFILE_PARTS = tuple(c for c in ("score", "route_points", "ticket_points", "longest_bonus",
                                  "globetrotter", "station_points", "attraction_points")
                      if c in SCORE_COLS)
# Bonuses whose winner the profile counts (a part above whose value > 0 means "won").
PROFILE_BONUSES = tuple(c for c in ("longest_bonus", "globetrotter") if c in SCORE_COLS)
PROFILE_SUM_COLS = ("n", "sum", "sq_sum")


def route_lengths(board) -> list:
    """The route lengths the board has, shortest first."""
    return sorted({int(x) for x in np.asarray(board.route_len)})


def length_column(length: int) -> str:
    """The games-table column of routes claimed of one length."""
    return f"routes_len_{length}"


def profile_stats(board) -> list:
    """The quantities of the game profile, per seat-game, in order (docs/tables.md,
    ``profile_summary``): score parts, tickets, turns, first claim, largest hand, routes
    claimed by length, and for each bonus whether the seat won it (``<bonus>_won``)."""
    return (list(PROFILE_PARTS)
            + ["tickets_kept", "tickets_kept_setup", "ticket_draws", "tickets_kept_drawn",
               "tickets_completed", "ticket_points_completed", "tickets_failed",
               "turns_taken", "first_claim_turn", "largest_hand", "routes_claimed"]
            + [length_column(n) for n in route_lengths(board)]
            + [f"{b}_won" for b in PROFILE_BONUSES])


def profile_values(games: pd.DataFrame, board) -> pd.DataFrame:
    """Each seat-game's profile quantities (``profile_stats``) from games-table rows, as
    floats: NaN where a quantity does not apply (the first-claim turn of a seat that
    claimed nothing). A KeyError names columns the rows lack."""
    if "globetrotter" in PROFILE_PARTS and "globetrotter" not in games.columns:
        # rows from before the Globetrotter bonus existed: nobody scored it
        games = games.assign(globetrotter=0)
    if "ticket_points_completed" not in games.columns:
        # rows from before the core kept it: unknown, so it applies to no seat-game
        games = games.assign(ticket_points_completed=np.nan)
    need = set(PROFILE_PARTS) | {"tickets_kept", "tickets_completed", "tickets_failed",
                                 "routes_claimed", *STAT_COLS,
                                 *(length_column(n) for n in route_lengths(board))}
    missing = sorted(need - set(games.columns))
    if missing:
        raise KeyError(", ".join(missing))
    out = {}
    for stat in profile_stats(board):
        if stat == "tickets_kept_setup":
            col = games["tickets_kept"].to_numpy(np.float64) - games["tickets_kept_drawn"].to_numpy(np.float64)
        elif stat.endswith("_won"):
            col = (games[stat[:-4]].to_numpy() > 0).astype(np.float64)
        else:
            col = games[stat].to_numpy(np.float64)
            if stat == "first_claim_turn":
                col = np.where(col < 0, np.nan, col)
        out[stat] = col
    return pd.DataFrame(out, index=games.index)


def profile_sums(values: pd.DataFrame, keys: dict) -> pd.DataFrame:
    """Per group of ``keys`` (equal-length arrays: seat, policy or slot, win) and per
    quantity: ``n`` (seat-games where it applies), ``sum`` and ``sq_sum``, as int64, in
    long form (one row per group and quantity)."""
    grouper = [pd.Series(np.asarray(v), index=values.index, name=k) for k, v in keys.items()]
    by = values.groupby(grouper, observed=True, sort=True)
    n, total, sq = by.count(), by.sum(), (values ** 2).groupby(grouper, observed=True, sort=True).sum()
    long = pd.DataFrame({"n": n.stack(), "sum": total.stack(), "sq_sum": sq.stack()})
    long.index = long.index.set_names([*keys, "stat"])
    return long.round().astype(np.int64).reset_index()


def categories(cfg: RunConfig) -> dict:
    board = cfg.board
    return {
        "board": pd.CategoricalDtype([board.name]),
        "policy": pd.CategoricalDtype(sorted(set(cfg.names))),
        "color": pd.CategoricalDtype([card_name(board, c) for c in range(len(board.colors))]
                                     + ["wild"]),
        "outcome": pd.CategoricalDtype(list(TUNNEL_OUTCOMES)),
        "city": pd.CategoricalDtype(list(board.cities)),
    }


def games_frame(cfg: RunConfig, res: dict, first: int) -> pd.DataFrame:
    """The games table of one batch (docs/tables.md)."""
    board, cats = cfg.board, categories(cfg)
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
                "globetrotter", "station_points", "stations_built", "attraction_points", "rank", "win",
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
    st = res["stats"].reshape(n_games * n, -1)
    for i, col in enumerate(STAT_COLS):
        games[col] = st[:, i] if col in ("first_claim_turn", "turns_taken") else st[:, i].astype(np.int16)
    lengths = res["lengths"].reshape(n_games * n, -1)
    for length in route_lengths(board):
        games[length_column(length)] = lengths[:, length]
    return games


def batch_tables(cfg: RunConfig, res: dict, first: int) -> dict:
    board, cats = cfg.board, categories(cfg)
    games = games_frame(cfg, res, first)
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


def batch_summary(cfg: RunConfig, res: dict) -> dict:
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
            turns ** 2, diff, diff ** 2, flat[:, _SC["globetrotter"]]]
    seat_sums = np.zeros((n * n, len(cols)), dtype=np.int64)
    np.add.at(seat_sums, cell, np.stack(cols, axis=1))
    return {"seat": seat_sums.reshape(n, n, -1), "profile": _profile_counts(cfg, res),
            "tickets": res["ticket_counts"],
            "routes": res["route_counts"], "tunnels": res["tunnel_counts"],
            "stations": res["station_counts"], "truncated": int(res["truncated"].sum())}


def _profile_counts(cfg: RunConfig, res: dict) -> np.ndarray:
    """``profile_sums`` of one batch as an array (seat, slot, win, quantity, n/sum/sq_sum)
    that adds up over batches. Summary mode keeps no games table, so the quantities come
    from the batch's plain integer columns and are counted with ``np.bincount`` (a games
    table per batch cost twenty times the rest of the summary)."""
    n, board, stats = cfg.n_players, cfg.board, profile_stats(cfg.board)
    rows = res["scores"].shape[0] * n
    sc = res["scores"].reshape(rows, -1)
    st = res["stats"].reshape(rows, -1)
    lengths = res["lengths"].reshape(rows, -1)
    columns = {c: sc[:, _SC[c]] for c in SCORE_COLS}
    columns.update({c: st[:, i] for i, c in enumerate(STAT_COLS)})
    columns.update({length_column(m): lengths[:, m] for m in route_lengths(board)})
    values = profile_values(pd.DataFrame(columns), board)
    seat = np.tile(np.arange(n), rows // n)
    win = (sc[:, _SC["rank"]] == 1).astype(np.int64)
    cell = (seat * n + res["slot"].reshape(-1).astype(np.int64)) * 2 + win
    out = np.zeros((n * n * 2, len(stats), len(PROFILE_SUM_COLS)), dtype=np.int64)
    for q, stat in enumerate(stats):
        v = values[stat].to_numpy(np.float64)
        applies = ~np.isnan(v)
        v = np.where(applies, v, 0.0)
        for k, weights in enumerate((applies.astype(np.float64), v, v * v)):
            out[:, q, k] = np.rint(np.bincount(cell, weights=weights, minlength=n * n * 2))
    return out.reshape(n, n, 2, len(stats), len(PROFILE_SUM_COLS))


def _profile_table(cfg: RunConfig, counts) -> pd.DataFrame | None:
    """The ``profile_summary`` table: one row per seat, policy, win and quantity with its
    n, sum and sum of squares; None for a run saved before the profile was recorded."""
    if counts is None:
        return None
    stats = profile_stats(cfg.board)
    # cells of seat-games that were played (the score applies to every seat-game)
    played = np.broadcast_to(counts[:, :, :, :1, 0] > 0, counts.shape[:4])
    seat, slot, win, q = np.nonzero(played)
    rows = counts[seat, slot, win, q]
    df = pd.DataFrame({"seat": seat.astype(np.int8),
                       "policy": np.asarray(cfg.names, dtype=object)[slot],
                       "win": win.astype(bool), "stat": np.asarray(stats, dtype=object)[q],
                       **{c: rows[:, i] for i, c in enumerate(PROFILE_SUM_COLS)}})
    # two slots with one name are one policy
    return (df.groupby(["seat", "policy", "win", "stat"], sort=False, as_index=False)
            [list(PROFILE_SUM_COLS)].sum())


def summary_tables(cfg: RunConfig, acc: dict) -> dict:
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
            "station_summary": station_summary,
            "profile_summary": _profile_table(cfg, acc.get("profile"))}


def add_summary(acc, payload: dict) -> dict:
    """Add one batch's summary counts to the running total (``None`` to start)."""
    if acc is None:
        return {k: np.array(v, copy=True) for k, v in payload.items()}
    for k, v in payload.items():
        acc[k] = acc[k] + v
    return acc
