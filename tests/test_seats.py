"""The seat room (``ttrsim.seats``): the one Python game loop plays the games of the
batch loop from the same seeds, its hook and stop, the spec values, and the matches of
the strength scripts unchanged."""
from __future__ import annotations

import hashlib

import numpy as np
import pytest

from ttrsim.game import Game
from ttrsim.policies import PolicySpec
from ttrsim.record import record_game
from ttrsim.seats import Table, match_key, play_game, play_match, seat_seeds, seat_value


@pytest.mark.parametrize("board,specs,seed", [
    ("europe", ["tickets", "greedy"], 1), ("europe", ["tickets", "greedy"], 2),
    ("usa", ["routes", "tickets", "random"], 7), ("newyork", ["greedy", "tickets:risk=0.1"], 3)])
def test_the_python_loop_plays_the_batch_loops_game(board, specs, seed):
    """Table.deal + play_game: the same moves, seat by seat, as the compiled batch loop
    (record_game) from the same seed: the same deal, seat seeds and starts."""
    record = record_game(board, specs, seed=seed)
    table = play_game(Table.deal(board, specs, seed))
    assert table.decisions == [(int(q), int(a)) for q, a in zip(record.seats, record.actions)]
    assert [s["total"] for s in table.game.scores()] == list(record.final["total"])


def test_seat_seeds_are_the_batch_loops():
    """Seat q starts with output q of SplitMix64 from the game's seed (written out)."""
    def splitmix(x):
        out = []
        for _ in range(3):
            x = (x + 0x9E3779B97F4A7C15) % 2**64
            z = x
            z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) % 2**64
            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) % 2**64
            out.append(z ^ (z >> 31))
        return out
    assert seat_seeds(12345, 3) == splitmix(12345)


def test_a_hook_plays_a_seat_and_stop_ends_early():
    g = Game("europe", 2, seed=4)
    seen = []

    def first_legal(table):
        seen.append(table.seat)
        return table.game.legal_action_codes()[0] if table.seat == 0 else None

    table = play_game(Table(g, [None, "tickets"], seed=4), first_legal,
                      stop=lambda t: t.moves >= 30)
    assert table.moves == 30 and set(seen) == {0, 1}
    with pytest.raises(ValueError, match="seat 0 has no policy"):
        play_game(Table(Game("europe", 2, seed=4), [None, "tickets"]))


def test_the_turn_limit_truncates():
    table = play_game(Table.deal("europe", ["random", "random"], 5, max_turns=12))
    assert table.truncated and table.game.turn == 12 and not table.game.is_over()


def test_seat_value_parses_built_in_specs_once_and_keeps_python_references():
    assert seat_value("tickets:risk=0.2#a") == PolicySpec("tickets", {"risk": 0.2}, "a")
    assert seat_value("my_policies.py:play") == "my_policies.py:play"
    with pytest.raises(ValueError, match="bad parameter"):
        seat_value("tickets:nope=1")


def _digest(m):
    return (hashlib.sha256(np.ascontiguousarray(m.scores).tobytes()).hexdigest()[:16]
            + hashlib.sha256(np.ascontiguousarray(m.turns).tobytes()).hexdigest()[:16])


def test_play_match_plays_the_games_it_played_in_scripts():
    """Digests recorded with play_match of scripts/head_to_head.py before it moved here."""
    m = play_match("europe", ["tickets", "greedy"], 12, match_key(3, "base"))
    assert _digest(m) == "644ec60c95391ee5aad58273f7f2d19c"
    m = play_match("usa", ["tickets", "routes", "greedy"], 9, match_key(4, "b2"), chunk=4)
    assert _digest(m) == "9e48c14a43125441e4094ce8037324d4"
    s = m.summary(0)
    assert s["games"] == 9 and s["low"] <= s["win_share"] <= s["high"]


def _count_parses(monkeypatch):
    """Count the spec texts parsed (every call of the parser, nested specs included)."""
    import ttrsim.policies as policies

    counts = {"parses": 0, "builds": 0}
    parse, build = policies._parse_body, policies.PolicySpec.build

    def counted_parse(*args):
        counts["parses"] += 1
        return parse(*args)

    def counted_build(self):
        counts["builds"] += 1
        return build(self)

    monkeypatch.setattr(policies, "_parse_body", counted_parse)
    monkeypatch.setattr(policies.PolicySpec, "build", counted_build)
    return counts


def test_a_run_parses_each_spec_once(monkeypatch):
    """simulate parses each spec once, at the door, whatever its batches and warm-up: the
    run configuration carries the parsed values (19 parses on 2026-12-01 for this run)."""
    from ttrsim.runner import simulate

    counts = _count_parses(monkeypatch)
    simulate("europe", ["tickets", "greedy:risk=0.2"], games=2000, seed=1)   # 2 batches, warm-up
    assert counts["parses"] == 2


def test_a_league_parses_each_spec_once(monkeypatch):
    from ttrsim.analysis.studies import league

    counts = _count_parses(monkeypatch)
    league("europe", 2, ["tickets", "greedy", "routes"], games=120, seed=1)
    assert counts["parses"] == 3


def test_a_nested_spec_parses_into_a_tree_of_values():
    from ttrsim.policies import make_policy, parse_spec, policy_spec

    spec = parse_spec("search:playouts=8,rollout=(tickets:risk=0.2,draw=10)")
    assert spec.params["rollout"] == PolicySpec("tickets", {"risk": 0.2, "draw": 10})
    assert spec.text == "search:playouts=8,rollout=(tickets:draw=10,risk=0.2)"
    assert parse_spec(spec.text) == spec
    assert spec == policy_spec("search", playouts=8, rollout=policy_spec("tickets", risk=0.2, draw=10))
    assert make_policy(spec, None).params["rollout"] == "(tickets:draw=10,risk=0.2)"
    # the one-parameter form without parentheses, as before
    assert parse_spec("search:rollout=tickets:risk=0.2").params["rollout"] == PolicySpec(
        "tickets", {"risk": 0.2})
    assert parse_spec("search:rollout=tickets:risk=0.2").text == "search:rollout=tickets:risk=0.2"


@pytest.mark.parametrize("spec,message", [
    ("search:rollout=tickets:risk=0.2,draw=10", r"bad parameter 'draw=10'.*parentheses"),
    ("search:rollout=(tickets:risk=0.2", "unbalanced parentheses"),
    ("search:rollout=tickets:risk=0.2)", "unbalanced parentheses"),
    ("search:rollout=(tickets:nope=1)", "policy 'tickets': bad parameter 'nope=1'"),
    ("search:rollout=(tickets#a)", "takes no label"),
    ("tickets:risk=(0.2)", "only a nested spec"),
    ("search:rollout=(search)", "unknown rollout policy"),
])
def test_a_malformed_nested_spec_is_refused_in_one_line(spec, message):
    from ttrsim.policies import check_policy

    with pytest.raises(ValueError, match=message) as err:
        check_policy(spec)
    assert "\n" not in str(err.value)
