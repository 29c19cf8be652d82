"""The ``decbounds`` console script (also ``python -m decbounds``): one subcommand per package, each a thin
layer over its API. A package's ``<package>/cli.py`` has ``add_parser(subparsers)``; the subcommands are
the registry `COMMANDS` (entry-point group ``decbounds.subcommands``), and `main` imports only the one on
the command line, so ``decbounds predict`` never imports matplotlib or the algorithms.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import os
import sys
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from typing import TYPE_CHECKING, Any, cast

import decbounds
from decbounds.lazy_exports import deprecated_attributes
from decbounds.registry import Registry

if TYPE_CHECKING:
    #: What a subcommand's ``add_parser`` receives: ``ArgumentParser.add_subparsers()``'s action.
    SubParsers = argparse._SubParsersAction[argparse.ArgumentParser]

__all__ = ["BROKEN_PIPE_STATUS", "COMMANDS", "INTERRUPTED_STATUS", "HelpFormatter", "SuggestingParser",
           "build_parser", "interrupted", "main", "register_subcommand"]


class HelpFormatter(argparse.HelpFormatter):
    """Every subcommand's help: an option's default is shown unless its help states it, and a required option
    says "(required)".
    """

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if action.help is argparse.SUPPRESS:
            return action.help
        if action.required and action.option_strings:
            text += " (required)"
        elif (action.option_strings and action.default not in (None, False, argparse.SUPPRESS, [])
              and "default" not in text):
            text += " (default: %(default)s)"
        return text


class SuggestingParser(argparse.ArgumentParser):
    """An `argparse.ArgumentParser` whose "invalid choice" error adds "did you mean ...?" (the closest
    choices); its sub-parsers are of this class too, with `HelpFormatter`.

    Examples
    --------
    >>> parser = SuggestingParser(prog="demo", exit_on_error=False)
    >>> _ = parser.add_argument("topology", choices=["ring", "path", "torus"])
    >>> parser.parse_args(["rign"])
    Traceback (most recent call last):
    ...
    argparse.ArgumentError: argument topology: invalid choice: 'rign'; did you mean 'ring'? (choose from ...
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def unknown_options(self, extras: Sequence[str]) -> str:
        """The error of options this parser does not take, each with the closest one it takes.

        Parameters
        ----------
        extras : sequence of str
            What ``parse_known_args`` left over.
        """
        known = [option for action in self._actions for option in action.option_strings
                 if action.help is not argparse.SUPPRESS]
        words = []
        for extra in extras:
            close = difflib.get_close_matches(extra.partition("=")[0], known, n=2, cutoff=0.6) \
                if extra.startswith("-") else []
            words.append(f"{extra} (did you mean {' or '.join(close)}?)" if close else extra)
        return f"unrecognized arguments: {' '.join(words)}"

    def _check_value(self, action: argparse.Action, value: object) -> None:
        # argparse's own hook for `choices` (Python 3.10-3.14); only the message changes
        choices = action.choices
        if choices is None or value in choices:
            return
        names = [str(choice) for choice in choices]
        close = difflib.get_close_matches(str(value), names, n=3, cutoff=0.6)
        hint = f"; did you mean {' or '.join(repr(name) for name in close)}?" if close else ""
        raise argparse.ArgumentError(action, f"invalid choice: {value!r}{hint} (choose from "
                                             f"{', '.join(repr(name) for name in names)})")


def _from_module(module: str) -> Callable[[SubParsers], None]:
    """The registration function of a subcommand whose parser ``module.add_parser`` adds (imported only
    when that subcommand is on the command line)."""

    def add(subparsers: SubParsers) -> None:
        importlib.import_module(module).add_parser(subparsers)

    add.__name__ = add.__qualname__ = f"add_parser_of_{module.rpartition('.')[2]}"
    return add


#: The subcommand registry (the one `decbounds.registry.Registry` mechanism): name -> the function that
#: adds its parser, with its one-line help as the description; the entry-point group
#: ``decbounds.subcommands`` adds a plugin's (an ``add_parser(subparsers)`` whose docstring's first line is
#: the help).
COMMANDS: Registry[Callable[[SubParsers], None]] = Registry("subcommand", field="command",
                                                            group="decbounds.subcommands")


def register_subcommand(name: str, add_parser: Callable[[SubParsers], None] | str, *, help: str) -> None:
    """Make ``decbounds NAME`` run the subcommand ``add_parser(subparsers)`` adds; ValueError if ``name`` is
    taken.

    Parameters
    ----------
    name : str
        The subcommand.
    add_parser : callable or str
        ``add_parser(subparsers) -> None``, or the name of a module holding one (imported only when it runs).
    help : str
        The line ``decbounds --help`` lists without importing the subcommand.
    """
    builder = _from_module(add_parser) if isinstance(add_parser, str) else add_parser
    COMMANDS.register(name, builder, description=help)


register_subcommand("predict", "decbounds.bounds.cli",
                    help="predicted iteration complexity T_eps of a catalog entry")
register_subcommand("time", "decbounds.algorithms.time_cli",
                    help="time lower bound (Tyurin & Richtárik 2024) and predicted seconds on a cluster")
register_subcommand("worst-case", "decbounds.pep.cli",
                    help="computed worst case of K iterations (decentralized performance estimation, an SDP)")
register_subcommand("gossip", "decbounds.instances.cli",
                    help="lam and spectral gap of a topology under every weight rule")
register_subcommand("run", "decbounds.algorithms.cli",
                    help="run an algorithm on a hard instance and compare with the bounds")
register_subcommand("figures", "decbounds.paper_figures.figures_cli",
                    help="make the paper's figures (PNG + PDF)")
register_subcommand("verify", "decbounds.verify.cli",
                    help="hold your step rule against the lower bounds (class audit, the paper's "
                         "experiments)")

#: Live views of `COMMANDS` (name -> add_parser, name -> help): what the deprecated names read.
_COMMAND_VIEW: MutableMapping[str, Callable[[SubParsers], None]] = COMMANDS.objects()
_COMMAND_HELP: Mapping[str, str] = COMMANDS.descriptions()

#: Old name -> (attribute, message): the subcommand registry has one name, `COMMANDS` (until 0.4).
_DEPRECATED = {
    "SUBCOMMANDS": ("_COMMAND_VIEW", "decbounds.cli.SUBCOMMANDS is deprecated: the subcommand registry is "
                    "decbounds.cli.COMMANDS (COMMANDS.objects() is this view); the alias goes in 0.4"),
    "SUBCOMMAND_HELP": ("_COMMAND_HELP", "decbounds.cli.SUBCOMMAND_HELP is deprecated: read "
                        "decbounds.cli.COMMANDS.descriptions(); the alias goes in 0.4"),
}


__getattr__ = deprecated_attributes(__name__, globals(), _DEPRECATED)
if TYPE_CHECKING:  # what the deprecated names read, for type checkers
    SUBCOMMANDS: MutableMapping[str, Callable[[SubParsers], None]]
    SUBCOMMAND_HELP: Mapping[str, str]


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The top-level parser with ``command`` registered, or, when it is None or unknown, every subcommand as a
    stub holding its name and help (so ``decbounds --help`` imports no subcommand's stack).

    Parameters
    ----------
    command : str, optional
        A subcommand name (of `COMMANDS`).

    Examples
    --------
    >>> args = build_parser("run").parse_args(["run", "dsgt", "--n", "8"])
    >>> args.algorithm, args.n, args.instance
    ('dsgt', 8, 'comm-path')
    """
    parser = SuggestingParser(
        prog="decbounds",
        description="Predicted and measured complexity of decentralized training (Lu & De Sa 2021/2023).",
    )
    parser.add_argument("--version", action="version", version=f"decbounds {decbounds.__version__}")
    # a SuggestingParser's sub-parsers are SuggestingParsers: argparse.ArgumentParsers, as `SubParsers` says
    subparsers = cast("SubParsers", parser.add_subparsers(dest="command", metavar="COMMAND"))
    if command is None or command not in COMMANDS:
        for name in COMMANDS:
            subparsers.add_parser(name, help=COMMANDS[name].description)
        return parser
    COMMANDS[command].builder(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``decbounds`` script; returns the exit status: the subcommand's, 2 without one,
    `BROKEN_PIPE_STATUS` (141) when stdout's reader closed the pipe, `INTERRUPTED_STATUS` (130) after Ctrl-C
    (one line, no traceback, in both cases).

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments (default ``sys.argv[1:]``).
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        parser = build_parser(argv[0] if argv else None)
        args, extras = parser.parse_known_args(argv)
        if extras:  # named by the subcommand's parser, which says what it takes instead
            command = _subcommand_parser(parser, getattr(args, "command", None)) or parser
            if isinstance(command, SuggestingParser):
                command.error(command.unknown_options(extras))
            command.error(f"unrecognized arguments: {' '.join(extras)}")
        if getattr(args, "func", None) is None:
            parser.print_help()
            return 2
        status = int(args.func(args) or 0)
        sys.stdout.flush()  # a closed pipe shows here, inside the handler, not at interpreter exit
        return status
    except BrokenPipeError:
        return _closed_pipe()
    except KeyboardInterrupt:
        return interrupted()


def _subcommand_parser(parser: argparse.ArgumentParser, command: str | None
                       ) -> argparse.ArgumentParser | None:
    """The parser of subcommand ``command`` inside the top-level ``parser`` (None if it has none)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and command in action.choices:
            found: argparse.ArgumentParser = action.choices[command]
            return found
    return None


#: Exit status after Ctrl-C: 128 + SIGINT, what a shell reports for a program the signal ended.
INTERRUPTED_STATUS = 130


def interrupted() -> int:
    """Every command's end after Ctrl-C: one line on stderr (sweeps resume after their last record) and
    returns `INTERRUPTED_STATUS`.
    """
    print("interrupted: the finished points are in the records; run the same command again to resume",
          file=sys.stderr, flush=True)
    return INTERRUPTED_STATUS


#: Exit status after the reader of stdout went away (``decbounds predict --list | head``): 128 + SIGPIPE,
#: what a shell reports for a program the signal ended.
BROKEN_PIPE_STATUS = 141


def _closed_pipe() -> int:
    """Every subcommand's end when stdout's reader closed the pipe: no traceback, status 128 + SIGPIPE; stdout
    goes to /dev/null so the flush at exit does not raise again (the ``signal`` docs, "Note on SIGPIPE").
    """
    try:
        descriptor = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # not a file (a test's StringIO): nothing to flush later
        return BROKEN_PIPE_STATUS
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, descriptor)
    os.close(devnull)
    return BROKEN_PIPE_STATUS


if __name__ == "__main__":
    sys.exit(main())
