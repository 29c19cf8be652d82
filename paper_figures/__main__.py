"""Run every figure: ``python -m decbounds.paper_figures [--full] [--tiny] [--only NAME ...] [--out DIR]``.

Quick by default; ``--full`` (or ``FULL=1``) for the full set, ``--tiny`` for the test suite's (times in
docs/benchmarks.md). A failing figure does not stop the others; the exit status is 1 if any failed.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import pathlib
import sys
import time
import traceback
from collections.abc import Callable, Mapping, Sequence

from decbounds.paper_figures import registry
from decbounds.paper_figures.options import DEFAULT_OUT_DIR, add_figure_arguments, wants_full
from decbounds.paper_figures.registry import Figure, concurrent_order

__all__ = ["CONCURRENT_ORDER", "FIGURES", "add_arguments", "main", "run_figures", "run_from_arguments"]

#: Every figure: name -> its `registry.Figure` (called as ``make(out_dir, full=, tiny=)``), in the order they
#: are made; a live view of ``registry.FIGURES`` (``register_figure`` adds one).
FIGURES: Mapping[str, Callable[..., list[pathlib.Path]]] = registry.FIGURES.objects()


#: The order in which the built-in figures ask for their first turn when they are made at once
#: (`run_figures`): the longest chains of dependent runs first, so that their first points reach the pool
#: first (each figure's ``priority``; `registry.concurrent_order` orders any set).
CONCURRENT_ORDER: tuple[str, ...] = concurrent_order()


def run_figures(names: Sequence[str] | None = None, out_dir: pathlib.Path = DEFAULT_OUT_DIR, *,
                full: bool = False, tiny: bool = False, concurrent: bool | None = None) -> int:
    """Make the figures `names` (all if None); print what each wrote and its time. A failing figure is
    reported with its traceback and the others still run. Outside tiny mode they are made at once, in
    threads sharing one `sweep.shared_pool`; the records are those of the figures made one after the other.
    ValueError for ``full`` with ``tiny`` or an unknown name.

    Parameters
    ----------
    names : sequence of str, optional
        Figures of `FIGURES`, in the order to make them; None for all.
    out_dir : pathlib.Path
        Output folder.
    full, tiny : bool
        The mode (exclusive); neither is the quick mode.
    concurrent : bool, optional
        Make the figures at once (default: unless ``tiny``).

    Examples
    --------
    >>> run_figures(["nope"])
    Traceback (most recent call last):
    ...
    ValueError: unknown figure(s) ['nope']; the figures are ['predictions', 'gossip', ...]
    """
    if full and tiny:
        raise ValueError("full and tiny are exclusive; choose one mode")
    names = list(FIGURES if names is None else names)
    unknown = [name for name in names if name not in FIGURES]
    if unknown:
        raise ValueError(f"unknown figure(s) {unknown}; the figures are {list(FIGURES)}")
    mode = "full" if full else "tiny" if tiny else "quick"
    concurrent = (not tiny) if concurrent is None else concurrent
    for name in names:  # import every figure module here, before any thread does (no import races)
        figure = FIGURES[name]
        if isinstance(figure, Figure):
            with contextlib.suppress(Exception):  # a module that does not import fails in make_one, reported
                figure.function()
    failures: list[str] = []
    start_all = time.perf_counter()

    def make_one(name: str) -> None:
        start = time.perf_counter()
        try:
            files = FIGURES[name](out_dir, full=full, tiny=tiny)
        except Exception:
            failures.append(name)
            print(f"[{name}] FAILED after {time.perf_counter() - start:.1f} s:", flush=True)
            traceback.print_exc()
            return
        print(f"[{name}] {mode}: {len(files)} files in {time.perf_counter() - start:.1f} s", flush=True)
        for path in files:
            print(f"    {path}")

    if not concurrent or len(names) < 2:
        for name in names:
            make_one(name)
    else:
        order = concurrent_order(names)
        from decbounds.paper_figures import sweep  # the numerical stack, when figures are made

        with sweep.shared_pool():  # the figures' threads take turns in `order`
            sweep.run_concurrently(*(functools.partial(make_one, name) for name in order))
        failures.sort(key=names.index)
    print(f"all figures ({mode}): {time.perf_counter() - start_all:.1f} s; failed: {failures or 'none'}")
    return 1 if failures else 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``python -m decbounds.paper_figures`` and of ``decbounds figures``.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        Gets the mode options and ``--only`` (its choices: the registered figures, plugins' included).
    """
    add_figure_arguments(parser)
    parser.add_argument("--only", nargs="+", metavar="NAME", choices=FIGURES,
                        help=f"make only these figures, of: {', '.join(FIGURES)}")


def run_from_arguments(args: argparse.Namespace) -> int:
    """Run the figures an argparse namespace of `add_arguments` asks for.

    Parameters
    ----------
    args : argparse.Namespace
        From a parser `add_arguments` filled.
    """
    return run_figures(args.only, args.out, full=wants_full(args), tiny=args.tiny)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m decbounds.paper_figures``: make the figures the arguments ask for; 0 when every figure
    was made, 1 when one failed, 130 after Ctrl-C.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments (default ``sys.argv[1:]``).
    """
    parser = argparse.ArgumentParser(prog="python -m decbounds.paper_figures",
                                     description="Make every paper figure.")
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return run_from_arguments(args)
    except KeyboardInterrupt:
        from decbounds.cli import interrupted
        return interrupted()


if __name__ == "__main__":
    sys.exit(main())
