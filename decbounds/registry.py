"""The one registry mechanism: every pluggable kind of decbounds is a `Registry` (docs/architecture.md).

A `Registry` maps a name to a `RegistryEntry` and is a read-only ``Mapping`` of names (``in``, iteration,
argparse's ``choices=``); ``register`` / ``unregister`` change it. An unknown name is a ValueError naming
the field and listing the choices. With ``group="decbounds.<kind>"`` it also reads that entry-point group
once, on the first unknown name or listing; a plugin that fails warns (RuntimeWarning) and is kept in
`Registry.plugin_errors`. `Registry.resolve` takes a name or the object itself (``minimize(method=)``'s
convention). This module imports no decbounds package.

>>> shapes = Registry("shape")
>>> def square(side: float) -> float:
...     '''Area of a square.'''
...     return side * side
>>> _ = shapes.register("square", square, aliases=("quad",))
>>> shapes.build("quad", 3.0), shapes["square"].description
(9.0, 'Area of a square.')
>>> shapes.resolve(abs) is abs, shapes.resolve("square") is square
(True, True)
>>> shapes["circle"]
Traceback (most recent call last):
...
ValueError: name must be one of ('square',) (a registered shape); got name='circle'
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar, cast, overload

__all__ = ["KnownNames", "Registry", "RegistryEntry", "register_each", "require_instance"]

T = TypeVar("T")
D = TypeVar("D")
#: what a builder builds (`Registry.build`)
Built = TypeVar("Built")


class _Named(Protocol):
    """An object that carries its own registry name (a rate, a PEP method: `register_each`)."""

    @property
    def name(self) -> str: ...


_NamedT = TypeVar("_NamedT", bound=_Named)


def _show(value: object) -> str:
    """A short repr for error messages, as `bounds.validation` words it (this module imports no package)."""
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return f"array of shape {value.shape} and dtype {value.dtype}"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


@dataclass(frozen=True)
class RegistryEntry(Generic[T]):
    """One registered name: ``name``, ``builder`` (the object), ``description`` (one line), ``aliases``.

    Parameters
    ----------
    name, builder, description, aliases : str, object, str, tuple of str
        As above.
    """

    name: str
    builder: T
    description: str
    aliases: tuple[str, ...] = ()

    @property
    def item(self) -> T:
        """The registered object (``builder`` under the name every kind shares)."""
        return self.builder


def _first_line(obj: object) -> str:
    doc = inspect.getdoc(obj) or ""
    return doc.strip().splitlines()[0] if doc.strip() else ""


def _check_label(what: str, label: object) -> str:
    """A registry's kind, field or group: a non-empty string without surrounding blanks."""
    if not isinstance(label, str):
        raise TypeError(f"{what} must be a string; got {what}={_show(label)}")
    if not label or label != label.strip():
        raise ValueError(f"{what} must be a non-empty string without surrounding blanks; got "
                         f"{what}={label!r}")
    return label


def _check_name(what: str, name: object) -> str:
    """A registry name: non-empty, printable, no blanks and no ":" (which separates a name from its parameters
    in specs such as "top_k:3").
    """
    if not isinstance(name, str):
        raise TypeError(f"{what} must be a string; got {what}={_show(name)}")
    if not name or not name.isprintable() or any(c.isspace() or c == ":" for c in name):
        raise ValueError(f"{what} must be a non-empty printable string without blanks or ':'; got "
                         f"{what}={name!r}")
    return name


def _check_aliases(aliases: object) -> tuple[str, ...]:
    if isinstance(aliases, str) or not isinstance(aliases, Iterable):
        raise TypeError(f"aliases must be an iterable of names (a tuple or list; one alias: ('name',)); got "
                        f"aliases={_show(aliases)}")
    return tuple(_check_name("alias", alias) for alias in aliases)


def _require_callable(builder: object) -> None:
    if not callable(builder):
        raise TypeError(f"builder must be callable; got builder={_show(builder)}")


class Registry(Mapping[str, RegistryEntry[T]]):
    """Names -> `RegistryEntry` of one ``kind`` of object, in registration order; ``in`` and lookup also
    accept aliases; ``build(name, *args, **params)`` checks ``params`` against the builder's signature first.

    Parameters
    ----------
    kind : str
        What is registered, for messages ("topology").
    field : str
        The argument that names an entry, for messages ("weights").
    group : str, optional
        The plugins' entry-point group (``"decbounds.topologies"``).
    check : callable, optional
        Raises TypeError for an object this registry does not hold; default: requires a callable.
    fold_case : bool
        Look names up case-insensitively.
    from_plugin : callable, optional
        ``from_plugin(point_name, loaded) -> names``: registers what an entry point loaded.
    builtins : callable, optional
        Registers the built-in entries on first use, so importing the package stays light.
    """

    def __init__(self, kind: str, *, field: str = "name", group: str | None = None,
                 check: Callable[[object], None] | None = None, fold_case: bool = False,
                 from_plugin: Callable[[str, object], Iterable[str]] | None = None,
                 builtins: Callable[[], object] | None = None) -> None:
        self.kind = _check_label("kind", kind)
        self.field = _check_label("field", field)
        self.group = None if group is None else _check_label("group", group)
        self._check = _require_callable if check is None else check
        self._fold_case = fold_case
        self._from_plugin = from_plugin
        self._entries: dict[str, RegistryEntry[T]] = {}
        self._keys: dict[str, str] = {}  # name or alias (folded) -> name
        self._plugins_loaded = False
        self._plugins_loading = False
        self._errors: dict[str, str] = {}
        self._builtins = builtins

    def _load_builtins(self) -> None:
        builtins, self._builtins = self._builtins, None  # once; registering inside it does not recurse
        if builtins is not None:
            builtins()

    def _key(self, name: str) -> str:
        return name.lower() if self._fold_case else name

    def register(self, name: str, builder: T, *, description: str | None = None,
                 aliases: Iterable[str] = (), replace: bool = False) -> T:
        """Add ``builder`` under ``name`` and ``aliases``; returns ``builder`` (so it decorates).

        ValueError when a name is taken by another object (an equal one replaces the entry); TypeError for a
        non-string name or an object the registry does not hold.

        Parameters
        ----------
        name : str
            Non-empty, printable, no blanks, no ":".
        builder : object
            What the name stands for.
        description : str, optional
            One line; default the first line of the builder's docstring.
        aliases : iterable of str
            Other names it answers to.
        replace : bool
            Replace another object registered under ``name`` (in place) instead of refusing it.
        """
        name = _check_name("name", name)
        self._load_builtins()
        self._check(builder)
        aliases = _check_aliases(aliases)
        if description is None:
            description = _first_line(builder)
        if not isinstance(description, str):
            raise TypeError(f"description must be a string; got description={_show(description)}")
        for key in (name, *aliases):
            owner = self._keys.get(self._key(key))
            if owner is not None and not (replace and owner == name):
                held = self._entries[owner].builder
                if held is not builder and held != builder:
                    raise ValueError(f"{self.kind} name {key!r} is already registered (by {owner!r}); "
                                     f"unregister({owner!r}) first")
        if name in self._entries:  # replaced in place: the registration order stays
            for key in [key for key, owner in self._keys.items() if owner == name]:
                del self._keys[key]
        self._entries[name] = RegistryEntry(name=name, builder=builder, description=description,
                                            aliases=aliases)
        for key in (name, *aliases):
            self._keys[self._key(key)] = name
        return builder

    def unregister(self, name: str) -> None:
        """Remove ``name`` (or the entry an alias names) and its aliases; ValueError for an unknown name.

        Parameters
        ----------
        name : str
            A registered name or alias.
        """
        found = self[name]
        del self._entries[found.name]
        for key in [key for key, owner in self._keys.items() if owner == found.name]:
            del self._keys[key]

    def __getitem__(self, name: str) -> RegistryEntry[T]:
        """The entry of ``name`` or an alias; TypeError for a non-string, ValueError listing the choices."""
        if not isinstance(name, str):
            raise TypeError(f"{self.field} must be a string, one of {self.names()} (a registered "
                            f"{self.kind}); got {self.field}={_show(name)}")
        self._load_builtins()
        key = self._keys.get(self._key(name))
        if key is None and self.load_plugins():
            key = self._keys.get(self._key(name))
        if key is None:
            broken = "".join(f"; plugin {message}" for message in self._errors.values())
            raise ValueError(f"{self.field} must be one of {self.names()} (a registered {self.kind}); "
                             f"got {self.field}={name!r}{broken}")
        return self._entries[key]

    @overload
    def get(self, name: str) -> RegistryEntry[T] | None: ...

    @overload
    def get(self, name: str, default: D) -> RegistryEntry[T] | D: ...

    def get(self, name: str, default: object = None) -> object:  # Mapping.get expects KeyError
        """The entry of ``name`` or an alias, else ``default``.

        Parameters
        ----------
        name : str
            A name or alias.
        default : object, optional
            Returned for an unknown name.
        """
        return self[name] if name in self else default

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        self._load_builtins()
        if self._key(name) not in self._keys:
            self.load_plugins()
        return self._key(name) in self._keys

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self.names())

    def __repr__(self) -> str:
        self._load_builtins()
        return f"Registry({self.kind!r}: {', '.join(self._entries)})"

    def names(self) -> tuple[str, ...]:
        """The registered names (no aliases) in registration order, plugins' included."""
        self._load_builtins()
        self.load_plugins()
        return tuple(self._entries)

    def objects(self) -> MutableMapping[str, T]:
        """A live mapping name -> registered object; ``view[name] = obj`` registers (or replaces in place),
        ``del view[name]`` unregisters.
        """
        return _Objects(self)

    def descriptions(self) -> Mapping[str, str]:
        """A live read-only mapping name -> one-line description (``decbounds --help``'s listing)."""
        return _Descriptions(self)

    def resolve(self, spec: str | T) -> T:
        """The object ``spec`` names, or ``spec`` itself when not a string (checked as registering would):
        ValueError listing the choices for an unknown name, TypeError for an object the registry would not
        hold.

        Parameters
        ----------
        spec : str or object
            A registered name or alias, or an unregistered object of this kind.
        """
        if isinstance(spec, str):
            return self[spec].builder
        try:
            self._check(spec)
        except TypeError:
            raise TypeError(f"{self.field} must be a string (a registered {self.kind}) or the {self.kind} "
                            f"itself; got {self.field}={_show(spec)}") from None
        return spec

    def build(self: Registry[Callable[..., Built]], name: str | Callable[..., Built], *args: object,
              **params: object) -> Built:
        """Look up ``name`` (or take a callable) and call it with ``args`` and ``params``; ``params`` its
        signature does not take are a ValueError naming them, before it runs.

        Parameters
        ----------
        name : str or callable
            A registered name or alias, or a builder of this kind.
        *args, **params
            The builder's arguments.
        """
        builder: object
        if isinstance(name, str) or not callable(name):  # a non-string non-callable: the lookup's TypeError
            entry_name, builder = self[name].name, self[name].builder
        else:
            entry_name, builder = getattr(name, "__name__", repr(name)), name
        if not callable(builder):
            raise TypeError(f"{self.kind} {entry_name!r} is not callable; nothing to build")
        try:
            signature = inspect.signature(builder)
        except (TypeError, ValueError):  # a builtin without a signature: let the call decide
            signature = None
        if signature is not None:
            try:
                signature.bind(*args, **params)
            except TypeError as err:
                takes = [p.name for p in signature.parameters.values()
                         if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)][len(args):]
                why = f"it takes {takes}" if takes else "it takes no options"
                raise ValueError(f"{self.field}={entry_name!r} ({self.kind}): bad parameters "
                                 f"{sorted(params)}: {err}; {why}") from None
        return builder(*args, **params)

    # -- plugins ----------------------------------------------------------------------------------------

    def plugin_errors(self) -> dict[str, str]:
        """Entry-point name -> why it could not be registered (after `load_plugins`); a copy."""
        return dict(self._errors)

    def load_plugins(self, *, force: bool = False) -> tuple[str, ...]:
        """Register every entry point of ``group`` once per process and return the names added; a failing
        plugin is skipped with a RuntimeWarning and recorded in `plugin_errors`.

        Parameters
        ----------
        force : bool
            Scan the entry points again (after installing a plugin at run time).
        """
        if self.group is None or self._plugins_loading or (self._plugins_loaded and not force):
            return ()
        import importlib.metadata  # on the first unknown name or listing: a command's --help never reads it

        self._plugins_loading = True
        self._errors.clear()  # a scan reports its own failures
        added: list[str] = []
        try:
            for point in importlib.metadata.entry_points(group=self.group):
                where = f"{point.name} = {point.value!r}"
                try:
                    loaded = point.load()
                except Exception as exc:  # a broken plugin must not break the package
                    self._fail(point.name,
                               f"entry point {where} does not import: {type(exc).__name__}: {exc}")
                    continue
                try:
                    _check_name("entry point name", point.name)
                    if self._from_plugin is None:
                        self.register(point.name, loaded)
                        names: tuple[str, ...] = (point.name,)
                    else:
                        names = tuple(self._from_plugin(point.name, loaded))
                except (TypeError, ValueError) as exc:
                    self._fail(point.name, f"entry point {where}: {exc}")
                    continue
                self._errors.pop(point.name, None)
                added.extend(names)
        finally:
            self._plugins_loading = False
            self._plugins_loaded = True
        return tuple(added)

    def _fail(self, name: str, message: str) -> None:
        self._errors[name] = message
        warnings.warn(f"decbounds plugin ({self.group}) {message}", RuntimeWarning, stacklevel=4)


class _Objects(MutableMapping[str, T]):
    """`Registry.objects`: the registry read as name -> object (names only, no aliases when iterated)."""

    def __init__(self, registry: Registry[T]) -> None:
        self._registry = registry

    def __getitem__(self, name: str) -> T:
        if name not in self._registry:
            raise KeyError(name)
        return self._registry[name].builder

    def __setitem__(self, name: str, value: T) -> None:
        held = self._registry.get(name)
        if held is None:
            self._registry.register(name, value)
        else:
            self._registry.register(held.name, value, description=held.description, aliases=held.aliases,
                                    replace=True)

    def __delitem__(self, name: str) -> None:
        if name not in self._registry:
            raise KeyError(name)
        self._registry.unregister(name)

    def __iter__(self) -> Iterator[str]:
        return iter(self._registry)

    def __len__(self) -> int:
        return len(self._registry)

    def __repr__(self) -> str:
        return f"{{{', '.join(self._registry.names())}}}"


class _Descriptions(Mapping[str, str]):
    """`Registry.descriptions`: the registry read as name -> one-line description (read-only)."""

    def __init__(self, registry: Registry[Any]) -> None:
        self._objects = _Objects(registry)

    def __getitem__(self, name: str) -> str:
        self._objects[name]  # KeyError for an unknown name
        return self._objects._registry[name].description

    def __iter__(self) -> Iterator[str]:
        return iter(self._objects)

    def __len__(self) -> int:
        return len(self._objects)


def require_instance(cls: type, what: str) -> Callable[[object], None]:
    """A registry's ``check``: TypeError unless the object is an instance of ``cls``.

    Parameters
    ----------
    cls, what : type, str
        What the registry holds, and its name in the message ("a rate").
    """

    def check(item: object) -> None:
        if not isinstance(item, cls):
            raise TypeError(f"{what} must be a {cls.__module__}.{cls.__qualname__}; got {_show(item)}")

    return check


def register_each(register: Callable[[_NamedT], _NamedT]) -> Callable[[str, object], tuple[str, ...]]:
    """A registry's ``from_plugin`` for objects that carry their own ``name`` (rates, PEP methods): the entry
    point names one object or a list of them, each registered by ``register(obj)``.

    Parameters
    ----------
    register : callable
        ``register(obj) -> obj`` (e.g. ``bounds.register_rate``), raising TypeError/ValueError to refuse.
    """

    def from_plugin(point_name: str, loaded: object) -> tuple[str, ...]:
        items = list(loaded) if isinstance(loaded, (list, tuple)) else [loaded]
        # what a plugin names is not trusted: ``register`` checks each object (TypeError for the wrong kind)
        return tuple(str(register(cast(_NamedT, item)).name) for item in items)

    return from_plugin


class KnownNames(Collection[str]):
    """A registry's names as argparse ``choices``, known without importing its builders (``--help`` imports no
    numpy): built-in names answer at once, another name is looked up in ``module.attribute``. Iterated before
    that module is imported: the built-in names, then the (unloaded) entry points of ``group``.

    Parameters
    ----------
    builtin : iterable of str
        The names the registry holds without plugins.
    module, attribute : str
        Where the registry is defined.
    group : str, optional
        The registry's entry-point group.

    Examples
    --------
    >>> "metropolis" in KnownNames(("metropolis",), "decbounds.instances.gossip", "WEIGHT_RULES")
    True
    """

    def __init__(self, builtin: Iterable[str], module: str, attribute: str, *, group: str | None = None
                 ) -> None:
        self.builtin = tuple(builtin)
        self.module = module
        self.attribute = attribute
        self.group = group

    def _registry(self) -> Collection[str]:
        import importlib

        registry: Collection[str] = getattr(importlib.import_module(self.module), self.attribute)
        return registry

    def __contains__(self, name: object) -> bool:
        return name in self.builtin or name in self._registry()

    def __iter__(self) -> Iterator[str]:
        import sys

        if self.module in sys.modules:
            return iter(tuple(self._registry()))
        if self.group is None:
            return iter(self.builtin)
        import importlib.metadata

        plugins = [point.name for point in importlib.metadata.entry_points(group=self.group)]
        return iter(dict.fromkeys((*self.builtin, *plugins)))

    def __len__(self) -> int:
        return len(tuple(iter(self)))

    def __repr__(self) -> str:
        return f"KnownNames({self.module}.{self.attribute})"
