"""The effective number of neighbours n_eff(gamma) of a gossip value (Vogels, Hendrikx & Jaggi 2022).

The random walk x <- W_t (sqrt(gamma) x + z_t), z_t i.i.d. standard normal per worker (the noise enters
before W), has a stationary covariance Sigma(gamma), and

    n_eff(gamma) = 1 / ((1 - gamma) * mean_i Sigma_ii(gamma))

(``reduce="worst"``: max_i instead of the mean; ``"all"``: one value per worker). Exact averaging gives n at
every gamma, W = I gives 1. It measures one W at a decay gamma (the step size sets gamma), where the spectral
gap 1 - lam bounds the worst W of its class (docs/theory.md §19).

Methods: ``"eigh"`` (symmetric static W: Sigma = Q diag(lambda_k^2 / (1 - gamma lambda_k^2)) Q^T),
``"lyapunov"`` (static or periodic W: Sigma = gamma W Sigma W^T + W W^T for p = 1, by
``scipy.linalg.solve_discrete_lyapunov``) and ``"walk"`` (sparse random walks, seeded, relative standard
error sqrt(2 / probes) per worker; n in the tens of thousands).
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
import scipy.linalg
import scipy.sparse as sp
from decbounds.bounds.validation import require_choice, require_count, require_real, require_seed
from decbounds.instances.gossip import Gossip, GossipLike, as_gossip
from decbounds.instances.gossip_value import GossipMatrix
from decbounds.instances.matrices import as_csr
from decbounds.instances.schedules import GossipSchedule

__all__ = ["DENSE_LIMIT", "NEIGHBOUR_METHODS", "NEIGHBOUR_REDUCTIONS", "WALK_TOLERANCE",
           "effective_neighbours", "walk_variances"]

#: Largest n of the dense paths under ``method="auto"`` (eigh / Lyapunov cost n^3).
DENSE_LIMIT = 1000
NEIGHBOUR_METHODS: tuple[str, ...] = ("auto", "eigh", "lyapunov", "walk")
NEIGHBOUR_REDUCTIONS: tuple[str, ...] = ("mean", "worst", "all")
#: The walk's truncated tail: at most this fraction of the consensus part 1/(n (1 - gamma)) of Sigma_ii.
WALK_TOLERANCE = 1e-6
_ATOL = 1e-9


def _rounds_of(W: Gossip) -> list[sp.csr_array]:
    """The matrices of one period (one for a static W), checked doubly stochastic."""
    if isinstance(W, GossipSchedule):
        if W.period is None:
            raise ValueError(f"W is a schedule without a period ({W.name}): n_eff needs a periodic walk")
        rounds = [W.matrix(t) for t in range(W.period)]
    else:
        assert isinstance(W, GossipMatrix)
        rounds = [W.matrix]
    for t, M in enumerate(rounds):
        rows, columns = M.sum(axis=1), M.sum(axis=0)
        if not (np.allclose(rows, 1.0, atol=_ATOL) and np.allclose(columns, 1.0, atol=_ATOL)):
            where = f"round {t} of W" if len(rounds) > 1 else "W"
            raise ValueError(f"{where} is not a gossip matrix: the random walk needs rows and columns "
                             f"summing to 1 (row sums in [{rows.min():.4g}, {rows.max():.4g}], column sums "
                             f"in [{columns.min():.4g}, {columns.max():.4g}])")
    return rounds


def _as_value(W: GossipLike) -> Gossip:
    """W as a Gossip value: a symmetric matrix as ``as_gossip`` makes it, another one as a push W."""
    if isinstance(W, Gossip):
        return W
    if isinstance(W, (np.ndarray, sp.spmatrix, sp.sparray)):
        M = as_csr(W)
        if M.shape[0] == M.shape[1] and not _is_symmetric(M):  # directed: check it as the push W
            return as_gossip(M, kind="push")
    return as_gossip(W, allow_disconnected=True)  # n_eff needs no consensus: W = I gives 1


def _is_symmetric(M: sp.csr_array) -> bool:
    difference = (M - M.T).tocoo()
    return difference.nnz == 0 or float(np.abs(difference.data).max()) <= _ATOL


def _check_gamma(gamma: object) -> float:
    value = require_real("gamma", gamma, minimum=None)
    if not 0.0 <= value < 1.0:
        raise ValueError(f"gamma must be in [0, 1) (the walk's decay; 1 has no stationary covariance); "
                         f"got gamma={gamma!r}")
    return value


def _period_products(rounds: list[npt.NDArray[np.float64]], phase: int
                     ) -> list[npt.NDArray[np.float64]]:
    """P_r = W_{phase-1} ... W_{phase-1-r}, r = 0..p-1 (indices mod p): the last r + 1 rounds before the
    phase, P_{p-1} the whole period."""
    p = len(rounds)
    products = [rounds[(phase - 1) % p]]
    for r in range(1, p):
        products.append(products[-1] @ rounds[(phase - 1 - r) % p])
    return products


def _lyapunov_variances(rounds: list[sp.csr_array], gamma: float, phase: int) -> npt.NDArray[np.float64]:
    dense = [M.toarray() for M in rounds]
    products = _period_products(dense, phase)
    C = sum(gamma**r * P @ P.T for r, P in enumerate(products))
    Sigma = scipy.linalg.solve_discrete_lyapunov(math.sqrt(gamma ** len(dense)) * products[-1], C)
    return np.asarray(np.diag(Sigma), dtype=float)


def _eigh_variances(W: sp.csr_array, gamma: float) -> npt.NDArray[np.float64]:
    values, vectors = np.linalg.eigh(W.toarray())
    squared = values**2
    variances: npt.NDArray[np.float64] = (vectors**2) @ (squared / (1.0 - gamma * squared))
    return variances


def walk_variances(W: GossipLike, gamma: float, *, phase: int = 0, probes: int = 64,
                   seed: int | np.random.Generator = 0) -> npt.NDArray[np.float64]:
    """Per-probe estimates of Sigma_ii: ``probes`` independent walks of the disagreement, run with sparse
    products long enough that the neglected tail is below ``WALK_TOLERANCE`` of the consensus part.

    Parameters
    ----------
    W : instances.GossipLike
        A doubly stochastic W or a periodic schedule of them.
    gamma : float
        The decay, in [0, 1).
    phase : int, default 0
        The covariance after rounds ..., phase - 1 of the period (0: after a whole period).
    probes : int, default 64
    seed : int or numpy.random.Generator, default 0
    """
    gossip = _as_value(W)
    gamma = _check_gamma(gamma)
    rounds = _rounds_of(gossip)
    probes = require_count("probes", probes, 1)
    phase = require_count("phase", phase, 0)
    rng = np.random.default_rng(require_seed("seed", seed))
    n, p = gossip.n, len(rounds)
    consensus = 1.0 / (n * (1.0 - gamma))
    # the tail beyond T rounds is at most gamma^T / (1 - gamma) per entry (||W_t - J|| <= 1)
    needed = 0 if gamma == 0.0 else math.ceil(math.log(WALK_TOLERANCE / n) / math.log(gamma))
    periods = max(1, math.ceil((needed + 1) / p))
    x = np.zeros((n, probes))
    root = math.sqrt(gamma)
    for t in range(periods * p):
        z = rng.standard_normal((n, probes))
        z -= z.mean(axis=0)  # the disagreement part of the noise; W_t keeps it there (doubly stochastic)
        x = rounds[(phase + t) % p] @ (root * x + z)  # the last round applied is W_{phase-1}
    estimates: npt.NDArray[np.float64] = x**2 + consensus
    return estimates


def effective_neighbours(W: GossipLike, gamma: float, *, reduce: str = "mean", phase: int = 0,
                         method: str = "auto", probes: int = 64, seed: int | np.random.Generator = 0
                         ) -> float | npt.NDArray[np.float64]:
    """n_eff(gamma) = 1 / ((1 - gamma) mean_i Sigma_ii(gamma)) of the walk x <- W_t (sqrt(gamma) x + z_t)
    (Vogels, Hendrikx & Jaggi 2022, Sect. 3; module docstring, docs/theory.md §19).

    Parameters
    ----------
    W : instances.GossipLike
        A `GossipMatrix`, a periodic ``GossipSchedule``, or a matrix or graph (``as_gossip``).
    gamma : float
        The decay, in [0, 1).
    reduce : {"mean", "worst", "all"}, default "mean"
        Over workers: the mean variance, the largest, or each worker's n_eff.
    phase : int, default 0
        A schedule's covariance after rounds ..., phase - 1 of the period (0: after a whole period).
    method : {"auto", "eigh", "lyapunov", "walk"}, default "auto"
        "auto": "eigh" or "lyapunov" up to ``DENSE_LIMIT`` workers, "walk" beyond.
    probes : int, default 64
        Walks of ``method="walk"``.
    seed : int or numpy.random.Generator, default 0

    Examples
    --------
    >>> from decbounds import instances
    >>> ring = instances.gossip_matrix(instances.topology("ring", 16))
    >>> [round(effective_neighbours(ring, gamma), 3) for gamma in (0.0, 0.9, 0.99)]
    [3.0, 6.601, 13.119]
    """
    gossip = _as_value(W)
    gamma = _check_gamma(gamma)
    reduce = require_choice("reduce", reduce, NEIGHBOUR_REDUCTIONS)
    method = require_choice("method", method, NEIGHBOUR_METHODS)
    phase = require_count("phase", phase, 0)
    rounds = _rounds_of(gossip)
    symmetric = len(rounds) == 1 and _is_symmetric(rounds[0])
    if method == "auto":
        method = "walk" if gossip.n > DENSE_LIMIT else "eigh" if symmetric else "lyapunov"
    if method == "eigh" and not symmetric:
        raise ValueError("method='eigh' needs a symmetric static W; use 'lyapunov' or 'walk'")
    if method == "eigh":
        variances = _eigh_variances(rounds[0], gamma)
    elif method == "lyapunov":
        variances = _lyapunov_variances(rounds, gamma, phase)
    else:
        variances = walk_variances(gossip, gamma, phase=phase, probes=probes, seed=seed).mean(axis=1)
    scaled = (1.0 - gamma) * variances
    if reduce == "all":
        per_worker: npt.NDArray[np.float64] = 1.0 / scaled
        return per_worker
    return float(1.0 / (scaled.mean() if reduce == "mean" else scaled.max()))
