"""The variety-aggregate stage reads the tuples in chunks of whole issue years (issue 17: DuckDB
holds a chunk, not every tuple of 1922–1979): the chunks, and results equal to one aggregation
over all tuples at any chunk size."""

from __future__ import annotations

import datetime as dt
from types import SimpleNamespace

import pyarrow as pa
import pytest

import flows.stages.hollywood.boxoffice as bo
from cinesub.settings import load_settings
from flows.stages.hollywood.common import pd_connect, pd_state_db
from validators.boxoffice_ranking import OUTPUTS, aggregate

TABLES = {"weekly": "pd_weekly", "yearly": "pd_yearly", "top100": "pd_top100", "excluded": "pd_excluded",
          "unknown_cities": "pd_unknown_cities"}


def test_year_chunks_are_runs_of_consecutive_years_within_the_limit():
    counts = [(1926, 40), (1927, 50), (1928, 20), (1930, 5), (1931, 500), (1932, 1), (None, 3)]
    assert bo.year_chunks(counts, 100) == [
        "issue_date >= DATE '1926-01-01' AND issue_date < DATE '1928-01-01'",  # 40 + 50; + 20 is over
        "issue_date >= DATE '1928-01-01' AND issue_date < DATE '1929-01-01'",  # 1929 is missing: a new run
        "issue_date >= DATE '1930-01-01' AND issue_date < DATE '1931-01-01'",
        "issue_date >= DATE '1931-01-01' AND issue_date < DATE '1932-01-01'",  # above the limit: alone
        "issue_date >= DATE '1932-01-01' AND issue_date < DATE '1933-01-01'",
        "issue_date IS NULL"]                                                  # undated tuples: their own
    assert bo.year_chunks(counts[:3], 10**6) == ["issue_date >= DATE '1926-01-01' AND issue_date < DATE '1929-01-01'"]
    assert bo.year_chunks([], 100) == []


def _tuples() -> list[dict]:
    rows = []
    for year in (1926, 1927, 1929):
        for week in range(3):
            date = dt.date(year, 12, 1) + dt.timedelta(days=7 * week)  # 1926's last weeks run into 1927
            for i, (movie, city, gross) in enumerate([("The Big Parade", "Chicago", 20000 + year),
                                                      ("Ben-Hur", "Chicago", 15000 + week),
                                                      ("Old Ironsides", "Atlantis", 900),  # unknown city, every year
                                                      ("Stella Dallas", "Toronto", 1200)]):
                rows.append({"item_id": f"variety-{year}", "page": week, "issue_date": date, "extractor": "ocr-rules",
                             "model": None, "seq": i, "theater": "Capitol" if i < 2 else "Orpheum", "city": city,
                             "movie": movie, "week": "last week" if week != 1 else "week before", "gross": gross,
                             "confidence": None, "line_no": i})
    rows.append({**rows[0], "issue_date": None, "item_id": "variety-undated", "seq": 0})
    return rows


def _aliases() -> list[dict]:
    return [{"year": y, "alias": "The Big Parade", "n": 3, "imdb": "tt0015624", "decision": "auto",
             "reason": "matched", "decided_by": "suggested"} for y in (1926, 1927, 1929)]


def _state(tmp_path, tuples, aliases):
    settings = load_settings(home=tmp_path)
    with pd_connect(pd_state_db(settings)) as con:
        con.register("_t", pa.Table.from_pylist(tuples))
        con.execute("INSERT INTO pd_tuples BY NAME SELECT * FROM _t")
        cols = [r[0] for r in con.execute("DESCRIBE pd_aliases").fetchall()]
        for a in aliases:
            con.execute(f"INSERT INTO pd_aliases ({', '.join(k for k in a if k in cols)}) VALUES "
                        f"({', '.join('?' for k in a if k in cols)})", [v for k, v in a.items() if k in cols])
    return settings


def _run(settings) -> tuple[dict, dict]:
    ctx = SimpleNamespace(settings=settings, primary_extractor="ocr-rules")
    stage = bo.VarietyAggregateStage()
    with stage.open_state(ctx) as con:
        stats = stage.run(ctx, con)
        tables = {name: con.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall() for name, t in TABLES.items()}
        columns = {name: [f'"{r[0]}"' for r in con.execute(f"DESCRIBE {t}").fetchall()] for name, t in TABLES.items()}
    return stats, tables, columns


@pytest.mark.parametrize("limit", [1, 30, 10**9])
def test_chunked_aggregation_equals_one_aggregation_over_all_tuples(tmp_path, monkeypatch, limit):
    tuples, aliases = _tuples(), _aliases()
    settings = _state(tmp_path, tuples, aliases)
    monkeypatch.setattr(bo, "AGGREGATE_CHUNK_TUPLES", limit)
    stats, tables, columns = _run(settings)
    # the reference: validators.boxoffice_ranking.aggregate over every tuple at once
    import duckdb

    con = duckdb.connect()
    ref = aggregate(con, pa.Table.from_pylist([{k: v for k, v in t.items() if k not in ("seq", "line_no")}
                                               for t in tuples]),
                    bo.citymap_table(None), pa.Table.from_pylist([{k: a[k] for k in ("year", "alias", "imdb", "decision")}
                                                                  for a in aliases]))
    for name in OUTPUTS:
        con.register("_ref", ref[name])
        assert tables[name] == con.execute(f"SELECT {', '.join(columns[name])} FROM _ref ORDER BY ALL").fetchall(), name
        con.unregister("_ref")
    assert tables["weekly"] and tables["excluded"]
    assert {r[0] for r in tables["yearly"]} == {1926, 1927, 1929, None}  # 1926's December runs into 1927
    assert len(tables["unknown_cities"]) == 1  # Atlantis: one row, its counts over three years
    city, n_tuples, n_last_week, first, last = tables["unknown_cities"][0]
    assert (city, n_tuples, n_last_week, first.year, last.year) == ("Atlantis", 9, 6, 1926, 1929)
    assert stats["weekly"] == len(tables["weekly"]) and stats["unknown_cities"] == 1
    assert stats["tuples"] == len(tuples)


def test_a_rerun_replaces_the_results(tmp_path, monkeypatch):
    settings = _state(tmp_path, _tuples(), _aliases())
    monkeypatch.setattr(bo, "AGGREGATE_CHUNK_TUPLES", 1)
    first = _run(settings)[1]
    assert _run(settings)[1] == first  # nothing appended twice


def test_a_stage_runs_under_the_state_memory_limit_which_is_not_in_the_config_hash(tmp_path):
    from flows.stages.hollywood.common import hollywood_config_hash

    settings = load_settings(home=tmp_path)
    ctx = SimpleNamespace(settings=settings)
    assert settings.hollywood.state_memory_limit == "64MiB"
    with bo.VarietyAggregateStage().open_state(ctx) as con:
        assert con.execute("SELECT current_setting('memory_limit')").fetchone()[0] in ("64.0 MiB", "64.0MiB")
    before = hollywood_config_hash(settings)
    settings.hollywood.state_memory_limit = None
    assert hollywood_config_hash(settings) == before  # how much memory DuckDB may use changes no output
    with bo.VarietyAggregateStage().open_state(ctx) as con:  # None: DuckDB's default
        assert con.execute("SELECT current_setting('memory_limit')").fetchone()[0] not in ("64.0 MiB", "64.0MiB")
    with pytest.raises(ValueError):
        type(settings.hollywood)(state_memory_limit="a lot")
