"""The rule under test: a class, a registered name, or a ``module:Class`` / ``path/to/file.py:Class`` spec."""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import pathlib
import sys
from typing import Any

from decbounds.paper_figures.verify.settings import VerifyInputError

from decbounds import algorithms

__all__ = ["fingerprint", "load_rule"]


def load_rule(spec: Any) -> type[algorithms.StepRule]:
    """The rule class of ``spec``: a StepRule subclass, a registered algorithm name, or ``module:Class`` /
    ``path/to/file.py:Class`` (the current directory is importable, as with ``python -m``; for a file, its
    folder too, as for a script).
    VerifyInputError (one line) otherwise."""
    if isinstance(spec, type):
        if not issubclass(spec, algorithms.StepRule):
            raise VerifyInputError(f"{spec.__qualname__} is not a step rule: subclass algorithms.StepRule")
        return spec
    if not isinstance(spec, str) or not spec:
        raise VerifyInputError(f"rule must be a StepRule subclass or a 'module:Class' string; got {spec!r}")
    if ":" not in spec:
        try:
            return algorithms.rule_class(spec)
        except ValueError:
            raise VerifyInputError(f"{spec!r} is neither 'module:Class' nor a registered algorithm "
                                   f"({', '.join(algorithms.algorithm_names())})") from None
    module_name, _, class_name = spec.rpartition(":")
    if not module_name or not class_name:
        raise VerifyInputError(f"expected 'module:Class' or 'path/to/file.py:Class'; got {spec!r}")
    try:
        if module_name.endswith(".py"):
            path = pathlib.Path(module_name)
            if not path.is_file():
                raise FileNotFoundError(f"no file {module_name}")
            folder = str(path.resolve().parent)
            if folder not in sys.path:  # its sibling modules import, as for a script run from its folder
                sys.path.insert(0, folder)
            loader_spec = importlib.util.spec_from_file_location(path.stem, path)
            assert loader_spec is not None and loader_spec.loader is not None
            module = importlib.util.module_from_spec(loader_spec)
            sys.modules[path.stem] = module
            loader_spec.loader.exec_module(module)
        else:
            if "" not in sys.path and str(pathlib.Path.cwd()) not in sys.path:
                sys.path.insert(0, str(pathlib.Path.cwd()))
            module = importlib.import_module(module_name)
    except Exception as exc:  # any failure of the user's module is one line
        hint = ""
        if isinstance(exc, ModuleNotFoundError) and not module_name.endswith(".py") \
                and exc.name == module_name.split(".")[0]:
            hint = (f" (run from the folder that holds {module_name.replace('.', '/')}.py, or give the file: "
                    f"path/to/{module_name.replace('.', '/')}.py:{class_name})")
        raise VerifyInputError(f"cannot import {module_name!r}: {type(exc).__name__}: "
                               f"{_one_line(exc)}{hint}") from None
    rule = getattr(module, class_name, None)
    if rule is None:
        raise VerifyInputError(f"module {module_name!r} has no attribute {class_name!r}")
    if not (isinstance(rule, type) and issubclass(rule, algorithms.StepRule)):
        raise VerifyInputError(f"{spec} is not a step rule: {rule!r} does not subclass algorithms.StepRule")
    return rule


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else ""


def _registered(rule: type[algorithms.StepRule]) -> tuple[str, bool]:
    """Register ``rule`` if it is not (a default name and style filled in); (its name, whether added)."""
    for entry in algorithms.entries():
        if entry.rule is rule:
            return entry.name, False
    name = rule.name or rule.__name__.lower()
    extra: dict[str, Any] = {}
    if rule.name != name:
        extra["name"] = name
    if not isinstance(rule.style, algorithms.PlotStyle):
        extra["style"] = algorithms.PlotStyle(color="tab:pink", marker="P", label=name)
    if extra:
        rule = type(rule.__name__, (rule,), {**extra, "__module__": rule.__module__})
    try:
        algorithms.register(rule)
    except (TypeError, ValueError) as exc:
        raise VerifyInputError(f"cannot register the rule: {exc}") from None
    return name, True


def fingerprint(rule: type[algorithms.StepRule]) -> str:
    """A hash of the rule's source (so that records of an edited rule are not reused)."""
    try:
        text = inspect.getsource(rule)
    except (OSError, TypeError):
        text = f"{rule.__module__}.{rule.__qualname__}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]
