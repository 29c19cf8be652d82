"""The engine over gossip schedules: W_t in iteration t, the same accounting and bits, every registered
algorithm with every schedule constructor (instances.schedules)."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from decbounds.instances import schedules as sch
from support import assert_batch_agrees

from decbounds import algorithms, bounds, instances

N = 8


def _constructors() -> dict[str, sch.GossipSchedule]:
    W = instances.gossip_matrix(instances.topology("ring", N), "metropolis")
    ring = sch.rotating_ring(N)
    return {"one_peer_exponential": sch.one_peer_exponential(N),
            "random_matchings": sch.random_matchings(N, seed=0),
            "randomized_gossip": sch.randomized_gossip(nx.cycle_graph(N), seed=0), "rotating_ring": ring,
            "constant_schedule": sch.constant_schedule(W),
            "schedule_from_sequence": sch.schedule_from_sequence([W, ring.matrix(0)]),
            "schedule_from_callable": sch.schedule_from_callable(lambda t: W if t % 3 else ring.matrix(t), N)}


@pytest.mark.parametrize("name", algorithms.algorithm_names())
def test_every_algorithm_runs_on_every_schedule_constructor(name: str) -> None:
    f = instances.heterogeneous_quadratic(N, 3, 1.0, seed=0)
    rule = algorithms.rule_class(name)
    for label, schedule in _constructors().items():
        result = algorithms.run(name, f, schedule, step_size=0.05, iterations=40, tol=1e-1)
        assert result.iterations == 40 or result.status != "max_iterations", (name, label)
        assert result.counters["communication_rounds"] <= result.iterations
        if rule.communication == "gossip":
            assert result.counters["gossip_rounds"] > 0, (name, label)


def _quadratic_grad(f: instances.HeterogeneousQuadratic, X: np.ndarray) -> np.ndarray:
    return f.grad(X[:, None, :])[:, 0, :]


def test_dpsgd_applies_w_t_in_iteration_t_alone_and_in_a_batch_as_the_engine_promises() -> None:
    f = instances.heterogeneous_quadratic(N, 3, 1.0, seed=1)
    s = sch.random_matchings(N, seed=5)
    alpha, T = 0.1, 25
    X = np.broadcast_to(f.x0, (N, 3)).copy()
    for t in range(T):  # D-PSGD, combine-then-adapt: X <- W_t X - alpha G(X)
        X = s.matrix(t) @ X - alpha * _quadratic_grad(f, X)
    alone = algorithms.run("dpsgd", f, s, step_size=alpha, iterations=T)
    assert np.allclose(alone.x_hat, X.mean(axis=0), rtol=0, atol=1e-12)
    batch = algorithms.run_batch("dpsgd", f, s, step_sizes=[0.05, alpha], iterations=T)
    # x @ A is a BLAS product: a batch agrees to BATCH_RTOL (its kernel for 2 rows may round otherwise)
    assert_batch_agrees(batch[1].x_hat, alone.x_hat, f)
    chain = instances.sampling_instance(N, T_c=6, p=1.0)  # pointwise: the same bits in a batch
    exact = algorithms.run_batch("dpsgd", chain, s, step_sizes=[0.05, alpha], iterations=T)
    solo = algorithms.run("dpsgd", chain, s, step_size=alpha, iterations=T)
    assert_batch_agrees(exact[1].x_hat, solo.x_hat, chain)
    # one round per iteration, 2 directed links per matched pair of W_t
    links = sum(2 * s.support(t).number_of_edges() for t in range(T))
    assert alone.counters["messages"] == links and alone.counters["gossip_rounds"] == T


def test_symmetric_rules_refuse_a_push_schedule_and_sgp_takes_it() -> None:
    f = instances.heterogeneous_quadratic(N, 3, 1.0, seed=0)
    push = sch.one_peer_exponential(N, directed=True)
    with pytest.raises(ValueError, match="rule needs symmetric doubly stochastic rounds"):
        algorithms.run("dsgt", f, push, step_size=0.1, iterations=5)
    result = algorithms.run("sgp", f, push, step_size=0.1, iterations=60, tol=1e-1)
    assert result.status == "converged"
    with pytest.raises(ValueError, match="has n=4"):
        algorithms.run("dpsgd", f, sch.rotating_ring(4), step_size=0.1, iterations=5)
    disconnected = sch.schedule_from_sequence([np.eye(N)])
    with pytest.raises(ValueError, match="does not connect the workers"):
        algorithms.run("dpsgd", f, disconnected, step_size=0.1, iterations=5)


def test_detag_reads_the_effective_lam_and_defacto_averages_exactly_over_one_peer_exponential() -> None:
    f = instances.heterogeneous_quadratic(N, 3, 1.0, seed=0)
    s = sch.one_peer_exponential(N)
    detag = algorithms.run("detag", f, s, step_size=0.2, iterations=200, tol=1e-2)
    assert detag.hyper["eta"] == 0.0  # lam_eff = 0: three rounds average exactly, no acceleration needed
    ring = sch.rotating_ring(N)
    eta = algorithms.run("detag", f, ring, step_size=0.2, iterations=5).hyper["eta"]
    assert eta == pytest.approx(bounds.accelerated_gossip_eta(ring.lam)) and eta > 0.0
    scheduled = algorithms.run("defacto", f, s, step_size=0.2, iterations=200, tol=1e-2)
    assert scheduled.hyper["R"] == 3 and scheduled.hyper["factors"] == "schedule"
    factors = algorithms.run("defacto", f, instances.topology("hypercube", N), step_size=0.2, iterations=200,
                             tol=1e-2, factors=s.rounds(0, 3))
    assert scheduled.t_eps == factors.t_eps and np.array_equal(scheduled.x_hat, factors.x_hat)
    assert scheduled.t_eps_local == scheduled.t_eps  # exact averaging: every model is the average
