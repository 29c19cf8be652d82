"""A package's public names imported on first use (PEP 562), so that importing the package (and a
subcommand's ``--help``) loads none of the numerical stack its modules need; its deprecated names warn."""

from __future__ import annotations

import importlib
import sys
import warnings
from collections.abc import Callable, Mapping
from types import ModuleType

__all__ = ["deprecated_attributes", "lazy_exports"]


def lazy_exports(package: str, exports: Mapping[str, str], namespace: dict[str, object], *,
                 deprecated: Mapping[str, tuple[str, str, str]] | None = None
                 ) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The module ``__getattr__`` (a public name, else a submodule, else AttributeError) and ``__dir__`` of a
    package whose names live in its modules.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    exports : mapping of str to str
        Each public name -> the module (relative to ``package``) defining it.
    namespace : dict
        The package's ``globals()``, where a name read once is stored.
    deprecated : mapping of str to (str, str, str), optional
        Old name -> (module, attribute, message): warned on every read, never stored, not in ``dir()``;
        ``module`` absolute, or relative with a leading ".".
    """
    shadowed = {name for name, module in exports.items() if name == module}

    class _Package(ModuleType):
        """Importing submodule ``tune`` binds the package's ``tune`` to the module; the public name (the
        function ``tune`` it defines) is kept instead, as an eager ``from .tune import tune`` would."""

        def __setattr__(self, name: str, value: object) -> None:
            if name in shadowed and isinstance(value, ModuleType) and hasattr(value, name):
                value = getattr(value, name)
            super().__setattr__(name, value)

    if shadowed:
        sys.modules[package].__class__ = _Package

    old_names = dict(deprecated or {})

    def module_getattr(name: str) -> object:
        if name in old_names:
            path, attribute, message = old_names[name]
            warnings.warn(message, DeprecationWarning, stacklevel=2)
            return getattr(importlib.import_module(f"{package}{path}" if path.startswith(".") else path),
                           attribute)
        module = exports.get(name)
        if module is not None:
            value = getattr(importlib.import_module(f"{package}.{module}"), name)
        else:
            try:
                value = importlib.import_module(f"{package}.{name}")
            except ModuleNotFoundError as err:
                if err.name != f"{package}.{name}":
                    raise
                raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        namespace[name] = value
        return value

    def module_dir() -> list[str]:
        return sorted(set(namespace) | set(exports))

    return module_getattr, module_dir


def deprecated_attributes(module: str, namespace: dict[str, object], old_names: Mapping[str, tuple[str, str]]
                          ) -> Callable[[str], object]:
    """A module's ``__getattr__`` for its deprecated names: each read warns and returns the value of the
    attribute that replaced it.

    Parameters
    ----------
    module : str
        The module's ``__name__``.
    namespace : dict
        The module's ``globals()``.
    old_names : mapping of str to (str, str)
        Old name -> (the attribute it reads, the DeprecationWarning's message).
    """

    def module_getattr(name: str) -> object:
        if name not in old_names:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        attribute, message = old_names[name]
        warnings.warn(message, DeprecationWarning, stacklevel=2)
        return namespace[attribute]

    return module_getattr
