"""One subtitle file, inspected: the report of ``cinesub inspect`` (issue 3).

:func:`inspect_file` is exactly what the command runs: the pipeline's one processing path of a
candidate, :func:`validators.candidate.process_candidate` (decode, strict parse, the verification
layers -- ``runtime_coverage`` only with a runtime -- and sanitization), and, given the English
track's summary, the duration audit (:func:`validators.duration_audit.audit`). A test checks that
it agrees with :func:`validators.candidate.process_bytes` on status, flags, entries and
sanitization. Its ``report`` is the stable JSON contract::

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

Status and flags follow :mod:`validators.candidate` (one flag per layer; every parse error is a
``stop`` flag of its layer, so ``flags`` alone tells the whole story). Sanitization reports what
it removed or redacted by entry index and reason -- never the removed text. Checks,
sanitization and the audit only run on a parsed track. :func:`inspect_track` is the decode +
strict parse part alone.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import IO, Any

import pyarrow as pa

from cinesub.records import DecodeResult
from cinesub.settings import Thresholds
from extractors.srt import ENTRY_COLUMNS
from validators.candidate import (
    CHUNK_ROWS,
    CandidateRun,
    decode_and_parse,
    one_per_layer,
    process_candidate,
    status_of,
    token_count,
)
from validators.duration_audit import audit, audited_layers

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


@dataclass
class InspectResult:
    report: dict[str, Any]
    table: pa.Table  # index, timeframe, start_ms, end_ms, content (blocks before a parse stop; empty if not decoded)
    decoded: DecodeResult
    #: polars frame of the entries (plus ``clean_content`` when sanitized); None unless parsed
    entries: Any = None
    #: seconds per stage: decode, parse, checks, sanitize, audit
    timings: dict[str, float] = field(default_factory=dict)


def _result(run: CandidateRun, raw: bytes, language: str, policy: str) -> InspectResult:
    d = run.decoded
    report = {
        "encoding": d.encoding,
        "decoder": d.decoder,
        "status": run.status,
        "entries": run.table.num_rows,
        "repairs": run.repairs,
        "errors": run.errors,
        "flags": [f.model_dump() for f in run.flags],
        "layers": run.layers,
        "reasons": list(d.reasons),
        "policy": policy,
        "language": language,
        "bytes": len(raw),
    }
    return InspectResult(report=report, table=run.table, decoded=d, entries=run.entries, timings=run.timings)


def inspect_track(raw: bytes, language: str, policy: str = "default") -> InspectResult:
    """Decode + strict parse only (no verification layers, no sanitization)."""
    return _result(decode_and_parse(raw, language, policy), raw, language, policy)


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
    import time

    if english is not None and not sanitize:
        raise ValueError("the duration audit counts tokens of sanitized text: english needs sanitize=True")
    thresholds = thresholds if thresholds is not None else Thresholds()
    run = process_candidate(raw, language, runtime_min, thresholds, policy, sanitize=sanitize)
    res = _result(run, raw, language, policy)
    report = res.report
    san = run.sanitized
    report.update(runtime_min=runtime_min, checks={"evaluated": run.evaluated}, sanitization=None)
    if san is not None:
        log = san.log.select("index", "action", "reasons")  # never the text (nor its digest)
        report["sanitization"] = {
            "version": san.version,
            "removed": int((log["action"] == "removed").sum()),
            "modified": int((log["action"] == "modified").sum()),
            "actions": log.to_dicts(),
        }
    if run.stopped or english is None:
        return res

    t0 = time.perf_counter()
    flags = list(run.flags)
    track = {k: v for k, v in audit_summary(res).items() if k != "status"}
    layers = audited_layers(runtime_min, english) if english.get("status") != "rejected" else []
    report["audit"] = {"evaluated": layers, "track": track, "english": english}
    if layers:
        audit_flags = audit(track, english, runtime_min, thresholds)
        if language == "en":  # the pipeline audits the English track against runtime only
            audit_flags = [f for f in audit_flags if f.layer == "span_ratio"]
        flags.extend(audit_flags)
    res.timings["audit"] = time.perf_counter() - t0
    flags = one_per_layer(flags)
    report.update(status=status_of(flags, False), flags=[f.model_dump() for f in flags],
                  layers=sorted({f.layer for f in flags}))
    return res


def audit_summary(res: InspectResult) -> dict[str, Any]:
    """The duration-audit summary of an inspected file, as the pipeline stores it per track:
    ``status, first_start_ms, last_end_ms, n_entries`` (all entries) and ``n_tokens`` (of the
    sanitized text). A rejected file has only its status."""
    status = res.report["status"]
    if res.entries is None or "clean_content" not in res.entries.columns:
        return {"status": status}
    e = res.entries
    return {
        "status": status,
        "first_start_ms": int(e["start_ms"].min()),
        "last_end_ms": int(e["end_ms"].max()),
        "n_entries": e.height,
        "n_tokens": token_count(e),
    }


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
