"""Every reference in the repository resolves inside the repository.

A user has only the repository: no file may point to a path outside it (the project's old shared notes), and
every citation of the docs must land on something that exists:

- ``§4.2`` (bare or as ``docs/theory.md §4.2``) must be a ``§`` heading of docs/theory.md;
- ``docs/theory.md (T2)`` / ``Eq. (T2)`` must be an equation tag of docs/theory.md;
- ``docs/errata.md E17`` (and ``E17`` inside docs/) must be an ``### E17`` entry of docs/errata.md;
- ``docs/<name>.md`` must exist;
- ``tests/<file>.py::<function>`` (as docs/errata.md names the test pinning each entry) must be defined there.

Citations of other works that use a section sign (a book's "§11.3") are listed in ``EXTERNAL_CITATIONS``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
SKIP_DIRS = {".git", ".venv", "__pycache__", "out", "build", "dist", ".hypothesis", ".pytest_cache",
             ".ruff_cache"}

# Built from pieces so that this file does not match its own patterns.
_OUTSIDE = [
    re.compile(r"\.\./" + "shared"),
    re.compile(r"/work/" + "shared"),
    re.compile(r"\b" + "THEORY" + r"\b"),
    re.compile(r"\b" + "ARCHITECTURE" + r"\b"),
]
#: A section-and-item citation of an erratum ("§11 item 17", "§11 items 15-16", "§11.17"): cite E17.
_OLD_ITEM = re.compile("§" + r"\s*11(?:\s+items?\b|\.\d)")

_SECTION = re.compile("§" + r"\s?(\d+(?:\.\d+)*|[A-Z](?:\.\d+)?)")
_TAG = re.compile(r"(?:docs/theory\.md,?|Eq\.|Eqs\.)\s+\(([A-Z]\d+)\)")
_ERRATA = re.compile(r"(?:docs/)?errata(?:\.md)?,?\s+((?:E\d+(?:\s*(?:,|–|-|and|to)\s*)?)+)")
_E_NUMBER = re.compile(r"\bE(\d+)\b")
_DOC_FILE = re.compile(r"\bdocs/([\w-]+\.md)\b")
_TEST_NODE = re.compile(r"\b(tests/[\w/]+\.py)::(\w+)")

#: Section signs that cite other works, not docs/theory.md.
EXTERNAL_CITATIONS = [
    re.compile("Vandenberghe " + "§"),
]


def _scanned_files() -> list[Path]:
    found = []
    for path in ROOT.rglob("*"):
        parts = path.relative_to(ROOT).parts  # every virtual environment (.venv, .venv-oldest) is skipped
        if any(part in SKIP_DIRS or part.endswith(".egg-info") or part.startswith(".venv") for part in parts):
            continue
        if path == Path(__file__).resolve():
            continue  # this file spells out the bad patterns it looks for
        if path.is_file() and (path.suffix in {".py", ".md", ".toml"} or path.name == "Makefile"):
            found.append(path)
    return sorted(found)


FILES = _scanned_files()


def _theory_sections() -> set[str]:
    headings = re.findall("^#+ §" + r"(\S+)", (DOCS / "theory.md").read_text(), flags=re.MULTILINE)
    return set(headings)


def _theory_tags() -> set[str]:
    return set(re.findall(r"\(([A-Z]\d+)\)\s*$", (DOCS / "theory.md").read_text(), flags=re.MULTILINE))


def _errata_entries() -> set[str]:
    return set(re.findall(r"^### E(\d+) ", (DOCS / "errata.md").read_text(), flags=re.MULTILINE))


def _numbers(run: str) -> list[str]:
    """E numbers of a run such as "E15, E16", "E1-E23" or "E24 to E39", ranges expanded."""
    numbers = [int(x) for x in _E_NUMBER.findall(run)]
    out = set(numbers)
    for a, b in re.findall(r"E(\d+)\s*(?:–|-|to)\s*E(\d+)", run):
        out.update(range(int(a), int(b) + 1))
    return [str(x) for x in sorted(out)]


def _external(line: str, position: int) -> bool:
    """Whether the section sign at ``position`` cites another work (``EXTERNAL_CITATIONS``)."""
    return any(pattern.search(line[: position + 1]) for pattern in EXTERNAL_CITATIONS)


def _lines(path: Path) -> list[tuple[int, str]]:
    return list(enumerate(path.read_text(encoding="utf-8").splitlines(), start=1))


def _where(path: Path, number: int) -> str:
    return f"{path.relative_to(ROOT)}:{number}"


def test_the_docs_exist_and_have_anchors() -> None:
    for name in ("theory.md", "errata.md", "architecture.md"):
        assert (DOCS / name).is_file(), name
    assert {"1", "3.2", "4.2", "11", "16"} <= _theory_sections()
    assert {"T1", "T2", "H7", "G2"} <= _theory_tags()
    entries = _errata_entries()
    assert {str(k) for k in range(1, 24)} <= entries  # the errata keep their numbers


def test_no_reference_leaves_the_repository() -> None:
    bad = [f"{_where(path, number)}: {line.strip()}" for path in FILES for number, line in _lines(path)
           if any(pattern.search(line) for pattern in _OUTSIDE)]
    assert not bad, "references to files a user does not have:\n" + "\n".join(bad)


def test_no_old_style_erratum_reference() -> None:
    bad = [f"{_where(path, number)}: {line.strip()}" for path in FILES for number, line in _lines(path)
           for match in _OLD_ITEM.finditer(line) if not _external(line, match.start())]
    assert not bad, "cite errata as docs/errata.md E<N>:\n" + "\n".join(bad)


def test_every_section_reference_is_a_heading_of_the_theory() -> None:
    sections = _theory_sections()
    bad = []
    for path in FILES:
        for number, line in _lines(path):
            for match in _SECTION.finditer(line):
                if _external(line, match.start()):
                    continue
                if match.group(1) not in sections:
                    bad.append(f"{_where(path, number)}: §{match.group(1)} in {line.strip()!r}")
    assert not bad, "section references that docs/theory.md has no heading for:\n" + "\n".join(bad)


def test_every_equation_tag_exists() -> None:
    tags = _theory_tags()
    bad = [f"{_where(path, number)}: ({tag})" for path in FILES for number, line in _lines(path)
           for tag in _TAG.findall(line) if tag not in tags]
    assert not bad, "equation tags docs/theory.md does not define:\n" + "\n".join(bad)


def test_every_errata_reference_is_an_entry() -> None:
    entries = _errata_entries()
    bad = []
    for path in FILES:
        for number, line in _lines(path):
            runs = _ERRATA.findall(line)
            if path.parent == DOCS:  # inside the docs every E<N> is an erratum
                runs.append(line)
            for run in runs:
                bad += [f"{_where(path, number)}: E{e}" for e in _numbers(run) if e not in entries]
    assert not bad, "errata entries docs/errata.md does not have:\n" + "\n".join(bad)


def test_every_docs_file_reference_exists() -> None:
    bad = [f"{_where(path, number)}: docs/{name}" for path in FILES for number, line in _lines(path)
           for name in _DOC_FILE.findall(line) if not (DOCS / name).is_file()]
    assert not bad, "\n".join(bad)


def test_every_cited_test_exists() -> None:
    bad = []
    for path in sorted(DOCS.glob("*.md")):
        for number, line in _lines(path):
            for file, function in _TEST_NODE.findall(line):
                target = ROOT / file
                if not target.is_file() or not re.search(rf"^\s*def {function}\(", target.read_text(),
                                                         flags=re.MULTILINE):
                    bad.append(f"{_where(path, number)}: {file}::{function}")
    assert not bad, "tests that the docs cite but that do not exist:\n" + "\n".join(bad)


@pytest.mark.parametrize("text", ["see §99 of the theory", "docs/errata.md E999", "(" + "THEORY" + ".md)"])
def test_the_checks_catch_bad_references(text: str) -> None:
    sections, entries = _theory_sections(), _errata_entries()
    failing = (
        any(pattern.search(text) for pattern in _OUTSIDE)
        or any(m.group(1) not in sections for m in _SECTION.finditer(text))
        or any(e not in entries for run in _ERRATA.findall(text) for e in _numbers(run))
    )
    assert failing
