"""Small problems and reference recursions shared by the algorithm tests (no tests here).

``DiagonalQuadratic`` is a private, closed-form heterogeneous problem (f_i(x) = 1/2 sum_j a_ij x_j^2 - b_i.x)
so the reductions can be checked on an instance whose gradients are exact to the last bit; the instance
package's problems are used wherever a test is about an instance of the paper.
"""

from __future__ import annotations

from types import SimpleNamespace

import networkx as nx
import numpy as np
from decbounds.instances.gossip import metropolis
from decbounds.instances.protocol import BATCH_RTOL, computes_pointwise

from decbounds import instances


class DiagonalQuadratic:
    """f_i(x) = 1/2 sum_j a_ij x_j^2 - b_i . x: local smoothness max a_ij, optimum of f at mean(b)/mean(a)."""

    pointwise = True  # elementwise: the same bits alone and in a batch (instances.protocol, "Bits")

    def __init__(self, n: int = 6, d: int = 3, seed: int = 0, spread: float = 1.0) -> None:
        rng = np.random.default_rng(seed)
        self.n, self.dim = n, d
        self.x0 = np.zeros(d)
        self.a = rng.uniform(0.5, 2.0, (n, d))
        self.b = spread * rng.standard_normal((n, d))
        self.smoothness = float(self.a.max())

    def _shape(self, X: np.ndarray) -> tuple[int, ...]:
        return (self.n,) + (1,) * (X.ndim - 2) + (self.dim,)

    def grad(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=float)
        return self.a.reshape(self._shape(X)) * X - self.b.reshape(self._shape(X))

    def value(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=float)
        a, b = self.a.reshape(self._shape(X)), self.b.reshape(self._shape(X))
        return np.sum(0.5 * a * X**2 - b * X, axis=-1)

    def full_grad(self, x: np.ndarray) -> np.ndarray:
        return self.a.mean(axis=0) * np.asarray(x, dtype=float) - self.b.mean(axis=0)

    def full_value(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        return np.sum(0.5 * self.a.mean(axis=0) * x**2 - self.b.mean(axis=0) * x, axis=-1)


class DiagonalFiniteSum:
    """f_i(x) = (1/m) sum_s 1/2 sum_j a_isj x_j^2 - b_is . x: a finite-sum problem (``samples_per_worker``,
    ``sample_grad``) whose gradients are computed point by point, for ``oracles.FiniteSumOracle``."""

    def __init__(self, n: int = 6, d: int = 3, samples: int = 5, seed: int = 0) -> None:
        rng = np.random.default_rng(seed)
        self.n, self.dim, self.samples_per_worker = n, d, samples
        self.x0 = np.zeros(d)
        self.a = rng.uniform(0.5, 2.0, (n, samples, d))
        self.b = rng.standard_normal((n, samples, d))
        self.smoothness = float(self.a.max())

    def _per_worker(self, values: np.ndarray, ndim: int) -> np.ndarray:
        return values.reshape((self.n,) + (1,) * (ndim - 2) + (self.dim,))

    def grad(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=float)
        a, b = self._per_worker(self.a.mean(axis=1), X.ndim), self._per_worker(self.b.mean(axis=1), X.ndim)
        return a * X - b

    def full_grad(self, x: np.ndarray) -> np.ndarray:
        return self.a.mean(axis=(0, 1)) * np.asarray(x, dtype=float) - self.b.mean(axis=(0, 1))

    def sample_grad(self, X: np.ndarray, idx: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=float)
        workers = np.arange(self.n).reshape((self.n,) + (1,) * (idx.ndim - 1))
        a, b = self.a[workers, idx], self.b[workers, idx]  # (n, *batch, B, d)
        return np.add.reduce(a * X[..., None, :] - b, axis=-2) * (1.0 / idx.shape[-1])


class NoisyOracle:
    """Unbiased Gaussian noise of variance sigma^2 / batch per coordinate block (a private stand-in used
    where the test is about the engine's streams, not about an oracle of the paper)."""

    def __init__(self, f: DiagonalQuadratic, sigma: float) -> None:
        self.f = f
        self.sigma = sigma

    def sample(self, X: np.ndarray, rng: np.random.Generator, batch: int) -> np.ndarray:
        noise = rng.standard_normal(np.shape(X)) * (self.sigma / np.sqrt(batch))
        return self.f.grad(X) + noise

    def full_grad(self, x: np.ndarray) -> np.ndarray:
        return self.f.full_grad(x)


def assert_batch_agrees(in_batch: np.ndarray, alone: np.ndarray, problem: object) -> None:
    """The engine's promise for a configuration run inside a batch against the same configuration alone.

    The same bits on a pointwise problem (the zero chain, ``DiagonalQuadratic``); agreement to
    ``instances.protocol.BATCH_RTOL`` of the values' scale where the problem's gradient is a BLAS product.
    """
    in_batch, alone = np.asarray(in_batch), np.asarray(alone)
    if computes_pointwise(problem):
        assert np.array_equal(in_batch, alone, equal_nan=True), "not the same bits in a batch"
    else:
        scale = max(1.0, float(np.max(np.abs(alone), initial=0.0)))
        np.testing.assert_allclose(in_batch, alone, rtol=BATCH_RTOL, atol=BATCH_RTOL * scale)


def ring_W(n: int):
    return metropolis(nx.cycle_graph(n))


def path_W(n: int):
    return metropolis(nx.path_graph(n))


def sampler(problem, seed: int, batch: int = 1):
    """G(X) for an (n, d) stack drawing from default_rng(seed) exactly as the engine does for k = 1."""
    if not hasattr(problem, "sample"):
        return lambda X: problem.grad(X)
    rng = np.random.default_rng(seed)
    return lambda X: problem.sample(X[:, None, :], rng, batch)[:, 0, :]


def model_trace(key: str = "x"):
    """A callback that keeps copies of state.<key> for configuration 0, and the list it fills."""
    trace: list[np.ndarray] = []

    def callback(t, state, ctx):
        trace.append(np.array(getattr(state, key)[:, 0, :]))

    return callback, trace


class PathInstance(SimpleNamespace):
    """Cor. 2's path instance (``instances.communication_instance``, §4.3, Setting 2 on a path) with
    the quantities the tests compare against: T_c, dist, the graph, L, eps, Delta, n."""


def path_instance(n: int, *, Delta: float, L: float, eps: float) -> PathInstance:
    inst = instances.communication_instance(n, Delta=Delta, L=L, epsilon=eps)
    return PathInstance(f=inst, T_c=inst.T_c, dist=inst.dist, graph=inst.graph(), L=L, eps=eps, Delta=Delta,
                        n=n)


def pepit_centralized(method: str, K: int, mu: float, alpha: float = 1.0, L: float = 1.0) -> float:
    """PEPit's value of K steps of gradient descent ("gd") or of gradient descent with a one-step-delayed
    gradient ("delayed": x^1 = x^0, x^{k+1} = x^k - alpha grad f(x^{k-1})), ||x0 - x*|| <= 1, criterion
    f(x^K) - f* (convex) or ||x^K - x*||^2 (strongly convex): written here with PEPit's own classes."""
    from PEPit import PEP
    from PEPit.functions import SmoothConvexFunction, SmoothStronglyConvexFunction

    problem = PEP()
    f = (problem.declare_function(SmoothStronglyConvexFunction, mu=mu, L=L) if mu
         else problem.declare_function(SmoothConvexFunction, L=L))
    xs = f.stationary_point()
    x0 = problem.set_initial_point()
    problem.set_initial_condition((x0 - xs) ** 2 <= 1)
    previous, x = x0, x0
    for k in range(K):
        step = x - alpha * f.gradient(x if method == "gd" else previous)
        previous, x = x, (x if method == "delayed" and k == 0 else step)
    problem.set_performance_metric((x - xs) ** 2 if mu else f(x) - f(xs))
    return problem.solve(wrapper="cvxpy", solver="CLARABEL", verbose=0)
