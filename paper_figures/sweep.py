"""Sweeps: a declarative grid of runs -> one JSON line per run, resumable, on any concurrent.futures.Executor.

A point is a JSON-able dict describing one run; `run_sweep` runs every point not yet in the record file
through a picklable top-level runner and appends one record per run (`paper_figures.records`: format and
durability). Records hold no timings or hostnames: the same point gives the same line whichever executor
ran it (`paper_figures.compare` checks that). ``DECBOUNDS_SWEEP_PROFILE`` logs each point's seconds. This
module re-exports the public names of `records`, `pool`, `provenance` and `tuning_reuse`.
See docs/tutorials/sweeps.md.
"""

from __future__ import annotations

import concurrent.futures
import functools
import json
import numbers
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import cast

from decbounds.algorithms.result import to_jsonable
from decbounds.paper_figures.pool import (
    FORKSERVER_PRELOAD,
    PriorityPool,
    SerialExecutor,
    default_executor,
    figure_turn,
    parallel_map,
    run_concurrently,
    shared_pool,
)
from decbounds.paper_figures.pool import _turn_given_away as _turn_given_away
from decbounds.paper_figures.provenance import (
    VERSIONED_PACKAGES,
    git_commit,
    package_versions,
)
from decbounds.paper_figures.records import (
    JSONValue,
    Point,
    Record,
    RecordWriter,
    Runner,
    RunOutput,
    canonical_json,
    grid,
    point_key,
    read_records,
    runner_name,
)
from decbounds.paper_figures.tuning_reuse import _reusing_local_search as _reusing_local_search
from decbounds.paper_figures.tuning_reuse import _tune_local as _tune_local
from decbounds.paper_figures.tuning_reuse import (
    outcome,
    tune_both,
    tune_worker_output,
    winner_index,
)
from tqdm.auto import tqdm

from decbounds import algorithms as algorithms  # the tunings' module, reachable as sweep.algorithms as before
from decbounds import bounds

__all__ = [
    "FORKSERVER_PRELOAD",
    "PROFILE_ENVIRONMENT",
    "VERSIONED_PACKAGES",
    "JSONValue",
    "Point",
    "PriorityPool",
    "Record",
    "RecordWriter",
    "RunOutput",
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


def predict(params: Mapping[str, object], names: Sequence[str] | None = None
            ) -> tuple[dict[str, float], dict[str, str]]:
    """Catalog predictions ``bounds.get(name).evaluate(**params)`` for `names` (every entry if None), as
    ``(predicted, errors)``: the values, and why each entry that cannot be evaluated at `params` could not.
    Parameters the catalog does not know are dropped; cached per process.

    Parameters
    ----------
    params : mapping
        Catalog parameters of a point (symbol name -> value; other entries and non-real values are dropped).
    names : sequence of str, optional
        Catalog entries; None for all, ``[]`` for none.

    Examples
    --------
    >>> params = {"Delta": 1, "L": 1, "sigma": 1, "n": 16, "B": 1, "epsilon": 0.1, "lam": 0.9, "run": 7}
    >>> predicted, errors = predict(params, ["lower_bound_gossip"])
    >>> round(predicted["lower_bound_gossip"], 2), errors
    (941.23, {})
    """
    # a figure's own field named like a symbol (topology's n_eff: one value per decay) is not a point value
    known = {key: value for key, value in params.items() if key in bounds.RATE_SYMBOLS
             and isinstance(value, numbers.Real) and not isinstance(value, bool)}
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
    """Run one point and build its record; top-level so executors can pickle it. The runner's ``params`` are
    merged over ``point["params"]`` and the entries ``point.get("predict")`` evaluated there; TypeError if it
    returns anything but a dict with "result".

    Parameters
    ----------
    runner : callable
        ``runner(point) -> {"result": ..., "params": ...}``, top-level.
    point : dict
        The grid point.
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
    # the point's and the runner's params are JSON objects, the point's ``predict`` a list of names
    params = {**cast("Mapping[str, object]", point.get("params", {})),
              **cast("Mapping[str, object]", output.get("params", {}))}
    predicted, errors = predict(params, cast("Sequence[str] | None", point.get("predict")))
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
    read_back: Record = json.loads(canonical_json(record))  # exactly what a reader of the file gets back
    return read_back


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
    """Run every point of `points` whose record is not yet in `path` (duplicates once); return the records
    of all `points`. On the first failing run the pending ones are cancelled and a RuntimeError names the
    point (the finished records are on disk); TypeError for a point that is not a dict or a runner that is not
    top-level.

    Parameters
    ----------
    points : iterable of dict
        The grid (`grid`).
    path : str or os.PathLike
        The record file (JSONL).
    runner : callable
        ``runner(point) -> {"result": ..., "params": ...}``, a top-level function.
    executor : concurrent.futures.Executor, optional
        Any executor (not shut down here); default `default_executor`, shut down at the end.
    max_workers : int, optional
        Processes of the default executor.
    progress : bool, default True
        Show a tqdm bar on stderr.
    desc : str, optional
        The bar's label.
    fsync : bool, default True
        Passed to `RecordWriter`.
    cost : callable, optional
        A point's rough CPU seconds: submitted most expensive first (and ranked among other sweeps' points on
        a `PriorityPool`); changes neither the records nor their order.
    follow : callable, optional
        ``follow(record) -> points`` to run once `record` exists (followed in turn; returned after the
        given points).
    runner_of : callable, optional
        ``runner_of(point) -> runner``: a point's own runner, for points of several kinds in one file.

    Examples
    --------
    >>> import pathlib, shutil, tempfile
    >>> def square(point):
    ...     return {"result": {"t_eps": point["x"] ** 2}, "params": {"n": point["x"]}}
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> records = run_sweep(grid({"x": [1, 2, 3]}, base={"predict": []}), folder / "toy.jsonl",
    ...                     runner=square, executor=SerialExecutor(), progress=False)
    >>> [record["result"]["t_eps"] for record in records]
    [1, 4, 9]
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
        pool = default_executor(max_workers) if executor is None else executor
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
) -> Iterator[tuple[str, concurrent.futures.Future[Record], Iterable[concurrent.futures.Future[Record]]]]:
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
    futures: dict[concurrent.futures.Future[Record], str] = {}

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
