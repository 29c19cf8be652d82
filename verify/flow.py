"""The class audit by what a rule does (docs/verify.md, "The threat model"): information flow, purity and the
configuration axis, tested differentially on the rule's own class, bit for bit.

A rule is in the gossip class A_B when what worker i holds after a run that used r communication rounds is a
function of the data of the workers within r hops of i (docs/theory.md §1.5, §2). Declared fields, timing
and the zero chain's progress are only symptoms of that; this module tests it directly:

- **information flow**: the oracle answers of one worker set S (an end group of the path, its middle worker,
  a random worker) are perturbed -- and, separately, S's rows of every array of the state -- from iteration
  t0 on, and the same rule (the same class, a fresh instance, the same seeds and random streams) reruns;
  every worker farther than r hops from S (r = the communication rounds the context counted since t0) must
  stay bit-identical to the unperturbed run after every iteration, in every array of the state and in every
  point it passed to ``ctx.sample``. The path carries a random labelling; t0 runs over windows covering the
  whole horizon (the start and mid-run states), so that a global average landing at any iteration of the
  horizon (Gossip-PGA's period, a delayed all-reduce) is inside some window; both an exact oracle and the
  probabilistic zero-chain oracle (the measurement's two kinds), each with a batch of two configurations;
- **purity**: a step is a function of (state, ctx): replayed from a deep copy of the state at iteration t0
  on a fresh instance, and the whole run again on the same instance, it gives the same bits; where it does
  not, the audit names the state kept outside the state it finds (a class attribute, an instance attribute,
  a closure cell, a module global, a generator or iterator);
- **the configuration axis**: each configuration of a batch has, in every array and in ``average``, the
  bits of its solo run (the zero chain's kernels are elementwise and the sparse gossip is bit-stable, so an
  honest rule's configurations are independent to the last bit, `algorithms.engine`).

The oracle the rule queries here exposes ``grad`` (or ``sample``) and the sizes only: a rule that reaches
past its context to the problem (introspection) and asks it for more fails naming what it asked for.
"""

from __future__ import annotations

import collections.abc
import copy
import hashlib
import inspect
import itertools
import sys
import types
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import networkx as nx
import numpy as np
import scipy.sparse as sp
from decbounds.algorithms.engine import batch_hyper
from decbounds.algorithms.runtime import Runtime
from decbounds.algorithms.step_rule import check_state, communication_channel, state_arrays
from decbounds.verify.checks import CONDITIONS, FLOW_KEYS, Check

from decbounds import algorithms, instances, oracles

__all__ = ["FLOW_CONDITIONS", "copy_state", "digest", "flow_audit", "hidden_state"]

#: The checks of this module, by key: the condition as the report words it.
FLOW_CONDITIONS: dict[str, str] = {key: CONDITIONS[key] for key in FLOW_KEYS}

#: Iterations the differential runs cover: Gossip-PGA's largest period in the adversarial suite (128) lands
#: twice inside the horizon.
FLOW_HORIZON = 260

#: Workers of the differential checks' path: a size the path sweeps of the tiny and quick modes measure (a
#: rule cannot tell the audit by n); small, so that the checks stay cheap. (A batch and a solo run may take
#: different kernels of the zero chain at larger sizes; the configuration check allows for the one thing
#: that changes then, the sign of a zero: `_same_numbers`.)
FLOW_WORKERS = 12

_PERTURBATION = 0.5  # the scale of the perturbation; any non-zero one is a change of the data


class _Tap:
    """The audit's problem (exact: ``grad``) or oracle (``sample``): the base's answers, the rows of the set
    S shifted by ``delta`` while perturbed, and every query point recorded with the rounds counted before it.
    It exposes nothing else, so a rule that reaches it past its context finds no problem to exploit."""

    __slots__ = ("_base", "_exact", "delta", "dim", "ledger", "n", "queries", "x0")

    def __init__(self, base: Any, exact: bool, problem: Any) -> None:
        self._base, self._exact = base, exact
        self.n, self.dim, self.x0 = problem.n, problem.dim, problem.x0
        self.delta: tuple[np.ndarray, np.ndarray] | None = None  # (the rows S, their shift)
        self.ledger: Runtime | None = None
        self.queries: list[tuple[int, int, np.ndarray]] = []  # (iteration, rounds before it, the point)

    @property
    def exact(self) -> bool:
        return self._exact

    def _record(self, X: np.ndarray, answer: np.ndarray) -> np.ndarray:
        ledger = self.ledger
        assert ledger is not None
        self.queries.append((ledger.t, ledger.counters.communication_rounds, np.array(X, copy=True)))
        if self.delta is None:
            return answer
        rows, shift = self.delta
        answer = np.array(answer, copy=True)
        answer[rows] += shift  # the other rows keep their bits (adding 0.0 would turn -0.0 into 0.0)
        return answer

    def grad(self, X: np.ndarray) -> np.ndarray:
        return self._record(X, self._base.grad(X))

    def sample_configurations(self, X: np.ndarray, rngs: Sequence[np.random.Generator], batch: int
                              ) -> np.ndarray:
        """One oracle call per configuration with its own stream (the engine's per-configuration path)."""
        answer = np.empty_like(X)
        for j, rng in enumerate(rngs):
            answer[:, j : j + 1] = self._base.sample(X[:, j : j + 1], rng, batch)
        return self._record(X, answer)


class _Run:
    """One run of the rule's class on the audit's ledger: a fresh instance, init, then steps on demand."""

    def __init__(self, cls: type, f: Any, oracle: Any, channel: Any, steps: Sequence[float],
                 seeds: Sequence[int], iterations: int, batch: int) -> None:
        self.tap = _Tap(oracle if oracle is not None else f, oracle is None, f)
        self.rule = cls(f, channel, {}, iterations=iterations)
        resolved = [self.rule.check_values(dict(cls.batchable)) for _ in steps]
        self.ledger = Runtime(problem=self.tap, oracle=None if oracle is None else self.tap,
                             channel=channel, step_sizes=list(steps),
                             hyper=batch_hyper(self.rule.structural_values, resolved, int(f.dim)),
                             batch=batch, seeds=list(seeds), knows=cls.knows)
        self.tap.ledger = self.ledger
        self.state = self.rule.init(self.ledger.context)
        check_state(self.state, int(f.n))

    def step(self, t: int) -> None:
        self.ledger.begin_iteration(t)
        self.state = self.rule.step(self.state, self.ledger.context)

    def restart_at(self, state: Any, rng_states: list[Any]) -> None:
        """Continue from a deep copy of ``state`` with the random streams where they were."""
        self.state = copy_state(state)
        for rng, saved in zip(self.ledger.rngs, rng_states, strict=True):
            rng.bit_generator.state = saved


def copy_state(state: object) -> object:
    """A deep copy of a rule's state in which arrays that were views of one array stay views of one copy.

    ``copy.deepcopy`` copies each view on its own, so a rule whose state holds halves of one stacked array
    (BEER: one product sends both messages, through the halves' ``base``) would replay on arrays that no
    longer share memory, and the purity check would blame the rule for the copy. Here each base array is
    copied once and its views are made again at the same offsets and strides.

    Parameters
    ----------
    state : object
        The rule's state (a `State` dataclass).

    Returns
    -------
    object
        The copy.

    Examples
    --------
    >>> stacked = np.arange(6.0).reshape(2, 3)
    >>> halves = copy_state([stacked[:1], stacked[1:]])
    >>> halves[0].base is halves[1].base and halves[0].base is not stacked
    True
    """
    memo: dict[int, object] = {}
    fields = vars(state).values() if hasattr(state, "__dict__") else state if isinstance(state, list) else ()
    for value in fields:
        base = getattr(value, "base", None)
        if not isinstance(value, np.ndarray) or not isinstance(base, np.ndarray) or base.base is not None \
                or not base.flags.c_contiguous:
            continue
        copied = memo.get(id(base))
        if copied is None:
            copied = memo[id(base)] = base.copy()
        offset = value.__array_interface__["data"][0] - base.__array_interface__["data"][0]
        memo[id(value)] = np.ndarray(value.shape, value.dtype, buffer=copied, offset=offset,
                                     strides=value.strides)
    return copy.deepcopy(state, memo)


class _Trace:
    """The reference run: the state after every iteration (deep copies), the streams before each, the query
    points of each iteration."""

    def __init__(self, run: _Run, horizon: int) -> None:
        self.states = [copy_state(run.state)]
        self.rngs = [[rng.bit_generator.state for rng in run.ledger.rngs]]
        self.outputs = [np.array(run.rule.average(run.state), copy=True)]
        for t in range(horizon):
            run.step(t)
            self.states.append(copy_state(run.state))
            self.rngs.append([rng.bit_generator.state for rng in run.ledger.rngs])
            self.outputs.append(np.array(run.rule.average(run.state), copy=True))
        self.queries: dict[int, list[np.ndarray]] = {}
        for t, _, X in run.tap.queries:
            self.queries.setdefault(t, []).append(X)


def _row_bytes(array: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(array)
    return a.view(np.uint8).reshape(a.shape[0], -1) if a.size else np.zeros((a.shape[0], 0), np.uint8)


def _first_difference(reference: Any, other: Any, checked: np.ndarray) -> tuple[str, int | None] | None:
    """(field, worker) of the first array row of a checked worker whose bits differ between two states;
    (field, None) for arrays that differ in kind or are not per worker."""
    ref = dict(state_arrays(reference))
    new = dict(state_arrays(other))
    n = checked.size
    for label in sorted(set(ref) | set(new)):
        a, b = ref.get(label), new.get(label)
        if a is None or b is None or a.shape != b.shape or a.dtype != b.dtype:
            return label, None
        if a.dtype == object:
            continue
        if a.ndim == 0 or a.shape[0] != n:
            if a.tobytes() != b.tobytes():
                return label, None
            continue
        differs = (_row_bytes(a) != _row_bytes(b)).any(axis=1) & checked
        if differs.any():
            return label, int(np.argmax(differs))
    return None


def _query_difference(reference: list[np.ndarray], other: list[np.ndarray], checked: list[np.ndarray]
                      ) -> tuple[int, int | None] | None:
    """(query index, worker) of the first query point row of a checked worker that differs."""
    if len(reference) != len(other):
        return min(len(reference), len(other)), None
    for q, (a, b) in enumerate(zip(reference, other, strict=True)):
        if a.shape != b.shape:
            return q, None
        differs = (_row_bytes(a) != _row_bytes(b)).any(axis=1) & checked[q]
        if differs.any():
            return q, int(np.argmax(differs))
    return None


def digest(value: object, depth: int = 0) -> object:
    """A comparable fingerprint of a value (array bytes, scalars, containers, plain objects' attributes to
    depth 3; other objects by identity): whether a rule's attribute or hidden state changed.

    Parameters
    ----------
    value : object
        The value.
    depth : int, default 0
        The nesting level reached (objects deeper than 3 compare by identity).

    Returns
    -------
    object
        Equal for equal contents.
    """
    if isinstance(value, np.ndarray):
        data = value.tobytes() if value.dtype != object else repr(value.tolist()).encode()
        return ("array", value.shape, value.dtype.str, hashlib.sha1(data).hexdigest())
    if sp.issparse(value):
        return ("sparse", value.shape, hashlib.sha1(value.tocsr().data.tobytes()).hexdigest())
    if isinstance(value, (str, bytes, int, float, complex, bool, type(None))):
        return value
    if depth >= 3:
        return ("object", id(value))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(digest(v, depth + 1) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple((repr(k), digest(v, depth + 1)) for k, v in value.items()))
    if hasattr(value, "__dict__") and not isinstance(value, type) and not callable(value):
        return ("object", id(value), tuple((k, digest(v, depth + 1)) for k, v in vars(value).items()))
    return ("object", id(value))


# -- state kept outside the state ----------------------------------------------------------------------------

def _user_classes(cls: type) -> list[type]:
    return [c for c in cls.__mro__ if not c.__module__.startswith(("decbounds", "builtins"))
            and c is not object]


def _fingerprint(value: Any) -> Any:
    if isinstance(value, types.GeneratorType) or (isinstance(value, collections.abc.Iterator)
                                                  and not isinstance(value, (str, bytes))):
        return ("iterator", id(value), _iterator_position(value))
    return digest(value)


def _iterator_position(value: Any) -> Any:
    frame = getattr(value, "gi_frame", None)
    if frame is not None:
        return (frame.f_lasti, repr(sorted((k, repr(v)[:80]) for k, v in frame.f_locals.items())))
    try:
        return repr(value.__reduce__())[:200]
    except Exception:  # an iterator that cannot say where it is: by identity
        return None


def _outside_places(cls: type, rule: Any) -> dict[str, Any]:
    """Every place a rule can keep state outside its state: its classes' attributes, the closure cells and
    default values of their methods, the module globals of the rule's module, its instance attributes."""
    places: dict[str, Any] = {}
    modules = set()
    for klass in _user_classes(cls):
        modules.add(klass.__module__)
        for name, value in list(vars(klass).items()):
            if name.startswith("__") and name.endswith("__"):
                continue
            function = getattr(value, "__func__", value)
            if inspect.isfunction(function):
                for cell_name, cell in zip(function.__code__.co_freevars, function.__closure__ or (),
                                           strict=True):
                    try:
                        places[f"closure cell {cell_name!r} of {klass.__qualname__}.{name}"] = \
                            cell.cell_contents
                    except ValueError:  # an empty cell
                        continue
                for i, default in enumerate(function.__defaults__ or ()):
                    places[f"default argument {i} of {klass.__qualname__}.{name}"] = default
                continue
            if isinstance(value, (property, staticmethod, classmethod, type)):
                continue
            places[f"class attribute {klass.__qualname__}.{name}"] = value
    for module_name in modules:
        module = sys.modules.get(module_name)
        for name, value in list(vars(module).items()) if module is not None else ():
            if name.startswith("__") or inspect.ismodule(value) or inspect.isclass(value) \
                    or inspect.isfunction(value) or inspect.isbuiltin(value):
                continue
            places[f"module global {module_name}.{name}"] = value
    for name, value in list(getattr(rule, "__dict__", {}).items()):
        places[f"instance attribute {name!r}"] = value
    return places


def hidden_state(cls: type, rule: algorithms.StepRule, before: Mapping[str, object]) -> str | None:
    """Where the rule kept state outside its state, in words: the first place of `_outside_places` whose
    fingerprint changed since ``before`` (or that holds a generator or iterator); None when none is found.

    Parameters
    ----------
    cls : type
        The rule's class.
    rule : StepRule
        An instance that ran.
    before : dict
        ``{place: fingerprint}`` taken before it ran.

    Returns
    -------
    str or None
    """
    now = {k: _fingerprint(v) for k, v in _outside_places(cls, rule).items()}
    for place in sorted(set(now) | set(before)):
        if now.get(place, ()) != before.get(place, ()):
            return f"{place} changed while the rule ran"
    for place, value in _outside_places(cls, rule).items():
        if isinstance(value, collections.abc.Iterator) and not isinstance(value, (str, bytes)):
            return f"{place} holds a {type(value).__name__} (an iterator advances outside the state)"
    return None


_NOT_LOCATED = ("not located (no class or instance attribute, closure cell, module global or iterator of the "
                "rule's module changed)")


def _snapshot(cls: type, rule: Any) -> dict[str, Any]:
    return {k: _fingerprint(v) for k, v in _outside_places(cls, rule).items()}


# -- the checks ----------------------------------------------------------------------------------------------

def _labelled_path(n: int, rng: np.random.Generator) -> tuple[nx.Graph, np.ndarray]:
    order = rng.permutation(n)
    graph = nx.Graph()
    graph.add_nodes_from(range(n))
    graph.add_edges_from((int(a), int(b)) for a, b in itertools.pairwise(order))
    return graph, order


def _worker_sets(order: np.ndarray, rng: np.random.Generator) -> dict[str, np.ndarray]:
    n = order.size
    group = max(1, -(-n // 3))
    return {"the end group": np.sort(order[:group]), "the middle worker": order[[n // 2]],
            "a random worker": np.array([int(rng.integers(n))])}


def flow_audit(cls: type, name: str, *, n: int = FLOW_WORKERS, horizon: int = FLOW_HORIZON, seed: int = 0
               ) -> list[Check]:
    """The differential checks of the module docstring for the rule class ``cls``: purity, the
    configuration axis and information flow, each a `checks.Check`; a failed one names the route (the
    field or attribute, the worker set, the worker, the iteration).

    Parameters
    ----------
    cls : type
        The rule's class itself (not a subclass: the audit is the measurement's class, name and batch).
    name : str
        The name the report uses.
    n : int, default FLOW_WORKERS
        Workers of the randomly labelled path.
    horizon : int, default FLOW_HORIZON
        Iterations the differential runs cover.
    seed : int, default 0
        The labelling, the perturbations and the runs' seeds.

    Returns
    -------
    list of Check

    Raises
    ------
    Exception
        Whatever the rule raises (the caller names where).
    """
    rng = np.random.default_rng([seed, 30])
    setups = []
    graph, order = _labelled_path(n, rng)
    exact_f = instances.communication_instance(n, T_c=4)
    setups.append(("the exact oracle", exact_f, None, graph, order, 1))
    graph2, order2 = _labelled_path(n, rng)
    sampled_f = instances.sampling_instance(n, T_c=4, p=0.5)
    setups.append(("the probabilistic zero-chain oracle", sampled_f, oracles.ZeroChainOracle(sampled_f),
                   graph2, order2, 2))
    failures: dict[str, Check] = {}
    passed_detail: dict[str, list[str]] = {key: [] for key in FLOW_KEYS}
    for kind, f, oracle, g, labels, batch in setups:
        W = instances.gossip_matrix(g, "metropolis")
        channel = communication_channel(cls.communication, g if cls.communication == "graph" else W, n)
        steps = [1.0 / f.smoothness, 0.5 / f.smoothness]
        seeds = [seed, seed + 1]

        def new_run(k_steps: Sequence[float] = steps, k_seeds: Sequence[int] = seeds,
                    f: Any = f, oracle: Any = oracle, channel: Any = channel, batch: int = batch) -> _Run:
            return _Run(cls, f, oracle, channel, k_steps, k_seeds, horizon, batch)

        try:
            reference = new_run()
            before = _snapshot(cls, reference.rule)
            trace = _Trace(reference, horizon)
            where = f"on a randomly labelled {n}-path with {kind}"
            if "purity" not in failures:
                failure = _purity(cls, name, reference, trace, new_run, before, horizon, where)
                if failure:
                    failures["purity"] = failure
                else:
                    passed_detail["purity"].append(f"{horizon} iterations {where}")
            if "configurations" not in failures:
                failure = _configurations(name, trace, new_run, steps, seeds, horizon, where)
                if failure:
                    failures["configurations"] = failure
                else:
                    passed_detail["configurations"].append(f"2 configurations x {horizon} iterations {where}")
            if "information_flow" not in failures:
                def impure(t0: int, t: int, trace: _Trace = trace, new_run: Callable[..., _Run] = new_run,
                           reference: _Run = reference, before: dict[str, Any] = before, where: str = where
                           ) -> Check | None:
                    return _unperturbed_replay(cls, name, reference, trace, new_run, before, t0, t, where)

                failure, windows = _information_flow(name, trace, new_run, g, labels, rng, horizon, where,
                                                     impure)
                if failure:
                    failures["information_flow"] = failure
                else:
                    passed_detail["information_flow"].append(f"{windows} perturbed runs {where}")
        except (Exception, SystemExit):
            if not failures:  # the caller names where it raised
                raise
            break  # a route is already named; a rule that raises later is outside the class anyway
    checks: list[Check] = []
    for key in FLOW_KEYS:
        if key in failures:
            checks.append(failures[key])
        else:
            checks.append(Check(key, True, "held: " + "; ".join(passed_detail[key])))
    return checks


def _purity(cls: type, name: str, reference: _Run, trace: _Trace, new_run: Callable[..., _Run],
            before: dict[str, Any], horizon: int, where: str) -> Check | None:
    """Replays on a fresh instance from deep copies of the state (at the start, a third and two thirds of
    the horizon, for a few iterations each) and the whole run again on the reference's own instance."""
    n = reference.ledger.n
    everyone = np.ones(n, dtype=bool)
    span = max(1, min(8, horizon))
    found: tuple[str, int, str, int | None] | None = None
    for t0 in sorted({0, horizon // 3, (2 * horizon) // 3}):
        replay = new_run()
        replay.restart_at(trace.states[t0], trace.rngs[t0])
        for t in range(t0, min(horizon, t0 + span)):
            replay.step(t)
            diff = _first_difference(trace.states[t + 1], replay.state, everyone)
            if diff is None and np.asarray(replay.rule.average(replay.state)).tobytes() != \
                    trace.outputs[t + 1].tobytes():
                diff = ("average(state)", None)
            if diff is not None:
                found = (f"replayed from a deep copy of the state after iteration {t0 - 1} on a fresh "
                         f"instance" if t0 else "rerun from the start on a fresh instance", t, *diff)
                break
        if found:
            break
    if found is None:  # twice on one instance: the reference's own rule, from its start again
        again = new_run()
        again.rule = reference.rule
        again.state = reference.rule.init(again.ledger.context)
        for t in range(min(horizon, 2 * span)):
            again.step(t)
            diff = _first_difference(trace.states[t + 1], again.state, everyone)
            if diff is not None:
                found = ("rerun from the start on the same instance", t, *diff)
                break
    if found is None:
        return None
    how, t, label, worker = found
    place = hidden_state(cls, reference.rule, before) or _NOT_LOCATED
    at = f"worker {worker}'s" if worker is not None else "the"
    return Check("purity", False,
                  f"{name}: the step is not a function of (state, ctx): {how}, {at} {label!r} differs after "
                  f"iteration {t} {where}; state kept outside the state: {place}")


def _unperturbed_replay(cls: type, name: str, reference: _Run, trace: _Trace, new_run: Callable[..., _Run],
                        before: dict[str, Any], t0: int, t_last: int, where: str) -> Check | None:
    """The window [t0, t_last] replayed without a perturbation on a fresh instance: the purity failure when
    it does not reproduce the reference."""
    everyone = np.ones(reference.ledger.n, dtype=bool)
    replay = new_run()
    replay.restart_at(trace.states[t0], trace.rngs[t0])
    for t in range(t0, t_last + 1):
        replay.step(t)
        diff = _first_difference(trace.states[t + 1], replay.state, everyone)
        if diff is not None:
            label, worker = diff
            at = f"worker {worker}'s" if worker is not None else "the"
            place = hidden_state(cls, reference.rule, before) or _NOT_LOCATED
            return Check("purity", False,
                          f"{name}: the step is not a function of (state, ctx): replayed from a deep copy of "
                          f"the state after iteration {t0 - 1} on a fresh instance, {at} {label!r} differs "
                          f"after iteration {t} {where}; state kept outside the state: {place}")
    return None


def _same_numbers(a: np.ndarray, b: np.ndarray) -> bool:
    """The same shape and the same numbers, bit for bit except the sign of a zero. A batch of k points may
    take the zero chain's sparse kernel where one point takes the dense one (`instances.zero_chain`,
    DENSE_ENTRIES), and the two put -0.0 and +0.0 in different places of a gradient; no iterate ever holds
    -0.0 (x - step with x = +0.0 is +0.0 for either zero), so nothing a run reports depends on it."""
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=True))


def _configurations(name: str, trace: _Trace, new_run: Callable[..., _Run], steps: Sequence[float],
                    seeds: Sequence[int], horizon: int, where: str) -> Check | None:
    """Each configuration j of the reference batch against its solo run: every array with the batch axis
    (axis 1) at j, and average(state)[j]."""
    k = len(steps)
    for j in range(k):
        solo = new_run(k_steps=[steps[j]], k_seeds=[seeds[j]])
        for t in range(horizon):
            solo.step(t)
            batch_state = trace.states[t + 1]
            solo_arrays = dict(state_arrays(solo.state))
            for label, array in state_arrays(batch_state):
                mine = solo_arrays.get(label)
                if mine is None or array.ndim < 2 or array.shape[1] != k or mine.shape[1:2] != (1,):
                    continue
                part = np.ascontiguousarray(array[:, j : j + 1])
                if not _same_numbers(part, mine):
                    return Check("configurations", False,
                                  f"{name}: configuration {j} of a batch of {k} differs from its solo run in "
                                  f"state field {label!r} after iteration {t} {where}: the configurations "
                                  "share information (pooled over axis 1, or another configuration's data)")
            mine_out = np.asarray(solo.rule.average(solo.state))
            if not _same_numbers(trace.outputs[t + 1][j : j + 1], mine_out):
                return Check("configurations", False,
                              f"{name}: configuration {j} of a batch of {k} differs from its solo run in "
                              f"average(state) after iteration {t} {where}")
    return None


def _perturb_rows(state: Any, rows: np.ndarray, rng: np.random.Generator) -> None:
    for _, array in state_arrays(state):
        if array.dtype == object or not array.flags.writeable or array.ndim == 0:
            continue
        if np.issubdtype(array.dtype, np.floating):
            array[rows] += _PERTURBATION * (1.0 + rng.standard_normal(array[rows].shape))
        elif np.issubdtype(array.dtype, np.integer):
            array[rows] += 1


def _information_flow(name: str, trace: _Trace, new_run: Callable[..., _Run], graph: nx.Graph,
                      labels: np.ndarray, rng: np.random.Generator, horizon: int, where: str,
                      impure: Callable[[int, int], Check | None]
                      ) -> tuple[Check | None, int]:
    """Per worker set S and per kind of perturbation (oracle answers, state rows): windows from t0 = 0, w,
    2w, ... (w = S's eccentricity - 1, so the farthest worker stays checkable), each run against the
    reference's bits. A difference is first replayed unperturbed (``impure(t0, t)``): when that differs
    too, the route is state kept outside the state, not the perturbation."""
    n = labels.size
    windows = 0
    for set_name, S in _worker_sets(labels, rng).items():
        distance = np.full(n, np.inf)
        for i, hops in nx.multi_source_dijkstra_path_length(graph, {int(s) for s in S}).items():
            distance[i] = hops
        w = max(1, int(distance.max()) - 1)
        for what in ("oracle answers", "state rows"):
            for t0 in range(0, horizon, w):
                run = new_run()
                run.restart_at(trace.states[t0], trace.rngs[t0])
                if what == "state rows":
                    _perturb_rows(run.state, S, rng)
                else:
                    shape = (S.size, run.ledger.k, run.ledger.d)
                    run.tap.delta = (S, _PERTURBATION * (1.0 + rng.standard_normal(shape)))
                windows += 1
                for t in range(t0, min(horizon, t0 + w)):
                    queries_before = len(run.tap.queries)
                    run.step(t)
                    rounds = run.ledger.counters.communication_rounds
                    checked = distance > rounds
                    mine = run.tap.queries[queries_before:]
                    theirs = trace.queries.get(t, [])
                    qdiff = _query_difference(theirs, [X for _, _, X in mine],
                                              [distance > r for _, r, _ in mine])
                    if qdiff is not None:
                        q, worker = qdiff
                        at = "the number of queries, from" if worker is None else \
                            f"worker {worker}'s ({int(distance[worker])} hops from S)"
                        return impure(t0, t) or Check("information_flow", False,
                                      f"{name}: with {set_name} S = {S.tolist()}'s {what} perturbed from "
                                      f"iteration {t0}, {at} query point {q} passed to ctx.sample in "
                                      f"iteration {t} changed {where}: the points a rule queries may depend "
                                      "only on the workers within the rounds used"), windows
                    diff = _first_difference(trace.states[t + 1], run.state, checked)
                    if diff is not None:
                        label, worker = diff
                        at = f"worker {worker}" if worker is not None else "a worker"
                        hops = "" if worker is None else f", {int(distance[worker])} hops from S,"
                        return impure(t0, t) or Check("information_flow", False,
                                      f"{name}: with {set_name} S = {S.tolist()}'s {what} perturbed from "
                                      f"iteration {t0}, {at}{hops} changed in state field {label!r} after "
                                      f"iteration {t}, when {rounds} communication round(s) had been used "
                                      f"{where}: information moved farther than the rounds allow"), windows
    return None, windows
