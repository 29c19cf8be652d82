"""A user's rule takes the same doors as a registered one (``run``, ``tune``, ``worst_case`` take the class),
a hyper-parameter it does not declare is refused by name instead of being recorded as applied, and T_eps
counts the iteration whose gradient norm equals tol (the stopping test is ``<= tol``)."""

from __future__ import annotations

import numpy as np
import pytest
from decbounds.pep.api import worst_case

from decbounds import algorithms, instances


class PlainGossip(algorithms.StepRule):
    """x <- W x - alpha G(x), declaring no hyper-parameter (so no momentum)."""

    name = "plain_gossip_test"

    def init(self, ctx):
        return algorithms.State(x=ctx.start_state())

    def step(self, state, ctx):
        state.x = ctx.gossip(state.x) - ctx.step_size * ctx.sample(state.x)
        return state


def _problem():
    f = instances.heterogeneous_quadratic(4, 3, 1.0, seed=0)
    W = instances.gossip_matrix(instances.topology("ring", 4), "metropolis")
    return f, W


def test_run_and_tune_take_the_class() -> None:
    """Before: ``run(MyRule, ...)`` raised "name (the algorithm) must be a string"."""
    f, W = _problem()
    mine = algorithms.run(PlainGossip, f, W, step_size=0.5, iterations=500, tol=1e-2)
    theirs = algorithms.run("dpsgd", f, W, step_size=0.5, iterations=500, tol=1e-2)
    assert mine.t_eps == theirs.t_eps and mine.algorithm == "plain_gossip_test"
    tuned = algorithms.tune(PlainGossip, f, W, [0.5, 0.25], tol=1e-2, iterations=500)
    assert tuned.t_eps == theirs.t_eps


def test_a_hyper_parameter_the_rule_does_not_declare_is_refused() -> None:
    """Before: every rule inherited ``batchable = {"momentum": 0.0}``, so momentum=0.9 on a rule without
    momentum was recorded in ``Result.hyper`` (and the worst case's header) with the numbers of 0.0."""
    f, W = _problem()
    assert PlainGossip.batchable == {}
    with pytest.raises(ValueError, match="momentum"):
        algorithms.run(PlainGossip, f, W, step_size=0.5, iterations=5, momentum=0.9)
    with pytest.raises(TypeError, match="momentum"):
        worst_case(PlainGossip, K=2, W=np.full((2, 2), 0.5), momentum=0.9)
    # the rules that have heavy ball declare it
    assert algorithms.run("dpsgd", f, W, step_size=0.5, iterations=5, momentum=0.9).hyper["momentum"] == 0.9


def test_t_eps_counts_the_iteration_at_equality() -> None:
    """The stopping test is ||grad f(x-bar)|| <= tol: with tol equal to the norm at x0, T_eps is 0 (a test
    written ``< tol`` gives a later iteration)."""
    f = instances.zero_chain(4, n=4)
    W = instances.gossip_matrix(instances.topology("ring", 4), "metropolis")
    tol = float(np.linalg.norm(f.full_grad(f.x0)))
    assert algorithms.run("dpsgd", f, W, step_size=0.5, iterations=5, tol=tol).t_eps == 0
    below = float(np.nextafter(tol, 0))
    assert algorithms.run("dpsgd", f, W, step_size=0.5, iterations=5, tol=below).t_eps != 0


def test_chocos_theory_gamma_is_an_option() -> None:
    """gamma='theory': Thm 4.1's rho^2 delta/(16 rho + rho^2 + 4 beta^2 + 2 rho beta^2 - 8 rho delta), with
    rho = 1 - lam and beta = ||I - W||_2 = 1 - lambda_min (Koloskova, Lin, Stich & Jaggi, ICLR 2020)."""
    from decbounds.algorithms.compressed import theory_gamma

    f, W = _problem()
    eigenvalues = np.linalg.eigvalsh(W.toarray())
    rho, beta, delta = 1 - W.lam, 1 - eigenvalues[0], 2 / 3
    result = algorithms.run("choco_sgd", f, W, step_size=0.2, iterations=3, compressor="top_k:2",
                            gamma="theory")
    expected = rho**2 * delta / (16 * rho + rho**2 + 4 * beta**2 + 2 * rho * beta**2 - 8 * rho * delta)
    assert result.hyper["gamma"] == pytest.approx(expected, rel=1e-12) == theory_gamma(rho, delta, beta)
