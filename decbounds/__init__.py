"""decbounds: the theory of optimal complexity in decentralized training (Lu & De Sa, ICML 2021 / JMLR 2023),
executable and checkable.

The subpackages mirror the lower bound's triple (f, O, G) and the class A of algorithms: `bounds`,
`instances`, `oracles`, `algorithms`, `pep`, `paper_figures`, `verify` (docs/architecture.md); beside
them `decbounds.cli`, `decbounds.registry` and `decbounds.files`. Each subpackage is imported on first use.

Examples
--------
>>> import decbounds
>>> decbounds.bounds.get("lower_bound_gossip").kind
'lower'
"""

from __future__ import annotations

import importlib
import pathlib
from types import ModuleType

__all__ = ["SUBPACKAGES", "__version__", "algorithms", "bounds", "instances", "oracles", "paper_figures",
           "pep", "verify", "version"]

#: The one source of the version: pyproject.toml reads it (``[tool.setuptools.dynamic]``), ``decbounds
#: --version`` prints it and every sweep record stores it.
__version__ = "0.2.0"

#: The subpackages, each a folder at the top of the repository (pyproject.toml maps them into this namespace).
SUBPACKAGES: tuple[str, ...] = ("bounds", "instances", "oracles", "algorithms", "pep", "paper_figures",
                               "verify")


def _lead_to_the_source_folders() -> None:
    """In a source tree, let ``decbounds.<subpackage>`` find the folders beside this one (the repository's
    top-level ``bounds/``, ...): Python started inside the clone imports this folder from the current
    directory first, whatever is installed, so the root joins ``__path__``.
    """
    here = pathlib.Path(__file__).resolve().parent
    if (here / SUBPACKAGES[0]).is_dir():  # installed: the subpackages are inside
        return
    root = here.parent
    if all((root / name / "__init__.py").is_file() for name in SUBPACKAGES) and str(root) not in __path__:
        __path__.append(str(root))


_lead_to_the_source_folders()


def version() -> str:
    """The installed version of decbounds (``__version__``)."""
    return __version__


def __getattr__(name: str) -> ModuleType:
    if name in SUBPACKAGES:
        module = importlib.import_module(f"{__name__}.{name}")
        globals()[name] = module
        return module
    raise AttributeError(f"module 'decbounds' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(SUBPACKAGES))
