"""The catalog of iteration-complexity bounds (`RATES`), and the API that compares them.

Entries, in ``names()`` order: the paper's (Lu & De Sa, ICML 2021 / JMLR 2023: Thm 1, Cor 2, App. C.1,
Thm 4, Cor 6, the Table 2 baselines, the mini-batch SGD rate), the hard instances with explicit constants
(Setting 1, Lemma 8; Cor 2's path), later results (docs/theory.md §13, §17) and communication compression
(§18). ``gap`` converts both rates to one convention before dividing; ``dominant_term`` reads eps in the
entry's own convention unless ``convention=`` is given. Where an upper bound falls below a lower bound
(constants 1): docs/errata.md E28.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING

import sympy as sp
from decbounds.bounds.constants import (
    SETTING1_CHAIN_DENOMINATOR,
    SETTING2_CHAIN_DENOMINATOR,
    ZERO_CHAIN_GRAD_INF,
    chain_length,
)
from decbounds.bounds.rate import CONVENTIONS, Rate, RateOverflowError, _exact, _validated
from decbounds.bounds.symbols import (
    RATE_SYMBOLS,
    B,
    D,
    Delta,
    G,
    L,
    T,
    delta,
    epsilon,
    lam,
    n,
    omega,
    sigma,
    varsigma,
    varsigma0,
)

from decbounds.lazy_exports import deprecated_attributes
from decbounds.registry import Registry, register_each, require_instance

__all__ = [
    "CENTRALIZED_SGD_AFTER_T",
    "COR2_INSTANCE_VARSIGMA0",
    "PATH_HOP_DISTANCE",
    "RATES",
    "SETTING1_CHAIN_LENGTH",
    "SETTING1_REVEAL_PROBABILITY",
    "SETTING1_REVEAL_PROBABILITY_SHARP",
    "SETTING2_CHAIN_LENGTH",
    "dominant_term",
    "gap",
    "get",
    "names",
    "path_hop_distance",
    "register_rate",
    "setting1_chain_length",
    "setting1_reveal_probability",
    "setting2_chain_length",
    "unregister_rate",
]

# The zero-chain construction's constants (Arjevani et al. Lemma 2) live in bounds.constants, the one
# definition that instances/ imports too.


def _capped_probability(numerator: sp.Expr) -> sp.Expr:
    """min(numerator / sigma^2, 1) as numerator / max(sigma^2, numerator): defined (= 1) at sigma = 0 too."""
    return numerator / sp.Max(sigma**2, numerator)


#: Setting 1 chain length, corrected (errata E2): floor(Delta L / (4 Delta_0 l_1 eps^2)) = floor(Delta L /
#: (7296 eps^2)). The paper prints floor(Delta / (Delta_0 l_1 (2 eps)^2)), without L.
SETTING1_CHAIN_LENGTH = sp.floor(Delta * L / (SETTING1_CHAIN_DENOMINATOR * epsilon**2))

#: Setting 1 reveal probability p = min((2 G_inf eps)^2 / sigma^2, 1) (docs/theory.md §4).
SETTING1_REVEAL_PROBABILITY = _capped_probability((2 * ZERO_CHAIN_GRAD_INF * epsilon) ** 2)

#: Our sharper reveal probability p = min(4 e^3 eps^2 / sigma^2, 1) (docs/errata.md E23; derivation in
#: ``hard_instance_sampling_sharp``'s doc).
SETTING1_REVEAL_PROBABILITY_SHARP = _capped_probability(4 * sp.E**3 * epsilon**2)

#: Setting 2 / Cor 2 chain length floor(Delta L / (Delta_0 l_1 (12 eps)^2)) = floor(Delta L / (262656 eps^2)).
SETTING2_CHAIN_LENGTH = sp.floor(Delta * L / (SETTING2_CHAIN_DENOMINATOR * epsilon**2))

#: Hops between the end groups I_0 and I_1 (|I_0| = |I_1| = ceil(n/3)) of Cor 2's path (docs/errata.md E17).
PATH_HOP_DISTANCE = n - 2 * sp.ceiling(n / 3) + 1

#: Heterogeneity at the start point of Cor 2's path instance (derived by us; see the module docstring):
#: grad f_i(0) = -2 eps sqrt(e) (n/|I_0|) e_1 on I_0 and 0 elsewhere, so
#: varsigma0^2 = 4 e eps^2 (n/|I_0| - 1) with |I_0| = ceil(n/3).
COR2_INSTANCE_VARSIGMA0 = 2 * epsilon * sp.sqrt(sp.E * (n / sp.ceiling(n / 3) - 1))

#: Mini-batch SGD after T iterations, bound on the average E||grad f||^2 as corrected in docs/errata.md E5:
#: sigma sqrt(Delta L) / sqrt(n B T) + Delta L / T (the paper prints Delta L sigma / sqrt(n B T)).
CENTRALIZED_SGD_AFTER_T = sigma * sp.sqrt(Delta * L) / sp.sqrt(n * B * T) + Delta * L / T

#: The paper's sampling term, shared by every row of Table 2.
_SAMPLING = Delta * L * sigma**2 / (n * B * epsilon**4)
_GOSSIP_COMMUNICATION = Delta * L / (epsilon**2 * sp.sqrt(1 - lam))
_DETAG_LOG = sp.log(n + varsigma0 * n / (epsilon * sp.sqrt(Delta * L)))
_PAPER = "Lu & De Sa, ICML 2021 / JMLR 24(93) 2023"

_UNIFORM = "uniform heterogeneity (5): (1/n) sum_i ||grad f_i(x) - grad f(x)||^2 <= varsigma^2 for all x"
_AT_START = "heterogeneity at the start only (6): (1/n) sum_i ||grad f_i(0) - grad f(0)||^2 <= varsigma0^2"
_SYMMETRIC_W = "W symmetric doubly stochastic, lam = max(|lambda_2|, |lambda_n|) < 1"
# What the source itself could be checked against, and what could not.
_HUANG_YUAN_PROVENANCE = (
    "Checked against the abstract (arXiv 2211.00533; Xinmeng Huang, Kun Yuan): it states 'the first lower "
    "bound complexity' for non-convex decentralized stochastic optimization over time-varying networks "
    "and 'a new decentralized algorithm to nearly attain the lower bound'. Not checked: the theorem's "
    "formula, its connectivity measure and the algorithm's rate, so the status stays recalled."
)
_BATCH = ("one sample per iteration in the source; a B-query mini-batch enters as sigma^2 / B "
          "(our substitution)")
# What the compression papers could be checked against: their abstracts, never a theorem.
_COMPRESSION_PROVENANCE = (
    "Checked against the abstracts (Huang, Chen, Yin & Yuan, NeurIPS 2022; He, Huang, Chen, Yin & Yuan, "
    "arXiv 2305.07612): lower bounds in six settings (strongly convex, convex, non-convex x unbiased, "
    "contractive compressors) for distributed stochastic optimization, and NEOLITHIC attaining them 'up to "
    "logarithmic factors under mild conditions'. Not checked: the theorems, so no formula is confirmed."
)
_SERVER = ("n workers and a server; each round every worker sends one compressed vector (one-way "
           "compression of the uplink)")


def _paper_entries() -> list[Rate]:
    """The paper's bounds (Thm 1, Cor 2, App. C.1, Thm 4, Cor 6, Table 2, the mini-batch SGD rate) and the
    hard instances with their explicit constants."""
    entries = [
        Rate(
            name="lower_bound_any",
            kind="lower",
            source=f"{_PAPER}, Thm 1 (Table 2 row 'L.B., central')",
            convention="grad_norm",
            terms={"sampling": _SAMPLING, "communication": Delta * L * D / epsilon**2},
            assumptions=("any zero-respecting algorithm in A_B", "graph of diameter D in {1, ..., n-1}",
                         "f in F_{Delta,L}, oracle in O_{sigma^2}"),
            doc="Omega(Delta L sigma^2/(n B eps^4) + Delta L D/eps^2); the maximum of two hard instances "
                "(docs/theory.md §4.2-§4.3). n = B = D = 1 recovers Arjevani et al.; sigma = 0, D = 1 Carmon "
                "et al.",
        ),
        Rate(
            name="lower_bound_gossip",
            kind="lower",
            source=f"{_PAPER}, Cor 2 (Table 2 row 'L.B., decentral')",
            convention="grad_norm",
            terms={"sampling": _SAMPLING, "communication": _GOSSIP_COMMUNICATION},
            assumptions=("algorithms in A_{B,W} (gossip with one fixed W)",
                         "proved at lam = cos(pi/n) on the path graph only; Yuan et al. 2022 extend it to "
                         "lam in [0, cos(pi/n)] with ring lattices", "n >= 2"),
            doc="Omega(Delta L sigma^2/(n B eps^4) + Delta L/(eps^2 sqrt(1 - lam))), from Thm 1 with "
                "1/sqrt(1 - cos(pi/n)) = O(D) on the path (docs/theory.md §3).",
        ),
        Rate(
            name="lower_bound_async",
            kind="lower",
            source=f"{_PAPER}, App. C.1 (asynchronous extension)",
            convention="grad_norm",
            terms={"sampling": Delta * L * sigma**2 / (B * epsilon**4),
                   "communication": Delta * L * D / epsilon**2},
            assumptions=("one iteration = one gradient update on a randomly chosen worker",
                         "holds with probability 1"),
            doc="Omega(Delta L sigma^2/(B eps^4) + Delta L D/eps^2): no 1/n on the sampling term, because "
                "an iteration updates a single worker (docs/theory.md §2).",
        ),
        Rate(
            name="defacto",
            kind="upper",
            source=f"{_PAPER}, Thm 4 (DeFacto, Alg. 1)",
            convention="grad_norm",
            terms={"sampling": _SAMPLING, "communication": Delta * L * D / epsilon**2},
            assumptions=("exact-averaging factors W_0..W_{R-1} on G with R in [D, 2D] (Lemma 3); not gossip "
                         "matrices", "no heterogeneity assumption"),
            doc="O(Delta L sigma^2/(n B eps^4) + Delta L D/eps^2): mini-batch SGD with K = T/(2R) steps and "
                "n B R samples per step, R <= 2D. Matches Thm 1, so Theta.",
        ),
        Rate(
            name="detag",
            kind="upper",
            source=f"{_PAPER}, Cor 6 (DeTAG, Alg. 2)",
            convention="grad_norm",
            terms={"sampling": _SAMPLING, "communication": _GOSSIP_COMMUNICATION * _DETAG_LOG},
            assumptions=(_AT_START, _SYMMETRIC_W,
                         "R = max(log(n)/2, log(varsigma0^2 T/(Delta L))/2)/sqrt(1 - lam) and alpha of Cor 6 "
                         "(bounds.detag_params)",
                         "accelerated gossip contraction rho = (1 - sqrt(1 - lam))^R without Ye et al.'s "
                         "absolute constant (UNCONFIRMED, docs/errata.md E9)"),
            doc="O(Delta L sigma^2/(n B eps^4) + Delta L log(n + varsigma0 n/(eps sqrt(Delta L)))/(eps^2 "
                "sqrt(1 - lam))). The 'n +' inside the log is Cor 6's (and Thm 7's); Table 2 prints the log "
                "without it (errata E6), which would go negative for small varsigma0. The ratio to Cor 2's "
                "communication term is exactly the log factor.",
        ),
    ]
    table2_note = ("Table 2 as printed, absolute constants 1; the term mixes units (varsigma is a gradient "
                   "norm) and is reproduced as tabulated (docs/theory.md §8).")
    dpsgd_comm = Delta * L * n * varsigma / (epsilon**2 * (1 - lam) ** 2)
    tracking_comm = lam**2 * Delta * L * n * varsigma0 / (epsilon**2 * (1 - lam) ** 3)
    for name, source, comm, assumption in (
        ("dpsgd", "Lian et al. 2017a (D-PSGD)", dpsgd_comm, _UNIFORM),
        ("sgp", "Assran et al. 2019 (SGP)", dpsgd_comm, _UNIFORM),
        ("d2", "Tang et al. 2018b (D^2)", tracking_comm, _AT_START),
        ("dsgt", "Zhang & You 2019c (DSGT)", tracking_comm, _AT_START),
        ("gt_dsgd", "Xin et al. 2021b (GT-DSGD)", tracking_comm, _AT_START),
    ):
        extra = ("lambda_min(W) >= -1/3",) if name == "d2" else ()
        entries.append(Rate(
            name=name,
            kind="upper",
            source=f"{source}, as tabulated in {_PAPER}, Table 2",
            convention="grad_norm",
            terms={"sampling": _SAMPLING, "communication": comm},
            assumptions=(assumption, _SYMMETRIC_W, *extra),
            doc=table2_note,
        ))
    entries += [
        Rate(
            name="centralized_sgd",
            kind="upper",
            source=f"mini-batch SGD with n B samples per step, as used in the proof of {_PAPER}, Thm 4 "
                   "(corrected, docs/errata.md E5)",
            convention="grad_norm",
            terms={"sampling": _SAMPLING, "optimization": Delta * L / epsilon**2},
            assumptions=("a central server (or exact averaging every iteration)",),
            doc="Invert CENTRALIZED_SGD_AFTER_T = sigma sqrt(Delta L)/sqrt(n B T) + Delta L/T <= eps^2 "
                "term by term (E||grad f|| <= sqrt(E||grad f||^2), Jensen): "
                "T = Delta L sigma^2/(n B eps^4) + Delta L/eps^2. The printed Delta L sigma/sqrt(n B T) "
                "would give Delta^2 L^2 sigma^2/(n B eps^4), which does not match Thm 4. No row of "
                "Table 2; the text's Theta(Delta L sigma^2/(n eps^4)) is the B = 1 sampling term.",
        ),
        Rate(
            name="hard_instance_sampling",
            kind="lower",
            source=f"{_PAPER}, proof of Thm 1, Setting 1 and Lemma 8 with delta = 1/2 (corrected T_c, "
                   "docs/errata.md E2)",
            convention="grad_norm",
            # Max(0, .): a chain shorter than 2 (Delta L too small for eps) makes the bound vacuous
            terms={"sampling": sp.Max(0, SETTING1_CHAIN_LENGTH - 1)
                   / (n * B * SETTING1_REVEAL_PROBABILITY * (sp.E - 1))},
            assumptions=("complete graph, every worker holds the scaled zero chain (homogeneous)",
                         "probabilistic zero-chain oracle with reveal probability p", "zero-respecting",
                         "holds with probability >= 1/2 per run (docs/errata.md E21)"),
            probability=0.5,
            doc="T_eps >= (T_c - 1)/(n B p (e - 1)) with T_c = floor(Delta L/(7296 eps^2)) (Delta_0 l_1 = "
                "12 * 152, corrected to include L) and p = min((2 * 23 eps)^2/sigma^2, 1). Explicit "
                "constants: for small eps it is about Delta L sigma^2/(2.653e7 n B eps^4). Vacuous (<= 0) "
                "while T_c <= 1, i.e. Delta L < 14592 eps^2. Using n B p instead of min(n B p, 1) keeps the "
                "paper's (weaker, still valid) form.",
        ),
        Rate(
            name="hard_instance_sampling_sharp",
            kind="lower",
            source="derived by us from the Setting 1 construction of " + _PAPER + " (docs/errata.md E23)",
            convention="grad_norm",
            terms={"sampling": sp.Max(0, SETTING1_CHAIN_LENGTH - 1)
                   / (n * B * SETTING1_REVEAL_PROBABILITY_SHARP * (sp.E - 1))},
            assumptions=("as hard_instance_sampling", "holds with probability >= 1/2 per run"),
            status="derived",
            probability=0.5,
            doc=(
                "Derivation. At prog(x) = k the oracle randomizes only coordinate k+1 (zero chain). Its "
                "partial derivative is d f^/d x_{k+1} = -Psi(-x_k) Phi'(-x_{k+1}) - Psi(x_k) Phi'(x_{k+1}) "
                "(the link_{k+1} terms vanish, Psi'(0) = Psi(0) = 0), and at x_{k+1} = 0 one of Psi(+-x_k) "
                "is 0, so |d f^/d x_{k+1}| = Psi(|x_k|) Phi'(0) <= e * sqrt(e) = e^(3/2) (sup Psi = e, "
                "Phi'(0) = sqrt(e)). The oracle multiplies that coordinate by z/p with z ~ Bernoulli(p), "
                "so its variance is at most e^3 (1 - p)/p, not G_inf^2 (1 - p)/p = 529 (1 - p)/p. After "
                "the rescaling (gradient scale L lambda_s/l_1 = 2 eps) the variance is at most "
                "4 e^3 eps^2 (1 - p)/p <= 4 e^3 eps^2/p, which is <= sigma^2 for p = min(4 e^3 eps^2/"
                "sigma^2, 1). Lemma 8 then gives the same (T_c - 1)/(n B p (e - 1)) with this p: "
                "2116/(4 e^3) = 26.3 times the paper's explicit bound when both p < 1; small-eps constant "
                "7296 * 4 e^3 * (e - 1) = 1.007e6 instead of 2.653e7. To be checked by measuring the "
                "oracle's variance (oracles/)."
            ),
        ),
        Rate(
            name="hard_instance_communication",
            kind="lower",
            source=f"derived from {_PAPER}, Cor 2 / Setting 2 construction (exact hop count, errata E17)",
            convention="grad_norm",
            # T_c = 0 (Delta L < 262656 eps^2) leaves no chain: the bound is 0 then, never negative
            terms={"communication": sp.Piecewise(
                (0, SETTING2_CHAIN_LENGTH < 1), (1 + (SETTING2_CHAIN_LENGTH - 1) * PATH_HOP_DISTANCE, True))},
            assumptions=("path graph on n workers, |I_0| = |I_1| = ceil(n/3) at the ends, exact gradients",
                         "zero-respecting: information moves one hop per iteration", "deterministic"),
            status="derived",
            doc="T_eps >= 1 + (T_c - 1)(n - 2 ceil(n/3) + 1) with T_c = floor(Delta L/(262656 eps^2)) = "
                "floor(Delta L/(Delta_0 l_1 (12 eps)^2)). Coordinate 1 is reachable after one iteration (I_0 "
                "holds -Psi(1)Phi(x_1)); each later coordinate must cross the n - 2 ceil(n/3) + 1 hops "
                "between I_0 and I_1. The proof's T_c * dist is only an Omega-level count: it exceeds this "
                "exact count when dist > 1. Does not depend on lam (it is Cor 2's instance, "
                "lam = cos(pi/n)).",
        ),
    ]
    return entries


def _later_entries() -> list[Rate]:
    """Later results (docs/theory.md §13) and time-varying networks (§17)."""
    # SUDA's ED/D^2 case (Alghunaim & Yuan 2022): one set of terms for D^2 and Exact Diffusion, which is D^2
    # run with the lazy matrix (I + W)/2
    suda_terms = {
        "sampling": L * Delta * sigma**2 / (n * B * epsilon**2),
        "consensus_noise": L * Delta * lam * sigma
        / (sp.sqrt(B) * sp.sqrt(1 - lam) * epsilon ** sp.Rational(3, 2)),
        "communication": L * Delta * lam / ((1 - lam) * epsilon),
    }
    return [
        Rate(
            name="koloskova2020",
            kind="upper",
            source="Koloskova, Loizou, Boreiri, Jaggi, Stich, ICML 2020 (arXiv 2003.10422), non-convex "
                   "decentralized SGD",
            convention="grad_norm_sq",
            terms={
                "sampling": L * Delta * sigma**2 / (n * B * epsilon**2),
                "heterogeneity": L * Delta * varsigma / ((1 - lam**2) * epsilon ** sp.Rational(3, 2)),
                "consensus_noise": L * Delta * sigma
                / (sp.sqrt(B) * sp.sqrt(1 - lam**2) * epsilon ** sp.Rational(3, 2)),
                "communication": L * Delta / ((1 - lam**2) * epsilon),
            },
            assumptions=(_UNIFORM + " (their zeta)", _SYMMETRIC_W,
                         "fixed W: consensus rate p = 1 - lam^2, window tau = 1", _BATCH),
            status="recalled",
            doc="O(L Delta [sigma^2/(n eps^2) + (zeta tau + sigma sqrt(p tau))/(p eps^(3/2)) + tau/(p eps)]) "
                "for E||grad f||^2 <= eps, with tau = 1 and p = 1 - lam^2 for a fixed W (docs/theory.md §13, "
                "[recalled]).",
        ),
        Rate(
            name="yuan2022_lower_bound",
            kind="lower",
            source="Yuan, Huang, Chen, Zhang, Zhang, Pan, NeurIPS 2022 (arXiv 2210.07863), lower bound",
            convention="grad_norm_sq",
            terms={"sampling": L * Delta * sigma**2 / (n * B * epsilon**2),
                   "communication": L * Delta / (sp.sqrt(1 - lam) * epsilon)},
            assumptions=("general W with beta = lam in [0, cos(pi/n)] (ring-lattice graphs)", _BATCH),
            status="recalled",
            doc="(1/T) sum E||grad f||^2 = Omega(sqrt(L Delta sigma^2/(n T)) + L Delta/(sqrt(1 - beta) T)); "
                "inverting each term at eps gives T = Omega(L Delta sigma^2/(n eps^2) + L Delta/"
                "(sqrt(1 - beta) eps)). In the grad_norm convention it coincides with Cor 2.",
        ),
        Rate(
            name="mg_dsgd",
            kind="upper",
            source="Yuan, Huang, Chen, Zhang, Zhang, Pan, NeurIPS 2022 (arXiv 2210.07863), MG-DSGD",
            convention="grad_norm_sq",
            terms={"sampling": L * Delta * sigma**2 / (n * B * epsilon**2),
                   "communication": L * Delta * sp.log(n) / (sp.sqrt(1 - lam) * epsilon)},
            assumptions=("multi-gossip + gradient accumulation, no gradient tracking", _BATCH,
                         "'additional mild conditions' of the source (not recalled)"),
            status="recalled",
            doc="Matches yuan2022_lower_bound up to logarithms. The hidden log is recalled as log n (the "
                "multi-gossip rounds that reach a 1/sqrt(n) contraction, as in DeTAG's R) -- UNCONFIRMED. "
                "The source's abstract states an optimal convergence rate for non-convex stochastic "
                "decentralized optimization with general weight matrices (and one under the PL condition); "
                "its algorithm statement and this rate could not be checked, so the entry and the rule stay "
                "recalled.",
        ),
        Rate(
            name="alghunaim_yuan2022",
            kind="upper",
            source="Alghunaim & Yuan, IEEE TSP 2022 (arXiv 2110.09993), SUDA: ED/D^2",
            convention="grad_norm_sq",
            terms=dict(suda_terms),
            assumptions=(_SYMMETRIC_W, "no heterogeneity assumption (ED/D^2 are heterogeneity-free)", _BATCH,
                         "the L Delta prefactor is our normalization"),
            status="recalled",
            doc="Rough form sigma/sqrt(n T) + lam^(2/3) sigma^(2/3)/(gamma^(1/3) T^(2/3)) + lam/(gamma T) "
                "for the average E||grad f||^2 (gamma = 1 - lam; exponents [recalled]); inverting each term "
                "at eps: T = sigma^2/(n eps^2) + lam sigma/(sqrt(gamma) eps^(3/2)) + lam/(gamma eps), "
                "times L Delta.",
        ),
        Rate(
            name="exact_diffusion",
            kind="upper",
            source="Exact Diffusion: Yuan, Ying, Zhao, Sayed, IEEE TSP 67(3) 2019; NIDS: Li, Shi, Yan, "
                   "IEEE TSP 67(17) 2019; non-convex stochastic rate from Alghunaim & Yuan, IEEE TSP 2022 "
                   "(arXiv 2110.09993), SUDA's ED/D^2 case",
            convention="grad_norm_sq",
            terms=dict(suda_terms),
            assumptions=(_SYMMETRIC_W, "lazy combination W~ = (I + W)/2 (no lambda_min condition)",
                         "no heterogeneity assumption", _BATCH, "the L Delta prefactor is our normalization"),
            status="recalled",
            doc="The alghunaim_yuan2022 form for the algorithm it analyses (ED = D^2 with W~ = (I + W)/2; "
                "NIDS with a common step is the same recursion), exponents [recalled], UNCONFIRMED: "
                "T = L Delta [sigma^2/(n eps^2) + lam sigma/(sqrt(1 - lam) eps^(3/2)) "
                "+ lam/((1 - lam) eps)]. "
                "Its communication term is 1/gap (no acceleration), against Cor 2's 1/sqrt(gap).",
        ),
        Rate(
            name="extra",
            kind="upper",
            source="EXTRA: Shi, Ling, Wu, Yin, SIAM J. Optim. 25(2) 2015; non-convex stochastic rate as in "
                   "Alghunaim & Yuan, IEEE TSP 2022 (arXiv 2110.09993), whose SUDA family contains EXTRA",
            convention="grad_norm_sq",
            terms={
                "sampling": L * Delta * sigma**2 / (n * B * epsilon**2),
                "consensus_noise": L * Delta * sigma
                / (sp.sqrt(B) * sp.sqrt(1 - lam) * epsilon ** sp.Rational(3, 2)),
                "communication": L * Delta / ((1 - lam) * epsilon),
            },
            assumptions=(_SYMMETRIC_W, "W~ = (I + W)/2 in the correction term", "no heterogeneity assumption",
                         _BATCH, "the L Delta prefactor is our normalization"),
            status="recalled",
            doc="Shape recalled as SUDA's ED/D^2 rate without the lam factors (EXTRA's network terms are not "
                "smaller than ED's), UNCONFIRMED: T = L Delta [sigma^2/(n eps^2) + sigma/(sqrt(1 - lam) "
                "eps^(3/2)) + 1/((1 - lam) eps)]. Shi et al. 2015 prove exact convergence for convex f with "
                "exact gradients and alpha = O(1/L); the non-convex stochastic rate is not theirs.",
        ),
        Rate(
            name="huang_yuan2022",
            kind="lower",
            source="Huang & Yuan 2022, Optimal Complexity in Non-Convex Decentralized Learning over "
                   "Time-Varying Networks (arXiv 2211.00533)",
            convention="grad_norm_sq",
            terms={"sampling": L * Delta * sigma**2 / (n * B * epsilon**2),
                   "communication": L * Delta / ((1 - lam) * epsilon)},
            assumptions=("time-varying gossip matrices; lam bounds the connectivity of each one", _BATCH),
            status="recalled",
            doc="Expected shape: the same sigma term, no square-root acceleration of the connectivity term "
                "(1/gamma, not 1/sqrt(gamma)), consistent with Kovalev et al. and Metelev et al. "
                "(docs/theory.md §13, §17, formula [recalled]). " + _HUANG_YUAN_PROVENANCE,
        ),
        Rate(
            name="huang_yuan2022_algorithm",
            kind="upper",
            source="Huang & Yuan 2022 (arXiv 2211.00533), their algorithm over time-varying networks",
            convention="grad_norm_sq",
            terms={"sampling": L * Delta * sigma**2 / (n * B * epsilon**2),
                   "communication": L * Delta * sp.log(n) / ((1 - lam) * epsilon)},
            assumptions=("time-varying gossip matrices; lam bounds the connectivity of each one", _BATCH,
                         "the hidden logarithm recalled as log n (UNCONFIRMED)"),
            status="recalled",
            doc="The abstract (found, see huang_yuan2022) says the algorithm 'nearly attains' the lower "
                "bound: huang_yuan2022 times a logarithm in the communication term, recalled here as "
                "log n (multi-round gossip reaching a 1/sqrt(n) contraction, as in DeTAG's R and "
                "MG-DSGD's) -- UNCONFIRMED. " + _HUANG_YUAN_PROVENANCE,
        ),
        Rate(
            name="ying2021_one_peer_exponential",
            kind="upper",
            source="Ying, Yuan, Chen, Hu, Pan & Yin, Exponential graph is provably efficient for "
                   "decentralized deep training, NeurIPS 2021 (arXiv 2110.13363): D(m)SGD on the one-peer "
                   "exponential graph, n a power of two",
            convention="grad_norm_sq",
            terms={
                "sampling": L * Delta * sigma**2 / (n * B * epsilon**2),
                "heterogeneity": L * Delta * varsigma * sp.log(n, 2) / epsilon ** sp.Rational(3, 2),
                "consensus_noise": L * Delta * sigma * sp.sqrt(sp.log(n, 2))
                / (sp.sqrt(B) * epsilon ** sp.Rational(3, 2)),
                "communication": L * Delta * sp.log(n, 2) / epsilon,
            },
            assumptions=(_UNIFORM + " (their b^2)", "the one-peer exponential schedule, n = 2^tau "
                         "(instances.one_peer_exponential): every tau = log2 n consecutive rounds "
                         "average exactly", _BATCH),
            status="recalled",
            doc="Checked against the abstract (NeurIPS 2021): 'a sequence of log(n) one-peer exponential "
                "graphs, in which each node communicates to one single neighbor per iteration, can together"
                " achieve exact averaging', and DSGD over it averages 'as effective as its static "
                "counterpart' (whose gap the paper proves is O(1/log2 n)); decbounds tests the exact "
                "averaging for n = 2..1024 (tests/instances/test_schedules.py). The rate itself is "
                "recalled: koloskova2020's time-varying form O(L Delta [sigma^2/(n eps^2) + (zeta tau + "
                "sigma sqrt(p tau))/(p eps^(3/2)) + tau/(p eps)]) with the exact-averaging window tau = "
                "log2 n and p = 1, inverted in E||grad f||^2 <= eps (docs/theory.md §17).",
        ),
        Rate(
            name="centralized_lower_bound",
            kind="lower",
            source="Arjevani, Carmon, Duchi, Foster, Srebro, Woodworth 2019 (arXiv 1912.02365); "
                   "Carmon et al. (arXiv 1710.11606)",
            convention="grad_norm",
            terms={"sampling": Delta * L * sigma**2 / epsilon**4, "optimization": Delta * L / epsilon**2},
            assumptions=("a single worker with one unbiased bounded-variance query per iteration",),
            status="recalled",
            doc="Omega(Delta L sigma^2 eps^-4 + Delta L eps^-2); sigma = 0 leaves Carmon et al.'s "
                "deterministic Omega(Delta L eps^-2). Thm 1 at n = B = D = 1 reproduces it.",
        ),
    ]


def _catalog() -> dict[str, Rate]:
    """The built-in entries, in catalog order (`names()`)."""
    entries = _paper_entries() + _later_entries() + _compression_entries()
    return {entry.name: entry for entry in entries}


def _compression_entries() -> list[Rate]:
    """The compressed entries (docs/theory.md §18). The lower bounds reduce to their uncompressed
    counterpart at omega = 0 or delta = 1; the upper bounds (other analyses) do not.
    """
    sampling = L * Delta * sigma**2 / (n * B * epsilon**2)
    gap_ = 1 - lam
    return [
        Rate(
            name="huang2022_unbiased_lower",
            kind="lower",
            source="Huang, Chen, Yin & Yuan, Lower Bounds and Nearly Optimal Algorithms in Distributed "
                   "Learning with Communication Compression, NeurIPS 2022; He, Huang, Chen, Yin & Yuan, "
                   "arXiv 2305.07612, non-convex case, unbiased compressors",
            convention="grad_norm_sq",
            terms={"sampling": sampling, "communication": (1 + omega) * L * Delta / epsilon},
            assumptions=(_SERVER, "unbiased omega-compressors", "f in F_{Delta,L}, oracle in O_{sigma^2}",
                         _BATCH, "formula recalled, UNCONFIRMED (with independent unbiased compressors "
                         "the rounds can do better: He, Huang & Yuan, Unbiased Compression Saves "
                         "Communication in Distributed Optimization: When and How Much?, NeurIPS 2023, arXiv "
                         "2305.16297, convex lower and upper bounds [recalled])"),
            status="recalled",
            doc="Omega(L Delta sigma^2/(n eps) + (1 + omega) L Delta/eps) for E||grad f||^2 <= eps: the "
                "centralized bound with the communication rounds multiplied by 1 + omega. At omega = 0 it "
                "is lower_bound_any at D = 1 (in grad_norm_sq). Not a gossip bound: no decentralized lower "
                "bound with compression was found (docs/theory.md §18). " + _COMPRESSION_PROVENANCE,
        ),
        Rate(
            name="huang2022_contractive_lower",
            kind="lower",
            source="Huang, Chen, Yin & Yuan, NeurIPS 2022; He, Huang, Chen, Yin & Yuan, arXiv 2305.07612, "
                   "non-convex case, contractive compressors",
            convention="grad_norm_sq",
            terms={"sampling": sampling, "communication": L * Delta / (delta * epsilon)},
            assumptions=(_SERVER, "contractive delta-compressors", "f in F_{Delta,L}, oracle in O_{sigma^2}",
                         _BATCH, "formula recalled, UNCONFIRMED"),
            status="recalled",
            doc="Omega(L Delta sigma^2/(n eps) + L Delta/(delta eps)): the rounds multiplied by 1/delta. At "
                "delta = 1 it is lower_bound_any at D = 1 (in grad_norm_sq); with delta = 1/(1 + omega) (an "
                "unbiased compressor scaled) it equals huang2022_unbiased_lower. " + _COMPRESSION_PROVENANCE,
        ),
        Rate(
            name="choco_sgd",
            kind="upper",
            source="CHOCO-SGD: Koloskova, Stich & Jaggi, ICML 2019; non-convex rate: Koloskova, Lin, Stich & "
                   "Jaggi, Decentralized Deep Learning with Arbitrary Communication Compression, ICLR 2020, "
                   "Thm 4.1",
            convention="grad_norm_sq",
            terms={"sampling": 64 * (Delta + L * sigma**2 / B) ** 2 / (n * epsilon**2),
                   "communication": 48 * 82**2 * G**2 * n * L / (gap_**4 * delta**2 * epsilon),
                   "theorem_condition": 64 * n * L**2},
            assumptions=(_SYMMETRIC_W + "; rho = 1 - lam, beta = ||I - W||_2",
                         "contractive delta-compressor",
                         "bounded second moment E||grad F_i(x, xi)||^2 <= G^2",
                         "eta = sqrt(n)/sqrt(T + 1) and gamma = rho^2 delta/(16 rho + rho^2 + 4 beta^2 + 2 "
                         "rho beta^2 - 8 rho delta) (algorithms.ChocoSGD's gamma='theory')", "T >= 64 n L^2",
                         "the mean of the workers' variances sigma_i^2 as sigma^2; " + _BATCH[0].lower()
                         + _BATCH[1:]),
            status="derived",
            doc="Thm 4.1 as printed (docs/theory.md §18): (1/(T+1)) sum_t ||grad f(x-bar_t)||^2 <= "
                "(4 (f(x-bar_0) - f*) + 4 sigma^2 L)/sqrt(n (T+1)) + 24 G^2 n L/(c^2 (T+1)) with c = "
                "rho^2 delta/82, for T >= 64 n L^2. T_eps is our inversion: each of the two terms <= eps/2, "
                "and the theorem's condition on T. The communication term grows like 1/delta^2 and "
                "1/(1 - lam)^4; at delta = 1 it is not D-PSGD's entry (CHOCO's analysis does not reduce to "
                "it). The paper's appendix states improved constants, not encoded here.",
        ),
        Rate(
            name="beer",
            kind="upper",
            source="BEER: Zhao, Li, Li, Richtarik & Chi, NeurIPS 2022 (arXiv 2201.13320)",
            convention="grad_norm_sq",
            terms={"sampling": sampling, "communication": L * Delta / (gap_**3 * delta * epsilon)},
            assumptions=(_SYMMETRIC_W, "contractive delta-compressor", "no heterogeneity assumption", _BATCH,
                         "the powers of 1 - lam and delta recalled, UNCONFIRMED"),
            status="recalled",
            doc="The abstract (found: papers.nips.cc, ar5iv 2201.13320) confirms O(1/T) in E||grad f||^2 "
                "'matching the rate without compression even under arbitrary data heterogeneity'; the "
                "dependence on the spectral gap and on delta is recalled as L Delta/((1 - lam)^3 delta eps), "
                "UNCONFIRMED. The communication term grows like 1/delta. At delta = 1 it is not dsgt's "
                "entry: their difference (in grad_norm_sq) is L Delta (lam^2 n varsigma0 - 1)/(eps (lam - "
                "1)^3), BEER's bound holding without the heterogeneity dsgt's carries.",
        ),
    ]


_check_rate = require_instance(Rate, "a rate")


#: The rate registry (the one `decbounds.registry.Registry` mechanism): name -> `Rate`, the built-in
#: entries first, then those added by `register_rate` or by a plugin's entry point (group
#: ``decbounds.rates``, naming a Rate or a list of them).
RATES: Registry[Rate] = Registry("rate", group="decbounds.rates", check=_check_rate,
                                 from_plugin=register_each(lambda rate: register_rate(rate)))


def register_rate(rate: Rate) -> Rate:
    """Add ``rate`` under ``rate.name`` (`get`, `names`, `gap`, ``decbounds predict`` see it); returns
    ``rate``. ValueError if another rate has that name (an equal one is allowed); see docs/extending.md.

    Parameters
    ----------
    rate : Rate
        The entry.

    Examples
    --------
    >>> from decbounds.bounds.symbols import Delta, L, epsilon
    >>> toy = register_rate(Rate(name="toy_gd", kind="upper", source="textbook gradient descent",
    ...                          convention="grad_norm", terms={"optimization": Delta * L / epsilon**2}))
    >>> "toy_gd" in names("upper"), get("toy_gd") is toy
    (True, True)
    >>> unregister_rate("toy_gd")
    """
    _check_rate(rate)
    return RATES.register(rate.name, rate, description=rate.source)


def unregister_rate(name: str) -> None:
    """Remove the rate ``name`` (ValueError if unknown).

    Parameters
    ----------
    name : str
        A registered rate.
    """
    RATES.unregister(name)


for _rate in _catalog().values():
    register_rate(_rate)
del _rate

#: name -> `Rate`, a live view of `RATES`: what the deprecated name ``CATALOG`` reads.
_RATE_VIEW: Mapping[str, Rate] = RATES.objects()

#: Old name -> (attribute, message): the rate registry has one name, `RATES` (until 0.4).
_DEPRECATED = {"CATALOG": ("_RATE_VIEW", "decbounds.bounds.CATALOG is deprecated: the rate registry is "
                           "bounds.RATES (RATES.objects() is the name -> Rate view, bounds.get(name) one "
                           "rate); the alias goes in 0.4")}


__getattr__ = deprecated_attributes(__name__, globals(), _DEPRECATED)
if TYPE_CHECKING:  # what the deprecated name reads, for type checkers
    CATALOG: Mapping[str, Rate]


def names(kind: str | None = None) -> tuple[str, ...]:
    """Catalog names in catalog order.

    Parameters
    ----------
    kind : {None, "lower", "upper"}, optional
        Keep only the lower or the upper bounds.

    Examples
    --------
    >>> names()[:3]
    ('lower_bound_any', 'lower_bound_gossip', 'lower_bound_async')
    """
    if kind not in (None, "lower", "upper"):
        raise ValueError(f"kind must be None, 'lower' or 'upper'; got {kind!r}")
    return tuple(name for name, rate in _RATE_VIEW.items() if kind is None or rate.kind == kind)


def get(name: str) -> Rate:
    """The catalog entry ``name`` (ValueError listing the valid names for an unknown one).

    Parameters
    ----------
    name : str
        A name of `names()`.

    Examples
    --------
    >>> rate = get("lower_bound_gossip")
    >>> rate.kind, rate.convention, list(rate.terms)
    ('lower', 'grad_norm', ['sampling', 'communication'])
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a string; got {type(name).__name__}")
    if name not in RATES:  # `in` reads the plugins' rates (entry-point group decbounds.rates) once
        raise ValueError(f"unknown rate {name!r}; valid names: {', '.join(RATES)}")
    return RATES[name].builder


def _resolve(rate: str | Rate) -> Rate:
    return rate if isinstance(rate, Rate) else get(rate)


def gap(name: str | Rate, reference: str | Rate = "lower_bound_gossip", *, term: str | None = None,
        convention: str | None = None, **values: float) -> float:
    """rate(name) / rate(reference) at one point, both converted to one convention (Table 2's "gap" column).

    Absolute constants are 1 on both sides. ValueError for an unknown name or term, a value `Rate.evaluate`
    refuses, or a vacuous (<= 0) reference.

    Parameters
    ----------
    name, reference : str or Rate
        Catalog names or rates; the reference defaults to Cor. 2's lower bound.
    term : str, optional
        Divide this term only (e.g. "communication").
    convention : {"grad_norm", "grad_norm_sq"}, optional
        What ``epsilon`` means; default the reference's.
    **values : float
        The symbols both rates need (Delta, L, sigma, n, B, epsilon, lam, ...).

    Examples
    --------
    >>> values = dict(Delta=1, L=1, sigma=1, varsigma0=1, n=16, B=1, epsilon=0.01, lam=0.95)
    >>> round(gap("detag", **values), 3), round(gap("detag", term="communication", **values), 4)
    (1.045, 7.3877)
    """
    rate, ref = _resolve(name), _resolve(reference)
    convention = ref.convention if convention is None else convention
    if convention not in CONVENTIONS:
        raise ValueError(f"convention must be one of {CONVENTIONS}; got {convention!r}")
    rate, ref = rate.in_convention(convention), ref.in_convention(convention)
    if term is not None:
        for r in (rate, ref):
            if term not in r.terms:
                raise ValueError(f"{r.name} has no term {term!r}; its terms are {list(r.terms)}")
    try:
        top, bottom = _values(rate, term, values), _values(ref, term, values)
        ratio = top / bottom if bottom > 0 else math.nan
    except (RateOverflowError, ZeroDivisionError, OverflowError):
        ratio = math.nan
    if math.isfinite(ratio) and ratio != 0.0:
        return ratio
    # float64 overflowed, or underflowed to 0 on one side: the ratio of the precise values instead
    top_p, bottom_p = _precise_values(rate, term, values), _precise_values(ref, term, values)
    if not bottom_p > 0:
        raise ValueError(f"reference {ref.name} is vacuous (= {sp.N(bottom_p, 6)} <= 0) at {values}; "
                         "no ratio")
    ratio_p = top_p / bottom_p
    ratio = float(ratio_p)
    if not math.isfinite(ratio):
        raise RateOverflowError(f"gap({rate.name}, {ref.name}): overflow: the ratio = {sp.N(ratio_p, 4)} "
                                f"exceeds the largest float64 (about 1.8e308) at {values}")
    return ratio


def _values(rate: Rate, term: str | None, values: dict[str, float]) -> float:
    return rate.evaluate(**values) if term is None else rate.evaluate_terms(**values)[term]


def _precise_values(rate: Rate, term: str | None, values: dict[str, float]) -> sp.Float:
    terms = rate.precise_terms(**values)
    return sp.Add(*terms.values()) if term is None else terms[term]


def dominant_term(name: str | Rate, *, convention: str | None = None, **values: float) -> str:
    """The name of the largest term at the point; compared in high precision (``Rate.precise_terms``) when
    float64 cannot tell the terms apart (an overflow or an underflow to 0).

    Parameters
    ----------
    name : str or Rate
        A catalog entry or a rate.
    convention : {"grad_norm", "grad_norm_sq"}, optional
        How ``epsilon`` is read; default the entry's own.
    **values : float
        The entry's symbols.

    Examples
    --------
    >>> dominant_term("detag", Delta=1, L=1, sigma=1, varsigma0=1, n=16, B=1, epsilon=0.01, lam=0.95)
    'sampling'
    """
    rate = _resolve(name)
    if convention is not None:
        if convention not in CONVENTIONS:
            raise ValueError(f"convention must be one of {CONVENTIONS}; got convention={convention!r}")
        rate = rate.in_convention(convention)
    try:
        term_values = rate.evaluate_terms(**values)
        if all(v != 0.0 for v in term_values.values()) or len(term_values) == 1:
            return max(term_values, key=term_values.__getitem__)
    except RateOverflowError:
        pass
    precise = rate.precise_terms(**values)
    return max(precise, key=precise.__getitem__)


def _exact_value(expr: sp.Expr, **values: float) -> sp.Expr:
    needed = {s.name for s in expr.free_symbols}
    missing = sorted(needed - set(values))
    if missing:
        raise ValueError(f"missing value(s) for {missing}")
    subs = {RATE_SYMBOLS[k]: _exact(float(_validated(k, v))) for k, v in values.items()}
    return expr.xreplace(subs)


def setting1_chain_length(Delta: float, L: float, epsilon: float) -> int:
    """T_c = floor(Delta L / (4 * 12 * 152 * eps^2)) of Setting 1 (§4, errata E2), exact (`chain_length`).

    Parameters
    ----------
    Delta, L, epsilon : float
        Function range, smoothness and target accuracy (> 0).

    Examples
    --------
    >>> setting1_chain_length(Delta=7296, L=1, epsilon=0.5)
    4
    """
    return chain_length(Delta, L, epsilon, SETTING1_CHAIN_DENOMINATOR)


def setting1_reveal_probability(epsilon: float, sigma: float, *, sharp: bool = False) -> float:
    """p = min((2 * 23 eps)^2 / sigma^2, 1), or with ``sharp`` min(4 e^3 eps^2 / sigma^2, 1) (errata E23).

    Parameters
    ----------
    epsilon, sigma : float
        Target accuracy and the oracle's noise level (> 0).
    sharp : bool
        The sharper constant 4 e^3 instead of (2 * 23)^2.

    Examples
    --------
    >>> setting1_reveal_probability(0.01, 1.0)
    0.2116
    """
    expr = SETTING1_REVEAL_PROBABILITY_SHARP if sharp else SETTING1_REVEAL_PROBABILITY
    return float(_exact_value(expr, epsilon=epsilon, sigma=sigma))


def setting2_chain_length(Delta: float, L: float, epsilon: float) -> int:
    """T_c = floor(Delta L / (262656 eps^2)) of Setting 2 and Cor 2's path (docs/theory.md §4), exact.

    Parameters
    ----------
    Delta, L, epsilon : float
        Function range, smoothness and target accuracy (> 0).

    Examples
    --------
    >>> setting2_chain_length(Delta=1e6, L=1, epsilon=1)
    3
    """
    return chain_length(Delta, L, epsilon, SETTING2_CHAIN_DENOMINATOR)


def path_hop_distance(n: int) -> int:
    """n - 2 ceil(n/3) + 1: hops between the end groups of Cor 2's path instance (docs/errata.md E17).

    Parameters
    ----------
    n : int
        Workers on the path, >= 3.

    Examples
    --------
    >>> [path_hop_distance(n) for n in (3, 16, 64)]
    [2, 5, 21]
    """
    return int(_exact_value(PATH_HOP_DISTANCE, n=n))
