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

import importlib.metadata
import warnings
from typing import Any

__all__ = ["GROUP", "load_plugins", "plugin_errors"]

#: The entry-point group scanned for step rules.
GROUP = "decbounds.algorithms"

_state: dict[str, Any] = {"loaded": False, "loading": False}
_errors: dict[str, str] = {}


def plugin_errors() -> dict[str, str]:
    """Entry-point name -> why it could not be registered (after `load_plugins`).

    Returns
    -------
    dict of str to str
        A copy; empty when every plugin registered (or none is installed).

    Examples
    --------
    >>> isinstance(plugin_errors(), dict)
    True
    """
    return dict(_errors)


def load_plugins(*, force: bool = False) -> tuple[str, ...]:
    """Register the step rules of every ``decbounds.algorithms`` entry point, once per process.

    A plugin that fails to import, names something that is not a step rule or whose name is taken is
    skipped with a `RuntimeWarning` and recorded in `plugin_errors`; nothing is raised.

    Parameters
    ----------
    force : bool, default False
        Scan the entry points again, e.g. after installing a plugin at run time.

    Returns
    -------
    tuple of str
        The algorithm names registered by this call (empty when the plugins were loaded already).

    References
    ----------
    docs/extending.md (adding an algorithm).

    Examples
    --------
    >>> from decbounds import algorithms
    >>> _ = algorithms.algorithm_names()  # loads the plugins once
    >>> load_plugins()  # a second call does nothing
    ()
    """
    if _state["loading"] or (_state["loaded"] and not force):
        return ()
    from decbounds.algorithms.registry import register
    from decbounds.algorithms.step_rule import StepRule

    _state["loading"] = True
    added: list[str] = []
    try:
        for point in importlib.metadata.entry_points(group=GROUP):
            where = f"{point.name} = {point.value!r}"
            try:
                loaded = point.load()
            except Exception as exc:  # a broken plugin must not break the package
                _fail(point.name, f"entry point {where} does not import: {type(exc).__name__}: {exc}")
                continue
            rules = list(loaded) if isinstance(loaded, (list, tuple)) else [loaded]
            for rule in rules:
                if not (isinstance(rule, type) and issubclass(rule, StepRule)):
                    _fail(point.name, f"entry point {where} names {rule!r}, not a StepRule subclass")
                    continue
                try:
                    register(rule)
                except (TypeError, ValueError) as exc:
                    _fail(point.name, f"entry point {where}: {exc}")
                    continue
                _errors.pop(point.name, None)
                added.append(rule.name)
    finally:
        _state["loading"] = False
        _state["loaded"] = True
    return tuple(added)


def _fail(name: str, message: str) -> None:
    _errors[name] = message
    warnings.warn(f"decbounds plugin {message}", RuntimeWarning, stacklevel=3)
