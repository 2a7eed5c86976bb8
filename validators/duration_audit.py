"""Duration-coverage audit of a track against the English track of the same film (SPEC A5,
paper A.9.1, Table 12). These layers open inspection; they never delete.

Each side is summarised by a dict ``{first_start_ms, last_end_ms, n_entries, n_tokens,
covered_ms}`` (:func:`summarize` builds it from an entries frame). The measures, as A.9.1 lists
them: temporal span / runtime, subtitle-interval density / runtime, token ratio to English and
entry ratio to English. Layers (thresholds from :class:`~cinesub.settings.Thresholds`, all
severity ``review``):

| layer | rule | needs | source of the threshold |
|---|---|---|---|
| ``span_ratio`` | (last end - first start) / runtime < 0.65 | runtime | A.9.1 |
| ``token_ratio`` | tokens / English tokens < 0.60 | English | A.9.1, Table 12 |
| ``entry_ratio`` | entries / English entries < 0.70 | English | A.9.1, Table 12 |
| ``span_vs_english`` | abs(span - English span) / English span > 0.25 | English | a setting (A.9.1 says "differs unusually", no number) |

Tokens are what Table 12 and Figure 7 count: ``o200k_base`` tokens of the prompt-formatted
track (:func:`count_tokens`; the same text and encoding as the release's Table 9 input
tokens, warehouse/tokens.py). The interval density (:func:`covered_ms`,
:func:`interval_density`) is the share of the runtime during which at least one subtitle is on
screen (the union of the entries' ``[start, end)`` intervals); the paper measures it but gives no
threshold for it, so it is measured and reported (the release's ``stats/duration_audit`` table and
the Table 12 query in docs/duration_audit.md) and never flags.

Ratios are compared as exact fractions (integer numerators and denominators; the float setting
is read as the simple fraction it stands for), so a ratio equal to its threshold is not flagged.
The audit is never run for the English track itself (the caller skips it); a missing English
track or runtime simply leaves the layers that need it unevaluated (:func:`audited_layers`).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import polars as pl

from cinesub.records import Flag
from cinesub.settings import Thresholds

from validators._text import strip_markup
from validators.checks import exact_fraction, minutes_to_ms, runtime_known

#: The encoding Table 12 / Figure 7 count tokens with (tiktoken's GPT-4o encoding).
TOKEN_ENCODING = "o200k_base"

AUDIT_LAYERS: tuple[str, ...] = ("span_ratio", "token_ratio", "entry_ratio", "span_vs_english")


def count_words(entries: pl.DataFrame) -> int:
    """Number of whitespace-separated words in the track's dialogue (a cheap per-candidate
    size figure, ``tracks.n_tokens``; *not* the audit's token count, see :func:`count_tokens`).

    Definition: in each entry's ``content``, HTML-style tags (``<i>``, ``<font ...>``), ASS
    override blocks (``{\\an8}``), bidi/zero-width controls and tatweel are removed
    (:func:`validators._text.strip_markup`); a word is then a maximal run of non-whitespace
    characters (punctuation-only runs such as ``-`` or ``...`` count). Computed with one
    vectorised ``str.count_matches``.
    """
    if entries.height == 0:
        return 0
    total = entries.select(
        strip_markup(pl.col("content")).str.count_matches(r"\S+").sum()
    ).item()
    return int(total or 0)


@functools.lru_cache(maxsize=1)
def _encoding() -> Any:
    # Loaded once per process, on first use (a few seconds): importing this module stays cheap.
    from warehouse.tokens import load_encoding

    return load_encoding(TOKEN_ENCODING)


def prompt_text(entries: pl.DataFrame) -> str:
    """The prompt-formatted text of a track whose tokens Table 12 counts: the JSON array of its
    released entries (``content`` not null), in release order (``start_ms``, then ``index``), as
    :func:`warehouse.tokens.format_track` writes it (the film entity's ``subtitles[].entries``)."""
    from warehouse.tokens import format_track

    kept = entries.filter(pl.col("content").is_not_null())
    if "start_ms" in kept.columns:
        kept = kept.sort(["start_ms", "index"], maintain_order=True)
    return format_track(kept.select("index", "timeframe", "content").iter_rows(named=True))


def count_texts(texts: Sequence[str]) -> list[int]:
    """``o200k_base`` token counts of prompt texts (ordinary encoding; one batch call)."""
    if not texts:
        return []
    threads = max(1, min(8, os.cpu_count() or 1))  # tiktoken encodes without the GIL
    return [len(ids) for ids in _encoding().encode_ordinary_batch(list(texts), num_threads=threads)]


def count_tokens(entries: pl.DataFrame) -> int:
    """``o200k_base`` tokens of the prompt-formatted track (:func:`prompt_text`), as Table 12
    counts them: per track, the whole JSON payload (index, timeframe and content of every
    entry), no instruction text or chat template."""
    return count_texts([prompt_text(entries)])[0]


def covered_ms(entries: pl.DataFrame) -> int:
    """Milliseconds during which at least one entry is on screen: the length of the union of the
    entries' ``[start_ms, end_ms)`` intervals (overlaps counted once, empty or inverted entries
    add nothing). Entries with a null ``content`` (removed by sanitization) are left out when the
    column is present."""
    if "content" in entries.columns:
        entries = entries.filter(pl.col("content").is_not_null())
    iv = entries.select("start_ms", "end_ms").filter(pl.col("end_ms") > pl.col("start_ms"))
    if iv.height == 0:
        return 0
    iv = iv.sort(["start_ms", "end_ms"])
    # A new block starts where an interval begins after every earlier interval has ended.
    out = iv.with_columns(pl.col("end_ms").cum_max().shift(1).alias("reach")).with_columns(
        (pl.col("reach").is_null() | (pl.col("start_ms") > pl.col("reach"))).cum_sum().alias("block")
    ).group_by("block").agg((pl.col("end_ms").max() - pl.col("start_ms").min()).alias("ms"))
    return int(out["ms"].sum())


def interval_density(summary: dict[str, Any], runtime_min: float | None) -> float | None:
    """Subtitle-interval density / runtime: ``covered_ms / runtime`` (None without a runtime)."""
    if not runtime_known(runtime_min) or summary.get("covered_ms") is None:
        return None
    return float(Fraction(int(summary["covered_ms"]), minutes_to_ms(runtime_min)))


def summarize(entries: pl.DataFrame) -> dict[str, int]:
    """The audit summary of one track: ``first_start_ms, last_end_ms, n_entries, n_tokens,
    covered_ms`` (``n_tokens``: :func:`count_tokens`)."""
    if entries.height == 0:
        return {"first_start_ms": 0, "last_end_ms": 0, "n_entries": 0, "n_tokens": 0, "covered_ms": 0}
    row = entries.select(
        pl.col("start_ms").min().alias("first_start_ms"),
        pl.col("end_ms").max().alias("last_end_ms"),
    ).row(0, named=True)
    return {
        "first_start_ms": int(row["first_start_ms"]),
        "last_end_ms": int(row["last_end_ms"]),
        "n_entries": entries.height,
        "n_tokens": count_tokens(entries),
        "covered_ms": covered_ms(entries),
    }


def audited_layers(runtime_min: float | None, english: dict[str, Any] | None) -> list[str]:
    """The layers :func:`audit` evaluates for the given inputs."""
    layers = []
    if runtime_known(runtime_min):
        layers.append("span_ratio")
    if english is not None:
        layers += ["token_ratio", "entry_ratio", "span_vs_english"]
    return layers


def _span(summary: dict[str, Any]) -> int:
    return max(int(summary["last_end_ms"]) - int(summary["first_start_ms"]), 0)


def _ratio_flag(
    layer: str, ratio: Fraction, threshold: float, detail: str, evidence: dict[str, Any]
) -> Flag:
    return Flag(
        layer=layer,
        severity="review",
        detail=detail,
        value=float(ratio),
        threshold=threshold,
        evidence=evidence,
    )


def audit(
    track: dict[str, Any],
    english: dict[str, Any] | None,
    runtime_min: float | None,
    thresholds: Thresholds,
) -> list[Flag]:
    """Flags of the duration-coverage audit (see the module docstring)."""
    flags: list[Flag] = []
    span = _span(track)
    if runtime_known(runtime_min):
        runtime_ms = minutes_to_ms(runtime_min)
        ratio = Fraction(span, runtime_ms)
        if ratio < exact_fraction(thresholds.span_ratio_min):
            flags.append(
                _ratio_flag(
                    "span_ratio",
                    ratio,
                    thresholds.span_ratio_min,
                    f"subtitles span {float(ratio):.1%} of the {runtime_min:g} min runtime "
                    f"(below {thresholds.span_ratio_min:.0%})",
                    {"span_ms": span, "runtime_ms": runtime_ms},
                )
            )
    if english is None:
        return flags
    for layer, key, minimum, noun in (
        ("token_ratio", "n_tokens", thresholds.token_ratio_min, "tokens"),
        ("entry_ratio", "n_entries", thresholds.entry_ratio_min, "entries"),
    ):
        reference = int(english[key])
        if reference <= 0:
            continue
        ratio = Fraction(int(track[key]), reference)
        if ratio < exact_fraction(minimum):
            flags.append(
                _ratio_flag(
                    layer,
                    ratio,
                    minimum,
                    f"{track[key]} {noun} against {reference} in the English track "
                    f"({float(ratio):.1%}, below {minimum:.0%})",
                    {key: int(track[key]), f"english_{key}": reference},
                )
            )
    english_span = _span(english)
    if english_span > 0:
        diff = Fraction(abs(span - english_span), english_span)
        if diff > exact_fraction(thresholds.span_vs_english_max_diff):
            flags.append(
                _ratio_flag(
                    "span_vs_english",
                    diff,
                    thresholds.span_vs_english_max_diff,
                    f"subtitle span {span / 60000:.1f} min differs from the English span "
                    f"{english_span / 60000:.1f} min by {float(diff):.1%} (more than "
                    f"{thresholds.span_vs_english_max_diff:.0%})",
                    {"span_ms": span, "english_span_ms": english_span},
                )
            )
    return flags
