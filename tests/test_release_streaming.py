"""Release tables of unbounded size are streamed (issue 18): the Parquet writer of a query's rows
in row groups (warehouse/publish.py ``write_query_parquet``) writes the bytes of ``write_parquet``
of the whole table, and the spooled, memory-mapped Arrow table equals the materialised one."""

from __future__ import annotations

import duckdb
import pyarrow.parquet as pq
import pytest

from warehouse.publish import file_sha256, spool_arrow, write_parquet, write_query_parquet

ROWS = """SELECT i AS id, 'line ' || (i % 977) AS content, CASE WHEN i % 5 = 0 THEN NULL ELSE i * 1.5 END AS x
          FROM range({n}) r(i) ORDER BY i DESC"""


@pytest.mark.parametrize("n, batch_rows, group_rows", [(25_000, 1_000, 4_096), (10_000, 3_000, 10_000),
                                                      (5, 2_048, 4_096), (0, 2_048, 4_096)])
def test_streamed_parquet_has_the_bytes_of_the_whole_table(tmp_path, n, batch_rows, group_rows):
    import warehouse.publish as P

    con = duckdb.connect()
    sql = ROWS.format(n=n)
    whole = con.sql(sql).to_arrow_table()  # small row groups: several, and a short last one
    pq.write_table(whole, tmp_path / "whole.parquet", row_group_size=group_rows, **P.PARQUET_OPTIONS)
    rows, schema = P.write_parquet_stream(con.sql(sql).to_arrow_reader(batch_rows), tmp_path / "streamed.parquet",
                                          row_group_rows=group_rows)
    assert rows == n and schema == whole.schema
    assert file_sha256(tmp_path / "streamed.parquet") == file_sha256(tmp_path / "whole.parquet")
    meta = pq.read_metadata(tmp_path / "streamed.parquet")
    assert meta.num_rows == n and meta.num_row_groups == max(1, -(-n // group_rows))


def test_query_parquet_with_the_default_row_groups_equals_write_parquet(tmp_path):
    con = duckdb.connect()
    sql = ROWS.format(n=30_000)
    write_parquet(con.sql(sql).to_arrow_table(), tmp_path / "a.parquet")
    assert write_query_parquet(con, sql, tmp_path / "b.parquet", batch_rows=2_048)[0] == 30_000
    assert file_sha256(tmp_path / "a.parquet") == file_sha256(tmp_path / "b.parquet")


def test_spooled_table_is_the_materialised_one_and_outlives_its_file(tmp_path):
    con = duckdb.connect()
    sql = ROWS.format(n=20_000)
    path = tmp_path / "entries.arrow"
    table = spool_arrow(con.sql(sql).to_arrow_reader(4_096), path)
    path.unlink()  # mapped: still readable (POSIX)
    assert table.equals(con.sql(sql).to_arrow_table())
    con.register("t", table)
    assert con.execute("SELECT count(*), sum(id) FROM t").fetchone() == (20_000, sum(range(20_000)))
