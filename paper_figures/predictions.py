"""Predicted T_eps against the spectral gap 1 - lam for every entry of the ``bounds`` catalog, at the fixed
``PARAMETERS`` (eps in the convention E||grad f|| <= eps; other entries converted). Line style carries the
status: solid confirmed, dashed derived, dotted recalled; the vertical line marks Cor. 2's path gap.
Run: ``python -m decbounds.paper_figures.predictions [--full | --tiny] [--out DIR]``."""

from __future__ import annotations

import itertools
import math
import pathlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

import numpy as np
from decbounds.paper_figures.plotting import (
    ALGORITHM_STYLES,
    BOUND_STYLE,
    DEFAULT_OUT_DIR,
    figure_main,
    new_figure,
    save_figure,
    style,
)

from decbounds import bounds

if TYPE_CHECKING:
    import numpy.typing as npt
    from matplotlib.figure import Figure

__all__ = ["MIN_GAP", "PARAMETERS", "main", "make", "predicted_curves"]

PARAMETERS: dict[str, float] = {
    "Delta": 100.0, "L": 1.0, "sigma": 0.1, "varsigma": 1.0, "varsigma0": 1.0,
    "n": 16, "B": 1, "D": 15, "epsilon": 0.01, "omega": 0.0, "delta": 1.0, "G": 1.0,
}
#: Smallest spectral gap on the x axis (largest is 1, lam = 0).
MIN_GAP = 1e-4

_STATUS_LINESTYLE = {"confirmed": "-", "derived": "--", "recalled": ":"}


def predicted_curves(gaps: np.ndarray, parameters: dict[str, float] = PARAMETERS) -> dict[str, np.ndarray]:
    """T_eps of every catalog entry (grad_norm convention) at lam = 1 - gaps, by name (theory.md §8, §13).

    Parameters
    ----------
    gaps : numpy.ndarray
        Spectral gaps 1 - lam, in (0, 1].
    parameters : dict
        The other catalog parameters (default `PARAMETERS`).

    Examples
    --------
    >>> curves = predicted_curves(np.array([0.5, 0.01]))
    >>> round(float(curves["lower_bound_gossip"][1]))
    16250000
    """
    lam = 1.0 - np.asarray(gaps, dtype=float)
    curves = {}
    for name in bounds.names():
        if bounds.get(name).convention == "function_value":  # in n_eff, not 1 - lam (docs/topology.md)
            continue
        rate = bounds.get(name).in_convention("grad_norm")
        curves[name] = rate.lambdify()(lam=lam, **parameters)
    return curves


#: Colours of the entries that are not algorithms of ``paper_figures.plotting.ALGORITHM_STYLES``.
_OTHER_COLORS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown", "tab:pink",
                 "tab:gray", "tab:olive", "tab:cyan", "navy", "darkgoldenrod")


def _groups(curves: dict[str, np.ndarray], kind: str) -> list[list[str]]:
    """Entries of ``kind`` with identical curves grouped (D-PSGD = SGP, D^2 = DSGT = GT-DSGD in Table 2)."""
    groups: list[list[str]] = []
    for name in (name for name in bounds.names(kind) if name in curves):
        for group in groups:
            if np.allclose(curves[group[0]], curves[name], rtol=1e-12, atol=0.0):
                group.append(name)
                break
        else:
            groups.append([name])
    return groups


def make(out_dir: pathlib.Path = DEFAULT_OUT_DIR, *, full: bool = False,
         tiny: bool = False) -> list[pathlib.Path]:
    """Write ``predictions.png`` and ``.pdf`` (no sweep: the catalog at `PARAMETERS`; docs/theory.md §8, §13).

    Parameters
    ----------
    out_dir : pathlib.Path
        Output folder (created).
    full, tiny : bool
        The full sweep, or the test suite's seconds-long one (neither: quick).
    """
    points = 16 if tiny else 1000 if full else 200
    gaps = np.logspace(math.log10(MIN_GAP), 0.0, points)
    curves = predicted_curves(gaps)
    fig, axes = cast("tuple[Figure, npt.NDArray[np.object_]]",  # two panels: an array of Axes
                     new_figure(1, 2, width=6.4, height=6.0, sharey=True))
    other_colors = itertools.cycle(_OTHER_COLORS)  # the catalog may outgrow the palette
    for axis, kind in zip(axes, ("lower", "upper"), strict=True):
        if kind == "upper":  # the reference every upper bound is measured against
            axis.loglog(gaps, curves["lower_bound_gossip"], label="lower_bound_gossip (reference)",
                        **{**BOUND_STYLE, "linewidth": 3.0, "alpha": 0.5})
        for group in _groups(curves, kind):
            rate = bounds.get(group[0])
            values = np.where(curves[group[0]] > 0, curves[group[0]], np.nan)
            color = style(group[0])["color"] if group[0] in ALGORITHM_STYLES else next(other_colors)
            converted = " (from $\\varepsilon^2$ conv.)" if rate.convention != "grad_norm" else ""
            axis.loglog(gaps, values, color=color, linestyle=_STATUS_LINESTYLE[rate.status], linewidth=1.6,
                        label=" = ".join(group) + converted)
        axis.axvline(1.0 - math.cos(math.pi / PARAMETERS["n"]), color="0.5", linestyle=(0, (1, 3)),
                     linewidth=1.0)
        axis.set_xlabel("spectral gap $1-\\lambda$")
        axis.set_title(f"{kind} bounds", fontsize="medium")
        axis.grid(True, which="major", alpha=0.3)
        axis.legend(fontsize="x-small", loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=2,
                    frameon=False)
    axes[0].set_ylabel("predicted iterations $T_\\varepsilon$ (constants 1)")
    p = PARAMETERS
    fig.suptitle(f"Predicted $T_\\varepsilon$ for $E\\|\\nabla f\\|\\leq\\varepsilon$: "
                 f"$\\Delta$={p['Delta']:g}, L={p['L']:g}, $\\sigma$={p['sigma']:g}, "
                 f"$\\varsigma$=$\\varsigma_0$={p['varsigma']:g}, n={p['n']}, B={p['B']}, D={p['D']}, "
                 f"$\\varepsilon$={p['epsilon']:g}\n"
                 "solid: confirmed, dashed: derived, dotted: recalled; vertical: path graph "
                 "$1-\\cos(\\pi/n)$", fontsize="medium")
    return save_figure(fig, out_dir, "predictions")


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m decbounds.paper_figures.predictions``: write the figure, print the paths.

    Parameters
    ----------
    argv : sequence of str, optional
        The command-line arguments (default ``sys.argv[1:]``).
    """
    return figure_main(make, "Predicted iterations vs spectral gap for every catalog entry.", argv)


if __name__ == "__main__":
    raise SystemExit(main())
