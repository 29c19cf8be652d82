"""Exponent fits: known exponents recovered with covering intervals; caps excluded; the table."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest
from decbounds.paper_figures.fit import (
    MIN_POINTS,
    exponent_rows,
    exponent_table_csv,
    exponent_table_markdown,
    fit_exponent,
    fit_records,
    predicted_exponent,
    verdict,
    worker_output,
    write_exponent_table,
)
from hypothesis import given, settings
from hypothesis import strategies as st


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
           predicted: dict | None = None, status: str | None = None, t_eps_local: int | None = None) -> dict:
    result = {"t_eps": t_eps}
    if status is not None:
        result["status"] = status
    if t_eps_local is not None:
        result["t_eps_local"] = t_eps_local
    return {
        "key": f"{algorithm}-{n}-{step}-{seed}",
        "point": {"algorithm": algorithm, "step_size": step, "seed": seed, "instance": {"n": n}},
        "params": {"n": n, "lam": 1 - 1 / n**2, "B": 2, "sigma": n},
        "result": result,
        "predicted": predicted or {},
    }


def test_capped_runs_are_excluded_and_counted() -> None:
    records = [record("a", n, 3 * n**2) for n in (2, 4, 8, 16)] + [record("a", 32, None)]
    fitted = fit_records(records, "n")
    assert fitted.fit is not None and fitted.fit.slope == pytest.approx(2.0)
    assert (fitted.runs, fitted.unfinished, fitted.fit.n_points) == (5, 1, 4)
    too_few = fit_records(records[:2], "n")
    assert too_few.fit is None and "2 usable" in too_few.reason


def test_diverged_runs_never_enter_a_fit_even_with_a_t_eps() -> None:
    # a blown-up run on the zero chain can carry a (tiny) T_eps; its status says diverged, and it must
    # neither enter the fit nor count as capped.
    records = [record("a", n, 3 * n**2, status="converged") for n in (2, 4, 8, 16)]
    records.append(record("a", 32, 5, status="diverged"))
    records.append(record("a", 64, None, status="max_iterations"))
    fitted = fit_records(records, "n")
    assert fitted.fit.slope == pytest.approx(2.0) and fitted.fit.n_points == 4
    assert (fitted.unfinished, fitted.diverged) == (2, 1)


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


def _fit(slope: float, points: int = 6, noise: float = 0.0) -> object:
    rng = np.random.default_rng(1)
    x = np.geomspace(4, 256, points)
    return fit_exponent(x, 5.0 * x**slope * np.exp(noise * rng.standard_normal(points)))


def test_verdict_against_a_lower_bound_is_one_sided() -> None:
    # Slower than a lower bound's exponent is no contradiction (a two-sided test would say "NO").
    assert verdict(_fit(3.0, noise=0.05), 1.0, "lower") == "consistent"
    assert verdict(_fit(1.0, noise=0.05), 1.0, "lower") == "consistent"
    assert verdict(_fit(0.2, noise=0.05), 1.0, "lower") == "violated"


def test_verdict_against_an_upper_bound_is_one_sided_and_tight_when_covered() -> None:
    # Beating an upper bound is no contradiction (a two-sided test: "NO"); matching it is "tight".
    assert verdict(_fit(0.2, noise=0.05), 7.0, "upper") == "consistent"
    assert verdict(_fit(1.0, noise=0.05), 1.0, "upper") == "tight"
    assert verdict(_fit(3.0, noise=0.05), 1.0, "upper") == "violated"


def test_too_few_points_is_never_a_verdict() -> None:
    # DeFacto's quick fit: 3 points and the interval [-0.85, 3.44], too wide for a "yes"
    wide = fit_exponent([3.0, 6.0, 12.0], [10.0, 60.0, 90.0])
    assert wide.ci_low < 1.23 < wide.ci_high
    assert MIN_POINTS == 4
    for kind in ("lower", "upper"):
        assert verdict(wide, 1.23, kind) == "too few points"
        assert verdict(None, 1.23, kind) == "too few points"
    # seeds at one x are replicates, not points: 3 sweep points x 16 seeds is still too few
    x = np.repeat([1.0, 2.0, 4.0], 16)
    assert verdict(fit_exponent(x, x * np.linspace(1, 2, 48)), 1.0, "upper") == "too few points"
    assert verdict(_fit(1.0), None, "upper") == "" and verdict(_fit(1.0), 1.0, None) == ""
    with pytest.raises(ValueError, match="kind"):
        verdict(_fit(1.0), 1.0, "both")


def test_predicted_exponent_and_the_table(tmp_path) -> None:
    # catalog entries of both kinds: "detag" is an upper bound, "lower_bound_gossip" a lower one
    sizes = (4, 8, 16, 32)
    records = [record("fast", n, 5 * n, predicted={"detag": 2.0 * n, "lower_bound_gossip": 2.0 * n**2})
               for n in sizes]
    records += [record("slow", n, n**3, predicted={"detag": 2.0 * n, "lower_bound_gossip": 2.0 * n**2})
                for n in sizes]
    assert predicted_exponent(records, "detag", "n") == pytest.approx(1.0)
    upper = exponent_rows("path", records, "n", predicted="detag")
    assert [(row.algorithm, row.kind, row.verdict) for row in upper] == [
        ("fast", "upper", "tight"), ("slow", "upper", "violated")]
    lower = exponent_rows("path", records, "n", predicted="lower_bound_gossip")
    assert [(row.algorithm, row.kind, row.verdict) for row in lower] == [
        ("fast", "lower", "violated"), ("slow", "lower", "consistent")]
    markdown = exponent_table_markdown(upper + lower)
    assert "| path | fast | n | 1.00 [1.00, 1.00] | 4 (0; 0) | 1.00 (detag, upper) | tight |" in markdown
    # a violation shows its runs under the table
    assert "- violated: path / slow against detag (upper): runs n = 4: T_eps = 64 (record slow-4-0.1-0)" \
        in markdown
    assert "- violated: path / fast against lower_bound_gossip (lower)" in markdown
    table = list(csv.DictReader(io.StringIO(exponent_table_csv(upper))))
    assert float(table[1]["measured"]) == pytest.approx(3.0) and table[1]["verdict"] == "violated"
    md, csv_path = write_exponent_table(upper, tmp_path / "exponents")
    assert md.read_text() == exponent_table_markdown(upper)
    assert csv_path.read_text() == exponent_table_csv(upper)
    no_prediction = exponent_rows("path", records, "n", predicted={"fast": "detag"})
    assert no_prediction[1].predicted is None and no_prediction[1].verdict == ""


def test_worker_output_fits_the_local_t_eps() -> None:
    records = [record("a", n, n, status="converged", t_eps_local=n**2) for n in (2, 4, 8, 16)]
    records.append(record("a", 32, 32, status="converged"))  # the workers never all reached eps
    records.append(record("a", 64, None, status="diverged"))
    swapped = worker_output(records)
    assert [r["result"]["status"] for r in swapped[-2:]] == ["max_iterations", "diverged"]
    fitted = fit_records(swapped, "n")
    assert fitted.fit.slope == pytest.approx(2.0) and (fitted.unfinished, fitted.diverged) == (2, 1)
    assert fit_records(records, "n").fit.slope == pytest.approx(1.0)  # the records themselves are unchanged


def test_missing_prediction_is_an_error() -> None:
    records = [record("a", n, n) for n in (2, 4, 8)]
    records[0]["prediction_errors"] = {"bound": "ValueError: needs sigma"}
    with pytest.raises(ValueError, match="needs sigma"):
        predicted_exponent(records, "bound", "n")
