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

Two implementations of one grammar: a vectorised fast path (the UTF-8 bytes split into lines
and classified with Arrow compute kernels and NumPy -- blank; header among the 29-byte lines,
checked byte by byte on a fixed-width matrix that also yields the timestamps; index among the
lines after a blank line -- then the block grammar checked with counts and takes, payloads joined
in C++, and stray ``-->`` found by counting arrows in the whole text against the headers) that accepts only clean files needing no repair, and
a line-by-line path that runs whenever the fast path does not accept and produces the repairs and
the precise error. Both give identical results (property-tested, and the fast path is tested to
accept every clean document). Callers that hold the UTF-8 bytes of the text (a UTF-8 file's raw
bytes) pass them to :func:`parse_to_arrow` and save one encode.
"""

from __future__ import annotations

import re
import struct
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

    Vectorised over lines with Arrow compute kernels and NumPy: split into lines, classify only
    the lines that can matter (headers among the 29-byte lines, as a byte matrix; index lines
    among the lines after a blank line), check the block grammar with counts and takes, join the
    payload lines of each block and read the header fields from the byte matrix. Any doubt returns None and the
    line path decides. Cost: one UTF-8 encode, a few byte counts and about twenty kernels over
    the lines (no per-entry Python objects).
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
    whole = pa.LargeStringArray.from_buffers(
        1, pa.py_buffer(struct.pack("<qq", 0, len(data))), pa.py_buffer(data)
    )
    lines = pc.split_pattern(whole, "\n").flatten()
    if has_cr:
        # only CRLF: every CR must end a line (the last line cannot end with one, see above)
        if pc.sum(pc.ends_with(lines, "\r")).as_py() != data.count(b"\r"):
            return None  # lone CR line breaks: rare, left to the line path
    lines = pc.utf8_rtrim(lines, " \t\r" if has_cr else " \t")
    n = len(lines)
    length = pc.binary_length(lines)
    # headers: exactly 29 bytes and the header pattern, checked on the fixed-width bytes
    cand = pc.indices_nonzero(pc.equal(length, _HEADER_LEN))
    if len(cand) == 0:
        return None
    cand_bytes = _fixed_width(pc.take(lines, cand), _HEADER_LEN)
    ok = _header_ok(np.ascontiguousarray(cand_bytes.T))  # one contiguous row per byte position
    heads = pa.array(np.asarray(cand).astype(np.int64)[ok], pa.int64())
    blocks = len(heads)
    if blocks == 0:
        return None
    hdr_bytes = cand_bytes[ok]
    cols = np.ascontiguousarray(hdr_bytes.T).astype(np.int32) - 48
    nonblank = pc.not_equal(length, 0)
    nb_pos = pc.cast(pc.indices_nonzero(nonblank), pa.int64())
    first, last_line = nb_pos[0].as_py(), nb_pos[-1].as_py() + 1
    if heads[0].as_py() != first + 1:
        return None  # text before the first block, or the first block has no index line
    idx_pos = pc.subtract(heads, 1)
    if blocks > 1 and pc.any(pc.take(nonblank, pc.subtract(heads.slice(1), 2))).as_py():
        return None  # a block not separated from the previous one by a blank line
    # index lines: the digit-only lines that follow a blank line (or open the text) must be
    # exactly the lines before the headers (another one would start a block the grammar rejects)
    after_blank = pc.add(pc.cast(pc.indices_nonzero(pc.invert(nonblank)), pa.int64()), 1)
    after_blank = pa.concat_arrays(
        [pa.array([0], pa.int64()), pc.filter(after_blank, pc.less(after_blank, n))]
    )
    after_lines = pc.take(lines, after_blank)
    idx_found = pc.filter(after_blank, pc.and_(pc.ascii_is_decimal(after_lines),
                                               pc.less_equal(pc.binary_length(after_lines), 18)))
    if len(idx_found) != blocks or not pc.all(pc.equal(idx_found, idx_pos)).as_py():
        return None
    # payload of block b: lines (head_b, last non-blank line before the next block's index line]
    cnt = pc.cumulative_sum(pc.cast(nonblank, pa.int64()))
    next_start = pa.concat_arrays([idx_pos.slice(1), pa.array([last_line], pa.int64())])
    last_nb = pc.take(nb_pos, pc.subtract(pc.take(cnt, pc.subtract(next_start, 1)), 1))
    starts, ends = pc.add(heads, 1), pc.add(last_nb, 1)
    both = pa.concat_arrays([starts, ends])
    ar = pc.cast(pc.indices_nonzero(pc.is_valid(both)), pa.int64())
    offsets = pc.take(both, pc.add(pc.shift_right(ar, 1), pc.multiply(pc.bit_wise_and(ar, 1), blocks)))
    joined = pc.binary_join(pa.LargeListArray.from_arrays(offsets, lines), pa.scalar("\n", pa.large_string()))
    content = pc.take(joined, pc.multiply(pc.cast(pc.indices_nonzero(pc.is_valid(heads)), pa.int64()), 2))
    # every non-blank line is now an index line (digits), a header or a payload line, and a
    # header holds exactly one arrow, so an arrow anywhere but in a header is one more than
    # there are blocks (a missing blank or index line); lines never overlap, so counting the
    # (non-overlapping) occurrences in the whole text is exact
    if data.count(b"-->") != blocks or blocks * _HEADER_LEN >= 2**31:
        return None
    def ms(o: int) -> np.ndarray:  # HH:MM:SS,mmm at byte offset o
        out = np.zeros(blocks, dtype=np.int64)
        for k, w in enumerate(_MS_WEIGHTS):
            if w:
                out += cols[o + k].astype(np.int64) * w
        return out

    timeframe = pa.StringArray.from_buffers(
        blocks, pa.py_buffer(np.arange(0, (blocks + 1) * _HEADER_LEN, _HEADER_LEN, dtype=np.int32)),
        pa.py_buffer(np.ascontiguousarray(hdr_bytes)),
    )
    return pa.Table.from_arrays(
        [
            pc.cast(pc.take(lines, idx_pos), pa.int64()),
            timeframe,
            pa.array(ms(0), pa.int64()),
            pa.array(ms(17), pa.int64()),
            pc.cast(content, pa.string()),
        ],
        schema=_ARROW_SCHEMA,
    )


def _fixed_width(arr: pa.Array, width: int) -> np.ndarray:
    """The bytes of a (large) string array whose every value is ``width`` bytes, as an
    ``(n, width)`` uint8 matrix (values are contiguous in the data buffer after a take)."""
    arr = pc.cast(arr, pa.large_binary()) if not pa.types.is_large_binary(arr.type) else arr
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int64, count=len(arr) + 1, offset=arr.offset * 8)
    data = np.frombuffer(arr.buffers()[2], dtype=np.uint8)
    return data[offsets[0] : offsets[0] + len(arr) * width].reshape(len(arr), width)


#: per byte of a header line: the allowed byte values (``HH:MM:SS,mmm --> HH:MM:SS,mmm``)
_HEADER_ALLOWED = [(b"0123456789" if c == "d" else b"012345" if c == "s" else c.encode())
                   for c in "dd:sd:sd,ddd --> dd:sd:sd,ddd"]


#: milliseconds per byte of ``HH:MM:SS,mmm`` (separators weigh 0)
_MS_WEIGHTS = np.array([36_000_000, 3_600_000, 0, 600_000, 60_000, 0, 10_000, 1_000, 0, 100, 10, 1],
                       dtype=np.int64)


def _header_ok(t: np.ndarray) -> np.ndarray:
    """Which columns of a ``(29, n)`` byte matrix (one row per byte position) are well-formed
    header lines (same as the header regex): two-digit hours, minutes and seconds below 60,
    three-digit milliseconds."""
    ok = np.ones(t.shape[1], dtype=bool)
    for i, allowed in enumerate(_HEADER_ALLOWED):
        if len(allowed) == 1:
            ok &= t[i] == allowed[0]
        else:  # digits: byte - 48 (wrapping below '0') at most 9, or 5 for tens of minutes/seconds
            ok &= (t[i] - np.uint8(48)) <= np.uint8(allowed[-1] - 48)
    return ok


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
