"""`tune`: the best T_eps over a step-size grid (and, for DeTAG, over eta, R and the gossip start), as the
paper tuned its baselines (docs/theory.md §9), with step sizes held to the admissible range (errata E19)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from decbounds.algorithms.api import _grid, as_oracle, prepared_gossip, run_batch
from decbounds.algorithms.registry import rule_class
from decbounds.algorithms.result import Grid, Result
from decbounds.instances.gossip import GossipLike
from decbounds.instances.protocol import LocalFunctions
from decbounds.oracles.base import Oracle

if TYPE_CHECKING:
    from decbounds.algorithms.engine import Context, Observer
    from decbounds.algorithms.step_rule import State, StepRule

__all__ = ["REFERENCE_RULE", "default_step_grid", "detag_grid", "local_t_eps_score", "t_eps_score", "tune"]

#: The rule whose declared default search `detag_grid` returns: DeTAG, the paper's optimal rule.
REFERENCE_RULE = "detag"


def default_step_grid(smoothness: float, count: int = 8) -> list[float]:
    """1/L, 1/(2L), ..., 1/(2^(count-1) L): the admissible geometric grid.

    Parameters
    ----------
    smoothness : float
    count : int
    """
    return [1.0 / (smoothness * 2.0**j) for j in range(count)]


def detag_grid(problem: LocalFunctions, W: GossipLike, iterations: int) -> dict[str, Sequence[object]]:
    """The default search of `REFERENCE_RULE` (DeTAG: eta in {formula, 0, 0.2, 0.4}, both starts, R in {1, 2,
    3} with Cor. 6's R and its halves and quarters; §9, errata E20).

    Parameters
    ----------
    problem : LocalFunctions
    W : instances.GossipLike
    iterations : int
        T of Cor. 6's R.
    """
    return dict(rule_class(REFERENCE_RULE).default_search(problem, W, iterations))


def t_eps_score(result: Result) -> float:
    """The default tuning score: T_eps at x-bar, infinite when the run never reached eps.

    Parameters
    ----------
    result : Result
    """
    return math.inf if result.t_eps is None else float(result.t_eps)


def local_t_eps_score(result: Result) -> float:
    """``Result.t_eps_local`` as a tuning score; infinite if unreached.

    Parameters
    ----------
    result : Result
    """
    value = getattr(result, "t_eps_local", None)
    return math.inf if value is None else float(value)


def tune(name: str | type[StepRule], problem: Oracle | LocalFunctions, W: GossipLike | None = None,
         grid: float | Sequence[float] | np.ndarray | None = None, *, tol: float | None,
         iterations: int, seeds: Sequence[int] | np.ndarray = (0,), batch: int = 1, admissible: bool = True,
         groups: Sequence[Mapping[str, object]] | None = None, prune: bool = False,
         score: Callable[[Result], float] = t_eps_score,
         callback: Callable[[int, State, Context], None] | None = None, record_every: int | None = None,
         stop: str = "both", incumbent: float | None = None, observer: Observer | None = None,
         race: bool = False, **hyper: object) -> Result:
    """The configuration of least median ``score`` (T_eps by default) over ``grid`` (step sizes) x hyper grids
    x seeds: the winner's run on its first seed, with the whole grid as ``result.grid`` (docs/theory.md §9;
    admissible steps, errata E19; medians, errata E21; ties to the configuration run first). Without a winner:
    the first run, ``grid.winner`` None and a message saying so.

    Parameters
    ----------
    name : str or type
    problem : Oracle or LocalFunctions
    W : instances.GossipLike, optional
    grid : sequence of float, optional
        Step sizes; default ``default_step_grid(problem.smoothness)``.
    tol : float or None
        The target eps; None runs to ``iterations`` (pass a ``score`` that does not count iterations).
    iterations : int
    seeds : sequence of int, default (0,)
    batch : int, default 1
    admissible : bool, default True
        Drop steps above 1/smoothness (listed in ``grid.excluded_steps``).
    groups : sequence of mapping, optional
        Configuration groups run in turn, each the step grid x its hyper values x seeds.
    prune : bool, default False
        Branch and bound: each group runs only up to the best median score so far (the same winner over an
        odd number of seeds; over an even number a group can lose a median it would win, errata E77).
    score : callable, default `t_eps_score`
        A run's score, less is better.
    callback, record_every, stop
        Passed to `algorithms.run_batch`.
    incumbent : float, optional
        A score known to be reachable: only configurations that beat it can win.
    observer : algorithms.Observer, optional
    race : bool, default False
        Branch and bound in time (the default score only): the configurations of a group run side by side
        (single-key groups of batchable values as one batch), and the batch stops once its least median
        T_eps is settled, complete over the seeds and out of every other configuration's reach: the whole
        grid's winner and its runs, at about the cost of the winner's; the others end as "max_iterations"
        where the batch stopped (``grid.limits``).
    **hyper
        Hyper-parameters; a list is a grid axis (unset axes of `StepRule.default_search` default to it).

    Examples
    --------
    >>> from decbounds import algorithms, instances
    >>> f = instances.heterogeneous_quadratic(4, 3, 1.0, 5)
    >>> W = instances.gossip_matrix(instances.topology("ring", 4))
    >>> result = algorithms.tune("dsgt", f, W, tol=1e-5, iterations=3000, seeds=[0, 1, 2])
    >>> result.step_size, result.t_eps, result.grid.score, len(result.grid.runs)
    (0.125, 643, 643.0, 24)
    """
    cls = rule_class(name)
    _, f = as_oracle(problem)
    smoothness = getattr(f, "smoothness", None)
    if grid is None:
        if smoothness is None:
            raise ValueError("grid is required: the problem states no smoothness to build a grid from")
        grid = default_step_grid(float(smoothness))
    steps = [float(s) for s in np.atleast_1d(np.asarray(grid, dtype=float))]
    excluded: list[float] = []
    if admissible:
        if smoothness is None:
            raise ValueError("admissible=True needs problem.smoothness (local L); pass admissible=False")
        limit = 1.0 / float(smoothness) * (1.0 + 1e-12)
        excluded = [s for s in steps if s > limit]
        steps = [s for s in steps if s <= limit]
        if not steps:
            limit_text = f"{1.0 / float(smoothness):.6g}"
            raise ValueError(f"grid has no admissible step size <= 1/smoothness = {limit_text}; pass "
                             "admissible=False to tune outside that range")
    group_list = [dict(group) for group in groups] if groups is not None else [{}]
    if not group_list:
        raise ValueError("groups must hold at least one configuration group")
    W = prepared_gossip(name, W, int(f.n))
    given = set(hyper).union(*group_list)
    if not set(cls.searched) <= given:  # the rule's own search for what the caller left unset
        for key, values in cls.default_search(f, W, iterations).items():
            if key not in given:
                hyper[key] = values
    seed_list = list(np.atleast_1d(np.asarray(seeds)).tolist())
    per_config = len(seed_list)
    if race and score is not t_eps_score:
        raise ValueError("race=True settles the median T_eps: it takes the default score only")
    runs: list[Result] = []
    limits: list[int] = []
    best: float | None = None if incumbent is None else float(incumbent)  # least median score so far
    winner: int | None = None
    winner_group: int | None = None
    for groups_here, call_hyper in _calls(cls, group_list, hyper, race):
        axes = _grid(cls, call_hyper)
        racing = race and all(len(axes[key]) == 1 for key in cls.structural if key in axes)  # one batch
        cap = iterations
        if (prune or race) and best is not None and not racing:
            cap = min(iterations, math.floor(best))
        blocks = len(steps) * math.prod(len(values) for values in axes.values())
        ranks = _group_major(blocks, len(steps), len(groups_here))
        settle = _Race(per_config, ranks, best, iterations) if racing else None
        batch_runs = run_batch(name, problem, W, step_sizes=steps, seeds=seed_list, iterations=cap,
                               batch=batch, tol=tol, callback=callback, observer=observer,
                               record_every=record_every, stop=stop, settle=settle,
                               **cast("dict[str, Any]", call_hyper))  # run_batch checks
        ordered = [batch_runs[block * per_config + j] for block in np.argsort(ranks, kind="stable")
                   for j in range(per_config)]
        size = len(ordered) // len(groups_here)
        for position, group_index in enumerate(groups_here):
            group_runs = ordered[position * size : (position + 1) * size]
            for start in range(0, len(group_runs), per_config):
                median = float(np.median([score(run) for run in group_runs[start : start + per_config]]))
                if math.isfinite(median) and (best is None or median < best):
                    best, winner, winner_group = median, len(runs) + start, group_index
            runs += group_runs
            limits += [cap if settle is None else settle.stop] * len(group_runs)
    found = Grid(score=None if winner is None else best, runs=tuple(runs),
                 limits=tuple(limits), seeds=tuple(seed_list), excluded_steps=tuple(excluded), winner=winner,
                 winner_group=winner_group)
    if winner is not None:
        return replace(runs[winner], grid=found)
    configurations = len(runs) // per_config
    beaten = "" if incumbent is None else f" below the incumbent {incumbent:g}"
    seed_text = f"{per_config} seed{'s' if per_config != 1 else ''}"
    tol_text = "None" if tol is None else f"{tol:g}"
    message = (f"none of the {configurations} configuration{'s' if configurations != 1 else ''} reached a "
               f"finite median score{beaten} over {seed_text} (tol={tol_text}, iterations={iterations}); "
               f"the first configuration, seed {runs[0].seed}: {runs[0].message}")
    return replace(runs[0], message=message, grid=found)


def _calls(cls: type[StepRule], groups: list[dict[str, object]], hyper: dict[str, object],
           race: bool) -> list[tuple[list[int], dict[str, object]]]:
    """The `run_batch` calls of a tuning, as (the groups each runs, its hyper-parameters): one per group in
    turn; racing, groups that each set one batchable hyper-parameter to a plain value merge into one call
    with that hyper-parameter as the first grid axis (side by side in one batch)."""
    keys = {tuple(group) for group in groups}
    if race and len(groups) > 1 and len(keys) == 1 and len(key := keys.pop()) == 1:
        name = key[0]
        values = [group[name] for group in groups]
        if name in cls.batchable and name not in hyper and not any(
                isinstance(value, (list, tuple, np.ndarray)) for value in values):
            return [(list(range(len(groups))), {name: values, **hyper})]
    return [([index], {**hyper, **group}) for index, group in enumerate(groups)]


def _group_major(blocks: int, steps: int, groups: int) -> np.ndarray:
    """Each configuration's position in the order the groups would run in turn, for a call whose
    configurations come step size x group x the other axes (`run_batch`'s order, the merged groups' axis
    first)."""
    rest = blocks // (steps * groups)
    step, remainder = np.divmod(np.arange(blocks), groups * rest)
    group, other = np.divmod(remainder, rest)
    return np.asarray((group * steps + step) * rest + other)


class _Race:
    """`run_batch`'s ``settle`` for ``tune(race=True)``: branch and bound in time over blocks of
    ``per_config`` seeds (a configuration each), ranked for ties (``ranks``; the ``incumbent`` of earlier
    calls ranks first).

    After iteration t a run's T_eps is known, infinite (it stopped without one) or at least t + 1. A block is
    settled when its median no longer depends on the unknown ones. The batch may stop after iteration s once
    the best settled block is complete and every unsettled block, its unknown runs at s, has a median above
    the best (or equal and ranked after it): nothing that finishes at s or later can win.
    """

    def __init__(self, per_config: int, ranks: np.ndarray, incumbent: float | None, iterations: int) -> None:
        self.per_config, self.ranks, self.incumbent = per_config, ranks, incumbent
        self.iterations = self.stop = iterations

    def __call__(self, t: int, t_eps: np.ndarray, closed: np.ndarray) -> int:
        values = np.where(t_eps >= 0, t_eps.astype(float), np.where(closed, math.inf, math.nan))
        best, rank, complete = self.incumbent, -1, True
        pending = []
        for b, row in enumerate(values.reshape(-1, self.per_config).tolist()):
            known = sorted(v for v in row if v == v)  # NaN: not known yet
            unknown = len(row) - len(known)
            low = _median_with(known, unknown, t + 1.0)
            if unknown and low != _median_with(known, unknown, math.inf):
                pending.append((known, unknown, int(self.ranks[b])))
            elif math.isfinite(low) and (best is None or (low, self.ranks[b]) < (best, rank)):
                best, rank, complete = low, int(self.ranks[b]), unknown == 0
        stop = self.iterations
        if best is not None and complete:
            stop = max([t + 1, *(self._out_of_reach(known, unknown, block_rank, best, rank, t)
                                 for known, unknown, block_rank in pending)])
        self.stop = min(stop, self.iterations)
        return self.stop

    def _out_of_reach(self, known: list[float], unknown: int, rank: int, best: float, best_rank: int,
                      t: int) -> int:
        """The least s > t at which the block's median, its unknown runs at s, cannot beat the best."""
        def loses(s: int) -> bool:
            median = _median_with(known, unknown, float(s))
            return median > best or (median == best and rank > best_rank)

        low, high = t + 1, self.iterations + 1
        if not loses(high):
            return self.iterations
        while low < high:  # the median grows with s: bisect for the first s that loses
            middle = (low + high) // 2
            low, high = (low, middle) if loses(middle) else (middle + 1, high)
        return low


def _median_with(known: list[float], unknown: int, value: float) -> float:
    """The median of the sorted ``known`` values with ``unknown`` more equal to ``value`` (numpy's median of
    the same numbers)."""
    merged = sorted([*known, *[value] * unknown]) if unknown else known
    middle = len(merged) // 2
    return merged[middle] if len(merged) % 2 else (merged[middle - 1] + merged[middle]) / 2.0
