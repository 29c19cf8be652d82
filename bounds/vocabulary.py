"""The names the bounds' command lines show, without sympy or numpy (a subcommand's ``--help`` imports this
module only): the rate symbols and what each means, the rate conventions, and the PEP's choices.
`bounds.symbols`, `bounds.rate` and `bounds.pep` take theirs from here."""

from __future__ import annotations

__all__ = [
    "CONVENTIONS",
    "CRITERIA",
    "DESCRIPTIONS",
    "FUNCTION_CLASSES",
    "HETEROGENEITY",
    "INITIAL_CONDITIONS",
    "INTEGER",
    "KINDS",
    "PEP_SOLVERS",
    "STARTS",
    "STATUSES",
    "SYMBOL_NAMES",
]

#: The rate symbols' names, in `bounds.symbols.RATE_SYMBOLS`' order (the keywords ``Rate.evaluate`` takes).
SYMBOL_NAMES: tuple[str, ...] = ("Delta", "L", "sigma", "varsigma", "varsigma0", "n", "B", "epsilon", "lam",
                                 "D", "omega", "delta", "G", "n_eff", "mu", "eta", "zeta")

#: Symbols whose value must be an integer.
INTEGER: frozenset[str] = frozenset({"n", "B", "D"})

#: What each symbol means, for help texts (CLI) and error messages.
DESCRIPTIONS: dict[str, str] = {
    "Delta": "f(x0) - inf f, the initial suboptimality (> 0)",
    "L": "smoothness constant of every local f_i (> 0)",
    "sigma": "oracle noise: E||g - grad f_i||^2 <= sigma^2 (>= 0)",
    "varsigma": "uniform heterogeneity, (1/n) sum ||grad f_i - grad f||^2 <= varsigma^2 for all x (>= 0)",
    "varsigma0": "heterogeneity at the start point x0 = 0 only (>= 0)",
    "n": "number of workers (integer >= 1)",
    "B": "oracle queries per worker per iteration (integer >= 1)",
    "epsilon": "target accuracy in the rate's convention (> 0)",
    "lam": "max(|lambda_2|, |lambda_n|) of the gossip matrix, in [0, 1); spectral gap = 1 - lam",
    "D": "graph diameter (integer >= 1)",
    "omega": "unbiased compressor: E||C(x)||^2 <= (1 + omega) ||x||^2 (>= 0; 0 = no compression)",
    "delta": "contractive compressor: E||C(x) - x||^2 <= (1 - delta) ||x||^2, in (0, 1] (1 = no compression)",
    "G": "bounded second moment of the stochastic gradients, E||grad F_i(x, xi)||^2 <= G^2 (> 0)",
    "n_eff": "effective number of neighbours n_eff(gamma) of W at the entry's decay gamma, in [1, n]",
    "mu": "strong convexity constant of f (> 0)",
    "eta": "step size (> 0)",
    "zeta": "noise multiplier of the random quadratic, E||H x||^2 = zeta ||x||^2 (>= 1)",
}

#: A rate's kind, its criterion (E||grad f|| <= eps, E||grad f||^2 <= eps, or E f(x) - f* <= eps for the
#: convex entries; only the first two convert into each other), its status.
KINDS = ("lower", "upper")
CONVENTIONS = ("grad_norm", "grad_norm_sq", "function_value")
STATUSES = ("confirmed", "recalled", "derived")

#: The computed worst case's choices (`bounds.worst_case`, docs/worst_case.md).
PEP_SOLVERS = ("CLARABEL", "SCS")
FUNCTION_CLASSES = ("nonconvex", "convex", "strongly_convex")
CRITERIA = ("gradient", "worker_gradient", "function_value", "distance", "consensus")
INITIAL_CONDITIONS = ("function_value", "distance")
HETEROGENEITY = ("averages", "optimum")
STARTS = ("equal", "unequal")
