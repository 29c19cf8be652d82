"""The class audit (``decbounds verify``, item 1): the A_B budget, the capability, every array of the state
and the output zero-respecting on the zero chain (docs/verify.md: what it guarantees, what it cannot see).

The rule runs on Cor. 2's path instance with exact gradients, as an audited subclass that records where it
is (constructor, prepare, init, step t) and, after init and every step:

- every ndarray of the state (``algorithms.step_rule.state_arrays``: every attribute, one level into lists,
  tuples and dicts) is per worker, leading axis n, with the problem's dimension d (or 1) as last axis;
- no attribute of the rule or of the state holds a problem, oracle, generator, graph, sparse matrix or an
  object of the engine (a graph or sparse matrices only for rules that declare ``knows = ("graph",)``);
- the rule's own attributes do not change after ``init`` (what it remembers lives in the state);
- the chain progress of each array and of ``average(state)`` (the T_eps of x-bar reads it; the workers' T_eps
  reads ``state.x``, one of the arrays), and of the points passed to ``ctx.sample`` (the problem records each
  query's progress during the steps).

Then the differential checks of `flow` run the rule's class itself (information flow, purity, the
configuration axis; not over a schedule).

The problem the engine queries counts its gradient evaluations; after the run the count is compared with the
engine's query total, as are the totals with the iteration count.
"""

from __future__ import annotations

from typing import Any

import networkx as nx
import numpy as np
import scipy.sparse as sp
from decbounds.algorithms.mixing import MixingOperator
from decbounds.algorithms.runtime import Runtime
from decbounds.algorithms.step_rule import Channel, state_arrays
from decbounds.paper_figures.fit import Record
from decbounds.verify.checks import CONDITIONS, Check, one_line
from decbounds.verify.flow import digest, flow_audit

from decbounds import algorithms, instances

__all__ = ["CONDITIONS", "Check", "audit", "forbidden_holding"]

_PLAIN = (np.ndarray, str, bytes, int, float, complex, bool, type(None))


class _CountingProblem:
    """The audit's problem: the instance, with its ``grad`` calls counted (the engine's exact oracle)."""

    def __init__(self, problem: Any) -> None:
        self._problem = problem
        self.calls = 0
        self.step: int | None = None  # the iteration whose step is running (None outside the steps)
        self.queried: dict[int, np.ndarray] = {}  # per iteration: the furthest coordinate queried per worker

    def grad(self, X: np.ndarray) -> np.ndarray:
        self.calls += 1
        if self.step is not None and X.ndim == 3:  # a query point: held to the zero-respecting rule too
            level = np.asarray(self._problem.progress(X)).reshape(X.shape[0], -1).max(axis=1)
            known = self.queried.get(self.step)
            self.queried[self.step] = level if known is None else np.maximum(known, level)
        return self._problem.grad(X)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._problem, name)


def forbidden_holding(value: object, *, knows_graph: bool = False) -> str | None:
    """What ``value`` is, in words, when a rule or its state must not hold it (None otherwise): a problem
    (an object with ``grad`` and ``full_grad``) or a bound method of one, an oracle (``sample``), a random
    generator, the engine's `Runtime` or `Channel`, a gossip operator, and -- unless the rule declares
    ``knows = ("graph",)`` -- a networkx graph, a sparse matrix or a gossip value (`instances.Gossip`: W or
    a schedule of W_t, which a rule would apply without the engine counting the round).

    Parameters
    ----------
    value : object
        An attribute of the rule or of its state.
    knows_graph : bool, default False
        Whether the rule declared the graph (DeFacto's factors).

    Returns
    -------
    str or None

    Examples
    --------
    >>> forbidden_holding(np.random.default_rng(0))
    'a random generator (Generator)'
    >>> forbidden_holding(np.zeros(3)) is None
    True
    >>> forbidden_holding(instances.gossip_matrix(nx.cycle_graph(4)))
    "a gossip value (GossipMatrix; declare knows = ('graph',) if the rule needs it)"
    """
    owner = getattr(value, "__self__", None)
    what = None if owner is None or isinstance(value, type) else \
        forbidden_holding(owner, knows_graph=knows_graph)
    if what is not None:
        return f"a bound method of {what}"
    kind = type(value).__name__
    if isinstance(value, (np.random.Generator, np.random.RandomState, np.random.BitGenerator)):
        return f"a random generator ({kind})"
    if isinstance(value, (Runtime, Channel, _CountingProblem)):
        return f"the engine's {kind}"
    if isinstance(value, MixingOperator):
        return f"a gossip operator ({kind}): mix through ctx.operator / ctx.mix"
    if isinstance(value, (np.ndarray, str, bytes, int, float, complex, bool, type(None))):
        return None
    if callable(getattr(value, "grad", None)) and callable(getattr(value, "full_grad", None)):
        return f"a problem object ({kind})"
    if callable(getattr(value, "sample", None)) and hasattr(value, "f"):
        return f"an oracle ({kind})"
    if not knows_graph and isinstance(value, instances.Gossip):  # W itself (or a schedule of W_t)
        return f"a gossip value ({kind}; declare knows = ('graph',) if the rule needs it)"
    if not knows_graph and isinstance(value, nx.Graph):
        return f"a graph ({kind}; declare knows = ('graph',) if the rule needs it)"
    if not knows_graph and sp.issparse(value):
        return f"a sparse matrix ({kind}; declare knows = ('graph',) if the rule needs it)"
    return None


def _walk(name: str, value: Any, depth: int = 0) -> list[tuple[str, Any]]:
    """(name, value) of an attribute and of what it holds: list, tuple and dict items, and the instance
    attributes of plain objects, to depth 2."""
    found = [(name, value)]
    if depth >= 2:
        return found
    if isinstance(value, (list, tuple)):
        items = [(f"{name}[{i}]", item) for i, item in enumerate(value)]
    elif isinstance(value, dict):
        items = [(f"{name}[{key!r}]", item) for key, item in value.items()]
    elif callable(value) or isinstance(value, _PLAIN):
        items = []
    elif hasattr(value, "__dict__") and not isinstance(value, type):
        items = [(f"{name}.{key}", item) for key, item in vars(value).items()]
    else:
        items = []
    for label, item in items:
        found += _walk(label, item, depth + 1)
    return found


def _attributes(obj: Any) -> dict[str, Any]:
    values = dict(getattr(obj, "__dict__", {}))
    for cls in type(obj).__mro__:
        for slot in getattr(cls, "__slots__", ()):
            if slot not in values and hasattr(obj, slot):
                values[slot] = getattr(obj, slot)
    return values


def _holdings(obj: Any, prefix: str, knows_graph: bool) -> str | None:
    """The first attribute of ``obj`` (walked by `_walk`) that holds a `forbidden_holding`, in words."""
    for name, value in _attributes(obj).items():
        for label, item in _walk(name, value):
            what = forbidden_holding(item, knows_graph=knows_graph)
            if what is not None:
                return f"{prefix}{label} holds {what}"
    return None


class _Watch:
    """What the audit's callback and the audited subclass record while the rule runs."""

    def __init__(self, name: str, n: int, d: int, knows_graph: bool, progress_of: Any) -> None:
        self.name, self.n, self.d, self.knows_graph = name, n, d, knows_graph
        self.progress_of = progress_of
        self.where = "the constructor"
        self.t: int | None = None
        self.rule: Any = None
        self.digest: dict[str, Any] | None = None
        self.fields: dict[str, list[np.ndarray]] = {}  # per array name: its progress per worker, per record
        self.output: list[int] = []
        self.records = 0
        self.failures: list[Check] = []
        self.uncounted: list[str] = []
        self.first_calls: int | None = None  # the problem's gradient count when the first step began

    def fail(self, key: str, detail: str) -> None:
        if not any(f["key"] == key for f in self.failures):
            self.failures.append(Check(key, False, f"{self.name}: {detail}"))

    def after(self, t: int, state: Any) -> None:
        """The callback after init (t = 0) and after each step (t = iterations done)."""
        when = "after init" if t == 0 else f"after step {t - 1}"
        if t == 0:
            holding = _holdings(self.rule, "rule attribute ", self.knows_graph) or \
                _holdings(state, "state field ", self.knows_graph)
            if holding:
                self.fail("holdings", holding)
            self.digest = {k: digest(v) for k, v in _attributes(self.rule).items()}
        else:
            now = {k: digest(v) for k, v in _attributes(self.rule).items()}
            assert self.digest is not None
            before = self.digest
            changed = sorted(k for k in set(now) | set(before) if now.get(k, ()) != before.get(k, ()))
            if changed:
                self.fail("constant", f"rule attribute {changed[0]!r} changed in step at iteration {t - 1}")
                self.digest = now
        levels = {}
        for label, array in state_arrays(state):
            if array.ndim == 0 or array.shape[0] != self.n:
                self.fail("per_worker", f"state field {label!r} has shape {array.shape} {when}: every array "
                                        f"a rule's state holds must be per worker, leading axis n={self.n}")
                continue
            if array.ndim >= 2 and array.shape[-1] not in (self.d, 1):
                self.fail("per_worker", f"state field {label!r} has shape {array.shape} {when}: its last "
                                        f"axis must be the problem's dimension d={self.d} (or 1), to be "
                                        "audited")
                continue
            if array.ndim < 2 or array.shape[-1] != self.d or array.dtype == object:
                continue
            with np.errstate(invalid="ignore"):
                level = np.asarray(self.progress_of(array)).reshape(self.n, -1).max(axis=1)
            levels[label] = level
        for label in set(levels) | set(self.fields):
            history = self.fields.setdefault(label, [np.zeros(self.n, dtype=np.int64)] * self.records)
            history.append(levels.get(label, np.zeros(self.n, dtype=np.int64)))
        self.records += 1
        x_hat = np.asarray(self.rule.average(state), dtype=float)
        self.output.append(int(np.max(self.progress_of(x_hat), initial=0)))


def audit(name: str, *, n: int = 9, iterations: int = 1200, seed: int = 0,
          schedule: instances.GossipSchedule | None = None) -> Record:
    """The class audit of algorithm ``name`` on Cor. 2's path instance (module docstring), or over a gossip
    schedule.

    Parameters
    ----------
    name : str
        A registered algorithm.
    n : int, default 9
        Workers of the path.
    iterations : int, default 1200
        The cap of the run.
    seed : int, default 0
        Its seed.
    schedule : instances.GossipSchedule, optional
        Audit over a time-varying network instead: the rule gossips with W_t in iteration t, the zero chain's
        end groups sit on the schedule's labels (``instances.scheduled_communication_instance``), and the
        zero-respecting check follows the edges of W_t (``schedule.support(t)``) in iteration t. ``n`` is
        then the schedule's.

    Returns
    -------
    dict
        ``{"passed", "outside_class", "checks": [{"condition", "key", "passed", "detail"}], "rule",
        "knows", ...}``; never raises for a misbehaving rule (a failed check names the field, attribute or
        iteration).
    """
    if schedule is None:
        instance = instances.communication_instance(n, T_c=4)
        W: Any = instances.gossip_matrix(instance.graph(), "metropolis")
        where, edges_of = f"communication_instance(n={n}, T_c=4), Metropolis path", None
    else:
        instance = instances.scheduled_communication_instance(schedule, T_c=4)
        W, n = schedule, int(schedule.n)
        where = f"scheduled_communication_instance(n={n}, T_c=4), a gossip schedule"
        edges_of = schedule.support
    problem = _CountingProblem(instance)
    cls = algorithms.rule_class(name)
    outside = not cls.gossips or cls.communication == "exact"
    watch = _Watch(name, n, int(instance.dim), "graph" in cls.knows, instance.progress)
    step_size = 1.0 / instance.smoothness
    out: dict[str, Any] = {"rule": name, "instance": where,
                           "step_size": step_size, "iterations": iterations, "seed": seed,
                           "outside_class": outside, "knows": list(cls.knows),
                           "communication": cls.communication}

    class Audited(cls):  # type: ignore[misc, valid-type]
        """The rule under audit: where it is, and its gradient evaluations per step."""

        aliases = ()

        def prepare(self, setup: Any) -> None:
            watch.where = "prepare"
            super().prepare(setup)

        def init(self, ctx: Any) -> Any:
            watch.where, watch.rule = "init", self
            return super().init(ctx)

        def step(self, state: Any, ctx: Any) -> Any:
            watch.where, watch.t = "step", ctx.t
            before = problem.calls
            if watch.first_calls is None:
                watch.first_calls = before
            problem.step = ctx.t
            try:
                state = super().step(state, ctx)
            finally:
                problem.step = None
            if problem.calls - before > ctx.batch and not watch.uncounted:
                watch.uncounted.append(f"{problem.calls - before} gradient evaluations in step "
                                       f"{ctx.t}, B = {ctx.batch} queries allowed")
            return state

    Audited.name = f"{cls.name}-under-audit"
    Audited.__name__ = Audited.__qualname__ = cls.__name__
    Audited.__module__ = cls.__module__
    checks: list[Check] = []
    algorithms.register(Audited)
    try:
        result = algorithms.run(Audited.name, problem, W, step_size=step_size, iterations=iterations,
                                seed=seed, tol=instance.epsilon, stop="both",
                                callback=lambda t, state, ctx: watch.after(t, state))
    except (Exception, SystemExit) as exc:  # the user's rule: a verdict, not a traceback or an exit
        checks.append(_failure(name, exc, watch))
        return {**out, "passed": False, "checks": [*checks, *watch.failures]}
    finally:
        algorithms.unregister(Audited.name)
    queries, rounds = result.counters["gradient_queries"], result.counters["communication_rounds"]
    checks.append(Check("runs", True, f"{result.iterations} iterations"))
    checks.append(Check("capability", True, f"communication {cls.communication!r}, declared knowledge "
                                             f"{list(cls.knows) or 'none'}"))
    # a compressed round is a round like any other (ctx.gossip(compressor=)); its bits are what it saves
    bits = result.counters["bits"]
    checks.append(Check("budget", True, f"{queries} queries and {rounds} rounds per worker in "
                                         f"{result.iterations} iterations, {bits} bits sent per worker"))
    checks += watch.failures
    # the gradient evaluations since the first step (those of the rule's setup, e.g. DeTAG's varsigma0, are
    # the engine's, before the run)
    in_steps = 0 if watch.first_calls is None else problem.calls - watch.first_calls
    totals_ok = queries <= result.iterations and rounds <= result.iterations and in_steps == queries \
        and not watch.uncounted
    detail = (f"{queries} queries (at most {result.iterations}) and {rounds} rounds (at most "
              f"{result.iterations}) per worker in {result.iterations} iterations; the problem's gradient "
              f"was evaluated {in_steps} times in the steps, {queries} counted")
    if watch.uncounted:
        detail = f"uncounted gradient evaluations: {watch.uncounted[0]}; " + detail
    checks.append(Check("totals", totals_ok, f"{name}: {detail}" if not totals_ok else detail))
    checks.append(Check("finite", not result.diverged, f"{name}: {result.message}" if result.diverged
                         else "yes"))
    if outside:
        checks.append(Check("zero_respecting", True,
                             "not applicable: the rule declares communication that is not gossip on the "
                             "graph (gossips=False or exact averaging), so it is outside the gossip class "
                             "and the gossip lower bounds are a reference only"))
    else:
        holders = np.zeros(n, dtype=bool)
        for group in instance.groups:
            holders[np.asarray(group)] = True
        static = instance.graph() if edges_of is None else None
        checks.append(_zero_respecting(name, watch, edges_of or (lambda t: static), holders, problem.queried))
        if schedule is None:
            checks += _flow_checks(cls, name, seed)
    keys = [c.key for c in checks]
    checks = [c for i, c in enumerate(checks) if not c.passed or c.key not in keys[:i]]
    out.update(passed=all(check.passed for check in checks), checks=checks, status=result.status,
               t_eps=result.t_eps)
    return out


def _flow_checks(cls: type, name: str, seed: int) -> list[Check]:
    """`flow.flow_audit` of the class itself; a rule that raises or exits there fails, named."""
    try:
        return flow_audit(cls, name, seed=seed)
    except (Exception, SystemExit) as exc:
        text = one_line(exc)
        if isinstance(exc, AttributeError) and type(getattr(exc, "obj", None)).__name__ == "_Tap":
            return [Check("capability", False, f"{name} reached past its context to the engine's problem or "
                                                f"oracle (introspection) and asked it for {exc.name!r}")]
        if isinstance(exc, SystemExit):
            return [Check("runs", False, f"{name} called sys.exit({exc.code!r}) in the differential audit "
                                          "(a fresh instance of the class on a randomly labelled path)")]
        return [Check("information_flow", False,
                       f"{name} raised {type(exc).__name__} in the differential audit (a fresh instance of "
                       f"the class, the measurement's oracles and batch, a randomly labelled path): {text}")]


def _failure(name: str, exc: BaseException, watch: _Watch) -> Check:
    """The failed check of a run that raised: the capability, the budget, the per-worker state, or the rule
    raising somewhere (named)."""
    where = watch.where if watch.where != "step" else f"step at iteration {watch.t}"
    text = one_line(exc)
    if isinstance(exc, SystemExit):
        return Check("runs", False, f"{name} called sys.exit({exc.code!r}) in {where}: a rule may not end "
                                     "the process")
    if isinstance(exc, algorithms.CapabilityError):
        return Check("capability", False, f"{name}: {text}")
    if isinstance(exc, AttributeError) and isinstance(getattr(exc, "obj", None), algorithms.Context):
        return Check("capability", False, f"{name} asked its context for {exc.name!r} in {where}: the "
                                           "context is a capability (docs/verify.md), it has no such "
                                           "attribute")
    if isinstance(exc, AttributeError) and str(exc).startswith("the context is read-only"):
        return Check("capability", False, f"{name} in {where}: {text}")
    if isinstance(exc, algorithms.BudgetViolationError):
        return Check("budget", False, f"{name}: {text}")
    if isinstance(exc, ValueError) and text.startswith("state field "):
        return Check("per_worker", False, f"{name}: {text}")
    return Check("runs", False, f"{name} raised {type(exc).__name__} in {where}: {text}")


def _zero_respecting(name: str, watch: _Watch, edges_of: Any, holders: np.ndarray,
                     queried: dict[int, np.ndarray]) -> Check:
    """First (iteration, worker) whose progress in some array runs ahead of what it may know: the furthest
    chain coordinate held by any array of its closed neighbourhood one iteration earlier, plus one only where
    that neighbourhood holds a worker whose oracle can reveal one (``holders``: the end groups I0, I1; every
    other worker's local function is 0, so its oracle returns 0; docs/theory.md §2, condition 2). The
    neighbour's reveal is allowed, not only the worker's own: an adapt-then-combine round (D^2, Exact
    Diffusion) relays a neighbour's fresh gradient in the same iteration, which still moves information one
    hop per iteration. ``edges_of(t)`` is the graph whose edges iteration t may cross (the static graph, or
    W_t's support over a schedule). Then the output: ``average(state)`` may hold no coordinate beyond every
    worker's. The points passed to ``ctx.sample`` in iteration t are held to the same bound as the state
    after it (``queried``: per iteration, the furthest coordinate each worker queried at)."""
    key = "zero_respecting"
    if watch.records < 2 or not watch.fields:
        return Check(key, False, f"{name}: no progress was recorded (no array of the state has the "
                                  "problem's dimension as last axis)")
    fields = {label: np.stack(history) for label, history in watch.fields.items()}  # (records, n) each
    progress = np.maximum.reduce(list(fields.values()))
    n = progress.shape[1]
    # row t + 1 of progress is the state after iteration t, which crossed the edges of edges_of(t)
    reach = np.zeros_like(progress[:-1])
    reveals = np.zeros_like(progress[:-1])
    graphs: dict[int, tuple[Any, list[list[int]]]] = {}  # id -> (graph kept alive, closed neighbourhoods)
    for t in range(len(progress) - 1):
        graph = edges_of(t)
        if id(graph) not in graphs:  # a static graph's neighbourhoods once
            graphs[id(graph)] = (graph, [[i, *graph.neighbors(i)] for i in range(n)])
        for i, closed in enumerate(graphs[id(graph)][1]):
            reach[t, i] = progress[t, closed].max()
            reveals[t, i] = int(holders[closed].any())
    for t in sorted(queried):
        if t >= len(reach):
            continue
        over = np.flatnonzero(queried[t] > reach[t] + reveals[t])
        if over.size:
            i = int(over[0])
            return Check(key, False,
                          f"{name}: in iteration {t} worker {i} passed ctx.sample a point holding chain "
                          f"coordinate {int(queried[t][i])}, but its closed neighbourhood held at most "
                          f"{int(reach[t, i])} (in any array) before the iteration: a query point off the "
                          "span the zero-respecting rule allows (a point perturbed off the iterates)")
    ahead = progress[1:] > reach + reveals
    if ahead.any():
        t, i = (int(v) for v in np.argwhere(ahead)[0])
        field = next(label for label, level in fields.items()
                     if level[t + 1, i] > reach[t, i] + reveals[t, i])
        return Check(key, False,
                      f"{name}: after iteration {t + 1} worker {i} holds chain coordinate "
                      f"{int(fields[field][t + 1, i])} in state field {field!r}, but its closed "
                      f"neighbourhood held at most {int(reach[t, i])} (in any array) after iteration {t}"
                      + ("" if reveals[t, i] else " and no oracle there reveals anything (f_i = 0 on it and "
                                                  "its neighbours)")
                      + " (information moved more than one hop per iteration)")
    top_workers = progress.max(axis=1)
    output = np.asarray(watch.output[: len(top_workers)])
    beyond = np.flatnonzero(output > top_workers[: len(output)])
    if beyond.size:
        t = int(beyond[0])
        return Check(key, False,
                      f"{name}: average(state) after iteration {t} holds chain coordinate {int(output[t])}, "
                      f"beyond every array of every worker (at most {int(top_workers[t])}): the output reads "
                      "something that is not the workers' state")
    top = int(progress.max())
    detail = (f"held over {len(progress) - 1} iterations in every array of the state "
              f"({', '.join(sorted(fields))}) and in average(state); the chain progressed to coordinate "
              f"{top}")
    if top < 2:
        detail += " (too little progress for the check to bite)"
    return Check(key, True, detail)
