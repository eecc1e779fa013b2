"""Every compiled module has a type stub (``ttrsim/_x.pyi``) naming exactly its public
names, and for each class its public methods and attributes."""
import ast
import importlib
import pathlib
import types

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
MODULES = ["_engine", "_policy", "_planning", "_policies", "_batch", "_env", "_fuzz", "_search",
           "_expert", "_counter"]


def test_the_list_of_compiled_modules_is_setup_py_s():
    tree = ast.parse((ROOT / "setup.py").read_text())
    found = [ast.literal_eval(node.value) for node in tree.body if isinstance(node, ast.Assign)
             and any(getattr(t, "id", "") == "MODULES" for t in node.targets)]
    assert found == [MODULES]


def stub_names(path):
    """Top-level names of a stub, and per class the names in its body."""
    names, classes = set(), {}
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign):
            names.add(node.target.id)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets)
        if isinstance(node, ast.ClassDef):
            body = set()
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    body.add(item.name)
                elif isinstance(item, ast.AnnAssign):
                    body.add(item.target.id)
            for base in node.bases:                 # what a stub base class names counts
                body |= classes.get(getattr(base, "id", ""), set())
            classes[node.name] = body
    return names, classes


def public_names(name):
    """The module's own public names (not modules, not names it imported from another
    ttrsim module)."""
    mod = importlib.import_module(f"ttrsim.{name}")
    others = [importlib.import_module(f"ttrsim.{m}") for m in MODULES if m != name]
    out = set()
    for n in dir(mod):
        obj = getattr(mod, n)
        if n.startswith("_") or isinstance(obj, types.ModuleType):
            continue
        if getattr(obj, "__module__", mod.__name__) not in (mod.__name__, "builtins"):
            continue
        if any(getattr(o, n, None) is obj and not isinstance(obj, (int, float)) for o in others
               if MODULES.index(o.__name__.split(".")[1]) < MODULES.index(name)):
            continue                                    # imported from a lower module
        out.add(n)
    return mod, out


@pytest.mark.parametrize("name", MODULES)
def test_every_compiled_module_has_a_stub_naming_its_public_names(name):
    path = ROOT / "ttrsim" / f"{name}.pyi"
    assert path.is_file(), f"ttrsim/{name}.pyi is missing: write the type stub of ext/ttrsim/{name}.pyx"
    assert ast.get_docstring(ast.parse(path.read_text())), f"{path.name} needs a docstring"
    mod, public = public_names(name)
    names, classes = stub_names(path)
    assert public <= names, f"{path.name} does not name {sorted(public - names)}"
    missing = {n for n in names if not hasattr(mod, n)}
    assert not missing, f"{path.name} names {sorted(missing)}, which ttrsim.{name} lacks"
    for cls_name, body in classes.items():
        cls = getattr(mod, cls_name)
        own = {n for n in vars(cls) if not n.startswith("_")}
        assert own <= body, f"{path.name}: class {cls_name} does not name {sorted(own - body)}"
        gone = {n for n in body if not n.startswith("__") and not hasattr(cls, n)}
        assert not gone, f"{path.name}: class {cls_name} names {sorted(gone)}, which it lacks"
