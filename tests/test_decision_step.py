"""The compiled core's shared pieces: one decision step (`play_step`, _policy.pxd) reported
the same way by every loop that plays games, one game path for batches and recorded
games, one turn limit, and one listing of a turn's candidate moves for the search and
`expert`."""
import inspect
import re
from pathlib import Path

import numpy as np
import pytest

from helpers import midgame
from ttrsim import Game, PolicyError
from ttrsim._batch import DEFAULT_MAX_TURNS, game_seeds, play_batch, play_recorded
from ttrsim._env import VectorEnvCore
from ttrsim._expert import ExpertPolicy
from ttrsim._fuzz import ILLEGAL_CODE, VIOLATION_MESSAGES, FaultyPolicy, fuzz_batch
from ttrsim._planning import _turn_candidates
from ttrsim._search import analyse_position
from ttrsim.game import compile_board
from ttrsim.policies import make_policy

ROOT = Path(__file__).resolve().parents[1]


def _message(fn):
    with pytest.raises(PolicyError) as info:
        fn()
    return str(info.value)


def _two(cb, faulty):
    return [faulty, make_policy("tickets", cb.board)]


@pytest.mark.parametrize("fail", [False, True])
@pytest.mark.parametrize("after", [0, 9])
def test_a_faulty_policy_is_reported_the_same_way_by_every_loop(fail, after):
    """The batch loop (with and without `check`), the recorder, the environment's other
    seats and the fuzzer all see the same failure at the same decision and say the same
    thing; a recorded game fails where its batch game fails, word for word."""
    cb = compile_board("usa")
    seed = game_seeds(3, 1)
    tail = (f"chose action {ILLEGAL_CODE}, which is not legal" if not fail
            else f"failed: RuntimeError('faulty: gives up at decision {after + 1}')")

    def faulty():
        return FaultyPolicy(after, fail)

    batch = _message(lambda: play_batch(cb, 2, _two(cb, faulty()), seed))
    checked = _message(lambda: play_batch(cb, 2, _two(cb, faulty()), seed, check=True))
    recorded = _message(lambda: play_recorded(cb, 2, _two(cb, faulty()), seed[0]))
    assert batch == checked == recorded
    assert re.fullmatch(r"policy 'faulty' \(seat 0, game 0, turn \d+\) " + re.escape(tail), batch)

    core = VectorEnvCore(cb, 2, 1, [faulty()], 0, "win", 100, True)
    core.seed(np.array([5], dtype=np.uint64), np.array([6], dtype=np.uint64))
    core.reset()                     # the agent (seat 0) acts first

    def play_on():
        for _ in range(200):
            core.step(core.sample_actions())

    env = _message(play_on)
    assert re.fullmatch(r"opponent policy 'faulty' \(seat 1, env 0, turn \d+\) "
                        + re.escape(tail), env)

    out = fuzz_batch(cb, 2, _two(cb, faulty()), game_seeds(3, 4))
    assert out["violations"] == 4
    assert out["by_code"] == {VIOLATION_MESSAGES[16]: 4}    # V_ILLEGAL: chose illegal or failed


def test_a_faulty_rollout_ends_a_playout_and_the_search_still_plays_legally():
    """In the search's playouts a failed rollout decision ends the playout, which is
    scored as it stands; the search's own actions stay legal (checked by the engine)."""
    from ttrsim._search import SearchPolicy

    cb = compile_board("newyork")
    for fail in (False, True):
        # the playouts' instances break the rules; the real game's lead is tickets
        rollouts = [FaultyPolicy(3, fail) for _ in range(5)] + [make_policy("tickets", cb.board)]
        search = SearchPolicy(rollouts, playouts=6, rollout="faulty", lead="tickets")
        out = play_batch(cb, 2, [search, make_policy("tickets", cb.board)], game_seeds(1, 2),
                         check=True)
        assert not out["truncated"].any() and search.total_playouts > 0


def test_the_turn_limit_is_defined_once():
    """10000 appears once, as TURN_LIMIT in _structs.pxd; every default in Python and in
    the compiled loops is that constant."""
    assert DEFAULT_MAX_TURNS == 10000
    from ttrsim._defaults import CORE_TURN_LIMIT     # the help's copy, read without the core

    assert CORE_TURN_LIMIT == DEFAULT_MAX_TURNS
    defs = re.findall(r"TURN_LIMIT\s*=\s*(\d+)", (ROOT / "ext/ttrsim/_structs.pxd").read_text())
    assert defs == ["10000"]
    literal = re.compile(r"\b(max_)?turns?\b[^\n]*\b10_?000\b|\b10_?000\b[^\n]*\bturns?\b")
    sources = [*(ROOT / "ttrsim").rglob("*.py"), *(ROOT / "ext/ttrsim").glob("*.p*")]
    bad = [f"{p.relative_to(ROOT)}: {line.strip()}" for p in sources
           for line in p.read_text().splitlines() if literal.search(line)]
    assert not bad, "a turn limit written out instead of DEFAULT_MAX_TURNS:\n" + "\n".join(bad)

    import ttrsim
    from ttrsim._fuzz import fuzz_batch as fb
    from ttrsim.env import VectorEnv
    from ttrsim.record import record_game

    for fn in (play_batch, play_recorded, fb, ttrsim.simulate, record_game, VectorEnv):
        default = inspect.signature(fn).parameters["max_turns"].default
        assert default == DEFAULT_MAX_TURNS, fn


def test_the_turn_limit_truncates_batch_and_recorded_games_alike():
    cb = compile_board("europe")
    seeds = game_seeds(8, 3)
    pols = [make_policy("tickets", cb.board) for _ in range(3)]
    out = play_batch(cb, 3, pols, seeds, max_turns=12)
    assert out["truncated"].all() and (out["turns"] == 12).all()
    for g in range(3):
        pols = [make_policy("tickets", cb.board) for _ in range(3)]
        rec = play_recorded(cb, 3, pols, seeds[g], game=g, max_turns=12)
        assert rec["truncated"]


def _turn_positions():
    for board in ("usa", "europe", "newyork"):
        for n in (2, 3):
            for turns in (4, 17, 30, 45):
                g = midgame(board, n, 11 + n, turns)
                if not g.is_over() and g.phase == "turn":
                    yield g


def test_expert_lists_a_turn_with_the_shared_listing():
    """`expert`'s turn candidates are its two proposals (tickets' move, the claim worth
    most now) and then turn_candidates: a blind and a ticket draw, and with `wide` also
    the 4 longest claims and each colour's leftmost face-up slot."""
    seen = 0
    for g in _turn_positions():
        for wide, longest, faceup in ((1, 4, 1), (0, 0, 0)):
            ex = ExpertPolicy(wide=wide)
            ex.start(g, g.current_player, 0)
            codes, _ = ex.candidates(g)
            codes = codes.tolist()
            assert codes == _turn_candidates(g, codes[:2], longest, True, faceup)
        seen += 1
    assert seen >= 12


def test_the_search_lists_a_turn_with_the_shared_listing():
    """The search's turn candidates (analysing) are its default and proposers' moves and
    then turn_candidates (`claims` longest claims) and the face-up colours no candidate
    draws yet."""
    from ttrsim.policies import make_search_policy

    seen = 0
    for g in _turn_positions():
        policy = make_search_policy(playouts=1, claims=3)
        policy.uniform = True
        rows, _ = analyse_position(policy, g, 0)
        codes = [r[0] for r in rows]
        first = 1 + len(policy.proposers)
        assert codes == _turn_candidates(g, codes[:first], 3, True, 2)
        seen += 1
    assert seen >= 12


def test_where_the_search_and_expert_listings_differ():
    """The one difference, on purpose: analysing, the search takes no second face-up
    card of a colour a candidate draws already (the same move for its ranking);
    `expert` takes each colour's leftmost slot whatever came before (its models were
    trained so)."""
    g = Game.from_position("usa", 2, faceup=["red", "blue", "red", "green", "black"],
                           hands=[{"red": 1}, {}], seed=4)
    slot2 = next(a.code for a in g.legal_actions() if a.kind == "draw_faceup" and a.slot == 2)
    slot0 = next(a.code for a in g.legal_actions() if a.kind == "draw_faceup" and a.slot == 0)
    expert = _turn_candidates(g, [slot2], 0, True, 1)
    search = _turn_candidates(g, [slot2], 0, True, 2)
    assert slot0 in expert and slot0 not in search
    assert set(expert) - set(search) == {slot0}
