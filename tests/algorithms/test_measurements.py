"""Measurements a reviewer can trust: divergence is judged on the state of every worker,
T_eps is measured at x_hat and at the workers' own models, and every Result carries a status and a message."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import DiagonalQuadratic, ring_W

from decbounds import algorithms, instances, oracles


def _path(n: int, T_c: int = 3):
    """Cor. 2's path instance of the communication figure: exact gradients, Metropolis weights."""
    problem = instances.communication_instance(n, T_c=T_c)
    return problem, instances.gossip_matrix(problem.graph(), "metropolis")


@pytest.mark.parametrize("n", [12, 16])
def test_alg3_as_printed_with_R1_is_reported_diverged(n):
    """The communication figure's series "Alg. 3 as printed (expanding)" at R = 1: the gradient test alone
    counted it as converged (T_eps = 303 at n = 12, 213 at n = 16) while the local models had passed 1e19;
    the state test reports it diverged, without a T_eps."""
    problem, W = _path(n)
    result = algorithms.run("detag", problem, W, step_size=1.0 / problem.smoothness, iterations=2000,
                            tol=problem.epsilon, R=1)
    assert result.hyper["start"] == "paper" and result.hyper["gossip"] == "two_tap"
    assert result.status == "diverged" and result.diverged
    assert result.t_eps is None and result.t_eps_local is None
    assert "above the instance radius" in result.message and f"t = {result.iterations}" in result.message
    assert result.iterations < {12: 303, 16: 213}[n]


def test_converging_records_of_the_communication_figure_keep_their_t_eps():
    """T_eps of converging runs of the communication figure at n = 12 (steps 1/L and 1/(2L)), as the engine
    measured them before the state test: unchanged."""
    problem, W = _path(12)
    steps = [1.0 / problem.smoothness, 0.5 / problem.smoothness]
    expected = {"centralized": [1312, 2624], "dsgt": [1308, 2602], "d2": [1303, 2614], "dpsgd": [1527, 2829]}
    for name, t_eps in expected.items():
        results = algorithms.run_batch(name, problem, None if name == "centralized" else W, step_sizes=steps,
                                       iterations=4000, tol=problem.epsilon, stop="average")
        assert [r.t_eps for r in results] == t_eps, name
        assert all(r.status == "converged" for r in results)
    detag = algorithms.run_batch("detag", problem, W, step_sizes=steps[:1], iterations=4000,
                                 tol=problem.epsilon, R=2, gossip=["two_tap", "chebyshev"], start="plain",
                                 stop="average")
    assert [r.t_eps for r in detag] == [2612, 1730]


def test_the_zero_chain_radius_is_a_multiple_of_its_scales():
    problem, _ = _path(12)
    assert problem.radius == problem.RADIUS_MULTIPLE * 23.0 * 3.0  # G_INF x the largest weight (scale 1)
    assert instances.zero_chain(4).radius == problem.RADIUS_MULTIPLE * 23.0
    f = DiagonalQuadratic(4, 2)
    assert instances.instance_radius(f, 0.1) == instances.default_radius(f, 0.1)


class _Trace:
    """A callback keeping, per iteration, the largest |entry| of the local models and of every per-worker
    array, for configuration 0."""

    def __init__(self, rule: algorithms.StepRule) -> None:
        self.rule = rule
        self.models: list[float] = []
        self.everything: list[float] = []

    def __call__(self, t, state, ctx) -> None:
        with np.errstate(invalid="ignore"):
            arrays = self.rule.worker_arrays(state)
            sizes = [float(np.max(np.abs(a[:, :1]))) for a in arrays]
        self.models.append(sizes[0])
        self.everything.append(max(sizes))


@settings(max_examples=40)
@given(name=st.sampled_from(["dpsgd", "dsgt", "detag", "d2"]),
       log_step=st.floats(min_value=-3.0, max_value=6.0),
       paper_start=st.booleans())
def test_a_finite_t_eps_comes_with_bounded_iterates_and_never_with_divergence(name, log_step, paper_start):
    """For step sizes up to 1e6 / L: either a finite T_eps whose iterates stayed inside the radius at every
    checkpoint up to it (and every per-worker array at T_eps itself), or ``diverged`` without a T_eps;
    never both."""
    problem, W = _path(6)
    step = 10.0**log_step / problem.smoothness
    options = {"R": 1, "start": "paper" if paper_start else "plain"} if name == "detag" else {}
    rule = algorithms.rule_class(name)(problem, W, {"R": 1} if name == "detag" else {}, iterations=400)
    trace = _Trace(rule)
    result = algorithms.run(name, problem, W, step_size=step, iterations=400, tol=problem.epsilon,
                            callback=trace, **options)
    assert result.status in ("converged", "max_iterations", "diverged")
    assert not (result.diverged and (result.t_eps is not None or result.t_eps_local is not None))
    if result.t_eps is not None:
        stop = result.iterations
        assert max(trace.models[: stop + 1]) <= result.radius
        assert trace.everything[result.t_eps] <= result.radius
        assert math.isfinite(result.grad_norms[-1])
    if result.diverged:
        assert result.t_eps is None


def test_t_eps_local_is_the_first_checkpoint_with_every_worker_stationary():
    """Both outputs on the path instance: ``t_eps_local`` is the first checkpoint where max_i ||grad f(x_i)||
    <= eps, checked against the models themselves."""
    problem, W = _path(12)
    models: list[np.ndarray] = []
    result = algorithms.run("dpsgd", problem, W, step_size=1.0 / problem.smoothness, iterations=4000,
                            tol=problem.epsilon, record_every=1,
                            callback=lambda t, state, ctx: models.append(state.x[:, 0].copy()))
    assert result.t_eps == 1527 and result.t_eps_local is not None and result.t_eps_local > result.t_eps
    worst = [float(np.max(np.linalg.norm(problem.full_grad(x), axis=-1))) for x in models]
    assert result.worst_worker_grad_norms == pytest.approx(worst, rel=1e-12)
    assert result.t_eps_local == next(t for t, value in enumerate(worst) if value <= problem.epsilon)
    assert result.iterations == result.t_eps_local and result.status == "converged"


def test_every_result_has_a_status_a_message_and_a_short_repr():
    f = DiagonalQuadratic(6, 3, seed=4)
    converged, capped, diverged = algorithms.run_batch("dsgt", f, ring_W(6), step_sizes=[0.1, 1e-4, 50.0],
                                                       iterations=300, tol=1e-6)
    assert converged.status == "converged" and "t = " in converged.message
    assert capped.status == "max_iterations" and "iteration cap 300" in capped.message
    assert diverged.status == "diverged" and "radius" in diverged.message
    for result in (converged, capped, diverged):
        text = repr(result)
        assert text.startswith("Result(dsgt, ") and result.status in text and len(text) < 400
        assert "array" not in text
    with pytest.raises(ValueError, match="status"):
        algorithms.Result(algorithm="x", status="done", message="", t_eps=None, t_eps_local=None,
                          iterations=0, checkpoints=[], grad_norms=[], worst_worker_grad_norms=[],
                          consensus=[], counters={}, seed=0, step_size=1.0, batch=1)


@pytest.mark.parametrize("name", ["detag", "dsgt"])
def test_a_diverging_configuration_leaves_the_others_unchanged(name):
    """A configuration that overflows to NaN is closed once, at the iteration where it diverges alone, and
    the others run on with the bits of their solo runs."""
    f = DiagonalQuadratic(6, 3, seed=4)
    steps = [1e6, 0.02, 0.1]
    batch = algorithms.run_batch(name, f, ring_W(6), step_sizes=steps, iterations=3000, tol=1e-6,
                                 record_every=7)
    assert batch[0].diverged and batch[0].iterations < 20
    assert all(r.status == "converged" for r in batch[1:])
    for result, step in zip(batch, steps, strict=True):
        alone = algorithms.run(name, f, ring_W(6), step_size=step, iterations=3000, tol=1e-6, record_every=7)
        assert (alone.status, alone.message, alone.t_eps, alone.iterations) == (
            result.status, result.message, result.t_eps, result.iterations)
        assert alone.grad_norms == result.grad_norms and alone.checkpoints == result.checkpoints
        assert np.array_equal(alone.x_hat, result.x_hat, equal_nan=True)


def test_trackers_may_hold_the_probabilistic_oracles_inflated_estimates():
    """Errata E41: DeTAG's tracker sums estimates scaled by 1/p; at p = 1.25e-4 it exceeds the instance
    radius while the run converges (the engine once called this seed diverged at t = 2848)."""
    f = instances.sampling_instance(4, T_c=6, p=1.25e-4)
    oracle = oracles.ZeroChainOracle(f)
    assert oracle.estimate_scale == 8000.0
    W = instances.gossip_matrix(f.graph(), "metropolis")
    result = algorithms.run("detag", oracle, W, step_size=1 / f.smoothness, R=1, eta=None, start="paper",
                            seed=6, tol=f.epsilon, iterations=20000)
    assert result.status == "converged" and result.t_eps == 4253
