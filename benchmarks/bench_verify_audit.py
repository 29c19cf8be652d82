"""The class audit's cost beside the measurement's, ``decbounds verify --quick``.

    python -m benchmarks.bench_verify_audit               # dpsgd and extra
    python -m benchmarks.bench_verify_audit --rules detag   # others

Per rule, CPU seconds (``time.process_time``) in this one process, each beside the others:

- ``audit``: the whole class audit of the quick mode (`verify.audit`: the instrumented run, then the
  differential checks);
- ``of which differential``: `verify.flow.flow_audit` alone (purity, the configuration axis, information flow:
  the checks beyond the instrumented run);
- ``isolation``: one child interpreter that imports the auditor (what a ``module:Class`` rule adds,
  `verify.isolation`), from ``resource.getrusage(RUSAGE_CHILDREN)``;
- ``rule alone``: the quick mode's sweeps of the rule itself (`verify.sweep_points` x `verify.measure`, no
  baselines: the smallest measurement a verify runs);
- ``measurement``: the same with the default baselines (DeTAG, D^2, centralized SGD), what
  ``decbounds verify RULE --quick`` measures.

Target: audit + isolation below the measurement. Exit status 1 when a rule misses it.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from decbounds.paper_figures.sweep import SerialExecutor, run_sweep
from decbounds.verify import BASELINES, MODES, audit, measure, sweep_points
from decbounds.verify.flow import flow_audit
from decbounds.verify.spec import fingerprint

from decbounds import algorithms


def _child_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def row(name: str) -> dict[str, float]:
    """The CPU seconds of one rule (module docstring)."""
    settings = MODES["quick"]
    cls = algorithms.rule_class(name)
    started = time.process_time()
    audited = audit(name, n=settings.audit_n, iterations=settings.audit_iterations, seed=0)
    audit_cpu = time.process_time() - started
    assert audited["passed"], audited
    started = time.process_time()
    flow_audit(cls, name, seed=0)
    flow_cpu = time.process_time() - started
    before = _child_seconds()
    subprocess.run([sys.executable, "-c", "import decbounds.verify"], check=True)
    isolation_cpu = _child_seconds() - before
    cpu = {"audit": audit_cpu, "differential": flow_cpu, "isolation": isolation_cpu}
    for label, baselines in (("rule alone", ()), ("measurement", BASELINES)):
        started = time.process_time()
        with tempfile.TemporaryDirectory() as folder:
            levels = sweep_points(name, fingerprint(cls), settings, seed=0, hyper={}, baselines=baselines)
            for points in levels.values():
                run_sweep(points, Path(folder) / "records.jsonl", runner=measure, executor=SerialExecutor(),
                          progress=False)
        cpu[label] = time.process_time() - started
    return cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", default="dpsgd,extra", help="comma-separated registered rules")
    args = parser.parse_args(argv)
    status = 0
    print(f"{'rule':<16}{'audit s':>10}{'of which differential s':>26}{'isolation s':>13}"
          f"{'rule alone s':>14}{'measurement s':>15}{'ratio':>8}")
    for name in args.rules.split(","):
        cpu = row(name.strip())
        ratio = (cpu["audit"] + cpu["isolation"]) / cpu["measurement"]
        print(f"{name:<16}{cpu['audit']:>10.2f}{cpu['differential']:>26.2f}{cpu['isolation']:>13.2f}"
              f"{cpu['rule alone']:>14.2f}{cpu['measurement']:>15.2f}{ratio:>8.2f}", flush=True)
        status |= int(ratio >= 1.0)
    return status


if __name__ == "__main__":
    sys.exit(main())
