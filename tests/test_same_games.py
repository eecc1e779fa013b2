"""scripts/same_games.py finds a build that plays other games: a copy of this build with
one change planted in the recorder's seating and one in the environment's seeding is reported,
part by part, and an unchanged copy is not."""
import re
import shutil
from pathlib import Path

import pytest

from helpers import load_script

ROOT = Path(__file__).resolve().parents[1]
SMALL = ["--parts", "recorded", "env", "--record-games", "1", "--env-steps", "15",
         "--policies", "tickets", "random"]


def _copy(tmp_path, name):
    tree = tmp_path / name
    shutil.copytree(ROOT / "ttrsim", tree / "ttrsim",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return tree


def _plant(path: Path, old: str, new: str):
    text = path.read_text()
    assert text.count(old) == 1, f"{path.name} changed: plant again"
    path.write_text(text.replace(old, new))


def test_a_planted_difference_is_found_in_recorded_games_and_env_steps(tmp_path, capsys):
    same_games = load_script("same_games")
    same = _copy(tmp_path, "same")
    assert same_games.main([str(ROOT), str(same), *SMALL]) == 0
    out = capsys.readouterr().out
    assert ", 0 differ" in out and "recorded 0 of" in out and "env 0 of" in out

    planted = _copy(tmp_path, "planted")
    # the recorder seats the policies as the next game of a run would (mixed tables differ)
    _plant(planted / "ttrsim/record.py", "len(specs), policies, np.uint64(seed), int(game)",
           "len(specs), policies, np.uint64(seed), int(game) + 1")
    _plant(planted / "ttrsim/env/vector.py", "np.random.SeedSequence(int(seed),",
           "np.random.SeedSequence(int(seed) + 1,")
    assert same_games.main([str(ROOT), str(planted), *SMALL]) == 1
    out = capsys.readouterr().out
    found = {name: (int(d), int(n)) for name, d, n in
             re.findall(r"(\w+) (\d+) of (\d+)", out.split("by part:")[1].splitlines()[0])}
    assert set(found) == {"recorded", "env"}
    assert all(0 < d <= n for d, n in found.values()), found
    differs = [line.split()[-1] for line in out.splitlines() if "differs:" in line]
    assert any(k.startswith("recorded/") for k in differs)
    assert any(k.startswith("env/") for k in differs)
