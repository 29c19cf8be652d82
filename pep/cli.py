"""``decbounds worst-case``: the computed worst case of K iterations of a method (``pep.worst_case``).

    decbounds worst-case dsgt --K 10 --L 1 --step-size 0.5 --lam-min -0.5 --lam-max 0.9
    decbounds worst-case dgd_atc --K 5 --W W.npy            # an exact gossip matrix (numpy .npy or text)
    decbounds worst-case detag --K 4 --lam-min 0 --lam-max 0.8 --R 3 --solver SCS
    decbounds worst-case extra --K 6 --lam-min -0.5 --lam-max 0.5 --class strongly_convex --mu 0.1 \
        --criterion distance --initial distance --heterogeneity optimum --varsigma 0
    decbounds worst-case dgd_atc --K 4 --lam-min 0 --lam-max 0.6 --time-varying   # a W_t per round
    decbounds worst-case dgd_atc --K 3 --lam-min 0 --lam-max 0.6 --worst-W        # the W that attains it
    decbounds worst-case my_rule.py:MyRule --K 3 --lam-min 0 --lam-max 0.5 # a user's StepRule, compiled
    decbounds worst-case --list

Prints the value, the solver, its status, the primal-dual gap, the largest measured constraint violation and
the solve time. Exit status 2 for bad input, 1 when the solver fails (the reason on stderr).
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

from decbounds.bounds.vocabulary import (
    CRITERIA,
    FUNCTION_CLASSES,
    HETEROGENEITY,
    INITIAL_CONDITIONS,
    PEP_SOLVERS,
    STARTS,
)

__all__ = ["add_parser", "run"]


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the ``worst-case`` subcommand on ``subparsers`` (an argparse sub-parsers action).

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        From ``ArgumentParser.add_subparsers``.
    """
    parser = subparsers.add_parser(
        "worst-case",
        help="computed worst case of K iterations (decentralized performance estimation, an SDP)",
        description="The largest value of a criterion after K iterations over N agents with L-smooth "
                    "f_i of a class (non-convex, convex, strongly convex), an initial condition and a "
                    "heterogeneity bound varsigma^2; gossip: an exact W, or every symmetric W with spectrum "
                    "off consensus in [lam-min, lam-max], static or time-varying (docs/worst_case.md).",
    )
    parser.add_argument("method", nargs="?",
                        help="method (see --list), or a step rule: module:Class or path/to/file.py:Class")
    parser.add_argument("--list", action="store_true", help="list the methods and their parameters")
    parser.add_argument("--K", type=int, default=None, help="iterations (DeTAG: phases)")
    parser.add_argument("--L", type=float, default=1.0, help="smoothness of every f_i (default 1)")
    parser.add_argument("--step-size", dest="step", type=float, default=None,
                        help="step size alpha (default 1/L)")
    parser.add_argument("--step", dest="step", type=float, default=None, help=argparse.SUPPRESS)  # 0.2's
    parser.add_argument("--steps", default=None, metavar="A0,A1,...",
                        help="one step per iteration, comma-separated (instead of --step-size)")
    parser.add_argument("--diminishing", type=float, default=None, metavar="POWER",
                        help="steps alpha / (k + 1)^POWER (alpha from --step-size)")
    parser.add_argument("--class", dest="function_class", choices=FUNCTION_CLASSES, default="nonconvex",
                        help="function class of every f_i (default nonconvex)")
    parser.add_argument("--mu", type=float, default=0.0, help="strong convexity (class strongly_convex)")
    parser.add_argument("--criterion", choices=CRITERIA, default="gradient",
                        help="what is maximized (default: min_k ||grad f(x-bar^k)||^2)")
    parser.add_argument("--initial", choices=INITIAL_CONDITIONS, default="function_value",
                        help="initial condition: f(x0) - f* <= Delta, or ||x0 - x*|| <= radius")
    parser.add_argument("--radius", type=float, default=1.0, help="bound on ||x0 - x*|| (default 1)")
    parser.add_argument("--heterogeneity", choices=HETEROGENEITY, default="averages",
                        help="where varsigma bounds the dissimilarity (default: at the averages)")
    parser.add_argument("--starts", choices=STARTS, default="equal", help="a common x0 or one per agent")
    parser.add_argument("--time-varying", action="store_true",
                        help="every sequence W_0, W_1, ... of the spectral class (one per round)")
    parser.add_argument("--worst-W", action="store_true",
                        help="also solve the exact-W problem for the W that attains the spectral value")
    parser.add_argument("--lam", type=float, default=None,
                        help="the spectral class of predict's lam: eigenvalues off consensus in [-lam, lam]")
    parser.add_argument("--lam-min", type=float, default=None, help="lowest eigenvalue off consensus")
    parser.add_argument("--lam-max", type=float, default=None, help="highest eigenvalue off consensus")
    parser.add_argument("--W", default=None, metavar="FILE", help="exact gossip matrix (.npy, .npz or text)")
    parser.add_argument("--n", dest="N", type=int, default=None,
                        help="workers (agents) of the spectral class (default 2)")
    parser.add_argument("--N", dest="N", type=int, default=None, help=argparse.SUPPRESS)  # 0.2's spelling
    parser.add_argument("--Delta", type=float, default=1.0, help="bound on f(x0) - f* (default 1)")
    parser.add_argument("--varsigma", type=float, default=1.0, help="heterogeneity bound (default 1)")
    parser.add_argument("--solver", choices=PEP_SOLVERS, default="CLARABEL",
                        help="SDP solver (default CLARABEL)")
    parser.add_argument("--R", type=int, default=None, help="DeTAG: gossip rounds per phase (default 2)")
    parser.add_argument("--eta", type=float, default=None, help="DeTAG: accelerated-gossip eta")
    parser.add_argument("--hyper", action="append", default=[], metavar="NAME=VALUE",
                        help="another parameter of the method's step rule (repeatable), e.g. momentum=0.5")
    parser.set_defaults(func=run)


def _load_W(path: str) -> Any:
    from decbounds.instances.matrices import read_matrix_file

    return read_matrix_file(path, "--W")


def _step_list(text: str) -> list[float]:
    try:
        return [float(v) for v in text.split(",")]
    except ValueError:
        raise ValueError(f"--steps must be comma-separated numbers A0,A1,...; got --steps {text!r}") from None


def _diminishing(alpha: float, power: float, K: int) -> list[float]:
    """alpha / (k + 1)^power for k < K, in logarithms (a power of 1e10 overflows (k + 1)^power)."""
    if not (math.isfinite(power) and power >= 0):
        raise ValueError(f"--diminishing must be a finite power >= 0; got --diminishing {power!r}")
    if not (math.isfinite(alpha) and alpha > 0):
        return [alpha] * K  # worst_case names the step
    steps = [math.exp(max(math.log(alpha) - power * math.log(k + 1), -745.0)) for k in range(K)]
    if steps[-1] * alpha == 0 or steps[-1] / alpha < 1e-300:
        raise ValueError(f"--diminishing {power!r} makes step {K - 1} underflow (alpha / K^power)")
    return steps


def _announce(line: str) -> None:
    print(f"decbounds worst-case: {line}", file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    """Body of ``decbounds worst-case``; returns the exit status.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed ``decbounds worst-case`` arguments.

    Returns
    -------
    int
        The exit status.
    """
    from decbounds.bounds.validation import collect_errors
    from decbounds.pep.api import check_iterations, worst_case, worst_gossip_matrix
    from decbounds.pep.methods import PEP_METHODS

    if args.list:
        for spec in PEP_METHODS.objects().values():
            extra = ", ".join(f"{k}={v}" for k, v in spec.params.items())
            print(f"{spec.name:<16} {spec.label:<26} aliases: {', '.join(spec.aliases) or '-'}"
                  + (f"; params: {extra}" if extra else ""))
        return 0
    if args.method is None or args.K is None:
        print("decbounds worst-case: give a method and --K (or --list)", file=sys.stderr)
        return 2
    params = {k: getattr(args, k) for k in ("R", "eta") if getattr(args, k) is not None}

    def gossip_arguments() -> dict[str, Any]:
        if args.lam is not None:
            if args.lam_min is not None or args.lam_max is not None:
                raise ValueError("give --lam (the class [-lam, lam]) or --lam-min/--lam-max, not both")
            args.lam_min, args.lam_max = -args.lam, args.lam
        if args.W is not None:
            if args.lam_min is not None or args.lam_max is not None:
                raise ValueError("give either --W or --lam/--lam-min/--lam-max, not both")
            return {"W": _load_W(args.W)}
        if args.lam_min is None or args.lam_max is None:
            raise ValueError("give --lam, or --lam-min and --lam-max (the spectral class), or --W")
        return {"spectrum": (args.lam_min, args.lam_max), "N": args.N, "time_varying": args.time_varying}

    try:
        # every wrong argument at once (the gossip choice, K, L, the step), before a step list is built
        gossip, _ = collect_errors(gossip_arguments, lambda: check_iterations(args.K, args.L, args.step))
        assert isinstance(gossip, dict)  # gossip_arguments' value: collect_errors keeps the order
        step: Any = args.step
        if args.steps is not None:
            if args.step is not None or args.diminishing is not None:
                raise ValueError("give --steps alone, or --step-size (with --diminishing)")
            step = _step_list(args.steps)
        elif args.diminishing is not None:
            step = _diminishing(1.0 / args.L if args.step is None else args.step, args.diminishing, args.K)
        params.update(_hyper(args.hyper))
        result = worst_case(_method(args.method), args.K, args.L, step, Delta=args.Delta,
                            varsigma=args.varsigma,
                            function_class=args.function_class, mu=args.mu, criterion=args.criterion,
                            initial=args.initial, radius=args.radius, heterogeneity=args.heterogeneity,
                            starts=args.starts, solver=args.solver, progress=_announce, **gossip, **params)
        exact = worst_gossip_matrix(result) if args.worst_W else None
    except (ValueError, TypeError, OSError) as err:
        print(f"decbounds worst-case: {err}", file=sys.stderr)
        return 2
    except RuntimeError as err:
        print(f"decbounds worst-case: {err}", file=sys.stderr)
        return 1
    lo, hi = result.spectrum
    where = (f"spectral class [{lo:g}, {hi:g}]" if result.gossip == "spectral"
             else f"exact W (spectrum off consensus [{lo:.4g}, {hi:.4g}])")
    where += ", time-varying" if result.time_varying else ""
    extra = "".join(f", {k} = {v}" for k, v in result.params.items() if v is not None)
    size = result.sdp_size
    step = (f"{result.step_size:g}" if result.step_size is not None
            else ",".join(f"{a:g}" for a in result.steps))
    reference = "*" if result.function_class != "nonconvex" else "(x-bar^K)"
    start = (f"||x0 - x*|| <= {result.radius:g}" if result.initial == "distance"
             else f"f(x0) - f{reference} <= {result.Delta:g}")
    print(f"{result.method}: K = {result.K}, {where}, N = {result.N}, class {result.function_class}"
          + (f" (mu = {result.mu:g})" if result.mu else "") + f", L = {result.L:g}, step = {step}, {start}, "
          f"varsigma = {result.varsigma:g} at the {result.heterogeneity}{extra}")
    inaccurate = "" if result.status == "optimal" else (
        f" (INACCURATE: the solver stopped at {result.status!r}, primal-dual gap {result.gap:.1e}; the value "
        "is not certified to the solver's tolerance)")
    print(f"worst case of {_CRITERION_TEXT[result.criterion].format(w=result.worker)}: {result.value:.6g}"
          + inaccurate)
    print(f"solver {result.solver}: status {result.status}, primal-dual gap {result.gap:.2e}, "
          f"max constraint violation {max(result.violations.values()):.1e}")
    print(f"solve time {result.solve_seconds:.2f} s (build {result.build_seconds:.2f} s); SDP: Gram "
          f"{size['gram']}x{size['gram']}"
          + (" (two swap blocks {}+{})".format(*size["blocks"]) if len(size["blocks"]) == 2 else "")
          + f", {size['values']} values, {size['scalar_constraints']} scalar "
          f"constraints" + (f", LMI {size['lmi']}x{size['lmi']}" if size["lmi"] else ""))
    if exact is not None:
        import numpy as np

        W_text = np.array2string(np.asarray(exact.W), precision=4, separator=", ").replace("\n", "")
        print(f"worst W found: {W_text}; its exact worst case {exact.value:.6g} (status {exact.status}), "
              f"{exact.value / result.value:.4%} of the spectral value")
    return 0


def _method(name: str) -> Any:
    """A method name, or the step rule of a ``module:Class`` / ``file.py:Class`` spec (imported here:
    ``bounds`` imports ``algorithms`` only when it compiles a rule)."""
    if ":" not in name:
        return name
    from decbounds.algorithms.plugins import load_rule

    return load_rule(name)


def _hyper(items: list[str]) -> dict[str, Any]:
    """NAME=VALUE pairs, each value read as JSON (a number, true, null) or else kept as the string."""
    import json

    values: dict[str, Any] = {}
    for item in items:
        name, sep, text = item.partition("=")
        if not sep or not name:
            raise ValueError(f"--hyper takes NAME=VALUE; got {item!r}")
        try:
            values[name] = json.loads(text)
        except ValueError:
            values[name] = text
    return values


_CRITERION_TEXT = {
    "gradient": "min_k ||grad f(x-bar^k)||^2",
    "worker_gradient": "min_k ||grad f(x_{w}^k)||^2 (worst worker)",
    "function_value": "f(x-bar^K) - f*",
    "distance": "||x-bar^K - x*||^2",
    "consensus": "(1/N) sum_i ||x_i^K - x-bar^K||^2",
}
