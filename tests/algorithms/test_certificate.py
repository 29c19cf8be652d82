"""What the cheap per-iteration paths of the engine promise: the smoothness certificate
never certifies a state where a pending stopping test could succeed or a model left the radius, exact
gradients reused at the same bits are the problem's own and fresh, and a stacked gossip round mixes each
array with the bits of its own round. (Results with and without these paths are compared bit for bit in
test_engine.py: exact_check, batch against solo.)"""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from decbounds.algorithms import engine
from decbounds.algorithms.certificate import _anchor_at as anchor_at
from decbounds.algorithms.measurement import _measure as measure
from decbounds.algorithms.mixing import MixingOperator
from decbounds.algorithms.step_rule import communication_channel

from decbounds import algorithms, instances


def _norms(f, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """||grad f(x_hat)|| (k,) and every worker's ||grad f(x_i)|| (n, k), x_hat the engine's mean."""
    x_hat = np.add.reduce(X, axis=0) * (1.0 / X.shape[0])
    g = f.full_grad(np.concatenate([x_hat[None], X]))
    norms = np.sqrt(np.add.reduce(g * g, axis=-1))
    return norms[0], norms[1:]


@pytest.mark.parametrize("k", [1, 3])
def test_the_certificate_certifies_only_what_it_proves(k: int) -> None:
    """Random anchors, random moves of every size: wherever the certificate holds, x_hat's gradient norm and
    some worker's are above tol (T_eps and t_eps_local cannot be reached) and every entry is within the
    bound. tol sits just below the anchor's norms, so that the radii are small and the moves cross them."""
    rng = np.random.default_rng(k)
    f = instances.zero_chain(6, 5)
    n, d = f.n, f.dim
    held = 0
    for _ in range(300):
        A = rng.uniform(-2.0, 2.0, (n, k, d)) * (rng.random((n, k, d)) < 0.7)
        hat, workers = _norms(f, A)
        tol = float(rng.uniform(0.5, 0.999)) * float(min(hat.min(), workers.max(axis=0).min()))
        bound = float(np.abs(A).max()) + float(rng.choice([0.01, 1.0, 100.0]))
        book = engine.Outcomes(k, d, n)
        book.smoothness = f.smoothness
        snap = measure(np.add.reduce(A, axis=0) * (1.0 / n), A, f, workers=True)
        anchor_at(book, snap, A, tol, float(np.abs(A).max()), bound)
        for scale in (1e-6, 1e-4, 1e-3, 1e-2, 0.1):
            X = A + scale * rng.standard_normal(A.shape) * (rng.random(A.shape) < 0.5)
            if book.certificate.holds(X):
                held += 1
                hat, workers = _norms(f, X)
                assert (hat > tol).all() and (workers.max(axis=0) > tol).all()
                assert np.abs(X).max() <= bound
    assert held > 100  # the certificate is exercised, not vacuous


def test_a_non_finite_model_is_never_certified() -> None:
    f = instances.zero_chain(4, 3)
    A = np.full((3, 1, 4), 0.3)
    book = engine.Outcomes(1, 4, 3)
    book.smoothness = f.smoothness
    anchor_at(book, measure(A.mean(axis=0), A, f, workers=True), A, 1e-6, 0.3, 1e3)
    assert book.certificate.holds(A)
    for bad in (np.nan, np.inf):
        X = A.copy()
        X[1, 0, 2] = bad
        assert not book.certificate.holds(X)


def _runtime(f, k: int = 1) -> engine.Runtime:
    W = instances.gossip_matrix(nx.path_graph(f.n), "metropolis")
    return engine.Runtime(problem=f, oracle=None, channel=communication_channel("gossip", W, f.n),
                          step_sizes=[0.1] * k, hyper={}, batch=1, seeds=list(range(k)))


def test_reused_exact_gradients_are_the_problems_and_fresh() -> None:
    f = instances.communication_instance(6, T_c=4)
    runtime = _runtime(f)
    ctx = runtime.context
    X = np.random.default_rng(0).uniform(-1.0, 1.0, (f.n, 1, f.dim))
    expected = f.grad(X)
    answers, held = [], []
    for t in range(4):  # the same point, asked four times (DeTAG's phase-start model)
        runtime.begin_iteration(t)
        got = ctx.sample(X)
        answers.append(got.copy())
        got += 1.0  # the rule may change what it got
        held.append(got)
    assert all(np.array_equal(a, expected) for a in answers)
    assert len({id(a) for a in held}) == 4
    # an evaluation at the models computes the local gradients there for the next query
    Y = X + 0.25
    snap = measure(Y.mean(axis=0), Y, f, workers=True, runtime=runtime)
    assert np.array_equal(snap.worker_norms, np.sqrt((f.full_grad(Y) ** 2).sum(-1)))
    assert runtime.known is not None and runtime.known[2]
    runtime.begin_iteration(4)
    assert np.array_equal(ctx.sample(Y), f.grad(Y))
    assert runtime.counters.gradient_queries == 5


def test_a_counting_wrapper_keeps_its_count() -> None:
    """A problem that forwards attributes to another (the verify audit's counting problem) is not reused:
    every query reaches its own grad."""
    f = instances.communication_instance(6, T_c=4)

    class Counting:
        calls = 0

        def grad(self, X):
            Counting.calls += 1
            return f.grad(X)

        def __getattr__(self, name):
            return getattr(f, name)

    W = instances.gossip_matrix(nx.path_graph(6), "metropolis")
    counted = []
    for iterations in (40, 80):  # (DeTAG's set-up evaluates the gradient once: the difference)
        Counting.calls = 0
        result = algorithms.run("detag", Counting(), W, step_size=0.5, iterations=iterations, tol=1e-9)
        counted.append((Counting.calls, result.counters["gradient_queries"]))
    assert counted[1][0] - counted[0][0] == counted[1][1] - counted[0][1] == 40


def test_a_stacked_round_mixes_each_array_with_its_own_bits() -> None:
    rng = np.random.default_rng(3)
    W = instances.gossip_matrix(nx.path_graph(7), "metropolis")
    op = MixingOperator(W)
    x, y = rng.standard_normal((7, 3, 5)), rng.standard_normal((7, 3, 5))
    both = op.apply(np.concatenate([x, y]))
    assert np.array_equal(both[:7], op.apply(x)) and np.array_equal(both[7:], op.apply(y))
    prev = rng.standard_normal((14, 3, 5))
    a, b = rng.uniform(0.5, 2.0, (1, 3, 1)), rng.uniform(-1, 0, (1, 3, 1))
    tapped = op.two_tap(np.concatenate([x, y]), np.empty((14, 3, 5)), a, prev, b)
    assert np.array_equal(tapped[:7], op.two_tap(x, np.empty_like(x), a, prev[:7], b))
    with pytest.raises(ValueError, match="multiple"):
        op.apply(np.zeros((10, 3)))


def test_a_stacked_round_counts_every_array() -> None:
    f = instances.communication_instance(6, T_c=4)
    runtime = _runtime(f, k=2)
    ctx = runtime.context
    runtime.begin_iteration(0)
    ctx.gossip(np.zeros((12, 2, f.dim)))
    links = MixingOperator(instances.gossip_matrix(nx.path_graph(6), "metropolis")).links
    assert runtime.counters.vectors_sent == 2 and runtime.counters.messages == 2 * links
