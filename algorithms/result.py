"""`Result`: the one record type every algorithm run returns (like scipy's ``OptimizeResult``), and
`to_jsonable`, the one conversion of results and records to plain JSON types.

T_eps (docs/theory.md (A3)): the first checkpoint t with ||grad f(x_hat_t)|| <= tol, x_hat_t the average of
the local models after t iterations (t = 0 is the start point). ``t_eps_local`` is the first checkpoint at
which every worker's own model x_i is eps-stationary, ||grad f(x_i)|| <= tol for all i: the output a worker
can hold without an all-reduce. A diverged run carries neither.
"""

from __future__ import annotations

import math
import pathlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

__all__ = ["STATUSES", "Result", "Status", "to_jsonable"]

Status = Literal["converged", "max_iterations", "diverged"]
STATUSES: tuple[str, ...] = ("converged", "max_iterations", "diverged")


def to_jsonable(value: Any) -> Any:
    """``value`` as plain JSON types, recursively: numpy scalars and arrays become Python numbers and lists,
    tuples lists, sets sorted lists, paths strings, mapping keys strings.

    Non-finite floats stay floats (``nan``, ``inf``, ``-inf``): ``json.dumps`` writes them as ``NaN`` /
    ``Infinity`` / ``-Infinity`` and ``json.loads`` reads them back as the same floats, so a record read back
    equals the one written (NaN aside, which equals nothing). Any other object is a TypeError: a record must
    say what it holds.

    Example:
        >>> to_jsonable({"t": np.int64(3), "g": np.array([0.5, np.inf]), 1: (None, "a")})
        {'t': 3, 'g': [0.5, inf], '1': [None, 'a']}
    """
    if isinstance(value, Mapping):
        return {str(key): to_jsonable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(item) for item in value]
    if isinstance(value, (set, frozenset)):
        return sorted(to_jsonable(item) for item in value)
    if isinstance(value, np.ndarray):
        return to_jsonable(value.tolist())
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, pathlib.PurePath):
        return str(value)
    if value is None or isinstance(value, (str, int, float)):
        return value
    raise TypeError(f"a record must be JSON-able; got {type(value).__name__}: {value!r}")


@dataclass(repr=False)
class Result:
    """Outcome of one configuration of one algorithm.

    Attributes:
        algorithm: registry name (e.g. ``"detag"``).
        status: ``"converged"`` (x_hat reached tol: ``t_eps`` is set), ``"max_iterations"`` (the cap came
            first, or no tol was given), or ``"diverged"`` (the state left the instance's region).
        message: why the run stopped, in words (e.g. "iterate norm 1.5e+19 above the instance radius 6.9e+03
            at t = 303").
        t_eps: first checkpoint with ||grad f(x_hat)|| <= tol, or None (not reached, no tol, or diverged).
        t_eps_local: first checkpoint at which every worker's own model x_i has ||grad f(x_i)|| <= tol, or
            None (not reached before the run stopped, no tol, or diverged).
        iterations: iterations this configuration ran before it stopped.
        checkpoints: iterations at which the histories below were recorded (the last one is the stop).
        grad_norms: ||grad f(x_hat)|| at the checkpoints.
        worst_worker_grad_norms: max_i ||grad f(x_i)|| over the workers' own models at the checkpoints.
        consensus: sqrt(mean_i ||x_i - x_hat||^2) of the local models at the checkpoints.
        counters: A_B accounting at the stop: iterations, gradient_queries (per worker),
            communication_rounds, gossip_rounds (with W), exact_averages, vectors_sent (per worker),
            messages (vectors on all links).
        seed: the configuration's seed; its stream is ``numpy.random.default_rng(seed)``.
        step_size: alpha.
        batch: B, queries per worker per iteration.
        hyper: every other hyper-parameter, resolved (defaults filled in, e.g. DeTAG's R and eta).
        tol: the target eps, or None.
        radius: the divergence radius the run was judged against (`instances.protocol.instance_radius`).
        progress: with ``record_progress=True`` on a zero-chain problem, an int array (iterations + 1, n):
            the largest progress over each worker's whole state after each iteration.
        x_hat: the output (average model) at the stop.
    """

    algorithm: str
    status: Status
    message: str
    t_eps: int | None
    t_eps_local: int | None
    iterations: int
    checkpoints: list[int]
    grad_norms: list[float]
    worst_worker_grad_norms: list[float]
    consensus: list[float]
    counters: dict[str, int]
    seed: int
    step_size: float
    batch: int
    hyper: dict[str, Any] = field(default_factory=dict)
    tol: float | None = None
    radius: float = math.inf
    progress: np.ndarray | None = None
    x_hat: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}; got status={self.status!r}")
        if self.status == "diverged" and (self.t_eps is not None or self.t_eps_local is not None):
            raise ValueError("a diverged run carries no T_eps")

    @property
    def diverged(self) -> bool:
        """Whether the run left the instance's region (status ``"diverged"``)."""
        return self.status == "diverged"

    @property
    def reached(self) -> bool:
        """Whether the run reached ||grad f(x_hat)|| <= tol."""
        return self.t_eps is not None

    def __repr__(self) -> str:
        hyper = ", ".join(f"{key}={value!r}" for key, value in self.hyper.items() if key != "factors")
        return (f"Result({self.algorithm}, {self.status}, t_eps={self.t_eps}, "
                f"t_eps_local={self.t_eps_local}, iterations={self.iterations}, "
                f"step_size={self.step_size:.4g}, seed={self.seed}"
                f"{', ' + hyper if hyper else ''}: {self.message})")

    def to_record(self) -> dict[str, Any]:
        """A JSON-able dict (`to_jsonable`) of every field except the large arrays (progress, x_hat)."""
        return to_jsonable(
            {
                "algorithm": self.algorithm,
                "status": self.status,
                "message": self.message,
                "t_eps": self.t_eps,
                "t_eps_local": self.t_eps_local,
                "diverged": self.diverged,
                "iterations": self.iterations,
                "checkpoints": self.checkpoints,
                "grad_norms": self.grad_norms,
                "worst_worker_grad_norms": self.worst_worker_grad_norms,
                "consensus": self.consensus,
                "counters": self.counters,
                "seed": self.seed,
                "step_size": self.step_size,
                "batch": self.batch,
                "hyper": {key: value for key, value in self.hyper.items() if key != "factors"},
                "tol": self.tol,
                "radius": self.radius,
            }
        )
