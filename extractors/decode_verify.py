"""Checks of subtitle bytes and decoded text for the decoder (SPEC A3, A5): provider error
bodies (:func:`provider_body_signature`) and the verification of a decoded text against the
expected language (:func:`verify_text`: script share, foreign letters, UTF-8 misread as a legacy
code page, control and replacement characters). :mod:`extractors.decode` documents the rules
and is their only caller; both are pure.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from extractors import charclass, langid

#: Legacy code pages per expected language, in priority order (after BOM / UTF-16 / UTF-8).
LEGACY_CANDIDATES: dict[str, tuple[str, ...]] = {
    "ar": ("cp1256", "iso8859-6"),
    "fa": ("cp1256",),
    "en": ("cp1252",),
    "id": ("cp1252",),
    "ro": ("cp1250", "iso8859-16", "iso8859-2"),
    "vi": ("cp1258",),
}

_SAMPLE_CHARS = 6000


def _windows(text: str, width: int, pieces: int = 4) -> str:
    if len(text) <= width * pieces:
        return text
    step = (len(text) - width) // (pieces - 1)
    return "\n".join(text[i * step : i * step + width] for i in range(pieces))


# --------------------------------------------------------------------------------------------
# provider bodies
# --------------------------------------------------------------------------------------------
_SRT_TIMESTAMP = re.compile(r"[0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}[,.:][0-9]{1,3}\s*-->")
_HTML_TAG = re.compile(
    r"<!doctype\s+html|<html[\s>]|<head[\s>]|<body[\s>]|<title>|<meta\s|<script[\s>]|<center>|<h1>|<div[\s>]"
)
_ERROR_SIGNATURES = (
    "attention required! | cloudflare",
    "cf-error-details",
    "cloudflare ray id",
    "cf-browser-verification",
    "checking your browser before accessing",
    "guru meditation",
    "varnish cache server",
    "502 bad gateway",
    "503 service unavailable",
    "504 gateway time-out",
    "429 too many requests",
    "captcha",
)
_QUOTA_SIGNATURES = re.compile(
    r"you have to log ?in|you have to sign ?in|download limit|daily download quota|become (a )?vip member"
)


def provider_body_signature(raw: bytes) -> str | None:
    """What marks ``raw`` as a provider error body, or None (SPEC A5 provider-body integrity)."""
    head = raw[:8192]
    if head[:2] in (b"\xff\xfe", b"\xfe\xff"):
        text = head.decode("utf-16", errors="ignore")
    else:
        text = head.decode("utf-8", errors="ignore") if _is_mostly_utf8(head) else head.decode("latin-1")
    low = text.lstrip("\ufeff \t\r\n\x00").lower()
    has_srt = _SRT_TIMESTAMP.search(low) is not None
    if len(raw) <= 20000:
        small = raw.decode("utf-8", errors="ignore").lower() if len(raw) > len(head) else low
        m = _QUOTA_SIGNATURES.search(small)
        if m:
            return f"quota/login placeholder ({m.group(0)!r})"
    if has_srt:
        return None
    for sig in _ERROR_SIGNATURES:
        if sig in low:
            return f"error page signature {sig!r}"
    if low.startswith("<"):
        m = _HTML_TAG.search(low[:4096])
        if m:
            return f"HTML page ({m.group(0).strip()!r})"
    if low.startswith(("{", "[")):
        try:
            obj = json.loads(raw.decode("utf-8", errors="strict").lstrip("\ufeff"))
        except (ValueError, UnicodeDecodeError):
            obj = None
        if obj is not None or re.match(r'[{\[]\s*"', low):
            return "JSON payload"
    return None


def _is_mostly_utf8(b: bytes) -> bool:
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError as e:
        return e.start >= len(b) - 4  # cut in the middle of a sequence at the end of the slice


# --------------------------------------------------------------------------------------------
# verification
# --------------------------------------------------------------------------------------------
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_COMBINING = re.compile(r"[\u0300-\u036f]")
_COMMON_FOREIGN = frozenset("éèêëàáâäçöüóòôúùûñíìïÉÈÀÁÇÖÜÓÚÑÍ")
_EN_ODD = frozenset("ºªþÞðÐãÃõÕ")


def _utf8_misread_pattern(enc: str) -> re.Pattern[str]:
    lead, cont = _misread_sets(enc)
    return re.compile("[" + re.escape(lead) + "][" + re.escape(cont) + "]")


def _misread_sets(enc: str) -> tuple[str, str]:
    """What UTF-8 lead bytes and continuation bytes read as in ``enc``."""
    return bytes(range(0xC2, 0xF5)).decode(enc, errors="ignore"), bytes(range(0x80, 0xC0)).decode(enc, errors="ignore")


_MISREAD_ENCODINGS = ("cp1252", "cp1256", "cp1250", "cp1258", "iso8859-16")
_MISREAD = {enc: _utf8_misread_pattern(enc) for enc in _MISREAD_ENCODINGS}
#: per code page, whether lead and continuation readings share no character: then the findall
#: count of ``_MISREAD[enc]`` is the number of lead-then-continuation positions (no overlaps)
_MISREAD_DISJOINT = {enc: not set(_misread_sets(enc)[0]) & set(_misread_sets(enc)[1]) for enc in _MISREAD_ENCODINGS}


def _na(ch: str) -> bool:
    return not ch.isascii() and ch.isalpha()


def _member(chars: str | frozenset[str]):
    chars = frozenset(chars)
    return lambda ch: ch in chars


#: every per-character count :func:`verify_text` takes from the payload, one class each
#: (:mod:`extractors.charclass`: the text's histogram times the class; exact)
_PAYLOAD_CLASSES = charclass.CharClasses([
    *langid.SCRIPT_CLASSES,
    ("non_ascii", lambda ch: not ch.isascii()),
    ("na", _na),
    ("foreign_ro", lambda ch: _na(ch) and ch not in langid.ROMANIAN_LETTERS and ch not in _COMMON_FOREIGN),
    ("foreign_vi", lambda ch: _na(ch) and ch not in langid.VIETNAMESE_LETTERS and ch not in _COMMON_FOREIGN),
    ("foreign_latin", lambda ch: _na(ch) and (ch in _EN_ODD or not ("\u00c0" <= ch <= "\u024f"))),
    ("combining", charclass.regex_predicate(_COMBINING)),
    ("times_divide", _member("×÷")),
    *[(f"{part}:{enc}", _member(chars)) for enc in _MISREAD_ENCODINGS
      for part, chars in zip(("lead", "cont"), _misread_sets(enc))],
])


_NA_CLASS = charclass.CharClasses([("na", _na)])


def non_ascii_letters(text: str) -> int:
    """Letters beyond ASCII in ``text`` (``sum(1 for ch in text if not ch.isascii() and ch.isalpha())``)."""
    return 0 if text.isascii() else _NA_CLASS.counts(charclass.codepoints(text))["na"]


def _misread_pairs(payload: str, codes, n: dict[str, int]) -> int:
    """The most UTF-8 lead/continuation pairs any of the code pages makes of ``payload``
    (``max(len(_MISREAD[enc].findall(payload)))``)."""
    candidates = [enc for enc in _MISREAD_ENCODINGS if n[f"lead:{enc}"] and n[f"cont:{enc}"]]
    if not candidates:
        return 0
    bits = _PAYLOAD_CLASSES.per_position(codes)
    return max(_PAYLOAD_CLASSES.pairs(bits, f"lead:{enc}", f"cont:{enc}") if _MISREAD_DISJOINT[enc]
               else len(_MISREAD[enc].findall(payload)) for enc in candidates)


_ARABIC_RUN = re.compile(r"[\u0621-\u064a\u0671-\u06d3\u06a9\u06af\u06cc\u067e\u0686\u0698\u200c]{3,}")


def _arabic_words(payload: str, n_arabic: int) -> bool:
    """Arabic letters forming words (a credit line in Latin letters may outweigh two lines of
    dialogue), as opposed to isolated letters from a wrong code page inside Latin words."""
    if n_arabic < 15:
        return False
    in_runs = sum(len(m) for m in _ARABIC_RUN.findall(payload))
    return in_runs >= 0.8 * n_arabic


@dataclass
class Verdict:
    ok: bool
    reasons: list[str] = field(default_factory=list)
    oddness: float = 0.0
    details: dict[str, Any] = field(default_factory=dict)
    reject: bool = False  # no usable text (mostly control characters)

    def copy(self) -> "Verdict":
        """An independent copy (callers append reasons to the verdict they return)."""
        return Verdict(self.ok, list(self.reasons), self.oddness, dict(self.details), self.reject)


def verify_text(text: str, language: str) -> Verdict:
    """Checks a decoded text against the expected language (see the module docstring)."""
    reasons: list[str] = []
    sample = _windows(text, 60000) if len(text) > 240000 else text
    body = sample.rstrip("\x1a")  # DOS end-of-file marker
    n_ctrl = charclass.control_count(charclass.codepoints(body))  # = len(_CONTROL.findall(body))
    n_fffd = body.count("\ufffd")
    details: dict[str, Any] = {}
    if n_ctrl:
        details["control_chars"] = n_ctrl
    if n_fffd:
        details["replacement_chars"] = n_fffd
    if n_ctrl > max(3, 0.001 * len(body)):
        reasons.append("control_chars")
    if n_fffd:
        reasons.append("replacement_chars")
    reject = n_ctrl > 0.02 * max(1, len(body))

    payload = langid.payload_text(sample, max_chars=_SAMPLE_CHARS)
    codes = charclass.codepoints(payload)
    n = _PAYLOAD_CLASSES.counts(codes)
    c = langid.script_counts_of(n)
    details.update(letters=c.letters, arabic_share=round(c.share("arabic"), 3), latin_share=round(c.share("latin"), 3))
    odd = 0
    lang = language if language in LEGACY_CANDIDATES else "other"

    # UTF-8 read as a legacy code page (double encoding, or the UTF-8 half of a mixed file)
    misread = _misread_pairs(payload, codes, n)
    non_ascii = n["non_ascii"] if misread else 0
    if misread >= 3 and 2 * misread >= 0.3 * max(1, non_ascii):
        reasons.append("mojibake_suspect")
        details["utf8_misread_pairs"] = misread
        odd += 2 * misread

    if c.letters >= 3:
        if lang in ("ar", "fa"):
            if c.share("arabic") < 0.5 and c.letters >= 10 and not _arabic_words(payload, c.arabic):
                reasons.append("script_mismatch")
            foreign = c.latin_non_ascii + n["times_divide"]
            odd += foreign
            if foreign >= 3 and foreign > 0.02 * max(1, c.arabic):
                reasons.append("mojibake_suspect")
        else:
            if c.share("latin") < 0.8 and c.letters >= 10:
                reasons.append("script_mismatch")
            # non-ASCII letters (counted only when the payload has any beyond ASCII Latin)
            some = bool(c.latin_non_ascii or c.other)
            n_na = n["na"] if some else 0
            if lang == "ro":
                foreign = n["foreign_ro"] if some else 0
                frac = 0.15
            elif lang == "vi":
                foreign = (n["foreign_vi"] if some else 0) + n["combining"]
                frac = 0.1
                if c.latin >= 40 and c.vietnamese < 0.05 * c.latin:
                    reasons.append("script_mismatch")
            else:
                foreign = n["foreign_latin"] if some else 0
                share_na = c.latin_non_ascii / max(1, c.latin)
                limit = 0.12 if lang in ("en", "id") else 0.25
                if c.latin_non_ascii >= 3 and share_na > limit:
                    reasons.append("mojibake_suspect")
                frac = 0.3
            odd += foreign
            if foreign >= 3 and foreign > frac * max(1, n_na):
                reasons.append("mojibake_suspect")
    odd += n_ctrl
    details["odd_chars"] = odd
    reasons = list(dict.fromkeys(reasons))
    ok = not any(r in reasons for r in ("control_chars", "mojibake_suspect", "script_mismatch"))
    return Verdict(ok=ok, reasons=reasons, oddness=odd / max(1, c.letters), details=details, reject=reject)
