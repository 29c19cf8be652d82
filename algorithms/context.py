"""What a rule sees: the `Context` of one batch, its data and its calls, counted against the budget of one
iteration of the class A_B (docs/theory.md §1.5) by the batch's ``algorithms.runtime.Runtime``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, overload

import numpy as np
from decbounds.algorithms.compression import FLOAT_BITS, Compressor
from decbounds.algorithms.mixing import Coefficient
from decbounds.instances.matrices import MatrixLike

if TYPE_CHECKING:
    from decbounds.algorithms.runtime import Runtime

__all__ = ["COMPRESSION_STREAM", "BudgetViolationError", "CapabilityError", "Context", "MixingHandle"]

#: The spawn key of the compression streams: configuration j compresses with
#: default_rng(SeedSequence(seed_j, spawn_key=(COMPRESSION_STREAM,))), apart from its oracle's stream.
COMPRESSION_STREAM = 1


class BudgetViolationError(RuntimeError):
    """A rule broke the A_B budget of one iteration: more than B queries per worker or a second round."""


class CapabilityError(RuntimeError):
    """A rule asked its `Context` for what its class does not give it (e.g. exact averaging in a gossip rule,
    a matrix off the graph, a query in ``init``)."""


class MixingHandle:
    """A handle to a mixing matrix of ``ctx.operator``, which ``ctx.mix`` applies (one counted round).

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


def _one_or_tuple(results: Sequence[np.ndarray]) -> np.ndarray | tuple[np.ndarray, ...]:
    return results[0] if len(results) == 1 else tuple(results)


class Context:
    """What a rule sees of one batch, read-only: ``n, k, d``, ``batch`` (B), ``step_size`` (1, k, d),
    ``hyper``, ``x0``, ``t``, ``communication``, ``knows``; `sample` (at most B queries per worker per
    iteration) and one round per iteration (`gossip`, `gossip_two_tap`, `mix`, `exact_average`). Over the
    budget: `BudgetViolationError`; outside the rule's class: `CapabilityError` (docs/architecture.md).

    Parameters
    ----------
    runtime : algorithms.runtime.Runtime
    hyper : mapping
        `batch_hyper`'s dict (a read-only copy)."""

    __slots__ = ("_run", "batch", "communication", "d", "hyper", "k", "knows", "n", "step_size", "x0")
    _run: Runtime
    batch: int
    communication: str
    d: int
    hyper: Mapping[str, object]
    k: int
    knows: frozenset[str]
    n: int
    step_size: np.ndarray
    x0: np.ndarray

    def __init__(self, runtime: Runtime, hyper: Mapping[str, object]) -> None:
        kind = "exact" if runtime.channel is None else runtime.channel.kind
        for name, value in (("_run", runtime), ("n", runtime.n), ("k", runtime.k), ("d", runtime.d),
                            ("batch", runtime.batch), ("step_size", runtime.step_size),
                            ("hyper", MappingProxyType(dict(hyper))), ("x0", runtime.x0),
                            ("communication", kind), ("knows", frozenset(runtime.knows))):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"the context is read-only: cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"the context is read-only: cannot delete {name!r}")

    @property
    def t(self) -> int:
        """The current iteration (from 0)."""
        return self._run.t

    def start_state(self) -> np.ndarray:
        """Every worker and configuration at x0: a fresh (n, k, d) array."""
        start: np.ndarray = np.broadcast_to(self.x0, (self.n, self.k, self.d)).copy()
        return start

    def zeros(self) -> np.ndarray:
        """A fresh (n, k, d) zero array."""
        return np.zeros((self.n, self.k, self.d))

    def sample(self, X: np.ndarray, queries: int | None = None) -> np.ndarray:
        """Stochastic gradients at X (n, k, d), the mean of ``queries`` (default B) queries each.

        Parameters
        ----------
        X : numpy.ndarray, shape (n, k, d)
            One point per worker and configuration.
        queries : int, optional
            At most B per worker and iteration.
        """
        run = self._run
        b = run.batch if queries is None else int(queries)
        if b < 1 or run.queries_now + b > run.batch or not run.open:
            run._refuse("queries", b)
        if X.shape != run.shape:
            raise CapabilityError(f"iteration {run.t}: ctx.sample(X) takes one point per worker and "
                                  f"configuration, shape {run.shape}; got {X.shape}")
        run.queries_now += b
        run.counters.gradient_queries += b
        if run.seen is not None:
            run.seen.append((X.copy(), b))
        return run._exact_gradient(X) if run.memo else run._gradients(X, b)

    @overload
    def gossip(self, Z: np.ndarray, /, *, out: Sequence[np.ndarray] | None = None, vectors: int | None = None,
               add: Sequence[np.ndarray | None] | None = None, compressor: Compressor | str | None = None,
               sent: Sequence[np.ndarray] | None = None) -> np.ndarray: ...

    @overload
    def gossip(self, Z: np.ndarray, other: np.ndarray, /, *more: np.ndarray,
               out: Sequence[np.ndarray] | None = None, vectors: int | None = None,
               add: Sequence[np.ndarray | None] | None = None, compressor: Compressor | str | None = None,
               sent: Sequence[np.ndarray] | None = None) -> tuple[np.ndarray, ...]: ...

    def gossip(self, *Z: np.ndarray, out: Sequence[np.ndarray] | None = None, vectors: int | None = None,
               add: Sequence[np.ndarray | None] | None = None, compressor: Compressor | str | None = None,
               sent: Sequence[np.ndarray] | None = None) -> np.ndarray | tuple[np.ndarray, ...]:
        """One gossip round with W (W_t of a schedule): W Z (+ V) per array (a tuple for several; an
        (m n, ...) array is m stacked). With a ``compressor`` each worker sends C(z_i) (from
        `COMPRESSION_STREAM`), counted as ``compressor.bits(d)`` bits per vector; C(Z) goes into ``sent``.

        Parameters
        ----------
        *Z : numpy.ndarray, shape (n, ...) or (m n, ...)
            The arrays sent.
        out : sequence of numpy.ndarray, optional
            Per array, where the result goes (may be the array).
        vectors : int, optional
            Vectors each worker sends (default: one per n rows).
        add : sequence of (numpy.ndarray or None), optional
            Per array, a local V added to the product.
        compressor : algorithms.compression.Compressor or str, optional
            A compressor or its spec (``compression.make_compressor``).
        sent : sequence of numpy.ndarray, optional
            With a compressor, where C(Z) goes.
        """
        run = self._run
        M = run.fixed or run._operator_now()
        n = self.n
        if vectors is None:  # an (m n, ...) array is m arrays stacked: m vectors
            vectors = Z[0].shape[0] // n if len(Z) == 1 else sum(z.shape[0] // n for z in Z)
        elif int(vectors) < 1:
            raise ValueError(f"ctx.gossip: vectors must be >= 1 (vectors each worker sends); got {vectors}")
        if compressor is None and sent is None:  # the common case
            run._open_round("gossip", int(vectors), M.links, FLOAT_BITS * Z[0].shape[-1])
        else:
            if compressor is None:
                raise ValueError("ctx.gossip: sent= receives the compressed messages; give a compressor")
            compressor = run._compressor_of(compressor)
            run._check_messages(Z, sent)
            run._open_round("gossip", int(vectors), M.links, int(compressor.bits(Z[0].shape[-1])))
            Z = tuple(run._compress(Z, compressor, sent))
        if len(Z) == 1 and (out is None or len(out) == 1) and (add is None or len(add) == 1):
            return M._run(Z[0], None if out is None else out[0], None, None if add is None else add[0], None)
        outs = (None,) * len(Z) if out is None else out
        adds = (None,) * len(Z) if add is None else add
        return _one_or_tuple([M.apply(z, o, v) for z, o, v in zip(Z, outs, adds, strict=True)])

    def gossip_two_tap(self, Z: np.ndarray, out: np.ndarray, a: Coefficient, previous: np.ndarray,
                       b: Coefficient, *, vectors: int | None = None) -> np.ndarray:
        """One gossip round of the two-tap recursion, out <- a (W Z) + b previous (returned).

        Parameters
        ----------
        Z, previous : numpy.ndarray, shape (n, ...)
            The array sent and the previous term.
        out : numpy.ndarray, shape (n, ...)
            Where the new term goes.
        a, b : float or numpy.ndarray
        vectors : int, optional
            Vectors each worker sends (default 1).
        """
        run = self._run
        M = run.fixed or run._operator_now()
        if vectors is not None and vectors < 1:
            raise ValueError(f"ctx.gossip_two_tap: vectors must be >= 1; got {vectors}")
        run._open_round("gossip", 1 if vectors is None else int(vectors), M.links, FLOAT_BITS * Z.shape[-1])
        return M._run(Z, out, a, previous, b)  # (`MixingOperator.two_tap`, one call fewer)

    def operator(self, M: MatrixLike, name: str = "M") -> MixingHandle:
        """A `MixingHandle` to the rule's own matrix M (on W's graph) for `mix`.

        Parameters
        ----------
        M : GossipMatrix, numpy.ndarray or scipy.sparse matrix
            The n x n matrix.
        name : str, default "M"
            Its name in messages.
        """
        return self._run._add_operator(M, name)

    def mix(self, M: MixingHandle, *Z: np.ndarray,
            out: Sequence[np.ndarray] | None = None) -> np.ndarray | tuple[np.ndarray, ...]:
        """One communication round with a matrix of `operator`: M Z for each array (a tuple for several).

        Parameters
        ----------
        M : MixingHandle
        *Z : numpy.ndarray, shape (n, ...)
            The arrays sent.
        out : sequence of numpy.ndarray, optional
            Per array, where the result goes.
        """
        run = self._run
        known = run.operators.get(id(M))
        if known is None or known[0] is not M:
            raise CapabilityError(f"iteration {run.t}: ctx.mix needs a handle of this run's ctx.operator; "
                                  f"got {M!r}")
        mixing = known[1]
        run._open_round("mix", len(Z), mixing.links, FLOAT_BITS * Z[0].shape[-1])
        outs = [None] * len(Z) if out is None else out
        return _one_or_tuple([mixing.apply(z, o) for z, o in zip(Z, outs, strict=True)])

    @overload
    def exact_average(self, Z: np.ndarray, /) -> np.ndarray: ...

    @overload
    def exact_average(self, Z: np.ndarray, other: np.ndarray, /,
                      *more: np.ndarray) -> tuple[np.ndarray, ...]: ...

    def exact_average(self, *Z: np.ndarray) -> np.ndarray | tuple[np.ndarray, ...]:
        """One exact-averaging round (AllReduce, n (n - 1) messages) of an "exact" rule: each array's worker
        mean, (1, ...).

        Parameters
        ----------
        *Z : numpy.ndarray, shape (n, ...)
            The arrays averaged.
        """
        run, n = self._run, self.n
        if self.communication != "exact":
            raise CapabilityError(f"iteration {run.t}: exact averaging is outside a {self.communication!r} "
                                  "rule's class (declare communication = 'exact')")
        run._open_round("exact", len(Z), n * (n - 1), FLOAT_BITS * Z[0].shape[-1])
        return _one_or_tuple([np.add.reduce(z, axis=0, keepdims=True) * (1.0 / n) for z in Z])

    def neighbour_weights(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """Row i of W (W_t of a schedule) for a rule with ``knows = ("neighbour_weights",)``: the columns j
        with W_ij != 0 and the W_ij.

        Parameters
        ----------
        i : int
        """
        if "neighbour_weights" not in self.knows:
            raise CapabilityError("ctx.neighbour_weights needs knows = ('neighbour_weights',) on the rule")
        return self._run._row(int(i))
