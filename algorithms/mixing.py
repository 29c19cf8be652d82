"""Gossip products X <- M X on the worker axis, the engine's private execution of a gossip value: scipy's CSR
product sums each entry in the row's order whatever the width, so a configuration gets the same bits alone
and in a batch; ``backend="dense"`` (BLAS) only to rounding (docs/architecture.md, "Bits")."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from decbounds.instances.gossip import Gossip, GossipMatrix, as_csr
from decbounds.instances.matrices import MatrixLike
from decbounds.instances.schedules import GossipSchedule

__all__ = ["BLOCK_BYTES", "GOSSIP_BACKENDS", "SHORT_ROW", "MixingOperator"]

#: A per-configuration coefficient of the two-tap round: a number, or an array broadcast against the state.
Coefficient = float | np.ndarray

GOSSIP_BACKENDS: tuple[str, ...] = ("sparse", "dense")

# A wide state is mixed block by block of rows of about this many bytes, so that the two-tap combination
# meets each block while it is cached (docs/benchmarks.md: 1 MiB, the fastest size tried).
BLOCK_BYTES = 1 << 20
# Per-configuration coefficients are repeated along the last axis when it is shorter than this (`_repeated`).
SHORT_ROW = 64


class MixingOperator:
    """X <- M X on the worker axis of an (n, ...) array, rows receiving (docs/theory.md §1.6, §7.1).

    Parameters
    ----------
    M : GossipMatrix, numpy.ndarray or scipy.sparse matrix
        The n x n matrix.
    backend : {"sparse", "dense"}
        scipy's CSR product (the same bits for any width) or BLAS.
    name : str, default "W"
        The matrix's name in error messages.
    """

    def __init__(self, M: MatrixLike, *, backend: str = "sparse", name: str = "W") -> None:
        if backend not in GOSSIP_BACKENDS:
            raise ValueError(f"backend must be one of {GOSSIP_BACKENDS}; got backend={backend!r}")
        csr = as_csr(M, name)
        csr.sum_duplicates()  # also sorts each row's columns: the CSR order of the sums
        self.n, self.name, self.backend = int(csr.shape[0]), name, backend
        coo = csr.tocoo()
        # directed off-diagonal links: the messages one round puts on the wire per array
        self.links = int(np.count_nonzero((coo.row != coo.col) & (coo.data != 0)))
        self.matrix: Any = csr.toarray() if backend == "dense" else csr
        self._csr = csr
        # bound once: the ``*`` of scipy's spmatrix API is the CSR product with less dispatch than ``@``
        # (which first tests its operand for a scalar; docs/benchmarks.md)
        self._product = self.matrix.__matmul__ if backend == "dense" else sp.csr_matrix(csr).__mul__
        self._stacks: dict[int, MixingOperator] = {}
        self._blocks: dict[int, list[Any]] = {}  # rows per block -> the products of each block of rows

    def _stacked(self, m: int) -> MixingOperator:
        """The operator of diag(M, ..., M), m blocks: each stacked array gets the bits of its own product."""
        operator = self._stacks.get(m)
        if operator is None:
            blocks = sp.block_diag([self._csr] * m, format="csr")
            operator = self._stacks[m] = MixingOperator(blocks, backend=self.backend, name=self.name)
        return operator

    def apply(self, Z: np.ndarray, out: np.ndarray | None = None,
              add: np.ndarray | None = None) -> np.ndarray:
        """M Z (+ ``add``), into ``out`` when given (it may be Z).

        Parameters
        ----------
        Z : numpy.ndarray, shape (n, ...) or (m n, ...)
            The state, worker axis first (m stacked arrays each mixed on their own).
        out : numpy.ndarray, optional
        add : numpy.ndarray, optional
        """
        return self._run(Z, out, None, add, None)

    def two_tap(self, Z: np.ndarray, out: np.ndarray, a: Coefficient, previous: np.ndarray,
                b: Coefficient) -> np.ndarray:
        """out <- (M Z) * a + previous * b (docs/theory.md (G1)).

        Parameters
        ----------
        Z, previous : numpy.ndarray, shape (n, ...)
            The current and the previous state.
        out : numpy.ndarray
            Receives the result (not ``previous``).
        a, b : float or numpy.ndarray
        """
        return self._run(Z, out, a, previous, b)

    def _run(self, Z: np.ndarray, out: np.ndarray | None, a: Any, previous: np.ndarray | None,
             b: Any) -> np.ndarray:
        """M Z, then ``* a`` (a not None), then ``+ previous * b`` (b None: ``+ previous``), into ``out``."""
        n = self.n
        if Z.ndim < 1 or Z.shape[0] != n:
            if Z.ndim >= 1 and n and Z.shape[0] > n and Z.shape[0] % n == 0:  # m arrays stacked: diag(M, ...)
                m = Z.shape[0] // n
                return (self._stacks.get(m) or self._stacked(m))._run(Z, out, a, previous, b)
            raise ValueError(f"{self.name}: the state's first axis must have length n={n} (or a multiple: "
                             f"arrays stacked); got shape {Z.shape}")
        if self.backend == "sparse" and 8 * Z.size > BLOCK_BYTES:
            return self._blocked(Z, out, a, previous, b)
        product: np.ndarray = self._product(Z.reshape(n, -1)).reshape(Z.shape)  # a new array
        # (`_repeated` only for an array of many configurations)
        a = _repeated(a, Z.shape) if type(a) is np.ndarray and a.size >= 8 else a
        b = _repeated(b, Z.shape) if type(b) is np.ndarray and b.size >= 8 else b
        return _combine(product, product if out is None else out, a, previous, b)

    def _blocked(self, Z: np.ndarray, out: np.ndarray | None, a: Any, previous: np.ndarray | None,
                 b: Any) -> np.ndarray:
        """`_run` block by block of rows (`BLOCK_BYTES`): each block's product and combination in cache."""
        n, width = self.n, Z.size // self.n
        rows = max(1, BLOCK_BYTES // (8 * width))
        products = self._blocks.get(rows)
        if products is None:
            products = self._blocks[rows] = [sp.csr_matrix(self._csr[start : start + rows]).__mul__
                                             for start in range(0, n, rows)]
        free = out is not None and out.flags.c_contiguous and not np.may_share_memory(out, Z)
        target = out if out is not None and free else np.empty(Z.shape)
        flat = Z.reshape(n, width)
        for index, start in enumerate(range(0, n, rows)):
            part = slice(start, min(n, start + rows))
            dest = target[part]
            _combine(products[index](flat).reshape(dest.shape), dest, _rows(a, part, Z.ndim),
                     None if previous is None else previous[part], _rows(b, part, Z.ndim))
        if out is not None and target is not out:
            out[...] = target
            return out
        return target


class _ScheduledMixing:
    """The operators of a gossip schedule: ``at(t)`` is W_t's `MixingOperator`, built once per round."""

    def __init__(self, schedule: GossipSchedule, *, backend: str = "sparse", name: str = "W") -> None:
        self.schedule, self.n, self.backend, self.name = schedule, int(schedule.n), backend, name
        self._operators: dict[int, MixingOperator] = {}  # round (mod the period) -> its operator

    def at(self, t: int) -> MixingOperator:
        """The `MixingOperator` of W_t."""
        period = self.schedule.period
        key = t if period is None else t % period
        operator = self._operators.get(key)
        if operator is None:
            if period is None:  # a generated schedule: keep the last round's only
                self._operators.clear()
            operator = self._operators[key] = MixingOperator(self.schedule.matrix(key), backend=self.backend,
                                                             name=f"{self.name}_{key}")
        return operator


def _mixing_for(W: Gossip, *, backend: str = "sparse") -> MixingOperator | _ScheduledMixing:
    """The engine's execution of W: a `GossipMatrix`'s `MixingOperator`, a schedule's `_ScheduledMixing`."""
    if isinstance(W, GossipSchedule):
        return _ScheduledMixing(W, backend=backend, name="W")
    if isinstance(W, GossipMatrix):
        return MixingOperator(W.matrix, backend=backend, name="W")
    raise TypeError(f"W must be a GossipMatrix or a GossipSchedule; got {type(W).__name__}")


def _repeated(c: Any, shape: tuple[int, ...]) -> Any:
    """A coefficient (1, k, 1, ...) repeated to (1, k, d, ...) for short rows (numpy's inner loops run over
    d: slow for a large batch of small d)."""
    if (c.shape[1:] == shape[1:] or c.ndim != len(shape) or c.ndim < 3 or c.shape[0] != 1
            or shape[-1] >= SHORT_ROW):
        return c
    full = np.empty((1, *shape[1:]))
    np.copyto(full, c)
    return full


def _combine(product: np.ndarray, target: np.ndarray, a: Any, previous: np.ndarray | None,
             b: Any) -> np.ndarray:
    """target <- product * a + previous * b, per entry in that order (a, previous, b each optional)."""
    if a is not None:
        product = np.multiply(product, a, out=target)
    if previous is not None:
        np.add(product, previous if b is None else np.multiply(previous, b), out=target)
    elif product is not target:
        np.copyto(target, product)
    return target


def _rows(c: Any, part: slice, ndim: int) -> Any:
    """A block's rows of a coefficient that varies along the worker axis (else the coefficient itself)."""
    return c[part] if np.ndim(c) == ndim and np.shape(c)[0] > 1 else c
