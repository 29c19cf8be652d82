""""resolve" means one thing: a name (or the object itself) to the registered object. A step rule's check
of one configuration's values is `StepRule.check_values`; verify's mode settings and advice are
`verify.settings_for` and `verify.advice_for`. The former names warn for a release and still work."""

from __future__ import annotations

import warnings

import pytest
from decbounds.algorithms import StepRule

from decbounds import algorithms, verify


def test_a_step_rule_checks_its_values_under_one_name() -> None:
    assert "resolve" not in vars(StepRule)
    rule_type = algorithms.rule_class("dpsgd")
    with pytest.raises(ValueError, match="momentum"):
        rule_type.check_values(None, {"momentum": 1.5})  # type: ignore[arg-type]


def test_a_rule_that_still_overrides_resolve_warns_and_is_called() -> None:
    with pytest.warns(DeprecationWarning, match="check_values"):
        class Former(algorithms.rule_class("dpsgd")):  # type: ignore[misc,valid-type]
            name = "former_resolve_rule"

            def resolve(self, values: dict[str, object]) -> dict[str, object]:
                values["seen"] = True
                return values

    assert Former.check_values(None, {}) == {"seen": True}  # type: ignore[arg-type]


def test_a_rule_with_check_values_does_not_warn() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")

        class Current(algorithms.rule_class("dpsgd")):  # type: ignore[misc,valid-type]
            name = "current_rule"

            def check_values(self, values: dict[str, object]) -> dict[str, object]:
                return values


@pytest.mark.parametrize(("old", "new"),
                         [("resolve_settings", "settings_for"), ("resolve_advice", "advice_for")])
def test_verify_former_names_warn_and_are_the_same_function(old: str, new: str) -> None:
    with pytest.warns(DeprecationWarning, match=new):
        former = getattr(verify, old)
    assert former is getattr(verify, new)
    assert old not in verify.__all__ and new in verify.__all__
