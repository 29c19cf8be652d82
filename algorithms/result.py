"""`Result`, the one record every run returns, `Grid`, the tuning `algorithms.tune` attaches to it, and
`to_jsonable`. T_eps (docs/theory.md (A3)): the first checkpoint t with ||grad f(x_hat_t)|| <= tol;
``t_eps_local``: the first at which every worker's own model is eps-stationary. A diverged run carries
neither."""

from __future__ import annotations

import math
import pathlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias, overload

import numpy as np
from decbounds.bounds.prediction import Prediction

__all__ = ["STATUSES", "Grid", "Result", "Status", "to_jsonable"]

Status = Literal["converged", "max_iterations", "diverged"]
STATUSES: tuple[str, ...] = ("converged", "max_iterations", "diverged")

#: A value of a JSON document as `to_jsonable` gives it (non-finite floats included: ``json.dumps`` writes
#: them as ``NaN`` / ``Infinity``).
JSONValue: TypeAlias = "bool | int | float | str | list[JSONValue] | dict[str, JSONValue] | None"


@overload
def to_jsonable(value: Mapping[str, object]) -> dict[str, JSONValue]: ...


@overload
def to_jsonable(value: object) -> JSONValue: ...


def to_jsonable(value: object) -> JSONValue:
    """``value`` as plain JSON types, recursively (numpy scalars and arrays as numbers and lists, sets sorted,
    paths strings, keys strings; non-finite floats stay floats); TypeError for anything else.

    Parameters
    ----------
    value : object
    """
    if isinstance(value, Mapping):
        return {str(key): to_jsonable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(item) for item in value]
    if isinstance(value, (set, frozenset)):
        # a set of one kind of JSON scalar sorts; a set mixing kinds raises TypeError, as it should
        members: list[Any] = [to_jsonable(item) for item in value]
        return sorted(members)
    if isinstance(value, np.ndarray):
        nested: object = value.tolist()
        return to_jsonable(nested)
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


@dataclass(frozen=True, repr=False)
class Grid:
    """The tuning behind a `Result` of `algorithms.tune`: every run, and the winner, the configuration with
    the least median ``score`` over the seeds (ties: the first run; errata E21).

    Parameters
    ----------
    score : float or None
        The winner's median score; None when no configuration reached a finite one.
    runs : tuple of Result
        Every run, configuration by configuration, seeds innermost.
    limits : tuple of int
        Each run's iteration cap (lower where branch and bound pruned it).
    seeds : tuple of int
    excluded_steps : tuple of float
        Grid steps dropped as inadmissible (> 1/smoothness, errata E19).
    winner : int or None
        The position in ``runs`` of the winner's first-seed run.
    winner_group : int or None
        The configuration group the winner came from (``tune(groups=...)``).
    """

    score: float | None
    runs: tuple[Result, ...]
    limits: tuple[int, ...]
    seeds: tuple[int, ...]
    excluded_steps: tuple[float, ...] = ()
    winner: int | None = None
    winner_group: int | None = None

    def __post_init__(self) -> None:
        if len(self.limits) != len(self.runs):
            raise ValueError(f"limits must hold one cap per run; got {len(self.limits)} for "
                             f"{len(self.runs)} runs")
        if not self.seeds or len(self.runs) % len(self.seeds):
            raise ValueError(f"runs must hold every configuration on each of the {len(self.seeds)} seeds; "
                             f"got {len(self.runs)} runs")
        if (self.winner is None) != (self.score is None):
            raise ValueError("winner and score must be both None (no winner) or both set; got "
                             f"winner={self.winner!r}, score={self.score!r}")
        if self.winner is not None and not (0 <= self.winner and self.winner % len(self.seeds) == 0
                                            and self.winner < len(self.runs)):
            raise ValueError(f"winner must index the first seed's run of a configuration in runs; got "
                             f"winner={self.winner!r}")

    @property
    def winner_runs(self) -> tuple[Result, ...]:
        """The winner's runs, one per seed (empty when no configuration reached a finite median score)."""
        if self.winner is None:
            return ()
        return self.runs[self.winner : self.winner + len(self.seeds)]

    def summary(self) -> str:
        """One line: the number of runs and seeds and the winner's median score.
        """
        runs = f"{len(self.runs)} run{'s' if len(self.runs) != 1 else ''}"
        seeds = f"{len(self.seeds)} seed{'s' if len(self.seeds) != 1 else ''}"
        score = "no winner" if self.score is None else f"score {self.score:.6g}"
        return f"{runs} over {seeds}, {score}"

    def __repr__(self) -> str:
        winner = "" if self.winner is None else f", winner {self.winner}"
        excluded = f", excluded steps {list(self.excluded_steps)}" if self.excluded_steps else ""
        return f"Grid({self.summary()}{winner}{excluded})"

    def to_record(self) -> dict[str, JSONValue]:
        """A JSON-able dict (`to_jsonable`): the score, seeds, excluded steps, the winner's position and
        group, and each run in brief (step size, hyper-parameters, seed, status, both T_eps, iterations and
        the cap it ran under).
        """
        return to_jsonable({
            "score": self.score, "seeds": self.seeds, "excluded_steps": self.excluded_steps,
            "winner": self.winner, "winner_group": self.winner_group,
            "runs": [{"step_size": run.step_size,
                      "hyper": {key: value for key, value in run.hyper.items() if key != "factors"},
                      "seed": run.seed, "status": run.status, "t_eps": run.t_eps,
                      "t_eps_local": run.t_eps_local, "iterations": run.iterations, "limit": limit}
                     for run, limit in zip(self.runs, self.limits, strict=True)],
        })


@dataclass(repr=False)
class Result:
    """Outcome of one configuration of one algorithm, like scipy's ``OptimizeResult`` (ValueError for an
    unknown status or a diverged run with a T_eps).

    Attributes
    ----------
    algorithm : str
    status : {"converged", "max_iterations", "diverged"}
    message : str
        Why the run stopped, in words.
    t_eps : int or None
        First checkpoint with ||grad f(x_hat)|| <= tol (this run's own; a tuned median is ``grid.score``).
    t_eps_local : int or None
        First checkpoint at which every worker's model has ||grad f(x_i)|| <= tol.
    iterations : int
    checkpoints : list of int
        Where the histories were recorded (the last: the stop).
    grad_norms : list of float
        ||grad f(x_hat)|| at the checkpoints.
    worst_worker_grad_norms : list of float
        max_i ||grad f(x_i)||.
    consensus : list of float
        sqrt(mean_i ||x_i - x_hat||^2).
    counters : dict of str to int
        A_B accounting at the stop (queries, rounds, vectors and bits per worker, messages on all links).
    seed : int
    step_size : float
    batch : int
    hyper : dict
        Every other hyper-parameter, resolved.
    tol : float or None
    radius : float
        The divergence radius the run was judged against.
    progress : numpy.ndarray or None
        With ``record_progress=True``, (iterations + 1, n): each worker's zero-chain progress.
    x_hat : numpy.ndarray or None
        The output at the stop.
    grid : Grid or None
        The tuning, when `algorithms.tune` returned it.
    bound : bounds.Prediction or None
        The catalog prediction at the run's parameters (docs/architecture.md, "Paired results").
    seconds : list of float or None
        Simulated seconds at the checkpoints (`algorithms.run_timed`).
    t_eps_seconds : float or None

    Examples
    --------
    >>> from decbounds import algorithms, instances
    >>> f = instances.heterogeneous_quadratic(4, 3, 1.0, 5)
    >>> W = instances.gossip_matrix(instances.topology("ring", 4))
    >>> result = algorithms.run("dsgt", f, W, step_size=0.125, iterations=3000, tol=1e-5)
    >>> result
    Result(dsgt, converged, t_eps=643, t_eps_local=643, iterations=643, step_size=0.125, seed=0, ...)
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
    hyper: dict[str, object] = field(default_factory=dict)
    tol: float | None = None
    radius: float = math.inf
    progress: np.ndarray | None = None
    x_hat: np.ndarray | None = None
    grid: Grid | None = None
    bound: Prediction | None = None
    seconds: list[float] | None = None
    t_eps_seconds: float | None = None

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
        grid = "" if self.grid is None else f", grid=({self.grid.summary()})"
        return (f"Result({self.algorithm}, {self.status}, t_eps={self.t_eps}, "
                f"t_eps_local={self.t_eps_local}, iterations={self.iterations}, "
                f"step_size={self.step_size:.4g}, seed={self.seed}"
                f"{', ' + hyper if hyper else ''}{grid}: {self.message})")

    def to_record(self) -> dict[str, JSONValue]:
        """A JSON-able dict (`to_jsonable`) of every field except the large arrays (progress, x_hat); the
        grid (`Grid.to_record`) under ``"grid"`` when there is one.
        """
        grid = {} if self.grid is None else {"grid": self.grid.to_record()}
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
                **grid,
                **({} if self.bound is None else {"bound": self.bound.to_record()}),
                **({} if self.seconds is None else {"seconds": self.seconds,
                                                     "t_eps_seconds": self.t_eps_seconds}),
            }
        )
