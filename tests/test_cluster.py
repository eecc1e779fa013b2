"""The commands that play many games on a dask.distributed cluster (``--backend dask
--scheduler ADDRESS``): the same printed tables, CSV and saved files as on this machine; a
worker killed mid-study costing nothing, an interrupted study resumed on the cluster; and
every mistake (dask missing, the options half given, no scheduler at the address or
something else there, no worker, another ttrsim on a worker) one line within a bounded
time, never a wait without end."""
from __future__ import annotations

import http.server
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ttrsim._version import __version__ as VERSION
from ttrsim.cli import main

distributed = pytest.importorskip("distributed")
import dask  # noqa: E402  (installed with distributed)

ROOT = Path(__file__).resolve().parents[1]
ENV = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
VARIANT = str(ROOT / "docs" / "examples" / "europe-variant.json")

# The four studies on small budgets, each with every table it can write (files relative to
# the directory it runs in), and several tasks each so that their order on the cluster varies.
STUDIES = {
    "league": ["league", "--board", "newyork", "--policy", "random", "--policy", "greedy",
               "--policy", "tickets", "--games", "24", "--batch-size", "6",
               "--resamples", "50", "--out", "out"],
    "compare": ["compare", "--variant", VARIANT, "--players", "2", "--games", "2500",
                "--rows", "8", "--csv", "table.csv"],
    "route-importance": ["route-importance", "--board", "newyork", "--players", "2",
                         "--routes", "1,2,3", "--games", "200", "--batch-size", "50",
                         "--group-size", "2", "--confirm", "1", "--csv", "table.csv",
                         "--out", "out"],
    "ticket-fairness": ["ticket-fairness", "--board", "newyork", "--players", "2",
                        "--games", "400", "--batch-size", "100", "--resamples", "50",
                        "--csv", "table.csv", "--out", "out"],
}
COMMANDS = ["simulate", *STUDIES]


@pytest.fixture(scope="module")
def cluster():
    """A scheduler and two single-thread worker processes on free ports of this machine,
    and a client of it for the tests to look at what it did."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=":0") as c, \
            distributed.Client(c.scheduler_address, set_as_default=False) as client:
        yield c.scheduler_address, client


def scheduler_alone():
    """A scheduler without workers, in this process, on a free port."""
    return distributed.LocalCluster(n_workers=0, processes=False, protocol="tcp",
                                    host="127.0.0.1", dashboard_address=":0")


def one_line_error(capsys, argv, *needles):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert err.startswith(f"ttrsim {argv[0]}: error: "), err
    for needle in needles:
        assert needle in err, err
    return err


def within(seconds: float, call):
    """``call()``'s value, failing (instead of hanging the suite) when it has not returned
    within ``seconds``."""
    box = {}

    def run():
        try:
            box["value"] = call()
        except BaseException as exc:            # noqa: BLE001 - raised again below
            box["error"] = exc
    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"still waiting after {seconds} s"
    if "error" in box:
        raise box["error"]
    return box["value"]


def finished_on_cluster(client) -> int:
    """How many ttrsim tasks the cluster's workers have finished so far."""
    def count(dask_scheduler):
        return sum(1 for t in dask_scheduler.transition_log
                   if str(t[0]).startswith("_on_worker") and t[2] == "memory")
    return client.run_on_scheduler(count)


def run_in(directory: Path, argv, capsys, monkeypatch) -> str:
    """``ttrsim argv --quiet`` run in ``directory`` (made here); its standard output."""
    directory.mkdir()
    monkeypatch.chdir(directory)
    assert main([*argv, "--quiet"]) == 0, capsys.readouterr().err
    return capsys.readouterr().out


def steady(value):
    """A manifest without the wall times, which differ from run to run."""
    if isinstance(value, dict):
        return {k: steady(v) for k, v in value.items() if not k.startswith("wall_seconds")}
    if isinstance(value, list):
        return [steady(v) for v in value]
    return value


def assert_same_files(a: Path, b: Path) -> None:
    """The same files under ``a`` and ``b``: tables value for value, the rest byte for byte."""
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    assert files
    for rel in files:
        x, y = a / rel, b / rel
        if x.suffix == ".json":
            assert steady(json.loads(x.read_text())) == steady(json.loads(y.read_text())), rel
        elif x.suffix == ".parquet":
            pd.testing.assert_frame_equal(pd.read_parquet(x), pd.read_parquet(y))
        elif x.suffix == ".npz":            # a zip: its entries carry the time written
            with np.load(x) as p, np.load(y) as q:
                assert sorted(p.files) == sorted(q.files), rel
                for k in p.files:
                    np.testing.assert_array_equal(p[k], q[k], err_msg=f"{rel}: {k}")
        else:
            assert x.read_bytes() == y.read_bytes(), rel


@pytest.mark.parametrize("name", list(STUDIES))
def test_each_study_on_the_cluster_gives_what_it_gives_here(name, cluster, tmp_path, capsys,
                                                            monkeypatch):
    address, client = cluster
    argv = STUDIES[name]
    here = run_in(tmp_path / "here", argv, capsys, monkeypatch)
    before = finished_on_cluster(client)
    there = run_in(tmp_path / "there", [*argv, "--backend", "dask", "--scheduler", address],
                   capsys, monkeypatch)
    assert finished_on_cluster(client) > before        # played there, not in this process
    wall = re.compile(r", [\d.]+ s$", flags=re.M)      # the league's time, in its first line
    assert wall.sub("", there) == wall.sub("", here)
    assert_same_files(tmp_path / "here", tmp_path / "there")


def test_tasks_run_on_the_workers_even_with_one_worker_thread():
    """joblib's dask backend plays in the calling process when the cluster has a single
    thread; the tasks must go to the cluster whatever its size."""
    from ttrsim.dispatch import run_tasks

    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=":0") as one, \
            distributed.Client(one.scheduler_address, set_as_default=False) as client:
        pids = set(run_tasks(os.getpid, [()] * 3, backend="dask",
                             scheduler=one.scheduler_address))
        worker = set(client.run(os.getpid).values())
    assert pids == worker and os.getpid() not in pids


def _ttrsim(*argv, cwd) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "ttrsim", *argv], cwd=cwd, env=ENV, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            # a clean SIGINT disposition whatever the test runner inherited
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def _wait_for(condition, what: str, process: subprocess.Popen, seconds: float = 120):
    deadline = time.monotonic() + seconds
    while not condition():
        assert process.poll() is None, f"the study ended before {what}"
        assert time.monotonic() < deadline, f"no {what} after {seconds} s"
        time.sleep(0.02)


def _saved(out: Path) -> dict:
    """The study's finished tasks on disk: name -> (modification time, bytes)."""
    tasks = out / "tasks"
    return {p.name: (p.stat().st_mtime_ns, p.read_bytes())
            for p in (tasks.iterdir() if tasks.is_dir() else ())}


@pytest.mark.slow
def test_a_worker_killed_and_the_study_interrupted_lose_nothing(cluster, tmp_path, capsys,
                                                               monkeypatch):
    """A third worker, a process of its own, is killed (SIGKILL) while it plays a task: the
    scheduler gives the task to the others. The study is then interrupted (Ctrl-C): its
    tasks leave the cluster, and the same command resumes on the cluster from the tasks
    saved. The tables are those of the study played here, and no saved task is played
    again."""
    address, client = cluster
    argv = ["route-importance", "--board", "usa", "--players", "4", "--policy", "greedy",
            "--routes", "1,2,3", "--group-size", "1", "--games", "300", "--batch-size", "30",
            "--csv", "table.csv", "--out", "out"]          # 30 tasks of 60 games
    victim = subprocess.Popen([sys.executable, "-m", "dask", "worker", address, "--name", "victim",
                               "--nthreads", "1", "--no-nanny", "--no-dashboard",
                               "--host", "127.0.0.1"], env=ENV,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    study = None
    try:
        here = run_in(tmp_path / "here", argv, capsys, monkeypatch)
        there = tmp_path / "there"
        there.mkdir()
        cmd = [*argv, "--quiet", "--backend", "dask", "--scheduler", address]
        client.wait_for_workers(3, timeout=60)
        names = client.run(lambda dask_worker: dask_worker.name)
        victim_at = next(w for w, n in names.items() if n == "victim")
        study = _ttrsim(*cmd, cwd=there)
        _wait_for(lambda: _saved(there / "out") and client.processing([victim_at])[victim_at],
                  "a task was saved while the victim played one", study)
        victim.kill()
        at_kill = len(_saved(there / "out"))
        _wait_for(lambda: len(_saved(there / "out")) > at_kill, "a task saved after the kill",
                  study)
        study.send_signal(signal.SIGINT)
        _, err = study.communicate(timeout=60)
    finally:
        for process in (victim, study):
            if process is not None and process.poll() is None:
                process.kill()
                process.wait()
    assert study.returncode == 130, err
    lines = err.splitlines()
    assert lines[-1] == ("ttrsim route-importance: error: interrupted; every finished task is "
                         "saved in out: the same command resumes"), err
    # dask's note when the killed worker held a result not yet fetched (played again)
    assert all("Couldn't gather" in line for line in lines[:-1]), err
    assert victim_at not in client.nthreads()
    within(30, lambda: _wait_until_idle(client))       # the interrupted tasks were cancelled
    saved = _saved(there / "out")
    assert 0 < len(saved) < 30
    resumed = _ttrsim(*cmd, cwd=there)
    out, err = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, err
    assert out == here
    assert_same_files(tmp_path / "here", there)
    after = _saved(there / "out")
    assert len(after) == 30 and all(after[k] == v for k, v in saved.items())


def _wait_until_idle(client) -> None:
    while any(client.processing().values()):
        time.sleep(0.05)


# --- mistakes ---------------------------------------------------------------------------

def _args(command: str) -> list:
    """The smallest valid command line of each command that takes --backend."""
    if command in STUDIES:
        return [a for a in STUDIES[command]
                if a not in ("--out", "out", "--csv", "table.csv")] + ["--quiet"]
    return ["simulate", "--board", "newyork", "--players", "2", "--games", "10", "--quiet"]


@pytest.mark.parametrize("command", COMMANDS)
def test_scheduler_and_backend_go_together(command, capsys):
    one_line_error(capsys, [*_args(command), "--scheduler", "tcp://127.0.0.1:8786"],
                   "--scheduler", "add --backend dask")
    one_line_error(capsys, [*_args(command), "--backend", "dask"],
                   "--backend dask needs --scheduler ADDRESS")


@pytest.mark.parametrize("command", COMMANDS)
def test_without_dask_each_command_names_the_extra(command, capsys, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)      # as if not installed
    monkeypatch.chdir(tmp_path)
    one_line_error(capsys, [*_args(command), "--out", "never", "--backend", "dask",
                            "--scheduler", "tcp://127.0.0.1:8786"]
                   if command != "compare" else
                   [*_args(command), "--backend", "dask", "--scheduler", "tcp://127.0.0.1:8786"],
                   'pip install -e ".[dask]"')
    assert not (tmp_path / "never").exists()                  # refused before writing


@pytest.mark.parametrize("study", ["league", "route_importance", "ticket_fairness"])
def test_without_dask_a_study_writes_nothing(study, tmp_path, monkeypatch):
    """The Python functions refuse the dask backend before making their directory."""
    import ttrsim.analysis.studies as studies

    monkeypatch.setitem(sys.modules, "distributed", None)
    out = tmp_path / "never"
    with pytest.raises(ImportError, match=r'pip install -e "\.\[dask\]"'):
        getattr(studies, study)("newyork", 2, **({"policies": ["random", "greedy"]}
                                                 if study == "league" else {}),
                                games=10, out=out, backend="dask",
                                scheduler="tcp://127.0.0.1:8786")
    assert not out.exists()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def silent_peer():
    """An address that accepts connections and never says a word (dask's own client would
    wait for it for ever)."""
    server = socket.create_server(("127.0.0.1", 0))
    held = []

    def accept():
        while True:
            try:
                held.append(server.accept()[0])
            except OSError:
                return
    threading.Thread(target=accept, daemon=True).start()
    yield f"tcp://127.0.0.1:{server.getsockname()[1]}"
    server.close()
    for conn in held:
        conn.close()


@pytest.fixture
def web_page():
    """A web server, as the dashboard's port would be."""
    class Quiet(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"tcp://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def babbler():
    """An address that answers every connection with bytes that are not dask's."""
    server = socket.create_server(("127.0.0.1", 0))

    def answer():
        while True:
            try:
                conn = server.accept()[0]
            except OSError:
                return
            with conn:
                conn.sendall(b"\xff" * 64)
                conn.recv(1)
    threading.Thread(target=answer, daemon=True).start()
    yield f"tcp://127.0.0.1:{server.getsockname()[1]}"
    server.close()


UNREACHED = ["cannot reach the dask scheduler at", "no answer within 2 s", "'dask scheduler'",
             "8787 is its dashboard"]


@pytest.mark.parametrize("peer, needles", [
    ("nothing", UNREACHED),
    ("silent", UNREACHED),
    ("web page", UNREACHED),           # dask's handshake gets no answer it reads
    ("babbler", ["is not a dask scheduler", "8787 is its dashboard"]),
    ("worker", ["is a dask Worker, not the scheduler"]),
    ("no address", ["is no dask scheduler address", "invalid address"]),
])
def test_no_scheduler_at_the_address_is_said_within_the_timeout(peer, needles, request, capsys,
                                                                cluster, tmp_path):
    address = {"nothing": lambda: f"tcp://127.0.0.1:{_free_port()}",
               "silent": lambda: request.getfixturevalue("silent_peer"),
               "web page": lambda: request.getfixturevalue("web_page"),
               "babbler": lambda: request.getfixturevalue("babbler"),
               "worker": lambda: next(iter(cluster[1].nthreads())),
               "no address": lambda: "nowhere::"}[peer]()
    out = tmp_path / "never"
    start = time.monotonic()
    with dask.config.set({"distributed.comm.timeouts.connect": "2s"}):
        within(30, lambda: one_line_error(capsys, [*_args("league"), "--out", str(out),
                                                   "--backend", "dask", "--scheduler", address],
                                          address, *needles))
    assert time.monotonic() - start < 15
    assert not out.exists()


def test_a_scheduler_without_workers_is_said_after_the_wait(capsys):
    with scheduler_alone() as empty, \
            dask.config.set({"ttrsim.worker-wait": 1}):
        within(30, lambda: one_line_error(
            capsys, [*_args("simulate"), "--backend", "dask", "--scheduler", empty.scheduler_address],
            "has had no worker for 1 s", f"dask worker {empty.scheduler_address}",
            "DASK_TTRSIM__WORKER_WAIT"))


def test_another_ttrsim_on_a_worker_is_refused(cluster, capsys, monkeypatch, tmp_path):
    """At connection (the workers' installed version) and on the worker itself, for a worker
    that joins later (here one whose ttrsim says it is 0.0.1)."""
    import ttrsim.dispatch

    address, client = cluster
    with monkeypatch.context() as m:
        m.setattr(ttrsim.dispatch, "__version__", "9.9.9")
        one_line_error(capsys, [*_args("simulate"), "--backend", "dask", "--scheduler", address],
                       f"runs ttrsim {VERSION}", "this process, ttrsim 9.9.9",
                       "install the same ttrsim on every worker")
    older = tmp_path / "older.py"
    older.write_text("import ttrsim.dispatch\nttrsim.dispatch.__version__ = '0.0.1'\n")
    with scheduler_alone() as empty:
        worker = subprocess.Popen([sys.executable, "-m", "dask", "worker", empty.scheduler_address,
                                   "--nthreads", "1", "--no-nanny", "--no-dashboard",
                                   "--host", "127.0.0.1", "--preload", str(older)], env=ENV,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            with distributed.Client(empty.scheduler_address, set_as_default=False) as c:
                c.wait_for_workers(1, timeout=60)
            one_line_error(capsys, [*_args("simulate"), "--backend", "dask", "--scheduler",
                                    empty.scheduler_address],
                           f"a dask worker runs ttrsim 0.0.1 and this process ttrsim {VERSION}")
        finally:
            worker.kill()
            worker.wait()
