"""What the repository ships (example reports, docs) carries no path of the machine that
made it and no ttrsim version but the package's own."""
import re
from pathlib import Path

import ttrsim

ROOT = Path(__file__).resolve().parents[1]
ABSOLUTE = re.compile(r"(?<![\w.~])(/(?:work|root|home|tmp|Users|private|var/folders)/\S+"
                      r"|[A-Za-z]:\\\\\S+)")
VERSION = re.compile(r"(?:Written by ttrsim |ttrsim_version[,:=\s\"']+)(\d+\.\d+\.\d+)")


def shipped() -> list:
    files = [p for p in (ROOT / "reports").rglob("*")
             if p.suffix in (".html", ".csv", ".md", ".json", ".txt")]
    return files + sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]


def test_no_machine_paths():
    bad = {}
    for path in shipped():
        hits = ABSOLUTE.findall(path.read_text(errors="replace"))
        if hits:
            bad[str(path.relative_to(ROOT))] = sorted(set(hits))[:3]
    assert not bad, f"absolute paths of a machine in shipped files: {bad}"


def test_reports_are_written_by_this_version():
    bad = {}
    for path in shipped():
        if "reports" not in path.parts:
            continue
        versions = set(VERSION.findall(path.read_text(errors="replace")))
        if versions - {ttrsim.__version__}:
            bad[str(path.relative_to(ROOT))] = sorted(versions)
    assert not bad, (f"reports made by another ttrsim version than {ttrsim.__version__}: {bad}"
                     " (python scripts/make_reports.py makes them again)")


def test_the_patterns_catch_what_they_should():
    assert ABSOLUTE.findall("model /work/main/ttrsim/data/x.json here") and \
        ABSOLUTE.findall(r"C:\\Users\\me\\run")
    assert not ABSOLUTE.findall("ttrsim/data/expert-v4.json and runs/eu4 and ~/x")
    assert VERSION.findall("<p>Written by ttrsim 0.1.0.</p>") == ["0.1.0"]
    assert VERSION.findall("ttrsim_version,0.2.0") == ["0.2.0"]
