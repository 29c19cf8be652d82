"""The hard instances of the lower-bound proof (docs/theory.md §4): Setting 1 (sampling) and Setting 2
(communication, on the path of Cor. 2 and the broom of Thm. 1), rescaled for given (Delta, L, epsilon).

Scaling (docs/theory.md §4). With lambda_s the scale (not the eigenvalue, docs/errata.md E10):
- Setting 1: f_i(x) = (L lambda_s^2 / l1) f_hat(x / lambda_s), lambda_s = 2 l1 eps / L,
  T_c = floor(Delta L / (4 Delta0 l1 eps^2))  (docs/errata.md E2: the printed T_c omits L),
  p = min((2 G_inf eps)^2 / sigma^2, 1).
- Setting 2: f_i(x) = (L lambda_s^2 / (3 l1)) f_hat_i(x / lambda_s), lambda_s = 6 l1 eps / L,
  T_c = floor(Delta L / (Delta0 l1 (12 eps)^2)) = floor(Delta L / (262656 eps^2)).
In both the gradient factor is 2 eps, so ||grad f||_inf >= 2 eps while prog < T_c; f(0) - inf f <= Delta.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import networkx as nx
import numpy as np
from decbounds.bounds.constants import (
    SETTING1_CHAIN_DENOMINATOR,
    SETTING2_CHAIN_DENOMINATOR,
    chain_length,
    smallest_range,
)
from decbounds.bounds.validation import (
    describe_int,
    require_count,
    require_probability,
    require_real,
    require_size,
)
from decbounds.instances.graphs import MAX_NODES
from decbounds.instances.zero_chain import G_INF, L1, ZeroChainFunctions

from decbounds.lazy_exports import deprecated_attributes

if TYPE_CHECKING:
    from decbounds.instances.schedules import GossipSchedule

__all__ = [
    "MAX_INSTANCE_ENTRIES",
    "SCALE_RANGE",
    "CommunicationInstance",
    "SamplingInstance",
    "ScheduledCommunicationInstance",
    "communication_instance",
    "sampling_instance",
    "schedule_crossings",
    "scheduled_communication_instance",
    "split_groups",
]

#: Most entries (workers x chain length) an instance may hold: the Setting 2 split stores an (n, T_c - 1)
#: weight array and every run an (n, T_c) state per configuration, so 10**8 entries (800 MB) is refused
#: before it is allocated rather than failing with a MemoryError halfway.
MAX_INSTANCE_ENTRIES = 10**8


def _chain_length(Delta: float | None, T_c: int | None, L: float, epsilon: float, n: int, denominator: int,
                  formula: str) -> tuple[float, int]:
    """(Delta, T_c) with T_c = floor(Delta L / (denominator eps^2)) exactly (``bounds.constants``); from
    T_c, the smallest float Delta with that chain length."""
    if (Delta is None) == (T_c is None):
        raise ValueError("give exactly one of Delta (range bound) and T_c (chain length)")
    if T_c is not None:
        T_c = require_count("T_c", T_c, 1)
        require_size("T_c", n * T_c, limit=MAX_INSTANCE_ENTRIES,
                     detail=f"n * T_c = {n} * {describe_int(T_c)}")
        return smallest_range(T_c, L, epsilon, denominator), T_c
    Delta = require_real("Delta", Delta)
    T_c = chain_length(Delta, L, epsilon, denominator)
    if T_c < 1:
        raise ValueError(
            f"T_c = {formula} = {T_c} < 1: epsilon is too large for Delta and L "
            f"(need Delta * L / ({denominator} * epsilon^2) >= 1; Delta={Delta!r}, L={L!r}, "
            f"epsilon={epsilon!r})"
        )
    if n * T_c > MAX_INSTANCE_ENTRIES:
        raise ValueError(f"Delta={Delta!r} is too large for L={L!r} and epsilon={epsilon!r}: T_c = {formula} "
                         f"= {describe_int(T_c)}, so the instance would hold n * T_c = "
                         f"{describe_int(n * T_c)} entries (limit {MAX_INSTANCE_ENTRIES})")
    return Delta, T_c


#: The zero-chain kernels use scale^3 and 1/scale^2 and the gradient factor gain/scale; keeping them inside
#: [1e-100, 1e100] keeps every one of those a normal float64.
SCALE_RANGE = (1e-100, 1e100)


def _scaling(L: float, epsilon: float, factor: float, divisor: float) -> tuple[float, float]:
    """(scale, gain) = (factor l1 eps / L, L scale^2 / (divisor l1)), refused (ValueError naming L and
    epsilon) when the scale or the gradient factor gain / scale leaves ``SCALE_RANGE``."""
    low, high = SCALE_RANGE
    scale = factor * L1 * epsilon / L
    gradient_factor = L * scale / (divisor * L1) if math.isfinite(scale) else math.inf  # = gain / scale
    if not (low <= scale <= high and low <= gradient_factor <= high):
        raise ValueError(f"L={L!r} and epsilon={epsilon!r} give the scale lambda_s = {factor:g} l1 epsilon "
                         f"/ L = {scale:.3g} and the gradient factor L lambda_s / ({divisor:g} l1) = "
                         f"{gradient_factor:.3g}; both must lie in [{low:g}, {high:g}] for float64 (choose L "
                         "and epsilon closer to 1)")
    return scale, gradient_factor * scale


class SamplingInstance(ZeroChainFunctions):
    """Setting 1 (§4): n workers sharing f(x) = (L lambda_s^2 / l1) f_hat(x / lambda_s) on the complete graph,
    queried through the probabilistic zero-chain oracle with p (`oracles.ZeroChainOracle(instance)`).

    Parameters
    ----------
    n : int
    Delta, L, epsilon, sigma : float
        Function range, smoothness, target accuracy and oracle noise.
    p : float
        The oracle's probability of revealing the next coordinate.
    T_c : int
    """

    def __init__(self, n: int, *, Delta: float, L: float, epsilon: float, sigma: float, p: float,
                 T_c: int) -> None:
        scale, gain = _scaling(L, epsilon, 2.0, 1.0)
        super().__init__(T_c, n, scale=scale, gain=gain, smoothness=L)
        self.Delta, self.L, self.epsilon, self.sigma, self.p, self.T_c = Delta, L, epsilon, sigma, p, T_c
        self.D = 1

    def graph(self) -> nx.Graph:
        """The complete graph of Setting 1 (D = 1)."""
        from decbounds.instances.graphs import topology

        return topology("complete", self.n)

    def __repr__(self) -> str:
        return (f"SamplingInstance(n={self.n}, T_c={self.T_c}, p={self.p:.4g}, Delta={self.Delta:.4g}, "
                f"L={self.L:g}, epsilon={self.epsilon:g}, sigma={self.sigma:.4g})")


def sampling_instance(n: int, *, Delta: float | None = None, T_c: int | None = None, L: float = L1,
                      epsilon: float = 0.5, sigma: float | None = None, p: float | None = None
                      ) -> SamplingInstance:
    """Setting 1, the sampling term of Thm 1 (§4): T_c = floor(Delta L / (4 Delta0 l1 eps^2)) (errata E2),
    lambda_s = 2 l1 eps / L, p = min((2 G_inf eps)^2 / sigma^2, 1).

    Parameters
    ----------
    n : int
        Workers, >= 1 (complete graph, every worker holds f).
    Delta, T_c : float, int
        Exactly one: the range bound f(0) - inf f, or the chain length.
    L, epsilon : float, optional
        Smoothness and target accuracy (defaults l1 = 152 and 1/2: the unscaled chain).
    sigma, p : float
        Exactly one: the oracle's noise level, or the reveal probability in (0, 1].

    Examples
    --------
    >>> f = sampling_instance(4, T_c=6, p=0.01)
    >>> f.T_c, f.Delta, round(f.sigma, 3)
    (6, 72.0, 230.0)
    """
    n = require_count("n", n, 1)
    L = require_real("L", L)
    epsilon = require_real("epsilon", epsilon)
    if (sigma is None) == (p is None):
        raise ValueError("give exactly one of sigma (oracle noise) and p (reveal probability)")
    if sigma is not None:
        sigma = require_real("sigma", sigma, allow_zero=True)
        # min(ratio, 1)^2 = min(ratio^2, 1) without squaring a huge ratio (float ** overflows with an error)
        p = 1.0 if sigma == 0 else min(2.0 * G_INF * epsilon / sigma, 1.0) ** 2
        if p == 0.0:
            raise ValueError(f"sigma={sigma!r} and epsilon={epsilon!r} give the reveal probability p = "
                             "(2 G_inf epsilon / sigma)^2 = 0.0 (underflow); choose sigma / epsilon < 1e150")
    else:
        p = require_probability("p", p)
        sigma = 2.0 * G_INF * epsilon / math.sqrt(p)
        if not math.isfinite(sigma):
            raise ValueError(f"p={p!r} and epsilon={epsilon!r} give sigma = 2 G_inf epsilon / sqrt(p) = inf "
                             "(overflow)")
    Delta, T_c = _chain_length(Delta, T_c, L, epsilon, n, SETTING1_CHAIN_DENOMINATOR,
                               "floor(Delta L / (4 Delta0 l1 epsilon^2))")
    _scaling(L, epsilon, 2.0, 1.0)
    return SamplingInstance(n, Delta=Delta, L=L, epsilon=epsilon, sigma=sigma, p=p, T_c=T_c)


def split_groups(n: int, D: int | None = None) -> tuple[np.ndarray, np.ndarray, int]:
    """(I0, I1, dist): the two end groups of the Setting 2 split and their hop distance (§4, Fig. 6).

    Labels follow `instances.topology("broom", n, D=D)`: left leaves 0..a-1 (a = ceil((n-D+1)/2)), the
    path a..a+D-2, then the right leaves; D = n-1 (and D=None, the path of Cor. 2) is 0-1-...-(n-1).

    Parameters
    ----------
    n : int
    D : int, optional
        The broom's diameter, in 1..n-1; None for Cor. 2's path (D = n - 1).

    Examples
    --------
    >>> I0, I1, dist = split_groups(9)
    >>> I0.tolist(), I1.tolist(), dist
    ([0, 1, 2], [6, 7, 8], 4)
    """
    n = require_count("n", n, 2, maximum=MAX_NODES, what="workers of a graph")
    if D is None:
        D = n - 1
    D = require_count("D", D, 1)
    if D > n - 1:
        raise ValueError(f"D must lie in 1..n-1 (diameter of a graph on n nodes); got n={n}, D={D}")
    c = -(-n // 3)
    if D >= n - 2 * c + 2:
        return np.arange(c), np.arange(n - c, n), n - 2 * c + 1
    k = (n - D + 1) // 2
    return np.arange(k), np.arange(n - k, n), D


class CommunicationInstance(ZeroChainFunctions):
    """Setting 2 (§4): the zero-chain split over the end groups I0, I1 of a path (Cor. 2) or broom (Thm 1).

    Parameters
    ----------
    n : int
    D : int or None
        The broom's diameter (Thm 1), or None for Cor. 2's path.
    Delta, L, epsilon : float
    T_c : int
    """

    def __init__(self, n: int, *, D: int | None, Delta: float, L: float, epsilon: float, T_c: int) -> None:
        I0, I1, dist = split_groups(n, D)
        if T_c < 1:
            raise ValueError(f"T_c must be >= 1; got T_c={T_c!r}")
        w0, w1 = n / I0.size, n / I1.size
        first = np.zeros(n)
        first[I0] = w0
        links = np.zeros((n, T_c - 1))
        links[I1, 0::2] = w1  # 1-based odd links (x_1-x_2, x_3-x_4, ...)
        links[I0, 1::2] = w0  # 1-based even links
        scale, gain = _scaling(L, epsilon, 6.0, 3.0)
        super().__init__(T_c, n, scale=scale, gain=gain, first_weight=first,
                         link_weight=links, smoothness=L * max(3.0, w0, w1) / 3.0)
        self.Delta, self.L, self.epsilon, self.T_c, self.D = Delta, L, epsilon, T_c, D
        self.groups = (I0, I1)
        self.dist = dist
        self.weights = (w0, w1)

    @property
    def iteration_lower_bound(self) -> int:
        """1 + (T_c - 1) * dist: iterations any zero-respecting algorithm needs before prog reaches T_c
        (docs/errata.md E17; T_c + (T_c - 1) dist for algorithms that gossip first and then query)."""
        return 1 + (self.T_c - 1) * self.dist

    def graph(self) -> nx.Graph:
        """The path (D=None, Cor. 2) or the broom of diameter D (Thm 1), from `instances.topology`."""
        from decbounds.instances.graphs import topology

        if self.D is None:
            return topology("path", self.n)
        return topology("broom", self.n, D=self.D)

    def __repr__(self) -> str:
        where = "path" if self.D is None else f"broom D={self.D}"
        return (f"CommunicationInstance(n={self.n}, {where}, T_c={self.T_c}, dist={self.dist}, "
                f"Delta={self.Delta:.4g}, L={self.L:g}, epsilon={self.epsilon:g})")


def communication_instance(n: int, *, D: int | None = None, Delta: float | None = None,
                           T_c: int | None = None, L: float = 3.0 * L1, epsilon: float = 0.5
                           ) -> CommunicationInstance:
    """Setting 2, the communication term (§4): T_c = floor(Delta L / (262656 eps^2)), lambda_s = 6 l1 eps / L.

    D=None: the path of Cor. 2 (the ceil(n/3) workers at each end); D in 1..n-1: the broom of Thm 1
    (`split_groups`). The defaults L = 3 l1, eps = 1/2 give the unscaled split with Delta = 144 T_c.

    Parameters
    ----------
    n : int
    D : int, optional
        Diameter of the broom (1..n-1); None (default) is Cor. 2's path.
    Delta, T_c : float, int
        Exactly one: the range bound, or the chain length.
    L, epsilon : float, optional
        Smoothness and target accuracy (defaults 3 l1 = 456 and 1/2: the unscaled split).

    Examples
    --------
    >>> f = communication_instance(16, T_c=3)
    >>> f.dist, f.iteration_lower_bound, f.smoothness
    (5, 11, 456.0)
    """
    n = require_count("n", n, 2)
    if D is not None:
        D = require_count("D", D, 1)
    L = require_real("L", L)
    epsilon = require_real("epsilon", epsilon)
    Delta, T_c = _chain_length(Delta, T_c, L, epsilon, n, SETTING2_CHAIN_DENOMINATOR,
                               "floor(Delta L / (262656 epsilon^2))")
    _scaling(L, epsilon, 6.0, 3.0)
    return CommunicationInstance(n, D=D, Delta=Delta, L=L, epsilon=epsilon, T_c=T_c)


# ------------------------------------------------------------------------------------------------------
# Setting 2 over a gossip schedule (docs/theory.md §17.4)


def schedule_crossings(schedule: GossipSchedule, groups: tuple[np.ndarray, np.ndarray], T_c: int
                       ) -> list[int]:
    """The iterations r_1 < r_2 < ... < r_{T_c} at which a zero-respecting algorithm can first reveal chain
    coordinates 1..T_c of the Setting 2 split over a gossip schedule (docs/theory.md §17.4).

    Parameters
    ----------
    schedule : instances.GossipSchedule
    groups : tuple of numpy.ndarray
        (I0, I1): the worker indices of the two end groups (`split_groups`); I1 holds the odd links.
    T_c : int
    """
    T_c = require_count("T_c", T_c, 1)
    I0, I1 = groups
    reveals = [0]
    for k in range(1, T_c):
        source, target = (I0, I1) if k % 2 else (I1, I0)
        reveals.append(1 + schedule.first_arrival(source, target, start=reveals[-1]))
    return reveals


class ScheduledCommunicationInstance(CommunicationInstance):
    """Setting 2's zero-chain split (`CommunicationInstance`, Cor. 2's end groups I0, I1 of the labels
    0..n-1) over a gossip schedule: information must cross the changing graph, and the hop count is read off
    the schedule exactly (`schedule_crossings`).
    """

    def __init__(self, schedule: GossipSchedule, *, Delta: float, L: float, epsilon: float, T_c: int) -> None:
        super().__init__(int(schedule.n), D=None, Delta=Delta, L=L, epsilon=epsilon, T_c=T_c)
        self.schedule = schedule
        self.crossings = schedule_crossings(schedule, self.groups, T_c)

    @property
    def iteration_lower_bound(self) -> int:
        """r_{T_c} + 1 (`schedule_crossings`): iterations any zero-respecting algorithm needs before prog
        reaches T_c over the schedule."""
        return self.crossings[-1] + 1

    def graph(self) -> nx.Graph:
        """The union of the schedule's supports over one period (a generated schedule: its first
        ``4 n`` rounds); round t's own edges are ``schedule.support(t)``."""
        return self.schedule.union_graph(0, self.schedule.period or 4 * self.n)

    def __repr__(self) -> str:
        return (f"ScheduledCommunicationInstance(n={self.n}, {self.schedule.name}, T_c={self.T_c}, "
                f"bound={self.iteration_lower_bound}, Delta={self.Delta:.4g}, L={self.L:g}, "
                f"epsilon={self.epsilon:g})")


def scheduled_communication_instance(schedule: GossipSchedule, *, Delta: float | None = None,
                                     T_c: int | None = None, L: float = 3.0 * L1, epsilon: float = 0.5
                                     ) -> ScheduledCommunicationInstance:
    """Setting 2 over a gossip schedule (docs/theory.md §17.4): `communication_instance`'s split on the end
    groups of the labels 0..n-1 (the path's, `split_groups`), with the hop-count bound computed exactly
    from the schedule (`schedule_crossings`). Give exactly one of Delta and T_c.

    Parameters
    ----------
    schedule : instances.GossipSchedule
        n = schedule.n >= 2 workers, e.g. ``instances.rotating_path(n)``.
    Delta, T_c : float, int
        Exactly one: the range bound, or the chain length.
    L, epsilon : float, optional

    Examples
    --------
    >>> from decbounds.instances.schedules import one_peer_exponential
    >>> scheduled_communication_instance(one_peer_exponential(16), T_c=4).crossings  # log2 16 rounds each
    [0, 4, 8, 12]
    """
    from decbounds.instances.schedules import GossipSchedule

    if not isinstance(schedule, GossipSchedule):
        raise TypeError(f"schedule must be an instances.GossipSchedule; got {type(schedule).__name__}")
    n = require_count("n", schedule.n, 2)
    L = require_real("L", L)
    epsilon = require_real("epsilon", epsilon)
    Delta, T_c = _chain_length(Delta, T_c, L, epsilon, n, SETTING2_CHAIN_DENOMINATOR,
                               "floor(Delta L / (262656 epsilon^2))")
    _scaling(L, epsilon, 6.0, 3.0)
    return ScheduledCommunicationInstance(schedule, Delta=Delta, L=L, epsilon=epsilon, T_c=T_c)


#: The former second name of ``bounds.SETTING2_CHAIN_DENOMINATOR`` still read, with a warning.
__getattr__ = deprecated_attributes(__name__, globals(), {"COMMUNICATION_T_C_DENOMINATOR": (
    "SETTING2_CHAIN_DENOMINATOR", "instances.hard.COMMUNICATION_T_C_DENOMINATOR is deprecated; use "
    "bounds.SETTING2_CHAIN_DENOMINATOR (the same number)")})
