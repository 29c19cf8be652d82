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
   and `on_page_content` puts the MathML in. Docstrings write inline formulas as numpydoc does,
   with the ``:math:`` role (``:math:`T_\varepsilon```, in a raw docstring); mkdocstrings renders the
   role's text as code, and `on_page_content` typesets it (`docstring_math`).
3. The gallery (results/gallery.md) is built from the figure registry: every image a registered figure
   embeds, with its alt text and finding (docs/gallery.py) and the command that makes it (`gallery_markdown`).
4. An API page lists its package's exported names by use: ``<!-- api: run tune Result -->`` becomes one
   mkdocstrings entry per name, and ``<!-- api: rest -->`` every name of the package's ``__all__`` that the
   page has not listed yet, so that a name exported later still appears (`api_markdown`).
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import re
from html import unescape
from pathlib import Path
from typing import Any

from latex2mathml.converter import convert
from markdown.extensions.toc import slugify
from mkdocs.plugins import event_priority

__all__ = ["SOURCE_TREE", "api_markdown", "api_path", "docstring_math", "gallery_markdown",
           "math_to_placeholders", "on_config", "on_page_content", "on_page_markdown"]

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
    folders = ("bounds", "instances", "oracles", "algorithms", "pep", "paper_figures", "verify")
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
# A display formula keeps its indentation: indented by four spaces it stays inside a list item.
_DISPLAY = re.compile(r"^(?P<indent>[ \t]*)\$\$(?P<tex>.+?)\$\$[ \t]*(?P<tag>\([A-Z]\d+\))?[ \t]*$",
                      re.MULTILINE)
_INLINE = re.compile(r"(?<![\\$\w])\$(?P<tex>[^\s$](?:[^$\n]*[^\s$\\])?)\$(?![\w$])")
_PLACEHOLDER = "DECBOUNDSMATH{}X"
_FORMULAS_KEY = "decbounds_math"


# A heading with a formula and no explicit id gets an id made from its words alone (a placeholder's would
# change whenever a formula is added above it).
_HEADING = re.compile(r"^(?P<hashes>#{1,6})[ \t]+(?P<title>[^\n]*\$[^\n]*\$[^\n]*?)[ \t]*$", re.MULTILINE)
_ATTRIBUTES = re.compile(r"\{:?[ \t]*[#.][^}]*\}$")


def _heading_ids(markdown: str) -> str:
    def with_id(match: re.Match[str]) -> str:
        if _ATTRIBUTES.search(match["title"]):
            return match.group(0)
        words = _INLINE.sub(" ", match["title"])
        return f"{match['hashes']} {match['title']} {{#{slugify(words, '-')}}}"

    return _HEADING.sub(with_id, markdown)


def _typeset(text: str, formulas: list[str]) -> str:
    """`text` (no code in it) with each formula replaced by a placeholder; the MathML appended to
    `formulas`."""

    def display(match: re.Match[str]) -> str:
        math = convert(match["tex"].strip(), display="block")
        tag = match["tag"]
        html = (f'<div class="equation">{math}<span class="equation-tag">{tag}</span></div>' if tag
                else f'<div class="equation">{math}</div>')
        formulas.append(html)
        return "\n" + match["indent"] + _PLACEHOLDER.format(len(formulas) - 1) + "\n"

    def inline(match: re.Match[str]) -> str:
        formulas.append(convert(match["tex"], display="inline"))
        return _PLACEHOLDER.format(len(formulas) - 1)

    return _INLINE.sub(inline, _DISPLAY.sub(display, _heading_ids(text)))


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


_API = re.compile(r"^<!-- api: (?P<names>[\w ]+) -->[ \t]*$", re.MULTILINE)


def api_path(package: str, name: str) -> str:
    """The dotted path mkdocstrings documents ``package.name`` under: the name in the package, or, when a
    submodule has the same name (``algorithms.tune``), the object in the module that defines it.

    Parameters
    ----------
    package : str
        ``decbounds.algorithms``, ...
    name : str
        A name of its ``__all__``.

    Returns
    -------
    str
    """
    module = importlib.import_module(package)
    obj = getattr(module, name)
    shadowed = os.path.exists(os.path.join(os.path.dirname(module.__file__ or ""), name + ".py"))
    if shadowed and (inspect.isclass(obj) or inspect.isfunction(obj)):
        return f"{obj.__module__}.{obj.__qualname__}"
    return f"{package}.{name}"


def api_markdown(markdown: str, package: str) -> str:
    """Each ``<!-- api: NAMES -->`` line of an API page as one mkdocstrings entry per name; ``rest`` stands
    for the names of the package's ``__all__`` not listed before it.

    Parameters
    ----------
    markdown : str
    package : str
        The package the page documents (``decbounds.algorithms``).

    Returns
    -------
    str

    Raises
    ------
    ValueError
        If the page lists a name the package does not export.
    """
    exported = list(importlib.import_module(package).__all__)
    listed: set[str] = set()

    def entries(match: re.Match[str]) -> str:
        names = match["names"].split()
        if names == ["rest"]:
            names = [name for name in exported if name not in listed]
        unknown = [name for name in names if name not in exported]
        if unknown:
            raise ValueError(f"the API page of {package} lists {unknown}, which it does not export")
        listed.update(names)
        blocks = []
        for name in names:
            path = api_path(package, name)
            heading = f'\n      heading: "{package}.{name}"' if path != f"{package}.{name}" else ""
            blocks.append(f"::: {path}\n    options:\n      heading_level: 3\n"
                          f"      show_if_no_docstring: true{heading}\n")
        return "\n".join(blocks)

    return _API.sub(entries, markdown)


_GALLERY = "<!-- gallery -->"


def _docs_module(name: str) -> Any:
    """A build tool of docs/ (not a package) imported from its file."""
    spec = importlib.util.spec_from_file_location(f"docs_{name}", ROOT / "docs" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def gallery_markdown() -> str:
    """Every image of every registered figure, in the order the figures are made: a heading, the image with
    its alt text, the finding, and the command that makes it.

    Returns
    -------
    str
    """
    from decbounds.paper_figures.registry import FIGURES

    text = _docs_module("gallery").FIGURE_TEXT
    descriptions = FIGURES.descriptions()
    parts = []
    for name, figure in FIGURES.objects().items():
        for stem in figure.images:
            description = descriptions.get(name) or name
            alt, finding = text.get(stem, (description, description[:1].upper() + description[1:] + "."))
            alt = alt.replace('"', "'").replace("[", "(").replace("]", ")")
            parts.append(f"## {stem.replace('_', ' ').capitalize()}\n\n"
                         f"[![{alt}](../img/{stem}.png)](../img/{stem}.png)\n\n{finding}\n\n"
                         f"`decbounds figures --only {name}` (quick; `--full` for the full set)\n")
    return "\n".join(parts)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """API entries expanded; formulas out of the Markdown (placeholders in), kept on the page for
    `on_page_content`."""
    source = page.file.src_uri if getattr(page, "file", None) is not None else ""
    if _GALLERY in markdown:
        markdown = markdown.replace(_GALLERY, gallery_markdown())
    if source.startswith("api/") and _API.search(markdown):
        markdown = api_markdown(markdown, "decbounds." + source.removeprefix("api/").removesuffix(".md"))
    markdown, formulas = math_to_placeholders(markdown)
    setattr(page, _FORMULAS_KEY, formulas)
    return markdown


# What mkdocstrings makes of a docstring's :math:`...` role: the role's name, then the formula as code.
_ROLE = re.compile(r":math:<code>(?P<tex>[^<]+)</code>")


def docstring_math(html: str) -> str:
    """The rendered docstrings' ``:math:`...``` formulas as MathML.

    Parameters
    ----------
    html : str

    Returns
    -------
    str
    """
    return _ROLE.sub(lambda match: convert(unescape(match["tex"]), display="inline"), html)


def on_page_content(html: str, page: Any, config: Any, files: Any) -> str:
    """The MathML in, where the placeholders are (a display formula's paragraph dropped), and the docstrings'
    formulas typeset."""
    html = docstring_math(html)
    formulas = getattr(page, _FORMULAS_KEY, [])
    for index, formula in enumerate(formulas):
        placeholder = _PLACEHOLDER.format(index)
        html = html.replace(f"<p>{placeholder}</p>", formula).replace(placeholder, formula)
    # a heading's formula appears in the table of contents too (and, stripped of tags, in the page's title)
    items = list(getattr(page, "toc", None) or [])
    while items:
        item = items.pop()
        item.title = re.sub(r"DECBOUNDSMATH(\d+)X", lambda match: formulas[int(match[1])], item.title)
        items.extend(item.children)
    if "DECBOUNDSMATH" in (getattr(page, "title", None) or ""):
        page.title = re.sub(r"DECBOUNDSMATH(\d+)X", lambda match: formulas[int(match[1])], page.title)
    return html
