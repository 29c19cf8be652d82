"""`algorithms.tune` returns one `Result` (the winner's run) with the tuning attached as a `Grid`: the median
score over seeds, every run, the excluded steps; scipy's ``OptimizeResult`` shape, no second result type."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from decbounds.algorithms import Grid, Result
from support import DiagonalQuadratic, NoisyOracle, ring_W

from decbounds import algorithms

N, D = 6, 3
SEEDS = [0, 1, 2]


@pytest.fixture(scope="module")
def noisy():
    """A noisy quadratic on which the seeds reach tol at different iterations (the median matters)."""
    return NoisyOracle(DiagonalQuadratic(N, D), 0.05), ring_W(N)


@pytest.fixture(scope="module")
def tuned(noisy):
    oracle, W = noisy
    return algorithms.tune("dpsgd", oracle, W, tol=1e-2, iterations=2000, seeds=SEEDS, stop="average")


def test_tune_returns_a_result_with_the_grid_attached(tuned):
    assert isinstance(tuned, Result) and isinstance(tuned.grid, Grid)
    assert not hasattr(algorithms, "TuneResult") and "Grid" in algorithms.__all__
    grid = tuned.grid
    assert len(grid.runs) == len(grid.limits) == 8 * len(SEEDS) and grid.seeds == tuple(SEEDS)
    # the result is the winner's run on its first seed: every field but the grid is that run's own
    own = grid.runs[grid.winner]
    assert grid.winner_runs[0] is own and [r.seed for r in grid.winner_runs] == SEEDS
    assert (tuned.t_eps, tuned.step_size, tuned.seed, tuned.status, tuned.message, tuned.hyper) == (
        own.t_eps, own.step_size, own.seed, own.status, own.message, own.hyper)
    assert own.grid is None and all(run.grid is None for run in grid.runs)  # no cycles


def test_the_score_is_the_median_over_the_winners_seeds_and_the_least_one(tuned):
    grid = tuned.grid
    winner_t_eps = [run.t_eps for run in grid.winner_runs]
    assert grid.score == float(np.median(winner_t_eps)) and None not in winner_t_eps
    assert grid.score != tuned.t_eps  # on this instance the seeds differ: t_eps is the first seed's only
    medians = [float(np.median([math.inf if r.t_eps is None else r.t_eps for r in grid.runs[i : i + 3]]))
               for i in range(0, len(grid.runs), 3)]
    assert grid.score == min(medians) and grid.winner == 3 * medians.index(min(medians))  # ties: first run


def test_no_configuration_reaching_tol_is_a_result_that_says_so(noisy):
    oracle, W = noisy
    result = algorithms.tune("dpsgd", oracle, W, tol=1e-2, iterations=3, seeds=[0, 1])
    assert isinstance(result, Result) and result.grid.score is None and result.grid.winner is None
    assert result.grid.winner_runs == () and len(result.grid.runs) == 16
    first = result.grid.runs[0]
    assert (result.step_size, result.seed, result.t_eps, result.status) == (
        first.step_size, first.seed, first.t_eps, first.status)
    assert result.message.startswith("none of the 8 configurations reached a finite median score over 2 "
                                     "seeds (tol=0.01, iterations=3); the first configuration, seed 0: ")
    assert result.message.endswith(first.message)
    with pytest.raises(ValueError, match="no configuration"):
        from decbounds.paper_figures.sweep import winner_index
        winner_index(result)


def test_an_incumbent_nobody_beats_leaves_no_winner(noisy):
    oracle, W = noisy
    result = algorithms.tune("dpsgd", oracle, W, tol=1e-2, iterations=2000, seeds=[0], stop="average",
                             incumbent=1.0)
    assert result.grid.score is None and "below the incumbent 1" in result.message


def test_groups_and_pruning_record_the_winners_group_and_the_caps(noisy):
    oracle, W = noisy
    steps = [0.5 / oracle.f.smoothness, 0.25 / oracle.f.smoothness]
    groups = [{"momentum": 0.0}, {"momentum": 0.5}]
    result = algorithms.tune("dpsgd", oracle, W, steps, tol=1e-2, iterations=2000, seeds=[0], stop="average",
                             groups=groups, prune=True)
    grid = result.grid
    assert result.hyper["momentum"] == groups[grid.winner_group]["momentum"]
    assert grid.limits[:2] == (2000, 2000) and grid.limits[2:] == (math.floor(min(
        r.t_eps for r in grid.runs[:2] if r.t_eps is not None)),) * 2


def test_repr_is_one_short_line(tuned):
    text = repr(tuned)
    assert "\n" not in text and f"grid=(24 runs over 3 seeds, score {tuned.grid.score:.6g})" in text
    score, winner = tuned.grid.score, tuned.grid.winner
    assert repr(tuned.grid) == f"Grid(24 runs over 3 seeds, score {score:.6g}, winner {winner})"
    assert len(repr(tuned.grid)) < 80 and "grid=" not in repr(tuned.grid.runs[0])


def test_records_carry_the_grid_only_for_a_tuned_result(tuned):
    record = json.loads(json.dumps(tuned.to_record()))
    assert record["grid"]["score"] == tuned.grid.score and record["grid"]["winner"] == tuned.grid.winner
    assert len(record["grid"]["runs"]) == 24 and record["grid"]["runs"][0]["limit"] == 2000
    assert "grid" not in tuned.grid.runs[0].to_record()
    own = tuned.grid.winner_runs[0].to_record()
    assert {key: value for key, value in record.items() if key != "grid"} == own


def test_grid_refuses_inconsistent_fields(tuned):
    runs = tuned.grid.runs[:3]
    with pytest.raises(ValueError, match="limits"):
        Grid(score=1.0, runs=runs, limits=(1,), seeds=(0, 1, 2), winner=0)
    with pytest.raises(ValueError, match="winner and score"):
        Grid(score=None, runs=runs, limits=(1, 1, 1), seeds=(0, 1, 2), winner=0)
    with pytest.raises(ValueError, match="first seed"):
        Grid(score=1.0, runs=runs, limits=(1, 1, 1), seeds=(0, 1, 2), winner=1)
    with pytest.raises(ValueError, match="every configuration"):
        Grid(score=None, runs=runs[:2], limits=(1, 1), seeds=(0, 1, 2))
