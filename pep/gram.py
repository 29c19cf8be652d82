"""The Gram builder of ``pep``: the method run on coefficient rows over the Gram basis.

`_build` runs the method (``setup.spec.run``, the engine's own step rule compiled by
``algorithms.compiled``) on a `_GramBuilder`, whose ``ops`` answer on coefficient rows: every oracle point
becomes a basis vector of the gradient (and a function-value variable), every gossip round of the spectral
class the basis vectors of its output's disagreement. What the SDP is made of then (``pep.sdp``):
the recorded points (`_interpolation_rows`, over `_quadratic_rows`), the gossip columns, and the symmetry
blocks (`_GramBuilder.swap_blocks`, `_GramBuilder.cyclic_blocks`). Internal to ``pep``
(module docstring there: the SDP and its references).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from decbounds.pep.problem import _Setup

__all__: list[str] = []


class _GramBuilder:
    """The ``ops`` of the method descriptions on coefficient rows over the Gram basis; records every oracle
    point (merging identical ones per agent: with W = 11^T/N the agents' iterates coincide with x-bar and a
    duplicate point would make the SDP degenerate) and every gossip round of the spectral class."""

    def __init__(self, setup: _Setup, capacity: int):
        self.setup, self.N, self.capacity, self.lam = setup, setup.N, capacity, setup.lam
        # what a rule's prepare may read of the gossip class (D2 checks lambda_min >= -1/3)
        self.lambda_min = min(lo for lo, _ in setup.spectra)
        # x0 = 0 (equal starts): every constraint involves only differences of points, so x0 would be a basis
        # vector that no constraint touches (a free direction of G, which only slows the solver down)
        self.size = 0
        self.n_values = 0
        self.points: list[list[tuple[np.ndarray, np.ndarray, int]]] = [[] for _ in range(self.N)]
        self.columns: list[tuple[int, np.ndarray, np.ndarray]] = []  # (round, inputs, outputs)
        # N = 2: the agent swap maps agent 0's new gradient to agent 1's (pairs), a gossip output's
        # disagreement vector d and agent 0's gradient at x* to minus themselves (odd) and x* to itself
        # (even); see `swap_blocks`
        self.pairs: list[tuple[int, int]] = []
        self.odd: list[int] = []
        self.even: list[int] = []
        self.paired = self.N == 2
        self.x_star: np.ndarray | None = None
        self.star_values: list[int] = []
        self.star_gradients: list[np.ndarray] = []

    def _new(self) -> int:
        if self.size >= self.capacity:
            raise _CapacityError
        self.size += 1
        return self.size - 1

    def unit(self, index: int) -> np.ndarray:
        row = np.zeros(self.capacity)
        row[index] = 1.0
        return row

    def starts(self) -> np.ndarray:
        """x^0: the origin for every agent (equal starts), or one basis vector per agent (unequal starts,
        x* at the origin)."""
        if self.setup.starts == "equal":
            return np.zeros((self.N, self.capacity))
        X0 = np.array([self.unit(self._new()) for _ in range(self.N)])
        if self.N == 2:
            self.pairs.append((self.size - 2, self.size - 1))
        return X0

    def optimum(self) -> None:
        """x* with sum_i grad f_i(x*) = 0 (agent N's gradient is minus the others') and every f_i(x*)."""
        if self.setup.starts == "equal":
            self.x_star = self.unit(self._new())
            self.even.append(self.size - 1)
        else:
            self.x_star = np.zeros(self.capacity)
        grads = [self.unit(self._new()) for _ in range(self.N - 1)]
        if self.N == 2:
            self.odd.append(self.size - 1)
        grads.append(-np.sum(grads, axis=0) if grads else np.zeros(self.capacity))  # N = 1: grad f(x*) = 0
        for i in range(self.N):
            self.points[i].append((self.x_star.copy(), grads[i], self.n_values))
            self.star_values.append(self.n_values)
            self.n_values += 1
        self.star_gradients = grads

    def oracle(self, agent: int, x: np.ndarray) -> tuple[np.ndarray, int]:
        for coeffs, g, f in self.points[agent]:
            if np.allclose(coeffs, x, rtol=0, atol=1e-12):
                return g, f
        g, f = self.unit(self._new()), self.n_values
        self.n_values += 1
        self.points[agent].append((x.copy(), g, f))
        return g, f

    def grad(self, X: np.ndarray) -> np.ndarray:
        rows, new = [], []
        for i in range(self.N):
            before = self.size
            rows.append(self.oracle(i, X[i])[0])
            new.append(self.size - 1 if self.size > before else None)
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
        for e in self.even:
            S[e, e] = 1.0
        if not np.allclose(np.abs(S).sum(axis=0), 1.0):
            return None  # a basis vector outside the pairing
        zero, one = self.points
        if len(zero) != len(one) or any(
                not (np.allclose(S @ x0[:nb], x1[:nb], rtol=0, atol=1e-10)
                     and np.allclose(S @ g0[:nb], g1[:nb], rtol=0, atol=1e-10))
                for (x0, g0, _), (x1, g1, _) in zip(zero, one, strict=True)):
            return None
        for _, X, Y in self.columns:
            if not (np.allclose(X[1, :nb], S @ X[0, :nb], atol=1e-10)
                    and np.allclose(Y[1, :nb], S @ Y[0, :nb], atol=1e-10)):
                return None
        r = 1.0 / np.sqrt(2.0)
        U = np.zeros((nb, len(self.pairs) + len(self.even)))
        V = np.zeros((nb, len(self.pairs) + len(self.odd)))
        for j, (a, b) in enumerate(self.pairs):
            U[a, j], U[b, j] = r, r
            V[a, j], V[b, j] = r, -r
        for j, e in enumerate(self.even):
            U[e, len(self.pairs) + j] = 1.0
        for j, d in enumerate(self.odd):
            V[d, len(self.pairs) + j] = 1.0
        return U, V

    def cyclic_blocks(self, nb: int, iterates: Sequence[np.ndarray]) -> list[tuple[np.ndarray, str]] | None:
        """For an exact circulant W (every round) on N >= 3 agents: the PSD blocks of a Gram matrix invariant
        under the cyclic shift of the agents (agent i -> i + 1 mod N), or None when the recorded data are not
        shift-equivariant. Shifting the agents maps the SDP onto itself (W is circulant; every constraint
        family is agent i's alone or a sum over agents), so averaging an optimal (G, F) over the N shifts
        gives an optimal one that is invariant (Colla & Hendrickx, arXiv 2403.11724, use the same argument
        over agent permutations). On the coefficient space the shift is a linear map S (S c_i = c_{i+1} for
        every point and gradient of every agent; agent N-1's gradient at x* is minus the others', so S is a
        permutation only up to that part) with S^N = I, and invariance is S^T G S = G. With M = sum_k
        (S^k)^T S^k = R^T R, Q = R S R^{-1} is orthogonal and G = R^T G' R with G' commuting with Q; G'
        splits over Q's real isotypic components (the discrete Fourier frequencies k = 0 .. N/2): a real
        PSD block for k = 0 and k = N/2, and for each pair {k, N - k} a block [[A, -C], [C, A]] (A symmetric,
        C antisymmetric: a Hermitian PSD matrix of half the side) in a basis (u, J u) of that component, J
        the complex structure of Q there. Returns ``[(U, kind), ...]`` with G = sum U Z U^T, kind "real" or
        "complex" (Z of the [[A, -C], [C, A]] form); the blocks' sides sum to nb."""
        N = self.N
        if N < 3 or len({len(p) for p in self.points}) != 1:
            return None
        C, Cn = [], []
        for i in range(N):
            for (x, g, _), (xn, gn, _) in zip(self.points[i], self.points[(i + 1) % N], strict=True):
                C += [x[:nb], g[:nb]]
                Cn += [xn[:nb], gn[:nb]]
        for X in iterates:
            for i in range(N):
                C.append(X[i, :nb])
                Cn.append(X[(i + 1) % N, :nb])
        # S on the basis: every basis vector is born as one object (a gradient, x*, a start), a unit row; S
        # sends it to the same object of the next agent; then S must map every recorded row likewise
        S, seen = np.zeros((nb, nb)), np.zeros(nb, dtype=bool)
        for c, cn in zip(C, Cn, strict=True):
            nz = np.flatnonzero(c)
            if len(nz) == 1 and c[nz[0]] == 1.0:
                if seen[nz[0]] and not np.array_equal(S[:, nz[0]], cn):
                    return None
                S[:, nz[0]], seen[nz[0]] = cn, True
        Cm, Cnm = np.array(C), np.array(Cn)
        if not seen.all() or not np.allclose(Cm @ S.T, Cnm, rtol=0,
                                             atol=1e-9 * max(1.0, float(np.max(np.abs(Cnm))))):
            return None  # not shift-equivariant (e.g. agents querying points in different orders)
        powers = [np.eye(nb)]
        for _ in range(N - 1):
            powers.append(S @ powers[-1])
        if not np.allclose(S @ powers[-1], np.eye(nb), rtol=0, atol=1e-9):
            return None
        R = np.linalg.cholesky(sum(P.T @ P for P in powers)).T  # M = R^T R
        Q = np.linalg.solve(R.T, (R @ S).T).T                    # R S R^{-1}
        if not np.allclose(Q.T @ Q, np.eye(nb), rtol=0, atol=1e-8):
            return None
        w, E = np.linalg.eigh(0.5 * (Q + Q.T))
        freq = np.rint(np.arccos(np.clip(w, -1.0, 1.0)) * N / (2 * np.pi)).astype(int)
        if not np.allclose(w, np.cos(2 * np.pi * freq / N), rtol=0, atol=1e-7):
            return None
        blocks: list[tuple[np.ndarray, str]] = []
        for k in sorted(set(freq.tolist())):
            Ek = E[:, freq == k]
            if 2 * k % N == 0:  # k = 0 or N/2: Q = +-I there, any symmetric block commutes
                blocks.append((R.T @ Ek, "real"))
                continue
            theta = 2 * np.pi * k / N
            J = (Ek.T @ Q @ Ek - np.cos(theta) * np.eye(Ek.shape[1])) / np.sin(theta)
            if Ek.shape[1] % 2 or not np.allclose(J @ J, -np.eye(Ek.shape[1]), rtol=0, atol=1e-7):
                return None
            rest, us, vs = np.eye(Ek.shape[1]), [], []
            for _ in range(Ek.shape[1] // 2):  # an orthonormal basis (u_1 .. u_m, J u_1 .. J u_m)
                col = rest[:, int(np.argmax(np.linalg.norm(rest, axis=0)))]
                u = col / np.linalg.norm(col)
                v = J @ u
                us.append(u)
                vs.append(v)
                rest = rest - np.outer(u, u) - np.outer(v, v)
            blocks.append((R.T @ Ek @ np.column_stack(us + vs), "complex"))
        return blocks

    def gossip(self, X: np.ndarray, t: int = 0) -> np.ndarray:
        W = self.setup.W_of(t)
        if W is not None:
            return W @ X
        mean = X.mean(axis=0)
        if np.allclose(X, mean, rtol=0, atol=1e-12):
            return X.copy()  # consensus is a fixed point of every W with W 1 = 1
        deviations = [self.unit(self._new()) for _ in range(self.N - 1)]
        if self.N == 2:
            self.odd.append(self.size - 1)
        deviations.append(-np.sum(deviations, axis=0))  # outputs keep the input's average
        Y = mean + np.array(deviations)
        self.columns.append((t, X.copy(), Y))
        return Y


class _CapacityError(Exception):
    pass


def _quadratic_rows(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Rows vec(sym(l r^T)) for paired rows of ``left`` and ``right``: <l, r> = row @ vec(G)."""
    left, right = np.atleast_2d(left), np.atleast_2d(right)
    outer = left[:, :, None] * right[:, None, :]
    return (0.5 * (outer + outer.transpose(0, 2, 1))).reshape(len(left), -1)


def _build(setup: _Setup, worker: int | None) -> tuple[_GramBuilder, list[np.ndarray], dict[int, np.ndarray],
                                                       list[np.ndarray]]:
    """Run the method on coefficient rows; query every f_i where the criterion, the heterogeneity and the
    initial condition need it (a point no constraint needs only adds variables)."""
    K, N = setup.K, setup.N
    average_ks: set[int] = set()
    if setup.heterogeneity == "averages" or setup.criterion == "gradient":
        average_ks.update(range(K + 1))
    if setup.criterion == "function_value" or (setup.initial == "function_value" and not setup.convex):
        average_ks.add(K)
    if setup.initial == "function_value":
        average_ks.add(0)  # equal starts: x-bar^0 = x0
    capacity = 64
    while True:
        builder = _GramBuilder(setup, capacity)
        try:
            x0 = builder.starts()
            if setup.convex:
                builder.optimum()
            iterates = setup.spec.run(builder, x0, K, np.array(setup.steps), setup.batch, **setup.params)
            if len(iterates) != K + 1:
                raise RuntimeError(f"method {setup.spec.name} returned {len(iterates)} iterates; "
                                   "expected K+1")
            averages = [X.mean(axis=0) for X in iterates]
            avg_grads = {k: builder.grad(np.repeat(averages[k][None, :], N, axis=0))
                         for k in sorted(average_ks)}
            worker_grads = ([builder.grad(np.repeat(X[worker][None, :], N, axis=0)) for X in iterates]
                            if worker is not None else [])
            return builder, iterates, avg_grads, worker_grads
        except _CapacityError:
            capacity *= 2


def _interpolation_rows(setup: _Setup, xs: np.ndarray, gs: np.ndarray,
                        quad: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None) -> np.ndarray:
    """The Gram part of every ordered pair's interpolation inequality (f_a - f_b + row @ vec(G) >= 0); with
    ``quad`` (paired rows -> one number each, e.g. inner products under a given G) its values instead."""
    q = quad or _quadratic_rows
    P = len(xs)
    a_idx, b_idx = np.nonzero(~np.eye(P, dtype=bool))
    dx, dg = xs[a_idx] - xs[b_idx], gs[a_idx] - gs[b_idx]
    L, mu = setup.L, setup.mu
    if not setup.convex:
        return -0.5 * q(gs[a_idx] + gs[b_idx], dx) + (L / 4) * q(dx, dx) - (1 / (4 * L)) * q(dg, dg)
    c = 1.0 / (2.0 * (1.0 - mu / L))
    return -q(gs[b_idx], dx) - c * ((1 / L) * q(dg, dg) + mu * q(dx, dx) - (2 * mu / L) * q(dg, dx))
