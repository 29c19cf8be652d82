"""The engine's observation hook (`algorithms.Observer`): what each step queried and communicated, and the
state after it, through run, run_batch and tune; an observer that raises stops the run; observing changes no
bits."""

from __future__ import annotations

import numpy as np
import pytest
from support import DiagonalQuadratic, ring_W

from decbounds import algorithms, instances

N, D = 6, 3


class Recorder:
    """Keeps every RunInfo and Observation (with a copy of the models)."""

    def __init__(self, stop_at: int | None = None) -> None:
        self.runs: list[algorithms.RunInfo] = []
        self.seen: list[algorithms.Observation] = []
        self.models: list[np.ndarray] = []
        self.stop_at = stop_at

    def begin(self, run: algorithms.RunInfo) -> None:
        self.runs.append(run)

    def observe(self, observation: algorithms.Observation) -> None:
        if observation.t == self.stop_at:
            raise KeyboardInterrupt("stop here")
        self.seen.append(observation)
        self.models.append(observation.state.x.copy())


def test_dpsgd_is_observed_step_by_step():
    f = DiagonalQuadratic(N, D, seed=4)
    W = ring_W(N)
    seen = Recorder()
    result = algorithms.run("dpsgd", f, W, step_size=0.1, iterations=7, batch=2, seed=3, observer=seen)
    (run,) = seen.runs
    assert (run.algorithm, run.n, run.k, run.d, run.batch) == ("dpsgd", N, 1, D, 2)
    assert run.seeds == (3,) and run.step_sizes == (0.1,) and run.problem is f
    assert isinstance(run.gossip, instances.GossipMatrix) and isinstance(run.rule, algorithms.StepRule)
    assert [o.t for o in seen.seen] == list(range(7))
    for o in seen.seen:
        assert len(o.queries) == 1 and o.queries[0].shape == (N, 1, D)
        assert o.evaluations == 2 and o.rounds == ("gossip",)
    # the query of step t is the model after step t - 1 (D-PSGD samples at its models), a copy
    assert np.array_equal(seen.seen[3].queries[0], seen.models[2])
    assert seen.seen[3].queries[0] is not seen.seen[4].queries[0]
    assert np.allclose(seen.models[-1][:, 0].mean(axis=0), result.x_hat, rtol=1e-14, atol=0)


def test_observing_changes_no_bits():
    f = DiagonalQuadratic(N, D, seed=4)
    plain = algorithms.run_batch("dsgt", f, ring_W(N), step_sizes=[0.1, 0.05], iterations=50, tol=1e-3)
    observed = algorithms.run_batch("dsgt", f, ring_W(N), step_sizes=[0.1, 0.05], iterations=50, tol=1e-3,
                                    observer=Recorder())
    for a, b in zip(plain, observed, strict=True):
        assert a.grad_norms == b.grad_norms and a.t_eps == b.t_eps and np.array_equal(a.x_hat, b.x_hat)


@pytest.mark.parametrize(("name", "kind"),
                         [("centralized", "exact"), ("defacto", "mix"), ("detag", "gossip")])
def test_rounds_say_what_was_sent(name, kind):
    seen = Recorder()
    algorithms.run(name, DiagonalQuadratic(N, D, seed=4), ring_W(N), step_size=0.05, iterations=12,
                   observer=seen)
    rounds = {r for o in seen.seen for r in o.rounds}
    assert rounds == {kind}
    assert all(len(o.rounds) <= 1 and o.evaluations == sum(1 for _ in o.queries) for o in seen.seen)


def test_an_observer_that_raises_stops_the_run():
    seen = Recorder(stop_at=4)
    with pytest.raises(KeyboardInterrupt, match="stop here"):
        algorithms.run("dpsgd", DiagonalQuadratic(N, D), ring_W(N), step_size=0.1, iterations=20,
                       observer=seen)
    assert len(seen.seen) == 4


def test_begin_once_per_engine_run_in_run_batch_and_tune():
    f = DiagonalQuadratic(N, D, seed=4)
    seen = Recorder()
    algorithms.run_batch("detag", f, ring_W(N), step_sizes=[0.1], iterations=8, R=[2, 4], observer=seen)
    assert [run.hypers[0]["R"] for run in seen.runs] == [2, 4]  # R is structural: one batch each
    tuned = Recorder()
    algorithms.tune("dpsgd", f, ring_W(N), grid=[0.1, 0.05], tol=1e-2, iterations=30, observer=tuned)
    assert len(tuned.runs) == 1 and tuned.runs[0].k == 2


def test_callback_is_an_observer_beside_the_observer():
    """callback= runs on the hook (after init, t = 0, and after each step, t = steps done), after the
    observer of the same step; alone it has the engine record no queries."""
    from decbounds.algorithms.observation import CallbackObserver

    f = DiagonalQuadratic(N, D, seed=4)
    order: list[tuple[str, int]] = []

    class Tracing(Recorder):
        def observe(self, observation: algorithms.Observation) -> None:
            order.append(("observe", observation.t))
            super().observe(observation)

    def callback(t, state, ctx):
        order.append(("callback", t))

    seen = Tracing()
    algorithms.run("dpsgd", f, ring_W(N), step_size=0.1, iterations=3, callback=callback, observer=seen)
    assert order == [("callback", 0), ("observe", 0), ("callback", 1), ("observe", 1), ("callback", 2),
                     ("observe", 2), ("callback", 3)]
    assert all(len(o.queries) == 1 for o in seen.seen)  # the observer still reads the queries
    alone = CallbackObserver(callback, context=None)  # type: ignore[arg-type]
    assert alone.reads_steps is False and CallbackObserver(callback, None, seen).reads_steps  # type: ignore[arg-type]


def test_check_size_is_a_deprecated_name_of_check_n_by_n():
    from decbounds.algorithms import step_rule

    with pytest.warns(DeprecationWarning, match="check_n_by_n"):
        assert step_rule.check_size is step_rule.check_n_by_n
