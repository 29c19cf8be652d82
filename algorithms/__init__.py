"""algorithms: the class A -- DeTAG, DeFacto and the baselines as small step rules on one vectorized engine.

``run(name, problem, W, *, step_size, iterations, ...) -> Result`` runs one configuration;
``run_batch`` runs a grid of configurations side by side as one (n, k, d) state; ``tune`` picks the best
T_eps over an admissible step-size grid (and DeTAG's eta, R and gossip start).

Extending: subclass `StepRule` (step_rule.py says what ``init``, ``step`` and ``average`` receive and may
do; the state is a `State` dataclass), give it a ``name`` and a `PlotStyle`, and ``register`` it: one
registry entry holds everything about an algorithm (class, aliases, catalog entry, plot style).
"""

from decbounds.algorithms import rules  # noqa: F401  (registers the built-in algorithms)
from decbounds.algorithms.api import run, run_batch
from decbounds.algorithms.compression import (
    COMPRESSORS,
    QSGD,
    Compressor,
    Contractive,
    Identity,
    RandomK,
    ScaledSign,
    TopK,
    contractive,
    make_compressor,
)
from decbounds.algorithms.engine import (
    BudgetViolationError,
    CapabilityError,
    Context,
    Observation,
    Observer,
    RunInfo,
)
from decbounds.algorithms.plugins import load_rule
from decbounds.algorithms.registry import (
    ALGORITHMS,
    Entry,
    algorithm_names,
    entries,
    entry,
    register,
    rule_class,
    unregister,
)
from decbounds.algorithms.result import Grid, Result, to_jsonable
from decbounds.algorithms.step_rule import Setup, State, StepRule, state_as
from decbounds.algorithms.style import PlotStyle
from decbounds.algorithms.timed import ASYNCHRONOUS_METHODS, run_timed
from decbounds.algorithms.tune import tune

# isort: split
# Written only through the public API above (tests/algorithms/test_new_algorithms.py checks their imports).
from decbounds.algorithms.compressed import BEER, ChocoSGD  # compressed gossip, docs/theory.md §18
from decbounds.algorithms.exact_diffusion import ExactDiffusion
from decbounds.algorithms.extra import Extra
from decbounds.algorithms.mg_dsgd import MGDSGD

for _rule in (Extra, ExactDiffusion, MGDSGD, ChocoSGD, BEER):
    register(_rule)

__all__ = [
    "ALGORITHMS",
    "ASYNCHRONOUS_METHODS",
    "COMPRESSORS",
    "QSGD",
    "BudgetViolationError",
    "CapabilityError",
    "Compressor",
    "Context",
    "Contractive",
    "Entry",
    "Grid",
    "Identity",
    "Observation",
    "Observer",
    "PlotStyle",
    "RandomK",
    "Result",
    "RunInfo",
    "ScaledSign",
    "Setup",
    "State",
    "StepRule",
    "TopK",
    "algorithm_names",
    "contractive",
    "entries",
    "entry",
    "load_rule",
    "make_compressor",
    "register",
    "rule_class",
    "run",
    "run_batch",
    "run_timed",
    "state_as",
    "to_jsonable",
    "tune",
    "unregister",
]


def __getattr__(name: str) -> object:
    # 0.1.0 exported the engine's gossip kernel; W is now the one value instances.Gossip, and the kernel is
    # the engine's private execution of it (algorithms.mixing)
    if name == "MixingOperator":
        import warnings

        from decbounds.algorithms.mixing import MixingOperator

        warnings.warn("algorithms.MixingOperator is deprecated: pass W (an instances.Gossip, or a matrix or "
                      "graph) to algorithms.run; the kernel is the engine's, in algorithms.mixing",
                      DeprecationWarning, stacklevel=2)
        return MixingOperator
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
