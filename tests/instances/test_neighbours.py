"""The effective number of neighbours (instances.neighbours) and the topology zoo (instances.zoo)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import scipy.linalg
from decbounds.instances.neighbours import effective_neighbours, walk_variances
from decbounds.instances.zoo import ZOO_MEMBERS, topology_zoo, zoo_rows, zoo_table
from hypothesis import given, settings
from hypothesis import strategies as st

from decbounds import instances

GAMMAS = (0.0, 0.3, 0.9, 0.99)


def _independent_variances(W: instances.Gossip, gamma: float) -> np.ndarray:
    """Sigma_ii by summing the walk's terms sum_j gamma^j Phi_j Phi_j^T directly (no Lyapunov, no eigh)."""
    period = W.period or 1
    rounds = [W.round_matrix(t).toarray() for t in range(period)]
    n = W.n
    Sigma, Phi = np.zeros((n, n)), np.eye(n)
    terms = int(math.log(1e-14) / math.log(gamma)) + 1 if gamma > 0 else 1
    for j in range(terms):
        Phi = Phi @ rounds[(-1 - j) % period]  # Phi_j = W_{-1} W_{-2} ... W_{-1-j}
        Sigma += gamma**j * Phi @ Phi.T
    return np.diag(Sigma)


@pytest.mark.parametrize("n", [16, 32])
@pytest.mark.parametrize("member", ZOO_MEMBERS)
def test_every_zoo_member_agrees_with_an_independent_sum_and_lyapunov(n: int, member: str) -> None:
    W = topology_zoo(n)[member]
    for gamma in (0.0, 0.5, 0.9):
        expected = 1.0 / ((1 - gamma) * _independent_variances(W, gamma))
        got = effective_neighbours(W, gamma, reduce="all")
        assert np.allclose(got, expected, rtol=1e-9)
        assert effective_neighbours(W, gamma, method="lyapunov") == pytest.approx(
            1.0 / np.mean(1.0 / expected), rel=1e-9)


@pytest.mark.parametrize("member", ZOO_MEMBERS)
def test_the_sparse_walk_agrees_with_the_exact_path_within_its_error(member: str) -> None:
    W = topology_zoo(16)[member]
    gamma = 0.9
    exact = 1.0 / ((1 - gamma) * _independent_variances(W, gamma))
    estimates = walk_variances(W, gamma, probes=4000, seed=1)
    mean, error = estimates.mean(axis=1), estimates.std(axis=1) / math.sqrt(estimates.shape[1])
    exact_variances = 1.0 / ((1 - gamma) * exact)
    assert np.all(np.abs(mean - exact_variances) <= 5 * error + 1e-12)
    assert effective_neighbours(W, gamma, method="walk", probes=4000, seed=1) == pytest.approx(
        1.0 / np.mean(1.0 / exact), rel=0.02)


def test_a_plainly_simulated_walk_is_within_its_confidence_interval() -> None:
    """x <- W (sqrt(gamma) x + z) run as written (no projection), many walks: E x_i^2 = Sigma_ii."""
    W = instances.gossip_matrix(instances.topology("ring", 12))
    gamma, walks = 0.8, 20000
    rng = np.random.default_rng(3)
    x = np.zeros((12, walks))
    for _ in range(200):  # gamma^100 < 1e-19: stationary
        x = W.matrix @ (math.sqrt(gamma) * x + rng.standard_normal(x.shape))
    squares = (x**2).mean(axis=0)  # one mean over workers per walk
    exact = effective_neighbours(W, gamma)
    estimate = 1.0 / ((1 - gamma) * squares.mean())
    spread = squares.std() / math.sqrt(walks) / squares.mean() * estimate
    assert abs(estimate - exact) <= 4 * spread


@given(n=st.integers(2, 24), gamma=st.floats(0.0, 0.999))
@settings(max_examples=30, deadline=None)
def test_exact_averaging_gives_n_at_every_gamma(n: int, gamma: float) -> None:
    J = instances.as_gossip(None, n, kind="exact")
    assert effective_neighbours(J, gamma) == pytest.approx(n, rel=1e-9)
    assert effective_neighbours(J, gamma, method="lyapunov", reduce="worst") == pytest.approx(n, rel=1e-9)
    assert effective_neighbours(np.eye(n), gamma, reduce="worst") == pytest.approx(1.0, rel=1e-9)


@pytest.mark.parametrize("member", ZOO_MEMBERS)
def test_bounds_monotone_in_gamma_and_worst_below_mean(member: str) -> None:
    W = topology_zoo(32)[member]
    means = [effective_neighbours(W, gamma) for gamma in np.linspace(0, 0.995, 12)]
    worst = [effective_neighbours(W, gamma, reduce="worst") for gamma in np.linspace(0, 0.995, 12)]
    assert all(1 - 1e-9 <= value <= 32 + 1e-9 for value in means + worst)
    assert all(b >= a - 1e-9 for a, b in itertools.pairwise(means))
    assert all(w <= m + 1e-9 for w, m in zip(worst, means, strict=True))


@given(seed=st.integers(0, 2**16), gamma=st.sampled_from(GAMMAS))
@settings(max_examples=15, deadline=None)
def test_invariant_under_relabelling(seed: int, gamma: float) -> None:
    W = instances.gossip_matrix(instances.topology("erdos_renyi", 14, p=0.3, seed=seed))
    order = np.random.default_rng(seed).permutation(14)
    relabelled = W.toarray()[np.ix_(order, order)]
    assert effective_neighbours(relabelled, gamma) == pytest.approx(effective_neighbours(W, gamma), rel=1e-9)
    per_worker = effective_neighbours(W, gamma, reduce="all")
    assert np.allclose(effective_neighbours(relabelled, gamma, reduce="all"), per_worker[order])


def test_the_scipy_lyapunov_solution_is_the_defining_equation() -> None:
    W = topology_zoo(16)["exponential"].toarray()
    Sigma = scipy.linalg.solve_discrete_lyapunov(math.sqrt(0.9) * W, W @ W.T)
    assert np.allclose(Sigma, 0.9 * W @ Sigma @ W.T + W @ W.T)
    assert effective_neighbours(W, 0.9) == pytest.approx(1 / (0.1 * np.mean(np.diag(Sigma))), rel=1e-9)


def test_a_schedule_is_read_at_its_phase() -> None:
    rounds = [instances.gossip_matrix(instances.topology("ring", 8)).matrix, np.eye(8)]
    schedule = instances.schedule_from_sequence(rounds)
    after_gossip, after_identity = (effective_neighbours(schedule, 0.9, phase=p) for p in (1, 0))
    assert after_gossip > after_identity  # just gossiped: less variance than after the idle round
    assert effective_neighbours(schedule, 0.9, phase=3) == pytest.approx(after_gossip)


@pytest.mark.parametrize(("arguments", "match"), [
    ({"gamma": 1.0}, "gamma must be in"),
    ({"gamma": -0.1}, "gamma must be in"),
    ({"gamma": 0.5, "reduce": "median"}, "reduce"),
    ({"gamma": 0.5, "method": "eigh", "W": "directed"}, "symmetric static"),
])
def test_bad_input_is_a_clear_error(arguments: dict[str, object], match: str) -> None:
    W = topology_zoo(16)["exponential"] if arguments.pop("W", None) else np.full((4, 4), 0.25)
    with pytest.raises(ValueError, match=match):
        effective_neighbours(W, **arguments)  # type: ignore[arg-type]


def test_a_matrix_that_is_not_doubly_stochastic_is_refused() -> None:
    with pytest.raises(ValueError, match="not column-stochastic"):
        effective_neighbours(np.array([[1.0, 0.0], [0.5, 0.5]]), 0.5)
    push = instances.as_gossip(np.array([[1.0, 0.5], [0.0, 0.5]]), kind="push")  # columns sum to 1, rows not
    with pytest.raises(ValueError, match="not a gossip matrix"):
        effective_neighbours(push, 0.5)
    with pytest.raises(ValueError, match="without a period"):
        effective_neighbours(instances.random_matchings(8, seed=0), 0.5)


def test_the_walk_scales_to_a_sparse_ring_of_twenty_thousand() -> None:
    W = instances.gossip_matrix(instances.topology("ring", 20000))
    small = effective_neighbours(instances.gossip_matrix(instances.topology("ring", 200)), 0.5)
    assert effective_neighbours(W, 0.5, probes=16) == pytest.approx(small, rel=0.02)  # local at gamma = 0.5


def test_zoo_table_lists_every_member_with_both_measures(capsys: pytest.CaptureFixture[str]) -> None:
    rows = zoo_rows(16, (0.9,))
    assert [row.name for row in rows] == list(ZOO_MEMBERS)
    assert {row.name: row.diameter for row in rows}["ring"] == 8
    text = zoo_table(rows)
    assert text.splitlines()[0].startswith("topology,n,lam,spectral_gap,diameter,n_eff(gamma=0.9)")
    from decbounds.cli import main

    assert main(["gossip", "--zoo", "16", "--gamma", "0.9"]) == 0
    assert capsys.readouterr().out == text
    assert main(["gossip", "ring", "--n", "8", "--gamma", "0.9", "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert "n_eff(0.9)" in out.splitlines()[1]
    assert main(["gossip", "--zoo", "16", "--n", "4"]) == 2
    assert main(["gossip", "ring", "--n", "8", "--gamma", "1.5"]) == 2
