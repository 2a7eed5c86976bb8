"""The vectorised forms of the per-track pass (issue 18) give exactly what the plain forms they
replaced give: character-class counts vs ``re.findall``, the UTF-8 share of a body vs the byte
regex, whitespace collapsing vs ``\\s+``, markup stripping only where there is markup, the
language layer's sampled chunks vs spreading over every chunk."""

from __future__ import annotations

import re

import polars as pl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from extractors import charclass, decode, decode_verify, langid
from validators import _text, candidate, language

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

#: characters the decoder meets: ASCII, Latin-1, the code pages' letters, Arabic, Vietnamese,
#: combining marks, controls, whitespace of every kind
_ALPHABET = st.sampled_from(
    list("aZ09 _\t\r\n-<>{}\\") + [chr(c) for c in range(0x00, 0x20)] + [chr(c) for c in range(0x7F, 0x100)]
    + list("ăĂșȘțȚşŞţŢ„”€…–—ªºþãõđơưạảấệỹ") + list("ابتثجحخدذرزسشصضطظعغفقكلمنهوي پچژگکیةى،؛؟×÷ـ")
    + ["\u0300", "\u0301", "\u0303", "\u0309", "\u0323", "\u064b", "\u200c", "\u200f", "\u202b", "\ufeff",
       "\ufffd", "\u2028", "\u3000", "\u00a0", "\u0085", "\u1680", "²", "½", "٣"]
)
texts = st.text(alphabet=_ALPHABET, max_size=300)


@SETTINGS
@given(texts)
def test_script_counts_equal_the_regex_findall_counts(text):
    c = langid.script_counts(text)
    latin_na = len(langid._LATIN_NA.findall(text))
    assert c.letters == len(langid._LETTER.findall(text))
    assert c.arabic == len(langid._ARABIC_LETTER.findall(text))
    assert c.latin == len(langid._ASCII_LETTER.findall(text)) + latin_na
    assert c.latin_non_ascii == latin_na
    assert c.persian == len(langid._PERSIAN.findall(text))
    assert c.arabic_only == len(langid._ARABIC_ONLY.findall(text))
    assert c.vietnamese == (len(langid._VI.findall(text)) if latin_na else 0)
    assert c.vietnamese_specific == (len(langid._VI_SPEC.findall(text)) if latin_na else 0)
    assert c.romanian_specific == (len(langid._RO_SPEC.findall(text)) if latin_na else 0)


@SETTINGS
@given(texts)
def test_verify_counts_equal_the_regex_and_loop_counts(text):
    codes = charclass.codepoints(text)
    assert charclass.control_count(codes) == len(decode_verify._CONTROL.findall(text))
    n = decode_verify._PAYLOAD_CLASSES.counts(codes)
    assert n["combining"] == len(decode_verify._COMBINING.findall(text))
    assert n["times_divide"] == text.count("×") + text.count("÷")
    assert n["non_ascii"] == sum(1 for ch in text if not ch.isascii())
    assert n["na"] == decode_verify.non_ascii_letters(text) == sum(1 for ch in text if not ch.isascii() and ch.isalpha())
    expected = max(len(p.findall(text)) for p in decode_verify._MISREAD.values())
    assert decode_verify._misread_pairs(text, codes, n) == expected


def test_misread_pairs_on_double_encoded_utf8():
    text = "Ce faci, iubito? Mulțumesc, așa e.".encode("utf-8").decode("cp1252", errors="replace")
    codes = charclass.codepoints(text)
    n = decode_verify._PAYLOAD_CLASSES.counts(codes)
    pairs = decode_verify._misread_pairs(text, codes, n)
    assert pairs == max(len(p.findall(text)) for p in decode_verify._MISREAD.values()) and pairs >= 2


def test_every_code_point_is_classified_as_the_regexes_classify_it():
    """The per-character bits over the whole BMP are the single-character regex matches."""
    table = langid._SCRIPT_TABLE
    codes = charclass.codepoints("".join(chr(c) for c in range(0x10000) if not 0xD800 <= c <= 0xDFFF))
    counts = table.counts(codes)
    everything = "".join(chr(c) for c in range(0x10000) if not 0xD800 <= c <= 0xDFFF)
    for name, pattern in (("letters", langid._LETTER), ("arabic", langid._ARABIC_LETTER),
                          ("latin_na", langid._LATIN_NA), ("vietnamese", langid._VI)):
        assert counts[name] == len(pattern.findall(everything)), name
    assert charclass.control_count(codes) == len(decode_verify._CONTROL.findall(everything))


_UTF8_BYTES = st.binary(max_size=400) | st.lists(
    st.sampled_from([b"a", b"\n", b"\xc3\xa9", b"\xe2\x80\x9e", b"\xf0\x9f\x98\x80", b"\xe3", b"\xba", b"\xc7\xe1",
                     b"\xe0\x80", b"\xf4\x80\x80"]), max_size=200).map(b"".join)


@SETTINGS
@given(_UTF8_BYTES)
def test_mixed_utf8_share_equals_the_byte_regex(body):
    ascii_bytes = len(body) - len(body.translate(None, bytes(range(128))))
    expected = 0.0 if ascii_bytes < 8 else sum(len(m) for m in decode._UTF8_SEQ.findall(body)) / ascii_bytes
    assert decode._mixed_utf8_share(body) == expected


@SETTINGS
@given(texts)
def test_payload_whitespace_is_the_regex_collapse(text):
    assert " ".join(text.split()) == re.sub(r"\s+", " ", text).strip()
    old = pl.Series([text]).str.replace_all(r"\s+", " ").str.strip_chars()
    new = pl.Series([text]).str.replace_all(_text.WHITESPACE_RUN_RE, " ").str.strip_chars()
    assert old.to_list() == new.to_list()


@SETTINGS
@given(st.lists(texts | st.none(), max_size=12))
def test_strip_markup_series_and_words_equal_the_expressions(values):
    s = pl.Series("content", values, dtype=pl.String)
    expr = s.to_frame().select(_text.strip_markup(pl.col("content"))).to_series()
    assert _text.strip_markup_series(s).to_list() == expr.to_list()
    words = s.to_frame().select(candidate.words(pl.col("content").fill_null(""))).to_series()
    assert candidate.words_series(s.fill_null("")).to_list() == words.to_list()


def test_sampled_chunks_are_the_spread_of_every_chunk():
    """Entries of uneven length (a long entry skips chunk numbers), markup, entries without
    letters and a track without text: the sampled chunks are _spread over _chunks."""
    contents, tracks = [], []
    for track in range(4):
        for i in range(400 if track != 3 else 5):
            long = "x " * 300 if i % 37 == 5 else ""
            text = f"<i>line {i} of track {track}</i>\r\n {long}  ok" if i % 3 else ("♪" if i % 2 else f"word{i}")
            contents.append("♪ 123" if track == 3 else text)
            tracks.append(track)
    entries = pl.DataFrame({language.TRACK: tracks, "index": list(range(1, len(tracks) + 1)), "content": contents},
                           schema_overrides={language.TRACK: pl.Int32})
    every = language._chunks(entries)
    expected = []
    for _, part in every.partition_by(language.TRACK, maintain_order=True, as_dict=True).items():
        rows = part.select(language.TRACK, "text", "n", "first_index").rows()
        expected.extend(rows[i] for i in language._spread(len(rows), language.MAX_CHUNKS))
    got = language._sampled_chunks(entries).select(language.TRACK, "text", "n", "first_index").rows()
    assert got == expected
    assert len({r[0] for r in got}) == 3  # the letterless track has no chunk
    assert language._sampled_chunks(entries.filter(pl.col(language.TRACK) == 3)).height == 0


def test_fast_parse_equals_the_line_path_on_blank_runs_and_crlf():
    from extractors import srt

    blocks = []
    for i in range(1, 300):
        payload = ["ok", f"line {i} \t ", "  indented", "", "after blank"][: 1 + i % 5]
        if i % 7 == 0:
            payload = []  # empty payload
        blocks.append("\n".join([f"{i:03d}", f"00:{i // 60:02d}:{i % 60:02d},{i:03d} --> 00:{i // 60:02d}:{i % 60:02d},999",
                                 *payload]))
    text = "\n\n".join(blocks) + "\n \t\n"
    for variant in (text, text.replace("\n", "\r\n"), text.replace("\n", " \t\r\n"), "\ufeff" + text):
        fast = srt._fast_table(variant)
        rows, repairs, errors = srt._parse_lines(variant)
        assert fast is not None and not repairs and not errors
        assert fast.equals(srt._rows_to_table(rows))
    assert srt._fast_table(text.replace("\n", "\r", 3)) is None  # lone CRs: the line path decides
