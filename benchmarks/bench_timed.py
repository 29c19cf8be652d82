"""The asynchronous engine's event loop and the time bounds: `python -m benchmarks.bench_timed`.

1. Events per CPU second of each schedule (Fragile SGD, Amelie SGD, asynchronous SGD) on the quick `time`
   figure's cluster (n = 8, h_i = i, a ring of 0.1 s links; and with exponential compute times), beside a
   reference loop measured in the same run: one heap push, one heap pop and one numpy add of an (8,) array
   per event. Target: >= 100,000 events per CPU second.
2. A whole `run_timed` on the zero chain (schedule plus numpy steps): events and steps per CPU second.
3. `bounds.time_lower_bound` for n = 500, 1000, 2000 workers on a ring (shortest paths and the exact
   minimization over pivots and sorted prefixes). Target: well under a second at n in the thousands.
"""

from __future__ import annotations

import heapq
import time

import numpy as np
from decbounds.algorithms import timed_events
from decbounds.algorithms.timed import run_timed
from decbounds.bounds import time_lower_bound

from decbounds import instances, oracles

TARGET = 100_000


def reference_rate(events: int = 200_000) -> float:
    """Events per CPU second of a bare loop: heappush, heappop and one small numpy add per event."""
    heap: list[tuple[float, int]] = [(0.0, 0)]
    acc, unit = np.zeros(8), np.ones(8)
    start = time.process_time()
    for k in range(events):
        t, _ = heapq.heappop(heap)
        np.add(acc, unit, out=acc)
        heapq.heappush(heap, (t + 1.0, k))
    return events / (time.process_time() - start)


def schedule_rate(name: str, distribution: str, steps: int) -> float:
    """Events per CPU second of one schedule over `steps` steps."""
    cluster = instances.named_cluster("power", 8, alpha=1.0, rho=0.1, topology="ring",
                                      distribution=distribution)
    stats: dict[str, int] = {}
    rng = np.random.default_rng(0)
    if name == "fragile_sgd":
        schedule = timed_events.fragile_schedule(cluster, pivot=0, batch_size=8, rng=rng, stats=stats)
    elif name == "amelie_sgd":
        schedule = timed_events.amelie_schedule(cluster, pivot=0, batch_size=8, rng=rng, stats=stats)
    else:
        schedule = timed_events.asynchronous_schedule(cluster, server=0, rng=rng, stats=stats)
    start = time.process_time()
    for _ in range(steps):
        next(schedule)
    return stats["events"] / (time.process_time() - start)


def main() -> None:
    reference = reference_rate()
    print(f"1. schedules, events per CPU second (reference heap push/pop + numpy add: {reference:,.0f})")
    for name, steps in (("fragile_sgd", 5000), ("amelie_sgd", 5000), ("async_sgd", 200_000)):
        for distribution in ("fixed", "exponential"):
            rate = schedule_rate(name, distribution, steps)
            verdict = "met" if rate >= TARGET else "MISSED"
            print(f"   {name:<12} {distribution:<12} {rate:>12,.0f}  ({rate / reference:.2f}x the reference; "
                  f"target {TARGET:,}: {verdict})")
    print("2. run_timed on the zero chain (T_c = 6, p = 0.25), n = 8, to eps = 1/2")
    oracle = oracles.ZeroChainOracle(instances.sampling_instance(8, T_c=6, p=0.25))
    cluster = instances.named_cluster("power", 8, alpha=1.0, rho=0.1, topology="ring")
    for name in ("fragile_sgd", "amelie_sgd", "async_sgd"):
        start = time.process_time()
        result = run_timed(name, oracle, cluster, step_size=0.1, iterations=20000, tol=0.5, batch_size=8)
        cpu = time.process_time() - start
        events = result.counters["events"]
        print(f"   {name:<12} {events:>7} events, {result.iterations:>5} steps in {cpu:.3f} s "
              f"({events / cpu:,.0f} events/s with the numpy steps)")
    print("3. time_lower_bound on a ring, h_i = i")
    for n in (500, 1000, 2000):
        ring = instances.named_cluster("power", n, rho=0.1, topology="ring")
        start = time.process_time()
        time_lower_bound(ring, L=1, Delta=1, sigma=1, epsilon=0.01)
        print(f"   n = {n:>5}: {time.process_time() - start:.3f} s (shortest paths included)")


if __name__ == "__main__":
    main()
