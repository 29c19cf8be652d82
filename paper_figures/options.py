"""The options of every figure script and of ``decbounds figures`` (``--out``, ``--full``, ``--tiny``):
argparse only, so that a command's ``--help`` imports no plotting or numerical stack."""

from __future__ import annotations

import argparse
import os
import pathlib

__all__ = ["DEFAULT_OUT_DIR", "add_figure_arguments", "full_from_environment", "wants_full"]

#: Default output folder of every figure, relative to the current folder (in the clone: git-ignored); never
#: inside the installed package.
DEFAULT_OUT_DIR = pathlib.Path("paper_figures") / "out"


def full_from_environment() -> bool:
    """Whether ``FULL`` is set to a true value (``make figures FULL=1``)."""
    return os.environ.get("FULL", "").strip().lower() not in ("", "0", "false", "no")


def add_figure_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options every figure script takes (``--out DIR``, ``--full``, ``--tiny``) to ``parser``.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The script's parser.
    """
    parser.add_argument("--out", type=pathlib.Path, default=DEFAULT_OUT_DIR,
                        help=f"output folder (default {DEFAULT_OUT_DIR}, in the current folder)")
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--full", action="store_true", help="the full set (also FULL=1 in the environment)")
    size.add_argument("--tiny", action="store_true", help="seconds-long runs, as in the test suite")


def wants_full(args: argparse.Namespace) -> bool:
    """Full mode: ``--full``, or ``FULL=1`` in the environment unless ``--tiny`` was given.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed options of `add_figure_arguments`.
    """
    return bool(args.full or (full_from_environment() and not args.tiny))
