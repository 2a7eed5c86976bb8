"""Kids-in-Mind reference counts vs the subtitle-grounded language-safety gold (SPEC A9).

The KIM LANGUAGE paragraph (``LANGUAGE 7 - about 25 F-words and its derivatives, 9 scatological
terms, 6 anatomical terms, 12 mild obscenities, 8 religious exclamations ...``) is parsed by
:func:`extractors.sources.kim.parse_kim_language_counts` into five prose counts. They map onto the
four SPEC A9 categories as follows (:data:`KIM_TO_CATEGORY`):

=====================  ====================================
KIM prose count        SPEC A9 category
=====================  ====================================
``f_words``            ``strongProfanity``
``scatological``       ``crudeBodilyLanguage``
``anatomical``         ``crudeBodilyLanguage`` (summed)
``mild``               ``mildObscenity``
``religious``          ``religiousProfanityAndExclamation``
=====================  ====================================

A count KIM does not print is 0; a film without a KIM LANGUAGE paragraph at all has no reference
(``kim_counts=None``: ``kim_count`` and ``difference`` are ``None``, never large). :func:`discrepancies` compares, per category, the subtitle
``occurrenceCount`` with the mapped KIM count: ``difference = subtitle_count - kim_count`` and
``large`` when ``|difference| > large_threshold`` (``settings.safety.discrepancy_large``). The two
sources are never forced to agree: the report only describes how far apart they are, with the
first few subtitle evidence indices so a reviewer can look at the lines.

Pure: no I/O.
"""

from __future__ import annotations

from typing import Any, Mapping

from validators.safety import CATEGORIES

#: KIM prose count key -> SPEC A9 category (several keys may feed one category; they are summed).
KIM_TO_CATEGORY: dict[str, str] = {
    "f_words": "strongProfanity",
    "scatological": "crudeBodilyLanguage",
    "anatomical": "crudeBodilyLanguage",
    "mild": "mildObscenity",
    "religious": "religiousProfanityAndExclamation",
}

#: how many evidence indices a discrepancy row carries as a sample
SAMPLE_SIZE = 5


def kim_category_counts(kim_counts: Mapping[str, int] | None) -> dict[str, int]:
    """The five KIM prose counts summed into the four SPEC A9 categories (missing keys → 0)."""
    out = {cat: 0 for cat in CATEGORIES}
    for key, value in (kim_counts or {}).items():
        if key not in KIM_TO_CATEGORY:
            raise ValueError(f"unknown KIM count key {key!r}; known: {', '.join(KIM_TO_CATEGORY)}")
        out[KIM_TO_CATEGORY[key]] += int(value or 0)
    return out


def _subtitle(entry: Any) -> tuple[int, list[int]]:
    """(occurrenceCount, evidenceSubtitleIndices) from a category result (dict or CategoryResult)."""
    if isinstance(entry, Mapping):
        return int(entry["occurrenceCount"]), [int(i) for i in entry.get("evidenceSubtitleIndices", [])]
    if isinstance(entry, int):
        return entry, []
    return int(entry.occurrenceCount), [int(i) for i in entry.evidenceSubtitleIndices]


def discrepancies(
    subtitle_categories: Mapping[str, Any],
    kim_counts: Mapping[str, int] | None,
    large_threshold: int,
    *,
    sample_size: int = SAMPLE_SIZE,
) -> list[dict[str, Any]]:
    """One row per SPEC A9 category, in release order.

    ``subtitle_categories``: ``safety_to_json(scan(...))`` (or ``SafetyResult.categories``; a
    plain int count is accepted too). ``kim_counts``: the five prose counts of
    :func:`~extractors.sources.kim.parse_kim_language_counts`, or ``None`` when the film has no
    KIM language summary. Each row:
    ``{category, subtitle_count, kim_count, difference, large, sample_evidence_indices}``.
    """
    if large_threshold < 0:
        raise ValueError("large_threshold must be >= 0")
    missing = [c for c in CATEGORIES if c not in subtitle_categories]
    if missing:
        raise ValueError(f"subtitle categories missing: {', '.join(missing)}")
    kim = kim_category_counts(kim_counts) if kim_counts is not None else None
    rows = []
    for cat in CATEGORIES:
        count, indices = _subtitle(subtitle_categories[cat])
        diff = None if kim is None else count - kim[cat]
        rows.append({
            "category": cat,
            "subtitle_count": count,
            "kim_count": None if kim is None else kim[cat],
            "difference": diff,
            "large": diff is not None and abs(diff) > large_threshold,
            "sample_evidence_indices": sorted(indices)[:sample_size],
        })
    return rows
