"""The time-varying figure's runners on tiny inputs: T_eps above the schedule's explicit bound, and the
consensus runner's series."""

from __future__ import annotations

import networkx as nx
from decbounds.paper_figures import time_varying as tv

from decbounds import instances


def test_measured_t_eps_is_above_the_explicit_bound_of_each_network() -> None:
    for network in tv.NETWORKS:
        record = tv.measure_point({"network": network, "n": 9, "algorithm": "dsgt", "T_c": 2, "cap": 5000})
        result = record["result"]
        assert result["status"] == "converged"
        assert result["t_eps"] >= result["explicit_bound"] >= 2
        assert 0.0 <= record["params"]["lam"] < 1.0


def test_ring_between_groups_puts_the_groups_apart() -> None:
    I0, I1, _ = instances.split_groups(12)
    G = tv.ring_between_groups(12)
    assert nx.is_isomorphic(G, nx.cycle_graph(12))
    gap = min(nx.shortest_path_length(G, int(a), int(b)) for a in I0 for b in I1)
    assert gap == 3  # the 4 middle workers split 2 / 2 between the two arcs


def test_consensus_runner_accelerates_on_the_static_path() -> None:
    point = {"n": 8, "kappa": 0.3, "network": "static", "cap": 20_000}
    plain = tv.consensus_point({**point, "gossip": "plain"})["result"]
    fast = tv.consensus_point({**point, "gossip": "accelerated"})["result"]
    assert fast["t_eps"] < plain["t_eps"] / 3
    relabelled = tv.relabelled(instances.gossip_matrix(nx.path_graph(8)))
    assert relabelled.period is None and relabelled.n == 8
