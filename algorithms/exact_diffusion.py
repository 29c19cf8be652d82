"""Exact Diffusion (Yuan, Ying, Zhao & Sayed, "Exact diffusion for distributed optimization and learning",
IEEE TSP 67(3), 2019) = NIDS with a common step (Li, Shi & Yan, "A decentralized proximal-gradient method
with network independent step-sizes and separated convergence rates", IEEE TSP 67(17), 2019), written only
through the public step-rule API.

With W symmetric doubly stochastic, W~ = (I + W)/2, G(X) the stacked local (stochastic) gradients, alpha the
step size and psi^0 = X^0:

    psi^{k+1} = X^k - alpha G(X^k)              (adapt)
    phi^{k+1} = psi^{k+1} + X^k - psi^k          (correct)
    X^{k+1}   = W~ phi^{k+1}                     (combine: (phi + W phi)/2, one gossip round)

As one recursion, X^{k+1} = W~ (2 X^k - X^{k-1} - alpha (G(X^k) - G(X^{k-1}))): D^2 with the lazy W~ in
place of W, which removes D^2's lambda_min(W) >= -1/3 condition. One iteration is one gossip round and B
queries per worker (class A_B). With exact gradients and alpha = O(1/L) it converges to the exact stationary
point on heterogeneous data. Status of the statement here: recalled from the papers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from decbounds.algorithms import Context, PlotStyle, State, StepRule, state_as

__all__ = ["DiffusionState", "ExactDiffusion"]


@dataclass(eq=False)
class DiffusionState(State):
    """x = X^k, ``psi`` = psi^k, ``phi`` and ``w_phi`` scratch arrays (phi^{k+1} and W phi^{k+1})."""

    psi: np.ndarray
    phi: np.ndarray
    w_phi: np.ndarray


class ExactDiffusion(StepRule):
    """Exact Diffusion / NIDS: psi <- X - alpha G(X); phi <- psi_new + X - psi_old; X <- (phi + W phi)/2
    (module docstring).

    ``algorithms.run("exact_diffusion", problem, W, step_size=..., ...)`` (aliases "ed", "nids"); no
    hyper-parameters. W must be symmetric doubly stochastic and connected (ValueError otherwise); unlike
    D^2 it may have eigenvalues below -1/3.

    References
    ----------
    Yuan, Ying, Zhao & Sayed (2019), Exact diffusion for distributed optimization and learning, IEEE TSP
    67(3); Li, Shi & Yan (2019), NIDS, IEEE TSP 67(17); docs/theory.md §15, docs/errata.md E40.

    Examples
    --------
    >>> from decbounds import algorithms, instances
    >>> f = instances.heterogeneous_quadratic(4, 3, 1.0, seed=0)
    >>> W = instances.gossip_matrix(instances.topology("ring", 4), "metropolis")
    >>> result = algorithms.run("ed", f, W, step_size=0.5, iterations=1000, tol=1e-2)
    >>> result.t_eps, result.t_eps_local
    (73, 73)
    """

    name = "exact_diffusion"
    aliases = ("ed", "nids", "exact-diffusion")
    catalog_entry = "exact_diffusion"
    style = PlotStyle(color="tab:gray", marker="X", linestyle="-.", label="Exact Diffusion")
    batchable: ClassVar[dict[str, Any]] = {}  # no momentum: the recursion is the paper's

    def init(self, ctx: Context) -> DiffusionState:
        x = ctx.start_state()
        return DiffusionState(x=x, psi=x.copy(), phi=ctx.zeros(), w_phi=ctx.zeros())

    def step(self, state: State, ctx: Context) -> DiffusionState:
        s = state_as(state, DiffusionState)
        psi_new = s.x - ctx.step_size * ctx.sample(s.x)
        np.subtract(s.x, s.psi, out=s.phi)
        s.phi += psi_new
        s.psi = psi_new
        ctx.gossip(s.phi, out=(s.w_phi,))
        np.add(s.phi, s.w_phi, out=s.x)
        s.x *= 0.5
        return s

    def worker_arrays(self, state: State) -> list[np.ndarray]:
        s = state_as(state, DiffusionState)
        return [s.x, s.psi]
