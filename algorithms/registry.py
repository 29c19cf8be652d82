"""The registry: one entry per algorithm, read off the rule class (``name``, ``aliases``, ``catalog_entry``,
``style``), so adding an algorithm is one class and one ``register`` call (docs/extending.md):

    >>> from decbounds import algorithms
    >>> class Averaging(algorithms.StepRule):
    ...     name = "averaging_example"
    ...     style = algorithms.PlotStyle(color="tab:gray", marker="o", label="averaging")
    ...     def init(self, ctx):
    ...         return algorithms.State(x=ctx.start_state())
    ...     def step(self, state, ctx):
    ...         state.x = ctx.gossip(state.x)
    ...         return state
    >>> _ = algorithms.register(Averaging)
    >>> algorithms.unregister("averaging_example")
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from decbounds.algorithms.style import PlotStyle

from decbounds.registry import Registry, require_instance

if TYPE_CHECKING:
    from decbounds.algorithms.step_rule import StepRule

__all__ = [
    "ALGORITHMS",
    "Entry",
    "algorithm_names",
    "entries",
    "entry",
    "register",
    "rule_class",
    "unregister",
]


@dataclass(frozen=True)
class Entry:
    """Everything the package knows about one algorithm (read off the rule class by `register`).

    Parameters
    ----------
    name : str
    rule : type of StepRule
    aliases : tuple of str
    catalog_entry : str or None
        The ``bounds`` catalog entry of its predicted rate.
    style : PlotStyle
    """

    name: str
    rule: type[StepRule]
    aliases: tuple[str, ...]
    catalog_entry: str | None
    style: PlotStyle


_check_entry = require_instance(Entry, "an algorithm's entry (algorithms.register makes one)")


def _register_plugin(point_name: str, loaded: object) -> tuple[str, ...]:
    """What an entry point of ``decbounds.algorithms`` names: a StepRule subclass or a list/tuple of them."""
    from decbounds.algorithms.step_rule import StepRule

    rules = list(loaded) if isinstance(loaded, (list, tuple)) else [loaded]
    for rule in rules:
        if not (isinstance(rule, type) and issubclass(rule, StepRule)):
            raise TypeError(f"names {rule!r}, not a StepRule subclass")
    return tuple(register(rule).name for rule in rules
                 if isinstance(rule, type) and issubclass(rule, StepRule))


#: The algorithm registry (the one `decbounds.registry.Registry` mechanism): name -> `Entry`, looked up
#: case-insensitively, with the plugins of the entry-point group ``decbounds.algorithms``. Fill it with
#: `register` (which reads the entry off the rule class), not with ``ALGORITHMS.register``.
def _register_builtins() -> None:
    """The built-in step rules (`vocabulary.ALGORITHM_NAMES`), registered on the registry's first use: the
    rules import numpy and scipy, which naming an algorithm (``--help``) does not need."""
    from decbounds.algorithms.compressed import BEER, ChocoSGD  # compressed gossip, docs/theory.md §18
    from decbounds.algorithms.exact_diffusion import ExactDiffusion
    from decbounds.algorithms.extra import Extra
    from decbounds.algorithms.mg_dsgd import MGDSGD
    from decbounds.algorithms.rules import RULES

    for rule in (*RULES, Extra, ExactDiffusion, MGDSGD, ChocoSGD, BEER):
        register(rule)


ALGORITHMS: Registry[Entry] = Registry("algorithm", group="decbounds.algorithms", check=_check_entry,
                                       fold_case=True, from_plugin=_register_plugin,
                                       builtins=_register_builtins)


def register(rule: type[StepRule]) -> type[StepRule]:
    """Add ``rule`` under its ``name`` and ``aliases`` (again: a no-op); returns the class, so it is also a
    decorator. ValueError for a taken name or alias, a missing lower-case name or `PlotStyle`.

    Parameters
    ----------
    rule : type of StepRule
    """
    from decbounds.algorithms.step_rule import StepRule

    if not (isinstance(rule, type) and issubclass(rule, StepRule)):
        raise TypeError(f"rule must be a StepRule subclass; got {rule!r}")
    name = rule.name
    if not isinstance(name, str) or not name or name != name.lower():
        raise ValueError(f"rule.name must be a non-empty lower-case string; got name={name!r}")
    if not isinstance(rule.style, PlotStyle):
        raise ValueError(f"{name}: rule.style must be a PlotStyle; got style={rule.style!r}")
    ALGORITHMS.register(name, Entry(name=name, rule=rule, aliases=tuple(rule.aliases),
                                    catalog_entry=rule.catalog_entry, style=rule.style),
                        aliases=tuple(rule.aliases), description=rule.style.label)
    return rule


def unregister(name: str) -> None:
    """Remove the algorithm ``name`` and its aliases (ValueError when not registered).

    Parameters
    ----------
    name : str
    """
    ALGORITHMS.unregister(entry(name).name)


def entry(name: str) -> Entry:
    """The entry registered under ``name`` or an alias (case-insensitive; an unknown name loads the plugins
    first, then ValueError listing the known ones).

    Parameters
    ----------
    name : str
    """
    if not isinstance(name, str):
        raise TypeError(f"name (the algorithm) must be a string; got {type(name).__name__}")
    if name not in ALGORITHMS:  # `in` loads the plugins (entry-point group decbounds.algorithms) once
        broken = "".join(f"; plugin {message}" for message in ALGORITHMS.plugin_errors().values())
        raise ValueError(f"unknown algorithm {name!r}: name must be a registered algorithm; known: "
                         f"{', '.join(ALGORITHMS)}{broken}")
    return ALGORITHMS[name].builder


def entries() -> tuple[Entry, ...]:
    """Every registered entry, in registration order (plugins' included).
    """
    return tuple(ALGORITHMS.objects().values())


def algorithm_names() -> tuple[str, ...]:
    """The registered algorithm names, in registration order (plugins' included).
    """
    return ALGORITHMS.names()


def rule_class(name: str | type[StepRule]) -> type[StepRule]:
    """The step rule registered under ``name`` or an alias, or ``name`` itself when it is a StepRule subclass.

    Parameters
    ----------
    name : str or type
    """
    from decbounds.algorithms.step_rule import StepRule

    if isinstance(name, type) and issubclass(name, StepRule):
        return name
    return entry(name).rule
