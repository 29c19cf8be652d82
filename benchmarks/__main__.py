"""`python -m benchmarks` (or `make bench`): every benchmark, one after the other, in one process each."""

from __future__ import annotations

import subprocess
import sys

BENCHMARKS = ("bench_setup", "bench_cli_help", "bench_fmmc", "bench_zero_chain", "bench_engine",
              "bench_iteration", "bench_pep", "bench_verify", "bench_verify_audit", "bench_timed")


def main() -> int:
    """Run each benchmark module in its own interpreter (so one's caches and threads cannot bias another)."""
    status = 0
    for name in BENCHMARKS:
        print(f"== benchmarks.{name} ==", flush=True)
        status |= subprocess.call([sys.executable, "-m", f"benchmarks.{name}"])
    return status


if __name__ == "__main__":
    sys.exit(main())
