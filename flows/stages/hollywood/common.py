"""What the stages of the public-domain Hollywood flow share (flows/hollywood.py, SPEC B1/B2).

* The flow's own state DB, ``CINESUB_HOME/hollywood/state.duckdb`` (schema sql/pd_schema.sql):
  DuckDB admits one writer per file, and the subtitle flow keeps its own DB.
* :class:`PDStage` — a :class:`flows.kernel_context.Stage` whose config part of the fingerprint is
  the Hollywood settings only (a subtitle threshold changing must not rerun Variety extraction),
  against that DB (run by the kernel's one executor, :func:`flows.kernel_exec.execute`).
* The shared content-addressed raw store (``CINESUB_HOME/raw``), the IA client, table writes.
* What the item jobs of the Variety and CCE stages need (flows/stages/hollywood/pages.py):
  :func:`ia_spec` (the archive and the raw store), :func:`gemini_job` (the Gemini page reader of
  the settings, fixture or live endpoint, sequential or Batch API); :func:`gemini_inputs` is
  their fingerprint material; :func:`item_runner` the run's item runner.

Credentials never travel in task parameters (Prefect records them): a Gemini job carries where
the key is found (the run's environment, :mod:`flows.env`, says), and the worker resolves it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

import duckdb
import pyarrow as pa

from cinesub.rawstore import RawStore
from cinesub.settings import Settings
from flows.env import file_digest  # noqa: F401  (the stages' input-file digest)
from flows.kernel_context import RunContext, Stage
from cinesub.state import checkpoint, connect, init_state, memory_limit

#: bump when the meaning of the Hollywood state tables changes (reruns every stage)
PD_SCHEMA_VERSION = "1"
PD_SCHEMA = "pd_schema.sql"


def hollywood_dir(settings: Settings) -> Path:
    return settings.home / "hollywood"


def pd_state_db(settings: Settings) -> Path:
    return hollywood_dir(settings) / "state.duckdb"


def pd_releases_dir(settings: Settings) -> Path:
    return hollywood_dir(settings) / "releases"


def init_pd_state(path: Path) -> None:
    init_state(path, PD_SCHEMA)


def pd_connect(path: Path, read_only: bool = False) -> contextlib.AbstractContextManager[duckdb.DuckDBPyConnection]:
    """A connection to the Hollywood state DB (schema created on first use)."""
    return connect(path, read_only=read_only, schema=PD_SCHEMA)


def hollywood_config_hash(settings: Settings, *, with_as_of: bool = True) -> str:
    """Hash of the settings that change the Hollywood outputs (no secret is in them; file
    settings are hashed by path here and by content in the stages that read them). Stages that
    do not depend on the status date hash without ``as_of``."""
    data = settings.hollywood.model_dump(mode="json")
    data.pop("state_memory_limit", None)  # how much memory DuckDB may use changes no output
    if not with_as_of:
        data.pop("as_of", None)
    data["_schema"] = PD_SCHEMA_VERSION
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]


class PDStage(Stage):
    """A stage of the Hollywood flow (reads and writes the Hollywood state DB). ``uses_as_of``:
    the stage's output depends on the copyright status date (the others are reused when only
    ``--as-of`` changes)."""

    uses_as_of: ClassVar[bool] = False
    #: the stage asks the Internet Archive: its outside input is the environment's remote marker
    asks_archive: ClassVar[bool] = False

    def external_inputs(self, ctx: RunContext) -> dict[str, Any]:
        # IA content can change: the environment says what stands for it (world digest / run id)
        return ctx.env.remote_marker(ctx.run_id) if self.asks_archive else {}

    def config_hash(self, ctx: RunContext) -> str:
        return hollywood_config_hash(ctx.settings, with_as_of=self.uses_as_of)

    def open_state(self, ctx: RunContext) -> contextlib.AbstractContextManager[duckdb.DuckDBPyConnection]:
        return pd_stage_connect(pd_state_db(ctx.settings), ctx.settings.hollywood.state_memory_limit)


@contextlib.contextmanager
def pd_stage_connect(path: Path, limit: str | None) -> Iterator[duckdb.DuckDBPyConnection]:
    """The Hollywood state DB as a stage opens it: :func:`pd_connect` with DuckDB's
    ``memory_limit`` at ``limit`` (``hollywood.state_memory_limit``) while the stage runs. Without
    a limit DuckDB keeps the table blocks a stage read or wrote cached up to 80 % of RAM, so the
    process's memory grew with the items of a build (issue 17: 52 → 208 weekly issues, ≈+10 MiB
    in every phase); with it, beyond the limit DuckDB evicts cached blocks and spills large
    operators to ``<db>.tmp``."""
    with pd_connect(path) as con, memory_limit(con, limit):
        yield con


# --------------------------------------------------------------------------------------------
# context helpers
# --------------------------------------------------------------------------------------------
def raw_store(ctx: RunContext) -> RawStore:
    """The shared content-addressed raw store (``raw_store_url``, default CINESUB_HOME/raw)."""
    return RawStore.for_settings(ctx.settings)


def ia_client(ctx: RunContext) -> Any:
    """An :class:`extractors.ia.IAClient` of the run's environment (the fixture host or
    archive.org / the configured host), caching into the shared raw store."""
    return ctx.env.ia_client(raw_store(ctx))


def gemini_inputs(ctx: RunContext) -> dict[str, Any]:
    """Fingerprint material of a stage that reads page images with Gemini: the flow's Gemini plan
    (available, model) and which environment answers (no key)."""
    return {"gemini": ctx.gemini.fingerprint(), "gemini_endpoint": ctx.env.kind}


def item_runner(ctx: RunContext) -> Any:
    """The run's item runner (flows/items.py: local processes or a Dask cluster); in-process for a
    stage run outside a flow (tests, benchmarks)."""
    from flows.items import LocalItemRunner

    return ctx.items if getattr(ctx, "items", None) is not None else LocalItemRunner(1)


def ia_spec(ctx: RunContext, client: Any | None = None) -> Any:
    """How an item job's worker reaches the run's archive endpoint and the raw store."""
    from flows.stages.hollywood.pages import IASpec

    client = client or ia_client(ctx)
    st = ctx.settings
    return IASpec(f"{client.session.protocol}//{client.session.host}", str(st.raw_store_url or st.raw_dir),
                  str(st.raw_dir), client.retry)


def gemini_job(ctx: RunContext, task: str, jobs: int = 1) -> Any:
    """The Gemini page reader of ``task`` (``variety`` | ``cce``) as item jobs build it
    (:class:`flows.stages.hollywood.pages.GeminiJob`), or None when the flow's plan says Gemini is
    unavailable (disabled, no key). The named ``hollywood.gemini_*`` settings, then the
    environment's client manners; the requests-per-minute budget is shared among the item jobs
    that can run at once (the runner's workers, at most ``jobs``), so the cluster as a whole keeps
    to the rate limit. Answers are cached per image under ``CINESUB_HOME/cache/gemini-pages``."""
    if not getattr(ctx, "gemini", None) or not ctx.gemini.available:
        return None
    ep = ctx.env.gemini_endpoint()
    if ep is None:
        return None
    from extractors.gemini_pages import reader_options
    from flows.stages.hollywood.pages import GeminiJob

    opts = {**reader_options(ctx.settings.hollywood), **ep.options}
    parallel = max(1, min(int(getattr(item_runner(ctx), "workers", 1) or 1), max(1, jobs)))
    if opts.get("requests_per_minute"):
        opts["requests_per_minute"] = opts["requests_per_minute"] / parallel
    return GeminiJob(task, ctx.env.gemini_key_ref(), ep.base_url, opts, bool(ctx.settings.hollywood.gemini_batch),
                     dict(ep.batch_options), str(ctx.settings.home / "cache" / "gemini-pages"), model=opts.get("model"))


# --------------------------------------------------------------------------------------------
# table writes
# --------------------------------------------------------------------------------------------
def refuse_item(row: dict[str, Any], exc: Any, reasons: Any, items: list[dict[str, Any]] | None = None) -> None:
    """Record on a discovery row why the archive refused it (the item stays listed, with its
    reason); with ``items``, the row is listed there now (the item goes no further)."""
    row["reason"] = exc.reason_code
    reasons[exc.reason_code] += 1
    if items is not None:
        items.append(row)


def replace_rows(con: duckdb.DuckDBPyConnection, table: str, rows: Sequence[dict[str, Any]],
                 where: str | None = None) -> int:
    """Replace ``table``'s rows (or those matching ``where``) by ``rows``, inserted by column
    name in one transaction; returns the number inserted."""
    cols = [r[0] for r in con.execute(f'DESCRIBE "{table}"').fetchall()]
    present = [c for c in cols if any(c in r for r in rows[:1])]
    data = pa.Table.from_pylist([{c: r.get(c) for c in present} for r in rows]) if rows else None
    return copy_arrow(con, table, data, where)


def copy_arrow(con: duckdb.DuckDBPyConnection, table: str, data: pa.Table | None, where: str | None = None) -> int:
    """Replace ``table`` (or its rows matching ``where``) by an Arrow table with the same column
    names, in one transaction; returns the number of rows inserted."""
    if data is None or not data.num_rows:
        return copy_select(con, table, None, where)
    con.register("_pd_arrow", data)
    try:
        return copy_select(con, table, "SELECT * FROM _pd_arrow", where)
    finally:
        con.unregister("_pd_arrow")


def copy_select(con: duckdb.DuckDBPyConnection, table: str, query: str | None, where: str | None = None, *,
                append: bool = False) -> int:
    """Replace ``table`` (or its rows matching ``where``; with ``append``, nothing) by the rows of
    ``query`` (a ``SELECT`` on ``con`` whose columns are named as ``table``'s), inserted in DuckDB —
    nothing passes through Python — in one transaction; returns the number of rows inserted."""
    con.execute("BEGIN")
    try:
        if not append:
            con.execute(f'DELETE FROM "{table}"' + (f" WHERE {where}" if where else ""))
        n = 0
        if query is not None:
            names = ", ".join(f'"{r[0]}"' for r in con.execute(f"DESCRIBE ({query})").fetchall())
            n = con.execute(f'INSERT INTO "{table}" ({names}) SELECT {names} FROM ({query})').fetchone()[0]
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return n


#: a stage's committed rows written into the DB file (cinesub.state.checkpoint)
flush_rows = checkpoint


def append_rows(con: duckdb.DuckDBPyConnection, table: str, rows: Sequence[dict[str, Any]]) -> int:
    """Insert ``rows`` into ``table`` by column name (no delete, no transaction of its own: the
    caller's)."""
    if not rows:
        return 0
    cols = [r[0] for r in con.execute(f'DESCRIBE "{table}"').fetchall()]
    keys = set().union(*(r.keys() for r in rows))
    present = [c for c in cols if c in keys]
    data = pa.Table.from_pylist([{c: r.get(c) for c in present} for r in rows])
    con.register("_pd_append", data)
    names = ", ".join(f'"{c}"' for c in present)
    con.execute(f'INSERT INTO "{table}" ({names}) SELECT {names} FROM _pd_append')
    con.unregister("_pd_append")
    return data.num_rows
