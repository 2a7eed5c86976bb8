"""Generate the deterministic sample world (issue 2, point 6) and its ground-truth manifest.

``generate(out_dir, seed, n_films)`` writes review pages shaped like Kids-in-Mind and Common Sense
Media, IMDb dataset files and title pages, and subtitle candidates laid out like a provider dump
(``subtitles/<tt>/<lang>/<file_id>.srt`` + OpenSubtitles-style ``.json`` sidecar). Everything is a
pure function of ``(seed, n_films)``: a second run writes byte-identical files.

The films themselves (identities, review facts, funnel cases) come from
:mod:`cinesub.sample.films`; this module plants the subtitle candidates and writes the world.

The manifest (``manifest.json``, also returned) records everything that was planted: the funnel
gate at which each film must drop, every candidate with its encoding and planted defect or
boundary case, the candidate the pipeline must select per film and language, the boilerplate
entries sanitization must remove, the e-mail entries it must redact, the mechanical repairs the
parser must make, and the English language-safety occurrences. See ``docs/sample_world.md``.
"""

from __future__ import annotations

import hashlib
import json
import random
import shutil
import unicodedata
from pathlib import Path
from typing import Any

import cinesub.sample.catalog as catalog
from cinesub.sample.encodings import ENCODINGS, MENU
from cinesub.sample.films import GATE_CASES, GATES, MIN_FILMS, imdb_id, make_film, seeded_rng
from cinesub.sample.listings import LISTINGS_FILE, SURVEY_ALSO_MISSING, listing_plan, manifest_entry
from cinesub.sample.model import Film
from cinesub.sample.pages import (
    AKAS_HEADER,
    BASICS_HEADER,
    CREW_HEADER,
    NAMES_HEADER,
    PRINCIPALS_HEADER,
    RATINGS_HEADER,
    akas_rows,
    basics_row,
    crew_row,
    name_rows,
    principals_rows,
    render_csm,
    render_imdb_index,
    render_kim,
    render_kim_index,
    render_parentalguide,
    render_plotsummary,
    ratings_row,
)
from cinesub.sample.phrases import A9_CATEGORIES, BOILERPLATE, EMAIL_IDS, KIM_TO_A9, LANGS, PHRASES
from cinesub.sample.tracks import (
    MIN,
    PROVIDER_BODIES,
    Unit,
    corrupt_utf8,
    header,
    headers as srt_headers,
    layout,
    reading_durations,
    render_srt,
    ts,
)
from cinesub.settings import COUNTRIES

GENERATOR_VERSION = "1.1"  # 1.1: Kids-in-Mind ids "<letter>/<slug>", per-letter index pages, CSM layouts B/C

#: OpenSubtitles multi-file items (CD1/CD2 uploads), served by the OpenSubtitles emulation only
MULTIPART_DIR = "opensubtitles_multipart"

#: Verification layers whose failure stops ingestion (status "rejected"); the others ingest the
#: track with a flag (status "flagged"). Either way the pipeline must fall back to the next one.
STOP_LAYERS = {"provider_body", "timestamp_syntax", "encoding"}

#: Planted defects in rank-1 candidates of passing films: (layer, variant, language, needs a long film).
DEFECTS: list[tuple[str, str, str, bool]] = [
    ("block_lifespan", "long_block", "id", True),
    ("runtime_coverage", "compressed_timeline", "ro", True),
    ("macro_interval", "long_gap", "ar", True),
    ("provider_body", "cloudflare_html", "en", False),
    ("provider_body", "json_quota_error", "id", False),
    ("provider_body", "guru_meditation", "ro", False),
    ("timestamp_syntax", "truncated_ms", "ar", False),
    ("timestamp_syntax", "short_arrow", "vi", False),
    ("chronology", "inverted_block", "fa", False),
    ("delayed_onset", "late_start", "en", False),
    ("language_mismatch", "en_text", "ro", False),
    ("language_mismatch", "ar_text", "fa", False),
    ("encoding", "invalid_utf8_run", "vi", False),
    ("encoding", "random_binary", "ar", False),
]
#: Boundary non-defects (must NOT be flagged) in rank-1 candidates: (name, language, needs a long film).
BOUNDARIES: list[tuple[str, str, bool]] = [
    ("gap_14m59", "ro", True),
    ("block_14m59", "vi", True),
    ("onset_4m59", "en", False),
    ("ms_separator_colon", "ar", False),
    ("ms_separator_dot", "id", False),
]
BOUNDARY_MS = 14 * MIN + 59_000  # 14:59.000
ONSET_BOUNDARY_MS = 4 * MIN + 59_000  # 4:59.000




def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --------------------------------------------------------------------------------------------
# Candidates
# --------------------------------------------------------------------------------------------
class _EncodingCycle:
    """Round-robin over a shuffled, weighted menu per language, so every encoding is used."""

    def __init__(self, seed: int):
        self._cycles: dict[str, list[str]] = {}
        self._pos: dict[str, int] = {}
        for lang in LANGS:
            items = [label for label, w in MENU[lang] for _ in range(w)]
            seeded_rng(seed, "encodings", lang).shuffle(items)
            self._cycles[lang], self._pos[lang] = items, 0

    def next(self, lang: str) -> str:
        items = self._cycles[lang]
        label = items[self._pos[lang] % len(items)]
        self._pos[lang] += 1
        return label


def _download_counts(rng: random.Random, k: int) -> list[int]:
    counts = [rng.randint(900, 60_000)]
    for _ in range(k - 1):
        counts.append(max(1, min(counts[-1] - 1, int(counts[-1] * rng.uniform(0.25, 0.85)))))
    return counts


def _sidecar(rng: random.Random, film: Film, lang: str, file_id: int, count: int, rank: int, k: int) -> dict:
    legacy = rng.randint(3_000_000, 9_999_999)
    mt = rank == k and k >= 3 and rng.random() < 0.5
    group = rng.choice(["YIFY", "SPARKS", "RARBG", "GECKOS", "FGT", "NTb", "AMIABLE"])
    res = rng.choice(["720p", "1080p", "2160p"])
    release = f"{film.title.replace(' ', '.').replace(chr(39), '')}.{film.year}.{res}.BluRay.x264-{group}"
    uploader = rng.choice([("Anonymous", "anonymous", None), ("explosiveskull", "translator", 44112),
                           ("subtitlesteam", "trusted", 90210), ("kitty_subs", "Bronze member", 31337),
                           ("moviebuff77", "Sub leecher", 77777)])
    return {
        "subtitle_id": str(rng.randint(1_000_000, 9_999_999)),
        "language": lang,
        "download_count": count,
        "new_download_count": count // rng.randint(3, 20),
        "hearing_impaired": rng.random() < 0.15,
        "hd": res != "720p",
        "fps": rng.choice([23.976, 24.0, 25.0]),
        "votes": rng.randint(0, 12),
        "ratings": round(rng.choice([0.0, 0.0, 6.0, 8.0, 10.0]), 1),
        "from_trusted": uploader[1] == "trusted",
        "foreign_parts_only": False,
        "upload_date": f"{rng.randint(max(film.year, 2008), 2025)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}Z",
        "file_hashes": [],
        "ai_translated": mt and rng.random() < 0.5,
        "nb_cd": 1,
        "slug": f"{legacy}-{catalog.slugify(release)}",
        "machine_translated": mt,
        "release": release,
        "comments": rng.choice([None, "", "Resynced for BluRay release.", "Corrected some typos."]),
        "legacy_subtitle_id": legacy,
        "legacy_uploader_id": rng.randint(100_000, 9_999_999),
        "uploader": {"uploader_id": uploader[2], "name": uploader[0], "rank": uploader[1]},
        "feature_details": {
            "feature_id": 500_000 + film.idx,
            "feature_type": "Movie",
            "year": film.year,
            "title": film.title,
            "movie_name": f"{film.year} - {film.title}",
            "imdb_id": int(film.imdb_id[2:]),
            "tmdb_id": 10_000 + film.idx * 7,
        },
        "url": f"https://www.opensubtitles.com/{lang}/subtitles/legacy/{legacy}",
        "related_links": [{"label": f"All subtitles for {film.title.lower()}",
                           "url": f"https://www.opensubtitles.com/{lang}/movies/{film.year}-{catalog.slugify(film.title)}",
                           "img_url": f"https://s9.opensubtitles.com/features/{500_000 + film.idx}.jpg"}],
        "files": [{"file_id": file_id, "cd_number": 1, "file_name": release}],
    }


class _World:
    def __init__(self, out: Path, seed: int):
        self.out, self.seed = out, seed
        self.candidates: list[dict] = []
        self.boilerplate: list[dict] = []
        self.emails: list[dict] = []
        self.repairs: list[dict] = []
        self.selection: list[dict] = []
        self.language_safety: list[dict] = []
        self.file_ids: set[int] = set()
        self.encodings = _EncodingCycle(seed)
        self.multi_parts: list[dict] = []

    def file_id(self, rng: random.Random) -> int:
        while True:
            fid = rng.randint(1_000_000, 12_999_999)
            if fid not in self.file_ids:
                self.file_ids.add(fid)
                return fid

    # ----------------------------------------------------------------------------------------
    def film_language(self, film: Film, lang: str, special: tuple[str, str, str] | None, passing: bool) -> None:
        """Plan, render and write the candidates of one film and language.

        ``special`` is ("defect", layer, variant) or ("boundary", name, "") for the rank-1 candidate.
        """
        rng = seeded_rng(self.seed, "slot", film.imdb_id, lang)
        reaches_gate5 = film.expected_drop_gate in (None, "language_coverage", "country_coverage")
        if film.missing_language == lang or (film.missing_language is not None and lang == SURVEY_ALSO_MISSING):
            self.selection.append({"imdb_id": film.imdb_id, "language": lang, "file_id": None})
            return
        if film.unusable_language == lang:
            plans = [("defect", "provider_body", "cloudflare_html"), ("defect", "language_mismatch", "en_text")]
        else:
            k = rng.choice([2, 2, 2, 3, 3, 3, 3, 4, 4]) if passing else 2
            plans = [special] + [None] * (k - 1)
        counts = _download_counts(rng, len(plans))
        selected: str | None = None
        for rank, (plan, count) in enumerate(zip(plans, counts, strict=True), start=1):
            fid = self.file_id(rng)
            cand = self.candidate(film, lang, rank, len(plans), fid, count, plan, passing)
            if selected is None and cand["defect_layer"] is None:
                selected = cand["file_id"]
        if reaches_gate5:
            self.selection.append({"imdb_id": film.imdb_id, "language": lang, "file_id": selected})

    def candidate(self, film: Film, lang: str, rank: int, k: int, fid: int, count: int,
                  plan: tuple[str, str, str] | None, passing: bool) -> dict:
        rng = seeded_rng(self.seed, "cand", film.imdb_id, lang, rank)
        layer = plan[1] if plan and plan[0] == "defect" else None
        variant = plan[2] if plan and plan[0] == "defect" else None
        boundary = plan[1] if plan and plan[0] == "boundary" else None
        rel = Path("subtitles") / film.imdb_id / lang
        eol = "crlf" if rng.random() < 0.6 else "lf"
        detail: str | None = None
        n_entries: int | None = None
        first_start = last_end = None
        text_sha: str | None = None
        if layer == "provider_body":
            body = PROVIDER_BODIES[variant](rng)
            raw = body.encode("utf-8")
            label, codec, eol = "utf-8", "utf-8", "lf"
            text_sha = _sha(unicodedata.normalize("NFC", body).encode("utf-8"))
            detail = {"cloudflare_html": "Cloudflare 520 error page saved as .srt",
                      "json_quota_error": "OpenSubtitles JSON quota error body saved as .srt",
                      "guru_meditation": "Varnish 503 'Guru Meditation' page saved as .srt"}[variant]
        elif layer == "encoding" and variant == "random_binary":
            raw = rng.randbytes(rng.randint(30_000, 60_000))
            label, codec, eol = "binary", None, None
            detail = "random binary bytes"
        else:
            text_lang = lang
            if layer == "language_mismatch":
                text_lang = {"en_text": "en", "ar_text": "ar"}[variant]
                detail = f"the {lang} slot holds {text_lang} dialogue"
            clean = layer is None
            lead: list[tuple[str, str]] = []
            trail: list[tuple[str, str]] = []
            if clean and self._wants_boilerplate(film, lang, rank, rng):
                pool = BOILERPLATE[lang]
                if boundary != "onset_4m59":
                    lead = rng.sample(pool, rng.randint(1, 2))
                trail = rng.sample(pool, rng.randint(1, 2))
            units = film.dialogue
            texts = [t for t, _ in lead] + [u.text(text_lang) for u in units] + [t for t, _ in trail]
            n = len(texts)
            off = len(lead)
            durs = reading_durations(rng, texts)
            runtime_ms = film.runtime_min * MIN
            first_start = rng.randint(60_000, 180_000)
            last_end = int(runtime_ms * rng.uniform(0.88, 0.96))
            fixed_gaps: dict[int, int] = {}
            fixed_durs: dict[int, int] = {}
            mid = rng.randint(int(n * 0.3), int(n * 0.7))
            if layer == "delayed_onset":
                first_start = rng.randint(5 * MIN + 30_000, 9 * MIN)
                detail = f"first subtitle at {ts(first_start)}"
            elif boundary == "onset_4m59":
                first_start = ONSET_BOUNDARY_MS
            elif layer == "runtime_coverage":
                last_end = int(runtime_ms * rng.uniform(0.52, 0.60))
                detail = f"last end {ts(last_end)} = {last_end / runtime_ms:.3f} of the runtime"
            elif layer == "macro_interval":
                fixed_gaps[mid] = rng.randint(16 * MIN, 22 * MIN)
                detail = f"gap of {fixed_gaps[mid] / MIN:.2f} min after entry {mid + 1}"
            elif boundary == "gap_14m59":
                fixed_gaps[mid] = BOUNDARY_MS
            elif layer == "block_lifespan":
                fixed_durs[mid] = rng.randint(15 * MIN + 30_000, 19 * MIN)
                detail = f"entry {mid + 1} lasts {fixed_durs[mid] / MIN:.2f} min"
            elif boundary == "block_14m59":
                fixed_durs[mid] = BOUNDARY_MS
            starts, ends = layout(rng, durs, first_start, last_end, fixed_gaps, fixed_durs)
            headers = srt_headers(starts, ends)
            broken: list[int] = []
            if layer == "chronology":
                ends[mid] = starts[mid] - rng.randint(800, 4000)
                headers[mid] = header(starts[mid], ends[mid])
                detail = f"entry {mid + 1}: {headers[mid]}"
            elif layer == "timestamp_syntax":
                if variant == "truncated_ms":
                    headers[mid] = f"{ts(starts[mid])[:-2]} --> {ts(ends[mid])[:-2]}:"
                else:
                    headers[mid] = f"{ts(starts[mid])} -> {ts(ends[mid])}"
                broken.append(mid)
            repaired: list[tuple[int, str]] = []
            if boundary in ("ms_separator_colon", "ms_separator_dot"):
                sep = ":" if boundary == "ms_separator_colon" else "."
                for j in sorted(rng.sample(range(int(n * 0.1), int(n * 0.9)), 2)):
                    headers[j] = header(starts[j], ends[j], sep)
                    repaired.append((j, header(starts[j], ends[j])))
            text, header_lines = render_srt(headers, texts, eol)
            if layer == "timestamp_syntax":
                detail = f"line {header_lines[mid]}: {headers[mid]}"
            if layer == "encoding":  # invalid_utf8_run
                raw = corrupt_utf8(rng, text.encode("utf-8"))
                label, codec = "invalid-utf-8", None
                detail = "UTF-8 text with runs of invalid bytes in about 12% of the text lines"
            else:
                label = "utf-8" if layer == "language_mismatch" else self.encodings.next(lang)
                enc = ENCODINGS[label]
                raw = enc.encode(text)
                codec = enc.codec
                decoded = unicodedata.normalize("NFC", raw.decode(codec))
                text_sha = _sha(decoded.encode("utf-8"))
            n_entries = n
            fid_s = str(fid)
            if layer not in ("provider_body", "encoding", "timestamp_syntax"):
                # every track that parses carries the narrative e-mail lines (defective ones too)
                for j, u in enumerate(units):
                    if u.pids[0] in EMAIL_IDS and len(u.pids) == 1:
                        self.emails.append({"imdb_id": film.imdb_id, "language": lang, "file_id": fid_s, "index": off + j + 1})
            if clean:
                for i, (_, kind) in enumerate(lead):
                    self.boilerplate.append({"imdb_id": film.imdb_id, "language": lang, "file_id": fid_s, "index": i + 1, "kind": kind})
                for i, (_, kind) in enumerate(trail):
                    self.boilerplate.append({"imdb_id": film.imdb_id, "language": lang, "file_id": fid_s, "index": off + len(units) + i + 1, "kind": kind})
                for j, after in repaired:
                    self.repairs.append({"imdb_id": film.imdb_id, "language": lang, "file_id": fid_s,
                                         "line": header_lines[j], "before": headers[j], "after": after})
                if lang == "en":
                    self._safety_evidence(film, fid_s, units, off)
        path = self.out / rel / f"{fid}.srt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(raw)
        side = _sidecar(rng, film, lang, fid, count, rank, k)
        (self.out / rel / f"{fid}.json").write_text(json.dumps(side, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        cand = {
            "imdb_id": film.imdb_id,
            "language": lang,
            "file_id": str(fid),
            "rank": rank,
            "download_count": count,
            "path": (rel / f"{fid}.srt").as_posix(),
            "encoding": label,
            "codec": codec,
            "bom": label in ("utf-8-sig", "utf-16-le", "utf-16-be"),
            "eol": eol,
            "defect_layer": layer,
            "defect_variant": variant,
            "defect_detail": detail,
            "boundary_case": boundary,
            "expected_status": "ok" if layer is None else ("rejected" if layer in STOP_LAYERS else "flagged"),
            "entries": n_entries,
            "first_start_ms": first_start,
            "last_end_ms": last_end,
            "machine_translated": side["machine_translated"],
            "ai_translated": side["ai_translated"],
            "size": len(raw),
            "sha256": _sha(raw),
            "text_sha256": text_sha,
        }
        self.candidates.append(cand)
        return cand

    def multi_part(self, film: Film, lang: str, joinable: bool) -> dict:
        """Plant one OpenSubtitles multi-file item (2 CDs) for ``film``/``lang`` under
        ``opensubtitles_multipart/`` (served by the OpenSubtitles emulation only), ranked below
        every candidate of the slot: ``joinable`` → CD2 keeps absolute timestamps (indices restart
        at 1), else CD2's timestamps restart near 0 (→ ``multi_part``). Own RNG stream, called
        after every regular candidate: the rest of the world is unchanged."""
        rng = seeded_rng(self.seed, "multipart", film.imdb_id, lang, joinable)
        slot = [c["download_count"] for c in self.candidates if (c["imdb_id"], c["language"]) == (film.imdb_id, lang)]
        count = max(1, (min(slot) if slot else 100) // (2 if joinable else 3))
        fids = [self.file_id(rng), self.file_id(rng)]
        texts = [u.text(lang) for u in film.dialogue]
        durs = reading_durations(rng, texts)
        runtime_ms = film.runtime_min * MIN
        starts, ends = layout(rng, durs, rng.randint(60_000, 120_000), int(runtime_ms * 0.93), {}, {})
        mid = len(texts) // 2
        shift = 0 if joinable else starts[mid] - rng.randint(15_000, 40_000)
        halves = [(starts[:mid], ends[:mid], texts[:mid]),
                  ([x - shift for x in starts[mid:]], [x - shift for x in ends[mid:]], texts[mid:])]
        side = _sidecar(rng, film, lang, fids[0], count, 1, 1)
        release = side["release"]
        side["nb_cd"] = 2
        side["files"] = [{"file_id": fid, "cd_number": n, "file_name": f"{release}.cd{n}"}
                         for n, fid in enumerate(fids, start=1)]
        rel = Path(MULTIPART_DIR) / film.imdb_id / lang
        parts = []
        for n, (fid, (st, en, tx)) in enumerate(zip(fids, halves, strict=True), start=1):
            text, _ = render_srt(srt_headers(st, en), tx, "crlf")
            raw = text.encode("utf-8")
            path = self.out / rel / f"{fid}.srt"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(raw)
            (self.out / rel / f"{fid}.json").write_text(json.dumps(side, ensure_ascii=False, indent=2) + "\n",
                                                        encoding="utf-8")
            parts.append({"file_id": str(fid), "cd_number": n, "path": (rel / f"{fid}.srt").as_posix(),
                          "entries": len(tx), "first_start_ms": st[0], "last_end_ms": en[-1], "sha256": _sha(raw)})
        return {"imdb_id": film.imdb_id, "language": lang, "subtitle_id": side["subtitle_id"],
                "file_id": "+".join(str(f) for f in fids), "download_count": count,
                "expected": "joined" if joinable else "multi_part", "parts": parts}

    def _wants_boilerplate(self, film: Film, lang: str, rank: int, rng: random.Random) -> bool:
        if film.expected_drop_gate is None and (film.idx + LANGS.index(lang)) % 3 == 0:
            return True  # forced on a third of the passing films' candidates per language
        return rng.random() < 0.12

    def _safety_evidence(self, film: Film, fid: str, units: list[Unit], off: int) -> None:
        cats: dict[str, dict[str, Any]] = {c: {"occurrenceCount": 0, "evidenceLineCount": 0, "evidenceSubtitleIndices": []} for c in A9_CATEGORIES}
        for j, u in enumerate(units):
            hit: set[str] = set()
            for pid in u.pids:
                for kim_cat, n in PHRASES[pid].tags.items():
                    cat = KIM_TO_A9[kim_cat]
                    cats[cat]["occurrenceCount"] += n
                    hit.add(cat)
            for cat in sorted(hit):
                cats[cat]["evidenceLineCount"] += 1
                cats[cat]["evidenceSubtitleIndices"].append(off + j + 1)
        self.language_safety.append({"imdb_id": film.imdb_id, "file_id": fid, "categories": cats})


# --------------------------------------------------------------------------------------------
# Specials: which rank-1 candidate of which passing film carries which defect / boundary case
# --------------------------------------------------------------------------------------------
def _assign_specials(passing: list[Film]) -> dict[tuple[str, str], tuple[str, str, str]]:
    specials: list[tuple[tuple[str, str, str], str, bool]] = [
        (("defect", layer, variant), lang, long) for layer, variant, lang, long in DEFECTS
    ] + [(("boundary", name, ""), lang, long) for name, lang, long in BOUNDARIES]
    specials.sort(key=lambda s: not s[2])  # long-film cases first
    load: dict[str, int] = {f.imdb_id: 0 for f in passing}
    out: dict[tuple[str, str], tuple[str, str, str]] = {}
    for plan, lang, long in specials:
        choices = [f for f in passing if (f.imdb_id, lang) not in out]
        if not choices:
            raise ValueError("too few passing films for the planted cases; raise n_films")
        if long:
            film = min(choices, key=lambda f: (load[f.imdb_id], -f.runtime_min, f.idx))
        else:
            film = min(choices, key=lambda f: (load[f.imdb_id], f.idx))
        out[(film.imdb_id, lang)] = plan
        load[film.imdb_id] += 1
    return out


# --------------------------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------------------------
_OWNED = ("world.json", "manifest.json", "kim", "kim_index", "csm", "imdb", "subtitles", MULTIPART_DIR,
          LISTINGS_FILE)


def _prepare(out: Path) -> None:
    if out.exists() and any(out.iterdir()):
        if not (out / "world.json").is_file():
            raise FileExistsError(f"{out} is not empty and holds no sample world; refusing to write into it")
        for name in _OWNED:
            p = out / name
            if p.is_dir():
                shutil.rmtree(p)
            elif p.exists():
                p.unlink()
    out.mkdir(parents=True, exist_ok=True)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))


def generate(out_dir: Path, seed: int = 7, n_films: int = 40) -> dict:
    """Write the sample world under ``out_dir`` and return its ground-truth manifest.

    Deterministic: the same ``(seed, n_films)`` always yields byte-identical files. An existing
    sample world in ``out_dir`` is replaced; any other non-empty directory is refused.
    """
    if n_films < MIN_FILMS:
        raise ValueError(f"n_films must be at least {MIN_FILMS} (one film per funnel case plus passing films)")
    out = Path(out_dir)
    _prepare(out)
    rng = seeded_rng(seed, "world")
    titles = catalog.titles(rng, n_films)
    order = list(range(n_films))
    rng.shuffle(order)
    case_of: dict[int, str] = {order[i]: GATE_CASES[i][0] for i in range(len(GATE_CASES))}
    passing_idx = sorted(i for i in range(n_films) if i not in case_of)
    email_films = {passing_idx[1]: EMAIL_IDS[0], passing_idx[-2]: EMAIL_IDS[1]}
    used_ids: set[str] = set()
    films = [make_film(i, titles[i], case_of.get(i), seed, used_ids, email_films.get(i)) for i in range(n_films)]
    passing = [f for f in films if f.expected_drop_gate is None]
    for f in films:  # the film without fa candidates lacks SURVEY_ALSO_MISSING too (cinesub/sample/listings.py)
        if f.missing_language is not None:
            f.expected_drop_detail = f"no candidates in {f.missing_language} or {SURVEY_ALSO_MISSING}"
    # Old IMDb country names and the modern certificates layout on at least two passing films each.
    for f in passing[:2]:
        f.certificates = [
            c.replace("United Kingdom:", "UK:").replace("United States:", "USA:") for c in f.certificates
        ]
        f.ratings = [dict(r, raw=r["raw"].replace("United Kingdom:", "UK:").replace("United States:", "USA:")) for r in f.ratings]
    for f in passing[2:4]:
        f.cert_style = "modern"

    # -- unrelated IMDb titles, among them the namesake the mismatching CSM page links to ---------
    extra_rows: list[tuple[str, str, str, str, int | None, int | None, int | None, list[str]]] = []
    for f in films:
        if f.expected_drop_reason == "csm_link_mismatch":
            other = imdb_id(rng, f.year - 25, used_ids)
            f.csm_link = f"https://www.imdb.com/title/{other}/"
            extra_rows.append((other, "movie", f.title, f.title, f.year - rng.randint(15, 30), None, rng.randint(80, 120), ["Drama"]))
    extra_rows += [
        (imdb_id(rng, 2011, used_ids), "tvSeries", "Harbour Police", "Harbour Police", 2011, 2015, 44, ["Crime", "Drama"]),
        (imdb_id(rng, 2012, used_ids), "tvEpisode", "Episode #1.3", "Episode #1.3", 2012, None, 43, ["Crime", "Drama"]),
        (imdb_id(rng, 2016, used_ids), "short", "The Lantern", "Felinarul", 2016, None, 14, ["Short"]),
        (imdb_id(rng, 2020, used_ids), "videoGame", "Storm Harbor: The Game", "Storm Harbor: The Game", 2020, None, None, ["Action", "Adventure"]),
        (imdb_id(rng, 1999, used_ids), "tvMovie", "A Quiet Christmas", "A Quiet Christmas", 1999, None, 88, ["Drama", "Family"]),
        (imdb_id(rng, 2005, used_ids), "movie", "Untitled Calder Project", "Untitled Calder Project", None, None, None, []),
    ]

    # -- pages -----------------------------------------------------------------------------------
    if len({f.kim_id for f in films}) != len(films):
        raise ValueError("two sample films share a Kids-in-Mind id")
    latest = sorted(films, key=lambda x: (-x.year, x.idx))[:4]  # the KIM "latest reviews" sidebar
    for letter in "abcdefghijklmnopqrstuvwxyz":  # every letter page, as on KIM (some lists empty)
        _write(out / "kim_index" / f"{letter}.htm",
               render_kim_index(letter, [f for f in films if f.kim_id.startswith(letter + "/")], latest))
    for f in films:
        _write(out / "kim" / f"{f.kim_id}.html", render_kim(f))
        if f.csm_id:
            _write(out / "csm" / f"{f.csm_id}.html", render_csm(f))
        tdir = out / "imdb" / "title" / f.imdb_id
        _write(tdir / "index.html", render_imdb_index(f))
        _write(tdir / "plotsummary.html", render_plotsummary(f))
        _write(tdir / "parentalguide.html", render_parentalguide(f))
    basics = [basics_row(f.imdb_id, "movie", f.title, f.title, f.year, None, f.runtime_min, f.genres) for f in films]
    basics += [basics_row(*r) for r in extra_rows]
    basics.sort(key=lambda r: r.split("\t", 1)[0])
    _write(out / "imdb" / "title.basics.tsv", BASICS_HEADER + "\n" + "\n".join(basics) + "\n")
    ratings = [ratings_row(f.imdb_id, f.imdb_rating, f.votes) for f in films]
    ratings += [ratings_row(r[0], round(rng.uniform(5.0, 8.0), 1), rng.randint(20, 5000)) for r in extra_rows[:-1]]
    ratings.sort(key=lambda r: r.split("\t", 1)[0])
    _write(out / "imdb" / "title.ratings.tsv", RATINGS_HEADER + "\n" + "\n".join(ratings) + "\n")
    _write_imdb_credits(out / "imdb", films, extra_rows)

    # -- subtitles -----------------------------------------------------------------------------
    world = _World(out, seed)
    specials = _assign_specials(passing)
    for f in films:
        if not f.has_subtitles:
            continue
        for lang in LANGS:
            world.film_language(f, lang, specials.get((f.imdb_id, lang)), passing=f.expected_drop_gate is None)
    # two multi-CD OpenSubtitles items, ranked last in English slots whose rank-1 candidate is
    # clean (so the sample funnel and every selected track stay as they are)
    plain = [f for f in passing if ("en" not in (f.missing_language, f.unusable_language))
             and (f.imdb_id, "en") not in specials]
    targets = (plain[:2] * 2)[:2]  # two films, or both items in one slot of a small world
    world.multi_parts = [world.multi_part(f, "en", joinable) for f, joinable in zip(targets, (True, False))]

    world.survey_listings = _plant_listings(world, films)

    manifest = _manifest(seed, n_films, films, world)
    _write(out / "manifest.json", json.dumps(manifest, ensure_ascii=False, indent=1) + "\n")
    _write(out / "world.json", json.dumps({"seed": seed, "n_films": n_films, "generator_version": GENERATOR_VERSION}, indent=2) + "\n")
    return manifest


def _write_imdb_credits(imdb: Path, films: list[Film], extra_rows: list[tuple]) -> None:
    """title.crew, title.principals, title.akas and name.basics of the sample world, consistent
    with the films (ids of the people the pages name). Rows are in tconst order except akas,
    whose orderings are in string order as IMDb ships them; the unrelated titles have crew rows
    of nulls. Derived from the films only (no random draws), so the world is otherwise unchanged."""
    crew = [crew_row(f) for f in films] + [f"{r[0]}\t\\N\t\\N" for r in extra_rows]
    crew.sort(key=lambda r: r.split("\t", 1)[0])
    _write(imdb / "title.crew.tsv", CREW_HEADER + "\n" + "\n".join(crew) + "\n")
    by_id = sorted(films, key=lambda f: f.imdb_id)
    principals = [row for f in by_id for row in sorted(principals_rows(f), key=lambda r: r.split("\t")[1])]
    _write(imdb / "title.principals.tsv", PRINCIPALS_HEADER + "\n" + "\n".join(principals) + "\n")
    akas = [row for f in by_id for row in akas_rows(f)]
    _write(imdb / "title.akas.tsv", AKAS_HEADER + "\n" + "\n".join(akas) + "\n")
    names = sorted(row for f in films for row in name_rows(f))
    _write(imdb / "name.basics.tsv", NAMES_HEADER + "\n" + "\n".join(names) + "\n")


def _plant_listings(world: _World, films: list[Film]) -> list[dict]:
    """Write the search-only listings of :mod:`cinesub.sample.listings` (after every candidate)."""
    items, rows = [], []
    for f, lang in listing_plan(films, world.seed):
        rng = seeded_rng(world.seed, "listing", f.imdb_id, lang)
        for count in _download_counts(rng, rng.randint(1, 3)):
            fid = world.file_id(rng)
            items.append({"imdb_id": f.imdb_id, "language": lang, "file_id": fid,
                          "attributes": _sidecar(rng, f, lang, fid, count, 1, 1)})
            rows.append({"imdb_id": f.imdb_id, "language": lang, "file_id": str(fid), "download_count": count})
    _write(world.out / LISTINGS_FILE, json.dumps({"items": items}, ensure_ascii=False, indent=1) + "\n")
    return rows


def _manifest(seed: int, n_films: int, films: list[Film], world: _World) -> dict:
    film_rows = []
    for f in films:
        canonical = f.imdb_id if f.expected_drop_gate != "imdb_link" else None
        film_rows.append({
            "kim_id": f.kim_id,
            "kim_url": f.kim_url,
            "csm_id": f.csm_id,
            "imdb_id": canonical,
            "true_imdb_id": f.imdb_id,
            "kim_imdb_link": f.kim_link,
            "csm_imdb_link": f.csm_link,
            "title": f.title,
            "year": f.year,
            "runtime_min": f.runtime_min,
            "expected_drop_gate": f.expected_drop_gate,
            "expected_drop_reason": f.expected_drop_reason,
            "expected_drop_detail": f.expected_drop_detail,
            "genres": f.genres,
            "countries": f.countries,
            "languages": f.languages,
            "age_suitability": f.csm_age if f.csm_id else None,
            "has_plot": bool(f.summaries),
            "has_synopsis": f.synopsis is not None,
            "planted_external": f.planted_external if f.synopsis is not None else None,
            "certificates": f.certificates,
            "ratings": f.ratings,
            "kim_language_rating": f.kim_scores["language"],
            "kim_language_counts": f.kim_counts,
            "planted_language_counts": f.true_counts,
            "n_dialogue_entries": f.n_entries,
        })
    funnel = []
    alive = n_films
    for gate_no, gate in GATES:
        dropped = sum(1 for f in films if f.expected_drop_gate == gate)
        alive -= dropped
        funnel.append({"gate_no": gate_no, "gate": gate, "kept": alive, "dropped": dropped})
    return {
        "seed": seed,
        "n_films": n_films,
        "generator_version": GENERATOR_VERSION,
        "languages": list(LANGS),
        "countries": list(COUNTRIES),
        "films": film_rows,
        "funnel": funnel,
        "candidates": world.candidates,
        "expected_selection": world.selection,
        "boilerplate": world.boilerplate,
        "emails": world.emails,
        "repairs": world.repairs,
        "language_safety": world.language_safety,
        "multi_part": world.multi_parts,
        # search-only OpenSubtitles items of the availability survey (LISTINGS_FILE; never downloaded)
        "survey_listings": getattr(world, "survey_listings", []),
        "survey": {"languages": list(LANGS), **manifest_entry()},
    }
