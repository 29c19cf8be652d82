"""The catalog against the paper: Thm 1 special cases, Table 2's gap column, the hard-instance numbers, the
errata that touch bounds (docs/errata.md E2, E5, E6, E17, E21, E23), and where upper bounds fall below
lower bounds."""

from __future__ import annotations

import math

import pytest
import sympy as sp
from decbounds.bounds import catalog
from decbounds.bounds.symbols import B, D, Delta, L, T, epsilon, lam, n, sigma, varsigma, varsigma0

from decbounds import bounds

PAPER_ENTRIES = ("lower_bound_any", "lower_bound_gossip", "defacto", "detag", "dpsgd", "sgp", "d2", "dsgt",
                 "gt_dsgd", "centralized_sgd", "hard_instance_sampling", "hard_instance_communication",
                 "hard_instance_sampling_sharp")
LATER = ("koloskova2020", "yuan2022_lower_bound", "mg_dsgd", "alghunaim_yuan2022", "huang_yuan2022",
         "centralized_lower_bound")


def test_catalog_has_the_required_entries():
    names = bounds.names()
    assert len(names) >= 15 and len(set(names)) == len(names)
    assert set(PAPER_ENTRIES) | set(LATER) <= set(names)
    assert set(bounds.names("lower")) | set(bounds.names("upper")) == set(names)
    for name in LATER:
        assert bounds.get(name).status == "recalled"
    assert {bounds.get(name).convention for name in LATER} == {"grad_norm", "grad_norm_sq"}
    assert bounds.get("hard_instance_sampling_sharp").status == "derived"
    assert "Derivation" in bounds.get("hard_instance_sampling_sharp").doc
    for name in names:
        rate = bounds.get(name)
        assert rate.source and rate.doc
        # the random quadratic's noise enters its one linear rate, not a separate term
        if not name.startswith("hard_instance") and name != "vogels2022_random_quadratic":
            assert "sampling" in rate.terms, name


def test_get_unknown_name_lists_valid_names():
    with pytest.raises(ValueError, match=r"unknown rate 'detagg'.*lower_bound_gossip"):
        bounds.get("detagg")
    with pytest.raises(TypeError):
        bounds.get(3)
    with pytest.raises(ValueError, match="kind must be"):
        bounds.names("sideways")


# --- Thm 1 ------------------------------------------------------------------------------------------------

def test_theorem1_special_case_n_B_D_one_is_arjevani():
    expr = bounds.get("lower_bound_any").expr.subs({n: 1, B: 1, D: 1})
    assert sp.simplify(expr - (Delta * L * sigma**2 / epsilon**4 + Delta * L / epsilon**2)) == 0
    assert sp.simplify(expr - bounds.get("centralized_lower_bound").expr) == 0


def test_theorem1_sigma_zero_leaves_the_communication_term():
    rate = bounds.get("lower_bound_any")
    assert sp.simplify(rate.expr.subs(sigma, 0) - rate.terms["communication"]) == 0
    assert sp.simplify(rate.expr.subs({sigma: 0, D: 1}) - Delta * L / epsilon**2) == 0  # Carmon et al.


def test_defacto_matches_theorem1_and_yuan_matches_cor2():
    assert sp.simplify(bounds.get("defacto").expr - bounds.get("lower_bound_any").expr) == 0
    converted = bounds.get("yuan2022_lower_bound").in_convention("grad_norm")
    assert sp.simplify(converted.expr - bounds.get("lower_bound_gossip").expr) == 0


# --- Table 2's gap column ---------------------------------------------------------------------------------

#: Table 2's "gap to lower bound" column as printed (docs/theory.md §8).
TABLE2_GAP = {
    "defacto": None,  # O(1) against Thm 1's D, not Cor 2's
    "detag": sp.log(varsigma0 * n / (epsilon * sp.sqrt(Delta * L))),
    "dpsgd": n * varsigma / (1 - lam) ** sp.Rational(3, 2),
    "sgp": n * varsigma / (1 - lam) ** sp.Rational(3, 2),
    "d2": lam**2 * n * varsigma0 / (1 - lam) ** sp.Rational(5, 2),
    "dsgt": lam**2 * n * varsigma0 / (1 - lam) ** sp.Rational(5, 2),
    "gt_dsgd": lam**2 * n * varsigma0 / (1 - lam) ** sp.Rational(5, 2),
}


def _communication_ratio(name: str, reference: str = "lower_bound_gossip") -> sp.Expr:
    return sp.simplify(bounds.get(name).terms["communication"] / bounds.get(reference).terms["communication"])


@pytest.mark.parametrize("name", ["dpsgd", "sgp", "d2", "dsgt", "gt_dsgd"])
def test_table2_gap_column_is_the_ratio_of_communication_terms(name):
    assert sp.simplify(_communication_ratio(name) - TABLE2_GAP[name]) == 0


def test_defacto_gap_to_theorem1_is_one():
    assert _communication_ratio("defacto", "lower_bound_any") == 1


def test_detag_gap_is_its_log_factor_with_n_plus_inside_erratum_6():
    ratio = _communication_ratio("detag")
    cor6_log = sp.log(n + varsigma0 * n / (epsilon * sp.sqrt(Delta * L)))
    assert sp.simplify(ratio - cor6_log) == 0
    # Table 2's printed column lacks the "n +" (errata E6): the two differ, and agree once n is dropped.
    assert sp.simplify(ratio - TABLE2_GAP["detag"]) != 0
    argument = varsigma0 * n / (epsilon * sp.sqrt(Delta * L))
    assert sp.simplify(cor6_log.subs(n + argument, argument) - TABLE2_GAP["detag"]) == 0
    # Without "n +" the printed log is negative for a small varsigma0; Cor 6's is >= log n.
    point = dict(Delta=1.0, L=1.0, varsigma0=1e-4, n=4, epsilon=0.01)
    printed = float(TABLE2_GAP["detag"].subs({Delta: 1, L: 1, varsigma0: sp.Rational(1, 10**4), n: 4,
                                              epsilon: sp.Rational(1, 100)}))
    assert printed < 0
    assert bounds.gap("detag", term="communication", lam=0.9, sigma=1.0, B=1, **point) == pytest.approx(
        math.log(4 + 4e-4 / 0.01), rel=1e-12)


# --- hard instances at hand-computed points ---------------------------------------------------------------

def test_hard_instance_sampling_numbers():
    # eps = 0.001, Delta = L = 1: T_c = floor(1e6 / 7296) = 137; p = min(2116e-6 / 1, 1) = 0.002116
    point = dict(Delta=1.0, L=1.0, sigma=1.0, n=4, B=2, epsilon=0.001)
    assert bounds.setting1_chain_length(1.0, 1.0, 0.001) == 137
    assert bounds.setting1_reveal_probability(0.001, 1.0) == pytest.approx(0.002116, rel=1e-12)
    expected = 136 / (4 * 2 * 0.002116 * (math.e - 1))
    assert bounds.get("hard_instance_sampling").evaluate(**point) == pytest.approx(expected, rel=1e-12)
    # p capped at 1 when sigma is small: sigma = 0.01 -> (46e-3)^2/1e-4 = 21.16 -> 1
    assert bounds.setting1_reveal_probability(0.001, 0.01) == 1.0
    assert bounds.get("hard_instance_sampling").evaluate(**{**point, "sigma": 0.01}) == pytest.approx(
        136 / (8 * (math.e - 1)), rel=1e-12)


def test_hard_instance_sampling_chain_length_includes_L_erratum_2():
    # Printed: floor(Delta/(Delta_0 l_1 (2 eps)^2)) has no L; corrected: floor(Delta L/(7296 eps^2)).
    assert bounds.setting1_chain_length(1.0, 100.0, 0.01) == math.floor(100 / (7296 * 1e-4)) == 137
    printed = math.floor(1.0 / (12 * 152 * (2 * 0.01) ** 2))
    assert printed == 1
    # The correction is what the Delta-constraint demands: with lambda_s = 2 l_1 eps / L,
    # f(0) - inf f <= (L lambda_s^2 / l_1) Delta_0 T_c <= Delta  <=>  T_c <= Delta L / (4 Delta_0 l_1 eps^2).
    l1, d0 = bounds.ZERO_CHAIN_SMOOTHNESS, bounds.ZERO_CHAIN_RANGE
    scale = 2 * l1 * epsilon / L
    t_max = sp.solve(sp.Eq(L * scale**2 / l1 * d0 * T, Delta), T)[0]
    assert sp.simplify(t_max - Delta * L / (7296 * epsilon**2)) == 0
    assert sp.simplify(catalog.SETTING1_CHAIN_LENGTH - sp.floor(t_max)) == 0


def test_setting2_chain_length_satisfies_its_constraints():
    # lambda_s = 6 l_1 eps / L, f = (L lambda_s^2 / (3 l_1)) f^(x/lambda_s): gradient scale 2 eps > eps, and
    # the range (L lambda_s^2/(3 l_1)) Delta_0 T_c <= Delta for T_c = floor(Delta L/262656 eps^2) (12x slack).
    l1, d0 = bounds.ZERO_CHAIN_SMOOTHNESS, bounds.ZERO_CHAIN_RANGE
    scale = 6 * l1 * epsilon / L
    assert sp.simplify(L * scale / (3 * l1) - 2 * epsilon) == 0
    range_per_link = L * scale**2 / (3 * l1) * d0
    assert sp.simplify(range_per_link * Delta * L / (262656 * epsilon**2) / Delta - sp.Rational(1, 12)) == 0
    assert bounds.setting2_chain_length(1.0, 1.0, 0.001) == 3  # floor(1e6 / 262656)


@pytest.mark.parametrize(("n_workers", "hops"), [(1, 0), (2, 1), (3, 2), (4, 1), (6, 3), (16, 5), (17, 6),
                                                  (100, 33)])
def test_path_hop_distance(n_workers, hops):
    assert bounds.path_hop_distance(n_workers) == hops == n_workers - 2 * math.ceil(n_workers / 3) + 1


def test_hard_instance_communication_exact_hop_count_erratum_17():
    rate = bounds.get("hard_instance_communication")
    # Delta L / eps^2 = 1e8: T_c = floor(1e8 / 262656) = 380; n = 16: dist = 5 -> 1 + 379 * 5 = 1896
    point = dict(Delta=100.0, L=1.0, epsilon=0.001, n=16)
    assert bounds.setting2_chain_length(100.0, 1.0, 0.001) == 380
    assert rate.evaluate(**point) == 1 + 379 * 5 == 1896
    # the proof's loose T_c * dist exceeds the exact count whenever dist > 1, and equals it at dist = 1
    assert 380 * 5 > rate.evaluate(**point)
    assert rate.evaluate(**{**point, "n": 2}) == 380 * 1
    assert rate.evaluate(**{**point, "n": 100}) == 1 + 379 * 33


def test_exact_arithmetic_at_floor_boundaries():
    # Values typed as decimals are read exactly: 7296 / (7296 * 0.1^2) is 100, although float64 gives 99.99...
    assert math.floor(7296 / (7296 * 0.1**2)) == 99
    assert bounds.setting1_chain_length(7296, 1.0, 0.1) == 100
    point = dict(Delta=7296.0, L=1.0, sigma=1.0, n=1, B=1, epsilon=0.1)
    assert bounds.get("hard_instance_sampling").evaluate(**point) == pytest.approx(
        99 / (min(4.6**2, 1.0) * (math.e - 1)), rel=1e-12)
    # lambdify() is float64 throughout (documented): one step lower at this boundary
    vectorized = bounds.get("hard_instance_sampling").lambdify()(**point)
    assert vectorized == pytest.approx(98 / (math.e - 1), rel=1e-12)


def test_hard_instance_sampling_is_a_probability_half_statement_erratum_21():
    assert bounds.get("hard_instance_sampling").probability == 0.5
    assert bounds.get("hard_instance_sampling_sharp").probability == 0.5
    assert bounds.get("hard_instance_communication").probability == 1.0
    assert any("1/2" in text for text in bounds.get("hard_instance_sampling").assumptions)


def test_sharp_sampling_constant_erratum_23():
    point = dict(Delta=1.0, L=1.0, sigma=1.0, n=1, B=1, epsilon=1e-3)
    paper = bounds.get("hard_instance_sampling").evaluate(**point)
    sharp = bounds.get("hard_instance_sampling_sharp").evaluate(**point)
    assert sharp / paper == pytest.approx(2116 / (4 * math.e**3), rel=1e-12)
    assert sharp / paper == pytest.approx(26.337, abs=1e-3)
    # small-eps constants: Delta L sigma^2 / (c n B eps^4)
    leading = Delta * L / (7296 * epsilon**2) / (n * B * (2116 * epsilon**2 / sigma**2) * (sp.E - 1))
    c_paper = sp.limit(Delta * L * sigma**2 / (n * B * epsilon**4) / leading, epsilon, 0)
    assert float(c_paper) == pytest.approx(2.6527e7, rel=1e-4)
    assert 7296 * 4 * math.e**3 * (math.e - 1) == pytest.approx(1.0072e6, rel=1e-4)
    # the derivation's ingredients: sup Psi = e and Phi'(0) = sqrt(e), so |d f^/d x_{k+1}| <= e^(3/2)
    z, t = sp.symbols("z t", positive=True)
    psi = sp.exp(1 - 1 / (2 * z - 1) ** 2)
    assert sp.limit(psi, z, sp.oo) == sp.E
    assert sp.diff(psi, z).subs(z, 2) > 0  # increasing on z > 1/2, so the limit is the supremum
    phi_prime = sp.sqrt(sp.E) * sp.exp(-t**2 / 2)
    assert phi_prime.subs(t, 0) == sp.sqrt(sp.E)
    assert sp.simplify(sp.E * phi_prime.subs(t, 0) - sp.E ** sp.Rational(3, 2)) == 0
    sharp_p = catalog.SETTING1_REVEAL_PROBABILITY_SHARP
    assert sharp_p.subs({sigma: 1, epsilon: sp.Rational(1, 1000)}) == 4 * sp.E**3 / 10**6
    assert sharp_p.subs({sigma: 1, epsilon: 1}) == 1
    assert bounds.setting1_reveal_probability(1e-3, 1.0, sharp=True) == pytest.approx(4 * math.e**3 * 1e-6)


def test_reveal_probability_is_min_of_ratio_and_one():
    for eps_value, sigma_value in [(1e-3, 1.0), (0.1, 0.5), (0.01, 0.0), (0.5, 1e-3)]:
        expected = 1.0 if sigma_value == 0 else min((46 * eps_value) ** 2 / sigma_value**2, 1.0)
        probability = bounds.setting1_reveal_probability(eps_value, sigma_value)
        assert probability == pytest.approx(expected, rel=1e-12)


def test_hard_instances_are_vacuous_for_large_epsilon():
    # documented, not hidden: while T_c <= 1 the explicit bounds say nothing; they are 0, never negative
    point = dict(Delta=1.0, L=1.0, sigma=1.0, n=16, B=1, epsilon=0.1)
    assert bounds.get("hard_instance_sampling").evaluate(**point) == 0
    assert bounds.get("hard_instance_communication").evaluate(**point) == 0
    # T_c = 1 exactly: one iteration reveals coordinate 1 (the I_0 term), nothing more is forced
    one_link = dict(point, Delta=262656 * 0.1**2 * 1.5)
    assert bounds.get("hard_instance_communication").evaluate(**one_link) == 1


# --- erratum 5: the centralized SGD rate ------------------------------------------------------------------

def test_centralized_sgd_is_the_corrected_rate_inverted_erratum_5():
    noise, deterministic = sorted(catalog.CENTRALIZED_SGD_AFTER_T.args, key=lambda a: not a.has(sigma))
    terms = bounds.get("centralized_sgd").terms
    assert sp.simplify(sp.solve(sp.Eq(noise, epsilon**2), T)[0] - terms["sampling"]) == 0
    assert sp.simplify(sp.solve(sp.Eq(deterministic, epsilon**2), T)[0] - terms["optimization"]) == 0
    printed = Delta * L * sigma / sp.sqrt(n * B * T)
    assert sp.simplify(sp.solve(sp.Eq(printed, epsilon**2), T)[0] - terms["sampling"]) != 0
    # and the corrected one gives DeFacto's (Thm 4) sampling term
    assert sp.simplify(terms["sampling"] - bounds.get("defacto").terms["sampling"]) == 0


# --- gap and dominant_term --------------------------------------------------------------------------------

POINT = dict(Delta=1.0, L=1.0, sigma=1.0, varsigma=1.0, varsigma0=1.0, n=16, B=1, epsilon=0.01, lam=0.95,
             D=15)


def test_gap_and_dominant_term():
    assert bounds.gap("lower_bound_gossip", **POINT) == 1.0
    total = bounds.gap("detag", **POINT)
    log_factor = math.log(16 + 16 / 0.01)
    assert 1.0 < total < log_factor  # the sampling term dilutes the log gap
    assert bounds.gap("detag", term="communication", **POINT) == pytest.approx(log_factor, rel=1e-12)
    assert bounds.dominant_term("detag", **POINT) == "sampling"
    assert bounds.dominant_term("detag", **{**POINT, "sigma": 0.0}) == "communication"
    with pytest.raises(ValueError, match="no term 'optimization'"):
        bounds.gap("detag", term="optimization", **POINT)
    with pytest.raises(ValueError, match="unknown rate"):
        bounds.gap("nope", **POINT)
    with pytest.raises(ValueError, match="vacuous"):
        bounds.gap("detag", "hard_instance_sampling", **{**POINT, "epsilon": 0.1})
    with pytest.raises(ValueError, match="convention must be one of"):
        bounds.gap("detag", convention="loss", **POINT)


def test_gap_converts_conventions():
    # eps in the reference's convention (grad_norm): koloskova2020 is converted eps -> eps^2 first
    direct = bounds.get("koloskova2020").evaluate(**{**POINT, "epsilon": 0.01**2})
    assert bounds.gap("koloskova2020", **POINT) == pytest.approx(
        direct / bounds.get("lower_bound_gossip").evaluate(**POINT), rel=1e-12)
    # stated in grad_norm_sq, both sides in that convention
    sq = bounds.gap("koloskova2020", convention="grad_norm_sq", **{**POINT, "epsilon": 1e-4})
    assert sq == pytest.approx(bounds.gap("koloskova2020", **POINT), rel=1e-12)
    # dominant term: same answer whichever convention eps is read in, once eps is mapped
    assert (bounds.dominant_term("koloskova2020", **{**POINT, "epsilon": 1e-4})
            == bounds.dominant_term("koloskova2020", convention="grad_norm", **POINT))


# --- where an upper bound falls below a lower bound (constants 1) -----------------------------------------

def test_detag_below_gossip_lower_bound_at_n_two():
    point = {**POINT, "n": 2, "varsigma0": 0.0, "sigma": 0.0}
    assert bounds.gap("detag", **point) == pytest.approx(math.log(2), rel=1e-12)
    assert math.log(2) < 1
    assert bounds.gap("mg_dsgd", **point) == pytest.approx(math.log(2), rel=1e-12)


def test_tracking_methods_below_lower_bound_when_homogeneous_or_complete():
    for name in ("d2", "dsgt", "gt_dsgd"):
        assert bounds.gap(name, **{**POINT, "varsigma0": 0.0}) < 1
        assert bounds.gap(name, term="communication", **{**POINT, "lam": 0.0}) == 0
        # below exactly when lam^2 n varsigma0 < (1 - lam)^(5/2)
        assert bounds.gap(name, term="communication", **{**POINT, "lam": 0.05, "varsigma0": 0.1}) < 1
    for name in ("dpsgd", "sgp"):
        assert bounds.gap(name, term="communication", **{**POINT, "lam": 0.5, "varsigma": 0.01}) < 1
    assert bounds.gap("alghunaim_yuan2022", term="communication", **{**POINT, "lam": 0.0}) == 0
    assert bounds.gap("centralized_sgd", **{**POINT, "sigma": 0.0}) == pytest.approx(math.sqrt(0.05))


def test_tracking_rows_fall_below_the_explicit_hard_instance_on_its_own_varsigma0():
    # Cor 2's instance has varsigma0 = 2 eps sqrt(e (n/ceil(n/3) - 1)) = Theta(eps): the tabulated
    # D^2/DSGT/GT-DSGD term then scales as 1/eps and for small eps is below even the explicit-constant
    # lower bound.
    n_workers = 3  # small n puts the crossing at a moderate eps (about 2.7e-7 here)
    path_lam = math.cos(math.pi / n_workers)
    for eps_value in (1e-2, 1e-8):
        varsigma0_value = float(catalog.COR2_INSTANCE_VARSIGMA0.subs({n: n_workers, epsilon: eps_value}))
        assert varsigma0_value == pytest.approx(2 * eps_value * math.sqrt(2 * math.e), rel=1e-12)
        point = dict(Delta=1.0, L=1.0, sigma=0.0, n=n_workers, B=1, epsilon=eps_value, lam=path_lam,
                     varsigma0=varsigma0_value)
        upper = bounds.get("d2").evaluate(**point)
        lower = bounds.get("hard_instance_communication").evaluate(**point)
        if eps_value == 1e-2:
            assert lower <= 1  # vacuous there, T_c = 0
        else:
            assert upper < lower
    # symbolically: the ratio tends to 0 as eps -> 0
    tracking = bounds.get("d2").terms["communication"].subs(varsigma0, catalog.COR2_INSTANCE_VARSIGMA0)
    assert sp.limit(tracking * epsilon**2, epsilon, 0) == 0
