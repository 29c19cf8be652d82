"""Heterogeneity of the local functions at the start point (assumption (6) of Lu & De Sa 2021).

Cor. 6's phase length, Table 2's rates and the figures' predictions read it.
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

    Examples
    --------
    >>> from decbounds import instances
    >>> round(instances.varsigma0_at_start(instances.heterogeneous_quadratic(4, 3, 1.0, seed=0)), 6)
    1.0
    """
    local = local_gradients_at_start(f)
    return float(np.sqrt(np.mean(np.sum((local - local.mean(axis=0)) ** 2, axis=-1))))
