"""The task_references release table (issue 14 point 9): the benchmark targets as a typed Parquet
table, equal field for field to films.jsonl, the completeness rule applied as in the entity; and
the change kind it implies between releases."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from cinesub.state import sql_text
from validators.release_gate import TASK_REFERENCE_COLUMNS, ReleaseGate
from warehouse.diff import change_kind_from_tables, diff_releases, render_diff_text
from warehouse.entities import film_entities
from warehouse.release import build_tables

COUNTRIES = ("Australia", "Brazil")

# kim_id -> (imdb_id, gate dropped_at, imdb record, kim record, csm record or None)
FILMS = {
    "k1": ("tt0000001", None,
           {"plot": "A storm. Remade in 2004.", "synopsis": "Raw synopsis „A”.", "genres": ["Drama", "Thriller"],
            "topics": ["storm", "sea"], "countries": ["Romania", "France"], "languages": ["Romanian"],
            "cast": [{"actor": "Ann Lee", "characters": ["Mara", "Young Mara"], "additional_texts": ["(voice)"]},
                     {"actor": "Bo Ray", "characters": None}],
            "runtime_min": 101, "rating": 7.1},
           {"key_message": "Be kind."}, {"storyline": "A sea story.", "age_suitability": "13+"}),
    "k2": ("tt0000002", None,  # no curation rows: the source text stands; no CSM page; JSON nulls
           {"plot": "A debt.", "synopsis": "Long synopsis.", "genres": ["Crime"], "topics": None,
            "countries": None, "runtime_min": 95, "rating": 6.4},
           {"key_message": None}, None),
    "k3": ("tt0000003", None,
           {"plot": "Friends.", "synopsis": "More friends.", "genres": ["Comedy"], "topics": [], "countries": ["Iran"],
            "languages": ["Persian", "English"], "cast": [], "runtime_min": 88},
           {"key_message": "Trust."}, {"storyline": "Produced by X. Friends.", "age_suitability": "10+"}),
    "k4": ("tt0000004", 5, {"plot": "Dropped at gate 5.", "genres": ["Horror"]}, {}, None),
    "k5": ("tt0000005", None, {"plot": "Withdrawn on request.", "genres": ["War"]}, {}, None),
}
# (imdb_id, field) -> clean text (None = emptied by the rules)
CURATION = {
    ("tt0000001", "plot"): "A storm.", ("tt0000001", "synopsis"): "Raw synopsis „A”.",
    ("tt0000001", "storyline"): "A sea story.",
    ("tt0000003", "plot"): "Friends.", ("tt0000003", "synopsis"): "More friends.",
    ("tt0000003", "storyline"): None,
}
KEPT = {"plot": True, "synopsis": True, "genres": True,
        "storyline": False, "keyMessage": False, "ageSuitabilityRating": False}


@pytest.fixture
def state() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute(sql_text("state_schema.sql"))
    for n, (kim_id, (imdb_id, dropped, imdb, kim, csm)) in enumerate(FILMS.items(), start=1):
        con.execute("INSERT INTO films (kim_id, title, year, kim_url, imdb_id, imdb_id_status, csm_url, link_status, "
                    "kim, csm, imdb) VALUES (?, ?, ?, ?, ?, 'ok', ?, 'agree', ?, ?, ?)",
                    [kim_id, f"Film {n}", 1990 + n, f"https://kids-in-mind.com/{kim_id}.htm", imdb_id,
                     f"https://www.commonsensemedia.org/movie-reviews/{kim_id}" if csm else None,
                     json.dumps(kim), json.dumps(csm) if csm is not None else None, json.dumps(imdb)])
        con.execute("INSERT INTO film_gates VALUES (?, ?, ?, ?, NULL)",
                    [kim_id, imdb_id, dropped, "language_missing" if dropped else None])
        con.execute("INSERT INTO film_ids VALUES (?, ?, '1.0.0')", [imdb_id, n])
    con.execute("INSERT INTO withdrawals VALUES ('tt0000005', 'rights holder', 'test', TIMESTAMP '2026-01-01', '1.1.0')")
    for (imdb_id, field), clean in CURATION.items():
        con.execute("INSERT INTO curation VALUES (?, ?, 'raw', 'sha', ?, 'cleaned', '[]', 'rules', '1', NULL)",
                    [imdb_id, field, clean])
    for field, kept in KEPT.items():
        con.execute("INSERT INTO task_fields VALUES (?, ?, 3, 3, '[]')", [field, kept])
    yield con
    con.close()


def _as_entity(column: str, value):
    if column == "full_cast" and value is not None:
        return [{"actor": m["actor"], "characters": m["characters"], "additionalTexts": m["additional_texts"]}
                for m in value]
    return value


def test_table_is_typed_one_row_per_released_film(state):
    refs = build_tables(state)["task_references"]
    assert refs.column("imdb_id").to_pylist() == ["tt0000001", "tt0000002", "tt0000003"]  # no dropped/withdrawn
    assert refs.column("id").to_pylist() == [1, 2, 3] and refs.schema.field("id").type == pa.int64()
    strings = pa.list_(pa.string())
    for col in ("genres", "topics", "countries_of_origin", "original_languages"):
        assert refs.schema.field(col).type.equals(strings), col
    cast = refs.schema.field("full_cast").type
    assert pa.types.is_list(cast) and pa.types.is_struct(cast.value_type)
    assert [f.name for f in cast.value_type] == ["actor", "characters", "additional_texts"]
    assert cast.value_type.field("characters").type.equals(strings)
    assert refs.schema.names == ["id", "imdb_id", *TASK_REFERENCE_COLUMNS.values()]


def test_values_equal_the_entities_field_for_field(state):
    tables = build_tables(state)
    rows = {r["imdb_id"]: r for r in tables["task_references"].to_pylist()}
    entities = list(film_entities(state, tables, COUNTRIES))
    assert len(entities) == len(rows) == 3
    for entity in entities:
        row = rows[entity["sources"]["imdbLink"].split("/")[-2]]
        assert row["id"] == entity["id"]
        for field, column in TASK_REFERENCE_COLUMNS.items():
            assert _as_entity(column, row[column]) == entity[field], (entity["id"], field)
    one, two, three = (rows[f"tt000000{k}"] for k in (1, 2, 3))
    assert one["plot"] == "A storm." and two["plot"] == "A debt."  # cleaned text; source text without curation
    assert one["storyline"] is None and one["key_message"] is None and one["age_suitability"] is None  # withheld
    assert two["topics"] == [] and two["countries_of_origin"] == [] and two["full_cast"] == []  # JSON null -> []
    assert one["full_cast"][1] == {"actor": "Bo Ray", "characters": [], "additional_texts": []}
    assert three["original_languages"] == ["Persian", "English"]


def test_gate_agrees_with_the_built_table_and_catches_a_drift(state):
    tables = build_tables(state)
    kept = {f for f, k in KEPT.items() if k}

    def gate_codes(tabs) -> set[str]:
        gate = ReleaseGate(languages=("en",), countries=COUNTRIES, kept_task_fields=kept, previous_ids=None,
                           withheld_task_fields={f for f, k in KEPT.items() if not k}, label_spaces={})
        for entity in film_entities(state, tables, COUNTRIES):
            gate.check_entity(entity)
        gate.check_tables(tabs)
        return {c for c in gate.codes() if c.startswith("task_")}

    assert gate_codes(tables) == set()  # (no tracks here: only the task checks are looked at)
    refs = tables["task_references"]
    genres = refs.column("genres").to_pylist()
    genres[1] = ["Crime", "Drama"]
    drifted = dict(tables, task_references=refs.set_column(refs.schema.get_field_index("genres"), "genres",
                                                           pa.array(genres, refs.schema.field("genres").type)))
    assert gate_codes(drifted) == {"task_reference_mismatch"}


# ------------------------------------------------------------------------------ change kind

def _release(root: Path, refs: pa.Table | None, version: str = "1.0.0") -> Path:
    """A release directory holding the data tables of ``refs``' films (one film table, no tracks)."""
    rel = root / version
    rel.mkdir(parents=True)
    ids = refs.column("imdb_id").to_pylist() if refs is not None else ["tt0000001", "tt0000002"]
    films = pa.table({"id": pa.array(range(1, len(ids) + 1), pa.int64()), "imdb_id": ids,
                      "title": [f"Film {i}" for i in ids]})
    empty = {
        "tracks": pa.schema([("track_id", pa.string()), ("imdb_id", pa.string()), ("language", pa.string())]),
        "entries": pa.schema([("track_id", pa.string()), ("imdb_id", pa.string()), ("language", pa.string()),
                              ("index", pa.int64()), ("timeframe", pa.string()), ("content", pa.string())]),
        "ratings": pa.schema([("imdb_id", pa.string()), ("country", pa.string()), ("label", pa.string())]),
        "language_safety": pa.schema([("imdb_id", pa.string()), ("category", pa.string())]),
    }
    pq.write_table(films, rel / "films.parquet")
    for name, schema in empty.items():
        pq.write_table(schema.empty_table(), rel / f"{name}.parquet")
    if refs is not None:
        pq.write_table(refs, rel / "task_references.parquet")
    return rel


def _refs(plots: dict[str, str]) -> pa.Table:
    ids = sorted(plots)
    return pa.table({"id": pa.array(range(1, len(ids) + 1), pa.int64()), "imdb_id": ids,
                     "plot": [plots[i] for i in ids],
                     "genres": pa.array([["Drama"] for _ in ids], pa.list_(pa.string()))})


def _tables(rel: Path) -> dict[str, pa.Table]:
    return {p.stem: pq.read_table(p) for p in rel.glob("*.parquet")}


def test_changed_task_reference_is_major_and_reported(tmp_path):
    old = _release(tmp_path / "a", _refs({"tt0000001": "A storm.", "tt0000002": "A debt."}))
    new = _release(tmp_path / "b", _refs({"tt0000001": "A storm.", "tt0000002": "A large debt."}))
    assert change_kind_from_tables(old, _tables(new)) == "major"
    d = diff_releases(old, new)
    assert d["change_kind"] == "major"
    assert d["task_references"]["changed"] == [{"imdb_id": "tt0000002", "columns": ["plot"]}]
    assert "task references +0 -0 ~1" in render_diff_text(d)


def test_unchanged_task_references_are_patch_and_a_new_film_is_minor(tmp_path):
    old = _release(tmp_path / "a", _refs({"tt0000001": "A storm.", "tt0000002": "A debt."}))
    same = _release(tmp_path / "b", _refs({"tt0000001": "A storm.", "tt0000002": "A debt."}))
    assert change_kind_from_tables(old, _tables(same)) == "patch"
    more = _release(tmp_path / "c", _refs({"tt0000001": "A storm.", "tt0000002": "A debt.", "tt0000003": "Friends."}))
    d = diff_releases(old, more)
    assert d["change_kind"] == "minor" and d["task_references"]["added"] == ["tt0000003"]


def test_first_release_with_the_table_after_one_without_is_major(tmp_path):
    old = _release(tmp_path / "a", None)
    new = _release(tmp_path / "b", _refs({"tt0000001": "A storm.", "tt0000002": "A debt."}))
    assert change_kind_from_tables(old, _tables(new)) == "major"
