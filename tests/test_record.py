"""GameRecord: a game replayed move by move equals the run's rows of that game."""
import numpy as np
import pandas as pd
import pytest

import ttrsim
from ttrsim.record import GameRecord, record_game


def middle_choice(observation, legal_actions):
    """A deterministic Python policy that depends on what it sees."""
    k = (observation["turn"] + sum(observation["hand"])) % len(legal_actions)
    return legal_actions[k]


def _ids_to_names(board, ids, kind):
    index = {int(i): k for k, i in enumerate(getattr(board, f"{kind}_id"))}
    from ttrsim.actions import ticket_text

    return [ticket_text(board, index[int(i)]) for i in ids]


def assert_record_matches_run(run, i):
    rec = run.game(i)
    board = run.board
    m = rec.moves
    g = run.games[run.games.game == i].sort_values("seat")
    fin = rec.final
    for col in ("total", "rank", "route_points", "ticket_points", "tickets_completed",
                "tickets_failed", "station_points", "longest_bonus"):
        want = g["score" if col == "total" else col].to_numpy()
        assert list(fin[col]) == list(want), col
    assert list(fin["policy"]) == list(g["policy"].astype(str))
    last_turn = rec.at("end").turn
    assert last_turn == int(g["turns"].iloc[0])
    # claims: a claim that is not left waiting on a tunnel's extra cards, or a paid tunnel
    done = m[((m.kind == "claim") & (m.extra.isna() | (m.outcome == "free")))
             | (m.kind == "tunnel_pay")]
    r = run.routes[run.routes.game == i]
    assert list(zip(done.seat, done.route, done.turn)) == \
        list(zip(r.seat.astype(int), r.route.astype(int), r.turn.astype(int)))
    t = run.tunnels[run.tunnels.game == i]
    tm = m[m.outcome != ""]
    assert list(zip(tm.seat, tm.route, tm.extra.astype(int), tm.outcome)) == \
        list(zip(t.seat.astype(int), t.route.astype(int), t.extra.astype(int),
                 t.outcome.astype(str)))
    assert [len(x.split(", ")) if x != "none" else 0 for x in tm.revealed] == \
        list(t.revealed.astype(int))
    s = run.stations[run.stations.game == i]
    sm = m[m.kind == "station"]
    assert list(zip(sm.seat, sm.turn)) == list(zip(s.seat.astype(int), s.turn.astype(int)))
    assert [board.cities[board.city_index[str(c)]] for c in s.city] == \
        [a.split(" on ")[1].split(" paying")[0] for a in sm.action]
    tk = run.tickets[(run.tickets.game == i) & run.tickets.kept]
    for seat in range(rec.n_players):
        kept = [n for x in m[(m.kind == "keep") & (m.seat == seat)].tickets for n in x.split("; ")]
        want = _ids_to_names(board, tk[tk.seat == seat].ticket, "ticket")
        assert sorted(kept) == sorted(want)
    # the run's own rows of the game, as replay gave them before
    for name in ("games", "routes", "tunnels", "stations", "tickets"):
        full = getattr(run, name)
        pd.testing.assert_frame_equal(full[full.game == i].reset_index(drop=True),
                                      getattr(rec, name))
    return rec


BOARDS = [("usa", n) for n in (2, 3, 4, 5)] + [("europe", n) for n in (2, 3, 4, 5)] + \
    [("newyork", n) for n in (2, 3, 4)]


@pytest.mark.parametrize("board, n", BOARDS)
def test_records_equal_the_run_on_every_board_and_player_count(board, n):
    specs = ["tickets", "random", middle_choice, "routes", "greedy"][:n]
    run = ttrsim.simulate(board, specs, games=12, seed=n, batch_size=5)
    for i in range(12):
        assert_record_matches_run(run, i)


def test_search_policy_records_equal_the_run():
    run = ttrsim.simulate("newyork", ["search:playouts=16", "tickets"], games=3, seed=2)
    for i in range(3):
        assert_record_matches_run(run, i)


def test_record_of_a_variant_board_and_a_saved_run(tmp_path):
    v = ttrsim.variant("europe", trains=35)
    run = ttrsim.simulate(v, ["tickets", "random"], games=6, seed=3, out=tmp_path / "run")
    loaded = ttrsim.load_run(tmp_path / "run")
    rec = assert_record_matches_run(loaded, 4)
    assert rec.moves.trains.min() >= 0 and rec.board.trains == 35


def test_replay_returns_a_record_and_positions_follow_the_moves():
    run = ttrsim.simulate("europe", ["tickets", "random", "greedy"], games=4, seed=9)
    rec = ttrsim.replay(run, 2)
    assert isinstance(rec, GameRecord)
    m = rec.moves
    assert list(m.decision) == list(range(len(m)))
    assert (np.diff(m.turn) >= 0).all()
    # at(turn) is the position before the first decision of that turn
    for turn in (0, 1, 5, int(m.turn.iloc[-1])):
        g = rec.at(turn)
        first = m[m.turn == turn].iloc[0]
        assert g.turn == turn and g.current_player == first.seat and g.phase == first.phase
        assert first.code in set(g.legal_action_codes().tolist())
    assert rec.at("end").is_over()
    g = rec.at(decision=10)
    g.apply(int(m.code[10]))
    assert g.state() == rec.at(decision=11).state()
    with pytest.raises(ValueError, match="outside"):
        rec.at(10_000)
    with pytest.raises(ValueError, match="game must be a whole number from 0 to 3"):
        run.game(4)


def test_moves_tell_cards_paid_and_drawn():
    rec = record_game("usa", ["tickets", "random"], seed=11)
    m = rec.moves
    for row in m[m.kind == "claim"].itertuples():
        n = int(rec.board.route_len[list(rec.board.route_id).index(row.route)])
        paid = sum(int(p.split()[0]) for p in row.paid.split(" + "))
        assert paid == n, row.action
    for row in m[m.kind.isin(["draw_faceup", "draw_blind"])].itertuples():
        assert row.drawn.startswith("1 ") and row.paid == ""
    assert (m.groupby("seat").trains.diff().fillna(0) <= 0).all()


def test_python_policy_of_a_saved_run_needs_the_policy_again(tmp_path):
    run = ttrsim.simulate("newyork", ["tickets", middle_choice], games=3, seed=1,
                          out=tmp_path / "r")
    loaded = ttrsim.load_run(tmp_path / "r")
    with pytest.raises(ValueError, match="policies="):
        loaded.game(1)
    a = loaded.game(1, policies=["tickets", middle_choice]).final
    b = run.game(1).final
    pd.testing.assert_frame_equal(a, b)


def test_a_replay_that_is_not_the_runs_game_is_refused(tmp_path):
    """A saved game played again must end as the run's did: a run whose expert model file
    changed since, or a run of another ttrsim version whose policies now play otherwise,
    replays other games from the same seeds. Checked against the saved scores; a summary
    run, which keeps none, warns from its manifest."""
    import json
    import shutil
    import warnings

    from ttrsim._expert import default_model_path

    model = tmp_path / "m.json"
    shutil.copy(default_model_path(), model)
    spec = [f"expert:model={model}", "tickets"]
    ttrsim.simulate("newyork", spec, games=6, seed=3, out=tmp_path / "r")
    ttrsim.simulate("newyork", spec, games=6, seed=3, out=tmp_path / "s", summary=True)
    run = ttrsim.load_run(tmp_path / "r")
    assert run.game(4).final.total.tolist() == run.games[run.games.game == 4].score.tolist()
    d = json.loads(model.read_text())
    d["turns"] = None                     # another model: no turn trees
    model.write_text(json.dumps(d))
    changed = 0
    for i in range(6):
        try:
            ttrsim.load_run(tmp_path / "r").game(i)
        except ValueError as exc:
            assert f"game {i} played again ends with scores" in str(exc)
            assert "its expert models were ['" in str(exc)
            changed += 1
    assert changed >= 3
    with pytest.warns(UserWarning, match="may not be the run's game: its expert models"):
        ttrsim.load_run(tmp_path / "s").game(1)
    # another version whose policies play as before: the scores agree, no complaint
    ttrsim.simulate("newyork", 2, games=3, seed=3, out=tmp_path / "t")
    with pytest.raises(ValueError, match="the policies do not play as the run's did"):
        ttrsim.load_run(tmp_path / "t").game(2, policies=["greedy", "greedy"])
    m = json.loads((tmp_path / "t" / "manifest.json").read_text())
    (tmp_path / "t" / "manifest.json").write_text(json.dumps(dict(m, ttrsim_version="0.0.1")))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ttrsim.load_run(tmp_path / "t").game(2).final.total.sum() > 0


@pytest.mark.parametrize("board, seed", [("europe", 1), ("europe", 2), ("usa", 3), ("newyork", 4)])
def test_move_columns_agree_with_the_rules(board, seed):
    rec = record_game(board, ["tickets", "random", "greedy"], seed=seed)
    b = rec.board
    m = rec.moves
    index = {int(i): k for k, i in enumerate(b.route_id)}
    count = lambda text: sum(int(p.split()[0]) for p in text.split(" + ")) if text else 0
    prev_trains = {}
    for row in m.itertuples():
        if row.kind == "claim":
            n = int(b.route_len[index[row.route]])
            assert count(row.paid) == n
            if row.outcome == "free" or pd.isna(row.extra):
                assert prev_trains.get(row.seat, b.trains) - row.trains == n
        if row.kind == "tunnel_pay":
            assert count(row.paid) == row.extra
        if row.kind == "tunnel_decline":
            assert count(row.drawn) == int(b.route_len[index[row.route]]) and row.paid == ""
        if row.revealed and row.revealed != "none":
            # the extra cards asked: revealed cards of the colour played, or wild
            claim = m[(m.seat == row.seat) & (m.kind == "claim") & (m.route == row.route)
                      & (m.decision <= row.decision)].iloc[-1]
            played = [p.split()[1] for p in claim.paid.split(" + ")]
            colour = next((c for c in played if c != "wild"), "wild")
            asked = sum(c == "wild" or (c == colour and colour != "wild")
                        for c in row.revealed.split(", "))
            assert asked == row.extra, (row.action, row.revealed)
        if row.kind == "station":
            assert count(row.paid) == b.stations - rec.positions()[row.decision + 1][
                "players"][row.seat]["stations"]
        if row.kind == "draw_tickets":
            nxt = m.iloc[row.decision + 1]
            assert nxt.kind == "keep" and nxt.seat == row.seat
            assert set(nxt.tickets.split("; ")) <= set(row.tickets.split("; "))
            assert len(row.tickets.split("; ")) == b.draw_tickets
        prev_trains[row.seat] = row.trains
    fin = rec.final
    last = m.groupby("seat").last()
    assert list(last.score) == list(fin.route_points)
    end = rec.positions()[-1]
    scores = rec.at("end").scores()
    for q, p in enumerate(end["players"]):
        done = {t["id"] for t in p["tickets"] if t["state"] == "done"}
        failed = {t["id"] for t in p["tickets"] if t["state"] == "failed"}
        assert done == {int(b.ticket_id[t]) for t in scores[q]["completed"]}
        assert len(done) == fin.tickets_completed[q] and len(failed) == fin.tickets_failed[q]
        assert p["total"] == fin.total[q]
