"""`decbounds run ALGORITHM --instance comm-path --n 16 ...`: measured T_eps beside the explicit-constant
lower bound of the hard instance and the catalog's prediction for the algorithm."""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from decbounds.instances.hard import CommunicationInstance

__all__ = ["INSTANCES", "TOUR_R", "TOUR_T_C", "add_parser", "main"]

INSTANCES = ("comm-path", "comm-broom")
#: The README tour's instance (``communication_instance(16, T_c=3)``), the default, so that ``decbounds run
#: detag`` reproduces the tour's T_eps. The hard instance is a worst case: a rule runs with its declared
#: ``worst_case_defaults`` (DeTAG's R = 2, `TOUR_R`, the tour's phase length).
TOUR_T_C = 3
TOUR_R = 2


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the ``run`` subcommand.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        The ``decbounds`` parser's subcommands; the new parser sets ``func=main``.
    """
    from decbounds.algorithms.vocabulary import ALGORITHM_NAMES
    from decbounds.instances.vocabulary import WEIGHT_RULE_NAMES

    from decbounds.registry import KnownNames

    parser = subparsers.add_parser("run", description=__doc__,
                                   help="run an algorithm on a hard instance and compare with the bounds")
    parser.add_argument("algorithm", metavar="ALGORITHM",
                        choices=KnownNames(ALGORITHM_NAMES, "decbounds.algorithms.registry", "ALGORITHMS",
                                           group="decbounds.algorithms"),
                        help=f"the step rule (algorithms.algorithm_names()): {', '.join(ALGORITHM_NAMES)}, "
                             "or a plugin's")
    parser.add_argument("--instance", choices=INSTANCES, default="comm-path",
                        help="Setting 2 instance: Cor. 2's path, or Thm 1's broom with diameter --D")
    parser.add_argument("--n", type=int, default=16, help="workers, >= 2")
    parser.add_argument("--D", type=int, default=None,
                        help="diameter of the broom (required with comm-broom)")
    parser.add_argument("--T-c", dest="T_c", type=int, default=None,
                        help=f"chain length T_c (default {TOUR_T_C}, the README tour's, unless --Delta is "
                             "given)")
    parser.add_argument("--Delta", type=float, default=None,
                        help="range bound Delta instead of --T-c (T_c = floor(Delta L / (262656 eps^2)))")
    parser.add_argument("--L", type=float, default=None,
                        help="smoothness L (default 3 l1 = 456: the unscaled split, docs/errata.md E19)")
    parser.add_argument("--epsilon", type=float, default=0.5, help="target ||grad f|| <= epsilon")
    parser.add_argument("--step-size", type=float, default=None, help="alpha (default 1/L)")
    parser.add_argument("--iterations", type=int, default=20_000, help="iteration cap")
    parser.add_argument("--weights", default="metropolis",
                        choices=KnownNames(WEIGHT_RULE_NAMES, "decbounds.instances.gossip", "WEIGHT_RULES",
                                           group="decbounds.weight_rules"),
                        help="gossip weight rule (instances.gossip_matrix; any in instances.WEIGHT_RULES)")
    parser.add_argument("--R", default=None, metavar="R|cor6",
                        help="phase length of a rule with one (DeTAG, MG-DSGD): an integer, or cor6 for the "
                             "rule's own default (DeTAG: Cor. 6's, larger, slower on this instance); default "
                             "the rule's worst-case default (DeTAG: R = 2)")
    parser.add_argument("--eta", type=float, default=None,
                        help="two-tap eta of a rule with one (DeTAG; default §7.1 formula)")
    parser.add_argument("--compressor", default=None,
                        help="compressed rules (choco_sgd, beer): identity, random_k:K, qsgd:S, top_k:K, "
                             "sign, contractive:SPEC (docs/theory.md §18)")
    parser.add_argument("--json", action="store_true", help="print one JSON record instead of a table")
    parser.set_defaults(func=main)


def _instance(args: argparse.Namespace) -> CommunicationInstance:
    from decbounds import instances

    if args.instance == "comm-broom" and args.D is None:
        raise ValueError("--instance comm-broom needs --D (the diameter)")
    if args.instance == "comm-path" and args.D is not None:
        raise ValueError("--D is the broom's diameter: give it with --instance comm-broom")
    if args.Delta is not None and args.T_c is not None:
        raise ValueError("give --T-c or --Delta, not both")
    chain = ({"Delta": args.Delta} if args.Delta is not None
             else {"T_c": TOUR_T_C if args.T_c is None else args.T_c})
    optional = {"L": args.L} if args.L is not None else {}
    try:
        return instances.communication_instance(args.n, D=args.D, epsilon=args.epsilon, **chain, **optional)
    except (ValueError, TypeError) as err:
        raise type(err)(_as_flags(str(err))) from None


def _as_flags(message: str) -> str:
    """A library message about the instance, its arguments named as this command's flags."""
    import re

    flags = {"n": "--n", "D": "--D", "T_c": "--T-c", "Delta": "--Delta", "L": "--L", "epsilon": "--epsilon"}
    return re.sub(r"(?<![\w-])(n|D|T_c|Delta|L|epsilon)(?==|\b must| is)",
                  lambda match: flags[match.group(1)], message)


def _options(args: argparse.Namespace, dim: int) -> dict[str, Any]:
    """The rule's options: its ``worst_case_defaults`` (the instance is a worst case), then R and eta for a
    rule that declares them, and the compressor (checked against the problem's dimension ``dim``)."""
    from decbounds.algorithms.registry import rule_class

    rule = rule_class(args.algorithm)
    declared = {**rule.structural, **rule.batchable}
    options: dict[str, Any] = dict(rule.worst_case_defaults)
    for flag, value in (("R", args.R), ("eta", args.eta)):
        if value is not None and flag not in declared:
            raise ValueError(f"--{flag}: {args.algorithm} has no hyper-parameter {flag}")
    if args.R == "cor6":
        options.pop("R", None)
    elif args.R is not None:
        if not (args.R.isascii() and args.R.isdigit() and int(args.R) >= 1):
            raise ValueError(f"--R must be an integer >= 1 or cor6; got --R {args.R!r}")
        options["R"] = int(args.R)
    if args.eta is not None:
        options["eta"] = args.eta
    if args.compressor is not None:
        from decbounds.algorithms.compression import make_compressor

        try:
            options["compressor"] = make_compressor(args.compressor)
            options["compressor"].bits(dim)  # its parameter fits the dimension
        except (ValueError, TypeError) as err:
            raise ValueError(f"--compressor {args.compressor!r}: {err}") from None
    return options


def main(args: argparse.Namespace) -> int:
    """Run, then print T_eps, the lower bound and the prediction; returns the exit status.

    Parameters
    ----------
    args : argparse.Namespace
        From the parser of `add_parser` (``decbounds run ALGORITHM ...``).

    Raises
    ------
    ValueError
        For ``--instance comm-broom`` without ``--D``, or bad values the instance or ``algorithms.run``
        refuses.

    References
    ----------
    Lu & De Sa (2021), Thm 1 and Cor. 2 (the instances); docs/theory.md §4.3, §4.4.
    """
    import networkx as nx
    from decbounds.algorithms import entry, rule_class, run

    from decbounds import bounds, instances

    try:
        problem = _instance(args)
        options = _options(args, problem.dim)
        G = problem.graph()
        W = instances.gossip_matrix(G, args.weights)
        lam = float(instances.second_eigenvalue(W))
        step = args.step_size if args.step_size is not None else 1.0 / float(problem.smoothness)
        result = run(args.algorithm, problem, W, step_size=step, iterations=args.iterations,
                     tol=problem.epsilon, **options)
    except (ValueError, TypeError) as err:
        print(f"decbounds run: {err}", file=sys.stderr)
        return 2
    Delta, L, epsilon = float(problem.Delta), float(problem.smoothness), float(problem.epsilon)
    if args.instance == "comm-path":
        lower = bounds.get("hard_instance_communication").evaluate(Delta=Delta, L=L, epsilon=epsilon,
                                                                    n=args.n)
    else:  # the catalog entry is Cor. 2's path; the broom's own hop count is 1 + (T_c - 1) dist
        lower = problem.iteration_lower_bound
    varsigma0 = instances.varsigma0_at_start(problem)
    assert result.bound is not None  # algorithms.run pairs every Result with its prediction
    values = {"Delta": Delta, "L": L, "epsilon": epsilon, "n": args.n, "B": 1, "sigma": 0.0,
              "lam": lam, "varsigma0": varsigma0, "varsigma": varsigma0, "D": nx.diameter(G),
              "omega": result.bound.parameters.get("omega"), "delta": result.bound.parameters.get("delta")}
    catalog_entry = entry(args.algorithm).catalog_entry
    prediction = None
    if catalog_entry is not None:
        rate = bounds.get(catalog_entry)
        needed = {s.name: values.get(s.name) for s in rate.expr.free_symbols}
        known = {name: value for name, value in needed.items() if value is not None}
        if len(known) == len(needed):
            prediction = float(rate.evaluate(**known))
    record = {"algorithm": args.algorithm, "instance": args.instance, "n": args.n, "lam": lam,
              "T_c": problem.T_c, "Delta": Delta, "L": L, "epsilon": epsilon, "weights": args.weights,
              "step_size": step, "status": result.status, "message": result.message, "t_eps": result.t_eps,
              "t_eps_local": result.t_eps_local, "diverged": result.diverged,
              "lower_bound": float(lower), "catalog_entry": catalog_entry, "prediction": prediction,
              "hyper": result.hyper, "counters": result.counters}
    if args.json:
        print(json.dumps(record, default=str))
        return 0
    measured = result.status if result.t_eps is None else str(result.t_eps)
    hyper = ", ".join(f"{key}={value:.4g}" if isinstance(value, float) else f"{key}={value}"
                      for key, value in result.hyper.items())
    print(f"{args.algorithm} on {args.instance} (n={args.n}, T_c={problem.T_c}, Delta={Delta:g}, L={L:g}, "
          f"epsilon={epsilon:g}; W: {args.weights}, lam={lam:.6f}; step={step:.4g})")
    print(f"  hyper-parameters: {hyper or 'none'}")
    if "R" in options and rule_class(args.algorithm).structural.get("R", 0) is None:
        print(f"  (R = {options['R']}, not the rule's own default; --R cor6 takes that (DeTAG: Cor. 6's, "
              "made for the worst case: longer phases, a larger T_eps on this instance))")
    print(f"  measured T_eps                         {measured:>14}")
    print(f"  bits sent per worker                   {result.counters['bits']:>14}")
    source = "hard_instance_communication" if args.instance == "comm-path" else "1 + (T_c - 1) dist"
    print(f"  lower bound ({source}) {float(lower):>11.6g}")
    if prediction is not None:
        ratio = "" if result.t_eps is None else f"   (measured / predicted = {result.t_eps / prediction:.3g})"
        print(f"  catalog prediction ({catalog_entry}, constants 1) {prediction:>10.6g}{ratio}")
    if result.t_eps is not None and result.t_eps < lower and not math.isclose(result.t_eps, lower):
        print("  WARNING: measured T_eps below the lower bound")
        return 1
    return 0
