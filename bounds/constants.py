"""The zero-chain constants and the hard instances' chain lengths, defined once (docs/theory.md §4.1).

The zero chain (Arjevani et al. 2019, Lemma 2) has f_hat(0) - inf f_hat <= Delta_0 T, is l_1-smooth and
||grad f_hat||_inf <= G_inf, with Delta_0 = 12, l_1 = 152, G_inf = 23. Chain lengths: Setting 1 (corrected
to include L, errata E2) T_c = floor(Delta L / (7296 eps^2)); Setting 2 / Cor. 2
T_c = floor(Delta L / (262656 eps^2)). ``chain_length`` is exact on the decimals typed (float64 gives 9 for
the 10 below); the catalog and ``instances`` import these constants.

>>> chain_length(26265.6, 1.0, 0.1, SETTING2_CHAIN_DENOMINATOR)
10
"""

from __future__ import annotations

import math
from fractions import Fraction

from decbounds.bounds.validation import require_count, require_real

__all__ = [
    "CHAIN_DENOMINATORS",
    "SETTING1_CHAIN_DENOMINATOR",
    "SETTING2_CHAIN_DENOMINATOR",
    "ZERO_CHAIN_GRAD_INF",
    "ZERO_CHAIN_RANGE",
    "ZERO_CHAIN_SMOOTHNESS",
    "chain_length",
    "exact_decimal",
    "smallest_range",
]

ZERO_CHAIN_RANGE = 12  # Delta_0: f_hat(0) - inf f_hat <= Delta_0 * T
ZERO_CHAIN_SMOOTHNESS = 152  # l_1: f_hat is l_1-smooth
ZERO_CHAIN_GRAD_INF = 23  # G_inf: ||grad f_hat||_inf <= G_inf

#: Setting 1: T_c = floor(Delta L / (SETTING1_CHAIN_DENOMINATOR eps^2)), 4 Delta_0 l_1 = 7296.
SETTING1_CHAIN_DENOMINATOR = 4 * ZERO_CHAIN_RANGE * ZERO_CHAIN_SMOOTHNESS
#: Setting 2 and Cor. 2: T_c = floor(Delta L / (SETTING2_CHAIN_DENOMINATOR eps^2)), Delta_0 l_1 12^2 = 262656.
SETTING2_CHAIN_DENOMINATOR = ZERO_CHAIN_RANGE * ZERO_CHAIN_SMOOTHNESS * 12**2

CHAIN_DENOMINATORS = (SETTING1_CHAIN_DENOMINATOR, SETTING2_CHAIN_DENOMINATOR)


def exact_decimal(value: float) -> Fraction:
    """The decimal a user typed, exactly, as a Fraction: 0.1 -> 1/10 (the float's shortest repr).

    Parameters
    ----------
    value : float
        A finite float.
    """
    return Fraction(repr(float(value)))


def _check_denominator(denominator: object) -> int:
    if denominator not in CHAIN_DENOMINATORS:
        raise ValueError(f"denominator must be one of {CHAIN_DENOMINATORS} (Setting 1, Setting 2); "
                         f"got denominator={denominator!r}")
    return int(denominator)  # type: ignore[call-overload,unused-ignore]


def chain_length(Delta: float, L: float, epsilon: float, denominator: int) -> int:
    """T_c = floor(Delta L / (denominator eps^2)) in exact arithmetic (a Python int, possibly huge).

    Parameters
    ----------
    Delta, L, epsilon : float
        Function range f(x0) - f*, smoothness and target accuracy (finite, > 0).
    denominator : int
        ``SETTING1_CHAIN_DENOMINATOR`` or ``SETTING2_CHAIN_DENOMINATOR``.

    Examples
    --------
    >>> chain_length(875.52, 3.0, 0.1, SETTING1_CHAIN_DENOMINATOR)
    36
    """
    Delta = require_real("Delta", Delta)
    L = require_real("L", L)
    epsilon = require_real("epsilon", epsilon)
    denominator = _check_denominator(denominator)
    ratio = exact_decimal(Delta) * exact_decimal(L) / (denominator * exact_decimal(epsilon) ** 2)
    return math.floor(ratio)


def smallest_range(T_c: int, L: float, epsilon: float, denominator: int) -> float:
    """The smallest float Delta with ``chain_length(Delta, L, epsilon, denominator) >= T_c``: T_c denominator
    eps^2 / L, rounded up a float where rounding lost the last link; ValueError if it under- or overflows.

    Parameters
    ----------
    T_c : int
        The chain length wanted, >= 1.
    L, epsilon : float
        Smoothness and target accuracy (finite, > 0).
    denominator : int
        ``SETTING1_CHAIN_DENOMINATOR`` or ``SETTING2_CHAIN_DENOMINATOR``.

    Examples
    --------
    >>> smallest_range(10, 1.0, 0.1, SETTING2_CHAIN_DENOMINATOR)
    26265.6
    """
    T_c = require_count("T_c", T_c, 1)
    L = require_real("L", L)
    epsilon = require_real("epsilon", epsilon)
    denominator = _check_denominator(denominator)
    exact = T_c * denominator * exact_decimal(epsilon) ** 2 / exact_decimal(L)
    try:
        Delta = float(exact)
    except OverflowError:
        Delta = math.inf
    if not (math.isfinite(Delta) and Delta > 0.0):
        raise ValueError(f"T_c={T_c}, L={L!r} and epsilon={epsilon!r} give Delta = T_c * {denominator} * "
                         f"epsilon^2 / L = {float(exact):.3g}, which is not a positive finite float "
                         "(underflow or overflow); choose epsilon and L closer to 1"
                         if exact < 2**1000 else
                         f"T_c={T_c}, L={L!r} and epsilon={epsilon!r} give Delta = T_c * {denominator} * "
                         "epsilon^2 / L above the largest float (overflow); choose a smaller T_c or epsilon")
    while chain_length(Delta, L, epsilon, denominator) < T_c:
        Delta = math.nextafter(Delta, math.inf)
    return Delta
