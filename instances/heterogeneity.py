"""Heterogeneity of the local functions at the start point (assumption (6) of Lu & De Sa 2021).

One home for varsigma0, the spread of the local gradients at x0 that Cor. 6's phase length, Table 2's rates
and the figures' predictions read:

    varsigma0^2 = (1/n) sum_i ||grad f_i(x0) - grad f(x0)||^2.
"""

from __future__ import annotations

import numpy as np

from instances.protocol import LocalFunctions, local_gradients_at_start

__all__ = ["varsigma0_at_start"]


def varsigma0_at_start(f: LocalFunctions) -> float:
    """varsigma0 = sqrt((1/n) sum_i ||grad f_i(x0) - grad f(x0)||^2), assumption (6) (docs/theory.md (A6)).

    Example (every worker holds the same function, so the spread is 0):
        >>> import instances
        >>> instances.varsigma0_at_start(instances.zero_chain(3, n=4))
        0.0
    """
    local = local_gradients_at_start(f)
    return float(np.sqrt(np.mean(np.sum((local - local.mean(axis=0)) ** 2, axis=-1))))
