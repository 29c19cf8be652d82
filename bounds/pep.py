"""Computed worst cases: decentralized performance estimation (PEP) as a semidefinite program on cvxpy.

``worst_case(method, K, L, step_size, W=... | spectrum=(lam_min, lam_max))`` computes the largest value of

    min_{k <= K} ||grad f(x-bar^k)||^2      (or, ``measure="worker"``, min_k ||grad f(x_w^k)||^2)

over every instance of the class (Drori & Teboulle 2014; Taylor, Hendrickx & Glineur 2017; decentralized:
Colla & Hendrickx, IEEE TAC 2023):

- N agents, each f_i L-smooth and possibly non-convex, f = (1/N) sum_i f_i, a common start x0;
- the initial condition f(x0) - f(x-bar^K) <= Delta (as PEPit's non-convex gradient-descent example);
- bounded dissimilarity at the points where the measure is taken, the paper's assumption (5) there:
  (1/N) sum_i ||grad f_i(x-bar^k) - grad f(x-bar^k)||^2 <= varsigma^2. Without it the problem is unbounded as
  soon as W is not exact averaging (the f_i can pull the agents apart at no cost to f); with varsigma = 0
  every method and every W is gradient descent on f;
- a gossip class: one given symmetric W with W 1 = 1 (exact), or every symmetric W with W 1 = 1 whose
  eigenvalues off the consensus direction lie in [lam_min, lam_max] (the spectral relaxation of Colla &
  Hendrickx: necessary conditions on the Gram matrix, so its value is an upper bound on that class).

The SDP is over the Gram matrix G of the basis vectors (x0 = 0, without loss: only differences of points
enter), every queried gradient, and (spectral class) the
disagreement part of every gossip output; function values are scalar variables. The method's iterates are
linear in the basis, so the method descriptions of ``bounds.pep_methods`` run directly on coefficient rows.
Interpolation for L-smooth functions (Taylor et al. 2017), for every ordered pair (a, b) of agent i's points:

    f_a >= f_b + <g_a + g_b, x_a - x_b>/2 - (L/4) ||x_a - x_b||^2 + ||g_a - g_b||^2 / (4L).

Spectral class, for the m gossip rounds (columns) with centred inputs X~_i and outputs Y~_i per agent,
A = sum_i X~_i^T X~_i, B = sum_i X~_i^T Y~_i, C = sum_i Y~_i^T Y~_i (m x m, linear in G):

    B = B^T,   (lam_min + lam_max) B - lam_min lam_max A - C >= 0 (PSD),

which, with G PSD, also gives lam_max A - B >= 0 and B - lam_min A >= 0 (all three are checked after the
solve). One W serves every round (a fixed W, not a time-varying one).

The result is checked with numpy after the solve: G PSD within tolerance, every constraint within
tolerance, and the duality gap from the dual variables of the two inhomogeneous constraints
(Delta and varsigma^2: every other constraint is homogeneous, so the dual objective is
Delta * y_Delta + varsigma^2 * sum_k y_k). A solver failure raises, never returns a number.

>>> import numpy as np
>>> result = worst_case("dgd_atc", K=5, L=1.0, step_size=1.0, W=np.full((2, 2), 0.5))
>>> round(result.value, 5)      # gradient descent: 4L/(3K) at step 1/L (PEPit's example)
0.26667
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import time
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from decbounds.bounds.pep_methods import METHODS, MethodSpec, method_spec

__all__ = [
    "CHECK_TOLERANCE",
    "CLARABEL_DEFAULTS",
    "GAP_TOLERANCE",
    "MEASURES",
    "SCS_DEFAULTS",
    "SOLVERS",
    "WorstCase",
    "worst_case",
]

SOLVERS = ("CLARABEL", "SCS")
MEASURES = ("average", "worker")

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
    method, K, L, step_size, Delta, varsigma
        The problem (``method`` is the canonical name).
    gossip : {"exact", "spectral"}
        A given W, or the class [lam_min, lam_max].
    spectrum : (float, float)
        The range (for an exact W, its own eigenvalues off the consensus direction).
    N : int
        The agents.
    params : dict
        The method's extra parameters (DeTAG: R, eta).
    measure, worker
        What was measured ("average" or "worker", and which worker).
    value : float
        The worst case of the measure (the SDP's primal value t).
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
        gram (side of G), values (function values), scalar_constraints, lmi (side of the spectral LMI, 0 for
        exact W), gossip_columns, oracle_points, blocks (the PSD blocks' sides: (gram,), or the two swap
        blocks of N = 2).
    iterates : numpy.ndarray
        (K+1, N, d) recovered worst-case iterates; ``average_gradients`` (K+1, d) grad f(x-bar^k);
        ``points``, ``gradients``, ``values``: per agent, every point where f_i was evaluated, with its
        gradient and value (the interpolation data: a worst-case f_i exists through them);
        ``gossip_inputs``, ``gossip_outputs``: (m, N, d) every gossip round (spectral class), in order.
    W : numpy.ndarray or None
        The gossip matrix (exact class) or None.
    """

    method: str
    K: int
    L: float
    step_size: float
    Delta: float
    varsigma: float
    gossip: str
    spectrum: tuple[float, float]
    N: int
    params: dict[str, Any]
    measure: str
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
    sdp_size: dict[str, int]
    iterates: np.ndarray
    average_gradients: np.ndarray
    points: list[np.ndarray]
    gradients: list[np.ndarray]
    values: list[np.ndarray]
    gossip_inputs: np.ndarray
    gossip_outputs: np.ndarray
    W: np.ndarray | None

    def __repr__(self) -> str:
        lo, hi = self.spectrum
        return (f"WorstCase(method={self.method!r}, K={self.K}, value={self.value:.6g}, "
                f"gossip={self.gossip!r} [{lo:.4g}, {hi:.4g}], N={self.N}, solver={self.solver!r}, "
                f"status={self.status!r}, "
                f"gap={self.gap:.1e}, max_violation={max(self.violations.values(), default=0.0):.1e}, "
                f"solve_seconds={self.solve_seconds:.2f}, gram={self.sdp_size['gram']})")

    def replay(self) -> list[np.ndarray]:
        """Run the method description again on plain numpy arrays, with the recovered gradients as the oracle
        (looked up by point) and the recovered gossip (W, or the recorded rounds); returns the K+1 iterates.
        They equal ``iterates`` when the worst case is consistent with the method's update equations."""
        from decbounds.bounds.pep_methods import NumpyOps

        spec = METHODS[self.method]
        table = [(np.asarray(p), np.asarray(g)) for p, g in zip(self.points, self.gradients, strict=True)]
        scale = max(1.0, float(np.max(np.abs(self.iterates))))

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

        ops = NumpyOps(np.eye(self.N) if self.W is None else self.W, grad, lam=max(map(abs, self.spectrum)))
        if self.W is None:
            inputs, outputs = self.gossip_inputs, self.gossip_outputs

            def gossip(X: np.ndarray) -> np.ndarray:
                if np.allclose(X, X.mean(axis=0), rtol=0, atol=1e-9 * scale):
                    return X  # consensus is a fixed point of every W with W 1 = 1
                dist = np.array([np.linalg.norm(Xin - X) for Xin in inputs])
                j = int(np.argmin(dist))
                if dist[j] > 1e-5 * scale:
                    raise RuntimeError(f"replay of {self.method}: a gossip input at distance "
                                       f"{dist[j]:.2e} from every recorded round")
                return outputs[j]

            ops.gossip = gossip  # type: ignore[method-assign]
        x0 = np.repeat(self.iterates[0][:1], self.N, axis=0)
        return spec.run(ops, x0, self.K, self.step_size, **self.params)


def _positive(name: str, value: Any, *, allow_zero: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number; got {value!r}")
    value = float(value)
    if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"{name} must be {'>= 0' if allow_zero else '> 0'} and finite; got {name}={value!r}")
    return value


def _check_W(W: Any) -> np.ndarray:
    try:
        W = np.asarray(W.toarray() if hasattr(W, "toarray") else W, dtype=float)
    except (TypeError, ValueError) as err:
        raise TypeError(f"W must be a square real matrix; got {type(W).__name__}") from err
    if W.ndim != 2 or W.shape[0] != W.shape[1] or W.shape[0] < 1:
        raise ValueError(f"W must be a square matrix; got shape {W.shape}")
    if not np.all(np.isfinite(W)):
        raise ValueError("W must be finite")
    if not np.allclose(W, W.T, rtol=0, atol=1e-10):
        raise ValueError("W must be symmetric (the gossip class of the paper, docs/theory.md §1)")
    if not np.allclose(W.sum(axis=1), 1.0, rtol=0, atol=1e-10):
        raise ValueError("W must have rows summing to 1 (W 1 = 1)")
    return 0.5 * (W + W.T)


def _check_spectrum(spectrum: Any) -> tuple[float, float]:
    try:
        lo, hi = (float(v) for v in spectrum)
    except (TypeError, ValueError) as err:
        raise TypeError("spectrum must be a pair (lam_min, lam_max) of reals; "
                        f"got spectrum={spectrum!r}") from err
    if not (math.isfinite(lo) and math.isfinite(hi)) or not -1.0 <= lo <= hi <= 1.0:
        raise ValueError(f"spectrum must satisfy -1 <= lam_min <= lam_max <= 1; got spectrum={spectrum!r}")
    return lo, hi


class _GramBuilder:
    """The ``ops`` of the method descriptions on coefficient rows over the Gram basis; records every oracle
    point (merging identical ones per agent: with W = 11^T/N the agents' iterates coincide with x-bar and a
    duplicate point would make the SDP degenerate) and every gossip round of the spectral class."""

    def __init__(self, N: int, capacity: int, W: np.ndarray | None, lam: float):
        self.N, self.capacity, self.W, self.lam = N, capacity, W, lam
        # x0 = 0: every constraint involves only differences of points, so x0 would be a basis vector that
        # no constraint touches (a free direction of G, which only slows the solver down)
        self.size = 0
        self.n_values = 0
        self.points: list[list[tuple[np.ndarray, int, int]]] = [[] for _ in range(N)]  # (coeffs, grad, value)
        self.columns: list[tuple[np.ndarray, np.ndarray]] = []
        # N = 2: the agent swap maps agent 0's new gradient to agent 1's (pairs) and a gossip output's
        # disagreement vector d to -d (odd); see `_swap_blocks`
        self.pairs: list[tuple[int, int]] = []
        self.odd: list[int] = []
        self.paired = N == 2

    def _new(self) -> int:
        if self.size >= self.capacity:
            raise _CapacityError
        self.size += 1
        return self.size - 1

    def unit(self, index: int) -> np.ndarray:
        row = np.zeros(self.capacity)
        row[index] = 1.0
        return row

    def oracle(self, agent: int, x: np.ndarray) -> tuple[int, int]:
        for coeffs, g, f in self.points[agent]:
            if np.allclose(coeffs, x, rtol=0, atol=1e-12):
                return g, f
        g, f = self._new(), self.n_values
        self.n_values += 1
        self.points[agent].append((x.copy(), g, f))
        return g, f

    def grad(self, X: np.ndarray) -> np.ndarray:
        rows, new = [], []
        for i in range(self.N):
            before = self.size
            g = self.oracle(i, X[i])[0]
            rows.append(self.unit(g))
            new.append(g if self.size > before else None)
        if self.N == 2:
            if new[0] is not None and new[1] is not None:
                self.pairs.append((new[0], new[1]))
            elif (new[0] is None) != (new[1] is None):
                self.paired = False
        return np.array(rows)

    def swap_blocks(self, nb: int) -> tuple[np.ndarray, np.ndarray] | None:
        """For N = 2: orthonormal bases U (swap-even) and V (swap-odd) of the Gram basis, or None when the
        recorded data are not swap-symmetric. Swapping the two agents maps the SDP onto itself (every
        constraint family is a sum or a pair over agents; a gossip output m + d, m - d goes to m - d, m + d),
        so some optimal G is swap-invariant, i.e. G = U G_u U^T + V G_v V^T: two PSD blocks of half the
        side instead of one (the interior-point solver's dense block shrinks about 8x each)."""
        if not self.paired or self.N != 2:
            return None
        S = np.zeros((nb, nb))
        for a, b in self.pairs:
            S[a, b] = S[b, a] = 1.0
        for d in self.odd:
            S[d, d] = -1.0
        if not np.allclose(np.abs(S).sum(axis=0), 1.0):
            return None  # a basis vector outside the pairing
        zero, one = self.points
        if len(zero) != len(one) or any(not np.allclose(S @ c0[:nb], c1[:nb], rtol=0, atol=1e-10)
                                         for (c0, _, _), (c1, _, _) in zip(zero, one, strict=True)):
            return None
        for X, Y in self.columns:
            if not (np.allclose(X[1, :nb], S @ X[0, :nb], atol=1e-10)
                    and np.allclose(Y[1, :nb], S @ Y[0, :nb], atol=1e-10)):
                return None
        r = 1.0 / np.sqrt(2.0)
        U = np.zeros((nb, len(self.pairs)))
        V = np.zeros((nb, len(self.pairs) + len(self.odd)))
        for j, (a, b) in enumerate(self.pairs):
            U[a, j], U[b, j] = r, r
            V[a, j], V[b, j] = r, -r
        for j, d in enumerate(self.odd):
            V[d, len(self.pairs) + j] = 1.0
        return U, V

    def gossip(self, X: np.ndarray) -> np.ndarray:
        if self.W is not None:
            return self.W @ X
        mean = X.mean(axis=0)
        if np.allclose(X, mean, rtol=0, atol=1e-12):
            return X.copy()  # consensus is a fixed point of every W with W 1 = 1
        deviations = [self.unit(self._new()) for _ in range(self.N - 1)]
        if self.N == 2:
            self.odd.append(self.size - 1)
        deviations.append(-np.sum(deviations, axis=0))  # outputs keep the input's average
        Y = mean + np.array(deviations)
        self.columns.append((X.copy(), Y))
        return Y


class _CapacityError(Exception):
    pass


def _quadratic_rows(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Rows vec(sym(l r^T)) for paired rows of ``left`` and ``right``: <l, r> = row @ vec(G)."""
    outer = left[:, :, None] * right[:, None, :]
    return (0.5 * (outer + outer.transpose(0, 2, 1))).reshape(len(left), -1)


def worst_case(method: str, K: int, L: float = 1.0, step_size: float | None = None, *,
               W: Any = None, spectrum: Sequence[float] | None = None, N: int | None = None,
               Delta: float = 1.0, varsigma: float = 1.0, measure: str = "average", worker: int | None = None,
               solver: str = "CLARABEL", solver_options: Mapping[str, Any] | None = None,
               symmetry: bool = True, **params: Any) -> WorstCase:
    """The worst case of ``K`` iterations of ``method`` over L-smooth non-convex f_i (module docstring).

    Parameters
    ----------
    method : str
        One of ``bounds.pep_methods.METHODS`` or an alias: dgd_cta (dgd, dpsgd), dgd_atc, dsgt (diging),
        extra, detag (K phases of R rounds; params ``R`` (2), ``eta`` (accelerated-gossip eta from lam)).
    K : int
        Iterations (phases for detag), >= 1.
    L : float
        Smoothness of every f_i.
    step_size : float, optional
        The step alpha (default 1/L).
    W : array_like, optional
        A symmetric matrix with W 1 = 1 (the exact class). Give exactly one of `W` and `spectrum`.
    spectrum : (float, float), optional
        ``(lam_min, lam_max)``: every symmetric W with W 1 = 1 whose spectrum off consensus lies in that
        interval, on `N` agents. A point spectrum (lam, lam) is the single matrix J + lam (I - J) and is
        solved in the exact form.
    N : int, optional
        Agents of the spectral class (default 2; the value was measured independent of N, see tests); with
        `W`, it must equal W's size.
    Delta : float
        Bound on f(x0) - f(x-bar^K).
    varsigma : float
        Dissimilarity bound at the averages (varsigma^2 on the mean squared deviation of the local
        gradients).
    measure : {"average", "worker"}
        "average": grad f at x-bar^k; "worker": grad f at worker w's own model x_w^k, the worst w (every
        worker for an exact W, worker 0 for the spectral class, whose agents are exchangeable).
    worker : int, optional
        With ``measure="worker"``, the one worker to measure.
    solver : {"CLARABEL", "SCS"}
        The cvxpy solver.
    solver_options : mapping, optional
        Override ``CLARABEL_DEFAULTS`` / ``SCS_DEFAULTS``.
    symmetry : bool
        With N = 2, solve over swap-invariant Gram matrices first (two PSD blocks of half the side; the
        same value, since swapping the agents maps the SDP onto itself), and over the full Gram matrix
        when that solve is not "optimal". False: the full Gram matrix only.
    **params
        The method's own parameters (detag: ``R``, ``eta``).

    Returns
    -------
    WorstCase
        The value min_k ||grad f||^2 (squared convention), the solver's status and gap, and the worst-case
        iterates, gradients and function values recovered from the Gram matrix.

    Raises
    ------
    TypeError, ValueError
        Naming the field, for bad input.
    RuntimeError
        Naming method, solver and status, when the solver fails or its answer fails the numpy checks.

    Examples
    --------
    >>> r = worst_case("dsgt", K=3, L=1.0, step_size=1.0, spectrum=(0.5, 0.5))
    >>> round(r.value, 4)
        1.2894
    """
    spec = method_spec(method)
    if isinstance(K, bool) or not isinstance(K, numbers.Integral) or K < 1:
        raise ValueError(f"K must be an integer >= 1; got K={K!r}")
    K = int(K)
    L = _positive("L", L)
    step_size = 1.0 / L if step_size is None else _positive("step_size", step_size)
    Delta = _positive("Delta", Delta)
    varsigma = _positive("varsigma", varsigma, allow_zero=True)
    if measure not in MEASURES:
        raise ValueError(f"measure must be one of {MEASURES}; got measure={measure!r}")
    if not isinstance(solver, str) or solver.upper() not in SOLVERS:
        raise ValueError(f"solver must be one of {SOLVERS}; got solver={solver!r}")
    solver = solver.upper()
    unknown = set(params) - set(spec.params)
    if unknown:
        raise TypeError(f"method {spec.name!r} takes no parameter(s) {sorted(unknown)}; it takes "
                        f"{sorted(spec.params) or 'none'}")
    params = {**spec.params, **params}
    if "R" in params and (isinstance(params["R"], bool) or not isinstance(params["R"], numbers.Integral)
                          or params["R"] < 1):
        raise ValueError(f"R must be an integer >= 1; got R={params['R']!r}")
    if (W is None) == (spectrum is None):
        raise ValueError("give exactly one of W (exact gossip matrix) and spectrum=(lam_min, lam_max)")
    if W is not None:
        W = _check_W(W)
        if N is not None and N != W.shape[0]:
            raise ValueError(f"N must equal W's size {W.shape[0]}; got N={N!r}")
        N = W.shape[0]
        off = np.linalg.eigvalsh(W - np.full((N, N), 1.0 / N))
        # W's eigenvalues off the consensus direction: those of W - J except the 0 that replaced the 1
        off = np.delete(off, int(np.argmin(np.abs(off - 0.0)))) if N > 1 else np.zeros(0)
        spectrum_pair = (float(off.min()), float(off.max())) if off.size else (0.0, 0.0)
        lam = float(np.max(np.abs(off))) if off.size else 0.0
    else:
        spectrum_pair = _check_spectrum(spectrum)
        N = 2 if N is None else N
        if isinstance(N, bool) or not isinstance(N, numbers.Integral) or N < 2:
            raise ValueError(f"N must be an integer >= 2 for the spectral class; got N={N!r}")
        N = int(N)
        lam = max(abs(spectrum_pair[0]), abs(spectrum_pair[1]))
        if spectrum_pair[0] == spectrum_pair[1]:
            # a point spectrum is one matrix, J + lam (I - J): solved in the exact form (the relaxation's LMI
            # would force every disagreement output onto a face of the cone, an ill-posed SDP)
            J = np.full((N, N), 1.0 / N)
            W = J + spectrum_pair[0] * (np.eye(N) - J)
    if lam >= 1.0 and spec.name == "detag" and params.get("eta") is None:
        raise ValueError("detag needs lam = max |eigenvalue off consensus| < 1 to choose eta; give eta")
    if measure == "worker":
        if worker is not None and not (isinstance(worker, numbers.Integral) and 0 <= worker < N):
            raise ValueError(f"worker must be an agent index in [0, {N}); got worker={worker!r}")
        workers = [int(worker)] if worker is not None else ([0] if W is None else list(range(N)))
        results = [_solve_one(spec, K, L, step_size, W, spectrum_pair, N, lam, Delta, varsigma, measure, w,
                              solver, solver_options, params, symmetry and False) for w in workers]
        return max(results, key=lambda r: r.value)
    args = (spec, K, L, step_size, W, spectrum_pair, N, lam, Delta, varsigma, measure, None, solver,
            solver_options, params)
    if symmetry and N == 2:
        # the two-block form is faster, but where the class forces a block onto the boundary (varsigma = 0,
        # exact averaging) the solver may end "optimal_inaccurate" a few 1e-4 off: then solve the full form
        try:
            result = _solve_one(*args, True)
            if result.status == "optimal":
                return result
        except RuntimeError:
            pass
    return _solve_one(*args, False)


def _build(spec: MethodSpec, K: int, step_size: float, W: np.ndarray | None, N: int, lam: float,
           measure: str, worker: int | None, params: dict[str, Any]) -> tuple[_GramBuilder, list[np.ndarray],
                                                                         list[np.ndarray], list[np.ndarray]]:
    capacity = 64
    while True:
        builder = _GramBuilder(N, capacity, W, lam)
        try:
            x0 = np.zeros((N, capacity))
            iterates = spec.run(builder, x0, K, step_size, **params)
            if len(iterates) != K + 1:
                raise RuntimeError(f"method {spec.name} returned {len(iterates)} iterates; expected K+1")
            averages = [X.mean(axis=0) for X in iterates]
            # every f_i at every x-bar^k: the dissimilarity bound and (measure "average") the measure
            avg_grads = [builder.grad(np.repeat(xbar[None, :], N, axis=0)) for xbar in averages]
            measured = (avg_grads if measure == "average" else
                        [builder.grad(np.repeat(X[worker][None, :], N, axis=0)) for X in iterates])
            return builder, iterates, avg_grads, measured
        except _CapacityError:
            capacity *= 2


def _solve_one(spec: MethodSpec, K: int, L: float, step_size: float, W: np.ndarray | None,
               spectrum: tuple[float, float], N: int, lam: float, Delta: float, varsigma: float, measure: str,
               worker: int | None, solver: str, solver_options: Mapping[str, Any] | None,
               params: dict[str, Any], symmetry: bool) -> WorstCase:
    import cvxpy as cp  # lazily: `import bounds` and the CLI stay fast
    import scipy.sparse as sps

    start = time.perf_counter()
    b, iterates, avg_grads, measured = _build(spec, K, step_size, W, N, lam, measure, worker, params)
    nb = b.size
    iterates = [X[:, :nb] for X in iterates]
    avg_grads = [G_[:, :nb] for G_ in avg_grads]
    measured = [G_[:, :nb] for G_ in measured]

    blocks = b.swap_blocks(nb) if symmetry else None
    # interpolation: every ordered pair of each agent's points (all of them are checked after the solve)
    rows, value_rows = [], []
    for i in range(N):
        pts = b.points[i]
        P = len(pts)
        if P < 2:
            continue
        xs = np.array([c[:nb] for c, _, _ in pts])
        gs = np.array([b.unit(g)[:nb] for _, g, _ in pts])
        fs = np.array([f for _, _, f in pts])
        a_idx, b_idx = np.nonzero(~np.eye(P, dtype=bool))
        dx, dg, sg = xs[a_idx] - xs[b_idx], gs[a_idx] - gs[b_idx], gs[a_idx] + gs[b_idx]
        quad = (-0.5 * _quadratic_rows(sg, dx) + (L / 4) * _quadratic_rows(dx, dx)
                - (1 / (4 * L)) * _quadratic_rows(dg, dg))
        rows.append(sps.csr_array(quad))
        vr = sps.coo_array((np.r_[np.ones(len(a_idx)), -np.ones(len(a_idx))],
                            (np.r_[np.arange(len(a_idx)), np.arange(len(a_idx))],
                             np.r_[fs[a_idx], fs[b_idx]])), shape=(len(a_idx), b.n_values))
        value_rows.append(vr.tocsr())
    interp_G = sps.vstack(rows).tocsr() if rows else sps.csr_array((0, nb * nb))
    interp_F = sps.vstack(value_rows).tocsr() if rows else sps.csr_array((0, b.n_values))

    # performance measure rows: ||grad f(point_k)||^2, grad f = mean over agents
    mean_g = np.array([Gk.mean(axis=0) for Gk in measured])
    measure_rows = _quadratic_rows(mean_g, mean_g)
    # dissimilarity rows: (1/N) sum_i ||g_i(x-bar^k) - g-bar||^2
    het_rows = np.array([sum(_quadratic_rows(d[None, :], d[None, :])[0] for d in (Gk - Gk.mean(axis=0))) / N
                         for Gk in avg_grads])
    # initial condition: (1/N) sum_i f_i(x0) - f_i(x-bar^K) <= Delta
    init_row = np.zeros(b.n_values)
    xbarK = iterates[-1].mean(axis=0)
    for i in range(N):
        init_row[b.oracle(i, np.zeros(b.capacity))[1]] += 1.0 / N
        init_row[b.oracle(i, np.pad(xbarK, (0, b.capacity - nb)))[1]] -= 1.0 / N
    # (the two look-ups above find existing points; they add no variable)

    # spectral LMI coefficients
    m = len(b.columns)
    if W is None and m:
        Xin = np.array([X[:, :nb] - X[:, :nb].mean(axis=0) for X, _ in b.columns])  # (m, N, nb)
        Yout = np.array([Y[:, :nb] - Y[:, :nb].mean(axis=0) for _, Y in b.columns])

        def gram_sum(U: np.ndarray, V: np.ndarray) -> np.ndarray:
            t = np.einsum("cip,diq->cdpq", U, V)
            return (0.5 * (t + t.transpose(0, 1, 3, 2))).reshape(m * m, nb * nb)

        A_c, B_c, C_c = gram_sum(Xin, Xin), gram_sum(Xin, Yout), gram_sum(Yout, Yout)
    build_seconds = time.perf_counter() - start

    if blocks is None:
        G = cp.Variable((nb, nb), PSD=True)
        g = cp.vec(G, order="F")
    else:
        U, V = blocks
        G_even = cp.Variable((U.shape[1], U.shape[1]), PSD=True)
        G_odd = cp.Variable((V.shape[1], V.shape[1]), PSD=True)
        g = cp.vec(U @ G_even @ U.T + V @ G_odd @ V.T, order="F")
    if blocks is None:
        F = cp.Variable(b.n_values)
        F_expr = F
    else:
        # F = P F_0: agent 1's value at its j-th point is agent 0's at its j-th (the swap pairs them in order)
        P = np.zeros((b.n_values, len(b.points[0])))
        for j, ((_, _, f0), (_, _, f1)) in enumerate(zip(*b.points, strict=True)):
            P[f0, j] = P[f1, j] = 1.0
        F = cp.Variable(P.shape[1])
        F_expr = P @ F
    t = cp.Variable()
    init_con = init_row @ F_expr <= Delta
    het_con = het_rows @ g <= varsigma**2
    constraints = [t <= measure_rows @ g, init_con, het_con]
    # in the two-block form agent 1's interpolation rows are agent 0's under the swap (its function values
    # too, F_1 = F_0 point by point), so only agent 0's enter the SDP: keeping both would leave the solver a
    # non-unique optimal face (F_0 - F_1 free along it), on which Clarabel stalls at "optimal_inaccurate"
    n_sdp_rows = rows[0].shape[0] if blocks is not None and rows else interp_G.shape[0]
    if n_sdp_rows:
        constraints.append(interp_G[:n_sdp_rows] @ g + interp_F[:n_sdp_rows] @ F_expr >= 0)
    lo, hi = spectrum
    if W is None and m:
        A_e, B_e, C_e = (cp.reshape(M @ g, (m, m), order="C") for M in (A_c, B_c, C_c))
        S = (lo + hi) * B_e - lo * hi * A_e - C_e
        iu, ju = np.triu_indices(m, 1)  # B = B^T on the strict upper triangle only: the diagonal and the
        # lower triangle would add zero and repeated rows, a singular KKT system for the interior-point solver
        skew = B_c[iu * m + ju] - B_c[ju * m + iu]
        if len(iu):
            constraints.append(skew @ g == 0)
        constraints.append(0.5 * (S + S.T) >> 0)
    problem = cp.Problem(cp.Maximize(t), constraints)
    options = dict(CLARABEL_DEFAULTS if solver == "CLARABEL" else SCS_DEFAULTS)
    options.update(solver_options or {})
    t0 = time.perf_counter()
    where = f"worst_case({spec.name!r}, K={K}, gossip={'exact' if W is not None else 'spectral'})"
    try:
        with warnings.catch_warnings():  # an inaccurate solve is reported through status and the checks below
            warnings.simplefilter("ignore", UserWarning)
            problem.solve(solver=solver, **options)
    except cp.error.SolverError as err:
        raise RuntimeError(f"{where}: solver {solver} failed: {err}") from err
    solve_seconds = time.perf_counter() - t0
    status = problem.status
    if status in ("unbounded", "unbounded_inaccurate"):
        raise RuntimeError(f"{where}: solver {solver} reports status {status!r}: the worst case is infinite "
                           "(the method never leaves x0 in K iterations, or the class allows unbounded "
                           "disagreement)")
    if status not in ("optimal", "optimal_inaccurate") or t.value is None or F.value is None:
        raise RuntimeError(f"{where}: solver {solver} returned status {status!r}; no worst case")

    Gv = (np.asarray(G.value) if blocks is None
          else U @ np.asarray(G_even.value) @ U.T + V @ np.asarray(G_odd.value) @ V.T)
    Fv, tv = np.asarray(F.value) if blocks is None else P @ np.asarray(F.value), float(t.value)
    gv = Gv.reshape(-1, order="F")
    scale = max(1.0, float(np.max(np.abs(Gv))), float(np.max(np.abs(Fv), initial=0.0)))
    eig = np.linalg.eigvalsh(0.5 * (Gv + Gv.T))
    violations = {
        "interpolation": float(max(0.0, -np.min(interp_G @ gv + interp_F @ Fv, initial=0.0))),
        "measure": float(max(0.0, tv - np.min(measure_rows @ gv))),
        "initial_condition": float(max(0.0, init_row @ Fv - Delta)),
        "dissimilarity": float(max(0.0, np.max(het_rows @ gv) - varsigma**2)),
        "gram_psd": float(max(0.0, -eig[0])),
    }
    if W is None and m:
        A_v, B_v, C_v = ((M @ gv).reshape(m, m) for M in (A_c, B_c, C_c))
        Bs = 0.5 * (B_v + B_v.T)
        # the LMI's entries are sums over agents and rounds: judge it on their scale too
        scale = max(scale, float(np.max(np.abs(A_v))), float(np.max(np.abs(C_v))))
        violations["spectral_symmetry"] = float(np.max(np.abs(B_v - B_v.T)))
        for name, M in (("spectral_lmi", (lo + hi) * Bs - lo * hi * A_v - C_v),
                        ("spectral_upper", hi * A_v - Bs), ("spectral_lower", Bs - lo * A_v)):
            violations[name] = float(max(0.0, -np.linalg.eigvalsh(0.5 * (M + M.T))[0]))
    tol = CHECK_TOLERANCE[solver] * scale
    # spectral_upper / spectral_lower are implied by the imposed LMI, B = B^T and G PSD: reported, not judged
    # (a G that is PSD only to the tolerance magnifies their violation)
    bad = {k: v for k, v in violations.items() if v > tol and k not in ("spectral_upper", "spectral_lower")}
    if bad:
        raise RuntimeError(f"{where}: solver {solver} (status {status!r}) returned a point violating "
                           f"{', '.join(f'{k} by {v:.1e}' for k, v in bad.items())} (tolerance {tol:.1e}); "
                           "no worst case")
    y_init = float(np.asarray(init_con.dual_value))
    y_het = np.asarray(het_con.dual_value, dtype=float)
    dual_objective = y_init * Delta + float(np.sum(y_het)) * varsigma**2
    gap = abs(dual_objective - tv)
    solver_gap = None
    stats = getattr(problem.solver_stats, "extra_stats", None)
    if stats is not None and hasattr(stats, "obj_val") and hasattr(stats, "obj_val_dual"):
        solver_gap = (float(stats.obj_val), float(stats.obj_val_dual))
    if not math.isfinite(gap) or gap > GAP_TOLERANCE[solver] * max(1.0, abs(tv)):
        raise RuntimeError(f"{where}: solver {solver} (status {status!r}) left a primal-dual gap {gap:.2e} "
                           f"(primal {tv:.6g}, dual {dual_objective:.6g}); no worst case")

    # recover vectors: G = V^T V with V of rank r (eigenvalues above the PSD tolerance)
    w, U = np.linalg.eigh(0.5 * (Gv + Gv.T))
    keep = w > CHECK_TOLERANCE[solver] * scale
    V = (U[:, keep] * np.sqrt(w[keep])).T  # (r, nb)
    vec = lambda C: np.asarray(C) @ V.T  # noqa: E731 - coefficient rows -> points in R^r
    points = [vec(np.array([c[:nb] for c, _, _ in b.points[i]])) for i in range(N)]
    gradients = [vec(np.array([b.unit(g_)[:nb] for _, g_, _ in b.points[i]])) for i in range(N)]
    values = [Fv[[f for _, _, f in b.points[i]]] for i in range(N)]
    gossip_in = np.array([vec(X[:, :nb]) for X, _ in b.columns]) if m else np.zeros((0, N, V.shape[0]))
    gossip_out = np.array([vec(Y[:, :nb]) for _, Y in b.columns]) if m else np.zeros((0, N, V.shape[0]))
    return WorstCase(
        method=spec.name, K=K, L=L, step_size=step_size, Delta=Delta, varsigma=varsigma,
        gossip="exact" if W is not None else "spectral", spectrum=spectrum, N=N, params=params,
        measure=measure, worker=worker, value=tv, solver=solver, status=status, gap=gap,
        solver_gap=solver_gap, violations=violations, min_gram_eigenvalue=float(eig[0]),
        build_seconds=build_seconds, solve_seconds=solve_seconds,
        sdp_size={"gram": nb, "values": b.n_values, "scalar_constraints": interp_G.shape[0] + 2 * (K + 1) + 1,
                  "lmi": m if W is None else 0, "gossip_columns": m,
                  "blocks": (nb,) if blocks is None else (blocks[0].shape[1], blocks[1].shape[1]),
                  "oracle_points": sum(len(p) for p in b.points)},
        iterates=np.array([vec(X) for X in iterates]), average_gradients=vec(np.array(
            [Gk.mean(axis=0) for Gk in avg_grads])),
        points=points, gradients=gradients, values=values, gossip_inputs=gossip_in, gossip_outputs=gossip_out,
        W=W,
    )
