"""The search's levers toward the whole ticket game: `rare` (more of the budget at ticket
choices and before the seat's first claim) and `foes` (another policy playing the other
seats in the playouts): legal play, hidden information, the budget, errors."""
import pickle

import pytest

from helpers import midgame
from ttrsim import Game
from ttrsim._batch import game_seeds, play_batch
from ttrsim._policies import TicketsPolicy, decide
from ttrsim._search import SearchPolicy
from ttrsim.game import compile_board
from ttrsim.policies import check_policy, make_policy


@pytest.mark.parametrize("board,n", [("usa-mega", 4), ("europe", 3), ("newyork", 2),
                                     ("usa-1910", 2)])
def test_levers_play_only_legal_actions(board, n):
    cb = compile_board(board)
    specs = ["search:playouts=4,rare=3,foes=tickets", "search:playouts=3,rare=2,claims=2,draws=1,"
             "rollout=greedy,foes=rush"] + ["tickets"] * (n - 2)
    pols = [make_policy(s, cb.board) for s in specs]
    out = play_batch(cb, n, pols, game_seeds(3 + n, 2), 0, True, True, check=True)
    assert not out["truncated"].any()
    assert pols[0].total_playouts > 0 and pols[1].total_playouts > 0


@pytest.mark.parametrize("spec", ["rare=3", "foes=tickets", "rare=2,foes=greedy,rollout=tickets"])
@pytest.mark.parametrize("board,n,seed", [("europe", 3, 1), ("usa-mega", 4, 2)])
def test_levers_ignore_hidden_information(board, n, seed, spec):
    """Worlds are sampled from what the seat may see whoever plays the other seats, and
    the budget depends only on public facts (the phase, the seat's own routes)."""
    changed = 0
    for turns in (0, 5, 14):
        g = midgame(board, n, seed, turns)
        if g.is_over():
            continue
        seat = g.current_player
        p = make_policy(f"search:playouts=12,{spec}", g.board)
        want = decide(p, g, seed=5)
        rows = p.last_decision()[0]
        for k in range(2):
            h = g.determinized(seat, 500 + k)
            st_g, st_h = g.state(), h.state()
            changed += st_g["deck"] != st_h["deck"] or any(
                st_g["players"][q]["tickets"] != st_h["players"][q]["tickets"]
                for q in range(n) if q != seat)
            assert h.observation(seat) == g.observation(seat)
            assert decide(p, h, seed=5) == want
            assert p.last_decision()[0] == rows
    assert changed >= 4


def _spent(p):
    return sum(r[1] for r in p.last_decision()[0])


def test_rare_multiplies_the_budget_only_at_ticket_choices_and_before_the_first_claim():
    g = Game("usa", 3, seed=4)                      # the initial ticket choice
    assert g.phase == "setup_tickets"
    p = make_policy("search:playouts=10,rare=4", g.board)
    decide(p, g, seed=1)
    assert 10 < _spent(p) <= 40
    plain = make_policy("search:playouts=10", g.board)
    decide(plain, g, seed=1)
    assert _spent(plain) <= 10
    seen_before = seen_after = 0
    for seed in range(6):
        g = midgame("usa", 2, seed, 30)
        while not g.is_over() and (g.phase != "turn"):
            g.apply(decide(make_policy("tickets", g.board), g, seed=seed))
        if g.is_over():
            continue
        mine = g.state()["players"][g.current_player]["n_routes"]
        decide(p, g, seed=seed)
        if len(p.last_decision()[0]) < 2:
            continue
        if mine == 0:
            seen_before += 1
            assert 10 < _spent(p) <= 40
        else:
            seen_after += 1
            assert _spent(p) <= 10
            assert p.max_playouts <= 40
    assert seen_after >= 2


def test_rare_budget_before_the_first_claim():
    g = Game("usa", 2, seed=1)                      # the deal, then the first turn
    while g.phase != "turn":
        g.apply(decide(make_policy("tickets", g.board), g, seed=1))
    assert g.state()["players"][g.current_player]["n_routes"] == 0
    p = make_policy("search:playouts=10,rare=3", g.board)
    decide(p, g, seed=2)
    assert len(p.last_decision()[0]) >= 2
    assert 10 < _spent(p) <= 30


def test_foes_that_are_the_rollout_policy_change_nothing_and_others_do():
    """The same policy named as foes plays the same playouts (the seats are seeded
    alike); another policy in the other seats gives other playouts, while the seat's own
    turns stay the rollout policy's."""
    g = midgame("europe", 3, 7, 12)
    base = make_policy("search:playouts=20,rollout=tickets", g.board)
    same = make_policy("search:playouts=20,rollout=tickets,foes=tickets", g.board)
    other = make_policy("search:playouts=20,rollout=tickets,foes=rush", g.board)
    a, b, c = (decide(p, g, seed=3) for p in (base, same, other))
    assert a == b and base.last_decision() == same.last_decision()
    assert same._playout_values() != other._playout_values()
    assert other.params["foes"] == "rush" and base.params["foes"] == ""


def test_levers_pickle_and_bad_values_are_refused():
    p = make_policy("search:playouts=9,rare=2,foes=greedy", None)
    q = pickle.loads(pickle.dumps(p))
    assert q.params == p.params and q.params["rare"] == 2 and q.params["foes"] == "greedy"
    assert len(q.foe_policies) == 5 and q.spec == p.spec
    for bad, msg in (("rare=0", "rare must be a whole number from 1 to 16"),
                     ("rare=17", "rare must be"), ("rare=1.5", "rare needs a whole number"),
                     ("foes=search", "unknown foes policy"), ("foes=nosuch", "unknown foes policy"),
                     ("foes=random", "foes cannot be combined")):
        with pytest.raises(ValueError, match=msg):
            make_policy(f"search:{bad}", None)
    with pytest.raises(ValueError, match="unknown foes policy"):
        check_policy("search:foes=nosuch")
    tk = lambda k: [TicketsPolicy() for _ in range(k)]
    with pytest.raises(ValueError, match="foes must be 5 distinct"):
        SearchPolicy(tk(6), foes=tk(4))


# --- the measuring scripts --------------------------------------------------------------

def test_diagnosis_script_records_the_search_and_the_shadow_expert():
    from helpers import load_script

    diag = load_script("search_diagnosis")
    rows = diag.play("newyork", 2, 2, 5, 4, "search:playouts=6", "expert")
    assert rows and all(r["turn"] < 8 and r["round"] == r["turn"] // 2 for r in rows)
    for r in rows:
        g = Game("newyork", 2, seed=5 + r["game"])
        assert r["seat"] == r["game"] % 2
        assert len(r["expert_cands"]) == len(r["expert_scores"]) >= 1
        assert r["search_kind"] in ("claim", "card", "tickets", "station")
        assert str(r["search"]) in r["search_vals"] or not r["search_vals"]
        # the shadow expert's move is one of its candidates
        assert r["expert"] in r["expert_cands"]
    text = diag.summary(rows, 2)
    assert "| 0-2 |" in text and "games: 2" in text


def test_levers_script_measures_a_row_and_resumes(tmp_path):
    from helpers import load_script

    lv = load_script("search_levers")
    out = tmp_path / "levers.json"
    argv = ["--board", "newyork", "--games", "4", "--cost-games", "1", "--spec",
            "search:playouts=4,rare=2", "--against", "search:playouts=4", "--json", str(out)]
    assert lv.main(argv) == 0
    import json
    rows = json.loads(out.read_text())
    assert len(rows) == 1 and rows[0]["spec"] == "search:playouts=4,rare=2"
    assert 0 <= rows[0]["low"] <= rows[0]["win_share"] <= rows[0]["high"] <= 1
    assert rows[0]["cpu_per_decision"] > 0
    assert lv.main(argv) == 0 and len(json.loads(out.read_text())) == 1   # not played again


def test_today_s_search_is_foes_named_as_its_rollout():
    """docs/search.md names `search:foes=expert:model=v4` as playing today's search."""
    g = midgame("usa", 3, 4, 10)
    a, b = make_policy("search", g.board), make_policy("search:foes=expert:model=v4", g.board)
    assert decide(a, g, seed=2) == decide(b, g, seed=2)
    assert a.last_decision() == b.last_decision()
