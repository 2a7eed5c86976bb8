"""Box-office aggregation rules (SPEC B1): sql/boxoffice_weekly.sql and sql/boxoffice_yearly.sql
through validators.boxoffice_ranking.aggregate, one test per rule on hand-made tuples with hand-computed
totals; plus the real city map (realdata)."""

from __future__ import annotations

import csv
import datetime as dt

import duckdb
import pyarrow as pa
import pytest

from validators.boxoffice_ranking import REASONS, aggregate, exclusion_counts

D1 = dt.date(1926, 5, 5)
D2 = dt.date(1926, 5, 12)
D3 = dt.date(1927, 1, 5)

CITYMAP = [
    {"original": "Chicago", "normalized": "Chicago", "state": "IL", "country": "USA"},
    {"original": "Broadway", "normalized": "New York", "state": "NY", "country": "USA"},
    {"original": "Hollywood", "normalized": "Los Angeles", "state": "CA", "country": "USA"},
    {"original": "Los Angeles", "normalized": "Los Angeles", "state": "CA", "country": "USA"},
    {"original": "Toronto", "normalized": "Toronto", "state": "ON", "country": "Canada"},
    {"original": "Nationwide", "normalized": "Nationwide", "state": None, "country": "NA"},
    {"original": "Nowhere Ville", "normalized": "Nowhere", "state": None, "country": ""},
]


def t(movie, gross, *, theater="Capitol", city="Chicago", week="last week", date=D1, page=1,
      item="variety82-1926-05"):
    return {"issue_date": date, "item_id": item, "page": page, "extractor": "gold", "model": None,
            "theater": theater, "city": city, "movie": movie, "week": week, "gross": gross,
            "confidence": None}


def run(tuples, aliases=None, citymap=CITYMAP, **kw):
    con = duckdb.connect()
    try:
        return aggregate(con, pa.Table.from_pylist(tuples), pa.Table.from_pylist(citymap),
                         None if aliases is None else pa.Table.from_pylist(aliases), **kw)
    finally:
        con.close()


def weekly(result):
    return {(r["key"], r["issue_date"]): r["gross"] for r in result["weekly"].to_pylist()}


def totals(result):
    return {(r["year"], r["key"]): r["box_office"] for r in result["yearly"].to_pylist()}


def reasons(result):
    return sorted((r["movie"], r["reason"]) for r in result["excluded"].to_pylist())


def counted(result):
    return sum(result["weekly"].column("n_tuples").to_pylist())


def test_only_last_week_grosses_count():
    res = run([t("Ben-Hur", 5000, week="this week"), t("Ben-Hur", 3000, week="last week"),
               t("Ben-Hur", 7000, week="next week"),
               t("Ben-Hur", 1000, week=" Last  Week", theater="Roxy")])
    # ' Last  Week' differs only in case and spaces: it counts; this/next week do not
    assert weekly(res) == {("ben-hur", D1): 4000.0}
    assert reasons(res) == [("Ben-Hur", "not_last_week")] * 2
    assert counted(res) + res["excluded"].num_rows == 4


def test_non_us_cities_excluded():
    res = run([t("A", 1000, city="Chicago"), t("A", 2000, city="Toronto", theater="Loew's"),
               t("A", 4000, city="Nationwide", theater="All")])
    assert weekly(res) == {("a", D1): 1000.0}
    rows = {r["city"]: r for r in res["excluded"].to_pylist()}
    assert rows["Toronto"]["reason"] == "non_us_city" and rows["Toronto"]["country"] == "Canada"
    assert rows["Nationwide"]["reason"] == "non_us_city"


def test_unknown_city_excluded_and_audited():
    tuples = [t("A", 1000, city="chicago "), t("A", 2000, city="Atlantis"),
              t("B", 3000, city="Atlantis", week="this week"),
              t("A", 500, city="Nowhere  Ville")]  # in the map, but with an empty country
    res = run(tuples)
    # the city lookup folds case and whitespace: 'chicago ' is Chicago
    assert weekly(res) == {("a", D1): 1000.0}
    assert reasons(res) == [("A", "unknown_city"), ("A", "unknown_city"), ("B", "not_last_week")]
    audit = {r["city"]: (r["n_tuples"], r["n_last_week"])
             for r in res["unknown_cities"].to_pylist()}
    assert audit == {"Atlantis": (2, 1), "Nowhere  Ville": (1, 1)}
    assert exclusion_counts(res["excluded"]) == dict.fromkeys(REASONS, 0) | {
        "unknown_city": 2, "not_last_week": 1}
    assert counted(res) + res["excluded"].num_rows == len(tuples)


def test_shared_gross_divided_among_films_of_one_theater_city_on_a_page():
    res = run([
        # one gross printed for three films at the Strand, Chicago, page 1
        t("A", 9000, theater="Strand"), t("B", 9000, theater="Strand"),
        t("C", 9000, theater="Strand"),
        # another theater on the same page: its own single film
        t("D", 9000, theater="Capitol"),
        # the Strand in another city on the same page is another theater-city
        t("E", 9000, theater="Strand", city="Broadway"),
        # the Strand, Chicago on another page of the issue: divided there only
        t("F", 8000, theater="Strand", page=2), t("G", 8000, theater="Strand", page=2),
        # the this-week figure of the Strand does not enter the divisor
        t("H", 9000, theater="Strand", week="this week"),
        # the paper's fractional weekly values: 83500 / 3
        *(t(m, 83500, theater="Roxy", city="Broadway") for m in ("X", "Y", "Z")),
    ])
    assert weekly(res) == {
        ("a", D1): 3000.0, ("b", D1): 3000.0, ("c", D1): 3000.0, ("d", D1): 9000.0,
        ("e", D1): 9000.0, ("f", D1): 4000.0, ("g", D1): 4000.0,
        ("x", D1): 27833.333333333332, ("y", D1): 27833.333333333332,
        ("z", D1): 27833.333333333332,
    }


def test_shared_divisor_counts_every_last_week_film_of_the_theater():
    # the divisor is the number of last-week tuples of the theater-city on the page (as in the
    # reference scripts), including one whose gross is missing
    res = run([t("A", 8000, theater="Strand"), t("B", None, theater="Strand")])
    assert weekly(res) == {("a", D1): 4000.0}
    assert reasons(res) == [("B", "null_gross")]


def test_hollywood_showcase_excluded_other_showcases_kept():
    res = run([
        t("Star Trek", 17060837, theater="SHOWCASE:857", city="Hollywood"),  # national total
        t("Star Trek", 120000, theater="SHOWCASE:12", city="Los Angeles"),   # local houses
        t("Star Trek", 90000, theater="SHOWCASE:5", city="Broadway"),
        t("Star Trek", 30000, theater="Egyptian", city="Hollywood"),         # a Hollywood house
        t("Alien", 4758631, theater="Showcase:91", city="Hollywood"),
    ])
    assert weekly(res) == {("star trek", D1): 240000.0}
    assert reasons(res) == [("Alien", "showcase_hollywood"), ("Star Trek", "showcase_hollywood")]


def test_nonpositive_and_null_gross_add_nothing():
    res = run([t("A", 0), t("B", None, theater="Roxy"), t("C", 500, theater="Strand")])
    assert weekly(res) == {("c", D1): 500.0}
    assert reasons(res) == [("A", "nonpositive_gross"), ("B", "null_gross")]


def test_alias_mapping_and_lower_cased_fallback():
    aliases = [
        {"year": 1926, "alias": "Gone", "imdb": "tt0031381", "decision": "auto"},
        {"year": 1926, "alias": "Gone With Wind", "imdb": "tt0031381", "decision": "accepted"},
        {"year": 1926, "alias": "Big Parade", "imdb": "tt0015624", "decision": "review"},
        {"year": 1927, "alias": "Ben-Hur", "imdb": "tt0016641", "decision": "auto"},
        {"year": 1926, "alias": "Cleopatra", "imdb": "None", "decision": "curated"},
    ]
    res = run([t("Gone", 1000, theater="A"), t("Gone With Wind", 2000, theater="B"),
               t("Big Parade", 300, theater="C"), t("Ben-Hur", 40, theater="D"),
               t("  CLEOPATRA ", 5, theater="E"), t("The  Big\tParade", 7, theater="F")],
              aliases)
    assert weekly(res) == {
        ("tt0031381", D1): 3000.0,       # two aliases of one film summed
        ("big parade", D1): 300.0,       # a suggestion awaiting review is not a mapping
        ("ben-hur", D1): 40.0,           # mapped in 1927, not in 1926
        ("cleopatra", D1): 5.0,          # 'None' is no IMDb id
        ("the big parade", D1): 7.0,     # lower-cased, whitespace collapsed
    }
    kinds = {r["key"]: r["key_kind"] for r in res["yearly"].to_pylist()}
    assert kinds["tt0031381"] == "imdb" and kinds["big parade"] == "title"


def test_yearly_sum_and_rank():
    res = run([
        t("A", 1000, date=D1), t("A", 2500, date=D2), t("B", 3000, date=D1, theater="Oriental"),
        t("C", 900, date=D1, theater="Strand"), t("D", 900, date=D1, theater="Strand"),
        t("E", 1800, date=D2, theater="Roxy"),
        t("A", 50, date=D3),
    ])
    assert totals(res) == {(1926, "a"): 3500.0, (1926, "b"): 3000.0, (1926, "c"): 450.0,
                           (1926, "d"): 450.0, (1926, "e"): 1800.0, (1927, "a"): 50.0}
    ranks = [(r["year"], r["rank"], r["key"]) for r in res["yearly"].to_pylist()]
    # ties (c, d) broken by key; ranks restart each year
    assert ranks == [(1926, 1, "a"), (1926, 2, "b"), (1926, 3, "e"), (1926, 4, "c"),
                     (1926, 5, "d"), (1927, 1, "a")]
    weeks_a = {r["key"]: r["n_weeks"] for r in res["yearly"].to_pylist() if r["year"] == 1926}
    assert weeks_a["a"] == 2 and weeks_a["b"] == 1


def test_top100_cut_is_exactly_100_with_ties_broken_by_key():
    # 97 films with distinct grosses, then 5 tied films straddling the cut at rank 100
    tuples = [t(f"m{i:03d}", 10000 - i, theater=f"T{i}") for i in range(97)]
    tuples += [t(name, 500, theater=f"U{name}") for name in ("zeta", "alpha", "eta", "beta", "mu")]
    tuples += [t("x", 1, theater="V", date=D3)]
    res = run(tuples)
    top = res["top100"].to_pylist()
    y1926 = [r for r in top if r["year"] == 1926]
    assert len(y1926) == 100 and [r["rank"] for r in y1926] == list(range(1, 101))
    assert [r["key"] for r in y1926[97:]] == ["alpha", "beta", "eta"]
    assert [r["key"] for r in top if r["year"] == 1927] == ["x"]
    assert res["yearly"].num_rows == 103
    again = run(list(reversed(tuples)))
    assert again["top100"].to_pylist() == top
    assert [r["key"] for r in run(tuples, top_n=3)["top100"].to_pylist()] == [
        "m000", "m001", "m002", "x"]


def test_missing_required_column_is_an_error():
    rows = [{k: v for k, v in t("A", 1).items() if k != "week"}]
    with pytest.raises(ValueError, match="week"):
        run(rows)


def test_optional_columns_may_be_absent():
    rows = [{k: t("A", 10)[k] for k in ("issue_date", "theater", "city", "movie", "week", "gross")}]
    assert weekly(run(rows)) == {("a", D1): 10.0}


# ---------------------------------------------------------------------------------------------
# real data


@pytest.fixture(scope="module")
def real_citymap(realdata_dir) -> pa.Table:
    con = duckdb.connect()
    try:
        path = realdata_dir / "variety" / "citymap.csv"
        return con.sql(f"SELECT * FROM read_csv('{path}', header = true, all_varchar = true)"
                       ).to_arrow_table()
    finally:
        con.close()


@pytest.mark.realdata
def test_real_citymap_classifies_cities(real_citymap):
    us = ["Broadway", "Brooklyn", "N.Y.", "Hollywood", "Pittsburg", "Washington, D. C.",
          "Portland (Ore.)", "Lincoln, Neb."]
    foreign = ["Montreal", "Toronto", "London", "Havana", "Nationwide", "Buenos Aires"]
    tuples = [t(f"film {i}", 1000 + i, theater=f"T{i}", city=c) for i, c in enumerate(us + foreign)]
    tuples.append(t("film x", 5, theater="TX", city="Springfield"))
    con = duckdb.connect()
    try:
        res = aggregate(con, pa.Table.from_pylist(tuples), real_citymap)
        normalized = dict(con.sql("SELECT city, city_normalized FROM bo_counted").fetchall())
    finally:
        con.close()
    assert counted(res) == len(us)
    assert normalized["Broadway"] == "New York" and normalized["Brooklyn"] == "New York"
    assert normalized["Hollywood"] == "Los Angeles" and normalized["Pittsburg"] == "Pittsburgh"
    excluded = {r["city"]: (r["reason"], r["country"]) for r in res["excluded"].to_pylist()}
    assert excluded["Montreal"] == ("non_us_city", "Canada")
    assert excluded["Toronto"] == ("non_us_city", "Canada")
    assert excluded["London"] == ("non_us_city", "UK")
    assert excluded["Nationwide"] == ("non_us_city", "NA")  # 'NA' read as text, not null
    assert excluded["Springfield"] == ("unknown_city", None)
    assert {r["city"] for r in res["unknown_cities"].to_pylist()} == {"Springfield"}


@pytest.mark.realdata
def test_real_weekly_fractions_are_shared_grosses(realdata_dir, real_citymap):
    # fractional values of the released weekly table that are one gross split k ways come back
    # bit-for-bit from k films sharing that gross at one Broadway theater
    with (realdata_dir / "variety" / "weekly_sample.tsv").open(newline="") as fh:
        values = [float(r["box_office"]) for r in csv.DictReader(fh, delimiter="\t")]
    cases = []
    for v in values:
        if v.is_integer():
            continue
        for k in range(2, 9):
            gross = round(v * k)
            if gross / k == v:
                cases.append((gross, k, v))
                break
    assert (83500, 3, 27833.333333333332) in cases and len(cases) >= 5
    tuples = [t(f"c{i} film {j}", gross, theater=f"House {i}", city="Broadway")
              for i, (gross, k, _) in enumerate(cases) for j in range(k)]
    got = weekly(run(tuples, citymap=real_citymap.to_pylist()))
    for i, (_, k, v) in enumerate(cases):
        for j in range(k):
            assert got[(f"c{i} film {j}", D1)] == v


def test_sql_inputs_read_in_place_give_the_arrow_result():
    """define_views over tables of the connection (what the variety-aggregate stage does, so no
    tuple passes through Python) gives exactly what aggregate() gives on the same rows as Arrow."""
    from validators.boxoffice_ranking import Sql, define_views, output_query

    tuples = [t("Grand Hotel", 9000), t("Grand Hotel", 3000, week="first week"), t("Tarzan", 6000, city="Toronto"),
              t("Tarzan", 4500, theater="Roxy", date=D2), t("Freaks", 1200, page=2)]
    aliases = [{"year": 1926, "alias": "Tarzan", "imdb": "tt0023551", "decision": "auto"}]
    expected = run(tuples, aliases)
    con = duckdb.connect()
    try:
        con.register("_t", pa.Table.from_pylist(tuples))
        con.execute("CREATE TABLE state_tuples AS SELECT * FROM _t")
        con.register("_a", pa.Table.from_pylist(aliases))
        con.execute("CREATE TABLE state_aliases AS SELECT * FROM _a")
        define_views(con, Sql("SELECT * FROM state_tuples WHERE extractor = 'gold'"), pa.Table.from_pylist(CITYMAP),
                     Sql("state_aliases"))
        got = {name: con.sql(output_query(name)).to_arrow_table().to_pylist() for name in expected}
    finally:
        con.close()
    assert got == {name: table.to_pylist() for name, table in expected.items()}
    assert got["weekly"] and got["excluded"]
    with pytest.raises(ValueError, match="missing column"):
        define_views(duckdb.connect(), Sql("SELECT 1 AS issue_date"), pa.Table.from_pylist(CITYMAP))
