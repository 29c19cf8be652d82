"""The compression figure's runner and tables on tiny inputs (docs/theory.md §18)."""

from __future__ import annotations

import math

from decbounds.paper_figures import compression as cf

TINY = cf.MODES["tiny"]


def _point(series: str, k: int, sigma: float = 0.0) -> dict:
    return next(p for p in cf.points(TINY) if p["series"] == series and p["k"] == k and p["sigma"] == sigma)


def test_a_point_records_t_eps_bits_and_the_compressors_delta() -> None:
    record = cf.measure_point(_point("BEER, top-k", 2))
    result, params = record["result"], record["params"]
    assert result["status"] == "converged" and result["t_eps"] > 0
    # two top-k vectors per iteration, 2 (64 + ceil(log2 8)) bits each
    assert result["bits_per_iteration"] == 2 * 2 * (64 + 3)
    assert result["bits"] == result["t_eps"] * result["bits_per_iteration"]
    assert params["delta"] == 2 / TINY.d and "omega" not in params
    assert math.isclose(params["epsilon"], TINY.tol**2)
    unbiased = cf.measure_point(_point("BEER, random-k", 2))["params"]
    assert unbiased["omega"] == TINY.d / 2 - 1
    assert math.isclose(unbiased["delta"], 1 / (1 + unbiased["omega"]))


def test_a_baseline_sends_64_d_bits_per_vector() -> None:
    record = cf.measure_point(_point("dsgt", TINY.d))
    assert record["result"]["bits_per_iteration"] == 2 * 64 * TINY.d and record["params"]["delta"] == 1.0


def _record(series: str, k: int, t: float, d: int = 64, sigma: float = 0.0) -> dict:
    bits_each = 68 * k
    return {"key": f"{series}{k}", "point": {"series": series, "compressor": f"top_k:{k}", "k": k,
                                             "sigma": sigma},
            "params": {"delta": k / d},
            "result": {"t_eps": t, "t_eps_range": [t, t], "status": "converged", "bits": t * bits_each,
                       "bits_per_iteration": bits_each},
            "predicted": {"choco_sgd": 100.0 * d / k, "beer": 50.0 * d / k}}


def test_the_predicted_slopes_are_one_for_t_eps_and_zero_for_bits() -> None:
    records = [_record("BEER, top-k", k, 30 * (64 / k) ** 0.5) for k in (64, 32, 16, 8, 4, 2, 1)]
    rows = cf.exponent_rows(records)
    by = {(row.sweep, row.algorithm): row for row in rows}
    teps = by[("T_eps vs 1/delta, sigma=0", "BEER, top-k")]
    bits = by[("bits-to-eps vs 1/delta, sigma=0", "BEER, top-k")]
    assert math.isclose(teps.predicted, 1.0) and abs(bits.predicted) < 1e-12
    assert abs(teps.measured.fit.slope - 0.5) < 0.05 and abs(bits.measured.fit.slope + 0.5) < 0.05


def test_the_fit_leaves_out_the_flat_part() -> None:
    """CHOCO-SGD's T_eps is flat up to 1/delta = 4 and then rises (quick set: 45, 45, 45, 99, 254): one
    power law across that kink (fitted from 1/delta = 1 before) describes neither part. The fit starts past
    the flat part, here at 1/delta = 8, and recovers the rising part's slope."""
    rising = {64: 45, 32: 45, 16: 45, 8: 45 * 2.2, 4: 45 * 2.2 * 2.0, 2: 45 * 2.2 * 4.0, 1: 45 * 2.2 * 8.0}
    records = [_record("CHOCO-SGD, top-k", k, t) for k, t in rising.items()]
    row = next(r for r in cf.exponent_rows(records) if r.sweep.startswith("T_eps"))
    assert row.measured.fit is not None and row.measured.fit.x_min == 8.0
    assert abs(row.measured.fit.slope - 1.0) < 1e-9


def test_no_power_law_is_claimed_where_the_line_does_not_fit() -> None:
    """BEER with top-k on the quick set (19, 25, 24, 31, 85): above the flat part, the medians lie up to
    1.39x off any line, so no slope is claimed and the reason is kept."""
    records = [_record("BEER, top-k", k, t, d=16) for k, t in zip((16, 8, 4, 2, 1), (19, 25, 24, 31, 85),
                                                                    strict=True)]
    fitted, reason = cf.power_law_fit(records)
    assert fitted == [] and "not a power law" in reason
    rows = cf.exponent_rows(records)
    assert len(rows) == 2 and all(row.measured.fit is None and row.measured.reason == reason for row in rows)
    too_few, why = cf.power_law_fit(records[:3])
    assert too_few == [] and "only 2 points" in why


def test_every_point_runs_several_seeds_and_its_interval_holds_the_median() -> None:
    sweep = cf.points(TINY)
    assert all(len(p["seeds"]) == TINY.seeds >= 3 for p in sweep)
    assert {p["sigma"] for p in sweep} == set(TINY.sigmas) and max(TINY.sigmas) > 0  # the stochastic row
    assert {p["series"] for p in sweep if p["sigma"] > 0} == {p["series"] for p in sweep if p["sigma"] == 0}
    for series, sigma in (("BEER, random-k", 0.0), ("CHOCO-SGD, top-k", 0.1)):
        record = cf.measure_point(_point(series, 2, sigma))
        result = record["result"]
        seeds = result["t_eps_seeds"]
        assert len(seeds) == TINY.seeds and len(set(seeds)) > 1  # the draws (or the noise) move T_eps
        low, high = result["t_eps_range"]
        assert low <= result["t_eps"] <= high and result["t_eps"] == sorted(seeds)[len(seeds) // 2]
    assert cf.measure_point(_point("CHOCO-SGD, top-k", 2, 0.1)) == record  # same seeds, same bits
    deterministic = cf.measure_point(_point("BEER, top-k", 2))["result"]
    assert len(set(deterministic["t_eps_seeds"])) == 1  # top-k without noise: one value on every seed


def test_the_uncompressed_d_psgd_is_the_form_choco_reduces_to() -> None:
    """CHOCO-SGD with C = identity and gamma = 1 is D-PSGD in adapt-then-combine form: the baseline runs that
    form (before: combine-then-adapt, 82 iterations against 45 on the quick instance, so CHOCO at 1/delta = 1
    looked 1.8x faster than uncompressed D-PSGD)."""
    baseline = _point("dpsgd", TINY.d)
    assert baseline["hyper"] == {"form": "atc"}
    from decbounds import algorithms

    f, W = cf._problem(TINY.n, TINY.d), cf._ring(TINY.n)
    atc = algorithms.run("dpsgd", f, W, step_size=0.4, iterations=TINY.cap, tol=TINY.tol, form="atc")
    choco = algorithms.run("choco_sgd", f, W, step_size=0.4, iterations=TINY.cap, tol=TINY.tol,
                           compressor="identity", gamma=1.0)
    assert atc.t_eps == choco.t_eps and cf.measure_point(baseline)["result"]["t_eps"] <= atc.t_eps
