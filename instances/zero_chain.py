"""The zero-chain function of Carmon et al. (2019) used by the lower-bound proof (docs/theory.md §4).

    Psi(z) = 0 for z <= 1/2,  exp(1 - 1/(2z - 1)^2) for z > 1/2
    Phi(z) = sqrt(e) * int_{-inf}^z exp(-t^2/2) dt = sqrt(2 pi e) * ndtr(z)     (errata E1: minus sign)
    f_hat(x) = -Psi(1) Phi(x_1) + sum_{i=1}^{T-1} link_i(x),
    link_i(x) = Psi(-x_i) Phi(-x_{i+1}) - Psi(x_i) Phi(x_{i+1})

with the constants of Arjevani et al. Lemma 2: f_hat(0) - inf f_hat <= DELTA0 * T, f_hat is L1-smooth,
||grad f_hat||_inf <= G_INF, and ||grad f_hat(x)||_inf >= 1 whenever prog(x) < T (errata E3: the gradient).
`ZeroChainFunctions` holds weighted, rescaled pieces on n workers. See docs/theory.md §4.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
from decbounds.bounds.constants import ZERO_CHAIN_GRAD_INF, ZERO_CHAIN_RANGE, ZERO_CHAIN_SMOOTHNESS
from decbounds.bounds.validation import (
    describe_int,
    require_count,
    require_real,
    require_real_array,
    require_size,
)
from scipy.special import ndtr

__all__ = [
    "DELTA0",
    "DENSE_ENTRIES",
    "G_INF",
    "L1",
    "ChainInputs",
    "ZeroChainFunctions",
    "active_width",
    "chain_gradient",
    "chain_gradient_dense",
    "phi",
    "progress",
    "psi",
    "zero_chain",
]

# The constants of Arjevani et al. Lemma 2, defined once in bounds.constants (floats here)
DELTA0 = float(ZERO_CHAIN_RANGE)  # f_hat(0) - inf f_hat <= DELTA0 * T
L1 = float(ZERO_CHAIN_SMOOTHNESS)  # f_hat is L1-smooth
G_INF = float(ZERO_CHAIN_GRAD_INF)  # ||grad f_hat||_inf <= G_INF

_SQRT_E = math.sqrt(math.e)
_PHI_TOTAL = math.sqrt(2.0 * math.pi * math.e)  # Phi(+inf)
_HALF_SQRT_2PI = 0.5 * math.sqrt(2.0 * math.pi)
# |z| - 1/2 is clipped at this fraction of the scale before 1/(...)^2: there exp(1 - 1/(2v)^2) = exp(-1e6)
# is exactly 0.0 in float64, as Psi is (it underflows for 2v < 0.036), so the clip changes no bit.
_V_FLOOR = 5e-4
# Inputs of at most this many entries take the dense form of the gradient (`chain_gradient_dense`).
DENSE_ENTRIES = 256
# Below this many coordinates scanning X for the active prefix costs more than it saves.
_SCAN_MIN_DIM = 32


class ChainInputs(NamedTuple):
    """Per-entry inputs of `chain_gradient` for rows x m points (flat, C order), made once per shape:
    ``first`` = -c0 s sqrt(e) per row, ``links`` = -C s e^1.5 per entry, ``threshold`` where a link is active.
    """

    first: np.ndarray
    links: np.ndarray
    threshold: np.ndarray


def chain_gradient(y: np.ndarray, m: int, inputs: ChainInputs, constants: tuple[float, ...]) -> np.ndarray:
    """The zero-chain gradient at the rows of y (flat, rows x m in C order) as a new flat array (see
    `ZeroChainFunctions._grad_rows` for the formula; docs/theory.md §4.1 (Z4)).

    Parameters
    ----------
    y : numpy.ndarray of float64, shape (rows * m,)
        The points, C-ordered rows of m columns (the first m coordinates; the rest are zero).
    m : int
        Columns per row, >= 1.
    inputs : ChainInputs
    constants : tuple of float
    """
    if y.size <= DENSE_ENTRIES:
        out = chain_gradient_dense(y, m, inputs, constants)
        if not math.isfinite(np.add.reduce(np.abs(y))):
            _mark_nonfinite_rows(y, m, out)
        return out
    first, links, threshold = inputs
    phi_exp, half_scale, _, psi_num, _, inv_scale, dpsi_const = constants
    rows = y.size // m
    magnitude = np.abs(y)
    # |x| > scale/2 + v_floor rather than |x| - scale/2 > v_floor: one pass fewer over all entries, and an
    # entry that rounding puts on the other side of the floor has Psi = 0 either way (exact zeros)
    active = np.greater(magnitude, threshold).nonzero()[0]  # NaN compares False
    count = active.size
    following = active + 1  # inside the row: a row's last column is never active (its link is 0)
    # the exponents: [psi of each active link | -z^2/2 of each row's first entry | of each active k + 1]
    exponents = np.empty(count + rows + count)
    psi_part, gauss_part = exponents[:count], exponents[count:]
    v_active = magnitude[active]
    v_active -= half_scale
    w = np.multiply(v_active, v_active)
    np.divide(psi_num, w, out=psi_part)
    y_first, y_next = y[::m], y[following]
    np.multiply(y_first, y_first, out=gauss_part[:rows])
    np.multiply(y_next, y_next, out=gauss_part[rows:])
    gauss_part *= phi_exp
    np.exp(exponents, out=exponents)
    out = np.zeros(y.size)
    np.multiply(first, gauss_part[:rows], out=out[::m])
    if count:
        P = psi_part
        P *= links[active]  # P_k = -C_k s sqrt(e) Psi(|z_k|) (links holds -C s e^1.5)
        out[following] = P * gauss_part[rows:]  # + P_k E_{k+1}: column k + 1 >= 1 holds nothing yet
        term = np.sign(y[active])
        term *= y_next
        if inv_scale != 1.0:
            term *= inv_scale
        ndtr(term, out=term)
        term *= P
        w *= v_active
        term /= w
        term *= dpsi_const
        out[active] += term
    if not math.isfinite(np.add.reduce(magnitude)):  # a NaN or inf (or a sum overflowing: harmless)
        _mark_nonfinite_rows(y, m, out)
    return out


def _mark_nonfinite_rows(y: np.ndarray, m: int, out: np.ndarray) -> None:
    """NaN in every row of ``out`` whose point has a NaN or an inf: f has no gradient there, and a finite
    number (the formula's limit, often 0) would hide a diverged state."""
    Y, G = y.reshape(-1, m), out.reshape(-1, m)
    bad = ~np.isfinite(Y).all(axis=1)
    G[bad] = np.nan


def chain_gradient_dense(y: np.ndarray, m: int, inputs: ChainInputs,
                         constants: tuple[float, ...]) -> np.ndarray:
    """`chain_gradient` (same bits) with every term of the formula at every entry:
    G_k = acc_k E_k + P_k ndtr(s_k z_{k+1}) dpsi / v_k^3 with acc_k = first_k in column 0 and P_{k-1}
    elsewhere, v clipped at v_floor (where Psi underflows to 0) and z_{k+1} := 1 past a row's end (whose
    link is 0).

    Parameters
    ----------
    y : numpy.ndarray of float64, shape (rows * m,)
        The points, C-ordered rows of m columns; at most ``DENSE_ENTRIES`` entries is where it pays.
    m : int
    inputs : ChainInputs
    constants : tuple of float
    """
    phi_exp, half_scale, v_floor, psi_num, _, inv_scale, dpsi_const = constants
    first, links, _ = inputs
    size = y.size
    v = np.abs(y)
    v -= half_scale
    np.maximum(v, v_floor, out=v)
    w = np.multiply(v, v)
    exponents = np.empty(2 * size)  # [psi exponent | -z^2/2] per entry
    P, E = exponents[:size], exponents[size:]
    np.divide(psi_num, w, out=P)
    np.multiply(y, y, out=E)
    E *= phi_exp
    np.exp(exponents, out=exponents)
    P *= links
    out = np.empty(size)
    np.multiply(P[:-1], E[1:], out=out[1:])  # acc_k E_k with acc_k = P_{k-1} ...
    np.multiply(first, E[::m], out=out[::m])  # ... but the first term in column 0 (no previous row's P)
    term = np.sign(y)
    term[:-1] *= y[1:]
    np.sign(y[m - 1 :: m], out=term[m - 1 :: m])  # z_{k+1} := 1 past a row's end (not the next row's z_1)
    if inv_scale != 1.0:
        term *= inv_scale
    ndtr(term, out=term)
    term *= P
    w *= v
    term /= w
    term *= dpsi_const
    out += term
    return out


class _SmallKernel:
    """`chain_gradient_dense` for points of one shape with at most ``DENSE_ENTRIES`` entries, its constants
    and scratch made once: about 20 numpy calls on contiguous arrays instead of 40, with the same bits.
    """

    __slots__ = ("E", "ET", "E_next", "P", "PE", "P_prev", "T", "T_head", "V", "W", "Y", "Y_in", "Y_in2",
                 "Y_next", "dpsi", "floor", "half", "limit", "links", "ones", "out_view", "psi_pad", "scales",
                 "shape", "split")

    def __init__(self, shape: tuple[int, ...], m: int, inputs: ChainInputs, constants: tuple[float, ...],
                 second: tuple[int, ...] | None = None) -> None:
        """``second``: the shape of a second input, whose rows follow X's (``inputs`` covers both)."""
        phi_exp, half_scale, v_floor, psi_num, _, inv_scale, dpsi_const = constants
        self.shape = shape
        rows = math.prod(shape) // m
        rows2 = 0 if second is None else math.prod(second) // m
        L = (rows + rows2) * (m + 1)
        self.V, self.W = np.empty(L), np.empty(L)
        self.Y = np.zeros(L)  # the pad column stays 0
        padded = (*shape[:-1], m + 1)
        self.Y_in = self.Y[: rows * (m + 1)].reshape(padded)[..., 1:]  # where the points go
        PET = np.empty(3 * L)  # [P | E | term]
        self.P, self.E, self.T = PET[:L], PET[L : 2 * L], PET[2 * L :]
        self.PE, self.ET = PET[: 2 * L], PET[L:]
        self.P_prev, self.E_next = self.P[:-1], self.E[1:]
        self.T_head, self.Y_next = self.T[:-1], self.Y[1:]
        if second is None:
            self.Y_in2, self.split = None, None
            self.out_view = self.E.reshape(padded)[..., 1:]
        else:  # the two results are views of one fresh (rows + rows2, m) array
            self.Y_in2 = self.Y[rows * (m + 1) :].reshape(*second[:-1], m + 1)[..., 1:]
            self.out_view = self.E.reshape(rows + rows2, m + 1)[:, 1:]
            self.split = (rows, second)
            self.shape = (rows + rows2, m)
        first, link_values, _ = inputs
        links = np.empty((rows + rows2, m + 1))
        links[:, 0] = first
        links[:, 1:] = link_values.reshape(rows + rows2, m)
        self.links = links.reshape(-1)
        # constants as full arrays: numpy's cheapest operand at this size, the doubles of the Python floats
        self.half = np.full(L, half_scale)
        self.floor = np.full(L, v_floor)
        psi_pad = np.full((rows + rows2, m + 1), psi_num)
        psi_pad[:, 0] = 0.0
        self.psi_pad = psi_pad.reshape(-1)
        self.scales = np.concatenate([np.full(L, phi_exp), np.full(L, inv_scale)])
        self.dpsi = np.full(L, dpsi_const)
        self.ones = np.full(L, _GUARD_SCALE)
        self.limit = _safe_limit(constants, float(np.max(np.abs(self.links), initial=0.0))) * _GUARD_SCALE

    def __call__(self, X: np.ndarray, x: np.ndarray | None = None) -> Any:
        """The gradient at the points X (``shape``, float64), a fresh C-ordered array, or None when X is
        outside the kernel's range (a non-finite or huge coordinate). A kernel made with ``second`` takes a
        second array x and returns the pair of gradients (views of one fresh array)."""
        V, W, Y, P, E, T = self.V, self.W, self.Y, self.P, self.E, self.T
        self.Y_in[...] = X  # (assignment: the cheapest strided copy)
        if x is not None:
            self.Y_in2[...] = x  # type: ignore[index]  # x is given only to a kernel built with `second`
        np.abs(Y, out=V)
        np.subtract(V, self.half, out=V)
        np.maximum(V, self.floor, out=V)  # v, clipped where Psi underflows to 0
        # every v >= v_floor > 0, so their sum bounds each (and a NaN or inf makes it NaN or inf); summed
        # times 2^-664, exactly (a power of two, far from the subnormals), so that no sum can overflow
        if not V.dot(self.ones) <= self.limit:
            return None
        np.multiply(V, V, out=W)
        np.divide(self.psi_pad, W, out=P)  # psi exponents (0 in the pad)
        np.multiply(Y, Y, out=E)
        np.sign(Y, out=T)
        np.multiply(self.T_head, self.Y_next, out=self.T_head)  # s_k x_{k+1}
        np.multiply(self.ET, self.scales, out=self.ET)  # E's exponent -z^2/2, and s_k z_{k+1}
        np.exp(self.PE, out=self.PE)
        np.multiply(P, self.links, out=P)  # [first | P_k] per row
        np.multiply(self.E_next, self.P_prev, out=self.E_next)  # acc = E [first | P_{k-1}]
        ndtr(T, out=T)
        np.multiply(T, P, out=T)
        np.multiply(W, V, out=W)  # v^3
        np.divide(T, W, out=T)
        np.multiply(T, self.dpsi, out=T)
        np.add(E, T, out=E)
        out = np.empty(self.shape)
        out[...] = self.out_view
        if self.split is None:
            return out
        rows, second = self.split
        return out[:rows].reshape(X.shape), out[rows:].reshape(second)


# The kernel's guard sums v times this (`_SmallKernel.__call__`): v >= v_floor >= 5e-34 stays normal and 1e308
# stays far below overflow.
_GUARD_SCALE = 2.0**-664


def _safe_limit(constants: tuple[float, ...], links_max: float) -> float:
    """The largest v = max(|x| - scale/2, v_floor) at which no step of `_SmallKernel` can overflow, so that
    none warns: with v <= 1e100 and 1e-30 < scale < 1e30, v^3, x^2 / scale^2 and x / scale stay below 1e300
    and psi_num / v^2 <= 1e6; the links' terms are checked here. -inf (never fast) otherwise."""
    _, half_scale, v_floor, _, _, _, dpsi_const = constants
    if not (5e-31 < half_scale < 5e29 and math.isfinite(links_max) and links_max < 1e200):
        return -math.inf
    if links_max / v_floor**3 * max(dpsi_const, 1.0) > 1e290:
        return -math.inf
    return 1e100


def psi(z: np.ndarray) -> np.ndarray:
    """Psi(z) = exp(1 - 1/(2z - 1)^2) for z > 1/2, else 0 (Carmon et al. 2019, eq. (10)): a link's gate.

    Parameters
    ----------
    z : array_like of float

    Examples
    --------
    >>> psi(np.array([0.5, 1.0, 2.0])).round(4)
    array([0.    , 1.    , 2.4324])
    """
    z = np.asarray(z, dtype=float)
    u = np.maximum(2.0 * z - 1.0, 2.0 * _V_FLOOR)
    return np.where(z > 0.5, np.exp(1.0 - 1.0 / (u * u)), 0.0)


def phi(z: np.ndarray) -> np.ndarray:
    """Phi(z) = sqrt(e) * int_{-inf}^z exp(-t^2/2) dt = sqrt(2 pi e) ndtr(z) (errata E1: exponent -t^2/2).

    Parameters
    ----------
    z : array_like of float
    """
    return _PHI_TOTAL * ndtr(np.asarray(z, dtype=float))


#: Up to this dimension `progress` reads a row's nonzero pattern as one byte (bit i - 1 for x_i != 0).
_BYTE_CHAIN = 8
_BIT_WEIGHTS = (1 << np.arange(_BYTE_CHAIN)).astype(np.uint8)
_BIT_LENGTH = np.array([value.bit_length() for value in range(1 << _BYTE_CHAIN)], dtype=np.int64)


def progress(X: np.ndarray) -> np.ndarray:
    """prog per row (Carmon et al. 2019, Def. 1): max{i >= 1 : x_i != 0}, 1-based, 0 for the zero row.

    Parameters
    ----------
    X : array_like, shape (*rows, d)

    Examples
    --------
    >>> progress(np.array([[0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]))
    array([2, 0])
    """
    X = np.asarray(X)
    d = X.shape[-1]
    if 0 < d <= _BYTE_CHAIN:
        # a short chain (the verify terms' d = 2, 3, 4): the pattern as a byte, its highest set bit looked up;
        # two numpy calls at any number of rows (the observer of a measured run reads it every iteration)
        nonzero = X if X.dtype == np.bool_ else X != 0
        return np.asarray(_BIT_LENGTH[nonzero.view(np.uint8) @ _BIT_WEIGHTS[:d]])
    return ((X != 0) * np.arange(1, d + 1)).max(axis=-1)


def active_width(X: np.ndarray) -> int:
    """Largest prog over all rows of X: X[..., w:] == 0 for w = active_width(X). One read of X.

    Parameters
    ----------
    X : numpy.ndarray, shape (..., d)
    """
    d = X.shape[-1]
    columns = np.flatnonzero(np.any(X.reshape(-1, d), axis=0))
    return int(columns[-1]) + 1 if columns.size else 0


class ZeroChainFunctions:
    """Weighted, rescaled zero-chain pieces on n workers (`instances.protocol.LocalFunctions`), with the
    constants of Arjevani et al. (2019), Lemma 2.

    Parameters
    ----------
    T : int
        Chain length (= dim), >= 1.
    n : int, default 1
        Number of workers, >= 1; n * T at most 10^8.
    scale, gain : float, default 1.0
        x is divided by ``scale``, f multiplied by ``gain`` (docs/theory.md §4.2-4.3).
    first_weight : array_like, shape (n,), optional
        Weights c0 of the first term, non-negative, averaging to 1 over the workers; None for all ones.
    link_weight : array_like, shape (n, T-1), optional
        Weights C of the links, non-negative, each column averaging to 1; None for all ones.
    smoothness : float, optional
        The stated L of every local f_i; default ``L1 * gain / scale**2`` (exact for weights 1).

    Examples
    --------
    >>> f = ZeroChainFunctions(4, n=2)
    >>> f.full_grad(f.x0).round(4)
    array([-1.6487, -0.    , -0.    ,  0.    ])
    """

    #: Every kernel is elementwise along the chain (instances.protocol, "Bits"): the same bits for a point
    #: alone or in a stack of points, whatever BLAS the machine has.
    pointwise = True

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
        T = require_count("T", T, 1)  # the chain length
        n = require_count("n", n, 1)  # workers
        # the per-worker weights (n, T - 1) and every state (n, T): refused before allocating
        require_size("T", n * T, limit=10**8, detail=f"n * T = {n} * {describe_int(T)}")
        scale, gain = require_real("scale", scale), require_real("gain", gain)
        self.T = int(T)
        self.n = int(n)
        self.dim = self.T
        self.scale = float(scale)
        self.gain = float(gain)
        self.x0 = np.zeros(self.T)
        self.first_weight = self._check_weights("first_weight", first_weight, (self.n,))
        self.link_weight = self._check_weights("link_weight", link_weight, (self.n, self.T - 1))
        self.smoothness = float(smoothness) if smoothness is not None else L1 * self.gain / self.scale**2
        # Constants with the scaling folded in (s = gain / scale is the gradient factor), in the order
        # `chain_gradient` unpacks them (Python floats: cheaper as ufunc operands than numpy scalars)
        s = self.gain / self.scale
        self._first_const = -s * _SQRT_E
        self._constants = (
            -0.5 / self.scale**2,  # phi_exp: exp(x^2 * .) = exp(-z^2/2)
            0.5 * self.scale,  # half_scale
            _V_FLOOR * self.scale,  # v_floor
            -0.25 * self.scale**2,  # psi_num: exp(shift + . / v^2) = s sqrt(e) Psi(|z|)
            math.log(s) + 1.5,  # log_psi_shift (the links carry exp(shift) as a factor)
            1.0 / self.scale,  # inv_scale
            _HALF_SQRT_2PI * self.scale**3,  # dpsi_const
        )
        self._inputs: dict[tuple[int, int, int | None], ChainInputs] = {}
        # `_SmallKernel`s by (thread, shape, per_worker): scratch arrays, so never shared between threads
        self._kernels: dict[tuple[Any, ...], _SmallKernel] = {}

    def __getstate__(self) -> dict[str, Any]:
        # the kernels' scratch is views of one buffer, which a pickle would copy apart: rebuilt on demand
        state = self.__dict__.copy()
        state["_kernels"] = {}
        return state

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
            X = require_real_array("X", X)  # complex input: a TypeError, not a ComplexWarning
        if X.ndim < 2 or X.shape[0] != self.n or X.shape[-1] != self.T:
            raise ValueError(
                f"X must have shape (n, *batch, d) = ({self.n}, ..., {self.T}); got shape {X.shape}"
            )
        return X

    def _check_global(self, x: np.ndarray) -> np.ndarray:
        if type(x) is not np.ndarray or x.dtype != np.float64:
            x = require_real_array("x", x)
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

    def _chain_inputs(self, rows: int, m: int, per_worker: int | None) -> ChainInputs:
        """`ChainInputs` for rows x m points, cached per (rows, m, per_worker). ``per_worker`` is the number
        of rows per worker (None: unweighted, for the global f)."""
        key = (rows, m, per_worker)
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
        threshold = np.where(links != 0.0, self._constants[1] + self._constants[2], np.inf).reshape(-1)
        flat_links = (links * math.exp(self._constants[4])).reshape(-1)
        if len(self._inputs) >= 256:  # bounded: the engine evaluates subsets of a batch, so sizes vary
            self._inputs.clear()
        cached = self._inputs[key] = ChainInputs(first, flat_links, threshold)
        return cached

    def _small(self, X: np.ndarray, per_worker: int | None) -> np.ndarray | None:
        """The gradient at X (float64, every column, at most ``DENSE_ENTRIES`` entries) by the cached
        `_SmallKernel` of X's shape, or None where the kernel does not apply (non-finite or huge entries)."""
        key = (threading.get_ident(), X.shape, per_worker)
        kernel = self._kernels.get(key)  # the hot path: one lookup
        if kernel is None:
            kernel = self._new_kernel(key, lambda: _SmallKernel(
                X.shape, self.T, self._chain_inputs(X.size // self.T, self.T, per_worker), self._constants))
        return kernel(X)

    def _new_kernel(self, key: tuple[Any, ...], build: Callable[[], _SmallKernel]) -> _SmallKernel:
        """Cache ``build()`` under ``key`` (its thread first: scratch is never shared); the cache is bounded,
        as `_inputs`."""
        if len(self._kernels) >= 256:
            self._kernels.clear()
        kernel = self._kernels[key] = build()
        return kernel

    def _grad_rows(self, Y: np.ndarray, m: int, per_worker: int | None) -> np.ndarray:
        """Gradient (..., d) at the points Y (..., d), computed on the first m columns; per_worker as in
        `_chain_inputs`.
        """
        rows = Y.size // self.T
        inputs = self._chain_inputs(rows, m, per_worker)
        # far points (|x| > 1e154) square to inf on the way, and exp(-inf) = 0 is the right factor there:
        # no warning (a caller under -W error would get it as the error)
        with np.errstate(over="ignore", invalid="ignore"):
            if m == self.T:
                y = Y.reshape(-1) if Y.flags.c_contiguous else np.ascontiguousarray(Y).reshape(-1)
                return chain_gradient(y, m, inputs, self._constants).reshape(Y.shape)
            y = np.ascontiguousarray(Y[..., :m]).reshape(-1)
            g = chain_gradient(y, m, inputs, self._constants)
        # Column-major, so the non-zero prefix is one contiguous block at the start of lazily zeroed memory:
        # only its pages are touched, and the call's cost follows m, not d (same values as C order).
        out = np.zeros(Y.shape, order="F")
        out[..., :m] = g.reshape((*Y.shape[:-1], m))
        flagged = np.isnan(g[::m])  # a non-finite point's row is NaN in its first column (chain_gradient)
        if flagged.any():  # the whole row, past the prefix too: the bits must not depend on the prefix
            if Y.ndim == 1:
                out[...] = np.nan
            else:
                out[np.unravel_index(np.flatnonzero(flagged), Y.shape[:-1])] = np.nan
        return out

    def _values(self, Z: np.ndarray, weighted: bool) -> np.ndarray:
        """gain * f_hat_i(Z) for unscaled points Z (n, *batch, m) (weighted) or (*batch, m) (the average f);
        column m-1 starts no live link (as in `_grad_rows`)."""
        with np.errstate(over="ignore", invalid="ignore"):  # far points: Psi's 1/u^2 -> 0, no warning
            return self._values_at(Z, weighted)

    def _values_at(self, Z: np.ndarray, weighted: bool) -> np.ndarray:
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
        """Exact local gradients (n, *batch, d): gain/scale * grad f_hat_i(X/scale), zero past prog + 1.

        Parameters
        ----------
        X : array_like, shape (n, *batch, d)
        width : int, optional
            A promise that ``X[..., width:] == 0``; saves the scan for the active prefix.
        """
        X = self._check(X)
        per_worker = X.size // (self.n * self.T)
        m = self.T if width is None and self.T <= _SCAN_MIN_DIM else self._prefix(X, width)
        if m == self.T and X.size <= DENSE_ENTRIES:  # small states, the engine's inner loop
            G = self._small(X, per_worker)
            if G is not None:
                return G
        return self._grad_rows(X, m, per_worker)

    def grad_and_full_grad(self, X: np.ndarray, x: np.ndarray) -> tuple[np.ndarray | None, np.ndarray]:
        """``(grad(X), full_grad(x))`` with their bits, in one kernel call when both are small (together at
        most ``DENSE_ENTRIES`` entries); otherwise ``(None, full_grad(x))``.

        Parameters
        ----------
        X : numpy.ndarray, shape (n, *batch, d)
        x : numpy.ndarray, shape (*batch2, d)
        """
        X, x = self._check(X), self._check_global(x)
        # one call where grad and full_grad are this class's (a subclass that overrides one gets its own)
        cls = type(self)
        own = cls.grad is ZeroChainFunctions.grad and cls.full_grad is ZeroChainFunctions.full_grad
        small = X.size + x.size <= DENSE_ENTRIES
        if own and small and self._prefix(X, None) == self.T == self._prefix(x, None):
            per_worker = X.size // (self.n * self.T)

            def build() -> _SmallKernel:
                local = self._chain_inputs(X.size // self.T, self.T, per_worker)
                full = self._chain_inputs(x.size // self.T, self.T, None)
                inputs = ChainInputs(*(np.concatenate([a, b]) for a, b in zip(local, full, strict=True)))
                return _SmallKernel(X.shape, self.T, inputs, self._constants, x.shape)

            key = (threading.get_ident(), X.shape, per_worker, x.shape)
            kernel = self._kernels.get(key) or self._new_kernel(key, build)
            pair = kernel(X, x)
            if pair is not None:
                return pair
        return None, self.full_grad(x)

    def value(self, X: np.ndarray, width: int | None = None) -> np.ndarray:
        """Local values gain * f_hat_i(X / scale), worker i's weights on the chain's links.

        Parameters
        ----------
        X : array_like, shape (n, *batch, d)
        width : int, optional
            A promise that ``X[..., width:] == 0``; saves the scan for the active prefix.
        """
        X = self._check(X)
        with np.errstate(over="ignore"):
            return self._values(X[..., : self._prefix(X, width)] / self.scale, weighted=True)

    def full_grad(self, x: np.ndarray, width: int | None = None) -> np.ndarray:
        """Gradient of f = mean_i f_i = gain * f_hat(x / scale) at x of shape (*batch, d).

        Parameters
        ----------
        x : array_like, shape (*batch, d)
        width : int, optional
            A promise that ``x[..., width:] == 0``.
        """
        x = self._check_global(x)
        m = self._prefix(x, width)
        if m == self.T and x.size <= DENSE_ENTRIES:
            g = self._small(x, None)
            if g is not None:
                return g
        return self._grad_rows(x, m, None)

    def full_value(self, x: np.ndarray, width: int | None = None) -> np.ndarray:
        """f = mean_i f_i = gain * f_hat(x / scale).

        Parameters
        ----------
        x : array_like, shape (*batch, d)
        width : int, optional
            A promise that ``x[..., width:] == 0``.
        """
        x = self._check_global(x)
        with np.errstate(over="ignore"):
            return self._values(x[..., : self._prefix(x, width)] / self.scale, weighted=False)

    def progress(self, X: np.ndarray) -> np.ndarray:
        """prog per row: the last non-zero coordinate (1-based), 0 for a zero row (Carmon et al.'s prog,
        docs/theory.md §4.1).

        Parameters
        ----------
        X : numpy.ndarray, shape (n, *batch, d)
        """
        return progress(X)

    prog = progress

    #: `radius` in units of the chain's natural scale, the larger of its coordinate scale and its gradient
    #: bound: well above every entry of the communication figure's converging runs, far below the states of
    #: the runs of Alg. 3 as printed that the gradient test counted as converged (measured values in the
    #: docs/benchmarks.md).
    RADIUS_MULTIPLE = 1000.0

    @property
    def radius(self) -> float:
        """The region the analysis lives in (``instances.protocol``): ``RADIUS_MULTIPLE`` times
        max(scale, G_INF * gain / scale * w_max), w_max the largest worker weight (1 without weights), in the
        sup norm around x0 = 0. A run whose state leaves it is reported diverged."""
        weights = [1.0] + [float(w.max()) for w in (self.first_weight, self.link_weight)
                           if w is not None and w.size]
        return self.RADIUS_MULTIPLE * max(self.scale, G_INF * self.gain / self.scale * max(weights))

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(T={self.T}, n={self.n}, scale={self.scale:g}, gain={self.gain:g}, "
            f"smoothness={self.smoothness:g})"
        )


def zero_chain(T: int, n: int = 1) -> ZeroChainFunctions:
    """The unscaled zero-chain f_hat of chain length T on n workers that all hold it (Carmon et al. 2019).

    Parameters
    ----------
    T : int
    n : int, default 1

    Examples
    --------
    >>> f = zero_chain(10)
    >>> f.smoothness, round(float(f.full_value(f.x0)), 4)
    (152.0, -2.0664)
    """
    return ZeroChainFunctions(T, n)
