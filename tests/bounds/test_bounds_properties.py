"""Property tests over the whole catalog: monotonicity in the problem constants, in n*B and in
lam; DeTAG's gap to Cor 2 is its log factor; conversions and the vectorized evaluator agree with evaluate.

Hard-instance entries are 0 (vacuous, never negative) while their chain length T_c <= 1, so every property
holds everywhere, the vacuous region included (pinned in
test_bounds_catalog.py::test_hard_instances_are_vacuous_for_large_epsilon).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from decbounds import bounds


def _log_uniform(low: float, high: float) -> st.SearchStrategy[float]:
    return st.floats(math.log10(low), math.log10(high)).map(lambda x: float(10.0**x))


POINTS = st.fixed_dictionaries({
    "Delta": _log_uniform(1e-2, 1e4),
    "L": _log_uniform(1e-2, 1e4),
    "sigma": _log_uniform(1e-3, 1e2),
    "varsigma": _log_uniform(1e-3, 1e2),
    "varsigma0": _log_uniform(1e-3, 1e2),
    "n": st.integers(1, 1000),
    "B": st.integers(1, 64),
    "epsilon": _log_uniform(1e-4, 1.0),
    "lam": st.floats(0.0, 0.999),
    "D": st.integers(1, 1000),
    "omega": st.one_of(st.just(0.0), _log_uniform(1e-3, 1e3)),
    "delta": _log_uniform(1e-3, 1.0),
    "G": _log_uniform(1e-3, 1e3),
    "n_eff": st.floats(1.0, 1000.0),
    "mu": _log_uniform(1e-3, 1e3),
    "eta": _log_uniform(1e-4, 0.02),  # stable for every zeta <= 50 (the random quadratic's largest step)
    "zeta": st.floats(1.0, 50.0),
})
FACTORS = _log_uniform(1.0, 1e3)
RATES = [bounds.get(name) for name in bounds.names()]
TOLERANCE = 1e-12


def _not_smaller(after: float, before: float) -> bool:
    return after >= before - TOLERANCE * (abs(before) + 1.0)


def _scaled(point: dict, symbol: str, factor: float) -> dict:
    if symbol == "inverse_epsilon":
        return {**point, "epsilon": point["epsilon"] / factor}
    return {**point, symbol: point[symbol] * factor}


def _check_nondecreasing(symbol: str, point: dict, factor: float) -> None:
    bigger = _scaled(point, symbol, factor)
    for rate in RATES:
        before = rate.evaluate(**point)
        after = rate.evaluate(**bigger)
        assert _not_smaller(after, before), (rate.name, symbol, point, factor, before, after)


@pytest.mark.parametrize("symbol", ["Delta", "L", "sigma", "varsigma", "varsigma0", "omega",
                                    "inverse_epsilon"])
@given(point=POINTS, factor=FACTORS)
def test_every_rate_nondecreasing(symbol, point, factor):
    _check_nondecreasing(symbol, point, factor)


@given(POINTS, st.integers(1, 50), st.sampled_from(["n", "B"]))
def test_sampling_terms_nonincreasing_in_n_times_B(point, factor, symbol):
    bigger = {**point, symbol: point[symbol] * factor}
    for rate in RATES:
        if "sampling" not in rate.terms:
            continue
        before = rate.evaluate_terms(**point)["sampling"]
        after = rate.evaluate_terms(**bigger)["sampling"]
        assert after <= before + TOLERANCE * (abs(before) + 1.0), (rate.name, symbol, point, factor)


@given(POINTS, st.floats(0.0, 0.999))
def test_communication_terms_nondecreasing_in_lam(point, other_lam):
    low, high = sorted((point["lam"], other_lam))
    for rate in RATES:
        if "communication" not in rate.terms:
            continue
        before = rate.evaluate_terms(**{**point, "lam": low})["communication"]
        after = rate.evaluate_terms(**{**point, "lam": high})["communication"]
        assert _not_smaller(after, before), (rate.name, point, low, high)


@given(POINTS)
def test_detag_over_gossip_lower_bound_is_its_log_factor(point):
    log_factor = math.log(point["n"] + point["varsigma0"] * point["n"]
                          / (point["epsilon"] * math.sqrt(point["Delta"] * point["L"])))
    ratio = bounds.gap("detag", "lower_bound_gossip", term="communication", **point)
    assert math.isclose(ratio, log_factor, rel_tol=1e-9, abs_tol=1e-12)
    # the totals: between 1 and the log factor whenever the log factor is >= 1 (same sampling term)
    total = bounds.gap("detag", **point)
    if log_factor >= 1:
        assert 1 - 1e-12 <= total <= log_factor * (1 + 1e-12)


@given(POINTS)
def test_convention_round_trip_is_exact_numerically(point):
    for rate in RATES:
        if rate.convention == "function_value":  # converts to nothing
            continue
        other = "grad_norm_sq" if rate.convention == "grad_norm" else "grad_norm"
        mapped = point["epsilon"] ** 2 if other == "grad_norm_sq" else math.sqrt(point["epsilon"])
        converted = rate.in_convention(other).evaluate(**{**point, "epsilon": mapped})
        assert math.isclose(converted, rate.evaluate(**point), rel_tol=1e-9, abs_tol=1e-9), rate.name


@given(POINTS)
def test_lambdify_agrees_with_evaluate(point):
    for rate in RATES:
        vectorized = float(rate.lambdify()(**point))
        exact = rate.evaluate(**point)
        if rate.name.startswith("hard_instance"):
            # float64 floor may sit one chain link lower exactly at integer boundaries (documented)
            assert vectorized <= exact + TOLERANCE * (abs(exact) + 1.0)
        else:
            assert math.isclose(vectorized, exact, rel_tol=1e-12, abs_tol=0.0), rate.name


def test_hard_instances_monotone_where_informative():
    # a dense deterministic sweep of the informative region (T_c >= 2), rarely hit by the random points above
    eps = np.logspace(-4, -2, 25)
    for name in ("hard_instance_sampling", "hard_instance_sampling_sharp", "hard_instance_communication"):
        rate = bounds.get(name)
        values = [rate.evaluate(Delta=10.0, L=1.0, sigma=0.5, n=8, B=2, epsilon=float(e)) for e in eps[::-1]]
        assert all(b >= a for a, b in itertools.pairwise(values)), name
        assert values[-1] > 0
