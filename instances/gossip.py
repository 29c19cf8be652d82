"""Gossip matrices W and their spectra (docs/theory.md §1.6, §9.2, §14).

A gossip matrix is symmetric, doubly stochastic and supported on the graph plus the diagonal; the paper's
mixing parameter is lam = max(|lambda_2|, |lambda_n|) = ||W - 11^T/n||_2 and the spectral gap is 1 - lam.
Every function accepts a dense ``numpy.ndarray`` or any ``scipy.sparse`` matrix and returns
``scipy.sparse.csr_array`` where it returns a matrix. Row i is worker i = node i of the graph.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeAlias, cast, overload

import networkx as nx
import numpy as np
import scipy.sparse as sp
from decbounds.bounds.validation import require_bool, require_count, require_graph, require_real
from decbounds.instances.gossip_value import GOSSIP_KINDS, ExactAverage, Gossip, GossipMatrix
from decbounds.instances.graphs import node_order
from decbounds.instances.matrices import (  # re-exported (in __all__): the gossip API of this module
    DEFAULT_ATOL,
    DENSE_EIG_LIMIT,
    DENSE_REFERENCE_LIMIT,
    EIGEN_TOL,
    MatrixLike,
    as_csr,
    check_atol,
    check_symmetric_stochastic,
    extreme_eigenvalues,
    from_edge_weights,
    second_eigenvalue,
    spectral_gap,
)
from decbounds.instances.optimize import optimize_gossip
from decbounds.instances.schedules import GossipSchedule

from decbounds.registry import Registry

__all__ = [
    "DEFAULT_ATOL",
    "DENSE_EIG_LIMIT",
    "GOSSIP_KINDS",
    "WEIGHT_RULES",
    "ExactAverage",
    "Gossip",
    "GossipLike",
    "GossipMatrix",
    "MatrixLike",
    "as_csr",
    "as_gossip",
    "check_atol",
    "check_gossip",
    "check_symmetric_stochastic",
    "column_stochastic_matrix",
    "fdla",
    "fmmc",
    "from_edge_weights",
    "gossip_matrix",
    "lazy",
    "lazy_gap_is_exact",
    "max_degree",
    "metropolis",
    "path_matrix",
    "second_eigenvalue",
    "spectral_gap",
    "uniform",
]

#: The weight-rule registry: name -> rule ``(G, **options) -> scipy.sparse.csr_array``, filled below the
#: rules. ``WEIGHT_RULES.register(name, rule)`` makes a new rule known to `gossip_matrix` and the CLIs;
#: ``name in WEIGHT_RULES`` and iterating it give the names, as the tuple it replaces did.
WEIGHT_RULES: Registry[Callable[..., sp.csr_array]] = Registry("weight rule", field="weights",
                                                            group="decbounds.weight_rules")

#: What every public boundary that takes the paper's W accepts (``algorithms.run``, ``run_batch``, ``tune``,
#: ``pep.worst_case(W=...)``, the figures' helpers): a `Gossip` value -- a `GossipMatrix` or a
#: ``GossipSchedule`` -- used as it is, or a matrix or graph that `as_gossip`, the one conversion, turns into
#: a `GossipMatrix` once.
GossipLike: TypeAlias = Gossip | np.ndarray | sp.spmatrix | sp.sparray | nx.Graph


# --------------------------------------------------------------------------------------------------------
# validation


def check_gossip(W: MatrixLike, G: nx.Graph | None = None, *, nonnegative: bool = True,
                 atol: float = DEFAULT_ATOL) -> float:
    """Check that W is a gossip matrix (docs/theory.md §1) and return lam = ||W - 11^T/n||_2 < 1; the
    ValueError names the first property that fails.

    Parameters
    ----------
    W : GossipMatrix, numpy.ndarray or scipy.sparse matrix
    G : networkx.Graph, optional
        When given, W must be supported on its edges plus the diagonal.
    nonnegative : bool, optional
    atol : float, optional

    Examples
    --------
    >>> W = metropolis(nx.path_graph(4))
    >>> round(check_gossip(W, nx.path_graph(4)), 4)
    0.8047
    """
    nonnegative = require_bool("nonnegative", nonnegative)
    atol = check_atol(atol)
    if G is not None:
        require_graph("G", G)
    if isinstance(W, nx.Graph):
        raise TypeError("W must be a matrix (a graph is not a gossip matrix: build one with gossip_matrix)")
    gossip = W if isinstance(W, GossipMatrix) and W.kind != "push" else _symmetric(W, atol=atol)
    M = gossip.matrix
    if nonnegative and M.nnz and M.data.min() < -atol:
        raise ValueError(f"W is not non-negative: min entry {M.data.min():.3g} < -atol={atol:g} "
                         "(pass nonnegative=False for FDLA)")
    if G is not None:
        _check_support(M, G, atol)
    assert gossip.lam is not None
    _check_connected(gossip.lam)
    return gossip.lam


def _symmetric(W: MatrixLike, *, atol: float = DEFAULT_ATOL, cayley: tuple[int, ...] | None = None,
               tol: float = EIGEN_TOL) -> GossipMatrix:
    """W checked (square, symmetric, rows summing to 1) and decomposed once, as a symmetric GossipMatrix."""
    if (sp.issparse(W) or isinstance(W, np.ndarray)) and (len(W.shape) != 2 or W.shape[0] != W.shape[1]):
        raise ValueError(f"W is not square: shape {W.shape}")
    M = as_csr(W)
    if id(M) == id(W):  # as_csr shares a csr_array it is given: the value keeps its own read-only copy
        M = M.copy()
    M.sum_duplicates()
    check_symmetric_stochastic(M, atol)
    lambda_2, lambda_n, method = extreme_eigenvalues(M, cayley=cayley, tol=tol)
    return _frozen(M, "symmetric", lambda_2, lambda_n, method)


def _frozen(M: sp.csr_array, kind: str, lambda_2: float | None, lambda_n: float | None,
            method: str) -> GossipMatrix:
    for array in (M.data, M.indices, M.indptr):
        array.flags.writeable = False
    return GossipMatrix(M, kind, lambda_2, lambda_n, method)


def _check_support(M: sp.csr_array, G: nx.Graph, atol: float) -> None:
    n = M.shape[0]
    if node_order(G) != n:
        raise ValueError(f"W support is not inside G: W is {n} x {n} but G has "
                         f"{G.number_of_nodes()} nodes")
    coo = sp.coo_array(M)
    off = (coo.row != coo.col) & (np.abs(coo.data) > atol)
    edges = set(G.edges)
    for i, j in zip(coo.row[off].tolist(), coo.col[off].tolist(), strict=True):
        if (i, j) not in edges and (j, i) not in edges:
            raise ValueError(f"W support is not inside G: W[{i}, {j}] = {M[i, j]:.3g} but ({i}, {j}) "
                             "is not an edge")


def _check_connected(lam: float, allow_disconnected: bool = False) -> None:
    if not lam <= 1.0 + 1e-9:  # a rounding of a lam = 1 matrix passes
        raise ValueError(f"W is not a gossip matrix: lam = max(|lambda_2|, |lambda_n|) = {lam:.12g} > 1 (an "
                         "eigenvalue outside [-1, 1]: W amplifies disagreement; allow_disconnected admits "
                         "lam = 1 at most)")
    if not allow_disconnected and not lam < 1.0 - 1e-12:
        raise ValueError(f"W is not connected: lam = max(|lambda_2|, |lambda_n|) = {lam:.12g} is not < 1 "
                         "(disconnected graph, or a periodic W with eigenvalue -1)")


@overload
def as_gossip(W: GossipSchedule, n: int | None = None, *, kind: str = "symmetric",
              atol: float = DEFAULT_ATOL, allow_disconnected: bool = False) -> GossipSchedule: ...


@overload
def as_gossip(W: GossipMatrix | np.ndarray | sp.spmatrix | sp.sparray | nx.Graph | None,
              n: int | None = None, *, kind: str = "symmetric", atol: float = DEFAULT_ATOL,
              allow_disconnected: bool = False) -> GossipMatrix: ...


@overload
def as_gossip(W: Gossip, n: int | None = None, *, kind: str = "symmetric",
              atol: float = DEFAULT_ATOL, allow_disconnected: bool = False) -> Gossip: ...


def as_gossip(W: GossipLike | None, n: int | None = None, *, kind: str = "symmetric",
              atol: float = DEFAULT_ATOL, allow_disconnected: bool = False) -> Gossip:
    """W as the validated `Gossip` value of ``kind`` (a `Gossip` value is returned as it is): "symmetric"
    (lam < 1 unless ``allow_disconnected``; a graph gives Metropolis), "push" (column stochastic; a graph
    gives `column_stochastic_matrix`) or "exact" (the all-reduce 11^T/n, an `ExactAverage`).

    Parameters
    ----------
    W : Gossip, numpy.ndarray, scipy.sparse matrix or networkx.Graph
    n : int, optional
        The number of workers W must fit (checked when given).
    kind : {"symmetric", "push", "exact"}, default "symmetric"
    atol : float, default 1e-9
    allow_disconnected : bool, default False
        Accept a symmetric W with lam = 1 (never lam > 1).

    Examples
    --------
    >>> W = as_gossip(np.full((4, 4), 0.25))
    >>> W.lam, W.kind
    (0.0, 'symmetric')
    """
    if kind not in GOSSIP_KINDS:
        raise ValueError(f"kind must be one of {GOSSIP_KINDS}; got kind={kind!r}")
    allow_disconnected = require_bool("allow_disconnected", allow_disconnected)
    if isinstance(W, GossipSchedule):
        return _fitting_schedule(W, n, kind)
    if kind == "exact" and W is None:
        if n is None:
            raise ValueError("n is required for an exact-averaging GossipMatrix without W")
        return ExactAverage(require_count("n", n, 1))
    if W is None:
        what = ("SGP pushes with a column-stochastic matrix (or pass a DiGraph)" if kind == "push" else
                "this algorithm gossips with a symmetric doubly stochastic W")
        raise ValueError(f"W is required: {what}")
    if isinstance(W, GossipMatrix) and kind == "push" and W.kind != "push":
        gossip = _push(W.matrix, atol)  # a non-negative symmetric W also pushes: columns sum to 1
    elif isinstance(W, GossipMatrix):
        if W.kind == "push" and kind != "push":
            raise ValueError(f"W is a push GossipMatrix; this needs a {kind} one")
        gossip = W
    elif isinstance(W, Gossip):  # a Gossip of neither member: the engine could not execute it
        raise TypeError(f"W must be a GossipMatrix or a GossipSchedule; got a Gossip of type "
                        f"{type(W).__name__}")
    elif kind == "push":
        gossip = _push(W, atol)
    elif isinstance(W, nx.Graph):
        gossip = gossip_matrix(W, allow_disconnected=allow_disconnected)
    else:
        gossip = _symmetric(W, atol=atol)
        assert gossip.lam is not None
        _check_connected(gossip.lam, allow_disconnected)
    if n is not None and gossip.shape != (n, n):
        raise ValueError(f"W shape mismatch: the problem has n={n} workers but W is "
                         f"{gossip.shape[0]} x {gossip.shape[1]}")
    return gossip


def _fitting_schedule(W: GossipSchedule, n: int | None, kind: str) -> GossipSchedule:
    """A schedule checked for n and for the kind of its rounds (they were checked when built)."""
    if n is not None and W.n != n:
        raise ValueError(f"W shape mismatch: the problem has n={n} workers but the schedule {W.name} has "
                         f"n={W.n}")
    if kind == "exact" or (kind == "symmetric" and W.kind != "symmetric"):
        raise ValueError(f"W is a GossipSchedule of kind {W.kind!r} ({W.name}); this needs a {kind} W")
    return W


def _push(W: MatrixLike | nx.Graph, atol: float) -> GossipMatrix:
    if isinstance(W, nx.Graph):
        W = column_stochastic_matrix(W if W.is_directed() else W.to_directed())
    P = as_csr(W, "W")
    if id(P) == id(W):  # as_csr shares a csr_array it is given: the value keeps its own copy
        P = P.copy()
    P.sum_duplicates()
    if P.nnz and P.data.min() < -atol:
        raise ValueError(f"W is not non-negative (push-sum weights): min entry {P.data.min():.3g}")
    deviation = float(np.max(np.abs(P.sum(axis=0) - 1.0)))
    if deviation > atol:
        raise ValueError(f"W is not column-stochastic: max |1^T W - 1^T| = {deviation:.3g} > {atol:g}")
    return _frozen(P, "push", None, None, "none (push)")


# --------------------------------------------------------------------------------------------------------
# weight rules


def _edge_arrays(G: nx.Graph) -> tuple[int, np.ndarray, np.ndarray]:
    if isinstance(G, nx.Graph) and G.is_directed():
        raise TypeError("G must be an undirected networkx.Graph for gossip_matrix (use "
                        "column_stochastic_matrix for a DiGraph)")
    require_graph("G", G)
    n = node_order(G)
    # (u, v) pairs only: a multigraph was refused above, so no edge key can be read as a node
    e = np.array([(u, v) for u, v in G.edges() if u != v], dtype=np.int64).reshape(-1, 2)
    return n, e[:, 0], e[:, 1]


def metropolis(G: nx.Graph) -> sp.csr_array:
    """Metropolis-Hastings weights W_ij = 1 / (1 + max(d_i, d_j)) on edges (docs/theory.md §9.2, §12).

    Parameters
    ----------
    G : networkx.Graph

    Examples
    --------
    >>> metropolis(nx.path_graph(3)).toarray().round(3).tolist()
    [[0.667, 0.333, 0.0], [0.333, 0.333, 0.333], [0.0, 0.333, 0.667]]
    """
    n, u, v = _edge_arrays(G)
    deg = np.bincount(np.concatenate([u, v]), minlength=n)
    return from_edge_weights(n, u, v, 1.0 / (1.0 + np.maximum(deg[u], deg[v])))


def max_degree(G: nx.Graph) -> sp.csr_array:
    """Constant edge weight 1 / (d_max + 1).

    Parameters
    ----------
    G : networkx.Graph

    Examples
    --------
    >>> max_degree(nx.star_graph(3)).toarray()[1].tolist()
    [0.25, 0.75, 0.0, 0.0]
    """
    n, u, v = _edge_arrays(G)
    deg = np.bincount(np.concatenate([u, v]), minlength=n)
    return from_edge_weights(n, u, v, np.full(u.shape, 1.0 / (1.0 + deg.max(initial=0))))


def uniform(G: nx.Graph) -> sp.csr_array:
    """Equal weight 1/(d+1) on self and on each neighbour; only for d-regular graphs (else not stochastic).

    Parameters
    ----------
    G : networkx.Graph

    Examples
    --------
    >>> uniform(nx.cycle_graph(6)).toarray()[0].round(3).tolist()
    [0.333, 0.333, 0.0, 0.0, 0.0, 0.333]
    """
    n, u, v = _edge_arrays(G)
    deg = np.bincount(np.concatenate([u, v]), minlength=n)
    if len(deg) and deg.min() != deg.max():
        raise ValueError(f"weights='uniform' needs a regular graph; degrees range {deg.min()}..{deg.max()}")
    return from_edge_weights(n, u, v, np.full(u.shape, 1.0 / (1.0 + deg.max(initial=0))))


def path_matrix(G: nx.Graph) -> sp.csr_array:
    """The Cor. 2 path matrix: W_{i,i+-1} = 1/2, end nodes keep 1/2; eigenvalues cos(pi k/n), lam = cos(pi/n).

    Parameters
    ----------
    G : networkx.Graph

    Examples
    --------
    >>> bool(np.isclose(second_eigenvalue(path_matrix(nx.path_graph(8))), np.cos(np.pi / 8)))
    True
    """
    n, u, v = _edge_arrays(G)
    deg = np.bincount(np.concatenate([u, v]), minlength=n)
    if n > 1 and (len(u) != n - 1 or deg.max() > 2 or not nx.is_connected(G)):
        raise ValueError("weights='path' needs a path graph (connected, n-1 edges, max degree 2)")
    return from_edge_weights(n, u, v, np.full(u.shape, 0.5))


def fdla(G: nx.Graph, **options: object) -> sp.csr_array:
    """Fastest distributed linear averaging (Xiao & Boyd 2004): the W of least lam; entries may be negative.

    Parameters
    ----------
    G : networkx.Graph
        Connected, simple, undirected, on the nodes 0..n-1.
    **options
        Passed to `instances.optimize.optimize_gossip`.

    Examples
    --------
    >>> W = fdla(nx.star_graph(4), cache=False)  # FMMC's lam on this star is 0.75
    >>> round(second_eigenvalue(W), 4), round(float(W.toarray().min()), 4)
    (0.6667, -0.3333)
    """
    return optimize_gossip(G, "fdla", **cast("dict[str, Any]", options)).W  # optimize_gossip checks them


def fmmc(G: nx.Graph, **options: object) -> sp.csr_array:
    """Fastest-mixing Markov chain (Boyd, Diaconis & Xiao 2004): the non-negative W of least lam.

    Parameters
    ----------
    G, **options

    Examples
    --------
    >>> round(second_eigenvalue(fmmc(nx.path_graph(4), cache=False)), 4)
    0.7071
    """
    return optimize_gossip(G, "fmmc", **cast("dict[str, Any]", options)).W  # optimize_gossip checks them


WEIGHT_RULES.register("metropolis", metropolis)
WEIGHT_RULES.register("max_degree", max_degree)
WEIGHT_RULES.register("uniform", uniform)
WEIGHT_RULES.register("fdla", fdla)
WEIGHT_RULES.register("fmmc", fmmc)
WEIGHT_RULES.register("path", path_matrix)


def gossip_matrix(G: nx.Graph, weights: str = "metropolis", *, allow_disconnected: bool = False,
                  **options: object) -> GossipMatrix:
    """A symmetric doubly stochastic W supported on G plus the diagonal, as a validated `GossipMatrix` (lam
    and extreme eigenvalues computed once). ``weights`` names a rule of ``WEIGHT_RULES``: "metropolis",
    "max_degree", "uniform", "path" (Cor. 2), "fdla", "fmmc" (``instances.optimize``), or a registered one.

    Parameters
    ----------
    G : networkx.Graph
        Simple, undirected, on the nodes 0..n-1; connected unless ``allow_disconnected``.
    weights : str, default "metropolis"
    allow_disconnected : bool, default False
        Return the W of a disconnected G (lam = 1) instead of refusing it.
    **options

    Examples
    --------
    >>> W = gossip_matrix(nx.path_graph(3))
    >>> W.toarray().round(3).tolist()
    [[0.667, 0.333, 0.0], [0.333, 0.333, 0.333], [0.0, 0.333, 0.667]]
    """
    rule = WEIGHT_RULES[weights]
    allow_disconnected = require_bool("allow_disconnected", allow_disconnected)
    if isinstance(G, nx.Graph) and G.is_directed():
        raise TypeError("G must be an undirected networkx.Graph for gossip_matrix (use "
                        "column_stochastic_matrix for a DiGraph)")
    require_graph("G", G)
    node_order(G)
    if not allow_disconnected:
        require_graph("G", G, connected=True)
    W = WEIGHT_RULES.build(rule.name, G, **options)
    cayley = G.graph.get("cayley")
    return _symmetric(W, cayley=None if cayley is None else tuple(cayley))


def lazy(W: MatrixLike, kappa: float) -> GossipMatrix:
    r"""The slack matrix :math:`W_\kappa = \kappa W + (1 - \kappa) I`, :math:`0 < \kappa \le 1` (§9.2,
    Lu et al. 2020); its gap is kappa (1 - lam(W)) exactly when `lazy_gap_is_exact`.

    Parameters
    ----------
    W : GossipMatrix, array_like or sparse matrix
    kappa : float

    Examples
    --------
    >>> lazy(np.array([[0.0, 1.0], [1.0, 0.0]]), 0.5).toarray().tolist()
    [[0.5, 0.5], [0.5, 0.5]]
    """
    kappa = require_real("kappa", kappa, maximum=1.0)
    M = as_csr(W)
    slack = sp.csr_array(kappa * M + (1.0 - kappa) * sp.eye_array(M.shape[0], format="csr"))
    if (isinstance(W, GossipMatrix) and W.kind != "push" and W.lambda_2 is not None
            and W.lambda_n is not None and W.n > DENSE_REFERENCE_LIMIT):
        slack.sum_duplicates()
        return _frozen(slack, "symmetric", kappa * W.lambda_2 + 1.0 - kappa, kappa * W.lambda_n + 1.0 - kappa,
                       f"{W.spectrum_method}, made lazy")
    return _symmetric(slack)


def lazy_gap_is_exact(lambda_2: float, lambda_n: float, kappa: float) -> bool:
    """Whether gap(lazy(W, kappa)) = kappa * gap(W) for a W with extreme non-trivial eigenvalues
    lambda_2 >= lambda_n (docs/theory.md §9.2: "exactly, when lam is attained at lambda_2").

    Parameters
    ----------
    lambda_2, lambda_n : float
        The largest and the smallest eigenvalue of W other than the 1 of the consensus direction.
    kappa : float
    """
    lambda_2 = require_real("lambda_2", lambda_2, minimum=-1.0, allow_minimum=True, maximum=1.0)
    lambda_n = require_real("lambda_n", lambda_n, minimum=-1.0, allow_minimum=True, maximum=lambda_2)
    kappa = require_real("kappa", kappa, maximum=1.0)
    return bool(kappa == 1.0 or lambda_2 >= -lambda_n)


def column_stochastic_matrix(G: nx.DiGraph) -> sp.csr_array:
    """Push-sum mixing matrix of a digraph (SGP): node j splits its mass equally over itself and its
    out-neighbours, P[i, j] = 1 / (1 + outdeg(j)) for i in {j} u out(j); columns sum to 1.

    Parameters
    ----------
    G : networkx.DiGraph

    Examples
    --------
    >>> column_stochastic_matrix(nx.DiGraph([(0, 1), (1, 2), (2, 0)])).toarray()
    array([[0.5, 0. , 0.5],
           [0.5, 0.5, 0. ],
           [0. , 0.5, 0.5]])
    """
    if not isinstance(G, nx.DiGraph):
        raise TypeError(f"column_stochastic_matrix needs a networkx.DiGraph; got {type(G).__name__}")
    require_graph("G", G, directed=True)
    n = node_order(G)
    e = np.array([(u, v) for u, v in G.edges if u != v], dtype=np.int64).reshape(-1, 2)
    outdeg = np.bincount(e[:, 0], minlength=n)
    share = 1.0 / (1.0 + outdeg)
    rows = np.concatenate([e[:, 1], np.arange(n)])
    cols = np.concatenate([e[:, 0], np.arange(n)])
    return sp.csr_array((share[cols], (rows, cols)), shape=(n, n))
