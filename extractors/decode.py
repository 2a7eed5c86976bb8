"""Subtitle decoding (SPEC A3): raw bytes + the track's expected language -> text, never
silently wrong.

Policies
--------
``paper``
    The paper's cascade, exactly: ``utf-8-sig``, ``utf-16``, ``cp1256``, ``cp1252``, each strict;
    the first that decodes wins (status ``ok``); if all fail the asset is rejected. Only the
    provider-body integrity layer (SPEC A5) and the empty-body check run before it. No verification
    (that is the point of keeping it: its silent failures show in ``benchmarks/bench_decode.py``).

``default``
    1. empty body -> ``rejected`` (``empty``);
    2. provider error bodies (HTML pages, Cloudflare "Attention Required", Varnish "Guru
       Meditation", JSON error payloads, the "you have to login" quota placeholder) ->
       ``rejected`` (``provider_body``, a ``provider_body`` stop flag);
    3. gzip / zip payloads are unpacked by :mod:`extractors.archive` (the reader the provider ZIP
       path shares) when safe: one level, every gzip member, a zip must hold exactly one ``.srt``
       member (stored, deflate, bzip2 or LZMA; no encryption), each capped at
       :data:`MAX_UNPACKED_BYTES` *while decompressing* (declared sizes are not trusted; the
       compression ratio is capped too), and decoded (reason ``compressed_unpacked``); otherwise
       rejected (``compressed_rejected``, the archive reason code such as ``zip_corrupt`` or
       ``gzip_bomb`` in the detail); other archive formats (rar, 7z, xz, bzip2, zstd) are rejected;
    4. BOM (UTF-32 / UTF-8 / UTF-16) -> that codec, strictly;
    5. UTF-16/32 without BOM only on evidence: NUL bytes concentrated on one byte position;
    6. strict UTF-8;
    7. the expected language's legacy candidates (:data:`LEGACY_CANDIDATES`), each decoded
       strictly and **verified**; candidates giving the same text are one reading; when verified
       readings differ, the orthographic evidence at the differing bytes decides
       (:mod:`extractors.codepages`: control characters and letters impossible in the language,
       then the language's typography such as Romanian „ ”), and where nothing decides the first
       reading is returned ``flagged`` (``encoding_ambiguous``, both encodings and a differing
       sample of each in the evidence: Romanian ş/ţ in cp1250 vs ș/ț in ISO-8859-16). cp1258
       output is NFC-normalised (cp1258 text is decomposed); nothing else is ever rewritten
       (Romanian ş/ș stay as found);
    8. when no candidate verifies: other legacy code pages, ordered by chardet's guess (one signal
       among others), verified against every corpus language; a plausible decode in another
       language is returned ``flagged`` (``script_mismatch``); else the best candidate is returned
       ``flagged`` (``mojibake_suspect``); when no candidate of the language decodes, the most
       plausible strict decode of any fallback code page is returned ``flagged``
       (``best-guess:<codec>``, ``script_mismatch``: a Serbian cp1251 file announced as English);
       ``rejected`` (``undecodable``) only when nothing decodes or the text is mostly control
       characters.

Verification of a decoded text (all policies but ``paper``, also for BOM and UTF-8 decodes):
share of the expected script among letters (``script_mismatch``), letters foreign to the
expected language such as ``º þ ã`` in Romanian or ``à é`` inside Arabic (``mojibake_suspect``),
UTF-8 byte pairs read as a legacy code page (``mojibake_suspect``; a file that mixes UTF-8 and a
legacy code page line by line is decoded line by line and ``flagged``: ``mixed_encoding``),
control characters (``control_chars``) and U+FFFD (``replacement_chars``); language
identification (:mod:`extractors.langid`, seeded, on a sample) labels fallbacks and, for legacy
Latin decodes, can redirect to another corpus language whose code page verifies better.

Statuses: ``ok`` (no reason except ``compressed_unpacked``), ``flagged`` (text returned, review
flag, layer ``encoding``), ``rejected`` (no usable text; stop flag, layer ``encoding`` or
``provider_body``).

The checks of bodies and decoded texts live in :mod:`extractors.decode_verify`.

Speed: one strict decode per candidate, verification on a bounded sample (a few windows of the
text) with every count taken from the character histogram (:mod:`extractors.charclass`; exact,
docs/decoding.md), one verification for candidates that decode to the same text, language
identification only on legacy decodes and fallbacks and only on a sample.
"""

from __future__ import annotations

import codecs
import re
import unicodedata
from typing import Any

import numpy as np

from cinesub.records import DecodeResult, Flag
from extractors import archive, codepages, langid
from extractors.decode_verify import (LEGACY_CANDIDATES, Verdict, non_ascii_letters, provider_body_signature,
                                       verify_text)

__all__ = [
    "decode",
    "utf8_bytes",
    "POLICIES",
    "PAPER_CASCADE",
    "LEGACY_CANDIDATES",
    "REASONS",
    "MAX_UNPACKED_BYTES",
    "provider_body_signature",
    "verify_text",
]

POLICIES = ("default", "paper")
PAPER_CASCADE = ("utf-8-sig", "utf-16", "cp1256", "cp1252")

GENERIC_CANDIDATES: tuple[str, ...] = ("cp1252", "iso8859-15")
#: Tried (after chardet's guess) when none of the expected language's candidates verifies.
FALLBACK_ENCODINGS: tuple[str, ...] = ("cp1252", "cp1256", "cp1250", "iso8859-16", "cp1258", "iso8859-6",
                                       "cp1251", "cp1253", "cp1254", "cp1257")
CORPUS_LANGUAGES: tuple[str, ...] = ("en", "ar", "id", "fa", "ro", "vi")

REASONS: dict[str, str] = {
    "empty": "empty body",
    "provider_body": "provider error body (HTML/JSON error page, quota placeholder)",
    "compressed_unpacked": "gzip/zip payload unpacked",
    "compressed_rejected": "compressed payload not unpacked (unsafe, unsupported or not one .srt)",
    "undecodable": "no strict decoding yields text",
    "control_chars": "control characters in the decoded text",
    "replacement_chars": "U+FFFD replacement characters in the decoded text",
    "mojibake_suspect": "decoded text contains characters typical of a wrong code page",
    "mixed_encoding": "the file mixes UTF-8 and a legacy code page",
    "script_mismatch": "decoded text is not in the expected language's script or letters",
    "encoding_ambiguous": "code pages giving different texts both verify and nothing in the text decides",
}

MAX_UNPACKED_BYTES = 32 * 1024 * 1024


# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------
def _codec_name(enc: str) -> str:
    return codecs.lookup(enc).name


def _flag(layer: str, severity: str, detail: str, **evidence: Any) -> Flag:
    return Flag(layer=layer, severity=severity, detail=detail, evidence=evidence)  # type: ignore[arg-type]


def _rejected(decoder: str, reasons: list[str], detail: str, layer: str = "encoding", **ev: Any) -> DecodeResult:
    return DecodeResult(
        text=None,
        encoding=None,
        decoder=decoder,
        status="rejected",
        reasons=reasons,
        flags=[_flag(layer, "stop", detail, reasons=reasons, **ev)],
    )


# --------------------------------------------------------------------------------------------
# compressed payloads
# --------------------------------------------------------------------------------------------
def _unpack(raw: bytes) -> tuple[bytes | None, str, str]:
    """(payload, kind, problem): payload None with a problem when not safely unpackable; kind ""
    when ``raw`` is no archive. The reading is :mod:`extractors.archive` (shared with the
    provider ZIP path), under :data:`MAX_UNPACKED_BYTES` (read at call time)."""
    cap = MAX_UNPACKED_BYTES
    limits = archive.Limits(max_archive_bytes=cap, max_member_bytes=cap, max_total_bytes=cap)
    try:
        found = archive.unpack_one(raw, limits)
    except archive.ArchiveError as e:
        return None, e.fmt, f"{e.detail} ({e.reason_code})"
    if found is None:
        return raw, "", ""
    kind, payload = found
    return payload, kind, ""


# --------------------------------------------------------------------------------------------
# the policies
# --------------------------------------------------------------------------------------------
#: an empty body: only whitespace and NULs (a regex, so a large file is not copied to check it)
_BLANK_BODY = re.compile(rb"[ \t\r\n\x00]*")


def decode(raw: bytes, language: str, policy: str = "default") -> DecodeResult:
    """Decode subtitle bytes for a track whose expected language is ``language`` (ISO 639-1)."""
    if policy not in POLICIES:
        raise ValueError(f"unknown decoder policy {policy!r}; expected one of {POLICIES}")
    lang = (language or "").lower().split("-")[0].split("_")[0]
    if _BLANK_BODY.fullmatch(raw) or raw in (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff"):
        return _rejected(f"{policy}:empty", ["empty"], "empty body", layer="provider_body")
    sig = provider_body_signature(raw)
    if sig is not None:
        return _rejected(f"{policy}:provider_body", ["provider_body"], sig, layer="provider_body")
    if policy == "paper":
        return _decode_paper(raw)
    return _decode_default(raw, lang, depth=0)


def utf8_bytes(raw: bytes, result: DecodeResult) -> bytes | None:
    """``result.text.encode("utf-8")`` without encoding, when :func:`decode` took the text from
    ``raw`` as plain UTF-8/ASCII or UTF-8 after a BOM (the parser then skips one encode of the
    whole text); None for every other decoder (legacy code pages, UTF-16, unpacked archives)."""
    if result.text is None:
        return None
    if result.decoder in ("utf-8", "ascii", "bom:utf-8-sig", "paper:utf-8-sig"):
        return raw[3:] if raw.startswith(b"\xef\xbb\xbf") else raw
    return None


def _decode_paper(raw: bytes) -> DecodeResult:
    for enc in PAPER_CASCADE:
        try:
            text = raw.decode(enc)
        except UnicodeDecodeError:
            continue
        return DecodeResult(text=text, encoding=enc, decoder=f"paper:{enc}", status="ok")
    return _rejected("paper:none", ["undecodable"], "no codec of the paper cascade decodes the bytes")


def _finish(
    text: str,
    encoding: str,
    decoder: str,
    verdict: Verdict,
    extra_reasons: list[str] | None = None,
    **evidence: Any,
) -> DecodeResult:
    reasons = list(dict.fromkeys((extra_reasons or []) + verdict.reasons))
    problems = [r for r in reasons if r != "compressed_unpacked"]
    if not problems:
        return DecodeResult(text=text, encoding=encoding, decoder=decoder, status="ok", reasons=reasons)
    detail = "; ".join(REASONS.get(r, r) for r in problems)
    flag = _flag("encoding", "review", f"{detail} (decoded as {encoding})", encoding=encoding, reasons=problems,
                 **verdict.details, **evidence)
    return DecodeResult(text=text, encoding=encoding, decoder=decoder, status="flagged", reasons=reasons, flags=[flag])


def _decode_default(raw: bytes, lang: str, depth: int) -> DecodeResult:
    payload, kind, problem = _unpack(raw)
    if kind:
        if payload is None:
            return _rejected(f"{kind}", ["compressed_rejected"], problem)
        if depth > 0:
            return _rejected(f"{kind}", ["compressed_rejected"], "nested compressed payload")
        if _BLANK_BODY.fullmatch(payload):
            return _rejected(f"{kind}:empty", ["compressed_unpacked", "empty"], "empty after unpacking",
                             layer="provider_body")
        sig = provider_body_signature(payload)
        if sig is not None:
            return _rejected(f"{kind}:provider_body", ["compressed_unpacked", "provider_body"], sig,
                             layer="provider_body")
        inner = _decode_default(payload, lang, depth + 1)
        return inner.model_copy(
            update={
                "decoder": f"{kind}>{inner.decoder}",
                "reasons": ["compressed_unpacked", *[r for r in inner.reasons if r != "compressed_unpacked"]],
            }
        )

    # 1. BOM
    for bom, enc in (
        (b"\x00\x00\xfe\xff", "utf-32-be"),
        (b"\xff\xfe\x00\x00", "utf-32-le"),
        (b"\xef\xbb\xbf", "utf-8"),
        (b"\xff\xfe", "utf-16-le"),
        (b"\xfe\xff", "utf-16-be"),
    ):
        if raw.startswith(bom):
            try:
                text = raw[len(bom):].decode(enc)
            except UnicodeDecodeError as e:
                if enc.startswith("utf-32"):
                    continue  # FF FE 00 00 may be a UTF-16-LE BOM followed by U+0000
                if enc == "utf-8":
                    break  # BOM then non-UTF-8 bytes: decide below like a BOM-less file
                return _rejected(f"bom:{enc}", ["undecodable"], f"{enc} BOM but invalid {enc}: {e.reason}")
            name = "utf-8-sig" if enc == "utf-8" else enc
            return _finish(text, name, f"bom:{name}", verify_text(text, lang))
    body = raw[3:] if raw.startswith(b"\xef\xbb\xbf") else raw

    # 2. UTF-16/32 without BOM, only on NUL-byte evidence
    wide = _wide_evidence(body)
    if wide is not None:
        try:
            text = body.decode(wide)
        except UnicodeDecodeError:
            text = None
        if text is not None:
            v = verify_text(text, lang)
            if not v.reject:
                return _finish(text, wide, f"nul-evidence:{wide}", v)

    # 3. strict UTF-8
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None:
        if body.isascii():
            return _finish(text, "ascii", "ascii", verify_text(text, lang))
        return _finish(text, "utf-8", "utf-8", verify_text(text, lang))

    # 4. legacy code pages of the expected language
    candidates = LEGACY_CANDIDATES.get(lang, GENERIC_CANDIDATES)
    tried: list[tuple[str, str, Verdict]] = []
    for enc in candidates:
        t = _legacy_decode(body, enc)
        if t is not None:
            same = next((x[2] for x in tried if x[1] == t), None)  # verify_text is pure
            tried.append((enc, t, same.copy() if same is not None else verify_text(t, lang)))
    passing = [x for x in tried if x[2].ok]
    mixed = _mixed_utf8_share(body)
    if passing and mixed < 0.5:
        return _choose_legacy(body, passing, lang, candidates)

    # 5. a file mixing UTF-8 lines and legacy lines
    if mixed >= 0.5:
        res = _decode_mixed(body, lang, candidates)
        if res is not None:
            return res

    # 6. other code pages / other languages
    fb = _fallback(body, lang, exclude=set(candidates))
    if fb is not None:
        return fb
    usable = [x for x in tried if not x[2].reject]
    if usable:
        enc, t, v = min(usable, key=lambda x: (x[2].oddness, candidates.index(x[0])))
        if "mojibake_suspect" not in v.reasons and "script_mismatch" not in v.reasons:
            v.reasons.append("mojibake_suspect")
        return _finish(t, _codec_name(enc), f"best-guess:{_codec_name(enc)}", v)
    best = _best_strict(body, lang, exclude={_codec_name(x[0]) for x in tried}) if mixed < 0.5 else None
    if best is not None:
        return best
    detail = "no candidate code page decodes to text"
    if tried:
        detail = "every strict decoding is mostly control characters"
    return _rejected("none", ["undecodable"] + (["control_chars"] if tried else []), detail,
                     tried=[x[0] for x in tried])


def _choose_legacy(body: bytes, passing: list[tuple[str, str, Verdict]], lang: str,
                   candidates: tuple[str, ...]) -> DecodeResult:
    """The verified legacy reading to return. Readings that give the same text are one; when
    several different texts verify, the orthographic evidence at the differing bytes decides
    (:mod:`extractors.codepages`), else the first is returned flagged ``encoding_ambiguous``."""
    reps: list[tuple[str, str, Verdict]] = []
    for x in sorted(passing, key=lambda x: (x[2].oddness, candidates.index(x[0]))):
        if all(x[1] != r[1] for r in reps):
            reps.append(x)
    evidence: list[codepages.Evidence] = []
    decided = True
    if len(reps) > 1:
        evidence, differing = codepages.contrast(body, [r[0] for r in reps], lang)
        evidence, decided = codepages.rank(evidence)
        by_enc = {r[0]: r for r in reps}
        reps = [by_enc[e.encoding] for e in evidence]
    enc, t, v = reps[0]
    redirected = _language_redirect(body, t, enc, lang, v)
    if redirected is not None:
        return redirected
    name = _codec_name(enc)
    if decided:
        return _finish(t, name, f"candidate:{name}", v)
    other_enc, other_t, _ = reps[1]
    mine, theirs = codepages.sample_around(t, other_t)
    v.reasons.append("encoding_ambiguous")
    return _finish(
        t, name, f"candidate:{name}", v,
        candidates=[{"encoding": name, "sample": mine, "chars": evidence[0].chars},
                    {"encoding": _codec_name(other_enc), "sample": theirs, "chars": evidence[1].chars}],
        differing_bytes=[f"0x{b:02x}" for b in differing][:16],
        orthography={e.encoding: {"impossible": e.impossible, "typical": e.typical} for e in evidence[:2]},
    )


#: a best-guess reading may have at most this share of words mixing scripts
_MAX_MIXED_SCRIPT_WORDS = 0.05


def _best_strict(body: bytes, lang: str, exclude: set[str]) -> DecodeResult | None:
    """For a file nothing verifies and the expected code pages cannot decode (a Serbian cp1251
    file announced as English): the most plausible strict reading, flagged."""
    guess = _chardet_guess(body)
    readings = []
    for i, enc in enumerate(FALLBACK_ENCODINGS):
        name = _codec_name(enc)
        if name in exclude:
            continue
        t = _legacy_decode(body, enc)
        if t is None:
            continue
        v = verify_text(t, lang)
        if v.reject:
            continue
        key = codepages.plausibility(t, v.details.get("control_chars", 0), name == guess, i)
        readings.append((key, name, t, v))
    if not readings:
        return None
    key, name, t, v = min(readings, key=lambda r: r[0])
    if key[0] or key[1] > _MAX_MIXED_SCRIPT_WORDS:
        return None  # control characters, or words mixing scripts: no reading is a text
    if "script_mismatch" not in v.reasons and "mojibake_suspect" not in v.reasons:
        v.reasons.append("script_mismatch")
    g = langid.identify(t)
    return _finish(t, name, f"best-guess:{name}", v, detected_language=g.language, chardet=guess,
                   strict_decodes=sorted(r[1] for r in readings))


def _legacy_decode(body: bytes, enc: str) -> str | None:
    try:
        t = body.decode(enc)
    except UnicodeDecodeError:
        return None
    if _codec_name(enc) == "cp1258":
        t = unicodedata.normalize("NFC", t)
    return t


def _wide_evidence(body: bytes) -> str | None:
    head = body[:8192]
    if len(head) < 8 or b"\x00" not in head:
        return None
    n = len(head) - len(head) % 4
    head = head[:n]
    z = [head[i::4].count(0) / (n // 4) for i in range(4)]
    if z[1] > 0.9 and z[2] > 0.9 and z[3] > 0.9 and z[0] < 0.1:
        return "utf-32-le"
    if z[0] > 0.9 and z[1] > 0.9 and z[2] < 0.5 and z[3] < 0.1:
        return "utf-32-be"
    even = (z[0] + z[2]) / 2
    odd = (z[1] + z[3]) / 2
    if len(body) % 2 == 0 and odd >= 0.2 and even <= 0.02:
        return "utf-16-le"
    if len(body) % 2 == 0 and even >= 0.2 and odd <= 0.02:
        return "utf-16-be"
    return None


_UTF8_SEQ = re.compile(rb"[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf4][\x80-\xbf]{3}")


def _mixed_utf8_share(body: bytes) -> float:
    """Bytes in well-formed UTF-8 sequences (the non-overlapping matches of :data:`_UTF8_SEQ`)
    per ASCII byte (legacy text: near 0). The divisor has always been the ASCII bytes
    (``len(sample) - len(sample.translate(None, bytes(range(128))))``), though the share was meant
    per high byte; kept so decodes do not change (docs/decoding.md). Counted with numpy: a lead
    byte is never a continuation byte, so the matches are exactly the lead bytes followed by
    their continuation bytes."""
    sample = body if len(body) <= 1 << 20 else body[: 1 << 19] + body[-(1 << 19):]
    a = np.frombuffer(sample, dtype=np.uint8)
    ascii_bytes = int(np.count_nonzero(a < 0x80))
    if ascii_bytes < 8:
        return 0.0
    cont = (a >= 0x80) & (a <= 0xBF)
    seq, n = 0, len(a)
    for k, lo, hi in ((1, 0xC2, 0xDF), (2, 0xE0, 0xEF), (3, 0xF0, 0xF4)):
        if n <= k:
            continue
        found = (a[: n - k] >= lo) & (a[: n - k] <= hi)
        for j in range(1, k + 1):
            found &= cont[j: n - k + j]
        seq += (k + 1) * int(np.count_nonzero(found))
    return seq / ascii_bytes


def _decode_mixed(body: bytes, lang: str, candidates: tuple[str, ...]) -> DecodeResult | None:
    lines = body.split(b"\n")
    out: list[str] = []
    legacy_used = None
    for line in lines:
        try:
            out.append(line.decode("utf-8"))
            continue
        except UnicodeDecodeError:
            pass
        for enc in candidates:
            t = _legacy_decode(line, enc)
            if t is not None:
                out.append(t)
                legacy_used = legacy_used or enc
                break
        else:
            return None
    text = "\n".join(out)
    v = verify_text(text, lang)
    v.reasons = ["mixed_encoding", *v.reasons]
    name = f"utf-8+{_codec_name(legacy_used or candidates[0])}"
    return _finish(text, name, f"mixed:{name}", v)


def _chardet_guess(body: bytes) -> str | None:
    try:
        import chardet

        sample = body if len(body) <= 65536 else body[:32768] + body[-32768:]
        enc = chardet.detect(sample).get("encoding")
        return _codec_name(enc) if enc else None
    except (LookupError, Exception):  # noqa: BLE001 - chardet is only a hint
        return None


def _fallback(body: bytes, lang: str, exclude: set[str]) -> DecodeResult | None:
    guess = _chardet_guess(body)
    order = list(FALLBACK_ENCODINGS)
    if guess and guess in {_codec_name(e) for e in order}:
        order.sort(key=lambda e: _codec_name(e) != guess)
    excluded = {_codec_name(e) for e in exclude}
    for enc in order:
        if _codec_name(enc) in excluded:
            continue
        t = _legacy_decode(body, enc)
        if t is None:
            continue
        for other in _languages_for(enc):
            v = verify_text(t, other)
            if v.ok:
                g = langid.identify(t)
                if g.language is not None and g.language != other and g.language in CORPUS_LANGUAGES:
                    if not verify_text(t, g.language).ok:
                        continue
                detected = g.language or other
                v2 = verify_text(t, lang)
                v2.reasons = list(dict.fromkeys(["script_mismatch", *[r for r in v2.reasons if r != "mojibake_suspect"]]))
                return _finish(
                    t,
                    _codec_name(enc),
                    f"fallback:{_codec_name(enc)}",
                    v2,
                    detected_language=detected,
                    chardet=guess,
                )
    return None


def _languages_for(enc: str) -> tuple[str, ...]:
    name = _codec_name(enc)
    langs = [l for l, cands in LEGACY_CANDIDATES.items() if name in {_codec_name(c) for c in cands}]
    return tuple(langs) if langs else ("other",)


def _language_redirect(body: bytes, text: str, enc: str, lang: str, own: Verdict) -> DecodeResult | None:
    """For a legacy Latin decode (``own``: ``verify_text(text, lang)``): when language
    identification says another corpus language whose own code page verifies with fewer
    suspicious characters, prefer that reading (flagged)."""
    if lang in ("ar", "fa"):
        return None
    payload = langid.payload_text(text, max_chars=2000)
    if non_ascii_letters(payload) < 3:
        return None  # ASCII-only dialogue reads the same in every Latin code page
    g = langid.identify(payload, is_payload=True)
    if g.language is None or g.language == lang or g.language not in CORPUS_LANGUAGES or g.confidence < 0.9:
        return None
    for other_enc in LEGACY_CANDIDATES[g.language]:
        if _codec_name(other_enc) == _codec_name(enc):
            return None  # same code page: the reading does not change
        t = _legacy_decode(body, other_enc)
        if t is None:
            continue
        v = verify_text(t, g.language)
        if v.ok and v.oddness < own.oddness:
            v2 = verify_text(t, lang)
            v2.reasons = list(dict.fromkeys(["script_mismatch", *[r for r in v2.reasons if r != "mojibake_suspect"]]))
            return _finish(t, _codec_name(other_enc), f"language-redirect:{_codec_name(other_enc)}", v2,
                           detected_language=g.language)
    return None
