"""The names the ``gossip`` and ``run`` command lines show, without numpy or networkx (a subcommand's
``--help`` imports this module only): the built-in topologies with the options each takes, the weight rules
and the FDLA/FMMC solvers. `instances.graphs`, `instances.gossip` and `instances.optimize` register or take
exactly these (tests/test_vocabulary.py holds them equal)."""

from __future__ import annotations

__all__ = ["SOLVERS", "TOPOLOGY_NAMES", "TOPOLOGY_OPTIONS", "WEIGHT_RULE_NAMES"]

#: The built-in topologies, in registration order (``instances.TOPOLOGIES`` without plugins).
TOPOLOGY_NAMES: tuple[str, ...] = ("ring", "path", "star", "complete", "torus", "hypercube", "exponential",
                                   "erdos_renyi", "random_geometric", "ring_lattice", "broom")

#: Topology -> the ``decbounds gossip`` options its builder needs and those it may take (the others take
#: none): ``gossip.topology_flags`` read off the builders' signatures.
TOPOLOGY_OPTIONS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "torus": ((), ("--r", "--c")),
    "erdos_renyi": (("--p",), ("--seed", "--max-attempts")),
    "random_geometric": (("--radius",), ("--seed", "--max-attempts")),
    "ring_lattice": ((), ("--k",)),
    "broom": (("--D",), ()),
}

#: The built-in weight rules (``instances.WEIGHT_RULES`` without plugins).
WEIGHT_RULE_NAMES: tuple[str, ...] = ("metropolis", "max_degree", "uniform", "fdla", "fmmc", "path")

#: The FDLA/FMMC solvers (``instances.optimize_gossip``'s ``solver``).
SOLVERS: tuple[str, ...] = ("auto", "lp", "barrier", "CLARABEL", "SCS")
