"""Shared pieces of the benchmarks: the labelled decoding suite built from the real texts in
``../shared/realdata/srt`` (never copied into the repo), results writing and table printing.

Labelled suite (``labelled_cases``): every real subtitle text of a corpus language, decoded with
its known encoding, is re-encoded into every encoding providers realistically serve for that
language, at full length, 5 entries and 2 entries (taken from the middle of the film, where the
dialogue is), plus adversarial cases (``adversarial_cases``). A case's ``truth`` is the text its
bytes really encode, or ``None`` when no correct text exists (garbage, mixed encodings, error
pages): then only a flag or a rejection is correct.

Truth when a legacy code page cannot hold a character: the re-encoded file holds what real legacy
files hold — Persian ی as Arabic ي in cp1256, Romanian ș/ț as cedilla ş/ţ in cp1250/ISO-8859-2
(and ş/ţ as ș/ț in ISO-8859-16), Vietnamese tone marks as combining characters in cp1258, other
unencodable characters (bidi embeddings, emoji) dropped. Comparison is on NFC text with one
leading BOM ignored, and — for Romanian only — with ş/ș and ţ/ț identified: cp1250, ISO-8859-2
and ISO-8859-16 store both spellings at the same byte, so no decoder can tell them apart.
"""

from __future__ import annotations

import gzip
import json
import os
import random
import sys
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from cinesub.sample.tracks import varnish_503_page

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "benchmarks" / "results"


def realdata_dir() -> Path:
    shared = Path(os.environ.get("CINESUB_SHARED", REPO.parent / "shared"))
    return shared / "realdata"


# --------------------------------------------------------------------------------------------
# the cases
# --------------------------------------------------------------------------------------------
_RO_FOLD = str.maketrans("şŞţŢ", "șȘțȚ")


@dataclass
class Case:
    name: str
    language: str
    raw: bytes
    truth: str | None
    category: str  # "full" | "short5" | "tiny2" | "adversarial"
    encoding: str  # the label (how the bytes were made)

    def normal(self, text: str) -> str:
        text = unicodedata.normalize("NFC", text.lstrip("\ufeff"))
        return text.translate(_RO_FOLD) if self.language == "ro" else text

    def is_correct(self, text: str | None) -> bool:
        if self.truth is None or text is None:
            return False
        return self.normal(text) == self.normal(self.truth)


#: realistic encodings per language: (label, codec, BOM)
REALISTIC: dict[str, list[tuple[str, str, bytes]]] = {
    "ar": [("utf-8", "utf-8", b""), ("utf-8-sig", "utf-8", b"\xef\xbb\xbf"), ("utf-16-le-bom", "utf-16-le", b"\xff\xfe"),
           ("utf-16-be-bom", "utf-16-be", b"\xfe\xff"), ("cp1256", "cp1256", b""), ("iso8859-6", "iso8859-6", b"")],
    "fa": [("utf-8", "utf-8", b""), ("utf-8-sig", "utf-8", b"\xef\xbb\xbf"), ("utf-16-le-bom", "utf-16-le", b"\xff\xfe"),
           ("utf-16-be-bom", "utf-16-be", b"\xfe\xff"), ("cp1256", "cp1256", b"")],
    "en": [("utf-8", "utf-8", b""), ("utf-8-sig", "utf-8", b"\xef\xbb\xbf"), ("utf-16-le-bom", "utf-16-le", b"\xff\xfe"),
           ("utf-16-be-bom", "utf-16-be", b"\xfe\xff"), ("cp1252", "cp1252", b"")],
    "id": [("utf-8", "utf-8", b""), ("utf-8-sig", "utf-8", b"\xef\xbb\xbf"), ("utf-16-le-bom", "utf-16-le", b"\xff\xfe"),
           ("utf-16-be-bom", "utf-16-be", b"\xfe\xff"), ("cp1252", "cp1252", b"")],
    "ro": [("utf-8", "utf-8", b""), ("utf-8-sig", "utf-8", b"\xef\xbb\xbf"), ("utf-16-le-bom", "utf-16-le", b"\xff\xfe"),
           ("utf-16-be-bom", "utf-16-be", b"\xfe\xff"), ("cp1250", "cp1250", b""), ("iso8859-16", "iso8859-16", b""),
           ("iso8859-2", "iso8859-2", b"")],
    "vi": [("utf-8", "utf-8", b""), ("utf-8-sig", "utf-8", b"\xef\xbb\xbf"), ("utf-16-le-bom", "utf-16-le", b"\xff\xfe"),
           ("utf-16-be-bom", "utf-16-be", b"\xfe\xff"), ("cp1258", "cp1258", b"")],
}

_INDEX_CODEC = (
    ("cp1256", "cp1256"),
    ("cp1252", "cp1252"),
    ("UTF-8 with BOM", "utf-8-sig"),
    ("UTF-16LE with BOM", "utf-16"),
    ("UTF-8 (no BOM)", "utf-8"),
)
_TONES = "\u0300\u0301\u0303\u0309\u0323"


def _cp1258(text: str) -> bytes:
    out = []
    for ch in text:
        try:
            out.append(ch.encode("cp1258"))
            continue
        except UnicodeEncodeError:
            pass
        nfd = unicodedata.normalize("NFD", ch)
        base = unicodedata.normalize("NFC", "".join(c for c in nfd if c not in _TONES))
        tones = "".join(c for c in nfd if c in _TONES)
        out.append((base + tones).encode("cp1258", errors="ignore"))
    return b"".join(out)


def legacy_bytes(text: str, codec: str) -> bytes:
    """``text`` as a real legacy file in ``codec`` would hold it (see the module docstring)."""
    if codec == "cp1256":
        text = text.replace("\u06cc", "\u064a")
    elif codec in ("cp1250", "iso8859-2"):
        text = text.replace("ș", "ş").replace("Ș", "Ş").replace("ț", "ţ").replace("Ț", "Ţ")
    elif codec == "iso8859-16":
        text = text.translate(_RO_FOLD)
    if codec == "cp1258":
        return _cp1258(text)
    return text.encode(codec, errors="ignore")


def real_texts(root: Path, languages=None, max_files: int | None = None) -> list[tuple[str, str, str]]:
    """(language, file name, text) for every real subtitle of the corpus languages."""
    index = json.loads((root / "srt" / "INDEX.json").read_text())
    out: list[tuple[str, str, str]] = []
    per_lang: dict[str, int] = {}
    for row in index:
        lang = row["lang"]
        if lang not in REALISTIC or (languages and lang not in languages):
            continue
        if max_files is not None and per_lang.get(lang, 0) >= max_files:
            continue
        codec = next(c for prefix, c in _INDEX_CODEC if row["encoding"].startswith(prefix))
        text = (root / "srt" / row["file"]).read_bytes().decode(codec)
        out.append((lang, Path(row["file"]).name, text))
        per_lang[lang] = per_lang.get(lang, 0) + 1
    return out


def _excerpt(text: str, n: int | None) -> str:
    if n is None:
        return text
    from extractors import srt

    eol = "\r\n" if "\r\n" in text else "\n"
    entries = srt.parse(text).entries
    mid = len(entries) // 2
    return srt.compose(entries[mid : mid + n]).replace("\n", eol)


_SIZES = {None: "full", 5: "short5", 2: "tiny2"}


def labelled_cases(root: Path | None = None, languages=None, sizes=(None, 5, 2), max_files: int | None = None) -> list[Case]:
    root = root or realdata_dir()
    cases: list[Case] = []
    for lang, name, text in real_texts(root, languages, max_files):
        for size in sizes:
            excerpt = _excerpt(text, size)
            for label, codec, bom in REALISTIC[lang]:
                if codec.startswith("utf"):
                    raw = bom + excerpt.encode(codec)
                    truth = excerpt
                else:
                    raw = legacy_bytes(excerpt, codec)
                    truth = raw.decode(codec)
                    if codec == "cp1258":
                        truth = unicodedata.normalize("NFC", truth)
                cases.append(Case(f"{lang}/{name}/{_SIZES[size]}/{label}", lang, raw, truth, _SIZES[size], label))
    return cases


CLOUDFLARE_PAGE = b"""<!DOCTYPE html>
<!--[if lt IE 7]> <html class="no-js ie6 oldie" lang="en-US"> <![endif]-->
<head>
<title>Attention Required! | Cloudflare</title>
<meta charset="UTF-8" />
</head>
<body>
  <div id="cf-wrapper">
    <div id="cf-error-details" class="cf-error-details-wrapper">
      <h1 data-translate="block_headline">Sorry, you have been blocked</h1>
      <h2 class="cf-subheadline">You are unable to access opensubtitles.org</h2>
      <span>Cloudflare Ray ID: <strong class="font-semibold">7d1c0a9e8b3c2f11</strong></span>
    </div>
  </div>
</body>
</html>
"""
GURU_PAGE = varnish_503_page(45667211).encode()


def adversarial_cases(root: Path | None = None) -> list[Case]:
    """The adversarial cases of issue 3, built from real texts where a text is needed."""
    root = root or realdata_dir()
    texts = {lang: [] for lang in REALISTIC}
    for lang, name, text in real_texts(root):
        texts[lang].append(text)
    ar, fa, en, vi = texts["ar"][1], texts["fa"][0], texts["en"][1], texts["vi"][0]
    rng = random.Random(20240607)
    cases: list[Case] = []

    def add(name, lang, raw, truth):
        cases.append(Case(f"adversarial/{name}", lang, raw, truth, "adversarial", name))

    credit = "1\r\n00:00:00,000 --> 00:00:05,000\r\nSubtitles by hunterhunt subs - www.example.com\r\n\r\n"
    for lang, text in (("ar", ar), ("fa", fa)):
        for n in (2, 5, None):
            body = _excerpt(text, n).replace("\n", "\r\n").replace("\r\r\n", "\r\n")
            full = credit + body
            raw = legacy_bytes(full, "cp1256")
            add(f"english-credit-top-cp1256-{lang}-{_SIZES[n]}", lang, raw, raw.decode("cp1256"))
    for n in (2, 3, 4, 5):
        body = _excerpt(en, n)
        raw = legacy_bytes(body, "cp1252")
        for parity, extra in (("odd", b"" if len(raw) % 2 else b" "), ("even", b"" if len(raw) % 2 == 0 else b" ")):
            r = raw + extra
            add(f"cp1252-en-{n}entries-{parity}-length", "en", r, r.decode("cp1252"))
    for lang, text in (("ar", ar), ("en", en), ("vi", vi)):
        for n in (2, None):
            body = _excerpt(text, n)
            add(f"utf-16-le-no-bom-{lang}-{_SIZES[n]}", lang, body.encode("utf-16-le"), body)
    for n in (63, 64, 1001, 4096):
        add(f"random-bytes-{n}", "en", bytes(rng.randrange(256) for _ in range(n)), None)
        add(f"random-bytes-{n}-ar", "ar", bytes(rng.randrange(256) for _ in range(n)), None)
    for lang, text in (("ar", ar), ("fa", fa)):
        ex = _excerpt(text, 40)
        half = len(ex) // 2
        cut = ex.index("\n\n", half) if "\n\n" in ex[half:] else ex.index("\r\n\r\n", half)
        raw = ex[:cut].encode("utf-8") + legacy_bytes(ex[cut:], "cp1256")
        add(f"half-utf8-half-cp1256-{lang}", lang, raw, None)
    add("gzip-cp1256-ar", "ar", gzip.compress(legacy_bytes(_excerpt(ar, None), "cp1256")),
        legacy_bytes(_excerpt(ar, None), "cp1256").decode("cp1256"))
    add("gzip-utf8-vi", "vi", gzip.compress(_excerpt(vi, 5).encode()), _excerpt(vi, 5))
    add("cloudflare-page", "en", CLOUDFLARE_PAGE, None)
    add("cloudflare-page-ar", "ar", CLOUDFLARE_PAGE, None)
    add("guru-meditation-page", "fa", GURU_PAGE, None)
    add("json-error", "vi", b'{"message":"You have downloaded your allowed 20 subtitles for 24h","status":406}', None)
    add("quota-placeholder", "ro",
        b"1\r\n00:00:01,000 --> 01:30:00,000\r\nIn order to continue you have to login\r\n", None)
    add("empty", "id", b"", None)
    moj = _excerpt(vi, 5).encode("utf-8").decode("cp1252", errors="ignore").encode("utf-8")
    add("double-encoded-utf8-vi", "vi", moj, None)
    moj_ar = _excerpt(ar, 5).encode("utf-8").decode("cp1256").encode("utf-8")
    add("double-encoded-utf8-ar", "ar", moj_ar, None)
    return cases


# --------------------------------------------------------------------------------------------
# results
# --------------------------------------------------------------------------------------------
def write_results(name: str, payload: dict[str, Any]) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def print_table(headers: list[str], rows: list[list[Any]], out=sys.stdout) -> None:
    cells = [[str(h) for h in headers]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    for k, r in enumerate(cells):
        print("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))), file=out)
        if k == 0:
            print("  ".join("-" * w for w in widths), file=out)


def timed(f: Callable[[], Any], repeat: int = 3) -> float:
    import time

    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t)
    return best


def publish_results(name: str, payload: dict[str, Any]) -> Path:
    """Write ``benchmarks/results/<name>.json`` (:func:`write_results`) and say where."""
    path = write_results(name, payload)
    print(f"\nwrote {path}")
    return path


def quick_main(doc: str | None, run: Callable[..., Any], quick_help: str) -> None:
    """The command line of a benchmark whose only option is ``--quick`` (``run(quick=...)``)."""
    import argparse

    ap = argparse.ArgumentParser(description=(doc or "").split("\n")[0])
    ap.add_argument("--quick", action="store_true", help=quick_help)
    run(quick=ap.parse_args().quick)
