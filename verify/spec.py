"""The rule under test: a class, a registered name, or a ``module:Class`` / ``path/to/file.py:Class`` spec."""

from __future__ import annotations

import hashlib
import inspect

from decbounds.algorithms.plugins import load_rule as load_rule_spec
from decbounds.verify.settings import VerifyInputError

from decbounds import algorithms

__all__ = ["fingerprint", "load_rule", "register_rule"]


def load_rule(spec: object) -> type[algorithms.StepRule]:
    """The rule class of ``spec``: a StepRule subclass, a registered algorithm name, or ``module:Class`` /
    ``path/to/file.py:Class`` (``algorithms.plugins.load_rule``, shared with ``decbounds worst-case``).
    VerifyInputError (one line) otherwise.

    Parameters
    ----------
    spec : object
        The rule as the user gave it (validated here).

    Returns
    -------
    type
        The `algorithms.StepRule` subclass.
    """
    try:
        return load_rule_spec(spec)
    except ValueError as exc:
        raise VerifyInputError(str(exc)) from None


def register_rule(rule: type[algorithms.StepRule]) -> tuple[str, bool]:
    """Register ``rule`` if it is not (a default name and style filled in); VerifyInputError if the
    registry refuses it.

    Parameters
    ----------
    rule : type
        The `algorithms.StepRule` subclass.

    Returns
    -------
    tuple of (str, bool)
        Its registry name, and whether it was added here (the caller unregisters it).
    """
    for entry in algorithms.entries():
        if entry.rule is rule:
            return entry.name, False
    name = rule.name or rule.__name__.lower()
    extra: dict[str, object] = {}
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
    """A hash of the rule's source (so that records of an edited rule are not reused).

    Parameters
    ----------
    rule : type
        The `algorithms.StepRule` subclass.

    Returns
    -------
    str
        16 hex digits of the SHA-256 of its source (of its qualified name when the source is unavailable).
    """
    try:
        text = inspect.getsource(rule)
    except (OSError, TypeError):
        text = f"{rule.__module__}.{rule.__qualname__}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]
