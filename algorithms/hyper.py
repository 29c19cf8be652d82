"""The hyper-parameters of a batch as a rule reads them: per-configuration values as (1, k, d) arrays
(``ctx.step_size``, ``ctx.hyper``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import cast

import numpy as np

__all__ = ["batch_hyper", "per_configuration"]


def per_configuration(values: Sequence[float] | np.ndarray, d: int) -> np.ndarray:
    """k values as a C-contiguous (1, k, d) array, each repeated along d (numpy multiplies by a repeated
    array faster than by a (1, k, 1) one when d is small).

    Parameters
    ----------
    values : sequence of float
        One value per configuration.
    d : int
        The problem's dimension.
    """
    column = np.asarray(values, dtype=float).reshape(1, -1, 1)
    return np.ascontiguousarray(np.broadcast_to(column, (1, column.shape[1], d)))


def batch_hyper(structural: Mapping[str, object], configurations: Sequence[Mapping[str, object]],
                d: int) -> dict[str, object]:
    """The ``ctx.hyper`` of a batch: each batchable hyper-parameter as a (1, k, d) array when its k values
    are numbers (`per_configuration`), else the list of them; each structural one as its value.

    Parameters
    ----------
    structural : mapping
        The batch's structural hyper-parameters.
    configurations : sequence of mapping
        Each configuration's batchable hyper-parameters (all with the same keys).
    d : int
        The problem's dimension.
    """
    hyper: dict[str, object] = {}
    for name in configurations[0] if configurations else ():
        values = [values[name] for values in configurations]
        numeric = all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)
                      for v in values)
        hyper[name] = per_configuration(cast("list[float]", values), d) if numeric else values
    hyper.update(structural)
    return hyper
