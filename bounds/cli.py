"""``decbounds predict``: evaluate a catalog entry at a point, list the catalog, or print LaTeX.

    decbounds predict detag --Delta 1 --L 1 --sigma 1 --varsigma0 1 --n 16 --B 1 --epsilon 0.01 --lam 0.95
    decbounds predict --list
    decbounds predict detag --latex

A thin layer over ``bounds.get``, ``Rate.evaluate_terms``, ``bounds.dominant_term`` and ``bounds.gap``.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from decbounds.bounds.vocabulary import CONVENTIONS, DESCRIPTIONS, INTEGER, SYMBOL_NAMES

if TYPE_CHECKING:  # imported when the command runs: its --help needs no sympy
    from decbounds.bounds.rate import Rate

__all__ = ["add_parser", "run"]

_CRITERION = {"grad_norm": "E||grad f|| <= eps", "grad_norm_sq": "E||grad f||^2 <= eps"}


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the ``predict`` subcommand on ``subparsers`` (an argparse sub-parsers action).

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        From ``ArgumentParser.add_subparsers``.
    """
    parser = subparsers.add_parser(
        "predict",
        help="predicted iteration complexity T_eps of a catalog entry",
        description="Evaluate a bound of the catalog term by term, with its dominant term and its ratio to "
                    "a reference (default: the gossip lower bound, Cor 2). Absolute constants are 1.",
    )
    parser.add_argument("name", nargs="?", help="catalog entry (see --list)")
    parser.add_argument("--list", action="store_true", help="list the catalog with source and status")
    parser.add_argument("--latex", action="store_true", help="print the bound and its terms as LaTeX")
    parser.add_argument("--convention", choices=CONVENTIONS, default=None,
                        help="what --epsilon means: grad_norm (E||grad f|| <= eps, the paper's) or "
                             "grad_norm_sq (E||grad f||^2 <= eps); default grad_norm")
    parser.add_argument("--reference", default="lower_bound_gossip",
                        help="catalog entry to divide by (default: lower_bound_gossip)")
    for name in SYMBOL_NAMES:
        parser.add_argument(f"--{name}", type=int if name in INTEGER else float, default=None,
                            metavar=name.upper() if name in INTEGER else "X", help=DESCRIPTIONS[name])
    parser.set_defaults(func=run)


def _print_list() -> None:
    from decbounds.bounds.catalog import RATES

    width = max(map(len, RATES))
    print(f"{'name':<{width}}  {'kind':<5}  {'convention':<12}  {'status':<9}  source")
    for rate in RATES.objects().values():
        print(f"{rate.name:<{width}}  {rate.kind:<5}  {rate.convention:<12}  {rate.status:<9}  {rate.source}")


def _print_latex(rate: Rate) -> None:
    print(f"% {rate.name} ({rate.convention}: {_CRITERION[rate.convention]})")
    print(f"T_\\varepsilon = {rate.latex()}")
    for line in rate.latex(terms=True).splitlines():
        print(f"%   {line}")


def _ratio(rate: Rate, reference: Rate, values: dict[str, float], term: str | None = None) -> str:
    """The ratio formatted, or "n/a (why)" where the reference is vacuous; an overflow propagates."""
    from decbounds.bounds.catalog import gap
    from decbounds.bounds.rate import RateOverflowError

    try:
        return f"{gap(rate, reference, term=term, convention=rate.convention, **values):.6g}"
    except RateOverflowError:
        raise
    except ValueError as err:
        return f"n/a ({err})"


def _print_prediction(rate: Rate, reference: Rate, values: dict[str, float], stated_as: str) -> None:
    from decbounds.bounds.catalog import dominant_term

    # everything is computed before the first line is printed: bad input or an overflow is one error
    # message and a non-zero exit status, never half a table (or a "nan" printed as if it were a number)
    terms = rate.evaluate_terms(**values)
    total = rate.evaluate(**values)
    dominant = dominant_term(rate, convention=None, **values)
    ratio = _ratio(rate, reference, values)
    comm = (_ratio(rate, reference, values, "communication")
            if "communication" in rate.terms and "communication" in reference.terms else None)
    print(f"{rate.name}: {rate.kind} bound, {rate.source}")
    converted = f" (stated as {stated_as}, converted)" if stated_as != rate.convention else ""
    print(f"convention: {rate.convention} ({_CRITERION[rate.convention]}){converted}; status: {rate.status}"
          + (f"; holds with probability >= {rate.probability:g} per run" if rate.probability < 1 else ""))
    width = max(len("total"), *map(len, terms))
    for key, value in terms.items():
        print(f"  {key:<{width}}  {value:.6g}")
    print(f"  {'total':<{width}}  {total:.6g}")
    print(f"dominant term: {dominant}")
    print(f"ratio to {reference.name}: {ratio}")
    if comm is not None:
        print(f"communication-term ratio: {comm}")


def run(args: argparse.Namespace) -> int:
    """Body of ``decbounds predict``; returns the exit status (2 for bad input, with the reason on stderr).

    Parameters
    ----------
    args : argparse.Namespace
        The parsed ``decbounds predict`` arguments.

    Returns
    -------
    int
        0, or 2 for bad input.
    """
    if args.list:
        _print_list()
        return 0
    if args.name is None:
        print("decbounds predict: give a catalog entry name, or --list", file=sys.stderr)
        return 2
    from decbounds.bounds.catalog import get

    values = {name: getattr(args, name) for name in SYMBOL_NAMES if getattr(args, name) is not None}
    try:
        stated = get(args.name)
        reference = get(args.reference)
        rate = stated.in_convention(args.convention or "grad_norm")
        if args.latex:
            _print_latex(rate)
            if not values:
                return 0
        _print_prediction(rate, reference, values, stated.convention)
    except (ValueError, TypeError) as err:
        print(f"decbounds predict: {_as_flags(str(err))}", file=sys.stderr)
        return 2
    return 0


def _as_flags(message: str) -> str:
    """A message of `Rate.evaluate` with its symbol names as this command's flags: "missing value(s) for
    ['varsigma0']" becomes "missing value(s) for --varsigma0"."""
    import re

    def flags(match: re.Match[str]) -> str:
        names = re.findall(r"'(\w+)'", match.group(0))
        if not names or any(name not in SYMBOL_NAMES for name in names):
            return match.group(0)
        return " ".join(f"--{name}" for name in names)

    return re.sub(r"\[[^\[\]]*\]", flags, message)
