"""Exact-averaging factors (Lemma 3, GATHER-PROPAGATE) and multi-step gossip (Alg. 3, Chebyshev, errata E18).

Measured consensus contraction C = max_R ||p_R(W) - 11^T/n||_2 / (1 - sqrt(1 - lam))^R over R up to
20/sqrt(1 - lam) (worst case over eigenvalues, n = 8..128; path = Cor. 2 matrix with lambda_n = -lam, lazy
ring/path = kappa 0.5, spectrum >= 0, Metropolis ring):

  two-tap, paper start (z_{-1} = z_0), eigenvalue -lam present:   C = 1.80..2.21 / sqrt(1 - lam)
  two-tap, paper start, no eigenvalue near -lam:                    C <= 2.23
  two-tap, first step plain gossip:                                 C <= 2.59
  Chebyshev:                                                        C <= 1.54 (theory: <= 2)

So eq. (26)'s rho holds up to a constant that grows like 1/sqrt(1 - lam) for the paper's start and up to a
constant < 3 for the plain start and Chebyshev; the tests below pin these bounds.
"""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from decbounds.bounds.detag_params import accelerated_gossip_eta, accelerated_gossip_rho
from decbounds.instances.averaging import (
    accelerated_gossip,
    chebyshev_gossip,
    exact_averaging_factors,
    gossip_schedule,
    multi_step_gossip,
    multi_step_gossip_coefficients,
    multi_step_polynomial,
    schedule_polynomial,
)
from decbounds.instances.gossip import gossip_matrix, lazy, second_eigenvalue
from decbounds.instances.graphs import topology
from hypothesis import example, given, settings
from hypothesis import strategies as st

from decbounds import instances


def _product(factors: list[sp.csr_array], n: int) -> np.ndarray:
    P = np.eye(n)
    for F in factors:
        P = F @ P
    return P


def _check_factors(G: nx.Graph) -> int:
    n = G.number_of_nodes()
    factors = exact_averaging_factors(G)
    assert np.abs(_product(factors, n) - 1.0 / n).max() < 1e-12
    allowed = nx.to_numpy_array(G, nodelist=range(n)) + np.eye(n)
    for F in factors:
        assert isinstance(F, sp.csr_array)
        assert np.all(allowed[F.toarray() != 0] > 0)
    D = nx.diameter(G)
    assert D <= len(factors) <= 2 * D
    return len(factors)


@given(n=st.integers(2, 30), seed=st.integers(0, 10**6), extra=st.floats(0.0, 0.3))
def test_exact_averaging_on_random_connected_graphs(n: int, seed: int, extra: float) -> None:
    G = topology("erdos_renyi", n, p=min(1.0, 2 * math.log(n) / n + extra), seed=seed)
    _check_factors(G)


@pytest.mark.parametrize(("name", "n", "params", "R"), [
    ("path", 9, {}, 8), ("path", 10, {}, 10), ("star", 7, {}, 2), ("complete", 6, {}, 2),
    ("ring", 12, {}, 12), ("broom", 12, {"D": 6}, 6), ("hypercube", 16, {}, 8),
])
def test_exact_averaging_round_counts(name: str, n: int, params: dict, R: int) -> None:
    assert _check_factors(topology(name, n, **params)) == R


def test_exact_averaging_edge_cases() -> None:
    single = exact_averaging_factors(nx.empty_graph(1))
    assert len(single) == 1 and single[0].toarray().tolist() == [[1.0]]
    with pytest.raises(ValueError, match="connected"):
        exact_averaging_factors(nx.empty_graph(3))
    Z = np.random.default_rng(0).standard_normal((9, 2, 3))
    X = Z.reshape(9, -1)
    for F in exact_averaging_factors(topology("path", 9)):
        X = F @ X
    assert np.allclose(X.reshape(Z.shape), Z.mean(axis=0, keepdims=True), atol=1e-12)


# --------------------------------------------------------------------------------------------------------
# schedules


@given(lam=st.floats(0.0, 0.999), R=st.integers(0, 60),
       method=st.sampled_from(["two_tap", "chebyshev", "plain"]), start=st.sampled_from(["paper", "plain"]))
@example(lam=5e-324, R=2, method="chebyshev", start="paper")  # FUZZ=1: 2/lam overflowed, rows (0, -0)
@example(lam=1e-310, R=3, method="chebyshev", start="plain")
def test_schedule_rows_keep_the_average(lam: float, R: int, method: str, start: str) -> None:
    schedule = multi_step_gossip_coefficients(method, lam, R, start=start)
    assert schedule.shape == (R, 2)
    assert np.allclose(schedule.sum(axis=1), 1.0, atol=1e-12)


def test_two_tap_coefficients_and_starts() -> None:
    lam = 0.9
    eta = accelerated_gossip_eta(lam)
    paper = multi_step_gossip_coefficients("two_tap", lam, 4)
    assert np.allclose(paper, [[1 + eta, -eta]] * 4)
    plain_start = multi_step_gossip_coefficients("two_tap", lam, 4, start="plain")
    assert np.allclose(plain_start[0], [1.0, 0.0]) and np.allclose(plain_start[1:], [[1 + eta, -eta]] * 3)
    assert np.allclose(multi_step_gossip_coefficients("two_tap", lam, 3, eta=0.2), [[1.2, -0.2]] * 3)
    assert np.allclose(multi_step_gossip_coefficients("plain", lam, 3), [[1.0, 0.0]] * 3)
    assert np.allclose(multi_step_gossip_coefficients("chebyshev", 0.0, 3), [[1.0, 0.0]] * 3)


@pytest.mark.parametrize("lam", [0.3, 0.9, 0.999])
@pytest.mark.parametrize("R", [1, 2, 5, 17, 400])
def test_chebyshev_schedule_is_the_chebyshev_polynomial(lam: float, R: int) -> None:
    mu = np.linspace(-lam, lam, 41)
    with np.errstate(over="ignore"):  # T_R(1/lam) = cosh(R arccosh(1/lam)) overflows to inf: p_R -> 0
        expected = np.cos(R * np.arccos(mu / lam)) / np.cosh(R * np.arccosh(1.0 / lam))
    if R <= 17:
        T_R = np.polynomial.chebyshev.Chebyshev.basis(R)
        assert np.allclose(expected, T_R(mu / lam) / T_R(1.0 / lam), atol=1e-12)
    got = multi_step_polynomial(multi_step_gossip_coefficients("chebyshev", lam, R), mu)
    assert np.allclose(got, expected, atol=1e-12, rtol=1e-9)


@given(seed=st.integers(0, 10**6), R=st.integers(0, 25), method=st.sampled_from(["two_tap", "chebyshev"]),
       start=st.sampled_from(["paper", "plain"]))
@settings(max_examples=25)
def test_operators_keep_the_average_and_match_the_polynomial(seed: int, R: int, method: str,
                                                             start: str) -> None:
    rng = np.random.default_rng(seed)
    W = gossip_matrix(topology("ring", 10))
    Z = rng.standard_normal((10, 3, 2))
    if method == "two_tap":
        out = accelerated_gossip(W, Z, R, start=start)
        schedule = multi_step_gossip_coefficients("two_tap", second_eigenvalue(W), R, start=start)
    else:
        out = chebyshev_gossip(W, Z, R)
        schedule = multi_step_gossip_coefficients("chebyshev", second_eigenvalue(W), R)
    assert out.shape == Z.shape
    assert np.allclose(out.mean(axis=0), Z.mean(axis=0), atol=1e-12)
    mu, V = np.linalg.eigh(W.toarray())
    operator = V @ np.diag(multi_step_polynomial(schedule, mu)) @ V.T
    assert np.allclose(out.reshape(10, -1), operator @ Z.reshape(10, -1), atol=1e-10)
    # dense W gives the same
    assert np.allclose(multi_step_gossip(W.toarray(), Z, schedule), out, atol=1e-12)


def _contraction_constant(W: sp.csr_array, method: str, start: str) -> tuple[float, float]:
    lam = second_eigenvalue(W)
    mu = np.linalg.eigvalsh(W.toarray())[:-1]  # drop the eigenvalue 1 of the 1-vector
    R_max = int(20 / math.sqrt(1 - lam))
    full = multi_step_gossip_coefficients(method, lam, R_max, start=start)
    # the coefficients of step r do not depend on R: the R-step schedule is a prefix of the R_max one
    half = multi_step_gossip_coefficients(method, lam, R_max // 2, start=start)
    assert np.array_equal(half, full[: R_max // 2])
    previous = current = np.ones_like(mu)
    worst = 0.0
    for R, (a, b) in enumerate(full, start=1):
        previous, current = current, a * mu * current + b * previous
        worst = max(worst, np.abs(current).max() / accelerated_gossip_rho(lam, R))
    return lam, worst


@given(lam=st.floats(1e-6, 1 - 1e-9))
def test_chebyshev_rate_is_below_eq26_rate(lam: float) -> None:
    # rationalized (no cancellation): rho_c = lam / (1 + sqrt(1 - lam^2)) <= lam / (1 + sqrt(1 - lam))
    rho_c = lam / (1 + math.sqrt(1 - lam * lam))
    assert rho_c == pytest.approx((1 - math.sqrt(1 - lam * lam)) / lam, rel=1e-6, abs=1e-9)
    assert rho_c <= lam / (1 + math.sqrt(1 - lam))
    assert lam / (1 + math.sqrt(1 - lam)) == pytest.approx(accelerated_gossip_rho(lam, 1), rel=1e-6, abs=1e-9)


_MATRICES = {
    "path (eigenvalue -lam)": lambda n: gossip_matrix(topology("path", n), "path"),
    "lazy ring (spectrum >= 0)": lambda n: lazy(gossip_matrix(topology("ring", n)), 0.5),
    "metropolis ring": lambda n: gossip_matrix(topology("ring", n)),
}


@pytest.mark.parametrize("n", [8, 24, 64])
@pytest.mark.parametrize("kind", list(_MATRICES))
def test_measured_contraction_bounds(n: int, kind: str) -> None:
    W = _MATRICES[kind](n)
    lam, chebyshev = _contraction_constant(W, "chebyshev", "paper")
    assert chebyshev <= 2.0  # 1/T_R(1/lam) <= 2 rho_c^R, rho_c <= 1 - sqrt(1 - lam) (next test)
    _, plain_start = _contraction_constant(W, "two_tap", "plain")
    assert plain_start <= 3.0
    _, paper_start = _contraction_constant(W, "two_tap", "paper")
    assert paper_start <= 2.5 / math.sqrt(1 - lam)
    if kind.startswith("path"):
        # docs/errata.md E18: the paper's start grows like 1/sqrt(1 - lam) when -lam is an eigenvalue
        assert paper_start >= 1.5 / math.sqrt(1 - lam)
        assert paper_start > 3.0 * plain_start or n == 8
    else:
        assert paper_start <= 3.0


def test_paper_start_expands_disagreement_along_minus_lam() -> None:
    W = gossip_matrix(topology("path", 40), "path")
    lam = second_eigenvalue(W)
    mu, V = np.linalg.eigh(W.toarray())
    z0 = V[:, 0]  # eigenvector of lambda_n = -lam, zero mean
    R = int(1 / math.sqrt(1 - lam))
    grown = np.linalg.norm(accelerated_gossip(W, z0, R, start="paper"))
    assert mu[0] == pytest.approx(-lam) and grown > 1.0  # R steps of "gossip" increased the disagreement
    assert np.linalg.norm(accelerated_gossip(W, z0, R, start="plain")) < 1.0
    assert np.linalg.norm(chebyshev_gossip(W, z0, R)) < 2 * accelerated_gossip_rho(lam, R)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: multi_step_gossip_coefficients("nope", 0.5, 3), "method"),
        (lambda: multi_step_gossip_coefficients("two_tap", 0.5, 3, start="odd"), "start"),
        (lambda: multi_step_gossip_coefficients("two_tap", 1.0, 3), "lam"),
        (lambda: multi_step_gossip_coefficients("two_tap", -0.1, 3), "lam"),
        (lambda: multi_step_gossip_coefficients("two_tap", 0.5, -1), "R"),
        (lambda: multi_step_gossip_coefficients("two_tap", 0.5, 2.5), "R"),
        (lambda: multi_step_gossip_coefficients("two_tap", 0.5, 3, eta=1.0), "eta"),
        (lambda: multi_step_gossip_coefficients("chebyshev", 0.5, 3, eta=0.1), "eta"),
        (lambda: multi_step_gossip(np.eye(3), np.ones(4), np.ones((1, 2))), "n=3"),
        (lambda: multi_step_gossip(np.eye(3), np.ones(3), np.ones((1, 3))), "shape"),
    ],
)
def test_bad_parameters(call: object, message: str) -> None:
    # a float R (2.5) is a TypeError (wrong type), the others ValueErrors; every message names the argument
    with pytest.raises((ValueError, TypeError), match=message):
        call()  # type: ignore[operator]


def test_package_exports() -> None:
    assert instances.multi_step_gossip_coefficients is multi_step_gossip_coefficients
    assert instances.multi_step_polynomial is multi_step_polynomial
    assert instances.exact_averaging_factors is exact_averaging_factors


def test_the_former_names_warn_and_give_the_same_arrays() -> None:
    # the deprecated names (a "schedule" of coefficients would be confused with the class GossipSchedule)
    # warn for a release and give the same arrays
    with pytest.warns(DeprecationWarning, match="multi_step_gossip_coefficients"):
        old = gossip_schedule("chebyshev", 0.5, 4)
    assert instances.gossip_schedule is gossip_schedule
    assert np.array_equal(old, multi_step_gossip_coefficients("chebyshev", 0.5, 4))
    mu = np.array([0.5, -0.25])
    with pytest.warns(DeprecationWarning, match="multi_step_polynomial"):
        value = schedule_polynomial(old, mu)
    assert np.array_equal(value, multi_step_polynomial(old, mu))
    with pytest.warns(DeprecationWarning), pytest.raises(ValueError, match="schedule must have shape"):
        schedule_polynomial(np.ones(3), mu)
    with pytest.raises(ValueError, match="coefficients must have shape"):
        multi_step_polynomial(np.ones(3), mu)
