"""Compressed gossip: CHOCO-SGD (Koloskova, Stich & Jaggi 2019) and BEER (Zhao et al. 2022), whose one round
per iteration sends compressed vectors (``ctx.gossip(..., compressor=C)``; docs/theory.md §18). C is
contractive (an unbiased one is used as C / (1 + omega)); each worker keeps public copies its neighbours
rebuild from the messages, so the rule keeps W H itself. The recursions were read from the authors'
restatement (github.com/liboyue/beer), not the papers' text (docs/theory.md §18)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from decbounds.algorithms import (
    Compressor,
    Context,
    PlotStyle,
    Setup,
    State,
    StepRule,
    contractive,
    make_compressor,
    state_as,
)

__all__ = ["BEER", "BEERState", "ChocoSGD", "ChocoState", "CompressedRule", "theory_gamma"]


class CompressedRule(StepRule):
    """The shared part of the compressed rules: the structural ``compressor`` (a spec string of
    ``algorithms.compression.make_compressor``, or a compressor; recorded as its spec) made contractive,
    and the batchable consensus step ``gamma`` in (0, 1] (default: the compressor's delta)."""

    structural: ClassVar[dict[str, Any]] = {"compressor": "identity"}
    batchable: ClassVar[dict[str, Any]] = {"gamma": None}

    @classmethod
    def tuning_grid(cls, *, n: int, lam: float, cap: int,
                    stochastic: bool = False) -> dict[str, list[object]]:
        """The consensus step gamma in {1, 1/2, 1/4}.

        Parameters
        ----------
        n : int
        lam : float
        cap : int
        stochastic : bool, default False
        """
        return {"gamma": [1.0, 0.5, 0.25]}

    def prepare(self, setup: Setup) -> None:
        self.compressor: Compressor = contractive(make_compressor(self.structural_values["compressor"]))
        self.delta = float(self.compressor.delta(setup.d))  # refuses k > d here, before the run
        self.structural_values["compressor"] = self.compressor.spec

    def check_values(self, values: dict[str, object]) -> dict[str, object]:
        gamma = values.get("gamma")
        if gamma is None:
            values["gamma"] = self.delta
        elif isinstance(gamma, bool) or not isinstance(gamma, (int, float, np.integer, np.floating)):
            raise TypeError(f"gamma must be a number in (0, 1]; got gamma={gamma!r}")
        elif not (math.isfinite(gamma) and 0.0 < gamma <= 1.0):
            raise ValueError(f"gamma (the consensus step) must lie in (0, 1]; got gamma={gamma!r}")
        else:
            values["gamma"] = float(gamma)
        return values

    def compression_constants(self) -> dict[str, float]:
        """delta of the (contractive) compressor in use: what the catalog entry reads."""
        return {"delta": self.delta}


def theory_gamma(rho: float, delta: float, beta: float) -> float:
    """CHOCO-SGD's consensus step of Thm 4.1 (Koloskova, Lin, Stich & Jaggi 2020), in (0, 1):
    gamma = rho^2 delta/(16 rho + rho^2 + 4 beta^2 + 2 rho beta^2 - 8 rho delta).

    Parameters
    ----------
    rho : float
        The spectral gap 1 - lam.
    delta : float
    beta : float
        ||I - W||_2 = 1 - lambda_min(W).

    >>> round(theory_gamma(0.5, 1.0, 1.0), 6)
    0.027027
    """
    return rho**2 * delta / (16 * rho + rho**2 + 4 * beta**2 + 2 * rho * beta**2 - 8 * rho * delta)


@dataclass(eq=False)
class ChocoState(State):
    """x, the public copy ``x_hat`` (H), ``w_hat`` = W x_hat, and the scratch arrays ``diff`` and ``q``
    (the message)."""

    x_hat: np.ndarray
    w_hat: np.ndarray
    diff: np.ndarray
    q: np.ndarray


class ChocoSGD(CompressedRule):
    """CHOCO-SGD (Koloskova, Stich & Jaggi 2019, Alg. 2; docs/theory.md §18), per iteration:

        x_i^{t+1/2} = x_i^t - eta G_i(x_i^t);  q_i^t = C(x_i^{t+1/2} - x_hat_i^t)  (the only message)
        x_hat_j^{t+1} = x_hat_j^t + q_j^t;  x_i^{t+1} = x_i^{t+1/2} + gamma sum_j w_ij (x_hat_j - x_hat_i)

    With C = identity and gamma = 1 it is adapt-then-combine D-PSGD (to rounding).

    Parameters
    ----------
    compressor : str or Compressor, default "identity"
        Structural.
    gamma : float or "theory", optional
        In (0, 1] (batchable); default the compressor's delta (our choice); "theory": `theory_gamma`.

    Examples
    --------
    >>> from decbounds import algorithms, instances
    >>> f = instances.heterogeneous_quadratic(4, 8, 1.0, seed=0)
    >>> W = instances.gossip_matrix(instances.topology("ring", 4), "metropolis")
    >>> r = algorithms.run("choco_sgd", f, W, step_size=0.2, iterations=3000, tol=1e-3, compressor="top_k:2")
    >>> r.status, r.hyper["gamma"], r.counters["bits"] == r.iterations * 2 * (64 + 3)
    ('converged', 0.25, True)
    """

    name = "choco_sgd"
    aliases = ("choco",)
    catalog_entry = "choco_sgd"
    style = PlotStyle(color="teal", marker="d", linestyle="--", label="CHOCO-SGD")
    # beta = ||I - W||_2 = 1 - lambda_min of the theorem's gamma (gamma="theory")
    knows = ("lambda_min",)

    def prepare(self, setup: Setup) -> None:
        super().prepare(setup)
        assert setup.lambda_min is not None and setup.lam is not None
        self.lambda_min, self.lam_of_w = float(setup.lambda_min), float(setup.lam)

    def check_values(self, values: dict[str, object]) -> dict[str, object]:
        if values.get("gamma") == "theory":
            values["gamma"] = theory_gamma(1.0 - self.lam_of_w, self.delta, 1.0 - self.lambda_min)
        return super().check_values(values)

    def init(self, ctx: Context) -> ChocoState:
        self.gamma = ctx.hyper["gamma"]
        return ChocoState(x=ctx.start_state(), x_hat=ctx.zeros(), w_hat=ctx.zeros(), diff=ctx.zeros(),
                          q=ctx.zeros())

    def step(self, state: State, ctx: Context) -> ChocoState:
        s = state_as(state, ChocoState)
        s.x -= ctx.step_size * ctx.sample(s.x)  # x^{t+1/2}
        np.subtract(s.x, s.x_hat, out=s.diff)
        s.w_hat += ctx.gossip(s.diff, compressor=self.compressor, sent=(s.q,))  # W x_hat^{t+1}
        s.x_hat += s.q
        s.x += self.gamma * (s.w_hat - s.x_hat)
        return s

    def worker_arrays(self, state: State) -> list[np.ndarray]:
        s = state_as(state, ChocoState)
        return [s.x, s.x_hat, s.w_hat]


@dataclass(eq=False)
class BEERState(State):
    """x (X^t); the copies ``h`` (H^t) and ``g`` (G^{t-1}), halves of one (2n, k, d) array, and their
    mixtures ``w_h``, ``w_g`` (halves of another); the tracker ``v`` (V^{t-1}), the last gradient
    ``grad_prev``; scratch: the differences ``diff_h``, ``diff_g`` and the messages ``q_h``, ``q_g`` (halves
    of a (2n, k, d) array each, so that one product sends both)."""

    h: np.ndarray
    g: np.ndarray
    w_h: np.ndarray
    w_g: np.ndarray
    v: np.ndarray
    grad_prev: np.ndarray
    diff_h: np.ndarray
    diff_g: np.ndarray
    q_h: np.ndarray
    q_g: np.ndarray


class BEER(CompressedRule):
    """BEER (Zhao, Li, Li, Richtarik & Chi 2022; docs/theory.md §18): gradient tracking with compressed error
    feedback on models and trackers,

        X^{t+1} = X^t + gamma (W - I) H^t - eta V^t;  H^{t+1} = H^t + C(X^{t+1} - H^t)
        V^{t+1} = V^t + gamma (W - I) G^t + G(X^{t+1}) - G(X^t);  G^{t+1} = G^t + C(V^{t+1} - G^t)

    both messages in one round; G^0 = C(V^0) (the paper's G^0 = 0 is unconfirmed; ours makes C = identity,
    gamma = 1 exactly DSGT, to rounding).

    Parameters
    ----------
    compressor : str or Compressor, default "identity"
        Structural.
    gamma : float, optional
        In (0, 1] (batchable); default the compressor's delta (our choice).

    Examples
    --------
    >>> from decbounds import algorithms, instances
    >>> f = instances.heterogeneous_quadratic(4, 8, 1.0, seed=0)
    >>> W = instances.gossip_matrix(instances.topology("ring", 4), "metropolis")
    >>> r = algorithms.run("beer", f, W, step_size=0.1, iterations=3000, tol=1e-3, compressor="top_k:2")
    >>> r.status, r.t_eps_local is not None, r.counters["vectors_sent"] == 2 * r.iterations
    ('converged', True, True)
    """

    name = "beer"
    catalog_entry = "beer"
    style = PlotStyle(color="crimson", marker="*", linestyle="--", label="BEER")

    def init(self, ctx: Context) -> BEERState:
        self.gamma = ctx.hyper["gamma"]
        n, shape = self.n, (2 * self.n, ctx.k, ctx.d)
        hg, w_hg, diff, q = (np.zeros(shape) for _ in range(4))
        return BEERState(x=ctx.start_state(), h=hg[:n], g=hg[n:], w_h=w_hg[:n], w_g=w_hg[n:], v=ctx.zeros(),
                         grad_prev=ctx.zeros(), diff_h=diff[:n], diff_g=diff[n:], q_h=q[:n], q_g=q[n:])

    def step(self, state: State, ctx: Context) -> BEERState:
        s = state_as(state, BEERState)
        grad = ctx.sample(s.x)
        s.v += self.gamma * (s.w_g - s.g)  # V^t = V^{t-1} + gamma (W - I) G^{t-1} + G(X^t) - G(X^{t-1})
        s.v += grad
        s.v -= s.grad_prev
        s.grad_prev[...] = grad
        s.x += self.gamma * (s.w_h - s.h)  # X^{t+1} = X^t + gamma (W - I) H^t - eta V^t
        s.x -= ctx.step_size * s.v
        np.subtract(s.x, s.h, out=s.diff_h)
        np.subtract(s.v, s.g, out=s.diff_g)
        # the two messages in one round: the stacked (2n, k, d) arrays behind the halves (init)
        q = _stacked(s.q_h)
        _stacked(s.w_h)[...] += ctx.gossip(_stacked(s.diff_h), compressor=self.compressor, sent=(q,))
        _stacked(s.h)[...] += q  # H^{t+1} and G^t
        return s

    def worker_arrays(self, state: State) -> list[np.ndarray]:
        s = state_as(state, BEERState)
        return [s.x, s.h, s.g, s.w_h, s.w_g, s.v, s.grad_prev]


def _stacked(half: np.ndarray) -> np.ndarray:
    """The (2n, k, d) array of which ``half`` is the first n rows (`BEER.init` cuts them so)."""
    stacked = half.base
    if not isinstance(stacked, np.ndarray):
        raise TypeError("a BEER state's halves must be views of the stacked arrays BEER.init makes")
    return stacked
