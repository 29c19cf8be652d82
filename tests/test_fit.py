"""Exponent fits: known exponents recovered with covering intervals; caps excluded; the table."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paper_figures.fit import (
    best_records,
    exponent_rows,
    exponent_table_csv,
    exponent_table_markdown,
    fit_exponent,
    fit_records,
    predicted_exponent,
    write_exponent_table,
)


@given(exponent=st.floats(-2.0, 3.0), scale=st.floats(0.1, 100.0))
@settings(max_examples=25)
def test_exact_power_law_gives_the_exponent_exactly(exponent: float, scale: float) -> None:
    x = np.array([1.0, 2.0, 5.0, 10.0, 40.0])
    fit = fit_exponent(x, scale * x**exponent)
    assert fit.slope == pytest.approx(exponent, abs=1e-9)
    assert np.exp(fit.intercept) == pytest.approx(scale, rel=1e-9)
    assert fit.stderr == pytest.approx(0.0, abs=1e-9)
    assert fit.predict(3.0) == pytest.approx(scale * 3.0**exponent, rel=1e-9)


def test_noisy_fits_cover_the_truth_at_about_the_nominal_rate() -> None:
    # 400 synthetic sweeps with log-normal noise: the 95% interval must cover the true exponent in about
    # 95% of them (binomial sd ~1.1%), and must not be vacuous.
    rng = np.random.default_rng(20240601)
    x = np.repeat(np.geomspace(4, 256, 7), 5)
    covered, widths = 0, []
    for _ in range(400):
        y = 7.0 * x**1.5 * np.exp(0.3 * rng.standard_normal(x.size))
        fit = fit_exponent(x, y)
        covered += fit.covers(1.5)
        widths.append(fit.ci_high - fit.ci_low)
    assert 0.91 <= covered / 400 <= 0.99
    assert np.median(widths) < 0.15


def test_confidence_level_widens_the_interval() -> None:
    rng = np.random.default_rng(3)
    x = np.geomspace(1, 100, 12)
    y = x**-1.0 * np.exp(0.2 * rng.standard_normal(x.size))
    narrow, wide = fit_exponent(x, y, confidence=0.8), fit_exponent(x, y, confidence=0.99)
    assert wide.ci_low < narrow.ci_low < narrow.slope < narrow.ci_high < wide.ci_high
    assert narrow.slope == wide.slope


@pytest.mark.parametrize(("x", "y", "message"), [
    ([1, 2], [1, 2], "at least 3 points"),
    ([1, 1, 1], [1, 2, 3], "2 distinct"),
    ([1, 2, 0], [1, 2, 3], "x must be positive"),
    ([1, 2, 3], [1, -2, 3], "y must be positive"),
    ([1, 2, 3], [1, 2], "same length"),
])
def test_bad_fit_input(x: list, y: list, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        fit_exponent(x, y)


def test_bad_confidence() -> None:
    with pytest.raises(ValueError, match="confidence"):
        fit_exponent([1, 2, 3], [1, 2, 3], confidence=1.0)


def record(algorithm: str, n: int, t_eps: int | None, *, step: float = 0.1, seed: int = 0,
           predicted: float | None = None) -> dict:
    return {
        "key": f"{algorithm}-{n}-{step}-{seed}",
        "point": {"algorithm": algorithm, "step_size": step, "seed": seed, "instance": {"n": n}},
        "params": {"n": n, "lam": 1 - 1 / n**2, "B": 2, "sigma": n},
        "result": {"t_eps": t_eps},
        "predicted": {} if predicted is None else {"bound": predicted},
    }


def test_capped_runs_are_excluded_and_counted() -> None:
    records = [record("a", n, 3 * n**2) for n in (2, 4, 8, 16)] + [record("a", 32, None)]
    fitted = fit_records(records, "n")
    assert fitted.fit is not None and fitted.fit.slope == pytest.approx(2.0)
    assert (fitted.runs, fitted.unfinished, fitted.fit.n_points) == (5, 1, 4)
    too_few = fit_records(records[:2], "n")
    assert too_few.fit is None and "2 usable" in too_few.reason


def test_variables_read_the_record_params() -> None:
    records = [record("a", n, n**2) for n in (2, 4, 8)]
    assert fit_records(records, "inv_gap").fit.slope == pytest.approx(1.0)  # 1/(1-lam) = n^2
    assert fit_records(records, "sigma2").fit.slope == pytest.approx(1.0)
    assert fit_records(records, "nB").fit.slope == pytest.approx(2.0)
    assert fit_records(records, lambda r: r["params"]["n"] ** 0.5).fit.slope == pytest.approx(4.0)
    with pytest.raises(ValueError, match="unknown sweep variable"):
        fit_records(records, "lam")


def test_median_aggregation_fits_per_x_medians() -> None:
    records = [record("a", n, n * factor, seed=seed)
               for n in (2, 4, 8, 16) for seed, factor in enumerate((1, 2, 100))]
    assert fit_records(records, "n", aggregate="median").fit.slope == pytest.approx(1.0)
    assert fit_records(records, "n", aggregate="median").fit.n_points == 4


def test_best_records_takes_the_tuned_minimum_per_seed() -> None:
    records = [record("a", 4, 50, step=0.1), record("a", 4, 30, step=0.2), record("a", 4, None, step=0.4),
               record("a", 4, 70, step=0.1, seed=1), record("a", 8, None, step=0.1)]
    best = best_records(records, over=("step_size",))
    summary = {(r["point"]["instance"]["n"], r["point"]["seed"], r["result"]["t_eps"]) for r in best}
    assert summary == {(4, 0, 30), (4, 1, 70), (8, 0, None)}


def test_predicted_exponent_and_the_table(tmp_path) -> None:
    records = [record("fast", n, 5 * n, predicted=2.0 * n) for n in (4, 8, 16, 32)]
    records += [record("slow", n, n**3, predicted=2.0 * n) for n in (4, 8, 16, 32)]
    assert predicted_exponent(records, "bound", "n") == pytest.approx(1.0)
    rows = exponent_rows("path", records, "n", predicted="bound")
    assert [(row.algorithm, row.agrees) for row in rows] == [("fast", True), ("slow", False)]
    markdown = exponent_table_markdown(rows)
    assert "| path | fast | n | 1.00 [1.00, 1.00] | 4 (0) | 1.00 (bound) | yes |" in markdown
    assert "| NO |" in markdown
    table = list(csv.DictReader(io.StringIO(exponent_table_csv(rows))))
    assert float(table[1]["measured"]) == pytest.approx(3.0) and table[1]["agrees"] == "NO"
    md, csv_path = write_exponent_table(rows, tmp_path / "exponents")
    assert md.read_text() == markdown and csv_path.read_text() == exponent_table_csv(rows)
    no_prediction = exponent_rows("path", records, "n", predicted={"fast": "bound"})
    assert no_prediction[1].predicted is None and no_prediction[1].agrees is None


def test_missing_prediction_is_an_error() -> None:
    records = [record("a", n, n) for n in (2, 4, 8)]
    records[0]["prediction_errors"] = {"bound": "ValueError: needs sigma"}
    with pytest.raises(ValueError, match="needs sigma"):
        predicted_exponent(records, "bound", "n")
