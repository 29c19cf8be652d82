"""The engine: the only iteration loop of decbounds, an algorithm of the class A_B (docs/theory.md §1.5).

Per iteration a rule may query at most B samples per worker (``ctx.sample``) and communicate at most once
(``ctx.gossip`` / ``ctx.gossip_two_tap`` with W, ``ctx.mix`` with another matrix, ``ctx.exact_average``);
then the engine runs its stopping test. A rule that breaks the budget raises `BudgetViolationError`.

The rule's `Context` (``algorithms.context``) is a capability: its data (n, k, d, B, the step sizes, the
hyper-parameters, x0, t) and those calls, nothing else. The engine's side -- the problem, the oracle, the
random streams, W, the counters -- is a `Ledger` (``algorithms.ledger``) that the context's methods close
over; the per-iteration counts are logged and compared with the totals after the run (`Ledger.close`). What
this guarantees and what Python introspection can still reach: docs/verify.md. This module is the loop
(`execute`) and its checkpoints; what a checkpoint measures and keeps is ``algorithms.measurement``, what an
evaluation proves ahead is ``algorithms.certificate``.

k configurations (step sizes x seeds x batchable hyper-parameters) run side by side as one state of shape
(n, k, d): worker axis first, so a gossip round is one product on axis 0, and per-configuration values
broadcast as (1, k, d) arrays. Each configuration stops on its own and its outcome is never overwritten,
while the others go on; the loop ends when every configuration has stopped or at the iteration cap.

Checkpoints (``execute``):
- the stopping test, every ``check_every`` iterations and at the cap (and at t = 0): T_eps is the first
  such t with ||grad f(x_hat)|| <= tol, t_eps_local the first with max_i ||grad f(x_i)|| <= tol. An
  evaluation is skipped where the smoothness of f proves it cannot succeed, so T_eps stays exact while
  full_grad runs only every few iterations of a configuration far from eps: each evaluation anchors a
  `Certificate` (`anchor_at`), and while the models stay within its limits of the anchor (seven numpy calls
  on the models, `certified_above`; no x_hat needed, Jensen's inequality bounds its move) neither the test
  nor the divergence scan of the models can fire. Where the certificate fails on a steady drift, the next
  anchor is set ahead of the models (`anchor_ahead`), so that it lasts longer;
- the divergence guard (`divergence`): at every checkpoint, a non-finite gradient norm, or x_hat or a local
  model outside the radius that the instance declares (``instances.protocol.instance_radius``; while the
  certificate holds, it proves the models inside); at every ``GUARD_EVERY``-th iteration, before a T_eps is
  accepted, and at the stop, every entry of every other per-worker array of the state too (replicas,
  trackers, buffers). A diverged configuration carries no T_eps;
- the history (`record`), every ``record_every`` iterations: grad norms at x_hat and at the worst worker, and
  the consensus distance.

The per-iteration floor (one configuration of a few workers, where a numpy call costs its overhead, not its
arithmetic; tests/algorithms/test_engine_cost.py counts it): besides the certificate, a gossip round of an
(m n, ...) array is one product for m stacked arrays (DSGT's x and y), and exact gradients of a problem
class that offers ``grad_and_full_grad`` (the zero chain) are reused at the same bits
(`Ledger.exact_gradient`): an evaluation computes the local gradients at the models in its own kernel call
for the next query, and a query asked again (DeTAG's phase-start model) gets a copy of its answer.

Randomness and bits: configuration j draws from its own stream ``numpy.random.default_rng(seed_j)``; a
stochastic oracle is queried once per configuration with it, an exact oracle (``oracle.exact``) once for the
whole batch. Nothing the engine computes mixes configurations, and its reductions run in a fixed order per
configuration; gossip is scipy's CSR product, one loop per row in the order of the row's entries, which
calls no BLAS. What that buys depends on the problem (instances.protocol, "Bits"):

- on a *pointwise* problem (``problem.pointwise = True``: the zero chain and every hard instance built on
  it, so every figure and every verify term), a configuration gets the same bits alone and inside a batch
  -- every field of its Result (a gradient-derived state array up to the sign of a zero: the zero chain's
  dense and sparse kernels, instances.protocol) -- on any machine, whatever BLAS or processor numpy has (the
  zero chain calls no BLAS; numpy 2.4's exp, log and sin gave the same bytes with its AVX-512, AVX2 and
  baseline code paths, measured with NPY_DISABLE_CPU_FEATURES);
- on a problem whose gradient is a matrix product (``x @ A``: the heterogeneous quadratic, the digits MLP),
  BLAS may pick another kernel for another number of rows (and another one on another processor: numpy 2.4
  with OpenBLAS 0.3.31 rounds a 2-row product otherwise than a 1-row one with its Haswell and Zen kernels,
  not with SkylakeX), so a configuration in a batch agrees with its solo run to
  ``instances.protocol.BATCH_RTOL`` (relative), not bit for bit. Every run is still reproducible: the same
  call on the same machine gives the same bits.

``backend="dense"`` gossip is a BLAS product too (algorithms.mixing): it agrees with the sparse backend to
rounding.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from decbounds.algorithms.certificate import anchor_at, certified_above
from decbounds.algorithms.context import (
    COMPRESSION_STREAM,
    BudgetViolationError,
    CapabilityError,
    Context,
    MixingHandle,
    batch_hyper,
    per_configuration,
)
from decbounds.algorithms.ledger import Ledger
from decbounds.algorithms.measurement import Book, HistoryRow, Snapshot, anchor_ahead, largest_abs, measure
from decbounds.algorithms.result import Result, Status
from decbounds.algorithms.step_rule import State, StepRule, check_state, state_arrays
from decbounds.instances.protocol import LocalFunctions, instance_radius

__all__ = [
    "COMPRESSION_STREAM",
    "DEFAULT_RECORDS",
    "GUARD_EVERY",
    "STOP_RULES",
    "BudgetViolationError",
    "CapabilityError",
    "Context",
    "Ledger",
    "LoopSettings",
    "MixingHandle",
    "batch_hyper",
    "certified_above",
    "divergence",
    "estimate_scale",
    "execute",
    "per_configuration",
    "state_progress",
]

# History entries kept when ``record_every`` is not given (iterations // this, at least 1).
DEFAULT_RECORDS = 1000
# Every this many iterations the divergence guard reads every per-worker array of the state.
GUARD_EVERY = 32
# What a run stops on: x_hat eps-stationary ("average"), or that and every worker's model ("both").
STOP_RULES: tuple[str, ...] = ("both", "average")


# ------------------------------------------------------------------------------------------------------
# the loop


@dataclass
class LoopSettings:
    """Stopping and recording settings of one engine run (``algorithms.run_batch`` documents each field;
    ``smoothness`` is the L of `certified_above`, None to evaluate at every check)."""

    iterations: int
    tol: float | None = None
    check_every: int = 1
    record_every: int | None = None
    record_progress: bool = False
    stop: str = "both"
    radius: float | None = None  # None: the instance's (instances.protocol.instance_radius)
    smoothness: float | None = None  # L of f for the certificate (`certified_above`); None: always evaluate
    callback: Callable[[int, State, Context], None] | None = None  # after init (t = 0) and each iteration


def _max_abs(A: np.ndarray) -> np.ndarray:
    """max |entry| per configuration of an (n, k, d) array (NaN when a configuration holds a NaN)."""
    return np.abs(A).max(axis=(0, 2))


def divergence(t: int, x_hat: np.ndarray, arrays: list[np.ndarray], radius: np.ndarray,
               bound: np.ndarray, auxiliary_scale: float = 1.0, smallest: float | None = None,
               largest: float | None = None) -> dict[int, str]:
    """The configurations whose state left the region at t, each with the reason: x_hat or an entry of the
    per-worker ``arrays`` (the models first) non-finite or outside the sup-norm ball of ``radius`` around x0
    (tested as |entry| <= ``bound`` = radius + |x0|_inf, which NaN fails).

    Auxiliary arrays (trackers, buffers) hold gradient estimates, which an oracle may inflate: the
    probabilistic zero-chain oracle returns the true coordinate times z/p. Their bound is ``bound`` times
    ``auxiliary_scale``, the oracle's ``estimate_scale`` (1/p there; 1 for unbiased bounded-noise oracles);
    without it a converging DeTAG run at p = 1.25e-4 read as diverged (errata E41).

    Parameters
    ----------
    t : int
        The iteration (for the message).
    x_hat : numpy.ndarray, shape (k, d)
        The outputs.
    arrays : list of numpy.ndarray, each (n, k, ...)
        The rule's ``worker_arrays``, the local models first.
    radius, bound : numpy.ndarray, shape (k,)
        Per configuration, the radius and radius + |x0|_inf.
    auxiliary_scale : float, default 1.0
        Widening of the bound for the arrays after the first (`estimate_scale`).
    smallest : float, optional
        ``bound.min()``, when the caller computed it once for many calls.
    largest : float, optional
        The largest |entry| of ``arrays[0]``, when the caller computed it.

    Returns
    -------
    dict of int to str
        Configuration index -> the reason; empty when every configuration is inside.

    References
    ----------
    docs/errata.md E41.

    Examples
    --------
    >>> X = np.zeros((2, 2, 3))
    >>> X[1, 1, 0] = 50.0  # worker 1 of configuration 1
    >>> divergence(7, X.mean(axis=0), [X], np.array([10.0, 10.0]), np.array([10.0, 10.0]))
    {1: 'iterate norm 25 above the instance radius 10 at t = 7'}
    """
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
    checks = [("iterate", np.abs(x_hat).max(axis=1), 1.0)]
    checks += [("iterate", _max_abs(arrays[0]), 1.0)]
    checks += [("auxiliary state", _max_abs(a), auxiliary_scale) for a in arrays[1:]]
    found: dict[int, str] = {}
    for what, size, scale in checks:
        for j in np.flatnonzero(~(size <= bound * scale)):
            if int(j) not in found:
                found[int(j)] = (f"non-finite {what} at t = {t}" if not np.isfinite(size[j]) else
                                 f"{what} norm {size[j]:.3g} above the instance radius "
                                 f"{radius[j] * scale:.3g} at t = {t}")
    return found


def estimate_scale(oracle: object) -> float:
    """How far an oracle's estimates may exceed the true gradient's scale (its ``estimate_scale``, default 1):
    the factor by which `divergence` widens the bound on auxiliary state.

    Parameters
    ----------
    oracle : object or None
        An oracle; None (exact gradients) or one without ``estimate_scale`` gives 1.

    Returns
    -------
    float
        At least 1.

    References
    ----------
    docs/errata.md E41.

    Examples
    --------
    >>> estimate_scale(None)
    1.0
    """
    scale = float(getattr(oracle, "estimate_scale", 1.0)) if oracle is not None else 1.0
    return scale if scale >= 1.0 else 1.0


def history_row(t: int, snap: Snapshot, models: np.ndarray, f: LocalFunctions) -> HistoryRow:
    """The checkpoint t for every configuration: (t, ||grad f(x_hat)||, max_i ||grad f(x_i)||, consensus
    distance sqrt(mean_i ||x_i - x_hat||^2), x_hat).

    Parameters
    ----------
    t : int
        The iteration.
    snap : Snapshot
        The evaluation at t (the workers are measured here when it did not).
    models : numpy.ndarray, shape (n, k, d)
        The workers' models.
    f : LocalFunctions
        The problem.

    Returns
    -------
    HistoryRow
    """
    if snap.worst_worker is None:
        snap = measure(snap.x_hat, models, f, workers=True)
    spread = models - snap.x_hat[None]
    consensus = np.sqrt(np.add.reduce(np.add.reduce(spread * spread, axis=0), axis=-1) / spread.shape[0])
    return (t, snap.grad_norm.copy(), snap.worst_worker.copy(), consensus, snap.x_hat.copy())


def stopping_test(book: Book, t: int, snap: Snapshot, tol: float) -> np.ndarray | None:
    """Record the T_eps reached at t: x_hat's, and every worker's when measured (NaN never reaches tol).

    Parameters
    ----------
    book : Book
        The run's book (its ``t_eps`` and ``t_eps_local`` are set here).
    t : int
        The iteration.
    snap : Snapshot
        The evaluation at t.
    tol : float
        The tolerance on the gradient norm.

    Returns
    -------
    numpy.ndarray of bool, shape (k,), or None
        The configurations that reached one of them at t; None when none did.
    """
    hit = (snap.grad_norm <= tol).any()
    hit_local = snap.worst_worker is not None and (snap.worst_worker <= tol).any()
    if not (hit or hit_local):  # the common case
        return None
    reached = np.zeros(book.k, dtype=bool)
    if hit:
        fresh = book.running & (book.t_eps < 0) & (snap.grad_norm <= tol)
        book.t_eps[fresh] = t
        reached |= fresh
    if hit_local:
        assert snap.worst_worker is not None
        fresh = book.running & (book.t_eps_local < 0) & (snap.worst_worker <= tol)
        book.t_eps_local[fresh] = t
        reached |= fresh
    return reached if reached.any() else None


def outcome(book: Book, j: int, t: int, diverged: dict[int, str], tol: float | None,
            grad_norm: float) -> tuple[Status, str]:
    """Configuration j's status and message when it stops at t.

    Parameters
    ----------
    book : Book
        The run's book.
    j : int
        The configuration.
    t : int
        The iteration it stops at.
    diverged : dict of int to str
        The configurations that diverged at t, with the reason (`divergence`).
    tol : float or None
        The tolerance (None: no stopping test).
    grad_norm : float
        Its ||grad f(x_hat)|| at t.

    Returns
    -------
    status : {"converged", "diverged", "max_iterations"}
    message : str
    """
    if j in diverged:
        return "diverged", diverged[j]
    if book.t_eps[j] >= 0:
        local = ("every worker's model too" if book.t_eps_local[j] >= 0 else
                 "not every worker's model by the stop")
        return "converged", f"||grad f(x_hat)|| <= tol at t = {book.t_eps[j]}; {local}"
    reason = "" if tol is None else f" with ||grad f(x_hat)|| = {grad_norm:.3g} > tol"
    return "max_iterations", f"iteration cap {t} reached{reason}"


def checkpoint(t: int, rule: StepRule, state: State, ledger: Ledger, book: Book, settings: LoopSettings,
               radius: np.ndarray, bound: np.ndarray, last: bool, auxiliary_scale: float = 1.0,
               smallest: float | None = None) -> bool:
    """The end of iteration t: the divergence guard, the stopping test and the record, where due
    (``auxiliary_scale``: `estimate_scale` of the oracle, ``smallest``: ``bound.min()``, both computed once
    per run). Returns whether a configuration is still running, so that the loop asks no numpy reduction
    while nothing stopped.

    Parameters
    ----------
    t : int
        The iteration just ended (0: the start state).
    rule : StepRule
        The rule (its ``average`` and ``worker_arrays``).
    state : State
        The rule's state after iteration t.
    ledger : algorithms.ledger.Ledger
        The batch's ledger.
    book : Book
        The run's book.
    settings : LoopSettings
        Stopping and recording.
    radius, bound : numpy.ndarray, shape (k,)
        Per configuration, the divergence radius and radius + |x0|_inf (`divergence`).
    last : bool
        Whether t is the iteration cap.
    auxiliary_scale : float, default 1.0
        `estimate_scale` of the oracle.
    smallest : float, optional
        ``bound.min()``, computed once per run.

    Returns
    -------
    bool
        Whether a configuration is still running.
    """
    tol = settings.tol
    testing = tol is not None and (t % settings.check_every == 0 or last)
    recording = t % settings.record_every == 0 or last
    guarding = t % GUARD_EVERY == 0 or last
    if not (testing or recording or guarding):
        return True
    if smallest is None:
        smallest = float(bound.min())
    # the models are state.x (`StepRule.worker_arrays` lists them first); the other arrays only when read
    models = state.x
    cert = book.certificate
    certified = testing and not recording and cert is not None and cert.holds(models)  # (`certified_above`)
    if not certified and testing and not recording and cert is not None and cert.drifting():
        certified = anchor_ahead(book, models, ledger.problem, ledger, tol, smallest)
    if certified and not guarding:
        return True  # the common case: proven that no test can succeed and no model left the radius
    f = ledger.problem
    x_hat = rule.average(state)
    evaluating = testing and not certified
    largest = largest_abs(models) if evaluating else None
    diverged = divergence(t, x_hat, rule.worker_arrays(state) if guarding else [models], radius, bound,
                          auxiliary_scale, smallest, largest)
    snap, reached = None, None
    if evaluating:
        snap = measure(x_hat, models, f, workers=recording or book.local_pending, ledger=ledger)
        if not snap.quiet(tol):
            for j in np.flatnonzero(~(snap.grad_norm < np.inf)):
                diverged.setdefault(int(j), f"non-finite gradient norm at x_hat at t = {t}")
            reached = stopping_test(book, t, snap, tol)
            if reached is not None:
                book.update()
        anchor_at(book, snap, models, tol, largest, smallest)
    if not (diverged or reached is not None or recording or last):
        return True  # the common case: nothing stops and nothing is recorded
    closing = set(diverged) | set(np.flatnonzero(book.running)) if last else set(diverged)
    if reached is not None:
        if not guarding:  # a T_eps is accepted only for a state inside the radius
            arrays = rule.worker_arrays(state)
            for j, why in divergence(t, x_hat, arrays, radius, bound, auxiliary_scale, smallest).items():
                if reached[j]:
                    diverged.setdefault(j, why)
                    closing.add(j)
        done = book.t_eps >= 0
        if settings.stop == "both":
            done &= book.t_eps_local >= 0
        closing |= set(np.flatnonzero(done))
    closing = {int(j) for j in closing if book.running[j]}
    if not (recording or closing):
        return True
    row = history_row(t, snap or measure(x_hat, models, f, workers=True), models, f)
    if recording:
        book.history.append(row)
    for j in sorted(closing):
        status, message = outcome(book, j, t, diverged, tol, float(row[1][j]))
        book.running[j] = False
        if status == "diverged":
            book.t_eps[j] = book.t_eps_local[j] = -1
        book.final[j] = {"t": t, "status": status, "message": message, "counters": ledger.counters.as_dict(t),
                         "row": tuple(value if i == 0 else value[j] for i, value in enumerate(row))}
    book.update()
    return bool(book.running.any())


def state_progress(progress_of: Callable[[np.ndarray], np.ndarray], state: State, n: int, k: int,
                   d: int) -> np.ndarray:
    """The chain progress per worker and configuration (n, k): the largest over every array of the state
    (``algorithms.step_rule.state_arrays``) whose last axis is the dimension d. An (n, m, d) array with m a
    multiple of k (DeTAG's stacked (x~, y)) is read as m / k blocks of the k configurations; any other
    array counts for every configuration.

    Parameters
    ----------
    progress_of : callable
        The problem's ``progress(X)``: per row of X (..., d), the chain's progress.
    state : State
        The rule's state.
    n, k, d : int
        Workers, configurations and dimension.

    Returns
    -------
    numpy.ndarray of int64, shape (n, k)
    """
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


def execute(rule: StepRule, ledger: Ledger, settings: LoopSettings, *, algorithm: str, seeds: Sequence[int],
            step_sizes: Sequence[float], hypers: Sequence[dict[str, object]]) -> list[Result]:
    """Run ``rule`` for up to ``settings.iterations`` iterations on the ledger's k configurations; one Result
    each (module docstring: the A_B budget, the checkpoints, the bits).

    The one loop of the package; ``algorithms.run_batch`` validates the user's input and calls it once per
    structural group.

    Parameters
    ----------
    rule : StepRule
        The prepared rule.
    ledger : Ledger
        The batch's engine side; the rule receives its ``context``.
    settings : LoopSettings
        Stopping and recording.
    algorithm : str
        The name recorded in each Result.
    seeds, step_sizes : sequence
        Per configuration, as in the ledger.
    hypers : sequence of dict
        Per configuration, the hyper-parameters recorded in ``Result.hyper``.

    Returns
    -------
    list of Result
        One per configuration, in the ledger's order.

    Raises
    ------
    ValueError
        If ``settings.record_progress`` is set for a problem without a ``progress`` method.
    BudgetViolationError
        If the rule breaks the A_B budget (or asks its context for what its class does not give it:
        `CapabilityError`).
    ValueError
        If an array of the rule's start state is not per worker (``algorithms.step_rule.check_state``).

    References
    ----------
    docs/theory.md §1.5 and (A3).
    """
    f = ledger.problem
    ctx = ledger.context
    settings.record_every = settings.record_every or max(1, settings.iterations // DEFAULT_RECORDS)
    radius = np.array([settings.radius if settings.radius is not None else instance_radius(f, alpha)
                       for alpha in step_sizes], dtype=float)
    progress_of = getattr(f, "progress", None) if settings.record_progress else None
    if settings.record_progress and progress_of is None:
        raise ValueError("record_progress=True needs a zero-chain problem with a progress(X) method")
    bound = radius + float(np.max(np.abs(ledger.x0), initial=0.0))
    smallest = float(bound.min())
    aux = estimate_scale(ledger.oracle)
    book = Book(ledger.k, ledger.d, ledger.n)
    # the certificate bounds x_hat's move by the models' (`anchor_at`): for the workers' mean only
    book.smoothness = settings.smoothness if type(rule).average is StepRule.average else None
    state = rule.init(ctx)
    check_state(state, ledger.n)
    with np.errstate(over="ignore", invalid="ignore"):
        for t in range(settings.iterations + 1):
            if t > 0:
                ledger.begin_iteration(t - 1)
                state = rule.step(state, ctx)
            if settings.callback is not None:
                settings.callback(t, state, ctx)
            if progress_of is not None:
                book.progress.append(state_progress(progress_of, state, ledger.n, ledger.k, ledger.d))
            if not checkpoint(t, rule, state, ledger, book, settings, radius, bound,
                              last=t == settings.iterations, auxiliary_scale=aux, smallest=smallest):
                break
    ledger.close()
    return [_result(book, j, algorithm=algorithm, seed=seeds[j], step_size=step_sizes[j], hyper=hypers[j],
                    ledger=ledger, settings=settings, radius=float(radius[j])) for j in range(ledger.k)]


def _result(book: Book, j: int, *, algorithm: str, seed: int, step_size: float, hyper: dict[str, object],
            ledger: Ledger, settings: LoopSettings, radius: float) -> Result:
    """Configuration j's Result: its history up to its stop, then the stop itself."""
    final = book.final[j]
    assert final is not None
    stop, (_, grad_norm, worst, consensus, x_hat) = final["t"], final["row"]
    history = [entry for entry in book.history if entry[0] < stop]
    t_eps, t_local = int(book.t_eps[j]), int(book.t_eps_local[j])
    return Result(
        algorithm=algorithm, status=final["status"], message=final["message"],
        t_eps=t_eps if t_eps >= 0 else None, t_eps_local=t_local if t_local >= 0 else None,
        iterations=int(stop), checkpoints=[int(entry[0]) for entry in history] + [int(stop)],
        grad_norms=[float(entry[1][j]) for entry in history] + [float(grad_norm)],
        worst_worker_grad_norms=[float(entry[2][j]) for entry in history] + [float(worst)],
        consensus=[float(entry[3][j]) for entry in history] + [float(consensus)], counters=final["counters"],
        seed=int(seed), step_size=float(step_size), batch=ledger.batch, hyper=hyper, tol=settings.tol,
        radius=radius, x_hat=x_hat,
        progress=np.stack([row[:, j] for row in book.progress[: stop + 1]]) if book.progress else None,
    )
