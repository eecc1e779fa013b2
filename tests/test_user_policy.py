"""A policy compiled by a user against the shipped .pxd files (examples/user_policy)
plays full games through play_batch."""
import importlib
import shutil
import sys
from pathlib import Path

import pytest

import ttrsim
from ttrsim._batch import game_seeds, play_batch
from ttrsim.game import compile_board
from ttrsim.policies import make_policy

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "user_policy" / "greedy_claim.pyx"

cythonize = pytest.importorskip("Cython.Build").cythonize


def build(source: Path, where: Path):
    """Compile one .pyx into `where` the way a user would: cythonize with
    ttrsim.get_include() on the include path, then setuptools' build_ext."""
    from setuptools import Extension
    from setuptools.dist import Distribution

    pyx = where / source.name
    shutil.copy(source, pyx)
    ext = Extension(pyx.stem, [str(pyx)])
    dist = Distribution({"name": pyx.stem, "ext_modules": cythonize(
        [ext], include_path=[ttrsim.get_include()], quiet=True,
        compiler_directives={"language_level": 3})})
    cmd = dist.get_command_obj("build_ext")
    cmd.build_lib = str(where)
    cmd.build_temp = str(where / "tmp")
    cmd.ensure_finalized()
    cmd.run()


@pytest.fixture(scope="module")
def greedy_claim(tmp_path_factory):
    where = tmp_path_factory.mktemp("user_policy")
    build(EXAMPLE, where)
    sys.path.insert(0, str(where))
    try:
        yield importlib.import_module("greedy_claim")
    finally:
        sys.path.remove(str(where))
        sys.modules.pop("greedy_claim", None)


def test_get_include_holds_the_pxd_files():
    inc = Path(ttrsim.get_include()) / "ttrsim"
    for name in ("_structs.pxd", "_engine.pxd", "_policy.pxd", "_rng.pxd", "_planning.pxd"):
        assert (inc / name).exists(), name


@pytest.mark.parametrize("board,n", [("usa", 4), ("europe", 3), ("newyork", 2)])
def test_user_compiled_policy_plays_full_games(greedy_claim, board, n):
    cb = compile_board(board)
    mine = greedy_claim.GreedyClaim()
    assert isinstance(mine, ttrsim.Policy) and mine.spec == "greedy_claim"
    policies = [mine] + [make_policy("tickets", cb.board) for _ in range(n - 1)]
    out = play_batch(cb, n, policies, game_seeds(8, 200), rotate=True)
    assert not out["truncated"].any()
    assert mine.claims_made > 200            # it did claim routes
    assert (out["scores"][:, :, 15][out["slot"] == 0] > 0).mean() > 0.9


def test_user_policy_copies_through_make_policy(greedy_claim):
    p = greedy_claim.GreedyClaim()
    assert make_policy(p, None) is not p
