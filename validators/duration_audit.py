"""Duration-coverage audit of a track against the English track of the same film (SPEC A5,
paper A.9.1, Table 12). These layers open inspection; they never delete.

Each side is summarised by a dict ``{first_start_ms, last_end_ms, n_entries, n_tokens}``
(:func:`summarize` builds it from an entries frame). Layers (thresholds from
:class:`~cinesub.settings.Thresholds`, all severity ``review``):

| layer | rule | needs |
|---|---|---|
| ``span_ratio`` | (last end - first start) / runtime < 0.65 | runtime |
| ``token_ratio`` | tokens / English tokens < 0.60 | English |
| ``entry_ratio`` | entries / English entries < 0.70 | English |
| ``span_vs_english`` | abs(span - English span) / English span > 0.25 | English |

Ratios are compared as exact fractions (integer numerators and denominators; the float setting
is read as the simple fraction it stands for), so a ratio equal to its threshold is not flagged.
The audit is never run for the English track itself (the caller skips it); a missing English
track or runtime simply leaves the layers that need it unevaluated (:func:`audited_layers`).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import polars as pl

from cinesub.records import Flag
from cinesub.settings import Thresholds

from validators._text import strip_markup
from validators.checks import exact_fraction, minutes_to_ms, runtime_known

AUDIT_LAYERS: tuple[str, ...] = ("span_ratio", "token_ratio", "entry_ratio", "span_vs_english")


def count_tokens(entries: pl.DataFrame) -> int:
    """Number of whitespace-separated tokens in the track's dialogue.

    Definition: in each entry's ``content``, HTML-style tags (``<i>``, ``<font ...>``), ASS
    override blocks (``{\\an8}``), bidi/zero-width controls and tatweel are removed
    (:func:`validators._text.strip_markup`); a token is then a maximal run of non-whitespace
    characters (punctuation-only runs such as ``-`` or ``...`` count, as in the paper's
    whitespace tokenisation). Computed with one vectorised ``str.count_matches``.
    """
    if entries.height == 0:
        return 0
    total = entries.select(
        strip_markup(pl.col("content")).str.count_matches(r"\S+").sum()
    ).item()
    return int(total or 0)


def summarize(entries: pl.DataFrame) -> dict[str, int]:
    """The audit summary of one track: ``first_start_ms, last_end_ms, n_entries, n_tokens``."""
    if entries.height == 0:
        return {"first_start_ms": 0, "last_end_ms": 0, "n_entries": 0, "n_tokens": 0}
    row = entries.select(
        pl.col("start_ms").min().alias("first_start_ms"),
        pl.col("end_ms").max().alias("last_end_ms"),
    ).row(0, named=True)
    return {
        "first_start_ms": int(row["first_start_ms"]),
        "last_end_ms": int(row["last_end_ms"]),
        "n_entries": entries.height,
        "n_tokens": count_tokens(entries),
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
