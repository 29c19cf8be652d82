"""`decbounds verify` / `decbounds.verify`: the three new algorithms verified at tiny sizes, the class
audit catching each kind of misbehaving rule (naming the rule and the iteration, keeping the records), bad
specs as one-line errors, and the tutorial docs/tutorials/verify.md run as written."""

from __future__ import annotations

import csv
import json
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest
from decbounds.paper_figures import fit
from decbounds.verify import cli as verify_cli

from decbounds import algorithms, cli
from decbounds import verify as v

TUTORIAL = pathlib.Path(__file__).resolve().parents[2] / "docs" / "tutorials" / "verify.md"
# tiny sizes with few points, so that a whole verify stays a few seconds
SMALL = {"comm_sizes": (6, 9, 12, 15), "kappas": (1.0, 0.3, 0.1, 0.03), "sampling_seeds": 4,
         "broom_sizes": (6, 9, 12, 15)}


def _records(out: pathlib.Path) -> list[dict]:
    return [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines() if line.strip()]


@pytest.mark.parametrize(("name", "hyper"), [("extra", {}), ("exact_diffusion", {}),
                                             ("mg_dsgd", {"R": 2, "form": "cta"})])
def test_new_algorithms_verify_in_tiny_mode(tmp_path, name, hyper):
    report = v.verify(name, mode="tiny", out=tmp_path, hyper=hyper, baselines=(), sizes=SMALL, progress=False)
    assert report.audit["passed"], report.audit
    assert report.exit_status == 0
    assert set(report.verdicts) == {"audit", *v.TERMS}
    for term in v.TERMS:
        assert v.verdict_kind(report.verdicts[term]) not in ("", "below", "error"), report.verdicts[term]
        assert not report.verdicts[term].startswith(v.VERDICT_BELOW)
    text = (tmp_path / "report.md").read_text()
    assert f"# decbounds verify: {name}" in text and "## Verdicts" in text and "seed 0" in text
    records = _records(tmp_path)
    assert records[0]["runner"] == "verify.audit"
    measured = [r for r in records[1:] if r["point"]["algorithm"] == name]
    assert len(measured) == 4 + 4 + 4 + 5  # path sizes, broom sizes, kappas, sampling points
    for record in measured:
        if record["point"]["term"] in v.COMMUNICATION_TERMS and record["result"]["t_eps"] is not None:
            assert record["result"]["t_eps"] >= record["result"]["explicit_bound"]
    with open(tmp_path / "exponents.csv") as handle:
        rows = list(csv.DictReader(handle))
    assert {row["term"] for row in rows} == set(v.TERMS)
    assert not any(r["point"]["term"] == "digits" for r in records[1:])  # the digits term is opt-in
    # the broom: its own verdict row and exponent rows, every size with its groups D = 3 hops apart
    broom = [r for r in measured if r["point"]["term"] == "communication_broom"]
    assert {r["point"]["n"] for r in broom} == set(SMALL["broom_sizes"])
    assert {(r["point"]["D"], r["result"]["dist"], r["params"]["D"]) for r in broom} == {(3, 3, 3)}
    assert len({r["result"]["explicit_bound"] for r in broom}) == 1  # flat in n at fixed D
    broom_rows = {row["algorithm"]: row for row in rows if row["term"] == "communication_broom"}
    assert name in broom_rows
    assert float(broom_rows[name]["optimal"]) == 0.0 and broom_rows[name]["verdict"] == str(report.verdicts[
        "communication_broom"])
    assert "Thm 1's broom" in text and "| communication_broom | " in text and "n=15 D=3" in text
    assert (tmp_path / "report.png").stat().st_size > 10_000


def test_baselines_are_measured_in_the_same_run_and_a_rerun_resumes(tmp_path):
    sizes = {**SMALL, "comm_sizes": (6, 9, 12), "kappas": (1.0, 0.1, 0.03),
             "sigma2_points": ((2, 1, 8e-3), (2, 1, 4e-3)), "nb_points": ((2, 1, 8e-3), (4, 1, 8e-3))}
    report = v.verify("exact_diffusion", mode="tiny", out=tmp_path, baselines=("centralized",), sizes=sizes,
                      progress=False)
    algorithms_run = {r["point"]["algorithm"] for r in report.records}
    assert algorithms_run == {"exact_diffusion", "centralized"}
    assert "centralized" in report.fits["communication"]
    lines = len(_records(tmp_path))
    again = v.verify("exact_diffusion", mode="tiny", out=tmp_path, baselines=("centralized",), sizes=sizes,
                     progress=False)
    assert again.verdicts == report.verdicts
    assert len(_records(tmp_path)) == lines + 1  # only the audit line is new: every run was reused


def test_the_broom_term_exponent_is_the_catalogs():
    """The broom's optimal exponent in n is that of lower_bound_any's communication term Delta L D / eps^2
    (Thm 1) at fixed D: 0; the path's 1 is the exponent of its hop distance n - 2 ceil(n/3) + 1 ~ n/3."""
    import sympy as sp

    from decbounds import bounds

    term = bounds.get("lower_bound_any").terms["communication"]
    n = sp.Symbol("n", positive=True)
    by_name = {str(s): s for s in term.free_symbols}
    assert "D" in by_name and "n" not in by_name
    assert float(sp.simplify(n * sp.diff(term, n) / term)) == v.TERMS["communication_broom"]["optimal"] == 0
    D = by_name["D"]
    assert float(sp.simplify(D * sp.diff(term, D) / term)) == 1  # the bound grows with the diameter instead
    assert v.TERMS["communication"]["optimal"] == 1


@pytest.mark.slow  # about 14 s on the loaded 2-core machine
def test_digits_term_in_tiny_mode(tmp_path):
    """--digits: the rule (with its hyper-parameter grid) beside D^2 on the digits MLP at 0% shuffled, tuned
    by the Figure 4 runner; a verdict row, the table in report.md and digits.csv, a sixth panel in
    report.png, and no effect on the exit status."""
    sizes = {**SMALL, "comm_sizes": (6, 9, 12), "broom_sizes": (6, 9, 12), "kappas": (1.0, 0.1, 0.03),
             "sigma2_points": ((2, 1, 8e-3), (2, 1, 4e-3)), "nb_points": ((2, 1, 8e-3),),
             "digits_iterations": 12}
    report = v.verify("mg_dsgd", mode="tiny", out=tmp_path, hyper={"R": 2, "form": "cta"}, baselines=("d2",),
                      sizes=sizes, progress=False, digits=True)
    assert report.exit_status == 0
    verdict = str(report.verdicts["digits"])
    assert re.match(r"(lower than|higher than|overlapping) D\^2 \(\d", verdict), verdict
    assert "mg_dsgd " in verdict and "over 3 seeds after 12 iterations, 0% shuffled digits" in verdict
    digits = [r for r in _records(tmp_path)[1:] if r["point"]["term"] == "digits"]
    assert {r["point"]["algorithm"] for r in digits} == {"mg_dsgd", "d2"}
    mine = next(r for r in digits if r["point"]["algorithm"] == "mg_dsgd")
    assert mine["point"]["rule_id"] == v.fingerprint(algorithms.rule_class("mg_dsgd"))
    assert mine["result"]["hyper"]["R"] == 2 and mine["result"]["hyper"]["form"] == "cta"
    assert mine["point"]["network"] == {"topology": "ring", "n": 8, "kappa": None}
    assert mine["point"]["shuffled_percent"] == 0.0 and mine["result"]["checkpoints"][-1] == 12
    text = (tmp_path / "report.md").read_text()
    assert "| digits MLP at 0% shuffled (final training loss; no lower bound) | " in text
    assert "## Digits MLP at 0% shuffled (8-worker ring)" in text
    with open(tmp_path / "digits.csv") as handle:
        rows = {row["algorithm"]: row for row in csv.DictReader(handle)}
    assert set(rows) == {"mg_dsgd", "d2"}
    summary = v.final_losses(mine)
    assert float(rows["mg_dsgd"]["final_loss_median"]) == pytest.approx(summary["median"])
    assert summary["min"] <= summary["median"] <= summary["max"]
    assert f"| mg_dsgd | {float(rows['mg_dsgd']['step_size']):.4g} |" in text
    assert (tmp_path / "report.png").stat().st_size > 10_000


def test_digits_verdict_compares_ranges():
    def record(algorithm, finals, step=None, bracketed=True):
        return {"point": {"term": "digits", "algorithm": algorithm, "step_sizes": [0.4, 0.2, 0.1]},
                "result": {"final_loss": finals, "diverged": [f is None for f in finals], "step_size": step,
                           "bracketed": bracketed}}

    records = [record("mine", [0.1, 0.2, 0.15]), record("detag", [0.3, 0.4, 0.35]),
               record("d2", [0.18, 0.5, 0.3])]
    verdict = v.digits_verdict("mine", records, 100)
    assert verdict.startswith("lower than DeTAG (0.35 [0.3, 0.4]); overlapping D^2 (0.3 [0.18, 0.5]): "
                              "mine 0.15")
    records[0] = record("mine", [None, None, None])
    assert "not comparable with DeTAG" in v.digits_verdict("mine", records, 100)
    assert "diverged on all 3 seeds" in v.digits_verdict("mine", records, 100)
    assert "neither DeTAG nor D^2 was measured" in v.digits_verdict("mine", records[:1], 100)
    assert "edge of the steps" not in verdict
    records = [record("mine", [0.1], 0.2), record("detag", [0.3], 3.2, bracketed=False),
               record("d2", [0.2], 0.025, bracketed=False)]
    assert v.digits_verdict("mine", records, 100).endswith(
        "; tuned to an edge of the steps tried: DeTAG, D^2 (the widened grid did not bracket the best step)")


# ------------------------------------------------------------------------------- misbehaving rules

class _Base(algorithms.StepRule):
    style = algorithms.PlotStyle(color="tab:gray", marker="o", label="test rule")

    def init(self, ctx):
        return algorithms.State(x=ctx.start_state())


class RaisesInStep(_Base):
    name = "raises_in_step"

    def step(self, s, ctx):
        if ctx.t == 5:
            raise ZeroDivisionError("my bug")
        s.x = ctx.gossip(s.x - ctx.step_size * ctx.sample(s.x))
        return s


class QueriesTwice(_Base):
    name = "queries_twice"

    def step(self, s, ctx):
        g = ctx.sample(s.x) + ctx.sample(s.x)
        s.x = ctx.gossip(s.x - ctx.step_size * g)
        return s


class GossipsTwice(_Base):
    name = "gossips_twice"

    def step(self, s, ctx):
        s.x = ctx.gossip(ctx.gossip(s.x - ctx.step_size * ctx.sample(s.x)))
        return s


class Overflows(_Base):
    name = "overflows"

    def step(self, s, ctx):
        s.x = ctx.gossip(s.x - ctx.step_size * ctx.sample(s.x)) * 1e100
        return s


class Teleports(_Base):
    """Declares gossip on the graph but averages with numpy: information crosses the path in one iteration."""

    name = "teleports"

    def step(self, s, ctx):
        s.x = s.x - ctx.step_size * ctx.sample(s.x)
        s.x = np.broadcast_to(s.x.mean(axis=0), s.x.shape).copy()
        return s


class AveragesExactly(_Base):
    """Declares gossip on the graph but asks the context for an exact average: refused by the capability."""

    name = "averages_exactly"

    def step(self, s, ctx):
        s.x = s.x - ctx.step_size * ctx.sample(s.x)
        s.x = np.broadcast_to(ctx.exact_average(s.x), s.x.shape).copy()
        return s


@pytest.mark.parametrize(("rule", "condition", "detail"), [
    (RaisesInStep, "the rule runs", "raises_in_step raised ZeroDivisionError in step at iteration 5: my bug"),
    (QueriesTwice, "A_B budget", "queries_twice: iteration 0: 1 + 1 queries per worker exceed the batch B=1"),
    (GossipsTwice, "A_B budget", "gossips_twice: iteration 0: a second communication round"),
    (Overflows, "iterates stay finite", "overflows: iterate norm"),
    (Teleports, "zero-respecting", "teleports: after iteration"),
    (AveragesExactly, "capability", "averages_exactly: iteration 0: exact averaging is outside a 'gossip'"),
])
def test_the_audit_names_the_rule_the_condition_and_the_iteration(tmp_path, rule, condition, detail):
    report = v.verify(rule, mode="tiny", out=tmp_path, baselines=(), progress=False)
    assert report.exit_status == 1
    failed = [check for check in report.audit["checks"] if not check["passed"]]
    # the first failed check is the one named; the differential audit may name the same route again
    assert failed and failed[0]["condition"].startswith(condition)
    assert all(c["key"] in ("information_flow", "purity", "configurations") for c in failed[1:]), failed
    assert failed[0]["detail"].startswith(detail), failed[0]["detail"]
    assert "\n" not in failed[0]["detail"] and "Traceback" not in failed[0]["detail"]
    assert re.search(r"iteration \d+|t = \d+", failed[0]["detail"])
    assert report.verdicts["audit"].startswith("FAILED") and detail in report.verdicts["audit"]
    assert detail in (tmp_path / "report.md").read_text()
    records = _records(tmp_path)
    assert records[0]["audit"]["passed"] is False  # the audit's record is kept
    assert rule.name not in algorithms.algorithm_names()  # registered for the run only


class FailsOnLargeGraphs(_Base):
    """Passes the audit (n = 9; 12 in the differential checks) and fails in the experiments at n >= 15."""

    name = "fails_on_large_graphs"

    def step(self, s, ctx):
        if ctx.n >= 15:
            raise RuntimeError("too many workers for me")
        s.x = ctx.gossip(s.x - ctx.step_size * ctx.sample(s.x))
        return s


def test_a_rule_failing_in_an_experiment_is_a_verdict_and_the_runs_are_kept(tmp_path):
    sizes = {**SMALL, "sigma2_points": ((2, 1, 8e-3), (2, 1, 4e-3)), "nb_points": ((2, 1, 8e-3),)}
    report = v.verify(FailsOnLargeGraphs, mode="tiny", out=tmp_path, baselines=(), sizes=sizes,
                      progress=False)
    assert report.audit["passed"]
    assert report.verdicts["communication"].kind is v.VerdictKind.ERROR
    assert str(report.verdicts["communication"]) == (
        "error: fails_on_large_graphs raised RuntimeError in step at iteration 0: too many workers for me")
    statuses = {r["point"]["n"]: r["result"]["status"] for r in _records(tmp_path)[1:]
                if r["point"]["term"] == "communication"}
    assert statuses == {6: "converged", 9: "converged", 12: "converged", 15: "error"}


def test_bad_specs_are_one_line_errors(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "broken_rule_module.py").write_text("import no_such_package_xyz\n")
    (tmp_path / "plain_module.py").write_text("class NotARule:\n    pass\n")
    cases = {
        "no_such_module_xyz:Rule": "cannot import 'no_such_module_xyz': ModuleNotFoundError",
        "broken_rule_module:Rule": "cannot import 'broken_rule_module': ModuleNotFoundError: No module named "
                                   "'no_such_package_xyz'",
        "plain_module:Missing": "module 'plain_module' has no attribute 'Missing'",
        "plain_module:NotARule": "plain_module:NotARule is not a step rule",
        "plain_module.py:NotARule": "plain_module.py:NotARule is not a step rule",
        "nonsense": "'nonsense' is neither 'module:Class' nor a registered algorithm",
    }
    for spec, message in cases.items():  # the loader's messages (the isolated process reports the same)
        with pytest.raises(v.VerifyInputError, match=re.escape(message)):
            v.load_rule(spec)
    # through verify: a module:Class spec is imported in a process of its own, its error reported back
    with pytest.raises(v.VerifyInputError, match=re.escape(cases["plain_module:NotARule"])):
        v.verify("plain_module:NotARule", mode="tiny", out=tmp_path / "out", progress=False)
    with pytest.raises(v.VerifyInputError, match="mode must be one of"):
        v.verify("extra", mode="huge")
    with pytest.raises(v.VerifyInputError, match="unknown sizes field"):
        v.verify("extra", mode="tiny", sizes={"diameter": 3})
    bad_options = {
        "digits must be True or False; got digits='yes'": {"digits": "yes"},
        "broom_sizes: at n=6 the broom of diameter 4 puts its end groups": {"sizes": {"broom_diameter": 4}},
        "sizes['broom_diameter'] must hold positive finite integers; got 0": {"sizes": {"broom_diameter": 0}},
        "sizes['broom_sizes'] must hold positive finite integers; got 6.5":
            {"sizes": {"broom_sizes": (6.5, 12)}},
        "broom_sizes must hold integers >= 2; got 1": {"sizes": {"broom_sizes": (1, 12)}},
        "digits_mode must be one of ('tiny', 'quick', 'full'); got digits_mode='huge'":
            {"sizes": {"digits_mode": "huge"}},
        "digits_iterations must be a positive integer or None; got digits_iterations=0":
            {"sizes": {"digits_iterations": 0}},
    }
    for message, options in bad_options.items():
        with pytest.raises(v.VerifyInputError, match=re.escape(message)):
            v.verify("extra", mode="tiny", out=tmp_path / "out", progress=False, **options)


def test_cli_bad_spec_exits_2_with_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["verify", "no_such_module_xyz:Rule", "--tiny", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("decbounds verify: error: cannot import") and "\n" not in err
    assert cli.main(["verify", "extra", "--quick", "--tiny", "--digits", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("decbounds verify: error: --quick and --tiny are exclusive: choose one mode (neither: the "
                   "full mode)")
    with pytest.raises(SystemExit) as exited:
        cli.main(["verify", "extra", "--tiny", "--digits", "--seed", "x"])
    assert exited.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err == "decbounds verify: error: argument --seed: invalid int value: 'x'"
    assert not (tmp_path / "verify-extra").exists()  # nothing ran


# -------------------------------------------------------------------------------------------- tutorial

@pytest.mark.slow  # a whole verify run in a subprocess, about 8 s
def test_the_tutorial_runs_as_written(tmp_path):
    """The rule file and the command of docs/tutorials/verify.md, in a fresh directory outside the package;
    the changes are --quick -> --tiny and one baseline (the same code path at smaller sizes, so that the
    suite stays fast)."""
    section = TUTORIAL.read_text(encoding="utf-8")
    (code,) = re.findall(r"```python\n(# my_rule\.py\n.*?)```", section, flags=re.S)
    (command,) = [line.strip() for block in re.findall(r"```(?:bash|sh)\n(.*?)```", section, flags=re.S)
                  for line in block.splitlines() if line.strip().startswith("decbounds verify")]
    (tmp_path / "my_rule.py").write_text(code)
    args = command.split()[2:]
    assert "--quick" in args
    args = ["--tiny" if arg == "--quick" else arg for arg in args] + ["--no-progress", "--baselines",
                                                                       "centralized"]
    script = ("import sys; from decbounds.cli import main; "
              "sys.exit(main(['verify', *sys.argv[1:]]))")
    done = subprocess.run([sys.executable, "-c", script, *args], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    out = tmp_path / args[args.index("--out") + 1]
    report = (out / "report.md").read_text()
    assert "## Verdicts" in report and "class audit" in report
    for term in ("communication", "spectral_gap", "sampling_sigma2", "sampling_nB"):
        assert f"\n{term}: " in "\n" + done.stdout


def test_cli_hyper_grids_parse_and_malformed_ones_are_one_line_errors(tmp_path, capsys, monkeypatch):
    assert verify_cli._hyper_arguments(["R=1,2,4", "form=cta", "eta=None"]) == {"R": [1, 2, 4], "form": "cta",
                                                                         "eta": None}
    monkeypatch.chdir(tmp_path)
    assert cli.main(["verify", "extra", "--tiny", "--hyper", "R", "--no-progress"]) == 2
    assert "--hyper expects KEY=V1,V2" in capsys.readouterr().err


def test_the_path_and_gap_fits_read_the_largest_finished_sizes():
    def record(n, t):
        return {"point": {"term": "communication", "algorithm": "extra", "n": n}, "params": {"n": n},
                "result": {"t_eps": t, "status": "converged" if t else "max_iterations"}}

    # flat (descent-dominated) up to n = 24, then linear in n; n = 768 hit the cap
    records = [record(n, 1300 + (0 if n <= 24 else 20 * n)) for n in (6, 12, 24, 48, 96, 192, 384)]
    records.append(record(768, None))
    spec = v.TERMS["communication"]
    tail = v.fit_tail(records, spec)
    assert [r["params"]["n"] for r in tail] == [48, 96, 192, 384, 768]  # the capped run still counts
    whole = fit.fit_records(records, "n").fit
    last = fit.fit_records(tail, "n")
    assert last.unfinished == 1 and last.fit.n_points == v.FIT_TAIL
    assert whole.slope < 0.6 < last.fit.slope  # the flat start hides the asymptotic slope
    assert v.fit_tail(records[:3], spec) == records[:3]  # no more sizes than the tail: all of them
    assert v.fit_tail(records, v.TERMS["communication_broom"]) == records  # the broom fits every size
