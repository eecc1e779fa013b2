"""A platform wheel holds every compiled module and the shipped .pxd files, and installs
and runs where the source tree is nowhere on the path (a user without a C compiler gets
this wheel)."""
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _modules() -> list:
    text = (ROOT / "setup.py").read_text()
    start = text.index("MODULES = [")
    return eval(text[start + len("MODULES = "):text.index("]", start) + 1])


@pytest.mark.slow
def test_wheel_installs_and_simulates_outside_the_source_tree(tmp_path):
    # built from a copy of the sources: the build writes build/ and an egg-info beside them,
    # which must not happen in the checkout while other tests read it
    src = tmp_path / "src"
    for name in ("ttrsim", "ext"):
        shutil.copytree(ROOT / name, src / name,
                        ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyd"))
    for name in ("setup.py", "pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "-q", "-w", str(dist), str(src)], check=True)
    wheels = list(dist.glob("ttrsim-*.whl"))
    assert len(wheels) == 1, wheels
    wheel = wheels[0]
    assert "-none-any" not in wheel.name, "a pure-Python wheel lacks the compiled core"
    names = zipfile.ZipFile(wheel).namelist()
    for mod in _modules():
        assert any(n.startswith(f"ttrsim/{mod}.") and n.endswith((".so", ".pyd"))
                   for n in names), f"{mod} is not compiled into the wheel"
    pxds = {Path(p).name for p in (ROOT / "ext" / "ttrsim").glob("*.pxd")}
    assert pxds <= {Path(n).name for n in names if n.endswith(".pxd")}
    from ttrsim._expert import DEFAULT_MODEL, SHIPPED_MODELS

    for model in {DEFAULT_MODEL, *SHIPPED_MODELS.values()}:       # every model by name
        assert f"ttrsim/data/{model}" in names, model
    assert {"ttrsim/viewer.html", "ttrsim/viewer_board.js", "ttrsim/play/page.html"} <= set(names)
    assert not any(n.endswith((".pyx", ".c")) for n in names)

    # a fresh environment: the wheel, its dependencies from the base interpreter where it has
    # them; the checkout is not on the path and the command runs from elsewhere
    venv = tmp_path / "venv"
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    py = venv / "bin" / "python"
    # (--no-compile: the dependencies' modules are compiled when imported, not all ahead)
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-compile", str(wheel)], check=True)
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    where = subprocess.run([str(py), "-c", "import ttrsim, sys; print(ttrsim.__file__)"],
                           cwd=work, env=env, capture_output=True, text=True, check=True)
    assert Path(where.stdout.strip()).is_relative_to(venv), where.stdout
    out = subprocess.run([str(venv / "bin" / "ttrsim"), "simulate", "--games", "200",
                          "--players", "2", "--quiet"], cwd=work, env=env,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "win" in out.stdout.lower()
