"""Gossip products X <- M X on the worker axis: the engine's private execution of a `Gossip` value
(``instances.Gossip``; `mixing_for`). Users meet the value, never these classes.

`MixingOperator` multiplies an (n, ...) state, viewed as (n, width), by an n x n matrix M (rows receive,
columns send) with scipy.sparse's public CSR product, which sums each output entry row by row in the order of
the row's stored columns, ``w_0 z_0 + w_1 z_1 + ...`` from +0.0, whatever the width: a configuration gets the
same bits alone and inside a batch (tests/algorithms/test_mixing.py). The two-tap round ``a (M Z) + b P`` is
computed per entry as ``(M Z) * a + P * b``. ``backend="dense"`` is a BLAS product: faster for small dense M,
equal across batch sizes only to rounding.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from decbounds.instances.gossip import Gossip, GossipMatrix, as_csr
from decbounds.instances.matrices import MatrixLike
from decbounds.instances.schedules import GossipSchedule

__all__ = ["BLOCK_BYTES", "GOSSIP_BACKENDS", "SHORT_ROW", "MixingOperator", "ScheduledMixing", "mixing_for"]

#: A per-configuration coefficient of the two-tap round: a number, or an array broadcast against the state.
Coefficient = float | np.ndarray

GOSSIP_BACKENDS: tuple[str, ...] = ("sparse", "dense")

# A wide state is mixed block by block of rows of about this many bytes, so that the two-tap combination
# meets each block while it is cached (docs/benchmarks.md: 1 MiB, the fastest size tried).
BLOCK_BYTES = 1 << 20
# Per-configuration coefficients are repeated along the last axis when it is shorter than this (`_repeated`).
SHORT_ROW = 64


class MixingOperator:
    """X <- M X on the worker axis of an (n, ...) array: rows of M receive, columns send (docs/theory.md
    §1.6, and §7.1 for the two-tap round of accelerated gossip).

    Parameters
    ----------
    M : GossipMatrix, numpy.ndarray or scipy.sparse matrix
        The n x n matrix (W, SGP's push matrix, or a rule's own ``ctx.operator`` matrix).
    backend : {"sparse", "dense"}
        scipy's CSR product (the same bits for any width) or a BLAS product.
    name : str, default "W"
        The matrix's name in error messages.

    Examples
    --------
    >>> W = MixingOperator(np.array([[0.5, 0.5], [0.5, 0.5]]))
    >>> W.apply(np.array([[1.0, 2.0], [3.0, 4.0]])), W.links
    (array([[2., 3.],
           [2., 3.]]), 2)
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

    def at(self, t: int) -> MixingOperator:
        """The operator of round t: itself (`ScheduledMixing` gives W_t's).

        Parameters
        ----------
        t : int
            The iteration (ignored).

        Returns
        -------
        MixingOperator
        """
        return self

    def stacked(self, m: int) -> MixingOperator:
        """The operator of diag(M, ..., M), m blocks: M on m arrays stacked as one (m n, ...) array, each
        entry with the bits of M applied to its own array (the same terms in the same CSR order).

        Parameters
        ----------
        m : int
            The arrays stacked, >= 1.

        Returns
        -------
        MixingOperator
        """
        operator = self._stacks.get(m)
        if operator is None:
            blocks = sp.block_diag([self._csr] * m, format="csr")
            operator = self._stacks[m] = MixingOperator(blocks, backend=self.backend, name=self.name)
        return operator

    def apply(self, Z: np.ndarray, out: np.ndarray | None = None,
              add: np.ndarray | None = None) -> np.ndarray:
        """M Z (+ ``add``: the bits of the product then ``+ add``), into ``out`` when given (it may be Z).

        Parameters
        ----------
        Z : numpy.ndarray, shape (n, ...) or (m n, ...)
            The state, worker axis first; m arrays stacked are each mixed on their own (`stacked`).
        out : numpy.ndarray, optional
            Receives the result.
        add : numpy.ndarray, optional
            Added to the product, Z's shape.

        Returns
        -------
        numpy.ndarray
        """
        return self._run(Z, out, None, add, None)

    def two_tap(self, Z: np.ndarray, out: np.ndarray, a: Coefficient, previous: np.ndarray,
                b: Coefficient) -> np.ndarray:
        """out <- a (M Z) + b previous, each entry ``(M Z) * a + previous * b`` (docs/theory.md (G1)).

        Parameters
        ----------
        Z, previous : numpy.ndarray, shape (n, ...)
            The current and the previous state.
        out : numpy.ndarray
            Receives the result (not ``previous``).
        a, b : float or numpy.ndarray
            The taps, broadcast against Z.

        Returns
        -------
        numpy.ndarray
            ``out``.
        """
        return self._run(Z, out, a, previous, b)

    def _run(self, Z: np.ndarray, out: np.ndarray | None, a: Any, previous: np.ndarray | None,
             b: Any) -> np.ndarray:
        """M Z, then ``* a`` (a not None), then ``+ previous * b`` (b None: ``+ previous``), into ``out``."""
        n = self.n
        if Z.ndim < 1 or Z.shape[0] != n:
            if Z.ndim >= 1 and n and Z.shape[0] > n and Z.shape[0] % n == 0:  # m arrays stacked: diag(M, ...)
                m = Z.shape[0] // n
                return (self._stacks.get(m) or self.stacked(m))._run(Z, out, a, previous, b)
            raise ValueError(f"{self.name}: the state's first axis must have length n={n} (or a multiple: "
                             f"arrays stacked); got shape {Z.shape}")
        if self.backend == "sparse" and 8 * Z.size > BLOCK_BYTES:
            return self._blocked(Z, out, a, previous, b)
        product: np.ndarray = self._product(Z.reshape(n, -1)).reshape(Z.shape)  # a new array
        target = product if out is None else out
        if a is not None:  # (`_repeated` only for an array of many configurations)
            a = _repeated(a, Z.shape) if type(a) is np.ndarray and a.size >= 8 else a
            product = np.multiply(product, a, out=target)
        if previous is not None:
            if b is not None:
                b = _repeated(b, Z.shape) if type(b) is np.ndarray and b.size >= 8 else b
                previous = np.multiply(previous, b)
            np.add(product, previous, out=target)
        elif product is not target:
            np.copyto(target, product)
        return target

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
            block = products[index](flat).reshape(dest.shape)
            if a is not None:
                block = np.multiply(block, a[part] if np.ndim(a) == Z.ndim and np.shape(a)[0] > 1 else a,
                                    out=dest)
            if previous is not None:
                np.add(block, previous[part] if b is None else np.multiply(
                    previous[part], b[part] if np.ndim(b) == Z.ndim and np.shape(b)[0] > 1 else b), out=dest)
            elif block is not dest:
                dest[...] = block
        if out is not None and target is not out:
            out[...] = target
            return out
        return target


class ScheduledMixing:
    """The operators of a gossip schedule: ``at(t)`` is W_t's `MixingOperator`, built once per round of a
    period (a generated schedule: once per round, the last one kept).

    Parameters
    ----------
    schedule : instances.GossipSchedule
        The schedule.
    backend : {"sparse", "dense"}
        As `MixingOperator`.
    name : str, default "W"
        The matrices' name in error messages (round t is ``{name}_t``)."""

    def __init__(self, schedule: GossipSchedule, *, backend: str = "sparse", name: str = "W") -> None:
        self.schedule, self.n, self.backend, self.name = schedule, int(schedule.n), backend, name
        self._operators: dict[int, MixingOperator] = {}
        self._last: tuple[int, MixingOperator] | None = None

    def at(self, t: int) -> MixingOperator:
        """The `MixingOperator` of W_t.

        Parameters
        ----------
        t : int
            The iteration (from 0).

        Returns
        -------
        MixingOperator
        """
        period = self.schedule.period
        if period is not None:
            operator = self._operators.get(t % period)
            if operator is None:
                operator = self._operators[t % period] = MixingOperator(
                    self.schedule.matrix(t % period), backend=self.backend, name=f"{self.name}_{t % period}")
            return operator
        if self._last is None or self._last[0] != t:
            self._last = (t, MixingOperator(self.schedule.matrix(t), backend=self.backend,
                                            name=f"{self.name}_{t}"))
        return self._last[1]


def mixing_for(W: Gossip, *, backend: str = "sparse") -> MixingOperator | ScheduledMixing:
    """The engine's execution of the gossip value W: the `MixingOperator` of a `GossipMatrix` or the
    `ScheduledMixing` of a ``GossipSchedule``; ``at(t)`` of either is round t's operator.

    Parameters
    ----------
    W : instances.Gossip
        The checked value (``algorithms.step_rule.Channel.gossip``).
    backend : {"sparse", "dense"}
        As `MixingOperator`.

    Returns
    -------
    MixingOperator or ScheduledMixing"""
    if isinstance(W, GossipSchedule):
        return ScheduledMixing(W, backend=backend, name="W")
    if isinstance(W, GossipMatrix):
        return MixingOperator(W.matrix, backend=backend, name="W")
    raise TypeError(f"W must be a GossipMatrix or a GossipSchedule; got {type(W).__name__}")


def _repeated(c: Any, shape: tuple[int, ...]) -> Any:
    """A per-configuration coefficient (1, k, 1, ...) repeated to (1, k, d, ...) when the rows are short:
    numpy multiplies by a (1, k, 1) array in inner loops of length d, slow for a large batch of small d."""
    if (c.shape[1:] == shape[1:] or c.ndim != len(shape) or c.ndim < 3 or c.shape[0] != 1
            or shape[-1] >= SHORT_ROW):
        return c
    full = np.empty((1, *shape[1:]))
    np.copyto(full, c)
    return full
