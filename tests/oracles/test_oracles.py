"""Oracles: unbiasedness and variance by Monte Carlo (fixed seeds), query counts, the zero-chain oracle's
batch semantics and the docs/errata.md E23 variance constant."""

import math

import numpy as np
import pytest
from decbounds.instances.digits import digits_problem
from decbounds.instances.hard import sampling_instance
from decbounds.instances.problems import heterogeneous_quadratic
from decbounds.instances.zero_chain import G_INF, zero_chain
from decbounds.oracles import (
    VARIANCE_CONSTANT,
    ExactOracle,
    FiniteSumOracle,
    GaussianOracle,
    ZeroChainOracle,
    make_oracle,
)


def monte_carlo(oracle, X, seed, draws, batch=1):
    """(mean, mean squared deviation from the exact gradient) over `draws` calls, one generator."""
    rng = np.random.default_rng(seed)
    exact = oracle.f.grad(X)
    samples = np.stack([oracle.sample(X, rng, batch) for _ in range(draws)])
    return samples.mean(axis=0), np.mean(np.sum((samples - exact) ** 2, axis=-1), axis=0), exact


def monte_carlo_configs(oracle, X, seed, draws, batch=1):
    """As `monte_carlo`, with the draws laid along a configuration axis: one call, X (n, 1, d)."""
    repeated = np.repeat(X, draws, axis=1)
    samples = oracle.sample(repeated, np.random.default_rng(seed), batch)
    exact = oracle.f.grad(X)
    deviation = np.sum((samples - exact) ** 2, axis=-1)
    return samples.mean(axis=1, keepdims=True), deviation.mean(axis=1, keepdims=True), exact


def test_exact_oracle_and_query_counts():
    f = heterogeneous_quadratic(4, 3, 0.5, seed=0)
    oracle = ExactOracle(f)
    X = np.random.default_rng(0).normal(size=(4, 5, 3))
    np.testing.assert_array_equal(oracle.sample(X, np.random.default_rng(0), 3), f.grad(X))
    assert oracle.exact and oracle.queries_per_call(X, 3) == 4 * 5 * 3
    assert oracle.queries_per_call(X[:, 0], 2) == 8
    np.testing.assert_array_equal(oracle.full_grad(X[0]), f.full_grad(X[0]))
    with pytest.raises(ValueError, match="batch"):
        oracle.sample(X, None, 0)


@pytest.mark.parametrize("batch", [1, 4])
def test_gaussian_oracle_unbiased_with_variance_sigma2_over_batch(batch):
    f = heterogeneous_quadratic(3, 5, 0.5, seed=1)
    oracle = GaussianOracle(f, sigma=2.0)
    X = np.random.default_rng(1).normal(size=(3, 2, 5))
    mean, variance, exact = monte_carlo(oracle, X, seed=7, draws=4000, batch=batch)
    per_coordinate_sd = 2.0 / math.sqrt(5 * batch)
    assert np.abs(mean - exact).max() <= 5 * per_coordinate_sd / math.sqrt(4000)
    # E||noise||^2 = sigma^2 / B; its estimate over 4000 draws has relative sd sqrt(2/(5*4000)) = 1%
    np.testing.assert_allclose(variance, 4.0 / batch, rtol=0.05)
    a = oracle.sample(X, np.random.default_rng(3), batch)
    np.testing.assert_array_equal(a, oracle.sample(X, np.random.default_rng(3), batch))  # same seed, bits


@pytest.mark.parametrize("replace", [True, False])
def test_finite_sum_oracle_unbiased(replace):
    f = digits_problem(4, shuffled_percent=50, seed=0, model="logistic_nonconvex")
    oracle = FiniteSumOracle(f, replace=replace)
    X = np.broadcast_to(np.random.default_rng(0).normal(scale=0.1, size=f.dim), (4, 1, f.dim)).copy()
    mean, _, exact = monte_carlo(oracle, X, seed=11, draws=600, batch=8)
    # relative error of the Monte Carlo mean: per-sample gradient spread / sqrt(4800) is a few percent
    error = np.linalg.norm(mean - exact, axis=-1) / np.linalg.norm(exact, axis=-1)
    assert error.max() < 0.1
    assert oracle.queries_per_call(X, 8) == 4 * 8


def test_finite_sum_without_replacement_draws_distinct_samples():
    f = digits_problem(4, shuffled_percent=100, seed=0, model="logistic_nonconvex")
    oracle = FiniteSumOracle(f, replace=False)
    X = np.zeros((4, 3, f.dim))
    idx = oracle.draw_indices(X, np.random.default_rng(0), 20)
    assert idx.shape == (4, 3, 20)
    assert all(np.unique(row).size == 20 for row in idx.reshape(-1, 20))
    full = oracle.sample(X, np.random.default_rng(0), f.samples_per_worker)  # every sample once: exact
    np.testing.assert_allclose(full, f.grad(X), rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match="batch"):
        oracle.sample(X, np.random.default_rng(0), f.samples_per_worker + 1)
    with pytest.raises(TypeError, match="finite-sum"):
        FiniteSumOracle(zero_chain(3))


def test_zero_chain_oracle_reveals_with_probability_1_minus_q_to_the_b():
    f = zero_chain(5, 2)
    X = np.zeros((2, 20000, 5))
    X[1, :, :2] = [1.0, -0.8]  # worker 1 at prog 2
    oracle = ZeroChainOracle(f, p=0.05)
    for batch in (1, 3):
        G = oracle.sample(X, np.random.default_rng(batch), batch)
        exact = f.grad(X[:, :1])
        # coordinates up to prog are exact; prog + 1 is scaled by K / (B p), K ~ Binomial(B, p)
        np.testing.assert_array_equal(G[0, :, 1:], 0.0)
        np.testing.assert_array_equal(G[1, :, :2], np.broadcast_to(exact[1, 0, :2], (20000, 2)))
        factors = np.stack([G[0, :, 0] / exact[0, 0, 0], G[1, :, 2] / exact[1, 0, 2]])
        np.testing.assert_allclose(factors * batch * 0.05, np.round(factors * batch * 0.05), atol=1e-9)
        revealed = np.mean(factors > 0, axis=1)
        expected = 1 - 0.95**batch  # revealed iff one of the B Bernoullis succeeds
        sd = math.sqrt(expected * (1 - expected) / 20000)
        np.testing.assert_allclose(revealed, expected, atol=5 * sd)
        sd_mean = math.sqrt(0.95 / (0.05 * batch * 20000))
        np.testing.assert_allclose(factors.mean(axis=1), 1.0, atol=5 * sd_mean)


def test_zero_chain_oracle_variance_within_e_cubed_bound():
    # errata E23: the randomized partial derivative is Psi(|x_k|) Phi'(0) <= e^{3/2}, so the variance of
    # one query is <= e^3 (1 - p) / p, about 26x below the proof's G_inf^2 (1 - p) / p.
    p = 0.2
    f = zero_chain(4, 3)
    X = np.zeros((3, 1, 4))
    X[1, 0, 0] = 0.9
    X[2, 0, :2] = [2.0, 60.0]  # Psi(60) = e^{1 - 1/119^2}: the sup is approached
    oracle = ZeroChainOracle(f, p=p)
    mean, variance, exact = monte_carlo_configs(oracle, X, seed=5, draws=20000)
    bound = VARIANCE_CONSTANT * (1 - p) / p
    predicted = exact[np.arange(3), 0, [0, 1, 2]] ** 2 * (1 - p) / p  # |d_{prog+1} f|^2 (1-p)/p
    np.testing.assert_allclose(variance[:, 0], predicted, rtol=0.05)
    assert np.all(variance <= bound * 1.05)
    assert variance[2, 0] >= 0.99 * bound * 0.95  # the constant is tight
    assert bound < G_INF**2 * (1 - p) / p / 25
    np.testing.assert_allclose(mean, exact, atol=5 * math.sqrt(bound / 20000))
    assert oracle.variance_bound() == pytest.approx(bound)


def test_scaled_sampling_instance_oracle_variance_within_sigma2():
    f = sampling_instance(4, Delta=10.0, L=1.0, epsilon=0.02, sigma=5.0)
    oracle = ZeroChainOracle(f)  # p from the instance
    assert oracle.p == pytest.approx((2 * G_INF * 0.02) ** 2 / 25.0)
    X = np.zeros((4, 1, f.dim))
    X[:, 0, 0] = 50.0 * f.scale
    _, variance, _ = monte_carlo_configs(oracle, X, seed=2, draws=20000)
    assert np.all(variance <= oracle.variance_bound() * 1.05)
    assert oracle.variance_bound() <= 5.0**2


def test_zero_chain_oracle_on_a_long_chain():
    # T above the scan threshold: the gradient comes back column-major (prefix path); the oracle must
    # still scale the right entries in place
    f = zero_chain(200, 3)
    X = np.zeros((3, 4000, 200))
    X[:, :, :3] = 1.0
    X[2, :, 3] = 1.0
    G = ZeroChainOracle(f, p=0.25).sample(X, np.random.default_rng(0), 1)
    exact = f.grad(X[:, :1])
    np.testing.assert_array_equal(G[:, :, :3], np.broadcast_to(exact[:, :, :3], (3, 4000, 3)))
    factors = G[:, :, 3] / exact[:, :, 3]
    assert set(np.unique(factors[:2])) == {0.0, 4.0} and np.all(factors[2] == 1.0)
    assert abs(np.mean(factors[:2] == 4.0) - 0.25) < 0.02
    np.testing.assert_array_equal(G[:2, :, 4:], 0.0)
    np.testing.assert_array_equal(G[2, :, 5:], 0.0)
    assert set(np.unique(G[2, :, 4] / exact[2, 0, 4])) == {0.0, 4.0}


def test_zero_chain_oracle_exact_at_p_1_and_reproducible():
    f = zero_chain(4, 3)
    X = np.zeros((3, 2, 4))
    X[:, :, 0] = 1.0
    assert np.array_equal(ZeroChainOracle(f, p=1.0).sample(X, np.random.default_rng(0), 5), f.grad(X))
    oracle = ZeroChainOracle(f, p=0.3)
    np.testing.assert_array_equal(
        oracle.sample(X, np.random.default_rng(9), 2), oracle.sample(X, np.random.default_rng(9), 2)
    )
    X[:, :, :] = 1.0  # complete chains: nothing left to reveal
    np.testing.assert_array_equal(oracle.sample(X, np.random.default_rng(0), 2), f.grad(X))


def test_make_oracle_and_bad_input():
    f = zero_chain(3, 2)
    assert isinstance(make_oracle("exact", f), ExactOracle)
    assert make_oracle("gaussian", f, sigma=1.0).sigma == 1.0
    assert make_oracle("zero_chain", f, p=0.5).p == 0.5
    with pytest.raises(ValueError, match="name must be one of"):
        make_oracle("nope", f)
    with pytest.raises(ValueError, match="bad parameters"):
        make_oracle("gaussian", f, noise=1.0)
    with pytest.raises(ValueError, match="p"):
        ZeroChainOracle(f, p=0.0)
    with pytest.raises(ValueError, match="p"):
        ZeroChainOracle(f)  # zero_chain(3) has no p
    with pytest.raises(ValueError, match="sigma"):
        GaussianOracle(f, sigma=-1.0)
    with pytest.raises(TypeError, match="Generator"):
        GaussianOracle(f, sigma=1.0).sample(np.zeros((2, 3)), 0)
