"""What the package index shows: authors and project URLs in pyproject.toml, and a page of
its own (``README.pypi.md``) that opens with what decbounds is, not with a clone's set-up commands, and
whose every link is absolute (a relative link is broken there)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def _readme() -> str:
    readme = PROJECT["readme"]
    path = ROOT / (readme["file"] if isinstance(readme, dict) else readme)
    return path.read_text(encoding="utf-8")


def test_the_index_page_is_its_own_and_opens_with_the_project():
    readme = PROJECT["readme"]
    assert isinstance(readme, dict) and readme["content-type"] == "text/markdown"
    assert readme["file"] != "README.md"
    text = _readme()
    first_paragraph = text.split("\n\n")[1]
    assert first_paragraph.startswith("decbounds makes the theory of Lu & De Sa")
    assert not any(line.lstrip().startswith("make ") for line in text.splitlines())  # no clone's commands


def test_every_link_of_the_index_page_is_absolute():
    links = _LINK.findall(_readme())
    assert links, "no link found: the pattern or the page changed"
    relative = [link for link in links if not link.startswith("https://")]
    assert not relative, relative


def test_the_metadata_names_authors_and_urls():
    assert PROJECT["authors"] and all(author.get("name") for author in PROJECT["authors"])
    urls = PROJECT["urls"]
    assert {"Homepage", "Documentation", "Source"} <= set(urls)
    assert all(url.startswith("https://") for url in urls.values())


def test_the_example_of_the_index_page_runs_as_quoted(capsys):
    (block,) = re.findall(r"```python\n(.*?)```", _readme(), flags=re.S)
    exec(compile(block, "README.pypi.md", "exec"), {})
    assert capsys.readouterr().out.split() == ["6.58e+06", "2612", "11"]
