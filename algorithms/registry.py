"""The registry: one entry per algorithm, holding everything about it.

An entry is read off the rule class itself (`StepRule`'s class attributes ``name``, ``aliases``,
``catalog_entry``, ``style``), so adding an algorithm is one class plus one ``register`` call, in one file:

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
    >>> algorithms.entry("averaging_example").style.label
    'averaging'
    >>> algorithms.unregister("averaging_example")
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from decbounds.algorithms.style import PlotStyle

if TYPE_CHECKING:
    from decbounds.algorithms.step_rule import StepRule

__all__ = [
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
        Its registry name (lower case).
    rule : type of StepRule
        The `StepRule` subclass.
    aliases : tuple of str
        Other names ``run`` accepts.
    catalog_entry : str or None
        The ``bounds`` catalog entry of its predicted rate (``bounds.get``), None when the catalog has none.
    style : PlotStyle
        Its look in figures.

    Examples
    --------
    >>> from decbounds import algorithms
    >>> found = algorithms.entry("fedavg")
    >>> found.name, found.aliases, found.catalog_entry
    ('local_sgd', ('fedavg',), None)
    """

    name: str
    rule: type[StepRule]
    aliases: tuple[str, ...]
    catalog_entry: str | None
    style: PlotStyle


_ENTRIES: dict[str, Entry] = {}
_ALIASES: dict[str, str] = {}


def register(rule: type[StepRule]) -> type[StepRule]:
    """Add ``rule`` (a `StepRule` subclass) to the registry under ``rule.name`` and ``rule.aliases``;
    returns the class, so it also works as a class decorator. Registering the same class again is a no-op.

    Parameters
    ----------
    rule : type of StepRule
        The class; its ``name`` (non-empty, lower case), ``aliases``, ``catalog_entry`` and ``style`` (a
        `PlotStyle`) make the `Entry`.

    Returns
    -------
    type of StepRule
        ``rule`` itself.

    Raises
    ------
    ValueError
        If the name or an alias is taken by another rule, or the class has no lower-case name or no
        `PlotStyle`.
    TypeError
        If ``rule`` is not a StepRule subclass.

    References
    ----------
    docs/extending.md (adding an algorithm, a worked example).

    Examples
    --------
    See the module docstring for a whole rule; registering something else is refused:

    >>> register(object)
    Traceback (most recent call last):
    ...
    TypeError: rule must be a StepRule subclass; got <class 'object'>
    """
    from decbounds.algorithms.step_rule import StepRule

    if not (isinstance(rule, type) and issubclass(rule, StepRule)):
        raise TypeError(f"rule must be a StepRule subclass; got {rule!r}")
    name = rule.name
    if not isinstance(name, str) or not name or name != name.lower():
        raise ValueError(f"rule.name must be a non-empty lower-case string; got name={name!r}")
    if not isinstance(rule.style, PlotStyle):
        raise ValueError(f"{name}: rule.style must be a PlotStyle; got style={rule.style!r}")
    for key in (name, *rule.aliases):
        owner = _ALIASES.get(key.lower())
        if owner is not None and _ENTRIES[owner].rule is not rule:
            raise ValueError(f"algorithm name {key!r} is already registered (by {owner!r})")
    _ENTRIES[name] = Entry(name=name, rule=rule, aliases=tuple(rule.aliases),
                           catalog_entry=rule.catalog_entry, style=rule.style)
    for key in (name, *rule.aliases):
        _ALIASES[key.lower()] = name
    return rule


def unregister(name: str) -> None:
    """Remove the algorithm ``name`` and its aliases (tests and plugins that register temporarily).

    Parameters
    ----------
    name : str
        A registered name or alias.

    Raises
    ------
    ValueError
        If ``name`` is not registered.
    """
    found = entry(name)
    del _ENTRIES[found.name]
    for key in [key for key, owner in _ALIASES.items() if owner == found.name]:
        del _ALIASES[key]


def entry(name: str) -> Entry:
    """The entry registered under ``name`` or one of its aliases (case-insensitive).

    An unknown name first loads the plugins (``algorithms.plugins``), once per process.

    Parameters
    ----------
    name : str
        An algorithm name or alias.

    Returns
    -------
    Entry

    Raises
    ------
    ValueError
        If no algorithm has that name (the message lists the known ones and any broken plugin).
    TypeError
        If ``name`` is not a string.

    Examples
    --------
    >>> entry("DeTAG").style.label
    'DeTAG'
    """
    if not isinstance(name, str):
        raise TypeError(f"name (the algorithm) must be a string; got {type(name).__name__}")
    key = _ALIASES.get(name.lower())
    if key is None:  # maybe a plugin's (entry-point group decbounds.algorithms), loaded once
        from decbounds.algorithms.plugins import load_plugins, plugin_errors

        load_plugins()
        key = _ALIASES.get(name.lower())
    if key is None:
        broken = "".join(f"; plugin {message}" for message in plugin_errors().values())
        raise ValueError(f"unknown algorithm {name!r}: name must be a registered algorithm; known: "
                         f"{', '.join(_ENTRIES)}{broken}")
    return _ENTRIES[key]


def entries() -> tuple[Entry, ...]:
    """Every registered entry, in registration order (plugins' included).

    Returns
    -------
    tuple of Entry

    Examples
    --------
    >>> from decbounds import algorithms
    >>> [e.name for e in entries()][:3]
    ['centralized', 'local_sgd', 'dpsgd']
    """
    from decbounds.algorithms.plugins import load_plugins

    load_plugins()
    return tuple(_ENTRIES.values())


def algorithm_names() -> tuple[str, ...]:
    """The registered algorithm names, in registration order (plugins' included).

    Returns
    -------
    tuple of str

    Examples
    --------
    >>> from decbounds import algorithms
    >>> "detag" in algorithm_names(), "fedavg" in algorithm_names()  # aliases are not names
    (True, False)
    """
    from decbounds.algorithms.plugins import load_plugins

    load_plugins()
    return tuple(_ENTRIES)


def rule_class(name: str) -> type[StepRule]:
    """The step rule registered under ``name`` (or an alias such as "fedavg").

    Parameters
    ----------
    name : str
        An algorithm name or alias (case-insensitive).

    Returns
    -------
    type of StepRule

    Raises
    ------
    ValueError
        If no algorithm has that name.
    TypeError
        If ``name`` is not a string.

    Examples
    --------
    >>> from decbounds import algorithms
    >>> rule_class("fedavg").__name__
    'LocalSGD'
    """
    return entry(name).rule
