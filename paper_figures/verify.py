"""`decbounds verify module:Class`: hold a user's step rule against the lower bounds on the paper's instances.

``verify(rule, ...)`` (and the CLI) runs, for a `algorithms.StepRule` subclass given as a class, a registered
name, or a ``module:Class`` / ``path/to/file.py:Class`` spec:

1. **the class audit** (docs/theory.md §2): the rule runs on Cor. 2's path instance (zero chain split over
   the end groups, exact gradients, Metropolis W, step 1/L) with the engine's A_B budget (at most B queries
   and one communication round per iteration; a violation raises `algorithms.BudgetViolationError` naming
   the iteration) and the zero-respecting audit on the zero chain: after iteration t+1 no worker's state
   (every array of ``rule.worker_arrays``) holds a coordinate beyond the furthest one its closed
   neighbourhood held after t, plus the one its own oracle may reveal. A rule that raises inside ``step`` or
   whose iterates become non-finite fails the audit, which names the iteration;
2. **the communication term**: T_eps against n on Cor. 2's path (``instances.communication_instance``,
   T_c = 3), tuned over the admissible steps {1, 1/2}/L; x-bar's and the workers' own T_eps. Then the same
   on Thm 1's broom of fixed diameter D = ``broom_diameter`` (``communication_instance(n, D=D)``, the end
   groups D hops apart at every n of ``broom_sizes``): there the bound does not grow with n. The broom is
   the instance of Thm 1's communication term Delta L D / eps^2 (catalog ``lower_bound_any``; explicit
   count 1 + (T_c - 1) D, docs/theory.md §4.3), n-independent at fixed D, so its optimal exponent in n is
   0, not the path's 1 (on the path D = n - 1 grows with n); Cor. 2's 1/sqrt(1 - lam) is proved on the path
   only and is not a bound for a given broom;
3. **the spectral gap**: T_eps against 1/(1 - lam) through the lazy W_kappa = kappa W + (1 - kappa) I of the
   12-node (tiny: 6-node) path;
4. **the sampling term**: median T_eps over seeds against sigma^2 and against n B on Setting 1
   (``instances.sampling_instance`` with the probabilistic zero-chain oracle, complete graph, step 1/L);
5. optionally (``digits=True``, ``--digits``) **the digits MLP at 0% shuffled** (the paper's Figure 2
   setting: ``instances.digits_problem`` on an 8-worker Metropolis ring, each worker holding one or two
   labels), tuned by ``paper_figures.heterogeneity``'s own runner (`heterogeneity.tuned_curve`: the step
   grid scored by the final training loss, DeTAG also over (eta, R)) at that figure's sizes of the mode:
   the final training loss f(x-bar) per method, median and range over seeds, compared with DeTAG's and
   D^2's. There is no lower bound on this problem, so this term has a comparison, not an exponent, and
   never sets the exit status.

Beside the rule, in the same run: DeTAG, D^2 and centralized SGD (the figures' own runners,
``paper_figures.communication`` / ``spectral_gap`` / ``sampling``, with the phase grid cut to small R in the
quick modes). Every run is checked against the explicit-constant lower bound of its instance
(``hard_instance_communication``: 1 + (T_c - 1) dist; ``hard_instance_sampling_sharp`` at the median), and
each term's log-log exponent (``paper_figures.fit``, 95% t interval) against the optimal one (1 in n on the
path, 0 in n on the broom of fixed diameter, 1/2 in 1/(1 - lam), +1 in sigma^2, -1 in n B); on the path and
through W_kappa the fit reads the `FIT_TAIL` largest finished sizes only, as the figures do (`fit_tail`).
Verdict per term:

- "BELOW the lower bound: outside the class or a bug" when a run beat the explicit bound (its parameters
  and seed are named);
- "matches the lower bound's order" when the interval covers the optimal exponent;
- "worse: measured exponent x [lo, hi] against the optimal y" when the interval lies on the bad side of it
  and the reference algorithm (DeTAG for the communication terms, centralized SGD for sampling) measured in
  the same run lies below the rule's interval, i.e. the sizes do resolve the difference;
- "not resolved on this range" otherwise (the n-independent descent cost of the zero chain dominates T_eps
  at small sizes, docs/errata.md E20 and E22: the quick sizes cannot show the asymptotic exponent).

Outputs in ``out``: ``records.jsonl`` (every run, appended as it finishes, kept when a later one fails;
resumable: a rerun with the same rule source and settings reuses them), ``audit.json``, ``exponents.csv``,
``report.md`` and ``report.png`` (with the digits term also ``digits.md`` and ``digits.csv``).
``VerifyReport.exit_status`` is 1 when the audit fails or a bound is beaten, 0 otherwise; bad input raises
`VerifyInputError` (one line).
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import hashlib
import importlib
import importlib.util
import inspect
import io
import json
import math
import pathlib
import sys
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from decbounds.paper_figures import communication, fit, heterogeneity, sampling, spectral_gap
from decbounds.paper_figures.plotting import atomic_write_bytes, style
from decbounds.paper_figures.sweep import RecordWriter, SerialExecutor, run_sweep, to_jsonable

from decbounds import algorithms, instances, oracles

__all__ = [
    "BASELINES",
    "COMMUNICATION_TERMS",
    "DIGITS_REFERENCES",
    "DIGITS_SHUFFLED",
    "DIGITS_WORKERS",
    "FIT_TAIL",
    "MODES",
    "TERMS",
    "VERDICT_BELOW",
    "VERDICT_MATCH",
    "Settings",
    "VerifyInputError",
    "VerifyReport",
    "add_parser",
    "audit",
    "below_bound",
    "digits_curve_mode",
    "digits_points",
    "digits_verdict",
    "explicit_bound",
    "final_losses",
    "fingerprint",
    "fit_tail",
    "load_rule",
    "main",
    "measure",
    "report_markdown",
    "sweep_points",
    "term_verdict",
    "verify",
]

#: The algorithms measured beside the rule in the same run.
BASELINES: tuple[str, ...] = ("detag", "d2", "centralized")
#: Optimal exponent of each term (the lower bound's order) and the fit variable.
#: How many of the largest finished sizes a "tail" term's fit reads (the figures' `communication.FIT_TAIL`).
FIT_TAIL = communication.FIT_TAIL

TERMS: dict[str, dict[str, Any]] = {
    # "tail": the fit reads the runs at the largest finished sizes only, as the figures do (FIT_TAIL): at
    # small sizes the zero chain's size-independent descent cost hides the asymptotic slope
    "communication": {"variable": "n", "optimal": 1.0, "reference": "detag", "tail": FIT_TAIL,
                      "title": "communication term: T_eps against n on Cor. 2's path"},
    # Thm 1's instance at fixed D: lower_bound_any's Delta L D / eps^2 does not depend on n
    "communication_broom": {"variable": "n", "optimal": 0.0, "reference": "detag",
                            "title": "communication term: T_eps against n on Thm 1's broom of fixed "
                                     "diameter D (bound Delta L D / eps^2, flat in n)"},
    "spectral_gap": {"variable": "inv_gap", "optimal": 0.5, "reference": "detag", "tail": FIT_TAIL,
                     "title": "spectral gap: T_eps against 1/(1 - lam) through lazy W_kappa"},
    "sampling_sigma2": {"variable": "sigma2", "optimal": 1.0, "reference": "centralized",
                        "title": "sampling term: median T_eps against sigma^2 (Setting 1)"},
    "sampling_nB": {"variable": "nB", "optimal": -1.0, "reference": "centralized",
                    "title": "sampling term: median T_eps against n B (Setting 1)"},
}
VERDICT_MATCH = "matches the lower bound's order"
VERDICT_BELOW = "BELOW the lower bound: outside the class or a bug"
#: The terms measured on Setting 2's zero chain with exact gradients (path and broom); their records hold
#: x-bar's and the workers' own T_eps.
COMMUNICATION_TERMS: tuple[str, ...] = ("communication", "communication_broom")
#: The digits term (item 5): the algorithms its verdict compares the rule with, and their names in words.
DIGITS_REFERENCES: dict[str, str] = {"detag": "DeTAG", "d2": "D^2"}


class VerifyInputError(ValueError):
    """Bad input to `verify`: a spec that does not import, a class that is not a step rule, ... (one line)."""


@dataclasses.dataclass(frozen=True)
class Settings:
    """Sizes of one verify run (``verify(mode=...)``; ``sizes=`` overrides fields by name)."""

    comm_sizes: tuple[int, ...]
    comm_cap: int
    gap_n: int
    gap_chain: int
    kappas: tuple[float, ...]
    gap_cap: int
    sampling_chain: int
    sampling_seeds: int
    sigma2_points: tuple[tuple[int, int, float], ...]  # (n, B, p)
    nb_points: tuple[tuple[int, int, float], ...]
    detag_phases: tuple[int, ...] | None  # None: the figures' own R grids
    comm_chain: int = 3  # T_c of the path instance (the figure's 3; 2 halves the descent cost)
    audit_n: int = 9
    audit_iterations: int = 1200
    step_fractions: tuple[float, ...] = (1.0, 0.5)
    # the broom of Thm 1 at fixed diameter: D below n - 2 ceil(n/3) + 2 at every size keeps the end groups
    # D hops apart (split_groups' second case), so the explicit bound 1 + (T_c - 1) D is the same at every n
    broom_sizes: tuple[int, ...] = (6, 12, 24, 48)
    broom_diameter: int = 3
    broom_cap: int = 8000
    # the digits term: paper_figures.heterogeneity's mode of the same name (its iterations, step grid, seeds,
    # DeTAG's (eta, R) pairs); digits_iterations overrides its iteration count
    digits_mode: str = "quick"
    digits_iterations: int | None = None


MODES: dict[str, Settings] = {
    "tiny": Settings(comm_sizes=(6, 9, 12, 15), comm_cap=3000, gap_n=6, gap_chain=2,
                     kappas=(1.0, 0.3, 0.1, 0.03), gap_cap=4000, sampling_chain=3, sampling_seeds=4,
                     sigma2_points=((2, 1, 8e-3), (2, 1, 4e-3), (2, 1, 2e-3)),
                     nb_points=((2, 1, 4e-3), (4, 1, 4e-3), (2, 4, 4e-3)), detag_phases=(1,),
                     audit_iterations=600, step_fractions=(1.0,), comm_chain=2,
                     broom_sizes=(6, 9, 12, 15), broom_cap=3000, digits_mode="tiny"),
    # the sampling points sit where the reveal time (T_c - 1)/(n B p) is at least the ~400 iterations of
    # descent of the T_c = 3 chain (measured), so that the sigma^2 and n B slopes show
    "quick": Settings(comm_sizes=(6, 12, 24, 48), comm_cap=8000, gap_n=12, gap_chain=2,
                      kappas=(1.0, 0.3, 0.1, 0.03), gap_cap=20000, sampling_chain=3, sampling_seeds=8,
                      sigma2_points=((2, 1, 4e-3), (2, 1, 2e-3), (2, 1, 1e-3)),
                      nb_points=((2, 1, 1e-3), (4, 1, 1e-3), (8, 1, 1e-3)), detag_phases=(1, 2),
                      step_fractions=(1.0,), broom_sizes=(6, 12, 24, 48), broom_cap=8000),
    # sized to a budget of 20 minutes on a 2-core machine (measured: README, "Verify your own algorithm");
    # the path goes to n = 384 so that the tail fit (FIT_TAIL sizes) reaches DeTAG's asymptotic slope
    "full": Settings(comm_sizes=(6, 12, 24, 48, 96, 192, 384), comm_cap=48000, gap_n=12, gap_chain=2,
                     kappas=(1.0, 0.1, 0.03, 0.01, 3e-3, 1e-3), gap_cap=100000, sampling_chain=6,
                     sampling_seeds=16,
                     sigma2_points=((4, 1, 5e-4), (4, 1, 2.5e-4), (4, 1, 1.25e-4)),
                     nb_points=((2, 1, 2.5e-4), (4, 1, 2.5e-4), (8, 1, 2.5e-4), (2, 4, 2.5e-4)),
                     detag_phases=None, broom_sizes=(6, 12, 24, 48, 96), broom_cap=16000,
                     digits_mode="full"),
}


# ------------------------------------------------------------------------------------------- the rule


def load_rule(spec: Any) -> type[algorithms.StepRule]:
    """The rule class of ``spec``: a StepRule subclass, a registered algorithm name, or ``module:Class`` /
    ``path/to/file.py:Class`` (the current directory is importable, as with ``python -m``).
    VerifyInputError (one line) otherwise."""
    if isinstance(spec, type):
        if not issubclass(spec, algorithms.StepRule):
            raise VerifyInputError(f"{spec.__qualname__} is not a step rule: subclass algorithms.StepRule")
        return spec
    if not isinstance(spec, str) or not spec:
        raise VerifyInputError(f"rule must be a StepRule subclass or a 'module:Class' string; got {spec!r}")
    if ":" not in spec:
        try:
            return algorithms.rule_class(spec)
        except ValueError:
            raise VerifyInputError(f"{spec!r} is neither 'module:Class' nor a registered algorithm "
                                   f"({', '.join(algorithms.algorithm_names())})") from None
    module_name, _, class_name = spec.rpartition(":")
    if not module_name or not class_name:
        raise VerifyInputError(f"expected 'module:Class' or 'path/to/file.py:Class'; got {spec!r}")
    try:
        if module_name.endswith(".py"):
            path = pathlib.Path(module_name)
            if not path.is_file():
                raise FileNotFoundError(f"no file {module_name}")
            loader_spec = importlib.util.spec_from_file_location(path.stem, path)
            assert loader_spec is not None and loader_spec.loader is not None
            module = importlib.util.module_from_spec(loader_spec)
            sys.modules[path.stem] = module
            loader_spec.loader.exec_module(module)
        else:
            if "" not in sys.path and str(pathlib.Path.cwd()) not in sys.path:
                sys.path.insert(0, str(pathlib.Path.cwd()))
            module = importlib.import_module(module_name)
    except Exception as exc:  # any failure of the user's module is one line
        raise VerifyInputError(f"cannot import {module_name!r}: {type(exc).__name__}: "
                               f"{_one_line(exc)}") from None
    rule = getattr(module, class_name, None)
    if rule is None:
        raise VerifyInputError(f"module {module_name!r} has no attribute {class_name!r}")
    if not (isinstance(rule, type) and issubclass(rule, algorithms.StepRule)):
        raise VerifyInputError(f"{spec} is not a step rule: {rule!r} does not subclass algorithms.StepRule")
    return rule


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else ""


def _registered(rule: type[algorithms.StepRule]) -> tuple[str, bool]:
    """Register ``rule`` if it is not (a default name and style filled in); (its name, whether added)."""
    for entry in algorithms.entries():
        if entry.rule is rule:
            return entry.name, False
    name = rule.name or rule.__name__.lower()
    extra: dict[str, Any] = {}
    if rule.name != name:
        extra["name"] = name
    if not isinstance(rule.style, algorithms.PlotStyle):
        extra["style"] = algorithms.PlotStyle(color="tab:pink", marker="P", label=name)
    if extra:
        rule = type(rule.__name__, (rule,), {**extra, "__module__": rule.__module__})
    try:
        algorithms.register(rule)
    except (TypeError, ValueError) as exc:
        raise VerifyInputError(f"cannot register the rule: {exc}") from None
    return name, True


def fingerprint(rule: type[algorithms.StepRule]) -> str:
    """A hash of the rule's source (so that records of an edited rule are not reused)."""
    try:
        text = inspect.getsource(rule)
    except (OSError, TypeError):
        text = f"{rule.__module__}.{rule.__qualname__}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# ------------------------------------------------------------------------------------------- the audit


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


# --------------------------------------------------------------------------------------- measurements


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
    where = {"t": 0}

    def track(t: int, state: Any, ctx: Any) -> None:
        where["t"] = t

    try:
        tuned = algorithms.tune(name, problem, W, list(steps), tol=tol, iterations=cap, seeds=list(seeds),
                                batch=batch, callback=track, **dict(hyper))
    except Exception as exc:  # the user's rule: a verdict, not a traceback
        kind = "A_B budget violated" if isinstance(exc, algorithms.BudgetViolationError) else \
            f"raised {type(exc).__name__} in step at iteration {where['t']}"
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


# ------------------------------------------------------------------------------------------ the digits term

#: Workers of the digits term's ring (the paper's Figure 2 uses 8) and its data partition (0% shuffled).
DIGITS_WORKERS = 8
DIGITS_SHUFFLED = 0.0


def digits_curve_mode(settings: Settings, series: Sequence[str], seed: int) -> heterogeneity.CurveMode:
    """`heterogeneity.MODES[settings.digits_mode]` cut to the digits term: the 8-worker ring at 0% shuffled
    without momentum, the given ``series``, the seeds shifted by ``seed`` (tuning on ``seed``), and
    ``digits_iterations`` if set."""
    base = heterogeneity.MODES[settings.digits_mode]
    return dataclasses.replace(
        base, iterations=settings.digits_iterations or base.iterations, partitions=(DIGITS_SHUFFLED,),
        momenta=(0.0,), networks=(heterogeneity.Network(f"{DIGITS_WORKERS}-worker ring", "", "ring",
                                                        DIGITS_WORKERS),),
        algorithms=tuple(series), tune_seeds=tuple(seed + s for s in base.tune_seeds),
        extra_seeds=tuple(seed + s for s in base.extra_seeds))


def digits_points(name: str, rule_id: str, settings: Settings, *, seed: int, hyper: Mapping[str, Any],
                  baselines: Sequence[str]) -> list[dict[str, Any]]:
    """The digits term's sweep points: `heterogeneity.curve_point` of each series (runner
    `heterogeneity.tuned_curve`, the figure's own tuner), with ``term = "digits"``; the rule's point carries
    its source hash and its hyper-parameter grids."""
    series = [name, *[b for b in baselines if b != name]]
    mode = digits_curve_mode(settings, series, seed)
    network = mode.networks[0]
    smoothness = heterogeneity.digits(network.n, DIGITS_SHUFFLED).smoothness
    points = []
    for algorithm in series:
        point = heterogeneity.curve_point(mode, network, DIGITS_SHUFFLED, 0.0, algorithm, smoothness)
        point["term"] = "digits"
        if algorithm == name:
            point.update(rule_id=rule_id, hyper=dict(hyper))
        points.append(point)
    return points


def final_losses(record: Mapping[str, Any]) -> dict[str, Any]:
    """A digits record's final training losses f(x-bar_T) over its seeds: median, min, max (None when no
    seed ended finite) and the number of diverged seeds."""
    result = record["result"]
    finals = [float(v) for v in result.get("final_loss", []) if v is not None]
    return {"median": float(np.median(finals)) if finals else None, "min": min(finals, default=None),
            "max": max(finals, default=None), "seeds": len(result.get("final_loss", [])),
            "diverged": sum(bool(v) for v in result.get("diverged", []))}


def _loss_range(summary: Mapping[str, Any]) -> str:
    if summary["median"] is None:
        return f"diverged on all {summary['seeds']} seeds"
    text = f"{summary['median']:.4g} [{summary['min']:.4g}, {summary['max']:.4g}]"
    return text + (f" ({summary['diverged']} diverged seeds)" if summary["diverged"] else "")


def digits_verdict(name: str, records: Sequence[dict[str, Any]], iterations: int) -> str:
    """The digits term's comparison: the rule's final training loss (median [min, max] over seeds) against
    each of `DIGITS_REFERENCES` measured in the same run: "lower than" when the rule's whole range lies below
    the reference's, "higher than" when above, "overlapping" otherwise. No lower bound is involved. The
    methods whose tuned step lies at an edge of the steps tried are named: the grid, even widened
    (`heterogeneity.bracketed_tune`), did not bracket their best step, so a step beyond it might lower
    their loss (or diverge)."""
    digits_records = [r for r in records if r["point"]["term"] == "digits"]
    by_algorithm = {r["point"]["algorithm"]: final_losses(r) for r in digits_records}
    if name not in by_algorithm:
        return "not run"
    mine = by_algorithm[name]
    setting = (f"median [min, max] final training loss f(x-bar) over {mine['seeds']} seeds after "
               f"{iterations} iterations, {DIGITS_SHUFFLED:g}% shuffled digits, {DIGITS_WORKERS}-worker ring")
    compared = []
    for reference in DIGITS_REFERENCES:
        if reference == name or reference not in by_algorithm:
            continue
        other = by_algorithm[reference]
        if mine["median"] is None or other["median"] is None:
            relation = "not comparable with"
        elif mine["max"] < other["min"]:
            relation = "lower than"
        elif mine["min"] > other["max"]:
            relation = "higher than"
        else:
            relation = "overlapping"
        compared.append(f"{relation} {DIGITS_REFERENCES[reference]} ({_loss_range(other)})")
    edge = [DIGITS_REFERENCES.get(r["point"]["algorithm"], r["point"]["algorithm"]) for r in digits_records
            if r["point"]["algorithm"] in (name, *DIGITS_REFERENCES)
            and r["result"].get("step_size") is not None and not r["result"].get("bracketed", False)]
    note = (f"; tuned to an edge of the steps tried: {', '.join(edge)} (the widened grid did not bracket "
            "the best step)" if edge else "")
    if not compared:
        return (f"{name}: {_loss_range(mine)} ({setting}); neither DeTAG nor D^2 was measured beside it"
                + note)
    return f"{'; '.join(compared)}: {name} {_loss_range(mine)} ({setting}){note}"


# ---------------------------------------------------------------------------------------------- verdicts


def _fit_records(term: str, records: Sequence[dict[str, Any]], settings: Settings) -> list[dict[str, Any]]:
    """The records a term's fit reads: the path points, the gap points, or one pseudo-record per seed of
    the sampling points of that sweep (the slope of the median with the seeds as replicates)."""
    if term in (*COMMUNICATION_TERMS, "spectral_gap"):
        return [r for r in records if r["point"]["term"] == term]
    wanted = {(n, B, p) for n, B, p in (settings.sigma2_points if term == "sampling_sigma2"
                                        else settings.nb_points)}
    out = []
    for record in records:
        point = record["point"]
        if point["term"] != "sampling" or (point["n"], point["batch"], point["p"]) not in wanted:
            continue
        for t in record["result"].get("t_eps_seeds") or [None]:
            status = "converged" if t is not None else record["result"].get("status", "max_iterations")
            out.append({**record, "result": {"t_eps": t, "status": status if t is None else "converged"}})
    return out


def fit_tail(records: Sequence[dict[str, Any]], spec: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The records one algorithm's fit of a term reads: all of them, or for a term with a ``tail`` the
    finished runs at its ``tail`` largest values of the term's variable plus every unfinished run beyond
    the smallest of those (so that the fit still counts what hit the cap or diverged there)."""
    tail = spec.get("tail")
    if not tail:
        return list(records)
    x_of = fit.variable_function(spec["variable"])
    finished = sorted({x_of(r) for r in records if fit.is_finished(r)})
    if len(finished) <= tail:
        return list(records)
    start = finished[-tail]
    return [r for r in records if x_of(r) >= start]


def explicit_bound(record: dict[str, Any]) -> float | None:
    """The explicit-constant lower bound a record's T_eps is held to (None where none applies)."""
    result, point = record["result"], record["point"]
    if point["term"] in COMMUNICATION_TERMS:
        return result.get("explicit_bound")
    if point["term"] == "spectral_gap":
        return result.get("hop_lower_bound")
    return record.get("predicted", {}).get("hard_instance_sampling_sharp")


def below_bound(records: Sequence[dict[str, Any]], name: str) -> list[str]:
    """Each of ``name``'s runs (a median over seeds for sampling) below its explicit lower bound, in words."""
    found = []
    for record in records:
        point, result = record["point"], record["result"]
        bound = explicit_bound(record)
        if point["algorithm"] != name or result.get("t_eps") is None or bound is None:
            continue
        if result["t_eps"] < bound:
            where = {key: point[key] for key in ("n", "D", "kappa", "batch", "p", "seed", "seeds")
                     if key in point}
            found.append(f"{point['term']} run {where}: T_eps = {result['t_eps']} < explicit bound "
                         f"{bound:.6g} (step {result.get('step_size')}, hyper {result.get('hyper')})")
    return found


def term_verdict(term: str, rule_fit: fit.RecordFit, reference_fit: fit.RecordFit | None,
                 below: Sequence[str], *, advice: str = "run without --quick for larger ones") -> str:
    """The verdict of one term (module docstring); ``advice`` ends a "not resolved" verdict."""
    optimal = TERMS[term]["optimal"]
    if below:
        return f"{VERDICT_BELOW} ({below[0]})"
    f = rule_fit.fit
    if f is None or f.n_points < fit.MIN_POINTS:
        why = rule_fit.reason or f"{0 if f is None else f.n_points} finished runs"
        return f"not resolved on this range: too few finished runs to fit ({why}; {rule_fit.unfinished} " \
               "hit the cap, diverged or failed)"
    measured = f"measured exponent {f.slope:.2f} [{f.ci_low:.2f}, {f.ci_high:.2f}]"
    if f.covers(optimal):
        return f"{VERDICT_MATCH} ({measured}, optimal {optimal:g})"
    worse_side = f.ci_low > optimal  # every optimal exponent is an upper end: larger is worse (n B: -1)
    reference = None if reference_fit is None else reference_fit.fit
    if worse_side and reference is not None and reference.ci_high < f.ci_low:
        return f"worse: {measured} against the optimal {optimal:g} (the reference measured " \
               f"{reference.slope:.2f} [{reference.ci_low:.2f}, {reference.ci_high:.2f}] on the same range)"
    measured_reference = ("" if reference is None else f"; the reference measured {reference.slope:.2f} "
                          f"[{reference.ci_low:.2f}, {reference.ci_high:.2f}] here")
    if worse_side:
        return (f"not resolved on this range: {measured} lies above the optimal {optimal:g}, but the sizes "
                f"do not separate it from the reference algorithm ({advice}{measured_reference})")
    # below a lower bound's exponent with no run below the explicit bound: T_eps has not yet reached the
    # bound's growth on these sizes (the zero chain's size-independent descent cost still dominates it)
    return (f"not resolved on this range: {measured} lies below the optimal {optimal:g}; on these sizes "
            "T_eps has not reached the lower bound's growth, because the zero chain's size-independent "
            f"descent cost still dominates it ({advice}{measured_reference})")


# -------------------------------------------------------------------------------------------- the report


@dataclasses.dataclass
class VerifyReport:
    """What `verify` found: the audit, each term's verdict and fits, the files written."""

    rule: str
    mode: str
    seed: int
    audit: dict[str, Any]
    verdicts: dict[str, str]
    fits: dict[str, dict[str, fit.RecordFit]]
    records: list[dict[str, Any]]
    files: list[pathlib.Path]
    errors: list[str]
    seconds: float
    digits: list[dict[str, Any]] = dataclasses.field(default_factory=list)  # the digits term's table rows

    @property
    def beaten(self) -> bool:
        """Whether some run of the rule beat an explicit lower bound."""
        return any(v.startswith(VERDICT_BELOW) for v in self.verdicts.values())

    @property
    def exit_status(self) -> int:
        """1 when the audit failed or a lower bound was beaten (a CI gate), else 0."""
        return 1 if (not self.audit["passed"] or self.beaten) else 0


def _check_settings(settings: Settings) -> None:
    """VerifyInputError (one line) for sizes the experiments cannot run: a broom whose end groups would not
    sit ``broom_diameter`` hops apart at every size, an unknown digits mode, a non-positive iteration
    count."""
    D = settings.broom_diameter
    if not _positive_int(D):
        raise VerifyInputError(f"broom_diameter must be a positive integer; got broom_diameter={D!r}")
    for n in settings.broom_sizes:
        if not _positive_int(n) or n < 2:
            raise VerifyInputError(f"broom_sizes must hold integers >= 2; got {n!r}")
        limit = n - 2 * math.ceil(n / 3) + 2
        if D >= limit:
            raise VerifyInputError(
                f"broom_sizes: at n={n} the broom of diameter {D} puts its end groups n - 2 ceil(n/3) + 1 "
                f"hops apart, not D (needs D < n - 2 ceil(n/3) + 2 = {limit}); use larger n or a smaller "
                "broom_diameter")
    if settings.digits_mode not in heterogeneity.MODES:
        raise VerifyInputError(f"digits_mode must be one of {tuple(heterogeneity.MODES)}; got "
                               f"digits_mode={settings.digits_mode!r}")
    iterations = settings.digits_iterations
    if iterations is not None and not _positive_int(iterations):
        raise VerifyInputError(f"digits_iterations must be a positive integer or None; got "
                               f"digits_iterations={iterations!r}")


def _positive_int(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, np.integer)) and value >= 1


def _digits_rows(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The digits term's table (`heterogeneity.summary_row`: step, DeTAG's eta and R, final loss median,
    min, max, diverged seeds), one row per algorithm."""
    digits_records = [r for r in records if r["point"]["term"] == "digits"]
    if not digits_records:
        return []
    _, lam = heterogeneity.network_matrix("ring", DIGITS_WORKERS, None)
    return [heterogeneity.summary_row("verify", f"{DIGITS_WORKERS}-worker ring", lam, 0.0, record)
            for record in digits_records]


def verify(rule: Any, *, mode: str = "quick", out: str | pathlib.Path | None = None, seed: int = 0,
           hyper: Mapping[str, Any] | None = None, baselines: Sequence[str] = BASELINES,
           sizes: Mapping[str, Any] | None = None, budget: int | None = None,
           progress: bool = True, digits: bool = False) -> VerifyReport:
    """Verify ``rule`` (module docstring): the class audit, then the three experiments beside
    ``baselines``; writes the report files into ``out`` (default ``./verify-<name>``) and returns them.

    ``mode``: "quick" (<= 3 minutes on 2 cores), "full", or "tiny" (tests). ``hyper``: the rule's
    hyper-parameter grids it is tuned over (lists are grid axes, as in `algorithms.tune`). ``sizes``:
    `Settings` fields to override (e.g. ``{"comm_sizes": (6, 9, 12, 15)}``); ``budget``: one iteration cap
    for every run (overrides the mode's caps). ``seed``: the seed of every run (sampling: seed, seed+1, ...).
    ``digits``: also run the digits term (module docstring, item 5; about 15 s of CPU more, measured).

    Example (tiny sizes; ``mode="quick"`` is what the CLI runs):
        >>> import tempfile, paper_figures.verify as v
        >>> report = v.verify("exact_diffusion", mode="tiny", out=tempfile.mkdtemp(), baselines=(),
        ...                   progress=False)  # doctest: +SKIP
        >>> report.exit_status  # doctest: +SKIP
        0
    """
    started = time.perf_counter()
    if mode not in MODES:
        raise VerifyInputError(f"mode must be one of {tuple(MODES)}; got mode={mode!r}")
    settings = MODES[mode]
    if sizes:
        unknown = set(sizes) - {f.name for f in dataclasses.fields(Settings)}
        if unknown:
            raise VerifyInputError(f"unknown sizes field(s) {sorted(unknown)}; known: "
                                   f"{[f.name for f in dataclasses.fields(Settings)]}")
        settings = dataclasses.replace(settings, **dict(sizes))
    if budget is not None:
        if isinstance(budget, bool) or int(budget) != budget or budget < 1:
            raise VerifyInputError(f"budget must be a positive integer; got budget={budget!r}")
        settings = dataclasses.replace(settings, comm_cap=int(budget), gap_cap=int(budget),
                                       broom_cap=int(budget))
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise VerifyInputError(f"seed must be a non-negative integer; got seed={seed!r}")
    if not isinstance(digits, bool):
        raise VerifyInputError(f"digits must be True or False; got digits={digits!r}")
    _check_settings(settings)
    allowed = (*BASELINES, "dpsgd", "dsgt")
    for baseline in baselines:
        if baseline not in allowed:
            raise VerifyInputError(f"baselines must be among {allowed}; got {baseline!r}")
    cls = load_rule(rule)
    name, added = _registered(cls)
    out_dir = pathlib.Path(out if out is not None else f"verify-{name}")
    out_dir.mkdir(parents=True, exist_ok=True)
    records_path = out_dir / "records.jsonl"
    try:
        audited = audit(name, n=settings.audit_n, iterations=settings.audit_iterations, seed=int(seed))
        with RecordWriter(records_path) as writer:
            writer.append(to_jsonable({"key": f"audit:{name}:{fingerprint(cls)}", "runner": "verify.audit",
                                       "audit": audited}))
        atomic_write_bytes(out_dir / "audit.json", json.dumps(to_jsonable(audited), indent=2).encode())
        records: list[dict[str, Any]] = []
        errors: list[str] = []
        if audited["passed"]:
            levels = sweep_points(name, fingerprint(cls), settings, seed=int(seed), hyper=dict(hyper or {}),
                                  baselines=baselines)
            if digits:
                levels["digits"] = digits_points(name, fingerprint(cls), settings, seed=int(seed),
                                                 hyper=dict(hyper or {}), baselines=baselines)
            for term, points in levels.items():
                runner = heterogeneity.tuned_curve if term == "digits" else measure
                try:
                    records += run_sweep(points, records_path, runner=runner, executor=SerialExecutor(),
                                         progress=progress, desc=f"verify {name}: {term}")
                except RuntimeError as exc:  # a baseline failed: keep going, say so
                    errors.append(f"{term}: {_one_line(exc)}")
        verdicts, fits = _verdicts(name, records, settings, audited, baselines, mode)
        files = [records_path, out_dir / "audit.json"]
        files += _write_exponents(out_dir, fits, verdicts, name)
        digits_rows: list[dict[str, Any]] = []
        if digits and audited["passed"]:
            iterations = digits_curve_mode(settings, [name], int(seed)).iterations
            failed = [e for e in errors if e.startswith("digits:")]
            verdicts["digits"] = (f"error: {failed[0].removeprefix('digits: ')}" if failed
                                  else digits_verdict(name, records, iterations))
            digits_rows = _digits_rows(records)
            files += heterogeneity.write_table(digits_rows, out_dir, "digits")
        files += _plot(out_dir, name, records, settings)
        report = VerifyReport(rule=name, mode=mode, seed=int(seed), audit=audited, verdicts=verdicts,
                              fits=fits, records=records, files=files, errors=errors,
                              seconds=time.perf_counter() - started, digits=digits_rows)
        text = report_markdown(report, settings, cls)
        atomic_write_bytes(out_dir / "report.md", text.encode())
        report.files.insert(0, out_dir / "report.md")
        return report
    finally:
        if added:
            algorithms.unregister(name)


def _verdicts(name: str, records: Sequence[dict[str, Any]], settings: Settings, audited: dict[str, Any],
              baselines: Sequence[str], mode: str = "quick"
              ) -> tuple[dict[str, str], dict[str, dict[str, fit.RecordFit]]]:
    verdicts: dict[str, str] = {}
    fits: dict[str, dict[str, fit.RecordFit]] = {}
    if not audited["passed"]:
        failed = [c for c in audited["checks"] if not c["passed"]]
        verdicts["audit"] = "FAILED: " + "; ".join(f"{c['condition']}: {c['detail']}" for c in failed)
        return verdicts, fits
    verdicts["audit"] = "passed: " + "; ".join(c["condition"] for c in audited["checks"])
    for term, spec in TERMS.items():
        chosen = _fit_records(term, records, settings)
        fits[term] = {}
        for algorithm in [name, *[b for b in baselines if b != name]]:
            mine = [r for r in chosen if r["point"]["algorithm"] == algorithm]
            if mine:
                fits[term][algorithm] = fit.fit_records(fit_tail(mine, spec), spec["variable"])
        if name not in fits[term]:
            continue
        if term in (*COMMUNICATION_TERMS, "spectral_gap"):  # the workers' own models, no all-reduce
            mine = fit.worker_output([r for r in chosen if r["point"]["algorithm"] == name])
            fits[term][f"{name} (workers)"] = fit.fit_records(fit_tail(mine, spec), spec["variable"])
        source = "sampling" if term.startswith("sampling") else term
        below = below_bound([r for r in records if r["point"]["term"] == source], name)
        failed = [r["result"]["message"] for r in records
                  if r["point"]["term"] == source and r["point"]["algorithm"] == name
                  and r["result"].get("status") == "error"]
        advice = ("the full mode's sizes are the largest verify runs: the figures' sweeps, or `sizes=`, go "
                  "further" if mode == "full" else "run without --quick for larger ones")
        verdict = term_verdict(term, fits[term][name], fits[term].get(spec["reference"]), below,
                               advice=advice)
        capped = _capped_where_reference_finished(chosen, name, spec["reference"], spec["variable"])
        if capped and not below and not verdict.startswith(VERDICT_MATCH):
            verdict = f"worse: {capped}"
        if failed:
            verdict = f"error: {failed[0]}"
        verdicts[term] = verdict
    return verdicts, fits


def _capped_where_reference_finished(records: Sequence[dict[str, Any]], name: str, reference: str,
                                     variable: str) -> str:
    """In words, the first x at which the rule hit the cap while the reference algorithm finished ("" if
    none): at these sizes the rule is slower than the reference by more than the cap allows."""
    x_of = fit.VARIABLES[variable]
    finished = {x_of(r): r["result"]["t_eps"] for r in records
                if r["point"]["algorithm"] == reference and fit.is_finished(r)}
    for record in sorted(records, key=x_of):
        result = record["result"]
        if record["point"]["algorithm"] == name and result.get("t_eps") is None \
                and result.get("status") == "max_iterations" and x_of(record) in finished:
            return (f"hit the iteration cap {record['point'].get('cap', result.get('cap'))} at {variable} = "
                    f"{x_of(record):.4g} where {reference} finished in {finished[x_of(record)]} iterations")
    return ""


def _write_exponents(out_dir: pathlib.Path, fits: Mapping[str, Mapping[str, fit.RecordFit]],
                     verdicts: Mapping[str, str], name: str) -> list[pathlib.Path]:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["term", "algorithm", "variable", "measured", "ci_low", "ci_high", "runs_fitted",
                     "unfinished", "optimal", "verdict"])
    for term, by_algorithm in fits.items():
        for algorithm, record_fit in by_algorithm.items():
            f = record_fit.fit
            writer.writerow([term, algorithm, TERMS[term]["variable"],
                             "" if f is None else f"{f.slope:.6g}", "" if f is None else f"{f.ci_low:.6g}",
                             "" if f is None else f"{f.ci_high:.6g}", 0 if f is None else f.n_points,
                             record_fit.unfinished, TERMS[term]["optimal"],
                             verdicts.get(term, "") if algorithm == name else ""])
    path = out_dir / "exponents.csv"
    atomic_write_bytes(path, buffer.getvalue().encode())
    return [path]


def _series(records: Sequence[dict[str, Any]], term: str, algorithm: str, x_of: Any
            ) -> tuple[list[float], list[float]]:
    xs, ys = [], []
    for record in records:
        if record["point"]["term"] == term and record["point"]["algorithm"] == algorithm \
                and record["result"].get("t_eps") is not None:
            xs.append(x_of(record))
            ys.append(float(record["result"]["t_eps"]))
    order = np.argsort(xs)
    return [xs[i] for i in order], [ys[i] for i in order]


def _plot(out_dir: pathlib.Path, name: str, records: Sequence[dict[str, Any]], settings: Settings
          ) -> list[pathlib.Path]:
    """report.png: T_eps of the rule and the baselines with the explicit bounds, one panel per sweep; with
    the digits term a sixth panel, its training loss against iterations (median and min-max band)."""
    import matplotlib.pyplot as plt

    fig, grid = plt.subplots(2, 3, figsize=(12.0, 7.2))  # no constrained layout: it costs seconds here
    fig.subplots_adjust(left=0.07, right=0.99, bottom=0.08, top=0.95, wspace=0.28, hspace=0.3)
    axes = list(grid.flat)
    algorithms_seen = list(dict.fromkeys(r["point"]["algorithm"] for r in records
                                         if r["point"]["term"] != "digits"))
    panels = [("communication", "n", fit.VARIABLES["n"], "n (path)"),
              ("communication_broom", "n", fit.VARIABLES["n"], f"n (broom, D = {settings.broom_diameter})"),
              ("spectral_gap", "inv_gap", fit.VARIABLES["inv_gap"], "1/(1 - lam) (lazy path)"),
              ("sampling_sigma2", "sigma2", fit.VARIABLES["sigma2"], "sigma^2 (Setting 1)"),
              ("sampling_nB", "nB", fit.VARIABLES["nB"], "n B (Setting 1)")]
    for ax, (term, _, x_of, label) in zip(axes, panels, strict=False):
        source = "sampling" if term.startswith("sampling") else term
        wanted = records if source != "sampling" else [
            r for r in records if r["point"]["term"] == "sampling"
            and (r["point"]["n"], r["point"]["batch"], r["point"]["p"]) in set(
                settings.sigma2_points if term == "sampling_sigma2" else settings.nb_points)]
        for algorithm in algorithms_seen:
            xs, ys = _series(wanted, source, algorithm, x_of)
            if xs:
                look = style(algorithm)
                if algorithm == name:
                    look.update(linewidth=2.2, markersize=8)
                ax.plot(xs, ys, **{k: v for k, v in look.items() if k != "label"}, label=look["label"])
        bound_points = sorted((x_of(r), explicit_bound(r)) for r in wanted if r["point"]["term"] == source
                              and r["point"]["algorithm"] == name and explicit_bound(r) is not None)
        if bound_points:
            ax.plot(*zip(*bound_points, strict=True), color="black", linestyle="--",
                    label="explicit lower bound")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(label)
        ax.set_title(term.replace("_", " "), fontsize=9)
        ax.grid(True, alpha=0.3)
    axes[0].set_ylabel("T_eps (iterations)")
    axes[3].set_ylabel("median T_eps over seeds (iterations)")
    if axes[0].get_legend_handles_labels()[0]:
        axes[0].legend(fontsize=6.5)
    digits_records = {r["point"]["algorithm"]: r for r in records if r["point"]["term"] == "digits"}
    if digits_records:
        heterogeneity.plot_curves(axes[5], digits_records, list(digits_records))
        axes[5].set_xlabel("iterations")
        axes[5].set_ylabel("training loss f(x-bar)")
        axes[5].set_title(f"digits MLP, {DIGITS_SHUFFLED:g}% shuffled, {DIGITS_WORKERS}-worker ring",
                          fontsize=9)
        axes[5].legend(fontsize=6.5)
    else:
        axes[5].set_axis_off()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90)
    plt.close(fig)
    path = out_dir / "report.png"
    atomic_write_bytes(path, buffer.getvalue())
    return [path]


def report_markdown(report: VerifyReport, settings: Settings, rule: type[algorithms.StepRule]) -> str:
    """report.md: the verdicts first, then the audit, the exponent table, and the run's parameters."""
    lines = [f"# decbounds verify: {report.rule}", "",
             f"Rule `{rule.__module__}.{rule.__qualname__}` (registry name `{report.rule}`), "
             f"mode `{report.mode}`, seed {report.seed}, {report.seconds:.0f} s. "
             f"Exit status {report.exit_status} "
             "(1: the audit failed or a lower bound was beaten).", "", "## Verdicts", "",
             "| term | verdict |", "|---|---|"]
    titles = {"audit": "class audit (A_B budget, zero-respecting)",
              "digits": f"digits MLP at {DIGITS_SHUFFLED:g}% shuffled (final training loss; no lower bound)",
              **{term: spec["title"] for term, spec in TERMS.items()}}
    for term, verdict in report.verdicts.items():
        lines.append(f"| {titles[term]} | {verdict} |")
    lines += ["", "## Class audit", "", f"{report.audit['instance']}, step {report.audit['step_size']:.4g}, "
              f"{report.audit['iterations']} iterations, seed {report.audit['seed']}.", ""]
    for check in report.audit["checks"]:
        mark = "pass" if check["passed"] else "FAIL"
        lines.append(f"- **{mark}** {check['condition']}: {check['detail']}")
    if report.fits:
        lines += ["", "## Exponents (log-log least squares, 95% t interval; finished runs only)", "",
                  "| term | algorithm | measured exponent | runs fitted (not finished) | optimal |",
                  "|---|---|---|---|---|"]
        for term, by_algorithm in report.fits.items():
            for algorithm, record_fit in by_algorithm.items():
                f = record_fit.fit
                measured = "n/a" if f is None else f"{f.slope:.2f} [{f.ci_low:.2f}, {f.ci_high:.2f}]"
                runs = 0 if f is None else f.n_points
                lines.append(f"| {term} | {algorithm} | {measured} | {runs} ({record_fit.unfinished}) "
                             f"| {TERMS[term]['optimal']:g} |")
        lines += ["", "## Measured T_eps", "", "| term | algorithm | x | T_eps (x-bar) | T_eps (workers) | "
                  "explicit bound | status |", "|---|---|---|---|---|---|---|"]
        for record in report.records:
            point, result = record["point"], record["result"]
            if point["term"] == "digits":
                continue
            x = {"communication": f"n={point.get('n')}",
                 "communication_broom": f"n={point.get('n')} D={point.get('D')}",
                 "spectral_gap": f"kappa={point.get('kappa')}",
                 "sampling": f"n={point.get('n')} B={point.get('batch')} p={point.get('p')}"}[point["term"]]
            bound = explicit_bound(record)
            lines.append(f"| {point['term']} | {point['algorithm']} | {x} | {_count(result.get('t_eps'))} | "
                         f"{_count(result.get('t_eps_local'))} | {'' if bound is None else f'{bound:.4g}'} | "
                         f"{result.get('status', '')} |")
    if report.digits:
        markdown, _ = heterogeneity.tuned_table(report.digits)
        lines += ["", f"## Digits MLP at {DIGITS_SHUFFLED:g}% shuffled ({DIGITS_WORKERS}-worker ring)", "",
                  "Each method tuned by the Figure 4 runner (`paper_figures.heterogeneity.tuned_curve`: the "
                  "step grid scored by the final training loss on the tuning seed, DeTAG also over "
                  "(eta, R)); final training loss f(x-bar) over every seed. Also in digits.md / digits.csv.",
                  "",
                  markdown.rstrip("\n")]
    if report.errors:
        lines += ["", "## Errors", "", *[f"- {e}" for e in report.errors]]
    lines += ["", "## Parameters", "", "```", json.dumps(to_jsonable(dataclasses.asdict(settings))), "```",
              "",
              "Files: report.md, report.png, records.jsonl (every run), audit.json, exponents.csv"
              + (", digits.md, digits.csv." if report.digits else "."), ""]
    return "\n".join(lines)


def _count(value: Any) -> Any:
    """An iteration count as written in the report: 1306 for 1306.0 (a median over one seed), 1306.5 kept."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


# ----------------------------------------------------------------------------------------------- the CLI


def _hyper_arguments(items: Sequence[str]) -> dict[str, Any]:
    grids: dict[str, Any] = {}
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or not key:
            raise VerifyInputError(f"--hyper expects KEY=V1,V2,...; got {item!r}")
        values = [json.loads(v) if v.strip() not in ("", "None") else None for v in text.split(",")] \
            if all(_is_json(v) for v in text.split(",")) else text.split(",")
        grids[key] = values if len(values) > 1 else values[0]
    return grids


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return text.strip() == "None"
    return True


def add_parser(subparsers: Any) -> None:
    """Register the ``verify`` subcommand."""
    parser = subparsers.add_parser(
        "verify", help="hold your step rule against the lower bounds (class audit, the paper's experiments)",
        description="Run a step rule through the class audit and the paper's experiments beside DeTAG, D2 "
                    "and centralized SGD; write report.md, report.png, records.jsonl, exponents.csv.")
    parser.add_argument("rule", help="module:Class, path/to/file.py:Class, or a registered algorithm name")
    parser.add_argument("--quick", action="store_true", help="small sizes (<= 3 minutes on 2 cores)")
    parser.add_argument("--tiny", action="store_true", help="smallest sizes (smoke tests)")
    parser.add_argument("--out", default=None, help="output directory (default ./verify-<name>)")
    parser.add_argument("--seed", type=int, default=0, help="seed of every run (default 0)")
    parser.add_argument("--hyper", action="append", default=[], metavar="KEY=V1,V2",
                        help="a hyper-parameter grid of the rule, tuned over (repeatable)")
    parser.add_argument("--baselines", default=",".join(BASELINES),
                        help="comma-separated algorithms measured beside the rule (default "
                             f"{','.join(BASELINES)}; empty: none)")
    parser.add_argument("--digits", action="store_true",
                        help="also the digits MLP at 0%% shuffled (Figure 2 setting) beside DeTAG and D2: "
                             "final training loss, no lower bound (about 15 s more)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    parser.set_defaults(func=main)
    parser.error = _one_line_error  # type: ignore[method-assign]  # a bad value is one line, not usage


def _one_line_error(message: str) -> None:
    """argparse's error for the verify subcommand (e.g. ``--seed x``): one line on stderr, exit status 2."""
    print(f"decbounds verify: error: {message}", file=sys.stderr)
    raise SystemExit(2)


def main(args: argparse.Namespace) -> int:
    """Run verify from parsed arguments; print the verdicts; return the exit status (2: bad input)."""
    try:
        if args.quick and args.tiny:
            raise VerifyInputError("--quick and --tiny are exclusive: choose one mode (neither: the full "
                                   "mode)")
        mode = "tiny" if args.tiny else "quick" if args.quick else "full"
        baselines = tuple(b.strip() for b in args.baselines.split(",") if b.strip())
        report = verify(args.rule, mode=mode, out=args.out, seed=args.seed,
                        hyper=_hyper_arguments(args.hyper), baselines=baselines,
                        progress=not args.no_progress, digits=args.digits)
    except VerifyInputError as exc:
        print(f"decbounds verify: error: {exc}", file=sys.stderr)
        return 2
    for term, verdict in report.verdicts.items():
        print(f"{term}: {verdict}")
    print(f"report: {report.files[0]}")
    return report.exit_status
