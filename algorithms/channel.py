"""W checked for a rule's communication kind: `communication_channel` gives the `Channel` (the gossip value
the engine executes, lam, who may talk) of a symmetric, push, graph or exact-averaging rule
(docs/architecture.md, "Communication")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import networkx as nx
import numpy as np
import scipy.sparse as sp
from decbounds.instances.gossip import Gossip, GossipLike, GossipMatrix, as_csr, as_gossip
from decbounds.instances.matrices import DEFAULT_ATOL, MatrixLike
from decbounds.instances.schedules import GossipSchedule, constant_schedule

__all__ = [
    "COMMUNICATION_KINDS",
    "Channel",
    "check_n_by_n",
    "check_schedule",
    "column_stochastic",
    "communication_channel",
    "directed_matrix",
    "doubly_stochastic_rounds",
    "gossip_for",
    "support_graph",
    "symmetric_gossip",
]

#: The kinds of communication a rule declares (``StepRule.communication``).
COMMUNICATION_KINDS: tuple[str, ...] = ("gossip", "push", "graph", "exact")


def check_n_by_n(M: sp.csr_array, n: int, name: str) -> None:
    """ValueError unless M is n x n (the problem has n workers).

    Parameters
    ----------
    M : scipy.sparse.csr_array
    n : int
    name : str
        The argument's name, for the message.
    """
    if M.shape != (n, n):
        raise ValueError(f"{name} shape mismatch: the problem has n={n} workers but {name} is "
                         f"{M.shape[0]} x {M.shape[1]}")


def symmetric_gossip(W: GossipLike | None, n: int) -> tuple[sp.csr_array, float]:
    """(W as CSR, lam) for W a symmetric, doubly stochastic, connected n x n gossip matrix
    (``instances.as_gossip``; ValueError otherwise).

    Parameters
    ----------
    W : GossipMatrix, array_like or sparse matrix
    n : int
    """
    gossip = gossip_for("gossip", W, n)
    assert gossip.lam is not None
    return gossip.matrix, gossip.lam


def column_stochastic(W: GossipLike | None, n: int, atol: float = 1e-9) -> sp.csr_array:
    """SGP's push-sum matrix P (rows receive, columns sum to 1, non-negative), a graph turned into one by
    ``instances.column_stochastic_matrix`` (ValueError for a bad W).

    Parameters
    ----------
    W : GossipMatrix, array_like, sparse matrix or networkx.Graph
    n : int
    atol : float, default 1e-9
    """
    return gossip_for("push", W, n, atol=atol).matrix


def support_graph(W: GossipLike | None, n: int) -> nx.Graph:
    """The undirected graph of W's off-diagonal support (W itself for a graph); ValueError for a wrong size or
    a disconnected support.

    Parameters
    ----------
    W : GossipMatrix, numpy.ndarray, scipy.sparse matrix or networkx.Graph
    n : int
    """
    if isinstance(W, nx.Graph):
        if W.number_of_nodes() != n:
            raise ValueError(f"W shape mismatch: the problem has n={n} workers but the graph has "
                             f"{W.number_of_nodes()} nodes")
        return nx.Graph(W)
    if isinstance(W, GossipSchedule):
        raise TypeError(f"W must be a fixed matrix or graph; the schedule {W.name}'s support changes every "
                        "round (GossipSchedule.support(t))")
    M = as_csr(cast("MatrixLike", W), "W")  # as_csr names what is no matrix (None included)
    check_n_by_n(M, n, "W")
    coo = M.tocoo()
    G = nx.Graph()
    G.add_nodes_from(range(n))
    off = (coo.row != coo.col) & (coo.data != 0)
    G.add_edges_from(zip(coo.row[off].tolist(), coo.col[off].tolist(), strict=True))
    if not nx.is_connected(G):
        raise ValueError("W is not connected: its support graph has several components")
    return G


@dataclass(frozen=True, eq=False)
class Channel:
    """W checked for one communication kind: the `Gossip` value the engine (never the rule) executes.

    Parameters
    ----------
    kind : str
        One of `COMMUNICATION_KINDS`.
    gossip : Gossip or None
        W, the push matrix or a schedule; None for "exact" and a "graph" rule on a fixed graph.
    lam : float or None
        W's lam ("gossip"; a schedule's effective lam).
    support : scipy.sparse.csr_array or None
        Who may talk to whom: the closed neighbourhoods' pattern (None for "exact" and a schedule).
    graph : networkx.Graph or None
        The support graph ("graph", fixed W).

    Attributes
    ----------
    matrix : scipy.sparse.csr_array or None
        A static W's CSR matrix.
    schedule : instances.GossipSchedule or None
    """

    kind: str
    gossip: Gossip | None
    lam: float | None
    support: sp.csr_array | None
    graph: nx.Graph | None = None

    @property
    def matrix(self) -> sp.csr_array | None:
        """The static W as CSR (None for a schedule or no gossip)."""
        return self.gossip.matrix if isinstance(self.gossip, GossipMatrix) else None

    @property
    def schedule(self) -> GossipSchedule | None:
        """The time-varying W (None for a static one)."""
        return self.gossip if isinstance(self.gossip, GossipSchedule) else None


def _closed_support(M: sp.csr_array) -> sp.csr_array:
    """The 0/1 pattern of M's nonzero entries with the diagonal added (each worker's closed neighbourhood)."""
    pattern = (abs(M) > 0).astype(float) + sp.eye_array(M.shape[0], format="csr")
    return sp.csr_array((pattern > 0).astype(float))


def check_schedule(schedule: GossipSchedule, n: int, kind: str, *, directed_rounds: bool = False) -> float:
    """A gossip schedule checked for a communication kind; its effective lam (``GossipSchedule.lam``) < 1.
    "gossip" needs kind "symmetric" (or, with ``directed_rounds``, "push" rounds doubly stochastic), "push"
    non-negative rounds, "graph" any (ValueError naming the rules that take directed rounds).

    Parameters
    ----------
    schedule : instances.GossipSchedule
    n : int
    kind : str
    directed_rounds : bool, default False
    """
    if schedule.n != n:
        raise ValueError(f"W shape mismatch: the problem has n={n} workers but the schedule {schedule.name} "
                         f"has n={schedule.n}")
    if kind == "gossip" and schedule.kind != "symmetric" and not directed_rounds:
        raise ValueError(f"this rule needs symmetric doubly stochastic rounds; the schedule {schedule.name} "
                         f"is of kind {schedule.kind!r} (directed rounds). {_directed_round_rules()}")
    if kind == "push" and not schedule.nonnegative and schedule.kind == "symmetric":
        raise ValueError(f"push-sum needs non-negative rounds; the schedule {schedule.name} allows negative "
                         "entries")
    lam = float(schedule.lam)
    if not lam < 1.0 - 1e-12:
        raise ValueError(f"the schedule {schedule.name} does not connect the workers: its effective lam "
                         f"(GossipSchedule.effective_lam) is {lam:.12g}, not < 1")
    return lam


def _directed_round_rules() -> str:
    """Which registered rules take a schedule of directed rounds, and why: the sentence of the refusal."""
    from decbounds.algorithms.registry import entries  # the registry imports the rules, which import this

    rules = [e.rule for e in entries()]
    doubly = [r.name for r in rules if r.communication == "gossip" and r.directed_rounds]
    push = [r.name for r in rules if r.communication == "push"]
    graph = [r.name for r in rules if r.communication == "graph"]
    return (f"Rules that take directed rounds: {', '.join(doubly)} (rounds doubly stochastic: W_t 1 = 1 "
            f"keeps consensus, 1^T W_t = 1^T the mean, so no symmetry is needed), {', '.join(push)} "
            f"(push-sum: any column-stochastic rounds), {', '.join(graph)} (builds its own mixing on the "
            "graph). The others "
            "rely on a symmetric W_t: its real spectrum (D2's lambda_min, the accelerated and Chebyshev "
            "gossip of DeTAG and MG-DSGD, EXTRA's and Exact Diffusion's (I + W)/2) or the analysis of their "
            "source.")


def doubly_stochastic_rounds(schedule: GossipSchedule) -> GossipSchedule:
    """A kind "push" schedule with each round's rows checked to sum to 1 (a periodic one now, a generated one
    as each W_t is built; ValueError naming t): the rounds a ``directed_rounds`` rule gossips with.

    Parameters
    ----------
    schedule : instances.GossipSchedule
    """

    def checked(t: int) -> sp.csr_array:
        W = schedule.matrix(t)
        deviation = float(np.max(np.abs(W.sum(axis=1) - 1.0))) if W.shape[0] else 0.0
        if deviation > schedule.atol:
            raise ValueError(f"W_{t} of {schedule.name} is column stochastic but not doubly stochastic: max "
                             f"|W 1 - 1| = {deviation:.3g} > atol={schedule.atol:g}; a 'gossip' rule needs "
                             "rows summing to 1 (push-sum over column-stochastic rounds: sgp)")
        return W

    if schedule.period is not None:
        for t in range(schedule.period):
            checked(t)
        return schedule
    return GossipSchedule(schedule.n, checked, period=None, kind="push", name=schedule.name,
                          atol=schedule.atol, window=schedule.window)


def directed_matrix(W: object) -> GossipSchedule | None:
    """A fixed non-symmetric matrix W as the constant "push" schedule a ``directed_rounds`` rule gossips with;
    None for anything else.

    Parameters
    ----------
    W : object
    """
    M = _asymmetric_matrix(W)
    if M is None:
        return None
    try:
        return constant_schedule(M)
    except ValueError as err:
        raise ValueError(f"W is not symmetric, and as a directed W it must be doubly stochastic: "
                         f"{str(err).replace('W_0', 'W')}") from None


def _asymmetric_matrix(W: object) -> sp.csr_array | None:
    """W as CSR when it is a square matrix (not a `Gossip` value or a graph) that is not symmetric; None
    otherwise, also for what is no matrix at all (the caller's check names that)."""
    if W is None or isinstance(W, (Gossip, nx.Graph)):
        return None
    try:
        M = as_csr(cast("MatrixLike", W), "W")  # anything else: as_csr names what is no matrix
    except (TypeError, ValueError):
        return None
    if M.shape[0] != M.shape[1] or M.nnz == 0 or not abs(M - M.T).max() > 1e-9:
        return None
    return M


def gossip_for(kind: str, W: GossipLike | None, n: int, *, atol: float = DEFAULT_ATOL) -> GossipMatrix:
    """W checked as a fixed gossip matrix for a "gossip" or "push" rule (``instances.as_gossip``; a directed
    matrix for a symmetric rule is told which rules take one; TypeError for a schedule).

    Parameters
    ----------
    kind : {"gossip", "push"}
    W : GossipMatrix, numpy.ndarray, scipy.sparse matrix or networkx.Graph
    n : int
    atol : float, default 1e-9
    """
    try:
        gossip = as_gossip(W, n, kind="symmetric" if kind == "gossip" else "push", atol=atol)
    except ValueError as err:
        if kind == "gossip" and _asymmetric_matrix(W) is not None:
            raise ValueError(f"{err}. {_directed_round_rules()}") from None
        raise
    if not isinstance(gossip, GossipMatrix):
        raise TypeError(f"W must be a fixed matrix here; got {gossip!r} (communication_channel takes "
                        "schedules)")
    return gossip


def communication_channel(kind: str, W: GossipLike | None, n: int, *,
                          directed_rounds: bool = False) -> Channel:
    """W checked for a rule's communication ``kind`` (ValueError when it does not fit); "exact" ignores W.

    Parameters
    ----------
    kind : str
    W : Gossip, numpy.ndarray, scipy.sparse matrix, networkx.Graph or None
        A `GossipMatrix` is not checked again; a schedule is checked (`check_schedule`).
    n : int
    directed_rounds : bool, default False
        A "gossip" rule then takes doubly stochastic non-symmetric rounds too.
    """
    if isinstance(W, GossipSchedule) and kind == "graph" and W.period == 1:
        # a period-1 schedule is one W in every round: a graph rule (DeFacto) reads its support as it reads
        # W's, so the same call gives the same run (not one gossip per round)
        W = W.matrix(0)
    if kind == "gossip" and directed_rounds:
        W = directed_matrix(W) or W  # a fixed directed W: its constant schedule
    if isinstance(W, GossipSchedule) and kind in COMMUNICATION_KINDS and kind != "exact":
        if kind == "gossip" and W.kind == "push" and directed_rounds:
            W = doubly_stochastic_rounds(W)  # before lam: a round that is not doubly stochastic is named
        return Channel(kind, W, check_schedule(W, n, kind, directed_rounds=directed_rounds), None)
    if kind in ("gossip", "push"):
        gossip = gossip_for(kind, W, n)
        return Channel(kind, gossip, gossip.lam, _closed_support(gossip.matrix))
    if kind == "graph":
        G = support_graph(W, n)
        adjacency = sp.csr_array(nx.to_scipy_sparse_array(G, nodelist=range(n), format="csr"))
        return Channel(kind, None, None, _closed_support(adjacency), G)
    if kind == "exact":
        return Channel(kind, None, None, None)
    raise ValueError(f"communication must be one of {COMMUNICATION_KINDS}; got {kind!r}")
