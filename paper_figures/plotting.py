"""Shared plot helpers: the Agg backend, one style per algorithm, atomic PNG + PDF output, main()."""

from __future__ import annotations

import argparse
import io
import os
import pathlib
import warnings
import weakref
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import matplotlib
import numpy as np

matplotlib.use("Agg")  # headless; before pyplot is imported anywhere

import matplotlib.pyplot as plt
from decbounds.paper_figures.options import (  # re-exported: the figure scripts' options live there
    DEFAULT_OUT_DIR,
    add_figure_arguments,
    full_from_environment,
    wants_full,
)
from matplotlib.legend import Legend
from matplotlib.transforms import Bbox

from decbounds import algorithms
from decbounds.files import atomic_write_bytes

if TYPE_CHECKING:
    import matplotlib.axes
    import matplotlib.figure
    import numpy.typing as npt
    from matplotlib.backend_bases import RendererBase

__all__ = [
    "ALGORITHM_STYLES",
    "BOUND_STYLE",
    "DEFAULT_OUT_DIR",
    "LEGEND_LOCATIONS",
    "MIN_LABEL_RATIO",
    "LegibilityWarning",
    "add_figure_arguments",
    "atomic_write_bytes",
    "blank_figure",
    "figure_main",
    "full_from_environment",
    "label",
    "legend_overlap",
    "legibility_problems",
    "new_figure",
    "panels",
    "place_legend",
    "save_figure",
    "style",
    "tick_label_collisions",
    "value_ticks",
    "wants_full",
]

#: One look per algorithm registered at import, from its registry entry (``algorithms.entry(name).style``);
#: `style` reads the registry itself, so algorithms registered later are drawn in their own style too.
ALGORITHM_STYLES: dict[str, dict[str, Any]] = {
    found.name: found.style.as_dict() for found in algorithms.entries()
}

#: Lower bounds are drawn in grey, dashed; upper-bound predictions in the algorithm's colour, dotted.
BOUND_STYLE: dict[str, Any] = {"color": "0.35", "linestyle": "--", "linewidth": 1.5}

#: The preferences `place_legend` was called with, per axes: `save_figure` places a legend again when a later
#: change of the layout (another panel's legend moved outside, a colorbar) has put data under it.
_PLACEMENTS: weakref.WeakKeyDictionary[matplotlib.axes.Axes, tuple[str, dict[str, Any]]] = \
    weakref.WeakKeyDictionary()

#: On a log axis, tick labels of `value_ticks` closer than this ratio collide at the docs' width (21 and 22).
MIN_LABEL_RATIO = 1.1

_FALLBACK_COLORS = ("tab:pink", "tab:gray", "darkgoldenrod", "teal", "navy", "crimson")
_FALLBACK_MARKERS = ("*", "h", "p", "X", "d", "8")


def style(algorithm: str) -> dict[str, str]:
    """Matplotlib keywords (color, marker, linestyle, label) of `algorithm`: its `algorithms.PlotStyle`, or
    for another name a fallback look chosen from the name's bytes (the same in every process).

    Parameters
    ----------
    algorithm : str
        An algorithm name.

    Examples
    --------
    >>> style("detag")
    {'color': 'tab:red', 'marker': 'o', 'label': 'DeTAG', 'linestyle': '-'}
    """
    if algorithm in algorithms.algorithm_names():
        return algorithms.entry(algorithm).style.as_dict()
    index = sum(algorithm.encode()) % len(_FALLBACK_COLORS)  # stable across processes, unlike hash()
    return {"color": _FALLBACK_COLORS[index], "marker": _FALLBACK_MARKERS[index], "linestyle": "-",
            "label": algorithm}


def label(algorithm: str) -> str:
    """The display name of `algorithm` (its `style`'s label, e.g. ``'D$^2$'``).

    Parameters
    ----------
    algorithm : str
        An algorithm name.
    """
    return style(algorithm)["label"]


def new_figure(nrows: int = 1, ncols: int = 1, *, width: float = 6.4, height: float = 4.2,
               **subplots: object
               ) -> tuple[matplotlib.figure.Figure, matplotlib.axes.Axes | npt.NDArray[np.object_]]:
    """``plt.subplots`` with a constrained layout and a panel size of `width` x `height` inches.

    Parameters
    ----------
    nrows, ncols : int, default 1
        Panels.
    width, height : float
        Inches per panel.
    **subplots
        Passed to ``plt.subplots``.
    """
    options: dict[str, Any] = dict(subplots)  # plt.subplots checks them
    made: tuple[matplotlib.figure.Figure, matplotlib.axes.Axes | npt.NDArray[np.object_]] = plt.subplots(
        nrows, ncols, figsize=(width * ncols, height * nrows), layout="constrained", **options)
    return made


def panels(axes: matplotlib.axes.Axes | npt.NDArray[np.object_]) -> npt.NDArray[np.object_]:
    """The panels `new_figure` returned, always as an object array (one Axes: an array of one).

    Parameters
    ----------
    axes : Axes or numpy.ndarray of Axes
        The second value of `new_figure`.
    """
    if isinstance(axes, np.ndarray):
        return axes
    one = np.empty(1, dtype=object)
    one[0] = axes
    return one


def blank_figure(width: float = 6.4, height: float = 4.2) -> matplotlib.figure.Figure:
    """An empty constrained-layout figure of `width` x `height` inches, for subfigures and custom grids.

    Parameters
    ----------
    width, height : float
        The figure's size in inches.
    """
    return plt.figure(figsize=(width, height), layout="constrained")


#: Where `place_legend` tries a legend inside the axes, in this order (after the one asked for).
LEGEND_LOCATIONS: tuple[str, ...] = ("upper left", "upper right", "lower left", "lower right", "center left",
                                     "center right", "upper center", "lower center", "center")


class LegibilityWarning(UserWarning):
    """A figure hides part of itself at the size it is saved: a legend over data points or lines, or tick
    labels drawn on top of each other (`legibility_problems`, checked by `save_figure`)."""


def _renderer(ax: matplotlib.axes.Axes) -> RendererBase:
    """The renderer of the axes' canvas (Agg's ``get_renderer``, which the base canvas class lacks)."""
    get_renderer = getattr(ax.figure.canvas, "get_renderer", None)
    if get_renderer is None:
        raise TypeError(f"the figure's canvas {type(ax.figure.canvas).__name__} has no renderer to measure "
                        "with (the figures use Agg)")
    renderer: RendererBase = get_renderer()
    return renderer


def _obstacles(ax: matplotlib.axes.Axes) -> tuple[np.ndarray, np.ndarray, list[Bbox]]:
    """What a legend must not cover, in display coordinates: every line's vertices and points along its
    segments (with a pad per point: half the marker, or the line width), scatter points, and the boxes of
    the axes' texts."""
    renderer = _renderer(ax)
    points, pads = [], []
    to_pixels = ax.figure.dpi / 72.0
    for line in ax.lines:
        if not line.get_visible():
            continue
        xy = line.get_transform().transform(np.asarray(line.get_xydata(), dtype=float))
        xy = xy[np.all(np.isfinite(xy), axis=1)]
        if len(xy) == 0:
            continue
        if len(xy) > 1:  # the segments too: 16 points along each
            steps = np.linspace(0.0, 1.0, 16)[:, None, None]
            xy = np.concatenate([xy, (xy[:-1] + steps * (xy[1:] - xy[:-1])).reshape(-1, 2)])
        marker = line.get_marker()
        pad = (line.get_markersize() / 2 if marker not in (None, "None", "none", "", " ") else 0.0)
        pad = max(pad, line.get_linewidth() / 2) * to_pixels
        if line.get_linestyle() in ("None", "none", "", " "):
            xy = xy[: len(np.asarray(line.get_xydata()))]  # markers only: no segments
        points.append(xy)
        pads.append(np.full(len(xy), pad))
    for collection in ax.collections:
        offsets = np.asarray(collection.get_offsets(), dtype=float)
        if collection.get_visible() and offsets.size:
            xy = collection.get_offset_transform().transform(offsets)
            xy = xy[np.all(np.isfinite(xy), axis=1)]
            points.append(xy)
            pads.append(np.full(len(xy), 3.0 * to_pixels))
    boxes = [text.get_window_extent(renderer) for text in ax.texts
             if text.get_visible() and text.get_text().strip()]
    if not points:
        return np.zeros((0, 2)), np.zeros(0), boxes
    return np.concatenate(points), np.concatenate(pads), boxes


def legend_overlap(ax: matplotlib.axes.Axes, legend: Legend | None = None) -> int:
    """How many of the axes' data points and text boxes lie under its legend as drawn (0: it hides nothing).

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Drawn at least once when its layout is constrained.
    legend : matplotlib.legend.Legend, optional
        Default ``ax.get_legend()``; None there: 0.
    """
    legend = ax.get_legend() if legend is None else legend
    if legend is None or not legend.get_visible():
        return 0
    box = legend.get_window_extent(_renderer(ax))
    points, pads, boxes = _obstacles(ax)
    inside = ((points[:, 0] + pads > box.x0) & (points[:, 0] - pads < box.x1)
              & (points[:, 1] + pads > box.y0) & (points[:, 1] - pads < box.y1))
    return int(inside.sum()) + sum(1 for other in boxes if box.overlaps(other))


def place_legend(ax: matplotlib.axes.Axes, *, loc: str = "upper left", **kwargs: object) -> Legend:
    """The axes' legend where it hides no data: `loc` if free, else the first free spot of
    `LEGEND_LOCATIONS`, else outside on the right (unlike ``loc="best"``, which only minimises the overlap).

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The axes whose labelled artists the legend lists.
    loc : str, default "upper left"
        The preferred location.
    **kwargs
        Passed to ``Axes.legend``.
    """
    fig = ax.figure
    fig.canvas.draw()
    _PLACEMENTS[ax] = (loc, dict(kwargs))
    options: dict[str, Any] = dict(kwargs)  # ax.legend checks them
    for where in (loc, *[spot for spot in LEGEND_LOCATIONS if spot != loc]):
        at: dict[str, Any] = {"loc": where}  # a name of LEGEND_LOCATIONS, or the caller's loc (checked there)
        legend = ax.legend(**at, **options)
        if legend_overlap(ax, legend) == 0:
            return legend
    outside: Legend = ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, **options)
    return outside


def value_ticks(ax: matplotlib.axes.Axes, values: Sequence[float], *, axis: str = "x") -> None:
    """Ticks at the measured `values` only, labelled plainly (16, not 1.6x10^1), no minor labels; a value
    within `MIN_LABEL_RATIO` of the last labelled one keeps its tick but no label (no collisions at the docs'
    width).

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The axes.
    values : sequence of float
        The tick positions.
    axis : {"x", "y"}, default "x"
        Which axis.

    Examples
    --------
    >>> fig, ax = new_figure()
    >>> ax.set_xscale("log")
    >>> value_ticks(ax, [16, 21, 22, 32])
    >>> [label.get_text() for label in ax.get_xticklabels()]
    ['16', '21', '', '32']
    >>> plt.close(fig)
    """
    target = ax.xaxis if axis == "x" else ax.yaxis
    log = (ax.get_xscale() if axis == "x" else ax.get_yscale()) == "log"
    labels, last = [], None
    for value in sorted(values):
        # two values closer than MIN_LABEL_RATIO (5% of a linear span) share one label: the first
        close = last is not None and (value / last < MIN_LABEL_RATIO if log and last > 0
                                      else value - last < 0.05 * (max(values) - min(values)))
        labels.append("" if close else f"{value:g}")
        last = last if close else value
    target.set_ticks(sorted(values), labels)
    target.set_ticks([], minor=True)


def tick_label_collisions(ax: matplotlib.axes.Axes) -> list[tuple[str, str]]:
    """Pairs of tick labels (major and minor, x and y, within the view) whose boxes overlap as drawn.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Drawn (``fig.canvas.draw()``).
    """
    renderer = _renderer(ax)
    found = []
    for axis, (low, high) in ((ax.xaxis, sorted(ax.get_xlim())), (ax.yaxis, sorted(ax.get_ylim()))):
        labels = []
        for locs, ticks in ((axis.get_majorticklocs(), axis.get_major_ticks),
                            (axis.get_minorticklocs(), axis.get_minor_ticks)):
            for loc, tick in zip(locs, ticks(len(locs)), strict=True):
                text = tick.label1
                if low <= loc <= high and tick.label1.get_visible() and text.get_text().strip():
                    labels.append((text.get_text(), text.get_window_extent(renderer)))
        for i, (first, box) in enumerate(labels):
            found += [(first, second) for second, other in labels[i + 1:] if box.overlaps(other)]
    return found


def _settle_legends(fig: matplotlib.figure.Figure, rounds: int = 3) -> bool:
    """Place again every legend that `place_legend` placed and that now covers data; True if one moved.
    A constrained layout moves every panel when one legend goes outside; a figure with none is not drawn again
    (each draw refines the layout by a fraction of a pixel)."""
    moved_any = False
    for _ in range(rounds):
        moved = [ax for ax in fig.get_axes() if ax in _PLACEMENTS and legend_overlap(ax) > 0]
        for ax in moved:
            loc, kwargs = _PLACEMENTS[ax]
            place_legend(ax, loc=loc, **kwargs)
        if not moved:
            break
        moved_any = True
        fig.canvas.draw()
    return moved_any


def legibility_problems(fig: matplotlib.figure.Figure) -> list[str]:
    """What hides what in `fig` as drawn: every axes' legend over its data (`legend_overlap`) and colliding
    tick labels (`tick_label_collisions`), one sentence each naming the panel by its title.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        Drawn here first.
    """
    fig.canvas.draw()
    problems = []
    for ax in fig.get_axes():
        name = ax.get_title() or ax.get_title(loc="left") or f"axes {fig.get_axes().index(ax)}"
        covered = legend_overlap(ax)
        if covered:
            problems.append(f"{name!r}: the legend covers {covered} data points or texts")
        collisions = tick_label_collisions(ax)
        if collisions:
            problems.append(f"{name!r}: tick labels collide: {collisions[:3]}")
    return problems


def save_figure(fig: matplotlib.figure.Figure, out_dir: str | os.PathLike[str], name: str, *,
                dpi: int = 150) -> list[pathlib.Path]:
    """Save `fig` as ``<out_dir>/<name>.png`` and ``.pdf`` (each atomically, with no dates: the same bytes
    from run to run), close it, return both paths; a `LegibilityWarning` for each of its
    `legibility_problems` left after the legends are placed again in the final layout.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        Closed afterwards, also on error.
    out_dir : str or os.PathLike
        Output folder (created).
    name : str
        File stem.
    dpi : int, default 150
        Resolution of the PNG.
    """
    out_dir = pathlib.Path(out_dir)
    paths = []
    try:
        problems = legibility_problems(fig)
        if problems and _settle_legends(fig):
            problems = legibility_problems(fig)
        for problem in problems:
            warnings.warn(f"{name}: {problem}", LegibilityWarning, stacklevel=2)
        for extension in ("png", "pdf"):
            buffer = io.BytesIO()
            # A fixed creation date keeps the PDF bytes the same from run to run.
            metadata = {"CreationDate": None} if extension == "pdf" else {"Software": None}
            fig.savefig(buffer, format=extension, dpi=dpi, metadata=metadata)
            paths.append(atomic_write_bytes(out_dir / f"{name}.{extension}", buffer.getvalue()))
    finally:
        plt.close(fig)
    return paths


def figure_main(make: Callable[..., list[pathlib.Path]], description: str,
                argv: Sequence[str] | None = None) -> int:
    """A figure module's ``main(argv)``: parse the common options, call ``make``, print the files written.

    Parameters
    ----------
    make : callable
        The figure's ``make(out_dir, *, full, tiny) -> list of paths``.
    description : str
        The command's help text.
    argv : sequence of str, optional
        Arguments (default ``sys.argv[1:]``).
    """
    parser = argparse.ArgumentParser(description=description)
    add_figure_arguments(parser)
    args = parser.parse_args(argv)
    for path in make(args.out, full=wants_full(args), tiny=args.tiny):
        print(path)
    return 0
