"""`StepRule`: the one abstraction of an algorithm on the engine, and `State`, the base of its typed state.

A rule is a small class. The engine (``algorithms.engine.execute``) owns the loop, the randomness, the
counters and the stopping test; the rule owns the recursion. Its life:

1. ``rule = Rule(problem, W, structural, iterations=T)``: once per batch of configurations that share the
   shape of an iteration. The base constructor checks W for the rule's ``communication`` kind (a symmetric
   gossip matrix, a column-stochastic push matrix, or a graph: `communication_channel`) and hands
   ``prepare(setup)`` a `Setup`: n, d, the iteration cap, W's lam, and only the global facts the class
   declares in ``knows`` (`KNOWLEDGE`). The rule keeps neither the problem nor W: what it may learn about
   them is the `Setup` and, during the run, its `algorithms.engine.Context`. ``self.structural_values``
   holds the structural hyper-parameters, defaults filled in.
2. ``rule.resolve(values) -> values``: once per configuration, the batchable hyper-parameters (defaults
   filled in) checked and completed; what it returns is recorded in ``Result.hyper``.
3. ``rule.init(ctx) -> state``: the start state, a `State` (dataclass) whose every ndarray is per worker,
   leading axis n (refused otherwise, `check_state`): (n, k, d) arrays, one slice per configuration, d the
   problem's dimension. It may read ``ctx`` but not query or communicate. Per-batch constants (from
   ``ctx.step_size``, ``ctx.hyper``) belong on the rule, set in ``init``, and must not change afterwards.
4. ``rule.step(state, ctx) -> state``: one iteration of the class A_B (docs/theory.md §1.5): at most
   ``ctx.batch`` queries per worker through ``ctx.sample`` and at most one communication round through
   ``ctx.gossip`` / ``ctx.gossip_two_tap`` / ``ctx.mix`` / ``ctx.exact_average`` (one round may carry several
   arrays). The engine counts both and raises `BudgetViolationError` beyond them. ``ctx.t`` is the iteration
   (from 0). A step may update the state's arrays in place; everything it remembers lives in the state;
   it must treat the k configurations independently (no mixing along axis 1).
5. ``rule.average(state) -> x_hat`` (k, d): the output the stopping test reads (default: the mean of
   ``state.x`` over the workers). ``rule.worker_arrays(state)``: the per-worker arrays the divergence guard
   checks, the local models ``state.x`` first (default ``[state.x]``; the models alone, ``state.x``, at
   most checkpoints). The zero-respecting audit (``decbounds verify``) reads every array of the state
   (`state_arrays`), not only these.

Registry data (class attributes, read by `algorithms.register`): ``name``, ``aliases``, ``catalog_entry``
(the ``bounds`` catalog entry of the predicted rate), ``style`` (a `PlotStyle`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import networkx as nx
import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from decbounds.algorithms.channel import (  # re-exported: the names of step_rule before the split
    COMMUNICATION_KINDS,
    Channel,
    check_n_by_n,
    check_schedule,
    column_stochastic,
    communication_channel,
    directed_matrix,
    doubly_stochastic_rounds,
    gossip_for,
    support_graph,
    symmetric_gossip,
)
from decbounds.algorithms.style import PlotStyle
from decbounds.bounds.validation import require_real
from decbounds.instances.gossip import GossipLike, GossipMatrix, as_csr
from decbounds.instances.heterogeneity import varsigma0_at_start
from decbounds.instances.protocol import LocalFunctions

if TYPE_CHECKING:
    from decbounds.algorithms.engine import Context

__all__ = [
    "COMMUNICATION_KINDS",
    "KNOWLEDGE",
    "SCHEDULE_ROUNDS_CHECKED",
    "Channel",
    "Setup",
    "State",
    "StepRule",
    "check_n_by_n",
    "check_schedule",
    "check_state",
    "column_stochastic",
    "communication_channel",
    "directed_matrix",
    "doubly_stochastic_rounds",
    "gossip_for",
    "problem_constants",
    "state_arrays",
    "state_as",
    "support_graph",
    "symmetric_gossip",
]

#: Rounds of a generated (non-periodic) gossip schedule whose lambda_min ``Setup.lambda_min`` reads (a
#: periodic schedule: its whole period).
SCHEDULE_ROUNDS_CHECKED = 16
#: The global facts a rule may declare it needs (``StepRule.knows``) beyond n, d, the cap and W's lam:
#: ``lambda_min`` (W's smallest eigenvalue: D^2's condition), ``problem_constants`` (Delta, L and varsigma0
#: at the start: DeTAG's Cor. 6 phase length), ``graph`` (the whole support graph: DeFacto's exact-averaging
#: factors), ``neighbour_weights`` (``ctx.neighbour_weights(i)``, the row of W worker i knows). A
#: declaration is reported by ``decbounds verify``; it widens what the rule knows, never what it may send.
KNOWLEDGE: tuple[str, ...] = ("lambda_min", "problem_constants", "graph", "neighbour_weights")


@dataclass(eq=False)
class State:
    """The base of every rule's state: ``x``, the local models (n, k, d). Subclasses add their arrays as
    dataclass fields (trackers, buffers, momentum ``v``: None when the momentum is 0).

    Parameters
    ----------
    x : numpy.ndarray, shape (n, k, d)
        The local models: worker axis first, one slice per configuration, d the problem's dimension.

    Examples
    --------
    >>> State(x=np.zeros((4, 2, 3))).x.shape
    (4, 2, 3)
    """

    x: np.ndarray


def problem_constants(problem: LocalFunctions) -> dict[str, float]:
    """Delta, L and varsigma0 (the heterogeneity at the start, ``instances.varsigma0_at_start``) of a problem
    that states Delta and smoothness; {} otherwise. What a rule declaring ``knows = ("problem_constants",)``
    receives in ``Setup.constants`` (DeTAG's Cor. 6 phase length).

    Parameters
    ----------
    problem : LocalFunctions
    """
    Delta = getattr(problem, "Delta", None)
    L = getattr(problem, "smoothness", None)
    if Delta is None or L is None:
        return {}
    return {"Delta": float(Delta), "L": float(L), "varsigma0": float(varsigma0_at_start(problem))}


@dataclass(frozen=True)
class Setup:
    """What ``StepRule.prepare`` may know about the run: sizes, W's lam, and the facts the rule declares in
    ``knows`` (`KNOWLEDGE`; None where not declared).

    Parameters
    ----------
    n, d : int
        Workers and dimension.
    iterations : int
        The run's iteration cap.
    lam : float or None
        W's second-largest eigenvalue magnitude ("gossip" rules; a schedule's effective lam).
    lambda_min : float or None
        W's smallest eigenvalue (declared ``"lambda_min"``).
    constants : mapping or None
        `problem_constants` (declared ``"problem_constants"``).
    graph : networkx.Graph or None
        A copy of the support graph (declared ``"graph"``; a schedule: the union of one period's rounds,
        or of its first ``window`` rounds).
    time_varying : bool
        W is a gossip schedule: ``ctx.gossip`` applies W_t in iteration t, lam is its effective lam and
        lambda_min the smallest over its period (or first `SCHEDULE_ROUNDS_CHECKED` rounds).
    period : int or None
        The schedule's period (None: static W, or a schedule generated without repetition).
    """

    n: int
    d: int
    iterations: int
    lam: float | None = None
    lambda_min: float | None = None
    constants: Mapping[str, float] | None = None
    graph: nx.Graph | None = None
    time_varying: bool = False
    period: int | None = None


def _smallest_eigenvalue(M: sp.csr_array | GossipMatrix) -> float:
    """lambda_min(W): a GossipMatrix's lambda_n (decomposed once, with the value), else by eigvalsh/eigsh."""
    if isinstance(M, GossipMatrix) and M.lambda_n is not None:
        return 1.0 if M.n == 1 else min(M.lambda_n, 1.0)
    M = as_csr(M)
    if M.shape[0] <= 2000:
        return float(np.linalg.eigvalsh(M.toarray())[0])
    return float(spla.eigsh(M, k=1, which="SA", return_eigenvectors=False)[0])


def _holdings(name: str, value: Any) -> list[tuple[str, Any]]:
    """(name, value) of an attribute and, inside a list, tuple or dict, of each item (one level down)."""
    if isinstance(value, (list, tuple)):
        return [(name, value)] + [(f"{name}[{i}]", item) for i, item in enumerate(value)]
    if isinstance(value, dict):
        return [(name, value)] + [(f"{name}[{key!r}]", item) for key, item in value.items()]
    return [(name, value)]


def state_arrays(state: object) -> list[tuple[str, np.ndarray]]:
    """Every ndarray a state holds, with its name: each attribute (dataclass fields and any other instance
    attribute) and the items of list, tuple or dict attributes.

    Parameters
    ----------
    state : State
        A rule's state.
    """
    found = []
    for name, value in _attributes(state).items():
        for label, item in _holdings(name, value):
            if isinstance(item, np.ndarray):
                found.append((label, item))
    return found


def _attributes(obj: Any) -> dict[str, Any]:
    """An object's instance attributes: its ``__dict__`` and its slots."""
    values = dict(getattr(obj, "__dict__", {}))
    for cls in type(obj).__mro__:
        for slot in getattr(cls, "__slots__", ()):
            if slot not in values and hasattr(obj, slot):
                values[slot] = getattr(obj, slot)
    return values


_StateT = TypeVar("_StateT", bound=State)


def state_as(state: State, kind: type[_StateT]) -> _StateT:
    """``state`` as the rule's own state class: what its ``init`` returned, which the engine hands back to
    ``worker_arrays`` (typed `State` there, as the base class declares it).

    Every built-in rule's ``step`` starts with it (its cost per iteration is not measurable,
    docs/benchmarks.md).

    Parameters
    ----------
    state : State
        The state the engine passes.
    kind : type
        The rule's state class (a `State` subclass).

    Raises
    ------
    TypeError
        If ``state`` is not a ``kind``.
    """
    if not isinstance(state, kind):
        raise TypeError(f"state must be a {kind.__name__} (what the rule's init returns); got "
                        f"{type(state).__name__}")
    return state


def check_state(state: object, n: int) -> None:
    """ValueError unless every ndarray the state holds is per worker: leading axis n (`state_arrays`).

    Parameters
    ----------
    state : State
        A rule's start state.
    n : int
        Workers.

    Raises
    ------
    ValueError
        Naming the first field whose array is not (n, ...), and its shape.
    """
    for name, array in state_arrays(state):
        if array.ndim == 0 or array.shape[0] != n:
            raise ValueError(f"state field {name!r} has shape {array.shape}: every array a rule's state "
                             f"holds must be per worker, leading axis n={n} (keep per-batch constants on the "
                             "rule, set in init)")


class StepRule:
    """One algorithm on the engine (module docstring: what each method receives and may do).

    Class attributes a subclass sets:
        name: registry name (lower case); aliases: other accepted names; catalog_entry: the ``bounds``
            catalog entry of the predicted rate (None: none); style: its `PlotStyle`.
        structural: hyper-parameters that change the shape of an iteration (one batch per value), with
            defaults. batchable: per-configuration hyper-parameters, with defaults; numeric ones reach the
            rule as (1, k, d) arrays in ``ctx.hyper``, others as a list of k values.
        communication: "gossip" (symmetric doubly stochastic W), "push" (column-stochastic W, applied by
            ``ctx.gossip``), "graph" (W is a graph or matrix on whose support ``ctx.operator`` builds the
            rule's own mixing matrices) or "exact" (all-reduce; W unused).
        directed_rounds: a "gossip" rule that is also correct for doubly stochastic rounds that are not
            symmetric (a schedule of kind "push" whose every W_t has rows and columns summing to 1, such as
            Ying et al.'s ``instances.one_peer_exponential(n, directed=True)``): D-PSGD, whose recursion
            needs W_t 1 = 1 and 1^T W_t = 1^T only. Default False.
        gossips: whether information moves on the graph only (the zero-respecting audit applies).
        knows: the global facts `prepare` receives beyond n, d, the cap and lam (`KNOWLEDGE`).
        worst_case_defaults: the computed worst case's defaults where they differ from the engine's (DeTAG:
            R = 2, since Cor. 6's R reads one problem's constants and a PEP is over a class); with
            `iterations_per_update`, all ``pep.worst_case`` reads of a rule besides its code.

    Class methods a subclass may override: `tuning_grid` (its communication hyper-parameters' grid, tuned
    by ``decbounds verify`` for the rule and the references alike) and `default_search` (what
    `algorithms.tune` searches for hyper-parameters the caller leaves unset).

    Parameters
    ----------
    problem : LocalFunctions
        The local functions (``n`` workers, dimension ``dim``); read here for the `Setup`, never kept.
    W : Gossip, numpy.ndarray, scipy.sparse matrix, networkx.Graph or Channel
        The communication value for the rule's ``communication`` kind (``instances.GossipLike``; None for
        "exact"): a `GossipMatrix`, a gossip schedule (W_t in iteration t, `check_schedule`), a matrix or
        graph (``instances.as_gossip``), or the `Channel` the engine already checked; never kept.
    structural : dict
        The structural hyper-parameters of this batch (defaults filled in from the class).
    iterations : int
        The run's iteration cap (rules whose schedule depends on it read ``self.iterations``).

    Attributes
    ----------
    n : int
        Workers.
    lam : float or None
        W's second-largest eigenvalue magnitude ("gossip" only).
    structural_values : dict
        The structural hyper-parameters, defaults filled in.

    Raises
    ------
    ValueError
        If ``communication`` is not one of `COMMUNICATION_KINDS`, ``knows`` names a fact outside
        `KNOWLEDGE`, W does not fit the kind (see `symmetric_gossip`, `column_stochastic`), or ``prepare``
        refuses a structural value.

    References
    ----------
    docs/theory.md §1.5 (the protocol class A_B: one iteration's budget); docs/extending.md (adding an
    algorithm); docs/verify.md (what the audit checks).

    Examples
    --------
    Rules are built by ``algorithms.run``; by hand:

    >>> from decbounds import instances
    >>> from decbounds.algorithms.rules import DPSGD
    >>> f = instances.heterogeneous_quadratic(4, 3, 1.0, seed=0)
    >>> W = instances.gossip_matrix(instances.topology("ring", 4), "metropolis")
    >>> rule = DPSGD(f, W, {}, iterations=10)
    >>> rule.structural_values, round(rule.lam, 4)
    ({'form': 'cta'}, 0.3333)
    >>> rule.resolve({"momentum": 0.9})
    {'momentum': 0.9}
    """

    name: ClassVar[str] = ""
    aliases: ClassVar[tuple[str, ...]] = ()
    catalog_entry: ClassVar[str | None] = None
    style: ClassVar[PlotStyle | None] = None
    structural: ClassVar[dict[str, Any]] = {}
    batchable: ClassVar[dict[str, Any]] = {}
    communication: ClassVar[str] = "gossip"
    directed_rounds: ClassVar[bool] = False
    gossips: ClassVar[bool] = True
    knows: ClassVar[tuple[str, ...]] = ()
    worst_case_defaults: ClassVar[dict[str, Any]] = {}

    @classmethod
    def iterations_per_update(cls, structural: Mapping[str, object]) -> int:
        """Engine iterations of one update of the method: the computed worst case's iteration k ends after
        k of them (1; DeTAG's phase R, GT-DSGD's 2).

        Parameters
        ----------
        structural : mapping of str to object
            The structural hyper-parameters, defaults filled in.
        """
        return 1

    #: the hyper-parameters `default_search` returns axes for (`algorithms.tune` searches them unless all
    #: are given)
    searched: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def tuning_grid(cls, *, n: int, lam: float, cap: int,
                    stochastic: bool = False) -> dict[str, list[object]]:
        """The grid of the rule's communication hyper-parameters (rounds per step, consensus step, ...) that
        a fair comparison tunes beside the step size, from what the rule may know: n, W's lam, the
        iteration cap and whether the oracle is stochastic. The first axis is searched one value at a time
        in the order given (each value capped at the best T_eps so far); the others as a product. Default:
        none.

        Parameters
        ----------
        n : int
            Workers.
        lam : float
            W's second-largest eigenvalue magnitude, in [0, 1).
        cap : int
            The iteration cap of the run.
        stochastic : bool, default False
            Whether the oracle is stochastic.
        """
        return {}

    @classmethod
    def default_search(cls, problem: LocalFunctions, W: GossipLike,
                       iterations: int) -> dict[str, list[object]]:
        """The axes `algorithms.tune` searches when the caller sets none of them (and fills the unset ones
        when it sets some). Default: none.

        Parameters
        ----------
        problem : LocalFunctions
            The local functions being tuned on.
        W : instances.GossipLike
            The gossip value (its lam).
        iterations : int
            The iteration cap.
        """
        return {}

    def __init__(self, problem: LocalFunctions, W: GossipLike | Channel | None,
                 structural: dict[str, object], *,
                 iterations: int) -> None:
        if self.communication not in COMMUNICATION_KINDS:
            raise ValueError(f"{self.name}: communication must be one of {COMMUNICATION_KINDS}; "
                             f"got {self.communication!r}")
        unknown = [fact for fact in self.knows if fact not in KNOWLEDGE]
        if unknown:
            raise ValueError(f"{self.name}: knows must name facts among {KNOWLEDGE}; got {unknown}")
        self.n = int(problem.n)
        channel = W if isinstance(W, Channel) else communication_channel(
            self.communication, W, self.n, directed_rounds=self.directed_rounds)
        if channel.kind != self.communication:
            raise ValueError(f"{self.name}: a {channel.kind!r} channel for a rule that communicates by "
                             f"{self.communication!r}")
        self.lam: float | None = channel.lam
        self.structural_values = {**type(self).structural, **structural}
        self.iterations = int(iterations)
        self.prepare(self._setup(problem, channel))

    def _setup(self, problem: LocalFunctions, channel: Channel) -> Setup:
        """The `Setup` of this rule: sizes and lam, plus what it declares in ``knows``."""
        lambda_min = constants = graph = None
        schedule = channel.schedule
        if schedule is not None and schedule.length is not None and self.iterations > schedule.length:
            raise ValueError(f"iterations must be <= {schedule.length}, the rounds the schedule "
                             f"{schedule.name} holds (periodic=False; one round per iteration); got "
                             f"iterations={self.iterations}")
        # the rounds read up front: a period, else the first SCHEDULE_ROUNDS_CHECKED (of a finite one's)
        checked = (schedule.period or min(SCHEDULE_ROUNDS_CHECKED, schedule.length or SCHEDULE_ROUNDS_CHECKED)
                   if schedule is not None else 0)
        if "lambda_min" in self.knows:
            if schedule is not None:
                lambda_min = min(_smallest_eigenvalue(schedule.matrix(t)) for t in range(checked))
            elif not isinstance(channel.gossip, GossipMatrix):
                raise ValueError(f"{self.name}: lambda_min needs a gossip matrix W")
            else:
                lambda_min = _smallest_eigenvalue(channel.gossip)
        if "problem_constants" in self.knows:
            constants = problem_constants(problem)
        if "graph" in self.knows and schedule is not None:
            graph = schedule.union_graph(0, schedule.period or min(schedule.window or checked, checked))
        elif "graph" in self.knows:
            if channel.support is None:
                raise ValueError(f"{self.name}: the graph needs a communication matrix or graph W")
            source = channel.graph if channel.graph is not None else channel.matrix
            graph = support_graph(source, self.n)
        return Setup(n=self.n, d=int(problem.dim), iterations=self.iterations, lam=channel.lam,
                     lambda_min=lambda_min, constants=constants, graph=graph,
                     time_varying=schedule is not None, period=None if schedule is None else schedule.period)

    # -- the interface --------------------------------------------------------------------------------------
    def prepare(self, setup: Setup) -> None:
        """Validate and precompute what depends on the structural hyper-parameters (default: nothing).

        Parameters
        ----------
        setup : Setup
            n, d, the cap, lam, and the facts the class declares in ``knows``.
        """

    def resolve(self, values: dict[str, object]) -> dict[str, object]:
        """One configuration's batchable values, checked, with defaults filled in (default: momentum and
        beta in [0, 1)).

        Parameters
        ----------
        values : dict
            The configuration's batchable hyper-parameters.

        Raises
        ------
        ValueError
            If a value is outside its range (here: momentum or beta not in [0, 1)).
        TypeError
            If a value is not a number.
        """
        for name in ("momentum", "beta"):
            if name in values:
                values[name] = require_real(name, values[name], allow_zero=True, maximum=1.0,
                                            maximum_inclusive=False)
        return values

    def init(self, ctx: Context) -> State:
        """The start state (see the module docstring).

        Parameters
        ----------
        ctx : Context
            The batch's context (``ctx.start_state()``, ``ctx.zeros()``, ``ctx.hyper``); no queries or
            communication here.
        """
        raise NotImplementedError

    def step(self, state: State, ctx: Context) -> State:
        """One iteration within the A_B budget (see the module docstring).

        Parameters
        ----------
        state : State
            The state after iteration ``ctx.t - 1``; may be updated in place.
        ctx : Context
            At most ``ctx.batch`` queries per worker (``ctx.sample``) and one communication round
            (``ctx.gossip``, ``ctx.gossip_two_tap``, ``ctx.mix`` or ``ctx.exact_average``).

        Raises
        ------
        BudgetViolationError
            (from the engine) If the step queries or communicates beyond the budget.
        """
        raise NotImplementedError

    def average(self, state: State) -> np.ndarray:
        """The output x_hat (k, d): the workers' mean of the local models.

        Parameters
        ----------
        state : State
        """
        x_hat: np.ndarray = np.add.reduce(state.x, axis=0) * (1.0 / self.n)
        return x_hat

    def worker_arrays(self, state: State) -> list[np.ndarray]:
        """The per-worker (n, ...) arrays the divergence guard checks, the local models first.

        A rule with trackers, replicas or buffers lists them (default ``[state.x]``); the zero-respecting
        audit reads every array of the state (`state_arrays`) whatever this lists.

        Parameters
        ----------
        state : State
        """
        return [state.x]

    # -- helpers for subclasses --------------------------------------------------------------------------
    @staticmethod
    def momentum_buffer(ctx: Context) -> np.ndarray | None:
        """A zero heavy-ball buffer (n, k, d), or None when every configuration's momentum is 0.

        Parameters
        ----------
        ctx : Context
            Reads ``ctx.hyper["momentum"]``.
        """
        mu = ctx.hyper.get("momentum")
        if mu is None or not np.any(np.asarray(mu)):
            return None
        return ctx.zeros()

    @staticmethod
    def heavy_ball(v: np.ndarray | None, direction: np.ndarray, ctx: Context) -> np.ndarray:
        """Heavy-ball (the paper ran every method with momentum 0.9, §9): v <- momentum v + direction,
        returned in place of the direction; the direction itself when there is no buffer.

        Parameters
        ----------
        v : numpy.ndarray or None
            The buffer of `momentum_buffer`, updated in place.
        direction : numpy.ndarray, shape (n, k, d)
            The rule's update direction (a stochastic gradient, a tracker).
        ctx : Context
            Reads ``ctx.hyper["momentum"]``, shape (1, k, d).

        References
        ----------
        docs/theory.md §9 (the paper's experiments) and §6.5 (Alg. 4, DeTAG's own momentum).
        """
        if v is None:
            return direction
        v *= ctx.hyper["momentum"]
        v += direction
        return v


def __getattr__(name: str) -> object:
    """``check_size``, the former name of `check_n_by_n` (deprecated: pep has a ``check_size`` of its own)."""
    if name == "check_size":
        import warnings

        warnings.warn("algorithms.step_rule.check_size is deprecated; use check_n_by_n", DeprecationWarning,
                      stacklevel=2)
        return check_n_by_n
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
