"""The computed worst case beside the measured exponents (paper_figures.verify.worst_case_term, issue 32)."""

from __future__ import annotations

import pytest
from decbounds.algorithms.rules import SGP
from decbounds.bounds.pep import worst_case
from decbounds.paper_figures.verify import worst_case_term


def test_the_rules_worst_case_stands_beside_detag_and_dpsgd() -> None:
    records = worst_case_term.worst_case_records("dsgt", Ks=(2,), lams=(0.0,))
    assert [(r["method"], r["K"], r["lam"]) for r in records] == [
        ("dsgt", 2, 0.5), ("dsgt", 2, 0.0), ("detag", 2, 0.5), ("detag", 2, 0.0), ("dgd_cta", 2, 0.5),
        ("dgd_cta", 2, 0.0)]
    assert records[2]["rounds"] == 4  # two DeTAG phases of R = 2 rounds
    expected = worst_case("dsgt", 2, 1.0, worst_case_term.STEP, spectrum=(-0.5, 0.5)).value
    assert records[0]["value"] == pytest.approx(expected, rel=1e-9) and records[0]["status"] == "optimal"


def test_a_rule_the_compiler_refuses_gets_one_line_and_the_baselines_still(monkeypatch) -> None:
    monkeypatch.setattr(worst_case_term, "KS", (2,))
    monkeypatch.setattr(worst_case_term, "LAMS", ())
    lines = worst_case_term.worst_case_lines(SGP)
    rows = [line for line in lines if line.startswith("| ") and "---" not in line][1:]
    assert rows[0].startswith("| sgp |") and "not computed" in rows[0] and "push" in rows[0]
    assert [row.split(" | ")[0] for row in rows[1:]] == ["| detag", "| dgd_cta"]


def test_report_md_carries_the_section_outside_the_tiny_mode(monkeypatch) -> None:
    from decbounds.algorithms.extra import Extra
    from decbounds.paper_figures.verify import report as report_module
    from decbounds.paper_figures.verify.settings import MODES

    monkeypatch.setattr(report_module, "worst_case_lines",
                        lambda rule: ["", "## Computed worst case", rule.name])
    audit = {"instance": "path", "step_size": 1.0, "iterations": 1, "seed": 0, "checks": [], "passed": True}
    for mode, shown in (("tiny", False), ("quick", True)):
        made = report_module.VerifyReport(rule="extra", mode=mode, seed=0, audit=audit, verdicts={}, fits={},
                                          records=[], files=[], errors=[], seconds=0.0)
        text = report_module.report_markdown(made, MODES[mode], Extra)
        assert ("## Computed worst case\nextra" in text) is shown
