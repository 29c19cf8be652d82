"""Bad input, round 4: one test per class an outside fuzzer found in the parts added by the compression
and registry rounds (compressors, the exact average, allow_disconnected, the registry, schedules built from
a sequence or a callable, matrix files). Each failed before the change: the comment says how."""

from __future__ import annotations

import math
import warnings

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from decbounds.algorithms import compression
from decbounds.algorithms.compression import (
    COMPRESSORS,
    QSGD,
    Contractive,
    Identity,
    RandomK,
    ScaledSign,
    TopK,
    contractive,
    index_bits,
    make_compressor,
)

from decbounds import instances, pep
from decbounds.cli import main
from decbounds.registry import Registry

ALL = [Identity(), RandomK(2), QSGD(2), TopK(2), ScaledSign(), Contractive(RandomK(2))]
RNG = np.random.default_rng(0)


def _methods(C):
    yield "bits", C.bits
    yield "delta", C.delta
    if C.kind == "unbiased":
        yield "omega", C.omega


# --- 1. d is validated --------------------------------------------------------------------------------


@pytest.mark.parametrize("C", ALL, ids=lambda C: C.spec)
@pytest.mark.parametrize(("d", "error"), [
    (0, ValueError),  # ScaledSign().delta(0): ZeroDivisionError
    (-4, ValueError),  # QSGD(2).omega(-4): "math domain error"; Identity().bits(-1) = -64
    (1.5, TypeError),  # QSGD(2).bits(1.5) = 67
    (float("nan"), TypeError),  # TopK(2).delta(nan) = nan
    (float("inf"), TypeError),  # TopK(2).bits(inf): OverflowError
    (10**400, ValueError),  # RandomK(2).omega(10**400): OverflowError
    (True, TypeError),
])
def test_every_constant_names_a_bad_dimension(C, d, error):
    for name, method in _methods(C):
        with pytest.raises(error, match=r"\bd\b"):
            method(d)
        assert name


def test_index_bits_is_exact_up_to_the_largest_dimension():
    assert [index_bits(d) for d in (1, 2, 3, 4, 5, 1024, 1025)] == [0, 1, 2, 2, 3, 10, 11]
    assert index_bits(compression.MAX_DIMENSION) == 53
    with pytest.raises(ValueError, match="d must be"):
        index_bits(0)
    assert RandomK(1).omega(2**53) == 2**53 - 1.0


# --- 2. complex, sparse, non-numeric Z ----------------------------------------------------------------


@pytest.mark.parametrize("C", ALL, ids=lambda C: C.spec)
@pytest.mark.parametrize("Z", [
    np.array([1 + 2j, 3 - 1j]),  # Identity: [1., 3.] with a ComplexWarning
    sp.csr_array(np.ones((2, 3))),  # "setting an array element with a sequence"
    np.array(["a", "b"]),
    np.array([object(), 1.0], dtype=object),
], ids=["complex", "sparse", "strings", "objects"])
def test_z_that_is_not_a_real_array_is_named(C, Z):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(TypeError, match=r"\bZ\b"):
            C.compress(Z, RNG)


@pytest.mark.parametrize("rng", [0, "seed", [0, 1], object()])
def test_a_random_compressor_names_a_bad_rng(rng):
    # compress(Z, rng=0): "'int' object is not iterable"
    with pytest.raises(TypeError, match=r"\brng\b"):
        QSGD(2).compress(np.ones((2, 3)), rng)


# --- 3. large and non-finite input ---------------------------------------------------------------------


def test_qsgd_of_a_large_vector_is_its_quantization():
    # [1e160, 1.0] gave [nan, nan] with RuntimeWarnings: the squares overflowed
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = QSGD(2).compress(np.array([1e160, 1.0]), np.random.default_rng(0))
        tiny = QSGD(2).compress(np.array([1e-200, 0.0]), np.random.default_rng(0))
    assert y.tolist() == [1e160, 0.0]
    assert tiny.tolist() == [1e-200, 0.0]  # the squares underflowed: C(x) was 0, not unbiased


def test_large_vectors_compress_without_a_warning_to_the_float64_result():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ScaledSign().compress(np.array([1e308, -1e308])).tolist() == [1e308, -1e308]
        y = RandomK(1).compress(np.array([1e308, 1e308]), np.random.default_rng(0))
    assert sorted(y.tolist()) == [0.0, math.inf]  # (d/k) x_i exceeds float64: inf, as documented


@pytest.mark.parametrize("C", ALL, ids=lambda C: C.spec)
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_a_vector_with_a_non_finite_entry_compresses_to_non_finite(C, bad):
    # TopK(1).compress([nan, 1, 2]) = [0, 0, 2]: the NaN was dropped; inf input let RuntimeWarnings escape
    Z = np.array([[bad, 1.0, 2.0], [1.0, 2.0, 3.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Y = C.compress(Z, RNG)
    assert not np.isfinite(Y[0]).any() if C.spec != "identity" else np.array_equal(Y[0], Z[0], equal_nan=True)
    assert np.isfinite(Y[1]).all()


# --- 4. AttributeError leaks -----------------------------------------------------------------------------


@pytest.mark.parametrize("value", [3, "qsgd:2", None, object()])
def test_contractive_names_what_is_not_a_compressor(value):
    with pytest.raises(TypeError, match="compressor must be a Compressor"):
        contractive(value)  # AttributeError: 'int' object has no attribute 'kind'
    with pytest.raises(TypeError, match="base must be a Compressor"):
        Contractive(value)


def test_a_builder_that_returns_no_compressor_is_named_when_built():
    COMPRESSORS.register("not_a_compressor", lambda k: k)
    try:
        with pytest.raises(TypeError, match="'not_a_compressor' built must be a Compressor"):
            make_compressor("not_a_compressor:3")  # returned 3: accepted, it failed inside a run
    finally:
        COMPRESSORS.unregister("not_a_compressor")


# --- 5. weak messages -----------------------------------------------------------------------------------


def test_schedule_constructors_name_their_argument():
    with pytest.raises(TypeError, match="matrices must be a sequence"):
        instances.schedule_from_sequence(5)  # "'int' object is not iterable"
    with pytest.raises(TypeError, match="one matrix"):
        instances.schedule_from_sequence(np.full((2, 2), 0.5))  # its rows were read as rounds
    J = np.full((2, 2), 0.5)
    with pytest.raises(TypeError, match="round_matrix must take the round t"):
        instances.schedule_from_callable(lambda: J, 2)  # the callable's own arity error
    with pytest.raises(TypeError, match="round_matrix must be a callable"):
        instances.schedule_from_callable(J, 2)


@pytest.mark.parametrize("command", [["worst-case", "dsgt", "--K", "2"], ["gossip"]])
def test_an_unreadable_matrix_file_names_the_flag(tmp_path, capsys, command):
    path = tmp_path / "object.npy"
    np.save(path, np.array([object(), 1], dtype=object), allow_pickle=True)
    assert main([*command, "--W", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"--W {path}" in err  # it named neither --W nor the file


# --- 7. the exact average ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("n", "error"), [(0, ValueError), (-2, ValueError), (2.5, TypeError),
                                          (True, TypeError), ("4", TypeError)])
def test_exact_average_names_a_bad_n(n, error):
    # n = 0: ZeroDivisionError; -2, 2.5, True: numpy's errors, naming no n
    with pytest.raises(error, match=r"\bn\b"):
        instances.as_gossip(None, kind="exact", n=n)


def test_exact_average_needs_no_matrix():
    W = instances.as_gossip(None, kind="exact", n=10**6)  # MemoryError: built dense
    assert isinstance(W, instances.GossipMatrix) and W.lam == 0.0 and W.shape == (10**6, 10**6)
    X = np.arange(2.0 * 10**6).reshape(10**6, 2)
    assert np.array_equal(W @ X, np.broadcast_to(X.mean(axis=0), X.shape))
    with pytest.raises(ValueError, match="n=1000000 is too large"):
        W.toarray()
    small = instances.as_gossip(None, kind="exact", n=3)
    assert np.array_equal(small.toarray(), np.full((3, 3), 1 / 3)) and small.round_matrix(5).nnz == 9
    assert instances.as_gossip(small, 3) is small


# --- 8. allow_disconnected ---------------------------------------------------------------------------------


def test_allow_disconnected_admits_lam_one_and_refuses_more():
    with pytest.raises(ValueError, match=r"lam = .*2 > 1"):
        instances.as_gossip(np.array([[1.5, -0.5], [-0.5, 1.5]]), allow_disconnected=True)  # lam = 2.0
    with pytest.raises(ValueError, match=r"> 1"):
        pep.worst_case("dsgt", 3, L=1.0, step_size=0.5, W=np.array([[3.0, -2.0], [-2.0, 3.0]]))  # 4.60
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the opt-in warned for a graph, not for the same matrix
        assert instances.as_gossip(nx.empty_graph(3), allow_disconnected=True).lam == 1.0
        assert instances.as_gossip(np.eye(3), allow_disconnected=True).lam == 1.0


# --- 9. the registry ------------------------------------------------------------------------------------


def test_registry_names_and_aliases():
    shapes = Registry("shape")
    with pytest.raises(TypeError, match="aliases must be an iterable of names"):
        shapes.register("a", abs, aliases="bcd")  # registered 'b', 'c', 'd'
    with pytest.raises(TypeError, match="aliases must be"):
        shapes.register("a", abs, aliases=3)  # "'int' object is not iterable"
    for name in ("x\ny", "x:y", "bad name", "tab\there", "\x00"):
        with pytest.raises(ValueError, match="name must be a non-empty printable string"):
            shapes.register(name, abs)
    assert len(shapes) == 0


def test_a_plugin_with_a_bad_name_is_refused(monkeypatch):
    import importlib.metadata

    point = importlib.metadata.EntryPoint(name="bad name", value="builtins:abs", group="decbounds.shapes")
    monkeypatch.setattr(importlib.metadata, "entry_points",
                        lambda group: [point] if group == "decbounds.shapes" else [])
    shapes = Registry("shape", group="decbounds.shapes")
    with pytest.warns(RuntimeWarning, match="bad name"):
        shapes.load_plugins()
    assert "bad name" not in shapes and "bad name" in shapes.plugin_errors()


@pytest.mark.parametrize("spec", ["random_k:2_0", "random_k: 2", "random_k:\u0663", "random_k:+2",
                                  "random_k:2 "])
def test_make_compressor_reads_ascii_digits_only(spec):
    with pytest.raises(ValueError, match="digits 0-9"):
        make_compressor(spec)  # int() read them: RandomK(20), RandomK(2), RandomK(3)
