"""Topologies: labels, sizes, diameters, seeds, the broom of Thm. 1 Setting 2, and bad parameters."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest
from decbounds.instances.graphs import TOPOLOGIES, topology
from hypothesis import given
from hypothesis import strategies as st

from decbounds import instances


def _nodes_ok(G: nx.Graph, n: int) -> None:
    assert list(G.nodes) == list(range(n)) or sorted(G.nodes) == list(range(n))
    assert G.number_of_nodes() == n


@pytest.mark.parametrize(
    ("name", "n", "params", "edges", "diameter"),
    [
        ("ring", 10, {}, 10, 5),
        ("path", 10, {}, 9, 9),
        ("star", 10, {}, 9, 2),
        ("complete", 7, {}, 21, 1),
        ("torus", 12, {"r": 3, "c": 4}, 24, 3),
        ("hypercube", 16, {}, 32, 4),
        ("exponential", 16, {}, 16 * 7 // 2, 2),
        ("ring_lattice", 12, {"k": 2}, 24, 3),
        ("broom", 12, {"D": 5}, 11, 5),
    ],
)
def test_deterministic_topologies(name: str, n: int, params: dict, edges: int, diameter: int) -> None:
    G = topology(name, n, **params)
    _nodes_ok(G, n)
    assert G.number_of_edges() == edges
    assert nx.diameter(G) == diameter
    assert G.graph["name"] == name


def test_package_reexports_topology() -> None:
    assert instances.topology is topology
    assert set(TOPOLOGIES) >= {"ring", "path", "broom", "erdos_renyi", "random_geometric"}


def test_path_is_in_order_and_star_centre_is_zero() -> None:
    assert sorted(topology("path", 6).edges) == [(i, i + 1) for i in range(5)]
    assert dict(topology("star", 6).degree)[0] == 5


def test_torus_cells_are_row_major() -> None:
    G = topology("torus", 12, r=3, c=4)
    assert G.has_edge(0, 1) and G.has_edge(0, 3) and G.has_edge(0, 4) and G.has_edge(0, 8)
    assert not G.has_edge(0, 5)
    assert G.graph["cayley"] == (3, 4)
    assert topology("torus", 36).graph["torus"] == (6, 6)


def test_hypercube_links_bit_flips() -> None:
    G = topology("hypercube", 8)
    assert all(bin(u ^ v).count("1") == 1 for u, v in G.edges)
    assert all(d == 3 for _, d in G.degree)


def test_exponential_directed_out_neighbours() -> None:
    D = topology("exponential", 12, directed=True)
    assert isinstance(D, nx.DiGraph)
    assert sorted(D.successors(0)) == [1, 2, 4, 8]
    assert all(d == 4 for _, d in D.out_degree)
    U = topology("exponential", 12)
    assert sorted(U.neighbors(0)) == [1, 2, 4, 8, 10, 11]


@given(n=st.integers(2, 40), seed=st.integers(0, 2**31 - 1))
def test_erdos_renyi_connected_and_reproducible(n: int, seed: int) -> None:
    p = min(1.0, 2.5 * math.log(n) / n + 0.05)
    G = topology("erdos_renyi", n, p=p, seed=seed)
    H = topology("erdos_renyi", n, p=p, seed=seed)
    _nodes_ok(G, n)
    assert nx.is_connected(G)
    assert sorted(G.edges) == sorted(H.edges)


def test_erdos_renyi_generator_seed_and_refusal() -> None:
    a = topology("erdos_renyi", 20, p=0.3, seed=np.random.default_rng(5))
    b = topology("erdos_renyi", 20, p=0.3, seed=np.random.default_rng(5))
    assert sorted(a.edges) == sorted(b.edges)
    with pytest.raises(ValueError, match="max_attempts=3"):
        topology("erdos_renyi", 50, p=0.01, seed=0, max_attempts=3)


@pytest.mark.parametrize(("name", "parameter"), [("erdos_renyi", {"p": 0.3}),
                                                ("random_geometric", {"radius": 0.5})])
def test_a_seed_sequence_seeds_the_random_graphs(name: str, parameter: dict[str, float]) -> None:
    """require_seed accepts a SeedSequence; the redraw loop once turned it into a SeedSequence again and
    failed inside numpy."""
    a = topology(name, 20, seed=np.random.SeedSequence(1), **parameter)
    b = topology(name, 20, seed=np.random.SeedSequence(1), **parameter)
    assert nx.is_connected(a) and sorted(a.edges) == sorted(b.edges)


def test_random_geometric_connected_reproducible() -> None:
    G = topology("random_geometric", 30, radius=0.35, seed=2)
    H = topology("random_geometric", 30, radius=0.35, seed=2)
    assert nx.is_connected(G) and sorted(G.edges) == sorted(H.edges)
    with pytest.raises(ValueError, match="radius"):
        topology("random_geometric", 30, radius=0.0)


@given(n=st.integers(3, 30), data=st.data())
def test_broom_structure(n: int, data: st.DataObject) -> None:
    D = data.draw(st.integers(2, n - 1))
    G = topology("broom", n, D=D)
    _nodes_ok(G, n)
    assert nx.is_connected(G) and nx.diameter(G) == D
    a, b = math.ceil((n - D + 1) / 2), (n - D + 1) // 2
    parts = [G.nodes[v]["part"] for v in range(n)]
    assert parts == ["left_leaf"] * a + ["path"] * (D - 1) + ["right_leaf"] * b
    A, B = a, a + D - 2
    assert all(set(G.neighbors(v)) == {A} for v in range(a))
    assert all(set(G.neighbors(v)) == {B} for v in range(a + D - 1, n))
    assert all(G.has_edge(v, v + 1) for v in range(A, B))


def test_broom_extremes() -> None:
    assert sorted(topology("broom", 9, D=8).edges) == sorted(topology("path", 9).edges)
    assert nx.is_isomorphic(topology("broom", 9, D=1), nx.complete_graph(9))
    assert nx.is_isomorphic(topology("broom", 9, D=2), nx.star_graph(8))


@pytest.mark.parametrize(
    ("name", "n", "params", "field"),
    [
        ("nope", 5, {}, "name"),
        ("ring", 0, {}, "n"),
        ("torus", 12, {"r": 5}, "r=5"),
        ("torus", 8, {"r": 2, "c": 4}, "r >= 3"),
        ("hypercube", 12, {}, "power of 2"),
        ("ring_lattice", 6, {"k": 3}, "2\\*k < n"),
        ("broom", 6, {"D": 6}, "D"),
        ("broom", 6, {"D": 0}, "D"),
        ("erdos_renyi", 6, {"p": 1.5}, "p"),
        ("ring", 6, {"k": 2}, "bad parameters"),
    ],
)
def test_bad_parameters_name_the_field(name: str, n: int, params: dict, field: str) -> None:
    with pytest.raises(ValueError, match=field):
        topology(name, n, **params)


def test_non_integer_n_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="n must be an integer"):
        topology("ring", 4.0)
