"""The SDP of ``pep``, built, solved and checked in named steps (`_solve_one_pinned`).

One solve of a normalized problem (L = 1, Delta or radius = 1: ``pep.units``) goes through

1. `_record`: the method run on coefficient rows (``pep.gram._build``), cut to the Gram basis it used,
   and the symmetry blocks of G (the swap of N = 2, the Fourier blocks of a circulant W);
2. `_interpolation`: the interpolation inequalities of every ordered pair of each agent's points;
3. `_criterion_and_conditions`: the criterion's rows (the objective t <= criterion), the heterogeneity's
   and the initial condition's;
4. `_spectral_lmis`: the spectral class's Gram sums A, B, C, one LMI per W (per round when time-varying);
5. `_variables` and `_constraints`: G (or its blocks) and the function values as cvxpy variables, and every
   constraint on them;
6. `_solve`: cvxpy with the named solver; a failure raises;
7. `_check_solution`: numpy's check of the returned point (G PSD, every constraint, the duality gap);
8. `_result`: the recovered worst-case vectors, as a `WorstCase`.

The module docstring of ``pep`` states the SDP and its references. Internal to ``pep``, which
imports it when it first solves (cvxpy is imported with it).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import operator
import time
import warnings
from collections.abc import Sequence
from typing import Any

import cvxpy as cp
import numpy as np
import scipy.sparse as sps
from decbounds.pep.api import CHECK_TOLERANCE, GAP_TOLERANCE, MAX_SDP_BYTES, WorstCase
from decbounds.pep.gram import _build, _GramBuilder, _interpolation_rows, _quadratic_rows
from decbounds.pep.problem import CLARABEL_DEFAULTS, SCS_DEFAULTS, _Setup

__all__: list[str] = []

#: The estimate of one solve, calibrated on measured solves (docs/benchmarks.md, "Worst-case SDPs: the
#: estimate against measurement"; peak resident size and CPU of each solve in a fresh process). Resident
#: bytes: the interpreter with cvxpy imported (170 MB measured) plus a multiple of the dense coefficient
#: entries (`_sdp_entries`), which grows with the size as cvxpy's canonicalization copies them (19-43 bytes
#: per entry measured from K = 8 to 16, a fallback from the block form to the full form included: both
#: solves count the full Gram side), and grows with N when the full form holds N >= 3 agents (each agent's
#: interpolation block a constraint of its own: 265 and 364 bytes per entry at N = 16 and 24, 30 N^0.8).
_BASE_BYTES = 180e6
_BYTES_PER_ENTRY = 48.0
_BYTES_PER_ENTRY_AGENTS = 30.0  # times N^0.8
#: CPU seconds per entry (3.5e-7 measured at 2-6 million entries), growing as (entries / 6e6)^1.3 beyond
#: (203 s measured at 42 million); the full form over N >= 3 agents: 4.2e-7 N^1.1 per entry.
_SECONDS_PER_ENTRY = 3.5e-7
_SECONDS_PER_ENTRY_AGENTS = 4.2e-7  # times N^1.1


def _estimate(setup: _Setup, entries: int, symmetry: bool) -> tuple[float, float]:
    """(resident bytes, CPU seconds) of one solve with ``entries`` dense coefficient entries."""
    agents = setup.N >= 3 and not symmetry
    per_byte = _BYTES_PER_ENTRY_AGENTS * setup.N**0.8 if agents else _BYTES_PER_ENTRY
    seconds = (_SECONDS_PER_ENTRY_AGENTS * setup.N**1.1 * entries if agents
               else _SECONDS_PER_ENTRY * entries * max(1.0, entries / 6e6) ** 1.3)
    return _BASE_BYTES + per_byte * entries, seconds


#: One spectral LMI: ((lam_min, lam_max), m columns, the Gram sums A, B, C as (m^2, nb^2) rows over vec(G)).
_Lmi = tuple[tuple[float, float], int, np.ndarray, np.ndarray, np.ndarray]


def _sdp_entries(setup: _Setup, b: _GramBuilder) -> int:
    """The dense coefficient entries of the SDP that `_solve_one_pinned` builds (``MAX_SDP_BYTES``)."""
    nb, groups = b.size, {}
    for t, _, _ in b.columns:
        key = t if setup.time_varying else 0
        groups[key] = groups.get(key, 0) + 1
    return (3 * sum(m * m for m in groups.values()) + sum(len(p) ** 2 for p in b.points)) * nb * nb


def _check_cost(setup: _Setup, b: _GramBuilder, symmetry: bool) -> None:
    """ValueError naming K and N when the SDP would not fit in ``MAX_SDP_BYTES``; otherwise, for a solve
    estimated at 5 s or more, its size and cost go to ``setup.progress`` (the CLI prints them)."""
    entries = _sdp_entries(setup, b)
    estimate, seconds = _estimate(setup, entries, symmetry)
    if estimate > MAX_SDP_BYTES:
        raise ValueError(f"K={setup.K} with N={setup.N}: the SDP (Gram side {b.size}, {len(b.columns)} "
                         "gossip "
                         f"columns) would need about {estimate / 2**30:.1f} GiB, more than MAX_SDP_BYTES = "
                         f"{MAX_SDP_BYTES / 2**30:g} GiB; give a smaller K")
    if setup.progress is not None and seconds >= 5.0:
        setup.progress(f"SDP of Gram side {b.size} with {len(b.columns)} gossip columns: about "
                       f"{estimate / 2**20:.0f} MiB and {seconds:.0f} s of CPU")


def _solve_one_pinned(setup: _Setup, worker: int | None, symmetry: bool,
                      options: dict[str, Any]) -> WorstCase:
    """The worst case of one normalized problem (``worker``: the measured worker of "worker_gradient"), its
    numpy's BLAS pinned to one thread by the caller (``bounds.pep._solve_one``): the steps of the module
    docstring, in order."""
    start = time.perf_counter()
    rec = _record(setup, worker, symmetry)
    interp = _interpolation(setup, rec)
    rows = _criterion_and_conditions(setup, rec)
    lmis = _spectral_lmis(setup, rec)
    build_seconds = time.perf_counter() - start
    variables = _variables(setup, rec)
    t, constraints, init_con, het_con, n_sdp_rows = _constraints(setup, rec, interp, rows, lmis, variables)
    problem = cp.Problem(cp.Maximize(t), constraints)
    where = (f"worst_case({setup.spec.name!r}, K={setup.K}, class={setup.function_class!r}, "
             f"criterion={setup.criterion!r}, gossip={'exact' if setup.given_matrix else 'spectral'})")
    status, solve_seconds = _solve(setup, problem, t, variables.F, where)
    checked = _check_solution(setup, rec, interp, rows, lmis, variables, float(t.value), init_con, het_con,
                              problem, status, where)
    return _result(setup, worker, options, rec, interp, rows, lmis, checked, n_sdp_rows=n_sdp_rows,
                   status=status, build_seconds=build_seconds, solve_seconds=solve_seconds)


# -- 1. the method run -----------------------------------------------------------------------------------


@dataclasses.dataclass
class _Recorded:
    """What the method run recorded (`_record`), cut to the ``nb`` basis vectors it used: the builder, the
    iterates (K+1, N, nb), the average gradients by iteration, the measured worker's gradients, x* (convex
    classes) and the PSD blocks of G (None: one block)."""

    builder: _GramBuilder
    nb: int
    iterates: list[np.ndarray]
    avg_grads: dict[int, np.ndarray]
    worker_grads: list[np.ndarray]
    x_star: np.ndarray | None
    blocks: list[tuple[np.ndarray, str]] | None


def _record(setup: _Setup, worker: int | None, symmetry: bool) -> _Recorded:
    """Step 1: run the method on coefficient rows (``pep_gram._build``), refuse an SDP too large
    (`_check_cost`), and find the symmetry blocks of G where ``symmetry`` asks for them: the swap of N = 2
    (``_GramBuilder.swap_blocks``), or the cyclic shift under a circulant W
    (``_GramBuilder.cyclic_blocks``)."""
    b, iterates, avg_grads, worker_grads = _build(setup, worker)
    N, nb = setup.N, b.size
    _check_cost(setup, b, symmetry)
    iterates = [X[:, :nb] for X in iterates]
    avg_grads = {k: G_[:, :nb] for k, G_ in avg_grads.items()}
    worker_grads = [G_[:, :nb] for G_ in worker_grads]
    x_star = b.x_star[:nb] if b.x_star is not None else None
    blocks: list[tuple[np.ndarray, str]] | None = None
    if symmetry and N == 2:
        swap = b.swap_blocks(nb)
        blocks = None if swap is None else [(swap[0], "real"), (swap[1], "real")]
    elif symmetry:
        blocks = b.cyclic_blocks(nb, iterates)
    return _Recorded(builder=b, nb=nb, iterates=iterates, avg_grads=avg_grads, worker_grads=worker_grads,
                     x_star=x_star, blocks=blocks)


# -- 2. interpolation ------------------------------------------------------------------------------------


@dataclasses.dataclass
class _Interpolation:
    """Every agent's interpolation inequalities, f_a - f_b + G_row @ vec(G) >= 0 (`_interpolation`): the
    Gram rows (None in the cyclic form, which builds agent 0's in its blocks' coordinates), the
    function-value rows (all agents', then per agent), and each agent's (points, gradients)."""

    G: Any
    F: Any
    value_rows: list[Any]
    agent_points: list[tuple[np.ndarray, np.ndarray]]


def _interpolation(setup: _Setup, rec: _Recorded) -> _Interpolation:
    """Step 2: the interpolation rows of every ordered pair of each agent's points (all of them are checked
    after the solve, `_check_solution`)."""
    b, nb, blocks, N = rec.builder, rec.nb, rec.blocks, setup.N
    rows, value_rows, agent_points = [], [], []
    for i in range(N):
        pts = b.points[i]
        P = len(pts)
        if P < 2:
            continue
        xs = np.array([c[:nb] for c, _, _ in pts])
        gs = np.array([g[:nb] for _, g, _ in pts])
        fs = np.array([f for _, _, f in pts])
        a_idx, b_idx = np.nonzero(~np.eye(P, dtype=bool))
        agent_points.append((xs, gs))
        if blocks is None or N == 2:  # the cyclic form builds agent 0's rows in its blocks' coordinates
            rows.append(sps.csr_array(_interpolation_rows(setup, xs, gs)))
        vr = sps.coo_array((np.r_[np.ones(len(a_idx)), -np.ones(len(a_idx))],
                            (np.r_[np.arange(len(a_idx)), np.arange(len(a_idx))],
                             np.r_[fs[a_idx], fs[b_idx]])), shape=(len(a_idx), b.n_values))
        value_rows.append(vr.tocsr())
    interp_G = sps.vstack(rows).tocsr() if rows else None
    interp_F = sps.vstack(value_rows).tocsr() if value_rows else sps.csr_array((0, b.n_values))
    return _Interpolation(G=interp_G, F=interp_F, value_rows=value_rows, agent_points=agent_points)


# -- 3. the objective and the inhomogeneous constraints --------------------------------------------------


def _mean_value(rec: _Recorded, N: int, points: Sequence[np.ndarray]) -> np.ndarray:
    """(1/N) sum_i f_i(points[i]) as a row over the function values (every such point was queried in
    ``pep_gram._build``: looking it up adds no variable)."""
    b, nb = rec.builder, rec.nb
    row, before = np.zeros(b.n_values), b.size
    for i, x in enumerate(points):
        row[b.oracle(i, np.pad(x, (0, b.capacity - nb)))[1]] += 1.0 / N
    assert b.size == before, "every point of the criterion and the initial condition is queried in _build"
    return row


@dataclasses.dataclass
class _Rows:
    """The linear data of the objective and of the two inhomogeneous constraints
    (`_criterion_and_conditions`): t <= criterion_gram @ vec(G) + criterion_values @ F (one row per
    candidate), het_rows @ vec(G) <= varsigma^2, initial_gram @ vec(G) + initial_values @ F <= rhs."""

    criterion_gram: np.ndarray
    criterion_values: np.ndarray
    het_rows: np.ndarray
    initial_gram: np.ndarray
    initial_values: np.ndarray
    rhs: float


def _criterion_and_conditions(setup: _Setup, rec: _Recorded) -> _Rows:
    """Step 3: the criterion's rows (the objective: the SDP maximizes t below each), the heterogeneity's
    (<= varsigma^2, "averages" at every queried average or "optimum" at x*) and the initial condition's
    (f(x0) - f* <= Delta, or the distance to x* <= radius^2)."""
    b, nb, N, K = rec.builder, rec.nb, setup.N, setup.K
    iterates, avg_grads, x_star = rec.iterates, rec.avg_grads, rec.x_star
    f_star = _mean_value(rec, N, [x_star] * N) if x_star is not None else None
    xbar = [X.mean(axis=0) for X in iterates]
    c = setup.criterion
    if c in ("gradient", "worker_gradient"):
        measured = [avg_grads[k] for k in range(K + 1)] if c == "gradient" else rec.worker_grads
        mean_g = np.array([Gk.mean(axis=0) for Gk in measured])
        crit_G, crit_F = _quadratic_rows(mean_g, mean_g), np.zeros((K + 1, b.n_values))
    elif c == "function_value":
        assert f_star is not None  # the convex classes (validated)
        crit_G = np.zeros((1, nb * nb))
        crit_F = (_mean_value(rec, N, [xbar[K]] * N) - f_star)[None, :]
    elif c == "distance":
        assert x_star is not None
        crit_G, crit_F = _quadratic_rows(xbar[K] - x_star, xbar[K] - x_star), np.zeros((1, b.n_values))
    else:  # consensus
        dev = iterates[K] - xbar[K]
        crit_G = (_quadratic_rows(dev, dev).sum(axis=0) / N)[None, :]
        crit_F = np.zeros((1, b.n_values))
    if setup.heterogeneity == "averages":
        het_rows = np.array([_quadratic_rows(Gk - Gk.mean(axis=0), Gk - Gk.mean(axis=0)).sum(axis=0) / N
                             for Gk in avg_grads.values()])
    else:
        gstar = np.array([g[:nb] for g in b.star_gradients])
        het_rows = (_quadratic_rows(gstar, gstar).sum(axis=0) / N)[None, :]
    if setup.initial == "function_value":
        reference = f_star if f_star is not None else _mean_value(rec, N, [xbar[K]] * N)
        init_F, init_G = _mean_value(rec, N, [np.zeros(nb)] * N) - reference, np.zeros(nb * nb)
        rhs = setup.Delta
    else:
        assert x_star is not None
        dev = iterates[0] - x_star
        init_G, init_F = _quadratic_rows(dev, dev).sum(axis=0) / N, np.zeros(b.n_values)
        rhs = setup.radius**2
    return _Rows(criterion_gram=crit_G, criterion_values=crit_F, het_rows=het_rows, initial_gram=init_G,
                 initial_values=init_F, rhs=rhs)


# -- 4. the spectral class -------------------------------------------------------------------------------


def _spectral_lmis(setup: _Setup, rec: _Recorded) -> list[_Lmi]:
    """Step 4: the spectral LMIs' coefficients, one group of gossip columns per W (static: every column;
    time-varying: per round), each its centred inputs' and outputs' Gram sums A, B, C over vec(G)."""
    b, nb = rec.builder, rec.nb
    groups: dict[int, list[int]] = {}
    for j, (t, _, _) in enumerate(b.columns):
        groups.setdefault(t if setup.time_varying else 0, []).append(j)
    lmis = []
    for t, cols in groups.items():
        m = len(cols)
        Xin = np.array([b.columns[j][1][:, :nb] - b.columns[j][1][:, :nb].mean(axis=0) for j in cols])
        Yout = np.array([b.columns[j][2][:, :nb] - b.columns[j][2][:, :nb].mean(axis=0) for j in cols])

        def gram_sum(U: np.ndarray, V: np.ndarray, m: int = m) -> np.ndarray:
            t_ = np.einsum("cip,diq->cdpq", U, V)
            return (0.5 * (t_ + t_.transpose(0, 1, 3, 2))).reshape(m * m, nb * nb)

        lmis.append((setup.spectra[t], m, gram_sum(Xin, Xin), gram_sum(Xin, Yout), gram_sum(Yout, Yout)))
    return lmis


# -- 5. the SDP ------------------------------------------------------------------------------------------


@dataclasses.dataclass
class _Variables:
    """The SDP's variables (`_variables`): G (one PSD block) or its blocks ``Zs`` (G = sum U Z U^T), ``g`` =
    vec(G) as an expression (None in the cyclic form, ``reduced``), the function values F and the
    expression of every agent's (``F_expr``; ``P_map`` F_0 under a symmetry), and the PSD constraints of
    the Hermitian blocks."""

    blocks: list[tuple[np.ndarray, str]] | None
    nb: int
    reduced: bool
    G: Any
    Zs: list[Any]
    g: Any
    F: Any
    F_expr: Any
    P_map: np.ndarray | None
    block_psd: list[Any]

    def gram_rows(self, M: Any) -> Any:
        """Rows over vec(G) -> their affine expression in the SDP's variables.

        Parameters
        ----------
        M : numpy.ndarray or scipy.sparse array
            One row (nb^2,) or rows (r, nb^2) over vec(G).

        Returns
        -------
        cvxpy.Expression
        """
        if not self.reduced:
            return M @ self.g
        assert self.blocks is not None
        nb = self.nb
        one = np.ndim(M) == 1
        M = np.atleast_2d(M.toarray() if hasattr(M, "toarray") else np.asarray(M)).reshape(-1, nb, nb)
        expr = functools.reduce(operator.add, (
            np.einsum("nab,ak,bl->nkl", M, U, U, optimize=True).reshape(len(M), -1) @ cp.vec(Z, order="C")
            for (U, _), Z in zip(self.blocks, self.Zs, strict=True)))
        return expr[0] if one else expr


def _variables(setup: _Setup, rec: _Recorded) -> _Variables:
    """Step 5a: the variables. The cyclic form (exact circulant W, N >= 3) passes the solver its constraints
    in the blocks' own coordinates (x^T G y = sum_k (U_k^T x)^T Z_k (U_k^T y)): through vec(G) cvxpy's
    canonicalization would cost (N K)^2 per block and row, more than the solve."""
    b, nb, blocks, N = rec.builder, rec.nb, rec.blocks, setup.N
    reduced = blocks is not None and N >= 3
    block_psd: list[Any] = []
    terms: list[Any] = []
    Zs: list[Any] = []
    G: Any = None
    g: Any = None
    P_map = None
    if blocks is None:
        G = cp.Variable((nb, nb), PSD=True)
        g = cp.vec(G, order="F")
        F = cp.Variable(b.n_values)
        F_expr = F
    else:
        for U, kind in blocks:
            if kind == "real":
                Z = cp.Variable((U.shape[1], U.shape[1]), PSD=True)
            else:  # [[A, -C], [C, A]], A symmetric, C antisymmetric: a Hermitian block of half the side
                m = U.shape[1] // 2
                A = cp.Variable((m, m), symmetric=True)
                iu, ju = np.triu_indices(m, 1)
                if len(iu):
                    c_ = cp.Variable(len(iu))
                    T = np.zeros((m * m, len(iu)))
                    T[iu * m + ju, np.arange(len(iu))] = 1.0
                    T[ju * m + iu, np.arange(len(iu))] = -1.0
                    C_ = cp.reshape(T @ c_, (m, m), order="C")
                else:
                    C_ = np.zeros((m, m))
                Z = cp.bmat([[A, -C_], [C_, A]])
                block_psd.append(0.5 * (Z + Z.T) >> 0)
            Zs.append(Z)
            if not reduced:
                terms.append(U @ Z @ U.T)
        if not reduced:
            g = cp.vec(functools.reduce(operator.add, terms), order="F")
        # F = P F_0: agent i's value at its j-th point is agent 0's at its j-th (the symmetry pairs them)
        P_map = np.zeros((b.n_values, len(b.points[0])))
        for i in range(N):
            for j, (_, _, f) in enumerate(b.points[i]):
                P_map[f, j] = 1.0
        F = cp.Variable(P_map.shape[1])
        F_expr = P_map @ F
    return _Variables(blocks=blocks, nb=nb, reduced=reduced, G=G, Zs=Zs, g=g, F=F, F_expr=F_expr, P_map=P_map,
                      block_psd=block_psd)


def _constraints(setup: _Setup, rec: _Recorded, interp: _Interpolation, rows: _Rows, lmis: list[_Lmi],
                 v: _Variables) -> tuple[Any, list[Any], Any, Any, int]:
    """Step 5b: t below the criterion, the initial condition, the heterogeneity, the blocks' PSD, the
    interpolation (the solver's share of it) and the spectral LMIs. Returns (t, the constraints, the
    initial condition's and the heterogeneity's constraint (their duals give the gap), the interpolation
    rows the solver gets)."""
    assert not (v.reduced and lmis), "the cyclic form is for an exact W (no spectral LMI)"
    t = cp.Variable()
    init_con = v.gram_rows(rows.initial_gram) + rows.initial_values @ v.F_expr <= rows.rhs
    het_con = v.gram_rows(rows.het_rows) <= setup.varsigma**2
    objective_con = t <= v.gram_rows(rows.criterion_gram) + rows.criterion_values @ v.F_expr
    constraints = [objective_con, init_con, het_con]
    constraints += v.block_psd
    # in the two-block form agent 1's interpolation rows are agent 0's under the swap (its function values
    # too, F_1 = F_0 point by point), so only agent 0's enter the SDP: keeping both would leave the solver a
    # non-unique optimal face (F_0 - F_1 free along it), on which Clarabel stalls at "optimal_inaccurate";
    # likewise agent i's rows are agent 0's under the shift by i in the cyclic form
    n_interp = interp.F.shape[0]
    n_sdp_rows = interp.value_rows[0].shape[0] if rec.blocks is not None and interp.value_rows else n_interp
    if n_sdp_rows and v.reduced:
        assert rec.blocks is not None
        xs, gs = interp.agent_points[0]
        interp_expr = functools.reduce(operator.add, (
            _interpolation_rows(setup, xs @ U, gs @ U) @ cp.vec(Z, order="C")
            for (U, _), Z in zip(rec.blocks, v.Zs, strict=True)))
        constraints.append(interp_expr + interp.F[:n_sdp_rows] @ v.F_expr >= 0)
    elif n_sdp_rows:
        constraints.append(interp.G[:n_sdp_rows] @ v.g + interp.F[:n_sdp_rows] @ v.F_expr >= 0)
    for (lo, hi), m, A_c, B_c, C_c in lmis:
        A_e, B_e, C_e = (cp.reshape(M @ v.g, (m, m), order="C") for M in (A_c, B_c, C_c))
        S = (lo + hi) * B_e - lo * hi * A_e - C_e
        iu, ju = np.triu_indices(m, 1)  # B = B^T on the strict upper triangle only: the diagonal and the
        # lower triangle would add zero and repeated rows, a singular KKT system for the interior-point solver
        if len(iu):
            constraints.append((B_c[iu * m + ju] - B_c[ju * m + iu]) @ v.g == 0)
        constraints.append(0.5 * (S + S.T) >> 0)
    return t, constraints, init_con, het_con, n_sdp_rows


# -- 6. the solve ----------------------------------------------------------------------------------------


def _solve(setup: _Setup, problem: Any, t: Any, F: Any, where: str) -> tuple[str, float]:
    """Step 6: solve with ``setup.solver`` (its defaults, `CLARABEL_DEFAULTS` or `SCS_DEFAULTS`, updated by
    ``setup.solver_options``). Returns (the solver's status, the seconds of the solve). A solver failure, an
    unbounded problem or a status without a point raises RuntimeError naming ``where``; options the solver
    refuses, ValueError."""
    solver = setup.solver
    solver_options = dict(CLARABEL_DEFAULTS if solver == "CLARABEL" else SCS_DEFAULTS)
    solver_options.update(setup.solver_options or {})
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():  # an inaccurate solve is reported through status and the checks below
            warnings.simplefilter("ignore", UserWarning)
            problem.solve(solver=solver, **solver_options)
    except cp.error.SolverError as err:
        raise RuntimeError(f"{where}: solver {solver} failed: {err}") from err
    except (TypeError, ValueError, OverflowError) as err:
        if not setup.solver_options:
            raise
        raise ValueError(f"solver_options={dict(setup.solver_options)!r}: solver {solver} refused them: "
                         f"{err}") from None
    solve_seconds = time.perf_counter() - t0
    status = str(problem.status)
    if status in ("unbounded", "unbounded_inaccurate"):
        raise RuntimeError(f"{where}: solver {solver} reports status {status!r}: the worst case is infinite "
                           "(the method never leaves x0 in K iterations, or the class allows unbounded "
                           "disagreement)")
    if status not in ("optimal", "optimal_inaccurate") or t.value is None or F.value is None:
        raise RuntimeError(f"{where}: solver {solver} returned status {status!r}; no worst case")
    return status, solve_seconds


# -- 7. the numpy check ----------------------------------------------------------------------------------


@dataclasses.dataclass
class _Checked:
    """The returned point as numpy checked it (`_check_solution`): G and F, t, the scale of the tolerances,
    the violation of each constraint family, G's eigenvalues, the duality gap and the solver's own
    objectives (where it reports them)."""

    Gv: np.ndarray
    Fv: np.ndarray
    value: float
    scale: float
    violations: dict[str, float]
    eig: np.ndarray
    gap: float
    solver_gap: tuple[float, float] | None


def _check_solution(setup: _Setup, rec: _Recorded, interp: _Interpolation, rows: _Rows, lmis: list[_Lmi],
                    v: _Variables, tv: float, init_con: Any, het_con: Any, problem: Any, status: str,
                    where: str) -> _Checked:
    """Step 7: the returned point checked with numpy: G PSD and every constraint (every agent's
    interpolation, the spectral LMIs and what they imply) within `CHECK_TOLERANCE` times the solution's
    scale, and the duality gap from the dual variables of the inhomogeneous constraints (every other one is
    homogeneous: the dual objective is rhs * y_init + varsigma^2 * sum_k y_k) within `GAP_TOLERANCE`. A
    violation raises RuntimeError naming ``where``."""
    solver = setup.solver
    blocks = rec.blocks
    Gv = (np.asarray(v.G.value) if blocks is None
          else sum(U @ np.asarray(Z.value) @ U.T for (U, _), Z in zip(blocks, v.Zs, strict=True)))
    Fv = np.asarray(v.F.value) if blocks is None else v.P_map @ np.asarray(v.F.value)
    gv = Gv.reshape(-1, order="F")
    scale = max(1.0, float(np.max(np.abs(Gv))), float(np.max(np.abs(Fv), initial=0.0)))

    def gram_values(left: np.ndarray, right: np.ndarray) -> np.ndarray:
        """<l, r> under the returned G for paired rows (``_quadratic_rows(l, r) @ vec(G)``)."""
        return np.einsum("ij,jk,ik->i", np.atleast_2d(left), 0.5 * (Gv + Gv.T), np.atleast_2d(right))

    eig = np.linalg.eigvalsh(0.5 * (Gv + Gv.T))
    violations = {
        "interpolation": float(max(0.0, -np.min(interp.F @ Fv + np.concatenate(
            [_interpolation_rows(setup, xs, gs, quad=gram_values) for xs, gs in interp.agent_points] or [[]]),
            initial=0.0))),
        "criterion": float(max(0.0, tv - np.min(rows.criterion_gram @ gv + rows.criterion_values @ Fv))),
        "initial_condition": float(max(0.0, rows.initial_gram @ gv + rows.initial_values @ Fv - rows.rhs)),
        "heterogeneity": float(max(0.0, np.max(rows.het_rows @ gv) - setup.varsigma**2)),
        "gram_psd": float(max(0.0, -eig[0])),
    }
    for (lo, hi), m, A_c, B_c, C_c in lmis:
        A_v, B_v, C_v = ((M @ gv).reshape(m, m) for M in (A_c, B_c, C_c))
        Bs = 0.5 * (B_v + B_v.T)
        # the LMI's entries are sums over agents and rounds: judge it on their scale too
        scale = max(scale, float(np.max(np.abs(A_v))), float(np.max(np.abs(C_v))))
        for name, value in (("spectral_symmetry", float(np.max(np.abs(B_v - B_v.T)))),
                            *((name, float(max(0.0, -np.linalg.eigvalsh(0.5 * (M + M.T))[0])))
                              for name, M in (("spectral_lmi", (lo + hi) * Bs - lo * hi * A_v - C_v),
                                              ("spectral_upper", hi * A_v - Bs),
                                              ("spectral_lower", Bs - lo * A_v)))):
            violations[name] = max(violations.get(name, 0.0), value)
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
    dual_objective = y_init * rows.rhs + float(np.sum(y_het)) * setup.varsigma**2
    gap = abs(dual_objective - tv)
    solver_gap = None
    stats = getattr(problem.solver_stats, "extra_stats", None)
    if stats is not None and hasattr(stats, "obj_val") and hasattr(stats, "obj_val_dual"):
        solver_gap = (float(stats.obj_val), float(stats.obj_val_dual))
    if not math.isfinite(gap) or gap > GAP_TOLERANCE[solver] * max(1.0, abs(tv)):
        raise RuntimeError(f"{where}: solver {solver} (status {status!r}) left a primal-dual gap {gap:.2e} "
                           f"(primal {tv:.6g}, dual {dual_objective:.6g}); no worst case")
    return _Checked(Gv=Gv, Fv=Fv, value=tv, scale=scale, violations=violations, eig=eig, gap=gap,
                    solver_gap=solver_gap)


# -- 8. the result ---------------------------------------------------------------------------------------


def _result(setup: _Setup, worker: int | None, options: dict[str, Any], rec: _Recorded,
            interp: _Interpolation, rows: _Rows, lmis: list[_Lmi], checked: _Checked, *, n_sdp_rows: int,
            status: str, build_seconds: float, solve_seconds: float) -> WorstCase:
    """Step 8: the worst case as a `WorstCase`, its vectors recovered from G = V^T V, V of rank r (the
    eigenvalues above the PSD tolerance): every coefficient row c becomes the point c @ V^T in R^r."""
    b, nb, N, K = rec.builder, rec.nb, setup.N, setup.K
    Gv, Fv, scale = checked.Gv, checked.Fv, checked.scale
    w, Q = np.linalg.eigh(0.5 * (Gv + Gv.T))
    keep = w > CHECK_TOLERANCE[setup.solver] * scale
    Vr = (Q[:, keep] * np.sqrt(w[keep])).T  # (r, nb)
    vec = lambda C: np.asarray(C) @ Vr.T  # noqa: E731 - coefficient rows -> points in R^r
    d = Vr.shape[0]
    points = [vec(np.array([x[:nb] for x, _, _ in b.points[i]])) for i in range(N)]
    gradients = [vec(np.array([g_[:nb] for _, g_, _ in b.points[i]])) for i in range(N)]
    values = [Fv[[f for _, _, f in b.points[i]]] for i in range(N)]
    m_all = len(b.columns)
    gossip_in = np.array([vec(X[:, :nb]) for _, X, _ in b.columns]) if m_all else np.zeros((0, N, d))
    gossip_out = np.array([vec(Y[:, :nb]) for _, _, Y in b.columns]) if m_all else np.zeros((0, N, d))
    average_gradients = np.full((K + 1, d), np.nan)
    for k, Gk in rec.avg_grads.items():
        average_gradients[k] = vec(Gk.mean(axis=0))
    constant = len(set(setup.steps)) == 1
    exact_all = all(M is not None for M in setup.exact)
    W_out = (None if not exact_all else np.array(setup.exact) if setup.time_varying else setup.exact[0])
    lo_hull = min(lo for lo, _ in setup.spectra)
    hi_hull = max(hi for _, hi in setup.spectra)
    blocks = rec.blocks
    n_interp = interp.F.shape[0]
    return WorstCase(
        method=setup.spec.name, K=K, L=setup.L, mu=setup.mu, step_size=setup.steps[0] if constant else None,
        steps=setup.steps, Delta=setup.Delta, radius=setup.radius, varsigma=setup.varsigma,
        function_class=setup.function_class, criterion=setup.criterion, initial=setup.initial,
        heterogeneity=setup.heterogeneity, starts=setup.starts,
        gossip="exact" if setup.given_matrix else "spectral", time_varying=setup.time_varying,
        spectrum=(lo_hull, hi_hull), spectra=setup.spectra if setup.time_varying else None,
        N=N, params=setup.params, worker=worker, value=checked.value, solver=setup.solver, status=status,
        gap=checked.gap, solver_gap=checked.solver_gap, violations=checked.violations,
        min_gram_eigenvalue=float(checked.eig[0]), build_seconds=build_seconds, solve_seconds=solve_seconds,
        sdp_size={"gram": nb, "values": b.n_values,
                  "scalar_constraints": n_interp + len(rows.criterion_gram) + len(rows.het_rows) + 1,
                  "solver_rows": n_sdp_rows + len(rows.criterion_gram) + len(rows.het_rows) + 1
                  + sum(m * (m - 1) // 2 for _, m, _, _, _ in lmis),
                  "lmi": max((m for _, m, _, _, _ in lmis), default=0), "gossip_columns": m_all,
                  "blocks": (nb,) if blocks is None else tuple(U.shape[1] for U, _ in blocks),
                  "oracle_points": sum(len(p) for p in b.points)},
        iterates=np.array([vec(X) for X in rec.iterates]), average_gradients=average_gradients,
        optimum=vec(rec.x_star) if rec.x_star is not None else None,
        points=points, gradients=gradients, values=values, gossip_inputs=gossip_in, gossip_outputs=gossip_out,
        gossip_rounds=np.array([t_ for t_, _, _ in b.columns], dtype=int), W=W_out, options=options,
        spec=setup.spec, batch=setup.batch,
    )
