"""`Result`: the one record type every algorithm run returns (like scipy's OptimizeResult).

T_eps follows THEORY.md §1: the first iteration t with ||grad f(x_hat_t)|| <= tol, x_hat_t the average of the
local models after t iterations (t = 0 is the start point). A diverged run never carries a T_eps.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


def _jsonable(value: Any) -> Any:
    """Plain-Python form of a value (numpy scalars and arrays included) for JSON records."""
    if isinstance(value, dict):
        return {str(key): _jsonable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(item) for item in value]
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return None if np.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


@dataclass
class Result:
    """Outcome of one configuration of one algorithm.

    Attributes:
        algorithm: registry name (e.g. ``"detag"``).
        t_eps: first iteration with ||grad f(x_hat)|| <= tol (THEORY.md §1), or None (not reached, no tol,
            or diverged).
        diverged: NaN/inf in the iterate or the gradient norm grew past ``diverge_factor`` times its start.
        iterations: iterations this configuration ran before it stopped (T_eps, divergence, or the cap).
        checkpoints: iterations at which ``grad_norms`` and ``consensus`` were recorded.
        grad_norms: ||grad f(x_hat)|| at the checkpoints.
        consensus: sqrt(mean_i ||x_i - x_hat||^2) of the local models at the checkpoints.
        counters: A_B accounting at the stop (THEORY.md §1): iterations, gradient_queries (per worker),
            communication_rounds, gossip_rounds (with W), exact_averages, vectors_sent (per worker).
        seed: the configuration's seed; its stream is ``numpy.random.default_rng(seed)``.
        step_size: alpha.
        batch: B, queries per worker per iteration.
        hyper: every other hyper-parameter, resolved (defaults filled in, e.g. DeTAG's R and eta).
        tol: the target eps, or None.
        progress: with ``record_progress=True`` on a zero-chain problem, an int array (iterations + 1, n):
            the largest progress over each worker's whole state after each iteration (THEORY.md §2 audit).
        x_hat: the output (average model) at the stop.
    """

    algorithm: str
    t_eps: int | None
    diverged: bool
    iterations: int
    checkpoints: list[int]
    grad_norms: list[float]
    consensus: list[float]
    counters: dict[str, int]
    seed: int
    step_size: float
    batch: int
    hyper: dict[str, Any] = field(default_factory=dict)
    tol: float | None = None
    progress: np.ndarray | None = None
    x_hat: np.ndarray | None = None

    @property
    def reached(self) -> bool:
        """Whether the run reached ||grad f(x_hat)|| <= tol."""
        return self.t_eps is not None

    def to_record(self) -> dict[str, Any]:
        """A JSON-able dict of every field except the large arrays (progress, x_hat)."""
        return _jsonable(
            {
                "algorithm": self.algorithm,
                "t_eps": self.t_eps,
                "diverged": self.diverged,
                "iterations": self.iterations,
                "checkpoints": self.checkpoints,
                "grad_norms": self.grad_norms,
                "consensus": self.consensus,
                "counters": self.counters,
                "seed": self.seed,
                "step_size": self.step_size,
                "batch": self.batch,
                "hyper": self.hyper,
                "tol": self.tol,
            }
        )
