"""algorithms: the class A -- DeTAG, DeFacto and the baselines as small step rules on one vectorized engine.

``run(name, problem, W, *, step_size, iterations, ...) -> Result`` runs one configuration;
``run_batch`` runs a grid of configurations side by side as one (n, k, d) state; ``tune`` picks the best
T_eps over an admissible step-size grid (and DeTAG's eta, R and gossip start).

Extending: subclass `StepRule` (step_rule.py says what ``init``, ``step`` and ``average`` receive and may
do; the state is a `State` dataclass), give it a ``name`` and a `PlotStyle`, and ``register`` it: one
registry entry holds everything about an algorithm (class, aliases, catalog entry, plot style).
"""

from typing import TYPE_CHECKING

from decbounds.lazy_exports import lazy_exports

if TYPE_CHECKING:  # the names below are imported on first use (`lazy_exports`): ``--help`` needs no numpy
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
    from decbounds.algorithms.engine import BudgetViolationError, CapabilityError, Context
    from decbounds.algorithms.observation import Observation, Observer, RunInfo
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

#: Each public name -> the module that defines it, imported when the name is first read; the registry
#: registers the built-in rules on its first use.
_EXPORTS: dict[str, str] = {  # the rules written on the public API are attributes too, as before
    "run": "api",
    "run_batch": "api",
    "COMPRESSORS": "compression",
    "QSGD": "compression",
    "Compressor": "compression",
    "Contractive": "compression",
    "Identity": "compression",
    "RandomK": "compression",
    "ScaledSign": "compression",
    "TopK": "compression",
    "contractive": "compression",
    "make_compressor": "compression",
    "BudgetViolationError": "engine",
    "CapabilityError": "engine",
    "Context": "engine",
    "Observation": "observation",
    "Observer": "observation",
    "RunInfo": "observation",
    "load_rule": "plugins",
    "ALGORITHMS": "registry",
    "Entry": "registry",
    "algorithm_names": "registry",
    "entries": "registry",
    "entry": "registry",
    "register": "registry",
    "rule_class": "registry",
    "unregister": "registry",
    "Grid": "result",
    "Result": "result",
    "to_jsonable": "result",
    "Setup": "step_rule",
    "State": "step_rule",
    "StepRule": "step_rule",
    "state_as": "step_rule",
    "PlotStyle": "style",
    "ASYNCHRONOUS_METHODS": "timed",
    "run_timed": "timed",
    "tune": "tune",
    "BEER": "compressed",
    "ChocoSGD": "compressed",
    "ExactDiffusion": "exact_diffusion",
    "Extra": "extra",
    "MGDSGD": "mg_dsgd",
}

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

_exported_attribute, __dir__ = lazy_exports(__name__, _EXPORTS, globals())


def __getattr__(name: str) -> object:
    """A public name (`_EXPORTS`) or a submodule, imported on first use (PEP 562)."""
    # 0.1.0 exported the engine's gossip kernel; W is now the one value instances.Gossip, and the kernel is
    # the engine's private execution of it (algorithms.mixing)
    if name == "MixingOperator":
        import warnings

        from decbounds.algorithms.mixing import MixingOperator

        warnings.warn("algorithms.MixingOperator is deprecated: pass W (an instances.Gossip, or a matrix or "
                      "graph) to algorithms.run; the kernel is the engine's, in algorithms.mixing",
                      DeprecationWarning, stacklevel=2)
        return MixingOperator
    return _exported_attribute(name)
