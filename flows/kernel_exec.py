"""Executing one stage: fingerprint and reuse, the ``stage_runs`` marker, the stage contract
check and the per-stage statistics (the one executor of both flows).

* Reuse: when the last completed run of the stage had the same fingerprint (and ``force`` is
  off) the stage does not run; the run is recorded ``reused`` with the stats of that run.
* Contracts (``CINESUB_CHECK_CONTRACTS=1``, on for the test suite): the stage may write only the
  tables it declares in ``writes`` (every state table's digest before and after) and read only
  ``reads`` (its fingerprint) ∪ ``writes`` (the SQL text it sends, tables matched by name on
  word boundaries, views it creates counting through their SQL). A violation raises
  :class:`ContractViolation` (``CINESUB_CHECK_CONTRACTS=warn``: it is printed and the run goes on).
* Statistics, datatrove-style: every stage's stats carry ``items_in``, ``items_out``,
  ``dropped`` ({reason: count}) and ``seconds`` (:meth:`Stage.items_in_out` fills the first
  three from the stage's own stats).
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from typing import Any

import duckdb

from cinesub.errors import CinesubError, ExitCode
from cinesub.records import utcnow
from flows.kernel_context import RunContext, Stage, table_digest

CONTRACTS_ENV = "CINESUB_CHECK_CONTRACTS"
#: the kernel's own bookkeeping tables (never part of a stage's contract)
KERNEL_TABLES = frozenset({"runs", "stage_runs"})


class ContractViolation(CinesubError):
    """A stage wrote or read a state table its declaration does not name (a bug: exit 70)."""

    reason = "stage_contract"
    exit_code = ExitCode.INTERNAL


def contracts_enabled() -> bool:
    return os.environ.get(CONTRACTS_ENV, "") not in ("", "0", "false", "no")


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


def _record(con: duckdb.DuckDBPyConnection, ctx: RunContext, name: str, fp: str, status: str, started: Any,
            stats: dict[str, Any] | None) -> None:
    con.execute("INSERT OR REPLACE INTO stage_runs VALUES (?, ?, ?, ?, ?, ?, ?)",
                [ctx.run_id, name, fp, status, started, utcnow(),
                 None if stats is None else json.dumps(stats, default=str)])


def execute(stage: Stage, ctx: RunContext, force: bool = False) -> dict[str, Any]:
    """Run ``stage`` unless its last completed run had the same fingerprint."""
    with stage.open_state(ctx) as con:
        fp = stage.fingerprint(ctx, con)
        prev = last_completed(con, stage.name)
        started = utcnow()
        if prev is not None and prev[0] == fp and not (force or ctx.force):
            stats = normalise_stats(stage, dict(prev[1]), prev[1].get("seconds", 0.0))
            stats["reused"] = True
            _record(con, ctx, stage.name, fp, "reused", started, stats)
            return stats
        check = contracts_enabled()
        before = state_digests(con) if check else None
        proxy = RecordingConnection(con) if check else con
        t0 = time.perf_counter()
        ctx.table_digests.clear()  # the run may change any table it writes
        try:
            stats = stage.run(ctx, proxy) or {}
            if check:
                check_contract(stage, con, before, proxy.statements)
        except BaseException:
            _record(con, ctx, stage.name, fp, "failed", started, None)
            raise
        stats = normalise_stats(stage, dict(stats), round(time.perf_counter() - t0, 3))
        stats["reused"] = False
        # The marker holds the fingerprint taken after the run: a stage that reads a table it
        # also writes is then reused when nothing changed since its own output.
        # A stage that reports itself incomplete (e.g. a spent download quota) leaves no
        # reusable marker: the next build runs it again.
        status = "incomplete" if stats.get("incomplete") else "completed"
        _record(con, ctx, stage.name, stage.fingerprint(ctx, con), status, started, stats)
        return stats


def normalise_stats(stage: Stage, stats: dict[str, Any], seconds: float) -> dict[str, Any]:
    items_in, items_out, dropped = stage.items_in_out(stats)
    stats.setdefault("items_in", items_in)
    stats.setdefault("items_out", items_out)
    stats.setdefault("dropped", {k: int(v) for k, v in sorted(dropped.items()) if v})
    stats["seconds"] = seconds
    return stats


def stage_stats_rows(con: Any, run_id: str, flow: str | None = None) -> list[dict[str, Any]]:
    """The per-stage statistics of ``run_id`` in a state DB, in the order the stages ran:
    ``flow, stage, status, reused, items_in, items_out, dropped ({reason: count}), seconds``."""
    if flow is None:
        has_pd = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'pd_pages'"
                             ).fetchone()[0]
        flow = "build-hollywood" if has_pd else "build-cinesub"
    rows = []
    for stage, status, stats in con.execute(
            "SELECT stage, status, stats FROM stage_runs WHERE run_id = ? ORDER BY started_at, stage",
            [run_id]).fetchall():
        s = json.loads(stats) if stats else {}
        rows.append({"flow": flow, "stage": stage, "status": status, "reused": bool(s.get("reused")),
                     "items_in": s.get("items_in"), "items_out": s.get("items_out"),
                     "dropped": dict(s.get("dropped") or {}), "seconds": s.get("seconds")})
    return rows


# --------------------------------------------------------------------------------------------
# contracts
# --------------------------------------------------------------------------------------------
def state_tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    return [r[0] for r in con.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' "
        "AND table_catalog = current_database() AND table_type = 'BASE TABLE' ORDER BY 1").fetchall()]


def state_digests(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    return {t: table_digest(con, t) for t in state_tables(con) if t not in KERNEL_TABLES}


_COMMENT = re.compile(r"--[^\n]*|/\*.*?\*/", re.S)
_LITERAL = re.compile(r"'(?:[^']|'')*'")


def tables_named(sql: str, tables: list[str]) -> set[str]:
    """State tables that ``sql`` names (comments and string literals are not names)."""
    text = _LITERAL.sub("''", _COMMENT.sub(" ", sql)).lower()
    return {t for t in tables if re.search(rf'(?<![\w."]){re.escape(t.lower())}(?![\w"])|"{re.escape(t.lower())}"', text)}


def check_contract(stage: Stage, con: duckdb.DuckDBPyConnection, before: dict[str, str],
                   statements: list[str]) -> None:
    after = state_digests(con)
    written = sorted(t for t in set(before) | set(after) if before.get(t) != after.get(t))
    undeclared_writes = [t for t in written if t not in stage.writes]
    allowed = set(stage.reads) | set(stage.writes) | KERNEL_TABLES
    names = list(after)
    read = set().union(*(tables_named(s, names) for s in statements)) if statements else set()
    undeclared_reads = sorted(read - allowed)
    if undeclared_writes or undeclared_reads:
        parts = []
        if undeclared_writes:
            parts.append(f"wrote {', '.join(undeclared_writes)} (declares writes={list(stage.writes)})")
        if undeclared_reads:
            parts.append(f"read {', '.join(undeclared_reads)} (declares reads={list(stage.reads)})")
        message = f"stage {stage.name} " + "; ".join(parts)
        if os.environ.get(CONTRACTS_ENV) == "warn":  # report and go on (finding every violation of a flow)
            import logging

            logging.getLogger("cinesub.contracts").warning("contract violation: %s", message)
            print(f"contract violation: {message}", file=sys.stderr)
            return
        raise ContractViolation(message)


class RecordingConnection:
    """A DuckDB connection that records the SQL text sent through it (the read contract)."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self._con = con
        self.statements: list[str] = []

    def _note(self, query: Any) -> None:
        if isinstance(query, str):
            self.statements.append(query)

    def execute(self, query: Any, *args: Any, **kwargs: Any) -> Any:
        self._note(query)
        return self._con.execute(query, *args, **kwargs)

    def executemany(self, query: Any, *args: Any, **kwargs: Any) -> Any:
        self._note(query)
        return self._con.executemany(query, *args, **kwargs)

    def sql(self, query: Any, *args: Any, **kwargs: Any) -> Any:
        self._note(query)
        return self._con.sql(query, *args, **kwargs)

    query = sql

    def __getattr__(self, name: str) -> Any:
        return getattr(self._con, name)
