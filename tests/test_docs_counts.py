"""A count of the catalog in the docs is the catalog's size (a count written in prose goes stale as entries
are added): any "N-entry catalog" or "catalog of N entries" in the pages must match
``len(bounds.names())``."""

from __future__ import annotations

import re
from pathlib import Path

from decbounds import bounds

ROOT = Path(__file__).resolve().parents[1]
_CLAIM = re.compile(r"\b(\d+)[- ]entr(?:y|ies) catalog|\bcatalog (?:of|with|holds) (\d+) (?:entries|rates)")


def _claims(text: str) -> list[int]:
    return [int(a or b) for a, b in _CLAIM.findall(text)]


def test_the_claim_pattern_sees_the_old_sentence():
    assert _claims("sympy symbols, the `Rate` record, a 20-entry catalog (Thm 1, Cor 2)") == [20]
    assert _claims("the catalog of 31 entries") == [31]


def test_every_catalog_count_in_the_docs_is_the_catalog_size():
    size = len(bounds.names())
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    wrong = [(page.relative_to(ROOT).as_posix(), n) for page in pages
             for n in _claims(page.read_text(encoding="utf-8")) if n != size]
    assert not wrong, f"the catalog has {size} entries; the docs say: {wrong}"
