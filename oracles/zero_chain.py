"""The probabilistic zero-chain oracle of the sampling lower bound (docs/theory.md §4.2, Setting 1).

With z ~ Bernoulli(p), one query returns [g]_j = grad_j f(x) (1 + 1{j > prog(x)} (z/p - 1)); a batch of B
scales the new coordinate by K / (B p), K ~ Binomial(B, p). Unbiased, with variance at most e^3 (1 - p) / p
per query on f_hat (errata E23).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol, cast

import numpy as np
from decbounds.bounds.validation import require_probability
from decbounds.instances.protocol import LocalFunctions
from decbounds.oracles.base import _OracleBase, check_batch, check_rng

__all__ = ["VARIANCE_CONSTANT", "ZeroChainOracle"]

# sup over x of the variance of one query on f_hat, divided by (1 - p) / p (docs/errata.md E23): (e^{3/2})^2.
VARIANCE_CONSTANT = math.e**3


class _ChainFunctions(LocalFunctions, Protocol):
    """A zero-chain instance: local functions that also report each row's progress along the chain."""

    def progress(self, X: np.ndarray) -> np.ndarray:
        """Each row's progress: max{i >= 1 : x_i != 0} (1-based), 0 for the zero row."""
        ...


class ZeroChainOracle(_OracleBase):
    """Probabilistic zero-chain oracle with reveal probability p (Thm 1, Setting 1; Arjevani et al. 2019):
    each row's progress coordinate is scaled by s / (B p), s ~ Binomial(B, p), one draw per row.

    Parameters
    ----------
    f : zero-chain local functions
    p : float, optional
        Reveal probability in (0, 1]; default ``f.p``.
    """

    def __init__(self, f: object, p: float | None = None) -> None:
        # _OracleBase.__init__ checks the local-function protocol's attributes and raises TypeError otherwise
        super().__init__(cast(LocalFunctions, f))
        if not hasattr(f, "progress"):
            raise TypeError(f"f must be a zero-chain instance with progress(X) for ZeroChainOracle; got "
                            f"{type(f).__name__}")
        if p is None:
            p = getattr(f, "p", None)
            if p is None:
                raise ValueError("p (reveal probability) is required: f has no attribute p")
        self.p = require_probability("p", p)

    @property
    def estimate_scale(self) -> float:
        """1/p: a revealed coordinate comes back multiplied by z/p, so trackers that sum estimates may hold
        values 1/p times the true gradient's scale (docs/errata.md E41)."""
        return 1.0 / self.p

    def variance_bound(self, batch: int = 1) -> float:
        """sup_x E||g - grad f||^2 for a batch of B: (gain/scale)^2 e^3 (1 - p) / (p B) (errata E23).

        Parameters
        ----------
        batch : int, default 1
        """
        factor = getattr(self.f, "gain", 1.0) / getattr(self.f, "scale", 1.0)
        return factor**2 * VARIANCE_CONSTANT * (1.0 - self.p) / (self.p * check_batch(batch))

    def sample(self, X: np.ndarray, rng: np.random.Generator, batch: int = 1) -> np.ndarray:
        batch = check_batch(batch)
        rng = check_rng(rng)
        G = self.f.grad(X)
        if self.p == 1.0:
            return G
        successes = rng.binomial(batch, self.p, size=G.shape[:-1])
        return self._reveal(X, G, successes, batch)

    def sample_configurations(self, X: np.ndarray, rngs: Sequence[np.random.Generator], batch: int = 1
                              ) -> np.ndarray:
        batch = check_batch(batch)
        G = self.f.grad(X)
        if self.p == 1.0:
            return G
        # each configuration draws what its solo call draws, an (n, 1) array from its own generator
        successes = np.concatenate([check_rng(rng).binomial(batch, self.p, size=(G.shape[0], 1))
                                    for rng in rngs], axis=1)
        return self._reveal(X, G, successes, batch)

    def _reveal(self, X: np.ndarray, G: np.ndarray, successes: np.ndarray, batch: int) -> np.ndarray:
        """Scale each row's progress coordinate (the next link of the chain) by successes / (B p)."""
        # __init__ checked that f has progress(X)
        prog = np.asarray(cast(_ChainFunctions, self.f).progress(X))
        rows = np.nonzero(prog < G.shape[-1])  # index tuples: G may be in either memory order
        if rows[0].size:
            revealed = (*rows, prog[rows])
            G[revealed] *= successes[rows] * (1.0 / (batch * self.p))
        return G

    def __repr__(self) -> str:
        return f"ZeroChainOracle({self.f!r}, p={self.p:.4g})"
