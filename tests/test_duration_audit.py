"""Duration-coverage audit against the English track (validators.duration_audit)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from cinesub.records import LAYERS
from cinesub.settings import Thresholds
from validators.duration_audit import (
    AUDIT_LAYERS,
    audit,
    audited_layers,
    count_texts,
    count_tokens,
    count_words,
    covered_ms,
    interval_density,
    prompt_text,
    summarize,
)

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
    ("content", "words"),
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
def test_count_words(content, words):
    assert count_words(entries([content])) == words


def test_count_words_sums_over_the_track():
    assert count_words(entries(["a b", "<i>c</i>", "d e f"])) == 6
    assert count_words(entries([])) == 0


# o200k_base test vectors published with tiktoken and its ports (encode_ordinary)
@pytest.mark.parametrize(("text", "ids"), [
    ("", []),
    ("hello world", [24912, 2375]),
    (" 日本語とEnglish 12345!\n", [17428, 40909, 5330, 28881, 220, 7633, 2548, 4175]),
    ("a\n\n", [64, 279]),
    ("<|endoftext|>", [27, 91, 419, 1440, 919, 91, 29]),  # special-token text counts as plain text
])
def test_o200k_base_matches_published_vectors(text, ids):
    from validators.duration_audit import _encoding

    assert _encoding().encode_ordinary(text) == ids
    assert count_texts([text]) == [len(ids)]


def test_count_tokens_is_o200k_of_the_prompt_formatted_track():
    from validators.duration_audit import _encoding

    track = entries(["Hello there", None, "- Yes.\n- No."], [(5_000, 6_000), (1_000, 2_000), (2_000, 3_000)])
    track = track.with_columns(pl.Series("timeframe", ["00:00:05,000 --> 00:00:06,000", "x",
                                                       "00:00:02,000 --> 00:00:03,000"]))
    text = prompt_text(track)
    # the film entity's entries JSON: released entries only, in start order, ensure_ascii=False
    assert json.loads(text) == [
        {"index": 3, "timeframe": "00:00:02,000 --> 00:00:03,000", "content": "- Yes.\n- No."},
        {"index": 1, "timeframe": "00:00:05,000 --> 00:00:06,000", "content": "Hello there"},
    ]
    assert text == json.dumps(json.loads(text), ensure_ascii=False)
    assert count_tokens(track) == len(_encoding().encode_ordinary(text)) > count_words(track.drop_nulls())
    # one count per track, not a sum over entries: the JSON punctuation is part of the input
    assert count_tokens(track) > sum(count_texts(["Hello there", "- Yes.\n- No."]))


def test_count_tokens_agrees_with_the_release_input_tokens():
    from warehouse.tokens import count_track_tokens

    track = entries(["Привет, друг", "سلام دوست", "Xin chào người bạn"]).with_columns(
        pl.lit("t1").alias("track_id"))
    (row,) = count_track_tokens(track).rows()
    assert row == ("t1", count_tokens(track))


@pytest.mark.parametrize(("times", "ms"), [
    ([], 0),
    ([(0, 1_000)], 1_000),
    ([(0, 1_000), (500, 1_500)], 1_500),  # overlap counted once
    ([(0, 1_000), (1_000, 2_000)], 2_000),  # touching
    ([(0, 10_000), (2_000, 3_000), (4_000, 5_000)], 10_000),  # nested
    ([(5_000, 6_000), (0, 1_000), (3_000, 3_000), (8_000, 7_000)], 2_000),  # unordered, empty, inverted
])
def test_covered_ms_is_the_union_of_intervals(times, ms):
    assert covered_ms(entries(["x"] * len(times), times)) == ms


def test_covered_ms_leaves_out_removed_entries():
    assert covered_ms(entries(["x", None], [(0, 1_000), (2_000, 5_000)])) == 1_000


def test_interval_density_is_covered_time_over_runtime():
    assert interval_density({"covered_ms": 30 * MIN}, 100) == 0.3
    assert interval_density({"covered_ms": 30 * MIN}, None) is None


def test_density_never_flags():
    # a track on screen for 1 % of the runtime raises nothing the paper has no threshold for
    assert audit(dict(summary(), covered_ms=MIN), ENGLISH, 100, T) == []


def test_summarize():
    track = entries(["a b", "c", "d e"], [(5_000, 6_000), (2_000, 9_000), (7_000, 8_000)])
    assert summarize(track) == {"first_start_ms": 2_000, "last_end_ms": 9_000, "n_entries": 3,
                                "n_tokens": count_tokens(track), "covered_ms": 7_000}
    assert summarize(entries([]))["n_tokens"] == 0


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
