"""The oracle interface and the exact and Gaussian oracles (docs/theory.md §1.3, the oracle class O_sigma^2).

Every oracle answers ``sample(X, rng, batch)`` (`Oracle`); see docs/architecture.md ("oracles/").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
from decbounds.bounds.validation import require_count, require_real
from decbounds.instances.protocol import LocalFunctions

__all__ = ["MAX_BATCH", "ExactOracle", "GaussianOracle", "Oracle", "check_batch", "check_rng"]


@runtime_checkable
class Oracle(Protocol):
    """A stochastic first-order oracle over local functions ``f`` (docs/architecture.md, "oracles/")."""

    f: LocalFunctions
    exact: bool  # True when sample() ignores rng and returns exact gradients

    def sample(self, X: np.ndarray, rng: np.random.Generator, batch: int = 1) -> np.ndarray:
        """Unbiased stochastic gradients of the f_i, the mean of ``batch`` queries (variance <= sigma^2 / B).

        Parameters
        ----------
        X : numpy.ndarray
        rng : numpy.random.Generator
        batch : int
        """
        ...

    def queries_per_call(self, X: np.ndarray, batch: int = 1) -> int:
        """The oracle queries per worker that ``sample(X, rng, batch)`` makes (the engine's A_B budget).

        Parameters
        ----------
        X : numpy.ndarray
        batch : int
        """
        ...

    def full_grad(self, x: np.ndarray) -> np.ndarray:
        """The exact gradient of the global f at points x, uncounted (for measuring, not for the rule).

        Parameters
        ----------
        x : numpy.ndarray
        """
        ...


#: Most queries per worker in one call (the finite-sum oracle draws an index array of this size per row).
MAX_BATCH = 10**7


def check_batch(batch: object) -> int:
    """The batch B (queries per worker) as an int in [1, MAX_BATCH]; TypeError/ValueError naming it.

    Parameters
    ----------
    batch : int
    """
    return require_count("batch", batch, 1, maximum=MAX_BATCH, what="queries per worker in one call")


def check_rng(rng: object) -> np.random.Generator:
    """rng must be a ``numpy.random.Generator`` (seed it with ``numpy.random.default_rng(seed)``).

    Parameters
    ----------
    rng : numpy.random.Generator
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator; got rng={rng!r:.60} "
                        f"(type {type(rng).__name__})")
    return rng


class _OracleBase:
    """Shared plumbing: the wrapped functions, query counting and the uncounted global gradient."""

    exact = False

    def sample(self, X: np.ndarray, rng: np.random.Generator, batch: int = 1) -> np.ndarray:
        """`Oracle.sample`: every subclass defines it (its class docstring says how it draws)."""
        raise NotImplementedError

    def __init__(self, f: LocalFunctions) -> None:
        for attribute in ("n", "dim", "grad", "full_grad"):
            if not hasattr(f, attribute):
                raise TypeError(f"f must follow the local-function protocol; no attribute {attribute!r}")
        self.f = f

    def queries_per_call(self, X: np.ndarray, batch: int = 1) -> int:
        """Total queries one ``sample(X, rng, batch)`` answers: batch per worker and configuration."""
        X = np.asarray(X)
        configurations: int = X.size // X.shape[-1]  # workers times configurations
        return check_batch(batch) * configurations

    def full_grad(self, x: np.ndarray) -> np.ndarray:
        """Gradient of the global f = mean_i f_i at x (*batch, d); not an oracle query."""
        return self.f.full_grad(x)

    def sample_configurations(self, X: np.ndarray, rngs: Sequence[np.random.Generator], batch: int = 1
                              ) -> np.ndarray:
        """Answers for k configurations side by side (X of shape (n, k, d), configuration j drawing from
        ``rngs[j]``): bit for bit the k calls ``sample(X[:, j:j+1], rngs[j], batch)`` stacked on axis 1."""
        out = np.empty_like(X, dtype=float)
        for j, rng in enumerate(rngs):
            out[:, j : j + 1] = self.sample(X[:, j : j + 1], rng, batch)
        return out


class ExactOracle(_OracleBase):
    """Exact local gradients (sigma = 0): every query returns grad f_i(x); rng is not touched.

    Parameters
    ----------
    f : LocalFunctions
    """

    exact = True

    def sample(self, X: np.ndarray, rng: np.random.Generator | None = None, batch: int = 1) -> np.ndarray:
        check_batch(batch)
        return self.f.grad(X)

    def __repr__(self) -> str:
        return f"ExactOracle({self.f!r})"


class GaussianOracle(_OracleBase):
    """grad f_i(x) + noise with E||noise||^2 = sigma^2 per query (the whole vector, not per coordinate); a
    batch of B adds one N(0, sigma^2 / (d B) I) draw per worker and configuration, one normal per entry of X.

    Parameters
    ----------
    f : local functions
    sigma : float
    """

    def __init__(self, f: LocalFunctions, sigma: float) -> None:
        super().__init__(f)
        # sigma^2 / B is the variance per coordinate times d: keep sigma^2 finite
        self.sigma = require_real("sigma", sigma, allow_zero=True, maximum=1e150)

    def sample(self, X: np.ndarray, rng: np.random.Generator, batch: int = 1) -> np.ndarray:
        batch = check_batch(batch)
        rng = check_rng(rng)
        G = self.f.grad(X)
        noise = rng.standard_normal(G.shape)
        noise *= self.sigma / math.sqrt(self.f.dim * batch)
        noise += G
        return noise

    def sample_configurations(self, X: np.ndarray, rngs: Sequence[np.random.Generator], batch: int = 1
                              ) -> np.ndarray:
        batch = check_batch(batch)
        G = self.f.grad(X)
        # each configuration's draw has the shape its solo call draws, (n, 1, d), from its own generator
        shape = (G.shape[0], 1, *G.shape[2:])
        noise = np.concatenate([check_rng(rng).standard_normal(shape) for rng in rngs], axis=1)
        noise *= self.sigma / math.sqrt(self.f.dim * batch)
        noise += G
        return noise

    def __repr__(self) -> str:
        return f"GaussianOracle({self.f!r}, sigma={self.sigma:g})"


