"""`GossipMatrix`: a communication matrix validated and decomposed once, then passed around as a value.

``instances.gossip_matrix`` returns one; ``algorithms.run``, ``run_batch``, ``tune``, the verify harness and
the PEP (``bounds.worst_case(W=...)``, through ``toarray``) accept it and read its CSR matrix and its
spectrum instead of checking and decomposing W again. A raw array, sparse matrix or graph is still accepted
everywhere and wrapped once, by ``instances.as_gossip``.

The object is a plain value: this module validates nothing (it sits below ``instances.matrices``, which
builds the spectra, and ``instances.gossip``, which validates); build one with ``instances.as_gossip`` or
``instances.gossip_matrix``, never by calling the class with numbers of your own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

__all__ = ["GOSSIP_KINDS", "GossipMatrix"]

#: What a `GossipMatrix` is for: "symmetric" (symmetric, doubly stochastic, the paper's W), "push"
#: (column-stochastic, for push-sum/SGP; no lam) and "exact" (the all-reduce 11^T/n, lam = 0).
GOSSIP_KINDS: tuple[str, ...] = ("symmetric", "push", "exact")


@dataclass(frozen=True, eq=False, repr=False)
class GossipMatrix:
    """A validated communication matrix with its spectrum summary (docs/theory.md §1.6).

    For the symmetric kind, lam = max(|lambda_2|, |lambda_n|) = ||W - 11^T/n||_2 and the spectral gap is
    1 - lam, with lambda_2 >= lambda_n the extreme eigenvalues of W on the complement of the consensus
    direction 1 (Lu & De Sa 2021, Sect. 2). The matrix's arrays are read-only: the spectrum stays W's.

    Parameters
    ----------
    matrix : scipy.sparse.csr_array
        W, float, canonical CSR (sorted, no duplicates), read-only arrays.
    kind : {"symmetric", "push", "exact"}
        See `GOSSIP_KINDS`.
    lambda_2, lambda_n : float or None
        The largest and smallest non-consensus eigenvalue (None for "push").
    spectrum_method : str
        How they were obtained: "dense eigvalsh", "closed form (...)", "lanczos" or "shift-invert".

    Attributes
    ----------
    lam : float or None
        max(|lambda_2|, |lambda_n|) (None for "push").
    n : int
        Workers (rows of W).

    Examples
    --------
    >>> import networkx as nx
    >>> from decbounds import instances
    >>> W = instances.gossip_matrix(nx.cycle_graph(6))
    >>> W
    GossipMatrix(symmetric, n=6, lam=0.6667, lambda_2=0.6667, lambda_n=-0.3333, dense eigvalsh)
    >>> W.shape, W.nnz, round(W.spectral_gap, 4)
    ((6, 6), 18, 0.3333)
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
    def shape(self) -> tuple[int, int]:
        """(n, n)."""
        return self.matrix.shape  # type: ignore[return-value]

    @property
    def nnz(self) -> int:
        """Stored entries of W."""
        return int(self.matrix.nnz)

    @property
    def dtype(self) -> np.dtype:
        """float64."""
        return self.matrix.dtype

    @property
    def spectral_gap(self) -> float:
        """1 - lam (ValueError for the push kind, which has no lam)."""
        if self.lam is None:
            raise ValueError("a push (column-stochastic) matrix has no lam and no spectral gap")
        return 1.0 - self.lam

    def toarray(self) -> np.ndarray:
        """W as a dense (n, n) array (a new, writable copy)."""
        return self.matrix.toarray()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        # np.asarray(W), and so scipy.sparse.csr_array(W), see the dense matrix (a new array)
        dense = self.matrix.toarray()
        return dense if dtype is None else dense.astype(dtype)

    def tocoo(self) -> sp.coo_array:
        """W in COO form (a copy)."""
        return self.matrix.tocoo()

    def diagonal(self) -> np.ndarray:
        """W's diagonal."""
        return self.matrix.diagonal()

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
