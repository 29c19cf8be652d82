"""The engine's per-iteration cost as a ratio: `python -m benchmarks.bench_iteration` (exit status 1 when a
ratio is more than `SLACK` above its recorded `BASELINE`).

One configuration of D-PSGD and of DeTAG on the 12-node path zero-chain instance (d = 6, the instance of
``bench_engine.bench_tiny``), tol never met so every iteration runs the stopping test (certified or
evaluated). The CPU time per iteration of a whole run (best of `REPEATS` runs of `ITERATIONS`) is divided by
that of one bare numpy call on the state (``np.add(x, x, out=y)``, (12, 1, 6)), timed the same way in the
same process, the runs alternating, so the ratio compares like with like on a loaded or a different machine.
The file uses only the public API, so that it times any version of decbounds (docs/benchmarks.md: the
baseline and how it was measured).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

import networkx as nx
import numpy as np

from decbounds import algorithms, instances

#: Per-iteration CPU time over one bare numpy call of the reference engine, commit 87852aa (runs alternating
#: with this engine's at load 17-25; docs/benchmarks.md).
BASELINE = {"dpsgd": 85.0, "detag": 57.6}
#: How far a ratio may exceed its baseline.
SLACK = 1.10
ITERATIONS, REPEATS = 1500, 15


def ratios(iterations: int = ITERATIONS, repeats: int = REPEATS) -> dict[str, float]:
    """Per algorithm, the best CPU time per iteration over the best time of one bare numpy call."""
    problem = instances.communication_instance(12, Delta=262656.0 * 6, L=1.0, epsilon=1.0)
    W = instances.gossip_matrix(nx.path_graph(12), "metropolis")
    x = np.zeros((12, 1, problem.dim))
    y = np.empty_like(x)

    def bare(count: int) -> None:
        for _ in range(count):
            np.add(x, x, out=y)

    def engine(name: str) -> Callable[[int], object]:
        return lambda count: algorithms.run(name, problem, W, step_size=0.5, iterations=count, tol=1e-9,
                                            record_every=10**9)

    runs = {"bare": bare, **{name: engine(name) for name in BASELINE}}
    best = dict.fromkeys(runs, np.inf)
    for _ in range(repeats):
        for label, run in runs.items():
            start = time.process_time()
            run(iterations)
            best[label] = min(best[label], (time.process_time() - start) / iterations)
    return {name: best[name] / best["bare"] for name in BASELINE} | {"bare_us": best["bare"] * 1e6}


def main() -> int:
    """Print each ratio beside its baseline; 1 when one exceeds ``SLACK`` times it."""
    measured = ratios()
    print(f"per-iteration CPU / one bare numpy call ({measured['bare_us']:.2f} us), path zero chain n=12, "
          "d=6")
    status = 0
    for name, baseline in BASELINE.items():
        met = measured[name] <= SLACK * baseline
        status |= not met
        print(f"{name:<8}{measured[name]:>8.1f}x   baseline {baseline:.1f}x   "
              f"{measured[name] / baseline - 1:+.1%}   {'met' if met else 'MISSED'}")
    return status


if __name__ == "__main__":
    sys.exit(main())
