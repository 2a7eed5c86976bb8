"""Item-level work: run a pure per-item function over many jobs, locally or on a Dask cluster.

A stage builds its jobs (plain, picklable tuples: what a worker needs to compute one item — a
raw-store URL and digest, never a connection), hands them to an :class:`ItemRunner` and writes
the results itself: the coordinator is the only writer of the state DB; workers receive inputs
and return results.

The contract (:meth:`ItemRunner.map`), the same for every runner:

* ``work(job)`` runs for every job; results are yielded as they finish, in any order (a stage
  that writes rows sorts them, or keys them, so completion order never shows in the output);
* an exception raised by ``work`` (or while returning its result) yields
  ``on_error(job, type_name, message, "worker")`` instead — a poison item is one result, never
  a failed map;
* a worker that dies on a job (segfault, OOM killer, ``os._exit``): the jobs that were in flight
  are run again one at a time; the one that kills its worker again yields
  ``on_error(job, "WorkerDied", ..., "worker")``; nothing is lost.

Runners:

* :class:`LocalItemRunner` (default, ``execution.runner = "local"``): spawn processes tied to the
  build (:func:`flows.worker_pool.run_isolated`); with one worker (or one job) in-process.
* :class:`DaskItemRunner` (``execution.runner = "dask"``): jobs are grouped into batches of
  ``execution.batch_size``; each batch is one Prefect task run (``item-batch``) submitted through
  :class:`prefect_dask.DaskTaskRunner` — to the scheduler at ``execution.dask_address``, or,
  without one, to a ``distributed.LocalCluster`` of ``execution.dask_workers`` worker processes
  (one thread each) started on the first ``map`` and closed by :meth:`close`.

Why the task runner is used directly: the stages already run inside Prefect tasks of the flow
(``flows/build.py``), and a task run does not carry a task runner of its own, so ``task.submit``
inside a stage would not reach Dask. ``DaskTaskRunner`` is a context manager that can be entered
anywhere (it needs no flow-run context); ``DaskTaskRunner.submit(task, parameters)`` sends the
Prefect task to the cluster, where ``prefect_dask`` runs it with the Prefect task engine and the
caller's serialized context (the batch is visible as a task run of the flow run). The Prefect API
the workers report to is the coordinator's: a local cluster gets it in its environment
(``PREFECT_API_URL`` of the coordinator's server, ephemeral included).

A batch whose worker died comes back as a failed future (``KilledWorker``, a lost connection;
so does a batch that was queued on that worker): its jobs are then run again one at a time, each
alone on the cluster; a job whose single-job batch fails that way again is the culprit
(``WorkerDied``). An unreachable scheduler is :class:`cinesub.errors.DaskUnreachable`
(reason ``dask_unreachable``); only the CLI turns it into an exit code.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, Protocol

from flows.worker_pool import PoolKeeper, run_isolated

if TYPE_CHECKING:
    from cinesub.settings import Settings

#: ``on_error(job, exception type name, message, step)`` → the result that stands for the job
OnError = Callable[[Any, str, str, str], Any]
WORKER_DIED = "WorkerDied"
WORKER_DIED_MESSAGE = "the worker process died while processing this item (killed or crashed)"
#: how long connecting to a remote scheduler may take before it is called unreachable (seconds)
CONNECT_TIMEOUT_S = 20


class _Closing(contextlib.AbstractContextManager):
    """``with runner:`` closes the runner at the end."""

    def __exit__(self, *exc: Any) -> None:
        self.close()


class ItemRunner(Protocol):
    """Runs a pure per-item function over jobs; see the module docstring for the contract."""

    def map(self, work: Callable[[Any], Any], jobs: Iterable[Any], on_error: OnError) -> Iterator[Any]: ...

    def close(self) -> None: ...


def _guarded(work: Callable[[Any], Any], job: Any, on_error: OnError) -> Any:
    try:
        return work(job)
    except Exception as exc:  # a poison item is its on_error result
        return on_error(job, type(exc).__name__, str(exc) or repr(exc), "worker")


class LocalItemRunner(_Closing):
    """Spawn worker processes on this machine (today's behaviour of the ``process`` stage)."""

    def __init__(self, workers: int = 2):
        self.workers = max(1, int(workers))
        self._keeper = PoolKeeper()  # one pool for the whole run (all rounds, all stages)

    def map(self, work: Callable[[Any], Any], jobs: Iterable[Any], on_error: OnError) -> Iterator[Any]:
        jobs = list(jobs)
        workers = min(self.workers, len(jobs))
        if workers <= 1:  # in-process, with the same per-item isolation as the pool
            for job in jobs:
                yield _guarded(work, job, on_error)
            return
        yield from run_isolated(work, jobs, self.workers, on_error, keeper=self._keeper)

    def close(self) -> None:
        self._keeper.close()


def run_batch(work: Callable[[Any], Any], jobs: list[Any], on_error: OnError) -> list[Any]:
    """The body of one ``item-batch`` task: every job's result, a raising job as its on_error."""
    return [_guarded(work, job, on_error) for job in jobs]


def _batch_task():
    from prefect import task
    from prefect.cache_policies import NO_CACHE

    return task(run_batch, name="item-batch", cache_policy=NO_CACHE, persist_result=False, retries=0,
                log_prints=False)


def _died(exc: BaseException) -> bool:
    """Whether a failed batch future means a lost worker (not an exception of ``work``)."""
    names = {c.__name__ for c in type(exc).__mro__}
    return bool(names & {"KilledWorker", "CommClosedError", "CancelledError", "FutureCancelledError",
                         "CancelledFuturesError"})


class DaskItemRunner(_Closing):
    """Batches of jobs as Prefect task runs on a Dask cluster (see the module docstring)."""

    def __init__(self, address: str | None = None, workers: int = 2, batch_size: int = 8):
        self.address = address
        self.workers = max(1, int(workers))
        self.batch_size = max(1, int(batch_size))
        self._runner: Any = None
        self._task: Any = None

    # -- lifecycle -------------------------------------------------------------------------------
    def _start(self) -> Any:
        if self._runner is not None:
            return self._runner
        from prefect_dask import DaskTaskRunner

        from cinesub.errors import DaskUnreachable

        if self.address:
            runner = DaskTaskRunner(address=self.address, client_kwargs={"timeout": CONNECT_TIMEOUT_S})
        else:
            import dask

            # a worker death fails its task at once (KilledWorker): the culprit is found below, one
            # job at a time, instead of the scheduler killing more workers on the same task; a
            # worker whose nanny is slow to restart it (a loaded machine) is waited for, not dropped
            dask.config.set({"distributed.scheduler.allowed-failures": 0,
                             "distributed.deploy.lost-worker-timeout": "3600s"})
            runner = DaskTaskRunner(cluster_kwargs={
                "n_workers": self.workers, "threads_per_worker": 1, "processes": True,
                "dashboard_address": None, "env": _worker_env(), "silence_logs": 40})
        try:
            runner.__enter__()
            runner.client  # connects (or starts the local cluster) now, not on the first submit
        except (OSError, TimeoutError) as exc:
            try:
                runner.__exit__(None, None, None)
            except Exception:  # noqa: BLE001 - already failing: the connection error is what matters
                pass
            where = self.address or "a local cluster"
            raise DaskUnreachable(f"cannot reach the Dask scheduler at {where}: {exc}") from None
        self._runner, self._task = runner, _batch_task()
        return runner

    def close(self) -> None:
        runner, self._runner = self._runner, None
        if runner is not None:
            runner.__exit__(None, None, None)

    # -- work -------------------------------------------------------------------------------------
    def map(self, work: Callable[[Any], Any], jobs: Iterable[Any], on_error: OnError) -> Iterator[Any]:
        jobs = list(jobs)
        if not jobs:
            return
        runner = self._start()
        batches = [jobs[i:i + self.batch_size] for i in range(0, len(jobs), self.batch_size)]
        suspects: list[Any] = []
        for batch, outcome in self._run(runner, work, batches, on_error):
            if outcome is None:
                suspects.extend(batch)
            else:
                yield from outcome
        # the jobs of a batch whose worker died (or that waited on that worker), one at a time and
        # alone, so that a death is its own job's: the one that kills its worker again is the culprit
        for job in suspects:
            for batch, outcome in self._run(runner, work, [[job]], on_error):
                if outcome is None:
                    yield on_error(batch[0], WORKER_DIED, WORKER_DIED_MESSAGE, "worker")
                else:
                    yield from outcome

    def _run(self, runner, work, batches: list[list[Any]], on_error: OnError):
        """(batch, its results) as batches finish; results None when the batch's worker died."""
        from distributed import as_completed

        futures = {}
        for batch in batches:
            fut = runner.submit(self._task, parameters={"work": work, "jobs": batch, "on_error": on_error})
            futures[fut.wrapped_future] = (fut, batch)
        for dfut in as_completed(list(futures), loop=runner.client.loop):
            fut, batch = futures.pop(dfut)
            try:
                yield batch, fut.result()
            except Exception as exc:
                if _died(exc):
                    yield batch, None
                else:  # the batch task itself failed (sending or receiving it): each job is an error
                    yield batch, [on_error(job, type(exc).__name__, str(exc) or repr(exc), "worker")
                                  for job in batch]


def _worker_env() -> dict[str, str]:
    """Environment for local-cluster workers: the coordinator's Prefect API (so workers do not
    start Prefect servers of their own) and its CINESUB_/PREFECT_ variables."""
    env = {k: v for k, v in os.environ.items() if k.startswith(("PREFECT_", "CINESUB_"))}
    if not env.get("PREFECT_API_URL"):
        try:
            from prefect.client.orchestration import get_client

            with get_client(sync_client=True) as client:
                url = str(client.api_url)
            if url.startswith("http"):
                env["PREFECT_API_URL"] = url.rstrip("/")
        except Exception:  # noqa: BLE001 - no API: workers run their tasks without reporting
            pass
    return env


def make_item_runner(settings: Settings, *, runner: str | None = None,
                     dask_address: str | None = None) -> ItemRunner:
    """The item runner the settings choose (``execution`` section); ``runner``/``dask_address``
    override them (CLI flags)."""
    ex = settings.execution
    kind = runner or ex.runner
    if kind == "dask":
        return DaskItemRunner(address=dask_address or ex.dask_address, workers=ex.dask_workers,
                              batch_size=ex.batch_size)
    if kind != "local":
        from cinesub.errors import UsageError

        raise UsageError(f"unknown runner {kind!r} (expected 'local' or 'dask')", "runner_unknown")
    return LocalItemRunner(workers=settings.workers)
