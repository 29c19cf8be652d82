"""Compressors against their definitions (docs/theory.md §18).

Expectations are exact where the randomness can be enumerated (random-k: every k-subset; QSGD: every
rounding of every coordinate, 2^d outcomes) or where the compressor is deterministic (top-k, scaled sign).
What enumeration cannot see -- that the sampler draws those outcomes with the right probabilities -- is
tested by Monte Carlo with a tolerance from the binomial variance: a frequency over N draws has standard
deviation sqrt(p (1 - p) / N) <= 1 / (2 sqrt(N)), and the tests allow 6 of them (a false alarm has
probability below 2e-9 per frequency by the normal tail, and the seed is fixed).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from decbounds.algorithms.compression import (
    QSGD,
    Contractive,
    Identity,
    RandomK,
    ScaledSign,
    TopK,
    contractive,
    index_bits,
    make_compressor,
)
from hypothesis import given
from hypothesis import strategies as st

finite = st.floats(min_value=-1e3, max_value=1e3, allow_nan=False, allow_infinity=False)


def vectors(min_d: int = 1, max_d: int = 8) -> st.SearchStrategy[np.ndarray]:
    return st.integers(min_d, max_d).flatmap(
        lambda d: st.lists(finite, min_size=d, max_size=d).map(lambda v: np.array(v, dtype=float)))


def _norm2(x: np.ndarray) -> float:
    return float(np.dot(x, x))


# -- random-k -------------------------------------------------------------------------------------------


def _random_k_outcomes(x: np.ndarray, k: int) -> list[np.ndarray]:
    """Every value of the definition (d/k) sum_{i in S} x_i e_i, one per k-subset S (equally likely)."""
    d = x.size
    outcomes = []
    for S in itertools.combinations(range(d), k):
        y = np.zeros(d)
        y[list(S)] = x[list(S)] * (d / k)
        outcomes.append(y)
    return outcomes


@given(vectors(1, 7), st.data())
def test_random_k_is_unbiased_with_omega_d_over_k_minus_1_exactly(x, data):
    d = x.size
    k = data.draw(st.integers(1, d))
    C = RandomK(k)
    outcomes = _random_k_outcomes(x, k)
    mean = np.mean(outcomes, axis=0)
    second = np.mean([_norm2(y) for y in outcomes])
    assert np.allclose(mean, x, rtol=1e-12, atol=1e-9)  # E C(x) = x
    assert math.isclose(second, (1 + C.omega(d)) * _norm2(x), rel_tol=1e-9, abs_tol=1e-9)  # equality
    # the code's draws are outcomes of the definition
    for seed in range(5):
        y = C.compress(x, np.random.default_rng(seed))
        assert any(np.array_equal(y, outcome) for outcome in outcomes)


def test_random_k_draws_every_coordinate_with_probability_k_over_d():
    d, k, draws = 6, 2, 20000
    X = np.broadcast_to(np.arange(1.0, d + 1), (draws, d))
    kept = RandomK(k).compress(X, np.random.default_rng(1)) != 0
    assert (kept.sum(axis=1) == k).all()
    p = k / d
    assert np.all(np.abs(kept.mean(axis=0) - p) <= 6 * math.sqrt(p * (1 - p) / draws))
    # and every pair equally often (a uniform k-subset, not only uniform marginals)
    pairs = {}
    for row in np.flatnonzero(kept.ravel()).reshape(draws, k) % d:
        key = tuple(sorted(int(i) for i in row))
        pairs[key] = pairs.get(key, 0) + 1
    q = 1 / math.comb(d, k)
    assert len(pairs) == math.comb(d, k)
    for count in pairs.values():
        assert abs(count / draws - q) <= 6 * math.sqrt(q * (1 - q) / draws)


# -- QSGD -----------------------------------------------------------------------------------------------


def _qsgd_moments(C: QSGD, x: np.ndarray) -> tuple[np.ndarray, float, list[np.ndarray]]:
    """E C(x), E||C(x)||^2 and the outcomes, enumerating the 2^d roundings (xi_i = l_i + 1 with probability
    p_i = r_i - l_i) from the code's levels."""
    norm, r, low = (np.asarray(a) for a in C.levels(x))
    p = r - low
    mean, second, outcomes = np.zeros_like(x), 0.0, []
    for up in itertools.product((0, 1), repeat=x.size):
        up = np.array(up)
        weight = float(np.prod(np.where(up == 1, p, 1 - p)))
        y = norm * np.sign(x) * (low + up) / C.s
        outcomes.append(y)
        mean += weight * y
        second += weight * _norm2(y)
    return mean, second, outcomes


@given(vectors(1, 8), st.integers(1, 8))
def test_qsgd_is_unbiased_within_its_omega(x, s):
    C = QSGD(s)
    d = x.size
    mean, second, outcomes = _qsgd_moments(C, x)
    assert np.allclose(mean, x, rtol=1e-9, atol=1e-9)
    assert second <= (1 + C.omega(d)) * _norm2(x) * (1 + 1e-12) + 1e-12
    # the closed form E||C||^2 = ||x||^2 (1 + sum p (1 - p) / s^2)
    _, r, low = C.levels(x)
    p = r - low
    assert math.isclose(second, _norm2(x) * (1 + float(np.sum(p * (1 - p))) / s**2), rel_tol=1e-9,
                        abs_tol=1e-9)
    y = C.compress(x, np.random.default_rng(0))
    assert any(np.allclose(y, outcome, rtol=0, atol=1e-12 * (1 + abs(x).max())) for outcome in outcomes)


def test_qsgd_omega_is_attained_where_every_coordinate_rounds_half_way():
    # d = 16, s = 2, x = ones: r_i = 2/4 = 0.5, p_i = 1/2, E||C||^2 = ||x||^2 (1 + 16/16): omega = 1 tight
    C, x = QSGD(2), np.ones(16)
    _, r, low = C.levels(x)
    p = r - low
    assert np.allclose(p, 0.5) and C.omega(16) == 1.0
    assert math.isclose(1 + float(np.sum(p * (1 - p))) / 4, 1 + C.omega(16))


def test_qsgd_rounds_up_with_probability_p():
    C, draws = QSGD(3), 20000
    x = np.array([0.3, -1.0, 2.0, 0.05])
    _, r, low = C.levels(x)
    p = r - low
    norm = np.linalg.norm(x)
    Y = C.compress(np.broadcast_to(x, (draws, 4)), np.random.default_rng(2))
    up = np.rint(np.abs(Y) * C.s / norm) - low
    assert set(np.unique(up)) <= {0.0, 1.0}
    assert np.all(np.abs(up.mean(axis=0) - p) <= 6 * np.sqrt(p * (1 - p) / draws) + 1e-12)


# -- contractive ----------------------------------------------------------------------------------------


@given(vectors(1, 10), st.data())
def test_top_k_contracts_by_k_over_d(x, data):
    d = x.size
    k = data.draw(st.integers(1, d))
    C = TopK(k)
    y = C.compress(x)
    assert np.count_nonzero(y) <= k
    assert _norm2(y - x) <= (1 - C.delta(d)) * _norm2(x) * (1 + 1e-12) + 1e-300
    kept = np.flatnonzero(y)
    assert np.array_equal(y[kept], x[kept])
    if kept.size and kept.size < d:  # the kept are the largest
        assert np.abs(x[kept]).min() >= np.delete(np.abs(x), kept).max()


@given(vectors(1, 10))
def test_scaled_sign_contracts_by_one_over_d(x):
    d = x.size
    y = ScaledSign().compress(x)
    assert _norm2(y - x) <= (1 - ScaledSign().delta(d)) * _norm2(x) * (1 + 1e-12) + 1e-300
    # the vector-wise constant ||x||_1^2 / (d ||x||^2) holds too where x has no zero entry
    if np.all(x != 0):
        assert math.isclose(_norm2(y - x), _norm2(x) - np.abs(x).sum() ** 2 / d, rel_tol=1e-9, abs_tol=1e-9)


@given(vectors(1, 6), st.data())
def test_a_scaled_unbiased_compressor_is_contractive_with_delta_one_over_one_plus_omega(x, data):
    d = x.size
    k = data.draw(st.integers(1, d))
    C = Contractive(RandomK(k))
    outcomes = [y / (1 + RandomK(k).omega(d)) for y in _random_k_outcomes(x, k)]
    error = np.mean([_norm2(y - x) for y in outcomes])
    assert math.isclose(C.delta(d), k / d)
    assert error <= (1 - C.delta(d)) * _norm2(x) * (1 + 1e-9) + 1e-9
    assert contractive(RandomK(k)) == C and contractive(TopK(k)) == TopK(k)


# -- batching, bits, specs -------------------------------------------------------------------------------


@pytest.mark.parametrize("spec", ["random_k:2", "qsgd:3", "top_k:2", "sign", "identity",
                                  "contractive:qsgd:1"])
def test_a_configuration_gets_the_same_bits_alone_and_in_a_batch(spec):
    C = make_compressor(spec)
    Z = np.random.default_rng(0).standard_normal((4, 3, 5))  # (n, k, d)
    together = C.compress(Z, [np.random.default_rng(10 + j) for j in range(3)])
    for j in range(3):
        alone = C.compress(Z[:, j : j + 1], [np.random.default_rng(10 + j)])
        assert np.array_equal(together[:, j : j + 1], alone)
    assert make_compressor(C.spec) == C


def test_bits_per_vector():
    assert Identity().bits(10) == 640
    assert RandomK(3).bits(100) == TopK(3).bits(100) == 3 * (64 + 7)
    assert QSGD(1).bits(10) == 64 + 10 * 2 and QSGD(4).bits(10) == 64 + 10 * 4
    assert ScaledSign().bits(10) == 74
    assert [index_bits(d) for d in (1, 2, 3, 4, 5)] == [0, 1, 2, 2, 3]


def test_bad_compressors_are_refused_with_the_argument_named():
    with pytest.raises(ValueError, match="k must be"):
        RandomK(0)
    with pytest.raises(ValueError, match="at most the dimension"):
        TopK(5).compress(np.ones(3))
    with pytest.raises(ValueError, match="compressor must be one of"):
        make_compressor("gzip")
    with pytest.raises(ValueError, match="integer k"):
        make_compressor("top_k:x")
    with pytest.raises(TypeError, match="compressor must be"):
        make_compressor(3)
    with pytest.raises(ValueError, match="rng must be"):
        RandomK(1).compress(np.ones(3))
    with pytest.raises(ValueError, match="one per configuration"):
        RandomK(1).compress(np.ones((2, 3, 4)), [np.random.default_rng(0)])
    with pytest.raises(ValueError, match="no omega"):
        TopK(1).omega(3)
    with pytest.raises(ValueError, match="unbiased"):
        Contractive(TopK(1))
