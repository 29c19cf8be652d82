"""Results in records, and tuning both outputs: what a figure record keeps of a `Result` (`outcome`), the
x-bar and worker-output tunings (`tune_both`, `tune_worker_output`) and the worker-output search that
reuses the x-bar runs it can (``reuse=True``; the same answer, fewer runs). (Part of
`paper_figures.sweep`, which re-exports every public name.)
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias, TypedDict, cast

import numpy as np
from decbounds.algorithms.tune import local_t_eps_score

from decbounds import algorithms

if TYPE_CHECKING:
    from decbounds.algorithms.result import Grid, Result, Status
    from decbounds.instances.gossip import GossipLike
    from decbounds.instances.protocol import LocalFunctions
    from decbounds.oracles.base import Oracle

#: What the tunings take as the problem (``algorithms.tune``'s): an oracle, or local functions (exact).
Problem: TypeAlias = "Oracle | LocalFunctions"
#: What they take as W: ``instances.GossipLike`` (a gossip value -- matrix or schedule -- or a matrix or
#: graph ``instances.as_gossip`` converts), or None.
Gossip: TypeAlias = "GossipLike | None"
#: The step sizes of the grid (``algorithms.tune``'s ``grid``; None: its default).
Steps: TypeAlias = "Sequence[float] | np.ndarray | None"

__all__ = [
    "Outcome",
    "WorkerOutput",
    "outcome",
    "tune_both",
    "tune_worker_output",
    "tuned_grid",
    "winner_index",
]

# ------------------------------------------------------------------------------------ results in records


class Outcome(TypedDict):
    """What a figure record keeps of one `algorithms.Result` (`outcome`)."""

    step_size: float
    hyper: dict[str, object]
    t_eps: int | None
    t_eps_local: int | None
    iterations: int
    status: Status
    message: str
    diverged: bool


class WorkerOutput(TypedDict):
    """The worker-output side of a tuned point (`tune_worker_output`)."""

    t_eps_local: int | None
    best_local: Outcome | None
    t_eps_local_of_best: int | None


def outcome(result: Result) -> Outcome:
    """What a figure record keeps of one `algorithms.Result`: step size, hyper-parameters (without per-round
    schedules), T_eps at x-bar and at the workers' own models (``t_eps_local``), iterations, ``status``,
    ``message`` and ``diverged``.

    Parameters
    ----------
    result : Result
        One run (or a tuned result: its winner's run).
    """
    hyper = {key: value for key, value in result.hyper.items() if key not in ("factors", "schedule")}
    return {"step_size": result.step_size, "hyper": hyper, "t_eps": result.t_eps,
            "t_eps_local": result.t_eps_local, "iterations": result.iterations, "status": result.status,
            "message": result.message, "diverged": result.diverged}


def tuned_grid(tuned: Result) -> Grid:
    """``tuned.grid``, the grid of an `algorithms.tune` result (ValueError for a single run's).

    Parameters
    ----------
    tuned : Result
        ``algorithms.tune``'s result.
    """
    if tuned.grid is None:
        raise ValueError("expected a result of algorithms.tune (with its grid); got a single run's")
    return tuned.grid


def winner_index(tuned: Result) -> int:
    """The position of a tuned result's winner among its ``grid.runs`` (ValueError if none reached eps).

    Parameters
    ----------
    tuned : Result
        ``algorithms.tune``'s result.
    """
    winner = tuned_grid(tuned).winner
    if winner is None:
        raise ValueError("the tuning found no configuration that reached eps")
    return winner


def tune_both(name: str, problem: Problem, W: Gossip, grid: Steps, *, reuse: bool = False, **options: object
              ) -> tuple[Result, WorkerOutput]:
    """`algorithms.tune` for T_eps at x-bar, then the worker output (`tune_worker_output`). With
    ``prune=True`` each run stops at its x-bar T_eps and the worker output is tuned again; a plain search runs
    until both outputs are eps-stationary.

    Parameters
    ----------
    name, problem, W, grid
        As ``algorithms.tune``.
    reuse : bool, default False
        Let the worker-output search reuse runs: only where a configuration has the same bits alone and in a
        batch (the zero chain).
    **options
        ``algorithms.tune``'s keywords and hyper-parameter grids.

    Examples
    --------
    >>> from decbounds import instances
    >>> f = instances.heterogeneous_quadratic(4, 3, 1.0, seed=0)
    >>> W = instances.gossip_matrix(instances.topology("ring", 4), "metropolis")
    >>> tuned, local = tune_both("dpsgd", f, W, [0.1, 0.2, 0.4], tol=1e-2, iterations=1000)
    >>> tuned.t_eps, winner_index(tuned), local["t_eps_local"]
    (91, 2, None)
    """
    stop = "average" if options.get("prune") else "both"
    passed: dict[str, Any] = dict(options)  # algorithms.tune checks them
    tuned = algorithms.tune(name, problem, W, grid, stop=stop, **passed)
    return tuned, tune_worker_output(tuned, name, problem, W, grid, reuse=reuse, **options)


def tune_worker_output(tuned: Result, name: str, problem: Problem, W: Gossip, grid: Steps, *,
                       reuse: bool = False,
                       **options: object) -> WorkerOutput:
    """The worker-output side of a tuned point: ``t_eps_local`` (the least T_eps at which every worker's own
    model is eps-stationary over the same grid; None if none), its configuration ``best_local``, and
    ``t_eps_local_of_best`` of the x-bar winner. The runs of `tuned` decide it when they can; otherwise the
    grid is tuned again on `local_t_eps_score`, by branch and bound from the x-bar winner's group (with
    ``reuse``, running only what it must: `_reusing_local_search`).

    Parameters
    ----------
    tuned : Result
        The x-bar tuning (with ``grid``; one seed).
    name, problem, W, grid, **options
        The arguments that tuning was run with.
    reuse : bool, default False
        Reuse runs that have the same bits (see `tune_both`).
    """
    cap = int(cast(int, options["iterations"]))  # checked by algorithms.tune, which made `tuned` with them
    finished = [result for result in tuned_grid(tuned).runs if result.t_eps_local is not None]
    best = min(finished, key=local_t_eps_score, default=None)
    bound = math.inf if best is None or best.t_eps_local is None else float(best.t_eps_local)  # finished
    # a run that stopped at iteration m (cap, branch and bound, or its x-bar T_eps) without a worker T_eps
    # has none <= m
    exact = all(result.t_eps_local is not None or result.diverged or result.iterations >= min(cap, bound)
                for result in tuned_grid(tuned).runs)
    own = tuned.t_eps_local if tuned_grid(tuned).winner is not None else None
    if not exact:
        search = _reusing_local_search if reuse and _reusable(name, options) else _tune_local
        best, alone = search(tuned, name, problem, W, grid, **options)
        own = None if alone is None else alone.t_eps_local
    return {"t_eps_local": None if best is None else best.t_eps_local,
            "best_local": None if best is None else outcome(best),
            "t_eps_local_of_best": own}


#: Keywords of `algorithms.tune` that are not hyper-parameters of the algorithm.
_TUNE_OPTIONS = frozenset({"tol", "iterations", "seeds", "batch", "admissible", "prune", "score", "callback",
                           "record_every", "stop", "incumbent", "groups"})


def _tune_local(tuned: Result, name: str, problem: Problem, W: Gossip, grid: Steps, **options: Any
                ) -> tuple[Any, Any]:
    """The run with the least worker-output T_eps over the grid of `tuned` (`algorithms.tune` with
    ``score=local_t_eps_score``, runs until both outputs are eps-stationary), or None; and the x-bar
    winner's own run to its worker T_eps (None without a winner).

    Branch and bound from a known value: the x-bar winner's configuration runs first on its own; its worker
    T_eps U caps every group (``incumbent=U + 1``), the winner's group first. Only a configuration with
    a worker T_eps <= U can win, so the answer is the grid's minimum.
    """
    groups = list(options.pop("groups", None) or [{}])
    settings = {key: value for key, value in options.items() if key in _TUNE_OPTIONS}
    hyper = {key: value for key, value in options.items() if key not in _TUNE_OPTIONS}
    first: Any = None
    if tuned_grid(tuned).winner is not None:
        winner, group = tuned, groups.pop(tuned_grid(tuned).winner_group or 0)
        groups.insert(0, group)
        one: dict[str, Any] = {key: winner.hyper[key] if isinstance(value, (list, tuple)) else value
                               for key, value in {**hyper, **group}.items()}
        single = {**settings, "prune": False}
        alone = algorithms.tune(name, problem, W, [winner.step_size], score=local_t_eps_score, stop="both",
                                **single, **one)
        first = alone if tuned_grid(alone).winner is not None else None
    incumbent = None if first is None else first.t_eps_local + 1
    local = algorithms.tune(name, problem, W, grid, score=local_t_eps_score, stop="both", groups=groups,
                            incumbent=incumbent, **settings, **hyper)
    return (local if tuned_grid(local).winner is not None else first), first


def _reusable(name: str, options: Mapping[str, Any]) -> bool:
    """Whether `_reusing_local_search` can stand for `_tune_local` with these options: no callback, record
    spacing or own score, and the rule's `searched` hyper-parameters given (no `StepRule.default_search`)."""
    if {"callback", "record_every", "score", "stop", "incumbent"} & set(options):
        return False
    given = set(options).union(*(options.get("groups") or [{}]))
    return set(algorithms.rule_class(name).searched) <= given


def _is_axis(key: str, value: Any) -> bool:
    """Whether `run_batch` reads a hyper-parameter as a grid axis (a list, tuple or array; not a list-valued
    parameter such as DeFacto's factors)."""
    from decbounds.algorithms.api import _LIST_VALUED

    return isinstance(value, (list, tuple, np.ndarray)) and key not in _LIST_VALUED


def _configurations(values: Mapping[str, Any]) -> tuple[list[str], list[list[Any]]]:
    """The axes of a `run_batch` call as it reads its hyper-parameters: (keys, values of each), a scalar
    being an axis of one value."""
    return list(values), [list(value) if _is_axis(key, value) else [value] for key, value in values.items()]


def _reusing_local_search(tuned: Result, name: str, problem: Problem, W: Gossip, grid: Steps, **options: Any
                          ) -> tuple[Any, Any]:
    """`_tune_local`'s answer, running only what it must. On a problem whose configurations do not depend on
    their batch, the x-bar winner's run to its worker T_eps stands for it; a run that ended with both T_eps is
    that run; one that reached its group's cap without a worker T_eps cannot win; the rest runs as the
    smallest sub-grid of its group that holds it."""
    settings = {key: value for key, value in options.items() if key in _TUNE_OPTIONS}
    hyper = {key: value for key, value in options.items() if key not in _TUNE_OPTIONS}
    groups = [dict(group) for group in (settings.pop("groups", None) or [{}])]
    iterations = int(settings["iterations"])
    prune = bool(settings.get("prune", False))
    seeds = list(np.atleast_1d(np.asarray(settings.get("seeds", (0,)))).tolist())
    per_config = len(seeds)
    run_options: dict[str, Any] = {key: settings[key] for key in ("tol", "batch") if key in settings}
    f = problem.f if hasattr(problem, "sample") and hasattr(problem, "f") else problem
    steps = [float(step) for step in np.atleast_1d(np.asarray(grid, dtype=float))]
    if settings.get("admissible", True):
        steps = [step for step in steps if step <= 1.0 / float(f.smoothness) * (1.0 + 1e-12)]

    # the x-bar runs of each configuration, by (group, configuration), in the x-bar tuning's order
    layouts = [_configurations({**hyper, **group}) for group in groups]
    sizes = [len(steps) * math.prod(len(axis) for axis in axes) for _, axes in layouts]
    if sum(sizes) * per_config != len(tuned_grid(tuned).runs):  # not the layout expected: search as before
        return _tune_local(tuned, name, problem, W, grid, **options)
    xbar: dict[tuple[int, int], list[Any]] = {}
    position = 0
    for group_index, size in enumerate(sizes):
        for config in range(size):
            xbar[(group_index, config)] = list(tuned_grid(tuned).runs[position : position + per_config])
            position += per_config

    first: Any = None
    known: dict[tuple[int, int], list[Any]] = {}
    order = list(range(len(groups)))
    winner = tuned_grid(tuned).winner
    if winner is not None:
        winner_group = tuned_grid(tuned).winner_group or 0
        offset = sum(sizes[:winner_group]) * per_config
        winner_config = (winner_group, (winner - offset) // per_config)
        order.remove(winner_group)
        order.insert(0, winner_group)
        own_runs = xbar[winner_config]
        if all(run.t_eps is not None and run.t_eps_local is not None and not run.diverged
               for run in own_runs):
            alone_runs = own_runs  # x-bar's stop was already the stop at both
        else:
            one: dict[str, Any] = {key: tuned.hyper[key] if isinstance(value, (list, tuple)) else value
                                   for key, value in {**hyper, **groups[winner_group]}.items()}
            alone_runs = algorithms.run_batch(name, problem, W, step_sizes=[tuned.step_size], seeds=seeds,
                                              iterations=iterations, stop="both", **run_options, **one)
        median = float(np.median([local_t_eps_score(run) for run in alone_runs]))
        if math.isfinite(median):
            first = alone_runs[0]
        known[winner_config] = alone_runs  # in a group whose cap it stopped before

    best: float | None = None if first is None else float(first.t_eps_local + 1)
    found: Any = None
    for group_index in order:
        cap = _group_cap(iterations, prune, best)
        keys, axes = layouts[group_index]
        combos = list(itertools.product(*(range(len(axis)) for axis in axes)))
        results: dict[int, list[Any] | None] = {}
        pending: list[int] = []
        for config in range(sizes[group_index]):
            runs = xbar[(group_index, config)]
            if (group_index, config) in known and (
                    max(run.iterations for run in known[(group_index, config)]) < cap or cap == iterations):
                results[config] = known[(group_index, config)]
            elif all(run.t_eps is not None and run.t_eps_local is not None and not run.diverged
                     and run.iterations < cap for run in runs):
                results[config] = runs
            elif all(run.t_eps_local is None and not run.diverged and run.iterations >= cap for run in runs):
                results[config] = None  # no worker T_eps within the cap: it cannot win
            else:
                pending.append(config)
        if pending:
            step_set = sorted({config // len(combos) for config in pending})
            value_sets = [sorted({combos[config % len(combos)][axis] for config in pending})
                          for axis in range(len(axes))]
            given = {**hyper, **groups[group_index]}
            values: dict[str, Any] = {key: [axes[axis][j] for j in value_sets[axis]]
                                      if _is_axis(key, given[key]) else given[key]
                                      for axis, key in enumerate(keys)}
            ran = algorithms.run_batch(name, problem, W, step_sizes=[steps[i] for i in step_set], seeds=seeds,
                                       iterations=cap, stop="both", **run_options, **values)
            index = 0
            for step_index in step_set:
                for combo in itertools.product(*value_sets):
                    config = step_index * len(combos) + combos.index(combo)
                    if config in pending:
                        results[config] = ran[index : index + per_config]
                    index += per_config
        for config in range(sizes[group_index]):
            measured = results[config]
            if measured is None:
                continue
            median = float(np.median([local_t_eps_score(run) for run in measured]))
            if math.isfinite(median) and (best is None or median < best):
                best, found = median, measured[0]
    return (found if found is not None else first), first


def _group_cap(iterations: int, prune: bool, best: float | None) -> int:
    """`algorithms.tune`'s cap of a group: ``iterations``, or with ``prune`` the best median score so far."""
    return min(iterations, math.floor(best)) if prune and best is not None else iterations
