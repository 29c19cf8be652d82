"""The centralized comparison from both sides: a rule 15 % faster than centralized SGD (600 against 702
iterations) is not "indistinguishable" (a ratio read one way, a/b, would call it so), and on the sampling
term a rule faster than exact averaging by more than CENTRALIZED_RATIO at every size is its own verdict."""

from __future__ import annotations

import pytest
from decbounds.paper_figures import fit
from decbounds.verify.settings import CENTRALIZED_RATIO, VERDICT_BEATS_CENTRALIZED, VERDICT_CENTRALIZED
from decbounds.verify.verdicts import beats_centralized, centralized_ratio, term_verdict, verdict_kind


def _runs(mine: float, central: float = 702.0) -> list[dict]:
    return [{"point": {"algorithm": a}, "params": {"n": n}, "result": {"t_eps": v}}
            for n in (4, 8, 16) for a, v in (("mine", mine), ("centralized", central))]


@pytest.mark.parametrize(("mine", "indistinguishable"), [(600, False), (821, False), (680, True),
                                                         (730, True)])
def test_the_ratio_reads_both_sides(mine: float, indistinguishable: bool) -> None:
    ratio = centralized_ratio(_runs(mine), "mine", "n")
    assert ratio is not None and (ratio <= CENTRALIZED_RATIO) == indistinguishable
    assert ratio == pytest.approx(max(mine / 702, 702 / mine))


def test_faster_than_exact_averaging_is_a_finding_not_a_tie() -> None:
    records = _runs(600)
    words = beats_centralized(records, "mine", "n")
    assert "1.17" in words and beats_centralized(_runs(821), "mine", "n") == ""
    steep = fit.RecordFit("n", fit.fit_exponent([4, 8, 16], [600, 601, 602]), 3, 0)
    verdict = term_verdict("sampling_nB", steep, {}, central=centralized_ratio(records, "mine", "n"),
                           beats_central=words)
    assert verdict.startswith(VERDICT_BEATS_CENTRALIZED) and verdict_kind(verdict) == "beats centralized"
    close = term_verdict("sampling_nB", steep, {}, central=centralized_ratio(_runs(680), "mine", "n"))
    assert close.startswith(VERDICT_CENTRALIZED)
