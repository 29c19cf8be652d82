"""instances: the f and G of the paper's (f, O, G) triple.

Graphs and gossip matrices (G): topologies, weight rules, cvxpy-optimized FDLA/FMMC, spectral tools,
exact-averaging factors, accelerated and Chebyshev gossip, and time-varying gossip schedules
(`GossipSchedule`: one-peer exponential, random matchings, randomized gossip, rotating ring). W is one
value, a `Gossip` (a static `GossipMatrix` or a `GossipSchedule`), which every package takes; `as_gossip`
is the one place a matrix or graph becomes one.
Functions (f): the zero-chain hard functions of the lower-bound proof (Settings 1 and 2), heterogeneous
quadratics with known heterogeneity, and a non-convex problem on a real bundled data set.

Every local-function object follows the protocol of docs/architecture.md: ``n``, ``dim``, ``x0``,
``grad(X)``, ``value(X)``, ``full_grad(x)`` with the worker axis first and batch axes after it.
"""

# --- graphs and gossip (G) ---------------------------------------------------------------------------
# Re-exports: the package's graph and gossip API (listed in __all__ below).
from decbounds.instances.averaging import (
    GOSSIP_METHODS,
    GOSSIP_STARTS,
    accelerated_gossip,
    chebyshev_gossip,
    exact_averaging_factors,
    gossip_schedule,
    multi_step_gossip,
    schedule_polynomial,
)
from decbounds.instances.gossip import (
    GOSSIP_KINDS,
    WEIGHT_RULES,
    ExactAverage,
    Gossip,
    GossipLike,
    GossipMatrix,
    as_gossip,
    check_gossip,
    column_stochastic_matrix,
    gossip_matrix,
    lazy,
    lazy_gap_is_exact,
    second_eigenvalue,
    spectral_gap,
)
from decbounds.instances.graphs import TOPOLOGIES, topology
from decbounds.instances.optimize import OptimizedGossip, optimize_gossip
from decbounds.instances.schedules import (
    GossipSchedule,
    as_schedule,
    constant_schedule,
    one_peer_exponential,
    random_matchings,
    randomized_gossip,
    rotating_path,
    rotating_ring,
    schedule_from_callable,
    schedule_from_sequence,
)

# isort: split
# --- end graphs and gossip ---------------------------------------------------------------------------

# --- functions (f) -----------------------------------------------------------------------------------
# Re-exports: the package's function API (listed in __all__ below).
from decbounds.instances.cluster import CLUSTERS, COMPUTE_DISTRIBUTIONS, Cluster, named_cluster
from decbounds.instances.digits import (
    DigitsProblem,
    digits_problem,
    load_digits_arrays,
    shuffle_partition,
)
from decbounds.instances.hard import (
    CommunicationInstance,
    SamplingInstance,
    ScheduledCommunicationInstance,
    communication_instance,
    sampling_instance,
    schedule_crossings,
    scheduled_communication_instance,
    split_groups,
)
from decbounds.instances.heterogeneity import varsigma0_at_start
from decbounds.instances.problems import (
    HeterogeneousNonconvex,
    HeterogeneousQuadratic,
    heterogeneous_nonconvex,
    heterogeneous_quadratic,
)
from decbounds.instances.protocol import (
    FiniteSumFunctions,
    LocalFunctions,
    default_radius,
    instance_radius,
    local_gradients_at_start,
)
from decbounds.instances.zero_chain import (
    DELTA0,
    G_INF,
    L1,
    ZeroChainFunctions,
    progress,
    zero_chain,
)

__all__ = [
    "CLUSTERS",
    "COMPUTE_DISTRIBUTIONS",
    "DELTA0",
    "GOSSIP_KINDS",
    "GOSSIP_METHODS",
    "GOSSIP_STARTS",
    "G_INF",
    "L1",
    "TOPOLOGIES",
    "WEIGHT_RULES",
    "Cluster",
    "CommunicationInstance",
    "DigitsProblem",
    "ExactAverage",
    "FiniteSumFunctions",
    "Gossip",
    "GossipLike",
    "GossipMatrix",
    "GossipSchedule",
    "HeterogeneousNonconvex",
    "HeterogeneousQuadratic",
    "LocalFunctions",
    "OptimizedGossip",
    "SamplingInstance",
    "ScheduledCommunicationInstance",
    "ZeroChainFunctions",
    "accelerated_gossip",
    "as_gossip",
    "as_schedule",
    "chebyshev_gossip",
    "check_gossip",
    "column_stochastic_matrix",
    "communication_instance",
    "constant_schedule",
    "default_radius",
    "digits_problem",
    "exact_averaging_factors",
    "gossip_matrix",
    "gossip_schedule",
    "heterogeneous_nonconvex",
    "heterogeneous_quadratic",
    "instance_radius",
    "lazy",
    "lazy_gap_is_exact",
    "load_digits_arrays",
    "local_gradients_at_start",
    "multi_step_gossip",
    "named_cluster",
    "one_peer_exponential",
    "optimize_gossip",
    "progress",
    "random_matchings",
    "randomized_gossip",
    "rotating_path",
    "rotating_ring",
    "sampling_instance",
    "schedule_crossings",
    "schedule_from_callable",
    "schedule_from_sequence",
    "schedule_polynomial",
    "scheduled_communication_instance",
    "second_eigenvalue",
    "shuffle_partition",
    "spectral_gap",
    "split_groups",
    "topology",
    "varsigma0_at_start",
    "zero_chain",
]

# --- end functions -----------------------------------------------------------------------------------
