"""The engine's side of one batch (`Runtime`, with the A_B accounting `Counters`); the rule sees its
``context`` (``algorithms.context.Context``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np
import scipy.sparse as sp
from decbounds.algorithms.compression import Compressor, make_compressor
from decbounds.algorithms.context import (
    COMPRESSION_STREAM,
    BudgetViolationError,
    CapabilityError,
    Context,
    MixingHandle,
)
from decbounds.algorithms.hyper import per_configuration
from decbounds.algorithms.mixing import MixingOperator, _mixing_for, _ScheduledMixing
from decbounds.algorithms.step_rule import Channel, check_n_by_n
from decbounds.instances.gossip import as_csr
from decbounds.instances.matrices import MatrixLike
from decbounds.instances.protocol import LocalFunctions
from decbounds.oracles.base import Oracle

__all__ = ["Counters", "Runtime"]

# `Runtime.exact_gradient` compares the bytes of states of at most this many entries (128 KiB).
_MEMO_ENTRIES = 1 << 14


@dataclass
class Counters:
    """The A_B accounting per worker; ``bits`` per configuration (``compressor.bits(d)`` per compressed
    vector, 64 d otherwise), ``messages`` the links used."""

    gradient_queries: int = 0
    communication_rounds: int = 0
    gossip_rounds: int = 0
    exact_averages: int = 0
    vectors_sent: int = 0
    messages: int = 0
    bits: int = 0

    def as_dict(self, iterations: int) -> dict[str, int]:
        """The counters with the iteration count, as a `Result` stores them.

        Parameters
        ----------
        iterations : int
        """
        return {"iterations": int(iterations), **asdict(self)}


class Runtime:
    """The engine's side of one batch: problem, oracle, random streams (``default_rng(seeds[j])``), W and the
    A_B budget of the current iteration; the rule sees ``runtime.context``.

    Parameters
    ----------
    problem : LocalFunctions
    oracle : Oracle or None
        None (or an exact oracle): ``problem.grad``, once for the whole batch.
    channel : Channel or None
        W checked for the rule's kind; None: exact averaging.
    step_sizes, seeds : sequence
        Per configuration.
    hyper : mapping
    batch : int
        B, the queries per worker and iteration.
    backend : {"sparse", "dense"}
    knows : sequence of str
        ``StepRule.knows``.
    """

    def __init__(self, *, problem: LocalFunctions, oracle: Oracle | None, channel: Channel | None,
                 step_sizes: Sequence[float], hyper: Mapping[str, object], batch: int, seeds: Sequence[int],
                 backend: str = "sparse", knows: Sequence[str] = ()) -> None:
        self.problem, self.oracle, self.channel, self.backend = problem, oracle, channel, backend
        self.n, self.d, self.k = int(problem.n), int(problem.dim), len(seeds)
        self.shape = (self.n, self.k, self.d)
        self.x0 = np.asarray(problem.x0, dtype=float).reshape(self.d).copy()
        self.x0.setflags(write=False)
        self.batch = int(batch)
        self.step_size = per_configuration(step_sizes, self.d)
        self.step_size.setflags(write=False)
        gossip = None if channel is None else channel.gossip
        W = None if gossip is None else _mixing_for(gossip, backend=backend)
        self.fixed = W if isinstance(W, MixingOperator) else None  # a fixed W: no look-up per round
        self.scheduled = W if isinstance(W, _ScheduledMixing) else None
        self.gossip_counts = channel is not None and channel.kind == "gossip"
        self.exact = oracle is None or bool(getattr(oracle, "exact", False))
        # exact gradients of a problem class with grad_and_full_grad (the zero chain): known answers reused;
        # the class's method, so that a wrapper forwarding attributes (verify's counting one) keeps its grad
        self.memo = self.exact and hasattr(type(problem), "grad_and_full_grad")
        self.known: tuple[bytes, np.ndarray | None, bool] | None = None  # (X's bytes, grad(X), held by none)
        self.rngs = [np.random.default_rng(int(seed)) for seed in seeds]
        self.seeds = tuple(int(seed) for seed in seeds)
        self.compression_rngs: list[np.random.Generator] | None = None  # made at the first compressed round
        self.compressors: dict[int, tuple[object, Compressor]] = {}
        self.knows = tuple(knows)
        self.counters = Counters()
        self.t, self.queries_now, self.round_now, self.open = 0, 0, False, False
        self.operators: dict[int, tuple[MixingHandle, MixingOperator]] = {}
        # the observation of the current step (``algorithms.observation.Observation``), None when not observed
        self.seen: list[tuple[np.ndarray, int]] | None = None
        self.rounds_seen: list[str] = []
        self.context = Context(self, hyper)

    def begin_iteration(self, t: int) -> None:
        """Open iteration t (from 0): a fresh budget of B queries and one round.

        Parameters
        ----------
        t : int
        """
        self.t, self.queries_now, self.round_now, self.open = t, 0, False, True

    def _refuse(self, what: str, queries: int = 0) -> None:
        """Raise the error of a call over the budget ("queries" or "round") or in ``init``."""
        if not self.open:
            raise CapabilityError("the start state (init) may not query or communicate")
        if what == "round":
            raise BudgetViolationError(f"iteration {self.t}: a second communication round in one iteration")
        raise BudgetViolationError(f"iteration {self.t}: {self.queries_now} + {queries} queries per worker "
                                   f"exceed the batch B={self.batch}")

    def _gradients(self, X: np.ndarray, b: int) -> np.ndarray:
        """``ctx.sample(X)``: exact gradients, or the oracle per configuration with its own stream."""
        if self.exact:
            return self.problem.grad(X)
        oracle = self.oracle
        assert oracle is not None
        many = getattr(oracle, "sample_configurations", None)
        if many is not None:
            answer: np.ndarray = many(X, self.rngs, b)
            return answer
        out = np.empty_like(X)
        for j, rng in enumerate(self.rngs):
            out[:, j : j + 1] = oracle.sample(X[:, j : j + 1], rng, b)
        return out

    def _exact_gradient(self, X: np.ndarray) -> np.ndarray:
        """``problem.grad(X)``, reusing an answer known at X's bits (docs/architecture.md, "Reused exact
        gradients"); an array no one else holds."""
        if X.dtype != np.float64 or X.size > _MEMO_ENTRIES:
            return self.problem.grad(X)
        key, known = X.tobytes(), self.known
        if known is not None and known[0] == key:
            answer = known[1]
            if answer is None:  # asked again: keep a copy for the next asks
                answer = self.problem.grad(X)
                self.known = (key, answer.copy(), False)
                return answer
            if known[2]:  # computed ahead and held by no one: handed over
                self.known = (key, None, False)
                return answer
            return answer.copy()
        self.known = (key, None, False)
        return self.problem.grad(X)

    def _open_round(self, kind: str, arrays: int, links: int, bits_each: int) -> None:
        """Count a round of ``kind`` ("gossip", "mix", "exact"); refused after the iteration's one."""
        if self.round_now or not self.open:
            self._refuse("round")
        self.round_now = True
        counters = self.counters
        counters.communication_rounds += 1
        counters.vectors_sent += arrays
        counters.messages += arrays * links
        counters.bits += arrays * bits_each
        if kind == "gossip" and self.gossip_counts:
            counters.gossip_rounds += 1
        elif kind == "exact":
            counters.exact_averages += 1
        if self.seen is not None:
            self.rounds_seen.append(kind)

    def _operator_now(self) -> MixingOperator:
        """The gossip operator of the current iteration (W_t of a schedule)."""
        if self.scheduled is None:
            raise CapabilityError("this algorithm was prepared without a gossip matrix")
        return self.scheduled.at(self.t)

    def _compressor_of(self, compressor: object) -> Compressor:
        """``ctx.gossip``'s compressor from a compressor or a spec string, made once per object given."""
        known = self.compressors.get(id(compressor))
        if known is None or known[0] is not compressor:
            made = make_compressor(compressor)  # type: ignore[arg-type]
            known = self.compressors[id(compressor)] = (compressor, made)
        return known[1]

    def _check_messages(self, Z: Sequence[np.ndarray], sent: Sequence[np.ndarray] | None) -> None:
        """Refuse compressed arrays not (n, k, d) or (m n, k, d), and ``sent`` not one array per array."""
        for z in Z:
            if z.ndim != 3 or z.shape[1] != self.k or z.shape[0] % self.n:
                raise CapabilityError(f"iteration {self.t}: compressed gossip takes (n, k, d) or (m n, k, d) "
                                      f"arrays, axis 1 the k={self.k} configurations; got {z.shape}")
        if sent is None:
            return
        if len(sent) != len(Z):
            raise ValueError(f"ctx.gossip: sent must hold one array per array sent ({len(Z)}); got "
                             f"{len(sent)}")
        for z, s in zip(Z, sent, strict=True):
            if not isinstance(s, np.ndarray) or s.shape != z.shape:
                raise ValueError(f"ctx.gossip: each sent array must have its array's shape {z.shape}; got "
                                 f"{getattr(s, 'shape', type(s).__name__)}")

    def _compress(self, Z: Sequence[np.ndarray], compressor: Compressor,
                 sent: Sequence[np.ndarray] | None) -> list[np.ndarray]:
        """C(z) for each array, configuration j drawing from its own stream, copied into ``sent``."""
        if self.compression_rngs is None:
            self.compression_rngs = [np.random.default_rng(np.random.SeedSequence(
                seed, spawn_key=(COMPRESSION_STREAM,))) for seed in self.seeds]
        messages = [compressor.compress(z, self.compression_rngs) for z in Z]
        for i, q in enumerate(messages if sent is not None else ()):
            sent[i][...] = q  # type: ignore[index]
        return messages

    def _add_operator(self, M: MatrixLike, name: str) -> MixingHandle:
        """`Context.operator`: M checked against the channel's closed neighbourhoods."""
        if self.channel is not None and self.channel.schedule is not None:
            raise CapabilityError("ctx.operator: over a gossip schedule the graph changes every round; "
                                  "communicate with ctx.gossip (W_t in iteration t)")
        if self.channel is None or self.channel.support is None:
            raise CapabilityError("ctx.operator: an exact-averaging rule has no graph to mix on")
        csr = as_csr(M, name)
        check_n_by_n(csr, self.n, name)
        outside = sp.csr_array((abs(csr) > 0).astype(float) - self.channel.support) > 0
        if outside.nnz:
            coo = sp.coo_array(outside)
            i, j = int(coo.row[0]), int(coo.col[0])
            raise CapabilityError(f"ctx.operator: {name} has the entry ({i}, {j}), but worker {j} is not a "
                                  f"neighbour of worker {i} (one round moves information one hop)")
        handle = MixingHandle(name)
        self.operators[id(handle)] = (handle, MixingOperator(csr, backend=self.backend, name=name))
        return handle

    def _row(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """`Context.neighbour_weights`: row i of W (W_t of a schedule), copies."""
        gossip = None if self.channel is None else self.channel.gossip
        if gossip is None:
            raise CapabilityError("ctx.neighbour_weights: the rule has no gossip matrix")
        if not 0 <= i < self.n:
            raise ValueError(f"worker i must lie in [0, {self.n}); got {i}")
        M = gossip.round_matrix(self.t)
        start, stop = M.indptr[i], M.indptr[i + 1]
        return M.indices[start:stop].copy(), M.data[start:stop].copy()
