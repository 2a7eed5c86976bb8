"""The byte encodings subtitle providers really serve, and how text is prepared for each.

Legacy code pages cannot hold every character of modern text, and real files written in them use
the customary substitutes. :func:`adapt` applies exactly those substitutions, so the "intended
text" of a file is what a correct decoder must return (after NFC normalisation):

* cp1250 (Romanian): no comma-below ș/ț → cedilla ş/ţ (what Windows-1250 files really contain);
* cp1256 (Persian): no Persian yeh U+06CC → Arabic yeh U+064A;
* cp1258 (Vietnamese): most toned vowels are not precomposed in the code page → base letter (itself
  precomposed where cp1258 has it: â ê ô ơ ư ă) followed by a combining tone mark. Decoding gives
  decomposed text whose NFC form equals the intended text;
* ISO-8859-16 (Romanian): no ellipsis or curly apostrophe → ASCII.
"""

from __future__ import annotations

import codecs
import unicodedata
from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class Encoding:
    label: str  # manifest label
    codec: str  # Python codec that strictly decodes the whole file (BOM included) to the text
    bom: bytes = b""
    encode_codec: str = ""

    def encode(self, text: str) -> bytes:
        return self.bom + adapt(text, self.label).encode(self.encode_codec or self.codec)


ENCODINGS: dict[str, Encoding] = {
    "utf-8": Encoding("utf-8", "utf-8"),
    "utf-8-sig": Encoding("utf-8-sig", "utf-8-sig", codecs.BOM_UTF8, "utf-8"),
    "utf-16-le": Encoding("utf-16-le", "utf-16", codecs.BOM_UTF16_LE, "utf-16-le"),
    "utf-16-be": Encoding("utf-16-be", "utf-16", codecs.BOM_UTF16_BE, "utf-16-be"),
    "cp1252": Encoding("cp1252", "cp1252"),
    "cp1256": Encoding("cp1256", "cp1256"),
    "cp1250": Encoding("cp1250", "cp1250"),
    "iso-8859-16": Encoding("iso-8859-16", "iso8859_16"),
    "cp1258": Encoding("cp1258", "cp1258"),
}

#: Encodings served per language (weights: legacy code pages are common in the wild).
MENU: dict[str, list[tuple[str, int]]] = {
    "en": [("utf-8", 3), ("utf-8-sig", 2), ("utf-16-le", 1), ("utf-16-be", 1), ("cp1252", 3)],
    "id": [("utf-8", 3), ("utf-8-sig", 2), ("utf-16-le", 1), ("utf-16-be", 1), ("cp1252", 3)],
    "ar": [("utf-8", 3), ("utf-8-sig", 2), ("utf-16-le", 1), ("utf-16-be", 1), ("cp1256", 3)],
    "fa": [("utf-8", 3), ("utf-8-sig", 2), ("utf-16-le", 1), ("utf-16-be", 1), ("cp1256", 3)],
    "ro": [("utf-8", 3), ("utf-8-sig", 2), ("utf-16-le", 1), ("cp1250", 3), ("iso-8859-16", 2)],
    "vi": [("utf-8", 3), ("utf-8-sig", 2), ("utf-16-le", 1), ("utf-16-be", 1), ("cp1258", 3)],
}

_SUBST: dict[str, dict[str, str]] = {
    "cp1250": {"ș": "ş", "ț": "ţ", "Ș": "Ş", "Ț": "Ţ"},
    "cp1256": {"ی": "ي"},
    "iso-8859-16": {"…": "...", "’": "'", "‘": "'"},
}


@lru_cache(maxsize=4096)
def _cp1258_char(ch: str) -> str:
    try:
        ch.encode("cp1258")
        return ch
    except UnicodeEncodeError:
        pass
    decomposed = unicodedata.normalize("NFD", ch)
    base, marks = decomposed[0], list(decomposed[1:])
    # Recompose the base with every mark the code page has precomposed (e.g. ệ → ê + dot below).
    changed = True
    while changed and marks:
        changed = False
        for i, mark in enumerate(marks):
            trial = unicodedata.normalize("NFC", base + mark)
            if len(trial) == 1 and _encodable(trial, "cp1258"):
                base = trial
                del marks[i]
                changed = True
                break
    out = base + "".join(marks)
    out.encode("cp1258")  # raises if the code page cannot represent the character at all
    if unicodedata.normalize("NFC", out) != ch:
        raise ValueError(f"cp1258 cannot round-trip {ch!r}")
    return out


def _encodable(s: str, codec: str) -> bool:
    try:
        s.encode(codec)
        return True
    except UnicodeEncodeError:
        return False


def adapt(text: str, label: str) -> str:
    """The text as a file in ``label`` really holds it (see module doc); identity for Unicode."""
    subst = _SUBST.get(label)
    if subst:
        for a, b in subst.items():
            text = text.replace(a, b)
    if label == "cp1258":
        text = "".join(_cp1258_char(c) for c in text)
    return text


def intended_text(text: str, label: str) -> str:
    """What a correct decoder returns for a file of ``text`` written in ``label``, NFC."""
    return unicodedata.normalize("NFC", adapt(text, label))
