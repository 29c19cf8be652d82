"""The engine: the one iteration loop, a simulator of the class A_B (docs/theory.md §1.5). Per iteration a
rule queries and communicates through its `Context`, an `Observer` sees the step, and the checkpoint runs the
divergence guard, the stopping test and the history (docs/architecture.md, "The engine")."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from decbounds.algorithms.certificate import _anchor_at
from decbounds.algorithms.context import (
    BudgetViolationError,
    CapabilityError,
    Context,
    MixingHandle,
)
from decbounds.algorithms.hyper import batch_hyper, per_configuration
from decbounds.algorithms.measurement import (
    HistoryRow,
    Outcomes,
    _anchor_ahead,
    _largest_abs,
    _measure,
    _Snapshot,
)
from decbounds.algorithms.observation import CallbackObserver, Observation, Observer, RunInfo
from decbounds.algorithms.result import Result, Status
from decbounds.algorithms.runtime import Runtime
from decbounds.algorithms.step_rule import State, StepRule, check_state, state_arrays
from decbounds.instances.protocol import LocalFunctions, instance_radius

from decbounds.lazy_exports import deprecated_attributes

__all__ = ["DEFAULT_RECORDS", "GUARD_EVERY", "STOP_RULES", "BudgetViolationError", "CapabilityError",
           "Context", "LoopSettings", "MixingHandle", "Observation", "Observer", "RunInfo", "Runtime",
           "batch_hyper", "execute", "per_configuration"]

# History entries kept when ``record_every`` is not given (iterations // this, at least 1).
DEFAULT_RECORDS = 1000
# Every this many iterations the divergence guard reads every per-worker array of the state.
GUARD_EVERY = 32
# What a run stops on: x_hat eps-stationary ("average"), or that and every worker's model ("both").
STOP_RULES: tuple[str, ...] = ("both", "average")


@dataclass
class LoopSettings:
    """Stopping and recording settings of one engine run (``algorithms.run_batch`` documents each field;
    ``smoothness`` is the L of the certificate, None to evaluate at every check)."""

    iterations: int
    tol: float | None = None
    check_every: int = 1
    record_every: int | None = None
    record_progress: bool = False
    stop: str = "both"
    radius: float | None = None  # None: the instance's (instances.protocol.instance_radius)
    smoothness: float | None = None
    callback: Callable[[int, State, Context], None] | None = None  # run as a `CallbackObserver`
    observer: Observer | None = None
    # asked after the start and whenever a configuration reached T_eps or stopped: settle(t, t_eps, closed)
    # -> the iteration after which the batch may stop (`algorithms.tune`'s race); every configuration still
    # running then ends as "max_iterations" there
    settle: Callable[[int, np.ndarray, np.ndarray], int] | None = None


def _divergence(t: int, x_hat: np.ndarray, arrays: list[np.ndarray], radius: np.ndarray,
                bound: np.ndarray, auxiliary_scale: float = 1.0, smallest: float | None = None,
                largest: float | None = None) -> dict[int, str]:
    """Configuration -> why x_hat or an array (models first) is non-finite or above ``bound`` (radius +
    |x0|_inf; the later arrays ``bound * auxiliary_scale``, errata E41) at t."""
    if smallest is None:
        smallest = float(bound.min()) if bound.size > 1 else float(bound[0])
    limit = smallest
    for i, a in enumerate(arrays):  # the common case, two numpy calls per array (a NaN fails the comparison)
        size = largest if i == 0 and largest is not None else np.maximum.reduce(np.abs(a), axis=None)
        if not size <= limit:
            break
        limit = smallest * auxiliary_scale
    else:
        return {}
    checks = [("iterate", np.abs(x_hat).max(axis=1), 1.0)]  # per configuration; NaN where one is NaN
    checks += [("iterate" if i == 0 else "auxiliary state", np.abs(a).max(axis=(0, 2)),
                1.0 if i == 0 else auxiliary_scale) for i, a in enumerate(arrays)]
    found: dict[int, str] = {}
    for what, size, scale in checks:
        for j in np.flatnonzero(~(size <= bound * scale)):
            if int(j) not in found:
                found[int(j)] = (f"non-finite {what} at t = {t}" if not np.isfinite(size[j]) else
                                 f"{what} norm {size[j]:.3g} above the instance radius "
                                 f"{radius[j] * scale:.3g} at t = {t}")
    return found


def _estimate_scale(oracle: object) -> float:
    """The oracle's ``estimate_scale``, at least 1 (errata E41)."""
    scale = float(getattr(oracle, "estimate_scale", 1.0)) if oracle is not None else 1.0
    return scale if scale >= 1.0 else 1.0


def _history_row(t: int, snap: _Snapshot, models: np.ndarray, f: LocalFunctions) -> HistoryRow:
    """(t, ||grad f(x_hat)||, max_i ||grad f(x_i)||, consensus distance, x_hat), per configuration."""
    if snap.worst_worker is None:
        snap = _measure(snap.x_hat, models, f, workers=True)
    assert snap.worst_worker is not None
    spread = models - snap.x_hat[None]
    consensus = np.sqrt(np.add.reduce(np.add.reduce(spread * spread, axis=0), axis=-1) / spread.shape[0])
    return (t, snap.grad_norm.copy(), snap.worst_worker.copy(), consensus, snap.x_hat.copy())


def _stopping_test(outcomes: Outcomes, t: int, snap: _Snapshot, tol: float) -> np.ndarray | None:
    """Record the T_eps reached at t; the configurations that reached one (None: none)."""
    reached = np.zeros(outcomes.k, dtype=bool)
    for t_eps, norms in ((outcomes.t_eps, snap.grad_norm), (outcomes.t_eps_local, snap.worst_worker)):
        if norms is not None and (norms <= tol).any():
            fresh = outcomes.running & (t_eps < 0) & (norms <= tol)
            t_eps[fresh] = t
            reached |= fresh
    return reached if reached.any() else None


def _outcome(outcomes: Outcomes, j: int, t: int, diverged: dict[int, str], tol: float | None,
             grad_norm: float) -> tuple[Status, str]:
    """Configuration j's status and message when it stops at t."""
    if j in diverged:
        return "diverged", diverged[j]
    if outcomes.t_eps[j] >= 0:
        local = ("every worker's model too" if outcomes.t_eps_local[j] >= 0 else
                 "not every worker's model by the stop")
        return "converged", f"||grad f(x_hat)|| <= tol at t = {outcomes.t_eps[j]}; {local}"
    reason = "" if tol is None else f" with ||grad f(x_hat)|| = {grad_norm:.3g} > tol"
    return "max_iterations", f"iteration cap {t} reached{reason}"


def _checkpoint(t: int, rule: StepRule, state: State, runtime: Runtime, outcomes: Outcomes,
                settings: LoopSettings, radius: np.ndarray, bound: np.ndarray, last: bool,
                auxiliary_scale: float, smallest: float) -> bool:
    """The end of iteration t: the divergence guard, the stopping test and the record, where due; whether a
    configuration still runs (docs/architecture.md, "The engine")."""
    tol = settings.tol
    testing = tol is not None and (t % settings.check_every == 0 or last)
    recording = t % settings.record_every == 0 or last  # type: ignore[operator]
    guarding = t % GUARD_EVERY == 0 or last
    if not (testing or recording or guarding):
        return True
    models = state.x  # the models (`StepRule.worker_arrays` lists them first); the other arrays when read
    cert = outcomes.certificate
    certified = testing and not recording and cert is not None and cert.holds(models)
    if not certified and testing and not recording and cert is not None and cert.drifting():
        assert tol is not None
        certified = _anchor_ahead(outcomes, models, runtime.problem, tol, smallest, runtime)
    if certified and not guarding:
        return True  # the common case: no test can succeed and no model left the radius
    f = runtime.problem
    x_hat = rule.average(state)
    evaluating = testing and not certified
    largest = _largest_abs(models) if evaluating else None
    diverged = _divergence(t, x_hat, rule.worker_arrays(state) if guarding else [models], radius, bound,
                           auxiliary_scale, smallest, largest)
    snap, reached = None, None
    if evaluating:
        assert tol is not None and largest is not None
        snap = _measure(x_hat, models, f, workers=recording or outcomes.local_pending, runtime=runtime)
        if not snap.quiet(tol):
            for j in np.flatnonzero(~(snap.grad_norm < np.inf)):
                diverged.setdefault(int(j), f"non-finite gradient norm at x_hat at t = {t}")
            reached = _stopping_test(outcomes, t, snap, tol)
            if reached is not None:
                outcomes.update()
        _anchor_at(outcomes, snap, models, tol, largest, smallest)
    if not (diverged or reached is not None or recording or last):
        return True
    closing = set(diverged) | set(np.flatnonzero(outcomes.running)) if last else set(diverged)
    if reached is not None:
        if not guarding:  # a T_eps is accepted only for a state inside the radius
            arrays = rule.worker_arrays(state)
            for j, why in _divergence(t, x_hat, arrays, radius, bound, auxiliary_scale, smallest).items():
                if reached[j]:
                    diverged.setdefault(j, why)
                    closing.add(j)
        done = outcomes.t_eps >= 0
        if settings.stop == "both":
            done &= outcomes.t_eps_local >= 0
        closing |= set(np.flatnonzero(done))
    closing = {int(j) for j in closing if outcomes.running[j]}
    if not (recording or closing):
        return True
    row = _history_row(t, snap or _measure(x_hat, models, f, workers=True), models, f)
    if recording:
        outcomes.history.append(row)
    for j in sorted(closing):
        status, message = _outcome(outcomes, j, t, diverged, tol, float(row[1][j]))
        outcomes.running[j] = False
        if status == "diverged":
            outcomes.t_eps[j] = outcomes.t_eps_local[j] = -1
        outcomes.final[j] = {"t": t, "status": status, "message": message,
                             "counters": runtime.counters.as_dict(t),
                             "row": tuple(value if i == 0 else value[j] for i, value in enumerate(row))}
    outcomes.update()
    return bool(outcomes.running.any())


def _state_progress(progress_of: Callable[[np.ndarray], np.ndarray], state: State, n: int, k: int,
                    d: int) -> np.ndarray:
    """The chain progress (n, k), the largest over the state's (n, m, d) arrays (m / k blocks when k | m)."""
    levels = np.zeros((n, k), dtype=np.int64)
    for _, array in state_arrays(state):
        if array.ndim < 2 or array.shape[-1] != d:
            continue
        level = np.asarray(progress_of(array)).reshape(n, -1)
        if level.shape[1] % k == 0:
            level = level.reshape(n, -1, k).max(axis=1)
        else:
            level = np.broadcast_to(level.max(axis=1, keepdims=True), (n, k))
        np.maximum(levels, level, out=levels)
    return levels


def _observed_step(rule: StepRule, state: State, runtime: Runtime, observer: Observer, t: int) -> State:
    """One step of an observed run, reported to the observer (its queries and rounds when recorded)."""
    seen = runtime.seen
    if seen is not None:
        seen.clear()
        runtime.rounds_seen.clear()
    state = rule.step(state, runtime.context)
    seen = seen or []
    observer.observe(Observation(t, tuple(X for X, _ in seen), sum(b for _, b in seen),
                                 tuple(runtime.rounds_seen), state))
    return state


def execute(rule: StepRule, runtime: Runtime, settings: LoopSettings, *, algorithm: str, seeds: Sequence[int],
            step_sizes: Sequence[float], hypers: Sequence[dict[str, object]]) -> list[Result]:
    """Run ``rule`` up to ``settings.iterations`` iterations on the runtime's k configurations: one Result
    each (``algorithms.run_batch`` checks the input and calls it per structural group).

    Parameters
    ----------
    rule : StepRule
        The prepared rule.
    runtime : Runtime
    settings : LoopSettings
        Stopping, recording and observing.
    algorithm : str
        The name recorded.
    seeds, step_sizes, hypers : sequence
        Per configuration.
    """
    f = runtime.problem
    ctx = runtime.context
    settings.record_every = settings.record_every or max(1, settings.iterations // DEFAULT_RECORDS)
    radius = np.array([settings.radius if settings.radius is not None else instance_radius(f, alpha)
                       for alpha in step_sizes], dtype=float)
    progress_of = getattr(f, "progress", None) if settings.record_progress else None
    if settings.record_progress and progress_of is None:
        raise ValueError("record_progress=True needs a zero-chain problem with a progress(X) method")
    bound = radius + float(np.max(np.abs(runtime.x0), initial=0.0))
    smallest = float(bound.min())
    aux = _estimate_scale(runtime.oracle)
    outcomes = Outcomes(runtime.k, runtime.d, runtime.n)
    # the certificate bounds x_hat's move by the models' (`_anchor_at`): for the workers' mean only
    outcomes.smoothness = settings.smoothness if type(rule).average is StepRule.average else None
    observer = settings.observer
    if settings.callback is not None:
        observer = CallbackObserver(settings.callback, ctx, observer)
    if observer is not None:
        runtime.seen = [] if getattr(observer, "reads_steps", True) else None
        observer.begin(RunInfo(algorithm, rule, runtime.n, runtime.k, runtime.d, runtime.batch,
                               None if runtime.channel is None else runtime.channel.gossip, f,
                               tuple(int(s) for s in seeds), tuple(float(a) for a in step_sizes),
                               tuple(dict(h) for h in hypers), runtime.channel))
    state = rule.init(ctx)
    check_state(state, runtime.n)
    settle, stop_at, seen, settled = settings.settle, settings.iterations, outcomes.changes, 0
    with np.errstate(over="ignore", invalid="ignore"):
        start = getattr(observer, "start", None)
        if start is not None:
            start(state)
        for t in range(settings.iterations + 1):
            if t > 0:
                runtime.begin_iteration(t - 1)
                if observer is None:
                    state = rule.step(state, ctx)
                else:
                    state = _observed_step(rule, state, runtime, observer, t - 1)
            if progress_of is not None:
                outcomes.progress.append(_state_progress(progress_of, state, runtime.n, runtime.k, runtime.d))
            if not _checkpoint(t, rule, state, runtime, outcomes, settings, radius, bound, t == stop_at, aux,
                               smallest):
                break
            if settle is not None and (t == 0 or outcomes.changes != seen):
                seen = outcomes.changes  # an update: a T_eps, a stop, or only a history row
                events = int(np.count_nonzero(outcomes.t_eps >= 0)) + int(np.count_nonzero(~outcomes.running))
                if t == 0 or events != settled:
                    settled = events
                    asked = int(settle(t, outcomes.t_eps, ~outcomes.running))
                    stop_at = min(settings.iterations, max(t + 1, asked))
    runtime.open = False
    return [_result(outcomes, j, algorithm=algorithm, seed=seeds[j], step_size=step_sizes[j], hyper=hypers[j],
                    runtime=runtime, settings=settings, radius=float(radius[j])) for j in range(runtime.k)]


def _result(outcomes: Outcomes, j: int, *, algorithm: str, seed: int, step_size: float,
            hyper: dict[str, object], runtime: Runtime, settings: LoopSettings, radius: float) -> Result:
    """Configuration j's Result: its history up to its stop, then the stop itself."""
    final = outcomes.final[j]
    assert final is not None
    stop, (_, grad_norm, worst, consensus, x_hat) = final["t"], final["row"]
    history = [entry for entry in outcomes.history if entry[0] < stop]
    t_eps, t_local = int(outcomes.t_eps[j]), int(outcomes.t_eps_local[j])
    return Result(
        algorithm=algorithm, status=final["status"], message=final["message"],
        t_eps=t_eps if t_eps >= 0 else None, t_eps_local=t_local if t_local >= 0 else None,
        iterations=int(stop), checkpoints=[int(entry[0]) for entry in history] + [int(stop)],
        grad_norms=[float(entry[1][j]) for entry in history] + [float(grad_norm)],
        worst_worker_grad_norms=[float(entry[2][j]) for entry in history] + [float(worst)],
        consensus=[float(entry[3][j]) for entry in history] + [float(consensus)], counters=final["counters"],
        seed=int(seed), step_size=float(step_size), batch=runtime.batch, hyper=hyper, tol=settings.tol,
        radius=radius, x_hat=x_hat,
        progress=(np.stack([row[:, j] for row in outcomes.progress[: stop + 1]]) if outcomes.progress
                  else None),
    )


#: The names of the previous release (``Ledger``, ``Book``), deprecated.
__getattr__ = deprecated_attributes(__name__, globals(), {
    old: (new, f"algorithms.engine.{old} is deprecated; use {new}")
    for old, new in (("Ledger", "Runtime"), ("Book", "Outcomes"))})
