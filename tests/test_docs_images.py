"""docs/images.py keeps every line colour of a figure distinct: the 256-colour palette is the image's most
frequent exact colours (median cut merged DSGT's thin green into CHOCO-SGD's teal in the compression
figure's docs image)."""

from __future__ import annotations

import importlib.util
import io
import pathlib

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from PIL import Image

DOCS = pathlib.Path(__file__).resolve().parents[1] / "docs"


def _images_module():
    spec = importlib.util.spec_from_file_location("docs_images", DOCS / "images.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def test_thin_lines_of_close_colours_stay_distinct() -> None:
    green, teal = "#2ca02c", "#008080"  # tab:green (DSGT), teal (CHOCO-SGD)
    fig, axes = plt.subplots(figsize=(6, 3), dpi=100)
    x = np.linspace(0, 1, 50)
    for k in range(24):  # anti-aliased lines of many colours: more than 256 colours, the palette must choose
        axes.plot(x, np.sin(6 * x + k) + k / 4, lw=1.5, color=plt.cm.viridis(k / 24), marker="o", ms=3)
    axes.plot(x, x + 2, lw=1.5, color=green, ls="--")
    axes.plot(x, x + 3, lw=1.5, color=teal, ls="--")
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    plt.close(fig)
    image = Image.open(io.BytesIO(buffer.getvalue()))
    assert len(image.convert("RGB").getcolors(10**7)) > 256
    colours = {colour for _, colour in _images_module().quantize(image).convert("RGB").getcolors(10**7)}
    assert (0x2C, 0xA0, 0x2C) in colours and (0x00, 0x80, 0x80) in colours
