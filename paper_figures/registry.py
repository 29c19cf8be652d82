"""The figure registry: a figure is ``make(out_dir, *, full=False, tiny=False) -> list[pathlib.Path]``
registered once with `register_figure`; the runner, the CLI, the combined exponent table and
``docs/images.py`` read `FIGURES`. Plugins register through the entry-point group ``decbounds.figures``.
Built-in figures are registered by import path (reading the registry imports no figure module).

>>> FIGURES["communication"].builder.measured
True
"""

from __future__ import annotations

import importlib
import pathlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from decbounds.lazy_exports import deprecated_attributes
from decbounds.registry import Registry, require_instance

__all__ = ["FIGURES", "Figure", "MakeFigure", "concurrent_order", "docs_images", "measured_figures",
           "register_figure"]


class MakeFigure(Protocol):
    """What a figure is: ``make(out_dir, *, full=False, tiny=False) -> list of the files written``."""

    def __call__(self, out_dir: pathlib.Path, *, full: bool = False, tiny: bool = False
                 ) -> list[pathlib.Path]: ...


@dataclass(frozen=True)
class Figure:
    """One registered figure.

    Parameters
    ----------
    make : callable or str
        ``make(out_dir, *, full, tiny) -> list[pathlib.Path]``, or ``"module:function"`` (imported when made).
    images : tuple of str
        The PNG stems the documentation embeds (``docs/images.py``).
    measured : bool
        Its ``<name>_exponents`` table joins the combined table.
    priority : float
        Made at once, smaller asks for its first turn earlier (the longest chains first).
    """

    make: MakeFigure | str
    images: tuple[str, ...] = ()
    measured: bool = False
    priority: float = 100.0

    def function(self) -> MakeFigure:
        """The ``make`` function (imported from its path on first use)."""
        if isinstance(self.make, str):
            module, _, name = self.make.partition(":")
            made: MakeFigure = getattr(importlib.import_module(module), name)
            return made
        return self.make

    def __call__(self, out_dir: pathlib.Path, *, full: bool = False, tiny: bool = False
                 ) -> list[pathlib.Path]:
        """Make the figure into ``out_dir``: ``make(out_dir, full=full, tiny=tiny)``.

        Parameters
        ----------
        out_dir : pathlib.Path
            The output folder.
        full, tiny : bool
            The full set, or the test suite's seconds-long one (neither: quick).
        """
        return self.function()(out_dir, full=full, tiny=tiny)


_check_figure = require_instance(Figure, "a figure (register_figure makes one)")


def _register_plugin(point_name: str, loaded: object) -> tuple[str, ...]:
    """What an entry point of ``decbounds.figures`` names: a `Figure` or a ``make`` function."""
    if not isinstance(loaded, Figure):
        if not callable(loaded):
            raise TypeError(f"names {loaded!r}, neither a Figure nor a make function")
        loaded = Figure(make=loaded)
    FIGURES.register(point_name, loaded)
    return (point_name,)


#: The figure registry (the one `decbounds.registry.Registry` mechanism): name -> `Figure`, in the order
#: the figures are made one after the other.
FIGURES: Registry[Figure] = Registry("figure", group="decbounds.figures", check=_check_figure,
                                             from_plugin=_register_plugin)


def register_figure(name: str, make: MakeFigure | str, *, images: tuple[str, ...] = (),
                    measured: bool = False, priority: float = 100.0, description: str | None = None
                    ) -> Figure:
    """Register the figure ``name`` for the runner, the CLI, the combined exponent table and the docs'
    images (docs/extending.md); ValueError if another figure has the name.

    Parameters
    ----------
    name : str
        The figure's name (``--only NAME``).
    make : callable or str
        ``make(out_dir, *, full=False, tiny=False) -> list[pathlib.Path]``, or ``"module:function"``.
    images : tuple of str
        PNG stems the documentation embeds.
    measured : bool
        Whether its ``<name>_exponents`` table joins the combined one.
    priority : float
        Its turn when the figures are made at once (smaller first; the built-ins use 0-8).
    description : str, optional
        One line for listings (default: the make function's docstring's first line).
    """
    figure = Figure(make=make, images=tuple(images), measured=bool(measured), priority=float(priority))
    if description is None and not isinstance(make, str):
        description = (make.__doc__ or "").strip().split("\n")[0]
    FIGURES.register(name, figure, description=description or "")
    return figure


def measured_figures() -> tuple[str, ...]:
    """The figures whose exponent tables are joined, in registration order.
    """
    return tuple(name for name, figure in FIGURES.objects().items() if figure.measured)


def docs_images() -> tuple[str, ...]:
    """The PNG stems every registered figure asks the documentation to embed.
    """
    return tuple(stem for figure in FIGURES.objects().values() for stem in figure.images)


def concurrent_order(names: Iterable[str] | None = None) -> tuple[str, ...]:
    """The registered figures (or ``names``) in the order they ask for their first turn when made at once:
    by ``priority``, then registration order; names not registered go last.

    Parameters
    ----------
    names : iterable of str, optional
        The figures to order (default: every registered one).
    """
    names = list(FIGURES if names is None else names)
    figures = FIGURES.objects()

    def priority(name: str) -> float:
        figure = figures.get(name)
        return figure.priority if isinstance(figure, Figure) else float("inf")

    return tuple(sorted(names, key=priority))  # sorted is stable: ties keep the given order


def _builtin(name: str, priority: float, *, images: tuple[str, ...] = (), measured: bool = False,
             description: str) -> None:
    register_figure(name, f"decbounds.paper_figures.{name}:make", images=images, measured=measured,
                    priority=priority, description=description)


# The built-in figures, in the order they are made one after the other; priority is their old place in the
# concurrent order (the longest chains of dependent runs first), images the PNGs docs/results embeds.
_builtin("predictions", 8, images=("predictions",),
         description="predicted T_eps against 1 - lam for every catalog entry")
_builtin("gossip", 7, images=("gossip",),
         description="Figure 5: spectral gaps of the weight rules; multi-step gossip")
_builtin("communication", 0, images=("communication",), measured=True,
         description="Figure 1: the communication term, measured T_eps on Cor 2's path")
_builtin("sampling", 4, images=("sampling",), measured=True,
         description="Figure 2: the sampling term, measured T_eps on Setting 1")
_builtin("spectral_gap", 1, images=("spectral_gap",), measured=True,
         description="Figure 3: T_eps against 1/(1 - lam) through the lazy W_kappa")
_builtin("heterogeneity", 2, images=("heterogeneity", "heterogeneity_sparse"),
         description="Figure 4: training loss as the data gets less shuffled")
_builtin("time_varying", 3, images=("time_varying",), measured=True,
         description="T_eps on static and time-varying graphs")
_builtin("compression", 5, images=("compression",), measured=True,
         description="T_eps and bits-to-eps against the compression factor 1/delta")
_builtin("topology", 9, images=("topology",),
         description="loss across the topology zoo against 1 - lam and against n_eff(gamma)")
_builtin("worst_case", 6, images=("worst_case", "worst_case_linear"),
         description="computed worst cases (pep.worst_case) beside the catalog's rates")
register_figure("time", "decbounds.paper_figures.timing:make", images=("time",), priority=9,
                description="seconds to eps on uneven clusters beside Tyurin & Richtárik's time lower bound")


#: ``FIGURE_REGISTRY``, the previous release's name of `FIGURES`, deprecated.
__getattr__ = deprecated_attributes(__name__, globals(), {"FIGURE_REGISTRY": (
    "FIGURES", "paper_figures.registry.FIGURE_REGISTRY is deprecated; use FIGURES")})
