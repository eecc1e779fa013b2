"""The README's commands: CI runs exactly its test command, and its examples write only
into ignored folders."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def indented_commands() -> list:
    return [line.strip() for line in README.splitlines()
            if line.startswith("    python3 -m venv")]


def test_two_commands_and_ci_runs_the_test_command():
    """Each one-line command makes its own virtual environment and uses it (a system Python
    that is "externally managed" refuses a bare pip install), and CI runs the test line."""
    main_job, tests = indented_commands()
    assert main_job == ("python3 -m venv .venv && .venv/bin/pip install -e . && "
                        ".venv/bin/ttrsim simulate")
    assert tests == ('python3 -m venv .venv && .venv/bin/pip install -e ".[test]" && '
                     ".venv/bin/python -m pytest")
    assert ".venv/" in (ROOT / ".gitignore").read_text().splitlines()
    ci = [line for line in (ROOT / ".ci" / "run").read_text().splitlines()
          if line.strip() and not line.startswith("#") and not line.startswith(("set ", "cd "))]
    # before it, only the Debian packages of the browser tests (.ci/install-browser)
    assert ci == ["bash .ci/install-browser", tests]


def test_examples_write_only_into_ignored_folders():
    shell = "\n".join(re.findall(r"```bash\n(.*?)```", README, flags=re.S))
    outs = re.findall(r"--out\s+(\S+)", shell)
    reports = re.findall(r"^ttrsim report (\S+)\s*(?:#.*)?$", shell, flags=re.M)
    assert outs and reports
    ignored = {line.strip().strip("/") for line in (ROOT / ".gitignore").read_text().splitlines()
               if line.strip().endswith("/") and "*" not in line}
    for path in outs + [p + "/report" for p in reports]:
        top = path.split("/")[0]
        assert top in ignored, f"{path} would be written into a folder the repository tracks"


def test_every_dotted_name_resolves_with_the_imports_the_readme_names():
    """A name like ``ttrsim.env.aec_env`` must work after ``import ttrsim`` plus the
    ``import ttrsim.X`` lines the README itself gives (a subpackage not loaded by
    ``import ttrsim`` needs its own)."""
    import subprocess
    import sys

    names = sorted(set(re.findall(r"\bttrsim(?:\.[A-Za-z_]\w*)+", README)))
    imports = sorted(set(re.findall(r"\bimport (ttrsim(?:\.\w+)*)", README)))
    assert "ttrsim.env.aec_env" in names
    code = "\n".join([f"import {m}" for m in imports] + [
        "import operator, ttrsim",
        "bad = []",
        f"for name in {names!r}:",
        "    try:",
        "        operator.attrgetter(name.split('.', 1)[1])(ttrsim)",
        "    except AttributeError:",
        "        bad.append(name)",
        "print(' '.join(bad))"])
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env=dict(__import__("os").environ,
                                  PYTHONPATH=str(ROOT) + ":" + __import__("os").environ.get("PYTHONPATH", "")))
    assert out.stdout.split() == [], f"not reachable with the README's imports: {out.stdout}"
