"""The package's layers import only downward (pyproject.toml's import-linter contracts),
no module reaches into another's private names, and none imports the package face; the
compiled modules import downward and are reached only through their owners; scripts/
import no private name; few functions run long (docs/architecture.md)."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "ttrsim"


def modules():
    """(dotted name, path) of every Python module of the package."""
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        yield ".".join(parts), path


COMPILED = {p.stem for p in (ROOT / "ext" / "ttrsim").glob("*.pyx")}
SUBMODULES = {name for name, _ in modules()}


def imports(name: str, path: Path):
    """(module imported, names imported from it) of every import in the file, relative
    imports resolved."""
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, []
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                base = name.split(".")
                base = base[:len(base) - node.level + (1 if is_package else 0)]
                module = ".".join(base + ([module] if module else []))
            yield module, [a.name for a in node.names]


def private_part(module: str, importer: str) -> str | None:
    """The first private component of ``module`` that ``importer`` may not reach: one
    whose package is not ``importer``'s own package or one of its parents."""
    parts = module.split(".")
    for i, part in enumerate(parts):
        if part.startswith("_"):
            owner = ".".join(parts[:i])
            if not (importer == owner or importer.startswith(owner + ".")):
                return ".".join(parts[:i + 1])
    return None


def test_import_contracts_are_kept():
    cli = pytest.importorskip("importlinter.cli", reason="pip install import-linter (test extra)")
    assert cli.lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True,
                            no_logo=True) == 0, "lint-imports: a layer imports upward (see above)"


def test_no_module_imports_private_names_of_another():
    bad = []
    for name, path in modules():
        for module, names in imports(name, path):
            if not module.startswith("ttrsim"):
                continue
            if private_part(module, name):
                bad.append(f"{name} imports {module}")
            for n in names:
                full = f"{module}.{n}"
                dunder = n.startswith("__") and n.endswith("__")
                if n.startswith("_") and not dunder and full not in SUBMODULES and n not in COMPILED:
                    bad.append(f"{name} imports {n} from {module}")
    assert not bad, "\n".join(bad)


def test_no_module_imports_the_package_face():
    """``ttrsim/__init__.py`` imports every layer: a module importing it (for a name that
    is not a submodule) would import upward. import-linter cannot see this one, since the
    compiled modules, having no .py source, look to it like the package itself."""
    bad = []
    for name, path in modules():
        if name == "ttrsim":
            continue
        for module, names in imports(name, path):
            if module == "ttrsim" and not names:
                bad.append(f"{name}: import ttrsim")
            elif module == "ttrsim":
                for n in names:
                    if f"ttrsim.{n}" not in SUBMODULES and n not in COMPILED:
                        bad.append(f"{name}: from ttrsim import {n}")
    assert not bad, "\n".join(bad)


def test_the_checks_see_a_planted_upward_and_private_import(tmp_path):
    """The AST checks catch what they claim: a private name, a private module of another
    package, and the package face."""
    planted = tmp_path / "x.py"
    planted.write_text("from ttrsim.runner import _run_batch\nimport ttrsim\n"
                       "from ttrsim.analysis.inputs import source\n"
                       "from ttrsim.analysis._hidden import y\nfrom ttrsim import simulate\n")
    found = list(imports("ttrsim.report.x", planted))
    assert ("ttrsim.runner", ["_run_batch"]) in found
    assert private_part("ttrsim.analysis._hidden", "ttrsim.report.x") == "ttrsim.analysis._hidden"
    assert private_part("ttrsim.analysis._hidden", "ttrsim.analysis.seats") is None
    assert private_part("ttrsim._batch", "ttrsim.runner") is None
    assert ("ttrsim", []) in found and ("ttrsim", ["simulate"]) in found


def test_the_compiled_core_imports_no_python_layer_above_the_action_codec():
    """The compiled modules sit beneath every Python module but the action codec
    (``ttrsim.actions``, pure Python, importing nothing of ttrsim): a Python-level import of
    anything else from a .pyx file would close a circle (the search once imported the
    policy registry, which imports the search)."""
    allowed = {"ttrsim.actions"} | {f"ttrsim.{m}" for m in COMPILED}
    bad = []
    for pyx in sorted((ROOT / "ext" / "ttrsim").glob("*.pyx")):
        for n, line in enumerate(pyx.read_text().splitlines(), 1):
            words = line.split()
            cimport = "cimport" in words or words[:1] == ["cimport"]
            if (len(words) >= 2 and words[0] in ("import", "from") and not cimport
                    and words[1].startswith("ttrsim")):
                module = words[1].rstrip(",")
                if module not in allowed:
                    bad.append(f"{pyx.name}:{n}: {line.strip()}")
    assert not bad, "\n".join(bad)
    actions = PACKAGE / "actions.py"
    assert not [m for m, _ in imports("ttrsim.actions", actions) if m.startswith("ttrsim")]


def test_every_module_has_a_layer():
    """A new top-level module or package must be placed in the layers contract, else
    import-linter would not check it at all."""
    tomllib = pytest.importorskip("tomllib", reason="Python 3.11+ reads pyproject.toml")
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    layers = contracts["contracts"][0]["layers"]
    placed = {name.strip() for layer in layers for name in layer.replace(":", "|").split("|")}
    top = {n for n, _ in modules() if n.count(".") == 1} - {"ttrsim.__main__"}
    assert top <= placed, f"not in a layer of pyproject.toml: {sorted(top - placed)}"


def test_few_long_functions():
    """At most 3 functions (or methods) of the package and of scripts/ run over 80 lines:
    a long one is a room to split by what it does (counted by the ast from the ``def`` line
    to the last, docstring included)."""
    long = []
    for folder in (PACKAGE, ROOT / "scripts"):
        for path in sorted(folder.rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    lines = node.end_lineno - node.lineno + 1
                    if lines > 80:
                        long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} "
                                    f"({lines} lines)")
    assert len(long) <= 3, "functions over 80 lines:\n" + "\n".join(long)


# --- the compiled half ------------------------------------------------------------------

#: The compiled modules (``ext/ttrsim/*.pyx`` and ``*.pxd``) from the bottom up: each
#: cimports or imports only modules of a lower level (docs/architecture.md).
COMPILED_LEVELS = [
    ("_structs", "_bits"),                   # C structs and constants, bit helpers
    ("_rng",),                               # the random stream
    ("_engine",),                            # the rules
    ("_planning",),                          # route plans for the policies
    ("_policy",),                            # the policy interface, PolicyRef
    ("_policies",),                          # the built-in policies
    ("_search", "_expert", "_counter"),      # policies built on them
    ("_batch", "_env", "_fuzz"),             # the loops that play games
]
#: The Python modules (or packages) through which the rest of ttrsim reaches each
#: compiled module; none: only other compiled modules (or scripts/) use it.
OWNERS = {
    "_structs": (), "_bits": (), "_rng": (), "_planning": (),
    "_fuzz": ("ttrsim.fuzz",),
    "_engine": ("ttrsim.game",),
    "_policy": ("ttrsim.policies",),
    "_policies": ("ttrsim.policies",),
    "_counter": ("ttrsim.policies",),
    "_search": ("ttrsim.policies", "ttrsim.search"),
    "_expert": ("ttrsim.policies", "ttrsim.training"),
    "_batch": ("ttrsim.batches", "ttrsim.seats", "ttrsim.record"),
    "_env": ("ttrsim.env",),
}
EXT = ROOT / "ext" / "ttrsim"
ALL_COMPILED = {p.stem for p in EXT.glob("*.pyx")} | {p.stem for p in EXT.glob("*.pxd")} - {"__init__"}


def compiled_imports(path: Path):
    """(line number, module) of every ``cimport``/``import`` of a ttrsim module in a .pyx or
    .pxd file, at any indentation."""
    pattern = re.compile(r"^\s*(?:from\s+ttrsim\.(\w+)\s+c?import\b|c?import\s+ttrsim\.(\w+))")
    for n, line in enumerate(path.read_text().splitlines(), 1):
        m = pattern.match(line)
        if m:
            yield n, m.group(1) or m.group(2)


def test_every_compiled_module_has_a_level_and_owners():
    placed = [m for level in COMPILED_LEVELS for m in level]
    assert len(placed) == len(set(placed))
    assert set(placed) == ALL_COMPILED, "place each compiled module in COMPILED_LEVELS"
    assert set(OWNERS) == ALL_COMPILED, "name each compiled module's owners in OWNERS"


def test_compiled_modules_import_downward():
    level = {m: k for k, names in enumerate(COMPILED_LEVELS) for m in names}
    bad = []
    for path in sorted(EXT.glob("*.p[yx][xd]")):
        if path.stem == "__init__":
            continue
        for n, module in compiled_imports(path):
            if module == "actions":          # the pure-Python action codec, checked above
                continue
            if module not in level or level[module] >= level[path.stem]:
                bad.append(f"{path.name}:{n}: {path.stem} (level {level[path.stem]}) imports "
                           f"{module} (level {level.get(module, '?')})")
    assert not bad, "\n".join(bad)


def test_other_modules_reach_a_compiled_module_only_through_its_owner():
    bad = []
    for name, path in modules():
        for module, names in imports(name, path):
            targets = [module] if module.startswith("ttrsim._") else []
            if module == "ttrsim":
                targets = [f"ttrsim.{n}" for n in names if n in ALL_COMPILED]
            for target in targets:
                stem = target.split(".")[1]
                if stem not in ALL_COMPILED:
                    continue
                owners = OWNERS[stem]
                if not any(name == o or name.startswith(o + ".") for o in owners):
                    bad.append(f"{name} imports {target}: reach it through "
                               f"{' or '.join(owners) or 'no Python module'}")
    assert not bad, "\n".join(bad)


def test_the_compiled_checks_see_planted_imports(tmp_path):
    """The parsers catch what they claim: an indented cimport, a plain import and the
    ``from ttrsim import _x`` form."""
    pyx = tmp_path / "x.pyx"
    pyx.write_text("from ttrsim._engine cimport GameState\n    from ttrsim._batch import y\n"
                   "cimport ttrsim._rng\nfrom ttrsim.actions import decode\n")
    assert list(compiled_imports(pyx)) == [(1, "_engine"), (2, "_batch"), (3, "_rng"),
                                           (4, "actions")]
    planted = tmp_path / "y.py"
    planted.write_text("from ttrsim import _batch\nfrom ttrsim._engine import GameCore\n")
    assert list(imports("ttrsim.tables", planted)) == [("ttrsim", ["_batch"]),
                                                       ("ttrsim._engine", ["GameCore"])]


def compiled_imported_names(path: Path):
    """(line number, module, names) of every ``from ttrsim.<module> cimport/import names``
    in a .pyx or .pxd file, names in parentheses over several lines included."""
    text = path.read_text()
    pattern = re.compile(r"^[ \t]*from\s+ttrsim\.(\w+)\s+c?import\s+(\([^)]*\)|[^\n]*)", re.M)
    for m in pattern.finditer(text):
        body = re.sub(r"#[^\n]*", "", m.group(2)).strip("()")
        names = [n.split(" as ")[0].strip() for n in body.replace("\n", " ").split(",")]
        yield text.count("\n", 0, m.start()) + 1, m.group(1), [n for n in names if n]


def test_no_compiled_module_imports_private_names_of_another():
    """A compiled module takes only public names from another (a helper two modules share
    is public in the lower one, declared in its .pxd when cimported)."""
    bad = []
    for path in sorted(EXT.glob("*.p[yx][xd]")):
        for n, module, names in compiled_imported_names(path):
            if module == path.stem:
                continue
            for name in names:
                if name.startswith("_") and not (name.startswith("__") and name.endswith("__")):
                    bad.append(f"{path.name}:{n}: {name} from {module}")
    assert not bad, "\n".join(bad)


def test_the_compiled_name_check_sees_planted_private_names(tmp_path):
    pyx = tmp_path / "x.pyx"
    pyx.write_text("from ttrsim._policies import _rebuild\n"
                   "    from ttrsim._planning cimport (Plan,  # a plan\n"
                   "        _helper as h, UNIT)\nfrom ttrsim._bits cimport *\n")
    assert list(compiled_imported_names(pyx)) == [(1, "_policies", ["_rebuild"]),
                                                  (2, "_planning", ["Plan", "_helper", "UNIT"]),
                                                  (4, "_bits", ["*"])]


def test_the_map_names_every_compiled_module_with_its_level_and_owners():
    """docs/architecture.md's table of the compiled modules agrees with COMPILED_LEVELS and
    OWNERS: a row ``| `_x` | level | owners | ...``."""
    doc = (ROOT / "docs" / "architecture.md").read_text()
    rows = {}
    for line in doc.splitlines():
        m = re.match(r"\|\s*`(_\w+)`\s*\|\s*(\d+)\s*\|([^|]*)\|", line)
        if m:
            rows[m.group(1)] = (int(m.group(2)), set(re.findall(r"`(ttrsim[\w.]*)`", m.group(3))))
    want = {m: (k, set(OWNERS[m])) for k, names in enumerate(COMPILED_LEVELS) for m in names}
    assert rows == want


def script_problems(path: Path) -> list[str]:
    """What a script does that scripts/ may not: import a private module or name of ttrsim
    (a compiled module, ``ttrsim._version``, a ``_name``), import another script (what
    two scripts share belongs in the package), or use ``sys.path``."""
    bad = []
    scripts = {p.stem for p in path.parent.glob("*.py")} - {path.stem}
    for module, names in imports(f"scripts.{path.stem}", path):
        if module.partition(".")[0] in scripts:
            bad.append(f"{path.name} imports the script {module}")
        if not module.startswith("ttrsim"):
            continue
        hidden = [p for p in module.split(".") if p.startswith("_")]
        if hidden:
            bad.append(f"{path.name} imports {module}")
        for n in names:
            if n.startswith("_") and not (n.startswith("__") and n.endswith("__")):
                bad.append(f"{path.name} imports {n} from {module}")
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if (isinstance(node, ast.Attribute) and node.attr == "path"
                and isinstance(node.value, ast.Name) and node.value.id == "sys"):
            bad.append(f"{path.name}:{node.lineno} uses sys.path")
    return bad


def test_the_test_map_names_every_test_file():
    """docs/architecture.md's "Which test guards which module" names every tests/test_*.py."""
    doc = (ROOT / "docs" / "architecture.md").read_text()
    section = doc.split("## Which test guards which module")[1].split("\n## ")[0]
    named = set(re.findall(r"`(test_\w+\.py)`", section))
    files = {p.name for p in (ROOT / "tests").glob("test_*.py")}
    assert files <= named, f"not in docs/architecture.md's test map: {sorted(files - named)}"
    assert named <= files, f"the test map names files that do not exist: {sorted(named - files)}"


def test_scripts_use_the_public_api_only():
    """scripts/ import public modules and names of ttrsim only (the core they drive is
    public through its owners: docs/architecture.md) and never change sys.path."""
    bad = [b for path in sorted((ROOT / "scripts").glob("*.py")) for b in script_problems(path)]
    assert not bad, "\n".join(bad)


def test_the_script_check_sees_planted_imports(tmp_path):
    (tmp_path / "other.py").write_text("def play(): ...\n")
    planted = tmp_path / "x.py"
    planted.write_text("import sys\nfrom ttrsim._batch import play_batch\nimport ttrsim._fuzz\n"
                       "from ttrsim import _expert, __version__\n"
                       "from ttrsim._version import __version__\n"
                       "from ttrsim.runner import _run_batch\n"
                       "sys.path.insert(0, 'scripts')\nfrom ttrsim.batches import play_batch\n"
                       "from other import play\n")
    assert script_problems(planted) == [
        "x.py imports ttrsim._batch", "x.py imports ttrsim._fuzz", "x.py imports _expert from ttrsim",
        "x.py imports ttrsim._version", "x.py imports _run_batch from ttrsim.runner",
        "x.py imports the script other", "x.py:7 uses sys.path"]


# --- the one Python game loop ------------------------------------------------------------

#: Where a loop over the decision step may stand (a path or a folder), and why.
GAME_LOOP_ALLOWED = {
    "ttrsim/seats.py": "the seat's room: the one Python game loop",
    "ttrsim/record.py": "replays a recorded game's moves to analyse them: nothing is chosen",
    "scripts/bench_openspiel.py": "random moves to a benchmark position of OpenSpiel's state "
                                  "(OpenSpiel's side, whose one loop is evaluate_bots)",
}
_DECISION_CALLS = {"decide", "apply", "apply_action", "choose", "step"}
_GAME_STATE = {"is_over", "is_terminal", "current_player", "legal_action_codes", "legal_actions"}


def game_loops(path: Path):
    """Line numbers of the loops (``while``/``for``) in a file that play a game a decision
    at a time: the loop's body plays or asks for a move (``decide``, ``.apply``,
    ``.apply_action``, ``.choose``, ``.step``) and the loop reads the game's state
    (``is_over``, ``is_terminal``, ``current_player``, legal actions)."""
    def names(node):
        for n in ast.walk(node):
            if isinstance(n, ast.Attribute):
                yield n.attr
            elif isinstance(n, ast.Name):
                yield n.id

    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if not isinstance(node, (ast.While, ast.For)):
            continue
        calls = {c.func.attr if isinstance(c.func, ast.Attribute) else getattr(c.func, "id", "")
                 for c in ast.walk(node) if isinstance(c, ast.Call)}
        if calls & _DECISION_CALLS and set(names(node)) & _GAME_STATE:
            yield node.lineno


def test_no_python_game_loop_outside_the_seat():
    """One Python game loop (``ttrsim.seats``): training, adapters, scripts and studies
    play through its ``Table``/``play_game`` and never write their own loop, turn cap or
    seed formula (docs/architecture.md)."""
    found = []
    for path in sorted([*PACKAGE.rglob("*.py"), *(ROOT / "scripts").glob("*.py")]):
        rel = path.relative_to(ROOT).as_posix()
        if not rel.startswith(tuple(GAME_LOOP_ALLOWED)):
            found += [f"{rel}:{line}" for line in game_loops(path)]
    assert not found, ("a Python game loop outside ttrsim/seats.py (play it with "
                       "ttrsim.seats.Table / play_game):\n" + "\n".join(found))


def test_the_loop_check_sees_a_planted_loop(tmp_path):
    planted = tmp_path / "x.py"
    planted.write_text(
        "def a(g, p):\n    while not g.is_over():\n        g.apply(decide(p, g))\n"
        "def b(g, ps):\n    for _ in range(500):\n        q = g.current_player\n"
        "        if q == 0:\n            g.apply(ps[q].pick(g))\n"
        "def c(s, bot):\n    while not s.is_terminal():\n        s.apply_action(bot.step(s))\n"
        "def d(df):\n    for c in df.columns:\n        df[c].apply(len)\n"
        "def e(t):\n    while not t.over:\n        t.step()\n")
    assert list(game_loops(planted)) == [2, 5, 10]
