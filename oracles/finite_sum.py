"""Finite-sum sampling for the data-set problems: a query is the gradient of one data point of the worker's
shard, drawn uniformly, so it is unbiased for f_i = (1/m) sum_s f_i(.; s) (docs/theory.md §1)."""

from __future__ import annotations

from typing import cast

import numpy as np
from decbounds.bounds.validation import require_bool
from decbounds.instances.protocol import FiniteSumFunctions
from decbounds.oracles.base import _OracleBase, check_batch, check_rng

__all__ = ["FiniteSumOracle"]


class FiniteSumOracle(_OracleBase):
    """Mini-batch gradients of a finite-sum problem (``f.samples_per_worker``, ``f.sample_grad``): the mean of
    B per-sample gradients of each worker's shard, at indices from `draw_indices`.

    Parameters
    ----------
    f : FiniteSumFunctions
        A finite-sum problem (``instances.digits_problem``).
    replace : bool, default True
    """

    def __init__(self, f: FiniteSumFunctions, replace: bool = True) -> None:
        super().__init__(f)
        for attribute in ("samples_per_worker", "sample_grad"):
            if not hasattr(f, attribute):
                raise TypeError(f"FiniteSumOracle needs a finite-sum problem; f lacks {attribute!r}")
        self.replace = require_bool("replace", replace)

    @property
    def _shards(self) -> FiniteSumFunctions:
        # ``f`` as the finite-sum problem __init__ checked it is (the Oracle protocol types it LocalFunctions)
        return cast(FiniteSumFunctions, self.f)

    def draw_indices(self, X: np.ndarray, rng: np.random.Generator, batch: int = 1) -> np.ndarray:
        """The sample indices (n, *batch_axes, batch) one `sample` call uses.

        Parameters
        ----------
        X : numpy.ndarray, shape (n, *batch_axes, d)
        rng : numpy.random.Generator
        batch : int, default 1
        """
        batch = check_batch(batch)
        rng = check_rng(rng)
        m = self._shards.samples_per_worker
        rows = np.shape(X)[:-1]
        if self.replace:
            return rng.integers(0, m, size=(*rows, batch))
        if batch > m:
            raise ValueError(f"batch={batch} exceeds the {m} samples per worker (without replacement)")
        order = rng.permuted(np.broadcast_to(np.arange(m), (*rows, m)), axis=-1)
        return order[..., :batch]

    def sample(self, X: np.ndarray, rng: np.random.Generator, batch: int = 1) -> np.ndarray:
        return self._shards.sample_grad(X, self.draw_indices(X, rng, batch))

    def __repr__(self) -> str:
        return f"FiniteSumOracle({self.f!r}, replace={self.replace})"
