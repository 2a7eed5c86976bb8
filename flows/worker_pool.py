"""Worker processes for per-item work (the ``process`` stage): isolated failures, no orphans.

* Every item gets an outcome: an exception in a worker (or in sending its result back) becomes
  the ``on_error`` outcome of that item, never an exception of the whole map.
* A worker killed hard (segfault, OOM killer) breaks the pool: results already finished are kept
  (written by the caller as they arrive); the items that were in flight are then run one at a
  time in a fresh single-worker pool, so the one that kills its worker again is identified and
  gets the ``on_error`` outcome (``WorkerDied``), and the rest go on in a new pool.
* Workers end with their parent: on Linux ``PR_SET_PDEATHSIG`` (SIGKILL), everywhere a watchdog
  thread that exits the worker when its parent process is gone (killed build: nothing left behind).
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

#: how often a worker's watchdog checks that its parent is alive (seconds)
WATCHDOG_INTERVAL_S = 0.5
_PR_SET_PDEATHSIG = 1


def worker_init(parent_pid: int) -> None:
    """Pool initializer: tie the worker's life to ``parent_pid`` (the process that made the pool)."""
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):  # no prctl: the watchdog below still ends the worker
            pass
    if os.getppid() != parent_pid:  # the parent died before the signal was armed
        os._exit(1)
    threading.Thread(target=_watch_parent, args=(parent_pid,), name="parent-watchdog", daemon=True).start()


def _watch_parent(parent_pid: int) -> None:
    while os.getppid() == parent_pid:
        time.sleep(WATCHDOG_INTERVAL_S)
    os._exit(1)


def _pool(workers: int) -> ProcessPoolExecutor:
    return ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                               initializer=worker_init, initargs=(os.getpid(),))


class PoolKeeper:
    """Keeps one spawn pool alive across maps (the rounds of a build), so worker start-up
    (interpreter, imports, language profiles) is paid once per run, not once per round. A pool
    that broke is dropped and the next map starts a fresh one; :meth:`close` ends the workers."""

    def __init__(self) -> None:
        self._pool: ProcessPoolExecutor | None = None
        self._workers = 0

    def get(self, workers: int) -> ProcessPoolExecutor:
        if self._pool is None or self._workers != workers:
            self.close()
            self._pool, self._workers = _pool(workers), workers
        return self._pool

    def discard(self) -> None:
        """Drop a broken pool (its workers are gone or going)."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
        self._pool = None

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
        self._pool = None


@contextlib.contextmanager
def _scoped(keeper: PoolKeeper | None, workers: int) -> Iterator[tuple[ProcessPoolExecutor, Callable[[], None]]]:
    """A pool for one round: the keeper's (kept open afterwards) or a private one (closed)."""
    if keeper is None:
        with _pool(workers) as pool:
            yield pool, lambda: None
    else:
        yield keeper.get(workers), keeper.discard


def run_isolated(work: Callable[[Any], Any], jobs: Iterable[Any], workers: int,
                 on_error: Callable[[Any, str, str, str], Any], keeper: PoolKeeper | None = None) -> Iterator[Any]:
    """``work(job)`` for every job in ``workers`` spawn processes, yielding results as they
    finish (any order). A job whose worker raised yields ``on_error(job, type, message, step)``
    with step ``worker``; one whose worker died yields it with type ``WorkerDied``. With a
    ``keeper`` the pool outlives the call (reused by the next one)."""
    todo = list(jobs)
    while todo:
        suspects, todo = yield from _round(work, todo, workers, on_error, keeper)
        for job in suspects:  # one at a time, alone: a job that kills its worker again is the culprit
            again, _ = yield from _round(work, [job], 1, on_error)
            for j in again:
                yield on_error(j, "WorkerDied", "the worker process died while processing this item "
                                                "(killed or crashed)", "worker")


def _round(work, jobs: list[Any], workers: int, on_error, keeper: PoolKeeper | None = None) -> Iterator[Any]:
    """One pool over ``jobs`` (at most 2 × workers in flight); returns (in-flight jobs when the
    pool broke, jobs never started)."""
    it = iter(jobs)
    inflight: dict[Future, Any] = {}
    with _scoped(keeper, workers) as (pool, broken):
        unsent: list[Any] = []

        def fill() -> None:
            while len(inflight) < 2 * workers:
                job = next(it, _END)
                if job is _END:
                    return
                try:
                    inflight[pool.submit(work, job)] = job
                except BrokenProcessPool:  # the pool broke before this job was sent: not a suspect
                    unsent.append(job)
                    return

        fill()
        while inflight:
            done, _ = wait(inflight, return_when=FIRST_COMPLETED)
            lost = []
            for fut in done:
                job = inflight.pop(fut)
                try:
                    result = fut.result()
                except BrokenProcessPool:
                    lost.append(job)
                    continue
                except Exception as exc:  # raised in the worker or while returning its result
                    result = on_error(job, type(exc).__name__, str(exc) or repr(exc), "worker")
                yield result
            if lost or unsent:
                # the pool broke: the jobs in flight are suspects (their futures fail with
                # BrokenProcessPool, or may never finish), the unsent ones start again untouched
                suspects = lost + list(inflight.values())
                for fut in inflight:
                    fut.cancel()
                broken()
                return suspects, unsent + list(it)
            fill()
    return [], unsent + list(it)


_END = object()
