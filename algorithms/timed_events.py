"""The asynchronous methods' schedules in simulated seconds: an event heap, no data (docs/time.md).

Tyurin & Richtárik (NeurIPS 2024) Fragile SGD (Alg. 2-4) and Amelie SGD (Alg. 5-7), and asynchronous SGD
through a server. When a gradient is computed, which messages travel and when a step happens depend on the
times alone, never on the gradients' values (Fragile and Amelie step on counts); so each method's schedule
is computed here first, and `algorithms.timed` then runs the numpy updates it prescribes. Every generator
yields one record per step, lazily, and counts its events in ``stats["events"]``.

Model (docs/time.md): gradient times are drawn per gradient from ``cluster.draw_compute``; a tree message
i -> parent takes rho_{i->parent} and its sender waits for it (send-and-wait, Alg. 4 line 26, Alg. 7
line 21); a sender with nothing new to send stays idle; the trees are shortest-path trees to and from the
pivot (Cor. 1, Cor. 2), so a message from i reaches the pivot after tau_{i->j*} on idle links; broadcasts
and reductions use separate channels (the paper's footnote (b) bounds the sharing at a factor 2).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from typing import cast

import numpy as np
from decbounds.bounds.time_bounds import TimedCluster, shortest_path_times
from scipy.sparse import csgraph

__all__ = ["amelie_schedule", "asynchronous_schedule", "fragile_schedule", "shortest_path_trees"]

_BLOCK = 4096  # compute times drawn per refill


class _Clock:
    """Per-worker compute times, drawn in blocks from the cluster's distribution (seeded)."""

    def __init__(self, cluster: TimedCluster, rng: np.random.Generator) -> None:
        self.cluster, self.rng = cluster, rng
        self.fixed = getattr(cluster, "distribution", "fixed") == "fixed"
        self.h = [float(value) for value in np.asarray(cluster.compute_times)]
        self.draws: list[list[float]] = [[] for _ in self.h]

    def next(self, worker: int) -> float:
        if self.fixed:
            return self.h[worker]
        draws = self.draws[worker]
        if not draws:
            block = self.cluster.draw_compute(self.rng, _BLOCK)  # type: ignore[attr-defined]
            for i, column in enumerate(block.T.tolist()):
                self.draws[i].extend(reversed(column))
        return draws.pop()


def shortest_path_trees(cluster: TimedCluster, pivot: int) -> tuple[list[int], list[list[int]], np.ndarray]:
    """(next hop of i toward the pivot, children of i in the broadcast tree, tau) for shortest-path trees.

    Parameters
    ----------
    cluster : TimedCluster
        The cluster.
    pivot : int
        j*.

    Raises
    ------
    ValueError
        If some worker cannot reach the pivot or be reached from it.
    """
    rho = np.asarray(cluster.link_times, dtype=float)
    tau = shortest_path_times(rho)
    if not (np.all(np.isfinite(tau[:, pivot])) and np.all(np.isfinite(tau[pivot, :]))):
        raise ValueError(f"every worker must reach the pivot {pivot} and be reached from it (finite links)")
    out_graph = csgraph.csgraph_from_dense(rho, null_value=np.inf)
    in_graph = csgraph.csgraph_from_dense(rho.T.copy(), null_value=np.inf)
    _, from_pivot = csgraph.shortest_path(out_graph, directed=True, indices=pivot, return_predecessors=True)
    _, to_pivot = csgraph.shortest_path(in_graph, directed=True, indices=pivot, return_predecessors=True)
    n = rho.shape[0]
    up = [int(to_pivot[i]) if i != pivot else -1 for i in range(n)]
    children: list[list[int]] = [[] for _ in range(n)]
    for p in range(n):
        if p != pivot:
            children[int(from_pivot[p])].append(p)
    return up, children, tau


def _relay_and_restart(heap: list[tuple[float, int, int, int, int, object]], seq: int, t: float, i: int,
                       value: int, children: list[list[int]], rho: list[list[float]], epoch: list[int],
                       clock: _Clock) -> int:
    """Worker i, on receiving the point x_value: forwards it down its tree and restarts its gradient at
    it (a new epoch, so the gradient under way is discarded; Alg. 2 and 4)."""
    for p in children[i]:
        seq += 1
        heapq.heappush(heap, (t + rho[i][p], seq, 0, p, value, None))
    epoch[i] += 1
    seq += 1
    heapq.heappush(heap, (t + clock.next(i), seq, 1, i, epoch[i], None))
    return seq


def fragile_schedule(cluster: TimedCluster, *, pivot: int, batch_size: int, rng: np.random.Generator,
                     stats: dict[str, int]) -> Iterator[tuple[float, dict[int, int]]]:
    """Fragile SGD's steps (Alg. 2-4): yields (seconds of step k, {worker: gradients at x_k in g^k}).

    Every worker computes gradients at the newest point it holds and adds them to its accumulator for
    k_max; accumulators travel up the reduce tree (send-and-wait); Process 0 steps when S gradients of the
    current iteration arrived, and the new point travels down the broadcast tree, interrupting computations.

    Parameters
    ----------
    cluster : TimedCluster
        The cluster.
    pivot : int
        j*.
    batch_size : int
        S.
    rng : numpy.random.Generator
        Draws random compute times.
    stats : dict
        ``stats["events"]`` counts the events processed.
    """
    rho = np.asarray(cluster.link_times, dtype=float).tolist()
    up, children, _ = shortest_path_trees(cluster, pivot)
    n = len(up)
    clock = _Clock(cluster, rng)
    point = [-1] * n  # the iteration of the point each worker holds
    kmax = [-1] * n
    acc: list[dict[int, int]] = [{} for _ in range(n)]
    busy = [False] * n
    epoch = [0] * n
    heap: list[tuple[float, int, int, int, int, object]] = []
    seq = 0
    k0, received = 0, 0  # Process 0
    contributions: dict[int, int] = {}
    heapq.heappush(heap, (0.0, seq, 0, pivot, 0, None))  # x_0 reaches Process j* at time 0
    events = 0
    while heap:
        t, _, kind, i, value, payload = heapq.heappop(heap)
        events += 1
        if kind == 0:  # point x_value arrives at worker i
            if value <= point[i]:
                continue
            point[i] = value
            if value > kmax[i]:
                kmax[i], acc[i] = value, {}
            seq = _relay_and_restart(heap, seq, t, i, value, children, rho, epoch, clock)
            continue
        if kind == 1:  # a gradient finished on worker i
            if value != epoch[i]:
                continue  # interrupted by a newer point
            seq += 1
            heapq.heappush(heap, (t + clock.next(i), seq, 1, i, value, None))
            k, parts = point[i], {i: 1}
        else:  # kind 2: an accumulator from child `value` arrives at i
            busy[value] = False
            k, parts = cast("tuple[int, dict[int, int]]", payload)
            if acc[value]:
                seq = _send(heap, seq, t, value, up, rho, kmax, acc, busy)
        if k > kmax[i]:
            kmax[i], acc[i] = k, dict(parts)
        elif k == kmax[i]:
            bucket = acc[i]
            for worker, count in parts.items():
                bucket[worker] = bucket.get(worker, 0) + count
        else:
            continue
        if i != pivot:
            if not busy[i]:
                seq = _send(heap, seq, t, i, up, rho, kmax, acc, busy)
            continue
        # Process j* hands its accumulator to Process 0 at once (tau_{j*->j*} = 0)
        parts, acc[i] = acc[i], {}
        if kmax[i] != k0:
            continue
        for worker, count in parts.items():
            contributions[worker] = contributions.get(worker, 0) + count
            received += count
        if received >= batch_size:
            stats["events"] = stats.get("events", 0) + events
            events = 0
            yield t, contributions
            k0, received, contributions = k0 + 1, 0, {}
            seq += 1
            heapq.heappush(heap, (t, seq, 0, pivot, k0, None))
    raise RuntimeError("the event heap ran dry")  # unreachable: gradients keep coming


def _send(heap: list[tuple[float, int, int, int, int, object]], seq: int, t: float, i: int, up: list[int],
          rho: list[list[float]], kmax: list[int], acc: list[dict[int, int]], busy: list[bool]) -> int:
    """Worker i sends its accumulator for k_max to its parent and waits (Alg. 4 lines 25-26)."""
    parent = up[i]
    busy[i] = True
    seq += 1
    heapq.heappush(heap, (t + rho[i][parent], seq, 2, parent, i, (kmax[i], acc[i])))
    acc[i] = {}
    return seq


def amelie_schedule(cluster: TimedCluster, *, pivot: int, batch_size: int, rng: np.random.Generator,
                    stats: dict[str, int]) -> Iterator[tuple[float, list[int]]]:
    """Amelie SGD's steps (Alg. 5-7): yields (seconds of step k, s^k_i per worker, all at x_k).

    Each worker counts its gradients s_i at x_k; counters b_i = sum_children b + 1/s_i travel up the reduce
    tree (send-and-wait); when n / b_{j*} >= S / n, the all-reduce snapshots worker i's (g_i, s_i) when the
    request reaches it (tau_{j*->i}) and converges at the pivot after max_i (tau_{j*->i} + tau_{i->j*}).

    Parameters
    ----------
    cluster, pivot, rng, stats
        As `fragile_schedule`.
    batch_size : int
        S (Thm 8: max(ceil(sigma^2/eps), n)).
    """
    rho = np.asarray(cluster.link_times, dtype=float).tolist()
    up, children, tau = shortest_path_trees(cluster, pivot)
    n = len(up)
    round_trip = float(np.max(tau[pivot, :] + tau[:, pivot]))
    to_worker = tau[pivot, :].tolist()
    clock = _Clock(cluster, rng)
    inf = float("inf")
    point = [-1] * n
    counts = [0] * n
    frozen = [False] * n
    child_b: list[dict[int, float]] = [{} for _ in range(n)]
    busy = [False] * n
    dirty = [False] * n
    epoch = [0] * n
    threshold = n * n / batch_size  # n / b >= S / n  <=>  b <= n^2 / S
    heap: list[tuple[float, int, int, int, int, object]] = []
    seq, k0, reducing, events = 0, 0, False, 0
    heapq.heappush(heap, (0.0, seq, 0, pivot, 0, None))

    def counter(i: int) -> float:
        if counts[i] == 0 or len(child_b[i]) < len(children_up[i]):
            return inf
        return sum(child_b[i].values()) + 1.0 / counts[i]

    children_up: list[list[int]] = [[] for _ in range(n)]
    for i in range(n):
        if up[i] >= 0:
            children_up[up[i]].append(i)
    while heap:
        t, _, kind, i, value, payload = heapq.heappop(heap)
        events += 1
        if kind == 0:  # x_value arrives at worker i
            point[i], counts[i], frozen[i], child_b[i], dirty[i] = value, 0, False, {}, False
            seq = _relay_and_restart(heap, seq, t, i, value, children, rho, epoch, clock)
            continue
        if kind == 3:  # the all-reduce's request reaches worker i: its (g_i, s_i) is fixed
            frozen[i] = True
            epoch[i] += 1
            continue
        if kind == 4:  # the all-reduce converged at the pivot: step
            stats["events"] = stats.get("events", 0) + events
            events = 0
            yield t, list(counts)
            k0, reducing = k0 + 1, False
            seq += 1
            heapq.heappush(heap, (t, seq, 0, pivot, k0, None))
            continue
        if kind == 1:  # a gradient finished on worker i
            if value != epoch[i]:
                continue
            counts[i] += 1
            seq += 1
            heapq.heappush(heap, (t + clock.next(i), seq, 1, i, value, None))
        else:  # kind 2: the counter (k, b) of child `value` arrives at i
            busy[value] = False
            if dirty[value] and point[value] == k0 and not frozen[value]:
                seq = _send_counter(heap, seq, t, value, up, rho, busy, dirty, counter(value), k0)
            k, b = cast("tuple[int, float]", payload)
            if k != point[i]:
                continue  # a counter of an older iteration: ignored (Alg. 7 line 25)
            child_b[i][value] = b
        if reducing or frozen[i] or point[i] != k0:
            continue
        if i == pivot:
            if counter(i) <= threshold:
                reducing = True
                for worker in range(n):
                    seq += 1
                    heapq.heappush(heap, (t + to_worker[worker], seq, 3, worker, k0, None))
                seq += 1
                heapq.heappush(heap, (t + round_trip, seq, 4, pivot, k0, None))
        elif busy[i]:
            dirty[i] = True
        else:
            seq = _send_counter(heap, seq, t, i, up, rho, busy, dirty, counter(i), k0)
    raise RuntimeError("the event heap ran dry")  # unreachable: gradients keep coming


def _send_counter(heap: list[tuple[float, int, int, int, int, object]], seq: int, t: float, i: int,
                  up: list[int], rho: list[list[float]], busy: list[bool], dirty: list[bool], b: float,
                  k: int) -> int:
    """Worker i sends b_i to its parent and waits (Alg. 7 lines 20-21)."""
    busy[i], dirty[i] = True, False
    seq += 1
    heapq.heappush(heap, (t + rho[i][up[i]], seq, 2, up[i], i, (k, b)))
    return seq


def asynchronous_schedule(cluster: TimedCluster, *, server: int, rng: np.random.Generator,
                          stats: dict[str, int]) -> Iterator[tuple[float, int, int]]:
    """Asynchronous SGD through a server: yields (seconds, worker i, version v) per step x_{t+1} = x_t -
    gamma g_i(x_v).

    The server sends x_0 to every worker; a worker computes one gradient at the model it holds and sends it
    to the server; the server steps at once and sends its new model back to that worker. Messages travel
    shortest paths (tau), several at a time per link, as in Protocol 1.

    Parameters
    ----------
    cluster, rng, stats
        As `fragile_schedule`.
    server : int
        The worker that holds the model.
    """
    tau = shortest_path_times(np.asarray(cluster.link_times, dtype=float))
    if not (np.all(np.isfinite(tau[:, server])) and np.all(np.isfinite(tau[server, :]))):
        raise ValueError(f"every worker must reach the server {server} and be reached from it")
    to_server, from_server = tau[:, server].tolist(), tau[server, :].tolist()
    clock = _Clock(cluster, rng)
    heap = [(from_server[i] + clock.next(i) + to_server[i], i, i, 0) for i in range(len(to_server))]
    heapq.heapify(heap)
    seq, version = len(heap), 0
    while True:
        t, _, i, v = heapq.heappop(heap)
        stats["events"] = stats.get("events", 0) + 1
        yield t, i, v
        version += 1
        seq += 1
        heapq.heappush(heap, (t + from_server[i] + clock.next(i) + to_server[i], seq, i, version))
