"""The probabilistic zero-chain oracle of the sampling lower bound (docs/theory.md §4.2, Setting 1).

With z ~ Bernoulli(p), one query returns [g]_j = grad_j f(x) (1 + 1{j > prog(x)} (z/p - 1)): exact on the
coordinates already reached, and the one new coordinate prog(x) + 1 (the only j > prog(x) with a non-zero
partial derivative, by the zero-chain property) is revealed, multiplied by 1/p, only when z = 1.

A batch of B queries is the mean of B independent queries: with K = z_1 + ... + z_B ~ Binomial(B, p) the
new coordinate is multiplied by K / (B p), so it appears iff at least one of the B Bernoullis succeeds
(probability 1 - (1-p)^B <= B p, Lemma 8's count), and one binomial draw per row gives exactly that law.

Unbiased; the variance of one query is |d_{prog+1} f|^2 (1 - p) / p and of a batch (1 - p) / (p B) times
it. On f_hat, |d_{prog+1} f_hat| = Psi(|x_prog|) Phi'(0) <= e * sqrt(e), so the variance is at most
e^3 (1 - p) / p (errata E23), below the proof's G_inf^2 (1 - p) / p; on the scaled instance both carry the
gradient factor squared, (2 eps)^2.
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
    """Probabilistic zero-chain oracle with reveal probability p over a zero-chain instance.

    Parameters
    ----------
    f : zero-chain local functions
        For example `instances.sampling_instance(...)`.
    p : float, optional
        Reveal probability in (0, 1]; default ``f.p``.

    Raises
    ------
    TypeError
        If f has no ``progress``.
    ValueError
        If p is missing or outside (0, 1].

    References
    ----------
    Lu & De Sa 2021/2023, proof of Thm 1, Setting 1; Arjevani et al. 2019.

    Examples
    --------
    >>> from decbounds import instances
    >>> oracle = ZeroChainOracle(instances.sampling_instance(2, T_c=4, p=0.5))
    >>> X = np.zeros((2, 4))
    >>> oracle.sample(X, np.random.default_rng(0)).round(4)[:, 0]  # revealed (x 1/p) on worker 0 only
    array([-3.2974, -0.    ])
    >>> round(oracle.variance_bound(), 4)  # e^3 (1 - p) / p
    20.0855
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
        values 1/p times the true gradient's scale (the engine widens its auxiliary-state bound by this).

        References
        ----------
        docs/errata.md E41.

        Examples
        --------
        >>> from decbounds import instances
        >>> ZeroChainOracle(instances.sampling_instance(4, T_c=6, p=0.01)).estimate_scale
        100.0
        """
        return 1.0 / self.p

    def variance_bound(self, batch: int = 1) -> float:
        """sup_x E||g - grad f||^2 for a batch of B on this instance: (gain/scale)^2 e^3 (1 - p) / (p B).

        Parameters
        ----------
        batch : int, default 1
            B, in [1, MAX_BATCH].

        References
        ----------
        docs/theory.md §4.2; docs/errata.md E23 (this sharper constant).

        Examples
        --------
        >>> from decbounds import instances
        >>> oracle = ZeroChainOracle(instances.sampling_instance(4, T_c=6, p=0.01))
        >>> round(oracle.variance_bound(), 2), round(oracle.variance_bound(4), 2)
        (1988.47, 497.12)
        """
        factor = getattr(self.f, "gain", 1.0) / getattr(self.f, "scale", 1.0)
        return factor**2 * VARIANCE_CONSTANT * (1.0 - self.p) / (self.p * check_batch(batch))

    def sample(self, X: np.ndarray, rng: np.random.Generator, batch: int = 1) -> np.ndarray:
        """grad f_i with each row's progress coordinate (the next link of the chain) scaled by s / (B p),
        s ~ Binomial(B, p) the revealing queries among the B: unbiased, zero-respecting.

        Parameters
        ----------
        X : numpy.ndarray
            Shape (n, *batch_shape, d): worker i's points in row i.
        rng : numpy.random.Generator
            Draws one binomial per row (worker and configuration), whatever the row's progress.
        batch : int, default 1
            B, queries per worker averaged into one answer, in [1, MAX_BATCH].

        Returns
        -------
        numpy.ndarray
            X's shape: the revealed gradients; ``f.grad(X)`` itself when p = 1.
        """
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
