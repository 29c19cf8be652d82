"""Communication compression: T_eps and bits-to-eps against the compression factor 1/delta (= 1 + omega)
for the compressed methods, beside uncompressed D-PSGD, DSGT and DeTAG (docs/theory.md §18), with exact
gradients (sigma = 0) and with the oracle's noise (sigma = `CompressionMode.sigmas`).

Instance: ``instances.heterogeneous_nonconvex(n, d, varsigma=1)`` over the Metropolis ring; eps = `tol` on
||grad f(x_hat)|| (stop="average"). Series: CHOCO-SGD and BEER with top-k (delta = k/d), BEER with random-k
(omega = d/k - 1, used as C/(1 + omega): delta = k/d again). D-PSGD runs in the adapt-then-combine form
CHOCO-SGD reduces to at C = identity, gamma = 1 (`BASELINE_HYPER`), so 1/delta = 1 compares like with like.

Each point runs every seed of the mode; it is tuned (``algorithms.tune``, winner by the median over the
seeds, branch and bound) over `steps` and gamma = c delta (capped at 1) for c in `GAMMA_FACTORS`. The
figure plots the median with the seeds' 10-90 % range. A seed moves random-k's draws and the oracle's
noise: top-k at sigma = 0 gives one value on every seed.

Fits (`power_law_fit`): a power law in 1/delta is fitted only on the points above the flat part (median
more than `FLAT_FACTOR` times the one at 1/delta = 1, where the uncompressed rate dominates) and claimed
only when there are 3 or more and the line passes within `FIT_FACTOR` of every median fitted (or inside its
seeds' range); otherwise the table and legend say why none is claimed. Bits-to-eps is fitted on the same
points. See docs/results/figures.md, "Communication compression".

Outputs: ``compression.png/.pdf``, ``compression_exponents.md/.csv``, ``compression_fits.md`` (the claims
and why none), ``compression_teps.csv``; records in ``<out>/compression/records.jsonl`` (resumable).

Run: ``python -m decbounds.paper_figures.compression [--full | --tiny] [--out DIR]``.
"""

from __future__ import annotations

import csv
import functools
import io
import math
import pathlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import matplotlib.ticker
import numpy as np
from decbounds.algorithms.result import to_jsonable
from decbounds.paper_figures import exponents, fit
from decbounds.paper_figures.heterogeneity import make_executor, mode_name
from decbounds.paper_figures.plotting import (
    DEFAULT_OUT_DIR,
    atomic_write_bytes,
    figure_main,
    new_figure,
    panels,
    save_figure,
    style,
)
from decbounds.paper_figures.records import (
    JSONValue,
    field_float,
    field_floats,
    field_int,
    field_ints,
    field_str,
    optional_dict,
    optional_float,
    optional_str,
)
from decbounds.paper_figures.sweep import Point, Record, RunOutput, run_sweep

from decbounds import algorithms, instances, oracles

__all__ = [
    "BASELINES",
    "BASELINE_HYPER",
    "FIT_FACTOR",
    "FLAT_FACTOR",
    "GAMMA_FACTORS",
    "INTERVAL",
    "MODES",
    "PREDICTED_BY",
    "SERIES",
    "CompressionMode",
    "exponent_rows",
    "inv_delta",
    "main",
    "make",
    "measure_point",
    "points",
    "power_law_fit",
]

#: The compressed series: label -> (algorithm, compressor name of ``algorithms.make_compressor``).
SERIES: dict[str, tuple[str, str]] = {
    "CHOCO-SGD, top-k": ("choco_sgd", "top_k"),
    "BEER, top-k": ("beer", "top_k"),
    "BEER, random-k": ("beer", "random_k"),
}
#: The uncompressed baselines (drawn as horizontal lines).
BASELINES: tuple[str, ...] = ("dpsgd", "dsgt", "detag")
#: A baseline's structural hyper-parameters: D-PSGD in the adapt-then-combine form CHOCO-SGD reduces to.
BASELINE_HYPER: dict[str, dict[str, str]] = {"dpsgd": {"form": "atc"}}
#: Catalog entry each series' slope in 1/delta is compared with.
PREDICTED_BY: dict[str, str] = {label: algorithm for label, (algorithm, _) in SERIES.items()}
#: Catalog entries evaluated for every compressed record.
PREDICT: tuple[str, ...] = ("choco_sgd", "beer", "huang2022_contractive_lower")
#: gamma = c delta (capped at 1) for these c.
GAMMA_FACTORS: tuple[float, ...] = (0.5, 1.0, 2.0, 4.0)
#: The percentiles of the seeds' T_eps drawn as a point's interval.
INTERVAL: tuple[float, float] = (10.0, 90.0)
#: A median within this factor of the one at 1/delta = 1 is on the flat part (left out of the fit).
FLAT_FACTOR = 1.25
#: A power law is claimed only if its line passes within this factor of every median fitted.
FIT_FACTOR = 1.15
VARSIGMA = 1.0
PROBLEM_SEED = 0


@dataclass(frozen=True)
class CompressionMode:
    """What one mode computes: sizes, k values, seeds per point and the oracle's noise levels."""

    n: int
    d: int
    kept: tuple[int, ...]  # k of top-k / random-k
    tol: float
    cap: int
    seeds: int
    sigmas: tuple[float, ...] = (0.0, 0.1)  # sigma of oracles.GaussianOracle; 0: exact gradients
    steps: tuple[float, ...] = (0.05, 0.1, 0.2, 0.4, 0.8)


MODES: dict[str, CompressionMode] = {
    "tiny": CompressionMode(n=8, d=8, kept=(8, 2), tol=1e-2, cap=600, seeds=3, steps=(0.1, 0.4)),
    "quick": CompressionMode(n=16, d=16, kept=(16, 8, 4, 2, 1), tol=5e-3, cap=2000, seeds=5),
    "full": CompressionMode(n=16, d=32, kept=(32, 16, 8, 4, 2, 1), tol=2e-3, cap=8000, seeds=20),
}


@functools.lru_cache(maxsize=8)
def _problem(n: int, d: int) -> Any:
    return instances.heterogeneous_nonconvex(n, d, VARSIGMA, seed=PROBLEM_SEED)


@functools.lru_cache(maxsize=8)
def _ring(n: int) -> Any:
    return instances.gossip_matrix(instances.topology("ring", n), "metropolis")


def inv_delta(record: Record) -> float:
    """The x-axis: 1/delta of the record's compressor (1 + omega for an unbiased one).

    Parameters
    ----------
    record : Record
        A record of `measure_point` (its ``params["delta"]``).
    """
    return 1.0 / float(field_float(record["params"], "delta"))


def _percentiles(values: Sequence[float | None]) -> tuple[float | None, float | None, float | None]:
    """Median and `INTERVAL` of per-seed values, a capped seed (None) counting as infinite."""
    as_float = np.array([math.inf if value is None else float(value) for value in values])
    with np.errstate(invalid="ignore"):  # inf - inf between two capped seeds: NaN, read as unbounded
        low, median, high = (float(q) for q in np.percentile(as_float, [INTERVAL[0], 50.0, INTERVAL[1]]))

    def bounded(q: float) -> float | None:
        return q if math.isfinite(q) else None

    return bounded(median), bounded(low), bounded(high)


def measure_point(point: Point) -> RunOutput:
    """Sweep runner: one series (or baseline) at one k and sigma, on every seed, tuned by the median.

    Parameters
    ----------
    point : Point
        One of `points`: ``n, d, algorithm, compressor`` (``"name:k"``, None for a baseline), ``sigma,
        seeds, steps, tol, cap``.

    Returns
    -------
    RunOutput
        ``result``: the median T_eps and bits to eps over the seeds with their `INTERVAL` (``t_eps_range``,
        ``bits_range``), each seed's T_eps (``t_eps_seeds``, None where capped), status, bits per
        iteration, the winning step and gamma; ``params``: the catalog parameters with delta (and omega).
    """
    n, d, algorithm = int(field_int(point, "n")), int(field_int(point, "d")), field_str(point, "algorithm")
    f, W = _problem(n, d), _ring(n)
    sigma = float(field_float(point, "sigma"))
    problem = oracles.GaussianOracle(f, sigma) if sigma > 0 else f
    hyper: dict[str, Any] = dict(optional_dict(point, "hyper") or {})
    delta = 1.0
    omega: float | None = 0.0  # None: a biased compressor (no omega)
    spec = optional_str(point, "compressor")
    if spec:
        compressor = algorithms.make_compressor(spec)
        delta = float(algorithms.contractive(compressor).delta(d))
        omega = float(compressor.omega(d)) if compressor.kind == "unbiased" else None
        # one group per gamma, largest first: branch and bound caps every later group at the best so far
        hyper = {"compressor": spec, "groups": [{"gamma": gamma} for gamma in
                                                 sorted({min(1.0, c * delta) for c in GAMMA_FACTORS},
                                                        reverse=True)]}
    cap = int(field_int(point, "cap"))
    search = dict(algorithms.rule_class(algorithm).default_search(f, W, cap))
    if "R" in search:  # a phased rule's own search, one group per R so that branch and bound prunes
        hyper.update({name: values for name, values in search.items() if name != "R"},
                     groups=[{"R": R} for R in search["R"]])
    best = algorithms.tune(algorithm, problem, W, grid=list(field_floats(point, "steps")),
                           seeds=list(field_ints(point, "seeds")), tol=float(field_float(point, "tol")),
                           iterations=cap, stop="average", prune=True, **hyper)
    grid = best.grid
    reached = grid is not None and grid.winner is not None
    seeds_t = [run.t_eps for run in grid.winner_runs] if grid is not None and grid.winner is not None else []
    if grid is not None and grid.winner is not None and None in seeds_t and grid.limits[grid.winner] < cap:
        # branch and bound stopped the winner's slower seeds at the best median so far: their T_eps
        # (the interval's upper end) needs the full cap
        searched = (set(hyper) | {key for group in hyper.get("groups", []) for key in group}) - {"groups"}
        # hyper-parameters as the tuner took them; run_batch checks their names and values
        again: dict[str, Any] = {key: best.hyper[key] for key in searched}
        seeds_t = [run.t_eps for run in algorithms.run_batch(
            algorithm, problem, W, step_sizes=[best.step_size], seeds=list(field_ints(point, "seeds")),
            iterations=cap, tol=float(field_float(point, "tol")), stop="average", **again)]
    per = best.counters["bits"] / best.iterations if reached and best.iterations else None
    median, low, high = _percentiles(seeds_t) if reached else (None, None, None)

    def bits(t: float | None) -> float | None:
        return None if t is None or per is None else t * per

    result = {"t_eps": median, "t_eps_range": [low, high], "t_eps_seeds": seeds_t,
              "status": "converged" if reached else best.status, "cap": cap,
              "bits": bits(median), "bits_range": [bits(low), bits(high)], "bits_per_iteration": per,
              "best": {"step_size": best.step_size, "gamma": best.hyper.get("gamma")} if reached else None}
    params = {"n": n, "lam": float(W.lam), "Delta": float(f.Delta), "L": float(f.smoothness),
              "epsilon": float(field_float(point, "tol")) ** 2,  # the entries' grad_norm_sq criterion
              "sigma": sigma, "B": 1, "varsigma": float(f.varsigma), "varsigma0": float(f.varsigma0),
              "delta": delta, **({} if omega is None else {"omega": omega})}
    return {"result": to_jsonable(result), "params": params}


def points(mode: CompressionMode) -> list[Point]:
    """Every (sigma, series, k), then the baselines at each sigma.

    Parameters
    ----------
    mode : CompressionMode
        The size of the sweep (`MODES`).

    Returns
    -------
    list of Point
        The sweep points of `measure_point`.
    """
    found: list[Point] = []
    for sigma in mode.sigmas:
        base: Point = {"figure": "compression", "n": mode.n, "d": mode.d, "tol": mode.tol, "cap": mode.cap,
                       "steps": list(mode.steps), "sigma": sigma, "seeds": list(range(mode.seeds))}
        found += [{**base, "series": label, "algorithm": algorithm, "compressor": f"{name}:{k}",
                   "k": k, "predict": list(PREDICT)}
                  for label, (algorithm, name) in SERIES.items() for k in mode.kept]
        found += [{**base, "series": name, "algorithm": name, "compressor": None, "k": mode.d, "predict": [],
                   **({"hyper": dict(BASELINE_HYPER[name])} if name in BASELINE_HYPER else {})}
                  for name in BASELINES]
    return found


def _cost(point: Point) -> float:
    """Rough CPU seconds (measured with 5 seeds: noise costs about twice, random-k's draws about twice)."""
    seeds = len(field_ints(point, "seeds")) / 5
    noisy = 2.0 if field_float(point, "sigma") > 0 else 1.0
    drawn = 2.0 if "random" in str(point["compressor"]) else 1.0
    kind = 1.0 if point["compressor"] else 0.3
    return 0.05 + field_float(point, "cap") / 2000 * kind * seeds * noisy * drawn


def _sigma(record: Record) -> float:
    sigma = optional_float(record["point"], "sigma")
    return 0.0 if sigma is None else float(sigma)


def _numbers_or_none(fields: dict[str, JSONValue], key: str) -> list[float | None]:
    """``fields[key]``: a list of numbers (as stored) or nulls (a capped seed, an open interval end); []
    when missing or null."""
    values = fields.get(key)
    if values is None:
        return []
    if not isinstance(values, list):
        raise TypeError(f"record field {key!r} must be a list of numbers or nulls; got {values!r}")
    found: list[float | None] = []
    for value in values:
        if value is None or (isinstance(value, (int, float)) and not isinstance(value, bool)):
            found.append(value)
        else:
            raise TypeError(f"record field {key!r} must be a list of numbers or nulls; got {values!r}")
    return found


def _interval(fields: dict[str, JSONValue], key: str) -> tuple[float | None, float | None]:
    """``fields[key]`` as (low, high), each None where unbounded; (None, None) when missing or empty."""
    low, high = _numbers_or_none(fields, key) or [None, None]
    return low, high


def _median(record: Record, key: str = "t_eps") -> float:
    """A finished record's median over the seeds of `key` (T_eps, or "bits": bits-to-eps) as a float."""
    return float(field_float(record["result"], key))


def _as_bits(records: Sequence[Record]) -> list[Record]:
    """The same records with bits-to-eps in place of T_eps, and each prediction times the record's bits
    per iteration (the predicted bits-to-eps)."""
    out: list[Record] = []
    for r in records:
        per = optional_float(r["result"], "bits_per_iteration")
        result: dict[str, JSONValue] = {**r["result"], "t_eps": r["result"]["bits"],
                                        "t_eps_range": r["result"].get("bits_range")}
        predicted = {name: value * per for name, value in r.get("predicted", {}).items()} if per else {}
        out.append({**r, "result": result, "predicted": predicted})
    return out


def power_law_fit(records: Sequence[Record]) -> tuple[list[Record], str]:
    """The records of one series (one sigma) a power law in 1/delta is claimed on, or none and why.

    The points above the flat part (median T_eps more than `FLAT_FACTOR` times the one at the smallest
    1/delta) are fitted; the law is claimed when 3 or more remain and the fitted line passes within
    `FIT_FACTOR` of each median or inside its seeds' `INTERVAL`.

    Parameters
    ----------
    records : sequence of Record
        One series' records at one sigma (`measure_point`).

    Returns
    -------
    tuple of (list of Record, str)
        The records fitted and "" when claimed; otherwise [] and the reason.

    Examples
    --------
    >>> def record(x, t):
    ...     return {"params": {"delta": 1 / x}, "result": {"t_eps": t, "status": "converged"}}
    >>> fitted, why = power_law_fit([record(x, t) for x, t in
    ...                              ((1, 45), (2, 45), (4, 45), (8, 99), (16, 254), (32, 520))])
    >>> [inv_delta(r) for r in fitted], why
    ([8.0, 16.0, 32.0], '')
    """
    done = sorted((r for r in records if fit.is_finished(r)), key=inv_delta)
    if not done:
        return [], "no point reached eps"
    floor = _median(done[0])
    above = [r for r in done[1:] if _median(r) > FLAT_FACTOR * floor]
    x = np.array([inv_delta(r) for r in above])
    if np.unique(x).size < 3:
        return [], f"only {np.unique(x).size} points above the flat part"
    y = np.array([_median(r) for r in above])
    line = fit.fit_exponent(x, y).predict(x)
    ranges = [_interval(r["result"], "t_eps_range") for r in above]
    inside = [lo is not None and hi is not None and lo <= value <= hi
              for value, (lo, hi) in zip(line, ranges, strict=True)]
    off = np.maximum(line / y, y / line)
    if all(ok or ratio <= FIT_FACTOR for ok, ratio in zip(inside, off, strict=True)):
        return above, ""
    return [], (f"not a power law on 1/delta in [{x.min():g}, {x.max():g}]: a median {off.max():.2f}x off "
                "the fitted line")


def _sweep_name(panel: str, sigma: float) -> str:
    return f"{panel} vs 1/delta, sigma={sigma:g}"


def exponent_rows(records: Sequence[Record]) -> list[fit.ExponentRow]:
    """Slopes in 1/delta of T_eps and of bits-to-eps per compressed series and sigma, fitted on the median
    over the seeds where `power_law_fit` claims a power law, against the series' catalog entry.

    Parameters
    ----------
    records : sequence of Record
        The sweep's records (`measure_point`); the baselines are left out.

    Returns
    -------
    list of fit.ExponentRow
        Per panel, sigma and series; ``measured.fit`` is None (``reason`` says why) where none is claimed.
    """
    rows: list[fit.ExponentRow] = []
    compressed: list[Record] = [{**r, "point": {**r["point"], "algorithm": r["point"]["series"]}}
                                for r in records if r["point"]["compressor"]]
    for sigma in sorted({_sigma(r) for r in compressed}):
        for label in SERIES:
            mine = [r for r in compressed if r["point"]["algorithm"] == label and _sigma(r) == sigma]
            if not mine:
                continue
            fitted, reason = power_law_fit(mine)
            for panel, group in (("T_eps", fitted or mine), ("bits-to-eps", _as_bits(fitted or mine))):
                sweep = _sweep_name(panel, sigma)
                try:
                    (row,) = fit.exponent_rows(sweep, group, inv_delta, predicted=PREDICTED_BY)
                except ValueError:  # a record without a prediction: measured only
                    (row,) = fit.exponent_rows(sweep, group, inv_delta)
                if reason:
                    unfinished = sum(not fit.is_finished(r) for r in mine)
                    row = fit.ExponentRow(sweep, label, row.variable,
                                          fit.RecordFit(row.variable, None, len(mine), unfinished, reason),
                                          row.predicted_name, row.predicted, row.kind)
                rows.append(row)
    return rows


def _csv(records: Sequence[Record]) -> str:
    columns = ("series", "compressor", "k", "sigma", "inv_delta", "t_eps", "t_eps_low", "t_eps_high",
               "t_eps_seeds", "bits", "bits_per_iteration", "status", "step_size", "gamma",
               "predicted_choco_sgd", "predicted_beer")
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(columns), lineterminator="\n")
    writer.writeheader()
    for r in records:
        best = optional_dict(r["result"], "best") or {}
        low, high = _interval(r["result"], "t_eps_range")
        seeds = _numbers_or_none(r["result"], "t_eps_seeds")
        row = {"series": r["point"]["series"], "compressor": r["point"]["compressor"] or "none",
               "k": r["point"]["k"], "sigma": _sigma(r), "inv_delta": inv_delta(r),
               "t_eps": r["result"]["t_eps"], "t_eps_low": low, "t_eps_high": high,
               "t_eps_seeds": " ".join("capped" if t is None else str(t) for t in seeds),
               "bits": r["result"]["bits"], "bits_per_iteration": r["result"]["bits_per_iteration"],
               "status": r["result"]["status"], "step_size": best.get("step_size"),
               "gamma": best.get("gamma"),
               "predicted_choco_sgd": r.get("predicted", {}).get("choco_sgd"),
               "predicted_beer": r.get("predicted", {}).get("beer")}
        writer.writerow({key: "" if value is None else value for key, value in row.items()})
    return buffer.getvalue()


def _fits_markdown(rows: Sequence[fit.ExponentRow]) -> str:
    """Per sigma and series: the power law claimed for T_eps (slope, CI, 1/delta range) or why none is."""
    lines = ["| sweep | series | power law in 1/delta |", "|---|---|---|"]
    for row in rows:
        value = row.measured.fit
        claim = (f"slope {value.slope:.2f} [{value.ci_low:.2f}, {value.ci_high:.2f}] on 1/delta in "
                 f"[{value.x_min:g}, {value.x_max:g}] (median over seeds)" if value is not None
                 else f"none claimed: {row.measured.reason}")
        lines.append(f"| {row.sweep} | {row.algorithm} | {claim} |")
    return "\n".join(lines) + "\n"


_LOOK = {"CHOCO-SGD, top-k": ("choco_sgd", "-"), "BEER, top-k": ("beer", "-"),
         "BEER, random-k": ("beer", ":")}


def _slope_text(rows: Sequence[fit.ExponentRow], sweep: str, label: str) -> str:
    row = next((r for r in rows if r.sweep == sweep and r.algorithm == label), None)
    if row is None:
        return ""
    value = row.measured.fit
    if value is None:
        return "no power law claimed"
    predicted = "" if row.predicted is None else f", predicted {row.predicted:.2f}"
    return (f"slope {value.slope:.2f} [{value.ci_low:.2f}, {value.ci_high:.2f}] on "
            f"{value.x_min:g}-{value.x_max:g}{predicted}")


def _legend_label(rows: Sequence[fit.ExponentRow], label: str, sigmas: Sequence[float]) -> str:
    return label + "".join(f"\n  $\\sigma$={sigma:g}: {_slope_text(rows, _sweep_name('T_eps', sigma), label)}"
                           for sigma in sigmas)


def _slowest(record: Record, key: str) -> float:
    """The slowest seed that reached eps, in `key`'s unit (bits: T_eps times the bits per iteration)."""
    reached = [float(t) for t in _numbers_or_none(record["result"], "t_eps_seeds") if t is not None]
    return max(reached) * _median(record, key) / _median(record)


def _draw_panel(axis: Any, records: Sequence[Record], key: str, labels: dict[str, str]) -> None:
    """One panel: each series' median against 1/delta with its seeds' interval, the baselines as lines."""
    notes = []
    for label in SERIES:
        mine = sorted((r for r in records if r["point"]["series"] == label), key=inv_delta)
        done = [r for r in mine if fit.is_finished(r)]
        notes += [f"{label} {r['result']['status']} at 1/delta={inv_delta(r):g}" for r in mine
                  if not fit.is_finished(r)]
        notes += [f"{label}: {seeds.count(None)} of {len(seeds)} seeds did not reach eps at "
                  f"1/delta={inv_delta(r):g} (bar to the slowest that did)" for r in mine
                  if None in (seeds := _numbers_or_none(r["result"], "t_eps_seeds")) and fit.is_finished(r)
                  and key == "t_eps"]
        if done:
            algorithm, line = _LOOK[label]
            look = style(algorithm)
            x = np.array([inv_delta(r) for r in done])
            y = np.array([_median(r, key) for r in done])
            ranges = [_interval(r["result"], f"{key}_range") for r in done]
            low = np.array([value if lo is None else float(lo)
                            for value, (lo, _) in zip(y, ranges, strict=True)])
            high = np.array([_slowest(r, key) if hi is None else float(hi) for r, (_, hi) in zip(done, ranges,
                                                                                             strict=True)])
            axis.errorbar(x, y, yerr=[y - low, high - y], color=look["color"], marker=look["marker"],
                          linestyle=line, capsize=2, label=labels[label])
    finished = {}
    for name in BASELINES:
        base = next((r for r in records if r["point"]["series"] == name and fit.is_finished(r)), None)
        if base is None:
            notes.append(f"{name} did not reach eps")
        else:
            finished[name] = base
    for name, base in finished.items():
        value = base["result"][key]
        # baselines at the same value share the line in interleaved dashes, so each one shows
        same = [other for other, r in finished.items() if r["result"][key] == value]
        look, form = style(name), BASELINE_HYPER.get(name, {}).get("form")
        equal = ", ".join(style(other)["label"] for other in same if other != name)
        axis.axhline(value, color=look["color"], linewidth=1.0,
                     linestyle=(4.0 * same.index(name), (4.0, 4.0 * max(len(same), 2) - 4.0)),
                     label=f"{look['label']}{f' ({form.upper()})' if form else ''} (uncompressed"
                           f"{f', = {equal}' if equal else ''})")
        lo, hi = _interval(base["result"], f"{key}_range")
        if lo is not None and hi is not None and hi > lo:
            axis.axhspan(lo, hi, color=look["color"], alpha=0.08, linewidth=0)
    axis.set_xscale("log")
    axis.set_yscale("log")
    axis.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())  # 3e4 and 4e4 labels collided
    axis.set_xlabel("$1/\\delta$ = $1+\\omega$ = d/k")
    axis.grid(True, which="both", alpha=0.3)
    if notes:
        axis.text(0.98, 0.02, "\n".join(notes[:6]), transform=axis.transAxes, fontsize=5, ha="right",
                  va="bottom", color="0.35")


def plot(records: Sequence[Record], rows: Sequence[fit.ExponentRow], mode: CompressionMode,
         out_dir: pathlib.Path, dpi: int) -> list[pathlib.Path]:
    """Draw T_eps and bits to eps against 1/delta, one row of panels per sigma; write the PNG + PDF.

    Parameters
    ----------
    records : sequence of Record
        The sweep's records.
    rows : sequence of fit.ExponentRow
        `exponent_rows` of them (the legend quotes the claimed slopes of T_eps).
    mode : CompressionMode
        The sweep's mode (titles).
    out_dir : pathlib.Path
        The output folder.
    dpi : int
        Of the PNG.

    Returns
    -------
    list of pathlib.Path
        The PNG and PDF.
    """
    sigmas = sorted({_sigma(r) for r in records})
    fig, axes = new_figure(len(sigmas), 2, width=4.2, height=3.2, squeeze=False)
    axes = panels(axes)
    labels = {label: _legend_label(rows, label, sigmas) for label in SERIES}
    for index, sigma in enumerate(sigmas):
        mine = [r for r in records if _sigma(r) == sigma]
        noise = "exact gradients" if sigma == 0 else f"$\\sigma$ = {sigma:g}"
        # titles first: they move the constrained layout
        axes[index, 0].set_title(f"({chr(97 + 2 * index)}) $T_\\varepsilon$, {noise}, ring n = {mode.n}, "
                                 f"d = {mode.d}, $\\varepsilon$ = {mode.tol:g}", fontsize="small")
        axes[index, 1].set_title(f"({chr(98 + 2 * index)}) bits to $\\varepsilon$, {noise} "
                                 "(predicted slope 0)", fontsize="small")
        for axis, key, ylabel in ((axes[index, 0], "t_eps", "$T_\\varepsilon$ (iterations)"),
                                  (axes[index, 1], "bits", "bits per worker to $\\varepsilon$")):
            _draw_panel(axis, mine, key, labels)
            axis.set_ylabel(ylabel)
    # one legend under all panels (the same series in each), with the slopes claimed in the T_eps panels
    handles, legend_labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, legend_labels, loc="outside lower center", ncol=3, fontsize="xx-small", frameon=False,
               title=f"median over {mode.seeds} seeds, bars: the seeds' {INTERVAL[0]:g}-{INTERVAL[1]:g} % "
                     "range; slopes fitted above the flat part only", title_fontsize="xx-small")
    return save_figure(fig, out_dir, "compression", dpi=dpi)


def make(out_dir: pathlib.Path = DEFAULT_OUT_DIR, *, full: bool = False, tiny: bool = False
         ) -> list[pathlib.Path]:
    """Run (or resume) the sweep and draw the figure; returns the PNG, PDF and table files.

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
    docs/theory.md §18.

    Examples
    --------
    From a shell::

        python -m decbounds.paper_figures.compression --tiny --out /tmp/figures
    """
    mode = MODES[mode_name(full, tiny)]
    out_dir = pathlib.Path(out_dir)
    executor = make_executor(tiny)
    try:
        records = run_sweep(points(mode), out_dir / "compression" / "records.jsonl", runner=measure_point,
                            executor=executor, desc="compression", progress=not tiny, cost=_cost)
    finally:
        executor.shutdown(wait=True)
    rows = exponent_rows(records)
    files = plot(records, rows, mode, out_dir, dpi=60 if tiny else 150)
    files += exponents.write_figure_table(rows, out_dir, "compression")
    files += exponents.write_combined(out_dir)
    files.append(atomic_write_bytes(out_dir / "compression_teps.csv", _csv(records).encode()))
    files.append(atomic_write_bytes(out_dir / "compression_fits.md", _fits_markdown(rows).encode()))
    return files


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m decbounds.paper_figures.compression [--full | --tiny] [--out DIR]``.

    Make the compression figure; print the files written.

    Parameters
    ----------
    argv : sequence of str, optional
        The command-line arguments (default ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit status.
    """
    return figure_main(make, "Communication compression: T_eps and bits-to-eps against 1/delta.", argv)


if __name__ == "__main__":
    raise SystemExit(main())
