"""The release consistency gate (validators/release_gate.py): planted defects.

A small, consistent release (3 films, six tracks each, ten ratings, four safety categories) is
built in memory from one spec (tests/_gate_world.py); it must pass. Each defect is then planted —
in the spec (both the tables and the entities carry it, as a real builder bug would) or in one
view only — and exactly the expected reason codes must fire. The schema, streaming, report and
task-reference checks are tests/test_release_gate_views.py.
"""

from __future__ import annotations

import copy

import pyarrow as pa
import pytest
from _gate_world import (  # noqa: F401  (make_spec, render_entity, make_gate: used by benchmarks/bench_targets.py)
    TASK_FIELDS,
    _entries,
    _tf,
    _track,
    make_gate,
    make_spec,
    render_entity,
    render_tables,
    run_gate,
    run_view_defect,
)
from jsonschema import Draft202012Validator  # noqa: F401  (benchmarks/bench_targets.py)

from validators.release_gate import CODES, load_schema, timeframe_ms  # noqa: F401  (load_schema: the benchmark)


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
    gate = run_view_defect(plant)
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




def _beside(spec, **kw):
    """The gate as the release runs it: table checks in a thread beside the entities' checks."""
    gate = make_gate(max_examples_per_code=2, **kw)
    gate.begin_tables(render_tables(spec))
    for f in spec:
        gate.check_entity(render_entity(f))
    gate.end_tables()
    return gate


@pytest.mark.parametrize("name,plant,kw,expected,sources", SPEC_DEFECTS[:10], ids=[d[0] for d in SPEC_DEFECTS[:10]])
def test_table_checks_beside_the_entities_give_the_same_verdict(name, plant, kw, expected, sources):
    """Counts, kept examples and their order equal those of the entities first, then the tables."""
    spec = make_spec()
    plant(spec)
    one_after = make_gate(max_examples_per_code=2, **kw)
    for f in spec:
        one_after.check_entity(render_entity(f))
    one_after.check_tables(render_tables(spec))
    beside = _beside(spec, **kw)
    assert beside.summary() == one_after.summary()
    assert beside.failures() == one_after.failures()
    assert beside.passed() is one_after.passed() is False


def test_an_error_in_the_table_checks_is_raised_when_they_are_joined():
    gate = make_gate()
    gate.begin_tables({"films": render_tables(make_spec())["films"]})  # the other tables missing
    with pytest.raises(ValueError, match="check_tables needs tables"):
        gate.end_tables()
