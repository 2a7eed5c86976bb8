"""One subtitle file, inspected: the core of ``cinesub inspect`` (issue 3).

:func:`inspect_file` is exactly what the command runs: decode (:mod:`extractors.decode`), strict
parse (:mod:`extractors.srt`), the verification layers (:func:`validators.checks.run_checks`;
``runtime_coverage`` only with a runtime), sanitization (:func:`validators.sanitize.sanitize`)
and, given the English track's summary, the duration audit
(:func:`validators.duration_audit.audit`). It composes the same functions, in the same order and
with the same status rule, as the pipeline's :func:`flows.track_processing.process_bytes` (a test
checks that both agree on status, flags, entries and sanitization). Its ``report`` is the stable
JSON contract::

    {
      "encoding": "cp1256" | null,          # codec that produced the text
      "decoder": "candidate:cp1256",        # how it was chosen
      "status": "ok" | "flagged" | "rejected",
      "entries": 1069,                      # entries read (parse stop: blocks before it; 0 if decoding stopped)
      "repairs": [{"line", "before", "after", "kind"}],
      "errors": [{"line", "text", "layer", "detail"}],
      "flags": [{"layer", "severity", "detail", "value", "threshold", "evidence"}],  # one per layer
      "layers": ["..."],                    # the flags' layers (the pipeline's reason codes)
      "reasons": ["..."],                   # decoder reason codes
      "policy": "default", "language": "ar", "runtime_min": null, "bytes": 69611,
      "checks": {"evaluated": ["chronology", ...]},   # layers run_checks evaluated ([] if not parsed)
      "sanitization": {"version", "removed", "modified", "actions": [{"index", "action", "reasons"}]},
                                            # null when the track was not parsed (or sanitize=False)
      "audit": {"evaluated", "track": {...}, "english": {...}}  # only with an English summary
    }

Status: ``rejected`` when decoding or parsing stops the track (or any flag is a ``stop``), else
``flagged`` when any layer raised a flag, else ``ok``. Every parse error is also reported as a
``stop`` flag of its layer (``timestamp_syntax`` / ``structure``) so that ``flags`` alone tells
the whole story. Sanitization reports what it removed or redacted by entry index and reason --
never the removed text. Checks, sanitization and the audit only run on a parsed track.

Speed and memory: one decode, one vectorised parse into Arrow, then polars expressions over the
entries, which are handed to polars in record batches of :data:`CHUNK_ROWS` rows so its kernels
work the batches in parallel. No per-entry Python objects; memory is linear in the file size.
:func:`inspect_track` is the decode + strict parse part alone.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import IO, Any

import pyarrow as pa

from cinesub.records import DecodeResult, Flag
from extractors.decode import decode, utf8_bytes
from extractors.srt import ENTRY_COLUMNS, _ARROW_SCHEMA, parse_to_arrow

__all__ = [
    "inspect_bytes",
    "inspect_track",
    "inspect_file",
    "audit_summary",
    "InspectResult",
    "write_entries_jsonl",
    "CONTRACT_KEYS",
    "CHUNK_ROWS",
]

CONTRACT_KEYS = ("encoding", "decoder", "status", "entries", "repairs", "errors", "flags")
#: rows per record batch handed to polars (the unit its kernels parallelise over)
CHUNK_ROWS = 65_536


@dataclass
class InspectResult:
    report: dict[str, Any]
    table: pa.Table  # index, timeframe, start_ms, end_ms, content (blocks before a parse stop; empty if not decoded)
    decoded: DecodeResult
    #: polars frame of the entries (plus ``clean_content`` when sanitized); None unless parsed
    entries: Any = None
    #: seconds per stage: decode, parse, checks, sanitize, audit
    timings: dict[str, float] = field(default_factory=dict)


def _error_flag(e: dict[str, Any]) -> Flag:
    # the same flag the pipeline records for a parse stop (flows.track_processing.process_bytes)
    return Flag(
        layer=e.get("layer", "structure"),
        severity="stop",
        detail=f"line {e.get('line')}: {e.get('detail', '')}: {e.get('text', '')!r}"[:500],
        evidence={"line": e.get("line"), "text": str(e.get("text", ""))[:200]},
    )


def _status(flags: list[Flag], stopped: bool) -> str:
    if stopped or any(f.severity == "stop" for f in flags):
        return "rejected"
    return "flagged" if flags else "ok"


def inspect_track(raw: bytes, language: str, policy: str = "default") -> InspectResult:
    """Decode + strict parse only (no verification layers, no sanitization)."""
    t0 = time.perf_counter()
    d = decode(raw, language, policy)
    t1 = time.perf_counter()
    flags: list[Flag] = list(d.flags)
    repairs: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    table = _ARROW_SCHEMA.empty_table()
    stopped = d.status == "rejected" or d.text is None
    if not stopped:
        table, rep, errs, parse_status = parse_to_arrow(d.text, utf8_bytes(raw, d))
        repairs = [r.model_dump() for r in rep]
        errors = [e.model_dump() for e in errs]
        flags.extend(_error_flag(e) for e in errors)
        stopped = parse_status == "rejected"
    t2 = time.perf_counter()
    flags = _one_per_layer(flags)
    report = {
        "encoding": d.encoding,
        "decoder": d.decoder,
        "status": _status(flags, stopped),
        "entries": table.num_rows,
        "repairs": repairs,
        "errors": errors,
        "flags": [f.model_dump() for f in flags],
        "layers": sorted({f.layer for f in flags}),
        "reasons": list(d.reasons),
        "policy": policy,
        "language": language,
        "bytes": len(raw),
    }
    return InspectResult(report=report, table=table, decoded=d, timings={"decode": t1 - t0, "parse": t2 - t1})


def inspect_bytes(raw: bytes, language: str, policy: str = "default") -> dict[str, Any]:
    """The decode + strict parse part of the contract for one file (see :func:`inspect_file`)."""
    return inspect_track(raw, language, policy).report


def inspect_file(
    raw: bytes,
    language: str,
    policy: str = "default",
    runtime_min: float | None = None,
    thresholds: Any = None,
    *,
    sanitize: bool = True,
    english: dict[str, Any] | None = None,
) -> InspectResult:
    """What ``cinesub inspect`` runs on one file (see the module docstring).

    ``english``: the English track's :func:`audit_summary` (with a ``status``); when given, the
    duration audit runs against it. ``sanitize=False`` leaves sanitization out (the audit's token
    count needs it, so ``english`` requires ``sanitize``).
    """
    import polars as pl

    from cinesub.settings import Thresholds
    from validators.checks import evaluated_layers, run_checks
    from validators.duration_audit import audit, audited_layers

    if english is not None and not sanitize:
        raise ValueError("the duration audit counts tokens of sanitized text: english needs sanitize=True")
    thresholds = thresholds if thresholds is not None else Thresholds()
    res = inspect_track(raw, language, policy)
    report = res.report
    report.update(runtime_min=runtime_min, checks={"evaluated": []}, sanitization=None)
    if report["status"] == "rejected":
        return res
    if res.table.num_rows == 0:  # the parser rejects empty texts; kept as the pipeline's guard
        flags = [Flag(layer="structure", severity="stop", detail="no subtitle entries")]
        report.update(status="rejected", flags=[f.model_dump() for f in flags], layers=["structure"])
        return res

    t0 = time.perf_counter()
    entries = pl.from_arrow(pa.Table.from_batches(res.table.to_batches(max_chunksize=CHUNK_ROWS),
                                                  schema=res.table.schema), rechunk=False)
    flags = [Flag.model_validate(f) for f in report["flags"]]
    flags.extend(run_checks(entries, language, runtime_min, thresholds))
    report["checks"] = {"evaluated": evaluated_layers(runtime_min)}
    res.timings["checks"] = time.perf_counter() - t0

    if sanitize:
        t0 = time.perf_counter()
        entries = _sanitize(entries, language, report)
        res.timings["sanitize"] = time.perf_counter() - t0
    res.entries = entries

    if english is not None:
        t0 = time.perf_counter()
        track = {k: v for k, v in audit_summary(res).items() if k != "status"}
        layers = audited_layers(runtime_min, english) if english.get("status") != "rejected" else []
        report["audit"] = {"evaluated": layers, "track": track, "english": english}
        if layers:
            audit_flags = audit(track, english, runtime_min, thresholds)
            if language == "en":  # the pipeline audits the English track against runtime only
                audit_flags = [f for f in audit_flags if f.layer == "span_ratio"]
            flags.extend(audit_flags)
        res.timings["audit"] = time.perf_counter() - t0

    flags = _one_per_layer(flags)
    report.update(
        status=_status(flags, False),
        flags=[f.model_dump() for f in flags],
        layers=sorted({f.layer for f in flags}),
    )
    return res


def _sanitize(entries: Any, language: str, report: dict[str, Any]) -> Any:
    from validators.sanitize import sanitize

    san = sanitize(entries, language)
    if san.residual:  # the pipeline fails the stage on this (flows.track_processing)
        raise RuntimeError(f"sanitization left matches behind: {san.residual[:5]}")
    log = san.log.select("index", "action", "reasons")  # never the text (nor its digest)
    report["sanitization"] = {
        "version": san.version,
        "removed": int((log["action"] == "removed").sum()),
        "modified": int((log["action"] == "modified").sum()),
        "actions": log.to_dicts(),
    }
    return san.entries


def audit_summary(res: InspectResult) -> dict[str, Any]:
    """The duration-audit summary of an inspected file, as the pipeline stores it per track:
    ``status, first_start_ms, last_end_ms, n_entries`` (all entries) and ``n_tokens`` (of the
    sanitized text). A rejected file has only its status."""
    import polars as pl

    from validators.duration_audit import count_tokens

    status = res.report["status"]
    if res.entries is None or "clean_content" not in res.entries.columns:
        return {"status": status}
    e = res.entries
    return {
        "status": status,
        "first_start_ms": int(e["start_ms"].min()),
        "last_end_ms": int(e["end_ms"].max()),
        "n_entries": e.height,
        "n_tokens": count_tokens(e.with_columns(pl.col("clean_content").fill_null("").alias("content"))),
    }


def _one_per_layer(flags: list[Flag]) -> list[Flag]:
    from flows.track_processing import _one_per_layer as one_per_layer  # the pipeline's rule

    return one_per_layer(flags)


def write_entries_jsonl(table: pa.Table, fh: IO[str], batch_rows: int = 65536) -> int:
    """One JSON object per entry (``index, timeframe, start_ms, end_ms, content``); returns the
    number written. Streams in record batches, so memory stays bounded."""
    n = 0
    for batch in table.select(list(ENTRY_COLUMNS)).to_batches(max_chunksize=batch_rows):
        cols = [batch.column(i).to_pylist() for i in range(batch.num_columns)]
        for row in zip(*cols):
            fh.write(json.dumps(dict(zip(ENTRY_COLUMNS, row)), ensure_ascii=False))
            fh.write("\n")
            n += 1
    return n
