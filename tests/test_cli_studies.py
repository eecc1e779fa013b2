"""Balance studies from the shell: ``ttrsim route-importance`` and ``ttrsim ticket-fairness``
print their table, write CSV and an HTML report, save to --out and resume from it, and
refuse bad input with one line."""
from __future__ import annotations

import pandas as pd
import pytest

import ttrsim.analysis.studies.fairness as fairness_mod
import ttrsim.analysis.studies.importance as importance_mod
from ttrsim.analysis.studies import route_importance, ticket_fairness
from ttrsim.cli import main

RI = ["route-importance", "--board", "newyork", "--players", "2", "--games", "80", "--seed", "3",
      "--routes", "1,2,3,4,5", "--batch-size", "40", "--group-size", "2", "--quiet"]
TF = ["ticket-fairness", "--board", "newyork", "--players", "2", "--games", "200", "--seed", "3",
      "--batch-size", "50", "--resamples", "50", "--quiet"]


def forbid_play(monkeypatch, module, name):
    def never(*args, **kwargs):
        raise AssertionError("a finished study was played again instead of read back")
    monkeypatch.setattr(module, name, never)


def test_route_importance_command(tmp_path, capsys, monkeypatch):
    out, csv, rep = tmp_path / "ri", tmp_path / "ri.csv", tmp_path / "rep"
    assert main(RI + ["--out", str(out), "--csv", str(csv), "--report", str(rep),
                      "--confirm", "2"]) == 0
    text = capsys.readouterr().out
    assert "route importance on newyork" in text and "confirmed_importance" in text
    table = pd.read_csv(csv)
    result = route_importance("newyork", 2, 80, 3, routes=[1, 2, 3, 4, 5], batch_size=40,
                              group_size=2, confirm=2)
    # the study owns its text: what the command prints is the result's summary
    assert text.startswith(result.summary(20) + "\n") and "biased upward" not in text
    # the heading, columns, 2 rows and the confirmation's verdict
    assert len(result.summary(2).splitlines()) == 5
    assert "Confirmed on fresh games" in result.summary(2).splitlines()[-1]
    api = result.table
    api.to_csv(tmp_path / "api.csv", index=False)
    pd.testing.assert_frame_equal(table, pd.read_csv(tmp_path / "api.csv"))
    assert (rep / "index.html").exists() and "biased upward" in (rep / "index.html").read_text()
    # resumed: read back from --out, nothing played
    forbid_play(monkeypatch, importance_mod, "_importance_task")
    assert main(RI + ["--out", str(out), "--csv", str(csv), "--confirm", "2"]) == 0
    pd.testing.assert_frame_equal(pd.read_csv(csv), table)


def test_ticket_fairness_command(tmp_path, capsys, monkeypatch):
    out, csv, rep = tmp_path / "tf", tmp_path / "tf.csv", tmp_path / "rep"
    assert main(TF + ["--out", str(out), "--csv", str(csv), "--report", str(rep)]) == 0
    text = capsys.readouterr().out
    assert "ticket fairness on newyork" in text and "round 1: spread" in text
    api = ticket_fairness("newyork", 2, 200, 3, batch_size=50, n_resamples=50)
    assert text.startswith(api.summary() + "\n")
    assert "round 0: spread" in api.summary() and "suggested" in api.summary()
    api.table.to_csv(tmp_path / "api.csv", index=False)
    expected = pd.read_csv(tmp_path / "api.csv")
    pd.testing.assert_frame_equal(pd.read_csv(csv), expected)
    assert (rep / "index.html").exists()
    forbid_play(monkeypatch, fairness_mod, "_ticket_counts_task")
    assert main(TF + ["--out", str(out), "--csv", str(csv)]) == 0
    pd.testing.assert_frame_equal(pd.read_csv(csv), expected)


def test_ticket_fairness_resumes_after_an_interrupt(tmp_path, monkeypatch):
    out = tmp_path / "tf"
    whole = ticket_fairness("newyork", 2, 200, 3, batch_size=50, n_resamples=50)
    real = fairness_mod._ticket_counts_task
    calls = []

    def stop_after_five(cfg, b):
        calls.append(b)
        if len(calls) > 5:
            raise KeyboardInterrupt
        return real(cfg, b)
    monkeypatch.setattr(fairness_mod, "_ticket_counts_task", stop_after_five)
    with pytest.raises(KeyboardInterrupt):
        ticket_fairness("newyork", 2, 200, 3, batch_size=50, n_resamples=50, out=out)
    monkeypatch.setattr(fairness_mod, "_ticket_counts_task", real)
    again = ticket_fairness("newyork", 2, 200, 3, batch_size=50, n_resamples=50, out=out)
    pd.testing.assert_frame_equal(again.table, whole.table)
    with pytest.raises(ValueError, match="different ticket-fairness run"):
        ticket_fairness("newyork", 2, 200, 4, batch_size=50, n_resamples=50, out=out)


@pytest.mark.parametrize("argv, words", [
    (RI + ["--routes", "1,x"], "--routes '1,x'"),
    (RI + ["--routes", "999"], "no route with id 999"),
    (TF + ["--rounds", "-1"], "rounds"),
    (TF + ["--policy", "nosuch"], "nosuch"),
])
def test_study_commands_refuse_bad_input_in_one_line(capsys, argv, words):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and words in err and "Traceback" not in err, err


def test_study_commands_check_outputs_before_playing(tmp_path, capsys, monkeypatch):
    (tmp_path / "afile").write_text("x")
    forbid_play(monkeypatch, importance_mod, "_importance_task")
    forbid_play(monkeypatch, fairness_mod, "_ticket_counts_task")
    for argv in (RI, TF):
        assert main(argv + ["--report", str(tmp_path / "afile")]) == 2
        assert "is a file" in capsys.readouterr().err


UNWRITABLE = "/proc/ttrsim-cannot-write-here"      # not even root makes a file in /proc


@pytest.mark.parametrize("argv", [
    RI, TF, ["league", "--policy", "random", "--policy", "greedy", "--games", "4", "--quiet"],
    ["compare", "--variant", "docs/examples/europe-variant.json", "--games", "4",
     "--quiet"],
])
@pytest.mark.parametrize("option", ["--report", "--out"])
def test_every_output_option_is_checked_before_any_work(capsys, argv, option):
    """An output directory nobody may write is refused before a game is played, naming the
    option (it was found only when the report was written, the study played and printed)."""
    if option == "--out" and argv[0] == "compare":
        argv, option = ["simulate", "--games", "4", "--quiet"], "--out"
    assert main(argv + [option, UNWRITABLE]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"ttrsim {argv[0]}: error: {option} {UNWRITABLE}: cannot be "
                                   "written") and len(captured.err.splitlines()) == 1


def test_help_texts_print_percent_signs_once(capsys):
    """argparse formats help= strings (``%%`` -> ``%``) but not descriptions."""
    from ttrsim.cli import build_parser

    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices
    assert {"route-importance", "ticket-fairness", "compare", "simulate"} <= set(commands)
    for name, sub in commands.items():
        text = sub.format_help()
        assert "%%" not in text, f"ttrsim {name} --help prints %%"


def test_an_interrupted_study_says_where_it_resumes(tmp_path, capsys, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(fairness_mod, "_ticket_counts_task", interrupted)
    assert main(TF + ["--out", str(tmp_path / "tf")]) == 130
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "the same command resumes" in err
    monkeypatch.setattr(importance_mod, "_importance_task", interrupted)
    assert main(RI) == 130
    assert "add --out DIR" in capsys.readouterr().err
