"""Compressors: what a worker puts on the wire instead of its vector (docs/theory.md §18), each acting on
every vector of the last axis on its own: unbiased omega-compressors (E C(x) = x, E||C(x)||^2 <= (1 + omega)
||x||^2) and contractive delta-compressors (E||C(x) - x||^2 <= (1 - delta) ||x||^2, delta in (0, 1]); an
unbiased one divided by 1 + omega is contractive with delta = 1/(1 + omega) (`contractive`).

``bits(d)``: one compressed vector, a float ``FLOAT_BITS`` = 64 bits, an index ceil(log2 d), a sign 1.
With k generators, axis -2 of Z holds the k configurations and configuration j draws from ``rng[j]`` only
(the same bits alone and in a batch). A vector holding NaN or an infinity comes out all NaN
(`Identity`: as it is)."""

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

    Examples
    --------
    >>> [index_bits(d) for d in (1, 2, 10, 1024)]
    [0, 1, 4, 10]
    """
    d = dimension(d)
    return (d - 1).bit_length()  # ceil(log2 d), exact for every integer


def dimension(d: object) -> int:
    """``d`` checked as a vector's dimension: an integer in [1, `MAX_DIMENSION`] (TypeError, ValueError).

    Parameters
    ----------
    d : object
    """
    return require_count("d", d, 1, maximum=MAX_DIMENSION, what="integers a float64 holds exactly")


@runtime_checkable
class Compressor(Protocol):
    """What a compressor offers: ``kind`` ("unbiased" or "contractive"), ``spec`` (what `make_compressor`
    turns back into it), the constants ``omega(d)``, ``delta(d)``, ``bits(d)`` and ``compress(Z, rng)``."""

    @property
    def kind(self) -> str:
        """``"unbiased"`` or ``"contractive"`` (`COMPRESSOR_KINDS`); a class attribute will do."""
        ...

    @property
    def spec(self) -> str:
        """The string `make_compressor` turns back into this compressor (what a record holds)."""
        ...

    def omega(self, d: int) -> float:
        """omega: E||C(x)||^2 <= (1 + omega) ||x||^2 (ValueError for a contractive compressor).

        Parameters
        ----------
        d : int
        """
        ...

    def delta(self, d: int) -> float:
        """delta: E||C(x) - x||^2 <= (1 - delta) ||x||^2 (an unbiased one's: 1/(1 + omega)).

        Parameters
        ----------
        d : int
        """
        ...

    def bits(self, d: int) -> int:
        """The bits of one compressed d-vector.

        Parameters
        ----------
        d : int
        """
        ...

    def compress(self, Z: np.ndarray, rng: Randomness = None) -> np.ndarray:
        """Every vector of Z's last axis compressed on its own.

        Parameters
        ----------
        Z : numpy.ndarray
        rng : numpy.random.Generator, sequence of k Generators, or None
            With k generators configuration j (axis -2) draws from ``rng[j]``.
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
        """0.

        Parameters
        ----------
        d : int
        """
        dimension(d)
        return 0.0

    def delta(self, d: int) -> float:
        """1.

        Parameters
        ----------
        d : int
        """
        dimension(d)
        return 1.0

    def bits(self, d: int) -> int:
        """64 d.

        Parameters
        ----------
        d : int
        """
        return FLOAT_BITS * dimension(d)

    def compress(self, Z: np.ndarray, rng: Randomness = None) -> np.ndarray:
        """A copy of Z.

        Parameters
        ----------
        Z : numpy.ndarray
        rng : numpy.random.Generator, sequence of k Generators, or None
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
    """Random-k sparsification, scaled: C(x) = (d/k) sum_{i in S} x_i e_i, S a uniform k-subset; unbiased with
    E||C(x)||^2 = (d/k) ||x||^2, so omega = d/k - 1; k (64 + ceil(log2 d)) bits (Stich et al. 2018).

    Parameters
    ----------
    k : int
        Coordinates kept, >= 1 (at most d).

    Examples
    --------
    >>> C = RandomK(2)
    >>> C.omega(10), C.bits(10)
    (4.0, 136)
    """

    kind: ClassVar[str] = "unbiased"
    name: ClassVar[str] = "random_k"

    def omega(self, d: int) -> float:
        """d/k - 1.

        Parameters
        ----------
        d : int
        """
        return d / self._kept(d) - 1.0  # exact: d <= 2**53

    def delta(self, d: int) -> float:
        """k/d, the delta of its scaled form.

        Parameters
        ----------
        d : int
        """
        return 1.0 / (1.0 + self.omega(d))

    def _chosen(self, Z: np.ndarray, k: int, rng: Randomness) -> np.ndarray:
        # the k smallest of d i.i.d. uniforms: a uniform k-subset
        return np.argpartition(_uniform(Z.shape, rng), k - 1, axis=-1)[..., :k]

    def _scale(self, d: int, k: int) -> float:
        return d / k


@dataclass(frozen=True)
class QSGD:
    """Random quantization with s levels (QSGD, Alistarh et al. 2017): C(x)_i = ||x|| sign(x_i) xi_i / s, xi_i
    rounding r_i = s |x_i| / ||x|| up with probability r_i - floor(r_i). omega = min(d / (4 s^2), sqrt(d) / s)
    (derived by us, as p (1 - p) <= 1/4 and <= r_i; Lemma 3.1 states min(d / s^2, sqrt(d) / s));
    64 + d (1 + ceil(log2 (s + 1))) bits.

    Parameters
    ----------
    s : int
        Quantization levels, >= 1.

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
        """min(d / (4 s^2), sqrt(d) / s).

        Parameters
        ----------
        d : int
        """
        d = dimension(d)
        return min(d / (4.0 * self.s**2), math.sqrt(d) / self.s)

    def delta(self, d: int) -> float:
        """1/(1 + omega).

        Parameters
        ----------
        d : int
        """
        return 1.0 / (1.0 + self.omega(d))

    def bits(self, d: int) -> int:
        """64 + d (1 + ceil(log2(s + 1))): the norm, then a sign and a level per coordinate.

        Parameters
        ----------
        d : int
        """
        return FLOAT_BITS + dimension(d) * (1 + index_bits(self.s + 1))

    def levels(self, Z: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(norms (..., 1), r = s |x| / ||x|| (0 where x = 0), floor(r)): what `compress` rounds.

        Parameters
        ----------
        Z : numpy.ndarray
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
        """||x|| sign(x_i) xi_i / s per vector (one uniform per coordinate: rng required).

        Parameters
        ----------
        Z : numpy.ndarray
        rng : numpy.random.Generator, sequence of k Generators, or None
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
    """Top-k sparsification: the k coordinates of largest |x_i| (ties: argpartition's order); contractive with
    delta = k/d (the d - k smallest squares average at most the mean); k (64 + ceil(log2 d)) bits.

    Parameters
    ----------
    k : int
        Coordinates kept, >= 1 (at most d).

    Examples
    --------
    >>> TopK(2).compress(np.array([0.5, -3.0, 1.0, 2.0]))
    array([ 0., -3.,  0.,  2.])
    """

    kind: ClassVar[str] = "contractive"
    name: ClassVar[str] = "top_k"

    def omega(self, d: int) -> float:
        """Always ValueError: top-k is contractive.

        Parameters
        ----------
        d : int
        """
        raise ValueError("top_k is contractive, not unbiased: it has a delta, no omega")

    def delta(self, d: int) -> float:
        """k/d.

        Parameters
        ----------
        d : int
        """
        return self._kept(d) / dimension(d)

    def _chosen(self, Z: np.ndarray, k: int, rng: Randomness) -> np.ndarray:
        return np.argpartition(-np.abs(Z), k - 1, axis=-1)[..., :k]


@dataclass(frozen=True)
class ScaledSign:
    """Scaled sign: C(x) = (||x||_1 / d) sign(x); contractive with delta = 1/d (||C(x) - x||^2 <= ||x||^2 -
    ||x||_1^2 / d and ||x||_1 >= ||x||); 64 + d bits (Karimireddy et al. 2019).

    Examples
    --------
    >>> ScaledSign().compress(np.array([1.0, -3.0]))
    array([ 2., -2.])
    """

    kind: ClassVar[str] = "contractive"

    @property
    def spec(self) -> str:
        """The spec ``"sign"``."""
        return "sign"

    def omega(self, d: int) -> float:
        """Always ValueError: the scaled sign is contractive.

        Parameters
        ----------
        d : int
        """
        raise ValueError("sign is contractive, not unbiased: it has a delta, no omega")

    def delta(self, d: int) -> float:
        """1/d.

        Parameters
        ----------
        d : int
        """
        return 1.0 / dimension(d)

    def bits(self, d: int) -> int:
        """64 + d: the scale and d signs.

        Parameters
        ----------
        d : int
        """
        return FLOAT_BITS + dimension(d)

    def compress(self, Z: np.ndarray, rng: Randomness = None) -> np.ndarray:
        """(||x||_1 / d) sign(x) per vector (deterministic).

        Parameters
        ----------
        Z : numpy.ndarray
        rng : numpy.random.Generator, sequence of k Generators, or None
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
    """An unbiased omega-compressor divided by 1 + omega: delta = 1/(1 + omega), the base's bits.

    Parameters
    ----------
    base : Compressor
        An unbiased compressor.
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
        """Always ValueError: the scaled compressor is contractive.

        Parameters
        ----------
        d : int
        """
        raise ValueError(f"{self.spec} is contractive, not unbiased: it has a delta, no omega")

    def delta(self, d: int) -> float:
        """1/(1 + omega) of the base.

        Parameters
        ----------
        d : int
        """
        return 1.0 / (1.0 + self.base.omega(d))

    def bits(self, d: int) -> int:
        """The base's bits (the factor is known to both ends).

        Parameters
        ----------
        d : int
        """
        return self.base.bits(d)

    def compress(self, Z: np.ndarray, rng: Randomness = None) -> np.ndarray:
        """The base's compression divided by 1 + omega(d).

        Parameters
        ----------
        Z : numpy.ndarray
        rng : numpy.random.Generator, sequence of k Generators, or None
        """
        Z = _checked(Z)
        return self.base.compress(Z, rng) * (1.0 / (1.0 + self.base.omega(Z.shape[-1])))


def contractive(compressor: Compressor) -> Compressor:
    """The compressor when contractive; an unbiased one divided by 1 + omega (`Contractive`).

    Parameters
    ----------
    compressor : Compressor
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
    "contractive:SPEC"; ValueError naming the forms); a compressor comes back as it is.

    Parameters
    ----------
    spec : str or Compressor

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
