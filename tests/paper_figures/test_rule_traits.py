"""The figures read what a rule needs off its declarations: a renamed DeTAG is tuned like DeTAG."""

from __future__ import annotations

import pytest
from decbounds.algorithms.rules import DeTAG
from decbounds.paper_figures import communication, heterogeneity, rule_traits, spectral_gap

from decbounds import algorithms


@pytest.fixture
def renamed_detag():
    class RenamedDeTAG(DeTAG):
        name = "renamed_detag_probe"

    algorithms.register(RenamedDeTAG)
    try:
        yield RenamedDeTAG.name
    finally:
        algorithms.unregister(RenamedDeTAG.name)


def test_declared_traits_of_the_builtin_rules() -> None:
    assert rule_traits.phased("detag")
    assert not rule_traits.phased("mg_dsgd") and not rule_traits.phased("dsgt")
    assert rule_traits.searches("detag", "R", "eta") and not rule_traits.searches("dsgt", "R")
    assert rule_traits.momentum_name("detag") == "beta" and rule_traits.momentum_name("dpsgd") == "momentum"
    assert rule_traits.pinned_search("detag", {"eta": 0.0, "R": 1}) == {"eta": 0.0, "R": 1, "start": "paper"}
    assert rule_traits.pinned_search("detag", exclude=("eta", "R")) == {"start": "paper"}
    assert rule_traits.phase_search("dsgt", n=8, lam=0.9, cap=100) is None
    axis, values, fixed = rule_traits.phase_search("detag", n=8, lam=1 - 1e-6, cap=100)
    assert axis == "R" and values == sorted(values, reverse=True)
    assert fixed == {"gossip": ["two_tap", "chebyshev"], "start": "plain", "eta": None}


def test_a_renamed_detag_gets_detags_treatment_in_every_figure(renamed_detag: str) -> None:
    # the figures go by declared needs, not by the name "detag": a rule declaring the same needs is treated
    # the same
    assert rule_traits.phased(renamed_detag)
    assert heterogeneity.momentum_hyper(renamed_detag, 0.9) == heterogeneity.momentum_hyper("detag", 0.9)
    assert spectral_gap._tunes_phases(renamed_detag)
    search = communication.series_search(renamed_detag, 96, 1000)
    assert search is not None and search == communication.series_search("detag", 96, 1000)


def test_the_paper_start_variant_is_declared_not_guessed_from_its_name() -> None:
    variant = communication.VARIANTS["detag_paper_start"]
    assert communication.series_rule("detag_paper_start") == variant.rule == "detag"
    phases, options = communication.series_search("detag_paper_start", 6, 1000)
    assert phases == [1, 2, 4] and options == {"gossip": "two_tap", "start": "paper", "eta": None}
    assert communication.PREDICTED_BY["detag_paper_start"] == communication.PREDICTED_BY["detag"]
