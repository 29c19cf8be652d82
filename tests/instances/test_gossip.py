"""Weight rules, spectra (docs/theory.md §14 closed forms), the lazy slack matrix, check_gossip, push-sum."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from decbounds.instances import matrices as matrices_module
from decbounds.instances.gossip import (
    GossipMatrix,
    check_gossip,
    column_stochastic_matrix,
    gossip_matrix,
    lazy,
    lazy_gap_is_exact,
    second_eigenvalue,
    spectral_gap,
)
from decbounds.instances.graphs import topology
from hypothesis import given, settings
from hypothesis import strategies as st

from decbounds import instances


@pytest.mark.parametrize("n", [5, 16, 64])
def test_closed_forms_of_section_n(n: int) -> None:
    ring = gossip_matrix(topology("ring", n), "uniform")
    assert spectral_gap(ring) == pytest.approx((2 / 3) * (1 - math.cos(2 * math.pi / n)), abs=1e-10)
    path = gossip_matrix(topology("path", n), "metropolis")
    assert spectral_gap(path) == pytest.approx((2 / 3) * (1 - math.cos(math.pi / n)), abs=1e-10)
    cor2 = gossip_matrix(topology("path", n), "path")
    assert second_eigenvalue(cor2) == pytest.approx(math.cos(math.pi / n), abs=1e-10)
    assert np.allclose(np.sort(np.linalg.eigvalsh(cor2.toarray())), np.sort(np.cos(np.pi * np.arange(n) / n)))
    star = gossip_matrix(topology("star", n), "metropolis")
    assert spectral_gap(star) == pytest.approx(1 / n, abs=1e-10)
    complete = gossip_matrix(topology("complete", n), "uniform")
    assert np.allclose(complete.toarray(), 1 / n) and spectral_gap(complete) == pytest.approx(1, abs=1e-10)


@pytest.mark.parametrize("d", [1, 2, 3, 5, 7])
def test_hypercube_closed_form(d: int) -> None:
    W = gossip_matrix(topology("hypercube", 2**d), "metropolis")
    assert spectral_gap(W) == pytest.approx(2 / (d + 1), abs=1e-10)


@pytest.mark.parametrize("r", [3, 4, 8, 16])
def test_torus_closed_form(r: int) -> None:
    W = gossip_matrix(topology("torus", r * r), "metropolis")
    assert spectral_gap(W) == pytest.approx((2 / 5) * (1 - math.cos(2 * math.pi / r)), abs=1e-10)


def _connected_graphs() -> st.SearchStrategy[nx.Graph]:
    def build(args: tuple[int, int]) -> nx.Graph:
        n, seed = args
        return topology("erdos_renyi", n, p=min(1.0, 2 * math.log(n) / n + 0.1), seed=seed)

    return st.tuples(st.integers(2, 25), st.integers(0, 10**6)).map(build)


@given(G=_connected_graphs(), weights=st.sampled_from(["metropolis", "max_degree"]))
def test_rules_give_gossip_matrices_with_lam_in_unit_interval(G: nx.Graph, weights: str) -> None:
    W = gossip_matrix(G, weights)
    assert isinstance(W, GossipMatrix) and isinstance(W.matrix, sp.csr_array)
    lam = check_gossip(W, G)
    assert 0.0 <= lam < 1.0
    assert lam == pytest.approx(np.max(np.abs(np.linalg.eigvalsh(W.toarray() - 1 / W.shape[0]))), abs=1e-12)


def test_max_degree_is_aperiodic_on_bipartite_regular_graphs() -> None:
    # 1/d_max (CVX max_deg.m) would put an eigenvalue at -1 on an even ring; 1/(d_max + 1) does not
    assert second_eigenvalue(gossip_matrix(topology("ring", 8), "max_degree")) < 1.0
    assert np.allclose(gossip_matrix(topology("ring", 8), "max_degree").toarray(),
                       gossip_matrix(topology("ring", 8), "uniform").toarray())


def test_disconnected_graph_is_refused() -> None:
    G = nx.disjoint_union(nx.path_graph(3), nx.path_graph(3))
    # a disconnected G names its components (a lam = 1 W would say nothing)
    with pytest.raises(ValueError, match=r"must be connected; it has 2 components: 3 node\(s\) \[0, 1, 2\]"):
        gossip_matrix(G, "metropolis")
    W = gossip_matrix(G, "metropolis", allow_disconnected=True)  # the opt-in: no warning
    with pytest.raises(ValueError, match="not connected"):
        check_gossip(W, G)
    assert second_eigenvalue(W) == pytest.approx(1.0)


@given(G=_connected_graphs(), kappa=st.floats(0.01, 1.0))
def test_lazy_gap_scales_exactly_under_the_stated_condition(G: nx.Graph, kappa: float) -> None:
    W = gossip_matrix(G, "metropolis")
    eig = np.sort(np.linalg.eigvalsh(W.toarray()))
    if len(eig) < 2:
        return
    lambda_2, lambda_n = eig[-2], eig[0]
    lazy_gap = spectral_gap(lazy(W, kappa))
    # lambda_2 = -lambda_n to rounding (W = J: both are 0 +- 1e-16, their order is the LAPACK build's): both
    # sides of the condition give kappa * gap(W) there
    if lazy_gap_is_exact(lambda_2, lambda_n, kappa) or abs(lambda_2 + lambda_n) <= 1e-12:
        assert lazy_gap == pytest.approx(kappa * spectral_gap(W), abs=1e-10)
    else:
        assert lazy_gap > kappa * spectral_gap(W) + 1e-12


def test_lazy_gap_condition_both_sides() -> None:
    # Cor. 2 path matrix: lambda_n = -lambda_2, lam attained at both ends -> exact (not PSD: still exact)
    path = gossip_matrix(topology("path", 10), "path")
    assert lazy_gap_is_exact(math.cos(math.pi / 10), -math.cos(math.pi / 10), 0.3)
    assert spectral_gap(lazy(path, 0.3)) == pytest.approx(0.3 * spectral_gap(path), abs=1e-12)
    # star with 1/2 on each of 2 leaves... use a matrix whose lam sits at lambda_n: the 2-node swap-ish W
    W = np.array([[0.1, 0.9], [0.9, 0.1]])  # eigenvalues 1 and -0.8: lam = 0.8 at lambda_n
    assert not lazy_gap_is_exact(-0.8, -0.8, 0.5)
    assert spectral_gap(lazy(W, 0.5)) == pytest.approx(0.9) and 0.5 * spectral_gap(W) == pytest.approx(0.1)
    assert lazy_gap_is_exact(-0.8, -0.8, 1.0)


def test_lazy_rejects_bad_kappa() -> None:
    W = gossip_matrix(topology("ring", 5))
    for kappa in (0.0, -0.1, 1.5, float("nan")):
        with pytest.raises(ValueError, match="kappa"):
            lazy(W, kappa)


def _metropolis_ring(n: int) -> np.ndarray:
    return gossip_matrix(topology("ring", n)).toarray()


@pytest.mark.parametrize(
    ("W", "G", "kwargs", "message"),
    [
        (np.ones((2, 3)) / 3, None, {}, "not square"),
        (np.array([[0.5, 0.5, 0.0], [0.4, 0.3, 0.3], [0.1, 0.2, 0.7]]), None, {}, "not symmetric"),
        (np.array([[0.5, 0.4], [0.4, 0.5]]), None, {}, "rows do not sum to 1"),
        (np.array([[1.2, -0.2], [-0.2, 1.2]]), None, {}, "not non-negative"),
        (_metropolis_ring(5), nx.path_graph(5), {}, r"not inside G: W\[0, 4\]"),
        (_metropolis_ring(5), nx.path_graph(4), {}, "not inside G"),
        (np.eye(3), None, {}, "not connected"),
        (np.array([[0.0, 1.0], [1.0, 0.0]]), None, {}, "not connected"),
    ],
)
def test_every_check_gossip_failure_mode(W: np.ndarray, G: nx.Graph | None, kwargs: dict,
                                         message: str) -> None:
    with pytest.raises(ValueError, match=message):
        check_gossip(W, G, **kwargs)


def test_check_gossip_order_and_fdla_option() -> None:
    negative = np.array([[1.2, -0.2], [-0.2, 1.2]])
    # non-negativity skipped: it then fails on lam = 1.4 > 1 (an eigenvalue outside [-1, 1])
    with pytest.raises(ValueError, match=r"lam = .*1.4 > 1"):
        check_gossip(negative, nonnegative=False)
    fdla_like = np.array([[0.6, 0.5, -0.1], [0.5, 0.0, 0.5], [-0.1, 0.5, 0.6]])
    assert check_gossip(fdla_like, nonnegative=False) < 1.0
    with pytest.raises(ValueError, match="non-negative"):
        check_gossip(fdla_like)
    with pytest.raises(TypeError, match="W must be"):
        check_gossip("W")


def test_dense_and_sparse_inputs_agree() -> None:
    W = gossip_matrix(topology("torus", 16))
    for form in (W, W.toarray(), sp.coo_matrix(W), sp.csc_array(W)):
        assert second_eigenvalue(form) == pytest.approx(0.6, abs=1e-12)
        assert isinstance(lazy(form, 0.5), GossipMatrix)


@pytest.mark.parametrize(("name", "weights"), [("ring", "uniform"), ("path", "path"),
                                               ("erdos_renyi", "metropolis"), ("star", "metropolis")])
def test_sparse_eigensolver_matches_dense(monkeypatch: pytest.MonkeyPatch, name: str, weights: str) -> None:
    params = {"p": 0.2, "seed": 4} if name == "erdos_renyi" else {}
    W = gossip_matrix(topology(name, 60, **params), weights)
    dense = second_eigenvalue(W)
    monkeypatch.setattr(matrices_module, "DENSE_EIG_LIMIT", 10)
    assert second_eigenvalue(W) == pytest.approx(dense, abs=1e-9)


def test_n_5000_spectra() -> None:
    n = 5000
    assert second_eigenvalue(gossip_matrix(topology("path", n), "path")) == pytest.approx(
        math.cos(math.pi / n), abs=1e-12)
    er = gossip_matrix(topology("erdos_renyi", n, p=2 * math.log(n) / n, seed=0))
    assert 0.5 < second_eigenvalue(er) < 0.9


@pytest.mark.parametrize(
    ("graph", "weights", "options", "message"),
    [
        (nx.path_graph(4), "nope", {}, "weights must be one of"),
        (nx.star_graph(4), "uniform", {}, "regular"),
        (nx.cycle_graph(4), "path", {}, "path graph"),
        (nx.path_graph(4), "metropolis", {"solver": "SCS"}, "takes no options"),
        (nx.relabel_nodes(nx.path_graph(3), {0: "a"}), "metropolis", {}, "0..n-1"),
    ],
)
def test_bad_weight_requests(graph: nx.Graph, weights: str, options: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        gossip_matrix(graph, weights, **options)


def test_directed_graph_needs_push_sum() -> None:
    D = topology("exponential", 8, directed=True)
    with pytest.raises(TypeError, match="column_stochastic_matrix"):
        gossip_matrix(D)
    P = column_stochastic_matrix(D)
    assert np.allclose(P.sum(axis=0), 1.0)
    dense = P.toarray()
    assert dense[0, 0] == pytest.approx(1 / 4) and dense[1, 0] == pytest.approx(1 / 4)
    assert dense[3, 0] == 0.0  # 0 -> 3 is not an edge (out-neighbours 1, 2, 4)
    # the push-sum weights x/y converge to the average
    x, y = np.arange(8.0), np.ones(8)
    for _ in range(60):
        x, y = P @ x, P @ y
    assert np.allclose(x / y, 3.5)
    with pytest.raises(TypeError, match="DiGraph"):
        column_stochastic_matrix(nx.path_graph(3))


@settings(max_examples=20)
@given(n=st.integers(2, 40))
def test_cor2_path_matrix_lam(n: int) -> None:
    W = gossip_matrix(instances.topology("path", n), "path")
    check_gossip(W, instances.topology("path", n))
    assert second_eigenvalue(W) == pytest.approx(math.cos(math.pi / n), abs=1e-10)


def test_cli_prints_every_rule_side_by_side(capsys: pytest.CaptureFixture[str], tmp_path: object) -> None:
    from decbounds.cli import main

    assert main(["gossip", "ring", "--n", "64", "--weights", "fmmc", "--cache-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    rows = {line.split()[0]: line.split() for line in out.splitlines()[2:]}
    assert set(rows) == {"fmmc*", "metropolis", "max_degree", "uniform", "fdla"}
    c = math.cos(2 * math.pi / 64)
    assert float(rows["fmmc*"][1]) == pytest.approx((1 + c) / (3 - c), abs=1e-9)
    assert float(rows["uniform"][2]) == pytest.approx((2 / 3) * (1 - c), rel=1e-4)
    assert main(["gossip", "broom", "--n", "9", "--D", "8", "--weights", "path", "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert "path*" in out and f"{math.cos(math.pi / 9):.10f}" in out
