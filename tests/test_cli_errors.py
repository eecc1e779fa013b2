"""Every user mistake on the command line ends with one line on stderr and exit code 2,
never a traceback: bad --out, a missing extra, a closed pipe, bad tunnel-odds input,
Python policies named on the command line. Ctrl-C ends with one line and exit code 130."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ttrsim.cli import main
from ttrsim.results import load_run
from ttrsim.runner import simulate

ROOT = Path(__file__).resolve().parents[1]


def one_line_error(capsys, argv, *needles, code=2):
    """Run ``ttrsim argv`` in-process; it must fail with exit code ``code`` and one stderr
    line."""
    assert main(argv) == code
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith(f"ttrsim {argv[0]}: error: ")
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def ttrsim_process(*args, **kwargs):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.Popen([sys.executable, "-m", "ttrsim", *args], env=env, text=True,
                            # a clean SIGINT disposition whatever the test runner inherited
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
                            **kwargs)


def test_out_naming_a_file(capsys, tmp_path):
    target = tmp_path / "results.txt"
    target.write_text("mine")
    one_line_error(capsys, ["simulate", "--games", "5", "--quiet", "--out", str(target)],
                   "is a file", "directory")
    one_line_error(capsys, ["simulate", "--games", "5", "--quiet", "--out", str(target / "sub")],
                   "--out", "results.txt is a file, not a directory")
    assert target.read_text() == "mine"
    with pytest.raises(ValueError, match="is a file"):
        simulate("usa", 2, games=5, out=target)


def test_report_out_naming_a_file(capsys, tmp_path):
    simulate("newyork", ["random"] * 2, games=20, out=tmp_path / "run")
    target = tmp_path / "report.html"
    target.write_text("")
    one_line_error(capsys, ["report", str(tmp_path / "run"), "--out", str(target)], "is a file")
    one_line_error(capsys, ["report", str(target)], "is a file, not a saved run")
    one_line_error(capsys, ["report", str(tmp_path / "gone")], "gone does not exist")
    one_line_error(capsys, ["report", str(tmp_path)], "holds no ttrsim run")


def test_dask_backend_without_dask_names_the_extra(capsys, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)      # as if not installed
    out = tmp_path / "never"
    one_line_error(capsys, ["simulate", "--games", "5", "--quiet", "--backend", "dask",
                            "--scheduler", "tcp://127.0.0.1:1", "--out", str(out)],
                   'pip install -e ".[dask]"')          # the README's install command
    assert not out.exists()                                   # refused before writing
    with pytest.raises(ImportError, match=r'pip install -e "\.\[dask\]"'):
        simulate("usa", 2, games=5, backend="dask", scheduler="tcp://127.0.0.1:1")


@pytest.mark.parametrize("argv, needles", [
    (["--hand", "red=x"], ["'red=x'", "whole number"]),
    (["--hand", "red=-1"], ["whole number"]),
    (["--faceup", "blue"], ["colour=count"]),
    (["--faceup", "red=6"], ["--faceup", "counts 6 cards", "face-up row holds 5"]),
    (["--faceup", "red=3,wild=1,blue=2"], ["counts 6 cards", "face-up row holds 5"]),
    (["--hand", "red=20"], ["more cards known than the deck holds", "red 20 > 12"]),
    (["--board", "usa"], ["usa board has no tunnels"]),
    (["--board", "newyork"], ["newyork board has no tunnels"]),
    (["--board", "mars"], ["mars"]),
])
def test_tunnel_odds_bad_input(capsys, argv, needles):
    one_line_error(capsys, ["tunnel-odds", "--color", "red", *argv], *needles)


POLICY_FILE = '''
def first(observation, legal_actions):
    return legal_actions[0]

class Last:
    def choose(self, observation, legal_actions):
        return legal_actions[-1]

CONSTANT = 3

def answers_none(observation, legal_actions):
    return None

def crashes(observation, legal_actions):
    raise RuntimeError("boom")
'''


@pytest.fixture
def policy_file(tmp_path, monkeypatch):
    (tmp_path / "mine.py").write_text(POLICY_FILE)
    (tmp_path / "broken.py").write_text("def f(:\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path / "mine.py"


def test_python_policy_from_a_file_plays(capsys, policy_file):
    assert main(["simulate", "--board", "newyork", "--players", "3", "--games", "3", "--quiet",
                 "--policy", "mine.py:first", "--policy", f"{policy_file}:Last",
                 "--policy", "random"]) == 0
    text = capsys.readouterr().out
    # both inside the working folder: shown by their path from there, however given
    assert "mine.py:first, mine.py:Last, random" in text and str(policy_file) not in text
    # the API takes the same strings and gives the same games
    run = simulate("newyork", ["mine.py:first", f"{policy_file}:Last", "random"], games=3)
    assert run.manifest["policies"] == [f"{policy_file}:first", f"{policy_file}:Last", "random"]
    assert list(run.summary().seat_games) == [3, 3, 3]


def test_a_policy_file_is_shown_as_typed_and_recorded_whole(capsys, policy_file, tmp_path,
                                                            monkeypatch):
    """The printed tables name a policy file inside the working folder by its path from
    there (as typed, not 50 characters of absolute path); the results keep the absolute
    path, and a folder the file is not in sees that."""
    argv = ["--board", "newyork", "--players", "2", "--games", "4", "--quiet",
            "--policy", "mine.py:first", "--policy", "random"]
    assert main(["simulate", *argv, "--out", "run"]) == 0
    text = capsys.readouterr().out
    assert "players  2: mine.py:first, random" in text
    assert "\nmine.py:first " in text and str(tmp_path) not in text
    assert load_run("run").manifest["policies"][0] == f"{policy_file}:first"
    assert main(["profile", "run"]) == 0
    head = capsys.readouterr().out.splitlines()[2:4]
    assert any(line.split()[:1] == ["mine.py:first"] for line in head), head
    assert main(["league", *argv, "--games", "4", "--jobs", "1"]) == 0
    text = capsys.readouterr().out
    assert "  mine.py:first " in text and str(tmp_path) not in text
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert main(["profile", str(tmp_path / "run")]) == 0
    assert f"{policy_file}:first" in capsys.readouterr().out


def test_a_policy_file_given_relative_is_recorded_by_its_absolute_path(capsys, policy_file,
                                                                       tmp_path):
    """Workers elsewhere (a cluster's, each in a folder of its own) and readers in another
    folder find the file; the same command from the same folder still resumes the run."""
    argv = ["simulate", "--board", "newyork", "--players", "2", "--games", "6", "--batch-size",
            "2", "--quiet", "--policy", "mine.py:first#a", "--policy", "random", "--out", "run"]
    assert main(argv) == 0
    names = [f"{policy_file}:first#a", "random"]
    assert load_run("run").manifest["policies"] == names
    for path in [tmp_path / "run" / "done" / "000002",     # a run interrupted before its
                 *(tmp_path / "run").glob("*/part-000002.parquet")]:     # last batch
        path.unlink()
    capsys.readouterr()
    assert main(argv) == 0, capsys.readouterr().err
    run = load_run("run")
    assert run.manifest["policies"] == names and (tmp_path / "run" / "done" / "000002").exists()
    assert len(run.games) == 6 * 2 and set(run.games.policy) == set(names)


@pytest.mark.parametrize("spec, needles", [
    ("mine.py:nope", ["has no 'nope'", "Last", "first"]),
    ("missing.py:f", ["missing.py' not found"]),
    ("broken.py:f", ["failed to load", "SyntaxError", "line 1"]),
    ("mine.py:CONSTANT", ["is not a policy"]),
    ("mine.py", ["mine.py:function"]),
    ("no_such_module_here:f", ["cannot import module 'no_such_module_here'"]),
    ("mine.py:answers_none", ["/mine.py:answers_none' (seat", "answered None",
                              "legal actions"]),
    ("mine.py:crashes", ["/mine.py:crashes' (seat", "RuntimeError('boom')"]),
])
def test_python_policy_mistakes(capsys, policy_file, spec, needles):
    line = one_line_error(capsys, ["simulate", "--board", "newyork", "--players", "2", "--games",
                                   "2", "--quiet", "--policy", spec, "--policy", "random"], *needles)
    # the API raises the same message
    from ttrsim.policies import PolicyError

    with pytest.raises((ValueError, PolicyError)) as info:
        simulate("newyork", [spec, "random"], games=2)
    assert " ".join(str(info.value).split()) == line.split(": error: ", 1)[1]


def test_closed_pipe_is_quiet(tmp_path):
    read, write = os.pipe()
    os.close(read)                         # the reader has gone, as after `| head -1`
    with os.fdopen(write, "w") as stdout:
        proc = ttrsim_process("policies", stdout=stdout, stderr=subprocess.PIPE)
    err = proc.communicate(timeout=120)[1]
    assert proc.returncode == 2 and err == ""


def closed_pipe_run(argv):
    """Run ``argv`` with stdout a pipe whose reader has gone (as after ``| head -1``, but
    always: the first write fails); return (exit code, stderr)."""
    read, write = os.pipe()
    os.close(read)
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    with os.fdopen(write, "w") as stdout:
        proc = subprocess.run(argv, stdout=stdout, stderr=subprocess.PIPE, text=True, env=env,
                              cwd=ROOT, timeout=300)
    return proc.returncode, proc.stderr


def test_run_script_ends_quietly_when_the_reader_has_gone():
    code = ("import sys\nfrom ttrsim.script import run_script\n"
            "def main():\n    print('x' * 100_000)\n    print('never')\n"
            "sys.exit(run_script(main))\n")
    assert closed_pipe_run([sys.executable, "-c", code]) == (2, "")


@pytest.mark.parametrize("argv", [["search_strength.py", "--markdown"],
                                  ["bench.py", "--markdown", "--env"]])
def test_scripts_piped_into_head_exit_quietly(argv):
    """The documented look at a script's tables, piped into `head`: no traceback."""
    assert closed_pipe_run([sys.executable, str(ROOT / "scripts" / argv[0]), *argv[1:]]) == (2, "")


def test_every_script_ends_through_run_script():
    """Each script's `__main__` block is `sys.exit(run_script(main))`, the one way a script
    stays quiet on a closed pipe. Only a module that other scripts import would have no
    such block."""
    import ast

    trees = {path: ast.parse(path.read_text()) for path in sorted((ROOT / "scripts").glob("*.py"))}
    imported = {node.module for tree in trees.values() for node in ast.walk(tree)
                if isinstance(node, ast.ImportFrom) and node.module}
    imported |= {alias.name for tree in trees.values() for node in ast.walk(tree)
                 if isinstance(node, ast.Import) for alias in node.names}
    for path, tree in trees.items():
        block = next((node for node in tree.body if isinstance(node, ast.If)
                      and "__main__" in ast.unparse(node.test)), None)
        if block is None:
            assert path.stem in imported, f"{path.name}: no __main__ block, no script imports it"
            continue
        assert ast.unparse(block.body[-1]) == "sys.exit(run_script(main))", path.name


def interrupt_after_batches(args, out, batches):
    """Start ``ttrsim simulate``, press Ctrl-C (SIGINT to its process group, as a terminal
    does) once ``batches`` batches are on disk; return (exit code, stderr)."""
    proc = ttrsim_process("simulate", *args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          start_new_session=True)
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None:
        done = out / "done"
        if done.is_dir() and len([p for p in done.iterdir() if p.name.isdigit()]) >= batches:
            break
        time.sleep(0.02)
    assert proc.poll() is None, "the run finished before it could be interrupted"
    os.killpg(proc.pid, signal.SIGINT)
    try:
        err = proc.communicate(timeout=3)[1]
    except subprocess.TimeoutExpired:
        # A Ctrl-C can still be missed while the main process is starting a thread of
        # its own (joblib's, tqdm's) and has SIGINT held: press it again, as a user would.
        os.killpg(proc.pid, signal.SIGINT)
        err = proc.communicate(timeout=120)[1]
    return proc.returncode, err


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_ctrl_c_says_what_was_saved_and_that_the_same_command_resumes(tmp_path, jobs):
    out = tmp_path / "run"
    args = ["--board", "usa", "--players", "2", "--policy", "random", "--games", "3000000",
            "--batch-size", "1000", "--seed", "2", "--quiet", "--jobs", jobs, "--out", str(out)]
    code, err = interrupt_after_batches(args, out, 2)
    assert code == 130 and len(err.splitlines()) == 1, err
    assert "Traceback" not in err and "Warning" not in err
    assert err.startswith("ttrsim simulate: error: interrupted; ")
    assert "of 3000 batches" in err and "the same command resumes" in err
    saved = int(err.split("interrupted; ")[1].split(" of ")[0])
    assert saved >= 2 and saved == len([p for p in (out / "done").iterdir() if p.name.isdigit()])
    with pytest.raises(ValueError, match="incomplete"):
        load_run(out)


def test_ctrl_c_without_out_says_nothing_was_saved(capsys, monkeypatch):
    import ttrsim.runner

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(ttrsim.runner, "_run_batch", interrupted)
    one_line_error(capsys, ["simulate", "--games", "5", "--quiet"], "interrupted",
                   "nothing was saved", "--out DIR", code=130)


def _sigint_disposition():
    return signal.getsignal(signal.SIGINT) == signal.SIG_IGN, os.getpid()


def test_local_workers_ignore_sigint_and_the_main_process_does_not():
    """Ctrl-C reaches the whole process group: the workers ignore it from their start
    (an initializer), so the main process alone is interrupted and cancels them."""
    from ttrsim.dispatch import run_tasks

    seen = list(run_tasks(_sigint_disposition, [()] * 8, n_jobs=2))
    assert all(ignored for ignored, _ in seen), seen
    assert os.getpid() not in {pid for _, pid in seen}
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_policies_repeat_in_order_when_their_count_divides_the_seats():
    from ttrsim.cli import seat_policies

    assert seat_policies(["expert", "tickets"], 4) == ["expert", "tickets", "expert", "tickets"]
    assert seat_policies(["a"], 3) == ["a", "a", "a"]
    assert seat_policies(["a", "b", "c"], 3) == ["a", "b", "c"]
    assert seat_policies(None, 5) == 5
    with pytest.raises(ValueError, match=r"give --policy 1, 3 times for 3 players.*not 2 times"):
        seat_policies(["a", "b"], 3)
    with pytest.raises(ValueError, match=r"1, 2, 4 times for 4 players.*not 3 times"):
        seat_policies(["a", "b", "c"], 4)


def test_the_command_line_starts_without_the_heavy_libraries():
    """`ttrsim --help`, `maps` and `policies` build every parser and run without pandas,
    scipy, matplotlib or joblib: each command imports what it needs when it needs it (start
    within about 0.2 s of CPU; docs/performance.md)."""
    code = ("import sys, contextlib, io\n"
            "from ttrsim.cli import build_parser, main\n"
            "build_parser()\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    assert main(['maps']) == 0 and main(['policies']) == 0\n"
            "heavy = [m for m in ('pandas', 'scipy', 'matplotlib', 'joblib', 'pyarrow')\n"
            "         if m in sys.modules]\n"
            "print(' '.join(heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == [], f"loaded at start-up: {out.stdout}"


def test_help_loads_neither_numpy_nor_the_compiled_core():
    """`ttrsim --help` and every `ttrsim COMMAND --help` answer from the parser alone: no
    numpy, no compiled module (a start within 0.1 s of Python's own; docs/performance.md)."""
    code = ("import sys, contextlib, io\n"
            "from ttrsim.cli import COMMANDS, build_parser, main\n"
            "parser = build_parser()\n"
            "names = [None] + list(parser._subparsers._group_actions[0].choices)\n"
            "for name in names:\n"
            "    with contextlib.redirect_stdout(io.StringIO()):\n"
            "        try:\n"
            "            main(['--help'] if name is None else [name, '--help'])\n"
            "        except SystemExit:\n"
            "            pass\n"
            "print(len(names), ' '.join(m for m in sys.modules if m == 'numpy' or\n"
            "                         m.startswith('ttrsim._') and m not in\n"
            "                         ('ttrsim._version', 'ttrsim._defaults')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    count, *loaded = out.stdout.split()
    assert int(count) == 15 and loaded == [], f"loaded by --help: {loaded}"


# ------------------------------------------------------------------ options that change nothing

SHOW = ["show", "--board", "newyork", "--players", "2", "--seed", "3"]


@pytest.mark.parametrize("extra,needles", [
    (["--rollout", "nosuch"], ["--rollout needs --analyse SEAT"]),
    (["--playouts", "50"], ["--playouts needs --analyse SEAT"]),
    (["--analyse", "0", "--rollout", "nosuch"], ["unknown rollout policy 'nosuch'", "tickets"]),
    (["--analyse", "0", "--rollout", "search"], ["unknown rollout policy 'search'"]),
    (["--analyse", "0", "--rollout", "tickets:nosuch=1"], ["bad parameter 'nosuch=1'"]),
    (["--analyse", "0", "--playouts", "0"], ["--playouts must be a positive integer, got 0"]),
])
def test_show_refuses_analysis_options_it_would_ignore_or_cannot_use(capsys, tmp_path, extra,
                                                                      needles):
    """--playouts and --rollout set the analysis: without --analyse they are refused, not
    dropped; a rollout the search cannot play is refused before any game is played."""
    page = tmp_path / "game.html"
    one_line_error(capsys, SHOW + extra + ["--out", str(page)], *needles)
    assert not page.exists()


def test_a_replay_that_ends_otherwise_says_how_to_give_the_policies(capsys, tmp_path):
    simulate("newyork", ["tickets", "tickets"], games=2, seed=1, out=tmp_path / "run")
    line = one_line_error(capsys, ["show", str(tmp_path / "run"), "--game", "0", "--policy",
                                   "random", "--out", str(tmp_path / "g.html")],
                          "give policies that do: ttrsim show")
    assert "give give" not in line


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "0.5"])
def test_ticket_fairness_refuses_a_max_factor_that_is_not_a_finite_number_from_1(
        capsys, value):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")         # no RuntimeWarning with a source path
        one_line_error(capsys, ["ticket-fairness", "--board", "newyork", "--players", "2",
                                "--games", "4", "--resamples", "40", "--quiet",
                                f"--max-factor={value}"],
                       f"max_factor must be a finite number >= 1, got {float(value)!r}")


# Every option naming a file a command writes, on a command line whose next mistake (a
# missing input) shows whether the file was checked first, before any work.
OUTPUT_FILES = [
    (["compare", "--variant", "no-such-variant.json", "--quiet"], "--csv"),
    (["route-importance", "--board", "no-such-board", "--quiet"], "--csv"),
    (["ticket-fairness", "--board", "no-such-board", "--quiet"], "--csv"),
    (["profile", "no-such-run"], "--csv"),
    (["show", "no-such-run", "--game", "0"], "--out"),
    (["variant", "no-such-variant.json"], "--save"),
]


@pytest.mark.parametrize("argv, option", OUTPUT_FILES)
@pytest.mark.parametrize("where", ["under /proc", "under a file", "in a read-only directory"])
def test_every_output_file_that_cannot_be_written_is_refused_first(capsys, tmp_path, argv,
                                                                   option, where):
    """/proc takes no new file and a path under a regular file none either, whoever asks
    (os.access says yes to root for both); a read-only directory takes none but root's."""
    if where == "under /proc":
        path = "/proc/ttrsim-output-check"
    elif where == "under a file":
        (tmp_path / "plain").write_text("x")
        path = str(tmp_path / "plain" / "table")
    else:
        if os.geteuid() == 0:
            pytest.skip("root writes in a read-only directory")
        locked = tmp_path / "locked"
        locked.mkdir()
        locked.chmod(0o500)
        path = str(locked / "table")
    one_line_error(capsys, [*argv, option, path], f"{option} {path}: ",
                   "is a file, not a directory" if where == "under a file" else
                   "cannot be written")
    assert not Path(path).exists()


@pytest.mark.parametrize("argv, option", OUTPUT_FILES)
def test_an_output_file_check_leaves_what_it_found(capsys, tmp_path, argv, option):
    """The check opens the file without changing it: a new file is removed again, an
    existing one keeps its bytes."""
    new, old = tmp_path / "new", tmp_path / "old"
    old.write_text("mine")
    for path in (new, old):
        assert main([*argv, option, str(path)]) == 2
        assert f"{option} " not in capsys.readouterr().err          # the later mistake
    assert not new.exists() and old.read_text() == "mine"


def test_a_page_in_folders_still_to_make_is_checked_in_the_nearest_existing_one(capsys,
                                                                                tmp_path):
    """show makes the page's missing folders: they are no mistake, but the nearest
    existing folder must take a new file."""
    assert main(["show", "no-such-run", "--game", "0", "--out",
                 str(tmp_path / "new" / "dirs" / "g.html")]) == 2
    assert "--out" not in capsys.readouterr().err and not (tmp_path / "new").exists()
    one_line_error(capsys, ["show", "no-such-run", "--game", "0", "--out", "/proc/new/g.html"],
                   "--out /proc/new/g.html: cannot be written")


def test_an_unknown_option_is_answered_with_the_command_usage(capsys, tmp_path):
    """`analyse RUN --seat 1` answered with the top-level usage, which names no option."""
    with pytest.raises(SystemExit) as info:
        main(["analyse", str(tmp_path), "--seat", "1"])
    err = capsys.readouterr().err
    assert info.value.code == 2
    assert err.startswith("usage: ttrsim analyse ") and "--playouts" in err
    assert err.splitlines()[-1] == "ttrsim analyse: error: unrecognized arguments: --seat 1"
    with pytest.raises(SystemExit):
        main(["--nosuch"])
    assert capsys.readouterr().err.splitlines()[-1] == ("ttrsim: error: unrecognized "
                                                        "arguments: --nosuch")


def test_league_help_names_every_built_in_board(monkeypatch):
    """`league --help` named usa, europe and newyork only; the list is the boards' registry."""
    from ttrsim import maps
    from ttrsim.cli import build_parser

    monkeypatch.setenv("COLUMNS", "1000")           # one line per option: no wrapped names
    parser = build_parser()
    for name in ("league", "simulate", "tunnel-odds", "route-importance", "play"):
        assert f"({', '.join(maps.BUILTIN)};" in parser.commands[name].format_help(), name


def test_policies_names_every_shipped_expert_model(capsys):
    """`ttrsim policies` did not name expert:model=whole."""
    from ttrsim._expert import SHIPPED_MODELS

    assert main(["policies"]) == 0
    text = capsys.readouterr().out
    expert = " ".join(text[text.index("\nexpert\n"):].split("\n      reach=")[0].split())
    for name in SHIPPED_MODELS:
        assert f" {name} (" in expert or f"({name})" in expert, name


def test_a_ctrl_c_after_the_whole_result_keeps_its_exit_code(capsys, monkeypatch):
    """A Ctrl-C that lands once the result is printed in full (the last flush, the workers
    shutting down) ended with "interrupted" and 130, as if the result were incomplete."""
    real_flush, pressed = sys.stdout.flush, []

    def interrupted_flush():
        real_flush()
        if not pressed:               # once: the key pressed during run_script's last flush
            pressed.append(True)
            raise KeyboardInterrupt
    monkeypatch.setattr(sys.stdout, "flush", interrupted_flush)
    assert main(["maps"]) == 0 and pressed
    captured = capsys.readouterr()
    assert "europe" in captured.out and captured.err == ""


def test_a_ctrl_c_while_the_process_ends_exits_0_after_a_complete_result():
    """The same at the process's end (the interpreter joining the workers' pool): a SIGINT
    after the command returned ends the process with the command's code."""
    code = ("import os, signal, sys, time\n"
            "from ttrsim.cli import main\n"
            "sys.argv = ['ttrsim', 'maps']\n"
            "rc = main()\n"
            "os.kill(os.getpid(), signal.SIGINT)\n"
            "time.sleep(5)\n"
            "sys.exit(99)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0 and "europe" in out.stdout and out.stderr == "", out
