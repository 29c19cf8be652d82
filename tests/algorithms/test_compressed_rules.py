"""CHOCO-SGD and BEER against their recursions written out by hand, their reductions at C = identity,
and the engine's accounting of a compressed round (docs/theory.md §18)."""

from __future__ import annotations

import numpy as np
import pytest
from decbounds.algorithms.compression import TopK, make_compressor
from support import DiagonalQuadratic

from decbounds import algorithms, instances, oracles

N, D = 6, 8


def _setup():
    f = DiagonalQuadratic(n=N, d=D, seed=3)
    W = instances.gossip_matrix(instances.topology("ring", N), "metropolis")
    return f, W, W.toarray()


def _states(name, f, W, T, **hyper):
    """The local models after each iteration (the callback's copies), shape (T + 1, n, d)."""
    seen = []
    algorithms.run(name, f, W, step_size=0.1, iterations=T, stop="average",
                   callback=lambda t, state, ctx: seen.append(state.x[:, 0].copy()), **hyper)
    return np.array(seen)


def _top_k(X, k):
    """Top-k of every row, from the definition (the k largest |x_i| kept)."""
    out = np.zeros_like(X)
    for i, row in enumerate(X):
        keep = np.argsort(-np.abs(row), kind="stable")[:k]
        out[i, keep] = row[keep]
    return out


def test_choco_sgd_is_its_recursion_written_out():
    f, W, M = _setup()
    gamma, eta, T = 0.3, 0.1, 12
    x, x_hat = np.zeros((N, D)), np.zeros((N, D))
    expected = [x.copy()]
    for _ in range(T):
        half = x - eta * f.grad(x)
        q = _top_k(half - x_hat, 3)
        x_hat = x_hat + q
        x = half + gamma * (M @ x_hat - x_hat)
        expected.append(x)
    got = _states("choco_sgd", f, W, T, compressor="top_k:3", gamma=gamma)
    assert np.allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_beer_is_its_recursion_written_out():
    f, W, M = _setup()
    gamma, eta, T = 0.4, 0.1, 12
    X = np.zeros((N, D))
    H, G, V, g_prev = np.zeros((N, D)), np.zeros((N, D)), np.zeros((N, D)), np.zeros((N, D))
    expected = [X.copy()]
    for _ in range(T):
        g = f.grad(X)
        V = V + gamma * (M @ G - G) + g - g_prev  # V^t (V^0 = G(X^0) from V = G = g_prev = 0)
        g_prev = g
        X = X + gamma * (M @ H - H) - eta * V  # X^{t+1}, with H^t
        H, G = H + _top_k(X - H, 2), G + _top_k(V - G, 2)  # H^{t+1}, G^t
        expected.append(X)
    got = _states("beer", f, W, T, compressor="top_k:2", gamma=gamma)
    assert np.allclose(got, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(("compressed", "plain", "options"), [
    ("choco_sgd", "dpsgd", {"form": "atc"}),
    ("beer", "dsgt", {}),
])
def test_uncompressed_they_are_dpsgd_atc_and_dsgt(compressed, plain, options):
    f, W, _ = _setup()
    # a Gaussian oracle: the compression streams are apart from the oracle's, so the draws agree too
    oracle = oracles.GaussianOracle(f, sigma=0.05)
    mine = algorithms.run(compressed, oracle, W, step_size=0.1, iterations=300, seed=4, gamma=1.0)
    theirs = algorithms.run(plain, oracle, W, step_size=0.1, iterations=300, seed=4, **options)
    assert np.allclose(mine.grad_norms, theirs.grad_norms, rtol=1e-9, atol=1e-12)
    assert mine.counters["bits"] == theirs.counters["bits"]  # identity: 64 d bits per vector, as uncompressed


def test_a_compressed_round_is_one_round_and_its_bits_are_counted():
    f, W, _ = _setup()
    T = 40
    for name, vectors in (("choco_sgd", 1), ("beer", 2)):
        for spec in ("top_k:2", "random_k:3", "qsgd:2", "sign"):
            r = algorithms.run(name, f, W, step_size=0.05, iterations=T, stop="average", compressor=spec)
            C = make_compressor(spec)
            c = r.counters
            assert c["communication_rounds"] == c["gossip_rounds"] == c["gradient_queries"] == T
            assert c["vectors_sent"] == vectors * T
            assert c["bits"] == vectors * T * C.bits(D)
            assert c["messages"] == vectors * T * 2 * N  # the ring's 2n directed links
    plain = algorithms.run("dpsgd", f, W, step_size=0.05, iterations=T, stop="average")
    assert plain.counters["bits"] == T * 64 * D


def test_a_second_compressed_round_in_one_iteration_is_refused():
    f, W, _ = _setup()

    class Twice(algorithms.StepRule):
        name = "compressed_twice_example"
        style = algorithms.PlotStyle(color="tab:gray", marker="o", label="twice")

        def init(self, ctx):
            return algorithms.State(x=ctx.start_state())

        def step(self, state, ctx):
            if ctx.t == 0:
                with pytest.raises(ValueError, match="give a compressor"):
                    ctx.gossip(state.x, sent=(state.x,))
            ctx.gossip(state.x, compressor=TopK(1))
            ctx.gossip(state.x, compressor=TopK(1))
            return state

    algorithms.register(Twice)
    try:
        with pytest.raises(algorithms.BudgetViolationError, match="second communication round"):
            algorithms.run("compressed_twice_example", f, W, step_size=0.1, iterations=3)
    finally:
        algorithms.unregister("compressed_twice_example")


@pytest.mark.parametrize("name", ["choco_sgd", "beer"])
def test_a_random_compressor_gives_the_same_bits_alone_and_in_a_batch(name):
    f, W, _ = _setup()
    oracle = oracles.GaussianOracle(f, sigma=0.1)
    batch = algorithms.run_batch(name, oracle, W, step_sizes=[0.05, 0.1], seeds=[0, 7], iterations=60,
                                 compressor="random_k:3")
    for r in batch:
        alone = algorithms.run(name, oracle, W, step_size=r.step_size, seed=r.seed, iterations=60,
                               compressor="random_k:3")
        assert alone.grad_norms == r.grad_norms and alone.x_hat.tolist() == r.x_hat.tolist()
    again = algorithms.run(name, oracle, W, step_size=0.05, seed=0, iterations=60, compressor="random_k:3")
    assert again.grad_norms == batch[0].grad_norms


def test_the_prediction_reads_the_compressors_delta():
    f = instances.heterogeneous_quadratic(N, D, 0.5, seed=0)
    W = instances.gossip_matrix(instances.topology("ring", N), "metropolis")
    r = algorithms.run("choco_sgd", f, W, step_size=0.1, iterations=5, tol=1e-2, compressor="top_k:2")
    # choco_sgd's Thm 4.1 needs G, which the problem does not state: listed unknown, never invented
    assert r.bound.entry == "choco_sgd" and r.bound.parameters["delta"] == 2 / D and r.bound.unknown == ("G",)
    assert r.hyper == {"compressor": "top_k:2", "gamma": 0.25}
    unbiased = algorithms.run("beer", f, W, step_size=0.1, iterations=5, tol=1e-2, compressor="random_k:4")
    assert unbiased.hyper["compressor"] == "contractive:random_k:4"
    assert unbiased.bound.parameters["delta"] == 0.5
    mixed = algorithms.run_batch("beer", f, W, step_sizes=[0.1], iterations=5, tol=1e-2,
                                 compressor=["top_k:2", "top_k:4"])
    assert mixed[0].bound.unknown == ("delta",)


def test_bad_compressed_hyper_parameters_are_refused():
    f, W, _ = _setup()
    with pytest.raises(ValueError, match="at most the dimension"):
        algorithms.run("choco_sgd", f, W, step_size=0.1, iterations=3, compressor="top_k:9")
    with pytest.raises(ValueError, match="gamma"):
        algorithms.run("beer", f, W, step_size=0.1, iterations=3, gamma=1.5)
    with pytest.raises(ValueError, match="compressor must be one of"):
        algorithms.run("beer", f, W, step_size=0.1, iterations=3, compressor="zip")


def test_cli_run_takes_a_compressor_and_prints_the_bits(capsys):
    import json

    from decbounds.cli import main

    argv = ["run", "beer", "--n", "8", "--iterations", "3000", "--compressor", "top_k:2", "--json"]
    assert main(argv) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["hyper"]["compressor"] == "top_k:2" and record["t_eps"] >= record["lower_bound"]
    counters = record["counters"]
    per_vector, rest = divmod(counters["bits"], counters["vectors_sent"])
    assert rest == 0 and per_vector % 2 == 0 and 0 <= per_vector // 2 - 64 < 32  # 2 (64 + ceil(log2 d)) bits
    assert record["prediction"] is not None
    assert main(argv[:-1]) == 0 and "bits sent per worker" in capsys.readouterr().out
