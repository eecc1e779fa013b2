"""Built-in policies: legal play on every board and player count, strength, hidden
information, parameters; Python policies and their errors."""
import copy
import pickle
import random
from collections import Counter

import numpy as np
import pytest

from ttrsim import Game, maps
from ttrsim._batch import SCORE_COLS, game_seeds, play_batch
from ttrsim._policies import (board_tables_count, clear_keep_memos, decide, draw_values,
                               keep_memo_entries)
from ttrsim.actions import Action
from ttrsim.cli import main as cli_main
from ttrsim.game import compile_board
from ttrsim.policies import (DEFAULT_POLICY, REGISTRY, PolicyError, PolicySpec, make_policy,
                             parse_spec, policy_table)

COL = {c: i for i, c in enumerate(SCORE_COLS)}
BUILT_IN = ["random", "tickets", "routes", "greedy"]
TABLES = [("usa", n) for n in (2, 3, 4, 5)] + [("europe", n) for n in (2, 3, 4, 5)] + \
         [("newyork", n) for n in (2, 3, 4)]


def play(board, specs, games, seed=1, rotate=True, check=False):
    cb = compile_board(board)
    policies = [make_policy(s, cb.board) for s in specs]
    out = play_batch(cb, len(specs), policies, game_seeds(seed, games), rotate=rotate,
                     summary=True, check=check)
    return out, policies


def same_results(a, b):
    return all(np.array_equal(a[k], b[k]) for k in a if isinstance(a[k], np.ndarray))


def share(out, slot, col):
    """Per-game values of a score column for the policy in `slot` (seat-rotated)."""
    return out["scores"][:, :, COL[col]][out["slot"] == slot]


@pytest.mark.parametrize("board,n", TABLES)
def test_every_policy_plays_complete_legal_games(board, n):
    """Each built-in policy (and the variants of its parameters) plays full games at
    this table, alone and mixed with the others, with no illegal action (with `check`,
    play_batch checks every action and the state after it, and raises), no game cut at
    the turn limit, no game ended by everyone passing, and no action of its own making
    that had to be replaced (fallbacks). Over the tables, each policy plays thousands
    of games. The same games are then played without `check`, where the built-in
    policies' actions are applied unchecked: the results must be the same."""
    variants = {"europe": ["tickets:stations=0", "tickets:tunnels=0", "tickets:risk=1",
                           "greedy:risk=0", "routes:risk=1"]}.get(board, [])
    mixes = [[p] * n for p in BUILT_IN] + [[BUILT_IN[(i + k) % 4] for i in range(n)]
                                           for k in range(2)]
    mixes += [[v] + [DEFAULT_POLICY] * (n - 1) for v in variants]
    for i, specs in enumerate(mixes):
        k = 1000 if len(set(specs)) == 1 else 400       # alone / mixed or a variant
        games = 2 * k if board == "newyork" else k
        out, policies = play(board, specs, games, seed=100 * n + i, check=True)
        assert not out["truncated"].any()
        assert "random" in specs or not out["all_passed"].any()
        assert all(getattr(p, "fallbacks", 0) == 0 for p in policies)
        assert same_results(out, play(board, specs, games, seed=100 * n + i)[0])


@pytest.mark.parametrize("board", maps.available())
def test_tickets_beats_random_and_completes_its_tickets(board):
    out, _ = play(board, ["tickets", "random"], 1000, seed=11)
    wins = share(out, 0, "rank") == 1
    assert wins.mean() >= 0.99
    kept = share(out, 0, "tickets_kept").sum()
    done = share(out, 0, "tickets_completed").sum()
    assert done / kept >= 0.9
    assert share(out, 0, "score").mean() > share(out, 1, "score").mean() + 20


@pytest.mark.parametrize("board", ["usa", "europe"])
def test_tickets_is_the_strongest_built_in(board):
    # measured over 20,000 games: 0.62 (USA) and 0.63 (Europe) against routes, 0.89 and
    # 0.73 against greedy; 600 games give a standard error of 0.02
    for other, least in (("routes", 0.55), ("greedy", 0.65)):
        out, _ = play(board, ["tickets", other], 600, seed=5)
        assert (share(out, 0, "rank") == 1).mean() > least, other
    out, _ = play(board, ["greedy", "random"], 200, seed=5)
    assert (share(out, 0, "rank") == 1).mean() > 0.9
    out, _ = play(board, ["routes", "random"], 200, seed=5)
    assert (share(out, 0, "rank") == 1).mean() > 0.9


def test_routes_completes_its_tickets_on_long_routes():
    """USA 4-player self-play: `routes` completes most of the tickets it keeps (measured
    0.71 over 4,000 games) and claims longer routes on average than `tickets` (4.04 trains
    per claim against 3.77)."""
    lengths = {}
    for spec in ("routes", "tickets"):
        cb = compile_board("usa")
        policies = [make_policy(f"{spec}#{k}", cb.board) for k in range(4)]
        out = play_batch(cb, 4, policies, game_seeds(2, 300), rotate=True)
        claims = out["claims"]
        lengths[spec] = np.asarray(cb.board.route_len)[claims[:, 2]].mean()
        if spec == "routes":
            sc = out["scores"]
            done = sc[:, :, COL["tickets_completed"]].sum() / sc[:, :, COL["tickets_kept"]].sum()
            assert done >= 0.6, done
            assert (sc[:, :, COL["tickets_kept"]] == cb.board.initial_keep).all()  # the fewest
    assert lengths["routes"] > lengths["tickets"] + 0.1, lengths


def test_routes_claims_for_its_tickets_first():
    """`routes` holding Denver - El Paso (Denver - Santa Fe its own, the ways through
    Santa Fe and Phoenix taken) with 6 white, 4 red and 5 yellow claims a route toward El
    Paso through Oklahoma City rather than the longer Calgary - Winnipeg (6 white); once
    the ticket is joined it claims Calgary - Winnipeg, the longest it can pay."""
    board = compile_board("usa").board
    hand = {"white": 6, "red": 4, "yellow": 5}
    policy = make_policy("routes", board)
    g = Game.from_position("usa", 2, hands=[hand, {}], tickets=[[6], [7]],
                           routes=[[38], [49, 48]], current=0, seed=3)
    act = Action.decode(decide(policy, g), board)
    assert act.kind == "claim" and act.route in (33, 47, 81), str(act)
    g = Game.from_position("usa", 2, hands=[hand, {}], tickets=[[6], [7]],
                           routes=[[38, 49], [48]], current=0, seed=3)
    act = Action.decode(decide(policy, g), board)
    assert act.kind == "claim" and act.route == 14, str(act)


def test_station_and_tunnel_parameters_change_play():
    """stations=0 never builds a station; tunnels=0 never claims a tunnel; the default
    uses both on Europe."""
    cb = compile_board("europe")
    tunnels = {r for r in range(len(cb.board.route_id)) if cb.board.route_tunnel[r]}

    def run(spec):
        policies = [make_policy(spec, cb.board), make_policy("tickets", cb.board)]
        return play_batch(cb, 2, policies, game_seeds(3, 400), rotate=True)

    out = run("tickets:stations=0,tunnels=0")
    mine = out["slot"] == 0
    assert share(out, 0, "stations_built").sum() == 0
    claims = out["claims"]
    own = mine[claims[:, 0], claims[:, 1]]
    assert not any(int(r) in tunnels for r in claims[own, 2])
    assert len(out["tunnels"]) == 0 or not mine[out["tunnels"][:, 0], out["tunnels"][:, 1]].any()

    out = run("tickets")
    assert share(out, 0, "stations_built").sum() > 0
    assert len(out["tunnels"]) > 0


def test_tunnel_odds_count_the_discards_when_the_deck_is_empty():
    """With the deck empty the reveal comes from the discards, which every player sees.
    Two wilds among three discards: an 8-tunnel paid with 6 blue + 2 wild from a hand of
    6 blue + 3 wild surely fails, and no policy tries it, whatever its `risk` (trying it
    every turn would loop: the cards come back and the reveal repeats). One wild among
    them: it surely succeeds, and `routes` claims it, the longest route it can pay."""
    rest = {"pink": 12, "white": 12, "blue": 6, "yellow": 10, "orange": 12, "black": 12,
            "red": 8, "green": 11, "wild": 9}

    def position(discard):
        others = dict(rest, yellow=12 - discard["yellow"], wild=11 - discard["wild"])
        g = Game.from_position("europe", 2, hands=[{"blue": 6, "wild": 3}, others],
                               faceup=["red", "red", "green", "red", "red"],
                               discard=discard, current=0, seed=1)
        assert g.state()["deck"] == []
        return g

    g = position({"wild": 2, "yellow": 1})
    assert g.board.route_name(86).startswith("Petrograd - Stockholm")
    for spec in ("routes", "tickets", "greedy", "routes:risk=1", "greedy:risk=1"):
        act = Action.decode(decide(make_policy(spec, g.board), g), g.board)
        assert act.route != 86, (spec, str(act))
    g = position({"wild": 1, "yellow": 2})
    act = Action.decode(decide(make_policy("routes:risk=0", g.board), g), g.board)
    assert act.kind == "claim" and act.route == 86


RANDOM_POSITIONS = [
    # 4 players: seat 0 owns one half of Berlin-Frankfurt (the other half is closed to it
    # alone) and has built a station (the next costs 2); 6 trains cut the long routes;
    # two wild cards open the ferries
    ("europe", 4, dict(hands=[{"red": 3, "blue": 2, "wild": 2, "yellow": 1}, {}, {}, {}],
                       routes=[[16], [18], [], []], stations=[["Paris"], [], [], []],
                       trains=[6, 40, 40, 40])),
    # 2 players: the other half of Bruxelles-Paris is closed to everyone
    ("europe", 2, dict(hands=[{"green": 4, "wild": 1}, {}], routes=[[], [28]])),
    ("usa", 3, dict(hands=[{"black": 2, "orange": 5, "wild": 3}, {}, {}], routes=[[], [3], []])),
    # no wild card: no ferry can be claimed; three colours held and 7 trains: a gray route
    # gets three payment slots, of which a 3-long one pays two and a 5-long one one, so
    # drawn gray claims are often rejected
    ("europe", 3, dict(hands=[{"orange": 6, "black": 4, "white": 2}, {}, {}],
                       routes=[[], [16], []], trains=[7, 40, 40])),
    # wild cards only: every claim is all-wild
    ("usa", 2, dict(hands=[{"wild": 4}, {}])),
    ("newyork", 2, dict(hands=[{"green": 2, "blue": 1, "wild": 2}, {}])),
]


@pytest.mark.parametrize("board,n,position", RANDOM_POSITIONS)
def test_random_policy_is_uniform_over_the_legal_actions(board, n, position):
    """The random policy draws claims by rejection instead of listing the legal actions;
    its choice must still be each listed legal action with the same probability
    (chi-square test over 200 draws per action, fixed seeds)."""
    assert len(random_choices_are_uniform(Game.from_position(board, n, **position))) > 20


def random_choices_are_uniform(g, draws_per_action=200):
    from scipy import stats

    legal = [int(a) for a in g.legal_action_codes()]
    policy = make_policy("random", g.board)
    counts = Counter(decide(policy, g, seed) for seed in range(draws_per_action * len(legal)))
    assert set(counts) == set(legal)
    assert stats.chisquare([counts[a] for a in legal]).pvalue > 1e-4
    return legal


def test_random_policy_is_uniform_outside_the_turn_start():
    """The ticket keeps (initial and drawn), the second card draw (a face-up wild may not
    be taken) and the tunnel answer are drawn without the list too."""
    from ttrsim.actions import encode

    g = Game("europe", 2, seed=1)
    assert g.phase == "setup_tickets" and len(random_choices_are_uniform(g)) == 11

    g = Game.from_position("europe", 2, faceup=["wild", "red", "red", "blue", None], seed=2)
    g.apply(encode("draw_blind"))
    assert g.phase == "second_draw" and len(random_choices_are_uniform(g)) == 4

    g = Game.from_position("usa", 2, seed=3)
    g.apply(encode("draw_tickets"))
    assert g.phase == "keep_tickets" and len(random_choices_are_uniform(g)) == 7

    # Marseille - Zürich is a 2-long pink tunnel; three pink or wild cards revealed ask
    # for three more: decline, or pay with 0 .. 3 wild cards
    g = Game.from_position("europe", 2, hands=[{"pink": 5, "wild": 3}, {}],
                           deck_top=["pink", "wild", "pink"], seed=4)
    g.apply(encode("claim", 74, 0, 0))
    assert g.phase == "tunnel" and len(random_choices_are_uniform(g)) == 5


@pytest.mark.parametrize("spec", ["tickets", "routes", "greedy", "random"])
def test_decisions_use_only_what_the_seat_may_see(spec):
    """The same decision when everything the seat cannot see (deck order, other hands and
    tickets, ticket deck) is resampled: across boards, phases and game stages."""
    rng = random.Random(0)
    checked = 0
    for board in maps.available():
        for seed in range(6):
            g = Game(board, 3, seed=seed)
            for _ in range(rng.randrange(0, 120)):
                if g.is_over():
                    break
                g.apply(decide(make_policy("tickets", g.board), g, seed=seed))
            if g.is_over():
                continue
            a = decide(make_policy(spec, g.board), g, seed=9)
            b = decide(make_policy(spec, g.board), g.determinized(g.current_player, seed + 99), seed=9)
            assert a == b, (board, seed, g.phase, str(Action.decode(a, g.board)))
            checked += 1
    assert checked >= 25


def test_decide_returns_legal_actions_in_every_phase():
    phases = set()
    for seed in range(6):
        g = Game("europe", 2, seed=seed)
        policies = [make_policy("tickets", g.board) for _ in range(2)]
        while not g.is_over():
            a = decide(policies[g.current_player], g, seed=seed, start=False)
            phases.add(g.phase)
            g.apply(a)
    assert {"setup_tickets", "turn", "second_draw"} <= phases


def test_draw_value_bound_never_falls_below_the_estimate():
    """The planning policies skip the paths of a ticket-draw estimate when a cheaper
    bound already shows the draw does not pay; the bound must hold at every position
    (checked along tickets games on every board), and must often be usable where it is
    made (it leaves the Globetrotter out, so on boards with it there is none: +inf)."""
    n = finite = conclusive = 0
    for board in maps.available():
        for seed in range(12):
            players = 2 + seed % 3
            g = Game(board, players, seed=seed)
            policies = [make_policy("tickets", g.board) for _ in range(players)]
            k = 0
            while not g.is_over():
                if g.phase == "turn" and k % 3 == 0:
                    try:
                        bound, estimate = draw_values(make_policy("tickets", g.board), g, seed)
                    except ValueError:              # no route yet: nothing to value
                        bound = None
                    if bound is not None:
                        assert bound >= estimate - 1e-9, (board, seed, g.turn, bound, estimate)
                    if bound is not None and g.board.globetrotter_bonus:
                        assert bound == np.inf
                    elif bound is not None:
                        n += 1
                        finite += np.isfinite(bound)
                        conclusive += bound < 0
                k += 1
                g.apply(decide(policies[g.current_player], g, seed=seed, start=False))
    assert n > 1000 and finite > 0.8 * n and conclusive > 0.7 * n


# --- registry, specs, CLI ------------------------------------------------------------

def test_registry_specs_and_parameters():
    assert DEFAULT_POLICY == "tickets"
    assert set(BUILT_IN) <= set(REGISTRY)
    assert parse_spec("tickets:stations=0,risk=0.2") == PolicySpec("tickets", {"stations": 0, "risk": 0.2})
    assert parse_spec(" tickets : risk=0.2 #a") == PolicySpec("tickets", {"risk": 0.2}, "a")
    assert parse_spec("tickets:risk=0.2,stations=0#a").text == "tickets:risk=0.2,stations=0#a"
    assert parse_spec("rush#b").values() == {"min_len": 6, "tunnels": 1, "risk": 0.3}
    p = make_policy("tickets:stations=0,tunnels=0,risk=0.2,draw=20", None)
    assert p.params == {"stations": 0, "tunnels": 0, "risk": 0.2, "draw": 20}
    assert p.spec == "tickets:draw=20,risk=0.2,stations=0,tunnels=0"
    assert make_policy("routes:min_len=4", None).params["min_len"] == 4
    with pytest.raises(ValueError, match="parameters: tunnels, risk, min_len"):
        parse_spec("routes:stations=0")
    with pytest.raises(ValueError, match="unknown policy"):
        parse_spec("longroute")
    with pytest.raises(ValueError, match="risk"):
        make_policy("tickets:risk=2", None)
    for name, info in REGISTRY.items():
        assert info.doc
        for key, (default, doc) in info.params.items():
            assert doc and isinstance(default, (int, float, str))


def test_a_spec_is_split_and_parsed_once(monkeypatch):
    """make_policy and policy_name split a spec's label once and parse it once, and
    check_policy (the runs' early check) builds one instance."""
    import ttrsim.policies as pol

    calls = []
    split, parse, build = pol.split_label, pol._parse_body, pol.PolicySpec.build
    monkeypatch.setattr(pol, "split_label", lambda s: calls.append("split") or split(s))
    monkeypatch.setattr(pol, "_parse_body", lambda b, lb: calls.append("parse") or parse(b, lb))
    monkeypatch.setattr(pol.PolicySpec, "build", lambda self: calls.append("build") or build(self))
    assert make_policy("tickets:risk=0.2#a", None).spec == "tickets:risk=0.2#a"
    assert calls == ["split", "parse", "build"]
    calls.clear()
    assert pol.policy_name("greedy:draw=5#b") == "greedy:draw=5#b" and calls == ["split", "parse"]
    calls.clear()
    assert pol.check_policy("rush:min_len=4") == "rush:min_len=4"
    assert calls == ["split", "parse", "build"]


def test_a_search_spec_is_checked_without_building_its_policies(monkeypatch):
    """check_policy (every run's early check) refuses a bad search spec as clearly as
    building it would, building one rollout instance (and one lead), never the search with
    its nine policies."""
    import dataclasses

    import ttrsim.policies as pol

    def no_search(**params):
        raise AssertionError("the search was built to check its spec")

    monkeypatch.setitem(REGISTRY, "search", dataclasses.replace(REGISTRY["search"], build=no_search))
    built = []
    build = pol.PolicySpec.build
    monkeypatch.setattr(pol.PolicySpec, "build", lambda self: built.append(self.text) or build(self))
    assert pol.check_policy("search:playouts=5#s") == "search:playouts=5#s"
    assert built == ["expert:model=v4"]
    built.clear()
    assert pol.check_policy("search:rollout=tickets,lead=greedy") == \
        "search:lead=greedy,rollout=tickets"
    assert built == ["tickets", "greedy"]
    for spec, message in (("search:c=-1", "c \\(exploration\\) must be >= 0"),
                          ("search:phases=40", "phases must be a sum"),
                          ("search:playouts=0,rollout=tickets,infer=30", "infer must be within"),
                          ("search:rollout=search", "unknown rollout policy"),
                          ("search:rollout=tickets:risk=2", "risk must be within"),
                          ("search:lead=expert:model=nofile.json", "nofile.json"),
                          ("search:draws=2", "draws must be 0")):
        with pytest.raises(ValueError, match=message):
            pol.check_policy(spec)
        monkeypatch.setitem(REGISTRY, "search", dataclasses.replace(REGISTRY["search"],
                                                                    build=pol.make_search_policy))
        with pytest.raises(ValueError, match=message):     # the same refusal as building it
            make_policy(spec, None)
        monkeypatch.setitem(REGISTRY, "search", dataclasses.replace(REGISTRY["search"],
                                                                    build=no_search))


def test_policies_copy_and_pickle_with_their_parameters():
    p = make_policy("greedy:risk=0.1", None)
    for q in (copy.copy(p), pickle.loads(pickle.dumps(p)), make_policy(p, None)):
        assert q is not p and type(q) is type(p)
        assert q.params == p.params and q.spec == p.spec


#: Spec -> fingerprint of its games (fingerprint()): the same seed must give exactly the
#: same games. A change of a policy's play that is meant (a new expert model, a better
#: heuristic) changes its fingerprint: print fingerprint(spec) and write the new one here.
FINGERPRINTS = {
    "random": "7c79516957ea090e",
    "tickets": "000d8b6f5674fa30",
    "routes": "2ab0628fb274f539",
    "greedy": "3b97efc97c35ea87",
    "expert": "f52da99368bc75d2",
    "blocker": "32d0363b5f874b5f",
    "rush": "45eb2ba2beef3669",
    "search:playouts=4,rollout=tickets": "eb8084be5b53c25d",
}
FINGERPRINT_GAMES = {"random": 40, "tickets": 20, "routes": 20, "greedy": 20, "expert": 10,
                     "blocker": 10, "rush": 20, "search:playouts=4,rollout=tickets": 1}


def fingerprint(spec, make=make_policy):
    """The first 16 hex digits of the SHA-256 of the scores and lengths of a few games of
    `spec` in seat 0 against `tickets`: USA 2 players and Europe 4 players, seats rotated."""
    import hashlib

    h = hashlib.sha256()
    for board, n in (("usa", 2), ("europe", 4)):
        cb = compile_board(board)
        pols = [make(spec if k == 0 else "tickets", cb.board) for k in range(n)]
        out = play_batch(cb, n, pols, game_seeds(11, FINGERPRINT_GAMES[spec]), 0, True, True)
        h.update(out["scores"].tobytes())
        h.update(out["turns"].tobytes())
    return h.hexdigest()[:16]


@pytest.mark.parametrize("spec", FINGERPRINTS)
def test_every_built_in_policy_plays_the_same_games_as_before(spec):
    assert fingerprint(spec) == FINGERPRINTS[spec]


def test_fingerprints_cover_every_built_in_policy_and_see_a_change():
    assert {s.partition(":")[0] for s in FINGERPRINTS} == set(REGISTRY)
    tuned = fingerprint("tickets", lambda s, b: make_policy(s, b).tune(alpha=0.2))
    assert tuned != FINGERPRINTS["tickets"]


@pytest.mark.parametrize("spec", FINGERPRINTS)
def test_copies_and_pickles_of_every_policy_play_its_games(spec):
    """One pickling scheme for every built-in policy (Policy.__reduce__, from init_args):
    a copy and a pickled policy are fresh instances that play exactly its games."""
    from ttrsim.policies import Policy

    p = make_policy(spec, None)
    assert type(p).__reduce__ is Policy.__reduce__
    for how in (copy.copy, lambda x: pickle.loads(pickle.dumps(x))):
        assert fingerprint(spec, lambda s, b: how(make_policy(s, b))) == FINGERPRINTS[spec]
        q = how(p)
        assert type(q) is type(p) and q.params == p.params and q.spec == p.spec


def test_every_policy_plans_with_the_default_weights():
    """The planner's default weights are written once (default_plan_params, _planning.pxd):
    every policy that plans, and the planner of every policy that follows one, starts from
    them; greedy alone values routes by their points itself (points_weight 0)."""
    from ttrsim._policies import default_plan_weights

    default = default_plan_weights()
    assert default == dict(tunnel_cost=8, ferry_cost=8, station_cost=32, claim_cost=16,
                           points_weight=5)
    for spec in ("tickets", "routes", "tickets:stations=0,tunnels=0"):
        assert make_policy(spec, None).plan_weights == default
    assert make_policy("greedy", None).plan_weights == dict(default, points_weight=0)
    for spec in ("expert", "blocker", "rush", "blocker:tunnels=0,stations=0"):
        p = make_policy(spec, None)
        assert p.plan_weights == default and p.planner.plan_weights == default
        assert p.planner.params.items() <= p.params.items()
    assert make_policy("tickets", None).tune(claim_cost=3).plan_weights["claim_cost"] == 3


def test_policies_command_lists_every_policy(capsys):
    assert cli_main(["policies"]) == 0
    text = capsys.readouterr().out
    assert text == policy_table() + "\n"
    for name, info in REGISTRY.items():
        assert name in text
        for key in info.params:
            assert f"{key}=" in text


# --- Python policies -----------------------------------------------------------------

class FirstLegal:
    name = "first-legal"

    def __init__(self):
        self.games = 0

    def start_game(self, seat, seed):
        self.games += 1

    def choose(self, observation, legal_actions):
        assert observation["seat"] == observation["current"]
        for a in legal_actions:          # prefer drawing blind: keeps games short
            if a.kind == "draw_blind":
                return a
        return legal_actions[0].code


def random_callable(observation, legal_actions):
    return random.choice(legal_actions)


def test_python_policies_play_full_games():
    cb = compile_board("newyork")
    obj = FirstLegal()
    policies = [make_policy(obj, cb.board), make_policy(random_callable, cb.board),
                make_policy("tickets", cb.board)]
    out = play_batch(cb, 3, policies, game_seeds(2, 30), rotate=True)
    assert not out["truncated"].any() and obj.games == 30
    assert policies[0].spec == "first-legal" and policies[1].spec == "random_callable"


@pytest.mark.parametrize("answer,message", [
    (lambda obs, legal: None, "answered None, which is not one of the"),
    (lambda obs, legal: 123456, "answered 123456, which is not one of the"),
    (lambda obs, legal: "draw", "answered 'draw', which is not one of the"),
    (lambda obs, legal: 1 / 0, r"raised ZeroDivisionError\('division by zero'\); legal actions:"),
])
def test_bad_python_answers_raise_policy_error(answer, message):
    cb = compile_board("usa")
    policies = [make_policy("tickets", cb.board), make_policy(answer, cb.board)]
    with pytest.raises(PolicyError, match=message) as info:
        play_batch(cb, 2, policies, game_seeds(4, 3))
    text = str(info.value)
    assert "policy '<lambda>'" in text and "(seat 1, turn 0)" in text
    assert "keep ticket " in text                # the legal actions are listed, tickets named


def test_policy_error_names_the_turn_of_a_late_failure():
    cb = compile_board("europe")

    def flaky(observation, legal_actions):
        if observation["turn"] >= 7:
            raise RuntimeError("lost my way")
        return legal_actions[-1] if observation["phase"] == "setup_tickets" else legal_actions[0]

    policies = [make_policy(flaky, cb.board), make_policy("tickets", cb.board)]
    with pytest.raises(PolicyError, match=r"policy 'test_policy_error_names_the_turn_of_a_late_failure.<locals>.flaky' "
                                          r"\(seat 0, turn [78]\) raised RuntimeError\('lost my way'\); "
                                          r"legal actions: \d+: "):
        play_batch(cb, 2, policies, game_seeds(4, 1))


def test_objects_without_choose_are_refused():
    with pytest.raises(TypeError, match="is not a policy"):
        make_policy(42, None)


@pytest.mark.parametrize("board,n,spec", [("europe", 4, "tickets"), ("usa", 3, "routes"),
                                          ("newyork", 2, "greedy")])
def test_remembered_initial_ticket_choices_replay_the_same_games(board, n, spec):
    """Initial ticket choices on the empty board are remembered in the process: the
    same games played again take every choice from the memo (it gains no entry) and
    are the same games."""
    clear_keep_memos()
    first, _ = play(board, [spec] * n, 300)
    entries = keep_memo_entries()
    assert entries > 0
    again, _ = play(board, [spec] * n, 300)
    assert keep_memo_entries() == entries
    assert same_results(first, again)


def test_ticket_draw_weights():
    """The experiment weights of a ticket draw (scripts/strength.py --draws): a cap on the
    route rate a draw is weighed against makes `tickets` draw more; asking for more
    trains than any opponent could have stops every draw after setup; unknown weights
    are refused."""
    cb = compile_board("usa")
    seeds = game_seeds(5, 600)

    def offers(**weights):
        policies = [make_policy("tickets", cb.board).tune(**weights),
                    make_policy("tickets", cb.board)]
        out = play_batch(cb, 2, policies, seeds, rotate=True)
        mine = out["slot"][out["offers"][:, 0], out["offers"][:, 1]] == 0
        return mine.sum() / len(seeds)

    default = offers()
    assert default >= 3.0                        # 3 offered at setup
    assert offers(draw_rate=3.0) > default + 0.5
    assert offers(draw_rate=3.0, draw_behind=100) == 3.0
    with pytest.raises(ValueError, match="unknown weight"):
        make_policy("tickets", cb.board).tune(draw_rates=3)


def test_policies_share_the_board_tables_of_their_weights():
    """Planning policies of one board and one set of planner weights share one copy of
    the board's tables; other weights get their own, and the games are those of
    policies that never shared (the same seeds give the same results)."""
    cb = compile_board("usa")
    before = board_tables_count()
    specs = ["tickets", "tickets#b", "tickets:risk=0.5", "tickets#d"]
    first, _ = play("usa", specs, 50, seed=4)
    made = board_tables_count() - before
    assert made <= 1                              # the same planner weights: one copy
    tuned = make_policy("tickets", cb.board).tune(tunnel_cost=999)
    play_batch(cb, 2, [tuned, make_policy("tickets", cb.board)], game_seeds(1, 5))
    assert board_tables_count() == min(before + made + 1, 16)
    again, _ = play("usa", specs, 50, seed=4)
    assert same_results(first, again)


def test_remembered_choices_follow_the_policy_weights():
    """A policy whose weights were changed (here `alpha`, set directly) does not reuse
    choices remembered under other weights."""
    def tuned():
        cb = compile_board("europe")
        policies = [make_policy("tickets", cb.board) for _ in range(2)]
        for p in policies:
            p.alpha = 2.0
        return play_batch(cb, 2, policies, game_seeds(1, 200), summary=True)

    clear_keep_memos()
    default, _ = play("europe", ["tickets"] * 2, 200)
    remembered = tuned()
    clear_keep_memos()
    fresh = tuned()
    assert same_results(remembered, fresh)
    assert not same_results(default, fresh)


def test_threads_sharing_the_memo_play_the_same_games():
    """Batches playing at once in threads (as on a threaded dask worker) share the memo
    of initial choices and still play the games they play alone."""
    from concurrent.futures import ThreadPoolExecutor

    def batch(seed):
        cb = compile_board("europe")
        policies = [make_policy("tickets", cb.board) for _ in range(4)]
        return play_batch(cb, 4, policies, game_seeds(seed, 400), summary=True)

    clear_keep_memos()
    alone = [batch(seed) for seed in (1, 2, 3, 4)]
    clear_keep_memos()
    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(batch, (1, 2, 3, 4)))
    assert all(same_results(a, b) for a, b in zip(alone, together))


def test_replace_policy_keeps_each_seats_settings_and_label():
    from ttrsim.policies import replace_policy

    assert replace_policy(["tickets:risk=0#a", "tickets", "greedy:draw=5"], "expert") == \
        ["expert:risk=0#a", "expert", "expert:draw=5"]
    with pytest.raises(ValueError, match="bad parameter 'min_len=3'"):
        replace_policy(["routes:min_len=3"], "expert")
    with pytest.raises(ValueError, match="policy name only"):
        replace_policy(["tickets"], "expert:risk=0")
