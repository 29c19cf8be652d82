"""Fuzz suite, continued (tests/test_fuzz.py's rules, helpers and FUZZ=1 budget) over the public
constructors and entry points of the compression and registry rounds: the compressors and
`make_compressor`, `contractive`, `Registry.register` and plugins' names, `as_gossip` (the exact average,
allow_disconnected), the schedule constructors from a sequence or a callable, and ``decbounds run
--compressor``.

Every call returns a result with the documented property or raises ValueError/TypeError naming one of its
arguments; no warning escapes (``attempt``).
"""

from __future__ import annotations

import contextlib
import io
from typing import Any

import numpy as np
import scipy.sparse as sp
from decbounds.algorithms.compression import (
    COMPRESSOR_KINDS,
    QSGD,
    Contractive,
    Identity,
    RandomK,
    ScaledSign,
    TopK,
    contractive,
    make_compressor,
)
from hypothesis import given
from hypothesis import strategies as st
from test_fuzz import REJECTED, WEIRD, attempt, budget, counts

from decbounds import instances
from decbounds.cli import main
from decbounds.registry import Registry

_CONSTRUCTORS = {"random_k": RandomK, "qsgd": QSGD, "top_k": TopK}

#: Entries of Z: ordinary, extreme and non-finite floats.
_ENTRIES = st.one_of(st.floats(-1e3, 1e3), st.sampled_from([0.0, 1e-320, 1e-200, 1e160, 1e308, -1e308,
                                                            np.nan, np.inf, -np.inf]))


def _arrays() -> st.SearchStrategy[Any]:
    shapes = st.tuples(st.integers(1, 3), st.integers(1, 6))
    real = shapes.flatmap(lambda shape: st.lists(_ENTRIES, min_size=shape[0] * shape[1],
                                                  max_size=shape[0] * shape[1])
                          .map(lambda values: np.array(values).reshape(shape)))
    odd = st.sampled_from([np.array([1 + 2j, 3 - 1j]), sp.csr_array(np.ones((2, 3))), np.array(["a"]),
                           np.zeros((2, 0)), np.float64(3.0), np.array([True, False]),
                           np.arange(6, dtype=np.int8).reshape(2, 3)])
    return st.one_of(real, real, real, odd, WEIRD)


@st.composite
def compressors(draw: st.DrawFn) -> Any:
    """A compressor built from a fuzzed parameter (REJECTED when its constructor refused it)."""
    name = draw(st.sampled_from(["identity", "sign", "random_k", "qsgd", "top_k", "contractive"]))
    if name == "identity":
        return Identity()
    if name == "sign":
        return ScaledSign()
    if name == "contractive":
        base = draw(st.one_of(st.sampled_from([RandomK(2), QSGD(1), Identity(), TopK(1)]), WEIRD))
        return attempt(lambda: Contractive(base), ["base"])
    parameter = draw(counts(1, 8))
    return attempt(lambda: _CONSTRUCTORS[name](parameter), ["k", "s"])


@budget(150, 3000)
@given(C=compressors(), d=counts(1, 64), Z=_arrays(),
       rng=st.one_of(st.just("generator"), st.just("generators"), WEIRD))
def test_fuzz_compressors(C: Any, d: Any, Z: Any, rng: Any) -> None:
    if C is REJECTED:
        return
    for method in (C.bits, C.delta) + ((C.omega,) if C.kind == "unbiased" else ()):
        value = attempt(lambda method=method: method(d), ["d", "k"])
        if value is not REJECTED:
            assert np.isfinite(value) and value >= 0
    assert 0 < attempt(lambda: C.delta(8) if getattr(C, "k", 1) <= 8 else 1.0, ["d"]) <= 1
    if rng == "generator":
        rng = np.random.default_rng(0)
    elif rng == "generators":
        rng = [np.random.default_rng(j) for j in range(np.shape(Z)[-2] if np.ndim(Z) >= 2 else 1)]
    Y = attempt(lambda: C.compress(Z, rng), ["Z", "rng", "k", "d"])
    if Y is REJECTED:
        return
    Z = np.asarray(Z, dtype=float)
    assert Y.shape == Z.shape
    finite_rows = np.isfinite(Z).all(axis=-1)
    # a vector with a non-finite entry comes out non-finite (Identity: as it is); a finite one stays finite
    # unless a coordinate of its compression exceeds float64 (random-k's (d/k) x_i, QSGD's ||x||)
    assert not np.isfinite(Y[~finite_rows]).all(axis=-1).any()
    moderate = finite_rows & (np.abs(Z).max(axis=-1, initial=0.0) <= 1e300 / Z.shape[-1])
    assert np.isfinite(Y[moderate]).all()


@budget(100, 2000)
@given(spec=st.one_of(
    st.sampled_from(["identity", "sign", "random_k:2", "qsgd:1", "top_k:0", "contractive:qsgd:2",
                     "contractive:top_k:1", "contractive:", "random_k:2_0", "random_k: 2", "qsgd:\u0663",
                     "top_k:+1", "top_k:99999999999999999999", "sign:1", ":", "", "contractive:contractive"]),
    st.text(max_size=12), st.text(alphabet="random_kqsgdtop:0123456789_ +-", max_size=14), WEIRD))
def test_fuzz_make_compressor(spec: Any) -> None:
    C = attempt(lambda: make_compressor(spec), ["compressor", "k", "s", "base"])
    if C is REJECTED:
        return
    assert C.kind in COMPRESSOR_KINDS and make_compressor(C.spec) == C
    assert attempt(lambda: contractive(C), ["compressor"]).kind == "contractive"


@budget(30, 600)
@given(value=st.one_of(WEIRD, st.text(max_size=8)))
def test_fuzz_contractive(value: Any) -> None:
    assert attempt(lambda: contractive(value), ["compressor"]) is REJECTED


@budget(100, 2000)
@given(name=st.one_of(st.text(max_size=6), WEIRD), aliases=st.one_of(
    st.lists(st.text(max_size=4), max_size=3), st.text(max_size=3), WEIRD))
def test_fuzz_registry_register(name: Any, aliases: Any) -> None:
    shapes = Registry("shape")
    registered = attempt(lambda: shapes.register(name, abs, aliases=aliases), ["name", "alias", "aliases"])
    if registered is REJECTED:
        assert len(shapes) == 0
        return
    for key in (name, *aliases):
        assert key in shapes and key.isprintable() and ":" not in key and not any(c.isspace() for c in key)
    assert shapes.names() == (name,)


@budget(60, 1200)
@given(n=counts(1, 40), W=st.one_of(st.none(), st.just("matrix"), WEIRD))
def test_fuzz_exact_average(n: Any, W: Any) -> None:
    if W == "matrix":
        W = np.full((3, 3), 1 / 3)
    value = attempt(lambda: instances.as_gossip(W, n, kind="exact"), ["n", "W", "kind"])
    if value is REJECTED:
        return
    assert value.lam == 0.0 and value.shape == (value.n, value.n)
    if value.n > 10**5:
        return
    X = np.arange(value.n * 2.0).reshape(value.n, 2)
    assert np.allclose(value @ X, X.mean(axis=0))


@budget(60, 1500)
@given(a=st.floats(-3, 3), b=st.floats(-3, 3), allow=st.one_of(st.booleans(), WEIRD))
def test_fuzz_allow_disconnected_admits_lam_one_at_most(a: float, b: float, allow: Any) -> None:
    # W = [[1 - a, a], [a, 1 - a]] (rows sum to 1) and its 3-node analogue: lam = |1 - 2a| or more
    for W in (np.array([[1 - a, a], [a, 1 - a]]),
              np.array([[1 - a - b, a, b], [a, 1 - 2 * a, a], [b, a, 1 - a - b]])):
        value = attempt(lambda W=W: instances.as_gossip(W, allow_disconnected=allow),
                        ["W", "allow_disconnected"])
        if value is not REJECTED:
            assert value.lam <= 1.0 + 1e-9
            assert allow is True or value.lam < 1.0


@budget(60, 1200)
@given(matrices=st.one_of(
    st.lists(st.sampled_from([np.eye(2), np.full((2, 2), 0.5), np.array([[0.9, 0.1], [0.0, 1.0]]),
                              np.full((3, 3), 1 / 3)]), max_size=3),
    st.sampled_from([np.full((2, 2), 0.5), np.stack([np.eye(2)] * 2), sp.eye_array(2), "ab"]), WEIRD),
    periodic=st.one_of(st.booleans(), WEIRD))
def test_fuzz_schedule_from_sequence(matrices: Any, periodic: Any) -> None:
    schedule = attempt(lambda: instances.schedule_from_sequence(matrices, periodic=periodic),
                       ["matrices", "periodic", "W_0", "W_1", "W_2"])
    if schedule is not REJECTED:
        assert schedule.n in (2, 3) and schedule.kind == "symmetric"


@budget(40, 800)
@given(round_matrix=st.sampled_from([lambda: np.eye(2), lambda t: np.eye(2), lambda t, u: np.eye(2),
                                     lambda *t: np.eye(2), lambda t: np.full((2, 2), np.nan), np.eye(2),
                                     None, "eye"]),
       n=counts(1, 4))
def test_fuzz_schedule_from_callable(round_matrix: Any, n: Any) -> None:
    schedule = attempt(lambda: instances.schedule_from_callable(round_matrix, n),
                       ["round_matrix", "n", "W_0"])
    if schedule is not REJECTED:
        assert schedule.n == n


@budget(25, 400)
@given(compressor=st.one_of(st.sampled_from(["top_k:0", "top_k:9", "foo", "qsgd:2_0", "random_k:1",
                                             "contractive:sign", "sign"]), st.text(max_size=6)))
def test_fuzz_cli_run_compressor(compressor: str) -> None:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["run", "choco_sgd", "--n", "4", "--iterations", "3", f"--compressor={compressor}"])
    assert status in (0, 2)
    if status == 2:
        assert err.getvalue().count("\n") == 1 and "--compressor" in err.getvalue()
