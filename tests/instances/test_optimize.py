"""FDLA / FMMC (§12): orderings against the closed rules, solver agreement, symmetry LP, cache."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from decbounds.instances import optimize as optimize_module
from decbounds.instances.gossip import check_gossip, gossip_matrix, second_eigenvalue
from decbounds.instances.graphs import topology
from decbounds.instances.optimize import optimize_gossip
from hypothesis import given, settings
from hypothesis import strategies as st

from decbounds import instances


@pytest.fixture(autouse=True)
def _private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("DECBOUNDS_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _small_graph(n: int, seed: int) -> nx.Graph:
    return topology("erdos_renyi", n, p=min(1.0, 2 * math.log(n) / n + 0.05), seed=seed)


@settings(max_examples=6)
@given(n=st.integers(4, 14), seed=st.integers(0, 10**6))
def test_fmmc_beats_the_closed_rules_and_fdla_beats_fmmc(n: int, seed: int) -> None:
    G = _small_graph(n, seed)
    fmmc = optimize_gossip(G, "fmmc", cache=False)
    fdla = optimize_gossip(G, "fdla", cache=False)
    assert fmmc.solver == "CLARABEL" or fmmc.solver == "lp"
    assert check_gossip(fmmc.W, G) == pytest.approx(fmmc.lam, abs=1e-12)
    assert check_gossip(fdla.W, G, nonnegative=False) == pytest.approx(fdla.lam, abs=1e-12)
    assert fmmc.lam <= second_eigenvalue(gossip_matrix(G, "metropolis")) + 1e-6
    assert fmmc.lam <= second_eigenvalue(gossip_matrix(G, "max_degree")) + 1e-6
    assert fdla.lam <= fmmc.lam + 1e-6


@settings(max_examples=5)
@given(n=st.integers(5, 12), seed=st.integers(0, 10**6), data=st.data())
def test_adding_edges_never_makes_fmmc_worse(n: int, seed: int, data: st.DataObject) -> None:
    G = _small_graph(n, seed)
    missing = sorted(nx.non_edges(G))
    if not missing:
        return
    extra = data.draw(st.lists(st.sampled_from(missing), min_size=1, max_size=3, unique=True))
    H = G.copy()
    H.add_edges_from(extra)
    assert optimize_gossip(H, "fmmc", cache=False).lam <= optimize_gossip(G, "fmmc", cache=False).lam + 1e-6


@pytest.mark.parametrize("method", ["fmmc", "fdla"])
@pytest.mark.parametrize("seed", [1, 2])
def test_barrier_agrees_with_clarabel(method: str, seed: int) -> None:
    G = _small_graph(20, seed)
    barrier = optimize_gossip(G, method, solver="barrier", cache=False)
    clarabel = optimize_gossip(G, method, solver="CLARABEL", cache=False)
    assert barrier.lam == pytest.approx(clarabel.lam, abs=1e-6)
    assert barrier.optimality_gap is not None and barrier.optimality_gap < 1e-7


def test_scs_is_available_and_close() -> None:
    G = _small_graph(10, 3)
    scs = optimize_gossip(G, "fmmc", solver="SCS", cache=False,
                          solver_options={"eps_abs": 1e-6, "eps_rel": 1e-6})
    assert scs.solver == "SCS"
    assert scs.lam == pytest.approx(optimize_gossip(G, "fmmc", solver="CLARABEL", cache=False).lam, abs=1e-4)
    check_gossip(scs.W, G)


@pytest.mark.parametrize(("name", "n", "params"), [
    ("ring", 9, {}), ("ring", 12, {}), ("torus", 12, {"r": 3, "c": 4}), ("hypercube", 8, {}),
    ("ring_lattice", 11, {"k": 2}), ("exponential", 12, {}), ("complete", 6, {}),
])
@pytest.mark.parametrize("method", ["fmmc", "fdla"])
def test_symmetry_lp_matches_the_full_sdp(name: str, n: int, params: dict, method: str) -> None:
    G = topology(name, n, **params)
    lp = optimize_gossip(G, method, cache=False)
    assert lp.solver == "lp"
    sdp = optimize_gossip(G, method, solver="CLARABEL", cache=False)
    assert lp.lam == pytest.approx(sdp.lam, abs=1e-6)


def test_known_optima() -> None:
    # FMMC on an even ring: one weight q on every edge; lambda_2 = 1 - 2q(1 - c), lambda_n = 1 - 4q with
    # c = cos(2 pi/n); balancing them gives q = 1/(3 - c) and lam = (1 + c)/(3 - c)
    for n in (8, 200):
        c = math.cos(2 * math.pi / n)
        assert optimize_gossip(topology("ring", n), "fmmc", cache=False).lam == pytest.approx(
            (1 + c) / (3 - c), abs=1e-8)
    # hypercube Q_d: lam = (d - 1) / (d + 1)
    hypercube = optimize_gossip(topology("hypercube", 64), "fmmc", cache=False)
    assert hypercube.lam == pytest.approx(5 / 7, abs=1e-8)
    # complete graph: W = 11^T/n, lam = 0
    assert optimize_gossip(topology("complete", 7), "fdla", cache=False).lam == pytest.approx(0.0, abs=1e-8)


def test_circulant_detected_without_the_cayley_tag() -> None:
    G = nx.circulant_graph(10, [1, 3])
    assert "cayley" not in G.graph
    assert optimize_gossip(G, "fmmc", cache=False).solver == "lp"
    assert optimize_gossip(topology("path", 10), "fmmc", cache=False).solver == "CLARABEL"
    with pytest.raises(ValueError, match="translation symmetry"):
        optimize_gossip(topology("path", 10), "fmmc", solver="lp", cache=False)


def test_symmetric_graphs_beyond_the_sdp_limit_use_the_lp() -> None:
    G = topology("torus", 400, r=16, c=25)
    torus = optimize_gossip(G, "fmmc", cache=False)
    assert torus.solver == "lp" and torus.lam < second_eigenvalue(gossip_matrix(G, "metropolis"))
    check_gossip(torus.W, G)


def test_size_limit_is_stated() -> None:
    with pytest.raises(ValueError, match=f"n = {optimize_module.BARRIER_MAX_N}"):
        optimize_gossip(topology("path", optimize_module.BARRIER_MAX_N + 1), "fmmc", cache=False)


def test_cache_roundtrip_env_and_argument(_private_cache: Path, tmp_path: Path) -> None:
    G = _small_graph(8, 5)
    first = optimize_gossip(G, "fmmc")
    assert not first.from_cache
    entries = sorted(_private_cache.glob("*.npz"))
    assert len(entries) == 1 and entries[0].name.startswith("fmmc-n8-")
    second = optimize_gossip(G, "fmmc")
    assert second.from_cache and second.lam == first.lam and second.solver == first.solver
    assert np.array_equal(second.W.toarray(), first.W.toarray())
    optimize_gossip(G, "fdla")  # method is part of the key
    assert len(list(_private_cache.glob("*.npz"))) == 2
    other = tmp_path / "elsewhere"
    assert not optimize_gossip(G, "fmmc", cache_dir=other).from_cache
    assert optimize_gossip(G, "fmmc", cache_dir=other).from_cache
    assert not list(_private_cache.glob("*.tmp"))  # no temporary files left behind


def test_corrupt_or_foreign_cache_entries_are_resolved(_private_cache: Path) -> None:
    G = _small_graph(8, 6)
    optimize_gossip(G, "fmmc")
    (entry,) = _private_cache.glob("*.npz")
    entry.write_bytes(b"not an npz")  # as if a non-atomic writer had been killed
    again = optimize_gossip(G, "fmmc")
    assert not again.from_cache
    assert optimize_gossip(G, "fmmc").from_cache  # rewritten


def test_killed_write_leaves_no_entry(_private_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def crash(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(optimize_module.os, "replace", crash)
    with pytest.raises(KeyboardInterrupt):
        optimize_gossip(_small_graph(7, 1), "fmmc")
    leftovers = list(_private_cache.glob("*")) if _private_cache.exists() else []
    assert leftovers == []  # neither a partial entry nor the temporary file


def test_gossip_matrix_dispatches_to_the_optimizer() -> None:
    G = topology("ring", 8)
    W = gossip_matrix(G, "fmmc", cache=False)
    c = math.cos(2 * math.pi / 8)
    assert second_eigenvalue(W) == pytest.approx((1 + c) / (3 - c), abs=1e-8)
    assert instances.optimize_gossip is optimize_gossip


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"method": "slem"}, "method"),
    ({"solver": "MOSEK"}, "solver"),
    ({"tol": 0.0}, "tol"),
])
def test_bad_arguments(kwargs: dict, message: str) -> None:
    args = {"method": "fmmc", **kwargs}
    method = args.pop("method")
    with pytest.raises(ValueError, match=message):
        optimize_gossip(topology("ring", 5), method, cache=False, **args)


def test_disconnected_and_directed_graphs_refused() -> None:
    with pytest.raises(ValueError, match="connected"):
        optimize_gossip(nx.empty_graph(3), "fmmc", cache=False)
    with pytest.raises(TypeError, match="undirected"):
        optimize_gossip(topology("exponential", 8, directed=True), "fmmc", cache=False)


def test_cache_dir_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DECBOUNDS_CACHE_DIR")
    assert optimize_module.default_cache_dir() == Path.home() / ".cache" / "decbounds" / "gossip"
    monkeypatch.setenv("DECBOUNDS_CACHE_DIR", os.fspath(Path("/tmp/x")))
    assert optimize_module.default_cache_dir() == Path("/tmp/x")


# --------------------------------------------------------------------------------------------------------
# the orbit LP by HiGHS (FMMC without cvxpy, benchmarks/bench_fmmc.py): exact optima, numpy's check


def test_gossip_fmmc_command_imports_no_cvxpy() -> None:
    # `decbounds gossip ring --n 1000 --weights fmmc` solves the orbit LP by HiGHS (`import cvxpy` alone costs
    # about 1.7 s CPU). Counted, not timed: cvxpy and its solvers stay out of sys.modules.
    code = ("import sys; from decbounds.cli import main; "
            "status = main(['gossip', 'ring', '--n', '1000', '--weights', 'fmmc', '--no-cache']); "
            "print(status, sorted(m for m in sys.modules "
            "if m.split('.')[0] in ('cvxpy', 'clarabel', 'scs')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    lines = out.strip().splitlines()
    assert lines[-1] == "0 []"
    rows = {line.split()[0]: line.split() for line in lines[2:-1]}
    assert rows["fmmc*"][-1] == "lp" and rows["fdla"][-1] == "lp"


@pytest.mark.parametrize("method", ["fmmc", "fdla"])
@pytest.mark.parametrize("n", [8, 128, 1000])
def test_lp_reaches_the_ring_optimum_to_rounding(n: int, method: str) -> None:
    # cvxpy CLARABEL (up to a21cd32) was 5e-11..2e-9 above (1 + c)/(3 - c) and its weight up to 1.3e-5 off
    # at n = 1000 (lam is flat in q there); HiGHS's vertex is the optimum to rounding
    c = math.cos(2 * math.pi / n)
    result = optimize_gossip(topology("ring", n), method, cache=False)
    assert optimize_module.LP_METHOD == "highs-ds" and result.solver == "lp"
    assert result.lam == pytest.approx((1 + c) / (3 - c), abs=1e-13)
    np.testing.assert_allclose(result.edge_weights, 1 / (3 - c), rtol=0, atol=1e-13)
    assert result.optimality_gap is not None and 0.0 <= result.optimality_gap < optimize_module.LP_VERIFY_TOL


@pytest.mark.parametrize(("name", "n", "expected"), [
    ("hypercube", 16, 3 / 5), ("hypercube", 256, 7 / 9), ("complete", 9, 0.0), ("torus", 16, 0.6),
    ("torus", 36, 7 / 9),
])
def test_lp_known_optima_to_rounding(name: str, n: int, expected: float) -> None:
    for method in ("fmmc", "fdla"):
        lam = optimize_gossip(topology(name, n), method, cache=False).lam
        assert lam == pytest.approx(expected, abs=1e-13)


def test_lp_answer_is_deterministic_to_the_bits() -> None:
    # the exponential graph's optimal orbit weights are not unique (CLARABEL returned another optimal W of
    # the same lam); HiGHS's dual simplex returns the same vertex on every call
    G = topology("exponential", 16)
    first, second = (optimize_gossip(G, "fmmc", cache=False) for _ in range(2))
    assert np.array_equal(first.edge_weights, second.edge_weights) and first.lam == second.lam
    check_gossip(first.W, G)


def test_cache_key_is_unchanged_so_a_warm_cache_keeps_the_records() -> None:
    # the figures read FMMC from the cache; entries written by the CLARABEL LP (a21cd32) are still hit
    n, edges = optimize_module._edges(topology("ring", 8))
    assert optimize_module._cache_key("fmmc", n, edges) == "fmmc-n8-c48cbd2ef865fad910a2b8af.npz"


def test_lp_value_numpy_disagrees_with_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    solve = optimize_module._solve_translation_lp

    def off(*args: object) -> tuple[np.ndarray, float, float]:
        weights, value, bound = solve(*args)
        return weights, value - 1e-6, bound  # an LP value numpy's lam of W does not confirm

    monkeypatch.setattr(optimize_module, "_solve_translation_lp", off)
    with pytest.raises(RuntimeError, match="not confirmed by numpy"):
        optimize_gossip(topology("ring", 10), "fmmc", cache=False)


@pytest.mark.parametrize(("entries", "message"), [
    ({(0, 2): 0.1, (2, 0): 0.1, (0, 0): 0.4, (2, 2): 0.4}, "check: non-zero entries off the graph$"),
    ({(0, 1): 0.9, (1, 0): 0.9, (0, 0): -0.15, (1, 1): -0.15}, "negative entries$"),
    ({(0, 1): 0.35, (0, 0): 0.4}, "not symmetric"),
    ({(0, 0): 0.6}, "doubly stochastic"),
])
def test_numpy_check_of_W(entries: dict, message: str) -> None:
    G = topology("ring", 4)
    n, edges = optimize_module._edges(G)
    W = sp.lil_array(np.eye(n) - optimize_module._laplacian(n, edges[:, 0], edges[:, 1], np.full(4, 0.25)))
    for (i, j), value in entries.items():
        W[i, j] = value
    with pytest.raises(RuntimeError, match=message):
        optimize_module._verify(n, edges, sp.csr_array(W), nonnegative=True)
