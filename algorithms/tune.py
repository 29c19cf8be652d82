"""`tune`: the best T_eps over a step-size grid (and, for DeTAG, over eta, R and the gossip start), as the
paper tuned its baselines (docs/theory.md §9), with step sizes held to the admissible range (errata E19)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from algorithms.api import run_batch
from algorithms.registry import rule_class
from algorithms.result import Result

__all__ = ["default_step_grid", "detag_grid", "local_t_eps_score", "t_eps_score", "tune"]


@dataclass
class TuneResult:
    """The winner of a tuning grid and every run behind it.

    ``t_eps`` is the median over seeds of the winner's score, by default its T_eps (a run that never
    reached eps counts as infinite; errata E21 asks for medians); None when no configuration reached eps
    on most seeds. ``excluded_steps`` lists grid steps dropped as inadmissible (> 1/smoothness).
    ``results`` holds every run in the order run, ``limits`` the iteration cap each ran under (below
    ``iterations`` where branch and bound pruned it), ``winner`` the winning configuration's runs, one per
    seed, and ``winner_group`` the index of the configuration group it came from.
    """

    algorithm: str
    step_size: float | None
    hyper: dict[str, Any]
    t_eps: float | None
    results: list[Result] = field(default_factory=list)
    excluded_steps: list[float] = field(default_factory=list)
    limits: list[int] = field(default_factory=list)
    winner: list[Result] = field(default_factory=list)
    winner_group: int | None = None

    def to_record(self) -> dict[str, Any]:
        return {
            "algorithm": self.algorithm,
            "step_size": self.step_size,
            "hyper": {k: v for k, v in self.hyper.items() if k != "factors"},
            "t_eps": self.t_eps,
            "excluded_steps": self.excluded_steps,
            "runs": len(self.results),
        }


def default_step_grid(smoothness: float, count: int = 8) -> list[float]:
    """1/L, 1/(2L), ..., 1/(2^(count-1) L): the admissible geometric grid."""
    return [1.0 / (smoothness * 2.0**j) for j in range(count)]


def detag_grid(problem: Any, W: Any, iterations: int) -> dict[str, list[Any]]:
    """DeTAG's default search (§9 tuned eta in {0, 0.1, 0.2, 0.4} and R in {1, 2, 3}; errata E20 asks for R
    down to small fractions of 1/sqrt(1 - lam)): eta in {formula, 0, 0.2, 0.4}, both starts, and R in
    {1, 2, 3} with Cor. 6's R and its halves and quarters."""
    from algorithms.rules import default_phase_length
    from algorithms.step_rule import symmetric_gossip

    _, lam = symmetric_gossip(W, int(problem.n))
    R_cor6 = default_phase_length(problem, lam, iterations)
    R_values = sorted({1, 2, 3, R_cor6, max(1, math.ceil(R_cor6 / 2)), max(1, math.ceil(R_cor6 / 4))})
    return {"eta": [None, 0.0, 0.2, 0.4], "start": ["paper", "plain"], "R": R_values}


def t_eps_score(result: Result) -> float:
    """The default tuning score: T_eps at x-bar, infinite when the run never reached eps."""
    return math.inf if result.t_eps is None else float(result.t_eps)


def local_t_eps_score(result: Result) -> float:
    """T_eps of the workers' own models (``Result.t_eps_local``) as a tuning score; infinite if unreached."""
    value = getattr(result, "t_eps_local", None)
    return math.inf if value is None else float(value)


def tune(name: str, problem: Any, W: Any = None, grid: Any = None, *, tol: float | None, iterations: int,
         seeds: Any = (0,), batch: int = 1, admissible: bool = True,
         groups: Sequence[Mapping[str, Any]] | None = None, prune: bool = False,
         score: Callable[[Result], float] = t_eps_score,
         callback: Callable[[int, Any, Any], None] | None = None, record_every: int | None = None,
         stop: str = "both", incumbent: float | None = None, **hyper: Any) -> TuneResult:
    """Least median ``score`` (T_eps by default) over ``grid`` (step sizes) x hyper grids x seeds.

    ``grid`` defaults to ``default_step_grid(problem.smoothness)``. With ``admissible=True`` (default) steps
    above 1/smoothness (the local L the instance states, docs/errata.md E19) are dropped and listed in
    ``excluded_steps``; a grid with none left is a ValueError. For DeTAG, hyper grids set neither in
    ``hyper`` nor in a group default to ``detag_grid``. Ties go to the configuration run first (the larger
    step, listed first in the default grid, then grid order).

    ``groups`` (optional): configuration groups run one after another, each one ``run_batch`` over the
    step grid x its own hyper values (merged over ``hyper``) x seeds; for grids that are not a product
    (DeTAG's (eta, R) pairs) and for an order of search. With ``prune=True`` each group runs only up to the
    best median score found so far (branch and bound: a configuration that has not reached eps by then
    cannot win, so the winner and its score are those of the unpruned search); ``prune`` needs a score that
    counts iterations (`t_eps_score`, `local_t_eps_score`). ``limits`` holds the iteration cap each result
    ran under. ``incumbent``: a score known to be reachable (e.g. by one configuration run before); only
    configurations that beat it can win, and with ``prune`` every group runs at most that long.
    ``callback``, ``record_every`` and ``stop`` go to ``run_batch`` (``stop="average"`` ends a run at its
    x-bar T_eps: enough when the score is `t_eps_score`, and faster).
    """
    cls = rule_class(name)
    f = problem.f if hasattr(problem, "sample") and hasattr(problem, "f") else problem
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
    if cls.name == "detag":
        given = set(hyper).union(*group_list)
        if not {"eta", "start", "R"} <= given:
            for key, values in detag_grid(f, W, iterations).items():
                if key not in given:
                    hyper[key] = values
    seed_list = list(np.atleast_1d(np.asarray(seeds)).tolist())
    per_config = len(seed_list)
    results: list[Result] = []
    limits: list[int] = []
    best: tuple[float, int] | None = None if incumbent is None else (float(incumbent), -1)
    winner: list[Result] = []
    winner_group: int | None = None
    for group_index, group in enumerate(group_list):
        cap = iterations
        if prune and best is not None:
            cap = min(iterations, math.floor(best[0]))
        batch_results = run_batch(name, problem, W, step_sizes=steps, seeds=seed_list, iterations=cap,
                                  batch=batch, tol=tol, callback=callback, record_every=record_every,
                                  stop=stop, **{**hyper, **group})
        for start in range(0, len(batch_results), per_config):
            configuration = batch_results[start : start + per_config]
            median = float(np.median([score(result) for result in configuration]))
            if math.isfinite(median) and (best is None or median < best[0]):
                best = (median, len(results) + start)
                winner = configuration
                winner_group = group_index
        results += batch_results
        limits += [cap] * len(batch_results)
    if not winner:
        return TuneResult(cls.name, None, {}, None, results, excluded, limits=limits)
    return TuneResult(cls.name, winner[0].step_size, dict(winner[0].hyper), best[0], results, excluded,
                      limits=limits, winner=winner, winner_group=winner_group)
