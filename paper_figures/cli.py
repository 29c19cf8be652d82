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
    SUBCOMMAND_HELP,
    SUBCOMMANDS,
    SuggestingParser,
    build_parser,
    interrupted,
    main,
    register_subcommand,
)

__all__ = ["BROKEN_PIPE_STATUS", "COMMANDS", "INTERRUPTED_STATUS", "SUBCOMMANDS", "SUBCOMMAND_HELP",
           "SuggestingParser", "build_parser", "interrupted", "main", "register_subcommand"]

if __name__ == "__main__":
    sys.exit(main())
