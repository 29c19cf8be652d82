"""`tune(race=True)`: branch and bound in time finds the winner, its score and its runs that running every
configuration to the cap finds, and costs fewer iterations."""

from __future__ import annotations

import math

import numpy as np
import pytest
from decbounds.algorithms.tune import _Race
from hypothesis import given, settings
from hypothesis import strategies as st

from decbounds import algorithms, instances, oracles

SEEDS = [0, 1, 2, 3]  # an even count: the median is the mean of two runs


def _winner(values: np.ndarray, per_config: int, ranks: np.ndarray, incumbent: float | None
            ) -> tuple[float | None, int | None]:
    """`tune`'s rule: blocks in rank order, the least finite median, ties to the first (the incumbent)."""
    best, winner = incumbent, None
    for b in np.argsort(ranks, kind="stable"):
        median = float(np.median(values[b * per_config : (b + 1) * per_config]))
        if math.isfinite(median) and (best is None or median < best):
            best, winner = median, int(b)
    return (None, None) if winner is None else (best, winner)


def _simulate(times: list[int], diverges: list[bool], per_config: int, ranks: np.ndarray,
              incumbent: float | None, cap: int) -> tuple[np.ndarray, int]:
    """The engine's loop with a `_Race` as settle: each run reaches T_eps (or diverges) at its time; the
    values recorded (inf where none) and the iterations run."""
    race = _Race(per_config, ranks, incumbent, cap)
    k = len(times)
    t_eps, closed = np.full(k, -1, dtype=np.int64), np.zeros(k, dtype=bool)
    stop_at = cap
    for t in range(cap + 1):
        changed = False
        for j in range(k):
            if not closed[j] and times[j] == t:
                closed[j], changed = True, True
                if not diverges[j]:
                    t_eps[j] = t
        if t == stop_at or closed.all():
            break
        if t == 0 or changed:
            stop_at = min(cap, max(t + 1, race(t, t_eps, closed)))
    return np.where(t_eps >= 0, t_eps.astype(float), math.inf), t


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 4), st.integers(1, 4), st.integers(1, 30), st.data())
def test_the_race_stops_where_no_later_finish_changes_the_winner(per_config, blocks, cap, data):
    k = per_config * blocks
    times = data.draw(st.lists(st.integers(0, cap + 5), min_size=k, max_size=k))
    diverges = data.draw(st.lists(st.booleans(), min_size=k, max_size=k))
    ranks = np.asarray(data.draw(st.permutations(range(blocks))))
    incumbent = data.draw(st.one_of(st.none(), st.integers(0, 2 * cap).map(lambda v: v / 2)))
    truth = np.array([math.inf if d or t > cap else float(t) for t, d in zip(times, diverges, strict=True)])
    recorded, _ = _simulate(times, diverges, per_config, ranks, incumbent, cap)
    best, winner = _winner(truth, per_config, ranks, incumbent)
    assert _winner(recorded, per_config, ranks, incumbent) == (best, winner)
    if winner is not None:  # the winner's runs are complete
        rows = slice(winner * per_config, (winner + 1) * per_config)
        assert np.array_equal(recorded[rows], truth[rows])


def test_the_race_stops_one_iteration_after_the_first_finish_without_seeds():
    recorded, stopped = _simulate([7, 30, 12], [False] * 3, 1, np.arange(3), None, 100)
    assert stopped == 8 and recorded.tolist() == [7.0, math.inf, math.inf]


@pytest.fixture(scope="module")
def noisy():
    """Setting 1's probabilistic zero chain on a 4-path: the seeds reach tol at different iterations."""
    problem = instances.sampling_instance(4, T_c=3, p=0.02)
    W = instances.gossip_matrix(instances.topology("path", 4), "metropolis")
    return oracles.ZeroChainOracle(problem), W


@pytest.mark.parametrize("groups", [
    [{"momentum": 0.0}, {"momentum": 0.5}, {"momentum": 0.9}],  # batchable: one batch side by side
    [{"momentum": 0.9}, {"momentum": 0.0}],
])
def test_race_finds_the_whole_grids_winner_for_less(noisy, groups):
    oracle, W = noisy
    f = oracle.f
    steps = [1.0 / f.smoothness, 0.5 / f.smoothness]
    options = {"tol": 1.8 * f.epsilon, "iterations": 5000, "seeds": SEEDS, "stop": "average",
               "groups": groups}
    whole = algorithms.tune("dpsgd", oracle, W, steps, **options)
    raced = algorithms.tune("dpsgd", oracle, W, steps, race=True, **options)
    assert (raced.grid.score, raced.grid.winner, raced.grid.winner_group) == (
        whole.grid.score, whole.grid.winner, whole.grid.winner_group)
    assert [r.t_eps for r in raced.grid.winner_runs] == [r.t_eps for r in whole.grid.winner_runs]
    assert [(r.step_size, r.hyper["momentum"], r.seed) for r in raced.grid.runs] == [
        (r.step_size, r.hyper["momentum"], r.seed) for r in whole.grid.runs]  # the groups' order kept
    assert sum(r.iterations for r in raced.grid.runs) < sum(r.iterations for r in whole.grid.runs)


def test_race_over_structural_groups_runs_them_in_turn():
    f = instances.heterogeneous_quadratic(8, 4, 1.0, seed=0)
    W = instances.gossip_matrix(instances.topology("ring", 8), "metropolis")
    options = {"tol": 1e-4, "iterations": 4000, "stop": "average", "groups": [{"R": 3}, {"R": 1}],
               "gossip": ["two_tap", "chebyshev"], "start": "plain", "eta": None}
    whole = algorithms.tune("detag", f, W, [0.5 / f.smoothness], **options)
    raced = algorithms.tune("detag", f, W, [0.5 / f.smoothness], race=True, **options)
    assert (raced.grid.score, raced.grid.winner, raced.hyper) == (whole.grid.score, whole.grid.winner,
                                                                  whole.hyper)
    assert len(raced.grid.runs) == len(whole.grid.runs) == 4


def test_race_refuses_a_score_it_cannot_settle_and_a_batch_it_cannot_see_whole(noisy):
    oracle, W = noisy
    with pytest.raises(ValueError, match="default score"):
        algorithms.tune("dpsgd", oracle, W, tol=1e-2, iterations=10, race=True,
                        score=lambda r: 0.0)
    with pytest.raises(ValueError, match="settle needs the configurations in one batch"):
        algorithms.run_batch("detag", oracle, W, step_sizes=[0.1], iterations=10, R=[1, 2],
                             settle=lambda t, t_eps, closed: 10)
