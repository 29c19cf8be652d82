"""A cluster in seconds: per-worker compute times and per-link communication times (docs/time.md).

Tyurin & Richtárik (NeurIPS 2024, §1.1): worker i needs h_i seconds per stochastic gradient, a vector sent
directly i -> j takes rho_{i->j} seconds (inf: no link), and tau_{i->j} is the shortest-path time over the
links (their eq. (2)); tau obeys the triangle inequality and tau <= rho.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np
from decbounds.bounds.time_bounds import shortest_path_times
from decbounds.bounds.validation import (
    as_generator,
    require_choice,
    require_count,
    require_positive,
    require_real,
    require_real_array,
)

__all__ = ["CLUSTERS", "COMPUTE_DISTRIBUTIONS", "Cluster", "named_cluster"]

#: How one gradient's compute time is drawn from the worker's h_i: "fixed" (always h_i), "uniform"
#: (U[h_i / 2, h_i], so h_i stays the upper bound of the paper), "exponential" (mean h_i, unbounded).
COMPUTE_DISTRIBUTIONS = ("fixed", "uniform", "exponential")

#: The named clusters of `named_cluster`.
CLUSTERS = ("equal", "straggler", "power", "slow_link")


def _read_only(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


class Cluster:
    """Compute times h (n,) and link times rho (n, n) of a cluster, with shortest-path times tau.

    Parameters
    ----------
    compute_times : array_like
        h_i > 0: seconds per stochastic gradient on worker i.
    link_times : array_like, optional
        rho_{i->j} >= 0 seconds to send one vector i -> j directly, ``inf`` where there is no link.
    distribution : {"fixed", "uniform", "exponential"}, default "fixed"
        How each gradient's time is drawn (`COMPUTE_DISTRIBUTIONS`).

    Examples
    --------
    >>> rho = [[0, 1, np.inf], [1, 0, 2], [np.inf, 2, 0]]
    >>> float(Cluster([1.0, 2.0, 4.0], rho).shortest_paths[0, 2])
    3.0
    """

    def __init__(self, compute_times: object, link_times: object = None, *,
                 distribution: str = "fixed") -> None:
        h = require_real_array("compute_times", compute_times, allow_bool=False).astype(float)
        if h.ndim != 1 or h.size == 0:
            raise ValueError(f"compute_times must be a non-empty vector; got shape {h.shape}")
        if not np.all(np.isfinite(h)) or np.any(h <= 0):
            raise ValueError(f"compute_times must be finite and > 0 seconds; got {h.tolist()!r}")
        n = h.size
        if link_times is None:
            rho = np.zeros((n, n))
        else:
            rho = require_real_array("link_times", link_times, allow_bool=False).astype(float)
            if rho.shape != (n, n):
                raise ValueError(f"link_times must be an (n, n) array with n = {n} (the compute_times' "
                                 f"length); got shape {rho.shape}")
            rho = rho.copy()
            np.fill_diagonal(rho, 0.0)
            if np.any(np.isnan(rho)) or np.any(rho < 0):
                raise ValueError("link_times must be >= 0 seconds or inf (no link); got NaN or a negative")
        self.compute_times = _read_only(h)
        self.link_times = _read_only(rho)
        self.distribution = require_choice("distribution", distribution, COMPUTE_DISTRIBUTIONS)

    @property
    def n(self) -> int:
        """The number of workers."""
        return int(self.compute_times.size)

    @cached_property
    def shortest_paths(self) -> np.ndarray:
        """tau (n, n): the shortest-path times over the links (Tyurin & Richtárik 2024, eq. (2)); inf if j
        cannot be reached from i."""
        return _read_only(shortest_path_times(self.link_times))

    def draw_compute(self, rng: np.random.Generator, size: int | tuple[int, ...]) -> np.ndarray:
        """Compute times of ``size`` gradients per worker, shape (*size, n), from `distribution`.

        Parameters
        ----------
        rng : numpy.random.Generator
        size : int or tuple of int
        """
        shape = (size,) if isinstance(size, int) else tuple(size)
        h = self.compute_times
        if self.distribution == "fixed":
            return np.array(np.broadcast_to(h, (*shape, self.n)))
        rng = as_generator("rng", rng)
        if self.distribution == "uniform":
            return np.asarray(h * rng.uniform(0.5, 1.0, size=(*shape, self.n)))
        return np.asarray(h * rng.exponential(1.0, size=(*shape, self.n)))

    def relabelled(self, permutation: object) -> Cluster:
        """The same cluster with worker ``permutation[k]`` renamed k.

        Parameters
        ----------
        permutation : array_like of int
        """
        order = np.asarray(permutation, dtype=int)
        if sorted(order.tolist()) != list(range(self.n)):
            raise ValueError(f"permutation must be a permutation of 0..{self.n - 1}; got {order.tolist()!r}")
        return Cluster(self.compute_times[order], self.link_times[np.ix_(order, order)],
                       distribution=self.distribution)

    def __repr__(self) -> str:
        links = np.isfinite(self.link_times).sum() - self.n
        h = self.compute_times
        return (f"Cluster(n={self.n}, h in [{h.min():.3g}, {h.max():.3g}] s, "
                f"{links} directed links, distribution={self.distribution!r})")


def _links(topology: str, n: int, rho: float) -> np.ndarray:
    """rho on every edge of ``instances.topology(topology, n)`` (both directions), inf elsewhere."""
    from decbounds.instances.graphs import topology as build

    links = np.full((n, n), np.inf)
    if n > 1:
        for i, j in build(topology, n).edges():
            links[i, j] = links[j, i] = rho
    np.fill_diagonal(links, 0.0)
    return links


def named_cluster(name: str, n: int, *, h: float = 1.0, rho: float = 0.0, topology: str = "complete",
                  alpha: float = 1.0, slowdown: float = 10.0, distribution: str = "fixed") -> Cluster:
    """One of the named clusters (`CLUSTERS`), rho seconds on every edge of ``topology``.

    Parameters
    ----------
    name : str
    n : int
    h : float, default 1.0
        Base compute time, seconds.
    rho : float, default 0.0
        Link time of every edge, seconds.
    topology : str, default "complete"
    alpha : float, default 1.0
        Exponent of "power".
    slowdown : float, default 10.0
        Factor >= 1 of "straggler" and "slow_link".
    distribution : str, default "fixed"

    Examples
    --------
    >>> named_cluster("power", 3, alpha=2.0).compute_times.tolist()
    [1.0, 4.0, 9.0]
    """
    name = require_choice("name", name, CLUSTERS)
    n = require_count("n", n, minimum=1)
    h = require_positive("h", h)
    rho = require_real("rho", rho, allow_zero=True)
    alpha = require_real("alpha", alpha, minimum=None)
    slowdown = require_real("slowdown", slowdown, minimum=1.0, allow_minimum=True)
    compute = np.full(n, h)
    links = _links(topology, n, rho)
    if name == "straggler":
        compute[-1] *= slowdown
    elif name == "power":
        compute = h * np.arange(1, n + 1, dtype=float) ** alpha
    elif name == "slow_link" and n > 1:
        links[0, 1] = links[1, 0] = links[0, 1] * slowdown
    return Cluster(compute, links, distribution=distribution)
