"""Runs in simulated seconds on a cluster (docs/time.md): `run_timed` returns a `Result` with ``seconds`` at
each checkpoint and ``t_eps_seconds``. The asynchronous methods (Fragile SGD, Thm 4; Amelie SGD, Alg. 6;
asynchronous SGD) follow the event schedule of `algorithms.timed_events`; a synchronous rule runs through
`algorithms.run`, iteration t costing the slowest worker's B gradients plus, per round, the slowest link."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any, cast

import numpy as np
from decbounds.algorithms.api import as_oracle, run
from decbounds.algorithms.result import Result
from decbounds.algorithms.timed_events import amelie_schedule, asynchronous_schedule, fragile_schedule
from decbounds.bounds.time_bounds import TimedCluster, fragile_pivot, shortest_path_times, slowest_link
from decbounds.bounds.validation import require_count, require_positive
from decbounds.instances.gossip import GossipLike, as_gossip, gossip_matrix
from decbounds.instances.protocol import LocalFunctions
from decbounds.oracles.base import ExactOracle, Oracle

__all__ = ["ASYNCHRONOUS_METHODS", "default_gossip", "run_timed", "synchronous_seconds"]

#: The methods simulated event by event; any other name is a synchronous rule of ``algorithms.ALGORITHMS``.
ASYNCHRONOUS_METHODS = ("fragile_sgd", "amelie_sgd", "async_sgd")


def _times_rng(seed: int) -> np.random.Generator:
    """The compute-time stream of a run: separate from the oracle's ``default_rng(seed)``."""
    return np.random.default_rng([seed, 1])


def default_gossip(cluster: TimedCluster) -> GossipLike:
    """Metropolis weights on the links that exist both ways (the synchronous rules' default W).

    Parameters
    ----------
    cluster : TimedCluster
    """
    import networkx as nx

    rho = np.asarray(cluster.link_times, dtype=float)
    both = np.isfinite(rho) & np.isfinite(rho.T)
    graph = nx.Graph()
    graph.add_nodes_from(range(rho.shape[0]))
    graph.add_edges_from((int(i), int(j)) for i, j in zip(*np.nonzero(np.triu(both, 1)), strict=True))
    if not nx.is_connected(graph):
        raise ValueError("the cluster's two-way links must connect every worker for a synchronous gossip W")
    return gossip_matrix(graph)


def synchronous_seconds(cluster: TimedCluster, iterations: int, *, batch: int = 1, rounds: float = 1.0,
                        W: GossipLike | None = None, seed: int = 0) -> np.ndarray:
    """Cumulative seconds after 0..iterations synchronous iterations: iteration t costs max_i (worker i's B
    gradient times) + rounds * max rho over W's support (ValueError for a link the cluster lacks).

    Parameters
    ----------
    cluster : TimedCluster
    iterations : int
    batch : int, default 1
    rounds : float, default 1.0
        Communication rounds per iteration.
    W : instances.GossipLike, optional
    seed : int, default 0
        The compute-time stream (``default_rng([seed, 1])``).
    """
    iterations = require_count("iterations", iterations)
    batch = require_count("batch", batch, minimum=1)
    n = int(np.asarray(cluster.compute_times).size)
    edges = None if W is None else np.asarray(as_gossip(W, n).round_matrix(0).toarray()) != 0
    link = slowest_link(cluster.link_times, edges)
    if not math.isfinite(link):
        raise ValueError("W gossips over a pair of workers with no link (link_times = inf)")
    if getattr(cluster, "distribution", "fixed") == "fixed":
        compute = np.full(iterations, batch * float(np.max(cluster.compute_times)))
    else:
        draws = cluster.draw_compute(_times_rng(seed), (iterations, batch))  # type: ignore[attr-defined]
        compute = draws.sum(axis=1).max(axis=1)
    return np.concatenate([[0.0], np.cumsum(compute + rounds * link)])


def _result(name: str, status: str, message: str, checkpoints: list[int], norms: list[float],
            seconds: list[float], tol: float | None, seed: int, step_size: float, batch: int,
            hyper: dict[str, object], counters: dict[str, int], x: np.ndarray) -> Result:
    t_eps = t_eps_seconds = None
    if tol is not None and status == "converged":
        t_eps, t_eps_seconds = checkpoints[-1], seconds[-1]
    return Result(algorithm=name, status=status, message=message,  # type: ignore[arg-type]
                  t_eps=t_eps, t_eps_local=t_eps, iterations=checkpoints[-1], checkpoints=checkpoints,
                  grad_norms=norms, worst_worker_grad_norms=norms, consensus=[0.0] * len(norms),
                  counters=counters, seed=seed, step_size=step_size, batch=batch, hyper=hyper, tol=tol,
                  seconds=seconds, t_eps_seconds=t_eps_seconds, x_hat=x)


def _gradients(oracle: Oracle, x: np.ndarray, counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Per worker, the sum of counts[i] stochastic gradients of f_i at x: shape (n, d), one oracle call."""
    width = int(counts.max())
    X = np.broadcast_to(x, (counts.size, width, x.size)).copy()
    G = oracle.sample(X, rng)
    G[np.arange(width)[None, :] >= counts[:, None]] = 0.0
    return np.asarray(G.sum(axis=1))


def _asynchronous(name: str, oracle: Oracle, f: LocalFunctions, cluster: TimedCluster, *, step_size: float,
                  iterations: int, tol: float | None, seed: int, batch_size: int, pivot: int,
                  check_every: int) -> Result:
    """The data phase of the asynchronous methods: follow the schedule, step with numpy."""
    rng = np.random.default_rng(seed)
    n = int(np.asarray(cluster.compute_times).size)
    stats: dict[str, int] = {}
    x = np.array(f.x0, dtype=np.float64)
    norm = float(np.linalg.norm(f.full_grad(x)))
    checkpoints, norms, seconds = [0], [norm], [0.0]
    queries = 0
    status, message = "max_iterations", f"reached the cap of {iterations} steps"
    schedule: Iterator[tuple[float, object]]
    if name == "fragile_sgd":
        schedule = fragile_schedule(cluster, pivot=pivot, batch_size=batch_size, rng=_times_rng(seed),
                                    stats=stats)
    elif name == "amelie_sgd":
        schedule = amelie_schedule(cluster, pivot=pivot, batch_size=batch_size, rng=_times_rng(seed),
                                   stats=stats)
    else:
        steps = asynchronous_schedule(cluster, server=pivot, rng=_times_rng(seed), stats=stats)
        schedule = _async_steps(steps)
    history: dict[int, np.ndarray] = {0: x.copy()}  # asynchronous SGD: the versions workers still hold
    holds = dict.fromkeys(range(n), 0)
    if tol is not None and norm <= tol:
        status, message = "converged", "the start already meets tol"
    else:
        for k, (t, step) in enumerate(schedule, start=1):
            if name == "async_sgd":
                worker, version = cast("tuple[int, int]", step)
                counts = np.zeros(n, dtype=int)
                counts[worker] = 1
                x = x - step_size * _gradients(oracle, history[version], counts, rng)[worker]
                holds[worker] = k
                history[k] = x.copy()
                for stale in set(history) - set(holds.values()):
                    del history[stale]
            elif name == "fragile_sgd":
                counts = np.zeros(n, dtype=int)
                for worker, count in cast("dict[int, int]", step).items():
                    counts[worker] = count
                x = x - step_size / counts.sum() * _gradients(oracle, x, counts, rng).sum(axis=0)
            else:
                counts = np.asarray(step, dtype=int)
                x = x - step_size / n * (_gradients(oracle, x, counts, rng) / counts[:, None]).sum(axis=0)
            queries += int(counts.sum())
            if not np.all(np.isfinite(x)):
                status, message = "diverged", f"the iterate is not finite at step {k}"
                checkpoints.append(k)
                norms.append(math.inf)
                seconds.append(t)
                break
            if k % check_every == 0 or k == iterations:
                norm = float(np.linalg.norm(f.full_grad(x)))
                checkpoints.append(k)
                norms.append(norm)
                seconds.append(t)
                if tol is not None and norm <= tol:
                    status, message = "converged", f"||grad f(x)|| = {norm:.3g} <= tol at step {k}, {t:.6g} s"
                    break
            if k >= iterations:
                break
    counters = {"iterations": checkpoints[-1], "gradient_queries": queries, "events": stats.get("events", 0)}
    hyper: dict[str, object] = {"pivot": pivot, "batch_size": batch_size}
    return _result(name, status, message, checkpoints, norms, seconds, tol, seed, step_size, 1, hyper,
                   counters, x)


def _async_steps(schedule: Iterator[tuple[float, int, int]]) -> Iterator[tuple[float, tuple[int, int]]]:
    for t, worker, version in schedule:
        yield t, (worker, version)


def _default_pivot(name: str, cluster: TimedCluster, batch_size: int) -> int:
    """Cor. 1's pivot for Fragile SGD (s = S); the smallest round trip to the farthest worker otherwise."""
    if name == "fragile_sgd":
        return fragile_pivot(cluster, float(batch_size))
    tau = shortest_path_times(np.asarray(cluster.link_times, dtype=float))
    return int(np.argmin(np.max(tau + tau.T, axis=0)))


def run_timed(name: str, problem: Oracle | LocalFunctions, cluster: TimedCluster, *, step_size: float,
              iterations: int, tol: float | None = None, seed: int = 0, batch: int = 1,
              batch_size: int | None = None, pivot: int | None = None, W: GossipLike | None = None,
              check_every: int = 1, **options: object) -> Result:
    """One run of ``name`` on ``problem`` with the cluster's clock: a `Result` with simulated seconds.

    Parameters
    ----------
    name : str
        One of `ASYNCHRONOUS_METHODS` or a registered synchronous rule.
    problem : Oracle or LocalFunctions
        Its n must be the cluster's.
    cluster : TimedCluster
    step_size : float
        gamma (Thm 4 and 8: 1/(2L)).
    iterations : int
        Step cap (the server's steps for asynchronous SGD).
    tol : float, optional
    seed : int, default 0
        The oracle's ``default_rng(seed)``; compute times ``default_rng([seed, 1])``.
    batch : int, default 1
        B of a synchronous rule.
    batch_size : int, optional
        S of Fragile (Thm 4) and Amelie (Thm 8); default n.
    pivot : int, optional
        j*, the server of asynchronous SGD; default Cor. 1's pivot for Fragile.
    W : instances.GossipLike, optional
        A synchronous rule's W; default `default_gossip`.
    check_every : int, default 1
    **options
        A synchronous rule's other options.

    Examples
    --------
    >>> from decbounds import instances
    >>> cluster = instances.Cluster([1.0, 3.0])
    >>> f = instances.heterogeneous_quadratic(2, 3, 0.0, seed=0)
    >>> result = run_timed("fragile_sgd", f, cluster, step_size=0.2, iterations=50, batch_size=2)
    >>> result.seconds[:3]
    [0.0, 2.0, 4.0]
    """
    oracle, f = as_oracle(problem)
    n = int(np.asarray(cluster.compute_times).size)
    if f.n != n:
        raise ValueError(f"problem has n = {f.n} workers but the cluster has {n}")
    step_size = require_positive("step_size", step_size)
    iterations = require_count("iterations", iterations, minimum=1)
    seed = require_count("seed", seed)
    if name in ASYNCHRONOUS_METHODS:
        if options:
            raise TypeError(f"{name} takes no options {sorted(options)}")
        size = n if batch_size is None else require_count("batch_size", batch_size, minimum=1)
        j = (_default_pivot(name, cluster, size) if pivot is None
             else require_count("pivot", pivot, maximum=n - 1))
        return _asynchronous(name, oracle if oracle is not None else ExactOracle(f), f, cluster,
                             step_size=step_size, iterations=iterations, tol=tol, seed=seed, batch_size=size,
                             pivot=j, check_every=require_count("check_every", check_every, minimum=1))
    if batch_size is not None or pivot is not None:
        raise TypeError(f"batch_size and pivot belong to {ASYNCHRONOUS_METHODS}; {name} is synchronous")
    gossip = default_gossip(cluster) if W is None else W
    result = run(name, problem, gossip, step_size=step_size, iterations=iterations, batch=batch, seed=seed,
                 tol=tol, check_every=check_every, **cast("dict[str, Any]", options))
    rounds = result.counters.get("communication_rounds", 0) / max(result.iterations, 1)
    clock = synchronous_seconds(cluster, result.iterations, batch=batch, rounds=rounds, W=gossip, seed=seed)
    result.seconds = [float(clock[t]) for t in result.checkpoints]
    result.t_eps_seconds = None if result.t_eps is None else float(clock[result.t_eps])
    return result
