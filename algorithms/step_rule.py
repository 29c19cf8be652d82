"""`StepRule`: the one abstraction of an algorithm on the engine, and `State`, the base of its typed state.

The engine owns the loop, the randomness, the counters and the stopping test; the rule owns the recursion:
``Rule(problem, W, structural, iterations=T)`` once per batch (W checked for the rule's ``communication``,
``prepare(setup)`` given a `Setup`), ``resolve(values)`` per configuration, ``init(ctx)`` the start state
(every array (n, ...), no queries), ``step(state, ctx)`` one iteration of the class A_B (at most B queries
per worker, one round; docs/theory.md §1.5), ``average(state)`` the output x_hat. See docs/extending.md."""

from __future__ import annotations

import warnings
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

from decbounds.lazy_exports import deprecated_attributes

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
    """The base of every rule's state: ``x``, the local models (n, k, d); subclasses add their arrays as
    dataclass fields (momentum ``v``: None when the momentum is 0).

    Parameters
    ----------
    x : numpy.ndarray, shape (n, k, d)
    """

    x: np.ndarray


def problem_constants(problem: LocalFunctions) -> dict[str, float]:
    """Delta, L and varsigma0 at the start (``instances.varsigma0_at_start``) of a problem that states Delta
    and smoothness, else {}: ``Setup.constants`` of a rule declaring ``knows = ("problem_constants",)``.

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
    """What ``StepRule.prepare`` may know: sizes, W's lam, and the facts declared in ``knows`` (None
    otherwise).

    Parameters
    ----------
    n, d : int
    iterations : int
    lam : float or None
        W's lam ("gossip" rules; a schedule's effective lam).
    lambda_min : float or None
        Declared ``"lambda_min"`` (a schedule's: the smallest over its period).
    constants : mapping or None
        `problem_constants` (declared ``"problem_constants"``).
    graph : networkx.Graph or None
        A copy of the support graph (declared ``"graph"``; a schedule's: one period's union).
    time_varying : bool
        W is a gossip schedule (W_t in iteration t).
    period : int or None
        The schedule's period.
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
    """Every ndarray a state holds, with its name (attributes, and items of list, tuple or dict attributes).

    Parameters
    ----------
    state : State
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
    """``state`` as the rule's own state class (TypeError otherwise); every built-in ``step`` starts with it.

    Parameters
    ----------
    state : State
    kind : type
    """
    if not isinstance(state, kind):
        raise TypeError(f"state must be a {kind.__name__} (what the rule's init returns); got "
                        f"{type(state).__name__}")
    return state


def check_state(state: object, n: int) -> None:
    """ValueError (naming the field) unless every ndarray the state holds is (n, ...) (`state_arrays`).

    Parameters
    ----------
    state : State
    n : int
    """
    for name, array in state_arrays(state):
        if array.ndim == 0 or array.shape[0] != n:
            raise ValueError(f"state field {name!r} has shape {array.shape}: every array a rule's state "
                             f"holds must be per worker, leading axis n={n} (keep per-batch constants on the "
                             "rule, set in init)")


class StepRule:
    """One algorithm on the engine (module docstring; docs/extending.md).

    Class attributes: ``name``, ``aliases``, ``catalog_entry`` (the ``bounds`` rate, or None), ``style``;
    ``structural`` (hyper-parameters that shape an iteration, one batch per value) and ``batchable``
    (per configuration: numbers reach ``ctx.hyper`` as (1, k, d) arrays), with defaults; ``communication``
    ("gossip", "push", "graph" or "exact"); ``directed_rounds`` (a "gossip" rule correct for doubly stochastic
    non-symmetric rounds, such as D-PSGD); ``gossips`` (information moves on the graph only); ``knows``
    (`KNOWLEDGE`); ``worst_case_defaults`` (``pep.worst_case``'s defaults, DeTAG's R = 2).

    Parameters
    ----------
    problem : LocalFunctions
        Read for the `Setup`, never kept.
    W : Gossip, numpy.ndarray, scipy.sparse matrix, networkx.Graph or Channel
        For the rule's ``communication`` kind (None for "exact"), or the `Channel` already checked.
    structural : dict
    iterations : int
        The run's iteration cap.

    Attributes
    ----------
    n : int
    lam : float or None
    structural_values : dict
        The structural hyper-parameters, defaults filled in.

    Examples
    --------
    >>> from decbounds import instances
    >>> from decbounds.algorithms.rules import DPSGD
    >>> f = instances.heterogeneous_quadratic(4, 3, 1.0, seed=0)
    >>> W = instances.gossip_matrix(instances.topology("ring", 4), "metropolis")
    >>> rule = DPSGD(f, W, {}, iterations=10)
    >>> rule.structural_values, round(rule.lam, 4)
    ({'form': 'cta'}, 0.3333)
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
        """Engine iterations per update of the method (the worst case's iteration; DeTAG's R, GT-DSGD's 2).

        Parameters
        ----------
        structural : mapping of str to object
        """
        return 1

    #: the hyper-parameters `default_search` returns axes for (`algorithms.tune` searches them unless all
    #: are given)
    searched: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def tuning_grid(cls, *, n: int, lam: float, cap: int,
                    stochastic: bool = False) -> dict[str, list[object]]:
        """The grid of the rule's communication hyper-parameters a fair comparison tunes beside the step size
        (the first axis one value at a time, the others as a product). Default: none.

        Parameters
        ----------
        n : int
        lam : float
        cap : int
        stochastic : bool, default False
        """
        return {}

    @classmethod
    def default_search(cls, problem: LocalFunctions, W: GossipLike,
                       iterations: int) -> dict[str, list[object]]:
        """The axes `algorithms.tune` searches when the caller sets none of them. Default: none.

        Parameters
        ----------
        problem : LocalFunctions
        W : instances.GossipLike
        iterations : int
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
        """

    def __init_subclass__(cls, **kwargs: object) -> None:
        """A subclass that still overrides ``resolve``, the former name of `check_values`, keeps working
        with a DeprecationWarning (its ``resolve`` is what the engine calls)."""
        super().__init_subclass__(**kwargs)
        former = cls.__dict__.get("resolve")
        if former is not None and "check_values" not in cls.__dict__:
            warnings.warn(f"{cls.__name__}.resolve is deprecated; name it check_values", DeprecationWarning,
                          stacklevel=2)
            cls.check_values = former  # type: ignore[method-assign]

    def check_values(self, values: dict[str, object]) -> dict[str, object]:
        """One configuration's batchable values checked, defaults filled in (default: momentum, beta in [0,
        1)).

        Parameters
        ----------
        values : dict
        """
        for name in ("momentum", "beta"):
            if name in values:
                values[name] = require_real(name, values[name], allow_zero=True, maximum=1.0,
                                            maximum_inclusive=False)
        return values

    def init(self, ctx: Context) -> State:
        """The start state (no queries or communication here).

        Parameters
        ----------
        ctx : Context
        """
        raise NotImplementedError

    def step(self, state: State, ctx: Context) -> State:
        """One iteration within the A_B budget (`BudgetViolationError` beyond it); may update ``state`` in
        place.

        Parameters
        ----------
        state : State
        ctx : Context
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
        """The per-worker (n, ...) arrays the divergence guard checks, the local models first (default
        ``[state.x]``).

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
        """
        mu = ctx.hyper.get("momentum")
        if mu is None or not np.any(np.asarray(mu)):
            return None
        return ctx.zeros()

    @staticmethod
    def heavy_ball(v: np.ndarray | None, direction: np.ndarray, ctx: Context) -> np.ndarray:
        """Heavy-ball (§9): v <- momentum v + direction, returned in place of the direction (the direction
        itself without a buffer).

        Parameters
        ----------
        v : numpy.ndarray or None
        direction : numpy.ndarray, shape (n, k, d)
        ctx : Context
        """
        if v is None:
            return direction
        v *= ctx.hyper["momentum"]
        v += direction
        return v


#: ``check_size``, the former name of `check_n_by_n` (deprecated: pep has a ``check_size`` of its own).
__getattr__ = deprecated_attributes(__name__, globals(), {"check_size": (
    "check_n_by_n", "algorithms.step_rule.check_size is deprecated; use check_n_by_n")})
