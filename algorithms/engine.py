"""The engine: the only iteration loop of decbounds, with the A_B accounting of THEORY.md §1-2.

k configurations (step sizes x seeds x batchable hyper-parameters) run side by side as one state of
shape (n, k, d): worker axis first, so a gossip round is one matrix product on axis 0 of the (n, k*d)
reshape, and scalar hyper-parameters broadcast as (1, k, d) arrays. Each configuration stops on its own: it
records its T_eps (or its divergence) once and is never overwritten, while the others go on; the loop ends
when every configuration has stopped or the iteration cap is reached.

Per iteration a rule may query at most ``batch`` samples per worker (``ctx.sample``) and communicate at most
once (``ctx.gossip`` with W, ``ctx.mix`` with another matrix, ``ctx.exact_average``); one communication round
may carry several arrays, counted in ``vectors_sent``. A violation is a bug in the rule and raises
``BudgetViolationError``.

Randomness: configuration j draws from its own stream ``numpy.random.default_rng(seed_j)`` (a PCG64
seeded through ``SeedSequence(seed_j)``); a stochastic oracle is queried once per configuration with that
stream, so a configuration gives the same bits alone or inside a batch. Exact oracles are queried once for
the whole batch.
Gossip products use the compiled CSR kernels of ``algorithms.kernels`` by default, with scipy's summation
order, which per output entry does not depend on k, so batching is bit-exact. Dense BLAS products
(``backend="dense"``) may pick a different kernel for a different column count, so a configuration then
agrees with its solo run only to rounding (measured in benchmarks/bench_engine.py).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import scipy.sparse as sp

from algorithms.kernels import csr_product, csr_two_tap, keep_going, outside, record_evaluated
from algorithms.result import Result

GOSSIP_BACKENDS: tuple[str, ...] = ("sparse", "dense")

# Number of history entries kept when ``record_every`` is not given (iterations // this, at least 1).
DEFAULT_RECORDS = 1000


class BudgetViolationError(RuntimeError):
    """A rule broke the A_B budget of one iteration (more than B queries or more than one round)."""


class Rule(Protocol):
    """One algorithm as a step rule on the engine (ARCHITECTURE.md "algorithms/")."""

    name: str

    def init(self, ctx: Context) -> Any: ...

    def step(self, state: Any, ctx: Context) -> Any: ...

    def average(self, state: Any) -> np.ndarray: ...

    def worker_arrays(self, state: Any) -> list[np.ndarray]: ...


# ------------------------------------------------------------------------------------------------------
# problems and oracles


def as_oracle(problem: Any) -> tuple[Any, Any]:
    """(oracle or None, local functions f). An object with ``sample`` and ``f`` is an oracle; anything
    else is taken as the local functions themselves, queried exactly (ARCHITECTURE.md "oracles/")."""
    if hasattr(problem, "sample") and hasattr(problem, "f"):
        return problem, problem.f
    for attribute in ("n", "dim", "x0", "grad", "full_grad"):
        if not hasattr(problem, attribute):
            raise TypeError(
                f"problem must be an oracle (with .sample and .f) or local functions with n, dim, x0, grad "
                f"and full_grad; {type(problem).__name__} has no attribute {attribute!r}"
            )
    return None, problem


def is_exact(oracle: Any) -> bool:
    """Whether an oracle returns exact gradients (then it needs no random stream)."""
    if oracle is None:
        return True
    if getattr(oracle, "exact", False) or getattr(oracle, "deterministic", False):
        return True
    try:
        from oracles import ExactOracle
    except ImportError:
        return False
    return isinstance(oracle, ExactOracle)


# ------------------------------------------------------------------------------------------------------
# communication operators


class MixingOperator:
    """X <- M @ X on the worker axis of an (n, ...) array: rows of M are receivers, columns senders."""

    def __init__(self, M: Any, *, backend: str = "sparse", name: str = "W") -> None:
        if backend not in GOSSIP_BACKENDS:
            raise ValueError(f"backend must be one of {GOSSIP_BACKENDS}; got {backend!r}")
        csr = sp.csr_array(M, dtype=float) if sp.issparse(M) else sp.csr_array(np.asarray(M, dtype=float))
        if csr.ndim != 2 or csr.shape[0] != csr.shape[1]:
            raise ValueError(f"{name} must be a square matrix; got shape {csr.shape}")
        self.n = int(csr.shape[0])
        self.name = name
        self.backend = backend
        coo = csr.tocoo()
        # directed off-diagonal links: the messages one round puts on the wire per array
        self.links = int(np.count_nonzero((coo.row != coo.col) & (coo.data != 0)))
        csr.sort_indices()
        self.matrix: Any = csr.toarray() if backend == "dense" else csr
        if backend == "sparse":
            # one index dtype, so the compiled kernels see one signature
            self._csr = (csr.indptr.astype(np.intp), csr.indices.astype(np.intp), csr.data)

    def two_tap(self, Z: np.ndarray, out: np.ndarray, a: Any, previous: np.ndarray, b: Any) -> np.ndarray:
        """out <- a * (M @ Z) + b * previous, each entry computed as ``(M Z) * a + previous * b`` (the bits of
        ``apply`` then ``out *= a``, ``out += previous * b``). a and b are scalars or vary along axis 1 only
        (shape (1, k, 1, ...): one coefficient per configuration), else they are broadcast the numpy way.

        Sparse: one fused pass (``algorithms.kernels.csr_two_tap``). Z, out and previous must be distinct.
        """
        if (self.backend == "sparse" and out.flags.c_contiguous and previous.shape == Z.shape
                and out.shape == Z.shape):
            a_s, b_s = _per_segment(a, Z.shape[1:]), _per_segment(b, Z.shape[1:])
            if a_s is not None and b_s is not None:
                count = max(a_s.size, b_s.size)  # a scalar one is repeated per segment
                a_s, b_s = (c if c.size == count else np.full(count, c[0]) for c in (a_s, b_s))
                width = Z.size // self.n
                csr_two_tap(*self._csr, self._flat(Z), out.reshape(-1), width, a_s, self._flat(previous), b_s,
                            max(width // count, 1))
                return out
        self.apply(Z, out)
        out *= a
        out += np.multiply(previous, b)
        return out

    @staticmethod
    def _flat(Z: np.ndarray) -> np.ndarray:
        """Z flattened in C order (a view when Z is C-contiguous)."""
        return Z.reshape(-1) if Z.flags.c_contiguous else np.ascontiguousarray(Z).reshape(-1)

    def apply(self, Z: np.ndarray, out: np.ndarray | None = None,
              add: np.ndarray | None = None) -> np.ndarray:
        """M @ Z on axis 0, plus ``add`` (Z's shape) when given, with the bits of the product then ``+= add``
        (sparse: in the same pass, as the two-tap round with a = b = 1); ``out`` (Z's shape, not Z or add)
        receives the result when given."""
        if self.backend == "sparse":
            target = out if out is not None and out.flags.c_contiguous else np.empty(Z.shape)
            width = Z.size // self.n
            if add is None:
                csr_product(*self._csr, self._flat(Z), target.reshape(-1), width)
            else:
                one, flat_out = _scalar(1.0), target.reshape(-1)
                csr_two_tap(*self._csr, self._flat(Z), flat_out, width, one, self._flat(add), one, width)
            if out is None or out is target:
                return target
            out[...] = target
            return out
        flat = Z.reshape(self.n, -1)
        if out is not None:
            np.matmul(self.matrix, flat, out=out.reshape(self.n, -1))
        else:
            out = (self.matrix @ flat).reshape(Z.shape)
        if add is not None:
            out += add
        return out


def _per_segment(c: Any, tail: tuple[int, ...]) -> np.ndarray | None:
    """A two-tap coefficient as one value per index of axis 1 (a contiguous 1-D float array: the rows of Z
    flatten to that many equal segments), or None when it varies along another axis. A scalar is one
    segment."""
    if isinstance(c, float):
        return _scalar(c)
    c = np.asarray(c, dtype=float)
    if c.size == 1:
        return c.reshape(1)
    if tail and c.shape == (1, tail[0]) + (1,) * (len(tail) - 1):
        return np.ascontiguousarray(c.reshape(-1))
    return None


@functools.lru_cache(maxsize=64)
def _scalar(value: float) -> np.ndarray:
    """A read-only one-element array of ``value`` (the common scalar coefficients, made once)."""
    array = np.array([value])
    array.flags.writeable = False
    return array


# ------------------------------------------------------------------------------------------------------
# the per-iteration context


class Context:
    """What a rule sees: shapes, the hyper-parameters, and the counted oracle and communication calls.

    Attributes: ``n, k, d``; ``batch`` (B); ``step_size`` (1, k, d); ``hyper`` (name -> (1, k, d) array for
    batched numeric hyper-parameters, else the plain value); ``t`` (the current iteration, from 0);
    ``W`` (the gossip ``MixingOperator``), ``x0`` (d,), ``problem`` (the local functions).

    Per-configuration values are repeated along d (`per_configuration`): numpy multiplies an (n, k, d)
    array by a (1, k, 1) one in inner loops of length d, which for small d costs twice as much as by the
    repeated (1, k, d) array (a 96-configuration batch of d = 6: 6.3 against 3.3 us per product).
    """

    def __init__(self, *, problem: Any, oracle: Any, W: MixingOperator | None, step_size: np.ndarray,
                 hyper: dict[str, Any], batch: int, seeds: Sequence[int], backend: str) -> None:
        self.problem = problem
        self.oracle = oracle
        self.n = int(problem.n)
        self.d = int(problem.dim)
        self.k = len(seeds)
        self.x0 = np.asarray(problem.x0, dtype=float).reshape(self.d)
        self.W = W
        self.backend = backend
        self.batch = int(batch)
        self.step_size = self.per_configuration(step_size)
        self.hyper = hyper
        self.t = 0
        self._exact = is_exact(oracle)
        self._rngs = [np.random.default_rng(int(seed)) for seed in seeds]
        self._grad = problem.grad
        # counters (totals per worker; every configuration shares them while it runs)
        self.gradient_queries = 0
        self.communication_rounds = 0
        self.gossip_rounds = 0
        self.exact_averages = 0
        self.vectors_sent = 0
        self.messages = 0
        self._queries_now = 0
        self._round_now = False

    def per_configuration(self, values: Any) -> np.ndarray:
        """k values, one per configuration, as a (1, k, d) array (each repeated along d)."""
        column = np.asarray(values, dtype=float).reshape(1, self.k, 1)
        return np.ascontiguousarray(np.broadcast_to(column, (1, self.k, self.d)))

    # -- state helpers ---------------------------------------------------------------------------------
    def start_state(self) -> np.ndarray:
        """Every worker and configuration at x0: a fresh (n, k, d) array."""
        return np.broadcast_to(self.x0, (self.n, self.k, self.d)).copy()

    def zeros(self) -> np.ndarray:
        """A fresh (n, k, d) zero array."""
        return np.zeros((self.n, self.k, self.d))

    def operator(self, M: Any, name: str = "M") -> MixingOperator:
        """A communication operator for ``mix`` (DeFacto's factors, push-sum's column-stochastic matrix)."""
        return MixingOperator(M, backend=self.backend, name=name)

    # -- counted calls ----------------------------------------------------------------------------------
    def sample(self, X: np.ndarray, queries: int | None = None) -> np.ndarray:
        """Stochastic gradients at X (n, k, d), the mean of ``queries`` (default B) queries per worker and
        configuration. Counted; at most B queries per worker in one iteration."""
        b = self.batch if queries is None else int(queries)
        if b < 1 or self._queries_now + b > self.batch:
            raise BudgetViolationError(
                f"iteration {self.t}: {self._queries_now} + {b} queries per worker exceed the batch "
                f"B={self.batch}"
            )
        self._queries_now += b
        self.gradient_queries += b
        if self._exact:
            return self._grad(X)
        out = np.empty_like(X)
        for j, rng in enumerate(self._rngs):
            out[:, j : j + 1] = self.oracle.sample(X[:, j : j + 1], rng, b)
        return out

    def _open_round(self, arrays: int, links: int) -> None:
        if self._round_now:
            raise BudgetViolationError(f"iteration {self.t}: a second communication round in one iteration")
        self._round_now = True
        self.communication_rounds += 1
        self.vectors_sent += arrays
        self.messages += arrays * links

    def gossip(self, *Z: np.ndarray, out: Sequence[np.ndarray] | None = None,
               vectors: int | None = None, add: Sequence[np.ndarray | None] | None = None) -> Any:
        """One gossip round with W on each array (n, ...); returns one array or a tuple of them.
        ``vectors`` counts the vectors each worker sends when one array stacks several (default: one per
        array). ``add``: per array, None or a local array V, so that the result is W Z + V, in the product's
        pass and with the bits of the product then ``+= V`` (`MixingOperator.apply`)."""
        if self.W is None:
            raise BudgetViolationError("this algorithm was prepared without a gossip matrix")
        self._open_round(len(Z) if vectors is None else int(vectors), self.W.links)
        self.gossip_rounds += 1
        return self._apply(self.W, Z, out, add)

    def gossip_two_tap(self, Z: np.ndarray, out: np.ndarray, a: np.ndarray, previous: np.ndarray,
                       b: np.ndarray, *, vectors: int | None = None) -> np.ndarray:
        """One gossip round of the two-tap recursion, out <- a * (W @ Z) + b * previous
        (``MixingOperator.two_tap``); counted as ``gossip(Z, vectors=vectors)``."""
        if self.W is None:
            raise BudgetViolationError("this algorithm was prepared without a gossip matrix")
        self._open_round(1 if vectors is None else int(vectors), self.W.links)
        self.gossip_rounds += 1
        return self.W.two_tap(Z, out, a, previous, b)

    def mix(self, M: MixingOperator, *Z: np.ndarray, out: Sequence[np.ndarray] | None = None) -> Any:
        """One communication round with another matrix M (rows receive): X <- M @ X."""
        self._open_round(len(Z), M.links)
        return self._apply(M, Z, out)

    def exact_average(self, *Z: np.ndarray) -> Any:
        """One exact-averaging round (AllReduce / parameter server): the worker mean, shape (1, ...)."""
        self._open_round(len(Z), self.n * (self.n - 1))
        self.exact_averages += 1
        means = tuple(np.add.reduce(z, axis=0, keepdims=True) * (1.0 / self.n) for z in Z)
        return means[0] if len(means) == 1 else means

    @staticmethod
    def _apply(M: MixingOperator, Z: Sequence[np.ndarray], out: Sequence[np.ndarray] | None,
               add: Sequence[np.ndarray | None] | None = None) -> Any:
        if len(Z) == 1:  # the common case, without the tuples
            return M.apply(Z[0], None if out is None else out[0], None if add is None else add[0])
        outs = [None] * len(Z) if out is None else out
        adds = [None] * len(Z) if add is None else add
        return tuple(M.apply(z, o, v) for z, o, v in zip(Z, outs, adds, strict=True))

    def counters(self, iterations: int) -> dict[str, int]:
        return {
            "iterations": int(iterations),
            "gradient_queries": self.gradient_queries,
            "communication_rounds": self.communication_rounds,
            "gossip_rounds": self.gossip_rounds,
            "exact_averages": self.exact_averages,
            "vectors_sent": self.vectors_sent,
            "messages": self.messages,
        }


# ------------------------------------------------------------------------------------------------------
# the loop


@dataclass
class LoopSettings:
    """Stopping and recording settings of one engine run."""

    iterations: int
    tol: float | None = None
    check_every: int = 1
    record_every: int | None = None
    record_progress: bool = False
    diverge_factor: float = 1e8
    lipschitz: float | None = None  # global smoothness bound for the cheap stopping test; None: always exact
    callback: Callable[[int, Any, Context], None] | None = None  # called after init (t=0) and each iteration


def _row_norms(A: np.ndarray) -> np.ndarray:
    return np.sqrt(np.einsum("kd,kd->k", A, A))


def execute(rule: Rule, ctx: Context, settings: LoopSettings, *, algorithm: str, seeds: Sequence[int],
            step_sizes: Sequence[float], hypers: Sequence[dict[str, Any]]) -> list[Result]:
    """Run ``rule`` for up to ``settings.iterations`` iterations on k configurations; one Result each.

    Stopping test (THEORY.md §1): ||grad f(x_hat)|| <= tol every ``check_every`` iterations. When a
    smoothness bound L of the global f is known, the exact test is skipped while it cannot succeed:
    | ||grad f(y)|| - ||grad f(x)|| | <= L ||y - x||, so after an exact evaluation g at x, no iterate y with
    g - L ||y - x|| > tol can meet the target (and none with g + L ||y - x|| below the divergence bound can
    diverge). T_eps is still exact. Only the configurations that left their radius are evaluated (in a batch
    of step sizes a few move fast and force most evaluations), so ``full_grad`` must treat the rows of x
    independently, as the local-function protocol asks.
    """
    k, n = ctx.k, ctx.n
    full_grad: Callable[[np.ndarray], np.ndarray] = ctx.problem.full_grad
    iterations, tol, check_every = settings.iterations, settings.tol, settings.check_every
    record_every = settings.record_every or max(1, iterations // DEFAULT_RECORDS)
    lipschitz = settings.lipschitz if tol is not None else None

    state = rule.init(ctx)
    x_hat = rule.average(state)
    grad_norm = _row_norms(full_grad(x_hat))
    diverge_bound = settings.diverge_factor * np.maximum(grad_norm, 1e-300)

    t_eps = np.full(k, -1, dtype=np.int64)
    stop_at = np.full(k, iterations, dtype=np.int64)
    diverged = np.zeros(k, dtype=bool)
    active = np.ones(k, dtype=bool)
    stopped = np.zeros(k, dtype=bool)  # ~active
    stop_counters: list[dict[str, int] | None] = [None] * k
    stop_x_hat = np.empty((k, ctx.d))
    stop_record: list[tuple[float, float] | None] = [None] * k
    history_t: list[int] = []
    history_grad: list[np.ndarray] = []
    history_consensus: list[np.ndarray] = []
    progress_rows: list[np.ndarray] = []
    progress_of = getattr(ctx.problem, "progress", None) if settings.record_progress else None
    if settings.record_progress and progress_of is None:
        raise ValueError("record_progress=True needs a zero-chain problem with a progress(X) method")

    def consensus_of(models: np.ndarray, center: np.ndarray) -> np.ndarray:
        spread = models - center[None]
        return np.sqrt(np.einsum("nkd,nkd->k", spread, spread) / n)

    def record(t: int, x_hat: np.ndarray, grad_norm: np.ndarray) -> None:
        history_t.append(t)
        history_grad.append(grad_norm.copy())
        history_consensus.append(consensus_of(rule.worker_arrays(state)[0], x_hat))

    def settle(t: int, x_hat: np.ndarray, grad_norm: np.ndarray, mask: np.ndarray) -> None:
        """Close the configurations in ``mask`` at iteration t."""
        nonlocal active, stopped
        cons = consensus_of(rule.worker_arrays(state)[0], x_hat)
        for j in np.flatnonzero(mask):
            stop_at[j] = t
            stop_counters[j] = ctx.counters(t)
            stop_x_hat[j] = x_hat[j]
            stop_record[j] = (float(grad_norm[j]), float(cons[j]))
        active = active & ~mask
        stopped = ~active

    def progress_row() -> np.ndarray:
        levels = [np.asarray(progress_of(a), dtype=np.int64).reshape(n, k) for a in rule.worker_arrays(state)]
        return np.maximum.reduce(levels)

    callback = settings.callback
    if callback is not None:
        callback(0, state, ctx)
    record(0, x_hat, grad_norm)
    if progress_of is not None:
        progress_rows.append(progress_row())
    if tol is not None:
        done = grad_norm <= tol
        t_eps[done] = 0
        settle(0, x_hat, grad_norm, done)
    anchor_x = x_hat.copy()
    grad_norm = grad_norm.copy()  # updated in place for the configurations evaluated
    due, moved = np.empty(k, dtype=np.intp), np.empty((k, ctx.d))  # `outside`'s output

    # the smoothness skip (see the docstring): squared radii from slack / L, shrunk by 1e-9 so that rounding
    # can only cost an evaluation, never skip a needed one; scale 0 (no smoothness bound, or no tol) turns
    # it off
    slack_scale = 0.0 if lipschitz is None else (1.0 - 1e-9) / lipschitz if lipschitz > 0 else np.inf
    radius = np.full(k, -1.0)
    if tol is not None:
        keep_going(grad_norm, tol, diverge_bound, stopped, slack_scale, radius)

    t = 0
    with np.errstate(over="ignore", invalid="ignore"):
        for t in range(1, iterations + 1):
            ctx.t = t - 1
            ctx._queries_now = 0
            ctx._round_now = False
            state = rule.step(state, ctx)
            if callback is not None:
                callback(t, state, ctx)
            if progress_of is not None:
                progress_rows.append(progress_row())
            recording = t % record_every == 0 or t == iterations
            if tol is not None and (t % check_every == 0 or t == iterations):
                x_hat = rule.average(state)
                count = k if recording else outside(x_hat, anchor_x, radius, stopped, due, moved)
                if count == 0:
                    continue
                if count == k:
                    grad_norm = _row_norms(full_grad(x_hat))
                    anchor_x = x_hat
                else:  # only these can have stopped: the others keep their last evaluation and anchor
                    norms = _row_norms(full_grad(moved[:count]))
                    record_evaluated(due, count, norms, moved, grad_norm, anchor_x)
                # the common case: no configuration stops here (NaN fails both comparisons)
                if keep_going(grad_norm, tol, diverge_bound, stopped, slack_scale, radius) and not recording:
                    continue
                bad = active & (~np.isfinite(grad_norm) | (grad_norm > diverge_bound))
                hit = active & ~bad & (grad_norm <= tol)
                if bad.any():
                    diverged |= bad
                    settle(t, x_hat, grad_norm, bad)
                if hit.any():
                    t_eps[hit] = t
                    settle(t, x_hat, grad_norm, hit)
                if recording:
                    record(t, x_hat, grad_norm)
                if not active.any():
                    break
            elif recording:
                x_hat = rule.average(state)
                grad_norm = _row_norms(full_grad(x_hat))
                bad = active & (~np.isfinite(grad_norm) | (grad_norm > diverge_bound))
                if bad.any():
                    diverged |= bad
                    settle(t, x_hat, grad_norm, bad)
                record(t, x_hat, grad_norm)
                if not active.any():
                    break
    ran = t
    if active.any():
        x_hat = rule.average(state)
        grad_norm = _row_norms(full_grad(x_hat))
        settle(ran, x_hat, grad_norm, active.copy())

    checkpoints = np.asarray(history_t, dtype=np.int64)
    grads = np.asarray(history_grad).reshape(len(history_t), k)
    cons = np.asarray(history_consensus).reshape(len(history_t), k)
    progress = np.stack(progress_rows, axis=0) if progress_rows else None
    results = []
    for j in range(k):
        keep = checkpoints < stop_at[j]
        last_grad, last_cons = stop_record[j]  # type: ignore[misc]
        results.append(
            Result(
                algorithm=algorithm,
                t_eps=int(t_eps[j]) if t_eps[j] >= 0 else None,
                diverged=bool(diverged[j]),
                iterations=int(stop_at[j]),
                checkpoints=[*checkpoints[keep].tolist(), int(stop_at[j])],
                grad_norms=[*grads[keep, j].tolist(), last_grad],
                consensus=[*cons[keep, j].tolist(), last_cons],
                counters=stop_counters[j],  # type: ignore[arg-type]
                seed=int(seeds[j]),
                step_size=float(step_sizes[j]),
                batch=ctx.batch,
                hyper=hypers[j],
                tol=tol,
                progress=None if progress is None else progress[: stop_at[j] + 1, :, j].copy(),
                x_hat=stop_x_hat[j].copy(),
            )
        )
    return results
