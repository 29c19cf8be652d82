"""Computed worst cases beyond the non-convex class and over time-varying gossip:
the convex and strongly convex classes against PEPit, DGD's linear rate against the known contraction, the
order between classes and between static and time-varying gossip, the worst W back, step sequences, starts.

Every SDP here is small (N = 2, K <= 8 on the exact class, K <= 3 on the spectral one).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from decbounds.pep.api import worst_case, worst_gossip_matrix
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import pepit_centralized

J2 = np.full((2, 2), 0.5)
_slow = settings(max_examples=4, deadline=None, derandomize=True,
                 suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.filterwarnings("ignore:Solution may be inaccurate")  # PEPit's own solve; its value is compared
@pytest.mark.parametrize(("method", "function_class", "mu"), [
    ("gd", "convex", 0.0), ("gd", "strongly_convex", 0.1), ("delayed", "convex", 0.0),
    ("delayed", "strongly_convex", 0.1),
])
def test_centralized_reduction_equals_pepit(method: str, function_class: str, mu: float) -> None:
    """W = 11^T/N: adapt-then-combine DGD is gradient descent on f, and DeTAG with R = 1, eta = 0 is gradient
    descent with the tracker's one-phase-stale gradient; both equal PEPit's value for K = 1..8."""
    pytest.importorskip("PEPit")
    kwargs = {} if method == "gd" else {"R": 1, "eta": 0.0}
    name = "dgd_atc" if method == "gd" else "detag"
    for K in range(1 if method == "gd" else 2, 9):
        ours = worst_case(name, K, W=J2, function_class=function_class, mu=mu, initial="distance",
                          criterion="distance" if mu else "function_value", **kwargs)
        assert ours.status == "optimal"
        assert ours.value == pytest.approx(pepit_centralized(method, K, mu), rel=1e-6), K


def test_convex_gradient_descent_matches_the_closed_form() -> None:
    """f(x^K) - f* <= L R^2 / (4K + 2) at step 1/L, tight (Drori & Teboulle 2014)."""
    for K in (1, 3):
        r = worst_case("dgd_atc", K, W=J2, function_class="convex", criterion="function_value",
                       initial="distance")
        assert r.value == pytest.approx(1 / (4 * K + 2), rel=1e-6)


@pytest.mark.parametrize("method", ["dgd_atc", "dgd_cta"])
def test_strongly_convex_dgd_contracts_at_the_gradient_step_rate(method: str) -> None:
    """With a common minimizer (heterogeneity 0 at x*), ||X^{k+1} - 1 x*|| <= rho ||X^k - 1 x*||,
    rho = max(|1 - alpha mu|, |1 - alpha L|) (each local step contracts, ||W|| <= 1 fixes 1 x*), tight on
    f_i = f quadratic: the worst ||x-bar^K - x*||^2 over the spectral class is rho^(2K) R^2, and its ratio
    over K is the linear rate rho^2."""
    mu, alpha = 0.2, 0.8
    rho = max(abs(1 - alpha * mu), abs(1 - alpha))
    values = [worst_case(method, K, step_size=alpha, spectrum=(-0.5, 0.5), function_class="strongly_convex",
                         mu=mu, criterion="distance", initial="distance", heterogeneity="optimum",
                         varsigma=0.0).value for K in (1, 2, 3)]
    assert values == pytest.approx([rho ** (2 * K) for K in (1, 2, 3)], rel=1e-5)
    assert values[2] / values[1] == pytest.approx(rho**2, rel=1e-5)


@_slow
@given(method=st.sampled_from(["dgd_cta", "dsgt", "extra"]), lo=st.floats(-0.5, 0.3),
       width=st.floats(0.05, 0.5), alpha=st.floats(0.3, 1.0))
def test_convex_class_is_below_the_nonconvex_class(method: str, lo: float, width: float,
                                                    alpha: float) -> None:
    """Convex f_i are non-convex f_i, and f(x0) - f(x-bar^K) <= f(x0) - f*: the convex worst case of the
    gradient criterion can only be lower; strong convexity only lower still."""
    kwargs = {"step_size": alpha, "spectrum": (lo, lo + width), "K": 2}
    nonconvex = worst_case(method, **kwargs).value
    convex = worst_case(method, function_class="convex", **kwargs).value
    strongly = worst_case(method, function_class="strongly_convex", mu=0.2, **kwargs).value
    assert strongly <= convex * (1 + 1e-5) + 1e-7 and convex <= nonconvex * (1 + 1e-5) + 1e-7


@pytest.mark.parametrize("criterion", ["gradient", "worker_gradient", "function_value", "distance",
                                       "consensus"])
def test_every_criterion_replays_and_meets_its_interpolation(criterion: str) -> None:
    L, mu = 1.0, 0.1
    r = worst_case("dsgt", 2, L=L, step_size=0.6, spectrum=(-0.3, 0.7), function_class="strongly_convex",
                   mu=mu, criterion=criterion, initial="distance", heterogeneity="optimum")
    assert r.status == "optimal" and r.value > 0
    scale = max(1.0, float(np.max(np.abs(r.iterates))))
    assert np.max(np.abs(np.array(r.replay()) - r.iterates)) <= 1e-5 * scale
    c = 1 / (2 * (1 - mu / L))
    for x, g, f in zip(r.points, r.gradients, r.values, strict=True):  # Taylor et al. 2017, Thm. 4
        for a in range(len(x)):
            for b in range(len(x)):
                dx, dg = x[a] - x[b], g[a] - g[b]
                slack = f[a] - f[b] - g[b] @ dx - c * (dg @ dg / L + mu * dx @ dx - 2 * mu / L * dg @ dx)
                assert slack >= -1e-5 * scale**2
    assert np.allclose(np.mean([g[0] for g in r.gradients], axis=0), 0, atol=1e-6)  # grad f(x*) = 0
    assert r.optimum is not None
    # the criterion at the recovered point
    xbar = r.iterates[-1].mean(axis=0)
    if criterion == "distance":
        assert r.value == pytest.approx(float(np.sum((xbar - r.optimum) ** 2)), rel=1e-4, abs=1e-7)
    if criterion == "consensus":
        assert r.value == pytest.approx(float(np.mean(np.sum((r.iterates[-1] - xbar) ** 2, axis=1))),
                                        rel=1e-4, abs=1e-7)


def test_unequal_starts_contain_the_equal_start() -> None:
    kwargs = {"step_size": 0.5, "spectrum": (0.0, 0.6), "function_class": "convex", "criterion": "distance",
              "initial": "distance", "heterogeneity": "optimum"}
    equal = worst_case("dgd_atc", 3, **kwargs)
    unequal = worst_case("dgd_atc", 3, starts="unequal", **kwargs)
    assert unequal.value >= equal.value * (1 - 1e-6)
    assert not np.allclose(unequal.iterates[0][0], unequal.iterates[0][1])
    scale = max(1.0, float(np.max(np.abs(unequal.iterates))))
    assert np.max(np.abs(np.array(unequal.replay()) - unequal.iterates)) <= 1e-5 * scale


def test_step_sequences_constant_list_and_callable() -> None:
    constant = worst_case("dsgt", 3, step_size=0.5, spectrum=(0.0, 0.5))
    as_list = worst_case("dsgt", 3, step_size=[0.5, 0.5, 0.5], spectrum=(0.0, 0.5))
    assert as_list.value == pytest.approx(constant.value, rel=1e-6) and as_list.step_size == 0.5
    diminishing = worst_case("dsgt", 3, step_size=lambda k: 0.5 / math.sqrt(k + 1), spectrum=(0.0, 0.5))
    assert diminishing.step_size is None and diminishing.steps[2] == pytest.approx(0.5 / math.sqrt(3))
    scale = max(1.0, float(np.max(np.abs(diminishing.iterates))))
    assert np.max(np.abs(np.array(diminishing.replay()) - diminishing.iterates)) <= 1e-5 * scale
    # gradient descent with steps 1, 1/2 on the convex class: a different value than the constant 1
    varying = worst_case("dgd_atc", 2, step_size=[1.0, 0.5], W=J2, function_class="convex",
                         criterion="function_value", initial="distance")
    assert varying.value != pytest.approx(0.1, rel=1e-3)


# -- the worst W back --------------------------------------------------------------------------------------

def test_worst_gossip_matrix_attains_the_relaxed_value() -> None:
    relaxed = worst_case("dgd_atc", 3, spectrum=(0.0, 0.6))
    exact = worst_gossip_matrix(relaxed)
    assert exact.gossip == "exact" and exact.W.shape == (2, 2)
    assert np.allclose(exact.W.sum(axis=1), 1) and np.allclose(exact.W, exact.W.T)
    assert exact.value == pytest.approx(relaxed.value, rel=1e-5)  # attained (measured: 100.0000%)


def test_worst_gossip_matrix_on_three_agents_stays_below_the_relaxation() -> None:
    relaxed = worst_case("dsgt", 2, spectrum=(-0.2, 0.6), N=3, function_class="convex")
    exact = worst_gossip_matrix(relaxed)
    off = np.sort(np.linalg.eigvalsh(exact.W - np.full((3, 3), 1 / 3)))[[0, 2]]
    assert -0.2 - 1e-7 <= off[0] and off[1] <= 0.6 + 1e-7
    assert exact.value <= relaxed.value * (1 + 1e-5)
    with pytest.raises(ValueError, match="static spectral"):
        worst_gossip_matrix(exact)


# -- time-varying gossip -----------------------------------------------------------------------------------

@_slow
@given(method=st.sampled_from(["dgd_cta", "dgd_atc", "dsgt", "extra"]), lo=st.floats(-0.6, 0.4),
       width=st.floats(0.05, 0.5), K=st.integers(2, 3))
def test_time_varying_worst_case_is_at_least_the_static_one(method: str, lo: float, width: float,
                                                            K: int) -> None:
    """A constant sequence is one of the sequences, and the per-round LMIs are principal parts of the static
    one: the time-varying worst case over [lo, hi] is >= the static worst case over [lo, hi]."""
    spectrum = (lo, min(1.0, lo + width))
    static = worst_case(method, K, step_size=0.8, spectrum=spectrum)
    varying = worst_case(method, K, step_size=0.8, spectrum=spectrum, time_varying=True)
    assert varying.time_varying and varying.sdp_size["lmi"] <= static.sdp_size["lmi"]
    assert varying.value >= static.value * (1 - 1e-5) - 1e-7


def test_time_varying_exact_and_per_round_spectra() -> None:
    W_a = np.array([[0.7, 0.3], [0.3, 0.7]])
    W_b = np.array([[0.2, 0.8], [0.8, 0.2]])
    static = worst_case("dsgt", 3, step_size=0.5, W=W_a)
    constant = worst_case("dsgt", 3, step_size=0.5, W=[W_a, W_a, W_a])
    assert constant.time_varying and constant.W.shape == (3, 2, 2)
    assert constant.value == pytest.approx(static.value, rel=1e-6)
    alternating = worst_case("dsgt", 3, step_size=0.5, W=[W_a, W_b, W_a])
    scale = max(1.0, float(np.max(np.abs(alternating.iterates))))
    assert np.max(np.abs(np.array(alternating.replay()) - alternating.iterates)) <= 1e-5 * scale
    # per-round classes containing each round's matrix bound that sequence from above
    per_round = worst_case("dsgt", 3, step_size=0.5, spectrum=[(0.3, 0.5), (-0.7, -0.5), (0.3, 0.5)])
    assert per_round.value >= alternating.value * (1 - 1e-5)
    with pytest.raises(ValueError, match=r"one .* per gossip round"):
        worst_case("dsgt", 3, spectrum=[(0.0, 0.5)] * 2)
    with pytest.raises(ValueError, match="one matrix per gossip round"):
        worst_case("dsgt", 3, W=[W_a, W_b])


def test_time_varying_accepts_a_gossip_schedule() -> None:
    from decbounds.instances import schedules

    schedule = schedules.schedule_from_sequence([np.array([[0.7, 0.3], [0.3, 0.7]]),
                                                 np.array([[0.2, 0.8], [0.8, 0.2]])])
    from_schedule = worst_case("dgd_cta", 3, step_size=0.5, W=schedule)
    assert from_schedule.time_varying and from_schedule.W.shape == (3, 2, 2)
    assert np.allclose(from_schedule.W[2], from_schedule.W[0])


# -- bad input ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("kwargs", "error", "field"), [
    ({"criterion": "function_value"}, ValueError, "criterion"),
    ({"initial": "distance"}, ValueError, "initial"),
    ({"heterogeneity": "optimum"}, ValueError, "heterogeneity"),
    ({"function_class": "convex", "starts": "unequal"}, ValueError, "initial='distance'"),
    ({"function_class": "strongly_convex"}, ValueError, "mu"), ({"mu": 0.1}, ValueError, "mu"),
    ({"function_class": "strongly_convex", "mu": 1.0}, ValueError, "mu"),
    ({"function_class": "concave"}, ValueError, "function_class"),
    ({"step_size": [0.5]}, ValueError, "step_size"),
    ({"step_size": [0.5, -1.0]}, ValueError, r"step_size\[1\]"),
    ({"step_size": lambda k: 0.0}, ValueError, r"step_size\(0\)"),
    ({"step_size": "1"}, TypeError, "step_size"),
    ({"radius": 0.0}, ValueError, "radius"),
    ({"spectrum": [(0.0, 0.5), (0.5, 0.2)]}, ValueError, r"spectrum\[1\]"),
    ({"spectrum": None, "W": J2, "time_varying": True}, ValueError, "time_varying"),
    ({"time_varying": "yes"}, TypeError, "time_varying"),
])
def test_bad_input_names_the_field(kwargs: dict, error: type, field: str) -> None:
    base = {"K": 2, "spectrum": (0.0, 0.5)}
    base.update(kwargs)
    with pytest.raises(error, match=field):
        worst_case("dgd_cta", **base)


def test_cli_classes_criteria_time_varying_and_worst_W(capsys: pytest.CaptureFixture[str]) -> None:
    import argparse

    from decbounds.pep.cli import add_parser

    def cli(argv: list[str]) -> int:
        parser = argparse.ArgumentParser()
        add_parser(parser.add_subparsers(dest="command"))
        args = parser.parse_args(["worst-case", *argv])
        return args.func(args)

    assert cli(["dgd_atc", "--K", "2", "--lam-min", "0", "--lam-max", "0", "--class", "convex",
                "--criterion", "function_value", "--initial", "distance"]) == 0
    assert "f(x-bar^K) - f*: 0.1" in capsys.readouterr().out  # L R^2 / (4K + 2)
    assert cli(["dgd_atc", "--K", "2", "--lam-min", "0", "--lam-max", "0.6", "--worst-W"]) == 0
    assert "worst W found" in capsys.readouterr().out
    assert cli(["dsgt", "--K", "2", "--lam-min", "0", "--lam-max", "0.6", "--time-varying",
                "--steps", "0.5,0.25"]) == 0
    out = capsys.readouterr().out
    assert "time-varying" in out and "step = 0.5,0.25" in out
    assert cli(["dsgt", "--K", "2", "--lam-min", "0", "--lam-max", "0.6", "--criterion", "distance"]) == 2
    assert "criterion" in capsys.readouterr().err
