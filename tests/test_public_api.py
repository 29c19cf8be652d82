"""The public API is declared: every module of the five packages has an ``__all__`` right after its imports,
naming only things that exist, each once; ``from package import *`` gives exactly that list.

Names that another package imports from a module (``from decbounds.instances.gossip import gossip_matrix`` in
``algorithms``) are public by use, so they must be in that module's ``__all__`` unless they start with ``_``.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("bounds", "instances", "oracles", "algorithms", "paper_figures", "verify")


def _module_name(path: Path) -> str:
    # the folders at the top of the repository are installed as decbounds.<folder> (pyproject.toml)
    parts = ("decbounds", *path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULE_FILES = sorted(path for package in PACKAGES for path in (ROOT / package).glob("*.py"))
MODULES = [_module_name(path) for path in MODULE_FILES]


def _all_node(tree: ast.Module) -> ast.stmt | None:
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] \
            if isinstance(node, ast.AnnAssign) else []
        if any(isinstance(target, ast.Name) and target.id == "__all__" for target in targets):
            return node
    return None


def test_every_package_module_is_listed() -> None:
    assert len(MODULES) > 50 and "decbounds.instances.gossip" in MODULES
    assert "decbounds.paper_figures.__main__" in MODULES


@pytest.mark.parametrize("path", MODULE_FILES, ids=MODULES)
def test_every_module_declares_all_as_a_literal_list_of_unique_names(path: Path) -> None:
    node = _all_node(ast.parse(path.read_text(encoding="utf-8")))
    assert node is not None, f"{_module_name(path)} has no __all__"
    names = ast.literal_eval(node.value)  # type: ignore[attr-defined, arg-type]
    assert isinstance(names, list) and all(isinstance(name, str) for name in names)
    duplicates = sorted({name for name in names if names.count(name) > 1})
    assert not duplicates, f"{_module_name(path)}.__all__ repeats {duplicates}"


@pytest.mark.parametrize("path", MODULE_FILES, ids=MODULES)
def test_all_comes_right_after_the_imports(path: Path) -> None:
    """After every top-level import and before every function or class: the first thing a reader meets."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    node = _all_node(tree)
    assert node is not None
    imports = [n.lineno for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    definitions = [n.lineno for n in tree.body
                   if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)]
    assert all(line < node.lineno for line in imports), f"{_module_name(path)}: an import follows __all__"
    assert all(node.lineno < line for line in definitions), f"{_module_name(path)}: __all__ after a def"


@pytest.mark.parametrize("name", [m for m in MODULES if not m.endswith("__main__")])
def test_every_name_in_all_exists_and_star_import_gives_it(name: str) -> None:
    module = importlib.import_module(name)
    missing = [attribute for attribute in module.__all__ if not hasattr(module, attribute)]
    assert not missing, f"{name}.__all__ names {missing}, which {name} does not define"
    namespace: dict[str, object] = {}
    exec(f"from {name} import *", namespace)  # the star import is what __all__ governs
    assert sorted(set(namespace) - {"__builtins__"}) == sorted(module.__all__)


@pytest.mark.parametrize("package", PACKAGES)
def test_package_all_names_only_what_exists(package: str) -> None:
    module = importlib.import_module(f"decbounds.{package}")
    assert [name for name in module.__all__ if not hasattr(module, name)] == []
    assert all(not name.startswith("_") for name in module.__all__)


def _imports_between_packages() -> list[tuple[str, str, str]]:
    """(importing file, module, name) for every ``from <module of the packages> import name`` in them."""
    found = []
    for path in MODULE_FILES:
        importer = _module_name(path)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in MODULES
                    and node.module.split(".")[1] != importer.split(".")[1]):
                found += [(importer, node.module, alias.name) for alias in node.names]
    return found


def test_names_other_packages_import_are_public() -> None:
    imports = _imports_between_packages()
    assert imports  # the packages do use each other
    private_use = []
    for importer, module_name, name in imports:
        if name.startswith("_"):
            continue
        module = importlib.import_module(module_name)
        is_submodule = f"{module_name}.{name}" in MODULES
        if not is_submodule and name not in module.__all__:
            private_use.append(f"{importer} imports {name} from {module_name}, not in its __all__")
    assert private_use == []
