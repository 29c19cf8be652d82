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
    """(oracle or None, local functions f). An object with ``sample`` and ``f`` is an oracle; anything
    else is taken as the local functions themselves, queried exactly.

    Parameters
    ----------
    problem : Oracle or LocalFunctions
        An oracle (``oracles``), or local functions (``instances.protocol.LocalFunctions``).

    Raises
    ------
    TypeError
        If ``problem`` is neither: no ``sample`` and ``f``, and one of ``n``, ``dim``, ``x0``, ``grad``,
        ``full_grad`` missing (the message names it).
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
              **hyper: object) -> list[Result]:
    """Run every configuration of the grid step_sizes x (hyper grids) x seeds; one Result each, in that
    order (seed varies fastest).

    A hyper-parameter given as a list/tuple/1-D array is a grid axis; a scalar is fixed. Batchable values
    (step sizes, seeds, momentum; DeTAG's eta, start, gossip, beta) run side by side as one (n, k, d) state;
    structural ones (R, H, form) run as one batch per value. Configuration j samples from
    ``numpy.random.default_rng(seed_j)``, so its bits do not depend on the rest of the batch
    (``algorithms.engine``: when they are the same, and why).

    The stopping test skips the evaluations that the problem's ``smoothness`` proves cannot succeed
    (the smoothness certificate, ``algorithms.certificate``; T_eps is exact either way).

    Parameters
    ----------
    name : str or type
        A registered algorithm or alias (``algorithms.algorithm_names()``; case-insensitive), or a StepRule
        subclass (registered or not).
    problem : Oracle or LocalFunctions
        An oracle (``oracles``; stochastic gradients) or local functions (queried exactly), see `as_oracle`.
    W : instances.GossipLike, optional
        The gossip value: a `GossipMatrix` (``instances.gossip_matrix``) or a ``GossipSchedule`` (W_t in
        iteration t), used as it is; a matrix or graph is turned into a `GossipMatrix` once, by
        ``instances.as_gossip`` (`prepared_gossip`). Algorithms that gossip require it, rules that average
        exactly (centralized SGD, local SGD) ignore it.
    step_sizes : float or sequence of float
        One step size or a non-empty 1-D grid, each > 0.
    iterations : int
        The iteration cap, in 0..10^12.
    seeds : sequence of int, default (0,)
        Non-negative seeds; configuration j samples from ``numpy.random.default_rng(seeds_j)``.
    batch : int, default 1
        Samples per stochastic gradient, >= 1.
    tol : float, optional
        The target eps of the stopping test (> 0); None runs every configuration to ``iterations``.
    check_every : int, default 1
        Iterations between stopping tests, >= 1.
    record_every : int, optional
        History spacing, >= 1 (default: about 1000 entries).
    record_progress : bool, default False
        Also record the zero-chain progress of the models.
    stop : {"both", "average"}
        "both" runs each configuration until x_hat and every worker's model are eps-stationary (``t_eps``
        and ``t_eps_local``), "average" until x_hat is.
    radius : float, optional
        The divergence radius around x0 (> 0; default: the instance's,
        ``instances.protocol.instance_radius``).
    exact_check : bool, default False
        Evaluate at every check, for a problem whose stated smoothness is not a true bound.
    backend : {"sparse", "dense"}
        Gossip products by scipy's CSR kernel (bit-identical alone and in a batch) or by BLAS
        (``algorithms.mixing``).
    callback : callable, optional
        ``callback(t, state, ctx)``, called after the start (t = 0) and after every iteration t (for audits
        and tests; one call per structural group).
    observer : algorithms.engine.Observer, optional
        Told each engine run (``begin``, once per structural group) and each step (``observe``: what it
        queried and communicated, and the state after it); it may raise to stop the run.
    **hyper
        The algorithm's hyper-parameters (its ``structural`` and ``batchable`` class attributes), each a
        value or a grid.

    Returns
    -------
    list of Result
        One per configuration, step sizes outermost, then the hyper grids in the order given, seeds
        innermost.

    Raises
    ------
    ValueError
        If ``name`` is not registered, a step size, ``tol`` or ``radius`` is not positive, ``iterations``,
        ``batch``, ``check_every``, ``record_every`` or a seed is out of range, ``stop`` or ``backend`` is
        not one of the choices, ``seeds`` or a grid is empty, a hyper-parameter is unknown to the algorithm,
        or the problem's ``n`` / ``x0`` are malformed.
    TypeError
        If ``problem`` is neither an oracle nor local functions, or ``name`` is not a string.

    References
    ----------
    docs/theory.md (A3) (T_eps at x_hat) and §2 (the class A_B the step rules belong to).

    Examples
    --------
    Two step sizes x two seeds, four results, seed innermost (exact gradients here, so seeds agree):

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

    results: list[Result | None] = [None] * len(configs)
    # checked once, never given to the rule
    channel = communication_channel(cls.communication, W, int(f.n), directed_rounds=cls.directed_rounds)
    for indices in groups.values():
        first = configs[indices[0]][1]
        rule = cls(f, channel, {k: first.get(k, default) for k, default in cls.structural.items()},
                   iterations=iterations)
        resolved = [rule.resolve({k: configs[i][1].get(k, default) for k, default in cls.batchable.items()})
                    for i in indices]
        steps, seeds_here = [configs[i][0] for i in indices], [configs[i][2] for i in indices]
        runtime = Runtime(problem=f, oracle=oracle, channel=channel, step_sizes=steps,
                        hyper=batch_hyper(rule.structural_values, resolved, int(f.dim)), batch=batch,
                        seeds=seeds_here, backend=backend, knows=cls.knows)
        settings = LoopSettings(iterations=iterations, tol=tol, check_every=check_every,
                                record_every=record_every, record_progress=record_progress, stop=stop,
                                radius=radius, callback=callback, observer=observer,
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
    results").

    The entry is the algorithm's ``catalog_entry``. The parameters: L = the problem's ``smoothness``,
    Delta = its ``Delta``, varsigma and varsigma0 = its ``varsigma`` and ``varsigma0`` (each where the
    problem states it), sigma = 0 for exact gradients and the oracle's ``sigma`` otherwise, n = the
    workers, B = ``batch``, epsilon = ``tol`` (the engine's test ||grad f(x_hat)|| <= tol is the catalog's
    grad_norm convention), lam = W's ``lam`` (0 for exact averaging), D = the diameter of W's support graph
    (computed only for the entries that use it), omega and delta = the compressor's constants of a
    compressed rule (``compression``; unknown when a batch mixed compressors). Whatever is not stated is
    listed in ``Prediction.unknown``, not invented.

    Parameters
    ----------
    name : str or type
        Registry name of the algorithm, or its StepRule subclass.
    oracle : Oracle or None
        The oracle (None: the local functions queried exactly).
    f : LocalFunctions
        The problem.
    channel : Channel
        The checked communication (``step_rule.communication_channel``).
    batch : int
        B.
    tol : float or None
        eps.
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
    """W as the algorithm ``name`` consumes it, converted once at the top of `run_batch` and `tune`: a
    `Gossip` value is used as it is (a ``GossipSchedule``'s fit to the rule is checked by
    ``step_rule.communication_channel``); a matrix or graph becomes a `GossipMatrix` through
    ``instances.as_gossip`` (symmetric for the rules that gossip, push for SGP), so that no structural
    group, tuning group or rule checks or decomposes W again. Rules that read a graph ("graph") keep W as
    given (they read its support), rules that average exactly ignore it.

    Parameters
    ----------
    name : str or type
        A registered algorithm or alias, or a StepRule subclass.
    W : instances.GossipLike, optional
        The communication value, matrix or graph.
    n : int
        The problem's number of workers.

    Returns
    -------
    instances.GossipLike or None
        A `Gossip` value for the rules that gossip or push; W unchanged otherwise. A fixed non-symmetric W
        for a rule declaring ``directed_rounds`` (D-PSGD) comes back as its constant schedule
        (``step_rule.directed_matrix``).

    Raises
    ------
    ValueError
        As ``instances.as_gossip`` (W None for a rule that gossips, wrong size, not a gossip matrix).
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
    r"""One configuration of algorithm ``name`` on ``problem`` (an oracle, or local functions queried
    exactly) with gossip matrix W; returns its Result (:math:`T_\varepsilon` of the average model and of the
    workers' own models, status and message).

    ``run`` is `run_batch` with k = 1.

    Parameters
    ----------
    name : str or type
        A registered algorithm or alias (``algorithms.algorithm_names()``), or a StepRule subclass.
    problem : Oracle or LocalFunctions
        An oracle, or local functions queried exactly (`as_oracle`).
    W : instances.GossipLike, optional
        The gossip value (a `GossipMatrix` or a ``GossipSchedule``), or a matrix or graph
        ``instances.as_gossip`` converts once; required by the algorithms that gossip (as in `run_batch`).
    step_size : float
        One step size, > 0 (`run_batch` takes grids).
    iterations : int
        The iteration cap, in 0..10^12.
    batch : int, default 1
        Samples per stochastic gradient, >= 1.
    seed : int, default 0
        Seed of the configuration's ``numpy.random.default_rng``, >= 0.
    tol : float, optional
        The target eps (> 0); None runs to ``iterations``.
    check_every : int, default 1
        Iterations between stopping tests.
    record_progress : bool, default False
        Also record the zero-chain progress.
    **options
        Hyper-parameters, one value each (e.g. ``form="atc"``, ``momentum=0.9``, DeTAG's ``R=``, ``eta=``,
        ``gossip=``, ``start=``, ``beta=``), and engine options (``record_every``, ``stop``, ``radius``,
        ``exact_check``, ``backend``, ``callback``, ``observer``) as in `run_batch`.

    Returns
    -------
    Result
        T_eps of the average model and of the workers' own models, status ("converged",
        "max_iterations" or "diverged"), message and history.

    Raises
    ------
    ValueError
        If ``step_size`` or a hyper-parameter is a grid (use `run_batch`), or for any bad value
        `run_batch` refuses.
    TypeError
        As `run_batch`.

    References
    ----------
    docs/theory.md (A3) (T_eps).

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
