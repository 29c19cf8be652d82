"""The optimized kernels agree with their plain references: the compressed zero-chain gradient with the dense
one (every value, NaN/inf included), the blocked sparse gossip product and ``MixingOperator.two_tap`` with
``W @ Z`` and ``a * (W @ Z) + b * previous``, and a batch with a configuration gone NaN with the solo runs
of the others (same T_eps, same bits, no evaluations forced by the stopped NaN configuration)."""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp
from test_algorithms_fixtures import DiagonalQuadratic

import algorithms
import instances
from algorithms.engine import _BLOCK_ENTRIES, MixingOperator
from instances.zero_chain import ZeroChainFunctions

# the module itself (``instances.zero_chain`` is also the name of the re-exported constructor)
zc = importlib.import_module("instances.zero_chain")

# --------------------------------------------------------------------------------------------------------
# 1. the compressed zero-chain gradient


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
@pytest.mark.parametrize("kind", ["plain", "weighted"])
@pytest.mark.parametrize("T", [6, 40])
@pytest.mark.parametrize("rows", [1, 5, 40, 64, 300])
@pytest.mark.parametrize("non_finite", [False, True])
def test_compressed_kernel_equals_the_dense_kernel(kind: str, T: int, rows: int, non_finite: bool) -> None:
    rng = np.random.default_rng([T, rows, non_finite, kind == "weighted"])
    f = _functions(kind, T, 4, rng)
    X = _chain_points(rng, (rows, T), f.scale)
    if non_finite and rows >= 4:
        X = _with_non_finite(rng, X)
    for m in sorted({1, 2, T // 2, T}):
        y = np.ascontiguousarray(X[:, :m]).reshape(-1)
        # per_worker: None is the global f; rows // 4 splits the rows over the 4 workers' weights
        for per_worker in ([None, rows // 4] if rows % 4 == 0 else [None]):
            ws = f._workspace(rows, m, per_worker)
            dense = f._grad_flat(y, ws)
            compressed = f._grad_compressed(y, ws)
            assert np.array_equal(compressed, dense, equal_nan=True), (m, per_worker)
            assert np.array_equal(np.isnan(compressed), np.isnan(dense))
    if non_finite and rows >= 4:
        assert not np.all(np.isfinite(dense))  # the non-finite rows reached the kernels


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("batch", [1, 3, 16, 70])
@pytest.mark.parametrize("non_finite", [False, True])
def test_grad_is_the_same_on_both_sides_of_the_threshold(batch: int, non_finite: bool,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """grad/full_grad through the public path: forcing either kernel for every size gives the same values,
    and the default dispatch (by ``_COMPRESS_MIN_SIZE`` entries) agrees with both."""
    n, T = 4, 40
    rng = np.random.default_rng([batch, non_finite])
    f = _functions("weighted", T, n, rng)
    X = _chain_points(rng, (n, batch, T), f.scale)
    if non_finite:
        X = _with_non_finite(rng, X)
    x = X[0]

    def both() -> tuple[np.ndarray, np.ndarray]:
        return f.grad(X), f.full_grad(x)

    threshold = zc._COMPRESS_MIN_SIZE
    # rows x active columns of the kernel calls of grad and full_grad: batch 1 stays below the threshold,
    # batches from 16 on cross it in both
    entries = np.array([n * batch * f._prefix(X, None), batch * f._prefix(x, None)])
    assert np.all(entries < threshold) if batch == 1 else True
    assert np.all(entries >= threshold) if batch >= 16 else True
    default = both()
    monkeypatch.setattr(zc, "_COMPRESS_MIN_SIZE", 0)
    compressed = both()
    monkeypatch.setattr(zc, "_COMPRESS_MIN_SIZE", np.iinfo(np.int64).max)
    dense = both()
    for a, b, c in zip(default, compressed, dense, strict=True):
        assert np.array_equal(b, c, equal_nan=True)
        assert np.array_equal(a, c, equal_nan=True)
        assert np.array_equal(np.isnan(b), np.isnan(c))
    assert np.any(dense[0] != 0.0)  # not a vacuous comparison of zeros


# --------------------------------------------------------------------------------------------------------
# 2. the blocked gossip product and the two-tap combination


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


# (n, state shape after the worker axis): widths above _BLOCK_ENTRIES (one row per block), a width that
# splits the rows into uneven blocks, and small widths that take the single-call path
SHAPES = [(6, (3, 25_000)), (5, (70_001,)), (7, (2, 10_000)), (6, (2, 5)), (9, (1, 1)), (4, (3,))]


@pytest.mark.parametrize(("n", "tail"), SHAPES)
def test_blocked_apply_equals_the_sparse_product(n: int, tail: tuple[int, ...]) -> None:
    op, W = _ring_operator(n)
    rng = np.random.default_rng([n, *tail])
    Z = rng.standard_normal((n, *tail))
    expected = _reference_product(W, Z)
    assert np.array_equal(op.apply(Z), expected)
    out = np.full(Z.shape, np.nan)  # stale contents must be overwritten, never accumulated
    assert op.apply(Z, out) is out and np.array_equal(out, expected)
    _assert_close_to_dense(W, Z, out)
    # a strided (non-contiguous) input gives the same product
    wide = np.empty((n, *tail[:-1], 2 * tail[-1]))
    wide[..., ::2] = Z
    assert np.array_equal(op.apply(wide[..., ::2]), expected)


@pytest.mark.parametrize(("n", "tail"), SHAPES)
def test_two_tap_equals_a_times_WZ_plus_b_times_previous(n: int, tail: tuple[int, ...]) -> None:
    op, W = _ring_operator(n)
    rng = np.random.default_rng([n, *tail, 1])
    Z = rng.standard_normal((n, *tail))
    previous = rng.standard_normal(Z.shape)
    coefficient_shape = (1, tail[0]) + (1,) * (len(tail) - 1) if len(tail) > 1 else (1,)
    a = rng.uniform(0.5, 2.5, coefficient_shape)
    b = rng.uniform(-1.5, 0.0, coefficient_shape)
    out, scratch = np.full(Z.shape, np.nan), np.full(Z.shape, np.inf)
    Z_before, previous_before = Z.copy(), previous.copy()
    result = op.two_tap(Z, out, a, previous, b, scratch)
    assert result is out
    product = _reference_product(W, Z)
    # the same floating-point operations as apply, *= a, + previous * b: the same bits
    assert np.array_equal(out, product * a + previous * b)
    assert np.array_equal(Z, Z_before) and np.array_equal(previous, previous_before)
    expected = a * (W.toarray() @ Z.reshape(n, -1)).reshape(Z.shape) + b * previous
    magnitude = np.abs(a) * (np.abs(W.toarray()) @ np.abs(Z).reshape(n, -1)).reshape(Z.shape) \
        + np.abs(b * previous)
    assert np.all(np.abs(out - expected) <= 1e-15 * magnitude)


def test_the_shapes_cover_blocked_and_single_call_paths() -> None:
    widths = {n: int(np.prod(tail)) for n, tail in SHAPES}
    rows = [max(1, _BLOCK_ENTRIES // w) for w in widths.values()]
    assert any(w > _BLOCK_ENTRIES for w in widths.values())
    assert any(1 < r < n and n % r for r, n in zip(rows, widths, strict=True))  # uneven blocks
    assert any(r >= n for r, n in zip(rows, widths, strict=True))  # one call


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
