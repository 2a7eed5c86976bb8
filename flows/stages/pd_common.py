"""What the stages of the public-domain Hollywood flow share (flows/hollywood.py, SPEC B1/B2).

* The flow's own state DB, ``CINESUB_HOME/hollywood/state.duckdb`` (schema sql/pd_schema.sql):
  DuckDB admits one writer per file, and the subtitle flow keeps its own DB.
* :class:`PDStage` — a :class:`cinesub.stage.Stage` whose config part of the fingerprint is the
  Hollywood settings only (a subtitle threshold changing must not rerun Variety extraction), and
  :func:`execute_pd`, the same reuse rule as :func:`cinesub.stage.execute` against that DB: a
  stage whose last completed run had the same fingerprint is recorded as ``reused``.
* The shared content-addressed raw store (``CINESUB_HOME/raw``), the IA client, table writes.
* The Gemini page readers of the Variety and CCE stages: :func:`gemini_reader` builds one from the
  settings (fixture or live endpoint), :func:`gemini_read` runs it (sequential or Batch API),
  :func:`gemini_inputs` is their fingerprint material.

Credentials never travel in ``ctx.extra`` (Prefect records task parameters): a task reads the
Gemini key from the settings / environment, or from the fixture module in a sample build.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import duckdb
import pyarrow as pa

from cinesub.rawstore import RawStore
from cinesub.settings import Settings
from cinesub.stage import Stage, StageContext, execute
from cinesub.state import connect, init_state

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
    if not with_as_of:
        data.pop("as_of", None)
    data["_schema"] = PD_SCHEMA_VERSION
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]


def file_digest(path: Path | None) -> str | None:
    if path is None or not Path(path).is_file():
        return None
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


class PDStage(Stage):
    """A stage of the Hollywood flow (reads and writes the Hollywood state DB). ``uses_as_of``:
    the stage's output depends on the copyright status date (the others are reused when only
    ``--as-of`` changes)."""

    uses_as_of: ClassVar[bool] = False

    def config_hash(self, ctx: StageContext) -> str:
        return hollywood_config_hash(ctx.settings, with_as_of=self.uses_as_of)

    def open_state(self, ctx: StageContext) -> contextlib.AbstractContextManager[duckdb.DuckDBPyConnection]:
        return pd_connect(pd_state_db(ctx.settings))


def execute_pd(stage: PDStage, ctx: StageContext, force: bool = False) -> dict[str, Any]:
    """Run ``stage`` against the Hollywood state DB unless its last completed run had the same
    fingerprint (:func:`cinesub.stage.execute`; markers in ``stage_runs``)."""
    return execute(stage, ctx, force=force)


# --------------------------------------------------------------------------------------------
# context helpers
# --------------------------------------------------------------------------------------------
def raw_store(ctx: StageContext) -> RawStore:
    """The shared content-addressed raw store, CINESUB_HOME/raw."""
    return RawStore(ctx.settings.raw_dir)


def endpoints(ctx: StageContext) -> dict[str, Any]:
    return ctx.extra.get("endpoints") or {}


def is_sample(ctx: StageContext) -> bool:
    return endpoints(ctx).get("kind") == "fixtures"


def world_dir(ctx: StageContext, which: str) -> Path | None:
    """The sample world's ``variety`` or ``cce`` directory (None in a live build)."""
    w = ctx.extra.get("worlds") or {}
    return Path(w[which]) if w.get(which) else None


def ia_client(ctx: StageContext) -> Any:
    """An :class:`extractors.ia.IAClient` on the fixture host (sample) or archive.org / the
    configured host, caching into the shared raw store."""
    from extractors.ia import IAClient, RetryPolicy

    ep = endpoints(ctx)
    if ep.get("ia_host"):
        return IAClient.for_host(ep["ia_host"], raw_store(ctx),
                                 retry=RetryPolicy(attempts=4, base_delay_s=0.02, max_delay_s=0.2), timeout_s=10.0)
    return IAClient.for_host(ctx.settings.hollywood.ia_host, raw_store(ctx))


#: a loopback fixture reads at most 1 MiB of a request body (fixtures/faults.py): inline batch
#: jobs against it carry at most this many image bytes (base64 adds a third)
FIXTURE_MAX_INLINE_BYTES = 500_000


def gemini_inputs(ctx: StageContext) -> dict[str, Any]:
    """Fingerprint material of a stage that reads page images with Gemini: the flow's Gemini plan
    (available, model) and whether the fixture or the live API answers (no key)."""
    return {"gemini": ctx.extra.get("gemini"), "gemini_endpoint": "fixture" if is_sample(ctx) else "live"}


def gemini_reader(ctx: StageContext, reader_cls: Any, **options: Any) -> Any:
    """A Gemini page reader of ``reader_cls`` (an :class:`extractors.gemini_pages.GeminiPageReader`
    subclass: the Variety or the CCE extractor) configured from the Hollywood settings, or None
    when the flow's plan says Gemini is unavailable (disabled, no key). Sample builds talk to the
    loopback fixture with its key and fast retries; live builds use the resolved key and
    ``curation.gemini_base_url``. Answers are cached per image under ``CINESUB_HOME/cache/gemini-pages``."""
    from extractors.gemini_pages import resolve_api_key

    info = ctx.extra.get("gemini") or {}
    if not info.get("available"):
        return None
    hs = ctx.settings.hollywood
    if is_sample(ctx):
        from fixtures.gemini_server import DEFAULT_API_KEY

        key, base_url = DEFAULT_API_KEY, endpoints(ctx)["gemini_url"]
        fast: dict[str, Any] = {"retry_initial_delay_s": 0.01, "timeout_s": 20.0}
    else:
        key, base_url, fast = resolve_api_key(ctx.settings), ctx.settings.curation.gemini_base_url, {}
    if not key:
        return None
    return reader_cls(key, model=hs.gemini_model, base_url=base_url, thinking_level=hs.gemini_thinking_level,
                      media_resolution=hs.gemini_media_resolution,
                      cache_dir=ctx.settings.home / "cache" / "gemini-pages", **{**fast, **options})


def gemini_read(ctx: StageContext, reader: Any, pages: Sequence[Any]) -> Any:
    """Read ``pages`` with ``reader``: one Batch API job series when ``hollywood.gemini_batch``
    (jobs of at most :data:`FIXTURE_MAX_INLINE_BYTES` image bytes against the fixture), else
    sequential calls on the reader's thread pool. Returns its ``ExtractionResult``."""
    if ctx.settings.hollywood.gemini_batch:
        if is_sample(ctx):
            return reader.extract_pages_batch(pages, poll_interval_s=0.05, max_inline_bytes=FIXTURE_MAX_INLINE_BYTES)
        return reader.extract_pages_batch(pages, poll_interval_s=30.0)
    return reader.extract_pages(pages)


def live_marker(ctx: StageContext) -> dict[str, Any]:
    """Fingerprint material of a stage that asks the Internet Archive: in a sample build the
    world's digest (the fixture serves nothing else); live, the run id (IA content can change,
    so the stage runs every build and its unchanged output leaves later stages reused)."""
    if is_sample(ctx):
        return {"sample": ctx.extra.get("sample_digest")}
    return {"live_run": ctx.run_id}


# --------------------------------------------------------------------------------------------
# table writes
# --------------------------------------------------------------------------------------------
def replace_rows(con: duckdb.DuckDBPyConnection, table: str, rows: Sequence[dict[str, Any]],
                 where: str | None = None) -> int:
    """Replace ``table``'s rows (or those matching ``where``) by ``rows``, inserted by column
    name in one transaction; returns the number inserted."""
    cols = [r[0] for r in con.execute(f'DESCRIBE "{table}"').fetchall()]
    con.execute("BEGIN")
    try:
        con.execute(f'DELETE FROM "{table}"' + (f" WHERE {where}" if where else ""))
        if rows:
            present = [c for c in cols if any(c in r for r in rows[:1])]
            data = pa.Table.from_pylist([{c: r.get(c) for c in present} for r in rows])
            con.register("_pd_rows", data)
            names = ", ".join(f'"{c}"' for c in present)
            con.execute(f'INSERT INTO "{table}" ({names}) SELECT {names} FROM _pd_rows')
            con.unregister("_pd_rows")
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return len(rows)


def copy_arrow(con: duckdb.DuckDBPyConnection, table: str, data: pa.Table) -> int:
    """Replace ``table`` by an Arrow table with the same column names."""
    con.execute("BEGIN")
    try:
        con.execute(f'DELETE FROM "{table}"')
        if data.num_rows:
            con.register("_pd_arrow", data)
            names = ", ".join(f'"{c}"' for c in data.column_names)
            con.execute(f'INSERT INTO "{table}" ({names}) SELECT {names} FROM _pd_arrow')
            con.unregister("_pd_arrow")
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return data.num_rows
