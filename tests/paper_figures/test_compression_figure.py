"""The compression figure's runner and tables on tiny inputs (docs/theory.md §18)."""

from __future__ import annotations

import math

from decbounds.paper_figures import compression as cf

TINY = cf.MODES["tiny"]


def _point(series: str, k: int) -> dict:
    return next(p for p in cf.points(TINY) if p["series"] == series and p["k"] == k)


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


def test_the_predicted_slopes_are_one_for_t_eps_and_zero_for_bits() -> None:
    def record(series: str, k: int, t: int) -> dict:
        bits_each = 68 * k
        return {"key": f"{series}{k}", "point": {"series": series, "compressor": f"top_k:{k}", "k": k},
                "params": {"delta": k / 16},
                "result": {"t_eps": t, "status": "converged", "bits": t * bits_each,
                           "bits_per_iteration": bits_each},
                "predicted": {"choco_sgd": 100.0 * 16 / k, "beer": 50.0 * 16 / k}}
    records = [record("CHOCO-SGD, top-k", k, int(30 * (16 / k) ** 0.5)) for k in (16, 8, 4, 2, 1)]
    rows = cf.exponent_rows(records)
    by = {(row.sweep, row.algorithm): row for row in rows}
    teps = by[("T_eps vs 1/delta", "CHOCO-SGD, top-k")]
    bits = by[("bits-to-eps vs 1/delta", "CHOCO-SGD, top-k")]
    assert math.isclose(teps.predicted, 1.0) and abs(bits.predicted) < 1e-12
    assert abs(teps.measured.fit.slope - 0.5) < 0.05 and abs(bits.measured.fit.slope + 0.5) < 0.05


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
