"""MG-DSGD, multi-gossip decentralized SGD (Yuan, Huang, Chen, Zhang, Zhang & Pan, NeurIPS 2022, arXiv
2210.07863), written only through the public step-rule API.

Status: recalled (the paper's update could not be read; docs/theory.md §15, errata E39). Per outer step k
each worker accumulates R gradients at x_i^k, g_i = (1/R) sum_r G_i(x_i^k), steps phi_i = x_i^k - gamma g_i,
then runs R rounds of accelerated gossip (FastMix, (G1)):

    z^0 = z^{-1} = phi,   z^{r+1} = (1 + eta) W z^r - eta z^{r-1},   x^{k+1} = z^R,

eta = (1 - sqrt(1 - lam^2)) / (1 + sqrt(1 - lam^2)). ``form="atc"``: 2R iterations of the class A_B per
outer step (R querying, R gossiping); ``form="cta"``: R, x^{k+1} = FastMix(x^k) - gamma g."""

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
    """R = ceil(log(n) / (2 sqrt(1 - lam))), at least 1: FastMix rounds contracting disagreement by about
    1/sqrt(n) (docs/theory.md §15, (D4)'s log n branch).

    Parameters
    ----------
    n : int
    lam : float
    """
    return max(1, math.ceil(0.5 * math.log(max(n, 2)) / math.sqrt(1.0 - lam)))


class MGDSGD(StepRule):
    """MG-DSGD (Yuan et al. 2022, recalled; module docstring): R accumulated gradients, one local step, R
    rounds of accelerated gossip per outer step; no gradient tracking.

    Parameters
    ----------
    R : int, optional
        Rounds and gradients per outer step, >= 1 (structural); default `default_rounds`.
    form : {"atc", "cta"}
        2R or R iterations per outer step (structural).
    eta : float, optional
        FastMix coefficient in [0, 1) (structural); default (G1)'s.

    Examples
    --------
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
        """R over the powers of two from 1/4 to twice the mixing time 1/sqrt(1 - lam), largest first (an R
        below the formula's can win at a finite cap); fewest first on a stochastic oracle, where the fewest
        rounds per step win and the first group is the one run whole.

        Parameters
        ----------
        n : int
        lam : float
        cap : int
        stochastic : bool, default False
        """
        mixing = 1.0 / math.sqrt(1.0 - lam)
        bottom, top = max(1.0, mixing / 4.0), max(2.0, min(2.0 * mixing, 2.0 * default_rounds(n, lam)))
        rounds = [2**k for k in range(30, -1, -1) if bottom <= 2**k <= top]
        return {"R": rounds[::-1] if stochastic else rounds}

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
