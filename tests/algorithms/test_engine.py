"""The engine: A_B budget enforcement, the registry, batching (every field of a Result has the same bits
alone or in a batch, for every algorithm and oracle), exact T_eps, records, and bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.sparse as sp
from support import DiagonalFiniteSum, DiagonalQuadratic, NoisyOracle, ring_W

from decbounds import algorithms, instances, oracles

N, D = 6, 3
#: every registered algorithm, read off the registry (a new algorithm is one file and nothing else)
EVERY = algorithms.algorithm_names()


@pytest.fixture
def quad():
    return DiagonalQuadratic(N, D, seed=4)


class _TwoQueries(algorithms.StepRule):
    name = "two_queries"
    style = algorithms.PlotStyle(color="k", marker="o", label="two queries")

    def init(self, ctx):
        return algorithms.State(x=ctx.start_state())

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


class _HalfQueries(_TwoQueries):
    name = "half_queries"

    def step(self, s, ctx):
        ctx.sample(s.x, 1)
        ctx.sample(s.x, 1)
        return s


@pytest.fixture
def registered():
    """Register rules for one test and remove them afterwards."""
    added: list[str] = []

    def add(rule):
        algorithms.register(rule)
        added.append(rule.name)
        return rule

    yield add
    for name in added:
        algorithms.unregister(name)


@pytest.mark.parametrize("rule", [_TwoQueries, _TwoRounds])
def test_budget_violations_raise(rule, quad, registered):
    registered(rule)
    with pytest.raises(algorithms.BudgetViolationError):
        algorithms.run(rule.name, quad, ring_W(N), step_size=0.1, iterations=2)


def test_two_queries_fit_a_batch_of_two(quad, registered):
    registered(_HalfQueries)
    result = algorithms.run(_HalfQueries.name, quad, ring_W(N), step_size=0.1, iterations=3, batch=2)
    assert result.counters["gradient_queries"] == 6


# -- the registry --------------------------------------------------------------------------------------


def test_one_registry_entry_holds_everything_about_an_algorithm():
    from decbounds import bounds

    assert algorithms.algorithm_names()[:9] == ("centralized", "local_sgd", "dpsgd", "d2", "dsgt", "gt_dsgd",
                                                "sgp", "defacto", "detag")  # the built-ins first, in order
    for name in EVERY:
        found = algorithms.entry(name)
        assert found.rule.name == name and algorithms.rule_class(name) is found.rule
        assert isinstance(found.style, algorithms.PlotStyle) and found.style.label
        if found.catalog_entry is not None:
            assert bounds.get(found.catalog_entry).name == found.catalog_entry
    assert algorithms.entry("FedAvg").name == "local_sgd" and algorithms.entry("d-psgd").name == "dpsgd"
    assert algorithms.entry("local_sgd").catalog_entry is None


def test_register_refuses_taken_names_and_non_rules(registered):
    class Clash(_TwoQueries):
        name = "dsgt"

    with pytest.raises(ValueError, match="already registered"):
        algorithms.register(Clash)
    with pytest.raises(TypeError, match="StepRule"):
        algorithms.register(object)

    class NoStyle(algorithms.StepRule):
        name = "no_style"

    with pytest.raises(ValueError, match="style"):
        algorithms.register(NoStyle)
    registered(_TwoQueries)
    assert "two_queries" in algorithms.algorithm_names()


def test_plot_styles_come_from_the_registry():
    from decbounds.paper_figures.plotting import style

    for found in algorithms.entries():
        assert style(found.name) == found.style.as_dict()


# -- bits: alone or in a batch --------------------------------------------------------------------------

FIELDS = ("status", "message", "t_eps", "t_eps_local", "iterations", "checkpoints", "grad_norms",
          "worst_worker_grad_norms", "consensus", "counters", "seed", "step_size", "hyper", "radius")


def _oracles():
    """Every oracle of the package over a problem whose gradients are computed point by point (the
    engine's bit-identity promise, algorithms/engine.py)."""
    f = DiagonalQuadratic(N, D, seed=5)
    chain = instances.sampling_instance(N, T_c=4, p=0.3)
    return {"exact": f, "gaussian": oracles.GaussianOracle(f, 0.5),
            "finite_sum": oracles.FiniteSumOracle(DiagonalFiniteSum(N, D, samples=7, seed=2)),
            "zero_chain": oracles.ZeroChainOracle(chain)}


ORACLES = _oracles()


def _same(a, b) -> None:
    for name in FIELDS:
        assert getattr(a, name) == getattr(b, name), name
    assert np.array_equal(a.x_hat, b.x_hat, equal_nan=True)


@pytest.mark.parametrize("oracle", list(ORACLES))
@pytest.mark.parametrize("name", EVERY)
def test_every_field_has_the_same_bits_alone_or_in_a_batch(name, oracle):
    problem = ORACLES[oracle]
    f = problem.f if hasattr(problem, "f") else problem
    steps = [0.3 / f.smoothness, 3.0 / f.smoothness]
    tol = 0.5 if oracle == "zero_chain" else 0.05
    W = ring_W(N)
    batch = algorithms.run_batch(name, problem, W, step_sizes=steps, seeds=[3, 11], iterations=60, tol=tol,
                                 record_every=7)
    assert [(r.step_size, r.seed) for r in batch] == [(a, s) for a in steps for s in (3, 11)]
    for result in batch:
        alone = algorithms.run(name, problem, W, step_size=result.step_size, seed=result.seed, iterations=60,
                               tol=tol, record_every=7)
        _same(alone, result)


def test_batched_hyper_grids_match_single_runs(quad):
    W = ring_W(N)
    grid = algorithms.run_batch("detag", quad, W, step_sizes=[0.1], eta=[0.0, 0.2], start=["paper", "plain"],
                                R=[1, 2], iterations=300, tol=1e-5)
    assert len(grid) == 8
    for result in grid:
        h = result.hyper
        alone = algorithms.run("detag", quad, W, step_size=0.1, eta=h["eta"], start=h["start"], R=h["R"],
                               iterations=300, tol=1e-5)
        _same(alone, result)


def test_dense_backend_agrees_to_rounding(quad):
    W = ring_W(N)
    sparse = algorithms.run_batch("detag", quad, W, step_sizes=[0.05, 0.1], iterations=200, tol=1e-4)
    dense = algorithms.run_batch("detag", quad, W, step_sizes=[0.05, 0.1], iterations=200, tol=1e-4,
                                 backend="dense")
    for a, b in zip(sparse, dense, strict=True):
        assert a.t_eps == b.t_eps
        np.testing.assert_allclose(a.x_hat, b.x_hat, rtol=1e-12)


# -- the stopping test ----------------------------------------------------------------------------------


@pytest.mark.parametrize("check_every", [1, 7])
def test_t_eps_is_the_first_checkpoint_below_tol(quad, check_every):
    W = ring_W(N)
    for name in ("dsgt", "detag", "d2"):
        result = algorithms.run(name, quad, W, step_size=0.05, iterations=3000, tol=1e-6, record_every=1,
                                check_every=check_every)
        traced = algorithms.run(name, quad, W, step_size=0.05, iterations=result.iterations + 1,
                                record_every=1)
        norms = np.asarray(traced.grad_norms)
        checks = [t for t in traced.checkpoints if t % check_every == 0]
        assert result.t_eps == next(t for t in checks if norms[t] <= 1e-6)
        worst = np.asarray(traced.worst_worker_grad_norms)
        assert result.t_eps_local == next(t for t in checks if worst[t] <= 1e-6)
        assert result.iterations == max(result.t_eps, result.t_eps_local) and result.status == "converged"


def test_the_smoothness_certificate_skips_evaluations_and_keeps_t_eps_exact():
    """The stopping test evaluates full_grad only where the smoothness of f cannot rule eps out; T_eps,
    t_eps_local and every recorded field equal those of the run that evaluates at every check."""
    calls: list[int] = []

    class Counting(DiagonalQuadratic):
        def full_grad(self, x: np.ndarray) -> np.ndarray:
            calls.append(1)
            return super().full_grad(x)

    steps = [0.005, 0.03, 0.1]
    for name in ("dsgt", "detag", "dpsgd"):
        calls.clear()
        tol = 1e-2 if name == "dpsgd" else 1e-6
        batch = algorithms.run_batch(name, Counting(N, D, seed=4), ring_W(N), step_sizes=steps,
                                     iterations=4000, tol=tol, record_every=10**6)
        assert len(calls) < max(r.iterations for r in batch) // 2, name
        exact = algorithms.run_batch(name, DiagonalQuadratic(N, D, seed=4), ring_W(N), step_sizes=steps,
                                     iterations=4000, tol=tol, record_every=10**6, exact_check=True)
        assert any(result.t_eps is not None for result in batch)
        for result, reference in zip(batch, exact, strict=True):
            _same(result, reference)


def test_stop_average_stops_at_t_eps(quad):
    result = algorithms.run("dsgt", quad, ring_W(N), step_size=0.05, iterations=3000, tol=1e-6,
                            stop="average")
    assert result.iterations == result.t_eps == result.counters["iterations"]
    assert result.checkpoints[-1] == result.t_eps and result.grad_norms[-1] <= 1e-6


def test_each_configuration_stops_on_its_own(quad):
    results = algorithms.run_batch("dsgt", quad, ring_W(N), step_sizes=[0.01, 0.1, 5.0], iterations=5000,
                                   tol=1e-6)
    slow, fast, wild = results
    assert fast.t_eps < slow.t_eps
    assert fast.iterations == fast.counters["iterations"] == max(fast.t_eps, fast.t_eps_local)
    assert wild.diverged and wild.t_eps is None and wild.status == "diverged"
    assert fast.checkpoints[-1] == fast.iterations


def test_t_eps_zero_when_the_start_is_stationary(quad):
    result = algorithms.run("dpsgd", quad, ring_W(N), step_size=0.1, iterations=10, tol=1e6)
    assert result.t_eps == result.t_eps_local == 0 and result.counters["gradient_queries"] == 0


def test_to_record_is_json_with_status_and_both_t_eps(quad):
    result = algorithms.run("detag", quad, ring_W(N), step_size=0.1, iterations=50, tol=1e-3)
    record = json.loads(json.dumps(result.to_record()))
    assert record["algorithm"] == "detag" and record["hyper"]["R"] >= 1 and record["step_size"] == 0.1
    assert set(record["counters"]) >= {"iterations", "gradient_queries", "gossip_rounds", "vectors_sent"}
    assert record["status"] == result.status and record["message"] == result.message
    assert record["t_eps_local"] == result.t_eps_local
    assert len(record["worst_worker_grad_norms"]) == len(record["checkpoints"])


def test_to_jsonable_keeps_non_finite_floats_and_refuses_objects():
    value = algorithms.to_jsonable({"a": np.float64(np.inf), "b": (np.int32(2), None), 3: {np.nan}})
    assert value["a"] == np.inf and value["b"] == [2, None] and np.isnan(value["3"][0])
    assert json.loads(json.dumps(value))["a"] == np.inf
    with pytest.raises(TypeError, match="JSON"):
        algorithms.to_jsonable({"f": object()})


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
    with pytest.raises(ValueError, match="stop"):
        algorithms.run("dsgt", quad, ring_W(N), step_size=0.1, iterations=1, stop="never")
    with pytest.raises(ValueError, match="radius"):
        algorithms.run("dsgt", quad, ring_W(N), step_size=0.1, iterations=1, radius=0.0)


def test_problem_shape_mismatch():
    bad = DiagonalQuadratic(N, D)
    bad.x0 = np.zeros(D + 1)
    with pytest.raises(ValueError, match="x0 shape mismatch"):
        algorithms.run("dpsgd", bad, ring_W(N), step_size=0.1, iterations=1)
    with pytest.raises(TypeError, match="oracle"):
        algorithms.run("dpsgd", object(), ring_W(N), step_size=0.1, iterations=1)


def test_tune_keeps_steps_admissible_and_picks_the_fastest():
    f = instances.heterogeneous_quadratic(N, D, 1.0, 5)
    W = ring_W(N)
    grid = [4.0 / f.smoothness, 1.0 / f.smoothness, 0.5 / f.smoothness, 0.1 / f.smoothness]
    tuned = algorithms.tune("dsgt", f, W, grid, tol=1e-5, iterations=3000, seeds=[0, 1])
    assert tuned.grid.excluded_steps == (grid[0],)
    assert all(r.step_size <= 1.0 / f.smoothness for r in tuned.grid.runs)
    finished = [r.t_eps for r in tuned.grid.runs if r.t_eps is not None]
    assert tuned.grid.score == min(finished)
    detag = algorithms.tune("detag", f, W, tol=1e-5, iterations=3000)
    assert {"eta", "R", "start"} <= set(detag.hyper) and detag.grid.score is not None
    assert {r.hyper["R"] for r in detag.grid.runs} >= {1, 2, 3}
    with pytest.raises(ValueError, match="admissible"):
        algorithms.tune("dsgt", f, W, [10.0], tol=1e-5, iterations=10)


def test_cli_run_prints_t_eps_beside_the_bounds(capsys):
    from decbounds.cli import main

    status = main(["run", "dsgt", "--instance", "comm-path", "--n", "9", "--Delta", str(262656 * 4),
                   "--L", "1", "--epsilon", "1", "--step-size", "8", "--iterations", "3000"])
    out = capsys.readouterr().out
    assert status == 0
    assert "measured T_eps" in out and "lower bound" in out and "catalog prediction (dsgt" in out
    status = main(["run", "detag", "--n", "9", "--Delta", str(262656 * 4), "--L", "1", "--epsilon", "1",
                   "--step-size", "8", "--iterations", "3000", "--R", "2", "--json"])
    record = json.loads(capsys.readouterr().out)
    assert status == 0 and record["lower_bound"] == 1 + 3 * 4 and record["t_eps"] >= record["lower_bound"]
    assert record["hyper"]["R"] == 2 and record["status"] == "converged"


def test_cli_run_reads_r_and_eta_off_the_rule(capsys):
    """R's default is the rule's declared worst-case one; --R and --eta only for a rule declaring them."""
    from decbounds.cli import main

    common = ["--n", "5", "--iterations", "20", "--json"]
    assert main(["run", "detag", *common]) == 0
    worst_case = algorithms.rule_class("detag").worst_case_defaults
    assert json.loads(capsys.readouterr().out)["hyper"]["R"] == worst_case["R"] == 2
    assert main(["run", "dpsgd", "--R", "3", *common]) == 2
    assert "--R: dpsgd has no hyper-parameter R" in capsys.readouterr().err
    assert main(["run", "dsgt", "--eta", "0.1", *common]) == 2
    assert "--eta: dsgt has no hyper-parameter eta" in capsys.readouterr().err


def _gossip_context(k: int = 2):
    """A context of a gossip rule on the 6-ring, k configurations, iteration 0 open."""
    from decbounds.algorithms.engine import Runtime
    from decbounds.algorithms.step_rule import communication_channel

    f = DiagonalQuadratic(N, D, seed=4)
    runtime = Runtime(problem=f, oracle=None, channel=communication_channel("gossip", ring_W(N), N),
                      step_sizes=[0.1] * k, hyper={}, batch=1, seeds=list(range(k)))
    runtime.begin_iteration(0)
    return runtime


def test_gossip_takes_a_compressor_spec_as_run_does():
    Z = np.random.default_rng(1).standard_normal((N, 2, D))
    results, bits = [], []
    for compressor in ("top_k:2", algorithms.TopK(2)):
        runtime = _gossip_context()
        sent = np.empty_like(Z)
        results.append((runtime.context.gossip(Z, compressor=compressor, sent=(sent,)), sent))
        bits.append(runtime.counters.bits)
    assert all(np.array_equal(a, b) for a, b in zip(results[0], results[1], strict=True))
    assert bits[0] == bits[1] == algorithms.TopK(2).bits(D)


@pytest.mark.parametrize(("options", "error", "message"), [
    ({"compressor": object()}, TypeError, "compressor must be a compressor or its spec string"),
    ({"compressor": "top_k:2", "sent": (np.empty((N, 2, D + 1)),)}, ValueError, "each sent array"),
    ({"compressor": "top_k:2", "sent": (np.empty((N, 2, D)), np.empty((N, 2, D)))}, ValueError,
     "sent must hold one array per array sent"),
    ({"compressor": "top_k:2", "vectors": 0}, ValueError, "vectors must be >= 1"),
    ({"vectors": 0}, ValueError, "vectors must be >= 1"),
])
def test_gossip_refuses_bad_compression_arguments_by_name(options, error, message):
    runtime = _gossip_context()
    with pytest.raises(error, match=message):
        runtime.context.gossip(np.zeros((N, 2, D)), **options)
    assert runtime.counters.communication_rounds == 0  # nothing was counted for a refused round


def test_the_former_names_are_deprecated_aliases_and_capability_is_not_budget():
    from decbounds.algorithms import engine
    from decbounds.algorithms.measurement import Outcomes
    from decbounds.algorithms.runtime import Runtime

    with pytest.warns(DeprecationWarning, match="use Runtime"):
        assert engine.Ledger is Runtime
    with pytest.warns(DeprecationWarning, match="use Outcomes"):
        assert engine.Book is Outcomes
    assert not issubclass(algorithms.CapabilityError, algorithms.BudgetViolationError)
