"""D-PSGD over directed, doubly stochastic rounds: Ying et al.'s one-peer exponential graph.

W_t = (I + S^(2^k))/2 (``instances.one_peer_exponential(n, directed=True)``) is column and row stochastic
but not symmetric. D-PSGD's recursion X <- W_t X - alpha G(X) keeps the mean (1^T W_t = 1^T) and consensus
(W_t 1 = 1) without symmetry, so the rule declares ``directed_rounds``; the rules that need a symmetric W_t
refuse such a schedule with a message naming the rules that take it.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from decbounds.algorithms.step_rule import doubly_stochastic_rounds
from decbounds.instances import schedules as sch

from decbounds import algorithms, instances


def _grad(f: instances.HeterogeneousQuadratic, X: np.ndarray) -> np.ndarray:
    return f.grad(X[:, None, :])[:, 0, :]


@pytest.mark.parametrize("n", [8, 6])
@pytest.mark.parametrize("form", ["cta", "atc"])
def test_dpsgd_on_the_directed_one_peer_exponential_graph_is_its_recursion(n, form):
    f = instances.heterogeneous_quadratic(n, 3, 1.0, seed=2)
    s = sch.one_peer_exponential(n, directed=True)
    assert s.kind == "push" and not np.allclose(s.matrix(0).toarray(), s.matrix(0).toarray().T)
    alpha, T = 0.2, 30
    X = np.broadcast_to(f.x0, (n, 3)).copy()
    for t in range(T):
        W = s.matrix(t)
        X = W @ X - alpha * _grad(f, X) if form == "cta" else W @ (X - alpha * _grad(f, X))
    result = algorithms.run("dpsgd", f, s, step_size=alpha, iterations=T, form=form)
    assert np.allclose(result.x_hat, X.mean(axis=0), rtol=0, atol=1e-12)
    # one message per worker and round: each worker sends to one peer
    assert result.counters["messages"] == n * T and result.counters["gossip_rounds"] == T


def test_dpsgd_converges_on_it_and_reads_its_effective_lam():
    f = instances.heterogeneous_quadratic(8, 3, 1.0, seed=0)
    result = algorithms.run("dpsgd", f, sch.one_peer_exponential(8, directed=True), step_size=0.3,
                            iterations=2000, tol=1e-3)
    assert result.status == "converged" and result.t_eps is not None
    assert result.bound is not None and result.bound.parameters["lam"] == 0.0  # exact averaging, n = 2^3


# A column-stochastic round whose rows do not sum to 1: push-sum material, not D-PSGD's.
_COLUMN_ONLY = np.array([[0.5, 0.5, 0.5], [0.5, 0.0, 0.0], [0.0, 0.5, 0.5]])


def test_a_round_that_is_only_column_stochastic_is_refused_naming_it():
    periodic = sch.schedule_from_sequence([np.full((3, 3), 1 / 3), _COLUMN_ONLY], kind="push")
    f = instances.heterogeneous_quadratic(3, 2, 1.0, seed=0)
    with pytest.raises(ValueError, match=r"W_1 of .* not doubly stochastic: max \|W 1 - 1\| = 0.5.*sgp"):
        algorithms.run("dpsgd", f, periodic, step_size=0.1, iterations=5)
    assert algorithms.run("sgp", f, periodic, step_size=0.1, iterations=5).iterations == 5

    def round_matrix(t: int) -> sp.csr_array:  # generated: doubly stochastic until round 3
        return sp.csr_array(_COLUMN_ONLY if t == 3 else np.full((3, 3), 1 / 3))

    generated = sch.schedule_from_callable(round_matrix, 3, kind="push")
    wrapped = doubly_stochastic_rounds(generated)
    assert wrapped is not generated
    assert np.array_equal(wrapped.matrix(2).toarray(), generated.matrix(2).toarray())
    with pytest.raises(ValueError, match=r"W_3 of .* not doubly stochastic"):
        wrapped.matrix(3)


@pytest.mark.parametrize("name", [name for name in algorithms.algorithm_names()
                                  if algorithms.rule_class(name).communication == "gossip"
                                  and not algorithms.rule_class(name).directed_rounds])
def test_the_rules_needing_symmetry_refuse_directed_rounds_and_say_who_takes_them(name):
    f = instances.heterogeneous_quadratic(8, 3, 1.0, seed=0)
    with pytest.raises(ValueError, match=r"symmetric doubly stochastic rounds.*Rules that take directed "
                                         r"rounds: dpsgd .*sgp .*defacto"):
        algorithms.run(name, f, sch.one_peer_exponential(8, directed=True), step_size=0.1, iterations=5)


def test_dpsgd_on_a_fixed_directed_doubly_stochastic_w_is_its_recursion():
    n, alpha, T = 8, 0.2, 25
    shift = np.roll(np.eye(n), 1, axis=0)  # worker i sends to i + 1
    W = (np.eye(n) + shift + shift @ shift + np.linalg.matrix_power(shift, 4)) / 4  # the static exponential
    f = instances.heterogeneous_quadratic(n, 3, 1.0, seed=3)
    X = np.broadcast_to(f.x0, (n, 3)).copy()
    for _ in range(T):
        X = W @ X - alpha * _grad(f, X)
    result = algorithms.run("dpsgd", f, W, step_size=alpha, iterations=T)
    assert np.allclose(result.x_hat, X.mean(axis=0), rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="not doubly stochastic"):  # column stochastic only
        algorithms.run("dpsgd", instances.heterogeneous_quadratic(3, 2, 1.0, seed=0), _COLUMN_ONLY,
                       step_size=0.1, iterations=5)
    with pytest.raises(ValueError, match=r"not symmetric.*Rules that take directed rounds: dpsgd"):
        algorithms.run("dsgt", f, W, step_size=0.1, iterations=5)
