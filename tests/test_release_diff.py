"""Release diff and Croissant change kind (warehouse.diff, SPEC C)."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from warehouse.diff import change_kind_from_tables, diff_releases, render_diff_text

SCHEMAS = {
    "films": pa.schema([("id", pa.int64()), ("imdb_id", pa.string()), ("title", pa.string()), ("year", pa.int32()),
                        ("runtime_min", pa.int32()), ("imdb_rating", pa.float64()), ("age_suitability", pa.string()),
                        ("kim_url", pa.string()), ("csm_url", pa.string())]),
    "ratings": pa.schema([("imdb_id", pa.string()), ("country", pa.string()), ("label", pa.string()),
                          ("minimum_age", pa.int32()), ("ordinal", pa.int32()), ("raw", pa.string()),
                          ("rule", pa.string())]),
    "tracks": pa.schema([("track_id", pa.string()), ("imdb_id", pa.string()), ("language", pa.string()),
                         ("provider", pa.string()), ("file_id", pa.string()), ("raw_sha256", pa.string()),
                         ("download_count", pa.int64()), ("encoding", pa.string()), ("decoder", pa.string()),
                         ("status", pa.string()), ("n_entries", pa.int32()), ("n_repairs", pa.int32()),
                         ("first_start_ms", pa.int64()), ("last_end_ms", pa.int64()), ("n_tokens", pa.int64())]),
    "entries": pa.schema([("track_id", pa.string()), ("imdb_id", pa.string()), ("language", pa.string()),
                          ("index", pa.int64()), ("timeframe", pa.string()), ("start_ms", pa.int64()),
                          ("end_ms", pa.int64()), ("content", pa.string())]),
    "language_safety": pa.schema([("imdb_id", pa.string()), ("category", pa.string()),
                                  ("occurrence_count", pa.int32()), ("evidence_line_count", pa.int32()),
                                  ("evidence_indices", pa.string())]),
    "funnel": pa.schema([("gate_no", pa.int32()), ("gate", pa.string()), ("kept", pa.int64()),
                         ("dropped", pa.int64()), ("reasons", pa.string())]),
}
LANGS = ("ar", "en")
COUNTRIES = ("Australia", "Brazil")


def _film(n: int) -> dict[str, list[dict]]:
    imdb = f"tt{n:07d}"
    films = [{"id": n, "imdb_id": imdb, "title": f"Film {n}", "year": 1990 + n, "runtime_min": 90 + n,
              "imdb_rating": 7.0 + n / 10, "age_suitability": "13+", "kim_url": f"https://kim/{n}",
              "csm_url": f"https://csm/{n}"}]
    tracks, entries = [], []
    for lang in LANGS:
        tid = hashlib.sha256(f"{imdb}{lang}".encode()).hexdigest()[:16]
        tracks.append({"track_id": tid, "imdb_id": imdb, "language": lang, "provider": "opensubtitles",
                       "file_id": f"{n}{lang}", "raw_sha256": "r" + tid, "download_count": 100 + n,
                       "encoding": "utf-8", "decoder": "utf-8", "status": "ok", "n_entries": 3, "n_repairs": 0,
                       "first_start_ms": 1000, "last_end_ms": 9000, "n_tokens": 12})
        for i in range(1, 4):
            entries.append({"track_id": tid, "imdb_id": imdb, "language": lang, "index": i,
                            "timeframe": f"00:00:0{i},000 --> 00:00:0{i},900", "start_ms": i * 1000,
                            "end_ms": i * 1000 + 900, "content": f"{lang} line {i} of {imdb}"})
    ratings = [{"imdb_id": imdb, "country": c, "label": "PG", "minimum_age": 0, "ordinal": 1,
                "raw": f"{c}:PG", "rule": "canonical"} for c in COUNTRIES]
    safety = [{"imdb_id": imdb, "category": "mildObscenity", "occurrence_count": 2, "evidence_line_count": 2,
               "evidence_indices": "[1, 2]"}]
    return {"films": films, "tracks": tracks, "entries": entries, "ratings": ratings, "language_safety": safety}


def make_data(ns=(1, 2, 3)) -> dict[str, list[dict]]:
    data: dict[str, list[dict]] = {name: [] for name in SCHEMAS}
    for n in ns:
        for name, rows in _film(n).items():
            data[name].extend(rows)
    data["funnel"] = [{"gate_no": 1, "gate": "inventory", "kept": len(ns), "dropped": 0, "reasons": "{}"}]
    return data


def to_tables(data: dict[str, list[dict]]) -> dict[str, pa.Table]:
    out = {}
    for name, rows in data.items():
        schema = SCHEMAS.get(name)
        if schema is not None and rows and set(rows[0]) != set(schema.names):  # schema change under test
            schema = None
        out[name] = pa.Table.from_pylist(rows, schema=schema)
    return out


def write_release(root: Path, version: str, data: dict[str, list[dict]], compression: str = "zstd") -> Path:
    d = root / version
    d.mkdir(parents=True)
    files = {}
    for name, table in to_tables(data).items():
        p = d / f"{name}.parquet"
        pq.write_table(table, p, compression=compression)
        files[p.name] = {"rows": table.num_rows, "sha256": hashlib.sha256(p.read_bytes()).hexdigest(),
                         "size": p.stat().st_size}
    (d / "films.jsonl").write_text("")
    files["films.jsonl"] = {"rows": len(data["films"]), "sha256": "x", "size": 0}
    (d / "manifest.json").write_text(json.dumps({"name": "cinesub", "version": version, "files": files}))
    return d


@pytest.fixture()
def old(tmp_path) -> Path:
    return write_release(tmp_path, "1.0.0", make_data())


def _diff(tmp_path, old_dir: Path, data, version="1.1.0"):
    new_dir = write_release(tmp_path, version, data)
    d = diff_releases(old_dir, new_dir)
    json.dumps(d)  # JSON-serialisable
    assert change_kind_from_tables(old_dir, to_tables(data)) == d["change_kind"]
    return d


# ---------------------------------------------------------------- patch


def test_identical_data_is_patch(tmp_path, old):
    d = _diff(tmp_path, old, make_data())
    assert (d["old"], d["new"], d["change_kind"]) == ("1.0.0", "1.1.0", "patch")
    assert d["films"]["added"] == d["films"]["removed"] == d["films"]["changed"] == []
    assert d["tracks"]["added"] == d["tracks"]["removed"] == d["tracks"]["changed"] == []
    assert (d["entries"]["added"], d["entries"]["removed"], d["entries"]["changed"]) == (0, 0, 0)
    assert d["tables"]["entries"] == {"old": 18, "new": 18, "same_bytes": True}
    assert set(d["tables"]) == {"films", "tracks", "entries", "ratings", "language_safety", "funnel"}


def test_repackaged_and_reordered_is_patch(tmp_path, old):
    data = make_data()
    for rows in data.values():
        rows.reverse()
    new_dir = write_release(tmp_path, "1.0.1", data, compression="snappy")
    d = diff_releases(old, new_dir)
    assert d["change_kind"] == "patch"
    assert d["tables"]["films"]["same_bytes"] is False
    # bookkeeping tables alone do not make a data change
    data["funnel"][0]["kept"] = 99
    assert change_kind_from_tables(old, to_tables(data)) == "patch"


# ---------------------------------------------------------------- minor


def test_film_added_is_minor(tmp_path, old):
    d = _diff(tmp_path, old, make_data((1, 2, 3, 4)))
    assert d["change_kind"] == "minor"
    assert d["films"]["added"] == ["tt0000004"] and d["films"]["removed"] == []
    assert d["tracks"]["added"] == [{"imdb_id": "tt0000004", "language": "ar"},
                                    {"imdb_id": "tt0000004", "language": "en"}]
    assert d["entries"]["added"] == 6 and d["entries"]["removed"] == 0
    assert d["entries"]["tracks"] == [
        {"imdb_id": "tt0000004", "language": lang, "added": 3, "removed": 0, "changed": 0} for lang in LANGS]
    # the new film's ratings are rows added, not a change to a kept film
    assert d["ratings"]["rows_added"] == 2 and d["ratings"]["films"] == []
    assert d["tables"]["films"] == {"old": 3, "new": 4, "same_bytes": False}


def test_column_added_and_safety_category_added_are_minor(tmp_path, old):
    data = make_data()
    for f in data["films"]:
        f["split"] = "public"
    data["language_safety"].append({"imdb_id": "tt0000002", "category": "strongProfanity", "occurrence_count": 1,
                                    "evidence_line_count": 1, "evidence_indices": "[3]"})
    d = _diff(tmp_path, old, data)
    assert d["change_kind"] == "minor"
    assert d["films"]["columns_added"] == ["split"] and d["films"]["changed"] == []
    assert d["language_safety"]["films"] == [
        {"imdb_id": "tt0000002", "added": ["strongProfanity"], "removed": [], "changed": []}]


# ---------------------------------------------------------------- major


def test_film_removed_is_major(tmp_path, old):
    d = _diff(tmp_path, old, make_data((1, 3)))
    assert d["change_kind"] == "major"
    assert d["films"]["removed"] == ["tt0000002"] and d["films"]["added"] == []
    assert [t["language"] for t in d["tracks"]["removed"]] == ["ar", "en"]
    assert d["entries"]["removed"] == 6 and d["entries"]["added"] == 0
    assert d["ratings"]["rows_removed"] == 2 and d["ratings"]["films"] == []
    assert d["tables"]["ratings"]["old"] == 6 and d["tables"]["ratings"]["new"] == 4


def test_entry_content_changed_is_major(tmp_path, old):
    data = make_data()
    e = next(r for r in data["entries"] if r["imdb_id"] == "tt0000002" and r["language"] == "en" and r["index"] == 2)
    e["content"] = "[redacted]"
    d = _diff(tmp_path, old, data)
    assert d["change_kind"] == "major"
    assert d["entries"]["tracks"] == [
        {"imdb_id": "tt0000002", "language": "en", "added": 0, "removed": 0, "changed": 1}]
    assert d["films"]["changed"] == [] and d["tracks"]["changed"] == []


def test_entries_added_removed_changed_within_a_track(tmp_path, old):
    data = make_data()
    ar1 = [r for r in data["entries"] if r["imdb_id"] == "tt0000001" and r["language"] == "ar"]
    ar1[0]["timeframe"] = "00:00:01,100 --> 00:00:01,900"  # changed
    data["entries"].remove(ar1[2])  # removed
    extra = copy.deepcopy(ar1[1])
    extra.update(index=7, content="new line")
    data["entries"].append(extra)  # added
    data["entries"].append({**copy.deepcopy(extra), "index": 8})  # added
    for t in data["tracks"]:
        if t["imdb_id"] == "tt0000001" and t["language"] == "ar":
            t["n_entries"] = 4
    d = _diff(tmp_path, old, data)
    assert d["change_kind"] == "major"
    assert d["entries"]["tracks"] == [
        {"imdb_id": "tt0000001", "language": "ar", "added": 2, "removed": 1, "changed": 1}]
    assert (d["entries"]["added"], d["entries"]["removed"], d["entries"]["changed"]) == (2, 1, 1)
    assert d["tracks"]["changed"] == [{"imdb_id": "tt0000001", "language": "ar", "columns": ["n_entries"]}]


def test_film_and_track_columns_changed(tmp_path, old):
    data = make_data()
    data["films"][0]["title"] = "Film One (restored)"
    data["films"][0]["imdb_rating"] = 9.9
    tr = next(t for t in data["tracks"] if t["imdb_id"] == "tt0000003" and t["language"] == "en")
    tid = tr["track_id"]
    tr.update(track_id="replacement", raw_sha256="other")
    for e in data["entries"]:
        if e["track_id"] == tid:
            e["track_id"] = "replacement"  # same content under a new track: entries unchanged
    d = _diff(tmp_path, old, data)
    assert d["change_kind"] == "major"
    assert d["films"]["changed"] == [{"imdb_id": "tt0000001", "columns": ["imdb_rating", "title"]}]
    assert d["tracks"]["changed"] == [{"imdb_id": "tt0000003", "language": "en",
                                       "columns": ["raw_sha256", "track_id"]}]
    assert d["entries"]["tracks"] == []


def test_ratings_changed_per_film(tmp_path, old):
    data = make_data()
    r = next(r for r in data["ratings"] if r["imdb_id"] == "tt0000003" and r["country"] == "Brazil")
    r.update(label="14", minimum_age=14, ordinal=4)
    d = _diff(tmp_path, old, data)
    assert d["change_kind"] == "major"
    assert d["ratings"]["films"] == [{"imdb_id": "tt0000003", "added": [], "removed": [], "changed": ["Brazil"]}]
    assert d["ratings"]["rows_changed"] == 1


def test_id_renumbering_is_major_but_not_a_column_change(tmp_path, old):
    data = make_data()
    for f in data["films"]:
        f["id"] += 10
    d = _diff(tmp_path, old, data)
    assert d["change_kind"] == "major"
    assert d["films"]["changed"] == [] and d["films"]["id_changed"] == ["tt0000001", "tt0000002", "tt0000003"]


def test_old_release_missing_a_data_table_is_major(tmp_path):
    data = make_data()
    old_dir = write_release(tmp_path, "1.0.0", {k: v for k, v in data.items() if k != "language_safety"})
    d = _diff(tmp_path, old_dir, data)
    assert d["change_kind"] == "major"
    assert d["tables"]["language_safety"] == {"old": None, "new": 3, "same_bytes": None}
    assert d["language_safety"]["rows_added"] == 3


# ---------------------------------------------------------------- output


def test_deterministic_and_rendered(tmp_path, old):
    data = make_data((1, 2, 4))
    data["films"][0]["title"] = "Changed"
    new_dir = write_release(tmp_path, "2.0.0", data)
    a = json.dumps(diff_releases(old, new_dir), sort_keys=True)
    b = json.dumps(diff_releases(old, new_dir), sort_keys=True)
    assert a == b
    text = render_diff_text(json.loads(a))
    assert text.splitlines()[0] == "release 1.0.0 → 2.0.0: major"
    assert "films   +1 -1 ~1" in text and "tt0000001 (title)" in text
    assert "entries +6 -6 ~0 in 4 track(s)" in text
    assert any(line.split()[:4] == ["films", "3", "→", "3"] for line in text.splitlines())


def test_missing_directory_raises(tmp_path, old):
    with pytest.raises(FileNotFoundError):
        diff_releases(old, tmp_path / "nope")


def test_the_version_rule_compares_entries_only_when_the_rest_is_not_major(tmp_path, old, monkeypatch):
    """change_kind_from_tables (the release's version rule) skips the entries — the one table as
    large as the corpus — when the other tables already make the change major, and compares them
    when they could still raise the kind (an entry changed in place, a film added)."""
    import warehouse.diff as diff_mod

    calls = []
    real = diff_mod._entries_diff
    monkeypatch.setattr(diff_mod, "_entries_diff", lambda con: calls.append(1) or real(con))
    assert change_kind_from_tables(old, to_tables(make_data((1, 3)))) == "major"  # a film removed
    assert calls == []
    changed = make_data()
    changed["entries"][0]["content"] = "changed in place"
    assert change_kind_from_tables(old, to_tables(changed)) == "major"
    assert calls == [1]
    assert change_kind_from_tables(old, to_tables(make_data((1, 2, 3, 4)))) == "minor"
    assert calls == [1, 1]
