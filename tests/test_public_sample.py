"""The release's public sample as seed 002 releases it (warehouse.public_sample; issue 18 point 5d):
stratified, every stratum covered, the rest held back, small strata merged deterministically, the
share a setting, the manifest recording strata, share and counts per stratum."""

from __future__ import annotations

import json

import polars as pl
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from cinesub.settings import ReleaseSettings
from warehouse.public_sample import (
    cell_order,
    manifest_section,
    merge_cells,
    public_count,
    select_public,
    strata_cells,
    stratum_min_size,
    stratum_summary,
)
from warehouse.splits import SplitError, merge_registry, stratum_key

STRATA = ("decade", "age_suitability")
SEED = 20260929
AGES = ("6+", "8+", "10+", "12+", "13+", "14+", "15+", "16+", "17+", "18+")
YEARS = (1975, 1984, 1993, 2004, 2012, 2021)


def make_films(sizes: dict[tuple[int, str], int], start: int = 0) -> pl.DataFrame:
    rows, k = [], start
    for (year, age), n in sorted(sizes.items()):
        for _ in range(n):
            rows.append({"imdb_id": f"tt{k:07d}", "year": year, "age_suitability": age})
            k += 1
    return pl.DataFrame(rows, schema={"imdb_id": pl.String, "year": pl.Int32, "age_suitability": pl.String})


def publics(df: pl.DataFrame) -> set[str]:
    return set(df.filter(pl.col("split") == "public")["imdb_id"].to_list())


# ---------------------------------------------------------------- counts and sizes


def test_public_count_covers_and_holds_back():
    assert [public_count(n, 0.25) for n in (0, 1, 2, 3, 4, 5, 6, 7, 10, 27)] == [0, 1, 1, 1, 1, 1, 2, 2, 3, 7]
    assert public_count(2, 0.9) == 1 and public_count(10, 0.99) == 9  # never all of a stratum
    assert public_count(40, 0.01) == 1  # never none of it
    assert public_count(10, 0.25) == 3  # 2.5 rounds half up on the decimal value


@given(st.integers(min_value=2, max_value=500), st.floats(min_value=0.001, max_value=0.999))
def test_public_count_property(n, share):
    assert 1 <= public_count(n, share) <= n - 1


def test_min_stratum_size_follows_the_share():
    assert [stratum_min_size(s) for s in (0.25, 0.2, 0.3, 0.5, 0.9, 0.1)] == [4, 5, 4, 2, 2, 10]
    assert stratum_min_size(0.25, 7) == 7
    for bad in (0.0, 1.0, -0.1, 1.5):
        with pytest.raises(SplitError) as e:
            stratum_min_size(bad)
        assert e.value.reason == "public_bad_share"


# ---------------------------------------------------------------- merging


def test_cell_order_is_natural():
    cells = ["decade=1990s|age_suitability=13+", "decade=1990s|age_suitability=6+",
             "decade=unknown|age_suitability=6+", "decade=1980s|age_suitability=unknown",
             "decade=1980s|age_suitability=10+"]
    assert sorted(cells, key=cell_order) == [
        "decade=1980s|age_suitability=10+", "decade=1980s|age_suitability=unknown",
        "decade=1990s|age_suitability=6+", "decade=1990s|age_suitability=13+",
        "decade=unknown|age_suitability=6+"]


def test_merge_rule_by_hand():
    c = lambda d, a: f"decade={d}|age_suitability={a}"  # noqa: E731
    sizes = {c("1970s", "13+"): 1, c("1970s", "15+"): 1, c("1980s", "8+"): 3, c("1980s", "16+"): 1,
             c("1990s", "6+"): 5, c("1990s", "10+"): 4}
    got = merge_cells(sizes, 4)
    # 1970s/13+ (smallest, first) merges with its only neighbour 1970s/15+ (size 2, still small);
    # 1980s/16+ (1) prefers 1980s/8+ (same decade) over 1990s/6+; then the 1970s pair (2) merges
    # with the 1980s run (4): the only neighbour left of it. 1990s cells are big enough.
    assert got == {
        f"{c('1970s', '13+')} .. {c('1980s', '16+')}": [c("1970s", "13+"), c("1970s", "15+"),
                                                        c("1980s", "8+"), c("1980s", "16+")],
        c("1990s", "6+"): [c("1990s", "6+")],
        c("1990s", "10+"): [c("1990s", "10+")],
    }
    # order of the input dict does not matter
    assert merge_cells(dict(reversed(list(sizes.items()))), 4) == got
    # one stratum in all, even if it is small: nothing to merge with
    assert merge_cells({c("1970s", "13+"): 2, c("1980s", "8+"): 1}, 10) == {
        f"{c('1970s', '13+')} .. {c('1980s', '8+')}": [c("1970s", "13+"), c("1980s", "8+")]}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.tuples(st.sampled_from(YEARS), st.sampled_from(AGES)),
                       st.integers(min_value=1, max_value=9), min_size=1, max_size=25),
       st.sampled_from((0.1, 0.2, 0.25, 0.3, 0.5)))
def test_every_stratum_covered_and_holds_back(sizes, share):
    films = make_films(sizes)
    out = select_public(films, None, strata=STRATA, share=share, seed=SEED)
    cells = strata_cells(films, STRATA, share)
    order = sorted({stratum_key(r, STRATA) for r in films.to_dicts()}, key=cell_order)
    flat = [cell for name in sorted(cells, key=lambda s: cell_order(cells[s][0])) for cell in cells[name]]
    assert flat == order  # a partition of the cells into consecutive runs
    rows = stratum_summary(out, share=share, cells=cells)
    assert sum(r["n"] for r in rows) == films.height
    for r in rows:
        assert r["public"] == public_count(r["n"], share) and r["drift"] == 0
        assert r["public"] >= 1
        if films.height >= 2:
            assert r["heldback"] >= 1, r
        if len(rows) > 1:
            assert r["n"] >= stratum_min_size(share), r


# ---------------------------------------------------------------- the sample's shape


def _sample_like() -> pl.DataFrame:
    """27 films spread over 6 decades and 10 ages, most cells with one film (as the sample world)."""
    sizes: dict[tuple[int, str], int] = {}
    for k in range(27):
        key = (YEARS[k % 6], AGES[(k * 7) % 10])
        sizes[key] = sizes.get(key, 0) + 1
    return make_films(sizes)


def test_sample_like_release_is_not_mostly_public():
    films = _sample_like()
    cells = {stratum_key(r, STRATA) for r in films.to_dicts()}
    assert len(cells) >= 20  # the old per-cell max(1, round(0.2·n)) made ~every film public
    out = select_public(films, None, strata=STRATA, share=0.25, seed=SEED)
    rows = stratum_summary(out, share=0.25, cells=strata_cells(films, STRATA, 0.25))
    n_public = len(publics(out))
    assert n_public == sum(public_count(r["n"], 0.25) for r in rows)
    assert 5 <= n_public <= 9 and all(r["heldback"] >= 1 and r["public"] >= 1 for r in rows)
    # the share is a setting: a larger share publishes more, still holding back in each stratum
    more = select_public(films, None, strata=STRATA, share=0.5, seed=SEED)
    assert len(publics(more)) > n_public
    assert all(r["heldback"] >= 1 for r in stratum_summary(more, share=0.5))


# ---------------------------------------------------------------- deterministic and frozen


def test_deterministic_and_seeded():
    films = _sample_like()
    base = select_public(films, None, strata=STRATA, share=0.25, seed=SEED)
    assert select_public(films.reverse(), None, strata=STRATA, share=0.25, seed=SEED).equals(base)
    assert select_public(films.to_arrow(), None, strata=STRATA, share=0.25, seed=SEED).equals(base)
    other = select_public(films, None, strata=STRATA, share=0.25, seed=SEED + 1)
    assert len(publics(other)) == len(publics(base)) and publics(other) != publics(base)


def test_rebuild_is_stable_and_new_films_never_move_old_ones():
    films = _sample_like()
    first = select_public(films, None, strata=STRATA, share=0.25, seed=SEED)
    registry = merge_registry(None, first)
    again = select_public(films, registry, strata=STRATA, share=0.25, seed=SEED)
    assert again.drop("new").equals(first.drop("new")) and not again["new"].any()
    # more films shift the merge boundaries; registered films keep their split
    added = make_films({(1993, "13+"): 6, (2021, "6+"): 3}, start=5000)
    out = select_public(pl.concat([films, added]), registry, strata=STRATA, share=0.25, seed=SEED)
    before = dict(zip(first["imdb_id"], first["split"]))
    assert all(before[i] == s for i, s, new in out.select("imdb_id", "split", "new").iter_rows() if not new)
    assert set(out.filter(pl.col("new"))["imdb_id"]) == set(added["imdb_id"])
    for _, grp in out.group_by("stratum"):  # new films only fill the open public slots of their stratum
        old_public = grp.filter(~pl.col("new") & (pl.col("split") == "public")).height
        new = grp.filter(pl.col("new"))
        want = min(new.height, max(0, public_count(grp.height, 0.25) - old_public))
        assert new.filter(pl.col("split") == "public").height == want


def test_bad_share_and_min_size_have_reason_codes():
    films = _sample_like()
    with pytest.raises(SplitError) as e:
        select_public(films, None, strata=STRATA, share=1.0, seed=SEED)
    assert e.value.reason == "public_bad_share"
    with pytest.raises(SplitError) as e:
        select_public(films, None, strata=STRATA, share=0.25, seed=SEED, min_stratum_size=0)
    assert e.value.reason == "public_bad_min_stratum"


# ---------------------------------------------------------------- settings and manifest


def test_settings():
    rs = ReleaseSettings()
    assert rs.public_share == 0.25 and rs.public_min_stratum is None
    assert tuple(rs.split_strata) == STRATA
    assert ReleaseSettings(public_share=0.4, public_min_stratum=6).public_min_stratum == 6
    for bad in ({"public_share": 0}, {"public_share": 1}, {"public_min_stratum": 1}, {"split_fraction": 0.2}):
        with pytest.raises(ValidationError):
            ReleaseSettings(**bad)


def test_manifest_section_records_strata_share_and_counts():
    films = _sample_like()
    out = select_public(films, None, strata=STRATA, share=0.25, seed=SEED)
    cells = strata_cells(films, STRATA, 0.25)
    sec = json.loads(json.dumps(manifest_section(out, strata=STRATA, share=0.25, seed=SEED, min_size=4,
                                                 cells=cells)))
    assert sec["strata"] == list(STRATA) and sec["public_share"] == 0.25 and sec["seed"] == SEED
    assert sec["min_stratum_size"] == 4 and "merge" in sec["merge_rule"]
    assert sec["public"] + sec["heldback"] == films.height
    per = sec["per_stratum"]
    assert {r["stratum"] for r in per} == set(out["stratum"].to_list())
    assert sum(r["public"] for r in per) == sec["public"] and sum(r["heldback"] for r in per) == sec["heldback"]
    assert sorted(c for r in per for c in r["cells"]) == sorted({stratum_key(r, STRATA) for r in films.to_dicts()})


def test_release_split_manifest_from_a_films_table():
    """warehouse.release builds the manifest's ``splits`` from the release's films table."""
    from warehouse.release import _split_manifest
    from warehouse.registry import strata_attributes

    films = _sample_like()
    table = pa.table({"imdb_id": films["imdb_id"].to_list(), "year": films["year"].to_list(),
                      "age_suitability": films["age_suitability"].to_list(),
                      "primary_genre": ["Drama"] * films.height, "country": ["France"] * films.height,
                      "title": [f"T{i}" for i in range(films.height)]})
    rs = ReleaseSettings()
    out = select_public(strata_attributes(table), None, strata=STRATA, share=rs.public_share, seed=rs.split_seed)
    sec = _split_manifest(table, out.select("imdb_id", "stratum", "split", "assigned_seed"), rs)
    assert sec["public"] == len(publics(out)) and sec["public_share"] == 0.25
    assert all(r["public"] >= 1 and r["heldback"] >= 1 for r in sec["per_stratum"])
