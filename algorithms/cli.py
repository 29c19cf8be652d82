"""`decbounds run ALGORITHM --instance comm-path --n 16 ...`: measured T_eps beside the explicit-constant
lower bound of the hard instance and the catalog's prediction for the algorithm."""

from __future__ import annotations

import argparse
import json
import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from decbounds.instances.hard import CommunicationInstance

__all__ = ["INSTANCES", "add_parser", "main"]

INSTANCES = ("comm-path", "comm-broom")


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the ``run`` subcommand.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        The ``decbounds`` parser's subcommands; the new parser sets ``func=main``.
    """
    from decbounds.algorithms import algorithm_names
    from decbounds.instances import WEIGHT_RULES

    parser = subparsers.add_parser("run", description=__doc__,
                                   help="run an algorithm on a hard instance and compare with the bounds")
    parser.add_argument("algorithm", choices=algorithm_names(), metavar="ALGORITHM",
                        help=f"the step rule (algorithms.algorithm_names()): {', '.join(algorithm_names())}")
    parser.add_argument("--instance", choices=INSTANCES, default="comm-path",
                        help="Setting 2 instance: Cor. 2's path, or Thm 1's broom with diameter --D")
    parser.add_argument("--n", type=int, default=16, help="workers")
    parser.add_argument("--D", type=int, default=None, help="diameter of the broom instance")
    parser.add_argument("--Delta", type=float, default=262656.0 * 5, help="range bound Delta")
    parser.add_argument("--L", type=float, default=1.0, help="smoothness L")
    parser.add_argument("--epsilon", type=float, default=1.0, help="target ||grad f|| <= epsilon")
    parser.add_argument("--step-size", type=float, default=None, help="alpha (default 1/L)")
    parser.add_argument("--iterations", type=int, default=100000, help="iteration cap")
    parser.add_argument("--weights", default="metropolis", choices=WEIGHT_RULES,
                        help="gossip weight rule (instances.gossip_matrix; any in instances.WEIGHT_RULES)")
    parser.add_argument("--R", type=int, default=None, help="DeTAG phase length (default Cor. 6)")
    parser.add_argument("--eta", type=float, default=None, help="DeTAG two-tap eta (default §7.1 formula)")
    parser.add_argument("--compressor", default=None,
                        help="compressed rules (choco_sgd, beer): identity, random_k:K, qsgd:S, top_k:K, "
                             "sign (docs/theory.md §18)")
    parser.add_argument("--json", action="store_true", help="print one JSON record instead of a table")
    parser.set_defaults(func=main)


def _instance(args: argparse.Namespace) -> CommunicationInstance:
    from decbounds import instances

    D = args.D if args.instance == "comm-broom" else None
    if args.instance == "comm-broom" and D is None:
        raise ValueError("--instance comm-broom needs --D (the diameter)")
    return instances.communication_instance(args.n, D=D, Delta=args.Delta, L=args.L, epsilon=args.epsilon)


def main(args: argparse.Namespace) -> int:
    """Run, then print T_eps, the lower bound and the prediction; returns the exit status.

    Parameters
    ----------
    args : argparse.Namespace
        From the parser of `add_parser` (``decbounds run ALGORITHM ...``).

    Returns
    -------
    int
        The exit status.

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
    from decbounds.algorithms import entry, run

    from decbounds import bounds, instances

    problem = _instance(args)
    G = problem.graph()
    W = instances.gossip_matrix(G, args.weights)
    lam = float(instances.second_eigenvalue(W))
    step = args.step_size if args.step_size is not None else 1.0 / float(problem.smoothness)
    options: dict[str, Any] = {}
    if args.algorithm == "detag":
        options = {k: v for k, v in (("R", args.R), ("eta", args.eta)) if v is not None}
    if args.compressor is not None:
        options["compressor"] = args.compressor
    result = run(args.algorithm, problem, W, step_size=step, iterations=args.iterations, tol=args.epsilon,
                 **options)

    if args.instance == "comm-path":
        lower = bounds.get("hard_instance_communication").evaluate(Delta=args.Delta, L=args.L,
                                                                    epsilon=args.epsilon, n=args.n)
    else:  # the catalog entry is Cor. 2's path; the broom's own hop count is 1 + (T_c - 1) dist
        lower = problem.iteration_lower_bound
    varsigma0 = instances.varsigma0_at_start(problem)
    assert result.bound is not None  # algorithms.run pairs every Result with its prediction
    values = {"Delta": args.Delta, "L": args.L, "epsilon": args.epsilon, "n": args.n, "B": 1, "sigma": 0.0,
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
              "step_size": step, "status": result.status, "message": result.message, "t_eps": result.t_eps,
              "t_eps_local": result.t_eps_local, "diverged": result.diverged,
              "lower_bound": float(lower), "catalog_entry": catalog_entry, "prediction": prediction,
              "hyper": result.hyper, "counters": result.counters}
    if args.json:
        print(json.dumps(record, default=str))
        return 0
    measured = result.status if result.t_eps is None else str(result.t_eps)
    print(f"{args.algorithm} on {args.instance} (n={args.n}, lam={lam:.6f}, step={step:.4g})")
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
