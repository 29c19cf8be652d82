"""Copy the figures of a run into docs/img/ for the site: ``python docs/images.py SOURCE_DIR``.

``make docs-images`` runs the quick figure set into build/figures/ and then this script. Each PNG is
quantized to a 256-colour palette with Pillow (a matplotlib dependency), which keeps the committed images
about a third of their size; the figures' line art loses nothing visible.
"""

from __future__ import annotations

import sys
from pathlib import Path

from decbounds.paper_figures.registry import docs_images
from PIL import Image

__all__ = ["FIGURES", "TARGET", "copy_figures", "main"]

#: The figures the results pages embed (docs/results/figures.md), as `make figures` names them: each
#: registered figure's ``images`` (``paper_figures.registry.register_figure``), read without importing a
#: figure module.
FIGURES: tuple[str, ...] = docs_images()
TARGET = Path(__file__).resolve().parent / "img"


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
            palette = image.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT)
            palette.save(target / f"{name}.png", optimize=True)
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
