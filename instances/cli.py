"""``decbounds gossip``: lam, spectral gap and solve time of a topology's gossip matrices, side by side.

    decbounds gossip ring --n 64 --weights fmmc
"""

from __future__ import annotations

import argparse
import sys
import time

import networkx as nx
from decbounds.instances.gossip import WEIGHT_RULES, gossip_matrix, second_eigenvalue
from decbounds.instances.graphs import TOPOLOGIES, topology
from decbounds.instances.optimize import SOLVERS, optimize_gossip

__all__ = ["add_parser", "run"]


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register the ``gossip`` subcommand; its parser sets ``func(args) -> int``.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        The ``decbounds`` parser's subcommands.
    """
    parser = subparsers.add_parser(
        "gossip",
        help="lam and spectral gap of a topology under every weight rule",
        description="Print lam = max(|lambda_2|, |lambda_n|), the spectral gap 1 - lam and the solve time of "
                    "the chosen weight rule and, side by side, of the other rules that apply to the graph.",
    )
    parser.add_argument("topology", choices=TOPOLOGIES)  # the registries: registered names are choices too
    parser.add_argument("--n", type=int, required=True, help="number of workers")
    parser.add_argument("--weights", choices=WEIGHT_RULES, default="metropolis")
    parser.add_argument("--r", type=int, help="torus rows")
    parser.add_argument("--c", type=int, help="torus columns")
    parser.add_argument("--p", type=float, help="erdos_renyi edge probability")
    parser.add_argument("--radius", type=float, help="random_geometric radius")
    parser.add_argument("--k", type=int, help="ring_lattice neighbours on each side")
    parser.add_argument("--D", type=int, help="broom diameter")
    parser.add_argument("--seed", type=int, help="seed of the random topologies")
    parser.add_argument("--solver", choices=SOLVERS, default="auto", help="FDLA/FMMC solver")
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write the FDLA/FMMC cache")
    parser.add_argument("--cache-dir", help="FDLA/FMMC cache directory (default $DECBOUNDS_CACHE_DIR)")
    parser.set_defaults(func=run)


def _applicable(G: nx.Graph, weights: str) -> bool:
    degrees = {d for _, d in G.degree}
    if weights == "uniform":
        return len(degrees) <= 1
    if weights == "path":
        n = G.number_of_nodes()
        return G.number_of_edges() == n - 1 and max(degrees, default=0) <= 2 and nx.is_connected(G)
    return True


def run(args: argparse.Namespace) -> int:
    """Build the graph, then time each applicable weight rule (the chosen one first) and print a table.

    Bad input (a ValueError/TypeError of the package API) is one line on stderr and exit status 2.

    Parameters
    ----------
    args : argparse.Namespace
        From the parser of `add_parser` (``decbounds gossip TOPOLOGY --n N ...``).

    Returns
    -------
    int
        The exit status: 0, or 2 on bad input.

    References
    ----------
    docs/theory.md §12 and §14.
    """
    try:
        return _run(args)
    except (ValueError, TypeError) as err:
        print(f"decbounds gossip: {err}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    params = {name: getattr(args, name) for name in ("r", "c", "p", "radius", "k", "D", "seed")
              if getattr(args, name) is not None}
    G = topology(args.topology, args.n, **params)
    rules = [args.weights] + [w for w in WEIGHT_RULES if w != args.weights and _applicable(G, w)]
    rows = []
    for weights in rules:
        start = time.perf_counter()
        if weights in ("fdla", "fmmc"):
            result = optimize_gossip(G, weights, solver=args.solver, cache=not args.no_cache,
                                     cache_dir=args.cache_dir)
            lam, solver = result.lam, result.solver + (" (cached)" if result.from_cache else "")
        else:
            try:
                lam, solver = second_eigenvalue(gossip_matrix(G, weights)), "closed rule"
            except ValueError:
                if weights == args.weights:
                    raise
                continue  # a registered rule that does not apply to this graph: leave it out of the table
        seconds = time.perf_counter() - start
        mark = "*" if weights == args.weights else " "
        rows.append(f"{weights + mark:<12} {lam:>14.10f} {1.0 - lam:>12.4e} {seconds:>9.3f}  {solver}")
    print(f"{args.topology} n={G.number_of_nodes()} edges={G.number_of_edges()}")
    print(f"{'weights':<12} {'lam':>14} {'gap':>12} {'seconds':>9}  solver")
    print("\n".join(rows))
    return 0
