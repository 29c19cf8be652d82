"""MkDocs hook: a symlink tree that gives griffe (mkdocstrings' reader) the installed layout of decbounds.

The folders ``bounds/``, ``instances/``, ... sit at the top of the repository and are installed as
``decbounds.bounds``, ``decbounds.instances``, ... by setuptools' ``package-dir`` mapping (pyproject.toml).
griffe reads source files without importing them and looks for ``decbounds/bounds/`` next to
``decbounds/__init__.py``; this hook builds ``build/docs-src/decbounds/`` with one symlink per subpackage
before mkdocstrings runs, so the API pages are generated from the sources as they are.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from mkdocs.plugins import event_priority

__all__ = ["SOURCE_TREE", "on_config"]

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
    folders = ("bounds", "instances", "oracles", "algorithms", "paper_figures")
    links = {folder: ROOT / folder for folder in folders}
    for name, target in links.items():
        link = package / name
        if link.is_symlink() and Path(os.readlink(link)) == target:
            continue
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(target)
    return config
