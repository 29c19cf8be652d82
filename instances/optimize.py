"""Optimized gossip matrices: FDLA (Xiao & Boyd 2004) and FMMC (Boyd, Diaconis & Xiao 2004), §12.

Both minimize lam = ||W - 11^T/n||_2 over W = I - A diag(w) A^T (A the n x m incidence matrix, one weight per
edge): the epigraph form min s s.t. -sI <= I - 11^T/n - A diag(w) A^T <= sI (two n x n LMIs). FMMC adds
w >= 0 and diag(W) >= 0 (a non-negative W: a Markov chain); FDLA allows negative weights, so
lam_FDLA <= lam_FMMC.

Solvers: ``"lp"`` (graphs with a translation symmetry: the SDP becomes an LP in the orbit weights, solved by
HiGHS and checked by numpy), ``"CLARABEL"`` / ``"SCS"`` (cvxpy on the two-LMI form), ``"barrier"`` (a
log-barrier Newton method whose Newton system is m x m, the constraints being rank one) and ``"auto"``
("lp" where it applies, CLARABEL for n <= 20, "barrier" for n <= 300, beyond a ValueError). The weights are
projected back onto the exact constraints and lam recomputed by numpy; results are cached on disk. Times:
docs/benchmarks.md.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import os
import time
import warnings
from pathlib import Path

import networkx as nx
import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from decbounds.bounds.validation import require_bool, require_choice, require_graph, require_real
from decbounds.instances import vocabulary
from decbounds.instances.graphs import node_order
from decbounds.instances.matrices import extreme_eigenvalues, from_edge_weights, second_eigenvalue
from threadpoolctl import threadpool_limits

from decbounds.files import atomic_write_bytes

__all__ = [
    "BARRIER_MAX_N",
    "CACHE_ENV",
    "CACHE_VERSION",
    "CVXPY_AUTO_MAX_N",
    "LP_METHOD",
    "LP_VERIFY_TOL",
    "METHODS",
    "SOLVERS",
    "OptimizedGossip",
    "default_cache_dir",
    "optimize_gossip",
]

METHODS: tuple[str, ...] = ("fdla", "fmmc")
SOLVERS: tuple[str, ...] = vocabulary.SOLVERS
CVXPY_AUTO_MAX_N = 20
BARRIER_MAX_N = 300
CACHE_ENV = "DECBOUNDS_CACHE_DIR"
CACHE_VERSION = 1  # bump when the solution format or the projection changes
#: The orbit LP's solver: ``scipy.optimize.linprog(method=LP_METHOD)``, HiGHS's dual simplex (deterministic:
#: the same vertex for the same data).
LP_METHOD = "highs-ds"
#: HiGHS's primal and dual feasibility tolerances on the orbit LP (its defaults are 1e-7).
LP_FEASIBILITY_TOL = 1e-10
#: How far numpy's lam of the returned W may be from the LP's value and from HiGHS's dual bound.
LP_VERIFY_TOL = 1e-9


@dataclasses.dataclass(frozen=True)
class OptimizedGossip:
    """An optimized gossip matrix and how it was obtained.

    Parameters
    ----------
    W : scipy.sparse.csr_array
    lam : float
        max(|lambda_2|, |lambda_n|) of W, computed by numpy (never the solver's own value).
    method : {"fdla", "fmmc"}
    solver : str
        "lp", "barrier", "CLARABEL" or "SCS".
    solve_seconds : float
        Wall time of the solve (of the original solve when ``from_cache``).
    edges : numpy.ndarray, shape (m, 2)
        The edges (u < v), sorted.
    edge_weights : numpy.ndarray, shape (m,)
        w in the order of ``edges``.
    from_cache : bool
    optimality_gap : float or None
        The solver's bound on lam - lam* where it gives one.
    """

    W: sp.csr_array
    lam: float
    method: str
    solver: str
    solve_seconds: float
    edges: np.ndarray
    edge_weights: np.ndarray
    from_cache: bool = False
    optimality_gap: float | None = None


def default_cache_dir() -> Path:
    """``$DECBOUNDS_CACHE_DIR`` if set, else ``~/.cache/decbounds/gossip``."""
    env = os.environ.get(CACHE_ENV)
    return Path(env) if env else Path.home() / ".cache" / "decbounds" / "gossip"


def _edges(G: nx.Graph) -> tuple[int, np.ndarray]:
    if isinstance(G, nx.Graph) and G.is_directed():
        raise TypeError("G must be an undirected networkx.Graph for FDLA/FMMC")
    require_graph("G", G)
    n = node_order(G)
    e = np.array(sorted((min(a, b), max(a, b)) for a, b in G.edges() if a != b),
                 dtype=np.int64).reshape(-1, 2)
    if n > 1 and not nx.is_connected(G):
        # the same message as gossip_matrix's (the components named); FDLA/FMMC would give lam = 1
        require_graph("G", G, connected=True)
    return n, e


def _cache_key(method: str, n: int, edges: np.ndarray) -> str:
    digest = hashlib.sha256()
    digest.update(f"v{CACHE_VERSION}|{method}|{n}|".encode())
    digest.update(np.ascontiguousarray(edges, dtype="<i8").tobytes())
    return f"{method}-n{n}-{digest.hexdigest()[:24]}.npz"


def _cache_load(path: Path, edges: np.ndarray) -> dict[str, np.ndarray] | None:
    try:
        with np.load(path, allow_pickle=False) as data:
            if not np.array_equal(data["edges"], edges):
                return None
            return {k: data[k] for k in data.files}
    except (OSError, ValueError, KeyError, EOFError):
        return None  # missing, or unreadable: solve again (a corrupt entry is overwritten below)


def _cache_store(path: Path, *, edges: np.ndarray, weights: np.ndarray, lam: np.float64, solver: np.str_,
                 seconds: np.float64, optimality_gap: np.float64) -> None:
    buffer = io.BytesIO()
    np.savez(buffer, edges=edges, weights=weights, lam=lam, solver=solver, seconds=seconds,
             optimality_gap=optimality_gap)
    atomic_write_bytes(path, buffer.getvalue())  # a killed write leaves no partial entry


def optimize_gossip(G: nx.Graph, method: str = "fmmc", *, solver: str = "auto", cache: bool = True,
                    cache_dir: str | os.PathLike[str] | None = None, tol: float = 1e-8,
                    solver_options: dict[str, object] | None = None) -> OptimizedGossip:
    """Solve FDLA (``method="fdla"``) or FMMC (``"fmmc"``) on G; see the module docstring for the solvers.

    Parameters
    ----------
    G : networkx.Graph
        Simple, undirected, connected, on the nodes 0..n-1.
    method : {"fmmc", "fdla"}
        Fastest-mixing Markov chain (non-negative W) or fastest distributed linear averaging.
    solver : {"auto", "lp", "barrier", "CLARABEL", "SCS"}
    cache : bool, default True
        Read and write the disk cache; False neither reads nor writes.
    cache_dir : str or os.PathLike, optional
    tol : float, default 1e-8
        Target accuracy of lam (barrier duality-gap bound), in (0, 1).
    solver_options : dict, optional
        Passed to cvxpy's ``solve`` (e.g. ``{"eps_abs": 1e-6}`` for SCS).

    Examples
    --------
    >>> result = optimize_gossip(nx.path_graph(4), "fmmc", solver="barrier", cache=False)
    >>> round(result.lam, 6), result.edge_weights.round(4).tolist(), result.solver
    (0.707107, [0.5, 0.5, 0.5], 'barrier')
    """
    method = require_choice("method", method, METHODS)
    solver = require_choice("solver", solver, SOLVERS)
    tol = require_real("tol", tol, maximum=1.0, maximum_inclusive=False)
    cache = require_bool("cache", cache)
    if solver_options is not None and not isinstance(solver_options, dict):
        raise TypeError(f"solver_options must be a dict of cvxpy solve() keywords; got {solver_options!r}")
    n, edges = _edges(G)
    path = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    path = path / _cache_key(method, n, edges)
    if cache:
        hit = _cache_load(path, edges)
        if hit is not None:
            W = from_edge_weights(n, edges[:, 0], edges[:, 1], hit["weights"])
            cached_gap = float(hit["optimality_gap"])
            return OptimizedGossip(W, float(hit["lam"]), method, str(hit["solver"]), float(hit["seconds"]),
                                   edges, hit["weights"], True, None if np.isnan(cached_gap) else cached_gap)

    group = _translation_group(G, n, edges) if solver in ("auto", "lp") else None
    if solver == "lp" and group is None:
        raise ValueError("solver='lp' needs a graph with a translation symmetry (circulant, torus, "
                         "hypercube; G.graph['cayley'])")
    if solver == "auto":
        if group is not None:
            solver = "lp"
        elif n <= CVXPY_AUTO_MAX_N:
            solver = "CLARABEL"
        elif n <= BARRIER_MAX_N:
            solver = "barrier"
        else:
            raise ValueError(f"optimize_gossip: general (non-symmetric) graphs are solved up to n = "
                             f"{BARRIER_MAX_N} (an m x m factorization per Newton step); got n={n}. Use "
                             "weights='metropolis' or a symmetric topology")
    nonnegative = method == "fmmc"
    start = time.perf_counter()
    gap: float | None = None
    lp_value = dual_bound = float("nan")
    if n == 1 or len(edges) == 0:
        weights = np.zeros(len(edges))
    elif solver == "lp":
        assert group is not None  # solver "lp" comes with a group: checked above, or chosen because of it
        weights, lp_value, dual_bound = _solve_translation_lp(n, edges, group, nonnegative)
    elif solver == "barrier":
        # one BLAS thread: the Newton steps are many mid-sized products, and a threaded OpenBLAS beside any
        # other busy process runs an order of magnitude slower (docs/benchmarks.md)
        with threadpool_limits(limits=1, user_api="blas"):
            weights, gap = _solve_barrier(n, edges, nonnegative, tol)
    else:
        weights = _solve_cvxpy_sdp(n, edges, nonnegative, solver, solver_options or {})
    weights = _project(n, edges, weights, nonnegative)
    seconds = time.perf_counter() - start
    W = from_edge_weights(n, edges[:, 0], edges[:, 1], weights)
    if solver == "lp" and len(edges):
        _verify(n, edges, W, nonnegative)
        # numpy's lam, told the group: dense eigvalsh up to 512 nodes, then the Fourier spectrum of W's own
        # entries (a 25 x 40 torus is no circulant of Z_1000: without the group, dense eigvalsh, ~5 s)
        lambda_2, lambda_n, _ = extreme_eigenvalues(W, cayley=group)
        lam = max(abs(lambda_2), abs(lambda_n))
        gap = _verify_lp_value(lam, lp_value, dual_bound)
    else:
        lam = second_eigenvalue(W)
    if cache:
        try:
            _cache_store(path, edges=edges, weights=weights, lam=np.float64(lam), solver=np.str_(solver),
                         seconds=np.float64(seconds),
                         optimality_gap=np.float64(np.nan if gap is None else gap))
        except OSError as err:  # an unwritable cache folder costs the next call a solve, not this result
            warnings.warn(f"optimize_gossip: the {method} cache was not written ({err}); the result is "
                          f"returned uncached (cache_dir= or ${CACHE_ENV} another folder)", RuntimeWarning,
                          stacklevel=2)
    return OptimizedGossip(W, lam, method, solver, seconds, edges, weights, False, gap)


def _project(n: int, edges: np.ndarray, weights: np.ndarray, nonnegative: bool) -> np.ndarray:
    """Back onto the exact constraints; symmetry, support and W 1 = 1 hold by the edge-weight form."""
    w: np.ndarray = np.asarray(weights, dtype=float).copy()
    if not nonnegative:
        return w
    w = np.maximum(w, 0.0)
    load = np.bincount(edges[:, 0], w, n) + np.bincount(edges[:, 1], w, n)  # 1 - diag(W)
    # a row whose off-diagonal mass exceeds 1 (solver tolerance) gets its edges scaled so the diagonal is >= 0
    scale = 1.0 / np.maximum(1.0, np.maximum(load[edges[:, 0]], load[edges[:, 1]]))
    projected: np.ndarray = w * scale
    return projected


# --------------------------------------------------------------------------------------------------------
# translation-symmetric graphs: an LP in the orbit weights


def _translation_group(G: nx.Graph, n: int, edges: np.ndarray) -> tuple[int, ...] | None:
    """The abelian group Z_{n_1} x ... x Z_{n_k} whose translations preserve G (node i = row-major index),
    from ``G.graph["cayley"]`` or, failing that, the cyclic group when G is a circulant; None otherwise."""
    candidates = []
    declared = G.graph.get("cayley")
    if declared is not None and int(np.prod(declared)) == n:
        candidates.append(tuple(int(x) for x in declared))
    candidates.append((n,))
    for group in candidates:
        if _orbits(n, edges, group) is not None:
            return group
    return None


def _orbits(n: int, edges: np.ndarray, group: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray] | None:
    """(orbit index of each edge, orbit representatives s) if the edge set is translation invariant."""
    if len(edges) == 0:
        return None
    orders = np.array(group)
    coords = np.array(np.unravel_index(np.arange(n), group)).T
    diff = (coords[edges[:, 1]] - coords[edges[:, 0]]) % orders
    neg = (-diff) % orders
    # canonical representative of {s, -s}: the lexicographically smaller
    keys = np.array([min(tuple(a), tuple(b)) for a, b in zip(diff.tolist(), neg.tolist(), strict=True)])
    reps, orbit = np.unique(keys, axis=0, return_inverse=True)
    involution = np.all((2 * reps) % orders == 0, axis=1)
    expected = np.where(involution, n // 2, n)
    counts = np.bincount(orbit.ravel(), minlength=len(reps))
    # n distinct edges {x, x+s} per orbit (n/2 when s = -s): all present iff the count is full
    if not np.array_equal(counts, expected):
        return None
    return orbit.ravel(), reps


def _solve_translation_lp(n: int, edges: np.ndarray, group: tuple[int, ...],
                          nonnegative: bool) -> tuple[np.ndarray, float, float]:
    """min s s.t. -s <= 1 - C[k] @ w <= s for every non-trivial character k [, w >= 0, mult @ w <= 1], by
    HiGHS's dual simplex (``LP_METHOD``). Returns (edge weights, the LP's s, HiGHS's dual bound b @ y)."""
    from scipy.optimize import linprog  # late: ~0.1 s, and only the symmetric FDLA/FMMC need it

    orbits = _orbits(n, edges, group)
    assert orbits is not None  # _translation_group returned this group only where _orbits found them
    orbit, reps = orbits
    orders = np.array(group, dtype=float)
    chars = np.array(np.unravel_index(np.arange(1, n), group)).T  # the non-trivial characters k
    involution = np.all((2 * reps) % np.array(group) == 0, axis=1)
    mult = np.where(involution, 1.0, 2.0)  # edges of orbit s at each node
    theta = 2.0 * np.pi * (chars / orders) @ reps.T  # (n-1, orbits)
    C = mult * (1.0 - np.cos(theta))  # eigenvalue of W at character k: 1 - C[k] @ w
    C = np.unique(np.round(C, 14), axis=0)
    k, r = len(reps), len(C)
    # x = (w, s): 1 - C w <= s and C w - 1 <= s, i.e. -C w - s <= -1 and C w - s <= 1
    A = np.block([[-C, -np.ones((r, 1))], [C, -np.ones((r, 1))]])
    b = np.concatenate([-np.ones(r), np.ones(r)])
    if nonnegative:
        A = np.vstack([A, np.append(mult, 0.0)])  # diag(W) = 1 - mult @ w >= 0
        b = np.append(b, 1.0)
    bounds = [(0.0, None) if nonnegative else (None, None)] * k + [(0.0, None)]
    cost = np.zeros(k + 1)
    cost[-1] = 1.0
    result = linprog(cost, A_ub=A, b_ub=b, bounds=bounds, method=LP_METHOD,
                     options={"primal_feasibility_tolerance": LP_FEASIBILITY_TOL,
                              "dual_feasibility_tolerance": LP_FEASIBILITY_TOL})
    if result.status != 0 or result.x is None:
        raise RuntimeError(f"the orbit-weight LP (scipy linprog {LP_METHOD}, HiGHS) returned status "
                           f"{result.status}: {result.message}")
    # the variables' lower bounds are 0, so HiGHS's dual objective is b @ y (y <= 0, the rows' marginals)
    dual_bound = float(b @ np.minimum(result.ineqlin.marginals, 0.0))
    return np.asarray(result.x[:k])[orbit], float(result.x[-1]), dual_bound


def _verify(n: int, edges: np.ndarray, W: sp.csr_array, nonnegative: bool) -> None:
    """numpy's check of a returned W: symmetric, rows and columns summing to 1, zero off the graph and the
    diagonal, and (FMMC) non-negative; a failure is a RuntimeError naming the property."""
    coo = sp.coo_array(W)
    u, v = np.minimum(coo.row, coo.col), np.maximum(coo.row, coo.col)
    off = u != v
    allowed = set(zip(edges[:, 0].tolist(), edges[:, 1].tolist(), strict=True))
    problems = []
    if abs(W - W.T).max() != 0.0:
        problems.append("not symmetric")
    ones = np.ones(n)
    if max(np.abs(W @ ones - 1.0).max(), np.abs(W.T @ ones - 1.0).max()) > 1e-12:
        problems.append("not doubly stochastic (row or column sums off 1 by more than 1e-12)")
    if not all((a, c) in allowed for a, c in zip(u[off].tolist(), v[off].tolist(), strict=True)):
        problems.append("non-zero entries off the graph")
    if nonnegative and coo.data.min(initial=0.0) < 0.0:
        problems.append("negative entries")
    if problems:
        raise RuntimeError("the optimized W failed numpy's check: " + "; ".join(problems))


def _verify_lp_value(lam: float, lp_value: float, dual_bound: float) -> float:
    """numpy's lam of the projected W against the LP's primal value and HiGHS's dual bound; returns
    max(lam - dual_bound, 0), the optimality gap numpy and the dual agree on."""
    if abs(lam - lp_value) > LP_VERIFY_TOL or lam - dual_bound > LP_VERIFY_TOL:
        raise RuntimeError(f"the orbit LP ({LP_METHOD}) is not confirmed by numpy: lam of W = {lam!r}, LP "
                           f"value {lp_value!r}, dual bound {dual_bound!r} (tolerance {LP_VERIFY_TOL})")
    return max(lam - dual_bound, 0.0)


# --------------------------------------------------------------------------------------------------------
# general graphs: cvxpy SDP, and the structured barrier method


def _incidence(n: int, edges: np.ndarray) -> sp.csc_array:
    m = len(edges)
    rows = np.concatenate([edges[:, 0], edges[:, 1]])
    cols = np.concatenate([np.arange(m), np.arange(m)])
    vals = np.concatenate([np.ones(m), -np.ones(m)])
    return sp.csc_array((vals, (rows, cols)), shape=(n, m))


def _solve_cvxpy_sdp(n: int, edges: np.ndarray, nonnegative: bool, solver: str,
                     options: dict[str, object]) -> np.ndarray:
    import cvxpy as cp  # late: importing cvxpy is slow (docs/benchmarks.md); most gossip matrices skip it
    A = _incidence(n, edges)
    w = cp.Variable(len(edges))
    s = cp.Variable()
    X = np.eye(n) - np.full((n, n), 1.0 / n) - A @ cp.diag(w) @ A.T  # type: ignore[attr-defined]  # W - 11^T/n
    identity = np.eye(n)
    constraints = [X << s * identity, X >> -s * identity]  # two n x n LMIs, not norm(., 2): theory.md §12.2
    if nonnegative:
        constraints += [w >= 0, abs(A) @ w <= 1]
    problem = cp.Problem(cp.Minimize(s), constraints)
    problem.solve(solver=solver, **options)  # type: ignore[no-untyped-call]
    if w.value is None:
        raise RuntimeError(f"cvxpy solver {solver} returned status {problem.status!r} and no weights")
    return np.asarray(w.value)


def _solve_barrier(n: int, edges: np.ndarray, nonnegative: bool, tol: float,
                   mu: float = 3.0) -> tuple[np.ndarray, float]:
    """Log-barrier method for min s s.t. S1 = sI - X(w) > 0, S2 = sI + X(w) > 0 (X = W - 11^T/n)
    [, w > 0, 1 - |A| w > 0 for FMMC], Boyd & Vandenberghe §11.3.
    """
    u, v = edges[:, 0], edges[:, 1]
    m = len(edges)
    absA = abs(_incidence(n, edges))
    eye = np.eye(n)
    deg = np.bincount(np.concatenate([u, v]), minlength=n)
    w = np.full(m, 1.0 / (deg.max() + 1.0))  # strictly feasible for FMMC
    X0 = np.eye(n) - 1.0 / n - _laplacian(n, u, v, w)
    s = float(np.max(np.abs(np.linalg.eigvalsh(X0)))) + 0.1
    nu = 2.0 * n + ((m + n) if nonnegative else 0.0)
    t = nu / s

    def parts(w: np.ndarray, s: float) -> tuple[np.ndarray, np.ndarray]:
        X = eye - 1.0 / n - _laplacian(n, u, v, w)
        return s * eye - X, s * eye + X

    def value(w: np.ndarray, s: float, t: float) -> float:
        if nonnegative:
            load = absA @ w
            if w.min() <= 0.0 or load.max() >= 1.0:
                return np.inf
        S1, S2 = parts(w, s)
        total = t * s
        for S in (S1, S2):
            try:
                c = sla.cholesky(S, lower=True, check_finite=False)
            except np.linalg.LinAlgError:
                return np.inf
            total -= 2.0 * np.sum(np.log(np.diag(c)))
        if nonnegative:
            total -= np.sum(np.log(w)) + np.sum(np.log(1.0 - load))
        return total

    while True:
        for _ in range(200):  # centering by damped Newton
            S1, S2 = parts(w, s)
            grad = np.zeros(m + 1)
            H = np.zeros((m + 1, m + 1))
            for S, sign in ((S1, 1.0), (S2, -1.0)):
                factor = sla.cho_factor(S, lower=True, check_finite=False)
                Sinv = sla.cho_solve(factor, eye, check_finite=False)
                Q = Sinv[:, u] - Sinv[:, v]  # S^{-1} A
                P = Q[u, :] - Q[v, :]  # A^T S^{-1} A
                grad[:m] -= sign * np.diag(P)
                grad[m] -= np.trace(Sinv)
                H[:m, :m] += P * P
                H[:m, m] += sign * np.einsum("ij,ij->j", Q, Q)  # a_e^T S^{-2} a_e
                H[m, m] += np.einsum("ij,ij->", Sinv, Sinv)
            grad[m] += t
            if nonnegative:
                slack = 1.0 - absA @ w
                grad[:m] += -1.0 / w + absA.T @ (1.0 / slack)
                H[:m, :m] += np.diag(1.0 / w**2) + (absA.T @ sp.diags_array(1.0 / slack**2) @ absA).toarray()
            H[m, :m] = H[:m, m]
            try:
                step = -sla.cho_solve(sla.cho_factor(H, check_finite=False), grad, check_finite=False)
            except np.linalg.LinAlgError:
                step = -np.linalg.lstsq(H, grad, rcond=None)[0]
            decrement = -grad @ step
            if decrement < 1e-10:
                break
            f0 = value(w, s, t)
            alpha = 1.0
            while alpha > 1e-12:
                f1 = value(w + alpha * step[:m], s + alpha * step[m], t)
                if f1 <= f0 - 0.25 * alpha * decrement:
                    break
                alpha *= 0.5
            else:
                break  # no progress possible at this precision
            w = w + alpha * step[:m]
            s = s + alpha * step[m]
        if nu / t < tol:
            return w, nu / t
        t *= mu


def _laplacian(n: int, u: np.ndarray, v: np.ndarray, w: np.ndarray) -> np.ndarray:
    L = np.zeros((n, n))
    L[u, v] = -w
    L[v, u] = -w
    L[np.arange(n), np.arange(n)] = np.bincount(u, w, n) + np.bincount(v, w, n)
    return L
