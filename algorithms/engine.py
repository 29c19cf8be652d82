"""The engine: the only iteration loop of decbounds, an algorithm of the class A_B (docs/theory.md §1.5).

Per iteration a rule may query at most B samples per worker (``ctx.sample``) and communicate at most once
(``ctx.gossip`` / ``ctx.gossip_two_tap`` with W, ``ctx.mix`` with another matrix, ``ctx.exact_average``);
then the engine runs its stopping test. A rule that breaks the budget raises `BudgetViolationError`.

The rule's `Context` is a capability: its data (n, k, d, B, the step sizes, the hyper-parameters, x0, t) and
those calls, nothing else. The engine's side -- the problem, the oracle, the random streams, W, the
counters -- is a `Ledger` that the context's methods close over; the per-iteration counts are logged and
compared with the totals after the run (`Ledger.close`). What this guarantees and what Python introspection
can still reach: docs/verify.md.

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

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np
import scipy.sparse as sp
from decbounds.algorithms.certificate import Certificate, anchor_at, certified_above
from decbounds.algorithms.compression import FLOAT_BITS, Compressor
from decbounds.algorithms.mixing import MixingOperator, ScheduledMixing, mixing_for
from decbounds.algorithms.result import Result, Status
from decbounds.algorithms.step_rule import Channel, State, StepRule, check_size, check_state, state_arrays
from decbounds.instances.gossip import as_csr
from decbounds.instances.matrices import MatrixLike
from decbounds.instances.protocol import LocalFunctions, instance_radius
from decbounds.oracles.base import Oracle

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

# `Ledger.exact_gradient` compares the bytes of states of at most this many entries (128 KiB): a copy of X
# per query, against a gradient of at least a few dozen passes over it.
_MEMO_ENTRIES = 1 << 14
# History entries kept when ``record_every`` is not given (iterations // this, at least 1).
DEFAULT_RECORDS = 1000
# Every this many iterations the divergence guard reads every per-worker array of the state.
GUARD_EVERY = 32
# What a run stops on: x_hat eps-stationary ("average"), or that and every worker's model ("both").
STOP_RULES: tuple[str, ...] = ("both", "average")
#: The spawn key of the compression streams: configuration j compresses with
#: default_rng(SeedSequence(seed_j, spawn_key=(COMPRESSION_STREAM,))), apart from its oracle's stream.
COMPRESSION_STREAM = 1


class BudgetViolationError(RuntimeError):
    """A rule broke the A_B budget of one iteration (more than B queries or more than one round).

    Raised by `Context` inside a rule's ``step``; it means the rule is not in the class A_B
    (docs/theory.md §1.5), so it is an error of the rule, never caught by the engine.

    Examples
    --------
    See `Context`.
    """


# ------------------------------------------------------------------------------------------------------
# the per-iteration context


def per_configuration(values: Sequence[float] | np.ndarray, d: int) -> np.ndarray:
    """k values, one per configuration, as a C-contiguous (1, k, d) array (each repeated along d): numpy
    multiplies an (n, k, d) array by a (1, k, 1) one in inner loops of length d, which for small d is
    markedly slower than by the repeated array.

    Parameters
    ----------
    values : sequence of float
        One value per configuration.
    d : int
        The problem's dimension.

    Returns
    -------
    numpy.ndarray, shape (1, k, d)

    Examples
    --------
    >>> per_configuration([0.1, 0.2], 3)
    array([[[0.1, 0.1, 0.1],
            [0.2, 0.2, 0.2]]])
    """
    column = np.asarray(values, dtype=float).reshape(1, -1, 1)
    return np.ascontiguousarray(np.broadcast_to(column, (1, column.shape[1], d)))


def batch_hyper(structural: Mapping[str, Any], configurations: Sequence[Mapping[str, Any]],
                d: int) -> dict[str, Any]:
    """The hyper-parameters a rule reads in ``ctx.hyper``: each batchable one as a (1, k, d) array when all
    k values are numbers (`per_configuration`), else as the list of the k values; the structural ones as
    their single value.

    Parameters
    ----------
    structural : mapping
        The batch's structural hyper-parameters.
    configurations : sequence of mapping
        Each configuration's batchable hyper-parameters (all with the same keys).
    d : int
        The problem's dimension.

    Returns
    -------
    dict

    Examples
    --------
    >>> hyper = batch_hyper({"R": 2}, [{"momentum": 0.0, "start": "paper"},
    ...                                {"momentum": 0.9, "start": "plain"}], 2)
    >>> hyper["momentum"].shape, hyper["start"], hyper["R"]
    ((1, 2, 2), ['paper', 'plain'], 2)
    """
    hyper: dict[str, Any] = {}
    for name in configurations[0] if configurations else ():
        values = [values[name] for values in configurations]
        numeric = all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)
                      for v in values)
        hyper[name] = per_configuration(values, d) if numeric else values
    hyper.update(structural)
    return hyper


@dataclass
class Counters:
    """The A_B accounting (per worker; every configuration shares it while it runs). ``bits``: what one
    worker puts on the wire for one configuration, summed over the rounds -- per vector sent,
    ``compressor.bits(d)`` in a compressed round (``algorithms.compression``), 64 d (float64) otherwise; a
    broadcast to the neighbours counts once (``messages`` counts the links)."""

    gradient_queries: int = 0
    communication_rounds: int = 0
    gossip_rounds: int = 0
    exact_averages: int = 0
    vectors_sent: int = 0
    messages: int = 0
    bits: int = 0

    def as_dict(self, iterations: int) -> dict[str, int]:
        return {"iterations": int(iterations), "gradient_queries": self.gradient_queries,
                "communication_rounds": self.communication_rounds, "gossip_rounds": self.gossip_rounds,
                "exact_averages": self.exact_averages, "vectors_sent": self.vectors_sent,
                "messages": self.messages, "bits": self.bits}


class CapabilityError(BudgetViolationError):
    """A rule asked its `Context` for something its class does not give it (exact averaging in a gossip
    rule, neighbourhood weights it did not declare, a mixing matrix off the graph, a sample of a point that
    is not one per worker and configuration). A `BudgetViolationError`: the rule is not in its class.

    Examples
    --------
    See `Ledger`.
    """


class MixingHandle:
    """An opaque handle to a mixing matrix of ``ctx.operator``: ``ctx.mix`` applies it (one counted round);
    the rule cannot apply it itself (the product kernel stays in the engine's `Ledger`).

    Parameters
    ----------
    name : str
        The matrix's name in messages.
    """

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"MixingHandle({self.name!r})"


class Context:
    """What a rule sees: a capability, not a window on the engine (docs/verify.md, "The threat model: what
    the audit guarantees").

    Data (read-only): ``n, k, d``; ``batch`` (B); ``step_size`` (1, k, d); ``hyper`` (`batch_hyper`, a
    read-only mapping); ``x0`` (d,); ``t`` (the current iteration, from 0); ``communication`` (the rule's
    kind); ``knows`` (the facts it declared). Calls: `sample` (at most B queries per worker per iteration),
    one communication round per iteration (`gossip`, `gossip_two_tap`, `mix` with a matrix of `operator`,
    `exact_average` for "exact" rules), `neighbour_weights` (declared rules only), `start_state`,
    `zeros`. Nothing else: no problem, oracle, generator, matrix, graph or counter is an attribute of it.

    The engine builds one per batch (`Ledger`, whose ``context`` it is) as an instance of a class of its
    own whose methods close over the ledger; ``Context`` is the type rules annotate with and the place
    these methods are documented.

    References
    ----------
    docs/theory.md §1.5 (the class A_B) and §1.8 (what an iteration costs).

    Examples
    --------
    See `Ledger`.
    """

    __slots__ = ("batch", "communication", "d", "hyper", "k", "knows", "n", "step_size", "x0")
    # the slots' types (set by the engine, read-only to the rule)
    batch: int
    communication: str
    d: int
    hyper: Mapping[str, Any]
    k: int
    knows: frozenset[str]
    n: int
    step_size: np.ndarray
    x0: np.ndarray

    def __init__(self) -> None:
        raise TypeError("a Context is built by the engine: algorithms.engine.Ledger(...).context")

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"the context is read-only: cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"the context is read-only: cannot delete {name!r}")

    @property
    def t(self) -> int:
        """The current iteration (from 0)."""
        raise NotImplementedError

    def start_state(self) -> np.ndarray:
        """Every worker and configuration at x0: a fresh (n, k, d) array."""
        raise NotImplementedError

    def zeros(self) -> np.ndarray:
        """A fresh (n, k, d) zero array."""
        raise NotImplementedError

    def sample(self, X: np.ndarray, queries: int | None = None) -> np.ndarray:
        """Stochastic gradients at X (n, k, d), the mean of ``queries`` (default B) queries per worker and
        configuration. Counted; at most B queries per worker in one iteration.

        Parameters
        ----------
        X : numpy.ndarray, shape (n, k, d)
            The points, one per worker and configuration.
        queries : int, optional
            Queries averaged (default B).

        Returns
        -------
        numpy.ndarray, shape (n, k, d)

        Raises
        ------
        BudgetViolationError
            If the iteration's queries would exceed B per worker (or ``queries`` < 1), or X is not
            (n, k, d) (`CapabilityError`).
        """
        raise NotImplementedError

    def gossip(self, *Z: np.ndarray, out: Sequence[np.ndarray] | None = None, vectors: int | None = None,
               add: Sequence[np.ndarray | None] | None = None, compressor: Compressor | None = None,
               sent: Sequence[np.ndarray] | None = None) -> Any:
        """One gossip round with W (the push matrix for "push" rules; W_t in iteration t over a gossip
        schedule) on each array (n, ...); returns one array or a tuple of them.

        With a ``compressor`` (``algorithms.compression``) every worker sends C(z_i) instead of z_i: the
        engine compresses each vector (configuration j draws from its own compression stream,
        ``numpy.random.default_rng(SeedSequence(seed_j, spawn_key=(COMPRESSION_STREAM,)))``, so the oracle's
        draws are those of an uncompressed run), the round is one round as any other, and the ledger
        counts ``compressor.bits(d)`` bits per vector instead of 64 d. The result is W C(Z) (+ V); the
        message C(Z) itself, which its sender knows, goes to ``sent``.

        Parameters
        ----------
        *Z : numpy.ndarray, shape (n, ...) or (m n, ...)
            The arrays sent in this round; an (m n, ...) array is m arrays (n, ...) stacked, mixed each on its
            own in one product (``MixingOperator.stacked``).
        out : sequence of numpy.ndarray, optional
            Per array, where the result goes (it may be the array itself: ``gossip(X, out=[X])`` is W X).
        vectors : int, optional
            The vectors each worker sends (default: one per (n, ...) array, m per stacked array; give it when
            one array stacks several along another axis).
        add : sequence of (numpy.ndarray or None), optional
            Per array, None or a local array V, so that the result is W Z + V (the bits of the product then
            ``+= V``).
        compressor : algorithms.compression.Compressor, optional
            Compress what is sent (each array (n, k, d) or (m n, k, d): axis -2 the configurations).
        sent : sequence of numpy.ndarray, optional
            With a compressor, per array, where the message C(Z) goes.

        Returns
        -------
        numpy.ndarray or tuple of numpy.ndarray

        Raises
        ------
        BudgetViolationError
            If the iteration already had its communication round, or there is no gossip matrix
            (`CapabilityError`: a compressed array whose axis -2 is not the k configurations).
        """
        raise NotImplementedError

    def gossip_two_tap(self, Z: np.ndarray, out: np.ndarray, a: np.ndarray, previous: np.ndarray,
                       b: np.ndarray, *, vectors: int | None = None) -> np.ndarray:
        """One gossip round of the two-tap recursion, out <- a * (W @ Z) + b * previous
        (``MixingOperator.two_tap``); counted as ``gossip(Z, vectors=vectors)``."""
        raise NotImplementedError

    def operator(self, M: MatrixLike, name: str = "M") -> MixingHandle:
        """A handle to a mixing matrix M of the rule's own (rows receive; DeFacto's exact-averaging factors)
        for `mix`, with the run's gossip backend. M is not W: it need not be stochastic or connected, only
        supported on W's graph, so it is read as a matrix (``instances.as_csr``; a `GossipMatrix` gives
        its CSR matrix, not checked or decomposed again), never converted by ``instances.as_gossip``.

        Parameters
        ----------
        M : GossipMatrix, numpy.ndarray or scipy.sparse matrix
            The n x n matrix.
        name : str, default "M"
            Its name in messages.

        Returns
        -------
        MixingHandle
            For `mix`; the rule cannot apply it itself.

        Raises
        ------
        CapabilityError
            If M has an entry (i, j), i != j, where j is not i's neighbour on the rule's graph (one round
            moves information one hop), or the rule communicates by exact averaging.
        ValueError
            If M is not n x n.
        """
        raise NotImplementedError

    def mix(self, M: MixingHandle, *Z: np.ndarray,
            out: Sequence[np.ndarray] | None = None) -> np.ndarray | tuple[np.ndarray, ...]:
        """One communication round with a matrix of `operator`: X <- M @ X for each array.

        Parameters
        ----------
        M : MixingHandle
            From `operator`.
        *Z : numpy.ndarray, shape (n, ...)
            The arrays sent.
        out : sequence of numpy.ndarray, optional
            Per array, where the result goes.

        Returns
        -------
        numpy.ndarray or tuple of numpy.ndarray

        Raises
        ------
        BudgetViolationError
            If the iteration already had its communication round, or M is not from this context.
        """
        raise NotImplementedError

    def exact_average(self, *Z: np.ndarray) -> Any:
        """One exact-averaging round (AllReduce / parameter server): the worker mean, shape (1, ...);
        rules that declare ``communication = "exact"`` only.

        Counted as n (n - 1) messages per array. Raises `BudgetViolationError` when the iteration already
        had its communication round, `CapabilityError` for a rule of another kind.
        """
        raise NotImplementedError

    def neighbour_weights(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """Row i of W (W_t of a schedule) as worker i knows it: (the columns j with W_ij != 0, W_ij),
        copies; rules that declare ``knows = ("neighbour_weights",)`` only (`CapabilityError` otherwise)."""
        raise NotImplementedError


def _context_class(ledger: Ledger) -> type[Context]:
    """A `Context` subclass of one batch: every method a closure over ``ledger``, so that no attribute of
    the rule's context leads to the engine's state."""
    L = ledger
    counters = ledger.counters
    n, k, d, batch = ledger.n, ledger.k, ledger.d, ledger.batch
    shape = (n, k, d)
    exact = ledger.exact
    problem, oracle, rngs = ledger.problem, ledger.oracle, ledger.rngs
    W = ledger.W
    kind = ledger.channel.kind if ledger.channel is not None else "exact"
    gossip_counts = kind == "gossip"
    x0 = ledger.x0
    knows = frozenset(ledger.knows)

    def open_round(arrays: int, links: int, bits_each: int) -> None:
        if L.round_now or not L._open:
            if not L._open:
                raise CapabilityError("the start state (init) may not query or communicate")
            raise BudgetViolationError(f"iteration {L.t}: a second communication round in one iteration")
        L.round_now = True
        counters.communication_rounds += 1
        counters.vectors_sent += arrays
        counters.messages += arrays * links
        counters.bits += arrays * bits_each

    def compressed(Z: Sequence[np.ndarray], compressor: Compressor,
                   sent: Sequence[np.ndarray] | None) -> list[np.ndarray]:
        """C(z) for each array, configuration j from its compression stream; copied into ``sent``."""
        if L.compression_rngs is None:
            L.compression_rngs = [np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(
                COMPRESSION_STREAM,))) for seed in L.seeds]
        messages = []
        for i, z in enumerate(Z):
            if z.ndim != 3 or z.shape[1] != k or z.shape[0] % n:
                raise CapabilityError(f"iteration {L.t}: compressed gossip takes (n, k, d) or (m n, k, d) "
                                      f"arrays, axis 1 the k={k} configurations; got {z.shape}")
            q = compressor.compress(z, L.compression_rngs)
            if sent is not None:
                sent[i][...] = q
            messages.append(q)
        return messages

    def gossip_operator() -> MixingOperator:
        """The operator of this iteration: W, or W_t of a gossip schedule in iteration t."""
        if W is None:
            raise BudgetViolationError("this algorithm was prepared without a gossip matrix")
        return W.at(L.t)

    fixed = W if type(W) is MixingOperator else None  # a fixed W: no lookup per round

    class RunContext(Context):
        __slots__ = ()

        @property
        def t(self) -> int:
            return L.t

        def start_state(self) -> np.ndarray:
            return np.broadcast_to(x0, shape).copy()

        def zeros(self) -> np.ndarray:
            return np.zeros(shape)

        def sample(self, X: np.ndarray, queries: int | None = None) -> np.ndarray:
            b = batch if queries is None else int(queries)
            if b < 1 or L.queries_now + b > batch or not L._open:
                if not L._open:
                    raise CapabilityError("the start state (init) may not query or communicate")
                raise BudgetViolationError(f"iteration {L.t}: {L.queries_now} + {b} queries per worker "
                                           f"exceed the batch B={batch}")
            if X.shape != shape:
                raise CapabilityError(f"iteration {L.t}: ctx.sample(X) takes one point per worker and "
                                      f"configuration, shape {shape}; got {X.shape}")
            L.queries_now += b
            counters.gradient_queries += b
            if exact:
                return L.exact_gradient(X) if L.memo else problem.grad(X)
            many = getattr(oracle, "sample_configurations", None)
            if many is not None:  # one gradient evaluation for the whole batch where the oracle can
                return many(X, rngs, b)
            out = np.empty_like(X)
            for j, rng in enumerate(rngs):
                out[:, j : j + 1] = oracle.sample(X[:, j : j + 1], rng, b)
            return out

        def gossip(self, *Z: np.ndarray, out: Sequence[np.ndarray] | None = None,
                   vectors: int | None = None, add: Sequence[np.ndarray | None] | None = None,
                   compressor: Compressor | None = None, sent: Sequence[np.ndarray] | None = None) -> Any:
            M = fixed or gossip_operator()
            if vectors is None:  # an (m n, ...) array is m arrays stacked: m vectors
                vectors = Z[0].shape[0] // n if len(Z) == 1 else sum(z.shape[0] // n for z in Z)
            if compressor is None and sent is None:  # the hot path: one test
                open_round(int(vectors), M.links, FLOAT_BITS * Z[0].shape[-1])
            else:
                if compressor is None:
                    raise ValueError("ctx.gossip: sent= receives the compressed messages; give a compressor")
                open_round(int(vectors), M.links, int(compressor.bits(Z[0].shape[-1])))
                Z = tuple(compressed(Z, compressor, sent))
            if gossip_counts:
                counters.gossip_rounds += 1
            if len(Z) == 1 and (out is None or len(out) == 1) and (add is None or len(add) == 1):
                if Z[0].shape[0] != n and Z[0].shape[0] % n == 0:  # stacked: diag(W, ..., W)
                    M = M.stacked(Z[0].shape[0] // n)
                return M.apply(Z[0], None if out is None else out[0], None if add is None else add[0])
            outs = (None,) * len(Z) if out is None else out
            adds = (None,) * len(Z) if add is None else add
            results = [M.apply(z, o, v) for z, o, v in zip(Z, outs, adds, strict=True)]
            return results[0] if len(results) == 1 else tuple(results)

        def gossip_two_tap(self, Z: np.ndarray, out: np.ndarray, a: np.ndarray, previous: np.ndarray,
                           b: np.ndarray, *, vectors: int | None = None) -> np.ndarray:
            M = fixed or gossip_operator()
            open_round(1 if vectors is None else int(vectors), M.links, FLOAT_BITS * Z.shape[-1])
            if gossip_counts:
                counters.gossip_rounds += 1
            return M.two_tap(Z, out, a, previous, b)

        def operator(self, M: MatrixLike, name: str = "M") -> MixingHandle:
            return L.add_operator(M, name)

        def mix(self, M: MixingHandle, *Z: np.ndarray,
                out: Sequence[np.ndarray] | None = None) -> np.ndarray | tuple[np.ndarray, ...]:
            operator = L.operators.get(id(M))
            if operator is None or operator[0] is not M:
                raise BudgetViolationError(f"iteration {L.t}: ctx.mix needs a handle of this run's "
                                           f"ctx.operator; got {M!r}")
            mixing = operator[1]
            open_round(len(Z), mixing.links, FLOAT_BITS * Z[0].shape[-1])
            outs = [None] * len(Z) if out is None else out
            results = tuple(mixing.apply(z, o) for z, o in zip(Z, outs, strict=True))
            return results[0] if len(results) == 1 else results

        def exact_average(self, *Z: np.ndarray) -> Any:
            if kind != "exact":
                raise CapabilityError(f"iteration {L.t}: exact averaging is outside a {kind!r} rule's class "
                                      "(declare communication = 'exact')")
            open_round(len(Z), n * (n - 1), FLOAT_BITS * Z[0].shape[-1])
            counters.exact_averages += 1
            means = tuple(np.add.reduce(z, axis=0, keepdims=True) * (1.0 / n) for z in Z)
            return means[0] if len(means) == 1 else means

        def neighbour_weights(self, i: int) -> tuple[np.ndarray, np.ndarray]:
            if "neighbour_weights" not in knows:
                raise CapabilityError("ctx.neighbour_weights needs knows = ('neighbour_weights',) on the "
                                      "rule")
            return L.row(int(i))

    for method in ("sample", "gossip", "gossip_two_tap", "operator", "mix", "exact_average",
                   "neighbour_weights", "start_state", "zeros"):
        getattr(RunContext, method).__doc__ = getattr(Context, method).__doc__
    return RunContext


class Ledger:
    """The engine's side of one batch: the problem, the oracle, the random streams, W and the A_B
    accounting, per iteration and in total. The rule sees only ``ledger.context`` (`Context`).

    ``algorithms.run_batch`` builds one per batch; `execute` opens each iteration (`begin_iteration`) and
    compares the per-iteration counts with the totals after the run (`close`).

    Parameters
    ----------
    problem : LocalFunctions
        The local functions (n workers, dimension d, start x0).
    oracle : Oracle or None
        The stochastic oracle; None (or an exact oracle) queries ``problem.grad`` once for the whole batch.
    channel : Channel or None
        W checked for the rule's kind (``algorithms.step_rule.communication_channel``); None: exact.
    step_sizes : sequence of float
        One step size per configuration.
    hyper : mapping
        `batch_hyper`'s dict.
    batch : int
        B, the queries per worker and iteration.
    seeds : sequence of int
        One seed per configuration: configuration j samples from ``numpy.random.default_rng(seeds[j])``.
    backend : {"sparse", "dense"}
        The gossip backend (``algorithms.mixing``).
    knows : sequence of str
        The facts the rule declared (``StepRule.knows``).

    References
    ----------
    docs/theory.md §1.5 (the class A_B) and §1.8 (what an iteration costs).

    Examples
    --------
    One D-PSGD iteration by hand, and the budget it may not exceed:

    >>> from decbounds import instances
    >>> from decbounds.algorithms.step_rule import communication_channel
    >>> f = instances.heterogeneous_quadratic(4, 3, 1.0, seed=0)
    >>> W = instances.gossip_matrix(instances.topology("ring", 4), "metropolis")
    >>> ledger = Ledger(problem=f, oracle=None, channel=communication_channel("gossip", W, 4),
    ...                 step_sizes=[0.1, 0.2], hyper={}, batch=1, seeds=[0, 1])
    >>> ctx = ledger.context
    >>> X = ctx.start_state()
    >>> X.shape  # (n, k, d)
    (4, 2, 3)
    >>> ledger.begin_iteration(0)
    >>> X = ctx.gossip(X - ctx.step_size * ctx.sample(X))
    >>> ctx.gossip(X)
    Traceback (most recent call last):
    ...
    decbounds.algorithms.engine.BudgetViolationError: iteration 0: a second communication round ...
    >>> ledger.close()
    >>> ledger.counters.gradient_queries, ledger.counters.messages  # 8 directed links of the ring
    (1, 8)
    >>> ctx.exact_average(X)
    Traceback (most recent call last):
    ...
    decbounds.algorithms.engine.CapabilityError: iteration 0: exact averaging is outside a 'gossip' rule's ...
    """

    __slots__ = (
        "W",
        "_open",
        "backend",
        "batch",
        "channel",
        "compression_rngs",
        "context",
        "counters",
        "d",
        "exact",
        "k",
        "known",
        "knows",
        "memo",
        "n",
        "operators",
        "oracle",
        "problem",
        "queries_log",
        "queries_now",
        "rngs",
        "round_now",
        "rounds_log",
        "seeds",
        "step_size",
        "t",
        "x0",
    )

    def __init__(self, *, problem: LocalFunctions, oracle: Oracle | None, channel: Channel | None,
                 step_sizes: Sequence[float], hyper: Mapping[str, Any], batch: int, seeds: Sequence[int],
                 backend: str = "sparse", knows: Sequence[str] = ()) -> None:
        self.problem = problem
        self.oracle = oracle
        self.channel = channel
        self.n = int(problem.n)
        self.d = int(problem.dim)
        self.k = len(seeds)
        self.x0 = np.asarray(problem.x0, dtype=float).reshape(self.d).copy()
        self.x0.setflags(write=False)
        self.batch = int(batch)
        self.step_size = per_configuration(step_sizes, self.d)
        self.step_size.setflags(write=False)
        self.backend = backend
        # the private execution of the channel's Gossip value: W's operator, or W_t's in iteration t
        gossip = None if channel is None else channel.gossip
        self.W: MixingOperator | ScheduledMixing | None = (None if gossip is None
                                                           else mixing_for(gossip, backend=backend))
        self.exact = oracle is None or bool(getattr(oracle, "exact", False))
        self.rngs = [np.random.default_rng(int(seed)) for seed in seeds]
        self.seeds = tuple(int(seed) for seed in seeds)
        self.compression_rngs: list[np.random.Generator] | None = None  # made at the first compressed round
        self.knows = tuple(knows)
        self.counters = Counters()
        # exact gradients of a problem class with grad_and_full_grad: known answers reused (`exact_gradient`)
        # (the class's method: a wrapper that forwards attributes, such as a counting one, keeps its grad)
        self.memo = self.exact and hasattr(type(problem), "grad_and_full_grad")
        self.known: tuple[bytes, np.ndarray | None, bool] | None = None  # (X's bytes, grad(X), held by none)
        self.t = 0
        self.queries_now = 0
        self.round_now = False
        self.queries_log: list[int] = []
        self.rounds_log: list[bool] = []
        self.operators: dict[int, tuple[MixingHandle, MixingOperator]] = {}
        self._open = False
        context = object.__new__(_context_class(self))
        for name, value in (("n", self.n), ("k", self.k), ("d", self.d), ("batch", self.batch),
                            ("step_size", self.step_size), ("hyper", MappingProxyType(dict(hyper))),
                            ("x0", self.x0), ("communication", "exact" if channel is None else channel.kind),
                            ("knows", frozenset(self.knows))):
            object.__setattr__(context, name, value)
        self.context: Context = context

    def exact_gradient(self, X: np.ndarray) -> np.ndarray:
        """``problem.grad(X)`` for `Context.sample` with exact gradients of a problem class that offers
        ``grad_and_full_grad`` (the zero chain): its grad is a function of the bits of X, so what is known at
        X's very bits is reused -- the local gradients an evaluation computed at the models (`measure`), and
        the answer to a query asked again (DeTAG queries its phase-start model R times). The answer is
        always an array no one else holds (the rule may keep and change it): a copy of a kept answer. States
        above ``_MEMO_ENTRIES`` entries are not compared (their bytes would cost a pass per query).

        Parameters
        ----------
        X : numpy.ndarray, shape (n, k, d)

        Returns
        -------
        numpy.ndarray, shape (n, k, d)
        """
        if X.dtype != np.float64 or X.size > _MEMO_ENTRIES:
            return self.problem.grad(X)
        key = X.tobytes()
        known = self.known
        if known is not None and known[0] == key:
            answer, fresh = known[1], known[2]
            if answer is None:  # asked again: keep a copy for the next asks
                answer = self.problem.grad(X)
                self.known = (key, answer.copy(), False)
                return answer
            if fresh:  # computed ahead (`measure`) and held by no one: handed over
                self.known = (key, None, False)
                return answer
            return answer.copy()
        answer = self.problem.grad(X)
        self.known = (key, None, False)
        return answer

    def begin_iteration(self, t: int) -> None:
        """Open iteration t (from 0): a fresh budget of B queries and one round; the last one's counts go
        to the per-iteration log."""
        if self._open:
            self.queries_log.append(self.queries_now)
            self.rounds_log.append(self.round_now)
        self.t = t
        self.queries_now = 0
        self.round_now = False
        self._open = True

    def close(self) -> None:
        """End the run: log the last iteration, then compare every iteration's counts with the budget and
        their sums with the totals.

        Raises
        ------
        BudgetViolationError
            Naming the first iteration over the budget, or the totals that disagree with the sum of the
            iterations (the accounting was changed from outside the context).
        """
        if self._open:
            self.queries_log.append(self.queries_now)
            self.rounds_log.append(self.round_now)
            self._open = False
        for t, (queries, rounds) in enumerate(zip(self.queries_log, self.rounds_log, strict=True)):
            if queries > self.batch or int(rounds) > 1:
                raise BudgetViolationError(f"iteration {t}: {queries} queries per worker and {int(rounds)} "
                                           f"rounds logged (budget B={self.batch}, one round)")
        queries, rounds = sum(self.queries_log), sum(self.rounds_log)
        totals = (self.counters.gradient_queries, self.counters.communication_rounds)
        if (queries, rounds) != totals:
            raise BudgetViolationError(f"the accounting disagrees with itself: {queries} queries and "
                                       f"{rounds} rounds per worker logged over {len(self.queries_log)} "
                                       f"iterations, totals {totals[0]} and {totals[1]}")

    def add_operator(self, M: MatrixLike, name: str) -> MixingHandle:
        """`Context.operator`: M checked against the channel's closed neighbourhoods.

        Parameters
        ----------
        M : GossipMatrix, numpy.ndarray or scipy.sparse matrix
            The n x n mixing matrix.
        name : str
            Its name in messages.

        Returns
        -------
        MixingHandle

        Raises
        ------
        CapabilityError
            Over a gossip schedule, for an exact-averaging rule, or for an entry off the rule's graph.
        ValueError
            If M is not n x n.
        """
        if self.channel is not None and self.channel.schedule is not None:
            raise CapabilityError("ctx.operator: over a gossip schedule the graph changes every round; "
                                  "communicate with ctx.gossip (W_t in iteration t)")
        if self.channel is None or self.channel.support is None:
            raise CapabilityError("ctx.operator: an exact-averaging rule has no graph to mix on")
        csr = as_csr(M, name)
        check_size(csr, self.n, name)
        outside = sp.csr_array((abs(csr) > 0).astype(float) - self.channel.support) > 0
        if outside.nnz:
            coo = sp.coo_array(outside)
            i, j = int(coo.row[0]), int(coo.col[0])
            raise CapabilityError(f"ctx.operator: {name} has the entry ({i}, {j}), but worker {j} is not a "
                                  f"neighbour of worker {i} (one round moves information one hop)")
        handle = MixingHandle(name)
        self.operators[id(handle)] = (handle, MixingOperator(csr, backend=self.backend, name=name))
        return handle

    def row(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """`Context.neighbour_weights`: row i of W (gossip or push; W_t of a schedule), copies.

        Parameters
        ----------
        i : int
            The worker, in [0, n).

        Returns
        -------
        tuple of numpy.ndarray
            The columns j with W_ij != 0 and the weights W_ij.
        """
        gossip = None if self.channel is None else self.channel.gossip
        if gossip is None:
            raise CapabilityError("ctx.neighbour_weights: the rule has no gossip matrix")
        if not 0 <= i < self.n:
            raise ValueError(f"worker i must lie in [0, {self.n}); got {i}")
        M = gossip.round_matrix(self.t)  # W_t of this iteration (W itself when static)
        start, stop = M.indptr[i], M.indptr[i + 1]
        return M.indices[start:stop].copy(), M.data[start:stop].copy()


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


class Snapshot:
    """What one evaluation measured, per configuration: x_hat (k, d), ||grad f(x_hat)|| (k,), and, when the
    workers were evaluated, ||grad f(x_i)|| (n, k) and their max over i (k,, computed when first read);
    ``norms`` holds every norm measured, x_hat's first ((n + 1, k), or (k,) without the workers)."""

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
        """Whether every norm measured is finite and above tol: then no configuration reached a T_eps and
        none has a non-finite gradient norm, proven without the bookkeeping of `stopping_test` (NaN fails
        both tests)."""
        norms = self.norms.reshape(-1)
        # argmin / argmax index a NaN when there is one, and cost a fraction of a reduction
        return bool(norms[norms.argmin()] > tol and norms[norms.argmax()] < np.inf)


@dataclass
class Book:
    """Per-configuration outcomes, the shared history, and the anchor of the smoothness certificate."""

    k: int
    d: int
    n: int = 1
    t_eps: np.ndarray = field(init=False)  # -1: not reached
    t_eps_local: np.ndarray = field(init=False)
    running: np.ndarray = field(init=False)
    final: list[dict[str, Any] | None] = field(init=False)
    local_pending: bool = True  # some running configuration has no t_eps_local yet
    history: list[tuple[Any, ...]] = field(default_factory=list)
    progress: list[np.ndarray] = field(default_factory=list)
    smoothness: float | None = None  # L of `anchor_at`; None: no certificate (evaluate at every check)
    certificate: Certificate | None = None  # of the last evaluation (`anchor_at`); None: none yet
    # (n + 1, k): 0 where x_hat's (row 0) or the workers' (rows 1..n) stopping test is pending, else +inf
    masks: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        self.t_eps = np.full(self.k, -1, dtype=np.int64)
        self.t_eps_local = np.full(self.k, -1, dtype=np.int64)
        self.running = np.ones(self.k, dtype=bool)
        self.final = [None] * self.k
        self.masks = np.zeros((self.n + 1, self.k))

    def update(self) -> None:
        """Refresh what follows from t_eps, t_eps_local and running (after any of them changed)."""
        local = self.running & (self.t_eps_local < 0)
        self.local_pending = bool(local.any())
        self.masks[0] = np.where(self.running & (self.t_eps < 0), 0.0, np.inf)
        self.masks[1:] = np.where(local, 0.0, np.inf)


def _row_norms(A: np.ndarray) -> np.ndarray:
    """Euclidean norms over the last axis, each row summed on its own (the same bits in any batch)."""
    return np.sqrt(np.add.reduce(A * A, axis=-1))


def _largest_abs(A: np.ndarray) -> float:
    """max |entry| of A (NaN when A holds a NaN): argmax costs a fraction of a reduction."""
    magnitude = np.abs(A).reshape(-1)
    return float(magnitude[magnitude.argmax()])


def _max_abs(A: np.ndarray) -> np.ndarray:
    """max |entry| per configuration of an (n, k, d) array (NaN when a configuration holds a NaN)."""
    return np.abs(A).max(axis=(0, 2))


def measure(x_hat: np.ndarray, models: np.ndarray, f: LocalFunctions, workers: bool,
            ledger: Ledger | None = None, local: np.ndarray | None = None) -> Snapshot:
    """||grad f(x_hat)||, and with ``workers`` every worker's ||grad f(x_i)||, in one ``full_grad`` call on
    the (n + 1, k, d) stack of x_hat and the models. With a ``ledger`` that reuses exact gradients
    (`Ledger.exact_gradient`), that call also computes the local gradients at ``local`` (default: the
    models), kept with their bytes for the next ``ctx.sample``: a rule queries the models it was left with,
    so the query costs a comparison of bytes (the same bits, computed earlier)."""
    if not workers:
        return Snapshot(x_hat, _row_norms(f.full_grad(x_hat)))
    stack = np.empty((models.shape[0] + 1, *models.shape[1:]))
    stack[0] = x_hat
    stack[1:] = models
    if ledger is not None and ledger.memo:
        local = models if local is None else local
        answer, G = f.grad_and_full_grad(local, stack)  # type: ignore[attr-defined]
        if answer is not None:
            ledger.known = (local.tobytes(), answer, True)
    else:
        G = f.full_grad(stack)
    norms = _row_norms(G)
    return Snapshot(x_hat, norms[0], norms[1:], norms)


#: How far ahead `anchor_ahead` evaluates, as a fraction of the models' move since the last anchor (the
#: best of those tried on the path zero chain, 0.3 to 0.7: about a third fewer evaluations for D-PSGD and
#: two fifths fewer for DSGT at step 0.5).
AHEAD = 0.5


def anchor_ahead(book: Book, models: np.ndarray, f: LocalFunctions, ledger: Ledger, tol: float,
                 bound: float) -> bool:
    """Where the certificate just failed on a steady drift (`Certificate.drifting`), anchor it ahead of the
    models instead of at them: evaluate at A' = x + AHEAD (x - a) (x the models, a the failed anchor) and at
    its mean, make that the anchor (`anchor_at`, sound for any anchor) and test the models against it. A
    ball around a point ahead covers the models now and for more of the iterations to come than one
    around them, so evaluations are fewer; the evaluation also computes the local gradients at the models
    (`measure`), which the next query reuses. Returns whether the models are certified; when they are not
    (or a norm ahead is not above tol), the caller evaluates at the models as usual.
    """
    cert = book.certificate
    assert cert is not None
    ahead = cert.ahead
    np.subtract(models, cert.anchor, out=ahead)
    ahead *= AHEAD
    ahead += models
    x_hat = np.add.reduce(ahead, axis=0) * (1.0 / ahead.shape[0])  # a mean (`anchor_at`'s margins)
    snap = measure(x_hat, ahead, f, workers=book.local_pending, ledger=ledger, local=models)
    if not snap.quiet(tol):
        return False
    anchor_at(book, snap, ahead, tol, _largest_abs(ahead), bound)
    held = cert.holds(models)
    cert.held = 0  # the test now is not a step of the drift
    return held


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


def history_row(t: int, snap: Snapshot, models: np.ndarray, f: LocalFunctions) -> tuple[Any, ...]:
    """The checkpoint t for every configuration: (t, ||grad f(x_hat)||, max_i ||grad f(x_i)||, consensus
    distance sqrt(mean_i ||x_i - x_hat||^2), x_hat)."""
    if snap.worst_worker is None:
        snap = measure(snap.x_hat, models, f, workers=True)
    spread = models - snap.x_hat[None]
    consensus = np.sqrt(np.add.reduce(np.add.reduce(spread * spread, axis=0), axis=-1) / spread.shape[0])
    return (t, snap.grad_norm.copy(), snap.worst_worker.copy(), consensus, snap.x_hat.copy())


def stopping_test(book: Book, t: int, snap: Snapshot, tol: float) -> np.ndarray | None:
    """Record the T_eps reached at t: x_hat's, and every worker's when measured (NaN never reaches tol).
    Returns the configurations that reached one of them at t, or None when none did."""
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
    """Configuration j's status and message when it stops at t."""
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
    while nothing stopped."""
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
    largest = _largest_abs(models) if evaluating else None
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
    array counts for every configuration."""
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
            step_sizes: Sequence[float], hypers: Sequence[dict[str, Any]]) -> list[Result]:
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


def _result(book: Book, j: int, *, algorithm: str, seed: int, step_size: float, hyper: dict[str, Any],
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
