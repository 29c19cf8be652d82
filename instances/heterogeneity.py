"""Heterogeneity of the local functions at the start point (assumption (6) of Lu & De Sa 2021).

One home for varsigma0, the spread of the local gradients at x0 that Cor. 6's phase length, Table 2's rates
and the figures' predictions read:

    varsigma0^2 = (1/n) sum_i ||grad f_i(x0) - grad f(x0)||^2.
"""

from __future__ import annotations

import numpy as np
from decbounds.instances.protocol import LocalFunctions, local_gradients_at_start

__all__ = ["varsigma0_at_start"]


def varsigma0_at_start(f: LocalFunctions) -> float:
    """varsigma0 = sqrt((1/n) sum_i ||grad f_i(x0) - grad f(x0)||^2), assumption (6) (docs/theory.md (A6)).

    Parameters
    ----------
    f : LocalFunctions
        The local functions (``grad`` at the stacked start point).

    Returns
    -------
    float
        varsigma0 >= 0.

    References
    ----------
    Lu & De Sa (2021), assumption (6) and Cor. 6 (varsigma0 in the phase length); docs/theory.md (A6), (D4).

    Examples
    --------
    >>> from decbounds import instances
    >>> instances.varsigma0_at_start(instances.zero_chain(3, n=4))
    0.0
    >>> round(instances.varsigma0_at_start(instances.heterogeneous_quadratic(4, 3, 1.0, seed=0)), 6)
    1.0
    """
    local = local_gradients_at_start(f)
    return float(np.sqrt(np.mean(np.sum((local - local.mean(axis=0)) ** 2, axis=-1))))
