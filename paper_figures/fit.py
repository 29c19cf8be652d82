"""Exponent fits: log-log least squares of T_eps against a sweep variable, with t confidence intervals.

The measured exponent a of T_eps ~ c x^a is the OLS slope through (log x, log T_eps) over the finished runs
(capped and diverged runs are counted apart), with interval slope +- t_{1-alpha/2, m-2} se. The predicted
exponent is the same slope of log(predicted T_eps) over the same records. Verdicts are one-sided by the
entry's kind (`verdict`); fewer than `MIN_POINTS` sweep points give "too few points". Variables: ``n``,
``inv_gap`` = 1/(1 - lam), ``sigma2``, ``nB`` (docs/theory.md §3, §6, §8), or any ``record -> float``.
See docs/results/exponents.md.
"""

from __future__ import annotations

import csv
import io
import math
import pathlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from decbounds.paper_figures.records import Record
from scipy import stats

from decbounds import bounds

__all__ = [
    "MIN_POINTS",
    "VARIABLES",
    "VARIABLE_LABELS",
    "VERDICTS",
    "ExponentFit",
    "ExponentRow",
    "Record",
    "RecordFit",
    "Variable",
    "catalog_entry",
    "exponent_rows",
    "exponent_table_csv",
    "exponent_table_markdown",
    "fit_exponent",
    "fit_records",
    "is_diverged",
    "is_finished",
    "median_by_x",
    "predicted_exponent",
    "variable_function",
    "variable_name",
    "verdict",
    "worker_output",
    "write_exponent_table",
]

#: A sweep variable: a name of `VARIABLES`, or a function of a record (`variable_function`).
Variable = str | Callable[[Record], float]


def _params(record: Record) -> Mapping[str, Any]:
    return record.get("params", {})


#: The sweep variables of the issue, as functions of a record.
VARIABLES: dict[str, Callable[[Record], float]] = {
    "n": lambda record: float(_params(record)["n"]),
    "inv_gap": lambda record: 1.0 / (1.0 - float(_params(record)["lam"])),
    "sigma2": lambda record: float(_params(record)["sigma"]) ** 2,
    "nB": lambda record: float(_params(record)["n"]) * float(_params(record)["B"]),
}

#: Axis labels of the variables, for plots and tables.
VARIABLE_LABELS: dict[str, str] = {
    "n": "n",
    "inv_gap": "1/(1 - lam)",
    "sigma2": "sigma^2",
    "nB": "n B",
}


@dataclass(frozen=True)
class ExponentFit:
    """The least-squares line log y = intercept + slope * log x, with a t confidence interval on the slope.

    Parameters
    ----------
    slope, intercept : float
        Of the line in (log x, log y).
    stderr : float
        The OLS standard error of the slope.
    ci_low, ci_high : float
        The slope's confidence interval.
    confidence : float
        Its level, in (0, 1).
    n_points : int
        Points fitted.
    x_min, x_max : float
        The range of x fitted.
    r_squared : float
        Coefficient of determination (1 for a constant y).
    distinct_x : int
        Distinct x values (sweep points; seeds at one x are replicates).
    """

    slope: float
    intercept: float
    stderr: float
    ci_low: float
    ci_high: float
    confidence: float
    n_points: int
    x_min: float
    x_max: float
    r_squared: float
    distinct_x: int = 0  # sweep points: distinct x values among the runs fitted

    def covers(self, exponent: float) -> bool:
        """Whether `exponent` lies inside the confidence interval (widened by rounding, 1e-9 relative).

        Parameters
        ----------
        exponent : float
            A predicted exponent (the slope of log T_eps against log x).
        """
        slack = 1e-9 * max(1.0, abs(exponent))
        return self.ci_low - slack <= exponent <= self.ci_high + slack

    def predict(self, x: npt.ArrayLike) -> npt.NDArray[np.float64]:
        """The fitted power law c * x^slope at `x` (an array of x's shape).

        Parameters
        ----------
        x : array_like of float
            Positive values of the fitted variable.
        """
        values: npt.NDArray[np.float64] = np.exp(self.intercept) * np.asarray(x, dtype=float) ** self.slope
        return values


def fit_exponent(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray, *,
                 confidence: float = 0.95) -> ExponentFit:
    """Fit y ~ c * x^a by least squares on (log x, log y); the CI uses scipy.stats.t with m - 2 dof.
    ValueError for unequal lengths, a value not positive and finite, fewer than 3 points or 2 distinct x.

    Parameters
    ----------
    x, y : array_like of float
        The points.
    confidence : float, default 0.95
        Level of the slope's interval, in (0, 1).

    Examples
    --------
    >>> fit = fit_exponent([1, 2, 4, 8], [3.0, 6.2, 11.8, 24.5])
    >>> round(fit.slope, 2), round(fit.ci_low, 2), round(fit.ci_high, 2), fit.covers(1.0)
    (1.0, 0.93, 1.08, True)
    """
    x = np.asarray(x, dtype=float).ravel()
    y = np.asarray(y, dtype=float).ravel()
    if x.shape != y.shape:
        raise ValueError(f"x and y must have the same length; got {x.size} and {y.size}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1); got {confidence!r}")
    for name, values in (("x", x), ("y", y)):
        if not np.all(np.isfinite(values)) or np.any(values <= 0):
            raise ValueError(f"{name} must be positive and finite for a log-log fit; got {values.tolist()}")
    if x.size < 3:
        raise ValueError(f"a slope with a confidence interval needs at least 3 points; got {x.size}")
    if np.unique(x).size < 2:
        raise ValueError("x must take at least 2 distinct values to fit a slope")
    log_x, log_y = np.log(x), np.log(y)
    # Written out: scipy.stats.linregress gives a NaN stderr when y is constant (an exact slope 0).
    centred_x, centred_y = log_x - log_x.mean(), log_y - log_y.mean()
    sxx = float(centred_x @ centred_x)
    slope = float(centred_x @ centred_y) / sxx
    intercept = float(log_y.mean() - slope * log_x.mean())
    residual = float(np.sum((centred_y - slope * centred_x) ** 2))
    total = float(centred_y @ centred_y)
    stderr = math.sqrt(residual / (x.size - 2) / sxx)
    half_width = float(stats.t.ppf(0.5 + confidence / 2.0, x.size - 2)) * stderr
    return ExponentFit(
        slope=slope, intercept=intercept, stderr=stderr,
        ci_low=slope - half_width, ci_high=slope + half_width, confidence=confidence,
        n_points=int(x.size), x_min=float(x.min()), x_max=float(x.max()),
        r_squared=1.0 - residual / total if total > 0 else 1.0, distinct_x=int(np.unique(x).size),
    )


# ---------------------------------------------------------------------------------------------- records


def variable_function(variable: Variable) -> Callable[[Record], float]:
    """The function record -> x of a name in `VARIABLES` (ValueError if unknown), or `variable` if callable.

    Parameters
    ----------
    variable : str or callable
        "n", "inv_gap", "sigma2", "nB", or a function record -> float.
    """
    if callable(variable):
        return variable
    if variable not in VARIABLES:
        raise ValueError(
            f"unknown sweep variable {variable!r}; expected one of {sorted(VARIABLES)} or a callable"
        )
    return VARIABLES[variable]


def variable_name(variable: Variable) -> str:
    """The name of a sweep variable: itself if a name, else the function's ``__name__`` (``"x"`` if none).

    Parameters
    ----------
    variable : str or callable
        See `variable_function`.
    """
    return variable if isinstance(variable, str) else getattr(variable, "__name__", "x")


def is_finished(record: Record) -> bool:
    """Whether the run reached eps: a T_eps was measured and the status (where recorded) is "converged".

    Parameters
    ----------
    record : dict
        A sweep record (its ``result``).
    """
    result = record["result"]
    return result.get("t_eps") is not None and result.get("status", "converged") == "converged"


def is_diverged(record: Record) -> bool:
    """Whether the run diverged (status "diverged", or the older ``diverged`` flag without a T_eps).

    Parameters
    ----------
    record : dict
        A sweep record (its ``result``).
    """
    result = record["result"]
    if "status" in result:
        return result["status"] == "diverged"
    return bool(result.get("diverged")) and result.get("t_eps") is None


def worker_output(records: Iterable[Record]) -> list[Record]:
    """New records with T_eps of the workers' own models (``t_eps_local``; no all-reduce at the output) in
    place of T_eps at x-bar; a record without ``t_eps_local`` counts as not finished.

    Parameters
    ----------
    records : iterable of dict
        Sweep records (not changed).
    """
    swapped: list[Record] = []
    for record in records:
        result = dict(record["result"])
        local = result.get("t_eps_local")
        result["t_eps"] = local
        if not is_diverged(record):
            result["status"] = "converged" if local is not None else "max_iterations"
        swapped.append({**record, "result": result})
    return swapped


def median_by_x(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct x (sorted) and the median of y at each: medians over seeds, for plots and robust fits.

    Parameters
    ----------
    x, y : numpy.ndarray
        1-D, of equal length: the variable and the measurement of each run.
    """
    levels = np.unique(x)
    return levels, np.array([np.median(y[x == level]) for level in levels])


@dataclass(frozen=True)
class RecordFit:
    """The fit of T_eps against a variable over a set of records, with what was excluded and why.

    Parameters
    ----------
    variable : str
        The variable's name.
    fit : ExponentFit or None
        None when too few finished runs remain.
    runs : int
        Records given.
    unfinished : int
        Of them, capped or diverged (not in the fit).
    reason : str
        Why there is no fit ("" when there is one).
    diverged : int
        Of the unfinished, those that diverged.
    """

    variable: str
    fit: ExponentFit | None
    runs: int
    unfinished: int  # capped or diverged: not in the fit
    reason: str = ""
    diverged: int = 0  # of the unfinished, those that diverged


def fit_records(records: Sequence[Record], variable: Variable, *, aggregate: str = "none",
                confidence: float = 0.95) -> RecordFit:
    """Fit T_eps ~ x^a over the finished runs of `records` (`aggregate="median"`: the per-x medians);
    ``fit=None`` with a reason when fewer than 3 usable points (or 2 distinct x) remain. ValueError for an
    unknown ``aggregate`` or ``variable``, or a record without the variable's parameter.

    Parameters
    ----------
    records : sequence of dict
        Sweep records.
    variable : str or callable
        See `variable_function`.
    aggregate : {"none", "median"}
        Fit every run, or the median over seeds at each x.
    confidence : float, default 0.95
        Level of the slope's interval.

    Examples
    --------
    T_eps = 5 n^2 over two seeds at four n, and one capped run at n = 64:

    >>> def record(n, t):  # a sweep record, reduced to what the fit reads
    ...     return {"key": n, "point": {"algorithm": "detag"}, "params": {"n": n},
    ...             "result": {"t_eps": t, "status": "converged" if t else "max_iterations"},
    ...             "predicted": {"lower_bound_gossip": 2.0 * n * n}}
    >>> records = [record(n, 5 * n * n + s) for n in (4, 8, 16, 32) for s in (0, 1)] + [record(64, None)]
    >>> result = fit_records(records, "n")
    >>> result.runs, result.unfinished, round(result.fit.slope, 2)
    (9, 1, 2.0)
    """
    if aggregate not in ("none", "median"):
        raise ValueError(f"aggregate must be 'none' or 'median'; got {aggregate!r}")
    x_of = variable_function(variable)
    finished = [record for record in records if is_finished(record)]
    x = np.array([x_of(record) for record in finished], dtype=float)
    y = np.array([record["result"]["t_eps"] for record in finished], dtype=float)
    if aggregate == "median" and x.size:
        x, y = median_by_x(x, y)
    name = variable_name(variable)
    unfinished = len(records) - len(finished)
    diverged = sum(is_diverged(record) for record in records)
    if x.size < 3 or np.unique(x).size < 2:
        return RecordFit(name, None, len(records), unfinished, f"only {x.size} usable points", diverged)
    return RecordFit(name, fit_exponent(x, y, confidence=confidence), len(records), unfinished, "", diverged)


def predicted_exponent(records: Sequence[Record], catalog_name: str, variable: Variable) -> float:
    """Least-squares slope of log(predicted T_eps of `catalog_name`) against log x over `records`;
    ValueError if a record lacks the prediction, a prediction is not positive, or fewer than 2 distinct x.

    Parameters
    ----------
    records : sequence of dict
        Sweep records with ``predicted[catalog_name]``.
    catalog_name : str
        A ``bounds`` catalog entry.
    variable : str or callable
        See `variable_function`.
    """
    x_of = variable_function(variable)
    xs, ys = [], []
    for record in records:
        value = record.get("predicted", {}).get(catalog_name)
        if value is None:
            reason = record.get("prediction_errors", {}).get(catalog_name, "not evaluated for this sweep")
            raise ValueError(f"record {record.get('key')} has no prediction {catalog_name!r}: {reason}")
        xs.append(x_of(record))
        ys.append(value)
    x, y = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
    if np.unique(x).size < 2:
        raise ValueError("a predicted exponent needs records at 2 or more distinct x")
    if np.any(y <= 0):
        raise ValueError(f"{catalog_name!r} predicts a non-positive T_eps on this range; no exponent")
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


# ------------------------------------------------------------------------------------------------ tables


#: The fewest sweep points (distinct x with a finished run) a verdict is drawn from; below it the table says
#: "too few points".
MIN_POINTS = 4

VERDICTS: tuple[str, ...] = ("consistent", "tight", "violated", "too few points")


def verdict(fit: ExponentFit | None, predicted: float | None, kind: str | None) -> str:
    """The one-sided verdict of a measured exponent against a catalog entry's: against a lower bound
    "violated" when the whole interval lies below the prediction, else "consistent"; against an upper bound
    "violated" when it lies above, "tight" when it covers it, else "consistent"; "too few points" below
    `MIN_POINTS` distinct x; "" without a prediction. ValueError for another ``kind``.

    Parameters
    ----------
    fit : ExponentFit or None
        The measured fit.
    predicted : float or None
        The catalog entry's exponent (`predicted_exponent`).
    kind : {"lower", "upper"} or None
        The entry's kind.

    Examples
    --------
    >>> fit = fit_exponent([4, 8, 16, 32], [80, 330, 1270, 5150])
    >>> [verdict(fit, 2.0, "lower"), verdict(fit, 2.5, "lower"), verdict(fit, 2.0, "upper")]
    ['consistent', 'violated', 'tight']
    """
    if predicted is None or kind is None:
        return ""
    if kind not in ("lower", "upper"):
        raise ValueError(f"kind must be 'lower' or 'upper'; got kind={kind!r}")
    if fit is None or fit.distinct_x < MIN_POINTS:
        return "too few points"
    slack = 1e-9 * max(1.0, abs(predicted))
    if kind == "lower":
        return "violated" if fit.ci_high < predicted - slack else "consistent"
    if fit.ci_low > predicted + slack:
        return "violated"
    return "tight" if fit.covers(predicted) else "consistent"


@dataclass(frozen=True)
class ExponentRow:
    """One row of the measured-vs-predicted exponent table; ``runs`` are the records fitted (for showing a
    violation's runs)."""

    sweep: str
    algorithm: str
    variable: str
    measured: RecordFit
    predicted_name: str | None
    predicted: float | None
    kind: str | None = None
    runs: tuple[Record, ...] = ()

    @property
    def verdict(self) -> str:
        """`verdict` of this row: "consistent", "tight", "violated", "too few points", or "" (none)."""
        return verdict(self.measured.fit, self.predicted, self.kind)


def catalog_entry(algorithm: str) -> str:
    """The ``bounds`` catalog entry of a registered algorithm's rate (``algorithms.entry(name)``), what a
    figure's ``PREDICTED_BY`` compares with; ValueError if it has none.

    Parameters
    ----------
    algorithm : str
        A registered algorithm's name or alias.
    """
    from decbounds import algorithms

    entry = algorithms.entry(algorithm).catalog_entry
    if entry is None:
        raise ValueError(f"algorithm {algorithm!r} has no catalog entry to predict its exponent")
    return entry


def exponent_rows(sweep: str, records: Sequence[Record], variable: Variable, *,
                  predicted: str | Mapping[str, str] | None = None, aggregate: str = "none",
                  confidence: float = 0.95) -> list[ExponentRow]:
    """One row per algorithm of `records`, in order of appearance, compared with `predicted`: one catalog
    entry for all, or one per algorithm (those missing get none); the entry's kind decides the verdict.

    Parameters
    ----------
    sweep : str
        The sweep's label in the table.
    records : sequence of dict
        Sweep records.
    variable : str or callable
        See `variable_function`.
    predicted : str or mapping of str to str, optional
        The catalog entry (or one per algorithm).
    aggregate, confidence
        As in `fit_records`.

    Examples
    --------
    >>> def record(n, t):  # a sweep record, reduced to what the fit reads
    ...     return {"key": n, "point": {"algorithm": "detag"}, "params": {"n": n},
    ...             "result": {"t_eps": t, "status": "converged" if t else "max_iterations"},
    ...             "predicted": {"lower_bound_gossip": 2.0 * n * n}}
    >>> records = [record(n, 5 * n * n + s) for n in (4, 8, 16, 32) for s in (0, 1)] + [record(64, None)]
    >>> (row,) = exponent_rows("example", records, "n", predicted="lower_bound_gossip")
    >>> print(exponent_table_markdown([row]).splitlines()[2])
    | example | detag | n | 2.00 [1.99, 2.00] | 8 (1; 0) | 2.00 (lower_bound_gossip, lower) | consistent |
    """
    groups: dict[str, list[Record]] = {}
    for record in records:
        groups.setdefault(str(record["point"].get("algorithm", "?")), []).append(record)
    rows = []
    for algorithm, group in groups.items():
        measured = fit_records(group, variable, aggregate=aggregate, confidence=confidence)
        name = predicted.get(algorithm) if isinstance(predicted, Mapping) else predicted
        value, kind = None, None
        finished = [record for record in group if is_finished(record)]
        if name is not None:
            value = predicted_exponent(finished or group, name, variable)
            kind = bounds.get(name).kind
        rows.append(ExponentRow(sweep, algorithm, variable_name(variable), measured, name, value, kind,
                                tuple(finished)))
    return rows


_COLUMNS = ("sweep", "algorithm", "variable", "measured", "ci_low", "ci_high", "runs_fitted", "unfinished",
            "diverged", "predicted_by", "kind", "predicted", "verdict")


def _row_cells(row: ExponentRow) -> dict[str, Any]:
    fit = row.measured.fit
    return {
        "sweep": row.sweep, "algorithm": row.algorithm, "variable": row.variable,
        "measured": None if fit is None else fit.slope,
        "ci_low": None if fit is None else fit.ci_low,
        "ci_high": None if fit is None else fit.ci_high,
        "runs_fitted": 0 if fit is None else fit.n_points,
        "unfinished": row.measured.unfinished,
        "diverged": row.measured.diverged,
        "predicted_by": row.predicted_name or "",
        "kind": row.kind or "",
        "predicted": row.predicted,
        "verdict": row.verdict,
    }


def exponent_table_csv(rows: Sequence[ExponentRow]) -> str:
    """The table as CSV (full precision) under a header of the column names.

    Parameters
    ----------
    rows : sequence of ExponentRow
        The rows.
    """
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({key: ("" if value is None else value) for key, value in _row_cells(row).items()})
    return buffer.getvalue()


def exponent_table_markdown(rows: Sequence[ExponentRow]) -> str:
    """The table as markdown: slope with CI, runs fitted / not finished (diverged), the predicted exponent
    with its entry and kind, the verdict; under it, the runs behind every violated row.

    Parameters
    ----------
    rows : sequence of ExponentRow
        The rows.
    """
    lines = [
        "| sweep | algorithm | variable | measured exponent (95% CI) | runs fitted (not finished; diverged) "
        "| predicted (by, kind) | verdict |",
        "|---|---|---|---|---|---|---|",
    ]
    violations = []
    for row in rows:
        cells = _row_cells(row)
        fit = row.measured.fit
        measured = "n/a" if fit is None else f"{fit.slope:.2f} [{fit.ci_low:.2f}, {fit.ci_high:.2f}]"
        if fit is not None and abs(fit.confidence - 0.95) > 1e-12:
            measured += f" ({fit.confidence:.0%})"
        predicted = "" if row.predicted is None else f"{row.predicted:.2f} ({row.predicted_name}, {row.kind})"
        lines.append(
            f"| {row.sweep} | {row.algorithm} | {VARIABLE_LABELS.get(row.variable, row.variable)} "
            f"| {measured} "
            f"| {cells['runs_fitted']} ({cells['unfinished']}; {cells['diverged']}) | {predicted} "
            f"| {cells['verdict']} |"
        )
        if row.verdict == "violated":
            x_of = variable_function(row.variable) if row.variable in VARIABLES else None
            runs = ", ".join(
                (f"{row.variable} = {x_of(record):.4g}: " if x_of else "")
                + f"T_eps = {record['result']['t_eps']} (record {record.get('key')})"
                for record in row.runs)
            violations.append(f"- violated: {row.sweep} / {row.algorithm} against {row.predicted_name} "
                              f"({row.kind}): runs {runs}")
    if violations:
        lines += ["", *violations]
    return "\n".join(lines) + "\n"


def write_exponent_table(rows: Sequence[ExponentRow], stem: str | pathlib.Path) -> list[pathlib.Path]:
    """Write ``<stem>.md`` and ``<stem>.csv`` atomically; return both paths.

    Parameters
    ----------
    rows : sequence of ExponentRow
        The rows.
    stem : str or pathlib.Path
        The path without suffix.
    """
    from decbounds.paper_figures.plotting import atomic_write_bytes

    stem = pathlib.Path(stem)
    markdown, table = stem.with_suffix(".md"), stem.with_suffix(".csv")
    atomic_write_bytes(markdown, exponent_table_markdown(rows).encode())
    atomic_write_bytes(table, exponent_table_csv(rows).encode())
    return [markdown, table]
