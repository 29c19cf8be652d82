"""instances: the f and G of the paper's (f, O, G) triple.

Graphs and gossip matrices (G): topologies, weight rules, cvxpy-optimized FDLA/FMMC, spectral tools,
exact-averaging factors, accelerated and Chebyshev gossip.
Functions (f): the zero-chain hard functions of the lower-bound proof (Settings 1 and 2), heterogeneous
quadratics with known heterogeneity, and a non-convex problem on a real bundled data set.

Every local-function object follows the protocol of docs/architecture.md: ``n``, ``dim``, ``x0``,
``grad(X)``, ``value(X)``, ``full_grad(x)`` with the worker axis first and batch axes after it.
"""

# --- graphs and gossip (G) ---------------------------------------------------------------------------
# Re-exports (the package's graph and gossip API; noqa: re-exported, not used here).
from instances.averaging import (  # noqa: F401
    GOSSIP_METHODS,
    GOSSIP_STARTS,
    accelerated_gossip,
    chebyshev_gossip,
    exact_averaging_factors,
    gossip_schedule,
    multi_step_gossip,
    schedule_polynomial,
)
from instances.gossip import (  # noqa: F401
    WEIGHT_RULES,
    check_gossip,
    column_stochastic_matrix,
    gossip_matrix,
    lazy,
    lazy_gap_is_exact,
    second_eigenvalue,
    spectral_gap,
)
from instances.graphs import TOPOLOGIES, topology  # noqa: F401
from instances.optimize import OptimizedGossip, optimize_gossip  # noqa: F401

# isort: split
# --- end graphs and gossip ---------------------------------------------------------------------------

# --- functions (f) -----------------------------------------------------------------------------------
# Re-exports (this block's names are the package's function API; noqa: re-exported, not used here).
from instances.digits import (  # noqa: F401
    DigitsProblem,
    digits_problem,
    load_digits_arrays,
    shuffle_partition,
)
from instances.hard import (  # noqa: F401
    CommunicationInstance,
    SamplingInstance,
    communication_instance,
    sampling_instance,
    split_groups,
)
from instances.heterogeneity import varsigma0_at_start  # noqa: F401
from instances.problems import (  # noqa: F401
    HeterogeneousNonconvex,
    HeterogeneousQuadratic,
    heterogeneous_nonconvex,
    heterogeneous_quadratic,
)
from instances.protocol import (  # noqa: F401
    FiniteSumFunctions,
    LocalFunctions,
    default_radius,
    instance_radius,
    local_gradients_at_start,
)
from instances.zero_chain import (  # noqa: F401
    DELTA0,
    G_INF,
    L1,
    ZeroChainFunctions,
    progress,
    zero_chain,
)

# --- end functions -----------------------------------------------------------------------------------
