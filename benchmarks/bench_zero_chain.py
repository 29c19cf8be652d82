"""Zero-chain gradient cost: `python -m benchmarks.bench_zero_chain` prints two small tables.

1. n = 64 workers at progress 10 (every row non-zero on its first 10 coordinates): the gradient at
   d = 100000 against d = 1000, timed in this process. Target: <= 2x. Two columns: with the caller's
   ``width`` promise (X[..., width:] == 0, which a zero-respecting run knows), the work follows the active
   prefix only; without it, one read of X finds the prefix, and that read grows with d.
2. The 12-node path instance of Cor. 2 (d = 6), the shape the engine uses: grad for X (12, 6) and
   (12, 1, 6), and one probabilistic zero-chain oracle query on (12, 1, 6) (feeds the engine's
   <= 35 us per-iteration target).
"""

from __future__ import annotations

import timeit
from collections.abc import Callable

import numpy as np
from decbounds.instances.hard import communication_instance, sampling_instance
from decbounds.instances.zero_chain import zero_chain
from decbounds.oracles import ZeroChainOracle


def best_time(fn: Callable[[], object], min_seconds: float = 0.2, repeats: int = 7) -> float:
    """Best-of-`repeats` seconds per call, each repeat running about `min_seconds`."""
    timer = timeit.Timer(fn)
    number, _ = timer.autorange()
    number = max(1, int(number * min_seconds / 0.2))
    return min(timer.repeat(repeat=repeats, number=number)) / number


def prefix_table(n: int = 64, progress: int = 10) -> dict[int, tuple[float, float]]:
    rng = np.random.default_rng(0)
    times = {}
    for d in (1000, 100_000):
        f = zero_chain(d, n)
        X = np.zeros((n, d))
        X[:, :progress] = rng.standard_normal((n, progress))
        assert np.array_equal(f.grad(X, width=progress), f.grad(X))
        hinted = best_time(lambda f=f, X=X: f.grad(X, width=progress))
        times[d] = (hinted, best_time(lambda f=f, X=X: f.grad(X)))
    return times


def path_table() -> dict[str, float]:
    f = communication_instance(12, T_c=6)
    rng = np.random.default_rng(1)
    X = rng.standard_normal((12, 6))
    X3 = X.reshape(12, 1, 6).copy()
    oracle = ZeroChainOracle(sampling_instance(12, T_c=6, p=0.01))
    generator = np.random.default_rng(2)
    one = np.ones((12, 1))
    baseline = np.empty((12, 6))
    return {
        "grad (12, 6)": best_time(lambda: f.grad(X)),
        "grad (12, 1, 6)": best_time(lambda: f.grad(X3)),
        "zero-chain oracle (12, 1, 6)": best_time(lambda: oracle.sample(X3, generator, 1)),
        "one numpy multiply (12, 6), for scale": best_time(lambda: np.multiply(X, one, out=baseline)),
    }


def main() -> None:
    print("1. zero-chain gradient, n = 64 workers at progress 10")
    times = prefix_table()
    print(f"   {'d':>8} | {'with width (us)':>16} | {'scanning X (us)':>16}")
    for d, (hinted, scanned) in times.items():
        print(f"   {d:>8} | {hinted * 1e6:16.1f} | {scanned * 1e6:16.1f}")
    hinted_ratio = times[100_000][0] / times[1000][0]
    scanned_ratio = times[100_000][1] / times[1000][1]
    print(f"   ratio d=1e5 / d=1e3: with width {hinted_ratio:.2f}x (target <= 2x: "
          f"{'met' if hinted_ratio <= 2 else 'MISSED'}); scanning {scanned_ratio:.1f}x (memory-bound read)")
    print("2. 12-node path instance (Cor. 2), d = 6")
    for name, seconds in path_table().items():
        print(f"   {name:<40} {seconds * 1e6:7.2f} us")


if __name__ == "__main__":
    main()
