"""Duration-coverage audit against the English track (validators.duration_audit)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from cinesub.records import LAYERS
from cinesub.settings import Thresholds
from validators.duration_audit import AUDIT_LAYERS, audit, audited_layers, count_tokens, summarize

MIN = 60_000
T = Thresholds()


def summary(first=0, last=100 * MIN, entries=1_000, tokens=8_000) -> dict[str, int]:
    return {"first_start_ms": first, "last_end_ms": last, "n_entries": entries, "n_tokens": tokens}


ENGLISH = summary()


def layers(flags) -> list[str]:
    return [f.layer for f in flags]


def test_layers_are_the_records_vocabulary():
    assert set(AUDIT_LAYERS) <= set(LAYERS)


def test_matching_track_raises_nothing():
    assert audit(summary(), ENGLISH, 110, T) == []


# ---------------------------------------------------------------------------------------------
# span / runtime < 0.65
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("span_ms", "flagged"),
    [(65 * MIN, False), (65 * MIN - 1, True), (65 * MIN + 1, False), (30 * MIN, True)],
)
def test_span_ratio_boundary(span_ms, flagged):
    track = summary(first=2 * MIN, last=2 * MIN + span_ms)
    flags = audit(track, None, 100, T)
    assert layers(flags) == (["span_ratio"] if flagged else [])
    if flagged:
        flag = flags[0]
        assert flag.value == pytest.approx(span_ms / (100 * MIN))
        assert flag.threshold == 0.65
        assert flag.evidence == {"span_ms": span_ms, "runtime_ms": 100 * MIN}


def test_span_ratio_needs_the_runtime():
    short = summary(last=10 * MIN)
    assert "span_ratio" not in layers(audit(short, ENGLISH, None, T))
    assert audited_layers(None, ENGLISH) == ["token_ratio", "entry_ratio", "span_vs_english"]
    assert audited_layers(90, None) == ["span_ratio"]
    assert audited_layers(None, None) == []


# ---------------------------------------------------------------------------------------------
# token and entry ratios to English
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("tokens", "flagged"), [(4_800, False), (4_799, True), (9_000, False)])
def test_token_ratio_boundary(tokens, flagged):
    flags = audit(summary(tokens=tokens), ENGLISH, 110, T)
    assert layers(flags) == (["token_ratio"] if flagged else [])
    if flagged:
        assert flags[0].value == pytest.approx(tokens / 8_000)
        assert flags[0].threshold == 0.60
        assert flags[0].evidence == {"n_tokens": tokens, "english_n_tokens": 8_000}


@pytest.mark.parametrize(("entries", "flagged"), [(700, False), (699, True), (1_500, False)])
def test_entry_ratio_boundary(entries, flagged):
    flags = audit(summary(entries=entries), ENGLISH, 110, T)
    assert layers(flags) == (["entry_ratio"] if flagged else [])
    if flagged:
        assert flags[0].value == pytest.approx(entries / 1_000)
        assert flags[0].evidence == {"n_entries": entries, "english_n_entries": 1_000}


# ---------------------------------------------------------------------------------------------
# |span - English span| / English span > 0.25
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("span_ms", "flagged"),
    [
        (125 * MIN, False),  # exactly 25 % longer
        (125 * MIN + 1, True),
        (75 * MIN, False),  # exactly 25 % shorter
        (75 * MIN - 1, True),
        (100 * MIN, False),
    ],
)
def test_span_vs_english_boundary(span_ms, flagged):
    flags = audit(summary(first=MIN, last=MIN + span_ms), ENGLISH, None, T)
    assert layers(flags) == (["span_vs_english"] if flagged else [])
    if flagged:
        assert flags[0].value == pytest.approx(abs(span_ms - 100 * MIN) / (100 * MIN))
        assert flags[0].threshold == 0.25
        assert flags[0].evidence == {"span_ms": span_ms, "english_span_ms": 100 * MIN}


def test_all_layers_at_once_are_complete_and_serialisable():
    track = summary(first=0, last=40 * MIN, entries=300, tokens=2_000)
    flags = audit(track, ENGLISH, 100, T)
    assert layers(flags) == ["span_ratio", "token_ratio", "entry_ratio", "span_vs_english"]
    for flag in flags:
        assert flag.severity == "review" and flag.detail
        json.dumps(flag.model_dump(mode="json"))


def test_thresholds_come_from_settings():
    strict = Thresholds(token_ratio_min=0.95, entry_ratio_min=0.95, span_vs_english_max_diff=0.01, span_ratio_min=0.99)
    track = summary(last=95 * MIN, entries=900, tokens=7_000)
    assert audit(track, ENGLISH, 100, T) == []
    assert layers(audit(track, ENGLISH, 100, strict)) == list(AUDIT_LAYERS)


def test_empty_english_reference_is_not_divided_by():
    empty = summary(first=0, last=0, entries=0, tokens=0)
    assert audit(summary(), empty, None, T) == []


# ---------------------------------------------------------------------------------------------
# tokens and summaries from entries
# ---------------------------------------------------------------------------------------------
def entries(contents: list[str], times: list[tuple[int, int]] | None = None) -> pl.DataFrame:
    times = times or [(i * 1_000, i * 1_000 + 500) for i in range(len(contents))]
    return pl.DataFrame(
        {
            "index": list(range(1, len(contents) + 1)),
            "timeframe": ["" for _ in contents],
            "start_ms": [s for s, _ in times],
            "end_ms": [e for _, e in times],
            "content": contents,
        },
        schema={"index": pl.Int64, "timeframe": pl.String, "start_ms": pl.Int64, "end_ms": pl.Int64, "content": pl.String},
    )


@pytest.mark.parametrize(
    ("content", "tokens"),
    [
        ("Hello there", 2),
        ("<i>Hello there</i>", 2),
        ("<i> Hello </i> there", 2),
        ("{\\an8}Hello", 1),
        ("<font color=\"#ff0000\">One</font> two\nthree", 3),
        ("- Yes.\n- No.", 4),
        ("\u202bسلام\u200f دوست", 2),
        ("", 0),
        ("♪", 1),
    ],
)
def test_count_tokens(content, tokens):
    assert count_tokens(entries([content])) == tokens


def test_count_tokens_sums_over_the_track():
    assert count_tokens(entries(["a b", "<i>c</i>", "d e f"])) == 6
    assert count_tokens(entries([])) == 0


def test_summarize():
    track = entries(["a b", "c", "d e"], [(5_000, 6_000), (2_000, 9_000), (7_000, 8_000)])
    assert summarize(track) == {"first_start_ms": 2_000, "last_end_ms": 9_000, "n_entries": 3, "n_tokens": 5}


# ---------------------------------------------------------------------------------------------
# real files
# ---------------------------------------------------------------------------------------------
from _realdata import manifest_codecs, read_track  # noqa: E402


def real(realdata: Path, name: str) -> dict[str, int]:
    return summarize(read_track(realdata / "srt" / name, manifest_codecs(realdata)[name]))


@pytest.mark.realdata
def test_real_parallel_tracks_of_one_film_pass(realdata_dir):
    # Manhunt (2017, 106 min): the Vietnamese track shares the English timings
    english = real(realdata_dir, "en/en__manhunt_2017__utf16le_bom.srt")
    vietnamese = real(realdata_dir, "vi/vi__manhunt_2017__utf16le_bom.srt")
    assert english["n_entries"] == vietnamese["n_entries"] == 1263
    assert audit(vietnamese, english, 106, T) == []


@pytest.mark.realdata
def test_real_span_uses_earliest_start_and_latest_end(realdata_dir):
    # Fireworks (2017, 90 min): after the dialogue (ending 01:28:58) the Indonesian file appends
    # sign captions that restart at 00:00:38, so its last cue in file order ends at 00:51:49.
    # The span is earliest start to latest end: the track covers the film.
    track = real(realdata_dir, "id/id__fireworks_2017__utf8sig_crlf.srt")
    assert (track["first_start_ms"], track["last_end_ms"]) == (38_360, 5_338_270)
    assert audit(track, None, 90, T) == []
    flags = audit(track, None, 140, T)  # against a longer runtime the span falls short
    assert layers(flags) == ["span_ratio"]
    assert flags[0].value == pytest.approx((5_338_270 - 38_360) / (140 * MIN))
