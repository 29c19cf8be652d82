"""A non-convex problem on real data: scikit-learn's bundled 8x8 digits, split across workers with the
paper's X%-shuffle partition (docs/theory.md §9.1).

Partition: sort by label, shuffle the first X%, split into n equal contiguous shards (X = 0: the most
heterogeneous); classes are balanced by default, as CIFAR-10's in the paper. Models: "mlp" (64-h-10 tanh,
softmax cross-entropy) and "logistic_nonconvex" (plus reg * sum_k x_k^2 / (1 + x_k^2)).
"""

from __future__ import annotations

import functools
import gzip
import importlib.util
import math
import os

import numpy as np
import scipy.sparse.linalg as spla
from decbounds.bounds.validation import (
    require_bool,
    require_choice,
    require_count,
    require_real,
    require_seed,
)
from decbounds.instances.heterogeneity import varsigma0_at_start
from decbounds.instances.protocol import check_global_points, check_points

__all__ = [
    "MODELS",
    "NUM_CLASSES",
    "NUM_FEATURES",
    "DigitsProblem",
    "digits_problem",
    "load_digits_arrays",
    "shuffle_partition",
]

MODELS: tuple[str, ...] = ("mlp", "logistic_nonconvex")
NUM_CLASSES = 10
NUM_FEATURES = 64


@functools.lru_cache(maxsize=1)
def load_digits_arrays() -> tuple[np.ndarray, np.ndarray]:
    """(features (1797, 64) scaled to [0, 1], labels (1797,)) of scikit-learn's bundled digits.

    Examples
    --------
    >>> features, labels = load_digits_arrays()
    >>> features.shape, float(features.max()), sorted(set(labels.tolist())) == list(range(10))
    ((1797, 64), 1.0, True)
    """
    spec = importlib.util.find_spec("sklearn")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        path = os.path.join(location, "datasets", "data", "digits.csv.gz")
        if os.path.exists(path):
            with gzip.open(path, "rt") as handle:
                table = np.loadtxt(handle, delimiter=",")
            return table[:, :NUM_FEATURES] / 16.0, table[:, NUM_FEATURES].astype(np.int64)
    from sklearn.datasets import load_digits

    bunch = load_digits()
    return bunch.data / 16.0, bunch.target.astype(np.int64)


def shuffle_partition(labels: np.ndarray, n: int, shuffled_percent: float,
                      seed: int | np.random.Generator | np.random.SeedSequence, *, balanced: bool = True
                      ) -> np.ndarray:
    """Indices (n, m) of the points each worker holds under the X%-shuffle partition (docs/theory.md §9.1).

    Parameters
    ----------
    labels : numpy.ndarray
    n : int
    shuffled_percent : float
        X in [0, 100]; 0 is the most heterogeneous split, 100 a plain shuffle.
    seed : int, numpy.random.Generator or numpy.random.SeedSequence
    balanced : bool, optional
        Equal class counts (as the paper's CIFAR-10).

    Examples
    --------
    >>> labels = np.repeat(np.arange(4), 6)
    >>> [sorted({int(v) for v in labels[row]}) for row in shuffle_partition(labels, 4, 0, seed=0)]
    [[0], [1], [2], [3]]
    """
    labels = np.asarray(labels)
    if labels.ndim != 1 or not np.issubdtype(labels.dtype, np.integer):
        raise TypeError(f"labels must be a 1-D array of integer class labels; got shape {labels.shape} and "
                        f"dtype {labels.dtype}")
    n = require_count("n", n, 1)  # workers
    shuffled_percent = require_real("shuffled_percent", shuffled_percent, allow_zero=True, maximum=100.0)
    seed = require_seed("seed", seed)
    balanced = require_bool("balanced", balanced)
    if n > labels.size:
        raise ValueError(f"n={n} workers is larger than the data ({labels.size} points)")
    order = np.argsort(labels, kind="stable")
    if balanced:
        classes, counts = np.unique(labels, return_counts=True)
        step = n // math.gcd(n, classes.size)  # n | (classes * c)  <=>  step | c
        per_class = (int(counts.min()) // step) * step
        if per_class == 0:
            raise ValueError(
                f"n={n} workers is larger than the balanced data allows (needs {step} points per class, "
                f"the smallest class has {counts.min()}); pass balanced=False"
            )
        starts = np.searchsorted(labels[order], classes)
        order = np.concatenate([order[s : s + per_class] for s in starts])
    rng = np.random.default_rng(seed)
    shuffled = round(order.size * shuffled_percent / 100.0)
    order[:shuffled] = order[:shuffled][rng.permutation(shuffled)]
    m = order.size // n
    return order[: n * m].reshape(n, m)


class DigitsProblem:
    """The digits problem on n workers; follows `instances.protocol.FiniteSumFunctions`.

    Parameters
    ----------
    n : int
    shuffled_percent : float
        X in [0, 100] of the X%-shuffle partition (`shuffle_partition`); 0 is the most heterogeneous.
    seed : int or numpy.random.Generator
        Seeds the partition and the initial point.
    model : {"mlp", "logistic_nonconvex"}
        The 64-h-10 tanh MLP, or logistic regression with the non-convex regularizer.
    hidden : int, default 16
        Width of the MLP's hidden layer, in 1..10^4.
    regularization : float, default 1e-2
        reg of the logistic model, >= 0.
    balanced : bool, default True
    """

    def __init__(self, n: int, *, shuffled_percent: float, seed: int, model: str = "mlp", hidden: int = 16,
                 regularization: float = 1e-2, balanced: bool = True) -> None:
        model = require_choice("model", model, MODELS)
        hidden = require_count("hidden", hidden, 1, maximum=10**4, what="width of the hidden layer")
        regularization = require_real("regularization", regularization, allow_zero=True)
        entropy = require_seed("seed", seed)
        if isinstance(entropy, np.random.Generator):  # SeedSequence wants entropy, not a Generator
            entropy = int(entropy.integers(2**63))
        features, labels = load_digits_arrays()
        # a SeedSequence (require_seed accepts one) spawns the two streams itself
        sequence = entropy if isinstance(entropy, np.random.SeedSequence) else np.random.SeedSequence(entropy)
        partition_seed, init_seed = sequence.spawn(2)
        self.shards = shuffle_partition(labels, n, shuffled_percent, partition_seed, balanced=balanced)
        self.n = int(n)
        self.samples_per_worker = self.shards.shape[1]
        self.shuffled_percent = float(shuffled_percent)
        self.model = model
        self.hidden = hidden if model == "mlp" else 0
        self.regularization = regularization if model == "logistic_nonconvex" else 0.0
        self.features = features[self.shards]  # (n, m, 64)
        self.labels = labels[self.shards]  # (n, m)
        self._onehot = np.eye(NUM_CLASSES)[self.labels]  # (n, m, 10)
        self._shapes: tuple[tuple[int, ...], ...]
        if model == "mlp":
            h = self.hidden
            self._shapes = ((NUM_FEATURES, h), (h,), (h, NUM_CLASSES), (NUM_CLASSES,))
        else:
            self._shapes = ((NUM_FEATURES, NUM_CLASSES), (NUM_CLASSES,))
        self._offsets = np.cumsum([0] + [math.prod(s) for s in self._shapes])
        self.dim = int(self._offsets[-1])
        self.x0 = self._initial_point(np.random.default_rng(init_seed))
        self._smoothness: float | None = None

    def _initial_point(self, rng: np.random.Generator) -> np.ndarray:
        x0 = np.zeros(self.dim)
        if self.model == "mlp":  # Glorot-uniform weights, zero biases: a fixed seeded init
            for index in (0, 2):
                fan_in, fan_out = self._shapes[index]
                limit = math.sqrt(6.0 / (fan_in + fan_out))
                lo, hi = self._offsets[index], self._offsets[index + 1]
                x0[lo:hi] = rng.uniform(-limit, limit, hi - lo)
        return x0

    # --- model -----------------------------------------------------------------------------------------
    def _unpack(self, P: np.ndarray) -> list[np.ndarray]:
        lead = P.shape[:-1]
        bounds = zip(self._offsets[:-1], self._offsets[1:], strict=True)
        return [P[..., lo:hi].reshape(*lead, *shape)
                for (lo, hi), shape in zip(bounds, self._shapes, strict=True)]

    def _loss_grad(self, P: np.ndarray, A: np.ndarray, Y: np.ndarray, want_grad: bool = True
                   ) -> tuple[np.ndarray, np.ndarray | None]:
        """Mean loss (n, K) and gradient (n, K, d) of parameters P (n, K, d) on samples A (n, K|1, S, 64)
        with one-hot labels Y (n, K|1, S, 10)."""
        S = A.shape[-2]
        if self.model == "mlp":
            W1, b1, W2, b2 = self._unpack(P)
            H = np.tanh(A @ W1 + b1[..., None, :])
            logits = H @ W2 + b2[..., None, :]
        else:
            W, b = self._unpack(P)
            logits = A @ W + b[..., None, :]
        logits = logits - logits.max(axis=-1, keepdims=True)
        log_norm = np.log(np.sum(np.exp(logits), axis=-1, keepdims=True))
        log_prob = logits - log_norm
        loss = -np.sum(Y * log_prob, axis=(-2, -1)) / S
        if self.regularization:
            loss = loss + self.regularization * np.sum(P**2 / (1.0 + P**2), axis=-1)
        if not want_grad:
            return loss, None
        d_logits = (np.exp(log_prob) - Y) / S  # (n, K, S, 10)
        if self.model == "mlp":
            gW2 = np.swapaxes(H, -1, -2) @ d_logits
            gb2 = d_logits.sum(axis=-2)
            dZ1 = (d_logits @ np.swapaxes(W2, -1, -2)) * (1.0 - H * H)
            gW1 = np.swapaxes(A, -1, -2) @ dZ1
            gb1 = dZ1.sum(axis=-2)
            parts: tuple[np.ndarray, ...] = (gW1, gb1, gW2, gb2)
        else:
            parts = (np.swapaxes(A, -1, -2) @ d_logits, d_logits.sum(axis=-2))
        lead = P.shape[:-1]
        G = np.concatenate([np.broadcast_to(part, (*lead, *part.shape[len(lead):])).reshape(*lead, -1)
                            for part in parts], axis=-1)
        if self.regularization:
            G += self.regularization * 2.0 * P / (1.0 + P**2) ** 2
        return loss, G

    def _full(self, X: np.ndarray, want_grad: bool) -> tuple[np.ndarray, np.ndarray | None]:
        X = check_points(X, self.n, self.dim)
        P = X.reshape(self.n, -1, self.dim)
        loss, G = self._loss_grad(P, self.features[:, None], self._onehot[:, None], want_grad)
        return loss.reshape(X.shape[:-1]), None if G is None else G.reshape(X.shape)

    # --- protocol ----------------------------------------------------------------------------------------
    def grad(self, X: np.ndarray) -> np.ndarray:
        """Full-shard gradients: row i is grad f_i, the mean over worker i's m samples of the loss gradient.

        Parameters
        ----------
        X : numpy.ndarray
            Shape (n, *batch, d): worker i's parameter vectors (the packed weights and biases) in row i.
        """
        return _computed(self._full(X, True)[1])

    def value(self, X: np.ndarray) -> np.ndarray:
        """Full-shard mean losses: f_i at worker i's points (cross-entropy, plus the regularizer of the
        logistic model).

        Parameters
        ----------
        X : numpy.ndarray
        """
        return self._full(X, False)[0]

    def full_grad(self, x: np.ndarray) -> np.ndarray:
        """Gradient of f = mean_i f_i at x.

        Parameters
        ----------
        x : numpy.ndarray
        """
        x = check_global_points(x, self.dim)
        mean: np.ndarray = self.grad(np.broadcast_to(x, (self.n, *x.shape))).mean(axis=0)
        return mean

    def full_value(self, x: np.ndarray) -> np.ndarray:
        """f = mean_i f_i at x: the mean loss over all n m samples.

        Parameters
        ----------
        x : numpy.ndarray
        """
        x = check_global_points(x, self.dim)
        mean: np.ndarray = self.value(np.broadcast_to(x, (self.n, *x.shape))).mean(axis=0)
        return mean

    def sample_grad(self, X: np.ndarray, idx: np.ndarray) -> np.ndarray:
        """Mean per-sample gradient over the samples ``idx`` of each worker's shard (for
        `oracles.FiniteSumOracle`).

        Parameters
        ----------
        X : numpy.ndarray
        idx : numpy.ndarray of int
            Shape (n, *batch, B): indices into worker i's shard, in [0, samples_per_worker).
        """
        X = check_points(X, self.n, self.dim)
        idx = np.asarray(idx)
        if idx.shape[:-1] != X.shape[:-1] or not np.issubdtype(idx.dtype, np.integer):
            raise ValueError(f"idx must be integers of shape (n, *batch, B) = {X.shape[:-1]} + (B,); "
                             f"got {idx.shape} {idx.dtype}")
        if idx.size and (idx.min() < 0 or idx.max() >= self.samples_per_worker):
            raise ValueError(f"idx must lie in [0, {self.samples_per_worker}) (samples per worker)")
        P = X.reshape(self.n, -1, self.dim)
        flat_idx = idx.reshape(self.n, P.shape[1], idx.shape[-1])
        workers = np.arange(self.n)[:, None, None]
        A = self.features[workers, flat_idx]
        Y = self._onehot[workers, flat_idx]
        return _computed(self._loss_grad(P, A, Y)[1]).reshape(X.shape)

    def varsigma0(self) -> float:
        """Measured heterogeneity at x0: sqrt((1/n) sum_i ||grad f_i(x0) - grad f(x0)||^2), assumption (6)."""
        return varsigma0_at_start(self)

    @property
    def smoothness(self) -> float:
        """L of the local f_i."""
        if self._smoothness is None:
            self._smoothness = self._logistic_bound() if self.model != "mlp" else self._hessian_estimate()
        return self._smoothness

    def _logistic_bound(self) -> float:
        m = self.samples_per_worker
        with_bias = np.concatenate([self.features, np.ones((self.n, m, 1))], axis=-1)
        gram = np.swapaxes(with_bias, -1, -2) @ with_bias / m
        return 0.5 * float(np.linalg.eigvalsh(gram)[:, -1].max()) + 2.0 * self.regularization

    def _hessian_estimate(self, step: float = 1e-5) -> float:
        # All workers at once: Hessian-vector products of the block-diagonal operator diag(H_1, ..., H_n).
        base = np.broadcast_to(self.x0, (self.n, self.dim))

        def hvp(v: np.ndarray) -> np.ndarray:
            V = np.asarray(v).reshape(self.n, self.dim)
            product: np.ndarray = ((self.grad(base + step * V) - self.grad(base - step * V))
                                   / (2.0 * step)).reshape(-1)
            return product

        size = self.n * self.dim
        operator = spla.LinearOperator((size, size), matvec=hvp, dtype=float)
        start = np.random.default_rng(0).standard_normal(size)
        top = spla.eigsh(operator, k=1, which="LM", v0=start, tol=1e-3, return_eigenvectors=False)
        return float(abs(top[0]))

    def __repr__(self) -> str:
        return (f"DigitsProblem(n={self.n}, model={self.model!r}, "
                f"shuffled_percent={self.shuffled_percent:g}, m={self.samples_per_worker}, d={self.dim})")


def _computed(G: np.ndarray | None) -> np.ndarray:
    """The gradient of a `DigitsProblem._loss_grad` call made with ``want_grad`` (always computed then)."""
    if G is None:
        raise RuntimeError("the gradient was not computed (want_grad=False)")
    return G


def digits_problem(n: int, *, shuffled_percent: float, seed: int, model: str = "mlp", hidden: int = 16,
                   regularization: float = 1e-2, balanced: bool = True) -> DigitsProblem:
    """The digits problem on n workers under the X%-shuffle partition (§9.1); see `DigitsProblem`.

    Parameters
    ----------
    n, shuffled_percent, seed, model, hidden, regularization, balanced

    Examples
    --------
    >>> digits_problem(8, shuffled_percent=0, seed=0)
    DigitsProblem(n=8, model='mlp', shuffled_percent=0, m=215, d=1210)
    """
    return DigitsProblem(n, shuffled_percent=shuffled_percent, seed=seed, model=model, hidden=hidden,
                         regularization=regularization, balanced=balanced)
