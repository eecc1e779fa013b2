"""A small run of scripts/fuzz.py: random and mixed-policy games on every board and
player count, the core's invariant check after every action, no violation; the state
file makes a run resumable and incremental."""
from __future__ import annotations

import json

import pytest

from ttrsim import maps
from ttrsim._batch import game_seeds
from ttrsim._fuzz import EDGE_CASES, VIOLATION_MESSAGES, HoardPolicy, fuzz_batch
from ttrsim._engine import CHECK_MESSAGES
from ttrsim.game import compile_board
from ttrsim.policies import make_policy

from helpers import load_script

fuzz = load_script("fuzz")

CONFIGS = [(b, n) for b in fuzz.BOARDS for n in range(maps.load(b).min_players,
                                                      maps.load(b).max_players + 1)]


@pytest.mark.parametrize("board,n", CONFIGS)
@pytest.mark.parametrize("mode", fuzz.MODES)
def test_small_fuzz_run_has_no_violation(board, n, mode):
    """random, mixed and hoarding play on every board and player count."""
    res = fuzz.play_chunk(board, n, mode, 3, 60)
    assert res["games"] == 60
    assert res["violations"] == 0, (res["by_code"], res["first"])
    assert res["actions"] > 60 * n          # every game was played and checked
    # every game ends by the final round or by everyone passing, which the core
    # triggers at the board's end_trigger (2 trains left on every shipped board)
    ends = sum(res["edges"][e] for e in EDGE_CASES if e.startswith("final_round"))
    assert ends + res["edges"]["all_players_passed"] == 60
    assert res["edges"]["final_round_other"] == 0


def test_violation_codes_extend_the_core_codes():
    assert VIOLATION_MESSAGES[:len(CHECK_MESSAGES)] == tuple(CHECK_MESSAGES)
    assert len(set(VIOLATION_MESSAGES)) == len(VIOLATION_MESSAGES)


def test_fuzz_batch_is_reproducible_and_counts_edge_cases():
    board = maps.load("newyork")
    cb = compile_board(board)
    runs = [fuzz_batch(cb, 4, [make_policy("random", board) for _ in range(4)],
                       game_seeds(5, 400)) for _ in range(2)]
    assert runs[0] == runs[1]
    r = runs[0]
    assert r["violations"] == 0
    # random 4-player games on the small board empty the deck and the discards at times
    # and always reshuffle; the three end-triggers all occur
    assert r["edges"]["deck_reshuffled"] > 0
    assert all(r["edges"][f"final_round_at_{k}_train{'s' if k != 1 else ''}"] > 0
               for k in range(3))


def test_hoarders_empty_the_deck_and_can_end_by_passes():
    board = maps.load("usa")
    cb = compile_board(board)
    r = fuzz_batch(cb, 3, [HoardPolicy("hoard") for _ in range(3)], game_seeds(9, 1000))
    assert r["violations"] == 0
    assert r["edges"]["deck_and_discards_empty"] == 1000 and r["edges"]["ticket_deck_empty"] > 0
    assert r["edges"]["pass_played"] > 0 and r["edges"]["all_players_passed"] > 0


def test_fuzz_batch_rejects_bad_input():
    board = maps.load("usa")
    cb = compile_board(board)
    with pytest.raises(ValueError, match="distinct"):
        p = make_policy("random", board)
        fuzz_batch(cb, 2, [p, p], game_seeds(1, 2))
    with pytest.raises(ValueError, match="player count"):
        fuzz_batch(cb, 7, [make_policy("random", board) for _ in range(7)], game_seeds(1, 2))


def test_script_resumes_and_adds_games(tmp_path, capsys):
    state = tmp_path / "state.jsonl"
    doc = tmp_path / "fuzz.md"
    args = ["--boards", "newyork", "--chunk", "20", "--n-jobs", "1", "--state", str(state)]
    assert fuzz.main(args + ["--games", "120"]) == 0
    rows = [json.loads(x) for x in state.read_text().splitlines()]
    assert sum(r["games"] for r in rows) == 120              # 3 player counts x 2 modes x 20
    assert fuzz.main(args + ["--games", "120"]) == 0          # nothing left to play
    assert len(state.read_text().splitlines()) == len(rows)
    assert fuzz.main(args + ["--games", "240", "--doc", str(doc)]) == 0
    rows2 = [json.loads(x) for x in state.read_text().splitlines()]
    assert sum(r["games"] for r in rows2) == 240
    assert rows2[:len(rows)] == rows                          # the first games were kept
    text = doc.read_text()
    assert "| newyork | 120 | 120 | 240 |" in text and "None: no invariant was broken" in text
    with pytest.raises(SystemExit):                           # another chunk size: refused
        fuzz.main(["--boards", "newyork", "--chunk", "30", "--state", str(state), "--games", "360"])
    # the same chunks give the same games: a chunk played again is identical
    again = fuzz.play_chunk("newyork", 3, "mixed", 0, 20)
    first = next(r for r in rows if (r["players"], r["mode"], r["chunk"]) == (3, "mixed", 0))
    assert {k: again[k] for k in ("actions", "turns", "edges", "policies")} == \
           {k: first[k] for k in ("actions", "turns", "edges", "policies")}


@pytest.mark.parametrize("vouch", [False, True])
def test_checking_catches_an_illegal_action_of_a_policy_that_vouches_for_its_actions(vouch):
    """With checking on, `decide` checks every action, also those of a policy that vouches
    for its own (as the built-in ones do, so that play without checking skips a second
    check): the fuzzer counts the illegal action as one, and the checked batch loop
    refuses it naming the policy, whether it vouches or not."""
    from ttrsim import PolicyError
    from ttrsim._batch import play_batch
    from ttrsim._fuzz import ILLEGAL_CODE, FaultyPolicy

    board = maps.load("usa")
    cb = compile_board(board)

    def seats():
        return [FaultyPolicy(9, vouch=vouch), make_policy("tickets", board)]

    assert seats()[0].vouch == vouch
    out = fuzz_batch(cb, 2, seats(), game_seeds(3, 4))
    assert out["violations"] == 4
    assert out["by_code"] == {VIOLATION_MESSAGES[16]: 4}     # chose an illegal action
    with pytest.raises(PolicyError, match=f"chose action {ILLEGAL_CODE}, which is not legal"):
        play_batch(cb, 2, seats(), game_seeds(3, 1), check=True)
