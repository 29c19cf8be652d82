"""`Gossip`, the one gossip value, and `GossipMatrix`, its static member: W validated and decomposed once.

Two members: `GossipMatrix` (one W in every round, with its spectrum) and ``instances.GossipSchedule``; every
consumer reads ``n``, ``kind``, ``time_varying``, ``period``, ``lam`` and ``round_matrix(t)``. This module
validates nothing: build values with ``instances.as_gossip`` or ``instances.gossip_matrix``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

__all__ = ["EXACT_MATRIX_LIMIT", "GOSSIP_KINDS", "ExactAverage", "Gossip", "GossipMatrix"]

#: What a `GossipMatrix` is for: "symmetric" (symmetric, doubly stochastic, the paper's W), "push"
#: (column-stochastic, for push-sum/SGP; no lam) and "exact" (the all-reduce 11^T/n, lam = 0).
GOSSIP_KINDS: tuple[str, ...] = ("symmetric", "push", "exact")


class Gossip(ABC):
    """The gossip value W: the communication matrices W_0, W_1, ... of one network (docs/theory.md §1.6, §17).

    Examples
    --------
    >>> import networkx as nx
    >>> from decbounds import instances
    >>> static, varying = instances.gossip_matrix(nx.cycle_graph(4)), instances.rotating_ring(4)
    >>> [(isinstance(W, Gossip), W.n, W.time_varying, W.period) for W in (static, varying)]
    [(True, 4, False, 1), (True, 4, True, 2)]
    """

    __slots__ = ()

    if TYPE_CHECKING:  # declared for the type checker; each member implements them as it stores them
        @property
        def n(self) -> int: ...

        @property
        def kind(self) -> str: ...

        @property
        def time_varying(self) -> bool: ...

        @property
        def period(self) -> int | None: ...

        @property
        def lam(self) -> float | None: ...

    @abstractmethod
    def round_matrix(self, t: int) -> sp.csr_array:
        """W_t, the matrix of round t (rows receive, columns send), as CSR.

        Parameters
        ----------
        t : int
        """


@dataclass(frozen=True, eq=False, repr=False)
class GossipMatrix(Gossip):
    """A validated communication matrix with its spectrum summary (docs/theory.md §1.6): the static `Gossip`.

    Parameters
    ----------
    matrix : scipy.sparse.csr_array
        W, float, canonical CSR, read-only arrays.
    kind : {"symmetric", "push", "exact"}
    lambda_2, lambda_n : float or None
        The largest and smallest non-consensus eigenvalue (None for "push").
    spectrum_method : str

    Examples
    --------
    >>> import networkx as nx
    >>> from decbounds import instances
    >>> W = instances.gossip_matrix(nx.cycle_graph(6))
    >>> W
    GossipMatrix(symmetric, n=6, lam=0.6667, lambda_2=0.6667, lambda_n=-0.3333, dense eigvalsh)
    """

    matrix: sp.csr_array
    kind: str
    lambda_2: float | None
    lambda_n: float | None
    spectrum_method: str
    lam: float | None = None

    def __post_init__(self) -> None:
        if self.lam is None and self.lambda_2 is not None and self.lambda_n is not None:
            object.__setattr__(self, "lam", max(abs(self.lambda_2), abs(self.lambda_n)))

    # -- what a sparse matrix offers, delegated (code that took a csr_array keeps working) ----------------
    @property
    def n(self) -> int:
        """Workers: W is n x n."""
        return int(self.matrix.shape[0])

    @property
    def time_varying(self) -> bool:
        """False: the same W in every round."""
        return False

    @property
    def period(self) -> int:
        """1: W_t = W for every t."""
        return 1

    def round_matrix(self, t: int) -> sp.csr_array:
        """W itself, whatever the round (the `Gossip` interface).

        Parameters
        ----------
        t : int
        """
        return self.matrix

    @property
    def shape(self) -> tuple[int, int]:
        """(n, n)."""
        rows, columns = self.matrix.shape
        return int(rows), int(columns)

    @property
    def nnz(self) -> int:
        """Stored entries of W."""
        return int(self.matrix.nnz)

    @property
    def dtype(self) -> np.dtype[np.float64]:
        """float64."""
        dtype: np.dtype[np.float64] = self.matrix.dtype
        return dtype

    @property
    def spectral_gap(self) -> float:
        """1 - lam (ValueError for the push kind, which has no lam)."""
        if self.lam is None:
            raise ValueError("a push (column-stochastic) matrix has no lam and no spectral gap")
        return 1.0 - self.lam

    def toarray(self) -> npt.NDArray[np.float64]:
        """W as a dense (n, n) array (a new, writable copy)."""
        dense: npt.NDArray[np.float64] = self.matrix.toarray()
        return dense

    def __array__(self, dtype: npt.DTypeLike | None = None,
                  copy: bool | None = None) -> npt.NDArray[np.float64]:
        # np.asarray(W), and so scipy.sparse.csr_array(W), see the dense matrix (a new array)
        dense = self.toarray()
        return dense if dtype is None else dense.astype(dtype)

    def tocoo(self) -> sp.coo_array:
        """W in COO form (a copy)."""
        return self.matrix.tocoo()

    def diagonal(self) -> npt.NDArray[np.float64]:
        """W's diagonal."""
        diagonal: npt.NDArray[np.float64] = self.matrix.diagonal()
        return diagonal

    # the private protocol of a sparse matrix: whatever scipy's product and indexing take and return
    def __matmul__(self, other: Any) -> Any:
        return self.matrix @ other

    def __rmatmul__(self, other: Any) -> Any:
        return other @ self.matrix

    def __getitem__(self, key: Any) -> Any:
        return self.matrix[key]

    def __repr__(self) -> str:
        if self.lam is None:
            return f"GossipMatrix({self.kind}, n={self.n}, nnz={self.nnz})"
        return (f"GossipMatrix({self.kind}, n={self.n}, lam={self.lam:.4g}, lambda_2={self.lambda_2:.4g}, "
                f"lambda_n={self.lambda_n:.4g}, {self.spectrum_method})")


#: The largest n whose exact average `ExactAverage` writes out as a matrix (``matrix``, ``toarray``,
#: ``round_matrix``): n^2 = 2^24 entries, 128 MiB as float64. ``W @ X`` needs no matrix at any n.
EXACT_MATRIX_LIMIT = 4096


class ExactAverage(GossipMatrix):
    """The all-reduce W = 11^T/n (kind "exact", lam = 0) in O(n) memory: ``W @ X`` is the mean over axis 0
    broadcast back (O(n d)), and the n x n matrix is built only when asked for (``matrix``, ``toarray``,
    ``round_matrix``, indexing), for n <= `EXACT_MATRIX_LIMIT` (ValueError naming n above it).

    Parameters
    ----------
    n : int
        Workers, >= 1 (checked by ``instances.as_gossip``, which builds this value).

    Examples
    --------
    >>> W = ExactAverage(10**6)
    >>> W.lam, W.shape, float((W @ np.arange(10**6.0)).max())
    (0.0, (1000000, 1000000), 499999.5)
    """

    def __init__(self, n: int) -> None:  # the dataclass fields, with the matrix left to `matrix`
        for name, value in (("kind", "exact"), ("lambda_2", 0.0), ("lambda_n", 0.0),
                            ("spectrum_method", "exact averaging"), ("lam", 0.0), ("_size", int(n))):
            object.__setattr__(self, name, value)

    @property
    def n(self) -> int:
        """Workers."""
        size: int = self.__dict__["_size"]
        return size

    @property
    def shape(self) -> tuple[int, int]:
        """(n, n)."""
        return self.n, self.n

    @property
    def nnz(self) -> int:
        """n^2: every entry is 1/n."""
        return self.n * self.n

    @property
    def matrix(self) -> sp.csr_array:  # computed, not stored
        """11^T/n as CSR (read-only arrays), built on the first request; n <= `EXACT_MATRIX_LIMIT`."""
        built = self.__dict__.get("_matrix")
        if built is None:
            if self.n > EXACT_MATRIX_LIMIT:
                raise ValueError(f"n={self.n} is too large to write the exact average 11^T/n out as a matrix "
                                 f"(n^2 entries; at most n={EXACT_MATRIX_LIMIT}); W @ X computes the mean "
                                 "without it")
            built = sp.csr_array(np.full((self.n, self.n), 1.0 / self.n))
            for array in (built.data, built.indices, built.indptr):
                array.flags.writeable = False
            self.__dict__["_matrix"] = built
        return built

    def diagonal(self) -> npt.NDArray[np.float64]:
        """1/n on every worker."""
        return np.full(self.n, 1.0 / self.n)

    def __matmul__(self, other: Any) -> Any:
        if isinstance(other, np.ndarray) and other.ndim >= 1 and other.shape[0] == self.n:
            return np.broadcast_to(other.mean(axis=0), other.shape).copy()
        return self.matrix @ other

    def __repr__(self) -> str:
        return f"ExactAverage(n={self.n}, lam=0)"
