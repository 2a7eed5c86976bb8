"""Vectorised sanitization (issue 18): the literal prefilter and the batch call decide exactly as
every pattern run over every entry (``prefilter=False``) -- on the real tracks, on generated
hostile text (markup splitting words, decomposed marks, case variants, repeated indices) and
per track of a many-track batch; the literal derivation and the NFC-stable ranges are checked
against Python's regex parser and Unicode database."""

from __future__ import annotations

import random
import re
import sys
import unicodedata

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from cinesub.settings import LANGUAGES
from validators import _literals
from validators.sanitize import (
    NFC_REORDER_ONLY_RANGES,
    NFC_STABLE_RANGES,
    candidates,
    load_patterns,
    normalized_text,
    pattern_literals,
    prefilter_literals,
    sanitize,
    sanitize_batch,
)

PATTERNS = load_patterns()


def frame(lines: list[str]) -> pl.DataFrame:
    return pl.DataFrame({"index": list(range(1, len(lines) + 1)), "content": lines},
                        schema={"index": pl.Int64, "content": pl.String})


def assert_same(entries: pl.DataFrame, language: str) -> None:
    fast, full = sanitize(entries, language), sanitize(entries, language, prefilter=False)
    assert_frame_equal(fast.entries, full.entries)
    assert_frame_equal(fast.log, full.log)
    assert fast.residual == full.residual


# ---------------------------------------------------------------------------------------------
# the literals
# ---------------------------------------------------------------------------------------------
def test_every_packaged_pattern_has_literals_that_catch_its_positive_examples():
    for p in PATTERNS.patterns:
        lits = pattern_literals(p)
        assert lits, p.id  # none would switch the prefilter off for every track
        norm = pl.Series(list(p.positive)).to_frame("t").select(normalized_text(pl.col("t"))).to_series()
        assert norm.str.contains_any(list(lits), ascii_case_insensitive=True).all(), p.id
    for language in LANGUAGES:
        assert prefilter_literals(tuple(PATTERNS.for_language(language)))


@pytest.mark.parametrize(
    ("regex", "expected"),
    [
        (r"(?i)foo(?:bar|baz)", {"FOOBAR", "FOOBAZ"}),
        (r"\.(?:com|net)\b", {".com", ".net"}),
        (r"(?:[a-z]+\.)+(?:com|net)", {".com", ".net"}),
        (r"ترجم[ةه]\s*:", {"ترجمة", "ترجمه"}),
        (r"(?:^|[^\w@.])@[A-Za-z0-9_]{3,}", {"@"}),
        (r"colou?r", {"color", "colour"}),
    ],
)
def test_required_literals(regex, expected):
    got = _literals.required_literals(regex)
    assert got is not None
    if regex.startswith("(?i)"):
        got = {x for x in got if x.isascii()}
    assert set(got) == expected


@pytest.mark.parametrize("regex", [r"a*", r"\w+", r"[[:alpha:]]x", r"[a-z&&b]x", r"\p{Lu}bc", r"(?:x|\d+)",
                                   r"\x{41}bc", r"a?"])
def test_no_literals_when_unsure_or_none_exist(regex):
    assert _literals.required_literals(regex) is None


def test_case_variants_cover_unicode_simple_folding():
    assert {"K", "\u212a"} <= _literals.case_variants("k")  # KELVIN SIGN folds to k
    assert {"S", "\u017f"} <= _literals.case_variants("s")  # LONG S folds to s
    assert _literals.case_variants("ư") == {"ư", "Ư"}
    # every character with a case mapping lies in the scanned ranges
    for cp in range(sys.maxunicode + 1):
        ch = chr(cp)
        if any(len(o) == 1 and o != ch for o in (ch.lower(), ch.upper(), ch.casefold(), ch.title())):
            assert any(a <= cp <= b for a, b in _literals.CASED_RANGES), hex(cp)


def test_literals_are_necessary_on_random_matches():
    # every match Python's engine finds for the ASCII-only packaged patterns contains a literal
    rng = random.Random(7)
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789 .:@/-_"
    for p in PATTERNS.patterns:
        lits = [x.lower() for x in pattern_literals(p)]
        try:
            rx = re.compile(p.regex.replace("(?-u:\\b)", "\\b").replace("\\p{L}", "[^\\W\\d_]"))
        except re.error:
            continue
        for text in list(p.positive) + ["".join(rng.choice(alphabet) for _ in range(60)) for _ in range(50)]:
            m = rx.search(text)
            if m:
                assert any(x in m.group(0).lower() for x in lits), (p.id, m.group(0))


# ---------------------------------------------------------------------------------------------
# the normalization shortcut
# ---------------------------------------------------------------------------------------------
def _maybe_second() -> set[int]:
    out = set(range(0x1161, 0x1176)) | set(range(0x11A8, 0x11C3))
    for cp in range(sys.maxunicode + 1):
        d = unicodedata.decomposition(chr(cp))
        if d and not d.startswith("<") and len(d.split()) == 2:
            out.add(int(d.split()[1], 16))
    return out


def test_nfc_stable_ranges_hold_only_characters_nfc_never_changes():
    maybe = _maybe_second()
    markup = set(map(ord, "\r<{")) | set(range(0x200B, 0x2010)) | set(range(0x202A, 0x202F)) \
        | set(range(0x2060, 0x206A)) | {0xFEFF, 0x0640}
    for a, b in NFC_STABLE_RANGES:
        for cp in range(a, b + 1):
            ch = chr(cp)
            assert unicodedata.category(ch) != "Cn" and unicodedata.combining(ch) == 0, hex(cp)
            assert cp not in maybe and cp not in markup and unicodedata.normalize("NFC", ch) == ch, hex(cp)
    for a, b in NFC_REORDER_ONLY_RANGES:
        for cp in range(a, b + 1):
            ch = chr(cp)
            assert unicodedata.combining(ch) != 0 and cp not in maybe, hex(cp)
            assert unicodedata.normalize("NFC", ch) == ch, hex(cp)


def test_candidates_see_the_normalized_text():
    lits = prefilter_literals(tuple(PATTERNS.for_language("en")))
    texts = pl.Series(["Sub<i>titles</i> by X", "plain dialogue", "ترجمـة: علي", "Visit\u200b www.x.com",
                       "Phu\u0323 đê\u0300 bởi: Ken", "SUBTITLES BY X", "\u212aontak: x"])
    assert candidates(texts, lits).to_list() == [True, False, True, True, True, True, True]


# ---------------------------------------------------------------------------------------------
# equivalence
# ---------------------------------------------------------------------------------------------
_HOSTILE = [
    "Sub<i>titles</i> by Ann", "<font color=#ff0>Subtitles by</font> X", "s\u017fubtitles by X",
    "Download from www.<b>sub</b>scene.com", "visit {\\an8}www.example.com now", "ترجـمـة: علي",
    "ترجمة\u200f: علي", "Phu\u0323 đê\u0300 thực hiện bởi: Ken", "Dịch bởi: Ken",
    "مَّرحبا ترجمة: سامي", "write to a.b@mail<i></i>.ro tonight", "@handle_xyz", "x@y.co and www.z.in",
    "Traducerea și adaptarea: Ion", "TRADUCEREA: ION", "I'll be back", "Vizitați www.subs.ro", "", "<i></i>",
    "Follow us on telegram @movies_hd", "Like, follow me", "Rate this subtitle", "\u212aONTA\u212a: x",
    "تقدیم به همه", "زیرنویس از: رضا", "telegram: @abc", "fb.com/page", "Contact: me", "WWW.EXAMPLE.COM",
]


@pytest.mark.parametrize("language", LANGUAGES)
def test_prefilter_decides_as_every_pattern_on_hostile_text(language):
    rng = random.Random(language)
    lines = list(_HOSTILE)
    pieces = [x for x in _HOSTILE if x] + ["and then", "he said", "\n", "<i>", "</i>", "\u0651\u064e"]
    lines += [" ".join(rng.choice(pieces) for _ in range(rng.randint(1, 5))) for _ in range(300)]
    lines += [p for pat in PATTERNS.patterns for p in pat.positive + pat.negative]
    entries = frame(lines).with_columns(pl.col("index") // 3)  # repeated indices
    assert_same(entries, language)


@pytest.mark.realdata
def test_prefilter_decides_as_every_pattern_on_the_real_tracks(realdata_dir):
    from _realdata import manifest_codecs, read_track

    codecs = manifest_codecs(realdata_dir)
    n = 0
    for name, codec in codecs.items():
        language = name.split("/")[0]
        if language not in LANGUAGES:
            continue
        assert_same(read_track(realdata_dir / "srt" / name, codec), language)
        n += 1
    assert n >= 20


# ---------------------------------------------------------------------------------------------
# many tracks in one call
# ---------------------------------------------------------------------------------------------
def test_batch_equals_one_call_per_track():
    rng = random.Random(3)
    tracks = {f"t{i}": LANGUAGES[i % len(LANGUAGES)] for i in range(9)}
    parts = []
    for tid in tracks:
        lines = [rng.choice(_HOSTILE + ["hello", "how are you?"]) for _ in range(rng.randint(0, 40))]
        parts.append(frame(lines).with_columns(pl.lit(tid).alias("track_id")))
    batch = pl.concat(parts).sample(fraction=1.0, shuffle=True, seed=1)  # tracks interleaved
    res = sanitize_batch(batch, tracks)
    assert res.entries.height == batch.height
    assert_frame_equal(res.entries.drop("clean_content"), batch)
    assert res.log.columns == ["track_id", "index", "action", "reasons", "sha256", "position"]
    assert res.log.height > 0  # (markup inside an e-mail leaves a residual, as for one track)
    for tid, language in tracks.items():
        alone = batch.filter(pl.col("track_id") == tid).drop("track_id")
        want = sanitize(alone, language)
        got = res.track(tid)
        assert_frame_equal(got.entries, want.entries)
        assert_frame_equal(got.log, want.log)
        assert got.residual == want.residual


def test_batch_needs_every_track_language():
    batch = frame(["Subtitles by X", "hi"]).with_columns(pl.Series("track_id", ["a", "b"]))
    with pytest.raises(ValueError, match="no language for tracks"):
        sanitize_batch(batch, {"a": "en"})
    empty = sanitize_batch(batch.head(0), {})
    assert empty.entries.height == 0 and empty.log.height == 0
