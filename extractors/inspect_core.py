"""Decode + strict parse of one subtitle file: the core of ``cinesub inspect`` (issue 3).

:func:`inspect_bytes` returns the stable JSON contract (validators' flags are merged by the
caller)::

    {
      "encoding": "cp1256" | null,          # codec that produced the text
      "decoder": "candidate:cp1256",        # how it was chosen
      "status": "ok" | "flagged" | "rejected",
      "entries": 1069,                      # entries read (parse stop: blocks before it; 0 if decoding stopped)
      "repairs": [{"line", "before", "after", "kind"}],
      "errors": [{"line", "text", "layer", "detail"}],
      "flags": [{"layer", "severity", "detail", "value", "threshold", "evidence"}],
      "reasons": ["..."],                   # decoder reason codes
      "policy": "default"
    }

Status: ``rejected`` when decoding or parsing stops the track, else ``flagged`` when the decoder
flagged the text, else ``ok``. Every parse error is also reported as a ``stop`` flag of its layer
(``timestamp_syntax`` / ``structure``) so that ``flags`` alone tells the whole story.

:func:`inspect_track` also returns the entries as an Arrow table (for ``--dump-entries``; see
:func:`write_entries_jsonl`). Work is linear in the file size: one decode, one vectorised parse.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import IO, Any

import pyarrow as pa

from cinesub.records import DecodeResult, Flag
from extractors.decode import decode
from extractors.srt import ENTRY_COLUMNS, _ARROW_SCHEMA, parse_to_arrow

__all__ = ["inspect_bytes", "inspect_track", "InspectResult", "write_entries_jsonl", "CONTRACT_KEYS"]

CONTRACT_KEYS = ("encoding", "decoder", "status", "entries", "repairs", "errors", "flags")


@dataclass
class InspectResult:
    report: dict[str, Any]
    table: pa.Table  # index, timeframe, start_ms, end_ms, content (empty when not parsed)
    decoded: DecodeResult


def inspect_track(raw: bytes, language: str, policy: str = "default") -> InspectResult:
    d = decode(raw, language, policy)
    flags: list[Flag] = list(d.flags)
    repairs: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    table = _ARROW_SCHEMA.empty_table()
    status = d.status
    if d.status != "rejected" and d.text is not None:
        table, rep, errs, parse_status = parse_to_arrow(d.text)
        repairs = [r.model_dump() for r in rep]
        errors = [e.model_dump() for e in errs]
        for e in errs:
            flags.append(
                Flag(
                    layer=e.layer,
                    severity="stop",
                    detail=f"line {e.line}: {e.detail}: {e.text!r}",
                    evidence={"line": e.line, "text": e.text},
                )
            )
        if parse_status == "rejected":
            status = "rejected"
    report = {
        "encoding": d.encoding,
        "decoder": d.decoder,
        "status": status,
        "entries": table.num_rows if status != "rejected" or errors else 0,
        "repairs": repairs,
        "errors": errors,
        "flags": [f.model_dump() for f in flags],
        "reasons": list(d.reasons),
        "policy": policy,
    }
    return InspectResult(report=report, table=table, decoded=d)


def inspect_bytes(raw: bytes, language: str, policy: str = "default") -> dict[str, Any]:
    """The ``cinesub inspect --json`` contract for one file (decode + strict parse)."""
    return inspect_track(raw, language, policy).report


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
