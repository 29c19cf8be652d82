"""Argument checks shared by the instance constructors: a bad value is a TypeError or ValueError that names
the field and the property it violates."""

from __future__ import annotations

import math

import numpy as np


def require_real(name: str, value: object, *, allow_zero: bool = False) -> float:
    """``value`` as a float; it must be a finite real number, > 0 (or >= 0 with ``allow_zero``)."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise TypeError(f"{name} must be a real number; got {name}={value!r}")
    value = float(value)
    if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be finite and {bound}; got {name}={value!r}")
    return value


def require_count(name: str, value: object, minimum: int) -> int:
    """``value`` as an int; it must be an integer >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise TypeError(f"{name} must be an integer; got {name}={value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}; got {name}={value!r}")
    return int(value)
