"""The coordinator's DuckDB threads during the process stage (cinesub.state.thread_limit,
coordinator_threads; issue 18): the cores local workers leave, at least one, restored after."""

from __future__ import annotations

import duckdb
import pytest

from cinesub.state import coordinator_threads, thread_limit


@pytest.mark.parametrize(("workers", "cpus", "want"), [(2, 2, 1), (2, 8, 6), (1, 2, 1), (4, 2, 1), (0, 4, 4)])
def test_coordinator_threads_are_the_cores_workers_leave(workers, cpus, want):
    assert coordinator_threads(workers, cpus) == want


def _threads(con) -> int:
    return int(con.execute("SELECT current_setting('threads')").fetchall()[0][0])


def test_thread_limit_sets_and_restores():
    con = duckdb.connect()
    con.execute("SET threads = 3")
    with thread_limit(con, 1):
        assert _threads(con) == 1
    assert _threads(con) == 3


def test_thread_limit_restores_after_an_exception():
    con = duckdb.connect()
    con.execute("SET threads = 2")
    with pytest.raises(RuntimeError), thread_limit(con, 1):
        raise RuntimeError("boom")
    assert _threads(con) == 2


def test_thread_limit_none_leaves_it():
    con = duckdb.connect()
    con.execute("SET threads = 2")
    with thread_limit(con, None):
        assert _threads(con) == 2
    assert _threads(con) == 2


def test_checkpoint_writes_the_logged_rows_into_the_file_and_never_raises(tmp_path):
    import duckdb

    from cinesub.state import checkpoint

    db = tmp_path / "x.duckdb"
    con = duckdb.connect(str(db))
    con.execute("SET checkpoint_threshold = '1GB'")  # no automatic checkpoint: the rows stay in the log
    con.execute("CREATE TABLE t AS SELECT range AS i, repeat('x', 50) AS s FROM range(200000)")
    wal = tmp_path / "x.duckdb.wal"
    assert wal.exists() and wal.stat().st_size > 0
    checkpoint(con)
    assert not wal.exists() or wal.stat().st_size == 0
    other = duckdb.connect(str(db))  # a transaction open on the file: DuckDB refuses, memory only
    con.execute("BEGIN")
    con.execute("INSERT INTO t VALUES (1, 'y')")
    checkpoint(other)
    con.execute("COMMIT")
    assert con.execute("SELECT count(*) FROM t").fetchone()[0] == 200001
