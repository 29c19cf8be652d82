"""The gossip product (algorithms/mixing.py): ``MixingOperator.apply`` equals scipy's CSR product bit for bit
(whichever way it is computed: by diagonals, block by block, or through scipy's kernel), a configuration gets
the same bits alone and inside a batch, ``apply(add=)`` and ``two_tap`` have the bits of the product followed
by the numpy operations they stand for; and a batch with a configuration gone NaN matches the solo runs of
the others (same T_eps, same bits)."""

from __future__ import annotations

from typing import Any

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from decbounds.algorithms import mixing
from decbounds.algorithms.mixing import MixingOperator
from support import DiagonalQuadratic

from decbounds import algorithms, instances

# --------------------------------------------------------------------------------------------------------
# 1. the product


def _reference_product(W: sp.csr_array, Z: np.ndarray) -> np.ndarray:
    """scipy's public CSR product (CSR order per entry, whatever the width)."""
    return np.asarray(W @ np.ascontiguousarray(Z).reshape(Z.shape[0], -1)).reshape(Z.shape)


def _assert_close_to_dense(W: sp.csr_array, Z: np.ndarray, product: np.ndarray) -> None:
    """|product - W Z| <= 1e-15 (|W| |Z|) entrywise against a dense numpy product (an independent order)."""
    flat = Z.reshape(Z.shape[0], -1)
    dense = W.toarray() @ flat
    bound = 1e-15 * (np.abs(W.toarray()) @ np.abs(flat))
    assert np.all(np.abs(product.reshape(flat.shape) - dense) <= bound)


def _random_sparse(n: int, rng: np.random.Generator) -> sp.csr_array:
    """A non-symmetric M with negative weights, an empty row (nothing received) and unsorted input indices."""
    # drawn with numpy (scipy's random_array takes rng= only from scipy 1.15 on; pyproject admits 1.12)
    dense = np.where(rng.random((n, n)) < 0.75, rng.random((n, n)) - 0.5, 0.0)  # rows of 0 to n terms
    dense[1, :] = 0.0
    rows, cols = np.nonzero(dense)
    shuffled = rng.permutation(rows.size)  # entries in no order: the CSR rows keep unsorted indices
    return sp.csr_array(sp.coo_array((dense[rows, cols][shuffled], (rows[shuffled], cols[shuffled])),
                                     shape=(n, n)))


def _matrices(n: int, rng: np.random.Generator) -> dict[str, sp.csr_array]:
    """A ring and a path (applied by diagonals), a circulant graph with chords (by diagonals while few) and
    a random matrix (by scipy's kernel: too many diagonals)."""
    return {
        "ring": instances.gossip_matrix(nx.cycle_graph(n), "metropolis"),
        "path": instances.gossip_matrix(nx.path_graph(n), "metropolis"),
        "chords": instances.gossip_matrix(nx.circulant_graph(n, [1, 3]), "metropolis"),
        "random": _random_sparse(n, rng),
    }


# (n, state shape after the worker axis): wide rows (several rows per block, or one), narrow states of one
# block, single columns
SHAPES = [(6, (3, 25_000)), (5, (70_001,)), (7, (2, 10_000)), (6, (2, 5)), (9, (1, 1)), (4, (3,)),
          (12, (96, 6)), (8, (4, 75)), (40, (3, 700))]


@pytest.mark.parametrize(("n", "tail"), SHAPES)
def test_apply_equals_scipys_product(n: int, tail: tuple[int, ...]) -> None:
    rng = np.random.default_rng([n, *tail])
    Z = rng.standard_normal((n, *tail))
    for label, M in _matrices(n, rng).items():
        op = MixingOperator(M)
        expected = _reference_product(sp.csr_array(M), Z)
        assert np.array_equal(op.apply(Z), expected), label
        out = np.full(Z.shape, np.nan)  # stale contents must be overwritten, never accumulated
        assert op.apply(Z, out) is out and np.array_equal(out, expected), label
        _assert_close_to_dense(sp.csr_array(M), Z, out)
        # a strided (non-contiguous) input and a strided output give the same product
        wide = np.empty((n, *tail[:-1], 2 * tail[-1]))
        wide[..., ::2] = Z
        assert np.array_equal(op.apply(wide[..., ::2]), expected), label
        wide[...] = np.nan
        assert op.apply(Z, wide[..., 1::2]) is not None and np.array_equal(wide[..., 1::2], expected), label


def test_the_public_product_sums_in_csr_order() -> None:
    """scipy.sparse's public CSR product, the two-tap round and the added term: the bits of the reference
    sums, row by row in the order of the row's entries."""
    n = 11
    rng = np.random.default_rng(5)
    Z = rng.standard_normal((n, 4, 33))
    previous = rng.standard_normal(Z.shape)
    a, b = rng.uniform(0.5, 2.0, (1, 4, 1)), rng.uniform(-1.0, 0.0, (1, 4, 1))
    for label, M in _matrices(n, rng).items():
        op = MixingOperator(M)
        expected = _reference_product(sp.csr_array(M), Z)
        assert np.array_equal(op.apply(Z), expected), label
        assert np.array_equal(op.two_tap(Z, np.empty(Z.shape), a, previous, b), expected * a + previous * b)
        assert np.array_equal(op.apply(Z, add=previous), expected + previous), label


def test_any_blocking_gives_the_same_bits(monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks of 1, 2, 3 rows or all of them (a wide state's path), with per-configuration and per-worker
    coefficients and an out that is Z: the bits of the reference sums."""
    n = 11
    rng = np.random.default_rng(5)
    Z = rng.standard_normal((n, 4, 33))
    previous = rng.standard_normal(Z.shape)
    a, b = rng.uniform(0.5, 2.0, (1, 4, 1)), rng.uniform(-1.0, 0.0, (n, 1, 1))
    for label, M in _matrices(n, rng).items():
        expected = _reference_product(sp.csr_array(M), Z)
        for rows in (1, 2, 3, n):
            monkeypatch.setattr(mixing, "BLOCK_BYTES", rows * 8 * 4 * 33)
            op = MixingOperator(M)
            tapped = op.two_tap(Z, np.empty(Z.shape), a, previous, b)
            assert np.array_equal(tapped, expected * a + previous * b), (label, rows)
            assert np.array_equal(op.apply(Z, add=previous), expected + previous), (label, rows)
            X = Z.copy()
            assert op.apply(X, out=X) is X and np.array_equal(X, expected), (label, rows)


def test_coefficients_varying_along_the_worker_axis() -> None:
    """a and b of shape (n, 1, 1) (one value per worker) broadcast the numpy way."""
    n = 7
    rng = np.random.default_rng(8)
    W = instances.gossip_matrix(nx.cycle_graph(n), "metropolis")
    Z, previous = rng.standard_normal((n, 2, 9)), rng.standard_normal((n, 2, 9))
    a, b = rng.uniform(0.5, 2.0, (n, 1, 1)), rng.uniform(-1.0, 0.0, (n, 1, 9))
    out = MixingOperator(W).two_tap(Z, np.empty(Z.shape), a, previous, b)
    assert np.array_equal(out, _reference_product(W, Z) * a + previous * b)


@pytest.mark.parametrize("graph", ["ring", "path", "chords", "random"])
def test_a_configuration_gets_the_same_bits_alone_and_in_a_batch(graph: str) -> None:
    """State (n, k, d): configuration j's slice of the batched product equals the product of its slice."""
    n, k = 10, 7
    rng = np.random.default_rng(3)
    op = MixingOperator(_matrices(n, rng)[graph])
    for d in (1, 6, 2000):
        Z = rng.standard_normal((n, k, d)) * 10.0 ** rng.integers(-3, 4, (1, k, 1))
        batch = op.apply(Z)
        previous = rng.standard_normal(Z.shape)
        a, b = rng.uniform(0.5, 2.0, (1, k, 1)), rng.uniform(-1.0, 0.0, (1, k, 1))
        tapped = op.two_tap(Z, np.empty(Z.shape), a, previous, b)
        for j in range(k):
            alone = np.ascontiguousarray(Z[:, j : j + 1])
            assert np.array_equal(batch[:, j : j + 1], op.apply(alone)), (d, j)
            solo = op.two_tap(alone, np.empty(alone.shape), a[:, j : j + 1], np.ascontiguousarray(
                previous[:, j : j + 1]), b[:, j : j + 1])
            assert np.array_equal(tapped[:, j : j + 1], solo), (d, j)


@pytest.mark.parametrize(("n", "tail"), SHAPES)
def test_apply_with_add_equals_the_product_then_plus_equals(n: int, tail: tuple[int, ...]) -> None:
    """W Z + V (DSGT's y-round) has the bits of the product followed by ``+= V``."""
    rng = np.random.default_rng([n, *tail, 2])
    Z, V = rng.standard_normal((n, *tail)), rng.standard_normal((n, *tail))
    for label, W in _matrices(n, rng).items():
        op = MixingOperator(W)
        expected = _reference_product(sp.csr_array(W), Z)
        expected += V
        out = np.full(Z.shape, np.nan)
        assert op.apply(Z, out, add=V) is out and np.array_equal(out, expected), label
        dense = MixingOperator(W, backend="dense").apply(Z, np.empty(Z.shape), add=V)
        assert np.allclose(dense, expected, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize(("n", "tail"), SHAPES)
@pytest.mark.parametrize("coefficients", ["per_configuration", "scalar_a", "scalars", "per_entry"])
def test_two_tap_equals_a_times_WZ_plus_b_times_previous(n: int, tail: tuple[int, ...],
                                                         coefficients: str) -> None:
    rng = np.random.default_rng([n, *tail, 1])
    Z = rng.standard_normal((n, *tail))
    previous = rng.standard_normal(Z.shape)
    per_configuration = (1, tail[0]) + (1,) * (len(tail) - 1) if len(tail) > 1 else (1,)
    shapes = {"per_configuration": (per_configuration, per_configuration),
              "scalar_a": ((), per_configuration), "scalars": ((), ()),
              "per_entry": ((1, *tail), (1, *tail))}[coefficients]
    a = rng.uniform(0.5, 2.5, shapes[0])
    b = rng.uniform(-1.5, 0.0, shapes[1])
    for label, W in _matrices(n, rng).items():
        op = MixingOperator(W)
        out = np.full(Z.shape, np.nan)
        Z_before, previous_before = Z.copy(), previous.copy()
        assert op.two_tap(Z, out, a, previous, b) is out
        product = _reference_product(sp.csr_array(W), Z)
        # the same floating-point operations as apply, *= a, + previous * b: the same bits
        assert np.array_equal(out, product * a + previous * b), label
        assert np.array_equal(Z, Z_before) and np.array_equal(previous, previous_before)
        dense_W = sp.csr_array(W).toarray()
        expected = a * (dense_W @ Z.reshape(n, -1)).reshape(Z.shape) + b * previous
        magnitude = np.abs(a) * (np.abs(dense_W) @ np.abs(Z).reshape(n, -1)).reshape(Z.shape) \
            + np.abs(b * previous)
        assert np.all(np.abs(out - expected) <= 1e-15 * magnitude), label
        # the dense backend computes the same combination (its product may round differently)
        dense = MixingOperator(W, backend="dense").two_tap(Z, np.empty(Z.shape), a, previous, b)
        assert np.allclose(dense, out, rtol=1e-13, atol=1e-13)


def test_non_finite_entries_spread_only_along_the_matrix() -> None:
    """A NaN or inf reaches exactly the rows that receive from its row (no padding terms 0 * NaN)."""
    n = 9
    W = instances.gossip_matrix(nx.path_graph(n), "metropolis")
    Z = np.ones((n, 2, 3))
    Z[4, 1, 2] = np.nan
    Z[0, 0, 0] = np.inf
    out = MixingOperator(W).apply(Z)
    assert np.array_equal(np.flatnonzero(np.isnan(out[:, 1, 2])), [3, 4, 5])
    assert np.array_equal(np.flatnonzero(np.isinf(out[:, 0, 0])), [0, 1])
    assert np.isfinite(np.delete(out.reshape(n, -1), [2 + 3, 0], axis=1)).all()


def test_attributes_and_bad_input() -> None:
    W = instances.gossip_matrix(nx.cycle_graph(5), "metropolis")
    op = MixingOperator(W, name="W")
    assert (op.n, op.name, op.backend, op.links) == (5, "W", "sparse", 10)
    assert sp.issparse(op.matrix)
    assert isinstance(MixingOperator(W, backend="dense").matrix, np.ndarray)
    with pytest.raises(ValueError, match="backend"):
        MixingOperator(W, backend="gpu")
    with pytest.raises(ValueError, match="square"):
        MixingOperator(np.ones((2, 3)))
    with pytest.raises(ValueError, match="n=5"):
        op.apply(np.ones((4, 3)))


# --------------------------------------------------------------------------------------------------------
# 2. a configuration gone NaN does not disturb the others


def _run(name: str, steps: list[float], record_every: int,
         nan_since: dict[int, int] | None = None) -> list[Any]:
    problem = DiagonalQuadratic(6, 3, seed=4)

    def watch(t: int, state: Any, ctx: Any) -> None:
        if nan_since is not None:
            for j in np.flatnonzero(np.isnan(state.x).any(axis=(0, 2))):
                nan_since.setdefault(int(j), t)

    W = instances.gossip_matrix(instances.topology("ring", 6), "metropolis")
    return algorithms.run_batch(name, problem, W, step_sizes=steps, iterations=3000, tol=1e-6,
                                record_every=record_every, callback=watch)


@pytest.mark.parametrize("name", ["detag", "dsgt"])
@pytest.mark.parametrize("record_every", [7, 10**6])
def test_a_nan_configuration_leaves_the_others_unchanged(name: str, record_every: int) -> None:
    steps = [1e6, 0.02, 0.1]  # the huge step overflows to inf and then NaN
    nan_since: dict[int, int] = {}
    batch = _run(name, steps, record_every, nan_since)
    wild = batch[0]
    assert wild.diverged and wild.t_eps is None
    # its divergence is recorded once, at the iteration where it diverges alone, and never overwritten
    (wild_alone,) = _run(name, steps[:1], record_every)
    assert wild.iterations == wild_alone.iterations < 20 and wild.counters == wild_alone.counters
    assert np.array_equal(wild.x_hat, wild_alone.x_hat, equal_nan=True)
    assert wild.grad_norms == wild_alone.grad_norms and wild.checkpoints == wild_alone.checkpoints
    # the scenario happened: the wild configuration holds NaN while another one still runs
    assert 0 in nan_since and nan_since[0] < max(r.iterations for r in batch[1:])
    assert batch[1].t_eps is not None
    for result, step in zip(batch[1:], steps[1:], strict=True):
        (alone,) = _run(name, [step], record_every)
        assert (result.t_eps, result.diverged, result.iterations) == (alone.t_eps, alone.diverged,
                                                                       alone.iterations)
        assert np.array_equal(result.x_hat, alone.x_hat)
        assert result.checkpoints == alone.checkpoints and result.grad_norms == alone.grad_norms
        assert result.counters == alone.counters
