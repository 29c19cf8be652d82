"""Figure 2, the sampling term (§4.2, Setting 1): measured T_eps against sigma^2 and against n B, beside
the bounds.

The zero chain on every worker of the complete graph, queried through ``oracles.ZeroChainOracle`` with
reveal probability p (sigma^2 = 4 e^3 eps^2 / p, errata E23) and B queries per worker, at the admissible step
1/L (E19, E22). Each point runs ``SEEDS`` seeds in one batch; the median is compared with the bounds (they
hold with probability >= 1/2 per run, E21) and a capped seed counts as infinitely slow. The slopes +1 in
sigma^2 and -1 in n B show only where (T_c - 1)/(n B p) dwarfs the descent cost (E22).

Records: ``<out>/sampling/records.jsonl``; see docs/results/figures.md.
Run: ``python -m decbounds.paper_figures.sampling [--full | --tiny] [--out DIR]``.
"""

from __future__ import annotations

import functools
import math
import pathlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from decbounds.paper_figures import exponents
from decbounds.paper_figures.fit import ExponentRow, exponent_rows, fit_records, worker_output
from decbounds.paper_figures.plotting import (
    BOUND_STYLE,
    DEFAULT_OUT_DIR,
    figure_main,
    new_figure,
    panels,
    save_figure,
    style,
)
from decbounds.paper_figures.records import JSONValue, field_float, field_list, field_str
from decbounds.paper_figures.rule_traits import pinned_search
from decbounds.paper_figures.sweep import (
    Point,
    Record,
    RunOutput,
    SerialExecutor,
    default_executor,
    run_sweep,
)
from decbounds.paper_figures.tuning_reuse import tuned_grid

from decbounds import algorithms, bounds, instances, oracles

__all__ = [
    "BOUNDS_DRAWN",
    "CHAIN_LENGTH",
    "MODES",
    "NAME",
    "PREDICT",
    "SEEDS",
    "VARIABLE_OF",
    "exponent_table",
    "iteration_cap",
    "main",
    "make",
    "measure_point",
    "noise_level",
    "plot",
    "point_cost",
    "run_measurements",
    "seed_records",
    "sweep_points",
]

NAME = "sampling"

#: Chain length (T_c - 1 = 5 reveals; docs/errata.md E22 used 10, a shorter chain halves the cost).
CHAIN_LENGTH = 6
#: Seeds per point (docs/errata.md E22 asks for at least 16).
SEEDS = 16

#: The two sweeps: (n, B, p) points. "sigma2" varies p at n B = 4; "nB" varies n and B at fixed p.
MODES: dict[str, dict[str, Any]] = {
    "tiny": {
        "algorithms": ("centralized",), "chain_length": 3, "seeds": 16, "serial": True,
        "sigma2": [(2, 1, p) for p in (2e-2, 1e-2, 5e-3)],
        "nB": [(n, B, 1e-2) for n, B in ((2, 1), (4, 1), (2, 4))],
    },
    "quick": {
        "algorithms": ("detag",), "chain_length": CHAIN_LENGTH, "seeds": SEEDS, "serial": False,
        "sigma2": [(4, 1, p) for p in (5e-4, 2.5e-4, 1.25e-4)],
        "nB": [(n, B, 2.5e-4) for n, B in ((2, 1), (4, 1), (8, 1), (2, 4))],
    },
    "full": {
        "algorithms": ("detag", "centralized"), "chain_length": CHAIN_LENGTH, "seeds": SEEDS, "serial": False,
        "sigma2": [(4, 1, p) for p in (5e-4, 2.5e-4, 1.25e-4, 6.25e-5)],
        "nB": [(n, B, 1.25e-4) for n, B in ((2, 1), (4, 1), (8, 1), (16, 1), (2, 4), (4, 4))],
    },
}

#: Catalog entries evaluated for every record; the first two are drawn.
PREDICT: tuple[str, ...] = ("hard_instance_sampling", "hard_instance_sampling_sharp", "lower_bound_any",
                            "centralized_sgd", "detag")
BOUNDS_DRAWN: dict[str, dict[str, Any]] = {
    "hard_instance_sampling_sharp": {"label": "sharp explicit bound (errata E23)", "linestyle": "--"},
    "hard_instance_sampling": {"label": "explicit bound, paper's constant (Setting 1)", "linestyle": "-."},
}


def _mode(full: bool, tiny: bool) -> str:
    if full and tiny:
        raise ValueError("full and tiny are exclusive; choose one mode")
    return "full" if full else "tiny" if tiny else "quick"


def noise_level(p: float, epsilon: float) -> float:
    """sigma = 2 e^{3/2} eps / sqrt(p): the variance bound 4 e^3 eps^2 / p that an instance with reveal
    probability p meets (errata E23); ValueError unless p is in (0, 1].

    Parameters
    ----------
    p : float
        The instance's reveal probability.
    epsilon : float
        The target gradient norm.
    """
    if not 0.0 < p <= 1.0:
        raise ValueError(f"p must lie in (0, 1]; got p={p!r}")
    level: float = 2.0 * math.e**1.5 * epsilon / math.sqrt(p)
    return level


def iteration_cap(n: int, batch: int, p: float, chain_length: int) -> int:
    """16 (T_c - 1) / (1 - (1-p)^{nB}) + 5000: many times the expected reveal time plus the descent cost, so
    a seed reaches it with negligible probability (and is then counted, never dropped).

    Parameters
    ----------
    n : int
        Workers.
    batch : int
        Samples per worker and iteration (B).
    p : float
        The reveal probability.
    chain_length : int
        T_c, the zero chain's length.
    """
    reveal = 1.0 - (1.0 - p) ** (n * batch)
    return math.ceil(16.0 * (chain_length - 1) / reveal) + 5000


@functools.lru_cache(maxsize=8)
def _instance(n: int, p: float, chain_length: int) -> tuple[Any, Any, Any]:
    problem = instances.sampling_instance(n, T_c=chain_length, p=p)
    W = instances.gossip_matrix(problem.graph(), "metropolis") if n > 1 else None
    return problem, oracles.ZeroChainOracle(problem), W


def measure_point(point: Point) -> RunOutput:
    """The sweep runner: one algorithm at one (n, B, p), every seed side by side in one `run_batch`:
    ``t_eps`` the median over seeds (a capped seed counts as infinite; None if half are capped), per seed
    ``t_eps_seeds`` and ``status_seeds``, ``quartiles``, ``capped_seeds``; the same for the workers'
    own models.

    Parameters
    ----------
    point : Point
        One of `sweep_points`.
    """
    n, batch = int(field_float(point, "n")), int(field_float(point, "batch"))
    p = float(field_float(point, "p"))
    problem, oracle, W = _instance(n, p, int(field_float(point, "chain_length")))
    cap = int(field_float(point, "cap"))
    # one configuration: the admissible step 1/L, and the rule's own search pinned (R = 1, the other
    # searched hyper-parameters at their declared defaults: DeTAG's Alg. 3 eta and start)
    hyper: dict[str, Any] = pinned_search(field_str(point, "algorithm"), {"R": 1})
    tuned = algorithms.tune(field_str(point, "algorithm"), oracle, W, [1.0 / problem.smoothness],
                            seeds=list(range(int(field_float(point, "seeds")))), iterations=cap,
                            batch=batch, tol=problem.epsilon, **hyper)
    grid = tuned_grid(tuned)
    results = grid.runs
    t_eps = [result.t_eps for result in results]
    as_float = np.array([math.inf if t is None else float(t) for t in t_eps])
    quartiles = [float(q) for q in np.percentile(as_float, [25, 75])]
    local = [result.t_eps_local for result in results]
    local_float = np.array([math.inf if t is None else float(t) for t in local])
    local_median = float(np.median(local_float))
    result = {
        "t_eps": grid.score, "t_eps_seeds": t_eps,
        "quartiles": [q if math.isfinite(q) else None for q in quartiles],
        "t_eps_local": local_median if math.isfinite(local_median) else None, "t_eps_local_seeds": local,
        "capped_seeds": sum(t is None for t in t_eps), "cap": cap,
        "step_size": 1.0 / problem.smoothness, "hyper": {k: v for k, v in results[0].hyper.items()},
        "diverged": any(result.diverged for result in results),
        "status": "converged" if grid.score is not None else (
            "diverged" if all(result.diverged for result in results) else "max_iterations"),
        "status_seeds": [result.status for result in results],
    }
    params = {"n": n, "B": batch, "sigma": noise_level(p, problem.epsilon), "Delta": problem.Delta,
              "L": problem.L, "epsilon": problem.epsilon, "lam": 0.0, "D": 1, "varsigma0": 0.0,
              "p": p, "sigma_paper": problem.sigma, "T_c": problem.T_c}
    return {"result": result, "params": params}


def sweep_points(mode: str) -> dict[str, list[Point]]:
    """The points of each sweep ("sigma2", "nB") of a mode, one per algorithm and (n, B, p).

    Parameters
    ----------
    mode : str
        A key of `MODES` ("tiny", "quick" or "full").
    """
    settings = MODES[mode]
    chain_length = settings["chain_length"]
    sweeps = {}
    for sweep in ("sigma2", "nB"):
        sweeps[sweep] = [
            {"algorithm": name, "n": n, "batch": B, "p": p, "chain_length": chain_length,
             "seeds": settings["seeds"], "cap": iteration_cap(n, B, p, chain_length),
             "predict": list(PREDICT)}
            for name in settings["algorithms"] for n, B, p in settings[sweep]
        ]
    return sweeps


def run_measurements(out_dir: pathlib.Path, mode: str, *, progress: bool = True
                     ) -> dict[str, list[Record]]:
    """Run (or resume) both sweeps in one pass (shared points run once); records by sweep.

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
    sweeps = sweep_points(mode)
    everything = [point for points in sweeps.values() for point in points]
    # the slowest points (smallest n B p) first, so that two workers finish together
    everything.sort(key=lambda point: field_float(point, "n") * field_float(point, "batch")
                    * field_float(point, "p"))
    executor = SerialExecutor() if MODES[mode]["serial"] else default_executor(2)
    try:
        records = run_sweep(everything, path, runner=measure_point, executor=executor, progress=progress,
                            desc=NAME, cost=point_cost)
    finally:
        executor.shutdown(wait=True)
    by_key = {}
    for record in records:
        point = dict(record["point"])
        by_key[_point_id(point)] = record
    return {sweep: [by_key[_point_id(point)] for point in points] for sweep, points in sweeps.items()}


def point_cost(point: Point) -> float:
    """Rough CPU seconds of a point (about 20 microseconds per iteration of the cap for 16 seeds), for the
    pool's order.

    Parameters
    ----------
    point : Point
        One of `sweep_points`.
    """
    return 0.3 + 2e-5 * field_float(point, "cap") * (field_float(point, "seeds") / SEEDS)


def _point_id(point: Mapping[str, object]) -> tuple[object, ...]:
    return (point["algorithm"], point["n"], point["batch"], point["p"])


# ------------------------------------------------------------------------------------------------- fits


def seed_records(records: Sequence[Record]) -> list[Record]:
    """One record per seed (``result.t_eps``, ``t_eps_local`` and ``status`` that seed's), for
    `fit.fit_records` with medians.

    Parameters
    ----------
    records : sequence of Record
        Records of `measure_point` (``t_eps_seeds``, ``t_eps_local_seeds``, ``status_seeds``).
    """
    expanded: list[Record] = []
    for record in records:
        result = record["result"]
        for t_eps, local, status in zip(field_list(result, "t_eps_seeds"),
                                        field_list(result, "t_eps_local_seeds"),
                                        field_list(result, "status_seeds"), strict=True):
            seed: dict[str, JSONValue] = {**result, "t_eps": t_eps, "t_eps_local": local, "status": status}
            expanded.append({**record, "result": seed})
    return expanded


VARIABLE_OF: dict[str, str] = {"sigma2": "sigma2", "nB": "nB"}


def exponent_table(sweeps: dict[str, list[Record]]) -> list[ExponentRow]:
    """Fits of T_eps against sigma^2 and n B over every seed's run (the slope of the median, with seeds as
    replicates) against both explicit bounds, at x-bar and for the worker output.

    Parameters
    ----------
    sweeps : dict of str to list of Record
        `run_measurements`' records by sweep ("sigma2", "nB").
    """
    rows: list[ExponentRow] = []
    for output, convert in (("", list), (", worker output", worker_output)):
        for sweep, records in sweeps.items():
            expanded = convert(seed_records(records))
            for bound in ("hard_instance_sampling_sharp", "hard_instance_sampling"):
                rows += exponent_rows(f"{NAME} ({bound}{output})", expanded, VARIABLE_OF[sweep],
                                      predicted=bound)
    return rows


def _x(record: Record, sweep: str) -> float:
    params = record["params"]
    if sweep == "sigma2":
        return field_float(params, "sigma") ** 2
    return field_float(params, "n") * field_float(params, "B")


def plot(sweeps: dict[str, list[Record]], out_dir: pathlib.Path, mode: str) -> list[pathlib.Path]:
    """Panel (a): median T_eps against sigma^2; panel (b): against n B; IQR bars, bounds, fitted slopes.

    Parameters
    ----------
    sweeps : dict of str to list of Record
        `run_measurements`' records by sweep.
    out_dir : pathlib.Path
        The output folder.
    mode : str
        A key of `MODES`.
    """
    fig, axes = new_figure(1, 2, width=6.0, height=5.4)
    axes = panels(axes)
    names = MODES[mode]["algorithms"]
    offsets = {name: 1.0 + 0.04 * index for index, name in enumerate(names)}  # keep bars apart
    for ax, sweep in zip(axes, ("sigma2", "nB"), strict=True):
        records = sweeps[sweep]
        xs = np.array(sorted({_x(r, sweep) for r in records}))
        dense = np.geomspace(xs.min() / 1.3, xs.max() * 1.3, 60)
        reference = records[0]["params"]
        for bound, look in BOUNDS_DRAWN.items():
            values = _bound_curve(bound, dense, sweep, reference)
            ax.plot(dense, values, color=BOUND_STYLE["color"], linewidth=BOUND_STYLE["linewidth"],
                    linestyle=look["linestyle"], label=look["label"])
        for name in names:
            group = [r for r in records if r["point"]["algorithm"] == name]
            group.sort(key=lambda r: _x(r, sweep))
            look = style(name)
            x = np.array([_x(r, sweep) for r in group]) * offsets[name]
            median, low, high = (
                np.array([np.nan if value is None else value for value in values], dtype=float)
                for values in zip(*((r["result"]["t_eps"], *field_list(r["result"], "quartiles"))
                                    for r in group), strict=True)
            )
            fit = fit_records(seed_records(group), VARIABLE_OF[sweep])
            text = look["label"] + " (median, IQR)"
            if fit.fit is not None:
                text += f": slope {fit.fit.slope:.2f} [{fit.fit.ci_low:.2f}, {fit.fit.ci_high:.2f}]"
            ax.errorbar(x, median, yerr=[median - low, high - median], color=look["color"],
                        marker=look["marker"], linestyle="none", capsize=3, markersize=6, label=text)
            if fit.fit is not None:
                ax.plot(dense, fit.fit.predict(dense), color=look["color"], linewidth=0.8, alpha=0.6)
            for record, xi, yi in zip(group, x, median, strict=True):
                # once per point, right of the bars
                if field_float(record["params"], "B") > 1 and name == names[-1]:
                    ax.annotate(f"B = {record['params']['B']}", (xi, yi), fontsize=6.5, color=look["color"],
                                textcoords="offset points", xytext=(9, -3))
                capped = record["result"]["capped_seeds"]
                if capped:
                    ax.annotate(f"{capped} capped", (xi, yi if np.isfinite(yi) else record["result"]["cap"]),
                                fontsize=6, color=look["color"], textcoords="offset points", xytext=(4, 4))
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.grid(True, which="both", alpha=0.25)
        ax.set_ylabel(rf"$T_\varepsilon$ (iterations), median over {MODES[mode]['seeds']} seeds")
        ax.legend(fontsize=6.5, loc="upper center", bbox_to_anchor=(0.5, -0.16), frameon=False)
    first = sweeps["sigma2"][0]["params"]
    p_values = [field_float(r["params"], "p") for r in sweeps["sigma2"]]
    axes[0].set_xlabel(rf"$\sigma^2 = 4e^3\varepsilon^2/p$ (n = {first['n']}, B = {first['B']}; "
                       f"p from {max(p_values):g} to {min(p_values):g})")
    axes[0].set_title(rf"(a) sampling term against $\sigma^2$ (Setting 1, $T_c$ = {first['T_c']})",
                      fontsize=10)
    second = sweeps["nB"][0]["params"]
    pairs = ", ".join(f"{r['params']['n']}x{r['params']['B']}" for r in sweeps["nB"]
                      if r["point"]["algorithm"] == names[0])
    axes[1].set_xlabel(f"n B (workers x batch: {pairs}; p = {second['p']:g})")
    axes[1].set_title(r"(b) sampling term against $nB$", fontsize=10)
    return save_figure(fig, out_dir, NAME)


def _bound_curve(bound: str, x: np.ndarray, sweep: str, reference: dict[str, Any]) -> np.ndarray:
    """The catalog bound along the sweep variable, the other parameters held at `reference`."""
    rate = bounds.get(bound)
    values = []
    for xi in x:
        params = {key: reference[key] for key in ("n", "B", "sigma", "Delta", "L", "epsilon")}
        if sweep == "sigma2":
            params["sigma"] = math.sqrt(xi)
        else:  # n B enters only as the product; vary n with B = 1 (n need not be an integer in the formula)
            params["n"], params["B"] = 1, 1
            values.append(float(rate.evaluate(**params)) / xi)
            continue
        values.append(float(rate.evaluate(**params)))
    return np.array(values)


def make(out_dir: pathlib.Path = DEFAULT_OUT_DIR, *, full: bool = False, tiny: bool = False
         ) -> list[pathlib.Path]:
    """Run (or resume) both sweeps, draw the figure and write the exponent tables (Thm 1's sampling term;
    docs/theory.md §4.2; errata E21-E23, E34); returns the files written.

    Parameters
    ----------
    out_dir : pathlib.Path
        Output folder (created).
    full, tiny : bool
        The full sweep, or the test suite's seconds-long one (neither: quick).
    """
    mode = _mode(full, tiny)
    out_dir = pathlib.Path(out_dir)
    sweeps = run_measurements(out_dir, mode, progress=not tiny)
    files = plot(sweeps, out_dir, mode)
    files += exponents.write_figure_table(exponent_table(sweeps), out_dir, NAME)
    files += exponents.write_combined(out_dir)
    return files


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m decbounds.paper_figures.sampling [--full | --tiny] [--out DIR]``.

    Parameters
    ----------
    argv : sequence of str, optional
        The command-line arguments (default ``sys.argv[1:]``).
    """
    # The imported module's make, also under ``python -m``: record keys and pickled runners name the runner's
    # module, which would otherwise be __main__ and miss the records of ``python -m decbounds.paper_figures``.
    from decbounds.paper_figures import sampling as figure

    return figure_main(figure.make, "Figure 2: the sampling term, T_eps against sigma^2 and n B, Setting 1.",
                       argv)


if __name__ == "__main__":
    raise SystemExit(main())
