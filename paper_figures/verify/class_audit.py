"""The class audit (``decbounds verify``, item 1): the A_B budget, the capability, every array of the state
and the output zero-respecting on the zero chain."""

from __future__ import annotations

from typing import Any

import numpy as np
from decbounds.paper_figures.verify.spec import _one_line

from decbounds import algorithms, instances

__all__ = ["audit"]


def audit(name: str, *, n: int = 9, iterations: int = 1200, seed: int = 0) -> dict[str, Any]:
    """The class audit of algorithm ``name`` on Cor. 2's path instance (module docstring, item 1).

    Returns ``{"passed", "checks": [{"condition", "passed", "detail"}], "rule", ...}``; never raises for a
    misbehaving rule (a raising ``step`` is a failed check naming the iteration)."""
    problem = instances.communication_instance(n, T_c=4)
    W = instances.gossip_matrix(problem.graph(), "metropolis")
    rule = algorithms.rule_class(name)
    where = {"t": 0}

    def track(t: int, state: Any, ctx: Any) -> None:
        where["t"] = t

    checks: list[dict[str, Any]] = []
    out: dict[str, Any] = {"rule": name, "instance": f"communication_instance(n={n}, T_c=4), Metropolis path",
                           "step_size": 1.0 / problem.smoothness, "iterations": iterations, "seed": seed}
    try:
        result = algorithms.run(name, problem, W, step_size=1.0 / problem.smoothness, iterations=iterations,
                                seed=seed, tol=problem.epsilon, stop="both", record_progress=True,
                                callback=track)
    except algorithms.BudgetViolationError as exc:
        checks.append({"condition": "A_B budget (at most B queries and one round per iteration)",
                       "passed": False, "detail": f"{name}: {_one_line(exc)}"})
        return {**out, "passed": False, "checks": checks}
    except Exception as exc:  # the user's step raised: a verdict, not a traceback
        checks.append({"condition": "step runs", "passed": False,
                       "detail": f"{name} raised {type(exc).__name__} in step at iteration {where['t']}: "
                                 f"{_one_line(exc)}"})
        return {**out, "passed": False, "checks": checks}
    checks.append({"condition": "A_B budget (at most B queries and one round per iteration)", "passed": True,
                   "detail": f"{result.counters['gradient_queries']} queries and "
                             f"{result.counters['communication_rounds']} rounds per worker in "
                             f"{result.iterations} iterations"})
    checks.append({"condition": "iterates stay finite and within the instance's radius at the admissible "
                                "step 1/L", "passed": not result.diverged,
                   "detail": f"{name}: {result.message}" if result.diverged else "yes"})
    if not rule.gossips or rule.communication == "exact":
        checks.append({"condition": "zero-respecting on the graph (one hop per iteration)", "passed": True,
                       "detail": "not applicable: the rule declares communication that is not gossip on "
                                 "the graph (gossips=False or exact averaging), so it is outside the gossip "
                                 "class and the path bounds are a reference only"})
    else:
        holders = np.zeros(n, dtype=bool)
        for group in problem.groups:
            holders[np.asarray(group)] = True
        checks.append(_zero_respecting(name, result.progress, problem.graph(), holders))
    out.update(passed=all(check["passed"] for check in checks), checks=checks, status=result.status,
               t_eps=result.t_eps)
    return out


def _zero_respecting(name: str, progress: np.ndarray | None, graph: Any, holders: np.ndarray
                     ) -> dict[str, Any]:
    """First (iteration, worker) whose progress runs ahead of what it may know: the furthest chain coordinate
    of its closed neighbourhood one iteration earlier, plus one only where that neighbourhood holds a worker
    whose oracle can reveal one (``holders``: the end groups I0, I1; every other worker's local function is
    0, so its oracle returns 0; docs/theory.md §2, condition 2). The neighbour's reveal is allowed, not
    only the worker's own: an adapt-then-combine round (D^2, Exact Diffusion) relays a neighbour's fresh
    gradient in the same iteration, which still moves information one hop per iteration."""
    condition = "zero-respecting on the zero chain (one hop per iteration)"
    if progress is None or len(progress) < 2:
        return {"condition": condition, "passed": False, "detail": f"{name}: no progress was recorded"}
    n = progress.shape[1]
    reach = np.zeros_like(progress[:-1])
    reveals = np.zeros(n, dtype=progress.dtype)
    for i in range(n):
        closed = [i, *graph.neighbors(i)]
        reach[:, i] = progress[:-1, closed].max(axis=1)
        reveals[i] = int(holders[closed].any())
    ahead = progress[1:] > reach + reveals[None, :]
    if ahead.any():
        t, i = (int(v) for v in np.argwhere(ahead)[0])
        return {"condition": condition, "passed": False,
                "detail": f"{name}: after iteration {t + 1} worker {i} holds chain coordinate "
                          f"{int(progress[t + 1, i])}, but its closed neighbourhood held at most "
                          f"{int(reach[t, i])} after iteration {t}"
                          + ("" if reveals[i] else " and no oracle there reveals anything (f_i = 0 on it "
                                                   "and its neighbours)")
                          + " (information moved more than one hop per iteration)"}
    top = int(progress.max())
    detail = f"held over {len(progress) - 1} iterations; the chain progressed to coordinate {top}"
    if top < 2:
        detail += " (too little progress for the check to bite)"
    return {"condition": condition, "passed": True, "detail": detail}
