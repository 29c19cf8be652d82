"""The combined measured-vs-predicted exponent table: `write_combined` joins the per-figure tables
(``<figure>_exponents.md/.csv``) of an output folder into ``exponents.md`` and ``.csv``, without refitting.
Run: ``python -m decbounds.paper_figures.exponents [--out DIR]``."""

from __future__ import annotations

import argparse
import pathlib
from collections.abc import Sequence

from decbounds.paper_figures.fit import ExponentRow, write_exponent_table
from decbounds.paper_figures.plotting import DEFAULT_OUT_DIR, atomic_write_bytes
from decbounds.paper_figures.registry import measured_figures

__all__ = ["COMBINED_STEM", "MEASURED_FIGURES", "main", "write_combined", "write_figure_table"]

#: The built-in figures whose tables are joined, in this order (`registry.measured_figures`: those
#: registered with ``measured=True``, plugins' included, read when the table is written).
MEASURED_FIGURES: tuple[str, ...] = measured_figures()

COMBINED_STEM = "exponents"


def write_figure_table(rows: Sequence[ExponentRow], out_dir: str | pathlib.Path, figure: str
                       ) -> list[pathlib.Path]:
    """Write ``<out_dir>/<figure>_exponents.md`` and ``.csv``; return both paths (ValueError for an empty
    ``figure`` or one with a "/").

    Parameters
    ----------
    rows : sequence of ExponentRow
        From ``paper_figures.fit.exponent_rows``.
    out_dir : str or pathlib.Path
        The output folder.
    figure : str
        The figure's plain name.
    """
    if not figure or "/" in figure:
        raise ValueError(f"figure must be a plain name; got figure={figure!r}")
    return write_exponent_table(rows, pathlib.Path(out_dir) / f"{figure}_exponents")


def _table_lines(path: pathlib.Path, header_lines: int) -> tuple[list[str], list[str]]:
    lines = path.read_text().splitlines()
    return lines[:header_lines], [line for line in lines[header_lines:] if line.strip()]


def write_combined(out_dir: str | pathlib.Path, figures: Sequence[str] | None = None
                   ) -> list[pathlib.Path]:
    """Join the per-figure tables present in `out_dir` into ``exponents.md`` / ``.csv`` (headers from the
    first table, ValueError if they differ; notes after the joined table); [] when none exists yet.

    Parameters
    ----------
    out_dir : str or pathlib.Path
        The folder the figures wrote to.
    figures : sequence of str, optional
        Figure names, in table order (default `registry.measured_figures`).

    Examples
    --------
    >>> import shutil, tempfile
    >>> from decbounds.paper_figures.fit import exponent_rows
    >>> def record(n):
    ...     return {"point": {"algorithm": "dsgt"}, "params": {"n": n},
    ...             "result": {"t_eps": 3 * n, "status": "converged"}}
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = write_figure_table(exponent_rows("n", [record(n) for n in (4, 8, 16)], "n"), folder, "sampling")
    >>> [path.name for path in write_combined(folder)]
    ['exponents.md', 'exponents.csv']
    >>> shutil.rmtree(folder)
    """
    out_dir = pathlib.Path(out_dir)
    figures = measured_figures() if figures is None else figures
    written = []
    for suffix, header_lines in ((".md", 2), (".csv", 1)):
        header: list[str] | None = None
        body: list[str] = []
        notes: list[str] = []
        for figure in figures:
            path = out_dir / f"{figure}_exponents{suffix}"
            if not path.is_file():
                continue
            this_header, rows = _table_lines(path, header_lines)
            if header is None:
                header = this_header
            elif this_header != header:
                raise ValueError(f"{path}: its header {this_header} differs from {header}; "
                                 "tables written by different versions cannot be joined")
            if suffix == ".md":
                notes += [line for line in rows if not line.startswith("|")]
                rows = [line for line in rows if line.startswith("|")]
            body += rows
        if header is None:
            return []
        text = "\n".join(header + body + (["", *notes] if notes else [])) + "\n"
        written.append(atomic_write_bytes(out_dir / f"{COMBINED_STEM}{suffix}", text.encode()))
    return written


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m decbounds.paper_figures.exponents [--out DIR]``: write the combined exponent table of the
    measured figures found in ``DIR`` (`write_combined`) and print its paths.

    Parameters
    ----------
    argv : sequence of str, optional
        The command-line arguments (default ``sys.argv[1:]``).
    """
    parser = argparse.ArgumentParser(description="Join the measured figures' exponent tables.")
    parser.add_argument("--out", type=pathlib.Path, default=DEFAULT_OUT_DIR,
                        help=f"output folder (default {DEFAULT_OUT_DIR}, in the current folder)")
    args = parser.parse_args(argv)
    for path in write_combined(args.out):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
