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

__all__ = ["GOSSIP_BACKENDS", "SHORT_ROW", "MixingOperator", "ScheduledMixing", "mixing_for"]

#: A per-configuration coefficient of the two-tap round: a number, or an array broadcast against the state.
Coefficient = float | np.ndarray

GOSSIP_BACKENDS: tuple[str, ...] = ("sparse", "dense")

# Per-configuration coefficients are repeated along the last axis when it is shorter than this (`_repeated`).
SHORT_ROW = 64


class MixingOperator:
    """X <- M @ X on the worker axis of an (n, ...) array: rows of M are receivers, columns senders.

    Parameters
    ----------
    M : GossipMatrix, numpy.ndarray or scipy.sparse matrix
        The n x n matrix (a gossip matrix W, or SGP's push matrix, or a rule's own ``ctx.operator`` matrix).
    backend : {"sparse", "dense"}
        "sparse": scipy's CSR product, the same bits for any number of columns; "dense": a BLAS product.
    name : str, default "W"
        The matrix's name in error messages.

    Attributes
    ----------
    n : int
        Workers (rows of M).
    links : int
        Directed off-diagonal non-zeros: the messages one round puts on the wire per array.
    matrix : scipy.sparse.csr_array or numpy.ndarray
        M in the backend's form.

    Raises
    ------
    ValueError
        If ``backend`` is not one of `GOSSIP_BACKENDS`, or M is not a square finite matrix.

    References
    ----------
    docs/theory.md §1.6 (gossip) and §7.1 (the two-tap recursion of accelerated gossip).

    Examples
    --------
    >>> import numpy as np
    >>> W = MixingOperator(np.array([[0.5, 0.5], [0.5, 0.5]]))
    >>> W.apply(np.array([[1.0, 2.0], [3.0, 4.0]]))
    array([[2., 3.],
           [2., 3.]])
    >>> W.links
    2
    """

    def __init__(self, M: MatrixLike, *, backend: str = "sparse", name: str = "W") -> None:
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
        self._csr = csr
        self._stacks: dict[int, MixingOperator] = {}

    def at(self, t: int) -> MixingOperator:
        """The operator of round t: itself (a fixed M; `ScheduledMixing` returns W_t's).

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
        """The operator of diag(M, ..., M) (m blocks): M on each of m arrays (n, ...) stacked as one
        (m n, ...) array, in one product. Each output row sums the same terms in the same (CSR) order as M's
        row does, so every entry has the bits of M applied to its own array.

        Parameters
        ----------
        m : int
            The arrays stacked, >= 1.

        Returns
        -------
        MixingOperator
            Built once per m and kept.

        Examples
        --------
        >>> W = MixingOperator(np.full((2, 2), 0.5))
        >>> W.stacked(2).apply(np.array([[1.0], [3.0], [10.0], [20.0]])).ravel().tolist()
        [2.0, 2.0, 15.0, 15.0]
        """
        operator = self._stacks.get(m)
        if operator is None:
            blocks = sp.block_diag([self._csr] * m, format="csr")
            operator = self._stacks[m] = MixingOperator(blocks, backend=self.backend, name=self.name)
        return operator

    # -- the product ---------------------------------------------------------------------------------------
    def apply(self, Z: np.ndarray, out: np.ndarray | None = None,
              add: np.ndarray | None = None) -> np.ndarray:
        """M @ Z on axis 0, plus ``add`` (Z's shape) when given, with the bits of the product then ``+= add``;
        ``out`` (Z's shape, not Z or add) receives the result when given.

        Parameters
        ----------
        Z : numpy.ndarray, shape (n, ...)
            The state, worker axis first; (m n, ...) is m arrays stacked, each mixed on its own (`stacked`).
        out : numpy.ndarray, optional
            Receives the result (Z's shape; not Z or ``add``).
        add : numpy.ndarray, optional
            Added to the product (DSGT's ``+ G``), Z's shape.

        Returns
        -------
        numpy.ndarray
            ``out`` when given, else a new array.

        Raises
        ------
        ValueError
            If Z's first axis is not a multiple of n.

        Examples
        --------
        >>> W = MixingOperator(np.full((2, 2), 0.5))
        >>> W.apply(np.array([[1.0, 2.0], [3.0, 4.0]]), add=np.ones((2, 2)))
        array([[3., 4.],
               [3., 4.]])
        """
        return self._run(Z, out, None, add, None)

    def two_tap(self, Z: np.ndarray, out: np.ndarray, a: Coefficient, previous: np.ndarray,
                b: Coefficient) -> np.ndarray:
        """out <- a * (M @ Z) + b * previous, each entry computed as ``(M Z) * a + previous * b`` (the bits of
        ``apply`` then ``out *= a``, ``out += previous * b``); a and b broadcast against Z the numpy way.
        Z, out and previous must be distinct arrays.

        Parameters
        ----------
        Z, previous : numpy.ndarray, shape (n, ...)
            The current and the previous state.
        out : numpy.ndarray
            Receives the result, Z's shape.
        a, b : float or numpy.ndarray
            Coefficients, broadcast against Z (per configuration: shape (1, k, 1)).

        Returns
        -------
        numpy.ndarray
            ``out``.

        Raises
        ------
        ValueError
            If Z's first axis is not n.

        References
        ----------
        docs/theory.md (G1): accelerated gossip is ``(1 + eta) W Z - eta Z_prev``.

        Examples
        --------
        >>> W = MixingOperator(np.full((2, 2), 0.5))
        >>> Z = np.array([[1.0, 2.0], [3.0, 4.0]])
        >>> W.two_tap(Z, np.empty((2, 2)), 2.0, np.ones((2, 2)), -1.0)
        array([[3., 5.],
               [3., 5.]])
        """
        return self._run(Z, out, a, previous, b)

    def _run(self, Z: np.ndarray, out: np.ndarray | None, a: Any, previous: np.ndarray | None,
             b: Any) -> np.ndarray:
        """M Z, then ``*= a`` when a is not None, then ``+= previous * b`` (b None: ``+= previous``) when
        previous is given; into ``out`` when given."""
        n = self.n
        if Z.ndim < 1 or Z.shape[0] != n:
            if Z.ndim >= 1 and n and Z.shape[0] > n and Z.shape[0] % n == 0:  # m arrays stacked: diag(M, ...)
                return self.stacked(Z.shape[0] // n)._run(Z, out, a, previous, b)
            raise ValueError(f"{self.name}: the state's first axis must have length n={n} (or a multiple: "
                             f"arrays stacked); got shape {Z.shape}")
        target: np.ndarray = (self.matrix @ Z.reshape(n, -1)).reshape(Z.shape)
        if a is not None:
            target *= _repeated(a, Z.shape)
        if previous is not None:
            target += previous if b is None else np.multiply(previous, _repeated(b, Z.shape))
        if out is None:
            return target
        out[...] = target
        return out


class ScheduledMixing:
    """The operators of a gossip schedule: ``at(t)`` is the `MixingOperator` of W_t
    (``instances.GossipSchedule``), so that the engine gossips with W_t at iteration t. A periodic
    schedule's operators are built once per round of the period; a generated one's once per round (the
    engine asks for each t in increasing order; the last operator is kept for repeated asks).

    Parameters
    ----------
    schedule : instances.GossipSchedule
        The schedule.
    backend : {"sparse", "dense"}
        As `MixingOperator`.
    name : str, default "W"
        The matrices' name in error messages (round t is ``{name}_t``).

    Attributes
    ----------
    n : int
        Workers.
    schedule : instances.GossipSchedule

    Examples
    --------
    >>> from decbounds import instances
    >>> ops = ScheduledMixing(instances.rotating_ring(4))
    >>> [ops.at(t).links for t in range(3)]  # round 1 uses edges (1, 2) and (3, 0): 4 directed links
    [4, 4, 4]
    >>> ops.at(3).apply(np.array([[1.0], [0.0], [0.0], [0.0]])).ravel().tolist()
    [0.5, 0.0, 0.0, 0.5]
    """

    def __init__(self, schedule: GossipSchedule, *, backend: str = "sparse", name: str = "W") -> None:
        self.schedule = schedule
        self.n = int(schedule.n)
        self.backend = backend
        self.name = name
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
            key = t % period
            operator = self._operators.get(key)
            if operator is None:
                operator = MixingOperator(self.schedule.matrix(key), backend=self.backend,
                                          name=f"{self.name}_{key}")
                self._operators[key] = operator
            return operator
        if self._last is None or self._last[0] != t:
            matrix = self.schedule.matrix(t)
            self._last = (t, MixingOperator(matrix, backend=self.backend, name=f"{self.name}_{t}"))
        return self._last[1]


def mixing_for(W: Gossip, *, backend: str = "sparse") -> MixingOperator | ScheduledMixing:
    """The engine's execution of the gossip value W: a `MixingOperator` of a `GossipMatrix` (one product
    kernel for every round) or the `ScheduledMixing` of a ``GossipSchedule`` (W_t's operator in iteration
    t). ``at(t)`` of either is the operator of round t.

    Parameters
    ----------
    W : instances.Gossip
        The checked value (``algorithms.step_rule.Channel.gossip``).
    backend : {"sparse", "dense"}
        As `MixingOperator`.

    Returns
    -------
    MixingOperator or ScheduledMixing

    Raises
    ------
    TypeError
        If W is neither member of `Gossip`.

    Examples
    --------
    >>> from decbounds import instances
    >>> mixing_for(instances.gossip_matrix(instances.topology("ring", 4))).links
    8
    >>> type(mixing_for(instances.rotating_ring(4))).__name__
    'ScheduledMixing'
    """
    if isinstance(W, GossipSchedule):
        return ScheduledMixing(W, backend=backend, name="W")  # W_t in iteration t
    if isinstance(W, GossipMatrix):
        return MixingOperator(W.matrix, backend=backend, name="W")
    raise TypeError(f"W must be a GossipMatrix or a GossipSchedule; got {type(W).__name__}")


def _repeated(c: Any, shape: tuple[int, ...]) -> Any:
    """A per-configuration coefficient of shape (1, k, 1, ...) repeated to (1, k, d, ...) when the state's
    rows are short: numpy multiplies by a (1, k, 1) array in inner loops of length d, which on a batch of 96
    configurations of d = 6 costs several times the product itself. Long rows keep the broadcast."""
    if (type(c) is not np.ndarray or c.size < 8 or c.shape[1:] == shape[1:] or c.ndim != len(shape)
            or c.ndim < 3 or c.shape[0] != 1 or shape[-1] >= SHORT_ROW):
        return c  # few configurations (few short inner loops), long rows, or nothing to repeat
    full = np.empty((1, *shape[1:]))
    np.copyto(full, c)
    return full
