"""Topology beyond the spectral gap: which of 1 - lam and n_eff(gamma) orders the zoo by measured loss.

Every member of the topology zoo at one n (``instances.topology_zoo``; the static exponential graph here in
its symmetric Metropolis form, since D-PSGD gossips with a symmetric W) runs at one fixed, realistic step:

- (a, b) the noisy quadratic of Vogels, Hendrikx & Jaggi (homogeneous: every worker has the same quadratic,
  mu = L/2, d = 10; Gaussian gradient noise sigma = 1): the plateau mean_i f(x_i) - f* of the workers' own
  models, averaged over the second half of the run;
- (c, d) the digits MLP with fully shuffled data (homogeneous), mini-batches of 4: the training loss
  mean_i f(x_i) over the last checkpoints;
- (e, f) Cor. 2's path instance (``instances.communication_instance``, sigma = 0) at the admissible step
  1/L: T_eps of x_hat, where the lower bound says 1 - lam governs.

Methods: D-PSGD (adapt-then-combine, x <- W(x - eta g), the walk of n_eff) and gradient tracking
(``gt_dsgd``). Left panels: the measure against 1 - lam; right panels: against n_eff(gamma*) with gamma*
the decay of the grid whose n_eff ranks the members best (most negative Spearman correlation, chosen on all
seeds). Each label carries Spearman's rho (measure vs loss: negative = more of the measure, less loss) with
a 95% bootstrap interval over seeds. Records: one JSONL per figure (resumed); tables
``topology_zoo.csv`` and ``topology_correlations.csv`` (docs/topology.md).

Run: ``python -m decbounds.paper_figures.topology [--full | --tiny] [--out DIR]``.
"""

from __future__ import annotations

import functools
import pathlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.stats
from decbounds.algorithms.result import to_jsonable
from decbounds.instances.zoo import zoo_row
from decbounds.paper_figures.heterogeneity import make_executor, mode_name
from decbounds.paper_figures.plotting import (
    DEFAULT_OUT_DIR,
    atomic_write_bytes,
    figure_main,
    new_figure,
    panels,
    place_legend,
    save_figure,
    style,
)
from decbounds.paper_figures.records import field_dict, field_float, field_floats, field_str
from decbounds.paper_figures.sweep import Point, Record, RunOutput, run_sweep
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from decbounds import algorithms, instances, oracles

__all__ = ["GAMMAS", "MODES", "SERIES", "Correlation", "TopologyMode", "correlations", "figure_zoo", "main",
           "make", "measure_point", "points"]

#: The decays whose n_eff is measured against the loss (gamma* is chosen among them).
GAMMAS: tuple[float, ...] = (0.0, 0.5, 0.8, 0.9, 0.95, 0.98, 0.99, 0.995)

#: (problem, algorithm, step size, hyper-parameters) of each measured series.
SERIES: tuple[tuple[str, str, float, dict[str, str]], ...] = (
    ("quadratic", "dpsgd", 0.5, {"form": "atc"}),
    ("quadratic", "gt_dsgd", 0.2, {}),
    ("digits", "dpsgd", 0.5, {"form": "atc"}),
    ("digits", "gt_dsgd", 0.2, {}),
    ("path", "dpsgd", 0.0, {"form": "atc"}),  # step 0: the instance's own 1/L
)
_PROBLEM_TITLES = {"quadratic": "noisy quadratic: plateau of mean$_i$ f(x$_i$) - f*",
                   "digits": "digits MLP: training loss mean$_i$ f(x$_i$)",
                   "path": "Cor. 2 path instance, step 1/L: $T_\\varepsilon$"}


@dataclass(frozen=True)
class TopologyMode:
    """What one mode of the figure computes."""

    n: int
    seeds: tuple[int, ...]
    quadratic_iterations: int
    digits_iterations: int
    path_cap: int
    bootstrap: int
    checkpoints: int = 6


MODES: dict[str, TopologyMode] = {
    "tiny": TopologyMode(n=8, seeds=(0, 1), quadratic_iterations=60, digits_iterations=10, path_cap=200,
                         bootstrap=50, checkpoints=2),
    "quick": TopologyMode(n=16, seeds=(0, 1, 2), quadratic_iterations=400, digits_iterations=80,
                          path_cap=2000, bootstrap=1000),
    "full": TopologyMode(n=32, seeds=tuple(range(8)), quadratic_iterations=2000, digits_iterations=400,
                         path_cap=20000, bootstrap=2000),
}


@functools.lru_cache(maxsize=4)
def figure_zoo(n: int) -> dict[str, instances.Gossip]:
    """The zoo the figure runs: ``instances.topology_zoo(n)`` with the exponential graph made symmetric
    (Metropolis weights on its undirected version).

    Parameters
    ----------
    n : int
        Workers.

    Returns
    -------
    dict of str to Gossip
    """
    zoo = instances.topology_zoo(n)
    zoo["exponential"] = instances.gossip_matrix(instances.topology("exponential", n))
    return zoo


@functools.lru_cache(maxsize=2)
def _digits(n: int) -> instances.DigitsProblem:
    return instances.digits_problem(n, shuffled_percent=100, seed=0)


def points(mode: TopologyMode) -> list[Point]:
    """Every (series, member) of the figure.

    Parameters
    ----------
    mode : TopologyMode
        The size of the sweep (`MODES`).

    Returns
    -------
    list of Point
        `measure_point` points.
    """
    iterations = {"quadratic": mode.quadratic_iterations, "digits": mode.digits_iterations,
                  "path": mode.path_cap}
    return [{"figure": "topology", "problem": problem, "algorithm": algorithm, "step_size": step,
             "hyper": dict(hyper), "member": member, "n": mode.n,
             "seeds": list(mode.seeds) if problem != "path" else [0], "iterations": iterations[problem],
             "checkpoints": mode.checkpoints}
            for problem, algorithm, step, hyper in SERIES for member in figure_zoo(mode.n)]


def _loss_series(problem: Any, oracle: Any, W: instances.Gossip, point: Point, seeds: list[int],
                 f_star: float) -> tuple[list[float | None], list[str]]:
    """The workers' mean loss, averaged over the checkpoints of the run's second half, per seed."""
    iterations = int(field_float(point, "iterations"))
    count = int(field_float(point, "checkpoints"))
    checkpoints = set(np.linspace(iterations // 2, iterations, count).astype(int).tolist())
    losses: list[np.ndarray] = []

    def record(t: int, state: Any, ctx: Any) -> None:
        if t in checkpoints:
            with np.errstate(all="ignore"):
                values = np.asarray(problem.full_value(state.x), dtype=float)  # (n, k): f at each x_i
            losses.append(values.mean(axis=0) - f_star)

    results = algorithms.run_batch(field_str(point, "algorithm"), oracle, W,
                                   step_sizes=[field_float(point, "step_size")], seeds=seeds,
                                   iterations=iterations, record_every=iterations, callback=record, batch=4,
                                   **field_dict(point, "hyper"))
    table = np.array(losses) if losses else np.full((1, len(seeds)), np.nan)
    statuses = [r.status for r in results]
    plateaus: list[float | None] = [None if status == "diverged" or not np.all(np.isfinite(column))
                                    else float(column.mean()) for status, column in zip(statuses, table.T,
                                                                                        strict=True)]
    return plateaus, statuses


def measure_point(point: Point) -> RunOutput:
    """Sweep runner: one series on one zoo member (module docstring).

    Parameters
    ----------
    point : Point
        One of `points`.

    Returns
    -------
    RunOutput
        ``result``: the measured value per seed (``value``) and statuses; ``params``: the member's n, lam,
        D and n_eff at every gamma of `GAMMAS`.
    """
    n, member = int(field_float(point, "n")), field_str(point, "member")
    W = figure_zoo(n)[member]
    seeds = [int(seed) for seed in field_floats(point, "seeds")]
    problem_name = field_str(point, "problem")
    if problem_name == "path":
        problem = instances.communication_instance(n, T_c=3)
        run = algorithms.run(field_str(point, "algorithm"), problem, W, step_size=1.0 / problem.smoothness,
                             iterations=int(field_float(point, "iterations")), tol=problem.epsilon,
                             stop="average", **field_dict(point, "hyper"))
        values: list[float | None] = [None if run.t_eps is None else float(run.t_eps)]
        statuses = [run.status]
    elif problem_name == "quadratic":
        quadratic = instances.heterogeneous_quadratic(n, 10, 0.0, seed=0, L=1.0, mu=0.5)
        values, statuses = _loss_series(quadratic, oracles.GaussianOracle(quadratic, sigma=1.0), W, point,
                                        seeds, quadratic.f_star)
    else:
        digits = _digits(n)
        values, statuses = _loss_series(digits, oracles.FiniteSumOracle(digits), W, point, seeds, 0.0)
    row = zoo_row(member, W, GAMMAS)
    n_eff = {f"{gamma:g}": value for gamma, value in zip(GAMMAS, row.n_eff, strict=True)}
    params = {"n": n, "lam": row.lam, "gap": row.spectral_gap, "D": row.diameter, "n_eff": n_eff,
              "n_eff_worst": dict(zip(n_eff, row.n_eff_worst, strict=True))}
    return {"result": to_jsonable({"value": values, "status": statuses}), "params": params}


@dataclass(frozen=True)
class Correlation:
    """Spearman's rho between one measure and the measured loss over the zoo, with its bootstrap interval.

    Parameters
    ----------
    series : str
        "problem/algorithm".
    measure : str
        "1 - lam" or "n_eff".
    gamma : float or None
        n_eff's gamma (gamma*), None for 1 - lam.
    rho, low, high : float
        Spearman's rho and its 95% bootstrap interval over seeds (NaN where undefined).
    """

    series: str
    measure: str
    gamma: float | None
    rho: float
    low: float
    high: float


def _of_series(records: Sequence[Record], problem: str, algorithm: str) -> list[Record]:
    return [r for r in records if (r["point"]["problem"], r["point"]["algorithm"]) == (problem, algorithm)]


def _mean_value(record: Record) -> float:
    """The record's value over its seeds (NaN where none finished)."""
    finished = [float(v) for v in record["result"]["value"] if v is not None]
    return float(np.mean(finished)) if finished else float("nan")


def _spearman(x: np.ndarray, y: np.ndarray) -> float:
    keep = np.isfinite(x) & np.isfinite(y)
    if keep.sum() < 3 or np.ptp(x[keep]) == 0 or np.ptp(y[keep]) == 0:
        return float("nan")
    return float(scipy.stats.spearmanr(x[keep], y[keep]).statistic)


def correlations(records: Sequence[Record], bootstrap: int, seed: int = 0) -> list[Correlation]:
    """Spearman's rho of 1 - lam and of n_eff(gamma*) against each series' loss, with bootstrap intervals
    (seeds resampled with replacement, gamma* kept).

    Parameters
    ----------
    records : sequence of Record
        The sweep's records.
    bootstrap : int
        Resamples.
    seed : int, default 0
        The resampling's seed.

    Returns
    -------
    list of Correlation
        Two per series: 1 - lam, then n_eff at gamma*.
    """
    rng = np.random.default_rng(seed)
    found: list[Correlation] = []
    for problem, algorithm, _, _ in SERIES:
        group = _of_series(records, problem, algorithm)
        if not group:
            continue
        values = np.array([[np.nan if v is None else v for v in r["result"]["value"]] for r in group], float)
        gap = np.array([field_float(r["params"], "gap") for r in group])
        n_eff = {gamma: np.array([field_float(field_dict(r["params"], "n_eff"), f"{gamma:g}") for r in group])
                 for gamma in GAMMAS}
        mean = np.nanmean(values, axis=1) if np.isfinite(values).any() else values[:, 0]
        best = min(GAMMAS, key=lambda gamma: np.nan_to_num(_spearman(n_eff[gamma], mean), nan=2.0))
        name = f"{problem}/{algorithm}"
        for measure, gamma, x in (("1 - lam", None, gap), ("n_eff", best, n_eff[best])):
            rho = _spearman(x, mean)
            samples = []
            if values.shape[1] > 1:
                for _ in range(bootstrap):
                    pick = rng.integers(values.shape[1], size=values.shape[1])
                    with np.errstate(all="ignore"):
                        resampled = np.nanmean(values[:, pick], axis=1)
                    samples.append(_spearman(x, resampled))
            finite = np.array([s for s in samples if np.isfinite(s)])
            low, high = (np.quantile(finite, [0.025, 0.975]) if finite.size else (np.nan, np.nan))
            found.append(Correlation(name, measure, gamma, rho, float(low), float(high)))
    return found


def _verdict(found: list[Correlation]) -> dict[str, str]:
    """Per series: which measure ranks the zoo better (the more negative rho), or a tie."""
    verdicts = {}
    for series in dict.fromkeys(c.series for c in found):
        gap, neff = (next(c for c in found if c.series == series and c.measure == measure)
                     for measure in ("1 - lam", "n_eff"))
        if not (np.isfinite(gap.rho) and np.isfinite(neff.rho)) or abs(gap.rho - neff.rho) < 0.05:
            verdicts[series] = "tie"
        else:
            verdicts[series] = "n_eff" if neff.rho < gap.rho else "1 - lam"
    return verdicts


def plot(records: Sequence[Record], found: list[Correlation], out_dir: pathlib.Path, *, dpi: int = 150
         ) -> list[pathlib.Path]:
    """Draw the six panels (module docstring).

    Parameters
    ----------
    records : sequence of Record
        The sweep's records.
    found : list of Correlation
        From `correlations`.
    out_dir : pathlib.Path
        Output folder.
    dpi : int, default 150
        PNG resolution.

    Returns
    -------
    list of pathlib.Path
        The PNG and PDF.
    """
    fig, axes = new_figure(3, 2, width=4.6, height=3.0)
    axes = panels(axes)
    verdicts = _verdict(found)
    for row, problem in enumerate(("quadratic", "digits", "path")):
        for column, measure in enumerate(("1 - lam", "n_eff")):
            axis = axes[row, column]
            for name, algorithm, _, _ in SERIES:
                if name != problem:
                    continue
                group = _of_series(records, name, algorithm)
                correlation = next((c for c in found if c.series == f"{name}/{algorithm}"
                                    and c.measure == measure), None)
                if not group or correlation is None:
                    continue
                if measure == "1 - lam":
                    x = [field_float(r["params"], "gap") for r in group]
                else:
                    x = [field_float(field_dict(r["params"], "n_eff"), f"{correlation.gamma:g}")
                         for r in group]
                y = [_mean_value(r) for r in group]
                look = style(algorithm)
                interval = "" if not np.isfinite(correlation.low) else \
                    f" [{correlation.low:.2f}, {correlation.high:.2f}]"
                axis.scatter(x, y, color=look["color"], marker=look["marker"], s=22,
                             label=f"{look['label']}: $\\rho$ = {correlation.rho:.2f}{interval}")
                for xi, yi, r in zip(x, y, group, strict=True):
                    short = field_str(r["point"], "member").replace("_exponential", "-exp.")[:9]
                    axis.annotate(short, (xi, yi), fontsize=5.5, color="0.35", xytext=(2, 2),
                                  textcoords="offset points")
            gamma = next((c.gamma for c in found if c.series.startswith(problem) and c.measure == "n_eff"),
                         None)
            if measure == "1 - lam":
                axis.set_xscale("log")
                axis.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
                axis.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
                axis.xaxis.set_minor_formatter(NullFormatter())
            axis.set_xlabel("spectral gap $1-\\lambda$" if measure == "1 - lam"
                            else f"$n_{{eff}}(\\gamma^*)$, $\\gamma^*$ = {gamma:g}" if gamma is not None
                            else "$n_{eff}$")
            axis.set_ylabel("$T_\\varepsilon$" if problem == "path" else "loss")
            if problem == "quadratic":
                axis.set_yscale("log")
            said = ", ".join(f"{s.split('/')[1]}: {v}" for s, v in verdicts.items() if s.startswith(problem))
            axis.set_title(f"{_PROBLEM_TITLES[problem]}\nbetter predictor: {said}", fontsize="small")
            axis.grid(True, which="both", alpha=0.3)
    for panel in axes.flat:
        place_legend(panel, fontsize="xx-small")
    return save_figure(fig, out_dir, "topology", dpi=dpi)


def _tables(records: Sequence[Record], found: list[Correlation]) -> tuple[str, str]:
    members: dict[str, dict[str, object]] = {}
    for r in records:
        member = field_str(r["point"], "member")
        n_eff = {f"n_eff({gamma})": value for gamma, value in field_dict(r["params"], "n_eff").items()}
        row = members.setdefault(member, {"n": r["params"]["n"], "lam": r["params"]["lam"],
                                          "gap": r["params"]["gap"], "D": r["params"]["D"], **n_eff})
        values = [v for v in r["result"]["value"] if v is not None]
        row[f"{r['point']['problem']}/{r['point']['algorithm']}"] = float(np.mean(values)) if values else ""
    header = ["topology", *next(iter(members.values())).keys()] if members else ["topology"]
    lines = [",".join(header)] + [",".join([name] + [f"{row.get(k, '')}" if not isinstance(row.get(k), float)
                                                      else f"{row[k]:.6g}" for k in header[1:]])
                                  for name, row in members.items()]
    table = "\n".join(lines) + "\n"
    rows = ["series,measure,gamma,spearman,low,high"] + [
        f"{c.series},{c.measure},{'' if c.gamma is None else c.gamma},{c.rho:.4f},{c.low:.4f},{c.high:.4f}"
        for c in found]
    return table, "\n".join(rows) + "\n"


def make(out_dir: pathlib.Path = DEFAULT_OUT_DIR, *, full: bool = False, tiny: bool = False
         ) -> list[pathlib.Path]:
    """Run (or resume) the sweep and draw the figure; returns the PNG, PDF and the two tables.

    Parameters
    ----------
    out_dir : pathlib.Path
        Output folder (created; default ``paper_figures/out``).
    full : bool, default False
        The full sweep (``--full`` / ``FULL=1``); otherwise the quick one.
    tiny : bool, default False
        A seconds-long sweep for the test suite.

    Returns
    -------
    list of pathlib.Path

    References
    ----------
    Vogels, Hendrikx & Jaggi (2022), Beyond spectral gap; docs/topology.md.
    """
    mode = MODES[mode_name(full, tiny)]
    out_dir = pathlib.Path(out_dir)
    executor = make_executor(tiny)
    try:
        records = run_sweep(points(mode), out_dir / "topology" / "records.jsonl", runner=measure_point,
                            executor=executor, desc="topology", progress=not tiny)
    finally:
        executor.shutdown(wait=True)
    found = correlations(records, mode.bootstrap)
    files = plot(records, found, out_dir, dpi=60 if tiny else 150)
    table, correlation_table = _tables(records, found)
    files.append(atomic_write_bytes(out_dir / "topology_zoo.csv", table.encode()))
    files.append(atomic_write_bytes(out_dir / "topology_correlations.csv", correlation_table.encode()))
    return files


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m decbounds.paper_figures.topology [--full | --tiny] [--out DIR]``.

    Parameters
    ----------
    argv : sequence of str, optional
        The command-line arguments (default ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit status.
    """
    return figure_main(make, "Topology beyond the spectral gap: loss against 1 - lam and n_eff.", argv)


if __name__ == "__main__":
    raise SystemExit(main())
