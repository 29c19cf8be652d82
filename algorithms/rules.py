"""Step rules: centralized SGD, local SGD, D-PSGD, D2, DSGT, GT-DSGD, SGP, DeFacto, DeTAG (THEORY.md §5-§8).

Notation per configuration: X is the (n, d) stack of local models (rows = workers), G(X) the B-sample
stochastic gradients at the rows of X, W the gossip matrix applied as X <- W X on the worker axis, alpha the
step size. Every rule keeps the A_B budget of THEORY.md §1: at most B queries per worker and one communication
round per iteration. A rule's first entry of ``worker_arrays`` is the local models; the others are every other
per-worker array that carries information (replicas, trackers, buffers), used by the zero-respecting audit.

Heavy-ball ``momentum`` (the paper ran every method with 0.9, §9) replaces a rule's update direction u by the
buffer v <- momentum v + u, kept per worker and never communicated.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, ClassVar

import networkx as nx
import numpy as np
import scipy.sparse as sp

from algorithms.engine import Context, MixingOperator


def instances_api(name: str) -> Any:
    """A function of the instances package by its public name (late import: instances imports nothing of
    algorithms, and algorithms needs instances only when a rule is prepared)."""
    import instances

    return getattr(instances, name)


# ------------------------------------------------------------------------------------------------------
# matrices


def _csr(M: Any, name: str) -> sp.csr_array:
    if sp.issparse(M):
        out = sp.csr_array(M, dtype=float)
    else:
        arr = np.asarray(M, dtype=float)
        if arr.ndim != 2:
            raise ValueError(f"{name} must be a 2-D matrix; got shape {arr.shape}")
        out = sp.csr_array(arr)
    return out


def _check_size(M: sp.csr_array, n: int, name: str) -> None:
    if M.shape != (n, n):
        raise ValueError(f"{name} shape mismatch: the problem has n={n} workers but {name} is "
                         f"{M.shape[0]} x {M.shape[1]}")


def symmetric_gossip(W: Any, n: int) -> tuple[sp.csr_array, float]:
    """W checked as a gossip matrix (``instances.check_gossip``: symmetric, doubly stochastic,
    connected) of size n; returns (W as CSR, lam)."""
    if W is None:
        raise ValueError("W is required: this algorithm gossips with a symmetric doubly stochastic W")
    M = _csr(W, "W")
    _check_size(M, n, "W")
    lam = float(instances_api("check_gossip")(M, nonnegative=False))
    return M, lam


def column_stochastic(W: Any, n: int, atol: float = 1e-9) -> sp.csr_array:
    """The push-sum matrix P (rows receive, columns sum to 1, non-negative) of SGP; a networkx DiGraph is
    turned into one by ``instances.column_stochastic_matrix``."""
    if W is None:
        raise ValueError("W is required: SGP pushes with a column-stochastic matrix (or pass a DiGraph)")
    if isinstance(W, nx.Graph):
        W = instances_api("column_stochastic_matrix")(W if W.is_directed() else W.to_directed())
    P = _csr(W, "W")
    _check_size(P, n, "W")
    if P.nnz and P.data.min() < -atol:
        raise ValueError(f"W is not non-negative (push-sum weights): min entry {P.data.min():.3g}")
    deviation = float(np.max(np.abs(P.sum(axis=0) - 1.0)))
    if deviation > atol:
        raise ValueError(f"W is not column-stochastic: max |1^T W - 1^T| = {deviation:.3g} > {atol:g}")
    return P


def support_graph(W: Any, n: int) -> nx.Graph:
    """The undirected graph of W's off-diagonal support (or W itself when it is a networkx graph)."""
    if isinstance(W, nx.Graph):
        if W.number_of_nodes() != n:
            raise ValueError(f"W shape mismatch: the problem has n={n} workers but the graph has "
                             f"{W.number_of_nodes()} nodes")
        return nx.Graph(W)
    M = _csr(W, "W")
    _check_size(M, n, "W")
    coo = M.tocoo()
    G = nx.Graph()
    G.add_nodes_from(range(n))
    off = (coo.row != coo.col) & (coo.data != 0)
    G.add_edges_from(zip(coo.row[off].tolist(), coo.col[off].tolist(), strict=True))
    if not nx.is_connected(G):
        raise ValueError("W is not connected: its support graph has several components")
    return G


# ------------------------------------------------------------------------------------------------------
# the rule base


class StepRule:
    """Shared plumbing. Subclasses set ``name``, ``structural`` (hyper-parameters that change the shape of
    an iteration: one batch per value) and ``batchable`` (per-configuration values, (1, k, d) arrays)."""

    name: ClassVar[str] = ""
    structural: ClassVar[dict[str, Any]] = {}
    batchable: ClassVar[dict[str, Any]] = {"momentum": 0.0}
    communication: ClassVar[str] = "gossip"  # "gossip" (symmetric W), "push" (column-stochastic), "exact"
    gossips: ClassVar[bool] = True  # information moves on the graph only (zero-respecting audit applies)

    def __init__(self, problem: Any, W: Any, structural: dict[str, Any], *, iterations: int,
                 backend: str) -> None:
        self.n = int(problem.n)
        self.lam: float | None = None
        self.matrix: sp.csr_array | None = None
        if self.communication == "gossip":
            self.matrix, self.lam = symmetric_gossip(W, self.n)
        elif self.communication == "push":
            self.matrix = column_stochastic(W, self.n)
        self.structural_values = dict(structural)
        self.iterations = iterations
        self.backend = backend
        self.prepare(problem, W)

    def prepare(self, problem: Any, W: Any) -> None:
        """Validate and precompute what depends on the structural hyper-parameters."""

    def resolve(self, hyper: dict[str, Any]) -> dict[str, Any]:
        """Per-configuration values with defaults filled in (recorded in Result.hyper)."""
        for name in ("momentum", "beta"):
            if name in hyper:
                value = float(hyper[name])
                if not 0.0 <= value < 1.0:
                    raise ValueError(f"{name} must lie in [0, 1); got {name}={hyper[name]!r}")
                hyper[name] = value
        return hyper

    def bind(self, ctx: Context, hypers: list[dict[str, Any]]) -> None:
        """The batchable numeric values as (1, k, d) arrays in ``ctx.hyper`` (`Context.per_configuration`)."""
        for name in self.batchable:
            values = [h[name] for h in hypers]
            if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
                ctx.hyper[name] = ctx.per_configuration(values)
            else:
                ctx.hyper[name] = values
        ctx.hyper.update(self.structural_values)

    # -- helpers for subclasses -------------------------------------------------------------------------
    @staticmethod
    def momentum_buffer(ctx: Context) -> np.ndarray | None:
        mu = ctx.hyper.get("momentum")
        if mu is None or not np.any(mu):
            return None
        return ctx.zeros()

    @staticmethod
    def heavy_ball(v: np.ndarray | None, direction: np.ndarray, ctx: Context) -> np.ndarray:
        if v is None:
            return direction
        v *= ctx.hyper["momentum"]
        v += direction
        return v

    def average(self, state: Any) -> np.ndarray:
        return np.add.reduce(state.x, axis=0) * (1.0 / self.n)

    def worker_arrays(self, state: Any) -> list[np.ndarray]:
        return [state.x]


# ------------------------------------------------------------------------------------------------------
# exact-averaging baselines


class CentralizedSGD(StepRule):
    """Mini-batch SGD with an exact average of the gradients every iteration (parameter server /
    AllReduce): x <- x - alpha mean_i G_i(x); n B samples per step (THEORY.md §3, the centralized anchor)."""

    name = "centralized"
    communication = "exact"
    gossips = False

    def init(self, ctx: Context) -> Any:
        return SimpleNamespace(x=ctx.start_state(), v=self.momentum_buffer(ctx))

    def step(self, s: Any, ctx: Context) -> Any:
        mean_grad = ctx.exact_average(ctx.sample(s.x))
        s.x -= ctx.step_size * self.heavy_ball(s.v, np.broadcast_to(mean_grad, s.x.shape), ctx)
        return s


class LocalSGD(StepRule):
    """Local SGD / FedAvg: x_i <- x_i - alpha G_i(x_i) on every worker, and every H-th iteration the
    models are replaced by their exact average (one AllReduce round in that iteration)."""

    name = "local_sgd"
    structural: ClassVar[dict[str, Any]] = {"H": 4}
    communication = "exact"
    gossips = False

    def prepare(self, problem: Any, W: Any) -> None:
        H = self.structural_values["H"]
        if int(H) != H or H < 1:
            raise ValueError(f"H (local steps between averages) must be a positive integer; got H={H!r}")
        self.H = int(H)
        self.structural_values["H"] = self.H

    def init(self, ctx: Context) -> Any:
        return SimpleNamespace(x=ctx.start_state(), v=self.momentum_buffer(ctx))

    def step(self, s: Any, ctx: Context) -> Any:
        s.x -= ctx.step_size * self.heavy_ball(s.v, ctx.sample(s.x), ctx)
        if (ctx.t + 1) % self.H == 0:
            s.x[...] = ctx.exact_average(s.x)
        return s


# ------------------------------------------------------------------------------------------------------
# gossip baselines


class DPSGD(StepRule):
    """D-PSGD (Lian et al. 2017), THEORY.md §11 item 16.

    ``form="cta"`` (Lian's, combine-then-adapt): X <- W X - alpha G(X), the gradient at the local pre-gossip
    model, computed while communicating. ``form="atc"`` (adapt-then-combine): X <- W (X - alpha G(X)); with
    W = 11^T/n it is centralized SGD.
    """

    name = "dpsgd"
    structural: ClassVar[dict[str, Any]] = {"form": "cta"}

    def prepare(self, problem: Any, W: Any) -> None:
        if self.structural_values["form"] not in ("cta", "atc"):
            raise ValueError(f"form must be 'cta' or 'atc'; got form={self.structural_values['form']!r}")
        self.atc = self.structural_values["form"] == "atc"

    def init(self, ctx: Context) -> Any:
        return SimpleNamespace(x=ctx.start_state(), buf=ctx.zeros(), v=self.momentum_buffer(ctx),
                               step=ctx.zeros(), minus_alpha=-ctx.step_size)

    def step(self, s: Any, ctx: Context) -> Any:
        direction = self.heavy_ball(s.v, ctx.sample(s.x), ctx)
        if self.atc:
            s.x -= ctx.step_size * direction
            ctx.gossip(s.x, out=(s.buf,))
        else:
            # W X + (-alpha G) in the product's pass: the bits of W X - alpha G, one pass fewer
            np.multiply(direction, s.minus_alpha, out=s.step)
            ctx.gossip(s.x, out=(s.buf,), add=(s.step,))
        s.x, s.buf = s.buf, s.x
        return s


class D2(StepRule):
    """D^2 (Tang et al. 2018b): X_{t+1} = W (2 X_t - X_{t-1} - alpha G(X_t) + alpha G(X_{t-1})), with
    X_{-1} = X_0 and G(X_{-1}) = 0 (so the first step is W (X_0 - alpha G(X_0))). Needs
    lambda_min(W) >= -1/3 (THEORY.md §8 notes)."""

    name = "d2"

    def prepare(self, problem: Any, W: Any) -> None:
        M = self.matrix
        assert M is not None
        if self.n <= 2000:
            lowest = float(np.linalg.eigvalsh(M.toarray())[0])
        else:
            import scipy.sparse.linalg as spla

            lowest = float(spla.eigsh(M, k=1, which="SA", return_eigenvectors=False)[0])
        if lowest < -1.0 / 3.0 - 1e-12:
            raise ValueError(f"W has lambda_min = {lowest:.6g} < -1/3, which D2 requires (Tang et al. "
                             "2018b); use a lazier W (instances.lazy)")

    def init(self, ctx: Context) -> Any:
        x = ctx.start_state()
        return SimpleNamespace(x=x, x_prev=x.copy(), u_prev=ctx.zeros(), half=ctx.zeros(),
                               v=self.momentum_buffer(ctx))

    def step(self, s: Any, ctx: Context) -> Any:
        u = self.heavy_ball(s.v, ctx.sample(s.x), ctx)
        a = ctx.step_size
        np.multiply(s.x, 2.0, out=s.half)
        s.half -= s.x_prev
        s.half -= a * (u - s.u_prev)
        s.u_prev[...] = u
        s.x_prev, s.x = s.x, s.x_prev  # x_prev <- x; the old x_prev buffer receives the new x
        ctx.gossip(s.half, out=(s.x,))
        return s

    def worker_arrays(self, s: Any) -> list[np.ndarray]:
        return [s.x, s.x_prev, s.u_prev]


class DSGT(StepRule):
    """DSGT (Zhang & You 2019c), combine-then-adapt gradient tracking (THEORY.md §11 item 16):
    x_{t+1} = W x_t - alpha y_t,  y_{t+1} = W y_t + G(x_{t+1}) - G(x_t),  y_0 = G(x_0).
    One iteration queries at x_t, then gossips x_t and y_{t-1} in one round (two vectors). They stay two
    contiguous arrays: stacked as one (n, 2k, d) array the round is one product, but every update then runs
    on strided views, which cost numpy more than the product saves (a 96-configuration batch of the 12-node
    path: 96 against 71 us per iteration)."""

    name = "dsgt"

    def init(self, ctx: Context) -> Any:
        return SimpleNamespace(x=ctx.start_state(), y=ctx.zeros(), g_prev=ctx.zeros(), bx=ctx.zeros(),
                               by=ctx.zeros(), v=self.momentum_buffer(ctx))

    def step(self, s: Any, ctx: Context) -> Any:
        g = ctx.sample(s.x)
        ctx.gossip(s.x, s.y, out=(s.bx, s.by), add=(None, g))  # by = W y_{t-1} + G(x_t)
        s.by -= s.g_prev  # y_t = W y_{t-1} + G(x_t) - G(x_{t-1})
        s.g_prev[...] = g
        s.bx -= ctx.step_size * self.heavy_ball(s.v, s.by, ctx)
        s.x, s.bx = s.bx, s.x
        s.y, s.by = s.by, s.y
        return s

    def worker_arrays(self, s: Any) -> list[np.ndarray]:
        return [s.x, s.y, s.g_prev]


class GTDSGD(StepRule):
    """GT-DSGD (Xin, Khan & Kar 2021), adapt-then-combine gradient tracking (THEORY.md §11 item 16):
    x_{k+1} = W (x_k - alpha y_k),  y_{k+1} = W (y_k + G(x_{k+1}) - G(x_k)),  y_0 = G(x_0).
    The y-round needs G(x_{k+1}), which needs the x-round: two communication rounds per update, so one
    update takes two engine iterations (iteration 2k gossips x, iteration 2k+1 queries at x_{k+1} and
    gossips y); iteration 0 also queries G(x_0)."""

    name = "gt_dsgd"

    def init(self, ctx: Context) -> Any:
        return SimpleNamespace(x=ctx.start_state(), y=ctx.zeros(), g_prev=ctx.zeros(), buf=ctx.zeros(),
                               v=self.momentum_buffer(ctx))

    def step(self, s: Any, ctx: Context) -> Any:
        if ctx.t % 2 == 0:
            if ctx.t == 0:
                g = ctx.sample(s.x)
                s.y[...] = g
                s.g_prev[...] = g
            s.x -= ctx.step_size * self.heavy_ball(s.v, s.y, ctx)
            ctx.gossip(s.x, out=(s.buf,))
            s.x, s.buf = s.buf, s.x
        else:
            g = ctx.sample(s.x)
            s.y += g
            s.y -= s.g_prev
            s.g_prev[...] = g
            ctx.gossip(s.y, out=(s.buf,))
            s.y, s.buf = s.buf, s.y
        return s

    def worker_arrays(self, s: Any) -> list[np.ndarray]:
        return [s.x, s.y, s.g_prev]


class SGP(StepRule):
    """Stochastic gradient push (Assran et al. 2019): push-sum on a column-stochastic P (rows receive),
    z <- P (z - alpha G(x)),  w <- P w,  x = z / w, with z_0 = x_0 and w_0 = 1. A round carries z and the
    scalar weight w (counted as two arrays). With a symmetric doubly stochastic P, w stays 1 and SGP is
    adapt-then-combine D-PSGD (THEORY.md §11 item 16)."""

    name = "sgp"
    communication = "push"

    def prepare(self, problem: Any, W: Any) -> None:
        assert self.matrix is not None

    def init(self, ctx: Context) -> Any:
        x = ctx.start_state()
        return SimpleNamespace(x=x, z=x.copy(), w=np.ones((self.n, 1, 1)), v=self.momentum_buffer(ctx),
                               push=MixingOperator(self.matrix, backend=ctx.backend, name="W"))

    def step(self, s: Any, ctx: Context) -> Any:
        s.z -= ctx.step_size * self.heavy_ball(s.v, ctx.sample(s.x), ctx)
        s.z, s.w = ctx.mix(s.push, s.z, s.w)
        np.divide(s.z, s.w, out=s.x)
        return s

    def worker_arrays(self, s: Any) -> list[np.ndarray]:
        return [s.x, s.z]


# ------------------------------------------------------------------------------------------------------
# the paper's algorithms


class DeFacto(StepRule):
    """DeFacto (Alg. 1, THEORY.md §5) with the exact-averaging factors F_0..F_{R-1} of
    ``instances.exact_averaging_factors`` (F_{R-1} ... F_0 = 11^T/n, each supported on the graph).

    Rounds of 2R iterations: R compute iterations accumulate g <- g + G(x_k) at the round-start model, then R
    communicate iterations apply the factors F_{r-R} (the erratum of §11 item 4: index r - R, not r).
    ``form="intended"`` (default) averages x_k - alpha g / R through the factors, so
    x_{k+1} = mean_i(x_{k,i} - alpha g_i / R): centralized SGD with batch B R per worker. ``form="literal"``
    is Alg. 1 as printed: the factors average the pre-step copy and each worker then subtracts its own
    alpha g_i / R, so the models stay apart (the discrepancy flagged in §5).
    ``W`` may be a gossip matrix or a networkx graph (its support is the graph); ``factors=`` overrides.
    """

    name = "defacto"
    structural: ClassVar[dict[str, Any]] = {"form": "intended", "factors": None}
    batchable: ClassVar[dict[str, Any]] = {}
    communication = "graph"

    def prepare(self, problem: Any, W: Any) -> None:
        form = self.structural_values["form"]
        if form not in ("intended", "literal"):
            raise ValueError(f"form must be 'intended' or 'literal'; got form={form!r}")
        self.intended = form == "intended"
        factors = self.structural_values["factors"]
        if factors is None:
            factors = instances_api("exact_averaging_factors")(support_graph(W, self.n))
        factors = [_csr(F, "factors") for F in factors]
        if not factors:
            raise ValueError("factors must hold at least one matrix")
        for F in factors:
            _check_size(F, self.n, "factors")
        self.factor_matrices = factors
        self.R = len(factors)
        self.structural_values["R"] = self.R
        self.structural_values["factors"] = None if self.structural_values["factors"] is None else "given"

    def init(self, ctx: Context) -> Any:
        ops = [MixingOperator(F, backend=ctx.backend, name=f"F_{r}")
               for r, F in enumerate(self.factor_matrices)]
        return SimpleNamespace(x=ctx.start_state(), replica=ctx.zeros(), g=ctx.zeros(), ops=ops)

    def step(self, s: Any, ctx: Context) -> Any:
        R = self.R
        r = ctx.t % (2 * R)
        if r < R:
            s.g += ctx.sample(s.x)
            return s
        if r == R:
            s.replica[...] = s.x
            if self.intended:
                s.replica -= ctx.step_size * s.g * (1.0 / R)
        s.replica = ctx.mix(s.ops[r - R], s.replica)
        if r == 2 * R - 1:
            s.x[...] = s.replica
            if not self.intended:
                s.x -= ctx.step_size * s.g * (1.0 / R)
            s.g[...] = 0.0
        return s

    def worker_arrays(self, s: Any) -> list[np.ndarray]:
        return [s.x, s.replica, s.g]


class DeTAG(StepRule):
    """DeTAG (Alg. 2 with the accelerated gossip of Alg. 3; THEORY.md §6-§7), with Alg. 4's momentum ``beta``.

    Phases of R iterations (k = t // R, r = t mod R). Every iteration gossips the replica x~ and the tracker
    y in one round with step r of ``instances.gossip_schedule`` (z_{r+1} = a_r W z_r + b_r z_{r-1},
    z_{-1} := z_0 at each phase start), and queries B samples at the phase-start model x_k,
    g_(k) <- g_(k) + G(x_k) / R. At the phase end, with the post-gossip tracker (§11 item 7):
        x <- x~ - alpha y;  v_(k+1) = beta v_(k) + g_(k);  y <- y + v_(k+1) - v_(k);  x~ <- x
    (beta = 0: y <- y + g_(k) - g_(k-1)). With R = 1 and eta = 0 this is adapt-then-combine gradient tracking
    with the one-phase-stale gradient (§11 item 15): Y_{t+1} = W (Y_t + G(X_{t-1}) - G(X_{t-2})),
    X_{t+1} = W X_t - alpha Y_{t+1}.

    Defaults: ``gossip="two_tap"``, ``start="paper"``,
    eta = ``bounds.detag_params.accelerated_gossip_eta(lam)`` (§7.1), R from Cor. 6
    (``default_phase_length``). eta, start, gossip and beta may vary across a batch.
    """

    name = "detag"
    structural: ClassVar[dict[str, Any]] = {"R": None}
    batchable: ClassVar[dict[str, Any]] = {"eta": None, "gossip": "two_tap", "start": "paper", "beta": 0.0}

    def prepare(self, problem: Any, W: Any) -> None:
        R = self.structural_values["R"]
        if R is None:
            R = default_phase_length(problem, self.lam, self.iterations)
        if int(R) != R or R < 1:
            raise ValueError(f"R (phase length) must be a positive integer; got R={R!r}")
        self.R = int(R)
        self.structural_values["R"] = self.R

    def resolve(self, hyper: dict[str, Any]) -> dict[str, Any]:
        hyper = super().resolve(hyper)
        if hyper["gossip"] == "two_tap" and hyper["eta"] is None:
            from bounds.detag_params import accelerated_gossip_eta

            hyper["eta"] = accelerated_gossip_eta(self.lam)
        if hyper["gossip"] != "two_tap" and hyper["eta"] is not None:
            raise ValueError(f"eta applies to gossip='two_tap' only; got gossip={hyper['gossip']!r} with "
                             f"eta={hyper['eta']!r}")
        if hyper["eta"] is not None:
            hyper["eta"] = float(hyper["eta"])
        # validates method, start and eta (ValueError naming them)
        hyper["schedule"] = instances_api("gossip_schedule")(hyper["gossip"], self.lam, self.R,
                                                             eta=hyper["eta"], start=hyper["start"])
        return hyper

    def bind(self, ctx: Context, hypers: list[dict[str, Any]]) -> None:
        schedules = np.stack([h.pop("schedule") for h in hypers], axis=1)  # (R, k, 2)
        # x~ and y travel stacked as one (n, 2k, d) array: one product per round, both halves share the
        # per-configuration coefficients
        self.coefficients = [(np.tile(schedules[r, :, 0], 2).reshape(1, 2 * ctx.k, 1),
                              np.tile(schedules[r, :, 1], 2).reshape(1, 2 * ctx.k, 1)) for r in range(self.R)]
        self.plain = [bool(np.all(schedules[r, :, 1] == 0.0) and np.all(schedules[r, :, 0] == 1.0))
                      for r in range(self.R)]
        betas = np.asarray([h["beta"] for h in hypers], dtype=float)
        self.beta = ctx.per_configuration(betas) if np.any(betas) else None
        ctx.hyper.update(self.structural_values)
        ctx.hyper["beta"] = self.beta

    def init(self, ctx: Context) -> Any:
        k = ctx.k
        z = np.zeros((self.n, 2 * k, ctx.d))
        z[:, :k] = ctx.x0  # x~ = x0, y = 0
        return SimpleNamespace(x=ctx.start_state(), z=z, z_prev=np.zeros_like(z), buf=np.zeros_like(z),
                               g=ctx.zeros(), g_prev=ctx.zeros(), k=k)

    @staticmethod
    def replica(s: Any) -> np.ndarray:
        """x~ (n, k, d), a view into the stacked (x~, y)."""
        return s.z[:, : s.k]

    @staticmethod
    def tracker(s: Any) -> np.ndarray:
        """y (n, k, d), a view into the stacked (x~, y)."""
        return s.z[:, s.k :]

    def step(self, s: Any, ctx: Context) -> Any:
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
            k = s.k
            if R > 1:
                s.g *= 1.0 / R
            replica, tracker = s.z[:, :k], s.z[:, k:]
            np.multiply(tracker, ctx.step_size, out=s.x)
            np.subtract(replica, s.x, out=s.x)  # x <- x~ - alpha y (post-gossip tracker, §11 item 7)
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

    def worker_arrays(self, s: Any) -> list[np.ndarray]:
        k = s.k
        return [s.x, s.z[:, :k], s.z[:, k:], s.z_prev[:, :k], s.z_prev[:, k:], s.g, s.g_prev]


def default_phase_length(problem: Any, lam: float | None, iterations: int) -> int:
    """Cor. 6's phase length, ``bounds.detag_params.detag_phase_length``:
    R = ceil(max{(1/2) log n, (1/2) log(varsigma0^2 T / (Delta L))} / sqrt(1 - lam)), T = ``iterations``.

    varsigma0 is measured at the start point (assumption (6)); Delta and L are the problem's ``Delta`` and
    ``smoothness``. A problem that does not state both keeps only the log n branch (varsigma0 taken as 0).
    """
    from bounds.detag_params import detag_phase_length

    if lam is None:
        raise ValueError("R needs lam: DeTAG gossips with a symmetric W")
    n = int(problem.n)
    x0 = np.asarray(problem.x0, dtype=float)
    local = np.asarray(problem.grad(np.broadcast_to(x0, (n, x0.size)).copy()))
    varsigma0 = float(np.sqrt(np.mean(np.sum((local - local.mean(axis=0)) ** 2, axis=-1))))
    Delta = getattr(problem, "Delta", None)
    L = getattr(problem, "smoothness", None)
    if Delta is None or L is None:
        varsigma0, Delta, L = 0.0, 1.0, 1.0
    return detag_phase_length(n, lam, varsigma0, max(int(iterations), 1), float(Delta), float(L))


RULES: dict[str, type[StepRule]] = {
    rule.name: rule
    for rule in (CentralizedSGD, LocalSGD, DPSGD, D2, DSGT, GTDSGD, SGP, DeFacto, DeTAG)
}

ALIASES: dict[str, str] = {"sgd": "centralized", "fedavg": "local_sgd", "d-psgd": "dpsgd",
                           "gt-dsgd": "gt_dsgd", "dsgd": "dpsgd"}
