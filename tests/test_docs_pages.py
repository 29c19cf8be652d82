"""The pages of the documentation site run as written and print what they show, and the site's navigation
names every page.

Each page's ``python`` blocks execute top to bottom in one namespace per page, in a temporary directory,
each block compiled under its own line number so that a failure points at the page. A ``text`` block right
after a ``python`` block is what that block prints, compared line by line; on the landing page and the
tutorials (a newcomer's path) a block that prints must be followed by one. docs/extending.md has its own
test (tests/test_docs_extending.py); pages without Python blocks pass trivially.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
_BLOCK = re.compile(r"^```python\n(.*?)^```$", re.MULTILINE | re.DOTALL)
# A python block and the text block right after it (blank lines between): what the block prints.
_OUTPUT = re.compile(r"\s*^```text\n(.*?)^```$", re.MULTILINE | re.DOTALL)
#: Pages whose blocks another test runs.
ELSEWHERE = {"extending.md"}
PAGES = sorted(path.relative_to(DOCS).as_posix() for path in DOCS.rglob("*.md")
               if path.relative_to(DOCS).as_posix() not in ELSEWHERE)


#: A newcomer's path: each printing block shows its output.
NEWCOMER = ("index.md", "getting-started.md", *sorted(f"tutorials/{path.name}"
                                                       for path in (DOCS / "tutorials").glob("*.md")))


def _blocks(page: str) -> list[tuple[int, str]]:
    return [(line, source) for line, source, _ in _blocks_and_outputs(page)]


def _blocks_and_outputs(page: str) -> list[tuple[int, str, str | None]]:
    """(line, source, the output shown after it or None) for each python block of `page`."""
    text = (DOCS / page).read_text(encoding="utf-8")
    found = []
    for m in _BLOCK.finditer(text):
        output = _OUTPUT.match(text, m.end() + 1)
        found.append((text.count("\n", 0, m.start(1)) + 1, m.group(1), output.group(1) if output else None))
    return found


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.strip("\n").splitlines()]


def test_the_output_blocks_are_found() -> None:
    assert _blocks_and_outputs("tutorials/measure.md")[0][2] == "2612 11 converged\n"


def test_the_tutorials_have_examples() -> None:
    for page in ("predict", "measure", "tune", "verify", "worst-case", "sweeps"):
        assert _blocks(f"tutorials/{page}.md"), page


@pytest.mark.parametrize("page", [page for page in PAGES if _blocks(page)])
def test_the_examples_of_the_page_run(page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # nothing an example writes lands in the repository
    namespace: dict[str, object] = {"__name__": "docs_page"}
    for line, source, shown in _blocks_and_outputs(page):
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(compile("\n" * (line - 1) + source, str(DOCS / page), "exec"), namespace)
        where = f"{page}, the block at line {line}"
        if shown is not None:
            assert _lines(printed.getvalue()) == _lines(shown), \
                f"{where} prints {printed.getvalue()!r}, not what the page shows"
        elif page in NEWCOMER:
            assert not printed.getvalue(), f"{where} prints {printed.getvalue()!r} and shows no output block"


def test_every_page_of_the_navigation_exists() -> None:
    """The converse (every page listed) is left to the docs' maintainer: a page another change adds is built
    without a place in the navigation (mkdocs.yml: ``omitted_files: info``) until it gets one."""
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    listed = set(re.findall(r":\s*([\w/.-]+\.md)\s*$", config, flags=re.MULTILINE))
    assert {"index.md", "theory.md", "errata.md", "tutorials/verify.md", "api/bounds.md"} <= listed
    missing = sorted(page for page in listed if not (DOCS / page).is_file())
    assert not missing, missing


def test_every_image_has_alt_text_that_says_what_it_shows() -> None:
    pages = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
    images = [(page.relative_to(ROOT).as_posix(), alt) for page in pages
              for alt in re.findall(r"!\[([^\]]*)\]\(", page.read_text(encoding="utf-8"))]
    assert images
    poor = [(page, alt) for page, alt in images if len(alt.split()) < 5 or alt.strip().endswith(".png")]
    assert not poor, poor


def test_every_figure_of_the_results_is_embedded_and_committed() -> None:
    spec = importlib.util.spec_from_file_location("docs_images", DOCS / "images.py")
    images = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(images)  # type: ignore[union-attr]
    text = (DOCS / "results" / "figures.md").read_text(encoding="utf-8")
    for name in images.FIGURES:
        assert f"](../img/{name}.png)" in text, name
        assert (DOCS / "img" / f"{name}.png").is_file(), name
