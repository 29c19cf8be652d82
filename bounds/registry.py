"""A registry: the one place where a kind of named builder (topologies, weight rules, oracles) is listed.

``bounds`` imports nothing of the other decbounds packages, so every package may build its registries on this
one class. A `Registry` maps a name to a `RegistryEntry` (the builder, its aliases, a one-line description);
it is a read-only ``Mapping`` of names, so ``name in registry``, ``for name in registry``, ``len(registry)``
and ``argparse``'s ``choices=registry`` work, and ``register`` / ``unregister`` change it at run time. An
unknown name is a ``ValueError`` naming the field and listing the choices, as `bounds.validation.
require_choice` words it.

>>> shapes = Registry("shape")
>>> def square(side: float) -> float:
...     '''Area of a square.'''
...     return side * side
>>> _ = shapes.register("square", square, aliases=("quad",))
>>> shapes.build("quad", 3.0)
9.0
>>> shapes["square"].description
'Area of a square.'
>>> "square" in shapes, shapes.names()
(True, ('square',))
>>> shapes["circle"]
Traceback (most recent call last):
...
ValueError: name must be one of ('square',) (a registered shape); got name='circle'
>>> shapes.unregister("square")
>>> len(shapes)
0
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from decbounds.bounds.validation import _show

__all__ = ["Registry", "RegistryEntry"]

B = TypeVar("B", bound=Callable[..., Any])


@dataclass(frozen=True)
class RegistryEntry(Generic[B]):
    """One registered name: ``builder`` (the callable it names), ``aliases`` (other names it answers to)
    and ``description`` (one line, for listings and ``--help``)."""

    name: str
    builder: B
    description: str
    aliases: tuple[str, ...] = ()


def _first_line(builder: Callable[..., Any]) -> str:
    doc = inspect.getdoc(builder) or ""
    return doc.strip().splitlines()[0] if doc.strip() else ""


def _check_name(what: str, name: object) -> str:
    if not isinstance(name, str):
        raise TypeError(f"{what} must be a string; got {what}={_show(name)}")
    if not name or name != name.strip():
        raise ValueError(f"{what} must be a non-empty string without surrounding blanks; got {what}={name!r}")
    return name


class Registry(Mapping[str, RegistryEntry[B]]):
    """Names -> `RegistryEntry` of one ``kind`` of builder; ``field`` is the argument that names one.

    Iteration, ``len`` and ``names()`` give the registered names in registration order; ``in`` and lookup
    (``registry[name]``) also accept aliases. ``build(name, *args, **params)`` calls the builder after
    checking ``params`` against its signature (a ``ValueError`` naming the bad parameters otherwise).
    """

    def __init__(self, kind: str, *, field: str = "name") -> None:
        self.kind = _check_name("kind", kind)
        self.field = _check_name("field", field)
        self._entries: dict[str, RegistryEntry[B]] = {}
        self._keys: dict[str, str] = {}  # name or alias -> name

    def register(self, name: str, builder: B, *, description: str | None = None,
                 aliases: tuple[str, ...] = ()) -> B:
        """Add ``builder`` under ``name`` (and ``aliases``); returns ``builder``.

        ``description`` defaults to the first line of the builder's docstring. ValueError when the name or an
        alias is taken by another builder (registering the same builder again is allowed and replaces the
        entry); TypeError for a builder that is not callable.
        """
        name = _check_name("name", name)
        if not callable(builder):
            raise TypeError(f"builder must be callable; got builder={_show(builder)}")
        aliases = tuple(_check_name("alias", alias) for alias in aliases)
        if description is None:
            description = _first_line(builder)
        if not isinstance(description, str):
            raise TypeError(f"description must be a string; got description={_show(description)}")
        for key in (name, *aliases):
            owner = self._keys.get(key)
            if owner is not None and self._entries[owner].builder is not builder:
                raise ValueError(f"{self.kind} name {key!r} is already registered (by {owner!r}); "
                                 f"unregister({owner!r}) first")
        if name in self._entries:
            self.unregister(name)
        self._entries[name] = RegistryEntry(name=name, builder=builder, description=description,
                                            aliases=aliases)
        for key in (name, *aliases):
            self._keys[key] = name
        return builder

    def unregister(self, name: str) -> None:
        """Remove ``name`` (or the entry an alias names) and its aliases; ValueError for an unknown name."""
        found = self[name]
        del self._entries[found.name]
        for key in [key for key, owner in self._keys.items() if owner == found.name]:
            del self._keys[key]

    def __getitem__(self, name: str) -> RegistryEntry[B]:
        """The entry of ``name`` or an alias; TypeError for a non-string, ValueError listing the choices."""
        if not isinstance(name, str):
            raise TypeError(f"{self.field} must be a string, one of {self.names()} (a registered "
                            f"{self.kind}); got {self.field}={_show(name)}")
        key = self._keys.get(name)
        if key is None:
            raise ValueError(f"{self.field} must be one of {self.names()} (a registered {self.kind}); "
                             f"got {self.field}={name!r}")
        return self._entries[key]

    def get(self, name: str, default: Any = None) -> Any:  # Mapping.get expects KeyError, not ValueError
        """The entry of ``name`` or an alias, else ``default``."""
        return self[name] if name in self else default

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._keys

    def __iter__(self) -> Iterator[str]:
        return iter(tuple(self._entries))

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}: {', '.join(self._entries)})"

    def names(self) -> tuple[str, ...]:
        """The registered names (not the aliases), in registration order."""
        return tuple(self._entries)

    def build(self, name: str, *args: Any, **params: Any) -> Any:
        """Look up ``name`` and call its builder with ``args`` and ``params``.

        ``params`` the builder's signature does not take are a ValueError naming them (and the field), raised
        before the builder runs; errors the builder itself raises pass through unchanged.
        """
        entry = self[name]
        try:
            signature = inspect.signature(entry.builder)
        except (TypeError, ValueError):  # a builtin without a signature: let the call decide
            signature = None
        if signature is not None:
            try:
                signature.bind(*args, **params)
            except TypeError as err:
                takes = [p.name for p in signature.parameters.values()
                         if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)][len(args):]
                why = f"it takes {takes}" if takes else "it takes no options"
                raise ValueError(f"{self.field}={entry.name!r} ({self.kind}): bad parameters "
                                 f"{sorted(params)}: {err}; {why}") from None
        return entry.builder(*args, **params)
