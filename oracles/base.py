"""The oracle interface and the exact and Gaussian oracles (THEORY.md §1, "Oracle class O_sigma^2").

Every oracle answers ``sample(X, rng, batch)``: X holds the stacked local points, shape (n, *batch_axes, d)
(worker axis first; e.g. (n, k, d) for k configurations side by side), and the answer has the same shape:
row i is worker i's stochastic gradient of f_i, the **mean of `batch` independent queries** (each worker,
in each configuration, makes `batch` queries). ``queries_per_call(X, batch)`` is the total count that one
call answers, n * k * batch for X of shape (n, k, d); the engine counts `batch` per worker and
configuration. ``full_grad(x)`` is the gradient of the global f, for stopping tests, not counted.
All randomness comes from the caller's ``numpy.random.Generator``: same generator state, same bits.
"""

from __future__ import annotations

import math
from typing import Protocol, runtime_checkable

import numpy as np

from instances.protocol import LocalFunctions


@runtime_checkable
class Oracle(Protocol):
    """A stochastic first-order oracle over local functions ``f`` (ARCHITECTURE.md "oracles/")."""

    f: LocalFunctions
    exact: bool  # True when sample() ignores rng and returns exact gradients

    def sample(self, X: np.ndarray, rng: np.random.Generator, batch: int = 1) -> np.ndarray: ...

    def queries_per_call(self, X: np.ndarray, batch: int = 1) -> int: ...

    def full_grad(self, x: np.ndarray) -> np.ndarray: ...


def check_batch(batch: object) -> int:
    """The batch B as an int >= 1; raise ValueError naming it otherwise."""
    if isinstance(batch, bool) or not isinstance(batch, int | np.integer) or batch < 1:
        raise ValueError(f"batch must be an integer >= 1 (queries per worker); got batch={batch!r}")
    return int(batch)


def check_rng(rng: object) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator; got {type(rng).__name__}")
    return rng


class _OracleBase:
    """Shared plumbing: the wrapped functions, query counting and the uncounted global gradient."""

    exact = False

    def __init__(self, f: LocalFunctions) -> None:
        for attribute in ("n", "dim", "grad", "full_grad"):
            if not hasattr(f, attribute):
                raise TypeError(f"f must follow the local-function protocol; no attribute {attribute!r}")
        self.f = f

    def queries_per_call(self, X: np.ndarray, batch: int = 1) -> int:
        """Total queries one ``sample(X, rng, batch)`` answers: batch per worker and configuration."""
        X = np.asarray(X)
        return check_batch(batch) * (X.size // X.shape[-1])

    def full_grad(self, x: np.ndarray) -> np.ndarray:
        """Gradient of the global f = mean_i f_i at x (*batch, d); not an oracle query."""
        return self.f.full_grad(x)


class ExactOracle(_OracleBase):
    """Exact local gradients (sigma = 0): every query returns grad f_i(x); rng is not touched."""

    exact = True

    def sample(self, X: np.ndarray, rng: np.random.Generator | None = None, batch: int = 1) -> np.ndarray:
        check_batch(batch)
        return self.f.grad(X)

    def __repr__(self) -> str:
        return f"ExactOracle({self.f!r})"


class GaussianOracle(_OracleBase):
    """grad f_i(x) + noise with E||noise||^2 = sigma^2 per query (the whole vector, not per coordinate).

    A batch of B queries averages B independent N(0, sigma^2/d I) vectors, which is exactly one
    N(0, sigma^2/(d B) I) vector, so one normal draw per coordinate is made whatever B:
    E||g - grad f_i||^2 = sigma^2 / B.
    """

    def __init__(self, f: LocalFunctions, sigma: float) -> None:
        super().__init__(f)
        if isinstance(sigma, bool) or not isinstance(sigma, int | float | np.integer | np.floating):
            raise TypeError(f"sigma must be a real number; got sigma={sigma!r}")
        if not (math.isfinite(sigma) and sigma >= 0):
            raise ValueError(f"sigma must be finite and >= 0; got sigma={sigma!r}")
        self.sigma = float(sigma)

    def sample(self, X: np.ndarray, rng: np.random.Generator, batch: int = 1) -> np.ndarray:
        batch = check_batch(batch)
        rng = check_rng(rng)
        G = self.f.grad(X)
        noise = rng.standard_normal(G.shape)
        noise *= self.sigma / math.sqrt(self.f.dim * batch)
        noise += G
        return noise

    def __repr__(self) -> str:
        return f"GaussianOracle({self.f!r}, sigma={self.sigma:g})"


