"""The compiled worst case against an SDP written here from the Gram formulation, and what the compiler must
refuse or keep: answers that only build a later query point, the engine's budget of one iteration, results
that hold their own rule, the PEP's declarations read off the rule class, a plain copy of an iterate.

Every SDP here is small (N = 2, K <= 3).
"""

from __future__ import annotations

from typing import ClassVar

import cvxpy as cp
import numpy as np
import pytest
from decbounds.algorithms.compiled import NotLinearError
from decbounds.algorithms.context import BudgetViolationError, CapabilityError
from decbounds.pep.api import worst_case, worst_gossip_matrix

from decbounds import algorithms, pep

W2 = np.array([[0.75, 0.25], [0.25, 0.75]])


class Extragradient(algorithms.StepRule):
    """x <- W (x - alpha G(x - alpha G(x))): two queries per iteration (batch = 2 in the engine)."""

    name = "extragradient_test"

    def init(self, ctx):
        return algorithms.State(x=ctx.start_state())

    def step(self, state, ctx):
        x = state.x
        y = x - ctx.step_size * ctx.sample(x, queries=1)
        state.x = ctx.gossip(x - ctx.step_size * ctx.sample(y, queries=1))
        return state


class GradientAtMixed(algorithms.StepRule):
    """x <- x - alpha G(W x): the gossip output is only a query point."""

    name = "gradient_at_mixed_test"

    def init(self, ctx):
        return algorithms.State(x=ctx.start_state())

    def step(self, state, ctx):
        state.x = state.x - ctx.step_size * ctx.sample(ctx.gossip(state.x))
        return state


def _gram_sdp(update, W: np.ndarray, K: int, alpha: float, varsigma: float = 1.0) -> float:
    """The non-convex PEP written out: x0 = 0, one basis vector of the Gram matrix per queried gradient
    (agent, point), f_i(x0) - f(x-bar^K) <= 1 (f = mean f_i), (1/N) sum_i ||g_i(x-bar^k) - g(x-bar^k)||^2 <=
    varsigma^2 and t <= ||g(x-bar^k)||^2 for k = 0..K, and the smooth non-convex interpolation inequality
    f_a >= f_b + <g_a + g_b, x_a - x_b>/2 + ||g_a - g_b||^2/4 - ||x_a - x_b||^2/4 (L = 1) for every ordered
    pair of each agent's points. ``update(X, grad)`` is one iteration on coefficient rows."""
    N = W.shape[0]
    points: list[list[tuple[np.ndarray, int]]] = [[] for _ in range(N)]
    size = 0
    capacity = 200

    def grad(i: int, x: np.ndarray) -> np.ndarray:
        nonlocal size
        for p, j in points[i]:
            if np.allclose(p, x, rtol=0, atol=1e-12):
                return np.eye(capacity)[j]
        points[i].append((x.copy(), size))
        size += 1
        return np.eye(capacity)[size - 1]

    def G(X: np.ndarray) -> np.ndarray:
        return np.array([grad(i, X[i]) for i in range(N)])

    X = np.zeros((N, capacity))
    iterates = [X]
    for _ in range(K):
        X = update(X, G)
        iterates.append(X)
    average_grads = [G(np.repeat(Xk.mean(axis=0)[None], N, axis=0)) for Xk in iterates]
    Gram = cp.Variable((size, size), PSD=True)
    fvalue = {(i, j): cp.Variable() for i in range(N) for _, j in points[i]}

    def inner(a: np.ndarray, b: np.ndarray):
        a, b = a[:size], b[:size]
        return cp.sum(cp.multiply(np.outer(a, b), Gram))

    constraints = []
    for i in range(N):
        for xa, a in points[i]:
            for xb, b in points[i]:
                if a == b:
                    continue
                ga, gb, dx = np.eye(capacity)[a], np.eye(capacity)[b], xa - xb
                constraints.append(fvalue[i, a] >= fvalue[i, b] + 0.5 * inner(ga + gb, dx)
                                   + 0.25 * inner(ga - gb, ga - gb) - 0.25 * inner(dx, dx))
    t = cp.Variable()

    def index(i: int, x: np.ndarray) -> int:
        return next(j for p, j in points[i] if np.allclose(p, x, rtol=0, atol=1e-12))

    last = iterates[-1].mean(axis=0)
    constraints.append(sum(fvalue[i, index(i, np.zeros(capacity))] - fvalue[i, index(i, last)]
                           for i in range(N)) / N <= 1.0)
    for grads in average_grads:
        mean = grads.mean(axis=0)
        constraints.append(t <= inner(mean, mean))
        constraints.append(sum(inner(g - mean, g - mean) for g in grads) / N <= varsigma ** 2)
    problem = cp.Problem(cp.Maximize(t), constraints)
    problem.solve(solver="CLARABEL")
    assert problem.status == "optimal"
    return float(problem.value)


def _extragradient(W: np.ndarray, alpha: float):
    def update(X, G):
        return W @ (X - alpha * G(X - alpha * G(X)))
    return update


def _gradient_at_mixed(W: np.ndarray, alpha: float):
    def update(X, G):
        return X - alpha * G(W @ X)
    return update


@pytest.mark.parametrize(("rule", "reference", "batch"), [(Extragradient, _extragradient, 2),
                                                          (GradientAtMixed, _gradient_at_mixed, 1)])
def test_an_answer_that_only_builds_a_query_point_is_kept(rule, reference, batch) -> None:
    """Before: the inner G(x) of extragradient (and W x of x - alpha G(W x)) reached no recorded iterate and
    was answered with zeros, giving D-PSGD's value (or "unbounded")."""
    ours = worst_case(rule, K=3, step_size=0.5, W=W2, batch=batch)
    assert ours.value == pytest.approx(_gram_sdp(reference(W2, 0.5), W2, 3, 0.5), rel=1e-5)
    assert np.max(np.abs(np.array(ours.replay()) - ours.iterates)) <= 1e-6


def test_the_spectral_class_values_of_the_independent_check() -> None:
    """The values an independent SDP gave over the spectral class [-0.3, 0.7] (K = 3, step 0.5): ATC
    D-PSGD's 1.05380 was what extragradient got before."""
    assert worst_case(Extragradient, K=3, step_size=0.5, spectrum=(-0.3, 0.7), batch=2).value == \
        pytest.approx(2.21027, rel=1e-4)
    assert worst_case(GradientAtMixed, K=3, step_size=0.5, spectrum=(-0.3, 0.7)).value == \
        pytest.approx(1.09749, rel=1e-4)
    convex = worst_case(GradientAtMixed, K=3, step_size=0.5, spectrum=(-0.3, 0.7), function_class="convex",
                        criterion="function_value", initial="distance")
    assert convex.value == pytest.approx(0.15780, rel=1e-3)


class TwoRounds(algorithms.StepRule):
    name = "two_rounds_test"

    def init(self, ctx):
        return algorithms.State(x=ctx.start_state())

    def step(self, state, ctx):
        state.x = ctx.gossip(ctx.gossip(state.x) - ctx.step_size * ctx.sample(state.x))
        return state


class QueriesInInit(algorithms.StepRule):
    name = "queries_in_init_test"

    def init(self, ctx):
        return algorithms.State(x=ctx.start_state() - ctx.sample(ctx.start_state()))

    def step(self, state, ctx):
        state.x = ctx.gossip(state.x)
        return state


def test_the_engines_budget_is_the_compilers() -> None:
    """The engine refuses two rounds, two queries at batch 1 and queries in init; so does the compiler."""
    with pytest.raises(BudgetViolationError, match="second communication round"):
        worst_case(TwoRounds, K=2, W=W2)
    with pytest.raises(BudgetViolationError, match="queries per worker"):
        worst_case(Extragradient, K=2, W=W2)
    with pytest.raises(CapabilityError, match="init"):
        worst_case(QueriesInInit, K=2, W=W2)
    f = algorithms_problem()
    with pytest.raises(BudgetViolationError):
        algorithms.run(TwoRounds, f, W2, step_size=0.5, iterations=2)
    with pytest.raises(BudgetViolationError):
        algorithms.run(Extragradient, f, W2, step_size=0.5, iterations=2)
    algorithms.run(Extragradient, f, W2, step_size=0.5, iterations=2, batch=2)


def algorithms_problem():
    from decbounds import instances

    return instances.heterogeneous_quadratic(2, 3, 1.0, seed=0)


def test_a_result_holds_its_rule_when_another_takes_its_name() -> None:
    """Before: the second class named like the first replaced it, so the first result's replay raised and
    its worst W was the other rule's (above its own bound)."""
    class Faster(GradientAtMixed):  # inherits the name
        def step(self, state, ctx):
            state.x = ctx.gossip(state.x) - ctx.step_size * ctx.sample(state.x)
            return state

    first = worst_case(GradientAtMixed, K=2, step_size=0.5, spectrum=(-0.3, 0.7))
    second = worst_case(Faster, K=2, step_size=0.5, spectrum=(-0.3, 0.7))
    assert first.method == second.method and first.value != pytest.approx(second.value, rel=1e-3)
    assert np.max(np.abs(np.array(first.replay()) - first.iterates)) <= 1e-5
    assert worst_gossip_matrix(first).value <= first.value * (1 + 1e-5)
    assert first.spec.rule_class is GradientAtMixed and second.spec.rule_class is Faster


class NegativeEta(algorithms.StepRule):
    """A rule with an ``eta`` below 0 and an ``R`` that counts no rounds: nothing of DeTAG's applies."""

    name = "negative_eta_test"
    structural: ClassVar[dict] = {"R": 40}
    batchable: ClassVar[dict] = {"eta": -0.5}

    def init(self, ctx):
        return algorithms.State(x=ctx.start_state())

    def step(self, state, ctx):
        state.x = ctx.gossip(state.x) - ctx.step_size * (1 + ctx.hyper["eta"]) * ctx.sample(state.x)
        return state


def test_detags_checks_are_detags_declarations() -> None:
    """Before: eta >= 0 and R <= MAX_DETAG_ROUNDS were checked for any rule with parameters so named."""
    result = worst_case(NegativeEta, K=2, step_size=0.5, W=W2)
    assert result.params == {"R": 40, "eta": -0.5} and result.value > 0
    with pytest.raises(ValueError, match="MAX_ROUNDS_PER_ITERATION"):
        worst_case("detag", K=2, W=W2, R=pep.MAX_ROUNDS_PER_ITERATION + 1)
    assert worst_case("detag", K=2, W=W2).params["R"] == 2  # DeTAG's declared worst_case_defaults


def test_w_as_nested_lists_is_one_matrix() -> None:
    """``run`` takes W as a list of rows; so does worst_case (before: "W[0] must be a square matrix")."""
    assert worst_case("dgd_atc", K=2, W=W2.tolist()).value == pytest.approx(worst_case("dgd_atc", K=2,
                                                                                       W=W2).value)


class NormOfACopy(algorithms.StepRule):
    name = "norm_of_a_copy_test"

    def init(self, ctx):
        return algorithms.State(x=ctx.start_state())

    def step(self, state, ctx):
        g = ctx.sample(state.x)
        scale = 1.0 / (1.0 + np.linalg.norm(np.array(g)))  # a value read off a plain copy
        state.x = ctx.gossip(state.x) - ctx.step_size * scale * g
        return state


class BranchOnACopy(algorithms.StepRule):
    name = "branch_on_a_copy_test"

    def init(self, ctx):
        return algorithms.State(x=ctx.start_state())

    def step(self, state, ctx):
        g = ctx.sample(state.x)
        copy = np.asarray(g).copy()
        state.x = ctx.gossip(state.x) - ctx.step_size * (g if copy[0, 0, 0] > 0 else 2 * g)
        return state


class LinearCopy(algorithms.StepRule):
    name = "linear_copy_test"

    def init(self, ctx):
        return algorithms.State(x=ctx.start_state())

    def step(self, state, ctx):
        buffer = np.array(ctx.sample(state.x))  # a plain copy used linearly: still the rule's map
        state.x = ctx.gossip(state.x) - ctx.step_size * buffer
        return state


@pytest.mark.parametrize("rule", [NormOfACopy, BranchOnACopy])
def test_a_value_read_off_a_plain_copy_is_refused(rule) -> None:
    with pytest.raises(NotLinearError, match="plain copy"):
        worst_case(rule, K=2, W=W2)


def test_a_plain_copy_used_linearly_compiles() -> None:
    assert worst_case(LinearCopy, K=2, W=W2).value == pytest.approx(worst_case("dgd_cta", K=2, W=W2).value,
                                                                     rel=1e-6)
