"""Copy the figures of a run into docs/img/ for the site: ``python docs/images.py SOURCE_DIR``.

``make docs-images`` runs the quick figure set into build/figures/ and then this script. Each PNG is
reduced to a 256-colour palette with Pillow (a matplotlib dependency), which keeps the committed images
about a third of their size. The palette is the image's 256 most frequent exact colours (`quantize`), every
other pixel mapped to the nearest without dithering: a line colour is never merged into another (median cut
turned DSGT's thin green into CHOCO-SGD's teal), only anti-aliasing blends move to a nearby entry.
"""

from __future__ import annotations

import sys
from pathlib import Path

from decbounds.paper_figures.registry import docs_images
from PIL import Image

__all__ = ["FIGURES", "TARGET", "copy_figures", "main", "quantize"]

#: The figures the results pages embed (docs/results/figures.md), as `make figures` names them: each
#: registered figure's ``images`` (``paper_figures.registry.register_figure``), read without importing a
#: figure module.
FIGURES: tuple[str, ...] = docs_images()
TARGET = Path(__file__).resolve().parent / "img"


def quantize(image: Image.Image, colors: int = 256) -> Image.Image:
    """``image`` with a palette of its ``colors`` most frequent exact colours, every pixel mapped to the
    nearest of them without dithering (module docstring).

    Parameters
    ----------
    image : PIL.Image.Image
        A figure, any mode.
    colors : int
        The palette's size.

    Returns
    -------
    PIL.Image.Image
        Mode "P".
    """
    rgb = image.convert("RGB")
    counts = rgb.getcolors(maxcolors=rgb.width * rgb.height) or []
    frequent = [colour for _, colour in sorted(counts, key=lambda item: -item[0])[:colors]]
    palette = Image.new("P", (1, 1))
    flat = [channel for colour in frequent for channel in colour]
    palette.putpalette(flat + flat[:3] * (colors - len(frequent)))
    return rgb.quantize(palette=palette, dither=Image.Dither.NONE)


def copy_figures(source: Path, target: Path = TARGET) -> list[Path]:
    """Quantize and copy ``source/<name>.png`` for every name of `FIGURES` into `target`.

    Parameters
    ----------
    source : pathlib.Path
        The output folder of a figure run (``python -m decbounds.paper_figures --out SOURCE``).
    target : pathlib.Path
        Where the site's images live.

    Returns
    -------
    list of pathlib.Path
        The files written.

    Raises
    ------
    FileNotFoundError
        Naming the figures the run did not write.
    """
    missing = [name for name in FIGURES if not (source / f"{name}.png").is_file()]
    if missing:
        raise FileNotFoundError(f"{source} has no {', '.join(f'{name}.png' for name in missing)}")
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for name in FIGURES:
        with Image.open(source / f"{name}.png") as image:
            quantize(image).save(target / f"{name}.png", optimize=True)
        written.append(target / f"{name}.png")
    return written


def main(argv: list[str]) -> int:
    """The command line: one argument, the run's output folder; returns the exit status."""
    if len(argv) != 1:
        print("usage: python docs/images.py SOURCE_DIR", file=sys.stderr)
        return 2
    for path in copy_figures(Path(argv[0])):
        print(f"{path}: {path.stat().st_size // 1024} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
