"""`decbounds verify`: CPU seconds of each mode against its budget, each beside a reference measured in the
same run.

    python -m benchmarks.bench_verify                 # --quick for dpsgd and detag (about 1 min of CPU each)
    python -m benchmarks.bench_verify --default       # also the default mode for dpsgd (about 1 min of CPU)
    python -m benchmarks.bench_verify --rule extra    # another registered rule

Each run is the whole command, ``decbounds verify RULE [--quick] --no-progress`` in a fresh child process
with a fresh output folder (no record reused), timed as the child's user + system CPU (``resource``
RUSAGE_CHILDREN): CPU, not wall clock, because the 2-core machine is shared. Reference, in the same run: the
CPU of ``decbounds verify RULE --tiny`` (the smallest sizes: the command's floor of imports, audit and
report) and of a fixed engine workload (DeTAG on the n = 192 path at T_c = 2, tuned over its R grid), so
that a slower machine shows in the reference too.

Budgets: --quick <= 60 s, the default <= 300 s of CPU. Exit status 1 when one is missed.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time

BUDGETS = {"quick": 60.0, "full": 300.0}
_ENGINE_REFERENCE = """
from decbounds.verify import measure
point = {"term": "communication", "algorithm": "detag", "n": 192, "chain_length": 2, "step_fractions": [1.0],
         "cap": 48000, "tol_fraction": 0.9, "seed": 0,
         "grid": {"R": [8, 4], "gossip": ["two_tap", "chebyshev"], "start": ["plain"], "eta": [None]}}
measure(point)
"""


def _child_cpu(args: list[str]) -> tuple[float, float, int]:
    """(CPU seconds of the child, wall seconds, exit status)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    status = subprocess.call(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, status


def _verify(rule: str, mode: str) -> tuple[float, float, int]:
    flags = {"quick": ["--quick"], "tiny": ["--tiny"], "full": []}[mode]
    with tempfile.TemporaryDirectory() as out:
        script = ("import sys; from decbounds.cli import main; "
                  "sys.exit(main(['verify', *sys.argv[1:]]))")
        return _child_cpu([sys.executable, "-c", script, rule, *flags, "--no-progress", "--out", out])


def main(argv: list[str] | None = None) -> int:
    """Print one row per (rule, mode) with CPU, wall clock, budget and the same-run references."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--default", action="store_true", help="also the default mode")
    parser.add_argument("--rule", action="append", default=None, help="registered rule(s) (dpsgd, detag)")
    args = parser.parse_args(argv)
    rules = args.rule or ["dpsgd", "detag"]
    engine, _, _ = _child_cpu([sys.executable, "-c", _ENGINE_REFERENCE])
    print(f"reference: engine workload (DeTAG, n = 192 path, R in 4, 8): {engine:.1f} s CPU")
    status = 0
    for rule in rules:
        floor, _, _ = _verify(rule, "tiny")
        print(f"reference: verify {rule} --tiny: {floor:.1f} s CPU")
        for mode in ("quick", "full") if args.default else ("quick",):
            cpu, wall, code = _verify(rule, mode)
            ok = cpu <= BUDGETS[mode]
            status |= 0 if ok else 1
            label = "--quick" if mode == "quick" else "(default)"
            print(f"verify {rule} {label}: {cpu:.1f} s CPU ({wall:.0f} s wall), budget "
                  f"{BUDGETS[mode]:.0f} s: {'ok' if ok else 'MISSED'}; exit {code}")
    return status


if __name__ == "__main__":
    sys.exit(main())
