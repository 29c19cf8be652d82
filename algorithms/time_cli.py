"""``decbounds time``: the time lower bound and each method's predicted seconds on a cluster (docs/time.md).

    decbounds time --cluster straggler --n 16 --slowdown 100 --rho 0.1 --topology ring \\
        --L 1 --Delta 1 --sigma 1 --epsilon 0.01
    decbounds time --file cluster.json --L 1 --Delta 1 --sigma 1 --epsilon 0.01

A cluster file is JSON: ``{"compute_times": [...], "link_times": [[...], ...]}`` (``null`` or ``"inf"``
where there is no link; link_times may be left out: free links).
"""

from __future__ import annotations

import argparse
import json
import math
import sys

__all__ = ["RATED_RULES", "add_parser", "run"]

#: The rules whose catalog iteration rates the table converts to seconds: the baseline D-PSGD and DeTAG,
#: the paper's optimal rule.
RATED_RULES = ("dpsgd", "detag")


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the ``time`` subcommand on ``subparsers``.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        From ``ArgumentParser.add_subparsers``.
    """
    parser = subparsers.add_parser(
        "time", help="time lower bound (Tyurin & Richtárik 2024) and predicted seconds on a cluster",
        description="Seconds to eps on a cluster with per-worker compute times and per-link times: the "
                    "lower bounds of Tyurin & Richtárik (Thm 1, Thm 7), Fragile SGD, Amelie SGD, minibatch "
                    "SGD, and the synchronous rules' catalog iterations times one synchronous iteration. "
                    "Universal constants are 1.")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--cluster", choices=("equal", "straggler", "power", "slow_link"),
                       help="a named cluster (instances.named_cluster)")
    where.add_argument("--file", help="a JSON file with compute_times and link_times")
    where.add_argument("--compute", help="comma-separated compute times h_i (s); links from --rho/--topology")
    parser.add_argument("--n", type=int, default=8, help="workers of a named cluster (default 8)")
    parser.add_argument("--h", type=float, default=1.0, help="base compute time, s (default 1)")
    parser.add_argument("--rho", type=float, default=0.0, help="link time of every edge, s (default 0)")
    parser.add_argument("--topology", default="complete", help="graph of the links (default complete)")
    parser.add_argument("--alpha", type=float, default=1.0, help="exponent of the power cluster")
    parser.add_argument("--slowdown", type=float, default=10.0, help="factor of straggler and slow_link")
    for name, text in (("L", "smoothness"), ("Delta", "f(x0) - inf f"), ("sigma", "oracle std"),
                       ("epsilon", "target accuracy")):
        parser.add_argument(f"--{name}", type=float, required=True, help=text)
    parser.add_argument("--convention", choices=("grad_norm_sq", "grad_norm"), default="grad_norm_sq",
                        help="what --epsilon means: E||grad f||^2 <= eps (the paper's, default) or "
                             "E||grad f|| <= eps (Lu & De Sa's)")
    parser.add_argument("--B", type=int, default=1, help="gradients per worker per synchronous iteration")
    parser.add_argument("--varsigma", type=float, default=0.0, help="outer variance (D-PSGD)")
    parser.add_argument("--varsigma0", type=float, default=0.0, help="outer variance at 0 (DeTAG)")
    parser.set_defaults(func=run)


def _cluster(args: argparse.Namespace) -> object:
    import numpy as np

    from decbounds import instances

    if args.cluster:
        return instances.named_cluster(args.cluster, args.n, h=args.h, rho=args.rho, topology=args.topology,
                                       alpha=args.alpha, slowdown=args.slowdown)
    if args.compute:
        h = [float(value) for value in args.compute.split(",")]
        links = instances.named_cluster("equal", len(h), rho=args.rho, topology=args.topology).link_times
        return instances.Cluster(h, links)
    with open(args.file, encoding="utf-8") as stream:
        spec = json.load(stream)
    if not isinstance(spec, dict) or "compute_times" not in spec:
        raise ValueError(f"{args.file} must hold a JSON object with compute_times (and link_times)")
    links = spec.get("link_times")
    if links is not None:
        links = np.array([[math.inf if value is None or value == "inf" else value for value in row]
                          for row in links], dtype=float)
    return instances.Cluster(spec["compute_times"], links)


def run(args: argparse.Namespace) -> int:
    """Print the bounds and the predicted times; returns the exit status.

    Parameters
    ----------
    args : argparse.Namespace
        From the parser `add_parser` built.
    """
    import numpy as np
    from decbounds.bounds import catalog, time_bounds
    from decbounds.instances import second_eigenvalue

    try:
        cluster = _cluster(args)
        point = dict(L=args.L, Delta=args.Delta, sigma=args.sigma, epsilon=args.epsilon,
                     convention=args.convention)
        rows = [(name, entry.kind, entry.evaluate(cluster, **point), entry.status, entry.source)
                for name, entry in time_bounds.TIME_BOUNDS.items()]
        from decbounds.algorithms.timed import default_gossip

        W = default_gossip(cluster)
        lam = float(second_eigenvalue(W))
        eps_sq = args.epsilon**2 if args.convention == "grad_norm" else args.epsilon
        edges = np.asarray(W.toarray()) != 0
        per_iteration = time_bounds.seconds_per_iteration(cluster, batch=args.B, edges=edges)
        values = dict(Delta=args.Delta, L=args.L, sigma=args.sigma, n=cluster.n, B=args.B, epsilon=eps_sq,
                      lam=lam, varsigma=args.varsigma, varsigma0=args.varsigma0)
        for name in RATED_RULES:
            rate = catalog.get(name).in_convention("grad_norm_sq")
            iterations = rate.evaluate(**{key: values[key] for key in rate.arguments})
            rows.append((name, "upper", iterations * per_iteration, rate.status,
                         f"{rate.source}; x {per_iteration:.4g} s per iteration"))
    except (ValueError, TypeError, OSError) as error:
        print(f"decbounds time: error: {error}", file=sys.stderr)
        return 2
    print(f"{cluster!r}; lam of Metropolis W on the two-way links = {lam:.4g}")
    print(f"accuracy: E||grad f||^2 <= {eps_sq:.4g}; seconds with universal constants 1")
    width = max(len(row[0]) for row in rows)
    for name, kind, seconds, status, source in rows:
        print(f"{name:<{width}}  {kind:<5}  {seconds:>12.5g} s  {status:<9}  {source}")
    return 0
