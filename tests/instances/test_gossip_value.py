"""GossipMatrix: W validated and decomposed once; the closed-form spectra against numpy's eigvalsh."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from decbounds.instances import matrices
from decbounds.instances.gossip import as_gossip, gossip_matrix, lazy, metropolis
from decbounds.instances.matrices import closed_form_eigenvalues, extreme_eigenvalues

from decbounds import algorithms, instances


def _reference(W: sp.csr_array) -> tuple[float, float]:
    """lambda_2, lambda_n by eigh with eigenvectors: drop the eigenvalue whose vector is 1/sqrt(n)."""
    values, vectors = np.linalg.eigh(W.toarray())
    consensus = int(np.argmax(np.abs(vectors.sum(axis=0))))
    rest = np.delete(values, consensus)
    return float(rest.max()), float(rest.min())


CLOSED_FORMS = [
    ("ring", 12, {}, "metropolis"), ("ring", 13, {}, "max_degree"), ("ring", 9, {}, "uniform"),
    ("path", 11, {}, "metropolis"), ("path", 10, {}, "path"), ("path", 7, {}, "max_degree"),
    ("torus", 12, {}, "metropolis"), ("torus", 15, {"r": 3}, "max_degree"),
    ("hypercube", 16, {}, "metropolis"), ("complete", 7, {}, "metropolis"), ("star", 6, {}, "metropolis"),
    ("ring_lattice", 14, {"k": 3}, "metropolis"), ("exponential", 16, {}, "metropolis"),
]


@pytest.mark.parametrize(("name", "n", "params", "weights"), CLOSED_FORMS)
def test_each_closed_form_matches_numpy(name: str, n: int, params: dict, weights: str) -> None:
    G = instances.topology(name, n, **params)
    W = instances.WEIGHT_RULES.build(weights, G)
    found = closed_form_eigenvalues(W, G.graph.get("cayley"))
    assert found is not None, (name, weights)
    lambda_2, lambda_n, method = found
    assert method.startswith("closed form")
    assert (lambda_2, lambda_n) == pytest.approx(_reference(W), abs=1e-12)


def test_a_matrix_off_the_pattern_gets_no_closed_form() -> None:
    G = nx.cycle_graph(10)
    rng = np.random.default_rng(0)
    u, v = np.array(G.edges).T
    W = matrices.from_edge_weights(10, u, v, rng.uniform(0.1, 0.4, size=u.size))
    assert closed_form_eigenvalues(W) is None
    # a torus tagged with the wrong group shape is not trusted
    T = instances.topology("torus", 12)
    assert closed_form_eigenvalues(metropolis(T), (2, 6)) is None
    # a path and a disjoint cycle have n - 1 edges, two leaves, degrees <= 2, but no closed form
    H = nx.disjoint_union(nx.path_graph(4), nx.cycle_graph(3))
    assert closed_form_eigenvalues(instances.WEIGHT_RULES.build("max_degree", H)) is None


def test_large_ring_is_closed_form_and_lazy_maps_the_spectrum() -> None:
    W = gossip_matrix(instances.topology("ring", 4096))
    assert W.spectrum_method == "closed form (Cayley graph of Z_4096)"
    assert W.lam == pytest.approx(1.0 / 3.0 + 2.0 / 3.0 * np.cos(2 * np.pi / 4096), abs=1e-15)
    slack = lazy(W, 0.5)
    assert slack.lambda_2 == pytest.approx(0.5 * W.lambda_2 + 0.5, abs=1e-15)
    assert slack.spectral_gap == pytest.approx(0.5 * W.spectral_gap, rel=1e-9)


def test_lanczos_agrees_with_dense(monkeypatch: pytest.MonkeyPatch) -> None:
    G = nx.random_regular_graph(3, 120, seed=1)
    W = metropolis(G)
    dense = extreme_eigenvalues(W)
    monkeypatch.setattr(matrices, "DENSE_REFERENCE_LIMIT", 10)
    monkeypatch.setattr(matrices, "DENSE_EIG_LIMIT", 10)
    lambda_2, lambda_n, method = extreme_eigenvalues(W)
    assert method == "lanczos"
    assert (lambda_2, lambda_n) == pytest.approx(dense[:2], abs=1e-8)


def test_the_value_is_read_only_and_passed_through() -> None:
    W = gossip_matrix(instances.topology("ring", 6))
    assert not W.matrix.data.flags.writeable
    assert as_gossip(W, 6) is W and instances.second_eigenvalue(W) == W.lam
    assert np.array_equal(np.asarray(W), W.toarray()) and (W @ np.ones(6)).tolist() == [1.0] * 6
    with pytest.raises(ValueError, match="W shape mismatch: the problem has n=5 workers"):
        as_gossip(W, 5)
    push = as_gossip(instances.column_stochastic_matrix(nx.DiGraph([(0, 1), (1, 2), (2, 0)])), kind="push")
    with pytest.raises(ValueError, match="W is a push GossipMatrix; this needs a symmetric one"):
        as_gossip(push)
    assert as_gossip(W, kind="push").kind == "push"


def test_run_batch_and_tune_decompose_a_raw_W_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    original = matrices.extreme_eigenvalues

    def counted(*args: object, **kwargs: object) -> tuple[float, float, str]:
        calls.append(1)
        return original(*args, **kwargs)

    from decbounds.instances import gossip
    monkeypatch.setattr(gossip, "extreme_eigenvalues", counted)
    f = instances.heterogeneous_quadratic(4, 3, 1.0, seed=0)
    raw = metropolis(instances.topology("ring", 4))
    algorithms.run_batch("dpsgd", f, raw, step_sizes=[0.1, 0.2], iterations=20, form=["cta", "atc"])
    assert len(calls) == 1  # two structural groups, one decomposition
    algorithms.tune("detag", f, raw, tol=1e-3, iterations=30, groups=[{"R": 1}, {"R": 2}])
    assert len(calls) == 2
    W = gossip_matrix(instances.topology("ring", 4))
    calls.clear()
    algorithms.tune("detag", f, W, tol=1e-3, iterations=30)
    algorithms.run("dsgt", f, W, step_size=0.1, iterations=5)
    assert calls == []
