"""The gallery (docs/results/gallery.md) is built from the figure registry at build time (docs/hooks.py):
every image a registered figure embeds, with alt text, its finding and the command that makes it.

Needs the docs extra (mkdocs, latex2mathml), as ``make docs`` installs it; skipped without it.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest
from decbounds.paper_figures.registry import FIGURES, docs_images, register_figure

pytest.importorskip("mkdocs")
pytest.importorskip("latex2mathml")

DOCS = Path(__file__).resolve().parents[1] / "docs"
_spec = importlib.util.spec_from_file_location("docs_hooks_gallery", DOCS / "hooks.py")
hooks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(hooks)


def test_every_registered_image_is_in_the_gallery_with_its_command() -> None:
    text = hooks.gallery_markdown()
    for name, figure in FIGURES.objects().items():
        for stem in figure.images:
            assert f"](../img/{stem}.png)" in text, stem
        if figure.images:
            assert f"`decbounds figures --only {name}`" in text, name
    assert "<!-- gallery -->" in (DOCS / "results" / "gallery.md").read_text(encoding="utf-8")


def test_every_gallery_entry_names_a_registered_image() -> None:
    assert set(hooks._docs_module("gallery").FIGURE_TEXT) <= set(docs_images())


def test_a_figure_registered_later_appears_with_its_description() -> None:
    register_figure("gallery_probe", lambda out_dir, *, full=False, tiny=False: [], images=("gallery_probe",),
                    description="a probe figure of the gallery test")
    try:
        text = hooks.gallery_markdown()
    finally:
        FIGURES.unregister("gallery_probe")
    assert "![a probe figure of the gallery test](../img/gallery_probe.png)" in text
    assert "`decbounds figures --only gallery_probe`" in text


def test_the_findings_write_their_formulas_as_math() -> None:
    text, formulas = hooks.math_to_placeholders(hooks.gallery_markdown())
    prose = re.sub(r"!\[[^\]]*\]\([^)]*\)", "", text)  # alt text is plain words
    assert formulas and not re.findall(r"[α-ωΔΘΛΣΦΨΩ]|T_ε", prose)
