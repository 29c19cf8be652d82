"""Step rules: centralized SGD, local SGD, D-PSGD, D2, DSGT, GT-DSGD, SGP, DeFacto, DeTAG (docs/theory.md
§5-§8). Per configuration X is the (n, d) stack of local models, G(X) the B-sample gradients at its rows, W
applied as X <- W X. Heavy-ball ``momentum`` (§9 ran 0.9) replaces the update direction u by the buffer
v <- momentum v + u, per worker, never communicated."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, cast

import numpy as np
import scipy.sparse as sp
from decbounds.algorithms.engine import Context, MixingHandle
from decbounds.algorithms.mixing import SHORT_ROW
from decbounds.algorithms.step_rule import Setup, State, StepRule, check_n_by_n, problem_constants, state_as
from decbounds.algorithms.style import PlotStyle
from decbounds.bounds.detag_params import accelerated_gossip_eta, detag_phase_length
from decbounds.bounds.validation import require_choice, require_count, require_real
from decbounds.instances.averaging import (
    GOSSIP_METHODS,
    GOSSIP_STARTS,
    exact_averaging_factors,
    multi_step_gossip_coefficients,
)
from decbounds.instances.gossip import GossipLike, as_csr
from decbounds.instances.protocol import LocalFunctions

__all__ = [
    "D2",
    "DPSGD",
    "DSGT",
    "GTDSGD",
    "RULES",
    "SGP",
    "CentralizedSGD",
    "D2State",
    "DPSGDState",
    "DeFacto",
    "DeFactoState",
    "DeTAG",
    "DeTAGState",
    "LocalSGD",
    "MomentumState",
    "PushSumState",
    "TrackingState",
    "default_phase_length",
    "phase_length",
    "rounds_grid",
]



def _one(mixed: np.ndarray | tuple[np.ndarray, ...]) -> np.ndarray:
    """The array ``ctx.mix`` returns for one array (a tuple only for several)."""
    if isinstance(mixed, tuple):
        raise TypeError(f"expected the one mixed array; got a tuple of {len(mixed)}")
    return mixed

@dataclass(eq=False)
class MomentumState(State):
    """Local models x and the heavy-ball buffer v (None without momentum)."""

    v: np.ndarray | None


# ------------------------------------------------------------------------------------------------------
# exact-averaging baselines


class CentralizedSGD(StepRule):
    """Mini-batch SGD with an exact average every iteration: x <- x - alpha mean_i G_i(x), the centralized
    anchor of Table 2 (alias "sgd"; W unused; docs/theory.md §8, (F4), errata E5).

    Parameters
    ----------
    momentum : float, default 0.0
        In [0, 1) (batchable).

    Examples
    --------
    >>> from decbounds import algorithms, instances
    >>> f = instances.heterogeneous_quadratic(4, 3, 1.0, seed=0)
    >>> algorithms.run("centralized", f, step_size=0.5, iterations=1000, tol=1e-2).t_eps
    73
    """

    name = "centralized"
    aliases = ("sgd",)
    catalog_entry = "centralized_sgd"
    style = PlotStyle(color="black", marker="x", linestyle=":", label="centralized SGD")
    batchable: ClassVar[dict[str, Any]] = {"momentum": 0.0}
    communication = "exact"
    gossips = False

    def init(self, ctx: Context) -> MomentumState:
        return MomentumState(x=ctx.start_state(), v=self.momentum_buffer(ctx))

    def step(self, state: State, ctx: Context) -> MomentumState:
        s = state_as(state, MomentumState)
        mean_grad = ctx.exact_average(ctx.sample(s.x))
        s.x -= ctx.step_size * self.heavy_ball(s.v, np.broadcast_to(mean_grad, s.x.shape), ctx)
        return s


class LocalSGD(StepRule):
    """Local SGD / FedAvg: x_i <- x_i - alpha G_i(x_i), and every H-th iteration an exact average (alias
    "fedavg"; W unused).

    Parameters
    ----------
    H : int, default 4
        Iterations between averages, >= 1 (structural).
    momentum : float, default 0.0
        In [0, 1) (batchable; the buffer is never averaged).

    Examples
    --------
    >>> from decbounds import algorithms, instances
    >>> f = instances.heterogeneous_quadratic(4, 3, 1.0, seed=0)
    >>> result = algorithms.run("fedavg", f, step_size=0.5, iterations=1000, tol=1e-2, H=2)
    >>> result.t_eps, result.t_eps_local
    (73, 74)
    """

    name = "local_sgd"
    aliases = ("fedavg",)
    style = PlotStyle(color="tab:brown", marker=">", linestyle=":", label="local SGD")
    batchable: ClassVar[dict[str, Any]] = {"momentum": 0.0}
    structural: ClassVar[dict[str, Any]] = {"H": 4}
    communication = "exact"
    gossips = False

    def prepare(self, setup: Setup) -> None:
        self.H = require_count("H", self.structural_values["H"], 1)
        self.structural_values["H"] = self.H

    def init(self, ctx: Context) -> MomentumState:
        return MomentumState(x=ctx.start_state(), v=self.momentum_buffer(ctx))

    def step(self, state: State, ctx: Context) -> MomentumState:
        s = state_as(state, MomentumState)
        s.x -= ctx.step_size * self.heavy_ball(s.v, ctx.sample(s.x), ctx)
        if (ctx.t + 1) % self.H == 0:
            s.x[...] = ctx.exact_average(s.x)
        return s


# ------------------------------------------------------------------------------------------------------
# gossip baselines


@dataclass(eq=False)
class DPSGDState(MomentumState):
    """x, v, and two scratch arrays: ``buf`` (the gossip output, swapped with x) and ``step`` (-alpha G)."""

    buf: np.ndarray
    step: np.ndarray


class DPSGD(StepRule):
    """D-PSGD (Lian et al. 2017; docs/theory.md §8, errata E16): ``form="cta"`` X <- W X - alpha G(X)
    (Lian's), ``form="atc"`` X <- W (X - alpha G(X)).

    Parameters
    ----------
    form : {"cta", "atc"}
        Structural.
    momentum : float, default 0.0
        In [0, 1) (batchable).

    Examples
    --------
    Under heterogeneity the workers' own models stay apart (errata E40):

    >>> from decbounds import algorithms, instances
    >>> f = instances.heterogeneous_quadratic(4, 3, 1.0, seed=0)
    >>> W = instances.gossip_matrix(instances.topology("ring", 4), "metropolis")
    >>> result = algorithms.run("dpsgd", f, W, step_size=0.5, iterations=1000, tol=1e-2)
    >>> result.t_eps, result.t_eps_local
    (73, None)
    """

    name = "dpsgd"
    aliases = ("d-psgd", "dsgd")
    catalog_entry = "dpsgd"
    style = PlotStyle(color="tab:blue", marker="v", label="D-PSGD")
    batchable: ClassVar[dict[str, Any]] = {"momentum": 0.0}
    structural: ClassVar[dict[str, Any]] = {"form": "cta"}
    directed_rounds = True  # W_t 1 = 1 and 1^T W_t = 1^T are all its recursion needs (Ying et al. 2021)

    def prepare(self, setup: Setup) -> None:
        if self.structural_values["form"] not in ("cta", "atc"):
            raise ValueError(f"form must be 'cta' or 'atc'; got form={self.structural_values['form']!r}")
        self.atc = self.structural_values["form"] == "atc"

    def init(self, ctx: Context) -> DPSGDState:
        self.minus_alpha = -ctx.step_size  # a per-batch constant (1, k, d): on the rule, not in the state
        return DPSGDState(x=ctx.start_state(), v=self.momentum_buffer(ctx), buf=ctx.zeros(),
                          step=ctx.zeros())

    def step(self, state: State, ctx: Context) -> DPSGDState:
        s = state_as(state, DPSGDState)
        direction = self.heavy_ball(s.v, ctx.sample(s.x), ctx)
        if self.atc:
            s.x -= ctx.step_size * direction
            ctx.gossip(s.x, out=(s.buf,))
        else:
            # W X + (-alpha G) in the product's pass: the bits of W X - alpha G
            np.multiply(direction, self.minus_alpha, out=s.step)
            ctx.gossip(s.x, out=(s.buf,), add=(s.step,))
        s.x, s.buf = s.buf, s.x
        return s


@dataclass(eq=False)
class D2State(MomentumState):
    """x, v, the previous models and update direction, and the scratch array ``half``."""

    x_prev: np.ndarray
    u_prev: np.ndarray
    half: np.ndarray


class D2(StepRule):
    """D^2 (Tang et al. 2018b; docs/theory.md §8): X_{t+1} = W (2 X_t - X_{t-1} - alpha G(X_t) + alpha
    G(X_{t-1})), X_{-1} = X_0, G(X_{-1}) = 0. Needs lambda_min(W) >= -1/3 (ValueError otherwise, for every
    W_t of a schedule's period: use ``instances.lazy(W)``).

    Parameters
    ----------
    momentum : float, default 0.0
        In [0, 1) (batchable).

    Examples
    --------
    >>> from decbounds import algorithms, instances
    >>> f = instances.heterogeneous_quadratic(4, 3, 1.0, seed=0)
    >>> W = instances.gossip_matrix(instances.topology("ring", 4), "metropolis")
    >>> result = algorithms.run("d2", f, W, step_size=0.5, iterations=1000, tol=1e-2)
    >>> result.t_eps, result.t_eps_local
    (73, 75)
    """

    name = "d2"
    catalog_entry = "d2"
    style = PlotStyle(color="tab:orange", marker="^", label="D$^2$")
    batchable: ClassVar[dict[str, Any]] = {"momentum": 0.0}
    knows = ("lambda_min",)  # the condition lambda_min(W) >= -1/3 is checked, never used in a step

    def prepare(self, setup: Setup) -> None:
        lowest = setup.lambda_min
        assert lowest is not None
        if lowest < -1.0 / 3.0 - 1e-12:
            raise ValueError(f"W has lambda_min = {lowest:.6g} < -1/3, which D2 requires (Tang et al. "
                             "2018b); use a lazier W (instances.lazy)")

    def init(self, ctx: Context) -> D2State:
        x = ctx.start_state()
        return D2State(x=x, v=self.momentum_buffer(ctx), x_prev=x.copy(), u_prev=ctx.zeros(),
                       half=ctx.zeros())

    def step(self, state: State, ctx: Context) -> D2State:
        s = state_as(state, D2State)
        u = self.heavy_ball(s.v, ctx.sample(s.x), ctx)
        np.multiply(s.x, 2.0, out=s.half)
        s.half -= s.x_prev
        s.half -= ctx.step_size * (u - s.u_prev)
        s.u_prev[...] = u
        s.x_prev, s.x = s.x, s.x_prev  # x_prev <- x; the old x_prev buffer receives the new x
        ctx.gossip(s.half, out=(s.x,))
        return s

    def worker_arrays(self, state: State) -> list[np.ndarray]:
        s = state_as(state, D2State)
        return [s.x, s.x_prev, s.u_prev]


@dataclass(eq=False)
class TrackingState(MomentumState):
    """x, v, the tracker y, the last gradient g_prev, and gossip outputs (swapped with x and y)."""

    y: np.ndarray
    g_prev: np.ndarray
    bx: np.ndarray
    by: np.ndarray


class DSGT(StepRule):
    """DSGT (Zhang & You 2019c; docs/theory.md §8, errata E15): x_{t+1} = W x_t - alpha y_t,
    y_{t+1} = W y_t + G(x_{t+1}) - G(x_t), y_0 = G(x_0); x_t and y_{t-1} gossip in one round.

    Parameters
    ----------
    momentum : float, default 0.0
        In [0, 1) (batchable).

    Examples
    --------
    >>> from decbounds import algorithms, instances
    >>> f = instances.heterogeneous_quadratic(4, 3, 1.0, seed=0)
    >>> W = instances.gossip_matrix(instances.topology("ring", 4), "metropolis")
    >>> [algorithms.run("dsgt", f, W, step_size=s, iterations=1000, tol=1e-2).status for s in (0.2, 0.5)]
    ['converged', 'diverged']
    """

    name = "dsgt"
    catalog_entry = "dsgt"
    style = PlotStyle(color="tab:green", marker="s", label="DSGT")
    batchable: ClassVar[dict[str, Any]] = {"momentum": 0.0}

    def init(self, ctx: Context) -> TrackingState:
        # x and y are the two halves of one (2n, k, d) array, and so are the gossip outputs bx and by: one
        # product gossips both (ctx.gossip of a stacked array)
        xy, bxy = np.zeros((2 * self.n, ctx.k, ctx.d)), np.zeros((2 * self.n, ctx.k, ctx.d))
        xy[: self.n] = ctx.start_state()
        return TrackingState(x=xy[: self.n], v=self.momentum_buffer(ctx), y=xy[self.n :], g_prev=ctx.zeros(),
                             bx=bxy[: self.n], by=bxy[self.n :])

    def step(self, state: State, ctx: Context) -> TrackingState:
        s = state_as(state, TrackingState)
        g = ctx.sample(s.x)
        xy, bxy = s.x.base, s.bx.base
        if xy is not None and xy is s.y.base and bxy is not None and bxy is s.by.base:
            ctx.gossip(xy, out=(bxy,))  # (x, y) stacked (init), two vectors
            s.by += g  # by = W y_{t-1} + G(x_t)
        else:  # a state built otherwise
            ctx.gossip(s.x, s.y, out=(s.bx, s.by), add=(None, g))
        s.by -= s.g_prev  # y_t = W y_{t-1} + G(x_t) - G(x_{t-1})
        s.g_prev[...] = g
        s.bx -= ctx.step_size * (s.by if s.v is None else self.heavy_ball(s.v, s.by, ctx))
        s.x, s.bx = s.bx, s.x
        s.y, s.by = s.by, s.y
        return s

    def worker_arrays(self, state: State) -> list[np.ndarray]:
        s = state_as(state, TrackingState)
        return [s.x, s.y, s.g_prev]


class GTDSGD(StepRule):
    """GT-DSGD (Xin, Khan & Kar 2021; docs/theory.md §8, errata E37): x_{k+1} = W (x_k - alpha y_k),
    y_{k+1} = W (y_k + G(x_{k+1}) - G(x_k)), y_0 = G(x_0). The y-round needs G(x_{k+1}): an update takes two
    engine iterations (2k gossips x, 2k+1 queries and gossips y).

    Parameters
    ----------
    momentum : float, default 0.0
        In [0, 1) (batchable).

    Examples
    --------
    >>> from decbounds import algorithms, instances
    >>> f = instances.heterogeneous_quadratic(4, 3, 1.0, seed=0)
    >>> W = instances.gossip_matrix(instances.topology("ring", 4), "metropolis")
    >>> algorithms.run("gt_dsgd", f, W, step_size=0.5, iterations=1000, tol=1e-2).t_eps
    145
    """

    name = "gt_dsgd"
    aliases = ("gt-dsgd",)
    catalog_entry = "gt_dsgd"
    style = PlotStyle(color="tab:olive", marker="P", linestyle="--", label="GT-DSGD")
    batchable: ClassVar[dict[str, Any]] = {"momentum": 0.0}

    @classmethod
    def iterations_per_update(cls, structural: Mapping[str, object]) -> int:
        """Two engine iterations per update.

        Parameters
        ----------
        structural : mapping of str to object
        """
        return 2

    def init(self, ctx: Context) -> TrackingState:
        return TrackingState(x=ctx.start_state(), v=self.momentum_buffer(ctx), y=ctx.zeros(),
                             g_prev=ctx.zeros(), bx=ctx.zeros(), by=ctx.zeros())

    def step(self, state: State, ctx: Context) -> TrackingState:
        s = state_as(state, TrackingState)
        if ctx.t % 2 == 0:
            if ctx.t == 0:
                g = ctx.sample(s.x)
                s.y[...] = g
                s.g_prev[...] = g
            s.x -= ctx.step_size * self.heavy_ball(s.v, s.y, ctx)
            ctx.gossip(s.x, out=(s.bx,))
            s.x, s.bx = s.bx, s.x
        else:
            g = ctx.sample(s.x)
            s.y += g
            s.y -= s.g_prev
            s.g_prev[...] = g
            ctx.gossip(s.y, out=(s.by,))
            s.y, s.by = s.by, s.y
        return s

    def worker_arrays(self, state: State) -> list[np.ndarray]:
        s = state_as(state, TrackingState)
        return [s.x, s.y, s.g_prev]


@dataclass(eq=False)
class PushSumState(MomentumState):
    """x = z / w, the pushed numerators z and the push-sum weights w (n, 1, 1)."""

    z: np.ndarray
    w: np.ndarray


class SGP(StepRule):
    """Stochastic gradient push (Assran et al. 2019; docs/theory.md §8): push-sum on a column-stochastic P,
    z <- P (z - alpha G(x)), w <- P w, x = z / w (z_0 = x_0, w_0 = 1; a round carries z and w). W: a
    column-stochastic matrix, a graph (``instances.column_stochastic_matrix``) or a schedule of either kind.

    Parameters
    ----------
    momentum : float, default 0.0
        In [0, 1) (batchable).

    Examples
    --------
    >>> from decbounds import algorithms, instances
    >>> f = instances.heterogeneous_quadratic(4, 3, 1.0, seed=0)
    >>> W = instances.gossip_matrix(instances.topology("ring", 4), "metropolis")
    >>> algorithms.run("sgp", f, W, step_size=0.5, iterations=1000, tol=1e-2).t_eps
    73
    """

    name = "sgp"
    catalog_entry = "sgp"
    style = PlotStyle(color="tab:cyan", marker="<", linestyle="--", label="SGP")
    batchable: ClassVar[dict[str, Any]] = {"momentum": 0.0}
    communication = "push"

    def init(self, ctx: Context) -> PushSumState:
        x = ctx.start_state()
        return PushSumState(x=x, v=self.momentum_buffer(ctx), z=x.copy(), w=np.ones((self.n, 1, 1)))

    def step(self, state: State, ctx: Context) -> PushSumState:
        s = state_as(state, PushSumState)
        s.z -= ctx.step_size * self.heavy_ball(s.v, ctx.sample(s.x), ctx)
        s.z, s.w = ctx.gossip(s.z, s.w)  # a "push" rule's gossip applies the push matrix P
        np.divide(s.z, s.w, out=s.x)
        return s

    def worker_arrays(self, state: State) -> list[np.ndarray]:
        s = state_as(state, PushSumState)
        return [s.x, s.z]


# ------------------------------------------------------------------------------------------------------
# the paper's algorithms


@dataclass(eq=False)
class DeFactoState(State):
    """x, the replica being averaged through the factors, and the phase's mean gradient g."""

    replica: np.ndarray
    g: np.ndarray


class DeFacto(StepRule):
    """DeFacto (Alg. 1, Thm 4; docs/theory.md §5 (F1)-(F3), errata E4, E36) with the exact-averaging factors
    F_0..F_{R-1} (``instances.exact_averaging_factors``, product 11^T/n): rounds of R compute iterations
    (g <- g + G(x_k) / R) then R communicate iterations applying F_{r-R}. ``form="intended"`` averages
    x_k - alpha g (centralized SGD with batch B R); ``"literal"`` is Alg. 1 as printed. Over a gossip schedule
    its rounds are the factors (R = its period); exact only when their product is 11^T/n.

    Parameters
    ----------
    form : {"intended", "literal"}
        Structural.
    factors : sequence of (n, n) matrices, optional
        F_0..F_{R-1} with product 11^T/n (structural; refused over a schedule).

    Examples
    --------
    >>> from decbounds import algorithms, instances
    >>> f = instances.heterogeneous_quadratic(4, 3, 1.0, seed=0)
    >>> G = instances.topology("ring", 4)
    >>> result = algorithms.run("defacto", f, G, step_size=0.5, iterations=1000, tol=1e-2)
    >>> result.hyper["R"], result.t_eps, result.t_eps_local
    (4, 584, 584)
    """

    name = "defacto"
    catalog_entry = "defacto"
    style = PlotStyle(color="tab:purple", marker="D", label="DeFacto")
    structural: ClassVar[dict[str, Any]] = {"form": "intended", "factors": None}
    batchable: ClassVar[dict[str, Any]] = {}
    communication = "graph"
    # the exact-averaging factors are a schedule computed from the whole graph before the run (a global
    # precomputation, as in the paper); each factor is still checked to mix neighbours only (ctx.operator)
    knows = ("graph",)

    def prepare(self, setup: Setup) -> None:
        form = self.structural_values["form"]
        if form not in ("intended", "literal"):
            raise ValueError(f"form must be 'intended' or 'literal'; got form={form!r}")
        self.intended = form == "intended"
        factors = self.structural_values["factors"]
        self.scheduled = setup.time_varying
        if self.scheduled:  # the communicate iterations gossip with W_t (class docstring)
            if factors is not None:
                raise ValueError("factors cannot be given over a gossip schedule: its rounds are the factors")
            self.factor_matrices = []
            self.R = setup.period or max(1, math.ceil(math.log2(max(self.n, 2))))
            self.structural_values.update(R=self.R, factors="schedule")
            return
        if factors is None:
            assert setup.graph is not None
            factors = exact_averaging_factors(setup.graph)
        matrices: list[sp.csr_array] = [as_csr(F, "factors") for F in factors]
        if not matrices:
            raise ValueError("factors must hold at least one matrix")
        for F in matrices:
            check_n_by_n(F, self.n, "factors")
        self.factor_matrices = matrices
        self.R = len(matrices)
        self.structural_values["R"] = self.R
        self.structural_values["factors"] = None if self.structural_values["factors"] is None else "given"

    def init(self, ctx: Context) -> DeFactoState:
        self.factors: list[MixingHandle] = [ctx.operator(F, name=f"F_{r}")
                                            for r, F in enumerate(self.factor_matrices)]
        return DeFactoState(x=ctx.start_state(), replica=ctx.zeros(), g=ctx.zeros())

    def step(self, state: State, ctx: Context) -> DeFactoState:
        s = state_as(state, DeFactoState)
        R = self.R
        r = ctx.t % (2 * R)
        if r < R:
            s.g += ctx.sample(s.x) * (1.0 / R)
            return s
        if r == R:
            s.replica[...] = s.x
            if self.intended:
                s.replica -= ctx.step_size * s.g
        s.replica = ctx.gossip(s.replica) if self.scheduled else _one(ctx.mix(self.factors[r - R], s.replica))
        if r == 2 * R - 1:
            s.x[...] = s.replica
            if not self.intended:
                s.x -= ctx.step_size * s.g
            s.g[...] = 0.0
        return s

    def worker_arrays(self, state: State) -> list[np.ndarray]:
        s = state_as(state, DeFactoState)
        return [s.x, s.replica, s.g]


@dataclass(eq=False)
class DeTAGState(State):
    """x, the stacked (x~, y) of one round ``z`` (n, 2k, d) with the previous one and a scratch array, the
    phase's gradient sum g and the last phase's g_prev (or, with beta, the momentum v), and the per-round
    gossip coefficients and beta are per-batch constants, kept on the rule (`DeTAG.init`)."""

    z: np.ndarray
    z_prev: np.ndarray
    buf: np.ndarray
    g: np.ndarray
    g_prev: np.ndarray

    @property
    def replica(self) -> np.ndarray:
        """x~ (n, k, d), a view into the stacked (x~, y)."""
        return self.z[:, : self.x.shape[1]]

    @property
    def tracker(self) -> np.ndarray:
        """y (n, k, d), a view into the stacked (x~, y)."""
        return self.z[:, self.x.shape[1] :]


class DeTAG(StepRule):
    """DeTAG (Alg. 2 with Alg. 3's accelerated gossip and Alg. 4's momentum ``beta``; Thm 5, Cor. 6;
    docs/theory.md §6 (D1)-(D8), §7 (G1), errata E7, E15, E18).

    Phases of R iterations: each iteration gossips the replica x~ and the tracker y in one round with step
    r of ``instances.multi_step_gossip_coefficients`` and adds G(x_k) / R at the phase-start model; at the
    phase end x <- x~ - alpha y, v_(k+1) = beta v_(k) + g_(k), y <- y + v_(k+1) - v_(k), x~ <- x. Over a
    gossip schedule lam is its effective lam (docs/theory.md §17: no acceleration is guaranteed there).

    Parameters
    ----------
    R : int, optional
        Phase length, >= 1 (structural); default Cor. 6's (D4).
    eta : float, optional
        Two-tap coefficient in [0, 1), only with ``gossip="two_tap"`` (batchable); default (G1)'s.
    gossip : str, default "two_tap"
        One of ``instances.averaging.GOSSIP_METHODS`` (batchable).
    start : str, default "paper"
        z_{-1} = z_0 as Alg. 3 prints it, or "plain" (batchable; errata E18).
    beta : float, default 0.0
        In [0, 1) (batchable).

    Examples
    --------
    >>> from decbounds import algorithms, instances
    >>> f = instances.heterogeneous_quadratic(4, 3, 1.0, seed=0)
    >>> W = instances.gossip_matrix(instances.topology("ring", 4), "metropolis")
    >>> result = algorithms.run("detag", f, W, step_size=0.5, iterations=1000, tol=1e-2)
    >>> result.hyper["R"], round(result.hyper["eta"], 4), result.t_eps
    (5, 0.0294, 350)
    """

    name = "detag"
    catalog_entry = "detag"
    style = PlotStyle(color="tab:red", marker="o", label="DeTAG")
    structural: ClassVar[dict[str, Any]] = {"R": None}
    batchable: ClassVar[dict[str, Any]] = {"eta": None, "gossip": "two_tap", "start": "paper", "beta": 0.0}
    # Cor. 6's default R reads Delta, L and varsigma0 at the start: global constants of the problem
    knows = ("problem_constants",)
    # a worst case is over a class of problems, which has no one Cor. 6 R: its iteration is a phase of 2
    worst_case_defaults: ClassVar[dict[str, Any]] = {"R": 2}

    @classmethod
    def iterations_per_update(cls, structural: Mapping[str, object]) -> int:
        """A phase: R engine iterations.

        Parameters
        ----------
        structural : mapping of str to object
        """
        return require_count("R", structural["R"], 1)

    searched = ("eta", "start", "R")

    @classmethod
    def tuning_grid(cls, *, n: int, lam: float, cap: int,
                    stochastic: bool = False) -> dict[str, list[object]]:
        """R over `rounds_grid` (errata E20), largest first (fewest first on a stochastic oracle, where the
        fewest rounds per step win and the first group is the one run whole), two-tap and Chebyshev gossip
        (two-tap alone on a stochastic oracle, errata E64), the plain start and (G1)'s eta.

        Parameters
        ----------
        n : int
        lam : float
        cap : int
        stochastic : bool, default False
        """
        gossip: list[object] = ["two_tap"] if stochastic else ["two_tap", "chebyshev"]
        rounds: list[object] = [*rounds_grid(lam)] if stochastic else list(reversed(rounds_grid(lam)))
        return {"R": rounds, "gossip": gossip, "start": ["plain"], "eta": [None]}

    @classmethod
    def default_search(cls, problem: LocalFunctions, W: GossipLike,
                       iterations: int) -> dict[str, list[object]]:
        """`algorithms.tune`'s DeTAG search (§9; errata E20): eta in {formula, 0, 0.2, 0.4}, both starts, R in
        {1, 2, 3} with Cor. 6's R and its halves and quarters.

        Parameters
        ----------
        problem : LocalFunctions
        W : instances.GossipLike
        iterations : int
            T of Cor. 6's R.
        """
        from decbounds.instances.gossip import as_gossip

        lam = as_gossip(W, int(problem.n)).lam
        assert lam is not None  # a symmetric W or schedule has one
        R_cor6 = default_phase_length(problem, lam, iterations)
        R_values = sorted({1, 2, 3, R_cor6, max(1, math.ceil(R_cor6 / 2)), max(1, math.ceil(R_cor6 / 4))})
        return {"eta": [None, 0.0, 0.2, 0.4], "start": ["paper", "plain"], "R": list(R_values)}

    def prepare(self, setup: Setup) -> None:
        R = self.structural_values["R"]
        if R is None:
            R = phase_length(setup.n, setup.lam, setup.constants or {}, self.iterations)
        self.R = require_count("R", R, 1)
        self.structural_values["R"] = self.R

    def check_values(self, values: dict[str, object]) -> dict[str, object]:
        values = super().check_values(values)
        assert self.lam is not None
        values["gossip"] = require_choice("gossip", values["gossip"], GOSSIP_METHODS)
        values["start"] = require_choice("start", values["start"], GOSSIP_STARTS)
        if values["gossip"] == "two_tap" and values["eta"] is None:
            values["eta"] = accelerated_gossip_eta(self.lam)
        if values["gossip"] != "two_tap" and values["eta"] is not None:
            raise ValueError(f"eta applies to gossip='two_tap' only; got gossip={values['gossip']!r} with "
                             f"eta={values['eta']!r}")
        if values["eta"] is not None:
            values["eta"] = require_real("eta", values["eta"], allow_zero=True, maximum=1.0,
                                         maximum_inclusive=False)
        self.schedule(values)  # validates method, start and eta (ValueError naming them)
        return values

    def schedule(self, values: Mapping[str, object]) -> np.ndarray:
        """The (R, 2) gossip coefficients (a_r, b_r) of one configuration
        (``instances.multi_step_gossip_coefficients``).

        Parameters
        ----------
        values : mapping of str to object
            Its ``gossip``, ``eta`` and ``start``, checked here.
        """
        assert self.lam is not None
        # the types here, the ranges (and the rest) in multi_step_gossip_coefficients
        method = require_choice("gossip", values["gossip"], GOSSIP_METHODS)
        start = require_choice("start", values["start"], GOSSIP_STARTS)
        eta = values["eta"]
        return multi_step_gossip_coefficients(method, self.lam, self.R, start=start,
                               eta=None if eta is None else require_real("eta", eta, minimum=None))

    def init(self, ctx: Context) -> DeTAGState:
        """The start state (x~ at x0, y at 0); the per-round coefficients of the k configurations go on the
        rule.

        Parameters
        ----------
        ctx : Context
        """
        k = ctx.k
        keys = ("gossip", "eta", "start")
        configurations = [{key: _value(ctx.hyper[key], j) for key in keys} for j in range(k)]
        schedules = np.stack([self.schedule(c) for c in configurations], axis=1)  # (R, k, 2)
        # x~ and y travel stacked as one (n, 2k, d) array: one product per round, both halves share the
        # per-configuration coefficients, repeated along short rows once here rather than by the gossip
        # operator in every round (algorithms.mixing.SHORT_ROW)
        halves = np.tile(schedules, (1, 2, 1))  # (R, 2k, 2)
        width = ctx.d if ctx.d < SHORT_ROW else 1
        coefficients = [(np.repeat(halves[r, :, 0], width).reshape(1, 2 * k, width),
                         np.repeat(halves[r, :, 1], width).reshape(1, 2 * k, width)) for r in range(self.R)]
        plain = [bool(np.all(schedules[r, :, 1] == 0.0) and np.all(schedules[r, :, 0] == 1.0))
                 for r in range(self.R)]
        beta = ctx.hyper["beta"]
        self.coefficients, self.plain = coefficients, plain
        # beta is one value per configuration (batch_hyper); no momentum anywhere: the plain recursion
        self.beta: np.ndarray | None = cast(np.ndarray, beta) if np.any(np.asarray(beta)) else None
        z = np.zeros((self.n, 2 * k, ctx.d))
        z[:, :k] = ctx.x0  # x~ = x0, y = 0
        return DeTAGState(x=ctx.start_state(), z=z, z_prev=np.zeros_like(z), buf=np.zeros_like(z),
                          g=ctx.zeros(), g_prev=ctx.zeros())

    def step(self, state: State, ctx: Context) -> DeTAGState:
        s = state_as(state, DeTAGState)
        R = self.R
        r = ctx.t % R
        if self.plain[r]:
            ctx.gossip(s.z, out=(s.buf,), vectors=2)
        else:
            a, b = self.coefficients[r]
            previous = s.z if r == 0 else s.z_prev  # z_{-1} := z_0 at the phase start
            ctx.gossip_two_tap(s.z, s.buf, a, previous, b, vectors=2)  # buf = a W z + b previous
        s.z_prev, s.z, s.buf = s.z, s.buf, s.z_prev  # prev <- current, current <- new
        if R == 1:
            s.g = ctx.sample(s.x)  # a fresh array: no copy
        else:
            s.g += ctx.sample(s.x)  # the sum; divided by R once per phase
        if r == R - 1:
            if R > 1:
                s.g *= 1.0 / R
            replica, tracker = s.replica, s.tracker
            np.multiply(tracker, ctx.step_size, out=s.x)
            np.subtract(replica, s.x, out=s.x)  # x <- x~ - alpha y (the post-gossip tracker)
            replica[...] = s.x  # the next phase gossips the new model
            if self.beta is None:
                tracker += s.g
                tracker -= s.g_prev
                s.g_prev, s.g = s.g, s.g_prev
                if R == 1:
                    return s  # g is replaced by the next query; no need to clear it
            else:
                # Alg. 4: v_(k+1) = beta v_(k) + g_(k); the correction is v_(k+1) - v_(k); g_prev holds v
                new_v = self.beta * s.g_prev + s.g
                tracker += new_v
                tracker -= s.g_prev
                s.g_prev[...] = new_v
            s.g[...] = 0.0
        return s

    def worker_arrays(self, state: State) -> list[np.ndarray]:
        s = state_as(state, DeTAGState)
        k = s.x.shape[1]
        return [s.x, s.replica, s.tracker, s.z_prev[:, :k], s.z_prev[:, k:], s.g, s.g_prev]


def _value(values: Any, j: int) -> Any:
    """Configuration j's value of a hyper-parameter as the engine hands it over (a (1, k, d) array or a
    list of k values)."""
    if isinstance(values, np.ndarray):
        return float(values[0, j, 0])
    return values[j]


def rounds_grid(lam: float, low: float = 48.0, high: float = 12.0) -> list[int]:
    """Rounds per step to tune over: the powers of two between 1/``low`` and 1/``high`` of 1/sqrt(1 - lam)
    (at least 1 and 2), ascending (errata E20).

    Parameters
    ----------
    lam : float
    low, high : float
    """
    mixing = 1.0 / math.sqrt(1.0 - lam)
    bottom, top = max(1.0, mixing / low), max(2.0, mixing / high)
    return [2**k for k in range(0, 31) if bottom <= 2**k <= top]


def default_phase_length(problem: LocalFunctions, lam: float | None, iterations: int) -> int:
    """Cor. 6's phase length (D4): R = ceil(max{(1/2) log n, (1/2) log(varsigma0^2 T / (Delta L))} /
    sqrt(1 - lam)), T = ``iterations``, varsigma0 at the start (the log n branch alone when the problem does
    not state Delta and smoothness; ValueError for lam None).

    Parameters
    ----------
    problem : LocalFunctions
    lam : float or None
    iterations : int
    """
    return phase_length(int(problem.n), lam, problem_constants(problem), iterations)


def phase_length(n: int, lam: float | None, constants: Mapping[str, float], iterations: int) -> int:
    """`default_phase_length` from a `Setup`'s n, lam and ``problem_constants`` (empty: the log n branch).

    Parameters
    ----------
    n : int
    lam : float or None
    constants : mapping of str to float
    iterations : int
    """
    if lam is None:
        raise ValueError("R needs lam: DeTAG gossips with a symmetric W")
    if not constants:
        varsigma0, Delta, L = 0.0, 1.0, 1.0
    else:
        varsigma0, Delta, L = constants["varsigma0"], constants["Delta"], constants["L"]
    return detag_phase_length(int(n), lam, varsigma0, max(int(iterations), 1), float(Delta), float(L))


#: The rules defined here, in the order `algorithms.registry` registers them (first, on the registry's first
#: use: whichever module is imported first, the order of ``algorithm_names()`` is the same).
RULES: tuple[type[StepRule], ...] = (CentralizedSGD, LocalSGD, DPSGD, D2, DSGT, GTDSGD, SGP, DeFacto, DeTAG)
