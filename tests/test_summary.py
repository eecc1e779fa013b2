"""The run summary (``Run.summary()``, ``ttrsim simulate``'s printout): hand-made games with
known answers, per policy and per seat, the printed format, and labels that keep two seats
with the same spec apart."""
import math
import re

import numpy as np
import pandas as pd
import pytest

from ttrsim import maps
from ttrsim.cli import main
from ttrsim.results import Run, load_run
from ttrsim.runner import replay, simulate


def wilson(k, n, z=1.959963984540054):
    """The Wilson score interval written out (independent of the code under test)."""
    centre = (k + z * z / 2) / (n + z * z)
    half = z / (n + z * z) * math.sqrt(k * (n - k) / n + z * z / 4)
    return centre - half, centre + half


def hand_made_run() -> Run:
    # game 0: tickets 100 beats random 80; game 1: a 90-90 tie still tied after the
    # tie-breaks (both rank 1); game 2: random 70 beats tickets 60.
    rows = [  # game, seat, policy, score, rank, kept, completed
        (0, 0, "tickets", 100, 1, 3, 3), (0, 1, "random", 80, 2, 1, 0),
        (1, 0, "random", 90, 1, 1, 1), (1, 1, "tickets", 90, 1, 2, 1),
        (2, 0, "tickets", 60, 2, 2, 2), (2, 1, "random", 70, 1, 1, 0),
    ]
    g = pd.DataFrame(rows, columns=["game", "seat", "policy", "score", "rank", "tickets_kept",
                                    "tickets_completed"])
    g["policy"] = g["policy"].astype("category")
    g["win"] = g["rank"] == 1
    manifest = {"board": "usa", "players": 2, "policies": ["tickets", "random"], "games": 3,
                "seed": 0, "rotate": True, "summary": False, "batches": 1}
    return Run(manifest, maps.load("usa"), {"games": g})


def test_hand_made_summary_per_policy():
    s = hand_made_run().summary()
    assert list(s.index) == ["tickets", "random"]
    t, r = s.loc["tickets"], s.loc["random"]
    # the tie counts a win for both seats: 4 wins in 3 games
    assert (t.seat_games, t.wins, r.seat_games, r.wins) == (3, 2, 3, 2)
    assert t.win_share == pytest.approx(2 / 3)
    assert (t.win_share_low, t.win_share_high) == pytest.approx(wilson(2, 3))
    assert t.mean_score == pytest.approx(250 / 3) and r.mean_score == pytest.approx(80)
    # score minus the other seat's: +20, 0, -10 for tickets
    assert t.score_diff == pytest.approx(10 / 3) and r.score_diff == pytest.approx(-10 / 3)
    sd = np.std([20, 0, -10], ddof=1)
    assert t.score_diff_high - t.score_diff == pytest.approx(1.959964 * sd / math.sqrt(3), rel=1e-5)
    assert t.mean_tickets_kept == pytest.approx(7 / 3)
    assert t.ticket_completion == pytest.approx(6 / 7) and r.ticket_completion == pytest.approx(1 / 3)


def test_hand_made_summary_per_seat():
    s = hand_made_run().summary(by="seat")
    assert list(s.index) == [(0, "tickets"), (0, "random"), (1, "tickets"), (1, "random")]
    assert list(s.seat_games) == [2, 1, 1, 2] and list(s.wins) == [1, 1, 1, 1]
    assert s.loc[(0, "random"), "win_share"] == 1.0
    assert np.isnan(s.loc[(0, "random"), "score_diff_high"])      # one game: no interval


def test_by_is_checked():
    with pytest.raises(ValueError, match="by must be one of"):
        hand_made_run().summary(by="policies")


@pytest.mark.parametrize("board, players", [("usa", 2), ("europe", 3), ("newyork", 4)])
def test_same_policy_everywhere_is_summarised_per_seat(board, players):
    run = simulate(board, players, games=60, seed=2, summary=True)
    s = run.summary()
    assert s.attrs["by"] == "seat" and list(s.index.get_level_values("seat")) == list(range(players))
    assert (s.seat_games == 60).all()
    # every game has at least one winner; shared wins can add more
    assert s.wins.sum() >= 60
    # the seats' score differences sum to 0 in every game
    assert s.score_diff.sum() == pytest.approx(0, abs=1e-9)
    events = simulate(board, players, games=60, seed=2)
    pd.testing.assert_frame_equal(events.summary(), s)
    g = events.games
    assert s.wins.sum() == g.win.sum() and (g.groupby("game").win.sum() >= 1).all()


def test_labels_keep_equal_specs_apart_and_play_the_same_games():
    plain = simulate("usa", ["tickets", "tickets"], games=40, seed=3)
    labelled = simulate("usa", ["tickets#a", "tickets:risk=0.3#b"], games=40, seed=3)
    assert list(labelled.summary().index) == ["tickets#a", "tickets:risk=0.3#b"]
    assert list(plain.summary(by="policy").index) == ["tickets"]
    a, b = plain.games.drop(columns="policy"), labelled.games.drop(columns="policy")
    pd.testing.assert_frame_equal(a, b)
    assert replay(labelled, 7).games.policy.astype(str).tolist() == \
        labelled.games[labelled.games.game == 7].policy.astype(str).tolist()


@pytest.mark.parametrize("spec, message", [
    ("tickets#", "a label after '#'"), ("tickets#a b", "a label after '#'"),
])
def test_bad_labels_are_refused(spec, message):
    with pytest.raises(ValueError, match=message):
        simulate("usa", [spec, "random"], games=2)


PCT = re.compile(r"-?\d+(\.\d+)?%")


def printed(capsys, *args):
    assert main(["simulate", "--quiet", *args]) == 0
    return capsys.readouterr().out


def test_printed_summary_per_policy(capsys, tmp_path):
    text = printed(capsys, "--board", "usa", "--players", "2", "--policy", "tickets",
                   "--policy", "random", "--games", "50", "--seed", "4")
    lines = text.splitlines()
    assert lines[:4] == ["board    usa", "players  2: tickets, random (seats rotate between games)",
                         "games    50 (per-event tables)", "seed     4"]
    assert re.fullmatch(r"time     \d+\.\d s, [\d,]+ games/s", lines[4])
    head = next(line for line in lines if line.startswith("policy"))
    for column in ("seat-games", "wins", "win share", "95% interval", "mean score", "vs others"):
        assert column in head
    rows = [line for line in lines if line.startswith(("tickets ", "random "))]
    assert len(rows) == 2 and rows[0].split()[1] == "50"
    # consistent rounding: every share has one decimal, every score one decimal
    assert all(m.group(1) and len(m.group(1)) == 2 for m in PCT.finditer(" ".join(rows)))
    assert "Nothing was saved" in text and "--out DIR" in text
    assert lines[-1] == "  ttrsim report DIR"
    assert "tied winners each count a win" in " ".join(text.split())


def test_printed_summary_per_seat_and_where_saved(capsys, tmp_path):
    out = tmp_path / "run"
    text = printed(capsys, "--board", "newyork", "--players", "3", "--games", "30", "--summary",
                   "--out", str(out))
    assert "players  3: tickets in every seat" in text and "Per seat" in text
    assert "1/3 = 33.3%" in text
    assert f"Saved in {out}" in text and text.splitlines()[-1] == f"  ttrsim report {out}"
    again = printed(capsys, "--board", "newyork", "--players", "3", "--games", "30", "--summary",
                    "--out", str(out))           # the same command: resumes, nothing left
    assert "time     none played: all 30 games were already saved" in again
    assert again.splitlines()[5:] == text.splitlines()[5:]
    assert load_run(out).summary_text().splitlines()[-2].startswith("Saved in")
