"""``cinesub.state.connect`` makes a state DB's schema current once per process and file
(docs/rebuilds.md, "Fixed costs of a build"): a file this process left is trusted, anything else
is initialised (and migrated) again."""

from __future__ import annotations

import duckdb

from cinesub import state
from cinesub.state import connect


def _count_schema_runs(monkeypatch) -> list[str]:
    runs: list[str] = []
    real = state.sql_text
    for schema in ("state_schema.sql", "pd_schema.sql"):  # the table lists are read once, cached
        state._schema_tables(schema)

    def counting(name: str) -> str:
        if name.endswith("_schema.sql"):
            runs.append(name)
        return real(name)

    monkeypatch.setattr(state, "sql_text", counting)
    return runs


def test_second_connection_skips_the_schema(tmp_path, monkeypatch):
    runs = _count_schema_runs(monkeypatch)
    db = tmp_path / "state.duckdb"
    with connect(db) as con:
        con.execute("INSERT INTO runs (run_id, started_at, status, sample, config_hash, code_version) "
                    "VALUES ('r1', now(), 'running', TRUE, 'c', 'v')")
    with connect(db) as con:
        assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == 1
    with connect(db, read_only=True):
        pass
    assert runs == ["state_schema.sql"]


def test_a_replaced_file_is_initialised_again(tmp_path, monkeypatch):
    runs = _count_schema_runs(monkeypatch)
    db = tmp_path / "state.duckdb"
    with connect(db):
        pass
    db.unlink()
    with duckdb.connect(str(db)) as con:  # someone else's file at the same path: one table only
        con.execute("CREATE TABLE runs (run_id VARCHAR)")
    with connect(db) as con:
        tables = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    assert {"films", "tracks", "entries", "stage_runs"} <= tables
    assert runs == ["state_schema.sql", "state_schema.sql"]


def test_a_file_written_elsewhere_is_checked_again(tmp_path, monkeypatch):
    runs = _count_schema_runs(monkeypatch)
    db = tmp_path / "state.duckdb"
    with connect(db):
        pass
    with duckdb.connect(str(db)) as con:  # not through connect(): another process, as far as we know
        con.execute("DROP TABLE films")
    with connect(db) as con:
        assert con.execute("SELECT count(*) FROM films").fetchone()[0] == 0
    assert len(runs) == 2


def test_each_schema_of_a_file_is_its_own(tmp_path, monkeypatch):
    runs = _count_schema_runs(monkeypatch)
    db = tmp_path / "state.duckdb"
    with connect(db):
        pass
    with connect(db, schema="pd_schema.sql") as con:
        tables = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    assert "pd_pages" in tables
    assert runs == ["state_schema.sql", "pd_schema.sql"]
