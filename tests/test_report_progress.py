"""`ttrsim report` says what it is doing on a terminal (a large run takes tens of seconds to
load and draw), and `--quiet` silences it."""
import fcntl
import os
import pty
import subprocess
import struct
import sys
import termios

import ttrsim
from ttrsim.report import write_report


def test_write_report_shows_a_bar_over_the_sections(tmp_path, capsys):
    run = ttrsim.simulate("newyork", ["tickets", "random"], games=50, seed=1)
    write_report(run, tmp_path / "loud", progress=True)
    last = capsys.readouterr().err.replace("\r", "\n").strip().splitlines()[-1]
    assert last.startswith("report: 100%"), last
    write_report(run, tmp_path / "quiet")
    assert capsys.readouterr().err == ""


def _on_a_terminal(argv, cwd) -> str:
    """Run ``python -m ttrsim ...`` with its stderr on a pseudo-terminal; its stderr text."""
    leader, follower = pty.openpty()
    # a terminal of 100 columns (a new pseudo-terminal has none, and a bar then has no room)
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 100, 0, 0))
    proc = subprocess.Popen([sys.executable, "-m", "ttrsim", *argv], cwd=cwd,
                            stdout=subprocess.DEVNULL, stderr=follower)
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 4096)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    assert proc.wait() == 0
    os.close(leader)
    return b"".join(chunks).decode(errors="replace")


def test_the_command_reports_progress_on_a_terminal_unless_quiet(tmp_path):
    subprocess.run([sys.executable, "-m", "ttrsim", "simulate", "--games", "200", "--players",
                    "2", "--out", "run", "--quiet"], cwd=tmp_path, check=True,
                   capture_output=True)
    loud = _on_a_terminal(["report", "run", "--out", "rep1"], tmp_path)
    assert "loading run" in loud and "report: 100%" in loud
    assert _on_a_terminal(["report", "run", "--out", "rep2", "--quiet"], tmp_path) == ""
