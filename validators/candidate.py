"""Processing one subtitle candidate: decode → strict parse → verification layers → sanitization.

The one processing path of a candidate, pure (no state DB, no files): the ``process`` stage runs
:func:`process_batch` in its workers over jobs of ``Settings.process_batch_tracks`` candidates
(one :class:`TrackOutcome` each: a track row, Arrow-ready columns for entries, flags and
sanitization actions, so the coordinator writes a batch in one transaction; :func:`process_bytes`
is the batch of one) and ``cinesub inspect`` runs :func:`process_candidate` through
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

Speed and memory: one decode and one vectorised parse into Arrow per candidate, then the
verification layers and sanitization once for all candidates of a batch (:func:`verify_runs`:
polars expressions over the batch's entries, handed to polars in record batches of
:data:`CHUNK_ROWS` rows so its kernels work them in parallel; one model call for the language
layer), so the fixed cost of a polars query or a regex compilation is paid per batch, not per
track. No per-entry Python objects; memory is linear in the batch's size.
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
from validators._text import strip_markup, strip_markup_series

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
    #: seconds per step: decode, parse, checks, sanitize (checks and sanitize: the batch's time
    #: divided by its tracks)
    timings: dict[str, float] = field(default_factory=dict)
    #: (words of the sanitized dialogue, first start, last end) once sanitized (:func:`token_count`)
    totals: tuple[int, int, int] | None = None

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
    verify_runs([run], [language], [runtime_min], thresholds, sanitize=sanitize, step=step, totals=False)
    return run


def verify_runs(runs: list[CandidateRun], languages: list[str], runtimes: list[float | None],
                thresholds: Thresholds, *, sanitize: bool = True, step: list[str] | None = None,
                totals: bool = True) -> None:
    """The verification layers and, with ``sanitize``, sanitization of every parsed run of a
    batch (in place), each layer in one vectorised call over all the batch's entries
    (:func:`validators.checks.run_checks_batch`, :func:`validators.sanitize.sanitize_batch`).
    Runs that decoding or parsing stopped are left as they are. ``totals`` (the pipeline's
    per-track words and first/last times, ``run.totals``) is skipped by the single-candidate
    path (`cinesub inspect`), which does not report them. Raises what a step raises;
    sanitization that leaves matches behind is a :class:`RuntimeError`."""
    step = step if step is not None else ["checks"]
    todo = []
    for k, run in enumerate(runs):
        if run.stopped:
            continue
        if run.table.num_rows == 0:  # the parser rejects empty texts; kept as a guard
            run.flags = [Flag(layer="structure", severity="stop", detail="no subtitle entries")]
            run.status, run.stopped = "rejected", True
            continue
        todo.append(k)
    if not todo:
        return
    step[0] = "checks"
    t0 = time.perf_counter()
    tables = [runs[k].table.append_column(checks.TRACK, pa.array([k] * runs[k].table.num_rows, pa.int32()))
              for k in todo]
    table = pa.concat_tables(tables)
    entries = pl.from_arrow(pa.Table.from_batches(table.to_batches(max_chunksize=CHUNK_ROWS),
                                                  schema=table.schema), rechunk=False)
    found = checks.run_checks_batch(entries, {k: (languages[k], runtimes[k]) for k in todo}, thresholds)
    t_checks = (time.perf_counter() - t0) / len(todo)
    for k in todo:
        runs[k].flags = runs[k].flags + found[k]
        runs[k].evaluated = checks.evaluated_layers(runtimes[k])
        runs[k].timings["checks"] = t_checks
    if sanitize:
        step[0] = "sanitize"
        t0 = time.perf_counter()
        san = sanitizing.sanitize_batch(entries, {k: languages[k] for k in todo}, track_column=checks.TRACK)
        if san.residual:
            raise RuntimeError(f"sanitization left matches behind: {san.residual[:5]}")
        t_san = (time.perf_counter() - t0) / len(todo)
        step[0] = "tokens"
        by_track = dict(zip(todo, _split(san.entries, checks.TRACK)))
        logs = dict(_split_keyed(san.log, checks.TRACK))
        empty_log = san.log.clear().drop(checks.TRACK)
        for k in todo:
            runs[k].sanitized = sanitizing.SanitizeResult(by_track[k], logs.get(k, empty_log), [], san.version)
            runs[k].timings["sanitize"] = t_san
        if totals:
            n_words = words_series(san.entries["clean_content"].fill_null(""))
            sums = san.entries.select(checks.TRACK, "start_ms", "end_ms").with_columns(n_words).group_by(
                checks.TRACK, maintain_order=True).agg(
                pl.col(n_words.name).sum(), pl.col("start_ms").min(), pl.col("end_ms").max())
            for k, n_words, first, last in sums.rows():
                runs[k].totals = (int(n_words or 0), int(first), int(last))
    else:
        by_track = dict(zip(todo, _split(entries, checks.TRACK)))
    for k in todo:
        run = runs[k]
        run.entries = by_track[k] if not sanitize else run.sanitized.entries
        run.flags = one_per_layer(run.flags)
        run.status = status_of(run.flags, False)


def _split(frame: pl.DataFrame, key: str) -> list[pl.DataFrame]:
    """The contiguous parts of ``frame`` per ``key`` value, in order, without the key."""
    return [part for _, part in _split_keyed(frame, key)]


def _split_keyed(frame: pl.DataFrame, key: str) -> list[tuple[Any, pl.DataFrame]]:
    lengths = frame.group_by(key, maintain_order=True).len().rows()
    out, offset = [], 0
    body = frame.drop(key)
    for value, n in lengths:
        out.append((value, body.slice(offset, n)))
        offset += n
    return out


def token_count(entries: pl.DataFrame) -> int:
    """Whitespace words of a sanitized track's dialogue (removed entries count as empty): the
    cheap per-candidate ``tracks.n_tokens``; the duration audit's o200k_base tokens are counted
    once per selected track in the cohort stage (validators/duration_audit.py)."""
    return duration_audit.count_words(entries.with_columns(pl.col("clean_content").fill_null("").alias("content")))


def words(text: pl.Expr) -> pl.Expr:
    """Per entry, the words :func:`validators.duration_audit.count_words` counts (its
    expression, for many tracks at once: :func:`token_count` per track)."""
    return strip_markup(text).str.count_matches(r"\S+")


def words_series(text: pl.Series) -> pl.Series:
    """:func:`words` of a column, the markup stripped only where there is some
    (:func:`validators._text.strip_markup_series`); named ``_words``."""
    return strip_markup_series(text).str.count_matches(r"\S+").alias("_words")


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
    module). :func:`process_batch` of one candidate."""
    return process_batch([(raw, language, runtime_min)], thresholds, policy)[0]


def process_batch(
    items: list[tuple[bytes, str, float | None]],
    thresholds: Thresholds,
    policy: str = "default",
) -> list[TrackOutcome]:
    """The outcomes of many candidates (``(raw bytes, language, runtime_min)`` each), in order:
    each is decoded and parsed on its own, then the verification layers and sanitization run
    once for the whole batch (:func:`verify_runs`). Never raises an :class:`Exception` for the
    candidates: one whose decoding or parsing raises is its own ``internal_error`` rejection; when
    the batch step raises, every parsed candidate is verified again on its own, so the exception
    is the rejection of the candidate(s) that raise it alone."""
    outcomes: list[TrackOutcome | None] = [None] * len(items)
    runs: dict[int, CandidateRun] = {}
    for k, (raw, language, _runtime) in enumerate(items):
        step = ["decode"]
        try:
            runs[k] = decode_and_parse(raw, language, policy, step)
        except Exception as exc:  # the safety net: a poison item is a rejection, not a stage failure
            outcomes[k] = internal_error_outcome(type(exc).__name__, str(exc) or repr(exc), step[0])
    order = sorted(runs)
    groups, alone = [order], False
    before = {k: (list(runs[k].flags), runs[k].status, runs[k].stopped) for k in order}
    try:
        verify_runs([runs[k] for k in order], [items[k][1] for k in order], [items[k][2] for k in order],
                    thresholds)
    except Exception:  # one candidate raised: verify each alone (as parsed) to find it
        groups, alone = [[k] for k in order], True
        for k in order:
            runs[k].flags, runs[k].status, runs[k].stopped = before[k]
    for group in groups:
        step = ["checks"]
        try:
            if alone:
                verify_runs([runs[k] for k in group], [items[k][1] for k in group],
                            [items[k][2] for k in group], thresholds, step=step)
            for k in group:
                outcomes[k] = _outcome(runs[k], step)
        except Exception as exc:
            for k in group:
                outcomes[k] = internal_error_outcome(type(exc).__name__, str(exc) or repr(exc), step[0])
    return outcomes  # type: ignore[return-value]


def _outcome(run: CandidateRun, step: list[str]) -> TrackOutcome:
    dec = run.decoded
    if run.entries is None:  # decoding or parsing stopped the track
        return TrackOutcome("rejected", dec.encoding, dec.decoder, run.layers or dec.reasons, run.flags,
                            n_repairs=len(run.repairs), errors=run.errors, repairs=run.repairs)
    step[0] = "tokens"
    assert run.sanitized is not None and run.totals is not None
    return TrackOutcome(
        status=run.status,
        encoding=dec.encoding,
        decoder=dec.decoder,
        reasons=run.layers,
        flags=run.flags,
        entries=run.entries.select(  # position: the 0-based place in the file
            pl.int_range(0, pl.len(), dtype=pl.Int64).alias(c) if c == "position" else pl.col(c)
            for c in ENTRY_OUTPUT_COLUMNS),
        sanitization=run.sanitized.log,
        n_repairs=len(run.repairs),
        n_tokens=run.totals[0],
        first_start_ms=run.totals[1],
        last_end_ms=run.totals[2],
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
