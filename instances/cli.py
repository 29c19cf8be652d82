"""``decbounds gossip``: lam, spectral gap and solve time of a topology's gossip matrices, side by side, or
the spectrum of one W read from a file.

    decbounds gossip ring --n 64 --weights fmmc
    decbounds gossip --W W.npy
    decbounds gossip --zoo 32 --gamma 0.9 0.99

Beside lam and the gap it prints the effective number of neighbours n_eff(gamma) of each W
(``instances.effective_neighbours``) at every ``--gamma`` (default ``instances.zoo.DEFAULT_GAMMAS``).
"""

from __future__ import annotations

import argparse
import inspect
import sys
import time
from typing import TYPE_CHECKING, NamedTuple

from decbounds.instances.vocabulary import SOLVERS, TOPOLOGY_NAMES, TOPOLOGY_OPTIONS, WEIGHT_RULE_NAMES

from decbounds.registry import KnownNames

if TYPE_CHECKING:  # the numerical modules are imported when the command runs: ``--help`` needs none
    import networkx as nx
    from decbounds.instances.gossip import GossipLike

__all__ = ["ANNOUNCE_SECONDS", "CACHE_BYTES_PER_EDGE", "SECONDS_PER_EDGE", "TOPOLOGY_FLAGS",
           "SpectrumSummary", "add_parser", "run", "spectrum_summary", "topology_flags"]


class SpectrumSummary(NamedTuple):
    """What ``decbounds gossip`` reports of one gossip value (`spectrum_summary`).

    Parameters
    ----------
    n : int
    kind : str
    time_varying : bool
    period : int or None
    lam : float or None
        lam (a schedule: its effective lam; None for a push W).
    spectral_gap : float or None
    lambda_2, lambda_n : float or None
        The extreme eigenvalues off consensus of a static symmetric W (None otherwise).
    method : str
    """

    n: int
    kind: str
    time_varying: bool
    period: int | None
    lam: float | None
    spectral_gap: float | None
    lambda_2: float | None
    lambda_n: float | None
    method: str


def spectrum_summary(W: GossipLike, *, kind: str = "symmetric") -> SpectrumSummary:
    """The spectrum summary of a gossip value, as ``decbounds gossip`` prints it (W converted once by
    ``instances.as_gossip``).

    Parameters
    ----------
    W : instances.GossipLike
        A `GossipMatrix`, a ``GossipSchedule``, or a matrix or graph.
    kind : {"symmetric", "push", "exact"}, default "symmetric"

    Examples
    --------
    >>> import networkx as nx
    >>> summary = spectrum_summary(nx.cycle_graph(6))
    >>> round(summary.lam, 4), round(summary.spectral_gap, 4), summary.method
    (0.6667, 0.3333, 'dense eigvalsh')
    """
    from decbounds.instances.gossip import GossipMatrix, as_gossip

    gossip = as_gossip(W, kind=kind)
    lam = gossip.lam
    if isinstance(gossip, GossipMatrix):
        lambda_2, lambda_n, method = gossip.lambda_2, gossip.lambda_n, gossip.spectrum_method
    else:
        lambda_2, lambda_n, method = None, None, "effective lam"
    return SpectrumSummary(n=gossip.n, kind=gossip.kind, time_varying=gossip.time_varying,
                           period=gossip.period, lam=lam, spectral_gap=None if lam is None else 1.0 - lam,
                           lambda_2=lambda_2, lambda_n=lambda_n, method=method)

#: A topology builder's parameter -> the ``decbounds gossip`` option that sets it, with its help. A
#: builder's parameter without an option here (``exponential``'s ``directed``) keeps its default on the
#: command line, and messages never name it.
TOPOLOGY_FLAGS: dict[str, tuple[str, str]] = {
    "r": ("--r", "torus rows"),
    "c": ("--c", "torus columns"),
    "p": ("--p", "erdos_renyi edge probability"),
    "radius": ("--radius", "random_geometric radius"),
    "k": ("--k", "ring_lattice neighbours on each side"),
    "D": ("--D", "broom diameter"),
    "seed": ("--seed", "seed of the random topologies"),
    "max_attempts": ("--max-attempts", "draws of a random topology until one is connected (default 100)"),
}


def topology_flags(name: str) -> tuple[list[str], list[str], list[str]]:
    """The options of `TOPOLOGY_FLAGS` a topology's builder takes, read from its signature.

    Parameters
    ----------
    name : str

    Returns
    -------
    required, optional : list of str
        The options (``--p``) it needs, and those it may take.
    unreachable : list of str
        Parameters it needs that no option sets (a registered topology's own): usable from Python only.
    """
    from decbounds.instances.graphs import TOPOLOGIES

    parameters = list(inspect.signature(TOPOLOGIES[name].builder).parameters.values())[1:]  # after n
    required: list[str] = []
    optional: list[str] = []
    unreachable: list[str] = []
    for parameter in parameters:
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        needed = parameter.default is parameter.empty
        if parameter.name in TOPOLOGY_FLAGS:
            (required if needed else optional).append(TOPOLOGY_FLAGS[parameter.name][0])
        elif needed:
            unreachable.append(parameter.name)
    return required, optional, unreachable


def _topology_help() -> str:
    """One line per built-in topology that takes options (`vocabulary.TOPOLOGY_OPTIONS`, which
    `topology_flags` reads off the builders): what ``decbounds gossip --help`` lists under them."""
    lines = [f"  {name}: {' '.join([*required, *(f'[{flag}]' for flag in optional)])}"
             for name, (required, optional) in TOPOLOGY_OPTIONS.items()]
    return ("options each topology takes:\n"
            + "\n".join(lines))


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the ``gossip`` subcommand; its parser sets ``func(args) -> int``.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
    """
    parser = subparsers.add_parser(
        "gossip",
        help="lam and spectral gap of a topology under every weight rule",
        description="Print lam = max(|lambda_2|, |lambda_n|), the spectral gap 1 - lam and the solve time of "
                    "the chosen weight rule and, side by side, of the other rules that apply to the graph; "
                    "or, with --W FILE, the spectrum of that gossip matrix.",
    )
    parser.epilog = _topology_help()
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    # the registries: registered names are choices too
    topologies = KnownNames(TOPOLOGY_NAMES, "decbounds.instances.graphs", "TOPOLOGIES",
                            group="decbounds.topologies")
    parser.add_argument("topology", nargs="?", choices=topologies, metavar="TOPOLOGY",
                        help=f"the graph (instances.TOPOLOGIES): {', '.join(topologies)}")
    parser.add_argument("--n", type=int, help="number of workers (required with TOPOLOGY)")
    parser.add_argument("--W", metavar="FILE", help="instead of TOPOLOGY: a gossip matrix W (.npy, .npz of "
                        "scipy.sparse.save_npz, or text numpy.loadtxt reads); prints its spectrum")
    parser.add_argument("--weights", default="metropolis",
                        choices=KnownNames(WEIGHT_RULE_NAMES, "decbounds.instances.gossip", "WEIGHT_RULES",
                                           group="decbounds.weight_rules"),
                        help="the weight rule printed first, marked * (default metropolis)")
    types = {"r": int, "c": int, "p": float, "radius": float, "k": int, "D": int, "seed": int,
             "max_attempts": int}
    for name, (flag, text) in TOPOLOGY_FLAGS.items():
        parser.add_argument(flag, dest=name, type=types[name], help=text)
    parser.add_argument("--gamma", type=float, nargs="+", metavar="GAMMA",
                        help="decays in [0, 1) of the effective number of neighbours n_eff printed beside "
                             "lam (default 0.5 0.9 0.99)")
    parser.add_argument("--zoo", type=int, metavar="N",
                        help="instead of TOPOLOGY: the topology zoo at N workers (ring, torus, hypercube, "
                             "exponential, one-peer exponential, complete, star, random regular, Erdos-Renyi"
                             ") with 1 - lam, D and n_eff, as CSV")
    parser.add_argument("--solver", choices=SOLVERS, default="auto", help="FDLA/FMMC solver")
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write the FDLA/FMMC cache")
    parser.add_argument("--cache-dir", help="FDLA/FMMC cache folder (default $DECBOUNDS_CACHE_DIR, else "
                        "~/.cache/decbounds/gossip; about 24 bytes per edge per rule; a folder that cannot "
                        "be written: the result is printed uncached, with a warning)")
    parser.set_defaults(func=run)


def _applicable(G: nx.Graph, weights: str) -> bool:
    import networkx as nx

    degrees = {d for _, d in G.degree}
    if weights == "uniform":
        return len(degrees) <= 1
    if weights == "path":
        n = G.number_of_nodes()
        return G.number_of_edges() == n - 1 and max(degrees, default=0) <= 2 and nx.is_connected(G)
    return True


def run(args: argparse.Namespace) -> int:
    """Build the graph, time each applicable weight rule and print a table; exit 0, or 2 on
    bad input.

    Parameters
    ----------
    args : argparse.Namespace
        From the parser of `add_parser` (``decbounds gossip TOPOLOGY --n N ...``).
    """
    try:
        return _run(args)
    except (ValueError, TypeError) as err:
        print(f"decbounds gossip: {err}", file=sys.stderr)
        return 2


def _topology_params(args: argparse.Namespace) -> dict[str, object]:
    """The builder's keyword arguments from the options given, checked in the options' own names."""
    given = {name: getattr(args, name) for name in TOPOLOGY_FLAGS if getattr(args, name) is not None}
    required, optional, unreachable = topology_flags(args.topology)
    takes = ", ".join(required + optional) or "no options"
    if unreachable:
        raise ValueError(f"topology {args.topology!r} needs {', '.join(unreachable)}, which no option of "
                         f"decbounds gossip sets; build it in Python (instances.topology)")
    stray = [TOPOLOGY_FLAGS[name][0] for name in given if TOPOLOGY_FLAGS[name][0] not in required + optional]
    if stray:
        raise ValueError(f"topology {args.topology!r} does not take {', '.join(stray)}; it takes {takes}")
    missing = [flag for flag in required if flag.lstrip("-") not in given]
    if missing:
        raise ValueError(f"topology {args.topology!r} needs {', '.join(missing)} "
                         f"({'; '.join(TOPOLOGY_FLAGS[flag.lstrip('-')][1] for flag in missing)}); "
                         f"it takes {takes}")
    return given


def _gammas(args: argparse.Namespace) -> tuple[float, ...]:
    from decbounds.instances.zoo import DEFAULT_GAMMAS

    return DEFAULT_GAMMAS if not getattr(args, "gamma", None) else tuple(args.gamma)


def _n_eff_text(W: GossipLike, gammas: tuple[float, ...]) -> str:
    """n_eff at each gamma, as ``decbounds gossip`` prints it beside lam."""
    from decbounds.instances.neighbours import effective_neighbours

    return " ".join(f"{float(effective_neighbours(W, gamma)):>10.4g}" for gamma in gammas)


def _run_zoo(args: argparse.Namespace) -> int:
    """``decbounds gossip --zoo N``: every zoo member's 1 - lam, D and n_eff, as CSV on stdout."""
    from decbounds.instances.zoo import zoo_rows, zoo_table

    given = [flag for flag, value in (("TOPOLOGY", args.topology), ("--n", args.n), ("--W", args.W))
             if value is not None]
    if given:
        raise ValueError(f"--zoo N builds its own graphs: give it without {' and '.join(given)}")
    seed = 0 if args.seed is None else args.seed
    print(zoo_table(zoo_rows(args.zoo, _gammas(args), seed=seed)), end="")
    return 0


def _run(args: argparse.Namespace) -> int:
    if getattr(args, "zoo", None) is not None:
        return _run_zoo(args)
    if args.W is not None:
        return _run_matrix(args)
    if args.topology is None or args.n is None:
        raise ValueError("give TOPOLOGY with --n (every weight rule's lam on that graph), or --W FILE")
    from decbounds.instances.gossip import WEIGHT_RULES, gossip_matrix
    from decbounds.instances.graphs import topology
    from decbounds.instances.optimize import optimize_gossip

    G = topology(args.topology, args.n, **_topology_params(args))
    rules = [args.weights] + [w for w in WEIGHT_RULES if w != args.weights and _applicable(G, w)]
    gammas = _gammas(args)
    announce = _announce_cost(G, rules, args)
    rows = []
    for index, weights in enumerate(rules, 1):
        if announce:
            print(f"decbounds gossip: {weights} ({index}/{len(rules)}) ...", file=sys.stderr, flush=True)
        start = time.perf_counter()
        if weights in ("fdla", "fmmc"):
            result = optimize_gossip(G, weights, solver=args.solver, cache=not args.no_cache,
                                     cache_dir=args.cache_dir)
            lam, solver = result.lam, result.solver + (" (cached)" if result.from_cache else "")
            matrix: GossipLike = result.W
        else:
            try:
                matrix = gossip_matrix(G, weights)
                summary = spectrum_summary(matrix)
                assert summary.lam is not None
                lam, solver = summary.lam, "closed rule"
            except ValueError:
                if weights == args.weights:
                    raise
                continue  # a registered rule that does not apply to this graph: leave it out of the table
        seconds = time.perf_counter() - start
        mark = "*" if weights == args.weights else " "
        rows.append(f"{weights + mark:<12} {lam:>14.10f} {1.0 - lam:>12.4e} {_n_eff_text(matrix, gammas)} "
                    f"{seconds:>9.3f}  {solver}")
    print(f"{args.topology} n={G.number_of_nodes()} edges={G.number_of_edges()}")
    n_eff_header = " ".join(f"{f'n_eff({gamma:g})':>10}" for gamma in gammas)
    print(f"{'weights':<12} {'lam':>14} {'gap':>12} {n_eff_header} {'seconds':>9}  solver")
    print("\n".join(rows))
    return 0


#: Seconds per edge of one weight rule on the complete graph at n = 800 (319,600 edges): 1.4-1.9 s per
#: closed rule, 14-17 s per FDLA/FMMC orbit LP (one core of the development machine); the estimate
#: `_announce_cost` prints, not a promise.
SECONDS_PER_EDGE = {"closed": 5e-6, "optimized": 5e-5}
#: Bytes per edge of one FDLA/FMMC cache entry (its edges and weights: 7.7 MB at 319,600 edges).
CACHE_BYTES_PER_EDGE = 24
#: A table estimated to take longer than this many seconds is announced, with progress per rule.
ANNOUNCE_SECONDS = 2.0


def _announce_cost(G: nx.Graph, rules: list[str], args: argparse.Namespace) -> bool:
    """Print the estimated time and cache size of the table on stderr when it exceeds `ANNOUNCE_SECONDS`;
    returns whether it did (the rules' progress is then printed too)."""
    from decbounds.instances.optimize import default_cache_dir

    edges = G.number_of_edges()
    optimized = [w for w in rules if w in ("fdla", "fmmc")]
    seconds = edges * (SECONDS_PER_EDGE["closed"] * (len(rules) - len(optimized))
                       + SECONDS_PER_EDGE["optimized"] * len(optimized))
    if seconds < ANNOUNCE_SECONDS:
        return False
    folder = args.cache_dir or default_cache_dir()
    cache = ("no cache (--no-cache)" if args.no_cache or not optimized else
             f"up to {edges * CACHE_BYTES_PER_EDGE * len(optimized) / 1e6:.0f} MB of FDLA/FMMC cache in "
             f"{folder} (--no-cache: none)")
    print(f"decbounds gossip: {edges} edges, {len(rules)} weight rules: about {seconds:.0f} s, {cache}",
          file=sys.stderr, flush=True)
    return True


def _run_matrix(args: argparse.Namespace) -> int:
    """``decbounds gossip --W FILE``: the file's W made a gossip value (`spectrum_summary`), one line."""
    given = [flag for flag, value in (("TOPOLOGY", args.topology), ("--n", args.n)) if value is not None]
    if given:
        raise ValueError(f"--W FILE describes one W: give it without {' and '.join(given)}")
    from decbounds.instances.matrices import read_matrix_file

    path = str(args.W)
    W = read_matrix_file(path, "--W")
    summary = spectrum_summary(W)
    assert summary.lam is not None and summary.lambda_2 is not None and summary.lambda_n is not None
    gammas = _gammas(args)
    n_eff = ", ".join(f"n_eff({gamma:g})={value.strip()}" for gamma, value in
                      zip(gammas, _n_eff_text(W, gammas).split(), strict=True))
    print(f"W from {path}: n={summary.n}, lam={summary.lam:.10f}, gap={1.0 - summary.lam:.4e}, "
          f"lambda_2={summary.lambda_2:.10f}, lambda_n={summary.lambda_n:.10f} ({summary.method}); {n_eff}")
    return 0
