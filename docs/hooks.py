"""MkDocs hooks: the installed layout of decbounds for griffe, and formulas typeset as MathML.

1. The folders ``bounds/``, ``instances/``, ... sit at the top of the repository and are installed as
   ``decbounds.bounds``, ``decbounds.instances``, ... by setuptools' ``package-dir`` mapping (pyproject.toml).
   griffe reads source files without importing them and looks for ``decbounds/bounds/`` next to
   ``decbounds/__init__.py``; `on_config` builds ``build/docs-src/decbounds/`` with one symlink per
   subpackage before mkdocstrings runs, so the API pages are generated from the sources as they are.
2. ``$...$`` (inline) and ``$$...$$`` (display, one line, optionally followed by an equation tag such as
   ``(T2)``) in a page's Markdown, outside code, become MathML when the site is built (latex2mathml, pure
   Python): no script and no network at build or view time, and browsers render MathML natively.
   `on_page_markdown` puts a placeholder where each formula goes (so that Markdown never reads the MathML)
   and `on_page_content` puts the MathML in.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from latex2mathml.converter import convert
from mkdocs.plugins import event_priority

__all__ = ["SOURCE_TREE", "math_to_placeholders", "on_config", "on_page_content", "on_page_markdown"]

ROOT = Path(__file__).resolve().parents[1]
#: Where the tree goes (build/ is ignored by git); mkdocs.yml points mkdocstrings' ``paths`` here.
SOURCE_TREE = ROOT / "build" / "docs-src"


@event_priority(100)  # before mkdocstrings' on_config, which resolves its search paths once
def on_config(config: Any) -> Any:
    """Build the tree: copies of ``decbounds/*.py`` plus one symlink per subpackage.

    The top-level files are copied, not linked: griffe resolves a linked ``__init__.py`` to its real
    folder and would look for the subpackages there.
    """
    package = SOURCE_TREE / "decbounds"
    package.mkdir(parents=True, exist_ok=True)
    for source in sorted((ROOT / "decbounds").glob("*.py")):
        copy = package / source.name
        if not copy.is_file() or copy.read_bytes() != source.read_bytes():
            copy.unlink(missing_ok=True)
            copy.write_bytes(source.read_bytes())
    folders = ("bounds", "instances", "oracles", "algorithms", "paper_figures", "verify")
    links = {folder: ROOT / folder for folder in folders}
    for name, target in links.items():
        link = package / name
        if link.is_symlink() and Path(os.readlink(link)) == target:
            continue
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(target)
    return config


# Fenced code blocks and inline code spans: never typeset inside them.
_CODE = re.compile(r"^(?P<fence>```|~~~).*?^(?P=fence)[ \t]*$|(?P<ticks>`+).+?(?P=ticks)",
                   re.MULTILINE | re.DOTALL)
# $$...$$ alone on its line, an optional equation tag after it; $...$ inline (no blank right inside the $).
_DISPLAY = re.compile(r"^[ \t]*\$\$(?P<tex>.+?)\$\$[ \t]*(?P<tag>\([A-Z]\d+\))?[ \t]*$", re.MULTILINE)
_INLINE = re.compile(r"(?<![\\$\w])\$(?P<tex>[^\s$](?:[^$\n]*[^\s$\\])?)\$(?![\w$])")
_PLACEHOLDER = "DECBOUNDSMATH{}X"
_FORMULAS_KEY = "decbounds_math"


def _typeset(text: str, formulas: list[str]) -> str:
    """`text` (no code in it) with each formula replaced by a placeholder; the MathML appended to
    `formulas`."""

    def display(match: re.Match[str]) -> str:
        math = convert(match["tex"].strip(), display="block")
        tag = match["tag"]
        html = (f'<div class="equation">{math}<span class="equation-tag">{tag}</span></div>' if tag
                else f'<div class="equation">{math}</div>')
        formulas.append(html)
        return "\n" + _PLACEHOLDER.format(len(formulas) - 1) + "\n"

    def inline(match: re.Match[str]) -> str:
        formulas.append(convert(match["tex"], display="inline"))
        return _PLACEHOLDER.format(len(formulas) - 1)

    return _INLINE.sub(inline, _DISPLAY.sub(display, text))


def math_to_placeholders(markdown: str) -> tuple[str, list[str]]:
    """The page's Markdown with every formula outside code replaced by a placeholder, and the MathML of
    each (`on_page_content` swaps them back).

    Parameters
    ----------
    markdown : str

    Returns
    -------
    (str, list of str)
    """
    formulas: list[str] = []
    pieces, last = [], 0
    for code in _CODE.finditer(markdown):
        pieces.append(_typeset(markdown[last:code.start()], formulas))
        pieces.append(code.group(0))
        last = code.end()
    pieces.append(_typeset(markdown[last:], formulas))
    return "".join(pieces), formulas


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Formulas out of the Markdown (placeholders in), kept on the page for `on_page_content`."""
    markdown, formulas = math_to_placeholders(markdown)
    setattr(page, _FORMULAS_KEY, formulas)
    return markdown


def on_page_content(html: str, page: Any, config: Any, files: Any) -> str:
    """The MathML in, where the placeholders are (a display formula's paragraph dropped)."""
    for index, formula in enumerate(getattr(page, _FORMULAS_KEY, [])):
        placeholder = _PLACEHOLDER.format(index)
        html = html.replace(f"<p>{placeholder}</p>", formula).replace(placeholder, formula)
    return html
