"""decbounds: the theory of optimal complexity in decentralized training (Lu & De Sa, ICML 2021 / JMLR
2023), executable and checkable.

The subpackages mirror the lower bound's triple (f, O, G) and the class A of algorithms:

- `decbounds.bounds`: the symbolic lower bounds, the rate catalog, predicted complexity;
- `decbounds.instances`: local functions f (zero chain, heterogeneous problems) and graphs G with gossip
  matrices;
- `decbounds.oracles`: stochastic first-order oracles O;
- `decbounds.algorithms`: the step rules on one engine (the class A), ``run``, ``run_batch``, ``tune``;
- `decbounds.pep`: computed worst cases (PEP) of those step rules;
- `decbounds.paper_figures`: sweeps, exponent fits and the figures;
- `decbounds.verify`: ``decbounds verify``, a user's step rule audited for the class and held against the
  lower bounds on the paper's instances.

Beside them, in this folder: `decbounds.cli`, the ``decbounds`` command line (also ``python -m decbounds``),
whose subcommands come from each package's ``cli`` module; `decbounds.registry`, the one registry mechanism
of every pluggable kind; `decbounds.files`, the one atomic file write.

Each subpackage is imported when first used, so ``import decbounds`` stays cheap.

Examples
--------
>>> import decbounds
>>> decbounds.__version__ == decbounds.version()
True
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
    """In a source tree, let ``decbounds.<subpackage>`` find the folders that stand beside this one.

    Installed, the subpackages sit inside this folder (the wheel's ``decbounds/bounds``, ...). In the
    repository they are its top-level siblings (``bounds/``, ...), which an editable install maps by name;
    but Python started inside the clone imports this folder from the current directory first, whatever is
    installed, and would then find no subpackage. Adding the repository's root to ``__path__`` makes the
    clone behave as the installed package does, editable or not, inside the clone or outside.
    """
    here = pathlib.Path(__file__).resolve().parent
    if (here / SUBPACKAGES[0]).is_dir():  # installed: the subpackages are inside
        return
    root = here.parent
    if all((root / name / "__init__.py").is_file() for name in SUBPACKAGES) and str(root) not in __path__:
        __path__.append(str(root))


_lead_to_the_source_folders()


def version() -> str:
    """The installed version of decbounds (``__version__``).

    Returns
    -------
    str
    """
    return __version__


def __getattr__(name: str) -> ModuleType:
    if name in SUBPACKAGES:
        module = importlib.import_module(f"{__name__}.{name}")
        globals()[name] = module
        return module
    raise AttributeError(f"module 'decbounds' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(SUBPACKAGES))
