"""Matrix-level tools under every gossip construction: the one conversion to ``scipy.sparse.csr_array``
with its checks, the W = I - A diag(w) A^T edge-weight form, and the spectra (lam, spectral gap).

A gossip matrix is symmetric, doubly stochastic and supported on the graph plus the diagonal; the paper's
mixing parameter is lam = max(|lambda_2|, |lambda_n|) = ||W - 11^T/n||_2 and the spectral gap is 1 - lam
(docs/theory.md (A7)). This module sits below both ``instances.gossip`` (weight rules, checks) and
``instances.optimize`` (FDLA/FMMC), so that neither imports the other's private names.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from decbounds.bounds.validation import require_finite_entries, require_matrix, require_real

__all__ = [
    "DEFAULT_ATOL",
    "DENSE_EIG_LIMIT",
    "MAX_ATOL",
    "MatrixLike",
    "as_csr",
    "check_atol",
    "check_symmetric_stochastic",
    "from_edge_weights",
    "second_eigenvalue",
    "spectral_gap",
]

# Dense eigvalsh up to this size (where its n^3 cost reaches about a second; docs/benchmarks.md);
# Lanczos (eigsh) beyond.
DENSE_EIG_LIMIT = 2000
DEFAULT_ATOL = 1e-9

MatrixLike = np.ndarray | sp.spmatrix | sp.sparray


def as_csr(W: MatrixLike, name: str = "W") -> sp.csr_array:
    """W as a float ``csr_array`` (dense arrays and every scipy.sparse format accepted).

    Parameters
    ----------
    W : array_like or scipy.sparse matrix
        A square real matrix.
    name : str, default "W"
        The argument's name in error messages.

    Returns
    -------
    scipy.sparse.csr_array
        Float entries.

    Raises
    ------
    TypeError
        For what is not a real matrix (None, a string, complex or object entries).
    ValueError
        For a matrix that is not 2-D, not square, empty (0 x 0) or has a NaN or infinite entry.

    Examples
    --------
    >>> as_csr([[0.5, 0.5], [0.5, 0.5]]).shape
    (2, 2)
    """
    if sp.issparse(W):
        if len(W.shape) != 2 or W.shape[0] != W.shape[1]:
            raise ValueError(f"{name} must be square; got shape {W.shape}")
        if W.shape[0] == 0:
            raise ValueError(f"{name} must have at least 1 row and column; got shape {W.shape}")
        if np.iscomplexobj(W):
            raise TypeError(f"{name} must be real, not complex; got dtype {W.dtype}")
        if not (np.issubdtype(W.dtype, np.number) or W.dtype == np.bool_):
            raise TypeError(f"{name} must have real entries; got dtype {W.dtype}")
        out = sp.csr_array(W, dtype=float)
        require_finite_entries(name, out.data)
        return out
    if W is None or isinstance(W, str | bytes) or not (isinstance(W, np.ndarray | list | tuple)
                                                       or hasattr(W, "__array__")):
        raise TypeError(f"{name} must be a numpy array or a scipy.sparse matrix; got {type(W).__name__}")
    return sp.csr_array(require_matrix(name, W))


def from_edge_weights(n: int, u: np.ndarray, v: np.ndarray, w: np.ndarray) -> sp.csr_array:
    """W = I - A diag(w) A^T: w on each edge (u_e, v_e) off the diagonal; the diagonal keeps 1 - (its edge
    weights). Symmetric with rows summing to 1 by construction, whatever w.

    Parameters
    ----------
    n : int
        Nodes.
    u, v : numpy.ndarray of int, shape (m,)
        The edges' end points (u_e != v_e, each edge once).
    w : numpy.ndarray, shape (m,)
        The edge weights.

    Returns
    -------
    scipy.sparse.csr_array

    References
    ----------
    docs/theory.md §12.1 (the edge parametrization of FDLA and FMMC).

    Examples
    --------
    >>> from_edge_weights(3, np.array([0, 1]), np.array([1, 2]), np.array([0.5, 0.25])).toarray()
    array([[0.5 , 0.5 , 0.  ],
           [0.5 , 0.25, 0.25],
           [0.  , 0.25, 0.75]])
    """
    degree_weight = np.bincount(u, weights=w, minlength=n) + np.bincount(v, weights=w, minlength=n)
    rows = np.concatenate([u, v, np.arange(n)])
    cols = np.concatenate([v, u, np.arange(n)])
    vals = np.concatenate([w, w, 1.0 - degree_weight])
    W = sp.csr_array((vals, (rows, cols)), shape=(n, n))
    W.sum_duplicates()
    return W


#: Largest tolerance of the gossip checks: beyond it "rows sum to 1 within atol" says nothing (atol = 1e308
#: or NaN would switch every check off).
MAX_ATOL = 0.1


def check_atol(atol: object) -> float:
    """The tolerance of the gossip checks: a finite real number in [0, MAX_ATOL]."""
    return require_real("atol", atol, allow_zero=True, maximum=MAX_ATOL)


def check_symmetric_stochastic(W: sp.csr_array, atol: float, name: str = "W") -> None:
    """ValueError unless W is symmetric and its rows sum to 1, both within ``atol``."""
    asym = abs(W - W.T).max() if W.nnz else 0.0
    if asym > atol:
        raise ValueError(f"{name} is not symmetric: max |W - W^T| = {asym:.3g} > atol={atol:g}")
    rowdev = float(np.max(np.abs(W.sum(axis=1) - 1.0)))
    if rowdev > atol:
        raise ValueError(f"{name} rows do not sum to 1: max |W 1 - 1| = {rowdev:.3g} > atol={atol:g}")


def second_eigenvalue(W: MatrixLike, *, atol: float = DEFAULT_ATOL) -> float:
    """lam = max(|lambda_2|, |lambda_n|) = ||W - 11^T/n||_2 of a symmetric W with W 1 = 1 (Lu & De Sa 2021,
    docs/theory.md §2).

    Dense ``numpy.linalg.eigvalsh`` for n <= ``DENSE_EIG_LIMIT``; beyond, ``scipy.sparse.linalg.eigsh``:
    Lanczos on W - 11^T/n, and when that stalls (a 5000-ring, lambda_2 within 1e-6 of 1) shift-invert
    around +1 (the two eigenvalues nearest, 1 and lambda_2) and -1 (lambda_n).

    Parameters
    ----------
    W : array_like or scipy.sparse matrix
        Symmetric, rows summing to 1 (negative entries allowed).
    atol : float, default 1e-9
        Tolerance of the symmetry and row-sum checks, in [0, 0.1].

    Returns
    -------
    float
        lam in [0, 1] for a gossip matrix (1: disconnected or periodic).

    Raises
    ------
    ValueError
        If W is not symmetric or its rows do not sum to 1 within ``atol``, or as `as_csr`.
    TypeError
        As `as_csr`.

    References
    ----------
    Lu & De Sa (2021), Sect. 2; docs/theory.md §1.6 and (A7); docs/errata.md E10 (lam is two things in
    the paper).

    Examples
    --------
    >>> second_eigenvalue([[0.5, 0.5], [0.5, 0.5]])
    0.0
    >>> round(second_eigenvalue([[2/3, 1/3, 0], [1/3, 1/3, 1/3], [0, 1/3, 2/3]]), 4)  # Metropolis, 3-path
    0.6667
    """
    atol = check_atol(atol)
    W = as_csr(W)
    check_symmetric_stochastic(W, atol)
    n = W.shape[0]
    if n == 1:
        return 0.0
    if n <= DENSE_EIG_LIMIT:
        M = W.toarray()
        M -= 1.0 / n
        return float(np.max(np.abs(np.linalg.eigvalsh(M))))
    return _sparse_second_eigenvalue(W)


def _sparse_second_eigenvalue(W: sp.csr_array) -> float:
    n = W.shape[0]
    # Plain Lanczos on W - 11^T/n (lam is its largest magnitude) converges in a few dozen products when the
    # gap is not tiny (expander-like graphs); when it stalls (rings, paths: lambda_2 within 1e-6 of 1) switch
    # to shift-invert, which isolates the eigenvalues nearest +-1 but pays a sparse LU (fill-in on dense
    # random graphs is what makes it the second choice).
    centred = spla.LinearOperator((n, n), matvec=lambda x: W @ x - x.mean(), dtype=float)  # W 1 = 1
    try:
        vals = spla.eigsh(centred, k=2, which="LM", tol=1e-12, ncv=32, maxiter=60,
                          return_eigenvectors=False)
        return float(np.max(np.abs(vals)))
    except spla.ArpackNoConvergence:
        pass
    # Of the two eigenvalues nearest +1 one is 1 (eigenvector 1); keep the other. sigma sits just outside
    # [-1, 1] so that W - sigma I stays non-singular.
    shift = 1e-3
    top_vals, top_vecs = spla.eigsh(W.tocsc(), k=2, sigma=1.0 + shift, which="LM", tol=1e-12)
    overlap = np.abs(np.full(n, 1.0 / np.sqrt(n)) @ top_vecs)
    lam2 = float(top_vals[int(np.argmin(overlap))]) if overlap.max() > 0.5 else float(top_vals.max())
    bottom_vals = spla.eigsh(W.tocsc(), k=1, sigma=-1.0 - shift, which="LM", tol=1e-12,
                             return_eigenvectors=False)
    return max(abs(lam2), abs(float(bottom_vals[0])))


def spectral_gap(W: MatrixLike, *, atol: float = DEFAULT_ATOL) -> float:
    """1 - lam, lam = ``second_eigenvalue(W)`` (docs/theory.md (A7)).

    Parameters
    ----------
    W : array_like or scipy.sparse matrix
        Symmetric, rows summing to 1.
    atol : float, default 1e-9
        As `second_eigenvalue`.

    Returns
    -------
    float

    Raises
    ------
    ValueError, TypeError
        As `second_eigenvalue`.

    Examples
    --------
    >>> spectral_gap([[0.5, 0.5], [0.5, 0.5]])
    1.0
    """
    return 1.0 - second_eigenvalue(W, atol=atol)
