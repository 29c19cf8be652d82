"""`run` and `run_batch`: the public entry points onto the engine."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np
from decbounds.algorithms.engine import (
    STOP_RULES,
    Context,
    LoopSettings,
    Observer,
    Runtime,
    batch_hyper,
    execute,
)
from decbounds.algorithms.mixing import GOSSIP_BACKENDS
from decbounds.algorithms.registry import rule_class
from decbounds.algorithms.result import Result
from decbounds.algorithms.step_rule import (
    Channel,
    State,
    StepRule,
    communication_channel,
    directed_matrix,
    gossip_for,
)
from decbounds.bounds.catalog import get as get_rate
from decbounds.bounds.prediction import Prediction, predict_at
from decbounds.bounds.validation import (
    collect_errors,
    require_array,
    require_choice,
    require_count,
    require_positive,
)
from decbounds.instances.gossip import Gossip, GossipLike, as_gossip
from decbounds.instances.protocol import LocalFunctions
from decbounds.oracles.base import Oracle

__all__ = ["MAX_ITERATIONS", "as_oracle", "prepared_gossip", "run", "run_batch", "run_prediction"]

#: The largest iteration cap a run accepts (10^12 iterations take days even at a microsecond each).
MAX_ITERATIONS = 10**12

# hyper-parameters whose value is itself a list (never a grid axis)
_LIST_VALUED = frozenset({"factors"})


def as_oracle(problem: Oracle | LocalFunctions) -> tuple[Oracle | None, LocalFunctions]:
    """(oracle or None, local functions f): an object with ``sample`` and ``f`` is an oracle, anything else
    the local functions, queried exactly (TypeError naming a missing attribute).

    Parameters
    ----------
    problem : Oracle or LocalFunctions
    """
    if hasattr(problem, "sample") and hasattr(problem, "f"):
        return problem, problem.f  # type: ignore[return-value]
    for attribute in ("n", "dim", "x0", "grad", "full_grad"):
        if not hasattr(problem, attribute):
            raise TypeError(f"problem must be an oracle (with .sample and .f) or local functions with n, "
                            f"dim, x0, grad and full_grad; {type(problem).__name__} has no attribute "
                            f"{attribute!r}")
    return None, problem


def _step_sizes(values: Any) -> list[float]:
    grid = values.tolist() if isinstance(values, np.ndarray) else values
    grid = list(grid) if isinstance(grid, (list, tuple)) else [grid]
    if not grid or any(isinstance(value, (list, tuple)) for value in grid):
        raise ValueError(f"step_size must be a positive number or a non-empty 1-D grid; got {values!r}")
    return [require_positive("step_size", value) for value in grid]


def _check_problem(f: LocalFunctions) -> None:
    # named refusals before the engine allocates anything (dim=0 used to reach numpy's "zero-size array
    # to reduction operation maximum" inside the engine)
    _, d = collect_errors(lambda: require_count("problem.n", f.n, minimum=1),
                          lambda: require_count("problem.dim", f.dim, minimum=1))
    x0 = require_array("problem.x0", f.x0)
    if x0.shape != (d,):
        raise ValueError(f"problem.x0 shape mismatch: expected ({d},) for dim={d}; got {x0.shape}")


def _grid(cls: type[StepRule], hyper: dict[str, Any]) -> dict[str, list[Any]]:
    """Each hyper-parameter as the list of its values (a list/tuple/1-D array is a grid axis)."""
    known = {**cls.structural, **cls.batchable}
    axes: dict[str, list[Any]] = {}
    for key, value in hyper.items():
        if key not in known:
            raise ValueError(f"unknown hyper-parameter {key!r} for {cls.name}; "
                             f"known: {', '.join(known) or 'none'}")
        if key not in _LIST_VALUED and isinstance(value, (list, tuple, np.ndarray)):
            values = list(np.asarray(value).tolist()) if isinstance(value, np.ndarray) else list(value)
            if not values:
                raise ValueError(f"hyper-parameter grid {key!r} is empty")
            axes[key] = values
        else:
            axes[key] = [value]
    return axes


def run_batch(name: str | type[StepRule], problem: Oracle | LocalFunctions, W: GossipLike | None = None, *,
              step_sizes: float | Sequence[float] | np.ndarray,
              iterations: int,
              seeds: Sequence[int] = (0,), batch: int = 1, tol: float | None = None, check_every: int = 1,
              record_every: int | None = None, record_progress: bool = False, stop: str = "both",
              radius: float | None = None, exact_check: bool = False, backend: str = "sparse",
              callback: Callable[[int, State, Context], None] | None = None, observer: Observer | None = None,
              settle: Callable[[int, np.ndarray, np.ndarray], int] | None = None,
              **hyper: object) -> list[Result]:
    """Run every configuration of the grid step_sizes x (hyper grids) x seeds; one Result each, in that order
    (seed innermost).

    A list, tuple or 1-D array hyper-parameter is a grid axis. Batchable values run side by side as one
    (n, k, d) state, structural ones (R, H, form) one batch per value; configuration j samples from
    ``default_rng(seed_j)``, so its bits do not depend on the batch. T_eps (docs/theory.md (A3)) is exact; the
    smoothness certificate skips evaluations that cannot succeed (docs/architecture.md).

    Parameters
    ----------
    name : str or type
        A registered algorithm or alias (case-insensitive), or a StepRule subclass.
    problem : Oracle or LocalFunctions
        An oracle, or local functions queried exactly (`as_oracle`).
    W : instances.GossipLike, optional
        A `GossipMatrix` or ``GossipSchedule``, or a matrix or graph converted once (`prepared_gossip`).
    step_sizes : float or sequence of float
        Each > 0.
    iterations : int
        The cap, in 0..10^12.
    seeds : sequence of int, default (0,)
    batch : int, default 1
        B, samples per stochastic gradient.
    tol : float, optional
        The target eps; None runs to ``iterations``.
    check_every : int, default 1
    record_every : int, optional
        History spacing (default: about 1000 entries).
    record_progress : bool, default False
        Also record the zero-chain progress.
    stop : {"both", "average"}
        Stop when x_hat and every worker's model are eps-stationary, or x_hat alone.
    radius : float, optional
        The divergence radius around x0 (default ``instances.protocol.instance_radius``).
    exact_check : bool, default False
        Evaluate at every check (a stated smoothness that is not a true bound).
    backend : {"sparse", "dense"}
        CSR gossip products (bit-identical in any batch) or BLAS.
    callback : callable, optional
        ``callback(t, state, ctx)`` after the start (t = 0) and every iteration (a `CallbackObserver`).
    observer : algorithms.Observer, optional
        Told each engine run and each step; it may raise to stop the run.
    settle : callable, optional
        ``settle(t, t_eps, closed)`` -> the iteration after which the batch may stop, asked after the start
        and whenever a configuration reaches T_eps or stops (``algorithms.tune``'s race); one batch only
        (no structural grid axis).
    **hyper
        The algorithm's hyper-parameters, each a value or a grid.

    Examples
    --------
    >>> from decbounds import instances
    >>> f = instances.heterogeneous_quadratic(4, 3, 1.0, seed=0)
    >>> W = instances.gossip_matrix(instances.topology("ring", 4), "metropolis")
    >>> runs = run_batch("dpsgd", f, W, step_sizes=[0.1, 0.2], seeds=[0, 1], iterations=2000, tol=1e-3)
    >>> [(r.step_size, r.seed, r.t_eps) for r in runs]
    [(0.1, 0, 599), (0.1, 1, 599), (0.2, 0, 298), (0.2, 1, 298)]
    """
    cls = rule_class(name)
    oracle, f = as_oracle(problem)
    _check_problem(f)
    alphas = _step_sizes(step_sizes)
    iterations = require_count("iterations", iterations, 0, maximum=MAX_ITERATIONS,
                               what="a run that finishes: about a microsecond each at best")
    batch = require_count("batch", batch, 1)
    check_every = require_count("check_every", check_every, 1)
    if record_every is not None:
        record_every = require_count("record_every", record_every, 1)
    tol = None if tol is None else require_positive("tol", tol)
    radius = None if radius is None else require_positive("radius", radius)
    stop = require_choice("stop", stop, STOP_RULES)
    backend = require_choice("backend", backend, GOSSIP_BACKENDS)
    seed_list = [require_count("seed", s, 0) for s in np.atleast_1d(np.asarray(seeds)).tolist()]
    if not seed_list:
        raise ValueError("seeds must hold at least one seed")

    axes = _grid(cls, hyper)
    W = prepared_gossip(cls, W, int(f.n))
    keys = list(axes)
    configs = [(alpha, dict(zip(keys, combo, strict=True)), seed) for alpha in alphas
               for combo in itertools.product(*(axes[k] for k in keys)) for seed in seed_list]
    groups: dict[tuple[Any, ...], list[int]] = {}
    for index, (_alpha, values, _seed) in enumerate(configs):
        signature = tuple((k, _freeze(values.get(k, default))) for k, default in cls.structural.items())
        groups.setdefault(signature, []).append(index)

    if settle is not None and len(groups) > 1:
        raise ValueError(f"settle needs the configurations in one batch; got {len(groups)} (a structural "
                         f"hyper-parameter grid: {', '.join(cls.structural)})")
    results: list[Result | None] = [None] * len(configs)
    # checked once, never given to the rule
    channel = communication_channel(cls.communication, W, int(f.n), directed_rounds=cls.directed_rounds)
    for indices in groups.values():
        first = configs[indices[0]][1]
        rule = cls(f, channel, {k: first.get(k, default) for k, default in cls.structural.items()},
                   iterations=iterations)
        resolved = [rule.check_values({k: configs[i][1].get(k, default)
                                       for k, default in cls.batchable.items()}) for i in indices]
        steps, seeds_here = [configs[i][0] for i in indices], [configs[i][2] for i in indices]
        runtime = Runtime(problem=f, oracle=oracle, channel=channel, step_sizes=steps,
                        hyper=batch_hyper(rule.structural_values, resolved, int(f.dim)), batch=batch,
                        seeds=seeds_here, backend=backend, knows=cls.knows)
        settings = LoopSettings(iterations=iterations, tol=tol, check_every=check_every,
                                record_every=record_every, record_progress=record_progress, stop=stop,
                                radius=radius, callback=callback, observer=observer, settle=settle,
                                smoothness=None if exact_check else _smoothness(f))
        recorded = [{**rule.structural_values, **values} for values in resolved]
        group_results = execute(rule, runtime, settings, algorithm=cls.name or cls.__name__,
                                seeds=seeds_here,
                                step_sizes=steps, hypers=recorded)
        for index, result in zip(indices, group_results, strict=True):
            results[index] = result
    # a compressed rule's delta (or omega) is known when the whole batch used one compressor
    constants = getattr(rule, "compression_constants", None)
    compression = constants() if len(groups) == 1 and constants is not None else None
    bound = run_prediction(cls, oracle, f, channel, batch=batch, tol=tol, compression=compression)
    done = [r for r in results if r is not None]
    for result in done:
        result.bound = bound
    return done


def run_prediction(name: str | type[StepRule], oracle: Oracle | None, f: LocalFunctions, channel: Channel, *,
                   batch: int, tol: float | None, compression: dict[str, float] | None = None) -> Prediction:
    """The catalog prediction at a run's own parameters (``Result.bound``; docs/architecture.md, "Paired
    results"): L, Delta, varsigma, varsigma0 where the problem states them, sigma (0 for exact gradients), n,
    B, epsilon = tol, lam (0 for exact averaging), D, and a compressor's omega or delta; the rest is listed in
    ``Prediction.unknown``.

    Parameters
    ----------
    name : str or type
    oracle : Oracle or None
    f : LocalFunctions
    channel : Channel
    batch : int
    tol : float or None
    compression : dict, optional
        ``{"delta": ...}`` or ``{"omega": ...}`` of the compressor in use.
    """
    entry = rule_class(name).catalog_entry
    exact = oracle is None or bool(getattr(oracle, "exact", False))
    sigma = 0.0 if exact else getattr(oracle, "sigma", None)
    lam = 0.0 if channel.kind == "exact" else channel.lam
    parameters = {"Delta": getattr(f, "Delta", None), "L": getattr(f, "smoothness", None), "sigma": sigma,
                  "varsigma": getattr(f, "varsigma", None), "varsigma0": getattr(f, "varsigma0", None),
                  "n": int(f.n), "B": int(batch), "epsilon": tol, "lam": lam, "D": None, "omega": None,
                  "delta": None, **(compression or {})}
    if entry is not None and "D" in get_rate(entry).arguments:
        parameters["D"] = _diameter(channel)
    return predict_at(entry, parameters)


def _diameter(channel: Channel) -> int | None:
    """The diameter of W's support graph (None for a time-varying W or a disconnected support)."""
    import networkx as nx

    support = channel.support
    if support is None:
        return None
    G = nx.from_scipy_sparse_array(support)
    G.remove_edges_from(nx.selfloop_edges(G))
    return int(nx.diameter(G)) if G.number_of_nodes() == 1 or nx.is_connected(G) else None


def prepared_gossip(name: str | type[StepRule], W: GossipLike | None, n: int) -> GossipLike | None:
    """W as the rule ``name`` consumes it, converted once so that no group checks or decomposes it again: a
    `Gossip` value as it is, a matrix or graph through ``instances.as_gossip`` (push for SGP; a fixed
    non-symmetric W for a ``directed_rounds`` rule as its constant schedule); W unchanged for "graph" and
    "exact" rules.

    Parameters
    ----------
    name : str or type
    W : instances.GossipLike, optional
    n : int
    """
    rule = rule_class(name)
    communication = rule.communication
    if communication not in ("gossip", "push"):
        return W
    if isinstance(W, Gossip) and W.time_varying:
        return as_gossip(W, n, kind="push")  # the workers checked here, the rounds' kind for the rule later
    if communication == "gossip" and rule.directed_rounds:
        directed = directed_matrix(W)  # a fixed directed W (D-PSGD): its constant schedule, checked later
        if directed is not None:
            return directed
    return gossip_for(communication, W, n)


def _smoothness(f: LocalFunctions) -> float | None:
    """The stated smoothness L of f (None when the problem states none)."""
    value = getattr(f, "smoothness", None)
    return None if value is None else require_positive("problem.smoothness", float(value))


def _freeze(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return ("list", id(value))
    return value


def run(name: str | type[StepRule], problem: Oracle | LocalFunctions, W: GossipLike | None = None, *,
        step_size: float,
        iterations: int, batch: int = 1, seed: int = 0, tol: float | None = None, check_every: int = 1,
        record_progress: bool = False, **options: object) -> Result:
    """One configuration of algorithm ``name`` on ``problem`` with gossip value W: its Result (T_eps of the
    average model and of the workers' own models, status, history); `run_batch` with k = 1.

    Parameters
    ----------
    name : str or type
        A registered algorithm or alias, or a StepRule subclass.
    problem : Oracle or LocalFunctions
        An oracle, or local functions queried exactly.
    W : instances.GossipLike, optional
        Required by the algorithms that gossip.
    step_size : float
    iterations : int
    batch : int, default 1
    seed : int, default 0
    tol : float, optional
        The target eps; None runs to ``iterations``.
    check_every : int, default 1
    record_progress : bool, default False
    **options
        Hyper-parameters, one value each, and `run_batch`'s engine options.

    Examples
    --------
    >>> from decbounds import algorithms, instances
    >>> f = instances.heterogeneous_quadratic(4, 3, 1.0, seed=0)
    >>> W = instances.gossip_matrix(instances.topology("ring", 4), "metropolis")
    >>> result = algorithms.run("dsgt", f, W, step_size=0.2, iterations=2000, tol=1e-6)
    >>> result.status, result.t_eps, result.t_eps_local
    ('converged', 640, 640)
    """
    if np.ndim(step_size) != 0:
        raise ValueError(f"step_size must be one number for run (use run_batch for grids); got {step_size!r}")
    for key, value in options.items():
        if key not in _LIST_VALUED and key not in ("callback", "observer") \
                and isinstance(value, (list, tuple, np.ndarray)):
            raise ValueError(f"{key} must be one value for run (use run_batch for grids); got {value!r}")
    (result,) = run_batch(name, problem, W, step_sizes=[step_size], seeds=[seed], iterations=iterations,
                          batch=batch, tol=tol, check_every=check_every, record_progress=record_progress,
                          **cast("dict[str, Any]", options))  # run_batch checks each
    return result
