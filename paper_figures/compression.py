"""Communication compression: T_eps and bits-to-eps against the compression factor 1/delta (= 1 + omega)
for the compressed methods, beside uncompressed D-PSGD, DSGT and DeTAG (docs/theory.md §18).

Instance: ``instances.heterogeneous_nonconvex(n, d, varsigma=1)`` (a non-convex f whose average model
depends on consensus), exact gradients, the ring on n workers with Metropolis weights, eps = `tol` on
||grad f(x_hat)|| (stop="average"). Series:

- CHOCO-SGD and BEER with top-k, k = d, d/2, ..., (contractive, delta = k/d);
- BEER with random-k (unbiased, omega = d/k - 1, used as C/(1 + omega): delta = k/d again, so the same
  x-axis 1/delta = 1 + omega = d/k);
- uncompressed D-PSGD, DSGT and DeTAG, drawn as horizontal lines (64 d bits per vector). D-PSGD runs in
  adapt-then-combine form (`BASELINE_HYPER`), the form CHOCO-SGD reduces to without compression (C = identity,
  gamma = 1), so 1/delta = 1 compares like with like (the combine-then-adapt form took 82 iterations where
  the adapt-then-combine one took 45 on the quick instance). Baselines with the same value are drawn as
  interleaved dashes, each visible.

Each point is tuned (``algorithms.tune``, admissible steps, exact winner by branch and bound) over the step
sizes `steps` and, for the compressed rules, the consensus steps gamma = c delta (capped at 1) for c in
`GAMMA_FACTORS` (the paper's admissible gamma could not be confirmed; docs/theory.md §18).
Bits-to-eps is the engine's ``bits`` counter at T_eps: per worker, what it
sent (``Counters.bits``: k (64 + ceil(log2 d)) per top-k or random-k vector; one vector per iteration for
CHOCO, two for BEER).

Prediction: the catalog's ``choco_sgd`` and ``beer`` (and the lower bound ``huang2022_contractive_lower``,
a server-topology bound) have communication terms proportional to 1/delta, so T_eps has the predicted
slope 1 in 1/delta (sigma = 0: the communication term is the whole rate); bits-to-eps is T_eps times the
bits per iteration, proportional to delta, so its predicted slope is 0.

Records: ``<out>/compression/records.jsonl`` (``paper_figures.sweep``, resumable). Tables:
``compression_exponents.md`` / ``.csv`` and ``compression_teps.csv``.

Run: ``python -m decbounds.paper_figures.compression [--full | --tiny] [--out DIR]``.
"""

from __future__ import annotations

import csv
import functools
import io
import pathlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

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
    field_str,
    optional_dict,
    optional_float,
    optional_str,
)
from decbounds.paper_figures.sweep import Point, Record, RunOutput, run_sweep

from decbounds import algorithms, instances

__all__ = [
    "BASELINES",
    "BASELINE_HYPER",
    "GAMMA_FACTORS",
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
VARSIGMA = 1.0
PROBLEM_SEED = 0


@dataclass(frozen=True)
class CompressionMode:
    """What one mode computes."""

    n: int
    d: int
    kept: tuple[int, ...]  # k of top-k / random-k
    tol: float
    cap: int
    steps: tuple[float, ...] = (0.05, 0.1, 0.2, 0.4, 0.8)


MODES: dict[str, CompressionMode] = {
    "tiny": CompressionMode(n=8, d=8, kept=(8, 2), tol=1e-2, cap=600, steps=(0.1, 0.4)),
    "quick": CompressionMode(n=16, d=16, kept=(16, 8, 4, 2, 1), tol=5e-3, cap=2000),
    "full": CompressionMode(n=16, d=32, kept=(32, 16, 8, 4, 2, 1), tol=2e-3, cap=8000),
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
        A record of `measure_point` (its ``params["delta"]``, the compressor's contraction factor).

    Returns
    -------
    float
    """
    return 1.0 / float(field_float(record["params"], "delta"))


def measure_point(point: Point) -> RunOutput:
    """Sweep runner: one series (or baseline) at one k, tuned over the step sizes (and gammas).

    Parameters
    ----------
    point : Point
        One of `points`: ``n, d, algorithm, compressor`` (``"name:k"`` of ``algorithms.make_compressor``, or
        None for a baseline), ``steps, tol, cap``.

    Returns
    -------
    RunOutput
        ``result``: T_eps, status, bits to eps and per iteration, the winning step and gamma; ``params``:
        the catalog parameters with the compressor's delta (and omega when unbiased).
    """
    n, d, algorithm = int(field_int(point, "n")), int(field_int(point, "d")), field_str(point, "algorithm")
    f, W = _problem(n, d), _ring(n)
    hyper: dict[str, Any] = dict(optional_dict(point, "hyper") or {})
    delta = 1.0
    omega: float | None = 0.0  # None: a biased compressor (no omega)
    spec = optional_str(point, "compressor")
    if spec:
        compressor = algorithms.make_compressor(spec)
        delta = float(algorithms.contractive(compressor).delta(d))
        omega = float(compressor.omega(d)) if compressor.kind == "unbiased" else None
        hyper = {"compressor": spec,
                 "gamma": sorted({min(1.0, c * delta) for c in GAMMA_FACTORS})}
    best = algorithms.tune(algorithm, f, W, grid=list(field_floats(point, "steps")),
                           tol=float(field_float(point, "tol")), iterations=int(field_int(point, "cap")),
                           stop="average", prune=True, **hyper)
    reached = best.t_eps is not None
    result = {"t_eps": best.t_eps, "status": best.status, "cap": int(field_int(point, "cap")),
              "bits": best.counters["bits"] if reached else None,
              "bits_per_iteration": best.counters["bits"] / best.iterations if reached and best.iterations
              else None,
              "best": {"step_size": best.step_size, "gamma": best.hyper.get("gamma")} if reached else None}
    params = {"n": n, "lam": float(W.lam), "Delta": float(f.Delta), "L": float(f.smoothness),
              "epsilon": float(field_float(point, "tol")) ** 2,  # the entries' grad_norm_sq criterion
              "sigma": 0.0, "B": 1, "varsigma": float(f.varsigma), "varsigma0": float(f.varsigma0),
              "delta": delta, **({} if omega is None else {"omega": omega})}
    return {"result": to_jsonable(result), "params": params}


def points(mode: CompressionMode) -> list[Point]:
    """Every (series, k), then the baselines.

    Parameters
    ----------
    mode : CompressionMode
        The size of the sweep (`MODES`).

    Returns
    -------
    list of Point
        The sweep points of `measure_point`.
    """
    base: Point = {"figure": "compression", "n": mode.n, "d": mode.d, "tol": mode.tol, "cap": mode.cap,
            "steps": list(mode.steps)}
    found: list[Point] = [{**base, "series": label, "algorithm": algorithm, "compressor": f"{name}:{k}",
                           "k": k, "predict": list(PREDICT)}
                          for label, (algorithm, name) in SERIES.items() for k in mode.kept]
    found += [{**base, "series": name, "algorithm": name, "compressor": None, "k": mode.d, "predict": [],
               **({"hyper": dict(BASELINE_HYPER[name])} if name in BASELINE_HYPER else {})}
              for name in BASELINES]
    return found


def _cost(point: Point) -> float:
    """Rough CPU seconds (measured: configurations that never reach eps run to the cap)."""
    return 0.05 + field_float(point, "cap") / 2000 * (1.0 if point["compressor"] else 0.3)


def _as_series(records: Sequence[Record]) -> list[Record]:
    """The compressed records, each with its series as its "algorithm" (what `fit.exponent_rows` groups)."""
    return [{**r, "point": {**r["point"], "algorithm": r["point"]["series"]}} for r in records
            if r["point"]["compressor"]]


def _as_bits(records: Sequence[Record]) -> list[Record]:
    """The same records with bits-to-eps in place of T_eps, and each prediction times the record's bits
    per iteration (the predicted bits-to-eps)."""
    out: list[Record] = []
    for r in records:
        per = optional_float(r["result"], "bits_per_iteration")
        result: dict[str, JSONValue] = {**r["result"], "t_eps": r["result"]["bits"]}
        predicted = {name: value * per for name, value in r.get("predicted", {}).items()} if per else {}
        out.append({**r, "result": result, "predicted": predicted})
    return out


def exponent_rows(records: Sequence[Record]) -> list[fit.ExponentRow]:
    """Slopes in 1/delta of T_eps and of bits-to-eps per compressed series, against the series' catalog
    entry (for bits: the entry's T_eps times the bits per iteration).

    Parameters
    ----------
    records : sequence of Record
        The sweep's records (`measure_point`); the baselines are left out.

    Returns
    -------
    list of fit.ExponentRow
        Per panel and compressed series with 2 or more finished 1/delta values.
    """
    series = _as_series(records)
    rows: list[fit.ExponentRow] = []
    for sweep, group in (("T_eps vs 1/delta", series), ("bits-to-eps vs 1/delta", _as_bits(series))):
        for label in SERIES:
            mine = [r for r in group if r["point"]["algorithm"] == label]
            if len({inv_delta(r) for r in mine if fit.is_finished(r)}) < 2:
                continue
            try:
                rows += fit.exponent_rows(sweep, mine, inv_delta, predicted=PREDICTED_BY)
            except ValueError:  # a record without a prediction (per-iteration bits unknown): measured only
                rows += fit.exponent_rows(sweep, mine, inv_delta)
    return rows


def _csv(records: Sequence[Record]) -> str:
    columns = ("series", "compressor", "k", "inv_delta", "t_eps", "bits", "bits_per_iteration", "status",
               "step_size", "gamma", "predicted_choco_sgd", "predicted_beer")
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(columns), lineterminator="\n")
    writer.writeheader()
    for r in records:
        best = optional_dict(r["result"], "best") or {}
        row = {"series": r["point"]["series"], "compressor": r["point"]["compressor"] or "none",
               "k": r["point"]["k"], "inv_delta": inv_delta(r), "t_eps": r["result"]["t_eps"],
               "bits": r["result"]["bits"], "bits_per_iteration": r["result"]["bits_per_iteration"],
               "status": r["result"]["status"], "step_size": best.get("step_size"),
               "gamma": best.get("gamma"),
               "predicted_choco_sgd": r.get("predicted", {}).get("choco_sgd"),
               "predicted_beer": r.get("predicted", {}).get("beer")}
        writer.writerow({key: "" if value is None else value for key, value in row.items()})
    return buffer.getvalue()


_LOOK = {"CHOCO-SGD, top-k": ("choco_sgd", "-"), "BEER, top-k": ("beer", "-"),
         "BEER, random-k": ("beer", ":")}


def _slope_text(rows: Sequence[fit.ExponentRow], sweep: str, label: str) -> str:
    row = next((r for r in rows if r.sweep == sweep and r.algorithm == label), None)
    if row is None or row.measured.fit is None:
        return ""
    value = row.measured.fit
    predicted = "" if row.predicted is None else f", predicted {row.predicted:.2f}"
    return f": slope {value.slope:.2f} [{value.ci_low:.2f}, {value.ci_high:.2f}]{predicted}"


#: The panel whose measured slopes the shared legend quotes.
SLOPE_PANEL = "T_eps vs 1/delta"


def plot(records: Sequence[Record], rows: Sequence[fit.ExponentRow], mode: CompressionMode,
         out_dir: pathlib.Path, dpi: int) -> list[pathlib.Path]:
    """Draw the two panels (T_eps and bits to eps against 1/delta) with the baselines; write the PNG + PDF.

    Parameters
    ----------
    records : sequence of Record
        The sweep's records.
    rows : sequence of fit.ExponentRow
        `exponent_rows` of them (the legend quotes the measured slopes).
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
    fig, axes = new_figure(1, 2, width=4.2, height=3.6)
    axes = panels(axes)
    # titles first: they move the constrained layout, and place_legend must see the final axes
    axes.flat[0].set_title(f"(a) $T_\\varepsilon$, ring n = {mode.n}, d = {mode.d}, "
                           f"$\\varepsilon$ = {mode.tol:g}", fontsize="small")
    axes.flat[1].set_title("(b) bits to $\\varepsilon$ (predicted slope 0)", fontsize="small")
    for axis, (sweep, key, ylabel) in zip(axes.flat, (
            ("T_eps vs 1/delta", "t_eps", "$T_\\varepsilon$ (iterations)"),
            ("bits-to-eps vs 1/delta", "bits", "bits per worker to $\\varepsilon$")), strict=True):
        notes = []
        for label in SERIES:
            mine = sorted((r for r in records if r["point"]["series"] == label), key=inv_delta)
            done = [(inv_delta(r), r["result"][key]) for r in mine if fit.is_finished(r)]
            notes += [f"{label} {r['result']['status']} at 1/delta={inv_delta(r):g}" for r in mine
                      if not fit.is_finished(r)]
            if done:
                algorithm, line = _LOOK[label]
                look = style(algorithm)
                x, y = zip(*done, strict=True)
                axis.loglog(x, y, color=look["color"], marker=look["marker"], linestyle=line,
                            label=label + (_slope_text(rows, sweep, label) if sweep == SLOPE_PANEL else ""))
        finished = {}
        for name in BASELINES:
            base = next((r for r in records if r["point"]["series"] == name and fit.is_finished(r)), None)
            if base is None:
                notes.append(f"{name} did not reach eps")
            else:
                finished[name] = base["result"][key]
        for name, value in finished.items():
            # baselines at the same value share the line in interleaved dashes, so each one shows
            same = [other for other, v in finished.items() if v == value]
            look, form = style(name), BASELINE_HYPER.get(name, {}).get("form")
            equal = ", ".join(style(other)["label"] for other in same if other != name)
            axis.axhline(value, color=look["color"], linewidth=1.0,
                         linestyle=(4.0 * same.index(name), (4.0, 4.0 * max(len(same), 2) - 4.0)),
                         label=f"{look['label']}{f' ({form.upper()})' if form else ''} (uncompressed"
                               f"{f', = {equal}' if equal else ''})")
        axis.set_xlabel("$1/\\delta$ = $1+\\omega$ = d/k")
        axis.set_ylabel(ylabel)
        axis.grid(True, which="both", alpha=0.3)
        if notes:
            axis.text(0.98, 0.02, "\n".join(notes[:6]), transform=axis.transAxes, fontsize=5, ha="right",
                      va="bottom", color="0.35")
    # one legend under both panels (the same series in each; the slopes of (a) in it, those of (b) in the
    # exponent table): a legend inside either panel hid data, and one beside (a) squeezed (b)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=2, fontsize="xx-small", frameon=False)
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
