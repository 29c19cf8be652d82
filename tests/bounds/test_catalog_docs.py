"""A catalog entry's prose formula is the formula its symbolic terms hold.

The recalled entries quote their source's rate in their ``doc`` as ``O(L Delta [...])``; the symbolic terms
are that formula specialised (a fixed W: window tau = 1, consensus rate p = 1 - lam^2; the one-peer
exponential graph: tau = log2 n, p = 1) with one query per iteration (B = 1). Parsing the quoted formula
and comparing it with the terms catches a prose slip such as sigma^2/(n eps) for sigma^2/(n eps^2) in a
squared criterion.
"""

from __future__ import annotations

import re

import pytest
import sympy as sp
from decbounds.bounds.symbols import B, Delta, L, epsilon, lam, n, sigma, varsigma
from sympy.parsing.sympy_parser import (
    convert_xor,
    implicit_multiplication_application,
    parse_expr,
    standard_transformations,
)

from decbounds import bounds

_QUOTED = re.compile(r"O\(L Delta \[(?P<body>[^\]]+)\]\)")
_TRANSFORMATIONS = (*standard_transformations, implicit_multiplication_application, convert_xor)
zeta, tau, p, G, c = sp.symbols("zeta tau p G c", positive=True)

#: entry -> how its quoted formula's free parameters map onto the catalog's symbols
SPECIALISATIONS = {
    "koloskova2020": {zeta: varsigma, tau: 1, p: 1 - lam**2},
    "ying2021_one_peer_exponential": {zeta: varsigma, tau: sp.log(n, 2), p: 1},
    # the entry leaves out the G term and sets c = rho^2 delta / 82's constant to 1 (its assumptions say so)
}


def quoted_formula(doc: str) -> sp.Expr:
    """L Delta times the bracket of the first ``O(L Delta [...])`` in ``doc``, as a sympy expression."""
    match = _QUOTED.search(doc)
    assert match is not None, "the doc quotes no O(L Delta [...]) formula"
    names = {"sigma": sigma, "n": n, "eps": epsilon, "zeta": zeta, "tau": tau, "p": p, "G": G, "c": c,
             "sqrt": sp.sqrt}
    body = parse_expr(match["body"], local_dict=names, transformations=_TRANSFORMATIONS)
    return L * Delta * body


def test_the_parser_reads_a_known_formula():
    expr = quoted_formula("O(L Delta [sigma^2/(n eps^2) + sigma sqrt(p tau)/(p eps^(3/2))])")
    expected = L * Delta * (sigma**2 / (n * epsilon**2)
                            + sigma * sp.sqrt(p * tau) / (p * epsilon ** sp.Rational(3, 2)))
    assert sp.simplify(expr - expected) == 0


@pytest.mark.parametrize("name", sorted(SPECIALISATIONS))
def test_the_doc_formula_is_the_symbolic_terms(name):
    rate = bounds.get(name)
    quoted = quoted_formula(rate.doc).subs(SPECIALISATIONS[name])
    terms = sum(rate.terms.values()).subs(B, 1)
    assert sp.simplify(quoted - terms) == 0, (name, sp.simplify(quoted - terms))


def test_the_old_slip_would_fail():
    rate = bounds.get("koloskova2020")
    slipped = rate.doc.replace("sigma^2/(n eps^2)", "sigma^2/(n eps)")
    quoted = quoted_formula(slipped).subs(SPECIALISATIONS["koloskova2020"])
    assert sp.simplify(quoted - sum(rate.terms.values()).subs(B, 1)) != 0
