"""Processing one candidate file: decode → strict parse → verification layers → sanitization.

A pure composition of extractors and validators (no state DB access), run in worker processes
by the ``process`` stage. It returns plain data (a track row, Arrow-ready columns for entries,
flags and sanitization actions) so the parent process writes everything in one transaction.

It never raises for bad input: any exception while processing the candidate (an unforeseen bug
in unpacking, decoding, parsing, the checks or sanitization) becomes a rejected outcome with the
reason code ``internal_error``, the step, the exception type and a short detail
(:func:`internal_error_outcome`), so one poison file is a recorded rejection, never a failed stage.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from cinesub.records import Flag
from cinesub.settings import Thresholds

#: Bump when decoding, parsing, checks or sanitization change what a track looks like: every
#: track is keyed by (candidate, raw bytes, language, runtime, this version), so a bump makes the
#: next build reprocess from the raw store (no download).
PROCESSING_VERSION = "2"  # 2: issue 14 (archive reader, decoder, index_duplicate, entry positions)

#: reason code (and flag layer) of a candidate whose processing raised: the safety net
INTERNAL_ERROR = "internal_error"


def track_id_for(provider: str, file_id: str, raw_sha256: str, language: str, runtime_min: int | None) -> str:
    key = f"{provider}|{file_id}|{raw_sha256}|{language}|{runtime_min}|{PROCESSING_VERSION}"
    return hashlib.sha256(key.encode()).hexdigest()[:32]


@dataclass
class TrackOutcome:
    status: str  # ok | flagged | rejected
    encoding: str | None
    decoder: str
    reasons: list[str]
    flags: list[Flag]
    #: position (0-based place in the file: the entries key), index (as found, may repeat),
    #: timeframe, start_ms, end_ms, content, clean_content
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
    module). A broken installation is not the item's fault: an import failure propagates."""
    import extractors.decode  # noqa: F401
    import extractors.srt  # noqa: F401
    import validators.checks  # noqa: F401
    import validators.duration_audit  # noqa: F401
    import validators.sanitize  # noqa: F401

    step = ["decode"]  # the step running now, for the internal_error detail
    try:
        return _process(raw, language, runtime_min, thresholds, policy, step)
    except Exception as exc:  # the safety net: a poison item is a rejection, not a stage failure
        return internal_error_outcome(type(exc).__name__, str(exc) or repr(exc), step[0])


def _process(raw: bytes, language: str, runtime_min: float | None, thresholds: Thresholds, policy: str,
             step: list[str]) -> TrackOutcome:
    from extractors.decode import decode
    from extractors.srt import parse_to_arrow
    from validators.checks import run_checks
    from validators.duration_audit import count_tokens
    from validators.sanitize import sanitize

    dec = decode(raw, language, policy=policy)
    flags: list[Flag] = list(dec.flags)
    if dec.status == "rejected" or dec.text is None:
        return TrackOutcome("rejected", dec.encoding, dec.decoder, _codes(flags) or dec.reasons, flags)

    step[0] = "parse"
    table, repairs, errors, status = parse_to_arrow(dec.text)
    rep = [r.model_dump() if hasattr(r, "model_dump") else dict(r) for r in repairs]
    errs = [e.model_dump() if hasattr(e, "model_dump") else dict(e) for e in errors]
    if status == "rejected":
        for e in errs:
            flags.append(
                Flag(
                    layer=e.get("layer", "structure"),
                    severity="stop",
                    detail=f"line {e.get('line')}: {e.get('detail', '')}: {e.get('text', '')!r}"[:500],
                    evidence={"line": e.get("line"), "text": str(e.get("text", ""))[:200]},
                )
            )
        flags = _one_per_layer(flags)
        return TrackOutcome("rejected", dec.encoding, dec.decoder, _codes(flags), flags,
                            n_repairs=len(rep), errors=errs, repairs=rep)

    # the entry's place in the file keys it: indices are kept as found and may repeat
    entries = pl.from_arrow(table).with_row_index("position").with_columns(pl.col("position").cast(pl.Int64))
    if entries.height == 0:
        flag = Flag(layer="structure", severity="stop", detail="no subtitle entries")
        return TrackOutcome("rejected", dec.encoding, dec.decoder, ["structure"], [flag])

    step[0] = "checks"
    flags.extend(run_checks(entries, language, runtime_min, thresholds))
    step[0] = "sanitize"
    san = sanitize(entries, language)
    if san.residual:
        raise RuntimeError(f"sanitization left matches behind: {san.residual[:5]}")
    clean = san.entries
    step[0] = "tokens"
    n_tokens = count_tokens(clean.with_columns(pl.col("clean_content").fill_null("").alias("content")))
    flags = _one_per_layer(flags)
    status = "ok" if not flags else ("rejected" if any(f.severity == "stop" for f in flags) else "flagged")
    return TrackOutcome(
        status=status,
        encoding=dec.encoding,
        decoder=dec.decoder,
        reasons=_codes(flags),
        flags=flags,
        entries=clean.select(["position", "index", "timeframe", "start_ms", "end_ms", "content", "clean_content"]),
        sanitization=san.log,
        n_repairs=len(rep),
        n_tokens=n_tokens,
        first_start_ms=int(entries["start_ms"].min()),
        last_end_ms=int(entries["end_ms"].max()),
        repairs=rep,
    )


def _codes(flags: list[Flag]) -> list[str]:
    return sorted({f.layer for f in flags})


def _one_per_layer(flags: list[Flag]) -> list[Flag]:
    seen: dict[str, Flag] = {}
    for f in flags:
        seen.setdefault(f.layer, f)
    return list(seen.values())


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
