"""Figure 1, the communication term: measured T_eps against n on Cor. 2's path instance (§4.3-§4.4,
``instances.communication_instance(n, T_c=3)``, Metropolis weights) and against the diameter D on Thm 1's
broom at fixed n, beside the explicit bound 1 + (T_c - 1) dist (errata E17) and Cor. 2's 1/sqrt(1 - lam).

Each series is tuned over admissible steps {1, 1/2} / L_local (errata E19) through `algorithms.tune`; a
rule with a tuning grid (DeTAG) also over its grid's first axis (R) with the others fixed; DeTAG with
Alg. 3 as printed is a `Variant` (errata E18). A series that hits the cap at some n is not run at larger n;
slopes are fitted over each series' `FIT_TAIL` largest finished n (errata E20). Records:
``<out>/communication/records.jsonl``; see docs/results/figures.md.
Run: ``python -m decbounds.paper_figures.communication [--full | --tiny] [--out DIR]``.
"""

from __future__ import annotations

import functools
import itertools
import math
import pathlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from decbounds.algorithms.rules import rounds_grid
from decbounds.paper_figures import exponents
from decbounds.paper_figures.fit import (
    ExponentRow,
    catalog_entry,
    exponent_rows,
    fit_records,
    is_diverged,
    is_finished,
    worker_output,
)
from decbounds.paper_figures.plotting import (
    BOUND_STYLE,
    DEFAULT_OUT_DIR,
    figure_main,
    new_figure,
    panels,
    place_legend,
    save_figure,
    style,
    value_ticks,
)
from decbounds.paper_figures.records import field_float, field_floats, field_int, field_str
from decbounds.paper_figures.rule_traits import phase_search
from decbounds.paper_figures.sweep import (
    Point,
    Record,
    RunOutput,
    SerialExecutor,
    default_executor,
    outcome,
    point_key,
    run_sweep,
    tune_both,
    winner_index,
)
from decbounds.paper_figures.tuning_reuse import tuned_grid

from decbounds import instances

__all__ = [
    "BROOM_SERIES",
    "CHAIN_LENGTH",
    "FIT_TAIL",
    "MODES",
    "NAME",
    "PAPER_START_PHASES",
    "PREDICT",
    "PREDICTED_BY",
    "SERIES",
    "STEP_FRACTIONS",
    "VARIANTS",
    "Variant",
    "cor2_anchor",
    "cor2_varsigma0",
    "detag_phases",
    "detag_phases_at",
    "diameter",
    "exponent_table",
    "gossip_contraction",
    "gossip_eigenvalues",
    "gossip_lam",
    "is_broom",
    "main",
    "make",
    "measure_point",
    "path_metropolis_eigenvalues",
    "path_metropolis_lam",
    "plot",
    "point_cost",
    "run_measurements",
    "series_rule",
    "series_search",
    "sweep_points",
    "tail_records",
    "tuned_status",
]

NAME = "communication"

#: Chain length of the zero chain (short: the hop count, not the chain, should dominate; docs/errata.md E20).
CHAIN_LENGTH = 3
#: Step sizes tried, as fractions of 1/L_local (all admissible, docs/errata.md E19).
STEP_FRACTIONS: tuple[float, ...] = (1.0, 0.5)
#: The phase lengths tried for DeTAG with Alg. 3 as printed (its expanding operator wins at small R); the
#: contracting series uses `detag_phases(n)`.
PAPER_START_PHASES: tuple[int, ...] = (1, 2, 4, 8)

#: The measured series: algorithm names of `algorithms`, plus the `VARIANTS`.
SERIES: tuple[str, ...] = ("centralized", "defacto", "detag", "detag_paper_start", "dsgt", "d2", "dpsgd")


@dataclass(frozen=True)
class Variant:
    """A series that runs ``rule`` with fixed ``options`` over its own phase grid ``phases`` (smallest first)
    instead of the rule's ``tuning_grid``, drawn as the rule with ``look`` over its style."""

    rule: str
    options: Mapping[str, Any]
    phases: tuple[int, ...]
    look: Mapping[str, Any]


#: Series that are a rule run another way: DeTAG with Alg. 3 as printed (z_{-1} = z_0; errata E18).
VARIANTS: dict[str, Variant] = {
    "detag_paper_start": Variant("detag", {"gossip": "two_tap", "start": "paper", "eta": None},
                                 PAPER_START_PHASES,
                                 {"linestyle": "--", "marker": "*",
                                  "label": "DeTAG, Alg. 3 as printed (expanding)"}),
}


def series_rule(series: str) -> str:
    """The algorithm a series runs (a `VARIANTS` entry's rule, else the series' own name).

    Parameters
    ----------
    series : str
        One of `SERIES`.
    """
    return VARIANTS[series].rule if series in VARIANTS else series


#: Catalog entries each series' exponent is compared with (fit.exponent_rows).
PREDICTED_BY: dict[str, str] = {name: catalog_entry(series_rule(name)) for name in SERIES}
#: Catalog entries evaluated for every record.
PREDICT: tuple[str, ...] = (
    "hard_instance_communication", "lower_bound_gossip", "lower_bound_any", "centralized_sgd", "defacto",
    "detag", "dsgt", "d2", "dpsgd",
)

#: The series measured on the broom (panel c).
BROOM_SERIES: tuple[str, ...] = ("centralized", "detag", "dsgt", "d2", "dpsgd")

#: Sizes and caps per mode. DeFacto needs 2 R ~ 2n iterations per descent step, so n starts at 3. The broom
#: panel runs at n = broom_n over `diameters` (D = n - 1 is the path; at n = 64 dist stops growing at D = 22).
MODES: dict[str, dict[str, Any]] = {
    "tiny": {"sizes": (3, 6, 12), "cap": 2000, "serial": True, "broom_n": 12, "diameters": (2, 11)},
    "quick": {"sizes": (3, 6, 12, 24, 48, 96, 192), "cap": 32000, "serial": False, "broom_n": 64,
              "diameters": (2, 4, 16, 63)},
    "full": {"sizes": (3, 6, 12, 24, 48, 96, 192, 384, 768, 1536, 3072), "cap": 48000, "serial": False,
             "broom_n": 64, "diameters": (2, 3, 4, 6, 8, 12, 16, 21, 22, 32, 48, 63)},
}

#: How many of a series' largest finished sizes enter its slope fit.
FIT_TAIL = 4


def _mode(full: bool, tiny: bool) -> str:
    if full and tiny:
        raise ValueError("full and tiny are exclusive; choose one mode")
    return "full" if full else "tiny" if tiny else "quick"


def path_metropolis_eigenvalues(n: int) -> np.ndarray:
    """The non-trivial eigenvalues 1/3 + (2/3) cos(pi k / n), k = 1..n-1 (descending), of the Metropolis
    path matrix (docs/theory.md §14); ValueError unless n is an integer >= 3.

    Parameters
    ----------
    n : int
        Nodes of the path.
    """
    if isinstance(n, bool) or int(n) != n or n < 3:
        raise ValueError(f"n must be an integer >= 3 (the path's inner nodes have degree 2); got n={n!r}")
    return 1.0 / 3.0 + (2.0 / 3.0) * np.cos(np.pi * np.arange(1, int(n)) / int(n))


def path_metropolis_lam(n: int) -> float:
    """lam = max |mu| = 1/3 + (2/3) cos(pi/n) of the Metropolis path.

    Parameters
    ----------
    n : int
        Nodes of the path, >= 3.
    """
    return float(np.max(np.abs(path_metropolis_eigenvalues(n))))


def cor2_varsigma0(n: int, epsilon: float, group_size: int | None = None) -> float:
    """Heterogeneity at x0 of the Setting 2 split, 2 eps sqrt(e (n/|I0| - 1)) (docs/theory.md §4.3-§4.4).

    Parameters
    ----------
    n : int
        Workers.
    epsilon : float
        The target gradient norm.
    group_size : int, optional
        |I0| (default ceil(n/3), the path's).
    """
    size = math.ceil(n / 3) if group_size is None else int(group_size)
    return 2.0 * epsilon * math.sqrt(math.e * (n / size - 1.0))


@functools.lru_cache(maxsize=32)
def _instance(n: int, chain_length: int, D: int | None = None) -> tuple[Any, Any]:
    problem = instances.communication_instance(n, D=D, T_c=chain_length)
    return problem, instances.gossip_matrix(problem.graph(), "metropolis")


@functools.lru_cache(maxsize=32)
def gossip_eigenvalues(n: int, D: int | None = None) -> np.ndarray:
    """The non-trivial eigenvalues of the Metropolis matrix: the path's closed form for D=None, else the
    broom of diameter D (dense eigvalsh, the consensus eigenvalue 1 dropped; n is small on the broom)."""
    if D is None:
        return path_metropolis_eigenvalues(n)
    _, W = _instance(n, CHAIN_LENGTH, D)
    return np.sort(np.linalg.eigvalsh(W.toarray()))[:-1]


def gossip_lam(n: int, D: int | None = None) -> float:
    """lam = max |mu| over `gossip_eigenvalues(n, D)` (the path's closed form for D=None).

    Parameters
    ----------
    n : int
        Workers, >= 3.
    D : int, optional
        The broom's diameter; None for the path.
    """
    return path_metropolis_lam(n) if D is None else float(np.max(np.abs(gossip_eigenvalues(n, D))))


def gossip_contraction(n: int, R: int, method: str, start: str, eta: float | None, D: int | None = None
                       ) -> float:
    """max |p_R(mu)| over the non-trivial eigenvalues of the Metropolis path (or broom): the worst-case
    consensus contraction of DeTAG's R-step gossip (> 1: it expands disagreement; docs/theory.md §7.2, E18).

    Parameters
    ----------
    n : int
        Workers, >= 3.
    R : int
        Gossip steps, >= 1.
    method, start : str
        As ``instances.multi_step_gossip_coefficients``.
    eta : float or None
        The two-tap coefficient (None: (G1)'s).
    D : int, optional
        The broom's diameter; None for the path.
    """
    schedule = instances.multi_step_gossip_coefficients(method, gossip_lam(n, D), R, eta=eta, start=start)
    return float(np.max(np.abs(instances.multi_step_polynomial(schedule, gossip_eigenvalues(n, D)))))


def series_search(series: str, n: int, cap: int, D: int | None = None
                  ) -> tuple[list[object], dict[str, object]] | None:
    """A series' phase search: its R values in run order and the options fixed beside them (a `VARIANTS`
    entry's, else the first axis and the others of its rule's ``tuning_grid`` at the graph's lam); None for
    a series tuned over the step size only.

    Parameters
    ----------
    series : str
        One of `SERIES`.
    n : int
        Workers.
    cap : int
        The iteration cap.
    D : int, optional
        The broom's diameter; None for the path.
    """
    if series in VARIANTS:
        variant = VARIANTS[series]
        return [R for R in variant.phases if R <= n], dict(variant.options)
    search = phase_search(series, n=n, lam=gossip_lam(n, D), cap=cap)
    return None if search is None else (search[1], search[2])


def detag_phases(n: int, D: int | None = None) -> list[int]:
    """DeTAG's R grid on the path (broom): the powers of two between 1/48 and 1/12 of 1/sqrt(1 - lam)
    (`detag_phases_at`; errata E20).

    Parameters
    ----------
    n : int
        Workers, >= 3.
    D : int, optional
        The broom's diameter; None for the path.
    """
    return detag_phases_at(gossip_lam(n, D))


def detag_phases_at(lam: float) -> list[int]:
    """The powers of two between 1/48 and 1/12 of 1/sqrt(1 - lam), and R = 1, 2 where that is below 2.

    Parameters
    ----------
    lam : float
        The gossip matrix's lam, in [0, 1).
    """
    return rounds_grid(lam)


def measure_point(point: Point) -> RunOutput:
    """The sweep runner: tuned T_eps of one series at one n (or broom diameter ``D``) through
    `algorithms.tune`: the winner (ties to the larger step), every configuration under ``grid`` and the
    worker-output T_eps (`sweep.tune_both`). A phase search runs its R values as branch-and-bound groups
    (``prune=True``; a pruned entry says ``stopped_at_incumbent``). ValueError for a series not of its graph.

    Parameters
    ----------
    point : Point
        One of `sweep_points`.
    """
    series, n = field_str(point, "series"), int(field_float(point, "n"))
    D = None if point.get("D") is None else int(field_float(point, "D"))
    allowed = SERIES if D is None else BROOM_SERIES
    if series not in allowed:
        raise ValueError(f"point['series'] must be one of {allowed}; got {series!r}")
    problem, W = _instance(n, int(field_float(point, "chain_length")), D)
    cap = int(field_float(point, "cap"))
    steps = [fraction / problem.smoothness for fraction in field_floats(point, "step_fractions")]
    options: dict[str, Any] = {}
    search = series_search(series, n, cap, D)
    setting: dict[str, object] = {}
    if search is not None:
        order, setting = search
        # in the search's order: contracting gossip larger R first (the best R grows with n); Alg. 3 as
        # printed R = 1 first
        phases = sorted(field_floats(point, "phases"), reverse=order != sorted(order))  # type: ignore[type-var]
        options = {"groups": [{"R": R} for R in phases], "prune": True, **setting}
    name = series_rule(series)
    # the zero chain's configurations have the same bits alone and in a batch: the worker-output search
    # reuses the x-bar runs (sweep.tune_worker_output)
    tuned, local = tune_both(name, problem, W, steps, tol=problem.epsilon, iterations=cap, reuse=True,
                             **options)
    grid: list[dict[str, Any]] = []
    for run, limit in zip(tuned_grid(tuned).runs, tuned_grid(tuned).limits, strict=True):
        entry: dict[str, Any] = dict(outcome(run))
        if search is not None:
            if "gossip" in run.hyper:  # a rule with a gossip schedule: its worst-case contraction
                R, gossip, start = run.hyper["R"], run.hyper["gossip"], run.hyper["start"]
                eta = setting.get("eta")
                if not (isinstance(R, int) and isinstance(gossip, str) and isinstance(start, str)
                        and (eta is None or isinstance(eta, float))):
                    raise TypeError(f"the resolved R, gossip, start and set eta must be an int, two names "
                                    f"and a float or None; got {R!r}, {gossip!r}, {start!r}, {eta!r}")
                entry["contraction"] = gossip_contraction(n, R, gossip, start, eta, D)
            entry["stopped_at_incumbent"] = run.t_eps is None and limit < cap
        grid.append(entry)
    best = grid[winner_index(tuned)] if tuned_grid(tuned).winner is not None else grid[0]
    result = {**best, "status": tuned_status(grid, best), "capped": best["t_eps"] is None, "cap": cap,
              "grid": grid, **local, "explicit_bound": int(problem.iteration_lower_bound),
              "dist": int(problem.dist)}
    varsigma0 = cor2_varsigma0(n, problem.epsilon, len(problem.groups[0]))
    params = {"n": n, "lam": gossip_lam(n, D), "D": n - 1 if D is None else D, "B": 1, "sigma": 0.0,
              "Delta": problem.Delta, "L": problem.L, "epsilon": problem.epsilon,
              "varsigma0": varsigma0, "varsigma": varsigma0}
    return {"result": result, "params": params}


def is_broom(record: Record) -> bool:
    """Whether a record is a broom point (panel c) rather than a path point.

    Parameters
    ----------
    record : Record
        A record of `measure_point`.
    """
    return record["point"].get("D") is not None


def sweep_points(mode: str) -> dict[str, list[Point]]:
    """The sweep's levels in run order, level name -> points: one per path size, then one "broom n=..."
    level with every broom series at every diameter.

    Parameters
    ----------
    mode : str
        A key of `MODES`.
    """
    settings = MODES[mode]
    base = {"chain_length": CHAIN_LENGTH, "cap": settings["cap"], "step_fractions": list(STEP_FRACTIONS),
            "predict": list(PREDICT)}
    levels: dict[str, list[dict[str, Any]]] = {}
    for n in settings["sizes"]:
        level = levels[f"path n={n}"] = []
        for series in SERIES:
            point = {**base, "series": series, "algorithm": series, "n": n}
            search = series_search(series, n, settings["cap"])
            if search is not None:
                point["phases"] = sorted(search[0])
            level.append(point)
    n = settings["broom_n"]
    broom = {**base, "n": n, "predict": [name for name in PREDICT if name != "hard_instance_communication"]}
    levels[f"broom n={n}"] = []
    for D in settings["diameters"]:
        for series in BROOM_SERIES:
            point = {**broom, "series": series, "algorithm": series, "D": D}
            search = series_search(series, n, settings["cap"], D)
            if search is not None:
                point["phases"] = sorted(search[0])
            levels[f"broom n={n}"].append(point)
    return levels


def run_measurements(out_dir: pathlib.Path, mode: str, *, progress: bool = True) -> list[Record]:
    """Run (or resume) the sweep as one `run_sweep`: each path point that did not hit the cap is followed by
    its series at the next size; broom points are independent. Records are returned level by level.

    Parameters
    ----------
    out_dir : pathlib.Path
        The output folder.
    mode : str
        A key of `MODES`.
    progress : bool, default True
        Show a progress bar.
    """
    path = pathlib.Path(out_dir) / NAME / "records.jsonl"
    levels = sweep_points(mode)
    path_levels = [points for label, points in levels.items() if label.startswith("path")]
    following: dict[tuple[str, float], dict[str, Any]] = {}
    for here, there in itertools.pairwise(path_levels):
        by_series = {point["series"]: point for point in there}
        following.update({(field_str(point, "series"), field_float(point, "n")): by_series[point["series"]]
                          for point in here
                          if point["series"] in by_series})
    broom = [point for label, points in levels.items() if not label.startswith("path") for point in points]

    def follow(record: Record) -> list[dict[str, Any]]:
        if is_broom(record) or record["result"]["capped"]:
            return []
        after = following.get((field_str(record["point"], "series"), field_float(record["point"], "n")))
        return [] if after is None else [after]

    executor = SerialExecutor() if MODES[mode]["serial"] else default_executor(2)
    try:
        found = run_sweep([*path_levels[0], *broom], path, runner=measure_point, executor=executor,
                          progress=progress, desc=NAME, follow=follow,
                          cost=functools.partial(point_cost, mode))
    finally:
        executor.shutdown(wait=True)
    by_key = {record["key"]: record for record in found}
    return [by_key[point_key(point, measure_point)] for points in levels.values() for point in points
            if point_key(point, measure_point) in by_key]


#: Rough CPU seconds of one point at n on the path with the full mode's cap (measured on the
#: 2-core machine), as (seconds at small n, growth per worker); only an order for the pool (`point_cost`).
_PATH_COST: dict[str, tuple[float, float]] = {
    "detag": (0.4, 1 / 24), "detag_paper_start": (0.3, 1 / 10), "defacto": (0.3, 1 / 25),
    "dpsgd": (0.1, 1 / 100), "dsgt": (0.1, 1 / 120), "d2": (0.1, 1 / 400), "centralized": (0.1, 1 / 1000),
}
#: The same on the broom of n = 64 workers, as (seconds, growth per unit of diameter).
_BROOM_COST: dict[str, tuple[float, float]] = {"detag": (1.5, 1 / 6), "dpsgd": (0.7, 0.0)}


def point_cost(mode: str, point: Point) -> float:
    """A point's priority in the pool, rough CPU seconds: a broom point's own cost; a path point's plus its
    series' at every larger size (the chain it starts), so that the longest chain starts first.

    Parameters
    ----------
    mode : str
        A key of `MODES`.
    point : Point
        One of `sweep_points`.
    """
    scale: float = MODES[mode]["cap"] / MODES["full"]["cap"]
    if point.get("D") is not None:
        base, growth = _BROOM_COST.get(field_str(point, "series"), (0.35, 0.0))
        return scale * (base + growth * field_float(point, "D"))
    base, growth = _PATH_COST.get(field_str(point, "series"), (0.3, 1 / 50))
    total: float = sum(base + growth * n for n in MODES[mode]["sizes"] if n >= field_float(point, "n"))
    return scale * total


# ------------------------------------------------------------------------------------------------- fits


def tail_records(records: Sequence[Record], tail: int = FIT_TAIL) -> list[Record]:
    """The records of the `tail` largest n at which a run finished (the fit's range), sorted by n.

    Parameters
    ----------
    records : sequence of Record
        One series' records.
    tail : int, default `FIT_TAIL`
        How many sizes.
    """
    finished = [r for r in records if is_finished(r)]
    return sorted(finished, key=lambda r: field_float(r["params"], "n"))[-tail:]


def diameter(record: Record) -> float:
    """The broom's diameter D of a record (the fit variable of panel c).

    Parameters
    ----------
    record : Record
        A broom record (`is_broom`).
    """
    return float(field_float(record["point"], "D"))


def exponent_table(records: Sequence[Record]) -> list[ExponentRow]:
    """Measured (tail fit) against predicted exponents of T_eps in n on the path, x-bar and worker output;
    then the broom's measured exponent in D (no catalog entry is a function of D alone: no prediction).

    Parameters
    ----------
    records : sequence of Record
        `run_measurements`' records.
    """
    rows: list[ExponentRow] = []
    path_records = [r for r in records if not is_broom(r)]
    broom = [r for r in records if is_broom(r)]
    for output, convert in (("", list), (" (worker output)", worker_output)):
        for series in SERIES:
            group = tail_records(convert([r for r in path_records if r["point"]["series"] == series]))
            if len(group) >= 2:
                rows += exponent_rows(NAME + output, group, "n", predicted=PREDICTED_BY)
        if broom:
            rows += exponent_rows(f"{NAME} (broom n={broom[0]['params']['n']}){output}", convert(broom),
                                  diameter)
    return rows


def tuned_status(grid: Sequence[Mapping[str, object]], best: Mapping[str, object]) -> str:
    """"converged" when the winner reached eps, "diverged" when every configuration diverged, else
    "max_iterations".

    Parameters
    ----------
    grid : sequence of mapping
        Every configuration's entry.
    best : mapping
        The winner's entry.
    """
    if best["t_eps"] is not None:
        return "converged"
    return "diverged" if all(entry["status"] == "diverged" for entry in grid) else "max_iterations"


def cor2_anchor(records: Sequence[Record]) -> float | None:
    """The scale c of the Cor. 2 guide c / sqrt(1 - lam): min T_eps sqrt(1 - lam) over the finished runs of
    path algorithms (centralized SGD is outside the class); None when none finished.

    Parameters
    ----------
    records : sequence of Record
        The path's records.
    """
    finished = [r for r in records if r["point"]["series"] != "centralized" and is_finished(r)]
    if not finished:
        return None
    return min(field_float(r["result"], "t_eps") * math.sqrt(1.0 - field_float(r["params"], "lam"))
               for r in finished)


def _by_series(records: Sequence[Record], key: str = "n") -> dict[str, list[Record]]:
    groups: dict[str, list[Record]] = {series: [] for series in SERIES}
    for record in records:
        groups[field_str(record["point"], "series")].append(record)
    for group in groups.values():
        group.sort(key=lambda r: field_float(r["params"], key))
    return groups


def _mark_capped(ax: Any, x: float, level: float, look: dict[str, Any], diverged: bool = False) -> None:
    """An open marker at the cap with an arrow up: the run hit the cap, its T_eps lies above. A diverged
    point (every configuration left the instance's region) is a large X at the cap instead."""
    if diverged:
        ax.plot([x], [level], marker="X", color=look["color"], markersize=10, linestyle="none",
                markeredgecolor="black", markeredgewidth=0.6)
        return
    ax.plot([x], [level], marker=look["marker"], markerfacecolor="none", color=look["color"], markersize=9,
            linestyle="none")
    ax.annotate("", xy=(x, level * 1.9), xytext=(x, level * 1.05),
                arrowprops={"arrowstyle": "->", "color": look["color"]})


def _plot_worker_output(ax: Any, group: Sequence[Record], x_of: Any, look: dict[str, Any],
                        scale: Any = None) -> None:
    """The worker-output T_eps of a series (every worker's own model eps-stationary, tuned on its own):
    the series' colour, dashed, hollow markers; `scale(record)` divides it (panel b)."""
    done = [r for r in worker_output(group) if is_finished(r)]
    if not done:
        return
    y = [field_float(r["result"], "t_eps") / (scale(r) if scale else 1.0) for r in done]
    ax.plot([x_of(r) for r in done], y, color=look["color"], marker=look["marker"], markerfacecolor="none",
            linestyle="--", linewidth=1.0, markersize=5, alpha=0.8)


def _plot_broom(ax: Any, records: Sequence[Record], cap: int) -> None:
    """Panel (c): T_eps against the broom's diameter D at fixed n, with 1 + (T_c - 1) dist(D)."""
    n = field_int(records[0]["params"], "n")
    diameters = sorted({field_float(r["point"], "D") for r in records})
    dense_d = np.arange(min(diameters), max(diameters) + 1)
    explicit = [1 + (CHAIN_LENGTH - 1) * instances.split_groups(n, int(d))[2] for d in dense_d]
    ax.plot(dense_d, explicit, **BOUND_STYLE, drawstyle="steps-mid",
            label=r"explicit bound $1+(T_c-1)\,\mathrm{dist}$ (broom)")
    for series, group in _by_series(records, "D").items():
        if not group:
            continue
        look = _series_style(series)
        done = [r for r in group if is_finished(r)]
        fit = fit_records(group, diameter)
        text = f"{look['label']}"
        if fit.fit is not None:
            text += f": slope {fit.fit.slope:.2f} [{fit.fit.ci_low:.2f}, {fit.fit.ci_high:.2f}]"
        ax.plot([r["point"]["D"] for r in done], [r["result"]["t_eps"] for r in done], color=look["color"],
                marker=look["marker"], linestyle=look["linestyle"], markersize=6, label=text)
        _plot_worker_output(ax, group, diameter, look)
        for record in group:
            if not is_finished(record):
                _mark_capped(ax, field_float(record["point"], "D"), cap, look, is_diverged(record))
    ax.axhline(cap, color="0.8", linewidth=0.8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(top=cap * 4)
    ax.set_xlabel(f"broom diameter D at n = {n} (Thm 1 instance, $T_c$ = {CHAIN_LENGTH})")
    ax.set_ylabel(r"$T_\varepsilon$ (iterations; tuned over admissible steps)")
    ax.set_title("(c) broom: $T_\\varepsilon$ against the diameter D", fontsize=10)
    ax.grid(True, which="major", alpha=0.3)
    value_ticks(ax, diameters)
    place_legend(ax, fontsize=6.5, title="slope in D over all finished D, 95% CI", title_fontsize=6.5)


def _series_style(series: str) -> dict[str, Any]:
    if series == "centralized":
        look = style("centralized")
        look["label"] += " (server; outside the class)"
        return look
    look = style(series_rule(series))
    look.update(VARIANTS[series].look if series in VARIANTS else {})
    return look


def plot(records: Sequence[Record], out_dir: pathlib.Path, mode: str) -> list[pathlib.Path]:
    """Draw panels (a) T_eps and bounds against n and (b) T_eps over the explicit bound on the path, and
    (c) T_eps against D on the broom; returns the PNG and PDF.

    Parameters
    ----------
    records : sequence of Record
        `run_measurements`' records.
    out_dir : pathlib.Path
        The output folder.
    mode : str
        A key of `MODES`.
    """
    broom = [r for r in records if is_broom(r)]
    records = [r for r in records if not is_broom(r)]
    fig, axes = new_figure(1, 3, width=6.0, height=5.6)
    ax, ax_ratio, ax_broom = panels(axes)
    groups = _by_series(records)
    sizes = sorted({field_int(r["params"], "n") for r in records})
    cap = MODES[mode]["cap"]
    # multiples of 3 only: there ceil(n/3) = n/3 and the hop count n/3 + 1 has no rounding wiggle
    dense_n = 3 * np.unique(np.round(np.geomspace(max(1, min(sizes) // 3), max(sizes) // 3, 200)).astype(int))
    explicit = np.array([1 + (CHAIN_LENGTH - 1) * (k - 2 * math.ceil(k / 3) + 1) for k in dense_n])
    shape = 1.0 / np.sqrt(1.0 - np.array([path_metropolis_lam(int(k)) for k in dense_n]))
    scale = cor2_anchor(records)
    if scale is not None:
        ax.plot(dense_n, scale * shape, color="0.6", linestyle=":", linewidth=1.5,
                label=r"Cor. 2 shape $\propto 1/\sqrt{1-\lambda}$ (scaled to touch the path algorithms)")
    ax.plot(dense_n, explicit, **BOUND_STYLE, label=r"explicit bound $1+(T_c-1)\,\mathrm{dist}$ (errata E17)")
    notes = []
    for series, group in groups.items():
        if not group:
            continue
        look = _series_style(series)
        done = [r for r in group if is_finished(r)]
        capped = [r for r in group if not is_finished(r)]
        fit = fit_records(tail_records(group), "n")
        text = f"{look['label']}"
        if fit.fit is not None:
            text += f": slope {fit.fit.slope:.2f} [{fit.fit.ci_low:.2f}, {fit.fit.ci_high:.2f}]"
        x = [r["params"]["n"] for r in done]
        y = [r["result"]["t_eps"] for r in done]
        ratio = [field_float(r["result"], "t_eps") / field_float(r["result"], "explicit_bound") for r in done]
        common = {"color": look["color"], "marker": look["marker"], "linestyle": look["linestyle"]}
        ax.plot(x, y, **common, markersize=6, label=text)
        ax_ratio.plot(x, ratio, **common, markersize=6)
        _plot_worker_output(ax, group, lambda r: r["params"]["n"], look)
        _plot_worker_output(ax_ratio, group, lambda r: r["params"]["n"], look,
                            lambda r: r["result"]["explicit_bound"])
        for record in capped:
            n = field_int(record["params"], "n")
            _mark_capped(ax, n, cap, look, is_diverged(record))
            _mark_capped(ax_ratio, n, cap / field_float(record["result"], "explicit_bound"), look,
                         is_diverged(record))
            skipped = [k for k in sizes if k > n]
            if skipped:
                notes.append(f"{look['label']}: {'diverged' if is_diverged(record) else 'capped'} at n={n}, "
                             f"not run at n>{n}")
    # in the legend, not written on the panel, where the capped series' markers sit
    ax.axhline(cap, color="0.6", linewidth=0.8,
               label=f"cap {cap:,} iterations (open marker + arrow: cap hit)")
    for axis in (ax, ax_ratio):
        axis.set_xscale("log")
        axis.set_yscale("log")
        axis.set_xlabel("workers n on the path (Cor. 2 instance, $T_c$ = 3)")
        axis.grid(True, which="major", alpha=0.3)
    ax.set_ylabel(r"$T_\varepsilon$ (iterations; tuned over admissible steps)")
    ax.set_title("(a) communication term: measured $T_\\varepsilon$ against the bounds", fontsize=10)
    ax.set_ylim(top=cap * 4)
    ax_ratio.axhline(1.0, **BOUND_STYLE)
    ax_ratio.set_ylabel(r"$T_\varepsilon$ / explicit bound")
    ax_ratio.set_title("(b) distance to the explicit lower bound", fontsize=10)
    note = ("Slopes: least squares on each series' 4 largest finished n, 95% CI (x-bar output).\n"
            "Solid: T_eps at x-bar; dashed, hollow: every worker's own model eps-stationary (tuned on "
            "its own).\nOpen marker + arrow: cap hit; X: diverged (never fitted, never anchors a guide).")
    if notes:
        note += "\n" + "\n".join(notes)
    low = min([0.5] + [field_float(r["result"], "t_eps") / field_float(r["result"], "explicit_bound")
                       for r in records if is_finished(r)])
    ax_ratio.set_ylim(bottom=low / 12.0)  # room for the note under the data
    ax_ratio.text(0.02, 0.02, note, transform=ax_ratio.transAxes, fontsize=6.5, va="bottom", color="0.3")
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=3, fontsize=7, frameon=False)
    if broom:
        _plot_broom(ax_broom, broom, cap)
    else:
        ax_broom.set_axis_off()
    return save_figure(fig, out_dir, NAME)


def make(out_dir: pathlib.Path = DEFAULT_OUT_DIR, *, full: bool = False, tiny: bool = False
         ) -> list[pathlib.Path]:
    """Run (or resume) the sweep, draw the figure and write the exponent tables (Thm 1, Cor. 2;
    docs/theory.md §4.3-§4.4); returns the files written.

    Parameters
    ----------
    out_dir : pathlib.Path
        Output folder (created).
    full, tiny : bool
        The full sweep, or the test suite's seconds-long one (neither: quick).
    """
    mode = _mode(full, tiny)
    out_dir = pathlib.Path(out_dir)
    records = run_measurements(out_dir, mode, progress=not tiny)
    files = plot(records, out_dir, mode)
    rows = exponent_table(records)
    files += exponents.write_figure_table(rows, out_dir, NAME)
    files += exponents.write_combined(out_dir)
    return files


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m decbounds.paper_figures.communication [--full | --tiny] [--out DIR]``; the exit status.

    Parameters
    ----------
    argv : sequence of str, optional
        The command-line arguments (default ``sys.argv[1:]``).
    """
    # The imported module's make, also under ``python -m``: record keys and pickled runners name the runner's
    # module, which would otherwise be __main__ and miss the records of ``python -m decbounds.paper_figures``.
    from decbounds.paper_figures import communication as figure

    return figure_main(figure.make, "Figure 1: the communication term, T_eps against n on the path.", argv)


if __name__ == "__main__":
    raise SystemExit(main())
