"""`decbounds verify` / `paper_figures.verify`: the three new algorithms verified at tiny sizes, the class
audit catching each kind of misbehaving rule (naming the rule and the iteration, keeping the records), bad
specs as one-line errors, and the README section "Verify your own algorithm" run as written."""

from __future__ import annotations

import csv
import json
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

import algorithms
from paper_figures import cli
from paper_figures import verify as v

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"
VERDICT_STARTS = ("matches the lower bound's order", "worse: ", "not resolved on this range", v.VERDICT_BELOW,
                  "error: ")
# tiny sizes with few points, so that a whole verify stays a few seconds
SMALL = {"comm_sizes": (6, 9, 12, 15), "kappas": (1.0, 0.3, 0.1, 0.03), "sampling_seeds": 4}


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
        assert report.verdicts[term].startswith(VERDICT_STARTS), report.verdicts[term]
        assert not report.verdicts[term].startswith(v.VERDICT_BELOW)
    text = (tmp_path / "report.md").read_text()
    assert f"# decbounds verify: {name}" in text and "## Verdicts" in text and "seed 0" in text
    records = _records(tmp_path)
    assert records[0]["runner"] == "verify.audit"
    measured = [r for r in records[1:] if r["point"]["algorithm"] == name]
    assert len(measured) == 4 + 4 + 5  # path sizes, kappas, sampling points
    for record in measured:
        if record["point"]["term"] == "communication" and record["result"]["t_eps"] is not None:
            assert record["result"]["t_eps"] >= record["result"]["explicit_bound"]
    with open(tmp_path / "exponents.csv") as handle:
        rows = list(csv.DictReader(handle))
    assert {row["term"] for row in rows} == set(v.TERMS)
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
    """Declares gossip on the graph but averages exactly: information crosses the path in one iteration."""

    name = "teleports"

    def step(self, s, ctx):
        s.x = s.x - ctx.step_size * ctx.sample(s.x)
        s.x = np.broadcast_to(ctx.exact_average(s.x), s.x.shape).copy()
        return s


@pytest.mark.parametrize(("rule", "condition", "detail"), [
    (RaisesInStep, "step runs", "raises_in_step raised ZeroDivisionError in step at iteration 5: my bug"),
    (QueriesTwice, "A_B budget", "queries_twice: iteration 0: 1 + 1 queries per worker exceed the batch B=1"),
    (GossipsTwice, "A_B budget", "gossips_twice: iteration 0: a second communication round"),
    (Overflows, "iterates stay finite", "overflows: iterate norm"),
    (Teleports, "zero-respecting", "teleports: after iteration"),
])
def test_the_audit_names_the_rule_the_condition_and_the_iteration(tmp_path, rule, condition, detail):
    report = v.verify(rule, mode="tiny", out=tmp_path, baselines=(), progress=False)
    assert report.exit_status == 1
    failed = [check for check in report.audit["checks"] if not check["passed"]]
    assert len(failed) == 1 and failed[0]["condition"].startswith(condition)
    assert failed[0]["detail"].startswith(detail), failed[0]["detail"]
    assert "\n" not in failed[0]["detail"] and "Traceback" not in failed[0]["detail"]
    assert re.search(r"iteration \d+|t = \d+", failed[0]["detail"])
    assert report.verdicts["audit"].startswith("FAILED") and detail in report.verdicts["audit"]
    assert detail in (tmp_path / "report.md").read_text()
    records = _records(tmp_path)
    assert records[0]["audit"]["passed"] is False  # the audit's record is kept
    assert rule.name not in algorithms.algorithm_names()  # registered for the run only


class FailsOnLargeGraphs(_Base):
    """Passes the audit (n = 9) and fails in the experiments at n >= 12."""

    name = "fails_on_large_graphs"

    def step(self, s, ctx):
        if ctx.n >= 12:
            raise RuntimeError("too many workers for me")
        s.x = ctx.gossip(s.x - ctx.step_size * ctx.sample(s.x))
        return s


def test_a_rule_failing_in_an_experiment_is_a_verdict_and_the_runs_are_kept(tmp_path):
    sizes = {**SMALL, "sigma2_points": ((2, 1, 8e-3), (2, 1, 4e-3)), "nb_points": ((2, 1, 8e-3),)}
    report = v.verify(FailsOnLargeGraphs, mode="tiny", out=tmp_path, baselines=(), sizes=sizes,
                      progress=False)
    assert report.audit["passed"]
    assert report.verdicts["communication"] == ("error: fails_on_large_graphs raised RuntimeError in step at "
                                                "iteration 0: too many workers for me")
    statuses = {r["point"]["n"]: r["result"]["status"] for r in _records(tmp_path)[1:]
                if r["point"]["term"] == "communication"}
    assert statuses == {6: "converged", 9: "converged", 12: "error", 15: "error"}


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
    for spec, message in cases.items():
        with pytest.raises(v.VerifyInputError, match=re.escape(message)):
            v.verify(spec, mode="tiny", out=tmp_path / "out", progress=False)
    with pytest.raises(v.VerifyInputError, match="mode must be one of"):
        v.verify("extra", mode="huge")
    with pytest.raises(v.VerifyInputError, match="unknown sizes field"):
        v.verify("extra", mode="tiny", sizes={"diameter": 3})


def test_cli_bad_spec_exits_2_with_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["verify", "no_such_module_xyz:Rule", "--tiny", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("decbounds verify: error: cannot import") and "\n" not in err


# ---------------------------------------------------------------------------------------------- README

def _readme_section() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("## Verify your own algorithm")
    end = text.find("\n## ", start + 1)
    return text[start: end if end > 0 else None]


def test_readme_section_runs_as_written(tmp_path):
    """The rule file and the command of the README, in a fresh directory outside the package; the changes
    are --quick -> --tiny and one baseline (the same code path at smaller sizes, so that the suite stays
    fast)."""
    section = _readme_section()
    (code,) = re.findall(r"```python\n(# my_rule\.py\n.*?)```", section, flags=re.S)
    (command,) = [line.strip() for block in re.findall(r"```(?:bash|sh)\n(.*?)```", section, flags=re.S)
                  for line in block.splitlines() if line.strip().startswith("decbounds verify")]
    (tmp_path / "my_rule.py").write_text(code)
    args = command.split()[2:]
    assert "--quick" in args
    args = ["--tiny" if arg == "--quick" else arg for arg in args] + ["--no-progress", "--baselines",
                                                                       "centralized"]
    script = "import sys; from paper_figures.cli import main; sys.exit(main(['verify', *sys.argv[1:]]))"
    done = subprocess.run([sys.executable, "-c", script, *args], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    out = tmp_path / args[args.index("--out") + 1]
    report = (out / "report.md").read_text()
    assert "## Verdicts" in report and "class audit" in report
    for term in ("communication", "spectral_gap", "sampling_sigma2", "sampling_nB"):
        assert f"\n{term}: " in "\n" + done.stdout


def test_cli_hyper_grids_parse_and_malformed_ones_are_one_line_errors(tmp_path, capsys, monkeypatch):
    assert v._hyper_arguments(["R=1,2,4", "form=cta", "eta=None"]) == {"R": [1, 2, 4], "form": "cta",
                                                                         "eta": None}
    monkeypatch.chdir(tmp_path)
    assert cli.main(["verify", "extra", "--tiny", "--hyper", "R", "--no-progress"]) == 2
    assert "--hyper expects KEY=V1,V2" in capsys.readouterr().err
