"""Time, not iterations: the time lower bounds of Tyurin & Richtárik (NeurIPS 2024, arXiv 2405.16218) and
the methods' times (docs/time.md).

Accuracy is theirs, E||grad f||^2 <= eps (``grad_norm_sq``; ``convention="grad_norm"`` takes Lu & De Sa's).
A cluster is anything with ``compute_times`` h (n,) and ``link_times`` rho (n, n) (`TimedCluster`). The
Omega constants the paper leaves unstated are set to 1, so a value is the bound's expression, not a
certified floor; the certified floor on the zero chain is `level_game_times` (App. E.3).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Protocol, runtime_checkable

import numpy as np
from decbounds.bounds.constants import ZERO_CHAIN_GRAD_INF, ZERO_CHAIN_RANGE, ZERO_CHAIN_SMOOTHNESS
from decbounds.bounds.validation import (
    as_generator,
    require_choice,
    require_count,
    require_positive,
    require_real,
)
from scipy.sparse import csgraph

__all__ = [
    "DATA_KINDS",
    "TIME_BOUNDS",
    "TimeBound",
    "TimedCluster",
    "chain_time_lower_bound",
    "equilibrium_time",
    "fragile_pivot",
    "level_game_times",
    "seconds_per_iteration",
    "shortest_path_times",
    "slowest_link",
    "time_lower_bound",
]

DATA_KINDS = ("homogeneous", "heterogeneous")


@runtime_checkable
class TimedCluster(Protocol):
    """What the time bounds read of a cluster: h (n,) seconds per gradient, rho (n, n) seconds per link."""

    compute_times: np.ndarray
    link_times: np.ndarray


def shortest_path_times(link_times: np.ndarray) -> np.ndarray:
    """tau_{i->j}, shape (n, n) with zero diagonal: shortest-path times over the links rho, eq. (2).

    Parameters
    ----------
    link_times : numpy.ndarray
        rho, shape (n, n); inf is no link.
    """
    graph = csgraph.csgraph_from_dense(np.asarray(link_times, dtype=float), null_value=np.inf)
    return np.asarray(csgraph.shortest_path(graph, directed=True))


def _read(cluster: TimedCluster) -> tuple[np.ndarray, np.ndarray]:
    """(h, tau) of ``cluster``, checked."""
    if not (hasattr(cluster, "compute_times") and hasattr(cluster, "link_times")):
        raise TypeError(f"cluster must have compute_times and link_times (e.g. instances.Cluster); got "
                        f"{type(cluster).__name__}")
    h = np.asarray(cluster.compute_times, dtype=float)
    if h.ndim != 1 or h.size == 0 or not np.all(np.isfinite(h)) or np.any(h <= 0):
        raise ValueError("cluster.compute_times must be a non-empty vector of finite positive seconds")
    tau = getattr(cluster, "shortest_paths", None)
    if tau is None:
        tau = shortest_path_times(cluster.link_times)
    tau = np.asarray(tau, dtype=float)
    if tau.shape != (h.size, h.size):
        raise ValueError(f"cluster.link_times must be ({h.size}, {h.size}); got {tau.shape}")
    return h, tau


def equilibrium_time(s: float, h: np.ndarray, tau_bar: np.ndarray) -> np.ndarray:
    """t*(s, h, tau_bar) of Definition 2, for one tau_bar (n,) or one per column (n, m); exact, O(n log n).

    t* = min_k max{ max(tau_bar, h)_(k), s / sum_{i<=k} 1/h_(i) }, workers sorted by max(tau_bar_i, h_i).

    Parameters
    ----------
    s, h, tau_bar : float, numpy.ndarray, numpy.ndarray
        s >= 0 (sigma^2/eps in Thm 1); compute times (n,); distances to the pivot, (n,) or (n, m).

    Examples
    --------
    >>> float(equilibrium_time(4.0, np.array([1.0, 1.0, 100.0]), np.zeros(3)))
    2.0
    """
    h = np.asarray(h, dtype=float)
    tau_bar = np.asarray(tau_bar, dtype=float)
    column = tau_bar.ndim == 1
    tb = tau_bar[:, None] if column else tau_bar
    key = np.maximum(tb, h[:, None])
    order = np.argsort(key, axis=0, kind="stable")
    sorted_key = np.take_along_axis(key, order, axis=0)
    rates = np.cumsum(1.0 / h[order], axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        noise = np.where(s > 0, s / rates, 0.0)
    best = np.min(np.maximum(sorted_key, noise), axis=0)
    return np.asarray(best[0] if column else best)


def _eps(epsilon: float, convention: str) -> float:
    epsilon = require_positive("epsilon", epsilon)
    convention = require_choice("convention", convention, ("grad_norm_sq", "grad_norm"))
    return epsilon**2 if convention == "grad_norm" else epsilon


def _scale(L: float, Delta: float, sigma: float, epsilon: float, convention: str) -> tuple[float, float]:
    """(L Delta / eps, sigma^2 / eps) in the paper's squared convention."""
    eps = _eps(epsilon, convention)
    scale = require_positive("L", L) * require_positive("Delta", Delta) / eps
    return scale, require_real("sigma", sigma, allow_zero=True) ** 2 / eps


def time_lower_bound(cluster: TimedCluster, *, L: float, Delta: float, sigma: float, epsilon: float,
                     data: str = "homogeneous", convention: str = "grad_norm_sq",
                     constant: str = "free") -> float:
    """Seconds any zero-respecting method needs on ``cluster`` (Tyurin & Richtárik 2024); inf if unreachable.

    homogeneous (Thm 1, eq. (8)): (L Delta / eps) / (ln n + 1) * min_j t*(sigma^2/eps, h, tau_{.->j});
    heterogeneous (Thm 7, Table 2): (L Delta / eps) * max{max tau, max h, (sigma^2/(n eps)) mean h}.
    ``constant="free"`` sets the unstated Omega constant to 1; ``"proof"`` (homogeneous) puts in Thm 19's hard
    instance (eqs. (35), (36); `chain_time_lower_bound`).

    Parameters
    ----------
    cluster : TimedCluster
        h and rho (e.g. ``instances.Cluster``).
    L, Delta, sigma, epsilon : float
        Smoothness, f(x0) - inf f, oracle standard deviation, accuracy (in ``convention``).
    data : {"homogeneous", "heterogeneous"}
        Every worker samples f, or worker i its own f_i.
    convention : {"grad_norm_sq", "grad_norm"}
        E||grad f||^2 <= eps, or E||grad f|| <= eps.
    constant : {"free", "proof"}
        c = 1, or the proof's hard-instance constants.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> cluster = SimpleNamespace(compute_times=np.ones(4), link_times=np.zeros((4, 4)))
    >>> round(time_lower_bound(cluster, L=1, Delta=1, sigma=2, epsilon=0.5), 4)  # (2/(ln 4+1)) * 2
    1.6762
    """
    h, tau = _read(cluster)
    data = require_choice("data", data, DATA_KINDS)
    constant = require_choice("constant", constant, ("free", "proof"))
    scale, s = _scale(L, Delta, sigma, epsilon, convention)
    n = h.size
    if data == "heterogeneous":
        if constant == "proof":
            raise ValueError("constant='proof' is defined for data='homogeneous' (Thm 19's construction)")
        return float(scale * max(tau.max(), h.max(), s / n * h.mean()))
    if constant == "proof":
        chain = math.floor(scale / (2 * ZERO_CHAIN_SMOOTHNESS * ZERO_CHAIN_RANGE))
        p = 1.0 if s == 0 else min(2 * ZERO_CHAIN_GRAD_INF**2 / s, 1.0)
        return chain_time_lower_bound(cluster, chain_length=chain, p=p) if chain >= 1 else 0.0
    return float(scale / (math.log(n) + 1.0) * equilibrium_time(s, h, tau).min())


def chain_time_lower_bound(cluster: TimedCluster, *, chain_length: int, p: float) -> float:
    """Thm 19's bound in seconds on a zero chain of length T, reveal probability p, c = 1:
    T / (ln n + 1) * min_j t*(1/p, h, tau_{.->j}) (Lemma 2 bounds the level game's y^T by it).

    Parameters
    ----------
    cluster : TimedCluster
        The cluster.
    chain_length, p : int, float
        T >= 0 and the reveal probability in (0, 1].
    """
    h, tau = _read(cluster)
    T = require_count("chain_length", chain_length)
    p = require_real("p", p, minimum=0.0, maximum=1.0)
    if p == 0:
        raise ValueError("p must be in (0, 1]; got p=0")
    return float(T / (math.log(h.size) + 1.0) * equilibrium_time(1.0 / p, h, tau).min())


def fragile_pivot(cluster: TimedCluster, s: float) -> int:
    """Cor. 1's pivot j* = argmin_j t*(s, h, tau_{.->j} + tau_{j->.}).

    Parameters
    ----------
    cluster : TimedCluster
        The cluster.
    s : float
        sigma^2 / eps (Fragile's batch size S).
    """
    h, tau = _read(cluster)
    return int(np.argmin(equilibrium_time(s, h, tau + tau.T)))


def _fragile(cluster: TimedCluster, *, L: float, Delta: float, sigma: float, epsilon: float,
             convention: str = "grad_norm_sq") -> float:
    """Fragile SGD, Cor. 1 eq. (11): (L Delta / eps) min_j t*(sigma^2/eps, h, tau_{.->j} + tau_{j->.})."""
    h, tau = _read(cluster)
    scale, s = _scale(L, Delta, sigma, epsilon, convention)
    return float(scale * equilibrium_time(s, h, tau + tau.T).min())


def _amelie(cluster: TimedCluster, *, L: float, Delta: float, sigma: float, epsilon: float,
            convention: str = "grad_norm_sq") -> float:
    """Amelie SGD, Cor. 2 eq. (18): the heterogeneous lower bound's expression (optimal)."""
    return time_lower_bound(cluster, L=L, Delta=Delta, sigma=sigma, epsilon=epsilon, data="heterogeneous",
                            convention=convention)


def _rennala(cluster: TimedCluster, *, L: float, Delta: float, sigma: float, epsilon: float,
             convention: str = "grad_norm_sq") -> float:
    """Rennala SGD without communication cost, eq. (5) (Tyurin & Richtárik 2023), h sorted ascending:
    min_m ((1/m) sum_{i<=m} 1/h_(i))^-1 (L Delta/eps + sigma^2 L Delta/(m eps^2)); in [1, 2] times
    (L Delta/eps) t*(sigma^2/eps, h, 0). The links are ignored."""
    h = np.sort(_read(cluster)[0])
    scale, s = _scale(L, Delta, sigma, epsilon, convention)
    m = np.arange(1, h.size + 1)
    return float(scale * np.min((m + s) / np.cumsum(1.0 / h)))


def _minibatch(cluster: TimedCluster, *, L: float, Delta: float, sigma: float, epsilon: float,
               convention: str = "grad_norm_sq") -> float:
    """Minibatch SGD via a pivot, eq. (6), Table 2: max{max tau, max h} (L Delta/eps)(1 + sigma^2/(n eps))."""
    h, tau = _read(cluster)
    scale, s = _scale(L, Delta, sigma, epsilon, convention)
    return float(max(tau.max(), h.max()) * scale * (1.0 + s / h.size))


def seconds_per_iteration(cluster: TimedCluster, *, batch: int = 1, rounds: float = 1.0,
                          edges: np.ndarray | None = None) -> float:
    """Seconds of one synchronous iteration: the slowest worker's ``batch`` gradients plus ``rounds`` times
    the slowest link in ``edges`` (default every link). A catalog rate's T_eps times this is its time.

    Parameters
    ----------
    cluster : TimedCluster
        The cluster (its h as fixed times).
    batch : int
        B gradients per worker.
    rounds : float
        Communication rounds per iteration.
    edges : numpy.ndarray, optional
        (n, n) boolean, the directed links a round uses.
    """
    h, _ = _read(cluster)
    link = slowest_link(cluster.link_times, edges)
    return require_count("batch", batch, minimum=1) * float(h.max()) + require_real(
        "rounds", rounds, allow_zero=True) * link


def slowest_link(link_times: np.ndarray, edges: np.ndarray | None = None) -> float:
    """max rho_{i->j} over the off-diagonal ``edges`` (default every existing link): 0 without any, inf if
    ``edges`` asks for a missing link.

    Parameters
    ----------
    link_times : numpy.ndarray
        rho (n, n).
    edges : numpy.ndarray, optional
        (n, n) boolean: the links a round uses.
    """
    rho = np.asarray(link_times, dtype=float)
    used = rho < np.inf if edges is None else np.asarray(edges, dtype=bool)
    used = used & ~np.eye(rho.shape[0], dtype=bool)
    return float(rho[used].max()) if used.any() else 0.0


def level_game_times(cluster: TimedCluster, *, chain_length: int, p: float, draws: int = 64,
                     seed: int | np.random.Generator = 0) -> np.ndarray:
    """(draws,) draws of y^T in seconds, the proof's time series (App. E.3): the earliest time any worker can
    hold progress T.

    y^k_j = min_i (y^{k-1}_i + h_i eta^k_i + tau_{i->j}), eta ~ Geometric(p), y^0 = 0, y^T = min_j y^T_j. No
    zero-respecting method reaches progress T earlier on the same coins; eta >= 1 gives the floor T min_i h_i.

    Parameters
    ----------
    cluster : TimedCluster
        The cluster (its h as fixed times).
    chain_length, p : int, float
        T >= 1 and the reveal probability in (0, 1].
    draws : int
        Independent draws.
    seed : int or numpy.random.Generator
        The coins.
    """
    h, tau = _read(cluster)
    T = require_count("chain_length", chain_length, minimum=1)
    draws = require_count("draws", draws, minimum=1)
    p = require_real("p", p, minimum=0.0, maximum=1.0)
    if p == 0:
        raise ValueError("p must be in (0, 1]; got p=0")
    rng = as_generator("seed", seed)
    y = np.zeros((draws, h.size))
    for _ in range(T):
        done = y + h * rng.geometric(p, size=y.shape)
        y = np.min(done[:, :, None] + tau[None, :, :], axis=1)
    return np.asarray(y.min(axis=1))


@dataclasses.dataclass(frozen=True)
class TimeBound:
    """One time-complexity entry: a computable bound in seconds with its provenance.

    Parameters
    ----------
    name, kind, source, convention : str
        Key in `TIME_BOUNDS`; "lower" or "upper"; paper and statement; ``grad_norm_sq`` here.
    assumptions : tuple of str
        Conditions.
    status : {"confirmed", "recalled", "derived"}
        As `bounds.Rate`'s.
    constant : str
        Which constant is evaluated.
    evaluate : callable
        ``(cluster, *, L, Delta, sigma, epsilon, convention=...) -> seconds``.
    """

    name: str
    kind: str
    source: str
    convention: str
    assumptions: tuple[str, ...]
    status: str
    constant: str
    evaluate: Callable[..., float]


_PAPER = "Tyurin & Richtárik, NeurIPS 2024 (arXiv 2405.16218)"
_UNIT = "universal constant not stated in the paper; set to 1"
_TIMES = "h_i seconds per gradient, rho_{i->j} seconds per message, tau the shortest paths"
_HOMOGENEOUS = "homogeneous data: every worker samples the same f; f L-smooth, sigma^2-bounded variance"
_HETEROGENEOUS = "heterogeneous data: worker i samples f_i, f = mean f_i L-smooth, sigma^2 per worker"


def _heterogeneous(cluster: TimedCluster, **values: float | str) -> float:
    return time_lower_bound(cluster, data="heterogeneous", **values)  # type: ignore[arg-type]


#: The entries, by name: the two lower bounds and the methods' times, in seconds.
TIME_BOUNDS: dict[str, TimeBound] = {bound.name: bound for bound in (
    TimeBound("time_lower_homogeneous", "lower", f"{_PAPER}, Thm 1 (Thm 19), eq. (8)", "grad_norm_sq",
              (_TIMES, _HOMOGENEOUS, "zero-respecting methods of Protocol 1", "eps < c L Delta"), "confirmed",
              _UNIT + "; the 1/(ln n + 1) factor kept (natural log)", time_lower_bound),
    TimeBound("time_lower_heterogeneous", "lower", f"{_PAPER}, Thm 7 (Thm 20), Table 2", "grad_norm_sq",
              (_TIMES, _HETEROGENEOUS, "zero-respecting methods of Protocol 1"), "confirmed", _UNIT,
              _heterogeneous),
    TimeBound("fragile_sgd", "upper", f"{_PAPER}, Cor. 1, eq. (11)", "grad_norm_sq",
              (_TIMES, _HOMOGENEOUS, "pivot, shortest-path trees of Cor. 1, S = max(ceil(sigma^2/eps), 1)"),
              "confirmed", _UNIT + " (Theta)", _fragile),
    TimeBound("amelie_sgd", "upper", f"{_PAPER}, Cor. 2, eq. (18)", "grad_norm_sq",
              (_TIMES, _HETEROGENEOUS, "S = max(ceil(sigma^2/eps), n), shortest-path trees"), "confirmed",
              _UNIT + " (Theta)", _amelie),
    TimeBound("minibatch_sgd", "upper", f"{_PAPER}, eq. (6) and Table 2", "grad_norm_sq",
              (_TIMES, "one gradient per worker, reduce to and broadcast from a pivot"), "confirmed",
              _UNIT + " (Theta)", _minibatch),
    TimeBound("rennala_sgd", "upper", "Tyurin & Richtárik, NeurIPS 2023; eq. (5) of the 2024 paper",
              "grad_norm_sq",
              ("h_i seconds per gradient, free communication (the links are ignored)", _HOMOGENEOUS),
              "confirmed", _UNIT + " (Theta)", _rennala),
)}
