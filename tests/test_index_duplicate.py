"""Duplicate SRT indices (issue 14 point 1, "loses nothing"): the strict parser keeps indices as
found (SPEC A4/A6: never renumbered), so real files whose indices repeat must be stored whole,
keyed by each entry's position in the file, and raise the structure layer ``index_duplicate``
(severity review: the chain moves on, a curator sees it) -- not a storage failure that turns a
good track into an ``internal_error`` rejection. Also: the migration of state DBs written with
the old ``entries`` key, and sanitization-log rows that name the entry by position."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import duckdb
import polars as pl
import pytest
from _realdata import manifest_codecs, read_track

from cinesub.settings import Settings, Thresholds
from validators.candidate import process_bytes
from validators.checks import CHECK_LAYERS, MAX_EVIDENCE_ITEMS, check_index_duplicate, evaluated_layers

#: the real files with repeated indices: {file: {repeated index: occurrences}}
REAL = {
    "ar/ar__this_means_war_2012__cp1256_ORIGINAL.srt": {1023: 2, 1152: 2},
    "ar/ar__this_means_war_2012__utf8_CONVERTED_same_sub.srt": {1023: 2, 1152: 2},
    "fa/fa__manhunt_2017__utf16le_bom.srt": {1: 2, 23: 2, 24: 2, 628: 2, 1257: 3},
}


def _ts(s: int) -> str:
    return f"{s // 3600:02d}:{s % 3600 // 60:02d}:{s % 60:02d},000"


def srt(indices: list[int], texts: list[str] | None = None) -> bytes:
    texts = texts or [f"Line number {n} of the test, spoken slowly." for n in range(len(indices))]
    blocks = [f"{i}\n{_ts(4 * n + 1)} --> {_ts(4 * n + 3)}\n{t}" for n, (i, t) in enumerate(zip(indices, texts))]
    return ("\n\n".join(blocks) + "\n").encode()


def _expected_indices(realdata_dir: Path, name: str) -> list[int]:
    """The file's indices in file order, read independently of extractors/."""
    codec = manifest_codecs(realdata_dir)[name]
    return read_track(realdata_dir / "srt" / name, codec)["index"].to_list()


# ---------------------------------------------------------------------------------------------
# the layer
# ---------------------------------------------------------------------------------------------
def test_layer_is_evaluated_and_documented():
    assert "index_duplicate" in CHECK_LAYERS and "index_duplicate" in evaluated_layers(None)
    import validators.checks as checks

    assert "``index_duplicate``" in checks.__doc__


def test_repeated_indices_are_one_review_flag_with_positions():
    frame = pl.DataFrame({"index": [1, 2, 2, 3, 7, 7, 7, 4]})
    flag = check_index_duplicate(frame)
    assert flag is not None and flag.layer == "index_duplicate" and flag.severity == "review"
    assert flag.value == 3.0 and flag.threshold == 0.0  # entries beyond the first of each index
    assert flag.evidence == {"count": 2, "repeated_entries": 3, "indices": [2, 7],
                             "positions": {"2": [1, 2], "7": [4, 5, 6]}, "truncated": False}
    json.dumps(flag.model_dump(mode="json"))


def test_unique_indices_raise_nothing_even_out_of_order():
    # kept as found and never renumbered; only a repeat is a finding
    assert check_index_duplicate(pl.DataFrame({"index": [5, 3, 9, 1]})) is None


def test_evidence_is_capped():
    n = MAX_EVIDENCE_ITEMS + 50
    flag = check_index_duplicate(pl.DataFrame({"index": [i // 2 for i in range(2 * n)]}))
    assert flag.evidence["count"] == n and flag.evidence["truncated"] is True
    assert len(flag.evidence["indices"]) == MAX_EVIDENCE_ITEMS == len(flag.evidence["positions"])


def test_synthetic_track_is_flagged_kept_whole_and_positioned():
    out = process_bytes(srt([1, 2, 3, 3, 4, 5]), "en", None, Thresholds())
    assert out.status == "flagged" and out.reasons == ["index_duplicate"]
    assert out.entries["index"].to_list() == [1, 2, 3, 3, 4, 5]
    assert out.entries["position"].to_list() == list(range(6))


# ---------------------------------------------------------------------------------------------
# real files through process_bytes
# ---------------------------------------------------------------------------------------------
@pytest.mark.realdata
@pytest.mark.parametrize("name", sorted(REAL))
def test_real_files_with_repeated_indices_are_flagged_and_whole(realdata_dir, name):
    language = name.split("/")[0]
    out = process_bytes((realdata_dir / "srt" / name).read_bytes(), language, None, Thresholds())
    assert out.status == "flagged" and out.reasons == ["index_duplicate"], out.reasons
    expected = _expected_indices(realdata_dir, name)
    assert out.entries["index"].to_list() == expected  # every entry, indices as found
    assert out.entries["position"].to_list() == list(range(len(expected)))
    (flag,) = out.flags
    repeats = REAL[name]
    assert flag.evidence["indices"] == sorted(repeats)
    assert flag.value == sum(n - 1 for n in repeats.values())
    for index, positions in flag.evidence["positions"].items():
        assert [expected[p] for p in positions] == [int(index)] * repeats[int(index)]


# ---------------------------------------------------------------------------------------------
# real files through the process stage (its writer and the selection)
# ---------------------------------------------------------------------------------------------
def _stage_home(tmp_path: Path, files: dict[str, bytes], languages: tuple[str, ...]) -> Settings:
    """A state DB with one eligible film per file and that file as its only downloaded candidate."""
    from cinesub.rawstore import RawStore
    from cinesub.records import utcnow
    from cinesub.state import connect

    settings = Settings(home=tmp_path / "home", languages=languages, workers=1)
    store = RawStore(settings.raw_dir)
    with connect(settings.state_db) as con:
        for n, (name, raw) in enumerate(sorted(files.items())):
            imdb, lang = f"tt{1000001 + n}", name.split("/")[0]
            sha, _ = store.put(raw)
            film = {"runtime_min": 100, "synopsis": "A synopsis.", "plot": "A plot.", "certificates": ["US:R"]}
            con.execute("""INSERT INTO films (kim_id, title, imdb_id, imdb_id_status, link_status, imdb)
                           VALUES (?, ?, ?, 'ok', 'agree', ?)""", [f"k{n}", name, imdb, json.dumps(film)])
            con.execute("""INSERT INTO candidates (imdb_id, language, provider, file_id, download_count, rank)
                           VALUES (?, ?, 'opensubtitles', ?, 100, 1)""", [imdb, lang, f"f{n}"])
            con.execute("""INSERT INTO blobs (provider, file_id, sha256, size, language, imdb_id, fetched_at)
                           VALUES ('opensubtitles', ?, ?, ?, ?, ?, ?)""", [f"f{n}", sha, len(raw), lang, imdb, utcnow()])
    return settings


def _run_process_stage(settings: Settings) -> dict:
    from flows.kernel_context import RunContext
    from cinesub.state import connect
    from flows.stages.subtitles.process import ProcessStage

    with connect(settings.state_db) as con:
        return ProcessStage(1).run(RunContext(settings=settings, run_id="run-h"), con)


@pytest.mark.realdata
def test_process_stage_stores_real_tracks_with_repeated_indices_whole(tmp_path, realdata_dir):
    files = {name: (realdata_dir / "srt" / name).read_bytes() for name in REAL}
    settings = _stage_home(tmp_path, files, ("ar", "fa"))
    stats = _run_process_stage(settings)
    assert stats["processed"] == 3 and stats["flagged"] == 3 and stats["rejected"] == 0, stats
    with duckdb.connect(str(settings.state_db), read_only=True) as con:
        for name in REAL:
            track_id, status, reasons, n_entries, error_type = con.execute(
                """SELECT t.track_id, t.status, t.reasons, t.n_entries, t.error_type FROM tracks t
                   JOIN films f USING (imdb_id) WHERE f.title = ?""", [name]).fetchone()
            assert (status, reasons, error_type) == ("flagged", "index_duplicate", None), (name, error_type)
            stored = [r[0] for r in con.execute(
                'SELECT "index" FROM entries WHERE track_id = ? ORDER BY position', [track_id]).fetchall()]
            expected = _expected_indices(realdata_dir, name)
            assert stored == expected and n_entries == len(expected)  # every entry, indices as found
            positions = [r[0] for r in con.execute(
                "SELECT position FROM entries WHERE track_id = ? ORDER BY position", [track_id]).fetchall()]
            assert positions == list(range(len(expected)))
            layer, severity, evidence = con.execute(
                "SELECT layer, severity, CAST(evidence AS VARCHAR) FROM flags WHERE track_id = ?", [track_id]).fetchone()
            assert (layer, severity) == ("index_duplicate", "review")
            assert json.loads(evidence)["indices"] == sorted(REAL[name])
            sel = con.execute("SELECT track_id, status, reason FROM selections s JOIN films f USING (imdb_id) "
                              "WHERE f.title = ? AND s.language = ?", [name, name.split("/")[0]]).fetchone()
            assert sel == (track_id, "flagged", "no_clean_candidate")  # kept for a curator, chain exhausted


# ---------------------------------------------------------------------------------------------
# the sanitization log names the entry, not only its (repeated) index
# ---------------------------------------------------------------------------------------------
TEXTS = ["Where were you last night, my friend?", "I was at home, reading a book.",
         "Nobody saw you there.", "Subtitles by DrBob", "Then somebody must have stolen it.",
         "Why did you not call the police?"]
INDICES = [1, 2, 3, 3, 4, 5]  # index 3 twice; the second one (position 3) is a team credit


def test_sanitization_log_row_of_a_repeated_index_points_at_its_entry():
    out = process_bytes(srt(INDICES, TEXTS), "en", None, Thresholds())
    assert "index_duplicate" in out.reasons
    (row,) = out.sanitization.to_dicts()
    assert row["index"] == 3 and row["position"] == 3 and row["action"] == "removed"
    entries = out.entries
    assert entries.filter(pl.col("position") == 3)["clean_content"].to_list() == [None]
    assert entries.filter(pl.col("position") == 2)["clean_content"].to_list() == [TEXTS[2]]  # same index, kept
    assert row["sha256"] == hashlib.sha256(TEXTS[3].encode()).hexdigest()


def test_stored_sanitization_log_joins_to_the_right_entry(tmp_path):
    settings = _stage_home(tmp_path, {"en/dup.srt": srt(INDICES, TEXTS)}, ("en",))
    _run_process_stage(settings)
    with duckdb.connect(str(settings.state_db), read_only=True) as con:
        rows = con.execute("""SELECT l."index", l.position, l.sha256, e.content, e.clean_content
                              FROM sanitization_log l JOIN entries e USING (track_id, position)""").fetchall()
    ((index, position, sha, content, clean),) = rows
    assert (index, position, clean) == (3, 3, None)
    assert content == TEXTS[3] and sha == hashlib.sha256(content.encode()).hexdigest()


# ---------------------------------------------------------------------------------------------
# migration of a state DB written with the old entries key
# ---------------------------------------------------------------------------------------------
OLD_DDL = """
CREATE TABLE entries (
    track_id      VARCHAR NOT NULL,
    "index"       BIGINT NOT NULL,
    timeframe     VARCHAR NOT NULL,
    start_ms      BIGINT NOT NULL,
    end_ms        BIGINT NOT NULL,
    content       VARCHAR NOT NULL,
    clean_content VARCHAR,                   -- NULL = removed by sanitization
    PRIMARY KEY (track_id, "index")
);
CREATE TABLE sanitization_log (
    track_id      VARCHAR NOT NULL,
    imdb_id       VARCHAR NOT NULL,
    language      VARCHAR NOT NULL,
    "index"       BIGINT NOT NULL,
    action        VARCHAR NOT NULL,          -- removed | modified
    reasons       VARCHAR NOT NULL,
    sha256        VARCHAR NOT NULL           -- hash of the removed/replaced text, never the text
);
"""  # as in sql/state_schema.sql before issue 14 (git show <before>:sql/state_schema.sql)


def _old_db(path: Path) -> list[tuple]:
    rows = [("t1", i, f"00:00:0{i},000 --> 00:00:0{i},500", 1000 * i, 1000 * i + 500, f"line {i}",
             None if i == 5 else f"line {i}") for i in (9, 5, 7)]  # inserted out of order
    rows += [("t2", 2, "00:00:02,000 --> 00:00:02,500", 2000, 2500, "only", "only")]
    with duckdb.connect(str(path)) as con:
        con.execute(OLD_DDL)
        con.executemany("INSERT INTO entries VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
        con.execute("INSERT INTO sanitization_log VALUES ('t1', 'tt1', 'en', 5, 'removed', 'credit', 'abc')")
    return rows


def test_old_state_db_is_migrated_to_positions_idempotently(tmp_path):
    from cinesub.state import connect, entry_key_duplicates, migrate_entry_positions

    db = tmp_path / "state.duckdb"
    rows = _old_db(db)
    for _ in range(2):  # a second connect finds nothing to do and changes nothing
        with connect(db) as con:
            got = con.execute("""SELECT track_id, position, "index", timeframe, start_ms, end_ms, content,
                                        clean_content FROM entries ORDER BY track_id, position""").fetchall()
            assert got == [(r[0], p, *r[1:]) for p, r in
                           [(0, rows[1]), (1, rows[2]), (2, rows[0]), (0, rows[3])]]
            assert con.execute('SELECT "index", position FROM sanitization_log').fetchall() == [(5, 0)]
            assert migrate_entry_positions(con) is False
            assert con.execute("""SELECT count(*) FROM duckdb_constraints()
                                  WHERE table_name = 'entries' AND constraint_type IN ('PRIMARY KEY', 'UNIQUE')"""
                               ).fetchone()[0] == 0  # unique by construction (sql/state_schema.sql)
            assert con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name LIKE 'entries_%'"
                               ).fetchone()[0] == 0
    with connect(db) as con:  # the migrated table takes a repeated index; the audit names a repeated position
        con.execute("""INSERT INTO entries (track_id, position, "index", timeframe, start_ms, end_ms, content)
                       VALUES ('t1', 3, 9, 'x', 0, 0, 'again')""")
        assert entry_key_duplicates(con) == (0, [])
        con.execute("""INSERT INTO entries (track_id, position, "index", timeframe, start_ms, end_ms, content)
                       VALUES ('t1', 3, 10, 'x', 0, 0, 'clash')""")
        assert entry_key_duplicates(con) == (1, [("t1", 3, 2)])


def test_fresh_and_migrated_state_dbs_have_the_same_columns(tmp_path):
    from cinesub.state import connect

    old, fresh = tmp_path / "old.duckdb", tmp_path / "fresh.duckdb"
    _old_db(old)
    cols = {}
    for db in (old, fresh):
        with connect(db) as con:
            cols[db] = con.execute("""SELECT table_name, list(column_name ORDER BY column_index)
                                      FROM duckdb_columns() WHERE table_name IN ('entries', 'sanitization_log')
                                      GROUP BY ALL ORDER BY ALL""").fetchall()
    assert cols[old] == cols[fresh]
    assert dict(cols[fresh])["entries"][:3] == ["track_id", "position", "index"]
    assert "position" in dict(cols[fresh])["sanitization_log"]
