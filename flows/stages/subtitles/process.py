"""Stage ``process``: decode, parse, verify and sanitize every downloaded candidate the chain
needs (validators/candidate.py, in worker processes, jobs of ``Settings.process_batch_tracks``
candidates), then write tracks, entries, flags and the sanitization log -- one transaction per
batch, rows of reprocessed tracks deleted by the batch's set of track ids, entries inserted as
one Arrow table (``entries`` has no key index: a track's rows are unique by this construction,
sql/state_schema.sql), under DuckDB's ``cinesub.state.BULK_MEMORY_LIMIT``, on the DuckDB threads the
workers leave (``cinesub.state.coordinator_threads``) and without DuckDB's optimistic writes (each
batch compressed once, by the checkpoint after its commit: ``cinesub.state.optimistic_writes``)
-- and recompute the
selection per film and language. A crash keeps every committed batch; ``ctx.item_done`` is called
per track once its batch is committed.

A batch whose worker raises or dies is run again one track per job (:class:`_Retry`), so a
poison file is its own rejection, never its batch's; a batch whose rows cannot be written
together is written track by track.

One poison candidate never fails the stage: an exception while processing it (or in its worker,
or a worker that dies on it) is a rejected track with reason ``internal_error`` and the exception
type and detail in ``tracks.error_type``/``error_detail`` and its flag; the track key (raw bytes +
``PROCESSING_VERSION``) makes the next build reuse that rejection instead of retrying the bytes."""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from typing import Any

import duckdb
import numpy as np
import polars as pl
import pyarrow as pa
from rich.progress import Progress

from cinesub.rawstore import RawStore, read_blob
from cinesub.records import utcnow
from cinesub.settings import Thresholds
from cinesub.state import checkpoint, coordinator_threads, memory_limit, optimistic_writes, thread_limit
from flows.items import LocalItemRunner
from flows.kernel_context import RunContext, Stage
from cinesub.bulk import insert_arrow
from flows.stages.subtitles.common import selection_views
from validators.candidate import (
    PROCESSING_VERSION,
    flag_rows,
    internal_error_outcome,
    process_batch,
    track_id_for,
)


def _work(job: tuple) -> list[tuple[tuple, Any]]:
    """One batch of candidates (in a worker process): ``(thresholds_json, policy, tracks)``, each
    track ``(raw_url, sha, language, runtime_min, key)``; returns ``(key, outcome)`` per track, in
    order. Never raises for the candidates' bytes: a blob that cannot be read is that track's
    ``internal_error`` rejection (step ``worker``), and process_batch turns any exception of one
    candidate into its own rejection."""
    thresholds_json, policy, tracks = job
    outcomes: dict[int, Any] = {}
    items, where = [], []
    for k, (raw_url, sha, language, runtime_min, _key) in enumerate(tracks):
        try:
            items.append((read_blob(raw_url, sha), language, runtime_min))
            where.append(k)
        except Exception as exc:  # noqa: BLE001 - a poison item is a rejection, not a stage failure
            outcomes[k] = internal_error_outcome(type(exc).__name__, str(exc) or repr(exc), "worker")
    for k, out in zip(where, process_batch(items, Thresholds.model_validate_json(thresholds_json), policy)):
        outcomes[k] = out
    return _Batch((track[-1], outcomes[k]) for k, track in enumerate(tracks))


#: the frames of a :class:`~validators.candidate.TrackOutcome` that :class:`_Batch` packs
_FRAMES = ("entries", "sanitization")


class _Batch(list):
    """:func:`_work`'s result, ``(key, outcome)`` per track, pickled (worker to coordinator) with
    each of :data:`_FRAMES` of all its tracks as one Arrow table of one chunk, offset-based
    strings (polars pickles every frame on its own, column by column: for a batch of 128
    tracks that took the worker ~20 % longer to write, the coordinator ~4.5x longer to read
    back, and 15 % more bytes through the pipe; Arrow string views pickle slower than offsets).
    Unpickled as a plain list of the same outcomes, each frame a slice of its batch's table:
    the same values, dtypes and order. A batch whose frames do not all share one schema is
    pickled as a plain list."""

    def __reduce__(self):
        tables = []
        for name in _FRAMES:
            frames = [getattr(out, name) for _, out in self]
            present = [f for f in frames if f is not None]
            if present and any(f.schema != present[0].schema for f in present):
                return (list, (list(self),))
            table = (pl.concat(present, how="vertical", rechunk=True).to_arrow()
                     if present else None)
            tables.append((table, [-1 if f is None else f.height for f in frames]))
        slim = [(key, replace(out, **dict.fromkeys(_FRAMES))) for key, out in self]
        return (_unbatch, (slim, tables))


def _unbatch(slim: list[tuple[tuple, Any]], tables: list[tuple[pa.Table | None, list[int]]]) -> list:
    """A pickled :class:`_Batch` read back (see there)."""
    for name, (table, lengths) in zip(_FRAMES, tables):
        frame = pl.from_arrow(table, rechunk=False) if table is not None else None
        offset = 0
        for (_, out), n in zip(slim, lengths):
            if n >= 0:
                setattr(out, name, frame.slice(offset, n))
                offset += n
    return slim


@dataclass(frozen=True)
class _Retry:
    """A batch whose worker raised or died: its tracks are run again one per job."""

    job: tuple


def _work_failed(job: tuple, error_type: str, message: str, step: str) -> Any:
    """A batch job whose worker raised or died: :class:`_Retry` for a batch of several tracks (so
    one poison file never rejects the others), an ``internal_error`` rejection for one track."""
    thresholds_json, policy, tracks = job
    if len(tracks) > 1:
        return _Retry(job)
    return [(tracks[0][-1], internal_error_outcome(error_type, message, step))]


def batches(tracks: list[tuple], size: int, thresholds_json: str, policy: str) -> list[tuple]:
    """The jobs of the stage: ``tracks`` in runs of ``size`` (``Settings.process_batch_tracks``)."""
    size = max(1, int(size))
    return [(thresholds_json, policy, tuple(tracks[i:i + size])) for i in range(0, len(tracks), size)]


class ProcessStage(Stage):
    name = "process"
    reads = ("films", "blobs", "tracks", "decisions", "candidates", "attempts",
             "selected_attributes")  # films: sql/eligible_films.sql; selected_attributes: the languages
    writes = ("tracks", "entries", "flags", "sanitization_log", "selections", "attempts")

    def __init__(self, round_no: int = 1):
        self.round_no = round_no
        self.name = f"process#{round_no}"

    def items_in_out(self, stats: dict[str, Any]) -> tuple[int | None, int | None, dict[str, int]]:
        # candidates in, clean or flagged tracks out, rejected tracks by their first reason
        return (stats.get("processed"), stats.get("ok", 0) + stats.get("flagged", 0),
                dict(stats.get("rejected_by_reason") or {}))

    def run(self, ctx: RunContext, con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
        store = RawStore.for_settings(ctx.settings)
        selection_views(con, ctx)
        todo = con.execute(
            """SELECT n.imdb_id, n.language, n.provider, n.file_id, n.rank, n.download_count,
                      b.sha256, e.runtime_min
               FROM needed_candidates n
               JOIN blobs b ON b.provider = n.provider AND b.file_id = n.file_id
               JOIN eligible_films e ON e.imdb_id = n.imdb_id
               ORDER BY 1, 2"""
        ).fetchall()
        thresholds_json = ctx.settings.thresholds.model_dump_json()
        tracks = [
            (store.url_for(sha), sha, lang, runtime, (imdb, lang, prov, fid, rank, count, sha, runtime))
            for imdb, lang, prov, fid, rank, count, sha, runtime in todo
        ]
        jobs = batches(tracks, ctx.settings.process_batch_tracks, thresholds_json, ctx.settings.decoder_policy)
        stats: dict[str, Any] = {"processed": 0, "ok": 0, "flagged": 0, "rejected": 0, "entries": 0}

        if jobs:
            # workers (local processes or Dask) compute; this process alone writes the state DB
            items = ctx.items if ctx.items is not None else LocalItemRunner(ctx.settings.workers)
            # the coordinator's DuckDB gets the cores local workers leave (cinesub.state); workers
            # elsewhere (Dask) leave it as it is
            threads = coordinator_threads(ctx.settings.workers) if isinstance(items, LocalItemRunner) else None
            with memory_limit(con), thread_limit(con, threads), \
                    Progress(transient=True, disable=not sys.stderr.isatty()) as progress:
                bar = progress.add_task(f"processing {len(tracks)} tracks", total=len(tracks))
                retry: list[tuple] = []
                for result in items.map(_work, jobs, _work_failed):  # a poison item is one rejection
                    if isinstance(result, _Retry):
                        retry.extend(batches(list(result.job[2]), 1, thresholds_json, ctx.settings.decoder_policy))
                        continue
                    self._write_batch(con, ctx, result, stats)
                    progress.advance(bar, len(result))
                for result in items.map(_work, retry, _work_failed) if retry else ():
                    self._write_batch(con, ctx, result, stats)
                    progress.advance(bar, len(result))
                # the pass's rows into the file on the coordinator's threads, before the limit
                # goes (left in the log, a later query over them holds them again: docs/checks-benchmark.md)
                checkpoint(con)
        con.execute("BEGIN")
        try:
            con.execute("DELETE FROM selections")
            con.execute(
                """INSERT INTO selections
                   SELECT imdb_id, language, track_id, file_id, provider, download_count, status, reason
                   FROM selection_now"""
            )
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        stats["needing_more"] = con.execute("SELECT count(*) FROM needed_candidates").fetchone()[0]
        return stats

    def _write_batch(self, con, ctx: RunContext, results: list[tuple[tuple, Any]], stats) -> None:
        """One transaction for a batch's tracks; a batch whose rows cannot be stored is written
        track by track (:meth:`_write_one`). ``ctx.item_done`` per track once committed."""
        with optimistic_writes(con, False):  # each batch compressed once (cinesub.state.optimistic_writes)
            self._write_batch_now(con, ctx, results, stats)

    def _write_batch_now(self, con, ctx: RunContext, results: list[tuple[tuple, Any]], stats) -> None:
        counted = dict(stats, rejected_by_reason=dict(stats.get("rejected_by_reason") or {}))
        con.execute("BEGIN")
        try:
            self._write(con, ctx, results, stats)
            con.execute("COMMIT")
        except Exception:  # noqa: BLE001 - some track's rows: find it, one transaction per track
            con.execute("ROLLBACK")
            stats.clear()
            stats.update(counted)
            for key, out in results:
                self._write_one(con, ctx, key, out, stats)
            return
        except BaseException:
            con.execute("ROLLBACK")
            raise
        for _ in results:
            ctx.item_done("track", con)  # committed (the kernel's test hooks sit behind it)

    def _write_one(self, con, ctx: RunContext, key, out, stats) -> None:
        con.execute("BEGIN")
        try:
            self._write(con, ctx, [(key, out)], stats)
            con.execute("COMMIT")
        except Exception as exc:  # rows this track cannot be stored as: its internal_error rejection
            con.execute("ROLLBACK")
            _count(stats, out, -1)
            failed = internal_error_outcome(type(exc).__name__, str(exc) or repr(exc), "write")
            con.execute("BEGIN")
            try:
                self._write(con, ctx, [(key, failed)], stats)
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise
        except BaseException:
            con.execute("ROLLBACK")
            raise
        ctx.item_done("track", con)  # committed (the kernel's test hooks sit behind it)

    def _write(self, con, ctx: RunContext, results: list[tuple[tuple, Any]], stats) -> None:
        """The rows of ``results`` (inside the caller's transaction): a track processed again
        replaces its rows (deleted by the set of the batch's track ids)."""
        now = utcnow()
        tracks, flags, entries, logs, attempts = [], [], [], [], []
        for key, out in results:
            imdb, lang, prov, fid, rank, count, sha, runtime = key
            track_id = track_id_for(prov, fid, sha, lang, runtime)
            _count(stats, out, 1)
            n_entries = out.entries.height if out.entries is not None else None
            tracks.append((track_id, imdb, lang, prov, fid, sha, count, out.encoding, out.decoder, out.status,
                           ",".join(out.reasons) or None, n_entries, out.n_repairs, out.first_start_ms,
                           out.last_end_ms, out.n_tokens, runtime, PROCESSING_VERSION, now, out.error_type,
                           out.error_detail))
            flags.extend((track_id, imdb, lang, prov, fid, row["layer"], row["severity"], row["value"],
                          row["threshold"], row["detail"], row["evidence"]) for row in flag_rows(out.flags))
            if out.entries is not None:
                entries.append((out.entries, (track_id,)))
                stats["entries"] += out.entries.height
            if out.sanitization is not None and out.sanitization.height:
                logs.append((out.sanitization, (track_id, imdb, lang)))
            outcome = {"ok": "selected_candidate", "flagged": "flagged", "rejected": "rejected"}[out.status]
            attempts.append((ctx.run_id, imdb, lang, prov, fid, rank, sha, outcome, ",".join(out.reasons) or None, now))
        ids = [t[0] for t in tracks]
        batch = "(SELECT unnest(?::VARCHAR[]))"
        known = con.execute(f"SELECT count(*) FROM tracks WHERE track_id IN {batch}", [ids]).fetchall()[0][0]
        # rows of other tables exist only beside a track row (written in the same transaction):
        # a batch of new tracks skips the scans of the big tables
        for table in ("tracks", "entries", "flags", "sanitization_log") if known else ():
            con.execute(f"DELETE FROM {table} WHERE track_id IN {batch}", [ids]).fetchall()
        insert_arrow(con, "tracks", _rows(TRACK_COLUMNS, tracks))
        insert_arrow(con, "flags", _rows(FLAG_COLUMNS, flags))
        if entries:
            insert_arrow(con, "entries", _arrow(_keyed(entries, ("track_id",))))
        if logs:
            insert_arrow(con, "sanitization_log", _arrow(_keyed(logs, ("track_id", "imdb_id", "language"))))
        insert_arrow(con, "attempts", _rows(ATTEMPT_COLUMNS, attempts))


TRACK_COLUMNS = ("track_id", "imdb_id", "language", "provider", "file_id", "raw_sha256", "download_count",
                 "encoding", "decoder", "status", "reasons", "n_entries", "n_repairs", "first_start_ms",
                 "last_end_ms", "n_tokens", "runtime_min", "processing_version", "processed_at", "error_type",
                 "error_detail")
FLAG_COLUMNS = ("track_id", "imdb_id", "language", "provider", "file_id", "layer", "severity", "value",
                "threshold", "detail", "evidence")
ATTEMPT_COLUMNS = ("run_id", "imdb_id", "language", "provider", "file_id", "attempt_no", "sha256", "outcome",
                   "reason", "attempted_at")
_TYPES = {"download_count": pa.int64(), "n_entries": pa.int64(), "n_repairs": pa.int64(),
          "first_start_ms": pa.int64(), "last_end_ms": pa.int64(), "n_tokens": pa.int64(),
          "runtime_min": pa.float64(), "attempt_no": pa.int64(), "value": pa.float64(), "threshold": pa.float64(),
          "processed_at": pa.timestamp("us", tz="UTC"), "attempted_at": pa.timestamp("us", tz="UTC")}


def _keyed(parts: list[tuple[pl.DataFrame, tuple[str, ...]]], names: tuple[str, ...]) -> pl.DataFrame:
    """The frames of ``parts`` one below the other, each row with its part's key values as the
    string columns ``names`` after the frame's own (as ``frame.with_columns(pl.lit(key)...)`` per
    part, then concatenated; the key columns are built once for the batch)."""
    frame = pl.concat([f for f, _ in parts], how="vertical_relaxed")
    take = pl.Series(np.repeat(np.arange(len(parts), dtype=np.int64), [f.height for f, _ in parts]))
    return frame.with_columns(pl.Series(name, [key[i] for _, key in parts], dtype=pl.String).gather(take)
                              for i, name in enumerate(names))


def _arrow(frame: pl.DataFrame) -> pa.Table:
    """``frame`` as Arrow for DuckDB, its strings as Arrow string views (polars' own layout:
    no copy of the batch's texts into offset-based strings; DuckDB reads the same values)."""
    return frame.to_arrow(compat_level=pl.CompatLevel.newest())


def _rows(columns: tuple[str, ...], rows: list[tuple]) -> pa.Table:
    """``rows`` as an Arrow table of ``columns`` (strings unless :data:`_TYPES` says otherwise)."""
    return pa.table({c: pa.array([r[i] for r in rows], _TYPES.get(c, pa.string())) for i, c in enumerate(columns)})


def _count(stats: dict[str, Any], out, sign: int) -> None:
    """Count ``out`` into the stage's stats (``sign`` -1 takes it out again)."""
    stats["processed"] += sign
    stats[out.status] += sign
    if out.status == "rejected":
        reason = (list(out.reasons) or ["rejected"])[0]
        by = stats.setdefault("rejected_by_reason", {})
        by[reason] = by.get(reason, 0) + sign
