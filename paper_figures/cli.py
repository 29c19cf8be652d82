"""The command line's former address: the ``decbounds`` console script lives in `decbounds.cli` (and runs as
``python -m decbounds``). This module names the same objects, so that ``from decbounds.paper_figures.cli
import main`` and ``python -m decbounds.paper_figures.cli`` keep working for code written against 0.2.
"""

from __future__ import annotations

import sys

from decbounds.cli import (
    BROKEN_PIPE_STATUS,
    COMMANDS,
    INTERRUPTED_STATUS,
    SuggestingParser,
    build_parser,
    interrupted,
    main,
    register_subcommand,
)

__all__ = ["BROKEN_PIPE_STATUS", "COMMANDS", "INTERRUPTED_STATUS", "SuggestingParser", "build_parser",
           "interrupted", "main", "register_subcommand"]


def __getattr__(name: str) -> object:
    """``SUBCOMMANDS`` and ``SUBCOMMAND_HELP``, deprecated: read from `decbounds.cli`, which warns.

    Parameters
    ----------
    name : str
    """
    if name in ("SUBCOMMANDS", "SUBCOMMAND_HELP"):
        import decbounds.cli

        return getattr(decbounds.cli, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

if __name__ == "__main__":
    sys.exit(main())
