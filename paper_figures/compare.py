"""Compare two figure output folders: ``python -m decbounds.paper_figures.compare BEFORE AFTER [--only
NAME ...]`` prints every difference and exits 1 if there is one.

Records (``*.jsonl``) are compared as multisets without ``versions`` (`IGNORED_RECORD_FIELDS`); tables
(``*.csv``, ``*.md``) byte for byte but for `VOLATILE_COLUMNS`; a file on one side only is a difference
(unless ``allow_missing``). Images are not compared (PDFs hold dates).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import pathlib
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["IGNORED_RECORD_FIELDS", "TABLE_SUFFIXES", "VOLATILE_COLUMNS", "compare_outputs",
           "compare_records", "compare_tables", "main"]

#: Record fields left out of the comparison: provenance, not results.
IGNORED_RECORD_FIELDS: tuple[str, ...] = ("versions",)
#: Suffixes of the table files compared byte for byte.
TABLE_SUFFIXES: tuple[str, ...] = (".csv", ".md")
#: CSV columns left out of the comparison: wall-clock times (the worst-case tables' SDP ``seconds``).
VOLATILE_COLUMNS: tuple[str, ...] = ("seconds",)


def _record_lines(path: pathlib.Path) -> list[str]:
    """The complete records of a JSONL file as canonical text without `IGNORED_RECORD_FIELDS`."""
    lines = []
    data = path.read_bytes().split(b"\n")
    for line in data[:-1]:  # after the last newline: b"" or a torn write, ignored as the readers do
        if not line.strip():
            continue
        record = json.loads(line)
        for field in IGNORED_RECORD_FIELDS:
            record.pop(field, None)
        lines.append(json.dumps(record, sort_keys=True, separators=(",", ":")))
    return lines


def _field_differences(a: Any, b: Any, prefix: str = "") -> list[str]:
    """Dotted paths at which two JSON values differ (at most a few levels deep)."""
    if isinstance(a, dict) and isinstance(b, dict):
        found = []
        for key in sorted(set(a) | set(b)):
            if a.get(key, _MISSING) != b.get(key, _MISSING):
                found += _field_differences(a.get(key, _MISSING), b.get(key, _MISSING), f"{prefix}{key}.")
        return found
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        found = []
        for index, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                found += _field_differences(x, y, f"{prefix}{index}.")
        return found
    return [f"{prefix.rstrip('.')}: {_short(a)} != {_short(b)}"]


_MISSING = "<missing>"


def _short(value: Any, width: int = 80) -> str:
    text = json.dumps(value, sort_keys=True) if value is not _MISSING else _MISSING
    return text if len(text) <= width else text[: width - 3] + "..."


def compare_records(before: pathlib.Path, after: pathlib.Path) -> list[str]:
    """The differences between two record files (module docstring); [] when they hold the same records.

    Parameters
    ----------
    before, after : pathlib.Path
        The two JSONL record files; the lines name ``after``'s file.

    Examples
    --------
    >>> import tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "a.jsonl").write_text('{"key":"k","result":1,"versions":{"git":"x"}}\\n')
    >>> _ = (folder / "b.jsonl").write_text('{"key":"k","result":2,"versions":{"git":"y"}}\\n')
    >>> compare_records(folder / "a.jsonl", folder / "b.jsonl")
    ['b.jsonl: record k differs: result: 1 != 2']
    >>> import shutil; shutil.rmtree(folder)
    """
    a, b = Counter(_record_lines(before)), Counter(_record_lines(after))
    if a == b:
        return []
    only_a, only_b = a - b, b - a
    by_key_a = {json.loads(line).get("key"): json.loads(line) for line in only_a}
    by_key_b = {json.loads(line).get("key"): json.loads(line) for line in only_b}
    name = after.name
    differences = []
    for key in sorted(set(by_key_a) | set(by_key_b), key=str):
        if key not in by_key_b:
            differences.append(f"{name}: record {key} only in {before}")
        elif key not in by_key_a:
            differences.append(f"{name}: record {key} only in {after}")
        else:
            fields = _field_differences(by_key_a[key], by_key_b[key])
            differences.append(f"{name}: record {key} differs: " + "; ".join(fields[:8])
                               + (f"; ... {len(fields) - 8} more" if len(fields) > 8 else ""))
    duplicates = [f"{name}: {count} copies of one record in {side}"
                  for side, counter in ((before, a), (after, b)) for count in counter.values() if count > 1]
    return differences + sorted(set(duplicates))


def _without_volatile_columns(path: pathlib.Path) -> bytes:
    data = path.read_bytes()
    if path.suffix != ".csv":
        return data
    rows = list(csv.reader(io.StringIO(data.decode())))
    if not rows or not set(VOLATILE_COLUMNS) & set(rows[0]):
        return data
    keep = [index for index, column in enumerate(rows[0]) if column not in VOLATILE_COLUMNS]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    for row in rows:
        writer.writerow([row[index] for index in keep if index < len(row)])
    return buffer.getvalue().encode()


def compare_tables(before: pathlib.Path, after: pathlib.Path) -> list[str]:
    """The difference between two table files: [] when they are equal byte for byte (`VOLATILE_COLUMNS`
    of a CSV file aside), else one line naming the first line that differs.

    Parameters
    ----------
    before, after : pathlib.Path
        The two table files (``.csv`` or ``.md``); the line names ``after``'s file.
    """
    a, b = _without_volatile_columns(before), _without_volatile_columns(after)
    if a == b:
        return []
    lines_a, lines_b = a.decode().splitlines(), b.decode().splitlines()
    for number, (x, y) in enumerate(zip(lines_a, lines_b, strict=False), start=1):
        if x != y:
            return [f"{after.name}: line {number} differs:\n    - {x[:160]}\n    + {y[:160]}"]
    return [f"{after.name}: {len(lines_a)} lines against {len(lines_b)}"]


def _files(folder: pathlib.Path, only: Sequence[str] | None) -> dict[str, pathlib.Path]:
    found = {}
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or path.name.startswith("."):
            continue
        if path.suffix not in (".jsonl", *TABLE_SUFFIXES):
            continue
        relative = path.relative_to(folder).as_posix()
        if only is not None and not any(relative.startswith(name) for name in only):
            continue
        found[relative] = path
    return found


def compare_outputs(before: str | pathlib.Path, after: str | pathlib.Path, *,
                    only: Iterable[str] | None = None, allow_missing: bool = False) -> list[str]:
    """Every difference between two output folders of the figures (module docstring); [] when none;
    FileNotFoundError if a folder does not exist.

    Parameters
    ----------
    before, after : str or pathlib.Path
        The two folders.
    only : iterable of str, optional
        Compare only the files whose path inside the folder starts with one of these (a figure's name).
    allow_missing : bool, default False
        A file of `before` missing from `after` is not a difference.
    """
    before, after = pathlib.Path(before), pathlib.Path(after)
    for folder in (before, after):
        if not folder.is_dir():
            raise FileNotFoundError(f"no output folder {folder}")
    names = None if only is None else list(only)
    a, b = _files(before, names), _files(after, names)
    differences = []
    for relative in sorted(set(a) | set(b)):
        if relative not in b:
            if not allow_missing:
                differences.append(f"{relative}: only in {before}")
            continue
        if relative not in a:
            differences.append(f"{relative}: only in {after}")
            continue
        compare = compare_records if relative.endswith(".jsonl") else compare_tables
        differences += [f"{relative}: {line.split(': ', 1)[1]}" for line in compare(a[relative], b[relative])]
    return differences


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m decbounds.paper_figures.compare BEFORE AFTER [--only NAME ...] [--allow-missing]``: print
    every difference between two output folders (`compare_outputs`) and a count.

    Parameters
    ----------
    argv : sequence of str, optional
        The command-line arguments (default ``sys.argv[1:]``).
    """
    parser = argparse.ArgumentParser(prog="python -m decbounds.paper_figures.compare",
                                     description="Compare two figure output folders (records and tables).")
    parser.add_argument("before", type=pathlib.Path)
    parser.add_argument("after", type=pathlib.Path)
    parser.add_argument("--only", nargs="+", metavar="NAME", help="compare only these figures' files")
    parser.add_argument("--allow-missing", action="store_true",
                        help="a file missing from AFTER is not a difference")
    args = parser.parse_args(argv)
    differences = compare_outputs(args.before, args.after, only=args.only, allow_missing=args.allow_missing)
    compared = len(_files(args.after, args.only))
    for line in differences:
        print(line)
    print(f"{compared} files compared; {len(differences)} difference(s)")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
