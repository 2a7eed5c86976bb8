"""The pipeline kernel: one runner for both flows (``build-cinesub``, ``build-hollywood``).

A flow is declared as a :class:`FlowSpec`: an ordered list of steps — stage classes and
declared :class:`Loop` s (the subtitle flow's acquire ⇄ process rounds) — plus the flow's own
summary, report and outcome functions. :func:`run_flow` then

* decides sample vs live once (the :class:`flows.env.Environment` of the run, its services
  started for the duration of the run),
* owns run bookkeeping (the ``runs`` row: running → completed / failed / paused / blocked;
  a row still ``running`` when the next build starts is ``interrupted``),
* generates one Prefect task per stage (name = stage name, the stage's retries,
  ``cache_policy=NO_CACHE``; parameters are the run id and the stage name only — small and
  secret-free), which runs the stage through :func:`flows.kernel_exec.execute` (fingerprints,
  reuse, contracts, statistics),
* owns the round loop and the outcome handling (paused on a spent quota, blocked by the
  consistency gate), the summary, the report hook and the ``stage-stats`` table artifact,
* creates the run's item runner (``flows.items.make_item_runner``) once and closes it at the end,
* owns the test hooks behind :attr:`RunContext.item_done` (``CINESUB_FAULT_CRASH_AFTER_<KIND>S``:
  die hard after N committed items, for the crash/resume tests).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prefect import get_run_logger, task
from prefect.cache_policies import NO_CACHE

from cinesub import __version__
from cinesub.records import utcnow
from cinesub.settings import Settings
from cinesub.state import connect
from flows.env import Environment
from flows.kernel_context import RunContext, Stage
from flows.kernel_exec import execute, stage_stats_rows
from flows.kernel_fastpath import new_run_id
from flows.lifecycle import begin_build, log_removed

StageClass = type[Stage]


@dataclass(frozen=True)
class Loop:
    """Stages run in rounds (each built as ``cls(round_no)``, named ``<name>#<round>``) until
    ``until(round results)`` holds or ``max_rounds(settings)`` rounds ran; ``pause(round
    results)`` returning a value stops the flow paused (e.g. a spent download quota)."""

    stages: tuple[StageClass, ...]
    max_rounds: Callable[[Settings], int]
    until: Callable[[dict[str, dict[str, Any]]], bool]
    pause: Callable[[dict[str, dict[str, Any]]], Any] = lambda results: None


@dataclass(frozen=True)
class FlowSpec:
    """A flow: its steps and what it contributes to the runner."""

    name: str
    steps: tuple[StageClass | Loop, ...]
    #: the flow's state DB and how to open it
    state_db: Callable[[Settings], Path]
    schema: str
    #: extra columns of the ``runs`` row (config hash, status date)
    run_columns: Callable[[RunContext], dict[str, Any]]
    summary: Callable[[RunContext, dict[str, Any]], dict[str, Any]]
    format_summary: Callable[[dict[str, Any]], str]
    #: the report task (name, function of (ctx, summary) → info)
    report: tuple[str, Callable[[RunContext, dict[str, Any]], dict[str, Any]]] | None = None
    #: called before a stage runs (e.g. the release inputs before publishing)
    before: Callable[[RunContext, str], None] = lambda ctx, stage: None
    #: outcome summaries: paused (ctx, stages, value) and blocked (ctx, stage stats)
    paused: Callable[[RunContext, dict[str, Any], Any], dict[str, Any]] | None = None
    blocked: Callable[[RunContext, dict[str, Any]], dict[str, Any]] | None = None
    stage_classes: dict[str, StageClass] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for step in self.steps:
            for cls in (step.stages if isinstance(step, Loop) else (step,)):
                self.stage_classes[cls.name] = cls

    def stage_names(self) -> list[str]:
        return list(self.stage_classes)


# --------------------------------------------------------------------------------------------
# the tasks: parameters are ids, the run context stays in this process
# --------------------------------------------------------------------------------------------
_RUNS: dict[str, tuple[FlowSpec, RunContext]] = {}
_TASKS: dict[tuple[str, int], Any] = {}


def _log(level: str, msg: str, *args: Any) -> None:
    try:
        getattr(get_run_logger(), level)(msg, *args)
    except Exception:  # outside a run context (direct call in tests)
        pass


def _run_stage(run_id: str, stage: str, round_no: int | None = None) -> dict[str, Any]:
    spec, ctx = _RUNS[run_id]
    cls = spec.stage_classes[stage]
    st = cls(round_no) if round_no is not None else cls()
    spec.before(ctx, stage)
    ctx.item_done = crash_hook()
    stats = execute(st, ctx)
    _log("info", "%s: %s", st.name, json.dumps({k: v for k, v in stats.items() if k != "funnel"},
                                               default=str)[:2000])
    return stats


def stage_task(cls: StageClass) -> Any:
    """The Prefect task of a stage class (one per stage name and retry count)."""
    key = (cls.name, cls.retries)
    if key not in _TASKS:
        _TASKS[key] = task(name=cls.name, retries=cls.retries, retry_delay_seconds=1,
                           cache_policy=NO_CACHE)(_run_stage)
    return _TASKS[key]


def _report(run_id: str, summary: dict[str, Any]) -> dict[str, Any]:
    spec, ctx = _RUNS[run_id]
    return spec.report[1](ctx, summary)


def crash_hook() -> Callable[..., None]:
    """The test hook behind ``ctx.item_done(kind, con)``: with ``CINESUB_FAULT_CRASH_AFTER_<KIND>S=N``
    the process dies hard (exit 137, after a checkpoint) once N items of that kind were committed
    in one stage run — the crash/resume tests' fault injection."""
    counts: dict[str, int] = {}

    def item_done(kind: str, con: Any = None) -> None:
        limit = int(os.environ.get(f"CINESUB_FAULT_CRASH_AFTER_{kind.upper()}S", "0") or 0)
        if not limit:
            return
        counts[kind] = counts.get(kind, 0) + 1
        if counts[kind] >= limit:
            if con is not None:
                con.execute("CHECKPOINT")
            os._exit(137)

    return item_done


# --------------------------------------------------------------------------------------------
# the runner
# --------------------------------------------------------------------------------------------


def run_flow(spec: FlowSpec, settings: Settings, env: Environment, *, force: bool = False,
             runner: str | None = None, dask_address: str | None = None,
             configure: Callable[[RunContext], None] = lambda ctx: None) -> dict[str, Any]:
    """Run ``spec`` in ``env``: the one way both flows run (see the module docstring)."""
    from cinesub.lock import home_lock

    settings.home.mkdir(parents=True, exist_ok=True)
    # one build per home, also for flow runs a Prefect worker starts (re-entrant: the CLI holds it already)
    with home_lock(settings.home):
        log_removed(begin_build(settings.home))  # watchdog for our processes; a killed build's leftovers
        env.prepare(spec.name)
        with env.services(spec.name):
            ctx = RunContext(settings=settings, run_id=new_run_id(), flow=spec.name, env=env, force=force)
            configure(ctx)
            return _run(spec, ctx, runner, dask_address)


def _set_status(spec: FlowSpec, ctx: RunContext, status: str, summary: dict[str, Any] | None = None) -> None:
    with connect(spec.state_db(ctx.settings), schema=spec.schema) as con:
        con.execute("UPDATE runs SET status = ?, finished_at = ?, summary = coalesce(?, summary) WHERE run_id = ?",
                    [status, utcnow(), None if summary is None else json.dumps(summary, default=str), ctx.run_id])


def _run(spec: FlowSpec, ctx: RunContext, runner: str | None, dask_address: str | None) -> dict[str, Any]:
    from flows.items import make_item_runner

    cols = {"run_id": ctx.run_id, "started_at": utcnow(), "status": "running", "sample": ctx.env.sample,
            "code_version": __version__, **spec.run_columns(ctx)}
    with connect(spec.state_db(ctx.settings), schema=spec.schema) as con:
        # a run still marked running died without finishing (the state DB admits one writer)
        con.execute("UPDATE runs SET status = 'interrupted' WHERE status = 'running'")
        con.execute(f"INSERT INTO runs ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})", list(cols.values()))
    _RUNS[ctx.run_id] = (spec, ctx)
    stages: dict[str, Any] = {}
    try:
        ctx.items = make_item_runner(ctx.settings, runner=runner, dask_address=dask_address)
        outcome = _steps(spec, ctx, stages)
        if outcome is None:
            summary = spec.summary(ctx, stages)
            if spec.report is not None:
                summary["report"] = task(name=spec.report[0], cache_policy=NO_CACHE)(_report)(ctx.run_id, summary)
            status = "completed"
        else:
            status, summary = outcome
        publish_stage_stats(spec, ctx)
    except BaseException:
        _set_status(spec, ctx, "failed")
        raise
    finally:
        _RUNS.pop(ctx.run_id, None)
        if ctx.items is not None:
            ctx.items.close()
    _set_status(spec, ctx, status, summary)
    if status == "completed":
        _log("info", "%s summary:\n%s", spec.name, spec.format_summary(summary))
    return summary


def _steps(spec: FlowSpec, ctx: RunContext, stages: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """Run the steps in order; (status, summary) of an early outcome (paused, blocked) or None."""
    for step in spec.steps:
        if isinstance(step, Loop):
            rounds: list[dict[str, Any]] = []
            stages["rounds"] = rounds
            for round_no in range(1, step.max_rounds(ctx.settings) + 1):
                results = {cls.name: stage_task(cls)(ctx.run_id, cls.name, round_no) for cls in step.stages}
                rounds.append({"round": round_no, **results})
                value = step.pause(results)
                if value:
                    _log("warning", "%s paused (%s): rerun to resume", spec.name, value)
                    return "paused", spec.paused(ctx, stages, value)
                if step.until(results):
                    break
            continue
        stats = stage_task(step)(ctx.run_id, step.name)
        stages[step.name] = stats
        if stats.get("blocked") and spec.blocked is not None:
            _log("error", "%s blocked at %s", spec.name, step.name)
            return "blocked", spec.blocked(ctx, stats)
    return None


# --------------------------------------------------------------------------------------------
# per-stage statistics
# --------------------------------------------------------------------------------------------
STAGE_STATS_ARTIFACT_KEY = "stage-stats"


def publish_stage_stats(spec: FlowSpec, ctx: RunContext) -> None:
    """The ``stage-stats`` table artifact of the run (a Prefect API failure never fails the build)."""
    try:
        from prefect.artifacts import create_table_artifact

        with connect(spec.state_db(ctx.settings), schema=spec.schema) as con:
            rows = stage_stats_rows(con, ctx.run_id, spec.name)
        table = [{**r, "dropped": ", ".join(f"{k} {v}" for k, v in r["dropped"].items())} for r in rows]
        create_table_artifact(table=table, key=STAGE_STATS_ARTIFACT_KEY,
                              description=f"{spec.name} {ctx.run_id}: items in/out, dropped by reason, seconds")
    except Exception as exc:
        _log("warning", "stage-stats artifact not created: %s: %s", type(exc).__name__, str(exc)[:300])
