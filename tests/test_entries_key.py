"""``entries`` has no index on (track_id, position) (sql/state_schema.sql): the key is unique by
construction of the process stage's writer, audited by ``cinesub.state.entry_key_duplicates``;
state DBs written with the key are rebuilt without it."""

from __future__ import annotations

import duckdb

from cinesub.settings import Thresholds
from validators.candidate import process_bytes

SRT = b"".join(f"{i}\n00:00:0{i},000 --> 00:00:0{i},900\nLine number {i} of the film.\n\n".encode()
               for i in range(1, 6))

KEYED_DDL = """
CREATE TABLE entries (
    track_id      VARCHAR NOT NULL,
    position      BIGINT NOT NULL,
    "index"       BIGINT NOT NULL,
    timeframe     VARCHAR NOT NULL,
    start_ms      BIGINT NOT NULL,
    end_ms        BIGINT NOT NULL,
    content       VARCHAR NOT NULL,
    clean_content VARCHAR,
    PRIMARY KEY (track_id, position)
);"""  # sql/state_schema.sql between issue 14 and issue 18


class _Ctx:
    run_id = "run-k"

    def __init__(self):
        self.done = 0

    def item_done(self, kind, con=None):
        self.done += 1


def _key(imdb: str, file_id: str) -> tuple:
    return (imdb, "en", "opensubtitles", file_id, 1, 10, "a" * 64, 100)


def _counts(con) -> tuple:
    return con.execute("SELECT (SELECT count(*) FROM tracks), (SELECT count(*) FROM entries)").fetchone()


def test_fresh_state_db_entries_have_no_key_index(tmp_path):
    from cinesub.state import connect

    with connect(tmp_path / "s.duckdb") as con:
        assert con.execute("""SELECT count(*) FROM duckdb_constraints() WHERE table_name = 'entries'
                              AND constraint_type IN ('PRIMARY KEY', 'UNIQUE')""").fetchone()[0] == 0
        assert con.execute("""SELECT count(*) FROM duckdb_constraints() WHERE table_name = 'tracks'
                              AND constraint_type = 'PRIMARY KEY'""").fetchone()[0] == 1  # what the writer leans on


def test_keyed_state_db_is_rebuilt_without_the_key_idempotently(tmp_path):
    from cinesub.state import connect, entry_key_duplicates, migrate_entries_key

    db = tmp_path / "s.duckdb"
    rows = [("t1", p, p + 1, "00:00:01,000 --> 00:00:01,500", 1000, 1500, f"line {p}", None if p == 1 else f"line {p}")
            for p in (2, 0, 1)]
    with duckdb.connect(str(db)) as con:
        con.execute(KEYED_DDL)
        con.executemany("INSERT INTO entries VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
    for _ in range(2):
        with connect(db) as con:
            assert migrate_entries_key(con) is False  # connect() already rebuilt it
            assert con.execute("SELECT * FROM entries ORDER BY track_id, position").fetchall() == sorted(rows)
            assert con.execute("""SELECT count(*) FROM duckdb_constraints() WHERE table_name = 'entries'
                                  AND constraint_type IN ('PRIMARY KEY', 'UNIQUE')""").fetchone()[0] == 0
            assert con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name LIKE 'entries_%'"
                               ).fetchone()[0] == 0
            assert entry_key_duplicates(con) == (0, [])


def test_a_track_written_again_replaces_its_rows(tmp_path):
    """Reprocessing (the same batch twice), and one track twice in a batch (the tracks key refuses
    the batch: it is written track by track, the second copy replacing the first), never store an
    entry twice."""
    from cinesub.state import connect, entry_key_duplicates
    from flows.stages.subtitles.process import ProcessStage

    out = process_bytes(SRT, "en", 100, Thresholds())
    assert out.entries is not None and out.entries.height == 5
    stage, stats = ProcessStage(), {"processed": 0, "ok": 0, "flagged": 0, "rejected": 0, "entries": 0}
    batch = [(_key("tt1", "f1"), out), (_key("tt2", "f1"), out)]
    with connect(tmp_path / "s.duckdb") as con:
        ctx = _Ctx()
        stage._write_batch(con, ctx, batch, stats)
        assert _counts(con) == (1, 5)  # same file, bytes, language and runtime: one track id
        stage._write_batch(con, ctx, batch, stats)
        assert _counts(con) == (1, 5)
        assert entry_key_duplicates(con) == (0, [])
        assert ctx.done == 4
        assert con.execute("SELECT list(position ORDER BY position) FROM entries").fetchone()[0] == list(range(5))


def test_the_audit_counts_every_repeated_pair(tmp_path):
    from cinesub.state import connect, entry_key_duplicates

    with connect(tmp_path / "s.duckdb") as con:
        con.executemany("""INSERT INTO entries (track_id, position, "index", timeframe, start_ms, end_ms, content)
                           VALUES (?, ?, 1, 'x', 0, 0, 'c')""",
                        [("a", 0), ("a", 1), ("a", 1), ("b", 0), ("b", 0), ("b", 0), ("c", 0)])
        assert entry_key_duplicates(con) == (2, [("a", 1, 2), ("b", 0, 3)])
        assert entry_key_duplicates(con, limit=1) == (2, [("a", 1, 2)])


def test_publication_is_refused_when_an_entry_is_stored_twice(tmp_path):
    import pytest

    from cinesub.errors import CinesubError, ExitCode
    from cinesub.state import connect
    from warehouse.release import audit_state, publish

    rdir = tmp_path / "releases"
    with connect(tmp_path / "s.duckdb") as con:
        audit_state(con)  # a sound state DB: nothing to say
        con.executemany("""INSERT INTO entries (track_id, position, "index", timeframe, start_ms, end_ms, content)
                           VALUES (?, 0, 1, 'x', 0, 0, 'c')""", [("a",), ("a",)])
        with pytest.raises(CinesubError) as err:
            publish(con, rdir, config_hash="cfg", inputs={}, countries=("US",))
    assert err.value.reason == "entries_key_duplicate" and err.value.exit_code == ExitCode.BLOCKED
    assert "('a', 0, 2)" in str(err.value)
    assert not rdir.exists() or not any(rdir.iterdir())  # nothing published, no spool left


def test_memory_limit_is_set_for_the_block_and_restored(tmp_path):
    from cinesub.state import connect, memory_limit

    with connect(tmp_path / "s.duckdb") as con:
        def now():
            return con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]

        before = now()
        with memory_limit(con, "256MiB"):
            assert now() == "256.0 MiB" != before
        assert now() == before
        with memory_limit(con, None):
            assert now() == before
