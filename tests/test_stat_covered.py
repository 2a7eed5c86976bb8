"""The release statistics' covered time (sql/release_stats.sql ``stat_covered``) is the audit's
union of intervals (validators.duration_audit.covered_ms) on random, overlapping, nested, touching,
empty and inverted intervals."""

from __future__ import annotations

import random
from pathlib import Path

import duckdb
import polars as pl

from validators.duration_audit import covered_ms

SQL = Path(__file__).resolve().parents[1] / "sql" / "release_stats.sql"


def _stat_covered_sql() -> str:
    text = SQL.read_text(encoding="utf-8")
    start = text.index("CREATE OR REPLACE TEMP TABLE stat_covered")
    return text[start:text.index(";", start) + 1]


def test_stat_covered_is_the_union_of_intervals():
    rng = random.Random(12)
    rows = []
    for track in range(300):
        n = rng.choice([0, 1, 2, 5, 30])
        for _ in range(n):
            a = rng.randrange(0, 50_000, rng.choice([1, 250, 1000]))
            length = rng.choice([0, -300, rng.randrange(1, 4000), rng.randrange(1, 40_000)])
            rows.append((f"t{track:03d}", a, a + length))
        if n and rng.random() < 0.3:  # the same interval twice, and one inside another
            _, a, b = rows[-1]
            rows += [(f"t{track:03d}", a, b), (f"t{track:03d}", a + 1, max(a + 1, b - 1))]
    df = pl.DataFrame(rows, schema={"track_id": pl.Utf8, "start_ms": pl.Int64, "end_ms": pl.Int64}, orient="row")
    con = duckdb.connect()
    con.register("entries", df.to_arrow())
    con.execute(_stat_covered_sql())
    got = dict(con.execute("SELECT track_id, covered_ms FROM stat_covered").fetchall())
    want = {tid: covered_ms(part) for (tid,), part in df.partition_by("track_id", as_dict=True).items()}
    want = {t: v for t, v in want.items() if v or not df.filter((pl.col("track_id") == t)
                                                              & (pl.col("end_ms") > pl.col("start_ms"))).is_empty()}
    assert got == want
    assert len(got) > 150
