"""The rescaled hard instances of §4: Setting 1, Setting 2 on the path and the broom (errata E2, E17)."""

import math

import decbounds.bounds.rate
import networkx as nx
import numpy as np
import pytest
from decbounds.instances.hard import communication_instance, sampling_instance, split_groups
from decbounds.instances.zero_chain import DELTA0, L1, zero_chain
from hypothesis import given, settings
from hypothesis import strategies as st

from decbounds import bounds


def chain_points(T, rows, seed, spread=1.5):
    rng = np.random.default_rng(seed)
    X = spread * rng.standard_normal((rows, T))
    X[np.arange(T) >= rng.integers(0, T + 1, size=rows)[:, None]] = 0.0
    return X


@st.composite
def broom_sizes(draw):
    n = draw(st.integers(2, 40))
    D = draw(st.one_of(st.none(), st.integers(1, n - 1)))
    return n, D


@given(sizes=broom_sizes(), T=st.integers(1, 9), seed=st.integers(0, 1000))
def test_setting2_average_is_the_zero_chain(sizes, T, seed):
    n, D = sizes
    f = communication_instance(n, D=D, T_c=T)  # unscaled: scale = gain = 1
    chain = zero_chain(T)
    x = chain_points(T, 3, seed)
    X = np.broadcast_to(x, (n, 3, T))
    np.testing.assert_allclose(f.grad(X).mean(axis=0), chain.full_grad(x), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(f.value(X).mean(axis=0), chain.full_value(x), rtol=1e-12, atol=1e-11)
    np.testing.assert_array_equal(f.full_grad(x), chain.full_grad(x))
    # workers outside I0 and I1 hold 0
    others = np.setdiff1d(np.arange(n), np.concatenate(f.groups))
    assert np.all(f.grad(X)[others] == 0) and np.all(f.value(X)[others] == 0)


@given(sizes=broom_sizes())
def test_groups_sit_at_the_ends_at_the_stated_distance(sizes):
    n, D = sizes
    I0, I1, dist = split_groups(n, D)
    c = math.ceil(n / 3)
    assert I0.size == I1.size and n / I0.size <= 3  # weights <= 3: every local f_hat_i is 3 l1-smooth
    assert set(I0).isdisjoint(I1)
    if D is None:
        assert I0.size == c and dist == n - 2 * c + 1  # Cor. 2
    from decbounds.instances.graphs import topology

    G = topology("path", n) if D is None else topology("broom", n, D=D)
    hops = min(nx.multi_source_dijkstra_path_length(G, set(I0.tolist()))[j] for j in I1)
    assert hops == dist
    if D is not None and D < n - 2 * c + 2:  # case 2: leaves only, I0 left and I1 right
        parts = nx.get_node_attributes(G, "part")
        if D > 1:
            assert {parts[i] for i in I0} == {"left_leaf"} and {parts[i] for i in I1} == {"right_leaf"}
        assert I0.size == (n - D + 1) // 2 and dist == D


def test_path_instance_matches_corollary_2():
    f = communication_instance(12, T_c=6)
    np.testing.assert_array_equal(f.groups[0], [0, 1, 2, 3])
    np.testing.assert_array_equal(f.groups[1], [8, 9, 10, 11])
    assert f.dist == 5 and f.weights == (3.0, 3.0)
    assert f.iteration_lower_bound == 1 + 5 * 5  # docs/errata.md E17
    assert f.graph().number_of_edges() == 11
    assert f.scale == 1.0 and f.gain == 1.0 and f.smoothness == 3 * L1  # docs/errata.md E19: 456


@pytest.mark.parametrize("step", [1.0 / (3 * L1), 1e6])
def test_information_moves_one_hop_per_iteration(step):
    # errata E17, E19: under zero-respecting updates prog(t) <= 1 + floor((t - 1) / dist). Steps beyond the
    # admissible 1/L_local push each new coordinate past the Psi threshold 1/2 at once and attain the count.
    n, T = 9, 5
    f = communication_instance(n, T_c=T)
    W = nx.to_numpy_array(f.graph()) / 3.0
    W += np.diag(1.0 - W.sum(axis=1))
    X = np.zeros((n, T))
    levels = []
    for _ in range(1 + (T - 1) * f.dist):
        X = W @ (X - step * f.grad(X))
        levels.append(int(f.progress(X).max()))
    allowed = [1 + (t - 1) // f.dist for t in range(1, len(levels) + 1)]
    assert all(level <= bound for level, bound in zip(levels, allowed, strict=True))
    assert levels[-1] == (T if step > 1 else 1)


def test_broom_both_cases():
    # n = 12: case 1 iff D >= 12 - 8 + 2 = 6
    I0, I1, dist = split_groups(12, 6)
    np.testing.assert_array_equal(I1, [8, 9, 10, 11])
    np.testing.assert_array_equal(I0, [0, 1, 2, 3])
    assert dist == 5
    I0, _, dist = split_groups(12, 5)  # case 2: 4 leaves per side
    assert I0.size == 4 and dist == 5
    I0, _, dist = split_groups(12, 2)  # star
    assert I0.size == 5 and dist == 2
    I0, _, dist = split_groups(12, 1)  # complete graph
    assert I0.size == 6 and dist == 1


def test_setting1_scaling_and_corrected_chain_length():
    Delta, L, eps, sigma = 3.0, 2.0, 0.01, 1.5
    f = sampling_instance(8, Delta=Delta, L=L, epsilon=eps, sigma=sigma)
    # errata E2: floor(Delta L / (4 Delta0 l1 eps^2)), not the printed floor(Delta / (Delta0 l1 (2 eps)^2))
    assert f.T_c == math.floor(Delta * L / (4 * DELTA0 * L1 * eps**2)) == 8
    assert math.floor(Delta / (DELTA0 * L1 * (2 * eps) ** 2)) == 4  # the printed one differs
    assert f.scale == pytest.approx(2 * L1 * eps / L)
    assert f.p == pytest.approx((2 * 23 * eps) ** 2 / sigma**2)
    assert f.smoothness == L
    x = chain_points(f.T_c, 200, 0) * f.scale
    G = f.full_grad(x)
    short = f.progress(x) < f.T_c
    assert np.all(np.abs(G[short]).max(axis=1) >= 2 * eps * (1 - 1e-12))  # ||grad f|| >= 2 eps
    assert np.all(f.full_value(np.zeros(f.T_c)) - f.full_value(x * 30) <= Delta)  # f(0) - inf f <= Delta
    rng = np.random.default_rng(1)
    y = x + 1e-3 * f.scale * rng.standard_normal(x.shape)
    ratio = np.linalg.norm(f.full_grad(x) - f.full_grad(y), axis=1) / np.linalg.norm(x - y, axis=1)
    assert ratio.max() <= f.smoothness


@settings(max_examples=10)
@given(sizes=broom_sizes(), seed=st.integers(0, 100))
def test_setting2_scaled_local_smoothness(sizes, seed):
    n, D = sizes
    f = communication_instance(n, D=D, Delta=50.0, L=2.0, epsilon=0.01)
    assert f.T_c == math.floor(50.0 * 2.0 / (262656 * 0.01**2))
    assert f.smoothness == 2.0 and f.scale == pytest.approx(6 * L1 * 0.01 / 2.0)
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(n, 50, f.T_c)) * f.scale
    Y = X + 1e-3 * f.scale * rng.standard_normal(X.shape)
    ratio = np.linalg.norm(f.grad(X) - f.grad(Y), axis=-1) / np.linalg.norm(X - Y, axis=-1)
    assert ratio.max() <= f.smoothness


def test_one_link_hessian_is_below_l1():
    # the split's smoothness argument: a single link's Hessian norm (grid estimate ~134) is <= l1
    chain = zero_chain(2)
    a, b = np.meshgrid(np.linspace(-3, 3, 241), np.linspace(-5, 5, 201), indexing="ij")
    P = np.stack([a.ravel(), b.ravel()], axis=1)

    def link_grad(P):
        G = chain.full_grad(P)
        G[:, 0] += math.sqrt(math.e) * np.exp(-P[:, 0] ** 2 / 2)  # remove the first term
        return G

    h = 1e-5
    H = np.stack([(link_grad(P + h * e) - link_grad(P - h * e)) / (2 * h) for e in np.eye(2)], axis=2)
    norm = np.abs(np.linalg.eigvalsh(0.5 * (H + H.transpose(0, 2, 1)))).max()
    assert 100 < norm <= L1


def test_unscaled_defaults_and_t_c_constructor():
    f = sampling_instance(4, T_c=10, p=0.01)
    assert f.scale == 1.0 and f.gain == 1.0 and f.Delta == pytest.approx(12 * 10)
    assert f.sigma == pytest.approx(23 / 0.1)
    np.testing.assert_array_equal(f.full_grad(np.ones((2, 10))), zero_chain(10).full_grad(np.ones((2, 10))))
    g = communication_instance(6, T_c=7)
    assert g.Delta == pytest.approx(144 * 7)
    for T_c in range(1, 60):  # the T_c constructor gives the smallest Delta whose (exact) formula returns T_c
        h = sampling_instance(2, T_c=T_c, L=0.3, epsilon=0.07, sigma=1.0)
        assert bounds.setting1_chain_length(h.Delta, 0.3, 0.07) == T_c
        assert bounds.setting1_chain_length(math.nextafter(h.Delta, 0), 0.3, 0.07) == T_c - 1
        k = communication_instance(3, T_c=T_c, L=0.3, epsilon=0.07)
        assert bounds.setting2_chain_length(k.Delta, 0.3, 0.07) == T_c


@pytest.mark.parametrize(("build", "catalog", "expected"), [
    # an exact floor in the instances and in bounds/ (a float floor gives 9, 35, and "T_c = 0" for the third)
    (lambda: communication_instance(4, Delta=26265.6, L=1.0, epsilon=0.1),
     lambda: bounds.setting2_chain_length(26265.6, 1.0, 0.1), 10),
    (lambda: sampling_instance(7, Delta=875.52, L=3.0, epsilon=0.1, p=1.0),
     lambda: bounds.setting1_chain_length(875.52, 3.0, 0.1), 36),
    (lambda: communication_instance(4, Delta=2626.56, L=1.0, epsilon=0.1),
     lambda: bounds.setting2_chain_length(2626.56, 1.0, 0.1), 1),
])
def test_chain_length_agrees_with_the_catalog(build, catalog, expected):
    assert build().T_c == catalog() == expected
    point = {"Delta": 26265.6, "L": 1.0, "epsilon": 0.1, "n": 4, "B": 1, "sigma": 0.0}
    T_c = bounds.setting2_chain_length(26265.6, 1.0, 0.1)
    assert float(bounds.SETTING2_CHAIN_LENGTH.subs({bounds.RATE_SYMBOLS[k]: decbounds.bounds.rate._exact(v)
                                                    for k, v in point.items()
                                                    if k in ("Delta", "L", "epsilon")})) == T_c


@pytest.mark.parametrize(("build", "message"), [
    # extreme input: errors naming the arguments, never a ZeroDivisionError, OverflowError or MemoryError
    (lambda: communication_instance(7, T_c=6, epsilon=5e-324), r"T_c=6, L=456.0 and epsilon=5e-324"),
    (lambda: communication_instance(2, Delta=1e308), r"Delta=1e\+308 is too large.*about 10\^305"),
    (lambda: sampling_instance(11, T_c=3, p=10**400), r"p must be a finite real number.*overflows float"),
    (lambda: communication_instance(3, T_c=3, L=1e308), r"L=1e\+308 and epsilon=0.5 give the scale"),
    (lambda: communication_instance(3, T_c=10**12), r"T_c is too large"),
    (lambda: sampling_instance(3, T_c=2, sigma=1e300), r"sigma=1e\+300 and epsilon=0.5"),
    (lambda: sampling_instance(3, T_c=2, p=True), r"p must be a real number"),
    (lambda: communication_instance(3.0, T_c=2), r"n must be an integer"),
])
def test_extreme_inputs_are_named_errors(build, message):
    with pytest.raises((ValueError, TypeError), match=message):
        build()


def test_bad_input():
    with pytest.raises(ValueError, match="epsilon"):
        sampling_instance(4, Delta=1.0, L=1.0, epsilon=0.0, sigma=1.0)
    with pytest.raises(ValueError, match="epsilon"):
        sampling_instance(4, Delta=1.0, L=1.0, epsilon=1.0, sigma=1.0)  # T_c = 0
    with pytest.raises(ValueError, match="T_c"):
        communication_instance(4, T_c=0)
    with pytest.raises(ValueError, match="exactly one"):
        communication_instance(4)
    with pytest.raises(ValueError, match="D"):
        communication_instance(4, D=4, T_c=3)
    with pytest.raises(ValueError, match="n"):
        communication_instance(1, T_c=3)
    with pytest.raises(ValueError, match="p"):
        sampling_instance(4, T_c=3, p=1.5)
    with pytest.raises(ValueError, match="sigma"):
        sampling_instance(4, T_c=3, sigma=1.0, p=0.5)


def test_the_second_name_of_the_setting2_denominator_warns() -> None:
    # one number, one name: bounds.SETTING2_CHAIN_DENOMINATOR; the module's own copy is kept a release
    from decbounds.bounds.constants import SETTING2_CHAIN_DENOMINATOR
    from decbounds.instances import hard

    with pytest.warns(DeprecationWarning, match="SETTING2_CHAIN_DENOMINATOR"):
        assert hard.COMMUNICATION_T_C_DENOMINATOR == SETTING2_CHAIN_DENOMINATOR == 262656
    assert "COMMUNICATION_T_C_DENOMINATOR" not in hard.__all__
    with pytest.raises(AttributeError, match="no_such_name"):
        hard.no_such_name  # noqa: B018
