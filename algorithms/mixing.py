"""Gossip products X <- M X on the worker axis, in numpy and scipy only.

``MixingOperator`` multiplies an (n, ...) state by an n x n matrix M (rows receive, columns send): the state
is viewed as (n, width) and each output row is a weighted sum of input rows. The engine's states are
(n, k, d) with k configurations side by side, so one product serves the whole batch.

Bits. Every output entry is summed in CSR order, ``w_0 z_0 + w_1 z_1 + ...`` over the row's stored columns
in increasing order, the order of scipy's CSR x dense product, and nothing in that sum depends on the
number of columns: a configuration gets the same bits alone and inside a batch (tests/test_mixing.py).
The two-tap round ``a (M Z) + b P`` is computed per entry as ``(M Z) * a + P * b``.

How (measured in benchmarks/bench_engine.py): a banded or circulant M (rings, paths, tori's rows ...) is
applied by diagonals: for each offset o = column - row, in increasing order, the rows holding that offset
get ``w[:, None] * Z[rows + o]`` added, where ``Z[rows + o]`` is a slice (a view, no gather). That is the
CSR order per row, and every numpy call is vectorized. Wide states are processed in blocks of rows small
enough to stay in the L2 cache, so the terms of a row and the two-tap combination meet the row while it is
cached. Any other M goes through scipy's CSR kernel (``csr_matvecs``, a scalar loop per row, the order
above). ``backend="dense"`` uses a BLAS matrix product instead: faster for small dense M, but BLAS may sum
in a different order for a different number of columns, so batched runs then agree with single runs only
to rounding.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import scipy.sparse as sp

from instances.gossip import as_csr

try:  # scipy's CSR x dense kernel, writing into a given output (the public ``@`` allocates a new array)
    from scipy.sparse._sparsetools import csr_matvecs as _csr_matvecs
except ImportError:  # pragma: no cover - a future scipy without the private module: the public product
    _csr_matvecs = None

GOSSIP_BACKENDS: tuple[str, ...] = ("sparse", "dense")

# Bytes of one block of output rows (and of each array read beside it): small enough that the block, its
# source rows and the two-tap's previous rows stay in a 1 MiB L2 cache together.
BLOCK_BYTES = 1 << 17
# A matrix is applied by diagonals when that takes at most this many numpy calls per (block of) rows;
# beyond it (scattered, random graphs) scipy's kernel wins.
MAX_DIAGONAL_CALLS = 24


class MixingOperator:
    """X <- M @ X on the worker axis of an (n, ...) array: rows of M are receivers, columns senders.

    >>> import numpy as np
    >>> W = MixingOperator(np.array([[0.5, 0.5], [0.5, 0.5]]))
    >>> W.apply(np.array([[1.0, 2.0], [3.0, 4.0]]))
    array([[2., 3.],
           [2., 3.]])
    """

    def __init__(self, M: Any, *, backend: str = "sparse", name: str = "W") -> None:
        if backend not in GOSSIP_BACKENDS:
            raise ValueError(f"backend must be one of {GOSSIP_BACKENDS}; got backend={backend!r}")
        csr = as_csr(M, name)
        csr.sum_duplicates()  # also sorts each row's columns: the CSR order of the sums
        self.n = int(csr.shape[0])
        self.name = name
        self.backend = backend
        coo = csr.tocoo()
        # directed off-diagonal links: the messages one round puts on the wire per array
        self.links = int(np.count_nonzero((coo.row != coo.col) & (coo.data != 0)))
        self.matrix: Any = csr.toarray() if backend == "dense" else csr
        self._runs = _diagonal_runs(csr)
        calls = sum(1 if first else 2 for first, *_ in self._runs)
        self._by_diagonals = calls <= MAX_DIAGONAL_CALLS
        self._scratch = threading.local()

    # -- the product ---------------------------------------------------------------------------------------
    def apply(self, Z: np.ndarray, out: np.ndarray | None = None,
              add: np.ndarray | None = None) -> np.ndarray:
        """M @ Z on axis 0, plus ``add`` (Z's shape) when given, with the bits of the product then ``+= add``;
        ``out`` (Z's shape, not Z or add) receives the result when given."""
        return self._run(Z, out, None, add, None)

    def two_tap(self, Z: np.ndarray, out: np.ndarray, a: Any, previous: np.ndarray, b: Any) -> np.ndarray:
        """out <- a * (M @ Z) + b * previous, each entry computed as ``(M Z) * a + previous * b`` (the bits of
        ``apply`` then ``out *= a``, ``out += previous * b``); a and b broadcast against Z the numpy way.
        Z, out and previous must be distinct arrays."""
        return self._run(Z, out, a, previous, b)

    def _run(self, Z: np.ndarray, out: np.ndarray | None, a: Any, previous: np.ndarray | None,
             b: Any) -> np.ndarray:
        """out <- M Z, then ``*= a`` when a is not None, then ``+= previous * b`` (b None: ``+= previous``)
        when previous is given, block by block of rows."""
        Z = np.asarray(Z, dtype=float)
        if Z.ndim < 1 or Z.shape[0] != self.n:
            raise ValueError(f"{self.name}: the state's first axis must have length n={self.n}; "
                             f"got shape {Z.shape}")
        if not Z.flags.c_contiguous:
            Z = np.ascontiguousarray(Z)
        usable = out is not None and out.flags.c_contiguous and out.shape == Z.shape
        target = out if usable else np.empty(Z.shape)
        width = Z.size // self.n if self.n else 0
        source, result = Z.reshape(self.n, width), target.reshape(self.n, width)
        if self.backend == "dense":
            np.matmul(self.matrix, source, out=result)
            self._combine(target, slice(None), a, previous, b)
        elif self._by_diagonals:
            rows = max(1, BLOCK_BYTES // (8 * max(width, 1)))
            scratch = self._buffer(min(rows, self.n) * width)
            for start in range(0, self.n, rows):
                stop = min(start + rows, self.n)
                self._diagonals(source, result, start, stop, scratch)
                self._combine(target, slice(start, stop), a, previous, b)
        else:
            _csr_product(self.matrix, source, result)
            self._combine(target, slice(None), a, previous, b)
        if out is None or out is target:
            return target
        out[...] = target
        return out

    def _diagonals(self, source: np.ndarray, result: np.ndarray, start: int, stop: int,
                   scratch: np.ndarray) -> None:
        """result[start:stop] <- rows start..stop-1 of M source, summed diagonal by diagonal (CSR order)."""
        width = source.shape[1]
        for first, run_lo, run_hi, offset, weights in self._runs:
            lo, hi = max(run_lo, start), min(run_hi, stop)
            if lo >= hi:
                continue
            if weights is None:  # rows that receive nothing
                result[lo:hi] = 0.0
                continue
            w = weights[lo - run_lo : hi - run_lo]
            rows = source[lo + offset : hi + offset]
            if first:
                np.multiply(rows, w, out=result[lo:hi])
            else:
                term = scratch[: (hi - lo) * width].reshape(hi - lo, width)
                np.multiply(rows, w, out=term)
                np.add(result[lo:hi], term, out=result[lo:hi])

    @staticmethod
    def _combine(target: np.ndarray, rows: slice, a: Any, previous: np.ndarray | None, b: Any) -> None:
        """target[rows] *= a, then += previous[rows] * b (or += previous[rows] when b is None)."""
        if a is not None:
            block = target[rows]
            block *= a
        if previous is not None:
            block = target[rows]
            if b is None:
                block += previous[rows]
            else:
                block += np.multiply(previous[rows], b)

    def _buffer(self, size: int) -> np.ndarray:
        """A per-thread scratch array of at least ``size`` floats (numpy releases the GIL: threads that share
        an operator must not share its scratch)."""
        buffer = getattr(self._scratch, "buffer", None)
        if buffer is None or buffer.size < size:
            buffer = self._scratch.buffer = np.empty(size)
        return buffer


def _diagonal_runs(csr: sp.csr_array) -> list[tuple[bool, int, int, int, np.ndarray | None]]:
    """M's stored entries grouped by offset o = column - row in increasing order (per row, the CSR order),
    each offset's rows split into maximal runs of consecutive rows that all hold it and for which it is, or
    is not, the row's first term: (first, lo, hi, o, weights (hi - lo, 1)). Rows without entries come
    last as runs (True, lo, hi, 0, None): they are set to zero."""
    counts = np.diff(csr.indptr)
    rows = np.repeat(np.arange(csr.shape[0]), counts)
    offsets = csr.indices - rows
    first = np.zeros(rows.size, dtype=bool)
    first[csr.indptr[:-1][counts > 0]] = True
    order = np.lexsort((rows, offsets))  # by offset, then row
    runs: list[tuple[bool, int, int, int, np.ndarray | None]] = []
    start = 0
    for i in range(1, order.size + 1):
        if i < order.size:
            p, q = order[i - 1], order[i]
            if offsets[p] == offsets[q] and rows[q] == rows[p] + 1 and first[q] == first[p]:
                continue
        chosen = order[start:i]
        lo = int(rows[chosen[0]])
        runs.append((bool(first[chosen[0]]), lo, lo + chosen.size, int(offsets[chosen[0]]),
                     csr.data[chosen].reshape(-1, 1).copy()))
        start = i
    empty = np.flatnonzero(counts == 0)
    for lo, hi in _consecutive_ranges(empty):
        runs.append((True, lo, hi, 0, None))
    return runs


def _consecutive_ranges(values: np.ndarray) -> list[tuple[int, int]]:
    """Sorted distinct integers as maximal ranges [lo, hi) of consecutive values."""
    breaks = np.flatnonzero(np.diff(values) != 1) + 1
    return [(int(part[0]), int(part[-1]) + 1) for part in np.split(values, breaks) if part.size]


def _csr_product(M: sp.csr_array, source: np.ndarray, result: np.ndarray) -> None:
    """result <- M source (both (n, width) C-contiguous) with scipy's CSR kernel, in CSR order per entry."""
    if _csr_matvecs is None:  # pragma: no cover
        result[...] = M @ source
        return
    result.fill(0.0)  # the kernel accumulates into its output
    n, width = source.shape
    _csr_matvecs(n, n, width, M.indptr, M.indices, M.data, source.reshape(-1), result.reshape(-1))
