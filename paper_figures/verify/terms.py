"""The term sweeps: the points of the communication, broom, spectral-gap and sampling experiments and the
runner that measures the rule under test on them."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from decbounds.paper_figures import communication, sampling, spectral_gap
from decbounds.paper_figures.sweep import to_jsonable
from decbounds.paper_figures.verify.settings import COMMUNICATION_TERMS, Settings
from decbounds.paper_figures.verify.spec import _one_line

from decbounds import algorithms, instances, oracles

__all__ = ["measure", "sweep_points"]


def measure(point: dict[str, Any]) -> dict[str, Any]:
    """The sweep runner of every verify run: the figures' runners for the baselines, `_tune_rule` for the
    rule under test (point field ``rule_id`` set)."""
    term, name = point["term"], point["algorithm"]
    if term in COMMUNICATION_TERMS:  # the path (no "D") or the broom of diameter point["D"]
        if point.get("rule_id") is None:
            return communication.measure_point(point)
        D = None if point.get("D") is None else int(point["D"])
        problem = instances.communication_instance(int(point["n"]), D=D, T_c=int(point["chain_length"]))
        W = instances.gossip_matrix(problem.graph(), "metropolis")
        steps = [fraction / problem.smoothness for fraction in point["step_fractions"]]
        result = _tune_rule(name, problem, W, steps, tol=problem.epsilon, cap=int(point["cap"]),
                            seeds=[int(point["seed"])], hyper=point.get("hyper", {}))
        n = problem.n
        result.update(explicit_bound=int(problem.iteration_lower_bound), dist=int(problem.dist))
        varsigma0 = communication.cor2_varsigma0(n, problem.epsilon, len(problem.groups[0]))
        params = {"n": n, "lam": communication.gossip_lam(n, D), "D": n - 1 if D is None else D, "B": 1,
                  "sigma": 0.0, "Delta": problem.Delta, "L": problem.L, "epsilon": problem.epsilon,
                  "varsigma0": varsigma0, "varsigma": varsigma0}
        return {"result": result, "params": params}
    if term == "spectral_gap":
        if point.get("rule_id") is None:
            return spectral_gap.tuned_t_eps(point)
        problem, W, lam = spectral_gap.path_instance(int(point["n"]), int(point["T_c"]),
                                                     float(point["kappa"]))
        steps = [factor / problem.smoothness for factor in point["step_factors"]]
        result = _tune_rule(name, problem, W, steps, tol=problem.epsilon, cap=int(point["cap"]),
                            seeds=[int(point["seed"])], hyper=point.get("hyper", {}))
        result["hop_lower_bound"] = int(problem.iteration_lower_bound)
        params = {"n": problem.n, "lam": lam, "D": problem.n - 1, "Delta": problem.Delta, "L": problem.L,
                  "epsilon": problem.epsilon, "sigma": 0.0, "B": 1}
        return {"result": result, "params": params}
    if term == "sampling":
        if point.get("rule_id") is None:
            return sampling.measure_point(point)
        n, batch, p = int(point["n"]), int(point["batch"]), float(point["p"])
        problem = instances.sampling_instance(n, T_c=int(point["chain_length"]), p=p)
        W = instances.gossip_matrix(problem.graph(), "metropolis") if n > 1 else None
        seeds = [int(point["seed"]) + j for j in range(int(point["seeds"]))]
        result = _tune_rule(name, oracles.ZeroChainOracle(problem), W, [1.0 / problem.smoothness],
                            tol=problem.epsilon, cap=int(point["cap"]), seeds=seeds, batch=batch,
                            hyper=point.get("hyper", {}))
        params = {"n": n, "B": batch, "sigma": sampling.noise_level(p, problem.epsilon),
                  "Delta": problem.Delta, "L": problem.L, "epsilon": problem.epsilon, "lam": 0.0, "D": 1,
                  "varsigma0": 0.0, "p": p, "T_c": problem.T_c}
        return {"result": result, "params": params}
    raise ValueError(f"point['term'] must be one of {(*COMMUNICATION_TERMS, 'spectral_gap', 'sampling')}; "
                     f"got {term!r}")


def _tune_rule(name: str, problem: Any, W: Any, steps: Sequence[float], *, tol: float, cap: int,
               seeds: Sequence[int], batch: int = 1, hyper: Mapping[str, Any]) -> dict[str, Any]:
    """`algorithms.tune` of the rule under test over ``steps`` x its ``hyper`` grids (the least median T_eps
    over seeds), as a record's result; a rule that raises is a result with status "error" naming the
    iteration, so that the sweep goes on and the record is kept."""
    where: dict[str, int | None] = {"t": None}  # None until the callback after init: a failure in init

    def track(t: int, state: Any, ctx: Any) -> None:
        where["t"] = t

    try:
        tuned = algorithms.tune(name, problem, W, list(steps), tol=tol, iterations=cap, seeds=list(seeds),
                                batch=batch, callback=track, **dict(hyper))
    except Exception as exc:  # the user's rule: a verdict, not a traceback
        kind = "A_B budget violated" if isinstance(exc, algorithms.BudgetViolationError) else \
            f"raised {type(exc).__name__} " + ("in init" if where["t"] is None else
                                                f"in step at iteration {where['t']}")
        return {"t_eps": None, "t_eps_local": None, "status": "error", "capped": False, "cap": cap,
                "message": f"{name} {kind}: {_one_line(exc)}", "seeds": list(seeds), "t_eps_seeds": [],
                "step_size": None, "hyper": {}}
    per_seed = len(seeds)
    best = tuned.grid.winner_runs
    chosen = best or tuned.grid.runs[:per_seed]
    statuses = [result.status for result in chosen]
    local = [result.t_eps_local for result in chosen]
    local_float = [math.inf if t is None else float(t) for t in local]
    local_median = float(np.median(local_float)) if local_float else math.inf
    status = "converged" if best else ("diverged" if statuses and all(s == "diverged" for s in statuses)
                                       else "max_iterations")
    return to_jsonable({
        "t_eps": tuned.grid.score, "t_eps_local": local_median if math.isfinite(local_median) else None,
        "status": status, "capped": not best and status != "diverged", "cap": cap,
        "message": chosen[0].message if chosen else "", "seeds": list(seeds),
        "t_eps_seeds": [result.t_eps for result in chosen], "status_seeds": statuses,
        "step_size": tuned.step_size if best else None,
        "hyper": {k: v for k, v in tuned.hyper.items() if _plain(v)} if best else {},
        "grid": [{"step_size": r.step_size, "t_eps": r.t_eps, "status": r.status, "seed": r.seed}
                 for r in tuned.grid.runs],
    })


def _plain(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def sweep_points(name: str, rule_id: str, settings: Settings, *, seed: int, hyper: Mapping[str, Any],
                 baselines: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
    """Every run of the three experiments, by term: the rule's points carry ``rule_id`` (its source hash)
    and the hyper-parameter grids it is tuned over; the baselines' points are the figures' own."""
    series = [name, *[b for b in baselines if b != name]]
    levels: dict[str, list[dict[str, Any]]] = {"communication": [], "communication_broom": [],
                                               "spectral_gap": [], "sampling": []}
    broom = [(n, settings.broom_diameter) for n in settings.broom_sizes]
    for term, sizes in (("communication", [(n, None) for n in settings.comm_sizes]),
                        ("communication_broom", broom)):
        for n, D in sizes:
            for algorithm in series:
                point = {"term": term, "series": algorithm, "algorithm": algorithm, "n": n,
                         "chain_length": settings.comm_chain,
                         "cap": settings.comm_cap if D is None else settings.broom_cap,
                         "step_fractions": list(settings.step_fractions), "seed": seed,
                         "predict": ["hard_instance_communication", "lower_bound_gossip"] if D is None
                         else ["lower_bound_any"]}
                if D is not None:
                    point["D"] = D
                if algorithm == name:
                    point.update(rule_id=rule_id, hyper=dict(hyper))
                elif algorithm == "detag":
                    point["phases"] = list(settings.detag_phases or communication.detag_phases(n, D))
                levels[term].append(point)
    for kappa in settings.kappas:
        for algorithm in series:
            point = {"term": "spectral_gap", "algorithm": algorithm, "n": settings.gap_n,
                     "T_c": settings.gap_chain, "kappa": kappa, "cap": settings.gap_cap,
                     "step_factors": [1.0], "seed": seed,
                     "predict": ["hard_instance_communication", "lower_bound_gossip"]}
            if algorithm == name:
                point.update(rule_id=rule_id, hyper=dict(hyper))
            elif algorithm == "detag":
                point.update(R_fractions=[1 / 32, 1 / 16] if settings.detag_phases is None else [],
                             etas=[None, 0.0], starts=["paper"])
            levels["spectral_gap"].append(point)
    seen: set[tuple[Any, ...]] = set()
    for points in (settings.sigma2_points, settings.nb_points):
        for n, B, p in points:
            for algorithm in series:
                if (algorithm, n, B, p) in seen:
                    continue
                seen.add((algorithm, n, B, p))
                point = {"term": "sampling", "algorithm": algorithm, "n": n, "batch": B, "p": p,
                         "chain_length": settings.sampling_chain, "seeds": settings.sampling_seeds,
                         "seed": seed, "cap": sampling.iteration_cap(n, B, p, settings.sampling_chain),
                         "predict": ["hard_instance_sampling_sharp", "hard_instance_sampling"]}
                if algorithm == name:
                    point.update(rule_id=rule_id, hyper=dict(hyper))
                levels["sampling"].append(point)
    return levels
