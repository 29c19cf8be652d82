"""DeTAG's parameter rules (Cor 6) and accelerated gossip's eta, rho (§7): values, properties, bad input."""

from __future__ import annotations

import math

import pytest
from decbounds.bounds import (
    accelerated_gossip_eta,
    accelerated_gossip_rho,
    detag_phase_length,
    detag_step_size,
)
from hypothesis import given
from hypothesis import strategies as st


def test_phase_length_hand_computed():
    # n = 16, lam = 0.95, varsigma0 = 1, T = 1e6, Delta = L = 1:
    # max(log(16)/2, log(1e6)/2) / sqrt(0.05) = 6.9078 / 0.22361 = 30.89 -> 31
    assert detag_phase_length(16, 0.95, 1.0, 10**6, 1.0, 1.0) == 31
    # homogeneous start: only log(n)/2 = 1.386 / 0.22361 = 6.2 -> 7
    assert detag_phase_length(16, 0.95, 0.0, 10**6, 1.0, 1.0) == 7
    # complete graph (lam = 0), one worker, tiny heterogeneity: exponent <= 0 -> at least 1
    assert detag_phase_length(1, 0.0, 1e-9, 10, 1.0, 1.0) == 1


@given(st.integers(1, 10**4), st.floats(0.0, 0.9999), st.floats(0.0, 100.0), st.integers(1, 10**8),
       st.floats(1e-3, 1e3), st.floats(1e-3, 1e3))
def test_phase_length_gives_rho_at_most_one_over_sqrt_n(n, lam, varsigma0, T, Delta, L):
    R = detag_phase_length(n, lam, varsigma0, T, Delta, L)
    assert isinstance(R, int) and R >= 1
    assert accelerated_gossip_rho(lam, R) <= 1 / math.sqrt(n) * (1 + 1e-12)  # what Cor 6's proof uses
    heterogeneity = math.log(varsigma0) + 0.5 * math.log(T / (Delta * L)) if varsigma0 > 0 else -1.0
    exact = max(0.5 * math.log(n), heterogeneity)
    assert R - 1 < max(exact / math.sqrt(1 - lam), 0.0) + 1e-9  # rounded up, by less than one


def test_step_size_hand_computed():
    n, lam, varsigma0, T, Delta, L, sigma, B = 16, 0.95, 1.0, 10**6, 1.0, 1.0, 1.0, 1
    R = detag_phase_length(n, lam, varsigma0, T, Delta, L)
    rho = (1 - math.sqrt(1 - lam)) ** R
    expected = 1 / (math.sqrt(sigma**2 * T * L / (B * R**2 * n * Delta))
                    + rho ** (2 / 3) * L ** (2 / 3) * varsigma0 ** (2 / 3) * T ** (1 / 3)
                    / (R ** (1 / 3) * Delta ** (1 / 3) * (1 - rho))
                    + 32 * L / (1 - rho) ** 2)
    assert detag_step_size(n, lam, varsigma0, T, Delta, L, sigma, B) == pytest.approx(expected, rel=1e-12)
    with_R = detag_step_size(n, lam, varsigma0, T, Delta, L, sigma, B, R=R)
    assert with_R == pytest.approx(expected, rel=1e-12)


@given(st.integers(1, 1000), st.floats(0.0, 0.999), st.floats(0.0, 10.0), st.integers(1, 10**7),
       st.floats(1e-2, 1e2), st.floats(1e-2, 1e2), st.floats(0.0, 10.0), st.integers(1, 64))
def test_step_size_meets_theorem5_condition(n, lam, varsigma0, T, Delta, L, sigma, B):
    R = detag_phase_length(n, lam, varsigma0, T, Delta, L)
    rho = accelerated_gossip_rho(lam, R)
    alpha = detag_step_size(n, lam, varsigma0, T, Delta, L, sigma, B)
    assert 0 < alpha <= (1 - rho) ** 2 / (32 * L) * (1 + 1e-12)


def test_eta_and_rho_values():
    assert accelerated_gossip_eta(0.0) == 0.0
    s = math.sqrt(1 - 0.9**2)
    assert accelerated_gossip_eta(0.9) == pytest.approx((1 - s) / (1 + s), rel=1e-14)
    assert accelerated_gossip_rho(0.75, 3) == pytest.approx(0.5**3, rel=1e-14)
    assert accelerated_gossip_rho(0.5, 0) == 1.0


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: detag_phase_length(0, 0.5, 1.0, 10, 1.0, 1.0), "n must be > 0"),
        (lambda: detag_phase_length(2.5, 0.5, 1.0, 10, 1.0, 1.0), "n must be an integer"),
        (lambda: detag_phase_length(4, 1.0, 1.0, 10, 1.0, 1.0), "lam must lie in"),
        (lambda: detag_phase_length(4, -0.1, 1.0, 10, 1.0, 1.0), "lam must lie in"),
        (lambda: detag_phase_length(4, 0.5, -1.0, 10, 1.0, 1.0), "varsigma0 must be >= 0"),
        (lambda: detag_phase_length(4, 0.5, 1.0, 0, 1.0, 1.0), "T must be > 0"),
        (lambda: detag_phase_length(4, 0.5, 1.0, 10, 0.0, 1.0), "Delta must be > 0"),
        (lambda: detag_phase_length(4, 0.5, 1.0, 10, 1.0, math.inf), "L must be a finite"),
        (lambda: detag_step_size(4, 0.5, 1.0, 10, 1.0, 1.0, -1.0, 1), "sigma must be >= 0"),
        (lambda: detag_step_size(4, 0.5, 1.0, 10, 1.0, 1.0, 1.0, 0), "B must be > 0"),
        (lambda: detag_step_size(4, 0.5, 1.0, 10, 1.0, 1.0, 1.0, 1, R=0), "R must be > 0"),
        (lambda: detag_step_size(4, 0.5, 1.0, 10, 1.0, 1.0, 1.0, 1, R=1.5), "R must be an integer"),
        (lambda: accelerated_gossip_rho(0.5, -1), "R must be a non-negative integer"),
        (lambda: accelerated_gossip_eta(float("nan")), "lam must lie in"),
    ],
)
def test_bad_input_is_a_value_error_naming_the_field(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_non_numbers_are_type_errors():
    with pytest.raises(TypeError, match="n must be a real number"):
        detag_phase_length("4", 0.5, 1.0, 10, 1.0, 1.0)
    with pytest.raises(TypeError, match="T must be a real number"):
        detag_phase_length(4, 0.5, 1.0, True, 1.0, 1.0)


def test_step_size_in_log_space_at_extreme_inputs():
    # sigma^2 T overflows a float: the formula is summed in log space (a float sum would give a silent 0.0
    # step size), and a step size that is not a positive float is a ValueError naming the inputs
    alpha = detag_step_size(16, 0.95, 1.0, 10**300, 1e300, 1e-300, 1e300, 1)
    assert 0.0 < alpha < 1e-100
    with pytest.raises(ValueError, match=r"step size of Cor. 6 is alpha = exp\(-1044"):
        detag_step_size(16, 0.5, 1.0, 10, 1.0, 1e308, 1e300, 1)
    with pytest.raises(ValueError, match=r"T must be a finite real number.*overflows float"):
        detag_phase_length(16, 0.5, 1.0, 10**400, 1.0, 1.0)
    # the log-space sum agrees with the direct formula where the latter is representable
    n, lam, v0, T, Delta, L, sigma, B, R = 16, 0.9, 0.7, 10**5, 2.0, 3.0, 0.5, 2, 5
    rho = accelerated_gossip_rho(lam, R)
    direct = 1.0 / (math.sqrt(sigma**2 * T * L / (B * R**2 * n * Delta))
                     + rho ** (2 / 3) * L ** (2 / 3) * v0 ** (2 / 3) * T ** (1 / 3)
                     / (R ** (1 / 3) * Delta ** (1 / 3) * (1.0 - rho)) + 32.0 * L / (1.0 - rho) ** 2)
    assert detag_step_size(n, lam, v0, T, Delta, L, sigma, B, R=R) == pytest.approx(direct, rel=1e-12)
