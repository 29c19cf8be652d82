"""`StepRule`: the one abstraction of an algorithm on the engine, and `State`, the base of its typed state.

A rule is a small class. The engine (``algorithms.engine.execute``) owns the loop, the randomness, the
counters and the stopping test; the rule owns the recursion. Its life:

1. ``rule = Rule(problem, W, structural, iterations=T)``: once per batch of configurations that share the
   shape of an iteration. The base constructor checks W for the rule's ``communication`` kind (a symmetric
   gossip matrix, a column-stochastic push matrix, or a graph) and stores it as CSR in ``self.matrix`` with
   its ``self.lam``; then ``prepare(problem, W)`` validates the structural hyper-parameters
   (``self.structural_values`` holds them, defaults filled in) and precomputes what depends on them.
2. ``rule.resolve(values) -> values``: once per configuration, the batchable hyper-parameters (defaults
   filled in) checked and completed; what it returns is recorded in ``Result.hyper``.
3. ``rule.init(ctx) -> state``: the start state, a `State` (dataclass) holding (n, k, d) arrays: worker axis
   first, one slice per configuration, d the problem's dimension. It may read ``ctx`` but not query or
   communicate.
4. ``rule.step(state, ctx) -> state``: one iteration of the class A_B (docs/theory.md §1.5): at most
   ``ctx.batch`` queries per worker through ``ctx.sample`` and at most one communication round through
   ``ctx.gossip`` / ``ctx.gossip_two_tap`` / ``ctx.mix`` / ``ctx.exact_average`` (one round may carry several
   arrays). The engine counts both and raises `BudgetViolationError` beyond them. ``ctx.t`` is the iteration
   (from 0). A step may update the state's arrays in place and must not keep references to ``ctx`` across
   iterations; it must treat the k configurations independently (no mixing along axis 1).
5. ``rule.average(state) -> x_hat`` (k, d): the output the stopping test reads (default: the mean of
   ``state.x`` over the workers). ``rule.worker_arrays(state)``: every per-worker array that carries
   information, the local models ``state.x`` first (default ``[state.x]``): the divergence guard checks
   all of them (the models alone, ``state.x``, at most checkpoints) and the zero-respecting audit reads
   their progress.

Registry data (class attributes, read by `algorithms.register`): ``name``, ``aliases``, ``catalog_entry``
(the ``bounds`` catalog entry of the predicted rate), ``style`` (a `PlotStyle`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import networkx as nx
import numpy as np
import scipy.sparse as sp
from decbounds.algorithms.registry import PlotStyle
from decbounds.bounds.validation import require_real
from decbounds.instances.gossip import as_csr, check_gossip, column_stochastic_matrix
from decbounds.instances.protocol import LocalFunctions

if TYPE_CHECKING:
    from decbounds.algorithms.engine import Context

__all__ = [
    "COMMUNICATION_KINDS",
    "State",
    "StepRule",
    "check_size",
    "column_stochastic",
    "support_graph",
    "symmetric_gossip",
]

#: The kinds of communication a rule declares (``StepRule.communication``).
COMMUNICATION_KINDS: tuple[str, ...] = ("gossip", "push", "graph", "exact")


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


def check_size(M: sp.csr_array, n: int, name: str) -> None:
    """ValueError unless M is n x n (the problem has n workers).

    Parameters
    ----------
    M : scipy.sparse.csr_array
        The matrix.
    n : int
        The problem's number of workers.
    name : str
        The argument's name, for the message.

    Raises
    ------
    ValueError
        If M is not n x n.
    """
    if M.shape != (n, n):
        raise ValueError(f"{name} shape mismatch: the problem has n={n} workers but {name} is "
                         f"{M.shape[0]} x {M.shape[1]}")


def symmetric_gossip(W: Any, n: int) -> tuple[sp.csr_array, float]:
    """W checked as a gossip matrix of size n (``instances.check_gossip``: symmetric, doubly stochastic,
    connected; negative weights allowed); returns (W as CSR, lam).

    Parameters
    ----------
    W : array_like or sparse matrix
        The n x n gossip matrix.
    n : int
        The problem's number of workers.

    Returns
    -------
    tuple of (scipy.sparse.csr_array, float)
        W as CSR and lam, its second-largest eigenvalue magnitude (docs/theory.md §1.6).

    Raises
    ------
    ValueError
        If W is None, not n x n, not symmetric, not doubly stochastic or not connected.

    Examples
    --------
    >>> from decbounds import instances
    >>> W = instances.gossip_matrix(instances.topology("ring", 4), "metropolis")
    >>> M, lam = symmetric_gossip(W, 4)
    >>> M.shape, round(lam, 4)
    ((4, 4), 0.3333)
    """
    if W is None:
        raise ValueError("W is required: this algorithm gossips with a symmetric doubly stochastic W")
    M = as_csr(W, "W")
    check_size(M, n, "W")
    return M, float(check_gossip(M, nonnegative=False))


def column_stochastic(W: Any, n: int, atol: float = 1e-9) -> sp.csr_array:
    """The push-sum matrix P (rows receive, columns sum to 1, non-negative) of SGP; a networkx graph is
    turned into one by ``instances.column_stochastic_matrix`` (an undirected one as its symmetric digraph).

    Parameters
    ----------
    W : array_like, sparse matrix or networkx.Graph
        The n x n push matrix, or a graph to build it from.
    n : int
        The problem's number of workers.
    atol : float, default 1e-9
        Tolerance of the non-negativity and column-sum checks.

    Returns
    -------
    scipy.sparse.csr_array

    Raises
    ------
    ValueError
        If W is None, not n x n, has a negative entry or a column not summing to 1.

    Examples
    --------
    >>> P = column_stochastic(nx.cycle_graph(4), 4)
    >>> P.sum(axis=0)
    array([1., 1., 1., 1.])
    """
    if W is None:
        raise ValueError("W is required: SGP pushes with a column-stochastic matrix (or pass a DiGraph)")
    if isinstance(W, nx.Graph):
        W = column_stochastic_matrix(W if W.is_directed() else W.to_directed())
    P = as_csr(W, "W")
    check_size(P, n, "W")
    if P.nnz and P.data.min() < -atol:
        raise ValueError(f"W is not non-negative (push-sum weights): min entry {P.data.min():.3g}")
    deviation = float(np.max(np.abs(P.sum(axis=0) - 1.0)))
    if deviation > atol:
        raise ValueError(f"W is not column-stochastic: max |1^T W - 1^T| = {deviation:.3g} > {atol:g}")
    return P


def support_graph(W: Any, n: int) -> nx.Graph:
    """The undirected graph of W's off-diagonal support (or W itself when it is a networkx graph).

    Parameters
    ----------
    W : array_like, sparse matrix or networkx.Graph
        An n x n matrix or a graph on n nodes.
    n : int
        The problem's number of workers.

    Returns
    -------
    networkx.Graph

    Raises
    ------
    ValueError
        If W has the wrong size, or (a matrix) its support is not connected.

    Examples
    --------
    >>> support_graph(np.full((3, 3), 1 / 3), 3).number_of_edges()
    3
    """
    if isinstance(W, nx.Graph):
        if W.number_of_nodes() != n:
            raise ValueError(f"W shape mismatch: the problem has n={n} workers but the graph has "
                             f"{W.number_of_nodes()} nodes")
        return nx.Graph(W)
    M = as_csr(W, "W")
    check_size(M, n, "W")
    coo = M.tocoo()
    G = nx.Graph()
    G.add_nodes_from(range(n))
    off = (coo.row != coo.col) & (coo.data != 0)
    G.add_edges_from(zip(coo.row[off].tolist(), coo.col[off].tolist(), strict=True))
    if not nx.is_connected(G):
        raise ValueError("W is not connected: its support graph has several components")
    return G


class StepRule:
    """One algorithm on the engine (module docstring: what each method receives and may do).

    Class attributes a subclass sets:
        name: registry name (lower case); aliases: other accepted names; catalog_entry: the ``bounds``
            catalog entry of the predicted rate (None: none); style: its `PlotStyle`.
        structural: hyper-parameters that change the shape of an iteration (one batch per value), with
            defaults. batchable: per-configuration hyper-parameters, with defaults; numeric ones reach the
            rule as (1, k, d) arrays in ``ctx.hyper``, others as a list of k values.
        communication: "gossip" (symmetric doubly stochastic W), "push" (column-stochastic W), "graph" (W
            is a graph or matrix whose support the rule uses) or "exact" (all-reduce; W unused).
        gossips: whether information moves on the graph only (the zero-respecting audit applies).

    Parameters
    ----------
    problem : LocalFunctions
        The local functions (``n`` workers, dimension ``dim``).
    W : array_like, sparse matrix or networkx.Graph
        The communication matrix for the rule's ``communication`` kind (None for "exact").
    structural : dict
        The structural hyper-parameters of this batch (defaults filled in from the class).
    iterations : int
        The run's iteration cap (rules whose schedule depends on it read ``self.iterations``).

    Attributes
    ----------
    n : int
        Workers.
    matrix : scipy.sparse.csr_array or None
        W as CSR ("gossip" and "push").
    lam : float or None
        W's second-largest eigenvalue magnitude ("gossip" only).
    structural_values : dict
        The structural hyper-parameters, defaults filled in.

    Raises
    ------
    ValueError
        If ``communication`` is not one of `COMMUNICATION_KINDS`, W does not fit it (see `symmetric_gossip`,
        `column_stochastic`), or ``prepare`` refuses a structural value.

    References
    ----------
    docs/theory.md §1.5 (the protocol class A_B: one iteration's budget); docs/extending.md (adding an
    algorithm).

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
    batchable: ClassVar[dict[str, Any]] = {"momentum": 0.0}
    communication: ClassVar[str] = "gossip"
    gossips: ClassVar[bool] = True

    def __init__(self, problem: LocalFunctions, W: Any, structural: dict[str, Any], *,
                 iterations: int) -> None:
        if self.communication not in COMMUNICATION_KINDS:
            raise ValueError(f"{self.name}: communication must be one of {COMMUNICATION_KINDS}; "
                             f"got {self.communication!r}")
        self.n = int(problem.n)
        self.lam: float | None = None
        self.matrix: sp.csr_array | None = None
        if self.communication == "gossip":
            self.matrix, self.lam = symmetric_gossip(W, self.n)
        elif self.communication == "push":
            self.matrix = column_stochastic(W, self.n)
        self.structural_values = {**type(self).structural, **structural}
        self.iterations = int(iterations)
        self.prepare(problem, W)

    # -- the interface --------------------------------------------------------------------------------------
    def prepare(self, problem: LocalFunctions, W: Any) -> None:
        """Validate and precompute what depends on the structural hyper-parameters (default: nothing)."""

    def resolve(self, values: dict[str, Any]) -> dict[str, Any]:
        """One configuration's batchable values, checked, with defaults filled in (default: momentum and
        beta in [0, 1)).

        Parameters
        ----------
        values : dict
            The configuration's batchable hyper-parameters.

        Returns
        -------
        dict
            The values as recorded in ``Result.hyper``.

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

        Returns
        -------
        State
            Arrays of shape (n, k, d).
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

        Returns
        -------
        State

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

        Returns
        -------
        numpy.ndarray, shape (k, d)
        """
        return np.add.reduce(state.x, axis=0) * (1.0 / self.n)

    def worker_arrays(self, state: State) -> list[np.ndarray]:
        """Every per-worker (n, ...) array that carries information, the local models first.

        The divergence guard checks all of them and the zero-respecting audit reads their progress; a rule
        with trackers, replicas or buffers lists them (default ``[state.x]``).

        Parameters
        ----------
        state : State

        Returns
        -------
        list of numpy.ndarray
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

        Returns
        -------
        numpy.ndarray or None
        """
        mu = ctx.hyper.get("momentum")
        if mu is None or not np.any(mu):
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

        Returns
        -------
        numpy.ndarray
            ``v`` after the update, or ``direction`` when v is None.

        References
        ----------
        docs/theory.md §9 (the paper's experiments) and §6.5 (Alg. 4, DeTAG's own momentum).
        """
        if v is None:
            return direction
        v *= ctx.hyper["momentum"]
        v += direction
        return v
