"""The release consistency gate (validators/release_gate.py) and the film-entity JSON Schema.

A small, consistent release (3 films, six tracks each, ten ratings, four safety categories) is
built in memory from one spec; it must pass. Each defect is then planted — in the spec (both
the tables and the entities carry it, as a real builder bug would) or in one view only — and
exactly the expected reason codes must fire.
"""

from __future__ import annotations

import copy
import gc
import json
import tracemalloc
import weakref
from pathlib import Path

import pyarrow as pa
import pytest
from jsonschema import Draft202012Validator

from validators.release_gate import (
    CODES,
    GateFailure,
    ReleaseGate,
    load_schema,
    timeframe_ms,
    write_gate_report,
)

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


# ---------------------------------------------------------------------------------------------
# defects planted in the spec: both views carry them
# ---------------------------------------------------------------------------------------------
def d_dup_id(s):
    s[2]["id"] = 2


def d_gap(s):
    s[2]["id"] = 4


def d_shared_kim(s):
    s[1]["kim_url"] = s[0]["kim_url"]


def d_missing_track(s):
    s[1]["tracks"] = [t for t in s[1]["tracks"] if t["language"] != "vi"]


def d_dup_track(s):
    s[0]["tracks"].append({**copy.deepcopy(_track(s[0], "ar")), "track_id": "extra-ar", "download_count": 7})


def d_unexpected_track(s):
    s[0]["tracks"].append({"track_id": "extra-fr", "language": "fr", "download_count": 3, "entries": _entries(4)})


def d_empty_entries(s):
    _track(s[2], "ro")["entries"] = []


def d_dup_index(s):
    es = _track(s[0], "ar")["entries"]
    es[2]["index"] = es[1]["index"]


def d_bad_timeframe(s):
    _track(s[1], "fa")["entries"][3]["timeframe"] = "0:01:09.000 --> 0:01:11.000"


def d_inverted(s):
    e = _track(s[1], "id")["entries"][0]
    e["start_ms"], e["end_ms"] = e["end_ms"], e["start_ms"]
    e["timeframe"] = _tf(e["start_ms"], e["end_ms"])


def d_ratings_count(s):
    s[0]["ratings"] = s[0]["ratings"][:-1]


def d_ratings_country(s):
    s[0]["ratings"] = [("Norway", "15", 15, 3) if r[0] == "Sweden" else r for r in s[0]["ratings"]]


def d_rating_label(s):
    s[1]["ratings"] = [("United Kingdom", "12A", 12, 2) if r[0] == "United Kingdom" else r for r in s[1]["ratings"]]


def d_rating_ordinal(s):
    s[1]["ratings"] = [("United States", "R", 17, 1) if r[0] == "United States" else r for r in s[1]["ratings"]]


def d_evidence_unresolved(s):
    s[0]["safety"]["mildObscenity"] = (2, 2, [5, 999])


def d_evidence_count(s):
    s[2]["safety"]["crudeBodilyLanguage"] = (3, 3, [2, 4])


def d_occurrence_below_lines(s):
    s[2]["safety"]["crudeBodilyLanguage"] = (1, 2, [2, 4])


def d_missing_category(s):
    del s[1]["safety"]["strongProfanity"]


SPEC_DEFECTS = [
    ("dup_id", d_dup_id, {}, {"ids_not_unique"}, {"tables"}),
    ("id_gap", d_gap, {}, {"id_not_sequential"}, {"tables"}),
    ("shared_kim_link", d_shared_kim, {}, {"link_mismatch"}, {"tables"}),
    ("missing_track", d_missing_track, {}, {"track_missing"}, {"entity", "tables"}),
    ("duplicate_track", d_dup_track, {}, {"track_duplicate"}, {"entity", "tables"}),
    ("unexpected_language", d_unexpected_track, {}, {"track_unexpected_language"}, {"entity", "tables"}),
    ("empty_entries", d_empty_entries, {}, {"entries_empty"}, {"entity", "tables"}),
    ("duplicate_index", d_dup_index, {}, {"entry_index_duplicate"}, {"entity", "tables"}),
    ("malformed_timeframe", d_bad_timeframe, {}, {"timeframe_malformed"}, {"entity", "tables"}),
    ("inverted_timeframe", d_inverted, {}, {"timeframe_inverted"}, {"entity", "tables"}),
    ("nine_ratings", d_ratings_count, {}, {"ratings_count"}, {"entity", "tables"}),
    ("unknown_country", d_ratings_country, {}, {"ratings_country"}, {"entity", "tables"}),
    ("label_outside_space", d_rating_label, {}, {"rating_label_invalid"}, {"entity", "tables"}),
    ("wrong_ordinal", d_rating_ordinal, {}, {"rating_label_invalid"}, {"entity", "tables"}),
    ("evidence_unresolved", d_evidence_unresolved, {}, {"evidence_unresolved"}, {"entity", "tables"}),
    ("evidence_line_count", d_evidence_count, {}, {"evidence_count_mismatch"}, {"entity", "tables"}),
    ("occurrences_below_lines", d_occurrence_below_lines, {}, {"evidence_count_mismatch"}, {"entity", "tables"}),
    # the entity misses a required category (schema) and the table a category row
    ("missing_category", d_missing_category, {}, {"schema_violation", "safety_category"}, {"entity", "tables"}),
    ("id_changed", lambda s: s[1].update(id=5), {"previous_ids": {"tt1000001": 1, "tt1000002": 2, "tt1000003": 3}},
     {"id_changed"}, {"tables"}),
    ("id_reused", lambda s: None, {"previous_ids": {"tt1000001": 1, "tt1000002": 2, "tt0999999": 3}}, {"id_reused"}, {"tables"}),
    ("new_ids_not_after_previous", lambda s: s[2].update(id=9),
     {"previous_ids": {"tt1000001": 1, "tt1000002": 2}}, {"id_not_sequential"}, {"tables"}),
]


@pytest.mark.parametrize("name,plant,kw,expected,sources", SPEC_DEFECTS, ids=[d[0] for d in SPEC_DEFECTS])
def test_spec_defect_fires_exactly_its_code(name, plant, kw, expected, sources):
    spec = make_spec()
    plant(spec)
    gate = run_gate(spec, **kw)
    assert gate.codes() == expected, gate.summary()
    assert {f.source for f in gate.failures()} == sources  # each view reports what it can see
    assert not gate.passed()
    for f in gate.failures():
        assert f.code in CODES[f.check]


# ---------------------------------------------------------------------------------------------
# defects in one view only
# ---------------------------------------------------------------------------------------------
def e_imdb_link_other_film(ents, tabs):
    ents[1]["sources"]["imdbLink"] = ents[0]["sources"]["imdbLink"]


def e_imdb_link_malformed(ents, tabs):
    ents[0]["sources"]["imdbLink"] = "https://imdb.com/title/tt1000001"


def e_csm_link_differs(ents, tabs):
    ents[2]["sources"]["commonSenseLink"] = "https://www.commonsensemedia.org/movie-reviews/another-film"


def e_ratings_swapped(ents, tabs):
    r = ents[0]["motionPictureRatings"]
    r[0], r[1] = r[1], r[0]


def e_ratings_repeated(ents, tabs):
    r = ents[0]["motionPictureRatings"]
    r[1] = dict(r[0])


def e_plot_blank(ents, tabs):
    ents[1]["plot"] = "  "


def e_genres_empty(ents, tabs):
    ents[1]["genres"] = []


def e_extra_field(ents, tabs):
    ents[0]["tagline"] = "In space no one can hear you scream."


def e_wrong_type(ents, tabs):
    ents[0]["imdbRating"] = "7.5"


def e_extra_entry_key(ents, tabs):
    ents[0]["subtitles"][2]["entries"][1]["speaker"] = "Anna"


def e_bad_language_form(ents, tabs):
    ents[0]["subtitles"][0]["language"] = "Arabic"


def e_title_differs(ents, tabs):
    ents[2]["title"] = "Film Three"


def e_entity_missing(ents, tabs):
    del ents[2]


def e_entry_dropped(ents, tabs):
    del ents[0]["subtitles"][4]["entries"][2]


def e_download_count_differs(ents, tabs):
    ents[0]["subtitles"][0]["downloadCount"] += 1


def t_orphan_rating(ents, tabs):
    tabs["ratings"] = pa.concat_tables([tabs["ratings"], tabs["ratings"].slice(0, 1).set_column(
        0, "imdb_id", pa.array(["tt0000001"]))])


def t_orphan_entry(ents, tabs):
    tabs["entries"] = pa.concat_tables([tabs["entries"], tabs["entries"].slice(0, 1).set_column(
        0, "track_id", pa.array(["no-such-track"]))])


def e_kim_link_differs(ents, tabs):
    ents[0]["sources"]["kidsInMindLink"] = "https://kids-in-mind.com/f/film-9-parents-guide.htm"


def t_entry_names_other_language(ents, tabs):
    e = tabs["entries"]
    col = e.column("language").to_pylist()
    assert col[6] == "ar"  # first entry of film 1's Arabic track
    col[6] = "fa"
    tabs["entries"] = e.set_column(e.schema.get_field_index("language"), "language", pa.array(col))


def t_timeframe_disagrees_with_ms(ents, tabs):
    e = tabs["entries"]
    col = e.column("start_ms").to_pylist()
    col[0] += 1
    tabs["entries"] = e.set_column(e.schema.get_field_index("start_ms"), "start_ms", pa.array(col, pa.int64()))


def t_bad_evidence_json(ents, tabs):
    s = tabs["language_safety"]
    col = s.column("evidence_indices").to_pylist()
    col[1] = "[2, 'four']"
    tabs["language_safety"] = s.set_column(s.schema.get_field_index("evidence_indices"), "evidence_indices", pa.array(col))


VIEW_DEFECTS = [
    ("imdb_link_of_other_film", e_imdb_link_other_film, {"link_mismatch"}),
    ("imdb_link_malformed", e_imdb_link_malformed, {"link_mismatch"}),
    ("csm_link_differs_from_table", e_csm_link_differs, {"link_mismatch"}),
    ("kim_link_differs_from_table", e_kim_link_differs, {"link_mismatch"}),
    ("ratings_swapped", e_ratings_swapped, {"ratings_order"}),
    ("ratings_country_repeated", e_ratings_repeated, {"ratings_country", "entity_table_mismatch"}),
    # the entity alone loses the value: it also no longer agrees with its task_references row
    ("plot_blank", e_plot_blank, {"task_field_missing", "task_reference_mismatch"}),
    ("genres_empty", e_genres_empty, {"task_field_missing", "task_reference_mismatch"}),
    ("extra_field", e_extra_field, {"schema_violation"}),
    ("wrong_type", e_wrong_type, {"schema_violation"}),
    ("extra_entry_key", e_extra_entry_key, {"schema_violation"}),
    ("language_not_in_name_code_form", e_bad_language_form, {"schema_violation"}),
    ("title_differs", e_title_differs, {"entity_table_mismatch"}),
    ("entity_missing", e_entity_missing, {"entity_table_mismatch"}),
    ("entry_dropped_from_entity", e_entry_dropped, {"entity_table_mismatch"}),
    ("download_count_differs", e_download_count_differs, {"entity_table_mismatch"}),
    ("orphan_rating_row", t_orphan_rating, {"orphan_row"}),
    ("orphan_entry_row", t_orphan_entry, {"orphan_row"}),
    ("entry_row_names_other_language", t_entry_names_other_language, {"orphan_row"}),
    ("timeframe_disagrees_with_start_ms", t_timeframe_disagrees_with_ms, {"timeframe_malformed"}),
    ("evidence_json_not_ints", t_bad_evidence_json, {"evidence_unresolved", "entity_table_mismatch"}),
]


@pytest.mark.parametrize("name,plant,expected", VIEW_DEFECTS, ids=[d[0] for d in VIEW_DEFECTS])
def test_view_defect_fires_exactly_its_code(name, plant, expected):
    spec = make_spec()
    ents = [render_entity(f) for f in spec]
    tabs = render_tables(spec)
    plant(ents, tabs)
    gate = run_gate(spec, entities=ents, tables=tabs)
    assert gate.codes() == expected, gate.summary()
    assert not gate.passed()


def test_valid_release_passes():
    spec = make_spec()
    gate = run_gate(spec)
    assert gate.passed(), gate.summary()
    s = gate.summary()
    assert s["passed"] and s["n_entities"] == 3 and s["n_failures"] == 0
    assert s["tables"]["entries"] == 3 * 6 * 6


def test_later_release_with_withdrawn_film_and_new_film_passes():
    # tt0999999 (id 3) was withdrawn; new film tt1000003 takes the next id 4, id 3 stays taken
    spec = make_spec()
    spec[2]["id"] = 4
    gate = run_gate(spec, previous_ids={"tt1000001": 1, "tt1000002": 2, "tt0999999": 3})
    assert gate.passed(), gate.summary()


def test_dropped_task_field_may_be_null():
    spec = make_spec()
    for f in spec:
        f["keyMessage"] = None
    gate = run_gate(spec, kept_task_fields=TASK_FIELDS - {"keyMessage"})
    assert gate.passed(), gate.summary()
    assert run_gate(spec).codes() == {"task_field_missing"}


def test_gate_without_tables_does_not_pass():
    gate = make_gate()
    for f in make_spec():
        gate.check_entity(render_entity(f))
    assert gate.codes() == set()
    assert not gate.passed() and not gate.summary()["passed"]


def test_entities_may_come_after_or_before_tables():
    spec = make_spec()
    spec[0]["ratings"] = spec[0]["ratings"][:-1]
    gate = make_gate()
    gate.check_tables(render_tables(spec))
    for f in spec:
        gate.check_entity(render_entity(f))
    assert gate.codes() == {"ratings_count"}
    sources = {f.source for f in gate.failures()}
    assert sources == {"entity", "tables"}


def test_examples_capped_but_counts_complete():
    spec = make_spec(n_films=3)
    for f in spec:
        f["plot"] = ""
        f["synopsis"] = None
    gate = run_gate(spec, max_examples_per_code=2)
    assert len([f for f in gate.failures() if f.code == "task_field_missing"]) == 2
    # 3 films x 2 fields, reported by the entities and by the task_references table alike
    assert gate.summary()["counts"]["task_fields"]["task_field_missing"] == 12


def test_many_bad_entries_are_summarised_per_track():
    spec = make_spec(n_entries=40)
    for e in _track(spec[0], "en")["entries"]:
        e["timeframe"] = e["timeframe"].replace(",", ".")
    gate = run_gate(spec)
    assert gate.codes() == {"timeframe_malformed"}
    fails = gate.failures()
    assert len(fails) == 2 and {f.source for f in fails} == {"entity", "tables"}
    assert all("40 entr" in f.detail for f in fails)


def test_timeframe_ms():
    assert timeframe_ms("01:02:03,004 --> 01:02:05,000") == (3_723_004, 3_725_000)
    assert timeframe_ms("1:02:03,004 --> 01:02:05,000") is None
    assert timeframe_ms("01:02:03,004 --> 01:02:05,000\n") is None
    assert timeframe_ms("01:62:03,004 --> 01:02:05,000") is None


# ---------------------------------------------------------------------------------------------
# the schema
# ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def validator() -> Draft202012Validator:
    schema = load_schema()
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def test_schema_identity():
    schema = load_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] and schema["title"] and schema["description"]
    spec_fields = ["id", "title", "releaseYear", "duration", "imdbRating", "countriesOfOrigin", "originalLanguages",
                   "directors", "writers", "topCast", "fullCast", "plot", "synopsis", "storyline", "keyMessage",
                   "genres", "topics", "ageSuitabilityRating", "motionPictureRatings", "languageContentReference",
                   "languageContentAssessment", "sources", "subtitles"]
    assert list(schema["properties"]) == spec_fields
    assert set(schema["required"]) == set(spec_fields)

    def walk(node):  # every object level closes its properties
        if isinstance(node, dict):
            if node.get("type") == "object" or "properties" in node:
                assert node.get("additionalProperties") is False, node
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)
    walk(schema)


def test_schema_accepts_valid_and_nullable(validator):
    e = render_entity(make_spec(1)[0])
    assert list(validator.iter_errors(e)) == []
    for field in ("imdbRating", "plot", "synopsis", "storyline", "keyMessage", "genres", "ageSuitabilityRating"):
        assert validator.is_valid({**e, field: None}), field
    e2 = copy.deepcopy(e)
    e2["sources"]["commonSenseLink"] = None
    e2["sources"]["kidsInMindLink"] = None
    e2["languageContentReference"] = {"rating": None, "summary": None, "source": None}
    assert validator.is_valid(e2)


def _mutated(path, value=None, delete=False):
    e = render_entity(make_spec(1)[0])
    node = e
    for p in path[:-1]:
        node = node[p]
    if delete:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return e


SCHEMA_REJECTS = [
    ("missing_title", ("title",), None, True),
    ("missing_subtitles", ("subtitles",), None, True),
    ("missing_category", ("languageContentAssessment", "categories", "mildObscenity"), None, True),
    ("missing_entry_content", ("subtitles", 0, "entries", 0, "content"), None, True),
    ("extra_top_field", ("tagline",), "x", False),
    ("extra_rating_field", ("motionPictureRatings", 0, "raw"), "UK:12", False),
    ("extra_source", ("sources", "letterboxdLink"), "https://letterboxd.com/x", False),
    ("id_as_string", ("id",), "1", False),
    ("id_zero", ("id",), 0, False),
    ("year_as_string", ("releaseYear",), "1971", False),
    ("rating_out_of_scale", ("imdbRating",), 75, False),
    ("genres_as_string", ("genres",), "Drama", False),
    ("minimum_age_as_string", ("motionPictureRatings", 0, "minimumAge"), "12", False),
    ("negative_occurrences", ("languageContentAssessment", "categories", "mildObscenity", "occurrenceCount"), -1, False),
    ("evidence_index_as_string", ("languageContentAssessment", "categories", "mildObscenity", "evidenceSubtitleIndices"),
     ["5"], False),
    ("input_language_other", ("languageContentAssessment", "inputLanguage"), "Arabic (ar)", False),
    ("entry_index_zero", ("subtitles", 0, "entries", 0, "index"), 0, False),
    ("entry_index_float", ("subtitles", 0, "entries", 0, "index"), 1.5, False),
    ("timeframe_dot_millis", ("subtitles", 0, "entries", 0, "timeframe"), "00:01:00.000 --> 00:01:02,000", False),
    ("timeframe_one_digit_hour", ("subtitles", 0, "entries", 0, "timeframe"), "0:01:00,000 --> 00:01:02,000", False),
    ("timeframe_arrow", ("subtitles", 0, "entries", 0, "timeframe"), "00:01:00,000 -> 00:01:02,000", False),
    ("language_code_only", ("subtitles", 0, "language"), "ar", False),
    ("language_upper_code", ("subtitles", 0, "language"), "Arabic (AR)", False),
    ("language_no_code", ("subtitles", 0, "language"), "Arabic", False),
    ("download_count_null", ("subtitles", 0, "downloadCount"), None, False),
    ("imdb_link_http", ("sources", "imdbLink"), "http://www.imdb.com/title/tt1000001/", False),
    ("age_suitability_word", ("ageSuitabilityRating",), "teen", False),
]


@pytest.mark.parametrize("name,path,value,delete", SCHEMA_REJECTS, ids=[s[0] for s in SCHEMA_REJECTS])
def test_schema_rejects_realistic_mistakes(validator, name, path, value, delete):
    assert not validator.is_valid(_mutated(path, value, delete))


def test_gate_schema_check_equals_full_validation(validator):
    """The entry fast path must not change the verdict: same error paths as full jsonschema
    validation (less the errors a dedicated check reports)."""
    e = render_entity(make_spec(1, n_entries=5)[0])
    es = e["subtitles"][1]["entries"]
    es[0]["index"] = 0
    es[1]["content"] = None
    es[2]["extra"] = True
    es[3] = ["not", "an", "object"]
    es[4]["index"] = True
    full = sorted(err.json_path for err in validator.iter_errors(e))
    gate = make_gate()
    gate.check_entity(e)
    got = sorted(f.detail.split(":")[0] for f in gate.failures() if f.code == "schema_violation")
    assert got == full and len(full) == 5


def test_gate_without_entry_fast_path_validates_entries_fully():
    schema = load_schema()
    schema["$defs"]["entry"]["properties"]["content"]["maxLength"] = 10_000  # shape the fast path does not know
    e = render_entity(make_spec(1)[0])
    e["subtitles"][3]["entries"][2]["index"] = "3"
    gate = make_gate(schema=schema)
    assert not gate._entry.fast
    gate.check_entity(e)
    details = [f.detail for f in gate.failures() if f.code == "schema_violation"]
    assert details == ["$.subtitles[3].entries[2].index: '3' is not of type 'integer'"]


def test_gate_takes_the_entry_fast_path_for_the_published_schema():
    # the fast path's speed against full validation is measured in benchmarks/bench_targets.py
    assert make_gate()._entry.fast


# ---------------------------------------------------------------------------------------------
# streaming
# ---------------------------------------------------------------------------------------------
class _Entity(dict):
    """A dict that can be weakly referenced."""


def test_check_entity_keeps_no_entity():
    gate = make_gate()
    refs = []
    for f in make_spec(3):
        ent = _Entity(render_entity(f))
        refs.append(weakref.ref(ent))
        gate.check_entity(ent)
        del ent
    gc.collect()
    assert all(r() is None for r in refs)


def test_memory_is_small_per_film():
    gate = make_gate()
    spec = make_spec(1, n_entries=400)[0]
    gate.check_entity(render_entity(spec))  # warm caches (regex, schema references) first
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        for k in range(2, 42):
            ent = render_entity({**spec, "id": k, "imdb_id": f"tt{2000000 + k}"})
            size_before = tracemalloc.get_traced_memory()[0]
            gate.check_entity(ent)
            del ent
        retained = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    assert size_before - base > 400_000  # one entity (2,400 entries) is hundreds of kB
    assert retained < 40 * 3_000, retained  # 40 entities kept as a few hundred bytes each


# ---------------------------------------------------------------------------------------------
# report
# ---------------------------------------------------------------------------------------------
def test_report_written_deterministic_and_escaped(tmp_path: Path):
    spec = make_spec()
    d_ratings_count(spec)
    spec[1]["title"] = "<script>alert(1)</script>"
    ents = [render_entity(f) for f in spec]
    ents[1]["title"] = "<b>Film</b>"
    gate = run_gate(spec, entities=ents)
    out = write_gate_report(gate.summary(), gate.failures(), tmp_path / "a")
    assert out == tmp_path / "a" / "gate_report.json"
    data = json.loads(out.read_text())
    codes = {f["code"] for f in data["failures"]}
    assert codes == {"ratings_count", "entity_table_mismatch"}
    assert data["summary"]["counts"]["ratings"]["ratings_count"] == 2
    assert data["summary"]["passed"] is False
    page = (tmp_path / "a" / "gate_report.html").read_text()
    assert "ratings_count" in page and "entity_table_mismatch" in page and "FAILED" in page
    # a second gate over the same data writes identical bytes
    gate2 = run_gate(spec, entities=[render_entity(f) for f in spec][:1] + ents[1:])
    out2 = write_gate_report(gate2.summary(), list(reversed(gate2.failures())), tmp_path / "b")
    assert out2.read_bytes() == out.read_bytes()
    assert (tmp_path / "b" / "gate_report.html").read_bytes() == page.encode()


def test_report_escapes_details(tmp_path: Path):
    fail = GateFailure("links", "link_mismatch", "tt1", "<script>alert('x')</script> & more", "entity")
    write_gate_report({"passed": False, "n_failures": 1, "n_entities": 1, "counts": {"links": {"link_mismatch": 1}}},
                      [fail], tmp_path)
    page = (tmp_path / "gate_report.html").read_text()
    assert "<script>" not in page and "&lt;script&gt;" in page and "&amp; more" in page


# ---------------------------------------------------------------------------------------------
# task references (issue 14 point 9): the task_references table agrees with the entities
# ---------------------------------------------------------------------------------------------
def _set(tabs: dict, column: str, row: int, value, type_=None) -> None:
    t = tabs["task_references"]
    col = t.column(column).to_pylist()
    col[row] = value
    tabs["task_references"] = t.set_column(t.schema.get_field_index(column), column,
                                           pa.array(col, type_ or t.schema.field(column).type))


def t_ref_row_missing(ents, tabs):
    tabs["task_references"] = tabs["task_references"].slice(0, 2)


def t_ref_row_duplicate(ents, tabs):
    t = tabs["task_references"]
    tabs["task_references"] = pa.concat_tables([t, t.slice(1, 1)])


def t_ref_row_of_no_film(ents, tabs):
    t = tabs["task_references"]
    extra = t.slice(0, 1).set_column(1, "imdb_id", pa.array(["tt0000001"]))
    tabs["task_references"] = pa.concat_tables([t, extra])


def t_ref_id_differs(ents, tabs):
    _set(tabs, "id", 2, 9)


def t_ref_plot_differs(ents, tabs):
    _set(tabs, "plot", 0, "Plot 1, raw: a remake of a 1950s film.")


def t_ref_character_differs(ents, tabs):
    _set(tabs, "full_cast", 1, [{"actor": "An Actor", "characters": ["Villain"], "additional_texts": ["(as A. A.)"]},
                                {"actor": "Extra", "characters": [], "additional_texts": []}])


def t_ref_genres_as_json_text(ents, tabs):
    t = tabs["task_references"]
    col = [json.dumps(g) for g in t.column("genres").to_pylist()]
    tabs["task_references"] = t.set_column(t.schema.get_field_index("genres"), "genres", pa.array(col))


def t_ref_column_absent(ents, tabs):
    tabs["task_references"] = tabs["task_references"].drop_columns(["original_languages"])


def e_topics_differ(ents, tabs):
    ents[2]["topics"] = ["storm", "sea"]


TASK_REFERENCE_DEFECTS = [
    ("row_missing", t_ref_row_missing, {"task_reference_missing"}),
    ("row_duplicate", t_ref_row_duplicate, {"task_reference_duplicate"}),
    ("row_of_no_film", t_ref_row_of_no_film, {"orphan_row"}),
    ("id_differs_from_films", t_ref_id_differs, {"task_reference_mismatch"}),
    ("plot_differs_from_entity", t_ref_plot_differs, {"task_reference_mismatch"}),
    ("cast_character_differs", t_ref_character_differs, {"task_reference_mismatch"}),
    ("genres_as_json_text", t_ref_genres_as_json_text, {"task_reference_mismatch"}),
    ("column_absent", t_ref_column_absent, {"task_reference_mismatch"}),
    ("entity_topics_differ", e_topics_differ, {"task_reference_mismatch"}),
]


@pytest.mark.parametrize("name,plant,expected", TASK_REFERENCE_DEFECTS, ids=[d[0] for d in TASK_REFERENCE_DEFECTS])
def test_task_reference_defect_fires_exactly_its_code(name, plant, expected):
    spec = make_spec()
    ents = [render_entity(f) for f in spec]
    tabs = render_tables(spec)
    plant(ents, tabs)
    gate = run_gate(spec, entities=ents, tables=tabs)
    assert gate.codes() == expected, gate.summary()
    assert not gate.passed()
    for f in gate.failures():
        assert f.code in CODES[f.check]


def test_task_reference_mismatch_names_the_field():
    spec = make_spec()
    ents = [render_entity(f) for f in spec]
    tabs = render_tables(spec)
    t_ref_character_differs(ents, tabs)
    e_topics_differ(ents, tabs)
    gate = run_gate(spec, entities=ents, tables=tabs)
    details = {f.imdb_id: f.detail for f in gate.failures() if f.code == "task_reference_mismatch"}
    assert set(details) == {"tt1000002", "tt1000003"}
    assert "fullCast (task_references.full_cast)" in details["tt1000002"] and "topics" not in details["tt1000002"]
    assert "topics (task_references.topics)" in details["tt1000003"] and "fullCast" not in details["tt1000003"]


def test_task_reference_table_is_required():
    spec = make_spec()
    tabs = render_tables(spec)
    del tabs["task_references"]
    with pytest.raises(ValueError, match="task_references"):
        run_gate(spec, tables=tabs)


def test_withheld_task_field_is_null_in_both_views():
    spec = make_spec()
    kept = TASK_FIELDS - {"keyMessage"}
    # the completeness rule withheld keyMessage, yet both views carry it
    gate = run_gate(spec, kept_task_fields=kept, withheld_task_fields={"keyMessage"})
    assert gate.codes() == {"task_field_not_withheld"}, gate.summary()
    assert {f.source for f in gate.failures()} == {"entity", "tables"}
    for f in spec:
        f["keyMessage"] = None
    assert run_gate(spec, kept_task_fields=kept, withheld_task_fields={"keyMessage"}).passed()
