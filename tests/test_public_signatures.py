"""Every public function and method says what it takes: no ``Any`` in its signature, a docstring, and a
numpydoc ``Parameters`` section naming each argument.

Public: a function, class or method whose name has no leading underscore (``__init__`` and ``__call__``
count), defined in a module of the packages whose own name has no leading underscore. A method without a
docstring of its own inherits its base class's (``inspect.getdoc``), as numpydoc reads it: a step rule's
``step`` is documented once, on `StepRule`, whose Parameters section is then the one checked.

``PENDING`` lists the modules not yet brought to this standard; the test fails when a listed module already
meets it (remove it from the list) as well as when an unlisted one does not.
"""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("bounds", "instances", "oracles", "algorithms", "paper_figures", "verify", "decbounds")

#: Modules still to be brought to the standard (one per line; delete a line when its module passes).
PENDING: frozenset[str] = frozenset("""
""".split())


def _module_names() -> list[str]:
    names = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            relative = path.relative_to(ROOT)
            if "out" in relative.parts or any(part.startswith("_") and part not in ("__init__.py",)
                                              for part in relative.parts):
                continue
            parts = relative.with_suffix("").parts
            parts = parts[:-1] if parts[-1] == "__init__" else parts
            names.append(".".join(parts if parts[0] == "decbounds" else ("decbounds", *parts)))
    return names


MODULES = _module_names()
_ANY = re.compile(r"\bAny\b")
_PUBLIC_DUNDERS = ("__init__", "__call__")


def _public(name: str) -> bool:
    return not name.startswith("_") or name in _PUBLIC_DUNDERS


def _functions(module_name: str) -> Iterator[tuple[str, Callable[..., object]]]:
    """(qualified name, function) for every public function and public method of a public class defined in
    the module itself (not imported into it)."""
    module = importlib.import_module(module_name)
    for name, value in vars(module).items():
        if name.startswith("_") or getattr(value, "__module__", None) != module_name:
            continue
        if inspect.isfunction(value):
            yield name, value
        elif inspect.isclass(value):
            for attribute, member in vars(value).items():
                function = member.__func__ if isinstance(member, (classmethod, staticmethod)) else member
                if isinstance(member, property):
                    function = member.fget
                if not _public(attribute) or not inspect.isfunction(function):
                    continue
                if attribute == "__init__" and inspect.getdoc(value) and function.__doc__ is None:
                    continue  # numpydoc: the class docstring documents the constructor
                yield f"{name}.{attribute}", function


def _arguments(function: Callable[..., object]) -> list[str]:
    try:
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError):
        return []
    return [name for name in parameters if name not in ("self", "cls")]


def _documented_names(doc: str) -> set[str]:
    """The names of a numpydoc Parameters section (``x : float``, ``a, b : int``, ``*args``)."""
    match = re.search(r"^Parameters\n-+\n(.*?)(?=^\S[^\n]*\n-+\n|\Z)", doc, re.S | re.M)
    if match is None:
        return set()
    names: set[str] = set()
    for line in match.group(1).splitlines():
        if line and not line[0].isspace():
            head = line.split(" : ")[0].split(":")[0]
            names |= {part.strip().lstrip("*") for part in head.split(",")}
    return names


def _problems(module_name: str) -> list[str]:
    problems = []
    for qualified, function in _functions(module_name):
        annotations = [str(a) for a in function.__annotations__.values()]
        if any(_ANY.search(a) for a in annotations):
            problems.append(f"{qualified}: Any in its signature")
        doc = inspect.getdoc(function)
        if qualified.endswith("__init__"):
            owner = importlib.import_module(module_name)
            doc = doc or inspect.getdoc(getattr(owner, qualified.split(".")[0]))
        if not doc:
            problems.append(f"{qualified}: no docstring")
            continue
        arguments = _arguments(function)
        if arguments and function.__doc__ is not None:  # an inherited docstring documents the protocol
            missing = [a for a in arguments if a not in _documented_names(doc)]
            if missing:
                problems.append(f"{qualified}: Parameters does not name {missing}")
    return problems


def test_the_modules_are_found() -> None:
    assert len(MODULES) > 60 and "decbounds.verify.flow" in MODULES
    assert not PENDING - set(MODULES), f"PENDING names unknown modules {sorted(PENDING - set(MODULES))}"


@pytest.mark.parametrize("module_name", MODULES)
def test_public_functions_are_typed_and_documented(module_name: str) -> None:
    problems = _problems(module_name)
    if module_name in PENDING:
        assert problems, f"{module_name} meets the standard: remove it from PENDING"
        pytest.xfail(f"{len(problems)} problems pending")
    assert problems == [], "\n".join(problems)
