"""Communication graphs G of the paper's (f, O, G) triple (§1, §4.3, Setting 2, §14).

Every builder returns a ``networkx.Graph`` on the integer nodes ``0..n-1`` (the worker indices, i.e. the row
order of every gossip matrix). Graphs with a translation symmetry (ring, ring lattice, exponential, complete,
torus, hypercube) record it as ``G.graph["cayley"] = (n_1, ..., n_k)``: node ``i`` is the mixed-radix index of
an element of Z_{n_1} x ... x Z_{n_k} (row-major, as ``numpy.unravel_index``) and the edge set is invariant
under every translation of that group. ``instances.optimize`` uses it to reduce FDLA/FMMC to a small LP.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import networkx as nx
import numpy as np
from decbounds.bounds.validation import (
    require_bool,
    require_count,
    require_probability,
    require_real,
    require_seed,
)

from decbounds.registry import Registry

__all__ = [
    "DEFAULT_CONNECT_ATTEMPTS",
    "MAX_CONNECT_ATTEMPTS",
    "MAX_NODES",
    "TOPOLOGIES",
    "broom",
    "complete",
    "erdos_renyi",
    "exponential",
    "hypercube",
    "node_order",
    "path",
    "random_geometric",
    "ring",
    "ring_lattice",
    "star",
    "topology",
    "torus",
]

#: The topology registry: name -> builder ``(n, **params) -> networkx.Graph`` on the nodes 0..n-1, filled at
#: the bottom of this module. ``TOPOLOGIES.register(name, builder)`` makes a new topology known to
#: `topology`, the ``decbounds gossip`` CLI and the figures; ``name in TOPOLOGIES`` and iterating it give
#: the names, as the tuple it replaces did.
TOPOLOGIES: Registry[Callable[..., nx.Graph]] = Registry("topology", group="decbounds.topologies")

DEFAULT_CONNECT_ATTEMPTS = 100
#: Largest graph built: networkx keeps a dict per node and per edge (about 1 KB per node of a sparse graph),
#: so 10**6 nodes is already about a gigabyte; a larger n is refused before anything is allocated.
MAX_NODES = 10**6
MAX_CONNECT_ATTEMPTS = 10**4


def _check_n(n: object, minimum: int = 1, name: str = "n") -> int:
    return require_count(name, n, minimum, maximum=MAX_NODES,
                         what="networkx holds about 1 KB per node; larger graphs are refused")


def _seed_of(seed: object) -> int | np.random.SeedSequence | None:
    """networkx wants an int seed (or a RandomState); turn a Generator into an int drawn from it."""
    seed = require_seed("seed", seed, allow_none=True)
    if isinstance(seed, np.random.Generator):
        return int(seed.integers(2**31 - 1))
    return seed


def _circulant(n: int, offsets: list[int]) -> nx.Graph:
    G = nx.circulant_graph(n, offsets) if n > 1 else nx.empty_graph(1)
    G.graph["cayley"] = (n,)
    return G


def ring(n: int) -> nx.Graph:
    """Cycle C_n (n >= 3); n = 1, 2 give the single node and the single edge.

    Parameters
    ----------
    n : int
        Number of nodes (workers), 1 <= n <= MAX_NODES.

    Examples
    --------
    >>> G = ring(8)
    >>> G.number_of_edges(), nx.diameter(G)
    (8, 4)
    """
    n = _check_n(n)
    if n <= 2:
        G = nx.path_graph(n)
        G.graph["cayley"] = (n,)
        return G
    return _circulant(n, [1])


def path(n: int) -> nx.Graph:
    """Path 0-1-...-(n-1), diameter n - 1 (the hard graph of Cor. 2).

    Parameters
    ----------
    n : int
        Number of nodes (workers), 1 <= n <= MAX_NODES.

    Examples
    --------
    >>> G = path(5)
    >>> G.number_of_edges(), nx.diameter(G)
    (4, 4)
    """
    return nx.path_graph(_check_n(n))


def star(n: int) -> nx.Graph:
    """Star K_{1,n-1} with centre 0.

    Parameters
    ----------
    n : int
        Number of nodes (workers), 1 <= n <= MAX_NODES.

    Examples
    --------
    >>> G = star(5)
    >>> G.degree[0], nx.diameter(G)
    (4, 2)
    """
    return nx.star_graph(_check_n(n) - 1)


def complete(n: int) -> nx.Graph:
    """Complete graph K_n (diameter 1).

    Parameters
    ----------
    n : int
        Number of nodes (workers), 1 <= n <= MAX_NODES.

    Examples
    --------
    >>> complete(5).number_of_edges()
    10
    """
    n = _check_n(n)
    G = nx.complete_graph(n)
    G.graph["cayley"] = (n,)
    return G


def torus(n: int, r: int | None = None, c: int | None = None) -> nx.Graph:
    """2-D torus C_r x C_c with n = r*c; node i*c + j is cell (i, j). r, c default to the most square split.

    Parameters
    ----------
    n : int
        Number of nodes, r * c.
    r, c : int, optional
        Rows and columns, each >= 3; give one, both or neither.

    Examples
    --------
    >>> G = torus(12)
    >>> G.graph["torus"], G.number_of_edges(), nx.diameter(G)
    ((3, 4), 24, 3)
    """
    n = _check_n(n)
    if r is None and c is None:
        r = max(d for d in range(1, math.isqrt(n) + 1) if n % d == 0)
        c = n // r
    elif r is None:
        c = _check_n(c, 1, "c")
        if n % c:  # the derived r would not divide n: name what the user passed, not the derived r
            raise ValueError(f"torus needs c to divide n (n = r*c); got n={n}, c={c}")
        r = n // c
    elif c is None:
        r = _check_n(r, 1, "r")
        if n % r:
            raise ValueError(f"torus needs r to divide n (n = r*c); got n={n}, r={r}")
        c = n // r
    r, c = _check_n(r, 1, "r"), _check_n(c, 1, "c")
    if r * c != n:
        raise ValueError(f"torus needs n = r*c; got n={n}, r={r}, c={c}")
    if r < 3 or c < 3:
        raise ValueError(f"torus needs r >= 3 and c >= 3 (got r={r}, c={c} for n={n}); use ring or hypercube")
    G = nx.grid_2d_graph(r, c, periodic=True)
    G = nx.relabel_nodes(G, {(i, j): i * c + j for i, j in G.nodes})
    G = nx.Graph(sorted(G.edges))  # nodes in order 0..n-1
    G.add_nodes_from(range(n))
    G.graph["cayley"] = (r, c)
    G.graph["torus"] = (r, c)
    return G


def hypercube(n: int) -> nx.Graph:
    """Hypercube Q_d with n = 2^d; nodes i and i XOR 2^k are linked.

    Parameters
    ----------
    n : int
        A power of 2.

    Examples
    --------
    >>> G = hypercube(8)
    >>> G.number_of_edges(), nx.diameter(G)
    (12, 3)
    """
    n = _check_n(n)
    if n & (n - 1):
        raise ValueError(f"hypercube needs n a power of 2; got n={n}")
    d = n.bit_length() - 1
    G = nx.Graph()
    G.add_nodes_from(range(n))
    G.add_edges_from((i, i ^ (1 << k)) for i in range(n) for k in range(d) if i < i ^ (1 << k))
    # node i <-> bits (b_{d-1}, ..., b_0) of i: row-major index of Z_2^d
    G.graph["cayley"] = (2,) * d
    return G


def exponential(n: int, directed: bool = False) -> nx.Graph | nx.DiGraph:
    """Static exponential graph (Ying et al. 2021): i linked to i + 2^k mod n for 2^k < n (theory §14).

    Parameters
    ----------
    n : int
    directed : bool, optional

    Examples
    --------
    >>> sorted(exponential(8)[0])
    [1, 2, 4, 6, 7]
    """
    n = _check_n(n)
    directed = require_bool("directed", directed)
    offsets = sorted({(1 << k) % n for k in range(max(n - 1, 1).bit_length()) if (1 << k) < n} - {0})
    if directed:
        G = nx.DiGraph()
        G.add_nodes_from(range(n))
        G.add_edges_from((i, (i + s) % n) for i in range(n) for s in offsets)
        return G
    return _circulant(n, offsets)


def ring_lattice(n: int, k: int = 1) -> nx.Graph:
    """Ring lattice: i linked to its k nearest neighbours on each side (Yuan et al. 2022); k=1 is the ring.

    Parameters
    ----------
    n : int
    k : int, optional
        Neighbours on each side, 2 k < n (default 1).

    Examples
    --------
    >>> sorted(ring_lattice(10, 2)[0])
    [1, 2, 8, 9]
    """
    n = _check_n(n)
    k = _check_n(k, 1, "k")
    if 2 * k >= n:
        raise ValueError(f"ring_lattice needs 2*k < n (k neighbours on each side); got n={n}, k={k}")
    return _circulant(n, list(range(1, k + 1)))


def erdos_renyi(n: int, p: float, seed: int | np.random.Generator | np.random.SeedSequence | None = None,
                max_attempts: int = DEFAULT_CONNECT_ATTEMPTS) -> nx.Graph:
    """G(n, p), redrawn (seeds derived from ``seed``) until connected, at most ``max_attempts`` draws.

    Parameters
    ----------
    n : int
    p : float
        Edge probability in [0, 1]; p = 2 ln(n)/n is connected with high probability.
    seed : int, numpy.random.Generator or numpy.random.SeedSequence, optional
    max_attempts : int, optional

    Examples
    --------
    >>> G = erdos_renyi(50, 0.16, seed=1)
    >>> nx.is_connected(G), G.number_of_edges() == erdos_renyi(50, 0.16, seed=1).number_of_edges()
    (True, True)
    """
    n = _check_n(n)
    p = require_probability("p", p, allow_zero=True)
    if n > 1 and 1.0 - p == 1.0:
        # fast_gnp_random_graph divides by log(1 - p) = 0 here; and a connected draw needs n - 1 edges, each
        # present with probability p < 2**-53: hopeless, so say so now rather than after max_attempts draws
        raise ValueError(f"erdos_renyi(n={n}): p={p!r} is below 2**-53, so 1 - p rounds to 1 and a connected "
                         "G(n, p) is practically impossible; use p >= ln(n)/n")
    seed = _seed_of(seed)

    # fast_gnp_random_graph draws the same G(n, p) law in O(n + m) (gnp_random_graph visits all n^2/2 pairs)
    def draw(s: int) -> nx.Graph:
        return nx.fast_gnp_random_graph(n, p, seed=s)

    return _redraw_until_connected(draw, seed, max_attempts, f"erdos_renyi(n={n}, p={p})")


def random_geometric(n: int, radius: float,
                     seed: int | np.random.Generator | np.random.SeedSequence | None = None,
                     max_attempts: int = DEFAULT_CONNECT_ATTEMPTS) -> nx.Graph:
    """Random geometric graph in the unit square, redrawn until connected (like ``erdos_renyi``).

    Parameters
    ----------
    n : int
    radius : float
        Nodes closer than ``radius`` are linked.
    seed : int, numpy.random.Generator or numpy.random.SeedSequence, optional
    max_attempts : int, optional

    Examples
    --------
    >>> nx.is_connected(random_geometric(30, 0.35, seed=2))
    True
    """
    n = _check_n(n)
    radius = require_real("radius", radius)
    seed = _seed_of(seed)

    def draw(s: int) -> nx.Graph:
        return _plain(nx.random_geometric_graph(n, radius, seed=s))

    return _redraw_until_connected(draw, seed, max_attempts, f"random_geometric(n={n}, radius={radius})")


def _plain(G: nx.Graph) -> nx.Graph:
    H = nx.Graph()
    H.add_nodes_from(sorted(G.nodes))
    H.add_edges_from(G.edges)
    for v, pos in G.nodes(data="pos"):
        H.nodes[v]["pos"] = pos
    return H


def _redraw_until_connected(draw: Callable[[int], nx.Graph], seed: object, max_attempts: int,
                            what: str) -> nx.Graph:
    max_attempts = require_count("max_attempts", max_attempts, 1, maximum=MAX_CONNECT_ATTEMPTS)
    base = _seed_of(seed)
    # a SeedSequence turns (seed, attempt) into independent draws; same seed, same graph
    root = base if isinstance(base, np.random.SeedSequence) else np.random.SeedSequence(base)
    for attempt, child in enumerate(root.spawn(max_attempts)):
        G = draw(int(child.generate_state(1)[0]))
        if nx.is_connected(G):
            G.graph["attempt"] = attempt
            return G
    raise ValueError(f"{what}: no connected draw in max_attempts={max_attempts} attempts; "
                     "raise p/radius or max_attempts")


def broom(n: int, D: int) -> nx.Graph:
    """The hard graph of Thm. 1, Setting 2 (docs/theory.md §4, Fig. 6): diameter exactly D, 1 <= D <= n - 1;
    ``G.graph["broom"]`` holds D and the node lists ``left``, ``path``, ``right``.

    Parameters
    ----------
    n : int
    D : int

    Examples
    --------
    >>> G = broom(10, 4)
    >>> nx.diameter(G), G.graph["broom"]["path"]
    (4, [4, 5, 6])
    """
    n = _check_n(n, 2)
    D = _check_n(D, 1, "D")
    if D > n - 1:
        raise ValueError(f"broom needs 1 <= D <= n-1; got n={n}, D={D}")
    if D == 1:
        G = nx.complete_graph(n)
        nx.set_node_attributes(G, "path", "part")
        G.graph["broom"] = {"D": 1, "left": [], "right": [], "path": list(range(n))}
        return G
    leaves = n - D + 1
    a = (leaves + 1) // 2
    b = leaves // 2
    path_nodes = list(range(a, a + D - 1))
    left, right = list(range(a)), list(range(a + D - 1, n))
    G = nx.Graph()
    G.add_nodes_from(left, part="left_leaf")
    G.add_nodes_from(path_nodes, part="path")
    G.add_nodes_from(right, part="right_leaf")
    G.add_edges_from(itertools.pairwise(path_nodes))
    G.add_edges_from((u, path_nodes[0]) for u in left)
    G.add_edges_from((u, path_nodes[-1]) for u in right)
    G = nx.Graph(G.subgraph(range(n)))  # nodes in order 0..n-1
    assert len(right) == b
    G.graph["broom"] = {"D": D, "left": left, "right": right, "path": path_nodes}
    return G


for _builder in (ring, path, star, complete, torus, hypercube, exponential, erdos_renyi, random_geometric,
                 ring_lattice, broom):
    TOPOLOGIES.register(_builder.__name__, _builder)


def topology(name: str | Callable[..., nx.Graph], n: int, **params: object) -> nx.Graph:
    """Build the named topology on nodes 0..n-1 (names: ``TOPOLOGIES``, the built-in ones and any registered).

    Parameters
    ----------
    name : str or callable
        A name in ``TOPOLOGIES``, or a builder ``(n, **params) -> networkx.Graph``.
    n : int
    **params
        By name: torus (r, c), exponential (directed), erdos_renyi (p, seed, max_attempts),
        random_geometric (radius, seed, max_attempts), ring_lattice (k), broom (D).

    Examples
    --------
    >>> topology("ring_lattice", 8, k=2).graph["name"]
    'ring_lattice'
    """
    G = TOPOLOGIES.build(name, n, **params)
    if isinstance(name, str):
        G.graph["name"] = TOPOLOGIES[name].name
    else:  # a builder itself (``minimize(method=)``'s convention): its own name unless it set one
        G.graph.setdefault("name", getattr(name, "__name__", "custom"))
    return G


def node_order(G: nx.Graph) -> int:
    """Number of nodes n, after checking that the nodes are exactly the integers 0..n-1 (the worker rows).

    Parameters
    ----------
    G : networkx.Graph
    """
    n: int = G.number_of_nodes()
    if n == 0:
        raise ValueError("G must have at least one node")
    if set(G.nodes) != set(range(n)):
        raise ValueError("G must have the nodes 0..n-1 (worker indices); relabel with "
                         "networkx.convert_node_labels_to_integers")
    return n
