"""The API reference documents every exported name, grouped by use (docs/hooks.py expands the pages'
``<!-- api: ... -->`` lines; `make docs-check` checks the same against the built site).

Needs the docs extra (mkdocs, latex2mathml), as ``make docs`` installs it; skipped without it.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
from pathlib import Path

import pytest

pytest.importorskip("mkdocs")
pytest.importorskip("latex2mathml")

DOCS = Path(__file__).resolve().parents[1] / "docs"
_spec = importlib.util.spec_from_file_location("docs_hooks_api", DOCS / "hooks.py")
hooks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(hooks)
PACKAGES = ("bounds", "instances", "oracles", "algorithms", "verify")


@pytest.mark.parametrize("package", PACKAGES)
def test_every_exported_name_has_an_entry(package: str) -> None:
    expanded = hooks.api_markdown((DOCS / "api" / f"{package}.md").read_text(encoding="utf-8"),
                                  f"decbounds.{package}")
    entries = re.findall(r"^::: (\S+)$", expanded, flags=re.MULTILINE)
    exported = importlib.import_module(f"decbounds.{package}").__all__
    assert sorted(entries) == sorted(hooks.api_path(f"decbounds.{package}", name) for name in exported)


def test_a_name_shared_with_a_submodule_is_documented_as_the_object() -> None:
    assert hooks.api_path("decbounds.algorithms", "tune") == "decbounds.algorithms.tune.tune"
    assert hooks.api_path("decbounds.instances", "zero_chain") == "decbounds.instances.zero_chain.zero_chain"
    assert hooks.api_path("decbounds.algorithms", "run") == "decbounds.algorithms.run"


def test_each_page_opens_with_what_a_user_reaches_for_first() -> None:
    first = {package: re.search(r"<!-- api: (\w+)", (DOCS / "api" / f"{package}.md").read_text())[1]
             for package in PACKAGES}
    assert first == {"bounds": "get", "instances": "topology", "oracles": "make_oracle", "algorithms": "run",
                     "verify": "verify"}


def test_a_name_the_package_does_not_export_is_an_error() -> None:
    with pytest.raises(ValueError, match="no_such_name"):
        hooks.api_markdown("<!-- api: run no_such_name -->\n", "decbounds.algorithms")


def test_docstring_formulas_are_typeset() -> None:
    html = hooks.docstring_math("the gap :math:<code>1 - \\lambda &lt; 1</code> of W")
    assert html.startswith("the gap <math") and "<mi>&#x003BB;</mi>" in html and "<code>" not in html
