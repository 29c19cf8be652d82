"""Shared plot helpers: the Agg backend, one style per algorithm, atomic PNG + PDF output, a figure's main().

Every figure module uses these so that all figures look alike (the same algorithm has the same colour and
marker everywhere) and are written the same way (PNG and PDF, each atomically: a killed run leaves the old
file or the new one, never half a file).
"""

from __future__ import annotations

import argparse
import io
import os
import pathlib
from collections.abc import Callable, Sequence
from typing import Any

import matplotlib

matplotlib.use("Agg")  # headless; before pyplot is imported anywhere

import matplotlib.pyplot as plt

from decbounds import algorithms
from decbounds.files import atomic_write_bytes

__all__ = [
    "ALGORITHM_STYLES",
    "BOUND_STYLE",
    "DEFAULT_OUT_DIR",
    "add_figure_arguments",
    "atomic_write_bytes",
    "blank_figure",
    "figure_main",
    "full_from_environment",
    "label",
    "new_figure",
    "save_figure",
    "style",
    "wants_full",
]

#: Default output folder of every figure, relative to the current folder (in the clone: git-ignored); never
#: inside the installed package.
DEFAULT_OUT_DIR = pathlib.Path("paper_figures") / "out"

#: One look per algorithm registered at import, from its registry entry (``algorithms.entry(name).style``);
#: `style` reads the registry itself, so algorithms registered later are drawn in their own style too.
ALGORITHM_STYLES: dict[str, dict[str, Any]] = {
    found.name: found.style.as_dict() for found in algorithms.entries()
}

#: Lower bounds are drawn in grey, dashed; upper-bound predictions in the algorithm's colour, dotted.
BOUND_STYLE: dict[str, Any] = {"color": "0.35", "linestyle": "--", "linewidth": 1.5}

_FALLBACK_COLORS = ("tab:pink", "tab:gray", "darkgoldenrod", "teal", "navy", "crimson")
_FALLBACK_MARKERS = ("*", "h", "p", "X", "d", "8")


def style(algorithm: str) -> dict[str, Any]:
    """Matplotlib keywords (color, marker, linestyle, label) of `algorithm`; stable for unknown names too.

    Parameters
    ----------
    algorithm : str
        A registered algorithm name (its `algorithms.PlotStyle`), or any other name (a fallback look chosen
        from the name's bytes, the same in every process).

    Returns
    -------
    dict
        Keywords for ``Axes.plot``.

    Examples
    --------
    >>> style("detag")
    {'color': 'tab:red', 'marker': 'o', 'label': 'DeTAG', 'linestyle': '-'}
    >>> style("my_method")["label"]
    'my_method'
    """
    if algorithm in algorithms.algorithm_names():
        return algorithms.entry(algorithm).style.as_dict()
    index = sum(algorithm.encode()) % len(_FALLBACK_COLORS)  # stable across processes, unlike hash()
    return {"color": _FALLBACK_COLORS[index], "marker": _FALLBACK_MARKERS[index], "linestyle": "-",
            "label": algorithm}


def label(algorithm: str) -> str:
    """The display name of `algorithm` (its `style`'s label).

    Examples
    --------
    >>> label("d2")
    'D$^2$'
    """
    return style(algorithm)["label"]


def new_figure(nrows: int = 1, ncols: int = 1, *, width: float = 6.4, height: float = 4.2,
               **subplots: Any) -> tuple[matplotlib.figure.Figure, Any]:
    """``plt.subplots`` with a constrained layout and a panel size of `width` x `height` inches.

    Parameters
    ----------
    nrows, ncols : int, default 1
        Panels.
    width, height : float
        Inches per panel.
    **subplots
        Passed to ``plt.subplots`` (``sharey=True``, ...).

    Returns
    -------
    tuple of (matplotlib.figure.Figure, Axes or array of Axes)

    Examples
    --------
    >>> fig, axes = new_figure(1, 2)
    >>> fig.get_size_inches().tolist(), len(axes)
    ([12.8, 4.2], 2)
    >>> plt.close(fig)
    """
    return plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows), layout="constrained",
                        **subplots)


def blank_figure(width: float = 6.4, height: float = 4.2) -> matplotlib.figure.Figure:
    """An empty constrained-layout figure of `width` x `height` inches, for subfigures and custom grids."""
    return plt.figure(figsize=(width, height), layout="constrained")


def save_figure(fig: matplotlib.figure.Figure, out_dir: str | os.PathLike[str], name: str, *,
                dpi: int = 150) -> list[pathlib.Path]:
    """Save `fig` as ``<out_dir>/<name>.png`` and ``.pdf`` (each atomically), close it, return both paths.

    The PDF carries no creation date and the PNG no software tag, so that the same figure gives the same
    bytes from run to run.

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

    Returns
    -------
    list of pathlib.Path
        The PNG and the PDF.
    """
    out_dir = pathlib.Path(out_dir)
    paths = []
    try:
        for extension in ("png", "pdf"):
            buffer = io.BytesIO()
            # A fixed creation date keeps the PDF bytes the same from run to run.
            metadata = {"CreationDate": None} if extension == "pdf" else {"Software": None}
            fig.savefig(buffer, format=extension, dpi=dpi, metadata=metadata)
            paths.append(atomic_write_bytes(out_dir / f"{name}.{extension}", buffer.getvalue()))
    finally:
        plt.close(fig)
    return paths


def full_from_environment() -> bool:
    """Whether ``FULL`` is set to a true value (``make figures FULL=1``)."""
    return os.environ.get("FULL", "").strip().lower() not in ("", "0", "false", "no")


def add_figure_arguments(parser: argparse.ArgumentParser) -> None:
    """The options every figure script (and ``python -m decbounds.paper_figures``) takes: ``--out DIR``,
    ``--full``,
    ``--tiny``."""
    parser.add_argument("--out", type=pathlib.Path, default=DEFAULT_OUT_DIR,
                        help=f"output folder (default {DEFAULT_OUT_DIR}, in the current folder)")
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--full", action="store_true", help="the full set (also FULL=1 in the environment)")
    size.add_argument("--tiny", action="store_true", help="seconds-long runs, as in the test suite")


def wants_full(args: argparse.Namespace) -> bool:
    """Full mode: ``--full``, or ``FULL=1`` in the environment unless ``--tiny`` was given.

    Examples
    --------
    >>> parser = argparse.ArgumentParser()
    >>> add_figure_arguments(parser)
    >>> wants_full(parser.parse_args(["--tiny"]))
    False
    """
    return bool(args.full or (full_from_environment() and not args.tiny))


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

    Returns
    -------
    int
        The exit status, 0.
    """
    parser = argparse.ArgumentParser(description=description)
    add_figure_arguments(parser)
    args = parser.parse_args(argv)
    for path in make(args.out, full=wants_full(args), tiny=args.tiny):
        print(path)
    return 0
