"""A run's data is believed over its manifest: a manifest whose game count (or batch layout)
does not match the games its parts hold is refused by everything that reads the run
(``load_run``, ``ttrsim profile``, ``ttrsim report``), with one line saying both counts."""
from __future__ import annotations

import json

import pytest

import ttrsim
from ttrsim import cli


@pytest.fixture(scope="module", params=[False, True], ids=["per-event", "summary"])
def saved(request, tmp_path_factory):
    path = tmp_path_factory.mktemp("run") / "r"
    ttrsim.simulate("usa", ["random", "random"], games=30, seed=3, batch_size=10,
                    summary=request.param, out=path, n_jobs=1)
    return path


def edited(saved, tmp_path, **changes):
    import shutil

    path = tmp_path / "edited"
    shutil.copytree(saved, path)
    m = json.loads((path / "manifest.json").read_text())
    m.update(changes)
    (path / "manifest.json").write_text(json.dumps(m))
    return path


def test_the_untouched_run_loads_with_its_count(saved):
    assert ttrsim.load_run(saved).manifest["games"] == 30


@pytest.mark.parametrize("changes, words", [
    ({"games": 60, "batch_size": 20}, "says 60 games, its data holds 30 games"),
    ({"games": 20}, "says 20 games, its data holds 3 batch(es) (not the 2"),
    ({"games": 60}, "says 60 games, its data holds 3 batch(es) (not the 6"),
])
def test_an_edited_game_count_is_refused(saved, tmp_path, capsys, changes, words):
    path = edited(saved, tmp_path, **changes)
    with pytest.raises(ValueError, match="the manifest was edited") as err:
        ttrsim.load_run(path)
    assert words in str(err.value)
    for command in (["profile", str(path)], ["report", str(path), "--out", str(tmp_path / "rep")]):
        assert cli.main(command) == 2
        out, err = capsys.readouterr()
        assert words in err and len(err.splitlines()) == 1, err
        assert "60 games" not in out and "20 games" not in out
    assert not (tmp_path / "rep").exists()
