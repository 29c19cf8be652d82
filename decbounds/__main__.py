"""``python -m decbounds``: the ``decbounds`` command line (`decbounds.cli`)."""

from decbounds.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
