"""The units of ``pep``'s SDP: every problem is solved at L = 1 and Delta = 1 (or radius = 1), and its
result brought back to the caller's units (`_Units`). Internal to ``pep``.
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from decbounds.pep.api import WorstCase
    from decbounds.pep.problem import _Setup

__all__ = ["MAX_NORMALIZED_VARSIGMA"]

#: Ceiling on varsigma / sqrt(L Delta) (initial "function_value") or varsigma / (L radius) ("distance"), the
#: heterogeneity of the normalized problem (``_Units``). Measured as above (K = 2, 4): 0 to 1e3 solved
#: "optimal", the value growing as varsigma^2; 1e4 failed in 6 of 8 and 1e6 ended "unbounded" or
#: "optimal_inaccurate" (varsigma = 1e308 overflowed).
MAX_NORMALIZED_VARSIGMA = 1e3


@dataclasses.dataclass(frozen=True)
class _Units:
    """The change of variables that brings a problem to L = 1 and Delta = 1 (initial "function_value") or
    radius = 1 (initial "distance") before it is solved: f~_i(y) = a f_i(y / b) is L~ = a L / b^2 smooth
    (mu~ = a mu / b^2), its gradients are (a / b) grad f_i(y / b), and the method with step alpha~ = alpha
    b^2 / a on f~ runs the iterates y = b x of the method with step alpha on f (only alpha L enters). The map
    is a bijection between the two classes, so the worst cases agree after the units: Delta~ = a Delta,
    radius~ = b radius, varsigma~ = (a / b) varsigma, a squared gradient norm scales by (a / b)^2, a function
    value by a, a squared distance by b^2. With L~ = 1: a / b^2 = 1 / L, and a = 1 / Delta (then
    varsigma~ = varsigma / sqrt(L Delta)) or b = 1 / radius (varsigma~ = varsigma / (L radius)). Without it
    Delta = 1e100 or L = 1e6 put entries of 1e100 beside entries of 1 in one SDP, which the solver reports
    "unbounded" or fails on. Kept as natural logarithms, so that no factor overflows on the way.
    """

    log_a: float
    log_b: float

    @classmethod
    def of(cls, setup: Any) -> _Units:
        """From a `_Setup` or a `WorstCase` (both carry L, Delta, radius, initial, varsigma, criterion)."""
        log_L = math.log(setup.L)
        if setup.initial == "function_value":
            log_a = -math.log(setup.Delta)
            log_b = 0.5 * (log_L + log_a)
        else:
            log_b = -math.log(setup.radius)
            log_a = 2.0 * log_b - log_L
        units = cls(log_a, log_b)
        if setup.varsigma and math.log(setup.varsigma) + log_a - log_b > math.log(MAX_NORMALIZED_VARSIGMA):
            scale = "sqrt(L Delta)" if setup.initial == "function_value" else "L radius"
            raise ValueError(f"varsigma / {scale} must be <= MAX_NORMALIZED_VARSIGMA = "
                             f"{MAX_NORMALIZED_VARSIGMA:g} (beyond it the solver fails); got "
                             f"varsigma={setup.varsigma!r} with L={setup.L!r}, Delta={setup.Delta!r}, "
                             f"radius={setup.radius!r}")
        for what, log_factor in (("the worst case", units.log_value(setup.criterion)),
                                 ("its points", -log_b), ("its gradients", log_b - log_a),
                                 ("its function values", -log_a)):
            if abs(log_factor) > _LOG_FLOAT_RANGE:
                given = "Delta" if setup.initial == "function_value" else "radius"
                raise ValueError(f"L={setup.L!r} with {given}={getattr(setup, given)!r}: {what} would scale "
                                 f"by e^{log_factor:.0f} from the normalized problem, beyond float's range")
        return units

    def log_value(self, criterion: str) -> float:
        """log of the factor from the normalized worst case to the caller's."""
        if criterion in ("gradient", "worker_gradient"):
            return 2.0 * (self.log_b - self.log_a)
        return -self.log_a if criterion == "function_value" else -2.0 * self.log_b

    def normalized(self, setup: _Setup) -> _Setup:
        varsigma = (0.0 if setup.varsigma == 0 else
                    math.exp(math.log(setup.varsigma) + self.log_a - self.log_b))
        return dataclasses.replace(setup, L=1.0, mu=setup.mu / setup.L,
                                   steps=tuple(alpha * setup.L for alpha in setup.steps),
                                   Delta=1.0, radius=1.0, varsigma=varsigma)

    def restore(self, result: WorstCase, setup: _Setup) -> WorstCase:
        """The normalized solve's result in the caller's units (``violations``, ``min_gram_eigenvalue`` and
        the gossip rounds stay those of the normalized problem: a round may carry points or gradients, whose
        units differ unless L = 1)."""
        value, point = math.exp(self.log_value(setup.criterion)), math.exp(-self.log_b)
        gradient, function = math.exp(self.log_b - self.log_a), math.exp(-self.log_a)
        if not math.isfinite(result.value * value):
            raise ValueError(f"the worst case {result.value:.6g} x {value:.3g} (the units of L={setup.L!r}, "
                             f"Delta={setup.Delta!r}, radius={setup.radius!r}) overflows float")
        with np.errstate(over="ignore", under="ignore"):  # only a value overflow is an error (above)
            return dataclasses.replace(
                result, L=setup.L, mu=setup.mu, steps=setup.steps,
                step_size=setup.steps[0] if len(set(setup.steps)) == 1 else None,
                Delta=setup.Delta, radius=setup.radius, varsigma=setup.varsigma,
                value=result.value * value, gap=result.gap * value,
                solver_gap=(None if result.solver_gap is None
                            else (result.solver_gap[0] * value, result.solver_gap[1] * value)),
                iterates=result.iterates * point, average_gradients=result.average_gradients * gradient,
                optimum=None if result.optimum is None else result.optimum * point,
                points=[x * point for x in result.points], gradients=[g * gradient for g in result.gradients],
                values=[f * function for f in result.values])


#: |log| of the largest factor `_Units` may apply: float's range (a value that still overflows after the
#: solve is refused by `_Units.restore`)
_LOG_FLOAT_RANGE = math.log(np.finfo(float).max)
