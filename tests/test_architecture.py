"""docs/architecture.md's import rules are the imports: every package's imports (statements at any depth,
``TYPE_CHECKING`` included, and module paths written as strings for importlib or a registry) against the
lines "- `X` imports: ..." of the page, both ways."""

from __future__ import annotations

import ast
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "architecture.md"
#: a module path written as a string: "decbounds.algorithms.rules:DSGT", "decbounds.pep.cli"
MODULE_STRING = re.compile(r"^decbounds(?:\.\w+)+(?::\w+(?:\.\w+)*)?$")
RULE = re.compile(r"^- `([\w.]+)` imports: (.*)$")
DEPRECATED = re.compile(r"^- deprecated until [\d.]+: `([\w/.]+)` imports `(\w+)`")  # a file, or a folder/


def stated() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """The page's arrows: {unit: packages it imports}, and the deprecated exceptions {file: packages}."""
    rules: dict[str, set[str]] = {}
    exceptions: dict[str, set[str]] = {}
    for line in PAGE.read_text(encoding="utf-8").splitlines():
        if match := RULE.match(line):
            named = set(re.findall(r"`(\w+)`", match[2]))
            rules[match[1]] = set() if match[2].strip() == "nothing" else named
        elif match := DEPRECATED.match(line):
            exceptions.setdefault(match[1], set()).add(match[2])
    return rules, exceptions


def unit_of(path: pathlib.Path, packages: set[str]) -> str | None:
    """The unit of the rules a file belongs to: its package, or ``decbounds.<module>`` of the namespace."""
    top = path.relative_to(ROOT).parts[0]
    if top in packages:
        return top
    if top == "decbounds":
        return f"decbounds.{path.stem}"
    return None


def imported(tree: ast.AST) -> list[tuple[str, int]]:
    """Every module a file names: import statements anywhere, and module paths in strings (not
    docstrings, which name modules in prose)."""
    docstrings = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant):
            docstrings.add(id(body[0].value))
    found: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "decbounds":
                found += [(f"decbounds.{alias.name}", node.lineno) for alias in node.names]
            else:
                found.append((node.module, node.lineno))
        elif isinstance(node, ast.ImportFrom):
            raise AssertionError(f"a relative import at line {node.lineno}: the rules read absolute ones")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings \
                and MODULE_STRING.match(node.value):
            found.append((node.value, node.lineno))
    return found


def actual(packages: set[str]) -> dict[str, dict[str, list[str]]]:
    """{unit: {package it imports: [where]}} over every module of the distribution."""
    edges: dict[str, dict[str, list[str]]] = {}
    for top in [*sorted(packages), "decbounds"]:
        for path in sorted((ROOT / top).rglob("*.py")):
            unit = unit_of(path, packages)
            if unit is None or "out" in path.relative_to(ROOT).parts:
                continue
            edges.setdefault(unit, {})
            for module, line in imported(ast.parse(path.read_text(encoding="utf-8"))):
                target = module.split(".")[1].split(":")[0] if module.startswith("decbounds.") else None
                if target in packages and target != unit:
                    where = f"{path.relative_to(ROOT)}:{line} ({module})"
                    edges[unit].setdefault(target, []).append(where)
    return edges


def test_the_page_states_a_rule_for_every_package() -> None:
    from decbounds import SUBPACKAGES

    rules, _ = stated()
    missing = set(SUBPACKAGES) - set(rules)
    assert not missing, f"docs/architecture.md states no rule for {missing}"


def test_every_import_follows_an_arrow_of_the_page_and_every_arrow_is_used() -> None:
    rules, exceptions = stated()
    packages = {unit for unit in rules if "." not in unit}
    edges = actual(packages)
    wrong, unused = [], []
    for unit, allowed in rules.items():
        found = edges.get(unit, {})
        for target, where in found.items():
            rest = [w for w in where if not any(w.startswith(f if f.endswith("/") else f"{f}:")
                                                 and target in pkgs for f, pkgs in exceptions.items())]
            if rest and target not in allowed:
                wrong.append(f"{unit} imports {target}: {rest}")
        unused += [f"{unit} ──► {target}" for target in allowed if target not in found]
    assert not wrong, "imports against docs/architecture.md's rules:\n" + "\n".join(wrong)
    assert not unused, "arrows of docs/architecture.md that no import uses:\n" + "\n".join(unused)


@pytest.mark.parametrize("source", [
    "from decbounds.algorithms import run\n",
    "def f():\n    from decbounds.algorithms.compiled import run_rule\n",
    "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from decbounds.algorithms import State\n",
    "SPEC = 'decbounds.algorithms.rules:DSGT'\n",
    "import importlib\nimportlib.import_module('decbounds.algorithms.compiled')\n",
    "from decbounds import algorithms\n",
])
def test_the_parser_sees_each_kind_of_import(source: str) -> None:
    assert any(module.startswith("decbounds.algorithms") for module, _ in imported(ast.parse(source)))


def test_a_module_named_in_a_docstring_is_prose() -> None:
    assert imported(ast.parse('"""decbounds.algorithms"""\n')) == []
