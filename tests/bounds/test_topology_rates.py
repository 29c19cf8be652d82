"""The rates of Vogels, Hendrikx & Jaggi in n_eff: listed, evaluated, reduced as the paper says, and the
random quadratic's fixed point held against the exact second-moment recursion of D-SGD."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp
from decbounds.bounds.symbols import B, Delta, L, epsilon, eta, mu, n, n_eff, sigma, zeta
from decbounds.bounds.topology_rates import quadratic_contraction, random_quadratic_rate
from hypothesis import given
from hypothesis import strategies as st

from decbounds import bounds, instances

NAMES = ("vogels2022_random_quadratic", "vogels2022_strongly_convex")
QUADRATIC = dict(Delta=1.0, epsilon=1e-3, eta=0.1, zeta=5.0, n_eff=16.0)
STRONGLY_CONVEX = dict(Delta=1.0, epsilon=1e-3, L=1.0, mu=0.1, sigma=1.0, n_eff=4.0, B=1)


def test_the_entries_are_listed_recalled_and_in_function_value():
    assert set(NAMES) <= set(bounds.names("upper"))
    for name in NAMES:
        rate = bounds.get(name)
        assert rate.status == "recalled" and rate.convention == "function_value"
        assert "n_eff" in rate.arguments and "Vogels" in rate.source
        assert any("homogeneous" in assumption for assumption in rate.assumptions)


def test_the_entries_evaluate():
    quadratic = bounds.get("vogels2022_random_quadratic")
    expected = math.log(1 + 1 / 1e-3) / -math.log(0.9**2 + 4 * 0.01 / 16)
    assert math.isclose(quadratic.evaluate(**QUADRATIC), expected, rel_tol=1e-12)
    terms = bounds.get("vogels2022_strongly_convex").evaluate_terms(**STRONGLY_CONVEX)
    assert math.isclose(terms["sampling"], 1 / (0.1 * 4 * 1e-3), rel_tol=1e-12)
    assert math.isclose(terms["optimization"], 10 * math.log(1001), rel_tol=1e-12)


def test_a_function_value_rate_does_not_convert_and_bad_symbols_are_named():
    rate = bounds.get("vogels2022_strongly_convex")
    with pytest.raises(ValueError, match="convention"):
        rate.in_convention("grad_norm")
    with pytest.raises(ValueError, match="convention"):
        bounds.gap("vogels2022_strongly_convex", **STRONGLY_CONVEX, lam=0.5, n=16)
    with pytest.raises(ValueError, match="n_eff must be >= 1"):
        rate.evaluate(**{**STRONGLY_CONVEX, "n_eff": 0.5})
    with pytest.raises(ValueError, match="zeta must be >= 1"):
        bounds.get("vogels2022_random_quadratic").evaluate(**{**QUADRATIC, "zeta": 0.5})
    with pytest.raises(ValueError, match="undefined"):  # a step beyond the stable one
        bounds.get("vogels2022_random_quadratic").evaluate(**{**QUADRATIC, "eta": 1.9, "n_eff": 1.0})


def test_n_eff_n_recovers_centralized_sgd_and_one_a_worker_alone():
    d = sp.Symbol("d", positive=True)

    def zeta_of(batch: sp.Expr) -> sp.Expr:  # Gaussian data in d dimensions, batch `batch`
        return (d + batch + 1) / batch

    # n workers averaging exactly: one SGD step on a batch of n B samples, 1 - r = 1 - 2 eta + zeta eta^2
    averaged = quadratic_contraction.subs({n_eff: n, zeta: zeta_of(B)})
    assert sp.simplify(averaged - (1 - 2 * eta + zeta_of(n * B) * eta**2)) == 0
    alone = quadratic_contraction.subs(n_eff, 1)
    assert sp.simplify(alone - (1 - 2 * eta + zeta * eta**2)) == 0
    sampling = bounds.get("vogels2022_strongly_convex").terms["sampling"]
    assert sp.simplify(sampling.subs(n_eff, n) - sigma**2 / (mu * n * B * epsilon)) == 0
    optimization = bounds.get("vogels2022_strongly_convex").terms["optimization"]
    assert optimization.free_symbols == {L, mu, Delta, epsilon}


def test_the_largest_stable_step_grows_with_n_eff():
    stable = sp.solve(sp.Eq(quadratic_contraction, 1), eta)
    largest = max(stable, key=lambda root: root.subs({n_eff: 4, zeta: 10}))
    assert sp.simplify(largest - 2 * n_eff / (n_eff + zeta - 1)) == 0
    assert sp.diff(largest, n_eff).subs({n_eff: 4, zeta: 10}) > 0


@given(st.floats(1.0, 1000.0), st.floats(1.0, 1000.0), st.floats(1e-4, 0.02), st.floats(1.0, 50.0),
       st.floats(1e-8, 1.0))
def test_more_neighbours_never_cost_iterations(low, high, step, noise, accuracy):
    low, high = sorted((low, high))
    for name, point in (("vogels2022_random_quadratic", dict(QUADRATIC, eta=step, zeta=noise)),
                        ("vogels2022_strongly_convex", STRONGLY_CONVEX)):
        rate = bounds.get(name)
        fewer = rate.evaluate(**{**point, "n_eff": low, "epsilon": accuracy})
        more = rate.evaluate(**{**point, "n_eff": high, "epsilon": accuracy})
        assert more <= fewer * (1 + 1e-12), (name, low, high)


def exact_quadratic_rate(W: np.ndarray, step: float, noise: float) -> float:
    """1 - the spectral radius of M -> W (A o M) W^T, the recursion of M_ij = E<x_i, x_j> under D-SGD on the
    random quadratic: (1 - eta)^2 off the diagonal (independent samples), 1 - 2 eta + zeta eta^2 on it."""
    size = len(W)
    A = np.full((size, size), (1 - step) ** 2)
    np.fill_diagonal(A, 1 - 2 * step + noise * step**2)
    transition = np.kron(W, W) * A.ravel()
    return 1.0 - float(np.max(np.abs(np.linalg.eigvals(transition))))


@pytest.mark.parametrize("name", ["ring", "hypercube", "complete", "star"])
@pytest.mark.parametrize("step", [0.05, 0.2, 0.5])
def test_the_fixed_point_is_the_exact_rate_on_vertex_transitive_graphs(name, step):
    W = instances.gossip_matrix(instances.topology(name, 8))
    dense = W.matrix.toarray()
    fixed = random_quadratic_rate(step, 5.0,
                                  lambda gamma: instances.effective_neighbours(W, gamma, reduce="worst"))
    exact = exact_quadratic_rate(dense, step, 5.0)
    if name == "star":  # not vertex-transitive: the worst worker's n_eff makes the rate conservative
        assert fixed <= exact + 1e-12
        assert fixed < exact - 1e-4 or step < 0.1
    else:
        assert math.isclose(fixed, exact, rel_tol=1e-9), (name, step, fixed, exact)


def test_the_fixed_point_refuses_a_divergent_step():
    with pytest.raises(ValueError, match="diverges"):
        random_quadratic_rate(1.0, 50.0, lambda gamma: 1.0)
    with pytest.raises(ValueError, match="eta"):
        random_quadratic_rate(0.0, 5.0, lambda gamma: 1.0)
    with pytest.raises(ValueError, match="zeta"):
        random_quadratic_rate(0.1, 0.5, lambda gamma: 1.0)
