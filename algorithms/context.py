"""What a rule sees: the `Context` of one batch, a capability (docs/theory.md §1.5, the class A_B).

`Context` is the type rules annotate with and the place its calls are documented: the data of the batch
(n, k, d, B, the step sizes, the hyper-parameters, x0, t) and the calls that query and communicate, nothing
else. The engine's side -- the problem, the oracle, the random streams, W, the counters -- is an
``algorithms.ledger.Ledger``; `new_context` gives a batch its context as an instance of a class of its own
whose methods close over that ledger, so that no attribute of the context leads to the engine's state
(what Python introspection can still reach: docs/verify.md). The class is assembled from one step per
concern: the data (`_data_methods`), the gradient queries (`_sampling`), the round accounting
(`_round_opener`), compressed rounds (`_compression`), the gossip operator of the round
(`_gossip_operator`), the gossip rounds (`_gossip_methods`), the other mixing matrices
(`_mixing_methods`) and exact averaging (`_exact_averaging`).

The per-iteration floor (tests/algorithms/test_engine_cost.py) runs through these closures: each keeps what
it reads per call in its own cells (one lookup), and the hot path of a gossip round is one test and one
call of the round accounting.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, cast, overload

import numpy as np
from decbounds.algorithms.compression import FLOAT_BITS, Compressor
from decbounds.algorithms.mixing import Coefficient, MixingOperator
from decbounds.instances.matrices import MatrixLike
from decbounds.oracles.base import Oracle

if TYPE_CHECKING:
    from decbounds.algorithms.ledger import Ledger

__all__ = [
    "COMPRESSION_STREAM",
    "BudgetViolationError",
    "CapabilityError",
    "Context",
    "MixingHandle",
    "batch_hyper",
    "new_context",
    "per_configuration",
]

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


def batch_hyper(structural: Mapping[str, object], configurations: Sequence[Mapping[str, object]],
                d: int) -> dict[str, object]:
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
    hyper: dict[str, object] = {}
    for name in configurations[0] if configurations else ():
        values = [values[name] for values in configurations]
        numeric = all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)
                      for v in values)
        hyper[name] = per_configuration(cast("list[float]", values), d) if numeric else values
    hyper.update(structural)
    return hyper


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
    hyper: Mapping[str, object]
    k: int
    knows: frozenset[str]
    n: int
    step_size: np.ndarray
    x0: np.ndarray

    def __init__(self) -> None:
        raise TypeError("a Context is built by the engine: algorithms.ledger.Ledger(...).context")

    def __setattr__(self, name: str, value: object) -> None:
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

    @overload
    def gossip(self, Z: np.ndarray, /, *, out: Sequence[np.ndarray] | None = None, vectors: int | None = None,
               add: Sequence[np.ndarray | None] | None = None, compressor: Compressor | None = None,
               sent: Sequence[np.ndarray] | None = None) -> np.ndarray: ...

    @overload
    def gossip(self, Z: np.ndarray, other: np.ndarray, /, *more: np.ndarray,
               out: Sequence[np.ndarray] | None = None, vectors: int | None = None,
               add: Sequence[np.ndarray | None] | None = None, compressor: Compressor | None = None,
               sent: Sequence[np.ndarray] | None = None) -> tuple[np.ndarray, ...]: ...

    def gossip(self, *Z: np.ndarray, out: Sequence[np.ndarray] | None = None, vectors: int | None = None,
               add: Sequence[np.ndarray | None] | None = None, compressor: Compressor | None = None,
               sent: Sequence[np.ndarray] | None = None) -> np.ndarray | tuple[np.ndarray, ...]:
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
            One array for one array sent, else a tuple of them.

        Raises
        ------
        BudgetViolationError
            If the iteration already had its communication round, or there is no gossip matrix
            (`CapabilityError`: a compressed array whose axis -2 is not the k configurations).
        """
        raise NotImplementedError

    def gossip_two_tap(self, Z: np.ndarray, out: np.ndarray, a: Coefficient, previous: np.ndarray,
                       b: Coefficient, *, vectors: int | None = None) -> np.ndarray:
        """One gossip round of the two-tap recursion, out <- a * (W @ Z) + b * previous
        (``MixingOperator.two_tap``); counted as ``gossip(Z, vectors=vectors)``.

        Parameters
        ----------
        Z : numpy.ndarray, shape (n, ...)
            The array sent (counted as ``vectors`` vectors per worker).
        out : numpy.ndarray, shape (n, ...)
            Where the recursion's new term goes; it is returned.
        a, b : float or numpy.ndarray
            The taps: a number, or an array broadcast against Z (per configuration: (1, k, d)).
        previous : numpy.ndarray, shape (n, ...)
            The recursion's previous term.
        vectors : int, optional
            The vectors each worker sends (default 1).

        Raises
        ------
        BudgetViolationError
            If the iteration already had its communication round, or there is no gossip matrix.
        """
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

    @overload
    def exact_average(self, Z: np.ndarray, /) -> np.ndarray: ...

    @overload
    def exact_average(self, Z: np.ndarray, other: np.ndarray, /,
                      *more: np.ndarray) -> tuple[np.ndarray, ...]: ...

    def exact_average(self, *Z: np.ndarray) -> np.ndarray | tuple[np.ndarray, ...]:
        """One exact-averaging round (AllReduce / parameter server): the worker mean, shape (1, ...);
        rules that declare ``communication = "exact"`` only.

        Counted as n (n - 1) messages per array.

        Parameters
        ----------
        *Z : numpy.ndarray, shape (n, ...)
            The arrays averaged.

        Returns
        -------
        numpy.ndarray or tuple of numpy.ndarray
            The mean of each, shape (1, ...): one array for one array sent, else a tuple of them.

        Raises
        ------
        BudgetViolationError
            If the iteration already had its communication round (`CapabilityError` for a rule of another
            kind).
        """
        raise NotImplementedError

    def neighbour_weights(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """Row i of W (W_t of a schedule) as worker i knows it; rules that declare
        ``knows = ("neighbour_weights",)`` only.

        Parameters
        ----------
        i : int
            The worker, in [0, n).

        Returns
        -------
        columns : numpy.ndarray of int
            The j with W_ij != 0 (a copy).
        weights : numpy.ndarray
            The W_ij (a copy).

        Raises
        ------
        CapabilityError
            If the rule did not declare the fact, or has no gossip matrix.
        ValueError
            If i is not a worker.
        """
        raise NotImplementedError


#: The methods of a batch's context class, by name (`_context_class`).
_Methods = dict[str, Callable[..., Any]]


def new_context(ledger: Ledger, hyper: Mapping[str, object]) -> Context:
    """The rule's context of one batch: an instance of the batch's own `Context` class, whose methods close
    over ``ledger``, with the batch's data set once (read-only).

    Parameters
    ----------
    ledger : algorithms.ledger.Ledger
        The batch's engine side.
    hyper : mapping
        `batch_hyper`'s dict, read by the rule as ``ctx.hyper`` (a read-only view of a copy).

    Returns
    -------
    Context
    """
    context = object.__new__(_context_class(ledger))
    channel = ledger.channel
    for name, value in (("n", ledger.n), ("k", ledger.k), ("d", ledger.d), ("batch", ledger.batch),
                        ("step_size", ledger.step_size), ("hyper", MappingProxyType(dict(hyper))),
                        ("x0", ledger.x0), ("communication", "exact" if channel is None else channel.kind),
                        ("knows", frozenset(ledger.knows))):
        object.__setattr__(context, name, value)
    return context


def _context_class(ledger: Ledger) -> type[Context]:
    """A `Context` subclass of one batch, its methods the closures of the steps below, each documented as
    `Context` documents it."""
    open_round = _round_opener(ledger)
    methods: _Methods = {
        **_data_methods(ledger),
        **_sampling(ledger),
        **_gossip_methods(ledger, open_round, _compression(ledger)),
        **_mixing_methods(ledger, open_round),
        **_exact_averaging(ledger, open_round),
    }
    for name, method in methods.items():
        method.__doc__ = getattr(Context, name).__doc__
    return type("RunContext", (Context,), {"__slots__": (), "__module__": __name__,
                                           "t": _iteration_property(ledger), **methods})


def _iteration_property(ledger: Ledger) -> property:
    """`Context.t`: the ledger's current iteration."""
    L = ledger

    def t(self: Context) -> int:
        return L.t

    return property(t, doc=Context.t.__doc__)


def _data_methods(ledger: Ledger) -> _Methods:
    """`Context.start_state`, `Context.zeros` and `Context.neighbour_weights`: fresh arrays of the batch's
    shape, and row i of W for the rules that declared they know it."""
    L = ledger
    shape = (ledger.n, ledger.k, ledger.d)
    x0 = ledger.x0
    knows = frozenset(ledger.knows)

    def start_state(self: Context) -> np.ndarray:
        start: np.ndarray = np.broadcast_to(x0, shape).copy()
        return start

    def zeros(self: Context) -> np.ndarray:
        return np.zeros(shape)

    def neighbour_weights(self: Context, i: int) -> tuple[np.ndarray, np.ndarray]:
        if "neighbour_weights" not in knows:
            raise CapabilityError("ctx.neighbour_weights needs knows = ('neighbour_weights',) on the "
                                  "rule")
        return L.row(int(i))

    return {"start_state": start_state, "zeros": zeros, "neighbour_weights": neighbour_weights}


def _sampling(ledger: Ledger) -> _Methods:
    """`Context.sample`: at most B queries per worker in one iteration, counted; exact gradients once for
    the whole batch (reused at the same bits where the problem allows, `Ledger.exact_gradient`), a
    stochastic oracle once per configuration with its own stream (or once for the batch where the oracle
    samples every configuration in one call)."""
    L = ledger
    counters = ledger.counters
    batch = ledger.batch
    shape = (ledger.n, ledger.k, ledger.d)
    exact = ledger.exact
    problem, rngs = ledger.problem, ledger.rngs
    oracle = cast(Oracle, ledger.oracle)  # None only with exact gradients, which never reach it

    def sample(self: Context, X: np.ndarray, queries: int | None = None) -> np.ndarray:
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
        many: Callable[..., np.ndarray] | None = getattr(oracle, "sample_configurations", None)
        if many is not None:  # one gradient evaluation for the whole batch where the oracle can
            return many(X, rngs, b)
        out = np.empty_like(X)
        for j, rng in enumerate(rngs):
            out[:, j : j + 1] = oracle.sample(X[:, j : j + 1], rng, b)
        return out

    return {"sample": sample}


def _round_opener(ledger: Ledger) -> Callable[[int, int, int], None]:
    """The round accounting every communication goes through: ``open_round(arrays, links, bits_each)``
    refuses a second round in one iteration (and any round in ``init``), then counts the round, the
    vectors sent, the messages over the links and the bits."""
    L = ledger
    counters = ledger.counters

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

    return open_round


def _compression(ledger: Ledger) -> Callable[[Sequence[np.ndarray], Compressor, Sequence[np.ndarray] | None],
                                             list[np.ndarray]]:
    """The messages of a compressed round: ``compressed(Z, compressor, sent)`` is C(z) for each array,
    configuration j drawing from its own compression stream (`COMPRESSION_STREAM`, made at the first
    compressed round, apart from the oracle's streams), each copied into ``sent``."""
    L = ledger
    n, k = ledger.n, ledger.k

    def compressed(Z: Sequence[np.ndarray], compressor: Compressor,
                   sent: Sequence[np.ndarray] | None) -> list[np.ndarray]:
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

    return compressed


def _gossip_operator(ledger: Ledger) -> tuple[MixingOperator | None, Callable[[], MixingOperator]]:
    """The gossip operator of a round, bound once per batch: (W when it is fixed, so that a round looks
    nothing up, else None; the function that gives the operator of the current iteration, W_t of a gossip
    schedule in iteration t)."""
    L = ledger
    W = ledger.W

    def gossip_operator() -> MixingOperator:
        if W is None:
            raise BudgetViolationError("this algorithm was prepared without a gossip matrix")
        return W.at(L.t)

    return (W if type(W) is MixingOperator else None), gossip_operator


def _gossip_methods(ledger: Ledger, open_round: Callable[[int, int, int], None],
                    compressed: Callable[[Sequence[np.ndarray], Compressor, Sequence[np.ndarray] | None],
                                         list[np.ndarray]]) -> _Methods:
    """`Context.gossip` and `Context.gossip_two_tap`: one counted round with W (W_t of a schedule), plain or
    compressed (`_compression`), of one array, several, or several stacked in one product."""
    counters = ledger.counters
    n = ledger.n
    gossip_counts = ledger.channel is not None and ledger.channel.kind == "gossip"
    fixed, gossip_operator = _gossip_operator(ledger)

    def gossip(self: Context, *Z: np.ndarray, out: Sequence[np.ndarray] | None = None,
               vectors: int | None = None, add: Sequence[np.ndarray | None] | None = None,
               compressor: Compressor | None = None,
               sent: Sequence[np.ndarray] | None = None) -> np.ndarray | tuple[np.ndarray, ...]:
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

    def gossip_two_tap(self: Context, Z: np.ndarray, out: np.ndarray, a: Coefficient, previous: np.ndarray,
                       b: Coefficient, *, vectors: int | None = None) -> np.ndarray:
        M = fixed or gossip_operator()
        open_round(1 if vectors is None else int(vectors), M.links, FLOAT_BITS * Z.shape[-1])
        if gossip_counts:
            counters.gossip_rounds += 1
        return M.two_tap(Z, out, a, previous, b)

    return {"gossip": gossip, "gossip_two_tap": gossip_two_tap}


def _mixing_methods(ledger: Ledger, open_round: Callable[[int, int, int], None]) -> _Methods:
    """`Context.operator` and `Context.mix`: a round with another mixing matrix of the rule's graph, through
    an opaque handle (moved verbatim from the engine's per-run class)."""
    L = ledger

    def operator(self: Context, M: MatrixLike, name: str = "M") -> MixingHandle:
        return L.add_operator(M, name)

    def mix(self: Context, M: MixingHandle, *Z: np.ndarray,
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

    return {"operator": operator, "mix": mix}


def _exact_averaging(ledger: Ledger, open_round: Callable[[int, int, int], None]) -> _Methods:
    """`Context.exact_average`: one AllReduce round, for the rules that communicate by exact averaging."""
    L = ledger
    counters = ledger.counters
    n = ledger.n
    kind = ledger.channel.kind if ledger.channel is not None else "exact"

    def exact_average(self: Context, *Z: np.ndarray) -> np.ndarray | tuple[np.ndarray, ...]:
        if kind != "exact":
            raise CapabilityError(f"iteration {L.t}: exact averaging is outside a {kind!r} rule's class "
                                  "(declare communication = 'exact')")
        open_round(len(Z), n * (n - 1), FLOAT_BITS * Z[0].shape[-1])
        counters.exact_averages += 1
        means = tuple(np.add.reduce(z, axis=0, keepdims=True) * (1.0 / n) for z in Z)
        return means[0] if len(means) == 1 else means

    return {"exact_average": exact_average}
