"""The computed worst case beside the measured exponents (verify.worst_case_term)."""

from __future__ import annotations

import pytest
from decbounds.algorithms.rules import SGP
from decbounds.pep.api import worst_case
from decbounds.verify import worst_case_term


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
    lines = worst_case_term.worst_case_lines(worst_case_term.worst_case_records(SGP))
    rows = [line for line in lines if line.startswith("| ") and "---" not in line][1:]
    assert rows[0].startswith("| sgp |") and "not computed" in rows[0] and "push" in rows[0]
    assert [row.split(" | ")[0] for row in rows[1:]] == ["| detag", "| dgd_cta"]


def test_report_md_carries_the_section_the_rules_process_computed() -> None:
    from decbounds.algorithms.extra import Extra
    from decbounds.verify import report as report_module
    from decbounds.verify.settings import MODES

    audit = {"instance": "path", "step_size": 1.0, "iterations": 1, "seed": 0, "checks": [], "passed": True}
    computed = [{"method": "extra", "K": 2, "rounds": 2, "lam": 0.5, "value": 1.4094, "status": "optimal"}]
    for records, shown in (([], False), (computed, True)):
        made = report_module.VerifyReport(rule="extra", mode="quick", seed=0, audit=audit, verdicts={},
                                          fits={}, records=[], files=[], errors=[], seconds=0.0,
                                          worst_case=records)
        text = report_module.report_markdown(made, MODES["quick"], Extra)
        assert ("## Computed worst case" in text) is shown
        assert ("| extra | 2 | 2 | 0.5 | 1.4094 | optimal |" in text) is shown


@pytest.mark.slow  # a --quick verify of a user's file in its own process: about 40 s of CPU
def test_a_users_rule_in_its_own_process_gets_its_worst_case_in_the_report(tmp_path) -> None:
    """The deciding process never imports a user's module (verify.isolation), so the rule's worst case is
    computed in the rule's process and only rendered where the report is written."""
    from decbounds.verify import verify

    rule = tmp_path / "my_dpsgd.py"
    rule.write_text("from decbounds.algorithms.rules import DPSGD\n\n\nclass MyDPSGD(DPSGD):\n"
                    "    name = 'my_dpsgd'\n    aliases = ()\n")
    report = verify(f"{rule}:MyDPSGD", mode="quick", out=tmp_path / "out", progress=False)
    text = (tmp_path / "out" / "report.md").read_text()
    assert report.worst_case and report.worst_case[0]["method"] == "my_dpsgd"
    assert "## Computed worst case" in text and "| my_dpsgd | 2 |" in text
