"""The term sweeps: the points of the communication, broom, spectral-gap and sampling experiments and the one
runner that measures every algorithm of a verify run (the rule under test and the baselines) on them.

Every algorithm runs through the same `algorithms.tune` call at the same tolerance: tol = ``tol_fraction`` *
2 eps, not the figures' eps (docs/verify.md, "Instances where the term dominates"). Both hard instances keep
||grad f(x)|| >= 2 eps while prog(x) < T_c (docs/theory.md §4.2, §4.3), so every explicit-constant bound
(1 + (T_c - 1) dist on Setting 2, ``hard_instance_sampling_sharp`` on Setting 1) holds for any tol < 2 eps,
and a tolerance near 2 eps cuts the size-independent descent cost that hides the terms (errata E20, E22).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from decbounds.paper_figures import communication, sampling
from decbounds.paper_figures.fit import Record
from decbounds.paper_figures.sweep import to_jsonable
from decbounds.verify.checks import one_line
from decbounds.verify.run_audit import OutsideTheClassError, RunAudit
from decbounds.verify.settings import CAP_GROWTH, COMMUNICATION_TERMS, Settings
from decbounds.verify.term import TERMS

from decbounds import algorithms, instances, oracles

__all__ = ["grid_options", "measure", "raise_caps", "sweep_points", "term_instance"]


def term_instance(point: Record) -> tuple[instances.LocalFunctions | oracles.ZeroChainOracle,
                                          instances.GossipMatrix, float, Record]:
    """(problem or oracle, W, lam, params) of a point: Cor. 2's path or Thm 1's broom (``D``) with Metropolis
    W; the lazy Metropolis W_kappa of the ``n``-node path; Setting 1 with the probabilistic zero-chain oracle
    gossiping with Metropolis W on ``topology`` (never the complete graph: there W is the exact average and
    every rule would measure the same).

    Parameters
    ----------
    point : dict
        A sweep point of `sweep_points` (``term``, ``n`` and the term's own keys).

    Returns
    -------
    tuple
        (the problem, or the oracle on Setting 1; W; its lam; the catalog parameters of the point).
    """
    term, n = point["term"], int(point["n"])
    if term in COMMUNICATION_TERMS:
        D = None if point.get("D") is None else int(point["D"])
        problem = instances.communication_instance(n, D=D, T_c=int(point["chain_length"]))
        W = instances.gossip_matrix(problem.graph(), "metropolis")
        lam = communication.gossip_lam(n, D)
        varsigma0 = communication.cor2_varsigma0(n, problem.epsilon, len(problem.groups[0]))
        params = {"n": n, "lam": lam, "D": n - 1 if D is None else D, "B": 1, "sigma": 0.0,
                  "Delta": problem.Delta, "L": problem.L, "epsilon": problem.epsilon, "varsigma0": varsigma0,
                  "varsigma": varsigma0}
        return problem, W, lam, params
    if term == "spectral_gap":
        problem = instances.communication_instance(n, T_c=int(point["chain_length"]))
        W = instances.lazy(instances.gossip_matrix(problem.graph(), "metropolis"), float(point["kappa"]))
        lam = float(instances.second_eigenvalue(W))
        params = {"n": n, "lam": lam, "D": n - 1, "Delta": problem.Delta, "L": problem.L,
                  "epsilon": problem.epsilon, "sigma": 0.0, "B": 1}
        return problem, W, lam, params
    if term == "sampling":
        batch, p = int(point["batch"]), float(point["p"])
        problem = instances.sampling_instance(n, T_c=int(point["chain_length"]), p=p)
        W = instances.gossip_matrix(instances.topology(point["topology"], n), "metropolis")
        lam = float(instances.second_eigenvalue(W))
        params = {"n": n, "B": batch, "sigma": sampling.noise_level(p, problem.epsilon),
                  "Delta": problem.Delta,
                  "L": problem.L, "epsilon": problem.epsilon, "lam": lam, "D": 1, "varsigma0": 0.0, "p": p,
                  "T_c": problem.T_c}
        return oracles.ZeroChainOracle(problem), W, lam, params
    raise ValueError(f"point['term'] must be one of {(*COMMUNICATION_TERMS, 'spectral_gap', 'sampling')}; "
                     f"got {term!r}")


def measure(point: Record) -> Record:
    """The sweep runner of every verify run: the algorithm of ``point`` (the rule under test when
    ``rule_id`` is set; a baseline otherwise) tuned over the point's admissible steps at tol =
    ``tol_fraction`` * 2 eps, every seed side by side, and over its declared ``grid``
    (`StepRule.tuning_grid`, through `grid_options`) unless ``hyper`` grids are given, which replace it.

    Parameters
    ----------
    point : dict
        A sweep point of `sweep_points`.

    Returns
    -------
    dict
        ``{"result": {"t_eps", "status", "t_eps_seeds", "step_size", "hyper", "tol", ...}, "params": ...}``.
    """
    problem, W, _, params = term_instance(point)
    f = problem.f if point["term"] == "sampling" else problem
    hyper = dict(point.get("hyper") or {})
    options: dict[str, Any] = grid_options(point.get("grid") or {}) if not hyper else {}
    steps = [fraction / f.smoothness for fraction in point.get("step_fractions", [1.0])]
    seeds = [int(point["seed"]) + j for j in range(int(point.get("seeds", 1)))]
    tol = float(point["tol_fraction"]) * 2.0 * f.epsilon
    observer, measured = None, problem
    if point.get("run_audit"):  # the rule under test: every iteration of every run audited (`run_audit`)
        observer = RunAudit(problem, flow=bool(point.get("audit_flow")), seed=int(point["seed"]))
        measured = observer.measured
    result = _tune_rule(point["algorithm"], measured, W, steps, tol=tol, cap=int(point["cap"]), seeds=seeds,
                        batch=int(point.get("batch", 1)), hyper={**hyper, **options}, observer=observer)
    if "class_violation" in result:
        size = ", ".join(f"{key}={point[key]}" for key in ("n", "D", "kappa", "batch", "p") if key in point)
        result["class_violation"] = f"the {point['term']} term at {size}, {result['class_violation']}"
    if observer is not None:
        result["run_audit"] = {"iterations": observer.iterations, "replayed": observer.replayed,
                               "flow": bool(point.get("audit_flow"))}
    result["tol"] = tol
    if point["term"] != "sampling":
        result["explicit_bound"] = int(problem.iteration_lower_bound)
        result["dist"] = int(problem.dist)
    return {"result": result, "params": params}


def grid_options(grid: Mapping[str, Sequence[object]]) -> dict[str, object]:
    """`algorithms.tune`'s keywords for a rule's declared `StepRule.tuning_grid`: its first axis one group
    per value in the order given, raced (``race``: branch and bound in time, the winner of the whole grid),
    the others a product.

    Parameters
    ----------
    grid : mapping
        Hyper-parameter name -> values (empty: no keywords).

    Returns
    -------
    dict

    Examples
    --------
    >>> grid_options({"R": [4, 2], "gossip": ["two_tap"]})
    {'groups': [{'R': 4}, {'R': 2}], 'race': True, 'gossip': ['two_tap']}
    """
    if not grid:
        return {}
    first, *rest = grid
    return {"groups": [{first: value} for value in grid[first]], "race": True,
            **{key: list(grid[key]) for key in rest}}


def _tune_rule(name: str, problem: Any, W: Any, steps: Sequence[float], *, tol: float, cap: int,
               seeds: Sequence[int], batch: int = 1, hyper: Mapping[str, Any], observer: Any = None
               ) -> dict[str, Any]:
    """`algorithms.tune` of ``name`` over ``steps`` x its ``hyper`` grids (the least median T_eps over
    seeds; each run stops at its x-bar T_eps), as a record's result; a rule that raises is a result with
    status "error" naming the iteration, so that the sweep goes on and the record is kept. With an
    ``observer`` (`run_audit.RunAudit`), a run that leaves the class is a result with ``class_violation``."""
    where: dict[str, int | None] = {"t": None}  # None until the callback after init: a failure in init

    def track(t: int, state: Any, ctx: Any) -> None:
        where["t"] = t

    watched = {} if observer is None else {"observer": observer}
    try:
        options = {"race": True, **dict(hyper)}  # the winner of the whole grid, the losers stopped early
        tuned = algorithms.tune(name, problem, W, list(steps), tol=tol, iterations=cap, seeds=list(seeds),
                                batch=batch, callback=track, stop="average", **watched, **options)
    except OutsideTheClassError as exc:
        return {"t_eps": None, "status": "error", "capped": False, "cap": cap, "class_violation": str(exc),
                "message": f"{name} left the gossip class: {exc}", "seeds": list(seeds), "t_eps_seeds": [],
                "step_size": None, "hyper": {}}
    except Exception as exc:  # the user's rule: a verdict, not a traceback
        kind = "A_B budget violated" if isinstance(exc, algorithms.BudgetViolationError) else \
            f"raised {type(exc).__name__} " + ("in init" if where["t"] is None else
                                                f"in step at iteration {where['t']}")
        return {"t_eps": None, "status": "error", "capped": False, "cap": cap,
                "message": f"{name} {kind}: {one_line(exc)}", "seeds": list(seeds), "t_eps_seeds": [],
                "step_size": None, "hyper": {}}
    best = tuned.grid.winner_runs
    chosen = best or tuned.grid.runs[:len(seeds)]
    statuses = [result.status for result in chosen]
    runs = tuned.grid.runs
    diverged = [result for result in runs if result.status == "diverged"]
    status = "converged" if best else ("diverged" if runs and len(diverged) == len(runs)
                                       else "max_iterations")
    return to_jsonable({
        "t_eps": tuned.grid.score, "status": status, "capped": not best and status != "diverged",
        "cap": cap, "message": (diverged[0].message if status == "diverged" else
                                chosen[0].message if chosen else ""),
        "seeds": list(seeds), "t_eps_seeds": [result.t_eps for result in chosen], "status_seeds": statuses,
        "diverged_runs": len(diverged), "runs": len(runs),
        "step_size": tuned.step_size if best else None,
        "hyper": {k: v for k, v in tuned.hyper.items() if _plain(v)} if best else {},
        "grid": [{"step_size": r.step_size, "t_eps": r.t_eps, "status": r.status, "seed": r.seed,
                  "hyper": {k: v for k, v in r.hyper.items() if _plain(v)}} for r in runs],
    })


def _plain(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def sweep_points(name: str, rule_id: str, settings: Settings, *, seed: int, hyper: Mapping[str, object],
                 baselines: Sequence[str]) -> dict[str, list[Record]]:
    """Every run of the four experiments, by term: the rule's points carry ``rule_id`` (its source hash) and
    the hyper-parameter grids it is tuned over; a baseline's points are the same without them.

    Parameters
    ----------
    name : str
        The rule's registry name.
    rule_id : str
        Its source hash (`spec.fingerprint`).
    settings : Settings
        The sizes.
    seed : int
        The seed of every run.
    hyper : mapping
        The rule's hyper-parameter grids.
    baselines : sequence of str
        The algorithms measured beside it.

    Returns
    -------
    dict
        ``{term: [point, ...]}`` for "communication", "communication_broom", "spectral_gap", "sampling".
    """
    series = [name, *[b for b in baselines if b != name]]
    levels: dict[str, list[dict[str, Any]]] = {"communication": [], "communication_broom": [],
                                               "spectral_gap": [], "sampling": []}

    def add(term: str, common: dict[str, Any], lam: float | None) -> None:
        for algorithm in series:
            point = {"term": term, "algorithm": algorithm, **common, "tol_fraction": settings.tol_fraction,
                     "seed": seed}
            if algorithm == name:
                point.update(rule_id=rule_id, hyper=dict(hyper))
            if lam is not None and not (algorithm == name and hyper):  # --hyper overrides the declared grid
                declared = algorithms.rule_class(algorithm).tuning_grid(
                    n=int(common["n"]), lam=lam, cap=int(common["cap"]), stochastic=term == "sampling")
                if declared:
                    point["grid"] = {key: list(values) for key, values in declared.items()}
            levels[term].append(point)

    chain = {"chain_length": settings.comm_chain, "step_fractions": list(settings.step_fractions)}
    for n in settings.comm_sizes:
        add("communication", {"n": n, **chain, "cap": settings.comm_cap,
                              "predict": ["hard_instance_communication", "lower_bound_gossip"]},
            communication.gossip_lam(n))
    for n in settings.broom_sizes:
        add("communication_broom", {"n": n, "D": settings.broom_diameter, **chain, "cap": settings.broom_cap,
                                    "predict": ["lower_bound_any"]},
            communication.gossip_lam(n, settings.broom_diameter))
    for kappa in settings.kappas:
        _, _, lam, _ = term_instance({"term": "spectral_gap", "n": settings.gap_n,
                                      "chain_length": settings.comm_chain, "kappa": kappa})
        add("spectral_gap", {"n": settings.gap_n, "kappa": kappa, **chain, "cap": settings.gap_cap,
                             "predict": ["hard_instance_communication", "lower_bound_gossip"]}, lam)
    seen: set[tuple[int, int, float]] = set()
    for n, B, p in (*settings.sigma2_points, *settings.nb_points):
        if (n, B, p) in seen:
            continue
        seen.add((n, B, p))
        common = {"n": n, "batch": B, "p": p, "chain_length": settings.sampling_chain,
                  "topology": settings.sampling_topology, "seeds": settings.sampling_seeds,
                  "cap": sampling.iteration_cap(n, B, p, settings.sampling_chain),
                  "predict": ["hard_instance_sampling_sharp", "hard_instance_sampling"]}
        add("sampling", common, term_instance({"term": "sampling", **common})[2])
    return levels


def raise_caps(records: Sequence[Record], name: str, settings: Settings,
               run: Callable[[Record], Record]) -> list[Record]:
    """The records with each capped run of the rule on a Setting 2 term (path, broom, lazy path) measured
    again at `CAP_GROWTH` times its cap, up to ``settings.cap_raises`` times, smallest size first, while
    ``settings.raise_budget`` (worker-iterations) lasts; once a size stays capped, the larger sizes of that
    term are not raised (they would cost more and stay capped).
    A capped run is censored (T_eps > cap): raising the cap turns it into a measurement where the budget
    allows.

    Parameters
    ----------
    records : sequence of dict
        The run's records.
    name : str
        The rule's registry name (the references are not raised).
    settings : Settings
        ``cap_raises``.
    run : callable
        Measures one point and returns its record (the sweep runner, resumable).

    Returns
    -------
    list of dict
        ``records`` with each raised run's record in place of the capped one.
    """
    out = list(records)
    budget = float(settings.raise_budget)
    for spec in TERMS.values():
        if not spec.cap_field:  # the sampling term's caps follow its points
            continue
        mine = sorted((i for i, r in enumerate(out) if r["point"]["term"] == spec.source
                       and r["point"]["algorithm"] == name), key=lambda i: spec.x_of(out[i]))
        for i in mine:
            if out[i]["result"].get("status") != "max_iterations":
                continue
            for _ in range(settings.cap_raises):
                point = {**out[i]["point"], "cap": int(out[i]["point"]["cap"]) * CAP_GROWTH}
                cost = _worker_iterations(point)
                if cost > budget:
                    break
                budget -= cost
                out[i] = run(point)
                if out[i]["result"].get("status") != "max_iterations":
                    break
            if out[i]["result"].get("status") == "max_iterations":
                break
    return out


def _worker_iterations(point: Record) -> float:
    """The most a point's tuning can cost: workers x cap x the configurations tuned (steps x grid)."""
    configurations = len(point.get("step_fractions") or [1.0]) * int(point.get("seeds", 1))
    for values in dict(point.get("grid") or {}).values():
        configurations *= max(1, len(values))
    for values in dict(point.get("hyper") or {}).values():
        configurations *= len(values) if isinstance(values, list) else 1
    return float(point["n"]) * float(point["cap"]) * configurations
