"""The compressed catalog entries (docs/theory.md §18): each reduces to its uncompressed counterpart at
omega = 0 / delta = 1, grows as it says in 1 + omega or 1/delta, keeps an honest status, and `decbounds
predict` takes omega and delta."""

from __future__ import annotations

import math

import pytest
from decbounds.bounds.cli import add_parser
from decbounds.bounds.cli import run as predict
from hypothesis import given
from hypothesis import strategies as st

from decbounds import bounds

POINT = dict(Delta=2.0, L=3.0, sigma=0.5, n=16, B=2, epsilon=1e-3)
positive = st.floats(min_value=1e-3, max_value=1e3, allow_nan=False)


@given(Delta=positive, L=positive, sigma=st.floats(0, 10), n=st.integers(1, 256), B=st.integers(1, 8),
       epsilon=st.floats(1e-4, 1.0))
def test_the_compressed_lower_bounds_are_the_centralized_bound_uncompressed(Delta, L, sigma, n, B, epsilon):
    point = dict(Delta=Delta, L=L, sigma=sigma, n=n, B=B, epsilon=epsilon)
    reference = bounds.get("lower_bound_any").in_convention("grad_norm_sq").evaluate(**point, D=1)
    unbiased = bounds.get("huang2022_unbiased_lower").evaluate(**point, omega=0)
    contractive = bounds.get("huang2022_contractive_lower").evaluate(**point, delta=1)
    assert math.isclose(unbiased, reference, rel_tol=1e-12)
    assert math.isclose(contractive, reference, rel_tol=1e-12)


@given(omega=st.floats(0, 1e3))
def test_an_unbiased_compressor_scaled_gives_the_same_lower_bound(omega):
    unbiased = bounds.get("huang2022_unbiased_lower").evaluate(**POINT, omega=omega)
    scaled = bounds.get("huang2022_contractive_lower").evaluate(**POINT, delta=1 / (1 + omega))
    assert math.isclose(unbiased, scaled, rel_tol=1e-12)


@pytest.mark.parametrize(("name", "symbol", "value"), [
    ("huang2022_unbiased_lower", "omega", lambda x: x - 1),
    ("huang2022_contractive_lower", "delta", lambda x: 1 / x),
    ("beer", "delta", lambda x: 1 / x),
])
def test_the_communication_term_grows_linearly_in_one_plus_omega_or_one_over_delta(name, symbol, value):
    rate = bounds.get(name)
    extra = {"lam": 0.5} if "lam" in rate.arguments else {}
    terms = [rate.evaluate_terms(**POINT, **extra, **{symbol: value(x)})["communication"] for x in (2, 8)]
    assert math.isclose(terms[1] / terms[0], 4.0, rel_tol=1e-12)  # the figure's predicted slope 1


def test_choco_sgd_is_thm_4_1_as_printed():
    """Koloskova, Lin, Stich & Jaggi (ICLR 2020), Thm 4.1: the bound A/sqrt(n (T+1)) + C/(T+1) with
    A = 4 (Delta + sigma^2 L), C = 24 G^2 n L/c^2, c = rho^2 delta/82, inverted term by term (each <= eps/2),
    beside T >= 64 n L^2. Before: L Delta/((1 - lam)^2 delta eps) without G."""
    rate = bounds.get("choco_sgd")
    point = dict(Delta=2.0, L=3.0, sigma=0.5, n=16, B=1, epsilon=1e-3, lam=0.5, delta=0.25, G=1.5)
    terms = rate.evaluate_terms(**point)
    c = (1 - 0.5) ** 2 * 0.25 / 82
    A, C = 4 * (2.0 + 0.25 * 3.0), 24 * 1.5**2 * 16 * 3.0 / c**2
    assert math.isclose(A / math.sqrt(16 * terms["sampling"]), 1e-3 / 2, rel_tol=1e-12)
    assert math.isclose(C / terms["communication"], 1e-3 / 2, rel_tol=1e-12)
    assert terms["theorem_condition"] == 64 * 16 * 3.0**2
    assert "G" in rate.arguments and rate.status == "derived"
    halved = rate.evaluate_terms(**{**point, "delta": 0.125})["communication"]
    assert math.isclose(halved / terms["communication"], 4.0, rel_tol=1e-12)  # 1/delta^2


@given(lam=st.floats(0, 0.99), varsigma0=st.floats(0, 10), n=st.integers(1, 64))
def test_beer_at_delta_one_is_not_dsgt_and_the_docstring_says_by_how_much(lam, varsigma0, n):
    point = dict(Delta=2.0, L=3.0, sigma=0.5, B=1, epsilon=1e-3, lam=lam, n=n)
    beer = bounds.get("beer").evaluate(**point, delta=1)
    dsgt = bounds.get("dsgt").in_convention("grad_norm_sq").evaluate(**point, varsigma0=varsigma0)
    stated = 2.0 * 3.0 * (lam**2 * n * varsigma0 - 1) / (1e-3 * (lam - 1) ** 3)
    assert math.isclose(beer - dsgt, stated, rel_tol=1e-9, abs_tol=1e-6 * max(beer, dsgt))
    assert "(lam^2 n varsigma0 - 1)" in bounds.get("beer").doc


def test_status_and_source_stay_honest():
    for name in ("huang2022_unbiased_lower", "huang2022_contractive_lower", "beer"):
        rate = bounds.get(name)
        assert rate.status == "recalled"
        assert "UNCONFIRMED" in " ".join(rate.assumptions) + rate.doc
    assert "2305.16297" in " ".join(bounds.get("huang2022_unbiased_lower").assumptions)
    assert bounds.get("huang2022_unbiased_lower").kind == "lower" and bounds.get("beer").kind == "upper"


def test_delta_outside_its_range_is_refused():
    with pytest.raises(ValueError, match=r"delta must lie in \(0, 1\]"):
        bounds.get("choco_sgd").evaluate(**POINT, lam=0.5, delta=1.5, G=1.0)
    with pytest.raises(ValueError, match="omega must be >= 0"):
        bounds.get("huang2022_unbiased_lower").evaluate(**POINT, omega=-1)


def _predict(argv):
    import argparse

    parser = argparse.ArgumentParser()
    add_parser(parser.add_subparsers())
    return predict(parser.parse_args(["predict", *argv]))


def test_predict_takes_omega_and_delta(capsys):
    common = ["--Delta", "2", "--L", "3", "--sigma", "0.5", "--n", "16", "--B", "2", "--epsilon", "1e-3"]
    name = "huang2022_unbiased_lower"
    assert _predict([name, *common, "--omega", "3", "--convention", "grad_norm_sq"]) == 0
    out = capsys.readouterr().out
    expected = bounds.get("huang2022_unbiased_lower").evaluate_terms(**POINT, omega=3)["communication"]
    assert f"{expected:.6g}" in out and "status: recalled" in out
    assert _predict(["choco_sgd", *common, "--lam", "0.5", "--delta", "0.25", "--G", "1"]) == 0
    assert "communication" in capsys.readouterr().out
    assert _predict(["choco_sgd", *common, "--lam", "0.5"]) == 2  # delta missing: refused, named
    assert "delta" in capsys.readouterr().err
