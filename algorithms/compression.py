"""Compressors: what a worker puts on the wire instead of its vector, as values with a documented constant.

Two classes (docs/theory.md §18), each compressor C acting on every vector of the last axis on its own:

- **unbiased omega-compressors**: E C(x) = x and E||C(x)||^2 <= (1 + omega) ||x||^2;
- **contractive delta-compressors**: E||C(x) - x||^2 <= (1 - delta) ||x||^2 with delta in (0, 1].

An unbiased omega-compressor divided by 1 + omega is contractive with delta = 1/(1 + omega) (`contractive`):
E||C/(1+w) - x||^2 = E||C||^2/(1+w)^2 - 2||x||^2/(1+w) + ||x||^2 <= (1 - 1/(1+w)) ||x||^2.

The constants (``omega(d)``, ``delta(d)``) depend on the dimension d only; ``bits(d)`` is the length of one
compressed vector in the engine's unit: a float is ``FLOAT_BITS`` = 64 bits (the engine's arrays are
float64), a coordinate index ceil(log2 d) bits, a sign 1 bit. The uncompressed vector is 64 d bits
(`Identity`), so the ledger's ``bits`` of an uncompressed run is 64 d per vector sent.

Randomness: ``compress(Z, rng)`` with one ``numpy.random.Generator`` draws for the whole array; with a
sequence of k generators, axis -2 of Z holds the k configurations of the engine's (n, k, d) arrays (or
(m n, k, d) stacked ones) and configuration j draws from ``rng[j]`` only, so a configuration gets the same
bits alone and inside a batch.

Input: Z is a real numeric array (complex, sparse or non-numeric Z is a TypeError naming Z); ``d`` is an
integer in [1, `MAX_DIMENSION`] = [1, 2**53] (a float64 holds it exactly). A vector holding NaN or an
infinity has no compression: it comes out all NaN (`Identity`: as it is), which the engine's divergence
guard reads as divergence; a finite vector whose compression exceeds the float64 range (random-k's
(d/k) x_i at x_i = 1e308) gets that coordinate as an infinity. No warning escapes either way.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar, Protocol, runtime_checkable

import numpy as np
import scipy.sparse as sp
from decbounds.bounds.validation import require_count

from decbounds.registry import Registry

__all__ = [
    "COMPRESSORS",
    "COMPRESSOR_KINDS",
    "FLOAT_BITS",
    "MAX_DIMENSION",
    "QSGD",
    "Compressor",
    "Contractive",
    "Identity",
    "RandomK",
    "ScaledSign",
    "TopK",
    "contractive",
    "index_bits",
    "make_compressor",
]

#: Bits of one float on the wire (the engine's arrays are float64).
FLOAT_BITS = 64
#: The largest dimension d a compressor's constants take: 2**53, the integers a float64 holds exactly.
MAX_DIMENSION = 2**53
#: The two classes of compressors.
COMPRESSOR_KINDS: tuple[str, ...] = ("unbiased", "contractive")

Randomness = np.random.Generator | Sequence[np.random.Generator] | None


def index_bits(d: int) -> int:
    """ceil(log2 d): the bits of one coordinate index among d (0 for d = 1).

    Parameters
    ----------
    d : int
        The number of coordinates, >= 1.

    Examples
    --------
    >>> [index_bits(d) for d in (1, 2, 10, 1024)]
    [0, 1, 4, 10]
    """
    d = dimension(d)
    return (d - 1).bit_length()  # ceil(log2 d), exact for every integer


def dimension(d: object) -> int:
    """``d`` checked as the dimension of a vector: an integer in [1, `MAX_DIMENSION`] (not a bool or a float).

    Parameters
    ----------
    d : object
        The dimension every compressor's ``bits``, ``omega`` and ``delta`` take.

    Raises
    ------
    TypeError
        If d is not an integer.
    ValueError
        If d < 1 or d > `MAX_DIMENSION`.
    """
    return require_count("d", d, 1, maximum=MAX_DIMENSION, what="integers a float64 holds exactly")


@runtime_checkable
class Compressor(Protocol):
    """What a compressor offers (module docstring).

    ``kind`` is "unbiased" or "contractive"; ``spec`` a string that `make_compressor` turns back into the
    same compressor (what a record holds). ``omega(d)`` (unbiased) and ``delta(d)`` (both kinds: an
    unbiased one's is that of its scaled form, 1/(1 + omega)) are the documented constants; ``bits(d)`` the
    bits of one compressed d-vector; ``compress(Z, rng)`` compresses every vector of Z's last axis.
    """

    @property
    def kind(self) -> str:
        """``"unbiased"`` or ``"contractive"`` (`COMPRESSOR_KINDS`); a class attribute will do."""
        ...

    @property
    def spec(self) -> str:
        """The string `make_compressor` turns back into this compressor (what a record holds)."""
        ...

    def omega(self, d: int) -> float:
        """omega of an unbiased compressor: E||C(x)||^2 <= (1 + omega) ||x||^2 (ValueError for a
        contractive one).

        Parameters
        ----------
        d : int
            The dimension of one vector.
        """
        ...

    def delta(self, d: int) -> float:
        """delta: E||C(x) - x||^2 <= (1 - delta) ||x||^2 (an unbiased one's: 1/(1 + omega), that of its
        scaled form).

        Parameters
        ----------
        d : int
            The dimension of one vector.
        """
        ...

    def bits(self, d: int) -> int:
        """The bits of one compressed d-vector on the wire (a float is ``FLOAT_BITS``).

        Parameters
        ----------
        d : int
            The dimension of one vector.
        """
        ...

    def compress(self, Z: np.ndarray, rng: Randomness = None) -> np.ndarray:
        """Every vector of Z's last axis compressed on its own.

        Parameters
        ----------
        Z : numpy.ndarray
            Vectors along the last axis, e.g. the engine's (n, k, d) arrays.
        rng : numpy.random.Generator, sequence of k Generators, or None
            The randomness of a random compressor (module docstring: with k generators configuration j,
            axis -2, draws from ``rng[j]``); None for a deterministic one.
        """
        ...


def _uniform(shape: tuple[int, ...], rng: Randomness) -> np.ndarray:
    """Uniforms in [0, 1) of ``shape``: from one generator, or with k generators axis -2 (configuration j
    from rng[j], its (..., d) slice drawn in one call)."""
    if rng is None:
        raise ValueError("rng must be a numpy.random.Generator or a sequence of them for a random compressor")
    if isinstance(rng, np.random.Generator):
        return rng.random(shape)
    rngs = list(rng) if isinstance(rng, Sequence) and not isinstance(rng, str) else None
    if rngs is None or not all(isinstance(generator, np.random.Generator) for generator in rngs):
        raise TypeError(f"rng must be a numpy.random.Generator or a sequence of them, one per configuration; "
                        f"got rng={rng!r:.80}")
    if len(shape) < 2 or shape[-2] != len(rngs):
        raise ValueError(f"rng holds {len(rngs)} generators, one per configuration, but the array has shape "
                         f"{shape} (axis -2 holds the configurations)")
    out = np.empty(shape)
    for j, generator in enumerate(rngs):
        out[..., j, :] = generator.random((*shape[:-2], shape[-1]))
    return out


def _checked(Z: np.ndarray) -> np.ndarray:
    """Z as a float array: real and numeric (TypeError naming Z otherwise), a last axis of >= 1 entries."""
    if sp.issparse(Z):
        raise TypeError(f"Z must be a dense array (vectors along the last axis); got a sparse "
                        f"{type(Z).__name__}: pass Z.toarray()")
    raw = np.asarray(Z)
    if raw.dtype.kind not in "fiub":
        what = "complex" if raw.dtype.kind == "c" else f"dtype {raw.dtype}"
        raise TypeError(f"Z must be a real numeric array; got a {what} array of shape {raw.shape}")
    try:
        with np.errstate(over="raise"):
            Z = raw.astype(float, copy=False)
    except FloatingPointError:
        raise ValueError(f"Z holds values beyond the float64 range (dtype {raw.dtype})") from None
    if Z.ndim < 1 or Z.shape[-1] < 1:
        raise ValueError(f"Z must have a last axis of at least one coordinate; got shape {Z.shape}")
    return Z


def _nonfinite_rows(Z: np.ndarray) -> np.ndarray | None:
    """Where a vector of Z holds NaN or an infinity (shape (..., 1)); None when every entry is finite."""
    finite = np.isfinite(Z)
    if finite.all():
        return None
    bad: np.ndarray = ~finite.all(axis=-1, keepdims=True)
    return bad


def _nan_where(bad: np.ndarray | None, out: np.ndarray) -> np.ndarray:
    """The compressed vectors, each vector that held a non-finite entry all NaN (module docstring)."""
    if bad is not None:
        out = np.where(bad, np.nan, out)
    return out


#: Vectors whose largest |x_i| lies in this range have sums of squares (and of |x_i|) in the float64 range
#: for any d <= 2**53, with no subnormal square: they are computed as written; others after scaling.
_PLAIN_RANGE = (1e-140, 1e140)


def _scale_of(Z: np.ndarray) -> np.ndarray | None:
    """None when every vector's max |x_i| is in `_PLAIN_RANGE` (or zero); else max |x_i| per vector (1 for a
    zero one, shape (..., 1)), the factor that keeps sums of squares and of |x_i| in the float64 range."""
    top = np.max(np.abs(Z), axis=-1, keepdims=True)
    if np.all((top == 0) | ((top >= _PLAIN_RANGE[0]) & (top <= _PLAIN_RANGE[1]))):
        return None
    scale: np.ndarray = np.where((top > 0) & np.isfinite(top), top, 1.0)
    return scale


@dataclass(frozen=True)
class Identity:
    """No compression: C(x) = x; omega = 0, delta = 1, 64 d bits.

    Examples
    --------
    >>> Identity().bits(10), Identity().omega(10), Identity().delta(10)
    (640, 0.0, 1.0)
    """

    kind: ClassVar[str] = "unbiased"

    @property
    def spec(self) -> str:
        """The spec ``"identity"``."""
        return "identity"

    def omega(self, d: int) -> float:
        """0: C(x) = x exactly.

        Parameters
        ----------
        d : int
            The dimension of one vector.
        """
        dimension(d)
        return 0.0

    def delta(self, d: int) -> float:
        """1: C(x) = x exactly.

        Parameters
        ----------
        d : int
            The dimension of one vector.
        """
        dimension(d)
        return 1.0

    def bits(self, d: int) -> int:
        """64 d: every coordinate as a float64.

        Parameters
        ----------
        d : int
            The dimension of one vector.
        """
        return FLOAT_BITS * dimension(d)

    def compress(self, Z: np.ndarray, rng: Randomness = None) -> np.ndarray:
        """A copy of Z (no compression).

        Parameters
        ----------
        Z : numpy.ndarray
            Vectors along the last axis, e.g. the engine's (n, k, d) or stacked (m n, k, d) arrays.
        rng : numpy.random.Generator, sequence of k Generators, or None
            The randomness (module docstring: with k generators configuration j, axis -2, draws from
            ``rng[j]``); not used.
        """
        copied: np.ndarray = _checked(Z).copy()
        return copied


@dataclass(frozen=True)
class _Sparsifier:
    """k of d coordinates kept (`_chosen`), each times `_scale`; k values and k indices on the wire,
    k (64 + ceil(log2 d)) bits. The shared part of random-k and top-k."""

    k: int
    name: ClassVar[str] = ""

    def __post_init__(self) -> None:
        require_count("k", self.k, 1, maximum=MAX_DIMENSION, what="the largest dimension")

    @property
    def spec(self) -> str:
        return f"{self.name}:{self.k}"

    def _kept(self, d: int) -> int:
        d = dimension(d)
        if self.k > d:
            raise ValueError(f"k must be at most the dimension d={d}; got k={self.k}")
        return self.k

    def bits(self, d: int) -> int:
        return self._kept(d) * (FLOAT_BITS + index_bits(d))

    def _chosen(self, Z: np.ndarray, k: int, rng: Randomness) -> np.ndarray:
        raise NotImplementedError

    def _scale(self, d: int, k: int) -> float:
        return 1.0

    def compress(self, Z: np.ndarray, rng: Randomness = None) -> np.ndarray:
        Z = _checked(Z)
        d = Z.shape[-1]
        k = self._kept(d)
        bad = _nonfinite_rows(Z)
        keep = self._chosen(Z if bad is None else np.where(np.isnan(Z), np.inf, Z), k, rng)
        out = np.zeros_like(Z)
        with np.errstate(over="ignore", invalid="ignore"):  # (d/k) x_i beyond float64 is inf, by definition
            np.put_along_axis(out, keep, np.take_along_axis(Z, keep, axis=-1) * self._scale(d, k), axis=-1)
        return _nan_where(bad, out)


@dataclass(frozen=True)
class RandomK(_Sparsifier):
    """Random-k sparsification, scaled: C(x) = (d/k) sum_{i in S} x_i e_i, S a uniform k-subset of the d
    coordinates. Unbiased (P(i in S) = k/d) with E||C(x)||^2 = (d/k) ||x||^2 exactly, so omega = d/k - 1.
    Bits: k values and k indices, k (64 + ceil(log2 d)).

    Parameters
    ----------
    k : int
        Coordinates kept, >= 1 (at most d when compressing).

    References
    ----------
    Stich, Cordonnier & Jaggi (2018), Sparsified SGD with memory; docs/theory.md §18.

    Examples
    --------
    >>> C = RandomK(2)
    >>> C.omega(10), C.bits(10)
    (4.0, 136)
    >>> y = C.compress(np.arange(1.0, 11.0), np.random.default_rng(0))
    >>> int(np.count_nonzero(y)), np.unique(y[y != 0] / np.arange(1.0, 11.0)[y != 0]).tolist()
    (2, [5.0])
    """

    kind: ClassVar[str] = "unbiased"
    name: ClassVar[str] = "random_k"

    def omega(self, d: int) -> float:
        """d/k - 1 (E||C(x)||^2 = (d/k) ||x||^2 exactly).

        Parameters
        ----------
        d : int
            The dimension of one vector.
        """
        return d / self._kept(d) - 1.0  # exact: d <= 2**53

    def delta(self, d: int) -> float:
        """1/(1 + omega) = k/d, the delta of its scaled form (`Contractive`).

        Parameters
        ----------
        d : int
            The dimension of one vector.
        """
        return 1.0 / (1.0 + self.omega(d))

    def _chosen(self, Z: np.ndarray, k: int, rng: Randomness) -> np.ndarray:
        # the k smallest of d i.i.d. uniforms: a uniform k-subset
        return np.argpartition(_uniform(Z.shape, rng), k - 1, axis=-1)[..., :k]

    def _scale(self, d: int, k: int) -> float:
        return d / k


@dataclass(frozen=True)
class QSGD:
    """Random quantization with s levels (QSGD, Alistarh et al. 2017): C(x)_i = ||x|| sign(x_i) xi_i / s,
    xi_i = l + 1 with probability r_i - l and l otherwise, r_i = s |x_i| / ||x||, l = floor(r_i).

    Unbiased, and E xi_i^2 = r_i^2 + p_i (1 - p_i) with p_i = r_i - l, so exactly
    E||C(x)||^2 = ||x||^2 (1 + sum_i p_i (1 - p_i) / s^2). Since p (1 - p) <= 1/4 and p (1 - p) <= p <= r_i
    with sum_i r_i = s ||x||_1 / ||x|| <= s sqrt(d): omega = min(d / (4 s^2), sqrt(d) / s) (derived by us;
    Alistarh et al.'s Lemma 3.1 states min(d / s^2, sqrt(d) / s), which it implies). Bits (fixed-length
    code): the norm, and per coordinate a sign and a level in 0..s: 64 + d (1 + ceil(log2 (s + 1))).

    Parameters
    ----------
    s : int
        Quantization levels, >= 1.

    References
    ----------
    Alistarh, Grubic, Li, Tomioka & Vojnovic (2017), QSGD; docs/theory.md §18.

    Examples
    --------
    >>> C = QSGD(2)
    >>> C.omega(16), C.bits(16)
    (1.0, 112)
    """

    s: int
    kind: ClassVar[str] = "unbiased"

    def __post_init__(self) -> None:
        require_count("s", self.s, 1, maximum=MAX_DIMENSION, what="levels a float64 tells apart")

    @property
    def spec(self) -> str:
        """The spec ``"qsgd:S"``."""
        return f"qsgd:{self.s}"

    def omega(self, d: int) -> float:
        """min(d / (4 s^2), sqrt(d) / s) (class docstring).

        Parameters
        ----------
        d : int
            The dimension of one vector.
        """
        d = dimension(d)
        return min(d / (4.0 * self.s**2), math.sqrt(d) / self.s)

    def delta(self, d: int) -> float:
        """1/(1 + omega), the delta of its scaled form (`Contractive`).

        Parameters
        ----------
        d : int
            The dimension of one vector.
        """
        return 1.0 / (1.0 + self.omega(d))

    def bits(self, d: int) -> int:
        """64 + d (1 + ceil(log2(s + 1))): the norm, then a sign and a level per coordinate.

        Parameters
        ----------
        d : int
            The dimension of one vector.
        """
        return FLOAT_BITS + dimension(d) * (1 + index_bits(self.s + 1))

    def levels(self, Z: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(norms (..., 1), r = s |x| / ||x|| (0 where x = 0), floor(r)): what `compress` rounds.

        Parameters
        ----------
        Z : numpy.ndarray
            Vectors along the last axis.
        """
        Z = _checked(Z)
        with np.errstate(over="ignore", invalid="ignore"):
            top = _scale_of(Z)  # ||x|| = top ||x / top||: no overflow of the squares at 1e160
            unit = Z if top is None else Z / top
            norm = np.sqrt(np.add.reduce(unit * unit, axis=-1, keepdims=True))
            safe = np.where(norm > 0, norm, 1.0)
            r = self.s * np.abs(unit) / safe
            return (norm if top is None else top * norm), r, np.floor(r)

    def compress(self, Z: np.ndarray, rng: Randomness = None) -> np.ndarray:
        """||x|| sign(x_i) xi_i / s per vector, xi_i rounding r_i = s |x_i| / ||x|| up with probability
        r_i - floor(r_i).

        Parameters
        ----------
        Z : numpy.ndarray
            Vectors along the last axis, e.g. the engine's (n, k, d) or stacked (m n, k, d) arrays.
        rng : numpy.random.Generator, sequence of k Generators, or None
            The randomness (module docstring: with k generators configuration j, axis -2, draws from
            ``rng[j]``); one uniform per coordinate (required: ValueError for None).
        """
        Z = _checked(Z)
        bad = _nonfinite_rows(Z)
        norm, r, low = self.levels(Z)
        uniforms = _uniform(Z.shape, rng)
        # ||x|| beyond float64 is inf, by definition; a non-finite vector's NaNs are replaced below
        with np.errstate(over="ignore", invalid="ignore"):
            xi = low + (uniforms < r - low)
            quantized: np.ndarray = norm * np.sign(Z) * xi / self.s
        return _nan_where(bad, quantized)


@dataclass(frozen=True)
class TopK(_Sparsifier):
    """Top-k sparsification: keep the k coordinates of largest |x_i| (ties: numpy's argpartition order).
    Deterministic and contractive: ||C(x) - x||^2 is the sum of the d - k smallest x_i^2, at most
    (1 - k/d) ||x||^2 (the smallest d - k of d squares average at most the mean), so delta = k/d.
    Bits: k (64 + ceil(log2 d)).

    Parameters
    ----------
    k : int
        Coordinates kept, >= 1 (at most d when compressing).

    References
    ----------
    Stich, Cordonnier & Jaggi (2018); Koloskova, Stich & Jaggi (2019); docs/theory.md §18.

    Examples
    --------
    >>> TopK(2).compress(np.array([0.5, -3.0, 1.0, 2.0]))
    array([ 0., -3.,  0.,  2.])
    >>> TopK(2).delta(4), TopK(2).bits(4)
    (0.5, 132)
    """

    kind: ClassVar[str] = "contractive"
    name: ClassVar[str] = "top_k"

    def omega(self, d: int) -> float:
        """None: top-k is contractive; always ValueError.

        Parameters
        ----------
        d : int
            The dimension of one vector (not read).

        Raises
        ------
        ValueError
            Always.
        """
        raise ValueError("top_k is contractive, not unbiased: it has a delta, no omega")

    def delta(self, d: int) -> float:
        """k/d: ||C(x) - x||^2 <= (1 - k/d) ||x||^2 (class docstring).

        Parameters
        ----------
        d : int
            The dimension of one vector.
        """
        return self._kept(d) / dimension(d)

    def _chosen(self, Z: np.ndarray, k: int, rng: Randomness) -> np.ndarray:
        return np.argpartition(-np.abs(Z), k - 1, axis=-1)[..., :k]


@dataclass(frozen=True)
class ScaledSign:
    """Scaled sign: C(x) = (||x||_1 / d) sign(x). Deterministic and contractive:
    ||C(x) - x||^2 = ||x||^2 - ||x||_1^2 (2/d - nnz(x)/d^2) <= ||x||^2 - ||x||_1^2 / d, and
    ||x||_1^2 >= ||x||^2, so delta = 1/d (the vector-wise delta(x) = ||x||_1^2 / (d ||x||^2) is at least
    that).
    Bits: one float and d signs, 64 + d.

    References
    ----------
    Karimireddy, Rebjock, Stich & Jaggi (2019), Error feedback fixes SignSGD; Koloskova, Stich & Jaggi (2019);
    docs/theory.md §18.

    Examples
    --------
    >>> ScaledSign().compress(np.array([1.0, -3.0]))
    array([ 2., -2.])
    >>> ScaledSign().delta(2), ScaledSign().bits(2)
    (0.5, 66)
    """

    kind: ClassVar[str] = "contractive"

    @property
    def spec(self) -> str:
        """The spec ``"sign"``."""
        return "sign"

    def omega(self, d: int) -> float:
        """None: the scaled sign is contractive; always ValueError.

        Parameters
        ----------
        d : int
            The dimension of one vector (not read).

        Raises
        ------
        ValueError
            Always.
        """
        raise ValueError("sign is contractive, not unbiased: it has a delta, no omega")

    def delta(self, d: int) -> float:
        """1/d: ||C(x) - x||^2 <= (1 - 1/d) ||x||^2 (class docstring).

        Parameters
        ----------
        d : int
            The dimension of one vector.
        """
        return 1.0 / dimension(d)

    def bits(self, d: int) -> int:
        """64 + d: one float (the scale) and d signs.

        Parameters
        ----------
        d : int
            The dimension of one vector.
        """
        return FLOAT_BITS + dimension(d)

    def compress(self, Z: np.ndarray, rng: Randomness = None) -> np.ndarray:
        """(||x||_1 / d) sign(x) per vector.

        Parameters
        ----------
        Z : numpy.ndarray
            Vectors along the last axis, e.g. the engine's (n, k, d) or stacked (m n, k, d) arrays.
        rng : numpy.random.Generator, sequence of k Generators, or None
            The randomness (module docstring: with k generators configuration j, axis -2, draws from
            ``rng[j]``); not used (deterministic).
        """
        Z = _checked(Z)
        bad = _nonfinite_rows(Z)
        with np.errstate(over="ignore", invalid="ignore"):
            top = _scale_of(Z)  # ||x||_1 / d = top mean(|x| / top) <= top: finite for finite x
            if top is None:
                scale = np.add.reduce(np.abs(Z), axis=-1, keepdims=True) / Z.shape[-1]
            else:
                scale = top * (np.add.reduce(np.abs(Z / top), axis=-1, keepdims=True) / Z.shape[-1])
            signs: np.ndarray = scale * np.sign(Z)
        return _nan_where(bad, signs)


@dataclass(frozen=True)
class Contractive:
    """An unbiased omega-compressor divided by 1 + omega: contractive with delta = 1/(1 + omega) (module
    docstring). The same bits as the compressor it scales (the factor is known to both ends).

    Parameters
    ----------
    base : Compressor
        An unbiased compressor.

    Examples
    --------
    >>> Contractive(RandomK(2)).delta(10), Contractive(RandomK(2)).spec
    (0.2, 'contractive:random_k:2')
    """

    base: Compressor
    kind: ClassVar[str] = "contractive"

    def __post_init__(self) -> None:
        if _require_compressor("base", self.base).kind != "unbiased":
            raise ValueError(f"base must be an unbiased compressor; got {self.base!r}")

    @property
    def spec(self) -> str:
        """The spec ``"contractive:"`` followed by the base's."""
        return f"contractive:{self.base.spec}"

    def omega(self, d: int) -> float:
        """None: the scaled compressor is contractive; always ValueError.

        Parameters
        ----------
        d : int
            The dimension of one vector (not read).

        Raises
        ------
        ValueError
            Always.
        """
        raise ValueError(f"{self.spec} is contractive, not unbiased: it has a delta, no omega")

    def delta(self, d: int) -> float:
        """1/(1 + omega) of the base (module docstring).

        Parameters
        ----------
        d : int
            The dimension of one vector.
        """
        return 1.0 / (1.0 + self.base.omega(d))

    def bits(self, d: int) -> int:
        """The base's bits (the factor 1/(1 + omega) is known to both ends).

        Parameters
        ----------
        d : int
            The dimension of one vector.
        """
        return self.base.bits(d)

    def compress(self, Z: np.ndarray, rng: Randomness = None) -> np.ndarray:
        """The base's compression of Z divided by 1 + omega(d).

        Parameters
        ----------
        Z : numpy.ndarray
            Vectors along the last axis, e.g. the engine's (n, k, d) or stacked (m n, k, d) arrays.
        rng : numpy.random.Generator, sequence of k Generators, or None
            The randomness (module docstring: with k generators configuration j, axis -2, draws from
            ``rng[j]``); passed to the base.
        """
        Z = _checked(Z)
        return self.base.compress(Z, rng) * (1.0 / (1.0 + self.base.omega(Z.shape[-1])))


def contractive(compressor: Compressor) -> Compressor:
    """The compressor itself when contractive; an unbiased one divided by 1 + omega (`Contractive`).

    Parameters
    ----------
    compressor : Compressor
        Unbiased or contractive.

    Examples
    --------
    >>> contractive(TopK(1)) == TopK(1), contractive(QSGD(1)).spec
    (True, 'contractive:qsgd:1')
    """
    kind = _require_compressor("compressor", compressor).kind
    return compressor if kind == "contractive" else Contractive(compressor)


def _require_compressor(name: str, value: object) -> Compressor:
    """``value`` if it offers the `Compressor` protocol with a kind of `COMPRESSOR_KINDS`; TypeError naming
    ``name`` otherwise (a spec string is pointed to `make_compressor`)."""
    if isinstance(value, str):
        raise TypeError(f"{name} must be a Compressor; got the string {value!r}: make_compressor({value!r}) "
                        "builds one")
    if not isinstance(value, Compressor) or getattr(value, "kind", None) not in COMPRESSOR_KINDS:
        raise TypeError(f"{name} must be a Compressor (kind in {COMPRESSOR_KINDS}, spec, omega, delta, bits, "
                        f"compress); got {value!r:.80}")
    return value


#: The compressor registry (the one `decbounds.registry.Registry` mechanism): name -> the class (or builder)
#: that `make_compressor` calls with the spec's integer parameter, if its signature takes one ("top_k:3" is
#: ``TopK(3)``); ``COMPRESSORS.register(name, cls)`` or the entry-point group ``decbounds.compressors`` adds
#: one. "contractive:SPEC" wraps the compressor of SPEC (`Contractive`).
COMPRESSORS: Registry[Callable[..., Compressor]] = Registry("compressor", field="compressor",
                                                            group="decbounds.compressors")
for _name, _builder in (("identity", Identity), ("random_k", RandomK), ("qsgd", QSGD), ("top_k", TopK),
                        ("sign", ScaledSign), ("contractive", Contractive)):
    COMPRESSORS.register(_name, _builder)
del _name, _builder


def _integer_parameter(builder: Callable[..., Compressor]) -> str | None:
    """The name of the integer a spec gives the builder ("k" of ``TopK(k)``), None when it takes none."""
    parameters = list(inspect.signature(builder).parameters)
    return parameters[0] if parameters else None


def _spec_forms() -> str:
    forms = []
    for name, builder in COMPRESSORS.objects().items():
        parameter = "spec" if name == "contractive" else _integer_parameter(builder)
        forms.append(f"{name}:{parameter.upper()}" if parameter else name)
    return ", ".join(forms)


def make_compressor(spec: str | Compressor) -> Compressor:
    """A compressor from its ``spec`` ("identity", "random_k:K", "qsgd:S", "top_k:K", "sign",
    "contractive:SPEC"); a compressor is returned as it is.

    Parameters
    ----------
    spec : str or Compressor

    Raises
    ------
    ValueError
        For an unknown name or a missing or bad parameter (the message lists the forms).
    TypeError
        If ``spec`` is neither a string nor a compressor.

    Examples
    --------
    >>> make_compressor("top_k:3"), make_compressor("contractive:qsgd:2").spec
    (TopK(k=3), 'contractive:qsgd:2')
    """
    if isinstance(spec, Compressor) and not isinstance(spec, str):
        return spec
    if not isinstance(spec, str):
        raise TypeError(f"compressor must be a compressor or its spec string; got {type(spec).__name__}")
    name, _, rest = spec.partition(":")
    if name == "contractive":
        return Contractive(make_compressor(rest))
    if name not in COMPRESSORS:
        raise ValueError(f"compressor must be one of {_spec_forms()}; got {spec!r}")
    builder = COMPRESSORS[name].builder
    parameter = _integer_parameter(builder)
    if parameter is None:
        if rest:
            raise ValueError(f"compressor {name!r} takes no parameter; got {spec!r}")
        built = builder()
    else:
        if not (rest.isascii() and rest.isdigit()):  # int() would also take "2_0", " 2", "+2" and "٣"
            raise ValueError(f"compressor {name!r} needs an integer {parameter} written in the digits 0-9 "
                             f"({name}:{parameter.upper()}); got {spec!r}")
        built = builder(int(rest))
    try:
        return _require_compressor(f"the compressor {name!r} built", built)
    except TypeError as err:
        raise TypeError(f"{err} (its registered builder {builder!r:.60} returns no Compressor)") from None
