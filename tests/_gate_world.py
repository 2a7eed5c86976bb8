"""A small, consistent release in memory (3 films, six tracks each, ten ratings, four safety
categories) built from one spec, for the consistency-gate tests (tests/test_release_gate.py,
tests/test_release_gate_views.py) and benchmarks/bench_targets.py."""

from __future__ import annotations

import json

import pyarrow as pa

from validators.release_gate import ReleaseGate

LANGS = ("en", "ar", "id", "fa", "ro", "vi")
NAMES = {"en": "English", "ar": "Arabic", "id": "Indonesian", "fa": "Persian", "ro": "Romanian",
         "vi": "Vietnamese", "fr": "French"}
COUNTRIES = ("Australia", "Brazil", "France", "Germany", "Netherlands", "Singapore", "South Korea",
             "Sweden", "United Kingdom", "United States")
RATINGS = {  # country -> (label, minimumAge, ordinal), all valid SPEC A8 labels
    "Australia": ("PG", 0, 1), "Brazil": ("12", 12, 2), "France": ("Tous publics", 0, 0),
    "Germany": ("12", 12, 2), "Netherlands": ("12", 12, 3), "Singapore": ("PG13", 13, 2),
    "South Korea": ("15", 15, 2), "Sweden": ("11", 11, 2), "United Kingdom": ("12", 12, 2),
    "United States": ("PG-13", 13, 2),
}
TASK_FIELDS = {"plot", "synopsis", "storyline", "keyMessage", "genres", "ageSuitabilityRating"}
CATS = ("strongProfanity", "crudeBodilyLanguage", "mildObscenity", "religiousProfanityAndExclamation")


def _tf(start: int, end: int) -> str:
    def one(ms: int) -> str:
        return f"{ms // 3_600_000:02d}:{ms // 60_000 % 60:02d}:{ms // 1000 % 60:02d},{ms % 1000:03d}"
    return f"{one(start)} --> {one(end)}"


def _entries(n: int, first_index: int = 1, offset: int = 60_000) -> list[dict]:
    out = []
    for k in range(n):
        start = offset + k * 3000
        out.append({"index": first_index + k, "start_ms": start, "end_ms": start + 2000,
                    "timeframe": _tf(start, start + 2000), "content": f"line {k} <i>x</i>"})
    return out


def make_spec(n_films: int = 3, n_entries: int = 6) -> list[dict]:
    """A valid release as one list of film specs (the single source of both views)."""
    films = []
    for k in range(1, n_films + 1):
        imdb = f"tt{1000000 + k:07d}"
        tracks = [{"track_id": f"{imdb}-{lang}", "language": lang, "download_count": 100 * k + j,
                   "entries": _entries(n_entries, first_index=2 if lang == "vi" else 1)}
                  for j, lang in enumerate(LANGS)]
        films.append({
            "id": k, "imdb_id": imdb, "title": f"Film {k}", "year": 1970 + k, "runtime": 90 + k,
            "rating": 7.5, "age": "13+",
            "kim_url": f"https://kids-in-mind.com/f/film-{k}-parents-guide.htm",
            "csm_url": f"https://www.commonsensemedia.org/movie-reviews/film-{k}",
            "plot": f"Plot {k}.", "synopsis": f"Synopsis {k}.", "storyline": f"Storyline {k}.",
            "keyMessage": f"Message {k}.", "genres": ["Drama"], "topics": ["storm"],
            "cast": [("An Actor", ["Hero"], ["(as A. A.)"]), ("Extra", [], [])],
            "countries": ["United States"], "languages": ["English"],
            "tracks": tracks,
            "ratings": [(c, *RATINGS[c]) for c in COUNTRIES],
            "safety": {"strongProfanity": (0, 0, []), "crudeBodilyLanguage": (3, 2, [2, 4]),
                       "mildObscenity": (1, 1, [5]), "religiousProfanityAndExclamation": (0, 0, [])},
        })
    return films


def render_tables(spec: list[dict]) -> dict[str, pa.Table]:
    films = pa.table({
        "id": pa.array([f["id"] for f in spec], pa.int64()),
        "imdb_id": [f["imdb_id"] for f in spec],
        "title": [f["title"] for f in spec],
        "year": pa.array([f["year"] for f in spec], pa.int32()),
        "runtime_min": pa.array([f["runtime"] for f in spec], pa.int32()),
        "imdb_rating": pa.array([f["rating"] for f in spec], pa.float64()),
        "age_suitability": [f["age"] for f in spec],
        "kim_url": [f["kim_url"] for f in spec],
        "csm_url": [f["csm_url"] for f in spec],
    })
    tr = {k: [] for k in ("track_id", "imdb_id", "language", "download_count")}
    en = {k: [] for k in ("track_id", "imdb_id", "language", "index", "timeframe", "start_ms", "end_ms", "content")}
    ra = {k: [] for k in ("imdb_id", "country", "label", "minimum_age", "ordinal")}
    sa = {k: [] for k in ("imdb_id", "category", "occurrence_count", "evidence_line_count", "evidence_indices")}
    for f in spec:
        for t in f["tracks"]:
            for k, v in (("track_id", t["track_id"]), ("imdb_id", f["imdb_id"]), ("language", t["language"]),
                         ("download_count", t["download_count"])):
                tr[k].append(v)
            for e in t["entries"]:
                for k, v in (("track_id", t["track_id"]), ("imdb_id", f["imdb_id"]), ("language", t["language"])):
                    en[k].append(v)
                for k in ("index", "timeframe", "start_ms", "end_ms", "content"):
                    en[k].append(e[k])
        for c, label, age, ordinal in f["ratings"]:
            for k, v in zip(ra, (f["imdb_id"], c, label, age, ordinal)):
                ra[k].append(v)
        for cat, (occ, lines, idx) in f["safety"].items():
            for k, v in zip(sa, (f["imdb_id"], cat, occ, lines, json.dumps(idx))):
                sa[k].append(v)
    return {
        "films": films,
        "tracks": pa.table({**tr, "download_count": pa.array(tr["download_count"], pa.int64())}),
        "entries": pa.table({**en, "index": pa.array(en["index"], pa.int64()),
                             "start_ms": pa.array(en["start_ms"], pa.int64()),
                             "end_ms": pa.array(en["end_ms"], pa.int64())}),
        "ratings": pa.table({**ra, "minimum_age": pa.array(ra["minimum_age"], pa.int32()),
                             "ordinal": pa.array(ra["ordinal"], pa.int32())}),
        "language_safety": pa.table({**sa, "occurrence_count": pa.array(sa["occurrence_count"], pa.int32()),
                                     "evidence_line_count": pa.array(sa["evidence_line_count"], pa.int32())}),
        "task_references": render_task_references(spec),
    }


CAST_TYPE = pa.list_(pa.struct([("actor", pa.string()), ("characters", pa.list_(pa.string())),
                                ("additional_texts", pa.list_(pa.string()))]))


def render_task_references(spec: list[dict]) -> pa.Table:
    """The task_references table as sql/release_tables.sql shapes it (typed lists)."""
    strings = pa.list_(pa.string())
    return pa.table({
        "id": pa.array([f["id"] for f in spec], pa.int64()),
        "imdb_id": [f["imdb_id"] for f in spec],
        "plot": [f["plot"] for f in spec], "synopsis": [f["synopsis"] for f in spec],
        "storyline": [f["storyline"] for f in spec], "key_message": [f["keyMessage"] for f in spec],
        "genres": pa.array([f["genres"] for f in spec], strings),
        "topics": pa.array([f["topics"] for f in spec], strings),
        "age_suitability": [f["age"] for f in spec],
        "full_cast": pa.array([[{"actor": a, "characters": c, "additional_texts": x} for a, c, x in f["cast"]]
                               for f in spec], CAST_TYPE),
        "countries_of_origin": pa.array([f["countries"] for f in spec], strings),
        "original_languages": pa.array([f["languages"] for f in spec], strings),
    })


def render_entity(f: dict) -> dict:
    return {
        "id": f["id"], "title": f["title"], "releaseYear": f["year"], "duration": f["runtime"],
        "imdbRating": f["rating"], "countriesOfOrigin": f["countries"], "originalLanguages": f["languages"],
        "directors": ["A. Director"], "writers": ["A. Writer"],
        "topCast": [{"actor": a, "character": (c or [None])[0]} for a, c, _x in f["cast"][:10]],
        "fullCast": [{"actor": a, "characters": c, "additionalTexts": x} for a, c, x in f["cast"]],
        "plot": f["plot"], "synopsis": f["synopsis"], "storyline": f["storyline"], "keyMessage": f["keyMessage"],
        "genres": f["genres"], "topics": f["topics"], "ageSuitabilityRating": f["age"],
        "motionPictureRatings": [{"country": c, "label": lab, "minimumAge": age, "ordinal": o}
                                 for c, lab, age, o in f["ratings"]],
        "languageContentReference": {"rating": 3, "summary": "2 scatological terms", "source": f["kim_url"]},
        "languageContentAssessment": {"inputLanguage": "English (en)", "categories": {
            cat: {"occurrenceCount": occ, "evidenceLineCount": lines, "evidenceSubtitleIndices": list(idx)}
            for cat, (occ, lines, idx) in f["safety"].items()}},
        "sources": {"imdbLink": f"https://www.imdb.com/title/{f['imdb_id']}/",
                    "commonSenseLink": f["csm_url"], "kidsInMindLink": f["kim_url"]},
        "subtitles": [{"language": f"{NAMES[t['language']]} ({t['language']})", "downloadCount": t["download_count"],
                       "entries": [{"index": e["index"], "timeframe": e["timeframe"], "content": e["content"]}
                                   for e in t["entries"]]}
                      for t in sorted(f["tracks"], key=lambda t: t["language"])],
    }


def make_gate(**kw) -> ReleaseGate:
    args = {"languages": LANGS, "countries": COUNTRIES, "kept_task_fields": set(TASK_FIELDS), "previous_ids": None}
    args.update(kw)
    return ReleaseGate(**args)


def run_gate(spec, *, entities=None, tables=None, **kw) -> ReleaseGate:
    gate = make_gate(**kw)
    for e in entities if entities is not None else (render_entity(f) for f in spec):
        gate.check_entity(e)
    gate.check_tables(tables if tables is not None else render_tables(spec))
    return gate


def _track(f: dict, lang: str) -> dict:
    return next(t for t in f["tracks"] if t["language"] == lang)


def run_view_defect(plant) -> ReleaseGate:
    """The gate over the consistent release after ``plant(entities, tables)`` changed one view."""
    spec = make_spec()
    ents = [render_entity(f) for f in spec]
    tabs = render_tables(spec)
    plant(ents, tabs)
    return run_gate(spec, entities=ents, tables=tabs)
