"""Algorithms from other packages: the entry-point group ``decbounds.algorithms``.

A third-party package declares its step rules in its ``pyproject.toml``::

    [project.entry-points."decbounds.algorithms"]
    my_rule = "my_package.rules:MyRule"

Each entry point names a `StepRule` subclass (or a list/tuple of them). The first time the registry is asked
for a name it does not know, or for the list of names, `load_plugins` imports every entry point of the group
once and registers each rule under its own ``name`` (``algorithms.register``), so ``run``, ``tune``, the
sweeps and the ``decbounds`` CLI find it like a built-in one. A plugin that fails to import or names
something that is not a step rule does not break the package: the failure is kept in `plugin_errors` (and
named in the registry's "unknown algorithm" message), with a `RuntimeWarning`.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import pathlib
import sys
from typing import TYPE_CHECKING

from decbounds.algorithms.registry import ALGORITHMS

if TYPE_CHECKING:
    from decbounds.algorithms.step_rule import StepRule

__all__ = ["GROUP", "load_plugins", "load_rule", "plugin_errors"]

#: The entry-point group scanned for step rules.
GROUP = ALGORITHMS.group

# the registry's own record of failed plugins (kept under this name for code that reads it here)
_errors = ALGORITHMS._errors

def plugin_errors() -> dict[str, str]:
    """Entry-point name -> why it could not be registered (after `load_plugins`).
    """
    return ALGORITHMS.plugin_errors()


def load_plugins(*, force: bool = False) -> tuple[str, ...]:
    """``ALGORITHMS.load_plugins``: register the step rules of every ``decbounds.algorithms`` entry point,
    once per process (force: scan again); returns the names this call registered. A plugin that fails is
    skipped with a `RuntimeWarning` and kept in `plugin_errors` (`decbounds.registry.Registry.load_plugins`).

    Parameters
    ----------
    force : bool, default False
        Scan the entry points again (after installing a plugin at run time).

    References
    ----------
    docs/extending.md (adding an algorithm).
    """
    return ALGORITHMS.load_plugins(force=force)


def load_rule(spec: object) -> type[StepRule]:
    """The step rule of ``spec``: a StepRule subclass, a registered algorithm name, or ``module:Class`` /
    ``path/to/file.py:Class`` (the current directory is importable, as with ``python -m``; for a file, its
    folder too, as for a script). What
    ``decbounds verify`` and ``decbounds worst-case`` accept.

    Parameters
    ----------
    spec : type or str
        The rule: a StepRule subclass, a registered name or alias (``algorithms.algorithm_names()``), or
        ``"module:Class"`` / ``"path/to/file.py:Class"``; anything else is a ValueError.

    Raises
    ------
    ValueError
        One line naming what is wrong: the spec's form, a module that does not import (its error), a
        missing attribute, or an object that is not a step rule.

    Examples
    --------
    >>> load_rule("decbounds.algorithms.extra:Extra").name
    'extra'
    >>> load_rule("fedavg").name
    'local_sgd'
    """
    from decbounds.algorithms.registry import algorithm_names, rule_class
    from decbounds.algorithms.step_rule import StepRule

    if isinstance(spec, type):
        if not issubclass(spec, StepRule):
            raise ValueError(f"{spec.__qualname__} is not a step rule: subclass algorithms.StepRule")
        return spec
    if not isinstance(spec, str) or not spec:
        raise ValueError(f"rule must be a StepRule subclass or a 'module:Class' string; got {spec!r}")
    if ":" not in spec:
        try:
            return rule_class(spec)
        except ValueError:
            raise ValueError(f"{spec!r} is neither 'module:Class' nor a registered algorithm "
                             f"({', '.join(algorithm_names())})") from None
    module_name, _, class_name = spec.rpartition(":")
    if not module_name or not class_name:
        raise ValueError(f"expected 'module:Class' or 'path/to/file.py:Class'; got {spec!r}")
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
        first_line = (str(exc).strip().splitlines() or [""])[0]
        raise ValueError(f"cannot import {module_name!r}: {type(exc).__name__}: {first_line}{hint}") from None
    rule = getattr(module, class_name, None)
    if rule is None:
        raise ValueError(f"module {module_name!r} has no attribute {class_name!r}")
    if not (isinstance(rule, type) and issubclass(rule, StepRule)):
        raise ValueError(f"{spec} is not a step rule: {rule!r} does not subclass algorithms.StepRule")
    return rule
