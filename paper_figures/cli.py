"""The `decbounds` console script: one subcommand per package, each a thin layer over that package's API.

Each package that offers a subcommand has a module ``<package>/cli.py`` with
``add_parser(subparsers) -> None``; the parser it adds sets ``func(args) -> int``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

# (subcommand, module providing add_parser)
SUBCOMMANDS: tuple[tuple[str, str], ...] = (
    ("predict", "bounds.cli"),
    ("gossip", "instances.cli"),
    ("run", "algorithms.cli"),
    ("figures", "paper_figures.figures_cli"),
)


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with every subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="decbounds",
        description="Predicted and measured complexity of decentralized training (Lu & De Sa 2021/2023).",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for _name, module in SUBCOMMANDS:
        importlib.import_module(module).add_parser(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `decbounds` script; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help()
        return 2
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
