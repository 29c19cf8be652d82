"""What the engine measures at a checkpoint (`_measure`) and keeps (`Outcomes`: every
configuration's outcome, the shared history and the anchor of ``algorithms.certificate``). Every norm is
summed per row in a fixed order, so a configuration's norms have the same bits alone and inside a batch."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from decbounds.algorithms.certificate import _anchor_at, _Certificate
from decbounds.instances.protocol import LocalFunctions

if TYPE_CHECKING:
    from decbounds.algorithms.runtime import Runtime

__all__ = ["AHEAD", "HistoryRow", "Outcomes"]

#: One checkpoint of the shared history: (t, ||grad f(x_hat)|| (k,), max_i ||grad f(x_i)|| (k,), the
#: consensus distance (k,), x_hat (k, d)).
HistoryRow = tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


class _Snapshot:
    """One evaluation: x_hat (k, d), ||grad f(x_hat)|| (k,), the workers' norms (n, k) when evaluated, and
    ``norms``, all of them, x_hat's first."""

    __slots__ = ("_worst", "grad_norm", "norms", "worker_norms", "x_hat")

    def __init__(self, x_hat: np.ndarray, grad_norm: np.ndarray, worker_norms: np.ndarray | None = None,
                 norms: np.ndarray | None = None) -> None:
        self.x_hat, self.grad_norm, self.worker_norms = x_hat, grad_norm, worker_norms
        self.norms = grad_norm if norms is None else norms
        self._worst: np.ndarray | None = None

    @property
    def worst_worker(self) -> np.ndarray | None:
        """max_i ||grad f(x_i)|| (k,), None when the workers were not evaluated."""
        if self._worst is None and self.worker_norms is not None:
            self._worst = np.maximum.reduce(self.worker_norms, axis=0)
        return self._worst

    def quiet(self, tol: float) -> bool:
        """Whether every norm measured is finite and above tol (then no test fired; NaN fails both)."""
        norms = self.norms.reshape(-1)
        # argmin / argmax index a NaN when there is one, and cost a fraction of a reduction
        return bool(norms[norms.argmin()] > tol and norms[norms.argmax()] < np.inf)


@dataclass
class Outcomes:
    """Per-configuration outcomes (T_eps, running, the final row), the shared history, and the anchor of the
    smoothness certificate."""

    k: int
    d: int
    n: int = 1
    t_eps: np.ndarray = field(init=False)  # -1: not reached
    t_eps_local: np.ndarray = field(init=False)
    running: np.ndarray = field(init=False)
    final: list[dict[str, Any] | None] = field(init=False)
    local_pending: bool = True  # some running configuration has no t_eps_local yet
    history: list[HistoryRow] = field(default_factory=list)
    progress: list[np.ndarray] = field(default_factory=list)
    smoothness: float | None = None  # L of `_anchor_at`; None: no certificate (evaluate at every check)
    certificate: _Certificate | None = None  # of the last evaluation (`_anchor_at`); None: none yet
    # (n + 1, k): 0 where x_hat's (row 0) or the workers' (rows 1..n) stopping test is pending, else +inf
    masks: np.ndarray = field(init=False)
    changes: int = 0  # how many times `update` ran: a stopping test or a stop changed something

    def __post_init__(self) -> None:
        self.t_eps = np.full(self.k, -1, dtype=np.int64)
        self.t_eps_local = np.full(self.k, -1, dtype=np.int64)
        self.running = np.ones(self.k, dtype=bool)
        self.final = [None] * self.k
        self.masks = np.zeros((self.n + 1, self.k))

    def update(self) -> None:
        """Refresh what follows from t_eps, t_eps_local and running (after any of them changed)."""
        self.changes += 1
        local = self.running & (self.t_eps_local < 0)
        self.local_pending = bool(local.any())
        self.masks[0] = np.where(self.running & (self.t_eps < 0), 0.0, np.inf)
        self.masks[1:] = np.where(local, 0.0, np.inf)


def _row_norms(A: np.ndarray) -> np.ndarray:
    """Euclidean norms over the last axis, each row summed on its own (the same bits in any batch)."""
    return np.sqrt(np.add.reduce(A * A, axis=-1))


def _largest_abs(A: np.ndarray) -> float:
    """max |entry| of A (NaN when A holds a NaN)."""
    magnitude = np.abs(A).reshape(-1)
    return float(magnitude[magnitude.argmax()])


def _measure(x_hat: np.ndarray, models: np.ndarray, f: LocalFunctions, workers: bool,
             runtime: Runtime | None = None, local: np.ndarray | None = None) -> _Snapshot:
    """||grad f(x_hat)|| and, with ``workers``, every ||grad f(x_i)||, in one ``full_grad`` call; a
    ``runtime`` reusing exact gradients also keeps the local gradients at ``local`` (default: the models)."""
    if not workers:
        return _Snapshot(x_hat, _row_norms(f.full_grad(x_hat)))
    stack = np.empty((models.shape[0] + 1, *models.shape[1:]))
    stack[0] = x_hat
    stack[1:] = models
    if runtime is not None and runtime.memo:
        local = models if local is None else local
        answer, G = f.grad_and_full_grad(local, stack)  # type: ignore[attr-defined]
        if answer is not None:
            runtime.known = (local.tobytes(), answer, True)
    else:
        G = f.full_grad(stack)
    norms = _row_norms(G)
    return _Snapshot(x_hat, norms[0], norms[1:], norms)


#: How far ahead `_anchor_ahead` evaluates, as a fraction of the models' move since the last anchor (the best
#: of 0.3 to 0.7 on the path zero chain: a third fewer evaluations for D-PSGD, two fifths for DSGT).
AHEAD = 0.5


def _anchor_ahead(outcomes: Outcomes, models: np.ndarray, f: LocalFunctions, tol: float, bound: float,
                  runtime: Runtime | None = None) -> bool:
    """Anchor a drifting certificate ahead, at x + AHEAD (x - a), so it lasts longer; whether it holds."""
    cert = outcomes.certificate
    assert cert is not None
    ahead = cert.ahead
    np.subtract(models, cert.anchor, out=ahead)
    ahead *= AHEAD
    ahead += models
    x_hat = np.add.reduce(ahead, axis=0) * (1.0 / ahead.shape[0])  # a mean (`_anchor_at`'s margins)
    snap = _measure(x_hat, ahead, f, workers=outcomes.local_pending, runtime=runtime, local=models)
    if not snap.quiet(tol):
        return False
    _anchor_at(outcomes, snap, ahead, tol, _largest_abs(ahead), bound)
    held = cert.holds(models)
    cert.held = 0  # the test now is not a step of the drift
    return held
