"""MG-DSGD, multi-gossip decentralized SGD (Yuan, Huang, Chen, Zhang, Zhang & Pan, "Revisiting optimal
convergence rate for smooth and non-convex stochastic decentralized optimization", NeurIPS 2022, arXiv
2210.07863), written only through the public step-rule API.

Status: recalled. The paper's title, authors and abstract ("we develop a new decentralized algorithm to
nearly attain the above two optimal rates under additional mild conditions") confirm the citation above; the
update itself could not be read. A later method (MG-ADSGD, Sun & Yuan, arXiv 2606.07496, strongly convex)
confirms the accelerated gossip recursion A^{r+1} = (1 + eta) W A^r - eta A^{r-1} used below and the
coupling of the gossip depth with the gradient batch, not MG-DSGD's own update. This is the rule as recalled:
per outer step k every worker accumulates R stochastic gradients at its current model,
g_i = (1/R) sum_r G_i(x_i^k; xi_i^{k,r}), takes one local step phi_i = x_i^k - gamma g_i, then runs R rounds
of accelerated gossip (FastMix)

    z^0 = z^{-1} = phi,   z^{r+1} = (1 + eta) W z^r - eta z^{r-1},
    eta = (1 - sqrt(1 - beta^2)) / (1 + sqrt(1 - beta^2)),  beta = ||W - 11^T/n||_2 = lam for symmetric W,

and sets x^{k+1} = z^R. No gradient tracking.

In the iterations of the class A_B (docs/theory.md §1.5: at most B queries and one round per iteration) an
outer step takes 2R iterations with ``form="atc"`` (the default, the rule above): R iterations each query B
samples at x^k, then R iterations each run one gossip round on phi. ``form="cta"`` overlaps them in R
iterations: the R rounds mix x^k while the R queries accumulate g at x^k, and x^{k+1} = FastMix(x^k) - gamma g
(a combine-then-adapt variant, like a DeTAG phase without the tracker). eta defaults to the formula above
(``bounds.accelerated_gossip_eta``); R defaults to ceil(log(n) / (2 sqrt(1 - lam))), at least 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from decbounds.algorithms import Context, PlotStyle, Setup, State, StepRule, state_as

from decbounds import bounds

__all__ = ["FORMS", "MGDSGD", "MultiGossipState", "default_rounds"]

FORMS: tuple[str, ...] = ("atc", "cta")


@dataclass(eq=False)
class MultiGossipState(State):
    """x = x^k; ``g`` the gradient mean of the outer step; ``z``, ``z_prev``, ``buf`` the FastMix iterates
    z^r, z^{r-1} and the output of the next round."""

    g: np.ndarray
    z: np.ndarray
    z_prev: np.ndarray
    buf: np.ndarray


def default_rounds(n: int, lam: float) -> int:
    """R = ceil(log(n) / (2 sqrt(1 - lam))), at least 1: FastMix rounds that contract disagreement by about
    1/sqrt(n) (the log n of the recalled rate, as DeTAG's R of Lu & De Sa 2021, Cor. 6).

    Parameters
    ----------
    n : int
        Workers (n < 2 counts as 2).
    lam : float
        W's second-largest eigenvalue magnitude, in [0, 1).

    References
    ----------
    docs/theory.md §15 (MG-DSGD) and (D4) (the log n branch).
    """
    return max(1, math.ceil(0.5 * math.log(max(n, 2)) / math.sqrt(1.0 - lam)))


class MGDSGD(StepRule):
    """MG-DSGD (Yuan et al. 2022, recalled): R accumulated gradients, one local step, R rounds of accelerated
    gossip per outer step (module docstring). Structural: ``R`` (rounds and gradients per outer step),
    ``form`` ("atc": 2R iterations per outer step; "cta": R), ``eta`` (None: the formula).

    Parameters
    ----------
    R : int, optional
        Gossip rounds and accumulated gradients per outer step, >= 1 (structural); default
        `default_rounds`.
    form : {"atc", "cta"}
        "atc" (default): R query iterations, then R gossip iterations; "cta": both interleaved, R
        iterations per outer step (structural).
    eta : float, optional
        FastMix coefficient in [0, 1) (structural); default ``bounds.accelerated_gossip_eta(lam)``, (G1).

    Raises
    ------
    ValueError
        If R is not a positive integer, ``form`` is not one of `FORMS`, or eta is outside [0, 1).

    References
    ----------
    Yuan et al. (2022), Revisiting optimal convergence rate for smooth and non-convex stochastic
    decentralized optimization, NeurIPS; docs/theory.md §15, docs/errata.md E39.

    Examples
    --------
    No gradient tracking: the average converges, the workers' models keep the heterogeneity bias:

    >>> from decbounds import algorithms, instances
    >>> f = instances.heterogeneous_quadratic(4, 3, 1.0, seed=0)
    >>> W = instances.gossip_matrix(instances.topology("ring", 4), "metropolis")
    >>> result = algorithms.run("mg_dsgd", f, W, step_size=0.5, iterations=1000, tol=1e-2)
    >>> result.hyper["R"], result.t_eps, result.t_eps_local
    (1, 146, None)
    """

    name = "mg_dsgd"
    aliases = ("mg-dsgd",)
    catalog_entry = "mg_dsgd"
    style = PlotStyle(color="tab:olive", marker="*", linestyle="-.", label="MG-DSGD")
    structural: ClassVar[dict[str, Any]] = {"R": None, "form": "atc", "eta": None}
    batchable: ClassVar[dict[str, Any]] = {}

    @classmethod
    def tuning_grid(cls, *, n: int, lam: float, cap: int,
                    stochastic: bool = False) -> dict[str, list[object]]:
        """R over the powers of two from 1/4 to twice the mixing time 1/sqrt(1 - lam) (at most twice
        `default_rounds`), largest first: every outer step pays its 2R iterations, so an R below the
        formula's can win at a finite cap, while FastMix needs R of the mixing time to contract.

        Parameters
        ----------
        n : int
            Workers.
        lam : float
            W's lam.
        cap : int
            The iteration cap.
        stochastic : bool, default False
            Whether the oracle is stochastic.
        """
        mixing = 1.0 / math.sqrt(1.0 - lam)
        bottom, top = max(1.0, mixing / 4.0), max(2.0, min(2.0 * mixing, 2.0 * default_rounds(n, lam)))
        return {"R": [2**k for k in range(30, -1, -1) if bottom <= 2**k <= top]}

    def prepare(self, setup: Setup) -> None:
        values = self.structural_values
        assert self.lam is not None
        R = default_rounds(self.n, self.lam) if values["R"] is None else values["R"]
        if isinstance(R, bool) or int(R) != R or R < 1:
            raise ValueError(f"R (gossip rounds per outer step) must be a positive integer; got R={R!r}")
        if values["form"] not in FORMS:
            raise ValueError(f"form must be one of {FORMS}; got form={values['form']!r}")
        eta = bounds.accelerated_gossip_eta(self.lam) if values["eta"] is None else float(values["eta"])
        if not 0.0 <= eta < 1.0:
            raise ValueError(f"eta must lie in [0, 1); got eta={values['eta']!r}")
        self.R, self.form, self.eta = int(R), values["form"], eta
        values.update(R=self.R, eta=self.eta)

    def init(self, ctx: Context) -> MultiGossipState:
        x = ctx.start_state()
        return MultiGossipState(x=x, g=ctx.zeros(), z=x.copy(), z_prev=x.copy(), buf=ctx.zeros())

    def _round(self, s: MultiGossipState, ctx: Context, r: int) -> None:
        """FastMix round r (from 0): z^{r+1} = (1 + eta) W z^r - eta z^{r-1}, with z^{-1} = z^0."""
        previous = s.z if r == 0 else s.z_prev
        ctx.gossip_two_tap(s.z, s.buf, 1.0 + self.eta, previous, -self.eta)
        s.z_prev, s.z, s.buf = s.z, s.buf, s.z_prev

    def step(self, state: State, ctx: Context) -> MultiGossipState:
        s = state_as(state, MultiGossipState)
        R = self.R
        if self.form == "cta":
            r = ctx.t % R
            if r == 0:
                s.z[...] = s.x
            s.g += ctx.sample(s.x)
            self._round(s, ctx, r)
            if r == R - 1:
                np.multiply(s.g, ctx.step_size * (1.0 / R), out=s.x)
                np.subtract(s.z, s.x, out=s.x)
                s.g[...] = 0.0
            return s
        r = ctx.t % (2 * R)
        if r < R:
            s.g += ctx.sample(s.x)
            if r == R - 1:  # the local step phi = x - gamma g starts the gossip
                np.multiply(s.g, ctx.step_size * (1.0 / R), out=s.z)
                np.subtract(s.x, s.z, out=s.z)
                s.g[...] = 0.0
            return s
        self._round(s, ctx, r - R)
        if r == 2 * R - 1:
            s.x[...] = s.z
        return s

    def worker_arrays(self, state: State) -> list[np.ndarray]:
        s = state_as(state, MultiGossipState)
        return [s.x, s.g, s.z, s.z_prev]
