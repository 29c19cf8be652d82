"""The time-varying catalog entries (docs/theory.md §17): their status, and how they compare."""

from __future__ import annotations

import math

import pytest

from decbounds import bounds

POINT = {"L": 1.0, "Delta": 1.0, "sigma": 1.0, "B": 1, "epsilon": 0.01, "lam": 0.9, "varsigma": 0.0}


def test_time_varying_entries_carry_their_status_and_their_provenance() -> None:
    for name in ("huang_yuan2022", "huang_yuan2022_algorithm", "ying2021_one_peer_exponential"):
        assert bounds.get(name).status == "recalled"
    assert "Not checked: the theorem's formula" in bounds.get("huang_yuan2022").doc
    assert bounds.get("huang_yuan2022_algorithm").kind == "upper"


@pytest.mark.parametrize("n", [3, 16, 1024])
def test_the_algorithm_is_above_its_lower_bound_by_the_log(n: int) -> None:
    ratio = bounds.gap("huang_yuan2022_algorithm", "huang_yuan2022", term="communication", n=n, **POINT)
    assert ratio == pytest.approx(math.log(n), rel=1e-12)


def test_one_peer_exponential_communication_grows_with_log2_n() -> None:
    rate = bounds.get("ying2021_one_peer_exponential")
    values = [rate.evaluate_terms(n=2**k, **POINT)["communication"] for k in (2, 4, 8)]
    assert values == pytest.approx([2 / POINT["epsilon"], 4 / POINT["epsilon"], 8 / POINT["epsilon"]])
