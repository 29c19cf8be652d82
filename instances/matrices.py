"""Matrix-level tools under every gossip construction: the one conversion to ``scipy.sparse.csr_array``
with its checks, the W = I - A diag(w) A^T edge-weight form, and the spectra (lam, spectral gap).

lam = max(|lambda_2|, |lambda_n|) = ||W - 11^T/n||_2 and the spectral gap is 1 - lam (docs/theory.md (A7)).
"""

from __future__ import annotations

import math
from typing import TypeAlias

import numpy as np
import scipy.sparse as sp
import scipy.sparse.csgraph as csgraph
import scipy.sparse.linalg as spla
from decbounds.bounds.validation import require_finite_entries, require_matrix, require_real
from decbounds.instances.gossip_value import GossipMatrix

__all__ = [
    "CLOSED_FORM_ATOL",
    "DEFAULT_ATOL",
    "DENSE_EIG_LIMIT",
    "DENSE_REFERENCE_LIMIT",
    "EIGEN_TOL",
    "MAX_ATOL",
    "MatrixLike",
    "as_csr",
    "check_atol",
    "check_symmetric_stochastic",
    "closed_form_eigenvalues",
    "extreme_eigenvalues",
    "from_edge_weights",
    "read_matrix_file",
    "second_eigenvalue",
    "spectral_gap",
]

# Dense eigvalsh up to this size when no closed form applies (where its n^3 cost reaches about a second);
# Lanczos (eigsh) beyond.
DENSE_EIG_LIMIT = 2000
#: Up to this size dense eigvalsh is the reference even where a closed form exists: it costs <= 30 ms there,
#: and it keeps every lam a figure record carries bit-identical to the records made before the closed forms.
DENSE_REFERENCE_LIMIT = 512
#: A matrix takes a closed form only when it matches the form's pattern entry by entry within this; by
#: Weyl's inequality the closed-form eigenvalues are then W's within (entries per row) x this.
CLOSED_FORM_ATOL = 1e-12
#: Relative accuracy of the iterative (Lanczos) eigenvalues.
EIGEN_TOL = 1e-10
DEFAULT_ATOL = 1e-9

#: A matrix as the gossip tools take it (`as_csr` converts it): dense, any scipy.sparse format, or a
#: `GossipMatrix` (its CSR matrix, read as it is).
MatrixLike: TypeAlias = np.ndarray | sp.spmatrix | sp.sparray | GossipMatrix


def as_csr(W: MatrixLike, name: str = "W") -> sp.csr_array:
    """W as a float ``csr_array`` (dense arrays and every scipy.sparse format accepted).

    Parameters
    ----------
    W : array_like or scipy.sparse matrix
    name : str, default "W"
    """
    if isinstance(W, GossipMatrix):
        return W.matrix  # validated once, read-only
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
    weights). Symmetric with rows summing to 1 by construction (docs/theory.md §12.1).

    Parameters
    ----------
    n : int
    u, v : numpy.ndarray of int, shape (m,)
        The edges' end points (u_e != v_e, each edge once).
    w : numpy.ndarray, shape (m,)
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
    """The tolerance of the gossip checks: a finite real number in [0, MAX_ATOL].

    Parameters
    ----------
    atol : object
    """
    return require_real("atol", atol, allow_zero=True, maximum=MAX_ATOL)


def check_symmetric_stochastic(W: sp.csr_array, atol: float, name: str = "W") -> None:
    """ValueError unless W is symmetric and its rows sum to 1, both within ``atol``.

    Parameters
    ----------
    W : scipy.sparse.csr_array
    atol : float
        Tolerance of both checks (max |W - W^T| and max |W 1 - 1|).
    name : str, default "W"
        The matrix's name in the message (``W_3`` for a schedule's round).
    """
    asym = abs(W - W.T).max() if W.nnz else 0.0
    if asym > atol:
        raise ValueError(f"{name} is not symmetric: max |W - W^T| = {asym:.3g} > atol={atol:g}")
    rowdev = float(np.max(np.abs(W.sum(axis=1) - 1.0)))
    if rowdev > atol:
        raise ValueError(f"{name} rows do not sum to 1: max |W 1 - 1| = {rowdev:.3g} > atol={atol:g}")


def second_eigenvalue(W: MatrixLike, *, atol: float = DEFAULT_ATOL) -> float:
    r""":math:`\lambda = \max(|\lambda_2|, |\lambda_n|) = \lVert W - \mathbf{1}\mathbf{1}^\top/n\rVert_2` of a
    symmetric W with :math:`W\mathbf{1} = \mathbf{1}` (Lu & De Sa 2021, docs/theory.md (A7)).

    Parameters
    ----------
    W : array_like, scipy.sparse matrix or GossipMatrix
        Symmetric, rows summing to 1 (negative entries allowed).
    atol : float, default 1e-9
        Tolerance of the checks, in [0, 0.1].

    Examples
    --------
    >>> second_eigenvalue([[0.5, 0.5], [0.5, 0.5]])
    0.0
    """
    atol = check_atol(atol)
    if isinstance(W, GossipMatrix) and W.lam is not None:
        if atol < DEFAULT_ATOL:
            check_symmetric_stochastic(W.matrix, atol)
        return W.lam
    W = as_csr(W)
    check_symmetric_stochastic(W, atol)
    lambda_2, lambda_n, _ = extreme_eigenvalues(W)
    return max(abs(lambda_2), abs(lambda_n))


def extreme_eigenvalues(W: sp.csr_array, *, cayley: tuple[int, ...] | None = None,
                        tol: float = EIGEN_TOL) -> tuple[float, float, str]:
    """(lambda_2, lambda_n, method): the largest and smallest eigenvalue of W on the complement of the
    consensus direction 1, for a symmetric W with W 1 = 1 (not checked here).

    Parameters
    ----------
    W : scipy.sparse.csr_array
    cayley : tuple of int, optional
        The translation group of W's graph (``G.graph["cayley"]``); default: Z_n is tried.
    tol : float, default ``EIGEN_TOL``
    """
    n = W.shape[0]
    if n == 1:
        return 0.0, 0.0, "n = 1"
    if n <= DENSE_REFERENCE_LIMIT:
        return _dense_extremes(W)
    found = closed_form_eigenvalues(W, cayley)
    if found is not None:
        return found
    if n <= DENSE_EIG_LIMIT:
        return _dense_extremes(W)
    return _lanczos_extremes(W, tol)


def _dense_extremes(W: sp.csr_array) -> tuple[float, float, str]:
    n = W.shape[0]
    M = W.toarray()
    M -= 1.0 / n  # the consensus eigenvalue 1 becomes 0, the others stay (W 1 = 1)
    values = np.linalg.eigvalsh(M)
    # drop the consensus 0: the value nearest 0 (a true eigenvalue as near 0 is equal to it within rounding),
    # so max(|lambda_2|, |lambda_n|) keeps the bits of max |eig(W - 11^T/n)|
    rest = np.delete(values, int(np.argmin(np.abs(values))))
    return float(rest.max()), float(rest.min()), "dense eigvalsh"


def closed_form_eigenvalues(W: sp.csr_array, cayley: tuple[int, ...] | None = None
                            ) -> tuple[float, float, str] | None:
    """(lambda_2, lambda_n, method) of W in closed form, or None when none of the forms matches W.

    - translation-invariant W on a Cayley graph of Z_{n_1} x ... x Z_{n_k}: the DFT of w,
      sum_g w(g) cos(2 pi <k, g / n>) (Boyd, Diaconis, Parrilo & Xiao 2009);
    - W = I - c L on a path (Metropolis c = 1/3, max-degree c = 1/3, Cor. 2's path matrix c = 1/2):
      1 - 4 c sin^2(pi k / (2 n)), k = 1..n-1;
    - W = I - c L on a star: 1 - c (n - 2 times) and 1 - c n.

    Parameters
    ----------
    W : scipy.sparse.csr_array
    cayley : tuple of int, optional
        The group's shape (``G.graph["cayley"]``); default (n,), the circulants.
    """
    n = W.shape[0]
    if n < 2:
        return None
    coo = W.tocoo()
    keep = coo.data != 0
    rows, cols, data = coo.row[keep].astype(np.int64), coo.col[keep].astype(np.int64), coo.data[keep]
    shape = tuple(int(s) for s in cayley) if cayley is not None else (n,)
    if math.prod(shape) == n:
        found = _cayley_extremes(rows, cols, data, shape)
        if found is not None:
            return found
    return _laplacian_extremes(n, rows, cols, data)


def _cayley_extremes(rows: np.ndarray, cols: np.ndarray, data: np.ndarray, shape: tuple[int, ...]
                     ) -> tuple[float, float, str] | None:
    n = math.prod(shape)
    kernel = np.zeros(n)
    first = rows == 0
    kernel[cols[first]] = data[first]
    if np.count_nonzero(kernel) * n != data.size:  # every row must hold exactly row 0's pattern
        return None
    if len(shape) == 1:
        offsets = (cols - rows) % n
    else:
        at_row, at_col = np.unravel_index(rows, shape), np.unravel_index(cols, shape)
        offsets = np.ravel_multi_index(tuple((c - r) % s for r, c, s in zip(at_row, at_col, shape,
                                                                                  strict=True)), shape)
    if np.max(np.abs(data - kernel[offsets])) > CLOSED_FORM_ATOL:
        return None
    values = np.fft.fftn(kernel.reshape(shape)).real.ravel()[1:]  # [0]: the consensus, sum(w) = 1
    group = " x ".join(f"Z_{s}" for s in shape)
    return float(values.max()), float(values.min()), f"closed form (Cayley graph of {group})"


def _laplacian_extremes(n: int, rows: np.ndarray, cols: np.ndarray, data: np.ndarray
                        ) -> tuple[float, float, str] | None:
    off = rows != cols
    weights = data[off]
    if weights.size != 2 * (n - 1) or np.ptp(weights) > CLOSED_FORM_ATOL:
        return None  # a tree with one weight c on every edge
    c = float(weights[0])
    degree = np.bincount(rows[off], minlength=n)
    diagonal = np.zeros(n)
    on = ~off
    diagonal[rows[on]] = data[on]
    if np.max(np.abs(diagonal - (1.0 - c * degree))) > CLOSED_FORM_ATOL:
        return None
    if degree.max() == n - 1 and n >= 3:  # star K_{1, n-1}: Laplacian spectrum 1 (n - 2 times), n
        values = np.array([1.0 - c, 1.0 - c * n])
        name = "star"
    elif degree.max() <= 2 and np.count_nonzero(degree == 1) == 2:
        graph = sp.csr_array((np.ones(rows[off].size), (rows[off], cols[off])), shape=(n, n))
        if csgraph.connected_components(graph, directed=False, return_labels=False) != 1:
            return None
        # path Laplacian spectrum 4 sin^2(pi k / (2 n)), k = 1..n-1: the extremes at k = 1 and k = n - 1
        values = 1.0 - 4.0 * c * np.sin(np.pi * np.array([1, n - 1]) / (2 * n)) ** 2
        name = "path"
    else:
        return None
    return float(values.max()), float(values.min()), f"closed form ({name}, W = I - {c:.6g} L)"


def _lanczos_extremes(W: sp.csr_array, tol: float) -> tuple[float, float, str]:
    n = W.shape[0]
    # the consensus eigenvalue 1 moved to -shift (for the largest) or +shift (for the smallest) beyond
    # every eigenvalue (|lambda| <= the largest absolute row sum), so that it is never the one found
    bound = float(np.max(abs(W).sum(axis=1))) + 1.0
    start = np.random.default_rng(0).standard_normal(n)  # ARPACK's start vector, fixed: same bits each call

    def moved(value: float) -> spla.LinearOperator:
        return spla.LinearOperator((n, n), matvec=lambda x: W @ x + (value - 1.0) * np.mean(x), dtype=float)

    try:
        top = spla.eigsh(moved(-bound), k=1, which="LA", tol=tol, ncv=min(n, 40), maxiter=300, v0=start,
                         return_eigenvectors=False)
        bottom = spla.eigsh(moved(bound), k=1, which="SA", tol=tol, ncv=min(n, 40), maxiter=300, v0=start,
                            return_eigenvectors=False)
        return float(top[0]), float(bottom[0]), "lanczos"
    except spla.ArpackNoConvergence:
        pass
    # Lanczos stalls when lambda_2 is within ~1e-6 of its neighbours (a ring-like graph without a closed
    # form): shift-invert isolates the eigenvalues nearest +-1 at the price of a sparse LU. Of the two
    # nearest +1 one is the consensus 1 (eigenvector 1): keep the other. sigma sits just outside [-1, 1].
    shift = 1e-3
    top_vals, top_vecs = spla.eigsh(W.tocsc(), k=2, sigma=1.0 + shift, which="LM", tol=1e-12)
    overlap = np.abs(np.full(n, 1.0 / np.sqrt(n)) @ top_vecs)
    lambda_2 = float(top_vals[int(np.argmin(overlap))]) if overlap.max() > 0.5 else float(top_vals.max())
    bottom_vals = spla.eigsh(W.tocsc(), k=1, sigma=-1.0 - shift, which="LM", tol=1e-12,
                             return_eigenvectors=False)
    return lambda_2, float(bottom_vals[0]), "shift-invert"


def spectral_gap(W: MatrixLike, *, atol: float = DEFAULT_ATOL) -> float:
    r"""The spectral gap :math:`1 - \lambda`, with :math:`\lambda` = ``second_eigenvalue(W)``
    (docs/theory.md (A7)).

    Parameters
    ----------
    W : array_like or scipy.sparse matrix
    atol : float, default 1e-9
    """
    return 1.0 - second_eigenvalue(W, atol=atol)


def read_matrix_file(path: str, flag: str = "--W") -> np.ndarray | sp.csr_array:
    """The matrix a command line's ``flag FILE`` names: ``.npz`` (scipy.sparse), ``.npy`` (numpy; no
    pickled objects) or text (``numpy.loadtxt``); every failure is a ValueError naming the flag and the file.

    Parameters
    ----------
    path : str
    flag : str, default "--W"
        The option that named it, for the message.
    """
    try:
        W = (sp.csr_array(sp.load_npz(path)) if path.endswith(".npz") else np.load(path)
             if path.endswith(".npy") else np.loadtxt(path, ndmin=2))
    except (OSError, ValueError, EOFError) as err:
        raise ValueError(f"{flag} {path}: cannot read a matrix ({type(err).__name__}: {err})") from None
    if not isinstance(W, np.ndarray | sp.sparray) or W.dtype.kind not in "fiub":
        raise ValueError(f"{flag} {path}: holds {type(W).__name__} of dtype {getattr(W, 'dtype', '?')}, "
                         "not a real numeric matrix")
    return W
