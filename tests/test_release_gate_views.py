"""The release consistency gate (validators/release_gate.py): the film-entity JSON Schema, the
streaming of entities, the gate report (warehouse/gate_report.py) and the task_references table against the entities.
The in-memory release is tests/_gate_world.py; planted defects are tests/test_release_gate.py.
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
from _gate_world import TASK_FIELDS, make_gate, make_spec, render_entity, render_tables, run_gate, run_view_defect
from jsonschema import Draft202012Validator

from validators.release_gate import CODES, GateFailure, load_schema
from warehouse.gate_report import write_gate_report


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
    spec[0]["ratings"] = spec[0]["ratings"][:-1]  # one rating short: ratings_count
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
    gate = run_view_defect(plant)
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
