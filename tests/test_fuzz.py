"""Fuzz suite over the public API of bounds/, instances/, oracles/ and the `decbounds` CLI.

Every call gets a mixture of valid, edge and extreme or plain wrong arguments (NaN, inf, 5e-324, 1e308,
10**400, 2**63, negative numbers, bools, None, strings, complex numbers, lists, wrong graph types) and
must either

- return a result whose numbers are finite and consistent (each test states what it checks), or
- raise ValueError or TypeError whose message names one of the arguments of the call.

Any other exception (ZeroDivisionError, OverflowError, AttributeError, LinAlgError, MemoryError, ...)
fails the test, and so does a NaN or an inf in a result.

The properties behind the known reproducers (each reproducer is in the draw):

- no call emits a warning: ``attempt`` turns every warning into an error (a caller running with
  ``-W error`` would get it as the error);
- lambdify equals evaluate wherever evaluate returns a value (scalars and arrays, extreme values);
- every size argument is capped before allocation or a solve (the PEP's K and N, the chain's T * n);
- every graph input is checked the same way (one rule, ``bounds.validation.require_graph``);
- a non-finite point gets a NaN gradient, never a finite one.

Example counts: modest in the normal suite; ``FUZZ=1`` loads the "fuzz" hypothesis profile of
tests/conftest.py and runs each test with its larger count (over 10,000 examples in total, see
docs/reliability.md), e.g.
``FUZZ=1 .venv/bin/python -m pytest tests/test_fuzz.py --hypothesis-show-statistics``.
"""

from __future__ import annotations

import contextlib
import io
import math
import os
import re
import warnings
from collections.abc import Callable, Iterable
from typing import Any

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from decbounds.bounds.constants import CHAIN_DENOMINATORS, chain_length, smallest_range
from decbounds.bounds.rate import RateOverflowError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from decbounds import bounds, instances, oracles
from decbounds.cli import main

FUZZ = os.environ.get("FUZZ") == "1"


def budget(normal: int, fuzz: int) -> settings:
    """Examples per test: ``normal`` in the suite, ``fuzz`` under FUZZ=1 (the profile gives the rest)."""
    return settings(
        max_examples=fuzz if FUZZ else normal,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
    )


REJECTED = object()

#: Values no numeric argument should take quietly.
WEIRD = st.sampled_from(
    [
        None,
        "1",
        "0.5",
        "",
        True,
        False,
        1j,
        1 + 0j,
        [1.0],
        (),
        {},
        float("nan"),
        float("inf"),
        -float("inf"),
        -1,
        0,
        -0.0,
        10**400,
        -(10**400),
        2**63,
        2**64 + 1,
        5e-324,
        1e-308,
        1e308,
        -1e-300,
        np.float64("nan"),
        np.int64(-3),
        np.float32(0.5),
        np.longdouble("1e4000"),  # beyond float64: casting it warns "overflow encountered in cast"
        np.array([1 + 1j]),  # casting it warns (ComplexWarning): TypeError first
        np.array([2.0 + 0j]),
        object(),
    ]
)


def reals(low: float = 1e-12, high: float = 1e12) -> st.SearchStrategy[Any]:
    """Mostly valid reals in [low, high] on a log scale, some extremes, some wrong values."""
    log_range = st.floats(math.log10(low), math.log10(high)).map(lambda e: float(10.0**e))
    extremes = st.sampled_from([5e-324, 1e-300, 1e-100, 1e100, 1e300, 1.7e308, 0.0])
    return st.one_of(log_range, log_range, log_range, extremes, WEIRD)


def counts(low: int = 1, high: int = 12) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.integers(low, high),
        st.integers(low, high),
        st.integers(low, high),
        st.sampled_from([0, -1, 10**6 + 1, 10**12, 10**30, 2**63]),
        WEIRD,
    )


def probabilities() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.floats(0.0, 1.0), st.floats(0.0, 1.0), st.sampled_from([1e-300, 5e-324, 1.0 + 1e-15]), WEIRD
    )


def names_an_argument(message: str, names: Iterable[str]) -> bool:
    return any(re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", message) for name in names)


def attempt(call: Callable[[], Any], names: Iterable[str]) -> Any:
    """call(), or REJECTED when it raises ValueError/TypeError naming one of ``names``."""
    names = list(names)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no call emits a warning
        try:
            return call()
        except (ValueError, TypeError) as err:
            assert names_an_argument(str(err), names), f"error names none of {names}: {err!r}"
            return REJECTED


def assert_finite(*values: Any) -> None:
    for value in values:
        if sp.issparse(value):
            value = value.data
        array = np.asarray(value, dtype=float)
        assert np.all(np.isfinite(array)), value


# --------------------------------------------------------------------------------------------------------
# bounds


RATE_VALUES = {
    "Delta": reals(),
    "L": reals(),
    "sigma": st.one_of(st.just(0.0), reals()),
    "varsigma": st.one_of(st.just(0.0), reals()),
    "varsigma0": st.one_of(st.just(0.0), reals()),
    "n": counts(1, 1000),
    "B": counts(1, 64),
    "epsilon": reals(1e-6, 10.0),
    "lam": st.one_of(st.floats(0.0, 0.999999), st.sampled_from([0.0, 1.0 - 1e-16, 1.0]), WEIRD),
    "D": counts(1, 100),
    "omega": st.one_of(st.just(0.0), reals()),
    "delta": st.one_of(st.floats(1e-6, 1.0), st.sampled_from([1.0, 1.0 + 1e-12, 0.0]), WEIRD),
}


@st.composite
def rate_points(draw: st.DrawFn) -> dict[str, Any]:
    point = {name: draw(strategy) for name, strategy in RATE_VALUES.items()}
    drop = draw(st.lists(st.sampled_from(list(RATE_VALUES)), max_size=2))
    for name in drop:
        point.pop(name, None)
    if draw(st.integers(0, 20)) == 0:
        point["bogus"] = 1.0
    return point


@budget(60, 2000)
@given(name=st.sampled_from(bounds.names()), point=rate_points())
def test_fuzz_rate_evaluate(name: str, point: dict[str, Any]) -> None:
    rate = bounds.get(name)
    terms = attempt(lambda: rate.evaluate_terms(**point), [*point, *bounds.RATE_SYMBOLS])
    if terms is REJECTED:
        return
    assert_finite(list(terms.values()))
    assert all(value >= 0 for value in terms.values())
    try:
        total = rate.evaluate(**point)
    except RateOverflowError as err:  # finite terms whose sum exceeds the float range
        assert "overflow" in str(err)
        return
    assert math.isfinite(total) and total == math.fsum(terms.values())


@budget(40, 1500)
@given(
    name=st.sampled_from(bounds.names()),
    reference=st.sampled_from(bounds.names()),
    point=rate_points(),
    term=st.sampled_from([None, None, "communication", "sampling", "nope"]),
    convention=st.sampled_from([None, None, "grad_norm", "grad_norm_sq", "x", 3]),
)
def test_fuzz_gap_and_dominant_term(
    name: str, reference: str, point: dict[str, Any], term: str | None, convention: Any
) -> None:
    arguments = [*point, *bounds.RATE_SYMBOLS, "convention", "term", reference, name, "reference"]
    ratio = attempt(lambda: bounds.gap(name, reference, term=term, convention=convention, **point), arguments)
    if ratio is not REJECTED:
        assert math.isfinite(ratio) and ratio >= 0
    dominant = attempt(lambda: bounds.dominant_term(name, convention=convention, **point), arguments)
    if dominant is not REJECTED:
        assert dominant in bounds.get(name).terms


@budget(25, 600)
@given(
    name=st.sampled_from([n for n in bounds.names() if not bounds.get(n).expr.has(bounds.catalog.sp.floor)]),
    exponents=st.lists(st.floats(-40, 40), min_size=10, max_size=10),
    lam=st.floats(0.0, 0.99),
    size=st.integers(1, 4),
)
def test_fuzz_lambdify_agrees_with_evaluate(name: str, exponents: list[float], lam: float, size: int) -> None:
    # moderate inputs (where float64 is accurate): the vectorized evaluator matches evaluate point by point
    point = {
        key: 10.0**e
        for key, e in zip(
            ["Delta", "L", "sigma", "varsigma", "varsigma0", "epsilon"], exponents, strict=False
        )
    }
    point.update(n=4, B=2, D=3, lam=np.full(size, lam))
    rate = bounds.get(name)
    vector = attempt(lambda: rate.lambdify()(**point), list(point))
    if vector is REJECTED:
        return
    scalar = attempt(lambda: rate.evaluate(**{**point, "lam": lam}), list(point))
    if scalar is REJECTED:
        return
    assert_finite(vector)
    assert np.allclose(vector, scalar, rtol=1e-9, atol=0)


#: lambdify reproducers: all-scalar calls (a fallback that assigns into a numpy scalar fails) and an
#: intermediate underflow to 0 (a fallback that re-evaluates only non-finite points misses it)
LAMBDIFY_REPRODUCERS = [
    ("lower_bound_async", dict(Delta=1e-300, L=1e-300, sigma=1e100, B=94, epsilon=1e-150, D=157)),
    ("exact_diffusion", dict(Delta=1e-300, L=1e-100, sigma=1e100, n=61, B=107, epsilon=1e-150,
                             lam=0.33127246975903435)),
]
_NO_FLOOR = [n for n in bounds.names() if not bounds.get(n).expr.has(bounds.catalog.sp.floor)]


@st.composite
def extreme_rate_calls(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    """An entry and a valid point over the whole float range (where float64 over- or underflows), or one
    of the lambdify reproducers."""
    if draw(st.integers(0, 9)) == 0:
        name, point = draw(st.sampled_from(LAMBDIFY_REPRODUCERS))
        return name, dict(point)
    magnitude = st.floats(-300, 300).map(lambda e: float(10.0**e))
    point = {key: draw(magnitude) for key in ("Delta", "L", "sigma", "varsigma", "varsigma0", "epsilon")}
    point.update(n=draw(st.integers(1, 10**6)), B=draw(st.integers(1, 10**6)), D=draw(st.integers(1, 10**6)),
                 lam=draw(st.one_of(st.floats(0.0, 0.999999), st.sampled_from([1e-300, 1 - 1e-16]))))
    return draw(st.sampled_from(_NO_FLOOR)), point


@budget(30, 1500)
@given(call=extreme_rate_calls(), size=st.integers(0, 5), data=st.data())
def test_fuzz_lambdify_equals_evaluate_wherever_evaluate_returns(
    call: tuple[str, dict[str, Any]], size: int, data: st.DataObject
) -> None:
    # Property: at every point where evaluate returns a value, lambdify returns the same value
    # (scalars alone, and each point of a vector), with no warning; where evaluate refuses, lambdify does.
    name, point = call
    rate = bounds.get(name)
    point = {key: value for key, value in point.items() if key in rate.arguments}
    reference = attempt(lambda: rate.evaluate(**point), list(point))
    scalar = attempt(lambda: rate.lambdify()(**point), list(point))
    assert (reference is REJECTED) == (scalar is REJECTED), (reference, scalar)
    if reference is not REJECTED:
        assert np.ndim(scalar) == 0
        assert float(scalar) == pytest.approx(reference, rel=1e-12, abs=0)
    if size == 0:
        return
    # a vector along one symbol, the other points drawn the same way: each entry equals its own evaluate
    swept = data.draw(st.sampled_from([key for key in point if key not in ("n", "B", "D", "lam")] or ["x"]))
    if swept == "x":
        return
    column = [point[swept] * 10.0 ** data.draw(st.floats(-50, 50)) for _ in range(size)]
    vector = attempt(lambda: rate.lambdify()(**{**point, swept: np.array(column)}), list(point))
    expected = [attempt(lambda v=v: rate.evaluate(**{**point, swept: v}), list(point)) for v in column]
    if vector is REJECTED:  # one bad point refuses the call (a true overflow or a value out of range)
        assert any(value is REJECTED for value in expected)
        return
    assert vector.shape == (size,)
    for got, want in zip(vector.tolist(), expected, strict=True):
        assert want is not REJECTED and got == pytest.approx(want, rel=1e-12, abs=0)


@pytest.mark.parametrize(("name", "point"), LAMBDIFY_REPRODUCERS)
def test_lambdify_reproducers(name: str, point: dict[str, float]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert float(bounds.get(name).lambdify()(**point)) == bounds.get(name).evaluate(**point)


@budget(40, 1200)
@given(
    Delta=reals(1e-6, 1e12),
    L=reals(1e-3, 1e3),
    epsilon=reals(1e-4, 10.0),
    denominator=st.sampled_from([*CHAIN_DENOMINATORS, 7, "x"]),
    T_c=counts(1, 10**6),
)
def test_fuzz_chain_lengths(Delta: Any, L: Any, epsilon: Any, denominator: Any, T_c: Any) -> None:
    names = ["Delta", "L", "epsilon", "denominator", "T_c"]
    length = attempt(lambda: chain_length(Delta, L, epsilon, denominator), names)
    if length is not REJECTED:
        assert isinstance(length, int) and length >= 0
    smallest = attempt(lambda: smallest_range(T_c, L, epsilon, denominator), names)
    if smallest is not REJECTED:
        assert math.isfinite(smallest) and smallest > 0
        assert chain_length(smallest, L, epsilon, denominator) >= T_c
        assert chain_length(math.nextafter(smallest, 0.0), L, epsilon, denominator) < T_c


@budget(40, 1200)
@given(
    n=counts(1, 10**4),
    lam=RATE_VALUES["lam"],
    varsigma0=st.one_of(st.just(0.0), reals()),
    T=counts(1, 10**9),
    Delta=reals(),
    L=reals(),
    sigma=st.one_of(st.just(0.0), reals()),
    B=counts(1, 64),
    R=st.one_of(st.none(), counts(0, 100)),
)
def test_fuzz_detag_params(
    n: Any, lam: Any, varsigma0: Any, T: Any, Delta: Any, L: Any, sigma: Any, B: Any, R: Any
) -> None:
    names = ["n", "lam", "varsigma0", "T", "Delta", "L", "sigma", "B", "R"]
    phase = attempt(lambda: bounds.detag_phase_length(n, lam, varsigma0, T, Delta, L), names)
    if phase is not REJECTED:
        assert isinstance(phase, int) and phase >= 1
    alpha = attempt(lambda: bounds.detag_step_size(n, lam, varsigma0, T, Delta, L, sigma, B, R=R), names)
    if alpha is not REJECTED:
        assert math.isfinite(alpha) and alpha > 0
    eta = attempt(lambda: bounds.accelerated_gossip_eta(lam), ["lam"])
    if eta is not REJECTED:
        assert 0.0 <= eta < 1.0
    rho = attempt(lambda: bounds.accelerated_gossip_rho(lam, R), ["lam", "R"])
    if rho is not REJECTED:
        assert 0.0 <= rho <= 1.0


# --------------------------------------------------------------------------------------------------------
# instances: graphs and gossip


TOPOLOGY_PARAMS = {
    "torus": {"r": counts(1, 5), "c": counts(1, 5)},
    "exponential": {"directed": st.one_of(st.booleans(), WEIRD)},
    "erdos_renyi": {"p": probabilities(), "seed": counts(0, 10**6), "max_attempts": counts(1, 20)},
    "random_geometric": {"radius": reals(1e-3, 2.0), "seed": counts(0, 10**6), "max_attempts": counts(1, 20)},
    "ring_lattice": {"k": counts(1, 6)},
    "broom": {"D": counts(1, 12)},
}


@st.composite
def topology_calls(draw: st.DrawFn) -> tuple[Any, Any, dict[str, Any]]:
    name = draw(st.one_of(st.sampled_from(instances.TOPOLOGIES.names()), WEIRD))
    n = draw(counts(1, 40))
    params = (
        {key: draw(value) for key, value in TOPOLOGY_PARAMS.get(name, {}).items() if draw(st.booleans())}
        if isinstance(name, str)
        else {}
    )
    if draw(st.integers(0, 15)) == 0:
        params["bogus"] = 1
    return name, n, params


@budget(60, 1500)
@given(call=topology_calls())
def test_fuzz_topology(call: tuple[Any, Any, dict[str, Any]]) -> None:
    name, n, params = call
    # a message names what the user passed (torus with c=3: c, not the derived r)
    G = attempt(lambda: instances.topology(name, n, **params), ["name", "n", *params])
    if G is REJECTED:
        return
    assert sorted(G.nodes) == list(range(n))
    if not G.is_directed() and n > 1:
        assert nx.is_connected(G)


def _graph_zoo() -> st.SearchStrategy[Any]:
    small = st.tuples(
        st.sampled_from(["ring", "path", "star", "complete", "hypercube", "exponential"]), st.integers(1, 16)
    )

    def build(args: tuple[str, int]) -> nx.Graph:
        name, n = args
        n = 2 ** (n.bit_length() - 1) if name == "hypercube" else n
        return instances.topology(name, n)

    odd = st.sampled_from(
        [
            None,
            3,
            "G",
            [(0, 1)],
            nx.MultiGraph(nx.path_graph(3)),
            nx.DiGraph(nx.path_graph(3)),
            nx.Graph([(0, 1), (2, 3)]),
            nx.Graph([("a", "b")]),
            nx.Graph(),
            nx.Graph([(0, 0), (0, 1)]),
            nx.relabel_nodes(nx.path_graph(3), {0: 5}),
            np.eye(3),
        ]
    )
    return st.one_of(small.map(build), small.map(build), odd)


@budget(60, 1500)
@given(
    G=_graph_zoo(),
    weights=st.one_of(
        st.sampled_from(["metropolis", "max_degree", "uniform", "path"]), WEIRD, st.just("nope")
    ),
    allow_disconnected=st.one_of(st.just(False), st.just(True), WEIRD),
)
def test_fuzz_gossip_matrix(G: Any, weights: Any, allow_disconnected: Any) -> None:
    W = attempt(
        lambda: instances.gossip_matrix(G, weights, allow_disconnected=allow_disconnected),
        ["G", "weights", "allow_disconnected"],
    )
    if W is REJECTED:
        return
    assert_finite(W)
    dense = W.toarray()
    assert np.allclose(dense, dense.T) and np.allclose(dense.sum(axis=1), 1.0)
    if nx.is_connected(G):
        # every graph input is checked the same way: what gossip_matrix accepts, the others accept too
        lam = instances.check_gossip(W, G, nonnegative=True)
        assert 0.0 <= lam < 1.0
        factors = instances.exact_averaging_factors(G)
        product = np.eye(G.number_of_nodes())
        for F in factors:
            product = F @ product
        assert np.allclose(product, 1.0 / G.number_of_nodes())


@budget(40, 800)
@given(G=_graph_zoo())
def test_fuzz_every_graph_input_is_checked_the_same_way(G: Any) -> None:
    # Property (e.g. a self-loop must not reach exact_averaging_factors): one rule for every graph input, so
    # the functions taking an undirected G accept or refuse the same graphs (named errors, no warning)
    calls = {
        "gossip_matrix": lambda: instances.gossip_matrix(G),
        "exact_averaging_factors": lambda: instances.exact_averaging_factors(G),
        "check_gossip": lambda: instances.check_gossip(instances.gossip_matrix(G), G),
    }
    outcomes = {name: attempt(call, ["G", "W"]) is REJECTED for name, call in calls.items()}
    assert len(set(outcomes.values())) == 1, outcomes


@budget(4, 40)
@given(
    G=_graph_zoo(),
    method=st.one_of(st.sampled_from(["fdla", "fmmc"]), WEIRD),
    solver=st.sampled_from(["auto", "lp", "barrier", "CLARABEL", "nope", None]),
    tol=st.one_of(st.just(1e-8), reals(1e-12, 0.5)),
)
def test_fuzz_optimize_gossip(G: Any, method: Any, solver: Any, tol: Any) -> None:
    result = attempt(
        lambda: instances.optimize_gossip(G, method, solver=solver, cache=False, tol=tol),
        ["G", "method", "solver", "tol"],
    )
    if result is REJECTED:
        return
    assert_finite(result.W, result.lam)
    assert 0.0 <= result.lam < 1.0 and result.lam == pytest.approx(instances.second_eigenvalue(result.W))


def _matrices() -> st.SearchStrategy[Any]:
    def random_gossip(args: tuple[int, int]) -> Any:
        n, seed = args
        return instances.gossip_matrix(instances.topology("erdos_renyi", n, p=0.6, seed=seed))

    def corrupt(args: tuple[int, int, float]) -> np.ndarray:
        n, seed, value = args
        W = random_gossip((n, seed)).toarray()
        rng = np.random.default_rng(seed)
        W[rng.integers(n), rng.integers(n)] = value
        return W

    odd = st.sampled_from(
        [
            None,
            "W",
            1.0,
            [[1.0]],
            [[0.5, 0.5]],
            np.zeros((0, 0)),
            np.zeros((2, 2, 2)),
            np.array([[0.5, 0.5j], [0.5j, 0.5]]),
            np.array([["a"]]),
            np.array([[0.0, 1.0], [1.0, 0.0]]),
            np.eye(3),
            sp.csr_array((0, 0)),
            sp.csr_array(np.full((2, 2), 0.5)),
            np.full((3, 3), np.nan),
        ]
    )
    valid = st.tuples(st.integers(1, 12), st.integers(0, 1000)).map(random_gossip)
    broken = st.tuples(
        st.integers(2, 8), st.integers(0, 1000), st.sampled_from([np.nan, np.inf, -np.inf, 2.0, -0.5, 1e308])
    ).map(corrupt)
    return st.one_of(valid, valid, broken, odd)


@budget(60, 1500)
@given(
    W=_matrices(),
    kappa=st.one_of(st.floats(0.0, 1.0), WEIRD),
    atol=st.one_of(st.just(1e-9), WEIRD),
    nonnegative=st.one_of(st.booleans(), WEIRD),
)
def test_fuzz_gossip_checks(W: Any, kappa: Any, atol: Any, nonnegative: Any) -> None:
    lam = attempt(
        lambda: instances.check_gossip(W, atol=atol, nonnegative=nonnegative), ["W", "atol", "nonnegative"]
    )
    if lam is not REJECTED:
        assert 0.0 <= lam < 1.0
    gap = attempt(lambda: instances.spectral_gap(W, atol=atol), ["W", "atol"])
    if gap is not REJECTED:  # negative where lam > 1: a symmetric stochastic W with negative entries
        assert math.isfinite(gap) and gap <= 1.0 + 1e-9
        if lam is not REJECTED:
            assert gap == pytest.approx(1.0 - lam, abs=1e-12)
    lazy = attempt(lambda: instances.lazy(W, kappa), ["W", "kappa"])
    if lazy is not REJECTED:
        assert_finite(lazy)
        if gap is not REJECTED:
            assert instances.spectral_gap(lazy) >= kappa * gap - 1e-9


@budget(60, 1500)
@given(
    method=st.one_of(st.sampled_from(instances.GOSSIP_METHODS), WEIRD),
    lam=RATE_VALUES["lam"],
    R=counts(0, 50),
    eta=st.one_of(st.none(), st.floats(0.0, 0.99), WEIRD),
    start=st.one_of(st.sampled_from(instances.GOSSIP_STARTS), WEIRD),
    W=_matrices(),
    Z=st.one_of(st.integers(1, 12).map(lambda n: np.arange(float(n))), WEIRD),
)
def test_fuzz_gossip_schedules(method: Any, lam: Any, R: Any, eta: Any, start: Any, W: Any, Z: Any) -> None:
    schedule = attempt(
        lambda: instances.multi_step_gossip_coefficients(method, lam, R, eta=eta, start=start),
        ["method", "lam", "R", "eta", "start"],
    )
    if schedule is REJECTED:
        return
    assert_finite(schedule)
    assert schedule.shape == (R, 2) and np.allclose(schedule.sum(axis=1), 1.0)
    mixed = attempt(lambda: instances.multi_step_gossip(W, Z, schedule), ["W", "Z", "schedule"])
    if mixed is not REJECTED and np.all(np.isfinite(Z)):
        assert mixed.shape == np.shape(Z)
        # the average is kept when W is a gossip matrix (any square real W is accepted: multi-step gossip
        # is the polynomial p_R(W), whatever W)
        if attempt(lambda: instances.check_gossip(W, nonnegative=False), ["W"]) is not REJECTED:
            assert np.mean(mixed) == pytest.approx(np.mean(Z), abs=1e-6 * (1 + np.abs(Z).max()) * max(R, 1))


# --------------------------------------------------------------------------------------------------------
# instances: functions


@st.composite
def hard_instance_calls(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    kind = draw(st.sampled_from(["sampling", "communication"]))
    kwargs: dict[str, Any] = {"n": draw(counts(1, 12))}
    if draw(st.booleans()):
        kwargs["Delta"] = draw(reals(1.0, 1e7))
    else:
        kwargs["T_c"] = draw(counts(1, 200))
    if draw(st.booleans()):
        kwargs["L"] = draw(reals(1e-2, 1e3))
    if draw(st.booleans()):
        kwargs["epsilon"] = draw(reals(1e-3, 1.0))
    if kind == "sampling":
        if draw(st.booleans()):
            kwargs["sigma"] = draw(st.one_of(st.just(0.0), reals(1e-3, 1e4)))
        else:
            kwargs["p"] = draw(probabilities())
    elif draw(st.booleans()):
        kwargs["D"] = draw(counts(1, 12))
    return kind, kwargs


@budget(60, 1500)
@given(call=hard_instance_calls())
def test_fuzz_hard_instances(call: tuple[str, dict[str, Any]]) -> None:
    kind, kwargs = call
    n = kwargs.pop("n")
    build = instances.sampling_instance if kind == "sampling" else instances.communication_instance
    f = attempt(lambda: build(n, **kwargs), ["n", *kwargs, "T_c", "Delta", "L", "epsilon", "sigma", "p"])
    if f is REJECTED:
        return
    assert_finite(f.Delta, f.scale, f.gain, f.smoothness)
    length = bounds.setting1_chain_length if kind == "sampling" else bounds.setting2_chain_length
    assert f.T_c == length(f.Delta, f.L, f.epsilon)  # one definition of T_c on both sides
    if kind == "sampling":
        assert 0.0 < f.p <= 1.0 and math.isfinite(f.sigma)
    G = f.grad(np.zeros((f.n, f.dim)))
    assert_finite(G)
    # the zero-chain property at x0: only the first coordinate moves, with |gradient| >= 2 eps there
    assert np.all(G[:, 1:] == 0.0) and np.abs(f.full_grad(f.x0)[0]) >= 2 * f.epsilon * (1 - 1e-9)


@budget(40, 1000)
@given(T=counts(1, 300), n=counts(1, 12), D=st.one_of(st.none(), counts(1, 12)))
def test_fuzz_zero_chain_and_split_groups(T: Any, n: Any, D: Any) -> None:
    f = attempt(lambda: instances.zero_chain(T, n), ["T", "n"])
    if f is not REJECTED:
        X = np.zeros((f.n, 2, f.dim))
        X[..., 0] = 1.0
        assert_finite(f.grad(X), f.value(X))
    split = attempt(lambda: instances.split_groups(n, D), ["n", "D"])
    if split is not REJECTED:
        I0, I1, dist = split
        assert len(set(I0) & set(I1)) == 0 and dist >= 1


#: zero-chain points: far (|x|^2 overflows on the way), non-finite, complex
CHAIN_POINT_VALUES = [1.0, 0.7, -3.0, 1e154, 1e308, -1e308, float("inf"), -float("inf"), float("nan"),
                      5e-324, 1 + 1j, 2 + 0j]


@budget(40, 1500)
@given(T=st.integers(1, 300), n=st.integers(1, 6), batch=st.integers(1, 3),
       values=st.lists(st.sampled_from(CHAIN_POINT_VALUES), min_size=1, max_size=4), data=st.data())
def test_fuzz_zero_chain_gradient_at_any_point(T: int, n: int, batch: int, values: list[Any],
                                                data: st.DataObject) -> None:
    # Property: no warning at any point; a finite point gets a finite gradient, a point with a
    # NaN or an inf gets NaN in its whole row (never a finite number), a complex point a TypeError.
    f = instances.zero_chain(T, n)
    X = np.zeros((n, batch, T), dtype=complex if any(isinstance(v, complex) for v in values) else float)
    for value in values:
        X[data.draw(st.integers(0, n - 1)), data.draw(st.integers(0, batch - 1)),
          data.draw(st.integers(0, T - 1))] = value
    G = attempt(lambda: f.grad(X), ["X"])
    full = attempt(lambda: f.full_grad(X[0]), ["x"])
    if np.iscomplexobj(X):
        assert G is REJECTED and full is REJECTED
        return
    for point, gradient in ((X, G), (X[0], full)):
        bad = ~np.isfinite(point).all(axis=-1)
        assert np.all(np.isfinite(gradient[~bad]))
        assert np.all(np.isnan(gradient[bad]))


@budget(50, 1200)
@given(
    kind=st.sampled_from(["quadratic", "nonconvex"]),
    n=counts(1, 8),
    d=counts(1, 8),
    varsigma=st.one_of(st.just(0.0), reals(1e-3, 10.0)),
    share=st.one_of(st.none(), st.floats(0.0, 1.0)),
    seed=st.one_of(counts(0, 10**6), st.just(np.random.default_rng(1))),
    L=st.one_of(st.just(1.0), reals()),
    mu=st.one_of(st.none(), reals()),
    Delta=st.one_of(st.none(), reals(1e-3, 1e3)),
)
def test_fuzz_heterogeneous_problems(
    kind: str, n: Any, d: Any, varsigma: Any, share: Any, seed: Any, L: Any, mu: Any, Delta: Any
) -> None:
    varsigma0 = (
        share * varsigma
        if share is not None and isinstance(varsigma, float) and math.isfinite(varsigma)
        else None
    )
    kwargs = {"varsigma0": varsigma0, "L": L}
    if Delta is not None:
        kwargs["Delta"] = Delta
    if kind == "quadratic":
        kwargs["mu"] = mu
        build = instances.heterogeneous_quadratic
    else:
        build = instances.heterogeneous_nonconvex
    f = attempt(lambda: build(n, d, varsigma, seed, **kwargs), ["n", "d", "varsigma", "seed", *kwargs])
    if f is REJECTED:
        return
    x0 = np.zeros((f.n, f.dim))
    assert_finite(f.grad(x0), f.value(x0), f.full_grad(f.x0), f.x_star, f.f_star)
    assert f.full_value(f.x0) - f.f_star == pytest.approx(f.Delta, rel=1e-6, abs=1e-12)
    assert f.heterogeneity(f.x0) == pytest.approx(f.varsigma0, rel=1e-6, abs=1e-9)
    assert f.heterogeneity(f.heterogeneity_maximizer()) == pytest.approx(f.varsigma, rel=1e-6, abs=1e-9)


@budget(40, 1000)
@given(
    n=counts(1, 40),
    percent=st.one_of(st.floats(0.0, 100.0), WEIRD),
    seed=counts(0, 10**6),
    balanced=st.one_of(st.booleans(), WEIRD),
    labels=st.one_of(st.integers(1, 6).map(lambda k: np.repeat(np.arange(k), 7)), WEIRD),
)
def test_fuzz_shuffle_partition(n: Any, percent: Any, seed: Any, balanced: Any, labels: Any) -> None:
    shards = attempt(
        lambda: instances.shuffle_partition(labels, n, percent, seed, balanced=balanced),
        ["labels", "n", "shuffled_percent", "seed", "balanced"],
    )
    if shards is REJECTED:
        return
    assert shards.shape[0] == n and len(np.unique(shards)) == shards.size


# --------------------------------------------------------------------------------------------------------
# oracles


ORACLE_PROBLEMS = {
    "quadratic": lambda: instances.heterogeneous_quadratic(3, 4, 0.5, 0),
    "chain": lambda: instances.sampling_instance(3, T_c=5, p=0.3),
    "digits": lambda: instances.digits_problem(4, shuffled_percent=50, seed=0, model="logistic_nonconvex"),
}
_PROBLEM_CACHE: dict[str, Any] = {}


def _problem(name: str) -> Any:
    if name not in _PROBLEM_CACHE:
        _PROBLEM_CACHE[name] = ORACLE_PROBLEMS[name]()
    return _PROBLEM_CACHE[name]


@budget(50, 1200)
@given(
    name=st.one_of(st.sampled_from(oracles.ORACLES.names()), WEIRD),
    problem=st.sampled_from(list(ORACLE_PROBLEMS)),
    params=st.fixed_dictionaries(
        {},
        optional={
            "sigma": reals(1e-6, 1e3),
            "p": probabilities(),
            "replace": st.one_of(st.booleans(), WEIRD),
        },
    ),
    batch=counts(1, 8),
    seed=st.integers(0, 10**6),
    rng_ok=st.booleans(),
)
def test_fuzz_oracles(
    name: Any, problem: str, params: dict[str, Any], batch: Any, seed: int, rng_ok: bool
) -> None:
    f = _problem(problem)
    oracle = attempt(lambda: oracles.make_oracle(name, f, **params), ["name", "f", "sigma", "p", "replace"])
    if oracle is REJECTED:
        return
    X = np.broadcast_to(f.x0, (f.n, 2, f.dim)).copy()
    rng = np.random.default_rng(seed) if rng_ok else seed
    G = attempt(lambda: oracle.sample(X, rng, batch), ["X", "rng", "batch"])
    if G is REJECTED:
        return
    assert G.shape == X.shape
    assert_finite(G)
    if oracle.exact:
        np.testing.assert_allclose(G, f.grad(X))


# --------------------------------------------------------------------------------------------------------
# the CLI, through main(argv)


def _run_cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(argv)
        except SystemExit as exit_:  # argparse: bad option syntax or value, exit status 2
            status = exit_.code if isinstance(exit_.code, int) else 1
    return status, out.getvalue(), err.getvalue()


#: --n of the gossip subcommand: small sizes or strings that must be refused before anything is built
GOSSIP_N_TEXT = st.one_of(
    st.integers(1, 9).map(str),
    st.sampled_from(["0", "-1", "x", "", "1e3", "2.5", "1000001", str(10**12), "9" * 40, "nan"]),
)
NUMBER_TEXT = st.one_of(
    st.floats(1e-6, 1e6).map(repr),
    st.integers(-5, 10**6).map(str),
    st.sampled_from(
        ["nan", "inf", "-inf", "1e-300", "1e300", "5e-324", "0", "-1", "x", "", "1e400", "10" * 60]
    ),
)


@st.composite
def predict_argvs(draw: st.DrawFn) -> list[str]:
    argv = ["predict", draw(st.one_of(st.sampled_from(bounds.names()), st.just("nope")))]
    for name in bounds.RATE_SYMBOLS:
        if draw(st.integers(0, 6)) > 0:
            argv += [f"--{name}", draw(NUMBER_TEXT)]
    if draw(st.booleans()):
        argv += ["--convention", draw(st.sampled_from(["grad_norm", "grad_norm_sq", "bad"]))]
    if draw(st.integers(0, 4)) == 0:
        argv += ["--reference", draw(st.sampled_from([*bounds.names(), "nope"]))]
    return argv


def _check_cli(status: int, out: str, err: str, names: Iterable[str]) -> None:
    assert "Traceback" not in err
    if status == 0:
        for token in re.findall(r"[-+]?(?:nan|inf)\b", out.lower()):
            raise AssertionError(f"printed {token!r} as a number:\n{out}")
    else:
        assert status == 2, (status, err)
        assert names_an_argument(err, names) or "argument" in err or "give a catalog" in err, err


@budget(50, 1200)
@given(argv=predict_argvs())
def test_fuzz_cli_predict(argv: list[str]) -> None:
    status, out, err = _run_cli(argv)
    _check_cli(status, out, err, [*bounds.RATE_SYMBOLS, "convention", "reference", "rate"])
    if status == 0:
        assert "total" in out and "dominant term" in out


@budget(4, 60)
@given(
    topology=st.sampled_from(["ring", "path", "complete", "star", "erdos_renyi", "torus", "broom", "nope"]),
    n=GOSSIP_N_TEXT,
    extra=st.lists(
        st.sampled_from(
            [
                ["--p", "0.5"],
                ["--p", "1e-300"],
                ["--seed", "-1"],
                ["--seed", "3"],
                ["--D", "2"],
                ["--k", "1"],
                ["--weights", "uniform"],
                ["--weights", "path"],
            ]
        ),
        max_size=3,
    ),
)
def test_fuzz_cli_gossip(
    tmp_path_factory: pytest.TempPathFactory, topology: str, n: str, extra: list[list[str]]
) -> None:
    cache = tmp_path_factory.getbasetemp() / "gossip-cache"
    argv = ["gossip", topology, "--n", n, "--cache-dir", str(cache)] + [
        item for pair in extra for item in pair
    ]
    status, out, err = _run_cli(argv)
    _check_cli(status, out, err, ["n", "p", "seed", "D", "k", "weights", "G", "topology", "r", "c", "radius"])


# --------------------------------------------------------------------------------------------------------
# algorithms.run (owned by algorithms/; its argument checks go through bounds.validation too). The one input
# it still accepts without an error is kept out of the draw and listed in KNOWN_GAPS.

#: run() inputs still open (see docs/reliability.md): none since iterations is capped at 10**12.
KNOWN_GAPS: tuple[str, ...] = ()

RUN_WEIRD = st.sampled_from(
    [
        None,
        "1",
        "x",
        True,
        [0.1],
        1j,
        float("nan"),
        float("inf"),
        -1,
        0,
        5e-324,
        1e-300,
        1e308,
        10**400,
        np.float64("nan"),
        2**63,
    ]
)
_RUN_F = instances.heterogeneous_quadratic(4, 3, 1.0, 0)
_RUN_W = instances.gossip_matrix(instances.topology("ring", 4))
#: a hyper-parameter per algorithm, drawn valid or weird
_RUN_HYPER = {
    "local_sgd": ("H", st.integers(1, 5)),
    "dpsgd": ("momentum", st.floats(0.0, 0.9)),
    "detag": ("gossip", st.sampled_from(["two_tap", "chebyshev", "plain"])),
}


@budget(25, 600)
@given(
    name=st.one_of(
        st.sampled_from(["dpsgd", "dsgt", "detag", "d2", "local_sgd", "defacto"]), RUN_WEIRD, st.just("nope")
    ),
    step_size=st.one_of(st.floats(1e-4, 1.0), st.floats(1e-4, 1.0), RUN_WEIRD),
    iterations=st.one_of(
        st.integers(0, 30),
        st.integers(0, 30),
        RUN_WEIRD,
    ),
    seed=st.one_of(st.integers(0, 10**6), RUN_WEIRD),
    batch=st.one_of(st.integers(1, 4), RUN_WEIRD),
    tol=st.one_of(st.none(), st.floats(1e-8, 1.0), RUN_WEIRD.filter(lambda v: v is not None)),
    W=st.sampled_from(["ring", "nan", "complex", "empty", "none"]),
    data=st.data(),
)
def test_fuzz_algorithms_run(
    name: Any, step_size: Any, iterations: Any, seed: Any, batch: Any, tol: Any, W: str, data: st.DataObject
) -> None:
    from decbounds import algorithms

    matrix = {
        "ring": _RUN_W,
        "none": None,
        "complex": _RUN_W.toarray() * (1 + 0j),
        "empty": np.zeros((0, 0)),
        "nan": np.where(_RUN_W.toarray() > 0.4, np.nan, _RUN_W.toarray()),
    }[W]
    hyper = {}
    if isinstance(name, str) and name in _RUN_HYPER and data.draw(st.booleans()):
        key, valid = _RUN_HYPER[name]
        hyper[key] = data.draw(st.one_of(valid, RUN_WEIRD))
    result = attempt(
        lambda: algorithms.run(
            name,
            _RUN_F,
            matrix,
            step_size=step_size,
            iterations=iterations,
            seed=seed,
            batch=batch,
            tol=tol,
            **hyper,
        ),
        [
            "name",
            "W",
            "step_size",
            "iterations",
            "seed",
            "batch",
            "tol",
            "problem",
            "H",
            "momentum",
            "gossip",
        ],
    )
    if result is REJECTED:
        return
    assert result.iterations <= iterations
    if not result.diverged:
        assert_finite(result.grad_norms)


# --------------------------------------------------------------------------------------------------------
# sizes are capped before allocation or a solve; the CLI reports every wrong argument; closed pipes


@budget(30, 600)
@given(
    K=st.one_of(st.sampled_from([0, -1, 33, 10**6, 2**63, 10**400]), WEIRD),
    N=st.one_of(st.none(), st.integers(2, 40), WEIRD),
    step_size=st.one_of(st.none(), st.sampled_from([0.5, 1e7, 1e308]), WEIRD),
    L=st.one_of(st.just(1.0), WEIRD),
)
def test_fuzz_pep_sizes_are_capped_before_the_solve(K: Any, N: Any, step_size: Any, L: Any) -> None:
    # Property (K = 10**6 would run until killed): a K, an N * K or a step_size * L beyond the PEP's
    # measured limits is a named error before anything is built; none of these K values is valid
    from decbounds.pep.api import worst_case

    result = attempt(lambda: worst_case("dsgt", K, L, step_size, spectrum=(0.0, 0.5), N=N),
                     ["K", "N", "step_size", "L"])
    assert result is REJECTED


def test_worst_case_cli_reports_every_wrong_argument() -> None:
    status, _out, err = _run_cli(["worst-case", "detag", "--K", "-1", "--step", "-2"])
    assert status == 2 and "Traceback" not in err
    assert "K=-1" in err and "step_size" in err and "--lam-min" in err, err


@pytest.mark.parametrize("argv", [["predict", "--list"], ["worst-case", "--list"], ["gossip", "--help"],
                                  ["run", "--help"], ["figures", "--help"], ["verify", "--help"], ["--help"]])
def test_a_closed_pipe_ends_quietly(argv: list[str]) -> None:
    # `decbounds predict --list | head` ends quietly, no BrokenPipeError traceback; a real pipe whose
    # reader is gone before anything is written
    import subprocess
    import sys

    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run([sys.executable, "-m", "decbounds.cli", *argv], stdout=write_end,
                              stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write_end)
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr
    assert done.returncode in (0, 141)
