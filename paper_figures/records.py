"""Sweep records: points, their keys, grids of points, and the JSON Lines file a sweep appends to.

One record per line, keys sorted: ``key``, ``runner``, ``point``, ``params``, ``result``, ``predicted``,
``prediction_errors``, ``versions``. Each record is one ``O_APPEND`` write plus ``fsync``: a killed run leaves
at most a torn last line, which readers ignore; a point's key hashes its canonical JSON, so a rerun skips
finished points. `paper_figures.sweep` re-exports these names but the typed field readers.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import pathlib
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TypeAlias, TypedDict, TypeGuard, TypeVar

from decbounds.algorithms.result import to_jsonable

__all__ = [
    "JSONValue",
    "Point",
    "Record",
    "RecordWriter",
    "RunOutput",
    "Runner",
    "canonical_json",
    "field_dict",
    "field_dicts",
    "field_float",
    "field_floats",
    "field_int",
    "field_ints",
    "field_list",
    "field_str",
    "field_strs",
    "grid",
    "optional_dict",
    "optional_float",
    "optional_int",
    "optional_str",
    "point_key",
    "read_records",
    "runner_name",
]

try:  # POSIX only; elsewhere the one-writer rule is the caller's
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None  # type: ignore[assignment]

#: A JSON value as ``json.loads`` gives it back: what a record's fields hold once read from its file.
JSONValue: TypeAlias = "bool | int | float | str | list[JSONValue] | dict[str, JSONValue] | None"
#: A grid point: a JSON object describing one run completely (its fields are its runner's; `grid`).
Point: TypeAlias = "dict[str, JSONValue]"


class Record(TypedDict):
    """One line of a records file (module docstring): ``point`` the grid point, ``params`` the catalog
    parameters, ``result`` the runner's measurements, ``predicted`` catalog name -> T_eps,
    ``prediction_errors`` name -> why not, ``versions`` the provenance."""

    key: str
    runner: str
    point: Point
    params: dict[str, JSONValue]
    result: dict[str, JSONValue]
    predicted: dict[str, float]
    prediction_errors: dict[str, str]
    versions: dict[str, JSONValue]


class _RunResult(TypedDict):
    result: Mapping[str, object]


class RunOutput(_RunResult, total=False):
    """What a sweep's runner returns: ``result``, the measurements of the run (the figure's fields), and
    optionally ``params``, the catalog parameters it derived (n, lam, B, ...); values may hold numpy
    scalars and arrays (`canonical_json` converts them)."""

    params: Mapping[str, object]


#: A sweep's runner: ``runner(point) -> {"result": {...}, "params": {...}}`` (a `RunOutput`), a top-level
#: function; what it returns is checked by `sweep.execute`.
Runner: TypeAlias = "Callable[[Point], Mapping[str, object]]"


# --------------------------------------------------------------------------------------------- JSON and keys


def canonical_json(value: object) -> str:
    """The canonical text of `value`: sorted keys, no whitespace, numpy types converted (`to_jsonable`);
    TypeError if it is not JSON-able.

    Parameters
    ----------
    value : object
        JSON types, tuples, numpy scalars and arrays, nested in dicts and lists.
    """
    return json.dumps(to_jsonable(value), sort_keys=True, separators=(",", ":"))


def runner_name(runner: Runner) -> str:
    """``module:qualname`` of a runner (named by its import name under ``python -m``, so that keys match);
    TypeError for a lambda, a nested function or one without a module (it must pickle by reference).

    Parameters
    ----------
    runner : callable
        A sweep runner (`Runner`), or any top-level function.
    """
    module = getattr(runner, "__module__", None)
    qualname = getattr(runner, "__qualname__", None)
    if not module or not qualname or "<" in qualname:
        raise TypeError(
            f"runner must be a top-level function (picklable by reference); got {runner!r}"
        )
    if module == "__main__":
        # `python -m decbounds.paper_figures.X` runs X as __main__: name it by its import name, so that the
        # keys it writes equal those written when X is imported (by `python -m decbounds.paper_figures`) and
        # resume finds them
        spec = getattr(sys.modules.get("__main__"), "__spec__", None)
        if spec is not None and spec.name:
            module = spec.name
    return f"{module}:{qualname}"


def point_key(point: Mapping[str, object], runner: Runner | str | None = None) -> str:
    """Stable key of a grid point: the first 20 hex digits of sha256 over the canonical JSON of (runner,
    point); the same in every process and on every machine.

    Parameters
    ----------
    point : mapping
        A JSON-able grid point.
    runner : callable or str, optional
        The runner, or its `runner_name`.
    """
    name = runner if isinstance(runner, str) or runner is None else runner_name(runner)
    text = canonical_json({"point": point, "runner": name or ""})
    return hashlib.sha256(text.encode()).hexdigest()[:20]


# ---------------------------------------------------------------------------------------------- typed fields
# A record's fields come back from JSON as `JSONValue`; these read one field as the type its runner wrote it
# (TypeError naming the field otherwise), so that the figures read records without casts. Values are
# returned as stored: an int read as a float stays an int (its text in a CSV or a label does not change).

_T = TypeVar("_T")


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> TypeGuard[float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_str(value: object) -> TypeGuard[str]:
    return isinstance(value, str)


def _is_list(value: object) -> TypeGuard[list[JSONValue]]:
    return isinstance(value, list)


def _is_dict(value: object) -> TypeGuard[dict[str, JSONValue]]:
    return isinstance(value, dict)


def _wrong(key: str, value: JSONValue, expected: str) -> TypeError:
    return TypeError(f"record field {key!r} must be {expected}; got {value!r}")


def _one(fields: Mapping[str, JSONValue], key: str, is_kind: Callable[[object], TypeGuard[_T]],
         expected: str) -> _T:
    value = fields[key]
    if not is_kind(value):
        raise _wrong(key, value, expected)
    return value


def _optional(fields: Mapping[str, JSONValue], key: str, is_kind: Callable[[object], TypeGuard[_T]],
              expected: str) -> _T | None:
    value = fields.get(key)
    if value is None:
        return None
    if not is_kind(value):
        raise _wrong(key, value, expected)
    return value


def _items(fields: Mapping[str, JSONValue], key: str, is_kind: Callable[[object], TypeGuard[_T]],
           expected: str) -> list[_T]:
    items: list[_T] = []
    for value in _one(fields, key, _is_list, "a list"):
        if not is_kind(value):
            raise _wrong(key, value, expected)
        items.append(value)
    return items


def field_int(fields: Mapping[str, JSONValue], key: str) -> int:
    """``fields[key]``, an integer (not a bool); KeyError if missing, TypeError if another type.

    Parameters
    ----------
    fields, key
        A record's ``point``, ``params`` or ``result`` (or an object nested in one), and the field's name.

    Examples
    --------
    >>> field_int({"n": 16}, "n")
    16
    """
    return _one(fields, key, _is_int, "an integer")


def optional_int(fields: Mapping[str, JSONValue], key: str) -> int | None:
    """``fields.get(key)``, an integer or None (missing or null); TypeError if another type.

    Parameters
    ----------
    fields, key
        A record's ``point``, ``params`` or ``result`` (or an object nested in one), and the field's name.
    """
    return _optional(fields, key, _is_int, "an integer or null")


def field_float(fields: Mapping[str, JSONValue], key: str) -> float:
    """``fields[key]``, a number (int or float, as stored; not a bool); errors as `field_int`.

    Parameters
    ----------
    fields, key
        A record's ``point``, ``params`` or ``result`` (or an object nested in one), and the field's name.
    """
    return _one(fields, key, _is_number, "a number")


def optional_float(fields: Mapping[str, JSONValue], key: str) -> float | None:
    """``fields.get(key)``, a number (as stored) or None (missing or null).

    Parameters
    ----------
    fields, key
        A record's ``point``, ``params`` or ``result`` (or an object nested in one), and the field's name.
    """
    return _optional(fields, key, _is_number, "a number or null")


def field_str(fields: Mapping[str, JSONValue], key: str) -> str:
    """``fields[key]``, a string; errors as `field_int`.

    Parameters
    ----------
    fields, key
        A record's ``point``, ``params`` or ``result`` (or an object nested in one), and the field's name.
    """
    return _one(fields, key, _is_str, "a string")


def optional_str(fields: Mapping[str, JSONValue], key: str) -> str | None:
    """``fields.get(key)``, a string or None (missing or null).

    Parameters
    ----------
    fields, key
        A record's ``point``, ``params`` or ``result`` (or an object nested in one), and the field's name.
    """
    return _optional(fields, key, _is_str, "a string or null")


def field_list(fields: Mapping[str, JSONValue], key: str) -> list[JSONValue]:
    """``fields[key]``, a JSON array; errors as `field_int`.

    Parameters
    ----------
    fields, key
        A record's ``point``, ``params`` or ``result`` (or an object nested in one), and the field's name.
    """
    return _one(fields, key, _is_list, "a list")


def field_dict(fields: Mapping[str, JSONValue], key: str) -> dict[str, JSONValue]:
    """``fields[key]``, a JSON object; errors as `field_int`.

    Parameters
    ----------
    fields, key
        A record's ``point``, ``params`` or ``result`` (or an object nested in one), and the field's name.
    """
    return _one(fields, key, _is_dict, "an object")


def optional_dict(fields: Mapping[str, JSONValue], key: str) -> dict[str, JSONValue] | None:
    """``fields.get(key)``, a JSON object or None (missing or null).

    Parameters
    ----------
    fields, key
        A record's ``point``, ``params`` or ``result`` (or an object nested in one), and the field's name.
    """
    return _optional(fields, key, _is_dict, "an object or null")


def field_ints(fields: Mapping[str, JSONValue], key: str) -> list[int]:
    """``fields[key]``, a JSON array of integers (not bools); errors as `field_int`.

    Parameters
    ----------
    fields, key
        A record's ``point``, ``params`` or ``result`` (or an object nested in one), and the field's name.
    """
    return _items(fields, key, _is_int, "a list of integers")


def field_floats(fields: Mapping[str, JSONValue], key: str) -> list[float]:
    """``fields[key]``, a JSON array of numbers (each as stored); errors as `field_int`.

    Parameters
    ----------
    fields, key
        A record's ``point``, ``params`` or ``result`` (or an object nested in one), and the field's name.
    """
    return _items(fields, key, _is_number, "a list of numbers")


def field_strs(fields: Mapping[str, JSONValue], key: str) -> list[str]:
    """``fields[key]``, a JSON array of strings; errors as `field_int`.

    Parameters
    ----------
    fields, key
        A record's ``point``, ``params`` or ``result`` (or an object nested in one), and the field's name.
    """
    return _items(fields, key, _is_str, "a list of strings")


def field_dicts(fields: Mapping[str, JSONValue], key: str) -> list[dict[str, JSONValue]]:
    """``fields[key]``, a JSON array of objects; errors as `field_int`.

    Parameters
    ----------
    fields, key
        A record's ``point``, ``params`` or ``result`` (or an object nested in one), and the field's name.
    """
    return _items(fields, key, _is_dict, "a list of objects")


# ----------------------------------------------------------------------------------------------- the grid


def _set_dotted(target: dict[str, JSONValue], dotted: str, value: JSONValue) -> None:
    *parents, leaf = dotted.split(".")
    for part in parents:
        child = target.setdefault(part, {})
        if not isinstance(child, dict):
            raise ValueError(f"grid axis {dotted!r}: {part!r} is already set to a non-dict value {child!r}")
        target = child
    target[leaf] = value


def grid(axes: Mapping[str, Sequence[object]], base: Mapping[str, object] | None = None) -> list[Point]:
    """The cartesian product of `axes` over a copy of `base`, last axis fastest; a dotted axis name
    (``"hyper.eta"``) sets a nested field. ValueError for an empty axis, TypeError for a non-sequence one.

    Parameters
    ----------
    axes : mapping of str to sequence
        Axis name -> its non-empty list of JSON-able values.
    base : mapping, optional
        What every point holds besides the axes (deep-copied).

    Examples
    --------
    >>> grid({"hyper.eta": [0.0, 0.2]}, base={"algorithm": "detag"})[1]
    {'algorithm': 'detag', 'hyper': {'eta': 0.2}}
    """
    for name, values in axes.items():
        if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
            raise TypeError(f"grid axis {name!r} must be a sequence of values; got {type(values).__name__}")
        if len(values) == 0:
            raise ValueError(f"grid axis {name!r} is empty, so the grid would be empty")
    names = list(axes)
    points = []
    for combination in itertools.product(*(axes[name] for name in names)):
        point = json.loads(canonical_json(base or {}))  # deep copy with JSON types
        for name, value in zip(names, combination, strict=True):
            _set_dotted(point, name, to_jsonable(value))
        points.append(point)
    return points


# ------------------------------------------------------------------------------------------- record files


def read_records(path: str | os.PathLike[str]) -> list[Record]:
    """Every complete record of a JSONL file, in file order; a torn last line (a killed writer) is
    ignored, any other line that is not JSON raises ValueError naming it.

    Parameters
    ----------
    path : str or os.PathLike
        The JSONL file; a missing file has no records.
    """
    path = pathlib.Path(path)
    if not path.exists():
        return []
    data = path.read_bytes()
    lines = data.split(b"\n")
    complete, torn = lines[:-1], lines[-1]  # after the last newline: b"" or a torn write
    records = []
    for number, line in enumerate(complete, start=1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as error:
            raise ValueError(f"{path}: line {number} is not a JSON record ({error})") from error
    del torn
    return records


def _truncate_torn_tail(fd: int) -> None:
    """Cut a partial last line (a writer killed mid-write) so the next append starts on a fresh line."""
    size = os.lseek(fd, 0, os.SEEK_END)
    if size == 0:
        return
    position, block = size, 1 << 16
    while position > 0:
        start = max(0, position - block)
        os.lseek(fd, start, os.SEEK_SET)
        chunk = os.read(fd, position - start)
        newline = chunk.rfind(b"\n")
        if newline >= 0:
            keep = start + newline + 1
            if keep != size:
                os.ftruncate(fd, keep)
            return
        position = start
    os.ftruncate(fd, 0)


class RecordWriter:
    """Appends records to a JSONL file: one ``os.write`` of a whole line, then ``fsync``, under an
    exclusive non-blocking ``flock`` (a second writer gets RuntimeError; a short write OSError).

    Parameters
    ----------
    path : str or os.PathLike
        The JSONL file (created with its folders; a torn last line is cut away).
    fsync : bool, default True
        ``fsync`` after every record (off only for tests).
    """

    def __init__(self, path: str | os.PathLike[str], *, fsync: bool = True) -> None:
        self.path = pathlib.Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.fsync = fsync
        self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        if fcntl is not None:
            try:
                fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError as error:
                os.close(self._fd)
                message = f"another sweep is writing {self.path}; run one writer per file"
                raise RuntimeError(message) from error
        _truncate_torn_tail(self._fd)

    def append(self, record: Mapping[str, object]) -> None:
        """Write `record` as one complete line (keys sorted) and make it durable.

        Parameters
        ----------
        record : mapping
            A JSON-able record (`Record`; `canonical_json` writes it).
        """
        line = (canonical_json(record) + "\n").encode()
        written = os.write(self._fd, line)
        if written != len(line):  # a short write on a regular file means the disk is full
            raise OSError(f"short write to {self.path}: {written} of {len(line)} bytes")
        if self.fsync:
            os.fsync(self._fd)

    def close(self) -> None:
        """Close the file (releasing its lock); closing twice does nothing."""
        if self._fd >= 0:
            os.close(self._fd)  # closing releases the flock
            self._fd = -1

    def __enter__(self) -> RecordWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
