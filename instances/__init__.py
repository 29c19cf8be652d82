"""instances: the f and G of the paper's (f, O, G) triple.

Graphs and gossip matrices (G): topologies, weight rules, cvxpy-optimized FDLA/FMMC, spectral tools,
exact-averaging factors, accelerated and Chebyshev gossip.
Functions (f): the zero-chain hard functions of the lower-bound proof (Settings 1 and 2), heterogeneous
quadratics with known heterogeneity, and a non-convex problem on a real bundled data set.

Every local-function object follows the protocol of ARCHITECTURE.md: ``n``, ``dim``, ``x0``,
``grad(X)``, ``value(X)``, ``full_grad(x)`` with the worker axis first and batch axes after it.
"""

# --- graphs and gossip (G) ---------------------------------------------------------------------------
# --- end graphs and gossip ---------------------------------------------------------------------------

# --- functions (f) -----------------------------------------------------------------------------------
# --- end functions -----------------------------------------------------------------------------------
