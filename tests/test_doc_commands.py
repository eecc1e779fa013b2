"""Every shell command fenced in README.md and docs/*.md runs and exits 0, and so does
every `ttrsim COMMAND ...` written in running text (but the PROSE_SKIP few); every fenced
Python block runs (below); a command's documented output (marked, below) is what it
prints; and what the commands write stays under `runs/` (gitignored), not beside the
checkout's files.

Commands run in order, block after block, in one scratch folder per page (so a `report`
finds the run a `simulate` before it wrote), with `docs/`, `examples/` and `scripts/` of the
checkout copied beside them (a script writes its results there, never into the checkout). `ttrsim` is this interpreter's `python -m ttrsim` and `python` this
interpreter. Substitutions, so that the whole page runs in seconds:

- `--games N` becomes `--games G` when N > G, G = $TTRSIM_DOC_GAMES (default 40, a multiple
  of the 2 and 4 seats that a league's games are shared among), or 10 for a command that
  plays `search` (about 0.1 s of CPU a game): `--policy search` or a script that measures it;
  a command that plays games and names no `--games` gets `--games G` (or 10);
  `--jobs -1` becomes `--jobs 1`; `--playouts N` becomes at most 20;
- `tcp://HOST:8786` becomes the address of a local dask cluster the test starts;
- `ttrsim play`, a server, runs with `--no-browser` until it prints its address; the page
  is fetched from that address, then the server is stopped with Ctrl-C (SIGINT);
- commands that only install (`pip`, `python3 -m venv`, building a wheel) are not run:
  `.ci/run` runs the README's install-and-test line and tests/test_wheel.py builds and
  installs a wheel; `scripts/train_expert.py ... --install` (hours of CPU, and it replaces
  the shipped model) runs with `--help` only, its pipeline being tested on small budgets
  by the training tests.

Running text: inline code `ttrsim COMMAND ARG...` (spans joined across line breaks) with no
placeholder (an upper-case word such as RUN or DIR, `...`, `<`), run after the page's fenced
commands, in the same folder, with the same substitutions; `ttrsim play` (a server) only
where it is fenced.

A documented output: a fenced block just after the line
`<!-- output of: COMMAND -->` (an HTML comment, not shown) holds what COMMAND prints, line
for line (trailing spaces and the timing of a run aside); the command runs at the size
written there, which the page states where it is smaller than the page's own command.

Every fenced Python block runs on its own, after ``import ttrsim`` (which each page
does first), in the page's scratch folder, with ``games=N`` at most G (but for the game
it replays: ``game(123)`` keeps 124 games), ``n_jobs=-1`` as 1 and ``playouts=N`` at most
20; but for the few FRAGMENTS, which continue with the reader's own runs or files or
start a cluster on a batch system or Kubernetes.
"""
from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
SHELL = {"bash", "sh", "shell", "console"}
GAMES = int(os.environ.get("TTRSIM_DOC_GAMES", "40"))
#: scripts whose tables play the `search` policy
SEARCH_SCRIPTS = ("search_strength.py", "expert_strength.py", "search_levers.py")
INSTALL = ("pip ", "python3 -m venv", "python -m venv", "build-env/", "pipx ")


def fenced_commands(text: str) -> list:
    """The shell commands of a page's fenced bash/sh/shell/console blocks, in order: a
    leading `$ ` prompt and trailing comments dropped, continuation lines joined, output
    lines of console blocks (no prompt) skipped."""
    cmds, lang, pending = [], None, ""
    for line in text.splitlines():
        fence = re.match(r"^\s*```(\S*)\s*$", line)
        if fence:
            lang = None if lang is not None else (fence.group(1) or "")
            continue
        if lang not in SHELL:
            continue
        s = line.strip()
        if lang == "console":
            if not s.startswith("$ ") and not pending:
                continue
            s = s[2:] if s.startswith("$ ") else s
        if not s or s.startswith("#"):
            continue
        s = re.sub(r"\s+#\s.*$", "", s)
        if s.endswith("\\"):
            pending += s[:-1].rstrip() + " "
            continue
        cmds.append(pending + s)
        pending = ""
    return cmds


#: Python blocks that are not run, by page and first line, and why (each must still be
#: on its page, so that this list follows the pages)
FRAGMENTS = {
    ("docs/analysis.md", "p = an.profile(run)"): "continues with runs the reader made",
    ("docs/analysis.md", 'c = an.compare_profiles([run_a, run_b], labels=["tickets", "expert"], '
                         'group="all")'): "continues with runs the reader made",
    ("docs/performance.md", "from dask_jobqueue import SLURMCluster"): "needs a batch system",
    ("docs/performance.md", "from dask_kubernetes.operator import KubeCluster"):
        "needs a Kubernetes cluster",
    ("docs/policies.md", "# setup.py next to my_policy.pyx; build with: python setup.py "
                         "build_ext --inplace"): "builds the reader's own .pyx",
    ("docs/policies.md", "from my_policy import MyPolicy"): "plays the reader's own build",
    ("docs/expert-history.md", "import json"): "continues with a labelling run of hours",
}


def python_blocks(text: str) -> list:
    """The fenced Python blocks of a page, in order, as (line of the opening fence,
    code)."""
    out, code, start = [], None, 0
    for k, line in enumerate(text.splitlines(), 1):
        if code is None and re.match(r"^\s*```python\s*$", line):
            code, start = [], k
        elif code is not None and re.match(r"^\s*```\s*$", line):
            out.append((start, "\n".join(code) + "\n"))
            code = None
        elif code is not None:
            code.append(line)
    return out


def python_programs(page: str) -> list:
    """The Python blocks of ``page`` (relative to the checkout) that run: all but its
    FRAGMENTS."""
    return [(line, code) for line, code in python_blocks((ROOT / page).read_text())
            if (page, code.splitlines()[0] if code.strip() else "") not in FRAGMENTS]


def substitute_python(code: str) -> str:
    """A block as run: after ``import ttrsim`` (every page imports it first), with fewer
    games (as many as the game it replays needs), one worker and at most 20 playouts."""
    replayed = [int(k) for k in re.findall(r"(?:\.game|replay)\((?:\w+,\s*)?(\d+)\)", code)]
    games = max([GAMES] + [k + 1 for k in replayed])
    code = re.sub(r"\bgames=([\d_]+)",
                  lambda m: f"games={min(int(m.group(1).replace('_', '')), games)}", code)
    code = re.sub(r"\bplayouts=(\d+)", lambda m: f"playouts={min(int(m.group(1)), 20)}", code)
    return "import ttrsim\n" + code.replace("n_jobs=-1", "n_jobs=1")


def substitute(cmd: str, scheduler: str | None) -> list | None:
    """The command as run (an argv list), or None for an install command."""
    if re.sub(r"^(\w+=\S*\s+)+", "", cmd).startswith(INSTALL):
        return None
    plays_search = re.search(r"--policy\s+search", cmd) or any(n in cmd for n in SEARCH_SCRIPTS)
    games = min(GAMES, 10) if plays_search else GAMES
    cmd = re.sub(r"--games\s+([\d_]+)",
                 lambda m: f"--games {min(int(m.group(1).replace('_', '')), games)}", cmd)
    cmd = re.sub(r"--playouts\s+(\d+)", lambda m: f"--playouts {min(int(m.group(1)), 20)}", cmd)
    cmd = cmd.replace("--jobs -1", "--jobs 1")
    words = cmd.split()
    if len(words) > 1 and words[0] == "ttrsim" and words[1] in PLAYS and "--games" not in words:
        cmd += f" --games {games}"
    if "tcp://HOST:8786" in cmd:
        cmd = cmd.replace("tcp://HOST:8786", scheduler)
    argv = shlex.split(cmd)
    while re.match(r"^\w+=", argv[0]):          # leading NAME=value settings
        argv = argv[1:] + [argv[0]]
    if argv[0] == "ttrsim":
        argv = [sys.executable, "-m", "ttrsim"] + argv[1:]
    elif argv[0] in ("python", "python3"):
        argv = [sys.executable] + argv[1:]
    if "train_expert.py" in cmd and "--install" in argv:
        argv = argv[:2] + ["--help"]
    return argv


#: What a page's commands may leave in its scratch folder's top level: the copies of the
#: checkout's folders and `runs/`; anything else is written into the reader's checkout.
SCRATCH = {"docs", "examples", "scripts", "runs"}
#: Commands of running text that are not run, by page, and why (each must still be on its
#: page, so that this list follows the pages)
PROSE_SKIP = {
    ("docs/play.md", "ttrsim show runs/play-ny --game 0 --out runs/play-ny-0.html"):
        "needs a game a person finished in ttrsim play",
    ("docs/play.md", "ttrsim profile runs/play-ny"): "needs a game a person finished",
    ("docs/play.md", "ttrsim report runs/play-ny"): "needs a game a person finished",
    ("docs/play.md", "ttrsim analyse runs/play-ny --game 0 --turn 12"):
        "needs a game a person finished",
    ("docs/play.md", "ttrsim league --board newyork --players 2 --policy expert --policy "
                     "tickets --people runs/play-ny"): "needs a game a person finished",
    ("docs/search.md", "ttrsim analyse runs/position.json --playouts 1000 --seed 1"):
        "analyses the position the reader saved in the Python block above",
}
#: Commands that play games, and get `--games G` when they name none.
PLAYS = ("simulate", "compare", "league", "route-importance", "ticket-fairness")
_PLACEHOLDER = re.compile(r"\b[A-Z][A-Z_0-9]*\b|\.\.\.|…|<")


def prose_commands(text: str) -> list:
    """The `ttrsim COMMAND ARG...` spans of a page's running text (outside its fences), in
    order, each once, whitespace collapsed; none with a placeholder, none of `ttrsim play`."""
    lines, fenced = [], False
    for line in text.splitlines():
        if re.match(r"^\s*```", line):
            fenced = not fenced
        elif not fenced:
            lines.append(line)
    prose = re.sub(r"\n(?!\n)", " ", "\n".join(lines))      # spans wrap across lines
    out = []
    for m in re.finditer(r"`(ttrsim [a-z][^`]*)`", prose):
        cmd = " ".join(m.group(1).split())
        if (len(cmd.split()) > 2 and not _PLACEHOLDER.search(cmd)
                and not cmd.startswith("ttrsim play") and cmd not in out):
            out.append(cmd)
    return out


def documented_outputs(text: str) -> list:
    """(command, the lines of the block below it) of each `<!-- output of: ... -->`
    (a `$ ` line in the block shows the command and is not compared)."""
    out = []
    for m in re.finditer(r"<!-- output of: (.+?) -->\s*\n```[^\n]*\n(.*?)\n```", text, re.S):
        out.append((m.group(1).strip(), m.group(2).splitlines()))
    return out


def test_fenced_commands_are_found():
    cmds = fenced_commands("x\n```bash\nttrsim maps   # boards\nttrsim a \\\n  --b 1\n```\n"
                           "```python\nttrsim.x()\n```\n```console\n$ ttrsim p\nout\n```\n")
    assert cmds == ["ttrsim maps", "ttrsim a --b 1", "ttrsim p"]
    assert substitute("ttrsim simulate --games 1000000 --jobs -1", None)[3:] == [
        "simulate", "--games", str(min(GAMES, 1_000_000)), "--jobs", "1"]
    assert substitute("pip install -e .", None) is None
    assert substitute("ttrsim simulate --policy search --policy tickets", None)[-2:] == [
        "--games", str(min(GAMES, 10))]
    text = ("Run `ttrsim simulate --board usa\n--games 9` or `ttrsim profile RUN` (`ttrsim "
            "maps`), `ttrsim play --board x`, `ttrsim.simulate(b)`.\n```bash\n"
            "`ttrsim report runs/x`\n```\n<!-- output of: ttrsim maps -->\n```\na b\nc\n```\n")
    assert prose_commands(text) == ["ttrsim simulate --board usa --games 9"]
    assert documented_outputs(text) == [("ttrsim maps", ["a b", "c"])]


def test_every_command_not_run_is_still_on_its_page():
    for page, cmd in PROSE_SKIP:
        assert cmd in prose_commands((ROOT / page).read_text()), (page, cmd)
    searching = substitute("python scripts/expert_strength.py --part default --games 2000", None)
    assert searching[1:] == ["scripts/expert_strength.py", "--part", "default", "--games",
                             str(min(GAMES, 10))]


def test_python_blocks_are_found_and_made_small():
    text = ("```python\nimport ttrsim\nrun = ttrsim.simulate('usa', games=50_000, n_jobs=-1)\n"
            "ttrsim.replay(run, 123)\n```\ntext\n```python\nan.x(playouts=500)\n```\n")
    (line, first), (_, second) = python_blocks(text)
    assert line == 1 and second == "an.x(playouts=500)\n"
    assert substitute_python(first).splitlines()[:3] == [
        "import ttrsim", "import ttrsim",
        f"run = ttrsim.simulate('usa', games={max(GAMES, 124)}, n_jobs=1)"]
    assert "playouts=20" in substitute_python(second)


def test_every_python_block_not_run_is_still_on_its_page():
    for page, first in FRAGMENTS:
        assert first in [c.splitlines()[0] for _, c in python_blocks((ROOT / page).read_text())]


@pytest.fixture(scope="module")
def scheduler():
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                       dashboard_address=None, host="127.0.0.1")
    yield cluster.scheduler_address
    cluster.close()


def page_commands(page: str) -> list:
    """What the test runs of a page: its fenced commands, then those of its running text
    (but PROSE_SKIP's)."""
    text = (ROOT / page).read_text()
    return fenced_commands(text) + [c for c in prose_commands(text)
                                    if (page, c) not in PROSE_SKIP]


def left_in_scratch(folder: Path) -> list:
    """What a page's commands wrote beside the checkout's folders, not under `runs/`."""
    return sorted(p.name for p in folder.iterdir() if p.name not in SCRATCH)


@pytest.mark.slow
@pytest.mark.parametrize("page", [p.relative_to(ROOT).as_posix() for p in PAGES
                                  if page_commands(p.relative_to(ROOT).as_posix())])
def test_every_fenced_command_runs(page, tmp_path, scheduler):
    for name in ("docs", "examples", "scripts"):     # copies: a script may write its results
        shutil.copytree(ROOT / name, tmp_path / name)
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    for cmd in page_commands(page):
        argv = substitute(cmd, scheduler)
        if argv is None:
            continue
        settings = dict(a.split("=", 1) for a in argv if re.match(r"^[A-Z_]+=", a))
        argv = [a for a in argv if not re.match(r"^[A-Z_]+=", a)]
        if argv[1:4] == ["-m", "ttrsim", "play"]:
            serve_once(page, cmd, argv + ["--no-browser"], tmp_path, dict(env, **settings))
            continue
        out = subprocess.run(argv, cwd=tmp_path, env=dict(env, **settings), capture_output=True, text=True,
                             timeout=600)
        assert out.returncode == 0, (f"{page}: `{cmd}` exited {out.returncode}:\n"
                                     f"{out.stderr[-2000:]}")
    assert not left_in_scratch(tmp_path), (f"{page}: its commands write into the checkout: "
                                           f"{left_in_scratch(tmp_path)} (write under runs/)")


@pytest.mark.slow
@pytest.mark.parametrize("page, cmd, lines", [
    (p.relative_to(ROOT).as_posix(), cmd, lines) for p in PAGES
    for cmd, lines in documented_outputs(p.read_text())])
def test_a_documented_output_is_what_its_command_prints(page, cmd, lines, tmp_path):
    """The block below `<!-- output of: COMMAND -->` is COMMAND's output, at that size: a
    documented figure cannot drift from what the command prints."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    argv = shlex.split(cmd)
    argv = [sys.executable, "-m", "ttrsim"] + argv[1:] if argv[0] == "ttrsim" else argv
    out = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, f"{page}: `{cmd}` exited {out.returncode}: {out.stderr[-2000:]}"

    def norm(text_lines):     # the run's timing is the machine's, not the command's answer
        return [re.sub(r", [\d.]+ s$", "", line.rstrip()) for line in text_lines
                if line.strip() and not line.startswith("$ ")]     # (nor the prompt)

    got = norm(out.stdout.splitlines())
    assert norm(lines) == got[len(got) - len(norm(lines)):] or norm(lines) == got, (
        f"{page}: the output documented for `{cmd}` differs from what it prints:\n"
        + "\n".join(got))


def serve_once(page: str, cmd: str, argv: list, cwd, env: dict) -> None:
    """Run a server command (``ttrsim play``) until it prints its address, fetch the page
    there, stop it with SIGINT and check that it stopped cleanly (exit code 0)."""
    import signal
    import urllib.request

    p = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    try:
        lines = []
        while not any(line.startswith("open ") for line in lines):
            line = p.stdout.readline()
            assert line, f"{page}: `{cmd}` ended before printing an address: {p.stderr.read()}"
            lines.append(line)
        url = next(line for line in lines if line.startswith("open ")).split()[1]
        with urllib.request.urlopen(url, timeout=30) as r:
            assert r.status == 200, f"{page}: `{cmd}` served {url} with status {r.status}"
    finally:
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=60)
    assert p.returncode == 0, f"{page}: `{cmd}` exited {p.returncode}:\n{err[-2000:]}"


@pytest.mark.slow
@pytest.mark.parametrize("page", [p.relative_to(ROOT).as_posix() for p in PAGES
                                  if python_programs(p.relative_to(ROOT).as_posix())])
def test_every_python_block_runs(page, tmp_path):
    """Each Python block of the page runs on its own without an error (a missing import,
    a renamed function or argument fails here), but for the FRAGMENTS."""
    for name in ("docs", "examples", "scripts"):
        shutil.copytree(ROOT / name, tmp_path / name)
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               MPLBACKEND="Agg")
    for line, code in python_programs(page):
        out = subprocess.run([sys.executable, "-c", substitute_python(code)], cwd=tmp_path,
                             env=env, capture_output=True, text=True, timeout=600)
        assert out.returncode == 0, (f"{page}, the block at line {line}, failed:\n"
                                     f"{out.stderr[-2000:]}")
    assert not left_in_scratch(tmp_path), (f"{page}: its Python writes into the checkout: "
                                           f"{left_in_scratch(tmp_path)} (write under runs/)")
