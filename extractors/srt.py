"""Strict SRT ingestion (SPEC A4).

A track is a sequence of blocks; every block has three parts: an index line, a timestamp header
``HH:MM:SS,mmm --> HH:MM:SS,mmm`` and a payload. Anything else stops the track: the result has
``status="rejected"`` and one :class:`~cinesub.records.ParseError` (line number, the line's text,
layer ``timestamp_syntax`` or ``structure``). Nothing is ever skipped silently.

Documented handling (the *normalisation* that ``compose(parse(x))`` reproduces):

* **BOM** — one leading U+FEFF is removed (the decoder normally removed it already).
* **Line ends** — ``\\r\\n``, ``\\n`` and a lone ``\\r`` are all line breaks; nothing else is
  (U+0085 NEL, U+2028 are ordinary characters, so cp1252 ``…`` mis-decoded as NEL cannot split a
  line). Line numbers in errors and repairs are 1-based over lines split this way.
* **Trailing spaces** — spaces and tabs at the end of every line are removed; a line holding only
  spaces/tabs is a blank line. Leading whitespace is kept in payloads, but an index or header line
  with leading whitespace is malformed.
* **Index line** — ASCII digits only (1–18 digits, so it fits int64); leading zeros are accepted
  and the index is kept as the integer (``007`` composes back as ``7``). Indices are never
  renumbered: duplicates and non-sequential numbers are kept as found.
* **Header** — exactly ``HH:MM:SS,mmm --> HH:MM:SS,mmm`` (two-digit hours, minutes and seconds
  below 60, three-digit milliseconds, one space each side of the arrow). The only repair is the
  millisecond separator: ``HH:MM:SS:mmm`` and ``HH:MM:SS.mmm`` become ``HH:MM:SS,mmm``, each
  recorded as a :class:`~cinesub.records.Repair` (line, before, after). Every other deviation
  (one-digit hour, two-digit milliseconds, missing milliseconds, stray characters, position
  coordinates after the end time, another arrow) is a ``timestamp_syntax`` error. A line after an
  index line that does not look like a timestamp at all is a ``structure`` error.
* **Payload** — the lines after the header up to the next blank line, joined with ``\\n``; tags
  (``<i>``, ``<font>``, ``{\\an8}``) are kept verbatim. A payload may be empty.
* **Blank lines inside a payload** — after one or more blank lines, the next non-blank line
  starts a new block when it is an index line (digits only) or when it or the line after it
  contains ``-->``; otherwise it continues the current payload and the blank lines are kept in
  the content. Blank lines before the first block and between blocks are separators (any number
  of them composes back as one).
* **Arrows in payloads** — a payload line containing ``-->`` is a ``structure`` error (a header
  whose index line or separating blank line is missing); dialogue never contains SRT arrows.
* **Missing final blank line** — accepted; ``compose`` always ends the text with one ``\\n``.
* **Empty text** (or only blank lines) — rejected, ``structure`` ("no subtitle block").

Entries of a rejected result are the blocks read before the error, for inspection only.

Two implementations of one grammar: a vectorised fast path (NumPy over the UTF-8 bytes: trailing
blanks dropped with one mask, lines as the spans between line feeds; headers among the 29-byte
lines, checked byte by byte on a fixed-width matrix that also yields the timestamps; index lines
among the lines after a blank line; the block grammar checked with counts and takes; each
payload one span of the cleaned bytes, copied out with one Arrow take; stray ``-->`` found by
counting arrows in the whole text against the headers) that accepts only clean files needing no
repair, and a line-by-line path that runs whenever the fast path does not accept and produces
the repairs and the precise error. Both give identical results (property-tested, and the fast
path is tested to accept every clean document). Callers that hold the UTF-8 bytes of the text
(a UTF-8 file's raw bytes) pass them to :func:`parse_to_arrow` and save one encode.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from cinesub.records import PARSED_ENTRY_SCHEMA, Entry, ParseError, ParseResult, Repair

__all__ = ["parse", "parse_to_arrow", "compose", "normalise", "ENTRY_COLUMNS", "timestamp_ms"]

ENTRY_COLUMNS = tuple(PARSED_ENTRY_SCHEMA.names)
_ARROW_SCHEMA = PARSED_ENTRY_SCHEMA

_LINE_SPLIT = re.compile(r"\r\n|\r|\n")
_INDEX_RE = re.compile(r"[0-9]{1,18}")
_TS = r"([0-9]{2}):([0-5][0-9]):([0-5][0-9]),([0-9]{3})"
_HEADER_RE = re.compile(_TS + " --> " + _TS)
_REPAIR_RE = re.compile(
    r"([0-9]{2}:[0-9]{2}:[0-9]{2})[,.:]([0-9]{3}) --> ([0-9]{2}:[0-9]{2}:[0-9]{2})[,.:]([0-9]{3})"
)
_TIMESTAMP_LIKE = re.compile(r"[0-9]+\s*:\s*[0-9]")

_HEADER_LEN = 29  # bytes of a well-formed header line


def timestamp_ms(h: str, m: str, s: str, ms: str) -> int:
    return ((int(h) * 60 + int(m)) * 60 + int(s)) * 1000 + int(ms)


# --------------------------------------------------------------------------------------------
# normalisation shared by both paths
# --------------------------------------------------------------------------------------------
def normalise(text: str) -> str:
    """The documented normal form of an *accepted* SRT text: ``compose(parse(text).entries)``.

    Provided for tests and for callers that want to store the canonical text.
    """
    return compose(parse(text).entries)


# --------------------------------------------------------------------------------------------
# line-by-line path (authoritative for errors and repairs)
# --------------------------------------------------------------------------------------------
def _parse_lines(text: str) -> tuple[list[tuple[int, str, int, int, str]], list[Repair], list[ParseError]]:
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = [ln.rstrip(" \t") for ln in _LINE_SPLIT.split(text)]
    n = len(lines)
    rows: list[tuple[int, str, int, int, str]] = []
    repairs: list[Repair] = []

    def fail(i: int, layer: str, detail: str):
        line_text = lines[i] if 0 <= i < n else ""
        return rows, repairs, [ParseError(line=i + 1, text=line_text, layer=layer, detail=detail)]

    i = 0
    while i < n and lines[i] == "":
        i += 1
    if i >= n:
        return rows, repairs, [
            ParseError(line=1, text="", layer="structure", detail="empty: no subtitle block")
        ]
    while i < n:
        line = lines[i]
        if "-->" in line:
            return fail(i, "structure", "timestamp header without an index line")
        if not _INDEX_RE.fullmatch(line):
            if i + 1 < n and "-->" in lines[i + 1]:
                return fail(i, "structure", "index line is not an integer")
            return fail(i, "structure", "text outside a block (expected an index line)")
        if i + 1 >= n or lines[i + 1] == "":
            return fail(i, "structure", "index line not followed by a timestamp header")
        header = lines[i + 1]
        m = _HEADER_RE.fullmatch(header)
        timeframe = header
        if m is None:
            r = _REPAIR_RE.fullmatch(header)
            if r is not None:
                fixed = f"{r[1]},{r[2]} --> {r[3]},{r[4]}"
                m = _HEADER_RE.fullmatch(fixed)
                if m is not None:
                    repairs.append(Repair(line=i + 2, before=header, after=fixed))
                    timeframe = fixed
            if m is None:
                if "-->" in header or _TIMESTAMP_LIKE.match(header):
                    return fail(
                        i + 1, "timestamp_syntax", "header does not match HH:MM:SS,mmm --> HH:MM:SS,mmm"
                    )
                return fail(i + 1, "structure", "index line not followed by a timestamp header")
        g = m.groups()
        start = timestamp_ms(g[0], g[1], g[2], g[3])
        end = timestamp_ms(g[4], g[5], g[6], g[7])
        j = i + 2
        payload: list[str] = []
        while True:
            while j < n and lines[j] != "":
                if "-->" in lines[j]:
                    return fail(
                        j,
                        "structure",
                        "timestamp-like line ('-->') inside a payload: missing blank line or index line",
                    )
                payload.append(lines[j])
                j += 1
            k = j
            while k < n and lines[k] == "":
                k += 1
            if k >= n:
                break
            nxt = lines[k]
            if "-->" in nxt or _INDEX_RE.fullmatch(nxt) or (k + 1 < n and "-->" in lines[k + 1]):
                break
            payload.extend([""] * (k - j))
            j = k
        rows.append((int(line), timeframe, start, end, "\n".join(payload)))
        i = k
    return rows, repairs, []


def _rows_to_table(rows: list[tuple[int, str, int, int, str]]) -> pa.Table:
    if not rows:
        return _ARROW_SCHEMA.empty_table()
    cols = list(zip(*rows))
    return pa.Table.from_arrays(
        [pa.array(cols[c], type=_ARROW_SCHEMA.field(c).type) for c in range(5)], schema=_ARROW_SCHEMA
    )


# --------------------------------------------------------------------------------------------
# fast path
# --------------------------------------------------------------------------------------------
def _fast_table(text: str, utf8: bytes | None = None) -> pa.Table | None:
    """The entries table when the text is a clean SRT needing no repair, else None.

    Vectorised with NumPy over the UTF-8 bytes: trailing spaces/tabs (and the CR of CRLF) are
    dropped with one mask, lines are the spans between ``\n`` bytes, headers are checked among
    the 29-byte lines on a byte matrix that also yields the timestamps, index lines among the
    lines after a blank line (Arrow's ``ascii_is_decimal``), the block grammar is checked with
    counts and takes, and each payload is one contiguous span of the cleaned bytes (its lines
    joined by their ``\n``), all copied out by one take (:func:`_spans`). Any doubt returns None
    and the line path decides. No per-entry Python objects.
    """
    if utf8 is not None:  # the caller's UTF-8 bytes of text (parse_to_arrow)
        data = utf8[3:] if text.startswith("\ufeff") else utf8
    else:
        if text.startswith("\ufeff"):
            text = text[1:]
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:
            return None
    if not data:
        return None
    has_cr = b"\r" in data
    if has_cr and data.endswith(b"\r"):
        return None  # a lone CR ends the text
    if len(data) >= 2**31:
        return None  # beyond 32-bit string offsets: the line path
    a = np.frombuffer(data, dtype=np.uint8)
    size = len(a)
    nl = np.flatnonzero(a == 10)
    if has_cr:
        # only CRLF: every CR must end a line (the last byte is no CR, see above)
        if np.count_nonzero(a[nl[nl > 0] - 1] == 13) != data.count(b"\r"):
            return None  # lone CR line breaks: rare, left to the line path
    # trailing spaces/tabs (and CRs) of every line: walk back from each line end while blank
    trailing = []
    ends = np.concatenate((nl, [size]))
    step = ends - 1
    while len(step):
        step = step[step >= 0]
        b = a[step]
        step = step[(b == 32) | (b == 9) | (b == 13)] if has_cr else step[(b == 32) | (b == 9)]
        if len(step):
            trailing.append(step)
            step = step - 1
    if trailing:
        keep = np.ones(size, dtype=bool)
        keep[np.concatenate(trailing)] = False
        a = a[keep]
        size = len(a)
        nl = np.flatnonzero(a == 10)
    line_start = np.concatenate(([0], nl + 1))
    line_end = np.concatenate((nl, [size]))
    n = len(line_start)
    length = line_end - line_start
    # headers: exactly 29 bytes and the header pattern, checked on the fixed-width bytes
    cand = np.flatnonzero(length == _HEADER_LEN)
    if len(cand) == 0:
        return None
    rows = np.lib.stride_tricks.sliding_window_view(a, _HEADER_LEN)[line_start[cand]]  # (m, 29) bytes
    ok = _header_ok(rows)
    heads = cand[ok]
    blocks = len(heads)
    if blocks == 0:
        return None
    rows = rows[ok]
    cols = rows.T.astype(np.int64) - 48
    nonblank = length != 0
    nb_pos = np.flatnonzero(nonblank)
    first, last_line = int(nb_pos[0]), int(nb_pos[-1]) + 1
    if heads[0] != first + 1:
        return None  # text before the first block, or the first block has no index line
    idx_pos = heads - 1
    if blocks > 1 and nonblank[heads[1:] - 2].any():
        return None  # a block not separated from the previous one by a blank line
    # index lines: the digit-only lines (1-18 ASCII digits) that follow a blank line (or open the
    # text) must be exactly the lines before the headers (another one would start a block the
    # grammar rejects)
    after_blank = np.flatnonzero(~nonblank) + 1
    after_blank = np.concatenate(([0], after_blank[after_blank < n]))
    after_lines = _spans(a, line_start[after_blank], line_end[after_blank])
    is_index = pc.and_(pc.ascii_is_decimal(after_lines), pc.less_equal(pc.binary_length(after_lines), 18))
    idx_found = after_blank[is_index.to_numpy(zero_copy_only=False)]
    if len(idx_found) != blocks or np.any(idx_found != idx_pos):
        return None
    # payload of block b: lines (head_b, last non-blank line before the next block's index line]
    cnt = np.cumsum(nonblank)
    next_start = np.concatenate((idx_pos[1:], [last_line]))
    last_nb = nb_pos[cnt[next_start - 1] - 1]
    starts, ends = heads + 1, last_nb + 1
    has_payload = ends > starts
    # the payload's bytes, or (empty payload) the end of the header line: ascending, disjoint
    lo = np.where(has_payload, line_start[np.minimum(starts, n - 1)], line_end[heads])
    hi = np.where(has_payload, line_end[ends - 1], line_end[heads])
    # every non-blank line is now an index line (digits), a header or a payload line, and a
    # header holds exactly one arrow, so an arrow anywhere but in a header is one more than
    # there are blocks (a missing blank or index line); lines never overlap, so counting the
    # (non-overlapping) occurrences in the whole text is exact
    if data.count(b"-->") != blocks or blocks * _HEADER_LEN >= 2**31:
        return None
    content = _spans(a, lo, hi)

    def ms(o: int) -> np.ndarray:  # HH:MM:SS,mmm at byte offset o
        return _MS_WEIGHTS @ cols[o:o + len(_MS_WEIGHTS)]

    timeframe = pa.StringArray.from_buffers(
        blocks, pa.py_buffer(np.arange(0, (blocks + 1) * _HEADER_LEN, _HEADER_LEN, dtype=np.int32)),
        pa.py_buffer(np.ascontiguousarray(rows)),
    )
    return pa.Table.from_arrays(
        [
            pc.cast(_spans(a, line_start[idx_pos], line_end[idx_pos]), pa.int64()),
            timeframe,
            pa.array(ms(0), pa.int64()),
            pa.array(ms(17), pa.int64()),
            content,
        ],
        schema=_ARROW_SCHEMA,
    )


def _spans(a: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> pa.StringArray:
    """The strings ``a[lo[i]:hi[i]]`` (ascending, disjoint spans of the UTF-8 bytes ``a``, each
    at character boundaries): the spans and the gaps between them are consecutive values of one
    string array over ``a``; taking every other value copies the spans out."""
    if len(lo) == 0:
        return pa.array([], pa.string())
    bounds = np.empty(2 * len(lo), dtype=np.int32)
    bounds[0::2], bounds[1::2] = lo, hi
    values = pa.StringArray.from_buffers(2 * len(lo) - 1, pa.py_buffer(bounds), pa.py_buffer(a))
    return values.take(pa.array(np.arange(0, 2 * len(lo), 2, dtype=np.int64)))


#: per byte of a header line: the allowed byte values (``HH:MM:SS,mmm --> HH:MM:SS,mmm``)
_HEADER_ALLOWED = [(b"0123456789" if c == "d" else b"012345" if c == "s" else c.encode())
                   for c in "dd:sd:sd,ddd --> dd:sd:sd,ddd"]


#: milliseconds per byte of ``HH:MM:SS,mmm`` (separators weigh 0)
_MS_WEIGHTS = np.array([36_000_000, 3_600_000, 0, 600_000, 60_000, 0, 10_000, 1_000, 0, 100, 10, 1],
                       dtype=np.int64)


#: per byte of a header line: the lowest allowed byte and how far above it the byte may be
_HEADER_LOW = np.array([a[0] for a in _HEADER_ALLOWED], dtype=np.uint8)
_HEADER_SPAN = np.array([a[-1] - a[0] for a in _HEADER_ALLOWED], dtype=np.uint8)


def _header_ok(rows: np.ndarray) -> np.ndarray:
    """Which rows of an ``(n, 29)`` byte matrix (one line per row) are well-formed header lines
    (same as the header regex): two-digit hours, minutes and seconds below 60, three-digit
    milliseconds. (Byte - lowest allowed byte, wrapping below it, at most the span.)"""
    return np.all((rows - _HEADER_LOW) <= _HEADER_SPAN, axis=1)


# --------------------------------------------------------------------------------------------
# public API
# --------------------------------------------------------------------------------------------
def parse_to_arrow(
    text: str, utf8: bytes | None = None
) -> tuple[pa.Table, list[Repair], list[ParseError], str]:
    """Strict parse into an Arrow table (columns ``index, timeframe, start_ms, end_ms, content``).

    Returns ``(table, repairs, errors, status)``; ``status`` is ``"ok"`` or ``"rejected"``.
    Memory is linear in the text size; clean files never build per-entry Python objects.
    ``utf8``: optionally ``text.encode("utf-8")`` when the caller already has those bytes (the
    raw bytes of a UTF-8 file, see :func:`extractors.decode.utf8_bytes`); saves one encode.
    """
    table = _fast_table(text, utf8)
    if table is not None:
        return table, [], [], "ok"
    rows, repairs, errors = _parse_lines(text)
    return _rows_to_table(rows), repairs, errors, ("rejected" if errors else "ok")


def parse(text: str) -> ParseResult:
    """Strict parse into a :class:`~cinesub.records.ParseResult` (see the module docstring)."""
    table = _fast_table(text)
    if table is not None:
        cols = [table.column(c).to_pylist() for c in ENTRY_COLUMNS]
        entries = [
            Entry.model_construct(index=i, timeframe=t, start_ms=s, end_ms=e, content=c)
            for i, t, s, e, c in zip(*cols)
        ]
        return ParseResult.model_construct(status="ok", entries=entries, repairs=[], errors=[])
    rows, repairs, errors = _parse_lines(text)
    entries = [
        Entry.model_construct(index=i, timeframe=t, start_ms=s, end_ms=e, content=c)
        for i, t, s, e, c in rows
    ]
    return ParseResult.model_construct(
        status="rejected" if errors else "ok", entries=entries, repairs=repairs, errors=errors
    )


def compose(entries: Iterable[Entry | dict[str, Any]]) -> str:
    """SRT text of entries: ``index\\nheader[\\ncontent]`` blocks separated by one blank line,
    LF line ends, ending with one ``\\n`` (empty string for no entries)."""
    blocks = []
    for e in entries:
        if isinstance(e, dict):
            index, timeframe, content = e["index"], e["timeframe"], e["content"]
        else:
            index, timeframe, content = e.index, e.timeframe, e.content
        blocks.append(f"{index}\n{timeframe}\n{content}" if content else f"{index}\n{timeframe}")
    return "\n\n".join(blocks) + "\n" if blocks else ""
