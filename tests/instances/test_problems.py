"""Problems with exact, known heterogeneity (docs/theory.md §1, assumptions (5) and (6))."""

import math

import numpy as np
import pytest
from decbounds.instances.problems import heterogeneous_nonconvex, heterogeneous_quadratic
from hypothesis import given, settings
from hypothesis import strategies as st

BUILDERS = [heterogeneous_quadratic, heterogeneous_nonconvex]


def finite_difference_check(f, X, seed, h=1e-6):
    V = np.random.default_rng(seed).standard_normal(X.shape)
    directional = (f.value(X + h * V) - f.value(X - h * V)) / (2 * h)
    np.testing.assert_allclose(directional, np.sum(f.grad(X) * V, axis=-1), rtol=1e-6, atol=1e-6)
    v = V[0]
    x = X[0]
    directional = (f.full_value(x + h * v) - f.full_value(x - h * v)) / (2 * h)
    np.testing.assert_allclose(directional, np.sum(f.full_grad(x) * v, axis=-1), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("build", BUILDERS)
@settings(max_examples=15)
@given(n=st.integers(2, 6), d=st.integers(2, 7), varsigma=st.just(0.0) | st.floats(1e-6, 3.0),
       share=st.just(0.0) | st.floats(1e-6, 1.0), seed=st.integers(0, 1000))
def test_heterogeneity_is_exact(build, n, d, varsigma, share, seed):
    try:
        f = build(n, d, varsigma, seed, varsigma0=share * varsigma, L=2.0)
    except ValueError as error:  # a heterogeneity below float64's resolution of the gradient is refused
        assert "would lose the heterogeneity" in str(error)
        assert 0 < share * varsigma < 1e-6  # Delta = 1, L = 2: ||grad f|| stays below 100
        return
    assert f.heterogeneity(f.x0) == pytest.approx(share * varsigma, abs=1e-12)  # (6) at x0 = 0
    assert f.heterogeneity(f.heterogeneity_maximizer()) == pytest.approx(varsigma, abs=1e-12)  # sup of (5)
    x = np.random.default_rng(seed).normal(scale=5.0, size=(200, d))
    assert np.all(f.heterogeneity(x) <= varsigma + 1e-12)
    X = np.broadcast_to(x[:3], (n, 3, d)) + 0.1 * np.random.default_rng(seed).standard_normal((n, 3, d))
    finite_difference_check(f, X, seed)
    np.testing.assert_allclose(f.grad(np.broadcast_to(x, (n, *x.shape))).mean(axis=0), f.full_grad(x),
                               atol=1e-12)


def test_extreme_problems_are_named_errors():
    # named errors, not inf gradients and nan heterogeneity (Delta=1e308), f(0) - f* = 0 instead of Delta
    # (mu=5e-324), an OverflowError (varsigma=1e300) or a MemoryError (d = 10**5 allocates d x d)
    for call, message in [
        (lambda: heterogeneous_quadratic(6, 5, 0.0, 6, Delta=1e308), r"Delta must be <= 1e\+100"),
        (lambda: heterogeneous_quadratic(3, 1, 0.0, 3, mu=5e-324), r"mu must be >= 1e-12 \(condition"),
        (lambda: heterogeneous_quadratic(3, 1, 1e300, 0), r"varsigma must be <= 1e\+100"),
        (lambda: heterogeneous_quadratic(3, 10**5, 1.0, 0), r"d is too large"),
        (lambda: heterogeneous_quadratic(3, 2, 1.0, -1), r"seed must be an int >= 0"),
        (lambda: heterogeneous_quadratic(3, 2, 1.0, 0.5), r"seed must be an int"),
        (lambda: heterogeneous_nonconvex(3, 2, float("nan"), 0), r"varsigma must be a finite"),
        (lambda: heterogeneous_quadratic(3, 2, 1.0, 0, L=True), r"L must be a real number"),
        # found by FUZZ=1: the heterogeneity drowned in a common gradient 1e50 (or 1e18) times larger
        (lambda: heterogeneous_quadratic(2, 1, 1.0, 0, Delta=1e100), r"varsigma=1.0 is below 1e-8"),
        (lambda: heterogeneous_nonconvex(2, 1, 1.0, 0, L=2.0**63), r"varsigma=1.0 is below 1e-8"),
    ]:
        with pytest.raises((ValueError, TypeError), match=message):
            call()
    # at the edge of the range every closed form is still finite and exact
    f = heterogeneous_quadratic(3, 2, 1e100, 0, Delta=1e100, L=1e100, mu=1e88)
    assert -f.f_star == pytest.approx(1e100) and np.all(np.isfinite(f.grad(np.zeros((3, 2)))))
    assert f.heterogeneity(f.x0) == pytest.approx(1e100)


@pytest.mark.parametrize("build", BUILDERS)
def test_local_smoothness_within_L(build):
    f = build(5, 6, 2.0, 3, varsigma0=1.0, L=1.5)
    rng = np.random.default_rng(0)
    X = rng.normal(scale=3.0, size=(5, 2000, 6))
    Y = X + 1e-4 * rng.standard_normal(X.shape)
    ratio = np.linalg.norm(f.grad(X) - f.grad(Y), axis=-1) / np.linalg.norm(X - Y, axis=-1)
    assert ratio.max() <= f.smoothness
    assert ratio.max() >= 0.5 * f.smoothness  # the bound is not loose by much


def test_quadratic_closed_forms():
    f = heterogeneous_quadratic(4, 5, 1.0, seed=0, L=3.0, mu=0.3, Delta=2.5)
    np.testing.assert_allclose(f.full_grad(f.x_star), 0.0, atol=1e-12)
    assert f.full_value(f.x0) - f.full_value(f.x_star) == pytest.approx(2.5)
    assert f.full_value(f.x_star) == pytest.approx(f.f_star)
    eig = np.linalg.eigvalsh(f.A)
    assert eig.min() == pytest.approx(0.3) and eig.max() == pytest.approx(3.0)  # pure quadratic: L_A = L
    assert not f.has_sine and f.varsigma0 == 1.0
    # common Hessian: the heterogeneity is the same everywhere
    x = np.random.default_rng(1).normal(size=(10, 5))
    np.testing.assert_allclose(f.heterogeneity(x), 1.0)


def test_nonconvex_has_one_stationary_point_at_known_level():
    f = heterogeneous_nonconvex(3, 4, 0.7, seed=2, varsigma0=0.2, L=1.0, Delta=0.5)
    np.testing.assert_allclose(f.full_grad(f.x_star), 0.0, atol=1e-15)
    assert f.full_value(f.x0) - f.f_star == pytest.approx(0.5)
    u = np.linspace(-50, 50, 20001)[:, None] + f.x_star[0]
    grads = f.full_grad(np.repeat(u, 4, axis=1))[:, 0]
    assert np.sum(np.isclose(grads, 0.0, atol=1e-10) & (np.abs(u[:, 0] - f.x_star[0]) > 1e-3)) == 0
    assert f.full_value(np.full(4, 1e8)) <= f.dim * f.kappa  # bounded


def test_bad_input():
    with pytest.raises(ValueError, match="varsigma0"):
        heterogeneous_quadratic(3, 4, 1.0, 0, varsigma0=2.0)
    with pytest.raises(ValueError, match="varsigma"):
        heterogeneous_quadratic(3, 4, -1.0, 0)
    with pytest.raises(ValueError, match="n = 1"):
        heterogeneous_quadratic(1, 4, 1.0, 0)
    with pytest.raises(ValueError, match="d must be >= 2"):
        heterogeneous_quadratic(3, 1, 1.0, 0, varsigma0=0.5)
    with pytest.raises(ValueError, match="mu"):
        heterogeneous_quadratic(3, 4, 1.0, 0, mu=5.0)
    with pytest.raises(ValueError, match="Delta"):
        heterogeneous_nonconvex(3, 2, 1.0, 0, Delta=100.0)
    with pytest.raises(ValueError, match="shape"):
        heterogeneous_quadratic(3, 4, 1.0, 0).grad(np.zeros((2, 4)))
    assert math.isfinite(heterogeneous_quadratic(1, 4, 0.0, 0).smoothness)
