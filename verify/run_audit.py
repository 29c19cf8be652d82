"""Every measured run of the rule audited (docs/verify.md, "Every measured run is audited"): the class audit
tests a window (a 9-path, a 12-path, a few hundred iterations); a rule may behave otherwise later, at another
size, in a wider batch, under no auditor or after many calls. So each run of the rule under test, in every
term and at every size, carries a `RunAudit` (an ``algorithms`` observer) that checks at every iteration
what the lower bound assumes of the class A_B (docs/theory.md §1.5, §2):

- **zero-respecting progress** on the hard instance: for each configuration, worker i's chain progress in
  every array it holds and in every point it queries after iteration t is at most the largest progress over
  its closed neighbourhood N[i] after t - 1, plus one where an oracle in N[i] revealed a coordinate in
  iteration t (the exact oracle of an end group; the probabilistic zero-chain oracle only on a success);
- **the A_B budget**: at most B gradient evaluations and one communication round per iteration;
- **every gradient evaluation counted**: the problem the run sees counts what it computes while the rule's
  code runs (`CountedProblem`, `CountedOracle`): local gradients beyond the queries, or any global gradient
  or value, are evaluations a side door took (the context's closures lead to this problem too);
- **information flow at measurement scale** (``flow=True``, one point per term): over the whole run of
  the first engine batch the observer begins (a grid over a structural hyper-parameter: its first value;
  ``replayed`` counts the iterations), the run is the reference; from t0 = 0, w, 2w, ... a replay of the
  same batch (a fresh instance of the class, the state and random streams of the run at t0) runs in
  lockstep with the oracle answers of a worker set S perturbed, and every worker farther than the rounds
  used from S must hold the numbers of the measured run, in every array and every query point. A rule that
  behaves otherwise in the replay than in the run fails it too.

A violation raises `OutsideTheClassError` from the observer, which ends the run; its message names the
iteration, the worker and the configuration (the caller adds the term and the size). A configuration whose
iterates turn non-finite is a diverged run (the engine's verdict), not audited further.
"""

from __future__ import annotations

import copy
import itertools
import os
import pathlib
import sys
from collections.abc import Sequence
from typing import Any

import networkx as nx
import numpy as np
import scipy.sparse as sp
from decbounds.algorithms.hyper import batch_hyper
from decbounds.algorithms.runtime import Runtime
from decbounds.algorithms.step_rule import communication_channel, state_arrays
from decbounds.instances.zero_chain import progress
from decbounds.paper_figures.fit import Record
from decbounds.verify.checks import Check
from decbounds.verify.flow import copy_state

from decbounds import algorithms, instances, oracles

__all__ = ["OutsideTheClassError", "RunAudit", "with_measured_runs"]

_PERTURBATION = 0.5  # the scale of the flow check's perturbation; any non-zero one is a change of the data


class OutsideTheClassError(Exception):
    """A measured run of the rule left the class A_B; the message names the iteration, worker and
    configuration."""


#: The engine's own code: a problem call whose nearest caller outside these folders is the rule's code
#: (its step, its average) is the rule's; one whose nearest such caller is the measurement's is the engine's.
_ENGINE = tuple(str(pathlib.Path(module.__file__).parent) + os.sep
                for module in (algorithms, instances, oracles, np, sp))


_LOOP = algorithms.engine.execute.__code__  # the engine's loop: the rule's code runs below it


def _by_the_rule() -> bool:
    """Whether the rule's code called the problem: walking up the stack past the engine's folders (and this
    module's counting layers), a frame of other code comes before the engine's loop. Read from the stack, so
    the rule's step runs under no wrapper it could see."""
    frame = sys._getframe(2)
    while frame is not None:
        code = frame.f_code
        if code is _LOOP:
            return False  # the engine's own evaluation (a checkpoint), or a run of the engine elsewhere
        if not (code.co_filename.startswith(_ENGINE) or code.co_filename == __file__):
            return True  # the rule's step or average (or code it calls)
        frame = frame.f_back
    return False


_SLOTTED: dict[type, bool] = {}  # per state class: whether a class of its MRO declares slots


def _arrays(state: Any) -> list[tuple[str, np.ndarray]]:
    """`state_arrays` read straight from the instance's ``__dict__`` where no class declares slots and no
    attribute is a list, tuple or dict (every built-in state): the same arrays in the same order, without
    the introspection an observer would repeat every iteration."""
    cls = type(state)
    slotted = _SLOTTED.get(cls)
    if slotted is None:
        slotted = _SLOTTED[cls] = any(getattr(base, "__slots__", ()) for base in cls.__mro__)
    attributes = None if slotted else getattr(state, "__dict__", None)
    if attributes is None:
        return state_arrays(state)
    found = []
    for name, value in attributes.items():
        if isinstance(value, np.ndarray):
            found.append((name, value))
        elif isinstance(value, (list, tuple, dict)):
            return state_arrays(state)
    return found


class _Watch:
    """What the rule's code did to the problem since the last observation, read by the `RunAudit`."""

    def __init__(self) -> None:
        self.local = 0  # local-gradient calls of the problem in the rule's code since the last observation
        self.side: list[str] = []  # global gradients or values the rule's code computed
        self.reveals: np.ndarray | None = None  # (n, k): rows whose answer revealed the next coordinate
        self.asked: np.ndarray | None = None  # (n, k): the furthest coordinate each row queried at
        self.rngs: Sequence[np.random.Generator] | None = None  # the run's streams, as the oracle got them
        self.shape: tuple[int, int, int] | None = None
        self.rows: np.ndarray | None = None  # 0 .. n k - 1, the rows of a query

    def reveal(self, X: np.ndarray, G: np.ndarray) -> None:
        """Mark the rows of a query whose answer holds the coordinate after the point's progress."""
        if self.shape is None or X.shape != self.shape:
            return
        level = progress(X)
        d = X.shape[-1]
        if self.rows is None:
            self.rows = np.arange(level.size)
        at = G.reshape(-1, d)[self.rows, np.minimum(level, d - 1).reshape(-1)].reshape(level.shape)
        found = (at != 0) & (level < d)
        self.reveals = found if self.reveals is None else self.reveals | found
        self.asked = level if self.asked is None else np.maximum(self.asked, level)


class _CountedProblem:
    """The problem a measured run sees: the instance's answers, with every evaluation made while the rule's
    code runs counted (``grad`` calls; ``full_grad``, ``value`` and ``full_value`` named as side doors). It
    offers no fused ``grad_and_full_grad``, so each query reaches ``grad`` here (docs/verify.md)."""

    __slots__ = ("_exact", "_inner", "_watch")

    def __init__(self, inner: Any, watch: _Watch, exact: bool) -> None:
        self._inner, self._watch, self._exact = inner, watch, exact

    def grad(self, X: np.ndarray, width: int | None = None) -> np.ndarray:
        G = self._inner.grad(X) if width is None else self._inner.grad(X, width)
        if self._exact:  # the engine asks grad only for ctx.sample (the checkpoints ask full_grad)
            self._watch.reveal(np.asarray(X), G)
        if _by_the_rule():
            self._watch.local += 1
        return G

    def _global(self, name: str, args: tuple[Any, ...]) -> Any:
        if _by_the_rule():
            self._watch.side.append(name)
        return getattr(self._inner, name)(*args)

    def full_grad(self, x: np.ndarray, *args: Any) -> np.ndarray:
        return self._global("full_grad", (x, *args))

    def value(self, X: np.ndarray, *args: Any) -> np.ndarray:
        return self._global("value", (X, *args))

    def full_value(self, x: np.ndarray, *args: Any) -> np.ndarray:
        return self._global("full_value", (x, *args))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _CountedOracle:
    """The stochastic oracle a measured run sees: the oracle over a `CountedProblem`, marking which rows of
    each query revealed the next coordinate and keeping the run's random streams (for the flow replay)."""

    __slots__ = ("_inner", "_watch", "f")

    def __init__(self, inner: Any, watch: _Watch, f: _CountedProblem) -> None:
        self._inner, self._watch, self.f = inner, watch, f

    def sample(self, X: np.ndarray, rng: np.random.Generator, batch: int = 1) -> np.ndarray:
        return self._inner.sample(X, rng, batch)

    def sample_configurations(self, X: np.ndarray, rngs: Sequence[np.random.Generator], batch: int = 1
                              ) -> np.ndarray:
        many = getattr(self._inner, "sample_configurations", None)
        if many is not None:
            G = many(X, rngs, batch)
        else:  # the engine's own per-configuration path
            G = np.empty_like(X)
            for j, rng in enumerate(rngs):
                G[:, j : j + 1] = self._inner.sample(X[:, j : j + 1], rng, batch)
        self._watch.rngs = rngs
        self._watch.reveal(X, G)
        return G

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def _counted(problem: Any) -> tuple[Any, _Watch]:
    """The problem (or the oracle over counted local functions) of a measured run, and its watch."""
    watch = _Watch()
    if hasattr(problem, "sample") and hasattr(problem, "f"):
        f = _CountedProblem(problem.f, watch, exact=False)
        oracle = copy.copy(problem)  # the same oracle over the counted functions
        oracle.f = f
        return _CountedOracle(oracle, watch, f), watch
    return _CountedProblem(problem, watch, exact=True), watch


def _closed_neighbourhoods(matrix: Any, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(indices, starts) of each worker's closed neighbourhood, for ``np.maximum.reduceat`` over rows."""
    pattern = sp.csr_array(abs(sp.csr_array(matrix)) > 0, dtype=np.int8) + sp.eye_array(n, dtype=np.int8,
                                                                                          format="csr")
    pattern = sp.csr_array(pattern)
    pattern.sort_indices()
    return pattern.indices.astype(np.intp), pattern.indptr[:-1].astype(np.intp)


class RunAudit:
    """The observer of one measured run of the rule (module docstring): raises `OutsideTheClassError` at the
    first violation.

    Parameters
    ----------
    problem : LocalFunctions or Oracle
        What the term measures on (``terms.term_instance``): the hard instance, or the probabilistic
        zero-chain oracle over it. The run is handed ``measured`` instead, the same answers counted.
    graph : networkx.Graph, optional
        The communication graph, for rules that take no gossip value (default: the instance's).
    flow : bool, default False
        Also the information-flow check, over the whole run of the first batch begun.
    seed : int, default 0
        The flow check's perturbations.
    """

    def __init__(self, problem: instances.LocalFunctions | oracles.Oracle, *, graph: nx.Graph | None = None,
                 flow: bool = False, seed: int = 0) -> None:
        sampling = hasattr(problem, "sample") and hasattr(problem, "f")
        self.measured, self.watch = _counted(problem)
        self.problem: Any = problem.f if sampling else problem  # type: ignore[union-attr]
        self.oracle: Any = problem if sampling else None
        self.graph, self.flow, self.seed = graph, flow, seed
        self.iterations = 0  # iterations audited over every run of this observer
        self.replayed = 0  # iterations replayed by the flow check
        self.batches = 0  # engine batches begun (the flow check replays the first)

    # -- the hook ------------------------------------------------------------------------------------------

    def begin(self, run: algorithms.RunInfo) -> None:
        """Start auditing one batch: watch the rule's step and average, learn the graph.

        Parameters
        ----------
        run : algorithms.RunInfo
            The batch.
        """
        self.run = run
        self.n, self.k, self.d, self.batch = int(run.n), int(run.k), int(run.d), int(run.batch)
        self.watch.shape, self.watch.rows = (self.n, self.k, self.d), None
        self.watch.local, self.watch.side, self.watch.reveals, self.watch.rngs = 0, [], None, None
        self.watch.asked = None
        self.cls = type(run.rule)
        self.outside = not self.cls.gossips or self.cls.communication == "exact"
        self.gossip = run.gossip
        self.neighbourhoods: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        start = np.asarray(progress(np.asarray(self.problem.x0)))
        self.level = np.broadcast_to(start, (self.n, self.k)).copy()
        self.finite = np.ones(self.k, dtype=bool)
        self.diverging = False  # a configuration turned non-finite (then audited no further)
        self.saturated = False
        self.window: _Window | None = None
        self.rng = np.random.default_rng([self.seed, 31])
        self.batches += 1
        self.flowing = self.flow and not self.outside and self.batches == 1
        if self.flowing:
            self._flow_setup()

    def observe(self, observation: algorithms.Observation) -> None:
        """Audit iteration ``observation.t``.

        Parameters
        ----------
        observation : algorithms.Observation
            The step just taken.
        """
        watch, t = self.watch, int(observation.t)
        self.iterations += 1
        if observation.evaluations > self.batch or len(observation.rounds) > 1:
            self._fail(t, None, None, f"{observation.evaluations} gradient evaluations and "
                                      f"{len(observation.rounds)} rounds in one iteration (the A_B budget: "
                                      f"B = {self.batch} and one round)")
        if watch.side:
            self._fail(t, None, None, f"the rule's code evaluated the problem's {watch.side[0]} (a global "
                                      "gradient or value no query counts: a side door to the problem)")
        if watch.local > len(observation.queries):
            self._fail(t, None, None, f"uncounted gradient evaluations: the problem computed {watch.local} "
                                      "local gradients while the rule's code ran, "
                                      f"{len(observation.queries)} queries counted")
        if not self.outside and not self.saturated:
            self._zero_respecting(t, observation)
        if self.flowing:
            self._flow_step(t, observation)
        watch.local, watch.side, watch.reveals, watch.asked = 0, [], None, None

    # -- zero-respecting -----------------------------------------------------------------------------------

    def _graph(self) -> nx.Graph:
        """Who may talk to whom: the graph given, else the run's support graph, W's or the instance's."""
        if self.graph is not None:
            return self.graph
        channel = self.run.channel
        if channel is not None and channel.graph is not None:
            return channel.graph
        if self.gossip is not None:
            return nx.from_scipy_sparse_array(self.gossip.round_matrix(0))
        return self.problem.graph()

    def _closed(self, t: int) -> tuple[np.ndarray, np.ndarray]:
        gossip = self.gossip
        if gossip is None:
            key = -1
            if key not in self.neighbourhoods:
                graph = self._graph()
                self.neighbourhoods[key] = _closed_neighbourhoods(nx.to_scipy_sparse_array(graph,
                                                                                           range(self.n)),
                                                                  self.n)
            return self.neighbourhoods[key]
        key = t % int(gossip.period) if getattr(gossip, "time_varying", False) and gossip.period else 0
        if key not in self.neighbourhoods:
            self.neighbourhoods[key] = _closed_neighbourhoods(gossip.round_matrix(t), self.n)
        return self.neighbourhoods[key]

    def _levels(self, state: Any) -> np.ndarray:
        """(n, k) chain progress over every array of the state with last axis d (`state_progress`'s
        reading: an (n, m k, d) array as m blocks of the k configurations). The arrays' nonzero patterns
        are joined first and read once: the progress of the union is the largest of the arrays' progress."""
        n, k, d = self.n, self.k, self.d
        shape = (n, k, d)
        held: np.ndarray | None = None
        for _, array in _arrays(state):
            if array.shape == shape and held is not None:
                if array.dtype.kind != "O":  # one call: an entry is held where it is not 0 (NaN is)
                    np.logical_or(held, array, out=held)
                continue
            if array.ndim < 2 or array.shape[-1] != d or array.dtype.kind == "O" or array.shape[0] != n:
                continue
            nonzero = array != 0
            if nonzero.shape != (n, k, d):
                rows = nonzero.reshape(n, -1, d)
                nonzero = rows.reshape(n, -1, k, d).any(axis=1) if rows.shape[1] % k == 0 else \
                    np.broadcast_to(rows.any(axis=1, keepdims=True), (n, k, d))
            held = nonzero.copy() if held is None and not nonzero.flags.writeable else \
                nonzero if held is None else held | nonzero
        return np.zeros((n, k), dtype=np.int64) if held is None else progress(held)

    def _diverged(self, state: Any, j: int) -> bool:
        """Whether configuration j holds a non-finite entry (a diverged run: NaN reads as a coordinate);
        then it is audited no further."""
        for _, array in state_arrays(state):
            if array.dtype.kind == "f" and array.ndim >= 2 and array.shape[0] == self.n:
                flat = array.reshape(self.n, -1, array.shape[-1])
                part = flat[:, j :: self.k] if flat.shape[1] % self.k == 0 else flat
                if not np.isfinite(part).all():
                    self.finite[j] = False
                    return True
        return False

    def _zero_respecting(self, t: int, observation: Any) -> None:
        levels = self._levels(observation.state)
        asked = self.watch.asked
        # a worker's closed neighbourhood holds the worker itself, so its reach is at least its own level:
        # where no level (state or query) rose above the last iteration's, nothing can exceed the reach and
        # the neighbourhood maxima need not be formed (most iterations: a level rises at most d times)
        if not (levels > self.level).any() and (asked is None or not (asked > self.level).any()):
            self.level = np.where(self.finite[None, :], levels, self.level) if self.diverging else levels
            return
        indices, starts = self._closed(t)
        reach = np.maximum.reduceat(self.level[indices], starts, axis=0)
        reveals = self.watch.reveals
        if reveals is not None and reveals.any():
            reach += np.maximum.reduceat(reveals[indices], starts, axis=0)
        over = levels > reach
        if asked is not None:
            over |= asked > reach
        while over.any():
            if not self.diverging:
                over &= self.finite[None, :]
                if not over.any():
                    break
            i, j = (int(v) for v in np.argwhere(over)[0])
            if not self._diverged(observation.state, j):
                self._zero_respecting_failure(t, observation, i, j, reach, levels)
            self.diverging = True
            over &= self.finite[None, :]
        self.level = np.where(self.finite[None, :], levels, self.level) if self.diverging else levels
        if int(self.level.min()) >= self.d:
            self.saturated = True  # every worker holds the whole chain: no coordinate is left to gain

    def _zero_respecting_failure(self, t: int, observation: Any, i: int, j: int, reach: np.ndarray,
                                 levels: np.ndarray) -> None:
        indices, starts = self._closed(t)
        stop = starts[i + 1] if i + 1 < len(starts) else len(indices)
        held = int(self.level[indices[starts[i]:stop], j].max())
        reveals = self.watch.reveals
        revealed = reveals is not None and bool(reveals[indices[starts[i]:stop], j].any())
        since = (" and revealed one more" if revealed else " and no oracle there revealed a coordinate")
        for q, X in enumerate(observation.queries):
            asked = progress(X)
            if asked[i, j] > reach[i, j]:
                self._fail(t, i, j, f"query point {q} passed to ctx.sample holds chain coordinate "
                                    f"{int(asked[i, j])}, but its closed neighbourhood held at most {held} "
                                    f"before the iteration{since}: a query off the span the zero-respecting "
                                    "rule allows")
        field = next((label for label, array in state_arrays(observation.state)
                      if array.ndim >= 2 and array.shape[-1] == self.d and array.shape[0] == self.n
                      and int(progress(array[i]).max()) >= int(levels[i, j])), "an array")
        self._fail(t, i, j, f"worker {i} holds chain coordinate {int(levels[i, j])} in state field "
                            f"{field!r}, but its closed neighbourhood held at most {held} after the "
                            f"previous iteration{since} (information moved more than one hop per iteration)")

    # -- information flow at measurement scale -------------------------------------------------------------

    def _flow_setup(self) -> None:
        """The worker set S (the instance's first end group; the first third of the graph's workers where it
        has none) and its hop distances."""
        graph = self._graph()
        groups = getattr(self.problem, "groups", None)
        S = np.asarray(groups[0]) if groups is not None else np.arange(max(1, -(-self.n // 3)))
        distance = np.full(self.n, np.inf)
        for i, hops in nx.multi_source_dijkstra_path_length(graph, {int(s) for s in S},
                                                            weight=lambda *_: 1).items():
            distance[i] = hops
        self.flow_set, self.distance = S, distance
        # S's rows of an answer: a slice where S is one ascending range (a view: the shift added in place)
        contiguous = S.size > 0 and np.array_equal(S, np.arange(S[0], S[0] + S.size))
        self.flow_rows: np.ndarray | slice = slice(int(S[0]), int(S[0]) + S.size) if contiguous else S
        self.span = max(1, int(distance[np.isfinite(distance)].max()) - 1)
        # the replay gets the channel the run's rule was built with (a "graph" rule's factors come from it)
        self.channel = self.run.channel if self.run.channel is not None else communication_channel(
            self.cls.communication, graph if self.cls.communication == "graph" else self.gossip, self.n,
            directed_rounds=self.cls.directed_rounds)
        self.start_state: Any = None

    def _flow_step(self, t: int, observation: Any) -> None:
        window = self.window
        if window is None:  # the first window starts from the run's start: a replay from init
            window = self.window = _Window(self)
        window.step(t, observation, self)
        if t + 1 - window.t0 >= self.span:  # the next window starts from the run's state after t
            rngs = None if self.oracle is None or self.watch.rngs is None else self.watch.rngs
            window.restart(t + 1, observation.state, rngs, self)

    def _fail(self, t: int, worker: int | None, j: int | None, what: str) -> None:
        where = f"iteration {t}"
        if worker is not None:
            where += f", worker {worker}"
        if j is not None:
            where += f", configuration {j} (step {self.run.step_sizes[j]:.4g}, seed {self.run.seeds[j]}"
            hyper = {key: value for key, value in self.run.hypers[j].items()
                     if isinstance(value, (int, float, str, bool))}
            where += (f", {hyper}" if hyper else "") + ")"
        raise OutsideTheClassError(f"{where}: {what}")


class _Tap:
    """The replay's problem or oracle: the instance's answers, S's rows shifted (module docstring)."""

    __slots__ = ("_base", "_exact", "delta", "dim", "n", "queries", "x0")

    def __init__(self, base: Any, exact: bool, problem: Any, delta: tuple[np.ndarray | slice, np.ndarray]
                 ) -> None:
        self._base, self._exact = base, exact
        self.n, self.dim, self.x0 = problem.n, problem.dim, problem.x0
        self.delta = delta
        self.queries: list[np.ndarray] = []

    @property
    def exact(self) -> bool:
        return self._exact

    def _record(self, X: np.ndarray, answer: np.ndarray) -> np.ndarray:
        self.queries.append(np.array(X, copy=True))
        rows, shift = self.delta
        answer = np.array(answer, copy=True)
        answer[rows] += shift
        return answer

    def grad(self, X: np.ndarray) -> np.ndarray:
        return self._record(X, self._base.grad(X))

    def full_grad(self, x: np.ndarray) -> np.ndarray:
        raise AttributeError("the replay's problem answers local gradients only")

    def sample_configurations(self, X: np.ndarray, rngs: Sequence[np.random.Generator], batch: int
                              ) -> np.ndarray:
        many = getattr(self._base, "sample_configurations", None)
        if many is not None:
            return self._record(X, many(X, rngs, batch))
        answer = np.empty_like(X)
        for j, rng in enumerate(rngs):
            answer[:, j : j + 1] = self._base.sample(X[:, j : j + 1], rng, batch)
        return self._record(X, answer)


def _changed(a: np.ndarray, b: np.ndarray, checked: np.ndarray, k: int, rows: slice | None = None
             ) -> tuple[int, int | None] | None:
    """(worker, configuration) of the first checked worker whose entries of a and b differ (numbers, NaN
    equal to NaN, a zero's sign ignored: the run and its replay may take the zero chain's dense and sparse
    kernels); the configuration is None for an array without the batch axis. ``rows``: the checked workers
    when they are one contiguous range (views compared, nothing copied)."""
    if a.shape != b.shape:
        return int(np.argmax(checked)), None
    n = a.shape[0]
    if rows is not None:
        if (a[rows] == b[rows]).all():
            return None  # the common case on a path: one comparison of the far rows
    elif not (~(a.reshape(n, -1) == b.reshape(n, -1)).all(axis=1) & checked).any():
        return None  # the common case, three numpy calls
    blocks = a.ndim >= 2 and a.shape[1] % k == 0
    rest = int(np.prod(a.shape[2:]))
    x, y = (v.reshape(n, -1, k, rest) if blocks else v.reshape(n, 1, 1, -1) for v in (a, b))
    differs = ~((x == y) | ((x != x) & (y != y))).all(axis=(1, 3)) & checked[:, None]
    if not differs.any():
        return None
    i, j = (int(v) for v in np.argwhere(differs)[0])
    return i, (j if blocks else None)


class _Window:
    """The flow check's replay: the batch again (a fresh instance of the class, its own ledger), restarted
    at each window's t0 from the run's state and random streams with S's answers perturbed, stepped in
    lockstep with the run."""

    def __init__(self, audit: RunAudit) -> None:
        run, cls = audit.run, audit.cls
        structural = dict(run.rule.structural_values)
        resolved = [{key: value for key, value in hyper.items() if key not in structural}
                    for hyper in run.hypers]
        base = audit.oracle if audit.oracle is not None else audit.problem
        self.tap = _Tap(base, audit.oracle is None, audit.problem, (audit.flow_rows, self._shift(audit)))
        self.rule = cls(audit.problem, audit.channel, structural, iterations=int(run.rule.iterations))
        self.ledger = Runtime(problem=self.tap, oracle=None if audit.oracle is None else self.tap,
                             channel=audit.channel, step_sizes=list(run.step_sizes),
                             hyper=batch_hyper(self.rule.structural_values, resolved, audit.d),
                             batch=audit.batch, seeds=list(run.seeds), knows=cls.knows)
        self.state = self.rule.init(self.ledger.context)
        self.t0, self.rounds0 = 0, 0
        self.checked_by_rounds: dict[int, tuple[np.ndarray | None, slice | None]] = {}

    @staticmethod
    def _shift(audit: RunAudit) -> np.ndarray:
        return _PERTURBATION * (1.0 + audit.rng.standard_normal((audit.flow_set.size, audit.k, audit.d)))

    def restart(self, t0: int, state: Any, rngs: Sequence[np.random.Generator] | None, audit: RunAudit
                ) -> None:
        """Continue from a copy of the run's state after t0 - 1, its streams where they are now."""
        self.t0, self.rounds0 = t0, self.ledger.counters.communication_rounds
        self.state = copy_state(state)
        self.tap.delta = (audit.flow_rows, self._shift(audit))
        self.tap.queries.clear()
        for mine, theirs in zip(self.ledger.rngs, rngs or (), strict=False):
            mine.bit_generator.state = theirs.bit_generator.state

    def _checked(self, rounds: int, audit: RunAudit) -> tuple[np.ndarray | None, slice | None]:
        """The workers farther than ``rounds`` hops from S (None when there is none), and their range when
        contiguous (cached: the rounds used grow by at most one per iteration)."""
        cached = self.checked_by_rounds.get(rounds)
        if cached is None:
            checked = audit.distance > rounds
            where = np.flatnonzero(checked)
            contiguous = where.size > 0 and int(where[-1]) - int(where[0]) + 1 == where.size
            cached = self.checked_by_rounds[rounds] = (
                checked if where.size else None,
                slice(int(where[0]), int(where[-1]) + 1) if contiguous else None)
        return cached

    def step(self, t: int, observation: Any, audit: RunAudit) -> None:
        before = len(self.tap.queries)
        self.ledger.begin_iteration(t)
        self.state = self.rule.step(self.state, self.ledger.context)
        audit.replayed += 1
        rounds = self.ledger.counters.communication_rounds - self.rounds0
        checked, rows = self._checked(rounds, audit)
        if checked is None:
            return  # no worker is farther than the rounds used: nothing to compare
        mine_queries, theirs_queries = self.tap.queries[before:], observation.queries
        for q, (mine, theirs) in enumerate(itertools.zip_longest(mine_queries, theirs_queries)):
            found = None if mine is None or theirs is None else _changed(theirs, mine, checked, audit.k, rows)
            if mine is None or theirs is None or found is not None:
                worker, j = found if found is not None else (None, None)
                at = "the number of queries" if worker is None else \
                    f"worker {worker}'s query point {q} ({int(audit.distance[worker])} hops from S)"
                audit._fail(t, worker, j, f"{self._perturbed(audit)}, {at} changed after {rounds} "
                                          "communication round(s): a query point may depend only on the "
                                          "workers within the rounds used (or the step is not a function of "
                                          "(state, ctx))")
        theirs_arrays = dict(_arrays(observation.state))
        for label, mine_array in _arrays(self.state):
            reference = theirs_arrays.get(label)
            if reference is None or mine_array.dtype == object or mine_array.ndim == 0 \
                    or mine_array.shape[0] != audit.n:
                continue
            found = _changed(reference, mine_array, checked, audit.k, rows)
            if found is not None:
                worker, j = found
                audit._fail(t, worker, j,
                            f"{self._perturbed(audit)}, worker {worker}, {int(audit.distance[worker])} hops "
                            f"from S, changed in state field {label!r} when {rounds} communication round(s) "
                            "had been used: information moved farther than the rounds allow (or the step is "
                            "not a function of (state, ctx): the replay and the run differ)")

    def _perturbed(self, audit: RunAudit) -> str:
        return (f"with the oracle answers of S = {audit.flow_set.tolist()} (the first end group) perturbed "
                f"from iteration {self.t0} in a replay of the run")


def with_measured_runs(audited: Record, records: Sequence[Record], name: str) -> Record:
    """``audited`` with a failed "measured_runs" `Check` when a measured run of ``name`` left the class (a
    record's ``class_violation``, naming term, size, iteration, worker and configuration); unchanged
    otherwise.

    Parameters
    ----------
    audited : mapping
        The class audit (``passed``, ``checks``).
    records : sequence of dict
        The run's records.
    name : str
        The rule's registry name.

    Returns
    -------
    dict
    """
    violations = [r["result"]["class_violation"] for r in records
                  if r["point"]["algorithm"] == name and "class_violation" in r["result"]]
    if not violations or not audited["passed"]:
        return audited
    return {**audited, "passed": False, "checks": [*audited["checks"], Check(
        "measured_runs", False, f"{name}: outside the gossip class in a measured run: {violations[0]}")]}
