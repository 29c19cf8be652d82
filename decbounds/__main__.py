"""``python -m decbounds``: the ``decbounds`` command line."""

from decbounds.paper_figures.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
