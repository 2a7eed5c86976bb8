"""Processing one subtitle candidate: decode → strict parse → verification layers → sanitization.

The one processing path of a candidate, pure (no state DB, no files): the ``process`` stage runs
:func:`process_bytes` in its workers (a :class:`TrackOutcome`: a track row, Arrow-ready columns
for entries, flags and sanitization actions, so the coordinator writes everything in one
transaction) and ``cinesub inspect`` runs :func:`process_candidate` through
:func:`validators.inspect_report.inspect_file` (the JSON report). Both see the same
:class:`CandidateRun`: the same functions, in the same order, with the same status rule.

Status: ``rejected`` when decoding or parsing stops the track (or any flag is a ``stop``), else
``flagged`` when any layer raised a flag, else ``ok``; one flag per layer (the first). Every
parse error is also a ``stop`` flag of its layer (``timestamp_syntax`` / ``structure``).

:func:`process_bytes` never raises for bad input: any exception while processing the candidate
(an unforeseen bug in unpacking, decoding, parsing, the checks or sanitization) becomes a
rejected outcome with the reason code ``internal_error``, the step, the exception type and a
short detail (:func:`internal_error_outcome`), so one poison file is a recorded rejection, never
a failed stage.

Speed and memory: one decode, one vectorised parse into Arrow, then polars expressions over the
entries, handed to polars in record batches of :data:`CHUNK_ROWS` rows so its kernels work the
batches in parallel. No per-entry Python objects; memory is linear in the file size.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from typing import Any

import polars as pl
import pyarrow as pa

import extractors.decode as decoding
import extractors.srt as srt
import validators.checks as checks
import validators.duration_audit as duration_audit
import validators.sanitize as sanitizing
from cinesub.records import DecodeResult, Flag
from cinesub.settings import Thresholds

#: Bump when decoding, parsing, checks or sanitization change what a track looks like: every
#: track is keyed by (candidate, raw bytes, language, runtime, this version), so a bump makes the
#: next build reprocess from the raw store (no download).
PROCESSING_VERSION = "2"  # 2: issue 14 (archive reader, decoder, index_duplicate, entry positions)

#: reason code (and flag layer) of a candidate whose processing raised: the safety net
INTERNAL_ERROR = "internal_error"

#: rows per record batch handed to polars (the unit its kernels parallelise over)
CHUNK_ROWS = 65_536

#: the columns of a processed track's entries (``position``: the 0-based place in the file, the
#: entries key; ``index`` as found, may repeat)
ENTRY_OUTPUT_COLUMNS = ("position", "index", "timeframe", "start_ms", "end_ms", "content", "clean_content")


def track_id_for(provider: str, file_id: str, raw_sha256: str, language: str, runtime_min: int | None) -> str:
    key = f"{provider}|{file_id}|{raw_sha256}|{language}|{runtime_min}|{PROCESSING_VERSION}"
    return hashlib.sha256(key.encode()).hexdigest()[:32]


# --------------------------------------------------------------------------------------------
# the one path
# --------------------------------------------------------------------------------------------
@dataclass
class CandidateRun:
    """Everything one candidate's processing produced (see :func:`process_candidate`)."""

    decoded: DecodeResult
    #: index, timeframe, start_ms, end_ms, content (blocks before a parse stop; empty if not decoded)
    table: pa.Table
    repairs: list[dict[str, Any]]
    errors: list[dict[str, Any]]
    flags: list[Flag]  # one per layer
    status: str  # ok | flagged | rejected
    #: True when decoding or parsing stopped the track (then nothing after the parse ran)
    stopped: bool
    #: polars frame of the entries (plus ``clean_content`` when sanitized); None unless parsed
    entries: pl.DataFrame | None = None
    sanitized: sanitizing.SanitizeResult | None = None
    #: the layers :func:`validators.checks.run_checks` evaluated ([] if not parsed)
    evaluated: list[str] = field(default_factory=list)
    #: seconds per step: decode, parse, checks, sanitize
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def layers(self) -> list[str]:
        """The flags' layers: the pipeline's reason codes."""
        return sorted({f.layer for f in self.flags})


def decode_and_parse(raw: bytes, language: str, policy: str = "default",
                     step: list[str] | None = None) -> CandidateRun:
    """Decode + strict parse only (no verification layers, no sanitization)."""
    step = step if step is not None else ["decode"]
    step[0] = "decode"
    t0 = time.perf_counter()
    d = decoding.decode(raw, language, policy)
    t1 = time.perf_counter()
    flags: list[Flag] = list(d.flags)
    repairs: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    table = srt._ARROW_SCHEMA.empty_table()
    stopped = d.status == "rejected" or d.text is None
    if not stopped:
        step[0] = "parse"
        table, rep, errs, parse_status = srt.parse_to_arrow(d.text, decoding.utf8_bytes(raw, d))
        repairs = [_as_dict(r) for r in rep]
        errors = [_as_dict(e) for e in errs]
        flags.extend(parse_error_flag(e) for e in errors)
        stopped = parse_status == "rejected"
    flags = one_per_layer(flags)
    return CandidateRun(d, table, repairs, errors, flags, status_of(flags, stopped), stopped,
                        timings={"decode": t1 - t0, "parse": time.perf_counter() - t1})


def process_candidate(raw: bytes, language: str, runtime_min: float | None, thresholds: Thresholds,
                      policy: str = "default", *, sanitize: bool = True,
                      step: list[str] | None = None) -> CandidateRun:
    """Decode, strict parse, the verification layers (``runtime_coverage`` only with a runtime)
    and, with ``sanitize``, sanitization of one candidate's bytes. ``step`` (a one-item list), when
    given, names the step running now (for an ``internal_error`` detail). Raises what a step raises
    (:func:`process_bytes` is the never-raising form); sanitization that leaves matches behind is a
    :class:`RuntimeError`."""
    step = step if step is not None else ["decode"]
    run = decode_and_parse(raw, language, policy, step)
    if run.stopped:
        return run
    if run.table.num_rows == 0:  # the parser rejects empty texts; kept as a guard
        run.flags = [Flag(layer="structure", severity="stop", detail="no subtitle entries")]
        run.status, run.stopped = "rejected", True
        return run

    step[0] = "checks"
    t0 = time.perf_counter()
    entries = pl.from_arrow(pa.Table.from_batches(run.table.to_batches(max_chunksize=CHUNK_ROWS),
                                                  schema=run.table.schema), rechunk=False)
    flags = list(run.flags)
    flags.extend(checks.run_checks(entries, language, runtime_min, thresholds))
    run.evaluated = checks.evaluated_layers(runtime_min)
    run.timings["checks"] = time.perf_counter() - t0

    if sanitize:
        step[0] = "sanitize"
        t0 = time.perf_counter()
        san = sanitizing.sanitize(entries, language)
        if san.residual:
            raise RuntimeError(f"sanitization left matches behind: {san.residual[:5]}")
        run.sanitized, entries = san, san.entries
        run.timings["sanitize"] = time.perf_counter() - t0
    run.entries = entries
    run.flags = one_per_layer(flags)
    run.status = status_of(run.flags, False)
    return run


def token_count(entries: pl.DataFrame) -> int:
    """Whitespace words of a sanitized track's dialogue (removed entries count as empty): the
    cheap per-candidate ``tracks.n_tokens``; the duration audit's o200k_base tokens are counted
    once per selected track in the cohort stage (validators/duration_audit.py)."""
    return duration_audit.count_words(entries.with_columns(pl.col("clean_content").fill_null("").alias("content")))


# --------------------------------------------------------------------------------------------
# the pipeline's view: a track outcome that never raises
# --------------------------------------------------------------------------------------------
@dataclass
class TrackOutcome:
    status: str  # ok | flagged | rejected
    encoding: str | None
    decoder: str
    reasons: list[str]
    flags: list[Flag]
    #: :data:`ENTRY_OUTPUT_COLUMNS`
    entries: pl.DataFrame | None = None
    sanitization: pl.DataFrame | None = None  # index, action, reasons, sha256, position
    n_repairs: int = 0
    n_tokens: int = 0
    first_start_ms: int | None = None
    last_end_ms: int | None = None
    errors: list[dict[str, Any]] = field(default_factory=list)
    repairs: list[dict[str, Any]] = field(default_factory=list)
    error_type: str | None = None  # internal_error only: the exception's type name
    error_detail: str | None = None  # internal_error only: "<step>: <message>" (short)


def internal_error_outcome(error_type: str, message: str, step: str, decoder: str = "none") -> TrackOutcome:
    """The rejected outcome of a candidate whose processing raised ``error_type`` at ``step``
    (unpack/decode, parse, checks, sanitize, or the worker itself): reason ``internal_error``."""
    detail = f"{step}: {message}".strip()[:300]
    flag = Flag(layer=INTERNAL_ERROR, severity="stop", detail=f"{error_type}: {detail}"[:500],
                evidence={"step": step, "error_type": error_type, "detail": detail})
    return TrackOutcome("rejected", None, decoder, [INTERNAL_ERROR], [flag],
                        error_type=error_type, error_detail=detail)


def process_bytes(
    raw: bytes,
    language: str,
    runtime_min: float | None,
    thresholds: Thresholds,
    policy: str = "default",
) -> TrackOutcome:
    """The outcome of one candidate's bytes; never raises an :class:`Exception` for them (see the
    module)."""
    step = ["decode"]  # the step running now, for the internal_error detail
    try:
        return _outcome(process_candidate(raw, language, runtime_min, thresholds, policy, step=step), step)
    except Exception as exc:  # the safety net: a poison item is a rejection, not a stage failure
        return internal_error_outcome(type(exc).__name__, str(exc) or repr(exc), step[0])


def _outcome(run: CandidateRun, step: list[str]) -> TrackOutcome:
    dec = run.decoded
    if run.entries is None:  # decoding or parsing stopped the track
        return TrackOutcome("rejected", dec.encoding, dec.decoder, run.layers or dec.reasons, run.flags,
                            n_repairs=len(run.repairs), errors=run.errors, repairs=run.repairs)
    step[0] = "tokens"
    clean = run.entries.with_row_index("position").with_columns(pl.col("position").cast(pl.Int64))
    assert run.sanitized is not None
    return TrackOutcome(
        status=run.status,
        encoding=dec.encoding,
        decoder=dec.decoder,
        reasons=run.layers,
        flags=run.flags,
        entries=clean.select(list(ENTRY_OUTPUT_COLUMNS)),
        sanitization=run.sanitized.log,
        n_repairs=len(run.repairs),
        n_tokens=token_count(run.entries),
        first_start_ms=int(clean["start_ms"].min()),
        last_end_ms=int(clean["end_ms"].max()),
        repairs=run.repairs,
    )


# --------------------------------------------------------------------------------------------
# shared rules
# --------------------------------------------------------------------------------------------
def status_of(flags: list[Flag], stopped: bool) -> str:
    if stopped or any(f.severity == "stop" for f in flags):
        return "rejected"
    return "flagged" if flags else "ok"


def parse_error_flag(e: dict[str, Any]) -> Flag:
    """The ``stop`` flag of one strict-parse error."""
    return Flag(
        layer=e.get("layer", "structure"),
        severity="stop",
        detail=f"line {e.get('line')}: {e.get('detail', '')}: {e.get('text', '')!r}"[:500],
        evidence={"line": e.get("line"), "text": str(e.get("text", ""))[:200]},
    )


def one_per_layer(flags: list[Flag]) -> list[Flag]:
    seen: dict[str, Flag] = {}
    for f in flags:
        seen.setdefault(f.layer, f)
    return list(seen.values())


def _as_dict(x: Any) -> dict[str, Any]:
    return x.model_dump() if hasattr(x, "model_dump") else dict(x)


def flag_rows(flags: list[Flag]) -> list[dict[str, Any]]:
    return [
        {
            "layer": f.layer,
            "severity": f.severity,
            "value": f.value,
            "threshold": f.threshold,
            "detail": f.detail,
            "evidence": json.dumps(f.evidence, default=str, ensure_ascii=False),
        }
        for f in flags
    ]
