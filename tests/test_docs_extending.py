"""docs/extending.md runs as written: its ``python`` blocks execute top to bottom in one namespace.

Each block is compiled under its own line number in docs/extending.md, so a failure points at the page.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[1] / "docs" / "extending.md"
_BLOCK = re.compile(r"^```python\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def _blocks() -> list[tuple[int, str]]:
    text = PAGE.read_text(encoding="utf-8")
    return [(text.count("\n", 0, m.start(1)) + 1, m.group(1)) for m in _BLOCK.finditer(text)]


def test_the_page_has_an_example_for_each_kind_of_addition() -> None:
    text = PAGE.read_text(encoding="utf-8")
    for heading in ("## A topology", "## A bound", "## An instance", "## An algorithm"):
        assert heading in text
    assert len(_blocks()) >= 4


def test_the_examples_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # nothing an example writes lands in the repository
    namespace: dict[str, object] = {"__name__": "docs_extending"}
    for line, source in _blocks():
        code = compile("\n" * (line - 1) + source, str(PAGE), "exec")
        exec(code, namespace)
