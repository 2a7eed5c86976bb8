"""Genres in seed 000's core genre space (validators/genres.py) and curator-filled task values
(validators/task_fills.py), with the curate stage's tables on an in-memory state DB."""

from __future__ import annotations

import csv
import json

import duckdb
import pytest

from cinesub.state import sql_text
from flows.stages.subtitles.task_values import film_genre_rows, fill_gaps, gap_reason, store_task_values
from validators.curation import completeness
from validators.genres import (
    STATUS_MAPPED,
    STATUS_OUTSIDE,
    STATUS_UNMAPPED,
    GenreMapError,
    default_map,
    load_map,
    normalize_genres,
)
from validators.task_fills import FillValueError, apply_fills, parse_value

#: seed 000, Appendix B.3 "Allowed genre labels" (22)
PAPER_CORE = ("Action Adventure Animation Biography Comedy Crime Documentary Drama Family Fantasy Film-Noir "
              "History Horror Music Musical Mystery Romance Sci-Fi Sport Thriller War Western").split()


def test_core_space_is_the_papers_and_each_core_label_maps_to_itself():
    gmap = default_map()
    assert list(gmap.core) == PAPER_CORE
    for g in PAPER_CORE:
        assert gmap.lookup("imdb", g) == (g,)
    assert gmap.version == "genres-v1" and len(gmap.sha256) == 64
    assert gmap.info()["version"] == "genres-v1"


def test_raw_genres_are_kept_beside_the_core_ones_and_unmapped_ones_are_not_guessed():
    r = normalize_genres({"imdb": ["Thriller", "Romantic Comedy", "  psychological   THRILLER ", "Short",
                                   "Space Opera", "Thriller", ""]})
    assert r.core == ["Comedy", "Romance", "Thriller"]  # core-space order, no duplicates
    assert [(g.raw, g.status, g.core) for g in r.raw] == [
        ("Thriller", STATUS_MAPPED, ("Thriller",)),
        ("Romantic Comedy", STATUS_MAPPED, ("Romance", "Comedy")),
        ("  psychological   THRILLER ", STATUS_MAPPED, ("Thriller",)),  # raw string stored as found
        ("Short", STATUS_OUTSIDE, ()),
        ("Space Opera", STATUS_UNMAPPED, ()),  # not "Sci-Fi": queued, never guessed
    ]
    assert [g.position for g in r.raw] == [0, 1, 2, 3, 4]
    assert [g.raw for g in r.unmapped] == ["Space Opera"]
    only_unmapped = normalize_genres({"imdb": ["Space Opera"]})
    assert only_unmapped.core == [] and only_unmapped.unmapped


def test_sources_map_separately():
    r = normalize_genres({"imdb": ["Science Fiction"], "csm": ["Science Fiction", "Action/Adventure"]})
    by = {(g.source, g.raw): g for g in r.raw}
    assert by[("imdb", "Science Fiction")].status == STATUS_UNMAPPED  # IMDb says "Sci-Fi"
    assert by[("csm", "Science Fiction")].core == ("Sci-Fi",)
    assert r.core == ["Action", "Adventure", "Sci-Fi"]
    with pytest.raises(GenreMapError):
        normalize_genres({"letterboxd": ["Drama"]})


def test_a_mapping_to_a_label_outside_the_core_space_is_refused(tmp_path):
    bad = {"version": "x", "core": ["Drama"], "sources": {"imdb": {"Docudrama": ["Drama", "Documentary"]}}}
    path = tmp_path / "map.json"
    path.write_text(json.dumps(bad))
    with pytest.raises(GenreMapError, match="outside the core space"):
        load_map(path)
    clash = {"version": "x", "core": ["Drama", "War"],
             "sources": {"imdb": {"War Drama": ["War"], "war  drama": ["Drama"]}}}
    path.write_text(json.dumps(clash))
    with pytest.raises(GenreMapError, match="twice"):
        load_map(path)


@pytest.mark.realdata
def test_every_imdb_genre_of_the_live_captures_is_in_the_mapping(realdata_dir):
    """The genre strings of the real IMDb captures (datasets, JSON-LD, __NEXT_DATA__) are all
    listed: mapped or known outside the core space (Short, News …)."""
    live = realdata_dir / "live"
    seen: set[str] = set()
    with open(live / "imdb_datasets" / "title.basics_2025-02_head200.tsv", encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            if row["genres"] not in ("", "\\N"):
                seen.update(row["genres"].split(","))
    for p in sorted((live / "imdb_pages").glob("imdb_jsonld_*.json")):
        g = json.loads(p.read_text(encoding="utf-8")).get("genre")
        seen.update([g] if isinstance(g, str) else g or [])
    nd = json.loads((live / "imdb_pages" / "imdb_next_data_reference_tt0133093_2025-10_trimmed.json").read_text())
    seen.update(x["text"] for x in nd["props"]["pageProps"]["mainColumnData"]["genres"]["genres"])
    assert {"Documentary", "Short", "Sci-Fi", "Comedy"} <= seen
    r = normalize_genres({"imdb": sorted(seen)})
    assert not r.unmapped, [g.raw for g in r.unmapped]
    assert {g.raw for g in r.raw if g.status == STATUS_OUTSIDE} == {"Short", "News"} & seen


# --------------------------------------------------------------------------------------------
# curated values
# --------------------------------------------------------------------------------------------
def test_parse_value_checks_what_the_field_can_hold():
    core = default_map().core
    assert parse_value("genres", " drama, sci-fi ,Drama", core) == ["Drama", "Sci-Fi"]
    assert parse_value("keyMessage", "  Courage grows from care.\n") == "Courage grows from care."
    assert parse_value("ageSuitabilityRating", "13+") == "13+"
    with pytest.raises(FillValueError, match="not core genres: Space Opera"):
        parse_value("genres", "Drama, Space Opera", core)
    with pytest.raises(FillValueError, match="age like"):
        parse_value("ageSuitabilityRating", "PG-13")
    with pytest.raises(FillValueError, match="empty"):
        parse_value("keyMessage", "   ")


FIELDS = ["keyMessage", "genres", "storyline"]


def _records():
    return [{"id": "tt1", "keyMessage": "Be kind.", "genres": ["Drama"], "storyline": "A sea story."},
            {"id": "tt2", "keyMessage": None, "genres": ["Crime"], "storyline": "A debt."},
            {"id": "tt3", "keyMessage": "Trust.", "genres": [], "storyline": ""}]


def test_one_missing_value_drops_the_field_unless_a_curator_fills_it():
    before = completeness(_records(), FIELDS)
    assert before["keyMessage"]["kept"] is False and before["keyMessage"]["missing"] == ["tt2"]
    fills = {("tt2", "keyMessage"): {"fill_id": "f1", "value": "Debts are paid in trust."},
             ("tt1", "keyMessage"): {"fill_id": "f0", "value": "never used: the source has one"}}
    records, gaps = apply_fills(_records(), fills, FIELDS, {("tt3", "storyline"): "emptied_by_curation"})
    after = completeness(records, FIELDS)
    assert after["keyMessage"]["kept"] is True
    assert records[0]["keyMessage"] == "Be kind."  # a source value is never overwritten
    assert records[1]["keyMessage"] == "Debts are paid in trust."
    assert after["genres"]["kept"] is False and after["storyline"]["kept"] is False
    assert sorted((g["imdb_id"], g["field"], g["status"], g["reason"], g["fill_id"]) for g in gaps) == [
        ("tt2", "keyMessage", "filled", "source_missing", "f1"),
        ("tt3", "genres", "missing", "source_missing", None),
        ("tt3", "storyline", "missing", "emptied_by_curation", None),
    ]


def test_curate_tables_queue_unmapped_genres_and_record_gaps():
    con = duckdb.connect()
    con.execute(sql_text("state_schema.sql"))
    films = {"tt1": ["Drama", "Space Opera"], "tt2": ["Space Opera"], "tt3": ["Short", "Crime"]}
    records, genre_rows, reasons = [], [], {}
    for imdb_id, raw in films.items():
        core, rows = film_genre_rows(imdb_id, {"genres": raw}, {})
        genre_rows += rows
        reasons.update(gap_reason(imdb_id, {"storyline": None}, rows))
        records.append({"id": imdb_id, "genres": core})
    con.execute("INSERT INTO curated_values VALUES ('20260101T000000Z-a', 'tt2', 'genres', '[\"War\"]', NULL, "
                "'ann', '2026-01-01 00:00:00+00'), ('20260102T000000Z-b', 'tt2', 'genres', '[\"Sci-Fi\"]', NULL, "
                "'bob', '2026-01-02 00:00:00+00')")
    records, gaps = fill_gaps(con, records, ["genres"], reasons)
    store_task_values(con, gaps, genre_rows)
    assert [r["genres"] for r in records] == [["Drama"], ["Sci-Fi"], ["Crime"]]  # the latest fill is in force
    assert con.execute("SELECT source, raw_genre, films, example_imdb_id, mapping_version FROM genre_reviews").fetchall() \
        == [("imdb", "Space Opera", 2, "tt1", "genres-v1")]
    assert con.execute("SELECT imdb_id, field, status, reason, fill_id, CAST(value AS VARCHAR) FROM task_gaps").fetchall() \
        == [("tt2", "genres", "filled", "genres_no_core_label", "20260102T000000Z-b", '["Sci-Fi"]')]
    rows = con.execute("SELECT imdb_id, position, raw_genre, core_genres, status FROM film_genres "
                       "ORDER BY imdb_id, position").fetchall()
    assert rows == [("tt1", 0, "Drama", ["Drama"], "mapped"), ("tt1", 1, "Space Opera", [], "unmapped"),
                    ("tt2", 0, "Space Opera", [], "unmapped"),
                    ("tt3", 0, "Short", [], "outside_core"), ("tt3", 1, "Crime", ["Crime"], "mapped")]
