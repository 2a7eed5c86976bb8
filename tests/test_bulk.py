"""cinesub/bulk.py: one-statement row writes through Arrow, with executemany's semantics."""

from __future__ import annotations

import datetime as dt

import duckdb
import pytest

from cinesub.bulk import delete_keys, insert_rows, primary_key


@pytest.fixture()
def con():
    c = duckdb.connect()
    c.execute("""CREATE TABLE t (a VARCHAR, b BIGINT, c TIMESTAMPTZ, d JSON, e BOOLEAN, f DOUBLE,
                 PRIMARY KEY (a, b))""")
    yield c
    c.close()


NOW = dt.datetime(2026, 12, 2, 3, 0, tzinfo=dt.timezone.utc)


def test_rows_keep_their_values_and_types(con):
    assert insert_rows(con, "t", [["x", 1, NOW, '{"k": 1}', True, 1], ["y", 2, None, None, None, 2.5]]) == 2
    rows = con.execute("SELECT a, b, c, d, e, f FROM t ORDER BY a").fetchall()
    assert rows[0][:2] == ("x", 1) and rows[0][2] == NOW and rows[0][4] is True and rows[0][5] == 1.0
    assert rows[1] == ("y", 2, None, None, None, 2.5)


def test_replace_keeps_the_last_row_of_a_key_as_executemany_does(con):
    insert_rows(con, "t", [["x", 1, None, None, False, 0]])
    insert_rows(con, "t", [["x", 1, None, None, True, 1], ["x", 1, None, None, False, 2], ["z", 3, None, None, None, 9]],
                replace=True)
    assert con.execute("SELECT a, f FROM t ORDER BY a").fetchall() == [("x", 2.0), ("z", 9.0)]
    assert primary_key(con, "t") == ["a", "b"]


def test_a_duplicate_key_still_raises_without_replace(con):
    insert_rows(con, "t", [["x", 1, None, None, None, None]])
    with pytest.raises(duckdb.ConstraintException):
        insert_rows(con, "t", [["x", 1, None, None, None, None]])


def test_a_value_that_fits_no_column_type_raises_like_a_bad_insert(con):
    with pytest.raises(duckdb.ConversionException):
        insert_rows(con, "t", [["x", "not a number", None, None, None, None]])
    with pytest.raises(ValueError, match="2 values for 6 columns"):
        insert_rows(con, "t", [["x", 1]])


def test_named_columns_and_an_empty_batch(con):
    assert insert_rows(con, "t", []) == 0
    insert_rows(con, "t", [[5, "k"]], columns=("b", "a"))
    assert con.execute("SELECT a, b, f FROM t").fetchall() == [("k", 5, None)]


def test_the_callers_transaction_rolls_everything_back(con):
    con.execute("BEGIN")
    insert_rows(con, "t", [["x", 1, None, None, None, None]])
    con.execute("ROLLBACK")
    assert con.execute("SELECT count(*) FROM t").fetchone()[0] == 0


def test_delete_keys_deletes_exactly_the_keys_and_the_condition(con):
    insert_rows(con, "t", [[k, n, None, None, None, float(n)] for k in "pqr" for n in (1, 2)])
    delete_keys(con, "t", ("a", "b"), [("p", 1), ("q", 2), ("absent", 9)])
    delete_keys(con, "t", ("a",), [("r",)], where="t.f > ?", params=[1.5])
    assert con.execute("SELECT a, b FROM t ORDER BY a, b").fetchall() == [("p", 2), ("q", 1), ("r", 1)]
    delete_keys(con, "t", ("a",), [])
    assert con.execute("SELECT count(*) FROM t").fetchone()[0] == 3
