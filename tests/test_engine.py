"""The engine: A_B budget enforcement, batching (same bits alone or in a batch), exact T_eps with the cheap
stopping test, divergence, records, and bad input."""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pytest
import scipy.sparse as sp
from test_algorithms_fixtures import DiagonalQuadratic, NoisyOracle, ring_W

import algorithms
from algorithms.rules import RULES, StepRule

N, D = 6, 3


@pytest.fixture
def quad():
    return DiagonalQuadratic(N, D, seed=4)


class _TwoQueries(StepRule):
    name = "two_queries"

    def init(self, ctx):
        return SimpleNamespace(x=ctx.start_state())

    def step(self, s, ctx):
        ctx.sample(s.x)
        ctx.sample(s.x)
        return s


class _TwoRounds(_TwoQueries):
    name = "two_rounds"

    def step(self, s, ctx):
        ctx.gossip(s.x)
        ctx.gossip(s.x)
        return s


@pytest.mark.parametrize("rule", [_TwoQueries, _TwoRounds])
def test_budget_violations_raise(rule, quad, monkeypatch):
    monkeypatch.setitem(RULES, rule.name, rule)
    with pytest.raises(algorithms.BudgetViolationError):
        algorithms.run(rule.name, quad, ring_W(N), step_size=0.1, iterations=2)


def test_two_queries_fit_a_batch_of_two(quad, monkeypatch):
    monkeypatch.setitem(RULES, _TwoQueries.name, _TwoQueries)
    monkeypatch.setattr(_TwoQueries, "step", lambda self, s, ctx: (ctx.sample(s.x, 1), ctx.sample(s.x, 1))[0]
                        is not None and s)
    result = algorithms.run(_TwoQueries.name, quad, ring_W(N), step_size=0.1, iterations=3, batch=2)
    assert result.counters["gradient_queries"] == 6


@pytest.mark.parametrize("name", ["dpsgd", "detag", "dsgt", "defacto"])
def test_a_configuration_gives_the_same_bits_alone_or_in_a_batch(name):
    oracle = NoisyOracle(DiagonalQuadratic(N, D, seed=5), sigma=0.5)
    W = ring_W(N)
    steps, seeds = [0.01, 0.05, 0.1], [3, 11]
    batch = algorithms.run_batch(name, oracle, W, step_sizes=steps, seeds=seeds, iterations=60, tol=0.05,
                                 record_every=1)
    assert [(r.step_size, r.seed) for r in batch] == [(a, s) for a in steps for s in seeds]
    for result in batch:
        alone = algorithms.run(name, oracle, W, step_size=result.step_size, seed=result.seed, iterations=60,
                               tol=0.05, record_every=1)
        assert alone.t_eps == result.t_eps
        assert np.array_equal(alone.x_hat, result.x_hat)
        assert alone.grad_norms == result.grad_norms


def test_dense_backend_agrees_to_rounding(quad):
    W = ring_W(N)
    sparse = algorithms.run_batch("detag", quad, W, step_sizes=[0.05, 0.1], iterations=200, tol=1e-4)
    dense = algorithms.run_batch("detag", quad, W, step_sizes=[0.05, 0.1], iterations=200, tol=1e-4,
                                 backend="dense")
    for a, b in zip(sparse, dense, strict=True):
        assert a.t_eps == b.t_eps
        np.testing.assert_allclose(a.x_hat, b.x_hat, rtol=1e-12)


def test_batched_hyper_grids_match_single_runs(quad):
    W = ring_W(N)
    grid = algorithms.run_batch("detag", quad, W, step_sizes=[0.1], eta=[0.0, 0.2], start=["paper", "plain"],
                                R=[1, 2], iterations=300, tol=1e-5)
    assert len(grid) == 8
    for result in grid:
        h = result.hyper
        alone = algorithms.run("detag", quad, W, step_size=0.1, eta=h["eta"], start=h["start"], R=h["R"],
                               iterations=300, tol=1e-5)
        assert alone.t_eps == result.t_eps and np.array_equal(alone.x_hat, result.x_hat)


def test_t_eps_is_exact_with_the_cheap_stopping_test(quad):
    W = ring_W(N)
    for name in ("dsgt", "detag", "d2"):
        fast = algorithms.run(name, quad, W, step_size=0.05, iterations=3000, tol=1e-6)
        exact = algorithms.run(name, quad, W, step_size=0.05, iterations=3000, tol=1e-6, exact_check=True,
                               record_every=1)
        assert fast.t_eps is not None and fast.t_eps == exact.t_eps
        norms = np.asarray(exact.grad_norms)
        assert exact.checkpoints[-1] == exact.t_eps
        assert norms[-1] <= 1e-6 < norms[:-1].min()  # the first checkpoint below tol is T_eps


def test_a_batch_evaluates_only_the_configurations_that_left_their_radius():
    """The stopping test of a batch passes full_grad only the rows of configurations outside their smoothness
    radius; each configuration still stops at its exact T_eps, with the bits of its exhaustive solo run."""
    sizes: list[int] = []

    class Counting(DiagonalQuadratic):
        def full_grad(self, x: np.ndarray) -> np.ndarray:
            sizes.append(x.shape[0] if x.ndim == 2 else 1)
            return super().full_grad(x)

    steps = [0.005, 0.03, 0.1]
    batch = algorithms.run_batch("dsgt", Counting(N, D, seed=4), ring_W(N), step_sizes=steps, iterations=4000,
                                 tol=1e-6, record_every=10**6)
    assert any(0 < size < len(steps) for size in sizes)  # the subset path ran
    for result, step in zip(batch, steps, strict=True):
        exact = algorithms.run("dsgt", DiagonalQuadratic(N, D, seed=4), ring_W(N), step_size=step,
                               iterations=4000, tol=1e-6, exact_check=True)
        assert result.t_eps is not None and result.t_eps == exact.t_eps
        assert np.array_equal(result.x_hat, exact.x_hat)


def test_each_configuration_stops_on_its_own(quad):
    results = algorithms.run_batch("dsgt", quad, ring_W(N), step_sizes=[0.01, 0.1, 5.0], iterations=5000,
                                   tol=1e-6)
    slow, fast, wild = results
    assert fast.t_eps < slow.t_eps
    assert fast.iterations == fast.t_eps and fast.counters["iterations"] == fast.t_eps
    assert wild.diverged and wild.t_eps is None
    assert fast.checkpoints[-1] == fast.t_eps


def test_divergence_is_reported_without_t_eps(quad):
    result = algorithms.run("dpsgd", quad, ring_W(N), step_size=50.0, iterations=500, tol=1e-8)
    assert result.diverged and result.t_eps is None and result.iterations < 500


def test_t_eps_zero_when_the_start_is_stationary(quad):
    result = algorithms.run("dpsgd", quad, ring_W(N), step_size=0.1, iterations=10, tol=1e6)
    assert result.t_eps == 0 and result.counters["gradient_queries"] == 0


def test_to_record_is_json(quad):
    result = algorithms.run("detag", quad, ring_W(N), step_size=0.1, iterations=50, tol=1e-3)
    record = json.loads(json.dumps(result.to_record()))
    assert record["algorithm"] == "detag" and record["hyper"]["R"] >= 1 and record["step_size"] == 0.1
    assert set(record["counters"]) >= {"iterations", "gradient_queries", "gossip_rounds", "vectors_sent"}


def test_seed_reproducibility_with_noise():
    oracle = NoisyOracle(DiagonalQuadratic(N, D, seed=5), sigma=0.5)
    a = algorithms.run("dsgt", oracle, ring_W(N), step_size=0.05, iterations=40, seed=9)
    b = algorithms.run("dsgt", oracle, ring_W(N), step_size=0.05, iterations=40, seed=9)
    c = algorithms.run("dsgt", oracle, ring_W(N), step_size=0.05, iterations=40, seed=10)
    assert np.array_equal(a.x_hat, b.x_hat) and not np.array_equal(a.x_hat, c.x_hat)


# -- bad input -----------------------------------------------------------------------------------------


def test_unknown_algorithm(quad):
    with pytest.raises(ValueError, match="unknown algorithm 'adam'"):
        algorithms.run("adam", quad, ring_W(N), step_size=0.1, iterations=1)


@pytest.mark.parametrize("bad_step", [0.0, -0.1, float("nan"), float("inf")])
def test_step_size_must_be_positive(quad, bad_step):
    with pytest.raises(ValueError, match="step_size"):
        algorithms.run("dpsgd", quad, ring_W(N), step_size=bad_step, iterations=1)


def test_W_failing_check_gossip(quad):
    W = ring_W(N).toarray()
    W[0, 1] += 0.1
    W[0, 0] -= 0.1  # rows still sum to 1, symmetry broken
    with pytest.raises(ValueError, match="symmetric"):
        algorithms.run("dsgt", quad, W, step_size=0.1, iterations=1)
    disconnected = sp.block_diag([ring_W(3), ring_W(3)]).tocsr()
    with pytest.raises(ValueError, match="connected"):
        algorithms.run("detag", quad, disconnected, step_size=0.1, iterations=1)


def test_W_shape_mismatch(quad):
    with pytest.raises(ValueError, match="shape mismatch"):
        algorithms.run("dpsgd", quad, ring_W(N + 1), step_size=0.1, iterations=1)


def test_sgp_needs_column_stochastic(quad):
    P = np.full((N, N), 1.0 / N)
    P[:, 0] *= 2
    with pytest.raises(ValueError, match="column-stochastic"):
        algorithms.run("sgp", quad, P, step_size=0.1, iterations=1)


def test_unknown_hyper_parameter_and_bad_values(quad):
    with pytest.raises(ValueError, match="unknown hyper-parameter 'R'"):
        algorithms.run("dpsgd", quad, ring_W(N), step_size=0.1, iterations=1, R=3)
    with pytest.raises(ValueError, match="form"):
        algorithms.run("dpsgd", quad, ring_W(N), step_size=0.1, iterations=1, form="sideways")
    with pytest.raises(ValueError, match="R"):
        algorithms.run("detag", quad, ring_W(N), step_size=0.1, iterations=1, R=0)
    with pytest.raises(ValueError, match="momentum"):
        algorithms.run("dsgt", quad, ring_W(N), step_size=0.1, iterations=1, momentum=1.5)
    with pytest.raises(ValueError, match="eta"):
        algorithms.run("detag", quad, ring_W(N), step_size=0.1, iterations=1, gossip="chebyshev", eta=0.2)
    with pytest.raises(ValueError, match="batch"):
        algorithms.run("dsgt", quad, ring_W(N), step_size=0.1, iterations=1, batch=0)
    with pytest.raises(ValueError, match="tol"):
        algorithms.run("dsgt", quad, ring_W(N), step_size=0.1, iterations=1, tol=-1.0)


def test_problem_shape_mismatch():
    bad = DiagonalQuadratic(N, D)
    bad.x0 = np.zeros(D + 1)
    with pytest.raises(ValueError, match="x0 shape mismatch"):
        algorithms.run("dpsgd", bad, ring_W(N), step_size=0.1, iterations=1)
    with pytest.raises(TypeError, match="oracle"):
        algorithms.run("dpsgd", object(), ring_W(N), step_size=0.1, iterations=1)


def test_real_oracles_give_the_same_bits_alone_or_in_a_batch():
    import instances
    import oracles

    f = instances.heterogeneous_quadratic(N, D, 1.0, 2)
    chain = instances.sampling_instance(N, T_c=4, p=0.3)
    for oracle in (oracles.GaussianOracle(f, 0.5), oracles.ZeroChainOracle(chain)):
        W = ring_W(N)
        batch = algorithms.run_batch("dsgt", oracle, W, step_sizes=[0.01, 0.002], seeds=[1, 2], iterations=40,
                                     record_every=5)
        for result in batch:
            alone = algorithms.run("dsgt", oracle, W, step_size=result.step_size, seed=result.seed,
                                   iterations=40, record_every=5)
            assert np.array_equal(alone.x_hat, result.x_hat) and alone.grad_norms == result.grad_norms


def test_tune_keeps_steps_admissible_and_picks_the_fastest():
    import instances
    from algorithms.tune import tune

    f = instances.heterogeneous_quadratic(N, D, 1.0, 5)
    W = ring_W(N)
    grid = [4.0 / f.smoothness, 1.0 / f.smoothness, 0.5 / f.smoothness, 0.1 / f.smoothness]
    tuned = tune("dsgt", f, W, grid, tol=1e-5, iterations=3000, seeds=[0, 1])
    assert tuned.excluded_steps == [grid[0]]
    assert all(r.step_size <= 1.0 / f.smoothness for r in tuned.results)
    finished = [r.t_eps for r in tuned.results if r.t_eps is not None]
    assert tuned.t_eps == min(finished)
    detag = tune("detag", f, W, tol=1e-5, iterations=3000)
    assert {"eta", "R", "start"} <= set(detag.hyper) and detag.t_eps is not None
    assert {r.hyper["R"] for r in detag.results} >= {1, 2, 3}
    with pytest.raises(ValueError, match="admissible"):
        tune("dsgt", f, W, [10.0], tol=1e-5, iterations=10)


def test_cli_run_prints_t_eps_beside_the_bounds(capsys):
    from paper_figures.cli import main

    status = main(["run", "dsgt", "--instance", "comm-path", "--n", "9", "--Delta", str(262656 * 4),
                   "--L", "1", "--epsilon", "1", "--step-size", "8", "--iterations", "3000"])
    out = capsys.readouterr().out
    assert status == 0
    assert "measured T_eps" in out and "lower bound" in out and "catalog prediction (dsgt" in out
    status = main(["run", "detag", "--n", "9", "--Delta", str(262656 * 4), "--L", "1", "--epsilon", "1",
                   "--step-size", "8", "--iterations", "3000", "--R", "2", "--json"])
    record = json.loads(capsys.readouterr().out)
    assert status == 0 and record["lower_bound"] == 1 + 3 * 4 and record["t_eps"] >= record["lower_bound"]
    assert record["hyper"]["R"] == 2
