"""The catalog's prediction at a measurement's own parameters: what a `Result` or a `WorstCase` carries as
``bound``. A parameter the measurement does not know is listed in ``unknown`` and the value is None, never
invented (docs/architecture.md, "Paired results").
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Mapping

from decbounds.bounds.catalog import get

__all__ = ["Prediction", "predict_at"]


@dataclasses.dataclass(frozen=True)
class Prediction:
    """One catalog entry evaluated at a measurement's parameters.

    Attributes
    ----------
    entry : str or None
        The catalog entry (``bounds.get``); None when the algorithm has none.
    kind : {"lower", "upper"} or None
        Whether the entry bounds T_eps from below or from above.
    value : float or None
        T_eps the entry predicts (accuracy convention ``convention``), or None when a parameter is
        unknown, the entry has none, or the value exceeds the float range (``note`` says which).
    convention : str
        The accuracy convention of ``value`` (``"grad_norm"``: ||grad f(x_hat)|| <= eps, the engine's test).
    parameters : dict of str to float
        The values the entry was evaluated at (every known one, also those the entry ignores).
    unknown : tuple of str
        Symbols the entry needs that the measurement does not know.
    note : str
        Why ``value`` is None, or "".
    """

    entry: str | None
    kind: str | None
    value: float | None
    convention: str = "grad_norm"
    parameters: Mapping[str, float] = dataclasses.field(default_factory=dict)
    unknown: tuple[str, ...] = ()
    note: str = ""

    def to_record(self) -> dict[str, object]:
        """A JSON-able dict of every field (strings, floats, None, a dict and a list)."""
        return {"entry": self.entry, "kind": self.kind, "value": self.value, "convention": self.convention,
                "parameters": dict(self.parameters), "unknown": list(self.unknown), "note": self.note}


def predict_at(entry: str | None, parameters: Mapping[str, object], *,
               convention: str = "grad_norm") -> Prediction:
    """Evaluate catalog ``entry`` at the known ``parameters``; KeyError/ValueError for an unknown entry. A
    value outside the entry's domain (lam = 1) gives a Prediction whose ``note`` holds `Rate.evaluate`'s
    message.

    Parameters
    ----------
    entry : str or None
        A catalog name, or None (a Prediction saying there is none).
    parameters : mapping of str to object
        Symbol -> value (``bounds.RATE_SYMBOLS``); None or a non-real marks an unknown parameter.
    convention : {"grad_norm", "grad_norm_sq"}
        The convention epsilon is read in.

    Examples
    --------
    >>> p = predict_at("dsgt", dict(Delta=None, L=1.0, sigma=0.0, varsigma0=0.1, n=4, B=1, epsilon=0.01,
    ...                             lam=0.5))
    >>> p.entry, p.kind, p.value, p.unknown
    ('dsgt', 'upper', None, ('Delta',))
    """
    if entry is None:
        return Prediction(None, None, None, convention, {}, (), "no catalog entry for this algorithm")
    rate = get(entry).in_convention(convention)
    # a value that is not a real number (a problem whose ``Delta`` is a method, say) is not known either
    known = {name: value if isinstance(value, int) else float(value) for name, value in parameters.items()
             if isinstance(value, numbers.Real) and not isinstance(value, bool)}
    unknown = tuple(name for name in rate.arguments if name not in known)
    if unknown:
        return Prediction(entry, rate.kind, None, convention, known, unknown,
                          f"unknown: {', '.join(unknown)}")
    try:
        value = rate.evaluate(**{name: known[name] for name in rate.arguments})
    except ValueError as err:  # RateOverflowError included: the true value exceeds the float range
        return Prediction(entry, rate.kind, None, convention, known, (), str(err))
    assert math.isfinite(value)
    return Prediction(entry, rate.kind, value, convention, known, ())
