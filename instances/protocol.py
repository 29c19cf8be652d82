"""The local-function protocol every problem in `instances` follows (ARCHITECTURE.md, "instances/").

The worker axis comes first and any batch axes follow, so one call evaluates k configurations side by side:
``X`` has shape ``(n, *batch, d)`` and ``X[i, ...]`` are points of worker i.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class LocalFunctions(Protocol):
    """n local functions f_1 ... f_n on R^d and their average f = (1/n) sum_i f_i (THEORY.md §1)."""

    n: int
    dim: int
    x0: np.ndarray
    smoothness: float  # L of every local f_i; admissible steps are <= 1 / smoothness (§11 item 19)

    def grad(self, X: np.ndarray) -> np.ndarray:
        """Exact local gradients, (n, *batch, d) -> (n, *batch, d): row i is grad f_i at X[i, ...]."""
        ...

    def value(self, X: np.ndarray) -> np.ndarray:
        """Local values, (n, *batch, d) -> (n, *batch)."""
        ...

    def full_grad(self, x: np.ndarray) -> np.ndarray:
        """Gradient of the global f = mean_i f_i at points x of shape (*batch, d)."""
        ...

    def full_value(self, x: np.ndarray) -> np.ndarray:
        """The global f at points x of shape (*batch, d) -> (*batch)."""
        ...


@runtime_checkable
class FiniteSumFunctions(LocalFunctions, Protocol):
    """Local functions that are averages over a local data shard: f_i(x) = (1/m) sum_s f_i(x; s).

    ``samples_per_worker`` is m (every shard has the same size); ``sample_grad(X, idx)`` averages the
    per-sample gradients of the samples ``idx`` (shape (n, *batch, B), indices into each worker's shard).
    """

    samples_per_worker: int

    def sample_grad(self, X: np.ndarray, idx: np.ndarray) -> np.ndarray: ...


def check_points(X: np.ndarray, n: int, dim: int, name: str = "X") -> np.ndarray:
    """Return X as a float array after checking it is (n, *batch, dim); raise ValueError naming the field."""
    X = np.asarray(X, dtype=float)
    if X.ndim < 2 or X.shape[0] != n or X.shape[-1] != dim:
        raise ValueError(
            f"{name} must have shape (n, *batch, d) = ({n}, ..., {dim}) with the worker axis first; "
            f"got shape {X.shape}"
        )
    return X


def check_global_points(x: np.ndarray, dim: int, name: str = "x") -> np.ndarray:
    """Return x as a float array after checking it is (*batch, dim); raise ValueError naming the field."""
    x = np.asarray(x, dtype=float)
    if x.ndim < 1 or x.shape[-1] != dim:
        raise ValueError(f"{name} must have shape (*batch, d) with d = {dim}; got shape {x.shape}")
    return x
