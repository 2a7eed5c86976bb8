"""warehouse/publish.py ReleaseWriter: the database begun in a background thread
(``start_database``) holds the same tables, in the same order and with the same rows, as one
``write_database`` call; an error while it is being written removes the staging directory and
the first error is the one raised."""

from __future__ import annotations

import duckdb
import pyarrow as pa
import pytest

from warehouse.publish import ReleaseWriter


def _tables():
    return {"films": pa.table({"id": [1, 2, 3], "imdb_id": ["tt0000001", "tt0000002", "tt0000003"]}),
            "entries": pa.table({"track_id": ["a"] * 5000 + ["b"] * 5000, "position": list(range(10_000))})}


def _contents(db):
    with duckdb.connect(str(db), read_only=True) as con:
        names = [r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() ORDER BY table_oid").fetchall()]
        return names, {n: con.execute(f'SELECT * FROM "{n}"').fetchall() for n in names}


def _write(releases, *, begun: bool):
    with ReleaseWriter(releases) as w:
        w.write_tables(_tables())
        w.next_version("major")
        data = {n: f"{n}.parquet" for n in _tables()}
        if begun:
            w.start_database("cinesub.duckdb", data)
        w.write_tables({"stats_core": pa.table({"k": ["films"], "v": [3]})})
        w.write_database("cinesub.duckdb", {**data, "stats_core": "stats_core.parquet"})
        return _contents(w.dir / "cinesub.duckdb"), w.files["cinesub.duckdb"]


def test_the_database_begun_early_is_the_database_written_at_once(tmp_path):
    at_once, meta_a = _write(tmp_path / "a", begun=False)
    early, meta_b = _write(tmp_path / "b", begun=True)
    assert sorted(at_once[0]) == ["entries", "films", "stats_core"]
    assert early == at_once
    assert meta_a == meta_b


def test_an_error_while_the_database_is_written_removes_the_staging_directory(tmp_path):
    releases = tmp_path / "releases"
    with pytest.raises(RuntimeError, match="gate said no"):
        with ReleaseWriter(releases) as w:
            w.write_tables(_tables())
            w.next_version("major")
            w.start_database("cinesub.duckdb", {n: f"{n}.parquet" for n in _tables()})
            staging = w.dir
            raise RuntimeError("gate said no")
    assert not staging.exists()
    assert [p.name for p in releases.iterdir() if not p.name.startswith(".")] == []


def test_a_failed_database_thread_is_an_error_of_the_release(tmp_path):
    with pytest.raises(duckdb.Error):
        with ReleaseWriter(tmp_path / "r") as w:
            w.write_tables(_tables())
            w.next_version("major")
            w.start_database("cinesub.duckdb", {"films": "missing.parquet"})
            w.write_database("cinesub.duckdb", {"films": "missing.parquet"})
