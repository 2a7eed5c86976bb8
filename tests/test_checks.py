"""Timing and language layers of validators.checks: every boundary, aggregation, evidence."""

from __future__ import annotations

import json

import polars as pl
import pytest

from cinesub.records import LAYERS, Flag
from cinesub.settings import LANGUAGES, Thresholds
from validators.checks import (
    CHECK_LAYERS,
    UNITS,
    evaluated_layers,
    minutes_to_ms,
    run_checks,
)

MIN = 60_000
T = Thresholds()

ENGLISH = [
    "Where were you last night?",
    "I told you, I was working late at the office.",
    "You never work late on Fridays.",
    "Things change. The boss wanted the report by Monday.",
    "Then why did your phone go straight to voicemail?",
    "The battery died. I forgot the charger again.",
    "We need to talk about what happened at the wedding.",
    "There is nothing to talk about, it was a misunderstanding.",
    "Your brother doesn't think so.",
    "My brother says a lot of things when he has been drinking.",
    "Just promise me you will be honest with me from now on.",
    "I promise. Now can we please have dinner before it gets cold?",
    "The car is making that strange noise again.",
    "I will take it to the garage tomorrow morning.",
    "Don't forget to pick up the kids after school.",
    "Have you seen my keys anywhere? I left them on the table.",
    "They are in the kitchen, next to the coffee machine.",
    "We should visit your parents this weekend.",
    "Only if your mother stops asking when we are having another baby.",
    "She just wants to see her grandchildren more often.",
    "The weather is supposed to be terrible all week.",
    "Then we will stay inside and watch old movies.",
    "That sounds like the best plan I have heard in months.",
    "Listen to me carefully, we do not have much time left.",
]


def track(times: list[tuple[int, int]], contents: list[str] | None = None) -> pl.DataFrame:
    """An entries frame with English dialogue and the given (start_ms, end_ms) per block."""
    contents = contents or [ENGLISH[i % len(ENGLISH)] for i in range(len(times))]

    def stamp(ms: int) -> str:
        h, rest = divmod(ms, 3_600_000)
        m, rest = divmod(rest, 60_000)
        s, milli = divmod(rest, 1000)
        return f"{h:02d}:{m:02d}:{s:02d},{milli:03d}"

    return pl.DataFrame(
        {
            "index": list(range(1, len(times) + 1)),
            "timeframe": [f"{stamp(s)} --> {stamp(e)}" for s, e in times],
            "start_ms": [s for s, _ in times],
            "end_ms": [e for _, e in times],
            "content": contents,
        },
        schema={
            "index": pl.Int64,
            "timeframe": pl.String,
            "start_ms": pl.Int64,
            "end_ms": pl.Int64,
            "content": pl.String,
        },
    )


def regular(n: int = 60, first: int = 10_000, step: int = 90_000, dur: int = 2_500):
    """n blocks, one every `step` ms from `first`, each lasting `dur` ms."""
    return [(first + i * step, first + i * step + dur) for i in range(n)]


def layers(flags: list[Flag]) -> list[str]:
    return [f.layer for f in flags]


def only(flags: list[Flag], layer: str) -> Flag:
    found = [f for f in flags if f.layer == layer]
    assert len(found) == 1, layers(flags)
    return found[0]


def test_clean_track_raises_nothing():
    # 60 blocks over 90 minutes of a 100-minute film: coverage 0.89, no gaps, onset 0:10
    assert run_checks(track(regular()), "en", 100, T) == []


def test_layer_names_are_the_records_vocabulary():
    assert set(CHECK_LAYERS) <= set(LAYERS)
    assert set(UNITS) == set(CHECK_LAYERS)


# ---------------------------------------------------------------------------------------------
# chronology
# ---------------------------------------------------------------------------------------------
def test_chronology_flags_end_before_start_and_aggregates():
    times = regular()
    times[4] = (times[4][0], times[4][0] - 1_000)  # ends 1 s before it starts
    times[9] = (times[9][0], times[9][0] - 250)
    flags = run_checks(track(times), "en", 100, T)
    assert layers(flags) == ["chronology"]
    flag = flags[0]
    assert flag.severity == "review"
    assert flag.value == -1000 and flag.threshold == 0
    assert flag.evidence["indices"] == [5, 10]
    assert flag.evidence["durations_ms"] == [-1000, -250]
    assert flag.evidence["count"] == 2
    assert "index 5" in flag.detail


def test_zero_length_block_is_not_a_chronology_error():
    times = regular()
    times[3] = (times[3][0], times[3][0])
    assert run_checks(track(times), "en", 100, T) == []


# ---------------------------------------------------------------------------------------------
# block lifespan (>= 15 min flags; 14:59.999 does not)
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("duration", "flagged"),
    [(15 * MIN - 1, False), (15 * MIN, True), (15 * MIN + 1, True), (14 * MIN + 59_000, False)],
)
def test_block_lifespan_boundary(duration, flagged):
    times = regular(n=20, step=3 * MIN)
    start = times[5][0]
    times[5] = (start, start + duration)
    flags = run_checks(track(times), "en", 65, T)
    assert ("block_lifespan" in layers(flags)) is flagged
    if flagged:
        flag = only(flags, "block_lifespan")
        assert flag.evidence["indices"] == [6]
        assert flag.evidence["durations_ms"] == [duration]
        assert flag.evidence["threshold_ms"] == 900_000
        assert flag.value == pytest.approx(duration / MIN)
        assert flag.threshold == 15.0


def test_block_lifespan_one_flag_with_worst_value():
    times = regular(n=30, step=3 * MIN)
    times[2] = (times[2][0], times[2][0] + 16 * MIN)
    times[20] = (times[20][0], times[20][0] + 20 * MIN)
    flag = only(run_checks(track(times), "en", 100, T), "block_lifespan")
    assert flag.evidence["indices"] == [3, 21]
    assert flag.value == pytest.approx(20.0)
    assert "index 21" in flag.detail


# ---------------------------------------------------------------------------------------------
# delayed onset (> 5 min flags; 4:59 and exactly 5:00.000 do not)
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("first_start", "flagged"),
    [
        (4 * MIN + 59_000, False),  # 4:59
        (5 * MIN, False),  # 5:00.000 exactly
        (5 * MIN + 1, True),  # 5:00.001
        (12 * MIN, True),
    ],
)
def test_delayed_onset_boundary(first_start, flagged):
    flags = run_checks(track(regular(first=first_start, n=60)), "en", 100, T)
    assert ("delayed_onset" in layers(flags)) is flagged
    if flagged:
        flag = only(flags, "delayed_onset")
        assert flag.evidence == {"index": 1, "first_start_ms": first_start, "threshold_ms": 300_000}
        assert flag.value == pytest.approx(first_start / MIN)
        assert flag.threshold == 5.0


def test_delayed_onset_uses_the_earliest_subtitle_not_the_first_block():
    # block 1 at 6:00 but block 2 at 0:30 (a re-timed file): the film's subtitles start at 0:30
    times = regular(first=6 * MIN, n=60)
    times[1] = (30_000, 32_000)
    assert "delayed_onset" not in layers(run_checks(track(times), "en", 100, T))


# ---------------------------------------------------------------------------------------------
# runtime coverage (last end / runtime < 2/3 flags; exactly 2/3 does not; unknown runtime skips)
# ---------------------------------------------------------------------------------------------
def coverage_track(last_end: int) -> pl.DataFrame:
    """30 blocks spread evenly from 0:10 to a last block ending at `last_end`."""
    step = (last_end - 10_000) // 30
    times = [(10_000 + i * step, 10_000 + i * step + 2_000) for i in range(29)]
    times.append((last_end - 2_000, last_end))
    return track(times)


@pytest.mark.parametrize(
    ("last_end", "flagged"),
    [(60 * MIN, False), (60 * MIN - 1, True), (60 * MIN + 1, False), (45 * MIN, True)],
)
def test_runtime_coverage_boundary(last_end, flagged):
    # runtime 90 min: 2/3 of it is exactly 60:00.000
    flags = run_checks(coverage_track(last_end), "en", 90, T)
    assert ("runtime_coverage" in layers(flags)) is flagged
    if flagged:
        flag = only(flags, "runtime_coverage")
        assert flag.value == pytest.approx(last_end / (90 * MIN))
        assert flag.threshold == pytest.approx(2 / 3)
        assert flag.evidence == {"index": 30, "last_end_ms": last_end, "runtime_ms": 90 * MIN}


@pytest.mark.parametrize("runtime", [None, 0])
def test_runtime_coverage_not_evaluated_without_runtime(runtime):
    assert "runtime_coverage" not in evaluated_layers(runtime)
    assert run_checks(coverage_track(20 * MIN), "en", runtime, T) == []


def test_evaluated_layers():
    assert evaluated_layers(100) == list(CHECK_LAYERS)
    assert evaluated_layers(None) == [layer for layer in CHECK_LAYERS if layer != "runtime_coverage"]


def test_runtime_coverage_with_fractional_runtime():
    # 97.5 min runtime -> 5,850,000 ms; 2/3 of it is 3,900,000 ms exactly
    assert "runtime_coverage" not in layers(run_checks(coverage_track(3_900_000), "en", 97.5, T))
    assert "runtime_coverage" in layers(run_checks(coverage_track(3_899_999), "en", 97.5, T))


# ---------------------------------------------------------------------------------------------
# macro interval (gap >= 15 min flags; 14:59.999 and 14:59.000 do not)
# ---------------------------------------------------------------------------------------------
def gap_track(gap: int, first_start: int = 10_000) -> pl.DataFrame:
    first = [(first_start + i * MIN, first_start + i * MIN + 2_000) for i in range(30)]
    resume = first[-1][1] + gap
    second = [(resume + i * MIN, resume + i * MIN + 2_000) for i in range(30)]
    return track(first + second)


@pytest.mark.parametrize(
    ("gap", "flagged"),
    [(15 * MIN - 1, False), (14 * MIN + 59_000, False), (15 * MIN, True), (15 * MIN + 1, True)],
)
def test_macro_interval_boundary(gap, flagged):
    flags = run_checks(gap_track(gap), "en", 90, T)
    assert ("macro_interval" in layers(flags)) is flagged
    if flagged:
        flag = only(flags, "macro_interval")
        gap_evidence = flag.evidence["gaps"]
        assert len(gap_evidence) == 1
        assert gap_evidence[0]["before"] == 30 and gap_evidence[0]["after"] == 31
        assert gap_evidence[0]["gap_ms"] == gap
        assert flag.value == pytest.approx(gap / MIN)
        assert flag.threshold == 15.0


def test_macro_interval_aggregates_gaps_in_file_order():
    times = [(10_000 + i * MIN, 10_000 + i * MIN + 2_000) for i in range(10)]
    t = times[-1][1] + 16 * MIN
    times += [(t + i * MIN, t + i * MIN + 2_000) for i in range(10)]
    t = times[-1][1] + 25 * MIN
    times += [(t + i * MIN, t + i * MIN + 2_000) for i in range(10)]
    flag = only(run_checks(track(times), "en", 90, T), "macro_interval")
    assert [(g["before"], g["after"]) for g in flag.evidence["gaps"]] == [(10, 11), (20, 21)]
    assert flag.evidence["count"] == 2
    assert flag.value == pytest.approx(25.0)


def test_overlapping_blocks_are_not_gaps():
    times = regular()
    times[10] = (times[9][0] + 500, times[9][0] + 1_000)  # starts inside the previous block
    assert run_checks(track(times), "en", 100, T) == []


# ---------------------------------------------------------------------------------------------
# language consistency inside run_checks
# ---------------------------------------------------------------------------------------------
INDONESIAN = [
    "Kamu dari mana saja semalam?",
    "Aku sudah bilang, aku lembur di kantor.",
    "Kamu tidak pernah lembur pada hari Jumat.",
    "Bos ingin laporannya selesai hari Senin.",
    "Kenapa teleponmu langsung masuk ke kotak suara?",
    "Baterainya habis, aku lupa membawa pengisi daya.",
    "Kita harus bicara tentang kejadian di pesta pernikahan.",
    "Tidak ada yang perlu dibicarakan, itu cuma salah paham.",
    "Kakakmu tidak berpikir begitu.",
    "Janji padaku kamu akan jujur mulai sekarang.",
]


def test_language_mismatch_flag_from_run_checks():
    times = regular()
    contents = [INDONESIAN[i % len(INDONESIAN)] for i in range(len(times))]
    flags = run_checks(track(times, contents), "en", 100, T)
    flag = only(flags, "language_mismatch")
    assert flag.severity == "review"
    assert flag.value < T.language_min_share
    assert flag.evidence["detected"] == "id"
    assert flag.evidence["expected"] == "en"


# ---------------------------------------------------------------------------------------------
# thresholds come from settings; flags are well formed
# ---------------------------------------------------------------------------------------------
def test_thresholds_come_from_settings():
    strict = Thresholds(macro_interval_min=10, delayed_onset_min=1)
    entries = gap_track(12 * MIN, first_start=2 * MIN)
    flags = run_checks(entries, "en", 90, strict)
    assert layers(flags) == ["delayed_onset", "macro_interval"]
    assert only(flags, "macro_interval").evidence["threshold_ms"] == minutes_to_ms(10)
    assert only(flags, "delayed_onset").threshold == 1
    assert run_checks(entries, "en", 90, T) == []


def test_every_flag_is_complete_and_json_serialisable():
    times = regular(first=6 * MIN, n=40)
    times[3] = (times[3][0], times[3][0] - 10)
    times[7] = (times[7][0], times[7][0] + 16 * MIN)
    times[20] = (times[20][0] + 20 * MIN, times[20][0] + 20 * MIN + 1_000)
    flags = run_checks(track(times), "en", 200, T)
    assert layers(flags) == [
        "chronology",
        "block_lifespan",
        "delayed_onset",
        "runtime_coverage",
        "macro_interval",
    ]
    for flag in flags:
        assert flag.severity == "review"
        assert flag.detail and flag.value is not None and flag.threshold is not None
        json.dumps(flag.evidence)
        json.dumps(flag.model_dump(mode="json"))


def test_empty_track_raises_nothing():
    assert run_checks(track([]), "en", 90, T) == []


def test_minutes_to_ms_is_exact():
    assert minutes_to_ms(15) == 900_000
    assert minutes_to_ms(5.0) == 300_000
    assert minutes_to_ms(97.5) == 5_850_000


# ---------------------------------------------------------------------------------------------
# real files: exactly the genuine timing defects, nothing else
# ---------------------------------------------------------------------------------------------
from _realdata import manifest_codecs, read_track  # noqa: E402


@pytest.mark.realdata
def test_real_files_raise_exactly_their_timing_defects(realdata_dir):
    codecs = manifest_codecs(realdata_dir)
    found, repeated = {}, {}
    for name, codec in sorted(codecs.items()):
        language = name.split("/")[0]
        if language not in LANGUAGES:
            continue
        flags = run_checks(read_track(realdata_dir / "srt" / name, codec), language, None, T)
        repeated.update({name: f for f in flags if f.layer == "index_duplicate"})  # structure, not timing
        flags = [f for f in flags if f.layer != "index_duplicate"]
        if flags:
            found[name] = flags
    assert sorted(repeated) == [  # tests/test_index_duplicate.py has the details
        "ar/ar__this_means_war_2012__cp1256_ORIGINAL.srt",
        "ar/ar__this_means_war_2012__utf8_CONVERTED_same_sub.srt",
        "fa/fa__manhunt_2017__utf16le_bom.srt",
    ]
    assert sorted(found) == [
        "id/id__fireworks_2017__utf8sig_crlf.srt",
        "vi/vi__blade_runner_2049_2017__utf8sig_crlf.srt",
    ]
    # the last Vietnamese cue, a team credit, is displayed for an hour (02:32:46 --> 03:32:46)
    (lifespan,) = found["vi/vi__blade_runner_2049_2017__utf8sig_crlf.srt"]
    assert lifespan.layer == "block_lifespan"
    assert lifespan.evidence["indices"] == [995] and lifespan.value == pytest.approx(60.0)
    # the Indonesian file appends sign captions after the dialogue, restarting at 00:00:38,
    # with two gaps of more than 15 minutes between adjacent captions
    (gaps,) = found["id/id__fireworks_2017__utf8sig_crlf.srt"]
    assert gaps.layer == "macro_interval"
    assert [(g["before"], g["after"], g["gap_ms"]) for g in gaps.evidence["gaps"]] == [
        (1173, 1174, 1_849_120),
        (1240, 1241, 1_152_760),
    ]
