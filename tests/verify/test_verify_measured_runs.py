"""Every measured run of the rule is audited (verify.run_audit): rules that leave the gossip class only
outside the class audit's window (late, at other sizes, in wider batches, under no auditor, after many
calls, on the measured instances, through the context's internals) fail with exit status 1, naming the term,
the size, the iteration, the worker and the configuration; honest rules still pass.

Each test runs a whole ``verify`` at tiny sizes; the cheaters stop at their first violation."""

from __future__ import annotations

import importlib
import pathlib
import sys
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pytest
from decbounds.verify.run_audit import OutsideTheClassError, RunAudit

from decbounds import algorithms, instances
from decbounds import verify as v

HERE = pathlib.Path(__file__).parent / "adversarial"
sys.path.insert(0, str(HERE))  # the rule files import each other by name, as a user's files would
honest = importlib.import_module("honest")
window = importlib.import_module("outside_the_window")

# the tiny mode with fewer points; the path reaches n = 48, where a run lasts past iteration 1024
SMALL = {"comm_sizes": (12, 24, 48), "kappas": (1.0, 0.1, 0.03), "sampling_seeds": 3,
         "broom_sizes": (6, 9, 12), "sigma2_points": ((4, 1, 8e-3), (4, 1, 4e-3)),
         "nb_points": ((4, 1, 8e-3), (4, 2, 8e-3))}


def _verify(rule, tmp_path):
    return v.verify(rule, mode="tiny", out=tmp_path, baselines=(), sizes=SMALL, progress=False)


@pytest.mark.parametrize(("rule", "fragment"), window.OUTSIDE_THE_WINDOW,
                         ids=[rule.name for rule, _ in window.OUTSIDE_THE_WINDOW])
def test_a_rule_outside_the_class_only_outside_the_audits_window_fails_named(tmp_path, rule, fragment):
    window.AfterManyCalls.calls[0] = 0
    report = _verify(rule, tmp_path)
    assert report.exit_status == 1
    class_audit = {c["key"] for c in report.audit["checks"]
                   if c["key"] != "measured_runs" and not c["passed"]}
    assert not class_audit, report.audit["checks"]  # the class audit's own window saw nothing
    failed = next(c for c in report.audit["checks"] if c["key"] == "measured_runs")
    detail = failed["detail"]
    assert detail.startswith(f"{rule.name}: outside the gossip class in a measured run: the "), detail
    assert " term at n=" in detail and "iteration " in detail and fragment in detail, detail
    assert report.verdicts["audit"].startswith("FAILED: ")
    assert "outside the gossip class in a measured run" in (tmp_path / "report.md").read_text()


def test_gossip_pga_every_1024_iterations_is_caught_by_the_flow_check_at_its_global_average(tmp_path):
    report = _verify(window.gossip_pga(1024), tmp_path)
    detail = next(c["detail"] for c in report.audit["checks"] if c["key"] == "measured_runs")
    assert "the communication term at n=48, iteration 1023, worker " in detail, detail
    assert "configuration 0 (step " in detail and "hops from S" in detail


@dataclass(eq=False)
class MomentumState(algorithms.State):
    m: np.ndarray  # the heavy-ball buffer, per worker


class MomentumDPSGD(honest.PaperDPSGD):
    """D-PSGD with heavy-ball momentum on each worker's own gradient: m <- beta m + g, x <- W x - alpha m."""

    name = "momentum_dpsgd"
    batchable: ClassVar[dict] = {}

    def init(self, ctx):
        return MomentumState(x=ctx.start_state(), m=ctx.zeros())

    def step(self, s, ctx):
        s.m = 0.5 * s.m + ctx.sample(s.x)
        s.x = ctx.gossip(s.x) - ctx.step_size * s.m
        return s


HONEST = [*honest.HONEST, MomentumDPSGD]


@pytest.mark.parametrize("rule", [pytest.param(rule, marks=() if rule is honest.PaperDPSGD else
                                               pytest.mark.slow) for rule in HONEST],
                         ids=[rule.name for rule in HONEST])
def test_honest_rules_pass_every_measured_run(tmp_path, rule):
    report = _verify(rule, tmp_path)
    assert report.exit_status == 0, report.verdicts["audit"]
    audited = [r["result"]["run_audit"] for r in report.records if r["point"]["algorithm"] == rule.name]
    assert audited and all(a["iterations"] > 0 for a in audited)
    flows = [a for a in audited if a["flow"]]
    assert len(flows) == 4 and all(a["replayed"] == a["iterations"] for a in flows)  # one whole run per term


@pytest.mark.slow
@pytest.mark.parametrize("name", ["dpsgd", "detag", "d2", "dsgt", "extra", "exact_diffusion"])
def test_the_package_rules_pass_every_measured_run(tmp_path, name):
    report = v.verify(name, mode="tiny", out=tmp_path, baselines=(), sizes=SMALL, progress=False)
    assert report.exit_status == 0, report.verdicts["audit"]


@pytest.mark.slow
def test_a_graph_rule_is_replayed_with_the_channel_it_ran_with(tmp_path):
    """DeFacto (a "graph" rule: its factors come from the run's channel) passes every measured run; a replay
    built from another channel had another number of factors and read as a change in the number of queries."""
    report = v.verify("defacto", mode="tiny", out=tmp_path, baselines=(), progress=False)
    assert report.exit_status == 0, report.verdicts["audit"]


def test_the_observer_rides_along_any_tune_call():
    """RunAudit as a plain observer of `algorithms.tune`: Gossip-PGA with period 1024 on a 48-path stopped at
    its first global average, the honest D-PSGD not."""
    f = instances.communication_instance(48, T_c=2)
    W = instances.gossip_matrix(f.graph(), "metropolis")
    for rule, caught in ((window.gossip_pga(1024), True), (honest.PaperDPSGD, False)):
        algorithms.register(rule)
        observer = RunAudit(f, flow=True)
        try:
            algorithms.tune(rule.name, observer.measured, W, [1.0 / f.smoothness], tol=0.9 * 2 * f.epsilon,
                            iterations=1100, observer=observer, stop="average")
        except OutsideTheClassError as exc:
            assert caught and str(exc).startswith("iteration 1023, worker "), exc
        else:
            assert not caught
            assert observer.iterations == observer.replayed > 1000
        finally:
            algorithms.unregister(rule.name)


class GroupedGossipPGA(window.GossipPGA):
    """Gossip-PGA whose period is a structural hyper-parameter: a tuning grid over it runs one engine batch
    per period, in turn."""

    name = "grouped_gossip_pga"
    batchable: ClassVar[dict] = {}
    structural: ClassVar[dict] = {"period": 1024}

    def step(self, s, ctx):
        s = window._Gossip.step(self, s, ctx)
        if (ctx.t + 1) % self.structural_values["period"] == 0:
            s.x = window._everyone(s.x)
        return s


def test_the_flow_check_replays_the_first_batch_of_a_tuning_grid():
    """The information-flow replay covers the whole run of the first engine batch the observer begins: a
    global average there is caught at iteration 1023; with two honest batches (periods past the run), the
    replay counts the first batch's iterations only."""
    f = instances.communication_instance(48, T_c=2)
    W = instances.gossip_matrix(f.graph(), "metropolis")
    algorithms.register(GroupedGossipPGA)
    try:
        name, steps = GroupedGossipPGA.name, [1.0 / f.smoothness]
        options = {"tol": 0.9 * 2 * f.epsilon, "iterations": 1100, "stop": "average"}
        observer = RunAudit(f, flow=True)
        with pytest.raises(OutsideTheClassError, match=r"^iteration 1023, worker \d+, .* hops from S"):
            algorithms.tune(name, observer.measured, W, steps, observer=observer,
                            groups=[{"period": 1024}, {"period": 4096}], **options)
        observer = RunAudit(f, flow=True)
        algorithms.tune(name, observer.measured, W, steps, observer=observer,
                        groups=[{"period": 4096}, {"period": 8192}], **options)
        assert observer.batches == 2 and observer.replayed > 1000
        assert observer.iterations == 2 * observer.replayed  # both batches audited, the first replayed
    finally:
        algorithms.unregister(GroupedGossipPGA.name)
