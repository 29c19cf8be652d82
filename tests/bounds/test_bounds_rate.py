"""The Rate record: evaluate / lambdify / latex / in_convention and every ValueError."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp
from decbounds.bounds.rate import Rate
from decbounds.bounds.symbols import RATE_SYMBOLS, Delta, L, epsilon, lam, n, sigma

from decbounds import bounds

POINT = dict(Delta=1.0, L=1.0, sigma=1.0, varsigma=1.0, varsigma0=1.0, n=16, B=1, epsilon=0.01, lam=0.95,
             D=15, omega=1.0, delta=0.5, G=1.0, n_eff=4.0, mu=0.1, eta=0.1, zeta=5.0)


def test_evaluate_matches_hand_computed_detag():
    value = bounds.get("detag").evaluate(**POINT)
    sampling = 1 / (16 * 0.01**4)
    communication = math.log(16 + 16 / 0.01) / (0.01**2 * math.sqrt(0.05))
    assert value == pytest.approx(sampling + communication, rel=1e-12)


def test_terms_sum_to_expr_and_evaluate_is_their_sum():
    for name in bounds.names():
        rate = bounds.get(name)
        assert sp.simplify(rate.expr - sp.Add(*rate.terms.values())) == 0
        terms = rate.evaluate_terms(**POINT)
        assert rate.evaluate(**POINT) == pytest.approx(math.fsum(terms.values()), rel=1e-15)


def test_unused_known_symbols_are_ignored():
    rate = bounds.get("lower_bound_any")  # no lam, varsigma, varsigma0
    assert "lam" not in rate.arguments
    assert rate.evaluate(**POINT) == rate.evaluate(**{k: POINT[k] for k in rate.arguments})


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"bogus": 1.0}, "unknown keyword"),
        ({"lam": 1.0}, "lam must lie in"),
        ({"lam": -0.1}, "lam must be >= 0"),
        ({"lam": 1.5}, "lam must lie in"),
        ({"Delta": 0.0}, "Delta must be > 0"),
        ({"L": -1.0}, "L must be > 0"),
        ({"epsilon": 0.0}, "epsilon must be > 0"),
        ({"n": 0}, "n must be > 0"),
        ({"B": -2}, "B must be > 0"),
        ({"D": 0}, "D must be > 0"),
        ({"sigma": -1.0}, "sigma must be >= 0"),
        ({"varsigma0": -1e-3}, "varsigma0 must be >= 0"),
        ({"varsigma": -1.0}, "varsigma must be >= 0"),
        ({"n": 2.5}, "n must be an integer"),
        ({"Delta": math.inf}, "Delta must be finite"),
        ({"epsilon": math.nan}, "epsilon must be finite"),
    ],
)
def test_evaluate_rejects_bad_values_naming_them(change, message):
    with pytest.raises(ValueError, match=message):
        bounds.get("detag").evaluate(**{**POINT, **change})


def test_evaluate_rejects_bad_value_even_of_an_unused_symbol():
    with pytest.raises(ValueError, match="D must be > 0"):
        bounds.get("detag").evaluate(**{**POINT, "D": 0})


def test_evaluate_names_missing_symbols():
    with pytest.raises(ValueError, match=r"missing value\(s\) for \['lam'\]"):
        bounds.get("detag").evaluate(**{k: v for k, v in POINT.items() if k != "lam"})


def test_evaluate_rejects_non_numbers():
    with pytest.raises(TypeError, match="Delta must be a real number"):
        bounds.get("detag").evaluate(**{**POINT, "Delta": "1"})
    with pytest.raises(TypeError, match="n must be a real number"):
        bounds.get("detag").evaluate(**{**POINT, "n": True})
    with pytest.raises(ValueError, match="scalar"):
        bounds.get("detag").evaluate(**{**POINT, "lam": [0.1, 0.2]})


def test_zero_is_allowed_where_meaningful():
    # sigma = 0 (exact gradients), varsigma0 = 0 (homogeneous start), lam = 0 (W = 11^T/n)
    value = bounds.get("detag").evaluate(**{**POINT, "sigma": 0.0, "varsigma0": 0.0, "lam": 0.0})
    assert value == pytest.approx(math.log(16) / 0.01**2)
    # p = min(. / sigma^2, 1) stays defined at sigma = 0
    assert bounds.get("hard_instance_sampling").evaluate(**{**POINT, "sigma": 0.0, "epsilon": 1e-3}) > 0


def test_lambdify_is_vectorized_and_agrees_with_evaluate():
    rate = bounds.get("dpsgd")
    lams = np.linspace(0.0, 0.99, 7)
    values = rate.lambdify()(**{**POINT, "lam": lams})
    assert values.shape == (7,)
    for lam_value, value in zip(lams, values, strict=True):
        assert value == pytest.approx(rate.evaluate(**{**POINT, "lam": float(lam_value)}), rel=1e-12)


def test_lambdify_broadcasts_flat_entries_and_checks_values():
    flat = bounds.get("defacto").lambdify()(**{**POINT, "lam": np.linspace(0, 0.9, 5)})
    assert flat.shape == (5,) and np.all(flat == flat[0])
    grid = bounds.get("detag").lambdify()(**{**POINT, "lam": np.linspace(0, 0.9, 5)[:, None],
                                             "n": np.array([[2, 4, 8]])})
    assert grid.shape == (5, 3)
    with pytest.raises(ValueError, match="lam must lie in"):
        bounds.get("detag").lambdify()(**{**POINT, "lam": np.array([0.5, 1.0])})
    with pytest.raises(ValueError, match="missing"):
        bounds.get("detag").lambdify()(Delta=1.0)


def test_latex_uses_paper_symbols():
    text = bounds.get("detag").latex()
    assert r"\varsigma_0" in text and r"\lambda" in text and r"\varepsilon" in text and r"\log" in text
    assert bounds.get("detag").latex(terms=True).splitlines()[0].startswith("sampling: ")


def test_in_convention_round_trip_and_substitution():
    rate = bounds.get("lower_bound_gossip")
    squared = rate.in_convention("grad_norm_sq")
    assert squared.convention == "grad_norm_sq"
    sampling = Delta * L * sigma**2 / (n * RATE_SYMBOLS["B"] * epsilon**2)
    assert sp.simplify(squared.terms["sampling"] - sampling) == 0
    assert sp.simplify(squared.terms["communication"] - Delta * L / (epsilon * sp.sqrt(1 - lam))) == 0
    back = squared.in_convention("grad_norm")
    for key in rate.terms:
        assert sp.simplify(back.terms[key] - rate.terms[key]) == 0
    assert rate.in_convention("grad_norm") is rate
    # numerically: the squared form at eps^2 equals the original at eps
    assert squared.evaluate(**{**POINT, "epsilon": 1e-4}) == pytest.approx(rate.evaluate(**POINT), rel=1e-12)
    with pytest.raises(ValueError, match="convention must be one of"):
        rate.in_convention("grad_norm_cubed")


def test_record_validation():
    good = dict(name="x", kind="upper", source="s", convention="grad_norm", terms={"sampling": Delta})
    assert Rate(**good).arguments == ("Delta",)
    with pytest.raises(ValueError, match="kind must be one of"):
        Rate(**{**good, "kind": "middle"})
    with pytest.raises(ValueError, match="status must be one of"):
        Rate(**{**good, "status": "guessed"})
    with pytest.raises(ValueError, match="convention must be one of"):
        Rate(**{**good, "convention": "loss"})
    with pytest.raises(ValueError, match="non-empty"):
        Rate(**{**good, "terms": {}})
    with pytest.raises(ValueError, match=r"not the symbols of bounds\.symbols"):
        Rate(**{**good, "terms": {"sampling": sp.Symbol("Delta")}})  # same name, no assumptions
    with pytest.raises(ValueError, match="probability"):
        Rate(**{**good, "probability": 0.0})
    rate = Rate(**good)
    with pytest.raises(AttributeError):
        rate.kind = "lower"  # frozen
    with pytest.raises(TypeError):
        rate.terms["new"] = Delta  # read-only mapping
    assert hash(rate) == hash(Rate(**good))
