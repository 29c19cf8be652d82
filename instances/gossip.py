"""Gossip matrices W and their spectra (THEORY.md §1 "Gossip", §9.2, §N).

A gossip matrix is symmetric, doubly stochastic and supported on the graph plus the diagonal; the paper's
mixing parameter is lam = max(|lambda_2|, |lambda_n|) = ||W - 11^T/n||_2 and the spectral gap is 1 - lam.
Every function accepts a dense ``numpy.ndarray`` or any ``scipy.sparse`` matrix and returns
``scipy.sparse.csr_array`` where it returns a matrix. Row i is worker i = node i of the graph.
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from instances.graphs import node_order

WEIGHT_RULES: tuple[str, ...] = ("metropolis", "max_degree", "uniform", "fdla", "fmmc", "path")

# Dense eigvalsh up to this size (a 2000 x 2000 eigvalsh takes ~1 s on 2 cores); Lanczos (eigsh) beyond.
DENSE_EIG_LIMIT = 2000
DEFAULT_ATOL = 1e-9

MatrixLike = np.ndarray | sp.spmatrix | sp.sparray


def as_csr(W: MatrixLike, name: str = "W") -> sp.csr_array:
    """W as a float ``csr_array`` (dense arrays and every scipy.sparse format accepted)."""
    if sp.issparse(W):
        out = sp.csr_array(W, dtype=float)
    elif isinstance(W, np.ndarray) or hasattr(W, "__array__"):
        arr = np.asarray(W, dtype=float)
        if arr.ndim != 2:
            raise ValueError(f"{name} must be a 2-D matrix; got shape {arr.shape}")
        out = sp.csr_array(arr)
    else:
        raise TypeError(f"{name} must be a numpy array or a scipy.sparse matrix; got {type(W).__name__}")
    if out.shape[0] != out.shape[1]:
        raise ValueError(f"{name} must be square; got shape {out.shape}")
    return out


def _check_square_symmetric_stochastic(W: sp.csr_array, atol: float, name: str = "W") -> None:
    asym = abs(W - W.T).max() if W.nnz else 0.0
    if asym > atol:
        raise ValueError(f"{name} is not symmetric: max |W - W^T| = {asym:.3g} > atol={atol:g}")
    rowdev = float(np.max(np.abs(W.sum(axis=1) - 1.0)))
    if rowdev > atol:
        raise ValueError(f"{name} rows do not sum to 1: max |W 1 - 1| = {rowdev:.3g} > atol={atol:g}")


# --------------------------------------------------------------------------------------------------------
# spectra


def second_eigenvalue(W: MatrixLike, *, atol: float = DEFAULT_ATOL) -> float:
    """lam = max(|lambda_2|, |lambda_n|) = ||W - 11^T/n||_2 of a symmetric W with W 1 = 1 (THEORY.md §1).

    Dense ``numpy.linalg.eigvalsh`` for n <= ``DENSE_EIG_LIMIT``; beyond, ``scipy.sparse.linalg.eigsh``:
    Lanczos on W - 11^T/n, and when that stalls (a 5000-ring, lambda_2 within 1e-6 of 1) shift-invert
    around +1 (the two eigenvalues nearest, 1 and lambda_2) and -1 (lambda_n).
    """
    W = as_csr(W)
    _check_square_symmetric_stochastic(W, atol)
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
    """1 - lam, lam = ``second_eigenvalue(W)`` (THEORY.md §1)."""
    return 1.0 - second_eigenvalue(W, atol=atol)


# --------------------------------------------------------------------------------------------------------
# validation


def check_gossip(W: MatrixLike, G: nx.Graph | None = None, *, nonnegative: bool = True,
                 atol: float = DEFAULT_ATOL) -> float:
    """Check that W is a gossip matrix (THEORY.md §1) and return its lam.

    Properties, checked in this order; the first that fails raises ``ValueError`` naming it: square,
    symmetric, rows sum to 1, non-negative (``nonnegative=False`` skips it: FDLA weights may be negative),
    support inside G plus the diagonal (when G is given), connected (lam < 1).
    """
    if sp.issparse(W) or isinstance(W, np.ndarray):
        shape = W.shape
        if len(shape) != 2 or shape[0] != shape[1]:
            raise ValueError(f"W is not square: shape {shape}")
    W = as_csr(W)
    _check_square_symmetric_stochastic(W, atol)
    if nonnegative and W.nnz and W.data.min() < -atol:
        raise ValueError(f"W is not non-negative: min entry {W.data.min():.3g} < -atol={atol:g} "
                         "(pass nonnegative=False for FDLA)")
    n = W.shape[0]
    if G is not None:
        if node_order(G) != n:
            raise ValueError(f"W support is not inside G: W is {n} x {n} but G has "
                             f"{G.number_of_nodes()} nodes")
        coo = sp.coo_array(W)
        off = (coo.row != coo.col) & (np.abs(coo.data) > atol)
        edges = set(G.edges)
        for i, j in zip(coo.row[off].tolist(), coo.col[off].tolist(), strict=True):
            if (i, j) not in edges and (j, i) not in edges:
                raise ValueError(f"W support is not inside G: W[{i}, {j}] = {W[i, j]:.3g} but ({i}, {j}) "
                                 "is not an edge")
    lam = second_eigenvalue(W, atol=atol)
    if not lam < 1.0 - 1e-12:
        raise ValueError(f"W is not connected: lam = max(|lambda_2|, |lambda_n|) = {lam:.12g} is not < 1 "
                         "(disconnected graph, or a periodic W with eigenvalue -1)")
    return lam


# --------------------------------------------------------------------------------------------------------
# weight rules


def _edge_arrays(G: nx.Graph) -> tuple[int, np.ndarray, np.ndarray]:
    if G.is_directed():
        raise TypeError("gossip_matrix needs an undirected networkx.Graph (use column_stochastic_matrix "
                        "for a DiGraph)")
    n = node_order(G)
    if nx.number_of_selfloops(G):
        G = nx.Graph(G)
        G.remove_edges_from(nx.selfloop_edges(G))
    e = np.array(list(G.edges), dtype=np.int64).reshape(-1, 2)
    return n, e[:, 0], e[:, 1]


def _from_edge_weights(n: int, u: np.ndarray, v: np.ndarray, w: np.ndarray) -> sp.csr_array:
    """W = I - A diag(w) A^T: w on each edge off the diagonal; the diagonal keeps 1 - (its edge weights)."""
    degree_weight = np.bincount(u, weights=w, minlength=n) + np.bincount(v, weights=w, minlength=n)
    rows = np.concatenate([u, v, np.arange(n)])
    cols = np.concatenate([v, u, np.arange(n)])
    vals = np.concatenate([w, w, 1.0 - degree_weight])
    W = sp.csr_array((vals, (rows, cols)), shape=(n, n))
    W.sum_duplicates()
    return W


def metropolis(G: nx.Graph) -> sp.csr_array:
    """Metropolis-Hastings weights W_ij = 1 / (1 + max(d_i, d_j)) on edges (THEORY.md §9.2, §L)."""
    n, u, v = _edge_arrays(G)
    deg = np.bincount(np.concatenate([u, v]), minlength=n)
    return _from_edge_weights(n, u, v, 1.0 / (1.0 + np.maximum(deg[u], deg[v])))


def max_degree(G: nx.Graph) -> sp.csr_array:
    """Constant edge weight 1 / (d_max + 1).

    CVX's ``max_deg.m`` uses 1/d_max, which on a regular bipartite graph (an even ring, the hypercube) puts
    an eigenvalue at -1 (lam = 1); the +1 keeps every diagonal entry >= 1/(d_max + 1) > 0, so W is a gossip
    matrix with lam < 1 on every connected graph. On a regular graph it equals ``uniform``.
    """
    n, u, v = _edge_arrays(G)
    deg = np.bincount(np.concatenate([u, v]), minlength=n)
    return _from_edge_weights(n, u, v, np.full(u.shape, 1.0 / (1.0 + deg.max(initial=0))))


def uniform(G: nx.Graph) -> sp.csr_array:
    """Equal weight 1/(d+1) on self and on each neighbour; only for d-regular graphs (else not stochastic)."""
    n, u, v = _edge_arrays(G)
    deg = np.bincount(np.concatenate([u, v]), minlength=n)
    if len(deg) and deg.min() != deg.max():
        raise ValueError(f"weights='uniform' needs a regular graph; degrees range {deg.min()}..{deg.max()}")
    return _from_edge_weights(n, u, v, np.full(u.shape, 1.0 / (1.0 + deg.max(initial=0))))


def path_matrix(G: nx.Graph) -> sp.csr_array:
    """The Cor. 2 path matrix: W_{i,i+-1} = 1/2, end nodes keep 1/2; eigenvalues cos(pi k/n), lam = cos(pi/n).

    G must be a path graph (connected, n - 1 edges, degrees <= 2); its nodes may come in any order.
    """
    n, u, v = _edge_arrays(G)
    deg = np.bincount(np.concatenate([u, v]), minlength=n)
    if n > 1 and (len(u) != n - 1 or deg.max() > 2 or not nx.is_connected(G)):
        raise ValueError("weights='path' needs a path graph (connected, n-1 edges, max degree 2)")
    return _from_edge_weights(n, u, v, np.full(u.shape, 0.5))


def gossip_matrix(G: nx.Graph, weights: str = "metropolis", **options: object) -> sp.csr_array:
    """A symmetric doubly stochastic W supported on G plus the diagonal, as ``scipy.sparse.csr_array``.

    weights: "metropolis", "max_degree", "uniform" (regular graphs), "path" (Cor. 2, path graphs), "fdla"
    (fastest distributed linear averaging; entries may be negative) or "fmmc" (fastest-mixing Markov chain,
    non-negative). The last two are solved by ``instances.optimize.optimize_gossip``; ``options`` are passed
    on to it (solver, cache, cache_dir, symmetry, ...).
    """
    if not isinstance(weights, str) or weights not in WEIGHT_RULES:
        raise ValueError(f"weights must be one of {WEIGHT_RULES}; got weights={weights!r}")
    if weights in ("fdla", "fmmc"):
        from instances.optimize import optimize_gossip  # optimize builds on this module

        return optimize_gossip(G, weights, **options).W
    if options:
        raise ValueError(f"weights={weights!r} takes no options; got {sorted(options)}")
    rule = {"metropolis": metropolis, "max_degree": max_degree, "uniform": uniform, "path": path_matrix}
    return rule[weights](G)


def lazy(W: MatrixLike, kappa: float) -> sp.csr_array:
    """The slack matrix W_kappa = kappa W + (1 - kappa) I, 0 < kappa <= 1 (THEORY.md §9.2, Lu et al. 2020).

    Its eigenvalues are kappa mu + 1 - kappa; 1 - lam(W_kappa) = kappa (1 - lam(W)) holds exactly under the
    condition of ``lazy_gap_is_exact``.
    """
    kappa = float(kappa)
    if not (0.0 < kappa <= 1.0):
        raise ValueError(f"kappa must lie in (0, 1]; got kappa={kappa!r}")
    W = as_csr(W)
    return sp.csr_array(kappa * W + (1.0 - kappa) * sp.eye_array(W.shape[0], format="csr"))


def lazy_gap_is_exact(lambda_2: float, lambda_n: float, kappa: float) -> bool:
    """Whether gap(lazy(W, kappa)) = kappa * gap(W) for a W with extreme non-trivial eigenvalues
    lambda_2 >= lambda_n (THEORY.md §9.2: "exactly, when lam is attained at lambda_2").

    The lazy spectrum is mu = kappa lambda + 1 - kappa. If lambda_2 >= -lambda_n (lam(W) = lambda_2), then
    mu_2 = 1 - kappa (1 - lambda_2) >= |mu_n| because kappa (lambda_2 + lambda_n) + 2 (1 - kappa) >= 0, so
    lam(W_kappa) = mu_2 and the gap scales by exactly kappa; W need not be positive semidefinite. If instead
    lam(W) = -lambda_n > lambda_2 and kappa < 1, both |mu_n| and mu_2 are < 1 - kappa + kappa lam and the
    lazy gap is strictly larger than kappa * gap(W). So the exact condition is kappa == 1 or
    lambda_2 >= -lambda_n.
    """
    return bool(kappa == 1.0 or lambda_2 >= -lambda_n)


def column_stochastic_matrix(G: nx.DiGraph) -> sp.csr_array:
    """Push-sum mixing matrix of a digraph (SGP): node j splits its mass equally over itself and its
    out-neighbours, P[i, j] = 1 / (1 + outdeg(j)) for i in {j} u out(j); columns sum to 1."""
    if not isinstance(G, nx.DiGraph):
        raise TypeError(f"column_stochastic_matrix needs a networkx.DiGraph; got {type(G).__name__}")
    n = node_order(G)
    e = np.array([(u, v) for u, v in G.edges if u != v], dtype=np.int64).reshape(-1, 2)
    outdeg = np.bincount(e[:, 0], minlength=n)
    share = 1.0 / (1.0 + outdeg)
    rows = np.concatenate([e[:, 1], np.arange(n)])
    cols = np.concatenate([e[:, 0], np.arange(n)])
    return sp.csr_array((share[cols], (rows, cols)), shape=(n, n))
