"""Computed worst cases: decentralized performance estimation (PEP) as a semidefinite program on cvxpy.

``worst_case(method, K, L, step_size, W=... | spectrum=(lam_min, lam_max), function_class=...,
criterion=...)`` computes the largest value of a criterion after K iterations over every instance of a
class (Drori & Teboulle 2014; Taylor, Hendrickx & Glineur 2017; decentralized: Colla & Hendrickx, IEEE TAC
2023). The classes, criteria and initial conditions are listed in docs/worst_case.md; in short:

- N agents, f = (1/N) sum_i f_i, each f_i in one **function class**: L-smooth possibly non-convex
  ("nonconvex"), L-smooth convex ("convex") or L-smooth mu-strongly convex ("strongly_convex");
- **criterion**: "gradient" min_{k<=K} ||grad f(x-bar^k)||^2; "worker_gradient" min_k ||grad f(x_w^k)||^2
  at the worst worker w; "function_value" f(x-bar^K) - f*; "distance" ||x-bar^K - x*||^2; "consensus"
  (1/N) sum_i ||x_i^K - x-bar^K||^2 (f* and x* exist in the convex classes only);
- **initial condition**: "function_value" f(x0) - f* <= Delta (non-convex: f(x0) - f(x-bar^K) <= Delta, as
  PEPit's non-convex gradient-descent example; an upper bound, since f* <= f(x-bar^K)) or "distance"
  ||x0 - x*||^2 <= radius^2 (convex classes; with unequal starts (1/N) sum_i ||x_i^0 - x*||^2 <= radius^2);
- **heterogeneity** varsigma: "averages" (1/N) sum_i ||grad f_i(x-bar^k) - grad f(x-bar^k)||^2 <= varsigma^2
  at every average, the paper's assumption (5) there; "optimum" (1/N) sum_i ||grad f_i(x*)||^2 <= varsigma^2.
  Without a bound the problem is unbounded as soon as W is not exact averaging (the f_i can pull the agents
  apart at no cost to f); with varsigma = 0 (at the averages) every method and every W is gradient descent;
- a step per iteration: a constant, a list of K steps, or a callable k -> alpha_k (a diminishing rule);
- a **gossip class**: one given symmetric W with W 1 = 1 (exact), or every symmetric W with W 1 = 1 whose
  eigenvalues off the consensus direction lie in [lam_min, lam_max] (the spectral relaxation of Colla &
  Hendrickx: necessary conditions on the Gram matrix, so its value is an upper bound on that class); static
  (one W for every round) or time-varying (a sequence W_t, or one spectral class per round).

The SDP is over the Gram matrix G of the basis vectors (x0 = 0, without loss: only differences of points
enter; x* is a basis vector, or the origin with unequal starts, whose x_i^0 are basis vectors), every queried
gradient (agent N's gradient at x* is minus the others': sum_i grad f_i(x*) = 0), and (spectral class) the
disagreement part of every gossip output; function values are scalar variables. The method's iterates are
linear in the basis, so the method -- the engine's own step rule (``pep.methods``), compiled by
``algorithms.compiled`` -- runs directly on coefficient rows.
Interpolation (Taylor, Hendrickx & Glineur 2017, Thm. 4 and its smooth non-convex case), for every ordered
pair (a, b) of agent i's points, dx = x_a - x_b, dg = g_a - g_b:

    non-convex:         f_a >= f_b + <g_a + g_b, dx>/2 - (L/4) ||dx||^2 + ||dg||^2 / (4L),
    mu-strongly convex: f_a >= f_b + <g_b, dx> + (||dg||^2 / L + mu ||dx||^2 - 2 (mu/L) <dg, dx>)
                                                / (2 (1 - mu/L))          (convex: mu = 0).

Spectral class, for the gossip rounds (columns) with centred inputs X~_i and outputs Y~_i per agent,
A = sum_i X~_i^T X~_i, B = sum_i X~_i^T Y~_i, C = sum_i Y~_i^T Y~_i (linear in G):

    B = B^T,   (lam_min + lam_max) B - lam_min lam_max A - C >= 0 (PSD),

which, with G PSD, also gives lam_max A - B >= 0 and B - lam_min A >= 0 (all three are checked after the
solve). Static: one W serves every round, so one LMI holds all columns. Time-varying: the columns of round t
share W_t only, one LMI per round (a principal part of the static one: the value can only grow).

Symmetry (``symmetry=True``, the default): a permutation of the agents that maps the SDP onto itself maps
an optimal (G, f) to another, so their average over the group is optimal and invariant, and an invariant G is
block-diagonal in a basis adapted to the group. N = 2: the swap, two blocks. An exact circulant W (every
round) on N >= 3 agents: the cyclic shift, one block per Fourier frequency (about N/2 + 1 blocks of side
about 2K instead of one of side about 2KN; docs/worst_case.md). Only agent 0's interpolation rows enter
the solver; the checks below still test every agent's.

The result is checked with numpy after the solve: G PSD within tolerance, every constraint within
tolerance, and the duality gap from the dual variables of the inhomogeneous constraints (the initial
condition and the heterogeneity: every other constraint is homogeneous, so the dual objective is
Delta * y_init + varsigma^2 * sum_k y_k). A solver failure raises, never returns a number.

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
from decbounds.bounds.validation import (
    collect_errors,
    describe_int,
    require_bool,
    require_count,
    require_real,
)
from decbounds.bounds.vocabulary import (
    CRITERIA,
    FUNCTION_CLASSES,
    HETEROGENEITY,
    INITIAL_CONDITIONS,
    PEP_SOLVERS,
    STARTS,
)
from decbounds.pep.methods import MethodSpec, method_spec
from decbounds.pep.units import MAX_NORMALIZED_VARSIGMA, _Units

if TYPE_CHECKING:  # bounds imports instances inside a call only (docs/architecture.md, import rules)
    from decbounds.instances.gossip import GossipLike, GossipMatrix
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
    "check_size",
    "worst_case",
    "worst_gossip_matrix",
]

SOLVERS = PEP_SOLVERS

#: Clarabel settings used unless ``solver_options`` overrides them: the spectral-class SDPs stop at
#: "optimal_inaccurate" (NumericalError in the first iterations for K >= 5) with dynamic regularization on;
#: with Clarabel 0.11's default KKT factorization (qdldl) the two-block form of N = 2 stalls one step short
#: of the 1e-8 gap (AlmostSolved, "optimal_inaccurate", in 6 of 16 small cases measured, one failure),
#: while faer's supernodal LDL reaches "optimal" in all 16, in less time (docs/errata.md E57). A static
#: KKT regularization of 1e-7 (Clarabel's default 1e-8; iterative refinement removes its bias) lets DeTAG's
#: K = 10 two-block SDP reach "optimal" (E58).
CLARABEL_DEFAULTS: dict[str, Any] = {"max_iter": 500, "dynamic_regularization_enable": False,
                                     "direct_solve_method": "faer", "static_regularization_constant": 1e-7}
SCS_DEFAULTS: dict[str, Any] = {"eps_abs": 1e-8, "eps_rel": 1e-8, "max_iters": 200_000}

#: Tolerances of the post-solve checks, relative to the scale of the solution (the largest of 1, max |G|,
#: max |f| and, spectral class, the largest entry of the LMI's A and C): the most negative eigenvalue of G,
#: the largest violation of any scalar or matrix constraint.
CHECK_TOLERANCE = {"CLARABEL": 1e-5, "SCS": 1e-4}
#: Largest accepted |primal - dual objective|, relative to max(1, value).
GAP_TOLERANCE = {"CLARABEL": 1e-5, "SCS": 1e-3}


@dataclasses.dataclass(repr=False)
class WorstCase:
    """One computed worst case (like scipy's OptimizeResult: one type, a short repr).

    Attributes
    ----------
    method, K, L, mu, Delta, radius, varsigma
        The problem (``method`` is the canonical name; ``mu`` 0 outside the strongly convex class).
    step_size : float or None
        The constant step, or None when the steps vary; ``steps``: the K steps alpha_0, ..., alpha_{K-1}.
    function_class, criterion, initial, heterogeneity, starts : str
        The class, criterion, initial condition, heterogeneity measure and starts (module docstring).
    gossip : {"exact", "spectral"}
        A given W (or W_t), or the class [lam_min, lam_max] (per round when time-varying).
    time_varying : bool
        One W_t per round (``spectra``: the per-round classes; ``W``: the (T, N, N) matrices) instead of
        one W.
    spectrum : (float, float)
        The range (for an exact W, its own eigenvalues off the consensus direction; time-varying: the hull).
    N : int
        The agents.
    params : dict
        The method's extra parameters (DeTAG: R, eta).
    worker : int or None
        The measured worker (criterion "worker_gradient").
    value : float
        The worst case of the criterion (the SDP's primal value t).
    solver, status : str
        The cvxpy solver name and status.
    gap : float
        |primal - dual objective| (absolute); ``solver_gap``: the solver's own (primal, dual) objectives
        where it reports them.
    violations : dict
        The measured violation of each constraint family at the returned point (>= 0; 0 = met);
        ``min_gram_eigenvalue``: G's smallest eigenvalue.
    build_seconds, solve_seconds : float
        Time to build the SDP (method + coefficients), and cvxpy's solve (canonicalization + solver).
    sdp_size : dict
        gram (side of G), values (function values), scalar_constraints (every agent's), solver_rows (the
        scalar rows the solver gets: one agent's interpolation in a block form, plus the LMIs' B = B^T
        equalities), lmi (side of the largest spectral LMI, 0 for exact W), gossip_columns, oracle_points,
        blocks (the PSD blocks' sides: (gram,), or the two swap blocks of N = 2, or the Fourier blocks of a
        circulant W: the sides of the LMIs the solver gets, a Hermitian block of side m as a real 2m).
    iterates : numpy.ndarray
        (K+1, N, d) recovered worst-case iterates; ``average_gradients`` (K+1, d) grad f(x-bar^k) where it
        was queried (nan rows elsewhere); ``optimum`` x* (convex classes) or None;
        ``points``, ``gradients``, ``values``: per agent, every point where f_i was evaluated, with its
        gradient and value (the interpolation data: a worst-case f_i exists through them);
        ``gossip_inputs``, ``gossip_outputs``: (m, N, d) every gossip round (spectral class), in order, in
        the units of the problem as solved (L = 1 and Delta or radius = 1: ``_Units``), and
        ``gossip_rounds`` (m,) the round t of each.
    W : numpy.ndarray or None
        The gossip matrix (exact class; (T, N, N) when time-varying) or None.
    options : dict
        The keyword arguments that reproduce this solve with another gossip class (``worst_gossip_matrix``).
    spec : pep.methods.MethodSpec
        The method itself (a user's rule included): ``replay`` and ``worst_gossip_matrix`` run it, never a
        rule looked up by ``method``'s name.
    batch : int
        The queries per worker of one engine iteration the value assumes (the engine's B).
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
        results"): the entry of the method (``MethodSpec.catalog``) evaluated at epsilon = sqrt(value), the
        gradient norm the worst case guarantees after K iterations, so that its ``value`` (the predicted
        T_eps for that accuracy) stands beside K. Delta, L, varsigma, N are the PEP's; sigma = 0 and B = 1
        (exact gradients); varsigma0 = varsigma (the PEP bounds the dissimilarity at every average, x0
        included); lam = the largest |eigenvalue| off consensus (over the rounds when time-varying). The
        catalog's entries are non-convex gradient-norm rates: another class or criterion gives a Prediction
        whose note says so.
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
        """Run the method description again on plain numpy arrays, with the recovered gradients as the oracle
        (looked up by point) and the recovered gossip (W, or the recorded rounds); returns the K+1 iterates.
        They equal ``iterates`` when the worst case is consistent with the method's update equations."""
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


# -- validation (one place for every argument) ---------------------------------------------------------------

def _positive(name: str, value: Any, *, allow_zero: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number; got {value!r}")
    try:
        value = float(value)
    except OverflowError:  # an int such as 10**400
        raise ValueError(f"{name} must be finite; got {name}={describe_int(int(value))}, which overflows "
                         "float") from None
    if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"{name} must be {'>= 0' if allow_zero else '> 0'} and finite; got {name}={value!r}")
    return value


def _choice(name: str, value: Any, choices: Sequence[str]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {tuple(choices)}; got {name}={value!r}")
    return value


def _check_W(W: object, name: str = "W") -> np.ndarray:
    """W as the PEP's class needs it: a dense, real, finite, square matrix, symmetric with rows summing to 1
    (within 1e-10; no connectivity or sign asked), made exactly symmetric."""
    try:
        W = np.asarray(W.toarray() if hasattr(W, "toarray") else W)
        if np.iscomplexobj(W):  # numpy would drop the imaginary part with a ComplexWarning
            raise TypeError(f"{name} must be a real matrix; got complex entries")
        W = W.astype(float)
    except (TypeError, ValueError) as err:
        if "complex" in str(err):
            raise
        raise TypeError(f"{name} must be a square real matrix; got {type(W).__name__}") from err
    if W.ndim != 2 or W.shape[0] != W.shape[1] or W.shape[0] < 1:
        raise ValueError(f"{name} must be a square matrix; got shape {W.shape}")
    if not np.all(np.isfinite(W)):
        raise ValueError(f"{name} must be finite")
    if not np.allclose(W, W.T, rtol=0, atol=1e-10):
        raise ValueError(f"{name} must be symmetric (the gossip class of the paper, docs/theory.md §1)")
    if not np.allclose(W.sum(axis=1), 1.0, rtol=0, atol=1e-10):
        raise ValueError(f"{name} must have rows summing to 1 (W 1 = 1)")
    return 0.5 * (W + W.T)


def _gossip_rounds(W: GossipLike | Sequence[MatrixLike], rounds: int, method: str, K: int
                   ) -> tuple[list[GossipMatrix | MatrixLike], bool]:
    """The W of each gossip round, and whether W was one W for every round: a gossip schedule (an
    ``instances.Gossip`` that is ``time_varying``) gives its first ``rounds`` rounds, a list, tuple or 3-D
    array one W per round; a graph becomes its Metropolis W through ``instances.as_gossip`` (the one
    conversion); a ``GossipMatrix`` or a matrix is the one W."""
    import networkx as nx
    from decbounds.instances.gossip import Gossip, as_gossip

    if isinstance(W, Gossip) and W.time_varying:
        sequence: list[GossipMatrix | MatrixLike] = [W.round_matrix(t) for t in range(rounds)]
    elif isinstance(W, nx.Graph):
        return [as_gossip(W, allow_disconnected=True)], True
    elif isinstance(W, Gossip) or hasattr(W, "toarray") or not (isinstance(W, (list, tuple))
                                                                 or np.ndim(W) == 3) or _one_matrix(W):
        return [W], True
    else:
        sequence = list(W)
    if len(sequence) != rounds:
        raise ValueError(f"W must hold one matrix per gossip round ({rounds} for {method} at K = {K}); got "
                         f"{len(sequence)}")
    return sequence, False


def _one_matrix(W: object) -> bool:
    """A list or tuple of rows of numbers (``[[.75, .25], [.25, .75]]``, as ``algorithms.run`` takes it) is
    one matrix; a list of matrices is one per round."""
    try:
        return np.asarray(W, dtype=float).ndim == 2
    except (TypeError, ValueError):
        return False


def _off_consensus_range(given: object, dense: np.ndarray) -> tuple[float, float]:
    """(lambda_n, lambda_2), the extreme eigenvalues off consensus of one round: read from a
    ``GossipMatrix`` (decomposed once, when it was made), else of the checked ``dense`` matrix made a
    GossipMatrix by ``instances.as_gossip`` (the same ``eigvalsh`` of W - J, the same bits)."""
    from decbounds.instances.gossip import GossipMatrix, as_gossip

    value = given if isinstance(given, GossipMatrix) else None
    if value is None or value.lambda_2 is None or value.lambda_n is None:
        value = as_gossip(dense, allow_disconnected=True)
    assert value.lambda_2 is not None and value.lambda_n is not None
    return float(value.lambda_n), float(value.lambda_2)


def _check_spectrum(spectrum: Any, name: str = "spectrum") -> tuple[float, float]:
    try:
        lo, hi = (float(v) for v in spectrum)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{name} must be a pair (lam_min, lam_max) of reals; "
                        f"got {name}={spectrum!r}") from err
    if not (math.isfinite(lo) and math.isfinite(hi)) or not -1.0 <= lo <= hi <= 1.0:
        raise ValueError(f"{name} must satisfy -1 <= lam_min <= lam_max <= 1; got {name}={spectrum!r}")
    return lo, hi


def _is_pair(spectrum: Any) -> bool:
    try:
        return len(spectrum) == 2 and all(isinstance(v, numbers.Real) for v in spectrum)
    except TypeError:
        return True  # not a sequence: _check_spectrum names the field


def _off_consensus(W: np.ndarray) -> np.ndarray:
    """W's eigenvalues off the consensus direction: those of W - J except the 0 that replaced the 1."""
    N = W.shape[0]
    off = np.linalg.eigvalsh(W - np.full((N, N), 1.0 / N))
    return np.delete(off, int(np.argmin(np.abs(off)))) if N > 1 else np.zeros(0)


def _round_matrices(spectra: Sequence[tuple[float, float]], N: int) -> list[np.ndarray | None]:
    """A point spectrum (lam, lam) is one matrix, J + lam (I - J), solved in the exact form (the relaxation's
    LMI would force every disagreement output onto a face of the cone, an ill-posed SDP); None elsewhere."""
    J = np.full((N, N), 1.0 / N)
    return [J + lo * (np.eye(N) - J) if lo == hi else None for lo, hi in spectra]


def _steps(step_size: Any, K: int, L: float) -> tuple[float, ...]:
    if step_size is None:
        if not math.isfinite(1.0 / L):
            raise ValueError(f"L={L!r}: the default step 1/L overflows float; give step_size")
        return (1.0 / L,) * K
    if callable(step_size):
        values = []
        for k in range(K):
            try:
                values.append(step_size(k))
            except (TypeError, ValueError, ArithmeticError) as err:
                raise TypeError(f"step_size must be a callable k -> alpha_k of one int; step_size({k}) "
                                f"raised "
                                f"{type(err).__name__}: {err}") from None
        return tuple(_positive(f"step_size({k})", v) for k, v in enumerate(values))
    if isinstance(step_size, (str, bytes)):
        raise TypeError(f"step_size must be a real, a sequence of K reals or a callable; got {step_size!r}")
    if isinstance(step_size, numbers.Real) or np.ndim(step_size) == 0:
        return (_positive("step_size", step_size),) * K
    values = list(step_size)
    if len(values) != K:
        raise ValueError(f"step_size must hold one step per iteration (K = {K}); got {len(values)}")
    return tuple(_positive(f"step_size[{k}]", v) for k, v in enumerate(values))


#: Ceiling on N * K, the agents times the iterations (phases for detag): the SDP's Gram side grows as
#: N * K and its interpolation constraints as N (2K)^2. Measured (CLARABEL, this 2-core machine under a
#: load of ~12): dsgt with an exact W, K = 4, took 0.57 s CPU at N = 4 and 11.4 s at N = 8 (growth about
#: (N K)^4.3), so N K = 64 is about 4 min and 128 would be over an hour; over the spectral class (N = 2)
#: K = 10 ended "optimal_inaccurate" after 21 s and K = 12 failed. A larger size is refused before anything
#: is built (K = 10**6 would run for hours).
MAX_AGENT_ITERATIONS = 64

#: Ceiling on N * K for an exact circulant W (every round) on N >= 3 agents, solved over shift-invariant Gram
#: matrices (``symmetry=True``; not for criterion "worker_gradient"): about N/2 + 1 blocks of side about 2K,
#: so the time grows about linearly in N up to N ~ 32. Measured (CLARABEL, CPU s, load ~7): dsgt, Metropolis
#: ring, K = 5, 0.27 s at N = 6, 2.3 s at N = 24, 8.7 s at N = 48 and 19.7 s at N = 64 (N K = 320).
MAX_CIRCULANT_AGENT_ITERATIONS = 320

#: Range of step_size * L: the worst case depends on the step only through step_size * L (``_Units``), and
#: the SDP is solved at L = 1. Measured (CLARABEL; dsgt, dgd_cta, extra, dgd_atc, detag; K = 2 and 4; the
#: spectral class and an exact W; docs/reliability.md): every step L in [1e-6, 5] solved "optimal" (or the
#: correct "unbounded" below); at 1e-8 five of eight failed (the value ~ Delta / (step K) is beyond the
#: solver's range), at 10 to 1e5 some failed and some returned values that are not monotone in the step
#: (step 1e6 ended "optimal_inaccurate", L = 1e6 with step 0.5 failed). In the non-convex class a
#: constant step L >= 2 makes the worst case infinite (f_i = L ||x||^2 / 2: f never decreases, so nothing
#: bounds grad f(x0)): the solver says "unbounded" (RuntimeError), as for DeTAG's stale tracker below 2.
MAX_STEP_TIMES_L = 5.0
MIN_STEP_TIMES_L = 1e-6




#: Ceiling on the engine iterations of one iteration of the worst case (a rule's ``iterations_per_update``:
#: DeTAG's phase length R): every one adds gossip outputs (spectral class: Gram columns and LMI rows) and
#: the builder runs them one by one. Measured on DeTAG (spectral class [0, 0.5], CPU): K = 2 took 0.1 s at
#: R = 16; K = 4 took 0.4 s at R = 4, 32 s at R = 8 ("optimal_inaccurate"), and did not end in 15 min at
#: R = 16; R = 10**6 hung in the builder. Larger K R is left to ``MAX_SDP_BYTES`` and the announced estimate.
MAX_ROUNDS_PER_ITERATION = 16
#: The former name of `MAX_ROUNDS_PER_ITERATION` (deprecated).
MAX_DETAG_ROUNDS = MAX_ROUNDS_PER_ITERATION


def _check_solver_options(options: Any, solver: str) -> dict[str, Any] | None:
    """``solver_options`` as a dict: a mapping with str keys; the options of ``CLARABEL_DEFAULTS`` /
    ``SCS_DEFAULTS`` checked for their type (an iteration count >= 1, a tolerance > 0, a bool); other keys
    go to the solver as they are (one it refuses is a ValueError naming solver_options)."""
    if options is None:
        return None
    if not isinstance(options, Mapping):
        raise TypeError("solver_options must be a mapping of option names to values (e.g. "
                        "{'max_iter': 200}); "
                        f"got solver_options={options!r}")
    defaults = CLARABEL_DEFAULTS if solver == "CLARABEL" else SCS_DEFAULTS
    checked: dict[str, Any] = {}
    for key, value in options.items():
        if not isinstance(key, str):
            raise TypeError(f"solver_options keys must be option names (str); got {key!r}")
        name, default = f"solver_options[{key!r}]", defaults.get(key)
        if isinstance(default, bool):
            value = require_bool(name, value)
        elif isinstance(default, int):
            value = require_count(name, value, 1)
        elif isinstance(default, float):
            value = require_real(name, value)
        checked[key] = value
    return checked


def _refuse_a_method_that_never_decreases(spec: MethodSpec, K: int, L: float, steps: tuple[float, ...],
                                          lam: float, params: dict[str, Any], batch: int) -> None:
    """ValueError when the non-convex worst case is infinite for a reason seen without the solver: f_i = L
    ||x||^2 / 2 at every agent (in the class, zero heterogeneity, consensus kept by every W with W 1 = 1).
    If the method's averages on it never reach 0 and f(x-bar^K) >= f(x0), the initial condition f(x0) -
    f(x-bar^K) <= Delta holds at every scale of x0 while min_k ||grad f(x-bar^k)||^2 grows with it (e.g.
    a constant step with step L >= 2, or DeTAG at K = 1, which never leaves x0)."""
    from decbounds.pep.methods import NumpyOps

    ops = NumpyOps(np.ones((1, 1)), lambda X: L * X, lam=lam)
    with np.errstate(over="ignore", invalid="ignore"):
        averages = np.array([float(X[0, 0]) for X in spec.run(ops, np.ones((1, 1)), K, np.array(steps),
                                                                 batch, **params)])
    # to rounding: DeTAG's accelerated gossip returns x0 = 1 as 0.9999999999999997 on one agent
    if (np.all(np.isfinite(averages)) and np.all(np.abs(averages) > 1e-9)
            and averages[-1] ** 2 >= 1.0 - 1e-9):
        raise ValueError(f"the worst case is unbounded (infinite): on f_i = L ||x||^2 / 2 {spec.name} with "
                         f"step_size={list(steps)!r} (L={L!r}) ends with f(x-bar^K) >= f(x0), so f(x0) - "
                         "f(x-bar^K) <= Delta holds at every scale of x0 and the gradient norm is free; give "
                         "steps that decrease f (a constant step_size * L < 2), or a larger K")


def _valid_or(check: Any, default: Any) -> Any:
    try:
        return check()
    except (TypeError, ValueError):
        return default


def check_iterations(K: object, L: object, step_size: object) -> tuple[int, float, tuple[float, ...]]:
    """K, L and the K steps of `worst_case`, every wrong one reported at once (before anything is built).

    Parameters
    ----------
    K, L, step_size : object
        As in `worst_case` (anything: validated here).

    Returns
    -------
    tuple
        ``(K, L, steps)``: K in [1, MAX_AGENT_ITERATIONS / 2], L > 0 finite, one step per iteration (1/L
        by default), each with MIN_STEP_TIMES_L <= step * L <= MAX_STEP_TIMES_L.

    Raises
    ------
    TypeError, ValueError
        One error naming every wrong argument (``bounds.validation.collect_errors``).

    Examples
    --------
    >>> check_iterations(2, 1.0, 0.5)
    (2, 1.0, (0.5, 0.5))
    >>> check_iterations(0, 0, None)
    Traceback (most recent call last):
    ...
    ValueError: 2 arguments are wrong: K must be an integer >= 1; got K=0; L must be > 0 and finite; got L=0.0
    """
    def count() -> int:
        return require_count("K", K, minimum=1, maximum=MAX_AGENT_ITERATIONS // 2,
                             what=f"N * K <= MAX_AGENT_ITERATIONS = {MAX_AGENT_ITERATIONS} with N >= 2")

    def checked_steps() -> tuple[float, ...]:
        # with a wrong K or L a single step is still checked (against L = 1 if L is wrong); a sequence of
        # steps needs K for its length
        K_, L_ = _valid_or(count, None), _valid_or(lambda: _positive("L", L), None)
        if K_ is None and not (step_size is None or isinstance(step_size, numbers.Real)):
            return ()
        steps = _steps(step_size, K_ or 1, L_ or 1.0)
        if L_ is not None and steps and min(steps) * L_ < MIN_STEP_TIMES_L:
            raise ValueError(f"step_size * L must be >= MIN_STEP_TIMES_L = {MIN_STEP_TIMES_L:g} (below it "
                             "the "
                             "worst case ~ Delta / (step K) is beyond the solver's range); got "
                             f"step_size={min(steps)!r} with L={L_!r}")
        if L_ is not None and steps and max(steps) * L_ > MAX_STEP_TIMES_L:
            raise ValueError(f"step_size * L must be <= MAX_STEP_TIMES_L = {MAX_STEP_TIMES_L:g} (beyond it "
                             f"the SDP cannot be solved); got step_size={max(steps)!r} with L={L_!r}")
        return steps

    K, L, steps = collect_errors(count, lambda: _positive("L", L), checked_steps)
    return K, L, steps


def check_size(K: int, N: int, *, circulant: bool = False) -> int:
    """``N`` after checking the SDP's size N * K against ``MAX_AGENT_ITERATIONS`` (``circulant``: against
    ``MAX_CIRCULANT_AGENT_ITERATIONS``, the cyclic form's), before building it.

    Parameters
    ----------
    K : int
        The iterations (phases for DeTAG).
    N : int
        The agents.
    circulant : bool, default False
        Whether the SDP is solved in the cyclic form (an exact circulant W on N >= 3 agents).

    Returns
    -------
    int
        ``N``.

    Raises
    ------
    ValueError
        If N * K is above the ceiling (naming it, N and K).

    Examples
    --------
    >>> check_size(4, 8)
    8
    >>> check_size(5, 64, circulant=True)
    64
    """
    name = "MAX_CIRCULANT_AGENT_ITERATIONS" if circulant else "MAX_AGENT_ITERATIONS"
    ceiling = MAX_CIRCULANT_AGENT_ITERATIONS if circulant else MAX_AGENT_ITERATIONS
    if N * K > ceiling:
        raise ValueError(f"N * K must be <= {name} = {ceiling} (agents times iterations: the SDP's size, "
                         f"from its measured growth); got N={N}, K={K}")
    return N


def _is_circulant(W: np.ndarray) -> bool:
    """W[i, j] = W[0, (j - i) mod N]: the cyclic shift of the agents is a symmetry of W."""
    N = W.shape[0]
    return bool(np.allclose(W, W[0][(np.arange(N)[None, :] - np.arange(N)[:, None]) % N], rtol=0, atol=1e-12))


@dataclasses.dataclass(frozen=True)
class _Setup:
    """The validated problem of one ``worst_case`` call."""

    spec: MethodSpec
    K: int
    L: float
    mu: float
    steps: tuple[float, ...]
    function_class: str
    criterion: str
    initial: str
    heterogeneity: str
    starts: str
    Delta: float
    radius: float
    varsigma: float
    N: int
    lam: float
    exact: tuple[np.ndarray | None, ...]   # per round: W_t, or None (spectral)
    spectra: tuple[tuple[float, float], ...]
    time_varying: bool
    given_matrix: bool
    solver: str
    solver_options: Mapping[str, Any] | None
    params: dict[str, Any]
    batch: int = 1
    progress: Callable[[str], None] | None = None

    @property
    def convex(self) -> bool:
        return self.function_class != "nonconvex"

    def W_of(self, t: int) -> np.ndarray | None:
        return self.exact[t if self.time_varying else 0]


def _validate(method: str | type | MethodSpec, K: Any, L: Any, step_size: Any, W: Any, spectrum: Any, N: Any,
              time_varying: bool, function_class: Any, mu: Any, criterion: Any, initial: Any,
              heterogeneity: Any, starts: Any, Delta: Any, radius: Any, varsigma: Any, solver: Any,
              solver_options: Any, params: dict[str, Any], symmetry: bool = True, batch: Any = 1) -> _Setup:
    spec = method_spec(method)
    K, L, steps = check_iterations(K, L, step_size)
    function_class = _choice("function_class", function_class, FUNCTION_CLASSES)
    mu = _positive("mu", mu, allow_zero=True)
    if function_class == "strongly_convex" and not 0 < mu < L:
        raise ValueError(f"mu must satisfy 0 < mu < L for function_class='strongly_convex'; got mu={mu!r}")
    if function_class != "strongly_convex" and mu != 0:
        raise ValueError(f"mu applies to function_class='strongly_convex' only; got mu={mu!r} with "
                         f"function_class={function_class!r}")
    criterion = _choice("criterion", criterion, CRITERIA)
    initial = _choice("initial", initial, INITIAL_CONDITIONS)
    heterogeneity = _choice("heterogeneity", heterogeneity, HETEROGENEITY)
    starts = _choice("starts", starts, STARTS)
    needs_optimum = {"criterion": (criterion, criterion in ("function_value", "distance")),
                     "initial": (initial, initial == "distance"),
                     "heterogeneity": (heterogeneity, heterogeneity == "optimum"),
                     "starts": (starts, starts == "unequal")}
    for name, (value, needs) in needs_optimum.items():
        if needs and function_class == "nonconvex":
            raise ValueError(f"{name}={value!r} needs a minimizer x*: give function_class='convex' "
                             "or 'strongly_convex'")
    if function_class == "convex" and initial == "function_value" and criterion == "distance":
        # a convex f may be flat far from x*: f(x0) - f* <= Delta leaves ||x0 - x*|| and so the distance free
        raise ValueError("criterion='distance' with initial='function_value' is unbounded in "
                         "function_class='convex' (f(x0) - f* <= Delta does not bound ||x0 - x*||): give "
                         "initial='distance', or function_class='strongly_convex'")
    if starts == "unequal" and initial != "distance":
        raise ValueError("starts='unequal' bounds the starts by (1/N) sum_i ||x_i^0 - x*||^2 <= radius^2: "
                         "give initial='distance'")
    Delta = _positive("Delta", Delta)
    radius = _positive("radius", radius)
    varsigma = _positive("varsigma", varsigma, allow_zero=True)
    if not isinstance(solver, str) or solver.upper() not in SOLVERS:
        raise ValueError(f"solver must be one of {SOLVERS}; got solver={solver!r}")
    solver = solver.upper()
    solver_options = _check_solver_options(solver_options, solver)
    unknown = set(params) - set(spec.params)
    if unknown:
        raise TypeError(f"method {spec.name!r} takes no parameter(s) {sorted(unknown)}; it takes "
                        f"{sorted(spec.params) or 'none'}")
    params = {**spec.params, **params}
    batch = require_count("batch", batch, 1)
    per_update = spec.iterations(**params)  # the rule checks its own parameters (DeTAG: R >= 1)
    if per_update > MAX_ROUNDS_PER_ITERATION:
        raise ValueError(f"{spec.name} runs {per_update} engine iterations per iteration of the worst case "
                         f"with {params}: at most MAX_ROUNDS_PER_ITERATION = {MAX_ROUNDS_PER_ITERATION} "
                         "(each a block of the SDP)")
    if not isinstance(time_varying, (bool, np.bool_)):
        raise TypeError(f"time_varying must be a bool; got time_varying={time_varying!r}")
    rounds = K * per_update
    if (W is None) == (spectrum is None):
        raise ValueError("give exactly one of W (exact gossip matrix) and spectrum=(lam_min, lam_max)")
    if W is not None:
        from decbounds.instances.gossip import GossipMatrix

        given, named = _gossip_rounds(W, rounds, spec.name, K)
        if named and time_varying:
            raise ValueError("time_varying=True with one W is that W in every round: give W one matrix "
                             "per round, or a spectrum pair")
        time_varying = time_varying or not named
        matrices = [_check_W(M.toarray() if isinstance(M, GossipMatrix) else M, "W" if named else f"W[{t}]")
                    for t, M in enumerate(given)]
        sizes = {M.shape[0] for M in matrices}
        if len(sizes) != 1:
            raise ValueError(f"W must hold matrices of one size; got sizes {sorted(sizes)}")
        size = sizes.pop()
        if N is not None and N != size:
            raise ValueError(f"N must equal W's size {size}; got N={N!r}")
        # the cyclic form's ceiling (the worker criterion solves one worker in the full form)
        N = check_size(K, size, circulant=bool(symmetry) and size >= 3 and criterion != "worker_gradient"
                       and all(_is_circulant(M) for M in matrices))
        spectra = [_off_consensus_range(M, dense) for M, dense in zip(given, matrices, strict=True)]
        exact: list[np.ndarray | None] = list(matrices)
        given_matrix = True
    else:
        if _is_pair(spectrum):
            spectra = [_check_spectrum(spectrum)] * (rounds if time_varying else 1)
        else:
            spectra = [_check_spectrum(p, f"spectrum[{t}]") for t, p in enumerate(spectrum)]
            if len(spectra) != rounds:
                raise ValueError(f"spectrum must hold one (lam_min, lam_max) per gossip round ({rounds} for "
                                 f"{spec.name} at K = {K}) or be one pair; got {len(spectra)}")
            time_varying = True
        N = 2 if N is None else N
        if isinstance(N, bool) or not isinstance(N, numbers.Integral) or N < 2:
            raise ValueError(f"N must be an integer >= 2 for the spectral class; got N={N!r}")
        N = check_size(K, int(N))
        exact = _round_matrices(spectra, N)
        given_matrix = False
    lam = max(max(abs(lo), abs(hi)) for lo, hi in spectra)
    if function_class == "nonconvex" and criterion in ("gradient", "worker_gradient"):
        _refuse_a_method_that_never_decreases(spec, K, L, steps, lam, params, batch)
    return _Setup(spec=spec, K=K, L=L, mu=mu, steps=steps, function_class=function_class, criterion=criterion,
                  initial=initial, heterogeneity=heterogeneity, starts=starts, Delta=Delta, radius=radius,
                  varsigma=varsigma, N=N, lam=lam, exact=tuple(exact), spectra=tuple(spectra),
                  time_varying=bool(time_varying), given_matrix=given_matrix, solver=solver,
                  solver_options=solver_options, params=params, batch=batch)


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
    """The worst case of ``K`` iterations of ``method`` over a function class and a gossip class (module
    docstring; docs/worst_case.md).

    Parameters
    ----------
    method : str, type or pep.methods.MethodSpec
        One of ``pep.methods.METHODS`` or an alias: dgd_cta (dgd, dpsgd), dgd_atc, dsgt (diging),
        gt_dsgd (K updates of 2 rounds), d2, extra, exact_diffusion (ed), detag (K phases of R rounds;
        params ``R`` (2), ``eta`` (accelerated-gossip eta from lam), ``gossip``, ``start``, ``beta``),
        centralized (sgd), local_sgd (fedavg; ``H``); or a StepRule subclass, whose own ``init``/``step``
        is compiled into the SDP (``algorithms.compiled``; docs/worst_case.md, "Your own rule"); or a
        ``MethodSpec`` (a result's ``spec``).
    K : int
        Iterations (phases for detag), >= 1.
    L : float
        Smoothness of every f_i.
    step_size : float, sequence of K floats or callable, optional
        The step alpha (default 1/L), one step per iteration, or ``k -> alpha_k`` (e.g. a diminishing
        ``lambda k: 1 / math.sqrt(k + 1)``).
    W : instances.GossipLike or sequence of matrices, optional
        The exact class: the gossip value W that ``algorithms.run`` takes. A ``GossipMatrix`` (its spectrum
        is read, not computed again) or a symmetric matrix with W 1 = 1 (made one by ``instances.as_gossip``;
        unlike ``run``, W need not be connected or non-negative), a graph (its Metropolis W), or
        time-varying: a ``GossipSchedule`` (its first rounds) or one matrix per gossip round. Give exactly
        one of `W` and `spectrum`.
    spectrum : (float, float) or sequence of pairs, optional
        ``(lam_min, lam_max)``: every symmetric W with W 1 = 1 whose spectrum off consensus lies in that
        interval, on `N` agents; one pair per gossip round (``MethodSpec.rounds``) is a time-varying class.
        A point spectrum (lam, lam) is the single matrix J + lam (I - J) and is solved in the exact form.
    N : int, optional
        Agents of the spectral class (default 2; the value was measured independent of N, see tests); with
        `W`, it must equal W's size.
    time_varying : bool
        With one spectral pair: every sequence W_0, W_1, ... of matrices of that class (one LMI per round)
        instead of one W for every round.
    function_class : {"nonconvex", "convex", "strongly_convex"}
        The class of every f_i (L-smooth; ``mu`` > 0 the strong convexity of "strongly_convex").
    mu : float
        Strong convexity, 0 < mu < L, for "strongly_convex" only.
    criterion : {"gradient", "worker_gradient", "function_value", "distance", "consensus"}
        min_k ||grad f(x-bar^k)||^2; min_k ||grad f(x_w^k)||^2 at the worst worker w (every worker for an
        exact W, worker 0 for the spectral class, whose agents are exchangeable; or `worker`);
        f(x-bar^K) - f*; ||x-bar^K - x*||^2; (1/N) sum_i ||x_i^K - x-bar^K||^2.
    initial : {"function_value", "distance"}
        f(x0) - f* <= Delta (non-convex: f(x0) - f(x-bar^K) <= Delta) or ||x0 - x*|| <= radius.
    heterogeneity : {"averages", "optimum"}
        Where the dissimilarity bound varsigma^2 holds: at every average x-bar^k, or at x*.
    starts : {"equal", "unequal"}
        A common x0, or one x_i^0 per agent (with initial "distance": their mean squared distance to x*).
    Delta, radius, varsigma : float
        The bounds of the initial condition and of the heterogeneity.
    worker : int, optional
        With criterion "worker_gradient", the one worker to measure.
    solver : {"CLARABEL", "SCS"}
        The cvxpy solver.
    solver_options : mapping, optional
        Override ``CLARABEL_DEFAULTS`` / ``SCS_DEFAULTS``.
    symmetry : bool
        With N = 2, solve over swap-invariant Gram matrices first (two PSD blocks of half the side; the
        same value, since swapping the agents maps the SDP onto itself), and over the full Gram matrix
        when that solve is not "optimal". Likewise with an exact circulant W (every round) on N >= 3
        agents: over Gram matrices invariant under the cyclic shift of the agents, about N/2 + 1 blocks
        of side about 2K (one per Fourier frequency), so the time grows about linearly in N instead of as
        N^4.3; and criterion "worker_gradient" measures worker 0 only (every worker is worker 0 shifted).
        False: the full Gram matrix only (and every worker).
    progress : callable, optional
        Called with one line (the SDP's size, its estimated memory and CPU seconds) before each solve
        estimated to take 5 s of CPU or more.
    batch : int, default 1
        The queries per worker one engine iteration may make, as ``algorithms.run``'s ``batch`` (the
        gradients are exact either way): a step with more queries, or with two communication rounds, is
        refused (``algorithms.BudgetViolationError``) as the engine refuses it.
    **params
        The method's own parameters: its step rule's structural and batchable hyper-parameters (detag:
        ``R``, ``eta``, ...; ``momentum`` for the rules that have heavy ball).

    Returns
    -------
    WorstCase
        The value of the criterion, the solver's status and gap, and the worst-case iterates, gradients and
        function values recovered from the Gram matrix.

    Raises
    ------
    TypeError, ValueError
        Naming the field, for bad input; ``algorithms.compiled.NotLinearError`` (a ValueError) naming the
        operation and the line of a rule that is not linear in its gradients and gossip outputs.
        Also when the SDP would need more than ``MAX_SDP_BYTES`` (naming K and N, before allocating it).
    RuntimeError
        Naming method, solver and status, when the solver fails or its answer fails the numpy checks.

    Examples
    --------
    >>> r = worst_case("dsgt", K=3, L=1.0, step_size=1.0, spectrum=(0.5, 0.5))
    >>> round(r.value, 4)
    1.2894
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
    """The worst W back from a spectral-class worst case: a symmetric W with W 1 = 1 on ``result.N`` agents
    whose spectrum off consensus lies in the class, chosen among (a) the least-squares fit of the recovered
    gossip rounds, min_W sum_c ||W X_c - Y_c||^2 over the class (an SDP, cvxpy with Clarabel), and (b) the
    class's two extreme matrices J + lam (I - J), lam = lam_min, lam_max; each is solved exactly (the same
    problem with ``W=``) and the best is returned. Its value is a lower bound on the class's worst case and
    the relaxation's an upper bound: ``result.value - worst_gossip_matrix(result).value`` is what the
    relaxation may overstate (0 when it is attained).

    Parameters
    ----------
    result : WorstCase
        A static spectral-class worst case.

    Returns
    -------
    WorstCase
        The exact-W solve of the best candidate (``W`` holds the matrix).

    Raises
    ------
    TypeError
        For what is not a WorstCase.
    ValueError
        For an exact-W or time-varying result.

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
