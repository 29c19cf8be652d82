"""Pages for users speak to users: no erratum ids and no issue numbers of this project in their prose.

The errata register (docs/errata.md) keeps its ids; a page that relies on a finding links to its heading
("see [errata](errata.md#e17-...)"). Code blocks, inline code and link targets are not prose.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"
#: The register of errata itself (its headings are the ids) and the page a command generates.
_NOT_CHECKED = {"errata.md", "results/verify-reports.md"}
PAGES = sorted(page.relative_to(DOCS).as_posix() for page in DOCS.rglob("*.md")
               if page.relative_to(DOCS).as_posix() not in _NOT_CHECKED)
_CODE = re.compile(r"^(```|~~~).*?^\1[ \t]*$|(`+).+?\2", re.MULTILINE | re.DOTALL)
_LINK_TARGET = re.compile(r"\]\([^)]*\)|\{#[^}]*\}")
_ERRATUM_ID = re.compile(r"\bE\d{1,3}\b")
# Another project's issue ("cvxpy issue 2257") is a citation, not this project's history.
_ISSUE = re.compile(r"(?<!cvxpy )\b[Ii]ssues? \d+")


def _prose(page: str) -> str:
    text = _CODE.sub(lambda match: "\n" * match.group(0).count("\n"), (DOCS / page).read_text("utf-8"))
    return _LINK_TARGET.sub("]", text)


@pytest.mark.parametrize("page", PAGES)
def test_user_pages_cite_no_erratum_id_and_no_issue_number(page):
    lines = [f"{number}: {line.strip()}" for number, line in enumerate(_prose(page).splitlines(), 1)
             if _ERRATUM_ID.search(line) or _ISSUE.search(line)]
    assert not lines, lines


def test_the_check_sees_an_erratum_id_and_an_issue_number():
    assert _ERRATUM_ID.search("the exact condition is E27).")
    assert _ISSUE.search("the routes of issue 30") and not _ISSUE.search("(cvxpy issue 2257)")
    assert not _ERRATUM_ID.search(_LINK_TARGET.sub("]", "see [errata](errata.md#e27-when)"))
