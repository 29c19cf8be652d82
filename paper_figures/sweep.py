"""Sweeps: a declarative grid of runs -> one JSON line per run, resumable, on any concurrent.futures.Executor.

A *point* is a JSON-able dict describing one run completely (algorithm, instance, graph and weights, oracle,
step size, iterations, batch, seed, hyper-parameters, the catalog parameters it is compared against). `grid`
builds points as a cartesian product; `run_sweep` runs every point not yet in the record file through a
*runner* (a picklable top-level function ``runner(point) -> dict``; each figure module has its own) and
appends one record per finished run.

Record file format (JSON Lines, one record per line, keys sorted)::

    {"key": ..., "runner": "module:function", "point": {...}, "params": {...}, "result": {...},
     "predicted": {catalog name: T_eps}, "prediction_errors": {name: reason}, "versions": {...}}

Durability. Only the calling process writes the file. Each record is one ``os.write`` of a complete line to
a file opened with ``O_APPEND``, followed by ``fsync``; a run killed at any point leaves at most one torn
*last* line (no newline), which readers ignore and `run_sweep` truncates away before appending again. A grid
point's key is a hash of its canonical JSON (plus the runner's name), so rerunning the same sweep skips the
finished points: a sweep killed at any point resumes with nothing lost and nothing duplicated. An exclusive
``flock`` stops two sweeps from writing one file at the same time.

Provenance. ``versions`` holds Python's and the dependencies' versions, decbounds' ``__version__`` and, when
the running decbounds is a git checkout, its commit (``decbounds_commit``, `git_commit`).

Determinism. Records hold no wall-clock timings, hostnames or process ids: the same point gives the same
line, byte for byte, whichever executor ran it (`SerialExecutor`, a process pool, Dask's
``Client.get_executor()``, the shared `PriorityPool`); only the order of the lines follows completion order.
`paper_figures.compare` checks two output folders for exactly that.

Figures at once. ``python -m decbounds.paper_figures`` makes the figures in threads of one process
(`figure_turn`: their own code runs one at a time, a sweep gives the turn away while it waits) whose sweeps
share one `PriorityPool` (`shared_pool`): a free core takes the most expensive point waiting, whichever
figure it is from, so both cores stay busy to the end of the set. Each figure gives its points a `cost` in
rough CPU seconds; a chain of points (`run_sweep`'s ``follow``: a series that goes on to the next size only
if it did not hit its cap) is ranked by the cost of the whole chain it starts. ``DECBOUNDS_SWEEP_PROFILE``
(`PROFILE_ENVIRONMENT`) logs every point's CPU and wall seconds, for measuring where the time goes.
"""

from __future__ import annotations

import collections
import concurrent.futures
import contextlib
import functools
import hashlib
import heapq
import itertools
import json
import math
import multiprocessing
import os
import pathlib
import platform
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from importlib import metadata
from typing import Any

import numpy as np
from decbounds.algorithms.result import to_jsonable
from decbounds.algorithms.tune import local_t_eps_score
from tqdm.auto import tqdm

import decbounds
from decbounds import algorithms, bounds

__all__ = [
    "FORKSERVER_PRELOAD",
    "PROFILE_ENVIRONMENT",
    "VERSIONED_PACKAGES",
    "Point",
    "PriorityPool",
    "Record",
    "RecordWriter",
    "Runner",
    "SerialExecutor",
    "canonical_json",
    "default_executor",
    "execute",
    "figure_turn",
    "git_commit",
    "grid",
    "outcome",
    "package_versions",
    "parallel_map",
    "point_key",
    "predict",
    "read_records",
    "run_concurrently",
    "run_sweep",
    "runner_name",
    "shared_pool",
    "to_jsonable",
    "tune_both",
    "tune_worker_output",
    "winner_index",
]

try:  # POSIX only; elsewhere the one-writer rule is the caller's
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None  # type: ignore[assignment]

Point = dict[str, Any]
Record = dict[str, Any]
Runner = Callable[[Point], dict[str, Any]]

#: Modules the fork server of `default_executor` imports once for all its workers.
FORKSERVER_PRELOAD: tuple[str, ...] = (
    "decbounds.paper_figures.sweep", "decbounds.bounds", "decbounds.instances", "decbounds.oracles",
    "decbounds.algorithms",
)

#: Packages whose versions every record carries.
VERSIONED_PACKAGES: tuple[str, ...] = (
    "decbounds", "numpy", "scipy", "sympy", "networkx", "cvxpy", "scikit-learn",
)


# --------------------------------------------------------------------------------------------- JSON and keys


def canonical_json(value: Any) -> str:
    """The canonical text of `value`: sorted keys, no whitespace, numpy types converted (`to_jsonable`).

    Raises
    ------
    TypeError
        If `value` holds something that is not JSON-able.

    Examples
    --------
    >>> canonical_json({"b": 1, "a": (1.5, None)})
    '{"a":[1.5,null],"b":1}'
    """
    return json.dumps(to_jsonable(value), sort_keys=True, separators=(",", ":"))


def runner_name(runner: Runner) -> str:
    """``module:qualname`` of a runner; it must be a top-level function so that it pickles by reference.

    A runner of a module run as ``python -m`` is named by its import name, so that its keys match.

    Raises
    ------
    TypeError
        If `runner` is a lambda, a nested function or has no module.

    Examples
    --------
    >>> runner_name(canonical_json)
    'decbounds.paper_figures.sweep:canonical_json'
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


def point_key(point: Mapping[str, Any], runner: Runner | str | None = None) -> str:
    """Stable key of a grid point: the first 20 hex digits of sha256 over canonical JSON of (runner, point).

    Equal points give equal keys in every process and on every machine (dict order, tuples vs lists and
    numpy vs Python scalars do not matter); the runner's name is part of the key so that a sweep run with
    another runner is not mistaken for a finished one.

    Parameters
    ----------
    point : mapping
        A JSON-able grid point.
    runner : callable or str, optional
        The runner, or its `runner_name`.

    Returns
    -------
    str
        20 hex digits.

    Examples
    --------
    >>> point_key({"a": 1, "b": [1, 2]}) == point_key({"b": (1, 2), "a": 1})
    True
    """
    name = runner if isinstance(runner, str) or runner is None else runner_name(runner)
    text = canonical_json({"point": point, "runner": name or ""})
    return hashlib.sha256(text.encode()).hexdigest()[:20]


# ----------------------------------------------------------------------------------------------- the grid


def _set_dotted(target: dict[str, Any], dotted: str, value: Any) -> None:
    *parents, leaf = dotted.split(".")
    for part in parents:
        child = target.setdefault(part, {})
        if not isinstance(child, dict):
            raise ValueError(f"grid axis {dotted!r}: {part!r} is already set to a non-dict value {child!r}")
        target = child
    target[leaf] = value


def grid(axes: Mapping[str, Sequence[Any]], base: Mapping[str, Any] | None = None) -> list[Point]:
    """The cartesian product of `axes` over a copy of `base`, row-major (the last axis varies fastest).

    Axis names may be dotted to reach into nested dicts: ``{"hyper.eta": [0.0, 0.2]}`` sets
    ``point["hyper"]["eta"]``. Concatenate the lists of several `grid` calls for non-rectangular sweeps.

    Parameters
    ----------
    axes : mapping of str to sequence
        Axis name (dotted for nesting) -> its non-empty list of values.
    base : mapping, optional
        What every point holds besides the axes (deep-copied).

    Returns
    -------
    list of dict
        The points, JSON types only.

    Raises
    ------
    TypeError
        If an axis is not a sequence (a string is not one).
    ValueError
        If an axis is empty, or a dotted axis runs into a value that is not a dict.

    Examples
    --------
    >>> [p["seed"] for p in grid({"step_size": [0.1, 0.2], "seed": [0, 1]})]
    [0, 1, 0, 1]
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
    """Every complete record of a JSONL file, in file order; a torn last line (a killed writer) is ignored.

    A line that does not parse anywhere but at the end means the file was damaged by something other than a
    killed sweep, and raises ValueError naming the line.

    Parameters
    ----------
    path : str or os.PathLike
        The JSONL file; a missing file has no records.

    Returns
    -------
    list of dict

    Raises
    ------
    ValueError
        If a complete line is not JSON.

    Examples
    --------
    See `run_sweep`.
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
    """Appends records to a JSONL file: one ``os.write`` of a whole line, then ``fsync`` (module docstring).

    Holds an exclusive, non-blocking ``flock`` while open: a second writer on the same file gets a
    RuntimeError instead of interleaving lines.

    Parameters
    ----------
    path : str or os.PathLike
        The JSONL file (created with its folders; a torn last line is cut away).
    fsync : bool, default True
        ``fsync`` after every record (durability; off only for tests).

    Raises
    ------
    RuntimeError
        If another writer holds the file.
    OSError
        On a short write (a full disk).
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

    def append(self, record: Mapping[str, Any]) -> None:
        """Write `record` as one complete line (keys sorted) and make it durable."""
        line = (canonical_json(record) + "\n").encode()
        written = os.write(self._fd, line)
        if written != len(line):  # a short write on a regular file means the disk is full
            raise OSError(f"short write to {self.path}: {written} of {len(line)} bytes")
        if self.fsync:
            os.fsync(self._fd)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)  # closing releases the flock
            self._fd = -1

    def __enter__(self) -> RecordWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# ---------------------------------------------------------------------------------------------- executors


class SerialExecutor(concurrent.futures.Executor):
    """A `concurrent.futures.Executor` that runs each task in the calling process when it is submitted.

    For debugging, for tiny sweeps, and as the reference the parallel executors are tested against.

    Examples
    --------
    >>> SerialExecutor().submit(sum, [1, 2, 3]).result()
    6
    """

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> concurrent.futures.Future:
        future: concurrent.futures.Future = concurrent.futures.Future()
        future.set_running_or_notify_cancel()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as error:  # delivered through the future, as a pool does
            future.set_exception(error)
        return future


def default_executor(max_workers: int | None = None) -> concurrent.futures.Executor:
    """A process pool over the machine's cores (``os.cpu_count()``), or `SerialExecutor` for one worker.

    Workers start from a fork server (a clean, single-threaded parent), not by forking the caller, which may
    hold threads (tqdm's monitor, a Dask client) that fork would copy in an undefined state. The fork server
    imports the decbounds packages once (`FORKSERVER_PRELOAD`), so that every worker of every pool in the
    session starts with them loaded (importing cvxpy and sympy is slow, once per process). As with any
    non-fork start method, a script that runs a sweep must guard it with ``if __name__ == "__main__":``.

    Parameters
    ----------
    max_workers : int, optional
        Processes, >= 1 (default ``os.cpu_count()``).

    Returns
    -------
    concurrent.futures.Executor

    Raises
    ------
    ValueError
        If ``max_workers`` < 1.

    Examples
    --------
    >>> type(default_executor(1)).__name__
    'SerialExecutor'
    """
    workers = max_workers if max_workers is not None else (os.cpu_count() or 1)
    if workers < 1:
        raise ValueError(f"max_workers must be >= 1; got {max_workers!r}")
    if _SHARED:
        return _SharedHandle(_SHARED[-1])
    if workers == 1:
        return SerialExecutor()
    return _process_pool(workers)


def _process_pool(workers: int) -> concurrent.futures.ProcessPoolExecutor:
    """A process pool of `workers` processes started from the fork server (`default_executor`)."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(list(FORKSERVER_PRELOAD))  # no effect once the server runs
    else:
        context = multiprocessing.get_context("spawn")
    return concurrent.futures.ProcessPoolExecutor(max_workers=workers, mp_context=context)


class PriorityPool(concurrent.futures.Executor):
    """A process pool that gives a free worker the most expensive task waiting, whichever sweep it is from.

    The sweeps of several figures run at once share one pool (`shared_pool`): each `run_sweep` submits its
    points with their `cost`, and the pool keeps them in one queue, most expensive first (ties in the order
    submitted), handing at most ``max_workers`` to the processes at a time. So both cores stay busy to the
    end of the whole set, not only of one sweep, and the long runs of every figure start first. Records do
    not depend on the pool (module docstring), only the order of the lines does.

    Parameters
    ----------
    max_workers : int, optional
        Processes, >= 1 (default ``os.cpu_count()``); the processes are those of `default_executor`.

    Examples
    --------
    >>> with PriorityPool(1) as pool:
    ...     pool.submit_with_cost(2.0, sum, [1, 2]).result()
    3
    """

    def __init__(self, max_workers: int | None = None) -> None:
        self.max_workers = max_workers if max_workers is not None else (os.cpu_count() or 1)
        if self.max_workers < 1:
            raise ValueError(f"max_workers must be >= 1; got {max_workers!r}")
        self._pool = _process_pool(self.max_workers)
        self._waiting: list[tuple[Any, ...]] = []  # (-cost, order, future, fn, args, kwargs), a heap
        self._order = itertools.count()
        self._running = 0
        self._closed = False
        self._condition = threading.Condition()
        self._feeder = threading.Thread(target=self._feed, name="PriorityPool feeder", daemon=True)
        self._feeder.start()

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> concurrent.futures.Future:
        """`submit_with_cost` at cost 0 (after every task of a positive cost)."""
        return self.submit_with_cost(0.0, fn, *args, **kwargs)

    def submit_with_cost(self, cost: float, fn: Callable[..., Any], /, *args: Any, **kwargs: Any
                         ) -> concurrent.futures.Future:
        """Queue ``fn(*args, **kwargs)``; of the tasks waiting, the one of the largest `cost` starts first."""
        future: concurrent.futures.Future = concurrent.futures.Future()
        with self._condition:
            if self._closed:
                raise RuntimeError("cannot submit to a closed PriorityPool")
            heapq.heappush(self._waiting, (-float(cost), next(self._order), future, fn, args, kwargs))
            self._condition.notify_all()
        return future

    def _feed(self) -> None:
        while True:
            with self._condition:
                while not (self._waiting and self._running < self.max_workers):
                    if self._closed and not self._waiting:
                        return
                    self._condition.wait()
                _, _, future, fn, args, kwargs = heapq.heappop(self._waiting)
                if not future.set_running_or_notify_cancel():  # cancelled while waiting
                    continue
                self._running += 1
            try:
                inner = self._pool.submit(fn, *args, **kwargs)
            except BaseException as error:  # a broken pool: deliver it through the future
                self._finished(future, None, error)
                continue
            inner.add_done_callback(functools.partial(self._relay, future))

    def _relay(self, future: concurrent.futures.Future, inner: concurrent.futures.Future) -> None:
        try:
            value = inner.result()
        except BaseException as error:
            self._finished(future, None, error)
        else:
            self._finished(future, value, None)

    def _finished(self, future: concurrent.futures.Future, value: Any, error: BaseException | None) -> None:
        with self._condition:
            self._running -= 1
            self._condition.notify_all()
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(value)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Stop taking tasks; ``cancel_futures`` cancels those waiting, ``wait`` runs the rest first."""
        with self._condition:
            self._closed = True
            if cancel_futures:
                for _, _, future, *_ in self._waiting:
                    future.cancel()
                self._waiting.clear()
            self._condition.notify_all()
        if wait:
            self._feeder.join()
        self._pool.shutdown(wait=wait, cancel_futures=cancel_futures)

    def terminate(self) -> None:
        """Stop now (an interrupted run): cancel every waiting task and end the worker processes without
        letting the running points finish; their futures fail with ``BrokenProcessPool``. The points that
        finished are already in their records, so a new run resumes after them."""
        # ProcessPoolExecutor has no public way to stop a running task (Python 3.14 adds terminate_workers)
        processes = list((getattr(self._pool, "_processes", None) or {}).values())
        self.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            if process.is_alive():
                process.terminate()
        for process in processes:
            process.join(timeout=5.0)


class _SharedHandle(concurrent.futures.Executor):
    """The shared pool as a figure sees it: submitting goes to the pool, shutting down leaves it running."""

    def __init__(self, pool: PriorityPool) -> None:
        self.pool = pool

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> concurrent.futures.Future:
        return self.pool.submit(fn, *args, **kwargs)

    def submit_with_cost(self, cost: float, fn: Callable[..., Any], /, *args: Any, **kwargs: Any
                         ) -> concurrent.futures.Future:
        return self.pool.submit_with_cost(cost, fn, *args, **kwargs)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        del wait, cancel_futures  # the pool belongs to `shared_pool`


_SHARED: list[PriorityPool] = []


@contextlib.contextmanager
def shared_pool(max_workers: int | None = None) -> Iterator[PriorityPool]:
    """Inside the block, `default_executor` hands every caller the same `PriorityPool` (a handle whose
    ``shutdown`` does nothing), so that the sweeps of figures run at once (`figure_thread`) share its
    processes; the pool is shut down when the block ends (the tasks still waiting are cancelled).

    Examples
    --------
    >>> with shared_pool(2) as pool:
    ...     default_executor().pool is pool
    True
    """
    pool = PriorityPool(max_workers)
    _SHARED.append(pool)
    try:
        yield pool
    except BaseException:  # Ctrl-C (KeyboardInterrupt) or an error: do not wait for the running points
        _SHARED.remove(pool)
        pool.terminate()
        raise
    _SHARED.remove(pool)
    pool.shutdown(wait=True, cancel_futures=True)


class _Turns:
    """A first-come, first-served lock: the threads of `figure_turn` take turns in the order they ask."""

    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._queue: collections.deque[object] = collections.deque()
        self._busy = False
        self._local = threading.local()

    def held(self) -> bool:
        return getattr(self._local, "held", False)

    def acquire(self, queued: threading.Event | None = None) -> None:
        ticket = object()
        with self._condition:
            self._queue.append(ticket)
            if queued is not None:
                queued.set()
            while self._busy or self._queue[0] is not ticket:
                self._condition.wait()
            self._queue.popleft()
            self._busy = True
        self._local.held = True

    def release(self) -> None:
        self._local.held = False
        with self._condition:
            self._busy = False
            self._condition.notify_all()


_TURNS = _Turns()


@contextlib.contextmanager
def figure_turn(queued: threading.Event | None = None) -> Iterator[None]:
    """Run the block as one of several figures made at once in threads of one process: only one such block
    runs at a time, turns go in the order asked (`queued` is set once this thread is in the queue), and
    `run_sweep` and `parallel_map` give the turn away while they wait for the pool. So the figures' sweeps
    overlap in the pool, while the code of the figures (matplotlib's pyplot and the figure modules' caches
    are not thread-safe) runs one figure at a time."""
    _TURNS.acquire(queued)
    try:
        yield
    finally:
        _TURNS.release()


@contextlib.contextmanager
def _turn_given_away() -> Iterator[None]:
    """Within `figure_turn`, let the other figures run for the duration of the block (a wait)."""
    if not _TURNS.held():
        yield
        return
    _TURNS.release()
    try:
        yield
    finally:
        _TURNS.acquire()


def run_concurrently(*tasks: Callable[[], Any]) -> list[Any]:
    """Run the tasks at once, each in a thread that takes turns (`figure_turn`), and return their results in
    order: two sweeps of one figure that write different files, say, whose points then share the pool
    instead of the second waiting for the first to end. The calling thread gives its turn away while it
    waits; the first exception of a task is raised once every task has ended.

    Examples
    --------
    >>> run_concurrently(lambda: 1, lambda: 2)
    [1, 2]
    """
    results: list[Any] = [None] * len(tasks)
    errors: list[BaseException | None] = [None] * len(tasks)

    def one(index: int, queued: threading.Event) -> None:
        with figure_turn(queued):
            try:
                results[index] = tasks[index]()
            except BaseException as error:  # re-raised in the calling thread
                errors[index] = error

    with _turn_given_away():
        threads = []
        for index in range(len(tasks)):
            queued = threading.Event()
            # daemon: when the caller is interrupted (Ctrl-C), the interpreter exits without waiting for it
            thread = threading.Thread(target=one, args=(index, queued), name=f"task {index}", daemon=True)
            thread.start()
            queued.wait()  # turns in the order of the tasks
            threads.append(thread)
        for thread in threads:
            thread.join()
    for error in errors:
        if error is not None:
            raise error
    return results


def parallel_map(function: Callable[[Any], Any], items: Sequence[Any], *,
                 cost: Callable[[Any], float] | None = None,
                 executor: concurrent.futures.Executor | None = None) -> list[Any]:
    """``[function(item) for item in items]`` on an executor (`default_executor`, shut down at the end, when
    None: the shared pool inside `shared_pool`), most expensive first when `cost` is given; the turn of
    `figure_turn` is given away while waiting. `function` must be a top-level function (it is pickled).

    Examples
    --------
    >>> parallel_map(abs, [-1, 2, -3], executor=SerialExecutor())
    [1, 2, 3]
    """
    own = executor is None
    pool = default_executor() if own else executor
    try:
        order = sorted(range(len(items)), key=lambda i: -float(cost(items[i]))) if cost else range(len(items))
        futures: dict[int, concurrent.futures.Future] = {}
        for index in order:
            if cost is not None and hasattr(pool, "submit_with_cost"):
                futures[index] = pool.submit_with_cost(float(cost(items[index])), function, items[index])
            else:
                futures[index] = pool.submit(function, items[index])
        with _turn_given_away():
            concurrent.futures.wait(list(futures.values()))
        return [futures[index].result() for index in range(len(items))]
    finally:
        if own:
            pool.shutdown(wait=True, cancel_futures=True)


# ------------------------------------------------------------------------------------ versions, predictions


@functools.lru_cache(maxsize=1)
def git_commit() -> str | None:
    """The git commit of the decbounds source tree that is running, or None outside a git checkout.

    Asked of git once per process (two ``git`` calls, a few milliseconds), only when the ``decbounds``
    package lies at the top of a git work tree, so that an installed copy inside someone else's repository
    (a virtual environment in a project, say) never reports that project's commit. A work tree whose
    tracked files differ from the commit gets the suffix ``"-dirty"``: the record then says that the code
    that made it is not exactly that commit.

    Returns
    -------
    str or None
        The 40-digit commit hash, with ``"-dirty"`` appended when tracked files are modified; None when the
        package is not in a git checkout or git is not installed.

    Examples
    --------
    >>> commit = git_commit()
    >>> commit is None or len(commit.removesuffix("-dirty")) == 40
    True
    """
    root = pathlib.Path(decbounds.__file__).resolve().parent.parent

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                                  timeout=10, check=False)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    top = git("rev-parse", "--show-toplevel")
    if top is None or pathlib.Path(top).resolve() != root:
        return None
    commit = git("rev-parse", "HEAD")
    if commit is None:
        return None
    changes = git("status", "--porcelain", "--untracked-files=no")
    return commit + "-dirty" if changes else commit


@functools.lru_cache(maxsize=1)
def package_versions() -> dict[str, str]:
    """Versions of Python and of `VERSIONED_PACKAGES`, and the git commit of decbounds when there is one.

    ``decbounds`` is its ``__version__`` (the one source; an editable install's metadata can lag behind
    it); the others come from the installed distributions' metadata. Computed once per process.

    Returns
    -------
    dict of str to str
        package -> version (``"not installed"`` where absent), plus ``"decbounds_commit"`` (`git_commit`)
        when the running decbounds is a git checkout.

    Examples
    --------
    >>> import decbounds
    >>> versions = package_versions()
    >>> versions["decbounds"] == decbounds.__version__ and "numpy" in versions
    True
    """
    versions = {"python": platform.python_version()}
    for package in VERSIONED_PACKAGES:
        if package == "decbounds":
            versions[package] = decbounds.__version__
            continue
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = "not installed"
    commit = git_commit()
    if commit is not None:
        versions["decbounds_commit"] = commit
    return versions


@functools.lru_cache(maxsize=4096)
def _predict_cached(names: tuple[str, ...] | None, params_json: str) -> tuple[str, str]:
    predicted: dict[str, float] = {}
    errors: dict[str, str] = {}
    if names == ():
        return canonical_json(predicted), canonical_json(errors)
    params = json.loads(params_json)
    for name in names if names is not None else tuple(bounds.names()):
        try:
            predicted[name] = float(bounds.get(name).evaluate(**params))
        except (ValueError, TypeError, ZeroDivisionError, OverflowError) as error:
            errors[name] = f"{type(error).__name__}: {error}"
    return canonical_json(predicted), canonical_json(errors)


def predict(params: Mapping[str, Any], names: Sequence[str] | None = None) -> tuple[dict, dict]:
    """Catalog predictions ``bounds.get(name).evaluate(**params)`` for `names` (every catalog entry if None).

    Returns ``(predicted, errors)``: the values, and for each entry that cannot be evaluated at `params`
    (a symbol it needs is missing, a value outside its domain) the reason. Parameters the catalog does not
    know (anything but its symbols Delta, L, sigma, varsigma, varsigma0, n, B, epsilon, lam, D) are dropped
    before evaluation. Cached per process: a sweep's points mostly share their parameters.

    Parameters
    ----------
    params : mapping
        Catalog parameters of a point.
    names : sequence of str, optional
        Catalog entries (``bounds.names()``); None for all, ``[]`` for none.

    Returns
    -------
    tuple of (dict, dict)
        name -> predicted T_eps, and name -> why it could not be evaluated.

    References
    ----------
    docs/theory.md §3.2 (T2) for the entry of the example.

    Examples
    --------
    >>> params = {"Delta": 1, "L": 1, "sigma": 1, "n": 16, "B": 1, "epsilon": 0.1, "lam": 0.9, "run": 7}
    >>> predicted, errors = predict(params, ["lower_bound_gossip"])
    >>> round(predicted["lower_bound_gossip"], 2), errors
    (941.23, {})
    >>> sorted(predict({"n": 16}, ["lower_bound_gossip"])[1])
    ['lower_bound_gossip']
    """
    known = {key: value for key, value in params.items() if key in bounds.RATE_SYMBOLS and value is not None}
    predicted, errors = _predict_cached(tuple(names) if names is not None else None, canonical_json(known))
    return json.loads(predicted), json.loads(errors)


# ------------------------------------------------------------------------------------- executing one point

#: An environment variable: when it names a file, `execute` appends to it one JSON line per point run, with
#: the runner, the key, the point, the CPU and wall seconds of the run (``cpu``, ``wall``) and the time it
#: ended (``end``, seconds since the epoch). For measuring
#: where a sweep's time goes; the records are not touched.
PROFILE_ENVIRONMENT = "DECBOUNDS_SWEEP_PROFILE"


def _log_profile(path: str, runner: Runner, point: Point, cpu: float, wall: float) -> None:
    line = canonical_json({"runner": runner_name(runner), "key": point_key(point, runner), "point": point,
                           "cpu": round(cpu, 3), "wall": round(wall, 3), "end": round(time.time(), 3),
                           "pid": os.getpid()}) + "\n"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)



def execute(runner: Runner, point: Point) -> Record:
    """Run one point and build its record (module docstring); top-level so executors can pickle it.

    The runner returns ``{"result": {...}, "params": {...}}``: the measurements, and the catalog parameters
    it derived while building the run (n, lam, D, ...); they are merged over ``point["params"]`` and the
    catalog entries ``point.get("predict")`` (all by default) are evaluated there.

    Parameters
    ----------
    runner : callable
        ``runner(point) -> {"result": ..., "params": ...}``, top-level.
    point : dict
        The grid point.

    Returns
    -------
    dict
        The record: key, runner, point, params, result, predicted, prediction_errors, versions.

    Raises
    ------
    TypeError
        If the runner returns anything but a dict with "result" (and optionally "params").
    """
    profile = os.environ.get(PROFILE_ENVIRONMENT)
    if profile:
        cpu, wall = time.process_time(), time.perf_counter()
    output = runner(point)
    if profile:
        _log_profile(profile, runner, point, time.process_time() - cpu, time.perf_counter() - wall)
    if not isinstance(output, Mapping) or "result" not in output:
        raise TypeError(
            f"runner {runner_name(runner)} must return a dict with a 'result' entry; got {output!r}"
        )
    unknown = set(output) - {"result", "params"}
    if unknown:
        raise TypeError(f"runner {runner_name(runner)} returned unknown entries {sorted(unknown)}")
    params = {**point.get("params", {}), **output.get("params", {})}
    predicted, errors = predict(params, point.get("predict"))
    record = {
        "key": point_key(point, runner),
        "runner": runner_name(runner),
        "point": point,
        "params": params,
        "result": output["result"],
        "predicted": predicted,
        "prediction_errors": errors,
        "versions": package_versions(),
    }
    return json.loads(canonical_json(record))  # exactly what a reader of the file gets back


# ----------------------------------------------------------------------------------------------- the sweep


def run_sweep(
    points: Iterable[Point],
    path: str | os.PathLike[str],
    *,
    runner: Runner,
    executor: concurrent.futures.Executor | None = None,
    max_workers: int | None = None,
    progress: bool = True,
    desc: str | None = None,
    fsync: bool = True,
    cost: Callable[[Point], float] | None = None,
    follow: Callable[[Record], Iterable[Point]] | None = None,
    runner_of: Callable[[Point], Runner] | None = None,
) -> list[Record]:
    """Run every point of `points` whose record is not yet in `path`; return the records of all `points`.

    - `runner`: ``runner(point) -> {"result": ..., "params": ...}``, a top-level function (each figure has
      its own; it builds the run from the point and tunes through `algorithms.tune`).
    - `executor`: any `concurrent.futures.Executor` (it is not shut down here): `SerialExecutor()`, a
      ``ProcessPoolExecutor``, or a Dask cluster's ``Client.get_executor()``. Default: `default_executor`
      (a process pool over `max_workers` cores, all of them if None), shut down at the end.
    - Duplicate points run once. Records already in `path` for other points are kept and not returned.
    - On the first failing run the pending runs are cancelled and a RuntimeError naming the point is raised;
      every record finished before that is already on disk.

    Parameters
    ----------
    points : iterable of dict
        The grid (`grid`).
    path : str or os.PathLike
        The record file (JSONL).
    runner : callable
        See above.
    executor : concurrent.futures.Executor, optional
        See above.
    max_workers : int, optional
        Processes of the default executor.
    progress : bool, default True
        Show a tqdm bar on stderr.
    desc : str, optional
        The bar's label.
    fsync : bool, default True
        Passed to `RecordWriter`.
    cost : callable, optional
        An estimate of a point's run time: the points are submitted most expensive first, so that the
        workers of a pool finish together (longest processing time first) instead of one worker running
        the heaviest points at the end. It changes neither the records nor their returned order. On a
        `PriorityPool` (`shared_pool`) the cost also ranks the points among those of other sweeps: give
        it in seconds.
    follow : callable, optional
        ``follow(record) -> points``: points to run once `record` exists (a series that goes on to the
        next size only if it did not hit its cap there). Each is run (or found in the file) like the
        given points, and is followed in turn; the sweep ends when nothing is left to run. Followed
        points are returned after the given ones, in the order found.
    runner_of : callable, optional
        ``runner_of(point) -> runner``: a point's own runner (top-level, as `runner`), for one sweep over
        points of several kinds written to one file (`runner` is the default). A record names its point's
        runner and its key is that runner's (`point_key`), as when each kind had a sweep of its own.

    Returns
    -------
    list of dict
        The records in the order of `points` (first occurrence).

    Raises
    ------
    TypeError
        If a point is not a dict, or the runner is not a top-level function.
    RuntimeError
        If a run fails (naming its point), or another sweep writes the same file.

    Examples
    --------
    A toy runner; the second sweep resumes, running only the new point:

    >>> import pathlib, shutil, tempfile
    >>> def square(point):
    ...     return {"result": {"t_eps": point["x"] ** 2}, "params": {"n": point["x"]}}
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> points = grid({"x": [1, 2, 3]}, base={"predict": []})
    >>> records = run_sweep(points, folder / "toy.jsonl", runner=square, executor=SerialExecutor(),
    ...                     progress=False)
    >>> [record["result"]["t_eps"] for record in records]
    [1, 4, 9]
    >>> records = run_sweep(grid({"x": [1, 2, 3, 4]}, base={"predict": []}), folder / "toy.jsonl",
    ...                     runner=square, executor=SerialExecutor(), progress=False)
    >>> len(records), len(read_records(folder / "toy.jsonl"))
    (4, 4)
    >>> shutil.rmtree(folder)
    """
    names: dict[Runner, str] = {runner: runner_name(runner)}  # a lambda or nested function is refused here
    runners: dict[str, Runner] = {}  # key -> the point's runner

    def runner_for(point: Point) -> Runner:
        chosen = runner if runner_of is None else runner_of(point)
        if chosen not in names:
            names[chosen] = runner_name(chosen)
        return chosen

    ordered: dict[str, Point] = {}

    def admit(new: Iterable[Point]) -> list[tuple[str, Point]]:
        """The points of `new` not seen before, as (key, point), now in `ordered`."""
        admitted = []
        for point in new:
            if not isinstance(point, Mapping):
                raise TypeError(f"every sweep point must be a dict; got {type(point).__name__}")
            clean = json.loads(canonical_json(point))
            chosen = runner_for(clean)
            key = point_key(clean, names[chosen])
            if key not in ordered:
                ordered[key] = clean
                runners[key] = chosen
                admitted.append((key, clean))
        return admitted

    def finished(records: Iterable[Record]) -> dict[str, Record]:
        # a key names its runner (`point_key`): a record of another runner never has a point's key
        return {record["key"]: record for record in records}

    done = finished(read_records(path))

    def unfinished(items: Iterable[tuple[str, Point]]) -> list[tuple[str, Point]]:
        """The items without a record, and (with `follow`) those that the records of the others lead to."""
        pending, queue = [], list(items)
        while queue:
            key, point = queue.pop(0)
            if key not in done:
                pending.append((key, point))
            elif follow is not None:
                queue += admit(follow(done[key]))
        return pending

    def by_cost(items: list[tuple[str, Point]]) -> list[tuple[str, Point]]:
        return items if cost is None else sorted(items, key=lambda item: -float(cost(item[1])))  # stable

    todo = by_cost(unfinished(admit(points)))
    if todo:
        own_executor = executor is None
        pool = default_executor(max_workers) if own_executor else executor
        try:
            with RecordWriter(path, fsync=fsync) as writer:
                # A record written by a concurrent process between reading and locking would be duplicated.
                done.update(finished(read_records(path)))
                todo = by_cost(unfinished(todo))
                bar = tqdm(total=len(ordered), initial=len(ordered) - len(todo), desc=desc or "sweep",
                           disable=not progress, unit="run", file=sys.stderr)
                incoming: list[tuple[str, Point]] = []
                try:
                    for key, future, futures in _completed(pool, runners, todo, cost, incoming):
                        try:
                            record = future.result()
                        except Exception as error:
                            for other in futures:
                                other.cancel()
                            raise RuntimeError(
                                f"sweep point {key} failed: {error}\npoint: {canonical_json(ordered[key])}"
                            ) from error
                        writer.append(record)
                        done[key] = record
                        if follow is not None:
                            incoming += by_cost(unfinished(admit(follow(record))))
                            bar.total = len(ordered)
                        bar.update(1)
                finally:
                    bar.close()
        finally:
            if own_executor:
                pool.shutdown(wait=True, cancel_futures=True)
    return [done[key] for key in ordered]


def _completed(
    pool: concurrent.futures.Executor, runners: Mapping[str, Runner], todo: Sequence[tuple[str, Point]],
    cost: Callable[[Point], float] | None, incoming: list[tuple[str, Point]],
) -> Iterator[tuple[str, concurrent.futures.Future, Iterable[concurrent.futures.Future]]]:
    """(key, finished future, every future) in completion order; one at a time, in order, when serial.

    Items the caller appends to `incoming` while handling a finished future are submitted before the next
    wait (serially: run after the items already queued)."""
    if isinstance(pool, SerialExecutor):  # run lazily so each record is written as soon as it exists
        queue = list(todo)
        while queue or incoming:
            queue += incoming
            incoming.clear()
            key, point = queue.pop(0)
            future = pool.submit(execute, runners[key], point)
            yield key, future, (future,)
        return
    futures: dict[concurrent.futures.Future, str] = {}

    def submit(items: Iterable[tuple[str, Point]]) -> None:
        for key, point in items:
            if cost is not None and hasattr(pool, "submit_with_cost"):
                futures[pool.submit_with_cost(float(cost(point)), execute, runners[key], point)] = key
            else:
                futures[pool.submit(execute, runners[key], point)] = key

    submit(todo)
    waiting = set(futures)
    while waiting:
        with _turn_given_away():  # other figures of this process run while this one waits
            finished, _ = concurrent.futures.wait(waiting, return_when=concurrent.futures.FIRST_COMPLETED)
        for future in sorted(finished, key=lambda f: futures[f]):
            waiting.discard(future)
            yield futures[future], future, futures
            if incoming:
                new = len(futures)
                submit(incoming)
                incoming.clear()
                waiting.update(list(futures)[new:])


# ------------------------------------------------------------------------------------ results in records


def outcome(result: Any) -> dict[str, Any]:
    """What a figure record keeps of one `algorithms.Result`: the configuration (step size, hyper-parameters
    without DeTAG's per-round schedule), T_eps at x-bar and at the workers' own models (``t_eps_local``),
    the iterations run, ``status`` ('converged' | 'max_iterations' | 'diverged'), ``message`` and
    ``diverged``.

    Examples
    --------
    >>> from decbounds import algorithms, instances
    >>> f = instances.heterogeneous_quadratic(4, 3, 1.0, seed=0)
    >>> W = instances.gossip_matrix(instances.topology("ring", 4), "metropolis")
    >>> kept = outcome(algorithms.run("dsgt", f, W, step_size=0.2, iterations=1000, tol=1e-2))
    >>> kept["t_eps"], kept["status"], kept["hyper"]
    (184, 'converged', {'momentum': 0.0})
    """
    hyper = {key: value for key, value in result.hyper.items() if key not in ("factors", "schedule")}
    return {"step_size": result.step_size, "hyper": hyper, "t_eps": result.t_eps,
            "t_eps_local": result.t_eps_local, "iterations": result.iterations, "status": result.status,
            "message": result.message, "diverged": result.diverged}


def winner_index(tuned: Any) -> int:
    """The position of a tuned `algorithms.Result`'s winner among its ``grid.runs`` (ValueError if none).

    Raises
    ------
    ValueError
        If no configuration reached eps (``tuned.grid.winner`` is None).

    Examples
    --------
    See `tune_both`.
    """
    if tuned.grid.winner is None:
        raise ValueError("the tuning found no configuration that reached eps")
    return tuned.grid.winner


def tune_both(name: str, problem: Any, W: Any, grid: Any, *, reuse: bool = False, **options: Any
              ) -> tuple[Any, dict[str, Any]]:
    """`algorithms.tune` for T_eps at x-bar, then the worker-output side (`tune_worker_output`).

    A branch-and-bound search (``prune=True``) stops each run at its x-bar T_eps (``stop="average"``,
    the same T_eps, fewer iterations) and tunes the worker output again; a plain search runs until both
    outputs are eps-stationary, so its runs hold the worker-output T_eps as well.

    Parameters
    ----------
    name, problem, W, grid
        As ``algorithms.tune`` (the algorithm, the oracle or local functions, the gossip matrix, the
        step-size grid).
    reuse : bool, default False
        Let the worker-output search reuse the runs it can (`tune_worker_output`): only for problems on which
        a configuration has the same bits alone and in a batch (the zero chain; ``algorithms.engine``).
    **options
        ``algorithms.tune``'s keywords (``tol``, ``iterations``, ``seeds``, ``prune``, ``groups``, ...) and
        hyper-parameter grids.

    Returns
    -------
    tuple of (Result, dict)
        The x-bar tuning, and `tune_worker_output`'s dict.

    Raises
    ------
    ValueError, TypeError
        As ``algorithms.tune``.

    Examples
    --------
    D-PSGD's workers never reach eps on heterogeneous data (no worker-output winner); DSGT's do:

    >>> from decbounds import instances
    >>> f = instances.heterogeneous_quadratic(4, 3, 1.0, seed=0)
    >>> W = instances.gossip_matrix(instances.topology("ring", 4), "metropolis")
    >>> tuned, local = tune_both("dpsgd", f, W, [0.1, 0.2, 0.4], tol=1e-2, iterations=1000)
    >>> tuned.t_eps, winner_index(tuned), local["t_eps_local"]
    (91, 2, None)
    >>> tuned, local = tune_both("dsgt", f, W, [0.1, 0.2], tol=1e-2, iterations=1000)
    >>> tuned.t_eps, local["t_eps_local"], local["best_local"]["step_size"]
    (184, 184, 0.2)
    """
    stop = "average" if options.get("prune") else "both"
    tuned = algorithms.tune(name, problem, W, grid, stop=stop, **options)
    return tuned, tune_worker_output(tuned, name, problem, W, grid, reuse=reuse, **options)


def tune_worker_output(tuned: Any, name: str, problem: Any, W: Any, grid: Any, *, reuse: bool = False,
                       **options: Any) -> dict[str, Any]:
    """The worker-output side of a tuned point: ``t_eps_local``, the least T_eps at which every worker's
    own model is eps-stationary over the same grid (the minimum of `local_t_eps_score`), its configuration
    ``best_local``, and ``t_eps_local_of_best``, the worker-output T_eps of the x-bar winner itself.

    `options` are the keywords of the x-bar tuning `tuned` (one seed). The runs of `tuned` decide it when
    every run either measured its worker T_eps or ran at least as long as the least one measured (then it
    could not have beaten it). Otherwise the grid is tuned again with ``score=local_t_eps_score`` until both
    outputs are eps-stationary, branch and bound starting from the x-bar winner's group.

    With ``reuse`` that search runs only what it must (`_reusing_local_search`; the same answer): the x-bar
    winner's own run to its worker T_eps U stands for that configuration in its group; a configuration
    whose x-bar run went as far as its group's cap without a worker T_eps cannot win and is not run; one
    whose x-bar run ended with both T_eps is that run; a group runs the smallest sub-grid (steps x values)
    that holds the rest. It needs a problem on which a configuration has the same bits alone and in a
    batch.

    Parameters
    ----------
    tuned : Result
        The x-bar tuning (``algorithms.tune``'s result, with ``grid``).
    name, problem, W, grid, **options
        The arguments that tuning was run with.
    reuse : bool, default False
        See above.

    Returns
    -------
    dict
        ``t_eps_local`` (None when no configuration's workers reached eps), ``best_local`` (its `outcome`)
        and ``t_eps_local_of_best``.
    """
    cap = int(options["iterations"])
    finished = [result for result in tuned.grid.runs if result.t_eps_local is not None]
    best = min(finished, key=local_t_eps_score, default=None)
    bound = math.inf if best is None else float(best.t_eps_local)
    # a run that stopped at iteration m (cap, branch and bound, or its x-bar T_eps) without a worker T_eps
    # has none <= m
    exact = all(result.t_eps_local is not None or result.diverged or result.iterations >= min(cap, bound)
                for result in tuned.grid.runs)
    own = tuned.t_eps_local if tuned.grid.winner is not None else None
    if not exact:
        search = _reusing_local_search if reuse and _reusable(name, options) else _tune_local
        best, alone = search(tuned, name, problem, W, grid, **options)
        own = None if alone is None else alone.t_eps_local
    return {"t_eps_local": None if best is None else best.t_eps_local,
            "best_local": None if best is None else outcome(best),
            "t_eps_local_of_best": own}


#: Keywords of `algorithms.tune` that are not hyper-parameters of the algorithm.
_TUNE_OPTIONS = frozenset({"tol", "iterations", "seeds", "batch", "admissible", "prune", "score", "callback",
                           "record_every", "stop", "incumbent", "groups"})


def _tune_local(tuned: Any, name: str, problem: Any, W: Any, grid: Any, **options: Any) -> tuple[Any, Any]:
    """The run with the least worker-output T_eps over the grid of `tuned` (`algorithms.tune` with
    ``score=local_t_eps_score``, runs until both outputs are eps-stationary), or None; and the x-bar
    winner's own run to its worker T_eps (None without a winner).

    Branch and bound from a known value: the x-bar winner's configuration runs first on its own; its worker
    T_eps U caps every group (``incumbent=U + 1``), the winner's group first. Only a configuration with
    a worker T_eps <= U can win, so the answer is the grid's minimum.
    """
    groups = list(options.pop("groups", None) or [{}])
    settings = {key: value for key, value in options.items() if key in _TUNE_OPTIONS}
    hyper = {key: value for key, value in options.items() if key not in _TUNE_OPTIONS}
    first: Any = None
    if tuned.grid.winner is not None:
        winner, group = tuned, groups.pop(tuned.grid.winner_group or 0)
        groups.insert(0, group)
        one = {key: winner.hyper[key] if isinstance(value, (list, tuple)) else value
               for key, value in {**hyper, **group}.items()}
        single = {**settings, "prune": False}
        alone = algorithms.tune(name, problem, W, [winner.step_size], score=local_t_eps_score, stop="both",
                                **single, **one)
        first = alone if alone.grid.winner is not None else None
    incumbent = None if first is None else first.t_eps_local + 1
    local = algorithms.tune(name, problem, W, grid, score=local_t_eps_score, stop="both", groups=groups,
                            incumbent=incumbent, **settings, **hyper)
    return (local if local.grid.winner is not None else first), first


def _reusable(name: str, options: Mapping[str, Any]) -> bool:
    """Whether `_reusing_local_search` can stand for `_tune_local` with these options: no callback, record
    spacing or own score, and for DeTAG its searched hyper-parameters given (no `algorithms.detag_grid`)."""
    if {"callback", "record_every", "score", "stop", "incumbent"} & set(options):
        return False
    if algorithms.entry(name).name != "detag":
        return True
    given = set(options).union(*(options.get("groups") or [{}]))
    return {"eta", "start", "R"} <= given


def _is_axis(key: str, value: Any) -> bool:
    """Whether `run_batch` reads a hyper-parameter as a grid axis (a list, tuple or array; not a list-valued
    parameter such as DeFacto's factors)."""
    from decbounds.algorithms.api import _LIST_VALUED

    return isinstance(value, (list, tuple, np.ndarray)) and key not in _LIST_VALUED


def _configurations(values: Mapping[str, Any]) -> tuple[list[str], list[list[Any]]]:
    """The axes of a `run_batch` call as it reads its hyper-parameters: (keys, values of each), a scalar
    being an axis of one value."""
    return list(values), [list(value) if _is_axis(key, value) else [value] for key, value in values.items()]


def _reusing_local_search(tuned: Any, name: str, problem: Any, W: Any, grid: Any, **options: Any
                          ) -> tuple[Any, Any]:
    """`_tune_local`'s answer, running only what it must (`tune_worker_output`'s ``reuse``).

    The search is `_tune_local`'s: the x-bar winner's configuration alone to its worker T_eps U (taken from
    its x-bar runs when they already hold it), then the groups, the winner's first, each under the cap
    min(iterations, best so far) with ``prune`` (the incumbent U + 1 to start with), the first configuration
    of least median worker T_eps winning. What it reuses has the same bits as what it stands for on a
    problem whose configurations do not depend on their batch:

    - the winner's configuration in its group is the run to U (a run that stopped before the cap is the
      run under any larger cap; without U its group's cap is the same as that run's);
    - a configuration whose x-bar run on every seed ended (not diverged) with both T_eps is that run (the
      stop at x-bar's T_eps is the stop at both);
    - a configuration whose x-bar run on every seed went (not diverged) to the group's cap or beyond
      without a worker T_eps has none within the cap: it cannot win and is left out;
    - the rest runs as the smallest sub-grid of the group (its steps x its values of each axis) that
      holds it, one `algorithms.run_batch` as the group was.
    """
    settings = {key: value for key, value in options.items() if key in _TUNE_OPTIONS}
    hyper = {key: value for key, value in options.items() if key not in _TUNE_OPTIONS}
    groups = [dict(group) for group in (settings.pop("groups", None) or [{}])]
    iterations = int(settings["iterations"])
    prune = bool(settings.get("prune", False))
    seeds = list(np.atleast_1d(np.asarray(settings.get("seeds", (0,)))).tolist())
    per_config = len(seeds)
    run_options = {key: settings[key] for key in ("tol", "batch") if key in settings}
    f = problem.f if hasattr(problem, "sample") and hasattr(problem, "f") else problem
    steps = [float(step) for step in np.atleast_1d(np.asarray(grid, dtype=float))]
    if settings.get("admissible", True):
        steps = [step for step in steps if step <= 1.0 / float(f.smoothness) * (1.0 + 1e-12)]

    # the x-bar runs of each configuration, by (group, configuration), in the x-bar tuning's order
    layouts = [_configurations({**hyper, **group}) for group in groups]
    sizes = [len(steps) * math.prod(len(axis) for axis in axes) for _, axes in layouts]
    if sum(sizes) * per_config != len(tuned.grid.runs):  # not the layout expected: search as before
        return _tune_local(tuned, name, problem, W, grid, **options)
    xbar: dict[tuple[int, int], list[Any]] = {}
    position = 0
    for group_index, size in enumerate(sizes):
        for config in range(size):
            xbar[(group_index, config)] = list(tuned.grid.runs[position : position + per_config])
            position += per_config

    first: Any = None
    known: dict[tuple[int, int], list[Any]] = {}
    order = list(range(len(groups)))
    if tuned.grid.winner is not None:
        winner_group = tuned.grid.winner_group or 0
        offset = sum(sizes[:winner_group]) * per_config
        winner_config = (winner_group, (tuned.grid.winner - offset) // per_config)
        order.remove(winner_group)
        order.insert(0, winner_group)
        own_runs = xbar[winner_config]
        if all(run.t_eps is not None and run.t_eps_local is not None and not run.diverged
               for run in own_runs):
            alone_runs = own_runs  # x-bar's stop was already the stop at both
        else:
            one = {key: tuned.hyper[key] if isinstance(value, (list, tuple)) else value
                   for key, value in {**hyper, **groups[winner_group]}.items()}
            alone_runs = algorithms.run_batch(name, problem, W, step_sizes=[tuned.step_size], seeds=seeds,
                                              iterations=iterations, stop="both", **run_options, **one)
        median = float(np.median([local_t_eps_score(run) for run in alone_runs]))
        if math.isfinite(median):
            first = alone_runs[0]
        known[winner_config] = alone_runs  # in a group whose cap it stopped before

    best: float | None = None if first is None else float(first.t_eps_local + 1)
    found: Any = None
    for group_index in order:
        cap = _group_cap(iterations, prune, best)
        keys, axes = layouts[group_index]
        combos = list(itertools.product(*(range(len(axis)) for axis in axes)))
        results: dict[int, list[Any] | None] = {}
        pending: list[int] = []
        for config in range(sizes[group_index]):
            runs = xbar[(group_index, config)]
            if (group_index, config) in known and (
                    max(run.iterations for run in known[(group_index, config)]) < cap or cap == iterations):
                results[config] = known[(group_index, config)]
            elif all(run.t_eps is not None and run.t_eps_local is not None and not run.diverged
                     and run.iterations < cap for run in runs):
                results[config] = runs
            elif all(run.t_eps_local is None and not run.diverged and run.iterations >= cap for run in runs):
                results[config] = None  # no worker T_eps within the cap: it cannot win
            else:
                pending.append(config)
        if pending:
            step_set = sorted({config // len(combos) for config in pending})
            value_sets = [sorted({combos[config % len(combos)][axis] for config in pending})
                          for axis in range(len(axes))]
            given = {**hyper, **groups[group_index]}
            values = {key: [axes[axis][j] for j in value_sets[axis]] if _is_axis(key, given[key])
                      else given[key] for axis, key in enumerate(keys)}
            ran = algorithms.run_batch(name, problem, W, step_sizes=[steps[i] for i in step_set], seeds=seeds,
                                       iterations=cap, stop="both", **run_options, **values)
            index = 0
            for step_index in step_set:
                for combo in itertools.product(*value_sets):
                    config = step_index * len(combos) + combos.index(combo)
                    if config in pending:
                        results[config] = ran[index : index + per_config]
                    index += per_config
        for config in range(sizes[group_index]):
            runs = results[config]
            if runs is None:
                continue
            median = float(np.median([local_t_eps_score(run) for run in runs]))
            if math.isfinite(median) and (best is None or median < best):
                best, found = median, runs[0]
    return (found if found is not None else first), first


def _group_cap(iterations: int, prune: bool, best: float | None) -> int:
    """`algorithms.tune`'s cap of a group: ``iterations``, or with ``prune`` the best median score so far."""
    return min(iterations, math.floor(best)) if prune and best is not None else iterations
