"""Structure, timing and language verification layers of one subtitle track (SPEC A5).

Input: the track's entries as a polars frame (``index``, ``timeframe``, ``start_ms``, ``end_ms``,
``content``) in file order. Output: :class:`~cinesub.records.Flag` objects, at most one per layer
(several occurrences are aggregated into the evidence; ``value`` is the worst one). Flags open
review; nothing here deletes or changes entries.

| layer | rule (default threshold, from :class:`~cinesub.settings.Thresholds`) | value / threshold unit |
|---|---|---|
| ``index_duplicate`` | an SRT index occurs more than once in the track (SPEC A4: indices are sequential; they are kept as found, never renumbered) | count: entries beyond the first of each repeated index / 0 |
| ``chronology`` | a block ends before it starts (``end_ms < start_ms``) | ms: worst ``end - start`` / 0 |
| ``block_lifespan`` | a block lasts >= 15 min | minutes |
| ``delayed_onset`` | the earliest subtitle starts after 5 min (5:00.000 is not flagged) | minutes |
| ``runtime_coverage`` | latest end / runtime < 2/3 (only with a known runtime) | ratio |
| ``macro_interval`` | next block's start - previous block's end >= 15 min, file order | minutes |
| ``language_mismatch`` | share of the expected language < 0.80 (:mod:`validators.language`) | share |

Boundaries are exact: minutes are converted once to integer milliseconds
(``round(minutes * 60000)``; 15 min = 900,000 ms) and every comparison is on integers; the
coverage ratio is compared as an exact fraction. All per-entry work is polars expressions; only
the (few) offending rows are pulled into Python to build evidence.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import polars as pl

from cinesub.records import CHECK_LAYERS, Flag
from cinesub.settings import Thresholds

from validators import language as _language

#: unit of ``Flag.value`` and ``Flag.threshold`` per layer
UNITS: dict[str, str] = {
    "index_duplicate": "count",
    "chronology": "ms",
    "block_lifespan": "min",
    "delayed_onset": "min",
    "runtime_coverage": "ratio",
    "macro_interval": "min",
    "language_mismatch": "share",
}
#: evidence lists longer than this are truncated (the full count stays in ``evidence["count"]``)
MAX_EVIDENCE_ITEMS = 200


def minutes_to_ms(minutes: float) -> int:
    """Minutes as integer milliseconds (the unit of every timing comparison)."""
    return int(round(minutes * 60_000))


def exact_fraction(value: float) -> Fraction:
    """The simple fraction a float setting stands for (0.6666666666666666 -> 2/3)."""
    return Fraction(value).limit_denominator(1_000_000)


def runtime_known(runtime_min: float | None) -> bool:
    return runtime_min is not None and runtime_min > 0


def evaluated_layers(runtime_min: float | None) -> list[str]:
    """The layers :func:`run_checks` evaluates: all of them, minus ``runtime_coverage`` when
    the runtime is unknown (None or not positive)."""
    return [
        layer
        for layer in CHECK_LAYERS
        if layer != "runtime_coverage" or runtime_known(runtime_min)
    ]


def _fmt_ms(ms: int) -> str:
    sign = "-" if ms < 0 else ""
    ms = abs(int(ms))
    h, rest = divmod(ms, 3_600_000)
    m, rest = divmod(rest, 60_000)
    s, milli = divmod(rest, 1000)
    return f"{sign}{h}:{m:02d}:{s:02d}.{milli:03d}"


def _truncate(items: list[Any]) -> tuple[list[Any], bool]:
    return items[:MAX_EVIDENCE_ITEMS], len(items) > MAX_EVIDENCE_ITEMS


def check_index_duplicate(frame: pl.DataFrame) -> Flag | None:
    """A structure finding (severity review: the chain moves on to another candidate and a
    curator sees it): SRT indices that occur more than once. Every entry is kept and stored (keyed
    by its position in the file); the evidence names each repeated index with the 0-based
    positions of its entries."""
    dups = (
        frame.select("index", pl.int_range(0, pl.len(), dtype=pl.Int64).alias("position"))
        .group_by("index", maintain_order=True)
        .agg(pl.col("position"))
        .filter(pl.col("position").list.len() > 1)
        .sort("index")
    )
    if dups.height == 0:
        return None
    extra = int(dups["position"].list.len().sum()) - dups.height
    rows, truncated = _truncate(dups.rows())
    indices = [int(i) for i, _ in rows]
    return Flag(
        layer="index_duplicate",
        severity="review",
        detail=(
            f"{dups.height} SRT index(es) occur more than once ({extra} repeated entr(ies)); "
            f"e.g. index {indices[0]} at positions {list(rows[0][1])[:5]}"
        ),
        value=float(extra),
        threshold=0.0,
        evidence={
            "count": dups.height,
            "repeated_entries": extra,
            "indices": indices,
            "positions": {str(i): [int(p) for p in pos][:20] for i, pos in rows},
            "truncated": truncated,
        },
    )


def _blocks_flag(layer: str, bad: pl.DataFrame, detail: str, value: float, threshold: float,
                 **extra: Any) -> Flag:
    """The review flag of the blocks in ``bad`` (columns index, _dur): their count, indices and
    durations (truncated), then ``extra`` evidence."""
    indices, truncated = _truncate(bad["index"].to_list())
    durations, _ = _truncate(bad["_dur"].to_list())
    return Flag(layer=layer, severity="review", detail=detail, value=value, threshold=threshold,
                evidence={"count": bad.height, "indices": indices, "durations_ms": durations, **extra,
                          "truncated": truncated})


def _index_of(bad: pl.DataFrame, duration: int) -> int:
    return int(bad.filter(pl.col("_dur") == duration)["index"][0])


def check_chronology(frame: pl.DataFrame) -> Flag | None:
    bad = frame.filter(pl.col("_dur") < 0).select("index", "_dur")
    if bad.height == 0:
        return None
    worst = int(bad["_dur"].min())
    detail = (f"{bad.height} block(s) end before they start; worst at index {_index_of(bad, worst)} "
              f"(end - start = {worst} ms)")
    return _blocks_flag("chronology", bad, detail, float(worst), 0.0)


def check_block_lifespan(frame: pl.DataFrame, thresholds: Thresholds) -> Flag | None:
    limit = minutes_to_ms(thresholds.block_lifespan_min)
    bad = frame.filter(pl.col("_dur") >= limit).select("index", "timeframe", "_dur")
    if bad.height == 0:
        return None
    worst = int(bad["_dur"].max())
    detail = (f"{bad.height} block(s) last {thresholds.block_lifespan_min:g} min or longer; "
              f"longest at index {_index_of(bad, worst)} lasts {_fmt_ms(worst)}")
    return _blocks_flag("block_lifespan", bad, detail, worst / 60_000, thresholds.block_lifespan_min,
                        timeframes=_truncate(bad["timeframe"].to_list())[0], threshold_ms=limit)


def check_delayed_onset(frame: pl.DataFrame, thresholds: Thresholds) -> Flag | None:
    limit = minutes_to_ms(thresholds.delayed_onset_min)
    first = frame.sort("start_ms", maintain_order=True).head(1)
    first_start = int(first["start_ms"][0])
    if first_start <= limit:
        return None
    return Flag(
        layer="delayed_onset",
        severity="review",
        detail=(
            f"the first subtitle starts at {_fmt_ms(first_start)}, after "
            f"{thresholds.delayed_onset_min:g} min"
        ),
        value=first_start / 60_000,
        threshold=thresholds.delayed_onset_min,
        evidence={
            "index": int(first["index"][0]),
            "first_start_ms": first_start,
            "threshold_ms": limit,
        },
    )


def check_runtime_coverage(
    frame: pl.DataFrame, runtime_min: float | None, thresholds: Thresholds
) -> Flag | None:
    if not runtime_known(runtime_min):
        return None
    runtime_ms = minutes_to_ms(runtime_min)
    last = frame.sort("end_ms", descending=True, maintain_order=True).head(1)
    last_end = int(last["end_ms"][0])
    ratio = Fraction(max(last_end, 0), runtime_ms)
    minimum = exact_fraction(thresholds.runtime_coverage_min_ratio)
    if ratio >= minimum:
        return None
    return Flag(
        layer="runtime_coverage",
        severity="review",
        detail=(
            f"the last subtitle ends at {_fmt_ms(last_end)}, {float(ratio):.1%} of the "
            f"{runtime_min:g} min runtime (below {float(minimum):.1%})"
        ),
        value=float(ratio),
        threshold=thresholds.runtime_coverage_min_ratio,
        evidence={
            "index": int(last["index"][0]),
            "last_end_ms": last_end,
            "runtime_ms": runtime_ms,
        },
    )


def check_macro_interval(frame: pl.DataFrame, thresholds: Thresholds) -> Flag | None:
    limit = minutes_to_ms(thresholds.macro_interval_min)
    gaps = frame.select(
        pl.col("index").alias("before"),
        pl.col("index").shift(-1).alias("after"),
        pl.col("end_ms").alias("gap_start_ms"),
        (pl.col("start_ms").shift(-1) - pl.col("end_ms")).alias("gap_ms"),
    ).filter(pl.col("gap_ms") >= limit)
    if gaps.height == 0:
        return None
    worst = int(gaps["gap_ms"].max())
    rows, truncated = _truncate(gaps.to_dicts())
    worst_row = gaps.filter(pl.col("gap_ms") == worst).row(0, named=True)
    return Flag(
        layer="macro_interval",
        severity="review",
        detail=(
            f"{gaps.height} gap(s) of {thresholds.macro_interval_min:g} min or more between "
            f"adjacent blocks; longest {_fmt_ms(worst)} between index {worst_row['before']} "
            f"and {worst_row['after']}"
        ),
        value=worst / 60_000,
        threshold=thresholds.macro_interval_min,
        evidence={
            "count": gaps.height,
            "gaps": [{k: int(v) for k, v in row.items()} for row in rows],
            "threshold_ms": limit,
            "truncated": truncated,
        },
    )


def run_checks(
    entries: pl.DataFrame,
    language: str,
    runtime_min: float | None,
    thresholds: Thresholds,
) -> list[Flag]:
    """Every layer of :func:`evaluated_layers` over one track; flags in ``CHECK_LAYERS`` order.

    An empty track raises nothing here (the parser's ``structure`` layer owns empty files).
    """
    return run_checks_batch(entries.with_columns(pl.lit(0).alias(TRACK)), {0: (language, runtime_min)},
                            thresholds)[0]


#: the track key of :func:`run_checks_batch` (the language layer's)
TRACK = _language.TRACK


def run_checks_batch(
    entries: pl.DataFrame,
    tracks: dict[Any, tuple[str, float | None]],
    thresholds: Thresholds,
) -> dict[Any, list[Flag]]:
    """:func:`run_checks` of many tracks at once: ``entries`` holds every track's entries, each
    track's rows contiguous and in file order, column :data:`TRACK` naming the track;
    ``tracks``: track -> (language, runtime_min). Per track exactly :func:`run_checks`'s flags.

    One polars query aggregates each track's worst values (duplicate indices, shortest and
    longest block, first start, last end, longest gap); the layer functions above then run only
    on the tracks whose aggregate crosses their threshold (the same comparisons, so a track they
    skip would have had no flag), to build the flag and its evidence. The language layer runs
    for all tracks in one batch (:func:`validators.language.check_languages`)."""
    out: dict[Any, list[Flag]] = {track: [] for track in tracks}
    if entries.height == 0:
        return out
    frame = entries.select(
        pl.col(TRACK),
        pl.col("index").cast(pl.Int64),
        pl.col("timeframe"),
        pl.col("start_ms").cast(pl.Int64),
        pl.col("end_ms").cast(pl.Int64),
    ).with_columns((pl.col("end_ms") - pl.col("start_ms")).alias("_dur"))
    gap = (pl.col("start_ms").shift(-1).over(TRACK) - pl.col("end_ms"))
    worst = frame.group_by(TRACK, maintain_order=True).agg(
        pl.len().alias("n"),
        (pl.col("index").n_unique() < pl.len()).alias("dup"),
        pl.col("_dur").min().alias("min_dur"),
        pl.col("_dur").max().alias("max_dur"),
        pl.col("start_ms").min().alias("first_start"),
        pl.col("end_ms").max().alias("last_end"),
        gap.max().alias("max_gap"),
    )
    block = minutes_to_ms(thresholds.block_lifespan_min)
    onset = minutes_to_ms(thresholds.delayed_onset_min)
    macro = minutes_to_ms(thresholds.macro_interval_min)
    minimum = exact_fraction(thresholds.runtime_coverage_min_ratio)
    offset = 0
    for track, n, dup, min_dur, max_dur, first_start, last_end, max_gap in worst.rows():
        runtime_min = tracks[track][1]
        one = frame.slice(offset, n)
        offset += n
        flags = [
            check_index_duplicate(one) if dup else None,
            check_chronology(one) if min_dur < 0 else None,
            check_block_lifespan(one, thresholds) if max_dur >= block else None,
            check_delayed_onset(one, thresholds) if first_start > onset else None,
            check_runtime_coverage(one, runtime_min, thresholds)
            if runtime_known(runtime_min) and Fraction(max(last_end, 0), minutes_to_ms(runtime_min)) < minimum
            else None,
            check_macro_interval(one, thresholds) if max_gap is not None and max_gap >= macro else None,
        ]
        out[track] = [flag for flag in flags if flag is not None]
    present = {track: tracks[track][0] for track in worst[TRACK].to_list()}
    for track, flag in _language.check_languages(entries, present, thresholds).items():
        if flag is not None:
            out[track].append(flag)
    return out
