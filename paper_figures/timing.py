"""Figure ``time``: seconds to eps on uneven clusters, beside Tyurin & Richtárik's time lower bound.

The simulated time to eps (`algorithms.run_timed`) of synchronous D-PSGD and DeTAG, Fragile, Amelie and
asynchronous SGD, against compute heterogeneity (h_i = i^alpha; one straggler) and link times, on the zero
chain and on digits; beside Thm 19's bound and the level game's median on the chain, Thm 1's expression on
digits. Records: ``<out>/time/records.jsonl``; table ``time_seconds.csv``; see docs/time.md.
Run: ``python -m decbounds.paper_figures.timing [--full | --tiny] [--out DIR]``.
"""

from __future__ import annotations

import csv
import functools
import io
import pathlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from decbounds.algorithms.result import to_jsonable
from decbounds.algorithms.timed import ASYNCHRONOUS_METHODS, run_timed
from decbounds.bounds import time_bounds
from decbounds.paper_figures.heterogeneity import make_executor, mode_name
from decbounds.paper_figures.plotting import (
    BOUND_STYLE,
    DEFAULT_OUT_DIR,
    atomic_write_bytes,
    figure_main,
    new_figure,
    save_figure,
    style,
)
from decbounds.paper_figures.records import Point, Record, RunOutput, field_float, field_int, field_str
from decbounds.paper_figures.sweep import run_sweep

from decbounds import instances, oracles

__all__ = ["METHODS", "MODES", "PROBLEMS", "SWEEPS", "TimeMode", "cluster_of", "main", "make",
           "measure_point", "points"]

METHODS = ("dpsgd", "detag", "fragile_sgd", "amelie_sgd", "async_sgd")
_LOOK = {"fragile_sgd": {"color": "tab:purple", "marker": "D", "label": "Fragile SGD"},
         "amelie_sgd": {"color": "tab:olive", "marker": "s", "label": "Amelie SGD"},
         "async_sgd": {"color": "tab:cyan", "marker": "P", "label": "asynchronous SGD"}}
#: The x-axis of each sweep: its label and the cluster parameter it sets.
SWEEPS = {"alpha": r"compute heterogeneity $\alpha$ ($h_i = i^\alpha$ s)",
          "straggler": "one straggler, slowed x",
          "link": r"link time $\rho$ on the ring (s)"}
#: Per problem: the step size of every method, eps on ||grad f||, the iteration cap, steps between tests.
PROBLEMS = {"zero_chain": {"step": 0.1, "tol": 0.5, "cap": 20000, "check": 1},
            "digits": {"step": 4.0, "tol": 0.15, "cap": 3000, "check": 5}}
CHAIN, REVEAL = 6, 0.25  # the zero chain's T_c and p
BASE_LINK = 0.1  # rho on the ring in the compute sweeps (s)


@dataclass(frozen=True)
class TimeMode:
    """One size of the sweep: workers, seeds and the x-values of each (problem, sweep)."""

    n: int
    seeds: int
    values: dict[tuple[str, str], tuple[float, ...]]


MODES = {
    "tiny": TimeMode(4, 1, {("zero_chain", "straggler"): (1.0, 100.0)}),
    "quick": TimeMode(8, 3, {("zero_chain", "alpha"): (0.0, 1.0, 2.0),
                             ("zero_chain", "straggler"): (1.0, 10.0, 100.0, 1000.0),
                             ("zero_chain", "link"): (0.01, 0.1, 1.0, 10.0),
                             ("digits", "straggler"): (1.0, 100.0)}),
    "full": TimeMode(16, 5, {("zero_chain", "alpha"): (0.0, 0.5, 1.0, 1.5, 2.0, 3.0),
                             ("zero_chain", "straggler"): (1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0),
                             ("zero_chain", "link"): (0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0),
                             ("digits", "alpha"): (0.0, 1.0, 2.0),
                             ("digits", "straggler"): (1.0, 10.0, 100.0, 1000.0),
                             ("digits", "link"): (0.01, 0.1, 1.0, 10.0)}),
}


def cluster_of(sweep: str, value: float, n: int) -> instances.Cluster:
    """The cluster at one x of a sweep.

    Parameters
    ----------
    sweep : str
        A key of `SWEEPS`.
    value : float
        Its x.
    n : int
        Workers.
    """
    if sweep == "alpha":
        return instances.named_cluster("power", n, alpha=value, rho=BASE_LINK, topology="ring")
    if sweep == "straggler":
        return instances.named_cluster("straggler", n, slowdown=value, rho=BASE_LINK, topology="ring")
    return instances.named_cluster("equal", n, rho=value, topology="ring")


@functools.lru_cache(maxsize=4)
def _problem(name: str, n: int) -> oracles.Oracle:
    if name == "zero_chain":
        return oracles.ZeroChainOracle(instances.sampling_instance(n, T_c=CHAIN, p=REVEAL))
    return oracles.FiniteSumOracle(instances.digits_problem(n, shuffled_percent=100, seed=0,
                                                             model="logistic_nonconvex"))


def measure_point(point: Point) -> RunOutput:
    """Sweep runner: one method, one cluster, one seed; the simulated seconds to eps.

    Parameters
    ----------
    point : Point
        ``problem, sweep, value, n, method, seed``.
    """
    problem, n = field_str(point, "problem"), field_int(point, "n")
    settings = PROBLEMS[problem]
    cluster = cluster_of(field_str(point, "sweep"), field_float(point, "value"), n)
    method = field_str(point, "method")
    options = {"batch_size": n} if method in ASYNCHRONOUS_METHODS else {"stop": "average"}
    result = run_timed(method, _problem(problem, n), cluster, step_size=settings["step"],
                       iterations=int(settings["cap"]), tol=settings["tol"], seed=field_int(point, "seed"),
                       check_every=int(settings["check"]), **options)
    return {"result": to_jsonable({"seconds": result.t_eps_seconds, "t_eps": result.t_eps,
                                   "status": result.status, "events": result.counters.get("events")})}


def points(mode: TimeMode) -> list[Point]:
    """Every (problem, sweep, x, method, seed) of `mode`.

    Parameters
    ----------
    mode : TimeMode
        The sweep's size.
    """
    return [{"figure": "time", "problem": problem, "sweep": sweep, "value": value, "n": mode.n,
             "method": method, "seed": seed, "predict": []}
            for (problem, sweep), values in mode.values.items() for value in values for method in METHODS
            for seed in range(mode.seeds)]


#: CPU seconds of a digits run where they differ from 0.3.
_DIGITS_COST: dict[str, float] = {"dpsgd": 1.5, "detag": 1.5}


def _cost(point: Point) -> float:
    """Rough CPU seconds: the synchronous engine on digits dominates."""
    heavy = point["problem"] == "digits"
    return _DIGITS_COST.get(field_str(point, "method"), 0.3) if heavy else 0.05


@functools.lru_cache(maxsize=1)
def _digits_constants(n: int) -> tuple[float, float, float]:
    """(L, Delta, sigma) of the digits problem: its smoothness, f(x0) (the loss is >= 0), sigma at x0."""
    f = instances.digits_problem(n, shuffled_percent=100, seed=0, model="logistic_nonconvex")
    x0 = np.asarray(f.x0, dtype=float)
    mean = f.full_grad(x0)
    draws = np.stack([oracles.FiniteSumOracle(f).sample(np.broadcast_to(x0, (n, x0.size)).copy(),
                                                        np.random.default_rng(k))[0] for k in range(200)])
    sigma = float(np.sqrt(np.mean(np.sum((draws - mean) ** 2, axis=1))))
    return float(f.smoothness), float(np.mean(f.value(np.broadcast_to(x0, (n, x0.size))))), sigma


def lower_bounds(problem: str, sweep: str, value: float, n: int) -> tuple[float, float | None]:
    """(Thm 19's bound with c = 1, the level game's median or None) at one x, in seconds.

    Parameters
    ----------
    problem, sweep : str
        Keys of `PROBLEMS` and `SWEEPS`.
    value : float
        Its x.
    n : int
        Workers.
    """
    cluster = cluster_of(sweep, value, n)
    if problem == "zero_chain":
        game = time_bounds.level_game_times(cluster, chain_length=CHAIN, p=REVEAL, draws=400, seed=0)
        return (time_bounds.chain_time_lower_bound(cluster, chain_length=CHAIN, p=REVEAL),
                float(np.median(game)))
    L, Delta, sigma = _digits_constants(n)
    tol = PROBLEMS[problem]["tol"]
    return time_bounds.time_lower_bound(cluster, L=L, Delta=Delta, sigma=sigma, epsilon=tol,
                                        convention="grad_norm"), None


def _table(records: Sequence[Record], mode: TimeMode) -> list[dict[str, object]]:
    """One row per (problem, sweep, x, method): median, min, max seconds over seeds, the bounds."""
    rows = []
    for (problem, sweep), values in mode.values.items():
        for value in values:
            bound, game = lower_bounds(problem, sweep, value, mode.n)
            for method in METHODS:
                seconds = [r["result"]["seconds"] for r in records
                           if (r["point"]["problem"], r["point"]["sweep"], r["point"]["value"],
                               r["point"]["method"]) == (problem, sweep, value, method)]
                done = [s for s in seconds if s is not None]
                rows.append({"problem": problem, "sweep": sweep, "value": value, "method": method,
                             "runs": len(seconds), "reached": len(done),
                             "median": float(np.median(done)) if done else None,
                             "min": min(done) if done else None, "max": max(done) if done else None,
                             "bound_c1": bound, "level_game_median": game})
    return rows


def plot(rows: Sequence[dict[str, object]], mode: TimeMode, out_dir: pathlib.Path, *, dpi: int
         ) -> list[pathlib.Path]:
    """Draw the panels.

    Parameters
    ----------
    rows : sequence of dict
        From `_table`.
    mode : TimeMode
        The sweep's size.
    out_dir : pathlib.Path
        Output folder.
    dpi : int
        PNG resolution.
    """
    problems = [p for p in PROBLEMS if any(key[0] == p for key in mode.values)]
    fig, axes = new_figure(len(problems), len(SWEEPS), width=4.0, height=3.2, squeeze=False)
    for r, problem in enumerate(problems):
        for c, sweep in enumerate(SWEEPS):
            axis = axes[r, c]
            values = mode.values.get((problem, sweep))
            if not values:
                axis.text(0.5, 0.5, "full mode only", transform=axis.transAxes, ha="center", color="0.4")
                axis.set_axis_off()
                continue
            mine = [row for row in rows if (row["problem"], row["sweep"]) == (problem, sweep)]
            xs = np.array(values)
            for k, method in enumerate(METHODS):
                look = _LOOK.get(method) or style(method)
                pts = [row for row in mine if row["method"] == method and row["median"] is not None]
                if not pts:
                    continue
                shift = 1.0 + 0.04 * (k - 2) if sweep != "alpha" else 0.03 * (k - 2)
                x = np.array([row["value"] for row in pts], dtype=float)
                x = x * shift if sweep != "alpha" else x + shift
                med = np.array([row["median"] for row in pts], dtype=float)
                low = med - np.array([row["min"] for row in pts], dtype=float)
                high = np.array([row["max"] for row in pts], dtype=float) - med
                axis.errorbar(x, med, yerr=[low, high], color=look["color"], marker=look["marker"],
                              linestyle="-", linewidth=1.0, markersize=4, capsize=2, label=look["label"])
            by_x = {row["value"]: row for row in mine}
            bound = [by_x[v]["bound_c1"] for v in values]
            axis.plot(xs, bound, **{**BOUND_STYLE, "color": "black"},
                      label="Thm 19 on the chain, c = 1" if problem == "zero_chain"
                      else "Thm 1 expression, c = 1 (worst case of the class)")
            game = [by_x[v]["level_game_median"] for v in values]
            if game[0] is not None:
                axis.plot(xs, game, color="0.45", linestyle=":", linewidth=1.5, label="level game (median)")
            axis.set_yscale("log")
            if sweep != "alpha":
                axis.set_xscale("log")
            axis.set_xlabel(SWEEPS[sweep])
            axis.set_ylabel(f"seconds to eps ({'zero chain' if problem == 'zero_chain' else 'digits'})")
            axis.grid(True, which="both", alpha=0.3)
    entries: dict[str, object] = {}
    for axis in axes.flat:
        for handle, text in zip(*axis.get_legend_handles_labels(), strict=True):
            entries.setdefault(text, handle)
    fig.legend(list(entries.values()), list(entries), loc="outside lower center", ncol=4, fontsize="x-small",
               frameon=False)
    return save_figure(fig, out_dir, "time", dpi=dpi)


def _csv(rows: Sequence[dict[str, object]]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({key: f"{value:.6g}" if isinstance(value, float) else value
                         for key, value in row.items()})
    return out.getvalue()


def make(out_dir: pathlib.Path = DEFAULT_OUT_DIR, *, full: bool = False, tiny: bool = False
         ) -> list[pathlib.Path]:
    """Run (or resume) the sweep and draw the figure; returns the PNG, PDF and CSV.

    Parameters
    ----------
    out_dir : pathlib.Path
        Output folder (created).
    full, tiny : bool
        The full sweep, or the test suite's seconds-long one (neither: quick).
    """
    mode = MODES[mode_name(full, tiny)]
    out_dir = pathlib.Path(out_dir)
    executor = make_executor(tiny)
    try:
        records = run_sweep(points(mode), out_dir / "time" / "records.jsonl", runner=measure_point,
                            executor=executor, desc="time", progress=not tiny, cost=_cost)
    finally:
        executor.shutdown(wait=True)
    rows = _table(records, mode)
    files = plot(rows, mode, out_dir, dpi=60 if tiny else 150)
    files.append(atomic_write_bytes(out_dir / "time_seconds.csv", _csv(rows).encode()))
    return files


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m decbounds.paper_figures.timing [--full | --tiny] [--out DIR]``.

    Parameters
    ----------
    argv : sequence of str, optional
        The command-line arguments.
    """
    return figure_main(make, "Seconds to eps on uneven clusters, beside the time lower bound.", argv)


if __name__ == "__main__":
    raise SystemExit(main())
