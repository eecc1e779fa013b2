"""The `search` policy and position analysis: legality, reproducibility, hidden
information, known best moves, saved positions and errors."""
import numpy as np
import pandas as pd
import pytest

import ttrsim
from helpers import midgame
from ttrsim import Game
from ttrsim._batch import game_seeds, play_batch
from ttrsim._policies import decide
from ttrsim._search import SearchPolicy
from ttrsim.cli import main as cli_main
from ttrsim.game import compile_board
from ttrsim.policies import make_policy, make_search_policy
from ttrsim.runner import simulate

TABLES = [("usa", n) for n in (2, 3, 4, 5)] + [("europe", n) for n in (2, 3, 4, 5)] \
    + [("newyork", n) for n in (2, 3, 4)]
# every candidate path: second draws and claims searched too, another rollout policy
FAST = "search:playouts=6,draws=1,claims=4"


# --- legality --------------------------------------------------------------------------

@pytest.mark.parametrize("board,n", TABLES)
def test_search_plays_only_legal_actions_on_every_board_and_table(board, n):
    cb = compile_board(board)
    specs = [FAST, "search:playouts=4,rollout=greedy"] + ["tickets"] * (n - 2)
    policies = [make_policy(s, cb.board) for s in specs]
    # check: every action is checked for legality and every invariant after every action
    out = play_batch(cb, n, policies, game_seeds(17 + n, 3), 0, True, True, check=True)
    assert not out["truncated"].any()
    decisions = policies[0].total_decisions + policies[1].total_decisions
    assert decisions > 90
    assert policies[0].total_playouts > 0


def test_thousands_of_search_decisions_are_legal():
    cb = compile_board("europe")
    total = 0
    for n in (2, 4):
        policies = [make_policy("search:playouts=2,draws=1,claims=8", cb.board) for _ in range(n)]
        play_batch(cb, n, policies, game_seeds(5, 4), 0, True, True, check=True)
        total += sum(p.total_decisions for p in policies)
    assert total > 1200


# --- reproducibility ------------------------------------------------------------------

def test_same_seed_same_games_whatever_the_workers():
    kw = dict(games=8, seed=4, batch_size=2)
    specs = ["search:playouts=8", "tickets"]
    a = simulate("newyork", specs, n_jobs=1, **kw)
    b = simulate("newyork", specs, n_jobs=2, **kw)
    for name in a.table_names:
        pd.testing.assert_frame_equal(getattr(a, name), getattr(b, name))
    c = simulate("newyork", specs, n_jobs=1, games=8, seed=5, batch_size=2)
    assert not a.games["score"].equals(c.games["score"])


def test_decision_is_a_function_of_the_seed():
    g = midgame("europe", 2, seed=8)
    p = make_policy("search:playouts=40", g.board)
    assert decide(p, g, seed=3) == decide(p, g, seed=3)
    rows, chosen = p.last_decision()
    assert sum(r[1] for r in rows) <= 40 + len(rows)


def test_without_ticket_draws_a_draw_is_only_the_rollout_policys_own_choice():
    seen = {0: 0, 1: 0}
    for flag in (1, 0):
        g = midgame("usa", 2, seed=6, turns=4)
        p = make_policy(f"search:playouts=8,ticket_draws={flag}", g.board)
        started = False
        while not g.is_over():
            act = decide(p, g, seed=g.turn, start=not started)
            started = True
            if g.phase == "turn":
                kind = {a.code: a.kind for a in g.legal_actions()}
                kinds = [kind[r[0]] for r in p.last_decision()[0]]
                seen[flag] += "draw_tickets" in kinds[1:]
                if not flag:
                    assert "draw_tickets" not in kinds[1:]
            g.apply(act)
    assert seen[1] > 20 and seen[0] == 0     # by default a ticket draw is a candidate


def test_phases_search_only_the_decisions_named():
    """Outside `phases` the search plays the rollout policy's own move without a playout;
    inside, it searches as before (phases=31, the default, is the whole search)."""
    for phases, searched in ((1, {"setup_tickets"}), (4, {"turn"}), (5, {"setup_tickets", "turn"})):
        g = Game("europe", 2, seed=3)
        p = make_policy(f"search:playouts=8,phases={phases}", g.board)
        started = set()
        seen = set()
        while not g.is_over() and g.turn < 30:
            q = g.current_player
            before = p.total_playouts
            act = decide(p, g, seed=g.turn, start=q not in started)
            started.add(q)
            if g.phase in searched and len(g.legal_actions()) > 1:
                assert p.total_playouts > before
                seen.add(g.phase)
            else:
                # the rollout policy's own move: no candidates, no playouts
                assert p.total_playouts == before and p.last_decision()[0] == []
            g.apply(act)
        assert seen == searched
    assert make_policy("search", None).params["phases"] == 31


def test_the_search_of_35_playouts_is_the_default_of_before(monkeypatch):
    """`search:playouts=35` plays the decisions the default made until 2026-12-02 (35
    playouts with expert rollouts), so that the figures measured then can be made again."""
    import ttrsim.policies as pol

    g = Game("usa", 2, seed=3)
    for _ in range(40):
        if g.phase != "turn" or len(g.legal_actions()) < 2:
            g.apply(decide(make_policy("tickets", g.board), g, seed=2))
            continue
        now = decide(make_policy("search:playouts=35", g.board), g, seed=5)
        with monkeypatch.context() as m:
            m.setattr(pol, "_EXPERT_BUDGET", pol._EXPERT_BUDGET_BEFORE)
            before = decide(make_policy("search", g.board), g, seed=5)
        assert now == before
        g.apply(decide(make_policy("tickets", g.board), g, seed=2))
    assert pol._EXPERT_BUDGET != pol._EXPERT_BUDGET_BEFORE == 35


def test_the_default_search_rolls_out_with_the_expert_at_its_own_budget():
    """Since ttrsim 0.2 the rollout is `expert`, since 2026-12-02 with 60 playouts (35
    before, about the CPU per decision of 200 `tickets` playouts); `playouts=0` (the
    default) follows the rollout. Its model is the one trained against `tickets` (`v4`),
    not the default `expert`'s."""
    assert make_policy("search", None).params["rollout"] == "expert:model=v4"
    assert make_policy("search", None).params["playouts"] == 60
    assert make_policy("search:playouts=0", None).params["playouts"] == 60
    assert make_policy("search:rollout=expert:reach=4", None).params["playouts"] == 60
    for rollout in ("tickets", "tickets:risk=0.2", "greedy", "routes"):
        p = make_policy(f"search:rollout={rollout}", None)
        assert (p.params["rollout"], p.params["playouts"]) == (rollout, 200)
    assert make_policy("search:rollout=tickets,playouts=7", None).params["playouts"] == 7
    assert make_policy("search:playouts=7", None).params["playouts"] == 7
    assert make_search_policy().params == make_policy("search", None).params
    # the default candidate is the rollout expert's move: it decides where nothing is searched
    g = Game("europe", 2, seed=4)
    for _ in range(30):
        p = make_policy("search:phases=1", g.board)
        if g.phase == "turn":
            assert decide(p, g, seed=1) == decide(make_policy("expert:model=v4", g.board), g, seed=1)
        g.apply(decide(make_policy("tickets", g.board), g, seed=2))


def test_the_benchmark_measures_the_default_search():
    """scripts/bench.py --search times the default search and a batch of playouts of its
    first candidate (more than the default 35 in one decision)."""
    from helpers import load_script

    r = load_script("bench").search_rate("newyork", games=1, positions=1)
    assert r["decisions_per_game"] > 0 and r["playouts_per_position"] == 200
    assert r["search_playout_us"] > 0 and np.isfinite(r["overhead"])


def test_search_strength_keeps_the_chunks_another_run_saved_meanwhile(tmp_path, monkeypatch):
    """Two runs of scripts/search_strength.py on other tables at once share the JSON file:
    each saves by reading the file again, so neither drops the other's chunks."""
    import json

    from helpers import load_script

    ss = load_script("search_strength")
    path = tmp_path / "s.json"
    foreign = dict(key="elsewhere", first=0, games=1)

    def fake(t, first, n, seed):
        if not path.exists() or "elsewhere" not in path.read_text():
            ss.save_chunks(path, [foreign])          # another run's chunk, written meanwhile
        return dict(key=ss.key_of(t), first=first, games=n, wins=0, seconds=0.0)

    monkeypatch.setattr(ss, "play_chunk", fake)
    ss.run(["two"], 2, 1, 0, "search", path, None)
    keys = [(c["key"], c["first"]) for c in json.loads(path.read_text())["chunks"]]
    assert ("elsewhere", 0) in keys and len(keys) == 1 + 3 * 2 == len(set(keys))
    ss.save_chunks(path, [foreign])                  # a chunk saved twice is kept once
    assert len(json.loads(path.read_text())["chunks"]) == 7


# --- hidden information ----------------------------------------------------------------


@pytest.mark.parametrize("lead", ["", ",rollout=tickets", ",rollout=tickets,lead=expert"])
@pytest.mark.parametrize("board,n,seed", [("europe", 2, 1), ("usa", 3, 2), ("newyork", 2, 3),
                                          ("europe", 4, 4)])
def test_search_decisions_ignore_hidden_information(board, n, seed, lead):
    """Changing only what the seat cannot see (other hands except cards known taken face
    up, deck order, other players' tickets, the ticket deck) leaves its decision alone,
    with the default expert rollouts, with tickets', and led by the expert."""
    changed = 0
    for turns in (3, 9, 16, 24):
        g = midgame(board, n, seed, turns)
        if g.is_over():
            continue
        seat = g.current_player
        p = make_policy("search:playouts=24,draws=1,claims=3" + lead, g.board)
        want = decide(p, g, seed=11)
        rows_a = p.last_decision()[0]
        for k in range(3):
            h = g.determinized(seat, 1000 + k)
            st_g, st_h = g.state(), h.state()
            changed += st_g["deck"] != st_h["deck"] or any(
                st_g["players"][q]["hand"] != st_h["players"][q]["hand"]
                or st_g["players"][q]["tickets"] != st_h["players"][q]["tickets"]
                for q in range(n) if q != seat)
            assert h.observation(seat) == g.observation(seat)
            assert decide(p, h, seed=11) == want
            assert p.last_decision()[0] == rows_a      # the very same statistics
    assert changed >= 8


def test_cards_taken_face_up_are_known_and_stay_in_hand_when_worlds_are_sampled():
    rng = np.random.default_rng(0)
    seen = 0
    for seed in range(6):
        g = Game("europe", 3, seed=seed)
        while not g.is_over() and g.turn < 60:
            acts = g.legal_actions()
            g.apply(acts[rng.integers(len(acts))])
            st = g.state()
            for q in range(3):
                known, hand = st["players"][q]["known"], st["players"][q]["hand"]
                assert all(0 <= k <= h for k, h in zip(known, hand))
            g._core.check()
        for seat in range(3):
            for k in range(3):
                h = g.determinized(seat, k).state()
                for q in range(3):
                    known = st["players"][q]["known"]
                    seen += sum(known)
                    assert all(x >= y for x, y in zip(h["players"][q]["hand"], known))
                    assert h["players"][q]["known"] == known
    assert seen > 0


@pytest.mark.parametrize("board,n", [("europe", 2), ("europe", 4), ("usa", 3), ("newyork", 2)])
def test_inferred_worlds_are_consistent_and_nearer_the_truth(board, n):
    """Dealing the others' tickets by their routes (infer) keeps every invariant of the
    state, depends only on what the seat sees, and puts more of their true tickets in
    their hands than a uniform deal once routes are on the board (measured on Europe 2p
    after turn 20: 10% of the true tickets uniformly, 54% with infer=3)."""
    from ttrsim._search import _sample_world

    share = {0.0: [], 3.0: []}
    late = (12, 18) if board == "newyork" else (30, 50)     # turns with routes on the board
    for seed in range(4):
        for turns in (6,) + late:
            g = midgame(board, n, seed, turns)
            if g.is_over():
                continue
            seat = g.current_player
            truth = g.state()["players"]
            h = g.determinized(seat, 77)            # the same view, other hidden cards
            for k in range(3):
                for infer in share:
                    code, tickets = _sample_world(g, seat, 100 + k, infer)
                    assert code == 0
                    assert _sample_world(h, seat, 100 + k, infer)[1] == tickets
                    for q in range(n):
                        if q == seat:
                            assert tickets[q] == sorted(truth[q]["tickets"])
                        elif turns in late and truth[q]["tickets"]:
                            hit = len(set(tickets[q]) & set(truth[q]["tickets"]))
                            share[infer].append(hit / len(truth[q]["tickets"]))
    assert len(share[3.0]) >= 10
    assert np.mean(share[3.0]) > np.mean(share[0.0]) + 0.1, {k: np.mean(v) for k, v in share.items()}


def test_face_up_draw_is_known_until_spent():
    g = Game.from_position("europe", 2, hands=[{"red": 2}, {}], faceup=["red"] * 3 + ["blue"] * 2,
                           current=0, seed=1)
    g.apply(g.action("draw_faceup", slot=0))
    g.apply(g.action("draw_faceup", slot=4))
    st = g.state()
    red, blue = g.board.colors.index("red"), g.board.colors.index("blue")
    assert st["players"][0]["known"][red] == 1 and st["players"][0]["known"][blue] == 1
    assert st["players"][0]["hand"][red] == 3
    h = g.determinized(1, 7).state()
    assert h["players"][0]["hand"][red] >= 1 and h["players"][0]["hand"][blue] >= 1
    g.apply(g.action("draw_blind"))
    g.apply(g.action("draw_blind"))
    # seat 0 pays two red cards: the known red card counts as spent
    route = next(r for r in range(g.board.n_routes) if g.board.route_len[r] == 2
                 and g.board.route_color[r] == red and not g.board.route_tunnel[r])
    g.apply(g.action("claim", route=route, color="red"))
    assert g.state()["players"][0]["known"][red] == 0
    assert g.state()["players"][0]["known"][blue] == 1


# --- analyse ---------------------------------------------------------------------------

def last_turn_position():
    """Europe, 2 players. Seat 1 claims Barcelona - Madrid and starts the final round:
    seat 0 has this one turn. It holds Warszawa - Smolensk (6) and owns Kyiv - Warszawa;
    only claiming Kyiv - Smolensk with its 3 red cards completes the ticket, takes the
    longest trail and wins (39 to 29); any other move loses."""
    g = Game.from_position("europe", 2, hands=[{"red": 3}, {"yellow": 2}],
                           tickets=[[36], []], routes=[[66], [81]], trains=[3, 4],
                           current=1, seed=5)
    g.apply(g.action("claim", route=11, color="yellow"))
    assert g.state()["last_round"] and g.current_player == 0
    return g


def test_analyse_finds_the_only_winning_claim():
    g = last_turn_position()
    win = g.action("claim", route=65, color="red").code
    df = ttrsim.analyse(g, playouts=30, seed=2)
    assert list(df.columns[:8]) == ["action", "code", "playouts", "win_rate", "win_low",
                                    "win_high", "mean_margin", "utility"]
    assert df.loc[0, "code"] == win and df.loc[0, "best"] and df["best"].sum() == 1
    assert df.loc[0, "win_rate"] == 1.0 and (df.loc[1:, "win_rate"] == 0).all()
    assert df.loc[0, "win_low"] > 0.85 and (df.loc[1:, "win_high"] < 0.15).all()
    assert (df["playouts"] == 30).all() and len(df) > 5
    assert "Kyiv - Smolensk" in df.loc[0, "action"]
    assert df.loc[0, "mean_margin"] == 10
    # the policy plays it too, and the game is untouched
    before = g.state()
    assert decide(make_policy("search:playouts=40", g.board), g, seed=1) == win
    assert g.state() == before


def test_analyse_of_a_saved_position_from_the_command_line(tmp_path, capsys):
    g = last_turn_position()
    path = tmp_path / "pos.json"
    g.save(path)
    h = Game.load(path)
    assert h.state() == g.state() and h.board.name == g.board.name
    assert cli_main(["analyse", str(path), "--playouts", "10"]) == 0
    out = capsys.readouterr().out
    # the position in words, a blank line, then the table: its header and the best row
    first = out.partition("\n\n")[2].splitlines()[1]
    assert "Kyiv - Smolensk" in first and "True" in first


# --- errors ----------------------------------------------------------------------------

def test_clear_errors_for_bad_parameters_and_positions(tmp_path, capsys):
    with pytest.raises(ValueError, match="unknown rollout policy 'nope'"):
        make_policy("search:rollout=nope", None)
    with pytest.raises(ValueError, match="unknown rollout policy 'search'"):
        make_search_policy(rollout="search")
    with pytest.raises(ValueError, match="playouts must be a positive"):
        make_policy("search:playouts=-1", None)
    with pytest.raises(ValueError, match="playouts must be a positive"):
        ttrsim.analyse(last_turn_position(), playouts=0)
    with pytest.raises(ValueError, match="utility"):
        make_policy("search:utility=2", None)
    with pytest.raises(ValueError, match="infer must be within"):
        make_policy("search:infer=-1", None)
    with pytest.raises(ValueError, match="ticket_draws must be 0 or 1"):
        make_policy("search:ticket_draws=2", None)
    with pytest.raises(ValueError, match="draws must be 0"):
        make_policy("search:draws=3", None)
    for bad in (0, 32):
        with pytest.raises(ValueError, match="phases must be a sum of 1"):
            make_policy(f"search:phases={bad}", None)
    with pytest.raises(ValueError, match="phases needs a whole number, got '1.5'"):
        make_policy("search:phases=1.5", None)
    g = Game("newyork", 2, seed=1)
    while not g.is_over():
        g.apply(g.legal_actions()[0])
    with pytest.raises(ValueError, match="game is over"):
        ttrsim.analyse(g)
    with pytest.raises(ValueError, match="is not to move"):
        ttrsim.analyse(last_turn_position(), seat=1)
    bad = tmp_path / "bad.json"
    bad.write_text('{"hello": 1}')
    assert cli_main(["analyse", str(bad)]) == 2
    assert "not a saved position" in capsys.readouterr().err
    assert cli_main(["analyse", str(tmp_path / "missing.json")]) == 2


def test_search_is_listed_and_pickles():
    import pickle

    assert "search" in ttrsim.policies.REGISTRY
    p = make_policy("search:playouts=50,rollout=greedy", None)
    q = pickle.loads(pickle.dumps(p))
    assert q.params == p.params and q.spec == p.spec == "search:playouts=50,rollout=greedy"


# --- the budget --------------------------------------------------------------------------

@pytest.mark.parametrize("playouts", [7, 13, 40, 41, 97])
def test_the_search_never_spends_more_than_its_budget(playouts):
    """Over hundreds of decisions per budget (budgets that do not divide evenly among the
    candidates, fewer playouts than candidates, the default kept in the race), in
    sequential halving and UCB1: never more than `playouts` playouts in one decision."""
    cb = compile_board("newyork")
    games = max(2, 700 // playouts)
    for spec in (f"search:playouts={playouts},draws=1,claims=12",
                 f"search:playouts={playouts},c=0.5,claims=6"):
        pols = [make_policy(spec, cb.board), make_policy("tickets", cb.board)]
        play_batch(cb, 2, pols, game_seeds(playouts, games), 0, True, True)
        p = pols[0]
        assert p.total_decisions > 15 * games
        assert 0 < p.max_playouts <= playouts, spec
        # the budget is used, not merely bounded: most of it at the decisions searched
        assert p.max_playouts >= 0.75 * playouts, spec


def test_each_decision_s_playouts_stay_within_the_budget():
    """The same, counted from each decision's own statistics (not the policy's counters)."""
    rng = np.random.default_rng(3)
    checked = 0
    for i in range(60):
        g = Game("europe", 3, seed=int(rng.integers(1 << 30)))
        for _ in range(int(rng.integers(0, 60))):
            if g.is_over():
                break
            g.apply(g.legal_actions()[int(rng.integers(len(g.legal_actions())))])
        if g.is_over():
            continue
        for budget, extra in ((7, "claims=12"), (13, "c=0.3,claims=12"), (41, "draws=1,claims=3")):
            p = make_policy(f"search:playouts={budget},{extra}", g.board)
            decide(p, g, seed=i)
            rows, _ = p.last_decision()
            assert sum(r[1] for r in rows) <= budget
            assert p.max_playouts == sum(r[1] for r in rows)
            checked += 1
    assert checked > 100


# --- analyse ranks every choice where a phase has few ------------------------------------

FIVE = ["red", "blue", "green", "yellow", "black"]


def analysed_codes(g, playouts=4, **kw):
    df = ttrsim.analyse(g, playouts=playouts, seed=1, **kw)
    assert (df["playouts"] == playouts).all() and df["best"].sum() == 1
    return df, set(df["code"])


def test_analyse_ranks_every_second_draw():
    g = Game.from_position("usa", 2, hands=[{"red": 1}, {}], faceup=FIVE, current=0, seed=3)
    g.apply(g.action("draw_blind"))
    assert g.phase == "second_draw"
    df, codes = analysed_codes(g)
    assert len(df) == 6                                     # five face-up cards + blind
    assert codes == {a.code for a in g.legal_actions()}


def test_analyse_ranks_one_face_up_card_per_colour():
    faceup = ["red", "red", "blue", "blue", "green"]
    g = Game.from_position("usa", 2, faceup=faceup, current=0, seed=3)
    g.apply(g.action("draw_blind"))
    slot_of = {g.action("draw_faceup", slot=k).code: k for k in range(5)}
    df, codes = analysed_codes(g)
    colours = [faceup[slot_of[c]] for c in codes if c in slot_of]
    assert sorted(colours) == ["blue", "green", "red"] and len(df) == 4


def test_analyse_considers_every_face_up_colour_on_a_first_draw():
    g = Game.from_position("usa", 2, faceup=FIVE, current=0, seed=3)
    df, codes = analysed_codes(g, claims=0)
    for slot in range(5):
        assert g.action("draw_faceup", slot=slot).code in codes
    assert g.action("draw_blind").code in codes


def test_analyse_ranks_every_keep_set():
    g = Game("usa", 2, seed=4)
    while g.phase != "turn":
        g.apply(g.legal_actions()[0])
    g.apply(g.action("draw_tickets"))
    assert g.phase == "keep_tickets"
    df, codes = analysed_codes(g)
    legal = {a.code for a in g.legal_actions()}
    assert codes == legal and len(legal) == 7            # three tickets offered, keep 1-3


def tunnel_position():
    """Europe: seat 0 claims a 2-long grey tunnel with red cards; the cards revealed ask
    for extra cards it can pay in several ways, or decline."""
    g = Game.from_position("europe", 2, hands=[{"red": 4, "wild": 2}, {}],
                           deck_top=["red", "wild", "blue"], current=0, seed=2)
    b = g.board
    route = next(r for r in range(b.n_routes) if b.route_tunnel[r] and b.route_len[r] == 2
                 and b.route_ferry[r] == 0)
    colour = "red" if b.route_color[route] in (b.colors.index("red"), len(b.colors)) \
        else b.colors[b.route_color[route]]
    hand = {"red": 4, "wild": 2} if colour == "red" else {colour: 4, "wild": 2}
    g = Game.from_position("europe", 2, hands=[hand, {}], deck_top=[colour, "wild", "blue"],
                           current=0, seed=2)
    g.apply(g.action("claim", route=route, color=colour))
    assert g.phase == "tunnel"
    return g


def test_analyse_ranks_every_tunnel_payment_and_declining():
    g = tunnel_position()
    legal = {a.code for a in g.legal_actions()}
    assert len(legal) >= 3                                  # declining + two payments or more
    df, codes = analysed_codes(g)
    assert codes == legal
    # the search policy itself still compares declining with the cheapest payment only
    p = make_policy("search:playouts=6", g.board)
    decide(p, g, seed=1)
    assert p.last_decision()[0].__len__() == 2


def test_the_search_policy_s_second_draws_are_unchanged_by_analyse():
    g = Game.from_position("usa", 2, faceup=FIVE, current=0, seed=3)
    g.apply(g.action("draw_blind"))
    p = make_policy("search:playouts=6", g.board)                     # draws=0: no search
    decide(p, g, seed=1)
    assert len(p.last_decision()[0]) == 1


# --- progress and Ctrl-C -----------------------------------------------------------------

def test_analyse_reports_progress_up_to_the_total():
    from ttrsim._search import analyse_position

    g = last_turn_position()
    calls = []
    p = make_search_policy(playouts=40, claims=12)
    p.uniform = True
    rows, _ = analyse_position(p, g, 1, lambda done, total: calls.append((done, total)))
    total = sum(r[1] for r in rows)
    assert calls and calls[-1] == (total, total) and total == 40 * len(rows)
    assert all(a <= b for (a, _), (b, _) in zip(calls, calls[1:]))
    assert ttrsim.analyse(g, playouts=5, progress=True)["playouts"].eq(5).all()


def test_an_exception_in_the_progress_callback_stops_the_analysis():
    from ttrsim._search import analyse_position

    g = Game("europe", 3, seed=9)
    while g.phase != "turn":
        g.apply(g.legal_actions()[0])
    seen = []

    def stop(done, total):
        seen.append(done)
        raise KeyboardInterrupt

    p = make_search_policy(playouts=3000, claims=12)
    p.uniform = True
    with pytest.raises(KeyboardInterrupt):
        analyse_position(p, g, 1, stop)
    assert len(seen) == 1 and seen[0] < p.n_cand * 3000        # stopped at the first call

    def bad(done, total):
        raise ValueError("enough")

    with pytest.raises(ValueError, match="enough"):
        analyse_position(p, g, 1, bad)
    with pytest.raises(TypeError, match="progress must be a callable"):
        analyse_position(p, g, 1, 5)


def test_ctrl_c_interrupts_an_analysis():
    import os
    import signal
    import threading

    from ttrsim._search import analyse_position

    g = Game("europe", 3, seed=9)
    while g.phase != "turn":
        g.apply(g.legal_actions()[0])
    p = make_search_policy(playouts=3000, claims=12)
    p.uniform = True
    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            analyse_position(p, g, 1)
    finally:
        timer.cancel()
    # it stopped inside the search, not after it: far from every playout done
    assert p.total_playouts < p.n_cand * 3000


# --- the search is handed its policies -------------------------------------------------

def test_a_newly_registered_built_in_can_be_the_rollout(monkeypatch):
    """The compiled search takes whatever the registry builds: a policy registered under
    a new name plays the playouts without any change to the search."""
    from ttrsim._fuzz import HoardPolicy
    from ttrsim.policies import REGISTRY, PolicyInfo

    monkeypatch.setitem(REGISTRY, "hoard", PolicyInfo(HoardPolicy, "takes every card it can"))
    cb = compile_board("newyork")
    p = make_policy("search:playouts=4,rollout=hoard", cb.board)
    assert all(type(r) is HoardPolicy for r in p.rollouts) and len(set(map(id, p.rollouts))) == 6
    assert p.params["rollout"] == "hoard" and p.spec == "search:playouts=4,rollout=hoard"
    out = play_batch(cb, 2, [p, make_policy("tickets", cb.board)], game_seeds(8, 2), 0, True,
                     True, check=True)
    assert not out["truncated"].any() and p.total_playouts > 0


def test_the_search_refuses_policies_it_cannot_use():
    from ttrsim._policies import TicketsPolicy

    tickets = lambda: [TicketsPolicy() for _ in range(6)]
    with pytest.raises(ValueError, match="6 distinct instances"):
        SearchPolicy(tickets()[:5])
    t = TicketsPolicy()
    with pytest.raises(ValueError, match="6 distinct instances"):
        SearchPolicy([t] * 6)
    with pytest.raises(ValueError, match="cannot be search itself"):
        SearchPolicy(tickets()[:5] + [make_search_policy()])
    with pytest.raises(TypeError, match="compiled ttrsim policies"):
        SearchPolicy(tickets(), [lambda obs, legal: legal[0]])
    with pytest.raises(ValueError, match="at most 3 proposers"):
        SearchPolicy(tickets(), [TicketsPolicy() for _ in range(4)])
    p = SearchPolicy(tickets(), playouts=5)
    assert p.rollout == "TicketsPolicy" and p.proposers == ()
