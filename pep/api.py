"""Computed worst cases: decentralized performance estimation (PEP) as a semidefinite program on cvxpy.

``worst_case(method, K, L, step_size, W=... | spectrum=(lam_min, lam_max), function_class=...,
criterion=...)`` is the largest value of a criterion after K iterations of an engine step rule over a
class of functions and gossip matrices (Drori & Teboulle 2014; Taylor, Hendrickx & Glineur 2017, Thm. 4;
decentralized: Colla & Hendrickx, IEEE TAC 2023). The SDP is over the Gram matrix of the iterates,
gradients and gossip outputs; the answer is checked with numpy (G PSD, every constraint, the duality gap)
and a solver failure raises. Classes, criteria, the spectral relaxation and the symmetry blocks:
docs/worst_case.md. The argument checks live in `pep.problem`, the SDP in `pep.sdp`.

>>> import numpy as np
>>> result = worst_case("dgd_atc", K=5, L=1.0, step_size=1.0, W=np.full((2, 2), 0.5))
>>> round(result.value, 5)      # gradient descent: 4L/(3K) at step 1/L (PEPit's example)
0.26667
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from decbounds.bounds.prediction import Prediction, predict_at
from decbounds.bounds.vocabulary import CRITERIA, FUNCTION_CLASSES, HETEROGENEITY, INITIAL_CONDITIONS, STARTS
from decbounds.pep.methods import MethodSpec
from decbounds.pep.problem import (
    CLARABEL_DEFAULTS,
    MAX_AGENT_ITERATIONS,
    MAX_CIRCULANT_AGENT_ITERATIONS,
    MAX_DETAG_ROUNDS,
    MAX_ROUNDS_PER_ITERATION,
    MAX_STEP_TIMES_L,
    MIN_STEP_TIMES_L,
    SCS_DEFAULTS,
    SOLVERS,
    _is_circulant,
    _round_matrices,
    _Setup,
    _validate,
    check_iterations,
    check_sdp_size,
)
from decbounds.pep.units import MAX_NORMALIZED_VARSIGMA, _Units

from decbounds.lazy_exports import deprecated_attributes

if TYPE_CHECKING:
    from decbounds.instances.gossip import GossipLike
    from decbounds.instances.matrices import MatrixLike

__all__ = [
    "CHECK_TOLERANCE",
    "CLARABEL_DEFAULTS",
    "CRITERIA",
    "FUNCTION_CLASSES",
    "GAP_TOLERANCE",
    "HETEROGENEITY",
    "INITIAL_CONDITIONS",
    "MAX_AGENT_ITERATIONS",
    "MAX_CIRCULANT_AGENT_ITERATIONS",
    "MAX_DETAG_ROUNDS",
    "MAX_NORMALIZED_VARSIGMA",
    "MAX_ROUNDS_PER_ITERATION",
    "MAX_SDP_BYTES",
    "MAX_STEP_TIMES_L",
    "MIN_STEP_TIMES_L",
    "SCS_DEFAULTS",
    "SOLVERS",
    "STARTS",
    "WorstCase",
    "check_iterations",
    "check_sdp_size",
    "worst_case",
    "worst_gossip_matrix",
]

#: Tolerances of the post-solve checks, relative to the scale of the solution (the largest of 1, max |G|,
#: max |f| and, spectral class, the largest entry of the LMI's A and C): the most negative eigenvalue of G,
#: the largest violation of any scalar or matrix constraint.
CHECK_TOLERANCE = {"CLARABEL": 1e-5, "SCS": 1e-4}
#: Largest accepted |primal - dual objective|, relative to max(1, value).
GAP_TOLERANCE = {"CLARABEL": 1e-5, "SCS": 1e-3}


@dataclasses.dataclass(repr=False)
class WorstCase:
    """One computed worst case (like scipy's OptimizeResult: one type, a short repr); docs/worst_case.md.

    Attributes
    ----------
    method, K, L, mu, Delta, radius, varsigma
        The problem (``method`` canonical; ``mu`` 0 outside the strongly convex class).
    step_size : float or None
        The constant step, or None when the steps vary (``steps``: the K steps).
    function_class, criterion, initial, heterogeneity, starts : str
        As `worst_case` took them.
    gossip : {"exact", "spectral"}
        A given W (or W_t), or the class [lam_min, lam_max] (``spectra``: per round when ``time_varying``).
    spectrum : (float, float)
        The range (an exact W's own eigenvalues off consensus; time-varying: the hull).
    N, params, worker, batch
        Agents, the method's extra parameters, the measured worker ("worker_gradient"), queries per iteration.
    value : float
        The worst case of the criterion (the SDP's primal value).
    solver, status, gap, solver_gap
        cvxpy's solver and status, |primal - dual| and the solver's own objectives.
    violations, min_gram_eigenvalue
        The measured violation of each constraint family (0 = met) and G's smallest eigenvalue.
    build_seconds, solve_seconds, sdp_size
        Build and solve times, and the SDP's sizes (Gram side, rows, LMI side, PSD blocks).
    iterates, average_gradients, optimum
        (K+1, N, d) worst-case iterates, (K+1, d) grad f(x-bar^k) where queried, x* (convex classes) or None.
    points, gradients, values
        Per agent, every point f_i was evaluated at, with its gradient and value (the interpolation data).
    gossip_inputs, gossip_outputs, gossip_rounds
        (m, N, d) every spectral-class gossip round in the solved units, and (m,) each one's round t.
    W, options, spec
        The gossip matrix (exact class) or None, the keywords that reproduce the solve, the method itself.
    """

    method: str
    K: int
    L: float
    mu: float
    step_size: float | None
    steps: tuple[float, ...]
    Delta: float
    radius: float
    varsigma: float
    function_class: str
    criterion: str
    initial: str
    heterogeneity: str
    starts: str
    gossip: str
    time_varying: bool
    spectrum: tuple[float, float]
    spectra: tuple[tuple[float, float], ...] | None
    N: int
    params: dict[str, Any]
    worker: int | None
    value: float
    solver: str
    status: str
    gap: float
    solver_gap: tuple[float, float] | None
    violations: dict[str, float]
    min_gram_eigenvalue: float
    build_seconds: float
    solve_seconds: float
    sdp_size: dict[str, Any]
    iterates: np.ndarray
    average_gradients: np.ndarray
    optimum: np.ndarray | None
    points: list[np.ndarray]
    gradients: list[np.ndarray]
    values: list[np.ndarray]
    gossip_inputs: np.ndarray
    gossip_outputs: np.ndarray
    gossip_rounds: np.ndarray
    W: np.ndarray | None
    options: dict[str, Any]
    spec: MethodSpec
    batch: int = 1

    @property
    def bound(self) -> Prediction:
        """The catalog prediction at this worst case's own parameters (docs/architecture.md, "Paired
        results"): the method's entry at epsilon = sqrt(value), sigma = 0, B = 1, varsigma0 = varsigma and lam
        the largest |eigenvalue| off consensus; another class or criterion gives a Prediction whose note says
        there is none.
        """
        entry = self.spec.catalog
        if self.function_class != "nonconvex" or self.criterion not in ("gradient", "worker_gradient"):
            return Prediction(entry, None, None, note=f"the catalog has no rate for function_class="
                              f"{self.function_class!r} with criterion={self.criterion!r}")
        spectra = self.spectra or (self.spectrum,)
        lam = max(max(abs(lo), abs(hi)) for lo, hi in spectra)
        epsilon = math.sqrt(self.value) if self.value > 0 else None
        return predict_at(entry, {"Delta": self.Delta, "L": self.L, "sigma": 0.0, "varsigma": self.varsigma,
                                  "varsigma0": self.varsigma, "n": int(self.N), "B": 1, "epsilon": epsilon,
                                  "lam": lam if lam < 1 else None, "D": None})

    def __repr__(self) -> str:
        lo, hi = self.spectrum
        return (f"WorstCase(method={self.method!r}, K={self.K}, value={self.value:.6g}, "
                f"class={self.function_class!r}, criterion={self.criterion!r}, "
                f"gossip={self.gossip!r}{' time-varying' if self.time_varying else ''} [{lo:.4g}, {hi:.4g}], "
                f"N={self.N}, solver={self.solver!r}, status={self.status!r}, "
                f"gap={self.gap:.1e}, max_violation={max(self.violations.values(), default=0.0):.1e}, "
                f"solve_seconds={self.solve_seconds:.2f}, gram={self.sdp_size['gram']})")

    def replay(self) -> list[np.ndarray]:
        """The K+1 iterates of the method run again on numpy arrays with the recovered gradients and gossip;
        they equal ``iterates`` when the worst case is consistent with the method's update equations.
        """
        from decbounds.pep.methods import NumpyOps

        spec = self.spec
        # in the normalized problem's units (`_Units`), where the gossip rounds are recorded
        units = _Units.of(self)
        point, gradient = math.exp(units.log_b), math.exp(units.log_a - units.log_b)
        table = [(np.asarray(p) * point, np.asarray(g) * gradient)
                 for p, g in zip(self.points, self.gradients, strict=True)]
        iterates = self.iterates * point
        scale = max(1.0, float(np.max(np.abs(iterates))))

        def grad(X: np.ndarray) -> np.ndarray:
            rows = []
            for i, x in enumerate(X):
                points, grads = table[i]
                dist = np.linalg.norm(points - x, axis=1)
                j = int(np.argmin(dist))
                if dist[j] > 1e-5 * scale:
                    raise RuntimeError(f"replay of {self.method}: agent {i} queries a point at distance "
                                       f"{dist[j]:.2e} from every recovered point")
                rows.append(grads[j])
            return np.array(rows)

        lam = max(map(abs, self.spectrum))
        ops = NumpyOps(np.eye(self.N) if self.W is None else self.W, grad, lam=lam)
        if self.W is None:
            inputs, outputs, rounds = self.gossip_inputs, self.gossip_outputs, self.gossip_rounds
            exact = _round_matrices(self.spectra, self.N) if self.spectra is not None else None

            def gossip(X: np.ndarray, t: int = 0) -> np.ndarray:
                if exact is not None and exact[t] is not None:
                    return exact[t] @ X
                if np.allclose(X, X.mean(axis=0), rtol=0, atol=1e-9 * scale):
                    return X  # consensus is a fixed point of every W with W 1 = 1
                dist = np.array([np.linalg.norm(Xin - X) if r == t or not self.time_varying else np.inf
                                 for Xin, r in zip(inputs, rounds, strict=True)])
                j = int(np.argmin(dist)) if len(dist) else -1
                if j < 0 or dist[j] > 1e-5 * scale:
                    raise RuntimeError(f"replay of {self.method}: a gossip input of round {t} far from "
                                       "every recorded round")
                return outputs[j]

            ops.gossip = gossip  # type: ignore[method-assign]
        replayed = spec.run(ops, np.array(iterates[0]), self.K, np.array(self.steps) * self.L, self.batch,
                            **self.params)
        return [X / point for X in replayed]


def _off_consensus(W: np.ndarray) -> np.ndarray:
    """W's eigenvalues off the consensus direction: those of W - J except the 0 that replaced the 1."""
    N = W.shape[0]
    off = np.linalg.eigvalsh(W - np.full((N, N), 1.0 / N))
    return np.delete(off, int(np.argmin(np.abs(off)))) if N > 1 else np.zeros(0)


def worst_case(method: str | type | MethodSpec, K: int, L: float = 1.0,
               step_size: float | Sequence[float] | Callable[[int], float] | None = None, *,
               W: GossipLike | Sequence[MatrixLike] | None = None,
               spectrum: Sequence[float] | Sequence[Sequence[float]] | None = None,
               N: int | None = None, time_varying: bool = False, function_class: str = "nonconvex",
               mu: float = 0.0, criterion: str = "gradient", initial: str = "function_value",
               heterogeneity: str = "averages", starts: str = "equal", Delta: float = 1.0,
               radius: float = 1.0, varsigma: float = 1.0, worker: int | None = None,
               solver: str = "CLARABEL", solver_options: Mapping[str, object] | None = None,
               symmetry: bool = True, progress: Callable[[str], None] | None = None, batch: int = 1,
               **params: object) -> WorstCase:
    """The worst case of ``K`` iterations of ``method`` over a function class and a gossip class
    (docs/worst_case.md lists the classes, criteria and initial conditions).

    Parameters
    ----------
    method : str, type or pep.methods.MethodSpec
        A name or alias of ``pep.PEP_METHODS`` (dgd_cta, dgd_atc, dsgt, gt_dsgd, d2, extra, exact_diffusion,
        detag, centralized, local_sgd), a StepRule subclass (compiled: docs/worst_case.md, "Your own rule"),
        or a ``MethodSpec`` (a result's ``spec``).
    K : int
        Iterations (phases for detag), >= 1.
    L : float
        Smoothness of every f_i.
    step_size : float, sequence of K floats or callable, optional
        The step (default 1/L), one per iteration, or ``k -> alpha_k``.
    W : instances.GossipLike or sequence of matrices, optional
        The exact class: a symmetric W with W 1 = 1 (need not be connected or non-negative), a graph (its
        Metropolis W), or time-varying (a ``GossipSchedule``, or one matrix per gossip round).
    spectrum : (float, float) or sequence of pairs, optional
        The spectral class: every symmetric W with W 1 = 1 whose spectrum off consensus lies in
        ``(lam_min, lam_max)``; one pair per gossip round is time-varying. Give exactly one of W and spectrum.
    N : int, optional
        Agents of the spectral class (default 2); with W, W's size.
    time_varying : bool
        With one spectral pair: every sequence of matrices of that class instead of one W.
    function_class : {"nonconvex", "convex", "strongly_convex"}
        The class of every f_i (L-smooth).
    mu : float
        Strong convexity, 0 < mu < L, for "strongly_convex" only.
    criterion : {"gradient", "worker_gradient", "function_value", "distance", "consensus"}
        min_k ||grad f(x-bar^k)||^2; the same at the worst worker; f(x-bar^K) - f*; ||x-bar^K - x*||^2;
        (1/N) sum_i ||x_i^K - x-bar^K||^2.
    initial : {"function_value", "distance"}
        f(x0) - f* <= Delta (non-convex: f(x0) - f(x-bar^K) <= Delta), or ||x0 - x*|| <= radius.
    heterogeneity : {"averages", "optimum"}
        Where varsigma^2 bounds the dissimilarity: at every average x-bar^k, or at x*.
    starts : {"equal", "unequal"}
        A common x0, or one per agent (with initial "distance").
    Delta, radius, varsigma : float
        The bounds of the initial condition and of the heterogeneity.
    worker : int, optional
        With "worker_gradient", the one worker to measure.
    solver : {"CLARABEL", "SCS"}
        The cvxpy solver.
    solver_options : mapping, optional
        Override ``CLARABEL_DEFAULTS`` / ``SCS_DEFAULTS``.
    symmetry : bool
        Solve N = 2 and exact circulant W over symmetry-invariant Gram matrices (block forms;
        docs/worst_case.md, "Symmetry"), falling back to the full form when not "optimal". False: the full
        form only.
    progress : callable, optional
        Called with one line (size, estimated memory and CPU) before a solve estimated at 5 s or more.
    batch : int
        Queries per worker per engine iteration, as ``algorithms.run``'s; a step beyond it is refused.
    **params
        The method's own parameters (detag: ``R``, ``eta``, ...; ``momentum``).

    Raises
    ------
    TypeError, ValueError
        Naming the field, for bad input (``NotLinearError`` for a rule not linear in its gradients and
        gossip); also when the SDP would exceed ``MAX_SDP_BYTES``.
    RuntimeError
        Naming method, solver and status, when the solver fails or its answer fails the numpy checks.

    Examples
    --------
    >>> r = worst_case("dgd_atc", K=2, W=np.full((2, 2), 0.5), function_class="convex",
    ...                criterion="function_value", initial="distance")
    >>> round(r.value, 6)        # gradient descent at step 1/L: L R^2 / (4K + 2)
    0.1
    """
    setup = _validate(method, K, L, step_size, W, spectrum, N, time_varying, function_class, mu, criterion,
                      initial, heterogeneity, starts, Delta, radius, varsigma, solver, solver_options, params,
                      symmetry, batch)
    if progress is not None:
        if not callable(progress):
            raise TypeError(f"progress must be a callable taking one str; got progress={progress!r}")
        setup = dataclasses.replace(setup, progress=progress)
    options = {"L": setup.L, "step_size": list(setup.steps), "function_class": setup.function_class,
               "mu": setup.mu, "criterion": setup.criterion, "initial": setup.initial,
               "heterogeneity": setup.heterogeneity, "starts": setup.starts, "Delta": setup.Delta,
               "radius": setup.radius, "varsigma": setup.varsigma, "solver": setup.solver,
               "solver_options": setup.solver_options, "symmetry": symmetry, "batch": setup.batch,
               **setup.params}
    _Units.of(setup)  # the units are in float's range (ValueError naming L and Delta or radius), up front
    N = setup.N
    if setup.criterion == "worker_gradient":
        if worker is not None and not (isinstance(worker, numbers.Integral) and 0 <= worker < N):
            raise ValueError(f"worker must be an agent index in [0, {N}); got worker={worker!r}")
        all_exact = all(M is not None for M in setup.exact)
        # a circulant W: the cyclic shift of the agents maps worker w's problem onto worker w + 1's
        every = all_exact and not (symmetry and _all_circulant(setup))
        workers = [int(worker)] if worker is not None else (list(range(N)) if every else [0])
        results = [_solve_one(setup, w, False, options) for w in workers]
        return max(results, key=lambda r: r.value)
    if symmetry and (N == 2 or _all_circulant(setup)):
        # the block forms are faster, but where the class forces a block onto the boundary (varsigma = 0,
        # exact averaging) the solver may end "optimal_inaccurate" a few 1e-4 off: then solve the full form,
        # unless it is beyond the full form's ceiling (then the block form's checked answer, or its error)
        if N * setup.K > MAX_AGENT_ITERATIONS:
            return _solve_one(setup, None, True, options)
        try:
            result = _solve_one(setup, None, True, options)
            if result.status == "optimal":
                return result
        except RuntimeError:
            pass
    return _solve_one(setup, None, False, options)


def _all_circulant(setup: _Setup) -> bool:
    """Every round's W is given and circulant on N >= 3 agents: the cyclic shift of the agents is a
    symmetry of the SDP (``_GramBuilder.cyclic_blocks``)."""
    return setup.N >= 3 and all(M is not None and _is_circulant(M) for M in setup.exact)


#: Ceiling on the estimated memory of one SDP (bytes). The dense coefficient arrays are the spectral LMIs'
#: three (m^2, nb^2) Gram sums (m gossip columns per LMI, nb the Gram side) and the interpolation rows
#: (points^2 per agent, nb^2 each); cvxpy's canonicalization copies them. Measured (dsgt, spectral class,
#: N = 2, maximum resident size): K = 4, 8, 10, 12 took 162, 204, 267, 389 MB for 0.9, 19, 48, 102 MB of
#: those arrays, so about 2.5 x the arrays plus 150 MB; K = 32 (6 GB of arrays) grew past 12 GB before
#: std::bad_alloc. A larger SDP is refused after the (cheap) method run, before any allocation.
MAX_SDP_BYTES = 4 * 2**30


def _solve_one(setup: _Setup, worker: int | None, symmetry: bool, options: dict[str, Any]) -> WorstCase:
    # numpy's dense algebra here is on matrices of side <= a few hundred: a threaded OpenBLAS beside other
    # busy processes made eigh of side 240 take 0.4 s CPU instead of 0.01 s (measured at load 8; as in FMMC)
    from decbounds.pep.sdp import _solve_one_pinned  # with cvxpy: `import bounds` stays fast
    from threadpoolctl import threadpool_limits

    units = _Units.of(setup)
    with threadpool_limits(limits=1, user_api="blas"):
        return units.restore(_solve_one_pinned(units.normalized(setup), worker, symmetry, options), setup)


def worst_gossip_matrix(result: WorstCase) -> WorstCase:
    """The worst W back from a static spectral-class worst case: the best, solved exactly (``W=``), of the
    least-squares fit of the recovered gossip rounds over the class and its two extreme matrices
    J + lam (I - J). Its value bounds the class's worst case from below, the relaxation's from above.
    TypeError for a non-WorstCase, ValueError for an exact-W or time-varying result.

    Parameters
    ----------
    result : WorstCase
        A static spectral-class worst case.

    Examples
    --------
    >>> relaxed = worst_case("dgd_atc", K=2, spectrum=(0.0, 0.5))
    >>> exact = worst_gossip_matrix(relaxed)
    >>> bool(exact.value <= relaxed.value * (1 + 1e-6)), exact.gossip
    (True, 'exact')
    """
    if not isinstance(result, WorstCase):
        raise TypeError(f"result must be a WorstCase (from worst_case); got {type(result).__name__}")
    import cvxpy as cp

    if result.gossip != "spectral" or result.time_varying:
        raise ValueError("worst_gossip_matrix needs a static spectral-class result (gossip='spectral', not "
                         f"time-varying); got gossip={result.gossip!r}, time_varying={result.time_varying}")
    N, (lo, hi) = result.N, result.spectrum
    J, I = np.full((N, N), 1.0 / N), np.eye(N)
    candidates = [J + lo * (I - J), J + hi * (I - J)]
    if len(result.gossip_inputs):
        Wv = cp.Variable((N, N), symmetric=True)
        residual = sum(cp.sum_squares(Wv @ X - Y) for X, Y in zip(result.gossip_inputs, result.gossip_outputs,
                                                                   strict=True))
        fit = cp.Problem(cp.Minimize(residual), [Wv @ np.ones(N) == np.ones(N), (Wv - J) - lo * (I - J) >> 0,
                                                 hi * (I - J) - (Wv - J) >> 0])
        with warnings.catch_warnings():  # the fit only proposes a candidate: its exact solve is checked
            warnings.simplefilter("ignore", UserWarning)
            fit.solve(solver="CLARABEL")
        if Wv.value is not None:
            fitted = 0.5 * (Wv.value + Wv.value.T)
            fitted = fitted + J @ (I - fitted) + (I - fitted) @ J  # W 1 = 1 exactly (the solver's rounding)
            off = _off_consensus(fitted)
            if off.size and lo - 1e-9 <= off.min() and off.max() <= hi + 1e-9:
                candidates.insert(0, fitted)
    options = dict(result.options)
    best: WorstCase | None = None
    for candidate in candidates:
        try:
            exact = worst_case(result.spec, result.K, W=candidate, worker=result.worker, **options)
        except RuntimeError:
            continue
        if best is None or exact.value > best.value:
            best = exact
    if best is None:
        raise RuntimeError(f"worst_gossip_matrix({result.method!r}): no candidate W solved")
    return best


__getattr__ = deprecated_attributes(__name__, globals(), {
    "check_size": ("check_sdp_size", "decbounds.pep.api.check_size is renamed check_sdp_size; the alias goes "
                   "in 0.4")})
if TYPE_CHECKING:  # what the deprecated name reads, for type checkers
    check_size = check_sdp_size
