"""The engine's side of one batch: the `Ledger` holds the problem, the oracle, the random streams, W and the
A_B accounting (`Counters`), per iteration and in total (docs/theory.md §1.5).

The rule never sees it: its ``context`` (``algorithms.context.new_context``) closes over it. The engine's
loop (``algorithms.engine.execute``) opens each iteration (`Ledger.begin_iteration`) and compares the
per-iteration counts with the totals after the run (`Ledger.close`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from decbounds.algorithms.context import (
    BudgetViolationError,
    CapabilityError,
    Context,
    MixingHandle,
    new_context,
    per_configuration,
)
from decbounds.algorithms.mixing import MixingOperator, ScheduledMixing, mixing_for
from decbounds.algorithms.step_rule import Channel, check_size
from decbounds.instances.gossip import as_csr
from decbounds.instances.matrices import MatrixLike
from decbounds.instances.protocol import LocalFunctions
from decbounds.oracles.base import Oracle

__all__ = ["Counters", "Ledger"]

# `Ledger.exact_gradient` compares the bytes of states of at most this many entries (128 KiB): a copy of X
# per query, against a gradient of at least a few dozen passes over it.
_MEMO_ENTRIES = 1 << 14


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
        """The counters with the iteration count, as a `Result` stores them.

        Parameters
        ----------
        iterations : int
            The iterations run.

        Returns
        -------
        dict of str to int
        """
        return {"iterations": int(iterations), "gradient_queries": self.gradient_queries,
                "communication_rounds": self.communication_rounds, "gossip_rounds": self.gossip_rounds,
                "exact_averages": self.exact_averages, "vectors_sent": self.vectors_sent,
                "messages": self.messages, "bits": self.bits}


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
    decbounds.algorithms.context.BudgetViolationError: iteration 0: a second communication round ...
    >>> ledger.close()
    >>> ledger.counters.gradient_queries, ledger.counters.messages  # 8 directed links of the ring
    (1, 8)
    >>> ctx.exact_average(X)
    Traceback (most recent call last):
    ...
    decbounds.algorithms.context.CapabilityError: iteration 0: exact averaging is outside a 'gossip' ...
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
                 step_sizes: Sequence[float], hyper: Mapping[str, object], batch: int, seeds: Sequence[int],
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
        self.context: Context = new_context(self, hyper)

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
        to the per-iteration log.

        Parameters
        ----------
        t : int
            The iteration opened.
        """
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
