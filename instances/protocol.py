"""The local-function protocol every problem in `instances` follows (docs/architecture.md, "instances/").

The worker axis comes first and any batch axes follow, so one call evaluates k configurations side by side:
``X`` has shape ``(n, *batch, d)`` and ``X[i, ...]`` are points of worker i.

Optional declarations: ``radius``, the sup-norm distance from x0 beyond which a run is reported diverged
(`instance_radius`), and ``pointwise = True`` when each point is computed alone by elementwise numpy code, so
a batch gives the solo bits (`computes_pointwise`; a matrix-product gradient agrees to `BATCH_RTOL` only).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np
from decbounds.bounds.validation import require_real_array

__all__ = [
    "BATCH_RTOL",
    "DEFAULT_RADIUS_FACTOR",
    "MAX_RADIUS",
    "FiniteSumFunctions",
    "LocalFunctions",
    "check_global_points",
    "check_points",
    "computes_pointwise",
    "default_radius",
    "instance_radius",
    "local_gradients_at_start",
]

#: How far a configuration run inside a batch may drift from its solo run on a problem that is not pointwise
#: (module docstring): relative to the magnitude of the compared value, elementwise. A BLAS product rounds
#: each entry within a few units in the last place (2.2e-16); a stable run does not amplify that beyond
#: this over the runs the suite makes (measured: at most about 1e-14 on numpy 2.4 / OpenBLAS 0.3.31 with the
#: Haswell and Zen kernels against SkylakeX).
BATCH_RTOL = 1e-10

#: `default_radius` is this many times the scale of the start: |x0| plus one step's move at x0.
DEFAULT_RADIUS_FACTOR = 1e6
#: ... and at most this: beyond it squared norms overflow, so no gradient or distance is meaningful.
MAX_RADIUS = 1e150


@runtime_checkable
class LocalFunctions(Protocol):
    """n local functions f_1 ... f_n on R^d and their average f = (1/n) sum_i f_i (docs/theory.md §1).

    Examples
    --------
    >>> from decbounds import instances
    >>> f = instances.zero_chain(4, n=2)
    >>> isinstance(f, LocalFunctions), f.grad(np.zeros((2, 3, 4))).shape  # 3 configurations per worker
    (True, (2, 3, 4))
    """

    n: int
    dim: int
    x0: np.ndarray

    @property
    def smoothness(self) -> float:
        """L of every local f_i; admissible steps are <= 1 / smoothness (docs/errata.md E19). Read only: an
        attribute or a property (computed on first use, as the digits problem's estimate) will do."""
        ...

    def grad(self, X: np.ndarray) -> np.ndarray:
        """Exact local gradients, (n, *batch, d) -> (n, *batch, d): row i is grad f_i at X[i, ...].

        Parameters
        ----------
        X : numpy.ndarray
            Shape (n, *batch, d): worker i's points in row i.
        """
        ...

    def value(self, X: np.ndarray) -> np.ndarray:
        """Local values, (n, *batch, d) -> (n, *batch).

        Parameters
        ----------
        X : numpy.ndarray
            Shape (n, *batch, d).
        """
        ...

    def full_grad(self, x: np.ndarray) -> np.ndarray:
        """Gradient of the global f = mean_i f_i at points x of shape (*batch, d).

        Parameters
        ----------
        x : numpy.ndarray
            Shape (*batch, d).
        """
        ...

    def full_value(self, x: np.ndarray) -> np.ndarray:
        """The global f at points x of shape (*batch, d) -> (*batch).

        Parameters
        ----------
        x : numpy.ndarray
            Shape (*batch, d).
        """
        ...

    # Optional: ``radius: float``, the region of the analysis, and ``pointwise: bool``, the bits promise
    # (module docstring). Not protocol members, so that problems without them still match; read them through
    # `instance_radius` and `computes_pointwise`.


@runtime_checkable
class FiniteSumFunctions(LocalFunctions, Protocol):
    """Local functions that are averages over a local data shard: f_i(x) = (1/m) sum_s f_i(x; s).
    """

    samples_per_worker: int

    def sample_grad(self, X: np.ndarray, idx: np.ndarray) -> np.ndarray:
        """Minibatch gradients: row i averages grad f_i(X[i, ...]; s) over worker i's samples s in ``idx[i]``.

        Parameters
        ----------
        X : numpy.ndarray
            Shape (n, *batch, d): worker i's points in row i.
        idx : numpy.ndarray of int
            Shape (n, *batch, B): B sample indices into each worker's shard, in [0, samples_per_worker).
        """
        ...


def check_points(X: np.ndarray, n: int, dim: int, name: str = "X") -> np.ndarray:
    """Return X as a float array after checking it is (n, *batch, dim); raise ValueError naming the field.

    Parameters
    ----------
    X : array_like
        The points, worker axis first.
    n, dim : int
        Workers and dimension of the local functions.
    name : str
    """
    X = require_real_array(name, X)
    if X.ndim < 2 or X.shape[0] != n or X.shape[-1] != dim:
        raise ValueError(
            f"{name} must have shape (n, *batch, d) = ({n}, ..., {dim}) with the worker axis first; "
            f"got shape {X.shape}"
        )
    return X


def check_global_points(x: np.ndarray, dim: int, name: str = "x") -> np.ndarray:
    """Return x as a float array after checking it is (*batch, dim); raise ValueError naming the field.

    Parameters
    ----------
    x : array_like
    dim : int
    name : str
    """
    x = require_real_array(name, x)
    if x.ndim < 1 or x.shape[-1] != dim:
        raise ValueError(f"{name} must have shape (*batch, d) with d = {dim}; got shape {x.shape}")
    return x


def local_gradients_at_start(f: LocalFunctions) -> np.ndarray:
    """The n local gradients grad f_i(x0), shape (n, d) (one ``grad`` call at the common start).

    Parameters
    ----------
    f : LocalFunctions
    """
    x0 = np.asarray(f.x0, dtype=float)
    return np.asarray(f.grad(np.broadcast_to(x0, (int(f.n), x0.size)).copy()), dtype=float)


def default_radius(f: LocalFunctions, step_size: float) -> float:
    """The divergence radius of a problem that declares none:
    ``DEFAULT_RADIUS_FACTOR * (||x0||_inf + max(step_size, 1/L) * max_i ||grad f_i(x0)||_inf)``, i.e. a
    million times the start's scale (1 when that is 0), at most ``MAX_RADIUS``.

    Parameters
    ----------
    f : LocalFunctions
        The problem (``x0``, ``grad``, optionally ``smoothness``).
    step_size : float
    """
    step = float(step_size)
    smoothness = getattr(f, "smoothness", None)
    if smoothness is not None and float(smoothness) > 0:
        step = max(step, 1.0 / float(smoothness))
    x0 = np.asarray(f.x0, dtype=float)
    start = float(np.max(np.abs(x0), initial=0.0))
    move = step * float(np.max(np.abs(local_gradients_at_start(f)), initial=0.0))
    scale = start + move
    if not np.isfinite(scale):
        return MAX_RADIUS
    return min(DEFAULT_RADIUS_FACTOR * (scale if scale > 0 else 1.0), MAX_RADIUS)


def instance_radius(f: LocalFunctions, step_size: float) -> float:
    """The radius the instance declares (``f.radius``), else `default_radius` for this step size.

    Parameters
    ----------
    f : LocalFunctions
    step_size : float
        The run's step size (for `default_radius`).
    """
    declared = getattr(f, "radius", None)
    if declared is None:
        return default_radius(f, step_size)
    declared = float(declared)
    if not declared > 0:
        raise ValueError(f"problem.radius must be a positive number; got radius={declared!r}")
    return declared


def computes_pointwise(f: object) -> bool:
    """Whether `f` declares ``pointwise = True``: each point computed on its own, bit for bit on any machine.

    Parameters
    ----------
    f : object
        A problem following `LocalFunctions`, or an oracle (its ``f`` is read).
    """
    problem = getattr(f, "f", f)
    declared = getattr(problem, "pointwise", False)
    if not isinstance(declared, bool):
        raise TypeError(f"problem.pointwise must be a bool; got pointwise={declared!r}")
    return declared
