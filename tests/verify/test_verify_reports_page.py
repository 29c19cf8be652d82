"""The results page of `decbounds verify` from one command (`verify.reports_page`): one report per rule,
resumable, written atomically."""

from __future__ import annotations

import json

import pytest
from decbounds.verify import reports_page

LINES = {
    "d2": ["term                 optimal  d2                 verdict",
           "communication        1        0.48 [0.20, 0.77]  within",
           "audit: passed: the rule runs",
           "communication: within a constant factor of the optimal order on these sizes: explicit bound ...",
           "sampling_sigma2: matches the lower bound's order (measured exponent 0.95 [0.80, 1.10], "
           "optimal 1)"],
    "centralized": ["OUTSIDE THE GOSSIP CLASS: centralized declares communication 'exact'; ...",
                    "communication: reference only (outside the gossip class): indistinguishable from "
                    "centralized SGD (measured exponent 0.00 [0.00, 0.00], ...)"],
}


def _result(rule, mode, cpu=12.3, status=0, load=None):
    result = {"rule": rule, "mode": mode, "exit_status": status, "cpu_seconds": cpu, "lines": LINES[rule]}
    return result if load is None else {**result, "load": load}


def test_the_page_holds_the_verdict_matrix_the_budgets_and_one_report_per_rule():
    results = [_result("d2", "full", 80.4, load=[1.52, 2.04]), _result("centralized", "full", 51.0, 1),
               _result("d2", "quick", 30.2), _result("centralized", "quick", 20.0, 1)]
    page = reports_page.render_page(results, ["full", "quick"])
    assert "| centralized | outside: centralized | - |" in page  # the matrix, sorted by rule
    assert "| d2 | within | - | - | matches | - |" in page
    assert "| d2 | default | 80 | 300 | 1.5 to 2.0 | 0 |" in page  # the load beside the CPU it inflates
    assert "| d2 | --quick | 30 | 60 | - | 0 |" in page
    assert page.count("### d2 (default)") == 1 and page.count("### d2 (--quick)") == 1
    assert "- communication: within a constant factor" in page  # the default mode's verdict lines
    assert page.index("### centralized (default)") < page.index("### d2 (default)")


@pytest.mark.slow  # two tiny verify runs in child processes, about 28 s of CPU
def test_one_command_writes_the_page_and_resumes(tmp_path):
    out, page = tmp_path / "runs", tmp_path / "page.md"
    argv = ["--tiny", "--rules", "d2,centralized", "--out", str(out), "--page", str(page)]
    assert reports_page.main(argv) == 0
    text = page.read_text()
    for rule in ("d2", "centralized"):
        result = json.loads((out / "tiny" / rule / "result.json").read_text())
        assert result["cpu_seconds"] > 0 and (out / "tiny" / rule / "report.md").exists()
        assert f"### {rule} (--tiny)" in text
    assert json.loads((out / "tiny" / "centralized" / "result.json").read_text())["exit_status"] == 1
    assert "| centralized | outside: centralized |" in text
    stamp = (out / "tiny" / "d2" / "result.json").stat().st_mtime_ns
    assert reports_page.main(argv) == 0  # resumes: nothing re-run
    assert (out / "tiny" / "d2" / "result.json").stat().st_mtime_ns == stamp
    assert page.read_text() == text


def test_unknown_rules_are_refused_naming_the_flag(tmp_path, capsys):
    with pytest.raises(SystemExit):
        reports_page.main(["--tiny", "--rules", "nope", "--out", str(tmp_path), "--page",
                           str(tmp_path / "page.md")])
    assert "--rules: not registered: ['nope']" in capsys.readouterr().err


def test_the_page_says_in_words_which_rules_read_what():
    page = reports_page.render_page([_result("d2", "full"), _result("centralized", "full")], ["full"])
    within = "within a constant factor of the optimal order on the path (between the bound and DeTAG)"
    assert f"- **{within}**: d2" in page
    assert "- **outside the gossip class (reference only)**: centralized" in page
    assert "matches the optimal order on both communication terms" not in page  # no rule does here


def test_a_failed_audit_reads_so_in_the_matrix_without_an_empty_table():
    failed = {"rule": "beer", "mode": "full", "exit_status": 1, "cpu_seconds": 4.0,
              "lines": ["audit: FAILED: information flow: beer raised TypeError ..."]}
    page = reports_page.render_page([failed], ["full"])
    assert "| beer | audit failed | audit failed |" in page
    assert "```text\n```" not in page and "- audit: FAILED: information flow" in page


def test_rules_selects_what_runs_and_the_page_keeps_every_rule_with_a_result(tmp_path):
    """``--rules beer`` re-runs one rule; the page written after it still holds the others' reports (it
    once held only the rules just run)."""
    out, page = tmp_path / "runs", tmp_path / "page.md"
    for rule in ("d2", "centralized"):
        (out / "tiny" / rule).mkdir(parents=True)
        (out / "tiny" / rule / "result.json").write_text(json.dumps(_result(rule, "tiny")))
    assert reports_page.main(["--tiny", "--rules", "d2", "--out", str(out), "--page", str(page)]) == 0
    text = page.read_text()
    assert "### d2 (--tiny)" in text and "### centralized (--tiny)" in text


def test_the_former_address_re_exports_verify_with_a_deprecation_warning():
    """``decbounds.paper_figures.verify`` (verify's old address) is the moved package, for one release."""
    import importlib
    import sys

    from decbounds import verify

    sys.modules.pop("decbounds.paper_figures.verify", None)
    with pytest.warns(DeprecationWarning, match="decbounds.verify"):
        old = importlib.import_module("decbounds.paper_figures.verify")
    assert old.verify is verify.verify
    assert importlib.import_module("decbounds.paper_figures.verify.settings") is verify.settings
