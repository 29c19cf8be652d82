"""How long each ``decbounds <command> --help`` (and one one-line input error) makes the user wait.

    python -m benchmarks.bench_cli_help [--repeats 5]

One row per subcommand: the median wall time of ``python -m decbounds <command> --help`` over the repeats,
beside the same run's reference, the interpreter's start-up (``python -c pass``), and the target: 0.3 s of
wall time. The last rows time a bad input of ``verify`` and ``run``, which should fail as fast as the help
(the input is checked before the numerical stack is imported where the parser can check it). Exit status
1 when a help row misses the target.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

from decbounds.cli import COMMANDS

#: The target wall time of a subcommand's help, seconds.
HELP_TARGET_SECONDS = 0.3

BAD_INPUTS: dict[str, list[str]] = {
    "verify --quick --tiny": ["verify", "dpsgd", "--quick", "--tiny"],
    "run --n x": ["run", "dpsgd", "--n", "x"],
}


def _wall(args: list[str], repeats: int) -> float:
    """The median wall time of running ``args`` (its output discarded, any exit status)."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(args, capture_output=True, check=False)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    """Print one row per subcommand's help and per bad input; exit status 1 when a help misses the target.

    Parameters
    ----------
    argv : list of str, optional
        ``--repeats N`` (default 5).

    Returns
    -------
    int
    """
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_cli_help")
    parser.add_argument("--repeats", type=int, default=5)
    repeats = parser.parse_args(argv).repeats
    start_up = _wall([sys.executable, "-c", "pass"], repeats)
    print(f"interpreter start-up (python -c pass): {start_up:.3f} s wall, median of {repeats}")
    missed = []
    for command in ("", *COMMANDS):
        args = [sys.executable, "-m", "decbounds", *([command] if command else []), "--help"]
        seconds = _wall(args, repeats)
        met = seconds <= HELP_TARGET_SECONDS
        missed += [] if met else [command or "(top level)"]
        print(f"decbounds {command + ' ' if command else ''}--help: {seconds:.3f} s wall "
              f"({seconds / start_up:.1f}x start-up; target <= {HELP_TARGET_SECONDS} s: "
              f"{'met' if met else 'MISSED'})")
    for label, args in BAD_INPUTS.items():
        seconds = _wall([sys.executable, "-m", "decbounds", *args], repeats)
        print(f"decbounds {label} (bad input, exit 2): {seconds:.3f} s wall "
              f"({seconds / start_up:.1f}x start-up)")
    print(f"missed: {', '.join(missed) if missed else 'none'}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
