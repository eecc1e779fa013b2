"""The package's layers import only downward (pyproject.toml's import-linter contracts),
no module reaches into another's private names, and none imports the package face."""
from __future__ import annotations

import ast
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
