"""A topology zoo at fixed n: each member's spectral gap 1 - lam, diameter D and effective number of
neighbours n_eff(gamma) side by side (docs/topology.md).

Members (`ZOO_MEMBERS`): ring, torus, hypercube, the static exponential graph (directed), the one-peer
exponential schedule, complete graph, star, a random 4-regular graph and an Erdős–Rényi graph (seeded);
Metropolis weights for the undirected graphs. lam of a non-symmetric W is ||W - J||_2, of a schedule its
effective lam; D is the diameter of the graph (of the union of a period's rounds).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import networkx as nx
import numpy as np
from decbounds.bounds.validation import require_count, require_seed
from decbounds.instances.gossip import Gossip, as_gossip, column_stochastic_matrix, gossip_matrix
from decbounds.instances.gossip_value import GossipMatrix
from decbounds.instances.graphs import erdos_renyi, topology
from decbounds.instances.neighbours import effective_neighbours
from decbounds.instances.schedules import GossipSchedule, one_peer_exponential

__all__ = ["DEFAULT_GAMMAS", "ZOO_MEMBERS", "ZooRow", "topology_zoo", "zoo_row", "zoo_rows", "zoo_table"]

ZOO_MEMBERS: tuple[str, ...] = ("ring", "torus", "hypercube", "exponential", "one_peer_exponential",
                                "complete", "star", "random_regular", "erdos_renyi")
#: The gamma grid of ``decbounds gossip`` and of the zoo table when none is given.
DEFAULT_GAMMAS: tuple[float, ...] = (0.5, 0.9, 0.99)


class ZooRow(NamedTuple):
    """One member of the zoo: its measures (`zoo_rows`).

    Parameters
    ----------
    name : str
    n : int
    lam : float
        Its contraction; the spectral gap is 1 - lam.
    diameter : int
    gammas : tuple of float
    n_eff : tuple of float
        n_eff(gamma), mean over workers, at each gamma.
    n_eff_worst : tuple of float
    """

    name: str
    n: int
    lam: float
    diameter: int
    gammas: tuple[float, ...]
    n_eff: tuple[float, ...]
    n_eff_worst: tuple[float, ...]

    @property
    def spectral_gap(self) -> float:
        """1 - lam."""
        return 1.0 - self.lam


def _random_regular(n: int, degree: int, seed: int) -> nx.Graph:
    rng = np.random.default_rng(seed)
    for _ in range(100):
        G = nx.random_regular_graph(degree, n, seed=int(rng.integers(2**31 - 1)))
        if nx.is_connected(G):
            return nx.convert_node_labels_to_integers(G, ordering="sorted")
    raise ValueError(f"no connected {degree}-regular graph on n={n} nodes in 100 draws")


def topology_zoo(n: int, *, seed: int = 0) -> dict[str, Gossip]:
    """The zoo's gossip values at n workers, by name (`ZOO_MEMBERS`; the hypercube and one-peer
    exponential schedule only when n is a power of two, the torus when n = r c with r, c >= 3).

    Parameters
    ----------
    n : int
    seed : int, default 0
        Seed of the random regular and Erdős–Rényi graphs.

    Examples
    --------
    >>> sorted(topology_zoo(12))[:3]
    ['complete', 'erdos_renyi', 'exponential']
    """
    n = require_count("n", n, 8, maximum=4096, what="the zoo's dense measures cost n^3")
    seed_value = require_seed("seed", seed)
    seed_int = int(seed_value) if isinstance(seed_value, int) else 0
    power_of_two = n & (n - 1) == 0
    zoo: dict[str, Gossip] = {}
    for name in ZOO_MEMBERS:
        if name in ("hypercube", "one_peer_exponential") and not power_of_two:
            continue
        if name == "torus" and not any(n % r == 0 and 3 <= r <= n // r for r in range(3, n)):
            continue  # no split r x c with r, c >= 3
        if name == "exponential":
            directed = topology("exponential", n, directed=True)
            zoo[name] = as_gossip(column_stochastic_matrix(directed), kind="push")
        elif name == "one_peer_exponential":
            zoo[name] = one_peer_exponential(n)
        elif name == "random_regular":
            zoo[name] = gossip_matrix(_random_regular(n, 4, seed_int))
        elif name == "erdos_renyi":
            zoo[name] = gossip_matrix(erdos_renyi(n, min(1.0, 2 * math.log(n) / n), seed=seed_int))
        else:
            zoo[name] = gossip_matrix(topology(name, n))
    return zoo


def _lam(W: Gossip) -> float:
    if W.lam is not None:
        return float(W.lam)
    assert isinstance(W, GossipMatrix)
    dense = W.toarray()
    return float(np.linalg.norm(dense - 1.0 / W.n, 2))


def _diameter(W: Gossip) -> int:
    if isinstance(W, GossipSchedule):
        G = W.union_graph(0, W.period or 1)
    else:
        matrix = W.round_matrix(0).tocoo()
        directed = W.kind == "push"
        G = nx.DiGraph() if directed else nx.Graph()
        G.add_nodes_from(range(W.n))
        G.add_edges_from((int(i), int(j)) for i, j in zip(matrix.row, matrix.col, strict=True) if i != j)
    return int(nx.diameter(G))


def zoo_rows(n: int, gammas: tuple[float, ...] = DEFAULT_GAMMAS, *, seed: int = 0) -> list[ZooRow]:
    """Every zoo member's lam, D and n_eff over ``gammas`` (exact: eigendecomposition or Lyapunov).

    Parameters
    ----------
    n : int
    gammas : tuple of float
    seed : int, default 0
    """
    return [zoo_row(name, W, gammas) for name, W in topology_zoo(n, seed=seed).items()]


def zoo_row(name: str, W: Gossip, gammas: tuple[float, ...] = DEFAULT_GAMMAS) -> ZooRow:
    """One gossip value's lam, D and n_eff (mean and worst worker) over ``gammas``.

    Parameters
    ----------
    name : str
    W : Gossip
        A member of the zoo, or any doubly stochastic gossip value.
    gammas : tuple of float
    """
    mean = tuple(float(effective_neighbours(W, g)) for g in gammas)
    worst = tuple(float(effective_neighbours(W, g, reduce="worst")) for g in gammas)
    return ZooRow(name, W.n, _lam(W), _diameter(W), tuple(float(g) for g in gammas), mean, worst)


def zoo_table(rows: list[ZooRow]) -> str:
    """The rows as CSV text (one line per member; n_eff and worst-worker n_eff per gamma).

    Parameters
    ----------
    rows : list of ZooRow
    """
    gammas = rows[0].gammas if rows else ()
    header = ["topology", "n", "lam", "spectral_gap", "diameter"]
    header += [f"n_eff(gamma={g:g})" for g in gammas] + [f"n_eff_worst(gamma={g:g})" for g in gammas]
    lines = [",".join(header)]
    for row in rows:
        values = [row.name, str(row.n), f"{row.lam:.6g}", f"{row.spectral_gap:.6g}", str(row.diameter)]
        values += [f"{value:.6g}" for value in row.n_eff + row.n_eff_worst]
        lines.append(",".join(values))
    return "\n".join(lines) + "\n"
