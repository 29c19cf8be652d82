"""``decbounds worst-case``: the computed worst case of K iterations of a method (``bounds.worst_case``).

    decbounds worst-case dsgt --K 10 --L 1 --step 0.5 --lam-min -0.5 --lam-max 0.9
    decbounds worst-case dgd_atc --K 5 --W W.npy            # an exact gossip matrix (numpy .npy or text)
    decbounds worst-case detag --K 4 --lam-min 0 --lam-max 0.8 --R 3 --solver SCS
    decbounds worst-case --list

Prints the value, the solver, its status, the primal-dual gap, the largest measured constraint violation and
the solve time. Exit status 2 for bad input, 1 when the solver fails (the reason on stderr).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from decbounds.bounds.pep import MEASURES, SOLVERS, worst_case
from decbounds.bounds.pep_methods import METHODS

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> None:
    """Register the ``worst-case`` subcommand on ``subparsers`` (an argparse sub-parsers action)."""
    parser = subparsers.add_parser(
        "worst-case",
        help="computed worst case of K iterations (decentralized performance estimation, an SDP)",
        description="The largest min_k ||grad f(x-bar^k)||^2 after K iterations over N agents with L-smooth "
                    "non-convex f_i, f(x0) - f(x-bar^K) <= Delta and dissimilarity varsigma^2 at the "
                    "averages; gossip: an exact W, or every symmetric W with spectrum off consensus in "
                    "[lam-min, lam-max].",
    )
    parser.add_argument("method", nargs="?", help="method (see --list)")
    parser.add_argument("--list", action="store_true", help="list the methods and their parameters")
    parser.add_argument("--K", type=int, default=None, help="iterations (DeTAG: phases)")
    parser.add_argument("--L", type=float, default=1.0, help="smoothness of every f_i (default 1)")
    parser.add_argument("--step", type=float, default=None, help="step size alpha (default 1/L)")
    parser.add_argument("--lam-min", type=float, default=None, help="lowest eigenvalue off consensus")
    parser.add_argument("--lam-max", type=float, default=None, help="highest eigenvalue off consensus")
    parser.add_argument("--W", default=None, metavar="FILE", help="exact gossip matrix (.npy or text)")
    parser.add_argument("--N", type=int, default=None, help="agents of the spectral class (default 2)")
    parser.add_argument("--Delta", type=float, default=1.0, help="bound on f(x0) - f(x-bar^K) (default 1)")
    parser.add_argument("--varsigma", type=float, default=1.0,
                        help="dissimilarity at the averages (default 1)")
    parser.add_argument("--measure", choices=MEASURES, default="average",
                        help="grad f at the average (default) or at the worst worker's own model")
    parser.add_argument("--solver", choices=SOLVERS, default="CLARABEL", help="SDP solver (default CLARABEL)")
    parser.add_argument("--R", type=int, default=None, help="DeTAG: gossip rounds per phase (default 2)")
    parser.add_argument("--eta", type=float, default=None, help="DeTAG: accelerated-gossip eta")
    parser.set_defaults(func=run)


def _load_W(path: str) -> Any:
    import numpy as np

    return np.load(path) if path.endswith(".npy") else np.loadtxt(path)


def run(args: argparse.Namespace) -> int:
    """Body of ``decbounds worst-case``; returns the exit status."""
    if args.list:
        for spec in METHODS.values():
            extra = ", ".join(f"{k}={v}" for k, v in spec.params.items())
            print(f"{spec.name:<8} {spec.label:<26} aliases: {', '.join(spec.aliases) or '-'}"
                  + (f"; params: {extra}" if extra else ""))
        return 0
    if args.method is None or args.K is None:
        print("decbounds worst-case: give a method and --K (or --list)", file=sys.stderr)
        return 2
    params = {k: getattr(args, k) for k in ("R", "eta") if getattr(args, k) is not None}
    try:
        if args.W is not None:
            if args.lam_min is not None or args.lam_max is not None:
                raise ValueError("give either --W or --lam-min/--lam-max, not both")
            gossip: dict[str, Any] = {"W": _load_W(args.W)}
        else:
            if args.lam_min is None or args.lam_max is None:
                raise ValueError("give --lam-min and --lam-max (the spectral class) or --W")
            gossip = {"spectrum": (args.lam_min, args.lam_max), "N": args.N}
        result = worst_case(args.method, args.K, args.L, args.step, Delta=args.Delta, varsigma=args.varsigma,
                            measure=args.measure, solver=args.solver, **gossip, **params)
    except (ValueError, TypeError, OSError) as err:
        print(f"decbounds worst-case: {err}", file=sys.stderr)
        return 2
    except RuntimeError as err:
        print(f"decbounds worst-case: {err}", file=sys.stderr)
        return 1
    lo, hi = result.spectrum
    where = (f"spectral class [{lo:g}, {hi:g}]" if result.gossip == "spectral"
             else f"exact W (spectrum off consensus [{lo:.4g}, {hi:.4g}])")
    extra = "".join(f", {k} = {v}" for k, v in result.params.items() if v is not None)
    point = "x-bar^k" if result.measure == "average" else f"x_{result.worker}^k (worst worker)"
    size = result.sdp_size
    print(f"{result.method}: K = {result.K}, {where}, N = {result.N}, L = {result.L:g}, "
          f"step = {result.step_size:g}, Delta = {result.Delta:g}, varsigma = {result.varsigma:g}{extra}")
    print(f"worst case of min_k ||grad f({point})||^2: {result.value:.6g}")
    print(f"solver {result.solver}: status {result.status}, primal-dual gap {result.gap:.2e}, "
          f"max constraint violation {max(result.violations.values()):.1e}")
    print(f"solve time {result.solve_seconds:.2f} s (build {result.build_seconds:.2f} s); SDP: Gram "
          f"{size['gram']}x{size['gram']}"
          + (" (two swap blocks {}+{})".format(*size["blocks"]) if len(size["blocks"]) == 2 else "")
          + f", {size['values']} values, {size['scalar_constraints']} scalar "
          f"constraints" + (f", LMI {size['lmi']}x{size['lmi']}" if size["lmi"] else ""))
    return 0
