"""Formulas in the docs become MathML at build time (docs/hooks.py): no script, no network.

Needs the docs extra (mkdocs, latex2mathml), as ``make docs`` installs it; skipped without it.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

pytest.importorskip("mkdocs")
pytest.importorskip("latex2mathml")

DOCS = Path(__file__).resolve().parents[1] / "docs"
_spec = importlib.util.spec_from_file_location("docs_hooks", DOCS / "hooks.py")
hooks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(hooks)


def _render(markdown: str) -> str:
    """The hook's two passes around a stand-in for Markdown's own (a paragraph per block)."""
    page = SimpleNamespace()
    text = hooks.on_page_markdown(markdown, page, None, None)
    html = "\n".join(f"<p>{block.strip()}</p>" for block in text.split("\n\n") if block.strip())
    return hooks.on_page_content(html, page, None, None)


def test_inline_and_display_formulas_become_mathml_with_their_tag():
    html = _render("The gap $1-\\lambda$ enters as\n\n"
                   "$$\\frac{\\Delta L}{\\varepsilon^2\\sqrt{1-\\lambda}}$$ (T2)\n")
    assert '<math xmlns="http://www.w3.org/1998/Math/MathML" display="inline">' in html
    assert re.search(r'<div class="equation"><math [^>]*display="block">.*<msqrt>.*</math>'
                     r'<span class="equation-tag">\(T2\)</span></div>', html, flags=re.DOTALL)
    assert "DECBOUNDSMATH" not in html and "$" not in html


def test_code_and_plain_dollars_are_left_alone():
    markdown = ("Costs $5 and $6 today.\n\n```bash\necho $HOME $$\n```\n\nRun `x = $y$` as is; "
                "a price of 3$ stays.\n")
    text, formulas = hooks.math_to_placeholders(markdown)
    assert formulas == [] and text == markdown


def test_every_formula_of_the_docs_converts_and_the_headline_bounds_are_typeset():
    found = {}
    for page in sorted(DOCS.rglob("*.md")):
        text, formulas = hooks.math_to_placeholders(page.read_text(encoding="utf-8"))
        assert text.count("DECBOUNDSMATH") == len(formulas), page
        found[page.relative_to(DOCS).as_posix()] = formulas
    assert any('display="block"' in f for f in found["index.md"])  # Cor. 2's lower bound on the home page
    tags = {m for f in found["theory.md"] for m in re.findall(r'equation-tag">\((\w+)\)', f)}
    assert {"T1", "T2", "T3", "F3", "D6"} <= tags


def test_a_heading_with_a_formula_gets_an_id_from_its_words():
    text, formulas = hooks.math_to_placeholders("### §1.2 Function class $\\mathcal{F}_{\\Delta,L}$\n\n"
                                                "## Kept $x$ {#mine}\n\n```python\n# a $comment$\n```\n")
    assert text.startswith("### §1.2 Function class DECBOUNDSMATH0X {#12-function-class}\n")
    assert "## Kept DECBOUNDSMATH1X {#mine}" in text and "# a $comment$" in text and len(formulas) == 2


#: Pages whose prose formulas are all typeset: every page but the one a command generates (the verify
#: reports, whose verdict lines are the command's plain text). A Greek letter outside math and code there
#: is a formula written as text.
_NOT_CHECKED = {"results/verify-reports.md"}
TYPESET_PAGES = tuple(sorted(page.relative_to(DOCS).as_posix() for page in DOCS.rglob("*.md")
                             if page.relative_to(DOCS).as_posix() not in _NOT_CHECKED))
_GREEK = re.compile(r"[α-ωΔΘΛΣΦΨΩ√≤≥≈∇‖²³⁴₀₁ᵢ]|T_ε|x̄")


@pytest.mark.parametrize("page", TYPESET_PAGES)
def test_the_newcomer_pages_write_every_formula_as_math(page):
    text, _ = hooks.math_to_placeholders((DOCS / page).read_text(encoding="utf-8"))
    prose = hooks._CODE.sub("", text)
    prose = re.sub(r"!?\[[^\]]*\]\([^)]*\)|<!--.*?-->", "", prose)
    assert not _GREEK.findall(prose), [line for line in prose.splitlines() if _GREEK.search(line)]


def test_a_display_formula_indented_in_a_list_item_stays_in_the_item():
    markdown = "- a bound:\n\n    $$x \\le 1$$ (H9)\n\n    and more.\n- next\n"
    text, formulas = hooks.math_to_placeholders(markdown)
    assert "\n    DECBOUNDSMATH0X\n" in text and len(formulas) == 1 and "(H9)" in formulas[0]
