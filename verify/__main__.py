"""``python -m decbounds.verify RULE [options]``: the same as ``decbounds verify``."""

from __future__ import annotations

import argparse
import sys

from decbounds.verify.cli import add_parser

__all__: list[str] = []


def _main() -> int:
    parser = argparse.ArgumentParser(prog="python -m decbounds")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["verify", *sys.argv[1:]])
    return int(args.func(args))


if __name__ == "__main__":
    raise SystemExit(_main())
