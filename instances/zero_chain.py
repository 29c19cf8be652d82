"""The zero-chain function of Carmon et al. (2019) used by the lower-bound proof (THEORY.md §4).

    Psi(z) = 0 for z <= 1/2,  exp(1 - 1/(2z - 1)^2) for z > 1/2
    Phi(z) = sqrt(e) * int_{-inf}^z exp(-t^2/2) dt = sqrt(2 pi e) * ndtr(z)     (§11 item 1: minus sign)
    f_hat(x) = -Psi(1) Phi(x_1) + sum_{i=1}^{T-1} link_i(x),
    link_i(x) = Psi(-x_i) Phi(-x_{i+1}) - Psi(x_i) Phi(x_{i+1})

with the constants of Arjevani et al. Lemma 2: f_hat(0) - inf f_hat <= DELTA0 * T, f_hat is L1-smooth,
||grad f_hat||_inf <= G_INF, and ||grad f_hat(x)||_inf >= 1 whenever prog(x) < T (§11 item 3: the gradient).

Only one of Psi(x_i), Psi(-x_i) is non-zero, so with s_i = sign(x_i) a link is
``link_i = -s_i Psi(|x_i|) Phi(s_i x_{i+1})`` and its partial derivatives are
``d/dx_{i+1} = -Psi(|x_i|) Phi'(x_{i+1})`` and ``d/dx_i = -Psi'(|x_i|) Phi(s_i x_{i+1})``: the compiled
kernels below (numba) evaluate these with the transcendental work only where Psi can be non-zero.

`ZeroChainFunctions` is the general local-function object: worker i holds
``f_i(x) = gain * [c0_i * (-Phi(z_1)) + sum_j C_ij link_j(z)]`` at ``z = x / scale``. All weights 1 and
gain = scale = 1 is f_hat itself on every worker (`zero_chain(T, n)`); `instances.hard` builds the rescaled
Setting 1 instance and the Setting 2 split from it.
"""

from __future__ import annotations

import math
import threading

import numpy as np
from numba import njit
from scipy.special import ndtr

from bounds.constants import ZERO_CHAIN_GRAD_INF, ZERO_CHAIN_RANGE, ZERO_CHAIN_SMOOTHNESS

# The constants of Arjevani et al. Lemma 2, defined once in bounds.constants (floats here for the kernels)
DELTA0 = float(ZERO_CHAIN_RANGE)  # f_hat(0) - inf f_hat <= DELTA0 * T
L1 = float(ZERO_CHAIN_SMOOTHNESS)  # f_hat is L1-smooth
G_INF = float(ZERO_CHAIN_GRAD_INF)  # ||grad f_hat||_inf <= G_INF

_SQRT_E = math.sqrt(math.e)
_PHI_TOTAL = math.sqrt(2.0 * math.pi * math.e)  # Phi(+inf)
_HALF_SQRT_2PI = 0.5 * math.sqrt(2.0 * math.pi)
# |z| - 1/2 is clipped at this fraction of the scale before 1/(...)^2: there exp(1 - 1/(2v)^2) = exp(-1e6)
# is exactly 0.0 in float64, as Psi is (it underflows for 2v < 0.036), so the clip changes no bit.
_V_FLOOR = 5e-4
# Below this many coordinates scanning X for the active prefix costs more than it saves.
_SCAN_MIN_DIM = 32
_SQRT1_2 = math.sqrt(0.5)


@njit(cache=True, nogil=True)
def _ndtr(a: float) -> float:
    """The standard normal CDF, as cephes' ndtr (scipy.special.ndtr) computes it from erf / erfc."""
    if a == 0.0:
        return 0.5  # the chain's frontier, where the next coordinate is still zero
    x = a * _SQRT1_2
    z = abs(x)
    if z < _SQRT1_2:
        return 0.5 + 0.5 * math.erf(x)
    y = 0.5 * math.erfc(z)
    return 1.0 - y if x > 0.0 else y


@njit(cache=True, nogil=True, inline="always")
def _clipped_v(yk: float, constants: np.ndarray) -> tuple[float, float]:
    """(v, v^2) with v = max(|x| - scale/2, v_floor)."""
    v = max(abs(yk) - constants[1], constants[2])
    return v, v * v


@njit(cache=True, nogil=True, inline="always")
def _psi_exponent(w: float, constants: np.ndarray) -> float:
    """psi_num / v^2 + log_psi_shift, so that P = exp(this) * (-C) = -C s sqrt(e) Psi(|z|) (w = v^2)."""
    return constants[3] / w + constants[4]


@njit(cache=True, nogil=True, inline="always")
def _gauss_exponent(yk: float, constants: np.ndarray) -> float:
    """-z^2/2 at x = yk (z = x / scale), so that E = exp(this)."""
    return yk * yk * constants[0]


@njit(cache=True, nogil=True, inline="always")
def _link_term(yk: float, following: float, P: float, v: float, w: float, constants: np.ndarray) -> float:
    """d link_k / d x_k = P_k ndtr(s_k z_{k+1}) * dpsi_const / v^3, s_k = sign(x_k) (NaN for NaN)."""
    sign = (yk > 0.0) - (yk < 0.0) if yk == yk else yk  # np.sign, NaN included
    return _ndtr(sign * following * constants[5]) * P / (w * v) * constants[6]


@njit(cache=True, nogil=True)
def chain_exponents(y: np.ndarray, m: int, links: np.ndarray, constants: np.ndarray, active: np.ndarray,
                    exponents: np.ndarray, mask: np.ndarray) -> tuple[int, bool]:
    """First pass of the zero-chain gradient (see `ZeroChainFunctions._grad_rows`): the active links
    {k : v_k > v_floor, C_k != 0} into ``active`` (their count is returned, with whether y is finite), and
    the exponents whose exp the gradient needs into ``exponents``: -z_0^2/2 per row, then per active link
    that of P_k and -z_{k+1}^2/2.

    Psi(|z_k|) is exactly 0 for v_k <= v_floor (exp(1 - 1/(2v)^2) underflows), so only active links carry
    link terms: the cost follows the active entries. They are found with a branch-free (vectorized) pass
    that writes a byte ``mask`` (y's size rounded up to 8), then a scan of its 8-byte words that looks
    inside the rare non-zero ones: a row-by-row loop whose branches follow the data mispredicts more than
    the arithmetic costs (measured on a 96-configuration batch: 2.8 us against 4.9 us for one branch per
    entry).
    """
    half_scale, v_floor = constants[1], constants[2]
    size = y.shape[0]
    rows = size // m
    finite = True
    for k in range(size):
        mask[k] = (abs(y[k]) - half_scale > v_floor) & (links[k] != 0.0)  # NaN: False
        finite &= y[k] - y[k] == 0.0  # False for NaN and inf
    for k in range(size, mask.shape[0]):
        mask[k] = False
    words = mask.view(np.uint64)
    count = 0
    for i in range(words.shape[0]):
        if words[i] != 0:
            for k in range(8 * i, 8 * i + 8):
                if mask[k]:
                    active[count] = k
                    count += 1
    for row in range(rows):
        exponents[row] = _gauss_exponent(y[row * m], constants)
    for i in range(count):
        k = active[i]
        exponents[rows + 2 * i] = _psi_exponent(_clipped_v(y[k], constants)[1], constants)
        exponents[rows + 2 * i + 1] = _gauss_exponent(y[k + 1], constants)
    return count, finite


@njit(cache=True, nogil=True)
def chain_assemble(y: np.ndarray, m: int, first: np.ndarray, links: np.ndarray, constants: np.ndarray,
                   active: np.ndarray, count: int, exps: np.ndarray, finite: bool, out: np.ndarray) -> None:
    """Second pass: the gradient into ``out`` (zeros on entry) from `chain_exponents`' output, its
    exponents replaced by their exp.

    G_k = E_k (first_k + P_{k-1}) + (link term of k), the terms in increasing k, so out[k] holds
    acc_k E_k when its own link term is added, as the formula orders them. A row (one point) with a NaN or
    inf coordinate is then evaluated again in full, every term at every entry (exp from libm), so that
    non-finite values spread as the formula says (0 * NaN = NaN; divergence detection relies on it).
    """
    rows = y.shape[0] // m
    for row in range(rows):
        out[row * m] = first[row] * exps[row]  # acc_0 = first (+ no P_{-1})
    for i in range(count):
        k = active[i]
        v, w = _clipped_v(y[k], constants)
        P = exps[rows + 2 * i] * links[k]
        out[k] += _link_term(y[k], y[k + 1], P, v, w, constants)
        out[k + 1] = P * exps[rows + 2 * i + 1]  # acc_{k+1} = P_k: column k + 1 >= 1
    if finite:
        return
    for row in range(rows):
        base = row * m
        if math.isfinite(np.sum(y[base : base + m])):
            continue
        carried = 0.0  # P_{k-1}
        for c in range(m):
            k = base + c
            acc = carried + first[row] if c == 0 else carried
            v, w = _clipped_v(y[k], constants)
            P = math.exp(_psi_exponent(w, constants)) * links[k]
            following = y[k + 1] if c + 1 < m else 1.0
            term = _link_term(y[k], following, P, v, w, constants)
            out[k] = acc * math.exp(_gauss_exponent(y[k], constants)) + term
            carried = P


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
        # Kernel constants with the scaling folded in (s = gain / scale is the gradient factor), in the order
        # `chain_gradient` unpacks them
        s = self.gain / self.scale
        self._first_const = -s * _SQRT_E
        self._constants = np.array([
            -0.5 / self.scale**2,  # phi_exp: exp(x^2 * .) = exp(-z^2/2)
            0.5 * self.scale,  # half_scale
            _V_FLOOR * self.scale,  # v_floor
            -0.25 * self.scale**2,  # psi_num: exp(shift + . / v^2) = s sqrt(e) Psi(|z|)
            math.log(s) + 1.5,  # log_psi_shift
            1.0 / self.scale,  # inv_scale
            _HALF_SQRT_2PI * self.scale**3,  # dpsi_const
        ])
        self._inputs: dict[tuple[int, int, int | None, int], tuple[np.ndarray, ...]] = {}

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

    def _kernel_inputs(self, rows: int, m: int, per_worker: int | None) -> tuple[np.ndarray, ...]:
        """(first, links, active, exponents, mask) for the kernels, cached per (rows, m, per_worker,
        thread): ``first`` the first-term constant -c0 s sqrt(e) per row, ``links`` -C per entry (rows x m,
        flat) with 0 in each row's last column, and the kernels' scratch buffers (per thread: the kernels
        release the GIL). ``per_worker`` is the number of rows per worker (None: unweighted, for the global
        f)."""
        key = (rows, m, per_worker, threading.get_ident())
        cached = self._inputs.get(key)
        if cached is not None:
            return cached
        if per_worker is None or self.first_weight is None:
            first = np.full(rows, self._first_const)
        else:
            first = np.repeat(self._first_const * self.first_weight, per_worker)
        links = np.zeros((rows, m))
        if per_worker is None or self.link_weight is None:
            links[:, : m - 1] = -1.0
        else:
            links[:, : m - 1] = -np.repeat(self.link_weight[:, : m - 1], per_worker, axis=0)
        if len(self._inputs) >= 256:  # bounded: the engine evaluates subsets of a batch, so sizes vary
            self._inputs.clear()
        size = rows * m
        cached = self._inputs[key] = (first, links.reshape(-1), np.empty(size, dtype=np.intp),
                                      np.empty(rows + 2 * size), np.empty(-(-size // 8) * 8, dtype=bool))
        return cached

    def _grad_rows(self, Y: np.ndarray, m: int, per_worker: int | None) -> np.ndarray:
        """Gradient (..., d) at the points Y (..., d), computed on the first m columns; per_worker as in
        `_kernel_inputs`.

        With E = exp(-z^2/2), P = -C s sqrt(e) Psi(|z|), s = gain/scale, v = |x| - scale/2 (so that
        2|z| - 1 = 2v/scale):
            G_k = E_k (first_k + P_{k-1}) + P_k ndtr(s_k z_{k+1}) * 0.5 sqrt(2 pi) scale^3 / v_k^3,
        the first term and d link_{k-1}/d x_k = -Psi(|z_{k-1}|) Phi'(z_k), then d link_k/d x_k =
        -Psi'(|z_k|) Phi(s_k z_{k+1}) with Psi'(u) = 4 Psi(u) / (2u - 1)^3; ``first`` holds -c0 s sqrt(e) per
        row and ``links`` -C per entry, 0 in each row's last column (dropping that column's forward link is
        exact: either m = T, or column m-1 is zero and Psi(0) = Psi'(0) = 0).

        Two compiled passes (`chain_exponents`, `chain_assemble`) around one numpy ``exp`` of every exponent
        the active entries need: numpy's vectorized exp costs a fifth of a scalar libm call per value, and
        gives each value the same bits wherever it sits in the array, so a point gets the same gradient
        alone or in a batch (tests/test_kernels.py).
        """
        rows = Y.size // self.T
        first, links, active, exponents, mask = self._kernel_inputs(rows, m, per_worker)
        if m == self.T:
            y = Y.reshape(-1) if Y.flags.c_contiguous else np.ascontiguousarray(Y).reshape(-1)
            out = np.zeros(Y.shape)
            g = out.reshape(-1)
        else:
            y = np.ascontiguousarray(Y[..., :m]).reshape(-1)
            g = np.zeros(rows * m)
        count, finite = chain_exponents(y, m, links, self._constants, active, exponents, mask)
        used = exponents[: rows + 2 * count]
        np.exp(used, out=used)
        chain_assemble(y, m, first, links, self._constants, active, count, exponents, finite, g)
        if m == self.T:
            return out
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
