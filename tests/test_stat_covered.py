"""The release statistics' covered time (sql/release_stats.sql ``stat_covered``, computed by
warehouse/stats.py ``covered_table``) is the audit's union of intervals
(validators.duration_audit.covered_ms) and the SQL window it replaced, on random, overlapping,
nested, touching, empty and inverted intervals, with each track's rows together (as in a
release), shuffled, or at extreme values."""

from __future__ import annotations

import random
from pathlib import Path

import duckdb
import polars as pl
import pytest

from validators.duration_audit import covered_ms
from warehouse.stats import covered_table

SQL = Path(__file__).resolve().parents[1] / "sql" / "release_stats.sql"

#: the window query stat_covered was before covered_table (sql/release_stats.sql quotes it)
WINDOW_SQL = """
SELECT track_id, sum(greatest(0, end_ms - greatest(start_ms, coalesce(reach, start_ms))))::BIGINT AS covered_ms
FROM (
    SELECT track_id, start_ms, end_ms,
           max(end_ms) OVER (PARTITION BY track_id ORDER BY start_ms, end_ms
                             ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS reach
    FROM entries WHERE end_ms > start_ms
)
GROUP BY track_id
ORDER BY track_id"""


def _stat_covered_sql() -> str:
    text = SQL.read_text(encoding="utf-8")
    start = text.index("CREATE OR REPLACE TEMP TABLE stat_covered")
    return text[start:text.index(";", start) + 1]


def _rows(seed: int) -> list[tuple[str, int, int]]:
    rng = random.Random(seed)
    rows = []
    for track in range(300):
        n = rng.choice([0, 1, 2, 5, 30])
        for _ in range(n):
            a = rng.randrange(-2_000, 50_000, rng.choice([1, 250, 1000]))
            length = rng.choice([0, -300, rng.randrange(1, 4000), rng.randrange(1, 40_000)])
            rows.append((f"t{track:03d}", a, a + length))
        if n and rng.random() < 0.3:  # the same interval twice, and one inside another
            _, a, b = rows[-1]
            rows += [(f"t{track:03d}", a, b), (f"t{track:03d}", a + 1, max(a + 1, b - 1))]
    return rows


def _want(df: pl.DataFrame) -> dict[str, int]:
    want = {tid: covered_ms(part) for (tid,), part in df.partition_by("track_id", as_dict=True).items()}
    return {t: v for t, v in want.items() if v or not df.filter((pl.col("track_id") == t)
                                                              & (pl.col("end_ms") > pl.col("start_ms"))).is_empty()}


@pytest.mark.parametrize("order", ["release", "track_unsorted", "shuffled", "by_start"])
def test_stat_covered_is_the_union_of_intervals(order):
    rows = _rows(12)
    if order == "release":  # each track's rows together, by start (the release's entries)
        rows.sort(key=lambda r: (r[0], r[1]))
    elif order == "track_unsorted":  # each track's rows together, in any order
        random.Random(5).shuffle(rows)
        rows.sort(key=lambda r: r[0])
    elif order == "shuffled":  # a track's rows apart
        random.Random(3).shuffle(rows)
    else:
        rows.sort(key=lambda r: (r[1], r[0]))
    df = pl.DataFrame(rows, schema={"track_id": pl.Utf8, "start_ms": pl.Int64, "end_ms": pl.Int64}, orient="row")
    con = duckdb.connect()
    con.register("entries", df.to_arrow())
    con.register("track_covered", covered_table(df.to_arrow()))
    con.execute(_stat_covered_sql())
    got = con.execute("SELECT track_id, covered_ms FROM stat_covered").fetchall()
    assert got == con.execute(WINDOW_SQL).fetchall()  # the same rows in the same order
    assert dict(got) == _want(df)
    assert len(got) > 150


def test_int32_columns_extremes_and_no_interval_at_all():
    df = pl.DataFrame({"track_id": ["a", "a", "b", "b", "c"], "start_ms": [5, 0, -(2 ** 61), 2 ** 61, 7],
                       "end_ms": [10, 6, -(2 ** 61) + 4, 2 ** 61 + 9, 7]})
    con = duckdb.connect()
    con.register("entries", df.to_arrow())
    assert covered_table(df.to_arrow()).to_pylist() == [
        {"track_id": "a", "covered_ms": 10}, {"track_id": "b", "covered_ms": 13}]
    assert covered_table(df.to_arrow()).to_pylist() == [
        {"track_id": t, "covered_ms": c} for t, c in con.execute(WINDOW_SQL).fetchall()]
    small = df.head(2).with_columns(pl.col("start_ms").cast(pl.Int32), pl.col("end_ms").cast(pl.Int32))
    assert covered_table(small.to_arrow()).to_pylist() == [{"track_id": "a", "covered_ms": 10}]
    assert covered_table(df.filter(pl.col("track_id") == "c").to_arrow()).num_rows == 0


def test_null_times_are_left_out_as_in_sql():
    df = pl.DataFrame({"track_id": ["a", "a", "a", "b"], "start_ms": [0, None, 100, None],
                       "end_ms": [10, 50, None, 9]})
    con = duckdb.connect()
    con.register("entries", df.to_arrow())
    want = [{"track_id": t, "covered_ms": c} for t, c in con.execute(WINDOW_SQL).fetchall()]
    assert covered_table(df.to_arrow()).to_pylist() == want == [{"track_id": "a", "covered_ms": 10}]
