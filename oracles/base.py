"""The oracle interface and the exact and Gaussian oracles (docs/theory.md §1.3, the oracle class O_sigma^2).

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
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np
from decbounds.bounds.validation import require_count, require_real
from decbounds.instances.protocol import LocalFunctions

__all__ = ["MAX_BATCH", "ExactOracle", "GaussianOracle", "Oracle", "check_batch", "check_rng"]


@runtime_checkable
class Oracle(Protocol):
    """A stochastic first-order oracle over local functions ``f`` (docs/architecture.md, "oracles/").

    References
    ----------
    docs/theory.md §1.3 (A4), the oracle class O_sigma^2.

    Examples
    --------
    >>> from decbounds import instances
    >>> isinstance(ExactOracle(instances.zero_chain(3)), Oracle)
    True
    """

    f: LocalFunctions
    exact: bool  # True when sample() ignores rng and returns exact gradients

    def sample(self, X: np.ndarray, rng: np.random.Generator, batch: int = 1) -> np.ndarray:
        """Stochastic gradients of the local functions, the mean of `batch` queries per worker.

        Parameters
        ----------
        X : numpy.ndarray
            Shape (n, *batch_shape, d): worker i's points in row i.
        rng : numpy.random.Generator
            The randomness of the queries (same generator state, same bits).
        batch : int
            B, queries per worker averaged into one answer.

        Returns
        -------
        numpy.ndarray
            X's shape: an unbiased estimate of grad f_i at X[i, ...] with variance at most sigma^2 / B.
        """
        ...

    def queries_per_call(self, X: np.ndarray, batch: int = 1) -> int:
        """The oracle queries per worker that ``sample(X, rng, batch)`` makes (the engine's A_B budget).

        Parameters
        ----------
        X : numpy.ndarray
            The points of the call.
        batch : int
            B.
        """
        ...

    def full_grad(self, x: np.ndarray) -> np.ndarray:
        """The exact gradient of the global f at points x, uncounted (for measuring, not for the rule).

        Parameters
        ----------
        x : numpy.ndarray
            Shape (*batch_shape, d).

        Returns
        -------
        numpy.ndarray
            x's shape.
        """
        ...


#: Most queries per worker in one call (the finite-sum oracle draws an index array of this size per row).
MAX_BATCH = 10**7


def check_batch(batch: object) -> int:
    """The batch B (queries per worker) as an int in [1, MAX_BATCH]; TypeError/ValueError naming it.

    Parameters
    ----------
    batch : int
        The value to check.

    Examples
    --------
    >>> check_batch(4)
    4
    """
    return require_count("batch", batch, 1, maximum=MAX_BATCH, what="queries per worker in one call")


def check_rng(rng: object) -> np.random.Generator:
    """rng must be a ``numpy.random.Generator`` (seed it with ``numpy.random.default_rng(seed)``).

    Parameters
    ----------
    rng : numpy.random.Generator
        The value to check.

    Returns
    -------
    numpy.random.Generator
        rng itself.

    Raises
    ------
    TypeError
        Naming rng, for anything else.
    """
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator; got rng={rng!r:.60} "
                        f"(type {type(rng).__name__})")
    return rng


class _OracleBase:
    """Shared plumbing: the wrapped functions, query counting and the uncounted global gradient."""

    exact = False

    if TYPE_CHECKING:  # every subclass defines it (the `Oracle` protocol's); the defaults here call it
        def sample(self, X: np.ndarray, rng: np.random.Generator, batch: int = 1) -> np.ndarray: ...

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
        """Answers for k configurations side by side: X of shape (n, k, d), configuration j drawing from
        ``rngs[j]``; bit for bit the k calls ``sample(X[:, j:j+1], rngs[j], batch)`` stacked on axis 1
        (what the engine needs so that a batch of configurations repeats every solo run).

        Examples
        --------
        >>> from decbounds import instances
        >>> oracle = GaussianOracle(instances.heterogeneous_quadratic(4, 3, 0.1, seed=0), sigma=0.5)
        >>> X = np.zeros((4, 2, 3))
        >>> both = oracle.sample_configurations(X, [np.random.default_rng(0), np.random.default_rng(1)])
        >>> bool(np.array_equal(both[:, 1:], oracle.sample(X[:, 1:], np.random.default_rng(1))))
        True
        """
        out = np.empty_like(X, dtype=float)
        for j, rng in enumerate(rngs):
            out[:, j : j + 1] = self.sample(X[:, j : j + 1], rng, batch)
        return out


class ExactOracle(_OracleBase):
    """Exact local gradients (sigma = 0): every query returns grad f_i(x); rng is not touched.

    Parameters
    ----------
    f : LocalFunctions
        Any object with the local-function protocol.

    Raises
    ------
    TypeError
        If f lacks ``n``, ``dim``, ``grad`` or ``full_grad``.

    Examples
    --------
    >>> from decbounds import instances
    >>> f = instances.heterogeneous_quadratic(4, 3, 0.1, seed=0)
    >>> X = np.zeros((4, 3))
    >>> bool(np.array_equal(ExactOracle(f).sample(X), f.grad(X)))
    True
    """

    exact = True

    def sample(self, X: np.ndarray, rng: np.random.Generator | None = None, batch: int = 1) -> np.ndarray:
        """The exact local gradients grad f_i(X[i, ...]) (variance 0 for any batch).

        Parameters
        ----------
        X : numpy.ndarray
            Shape (n, *batch_shape, d): worker i's points in row i.
        rng : numpy.random.Generator or None, optional
            Not used (the signature is the oracle protocol's).
        batch : int, default 1
            B, queries per worker averaged into one answer, in [1, MAX_BATCH].

        Returns
        -------
        numpy.ndarray
            X's shape: ``f.grad(X)``.
        """
        check_batch(batch)
        return self.f.grad(X)

    def __repr__(self) -> str:
        return f"ExactOracle({self.f!r})"


class GaussianOracle(_OracleBase):
    """grad f_i(x) + noise with E||noise||^2 = sigma^2 per query (the whole vector, not per coordinate).

    Parameters
    ----------
    f : local functions
        Any object with the local-function protocol.
    sigma : float
        Standard deviation of one query, >= 0 (the whole vector).

    Raises
    ------
    TypeError, ValueError
        For a sigma that is not a finite real >= 0.

    Examples
    --------
    >>> from decbounds import instances
    >>> oracle = GaussianOracle(instances.heterogeneous_quadratic(4, 3, 0.1, seed=0), sigma=0.5)
    >>> oracle.sample(np.zeros((4, 7, 3)), np.random.default_rng(0), batch=2).shape  # 7 configurations
    (4, 7, 3)
    >>> oracle.queries_per_call(np.zeros((4, 7, 3)), batch=2)
    56
    """

    def __init__(self, f: LocalFunctions, sigma: float) -> None:
        super().__init__(f)
        # sigma^2 / B is the variance per coordinate times d: keep sigma^2 finite
        self.sigma = require_real("sigma", sigma, allow_zero=True, maximum=1e150)

    def sample(self, X: np.ndarray, rng: np.random.Generator, batch: int = 1) -> np.ndarray:
        """grad f_i(X[i, ...]) plus one N(0, sigma^2 / (d B) I) vector per worker and configuration.

        Parameters
        ----------
        X : numpy.ndarray
            Shape (n, *batch_shape, d): worker i's points in row i.
        rng : numpy.random.Generator
            The noise's randomness: one standard normal per entry of X.
        batch : int, default 1
            B, queries per worker averaged into one answer, in [1, MAX_BATCH].

        Returns
        -------
        numpy.ndarray
            X's shape: the gradients plus noise with E||noise||^2 = sigma^2 / B.
        """
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


