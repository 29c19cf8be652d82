"""D-SGD's rates in terms of the effective number of neighbours (Vogels, Hendrikx & Jaggi, NeurIPS 2022).

Homogeneous data, one gossip matrix W, a realistic constant step: the topology enters through n_eff(gamma)
(``instances.effective_neighbours``) at a decay gamma the step sets, not through 1 - lam. Both entries are in
the ``function_value`` convention (E f(x) - f* <= eps, no conversion to the gradient ones). What is read and
what is recalled: docs/theory.md §19.4.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import sympy as sp
from decbounds.bounds.rate import Rate
from decbounds.bounds.symbols import B, Delta, L, epsilon, eta, mu, n_eff, sigma, zeta
from decbounds.bounds.validation import require_real

__all__ = ["quadratic_contraction", "random_quadratic_rate", "topology_entries"]

_SOURCE = ("Vogels, Hendrikx & Jaggi, Beyond spectral gap: the role of the topology in decentralized "
           "learning, NeurIPS 2022 (arXiv 2206.03093; extended: arXiv 2301.02151)")
_HOMOGENEOUS = "homogeneous data: every worker samples the same distribution (no heterogeneity term)"

#: 1 - r: the per-iteration factor of mean_i E||x_i - x*||^2 on the isotropic random quadratic (§3.1).
quadratic_contraction = (1 - eta) ** 2 + (zeta - 1) * eta**2 / n_eff


def random_quadratic_rate(eta: float, zeta: float, n_eff_at: Callable[[float], float], *,
                          tolerance: float = 1e-13, max_iterations: int = 1000) -> float:
    """The linear rate r of D-SGD on the isotropic random quadratic: the fixed point of
    r = 1 - (1 - eta)^2 - (zeta - 1) eta^2 / n_eff(gamma), gamma = (1 - eta)^2 / (1 - r) (§3.1).

    Exact for a vertex-transitive W with the worst worker's n_eff; smaller than the exact rate otherwise
    (tests/bounds/test_topology_rates.py). Iterated from r = 0, as the authors' code does.

    Parameters
    ----------
    eta : float
        Step size, in (0, 1].
    zeta : float
        E||H x||^2 = zeta ||x||^2 (>= 1; (d + B + 1)/B for Gaussian data in d dimensions, batch B).
    n_eff_at : callable
        gamma -> n_eff(gamma), e.g. ``lambda g: instances.effective_neighbours(W, g, reduce="worst")``.
    tolerance : float, optional
        Stop when r moves less than this.
    max_iterations : int, optional
        Give up (ValueError) after this many updates.

    Returns
    -------
    float
        r in (0, 1]: mean_i E||x_i||^2 shrinks by 1 - r per iteration.

    Raises
    ------
    ValueError
        For eta outside (0, 1], zeta < 1, or a step at which the iteration diverges (r <= 0).

    Examples
    --------
    >>> round(random_quadratic_rate(0.1, 5.0, lambda gamma: 16.0), 6)  # exact averaging of 16 workers
    0.1875
    """
    eta = require_real("eta", eta, maximum=1.0)
    zeta = require_real("zeta", zeta, minimum=1.0, allow_minimum=True)
    rate = 0.0
    for _ in range(max_iterations):
        gamma = (1 - eta) ** 2 / (1 - rate)
        if not gamma < 1:
            raise ValueError(f"eta={eta!r} with zeta={zeta!r} diverges: the decay gamma reached {gamma!r}")
        neighbours = float(n_eff_at(gamma))
        if not 1 - 1e-9 <= neighbours < math.inf:
            raise ValueError(f"n_eff_at({gamma!r}) must be a real >= 1; got {neighbours!r}")
        updated = 1 - (1 - eta) ** 2 - (zeta - 1) * eta**2 / neighbours
        if updated <= 0:
            raise ValueError(f"eta={eta!r} with zeta={zeta!r} diverges: the rate reached {updated!r} <= 0")
        if abs(updated - rate) < tolerance:
            return updated
        rate = updated
    raise ValueError(f"the fixed point did not converge in {max_iterations} iterations")


def topology_entries() -> list[Rate]:
    """The catalog entries of the paper (registered by `bounds.catalog`)."""
    contraction = quadratic_contraction
    return [
        Rate(
            name="vogels2022_random_quadratic",
            kind="upper",
            source=_SOURCE + ", §3.1 (the random quadratic toy model)",
            convention="function_value",
            terms={"linear_convergence": sp.Piecewise(
                (sp.log(1 + Delta / epsilon) / -sp.log(contraction), contraction < 1), (sp.nan, True))},
            assumptions=(
                _HOMOGENEOUS,
                "f(x) = E (d^T x)^2 / 2 with E d d^T = I, every sample minimized at x* (multiplicative noise "
                "only): the stochastic gradient H x has E||H x||^2 = zeta ||x||^2",
                "D-SGD x_i <- sum_j W_ij (x_j - eta H_j x_j), all workers starting at x0, Delta = f(x0) - f*",
                "n_eff = n_eff(gamma) of the worst worker at gamma = (1 - eta)^2 / (1 - r), a fixed point in "
                "the rate r (bounds.topology_rates.random_quadratic_rate solves it)",
                "the step converges: (1 - eta)^2 + (zeta - 1) eta^2 / n_eff < 1 (NaN beyond)",
            ),
            status="recalled",
            doc="mean_i E f(x_i) - f* shrinks by 1 - r = (1 - eta)^2 + (zeta - 1) eta^2 / n_eff(gamma) "
                "per iteration (the constant in front set to 1); T_eps = log(1 + Delta/eps) / -log(1 - "
                "r). The formula is the one the authors' public code implements for §3.1; the paper's own"
                " statement was not read. Checked here: for a vertex-transitive W the fixed point equals "
                "the exact rate of the second-moment recursion (ring, hypercube, complete graph); for the"
                " star it is below it (a valid, conservative rate). n_eff = n with zeta = zeta(d, B) "
                "gives centralized SGD with batch n B (zeta(d, n B) - 1 = (zeta(d, B) - 1)/n); n_eff = 1 "
                "is a worker alone. The largest stable step, 2 n_eff / (n_eff + zeta - 1), grows with "
                "n_eff: collaboration allows larger steps, which 1 - lam does not express.",
        ),
        Rate(
            name="vogels2022_strongly_convex",
            kind="upper",
            source=_SOURCE + ", the theorem for smooth strongly convex objectives",
            convention="function_value",
            terms={"optimization": L / mu * sp.log(1 + Delta / epsilon),
                   "sampling": sigma**2 / (mu * n_eff * B * epsilon)},
            assumptions=(
                _HOMOGENEOUS,
                "f L-smooth and mu-strongly convex; oracle variance sigma^2; one W (static or periodic)",
                "constant step eta of the order of 1/L, n_eff = n_eff(gamma) at the decay gamma the step "
                "sets (of the order of 1 - eta mu); the theorem's exact gamma(eta), step condition and "
                "constants not read -- UNCONFIRMED",
                "a B-query mini-batch enters as sigma^2 / B",
            ),
            status="recalled",
            doc="Recalled shape: the centralized strongly convex SGD rate O((L/mu) log(1/eps) + "
                "sigma^2/(mu n eps)) with n replaced by n_eff(gamma): the topology divides the noise term"
                " by n_eff, not by a power of 1 - lam. Read: the abstract ('theoretical results for "
                "general smooth and (strongly) convex objectives', homogeneous data, collaboration allows"
                " larger steps). Not read: the theorem's statement; the multiplicative-noise part of its "
                "assumption, through which the admissible step grows with n_eff, is not encoded (the "
                "random quadratic entry has it). n_eff = n is centralized mini-batch SGD over n B "
                "samples; n_eff = 1 a worker alone.",
        ),
    ]
