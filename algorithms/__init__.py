"""algorithms: the class A — DeTAG, DeFacto and the baselines as small step rules on one vectorized engine.

``run(name, problem, W, *, step_size, iterations, ...) -> Result`` runs one configuration;
``run_batch`` runs a grid of configurations side by side as one (n, k, d) state; ``tune`` picks the best
T_eps over an admissible step-size grid (and DeTAG's eta, R and gossip start). See engine.py for the A_B
accounting (THEORY.md §1-2) and rules.py for each algorithm's recursion.
"""

from algorithms.api import algorithm_names, rule_class, run, run_batch
from algorithms.engine import BudgetViolationError, Context, MixingOperator
from algorithms.result import Result
from algorithms.rules import RULES, StepRule
from algorithms.tune import TuneResult, tune

__all__ = [
    "RULES",
    "BudgetViolationError",
    "Context",
    "MixingOperator",
    "Result",
    "StepRule",
    "TuneResult",
    "algorithm_names",
    "rule_class",
    "run",
    "run_batch",
    "tune",
]
