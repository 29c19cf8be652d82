"""Exact averaging in finitely many rounds (DeFacto, Lemma 3 / App. C.3) and multi-step gossip operators:
accelerated two-tap gossip (Alg. 3, §7) and Chebyshev gossip (§14), as coefficient schedules.

Orientation everywhere: rows are workers and a round acts as ``X <- F @ X`` on the worker axis 0.
"""

from __future__ import annotations

import warnings

import networkx as nx
import numpy as np
import scipy.sparse as sp
from decbounds.bounds.detag_params import accelerated_gossip_eta
from decbounds.bounds.validation import (
    require_array,
    require_choice,
    require_count,
    require_fraction,
    require_graph,
)
from decbounds.instances.gossip import MatrixLike, as_csr, second_eigenvalue
from decbounds.instances.graphs import node_order

__all__ = [
    "GOSSIP_METHODS",
    "GOSSIP_STARTS",
    "MAX_GOSSIP_STEPS",
    "accelerated_gossip",
    "chebyshev_gossip",
    "exact_averaging_factors",
    "gossip_schedule",
    "multi_step_gossip",
    "multi_step_gossip_coefficients",
    "multi_step_polynomial",
    "schedule_polynomial",
]

GOSSIP_METHODS: tuple[str, ...] = ("two_tap", "chebyshev", "plain")
GOSSIP_STARTS: tuple[str, ...] = ("paper", "plain")


# --------------------------------------------------------------------------------------------------------
# exact averaging: GATHER-PROPAGATE (Ko 2010; App. C.3, Alg. 5)


def exact_averaging_factors(G: nx.Graph) -> list[sp.csr_array]:
    """Factors F_0, ..., F_{R-1} supported on G plus the diagonal with F_{R-1} ... F_1 F_0 = 11^T/n (Lemma 3).

    GATHER-PROPAGATE (Ko 2010; App. C.3, Alg. 5) on a BFS spanning tree rooted at a centre: R = 2 * radius
    rounds, D <= R <= 2D. The factors are column stochastic, not gossip matrices (§5); the one-node graph
    gets one identity factor.
    Parameters
    ----------
    G : networkx.Graph
        Connected, undirected, on the nodes 0..n-1.

    Examples
    --------
    >>> factors = exact_averaging_factors(nx.path_graph(5))
    >>> product = np.eye(5)
    >>> for F in factors:
    ...     product = F @ product
    >>> len(factors), bool(np.allclose(product, 1 / 5))
    (4, True)
    """
    if isinstance(G, nx.Graph) and G.is_directed():
        raise TypeError("G must be an undirected networkx.Graph for exact_averaging_factors")
    require_graph("G", G)
    n = node_order(G)
    if n == 1:
        return [sp.csr_array(np.ones((1, 1)))]
    # a disconnected graph has no finite diameter D, so no exact averaging (the components are named)
    require_graph("G", G, connected=True)
    root = min(nx.center(G))
    parent: dict[int, int] = {}
    depth = {root: 0}
    for u, v in nx.bfs_edges(G, root):
        parent[v] = u
        depth[v] = depth[u] + 1
    height = max(depth.values())
    subtree = np.ones(n)
    for v in sorted(parent, key=depth.__getitem__, reverse=True):
        subtree[parent[v]] += subtree[v]
    by_depth: list[list[int]] = [[] for _ in range(height + 1)]
    for v, d in depth.items():
        by_depth[d].append(v)

    factors: list[sp.csr_array] = []
    for level in range(height, 0, -1):  # gather: level -> level - 1
        diag = np.ones(n)
        movers = np.array(by_depth[level])
        diag[movers] = 0.0
        rows = np.concatenate([np.arange(n), [parent[v] for v in movers]])
        cols = np.concatenate([np.arange(n), movers])
        vals = np.concatenate([diag, np.ones(len(movers))])
        factors.append(_csr(rows, cols, vals, n))
    children: dict[int, list[int]] = {u: [] for u in range(n)}
    for v, u in parent.items():
        children[u].append(v)
    for level in range(height):  # propagate: level -> level + 1
        diag = np.ones(n)
        child_rows: list[int] = []
        parent_cols: list[int] = []
        shares: list[float] = []
        for u in by_depth[level]:
            diag[u] = 1.0 / subtree[u]
            for v in children[u]:
                child_rows.append(v)
                parent_cols.append(u)
                shares.append(subtree[v] / subtree[u])
        rows_a = np.concatenate([np.arange(n), child_rows])
        cols_a = np.concatenate([np.arange(n), parent_cols])
        factors.append(_csr(rows_a, cols_a, np.concatenate([diag, shares]), n))
    return factors


def _csr(rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, n: int) -> sp.csr_array:
    F = sp.csr_array((np.asarray(vals, float), (np.asarray(rows, int), np.asarray(cols, int))), shape=(n, n))
    F.eliminate_zeros()
    return F


# --------------------------------------------------------------------------------------------------------
# multi-step gossip as a coefficient schedule


#: Most gossip steps one schedule holds (an (R, 2) array; R = 10**7 is 160 MB).
MAX_GOSSIP_STEPS = 10**7


def _check_R(R: object) -> int:
    return require_count("R", R, 0, maximum=MAX_GOSSIP_STEPS, what="gossip steps in one schedule")


def _check_lam(lam: object) -> float:
    # lam = max(|lambda_2|, |lambda_n|) of W
    return require_fraction("lam", lam)


def multi_step_gossip_coefficients(method: str, lam: float, R: int, *, eta: float | None = None,
                                   start: str = "paper") -> np.ndarray:
    """The (R, 2) coefficients (a_r, b_r), r < R, of z_{r+1} = a_r W z_r + b_r z_{r-1}, z_{-1} := z_0.

    - "two_tap" (Alg. 3, docs/theory.md §7.1): a = 1 + eta, b = -eta, eta = (1 - sqrt(1-lam^2)) / (1 +
      sqrt(1-lam^2)) unless given; ``start="plain"`` makes the first step plain gossip (docs/errata.md E18).
    - "chebyshev": z_R = p_R(W) z_0, p_R(t) = T_R(t/lam) / T_R(1/lam) (§14), by the three-term recurrence
      a_r = 2 c_r / (lam c_{r+1}), b_r = -c_{r-1} / c_{r+1}, c_r = T_r(1/lam) (a_0 = 1, b_0 = 0).
    - "plain": a = 1, b = 0.
    Every row has a_r + b_r = 1, so the average of z is kept exactly (to rounding).

    Parameters
    ----------
    method : {"two_tap", "chebyshev", "plain"}
    lam : float
        max(|lambda_2|, |lambda_n|) of W, in [0, 1).
    R : int
    eta : float, optional
        Two-tap momentum in [0, 1); default Alg. 3's formula.
    start : {"paper", "plain"}, optional
        First step of the two-tap recursion (default "paper", z_{-1} = z_0).

    Examples
    --------
    >>> multi_step_gossip_coefficients("two_tap", 0.5, 3, start="plain").round(4).tolist()
    [[1.0, 0.0], [1.0718, -0.0718], [1.0718, -0.0718]]
    """
    R = _check_R(R)
    lam = _check_lam(lam)
    method = require_choice("method", method, GOSSIP_METHODS)
    start = require_choice("start", start, GOSSIP_STARTS)
    schedule = np.zeros((R, 2))
    schedule[:, 0] = 1.0
    if method == "plain" or R == 0:
        return schedule
    if method == "two_tap":
        if eta is None:
            eta = accelerated_gossip_eta(lam)
        eta = require_fraction("eta", eta)
        schedule[:, 0] = 1.0 + eta
        schedule[:, 1] = -eta
        if start == "plain":
            schedule[0] = (1.0, 0.0)
        return schedule
    if eta is not None:
        raise ValueError("eta applies to method='two_tap' only; Chebyshev coefficients follow from lam")
    if lam == 0.0 or 2.0 / lam == np.inf:
        # 2/lam overflows for a subnormal lam; there every row is (1, -lam^2/4 -> 0) to rounding, the limit
        # p_R(t) = t^R (the fuzz suite found rows (0, -0) from the overflow)
        return schedule
    q = lam  # q_1 = c_0 / c_1 = 1 / (1/lam)
    for r in range(1, R):
        q_next = 1.0 / (2.0 / lam - q)  # q_{r+1} = c_r / c_{r+1}
        schedule[r] = (2.0 * q_next / lam, -q * q_next)
        q = q_next
    return schedule


def multi_step_gossip(W: MatrixLike, Z: np.ndarray, schedule: np.ndarray) -> np.ndarray:
    """Apply z_{r+1} = a_r W z_r + b_r z_{r-1} (z_{-1} := z_0) for each row (a_r, b_r) of ``schedule``.

    Parameters
    ----------
    W : numpy.ndarray or scipy.sparse matrix
    Z : numpy.ndarray
        Shape (n, *rest), the worker axis first.
    schedule : numpy.ndarray
        Shape (R, 2), from `multi_step_gossip_coefficients`.
    """
    W = as_csr(W)
    Z = require_array("Z", Z, finite=False)  # non-finite states are the caller's to detect (divergence)
    if Z.ndim == 0 or Z.shape[0] != W.shape[0]:
        raise ValueError(f"Z must have the worker axis first with n={W.shape[0]} rows; got shape {Z.shape}")
    schedule = require_array("schedule", schedule)
    if schedule.ndim != 2 or schedule.shape[1] != 2:
        raise ValueError(f"schedule must have shape (R, 2); got {schedule.shape}")
    flat = Z.reshape(Z.shape[0], -1)
    previous = current = flat
    # an overflow (W or Z near 1e308) leaves inf/nan entries, which the caller detects as divergence, as it
    # does for a non-finite Z: no RuntimeWarning
    with np.errstate(over="ignore", invalid="ignore"):
        for a, b in schedule:
            nxt = a * (W @ current)
            if b != 0.0:
                nxt += b * previous
            previous, current = current, nxt
    return np.array(current).reshape(Z.shape)


def accelerated_gossip(W: MatrixLike, Z: np.ndarray, R: int, *, lam: float | None = None,
                       eta: float | None = None, start: str = "paper") -> np.ndarray:
    """R steps of Alg. 3's two-tap gossip (docs/theory.md §7.1); lam defaults to ``second_eigenvalue(W)``.

    Parameters
    ----------
    W : numpy.ndarray or scipy.sparse matrix
    Z : numpy.ndarray
    R : int
    lam : float, optional
        The second largest eigenvalue modulus of W, in [0, 1); default ``second_eigenvalue(W)``.
    eta : float, optional
        The momentum coefficient; default Alg. 3's, from lam.
    start : {"paper", "plain"}
        z_{-1} = z_0 as printed, or a plain first gossip step (docs/errata.md E18).

    Examples
    --------
    >>> W = np.array([[0.5, 0.5, 0.0], [0.5, 0.0, 0.5], [0.0, 0.5, 0.5]])
    >>> z = accelerated_gossip(W, np.array([1.0, 0.0, 0.0]), 4, start="plain")
    >>> round(float(z.mean()), 12), bool(np.abs(z - 1 / 3).max() < 0.05)
    (0.333333333333, True)
    """
    if lam is None:
        lam = second_eigenvalue(W)
    return multi_step_gossip(W, Z, multi_step_gossip_coefficients("two_tap", lam, R, eta=eta, start=start))


def chebyshev_gossip(W: MatrixLike, Z: np.ndarray, R: int, *, lam: float | None = None) -> np.ndarray:
    """R steps of Chebyshev gossip z_R = T_R(W/lam) z_0 / T_R(1/lam) (docs/theory.md §14).

    Parameters
    ----------
    W : numpy.ndarray or scipy.sparse matrix
    Z : numpy.ndarray
    R : int
    lam : float, optional
        The second largest eigenvalue modulus of W, in (0, 1); default ``second_eigenvalue(W)``.
    """
    if lam is None:
        lam = second_eigenvalue(W)
    return multi_step_gossip(W, Z, multi_step_gossip_coefficients("chebyshev", lam, R))


def multi_step_polynomial(coefficients: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """p_R(mu) for eigenvalues mu: the R-step operator of ``multi_step_gossip`` is p_R(W), so for a symmetric
    W its consensus contraction ||p_R(W) - 11^T/n||_2 is max |p_R(mu)| over the non-trivial eigenvalues.

    Parameters
    ----------
    coefficients : numpy.ndarray, shape (R, 2)
        The rows (a_r, b_r) of `multi_step_gossip_coefficients`.
    mu : array_like

    Examples
    --------
    >>> multi_step_polynomial(multi_step_gossip_coefficients("plain", 0.0, 3), np.array([0.5, -0.5])).tolist()
    [0.125, -0.125]
    """
    return _polynomial(coefficients, mu, "coefficients")


def _polynomial(coefficients: np.ndarray, mu: np.ndarray, name: str) -> np.ndarray:
    mu = require_array("mu", mu)
    coefficients = require_array(name, coefficients)
    if coefficients.ndim != 2 or coefficients.shape[1] != 2:
        raise ValueError(f"{name} must have shape (R, 2); got {coefficients.shape}")
    previous = current = np.ones_like(mu)
    for a, b in coefficients:
        previous, current = current, a * mu * current + b * previous
    return current


# The names of the previous release: a "schedule" here is an array of coefficients, not a `GossipSchedule`.
def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"instances.{old} is deprecated; use instances.{new} (the same function)",
                  DeprecationWarning, stacklevel=3)


def gossip_schedule(method: str, lam: float, R: int, *, eta: float | None = None,
                    start: str = "paper") -> np.ndarray:
    """Deprecated alias of `multi_step_gossip_coefficients` (warns).

    Parameters
    ----------
    method : str
    lam : float
    R : int
    eta : float, optional
    start : str
    """
    _deprecated("gossip_schedule", "multi_step_gossip_coefficients")
    return multi_step_gossip_coefficients(method, lam, R, eta=eta, start=start)


def schedule_polynomial(schedule: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """Deprecated alias of `multi_step_polynomial` (warns).

    Parameters
    ----------
    schedule : numpy.ndarray
    mu : array_like
    """
    _deprecated("schedule_polynomial", "multi_step_polynomial")
    return _polynomial(schedule, mu, "schedule")
