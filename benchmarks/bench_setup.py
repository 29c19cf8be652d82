"""Set-up costs users wait for: the λ of one large ring run and the CLI's help.

    python -m benchmarks.bench_setup

Rows, each a CPU time (``time.process_time`` / the child's ``resource`` user + system time) beside its
target and a reference measured in the same run:
1. ring n = 16384: topology + ``gossip_matrix`` (λ in closed form) + a 3-iteration ``run``; target <= 1 s;
   reference: 100 products W @ X with X of shape (n, 1, 6), what the iterations themselves cost.
2. ``decbounds --help`` against ``decbounds predict --help``; target: ratio <= 1.
"""

from __future__ import annotations

import resource
import subprocess
import sys
import time

import numpy as np

from decbounds import algorithms, instances

RING_N = 16384
RING_TARGET_SECONDS = 1.0


def _child_cpu(args: list[str]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(args, check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    """Print both rows; exit status 1 when a target is missed."""
    start = time.process_time()
    W = instances.gossip_matrix(instances.topology("ring", RING_N))
    f = instances.heterogeneous_quadratic(RING_N, 6, 1.0, seed=0)
    algorithms.run("dpsgd", f, W, step_size=0.1, iterations=3)
    setup = time.process_time() - start
    X = np.ones((RING_N, 1, 6))
    start = time.process_time()
    for _ in range(100):
        W.matrix @ X.reshape(RING_N, -1)
    reference = time.process_time() - start
    print(f"1. ring n={RING_N}: set-up + 3 iterations {setup:.3f} s CPU (target <= {RING_TARGET_SECONDS} s: "
          f"{'met' if setup <= RING_TARGET_SECONDS else 'MISSED'}); 100 gossip products {reference:.3f} s; "
          f"lam by {W.spectrum_method}")
    script = [sys.executable, "-m", "decbounds.cli"]
    help_cpu = _child_cpu([*script, "--help"])
    predict_cpu = _child_cpu([*script, "predict", "--help"])
    ratio = help_cpu / predict_cpu
    print(f"2. decbounds --help {help_cpu:.3f} s CPU, predict --help {predict_cpu:.3f} s: ratio {ratio:.2f} "
          f"(target <= 1: {'met' if ratio <= 1 else 'MISSED'})")
    return 0 if setup <= RING_TARGET_SECONDS and ratio <= 1 else 1


if __name__ == "__main__":
    sys.exit(main())
