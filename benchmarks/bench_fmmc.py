"""FMMC solve times and accuracy (issue 3 targets, 2-core machine).

    python -m benchmarks.bench_fmmc              # default solvers; Clarabel reference at n = 50
    python -m benchmarks.bench_fmmc --reference  # also cvxpy CLARABEL at n = 100 (~85 s) and SCS rows

Graphs: Erdos-Renyi n = 50, 100, 200 with p = 2 ln n / n (seed 0), ring n = 1000, torus 25 x 40.
Targets: ER n = 100 <= 5 s, n = 200 <= 30 s, ring/torus n = 1000 <= 2 s; lam within 1e-4 of the best
solver's optimum. lam is always numpy's, on the projected W. "gap" is the solver's certified bound on
lam - lam* (barrier: nu/t). The ring has a closed-form optimum (1 + c)/(3 - c), c = cos(2 pi/n).
"""

from __future__ import annotations

import argparse
import math
import time

import networkx as nx
from decbounds.instances.gossip import gossip_matrix, second_eigenvalue
from decbounds.instances.graphs import topology
from decbounds.instances.optimize import optimize_gossip

TARGETS = {("erdos_renyi", 100): 5.0, ("erdos_renyi", 200): 30.0, ("ring", 1000): 2.0, ("torus", 1000): 2.0}


def _graph(name: str, n: int) -> nx.Graph:
    if name == "erdos_renyi":
        return topology(name, n, p=2 * math.log(n) / n, seed=0)
    if name == "torus":
        return topology(name, n, r=25, c=40)
    return topology(name, n)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reference", action="store_true", help="also the slow cvxpy reference solves")
    args = parser.parse_args(argv)
    cases = [("erdos_renyi", 50), ("erdos_renyi", 100), ("erdos_renyi", 200), ("ring", 1000), ("torus", 1000)]
    print(f"{'graph':<12} {'n':>5} {'m':>5} {'solver':<9} {'seconds':>8} {'target':>7} {'lam':>13} "
          f"{'metropolis':>11} {'ref lam':>13} {'|diff|':>9} {'gap':>8}")
    for name, n in cases:
        G = _graph(name, n)
        start = time.perf_counter()
        result = optimize_gossip(G, "fmmc", cache=False)
        seconds = time.perf_counter() - start  # includes the numpy lam of the projected W
        metropolis = second_eigenvalue(gossip_matrix(G, "metropolis"))
        references: list[tuple[str, float, float]] = []
        if name == "ring":
            c = math.cos(2 * math.pi / n)
            references.append(("closed", (1 + c) / (3 - c), 0.0))
        if name == "erdos_renyi" and (n <= 50 or (args.reference and n <= 100)):
            t0 = time.perf_counter()
            ref = optimize_gossip(G, "fmmc", solver="CLARABEL", cache=False)
            references.append(("CLARABEL", ref.lam, time.perf_counter() - t0))
        if name == "erdos_renyi" and args.reference and n <= 100:
            for eps in (1e-3, 1e-4):
                t0 = time.perf_counter()
                scs = optimize_gossip(G, "fmmc", solver="SCS", cache=False,
                                      solver_options={"eps_abs": eps, "eps_rel": eps})
                print(f"{name:<12} {n:>5} {G.number_of_edges():>5} {'SCS ' + str(eps):<9} "
                      f"{time.perf_counter() - t0:>8.2f} {'':>7} {scs.lam:>13.9f}")
        target = TARGETS.get((name, n))
        ref_name, ref_lam, ref_seconds = references[-1] if references else ("", float("nan"), float("nan"))
        gap = "" if result.optimality_gap is None else f"{result.optimality_gap:.1e}"
        print(f"{name:<12} {n:>5} {G.number_of_edges():>5} {result.solver:<9} {seconds:>8.2f} "
              f"{'' if target is None else f'{target:.0f}':>7} {result.lam:>13.9f} {metropolis:>11.6f} "
              f"{ref_lam:>13.9f} {abs(result.lam - ref_lam):>9.1e} {gap:>8}")
        if ref_name:
            print(f"{'':<12} {'':>5} {'':>5} {ref_name:<9} {ref_seconds:>8.2f}   (reference)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
