"""Honest rules written from the papers' formulas (not from the package's rules): each must pass the class
audit, exit status 0 (EXTRA in its cumulative form is test_verify_cheating.py's CumulativeExtra)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from decbounds import algorithms

_STYLE = algorithms.PlotStyle(color="tab:green", marker="o", label="honest")


class PaperDPSGD(algorithms.StepRule):
    """D-PSGD, Lian et al. 2017, Alg. 1: x_{k+1} = W x_k - gamma g(x_k) (gossip of x, local gradient)."""

    name = "paper_dpsgd"
    style = _STYLE
    batchable: ClassVar[dict] = {}

    def init(self, ctx):
        return algorithms.State(x=ctx.start_state())

    def step(self, s, ctx):
        g = ctx.sample(s.x)
        s.x = ctx.gossip(s.x) - ctx.step_size * g
        return s


@dataclass(eq=False)
class TrackingState(algorithms.State):
    wy: np.ndarray  # W y_{k-1} (0 before the first iteration)
    g_prev: np.ndarray  # g(x_{k-1}) (0 before the first iteration)


class PaperTracking(algorithms.StepRule):
    """Gradient tracking, Nedic, Olshevsky & Shi 2017 (DIGing): y_k = W y_{k-1} + g(x_k) - g(x_{k-1}),
    x_{k+1} = W x_k - alpha y_k, with y_{-1} = g(x_{-1}) = 0; x and y sent in one round."""

    name = "paper_tracking"
    style = _STYLE
    batchable: ClassVar[dict] = {}

    def init(self, ctx):
        return TrackingState(x=ctx.start_state(), wy=ctx.zeros(), g_prev=ctx.zeros())

    def step(self, s, ctx):
        g = ctx.sample(s.x)
        y = s.wy + g - s.g_prev
        wx, s.wy = ctx.gossip(s.x, y)
        s.x = wx - ctx.step_size * y
        s.g_prev = g
        return s


@dataclass(eq=False)
class DiffusionState(algorithms.State):
    psi: np.ndarray  # psi_{k-1} (x0 before the first iteration)


class PaperExactDiffusion(algorithms.StepRule):
    """Exact Diffusion, Yuan, Ying, Zhao & Sayed 2019: psi_k = x_{k-1} - alpha g(x_{k-1});
    phi_k = psi_k + x_{k-1} - psi_{k-1}; x_k = W-bar phi_k with W-bar = (I + W)/2."""

    name = "paper_exact_diffusion"
    style = _STYLE
    batchable: ClassVar[dict] = {}

    def init(self, ctx):
        return DiffusionState(x=ctx.start_state(), psi=ctx.start_state())

    def step(self, s, ctx):
        psi = s.x - ctx.step_size * ctx.sample(s.x)
        phi = psi + s.x - s.psi
        s.x = 0.5 * (phi + ctx.gossip(phi))
        s.psi = psi
        return s


HONEST = [PaperDPSGD, PaperTracking, PaperExactDiffusion]  # EXTRA's cumulative form: test_verify_cheating.py
