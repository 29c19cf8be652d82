"""The class audit by what a rule does: the adversarial suite in tests/verify/adversarial/
(each route fails, named) and the honest rules from the papers' formulas (each passes).

Each test runs the audit only (`verify.audit`), not the measurement; the CLI tests run the whole command on
rules that fail at the audit, so no sweep runs."""

from __future__ import annotations

import importlib.util
import pathlib
import subprocess
import sys

import numpy as np
import pytest
from decbounds.verify.spec import register_rule

from decbounds import algorithms, cli, instances
from decbounds import verify as v

HERE = pathlib.Path(__file__).parent / "adversarial"


def _load(path: pathlib.Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


sys.path.insert(0, str(HERE))  # the rule files import each other by name, as a user's files would
cheaters = importlib.import_module("cheaters")
honest = importlib.import_module("honest")
# EXTRA in its cumulative form (Shi et al. 2015, eq. (2.13)): the honest rule of test_verify_cheating.py
cheating_suite = _load(HERE.parent / "test_verify_cheating.py", "verify_cheating_rules")
HONEST = [*honest.HONEST, cheating_suite.CumulativeExtra]


def _audit(rule: type, iterations: int = 600) -> dict:
    name, added = register_rule(rule)
    try:
        return v.audit(name, n=9, iterations=iterations)
    finally:
        if added:
            algorithms.unregister(name)


@pytest.mark.parametrize(("rule", "key", "fragment"), cheaters.CHEATERS,
                         ids=[c[0].name for c in cheaters.CHEATERS])
def test_every_route_of_the_adversarial_suite_fails_the_audit_named(rule, key, fragment):
    np.__dict__.pop("_decbounds_cheat", None)
    audited = _audit(rule)
    assert not audited["passed"]
    failed = {c["key"]: c["detail"] for c in audited["checks"] if not c["passed"]}
    assert key in failed, failed
    assert fragment in failed[key], failed[key]
    assert failed[key].startswith(rule.name)
    if key in ("information_flow", "configurations", "purity", "zero_respecting"):
        assert "iteration" in failed[key]  # where it happened
    if key == "information_flow" and "query point" not in fragment:
        assert "worker" in failed[key] and "hops from S" in failed[key]


def test_the_suite_has_twenty_distinct_routes():
    assert len({rule.__mro__[1] if rule.__name__[-1].isdigit() else rule
                for rule, _, _ in cheaters.CHEATERS}) >= 20


@pytest.mark.slow
@pytest.mark.parametrize("period", [3, 4, 8, 32, 64, 100])
def test_gossip_pga_fails_for_every_period(period):
    audited = _audit(cheaters.gossip_pga(period))
    assert any(c["key"] == "information_flow" and not c["passed"] for c in audited["checks"])


@pytest.mark.slow
@pytest.mark.parametrize("delay", [2, 3, 4, 5, 6, 7])
def test_a_delayed_allreduce_fails_for_every_delay(delay):
    audited = _audit(cheaters.delayed_allreduce(delay))
    assert any(c["key"] == "information_flow" and not c["passed"] for c in audited["checks"])


@pytest.mark.parametrize("rule", HONEST, ids=[r.name for r in HONEST])
def test_honest_rules_from_the_papers_pass(rule):
    audited = _audit(rule)
    assert audited["passed"], [c for c in audited["checks"] if not c["passed"]]
    keys = {c["key"] for c in audited["checks"]}
    assert {"purity", "configurations", "information_flow", "zero_respecting"} <= keys


def test_the_paper_rules_are_the_algorithms_they_claim():
    """Each honest rule reproduces the package's own rule of the same method, up to rounding (so the suite
    holds real algorithms to the audit, not trivial ones)."""
    f = instances.heterogeneous_quadratic(6, 3, 1.0, seed=2)
    W = instances.gossip_matrix(instances.topology("ring", 6), "metropolis")
    for rule, builtin in ((honest.PaperDPSGD, "dpsgd"), (honest.PaperTracking, "dsgt")):
        name, added = register_rule(rule)
        try:
            mine = algorithms.run(name, f, W, step_size=0.05, iterations=200).x_hat
        finally:
            if added:
                algorithms.unregister(name)
        theirs = algorithms.run(builtin, f, W, step_size=0.05, iterations=200).x_hat
        np.testing.assert_allclose(mine, theirs, rtol=1e-8, atol=1e-10, err_msg=name)


def test_gossip_out_aliasing_its_input_is_the_product():
    f = instances.heterogeneous_quadratic(4, 3, 1.0, seed=1)
    W = instances.gossip_matrix(instances.topology("ring", 4), "metropolis")
    from decbounds.algorithms.runtime import Runtime
    from decbounds.algorithms.step_rule import communication_channel

    ledger = Runtime(problem=f, oracle=None, channel=communication_channel("gossip", W, 4), step_sizes=[0.1],
                     hyper={}, batch=1, seeds=[0])
    ctx = ledger.context
    X = np.random.default_rng(0).standard_normal((4, 1, 3))
    expected = np.einsum("ij,jkd->ikd", np.asarray(W.todense() if hasattr(W, "todense") else W), X)
    ledger.begin_iteration(0)
    out = ctx.gossip(X, out=[X])
    assert out is X
    np.testing.assert_allclose(X, expected, rtol=1e-12)
    base = np.random.default_rng(1).standard_normal((4, 1, 3))
    for t, (Z, target) in enumerate([(base[:], base), (base, base[:]), (base[:], base[...])], start=1):
        before = np.einsum("ij,jkd->ikd", np.asarray(W.todense() if hasattr(W, "todense") else W), base)
        ledger.begin_iteration(t)
        ctx.gossip(Z, out=[target])
        np.testing.assert_allclose(base, before, rtol=1e-12)


def _cli(tmp_path, spec: str, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "decbounds.verify", spec, "--tiny",
                           "--baselines", "", "--no-progress", *extra],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)


@pytest.mark.slow
def test_a_module_that_patches_the_auditor_fails(tmp_path):
    done = _cli(tmp_path, f"{HERE / 'patches_the_auditor.py'}:PatchedPGA", "--out", str(tmp_path / "o"))
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "changed the auditor" in done.stdout, done.stdout
    assert "class_audit" in done.stdout


def test_sys_exit_at_import_or_in_a_step_is_a_failure_not_exit_0(tmp_path):
    report = v.verify(f"{HERE / 'exits_at_import.py'}:Quiet", mode="tiny", out=tmp_path / "a", baselines=(),
                      progress=False)
    assert report.exit_status == 1
    assert "called sys.exit(0) when imported" in report.verdicts["audit"], report.verdicts
    report = v.verify(f"{HERE / 'exits_in_step.py'}:ExitsInStep", mode="tiny", out=tmp_path / "b",
                      baselines=(), progress=False)
    assert report.exit_status == 1
    assert "called sys.exit(None) in step at iteration 0" in report.verdicts["audit"], report.verdicts


@pytest.mark.parametrize("where", ["existing_file", "file_then_sub", "unwritable"])
def test_out_that_cannot_be_a_folder_is_one_line_exit_2(tmp_path, capsys, where):
    existing = tmp_path / "taken"
    existing.write_text("x")
    out = {"existing_file": existing, "file_then_sub": existing / "sub",
           "unwritable": pathlib.Path("/proc/decbounds-verify/out")}[where]
    assert cli.main(["verify", "dpsgd", "--tiny", "--baselines", "", "--no-progress", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "--out" in err and "cannot create" in err, err


class ExitsAtLargeSizes(honest.PaperDPSGD):
    """Honest in the audit (n = 9 and 12), ends the process in the measured runs at n = 15."""

    name = "exits_at_large_sizes"

    def step(self, s, ctx):
        if ctx.n >= 15:
            raise SystemExit(0)
        return super().step(s, ctx)


def test_sys_exit_in_a_measured_run_fails_not_exit_0(tmp_path):
    report = v.verify(ExitsAtLargeSizes, mode="tiny", out=tmp_path, baselines=(), progress=False,
                      sizes={"comm_sizes": (6, 9, 12, 15)})
    assert report.exit_status == 1
    assert "called sys.exit(0) in a run of the communication term" in report.verdicts["audit"]


def test_a_state_of_views_of_one_array_is_replayed_as_one():
    """BEER's state holds halves of stacked arrays (one product sends both messages): the purity replay
    copies them as views of one copy, where copy.deepcopy made BEER fail with a TypeError of its own."""
    from decbounds.verify.flow import copy_state, flow_audit

    from decbounds import algorithms

    checks = flow_audit(algorithms.rule_class("beer"), "beer")
    assert all(check["passed"] for check in checks), [c["detail"] for c in checks if not c["passed"]]
    stacked = np.zeros((4, 1, 3))
    state = algorithms.State(x=stacked[:2])
    state.y = stacked[2:]
    copied = copy_state(state)
    assert copied.x.base is copied.y.base and copied.x.base is not stacked
    copied.y[...] = 1.0
    assert copied.x.base[2:].sum() == 6.0 and stacked.sum() == 0.0  # the copy shares memory, not the original
