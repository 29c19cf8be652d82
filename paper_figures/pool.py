"""Scheduling sweeps: the executors, the shared `PriorityPool` (a free core takes the most expensive
waiting point of any figure) and the figures' turns (`figure_turn`). Records do not depend on the executor."""

from __future__ import annotations

import collections
import concurrent.futures
import contextlib
import functools
import heapq
import itertools
import multiprocessing
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, ParamSpec, TypeVar

__all__ = [
    "FORKSERVER_PRELOAD",
    "PriorityPool",
    "SerialExecutor",
    "default_executor",
    "figure_turn",
    "parallel_map",
    "run_concurrently",
    "shared_pool",
]

#: Modules the fork server of `default_executor` imports once for all its workers.
FORKSERVER_PRELOAD: tuple[str, ...] = (
    "decbounds.paper_figures.sweep", "decbounds.bounds", "decbounds.instances", "decbounds.oracles",
    "decbounds.algorithms",
)

_P = ParamSpec("_P")
_T = TypeVar("_T")
_R = TypeVar("_R")


# ---------------------------------------------------------------------------------------------- executors


class SerialExecutor(concurrent.futures.Executor):
    """A `concurrent.futures.Executor` that runs each task in the calling process when it is submitted
    (debugging, tiny sweeps, the reference the parallel executors are tested against)."""

    def submit(self, fn: Callable[_P, _T], /, *args: _P.args, **kwargs: _P.kwargs
               ) -> concurrent.futures.Future[_T]:
        """Run ``fn(*args, **kwargs)`` now; its value or exception is in the returned, finished future.

        Parameters
        ----------
        fn : callable
            The task.
        *args, **kwargs
            Its arguments.
        """
        future: concurrent.futures.Future[_T] = concurrent.futures.Future()
        future.set_running_or_notify_cancel()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as error:  # delivered through the future, as a pool does
            future.set_exception(error)
        return future


def default_executor(max_workers: int | None = None) -> concurrent.futures.Executor:
    """A process pool over the cores, or `SerialExecutor` for one worker (ValueError below 1). Workers start
    from a fork server that preloads decbounds (`FORKSERVER_PRELOAD`), not by forking a caller that may hold
    threads; a script running a sweep must guard it with ``if __name__ == "__main__":``.

    Parameters
    ----------
    max_workers : int, optional
        Processes (default ``os.cpu_count()``).
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
    context: multiprocessing.context.BaseContext
    if "forkserver" in multiprocessing.get_all_start_methods():
        forkserver = multiprocessing.get_context("forkserver")
        forkserver.set_forkserver_preload(list(FORKSERVER_PRELOAD))  # no effect once the server runs
        context = forkserver
    else:
        context = multiprocessing.get_context("spawn")
    return concurrent.futures.ProcessPoolExecutor(max_workers=workers, mp_context=context)


class PriorityPool(concurrent.futures.Executor):
    """A process pool that gives a free worker the most expensive task waiting (ties in submission order),
    whichever sweep it is from, so the cores stay busy to the end of the whole set.

    Parameters
    ----------
    max_workers : int, optional
        Processes (default ``os.cpu_count()``), those of `default_executor`.

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

    def submit(self, fn: Callable[_P, _T], /, *args: _P.args, **kwargs: _P.kwargs
               ) -> concurrent.futures.Future[_T]:
        """`submit_with_cost` at cost 0 (after every task of a positive cost).

        Parameters
        ----------
        fn : callable
            The task, picklable (it runs in a worker process).
        *args, **kwargs
            Its arguments, picklable.
        """
        return self.submit_with_cost(0.0, fn, *args, **kwargs)

    def submit_with_cost(self, cost: float, fn: Callable[_P, _T], /, *args: _P.args, **kwargs: _P.kwargs
                         ) -> concurrent.futures.Future[_T]:
        """Queue ``fn(*args, **kwargs)``; of the tasks waiting, the one of the largest `cost` starts first
        (RuntimeError once shut down).

        Parameters
        ----------
        cost : float
            Rough run time in CPU seconds; ties run in the order submitted.
        fn : callable
            The task, picklable.
        *args, **kwargs
            Its arguments, picklable.
        """
        future: concurrent.futures.Future[_T] = concurrent.futures.Future()
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

    def _relay(self, future: concurrent.futures.Future[Any], inner: concurrent.futures.Future[Any]) -> None:
        try:
            value = inner.result()
        except BaseException as error:
            self._finished(future, None, error)
        else:
            self._finished(future, value, None)

    def _finished(self, future: concurrent.futures.Future[Any], value: object, error: BaseException | None
                  ) -> None:
        with self._condition:
            self._running -= 1
            self._condition.notify_all()
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(value)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Stop taking tasks; ``cancel_futures`` cancels those waiting, ``wait`` runs the rest first.

        Parameters
        ----------
        wait : bool, default True
            Return once the tasks taken (and, without ``cancel_futures``, those waiting) have run.
        cancel_futures : bool, default False
            Cancel the tasks still waiting for a worker.
        """
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

    def submit(self, fn: Callable[_P, _T], /, *args: _P.args, **kwargs: _P.kwargs
               ) -> concurrent.futures.Future[_T]:
        return self.pool.submit(fn, *args, **kwargs)

    def submit_with_cost(self, cost: float, fn: Callable[_P, _T], /, *args: _P.args, **kwargs: _P.kwargs
                         ) -> concurrent.futures.Future[_T]:
        return self.pool.submit_with_cost(cost, fn, *args, **kwargs)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        del wait, cancel_futures  # the pool belongs to `shared_pool`


_SHARED: list[PriorityPool] = []


@contextlib.contextmanager
def shared_pool(max_workers: int | None = None) -> Iterator[PriorityPool]:
    """Inside the block, `default_executor` hands every caller the same `PriorityPool` (whose ``shutdown``
    does nothing), shut down (waiting tasks cancelled) when the block ends.

    Parameters
    ----------
    max_workers : int, optional
        The pool's processes (default ``os.cpu_count()``).
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
    """Run the block as one of several figures made at once in threads: one such block at a time, turns in
    the order asked; `run_sweep` and `parallel_map` give the turn away while they wait for the pool
    (pyplot and the figures' caches are not thread-safe; the pool is shared).

    Parameters
    ----------
    queued : threading.Event, optional
        Set once this thread has its place in the queue.
    """
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


def run_concurrently(*tasks: Callable[[], _T]) -> list[_T]:
    """Run the tasks at once, each in a thread that takes turns (`figure_turn`), and return their results in
    order; the first exception of a task is raised once every task has ended.

    Parameters
    ----------
    *tasks : callable
        Functions of no argument.
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


def parallel_map(function: Callable[[_T], _R], items: Sequence[_T], *,
                 cost: Callable[[_T], float] | None = None,
                 executor: concurrent.futures.Executor | None = None) -> list[_R]:
    """``[function(item) for item in items]`` on an executor, most expensive first when `cost` is given,
    giving the `figure_turn` away while it waits.

    Parameters
    ----------
    function : callable
        ``function(item)``, top-level (pickled by reference).
    items : sequence
        Its arguments, picklable.
    cost : callable, optional
        ``cost(item)``: rough CPU seconds of an item.
    executor : concurrent.futures.Executor, optional
        Where to run them (default `default_executor`, or the shared pool; shut down at the end).
    """
    own = executor is None
    pool = default_executor() if executor is None else executor
    try:
        order = sorted(range(len(items)), key=lambda i: -float(cost(items[i]))) if cost else range(len(items))
        futures: dict[int, concurrent.futures.Future[_R]] = {}
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
