"""The topology and weight-rule registries: what is registered is usable by name (``topology``,
``gossip_matrix``, the ``decbounds gossip`` and ``decbounds run`` CLIs); what is unregistered is gone."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from decbounds.instances.gossip import from_edge_weights

from decbounds import instances
from decbounds.cli import build_parser, main


def wheel(n: int, *, hub: int = 0) -> nx.Graph:
    """Wheel W_n: a hub joined to every node of a rim cycle on the other n - 1 nodes."""
    G = nx.wheel_graph(n)
    return nx.relabel_nodes(G, {0: hub, hub: 0})


def half_metropolis(G: nx.Graph) -> sp.csr_array:
    """Half the Metropolis weights on every edge (a lazier gossip)."""
    n = G.number_of_nodes()
    u, v = (np.array(side, dtype=np.int64) for side in zip(*G.edges, strict=True))
    degree = np.array([G.degree[i] for i in range(n)])
    return from_edge_weights(n, u, v, 0.5 / (1.0 + np.maximum(degree[u], degree[v])))


@pytest.fixture
def registered() -> Iterator[None]:
    instances.TOPOLOGIES.register("wheel", wheel, aliases=("wheel_graph",))
    instances.WEIGHT_RULES.register("half_metropolis", half_metropolis)
    try:
        yield
    finally:
        for registry, name in ((instances.TOPOLOGIES, "wheel"), (instances.WEIGHT_RULES, "half_metropolis")):
            if name in registry:
                registry.unregister(name)


def _choices(parser: argparse.ArgumentParser, command: str, dest: str) -> object:
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[command]
    return next(a for a in sub._actions if a.dest == dest).choices


def test_the_built_in_names_are_registered_and_still_behave_like_the_old_tuples() -> None:
    assert instances.TOPOLOGIES.names() == ("ring", "path", "star", "complete", "torus", "hypercube",
                                             "exponential", "erdos_renyi", "random_geometric",
                                             "ring_lattice", "broom")
    assert set(instances.WEIGHT_RULES) == {"metropolis", "max_degree", "uniform", "fdla", "fmmc", "path"}
    assert "ring" in instances.TOPOLOGIES and "wheel" not in instances.TOPOLOGIES
    assert instances.TOPOLOGIES["broom"].builder is instances.graphs.broom
    assert instances.WEIGHT_RULES["path"].builder is instances.gossip.path_matrix
    assert all(entry.description for entry in instances.WEIGHT_RULES.values())


def test_a_registered_topology_and_weight_rule_are_usable_by_name(registered: None) -> None:
    G = instances.topology("wheel", 7, hub=3)
    assert G.graph["name"] == "wheel" and G.degree[3] == 6 and sorted(G.nodes) == list(range(7))
    assert instances.topology("wheel_graph", 5).graph["name"] == "wheel"  # an alias names the entry
    W = instances.gossip_matrix(G, "half_metropolis")
    lam = instances.check_gossip(W, G)
    assert lam > instances.second_eigenvalue(instances.gossip_matrix(G, "metropolis"))  # lazier, slower
    with pytest.raises(ValueError, match=r"name='wheel' \(topology\): bad parameters \['spokes'\]"):
        instances.topology("wheel", 7, spokes=2)
    with pytest.raises(ValueError, match=r"weights='half_metropolis' \(weight rule\).*no options"):
        instances.gossip_matrix(G, "half_metropolis", solver="SCS")


def test_unregister_removes_the_name_everywhere(registered: None) -> None:
    instances.TOPOLOGIES.unregister("wheel")
    instances.WEIGHT_RULES.unregister("half_metropolis")
    with pytest.raises(ValueError, match=r"name must be one of \('ring', .*'broom'\) \(a registered topo"):
        instances.topology("wheel", 7)
    with pytest.raises(ValueError, match=r"weights must be one of \('metropolis', .*\); got weights='half_"):
        instances.gossip_matrix(nx.cycle_graph(5), "half_metropolis")
    assert "wheel_graph" not in instances.TOPOLOGIES
    assert "wheel" not in _choices(build_parser("gossip"), "gossip", "topology")  # type: ignore[operator]


def test_unknown_names_name_the_field_and_the_choices() -> None:
    with pytest.raises(ValueError, match=r"name must be one of \('ring', 'path',"):
        instances.topology("moebius", 8)
    with pytest.raises(TypeError, match="name must be a string"):
        instances.topology(3, 8)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"weights must be one of \('metropolis', 'max_degree',"):
        instances.gossip_matrix(nx.cycle_graph(4), "laplacian")


def test_the_cli_choices_are_the_registries(registered: None, capsys: pytest.CaptureFixture[str]) -> None:
    gossip = build_parser("gossip")
    assert tuple(_choices(gossip, "gossip", "topology")) == instances.TOPOLOGIES.names()  # type: ignore[arg-type]
    assert tuple(_choices(gossip, "gossip", "weights")) == instances.WEIGHT_RULES.names()  # type: ignore[arg-type]
    run = build_parser("run")
    assert tuple(_choices(run, "run", "weights")) == instances.WEIGHT_RULES.names()  # type: ignore[arg-type]
    assert run.parse_args(["run", "dpsgd", "--weights", "half_metropolis"]).weights == "half_metropolis"
    # the registered topology and rule, end to end through `decbounds gossip`
    assert main(["gossip", "wheel", "--n", "9", "--weights", "half_metropolis", "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("wheel n=9 edges=16")
    assert "half_metropolis*" in out and "metropolis " in out
    with pytest.raises(SystemExit):
        main(["gossip", "moebius", "--n", "9"])
    assert "invalid choice: 'moebius'" in capsys.readouterr().err
