"""verify's values: a `Verdict` carries its kind (never re-read from its words), prints the line the command
prints; a `Check` is the JSON record audit.json holds; a `Term` is one object that every part of verify
reads."""

from __future__ import annotations

import json

import pytest
from decbounds.paper_figures import fit

from decbounds import verify as v

SIZES = (96, 192, 384, 768)
LINEAR = fit.RecordFit("n", fit.fit_exponent(SIZES, [26 * n for n in SIZES]), 4, 0)
QUADRATIC = fit.RecordFit("n", fit.fit_exponent(SIZES, [n * n for n in SIZES]), 4, 0)


@pytest.mark.parametrize("kind", [k for k in v.VerdictKind if k.prefix])
def test_a_printed_verdict_reads_back_as_its_kind(kind):
    verdict = v.Verdict(kind, ": some words", " [references in this run: DeTAG 1.00 [0.99, 1.01]]")
    assert str(verdict) == f"{kind.prefix}: some words [references in this run: DeTAG 1.00 [0.99, 1.01]]"
    if kind not in (v.VerdictKind.AUDIT_PASSED, v.VerdictKind.AUDIT_FAILED):
        assert v.verdict_kind(str(verdict)) == kind.label == v.verdict_kind(verdict)


def test_the_verdict_carries_its_kind_and_numbers_not_its_words():
    worse = v.term_verdict("communication", QUADRATIC, {"detag": LINEAR})
    assert worse.kind is v.VerdictKind.WORSE and worse.summary_kind == "worse: CI above"
    assert worse.evidence["exponent"] == pytest.approx(2.0) and worse.evidence["optimal"] == 1.0
    assert worse.references == " [references in this run: DeTAG 1.00 [1.00, 1.00]]"
    # the kind decides, whatever the words say: a verdict whose words begin like another kind's is its own
    misleading = v.Verdict(v.VerdictKind.MATCHES, ": worse than the optimal order, in words only")
    assert v.verdict_kind(misleading) == "matches"
    report = v.VerifyReport(rule="mine", mode="quick", seed=0, audit={"passed": True, "checks": []},
                            verdicts={"communication": misleading}, fits={}, records=[], files=[], errors=[],
                            seconds=0.0)
    assert "matches" in report.summary().splitlines()[1] and not report.beaten
    below = v.term_verdict("communication", LINEAR, {}, below=["run at n = 96: T_eps = 3 < 33"])
    assert v.VerifyReport(**{**report.__dict__, "verdicts": {"communication": below}}).beaten


def test_a_check_is_the_json_record_audit_json_holds():
    check = v.Check("budget", False, "mine: 2 queries in iteration 3")
    assert json.loads(json.dumps(dict(check))) == {
        "condition": v.Check("budget", True, "").condition, "key": "budget", "passed": False,
        "detail": "mine: 2 queries in iteration 3"}
    assert v.Check.from_record(json.loads(json.dumps(dict(check)))) == check
    with pytest.raises(ValueError, match="key must be one of"):
        v.Check("no such check", True, "")


def test_every_term_is_one_object_read_by_name():
    assert list(v.TERMS) == ["communication", "communication_broom", "spectral_gap", "sampling_sigma2",
                             "sampling_nB"]
    for name, term in v.TERMS.items():
        assert term.name == name and term.variable in fit.VARIABLES
        assert term["optimal"] == term.optimal  # the former dict entries still read
        assert term.advice(v.MODES["quick"], 702.0)
        assert v.OPTIMAL_REFERENCES[term.source] == term.reference
