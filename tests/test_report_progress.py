"""`ttrsim report` says what it is doing (a large run takes tens of seconds to load and
draw), and `--quiet` silences it."""
import subprocess
import sys


def _ttrsim(*args, cwd):
    return subprocess.run([sys.executable, "-m", "ttrsim", *args], cwd=cwd,
                          capture_output=True, text=True)


def test_report_shows_progress_unless_quiet(tmp_path):
    out = _ttrsim("simulate", "--games", "200", "--players", "2", "--out", "run", "--quiet",
                  cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    loud = _ttrsim("report", "run", "--out", "rep1", cwd=tmp_path)
    assert loud.returncode == 0, loud.stderr
    assert "loading run" in loud.stderr
    last = loud.stderr.replace("\r", "\n").strip().splitlines()[-1]
    assert last.startswith("report: 100%"), last
    quiet = _ttrsim("report", "run", "--out", "rep2", "--quiet", cwd=tmp_path)
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr
    assert (tmp_path / "rep1" / "index.html").read_text().count("<section") == \
        (tmp_path / "rep2" / "index.html").read_text().count("<section")
