"""The core's batch arrays as the tables of docs/tables.md.

``batch_tables`` turns one batch of a per-event run into its five DataFrames (named
columns, categorical board, policy, colour, outcome and city); ``batch_summary`` turns one
batch of a summary-mode run into count arrays that add up over batches
(``add_summary``), and ``summary_tables`` turns the total into the five summary tables.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ttrsim._batch import SCORE_COLS, TURN_BIN_WIDTH
from ttrsim.actions import card_name
from ttrsim.batches import RunConfig

__all__ = ["EVENT_TABLES", "SUMMARY_TABLES", "TUNNEL_OUTCOMES", "SEAT_SUM_COLS", "categories",
           "batch_tables", "batch_summary", "add_summary", "summary_tables"]

EVENT_TABLES = ("games", "tickets", "routes", "tunnels", "stations")
SUMMARY_TABLES = ("seat_summary", "ticket_summary", "route_summary", "tunnel_summary",
                  "station_summary")
TUNNEL_OUTCOMES = ("free", "paid", "declined")
SEAT_SUM_COLS = ("games", "wins", "score_sum", "score_sq_sum", "route_points_sum",
                 "ticket_points_sum", "longest_bonus_sum", "station_points_sum",
                 "attraction_points_sum", "tickets_kept_sum", "tickets_completed_sum",
                 "turns_sum", "all_passed", "turns_sq_sum", "diff_sum", "diff_sq_sum",
                 "globetrotter_sum")
_SC = {name: i for i, name in enumerate(SCORE_COLS)}


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


def batch_tables(cfg: RunConfig, res: dict, first: int) -> dict:
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
    return {"seat": seat_sums.reshape(n, n, -1), "tickets": res["ticket_counts"],
            "routes": res["route_counts"], "tunnels": res["tunnel_counts"],
            "stations": res["station_counts"], "truncated": int(res["truncated"].sum())}


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
            "station_summary": station_summary}


def add_summary(acc, payload: dict) -> dict:
    """Add one batch's summary counts to the running total (``None`` to start)."""
    if acc is None:
        return {k: np.array(v, copy=True) for k, v in payload.items()}
    for k, v in payload.items():
        acc[k] = acc[k] + v
    return acc
