"""Stage ``process``: decode, parse, verify and sanitize every downloaded candidate the chain
needs (validators/candidate.py, in worker processes), then write tracks, entries, flags and
the sanitization log, and recompute the selection per film and language.

One poison candidate never fails the stage: an exception while processing it (or in its worker,
or a worker that dies on it) is a rejected track with reason ``internal_error`` and the exception
type and detail in ``tracks.error_type``/``error_detail`` and its flag; the track key (raw bytes +
``PROCESSING_VERSION``) makes the next build reuse that rejection instead of retrying the bytes."""

from __future__ import annotations

import sys
from typing import Any

import duckdb
import polars as pl
from rich.progress import Progress

from cinesub.rawstore import RawStore, read_blob
from cinesub.records import utcnow
from cinesub.settings import Thresholds
from flows.items import LocalItemRunner
from flows.kernel_context import RunContext, Stage
from flows.stages.subtitles.common import insert_arrow, selection_views
from validators.candidate import (
    PROCESSING_VERSION,
    flag_rows,
    internal_error_outcome,
    process_bytes,
    track_id_for,
)


def _work(args: tuple) -> tuple[tuple, Any]:
    """One candidate (in a worker process): never raises for the candidate's bytes
    (process_bytes turns any exception into an ``internal_error`` rejection)."""
    raw_url, sha, language, runtime_min, thresholds_json, policy, key = args
    raw = read_blob(raw_url, sha)
    outcome = process_bytes(raw, language, runtime_min, Thresholds.model_validate_json(thresholds_json), policy)
    return key, outcome


def _work_failed(job: tuple, error_type: str, message: str, step: str) -> tuple[tuple, Any]:
    """The outcome of a job whose worker raised or died: an ``internal_error`` rejection."""
    return job[-1], internal_error_outcome(error_type, message, step)


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
        jobs = [
            (store.url_for(sha), sha, lang, runtime, thresholds_json, ctx.settings.decoder_policy,
             (imdb, lang, prov, fid, rank, count, sha, runtime))
            for imdb, lang, prov, fid, rank, count, sha, runtime in todo
        ]
        stats: dict[str, Any] = {"processed": 0, "ok": 0, "flagged": 0, "rejected": 0, "entries": 0}

        def write(key, out) -> None:
            # one transaction per track: a crash keeps every track finished before it
            con.execute("BEGIN")
            try:
                self._write(con, ctx, key, out, stats)
                con.execute("COMMIT")
            except Exception as exc:  # rows this track cannot be stored as: its internal_error rejection
                con.execute("ROLLBACK")
                stats["processed"] -= 1
                stats[out.status] -= 1
                if out.status == "rejected":
                    by = stats["rejected_by_reason"]
                    by[(list(out.reasons) or ["rejected"])[0]] -= 1
                failed = internal_error_outcome(type(exc).__name__, str(exc) or repr(exc), "write")
                con.execute("BEGIN")
                try:
                    self._write(con, ctx, key, failed, stats)
                    con.execute("COMMIT")
                except BaseException:
                    con.execute("ROLLBACK")
                    raise
            except BaseException:
                con.execute("ROLLBACK")
                raise
            ctx.item_done("track", con)  # committed (the kernel's test hooks sit behind it)

        if jobs:
            # workers (local processes or Dask) compute; this process alone writes the state DB
            items = ctx.items if ctx.items is not None else LocalItemRunner(ctx.settings.workers)
            with Progress(transient=True, disable=not sys.stderr.isatty()) as progress:
                bar = progress.add_task(f"processing {len(jobs)} tracks", total=len(jobs))
                for key, out in items.map(_work, jobs, _work_failed):  # a poison item is one rejection
                    write(key, out)
                    progress.advance(bar)
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

    def _write(self, con, ctx: RunContext, key, out, stats) -> None:
        imdb, lang, prov, fid, rank, count, sha, runtime = key
        track_id = track_id_for(prov, fid, sha, lang, runtime)
        stats["processed"] += 1
        stats[out.status] += 1
        if out.status == "rejected":
            reason = (list(out.reasons) or ["rejected"])[0]
            by = stats.setdefault("rejected_by_reason", {})
            by[reason] = by.get(reason, 0) + 1
        con.execute("DELETE FROM tracks WHERE track_id = ?", [track_id])
        con.execute("DELETE FROM entries WHERE track_id = ?", [track_id])
        con.execute("DELETE FROM flags WHERE track_id = ?", [track_id])
        con.execute("DELETE FROM sanitization_log WHERE track_id = ?", [track_id])
        n_entries = out.entries.height if out.entries is not None else None
        con.execute(
            """INSERT INTO tracks (track_id, imdb_id, language, provider, file_id, raw_sha256, download_count,
                   encoding, decoder, status, reasons, n_entries, n_repairs, first_start_ms, last_end_ms,
                   n_tokens, runtime_min, processing_version, processed_at, error_type, error_detail)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
            [track_id, imdb, lang, prov, fid, sha, count, out.encoding, out.decoder, out.status,
             ",".join(out.reasons) or None, n_entries, out.n_repairs, out.first_start_ms, out.last_end_ms,
             out.n_tokens, runtime, PROCESSING_VERSION, utcnow(), out.error_type, out.error_detail],
        )
        for row in flag_rows(out.flags):
            con.execute(
                """INSERT INTO flags (track_id, imdb_id, language, provider, file_id, layer, severity, value,
                   threshold, detail, evidence) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                [track_id, imdb, lang, prov, fid, row["layer"], row["severity"], row["value"],
                 row["threshold"], row["detail"], row["evidence"]],
            )
        if out.entries is not None:
            insert_arrow(con, "entries", out.entries.with_columns(pl.lit(track_id).alias("track_id")).to_arrow())
            stats["entries"] += out.entries.height
        if out.sanitization is not None and out.sanitization.height:
            log = out.sanitization.with_columns(
                pl.lit(track_id).alias("track_id"), pl.lit(imdb).alias("imdb_id"), pl.lit(lang).alias("language")
            )
            insert_arrow(con, "sanitization_log", log.to_arrow())
        outcome = {"ok": "selected_candidate", "flagged": "flagged", "rejected": "rejected"}[out.status]
        con.execute(
            """INSERT INTO attempts (run_id, imdb_id, language, provider, file_id, attempt_no, sha256,
                   outcome, reason, attempted_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
            [ctx.run_id, imdb, lang, prov, fid, rank, sha, outcome, ",".join(out.reasons) or None, utcnow()],
        )
