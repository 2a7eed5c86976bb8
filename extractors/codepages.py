"""Choosing between legacy code pages that all decode a file (pure functions; used by
:mod:`extractors.decode`).

**Contrast evidence.** Two code pages that both decode a file strictly differ only at some byte
values (cp1250 and ISO-8859-16 at 0x80-0xBF and a few letters; cp1256 and ISO-8859-6 at most
Arabic letters; cp1252 and ISO-8859-15 at 0x80-0x9F and eight symbols). :func:`contrast` looks at
exactly those byte values, over the *whole* body (not a sample), and counts for each reading:

* **impossible** characters: a control or unassigned character (C1 controls are what an ISO-8859
  code page makes of Windows punctuation), or a letter the expected language does not use (``Ą``
  or ``Ł`` in Romanian, Latin letters inside Arabic);
* **typical** characters: the language's own typography that the other reading lacks (Romanian
  quotes „ ” — 0x84/0x94 in cp1250, 0xA5/0xB5 in ISO-8859-16; curly quotes, dashes, ellipsis, €;
  the Arabic comma and question mark).

:func:`rank` orders readings by (impossible, -typical); the first wins when its score is strictly
better than the runner-up's, otherwise the choice is **ambiguous** (e.g. a Romanian file whose
only non-ASCII bytes are ș/ț or ş/ţ: 0xBA/0xFE are ş/ţ in cp1250 and ș/ț in ISO-8859-16, and
both are Romanian) and the decoder flags ``encoding_ambiguous`` with both readings as evidence.

**Best strict reading** (:func:`plausibility`), for a file no expected or corpus code page
verifies (a Serbian cp1251 file announced as English): fewest control characters, fewest words
mixing scripts (the mark of a wrong code page: ``Đ`` beside Arabic letters), chardet's guess.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

import numpy as np

from extractors import langid

__all__ = ["Evidence", "contrast", "rank", "sample_around", "plausibility", "LANGUAGE_LETTERS"]

_LATIN_COMMON = frozenset("éèêëàáâäçöüóòôúùûñíìïÉÈÀÁÇÖÜÓÚÑÍ")
#: letters (beyond ASCII) a language may use; None: any letter (languages outside the six)
LANGUAGE_LETTERS: dict[str, frozenset[str] | None] = {
    "ro": frozenset(langid.ROMANIAN_LETTERS) | _LATIN_COMMON,
    "vi": frozenset(langid.VIETNAMESE_LETTERS) | _LATIN_COMMON,
    "en": _LATIN_COMMON | frozenset("ÂÊÎÔÛâêîôûÄËÏÜÿ"),
    "id": _LATIN_COMMON | frozenset("ÂÊÎÔÛâêîôûÄËÏÜÿ"),
}
_TYPOGRAPHY = frozenset("„”“‘’‚…–—€«»")
_TYPICAL: dict[str, frozenset[str]] = {
    "ar": _TYPOGRAPHY | frozenset("،؛؟"),
    "fa": _TYPOGRAPHY | frozenset("،؛؟"),
    "ro": _TYPOGRAPHY,
    "en": _TYPOGRAPHY,
    "id": _TYPOGRAPHY,
    "vi": _TYPOGRAPHY,
}


def _is_arabic_letter(ch: str) -> bool:
    return "\u0600" <= ch <= "\u06ff" or "\ufb50" <= ch <= "\ufeff"


def impossible(ch: str, lang: str) -> bool:
    """A character a correct reading of a ``lang`` subtitle would not contain."""
    cat = unicodedata.category(ch)
    if cat in ("Cc", "Cn", "Co", "Cs"):
        return ch not in "\t\n\r"
    if not ch.isalpha() or ch.isascii():
        return False
    if lang in ("ar", "fa"):
        return not _is_arabic_letter(ch)
    allowed = LANGUAGE_LETTERS.get(lang)
    return allowed is not None and ch not in allowed


def typical(ch: str, lang: str) -> bool:
    return ch in _TYPICAL.get(lang, _TYPOGRAPHY)


@dataclass
class Evidence:
    """What separates the readings at the bytes where they differ (whole body)."""

    encoding: str
    impossible: int = 0
    typical: int = 0
    chars: dict[str, int] = field(default_factory=dict)  # differing characters of this reading, counted

    @property
    def score(self) -> tuple[int, int]:
        return (self.impossible, -self.typical)


def contrast(body: bytes, encodings: list[str], lang: str) -> tuple[list[Evidence], list[int]]:
    """Evidence per reading over the byte values present in ``body`` that the code pages map
    differently, and those byte values. Every encoding must decode ``body`` strictly."""
    histogram = np.bincount(np.frombuffer(body, dtype=np.uint8), minlength=256)
    present = [b for b in range(128, 256) if histogram[b]]
    maps = {enc: {b: bytes([b]).decode(enc, errors="replace") for b in present} for enc in encodings}
    differing = [b for b in present if len({maps[enc][b] for enc in encodings}) > 1]
    out = []
    for enc in encodings:
        ev = Evidence(enc)
        for b in differing:
            ch = maps[enc][b]
            n = int(histogram[b])
            ev.chars[ch] = ev.chars.get(ch, 0) + n
            if impossible(ch, lang):
                ev.impossible += n
            elif typical(ch, lang):
                ev.typical += n
        out.append(ev)
    return out, differing


def rank(evidence: list[Evidence]) -> tuple[list[Evidence], bool]:
    """Readings best first (stable: candidate order breaks ties) and whether the first is
    decided (strictly better than the second)."""
    ordered = sorted(evidence, key=lambda e: e.score)
    decided = len(ordered) < 2 or ordered[0].score < ordered[1].score
    return ordered, decided


def sample_around(text: str, other: str, width: int = 24) -> tuple[str, str]:
    """Short excerpts of two same-length readings around their first difference."""
    i = next((k for k, (a, b) in enumerate(zip(text, other)) if a != b), 0)
    lo, hi = max(0, i - width), i + width
    return text[lo:hi].replace("\r", " ").replace("\n", " "), other[lo:hi].replace("\r", " ").replace("\n", " ")


# --------------------------------------------------------------------------------------------
# plausibility of a reading in an unknown language
# --------------------------------------------------------------------------------------------
_WORD = re.compile(r"[^\W\d_]{2,}")
_SCRIPTS = (
    ("latin", re.compile(r"[A-Za-z\u00c0-\u024f\u1e00-\u1eff]")),
    ("cyrillic", re.compile(r"[\u0400-\u04ff]")),
    ("greek", re.compile(r"[\u0370-\u03ff]")),
    ("arabic", re.compile(r"[\u0600-\u06ff\ufb50-\ufeff]")),
    ("hebrew", re.compile(r"[\u0590-\u05ff]")),
)


def _scripts_of(word: str) -> int:
    return sum(1 for _, pat in _SCRIPTS if pat.search(word))


def mixed_script_share(text: str) -> float:
    """Share of the words (2+ letters) whose letters come from more than one script."""
    payload = langid.payload_text(text, max_chars=3000)
    words = _WORD.findall(payload)
    if not words:
        return 0.0
    return sum(1 for w in words if _scripts_of(w) > 1) / len(words)


def plausibility(text: str, n_control: int, is_chardet_guess: bool, order: int) -> tuple:
    """Sort key (smaller = more plausible) of a strict reading of an unknown language."""
    return (n_control > 0, round(mixed_script_share(text), 2), not is_chardet_guess, n_control, order)
