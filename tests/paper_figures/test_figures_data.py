"""Figures 3 and 4: the runners behind the measured points (tuned T_eps, loss curves) on tiny inputs."""

from __future__ import annotations

import math
import types

import numpy as np
import pytest
from decbounds.paper_figures import heterogeneity, spectral_gap

from decbounds import algorithms


def _gap_point(algorithm: str, kappa: float, **extra: object) -> dict:
    point = {"figure": "spectral_gap_teps", "n": 12, "T_c": 2, "cap": 20_000, "step_factors": [1.0, 0.5],
             "kappa": kappa, "algorithm": algorithm}
    point.update(extra)
    return point


def test_tuned_t_eps_is_the_grid_minimum_and_respects_the_hop_bound() -> None:
    # Branch and bound (later groups capped at the best so far) must return the plain grid minimum.
    output = spectral_gap.tuned_t_eps(_gap_point("dsgt", 0.1))
    problem, W, lam = spectral_gap.path_instance(12, 2, 0.1)
    steps = [1 / problem.smoothness, 0.5 / problem.smoothness]
    brute = algorithms.run_batch("dsgt", problem, W, step_sizes=steps, iterations=20_000, tol=problem.epsilon)
    assert output["result"]["t_eps"] == min(r.t_eps for r in brute if r.t_eps is not None)
    assert output["result"]["t_eps"] >= problem.iteration_lower_bound == output["result"]["hop_lower_bound"]
    assert output["params"]["lam"] == pytest.approx(lam)
    assert output["params"]["lam"] == pytest.approx(1 - 0.1 * (2 / 3) * (1 - math.cos(math.pi / 12)))
    # varsigma0 of Cor. 2's instance in unscaled units: 2 eps sqrt(e (n / ceil(n/3) - 1)), eps = 1/2
    assert output["params"]["varsigma0"] == pytest.approx(math.sqrt(math.e * (12 / 4 - 1)))


def test_a_capped_grid_has_no_t_eps_and_says_where_each_run_stopped() -> None:
    output = spectral_gap.tuned_t_eps(_gap_point("dpsgd", 0.01, cap=50))
    result = output["result"]
    assert result["t_eps"] is None and result["capped"] and result["best"] is None
    assert [c["stopped_at"] for c in result["configs"]] == [50, 50]
    assert {c["status"] for c in result["configs"]} == {"max_iterations"}


def test_expansive_detag_gossip_is_not_tuned_over() -> None:
    # errata E18: on W_1 (lambda_n ~ -0.31) Alg. 3's start with its own eta expands disagreement at R = 1.
    _, W, lam = spectral_gap.path_instance(12, 2, 1.0)
    assert spectral_gap.gossip_contraction(W, lam, 1, None, "paper") > 1.0
    assert spectral_gap.gossip_contraction(W, lam, 1, None, "plain") < 1.0
    assert spectral_gap.gossip_contraction(W, lam, 1, 0.0, "paper") == pytest.approx(lam)
    output = spectral_gap.tuned_t_eps(_gap_point("detag", 1.0, step_factors=[1.0], R_fractions=[],
                                                 etas=[None, 0.0], starts=["paper"]))
    skipped = [c for c in output["result"]["configs"] if "skipped" in c]
    assert [c["hyper"]["eta"] for c in skipped] == [None]
    assert output["result"]["best"]["hyper"]["eta"] == 0.0


def test_detag_phase_lengths_start_near_the_guess() -> None:
    lam = 1 - 1e-4  # 1/sqrt(1 - lam) = 100
    lengths = spectral_gap.detag_phase_lengths(lam, [1 / 64, 1 / 32, 1 / 16, 1 / 10])
    assert sorted(lengths) == [1, 2, 3, 6, 10]
    assert lengths[0] == 3  # the guess 100/30
    assert spectral_gap.detag_phase_lengths(0.5, [1 / 8]) == [1]


def _curve_point(algorithm: str = "dpsgd", momentum: float = 0.9, **extra: object) -> dict:
    mode = heterogeneity.MODES["tiny"]
    problem = heterogeneity.digits(8, 0.0)
    point = heterogeneity.curve_point(mode, heterogeneity.Network("ring", "", "ring", 8), 0.0, momentum,
                                      algorithm, problem.smoothness)
    point.update(extra)
    return point


def test_tuned_curve_starts_at_f_x0_and_is_reproducible() -> None:
    first = heterogeneity.tuned_curve(_curve_point())
    again = heterogeneity.tuned_curve(_curve_point())
    assert first == again
    problem = heterogeneity.digits(8, 0.0)
    loss = first["result"]["loss"]
    mode = heterogeneity.MODES["tiny"]
    assert len(loss) == len(mode.tune_seeds) + len(mode.extra_seeds) >= 3  # bands over >= 3 seeds
    assert loss[0][0] == pytest.approx(float(problem.full_value(problem.x0)))
    assert first["result"]["checkpoints"][-1] == mode.iterations
    assert loss[0][-1] < loss[0][0] and loss[0] != loss[1]  # it trains; the seeds differ
    assert first["params"]["varsigma0"] == pytest.approx(problem.varsigma0())


def test_tuning_picks_the_least_final_loss_through_algorithms_tune() -> None:
    point = _curve_point(momentum=0.0, step_sizes=[0.5 / heterogeneity.digits(8, 0.0).smoothness,
                                                    1.0 / heterogeneity.digits(8, 0.0).smoothness,
                                                    200.0 / heterogeneity.digits(8, 0.0).smoothness])
    result = heterogeneity.tuned_curve(point)["result"]
    scores = {entry["step_size"]: entry["score"] for entry in result["tuning"]}
    assert len(scores) == 3 and result["step_size"] == min(scores, key=scores.get)
    # the winner's curve on the tuning seed is the run it was tuned on: its final loss is its score
    assert result["final_loss"][0] == pytest.approx(scores[result["step_size"]], rel=1e-9)
    score = heterogeneity.final_loss_score(heterogeneity.digits(8, 0.0))
    assert score(types.SimpleNamespace(diverged=True, x_hat=None)) == math.inf  # never the winner


def test_detag_is_tuned_coordinate_wise() -> None:
    result = heterogeneity.tuned_curve(_curve_point("detag", momentum=0.0))["result"]
    tried = [(entry["hyper"]["eta"], entry["hyper"]["R"]) for entry in result["tuning"]]
    steps = len(result["steps_tried"])  # the grid and its widening (`bracketed_tune`)
    assert steps > len(heterogeneity.MODES["tiny"].step_factors)  # a one-step grid is always widened
    assert tried[:steps] == [(0.0, 1)] * steps  # stage 1: steps at (eta, R) = (0, 1)
    assert tried[steps:] == [tuple(pair) for pair in heterogeneity.MODES["tiny"].detag_eta_r]  # stage 2
    best = min(result["tuning"], key=lambda entry: entry["score"])
    assert (result["hyper"]["eta"], result["hyper"]["R"]) == (best["hyper"]["eta"], best["hyper"]["R"])


@pytest.mark.parametrize(("algorithm", "momentum"), [("dpsgd", 0.9), ("dsgt", 0.0), ("centralized", 0.0)])
def test_the_step_grid_is_widened_until_the_winner_is_inside_it(algorithm: str, momentum: float) -> None:
    point = _curve_point(algorithm, momentum, extend_steps=3)
    grid = sorted(point["step_sizes"])
    result = heterogeneity.tuned_curve(point)["result"]
    tried = result["steps_tried"]
    scores = {entry["step_size"]: entry["score"] for entry in result["tuning"]}
    assert set(grid) <= set(tried) and result["step_size"] == min(scores, key=scores.get)
    # every widening step doubles the largest (or halves the smallest) step tried before it
    added = [step for step in tried if step not in grid]
    assert all(any(step == pytest.approx(2 * other) or step == pytest.approx(other / 2) for other in tried)
               for step in added)
    # either the winner lies strictly inside the steps tried, or every allowed widening was spent on it
    assert result["bracketed"] or len(added) == 3
    assert result["bracketed"] == (tried[0] < result["step_size"] < tried[-1])


def test_curve_checkpoints_and_modes_are_consistent() -> None:
    assert heterogeneity.curve_checkpoints(10, 4) == [0, 2, 5, 8, 10]
    with pytest.raises(ValueError, match="points"):
        heterogeneity.curve_checkpoints(10, 0)
    for mode in (*heterogeneity.MODES.values(), *spectral_gap.CURVE_MODES.values()):
        assert not set(mode.tune_seeds) & set(mode.extra_seeds)
        assert len(mode.tune_seeds) + len(mode.extra_seeds) >= 3  # bands over >= 3 seeds
    assert np.all(np.diff(spectral_gap.GAP_MODES["full"].kappas) < 0)
    assert min(spectral_gap.GAP_MODES["full"].kappas) <= 1e-4  # docs/errata.md E20


def test_branch_and_bound_tuning_gives_the_grid_minimum_of_both_outputs() -> None:
    # communication.measure_point tunes DeTAG over R groups with algorithms.tune(prune=True) and the
    # worker output again from the x-bar winner's value: both must equal the brute-force grid minima.
    from decbounds.paper_figures import communication

    point = next(p for p in communication.sweep_points("quick")["path n=24"] if p["series"] == "detag")
    point = {**point, "phases": [1, 2, 4]}
    result = communication.measure_point(point)["result"]
    problem, W = communication._instance(24, communication.CHAIN_LENGTH, None)
    steps = [fraction / problem.smoothness for fraction in point["step_fractions"]]
    search = communication.series_search("detag", 24, point["cap"])
    assert search is not None
    brute = [r for R in point["phases"]
             for r in algorithms.run_batch("detag", problem, W, step_sizes=steps, iterations=point["cap"],
                                           tol=problem.epsilon, R=R, **search[1])]
    assert result["t_eps"] == min(r.t_eps for r in brute if r.t_eps is not None)
    assert result["t_eps_local"] == min(r.t_eps_local for r in brute if r.t_eps_local is not None)
    assert result["t_eps_local"] >= result["t_eps"] and result["status"] == "converged"
    assert any(entry["stopped_at_incumbent"] for entry in result["grid"])  # the pruning did cut runs
    assert result["t_eps_local_of_best"] >= result["t_eps_local"]


def test_panels_sharing_a_point_each_get_its_record(tmp_path) -> None:
    # centralized SGD ignores kappa, so two kappa panels share its point; the sweep runs it once and both
    # panels must still get it (a point handed to one panel only is a StopIteration in spectral_gap (b)).
    mode = heterogeneity.CurveMode(iterations=4, points=2, tune_seeds=(0,), extra_seeds=(),
                                   step_factors=(1.0,), detag_eta_r=(), batch=2, partitions=(0.0,),
                                   momenta=(0.0,), algorithms=("centralized", "dpsgd"))
    panels = [(mode, heterogeneity.Network(f"k{kappa}", "", "ring", 4, kappa), 0.0, 0.0)
              for kappa in (None, 0.5)]
    first, second = heterogeneity.tuned_curves(panels, tmp_path / "r.jsonl", heterogeneity.SerialExecutor())
    assert first["centralized"] == second["centralized"]
    assert first["dpsgd"]["point"]["network"]["kappa"] is None
    assert second["dpsgd"]["point"]["network"]["kappa"] == 0.5
