"""The zero-chain function of Carmon et al. (2019) used by the lower-bound proof (THEORY.md §4).

    Psi(z) = 0 for z <= 1/2,  exp(1 - 1/(2z - 1)^2) for z > 1/2
    Phi(z) = sqrt(e) * int_{-inf}^z exp(-t^2/2) dt = sqrt(2 pi e) * ndtr(z)     (§11 item 1: minus sign)
    f_hat(x) = -Psi(1) Phi(x_1) + sum_{i=1}^{T-1} link_i(x),
    link_i(x) = Psi(-x_i) Phi(-x_{i+1}) - Psi(x_i) Phi(x_{i+1})

with the constants of Arjevani et al. Lemma 2: f_hat(0) - inf f_hat <= DELTA0 * T, f_hat is L1-smooth,
||grad f_hat||_inf <= G_INF, and ||grad f_hat(x)||_inf >= 1 whenever prog(x) < T (§11 item 3: the gradient).

Only one of Psi(x_i), Psi(-x_i) is non-zero, so with s_i = sign(x_i) a link is
``link_i = -s_i Psi(|x_i|) Phi(s_i x_{i+1})`` and its partial derivatives are
``d/dx_{i+1} = -Psi(|x_i|) Phi'(x_{i+1})`` and ``d/dx_i = -Psi'(|x_i|) Phi(s_i x_{i+1})``: the kernel below
evaluates these with a dozen or two whole-array numpy calls and no loop over workers or coordinates.

`ZeroChainFunctions` is the general local-function object: worker i holds
``f_i(x) = gain * [c0_i * (-Phi(z_1)) + sum_j C_ij link_j(z)]`` at ``z = x / scale``. All weights 1 and
gain = scale = 1 is f_hat itself on every worker (`zero_chain(T, n)`); `instances.hard` builds the rescaled
Setting 1 instance and the Setting 2 split from it.
"""

from __future__ import annotations

import math
import threading

import numpy as np
from scipy.special import ndtr

DELTA0 = 12.0  # f_hat(0) - inf f_hat <= DELTA0 * T   (Arjevani et al. Lemma 2)
L1 = 152.0  # f_hat is L1-smooth
G_INF = 23.0  # ||grad f_hat||_inf <= G_INF

_SQRT_E = math.sqrt(math.e)
_PHI_TOTAL = math.sqrt(2.0 * math.pi * math.e)  # Phi(+inf)
_HALF_SQRT_2PI = 0.5 * math.sqrt(2.0 * math.pi)
# |z| - 1/2 is clipped at this fraction of the scale before 1/(...)^2: there exp(1 - 1/(2v)^2) = exp(-1e6)
# is exactly 0.0 in float64, as Psi is (it underflows for 2v < 0.036), so the clip changes no bit.
_V_FLOOR = 5e-4
# Below this many coordinates scanning X for the active prefix costs more than it saves.
_SCAN_MIN_DIM = 32
# From this many entries (rows x active columns) on, the transcendental work is done only where Psi can be
# non-zero (`_grad_compressed`); below it the dozen extra calls cost more than they save (measured:
# 12 x 6 entries ~9 us dense, ~12 us compressed; 1152 x 6 entries ~160 us dense, 10-80 us compressed).
_COMPRESS_MIN_SIZE = 256


def psi(z: np.ndarray) -> np.ndarray:
    """Psi(z) = exp(1 - 1/(2z - 1)^2) for z > 1/2, else 0 (THEORY.md §4)."""
    z = np.asarray(z, dtype=float)
    u = np.maximum(2.0 * z - 1.0, 2.0 * _V_FLOOR)
    return np.where(z > 0.5, np.exp(1.0 - 1.0 / (u * u)), 0.0)


def phi(z: np.ndarray) -> np.ndarray:
    """Phi(z) = sqrt(e) * int_{-inf}^z exp(-t^2/2) dt = sqrt(2 pi e) ndtr(z) (§11 item 1: exponent -t^2/2)."""
    return _PHI_TOTAL * ndtr(np.asarray(z, dtype=float))


def progress(X: np.ndarray) -> np.ndarray:
    """prog per row: max{i >= 1 : x_i != 0} with 1-based coordinates, 0 for the zero row (THEORY.md §4).

    Zero-respecting: the test is x != 0 exactly, so it is the same for x and for x / scale.
    X of shape (*rows, d) gives an int array of shape (*rows).
    """
    X = np.asarray(X)
    d = X.shape[-1]
    return ((X != 0) * np.arange(1, d + 1)).max(axis=-1)


def active_width(X: np.ndarray) -> int:
    """Largest prog over all rows of X: X[..., w:] == 0 for w = active_width(X). One read of X."""
    d = X.shape[-1]
    columns = np.flatnonzero(np.any(X.reshape(-1, d), axis=0))
    return int(columns[-1]) + 1 if columns.size else 0


class ZeroChainFunctions:
    """Weighted, rescaled zero-chain pieces on n workers; follows `instances.protocol.LocalFunctions`.

    Worker i holds ``f_i(x) = gain * f_hat_i(x / scale)`` with
    ``f_hat_i(z) = c0_i * (-Psi(1) Phi(z_1)) + sum_{j=1}^{T-1} C_ij * link_j(z)``; the weights must average to
    1 over the workers (``mean_i c0_i = 1``, ``mean_i C_ij = 1``) so that ``(1/n) sum_i f_i`` is
    ``gain * f_hat(x / scale)`` exactly; `full_grad` / `full_value` evaluate that average directly.

    Parameters
    ----------
    T : chain length (= dim).
    n : number of workers.
    scale, gain : x is divided by ``scale`` and f multiplied by ``gain`` (THEORY.md §4 rescaling, where
        scale = lambda_s and gain = L lambda_s^2 / l1 or L lambda_s^2 / (3 l1)).
    first_weight : (n,) weights c0 of the first term, or None for all ones.
    link_weight : (n, T-1) weights C of the links, or None for all ones.
    smoothness : the stated L of every local f_i; default ``L1 * gain / scale**2`` (exact for weights 1).

    ``grad(X, width=None)``: ``width`` is an optional promise that ``X[..., width:] == 0`` (e.g. the largest
    progress of a zero-respecting run); without it X is scanned once for its active prefix when d is large.
    Either way the transcendental work covers only the active prefix plus one coordinate, not d.
    """

    def __init__(
        self,
        T: int,
        n: int = 1,
        *,
        scale: float = 1.0,
        gain: float = 1.0,
        first_weight: np.ndarray | None = None,
        link_weight: np.ndarray | None = None,
        smoothness: float | None = None,
    ) -> None:
        if isinstance(T, bool) or not isinstance(T, int | np.integer) or T < 1:
            raise ValueError(f"T (chain length) must be an integer >= 1; got T={T!r}")
        if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
            raise ValueError(f"n (number of workers) must be an integer >= 1; got n={n!r}")
        for name, value in (("scale", scale), ("gain", gain)):
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a finite positive number; got {name}={value!r}")
        self.T = int(T)
        self.n = int(n)
        self.dim = self.T
        self.scale = float(scale)
        self.gain = float(gain)
        self.x0 = np.zeros(self.T)
        self.first_weight = self._check_weights("first_weight", first_weight, (self.n,))
        self.link_weight = self._check_weights("link_weight", link_weight, (self.n, self.T - 1))
        self.smoothness = float(smoothness) if smoothness is not None else L1 * self.gain / self.scale**2
        # Kernel constants with the scaling folded in (s = gain / scale is the gradient factor); 0-d arrays,
        # which numpy broadcasts faster than Python floats.
        s = self.gain / self.scale
        self._first_const = -s * _SQRT_E
        self._constants = {
            name: np.array(value)
            for name, value in (
                ("phi_exp", -0.5 / self.scale**2),  # exp(x^2 * .) = exp(-z^2/2)
                ("half_scale", 0.5 * self.scale),
                ("v_floor", _V_FLOOR * self.scale),
                ("psi_num", -0.25 * self.scale**2),  # exp(shift + . / v^2) = s sqrt(e) Psi(|z|)
                ("log_psi_shift", math.log(s) + 1.5),
                ("inv_scale", 1.0 / self.scale),
                ("dpsi_const", _HALF_SQRT_2PI * self.scale**3),
            )
        }
        self._workspaces: dict[tuple[int, int, int | None, int], dict[str, np.ndarray]] = {}

    @staticmethod
    def _check_weights(name: str, weights: np.ndarray | None, shape: tuple[int, ...]) -> np.ndarray | None:
        if weights is None:
            return None
        weights = np.asarray(weights, dtype=float)
        if weights.shape != shape:
            raise ValueError(f"{name} must have shape {shape}; got {weights.shape}")
        if not np.all(np.isfinite(weights)) or np.any(weights < 0):
            raise ValueError(f"{name} must be finite and non-negative")
        if weights.size and not np.allclose(weights.mean(axis=0), 1.0, rtol=0, atol=1e-12):
            raise ValueError(f"{name} must average to 1 over the workers (so mean_i f_i = f_hat)")
        return weights

    # ----------------------------------------------------------------------------------------------------
    def _check(self, X: np.ndarray) -> np.ndarray:
        if type(X) is not np.ndarray or X.dtype != np.float64:
            X = np.asarray(X, dtype=float)
        if X.ndim < 2 or X.shape[0] != self.n or X.shape[-1] != self.T:
            raise ValueError(
                f"X must have shape (n, *batch, d) = ({self.n}, ..., {self.T}); got shape {X.shape}"
            )
        return X

    def _check_global(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        if x.ndim < 1 or x.shape[-1] != self.T:
            raise ValueError(f"x must have shape (*batch, d) with d = {self.T}; got shape {x.shape}")
        return x

    def _prefix(self, X: np.ndarray, width: int | None) -> int:
        """Columns that can carry a non-zero gradient: the active prefix plus one (zero-chain property)."""
        if width is None:
            if self.T <= _SCAN_MIN_DIM:
                return self.T
            width = active_width(X)
        return min(int(width) + 1, self.T)

    def _workspace(self, rows: int, m: int, per_worker: int | None) -> dict[str, np.ndarray]:
        """Buffers and views for the flat kernel, cached per (rows, m, per_worker, thread).

        ``first``: the first-term constant -c0 s sqrt(e) in column 0 and 0 elsewhere; ``links``: -C in columns
        0..m-2 and 0 in column m-1, which also kills the terms that the flat shift carries from one row's last
        column into the next row's first. ``per_worker`` is the number of rows per worker (None: unweighted,
        for the global f). Reusing buffers and pre-made shifted views matters at small sizes, where each
        numpy call costs about as much as the arithmetic; keying by thread keeps concurrent callers apart.
        """
        key = (rows, m, per_worker, threading.get_ident())
        ws = self._workspaces.get(key)
        if ws is not None:
            return ws
        first = np.zeros((rows, m))
        links = np.zeros((rows, m))
        if per_worker is None or self.first_weight is None:
            first[:, 0] = self._first_const
        else:
            first[:, 0] = np.repeat(self._first_const * self.first_weight, per_worker)
        if per_worker is None or self.link_weight is None:
            links[:, : m - 1] = -1.0
        else:
            links[:, : m - 1] = -np.repeat(self.link_weight[:, : m - 1], per_worker, axis=0)
        size = rows * m
        ws = {name: np.empty(size) for name in ("E", "v", "w", "P", "F", "acc")}
        ws["first"] = first.reshape(-1)
        ws["links"] = links.reshape(-1)
        ws["acc"][0] = ws["first"][0]  # column 0 of row 0 has no predecessor; the kernel never writes it
        # the compressed kernel: Psi(|z_k|) can be non-zero only where v_k > v_floor on a live link (the +inf
        # threshold of a dead link, e.g. each row's last column, keeps k + 1 inside the row)
        ws["threshold"] = np.where(ws["links"] != 0.0, self._constants["v_floor"], np.inf)
        ws["mask"] = np.empty(size, dtype=bool)
        ws["first_idx"] = np.flatnonzero(ws["first"])
        ws["first_vals"] = ws["first"][ws["first_idx"]]
        ws["acc_tail"] = ws["acc"][1:]
        ws["first_tail"] = ws["first"][1:]
        ws["P_prev"] = ws["P"][:-1]
        ws["F_head"] = ws["F"][:-1]
        if len(self._workspaces) > 64:  # bounded: shapes rarely vary within a run
            self._workspaces.clear()
        self._workspaces[key] = ws
        return ws

    def _grad_flat(self, y: np.ndarray, ws: dict[str, np.ndarray]) -> np.ndarray:
        """The gradient of the weighted chain at the rows of y, flat (rows*m,) in C order (a new array).

        The rows are laid end to end, so "the next coordinate" of entry k is entry k+1 and every product of
        neighbours is one contiguous whole-array call; the zero that ``links`` puts in each row's last column
        stops the chain there. Dropping the last column's forward link is exact: either m = T, or column m-1
        is zero in every row and the link's derivatives carry Psi(0) = Psi'(0) = 0. About twenty numpy calls
        whatever the size:

        G_k = E_k (first_k + P_{k-1}) + P_k Phi(s_k z_{k+1}) * 0.5 sqrt(2 pi) scale^3 / v_k^3, where
        E = exp(-z^2/2), P = -C s sqrt(e) Psi(|z|), s = gain/scale, v = |x| - scale/2 (2|z| - 1 = 2v/scale).
        The first part is the first term and d link_{k-1}/d x_k = -Psi(|z_{k-1}|) Phi'(z_k); the second is
        d link_k/d x_k = -Psi'(|z_k|) Phi(s_k z_{k+1}) with Psi'(u) = 4 Psi(u) / (2u - 1)^3.
        """
        k = self._constants
        E, v, w, P, F, acc = ws["E"], ws["v"], ws["w"], ws["P"], ws["F"], ws["acc"]
        np.multiply(y, y, out=E)
        np.multiply(E, k["phi_exp"], out=E)
        np.exp(E, out=E)
        np.abs(y, out=v)
        np.subtract(v, k["half_scale"], out=v)
        np.maximum(v, k["v_floor"], out=v)
        np.multiply(v, v, out=w)
        np.divide(k["psi_num"], w, out=P)
        np.add(P, k["log_psi_shift"], out=P)
        np.exp(P, out=P)
        np.multiply(P, ws["links"], out=P)
        np.add(ws["P_prev"], ws["first_tail"], out=ws["acc_tail"])
        out = np.multiply(acc, E)
        np.sign(y, out=F)
        np.multiply(ws["F_head"], y[1:], out=ws["F_head"])
        if self.scale != 1.0:
            np.multiply(F, k["inv_scale"], out=F)
        ndtr(F, out=F)
        np.multiply(F, P, out=F)
        np.multiply(w, v, out=w)
        np.divide(F, w, out=F)
        np.multiply(F, k["dpsi_const"], out=F)
        np.add(out, F, out=out)
        return out

    def _grad_compressed(self, y: np.ndarray, ws: dict[str, np.ndarray]) -> np.ndarray:
        """`_grad_flat`'s values (the same formula, the same floating-point operations in the same order at
        every non-zero entry), with the transcendental work only where it can be non-zero.

        A = {k : v_k > v_floor on a live link} holds every k with Psi(|z_k|) != 0 (below the floor
        exp(1 - 1/(2v)^2) underflows to 0, as the clip in `_grad_flat` relies on). So
        G_k = first_k E_k (column 0) + P_{k-1} E_k (k - 1 in A) + P_k Phi(s_k z_{k+1}) c / v_k^3 (k in A),
        and every other entry is zero: one ndtr and two exp per active entry instead of per entry. Only the
        sign of some zero entries may differ from `_grad_flat` (+0 here), which no later arithmetic sees.
        Points with a NaN or inf coordinate go to `_grad_flat`, so non-finite values spread as before.
        """
        k = self._constants
        v = ws["v"]
        np.abs(y, out=v)
        np.subtract(v, k["half_scale"], out=v)
        if not math.isfinite(np.add.reduce(v)):
            return self._grad_flat(y, ws)  # NaN/inf must propagate exactly as before (divergence detection)
        active = np.flatnonzero(np.greater(v, ws["threshold"], out=ws["mask"]))
        out = np.zeros(y.size)
        first_idx = ws["first_idx"]
        E = y[first_idx]
        np.multiply(E, E, out=E)
        np.multiply(E, k["phi_exp"], out=E)
        np.exp(E, out=E)
        np.multiply(ws["first_vals"], E, out=E)
        out[first_idx] = E  # acc_k = P_{k-1} + first_k = first_k: P of a row's last column is 0
        if active.size == 0:
            return out
        v_active = v[active]
        w = np.multiply(v_active, v_active)
        P = np.divide(k["psi_num"], w)
        np.add(P, k["log_psi_shift"], out=P)
        np.exp(P, out=P)
        np.multiply(P, ws["links"][active], out=P)
        following = active + 1  # inside the row: a row's last column is never active
        y_next = y[following]
        E = np.multiply(y_next, y_next)
        np.multiply(E, k["phi_exp"], out=E)
        np.exp(E, out=E)
        np.multiply(P, E, out=E)  # acc_{k+1} = P_k + first_{k+1} = P_k (column >= 1)
        out[following] = E
        F = np.sign(y[active])
        np.multiply(F, y_next, out=F)
        if self.scale != 1.0:
            np.multiply(F, k["inv_scale"], out=F)
        ndtr(F, out=F)
        np.multiply(F, P, out=F)
        np.multiply(w, v_active, out=w)
        np.divide(F, w, out=F)
        np.multiply(F, k["dpsi_const"], out=F)
        out[active] += F
        return out

    def _grad_rows(self, Y: np.ndarray, m: int, per_worker: int | None) -> np.ndarray:
        """Gradient (..., d) at the points Y (..., d), computed on the first m columns; per_worker as in
        `_workspace`."""
        rows = Y.size // self.T
        ws = self._workspace(rows, m, per_worker)
        kernel = self._grad_flat if rows * m < _COMPRESS_MIN_SIZE else self._grad_compressed
        if m == self.T:
            y = Y.reshape(-1) if Y.flags.c_contiguous else np.ascontiguousarray(Y).reshape(-1)
            return kernel(y, ws).reshape(Y.shape)
        g = kernel(np.ascontiguousarray(Y[..., :m]).reshape(-1), ws)
        # Column-major, so the non-zero prefix is one contiguous block at the start of lazily zeroed memory:
        # only its pages are touched, and the call's cost follows m, not d (same values as C order).
        out = np.zeros(Y.shape, order="F")
        out[..., :m] = g.reshape((*Y.shape[:-1], m))
        return out

    def _values(self, Z: np.ndarray, weighted: bool) -> np.ndarray:
        """gain * f_hat_i(Z) for unscaled points Z (n, *batch, m) (weighted) or (*batch, m) (the average f);
        column m-1 starts no live link (as in `_grad_rows`)."""
        m = Z.shape[-1]
        pad = (1,) * (Z.ndim - 2)
        value = -_PHI_TOTAL * ndtr(Z[..., 0])
        if weighted and self.first_weight is not None:
            value = value * self.first_weight.reshape((self.n, *pad))
        if m > 1:
            head = Z[..., :-1]
            sign = np.sign(head)
            links = -sign * psi(np.abs(head)) * (_PHI_TOTAL * ndtr(sign * Z[..., 1:]))
            if weighted and self.link_weight is not None:
                links = links * self.link_weight[:, : m - 1].reshape((self.n, *pad, m - 1))
            value = value + links.sum(axis=-1)
        return self.gain * value

    # --- protocol ---------------------------------------------------------------------------------------
    def grad(self, X: np.ndarray, width: int | None = None) -> np.ndarray:
        """Exact local gradients (n, *batch, d): gain/scale * grad f_hat_i(X/scale), zero past prog + 1."""
        X = self._check(X)
        return self._grad_rows(X, self._prefix(X, width), X.size // (self.n * self.T))

    def value(self, X: np.ndarray, width: int | None = None) -> np.ndarray:
        """Local values (n, *batch)."""
        X = self._check(X)
        return self._values(X[..., : self._prefix(X, width)] / self.scale, weighted=True)

    def full_grad(self, x: np.ndarray, width: int | None = None) -> np.ndarray:
        """Gradient of f = mean_i f_i = gain * f_hat(x / scale) at x of shape (*batch, d)."""
        x = self._check_global(x)
        return self._grad_rows(x, self._prefix(x, width), None)

    def full_value(self, x: np.ndarray, width: int | None = None) -> np.ndarray:
        """f = gain * f_hat(x / scale) at x of shape (*batch, d)."""
        x = self._check_global(x)
        return self._values(x[..., : self._prefix(x, width)] / self.scale, weighted=False)

    def progress(self, X: np.ndarray) -> np.ndarray:
        """prog per row (n, *batch): the last non-zero coordinate (1-based), 0 for a zero row."""
        return progress(X)

    prog = progress

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(T={self.T}, n={self.n}, scale={self.scale:g}, gain={self.gain:g}, "
            f"smoothness={self.smoothness:g})"
        )


def zero_chain(T: int, n: int = 1) -> ZeroChainFunctions:
    """The unscaled zero-chain f_hat of chain length T on n workers that all hold it (THEORY.md §4).

    dim = T, x0 = 0, smoothness = L1 = 152; constants DELTA0 = 12, L1 = 152, G_INF = 23 (module level).
    """
    return ZeroChainFunctions(T, n)
