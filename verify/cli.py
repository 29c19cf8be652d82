"""The ``decbounds verify`` subcommand."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

__all__ = ["add_parser", "main"]


def _hyper_arguments(items: Sequence[str]) -> dict[str, Any]:
    from decbounds.verify.settings import VerifyInputError

    grids: dict[str, Any] = {}
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or not key:
            raise VerifyInputError(f"--hyper expects KEY=V1,V2,...; got {item!r}")
        values = [json.loads(v) if v.strip() not in ("", "None") else None for v in text.split(",")] \
            if all(_is_json(v) for v in text.split(",")) else text.split(",")
        grids[key] = values if len(values) > 1 else values[0]
    return grids


def _size_arguments(items: Sequence[str]) -> dict[str, Any]:
    """``--sizes FIELD=V1,V2`` (or ``FIELD=<JSON>``) as verify's ``sizes`` mapping; a single value stays a
    scalar (``comm_cap=96000``), several are a list."""
    from decbounds.verify.settings import MODES, VerifyInputError

    sizes: dict[str, Any] = {}
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or not key:
            raise VerifyInputError(f"--sizes expects FIELD=V1,V2,...; got {item!r}")
        try:
            value = json.loads(text)
        except ValueError:
            try:
                value = [json.loads(v) for v in text.split(",")]
            except ValueError:
                raise VerifyInputError(f"--sizes {key}: values must be numbers; got {text!r}") from None
        if isinstance(getattr(MODES["quick"], key, None), tuple) and not isinstance(value, list):
            value = [value]  # one size of a list field
        sizes[key] = value
    return sizes


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return text.strip() == "None"
    return True


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the ``verify`` subcommand.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        The ``decbounds`` command's subparsers.
    """
    parser = subparsers.add_parser(
        "verify", help="hold your step rule against the lower bounds (class audit, the paper's experiments)",
        description="Run a step rule through the class audit and the paper's experiments beside DeTAG, D2 "
                    "and centralized SGD; write report.md, report.png, records.jsonl, exponents.csv.")
    parser.add_argument("rule", help="module:Class, path/to/file.py:Class, or a registered algorithm name")
    parser.add_argument("--quick", action="store_true",
                        help="small sizes (<= 60 s of CPU; the default mode: <= 5 minutes)")
    parser.add_argument("--tiny", action="store_true", help="smallest sizes (smoke tests)")
    parser.add_argument("--out", default=None, help="output directory (default ./verify-<name>)")
    parser.add_argument("--seed", type=int, default=0, help="seed of every run (default 0)")
    parser.add_argument("--hyper", action="append", default=[], metavar="KEY=V1,V2",
                        help="a hyper-parameter grid of the rule, tuned over (repeatable)")
    parser.add_argument("--sizes", action="append", default=[], metavar="FIELD=V1,V2",
                        help="override a size of the mode (repeatable), e.g. comm_sizes=96,192,384,768 or "
                             "comm_cap=200000; a list of triples as JSON: 'sigma2_points=[[32,1,1e-4]]'")
    # verify.BASELINES and BASELINE_CHOICES, whose module imports numpy (tests/test_vocabulary.py);
    # verify's own modules are imported when it runs: --help and a bad flag are answered without numpy
    parser.add_argument("--baselines", default=None, metavar="A,B,...",
                        help="comma-separated algorithms measured beside the rule, of detag, d2, "
                             "centralized, dpsgd, dsgt (default detag,d2,centralized; empty: none)")
    parser.add_argument("--digits", action="store_true",
                        help="also the digits MLP at 0%% shuffled (Figure 2 setting) beside DeTAG and D2: "
                             "final training loss, no lower bound (about 15 s more)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    parser.set_defaults(func=main)
    parser.error = _one_line_error  # type: ignore[method-assign]  # a bad value is one line, not usage


def _one_line_error(message: str) -> None:
    """argparse's error for the verify subcommand (e.g. ``--seed x``): one line on stderr, exit status 2."""
    print(f"decbounds verify: error: {message}", file=sys.stderr)
    raise SystemExit(2)


def _suggest_rule(rule: str) -> None:
    """VerifyInputError with "did you mean ...?" for a rule that is neither a spec nor a registered name but
    close to one (a spec, ``module:Class``, is left to the loader)."""
    import difflib

    from decbounds.algorithms.vocabulary import ALGORITHM_NAMES

    if rule.lower() in ALGORITHM_NAMES:
        return
    from decbounds.algorithms import algorithm_names
    from decbounds.verify.settings import VerifyInputError

    names = algorithm_names()
    if ":" in rule or rule.lower() in names:
        return
    close = difflib.get_close_matches(rule.lower(), names, n=3, cutoff=0.6)
    if close:
        raise VerifyInputError(f"{rule!r} is neither 'module:Class' nor a registered algorithm; did you mean "
                               f"{' or '.join(repr(name) for name in close)}?")


def main(args: argparse.Namespace) -> int:
    """Run verify from parsed arguments; print the verdicts; return the exit status (2: bad input).

    Parameters
    ----------
    args : argparse.Namespace
        The arguments of the ``verify`` subcommand (`add_parser`).

    Returns
    -------
    int
        0, 1 (the audit failed, a bound was beaten, or the rule is outside the gossip class) or 2.
    """
    if args.quick and args.tiny:  # said before the numerical stack is imported
        print("decbounds verify: error: --quick and --tiny are exclusive: choose one mode (neither: the full "
              "mode)", file=sys.stderr)
        return 2
    from decbounds.verify.runner import verify
    from decbounds.verify.settings import BASELINES, VerifyInputError

    try:
        _suggest_rule(args.rule)
        mode = "tiny" if args.tiny else "quick" if args.quick else "full"
        baselines = BASELINES if args.baselines is None else \
            tuple(b.strip() for b in args.baselines.split(",") if b.strip())
        report = verify(args.rule, mode=mode, out=args.out, seed=args.seed,
                        hyper=_hyper_arguments(args.hyper), baselines=baselines,
                        sizes=_size_arguments(args.sizes) or None,
                        progress=not args.no_progress, digits=args.digits)
    except VerifyInputError as exc:
        print(f"decbounds verify: error: {exc}", file=sys.stderr)
        return 2
    print(report)
    print(f"report: {report.files[0]}")
    return report.exit_status
