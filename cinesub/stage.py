"""The one way to define a pipeline stage.

A stage is a small typed unit: it names the state tables it reads and writes, computes a
fingerprint of everything its output depends on (its code version, the config hash, the
contents of the tables it reads and any outside inputs), and runs. :func:`execute` records every
execution in ``stage_runs``; when the last completed execution of the stage has the same
fingerprint, the stage is not run again and the run is recorded as ``reused`` (the completion
marker scheme documented in docs/ARCHITECTURE.md). Each stage returns a stats dict that is
stored beside the marker and printed in the build summary.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import duckdb

from cinesub import __version__
from cinesub.records import utcnow
from cinesub.settings import Settings
from cinesub.state import connect


@dataclass
class StageContext:
    settings: Settings
    run_id: str
    sample_dir: Path | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class Stage(ABC):
    name: ClassVar[str]
    version: ClassVar[str] = "1"
    reads: ClassVar[tuple[str, ...]] = ()
    writes: ClassVar[tuple[str, ...]] = ()

    def external_inputs(self, ctx: StageContext) -> dict[str, Any]:
        """Fingerprint material from outside the state DB (files, parameters)."""
        return {}

    def config_hash(self, ctx: StageContext) -> str:
        """The settings that change this stage's output (the subtitle flow's by default)."""
        return ctx.settings.config_hash()

    def open_state(self, ctx: StageContext) -> contextlib.AbstractContextManager[duckdb.DuckDBPyConnection]:
        """The state DB this stage reads and writes (the subtitle flow's by default)."""
        return connect(ctx.settings.state_db)

    def fingerprint(self, ctx: StageContext, con: duckdb.DuckDBPyConnection) -> str:
        material = {
            "stage": self.name,
            "version": self.version,
            "code": __version__,
            "config": self.config_hash(ctx),
            "tables": {t: table_digest(con, t) for t in self.reads},
            "external": self.external_inputs(ctx),
        }
        return hashlib.sha256(json.dumps(material, sort_keys=True, default=str).encode()).hexdigest()

    @abstractmethod
    def run(self, ctx: StageContext, con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
        """Do the work; return stats. Runs inside one connection; write tables atomically."""


def table_digest(con: duckdb.DuckDBPyConnection, table: str) -> str:
    """Order-independent digest of a table's contents (cheap enough for the state DB's sizes)."""
    row = con.execute(
        f'SELECT count(*), coalesce(sum(hash(t)::HUGEINT), 0) FROM "{table}" AS t'
    ).fetchone()
    return f"{row[0]}:{row[1]}"


def last_completed(con: duckdb.DuckDBPyConnection, stage: str) -> tuple[str, dict] | None:
    row = con.execute(
        """SELECT fingerprint, stats FROM stage_runs
           WHERE stage = ? AND status IN ('completed', 'reused')
           ORDER BY started_at DESC LIMIT 1""",
        [stage],
    ).fetchone()
    if row is None:
        return None
    return row[0], json.loads(row[1]) if row[1] else {}


def execute(stage: Stage, ctx: StageContext, force: bool = False) -> dict[str, Any]:
    """Run ``stage`` unless its last completed run had the same fingerprint."""
    with stage.open_state(ctx) as con:
        fp = stage.fingerprint(ctx, con)
        prev = last_completed(con, stage.name)
        started = utcnow()
        if prev is not None and prev[0] == fp and not force:
            stats = dict(prev[1])
            stats["reused"] = True
            con.execute(
                "INSERT OR REPLACE INTO stage_runs VALUES (?, ?, ?, 'reused', ?, ?, ?)",
                [ctx.run_id, stage.name, fp, started, utcnow(), json.dumps(stats)],
            )
            return stats
        t0 = time.perf_counter()
        try:
            stats = stage.run(ctx, con) or {}
        except BaseException:
            con.execute(
                "INSERT OR REPLACE INTO stage_runs VALUES (?, ?, ?, 'failed', ?, ?, NULL)",
                [ctx.run_id, stage.name, fp, started, utcnow()],
            )
            raise
        stats = dict(stats)
        stats["seconds"] = round(time.perf_counter() - t0, 3)
        stats["reused"] = False
        # The marker holds the fingerprint taken after the run: a stage that reads a table it
        # also writes is then reused when nothing changed since its own output.
        # A stage that reports itself incomplete (e.g. a spent download quota) leaves no
        # reusable marker: the next build runs it again.
        status = "incomplete" if stats.get("incomplete") else "completed"
        con.execute(
            "INSERT OR REPLACE INTO stage_runs VALUES (?, ?, ?, ?, ?, ?, ?)",
            [ctx.run_id, stage.name, stage.fingerprint(ctx, con), status, started, utcnow(),
             json.dumps(stats, default=str)],
        )
        return stats
