"""Issue 14 point 10 (fuzz half): the processing of one candidate (validators.candidate.
process_bytes: unpack, decode, strict parse, checks, sanitization) under mutated real files,
mutated generated files (plain, BOM, UTF-16, legacy code pages, gzip, zip) and random bytes.

For every input: no exception escapes, ``internal_error`` (the safety net) never fires -- a
failure here is a bug to fix, not a pass -- a rejection carries a reason code, and every accepted
(ok or flagged) track is a faithful parse of the decoded text, checked by an independent walk
over its lines: each entry's index line (never renumbered), header (only the documented
millisecond-separator repair) and payload lines are there in file order, and nothing but blank
lines is left over (nothing silently dropped). Sanitization loses nothing silently either:
every entry it changed or removed has its audit-log row.

Bounded and deterministic: hypothesis with ``derandomize=True`` (fixed seed), no example
database, a fixed number of examples per test (well under 60 s on a loaded machine)."""

from __future__ import annotations

import bz2
import gzip
import io
import os
import re
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from cinesub.settings import Thresholds
from extractors.decode import decode
from validators.candidate import INTERNAL_ERROR, process_bytes

_BASE = settings(derandomize=True, database=None, deadline=None, print_blob=True,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def fuzz(examples: int) -> settings:
    """The fixed-seed, bounded settings of these tests with ``examples`` examples."""
    return settings(_BASE, max_examples=examples)
TH = Thresholds()
LANGS = ("en", "ar", "id", "fa", "ro", "vi")
REALDATA_SRT = Path(os.environ.get("CINESUB_SHARED", Path(__file__).resolve().parent.parent.parent / "shared")
                    ) / "realdata" / "srt"  # as tests/conftest.py finds it

_SPLIT = re.compile(r"\r\n|\r|\n")
_HEADER = re.compile(r"(\d\d):(\d\d):(\d\d)[,.:](\d\d\d) --> (\d\d):(\d\d):(\d\d)[,.:](\d\d\d)")

LINES = {
    "en": ["Where were you last night?", "I was at home, reading.", "<i>Nobody saw you.</i>", "- Go!\n- Now?"],
    "ar": ["مرحباً، كيف حالك اليوم؟", "أنا بخير، شكراً لسؤالك.", "هل رأيت السيارة؟"],
    "fa": ["کجا بودی دیشب؟", "من خانه بودم و کتاب می‌خواندم.", "هیچ‌کس تو را ندید."],
    "id": ["Di mana kau semalam?", "Aku di rumah, membaca buku.", "Tidak ada yang melihatmu."],
    "ro": ["Unde ai fost aseară?", "Am stat acasă și am citit.", "Nimeni nu te-a văzut acolo."],
    "vi": ["Tối qua anh ở đâu?", "Tôi ở nhà, đọc sách bên lò sưởi.", "Không ai thấy anh ở đó."],
}
CODECS = {"en": ["cp1252"], "ar": ["cp1256"], "fa": ["cp1256"], "id": ["cp1252"], "ro": ["cp1250", "iso8859_16"],
          "vi": ["cp1258"]}


# --------------------------------------------------------------------------------------------
# the properties
# --------------------------------------------------------------------------------------------
def check(raw: bytes, language: str):
    """The properties of the module docstring for one input; returns the outcome."""
    out = process_bytes(raw, language, 2, TH)  # must not raise
    event(f"{out.status}: {','.join(out.reasons)}")
    assert INTERNAL_ERROR not in out.reasons and out.error_type is None, \
        f"the safety net fired: {out.error_type}: {out.error_detail}"
    assert out.status in ("ok", "flagged", "rejected")
    if out.status == "rejected":
        assert out.reasons, "a rejection without a reason code"
        return out
    assert all(f.severity == "review" for f in out.flags)
    text = decode(raw, language).text
    assert text is not None
    assert_faithful(text, out.entries)
    assert_sanitization_logged(out.entries, out.sanitization)
    return out


def assert_faithful(text: str, entries) -> None:
    """An independent walk: the entries, in order, are exactly the blocks of ``text``."""
    lines = [ln.rstrip(" \t") for ln in _SPLIT.split(text[1:] if text.startswith("\ufeff") else text)]
    rows = entries.select("index", "timeframe", "start_ms", "end_ms", "content").rows()
    assert rows, "an accepted track without entries"
    at = 0
    for index, timeframe, start, end, content in rows:
        while at < len(lines) and lines[at] == "":
            at += 1
        assert at + 1 < len(lines), f"entry {index} is not in the text"
        assert lines[at].isascii() and lines[at].isdigit() and int(lines[at]) == index, \
            f"line {at + 1}: index {lines[at]!r} read as {index}"
        header = lines[at + 1]
        m = _HEADER.fullmatch(header)
        assert m and timeframe == f"{m[1]}:{m[2]}:{m[3]},{m[4]} --> {m[5]}:{m[6]}:{m[7]},{m[8]}", \
            f"line {at + 2}: header {header!r} read as {timeframe!r}"
        g = [int(x) for x in m.groups()]
        assert (start, end) == (((g[0] * 60 + g[1]) * 60 + g[2]) * 1000 + g[3],
                                ((g[4] * 60 + g[5]) * 60 + g[6]) * 1000 + g[7])
        payload = content.split("\n") if content != "" else []
        assert lines[at + 2: at + 2 + len(payload)] == payload, f"entry {index}: payload differs from the text"
        at += 2 + len(payload)
        assert at >= len(lines) or lines[at] == "", f"entry {index}: text after its payload was dropped"
    assert all(ln == "" for ln in lines[at:]), "text after the last entry was dropped"


def assert_sanitization_logged(entries, log) -> None:
    changed = entries.filter(entries["clean_content"].is_null() | (entries["clean_content"] != entries["content"]))
    logged = set() if log is None else set(log["index"].to_list())
    assert set(changed["index"].to_list()) <= logged, "sanitization changed an entry without a log row"
    removed = set(entries.filter(entries["clean_content"].is_null())["index"].to_list())
    if log is not None and removed:
        assert removed <= set(log.filter(log["action"] == "removed")["index"].to_list())


# --------------------------------------------------------------------------------------------
# inputs
# --------------------------------------------------------------------------------------------
def ts(ms: int) -> str:
    return f"{ms // 3_600_000:02d}:{ms // 60_000 % 60:02d}:{ms // 1000 % 60:02d},{ms % 1000:03d}"


@st.composite
def srt_documents(draw) -> tuple[str, str]:
    """(language, SRT text): well-formed blocks with the lines of the language, odd indices
    (gaps, leading zeros, duplicates), tags, blank lines inside payloads and either line end."""
    lang = draw(st.sampled_from(LANGS))
    n = draw(st.integers(1, 40))
    blocks, t, index = [], draw(st.integers(0, 5000)), 0
    for _ in range(n):
        index += draw(st.sampled_from([1, 1, 1, 0, 2, 7]))
        start = t + draw(st.integers(0, 4000))
        end = start + draw(st.integers(0, 6000))
        t = end
        text = draw(st.lists(st.sampled_from(LINES[lang]), min_size=0, max_size=3))
        body = "\n".join(text) if not draw(st.integers(0, 9)) == 0 else "\n\n".join(text)
        idx = draw(st.sampled_from(["{}", "{}", "0{}"])).format(index)
        blocks.append(f"{idx}\n{ts(start)} --> {ts(end)}\n{body}".rstrip("\n"))
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    return lang, ("\n\n".join(blocks) + "\n").replace("\n", eol)


WRAPS = ("gzip", "gzip2", "bz2", "zip", "zip", "zip_bzip2", "zip_lzma")


def encode(draw, lang: str, text: str, wraps: tuple[str, ...] = ("none", "none", "none", *WRAPS)) -> bytes:
    codec = draw(st.sampled_from(["utf-8", "utf-8-sig", "utf-16", *CODECS[lang]]))
    raw = text.encode(codec, errors="replace")
    wrap = draw(st.sampled_from(wraps))
    if wrap == "gzip":
        raw = gzip.compress(raw, mtime=0)
    elif wrap == "gzip2":  # a multi-member gzip: both members are the track
        half = len(raw) // 2
        raw = gzip.compress(raw[:half], mtime=0) + gzip.compress(raw[half:], mtime=0)
    elif wrap == "bz2":
        raw = bz2.compress(raw)
    elif wrap.startswith("zip"):
        method = {"zip": zipfile.ZIP_DEFLATED, "zip_bzip2": zipfile.ZIP_BZIP2, "zip_lzma": zipfile.ZIP_LZMA}[wrap]
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", method) as z:
            z.writestr("track.srt", raw)
        raw = buf.getvalue()
    return raw


def zip_name_flagged_utf8(data: bytearray) -> None:
    """Issue 14's poison zip: the entry name flagged UTF-8 (bit 11) but not UTF-8."""
    for sig, flag_at, name_at in ((b"PK\x03\x04", 6, 30), (b"PK\x01\x02", 8, 46)):
        at = data.find(sig)
        if at >= 0 and at + name_at < len(data):
            data[at + flag_at] |= 0x00
            data[at + flag_at + 1] |= 0x08
            data[at + name_at] = 0xFF


def mutate(draw, raw: bytes) -> bytes:
    """A few byte-level edits: flips, insertions (random or SRT-ish), deletions, duplication,
    truncation."""
    data = bytearray(raw)
    for _ in range(draw(st.integers(0, 4))):
        op = draw(st.sampled_from(["flip", "insert", "delete", "dup", "truncate", "zip_name"]))
        pos = draw(st.integers(0, len(data)))
        if op == "zip_name":
            zip_name_flagged_utf8(data)
        elif op == "flip" and pos < len(data):
            data[pos] = draw(st.integers(0, 255))
        elif op == "insert":
            data[pos:pos] = draw(st.one_of(
                st.binary(min_size=1, max_size=8),
                st.sampled_from([b"\n", b"\r", b"\n\n", b" --> ", b"-->", b"00:00:01,000", b"\xef\xbb\xbf",
                                 b"\x00", b"12\n", b"\xff\xfe", b"PK\x03\x04", b"\x1f\x8b"])))
        elif op == "delete":
            del data[pos:pos + draw(st.integers(1, 16))]
        elif op == "dup":
            data[pos:pos] = data[pos:pos + draw(st.integers(1, 64))]
        elif op == "truncate":
            del data[pos:]
    return bytes(data)


# --------------------------------------------------------------------------------------------
# the fuzz tests
# --------------------------------------------------------------------------------------------
@fuzz(150)
@given(st.binary(max_size=2048), st.sampled_from(LANGS))
def test_random_bytes_never_escape(raw, language):
    check(raw, language)


@fuzz(50)
@given(st.data())
def test_mutated_generated_tracks(data):
    lang, text = data.draw(srt_documents())
    raw = encode(data.draw, lang, text)
    check(mutate(data.draw, raw), lang)


@fuzz(20)
@given(st.data())
def test_generated_tracks_unmutated_are_read_exactly(data):
    """Unmutated, in an encoding that names itself (UTF-8 with or without BOM, UTF-16 with
    BOM), an accepted track's entries are exactly the generated ones."""
    lang, text = data.draw(srt_documents())
    codec = data.draw(st.sampled_from(["utf-8", "utf-8-sig", "utf-16"]))
    raw = text.encode(codec)
    if check(raw, lang).status != "rejected":
        assert decode(raw, lang).text.lstrip("\ufeff") == text


@fuzz(30)
@given(st.data())
def test_mutated_archives(data):
    """Every container the decoder unpacks, its headers damaged (issue 14's UTF-8-flagged entry
    name among the edits)."""
    lang, text = data.draw(srt_documents())
    raw = bytearray(encode(data.draw, lang, text, wraps=WRAPS))
    if data.draw(st.booleans()):
        zip_name_flagged_utf8(raw)
    check(mutate(data.draw, bytes(raw)), lang)


def _real_files() -> list[Path]:
    return sorted(p for p in REALDATA_SRT.glob("*/*.srt") if not p.parent.name.startswith("_"))


@pytest.mark.realdata
@fuzz(40)
@given(st.data())
def test_mutated_real_files(data):
    files = _real_files()
    assert len(files) >= 20, f"expected the real subtitle files under {REALDATA_SRT}"
    path = data.draw(st.sampled_from(files))
    lang = path.name.split("__")[0]
    lang = lang if lang in LANGS else "en"
    raw = path.read_bytes()
    # a window of the file (whole files are slow to check): from the start, up to 24 KB
    raw = raw[: data.draw(st.integers(min_value=min(len(raw), 2000), max_value=min(len(raw), 24_000)))]
    check(mutate(data.draw, raw), lang)
