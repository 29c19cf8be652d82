"""The zero-chain function f_hat (docs/theory.md §4; docs/errata.md E1 and E3)."""

import math

import numpy as np
import pytest
from decbounds.instances.zero_chain import (
    DELTA0,
    G_INF,
    L1,
    ZeroChainFunctions,
    phi,
    progress,
    psi,
    zero_chain,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate


def reference_grad(x: np.ndarray) -> np.ndarray:
    """grad f_hat written term by term from the paper's formula (independent of the kernel)."""
    def dpsi(z):
        z = np.asarray(z, dtype=float)
        u = np.maximum(2 * z - 1, 1e-3)
        return np.where(z > 0.5, psi(z) * 4 / u**3, 0.0)

    def dphi(z):
        return math.sqrt(math.e) * np.exp(-np.asarray(z) ** 2 / 2)

    T = x.shape[-1]
    g = np.zeros_like(x)
    g[..., 0] = -psi(1.0) * dphi(x[..., 0])
    for i in range(T - 1):  # link_i = Psi(-x_i) Phi(-x_{i+1}) - Psi(x_i) Phi(x_{i+1}), 0-based i
        a, b = x[..., i], x[..., i + 1]
        g[..., i] += -dpsi(-a) * phi(-b) - dpsi(a) * phi(b)
        g[..., i + 1] += -psi(-a) * dphi(-b) - psi(a) * dphi(b)
    return g


def reference_value(x: np.ndarray) -> np.ndarray:
    value = -psi(1.0) * phi(x[..., 0])
    for i in range(x.shape[-1] - 1):
        a, b = x[..., i], x[..., i + 1]
        value = value + psi(-a) * phi(-b) - psi(a) * phi(b)
    return value


def chain_points(T: int, rows: int, seed: int, spread: float = 1.5) -> np.ndarray:
    """Rows with assorted progress levels (prefixes of non-zeros) and values around the kinks at +-1/2."""
    rng = np.random.default_rng(seed)
    X = spread * rng.standard_normal((rows, T))
    levels = rng.integers(0, T + 1, size=rows)
    X[np.arange(T) >= levels[:, None]] = 0.0
    return X


def test_phi_is_the_corrected_gaussian_integral():
    # docs/errata.md E1: Phi(z) = sqrt(e) int_{-inf}^z exp(-t^2/2) dt (the printed +t^2/2 diverges)
    for z in (-3.0, -0.5, 0.0, 0.7, 2.5):
        integral, _ = integrate.quad(lambda t: math.exp(-t * t / 2), -np.inf, z)
        assert phi(z) == pytest.approx(math.sqrt(math.e) * integral, rel=1e-10)
    assert phi(40.0) == pytest.approx(math.sqrt(2 * math.pi * math.e), rel=1e-14)  # finite limit


def test_psi_definition():
    assert psi(0.5) == 0.0 and psi(-3.0) == 0.0 and psi(0.5 + 1e-9) == 0.0
    assert psi(1.0) == pytest.approx(1.0)
    assert psi(3.0) == pytest.approx(math.exp(1 - 1 / 25))


@given(T=st.integers(1, 9), seed=st.integers(0, 10_000))
def test_grad_matches_reference_and_value(T, seed):
    f = zero_chain(T, 6)
    X = chain_points(T, 6, seed)
    np.testing.assert_allclose(f.grad(X), reference_grad(X), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(f.value(X), reference_value(X), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(f.full_grad(X), reference_grad(X), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(f.full_value(X), reference_value(X), rtol=1e-12, atol=1e-12)


@settings(max_examples=15)
@given(T=st.integers(1, 7), seed=st.integers(0, 10_000))
def test_grad_matches_finite_differences(T, seed):
    f = zero_chain(T, 4)
    X = chain_points(T, 4, seed)
    h = 1e-6
    fd = np.empty_like(X)
    for j in range(T):
        step = np.zeros(T)
        step[j] = h
        fd[:, j] = (f.value(X + step) - f.value(X - step)) / (2 * h)
    np.testing.assert_allclose(f.grad(X), fd, atol=2e-6)


def test_progress_definition():
    X = np.array([[0.0, 0, 0], [1.0, 0, 0], [0.0, 0, -2], [3.0, 0, 1e-300]])
    np.testing.assert_array_equal(progress(X), [0, 1, 3, 3])
    f = zero_chain(3, 4)
    np.testing.assert_array_equal(f.progress(X.reshape(4, 1, 3)), [[0], [1], [3], [3]])


@given(T=st.integers(1, 12), seed=st.integers(0, 10_000))
def test_zero_chain_property_and_gradient_floor(T, seed):
    f = zero_chain(T, 8)
    X = chain_points(T, 8, seed)
    G = f.grad(X)
    prog = progress(X)
    beyond = np.arange(1, T + 1) > prog[:, None] + 1
    assert np.all(G[beyond] == 0.0)  # support reaches at most prog + 1 (exactly zero)
    short = prog < T
    # docs/errata.md E3: ||grad f_hat(x)||_inf >= 1 whenever prog(x) < T
    assert np.all(np.abs(G[short]).max(axis=1) >= 1.0)
    assert np.abs(G).max() <= G_INF


def test_gradient_floor_at_its_tightest():
    # the floor is approached where x_prog sits just past 1/2 in magnitude and the rest is large
    f = zero_chain(2, 1)
    grid = np.linspace(-4, 4, 801)
    X = np.stack([grid, np.zeros_like(grid)], axis=1)[None]
    assert np.abs(f.grad(X)).max(axis=-1).min() >= 1.0


@settings(max_examples=20)
@given(T=st.integers(2, 10), seed=st.integers(0, 10_000))
def test_smoothness_estimate_below_l1(T, seed):
    rng = np.random.default_rng(seed)
    f = zero_chain(T, 1)
    x = rng.uniform(-2, 2, size=(400, T))
    y = x + rng.standard_normal((400, T)) * 10.0 ** rng.uniform(-4, -1, size=(400, 1))
    ratio = np.linalg.norm(f.full_grad(x) - f.full_grad(y), axis=1) / np.linalg.norm(x - y, axis=1)
    assert ratio.max() <= L1


@given(T=st.integers(1, 10), seed=st.integers(0, 10_000))
def test_range_bound(T, seed):
    rng = np.random.default_rng(seed)
    f = zero_chain(T, 1)
    x = rng.standard_normal((500, T)) * 10.0 ** rng.uniform(-1, 2, size=(500, 1))
    x[0] = 1e3  # deep along the chain
    assert np.all(f.full_value(np.zeros(T)) - f.full_value(x) <= DELTA0 * T)


def test_batch_axes_give_the_same_bits():
    f = zero_chain(7, 5)
    X = chain_points(7, 5 * 3, 1).reshape(5, 3, 7)
    G = f.grad(X)
    for j in range(3):
        np.testing.assert_array_equal(G[:, j], f.grad(np.ascontiguousarray(X[:, j])))
    np.testing.assert_array_equal(f.value(X)[:, 1], f.value(np.ascontiguousarray(X[:, 1])))
    np.testing.assert_array_equal(f.grad(X.reshape(5, 3, 1, 7)).reshape(5, 3, 7), G)


def test_active_prefix_path_for_long_chains():
    # d above the scan threshold: the kernel works on the active prefix only; compare with the reference
    T = 300
    f = zero_chain(T, 4)
    X = np.zeros((4, 2, T))
    X[..., :10] = np.random.default_rng(3).normal(size=(4, 2, 10))
    X[0, 1, 10] = 0.7
    G = f.grad(X)
    np.testing.assert_allclose(G, reference_grad(X), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(f.grad(X, width=11), G)
    np.testing.assert_array_equal(f.grad(X, width=T), G)
    np.testing.assert_allclose(f.value(X), reference_value(X), rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(f.grad(np.zeros((4, T)))[:, 1:], 0.0)
    # a non-contiguous view is accepted
    np.testing.assert_array_equal(f.grad(X[:, ::-1])[:, 0], G[:, 1])


def test_weighted_split_is_exact_linear_combination():
    T, n = 6, 4
    rng = np.random.default_rng(0)
    links = rng.uniform(0, 2, size=(n, T - 1))
    links /= links.mean(axis=0)
    first = np.array([4.0, 0, 0, 0])
    f = ZeroChainFunctions(T, n, first_weight=first, link_weight=links, scale=0.3, gain=2.0)
    x = rng.normal(size=T) * 0.5
    X = np.broadcast_to(x, (n, T)).copy()
    np.testing.assert_allclose(f.grad(X).mean(axis=0), f.full_grad(x), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(f.value(X).mean(axis=0), f.full_value(x), rtol=1e-12)
    np.testing.assert_allclose(f.full_grad(x), 2.0 / 0.3 * reference_grad(x / 0.3), rtol=1e-12)
    # worker 1 holds only links: its first coordinate derivative has no first-term part
    z = x / 0.3
    first_term = -math.sqrt(math.e) * math.exp(-z[0] ** 2 / 2)
    link_part = reference_grad(z)[0] - first_term
    assert f.grad(X)[1, 0] == pytest.approx(2.0 / 0.3 * links[1, 0] * link_part, rel=1e-12, abs=1e-13)


@pytest.mark.parametrize("T", [0, -1, 2.5, True])
def test_bad_chain_length(T):
    with pytest.raises((ValueError, TypeError), match="T must be an integer"):
        zero_chain(T)


def test_bad_shapes_and_weights():
    f = zero_chain(4, 3)
    with pytest.raises(ValueError, match="shape"):
        f.grad(np.zeros((2, 4)))
    with pytest.raises(ValueError, match="shape"):
        f.grad(np.zeros((3, 5)))
    with pytest.raises(ValueError, match="shape"):
        f.full_grad(np.zeros(5))
    with pytest.raises(ValueError, match="average to 1"):
        ZeroChainFunctions(4, 2, link_weight=np.ones((2, 3)) * 2)
    with pytest.raises(ValueError, match="scale"):
        ZeroChainFunctions(4, 2, scale=0.0)


# --------------------------------------------------------------------------------------------------------
# chain_gradient (active links only) against the formula, and each point against its solo evaluation


def _chain_points(rng: np.random.Generator, shape: tuple[int, ...], scale: float) -> np.ndarray:
    """Points of the given shape whose rows have random progress levels (0 = the zero row .. d), with entries
    spread over the regions of Psi: |x| well below, near and well above scale / 2, including the v_floor
    boundary where Psi underflows, and some huge finite values."""
    d = shape[-1]
    X = rng.uniform(-2.5, 2.5, shape) * scale
    special = scale * np.array([0.5, 0.5 + 5e-4, 0.5 + 5e-4 * (1 + 1e-12), 0.518, 0.52, 1.0, 3.0, 1e160])
    picks = rng.random(shape) < 0.2
    X[picks] = rng.choice(special, picks.sum()) * rng.choice([-1.0, 1.0], picks.sum())
    X[rng.random(shape) < 0.1] = 0.0  # zeros inside the active prefix
    levels = rng.integers(0, d + 1, shape[:-1])
    X[np.arange(d) >= levels[..., None]] = 0.0
    return X


def _with_non_finite(rng: np.random.Generator, X: np.ndarray) -> np.ndarray:
    """X with NaN, +inf and -inf written into a few rows, inside their active prefix."""
    X = X.copy()
    rows = X.reshape(-1, X.shape[-1])
    for value, row in zip((np.nan, np.inf, -np.inf, np.nan), rng.choice(len(rows), 4, replace=False),
                          strict=True):
        rows[row, rng.integers(0, max(1, X.shape[-1] // 2))] = value
    return X


def _functions(kind: str, T: int, n: int, rng: np.random.Generator) -> ZeroChainFunctions:
    if kind == "plain":
        return zero_chain(T, n)
    first = rng.uniform(0.0, 2.0, n)
    links = rng.uniform(0.0, 2.0, (n, T - 1))
    return ZeroChainFunctions(T, n, scale=2.7, gain=0.3, first_weight=first / first.mean(),
                              link_weight=links / links.mean(axis=0))


# overflow and NaN warnings are expected on the huge and non-finite entries (the engine silences them too)
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("T", [1, 2, 6, 40])
@pytest.mark.parametrize("rows", [1, 5, 64, 300])
def test_gradient_matches_the_formula_term_by_term(T: int, rows: int) -> None:
    """chain_gradient evaluates Psi only on active links; the reference evaluates every term everywhere."""
    rng = np.random.default_rng([T, rows])
    f = zero_chain(T, 1)
    X = _chain_points(rng, (1, rows, T), 1.0)
    G = f.grad(X)
    np.testing.assert_allclose(G, reference_grad(X), rtol=1e-13, atol=1e-300)
    np.testing.assert_allclose(f.full_grad(X[0]), G[0], rtol=0, atol=0)
    for width in range(T):  # the promise X[..., width:] == 0, kept by truncating X
        Y = X.copy()
        Y[..., width:] = 0.0
        np.testing.assert_array_equal(f.grad(Y, width=width), f.grad(Y))
    if T > 1 and rows >= 5:
        assert np.count_nonzero(G[..., 1:]) > rows // 5  # the links are exercised, not only the first term


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("kind", ["plain", "weighted"])
@pytest.mark.parametrize("T", [6, 40])
@pytest.mark.parametrize("batch", [3, 16, 70])
@pytest.mark.parametrize("non_finite", [False, True])
def test_each_point_gets_the_bits_it_gets_alone(kind: str, T: int, batch: int, non_finite: bool) -> None:
    """Rows never mix: a configuration's gradient inside a batch has the bits of its solo evaluation, NaN and
    inf rows included, and a NaN coordinate makes its point's gradient NaN (divergence detection)."""
    n = 4
    rng = np.random.default_rng([T, batch, non_finite, kind == "weighted"])
    f = _functions(kind, T, n, rng)
    X = _chain_points(rng, (n, batch, T), f.scale)
    if non_finite:
        X = _with_non_finite(rng, X)
    G, g = f.grad(X), f.full_grad(X[0])
    for j in range(batch):
        alone = f.grad(np.ascontiguousarray(X[:, j : j + 1]))
        assert np.array_equal(G[:, j : j + 1], alone, equal_nan=True), j
        assert np.array_equal(g[j], f.full_grad(X[0, j]), equal_nan=True), j
    has_nan = np.isnan(X).any(axis=-1)
    assert np.array_equal(np.isnan(G).any(axis=-1) & has_nan, has_nan)
    if non_finite:
        assert has_nan.any() and not np.isfinite(X).all()
        finite_rows = np.isfinite(X).all(axis=-1)
        assert np.isfinite(G[finite_rows]).all()


def test_the_work_stays_in_the_promised_prefix():
    """With ``width`` the columns past width + 1 are never read: a NaN planted there (breaking the promise on
    purpose) does not reach the gradient, and the gradient is exactly zero past width + 1."""
    f = zero_chain(100_000, 3)
    X = np.zeros((3, 2, 100_000))
    X[..., :10] = np.random.default_rng(4).uniform(-2, 2, (3, 2, 10))
    G = f.grad(X, width=10)
    X[..., 50] = np.nan
    G_planted = f.grad(X, width=10)
    assert np.array_equal(G_planted, G) and not G[..., 11:].any()
    np.testing.assert_allclose(G[..., :12], reference_grad(X[..., :12].copy() * (np.arange(12) < 10)),
                               rtol=1e-12, atol=1e-12)


# -- the small-state kernel -------------------------------------------------------------------------------


def _general(f: ZeroChainFunctions, X: np.ndarray, per_worker) -> np.ndarray:
    """The gradient by the general path (`chain_gradient` / `chain_gradient_dense`), bypassing the kernel."""
    with np.errstate(over="ignore", invalid="ignore"):
        return f._grad_rows(X, f.T, per_worker)


def _kernel_points(rng: np.random.Generator, shape: tuple, scale: float) -> np.ndarray:
    """Exact zeros and signed zeros, points on and around the kinks |x| = scale / 2 (+ the clip), and spreads
    from tiny to huge (up to 1e99 scale, inside the kernel's range)."""
    X = rng.choice([0.0, -0.0, 0.5, -0.5, 0.5 + 5e-4, -0.5 - 5e-4, 1.0, 3.0], size=shape) * scale
    spread = rng.choice([0.0, 1e-3, 0.3, 1.0, 10.0, 1e3, 1e50, 1e99], size=shape)
    return X + rng.standard_normal(shape) * scale * spread * (rng.random(shape) < 0.7)


@pytest.mark.parametrize("kind", ["plain", "weighted", "scaled"])
@pytest.mark.parametrize("n, k, T", [(1, 1, 1), (3, 2, 2), (12, 1, 6), (4, 3, 7), (2, 1, 33)])
def test_the_small_kernel_has_the_bits_of_the_general_path(kind: str, n: int, k: int, T: int) -> None:
    """Small states take `_SmallKernel` (one padded layout, 20 numpy calls): every entry has the bits of
    the general path, for the local and the global gradient and for the pair of `grad_and_full_grad`, and
    no warning is raised on finite points."""
    import warnings

    rng = np.random.default_rng([n, k, T, len(kind)])
    if kind == "plain":
        f = zero_chain(T, n)
    elif kind == "scaled":
        f = ZeroChainFunctions(T, n, scale=912.0, gain=1824.0)
    else:
        first = rng.uniform(0.0, 2.0, n)
        links = rng.uniform(0.0, 2.0, (n, max(T - 1, 0)))
        f = ZeroChainFunctions(T, n, scale=2.7, gain=0.3, first_weight=first / first.mean(),
                               link_weight=links / links.mean(axis=0) if T > 1 else None)
    for _ in range(40):
        X = _kernel_points(rng, (n, k, T), f.scale)
        stack = np.concatenate([X.mean(axis=0)[None], X])
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            G, g = f.grad(X), f.full_grad(stack)
            local, full = f.grad_and_full_grad(X, stack)
        assert G.tobytes() == _general(f, X, k).tobytes()
        assert g.tobytes() == _general(f, stack, None).tobytes()
        if local is not None:
            assert local.tobytes() == G.tobytes() and full.tobytes() == g.tobytes()
    assert f._kernels or n * k * T > 256


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_the_small_kernel_leaves_non_finite_and_huge_points_to_the_general_path() -> None:
    f = zero_chain(6, 4)
    for bad in (np.nan, np.inf, -np.inf, 1e200):
        X = np.full((4, 1, 6), 0.7)
        X[2, 0, 3] = bad
        G = f.grad(X)
        assert G.tobytes() == _general(f, X, 1).tobytes()
        assert np.isnan(G[2, 0]).all() == (not np.isfinite(bad))
        local, _ = f.grad_and_full_grad(X, X[0])
        assert local is None


def test_the_kernels_do_not_travel_with_a_pickle() -> None:
    """The kernels' scratch is views of one buffer, which a pickle would copy apart: they are rebuilt."""
    import pickle

    f = zero_chain(6, 3)
    X = np.random.default_rng(1).uniform(-2, 2, (3, 2, 6))
    G = f.grad(X)
    copy = pickle.loads(pickle.dumps(f))
    assert not copy._kernels and np.array_equal(copy.grad(X), G) and copy._kernels
