"""Decoding accuracy on the labelled suite (issue 3): our ``default`` policy vs the ``paper``
cascade vs chardet vs charset-normalizer vs a subliminal-style language list, one table, one run.

    python -m benchmarks.bench_decode [--quick]

Suite (``benchmarks.common``): every real subtitle text of the six corpus languages in
``../shared/realdata/srt`` re-encoded into every realistic encoding for its language, at full
length, 5 entries and 2 entries, plus the adversarial cases of the issue (English credit on top of
a cp1256 file, odd/even-length cp1252, UTF-16-LE without BOM, random bytes, half UTF-8 / half
cp1256, gzip payloads, Cloudflare/Varnish/JSON error bodies, quota placeholder, empty body,
double-encoded UTF-8).

Scoring, per case and decoder:

* **correct** — the returned text is the text the bytes encode (NFC, leading BOM ignored,
  Romanian ş/ș identified: see ``benchmarks.common``), whatever the status; or, where no correct
  text exists, the decoder flagged or rejected the file;
* **silent mis-decode** — status ``ok`` (the three outside tools always answer ``ok`` when they
  return text) with a wrong text, or with text where none is correct;
* otherwise the failure was **caught** (flagged/rejected with a wrong or no text).

Writes ``benchmarks/results/bench_decode.json``.
"""

from __future__ import annotations

import time
from collections import defaultdict
from typing import Callable

import chardet
from charset_normalizer import from_bytes

from benchmarks.common import Case, adversarial_cases, labelled_cases, print_table, publish_results, quick_main
from extractors.decode import decode

Outcome = tuple[str | None, str]  # (text, status)


def ours_default(raw: bytes, lang: str) -> Outcome:
    d = decode(raw, lang, "default")
    return d.text, d.status


def ours_paper(raw: bytes, lang: str) -> Outcome:
    d = decode(raw, lang, "paper")
    return d.text, d.status


def _strict(raw: bytes, enc: str | None) -> Outcome:
    if not enc:
        return None, "rejected"
    try:
        return raw.decode(enc), "ok"
    except (UnicodeDecodeError, LookupError):
        return None, "rejected"


def chardet_only(raw: bytes, lang: str) -> Outcome:
    return _strict(raw, chardet.detect(raw).get("encoding"))


def charset_normalizer_only(raw: bytes, lang: str) -> Outcome:
    best = from_bytes(raw).best()
    if best is None:
        return None, "rejected"
    return str(best), "ok"


#: Bazarr's subliminal_patch ``guess_encoding`` language list (subliminal upstream has fewer):
#: utf-8, then one language-specific code page (latin-1 for "Western" languages), then chardet.
_SUBLIMINAL = {"ar": ["windows-1256"], "fa": ["windows-1256"], "ro": ["windows-1250"]}


def subliminal_style(raw: bytes, lang: str) -> Outcome:
    for enc in ["utf-8", *_SUBLIMINAL.get(lang, ["latin-1"])]:
        try:
            return raw.decode(enc), "ok"
        except UnicodeDecodeError:
            pass
    return _strict(raw, chardet.detect(raw).get("encoding"))


DECODERS: dict[str, Callable[[bytes, str], Outcome]] = {
    "cinesub default": ours_default,
    "cinesub paper (SPEC A3)": ours_paper,
    "chardet 7": chardet_only,
    "charset-normalizer": charset_normalizer_only,
    "subliminal-style list": subliminal_style,
}


def score(case: Case, text: str | None, status: str) -> str:
    if case.truth is None:
        return "correct" if status in ("flagged", "rejected") else "silent"
    if case.is_correct(text):
        return "correct"
    return "silent" if status == "ok" else "caught"


def run(quick: bool = False) -> dict:
    sizes = (None, 2) if quick else (None, 5, 2)
    cases = labelled_cases(sizes=sizes, max_files=2 if quick else None) + adversarial_cases()
    categories = ["full", "short5", "tiny2", "adversarial"]
    results: dict[str, dict] = {}
    for name, fn in DECODERS.items():
        per_cat: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        per_lang: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        failures: list[dict] = []
        t0 = time.perf_counter()
        for case in cases:
            try:
                text, status = fn(case.raw, case.language)
            except Exception as e:  # noqa: BLE001 - a crash is a failure of that decoder
                text, status = None, f"crash:{type(e).__name__}"
            s = score(case, text, status)
            for bucket in (per_cat[case.category], per_lang[case.language], per_cat["all"]):
                bucket[s] += 1
                bucket["total"] += 1
            if s != "correct":
                failures.append({"case": case.name, "outcome": s, "status": status})
        elapsed = time.perf_counter() - t0
        results[name] = {
            "seconds": round(elapsed, 3),
            "by_category": {k: dict(v) for k, v in per_cat.items()},
            "by_language": {k: dict(v) for k, v in per_lang.items()},
            "failures": failures,
        }

    headers = ["decoder", "correct", "silent", "caught"] + [f"{c} ok/n" for c in categories] + ["s"]
    rows = []
    for name, r in results.items():
        a = r["by_category"]["all"]
        row = [name, f"{a.get('correct', 0)}/{a['total']} ({100 * a.get('correct', 0) / a['total']:.1f}%)",
               a.get("silent", 0), a.get("caught", 0)]
        for c in categories:
            b = r["by_category"].get(c, {})
            row.append(f"{b.get('correct', 0)}/{b.get('total', 0)}")
        row.append(r["seconds"])
        rows.append(row)
    print(f"\nDecoding accuracy: {len(cases)} cases "
          f"({sum(1 for c in cases if c.category != 'adversarial')} re-encoded real texts, "
          f"{sum(1 for c in cases if c.category == 'adversarial')} adversarial)\n")
    print_table(headers, rows)
    payload = {
        "suite": {
            "cases": len(cases),
            "by_category": {c: sum(1 for x in cases if x.category == c) for c in categories},
            "no_correct_text": sum(1 for x in cases if x.truth is None),
            "quick": quick,
        },
        "decoders": results,
    }
    publish_results("bench_decode", payload)
    return payload


if __name__ == "__main__":
    quick_main(__doc__, run, "2 files per language, full and tiny only")
