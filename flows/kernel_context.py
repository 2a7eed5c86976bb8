"""The typed pieces every stage sees: :class:`Stage` (what a stage declares) and
:class:`RunContext` (what one run hands it).

A stage is a small typed unit: it names the state tables it reads and writes, computes a
fingerprint of everything its output depends on (its code version, the config hash, the
contents of the tables it reads and any outside inputs), and runs. The kernel
(:func:`flows.kernel_exec.execute`) records every execution in ``stage_runs``; when the last
completed execution of the stage has the same fingerprint, the stage is not run again and the
run is recorded as ``reused`` (the completion marker scheme documented in docs/ARCHITECTURE.md).

The run context is decided once, when the flow starts: its :attr:`RunContext.env` (sample or
live, :mod:`flows.env`) supplies endpoints, inputs and services, so no stage asks which it is.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import duckdb

from cinesub import __version__
from cinesub.settings import Settings
from cinesub.state import connect

if TYPE_CHECKING:  # pragma: no cover
    from flows.env import Environment


@dataclass(frozen=True)
class GeminiPlan:
    """Whether the Hollywood flow reads page images with Gemini, decided at flow start."""

    available: bool = False
    model: str | None = None
    primary_extractor: str = "ocr-rules"
    fallback_reason: str | None = None

    def fingerprint(self) -> dict[str, Any]:
        return {"available": self.available, "model": self.model}


@dataclass
class RunContext:
    """What one run of a flow hands its stages (replaces the untyped ``extra`` dict).

    * ``env``: the sample or live environment (endpoints, inputs, services, providers); a context
      built without one (tests calling a stage directly) gets the live environment.
    * ``items``: the item runner of per-item work (``flows.items.make_item_runner``), created
      once per run by the kernel and closed at its end; None outside a flow run.
    * ``gemini``: the Hollywood flow's Gemini plan (primary extractor and why it fell back).
    * ``release_inputs``: the input snapshot ids the release records (set by the flow just
      before its publishing stage).
    * ``item_done``: the callback a stage calls after committing one item (``kind`` names the
      item: ``track``, ``download``); the kernel's test hooks (crash after N) sit behind it.
    """

    settings: Settings
    run_id: str
    flow: str = "build-cinesub"
    env: Environment | None = None
    force: bool = False
    #: ask the subtitle providers again even where the search cache is fresh (``--refresh-search``)
    refresh_search: bool = False
    items: Any = None
    gemini: GeminiPlan = field(default_factory=GeminiPlan)
    release_inputs: dict[str, Any] = field(default_factory=dict)
    item_done: Callable[[str, Any], None] = field(default=lambda kind, con=None: None, repr=False)
    #: (database, table) → :func:`table_digest`, taken since the last stage ran: the digests a
    #: stage's fingerprint took after its run stand for the next stage's fingerprint before its
    #: own (nothing writes between); the kernel empties it before every stage run
    table_digests: dict[tuple[str, str], str] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if self.env is None:
            from flows.env.live import LiveEnvironment

            self.env = LiveEnvironment(self.settings)

    @property
    def primary_extractor(self) -> str:
        return self.gemini.primary_extractor


class Stage(ABC):
    name: ClassVar[str]
    version: ClassVar[str] = "1"
    reads: ClassVar[tuple[str, ...]] = ()
    writes: ClassVar[tuple[str, ...]] = ()
    #: Prefect task retries of this stage (network stages retry once or twice)
    retries: ClassVar[int] = 0

    def external_inputs(self, ctx: RunContext) -> dict[str, Any]:
        """Fingerprint material from outside the state DB (files, parameters)."""
        return {}

    def config_hash(self, ctx: RunContext) -> str:
        """The settings that change this stage's output (the subtitle flow's by default)."""
        return ctx.settings.config_hash()

    def open_state(self, ctx: RunContext) -> contextlib.AbstractContextManager[duckdb.DuckDBPyConnection]:
        """The state DB this stage reads and writes (the subtitle flow's by default)."""
        return connect(ctx.settings.state_db)

    def fingerprint(self, ctx: RunContext, con: duckdb.DuckDBPyConnection) -> str:
        material = {
            "stage": self.name,
            "version": self.version,
            "code": __version__,
            "config": self.config_hash(ctx),
            "tables": digests_since_last_run(ctx, con, self.reads),
            "external": self.external_inputs(ctx),
        }
        return hashlib.sha256(json.dumps(material, sort_keys=True, default=str).encode()).hexdigest()

    def items_in_out(self, stats: dict[str, Any]) -> tuple[int | None, int | None, dict[str, int]]:
        """``(items in, items out, dropped by reason)`` of this stage's stats (datatrove-style
        per-stage statistics); a stage overrides it where its stats have other names."""
        return None, None, {}

    @abstractmethod
    def run(self, ctx: RunContext, con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
        """Do the work; return stats. Runs inside one connection; write tables atomically."""


def digests_since_last_run(ctx: RunContext, con: duckdb.DuckDBPyConnection,
                           tables: tuple[str, ...]) -> dict[str, str]:
    """:func:`table_digest` of ``tables``, each taken once between two stage runs (``ctx.table_digests``)."""
    if not tables:
        return {}
    db = con.execute("SELECT path FROM duckdb_databases() WHERE database_name = current_database()").fetchone()
    memo = ctx.table_digests
    out = {}
    for t in tables:
        key = (str(db[0] if db else None), t)
        if key not in memo:
            memo[key] = table_digest(con, t)
        out[t] = memo[key]
    return out


def table_digest(con: duckdb.DuckDBPyConnection, table: str) -> str:
    """Order-independent digest of a table's contents (cheap enough for the state DB's sizes)."""
    row = con.execute(
        f'SELECT count(*), coalesce(sum(hash(t)::HUGEINT), 0) FROM "{table}" AS t'
    ).fetchone()
    return f"{row[0]}:{row[1]}"
