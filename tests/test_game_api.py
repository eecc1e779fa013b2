"""The Python Game API: actions, errors, copies, hidden information, pickling."""
import pickle

import numpy as np
import pytest

from ttrsim import Game, IllegalActionError


def play_some(g, n, seed=0):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        if g.is_over():
            break
        codes = g.legal_action_codes()
        g.apply(int(codes[rng.integers(len(codes))]))


def test_actions_have_stable_codes_and_readable_text():
    g = Game("usa", 2, seed=1)
    acts = g.legal_actions()
    assert all(a.kind == "keep" for a in acts)       # setup: initial ticket choice
    assert len({a.code for a in acts}) == len(acts)
    assert [a.code for a in Game("usa", 2, seed=1).legal_actions()] == [a.code for a in acts]
    g.apply(acts[-1])
    g.apply(g.legal_actions()[-1])
    texts = [str(a) for a in g.legal_actions()]
    assert any(t.startswith("draw face-up") for t in texts) and "draw blind" in texts


def test_illegal_action_is_refused_with_the_legal_ones_named():
    g = Game("europe", 3, seed=2)
    with pytest.raises(IllegalActionError, match="not legal for seat 0 in phase setup_tickets; legal: keep"):
        g.apply(g.action("draw_blind"))
    with pytest.raises(ValueError, match="unknown card"):
        g.action("claim", route=0, color="purple")
    with pytest.raises(ValueError, match="allows 2 to 4 players"):
        Game("newyork", 5)
    with pytest.raises(ValueError, match="seed must be"):
        Game("usa", 2, seed=-3)


def test_same_seed_same_game():
    a, b = Game("europe", 4, seed=9), Game("europe", 4, seed=9)
    play_some(a, 300, seed=5)
    play_some(b, 300, seed=5)
    assert a.state() == b.state()
    assert Game("europe", 4, seed=10).state() != Game("europe", 4, seed=9).state()


def test_clone_is_exact_and_independent():
    g = Game("europe", 3, seed=4)
    play_some(g, 80)
    c = g.clone()
    assert c.state() == g.state()
    play_some(c, 20, seed=1)
    assert c.state() != g.state()
    # the clone carries the random state: the same moves give the same future
    d = g.clone()
    play_some(d, 20, seed=1)
    e = g.clone()
    play_some(e, 20, seed=1)
    assert d.state() == e.state()


def test_pickle_round_trip():
    g = Game("newyork", 3, seed=8)
    play_some(g, 30)
    h = pickle.loads(pickle.dumps(g))
    assert h.state() == g.state() and h.board == g.board


@pytest.mark.parametrize("moves", [0, 1, 120])   # during setup, after one choice, mid-game
def test_determinized_copy_keeps_what_the_seat_sees_and_resamples_the_rest(moves):
    g = Game("europe", 3, seed=6)
    play_some(g, moves, seed=2)
    seat = g.current_player
    copies = [g.determinized(seat, s) for s in range(6)]
    for c in copies:
        c._core.check()                                # every card and ticket in one place
        assert c.observation(seat) == g.observation(seat)
        st, cs = g.state(), c.state()
        for q in range(3):                             # public counts are kept
            assert sum(cs["players"][q]["hand"]) == sum(st["players"][q]["hand"])
            assert len(cs["players"][q]["pending"]) == len(st["players"][q]["pending"])
            assert cs["players"][q]["n_tickets"] == st["players"][q]["n_tickets"]
        assert len(cs["deck"]) == len(st["deck"]) and len(cs["ticket_deck"]) == len(st["ticket_deck"])
    hidden = {(tuple(c.state()["deck"]), tuple(map(tuple, (p["pending"] + p["tickets"]
                                                          for p in c.state()["players"]))))
              for c in copies}
    assert len(hidden) > 1                             # the hidden part is really resampled
    if g.phase == "setup_tickets":                     # others' undecided tickets too
        others = {tuple(tuple(c.state()["players"][q]["pending"]) for q in range(3) if q != seat)
                  for c in copies}
        assert len(others) > 1


def test_determinized_copy_keeps_each_tickets_class_and_the_seats_own_discards():
    # Europe: each seat was dealt 1 long + 3 regular tickets and discarded some
    g = Game("europe", 4, seed=11)
    choices = {0: 0b0011, 1: 0b1110, 2: 0b0111, 3: 0b1111}   # bit 0: the long ticket
    while g.phase == "setup_tickets":
        seat = g.current_player
        g.apply(next(a for a in g.legal_actions() if a.kind == "keep" and a.mask == choices[seat]))
    st = g.state()
    long_ = set(np.flatnonzero(g.board.ticket_long).tolist())
    n_long = [len(long_ & set(p["tickets"])) for p in st["players"]]
    assert n_long == [1, 0, 1, 1]
    own = set(st["players"][0]["discarded"])
    assert len(own) == 2 and own <= set(st["removed"])
    removed_seen = set()
    for k in range(40):
        cs = g.determinized(0, k).state()
        assert cs["players"][0] == st["players"][0]
        assert own <= set(cs["removed"])                           # seat 0 knows these
        assert not long_ & set(cs["ticket_deck"])                   # no long ticket in the deck
        assert [len(long_ & set(p["tickets"])) for p in cs["players"]] == n_long
        assert len(long_ & set(cs["removed"])) == len(long_ & set(st["removed"]))
        removed_seen.add(frozenset(set(cs["removed"]) - own))
    assert len(removed_seen) > 1                   # others' discards and undealt longs move


def test_observation_hides_other_hands_and_the_deck():
    g = Game("usa", 3, seed=3)
    play_some(g, 60)
    obs = g.observation(1)
    assert "deck" not in obs and obs["deck_size"] == len(g.state()["deck"])
    assert obs["hand"] == g.state()["players"][1]["hand"]
    assert all("hand" not in p and "tickets" in p for p in obs["players"])
    assert all(isinstance(p["tickets"], int) for p in obs["players"])
