"""Computed worst cases (``bounds.worst_case``): solve time and SDP size against K and N (issue 13 targets).

    python -m benchmarks.bench_pep            # K sweep per method (spectral class), N sweep (exact W)
    python -m benchmarks.bench_pep --quick    # K <= 6 only

Spectral class [-0.5, 0.9], N = 2, L = Delta = varsigma = 1, step 0.5/L (the CLI example of the issue),
Clarabel. Target: K = 10 with the spectral relaxation in <= 30 s (build + solve) for every method. The exact-W
rows use the Metropolis ring on N nodes (a path for N = 2) at K = 5, DGD (cta) and DSGT. "seconds" is
build + cvxpy solve (canonicalization + solver); each case solved once (an SDP's time is its iterations,
which repeat exactly; one warm-up solve first, so the first row does not pay cvxpy's import). Growth: the
slope of log(seconds) against log(K) (or log(N)) between the first and the last row of each sweep.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from decbounds.bounds.pep import worst_case

SPECTRUM = (-0.5, 0.9)
STEP = 0.5
TARGET_K10_SECONDS = 30.0


def ring_metropolis(N: int) -> np.ndarray:
    """Metropolis weights on the N-ring (every degree 2: 1/3 on self and both neighbours; N = 2: a path)."""
    if N == 2:
        return np.array([[2 / 3, 1 / 3], [1 / 3, 2 / 3]])
    W = np.zeros((N, N))
    for i in range(N):
        for j in ((i - 1) % N, (i + 1) % N):
            W[i, j] = 1 / 3
        W[i, i] = 1 / 3
    return W


def _row(label: str, method: str, K: int, **kwargs: object) -> tuple[float, float]:
    start = time.perf_counter()
    try:
        r = worst_case(method, K, 1.0, STEP, **kwargs)  # type: ignore[arg-type]
    except RuntimeError as err:
        seconds = time.perf_counter() - start
        print(f"{label:<9} {method:<8} {K:>3} {'':>5} {'':>4} {'':>6} {seconds:>8.2f} FAILED: {err}",
              flush=True)
        return seconds, math.nan
    seconds = time.perf_counter() - start
    s = r.sdp_size
    print(f"{label:<9} {method:<8} {K:>3} {r.N:>5} {s['gram']:>4} {s['scalar_constraints']:>6} "
          f"{seconds:>8.2f} "
          f"{r.value:>12.6g} {r.status:<19} {r.gap:>8.1e} {max(r.violations.values()):>8.1e} {s['lmi']:>4}",
          flush=True)
    return seconds, r.value


def _slope(xs: list[int], ts: list[float]) -> str:
    pairs = [(x, t) for x, t in zip(xs, ts, strict=True) if t > 0 and math.isfinite(t)]
    if len(pairs) < 2:
        return "n/a"
    (x0, t0), (x1, t1) = pairs[0], pairs[-1]
    return f"{math.log(t1 / t0) / math.log(x1 / x0):.2f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="K <= 6 and N <= 4 only")
    args = parser.parse_args(argv)
    Ks = (2, 4, 6) if args.quick else (2, 4, 6, 8, 10)
    Ns = (2, 3, 4) if args.quick else (2, 3, 4, 5, 6)
    print(f"{'class':<9} {'method':<8} {'K':>3} {'N':>5} {'gram':>4} {'cons':>6} {'seconds':>8} "
          f"{'value':>12} "
          f"{'status':<19} {'gap':>8} {'viol':>8} {'lmi':>4}")
    worst_case("dgd_cta", 1, 1.0, STEP, spectrum=SPECTRUM)  # warm-up: cvxpy's import and first compile
    summary = []
    for method in ("dgd_cta", "dgd_atc", "dsgt", "extra", "detag"):
        times = [_row("spectral", method, K, spectrum=SPECTRUM)[0] for K in Ks]
        summary.append((method, "K", Ks, times))
    for method in ("dgd_cta", "dsgt"):
        times = [_row("exact", method, 5, W=ring_metropolis(N))[0] for N in Ns]
        summary.append((method, "N", Ns, times))
    print("\ngrowth (log-log slope of seconds, first to last row):")
    for method, axis, xs, ts in summary:
        verdict = ""
        if axis == "K" and xs[-1] == 10:
            verdict = f"; K = 10: {ts[-1]:.1f} s ({'meets' if ts[-1] <= TARGET_K10_SECONDS else 'MISSES'} " \
                      f"the {TARGET_K10_SECONDS:.0f} s target)"
        print(f"  {method:<8} vs {axis}: slope {_slope(list(xs), ts)}{verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
