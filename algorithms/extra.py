"""EXTRA (Shi, Ling, Wu & Yin, "EXTRA: an exact first-order algorithm for decentralized consensus
optimization", SIAM J. Optim. 25(2), 2015), written only through the public step-rule API (a third party
could write this file: it imports nothing but the top-level packages' exported names).

With W symmetric doubly stochastic, W~ = (I + W)/2, G(X) the stacked local (stochastic) gradients, alpha the
step size:

    X^1     = W X^0 - alpha G(X^0)
    X^{k+2} = (I + W) X^{k+1} - W~ X^k - alpha (G(X^{k+1}) - G(X^k))

Only W X^{k+1} is new at step k+2: W~ X^k = (X^k + W X^k)/2 reuses the product kept from the previous
iteration, so one iteration is one gossip round and B queries per worker (class A_B, docs/theory.md §1.5).
With exact gradients and alpha = O(1/L) the models converge to the exact stationary point of the global f
even on heterogeneous data (no bias of D-PSGD's fixed point); with stochastic gradients they keep a noise
floor. Status of the statement here: recalled from the paper.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from decbounds.algorithms import Context, PlotStyle, State, StepRule, state_as

__all__ = ["Extra", "ExtraState"]


@dataclass(eq=False)
class ExtraState(State):
    """x = X^{k+1}; ``x_prev`` = X^k, ``wx_prev`` = W X^k, ``g_prev`` = G(X^k); ``wx`` a scratch array for
    W X^{k+1}."""

    x_prev: np.ndarray
    wx_prev: np.ndarray
    g_prev: np.ndarray
    wx: np.ndarray


class Extra(StepRule):
    """EXTRA (Shi et al. 2015): X^{k+2} = X^{k+1} + W X^{k+1} - (X^k + W X^k)/2 - alpha (G(X^{k+1}) - G(X^k)),
    X^1 = W X^0 - alpha G(X^0); one gossip round per iteration (module docstring).

    ``algorithms.run("extra", problem, W, step_size=..., ...)``; no hyper-parameters (no momentum: the
    recursion is the paper's). W must be symmetric doubly stochastic and connected (ValueError otherwise).

    References
    ----------
    Shi, Ling, Wu & Yin (2015), EXTRA, SIAM J. Optim. 25(2); docs/theory.md §15, docs/errata.md E40.

    Examples
    --------
    Exact on heterogeneous data: every worker's own model is eps-stationary with the average (D-PSGD's
    workers are not, see ``algorithms.rules.DPSGD``):

    >>> from decbounds import algorithms, instances
    >>> f = instances.heterogeneous_quadratic(4, 3, 1.0, seed=0)
    >>> W = instances.gossip_matrix(instances.topology("ring", 4), "metropolis")
    >>> result = algorithms.run("extra", f, W, step_size=0.5, iterations=1000, tol=1e-2)
    >>> result.t_eps, result.t_eps_local
    (73, 73)
    """

    name = "extra"
    catalog_entry = "extra"
    style = PlotStyle(color="tab:pink", marker="h", linestyle="-.", label="EXTRA")
    batchable: ClassVar[dict[str, Any]] = {}  # no momentum: the recursion is the paper's

    def init(self, ctx: Context) -> ExtraState:
        x = ctx.start_state()
        return ExtraState(x=x, x_prev=x.copy(), wx_prev=ctx.zeros(), g_prev=ctx.zeros(), wx=ctx.zeros())

    def step(self, state: State, ctx: Context) -> ExtraState:
        s = state_as(state, ExtraState)
        g = ctx.sample(s.x)
        ctx.gossip(s.x, out=(s.wx,))
        if ctx.t == 0:
            new = s.wx - ctx.step_size * g
        else:
            new = s.x + s.wx - 0.5 * (s.x_prev + s.wx_prev) - ctx.step_size * (g - s.g_prev)
        s.x_prev, s.x = s.x, new
        s.wx_prev, s.wx = s.wx, s.wx_prev
        s.g_prev[...] = g
        return s

    def worker_arrays(self, state: State) -> list[np.ndarray]:
        s = state_as(state, ExtraState)
        return [s.x, s.x_prev, s.wx_prev, s.g_prev]
