"""Computed worst cases (``pep.worst_case``): solve time and SDP size against K and N.

    python -m benchmarks.bench_pep            # K sweep per method (spectral class), N sweeps (exact W)
    python -m benchmarks.bench_pep --quick    # K <= 6, N <= 8 only

Spectral class [-0.5, 0.9], N = 2, L = Delta = varsigma = 1, step 0.5/L (the first example in pep/cli.py),
Clarabel. Target: K = 10 with the spectral relaxation in <= 30 s for every method; the DeTAG row (K = 10
phases of R = 2: ``worst_case("detag", K=10, L=1.0, step_size=0.5, spectrum=(-0.5, 0.9))``) is printed
with that target beside D-PSGD's K = 10 row of the same run as the reference. The exact-W rows use the
Metropolis ring on N nodes (a path for N = 2; circulant for N >= 3) at K = 5, D-PSGD (dgd_cta) and DSGT:
the full Gram matrix (``symmetry=False``) for N <= 6, and the cyclic-shift form (the default for a
circulant W: about N/2 + 1 Fourier blocks) up to N = 64. "cpu" is ``time.process_time`` of the whole
call (build + cvxpy + solver + the numpy checks), each case solved once (an SDP's time is its iterations,
which repeat exactly; one warm-up solve first, so the first row does not pay cvxpy's import); the load
average is printed with every row, since the machine may be shared. Growth: the slope of log(cpu) against
log(K) (or log(N)) between the first and the last row of each sweep. Exit status 1 when the DeTAG row
misses its target or does not end "optimal".
"""

from __future__ import annotations

import argparse
import math
import os
import time

import numpy as np
from decbounds.pep.api import worst_case

SPECTRUM = (-0.5, 0.9)
STEP = 0.5
TARGET_K10_SECONDS = 30.0
EXACT_K = 5


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


def _row(label: str, method: str, K: int, **kwargs: object) -> tuple[float, float, str]:
    start = time.process_time()
    try:
        r = worst_case(method, K, 1.0, STEP, **kwargs)  # type: ignore[arg-type]
    except RuntimeError as err:
        seconds = time.process_time() - start
        print(f"{label:<9} {method:<8} {K:>3} {'':>4} {'':>4} {'':>6} {seconds:>8.2f} FAILED: {err}",
              flush=True)
        return seconds, math.nan, "failed"
    seconds = time.process_time() - start
    s = r.sdp_size
    blocks = "+".join(map(str, s["blocks"])) if len(s["blocks"]) <= 4 else \
        f"{len(s['blocks'])} blocks <= {max(s['blocks'])}"
    print(f"{label:<9} {method:<8} {K:>3} {r.N:>4} {s['gram']:>4} {s['solver_rows']:>6} {seconds:>8.2f} "
          f"{r.value:>12.6g} {r.status:<19} {r.gap:>8.1e} {max(r.violations.values()):>8.1e} {s['lmi']:>4} "
          f"{blocks:<16} {os.getloadavg()[0]:>5.1f}", flush=True)
    return seconds, r.value, r.status


def _slope(xs: list[int], ts: list[float]) -> str:
    pairs = [(x, t) for x, t in zip(xs, ts, strict=True) if t > 0 and math.isfinite(t)]
    if len(pairs) < 2:
        return "n/a"
    (x0, t0), (x1, t1) = pairs[0], pairs[-1]
    return f"{math.log(t1 / t0) / math.log(x1 / x0):.2f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="K <= 6 and N <= 8 only")
    args = parser.parse_args(argv)
    Ks = (2, 4, 6) if args.quick else (2, 4, 6, 8, 10)
    Ns_full = (2, 3, 4) if args.quick else (2, 3, 4, 5, 6)
    Ns_cyclic = (3, 4, 6, 8) if args.quick else (3, 4, 6, 8, 12, 16, 24, 32, 48, 64)
    print(f"{'class':<9} {'method':<8} {'K':>3} {'N':>4} {'gram':>4} {'rows':>6} {'cpu s':>8} {'value':>12} "
          f"{'status':<19} {'gap':>8} {'viol':>8} {'lmi':>4} {'blocks':<16} {'load':>5}")
    worst_case("dgd_cta", 1, 1.0, STEP, spectrum=SPECTRUM)  # warm-up: cvxpy's import and first compile
    summary = []
    k10: dict[str, tuple[float, str]] = {}
    for method in ("dgd_cta", "dgd_atc", "dsgt", "extra", "detag"):
        rows = [_row("spectral", method, K, spectrum=SPECTRUM) for K in Ks]
        summary.append((method, "K", Ks, [t for t, _, _ in rows]))
        k10[method] = (rows[-1][0], rows[-1][2])
    for method in ("dgd_cta", "dsgt"):
        times = [_row("exact", method, EXACT_K, W=ring_metropolis(N), symmetry=False)[0] for N in Ns_full]
        summary.append((method, "N (full)", Ns_full, times))
        times = [_row("cyclic", method, EXACT_K, W=ring_metropolis(N))[0] for N in Ns_cyclic]
        summary.append((method, "N (cyclic)", Ns_cyclic, times))
    print("\ngrowth (log-log slope of CPU seconds, first to last row):")
    for method, axis, xs, ts in summary:
        print(f"  {method:<8} vs {axis}: slope {_slope(list(xs), ts)} ({xs[0]}: {ts[0]:.2f} s, "
              f"{xs[-1]}: {ts[-1]:.2f} s)")
    if Ks[-1] != 10:
        return 0
    (detag_s, detag_status), (ref_s, ref_status) = k10["detag"], k10["dgd_cta"]
    met = detag_s <= TARGET_K10_SECONDS and detag_status == "optimal"
    print(f"\nDeTAG K = 10 (R = 2): {detag_s:.1f} s CPU, {detag_status} "
          f"(target <= {TARGET_K10_SECONDS:.0f} s "
          f"and \"optimal\": {'met' if met else 'MISSED'}); reference D-PSGD K = 10 in the same run: "
          f"{ref_s:.1f} s, {ref_status}; load average {os.getloadavg()[0]:.1f}")
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
