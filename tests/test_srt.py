"""Strict SRT parser (SPEC A4): every documented rule, the real-world defect patterns, property
tests (never crashes, round-trips, fast path == line path) and every real file."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from extractors import srt
from extractors.decode import decode

H1 = "00:00:01,000 --> 00:00:02,500"
H2 = "00:00:03,000 --> 00:00:04,000"
H3 = "01:02:03,004 --> 01:02:05,006"


def both(text: str):
    """parse() and parse_to_arrow() agree on every input; returns parse()'s result."""
    res = srt.parse(text)
    table, repairs, errors, status = srt.parse_to_arrow(text)
    assert status == res.status
    assert table.to_pylist() == [e.model_dump() for e in res.entries]
    assert repairs == res.repairs
    assert errors == res.errors
    rows, repairs2, errors2 = srt._parse_lines(text)
    assert [dict(zip(srt.ENTRY_COLUMNS, r)) for r in rows] == table.to_pylist()
    assert (repairs2, errors2) == (repairs, errors)
    try:
        utf8 = text.encode("utf-8")
    except UnicodeEncodeError:
        utf8 = None
    if utf8 is not None:  # the caller's bytes instead of an encode: same result
        table2, repairs3, errors3, status2 = srt.parse_to_arrow(text, utf8)
        assert (table2.to_pylist(), repairs3, errors3, status2) == (table.to_pylist(), repairs, errors, status)
    return res


def ok(text: str):
    res = both(text)
    assert res.status == "ok", res.errors
    assert res.errors == []
    return res


def rejected(text: str, layer: str, line: int | None = None):
    res = both(text)
    assert res.status == "rejected"
    assert len(res.errors) == 1
    err = res.errors[0]
    assert err.layer == layer, err
    if line is not None:
        assert err.line == line, err
    return err


# --------------------------------------------------------------------------------------------
# the three parts of a block
# --------------------------------------------------------------------------------------------
def test_basic_blocks_keep_index_timeframe_content_and_ms():
    res = ok(f"1\n{H1}\nHello <i>there</i>\n{{\\an8}}General Kenobi\n\n2\n{H3}\n- Yes.\n- No.\n")
    a, b = res.entries
    assert (a.index, a.timeframe, a.start_ms, a.end_ms) == (1, H1, 1000, 2500)
    assert a.content == "Hello <i>there</i>\n{\\an8}General Kenobi"
    assert (b.index, b.start_ms, b.end_ms) == (2, 3723004, 3725006)
    assert b.content == "- Yes.\n- No."


def test_indices_never_renumbered_duplicates_and_gaps_kept():
    res = ok(f"5\n{H1}\na\n\n5\n{H2}\nb\n\n2\n{H3}\nc\n\n007\n{H3}\nd\n")
    assert [e.index for e in res.entries] == [5, 5, 2, 7]


def test_end_before_start_is_not_a_parse_error():
    res = ok("1\n00:00:05,000 --> 00:00:01,000\nbackwards\n")
    assert res.entries[0].start_ms > res.entries[0].end_ms  # chronology is a validator's flag


def test_empty_payload_allowed():
    res = ok(f"1\n{H1}\n\n2\n{H2}\ntext\n")
    assert [e.content for e in res.entries] == ["", "text"]


# --------------------------------------------------------------------------------------------
# documented normalisation
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("eol", ["\n", "\r\n", "\r"])
def test_line_endings(eol):
    text = eol.join(["1", H1, "a", "b", "", "2", H2, "c", ""])
    res = ok(text)
    assert [e.content for e in res.entries] == ["a\nb", "c"]


def test_mixed_line_endings_and_bom():
    res = ok(f"\ufeff1\r\n{H1}\r\na\nb\r\r\n2\n{H2}\rc")
    assert [e.content for e in res.entries] == ["a\nb", "c"]


def test_trailing_spaces_removed_and_whitespace_only_line_is_blank():
    res = ok(f"1  \n{H1} \t\nHello  \n \t \n2\n{H2}\nx\n")
    assert res.entries[0].content == "Hello"
    assert res.entries[0].timeframe == H1


def test_missing_final_blank_line_and_no_final_newline():
    assert ok(f"1\n{H1}\nlast line").entries[0].content == "last line"


def test_leading_and_repeated_blank_lines_are_separators():
    res = ok(f"\n\n\n1\n{H1}\na\n\n\n\n2\n{H2}\nb\n\n\n")
    assert [e.content for e in res.entries] == ["a", "b"]
    assert srt.compose(res.entries) == f"1\n{H1}\na\n\n2\n{H2}\nb\n"


def test_blank_line_inside_payload_kept_when_next_line_is_not_a_block():
    res = ok(f"1\n{H1}\nfirst\n\n\nsecond part\n\n2\n{H2}\nx\n")
    assert res.entries[0].content == "first\n\n\nsecond part"
    assert len(res.entries) == 2


def test_payload_starting_after_blank_line():
    res = ok(f"1\n{H1}\n\nlate text\n\n2\n{H2}\nx\n")
    assert res.entries[0].content == "\nlate text"
    assert srt.parse(srt.compose(res.entries)).entries == res.entries


def test_numeric_line_inside_payload_without_blank_line_is_text():
    res = ok(f"1\n{H1}\nThe year was\n1984\n\n2\n{H2}\nx\n")
    assert res.entries[0].content == "The year was\n1984"


def test_nel_and_line_separator_are_not_line_breaks():
    res = ok(f"1\n{H1}\nwait\x85 what\u2028now\n")
    assert res.entries[0].content == "wait\x85 what\u2028now"


def test_unicode_digits_are_not_indices():
    err = rejected(f"\u0661\n{H1}\ntext\n", "structure", line=1)
    assert "integer" in err.detail


# --------------------------------------------------------------------------------------------
# the only repair: the millisecond separator
# --------------------------------------------------------------------------------------------
def test_ms_separator_dot_and_colon_repaired_and_recorded():
    text = "1\n00:05:00.400 --> 00:05:15.300\nfoo\n\n2\n00:09:09:949 --> 00:09:10,100\nbar\n"
    res = ok(text)
    assert [e.timeframe for e in res.entries] == [
        "00:05:00,400 --> 00:05:15,300",
        "00:09:09,949 --> 00:09:10,100",
    ]
    assert res.entries[0].start_ms == 300400
    assert [(r.line, r.before, r.after, r.kind) for r in res.repairs] == [
        (2, "00:05:00.400 --> 00:05:15.300", "00:05:00,400 --> 00:05:15,300", "ms_separator"),
        (6, "00:09:09:949 --> 00:09:10,100", "00:09:09,949 --> 00:09:10,100", "ms_separator"),
    ]


def test_repair_does_not_hide_other_defects():
    rejected("1\n00:05:00.40 --> 00:05:15.300\nx\n", "timestamp_syntax", line=2)
    rejected("1\n00:65:00.400 --> 00:05:15.300\nx\n", "timestamp_syntax", line=2)


# --------------------------------------------------------------------------------------------
# rejections: timestamp syntax
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "header",
    [
        "0:0:4,8 --> 0:0:7,4",
        "00:00:12,95 --> 00:00:14,0:",
        "00:03:06,0: --> 00:03:18,55",
        "00:38:58,0: --> 00:38:59,0:",
        "00:00:01,249.0999999999999 --> 00:00:01,251.79999999999995",
        "00:00:20 --> 00:00:24",
        "0:00:00,000 --> 0:00:02,000",
        "00:00:01,000 --> 00:00:02,000 X1:100 X2:200 Y1:10 Y2:20",
        "00:00:01,000-->00:00:02,000",
        "00:00:01,000  -->  00:00:02,000",
        "00:00:01,000 -> 00:00:02,000",
        "00:61:01,000 --> 00:00:02,000",
        "00:00:60,000 --> 00:00:02,000",
        " 00:00:01,000 --> 00:00:02,000",
        "00:00:01,000 --> ",
        "00:00:01,000",
        "00:00:01,0000 --> 00:00:02,000",
    ],
)
def test_malformed_headers_stop_the_track(header):
    text = f"1\n{H1}\nfine\n\n2\n{header}\nbroken\n\n3\n{H3}\nafter\n"
    err = rejected(text, "timestamp_syntax", line=6)
    assert err.text == header.rstrip(" \t")
    res = srt.parse(text)
    assert [e.index for e in res.entries] == [1]  # read before the stop, for inspection only


def test_site_appended_9999_cue_rejected():
    text = f"1\n{H1}\nfine\n\n9999\n00:00:0,500 --> 00:00:2,00\nDownloaded from example\n"
    err = rejected(text, "timestamp_syntax", line=6)
    assert err.text == "00:00:0,500 --> 00:00:2,00"


# --------------------------------------------------------------------------------------------
# rejections: structure
# --------------------------------------------------------------------------------------------
def test_empty_text_rejected():
    rejected("", "structure", line=1)
    rejected("\ufeff \r\n\n\t\n", "structure", line=1)


def test_orphan_text_before_first_block():
    err = rejected(f"WEBVTT\n\n1\n{H1}\nx\n", "structure", line=1)
    assert err.text == "WEBVTT"


def test_non_integer_index():
    err = rejected(f"1\n{H1}\na\n\n2a\n{H2}\nb\n", "structure", line=5)
    assert "integer" in err.detail
    rejected(f"-1\n{H1}\na\n", "structure", line=1)
    rejected(f"1234567890123456789\n{H1}\na\n", "structure", line=1)


def test_missing_index_line():
    err = rejected(f"1\n{H1}\na\n\n{H2}\nb\n", "structure", line=5)
    assert "without an index" in err.detail


def test_missing_blank_line_between_blocks():
    err = rejected(f"1\n{H1}\na\n2\n{H2}\nb\n", "structure", line=5)
    assert err.text == H2


def test_arrow_inside_payload():
    rejected(f"1\n{H1}\nsee --> there\n", "structure", line=3)


def test_index_without_header():
    rejected(f"1\n{H1}\na\n\n2\n\n3\n{H3}\nb\n", "structure", line=5)
    rejected(f"1\n{H1}\na\n\n2\n", "structure", line=5)
    err = rejected(f"1\n{H1}\na\n\n2\nsome words\n", "structure", line=6)
    assert "timestamp header" in err.detail


def test_index_line_with_leading_space():
    rejected(f" 1\n{H1}\na\n", "structure", line=1)


# --------------------------------------------------------------------------------------------
# compose / round trip
# --------------------------------------------------------------------------------------------
def test_compose_round_trip_and_normal_form():
    raw = f"\ufeff\r\n001\r\n{H1}  \r\n<i>a</i>\r\n\r\n\r\n2\r\n00:00:03.000 --> 00:00:04.000\r\nb\r\n"
    res = ok(raw)
    assert srt.compose(res.entries) == f"1\n{H1}\n<i>a</i>\n\n2\n{H2}\nb\n"
    assert srt.normalise(raw) == srt.compose(res.entries)
    assert srt.parse(srt.compose(res.entries)).entries == res.entries
    assert srt.compose([]) == ""
    assert srt.compose([e.model_dump() for e in res.entries]) == srt.compose(res.entries)


# --------------------------------------------------------------------------------------------
# property tests
# --------------------------------------------------------------------------------------------
_LINE_ALPHABET = st.sampled_from(
    ["", "", "1", "2", "12", "007", " ", "\t", H1, H2, "00:00:01.000 --> 00:00:02.000", "0:0:1,0 --> 0:0:2,0",
     "-->", "Hello", "<i>x</i>", "ș ț", "سلام", "1984", "\ufeff", " 3", "x -->", "\x85", "9" * 19]
)
_EOL = st.sampled_from(["\n", "\r\n", "\r"])


@st.composite
def srtish(draw):
    lines = draw(st.lists(_LINE_ALPHABET, max_size=30))
    eols = draw(st.lists(_EOL, min_size=len(lines), max_size=len(lines)))
    return "".join(a + b for a, b in zip(lines, eols))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(srtish())
def test_property_fast_path_equals_line_path_on_srt_like_text(text):
    res = both(text)
    assert res.status in ("ok", "rejected")
    if res.status == "ok":
        again = srt.parse(srt.compose(res.entries))
        assert again.status == "ok" and again.entries == res.entries


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400))
def test_property_never_crashes_on_arbitrary_text(text):
    res = both(text)
    assert (res.status == "rejected") == bool(res.errors)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=600), st.sampled_from(["en", "ar", "fa", "ro", "vi", "id", "xx"]))
def test_property_decode_then_parse_never_crashes_on_arbitrary_bytes(raw, lang):
    d = decode(raw, lang)
    if d.text is not None:
        res = both(d.text)
        assert res.status in ("ok", "rejected")


_payload_line = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"), min_size=1, max_size=30
).filter(lambda s: s.strip(" \t") and "-->" not in s and not re.fullmatch(r"[0-9]{1,18}[ \t]*", s))
_timestamp = st.tuples(st.integers(0, 99), st.integers(0, 59), st.integers(0, 59), st.integers(0, 999))


@st.composite
def srt_document(draw):
    """(raw text with random formatting, expected entries, canonical text)."""
    n = draw(st.integers(1, 6))
    blocks, entries = [], []
    for _ in range(n):
        idx = draw(st.integers(0, 10**6))
        a, b = draw(_timestamp), draw(_timestamp)
        sep = draw(st.sampled_from([",", ",", ".", ":"]))
        header = f"{a[0]:02d}:{a[1]:02d}:{a[2]:02d}{sep}{a[3]:03d} --> {b[0]:02d}:{b[1]:02d}:{b[2]:02d},{b[3]:03d}"
        canonical_header = header.replace(f"{sep}{a[3]:03d} ", f",{a[3]:03d} ")
        payload = draw(st.lists(_payload_line.map(lambda s: s.rstrip(" \t")), max_size=3))
        inner_blank = draw(st.booleans()) and len(payload) >= 2
        content_lines = payload[:1] + ([""] if inner_blank else []) + payload[1:]
        if inner_blank and not payload[1].strip():
            content_lines = payload
        trailing = draw(st.sampled_from(["", " ", "\t "]))
        blocks.append([str(idx) + trailing, header + trailing, *content_lines])
        entries.append((idx, canonical_header, "\n".join(content_lines)))
    eol = draw(_EOL)
    gap = draw(st.integers(1, 3))
    bom = draw(st.sampled_from(["", "\ufeff"]))
    final = draw(st.sampled_from(["", eol, eol * 2]))
    raw = bom + (eol * (gap + 1)).join(eol.join(b) for b in blocks) + final
    canonical = "\n\n".join(
        f"{i}\n{h}\n{c}" if c else f"{i}\n{h}" for i, h, c in entries
    ) + "\n"
    return raw, entries, canonical


@settings(max_examples=300, deadline=None)
@given(srt_document())
def test_property_accepted_files_round_trip(doc):
    raw, expected, canonical = doc
    res = ok(raw)
    assert [(e.index, e.timeframe, e.content) for e in res.entries] == expected
    assert srt.compose(res.entries) == canonical  # compose(parse(x)) == normalise(x)
    assert srt.normalise(raw) == canonical
    for e in res.entries:
        h = [int(x) for x in re.split(r"[:, >-]+", e.timeframe)]
        assert e.start_ms == ((h[0] * 60 + h[1]) * 60 + h[2]) * 1000 + h[3]
        assert e.end_ms == ((h[4] * 60 + h[5]) * 60 + h[6]) * 1000 + h[7]


@settings(max_examples=300, deadline=None)
@given(srt_document())
def test_property_fast_path_takes_every_clean_document(doc):
    """The vectorised path accepts (and agrees with the line path on) every document that needs
    no repair and has no lone CR -- so the speed claims hold on clean files of any shape (BOM,
    CRLF, trailing spaces, blank lines inside payloads, several blank lines between blocks)."""
    raw, expected, _ = doc
    res = ok(raw)
    table = srt._fast_table(raw)
    clean = not res.repairs and "\r" not in raw.replace("\r\n", "")
    assert (table is not None) == clean
    if clean:
        assert table.to_pylist() == [e.model_dump() for e in res.entries]


@pytest.mark.parametrize(
    "text",
    [
        f"1\r{H1}\rHi\r",  # lone CR line breaks
        f"1\r\n{H1}\r\nHi\r\n\r\n2\r\n{H2}\r\nA\rB\r\n",  # a lone CR inside CRLF text
        f"1\n{H1}\nHi\r\r\n",  # CR CR LF
        f"1\n{H1}\nHi\n\n2\n{H2}\nsee 1\n\n42\n",  # a number after a blank line that starts no block
        f"1\n{H1}\nHi --> there\n",  # an arrow in a payload
    ],
)
def test_fast_path_declines_and_line_path_decides(text):
    assert srt._fast_table(text) is None
    both(text)


# --------------------------------------------------------------------------------------------
# real files and real defect patterns
# --------------------------------------------------------------------------------------------
def _defect_items(realdata_dir):
    return json.loads((realdata_dir / "srt" / "defect_patterns_from_issues.json").read_text())["items"]


@pytest.mark.realdata
def test_defect_patterns_from_issues(realdata_dir):
    seen = 0
    for item in _defect_items(realdata_dir):
        pattern = item["pattern"]
        if "-->" in pattern:
            for header in pattern.split(" | "):
                if "\n" in header:  # a whole cue (index + header)
                    text = f"1\n{H1}\nfine\n\n{header}\nad\n"
                    err = rejected(text, "timestamp_syntax", line=6)
                    assert err.text == header.split("\n")[1]
                elif re.fullmatch(r"[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3} --> [0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}", header):
                    res = ok(f"1\n{header}\ntext\n")  # the one documented repair
                    assert res.repairs and res.repairs[0].before == header
                else:
                    rejected(f"1\n{header}\ntext\n", "timestamp_syntax", line=2)
                seen += 1
        elif item["defect"] == "cue index lines missing":
            rejected(f"1\n{H1}\na\n\n{H2}\nb\n", "structure", line=5)
            seen += 1
        elif item["defect"] == "completely empty .srt file":
            rejected("", "structure")
            assert decode(b"", "en").status == "rejected"
            seen += 1
        elif "no ms" in pattern:
            rejected("1\n00:00:01 --> 00:00:03\nrounded\n\n2\n00:00:02 --> 00:00:04\noverlap\n", "timestamp_syntax", 2)
            seen += 1
    assert seen >= 11


def _realdata_files(realdata_dir):
    index = json.loads((realdata_dir / "srt" / "INDEX.json").read_text())
    return [(realdata_dir / "srt" / r["file"], r) for r in index]


@pytest.mark.realdata
def test_every_real_file_parses_with_index_counts(realdata_dir):
    files = _realdata_files(realdata_dir)
    assert len(files) == 29
    for path, row in files:
        lang = row["lang"] if row["lang"] != "other_lang" else "fr"
        d = decode(path.read_bytes(), lang)
        assert d.status == "ok", (path.name, d.reasons)
        res = both(d.text)
        assert res.status == "ok", (path.name, res.errors)
        assert len(res.entries) == row["entries"], path.name
        assert res.entries[0].timeframe == row["first_time"]
        assert res.entries[-1].timeframe == row["last_time"]
        assert res.repairs == []
        assert srt.parse(srt.compose(res.entries)).entries == res.entries


@pytest.mark.realdata
def test_real_duplicates_and_tags_are_kept(realdata_dir):
    path = realdata_dir / "srt" / "fa" / "fa__manhunt_2017__utf16le_bom.srt"
    res = srt.parse(decode(path.read_bytes(), "fa").text)
    indices = [e.index for e in res.entries]
    assert len(indices) - len(set(indices)) == 6  # INDEX.json: 6 duplicate cue numbers
    path = realdata_dir / "srt" / "ar" / "ar__geostorm_2017__cp1256_ass_tags.srt"
    res = srt.parse(decode(path.read_bytes(), "ar").text)
    assert sum(e.content.count("{\\") for e in res.entries) == 3


@pytest.mark.realdata
def test_parse_to_arrow_agrees_with_srt_library_on_a_large_file(realdata_dir):
    """Both parsers read the same 40-fold real file; the speed comparison (ours ≥ 2x the srt
    library) is benchmarks/bench_parse.py, not a test."""
    import srt as srt_lib

    path = realdata_dir / "srt" / "ar" / "ar__american_made_2017__utf8sig_crlf.srt"
    entries = srt.parse(decode(path.read_bytes(), "ar").text).entries
    big = srt.compose([e.model_copy(update={"index": i}) for i, e in enumerate(entries * 40, 1)])
    raw = big.replace("\n", "\r\n").encode("utf-8")
    d = decode(raw, "ar")
    table, _, errors, status = srt.parse_to_arrow(d.text)
    assert status == "ok" and table.num_rows == len(entries) * 40
    theirs = list(srt_lib.parse(raw.decode("utf-8")))
    assert len(theirs) == len(entries) * 40
    assert table.column("content").to_pylist()[:50] == [s.content for s in theirs[:50]]


# --------------------------------------------------------------------------------------------
# inspect core (decode + strict parse; the `cinesub inspect` contract)
# --------------------------------------------------------------------------------------------
def test_inspect_contract_ok_flagged_rejected():
    import io

    from validators.inspect_report import CONTRACT_KEYS, inspect_bytes, inspect_track, write_entries_jsonl

    text = f"1\r\n{H1}\r\nمرحباً، كيف حالك اليوم يا صديقي؟\r\n\r\n2\r\n00:00:03.000 --> 00:00:04.000\r\nلا أعرف\r\n"
    r = inspect_bytes(text.encode("cp1256"), "ar")
    assert set(CONTRACT_KEYS) <= set(r)
    assert (r["encoding"], r["decoder"], r["status"], r["entries"]) == ("cp1256", "candidate:cp1256", "ok", 2)
    assert r["repairs"] == [{"line": 6, "before": "00:00:03.000 --> 00:00:04.000",
                             "after": "00:00:03,000 --> 00:00:04,000", "kind": "ms_separator"}]
    assert r["errors"] == [] and r["flags"] == []
    json.dumps(r)

    res = inspect_track(text.encode("cp1256"), "ar")
    buf = io.StringIO()
    assert write_entries_jsonl(res.table, buf) == 2
    first = json.loads(buf.getvalue().splitlines()[0])
    assert first == {"index": 1, "timeframe": H1, "start_ms": 1000, "end_ms": 2500,
                     "content": "مرحباً، كيف حالك اليوم يا صديقي؟"}

    bad = f"1\n{H1}\nok\n\n2\n0:00:03,000 --> 0:00:04,000\nbad\n".encode()
    r = inspect_bytes(bad, "en")
    assert r["status"] == "rejected" and r["entries"] == 1
    assert r["errors"] == [{"line": 6, "text": "0:00:03,000 --> 0:00:04,000", "layer": "timestamp_syntax",
                            "detail": "header does not match HH:MM:SS,mmm --> HH:MM:SS,mmm"}]
    assert [(f["layer"], f["severity"]) for f in r["flags"]] == [("timestamp_syntax", "stop")]

    r = inspect_bytes(b"<html><head><title>Attention Required! | Cloudflare</title></head></html>", "fa")
    assert (r["status"], r["entries"], r["encoding"]) == ("rejected", 0, None)
    assert r["flags"][0]["layer"] == "provider_body"

    r = inspect_bytes(f"1\n{H1}\nThis line is English, not Arabic at all.\n".encode(), "ar")
    assert r["status"] == "flagged" and r["entries"] == 1 and r["flags"][0]["layer"] == "encoding"
    assert inspect_bytes(bad, "en", policy="paper")["decoder"] == "paper:utf-8-sig"
