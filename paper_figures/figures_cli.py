"""The ``decbounds figures`` subcommand: a thin layer over ``python -m decbounds.paper_figures``."""

from __future__ import annotations

import argparse

__all__ = ["add_parser"]


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``figures [--full | --tiny] [--only NAME ...] [--out DIR]`` to the `decbounds` script.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        The ``decbounds`` parser's subcommands.
    """
    from decbounds.paper_figures.__main__ import add_arguments, run_from_arguments

    parser: argparse.ArgumentParser = subparsers.add_parser(
        "figures", help="make the paper's figures (PNG + PDF)",
        description="Make every figure (quick by default; --full or FULL=1 for the full set).",
    )
    add_arguments(parser)
    parser.set_defaults(func=run_from_arguments)
