"""The compiled kernels agree with their plain references: the zero-chain gradient with the formula term by
term (and each point with its solo evaluation, NaN/inf included), the gossip product and
``MixingOperator.two_tap`` with ``W @ Z`` and ``a * (W @ Z) + b * previous`` bit for bit, and a batch with a
configuration gone NaN with the solo runs of the others (same T_eps, same bits, no evaluations forced by the
stopped NaN configuration)."""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp
from test_algorithms_fixtures import DiagonalQuadratic
from test_zero_chain import reference_grad

import algorithms
import instances
from algorithms.engine import MixingOperator
from algorithms.kernels import CHUNK, NARROW
from instances.zero_chain import ZeroChainFunctions

# the module itself (``instances.zero_chain`` is also the name of the re-exported constructor)
zc = importlib.import_module("instances.zero_chain")

# --------------------------------------------------------------------------------------------------------
# 1. the compiled zero-chain gradient


def _chain_points(rng: np.random.Generator, shape: tuple[int, ...], scale: float) -> np.ndarray:
    """Points of the given shape whose rows have random progress levels (0 = the zero row .. d), with entries
    spread over the regions of Psi: |x| well below, near and well above scale / 2, including the v_floor
    boundary where Psi underflows, and some huge finite values."""
    d = shape[-1]
    X = rng.uniform(-2.5, 2.5, shape) * scale
    special = scale * np.array([0.5, 0.5 + 5e-4, 0.5 + 5e-4 * (1 + 1e-12), 0.518, 0.52, 1.0, 3.0, 1e160])
    picks = rng.random(shape) < 0.2
    X[picks] = rng.choice(special, picks.sum()) * rng.choice([-1.0, 1.0], picks.sum())
    X[rng.random(shape) < 0.1] = 0.0  # zeros inside the active prefix
    levels = rng.integers(0, d + 1, shape[:-1])
    X[np.arange(d) >= levels[..., None]] = 0.0
    return X


def _with_non_finite(rng: np.random.Generator, X: np.ndarray) -> np.ndarray:
    """X with NaN, +inf and -inf written into a few rows, inside their active prefix."""
    X = X.copy()
    rows = X.reshape(-1, X.shape[-1])
    for value, row in zip((np.nan, np.inf, -np.inf, np.nan), rng.choice(len(rows), 4, replace=False),
                          strict=True):
        rows[row, rng.integers(0, max(1, X.shape[-1] // 2))] = value
    return X


def _functions(kind: str, T: int, n: int, rng: np.random.Generator) -> ZeroChainFunctions:
    if kind == "plain":
        return zc.zero_chain(T, n)
    first = rng.uniform(0.0, 2.0, n)
    links = rng.uniform(0.0, 2.0, (n, T - 1))
    return ZeroChainFunctions(T, n, scale=2.7, gain=0.3, first_weight=first / first.mean(),
                              link_weight=links / links.mean(axis=0))


# overflow and NaN warnings are expected on the huge and non-finite entries (the engine silences them too)
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("T", [1, 2, 6, 40])
@pytest.mark.parametrize("rows", [1, 5, 64, 300])
def test_compiled_gradient_matches_the_formula_term_by_term(T: int, rows: int) -> None:
    """The kernel evaluates Psi only on active links; the reference evaluates every term everywhere."""
    rng = np.random.default_rng([T, rows])
    f = zc.zero_chain(T, 1)
    X = _chain_points(rng, (1, rows, T), 1.0)
    G = f.grad(X)
    np.testing.assert_allclose(G, reference_grad(X), rtol=1e-13, atol=1e-300)
    np.testing.assert_allclose(f.full_grad(X[0]), G[0], rtol=0, atol=0)
    for width in range(T):  # the promise X[..., width:] == 0, kept by truncating X
        Y = X.copy()
        Y[..., width:] = 0.0
        np.testing.assert_array_equal(f.grad(Y, width=width), f.grad(Y))
    if T > 1 and rows >= 5:
        assert np.count_nonzero(G[..., 1:]) > rows // 5  # the links are exercised, not only the first term


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("kind", ["plain", "weighted"])
@pytest.mark.parametrize("T", [6, 40])
@pytest.mark.parametrize("batch", [3, 16, 70])
@pytest.mark.parametrize("non_finite", [False, True])
def test_each_point_gets_the_bits_it_gets_alone(kind: str, T: int, batch: int, non_finite: bool) -> None:
    """Rows never mix: a configuration's gradient inside a batch has the bits of its solo evaluation, NaN and
    inf rows included, and a NaN coordinate makes its point's gradient NaN (divergence detection)."""
    n = 4
    rng = np.random.default_rng([T, batch, non_finite, kind == "weighted"])
    f = _functions(kind, T, n, rng)
    X = _chain_points(rng, (n, batch, T), f.scale)
    if non_finite:
        X = _with_non_finite(rng, X)
    G, g = f.grad(X), f.full_grad(X[0])
    for j in range(batch):
        alone = f.grad(np.ascontiguousarray(X[:, j : j + 1]))
        assert np.array_equal(G[:, j : j + 1], alone, equal_nan=True), j
        assert np.array_equal(g[j], f.full_grad(X[0, j]), equal_nan=True), j
    has_nan = np.isnan(X).any(axis=-1)
    assert np.array_equal(np.isnan(G).any(axis=-1) & has_nan, has_nan)
    if non_finite:
        assert has_nan.any() and not np.isfinite(X).all()
        finite_rows = np.isfinite(X).all(axis=-1)
        assert np.isfinite(G[finite_rows]).all()


# --------------------------------------------------------------------------------------------------------
# 2. the compiled gossip product and the two-tap combination


def _ring_operator(n: int) -> tuple[MixingOperator, sp.csr_array]:
    W = instances.gossip_matrix(instances.topology("ring", n), "metropolis")
    return MixingOperator(W), sp.csr_array(W)


def _reference_product(W: sp.csr_array, Z: np.ndarray) -> np.ndarray:
    """scipy's public CSR product (the same summation order per entry whatever the width)."""
    return np.asarray(W @ np.ascontiguousarray(Z).reshape(Z.shape[0], -1)).reshape(Z.shape)


def _assert_close_to_dense(W: sp.csr_array, Z: np.ndarray, product: np.ndarray) -> None:
    """|product - W Z| <= 1e-15 (|W| |Z|) entrywise against a dense numpy product (an independent order)."""
    flat = Z.reshape(Z.shape[0], -1)
    dense = W.toarray() @ flat
    bound = 1e-15 * (np.abs(W.toarray()) @ np.abs(flat))
    assert np.all(np.abs(product.reshape(flat.shape) - dense) <= bound)


# (n, state shape after the worker axis): rows wider than CHUNK with a partial last chunk, configuration
# segments that straddle chunk boundaries, and narrow states of one chunk
SHAPES = [(6, (3, 25_000)), (5, (70_001,)), (7, (2, 10_000)), (6, (2, 5)), (9, (1, 1)), (4, (3,)),
          (5, (3, CHUNK + 7)), (8, (4, 75))]


def _random_sparse(n: int, rng: np.random.Generator) -> sp.csr_array:
    """A non-symmetric M with negative weights, an empty row (nothing received) and unsorted input indices."""
    M = sp.random_array((n, n), density=0.75, rng=rng, format="lil")  # rows of 0 to n terms
    M[1, :] = 0.0
    M = sp.csr_array(M)
    M.data -= 0.5
    return M


@pytest.mark.parametrize(("n", "tail"), SHAPES)
def test_compiled_apply_equals_the_sparse_product(n: int, tail: tuple[int, ...]) -> None:
    op, W = _ring_operator(n)
    rng = np.random.default_rng([n, *tail])
    Z = rng.standard_normal((n, *tail))
    Z[0] = -0.0  # scipy's sums start from +0.0: -0.0 inputs give +0.0, and so must the kernel
    expected = _reference_product(W, Z)
    assert np.array_equal(op.apply(Z), expected)
    out = np.full(Z.shape, np.nan)  # stale contents must be overwritten, never accumulated
    assert op.apply(Z, out) is out and np.array_equal(out, expected)
    assert np.array_equal(np.signbit(out), np.signbit(expected))
    _assert_close_to_dense(W, Z, out)
    # a strided (non-contiguous) input and a strided output give the same product
    wide = np.empty((n, *tail[:-1], 2 * tail[-1]))
    wide[..., ::2] = Z
    assert np.array_equal(op.apply(wide[..., ::2]), expected)
    wide[...] = np.nan
    assert op.apply(Z, wide[..., 1::2]) is not None and np.array_equal(wide[..., 1::2], expected)
    # a general matrix: empty row, negative weights
    M = _random_sparse(n, rng)
    assert np.array_equal(MixingOperator(M).apply(Z), _reference_product(M, Z))


@pytest.mark.parametrize(("n", "tail"), SHAPES)
def test_apply_with_add_equals_the_product_then_plus_equals(n: int, tail: tuple[int, ...]) -> None:
    """W Z + V in one pass (DSGT's y-round) has the bits of the product followed by ``+= V``."""
    op, W = _ring_operator(n)
    rng = np.random.default_rng([n, *tail, 2])
    Z, V = rng.standard_normal((n, *tail)), rng.standard_normal((n, *tail))
    expected = _reference_product(W, Z)
    expected += V
    out = np.full(Z.shape, np.nan)
    assert op.apply(Z, out, add=V) is out and np.array_equal(out, expected)
    dense = MixingOperator(W, backend="dense").apply(Z, np.empty(Z.shape), add=V)
    assert np.allclose(dense, expected, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize(("n", "tail"), SHAPES)
@pytest.mark.parametrize("coefficients", ["per_configuration", "scalar_a", "scalars", "per_entry"])
def test_two_tap_equals_a_times_WZ_plus_b_times_previous(n: int, tail: tuple[int, ...],
                                                         coefficients: str) -> None:
    op, W = _ring_operator(n)
    rng = np.random.default_rng([n, *tail, 1])
    Z = rng.standard_normal((n, *tail))
    previous = rng.standard_normal(Z.shape)
    per_configuration = (1, tail[0]) + (1,) * (len(tail) - 1) if len(tail) > 1 else (1,)
    shapes = {"per_configuration": (per_configuration, per_configuration),
              "scalar_a": ((), per_configuration), "scalars": ((), ()),
              "per_entry": ((1, *tail), (1, *tail))}[coefficients]
    a = rng.uniform(0.5, 2.5, shapes[0])
    b = rng.uniform(-1.5, 0.0, shapes[1])
    out = np.full(Z.shape, np.nan)
    Z_before, previous_before = Z.copy(), previous.copy()
    result = op.two_tap(Z, out, a, previous, b)
    assert result is out
    product = _reference_product(W, Z)
    # the same floating-point operations as apply, *= a, + previous * b: the same bits
    assert np.array_equal(out, product * a + previous * b)
    assert np.array_equal(Z, Z_before) and np.array_equal(previous, previous_before)
    expected = a * (W.toarray() @ Z.reshape(n, -1)).reshape(Z.shape) + b * previous
    magnitude = np.abs(a) * (np.abs(W.toarray()) @ np.abs(Z).reshape(n, -1)).reshape(Z.shape) \
        + np.abs(b * previous)
    assert np.all(np.abs(out - expected) <= 1e-15 * magnitude)
    # the dense backend computes the same combination (its product may round differently)
    dense = MixingOperator(W, backend="dense").two_tap(Z, np.empty(Z.shape), a, previous, b)
    assert np.allclose(dense, out, rtol=1e-13, atol=1e-13)


def test_the_shapes_cover_chunk_boundaries() -> None:
    widths = [int(np.prod(tail)) for _, tail in SHAPES]
    segments = [tail[-1] if len(tail) > 1 else w for (_, tail), w in zip(SHAPES, widths, strict=True)]
    assert any(w > CHUNK and w % CHUNK for w in widths)  # a partial last chunk
    assert any(NARROW <= w < CHUNK for w in widths)  # a single chunk of multi-term passes
    assert any(w < NARROW for w in widths)  # one term per pass
    assert any(s % CHUNK and w > s for s, w in zip(segments, widths, strict=True))  # a straddling segment


# --------------------------------------------------------------------------------------------------------
# 3. a configuration gone NaN does not disturb the others


class _CountingQuadratic(DiagonalQuadratic):
    """DiagonalQuadratic that records every point at which the engine evaluates the global gradient."""

    def __init__(self) -> None:
        super().__init__(6, 3, seed=4)
        self.evaluated: list[np.ndarray] = []

    def full_grad(self, x: np.ndarray) -> np.ndarray:
        self.evaluated.append(np.array(x, copy=True))
        return super().full_grad(x)


def _run(name: str, steps: list[float], record_every: int,
         nan_since: dict[int, int] | None = None) -> tuple[list[Any], _CountingQuadratic]:
    problem = _CountingQuadratic()

    def watch(t: int, state: Any, ctx: Any) -> None:
        if nan_since is not None:
            for j in np.flatnonzero(np.isnan(state.x).any(axis=(0, 2))):
                nan_since.setdefault(int(j), t)

    W = instances.gossip_matrix(instances.topology("ring", 6), "metropolis")
    results = algorithms.run_batch(name, problem, W, step_sizes=steps, iterations=3000, tol=1e-6,
                                   record_every=record_every, callback=watch)
    return results, problem


@pytest.mark.parametrize("name", ["detag", "dsgt"])
@pytest.mark.parametrize("record_every", [7, 10**6])
def test_a_nan_configuration_leaves_the_others_unchanged(name: str, record_every: int) -> None:
    steps = [1e6, 0.02, 0.1]  # the huge step overflows to inf and then NaN
    nan_since: dict[int, int] = {}
    batch, problem = _run(name, steps, record_every, nan_since)
    wild = batch[0]
    assert wild.diverged and wild.t_eps is None
    # its divergence is recorded once, at the iteration where it diverges alone, and never overwritten
    (wild_alone,), _ = _run(name, steps[:1], record_every)
    assert wild.iterations == wild_alone.iterations < 20 and wild.counters == wild_alone.counters
    assert np.array_equal(wild.x_hat, wild_alone.x_hat, equal_nan=True)
    assert wild.grad_norms == wild_alone.grad_norms and wild.checkpoints == wild_alone.checkpoints
    # the scenario happened: the wild configuration holds NaN while another one still runs
    assert 0 in nan_since and nan_since[0] < max(r.iterations for r in batch[1:])
    assert batch[1].t_eps is not None
    for result, step in zip(batch[1:], steps[1:], strict=True):
        (alone,), _ = _run(name, [step], record_every)
        assert (result.t_eps, result.diverged, result.iterations) == (alone.t_eps, alone.diverged,
                                                                       alone.iterations)
        assert np.array_equal(result.x_hat, alone.x_hat)
        assert result.checkpoints == alone.checkpoints and result.grad_norms == alone.grad_norms
        assert result.counters == alone.counters
    if record_every == 10**6:
        # the stopped NaN configuration forces no evaluation: after it went NaN the batch evaluates about as
        # often as the configurations still running do alone, not at every iteration
        after_nan = sum(bool(np.isnan(x[0]).any()) for x in problem.evaluated)
        still_running = max(r.iterations for r in batch[1:]) - nan_since[0]
        solo_evaluations = sum(len(_run(name, [s], record_every)[1].evaluated) for s in steps[1:])
        assert after_nan <= solo_evaluations < still_running // 4
