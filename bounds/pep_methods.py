"""Method descriptions for the computed worst cases of ``bounds.pep``: each decentralized method written once.

A method is a plain function ``method(ops, x0, K, alpha, **params) -> [X^0, ..., X^K]`` over per-agent
arrays (row i = agent i) that only adds, scales, and calls two operations of ``ops``:

- ``ops.grad(X)``: the local gradients, row i = grad f_i(X[i]);
- ``ops.gossip(X, t)``: gossip round t, W_t X (every row mixes with its neighbours; the average is kept).
  Every call made in the same communication round passes the same t (DSGT gossips its model and its tracker
  with W_k at iteration k): a time-varying class puts one matrix W_t per round, a static class one W for all.

``alpha`` is the sequence of the K step sizes alpha_0, ..., alpha_{K-1} (a constant step repeats; the
functions also accept one float).
The same function therefore runs on two kinds of arrays. In the SDP builder of ``bounds.pep`` a row is the
coefficient vector of a point over the Gram basis (x0, the gradients, the gossip outputs), so the method's
update equations become the linear maps that the performance-estimation problem substitutes; in
``replay`` a row is a point in R^d, the gradients are read from a table (the recovered worst case), and the
gossip is a real matrix product. ``ops.lam`` is the spectral bound the method may tune on (the DeTAG phase's
accelerated-gossip eta).

Only what the measure needs is computed: a gradient that no later iterate uses is never queried (it would
add free variables to the SDP and change nothing).

>>> import numpy as np
>>> ops = NumpyOps(W=np.full((2, 2), 0.5), grad=lambda X: X)      # f_i(x) = |x|^2 / 2
>>> [float(X[0, 0]) for X in dgd_atc(ops, np.ones((2, 1)), 2, 0.5)]
[1.0, 0.5, 0.25]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

__all__ = [
    "METHODS",
    "MethodSpec",
    "NumpyOps",
    "Ops",
    "accelerated_gossip",
    "detag",
    "dgd_atc",
    "dgd_cta",
    "dsgt",
    "extra",
    "method_spec",
]


class Ops(Protocol):
    """What a method description may call (besides numpy arithmetic on the arrays it is given)."""

    lam: float

    def grad(self, X: np.ndarray) -> np.ndarray: ...

    def gossip(self, X: np.ndarray, t: int) -> np.ndarray: ...


def _steps(alpha: float | Sequence[float] | np.ndarray, K: int) -> np.ndarray:
    return np.broadcast_to(np.asarray(alpha, dtype=float), (K,))


def dgd_cta(ops: Ops, x0: np.ndarray, K: int, alpha: float | Sequence[float]) -> list[np.ndarray]:
    """DGD / D-PSGD, combine-then-adapt (Lian et al. 2017): X^{k+1} = W_k X^k - alpha_k G(X^k)."""
    alpha = _steps(alpha, K)
    X = [x0]
    for k in range(K):
        X.append(ops.gossip(X[-1], k) - alpha[k] * ops.grad(X[-1]))
    return X


def dgd_atc(ops: Ops, x0: np.ndarray, K: int, alpha: float | Sequence[float]) -> list[np.ndarray]:
    """DGD / D-PSGD, adapt-then-combine: X^{k+1} = W_k (X^k - alpha_k G(X^k)); with W = 11^T/N it is
    gradient descent on f = mean_i f_i."""
    alpha = _steps(alpha, K)
    X = [x0]
    for k in range(K):
        X.append(ops.gossip(X[-1] - alpha[k] * ops.grad(X[-1]), k))
    return X


def dsgt(ops: Ops, x0: np.ndarray, K: int, alpha: float | Sequence[float]) -> list[np.ndarray]:
    """DSGT / DIGing (Zhang & You 2019; Nedic, Olshevsky & Shi 2017), combine-then-adapt gradient tracking:
    X^{k+1} = W_k X^k - alpha_k Y^k,  Y^{k+1} = W_k Y^k + G(X^{k+1}) - G(X^k),  Y^0 = G(X^0)."""
    alpha = _steps(alpha, K)
    g = ops.grad(x0)
    X, Y = [x0], g
    for k in range(K):
        X.append(ops.gossip(X[-1], k) - alpha[k] * Y)
        if k + 1 < K:  # Y^K is never used
            g_next = ops.grad(X[-1])
            Y = ops.gossip(Y, k) + g_next - g
            g = g_next
    return X


def extra(ops: Ops, x0: np.ndarray, K: int, alpha: float | Sequence[float]) -> list[np.ndarray]:
    """EXTRA (Shi, Ling, Wu & Yin 2015), with W~ = (I + W)/2:
    X^1 = W X^0 - alpha_0 G(X^0),
    X^{k+2} = (I + W) X^{k+1} - W~ X^k - (alpha_{k+1} G(X^{k+1}) - alpha_k G(X^k)).
    W X^k is kept from the previous iteration: one gossip round per iteration (round k gossips X^k)."""
    alpha = _steps(alpha, K)
    g = ops.grad(x0)
    WX = ops.gossip(x0, 0)
    X = [x0, WX - alpha[0] * g]
    for k in range(K - 1):
        g_next = ops.grad(X[-1])
        WX_next = ops.gossip(X[-1], k + 1)
        X.append(X[-1] + WX_next - 0.5 * (X[-2] + WX) - (alpha[k + 1] * g_next - alpha[k] * g))
        g, WX = g_next, WX_next
    return X[: K + 1]


def accelerated_gossip(ops: Ops, Z: np.ndarray, R: int, eta: float, start: int = 0) -> np.ndarray:
    """R rounds (``start``, ..., ``start + R - 1``) of the two-tap accelerated gossip (Lu & De Sa, Alg. 3;
    Liu & Morse 2011): z_{r+1} = (1 + eta) W_r z_r - eta z_{r-1}, with z_{-1} := z_0. eta = 0 is plain
    gossip W^R."""
    previous, current = Z, Z
    for r in range(R):
        previous, current = current, (1.0 + eta) * ops.gossip(current, start + r) - eta * previous
    return current


def detag(ops: Ops, x0: np.ndarray, K: int, alpha: float | Sequence[float], *, R: int = 2,
          eta: float | None = None) -> list[np.ndarray]:
    """K phases of DeTAG (Lu & De Sa 2021, Alg. 2, App. B.4): each phase is R accelerated gossip rounds M
    (``accelerated_gossip``; phase k uses rounds kR, ..., kR + R - 1 for its model and its tracker) with
    gradient tracking, the tracker post-gossip and one phase stale:
    X_{k+1} = M(X_k) - alpha_k M(Y_k),  Y_{k+1} = M(Y_k) + G(X_k) - G(X_{k-1}),  Y_0 = 0, G(X_{-1}) = 0.
    eta defaults to (1 - sqrt(1 - lam^2)) / (1 + sqrt(1 - lam^2)) with lam = ``ops.lam`` (§7.1).
    The iterates are the phase-start models: X^k is the model after k phases (k R gossip rounds)."""
    from decbounds.bounds.detag_params import accelerated_gossip_eta

    alpha = _steps(alpha, K)
    if eta is None:
        eta = accelerated_gossip_eta(ops.lam)
    X, Y = [x0], np.zeros_like(x0)
    g_previous = np.zeros_like(x0)
    for k in range(K):
        MX = accelerated_gossip(ops, X[-1], R, eta, k * R)
        MY = accelerated_gossip(ops, Y, R, eta, k * R) if np.any(Y) else Y
        X.append(MX - alpha[k] * MY)
        if k + 1 < K:  # Y_K is never used; G(X_{K-1}) only enters Y_K
            g = ops.grad(X[-2])
            Y = MY + g - g_previous
            g_previous = g
    return X


@dataclass(frozen=True)
class MethodSpec:
    """A method of ``bounds.worst_case``: its description function, its extra parameters with defaults, its
    aliases and the catalog entry whose rate it is compared with (None where the catalog has none)."""

    name: str
    run: Callable[..., list[np.ndarray]]
    params: dict[str, Any] = field(default_factory=dict)
    #: the gossip rounds of K iterations (a time-varying class gives one W_t to each)
    rounds: Callable[..., int] = lambda K, **params: K
    aliases: tuple[str, ...] = ()
    catalog: str | None = None
    label: str = ""


METHODS: dict[str, MethodSpec] = {
    spec.name: spec for spec in (
        MethodSpec("dgd_cta", dgd_cta, aliases=("dgd", "dpsgd", "d-psgd", "dpsgd_cta"), catalog="dpsgd",
                   label="DGD (combine-then-adapt)"),
        MethodSpec("dgd_atc", dgd_atc, aliases=("dpsgd_atc",), catalog="dpsgd",
                   label="DGD (adapt-then-combine)"),
        MethodSpec("dsgt", dsgt, aliases=("diging", "gradient_tracking"), catalog="dsgt",
                   label="DSGT / DIGing"),
        MethodSpec("extra", extra, label="EXTRA"),
        MethodSpec("detag", detag, params={"R": 2, "eta": None}, aliases=("detag_phase",), catalog="detag",
                   label="DeTAG phases", rounds=lambda K, R=2, **_: K * R),
    )
}
_ALIASES = {alias: spec.name for spec in METHODS.values() for alias in (spec.name, *spec.aliases)}


def method_spec(method: str) -> MethodSpec:
    """The MethodSpec of a name or alias (case-insensitive); ValueError naming the known methods."""
    if not isinstance(method, str):
        raise TypeError(f"method must be a str; got method={method!r}")
    key = method.lower().replace("-", "_")
    if key not in _ALIASES and method.lower() not in _ALIASES:
        raise ValueError(f"method must be one of {sorted(_ALIASES)}; got method={method!r}")
    return METHODS[_ALIASES.get(key, _ALIASES.get(method.lower(), ""))]


class NumpyOps:
    """Plain numpy operations: ``grad(X)`` a callable on the (N, d) points, ``gossip(X, t)`` the product
    with W (one matrix) or with W[t] (a sequence of matrices, one per round).

    >>> import numpy as np
    >>> NumpyOps(W=np.eye(2), grad=lambda X: 2 * X).gossip(np.ones((2, 1))).ravel().tolist()
    [1.0, 1.0]
    """

    def __init__(self, W: np.ndarray | Sequence[np.ndarray], grad: Callable[[np.ndarray], np.ndarray],
                 lam: float | None = None):
        self.W = np.asarray(W, dtype=float)
        self._grad = grad
        if lam is None:
            n = self.W.shape[-1]
            eig = np.linalg.eigvalsh(self.W - np.full((n, n), 1.0 / n))
            lam = float(np.max(np.abs(eig))) if n > 1 else 0.0
        self.lam = lam

    def grad(self, X: np.ndarray) -> np.ndarray:
        return np.asarray(self._grad(X), dtype=float)

    def gossip(self, X: np.ndarray, t: int = 0) -> np.ndarray:
        return (self.W if self.W.ndim == 2 else self.W[t]) @ X
