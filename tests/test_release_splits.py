"""Frozen stratified public / held-back splits (warehouse.splits keys and registry, the frozen
per-stratum fill of warehouse.public_sample, SPEC C).

These tests exercise the frozen fill on *unmerged* cells (``min_stratum_size=1``) at a share of
0.2, the numbers they were written for; the merging of small strata, the default share and the
held-back guarantee are tested in tests/test_public_sample.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from functools import partial

import polars as pl
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from warehouse.public_sample import public_count, select_public, stratum_summary
from warehouse.splits import SplitError, merge_registry, stratum_key

#: the frozen fill per cell (no merging) at share 0.2 unless a test passes another share
assign_splits = partial(select_public, min_stratum_size=1, share=0.2)


def split_summary(assignments: pl.DataFrame, *, share: float = 0.2) -> pl.DataFrame:
    return pl.DataFrame(stratum_summary(assignments, share=share)).drop("cells").sort("stratum")

STRATA = ("decade", "age_suitability")
SEED = 20260929
AGES = ("7+", "10+", "13+", "15+", "17+")


def make_films(sizes: dict[tuple[int, str], int], start: int = 0) -> pl.DataFrame:
    """``sizes``: {(year, age): n films}; ids are tt + 7 digits, unique across calls via start."""
    rows, k = [], start
    for (year, age), n in sorted(sizes.items()):
        for _ in range(n):
            rows.append({"imdb_id": f"tt{k:07d}", "year": year, "age_suitability": age,
                         "genres": json.dumps(["Drama", "Comedy"] if k % 2 else ["Action"])})
            k += 1
    return pl.DataFrame(rows, schema={"imdb_id": pl.String, "year": pl.Int32,
                                      "age_suitability": pl.String, "genres": pl.String})


def splits_of(df: pl.DataFrame) -> dict[str, str]:
    return dict(zip(df["imdb_id"].to_list(), df["split"].to_list()))


# ---------------------------------------------------------------- stratum_key


def test_stratum_key_decade_and_age():
    assert stratum_key({"year": 1994, "age_suitability": "13+"}, STRATA) == "decade=1990s|age_suitability=13+"
    assert stratum_key({"releaseYear": 2000}, ("decade",)) == "decade=2000s"
    assert stratum_key({"decade": "1950s", "year": 1999}, ("decade",)) == "decade=1950s"


def test_stratum_key_missing_values_are_unknown():
    assert stratum_key({"year": None, "age_suitability": ""}, STRATA) == "decade=unknown|age_suitability=unknown"
    assert stratum_key({}, ("primary_genre", "country", "studio")) == (
        "primary_genre=unknown|country=unknown|studio=unknown")


def test_stratum_key_derived_attributes():
    row = {"genres": '["Horror", "Drama"]', "countries_of_origin": ["France", "Italy"], "studio": "MGM"}
    assert stratum_key(row, ("primary_genre", "country", "studio")) == (
        "primary_genre=Horror|country=France|studio=MGM")
    assert stratum_key({"genres": ["Western"], "countriesOfOrigin": '["Mexico"]'}, ("primary_genre", "country")) == (
        "primary_genre=Western|country=Mexico")
    # an explicit column wins over the derivation; separators in values cannot break the key
    assert stratum_key({"primary_genre": "Sci|Fi", "genres": ["Drama"]}, ("primary_genre",)) == "primary_genre=Sci/Fi"


# ---------------------------------------------------------------- fresh assignment


def test_public_target_formula():
    assert [public_count(n, 0.2) for n in (1, 2, 3, 4, 7, 8, 12, 13, 100)] == [1, 1, 1, 1, 1, 2, 2, 3, 20]
    assert public_count(10, 0.15) == 2  # 1.5 rounds half up on the decimal value
    assert public_count(5, 0.0) == 1  # max(1, …)


def test_fresh_assignment_counts_and_columns():
    films = make_films({(1994, "13+"): 12, (1994, "7+"): 3, (2003, "13+"): 26})
    out = assign_splits(films, None, strata=STRATA, share=0.2, seed=SEED)
    assert out.columns == ["imdb_id", "stratum", "split", "assigned_seed", "new"]
    assert out.height == films.height and out["new"].all()
    assert set(out["assigned_seed"].to_list()) == {SEED}
    summary = split_summary(out, share=0.2)
    got = {r["stratum"]: (r["n"], r["public"], r["heldback"], r["target"], r["drift"]) for r in summary.to_dicts()}
    assert got == {
        "decade=1990s|age_suitability=13+": (12, 2, 10, 2, 0),
        "decade=1990s|age_suitability=7+": (3, 1, 2, 1, 0),
        "decade=2000s|age_suitability=13+": (26, 5, 21, 5, 0),
    }


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.tuples(st.sampled_from((1950, 1971, 1988, 1995, 2012)), st.sampled_from(AGES)),
                       st.integers(min_value=1, max_value=60), min_size=1, max_size=8))
def test_fresh_public_count_per_stratum_property(sizes):
    out = assign_splits(make_films(sizes), None, strata=STRATA, share=0.2, seed=SEED)
    for r in split_summary(out).to_dicts():
        assert r["public"] == public_count(r["n"], 0.2), r
        assert r["public"] + r["heldback"] == r["n"]
        assert r["public"] >= 1 and (r["heldback"] >= 1 or r["n"] == 1), r


def test_accepts_pyarrow_and_is_order_independent():
    films = make_films({(1994, "13+"): 20, (2003, "15+"): 9})
    base = assign_splits(films, None, strata=STRATA, share=0.2, seed=SEED)
    shuffled = films.sample(fraction=1.0, shuffle=True, seed=3)
    assert shuffled["imdb_id"].to_list() != films["imdb_id"].to_list()
    assert assign_splits(shuffled, None, strata=STRATA, share=0.2, seed=SEED).equals(base)
    assert assign_splits(films.to_arrow(), None, strata=STRATA, share=0.2, seed=SEED).equals(base)
    assert assign_splits(films.reverse(), None, strata=STRATA, share=0.2, seed=SEED).equals(base)


def test_different_seed_different_choice():
    films = make_films({(1994, "13+"): 50})
    a = assign_splits(films, None, strata=STRATA, share=0.2, seed=1)
    b = assign_splits(films, None, strata=STRATA, share=0.2, seed=2)
    pa_ = set(a.filter(pl.col("split") == "public")["imdb_id"])
    pb = set(b.filter(pl.col("split") == "public")["imdb_id"])
    assert len(pa_) == len(pb) == 10 and pa_ != pb


def test_independent_of_python_hash_seed(tmp_path):
    code = (
        "import sys, json; sys.path.insert(0, sys.argv[1]);"
        "import polars as pl; from warehouse.public_sample import select_public;"
        "f = pl.DataFrame({'imdb_id': [f'tt{i:07d}' for i in range(40)],"
        " 'year': [1990 + i % 3 * 10 for i in range(40)], 'age_suitability': ['13+'] * 40});"
        "o = select_public(f, None, strata=('decade', 'age_suitability'), share=0.2, seed=5);"
        "print(json.dumps(o.to_dicts()))"
    )
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    outs = []
    for hs in ("1", "987"):
        env = dict(os.environ, PYTHONHASHSEED=hs)
        outs.append(subprocess.run([sys.executable, "-c", code, root], env=env, check=True,
                                   capture_output=True, text=True).stdout)
    assert outs[0] == outs[1] and json.loads(outs[0])


# ---------------------------------------------------------------- frozen


def test_reassign_with_previous_is_identical():
    films = make_films({(1994, "13+"): 17, (2003, "15+"): 6})
    first = assign_splits(films, None, strata=STRATA, share=0.2, seed=SEED)
    registry = merge_registry(None, first)
    again = assign_splits(films, registry, strata=STRATA, share=0.2, seed=SEED)
    assert splits_of(again) == splits_of(first)
    assert not again["new"].any()
    # even with another seed and fraction: registered films never move, keep their seed
    other = assign_splits(films, registry, strata=STRATA, share=0.9, seed=999)
    assert splits_of(other) == splits_of(first)
    assert set(other["assigned_seed"].to_list()) == {SEED}


def test_added_films_fill_only_open_slots():
    old = make_films({(1994, "13+"): 4, (2003, "15+"): 10})
    first = assign_splits(old, None, strata=STRATA, share=0.2, seed=SEED)
    registry = merge_registry(None, first)
    # 1990s/13+: 4 → 14 films: target 1 → 3, so 2 open slots; 2000s/15+: 10 → 12: target 2 → 2, none open
    added = make_films({(1994, "13+"): 10, (2003, "15+"): 2}, start=1000)
    out = assign_splits(pl.concat([old, added]), registry, strata=STRATA, share=0.2, seed=SEED)
    for i, s in splits_of(first).items():
        assert splits_of(out)[i] == s
    new = out.filter(pl.col("new"))
    assert set(new["imdb_id"]) == set(added["imdb_id"])
    pub = new.filter(pl.col("split") == "public")
    assert pub.group_by("stratum").len().sort("stratum").to_dicts() == [
        {"stratum": "decade=1990s|age_suitability=13+", "len": 2}]
    assert split_summary(out)["drift"].to_list() == [0, 0]


def test_new_films_chosen_by_seeded_rank_among_new_only():
    old = make_films({(1994, "13+"): 5})
    registry = merge_registry(None, assign_splits(old, None, strata=STRATA, seed=SEED))
    added = make_films({(1994, "13+"): 25}, start=500)
    a = assign_splits(pl.concat([old, added]), registry, strata=STRATA, seed=SEED)
    b = assign_splits(pl.concat([added, old]).reverse(), registry, strata=STRATA, seed=SEED)
    assert a.equals(b)
    c = assign_splits(pl.concat([old, added]), registry, strata=STRATA, seed=SEED + 1)
    pick = lambda df: set(df.filter(pl.col("new") & (pl.col("split") == "public"))["imdb_id"])  # noqa: E731
    assert len(pick(a)) == len(pick(c)) == 5 and pick(a) != pick(c)  # target 6, 1 already public


def test_removed_films_leave_the_rest_unchanged_and_stay_registered():
    films = make_films({(1994, "13+"): 15, (2003, "15+"): 8})
    first = assign_splits(films, None, strata=STRATA, seed=SEED)
    registry = merge_registry(None, first)
    public = first.filter(pl.col("split") == "public")["imdb_id"].to_list()
    gone = set(public[:2]) | {first.filter(pl.col("split") == "heldback")["imdb_id"][0]}
    kept = films.filter(~pl.col("imdb_id").is_in(list(gone)))
    out = assign_splits(kept, registry, strata=STRATA, seed=SEED)
    assert out.height == films.height - 3 and not out["new"].any()
    assert all(splits_of(out)[i] == s for i, s in splits_of(first).items() if i not in gone)
    # the summary shows the drift honestly (a public film was withdrawn from a stratum)
    assert min(split_summary(out)["drift"].to_list()) < 0
    # withdrawn films stay in the registry and come back with their old split
    reg2 = merge_registry(registry, out)
    assert reg2.equals(registry)
    back = assign_splits(films, reg2, strata=STRATA, seed=SEED)
    assert splits_of(back) == splits_of(first) and not back["new"].any()


def test_strata_change_does_not_move_old_films():
    films = make_films({(1994, "13+"): 12, (2003, "15+"): 12})
    first = assign_splits(films, None, strata=STRATA, seed=SEED)
    registry = merge_registry(None, first)
    new_strata = ("decade", "age_suitability", "primary_genre")
    out = assign_splits(films, registry, strata=new_strata, seed=SEED)
    assert splits_of(out) == splits_of(first) and not out["new"].any()
    assert all(s.count("|") == 2 and "primary_genre=" in s for s in out["stratum"].to_list())
    # new films under the new strata fill open slots of the new strata only
    more = make_films({(1994, "13+"): 6}, start=900)
    out2 = assign_splits(pl.concat([films, more]), merge_registry(registry, out), strata=new_strata, seed=SEED)
    assert all(splits_of(out2)[i] == s for i, s in splits_of(first).items())
    summary = {r["stratum"]: r for r in split_summary(out2).to_dicts()}
    for r in out2.filter(pl.col("new") & (pl.col("split") == "public")).to_dicts():
        s = summary[r["stratum"]]
        assert s["public"] <= max(s["target"], 1)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.dictionaries(st.sampled_from(AGES), st.integers(min_value=1, max_value=30), min_size=1, max_size=5),
    st.dictionaries(st.sampled_from(AGES), st.integers(min_value=0, max_value=30), max_size=5),
    st.integers(min_value=0, max_value=10),
)
def test_frozen_property(initial, additions, n_remove):
    old = make_films({(1994, a): n for a, n in initial.items()})
    first = assign_splits(old, None, strata=STRATA, seed=SEED)
    registry = merge_registry(None, first)
    added = make_films({(1994, a): n for a, n in additions.items() if n}, start=10_000)
    removed = set(old["imdb_id"].to_list()[::3][:n_remove])
    current = pl.concat([old.filter(~pl.col("imdb_id").is_in(list(removed))), added])
    out = assign_splits(current, registry, strata=STRATA, seed=SEED)
    before = splits_of(first)
    for r in out.to_dicts():
        if r["imdb_id"] in before:
            assert r["split"] == before[r["imdb_id"]] and not r["new"]
        else:
            assert r["new"]
    for stratum, grp in out.group_by("stratum"):
        n = grp.height
        old_public = grp.filter(~pl.col("new") & (pl.col("split") == "public")).height
        new_n = grp.filter(pl.col("new")).height
        new_public = grp.filter(pl.col("new") & (pl.col("split") == "public")).height
        assert new_public == min(new_n, max(0, public_count(n, 0.2) - old_public))


# ---------------------------------------------------------------- errors


def test_bad_inputs_carry_reason_codes():
    films = make_films({(1994, "13+"): 3})
    with pytest.raises(SplitError) as e:
        assign_splits(pl.concat([films, films.head(1)]), None, strata=STRATA, seed=SEED)
    assert e.value.reason == "split_duplicate_imdb_id"
    with pytest.raises(SplitError) as e:
        assign_splits(films, None, strata=STRATA, share=1.5, seed=SEED)
    assert e.value.reason == "public_bad_share"
    bad = pl.DataFrame({"imdb_id": ["tt0000000"], "split": ["test"], "stratum": ["x"], "assigned_seed": [1]})
    with pytest.raises(SplitError) as e:
        assign_splits(films, bad, strata=STRATA, seed=SEED)
    assert e.value.reason == "split_registry_bad_value"
    with pytest.raises(SplitError):
        assign_splits(pa.table({"id": [1]}), None, strata=STRATA, seed=SEED)
