"""`run` and `run_batch`: the public entry points onto the engine (ARCHITECTURE.md "algorithms/")."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from algorithms.engine import GOSSIP_BACKENDS, Context, LoopSettings, MixingOperator, as_oracle, execute
from algorithms.result import Result
from algorithms.rules import ALIASES, RULES, StepRule

# hyper-parameters whose value is itself a list (never a grid axis)
_LIST_VALUED = frozenset({"factors"})


def algorithm_names() -> tuple[str, ...]:
    """The registered algorithms, in registry order."""
    return tuple(RULES)


def rule_class(name: str) -> type[StepRule]:
    """The step rule registered under ``name`` (or an alias such as "fedavg"); ValueError otherwise."""
    if not isinstance(name, str):
        raise TypeError(f"algorithm name must be a string; got {type(name).__name__}")
    key = ALIASES.get(name.lower(), name.lower())
    if key not in RULES:
        raise ValueError(f"unknown algorithm {name!r}; known: {', '.join(RULES)}")
    return RULES[key]


def _positive_int(value: Any, name: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or int(value) != value or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {name}={value!r}")
    return int(value)


def _step_sizes(values: Any) -> list[float]:
    values = np.atleast_1d(np.asarray(values, dtype=float))
    if values.ndim != 1 or values.size == 0:
        raise ValueError(f"step_size must be a positive number or a non-empty 1-D grid; got {values!r}")
    for value in values:
        if not (math.isfinite(value) and value > 0.0):
            raise ValueError(f"step_size must be finite and > 0; got step_size={value!r}")
    return [float(v) for v in values]


def _check_problem(f: Any) -> None:
    n, d = f.n, f.dim
    if int(n) != n or n < 1:
        raise ValueError(f"problem.n must be a positive integer; got {n!r}")
    x0 = np.asarray(f.x0, dtype=float)
    if x0.shape != (int(d),):
        raise ValueError(f"problem.x0 shape mismatch: expected ({d},) for dim={d}; got {x0.shape}")


def run_batch(name: str, problem: Any, W: Any = None, *, step_sizes: Any, iterations: int,
              seeds: Sequence[int] = (0,), batch: int = 1, tol: float | None = None, check_every: int = 1,
              record_every: int | None = None, record_progress: bool = False, diverge_factor: float = 1e8,
              backend: str = "sparse", exact_check: bool = False,
              callback: Callable[[int, Any, Context], None] | None = None, **hyper: Any) -> list[Result]:
    """Run every configuration of the grid step_sizes x (hyper grids) x seeds; one Result each, in that
    order (seed varies fastest).

    A hyper-parameter given as a list/tuple/1-D array is a grid axis; a scalar is fixed. Batchable values
    (step sizes, seeds, momentum; DeTAG's eta, start, gossip, beta) run side by side as one (n, k, d) state;
    structural ones (R, H, form) run as one batch per value. Configuration j samples from
    ``numpy.random.default_rng(seed_j)``, so its bits do not depend on the rest of the batch (engine.py).

    ``callback(t, state, ctx)`` is called after the start (t = 0) and after every iteration t (for audits
    and tests; one call per structural group). ``exact_check=True`` evaluates ||grad f(x_hat)|| at every
    check instead of skipping the evaluations that the problem's ``smoothness`` proves cannot succeed (the
    T_eps is the same either way).
    """
    cls = rule_class(name)
    oracle, f = as_oracle(problem)
    _check_problem(f)
    alphas = _step_sizes(step_sizes)
    iterations = _positive_int(iterations, "iterations", minimum=0)
    batch = _positive_int(batch, "batch")
    check_every = _positive_int(check_every, "check_every")
    if record_every is not None:
        record_every = _positive_int(record_every, "record_every")
    if tol is not None and not (math.isfinite(float(tol)) and float(tol) > 0.0):
        raise ValueError(f"tol must be a positive number or None; got tol={tol!r}")
    if backend not in GOSSIP_BACKENDS:
        raise ValueError(f"backend must be one of {GOSSIP_BACKENDS}; got backend={backend!r}")
    if not diverge_factor > 1.0:
        raise ValueError(f"diverge_factor must be > 1; got diverge_factor={diverge_factor!r}")
    seed_list = [_positive_int(s, "seed", minimum=0) for s in np.atleast_1d(np.asarray(seeds)).tolist()]
    if not seed_list:
        raise ValueError("seeds must hold at least one seed")

    known = {**cls.structural, **cls.batchable}
    for key in hyper:
        if key not in known:
            raise ValueError(f"unknown hyper-parameter {key!r} for {cls.name}; "
                             f"known: {', '.join(known) or 'none'}")
    axes: dict[str, list[Any]] = {}
    for key, value in hyper.items():
        if key not in _LIST_VALUED and isinstance(value, (list, tuple, np.ndarray)):
            values = list(np.asarray(value).tolist()) if isinstance(value, np.ndarray) else list(value)
            if not values:
                raise ValueError(f"hyper-parameter grid {key!r} is empty")
            axes[key] = values
        else:
            axes[key] = [value]

    # every configuration: (step size, hyper values, seed), seed fastest
    keys = list(axes)
    configs = [
        (alpha, dict(zip(keys, combo, strict=True)), seed)
        for alpha in alphas
        for combo in itertools.product(*(axes[k] for k in keys))
        for seed in seed_list
    ]
    groups: dict[tuple[Any, ...], list[int]] = {}
    for index, (_alpha, values, _seed) in enumerate(configs):
        signature = tuple((k, _freeze(values.get(k, default))) for k, default in cls.structural.items())
        groups.setdefault(signature, []).append(index)

    lipschitz = None if exact_check else getattr(f, "smoothness", None)
    settings = LoopSettings(iterations=iterations, tol=None if tol is None else float(tol),
                            check_every=check_every, record_every=record_every,
                            record_progress=record_progress, diverge_factor=float(diverge_factor),
                            lipschitz=None if lipschitz is None else float(lipschitz), callback=callback)
    results: list[Result | None] = [None] * len(configs)
    for indices in groups.values():
        first = configs[indices[0]][1]
        structural = {k: first.get(k, default) for k, default in cls.structural.items()}
        rule = cls(f, W, structural, iterations=iterations, backend=backend)
        hypers = []
        for index in indices:
            values = configs[index][1]
            batchable = {k: values.get(k, default) for k, default in cls.batchable.items()}
            hypers.append(rule.resolve(batchable))
        gossip_op = None if rule.matrix is None or rule.communication != "gossip" else \
            MixingOperator(rule.matrix, backend=backend, name="W")
        ctx = Context(problem=f, oracle=oracle, W=gossip_op, step_size=[configs[i][0] for i in indices],
                      hyper={}, batch=batch, seeds=[configs[i][2] for i in indices], backend=backend)
        rule.bind(ctx, hypers)
        recorded = [{**rule.structural_values, **h} for h in hypers]
        group_results = execute(rule, ctx, settings, algorithm=cls.name,
                                seeds=[configs[i][2] for i in indices],
                                step_sizes=[configs[i][0] for i in indices], hypers=recorded)
        for index, result in zip(indices, group_results, strict=True):
            results[index] = result
    return [r for r in results if r is not None]


def _freeze(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return ("list", id(value))
    return value


def run(name: str, problem: Any, W: Any = None, *, step_size: float, iterations: int, batch: int = 1,
        seed: int = 0, tol: float | None = None, check_every: int = 1, record_progress: bool = False,
        **options: Any) -> Result:
    """One configuration of algorithm ``name`` on ``problem`` (an oracle, or local functions queried
    exactly) with gossip matrix W; returns its Result (THEORY.md §1: T_eps of the average model).

    Hyper-parameters go in ``options`` (e.g. ``form="atc"``, ``momentum=0.9``, DeTAG's ``R=``, ``eta=``,
    ``gossip=``, ``start=``, ``beta=``); engine options (``record_every``, ``diverge_factor``, ``backend``,
    ``exact_check``) too. ``run`` is ``run_batch`` with k = 1.
    """
    if np.ndim(step_size) != 0:
        raise ValueError(f"step_size must be one number for run (use run_batch for grids); got {step_size!r}")
    for key, value in options.items():
        if key not in _LIST_VALUED and isinstance(value, (list, tuple, np.ndarray)):
            raise ValueError(f"{key} must be one value for run (use run_batch for grids); got {value!r}")
    (result,) = run_batch(name, problem, W, step_sizes=[step_size], seeds=[seed], iterations=iterations,
                          batch=batch, tol=tol, check_every=check_every, record_progress=record_progress,
                          **options)
    return result
