"""The sympy symbols every rate is written in (docs/theory.md §1).

Assumptions are declared where they are true, so that sympy simplifies ``sqrt(x**2)`` to ``x`` and the like:

- ``Delta`` (f(0) - inf f), ``L`` (smoothness), ``epsilon`` (target accuracy): positive reals;
- ``n`` (workers), ``B`` (oracle queries per worker per iteration), ``D`` (graph diameter): positive integers;
- ``sigma`` (oracle standard deviation), ``varsigma`` (uniform heterogeneity, assumption (5)), ``varsigma0``
  (heterogeneity at the start point, assumption (6)): non-negative reals — zero is meaningful (exact
  gradients, homogeneous data) and Thm 1's special case sigma = 0 is one of the paper's checks;
- ``lam`` = max(|lambda_2(W)|, |lambda_n(W)|): non-negative real; lam < 1 cannot be declared to sympy and is
  enforced by ``Rate.evaluate``. The spectral gap is 1 - lam.
- ``omega`` (an unbiased compressor's E||C(x)||^2 <= (1 + omega) ||x||^2): non-negative real, 0 = no
  compression; ``delta`` (a contractive compressor's E||C(x) - x||^2 <= (1 - delta) ||x||^2): real in (0, 1],
  1 = no compression (delta <= 1 is enforced by ``Rate.evaluate``; docs/theory.md §18);
- ``G`` (a bound on the stochastic gradients' second moment, E||grad F_i(x, xi)||^2 <= G^2: CHOCO-SGD's
  theorem assumes it): positive real.
- ``n_eff`` (the effective number of neighbours n_eff(gamma) of W at the decay gamma an entry states,
  docs/theory.md §19): real in [1, n]; ``mu`` (strong convexity), ``eta`` (step size): positive reals;
  ``zeta`` (the random quadratic's E||H x||^2 = zeta ||x||^2): real >= 1 (n_eff >= 1 and zeta >= 1 are
  enforced by ``Rate.evaluate``).

``T`` (iterations) is used only to write rates "after T iterations" before inverting them; it is not an
argument of any catalog entry.
"""

from __future__ import annotations

import sympy as sp
from decbounds.bounds.vocabulary import DESCRIPTIONS, INTEGER

__all__ = [
    "DESCRIPTIONS",
    "INTEGER",
    "NONNEGATIVE",
    "RATE_SYMBOLS",
    "B",
    "D",
    "Delta",
    "G",
    "L",
    "T",
    "delta",
    "epsilon",
    "eta",
    "lam",
    "mu",
    "n",
    "n_eff",
    "omega",
    "sigma",
    "varsigma",
    "varsigma0",
    "zeta",
]

Delta = sp.Symbol("Delta", positive=True)
L = sp.Symbol("L", positive=True)
sigma = sp.Symbol("sigma", nonnegative=True)
varsigma = sp.Symbol("varsigma", nonnegative=True)
varsigma0 = sp.Symbol("varsigma0", nonnegative=True)
n = sp.Symbol("n", positive=True, integer=True)
B = sp.Symbol("B", positive=True, integer=True)
epsilon = sp.Symbol("epsilon", positive=True)
lam = sp.Symbol("lam", nonnegative=True)
D = sp.Symbol("D", positive=True, integer=True)
omega = sp.Symbol("omega", nonnegative=True)
delta = sp.Symbol("delta", positive=True)
G = sp.Symbol("G", positive=True)
n_eff = sp.Symbol("n_eff", positive=True)
mu = sp.Symbol("mu", positive=True)
eta = sp.Symbol("eta", positive=True)
zeta = sp.Symbol("zeta", positive=True)

T = sp.Symbol("T", positive=True)

#: Every symbol a catalog rate may use, by name (the keywords ``Rate.evaluate`` accepts).
RATE_SYMBOLS: dict[str, sp.Symbol] = {
    s.name: s for s in (Delta, L, sigma, varsigma, varsigma0, n, B, epsilon, lam, D, omega, delta, G,
                        n_eff, mu, eta, zeta)
}

#: Symbols whose value may be zero (the others must be strictly positive).
NONNEGATIVE: frozenset[str] = frozenset({"sigma", "varsigma", "varsigma0", "lam", "omega"})

#: Symbols whose value must be an integer; what each symbol means (help texts and error messages): kept
#: without sympy in `bounds.vocabulary`, which the CLI's help reads.
