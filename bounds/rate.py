"""The record type of the catalog: one iteration-complexity bound T_eps as a sum of named sympy terms.

Absolute constants are 1 unless the entry says otherwise (the hard instances carry explicit ones).
Conventions (docs/theory.md §1): ``grad_norm`` is E||grad f(x)|| <= eps, ``grad_norm_sq`` is
E||grad f(x)||^2 <= eps; ``Rate.in_convention`` converts by eps_sq = eps_norm^2.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Callable, Mapping
from functools import cached_property
from types import MappingProxyType
from typing import Any

import numpy as np
import sympy as sp
from decbounds.bounds.symbols import DESCRIPTIONS, INTEGER, NONNEGATIVE, RATE_SYMBOLS, epsilon
from decbounds.bounds.validation import require_real_array
from decbounds.bounds.vocabulary import CONVENTIONS, KINDS, STATUSES

__all__ = ["CONVENTIONS", "KINDS", "STATUSES", "Rate", "RateOverflowError"]


_LATEX_NAMES = {
    RATE_SYMBOLS["lam"]: r"\lambda",
    RATE_SYMBOLS["varsigma"]: r"\varsigma",
    RATE_SYMBOLS["varsigma0"]: r"\varsigma_0",
    RATE_SYMBOLS["epsilon"]: r"\varepsilon",
}


def _validated(name: str, value: Any) -> np.ndarray:
    """``value`` as a float array after checking the domain of symbol ``name`` (docs/theory.md §1)."""
    if isinstance(value, bool | np.bool_) or isinstance(value, str | bytes):
        raise TypeError(f"{name} must be a real number; got {value!r}")
    if not isinstance(value, numbers.Real | np.ndarray | list | tuple):
        raise TypeError(f"{name} must be a real number or an array of them; got {type(value).__name__}")
    arr = require_real_array(name, value, allow_bool=False)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite; got {value!r}")
    if name in NONNEGATIVE:
        if np.any(arr < 0):
            raise ValueError(f"{name} must be >= 0 ({DESCRIPTIONS[name]}); got {value!r}")
    elif np.any(arr <= 0):
        raise ValueError(f"{name} must be > 0, a non-positive value is outside its domain "
                         f"({DESCRIPTIONS[name]}); got {value!r}")
    if name == "lam" and np.any(arr >= 1):
        raise ValueError(f"lam must lie in [0, 1) ({DESCRIPTIONS['lam']}); got {value!r}")
    if name == "delta" and np.any(arr > 1):
        raise ValueError(f"delta must lie in (0, 1] ({DESCRIPTIONS['delta']}); got {value!r}")
    if name in INTEGER and np.any(arr != np.round(arr)):
        raise ValueError(f"{name} must be an integer ({DESCRIPTIONS[name]}); got {value!r}")
    return arr


class RateOverflowError(ValueError):
    """The true value of a bound (or of a ratio of bounds) exceeds the largest float64, about 1.8e308."""


#: Decimal digits of the high-precision fallback (sympy/mpmath, which have no exponent range limit).
_PRECISE_DIGITS = 30


def _describe_point(values: Mapping[str, Any]) -> str:
    return ", ".join(f"{name}={float(value)!r}" for name, value in values.items())


def _exact(value: float) -> sp.Rational:
    """The decimal a user typed, exactly: 0.1 -> 1/10, so that floor(1/0.1**2) is 100, not 99."""
    return sp.Rational(repr(float(value)))


def _decimal(value: float) -> sp.Float:
    """The decimal a user typed as a Float of ``_PRECISE_DIGITS + 10`` digits (exact: repr has <= 17)."""
    return sp.Float(repr(float(value)), _PRECISE_DIGITS + 10)


@dataclasses.dataclass(frozen=True)
class Rate:
    """One catalog entry: T_eps >= (kind "lower") or <= (kind "upper") the sum of ``terms``.

    Parameters
    ----------
    name : str
        Catalog key, e.g. ``"detag"``.
    kind : {"lower", "upper"}
        At least or at most the sum of the terms.
    source : str
        Paper and theorem/table, e.g. ``"Lu & De Sa 2021/2023, Cor. 6"``.
    convention : {"grad_norm", "grad_norm_sq"}
        E||grad f|| <= eps, or E||grad f||^2 <= eps.
    terms : mapping of str to sympy.Expr
        Term name -> expression in ``bounds.symbols``.
    assumptions : tuple of str
        The conditions under which the bound holds.
    status : {"confirmed", "recalled", "derived"}
        Checked against the paper, recalled, or derived by us (the derivation in ``doc``).
    doc : str
        Derivation and provenance.
    probability : float
        The bound holds with at least this probability per run (0.5 for the hard sampling instance, E21).
    """

    name: str
    kind: str
    source: str
    convention: str
    terms: Mapping[str, sp.Expr] = dataclasses.field(hash=False)
    assumptions: tuple[str, ...] = ()
    status: str = "confirmed"
    doc: str = ""
    probability: float = 1.0

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.isidentifier():
            raise ValueError(f"name must be an identifier-like string; got {self.name!r}")
        for field, allowed in (("kind", KINDS), ("convention", CONVENTIONS), ("status", STATUSES)):
            if getattr(self, field) not in allowed:
                raise ValueError(f"{self.name}: {field} must be one of {allowed}; "
                                 f"got {getattr(self, field)!r}")
        if not isinstance(self.terms, Mapping) or not self.terms:
            raise ValueError(f"{self.name}: terms must be a non-empty mapping of term name -> expression")
        known = set(RATE_SYMBOLS.values())
        terms: dict[str, sp.Expr] = {}
        for key, expr in self.terms.items():
            expr = sp.sympify(expr)
            stray = expr.free_symbols - known
            if stray:
                raise ValueError(f"{self.name}: term {key!r} uses symbols {sorted(map(str, stray))} that are "
                                 f"not the symbols of bounds.symbols (same name, other assumptions?)")
            terms[key] = expr
        object.__setattr__(self, "terms", MappingProxyType(terms))
        object.__setattr__(self, "assumptions", tuple(self.assumptions))
        if not 0.0 < self.probability <= 1.0:
            raise ValueError(f"{self.name}: probability must lie in (0, 1]; got {self.probability!r}")

    # -- symbolic views ------------------------------------------------------------------------------

    @property
    def expr(self) -> sp.Expr:
        """The whole bound: the sum of the terms."""
        return sp.Add(*self.terms.values())

    @cached_property
    def arguments(self) -> tuple[str, ...]:
        """Names of the symbols the bound depends on, in the order of ``bounds.symbols.RATE_SYMBOLS``."""
        used = self.expr.free_symbols
        return tuple(name for name, sym in RATE_SYMBOLS.items() if sym in used)

    def latex(self, *, terms: bool = False) -> str:
        """LaTeX of the bound.

        Parameters
        ----------
        terms : bool, optional
            One ``name: expression`` line per term instead of the sum.

        Examples
        --------
        >>> from decbounds.bounds import get
        >>> print(get("lower_bound_gossip").latex(terms=True))
        sampling: \\frac{\\Delta L \\sigma^{2}}{B \\varepsilon^{4} n}
        communication: \\frac{\\Delta L}{\\varepsilon^{2} \\sqrt{1 - \\lambda}}
        """
        if terms:
            return "\n".join(f"{key}: {sp.latex(expr, symbol_names=_LATEX_NAMES)}"
                             for key, expr in self.terms.items())
        whole: str = sp.latex(self.expr, symbol_names=_LATEX_NAMES)
        return whole

    def in_convention(self, convention: str) -> Rate:
        """The same bound in the other convention (``self`` when already in it; memoized).

        grad_norm -> grad_norm_sq substitutes eps -> sqrt(eps), the reverse eps -> eps^2. By Jensen it is
        rigorous for upper bounds in grad_norm_sq and lower bounds in grad_norm, the customary identification
        otherwise.

        Parameters
        ----------
        convention : {"grad_norm", "grad_norm_sq"}
            The target convention.

        Examples
        --------
        >>> from decbounds.bounds import get
        >>> cor2, point = get("lower_bound_gossip"), dict(Delta=1, L=1, sigma=0, n=16, B=1, lam=0.75)
        >>> squared = cor2.in_convention("grad_norm_sq")
        >>> cor2.evaluate(epsilon=0.01, **point), squared.evaluate(epsilon=1e-4, **point)
        (20000.0, 20000.0)
        """
        if convention not in CONVENTIONS:
            raise ValueError(f"convention must be one of {CONVENTIONS}; got {convention!r}")
        if convention == self.convention:
            return self
        # Memoized on the instance (gap() and sweeps convert the same entries over and over); the frozen
        # dataclass still has a __dict__, which cached_property uses the same way.
        converted = self.__dict__.get("_converted")
        if converted is None:
            eps_of = sp.sqrt(epsilon) if convention == "grad_norm_sq" else epsilon**2
            converted = dataclasses.replace(
                self,
                convention=convention,
                terms={key: expr.xreplace({epsilon: eps_of}) for key, expr in self.terms.items()},
                doc=f"{self.doc}\n\n(Converted from {self.convention} to {convention}.)".strip(),
            )
            self.__dict__["_converted"] = converted
        return converted

    # -- numeric views -------------------------------------------------------------------------------

    def _checked(self, values: Mapping[str, Any]) -> dict[str, np.ndarray]:
        unknown = sorted(set(values) - set(RATE_SYMBOLS))
        if unknown:
            raise ValueError(f"{self.name}: unknown keyword(s) {unknown}; "
                             f"the symbols are {list(RATE_SYMBOLS)}")
        missing = [name for name in self.arguments if name not in values]
        if missing:
            raise ValueError(f"{self.name}: missing value(s) for {missing}; this rate needs "
                             f"{list(self.arguments)}")
        # Every given value is checked, also those this rate ignores: a bad value is an error wherever it
        # appears (one call often feeds several rates, as in gap()).
        return {name: _validated(name, value) for name, value in values.items()}

    @cached_property
    def _numpy_terms(self) -> Callable[..., tuple[Any, ...]]:
        args = [RATE_SYMBOLS[name] for name in self.arguments]
        # the module, not the string "numpy": for the string lambdify runs ``from numpy import *``, which
        # loads numpy.f2py, numpy.testing, numpy.ma, ... (a large share of `decbounds predict`'s start-up,
        # docs/benchmarks.md); same functions
        terms: Callable[..., tuple[Any, ...]] = sp.lambdify(args, tuple(self.terms.values()), modules=np)
        return terms

    @cached_property
    def _is_exact(self) -> bool:
        # floor/ceiling jump at the decimals users type; those entries are evaluated in exact arithmetic.
        exact: bool = self.expr.has(sp.floor, sp.ceiling)
        return exact

    def precise_terms(self, **values: float) -> dict[str, sp.Float]:
        """Each term's value as a 30-digit sympy Float, evaluated exactly from the decimals typed (0.1 =
        1/10), so nothing over- or underflows: the reference `evaluate` falls back to.

        Parameters
        ----------
        **values : float
            As `evaluate`.
        """
        checked = self._scalars(values)
        return self._precise(checked)

    def _scalars(self, values: Mapping[str, Any]) -> dict[str, np.ndarray]:
        checked = self._checked(values)
        for name, arr in checked.items():
            if arr.ndim != 0:
                raise ValueError(f"{name} must be a scalar in evaluate(); use lambdify() for arrays")
        return checked

    def _precise(self, checked: Mapping[str, np.ndarray]) -> dict[str, sp.Float]:
        # floor/ceiling need the typed decimals as exact rationals; every other entry gets them as Floats of
        # more digits than the result keeps (the decimal is exact to those digits). Floats never reach
        # sympy's factorization of large rationals (a power of a 300-digit rational factors it, and sympy's
        # factorint can fail on such numbers with a bare "ValueError: <digits>"), and mpmath has no exponent
        # range limit.
        def substituted(exact: bool) -> dict[sp.Symbol, sp.Expr]:
            convert = _exact if exact else _decimal
            return {RATE_SYMBOLS[name]: convert(float(checked[name])) for name in self.arguments}

        try:
            return self._precise_at(substituted(self._is_exact), checked)
        except ValueError:
            if not self._is_exact:
                raise
        # an exact evaluation sympy cannot complete: the same decimals as Floats of 40 digits
        return self._precise_at(substituted(False), checked)

    def _precise_at(self, subs: Mapping[sp.Symbol, sp.Expr],
                    checked: Mapping[str, np.ndarray]) -> dict[str, sp.Float]:
        precise = {}
        for key, expr in self.terms.items():
            try:
                value = sp.N(expr.xreplace(subs), _PRECISE_DIGITS)
            except (ValueError, ArithmeticError, RecursionError) as err:  # sympy's own, unnamed
                raise ValueError(f"{self.name}: term {key!r} cannot be evaluated at "
                                 f"{_describe_point(checked)} ({type(err).__name__})") from None
            if not (value.is_real and value.is_finite):
                raise ValueError(f"{self.name}: term {key!r} is undefined ({value}) at "
                                 f"{_describe_point(checked)}")
            precise[key] = value
        return precise

    def _as_floats(self, precise: Mapping[str, sp.Float], checked: Mapping[str, Any]) -> dict[str, float]:
        out = {}
        for key, value in precise.items():
            number = float(value)
            if not math.isfinite(number):
                raise RateOverflowError(
                    f"{self.name}: overflow: term {key!r} = {sp.N(value, 4)} exceeds the largest float64 "
                    f"(about 1.8e308) at {_describe_point(checked)}")
            out[key] = number
        return out

    def evaluate_terms(self, **values: float) -> dict[str, float]:
        """Each term's value at a point, by name (their sum is `evaluate`'s): float64, or `precise_terms`
        where float64 over- or underflows; `RateOverflowError` for a term beyond the float range.

        Parameters
        ----------
        **values : float
            As `evaluate`.
        """
        checked = self._scalars(values)
        if not self._is_exact:
            try:
                # numpy scalars under errstate "raise": an overflow, a NaN, a division by zero and also an
                # underflow (Delta L = 1e-400 -> 0 would turn a representable 1e-80 into 0) each send the
                # point to the precise evaluation below
                with np.errstate(all="raise"):
                    raw = self._numpy_terms(*(np.float64(checked[name]) for name in self.arguments))
                    floats = {key: float(value) for key, value in zip(self.terms, raw, strict=True)}
            except (ZeroDivisionError, OverflowError, FloatingPointError):
                floats = None
            if floats is not None and all(math.isfinite(v) for v in floats.values()):
                return floats
        return self._as_floats(self._precise(checked), checked)

    def evaluate(self, **values: float) -> float:
        """T_eps predicted at one point (absolute constants 1): the sum of the terms, a finite float.

        ValueError naming the keyword for an unknown keyword, a missing symbol of ``self.arguments``, a value
        <= 0 (sigma, varsigma, varsigma0 and lam may be 0), lam outside [0, 1), a non-integer n, B or D, or a
        non-finite value; `RateOverflowError` when the true value exceeds float64 (high precision is used on
        the way where float64 would overflow). Other symbols of ``bounds.symbols`` are ignored.

        Parameters
        ----------
        **values : float
            The entry's symbols: Delta, L, sigma, varsigma, varsigma0, n, B, epsilon, lam, D as it needs them.
        """
        terms = self.evaluate_terms(**values)
        total = math.fsum(terms.values())
        if not math.isfinite(total):  # finite terms whose sum overflows
            checked = self._scalars(values)
            exact_total = sp.Add(*self._precise(checked).values())
            raise RateOverflowError(f"{self.name}: overflow: the bound = {sp.N(exact_total, 4)} exceeds the "
                                    f"largest float64 (about 1.8e308) at {_describe_point(checked)}")
        return total

    def _float64_total(self, arguments: list[np.ndarray], shape: tuple[int, ...]) -> np.ndarray | None:
        """The bound at broadcast points in float64, or None if an over- or underflow, a NaN or a division
        by zero happened anywhere on the way (errstate "raise", as in ``evaluate_terms``)."""
        try:
            with np.errstate(all="raise"):
                total = np.zeros(shape)
                for part in self._numpy_terms(*arguments):
                    total = total + np.broadcast_to(np.asarray(part, dtype=float), shape)
        except (ZeroDivisionError, OverflowError, FloatingPointError):
            return None
        return np.asarray(total, dtype=float)

    def _vector_total(self, checked: Mapping[str, np.ndarray], shape: tuple[int, ...]) -> np.ndarray:
        """``lambdify``'s value: float64 where exact, ``evaluate`` where not; the points are bisected on a
        float64 failure, so k bad points of m cost O(k log m) vectorized passes.
        """
        names = self.arguments
        total = self._float64_total([checked[name] for name in names], shape)
        if total is not None:
            return total
        flat = {name: np.broadcast_to(arr, shape).reshape(-1) for name, arr in checked.items()}
        out = np.empty(math.prod(shape))
        pending = [(0, out.size)]
        while pending:
            lo, hi = pending.pop()
            if hi - lo == 1:
                out[lo] = self.evaluate(**{name: float(arr[lo]) for name, arr in flat.items()})
                continue
            part = self._float64_total([flat[name][lo:hi] for name in names], (hi - lo,))
            if part is not None:
                out[lo:hi] = part
            else:
                middle = (lo + hi) // 2
                pending += [(lo, middle), (middle, hi)]
        return out.reshape(shape)

    def lambdify(self) -> Callable[..., np.ndarray]:
        """A vectorized evaluator ``f(**values) -> ndarray`` with `evaluate`'s keywords and checks; values
        broadcast. floor and ceiling are float64 here, so at exact integer boundaries (floor(1/0.1**2)) the
        value may be one below `evaluate`'s exact one.

        Examples
        --------
        >>> from decbounds.bounds import get
        >>> f = get("lower_bound_gossip").lambdify()
        >>> f(Delta=1, L=1, sigma=0, n=16, B=1, epsilon=[0.1, 0.01], lam=0.75)
        array([  200., 20000.])
        """
        def vectorized(**values: Any) -> np.ndarray:
            checked = self._checked(values)
            shape = np.broadcast_shapes(*(arr.shape for arr in checked.values()))
            total = self._vector_total(checked, shape)
            return total if shape else total[()]

        vectorized.__doc__ = f"Vectorized {self.name}: T_eps = {self.expr}"
        return vectorized
